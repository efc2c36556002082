// Context-parallel (CP) indexer formulas shared by the CPU twin (cpu-cp) and the GPU
// kernels (cuda-cp, HIP compile gate), written once as host+device code. The per-row
// formulas (activity, slot wrap, block counts, forcing, logit multiplier, fp8 decoding)
// come from indexer_common.hpp; this header adds only what CP does differently:
//
//   * WORLD ranks; each rank owns one index head (WORLD = Hq, Hk = 1). Queries are
//     all-gathered, so every rank scores all WORLD heads, but only its own shard of blocks:
//     rank r scores global blocks  local * WORLD + r  (local = 0 .. LOCAL-1,
//     LOCAL = ceil(NB / WORLD)).
//   * A shard cell holds a 32-bit ordered value `ord`: 0 = invalid (inactive row, block past
//     the row's nb or past NB), else 1 + monotone(score) with NaN ranking lowest (the
//     native top-k order, common::topk_key). Trivial rows (nb <= topk) are not scored: their
//     valid cells hold ord(0.0f).
//   * Each rank keeps its top-`topk` candidates per (head, row) -- never topk / WORLD -- as
//     packed keys (ord << 16) | (65535 - block); key 0 = no candidate. Candidates of all
//     ranks are all-gathered; each rank merges its own head: the top `topk` keys, ids
//     ascending, -1 padded. The key order is the native order (score desc, lower id first),
//     so CP selects exactly the native per-row ids.
//   * Packed verify rows: tile row i -> (draft row first + i / WORLD, head i % WORLD)
//     when pack * WORLD <= 16 (shapes only). The row axis is the native packed plan's
//     (common::program_rows / program_tiles): a whole group whose rows share one slot id is
//     one tile; any other group and the trailing R % P rows run per row inside their program.
//     K is loaded once per tile for its longest (writable) row; each row is masked and forced
//     with its own length.
#pragma once
#include <cstdint>

#include "indexer_common.hpp"
#include "mutants.hpp"
#include "plans.hpp"

namespace ixo::common::cp {

// ---- Mutants of the CP path (mutation campaign, IXO_MUTANT(sel, id)) -------------------
// BEGIN CP MUTANTS (ids 601-606, catalogued in kernels/common/mutants.hpp; 604 and 606
// change the tile plan: plans.hpp group_plan)
constexpr int kMutCpContiguousShards = mutants::cp_contiguous_shards;       // 601: contiguous shard scored, strided ids
constexpr int kMutCpTopkOverWorld = mutants::cp_topk_over_world;            // 602: topk / WORLD candidates per shard
constexpr int kMutCpGroupBlockCount = mutants::cp_group_nb_for_rows;        // 603: the group's nb for each row
constexpr int kMutCpForcedLocalDropped = mutants::cp_forced_local_dropped;  // 605: forced local window dropped
// END CP MUTANTS
// -----------------------------------------------------------------------------------------

constexpr int kIdBits = 16;
constexpr std::int64_t kMaxBlocks = std::int64_t{1} << kIdBits;  // block ids must fit 16 bits
constexpr int kMaxCandidates = 64;                               // topk limit of CP: candidates per (shard, head, row)
constexpr int kMaxWorld = kTileRows;                             // one row's WORLD heads fit one tile

// Blocks each rank owns (graph-constant: from NB only).
IXO_HD std::int64_t local_blocks(std::int64_t NB, int world) { return ceil_div(NB, world); }

// Global block of shard cell `local` on rank `rank` (strided: local * WORLD + rank).
IXO_HD std::int64_t shard_block(std::int64_t local, int rank, int world) { return local * world + rank; }
// The block the score kernel scores for a cell (== shard_block unless the contiguous-shard
// mutant is on: it scores r*LOCAL + l but the candidates still label it strided).
IXO_HD std::int64_t scored_block(std::int64_t local, int rank, int world, std::int64_t LOCAL, int mutant) {
  if (IXO_MUTANT(mutant, kMutCpContiguousShards)) return static_cast<std::int64_t>(rank) * LOCAL + local;
  return shard_block(local, rank, world);
}
// First cell whose scored block is >= nb: cells [0, end) cover blocks < nb (monotone in local).
IXO_HD std::int64_t local_end(std::int64_t nb, int rank, int world, std::int64_t LOCAL, int mutant) {
  std::int64_t e;
  if (IXO_MUTANT(mutant, kMutCpContiguousShards)) {
    e = nb - static_cast<std::int64_t>(rank) * LOCAL;
  } else {
    e = nb > rank ? ceil_div(nb - rank, world) : 0;
    if (IXO_MUTANT(mutant, mutants::cp_shard_end_floor)) e = nb > rank ? (nb - rank) / world : 0;
  }
  if (e < 0) e = 0;
  return e < LOCAL ? e : LOCAL;
}

// Ordered value of a cell: 0 invalid; else 1 + monotone score bits (NaN lowest, +0 above -0).
IXO_HD std::uint32_t cell_ord(float score) { return static_cast<std::uint32_t>(topk_key(score, 0) >> 32) + 1u; }
// Candidate key of a cell; 0 = none. Larger key ranks first: score desc, then lower block.
IXO_HD std::uint64_t cand_key(std::uint32_t ord, std::int64_t block) {
  if (ord == 0) return 0;
  return (static_cast<std::uint64_t>(ord) << kIdBits) | static_cast<std::uint64_t>((kMaxBlocks - 1) - block);
}
IXO_HD std::int32_t key_block(std::uint64_t key) {
  if (key == 0) return -1;
  return static_cast<std::int32_t>((kMaxBlocks - 1) - static_cast<std::int64_t>(key & (kMaxBlocks - 1)));
}

// Candidates a shard keeps per (head, row): topk (the mutant keeps topk / WORLD).
IXO_HD int shard_candidates(int topk, int world, int mutant) {
  if (IXO_MUTANT(mutant, kMutCpTopkOverWorld)) {
    const int k = topk / world;
    return k < 1 ? 1 : k;
  }
  return topk;
}

// Chunks of the shard score grid, graph-constant (batch = rows or packed groups, LOCAL shard
// cells): enough programs for one wave (kCpWavePrograms: 132 SMs x 2 CTAs of the H200),
// else at least 16 cells a program, never more than the power-of-two budget
// (common::num_kv_chunks) or LOCAL.
// Why (H200, bench_gpu_cp, one lease, 2026-12-01; score us, old plan -> this plan): a CP
// program's fixed cost (row facts, tile plan, pipeline start) is most of its time when it
// scores one cell; the old plan (min(budget, LOCAL)) gave 16 x 131072 packed 4096 programs
// of 1 cell (102 us -> 56 us with 256 programs of 16 cells), per-row 4096 of 4 cells
// (187 -> 163 us), and the 4-request ROCm-PR batch 1024 per-row programs of 1 cell
// (37 -> 23.5 us); fewer programs than one wave starve the SMs (that batch packed: 64
// programs of 4 cells 22.7 us, 16 of 16 cells 42 us, against 256 of 1 cell 16 us).
// Shard cells [l0, l1) of chunk c: common::chunk_blocks(LOCAL, ...).
constexpr std::int64_t kCpWavePrograms = 256;
IXO_HD int num_chunks(std::int64_t batch, std::int64_t LOCAL) {
  const std::int64_t b = batch < 1 ? 1 : batch;
  const std::int64_t wave = (kCpWavePrograms + b - 1) / b;  // chunks for one wave of programs
  std::int64_t want = wave > LOCAL / 16 ? wave : LOCAL / 16;
  if (want > LOCAL) want = LOCAL;
  if (want < 1) want = 1;
  const int c = num_kv_chunks(b, 1);
  return c < want ? c : static_cast<int>(want);
}

// Packing: pack * WORLD tile rows must fit one 16-row tile (common::pack_fits); tile row i
// of the tile starting at row `first` is (row first + i / WORLD, head i % WORLD)
// (common::tile_row with gqa = WORLD). Row facts and the tile's plan (K length, table row)
// are the native ones (plans.hpp: row_facts, group_plan), which also hold the CP mutants
// cp_group_shortest and cp_k_by_group_index.

// The nb a row is validated and forced with (its own; the mutant: the group's).
IXO_HD std::int64_t row_nb(const RowFacts& f, const GroupPlan& gp, int mutant) {
  if (IXO_MUTANT(mutant, kMutCpGroupBlockCount) && f.writes) return gp.nbg;
  return f.nb;
}
// Local window used for forcing (0 under the forced-local-dropped mutant).
IXO_HD int forced_local(int local_blocks, int mutant) {
  return IXO_MUTANT(mutant, kMutCpForcedLocalDropped) ? 0 : local_blocks;
}

// Whether cell (row f, block b) is scored by the MMA/dot pass (written there), given the
// group plan: the row writes scores, b is valid for it and b lies in the group's K range.
IXO_HD bool cell_scored(const RowFacts& f, const GroupPlan& gp, std::int64_t b, std::int64_t NB, int mutant) {
  return f.writes && b < row_nb(f, gp, mutant) && b < NB && b < gp.nbg;
}
// Value of every other cell: valid cells of trivial rows ord(0.0f), everything else 0
// (invalid; a valid non-trivial cell outside the group's K range -- only under a mutant --
// also keeps 0: never scored, never forced).
IXO_HD std::uint32_t cell_default(const RowFacts& f, const GroupPlan& gp, std::int64_t b, std::int64_t NB, int mutant) {
  const bool valid = f.active && b < row_nb(f, gp, mutant) && b < NB;
  if (IXO_MUTANT(mutant, mutants::cp_trivial_cells_invalid)) return 0u;
  return (valid && !f.writes) ? cell_ord(0.0f) : 0u;
}
// Value of a scored cell from its block score (forcing with the row's nb).
IXO_HD std::uint32_t cell_value(float score, const RowFacts& f, const GroupPlan& gp, std::int64_t b, int init,
                                int local, int mutant) {
  return cell_ord(forced_score(score, b, row_nb(f, gp, mutant), init, forced_local(local, mutant)));
}

// Buffer layouts. Shard cells of one rank: [WORLD (head), R, LOCAL], i.e.
// common::score_index(head, row, local, R, LOCAL).
// Candidate keys of one rank: [WORLD (head), R, topk]; gathered: [WORLD (src rank), ...].
IXO_HD std::int64_t cand_index(std::int64_t src, std::int64_t head, std::int64_t row, int k, int world, std::int64_t R,
                               int topk) {
  return ((src * world + head) * R + row) * topk + k;
}

}  // namespace ixo::common::cp
