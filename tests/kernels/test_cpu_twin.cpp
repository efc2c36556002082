// The CPU twin's own invariants (cpu-rows, cpu-packed): thread-count independence on the
// kernel case matrix, the poison contract, the launch plan, and hand-computed cases. The
// matrix against the oracle, packed == per-row bitwise and chunk-plan independence run for
// every backend in one testbed (test_kernel_matrix.cpp).
//
// Real CUDA-graph batches (packed_queries is a launch hint; docs/semantics.md): the matrix's
// graph_* cases and the CpuTwinGraphEdits suite (tests/support graph_batch_edits) hold
// groups mixing slot ids, R not a multiple of P, padding rows alone and in whole groups,
// inactive rows inside and after groups. Each of these dimensions was seen to fail on an
// injected bug (temporarily, in kernels/common and the twin; see the commit's report):
//   - group_packs ignoring slot ids (a mixed group packed: its rows read the first row's
//     table row): PackedEqualsRowsBitwise / PackedMatchesOracle on graph_pack4_requests3,
//     graph_pack3_requests4_local0, graph_padding_inactive_inside_after_bs2_lse, the edits
//     packed_queries_*, inactive_slot_inside_groups, padding_mixed_with_request,
//     padding_group_alone_inactive_after, and HandComputedGraphBatch (P 3, 4);
//   - packed_batch = R / P (the trailing rows of a partial group never scored): the same
//     tests on graph_pack4_requests3, graph_padding_group_and_alone_bs2, partial_real_group,
//     padding_group_alone_inactive_after, HandComputedGraphBatch (P 3);
//   - a packed tile judging its activity by its first row's own length (a length-0 row
//     first in a group drops the group): len0_first_and_inside,
//     graph_padding_inactive_inside_after_bs2_lse;
//   - per-row tiles of a non-packing group reading the group's first slot id: the
//     mixed-group cases above (inactive and padding rows inside and after groups scored
//     through a request's table row);
//   - whole groups on table row 0 skipped as "padding" (padding rows are ordinary rows):
//     graph_padding_group_and_alone_bs2, padding_group_alone_inactive_after,
//     HandComputedGraphBatch (P 2).
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <memory>

#include "backend.hpp"
#include "cpu/cp_twin.hpp"
#include "cpu/cpu_backends.hpp"
#include "indexer_common.hpp"
#include "ixo/error.hpp"
#include "ixo_test/support.hpp"
#include "kernel_matrix.hpp"
#include "packing_note.hpp"

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

// The matrix's verdicts, packed == per-row and chunk-plan independence run in the one testbed
// (test_kernel_matrix.cpp, every backend); the thread count is the CPU twin's own invariant.
class CpuTwinMatrix : public ::testing::TestWithParam<NamedCase> {};

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
    EXPECT_EQ(p.batch, c.R / 4);
    EXPECT_EQ(c.cfg.k_dtype, ixo::KDtype::bf16);
    EXPECT_EQ(p.chunks, ixo::common::bf16_packed_chunks(c.R / 4, c.Hk, c.NB()));  // the GPU's chunk plan
    const auto r = ixo::cpu::plan_for(c, false, def);
    EXPECT_EQ(r.pack, 1);
    EXPECT_EQ(r.batch, c.R);
    EXPECT_EQ(r.chunks, ixo::common::score_chunks(c.R, c.Hk, c.NB()));
    EXPECT_EQ(ixo::cpu::plan_for(c, true, chunks(3)).chunks, 3);
  }
  {
    Case big;  // shapes only (plan_for reads no tensors): 128 rows in groups of 4, Hk 2
    big.R = 128;
    big.Hq = 4;
    big.Hk = 2;
    big.cfg.packed_queries = 4;
    big.width = 4096 * big.cfg.block_size;  // NB 4096: the chunk cap (NB / 16 = 256) is not reached
    const auto p = ixo::cpu::plan_for(big, true, def);
    EXPECT_EQ(p.pack, 4);
    const int wave = IXO_BF16_PACKED_WAVE;  // plans.hpp
    EXPECT_EQ(p.chunks, wave ? 4 : 16);     // 264 / (32 groups * 2 heads), or 1024 / 64
    EXPECT_EQ(p.programs(), 32 * (wave ? 4 : 16) * 2);
    EXPECT_EQ(ixo::cpu::plan_for(big, false, def).chunks, 4);  // 1024 / (128 rows * 2 heads)
    big.width = 51 * big.cfg.block_size;  // NB 51: 4 chunks either way (264 / 64 programs; fill 256 / 64), as the GPU
    EXPECT_EQ(ixo::cpu::plan_for(big, true, def).chunks, 4);
    big.width = 8 * big.cfg.block_size;  // NB 8: capped at one block a warp, 8 / 4 = 2 chunks
    EXPECT_EQ(ixo::cpu::plan_for(big, true, def).chunks, 2);
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
  Case d = named("slots_explicit").make();
  d.seq_lens[0] = d.width + 1;
  for (const char* b : {"cpu-rows", "cpu-packed"}) EXPECT_THROW(run(b, d), ixo::InputError) << b;
}

// packed_queries is a launch hint: a group mixing two requests, or R not a multiple of it,
// is a valid batch (it used to be rejected as bad input).
TEST(CpuTwin, AcceptsGroupsMixingSlotIdsAndPartialGroups) {
  Case c = named("slots_explicit").make();
  c.slot_ids[1] = c.slot_ids[1] == 1 ? 2 : 1;  // group 0 mixes two requests
  const auto e = ixo::oracle(c);
  const Observed rows = run("cpu-rows", c), packed = run("cpu-packed", c);
  EXPECT_TRUE(ixo::test::matches_oracle(c, e, packed, false, "cpu-packed, mixed group"));
  EXPECT_TRUE(ixo::test::bitwise_equal(rows, packed, c, "mixed group"));
  for (int P : {3, 5, 7}) {  // 16 rows: partial groups of 1, 1 and 2 rows
    Case d = named("slots_explicit").make();
    d.cfg.packed_queries = P;
    EXPECT_TRUE(ixo::test::bitwise_equal(run("cpu-rows", d), run("cpu-packed", d), d, "P " + std::to_string(P)));
  }
}

// The graph-padded edits of tests/support (each with the kind of row it moves).
const std::vector<ixo::test::EditedCase>& graph_edits() {
  static const auto v = ixo::test::graph_batch_edits(ixo::generate(ixo::test::graph_edit_base_spec(), 1010));
  return v;
}

class CpuTwinGraphEdits : public ::testing::TestWithParam<ixo::test::EditedCase> {};

TEST_P(CpuTwinGraphEdits, RowsAndPackedMatchOracleAndEachOther) {
  const Case& c = GetParam().c;
  const auto e = ixo::oracle(c);
  std::int64_t nontrivial = 0;
  for (auto nb : e.nb) nontrivial += nb > e.topk;
  ASSERT_GT(nontrivial, 0) << "the edit leaves no scored row";
  const Observed rows = run("cpu-rows", c), packed = run("cpu-packed", c);
  EXPECT_TRUE(ixo::test::matches_oracle(c, e, rows, false, "cpu-rows " + GetParam().what));
  EXPECT_TRUE(ixo::test::matches_oracle(c, e, packed, false, "cpu-packed " + GetParam().what));
  EXPECT_TRUE(ixo::test::bitwise_equal(rows, packed, c, "cpu-rows vs cpu-packed " + GetParam().what));
  for (int n : {1, 3})
    EXPECT_TRUE(
        ixo::test::bitwise_equal(packed, run("cpu-packed", c, chunks(n)), c, "cpu-packed chunks " + std::to_string(n)));
  // The plan packs exactly the whole groups sharing one slot id: fewer K loads than per row
  // whenever one group packs.
  RunOptions def;
  const auto plan = ixo::cpu::plan_for(c, true, def);
  const std::int64_t P = c.cfg.packed_queries;
  ASSERT_TRUE(ixo::common::pack_fits(static_cast<int>(P), plan.gqa));
  EXPECT_EQ(plan.pack, P);
  EXPECT_EQ(plan.batch, c.R / P + c.R % P);
  bool any_packs = false;
  for (std::int64_t g = 0; g < c.R / P; ++g)
    any_packs =
        any_packs || ixo::common::group_packs(c.slot_ids.data(), g * P, static_cast<int>(P), static_cast<int>(P));
  if (any_packs) {
    EXPECT_LT(ixo::cpu::k_tokens_loaded(c, plan), ixo::cpu::k_tokens_loaded(c, ixo::cpu::plan_for(c, false, def)));
  }
}

INSTANTIATE_TEST_SUITE_P(Edits, CpuTwinGraphEdits, ::testing::ValuesIn(graph_edits()),
                         [](const ::testing::TestParamInfo<ixo::test::EditedCase>& i) { return i.param.name; });

// The packing note names the rows that run per row (for `ixo check`).
TEST(CpuTwin, UngroupedRowsNote) {
  Case c = named("slots_explicit").make();  // 4 requests x 4 rows, P 4: every group packs
  EXPECT_EQ(ixo::ungrouped_rows_note(c), "");
  c.slot_ids[5] = c.slot_ids[0] == 9 ? 8 : 9;  // group 1 mixes slot ids
  EXPECT_EQ(ixo::ungrouped_rows_note(c),
            "rows 4-7 (mixed slot ids) did not form a packed group of 4: 4 of 16 rows run per row");
  c.slot_ids[9] = c.slot_ids[5];  // group 2 too: one range
  c.cfg.packed_queries = 4;
  EXPECT_EQ(ixo::ungrouped_rows_note(c),
            "rows 4-11 (mixed slot ids) did not form a packed group of 4: 8 of 16 rows run per row");
  c.cfg.packed_queries = 5;  // groups 0-4 (mixes requests 0, 1), 5-9, 10-14; row 15 alone
  EXPECT_EQ(
      ixo::ungrouped_rows_note(c),
      "rows 0-14 (mixed slot ids), 15 (partial group) did not form a packed group of 5: 16 of 16 rows run per row");
  Case tail = named("slots_explicit").make();
  tail.cfg.packed_queries = 3;  // groups 0-2 (request 0), 3-5, 6-8 (straddle), 9-11, 12-14; row 15 alone
  EXPECT_EQ(ixo::ungrouped_rows_note(tail),
            "rows 3-8 (mixed slot ids), 15 (partial group) did not form a packed group of 3: 7 of 16 rows run per row");
  c.cfg.packed_queries = 1;
  EXPECT_EQ(ixo::ungrouped_rows_note(c), "");
  EXPECT_EQ(ixo::ungrouped_rows_note(graph_edits()[0].c), "");  // length-0 rows: the grouping holds
  Case wide = named("gqa_8_1_p4").make();                       // 4 x 8 = 32 tile rows
  EXPECT_EQ(ixo::ungrouped_rows_note(wide),
            "packed_queries 4 x Hq/Hk 8 = 32 tile rows exceed one 16-row tile: every row runs per row");
  Case lone = named("slots_explicit").make();
  lone.slot_ids.push_back(0);  // one padding row after 4 whole groups
  lone.seq_lens.push_back(2);
  const std::vector<std::uint16_t> q0(lone.q.begin(), lone.q.begin() + lone.Hq * lone.D);
  lone.q.insert(lone.q.end(), q0.begin(), q0.end());
  ++lone.R;
  EXPECT_EQ(ixo::ungrouped_rows_note(lone),
            "row 16 (partial group) did not form a packed group of 4: 1 of 17 rows run per row");
}

// A case small enough to compute by hand (no oracle, no generator): one request of two
// draft rows (L 3 and 4) on table row 1 (slot id -4 aliases 1 modulo 5 cache slots),
// bs 2, topk 1, no forcing, q all ones, K rows constant v so dot = 16 v. Token slots
// 4, 2 (stored -3), 0, 1 hold v = 1, 2, 0.5, 100; slot 3 (table row 0's) holds 50.
// Row 0 must not see token 3 (v 100): its block 1 is 0.5 * 16 and it selects block 0.
// The hand-computed cases below: bs 2, topk 1, no forcing, sm_scale 1, one head, D 16,
// q all ones (bf16 1.0), cache slot s holding the constant key v[s] (so dot = 16 v[s]), a
// table of `rows` x 4. Tables, slot ids and lengths are set by the test.
Case constant_key_case(std::int64_t R, const std::vector<float>& v, std::int64_t rows) {
  Case c;
  c.cfg.block_size = 2;
  c.cfg.topk = 1;
  c.cfg.init_blocks = 0;
  c.cfg.local_blocks = 0;
  c.cfg.sm_scale = 1.0;
  c.R = R;
  c.Hq = 1;
  c.Hk = 1;
  c.D = 16;
  c.S = static_cast<std::int64_t>(v.size());
  c.rows = rows;
  c.width = 4;
  c.q.assign(static_cast<std::size_t>(R * 16), 0x3f80);  // bf16 1.0
  for (const float x : v) {
    std::uint32_t u;
    std::memcpy(&u, &x, 4);
    for (int d = 0; d < 16; ++d) {  // the bf16 bits of x (exact: every v is a bf16 value)
      c.k_cache.push_back(static_cast<std::uint8_t>((u >> 16) & 0xff));
      c.k_cache.push_back(static_cast<std::uint8_t>(u >> 24));
    }
  }
  return c;
}

TEST(CpuTwin, HandComputedCase) {
  Case c = constant_key_case(2, {0.5f, 100.0f, 2.0f, 50.0f, 1.0f}, 2);
  c.cfg.packed_queries = 2;
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

// A graph batch small enough to compute by hand: one request (table row 1, lengths 3 and 4),
// a padding row (table row 0, length 3), an inactive row (slot 7 past the 2-row table).
// bs 2, topk 1, no forcing, q all ones, K rows constant v (dot = 16 v); token slots 0..5
// hold v = 1, 3, 2, 7, 0.5, 4; table row 1 = slots 0, 1, 5, 3 and table row 0 = 2, 3, 4, 4.
//   row 0: blocks max(1, 3) = 3, 4        -> scores 48m, 64m, selects block 1
//   row 1: blocks 3, max(4, 7) = 7         -> 48m, 112m, selects 1
//   row 2: blocks max(2, 7) = 7, 0.5       -> 112m, 8m, selects 0 (through table row 1: 48m, 64m -> 1)
//   row 3: inactive                        -> no scores, -1
// The truth does not depend on packed_queries: P 1 (per row), 2 (group 0 packs, group 1
// mixes the padding and the inactive row), 3 (group 0 mixes the request and the padding
// row; row 3 is a partial group), 4 (one mixed group) and 5 (a partial group of 4) all give
// the same bits on every backend.
TEST(CpuTwin, HandComputedGraphBatch) {
  Case c = constant_key_case(4, {1.0f, 3.0f, 2.0f, 7.0f, 0.5f, 4.0f}, 2);
  c.req_to_token = {2, 3, 4, 4, 0, 1, 5, 3};
  c.slot_ids = {1, 1, 0, 7};
  c.seq_lens = {3, 4, 3, 2};
  const float m = ixo::common::logit_multiplier(1.0f, 1.0f);
  float poison;
  const std::uint32_t pb = ixo::kScorePoisonBits;
  std::memcpy(&poison, &pb, 4);
  const std::vector<float> want_scores = {48.0f * m,  64.0f * m, 48.0f * m, 112.0f * m,
                                          112.0f * m, 8.0f * m,  poison,    poison};
  const std::vector<std::int32_t> want_ids = {1, 1, 0, -1};
  for (int P : {1, 2, 3, 4, 5}) {
    c.cfg.packed_queries = P;
    const auto e = ixo::oracle(c);
    EXPECT_EQ(e.topk_idx, want_ids) << "oracle, P " << P;
    for (const char* b : {"cpu-rows", "cpu-packed"}) {
      const Observed o = run(b, c);
      EXPECT_EQ(o.topk_idx, want_ids) << b << ", P " << P;
      ASSERT_EQ(o.scores.size(), want_scores.size()) << b;
      for (std::size_t i = 0; i < want_scores.size(); ++i)
        EXPECT_EQ(bits_of(o.scores[i]), bits_of(want_scores[i])) << b << ", P " << P << ", cell " << i;
    }
    EXPECT_EQ(ixo::make_cpu_cp_backend()->run(c).topk_idx, want_ids) << "cpu-cp, P " << P;
  }
}

}  // namespace
