// The native score kernel's raw loop (indexer_kernels.cuh main_loop with raw_tag; experiment rows 59-66): its
// switches, with each row's measured verdict, and its narrow ring, the cp.async ring of mma_tile.cuh addressed in 32
// bits (copies with the zero-fill as a predicate, a lane's pieces by shared-window address). The CP kernel has no raw
// loop and does not include this.
#pragma once
#include <cmath>
#include <cstdint>

#include "gpu/mma_tile.cuh"
#include "plans.hpp"

#if defined(IXO_GPU_CUDA)
namespace ixo::gpu::detail {

// Experiment row 59 (session 39, adopted: default 1; 0 compiles it out): the native kernel's f16 loop of a max-score
// tile takes the block max of the raw MMA sums and multiplies it by the logit multiplier once a block row, instead
// of multiplying each of a lane's 16 logits a sub-tile (16 FMUL of the sub-tile's ~490 warp instructions). Same
// bits where the multiplier m is positive and finite: x -> x * m (round to nearest) is non-decreasing, also over
// -0 < +0 (the sign is kept), and keeps NaN, so max_i(a_i * m) == max_i(a_i) * m under a max that orders -0 < +0;
// masked logits are -inf either way. (Where two logits underflow to -0 and +0, a max that does not order zeros may
// keep either: the sign of a zero block max is the one difference the comparisons already allow between max.NaN and
// the oracle's max, common::BlockState.) The tile takes it only then (no lse, no mutant); else the loop as before.
// H100, one machine (docs/experiments/data/s39-gate-defer-h100): per-row e4m3fn 16 x 131072 -9 %, 32 x 524288 -8 %,
// hot packed e4m3fn step -5 %, cold packed level, latency suite per-row -2.5 % geomean; bf16 not built with it.
#ifndef IXO_DEFER_LOGIT_MULT
#define IXO_DEFER_LOGIT_MULT 1
#endif
constexpr bool kDeferLogitMult = IXO_DEFER_LOGIT_MULT != 0;
// Experiment row 60 (session 40, adopted: default 1; 0 compiles it out): the raw loop (row 59) in 32-bit indices:
// cursors, tokens, masks and K rows in 32 bits (common::narrow_index_fits decides, CTA-uniform: a tile that does not
// fit takes the 64-bit loop), each lane's K row shuffled as one register (ring_issue_narrow) and the zero-fill a
// predicate (cp_async16_fill), the mutant selects of the slot path compiled out. Why: ~2/3 of the hot packed e4m3fn
// kernel's ~454 warp instructions a sub-tile were 64-bit index math, selects and branches (session 39's ncu source
// page). H100, one machine (docs/experiments/data/s40-narrow-loop-h100): hot packed e4m3fn step -11 %, per-row
// e4m3fn -12 / -13 %, cold packed -0.6 %, latency suite geomean per-row 0.960, packed 0.973; ~454 -> ~382 warp
// instructions a sub-tile. It is the raw loop's: without IXO_DEFER_LOGIT_MULT there is none.
#ifndef IXO_NARROW_LOOP
#define IXO_NARROW_LOOP 1
#endif
constexpr bool kNarrowLoop = IXO_NARROW_LOOP != 0 && kDeferLogitMult;
// Experiment row 61 (session 41, adopted: default 1; 0 compiles it out): the narrow loop keeps each req_to_token entry
// ahead as one int32 (common::kNoEntry where the lane loads none, not a value and a flag: the ring of entries ahead
// moves one register an entry, not two), turns it into its K row in 32 bits (common::narrow_entry_row, not
// wrap_slot's 64-bit sum and compare), and ring_issue_narrow forms the address of kNoKRow too (no select: the copy's
// ignore-src predicate reads nothing). With IXO_MAX_FROM_FIRST: ~382 -> ~357 warp instructions a sub-tile (ncu);
// H100 (docs/experiments/data/s41-narrow-entries-h100): hot packed e4m3fn step -8 %, per-row e4m3fn -6 %.
#ifndef IXO_NARROW_ENTRIES
#define IXO_NARROW_ENTRIES 1
#endif
constexpr bool kNarrowEntries = IXO_NARROW_ENTRIES != 0 && kNarrowLoop;
// Experiment row 63 (session 41, adopted): the narrow loop addresses its ring by a 32-bit shared-window address kept in
// a register (ring_issue_narrow, ring_drain_sa, ring_step_sa), not by a generic pointer whose window base (S2R
// SR_CgaCtaId, then LEA / ULEA) the compiler rebuilt in every sub-tile for the copies and again for the reads. H100
// (docs/experiments/data/s41-smem-addr-h100): hot packed e4m3fn step -2 %, per-row e4m3fn 32 x 524288 -1.4 %, the
// rest level; ~357 -> ~347 warp instructions a sub-tile.
// Experiment row 66 (session 41; measured session 42, not adopted: hot packed e4m3fn -1.1 % but cold per-row e4m3fn
// +2..+4 % on an H100): the narrow loop's K base and req_to_token row converted once to global-space addresses
// (cvta.to.global, the entries read with ld.global.nc). With generic pointers ptxas rebuilt both in every sub-tile: the
// K base split into a register offset plus the constant-bank p.k, added back into every copy's address (LDC.64 and 4
// IADD3 / IADD3.X pairs), and the req_to_token row from sid * width in 64 bits (~8). Static: the loop 562 -> 548.
// Row 66b (session 42, measured session 43, not adopted: the K base's half alone, hot packed e4m3fn -1.4 % but cold
// per-row e4m3fn +1.6..+2.0 %). Both halves are docs/experiments/narrow-global-bases.patch (IXO_NARROW_GLOBAL_KBASE,
// IXO_NARROW_GLOBAL_R2T).
__device__ __forceinline__ bool logit_mult_deferrable(float mult, bool lse, int mutant) {
  return kDeferLogitMult && !lse && mutant == 0 && mult > 0.0f && mult < INFINITY;
}

// cp_async16 with the zero-fill as a predicate (cp.async's ignore-src operand; row 60's narrow ring_issue): fill
// false copies zeros and reads nothing, as src_bytes 0 does, without computing a byte count and an address from it.
// sa: the destination's shared-window address (row 63: the narrow ring keeps its own in a register).
template <bool kEvictFirst = false>
__device__ __forceinline__ void cp_async16_fill(unsigned sa, const void* gmem, bool fill) {
  static_assert(!kEvictFirst || kPackedStreamK, "kEvictFirst comes from kPackedStreamK (IXO_PACKED_K_EVICT_FIRST)");
  static_assert(IXO_CP_ASYNC_L2_PREFETCH == 128, "the narrow loop's copies are built for the .L2::128B form only");
  const unsigned ignore = fill ? 0u : 1u;
  if constexpr (kEvictFirst || IXO_CP_ASYNC_EVICT_FIRST) {
    const unsigned long long policy = l2_evict_first_policy();
    asm volatile(
        "{\n .reg .pred p;\n setp.ne.u32 p, %2, 0;\n"
        " cp.async.cg.shared.global.L2::cache_hint.L2::128B [%0], [%1], 16, p, %3;\n}\n" ::"r"(sa),
        "l"(gmem), "r"(ignore), "l"(policy)
        : "memory");
    return;
  }
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.u32 p, %2, 0;\n cp.async.cg.shared.global.L2::128B [%0], [%1], 16, p;\n}\n" ::"r"(
          sa),
      "l"(gmem), "r"(ignore)
      : "memory");
}

// The shared-window address of this lane's piece l of n-tile j in ring stage `stage` (row 63): lane_sa is the one of
// its piece 0 of stage 0 (ring + lane); the layout is ring_issue / ring_drain's, [stage][j][l][lane] 16-byte pieces.
template <int D, int KC>
__device__ __forceinline__ std::uint32_t ring_piece_sa(std::uint32_t lane_sa, int stage, int j, int l) {
  return lane_sa + static_cast<std::uint32_t>(stage) * (kRingStage<D, KC> * 16) +
         (j * MmaCfg<D, KC>::kNL + l) * 32 * 16;
}

// ring_issue in 32 bits (row 60's narrow loop): my_row is this lane's K row (common::narrow_k_row; kNoKRow: none,
// zero-filled), row_bytes fits 32 bits (common::narrow_index_fits), so a piece's address is one 32 x 32 -> 64-bit
// multiply-add and a shuffle moves one register, not two. Row 61: the address of kNoKRow is formed too (no select: a
// copy whose ignore-src predicate is set reads nothing). Row 63: the pieces by shared-window address (ring_piece_sa).
template <int D, int KC, bool kEvictFirst = false>
__device__ __forceinline__ void ring_issue_narrow(std::uint32_t lane_sa, int stage, std::uint32_t my_row,
                                                  const std::uint8_t* kbase, std::uint32_t row_bytes, int grp) {
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const std::uint32_t r = __shfl_sync(0xffffffffu, my_row, j * 8 + grp);
    const bool fill = r != cm::kNoKRow;
    const std::uint8_t* src = kbase + static_cast<std::uint64_t>(kNarrowEntries || fill ? r : 0u) * row_bytes;
#pragma unroll
    for (int l = 0; l < MmaCfg<D, KC>::kNL; ++l)
      cp_async16_fill<kEvictFirst>(ring_piece_sa<D, KC>(lane_sa, stage, j, l), src + l * 64, fill);
  }
}
// ring_drain by shared-window address (row 63).
template <int D, int KC>
__device__ __forceinline__ void ring_drain_sa(std::uint32_t lane_sa, int stage, uint4 (&kf)[4][MmaCfg<D, KC>::kNL]) {
#pragma unroll
  for (int j = 0; j < 4; ++j)
#pragma unroll
    for (int l = 0; l < MmaCfg<D, KC>::kNL; ++l) {
      uint4& v = kf[j][l];
      asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                   : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                   : "r"(ring_piece_sa<D, KC>(lane_sa, stage, j, l))
                   : "memory");
    }
}

// ring_step by shared-window address (row 63's narrow loop).
template <int D, int KC, class Cursor, class Issue>
__device__ __forceinline__ void ring_step_sa(std::uint32_t lane_sa, const Cursor& cur, Cursor& iss, int nsub,
                                             typename Cursor::Index total, uint4 (&kf)[4][MmaCfg<D, KC>::kNL],
                                             Issue&& issue) {
  ring_step_then<D, KC>(iss, nsub, total, issue, [&] { ring_drain_sa<D, KC>(lane_sa, cur.stage, kf); });
}

}  // namespace ixo::gpu::detail
#endif  // IXO_GPU_CUDA
