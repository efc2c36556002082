// Issue 25 item 3: fp8 (e4m3fn) q and NVFP4 K in the decoders and the oracle (the case
// format, the generators and the contract: test_new_dtype_files.cpp). Every expected value
// is worked out by hand in the comments from the format definitions (docs/semantics.md "fp8
// q" and "NVFP4 K"), not from the code.
//
// Each dimension was seen to fail on an injected bug (temporarily, one at a time, reverted):
//   - q decoded as bf16 bits whatever q_dtype says (dtype.cpp q_to_float): Fp8QDecode.CodesAreE4m3fn,
//     Fp8Q.HandWorkedScoresBf16K / Fp8K, Nvfp4Oracle.HandWorked (its e4m3fn-q pass),
//     NewDtypeContract.NonfiniteFp8QAndNanScales;
//   - the NVFP4 product not rounded (nvfp4_table keeping e2m1 * scale): Nvfp4Decode.RoundingTiesToEven,
//     Saturation, Subnormals, Nvfp4Oracle.HandWorked, NewDtypeGenerators.Nvfp4GaussianSaturatesSomeElements;
//   - the nibble order swapped (high nibble = even element, dtype.hpp nvfp4_nibble):
//     Nvfp4Decode.NibbleOrder, Nvfp4Oracle.HandWorked.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "ixo/error.hpp"
#include "ixo/oracle.hpp"
#include "literal_case.hpp"

namespace {

using ixo::KDtype;
using Ids = std::vector<std::int32_t>;

Ids ids_of(const ixo::Expected& e, std::int64_t h, std::int64_t r) {
  const auto* p = &e.topk_idx[(h * e.R + r) * e.topk];
  return {p, p + e.topk};
}

// ---- Decoding ---------------------------------------------------------------------------

TEST(Fp8QDecode, CodesAreE4m3fn) {
  // 0x40 = 0 1000 000: 2^(8-7) * 1.0 = 2. 0xB4 = 1 0110 100: -(2^(6-7) * 1.5) = -0.75.
  // 0x01 = smallest subnormal 2^-9. 0x7F = NaN. 0x7E = 0 1111 110 = 2^8 * 1.75 = 448.
  EXPECT_EQ(ixo::q_to_float(0x40, KDtype::e4m3fn), 2.0f);
  EXPECT_EQ(ixo::q_to_float(0xB4, KDtype::e4m3fn), -0.75f);
  EXPECT_EQ(ixo::q_to_float(0x01, KDtype::e4m3fn), 0x1p-9f);
  EXPECT_EQ(ixo::q_to_float(0x7E, KDtype::e4m3fn), 448.0f);
  EXPECT_TRUE(std::isnan(ixo::q_to_float(0x7F, KDtype::e4m3fn)));
  // bf16 q is unchanged: 0x3FC0 = 1.5.
  EXPECT_EQ(ixo::q_to_float(0x3FC0, KDtype::bf16), 1.5f);
  EXPECT_EQ(ixo::float_to_q(-0.75f, KDtype::e4m3fn), 0xB4);
}

TEST(Nvfp4Decode, E2m1Values) {
  // s ee m, bias 1: e = 0 subnormal m * 0.5; else 2^(e-1) * (1 + m/2).
  const float want[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  for (int m = 0; m < 8; ++m) {
    EXPECT_EQ(ixo::e2m1_to_float(static_cast<std::uint8_t>(m)), want[m]) << m;
    EXPECT_EQ(ixo::e2m1_to_float(static_cast<std::uint8_t>(m | 8)), -want[m]) << m;
  }
  EXPECT_TRUE(std::signbit(ixo::e2m1_to_float(8)));  // -0
}

TEST(Nvfp4Decode, ExactProducts) {
  // 4 (code 6) * 112 (0x6E = 0 1101 110 = 2^6 * 1.75) = 448: exactly the largest e4m3fn.
  EXPECT_EQ(ixo::nvfp4_to_float(6, 0x6E), 448.0f);
  // 0.5 (code 1) * 448 (0x7E) = 224 = 2^7 * 1.75: representable.
  EXPECT_EQ(ixo::nvfp4_to_float(1, 0x7E), 224.0f);
  // -3 (code 0xD) * 1.0 (0x38) = -3.
  EXPECT_EQ(ixo::nvfp4_to_float(0xD, 0x38), -3.0f);
}

TEST(Nvfp4Decode, RoundingTiesToEven) {
  // 1.5 (code 3) * 1.125 (0x39 = 0 0111 001) = 1.6875 = 1.1011b: between 1.625 (1.101b,
  // mantissa 5, odd) and 1.75 (1.110b, mantissa 6, even), exactly halfway -> 1.75.
  EXPECT_EQ(ixo::nvfp4_to_float(3, 0x39), 1.75f);
  // 3 (code 5) * 1.125 = 3.375: in [2, 4) the step is 0.25; halfway between 3.25 (2 * 1.625,
  // odd) and 3.5 (2 * 1.75, even) -> 3.5.
  EXPECT_EQ(ixo::nvfp4_to_float(5, 0x39), 3.5f);
  // 6 (code 7) * 1.125 = 6.75: step 0.5 in [4, 8); halfway between 6.5 (odd) and 7 (even) -> 7.
  EXPECT_EQ(ixo::nvfp4_to_float(7, 0x39), 7.0f);
  // 3 * 1.375 (0x3B) = 4.125: not a tie, nearest of 4.0 / 4.5 is 4.0.
  EXPECT_EQ(ixo::nvfp4_to_float(5, 0x3B), 4.0f);
  // 1.5 * 1.375 = 2.0625: step 0.25 in [2, 4): nearest 2.0.
  EXPECT_EQ(ixo::nvfp4_to_float(3, 0x3B), 2.0f);
  // Negative ties round the magnitude the same way: -1.5 * 1.125 -> -1.75.
  EXPECT_EQ(ixo::nvfp4_to_float(0xB, 0x39), -1.75f);
}

TEST(Nvfp4Decode, Saturation) {
  // 6 * 448 = 2688 and 3 * 160 (0x72 = 0 1110 010 = 2^7 * 1.25) = 480: beyond 448 -> 448
  // (satfinite: never NaN, never 480). Negative: -6 * 448 -> -448.
  EXPECT_EQ(ixo::nvfp4_to_float(7, 0x7E), 448.0f);
  EXPECT_EQ(ixo::nvfp4_to_float(5, 0x72), 448.0f);
  EXPECT_EQ(ixo::nvfp4_to_float(0xF, 0x7E), -448.0f);
  // 2 * 240 (0x77 = 0 1110 111 = 2^7 * 1.875) = 480 -> 448 as well.
  EXPECT_EQ(ixo::nvfp4_to_float(4, 0x77), 448.0f);
}

TEST(Nvfp4Decode, Subnormals) {
  // 0.5 * 2^-9 (0x01) = 2^-10: halfway between 0 (code 0, even) and 2^-9 (code 1) -> +0.
  EXPECT_EQ(ixo::nvfp4_to_float(1, 0x01), 0.0f);
  EXPECT_FALSE(std::signbit(ixo::nvfp4_to_float(1, 0x01)));
  // -0.5 * 2^-9 -> -0 (the sign of a product rounded to zero stays).
  EXPECT_EQ(ixo::nvfp4_to_float(9, 0x01), 0.0f);
  EXPECT_TRUE(std::signbit(ixo::nvfp4_to_float(9, 0x01)));
  // 1.5 * 2^-9 = 3 * 2^-10: halfway between 2^-9 (code 1, odd) and 2^-8 (code 2) -> 2^-8.
  EXPECT_EQ(ixo::nvfp4_to_float(3, 0x01), 0x1p-8f);
  // 3 * 2^-9 = 3 * 2^-9: exactly a subnormal (code 3).
  EXPECT_EQ(ixo::nvfp4_to_float(5, 0x01), 3 * 0x1p-9f);
  // 1 * 2^-7 (0x04: subnormal 4 * 2^-9) * ... 6 * 2^-7 = 0.046875 = 2^-5 * 1.5: normal, exact.
  EXPECT_EQ(ixo::nvfp4_to_float(7, 0x04), 0.046875f);
}

TEST(Nvfp4Decode, NanScaleAndZeros) {
  // A NaN scale (0x7F, 0xFF) makes every element of its group NaN, zero codes included.
  EXPECT_TRUE(std::isnan(ixo::nvfp4_to_float(0, 0x7F)));
  EXPECT_TRUE(std::isnan(ixo::nvfp4_to_float(7, 0xFF)));
  // A zero scale gives zeros: 6 * 0 = 0; -6 * 0 = -0.
  EXPECT_EQ(ixo::nvfp4_to_float(7, 0x00), 0.0f);
  EXPECT_TRUE(std::signbit(ixo::nvfp4_to_float(0xF, 0x00)));
}

TEST(Nvfp4Decode, NibbleOrder) {
  // Bytes 0x21, 0x7F: element 0 = low nibble of byte 0 (1), element 1 = high (2), element 2 =
  // low nibble of byte 1 (0xF), element 3 = high (7).
  const std::uint8_t row[2] = {0x21, 0x7F};
  EXPECT_EQ(ixo::nvfp4_nibble(row, 0), 1);
  EXPECT_EQ(ixo::nvfp4_nibble(row, 1), 2);
  EXPECT_EQ(ixo::nvfp4_nibble(row, 2), 0xF);
  EXPECT_EQ(ixo::nvfp4_nibble(row, 3), 7);
}

// ---- Oracle, hand-worked ----------------------------------------------------------------

// sm_scale = ln 2 makes the log2-unit logit equal the dot (scale ln2 * log2 e = 1 up to
// one rounding of the float64 product).
ixo::Config unit_config(int bs, int topk) {
  ixo::Config g = ixo::test::small_config(bs, topk);
  g.sm_scale = std::numbers::ln2;
  return g;
}

// q = codes (0x40, 0xB4) = (2, -0.75); K tokens (1, 2), (2, -4), (0.5, 0).
// Dots: 2 - 1.5 = 0.5; 4 + 3 = 7; 1 + 0 = 1. Block size 1, top-2 of 3: blocks 1 and 2.
void expect_fp8q_case(KDtype k_dtype) {
  ixo::Config g = unit_config(1, 2);
  g.k_dtype = k_dtype;
  auto c = ixo::test::literal_case(g, 1, 1, 2, {0, 0}, {1, 2, 2, -4, 0.5, 0}, {{0, 1, 2}}, {0}, {3});
  c.cfg.q_dtype = KDtype::e4m3fn;
  c.q = {0x40, 0xB4};
  for (const auto& e : {ixo::oracle(c), ixo::oracle_naive(c)}) {
    EXPECT_NEAR(e.score[e.at(0, 0, 0)], 0.5, 1e-12);
    EXPECT_NEAR(e.score[e.at(0, 0, 1)], 7.0, 1e-12);
    EXPECT_NEAR(e.score[e.at(0, 0, 2)], 1.0, 1e-12);
    EXPECT_EQ(ids_of(e, 0, 0), (Ids{1, 2}));
    // tau uses |q| of the decoded q: |q| = sqrt(4 + 0.5625) = 2.136 > 0, and tau > 0.
    EXPECT_GT(e.tau[e.at(0, 0, 1)], 0.0);
    EXPECT_LT(e.tau[e.at(0, 0, 1)], 1e-3);
  }
}

TEST(Fp8Q, HandWorkedScoresBf16K) { expect_fp8q_case(KDtype::bf16); }
TEST(Fp8Q, HandWorkedScoresFp8K) { expect_fp8q_case(KDtype::e4m3fn); }

// D = 16 (one scale a row), q = (1, 2, 0, ...). Three tokens, only elements 0 and 1 nonzero:
//   t0: codes 7 (6), 3 (1.5), scale 0x39 (1.125): 6.75 -> 7 (tie to even), 1.6875 -> 1.75;
//       dot = 7 + 2 * 1.75 = 10.5
//   t1: codes 7 (6), 1 (0.5), scale 0x7E (448): 2688 -> 448 (saturated), 224; dot = 896
//   t2: codes 1 (0.5), 3 (1.5), scale 0x01 (2^-9): 2^-10 -> 0 (tie to even), 3 * 2^-10 ->
//       2^-8; dot = 2^-7
// Bytes: element 0 in the low nibble: t0 0x37, t1 0x17, t2 0x31.
ixo::Case nvfp4_case(KDtype q_dtype) {
  ixo::Case c;
  c.cfg = unit_config(1, 2);
  c.cfg.k_dtype = KDtype::nvfp4;
  c.cfg.q_dtype = q_dtype;
  c.R = 1, c.Hq = 1, c.Hk = 1, c.D = 16, c.S = 3, c.rows = 1, c.width = 3;
  c.q.assign(16, 0);
  c.q[0] = ixo::float_to_q(1.0f, q_dtype);
  c.q[1] = ixo::float_to_q(2.0f, q_dtype);
  c.k_cache.assign(3 * 8, 0);
  c.k_cache[0] = 0x37, c.k_cache[8] = 0x17, c.k_cache[16] = 0x31;
  c.k_scales = {0x39, 0x7E, 0x01};
  c.req_to_token = {0, 1, 2};
  c.slot_ids = {0};
  c.seq_lens = {3};
  return c;
}

TEST(Nvfp4Oracle, HandWorked) {
  for (KDtype qd : {KDtype::bf16, KDtype::e4m3fn}) {
    auto c = nvfp4_case(qd);
    for (const auto& e : {ixo::oracle(c), ixo::oracle_naive(c)}) {
      EXPECT_NEAR(e.score[e.at(0, 0, 0)], 10.5, 1e-12) << to_string(qd);
      EXPECT_NEAR(e.score[e.at(0, 0, 1)], 896.0, 1e-12);
      EXPECT_NEAR(e.score[e.at(0, 0, 2)], 0x1p-7, 1e-15);
      EXPECT_EQ(ids_of(e, 0, 0), (Ids{0, 1}));
    }
    // k_scale multiplies the dot as for every dtype: k_scale 2 doubles the scores.
    c.cfg.k_scale = 2.0;
    const auto e = ixo::oracle(c);
    EXPECT_NEAR(e.score[e.at(0, 0, 0)], 21.0, 1e-12);
    EXPECT_NEAR(e.score[e.at(0, 0, 1)], 1792.0, 1e-12);
  }
}

TEST(Nvfp4Oracle, HeadDimMustBeAMultipleOf16) {
  auto c = nvfp4_case(KDtype::bf16);
  c.D = 24;  // shapes otherwise irrelevant: the head dim is checked first
  try {
    ixo::validate(c);
    FAIL() << "no error";
  } catch (const ixo::InputError& e) {
    EXPECT_EQ(e.field(), "D");
    EXPECT_NE(std::string(e.what()).find("24"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("multiple of 16"), std::string::npos) << e.what();
  }
}

TEST(Fp8Q, CodeAbove255IsAnInputError) {
  auto c = nvfp4_case(KDtype::e4m3fn);
  c.q[3] = 0x3F80;  // bf16 1.0 bits in an e4m3fn q
  try {
    ixo::validate(c);
    FAIL() << "no error";
  } catch (const ixo::InputError& e) {
    EXPECT_EQ(e.field(), "q");
    EXPECT_NE(std::string(e.what()).find("16256"), std::string::npos) << e.what();
  }
}

}  // namespace
