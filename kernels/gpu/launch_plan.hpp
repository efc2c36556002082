// Host-callable description of the score kernels' launch plan (the grid and the chunk plan),
// for tests and tools; plain C++, no CUDA/HIP headers. The grid is common::native_plan, the
// same call the launcher (indexer_launch.inl) and the CPU twin make:
//   - the grid is (batch * chunks, Hk) with batch = common::packed_batch(R, pack) (R per row;
//     R / P whole groups + R % P trailing rows packed), computed from graph-constant values
//     only (R, Hk, NB, packed_queries, the forced chunk count), never from slot ids or seq_lens;
//   - program (x, y) covers row-axis index x / chunks, chunk c = x % chunks, K head y (the round plan of
//     row 57, common/round_plan.hpp: x % batch, x / batch); its
//     tiles are common::program_tiles (one packed tile for a whole group sharing one slot id,
//     else one tile per row, decided from slot_ids on the device);
//   - a tile's length is its longest *writable* row (active and nb > topk: common::group_plan)
//     and its blocks [b0, b1) = common::plan_chunk_blocks(plan, nb(Lg), ...); a row of the tile
//     writes block b of that range only when b < its own nb.
// tests/gpu/test_gpu_graph.cpp checks that the grids of a captured CUDA graph equal
// score_grid() here; the CPU test tests/graph/test_graph_plan.cpp checks that the plan for
// maximum shapes covers every (row, head, block) of any smaller batch exactly once.
#pragma once
#include <cstdint>

#include "indexer_common.hpp"
#include "plans.hpp"
#include "gpu/indexer_launch.hpp"

namespace ixo::gpu::plan {

using ScoreGrid = common::NativePlan;

// The score kernel's grid of launch_score_rows (packed = false) or launch_score_packed: the
// launcher's own common::native_plan (x = batch * chunks in common::program_chunk order, y = Hk).
inline common::NativePlan score_grid(const IndexArgs& a, bool packed) {
  return common::native_plan(a, packed, a.num_chunks);
}

// The top-k kernel's grid: one program per (head, row).
inline std::int64_t topk_grid(const IndexArgs& a) { return a.Hq * a.R; }

// The row facts the plans read: common::row_inputs (host arrays of the graph-constant length R).
using common::row_inputs;

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

// The tiles of program (x, kvh) of the grid (at most common::kTileRows), with their blocks, as the
// score kernels compute them from the slot ids and lengths of the batch. Returns the count.
inline int program_tiles(const IndexArgs& a, const ScoreGrid& g, const std::int64_t* slot_ids,
                         const std::int64_t* seq_lens, std::int64_t x, int kvh, TileBlocks* out) {
  const common::ProgramChunk pc = common::plan_program_chunk(g, x);
  const int c = pc.chunk;
  const common::ProgramTiles pt = common::program_tiles(slot_ids, pc.program, a.R, g.pack);
  for (int t = 0; t < pt.count; ++t) {
    TileBlocks& tb = out[t];
    tb.first = pt.first + static_cast<std::int64_t>(t) * pt.pack;
    tb.pack = pt.pack;
    const common::GroupPlan gp = common::group_plan(row_inputs(a, slot_ids, seq_lens), tb.first, pt.pack);
    tb.b0 = tb.b1 = 0;
    if (gp.Lg > 0) common::plan_chunk_blocks(g, gp.nbg, pc.program, kvh, c, &tb.b0, &tb.b1);
  }
  return pt.count;
}

}  // namespace ixo::gpu::plan
