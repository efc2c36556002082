// Top-k of few ids over a short row by warp votes (knob IXO_TOPK_BALLOT: the native top-k of
// topk_kernel.cuh and the CP candidates of cp_kernels.cuh), portable (CUDA and HIP): the selection
// of the radix path (radix_select.cuh) with four barriers instead of ~30, and no histogram atomics
// or block scans. For kept <= kBallotMaxKept ids among n <= NT * M keys
// (M keys a thread, in registers; warp w holds ids [w W M, (w + 1) W M), lane-interleaved):
//   1. each warp finds its own kept-th largest key by a bitwise search (one vote a key a bit; with
//      LaneMax, of its lanes' largest keys); the largest of these is a lower bound of the row's
//      kept-th largest key (a warp alone holds kept keys at or above its own);
//   2. the keys at or above that bound (at most NW * kept, plus keys tied with it) are gathered in id
//      order into shared memory; more than 2 NT of them (a wide tie) and the call returns false:
//      the caller then runs the radix select;
//   3. a gathered key is selected when fewer than kept gathered keys rank above it (score key
//      larger, or equal and earlier in id order: ties go to the lowest ids, as radix_compact's);
//   4. the selected ones are emitted in id order: emit(pos, id), pos = selected ones before it.
#pragma once
#include <cstdint>
#include <type_traits>

#include "gpu/gpu_port.hpp"

// Knob (default 2 since session 26): the native top-k's rows (topk_kernel.cuh) and the CP shard
// candidates (cp_kernels.cuh) that select <= 64 of <= IXO_TOPK_BALLOT_MAX_KEYS keys take ballot_topk
// instead of the radix select (same ids); 1: each warp's bound from all its keys, 2: from its lanes'
// largest keys where kept <= the warp size; 0: the radix select everywhere. The vote path is its own
// kernel instantiation (with_vote_instantiation below), launched only when every row fits.
// Measured on an H100 (docs/performance.md "Session 25", "Session 26"): `=2` up to 4096 keys took the
// top-k alone 10.0 -> 8.0 us at 1024 keys but not the step (level), and the latency suite's 32K rows
// (212-297 keys) got slower (up to +2.5 us); limited to 128 keys it is -3.9 % (geomean of the latency
// suite's 96 steps; 4K / 8K contexts -0.3..-2.1 us a step) and level on the throughput steps.
#ifndef IXO_TOPK_BALLOT
#define IXO_TOPK_BALLOT 2
#endif
// The vote path only for rows of at most this many keys (session 26; at most kBallotMaxPerThread a thread).
#ifndef IXO_TOPK_BALLOT_MAX_KEYS
#define IXO_TOPK_BALLOT_MAX_KEYS 128
#endif

namespace ixo::gpu::detail {

constexpr int kBallotMaxKept = 64;       // ids a row selects, at most
constexpr int kBallotMaxPerThread = 16;  // keys a thread holds, at most: n <= NT * 16

// Whether a row of n keys that keeps `kept` ids lies within the vote selection's limits (nt threads).
__host__ __device__ constexpr bool ballot_topk_fits(std::int64_t n, std::int64_t kept, int nt) {
  return kept <= kBallotMaxKept && n <= static_cast<std::int64_t>(nt) * kBallotMaxPerThread &&
         n <= IXO_TOPK_BALLOT_MAX_KEYS;
}

// The launchers' and the sims' choice of a kernel's instantiation: f(std::true_type{}) (the vote
// instantiation) when the knob is on and every row of the launch fits (rows_fit), else
// f(std::false_type{}) (the radix-only one; session 25 measured the radix path slower when compiled
// into one kernel with the vote path). With the knob off the vote branch is never instantiated: a
// named kernel template nvcc does not define draws its warning #20280.
template <class F>
void with_vote_instantiation(bool rows_fit, F&& f) {
  if constexpr (IXO_TOPK_BALLOT != 0) {
    if (rows_fit) {
      f(std::true_type{});
      return;
    }
  }
  f(std::false_type{});
}

template <int NT>
struct BallotShared {
  static constexpr int kWarps = NT / IXO_WARP_SIZE, kCap = 2 * NT;
  std::uint32_t warp_bound[kWarps];
  std::uint32_t warp_count[2 * kWarps];
  alignas(16) std::uint32_t key[kCap];  // the gathered keys and their ids, in id order (16-byte loads)
  std::int32_t id[kCap];
};

// A warp's vote: one bit a lane (32-bit words on CUDA keep 16 votes in 16 registers, not 32).
using VoteBits = std::conditional_t<IXO_WARP_SIZE == 32, std::uint32_t, std::uint64_t>;
__device__ __forceinline__ VoteBits vote(bool pred) { return static_cast<VoteBits>(IXO_BALLOT(pred)); }

// Lanes below this one (the bits of a vote to count before it).
__device__ __forceinline__ VoteBits lanes_below() {
  const unsigned lane = threadIdx.x % IXO_WARP_SIZE;
  return static_cast<VoteBits>(lane == 0 ? 0ull : (~0ull >> (64u - lane)));
}

// Rank of gathered entry e (key ke) among the L gathered ones: entries with a larger key, plus
// equal ones earlier in id order (later with ties_high: the tie_rule_reversed mutant). Branch-free,
// four keys a 16-byte shared load: the loop is the thread's whole step 3 (session 25: the first
// version, a short-circuit test a key, took 3.9 us at L ~ 50 on the H100, a dependent load and two
// branches a key).
__device__ __forceinline__ std::uint32_t gathered_rank(const std::uint32_t* key, int L, int e, std::uint32_t ke,
                                                       bool ties_high) {
  // Equal keys count when their index lies in [lo, hi): before e, or after it with ties_high.
  const unsigned lo = ties_high ? static_cast<unsigned>(e + 1) : 0u;
  const unsigned width = ties_high ? static_cast<unsigned>(L - e - 1) : static_cast<unsigned>(e);
  const uint4* k4 = reinterpret_cast<const uint4*>(key);
  std::uint32_t r = 0;
  auto term = [&](std::uint32_t ko, int o) -> std::uint32_t {
    const bool in_range = o < L, tie_counts = static_cast<unsigned>(o) - lo < width;
    return static_cast<std::uint32_t>(in_range & ((ko > ke) | ((ko == ke) & tie_counts)));
  };
#pragma unroll 2
  for (int q = 0; q < (L + 3) / 4; ++q) {
    const uint4 v = k4[q];
    const int o = 4 * q;
    r += term(v.x, o) + term(v.y, o + 1) + term(v.z, o + 2) + term(v.w, o + 3);
  }
  return r;
}

// Warp w's share of per-warp counts: the sum of the counts of the warps before it, and of all.
struct WarpPrefix {
  int before, total;
};
__device__ __forceinline__ WarpPrefix warp_prefix(const std::uint32_t* counts, int nw, int w) {
  WarpPrefix r{0, 0};
  for (int x = 0; x < nw; ++x) {
    const int y = static_cast<int>(counts[x]);
    r.before += x < w ? y : 0;
    r.total += y;
  }
  return r;
}

// The kept-th largest of the warp's keys (M a lane), or 0 when fewer than kept are >= 1: one probe a
// bit from the top, a vote a key a probe. Warp-uniform.
template <int M>
__device__ __forceinline__ std::uint32_t warp_kth_largest(const std::uint32_t (&k)[M], int kept) {
  std::uint32_t bound = 0;
  for (int b = 31; b >= 0; --b) {
    const std::uint32_t c = bound | (1u << b);
    int at_or_above = 0;
#pragma unroll
    for (int i = 0; i < M; ++i) at_or_above += __popcll(vote(k[i] >= c));
    if (at_or_above >= kept) bound = c;
  }
  return bound;
}

// LaneMax (IXO_TOPK_BALLOT=2): for kept <= the warp size and M > 1, step 1 searches the lanes'
// largest keys instead (one vote a probe, not M): kept lanes hold a key at or above their kept-th
// largest maximum, so it is a lower bound too, only a looser one (more keys gathered).
template <int NT, int M, bool LaneMax, class Key, class Emit>
__device__ __forceinline__ bool ballot_topk(std::int64_t n, Key key, int kept, bool ties_high, BallotShared<NT>& sh,
                                            Emit emit) {
  constexpr int W = IXO_WARP_SIZE, NW = NT / W, kCap = BallotShared<NT>::kCap;
  static_assert(NT % W == 0 && M >= 1 && M <= kBallotMaxPerThread, "ballot_topk shape");
  const int tid = threadIdx.x, lane = tid % W, w = tid / W;
  const std::int64_t base = static_cast<std::int64_t>(w) * W * M + lane;
  auto id_of = [&](int i) { return base + static_cast<std::int64_t>(i) * W; };  // key i of this lane
  std::uint32_t k[M];
  int held = 0;
  // Every load unconditional (a lane past the row reads key n - 1 and drops it), so the M loads
  // issue back to back instead of one branch and one round trip at a time. Whether key i exists
  // is recomputed where needed (an array of M flags would not fit the predicate registers).
  auto present = [&](int i) { return id_of(i) < n; };
#pragma unroll
  for (int i = 0; i < M; ++i) k[i] = key(present(i) ? id_of(i) : n - 1);
#pragma unroll
  for (int i = 0; i < M; ++i) {
    k[i] = present(i) ? k[i] : 0u;
    held += __popcll(vote(present(i)));
  }
  // 1. This warp's kept-th largest key (0 when it holds no more than kept keys: all are candidates).
  //    Absent keys are 0 and every probe c >= 1, so they never count.
  std::uint32_t bound = 0;
  if (held > kept) {
    if (LaneMax && M > 1 && kept <= W) {  // warp-uniform
      std::uint32_t top[1] = {k[0]};
#pragma unroll
      for (int i = 1; i < M; ++i) top[0] = k[i] > top[0] ? k[i] : top[0];
      bound = warp_kth_largest<1>(top, kept);
    } else {
      bound = warp_kth_largest<M>(k, kept);
    }
  }
  if (lane == 0) sh.warp_bound[w] = bound;
  __syncthreads();
  for (int x = 0; x < NW; ++x) bound = sh.warp_bound[x] > bound ? sh.warp_bound[x] : bound;
  // 2. Gather the keys at or above the bound, in id order.
  VoteBits votes[M];
  int mine = 0;
#pragma unroll
  for (int i = 0; i < M; ++i) {
    votes[i] = vote(present(i) && k[i] >= bound);
    mine += __popcll(votes[i]);
  }
  if (lane == 0) sh.warp_count[w] = static_cast<std::uint32_t>(mine);
  __syncthreads();
  const WarpPrefix gathered = warp_prefix(sh.warp_count, NW, w);
  const int L = gathered.total;
  int at = gathered.before;
  if (L > kCap) return false;  // block-uniform: a wide tie at the bound
  const VoteBits below = lanes_below();
#pragma unroll
  for (int i = 0; i < M; ++i) {
    if ((votes[i] >> lane) & 1ull) {
      const int pos = at + __popcll(votes[i] & below);
      sh.key[pos] = k[i];
      sh.id[pos] = static_cast<std::int32_t>(id_of(i));
    }
    at += __popcll(votes[i]);
  }
  __syncthreads();
  // 3. Thread t ranks gathered entries t and t + NT.
  const int e0 = tid, e1 = tid + NT;
  const bool sel0 = e0 < L && gathered_rank(sh.key, L, e0, sh.key[e0], ties_high) < static_cast<std::uint32_t>(kept);
  const bool sel1 = e1 < L && gathered_rank(sh.key, L, e1, sh.key[e1], ties_high) < static_cast<std::uint32_t>(kept);
  // 4. Emit in id order.
  const VoteBits v0 = vote(sel0), v1 = vote(sel1);
  if (lane == 0) {
    sh.warp_count[w] = static_cast<std::uint32_t>(__popcll(v0));
    sh.warp_count[NW + w] = static_cast<std::uint32_t>(__popcll(v1));
  }
  __syncthreads();
  const WarpPrefix s0 = warp_prefix(sh.warp_count, NW, w), s1 = warp_prefix(sh.warp_count + NW, NW, w);
  const int p0 = s0.before, p1 = s0.total + s1.before;  // slot 1's entries follow all of slot 0's
  if (sel0) emit(static_cast<std::uint32_t>(p0 + __popcll(v0 & below)), static_cast<std::int64_t>(sh.id[e0]));
  if (sel1) emit(static_cast<std::uint32_t>(p1 + __popcll(v1 & below)), static_cast<std::int64_t>(sh.id[e1]));
  return true;
}

// ballot_topk with M = the keys a thread holds for n (1, 2, 4, 8 or 16).
template <int NT, bool LaneMax, class Key, class Emit>
__device__ bool ballot_topk_any(std::int64_t n, Key key, int kept, bool ties_high, BallotShared<NT>& sh, Emit emit) {
  const std::int64_t m = (n + NT - 1) / NT;
  if (m <= 1) return ballot_topk<NT, 1, LaneMax>(n, key, kept, ties_high, sh, emit);
  if (m <= 2) return ballot_topk<NT, 2, LaneMax>(n, key, kept, ties_high, sh, emit);
  if (m <= 4) return ballot_topk<NT, 4, LaneMax>(n, key, kept, ties_high, sh, emit);
  if (m <= 8) return ballot_topk<NT, 8, LaneMax>(n, key, kept, ties_high, sh, emit);
  return ballot_topk<NT, 16, LaneMax>(n, key, kept, ties_high, sh, emit);
}

// The callers' entry (topk_kernel.cuh, cp_kernels.cuh): false without the knob, for a row outside
// the vote selection's limits, or on a wide tie (the caller then runs the radix select).
// Block-uniform.
template <int NT, class Key, class Emit>
__device__ __forceinline__ bool try_ballot_topk(std::int64_t n, Key key, int kept, bool ties_high, Emit emit) {
#if IXO_TOPK_BALLOT
  if (!ballot_topk_fits(n, kept, NT)) return false;
  __shared__ BallotShared<NT> sh;
  return ballot_topk_any<NT, IXO_TOPK_BALLOT == 2>(n, key, kept, ties_high, sh, emit);
#else
  (void)n, (void)key, (void)kept, (void)ties_high, (void)emit;
  return false;
#endif
}

}  // namespace ixo::gpu::detail
