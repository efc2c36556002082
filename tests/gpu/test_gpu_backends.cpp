// CUDA backends on GPU-specific cases: each backend against the oracle (tiers 1-2, tier 3 on
// exact cases, poison), packed == per-row bit for bit, ids equal to the CPU twin wherever the
// oracle's k-th margin is clear. Skipped without a device. (The kernel case matrix runs the
// CUDA backends in the one testbed: tests/kernels/test_kernel_matrix.cpp, ctest cuda_testbed.)
//
// Real CUDA-graph batches (packed_queries is a launch hint): the matrix's graph_* cases, the
// graph_batch_edits of tests/support on the tensor-core (D 64) and the scalar (D 40) path,
// and the M3-shaped graph-padded preset: groups mixing slot ids run per row inside their
// CTA, the R % P trailing rows run per row, whole groups sharing a slot id pack; every row
// must be right (oracle, poison) and packed == per-row bit for bit. A packed kernel that
// packed a mixed group (rows reading the first row's table row), dropped the trailing rows
// or skipped a padding group fails these (the same bugs fail the CPU twin's suites).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "gpu_test_util.hpp"
#include "ixo_test/support.hpp"
#include "ixo_test/testbed.hpp"

namespace ixo::test {
namespace {

// Every backend through the one testbed (tests/support/testbed.hpp): the CUDA ones against the
// oracle, packed == rows bit for bit, a rerun, ids == the CPU twin's wherever the oracle's k-th
// margin is clear (and the CPU twins, cuda-cp where it applies, on the same case).
void rows_packed_oracle_twin(const Case& c, bool exact_ids, const std::string& what) {
  TestbedChecks checks;
  checks.rerun = checks.cpu_twin_ids = true;
  const std::vector<std::string> judged = judge_every_backend(c, what, exact_ids, RunOptions{}, checks);
  EXPECT_TRUE(judged_by(judged, "cuda-rows"));
  EXPECT_TRUE(judged_by(judged, "cuda-packed"));
}

// The graph_batch_edits of tests/support on two bases: D 64 (tensor-core path) and D 40
// (the portable scalar path).
std::vector<EditedCase> gpu_graph_edits() {
  std::vector<EditedCase> out;
  for (const std::int64_t D : {64, 40}) {
    GenSpec s = graph_edit_base_spec();
    s.D = D;
    for (EditedCase ed : graph_batch_edits(generate(s, 1010 + D))) {
      std::string name = "d";  // (appended piecewise: GCC 12's -Wrestrict misfires on "d" + ... + name)
      name.append(std::to_string(D)).append("_").append(ed.name);
      ed.name = name;
      out.push_back(std::move(ed));
    }
  }
  return out;
}

class CudaGraphEdits : public ::testing::TestWithParam<EditedCase> {};

TEST_P(CudaGraphEdits, RowsPackedOracleTwinChunks) {
  IXO_REQUIRE_CUDA();
  const EditedCase& ed = GetParam();
  rows_packed_oracle_twin(ed.c, false, ed.name + " (" + ed.what + ")");
  // Chunk plans change nothing; another poison pattern survives outside the written region.
  auto packed = make_cuda_packed_backend();
  const Observed base = packed->run(ed.c);
  for (int chunks : {1, 3, 7}) {
    RunOptions opt;
    opt.force_num_chunks = chunks;
    EXPECT_TRUE(bitwise_equal(base, packed->run(ed.c, opt), ed.c, "packed chunks=" + std::to_string(chunks)));
  }
  RunOptions poison;
  poison.score_poison_bits = 0xff800001u;
  EXPECT_TRUE(matches_oracle(ed.c, oracle(ed.c), packed->run(ed.c, poison), false, "cuda-packed poison2 " + ed.name,
                             poison.score_poison_bits));
}

INSTANTIATE_TEST_SUITE_P(Edits, CudaGraphEdits, ::testing::ValuesIn(gpu_graph_edits()),
                         [](const ::testing::TestParamInfo<EditedCase>& i) { return i.param.name; });

// The M3-shaped graph-padded preset (bs 128, D 128, top-16; R 25 with packed_queries 4:
// a packed group, a request boundary inside a group, a padding group, padding rows with an
// inactive row, a partial group), bf16 and e4m3fn, max and lse, several seeds.
TEST(CudaM3, GraphPaddedBatches) {
  IXO_REQUIRE_CUDA();
  for (KDtype t : {KDtype::bf16, KDtype::e4m3fn})
    for (ScoreType st : {ScoreType::max, ScoreType::lse})
      for (std::uint64_t seed : {1, 2, 3}) {
        GenSpec s = preset("graph-padded");
        s.cfg.k_dtype = t;
        s.cfg.score_type = st;
        s.cfg.k_scale = t == KDtype::bf16 ? 1.0 : 0.8;
        const Case c = generate(s, seed);
        ASSERT_NE(c.R % c.cfg.packed_queries, 0);
        rows_packed_oracle_twin(c, false, "graph-padded seed " + std::to_string(seed));
      }
}

TEST(CudaBackends, Names) {
  EXPECT_EQ(make_cuda_rows_backend()->name(), "cuda-rows");
  EXPECT_EQ(make_cuda_packed_backend()->name(), "cuda-packed");
  std::string why;
  const bool avail = make_cuda_rows_backend()->available(&why);
  if (!avail) {
    EXPECT_FALSE(why.empty());
    GTEST_SKIP() << why;
  }
}

// A larger M3-shaped case (bs 128, topk 16, D 128, 4 draft rows) with long prefixes that
// straddle block boundaries, bf16 and e4m3fn, max and lse: packed == rows bitwise and
// both pass the oracle. Forced chunk counts 1 and 2 make packed CTAs of 257 blocks and of 129 / 128
// (the 32 x 524288 plan's stream ~342): the same bits. docs/experiments/plant-long-cta.patch (blocks
// past a CTA's 128th dropped) fails these, and conformance's random properties (session 34, H100).
// 100 chunks: 300 packed CTAs of ~3 blocks (14 chunks empty).
TEST(CudaM3, LongPrefixes) {
  IXO_REQUIRE_CUDA();
  for (KDtype t : {KDtype::bf16, KDtype::e4m3fn})
    for (ScoreType st : {ScoreType::max, ScoreType::lse}) {
      GenSpec s;
      s.requests = 3;
      s.draft_rows = 4;
      s.prefixes = {255 * 128 + 126, 40 * 128 - 2, 9000};
      s.cfg.k_dtype = t;
      s.cfg.score_type = st;
      s.cfg.k_scale = 0.8;
      const Case c = generate(s, 4242 + static_cast<int>(t) * 2 + static_cast<int>(st));
      const Expected e = oracle(c);
      const Observed a = make_cuda_rows_backend()->run(c);
      const Observed b = make_cuda_packed_backend()->run(c);
      EXPECT_TRUE(matches_oracle(c, e, a, false, "cuda-rows m3"));
      EXPECT_TRUE(matches_oracle(c, e, b, false, "cuda-packed m3"));
      EXPECT_TRUE(bitwise_equal(a, b, c, "m3 packed vs rows"));
      for (const int chunks : {1, 2, 100}) {
        RunOptions opt;
        opt.force_num_chunks = chunks;
        EXPECT_TRUE(bitwise_equal(a, make_cuda_packed_backend()->run(c, opt), c,
                                  "m3 packed chunks=" + std::to_string(chunks) + " vs rows"));
      }
    }
}

// Packed e4m3fn launches of 2 and 3 rounds of 132 CTAs (the plan's 396 / 5 = 79 chunks capped at 257 / 4 = 64:
// 320 CTAs; forced 30: 150) over 5 requests, so the programs' chunks cross the rounds at different chunks: in a
// build with IXO_FP8_ROUND_PLAN=1 (row 57, kernels/common/round_plan.hpp) each program splits its blocks by its
// own CTAs' rounds. Packed == rows bitwise. docs/experiments/plant-round-total.patch (a program's weight total one
// weight too large: every chunk ends short and the last blocks of each row have no owner; it fails test_graph_plan
// in a knob CPU build) fails it with the knob, and LongPrefixes too (session 36, H100: data/s36-gate-embed-h100);
// the default build runs the equal chunks (LongPrefixes' 100 chunks: the same shapes of CTA).
TEST(CudaM3, PackedRoundsAcrossPrograms) {
  IXO_REQUIRE_CUDA();
  for (ScoreType st : {ScoreType::max, ScoreType::lse}) {
    GenSpec s;
    s.requests = 5;
    s.draft_rows = 4;
    s.prefixes = {255 * 128 + 126, 200 * 128 + 3, 9000, 256 * 128, 130 * 128 - 1};
    s.cfg.k_dtype = KDtype::e4m3fn;
    s.cfg.score_type = st;
    const Case c = generate(s, 5757 + static_cast<int>(st));
    const Observed a = make_cuda_rows_backend()->run(c);
    EXPECT_TRUE(matches_oracle(c, oracle(c), a, false, "cuda-rows rounds"));
    for (const int chunks : {0, 30}) {
      RunOptions opt;
      opt.force_num_chunks = chunks;
      EXPECT_TRUE(bitwise_equal(a, make_cuda_packed_backend()->run(c, opt), c,
                                "rounds packed chunks=" + std::to_string(chunks) + " vs rows"));
    }
  }
}

}  // namespace
}  // namespace ixo::test
