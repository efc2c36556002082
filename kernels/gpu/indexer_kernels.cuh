// Single-source CUDA/HIP score kernels of the indexer (per-row and packed are the same
// kernel; per-row is a pack of 1; the top-k and fill kernels: topk_kernel.cuh). Included by
// indexer_cuda.cu (nvcc) and indexer_hip.hip (hipcc). Every shared formula comes from
// indexer_common.hpp / plans.hpp.
// Design notes: docs/gpu-kernels.md.
#pragma once
#include <cstdint>
#include <type_traits>

#include "gpu/gpu_port.hpp"
#include "gpu/mma_tile.cuh"
#include "gpu/scalar_tile.cuh"
#include "gpu/score_params.cuh"
#include "gpu/score_state.cuh"
#include "gpu/topk_kernel.cuh"
#include "index_config.hpp"
#include "indexer_common.hpp"
#include "plans.hpp"

namespace ixo::gpu::detail {
namespace cm = ixo::common;

#if defined(IXO_GPU_CUDA)
// ---------------------------------------------------------------- tensor-core path (CUDA)
constexpr int kSplitMaxRem = cm::kScoreWarps - 1;  // remainder blocks of a CTA (n % 4)
constexpr int kSplitMaxSub = cm::kSplitMaxSub;     // sub-tiles per block (block size <= 256) for the split
constexpr int kSlotAhead = cm::kSlotAhead;         // req_to_token entries loaded this many sub-tiles ahead

// The start chain (session 17's CTA timeline: ~7.7 us from a CTA's start to its first K
// sub-tile at 16 x 131072, with the whole GPU's CTAs starting together) is a row of dependent
// round trips: the rows' slot ids and lengths (the plan), then the q rows (loaded after the
// plan's branches), then req_to_token, then K. IXO_START_PREFETCH: the CTA's threads prefetch
// the slot ids, lengths and q rows of its tile into L1 first thing (prefetch.global.L1, a
// hint: same loads, same values), so the plan and the q loads hit L1; IXO_START_BATCHED_ENTRIES:
// the first req_to_token entries in one batch (score_mma_tile).
#ifndef IXO_START_PREFETCH
#define IXO_START_PREFETCH 0  // not yet measured on the H200 (no device at session 17's end)
#endif
#ifndef IXO_START_BATCHED_ENTRIES
#define IXO_START_BATCHED_ENTRIES 0  // not yet measured on the H200 (no device at session 17's end)
#endif
__device__ __forceinline__ void prefetch_l1(const void* ptr) { asm volatile("prefetch.global.L1 [%0];" ::"l"(ptr)); }
// Rows [first, first + rows) of K head kvh: their slot ids and lengths, and the q heads
// [kvh * gqa, kvh * gqa + gqa) of each row (contiguous, gqa * D bf16), every 128-byte line.
template <int D>
__device__ __forceinline__ void prefetch_tile_inputs(const ScoreParams& p, std::int64_t first, int rows, int kvh) {
  constexpr int kLine = 128;
  const int t = threadIdx.x;
  if (t < rows) prefetch_l1(p.lens + first + t);
  if (t >= rows && t < 2 * rows) prefetch_l1(p.slot + first + (t - rows));
  const std::int64_t bytes = static_cast<std::int64_t>(p.gqa) * D * 2;
  const int lines = static_cast<int>((bytes + kLine - 1) / kLine) + 1;  // + 1: a row need not start a line
  for (int i = t; i < rows * lines; i += blockDim.x) {
    const int d = i / lines, j = i % lines;
    const char* base =
        reinterpret_cast<const char*>(p.q + ((first + d) * p.Hq + static_cast<std::int64_t>(kvh) * p.gqa) * D);
    prefetch_l1(base + (j * kLine < bytes ? j * kLine : bytes - 1));
  }
}

// One tile of a score program: rows [first, first + pack) (a packed group, or one row) of
// K head kvh, the blocks `work` gives of the tile's plan g (common::group_plan: length Lg,
// table row sid): KV chunk `work` (an int), or a balanced plan's span (common::TileWork).
// lut: the fp8 decode table.
template <int D, int KC, class Work>
__device__ __forceinline__ void score_mma_tile(const ScoreParams& p, std::int64_t first, int pack,
                                               const cm::GroupPlan& g, const Work& work, int kvh,
                                               const std::uint16_t* lut) {
  constexpr bool kFp8 = KC != cm::kBf16;
  constexpr int kEsz = kFp8 ? 1 : 2;
  constexpr int kNL = D * kEsz / 64;  // 16-byte loads per token-thread
  constexpr int kNS = MmaCfg<D, KC>::kStages;
  extern __shared__ uint4 kring[];  // [warp][stage][n-tile j][piece l][lane]
  constexpr int kSteps = D / 16;    // mma k-steps
  static_assert(D % 64 == 0, "D must be a multiple of 64");

  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int grp = lane >> 2, tig = lane & 3;
  // Work claims (common/work_claims.hpp): the warp's blocks are taken as its stream reaches
  // them, its sub-tile count is known once they run out (total, below).
  constexpr bool kClaims = std::is_same<Work, cm::ClaimWork>::value;
  constexpr std::int64_t kUnbounded = INT64_MAX / 16;
  // A lane keeps the block of one unit in 32 (lane_claim): the cursors' window, kNS - 1 + kSlotAhead
  // sub-tiles (each at most one unit), must stay under 32 units.
  static_assert(!kClaims || kNS - 1 + kSlotAhead < 32, "work claims' lane ring is 32 units");

  const std::int64_t Lg = g.Lg, sid = g.sid;
  if (Lg <= 0 || sid < 0) return;
  std::int64_t b0, b1;
  work_blocks(p, work, cm::num_blocks(Lg, p.block_size), &b0, &b1);
  if (!kClaims && b0 + warp >= b1)
    return;  // warp-uniform; only the split (b1 - b0 >= 4: no warp left) has a barrier below

  const RowMeta m0 = tile_row_meta(p, first, pack, kvh, grp, g);
  const RowMeta m1 = tile_row_meta(p, first, pack, kvh, grp + 8, g);

  // Q fragments with the permuted k order.
  std::uint32_t qa[kSteps][4];
  {
    const cm::TileRow t0 = cm::tile_row(grp, pack, p.gqa), t1 = cm::tile_row(grp + 8, pack, p.gqa);
    const std::uint32_t* q0 = t0.used
                                  ? reinterpret_cast<const std::uint32_t*>(
                                        p.q + ((first + t0.draft) * p.Hq +
                                               cm::tile_query_head(kvh, p.gqa, t0, static_cast<int>(p.Hk), p.mutant)) *
                                                  D)
                                  : nullptr;
    const std::uint32_t* q1 = t1.used
                                  ? reinterpret_cast<const std::uint32_t*>(
                                        p.q + ((first + t1.draft) * p.Hq +
                                               cm::tile_query_head(kvh, p.gqa, t1, static_cast<int>(p.Hk), p.mutant)) *
                                                  D)
                                  : nullptr;
    load_q_fragments<D, KC>(qa, q0, q1, tig);
  }

  const bool lse = p.score_lse != 0;
  const int nsub = (p.block_size + 31) / 32;
  // Block split of the CTA: warp w scores blocks b0 + w, b0 + w + 4, ... whole. For max
  // scores (no lse) of a range of n >= 4 blocks that is not a multiple of 4, the last n % 4
  // blocks are instead cut into their sub-tiles, dealt round-robin to the 4 warps and merged
  // by max through shared memory, so every warp streams the same number of sub-tiles (give
  // or take one). A max does not depend on the order of its operands (NaN logits are dropped
  // either way), so the bits equal the whole-block path's. lse keeps whole blocks (its sum
  // is order-dependent). The decision is CTA-uniform; with it every warp reaches the barrier.
  __shared__ float part[kSplitMaxRem][kSplitMaxSub][cm::kTileRows];
  const std::int64_t nblk = b1 - b0;
  const bool split = !kClaims && !lse && nblk >= 4 && (nblk & 3) != 0 && nsub <= kSplitMaxSub;
  const std::int64_t nfull_w = split ? nblk / 4 : (nblk - warp + 3) / 4;  // whole blocks of this warp
  const int rem = split ? static_cast<int>(nblk & 3) : 0;
  const std::int64_t full_tiles = kClaims ? kUnbounded : nfull_w * nsub;  // claims: every sub-tile a whole block's
  std::int64_t total = kClaims ? kUnbounded : full_tiles + (split ? (rem * nsub - warp + 3) / 4 : 0);
  const std::int64_t b_rem = b0 + (nblk & ~std::int64_t{3});  // first block of the remainder
  const std::int32_t* r2t_row = p.r2t + sid * p.width;
  const std::int64_t row_bytes = p.Hk * D * kEsz;
  const std::uint8_t* kbase =
      p.k + static_cast<std::int64_t>(cm::tile_k_head(kvh, pack, p.mutant)) * D * kEsz + tig * 16;
  // The decode table (built with p.mutant) instead of the hardware / integer widening when
  // it holds a mutant's decode.
  const bool use_lut = cm::fp8_decode_mutated(p.mutant);
  const bool q_f16 = tile_takes_f16_path<D, KC>(qa, use_lut);  // fp8 K: the f16 path (mma_tile.cuh)

  // First token of the sub-tile at cursor c, its offset in its block, and its remainder
  // index (-1: whole block). Whole blocks: block b0 + warp + 4 * unit, from the cursor
  // without a division; the remainder pieces (at most 6 sub-tiles a warp) divide.
  using Cursor = RingCursor<D, KC>;
  // Claims: the block of the warp's unit u, its tickets taken up to u first (warp-uniform; a
  // lane holds the blocks of the units u % 32 == lane: the cursors are at most a few units
  // apart); -1 when the tile's blocks ran out first, and total is then the warp's sub-tiles.
  // The next ticket is taken as soon as a block is claimed (lane 0's atomicAdd, its value read
  // at the next claim, a block later: the atomic's round trip never stalls the warp).
  cm::ClaimState claims = cm::claim_start();
  std::int32_t lane_claim = 0, ticket_ahead = 0;
  auto unit_block = [&](std::int64_t u) -> std::int64_t {
    if constexpr (kClaims) {
      while (claims.claimed <= u && !claims.exhausted) {
        const std::int64_t b =
            cm::claim_block(work, warp, b1, claims, [&] { return __shfl_sync(0xffffffffu, ticket_ahead, 0); });
        if (b >= 0 && lane == 0) ticket_ahead = atomicAdd(work.counter, 1);  // the next ticket, a block ahead
        if (b >= 0 && lane == ((claims.claimed - 1) & 31)) lane_claim = static_cast<std::int32_t>(b);
        if (claims.exhausted) total = claims.claimed * nsub;
      }
      const std::int32_t b = __shfl_sync(0xffffffffu, lane_claim, static_cast<int>(u & 31));
      return u < claims.claimed ? b : -1;
    } else {
      return b0 + warp + 4 * u;
    }
  };
  auto whole_block = [&](const Cursor& c) -> std::int64_t { return unit_block(c.unit); };
  auto tile_start = [&](const Cursor& c, int* off0, int* q) -> std::int64_t {
    std::int64_t b;
    if (c.it < full_tiles) {
      b = whole_block(c);
      *off0 = c.sub * 32;
      *q = -1;
    } else {
      const int qq = warp + 4 * static_cast<int>(c.it - full_tiles);
      b = b_rem + qq / nsub;
      *off0 = (qq % nsub) * 32;
      *q = qq;
    }
    return b * p.block_size + *off0;
  };
  // This lane's token of the sub-tile at c (-1: not loaded), its req_to_token entry (with
  // whether it was loaded, so the token is computed once a sub-tile), and its slot (-1: not
  // loaded). The entries are loaded kSlotAhead sub-tiles before their copies are issued, so
  // the dependent req_to_token -> K latency is hidden behind several sub-tiles.
  auto lane_token = [&](const Cursor& c) -> std::int64_t {
    if (c.it >= total) return -1;
    int off0, q;
    const std::int64_t t = tile_start(c, &off0, &q) + lane;
    if (kClaims && c.it >= total) return -1;  // the claim for c's block found none left
    return off0 + lane >= p.block_size || t >= Lg ? -1 : t;
  };
  struct Entry {
    std::int32_t raw;
    bool loaded;
  };
  auto load_r2t = [&](const Cursor& c) -> Entry {
    const std::int64_t t = lane_token(c);
    return t >= 0 ? Entry{__ldg(r2t_row + t), true} : Entry{0, false};
  };
  auto to_slot = [&](const Entry& e) -> std::int64_t {
    return e.loaded
               ? cm::k_load_row(cm::wrap_slot(static_cast<std::int64_t>(e.raw), p.S, p.mutant), row_bytes, p.mutant)
               : -1;
  };
  uint4* ring = kring + static_cast<std::size_t>(warp) * kNS * kRingStage<D, KC>;
  auto issue = [&](const Cursor& c, std::int64_t my_slot) {
    ring_issue<D, KC>(ring, c.stage, my_slot, kbase, row_bytes, lane, grp);
  };

  // Three cursors: the sub-tile scored (cur), the one issued (iss, kNS - 1 ahead) and the
  // one whose req_to_token entries are loaded (ahd, kSlotAhead further).
  Cursor cur, iss, ahd;
  cur.seek(0, nsub);
  iss = cur;
#if IXO_START_BATCHED_ENTRIES
  // The entries of the ring's first kNS - 1 sub-tiles and of the kSlotAhead after them, all
  // loaded before the first copy is issued: one req_to_token round trip at the start (the
  // copies' memory clobber kept each entry load behind the previous sub-tile's copy: three
  // dependent round trips before the first K arrived; session 17's CTA timeline).
  Entry first_entries[kNS - 1];
  ahd = iss;
#pragma unroll
  for (int i = 0; i < kNS - 1; ++i) {
    first_entries[i] = load_r2t(ahd);
    ahd.next(nsub);
  }
#else
  ring_start<D, KC>(iss, nsub, total, [&](const Cursor& c) { issue(c, to_slot(load_r2t(c))); });
  ahd = iss;
#endif
  Entry r2t_ahead[kSlotAhead];  // entries of sub-tiles iss.it + i
#pragma unroll
  for (int i = 0; i < kSlotAhead; ++i) {
    r2t_ahead[i] = load_r2t(ahd);
    ahd.next(nsub);
  }
#if IXO_START_BATCHED_ENTRIES
  ring_start<D, KC>(iss, nsub, total, [&](const Cursor& c) { issue(c, to_slot(first_entries[c.it])); });
#endif
  uint4 kfrag[4][kNL];
  BlockState st0, st1;
  state_reset(st0);
  state_reset(st1);

  // The main loop, instantiated once a widening path: a tile's path is uniform (q_f16), so
  // the f16 loop carries none of the other widenings' code (IXO_FP8_F16_LOOP=0: one loop that
  // branches a sub-tile, session 15's form; the per-path loops measured per-row e4m3fn -4 / -5 %,
  // packed level, docs/performance.md "Session 16").
  auto main_loop = [&](auto f16_tag) __attribute__((always_inline)) {
    const bool f16_path = decltype(f16_tag)::value || (!IXO_FP8_F16_LOOP && q_f16);
    for (; cur.it < total; cur.next(nsub)) {
      ring_step<D, KC>(ring, cur, iss, nsub, total, kfrag, lane,
                       [&](const Cursor& c) { issue(c, to_slot(r2t_ahead[0])); });
#pragma unroll
      for (int i = 0; i + 1 < kSlotAhead; ++i) r2t_ahead[i] = r2t_ahead[i + 1];
      r2t_ahead[kSlotAhead - 1] = load_r2t(ahd);
      ahd.next(nsub);

      int off0, q;
      const std::int64_t t0 = tile_start(cur, &off0, &q);
      std::int64_t claimed_block = 0;
      if constexpr (kClaims) claimed_block = whole_block(cur);  // warp-uniform: before the lanes diverge
      float v0[8], v1[8];
      subtile_logits<D, KC>(kfrag, qa,
                            SubtileMask{t0, off0, p.block_size, p.mult, m0.write ? m0.L_mask : kNoMaskLength,
                                        m1.write ? m1.L_mask : kNoMaskLength, lut, use_lut, p.mutant, f16_path},
                            tig, v0, v1);
      state_add(st0, v0, lse, p.mutant);
      state_add(st1, v1, lse, p.mutant);

      if (q >= 0 || off0 + 32 >= p.block_size) {  // block (or remainder piece) done: reduce over the 4 lanes of a row
        merge_row_lanes(st0, st1, tig, lse, p.mutant);
        if (tig == 0) {
          if (q >= 0) {
            part[q / nsub][q % nsub][grp] = st0.m;
            part[q / nsub][q % nsub][grp + 8] = st1.m;
          } else {
            const std::int64_t b = kClaims ? claimed_block : whole_block(cur);  // q < 0
            write_block(m0, b, state_score(st0, lse, p.mutant), p);
            write_block(m1, b, state_score(st1, lse, p.mutant), p);
          }
        }
        state_reset(st0);
        state_reset(st1);
      }
    }
  };
  run_per_widening_path<KC>(q_f16, main_loop);
  cp_async_wait<0>();
  if constexpr (kClaims) {  // count the warp done; the last one leaves the counters zeroed
    if (lane == 0) {
      __threadfence();  // this warp's last ticket before its count
      if (cm::claim_resets(work, atomicAdd(work.counter + 1, 1))) {
        __threadfence();  // every other warp's last ticket (before its count) before the reset
        atomicExch(work.counter, 0);
        atomicExch(work.counter + 1, 0);
      }
    }
  }
  if (split) {
    __syncthreads();
    for (int x = threadIdx.x; x < rem * cm::kTileRows; x += blockDim.x) {
      const int rb = x / cm::kTileRows, i = x % cm::kTileRows;
      const RowMeta m = tile_row_meta(p, first, pack, kvh, i, g);
      BlockState sb;
      state_reset(sb);
      for (int s = 0; s < nsub; ++s) sb.m = nan_max(sb.m, part[rb][s][i]);
      write_block(m, b_rem + rb, state_score(sb, false, p.mutant), p);
    }
  }
}

// The rows [first, first + rows) of a packed-plan program one after the other, each a tile
// of one row (a group that does not pack, or a trailing row): out of line, so the packed
// path's code stays as it was.
template <int D, int KC, class Work>
__device__ __noinline__ void score_mma_rows(ScoreParams p, std::int64_t first, int rows, Work work, int kvh,
                                            const std::uint16_t* lut) {
  for (int t = 0; t < rows; ++t) {  // CTA-uniform
    if (t > 0) __syncthreads();     // the previous tile's split partials have been read
    score_mma_tile<D, KC>(p, first + t, 1, group_plan(p, first + t, 1), work, kvh, lut);
  }
}

// Score program (common::program_chunk of CTA x, K head). Per-row plan (kPacked false,
// p.pack 1): row x % R, chunk x / R.
// Packed plan: the tiles of row-axis index x (common::program_tiles, written out): one
// packed tile when x is a whole group whose rows share one slot id (common::group_packs: P
// slot ids read here, on the device; the grid never depends on them), else one tile per
// row of x, scored one after the other by this CTA. The packed tile's plan (group_plan) is
// computed before the decision, so the slot id and length loads are in flight together.
// The balanced packed plan (IXO_PACKED_BALANCED, p.span_ctas > 0): CTA x scores the spans of
// one or two row-axis programs (common::cta_span), each as above, one after the other.
template <int D, int KC, bool kPacked>
__global__ void __launch_bounds__(kScoreThreads, KC == cm::kBf16 ? cm::kBf16CtasPerSm : cm::kFp8CtasPerSm)
    score_mma_kernel(ScoreParams p) {
#if IXO_START_PREFETCH
  {  // the program's rows, as below (the compiler shares the arithmetic)
    cm::ProgramChunk pc0 = cm::program_chunk_of_plan(blockIdx.x, p.R, p.chunks, !kPacked);
#if IXO_PACKED_BALANCED
    if (kPacked && p.span_ctas > 0)  // the balanced plan: the CTA's first span's program
      pc0.program = cm::cta_span(blockIdx.x, row_programs(p), p.span_ctas, 0).program;
#endif
#if IXO_PACKED_CLAIMS
    if (kPacked && p.claim_ctas > 0)  // the claim grid: the CTA's program
      pc0.program = cm::claim_part(blockIdx.x, row_programs(p), p.claim_ctas).program;
#endif
    const cm::ProgramRows pr0 =
        kPacked ? cm::program_rows_of(pc0.program, p.whole, p.pack) : cm::ProgramRows{pc0.program, 1};
    prefetch_tile_inputs<D>(p, pr0.first, pr0.rows, blockIdx.y);
  }
#endif
  __shared__ std::uint16_t lut[256];
  if constexpr (KC != cm::kBf16) {
    for (int i = threadIdx.x; i < 256; i += blockDim.x) lut[i] = fp8_bf16_bits(i, KC, p.mutant);
    __syncthreads();
  }
  // kPacked iff p.pack > 1 (launch_score_fmt): the plan's CTA order without a run-time branch.
  const cm::ProgramChunk pc = cm::program_chunk_of_plan(blockIdx.x, p.R, p.chunks, !kPacked);  // batch R when per-row
  const int c = pc.chunk;
  const int kvh = blockIdx.y;
  if constexpr (!kPacked) {  // the per-row plan (p.pack == 1): program x is row x
    const std::int64_t r = pc.program;
    score_mma_tile<D, KC>(p, r, p.pack, group_plan(p, r, p.pack), c, kvh, lut);
  } else {
#if IXO_PACKED_BALANCED || IXO_PACKED_CLAIMS
    // The chunk plan's one program, the balanced plan's spans of one or two programs, one
    // after the other (CTA-uniform), or the claim grid's program; one call site of each tile
    // function (but claims'), so one inlined copy.
    const std::int64_t batch = row_programs(p);
    const int parts = cm::cta_parts(blockIdx.x, batch, span_ctas_of(p));
    for (int i = 0; i < parts; ++i) {
      if (i > 0) __syncthreads();  // the previous span's split partials have been read
      const cm::CtaPart part = cm::cta_part(blockIdx.x, batch, p.chunks, span_ctas_of(p), i, claim_ctas_of(p));
      const cm::ProgramRows pr = cm::program_rows_of(part.program, p.whole, p.pack);
      const cm::GroupPlan g = group_plan(p, pr.first, pr.rows);
      if (cm::group_packs(p.slot, pr.first, pr.rows, p.pack)) {
#if IXO_PACKED_CLAIMS
        if (p.counters != nullptr) {  // the program's CTAs take its blocks by work claims
          const cm::ClaimWork w{part.work.chunk, part.work.chunks,
                                p.counters + cm::claim_counter_offset(part.program, kvh, batch)};
          score_mma_tile<D, KC>(p, pr.first, p.pack, g, w, kvh, lut);
          continue;
        }
#endif
        score_mma_tile<D, KC>(p, pr.first, p.pack, g, part.work, kvh, lut);
      } else {
        score_mma_rows<D, KC>(p, pr.first, pr.rows, part.work, kvh, lut);
      }
    }
#else
    const cm::ProgramRows pr = cm::program_rows_of(pc.program, p.whole, p.pack);
    const cm::GroupPlan g = group_plan(p, pr.first, pr.rows);
    if (cm::group_packs(p.slot, pr.first, pr.rows, p.pack)) {  // CTA-uniform; pr.rows == p.pack
      score_mma_tile<D, KC>(p, pr.first, p.pack, g, c, kvh, lut);
      return;
    }
    score_mma_rows<D, KC>(p, pr.first, pr.rows, c, kvh, lut);
#endif
  }
}
#endif  // IXO_GPU_CUDA

// ---------------------------------------------------------------- portable scalar path
// HIP (and any target without the tensor-core path): scalar_tile.cuh's block loop.
// One tile (rows [first, first + pack), K head kvh, KV chunk c), as score_mma_tile.
template <int KC, class Work>
__device__ __forceinline__ void score_scalar_tile(const ScoreParams& p, std::int64_t first, int pack, const Work& work,
                                                  int kvh) {
  __shared__ ScalarSmem sm;
  const int tid = threadIdx.x;
  const cm::GroupPlan g = group_plan(p, first, pack);
  if (g.Lg <= 0 || g.sid < 0) return;  // block-uniform
  std::int64_t b0, b1;
  work_blocks(p, work, cm::num_blocks(g.Lg, p.block_size), &b0, &b1);
  if (b0 >= b1) return;
  const int used = pack * p.gqa;
  const int D = static_cast<int>(p.D);
  for (int i = tid; i < cm::kTileRows * D; i += blockDim.x) {
    const int row = i / D, d = i % D;
    const cm::TileRow tr = cm::tile_row(row, pack, p.gqa);
    sm.qs[row][d] =
        tr.used ? cm::bf16_to_float(p.q[((first + tr.draft) * p.Hq +
                                         cm::tile_query_head(kvh, p.gqa, tr, static_cast<int>(p.Hk), p.mutant)) *
                                            D +
                                        d])
                : 0.0f;
  }
  RowMeta mine{0, 0, false, nullptr, 0, 0};
  if (tid < used) mine = tile_row_meta(p, first, pack, kvh, tid, g);
  __syncthreads();
  const ScalarKeys kk{p.k,
                      p.r2t + g.sid * p.width,
                      p.S,
                      p.Hk,
                      p.D,
                      g.Lg,
                      cm::tile_k_head(kvh, pack, p.mutant),
                      p.block_size,
                      p.mult,
                      p.mutant};
  for (std::int64_t b = b0; b < b1; ++b) {
    const float score = scalar_block_score<KC>(kk, b, used, mine.L_mask, p.score_lse != 0, sm);
    if (tid < used) write_block(mine, b, score, p);
  }
}

// Score program of the portable path: the tiles of row-axis index x, as score_mma_kernel.
template <int KC>
__global__ void __launch_bounds__(kScoreThreads) score_scalar_kernel(ScoreParams p) {
  const cm::ProgramChunk pc = cm::program_chunk(blockIdx.x, p.R, p.chunks, p.pack);  // batch R when pack 1
  const int c = pc.chunk;
  const int kvh = blockIdx.y;
#if IXO_PACKED_BALANCED || IXO_PACKED_CLAIMS
  // As score_mma_kernel: the chunk plan's program, the balanced plan's one or two spans, or the
  // claim grid's program (static chunks: the scalar path takes no claims). The chunk plan keeps
  // program_chunk's CTA order (per-row: chunk-major).
  const std::int64_t batch = row_programs(p);
  const int parts = cm::cta_parts(blockIdx.x, batch, span_ctas_of(p));
  for (int i = 0; i < parts; ++i) {
    const cm::CtaPart part = span_ctas_of(p) > 0 || claim_ctas_of(p) > 0
                                 ? cm::cta_part(blockIdx.x, batch, p.chunks, span_ctas_of(p), i, claim_ctas_of(p))
                                 : cm::CtaPart{pc.program, cm::TileWork{c, p.chunks, cm::ProgramSpan{}, 0}};
    const cm::ProgramTiles pt = cm::program_tiles(p.slot, part.program, p.R, p.pack);
    for (int t = 0; t < pt.count; ++t) {
      if (i > 0 || t > 0) __syncthreads();  // the previous tile's shared memory is no longer read
      score_scalar_tile<KC>(p, pt.first + static_cast<std::int64_t>(t) * pt.pack, pt.pack, part.work, kvh);
    }
  }
#else
  const cm::ProgramTiles pt = cm::program_tiles(p.slot, pc.program, p.R, p.pack);
  for (int t = 0; t < pt.count; ++t) {  // block-uniform
    if (t > 0) __syncthreads();         // the previous tile's shared memory is no longer read
    score_scalar_tile<KC>(p, pt.first + static_cast<std::int64_t>(t) * pt.pack, pt.pack, c, kvh);
  }
#endif
}

}  // namespace ixo::gpu::detail
