// The fp8 score path's two widenings side by side (kernels/gpu/mma_convert.cuh, IXO_FP8_F16_MMA):
// a tile whose q is exact in f16 multiplies f16 q by the hardware's fp8 -> f16 conversion, a
// tile with any q element outside f16 keeps bf16 q and the bf16 widening. The decision is per
// tile, so the per-row launch (a tile a row) and the packed one (a tile a request's rows) take
// different paths for a request with one such row: its other rows run f16 per row and bf16
// packed. Packed == per-row bit for bit there, and both pass the oracle, for e4m3fn and e5m2,
// max and lse. A widening that changed any operand bit (or a tensor core that summed f16 and
// bf16 products differently) fails the bitwise comparison; a wrong f16 path fails the oracle.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "gpu_test_util.hpp"
#include "ixo_test/f16_exact.hpp"
#include "ixo_test/support.hpp"
#include "ixo_test/testbed.hpp"

namespace ixo::test {
namespace {

constexpr std::uint16_t kBf16TwoToMinus30 = 0x3080;  // 2^-30: a bf16 below f16's smallest subnormal
constexpr std::uint16_t kBf16TwoToPlus17 = 0x4800;   // 2^17 = 131072: above f16's largest finite

bool row_is_f16_exact(const Case& c, std::int64_t r) {
  for (std::int64_t i = r * c.Hq * c.D; i < (r + 1) * c.Hq * c.D; ++i)
    if (!bf16_is_f16_exact(c.q[static_cast<std::size_t>(i)])) return false;
  return true;
}

// 3 requests x 4 draft rows (packed_queries 4), prefixes of 40 blocks less 2 tokens, 9000 tokens and 3 blocks and 5.
GenSpec three_request_spec(KDtype t, ScoreType st, double k_scale) {
  GenSpec s;
  s.requests = 3;
  s.draft_rows = 4;
  s.prefixes = {40 * 128 - 2, 9000, 3 * 128 + 5};
  s.cfg.k_dtype = t;
  s.cfg.score_type = st;
  s.cfg.k_scale = k_scale;
  s.cfg.packed_queries = 4;
  return s;
}

// three_request_spec; request 0's row 1 gets one q element of 2^-30, request 1's row 2 one of 2^17 at another dim;
// request 2 stays f16-exact (both launches f16).
Case mixed_path_case(KDtype t, ScoreType st, std::uint64_t seed) {
  Case c = generate(three_request_spec(t, st, 0.8), seed);
  EXPECT_EQ(c.cfg.q_dtype, KDtype::bf16);
  const std::int64_t D = c.D;
  c.q[(1 * c.Hq) * D + 7] = kBf16TwoToMinus30;            // request 0, row 1, dim 7
  c.q[(6 * c.Hq) * D + 100] = kBf16TwoToPlus17;           // request 1, row 2, dim 100
  c.q[(6 * c.Hq) * D + 101] = kBf16TwoToPlus17 | 0x8000;  // and -2^17 beside it
  // The case takes both paths only if every other row is f16-exact (else both launches run
  // bf16 everywhere and the comparison judges nothing).
  for (std::int64_t r = 0; r < c.R; ++r) EXPECT_EQ(row_is_f16_exact(c, r), r != 1 && r != 6) << "row " << r;
  return c;
}

TEST(CudaFp8Paths, TilesOnBothWideningsGiveTheSameBits) {
  IXO_REQUIRE_CUDA();
  for (KDtype t : {KDtype::e4m3fn, KDtype::e5m2})
    for (ScoreType st : {ScoreType::max, ScoreType::lse}) {
      const std::string what = std::string(to_string(t)).append(" ").append(to_string(st));
      const Case c = mixed_path_case(t, st, 77 + static_cast<int>(t) * 2 + static_cast<int>(st));
      const Expected e = oracle(c);
      const Observed rows = make_cuda_rows_backend()->run(c);
      const Observed packed = make_cuda_packed_backend()->run(c);
      EXPECT_TRUE(matches_oracle(c, e, rows, false, "cuda-rows " + what));
      EXPECT_TRUE(matches_oracle(c, e, packed, false, "cuda-packed " + what));
      EXPECT_TRUE(bitwise_equal(rows, packed, c, "packed (request 0, 1: bf16 path) vs rows (f16) " + what));
    }
}

// The same mixed case through every backend of the one testbed: the CP kernel (its tile rows
// are a request's, so it takes the bf16 path where cuda-rows takes f16) must give cuda-rows'
// ids bit for bit (trait ids_twin), the CPU twins theirs, every backend the oracle's verdict.
TEST(CudaFp8Paths, EveryBackendOnTheMixedCase) {
  IXO_REQUIRE_CUDA();
  for (KDtype t : {KDtype::e4m3fn, KDtype::e5m2}) {
    const Case c = mixed_path_case(t, ScoreType::max, 91 + static_cast<int>(t));
    const std::vector<std::string> judged = judge_every_backend(c, "fp8 mixed paths " + std::string(to_string(t)),
                                                                false, RunOptions{}, TestbedChecks::all());
    for (const char* b : {"cuda-rows", "cuda-packed", "cuda-cp"}) EXPECT_TRUE(judged_by(judged, b)) << b;
  }
}

// A negative logit multiplier (k_scale < 0) on the f16 path, per row and packed, max and lse: the scores' order
// flips, so a kernel that took the block max before multiplying (experiment row 59, IXO_DEFER_LOGIT_MULT, which does
// so only for a positive multiplier) without that check ranks the wrong blocks (plant-defer-mult-sign.patch fails
// it). Every row is f16-exact, so every tile takes the f16 path.
TEST(CudaFp8Paths, NegativeMultiplierOnTheF16Path) {
  IXO_REQUIRE_CUDA();
  for (KDtype t : {KDtype::e4m3fn, KDtype::e5m2})
    for (ScoreType st : {ScoreType::max, ScoreType::lse})
      for (double k_scale : {-0.8, 0.8}) {
        const Case c = generate(three_request_spec(t, st, k_scale),
                                131 + static_cast<int>(t) * 4 + static_cast<int>(st) * 2 + (k_scale < 0));
        for (std::int64_t r = 0; r < c.R; ++r) ASSERT_TRUE(row_is_f16_exact(c, r)) << "row " << r;
        const std::string what = std::string(to_string(t))
                                     .append(" ")
                                     .append(to_string(st))
                                     .append(k_scale < 0 ? " k_scale -0.8" : " k_scale 0.8");
        const Expected e = oracle(c);
        EXPECT_TRUE(matches_oracle(c, e, make_cuda_rows_backend()->run(c), false, "cuda-rows " + what));
        EXPECT_TRUE(matches_oracle(c, e, make_cuda_packed_backend()->run(c), false, "cuda-packed " + what));
      }
}

}  // namespace
}  // namespace ixo::test
