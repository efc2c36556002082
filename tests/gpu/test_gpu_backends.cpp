// CUDA backends over the kernel case matrix (tests/support): each backend against the
// oracle (tiers 1-2, tier 3 on exact cases, poison), packed == per-row bit for bit, ids
// equal to the CPU twin wherever the oracle's k-th margin is clear, and chunk-plan
// independence. Skipped without a device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "gpu_test_util.hpp"
#include "ixo_test/support.hpp"

namespace ixo::test {
namespace {

class CudaCases : public ::testing::TestWithParam<NamedCase> {};


TEST_P(CudaCases, RowsPackedOracleTwin) {
  IXO_REQUIRE_CUDA();
  const NamedCase& nc = GetParam();
  const Case c = nc.make();
  const Expected e = oracle(c);
  auto rows = make_cuda_rows_backend();
  auto packed = make_cuda_packed_backend();
  const Observed orow = rows->run(c);
  const Observed opk = packed->run(c);
  EXPECT_TRUE(matches_oracle(c, e, orow, nc.exact_ids, "cuda-rows"));
  EXPECT_TRUE(matches_oracle(c, e, opk, nc.exact_ids, "cuda-packed"));
  EXPECT_TRUE(bitwise_equal(orow, opk, c, "cuda-packed vs cuda-rows"));
  // Repeated runs are bitwise identical.
  EXPECT_TRUE(bitwise_equal(opk, packed->run(c), c, "cuda-packed rerun"));

  // CUDA vs the CPU twin: ids equal wherever the oracle margin is clear.
  auto twin = make_backend("cpu-rows");
  const Observed ocpu = twin->run(c);
  std::int64_t compared = 0, differ = 0;
  for (std::int64_t h = 0; h < c.Hq; ++h)
    for (std::int64_t r = 0; r < c.R; ++r) {
      if (!clear_margin(e, h, r)) continue;
      ++compared;
      for (std::int64_t i = 0; i < c.cfg.topk; ++i) {
        const std::int64_t at = (h * c.R + r) * c.cfg.topk + i;
        if (orow.topk_idx[at] != ocpu.topk_idx[at]) {
          ++differ;
          ADD_FAILURE() << "cuda-rows vs cpu-rows ids differ at head " << h << " row " << r << " slot " << i << ": "
                        << orow.topk_idx[at] << " vs " << ocpu.topk_idx[at] << "\n"
                        << describe(c);
          break;
        }
      }
    }
  EXPECT_EQ(differ, 0) << compared << " (head,row) pairs compared";
}

TEST_P(CudaCases, ChunkPlanIndependent) {
  IXO_REQUIRE_CUDA();
  const Case c = GetParam().make();
  auto packed = make_cuda_packed_backend();
  auto rows = make_cuda_rows_backend();
  const Observed base = packed->run(c);
  for (int chunks : {1, 3, 7}) {
    RunOptions opt;
    opt.force_num_chunks = chunks;
    EXPECT_TRUE(bitwise_equal(base, packed->run(c, opt), c, "packed chunks=" + std::to_string(chunks)));
    EXPECT_TRUE(bitwise_equal(base, rows->run(c, opt), c, "rows chunks=" + std::to_string(chunks)));
  }
}

TEST_P(CudaCases, OtherPoisonKept) {
  IXO_REQUIRE_CUDA();
  const NamedCase& nc = GetParam();
  const Case c = nc.make();
  const Expected e = oracle(c);
  RunOptions opt;
  opt.score_poison_bits = 0xff800001u;  // another NaN pattern: unwritten cells keep it
  EXPECT_TRUE(matches_oracle(c, e, make_cuda_packed_backend()->run(c, opt), nc.exact_ids, "cuda-packed poison2",
                             opt.score_poison_bits));
}

INSTANTIATE_TEST_SUITE_P(Matrix, CudaCases, ::testing::ValuesIn(kernel_cases()), case_param_name);

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
// both pass the oracle.
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
    }
}

}  // namespace
}  // namespace ixo::test
