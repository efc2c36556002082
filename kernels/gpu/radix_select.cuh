// Block-wide radix selection shared by the native top-k (indexer_kernels.cuh) and the CP
// shard candidates (cp_kernels.cuh), portable (CUDA and HIP): a 4-pass radix select (8 bits a
// pass) finds the `need`-th largest of n 32-bit keys, then a compaction in index order
// emits the selected indices (every key above the threshold, and the first `need` tied
// ones after `skip` tied ones) with their output positions.
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

// The early stop of radix_select (experiment row 51; 0: every pass runs, as before session 32):
// once the bin of the `need`-th key is selected whole (its count is the keys still needed), the
// keys it holds are told apart from the others by the bits resolved so far, so the later passes
// cannot change which keys are selected.
#ifndef IXO_TOPK_EARLY_STOP
#define IXO_TOPK_EARLY_STOP 1
#endif

// What radix_select found: prefix, the `need`-th largest key, and eq_total, how many keys equal
// it; the selected keys are those above prefix and the `need` (its argument, updated) lowest-id
// ones equal to it. After an early stop prefix is the selected bin's bits with the unresolved
// low bits 0 and eq_total the bin's count (== need): every key of the bin is >= prefix and every
// key below the bin < prefix, so radix_compact, comparing whole keys, selects the bin whole.
struct RadixThreshold {
  std::uint32_t prefix, eq_total;
};

// Radix select over key(j), j in [0, n): the threshold above; `need` is left at how many keys
// equal to the threshold are selected. Shared memory: hist[257], scan
// [IXO_WARP_SIZE], sel_digit, sel_need. Block-wide: with NT >= 256 threads (one per bin) the
// digit is found by a block scan, with fewer by thread 0 walking the bins (same result).
// The mutant topk_early_stop_partial_bin stops after the first pass even on a bin selected in part.
template <int NT, class Key>
__device__ __forceinline__ RadixThreshold radix_select(std::int64_t n, Key key, std::uint32_t& need,
                                                       std::uint32_t* hist, std::uint64_t* scan,
                                                       std::uint32_t& sel_digit, std::uint32_t& sel_need,
                                                       int mutant = 0) {
  const int tid = threadIdx.x;
  std::uint32_t prefix = 0, mask = 0, eq_total = 0;
  for (int shift = 24; shift >= 0; shift -= 8) {
    for (int i = tid; i < 257; i += NT) hist[i] = 0;
    __syncthreads();
    for (std::int64_t j = tid; j < n; j += NT) {
      const std::uint32_t u = key(j);
      if ((u & mask) == prefix) atomicAdd(&hist[(u >> shift) & 0xFFu], 1u);
    }
    __syncthreads();
    if constexpr (NT >= 256) {
      // Suffix sums over the 256 bins (hist[256] stays 0).
      const std::uint64_t mine = tid < 256 ? hist[255 - tid] : 0;
      const std::uint64_t excl = block_exclusive_scan<NT>(mine, scan);
      if (tid < 256) {
        const std::uint32_t above = static_cast<std::uint32_t>(excl);        // bins > 255 - tid
        const std::uint32_t upto = static_cast<std::uint32_t>(excl + mine);  // bins >= 255 - tid
        if (above < need && upto >= need) {
          sel_digit = 255u - tid;
          sel_need = need - above;
        }
      }
    } else if (tid == 0) {
      std::uint32_t above = 0;
      for (int d = 255; d >= 0; --d) {
        if (above + hist[d] >= need) {
          sel_digit = static_cast<std::uint32_t>(d);
          sel_need = need - above;
          break;
        }
        above += hist[d];
      }
    }
    __syncthreads();
    prefix |= sel_digit << shift;
    mask |= 0xFFu << shift;
    need = sel_need;
    eq_total = hist[sel_digit];  // CTA-uniform
    __syncthreads();
    if (IXO_TOPK_EARLY_STOP &&
        (eq_total == need || IXO_MUTANT(mutant, ixo::mutants::topk_early_stop_partial_bin)))  // CTA-uniform
      break;
  }
  return RadixThreshold{prefix, eq_total};
}

// The compaction of a small selection without a partial tie (experiment row 52; 0: radix_compact always, as
// before session 32). When the threshold's tied keys are all selected (eq_total == need) the selected keys are
// exactly those >= prefix (radix_select's RadixThreshold), so each thread appends the ids of its own to a shared
// list (in any order; `kept` of them), and after one barrier each of the first `kept` threads ranks its entry
// among the others: its position in id order. For kept <= kSmallSelect (the M3 rows: topk 16), instead of
// radix_compact's two passes over the keys around a block scan. list: kSmallSelect entries; count: 0 before
// the caller's first barrier.
#ifndef IXO_TOPK_SMALL_COMPACT
#define IXO_TOPK_SMALL_COMPACT 1
#endif
constexpr int kSmallSelect = 32;
template <int NT, class Key, class Emit>
__device__ __forceinline__ void small_compact(std::int64_t n, Key key, std::uint32_t prefix, std::uint32_t kept,
                                              std::uint32_t* list, std::uint32_t& count, Emit emit) {
  const int tid = threadIdx.x;
  for (std::int64_t j = tid; j < n; j += NT)
    if (key(j) >= prefix) {
      const std::uint32_t at = atomicAdd(&count, 1u);
      if (at < static_cast<std::uint32_t>(kSmallSelect)) list[at] = static_cast<std::uint32_t>(j);
    }
  __syncthreads();
  if (tid < static_cast<int>(kept)) {
    const std::uint32_t id = list[tid];
    std::uint32_t rank = 0;
    for (std::uint32_t s = 0; s < kept; ++s) rank += list[s] < id ? 1u : 0u;
    emit(rank, static_cast<std::int64_t>(id));
  }
}
// Whether small_compact applies: the knob, a small selection, every tied key selected.
__device__ __forceinline__ bool small_compact_fits(const RadixThreshold& th, std::uint32_t need, std::uint32_t kept) {
  return IXO_TOPK_SMALL_COMPACT && th.eq_total == need && kept <= static_cast<std::uint32_t>(kSmallSelect);
}

// The topk_ties_by_arrival mutant's compaction (SGLang's radix top-k): each thread counts its
// keys, then claims its tied ones with one atomicAdd as it arrives, so which of the tied keys
// are selected depends on the order the threads finish reading their keys. Positions are
// still ranks in index order (a valid top-k, ids ascending), only not the lowest tied ids.
template <int NT, class Key, class Emit>
__device__ void radix_compact_by_arrival(std::int64_t lo, std::int64_t hi, Key key, std::uint32_t prefix,
                                         std::uint32_t need, std::uint64_t* scan, Emit emit) {
  __shared__ std::uint32_t arrived;
  if (threadIdx.x == 0) arrived = 0;
  __syncthreads();
  std::uint32_t gt = 0, eq = 0;
  for (std::int64_t j = lo; j < hi; ++j) {
    const std::uint32_t u = key(j);
    gt += u > prefix;
    eq += u == prefix;
  }
  const std::uint32_t first = eq > 0 ? atomicAdd(&arrived, eq) : 0u;  // no barrier before: arrival order
  const std::uint32_t mine = first >= need ? 0u : (need - first < eq ? need - first : eq);
  std::uint32_t pos = static_cast<std::uint32_t>(block_exclusive_scan<NT>(gt + mine, scan)), taken = 0;
  for (std::int64_t j = lo; j < hi; ++j) {
    const std::uint32_t u = key(j);
    if (u > prefix || (u == prefix && taken++ < mine)) emit(pos++, j);
  }
}

// Compaction in index order after radix_select: thread tid owns indices [lo, hi); emit(pos,
// j) is called for every selected j: each key above `prefix`, and the tied keys (== prefix)
// number skip .. skip + need - 1 in index order; pos = its rank in index order among the
// selected ones.
template <int NT, class Key, class Emit>
__device__ __forceinline__ void radix_compact(std::int64_t n, Key key, std::uint32_t prefix, std::uint32_t need,
                                              std::uint32_t skip, std::uint64_t* scan, Emit emit, int mutant = 0) {
  const int tid = threadIdx.x;
  const std::int64_t per = (n + NT - 1) / NT;
  const std::int64_t lo = tid * per < n ? tid * per : n;
  const std::int64_t hi = lo + per < n ? lo + per : n;
  if (IXO_MUTANT(mutant, ixo::mutants::topk_ties_by_arrival)) {  // block-uniform
    radix_compact_by_arrival<NT>(lo, hi, key, prefix, need, scan, emit);
    return;
  }
  std::uint32_t gt = 0, eq = 0;
  for (std::int64_t j = lo; j < hi; ++j) {
    const std::uint32_t u = key(j);
    gt += u > prefix;
    eq += u == prefix;
  }
  const std::uint64_t ex = block_exclusive_scan<NT>((static_cast<std::uint64_t>(gt) << 32) | eq, scan);
  std::uint32_t gt_before = static_cast<std::uint32_t>(ex >> 32),
                eq_before = static_cast<std::uint32_t>(ex & 0xFFFFFFFFu);
  for (std::int64_t j = lo; j < hi; ++j) {
    const std::uint32_t u = key(j);
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
