// When a run stops early: a time budget (fuzz --seconds), Ctrl-C (interrupt_flag, set by
// ixo's SIGINT handler or, through `poll`, by the Python package) or an Interrupted kernel.
// A StopScope holds the conditions for one run; run_property and the fuzz and suite loops
// ask `stopping()` before every case, so a run returns within its budget plus one case
// (and one shrink step), and Ctrl-C stops it at once without a bogus failure.
#pragma once
#include <functional>
#include <limits>

namespace ixo::stop {

class StopScope {
 public:
  // seconds: the budget from now (infinity: none); poll: extra interrupt check (may be empty).
  explicit StopScope(double seconds = std::numeric_limits<double>::infinity(), std::function<bool()> poll = {});
  ~StopScope();
  StopScope(const StopScope&) = delete;
  StopScope& operator=(const StopScope&) = delete;

 private:
  struct Saved;
  Saved* saved_;
};

bool stopping();           // the budget ran out or an interrupt arrived (checked now)
bool interrupted();        // an interrupt arrived in this scope
bool out_of_time();        // the budget ran out in this scope
void interrupt();          // an Interrupted kernel: stop the run
double elapsed_seconds();  // since the scope began

}  // namespace ixo::stop
