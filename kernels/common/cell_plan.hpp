// Where the native plan (per-row or packed) scores one cell: the CTA, the row-axis program,
// the tile and tile row, the KV chunk and its blocks, the K head. For failure reports (`ixo
// diff`, the kernel tests' saved cases). Host only. It asks the functions every native
// backend runs (native_plan, program_tiles, group_plan, plan_chunk_blocks, plan_program_chunk,
// tile_row) which program holds the cell, by search, so it cannot disagree with them.
#pragma once
#include <cstdint>

#include "plans.hpp"

namespace ixo::common {

struct CellPlace {
  bool scored = false;        // some program writes score cell (h, r, b)
  std::int64_t cta_x = -1;    // score grid x (blockIdx.x); grid y is kv_head
  std::int64_t program = -1;  // row-axis program (a packed group, a trailing row, or one row)
  int kv_head = -1;
  int chunk = -1;                           // KV chunk of the program, of plan.chunks
  std::int64_t chunk_b0 = 0, chunk_b1 = 0;  // the chunk's blocks [b0, b1) of its tile's length
  std::int64_t tile_first = -1;             // the tile's rows [tile_first, tile_first + tile_pack)
  int tile_pack = 0;
  int tile_row = -1;  // row of the MMA tile: (draft, q head) = tile_row(i, pack, gqa)
};

// Cell (q head h, row r, block b) under plan p (native_plan of the launch). Not scored: rows
// that write no score column (inactive, nb <= topk) and blocks past the row's own nb.
inline CellPlace locate_cell(const RowInputs& in, std::int64_t R, const NativePlan& p, std::int64_t h, std::int64_t r,
                             std::int64_t b) {
  CellPlace c;
  if (r < 0 || r >= R || b < 0 || p.gqa < 1) return c;
  const RowFacts f = row_facts(in, r);
  if (!f.writes || b >= f.nb) return c;
  const int kvh = static_cast<int>(h / p.gqa);
  for (std::int64_t x = 0; x < p.batch && c.program < 0; ++x) {
    const ProgramTiles pt = program_tiles(in.slot, x, R, p.pack);
    for (int t = 0; t < pt.count; ++t) {
      const std::int64_t first = pt.first + static_cast<std::int64_t>(t) * pt.pack;
      if (r < first || r >= first + pt.pack) continue;
      c.program = x;
      c.tile_first = first;
      c.tile_pack = pt.pack;
      for (int i = 0; i < pt.pack * p.gqa; ++i) {
        const TileRow tr = tile_row(i, pt.pack, p.gqa);
        if (tile_query_row(first, tr) == r && tile_query_head(kvh, p.gqa, tr) == h) c.tile_row = i;
      }
      const GroupPlan g = group_plan(in, first, pt.pack);
      for (int ch = 0; ch < p.chunks; ++ch) {
        std::int64_t b0 = 0, b1 = 0;
        plan_chunk_blocks(p, g.nbg, x, kvh, ch, &b0, &b1);
        if (b >= b0 && b < b1) {
          c.chunk = ch;
          c.chunk_b0 = b0;
          c.chunk_b1 = b1;
        }
      }
    }
  }
  if (c.program < 0 || c.chunk < 0 || c.tile_row < 0) return c;
  for (std::int64_t x = 0; x < p.grid_x(); ++x) {
    const ProgramChunk pc = plan_program_chunk(p, x);
    if (pc.program == c.program && pc.chunk == c.chunk) c.cta_x = x;
  }
  c.kv_head = kvh;
  c.scored = c.cta_x >= 0;
  return c;
}

}  // namespace ixo::common
