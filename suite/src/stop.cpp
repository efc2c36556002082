#include "ixo/stop.hpp"

#include <chrono>

#include "backend.hpp"

namespace ixo::stop {

namespace {

using Clock = std::chrono::steady_clock;

struct State {
  bool active = false;
  Clock::time_point start, deadline = Clock::time_point::max();
  std::function<bool()> poll;
  bool interrupted = false, out_of_time = false;
};
thread_local State state;

}  // namespace

struct StopScope::Saved {
  State outer;
};

StopScope::StopScope(double seconds, std::function<bool()> poll) : saved_(new Saved{state}) {
  state = State{};
  state.active = true;
  state.start = Clock::now();
  if (seconds < 1e9)
    state.deadline = state.start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  state.poll = std::move(poll);
  interrupt_flag().store(false);
}

StopScope::~StopScope() {
  state = saved_->outer;
  delete saved_;
}

bool stopping() {
  if (!state.active) return interrupt_flag().load();
  if (state.interrupted || state.out_of_time) return true;
  if (interrupt_flag().load() || (state.poll && state.poll()))
    state.interrupted = true;
  else if (Clock::now() >= state.deadline)
    state.out_of_time = true;
  return state.interrupted || state.out_of_time;
}

bool interrupted() { return state.interrupted; }
bool out_of_time() { return state.out_of_time; }
void interrupt() { state.interrupted = true; }
double elapsed_seconds() {
  return state.active ? std::chrono::duration<double>(Clock::now() - state.start).count() : 0.0;
}

}  // namespace ixo::stop
