// Single-source CUDA/HIP kernels of the context-parallel (CP) indexer: shard score (per-row
// and packed are one kernel; per-row is a pack of 1), shard candidates and the merge.
// It calls the score kernels' shared device pieces (score_state.cuh, mma_tile.cuh,
// scalar_tile.cuh, radix_select.cuh), so a block's fp32 score is computed exactly as the
// native score kernel does: cuda-cp selects the same ids as cuda-rows bit for bit.
// Formulas: cp_common.hpp, plans.hpp.
// Design notes: docs/gpu-kernels.md (CP section).
#pragma once
#include <cstdint>

// The portability header first: it brings the HIP runtime (__forceinline__, __device__)
// that the common headers' IXO_HD needs.
#include "gpu/gpu_port.hpp"
#include "cp_common.hpp"
#include "plans.hpp"
#include "gpu/ballot_select.cuh"
#include "gpu/cp_launch.hpp"
#include "gpu/mma_tile.cuh"
#include "gpu/radix_select.cuh"
#include "gpu/scalar_tile.cuh"
#include "gpu/score_state.cuh"
#include "indexer_common.hpp"

namespace ixo::gpu::cpk {
namespace cm = ixo::common;
namespace cc = ixo::common::cp;
using namespace ixo::gpu::detail;  // the shared device pieces

// The CP kernels implement the CP mutants only (catalogue scope "cp"): the shared score
// pieces (score_state.cuh, mma_tile.cuh, scalar_tile.cuh) get this constant as their mutant
// selector so their native switches fold away at compile time, as before they were shared
// (passing p.mutant cost the CP MMA kernel 8-16 % on the H200, 2026-12-01).
constexpr int kNativeMutantsOff = 0;
// The same holds for the shared plans (plans.hpp), which hold native switches besides the CP
// ones: row_plan has only native switches (it gets kNativeMutantsOff); group_plan also holds
// the CP mutants 604 / 606 and gets each of them as a constant (cp_group_plan), so no
// native switch survives. A runtime selector there kept every native switch (compares,
// 64-bit modulo paths) in the per-CTA setup, which is most of the work with one shard cell
// per CTA (packed score +12 %, H200).
__device__ __forceinline__ cm::GroupPlan cp_group_plan(const cm::RowInputs& in, std::int64_t first, int pack,
                                                       int mutant) {
  if (IXO_MUTANT(mutant, ixo::mutants::cp_group_shortest))
    return cm::group_plan(in, first, pack, ixo::mutants::cp_group_shortest);
  if (IXO_MUTANT(mutant, ixo::mutants::cp_k_by_group_index))
    return cm::group_plan(in, first, pack, ixo::mutants::cp_k_by_group_index);
  return cm::group_plan(in, first, pack, kNativeMutantsOff);
}

constexpr int kCandThreads =
    256;  // >= 256: radix_select finds each digit with a block scan, not one thread (29 us -> see docs/performance.md)
constexpr int kMergeThreads = 256;
constexpr int kMergeMax = cc::kMaxWorld * cc::kMaxCandidates;

// The step's common::IndexConfig (the launch's CpArgs, copied whole) and the CP plan.
struct CpScoreParams : cm::IndexConfig {
  const std::uint16_t* qg;  // [WORLD, R, D]
  const std::uint8_t* k;
  const std::int32_t* r2t;
  const std::int64_t* slot;
  const std::int64_t* lens;
  std::uint32_t* cells;  // [ranks, WORLD, R, LOCAL]
  std::int64_t LOCAL;
  std::int64_t whole;  // R / pack: whole groups (common::program_rows_of)
  int world, rank_base, pack, chunks;
  float mult;
  int mutant;
};

struct CpCandParams {
  const std::uint32_t* cells;
  std::uint64_t* keys;  // [ranks, WORLD, R, topk]
  std::int64_t R, LOCAL;
  int world, rank_base, topk, mutant;
};

struct CpMergeParams {
  const std::uint64_t* gathered;  // [WORLD (src), WORLD (head), R, topk]
  std::int32_t* out;              // [heads, R, topk]
  std::int64_t R;
  int world, topk, head_base;
};

// Tile row facts kept in shared memory (plain data: no constructors in __shared__).
struct CpRowS {
  cm::RowFacts f;  // common::row_facts of the row
  std::int64_t row;
  int head, used;
};
// Tile row i of the tile of `pack` rows starting at row `first` (common::row_plan of the
// native tile with gqa = WORLD and one K head).
__device__ __forceinline__ CpRowS load_row(const CpScoreParams& p, std::int64_t first, int pack, int i,
                                           const cm::GroupPlan& gp) {
  const cm::RowPlan r = cm::row_plan(cm::row_inputs(p, p.slot, p.lens), cm::TileShape{first, pack, p.world, 1, 0}, i,
                                     gp, kNativeMutantsOff);
  return CpRowS{r.f, r.row, r.head, r.used ? 1 : 0};
}

// What every thread of a CTA knows about its current tile (rows [first, first + pack)):
// tile plan, rank, cell range.
struct CpCta {
  cm::GroupPlan gp;
  std::int64_t first, l0, l1;
  int pack, rank;
  std::uint32_t* rank_cells;
};
// The (row-axis program, chunk) of this CTA: common::program_chunk (per-row plan chunk-major,
// as the native grid: a request's draft rows read a chunk's K side by side, through L2).
__device__ __forceinline__ cm::ProgramChunk cta_program_chunk(const CpScoreParams& p) {
  return cm::program_chunk(blockIdx.x, p.R, p.chunks, p.pack);  // batch R when pack 1
}
// Tile rows [first, first + pack) in KV chunk `chunk` (cta_program_chunk's, computed once a CTA).
__device__ __forceinline__ CpCta cta_setup(const CpScoreParams& p, std::int64_t first, int pack, int chunk) {
  CpCta s;
  s.first = first;
  s.pack = pack;
  s.rank = p.rank_base + static_cast<int>(blockIdx.y);
  cm::chunk_blocks(p.LOCAL, p.chunks, chunk, &s.l0, &s.l1);  // shard cells of the chunk
  s.gp = cp_group_plan(cm::row_inputs(p, p.slot, p.lens), first, pack, p.mutant);
  s.rank_cells = p.cells + static_cast<std::int64_t>(blockIdx.y) * p.world * p.R * p.LOCAL;
  return s;
}

// Every cell of the CTA's range that the scoring pass does not write (invalid: 0; valid
// cells of trivial rows: ord(0)). Disjoint from the scored cells: no ordering needed.
__device__ __forceinline__ void write_defaults(const CpScoreParams& p, const CpCta& s, const CpRowS* trs) {
  const std::int64_t used = static_cast<std::int64_t>(s.pack) * p.world;
  const std::int64_t n = s.l1 - s.l0;
  for (std::int64_t idx = threadIdx.x; idx < used * n; idx += blockDim.x) {
    const CpRowS& m = trs[idx / n];
    const std::int64_t l = s.l0 + idx % n;
    const std::int64_t b = cc::scored_block(l, s.rank, p.world, p.LOCAL, p.mutant);
    if (!cc::cell_scored(m.f, s.gp, b, p.NB, p.mutant))
      s.rank_cells[cm::score_index(m.head, m.row, l, p.R, p.LOCAL)] = cc::cell_default(m.f, s.gp, b, p.NB, p.mutant);
  }
}

__device__ __forceinline__ void write_cell(const CpScoreParams& p, const CpCta& s, const CpRowS& m, std::int64_t l,
                                           std::int64_t b, float score) {
  if (!m.used) return;
  if (cc::cell_scored(m.f, s.gp, b, p.NB, p.mutant))
    s.rank_cells[cm::score_index(m.head, m.row, l, p.R, p.LOCAL)] =
        cc::cell_value(score, m.f, s.gp, b, p.init_blocks, p.local_blocks, p.mutant);
}

#if defined(IXO_GPU_CUDA)
// ---------------------------------------------------------------- tensor-core path (CUDA)
// The native score kernel's structure (detail::score_mma_kernel) over shard cells: a warp
// owns cells l0 + warp, +4, ... (global block scored_block(l)), walks a block in sub-tiles of
// 32 tokens from its start with the same MMA k order, lane order and merge order, so every
// row's block score has the native kernel's bits.
// One tile of a CP score program (s: rows [s.first, s.first + s.pack), their plan, the
// rank's cells); lut: the fp8 decode table, trs: the tile's row facts (shared), written by
// threads 0..15 before the call (load_row; ordered by the barrier the tile starts with).
// kStreamK: K's copies with the L2 evict-first policy (the packed plan: mma_tile.cuh cp_async16).
template <int D, int KC, bool kStreamK>
__device__ __forceinline__ void cp_score_mma_tile(const CpScoreParams& p, const CpCta& s, const std::uint16_t* lut,
                                                  CpRowS* trs) {
  constexpr bool kFp8 = KC != cm::kBf16;
  constexpr int kEsz = kFp8 ? 1 : 2;
  constexpr int kNL = D * kEsz / 64;
  constexpr int kNS = MmaCfg<D, KC>::kStages;
  extern __shared__ uint4 kring[];
  constexpr int kSteps = D / 16;
  static_assert(D % 64 == 0, "D must be a multiple of 64");

  __syncthreads();
  if (s.l0 >= s.l1) return;
  write_defaults(p, s, trs);
  if (s.gp.sid < 0 || s.gp.Lg <= 0) return;
  const std::int64_t le = cc::local_end(s.gp.nbg, s.rank, p.world, p.LOCAL, p.mutant);
  const std::int64_t lend = le < s.l1 ? le : s.l1;

  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int grp = lane >> 2, tig = lane & 3;
  if (s.l0 + warp >= lend) return;  // warp-uniform; no block-level barrier follows
  const CpRowS m0 = trs[grp], m1 = trs[grp + 8];
  const std::int64_t Lg = s.gp.Lg;
  // Rows are masked with their own length, never past Lg (not loaded); idle tile rows need no mask.
  const std::int64_t L0 = m0.used ? (m0.f.L < Lg ? m0.f.L : Lg) : kNoMaskLength;
  const std::int64_t L1 = m1.used ? (m1.f.L < Lg ? m1.f.L : Lg) : kNoMaskLength;

  std::uint32_t qa[kSteps][4];
  load_q_fragments<D, KC>(
      qa,
      m0.used ? reinterpret_cast<const std::uint32_t*>(p.qg + (static_cast<std::int64_t>(m0.head) * p.R + m0.row) * D)
              : nullptr,
      m1.used ? reinterpret_cast<const std::uint32_t*>(p.qg + (static_cast<std::int64_t>(m1.head) * p.R + m1.row) * D)
              : nullptr,
      tig);

  const bool lse = p.score_lse != 0;
  const int nsub = (p.block_size + 31) / 32;
  const std::int64_t ncell_w = (lend - s.l0 - warp + 3) / 4;
  const std::int64_t total = ncell_w * nsub;
  const std::int32_t* r2t_row = p.r2t + s.gp.sid * p.width;
  const std::int64_t row_bytes = static_cast<std::int64_t>(D) * kEsz;  // Hk == 1
  const std::uint8_t* kbase = p.k + tig * 16;

  // The sub-tile at cursor c (RingCursor: unit = the warp's cell index, no division): cell
  // s.l0 + warp + 4 * unit, block scored_block(cell), offset sub * 32.
  using Cursor = RingCursor<D, KC>;
  auto cell_of = [&](const Cursor& c) -> std::int64_t { return s.l0 + warp + 4 * c.unit; };
  auto tile_start = [&](const Cursor& c, int* off0) -> std::int64_t {
    const std::int64_t b = cc::scored_block(cell_of(c), s.rank, p.world, p.LOCAL, p.mutant);
    *off0 = c.sub * 32;
    return b * p.block_size + *off0;
  };
  // This lane's token of the sub-tile at c (-1: not loaded); its req_to_token entry travels
  // kNS sub-tiles ahead of its K copy through the warp's EntryRing (mma_tile.cuh; the native
  // kernel keeps its register ring, docs/gpu-kernels.md).
  auto lane_token = [&](const Cursor& c) -> std::int64_t {
    if (c.it >= total) return -1;
    int off0;
    const std::int64_t t = tile_start(c, &off0) + lane;
    return off0 + lane >= p.block_size || t >= Lg ? -1 : t;
  };
  uint4* ring = kring + static_cast<std::size_t>(warp) * kNS * kRingStage<D, KC>;
  auto issue = [&](const Cursor& c, std::int32_t raw, bool loaded) {
    ring_issue<D, KC, kStreamK>(ring, c.stage, loaded ? cm::wrap_slot(static_cast<std::int64_t>(raw), p.S) : -1, kbase,
                                row_bytes, lane, grp);
  };
  auto issue_direct = [&](const Cursor& c) {  // the ring's first sub-tiles: their entries loaded here
    const std::int64_t t = lane_token(c);
    issue(c, t >= 0 ? __ldg(r2t_row + t) : 0, t >= 0);
  };

  // cur: the sub-tile scored; iss: the one issued (kNS - 1 ahead); ahd: the one whose entries
  // are copied (kNS further).
  EntryRing<D, KC> ents(kring, warp);
  Cursor cur, iss, ahd;
  cur.seek(0, nsub);
  iss = cur;
  ring_start_entries<D, KC>(iss, ahd, ents, nsub, total, lane, r2t_row, lane_token, issue_direct);
  const bool q_f16 = tile_takes_f16_path<D, KC>(qa, false);  // fp8 K: the f16 path, after the start's loads
  uint4 kfrag[4][kNL];
  BlockState st0, st1;
  state_reset(st0);
  state_reset(st1);

  // The main loop, once a widening path (as score_mma_tile's; IXO_FP8_F16_LOOP).
  auto main_loop = [&](auto f16_tag) __attribute__((always_inline)) {
    const bool f16_path = decltype(f16_tag)::value || (!IXO_FP8_F16_LOOP && q_f16);
    for (; cur.it < total; cur.next(nsub)) {
      ring_step<D, KC>(ring, cur, iss, nsub, total, kfrag, lane, [&](const Cursor& c) {
        entry_issue<D, KC>(c, ahd, ents, nsub, total, lane, r2t_row, lane_token, issue);
      });

      int off0;
      const std::int64_t t0 = tile_start(cur, &off0);
      float v0[8], v1[8];
      // Rows are masked with their own length; tokens past the tile's length Lg were not loaded.
      subtile_logits<D, KC>(
          kfrag, qa, SubtileMask{t0, off0, p.block_size, p.mult, L0, L1, lut, false, kNativeMutantsOff, f16_path}, tig,
          v0, v1);
      state_add(st0, v0, lse, kNativeMutantsOff);
      state_add(st1, v1, lse, kNativeMutantsOff);

      if (off0 + 32 >= p.block_size) {  // last sub-tile of the block: merge the 4 lanes of a row
        merge_row_lanes(st0, st1, tig, lse, kNativeMutantsOff);
        if (tig == 0) {
          const std::int64_t l = cell_of(cur);
          const std::int64_t b = cc::scored_block(l, s.rank, p.world, p.LOCAL, p.mutant);
          write_cell(p, s, m0, l, b, state_score(st0, lse, kNativeMutantsOff));
          write_cell(p, s, m1, l, b, state_score(st1, lse, kNativeMutantsOff));
        }
        state_reset(st0);
        state_reset(st1);
      }
    }
  };
  run_per_widening_path<KC>(q_f16, main_loop);
  cp_async_wait<0>();
}

// The rows [first, first + rows) of a CP program one after the other (a group that does not
// pack, or a trailing row): out of line, so the packed path's code stays as compact as before.
template <int D, int KC, bool kStreamK>
__device__ __noinline__ void cp_score_mma_rows(CpScoreParams p, std::int64_t first, int rows, int chunk,
                                               const std::uint16_t* lut, CpRowS* trs) {
  for (int t = 0; t < rows; ++t) {  // CTA-uniform
    if (t > 0) __syncthreads();     // the previous tile no longer reads trs
    const CpCta s = cta_setup(p, first + t, 1, chunk);
    if (threadIdx.x < cm::kTileRows) trs[threadIdx.x] = load_row(p, first + t, 1, threadIdx.x, s.gp);
    cp_score_mma_tile<D, KC, kStreamK>(p, s, lut, trs);
  }
}

// CP score program (row-axis index x and chunk from common::program_chunk; rank): the
// tiles of row-axis index x (common::program_tiles, written out as in
// detail::score_mma_kernel; decided from slot_ids on the device): one packed tile for a
// whole group sharing one slot id, else one tile per row, one after the other. The packed
// tile's plan and row facts are loaded before the decision (their slot id and length loads
// in flight together, as before the decision existed); the per-row path loads its own.
// kStreamK: kPackedStreamK for the packed plan (p.pack > 1, launch_cp_fmt), else false.
template <int D, int KC, bool kStreamK>
__global__ void __launch_bounds__(kScoreThreads, KC == cm::kBf16 ? 2 : 3) cp_score_mma_kernel(CpScoreParams p) {
  __shared__ std::uint16_t lut[256];
  __shared__ CpRowS trs[cm::kTileRows];
  if (fp8_table_read<KC>(kNativeMutantsOff)) {  // the CP kernels run no decode mutant
    for (int i = threadIdx.x; i < 256; i += blockDim.x) lut[i] = fp8_bf16_bits(i, KC);
  }  // ordered by the tile's first barrier
  const cm::ProgramChunk pc = cta_program_chunk(p);
  const cm::ProgramRows pr = cm::program_rows_of(pc.program, p.whole, p.pack);
  const CpCta s = cta_setup(p, pr.first, pr.rows, pc.chunk);
  if (threadIdx.x < cm::kTileRows) trs[threadIdx.x] = load_row(p, pr.first, pr.rows, threadIdx.x, s.gp);
  if (cm::group_packs(p.slot, pr.first, pr.rows, p.pack)) {  // CTA-uniform
    cp_score_mma_tile<D, KC, kStreamK>(p, s, lut, trs);
    return;
  }
  cp_score_mma_rows<D, KC, kStreamK>(p, pr.first, pr.rows, pc.chunk, lut, trs);
}
#endif  // IXO_GPU_CUDA

// ---------------------------------------------------------------- portable scalar path
// HIP, and CUDA head dims other than 64 / 128: the native scalar kernel's arithmetic
// (fmaf dots in head-dim order, one thread per row reducing in token order) over shard cells.
template <int KC>
__device__ __forceinline__ void cp_score_scalar_tile(const CpScoreParams& p, std::int64_t first, int pack, int chunk) {
  __shared__ ScalarSmem sm;
  __shared__ CpRowS trs[cm::kTileRows];
  const int tid = threadIdx.x;
  const CpCta s = cta_setup(p, first, pack, chunk);
  if (tid < cm::kTileRows) trs[tid] = load_row(p, first, pack, tid, s.gp);
  __syncthreads();
  if (s.l0 >= s.l1) return;  // block-uniform
  write_defaults(p, s, trs);
  if (s.gp.sid < 0 || s.gp.Lg <= 0) return;  // block-uniform
  const int used = pack * p.world;
  const int D = static_cast<int>(p.D);
  const std::int64_t Lg = s.gp.Lg;
  for (int i = tid; i < cm::kTileRows * D; i += blockDim.x) {
    const int row = i / D, d = i % D;
    const CpRowS& m = trs[row];
    sm.qs[row][d] = m.used ? cm::bf16_to_float(p.qg[(static_cast<std::int64_t>(m.head) * p.R + m.row) * D + d]) : 0.0f;
  }
  __syncthreads();
  const std::int64_t le = cc::local_end(s.gp.nbg, s.rank, p.world, p.LOCAL, p.mutant);
  const std::int64_t lend = le < s.l1 ? le : s.l1;
  // One K head (Hk == 1); rows are masked with their own length, never past Lg (not loaded).
  const ScalarKeys kk{p.k, p.r2t + s.gp.sid * p.width, p.S, 1, p.D, Lg, 0, p.block_size, p.mult, kNativeMutantsOff};
  const std::int64_t L_mask = tid < used ? (trs[tid].f.L < Lg ? trs[tid].f.L : Lg) : 0;
  for (std::int64_t l = s.l0; l < lend; ++l) {
    const std::int64_t b = cc::scored_block(l, s.rank, p.world, p.LOCAL, p.mutant);
    const float score = scalar_block_score<KC>(kk, b, used, L_mask, p.score_lse != 0, sm);
    if (tid < used) write_cell(p, s, trs[tid], l, b, score);
  }
}

// CP score program of the portable path: the tiles of row-axis index x, as cp_score_mma_kernel.
template <int KC>
__global__ void __launch_bounds__(kScoreThreads) cp_score_scalar_kernel(CpScoreParams p) {
  const cm::ProgramChunk pc = cta_program_chunk(p);
  const cm::ProgramTiles pt = cm::program_tiles(p.slot, pc.program, p.R, p.pack);
  for (int t = 0; t < pt.count; ++t) {  // block-uniform
    if (t > 0) __syncthreads();         // the previous tile no longer reads shared memory
    cp_score_scalar_tile<KC>(p, pt.first + static_cast<std::int64_t>(t) * pt.pack, pt.pack, pc.chunk);
  }
}

// ---------------------------------------------------------------- shard candidates
// Whether every shard row of a launch (LOCAL cells, ncand kept) fits the vote selection: with the
// knob on, with_vote_instantiation then runs cp_candidates_kernel<NT, true> (session 25).
inline bool cp_cand_rows_fit_votes(const CpCandParams& p, int nt) {
  return ballot_topk_fits(p.LOCAL, cc::shard_candidates(p.topk, p.world, p.mutant), nt);
}

// One CTA per (head, row) of a rank: the top `ncand` cells by (ord desc, cell asc) -- the key
// order, since a shard's block ids grow with the cell -- via a 4-pass radix select on ord,
// ties at the threshold to the lowest cells; keys written in cell order, the rest 0.
template <int NT, bool kVotes = false>
__global__ void __launch_bounds__(NT) cp_candidates_kernel(CpCandParams p) {
  __shared__ std::uint32_t hist[257];
  __shared__ std::uint64_t scan[IXO_WARP_SIZE];
  __shared__ std::uint32_t sel_digit, sel_need;
  __shared__ std::uint32_t small_ids[kSmallSelect], small_count;
  const int tid = threadIdx.x;
  if (!kVotes && tid == 0) small_count = 0;  // small_compact's; ordered by radix_select's barriers
  const int y = static_cast<int>(blockIdx.y);
  const int rank = p.rank_base + y;
  const std::int64_t hr = blockIdx.x;
  const std::uint32_t* c = p.cells + (static_cast<std::int64_t>(y) * p.world * p.R + hr) * p.LOCAL;
  std::uint64_t* out = p.keys + (static_cast<std::int64_t>(y) * p.world * p.R + hr) * p.topk;
  const int ncand = cc::shard_candidates(p.topk, p.world, p.mutant);
  const std::int64_t n = p.LOCAL;
  if (n <= ncand) {
    for (int k = tid; k < p.topk; k += NT) out[k] = k < n ? cc::cand_key(c[k], cc::shard_block(k, rank, p.world)) : 0;
    return;
  }
  for (int k = ncand + tid; k < p.topk; k += NT) out[k] = 0;
  auto key = [&](std::int64_t j) -> std::uint32_t { return c[j]; };
  auto emit = [&](std::uint32_t pos, std::int64_t j) {
    out[pos] = cc::cand_key(c[j], cc::shard_block(j, rank, p.world));
  };
  if constexpr (kVotes) {
    if (try_ballot_topk<NT>(n, key, ncand, false, emit)) return;  // else (a wide tie) the radix select
  }
  std::uint32_t need = static_cast<std::uint32_t>(ncand);
  const RadixThreshold th = radix_select<NT>(n, key, need, hist, scan, sel_digit, sel_need);
  // Not in the vote instantiation, as in topk_kernel.
  if constexpr (!kVotes) {
    if (small_compact_fits(th, need, static_cast<std::uint32_t>(ncand))) {  // CTA-uniform
      small_compact<NT>(n, key, th.prefix, static_cast<std::uint32_t>(ncand), small_ids, small_count, emit);
      return;
    }
  }
  radix_compact<NT>(n, key, th.prefix, need, 0u, scan, emit);
}

// ---------------------------------------------------------------- merge
// One CTA per (head, row): the top `topk` nonzero keys of the WORLD x topk gathered
// candidates (keys are distinct: every block lies in one shard), ids ascending, -1 padded.
template <int NT>
__global__ void __launch_bounds__(NT) cp_merge_kernel(CpMergeParams p) {
  __shared__ std::uint64_t ks[kMergeMax];
  __shared__ std::uint8_t sel[kMergeMax];
  __shared__ int count;
  const int tid = threadIdx.x;
  const std::int64_t hr = blockIdx.x;
  const int head = p.head_base + static_cast<int>(hr / p.R);
  const std::int64_t r = hr % p.R;
  const int n = p.world * p.topk;
  if (tid == 0) count = 0;
  for (int i = tid; i < n; i += NT)
    ks[i] = p.gathered[cc::cand_index(i / p.topk, head, r, i % p.topk, p.world, p.R, p.topk)];
  __syncthreads();
  for (int i = tid; i < n; i += NT) {
    const std::uint64_t key = ks[i];
    bool take = false;
    if (key != 0) {
      int above = 0;
      for (int m = 0; m < n; ++m) above += ks[m] > key;
      take = above < p.topk;
    }
    sel[i] = take ? 1 : 0;
    if (take) atomicAdd(&count, 1);
  }
  __syncthreads();
  std::int32_t* out = p.out + hr * p.topk;
  for (int i = tid; i < n; i += NT) {
    if (!sel[i]) continue;
    const std::int32_t id = cc::key_block(ks[i]);
    int pos = 0;
    for (int m = 0; m < n; ++m) pos += sel[m] && cc::key_block(ks[m]) < id;
    out[pos] = id;
  }
  for (int i = tid; i < p.topk; i += NT)
    if (i >= count) out[i] = -1;
}

// ---------------------------------------------------------------- launch parameters (host code)
// What the launcher (cp_launch.inl) and the host simulation (kernels/sim_host) pass the kernels.
inline std::int64_t cp_local_cells(const CpArgs& a) { return cc::local_blocks(a.NB, a.world); }
inline int cp_launch_pack(const CpArgs& a) { return a.pack > 1 && cm::pack_fits(a.pack, a.world) ? a.pack : 1; }
inline bool cp_args_ok(const CpArgs& a) {
  return head_dim_in_range(a.D) && a.world >= 1 && a.world <= cc::kMaxWorld && a.k_code >= 0 && a.k_code <= 3 &&
         a.ranks >= 1 && a.rank_base >= 0 && a.rank_base + a.ranks <= a.world && a.topk >= 1 &&
         a.topk <= cc::kMaxCandidates && a.NB <= cc::kMaxBlocks && a.NB >= 1;
}
// Score grid: (cp_score_grid_x, ranks).
inline CpScoreParams cp_score_params(const CpArgs& a) {
  CpScoreParams p{};
  static_cast<cm::IndexConfig&>(p) = a;
  const int pack = cp_launch_pack(a);
  p.qg = a.qg;
  p.k = static_cast<const std::uint8_t*>(a.k_cache);
  p.r2t = a.req_to_token;
  p.slot = a.slot_ids;
  p.lens = a.seq_lens;
  p.cells = a.cells;
  p.LOCAL = cp_local_cells(a);
  p.world = a.world;
  p.rank_base = a.rank_base;
  p.pack = pack;
  p.whole = a.R / pack;
  p.chunks = a.num_chunks > 0 ? a.num_chunks : cc::num_chunks(cm::packed_batch(a.R, pack), p.LOCAL);
  p.mult = cm::logit_multiplier(a.sm_q_scale, a.k_scale);
  p.mutant = a.mutant;
  return p;
}
// The score grid's x: every row-axis program (common::packed_batch) a chunk.
inline std::int64_t cp_score_grid_x(const CpScoreParams& p) { return cm::packed_batch(p.R, p.pack) * p.chunks; }
// Candidates grid: (world * R, ranks) CTAs of kCandThreads.
inline CpCandParams cp_cand_params(const CpArgs& a) {
  CpCandParams p{};
  p.cells = a.cells;
  p.keys = a.keys;
  p.R = a.R;
  p.LOCAL = cp_local_cells(a);
  p.world = a.world;
  p.rank_base = a.rank_base;
  p.topk = a.topk;
  p.mutant = a.mutant;
  return p;
}
// Merge grid: heads * R CTAs of kMergeThreads.
inline CpMergeParams cp_merge_params(const CpArgs& a, const std::uint64_t* gathered, int head_base, std::int32_t* out) {
  CpMergeParams p{};
  p.gathered = gathered;
  p.out = out;
  p.R = a.R;
  p.world = a.world;
  p.topk = a.topk;
  p.head_base = head_base;
  return p;
}

}  // namespace ixo::gpu::cpk
