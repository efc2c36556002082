// Host-callable description of the score kernels' launch plan (the grid and the chunk plan),
// for tests and tools; plain C++, no CUDA/HIP headers. It restates what indexer_launch.inl
// and the score kernels do, from kernels/common only:
//   - the grid is (batch * chunks, Hk) with batch = common::packed_batch(R, pack) (R per row;
//     R / P whole groups + R % P trailing rows packed), computed from graph-constant values
//     only (R, Hk, NB, packed_queries, the forced chunk count), never from slot ids or seq_lens;
//   - program (x, y) covers row-axis index x / chunks, chunk c = x % chunks, K head y; its
//     tiles are common::program_tiles (one packed tile for a whole group sharing one slot id,
//     else one tile per row, decided from slot_ids on the device);
//   - a tile's length is its longest *writable* row (active and nb > topk: common::group_plan)
//     and its blocks [b0, b1) = common::chunk_blocks(nb(Lg), chunks, c); a row of the tile
//     writes block b of that range only when b < its own nb.
// tests/gpu/test_gpu_graph.cpp checks that the grids of a captured CUDA graph equal
// score_grid() here, so this header cannot drift from the launch code unnoticed; the CPU test
// tests/graph/test_graph_plan.cpp checks that the plan for maximum shapes covers every
// (row, head, block) of any smaller batch exactly once.
#pragma once
#include <cstdint>

#include "indexer_common.hpp"
#include "plans.hpp"
#include "gpu/indexer_launch.hpp"

namespace ixo::gpu::plan {

// gpu::packed_supported's rule (common::packed_plan_fits: P > 1, P * Hq/Hk <= 16; any R).
inline bool packed_fits(const IndexArgs& a) { return common::packed_plan_fits(a.packed_queries, a.Hq, a.Hk); }

// Rows per program: packed_queries on the packed path when the pack fits, else 1.
inline int score_pack(const IndexArgs& a, bool packed) { return packed && packed_fits(a) ? a.packed_queries : 1; }

// Chunk count: common::score_chunks (num_kv_chunks(batch, Hk, kScoreGridPrograms) capped at
// max(1, NB / 16), or num_chunks when forced).
inline int score_chunks(const IndexArgs& a, int pack) {
  return common::score_chunks(common::packed_batch(a.R, pack), a.Hk, a.NB, a.num_chunks);
}

struct ScoreGrid {
  int pack = 1;
  int chunks = 1;
  std::int64_t batch = 0;  // programs along the row axis: common::packed_batch(R, pack)
  std::int64_t x = 0;      // gridDim.x = batch * chunks (CTA order: common::program_chunk)
  std::int64_t y = 0;      // gridDim.y = Hk
};

// The score kernel's grid of launch_score_rows (packed = false) or launch_score_packed.
inline ScoreGrid score_grid(const IndexArgs& a, bool packed) {
  ScoreGrid g;
  g.pack = score_pack(a, packed);
  g.chunks = score_chunks(a, g.pack);
  g.batch = common::packed_batch(a.R, g.pack);
  g.x = g.batch * g.chunks;
  g.y = a.Hk;
  return g;
}

// The top-k kernel's grid: one program per (head, row).
inline std::int64_t topk_grid(const IndexArgs& a) { return a.Hq * a.R; }

// The row facts the plans read (host arrays of the graph-constant length R).
inline common::RowInputs row_inputs(const IndexArgs& a, const std::int64_t* slot_ids, const std::int64_t* seq_lens) {
  return common::RowInputs{slot_ids, seq_lens, a.S, a.rows, a.block_size, a.topk};
}

// Whether row r writes score columns (active and nb > topk: common::row_facts), and its nb.
inline bool row_writes(const IndexArgs& a, const std::int64_t* slot_ids, const std::int64_t* seq_lens, std::int64_t r,
                       std::int64_t* nb) {
  const common::RowFacts f = common::row_facts(row_inputs(a, slot_ids, seq_lens), r);
  *nb = f.nb;
  return f.writes;
}

// One tile of a program: rows [first, first + pack) and the blocks [b0, b1) it covers
// (empty when the tile has no writable row).
struct TileBlocks {
  std::int64_t first = 0;
  int pack = 1;
  std::int64_t b0 = 0, b1 = 0;
};

// The tiles of program x of the grid (at most common::kTileRows), with their blocks, as the
// score kernels compute them from the slot ids and lengths of the batch. Returns the count.
inline int program_tiles(const IndexArgs& a, const ScoreGrid& g, const std::int64_t* slot_ids,
                         const std::int64_t* seq_lens, std::int64_t x, TileBlocks* out) {
  const int c = static_cast<int>(x % g.chunks);
  const common::ProgramTiles pt = common::program_tiles(slot_ids, x / g.chunks, a.R, g.pack);
  for (int t = 0; t < pt.count; ++t) {
    TileBlocks& tb = out[t];
    tb.first = pt.first + static_cast<std::int64_t>(t) * pt.pack;
    tb.pack = pt.pack;
    const common::GroupPlan gp = common::group_plan(row_inputs(a, slot_ids, seq_lens), tb.first, pt.pack);
    tb.b0 = tb.b1 = 0;
    if (gp.Lg > 0) common::chunk_blocks(gp.nbg, g.chunks, c, &tb.b0, &tb.b1);
  }
  return pt.count;
}

}  // namespace ixo::gpu::plan
