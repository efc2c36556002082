// The CP host rules at their edges (label cp): cp::supported at each limit and one past it,
// and cp::plan_for's chunk plan (batch and LOCAL in that order). Shapes only: no tensors,
// no kernel run. Written for operator mutants the `ixo mutate` suite let survive
// (docs/mutation.md, "Over the CP formulas and the CPU twin"):
//  * `c.NB() > kMaxBlocks` -> `>=` (cp_plan.hpp) rejects NB == 65536, the largest block
//    count whose ids fit the key's 16-bit field; no suite case has NB that large;
//  * `num_chunks(p.groups, p.LOCAL)` -> `num_chunks(p.LOCAL, p.groups)` and
//    `p.pack = pack ? P : 1` -> `pack ? 1 : P` (cp_plan.hpp): the CPU twin's outputs do not
//    depend on the chunk plan or on the pack (packed == per-row bit for bit), so only the
//    plan itself can show them (on the GPU a pack past 16 tile rows overflows the tile).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "backend.hpp"
#include "cp_common.hpp"
#include "cp_plan.hpp"
#include "ixo/case.hpp"

namespace {

namespace cc = ixo::common::cp;

// A case with the given shape and no tensors (supported/plan_for read shapes only).
ixo::Case shape(std::int64_t R, std::int64_t Hq, std::int64_t NB, int topk = 16, int bs = 64, int P = 1) {
  ixo::Case c;
  c.R = R;
  c.Hq = Hq;
  c.Hk = 1;
  c.cfg.block_size = bs;
  c.cfg.topk = topk;
  c.cfg.packed_queries = P;
  c.width = NB * bs;
  return c;
}

TEST(CpPlanEdges, SupportedAtEachLimitAndOnePast) {
  std::string why;
  EXPECT_EQ(shape(1, 1, cc::kMaxBlocks).NB(), 65536);
  EXPECT_TRUE(ixo::cp::supported(shape(1, 1, cc::kMaxBlocks), &why)) << why;  // ids 0..65535 fit 16 bits
  EXPECT_FALSE(ixo::cp::supported(shape(1, 1, cc::kMaxBlocks + 1), &why));
  EXPECT_NE(why.find("65537"), std::string::npos) << why;
  EXPECT_TRUE(ixo::cp::supported(shape(1, cc::kMaxWorld, 64), &why)) << why;
  EXPECT_FALSE(ixo::cp::supported(shape(1, cc::kMaxWorld + 1, 64), &why));
  EXPECT_TRUE(ixo::cp::supported(shape(1, 1, 64, cc::kMaxCandidates), &why)) << why;
  EXPECT_FALSE(ixo::cp::supported(shape(1, 1, 64, cc::kMaxCandidates + 1), &why));
  EXPECT_TRUE(ixo::cp::supported(shape(1, 1, 64, 1), &why)) << why;
  EXPECT_FALSE(ixo::cp::supported(shape(1, 1, 64, 0), &why));
}

// plan_for hands num_chunks (batch = groups, LOCAL shard cells) in that order.
TEST(CpPlanEdges, ChunkPlanTakesGroupsThenLocal) {
  const ixo::RunOptions none;
  // 64 rows per-row, WORLD 4, NB 1024: LOCAL 256, 1024 programs of 16 cells.
  const auto rows = ixo::cp::plan_for(shape(64, 4, 1024), false, none);
  EXPECT_EQ(rows.groups, 64);
  EXPECT_EQ(rows.LOCAL, 256);
  EXPECT_EQ(rows.chunks, 16);
  // 16 rows of 131072 tokens packed by 4 (bs 64, WORLD 4): 4 groups, LOCAL 512.
  const auto packed = ixo::cp::plan_for(shape(16, 4, 2048, 16, 64, 4), true, none);
  EXPECT_EQ(packed.pack, 4);
  EXPECT_EQ(packed.groups, 4);
  EXPECT_EQ(packed.LOCAL, 512);
  EXPECT_EQ(packed.chunks, 64);  // wave 64 > 512 / 16 = 32; budget 4096 / 4 -> 256
  // Packing only when allowed and P * WORLD fits the 16-row tile.
  EXPECT_EQ(ixo::cp::plan_for(shape(16, 4, 2048, 16, 64, 4), false, none).pack, 1);
  EXPECT_EQ(ixo::cp::plan_for(shape(16, 4, 2048, 16, 64, 5), true, none).pack, 1);  // 5 * 4 > 16
  EXPECT_EQ(ixo::cp::plan_for(shape(15, 4, 2048, 16, 64, 5), true, none).groups, 15);
  // A forced chunk count wins.
  ixo::RunOptions forced;
  forced.force_num_chunks = 3;
  EXPECT_EQ(ixo::cp::plan_for(shape(64, 4, 1024), false, forced).chunks, 3);
}

}  // namespace
