// Single-source CUDA/HIP top-k kernel of the indexer (one CTA per (head, row)) and the fill
// kernel (the score poison), included by indexer_kernels.cuh. Every shared formula comes from
// indexer_common.hpp / plans.hpp; the radix selection is radix_select.cuh's, the vote selection of
// short rows (knob IXO_TOPK_BALLOT, default 0) ballot_select.cuh's.
#pragma once
#include <cstddef>
#include <cstdint>

#include "gpu/ballot_select.cuh"
#include "gpu/gpu_port.hpp"
#include "gpu/radix_select.cuh"
#include "index_config.hpp"
#include "indexer_common.hpp"
#include "plans.hpp"

namespace ixo::gpu::detail {
namespace cm = ixo::common;

constexpr int kTopkThreads = 256;
constexpr int kTopkSmemKeys = 8192;  // rows with nb <= this keep their keys in shared memory

struct TopkParams : cm::IndexConfig {
  const float* scores;
  const std::int64_t* slot;
  const std::int64_t* lens;
  std::int32_t* out;
  int mutant;
};

// ---------------------------------------------------------------- top-k
// One block (256 threads) per (head, row). Trivial rows (nb <= topk) and inactive rows never read the
// scores. Otherwise a radix select (8 bits a pass, up to 4 passes: radix_select.cuh's early stop)
// over the upper 32 bits of common::topk_key finds the k-th score key; ties on it go to the lowest
// ids (the key's lower half); the selected ids are compacted in id order, so the output is ascending.
__device__ __forceinline__ std::uint32_t score_key_hi(float s) {
  return static_cast<std::uint32_t>(cm::topk_key(s, 0) >> 32);
}

// Whether every row of a launch fits the vote selection (nb <= NB keys, topk ids): with the knob on,
// with_vote_instantiation then runs topk_kernel<NT, true>. Otherwise the radix-only kernel runs:
// session 25 (H100) measured the radix path slower when compiled into the same kernel as the vote
// path (32 x 524288 top-k CTA 10.6 -> 13.8-15.0 us).
inline bool topk_rows_fit_votes(const TopkParams& p, int nt) { return ballot_topk_fits(p.NB, p.topk, nt); }

template <int NT, bool kVotes = false>
__global__ void __launch_bounds__(NT) topk_kernel(TopkParams p) {
  __shared__ std::uint32_t keys[kTopkSmemKeys];
  __shared__ std::uint32_t hist[257];
  __shared__ std::uint64_t scan[IXO_WARP_SIZE];
  __shared__ std::uint32_t sel_digit, sel_need;
  __shared__ std::uint32_t small_ids[kSmallSelect], small_count;
  const int tid = threadIdx.x;
  if (!kVotes && tid == 0) small_count = 0;  // small_compact's; ordered by radix_select's barriers
  const std::int64_t hr = blockIdx.x;        // h * R + r
  const std::int64_t r = hr % p.R;
  std::int32_t* out = p.out + hr * p.topk;
  const cm::TopkPlan t = cm::topk_plan(cm::row_inputs(p, p.slot, p.lens), r, p.NB, p.mutant);
  if (t.shortcut) {
    for (int i = tid; i < p.topk; i += NT) out[i] = cm::topk_tail_id(t, i, p.mutant);
    return;
  }
  const std::int64_t n = t.n;
  const int kept = t.kept;
  for (int i = tid + kept; i < p.topk; i += NT) out[i] = cm::topk_tail_id(t, i, p.mutant);
  if (kept <= 0) return;
  const float* sc = p.scores + hr * p.NB;
  auto emit = [&](std::uint32_t pos, std::int64_t j) {
    if (IXO_MUTANT(p.mutant, mutants::ids_unsorted)) pos = static_cast<std::uint32_t>(kept) - 1u - pos;  // descending
    if (pos < static_cast<std::uint32_t>(kept)) out[pos] = static_cast<std::int32_t>(j);
  };
  // The vote selection (knob IXO_TOPK_BALLOT) for short rows, else the radix select below. The
  // arrival-order tie mutant models the radix compaction: it keeps that path.
  if constexpr (kVotes) {
    auto global_key = [&](std::int64_t j) { return score_key_hi(sc[j]); };
    if (!IXO_MUTANT(p.mutant, mutants::topk_ties_by_arrival) &&
        try_ballot_topk<NT>(n, global_key, kept, IXO_MUTANT(p.mutant, mutants::tie_rule_reversed), emit))
      return;
  }
  const bool in_smem = n <= kTopkSmemKeys;
  if (in_smem)
    for (std::int64_t j = tid; j < n; j += NT) keys[j] = score_key_hi(sc[j]);
  __syncthreads();
  auto key = [&](std::int64_t j) -> std::uint32_t { return in_smem ? keys[j] : score_key_hi(sc[j]); };

  std::uint32_t need = static_cast<std::uint32_t>(kept);
  const RadixThreshold th = radix_select<NT>(n, key, need, hist, scan, sel_digit, sel_need, p.mutant);
  // Ties on the threshold: the `need` lowest ids of its eq_total tied keys; the mutant skips the
  // lowest ones instead.
  const std::uint32_t skip = IXO_MUTANT(p.mutant, mutants::tie_rule_reversed) ? th.eq_total - need : 0u;
  // Compaction in id order: ids ascending.
  // Not in the vote instantiation (its radix select runs only on a wide tie): with it compiled in there the
  // latency suite's vote-path steps measured 1-5 % slower (4K / 8K contexts; session 32, row 52).
  if constexpr (!kVotes) {
    if (small_compact_fits(th, need, static_cast<std::uint32_t>(kept))) {  // CTA-uniform
      small_compact<NT>(n, key, th.prefix, static_cast<std::uint32_t>(kept), small_ids, small_count, emit);
      return;
    }
  }
  radix_compact<NT>(n, key, th.prefix, need, skip, scan, emit, p.mutant);
}

__global__ void fill_u32_kernel(std::uint32_t* dst, std::uint32_t bits, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    dst[i] = bits;
}

}  // namespace ixo::gpu::detail
