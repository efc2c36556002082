// The host stand-in for kernels/gpu/gpu_port.hpp (which includes it instead of a GPU runtime when
// IXO_SIM_HOST is defined), so that the portable device code (the top-k kernel of
// kernels/gpu/topk_kernel.cuh with its radix and vote selections, the scalar score kernel: the HIP
// build's path) runs on the CPU. Define IXO_SIM_HOST only for the translation units that include
// device code: this header defines __device__, __shared__, __syncthreads, ...
//
// One CTA at a time (run_cta), its GPU threads as fibers (ucontext) on the calling
// thread, scheduled round-robin: a fiber runs until it waits at __syncthreads or at a warp round
// (IXO_BALLOT, IXO_SHFL_UP), the scheduler releases a barrier once every thread it names waits at
// it. So the device code's barriers must be what the hardware needs: every thread of the CTA
// reaches each __syncthreads, every lane of the warp each vote or shuffle, in the same order; a
// thread that exits while others wait, or threads waiting at different barriers, is a barrier
// error (run_cta throws SimtError naming the threads) instead of the hang a GPU might give.
// __shared__ variables are function statics (one copy, shared by the CTA's threads, as on the
// device; CTAs run one after another). atomicAdd is a plain add: fibers never interleave inside
// an expression.
#pragma once
#include <ucontext.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define IXO_SIMT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define IXO_SIMT_ASAN 1
#endif
#endif
#if defined(IXO_SIMT_ASAN)
#include <sanitizer/common_interface_defs.h>
#endif

#ifndef IXO_WARP_SIZE
#define IXO_WARP_SIZE 32
#endif
#define __device__
// Kernels get internal linkage: a CUDA build links the same kernels' host launch stubs (same names)
// into the same programs; [[maybe_unused]]: a file need not run every kernel its headers define.
#define __global__ [[maybe_unused]] static
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __launch_bounds__(...)

namespace ixo::simt_host {
struct Dim3 {
  unsigned x = 0, y = 0, z = 0;
};

// A barrier misuse found by the scheduler (see the header comment).
class SimtError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// One CTA's fibers and the scheduler's state.
class Cta {
 public:
  enum class Wait { none, cta, warp, done };
  struct Thread {
    ucontext_t ctx{};
    Wait wait = Wait::none;
    Dim3 idx;
    char* stack = nullptr;
    void* fake_stack = nullptr;  // ASan's fake stack of this fiber while it is switched out
  };
  std::vector<Thread> threads;
  std::vector<std::vector<std::uint64_t>> posted;  // a value a lane, for the warp's current round
  int current = -1;                                // the running fiber (-1: the scheduler)
  ucontext_t scheduler{};
  const void* sched_stack_bottom = nullptr;  // the scheduler's stack (ASan), known once a fiber ran
  std::size_t sched_stack_size = 0;
};
inline Cta* current_cta = nullptr;  // the CTA being run (one at a time)
}  // namespace ixo::simt_host

// The running fiber's indices (set before each switch to a fiber).
inline thread_local ixo::simt_host::Dim3 threadIdx, blockIdx, blockDim, gridDim;

namespace ixo::simt_host {
namespace detail {
constexpr std::size_t kStackBytes = std::size_t{256} << 10;

// The fibers' stacks, kept between CTAs (a CTA of 256 threads: 64 MiB of address space).
inline std::vector<std::unique_ptr<char[]>>& stacks(std::size_t n) {
  static thread_local std::vector<std::unique_ptr<char[]>> s;
  while (s.size() < n) s.push_back(std::make_unique<char[]>(kStackBytes));
  return s;
}

// The first runnable fiber at or after `from`, or -1.
inline int next_runnable(const Cta& c, int from) {
  for (int t = from; t < static_cast<int>(c.threads.size()); ++t)
    if (c.threads[static_cast<std::size_t>(t)].wait == Cta::Wait::none) return t;
  return -1;
}

// Marks the running fiber waiting at `w` (done: exited) and switches straight to the next runnable
// fiber of the sweep, or back to the scheduler after the last one (one switch a thread a barrier).
inline void yield(Cta::Wait w) {
  Cta& c = *current_cta;
  Cta::Thread& t = c.threads[static_cast<std::size_t>(c.current)];
  t.wait = w;
  const int next = next_runnable(c, c.current + 1);
  ucontext_t* to = &c.scheduler;
  [[maybe_unused]] const void* to_bottom = c.sched_stack_bottom;
  [[maybe_unused]] std::size_t to_size = c.sched_stack_size;
  c.current = next;
  if (next >= 0) {
    Cta::Thread& n = c.threads[static_cast<std::size_t>(next)];
    threadIdx = n.idx;
    to = &n.ctx;
    to_bottom = n.stack;
    to_size = kStackBytes;
  }
#if defined(IXO_SIMT_ASAN)
  __sanitizer_start_switch_fiber(w == Cta::Wait::done ? nullptr : &t.fake_stack, to_bottom, to_size);
#endif
  swapcontext(&t.ctx, to);
#if defined(IXO_SIMT_ASAN)
  __sanitizer_finish_switch_fiber(t.fake_stack, nullptr, nullptr);
#endif
}

template <class Fn>
struct Entry {
  static void run() {
    [[maybe_unused]] Cta& c = *current_cta;
#if defined(IXO_SIMT_ASAN)
    // The first fiber of the first sweep is entered from the scheduler: its stack is the one returned.
    if (c.sched_stack_bottom == nullptr) {
      __sanitizer_finish_switch_fiber(nullptr, &c.sched_stack_bottom, &c.sched_stack_size);
    } else {
      __sanitizer_finish_switch_fiber(nullptr, nullptr, nullptr);
    }
#endif
    (*fn)();
    yield(Cta::Wait::done);
    std::fputs("simt_host: an exited GPU thread was resumed (scheduler bug)\n", stderr);
    std::abort();  // returning would end the process (uc_link is null)
  }
  static inline Fn* fn = nullptr;
};

inline const char* wait_name(Cta::Wait w) {
  return w == Cta::Wait::cta ? "__syncthreads" : w == Cta::Wait::warp ? "a warp round" : "exited";
}
// "threads 0-31 at a warp round, 32-255 exited": runs of threads in the same state.
inline std::string describe(const Cta& c) {
  std::string s;
  for (std::size_t i = 0; i < c.threads.size();) {
    std::size_t j = i;
    while (j + 1 < c.threads.size() && c.threads[j + 1].wait == c.threads[i].wait) ++j;
    s.append(s.empty() ? " threads " : ", ").append(std::to_string(i));
    if (j > i) s.append("-").append(std::to_string(j));
    s.append(" ").append(wait_name(c.threads[i].wait));
    i = j + 1;
  }
  return s;
}
}  // namespace detail

// Waits until every lane of the caller's warp waits here.
inline void warp_barrier() { detail::yield(Cta::Wait::warp); }

// One round of the warp: every lane posts v; read(lanes' posted values, lane) runs between the waits.
template <class Read>
auto warp_round(std::uint64_t v, Read read) {
  const unsigned w = threadIdx.x / IXO_WARP_SIZE, lane = threadIdx.x % IXO_WARP_SIZE;
  current_cta->posted[w][lane] = v;
  warp_barrier();
  const auto r = read(current_cta->posted[w], lane);
  warp_barrier();
  return r;
}
inline unsigned long long ballot(bool pred) {
  return warp_round(pred ? 1u : 0u, [](const std::vector<std::uint64_t>& p, unsigned) {
    unsigned long long bits = 0;
    for (unsigned l = 0; l < IXO_WARP_SIZE; ++l) bits |= static_cast<unsigned long long>(p[l] != 0) << l;
    return bits;
  });
}
template <class T>
T shfl_up(T v, unsigned d) {  // lane l gets lane l - d's value, its own below d (as __shfl_up_sync)
  return warp_round(static_cast<std::uint64_t>(v), [&](const std::vector<std::uint64_t>& p, unsigned lane) {
    return lane >= d ? static_cast<T>(p[lane - d]) : v;
  });
}

// Runs fn() as CTA `block` of a grid `grid`, `threads` threads (a multiple of the warp size);
// returns when all have finished. Throws SimtError on a barrier misuse.
template <class Fn>
void run_cta(int threads, Dim3 block, Dim3 grid, Fn fn) {
  if (threads <= 0 || threads % IXO_WARP_SIZE != 0)
    throw SimtError("run_cta: " + std::to_string(threads) + " threads, not a multiple of the warp size");
  Cta cta;
  cta.threads.resize(static_cast<std::size_t>(threads));
  cta.posted.assign(static_cast<std::size_t>(threads / IXO_WARP_SIZE), std::vector<std::uint64_t>(IXO_WARP_SIZE, 0));
  auto& stacks = detail::stacks(static_cast<std::size_t>(threads));
  // The fibers reach fn through a static; it points at a heap copy (GCC 13's -Wdangling-pointer
  // rejects the address of the parameter there) and is cleared on every way out of this call.
  const auto body = std::make_unique<Fn>(std::move(fn));
  struct ClearEntry {
    ~ClearEntry() { detail::Entry<Fn>::fn = nullptr; }
  } clear_entry;
  detail::Entry<Fn>::fn = body.get();
  for (int t = 0; t < threads; ++t) {
    Cta::Thread& th = cta.threads[static_cast<std::size_t>(t)];
    th.idx = {static_cast<unsigned>(t), 0, 0};
    getcontext(&th.ctx);
    th.stack = stacks[static_cast<std::size_t>(t)].get();
    th.ctx.uc_stack.ss_sp = th.stack;
    th.ctx.uc_stack.ss_size = detail::kStackBytes;
    th.ctx.uc_link = nullptr;
    makecontext(&th.ctx, &detail::Entry<Fn>::run, 0);
  }
  Cta* const outer = current_cta;
  current_cta = &cta;
  blockIdx = block;
  gridDim = grid;
  blockDim = {static_cast<unsigned>(threads), 1, 1};
  const int warps = threads / IXO_WARP_SIZE;
  for (;;) {
    // A sweep: every runnable fiber runs until it waits or exits, each switching to the next.
    const int first = detail::next_runnable(cta, 0);
    if (first >= 0) {
      Cta::Thread& th = cta.threads[static_cast<std::size_t>(first)];
      cta.current = first;
      threadIdx = th.idx;
#if defined(IXO_SIMT_ASAN)
      void* fake = nullptr;
      __sanitizer_start_switch_fiber(&fake, th.stack, detail::kStackBytes);
#endif
      swapcontext(&cta.scheduler, &th.ctx);
#if defined(IXO_SIMT_ASAN)
      __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
      cta.current = -1;
    }
    // Release what can be released: a warp whose lanes all wait at a round, or the CTA when all
    // its threads wait at __syncthreads.
    int done = 0, at_cta = 0;
    bool released = false;
    for (int w = 0; w < warps; ++w) {
      int at_warp = 0;
      for (int l = 0; l < IXO_WARP_SIZE; ++l) {
        const Cta::Wait s = cta.threads[static_cast<std::size_t>(w * IXO_WARP_SIZE + l)].wait;
        at_warp += s == Cta::Wait::warp;
        at_cta += s == Cta::Wait::cta;
        done += s == Cta::Wait::done;
      }
      if (at_warp == IXO_WARP_SIZE) {
        for (int l = 0; l < IXO_WARP_SIZE; ++l)
          cta.threads[static_cast<std::size_t>(w * IXO_WARP_SIZE + l)].wait = Cta::Wait::none;
        released = true;
      }
    }
    if (done == threads) break;
    if (at_cta == threads) {
      for (auto& th : cta.threads) th.wait = Cta::Wait::none;
      released = true;
    }
    if (!released) {
      const std::string state = detail::describe(cta);
      current_cta = outer;
      throw SimtError("barrier error in CTA (" + std::to_string(block.x) + ", " + std::to_string(block.y) +
                      "): no barrier can be released;" + state);
    }
  }
  current_cta = outer;
}
template <class Fn>
void run_cta(int threads, unsigned block, unsigned blocks, Fn fn) {  // a 1-D grid
  run_cta(threads, Dim3{block, 0, 0}, Dim3{blocks, 1, 1}, fn);
}

}  // namespace ixo::simt_host

inline void __syncthreads() { ixo::simt_host::detail::yield(ixo::simt_host::Cta::Wait::cta); }
struct alignas(16) uint4 {  // CUDA's / HIP's 16-byte vector (ballot_select.cuh's shared loads)
  unsigned int x, y, z, w;
};
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
template <class T>
inline T atomicAdd(T* a, std::type_identity_t<T> v) {  // unsigned / int
  const T old = *a;
  *a = old + v;
  return old;
}
#define IXO_BALLOT(pred) ::ixo::simt_host::ballot((pred))
#define IXO_SHFL_UP(v, d) ::ixo::simt_host::shfl_up((v), (d))
