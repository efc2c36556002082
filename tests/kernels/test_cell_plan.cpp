// common::locate_cell (kernels/common/cell_plan.hpp): hand-worked places of cells in the
// per-row and packed plans, and agreement with what the CPU twin writes: over the kernel
// matrix, a cell is "scored" exactly when the twin writes it (not poison).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "case_config.hpp"
#include "common/cell_plan.hpp"
#include "ixo_test/support.hpp"
#include "kernel_matrix.hpp"

namespace ixo::test {
namespace {

namespace cm = ixo::common;

// 6 rows, Hq 2 : Hk 1 (gqa 2), block 16, topk 1, packed_queries 4: rows 0-3 one request
// (lengths 61..64: 4 blocks each), rows 4 and 5 trailing (lengths 40 and 20: 3 and 2 blocks).
struct Batch {
  std::vector<std::int64_t> slot{0, 0, 0, 0, 1, 2}, lens{61, 62, 63, 64, 40, 20};
  cm::IndexConfig k;
  Batch() {
    k.R = 6, k.Hq = 2, k.Hk = 1, k.S = 1000, k.rows = 3, k.width = 64, k.NB = 4;
    k.block_size = 16, k.topk = 1, k.packed_queries = 4;
  }
  cm::CellPlace at(bool packed, int chunks, std::int64_t h, std::int64_t r, std::int64_t b) const {
    return cm::locate_cell(cm::row_inputs(k, slot.data(), lens.data()), k.R, cm::native_plan(k, packed, chunks), h, r,
                           b);
  }
};

TEST(CellPlan, PackedPlanPlacesAGroupRowInItsGroupsCtaAndChunk) {
  const Batch t;
  // Packed: batch 6/4 + 6%4 = 3 programs (group 0..3, row 4, row 5), 2 chunks, program-major.
  const cm::CellPlace c = t.at(true, 2, 1, 2, 3);
  ASSERT_TRUE(c.scored);
  EXPECT_EQ(c.program, 0);
  EXPECT_EQ(c.tile_first, 0);
  EXPECT_EQ(c.tile_pack, 4);
  EXPECT_EQ(c.tile_row, 5);  // (row 2 - 0) * gqa 2 + head 1
  EXPECT_EQ(c.chunk, 1);     // 4 blocks in 2 chunks: [0, 2), [2, 4)
  EXPECT_EQ(c.chunk_b0, 2);
  EXPECT_EQ(c.chunk_b1, 4);
  EXPECT_EQ(c.cta_x, 1);  // program 0 * 2 chunks + chunk 1
  EXPECT_EQ(c.kv_head, 0);
  // Trailing row 5 (2 blocks): program 2, its own tile of one row, chunk 0 = [0, 1).
  const cm::CellPlace d = t.at(true, 2, 0, 5, 0);
  ASSERT_TRUE(d.scored);
  EXPECT_EQ(d.program, 2);
  EXPECT_EQ(d.tile_first, 5);
  EXPECT_EQ(d.tile_pack, 1);
  EXPECT_EQ(d.tile_row, 0);
  EXPECT_EQ(d.chunk, 0);
  EXPECT_EQ(d.chunk_b1, 1);
  EXPECT_EQ(d.cta_x, 4);  // program 2 * 2 + chunk 0
}

TEST(CellPlan, PerRowPlanIsChunkMajor) {
  const Batch t;
  const cm::CellPlace c = t.at(false, 2, 1, 2, 3);
  ASSERT_TRUE(c.scored);
  EXPECT_EQ(c.program, 2);
  EXPECT_EQ(c.tile_pack, 1);
  EXPECT_EQ(c.tile_row, 1);  // head 1 of the row's gqa 2
  EXPECT_EQ(c.chunk, 1);
  EXPECT_EQ(c.cta_x, 8);  // chunk 1 * batch 6 + program 2
}

TEST(CellPlan, AGroupMixingSlotIdsRunsPerRowInsideItsProgram) {
  Batch t;
  t.slot[2] = 1;  // rows 0..3 no longer share a table row: four one-row tiles in program 0
  const cm::CellPlace c = t.at(true, 2, 1, 2, 3);
  ASSERT_TRUE(c.scored);
  EXPECT_EQ(c.program, 0);
  EXPECT_EQ(c.tile_first, 2);
  EXPECT_EQ(c.tile_pack, 1);
  EXPECT_EQ(c.tile_row, 1);
  EXPECT_EQ(c.cta_x, 1);
}

TEST(CellPlan, CellsNoProgramWritesAreNotScored) {
  Batch t;
  EXPECT_FALSE(t.at(true, 2, 0, 5, 2).scored);  // block 2 of a 2-block row
  t.lens[4] = 16;                               // one block <= topk 1: a trivial row
  EXPECT_FALSE(t.at(true, 2, 0, 4, 0).scored);
  t.slot[5] = 7;  // past the table's 3 rows: inactive
  EXPECT_FALSE(t.at(true, 2, 0, 5, 0).scored);
  EXPECT_FALSE(t.at(true, 2, 0, 6, 0).scored);  // no row 6
}

// Every cell of the matrix: scored by locate_cell <=> written by the CPU twin (the twin fills
// the buffer with poison first); both plans, the plan's chunks and 3 forced ones.
TEST(CellPlan, ScoredExactlyWhereTheTwinWrites) {
  std::int64_t scored = 0, cells = 0;
  for (const NamedCase& nc : kernel_cases_subset(3)) {
    const Case c = nc.make();
    for (const bool packed : {false, true})
      for (const int chunks : {0, 3}) {
        RunOptions opt;
        opt.force_num_chunks = chunks;
        const Observed o = make_backend(packed ? "cpu-packed" : "cpu-rows")->run(c, opt);
        const cm::IndexConfig k = index_config(c);
        const cm::NativePlan p = cm::native_plan(k, packed, chunks);
        const cm::RowInputs in = cm::row_inputs(k, c.slot_ids.data(), c.seq_lens.data());
        for (std::int64_t h = 0; h < c.Hq; ++h)
          for (std::int64_t r = 0; r < c.R; ++r)
            for (std::int64_t b = 0; b < c.NB(); ++b) {
              std::uint32_t bits;
              std::memcpy(&bits, &o.scores[static_cast<std::size_t>((h * c.R + r) * c.NB() + b)], 4);
              const cm::CellPlace at = cm::locate_cell(in, c.R, p, h, r, b);
              ASSERT_EQ(at.scored, bits != kScorePoisonBits) << nc.name << (packed ? " packed" : " rows") << " chunks "
                                                             << chunks << " cell " << h << "," << r << "," << b;
              if (at.scored) {
                ASSERT_GE(b, at.chunk_b0);
                ASSERT_LT(b, at.chunk_b1);
                ASSERT_LT(at.cta_x, p.grid_x());
              }
              scored += at.scored;
              ++cells;
            }
      }
  }
  EXPECT_GT(scored, 0);
  EXPECT_LT(scored, cells);  // both outcomes met
}

}  // namespace
}  // namespace ixo::test
