// A host stand-in for kernels/gpu/gpu_port.hpp, so that portable device code (the top-k kernel of
// kernels/gpu/topk_kernel.cuh, its radix and vote selections) runs on the CPU: one std::thread per
// GPU thread of one CTA (run_cta), CTAs one after another. __shared__ variables become function
// statics (one copy, shared by the CTA's threads, as on the device); __syncthreads is a
// std::barrier of the CTA; IXO_BALLOT and IXO_SHFL_UP are a round on the warp's barrier (every lane
// posts, waits, reads, waits), so they require what the _sync intrinsics require on the device:
// every lane of the warp takes part, in the same order; atomicAdd is a std::atomic_ref add. Only
// the targets of this folder put it ahead of kernels/ on the include path
// (tests/kernels/CMakeLists.txt).
#pragma once
#include <atomic>
#include <barrier>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#ifndef IXO_WARP_SIZE
#define IXO_WARP_SIZE 32
#endif
#define __device__
#define __global__
#define __forceinline__ inline
#define __shared__ static
#define __launch_bounds__(...)

namespace ixo::simt_host {
struct Dim3 {
  unsigned x = 0, y = 0, z = 0;
};
struct Cta {
  explicit Cta(int threads) : all(threads) {
    for (int w = 0; w < threads / IXO_WARP_SIZE; ++w) {
      warps.push_back(std::make_unique<std::barrier<>>(IXO_WARP_SIZE));
      posted.emplace_back(IXO_WARP_SIZE, 0);
    }
  }
  std::barrier<> all;
  std::vector<std::unique_ptr<std::barrier<>>> warps;
  std::vector<std::vector<std::uint64_t>> posted;  // a value a lane, for the warp's current round
};
inline Cta* current_cta = nullptr;  // the CTA being run (one at a time)
}  // namespace ixo::simt_host

inline thread_local ixo::simt_host::Dim3 threadIdx, blockIdx, blockDim, gridDim;

namespace ixo::simt_host {
// One round of the warp: every lane posts v; read(lanes' posted values) runs between the waits.
template <class Read>
auto warp_round(std::uint64_t v, Read read) {
  const unsigned w = threadIdx.x / IXO_WARP_SIZE, lane = threadIdx.x % IXO_WARP_SIZE;
  current_cta->posted[w][lane] = v;
  current_cta->warps[w]->arrive_and_wait();
  const auto r = read(current_cta->posted[w], lane);
  current_cta->warps[w]->arrive_and_wait();
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

// Runs fn() as CTA `block` of `blocks`, `threads` threads; returns when all have finished.
template <class Fn>
void run_cta(int threads, unsigned block, unsigned blocks, Fn fn) {
  Cta cta(threads);
  current_cta = &cta;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      threadIdx = {static_cast<unsigned>(t), 0, 0};
      blockIdx = {block, 0, 0};
      blockDim = {static_cast<unsigned>(threads), 1, 1};
      gridDim = {blocks, 1, 1};
      fn();
    });
  for (auto& th : pool) th.join();
  current_cta = nullptr;
}
}  // namespace ixo::simt_host

inline void __syncthreads() { ixo::simt_host::current_cta->all.arrive_and_wait(); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline std::uint32_t atomicAdd(std::uint32_t* a, std::uint32_t v) {
  return std::atomic_ref<std::uint32_t>(*a).fetch_add(v);
}
#define IXO_BALLOT(pred) ::ixo::simt_host::ballot((pred))
#define IXO_SHFL_UP(v, d) ::ixo::simt_host::shfl_up((v), (d))
