// The context-parallel twin (cpu-cp) on the host. Label cp.
//  * (the kernel case matrix runs cpu-cp in the one testbed, tests/kernels/test_kernel_matrix.cpp:
//    vs the oracle, ids == cpu-rows ids, packed CP == per-row CP);
//  * WORLD 1/2/4/8, the ROCm PR's verify batch (bf16, e4m3fnuz), permuted gapped slots,
//    graph padding, a long context whose winners sit in one shard;
//  * real CUDA-graph batches (packed_queries a launch hint): groups mixing slot ids, R not a
//    multiple of P, padding rows alone and in whole groups, inactive rows inside and after
//    groups (the matrix's graph_* cases, tests/support graph_batch_edits, the graph-padded
//    preset at WORLD 4). Seen to fail with group_packs ignoring slot ids and with the
//    trailing rows dropped (packed_batch = R / P) injected in kernels/common;
//  * the CP formulas (shard mapping, keys, plan) and supports();
//  * every CP mutant is killed by at least one of these inputs (mutant builds).
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>

#include "backend.hpp"
#include "cp_cases.hpp"
#include "cp_common.hpp"
#include "cpu/cp_twin.hpp"
#include "ixo/error.hpp"
#include "ixo_test/support.hpp"
#include "ixo_test/testbed.hpp"

namespace {

using ixo::Case;
using ixo::Observed;
using ixo::RunOptions;
using ixo::test::judge_every_backend;
using ixo::test::judged_by;
namespace cc = ixo::common::cp;
namespace ct = ixo::cptest;

Observed run_cp(const Case& c, bool pack = true, const RunOptions& opt = {}) {
  return ixo::make_cpu_cp_backend(pack)->run(c, opt);
}

// Every CPU backend through the one testbed (tests/support/testbed.hpp): cpu-cp against the
// oracle, its ids == cpu-rows ids bit for bit, packed CP == its per-row plan; cpu-rows and
// cpu-packed against the oracle.
void check_case(const Case& c, bool exact, const std::string& what) {
  std::string why;
  ASSERT_TRUE(ixo::cp::supported(c, &why)) << why;
  ixo::test::TestbedChecks checks;
  checks.per_row_plan = true;
  EXPECT_TRUE(judged_by(judge_every_backend(c, what, exact, RunOptions{}, checks), "cpu-cp"));
}

TEST(Cp, WorldSizes) {
  for (int world : {1, 2, 4, 8})
    for (int p : {1, 3, 4}) {
      const auto spec = ct::world_spec(world, p);
      const Case c = ixo::generate(spec, 100 + world * 10 + p);
      const auto plan = ixo::cp::plan_for(c, true, {});
      EXPECT_EQ(plan.world, world);
      EXPECT_EQ(plan.pack, (p > 1 && p * world <= 16) ? p : 1) << "world " << world << " pack " << p;
      check_case(c, false, "world " + std::to_string(world) + " draft rows " + std::to_string(p));
      auto ex = spec;
      ex.values = ixo::Values::exact;
      check_case(ixo::generate(ex, 7 + world), true, "exact world " + std::to_string(world));
    }
}

TEST(Cp, RocmPrVerifyBatch) {
  for (ixo::KDtype k : {ixo::KDtype::bf16, ixo::KDtype::e4m3fnuz}) {
    const Case c = ixo::generate(ct::rocm_pr_spec(k), 41488);
    ASSERT_EQ(c.seq_lens.front(), 32767);
    ASSERT_EQ(c.seq_lens.back(), 32770);
    for (std::int64_t r = 0; r < c.R; ++r) ASSERT_NE(c.slot_ids[r], r / 4) << "slot equals the group index";
    const auto plan = ixo::cp::plan_for(c, true, {});
    EXPECT_EQ(plan.pack, 4);
    EXPECT_EQ(plan.LOCAL, 65);
    check_case(c, false, std::string("rocm pr ") + std::string(ixo::to_string(k)));
  }
}

TEST(Cp, SlotsPaddingInactive) {
  auto s = ct::world_spec(4, 4);
  s.request_slots = {5, 2, 7, 1};
  s.requests = 4;
  check_case(ixo::generate(s, 1), false, "explicit slots");
  s = ct::world_spec(4, 4);
  s.padding_requests = 2;
  s.inactive_requests = 1;
  check_case(ixo::generate(s, 2), false, "padding + inactive");
  s = ct::world_spec(2, 4);
  s.cfg.block_size = 2;  // padding rows (L 2..5) with nb up to 3 > topk 2: scored
  s.cfg.topk = 2;
  s.cfg.init_blocks = 0;
  s.max_prefix = 40;
  s.padding_requests = 2;
  check_case(ixo::generate(s, 3), false, "non-trivial padding");
  // M3 verify rows on graph padding next to long rows (init 1, local 2, WORLD 4).
  auto m = ct::rocm_pr_spec(ixo::KDtype::bf16);
  m.requests = 2;
  m.prefixes = {128 * 30 + 126, 128 * 9 - 1};
  m.padding_requests = 2;
  check_case(ixo::generate(m, 4), false, "M3 padding");
}

TEST(Cp, WinnersInOneShard) {
  for (int world : {2, 4})
    for (int shard = 0; shard < world; ++shard) {
      const Case c = ct::winners_in_one_shard(world, shard, 255 * 128 + 126, 1);
      check_case(c, true, "winners in shard " + std::to_string(shard) + " of " + std::to_string(world));
      // Every non-forced winner of head h sits in shard (shard + h) mod WORLD.
      const Observed o = run_cp(c);
      for (std::int64_t h = 0; h < c.Hq; ++h)
        for (std::int64_t r = 0; r < c.R; ++r) {
          const std::int64_t nb = (c.seq_lens[r] + 127) / 128;
          int in_shard = 0;
          for (int i = 0; i < 16; ++i) {
            const int b = o.topk_idx[(h * c.R + r) * 16 + i];
            in_shard += (b % world == (shard + h) % world) && b != 0 && b < nb - 2;
          }
          EXPECT_EQ(in_shard, 13) << "head " << h << " row " << r;
        }
    }
}

TEST(Cp, ChunkPlanIndependent) {
  const Case c = ixo::generate(ct::rocm_pr_spec(ixo::KDtype::e4m3fnuz), 9);
  const Observed base = run_cp(c);
  for (int chunks : {1, 3, 64, 100}) {
    RunOptions o;
    o.force_num_chunks = chunks;
    EXPECT_TRUE(ixo::test::bitwise_equal(base, run_cp(c, true, o), c, "chunks " + std::to_string(chunks)));
  }
}

TEST(Cp, Formulas) {
  // Strided shards: rank r owns r, r + W, ...; LOCAL = ceil(NB / W).
  EXPECT_EQ(cc::local_blocks(257, 4), 65);
  EXPECT_EQ(cc::shard_block(3, 2, 4), 14);
  EXPECT_EQ(cc::local_end(257, 0, 4, 65, 0), 65);
  EXPECT_EQ(cc::local_end(257, 1, 4, 65, 0), 64);
  EXPECT_EQ(cc::local_end(2, 3, 4, 65, 0), 0);
  EXPECT_EQ(cc::local_end(7, 2, 4, 2, 0), 2);
  for (int W : {1, 2, 3, 4, 8})
    for (int nb = 0; nb < 40; ++nb)
      for (int r = 0; r < W; ++r) {
        const std::int64_t LOCAL = cc::local_blocks(40, W);
        const std::int64_t e = cc::local_end(nb, r, W, LOCAL, 0);
        for (std::int64_t l = 0; l < LOCAL; ++l) EXPECT_EQ(l < e, cc::shard_block(l, r, W) < nb);
      }
  // Keys: score desc, then lower block; 0 = none; NaN above none, below -inf.
  const auto k = [](float s, std::int64_t b) { return cc::cand_key(cc::cell_ord(s), b); };
  EXPECT_GT(k(2.0f, 9), k(1.0f, 0));
  EXPECT_GT(k(1.0f, 3), k(1.0f, 4));
  EXPECT_GT(k(0.0f, 5), k(-0.0f, 5));
  EXPECT_GT(k(-INFINITY, 65535), k(NAN, 0));
  EXPECT_GT(k(NAN, 65535), 0u);
  EXPECT_EQ(cc::cand_key(0, 7), 0u);
  EXPECT_EQ(cc::key_block(k(3.5f, 65535)), 65535);
  EXPECT_EQ(cc::key_block(k(3.5f, 0)), 0);
  EXPECT_EQ(cc::key_block(0), -1);
  EXPECT_EQ(cc::shard_candidates(16, 4, 0), 16);  // never topk / WORLD
  EXPECT_TRUE(ixo::common::pack_fits(4, 4));      // pack * WORLD <= 16
  EXPECT_FALSE(ixo::common::pack_fits(5, 4));
  EXPECT_FALSE(ixo::common::pack_fits(4, 8));
  const auto t = ixo::common::tile_row(9, 4, 4);
  EXPECT_EQ(t.draft, 2);
  EXPECT_EQ(t.head, 1);
  // Chunk plan: max(ceil(256 / batch), LOCAL / 16) chunks, at most LOCAL and the
  // power-of-two budget (4096 / batch in [1, 256]).
  EXPECT_EQ(cc::num_chunks(16, 65), 16);      // wave 16 > 65 / 16 = 4
  EXPECT_EQ(cc::num_chunks(4, 1000), 64);     // wave 64 > 62
  EXPECT_EQ(cc::num_chunks(48, 100000), 64);  // 6250 cells-per-16 > budget 4096 / 48 = 85 -> 64
  EXPECT_EQ(cc::num_chunks(8192, 1000), 1);   // budget 0 -> 1
  EXPECT_EQ(cc::num_chunks(16, 15), 15);      // wave 16, at most LOCAL
  EXPECT_EQ(cc::num_chunks(4, 64), 64);       // bench ROCm-PR packed: 256 programs of 1 cell
  EXPECT_EQ(cc::num_chunks(16, 256), 16);     // bench 16 x 131072 packed: 256 programs of 16 cells
  EXPECT_EQ(cc::num_chunks(64, 256), 16);     // per-row: 1024 programs of 16 cells
  EXPECT_EQ(cc::num_chunks(128, 1024), 32);   // 32 x 524288 per-row: budget 32
}

TEST(Cp, SupportsAndRejects) {
  auto be = ixo::make_cpu_cp_backend();
  std::string why;
  auto s = ct::world_spec(4, 4);
  s.Hq = 4;
  s.Hk = 2;
  const Case hk2 = ixo::generate(s, 1);
  EXPECT_FALSE(be->supports(hk2, &why));
  EXPECT_NE(why.find("Hk"), std::string::npos);
  EXPECT_THROW(be->run(hk2), ixo::InputError);
  s = ct::world_spec(4, 4);
  s.cfg.topk = 65;
  EXPECT_FALSE(be->supports(ixo::generate(s, 1), &why));
  s = ct::world_spec(4, 4);
  Case wide = ixo::generate(s, 1);
  wide.cfg.block_size = 1;
  wide.width = 65537;  // NB 65537: block ids past the 16-bit field
  EXPECT_FALSE(be->supports(wide, &why));
  EXPECT_NE(why.find("16-bit"), std::string::npos);
  s = ct::world_spec(16, 1);
  EXPECT_TRUE(be->supports(ixo::generate(s, 1), &why));
  s.Hq = 17;
  EXPECT_FALSE(be->supports(ixo::generate(s, 1), &why));
  // A group whose rows do not share a slot is a valid batch (packed_queries is a launch
  // hint): CP runs its rows per row, with the per-row plan's ids.
  Case mixed = ixo::generate(ct::world_spec(2, 4), 5);
  std::swap(mixed.slot_ids[0], mixed.slot_ids[4]);
  check_case(mixed, false, "mixed group");
}

TEST(Cp, GraphBatchEdits) {
  const Case base = ixo::generate(ixo::test::graph_edit_base_spec(), 1010);
  for (const auto& ed : ixo::test::graph_batch_edits(base)) {
    SCOPED_TRACE(ed.name + ": " + ed.what);
    check_case(ed.c, false, ed.name);
    const auto plan = ixo::cp::plan_for(ed.c, true, {});
    EXPECT_EQ(plan.pack, ed.c.cfg.packed_queries);
    EXPECT_EQ(plan.groups, ed.c.R / plan.pack + ed.c.R % plan.pack);
  }
}

TEST(Cp, GraphPaddedPresetWorld4) {
  // The graph-padded preset (M3 shapes, R 25 with P 4) at WORLD 4, bf16 and e4m3fnuz.
  for (ixo::KDtype k : {ixo::KDtype::bf16, ixo::KDtype::e4m3fnuz}) {
    auto s = ixo::preset("graph-padded");
    s.Hq = 4;
    s.cfg.init_blocks = 1;
    s.cfg.local_blocks = 2;
    s.cfg.k_dtype = k;
    s.max_prefix = 3000;
    const Case c = ixo::generate(s, 12);
    ASSERT_NE(c.R % c.cfg.packed_queries, 0);
    check_case(c, false, std::string("graph-padded ") + std::string(ixo::to_string(k)));
  }
}

// ---- Mutants: each CP mutant changes the ids of at least one input above ---------------
bool mutants_compiled() { return IXO_MUTANT(cc::kMutCpContiguousShards, cc::kMutCpContiguousShards); }

struct Killer {
  int id;
  const char* bug;
};

TEST(CpMutants, EachIsKilled) {
  if (!mutants_compiled()) GTEST_SKIP() << "mutant switches not compiled (IXO_MUTANTS=OFF)";
  std::vector<Case> cases;
  cases.push_back(ixo::generate(ct::rocm_pr_spec(ixo::KDtype::bf16), 41488));
  cases.push_back(ct::winners_in_one_shard(4, 1, 255 * 128 + 126, 1));
  cases.push_back(ixo::generate(ct::world_spec(4, 4), 77));
  const Killer killers[] = {
      {cc::kMutCpContiguousShards, "contiguous shard ranges instead of strided"},
      {cc::kMutCpTopkOverWorld, "topk / WORLD candidates per shard"},
      {cc::kMutCpGroupBlockCount, "group's block count for each row"},
      {ixo::mutants::cp_group_shortest, "group sized by its shortest row"},
      {cc::kMutCpForcedLocalDropped, "forced local dropped"},
      {ixo::mutants::cp_k_by_group_index, "K addressed by group index"},
  };
  std::vector<Observed> base;
  for (const auto& c : cases) base.push_back(run_cp(c));
  for (const Killer& k : killers) {
    RunOptions opt;
    opt.mutant = k.id;
    std::string killed_by;
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const auto n = ct::differing_rows(base[i], run_cp(cases[i], true, opt));
      if (n > 0) killed_by += " case " + std::to_string(i) + " (" + std::to_string(n) + " rows)";
    }
    EXPECT_FALSE(killed_by.empty()) << "mutant " << k.id << " (" << k.bug << ") survived";
    std::printf("mutant %d (%s): killed by%s\n", k.id, k.bug, killed_by.c_str());
  }
}

}  // namespace
