// Block-wide radix selection shared by the native top-k (topk_kernel.cuh) and the CP shard
// candidates (cp_kernels.cuh), portable (CUDA and HIP): a radix select of up to 4 passes (8 bits
// a pass) finds the `need`-th largest of n 32-bit keys, then a compaction in index order emits
// the selected indices (every key above the cut, and the first `need` keys on it after `skip` of
// them) with their output positions.
#pragma once
#include <cstdint>

#include "gpu/gpu_port.hpp"
#include "indexer_common.hpp"

namespace ixo::gpu::detail {

// Block-wide exclusive prefix sum: warp shuffles, then one warp over the warp totals.
template <int NT>
__device__ __forceinline__ std::uint64_t block_exclusive_scan(std::uint64_t v, std::uint64_t* wsum) {
  constexpr int W = IXO_WARP_SIZE;
  static_assert(NT % W == 0 && NT / W <= W, "block scan shape");
  const int tid = threadIdx.x, lane = tid % W, w = tid / W;
  std::uint64_t x = v;
#pragma unroll
  for (int d = 1; d < W; d <<= 1) {
    const std::uint64_t y = IXO_SHFL_UP(x, d);
    if (lane >= d) x += y;
  }
  if (lane == W - 1) wsum[w] = x;
  __syncthreads();
  if (w == 0) {
    std::uint64_t t = lane < NT / W ? wsum[lane] : 0;
#pragma unroll
    for (int d = 1; d < W; d <<= 1) {
      const std::uint64_t y = IXO_SHFL_UP(t, d);
      if (lane >= d) t += y;
    }
    if (lane < NT / W) wsum[lane] = t;
  }
  __syncthreads();
  const std::uint64_t res = (w > 0 ? wsum[w - 1] : 0) + x - v;
  __syncthreads();
  return res;
}

// Shared memory of radix_select: two histograms (a pass counts into one while its threads clear
// the other for the next pass, so a pass needs no barrier of its own before its counting) and the
// selected bin, written by warp 0.
struct RadixSmem {
  std::uint32_t hist[2][256];
  std::uint32_t sel_digit, sel_need, sel_count;
};

// What radix_select found: the selected keys are every key u with (u & mask) > prefix and the
// `need` keys with (u & mask) == prefix that come first in index order (after `skip` of them,
// radix_compact), out of eq_total such keys. mask is 0xFFFFFFFF (prefix: the threshold key
// itself) unless a pass found that every key of its bin is selected (eq_total == need): the
// selection then stops early, since the later passes cannot change which keys are taken.
struct RadixCut {
  std::uint32_t prefix, mask, need, eq_total;
};

// A/B switches (default 1; docs/experiments/topk-radix-ab.sh builds each at 0): IXO_TOPK_EARLY_EXIT 0
// always runs the four passes; IXO_TOPK_AGGREGATE 0 counts with one shared atomic a key instead of
// one a warp for the keys in its first lane's bin (a row's block scores share their top bits, so
// most of the first pass's keys hit one bin).
#ifndef IXO_TOPK_EARLY_EXIT
#define IXO_TOPK_EARLY_EXIT 1
#endif
#ifndef IXO_TOPK_AGGREGATE
#define IXO_TOPK_AGGREGATE 1
#endif

// Radix select over key(j), j in [0, n): the `need`-th largest key (need >= 1, n >= need),
// block-wide (every thread calls it; NT a multiple of the warp size). Per pass: each thread
// counts its keys into the pass's histogram, one barrier, warp 0 finds the bin where the
// running count from the top reaches `need` (kPer bins a lane, a warp scan), one barrier.
template <int NT, class Key>
__device__ __forceinline__ RadixCut radix_select(std::int64_t n, Key key, std::uint32_t need, RadixSmem& sm,
                                                 int mutant = 0) {
  constexpr int W = IXO_WARP_SIZE;
  constexpr int kPer = 256 / W;  // bins a lane of warp 0 scans
  static_assert(NT % W == 0 && 256 % W == 0, "radix select shape");
  const int tid = threadIdx.x, lane = tid % W;
  for (int i = tid; i < 256; i += NT) sm.hist[0][i] = 0;
  __syncthreads();
  std::uint32_t prefix = 0, mask = 0, count = 0;
  const std::int64_t n_rounded = (n + NT - 1) / NT * NT;  // every lane runs the same iterations
  int buf = 0;
  for (int shift = 24; shift >= 0; shift -= 8, buf ^= 1) {
    std::uint32_t* h = sm.hist[buf];
    for (int i = tid; i < 256; i += NT) sm.hist[buf ^ 1][i] = 0;  // read last in the previous pass's scan
    for (std::int64_t j = tid; j < n_rounded; j += NT) {
      std::uint32_t bin = 256u;  // none: out of range or outside the prefix
      if (j < n) {
        const std::uint32_t u = key(j);
        if ((u & mask) == prefix) bin = (u >> shift) & 0xFFu;
      }
#if IXO_TOPK_AGGREGATE
      const std::uint32_t lead = IXO_SHFL(bin, 0);
      const std::uint32_t same = static_cast<std::uint32_t>(IXO_BALLOT_COUNT(bin == lead));
      if (bin == lead) {
        if (lane == 0 && lead < 256u) atomicAdd(&h[lead], same);
      } else if (bin < 256u) {
        atomicAdd(&h[bin], 1u);
      }
#else
      if (bin < 256u) atomicAdd(&h[bin], 1u);
#endif
    }
    __syncthreads();
    if (tid < W) {  // bins from the top: lane l holds bins 255 - l * kPer - i, i < kPer
      std::uint32_t c[kPer], sum = 0;
#pragma unroll
      for (int i = 0; i < kPer; ++i) {
        c[i] = h[255 - lane * kPer - i];
        sum += c[i];
      }
      std::uint32_t incl = sum;
#pragma unroll
      for (int d = 1; d < W; d <<= 1) {
        const std::uint32_t y = IXO_SHFL_UP(incl, d);
        if (lane >= d) incl += y;
      }
      std::uint32_t above = incl - sum;
      if (above < need && incl >= need) {  // exactly one lane
#pragma unroll
        for (int i = 0; i < kPer; ++i) {
          if (above < need && above + c[i] >= need) {
            sm.sel_digit = static_cast<std::uint32_t>(255 - lane * kPer - i);
            sm.sel_need = need - above;
            sm.sel_count = c[i];
          }
          above += c[i];
        }
      }
    }
    __syncthreads();  // sel_* are rewritten only after the next pass's counting barrier
    prefix |= sm.sel_digit << shift;
    mask |= 0xFFu << shift;
    need = sm.sel_need;
    count = sm.sel_count;
    // Block-uniform: every key of the bin is taken (the mutant also stops on a partly taken bin).
    if (IXO_TOPK_EARLY_EXIT && (count == need || IXO_MUTANT(mutant, ixo::mutants::topk_early_exit_partial_bin))) break;
  }
  return RadixCut{prefix, mask, need, count};
}

// The topk_ties_by_arrival mutant's compaction (SGLang's radix top-k): each thread counts its
// keys, then claims its tied ones with one atomicAdd as it arrives, so which of the tied keys
// are selected depends on the order the threads finish reading their keys. Positions are
// still ranks in index order (a valid top-k, ids ascending), only not the lowest tied ids.
template <int NT, class Key, class Emit>
__device__ void radix_compact_by_arrival(std::int64_t lo, std::int64_t hi, Key key, const RadixCut& cut,
                                         std::uint64_t* scan, Emit emit) {
  __shared__ std::uint32_t arrived;
  if (threadIdx.x == 0) arrived = 0;
  __syncthreads();
  std::uint32_t gt = 0, eq = 0;
  for (std::int64_t j = lo; j < hi; ++j) {
    const std::uint32_t u = key(j) & cut.mask;
    gt += u > cut.prefix;
    eq += u == cut.prefix;
  }
  const std::uint32_t first = eq > 0 ? atomicAdd(&arrived, eq) : 0u;  // no barrier before: arrival order
  const std::uint32_t mine = first >= cut.need ? 0u : (cut.need - first < eq ? cut.need - first : eq);
  std::uint32_t pos = static_cast<std::uint32_t>(block_exclusive_scan<NT>(gt + mine, scan)), taken = 0;
  for (std::int64_t j = lo; j < hi; ++j) {
    const std::uint32_t u = key(j) & cut.mask;
    if (u > cut.prefix || (u == cut.prefix && taken++ < mine)) emit(pos++, j);
  }
}

// Compaction in index order after radix_select: thread tid owns indices [lo, hi); emit(pos,
// j) is called for every selected j: each key above the cut ((key & mask) > prefix), and the
// keys on it ((key & mask) == prefix) number skip .. skip + need - 1 in index order; pos = its
// rank in index order among the selected ones. scan: IXO_WARP_SIZE words of shared memory.
template <int NT, class Key, class Emit>
__device__ __forceinline__ void radix_compact(std::int64_t n, Key key, const RadixCut& cut, std::uint32_t skip,
                                              std::uint64_t* scan, Emit emit, int mutant = 0) {
  const int tid = threadIdx.x;
  const std::int64_t per = (n + NT - 1) / NT;
  const std::int64_t lo = tid * per < n ? tid * per : n;
  const std::int64_t hi = lo + per < n ? lo + per : n;
  if (IXO_MUTANT(mutant, ixo::mutants::topk_ties_by_arrival)) {  // block-uniform
    radix_compact_by_arrival<NT>(lo, hi, key, cut, scan, emit);
    return;
  }
  const std::uint32_t prefix = cut.prefix, need = cut.need;
  std::uint32_t gt = 0, eq = 0;
  for (std::int64_t j = lo; j < hi; ++j) {
    const std::uint32_t u = key(j) & cut.mask;
    gt += u > prefix;
    eq += u == prefix;
  }
  const std::uint64_t ex = block_exclusive_scan<NT>((static_cast<std::uint64_t>(gt) << 32) | eq, scan);
  std::uint32_t gt_before = static_cast<std::uint32_t>(ex >> 32),
                eq_before = static_cast<std::uint32_t>(ex & 0xFFFFFFFFu);
  for (std::int64_t j = lo; j < hi; ++j) {
    const std::uint32_t u = key(j) & cut.mask;
    bool take = false;
    if (u > prefix) {
      take = true;
    } else if (u == prefix) {
      take = eq_before >= skip && eq_before - skip < need;
      ++eq_before;
    }
    if (take) {
      const std::uint32_t eq_seen = eq_before - (u == prefix ? 1u : 0u);  // tied ids before j
      const std::uint32_t eq_taken = eq_seen > skip ? eq_seen - skip : 0u;
      emit(gt_before + (eq_taken < need ? eq_taken : need), j);
    }
    gt_before += u > prefix;
  }
}

}  // namespace ixo::gpu::detail
