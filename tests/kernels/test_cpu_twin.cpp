// The CPU twin (cpu-rows, cpu-packed) against the oracle on the kernel case matrix, plus
// the twin's own invariants: packed == per-row bitwise, chunk-plan and thread-count
// independence, the poison contract, the launch plan, and a hand-computed case.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <memory>

#include "backend.hpp"
#include "cpu/cpu_backends.hpp"
#include "indexer_common.hpp"
#include "ixo/error.hpp"
#include "ixo_test/support.hpp"

namespace {

using ixo::Case;
using ixo::Observed;
using ixo::RunOptions;
using ixo::test::NamedCase;

Observed run(const std::string& backend, const Case& c, const RunOptions& opt = {}) {
  return ixo::make_backend(backend)->run(c, opt);
}

RunOptions chunks(int n) {
  RunOptions o;
  o.force_num_chunks = n;
  return o;
}

class CpuTwinMatrix : public ::testing::TestWithParam<NamedCase> {};

// Tiers 1-2 (3 for exact cases) with scores within tau and the poison check.
TEST_P(CpuTwinMatrix, RowsMatchOracle) {
  const Case c = GetParam().make();
  const auto e = ixo::oracle(c);
  EXPECT_TRUE(ixo::test::matches_oracle(c, e, run("cpu-rows", c), GetParam().exact_ids, "cpu-rows"));
}

TEST_P(CpuTwinMatrix, PackedMatchesOracle) {
  const Case c = GetParam().make();
  const auto e = ixo::oracle(c);
  EXPECT_TRUE(ixo::test::matches_oracle(c, e, run("cpu-packed", c), GetParam().exact_ids, "cpu-packed"));
}

// Tier 4: packing shares K loads but runs each row's own arithmetic.
TEST_P(CpuTwinMatrix, PackedEqualsRowsBitwise) {
  const Case c = GetParam().make();
  EXPECT_TRUE(ixo::test::bitwise_equal(run("cpu-rows", c), run("cpu-packed", c), c, "cpu-rows vs cpu-packed"));
}

// Every block lies wholly in one chunk: 1 chunk, 3 chunks and the default plan agree.
TEST_P(CpuTwinMatrix, ChunkPlanIndependent) {
  const Case c = GetParam().make();
  for (const char* b : {"cpu-rows", "cpu-packed"}) {
    const Observed base = run(b, c);
    EXPECT_TRUE(ixo::test::bitwise_equal(base, run(b, c, chunks(1)), c, std::string(b) + " default vs 1 chunk"));
    EXPECT_TRUE(ixo::test::bitwise_equal(base, run(b, c, chunks(3)), c, std::string(b) + " default vs 3 chunks"));
  }
}

// Each cell is written by one program in a fixed order: 1 thread == 2 threads.
TEST_P(CpuTwinMatrix, ThreadCountIndependent) {
  const Case c = GetParam().make();
  for (const char* b : {"cpu-rows", "cpu-packed"}) {
    omp_set_num_threads(1);
    const Observed one = run(b, c);
    omp_set_num_threads(2);
    const Observed two = run(b, c);
    EXPECT_TRUE(ixo::test::bitwise_equal(one, two, c, std::string(b) + " 1 thread vs 2 threads"));
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, CpuTwinMatrix, ::testing::ValuesIn(ixo::test::kernel_cases()),
                         ixo::test::case_param_name);

const NamedCase& named(const std::string& name) {
  for (const auto& nc : ixo::test::kernel_cases())
    if (nc.name == name) return nc;
  throw std::runtime_error("no kernel case " + name);
}

std::uint32_t bits_of(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// A poison other than the default survives outside the written region: trivial rows
// (nb <= topk), inactive rows, columns past each row's nb.
TEST(CpuTwin, CustomPoisonSurvivesOutsideTheWrittenRegion) {
  for (const char* name : {"padding_inactive_lse_e4m3fn", "topk_crossing", "topk_above_nb"}) {
    const Case c = named(name).make();
    const auto e = ixo::oracle(c);
    RunOptions opt;
    opt.score_poison_bits = 0xffc0ffeeu;
    for (const char* b : {"cpu-rows", "cpu-packed"}) {
      const Observed o = run(b, c, opt);
      EXPECT_TRUE(ixo::test::matches_oracle(c, e, o, false, std::string(b) + " on " + name, opt.score_poison_bits));
      std::int64_t written = 0;
      for (float s : o.scores) written += bits_of(s) != opt.score_poison_bits;
      std::int64_t want = 0;
      for (std::int64_t r = 0; r < c.R; ++r)
        for (std::int64_t col = 0; col < c.NB(); ++col) want += ixo::score_cell_written(e, r, col) ? c.Hq : 0;
      EXPECT_EQ(written, want) << b << " on " << name;
    }
  }
}

// The plan: packed uses P rows per program when P * gqa <= 16, else the per-row plan.
TEST(CpuTwin, PackedPlanAndFallback) {
  RunOptions def;
  {
    const Case c = named("gqa_2_1_p4").make();  // P 4, gqa 2: 8 tile rows
    const auto p = ixo::cpu::plan_for(c, true, def);
    EXPECT_EQ(p.pack, 4);
    EXPECT_EQ(p.groups, c.R / 4);
    EXPECT_EQ(p.chunks, ixo::common::num_kv_chunks(c.R / 4, c.Hk));
    const auto r = ixo::cpu::plan_for(c, false, def);
    EXPECT_EQ(r.pack, 1);
    EXPECT_EQ(r.groups, c.R);
    EXPECT_EQ(r.chunks, ixo::common::num_kv_chunks(c.R, c.Hk));
    EXPECT_EQ(ixo::cpu::plan_for(c, true, chunks(3)).chunks, 3);
  }
  {
    Case big;  // shapes only (plan_for reads no tensors): 128 rows in groups of 4, Hk 2
    big.R = 128;
    big.Hq = 4;
    big.Hk = 2;
    big.cfg.packed_queries = 4;
    const auto p = ixo::cpu::plan_for(big, true, def);
    EXPECT_EQ(p.pack, 4);
    EXPECT_EQ(p.chunks, 64);  // 4096 / (32 groups * 2 heads)
    EXPECT_EQ(p.programs(), 32 * 64 * 2);
    EXPECT_EQ(ixo::cpu::plan_for(big, false, def).chunks, 16);  // 4096 / (128 rows * 2 heads)
  }
  EXPECT_EQ(ixo::cpu::plan_for(named("gqa_8_1_p4").make(), true, def).pack, 1);  // 32 tile rows
  EXPECT_EQ(ixo::cpu::plan_for(named("gqa_4_1_p5").make(), true, def).pack, 1);  // 20 tile rows
  EXPECT_EQ(ixo::cpu::plan_for(named("gqa_4_4_p4").make(), true, def).pack, 4);  // gqa 1, Hk 4
  EXPECT_EQ(ixo::cpu::plan_for(named("draft1").make(), true, def).pack, 1);
  EXPECT_EQ(ixo::cpu::plan_for(named("draft5").make(), true, def).pack, 5);
}

// Packing shares K: a group of 4 draft rows loads each token once, not 4 times.
TEST(CpuTwin, PackedLoadsEachKTokenOncePerGroup) {
  const Case c = named("m3_km_slots_e4m3fn").make();
  RunOptions def;
  const auto rows = ixo::cpu::k_tokens_loaded(c, ixo::cpu::plan_for(c, false, def));
  const auto packed = ixo::cpu::k_tokens_loaded(c, ixo::cpu::plan_for(c, true, def));
  std::int64_t longest_sum = 0;
  for (std::int64_t g = 0; g < c.R / 4; ++g) longest_sum += c.seq_lens[g * 4 + 3];
  EXPECT_EQ(packed, longest_sum);
  EXPECT_GT(rows, 3 * packed);
}

TEST(CpuTwin, RejectsMalformedCases) {
  Case c = named("slots_explicit").make();
  c.slot_ids[1] = c.slot_ids[1] == 1 ? 2 : 1;  // a packed group mixing two requests
  for (const char* b : {"cpu-rows", "cpu-packed"}) EXPECT_THROW(run(b, c), ixo::InputError) << b;
  Case d = named("slots_explicit").make();
  d.seq_lens[0] = d.width + 1;
  for (const char* b : {"cpu-rows", "cpu-packed"}) EXPECT_THROW(run(b, d), ixo::InputError) << b;
}

// A case small enough to compute by hand (no oracle, no generator): one request of two
// draft rows (L 3 and 4) on table row 1 (slot id -4 aliases 1 modulo 5 cache slots),
// bs 2, topk 1, no forcing, q all ones, K rows constant v so dot = 16 v. Token slots
// 4, 2 (stored -3), 0, 1 hold v = 1, 2, 0.5, 100; slot 3 (table row 0's) holds 50.
// Row 0 must not see token 3 (v 100): its block 1 is 0.5 * 16 and it selects block 0.
TEST(CpuTwin, HandComputedCase) {
  Case c;
  c.cfg.block_size = 2;
  c.cfg.topk = 1;
  c.cfg.init_blocks = 0;
  c.cfg.local_blocks = 0;
  c.cfg.sm_scale = 1.0;
  c.cfg.packed_queries = 2;
  c.R = 2;
  c.Hq = 1;
  c.Hk = 1;
  c.D = 16;
  c.S = 5;
  c.rows = 2;
  c.width = 4;
  c.q.assign(2 * 16, 0x3f80);  // bf16 1.0
  const float v[5] = {0.5f, 100.0f, 2.0f, 50.0f, 1.0f};
  for (int s = 0; s < 5; ++s) {
    std::uint32_t u;
    std::memcpy(&u, &v[s], 4);
    for (int d = 0; d < 16; ++d) {
      c.k_cache.push_back(static_cast<std::uint8_t>((u >> 16) & 0xff));
      c.k_cache.push_back(static_cast<std::uint8_t>(u >> 24));
    }
  }
  c.req_to_token = {3, 3, 3, 3, 4, -3, 0, 1};
  c.slot_ids = {-4, -4};
  c.seq_lens = {3, 4};
  const float m = ixo::common::logit_multiplier(1.0f, 1.0f);
  const std::vector<float> want_scores = {32.0f * m, 8.0f * m, 32.0f * m, 1600.0f * m};
  const std::vector<std::int32_t> want_ids = {0, 1};
  for (const char* b : {"cpu-rows", "cpu-packed"}) {
    const Observed o = run(b, c);
    EXPECT_EQ(o.topk_idx, want_ids) << b;
    ASSERT_EQ(o.scores.size(), want_scores.size()) << b;
    for (std::size_t i = 0; i < want_scores.size(); ++i) EXPECT_EQ(o.scores[i], want_scores[i]) << b << " cell " << i;
    EXPECT_TRUE(o.has_scores);
    EXPECT_EQ(o.NB, 2);
  }
}

}  // namespace
