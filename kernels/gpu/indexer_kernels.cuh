// Single-source CUDA/HIP score kernels of the indexer (per-row and packed are the same
// kernel; per-row is a pack of 1; the top-k and fill kernels: topk_kernel.cuh). Included by
// indexer_cuda.cu (nvcc) and indexer_hip.hip (hipcc). Every shared formula comes from
// indexer_common.hpp / plans.hpp.
// Design notes: docs/gpu-kernels.md.
#pragma once
#include <cstdint>
#include <type_traits>

#include "gpu/gpu_port.hpp"
#include "gpu/indexer_launch.hpp"
#include "gpu/mma_tile.cuh"
#include "gpu/raw_loop.cuh"
#include "gpu/scalar_tile.cuh"
#include "gpu/score_state.cuh"
#include "gpu/topk_kernel.cuh"
#include "index_config.hpp"
#include "indexer_common.hpp"
#include "plans.hpp"

namespace ixo::gpu::detail {
namespace cm = ixo::common;

// The step's common::IndexConfig (the launch's IndexArgs, copied whole) and the plan.
struct ScoreParams : cm::IndexConfig {
  const std::uint16_t* q;
  const std::uint8_t* k;
  const std::int32_t* r2t;
  const std::int64_t* slot;
  const std::int64_t* lens;
  float* scores;
  std::int64_t whole;   // R / pack: whole groups (common::program_rows_of)
  cm::NativePlan plan;  // the launch's plan (common::native_plan): pack, gqa, batch, chunks, the round plan
  float mult;
  int mutant;
};

// ---------------------------------------------------------------- shared per-group logic
// The plans (row facts, tile plan, tile row plan, top-k plan) are common/plans.hpp's.
__device__ __forceinline__ cm::RowInputs row_inputs(const ScoreParams& p) { return cm::row_inputs(p, p.slot, p.lens); }
__device__ __forceinline__ cm::GroupPlan group_plan(const ScoreParams& p, std::int64_t first, int pack) {
  return cm::group_plan(row_inputs(p), first, pack, p.mutant);
}

// What the scorer keeps of a tile row's plan (common::row_plan): its lengths and its score
// row base.
struct RowMeta {
  std::int64_t L;
  std::int64_t nb;
  bool write;             // active, nb > topk: this row's columns [0, nb) are written
  float* out;             // score row base
  std::int64_t nb_force;  // the nb its forcing uses (== nb)
  std::int64_t L_mask;    // the length its lanes are masked with (== L)
};

// Tile row i of the tile (rows [first, first + pack), K head kvh) with plan g.
__device__ __forceinline__ RowMeta tile_row_meta(const ScoreParams& p, std::int64_t first, int pack, int kvh, int i,
                                                 const cm::GroupPlan& g) {
  const cm::RowPlan r =
      cm::row_plan(row_inputs(p), cm::TileShape{first, pack, p.plan.gqa, static_cast<int>(p.Hk), kvh}, i, g, p.mutant);
  if (!r.used) return RowMeta{0, 0, false, nullptr, 0, 0};
  return RowMeta{r.f.L,      r.f.nb,  r.f.writes, p.scores + cm::score_index(r.store_head, r.store_row, 0, p.R, p.NB),
                 r.nb_force, r.L_mask};
}

__device__ __forceinline__ void write_block(const RowMeta& m, std::int64_t b, float score, const ScoreParams& p) {
  if (cm::writes_block(m.write, m.nb, b, p.NB)) {
    const float f = cm::forced_score(score, b, m.nb_force, p.init_blocks, p.local_blocks, p.mutant);
    m.out[b] = f;
    if (cm::stray_column(m.nb, b, p.NB, p.mutant)) m.out[b + 1] = f;
  }
}

#if defined(IXO_GPU_CUDA)
// ---------------------------------------------------------------- tensor-core path (CUDA)
constexpr int kSplitMaxRem = cm::kScoreWarps - 1;  // remainder blocks of a CTA (n % 4)
constexpr int kSplitMaxSub = cm::kSplitMaxSub;     // sub-tiles per block (block size <= 256) for the split
constexpr int kSlotAhead = cm::kSlotAhead;         // req_to_token entries loaded this many sub-tiles ahead

// One tile of a score program: rows [first, first + pack) (a packed group, or one row) of
// K head kvh, the blocks of KV chunk pc.chunk of row-axis program pc.program (the CTA's, from the
// kernel's entry) of the tile's plan g (common::group_plan: length Lg,
// table row sid). lut: the fp8 decode table. kStreamK: K's copies with the L2 evict-first policy
// (the packed plan's tiles, each K row read once a step: mma_tile.cuh cp_async16).
template <int D, int KC, bool kStreamK = false>
__device__ __forceinline__ void score_mma_tile(const ScoreParams& p, std::int64_t first, int pack,
                                               const cm::GroupPlan& g, const cm::ProgramChunk& pc, int kvh,
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

  const std::int64_t Lg = g.Lg, sid = g.sid;
  if (Lg <= 0 || sid < 0) return;
  std::int64_t b0, b1;
  if constexpr (IXO_FP8_ROUND_PLAN && kFp8) {  // row 57: the round plan's chunks
    cm::plan_chunk_blocks(p.plan, cm::num_blocks(Lg, p.block_size), pc.program, kvh, pc.chunk, &b0, &b1, p.mutant);
  } else {
    cm::chunk_blocks(cm::num_blocks(Lg, p.block_size), p.plan.chunks, pc.chunk, &b0, &b1, p.mutant);
  }
  if (b0 + warp >= b1) return;  // warp-uniform; only the split (b1 - b0 >= 4: no warp left) has a barrier below

  const RowMeta m0 = tile_row_meta(p, first, pack, kvh, grp, g);
  const RowMeta m1 = tile_row_meta(p, first, pack, kvh, grp + 8, g);

  // Q fragments with the permuted k order.
  std::uint32_t qa[kSteps][4];
  {
    const cm::TileRow t0 = cm::tile_row(grp, pack, p.plan.gqa), t1 = cm::tile_row(grp + 8, pack, p.plan.gqa);
    const std::uint32_t* q0 =
        t0.used ? reinterpret_cast<const std::uint32_t*>(
                      p.q + ((first + t0.draft) * p.Hq +
                             cm::tile_query_head(kvh, p.plan.gqa, t0, static_cast<int>(p.Hk), p.mutant)) *
                                D)
                : nullptr;
    const std::uint32_t* q1 =
        t1.used ? reinterpret_cast<const std::uint32_t*>(
                      p.q + ((first + t1.draft) * p.Hq +
                             cm::tile_query_head(kvh, p.plan.gqa, t1, static_cast<int>(p.Hk), p.mutant)) *
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
  const bool split = !lse && nblk >= 4 && (nblk & 3) != 0 && nsub <= kSplitMaxSub;
  const std::int64_t nfull_w = split ? nblk / 4 : (nblk - warp + 3) / 4;  // whole blocks of this warp
  const int rem = split ? static_cast<int>(nblk & 3) : 0;
  const std::int64_t full_tiles = nfull_w * nsub;
  const std::int64_t total = full_tiles + (split ? (rem * nsub - warp + 3) / 4 : 0);
  const std::int64_t b_rem = b0 + (nblk & ~std::int64_t{3});  // first block of the remainder
  const std::int32_t* r2t_row = p.r2t + sid * p.width;
  const std::int64_t row_bytes = p.Hk * D * kEsz;
  const std::uint8_t* kbase =
      p.k + static_cast<std::int64_t>(cm::tile_k_head(kvh, pack, p.mutant)) * D * kEsz + tig * 16;
  // The decode table (built with p.mutant) instead of the hardware / integer widening when
  // it holds a mutant's decode.
  const bool use_lut = cm::fp8_decode_mutated(p.mutant);

  // First token of the sub-tile at cursor c, its offset in its block, and its remainder
  // index (-1: whole block). Whole blocks: block b0 + warp + 4 * unit, from the cursor
  // without a division; the remainder pieces (at most 6 sub-tiles a warp) divide.
  // The lambdas take any cursor (common::SubtileCursor): its Index (std::int64_t, or std::int32_t in row 60's
  // narrow loop) is the type of the blocks and tokens they compute.
  using Cursor = RingCursor<D, KC>;
  auto whole_block = [&](const auto& c) {
    using I = typename std::decay_t<decltype(c)>::Index;
    return static_cast<I>(b0) + warp + 4 * c.unit;
  };
  auto tile_start = [&](const auto& c, int* off0, int* q) {
    using I = typename std::decay_t<decltype(c)>::Index;
    I b;
    if (c.it < static_cast<I>(full_tiles)) {
      b = whole_block(c);
      *off0 = c.sub * 32;
      *q = -1;
    } else {
      const int qq = warp + 4 * static_cast<int>(c.it - static_cast<I>(full_tiles));
      b = static_cast<I>(b_rem) + qq / nsub;
      *off0 = (qq % nsub) * 32;
      *q = qq;
    }
    return b * static_cast<I>(p.block_size) + *off0;
  };
  // This lane's token of the sub-tile at c (-1: not loaded), its req_to_token entry (with
  // whether it was loaded, so the token is computed once a sub-tile), and its slot (-1: not
  // loaded). The entries are loaded kSlotAhead sub-tiles before their copies are issued, so
  // the dependent req_to_token -> K latency is hidden behind several sub-tiles.
  auto lane_token = [&](const auto& c) {
    using I = typename std::decay_t<decltype(c)>::Index;
    if (c.it >= static_cast<I>(total)) return I{-1};
    int off0, q;
    const I t = tile_start(c, &off0, &q) + lane;
    return off0 + lane >= p.block_size || t >= static_cast<I>(Lg) ? I{-1} : t;
  };
  struct Entry {
    std::int32_t raw;
    bool loaded;
  };
  auto load_r2t = [&](const auto& c) -> Entry {
    const auto t = lane_token(c);
    return t >= 0 ? Entry{__ldg(r2t_row + t), true} : Entry{0, false};
  };
  auto to_slot = [&](const Entry& e) -> std::int64_t {
    return e.loaded
               ? cm::k_load_row(cm::wrap_slot(static_cast<std::int64_t>(e.raw), p.S, p.mutant), row_bytes, p.mutant)
               : -1;
  };
  uint4* ring = kring + static_cast<std::size_t>(warp) * kNS * kRingStage<D, KC>;
  auto issue = [&](const auto& c, std::int64_t my_slot) {
    ring_issue<D, KC, kStreamK>(ring, c.stage, my_slot, kbase, row_bytes, lane, grp);
  };
  // Row 60's narrow loop (no mutant: it is the raw loop's): the 32-bit K row of an entry, and its copies.
  auto to_row = [&](const Entry& e) -> std::uint32_t {
    return e.loaded ? cm::narrow_k_row(cm::wrap_slot(static_cast<std::int64_t>(e.raw), p.S)) : cm::kNoKRow;
  };
  // Row 63: this lane's piece 0 of the warp's ring stage 0, by shared-window address (the narrow loop's copies).
  const std::uint32_t lane_sa = static_cast<std::uint32_t>(__cvta_generic_to_shared(ring + lane));
  auto issue_narrow = [&](const auto& c, std::uint32_t my_row) {
    ring_issue_narrow<D, KC, kStreamK>(lane_sa, c.stage, my_row, kbase, static_cast<std::uint32_t>(row_bytes), grp);
  };
  // Row 61 (kNarrowEntries): the narrow loop's entries ahead, one int32 each (common::kNoEntry: not loaded).
  auto entry_raw = [](const Entry& e) { return e.loaded ? e.raw : cm::kNoEntry; };
  auto load_r2t_narrow = [&](const auto& c) -> std::int32_t { return entry_raw(load_r2t(c)); };

  // Three cursors: the sub-tile scored (cur), the one issued (iss, kNS - 1 ahead) and the
  // one whose req_to_token entries are loaded (ahd, kSlotAhead further).
  Cursor cur64, iss64, ahd64;
  cur64.seek(0, nsub);
  iss64 = cur64;
  ring_start<D, KC>(iss64, nsub, total, [&](const Cursor& c) { issue(c, to_slot(load_r2t(c))); });
  ahd64 = iss64;
  Entry r2t_ahead[kSlotAhead];  // entries of sub-tiles iss.it + i
#pragma unroll
  for (int i = 0; i < kSlotAhead; ++i) {
    r2t_ahead[i] = load_r2t(ahd64);
    ahd64.next(nsub);
  }
  const bool q_f16 = tile_takes_f16_path<D, KC>(qa, use_lut);  // fp8 K: the f16 path, after the start's loads
  uint4 kfrag[4][kNL];
  BlockState st0, st1;
  state_reset(st0);
  state_reset(st1);

  // The main loop, instantiated once a widening path: a tile's path is uniform (q_f16), so
  // the f16 loop carries none of the other widenings' code (IXO_FP8_F16_LOOP=0: one loop that
  // branches a sub-tile, session 15's form; the per-path loops measured per-row e4m3fn -4 / -5 %,
  // packed level, docs/performance.md "Session 16").
  // raw_tag (row 59, kDeferLogitMult): the block max of the raw MMA sums, times p.mult once a block row; the raw
  // loop runs only with no lse and no mutant (logit_mult_deferrable), so it compiles both out. (Macros, not locals:
  // with locals the default build's SASS changed; with these its .text is byte-identical to the loop before row 59.)
  // kNarrow (row 60, kNarrowLoop): the raw loop walks 32-bit copies of the cursors (the tile fits:
  // common::narrow_index_fits) and issues its copies with ring_issue_narrow.
  // (The cursors are captured and picked in constexpr branches: passed as parameters, or picked by a function that
  // names both, the 64-bit loop's SASS changed.)
  using NarrowCursor = cm::SubtileCursor<kNS, std::int32_t>;
  NarrowCursor ncur, niss, nahd;  // the narrow loop's cursors (32-bit copies of cur, iss, ahd where it starts)
  std::int32_t nent[kSlotAhead];  // row 61: the narrow loop's entries ahead (r2t_ahead's where it starts)
  auto main_loop = [&](auto f16_tag, auto raw_tag) __attribute__((always_inline)) {
    constexpr bool kRaw = decltype(raw_tag)::value;
    constexpr bool kNarrow = kRaw && kNarrowLoop;
#define IXO_LOOP_LSE (!kRaw && lse)
#define IXO_LOOP_MUTANT (kRaw ? 0 : p.mutant)
#define IXO_LOOP_CURSOR(narrow, wide) \
  *[&] {                              \
    if constexpr (kNarrow)            \
      return &narrow;                 \
    else                              \
      return &wide;                   \
  }()
    const bool f16_path = decltype(f16_tag)::value || (!IXO_FP8_F16_LOOP && q_f16);
    auto& cur = IXO_LOOP_CURSOR(ncur, cur64);
    auto& iss = IXO_LOOP_CURSOR(niss, iss64);
    auto& ahd = IXO_LOOP_CURSOR(nahd, ahd64);
    using I = typename std::decay_t<decltype(cur)>::Index;
    const I n = static_cast<I>(total);
    for (; cur.it < n; cur.next(nsub)) {
      auto issue_entry = [&](const auto& c) {
        if constexpr (kNarrow && kNarrowEntries) {
          issue_narrow(c, cm::narrow_entry_row(nent[0], static_cast<std::int32_t>(p.S)));
        } else if constexpr (kNarrow) {
          issue_narrow(c, to_row(r2t_ahead[0]));
        } else {
          issue(c, to_slot(r2t_ahead[0]));
        }
      };
      if constexpr (kNarrow) {  // row 63: its ring by shared-window address
        ring_step_sa<D, KC>(lane_sa, cur, iss, nsub, n, kfrag, issue_entry);
      } else {
        ring_step<D, KC>(ring, cur, iss, nsub, n, kfrag, lane, issue_entry);
      }
      if constexpr (kNarrow && kNarrowEntries) {
#pragma unroll
        for (int i = 0; i + 1 < kSlotAhead; ++i) nent[i] = nent[i + 1];
        nent[kSlotAhead - 1] = load_r2t_narrow(ahd);
      } else {
#pragma unroll
        for (int i = 0; i + 1 < kSlotAhead; ++i) r2t_ahead[i] = r2t_ahead[i + 1];
        r2t_ahead[kSlotAhead - 1] = load_r2t(ahd);
      }
      ahd.next(nsub);

      int off0, q;
      const I t0 = tile_start(cur, &off0, &q);
      float v0[8], v1[8];
      subtile_logits<D, KC, kRaw>(
          kfrag, qa,
          SubtileMaskOf<I>{t0, off0, p.block_size, p.mult, mask_length<I>(m0.write, m0.L_mask),
                           mask_length<I>(m1.write, m1.L_mask), lut, use_lut, IXO_LOOP_MUTANT, f16_path},
          tig, v0, v1);
      state_add(st0, v0, IXO_LOOP_LSE, IXO_LOOP_MUTANT);
      state_add(st1, v1, IXO_LOOP_LSE, IXO_LOOP_MUTANT);

      if (q >= 0 || off0 + 32 >= p.block_size) {  // block (or remainder piece) done: reduce over the 4 lanes of a row
        merge_row_lanes(st0, st1, tig, IXO_LOOP_LSE, IXO_LOOP_MUTANT);
        if (tig == 0) {
          if constexpr (kRaw) {  // max mode: the block (or piece) max times the multiplier
            st0.m *= p.mult;
            st1.m *= p.mult;
          }
          if (q >= 0) {
            part[q / nsub][q % nsub][grp] = st0.m;
            part[q / nsub][q % nsub][grp + 8] = st1.m;
          } else {
            const std::int64_t b = whole_block(cur);  // q < 0
            write_block(m0, b, state_score(st0, IXO_LOOP_LSE, IXO_LOOP_MUTANT), p);
            write_block(m1, b, state_score(st1, IXO_LOOP_LSE, IXO_LOOP_MUTANT), p);
          }
        }
        state_reset(st0);
        state_reset(st1);
      }
    }
  };
#undef IXO_LOOP_LSE
#undef IXO_LOOP_MUTANT
#undef IXO_LOOP_CURSOR
  // CTA-uniform. With kNarrowLoop the raw loop is the narrow one: a tile whose indices do not fit 32 bits takes the
  // 64-bit loop (correct for every tile).
  const bool raw = logit_mult_deferrable(p.mult, lse, p.mutant) &&
                   (!kNarrowLoop || cm::narrow_index_fits(p.S, row_bytes, Lg, p.block_size));
  run_per_widening_path<KC>(
      q_f16, [&](auto f16_tag) __attribute__((always_inline)) {
        if constexpr (decltype(f16_tag)::value && kDeferLogitMult) {
          if (raw) {
            if constexpr (kNarrowLoop) {  // the tile fits (raw): 32-bit copies of the cursors
              auto narrow = [](const Cursor& c) {
                return NarrowCursor{static_cast<std::int32_t>(c.it), static_cast<std::int32_t>(c.unit), c.sub, c.stage};
              };
              ncur = narrow(cur64);
              niss = narrow(iss64);
              nahd = narrow(ahd64);
              if constexpr (kNarrowEntries) {
#pragma unroll
                for (int i = 0; i < kSlotAhead; ++i) nent[i] = entry_raw(r2t_ahead[i]);
              }
            }
            main_loop(f16_tag, std::true_type{});
            return;
          }
        }
        main_loop(f16_tag, std::false_type{});
      });
  cp_async_wait<0>();
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
template <int D, int KC, bool kStreamK = kPackedStreamK>
__device__ __noinline__ void score_mma_rows(ScoreParams p, std::int64_t first, int rows, cm::ProgramChunk pc, int kvh,
                                            const std::uint16_t* lut) {
  for (int t = 0; t < rows; ++t) {  // CTA-uniform
    if (t > 0) __syncthreads();     // the previous tile's split partials have been read
    score_mma_tile<D, KC, kStreamK>(p, first + t, 1, group_plan(p, first + t, 1), pc, kvh, lut);
  }
}

// Score program (common::program_chunk of CTA x, K head). Per-row plan (kPacked false,
// p.plan.pack 1): row x % R, chunk x / R.
// Packed plan: the tiles of row-axis index x (common::program_tiles, written out): one
// packed tile when x is a whole group whose rows share one slot id (common::group_packs: P
// slot ids read here, on the device; the grid never depends on them), else one tile per
// row of x, scored one after the other by this CTA. The packed tile's plan (group_plan) is
// computed before the decision, so the slot id and length loads are in flight together.
// kStreamK: the packed plan's K copies streamed (kPackedStreamK; row 54, fp8-long-plain-copies.patch, launched false).
template <int D, int KC, bool kPacked, bool kStreamK = kPackedStreamK>
__global__ void __launch_bounds__(kScoreThreads, KC == cm::kBf16 ? cm::kBf16CtasPerSm : cm::kFp8CtasPerSm)
    score_mma_kernel(ScoreParams p) {
  __shared__ std::uint16_t lut[256];
  if (fp8_table_read<KC>(p.mutant)) {  // CTA-uniform
    for (int i = threadIdx.x; i < 256; i += blockDim.x) lut[i] = fp8_bf16_bits(i, KC, p.mutant);
    __syncthreads();
  }
  // kPacked iff p.plan.pack > 1 (launch_score_fmt): the plan's CTA order without a run-time branch (but on
  // row 57's round plan, chunk-major when it is on: common::plan_program_chunk).
  constexpr bool kRoundPlan = IXO_FP8_ROUND_PLAN && kPacked && KC != cm::kBf16;
  const cm::ProgramChunk pc = kRoundPlan ? cm::plan_program_chunk(p.plan, blockIdx.x)
                                         : cm::program_chunk_of_plan(blockIdx.x, p.R, p.plan.chunks, !kPacked);
  const int kvh = blockIdx.y;
  if constexpr (!kPacked) {  // the per-row plan (p.plan.pack == 1): program x is row x
    const std::int64_t r = pc.program;
    score_mma_tile<D, KC>(p, r, p.plan.pack, group_plan(p, r, p.plan.pack), pc, kvh, lut);
  } else {
    const cm::ProgramRows pr = cm::program_rows_of(pc.program, p.whole, p.plan.pack);
    const cm::GroupPlan g = group_plan(p, pr.first, pr.rows);
    if (cm::group_packs(p.slot, pr.first, pr.rows, p.plan.pack)) {  // CTA-uniform; pr.rows == p.plan.pack
      score_mma_tile<D, KC, kStreamK>(p, pr.first, p.plan.pack, g, pc, kvh, lut);
      return;
    }
    score_mma_rows<D, KC, kStreamK>(p, pr.first, pr.rows, pc, kvh, lut);
  }
}
#endif  // IXO_GPU_CUDA

// ---------------------------------------------------------------- portable scalar path
// HIP (and any target without the tensor-core path): scalar_tile.cuh's block loop.
// One tile (rows [first, first + pack), K head kvh, KV chunk pc.chunk of program pc.program), as score_mma_tile.
template <int KC>
__device__ __forceinline__ void score_scalar_tile(const ScoreParams& p, std::int64_t first, int pack,
                                                  const cm::ProgramChunk& pc, int kvh) {
  __shared__ ScalarSmem sm;
  const int tid = threadIdx.x;
  const cm::GroupPlan g = group_plan(p, first, pack);
  if (g.Lg <= 0 || g.sid < 0) return;  // block-uniform
  std::int64_t b0, b1;
  cm::plan_chunk_blocks(p.plan, cm::num_blocks(g.Lg, p.block_size), pc.program, kvh, pc.chunk, &b0, &b1, p.mutant);
  if (b0 >= b1) return;
  const int used = pack * p.plan.gqa;
  const int D = static_cast<int>(p.D);
  for (int i = tid; i < cm::kTileRows * D; i += blockDim.x) {
    const int row = i / D, d = i % D;
    const cm::TileRow tr = cm::tile_row(row, pack, p.plan.gqa);
    sm.qs[row][d] =
        tr.used ? cm::bf16_to_float(p.q[((first + tr.draft) * p.Hq +
                                         cm::tile_query_head(kvh, p.plan.gqa, tr, static_cast<int>(p.Hk), p.mutant)) *
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
  const cm::ProgramChunk pc = cm::plan_program_chunk(p.plan, blockIdx.x);  // batch R when pack 1
  const int kvh = blockIdx.y;
  const cm::ProgramTiles pt = cm::program_tiles(p.slot, pc.program, p.R, p.plan.pack);
  for (int t = 0; t < pt.count; ++t) {  // block-uniform
    if (t > 0) __syncthreads();         // the previous tile's shared memory is no longer read
    score_scalar_tile<KC>(p, pt.first + static_cast<std::int64_t>(t) * pt.pack, pt.pack, pc, kvh);
  }
}

// ---------------------------------------------------------------- launch parameters (host code)
// What the launcher (indexer_launch.inl) and the host simulation (kernels/sim_host) pass the kernels.
// Shapes the score kernels take: head dims 1..256, Hq a multiple of Hk with at most a tile of q
// heads a K head, a known K format.
inline bool score_args_valid(const IndexArgs& a) {
  return head_dim_in_range(a.D) && a.Hk > 0 && a.Hq % a.Hk == 0 && a.Hq / a.Hk <= cm::kTileRows && a.k_code >= 0 &&
         a.k_code <= 3;
}
// The score kernels' parameters for the launch plan `plan` (common::native_plan of a).
inline ScoreParams score_params(const IndexArgs& a, const cm::NativePlan& plan) {
  ScoreParams p{};
  static_cast<cm::IndexConfig&>(p) = a;
  p.q = a.q;
  p.k = static_cast<const std::uint8_t*>(a.k_cache);
  p.r2t = a.req_to_token;
  p.slot = a.slot_ids;
  p.lens = a.seq_lens;
  p.scores = a.scores;
  p.plan = plan;
  p.whole = a.R / plan.pack;
  p.mult = cm::logit_multiplier(a.sm_q_scale, a.k_scale, a.mutant);
  p.mutant = a.mutant;
  return p;
}
// The top-k kernel's parameters (a grid of Hq * R CTAs of kTopkThreads).
inline TopkParams topk_params(const IndexArgs& a) {
  TopkParams p{};
  static_cast<cm::IndexConfig&>(p) = a;
  p.scores = a.scores;
  p.slot = a.slot_ids;
  p.lens = a.seq_lens;
  p.out = a.topk_idx;
  p.mutant = a.mutant;
  return p;
}

}  // namespace ixo::gpu::detail
