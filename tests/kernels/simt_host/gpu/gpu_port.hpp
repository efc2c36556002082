// A host stand-in for kernels/gpu/gpu_port.hpp, so that the portable device code of
// kernels/gpu/ballot_select.cuh runs on the CPU (test_ballot_select_host.cpp): one std::thread per
// GPU thread of one CTA. __syncthreads is a std::barrier of the CTA; IXO_BALLOT is a round on the
// warp's barrier (every lane posts its predicate, waits, reads all, waits), so it requires what
// __ballot_sync(0xffffffff, ...) requires on the device: every lane of the warp takes part, in
// the same order. Only the target of this folder puts it ahead of kernels/ on the include path.
#pragma once
#include <barrier>
#include <cstdint>
#include <memory>
#include <vector>

#ifndef IXO_WARP_SIZE
#define IXO_WARP_SIZE 32
#endif
#define __device__
#define __forceinline__ inline

namespace ixo::simt_host {
struct ThreadIndex {
  unsigned x = 0;
};
struct Cta {
  explicit Cta(int threads) : all(threads) {
    for (int w = 0; w < threads / IXO_WARP_SIZE; ++w) {
      warps.push_back(std::make_unique<std::barrier<>>(IXO_WARP_SIZE));
      votes.emplace_back(IXO_WARP_SIZE, 0);
    }
  }
  std::barrier<> all;
  std::vector<std::unique_ptr<std::barrier<>>> warps;
  std::vector<std::vector<unsigned char>> votes;
};
inline Cta* current_cta = nullptr;  // the CTA being run (one at a time)
inline unsigned long long ballot(bool pred, unsigned tid) {
  const unsigned w = tid / IXO_WARP_SIZE, lane = tid % IXO_WARP_SIZE;
  current_cta->votes[w][lane] = pred ? 1 : 0;
  current_cta->warps[w]->arrive_and_wait();
  unsigned long long bits = 0;
  for (unsigned l = 0; l < IXO_WARP_SIZE; ++l) bits |= static_cast<unsigned long long>(current_cta->votes[w][l]) << l;
  current_cta->warps[w]->arrive_and_wait();
  return bits;
}
}  // namespace ixo::simt_host

inline thread_local ixo::simt_host::ThreadIndex threadIdx;
inline void __syncthreads() { ixo::simt_host::current_cta->all.arrive_and_wait(); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
#define IXO_BALLOT(pred) ::ixo::simt_host::ballot((pred), threadIdx.x)
