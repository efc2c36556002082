// The plans every kernel backend runs (CPU twin, CUDA/HIP, the CP twin and CP kernels),
// written once as host+device code: the facts of one query row, the plan of a tile (group
// length, table row), the facts of a tile row, the top-k plan of a (head, row) and the
// chunk plan. A backend never re-derives these: it calls the functions below, so each
// catalogue mutant that changes a plan (mutants.hpp) is injected here, in one place, and
// reaches every backend that runs the plan.
#pragma once
#include <cstdint>

#include "index_config.hpp"
#include "indexer_common.hpp"
#include "mutants.hpp"
#include "round_plan.hpp"

namespace ixo::common {

// ---- Chunk plan --------------------------------------------------------------------------
// Programs a grid of `programs` (row-axis programs x K heads) may spread over the KV axis:
// total / programs clamped to [1, 256] (graph-constant values only).
IXO_HD std::int64_t chunk_budget(std::int64_t programs, std::int64_t total = 4096) {
  const std::int64_t n = programs < 1 ? 1 : programs;
  std::int64_t v = total / n;
  if (v < 1) v = 1;
  if (v > 256) v = 256;
  return v;
}

// Number of KV chunks: a power of two from graph-constant values only (batch = rows or
// groups launched, hk = K heads), never from seq_lens: chunk_budget(B*Hk, total) rounded down.
IXO_HD int num_kv_chunks(std::int64_t batch, std::int64_t hk, std::int64_t total = 4096) {
  const std::int64_t v = chunk_budget(batch * hk, total);
  int p = 1;
  while (p * 2 <= v) p *= 2;
  return p;
}

// Programs the native score grid aims at (batch x Hk x chunks): 1024. Measured on the H200
// (docs/performance.md, session 6 sweep): per-row 16 x 131072 bf16 337 us at 1024 programs
// against 392 at 4096, 32 x 524288 per-row bf16 2378 against 2484, packed e4m3fn 798
// against 833; one shape of eight is slower (per-row 32 x 524288 e4m3fn +2 %).
constexpr std::int64_t kScoreGridPrograms = 1024;

// The chunk cap (blocks of the widest possible row, NB, graph-constant, per score program):
// a program takes kChunkBlocks = 16 blocks (4 per warp: the cp.async pipeline stays full),
// unless the grid would then have fewer than kFillPrograms = 256 programs (about two CTAs an
// SM on the H200's 132): then chunks are split further, down to kMinChunkBlocks = 4 (one per
// warp). The latency suite (session 12) measured the old cap (16 blocks, always) on 8 rows of
// 4K tokens: 8 CTAs, 35 us a step for 0.8 MB of K; 4 blocks always: 16 us there, but 30 % slower
// where 16 blocks already gave ~256 programs (1024 short programs). The throughput shapes
// never reach the cap (1024 programs' worth of chunks come first).
constexpr std::int64_t kChunkBlocks = 16, kMinChunkBlocks = 4, kFillPrograms = 256;

// The CUDA tensor-core score kernel's tiling, here so host tests can derive edge shapes from it
// (tests/kernels/test_tiling_edges.cpp); the kernel reads these (kernels/gpu). A CTA is
// kScoreWarps warps; warp w scores blocks b0 + w, b0 + w + kScoreWarps, ... of its KV chunk in
// sub-tiles of kSubTileTokens tokens, streamed through a cp.async ring kMmaStages* sub-tiles deep,
// with the req_to_token entries loaded kSlotAhead sub-tiles ahead. For max scores, the last
// n % kScoreWarps blocks of a chunk of n >= kScoreWarps blocks are cut into sub-tiles and dealt
// round-robin (the split), when a block has at most kSplitMaxSub sub-tiles.
constexpr int kScoreWarps = 4, kSubTileTokens = 32;
constexpr int kMmaStagesBf16 = 3, kMmaStagesFp8 = 2;  // fp8 2: session 14 A/B (docs/performance.md)
constexpr int kSlotAhead = 4, kSplitMaxSub = 8;

// The score kernels' chunk plan (native twin, CUDA, HIP): num_kv_chunks(batch, hk,
// kScoreGridPrograms), capped as above. `forced` > 0 overrides it. The scores do not depend on
// the chunk plan (property ChunkingChangesNothing).
IXO_HD int score_chunks(std::int64_t batch, std::int64_t hk, std::int64_t NB, int forced = 0) {
  if (forced > 0) return forced;
  const int c = num_kv_chunks(batch, hk, kScoreGridPrograms);
  const std::int64_t programs = batch * hk > 0 ? batch * hk : 1;
  const std::int64_t fill = (kFillPrograms + programs - 1) / programs;  // chunks that make 256 programs
  std::int64_t cap = NB / kChunkBlocks > fill ? NB / kChunkBlocks : fill;
  if (cap > NB / kMinChunkBlocks) cap = NB / kMinChunkBlocks;
  if (cap < 1) cap = 1;
  return c < cap ? c : static_cast<int>(cap);
}

// The packed plans: one full wave of score CTAs (packed_wave_chunks: wave_slots / programs
// chunks, at least one block a warp), so every CTA starts once and the start chain of a CTA
// (plan -> q -> req_to_token -> first K copies, ~7.7 us at 16 x 131072, session 17's CTA
// timeline) is paid once, not once a wave. The slots are the H200's 132 SMs x the kernel's
// CTAs an SM; a GPU with another SM count gets a plan tuned for the H200 (the scores never
// depend on the plan).
// fp8: kFp8PackedWaveSlots = 132 x 3. Chosen when the fp8 kernel was bound by its widening;
// re-swept with the f16 path (session 15: 16 x 131072 e4m3fn packed 93.4 us at the plan's 24
// chunks, 101.7 at 16, 122.1 at 32, 112.5 at 64; 32 x 524288 580.8 at 12, 590.0 at 24, 640.6
// at 64) and session 17 (89.0 at 24, 98.4 at 16, 110.6 at 33): still the best.
// kFp8CtasPerSm: the fp8 score kernel's __launch_bounds__ minimum. IXO_FP8_CTAS_PER_SM=4 (in
// both the CUDA and the C++ flags: the twin shares the plan) measured slower with the f16 path
// (session 15, one lease, A B A B: packed e4m3fn 16 x 131072 93.1 / 93.6 -> 103.2 / 102.8 us,
// 32 x 524288 578.3 / 578.2 -> 684.2 / 687.5; 128 registers with small spills).
// bf16: kBf16PackedWaveSlots = 132 x 2 when IXO_BF16_PACKED_WAVE=1 (the default since session 20's
// A/B, one lease: packed bf16 16 x 131072 step 155.0 / 154.4 -> 145.8 / 144.5 us, the other step
// shapes within 0.3 %, latency suite geomean 0.999 (b4 32K H4 57.2 -> 48.5 us, worst +2.2 %); 0:
// score_chunks, the 1024-program plan). Session 17's sweep with the .L2::128B copies (one lease):
// packed bf16 16 x 131072 score 144.7 / 143.9 us at the old plan's 64 chunks (3.88 waves), 134.0 /
// 134.1 at 16 (one wave), 134.9 at 33 (2 waves), 136.7 at 12, 138.0 at 32, 141.3 at 48, 150.3 at 8;
// 32 x 524288 flat (984.2 at 32, 982.8 at 8, 981.4 at 33); session 14 (no hint) had one wave 3 %
// slower.
#ifndef IXO_FP8_CTAS_PER_SM
#define IXO_FP8_CTAS_PER_SM 3
#endif
#ifndef IXO_BF16_PACKED_WAVE
#define IXO_BF16_PACKED_WAVE 1  // session 20's A/B (docs/performance.md "Session 20")
#endif
constexpr int kFp8CtasPerSm = IXO_FP8_CTAS_PER_SM;
constexpr int kBf16CtasPerSm = 2;  // the bf16 score kernel's __launch_bounds__ minimum
constexpr std::int64_t kFp8PackedWaveSlots = kPlanSms * kFp8CtasPerSm;
constexpr std::int64_t kBf16PackedWaveSlots = kPlanSms * kBf16CtasPerSm;
IXO_HD int packed_wave_chunks(std::int64_t batch, std::int64_t hk, std::int64_t NB, std::int64_t wave_slots,
                              int forced = 0) {
  if (forced > 0) return forced;
  const std::int64_t programs = batch * hk > 0 ? batch * hk : 1;
  std::int64_t c = wave_slots / programs;
  if (c > NB / kMinChunkBlocks) c = NB / kMinChunkBlocks;  // at least one block a warp
  if (c < 1) c = 1;
  return static_cast<int>(c);
}
IXO_HD int fp8_packed_chunks(std::int64_t batch, std::int64_t hk, std::int64_t NB, int forced = 0) {
  return packed_wave_chunks(batch, hk, NB, kFp8PackedWaveSlots, forced);
}
IXO_HD int bf16_packed_chunks(std::int64_t batch, std::int64_t hk, std::int64_t NB, int forced = 0) {
  return IXO_BF16_PACKED_WAVE ? packed_wave_chunks(batch, hk, NB, kBf16PackedWaveSlots, forced)
                              : score_chunks(batch, hk, NB, forced);
}

// The (row-axis program, KV chunk) of score CTA x of a grid of batch * chunks. Per-row plan
// (pack 1): chunk-major, so the draft rows of one request (neighbouring rows reading the same
// K blocks) score a chunk in neighbouring CTAs, which run together and share that K through
// L2 (program-major, the per-row 16 x 131072 bf16 bench read 1.6x the unique K from DRAM,
// ncu). Packed plan (a program already holds a request's rows): program-major. The scores
// do not depend on it.
struct ProgramChunk {
  std::int64_t program;
  int chunk;
};
// per_row: the plan is per-row (pack 1); a kernel whose template decides the plan passes it
// as a constant, so no branch is left.
IXO_HD ProgramChunk program_chunk_of_plan(std::int64_t x, std::int64_t batch, int chunks, bool per_row) {
  if (per_row) return {x % batch, static_cast<int>(x / batch)};
  return {x / chunks, static_cast<int>(x % chunks)};
}
IXO_HD ProgramChunk program_chunk(std::int64_t x, std::int64_t batch, int chunks, int pack) {
  return program_chunk_of_plan(x, batch, chunks, pack == 1);
}

// Whether the packed plan runs for P = packed_queries rows per group: P > 1 and the pack's
// P * Hq/Hk tile rows fit one 16-row tile (shapes only; any R).
IXO_HD bool packed_plan_fits(int P, std::int64_t hq, std::int64_t hk) {
  return P > 1 && hk > 0 && hq % hk == 0 && pack_fits(P, static_cast<int>(hq / hk));
}

// ---- The native launch plan ----------------------------------------------------------------
// The one statement of the native (per-row / packed) score grid and chunk plan (issue 24): the
// CPU twin, the CUDA/HIP launcher and gpu::plan all call native_plan, as CP calls cp_plan. A
// program is (row-axis index, KV chunk, K head); the grid is (batch * chunks, hk).
struct NativePlan {
  int pack = 1;            // rows a program packs: packed_queries on the packed plan when it fits, else 1
  int gqa = 1;             // q heads per K head
  std::int64_t hk = 1;     // programs along the K-head axis (grid y)
  std::int64_t batch = 0;  // programs along the row axis: packed_batch(R, pack) (R / pack + R % pack)
  int chunks = 1;          // KV chunks per row-axis program (score_chunks; packed: one wave)
  int rounds = 0;          // > 0: the round plan of round_plan.hpp (row 57), its dispatch rounds
  int round_skew = 0;      // its weights' step
  IXO_HD std::int64_t grid_x() const { return batch * chunks; }
  IXO_HD std::int64_t programs() const { return grid_x() * hk; }
};
// Whether a K format code is one of the fp8 formats (their kernels' plans are fp8's).
IXO_HD bool fp8_k_code(int k_code) { return k_code == kE4m3fn || k_code == kE4m3fnuz || k_code == kE5m2; }
// The chunk count of a native grid of batch x hk programs packing `pack` rows: the packed plan
// one full wave of its kernel's CTAs (fp8_packed_chunks, bf16_packed_chunks), per-row
// score_chunks.
IXO_HD int native_chunks(const IndexConfig& k, int pack, std::int64_t batch, std::int64_t hk, int forced = 0) {
  const bool fp8_k = fp8_k_code(k.k_code);
  if (pack == 1) return score_chunks(batch, hk, k.NB, forced);
  return fp8_k ? fp8_packed_chunks(batch, hk, k.NB, forced) : bf16_packed_chunks(batch, hk, k.NB, forced);
}
// `packed`: the packed backend's plan (with its per-row fallback when the pack does not fit one
// tile); forced_chunks > 0 forces the chunk count. Graph-constant values only (shapes, config).
IXO_HD NativePlan native_plan(const IndexConfig& k, bool packed, int forced_chunks = 0) {
  NativePlan p;
  p.hk = k.Hk > 0 ? k.Hk : 1;
  p.gqa = static_cast<int>(k.Hq / p.hk);
  p.pack = packed && packed_plan_fits(k.packed_queries, k.Hq, p.hk) ? k.packed_queries : 1;
  p.batch = packed_batch(k.R, p.pack);
  p.chunks = native_chunks(k, p.pack, p.batch, p.hk, forced_chunks);
  // Row 57: the packed fp8 plans of one wave and more than one round (round_plan.hpp).
  if (IXO_FP8_ROUND_PLAN && p.pack > 1 && fp8_k_code(k.k_code) && p.programs() > kPlanSms &&
      p.programs() <= kFp8PackedWaveSlots) {
    p.rounds = static_cast<int>(ceil_div(p.programs(), kPlanSms));
    p.round_skew = IXO_FP8_ROUND_SKEW;
  }
  return p;
}
// (Row-axis program, chunk) of score CTA x of plan p: program_chunk's order, chunk-major on the round plan.
// The round plan's grid is one wave: its order in 32-bit math (round_plan.hpp's RoundInt).
IXO_HD ProgramChunk plan_program_chunk(const NativePlan& p, std::int64_t x) {
  if (p.rounds > 0) {
    const RoundInt x32 = static_cast<RoundInt>(x), b32 = static_cast<RoundInt>(p.batch);
    return {static_cast<std::int64_t>(x32 % b32), static_cast<int>(x32 / b32)};
  }
  return program_chunk_of_plan(x, p.batch, p.chunks, p.pack == 1);
}
// Blocks [*b0, *b1) of chunk c of row-axis program `program`, K head kvh, for a tile of nb blocks under
// plan p: chunk_blocks, or the round plan's weighted share.
IXO_HD void plan_chunk_blocks(const NativePlan& p, std::int64_t nb, std::int64_t program, int kvh, int c,
                              std::int64_t* b0, std::int64_t* b1, int mutant = 0) {
  if (p.rounds > 0) {
    round_chunk_blocks(nb, p.batch, p.chunks, program, kvh, c, p.rounds, p.round_skew, b0, b1, mutant);
  } else {
    chunk_blocks(nb, p.chunks, c, b0, b1, mutant);
  }
}

// ---- Sub-tile stream ---------------------------------------------------------------------
// A position in a score warp's stream of sub-tiles (GPU score kernels, native and CP):
// sub-tile `it` = unit * nsub + sub (a unit is one whole block of the native kernel, one
// shard cell of the CP kernel; nsub sub-tiles a unit) and its ring stage it % kNS. next()
// advances them without a division (recomputing them from `it` in every step was most of
// the kernels' main-loop instructions: docs/performance.md, session 5); seek() is the
// definition next() must agree with (tests/kernels/test_common.cpp). Index: the type of it and unit (the native
// kernel's narrow loop, row 60, walks in 32 bits where the tile's tokens fit: narrow_index_fits).
template <int kNS, class IndexT = std::int64_t>
struct SubtileCursor {
  using Index = IndexT;
  Index it, unit;
  int sub, stage;
  IXO_HD void seek(Index i, int nsub) {
    it = i;
    unit = i / nsub;
    sub = static_cast<int>(i % nsub);
    stage = static_cast<int>(i % kNS);
  }
  IXO_HD void next(int nsub) {
    ++it;
    if (++sub == nsub) {
      sub = 0;
      ++unit;
    }
    if (++stage == kNS) stage = 0;
  }
};

// Experiment row 60 (session 40): the native kernel's raw loop (row 59) in 32-bit indices. A tile walks its tokens,
// sub-tiles and K rows in 32 bits where all of them fit: the K cache has at most 2^31 - 1 rows (row 61's
// narrow_entry_row; row 60 alone allowed 2^32 - 1) of at most 2^32 - 1 bytes, and the tile's blocks end (with a
// sub-tile's 64 tokens of slack) below 2^31 tokens. Any other tile takes the 64-bit loop.
IXO_HD bool narrow_index_fits(std::int64_t S, std::int64_t row_bytes, std::int64_t Lg, int bs) {
  return S >= 0 && S <= 0x7FFFFFFFll && row_bytes > 0 && row_bytes <= 0xFFFFFFFFll &&
         num_blocks(Lg, bs) * bs <= 0x7FFFFFFFll - 64;
}
// The 32-bit K row of a wrapped slot s (wrap_slot's result): s itself, or kNoKRow for s < 0 (no row: its copy
// zero-fills). Exact where narrow_index_fits: s < S <= 2^31 - 1, or s a raw table entry (< 2^31).
constexpr std::uint32_t kNoKRow = 0xFFFFFFFFu;
IXO_HD std::uint32_t narrow_k_row(std::int64_t s) { return s >= 0 ? static_cast<std::uint32_t>(s) : kNoKRow; }
// Row 61: the narrow loop keeps a lane's req_to_token entry as one int32, kNoEntry where the lane loads none, and
// turns it into its K row in 32 bits: narrow_entry_row(raw, S) == narrow_k_row(wrap_slot(raw, S)) for every raw and
// 0 <= S <= INT32_MAX (narrow_index_fits' bound on S: raw + S cannot overflow, and kNoEntry + S < 0 names no row).
constexpr std::int32_t kNoEntry = INT32_MIN;
IXO_HD std::uint32_t narrow_entry_row(std::int32_t raw, std::int32_t S) {
  const std::int32_t s = raw < 0 ? raw + S : raw;
  return s >= 0 ? static_cast<std::uint32_t>(s) : kNoKRow;
}

// ---- Row facts ---------------------------------------------------------------------------
// The per-row inputs the plans read (host or device pointers, [R] each) and the shapes.
struct RowInputs {
  const std::int64_t* slot;
  const std::int64_t* lens;
  std::int64_t S, rows;
  int bs, topk;
};
// The row inputs of a launch: its config (any launch struct: they all derive from IndexConfig)
// and its slot ids and lengths.
IXO_HD RowInputs row_inputs(const IndexConfig& k, const std::int64_t* slot_ids, const std::int64_t* seq_lens) {
  return RowInputs{slot_ids, seq_lens, k.S, k.rows, k.block_size, k.topk};
}

// Facts of query row r. Plain data (no initializers): usable in __shared__.
struct RowFacts {
  std::int64_t L;   // seq_lens[r]
  std::int64_t nb;  // blocks, 0 for an inactive row
  bool active;      // reads a table row
  bool writes;      // active and not trivial (nb > topk): writes score columns [0, nb)
};
IXO_HD RowFacts row_facts(const RowInputs& in, std::int64_t r, int mutant = 0) {
  const std::int64_t L = in.lens[r];
  const std::int64_t sid = table_row(in.slot[r], in.S, in.rows, L, mutant);
  RowFacts f;
  f.L = L;
  f.active = sid >= 0;
  f.nb = f.active ? num_blocks(L, in.bs) : (IXO_MUTANT(mutant, mutants::padding_rows_select_block0) ? 1 : 0);
  f.writes = row_writes_scores(sid, f.nb, in.topk, mutant);
  return f;
}

// ---- Group (tile) plan -------------------------------------------------------------------
// Plan of the tile of `pack` rows starting at row `first` (a packed group, or one row): K is
// loaded for the longest writable row (Lg, nbg blocks) through the table row of the first
// writable row (sid). Lg = 0 / sid = -1: no row writes, nothing to score.
struct GroupPlan {
  std::int64_t Lg;
  std::int64_t nbg;
  std::int64_t sid;
};
IXO_HD GroupPlan group_plan(const RowInputs& in, std::int64_t first, int pack, int mutant = 0) {
  GroupPlan g{0, 0, -1};
  bool any = false;
  for (int d = 0; d < pack; ++d) {
    const std::int64_t r = first + d;
    const RowFacts f = row_facts(in, r, mutant);
    if (!f.writes) continue;
    if (!any) {
      g.sid = k_table_row(table_row(in.slot[r], in.S, in.rows, f.L, mutant), r, in.rows, mutant);
      g.Lg = f.L;
    } else if (IXO_MUTANT(mutant, mutants::group_sized_by_shortest) || IXO_MUTANT(mutant, mutants::cp_group_shortest)) {
      g.Lg = f.L < g.Lg ? f.L : g.Lg;
    } else {
      g.Lg = f.L > g.Lg ? f.L : g.Lg;
    }
    any = true;
  }
  if (any && IXO_MUTANT(mutant, mutants::cp_k_by_group_index)) g.sid = (first / pack) % in.rows;
  g.nbg = num_blocks(g.Lg, in.bs);
  return g;
}

// ---- Tile row plan -----------------------------------------------------------------------
// The tile of a program: rows [first, first + pack) of K head kvh; tile row i is (draft row
// first + i / gqa, q head kvh * gqa + i % gqa) for i < pack * gqa (tile_row).
struct TileShape {
  std::int64_t first;
  int pack, gqa, hk, kvh;
};
// Everything a scorer needs to know about tile row i. Plain data.
struct RowPlan {
  bool used;               // i < pack * gqa
  std::int64_t row;        // query row the tile row reads q from
  int head;                // its q head
  RowFacts f;              // the row's own facts (f.nb: the nb it is validated with)
  std::int64_t nb_force;   // the nb its forcing uses (== f.nb)
  std::int64_t L_mask;     // the length its lanes are masked with (== f.L)
  std::int64_t store_row;  // where its scores are stored (== row, head)
  int store_head;
};
IXO_HD RowPlan row_plan(const RowInputs& in, const TileShape& t, int i, const GroupPlan& g, int mutant = 0) {
  RowPlan m{false, 0, 0, RowFacts{0, 0, false, false}, 0, 0, 0, 0};
  const TileRow tr = tile_row(i, t.pack, t.gqa);
  if (!tr.used) return m;
  m.used = true;
  m.row = tile_query_row(t.first, tr);
  m.head = tile_query_head(t.kvh, t.gqa, tr, t.hk, mutant);
  m.f = row_facts(in, m.row, mutant);
  if (IXO_MUTANT(mutant, mutants::group_nb_for_rows) && m.f.writes) m.f.nb = g.nbg;
  m.nb_force = IXO_MUTANT(mutant, mutants::no_row_local_reforce) ? g.nbg : m.f.nb;
  m.L_mask = IXO_MUTANT(mutant, mutants::pack_tail_leak) ? g.Lg : m.f.L;
  const TileRow st = store_tile_row(i, t.pack, t.gqa, mutant);  // == tr
  m.store_row = tile_query_row(t.first, st);
  m.store_head = tile_query_head(t.kvh, t.gqa, st, t.hk, mutant);
  return m;
}
// Whether the scorer writes block b of a row (writes, nb: its facts), and whether the
// stray_column_write mutant also writes column nb (one past the row's blocks) for block b.
IXO_HD bool writes_block(bool writes, std::int64_t nb, std::int64_t b, std::int64_t NB) {
  return writes && b < nb && b < NB;
}
IXO_HD bool stray_column(std::int64_t nb, std::int64_t b, std::int64_t NB, int mutant = 0) {
  return IXO_MUTANT(mutant, mutants::stray_column_write) && b + 1 == nb && b + 1 < NB;
}
IXO_HD bool row_writes_block(const RowPlan& m, std::int64_t b, std::int64_t NB) {
  return writes_block(m.f.writes, m.f.nb, b, NB);
}

// ---- Top-k plan --------------------------------------------------------------------------
// Plan of the top-k of (head, row r): rows with nb <= topk (inactive rows: nb = 0) take the
// shortcut (0..nb-1 then -1, scores never read); the others rank their n = nb blocks and
// keep the k = min(n, topk) best, ids ascending; slots [kept, topk) hold the tail.
struct TopkPlan {
  std::int64_t nb;
  bool shortcut;
  std::int64_t n;  // blocks ranked (<= NB)
  int k;           // blocks selected
  int kept;        // blocks the selection keeps (== k)
};
IXO_HD TopkPlan topk_plan(const RowInputs& in, std::int64_t r, std::int64_t NB, int mutant = 0) {
  TopkPlan t;
  t.nb = row_facts(in, r, mutant).nb;
  const bool trivial = trivial_row(t.nb, in.topk, mutant);
  // trivial_rows_not_shortcut: a trivial row is ranked over its whole buffer row (NB).
  t.shortcut = trivial && !(IXO_MUTANT(mutant, mutants::trivial_rows_not_shortcut) && t.nb > 0);
  t.n = trivial ? NB : (t.nb < NB ? t.nb : NB);
  t.k = t.n < in.topk ? static_cast<int>(t.n) : in.topk;
  if (IXO_MUTANT(mutant, mutants::topk_capped_512) && t.k > 512) t.k = 512;  // a 512-id selection buffer
  // topk_one_short: keeps k - 1 and appends block 0 (topk_tail_id).
  t.kept = IXO_MUTANT(mutant, mutants::topk_one_short) ? t.k - 1 : t.k;
  return t;
}
// Output slot i of a shortcut row (trivial_topk_id), or slot i >= kept of a ranked row.
IXO_HD std::int32_t topk_tail_id(const TopkPlan& t, int i, int mutant = 0) {
  if (t.shortcut) return trivial_topk_id(i, t.nb, mutant);
  return i < t.k ? 0 : -1;
}

}  // namespace ixo::common
