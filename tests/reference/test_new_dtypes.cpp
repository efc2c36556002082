// Issue 25 item 3: fp8 (e4m3fn) q and NVFP4 K in the oracle, the case format, the
// generators and the contract. Every expected value is worked out by hand in the comments
// from the format definitions (docs/semantics.md "fp8 q" and "NVFP4 K"), not from the code.
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

#include "expect_load_error.hpp"
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <numbers>
#include <random>
#include <string>

#include "ixo/case_io.hpp"
#include "ixo/contract.hpp"
#include "ixo/error.hpp"
#include "ixo/generate.hpp"
#include "ixo/npy.hpp"
#include "ixo/oracle.hpp"
#include "literal_case.hpp"

namespace fs = std::filesystem;

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

// ---- Case files -------------------------------------------------------------------------

struct Dir : ::testing::Test {
  std::string dir;
  void SetUp() override {
    dir = (fs::temp_directory_path() / ("ixo-dt-" + std::to_string(std::random_device{}()))).string();
  }
  void TearDown() override { fs::remove_all(dir); }
  std::string path(const char* f) const { return (fs::path(dir) / f).string(); }
  void expect_error(const std::string& field, const std::string& needle) const {
    ixo::test::expect_load_error(dir, field, {needle});
  }
};

ixo::GenSpec new_dtype_spec(KDtype q, KDtype k) {
  ixo::GenSpec s = ixo::preset("tiny");
  s.cfg.q_dtype = q;
  s.cfg.k_dtype = k;
  return s;
}

TEST_F(Dir, RoundTrip) {
  for (auto [qd, kd] : {std::pair{KDtype::e4m3fn, KDtype::bf16}, std::pair{KDtype::bf16, KDtype::nvfp4},
                        std::pair{KDtype::e4m3fn, KDtype::nvfp4}}) {
    const ixo::Case c = ixo::generate(new_dtype_spec(qd, kd), 5);
    ixo::save_case(c, dir);
    EXPECT_EQ(ixo::read_npy(path("q.npy"), "q").descr, qd == KDtype::bf16 ? "<u2" : "|u1");
    const auto k = ixo::read_npy(path("k_cache.npy"), "k_cache");
    EXPECT_EQ(k.shape[2], kd == KDtype::nvfp4 ? c.D / 2 : c.D);
    EXPECT_EQ(fs::exists(path("k_scales.npy")), kd == KDtype::nvfp4);
    for (const ixo::Case& d : {ixo::load_case(dir), ixo::load_case_mapped(dir)}) {
      EXPECT_EQ(d.cfg.q_dtype, qd);
      EXPECT_EQ(d.cfg.k_dtype, kd);
      EXPECT_EQ(d.q, c.q);
      EXPECT_TRUE(std::equal(d.k_view().begin(), d.k_view().end(), c.k_cache.begin(), c.k_cache.end()));
      EXPECT_EQ(d.k_scales, c.k_scales);
      const auto a = ixo::oracle(c), b = ixo::oracle(d);
      EXPECT_EQ(a.topk_idx, b.topk_idx);
      EXPECT_EQ(a.score.size(), b.score.size());
      for (std::size_t i = 0; i < a.score.size(); ++i)
        if (!std::isnan(a.score[i])) {
          EXPECT_EQ(a.score[i], b.score[i]) << i;
        }
    }
    fs::remove_all(dir);
  }
}

TEST_F(Dir, OldCaseJsonHasNoQDtypeKey) {
  ixo::save_case(ixo::generate(ixo::preset("tiny"), 5), dir);
  std::ifstream in(path("case.json"));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.find("q_dtype"), std::string::npos) << text;
}

TEST_F(Dir, Fp8QWithUint16NpyIsAnError) {
  // q_dtype e4m3fn in case.json but q.npy still holds bf16 bits (<u2).
  const ixo::Case c = ixo::generate(new_dtype_spec(KDtype::e4m3fn, KDtype::bf16), 5);
  ixo::save_case(c, dir);
  ixo::write_npy(path("q.npy"), "<u2", {c.R, c.Hq, c.D}, c.q.data(), c.q.size() * 2);
  expect_error("q", "q_dtype e4m3fn");
}

TEST_F(Dir, Bf16QWithUint8NpyIsAnError) {
  const ixo::Case c = ixo::generate(new_dtype_spec(KDtype::e4m3fn, KDtype::bf16), 5);
  ixo::save_case(c, dir);
  std::string j = ixo::config_to_json(c.cfg);
  j.replace(j.find("\"e4m3fn\""), 8, "\"bf16\"");
  std::ofstream(path("case.json")) << j;
  expect_error("q", "'|u1'");
}

TEST_F(Dir, UnknownQDtype) {
  const ixo::Case c = ixo::generate(new_dtype_spec(KDtype::e4m3fn, KDtype::bf16), 5);
  ixo::save_case(c, dir);
  std::string j = ixo::config_to_json(c.cfg);
  j.replace(j.find("\"e4m3fn\""), 8, "\"e5m2\"");
  std::ofstream(path("case.json")) << j;
  expect_error("q_dtype", "'e5m2'");
}

TEST_F(Dir, WrongScalesShape) {
  const ixo::Case c = ixo::generate(new_dtype_spec(KDtype::bf16, KDtype::nvfp4), 5);
  ixo::save_case(c, dir);
  const std::vector<std::uint8_t> s(static_cast<std::size_t>(c.S * c.Hk * c.D / 8), 0x38);
  ixo::write_npy(path("k_scales.npy"), "|u1", {c.S, c.Hk, c.D / 8}, s.data(), s.size());
  expect_error("k_scales", "[S, Hk, D/16]");
}

TEST_F(Dir, MissingScales) {
  ixo::save_case(ixo::generate(new_dtype_spec(KDtype::bf16, KDtype::nvfp4), 5), dir);
  fs::remove(path("k_scales.npy"));
  expect_error("k_scales", "");
}

TEST_F(Dir, ScalesWithoutNvfp4) {
  const ixo::Case c = ixo::generate(new_dtype_spec(KDtype::bf16, KDtype::nvfp4), 5);
  ixo::save_case(c, dir);
  ixo::Case e = ixo::generate(ixo::preset("tiny"), 5);
  e.cfg.k_dtype = KDtype::e4m3fn;
  e.k_cache.assign(static_cast<std::size_t>(e.S * e.Hk * e.D), 0x38);
  ixo::save_case(e, dir + "-e");
  fs::copy_file(path("k_scales.npy"), dir + "-e/k_scales.npy");
  try {
    ixo::load_case(dir + "-e");
    FAIL();
  } catch (const ixo::InputError& x) {
    EXPECT_EQ(x.field(), "k_scales") << x.what();
    EXPECT_NE(std::string(x.what()).find("e4m3fn"), std::string::npos) << x.what();
  }
  fs::remove_all(dir + "-e");
}

TEST_F(Dir, Nvfp4HeadDimNotAMultipleOf16) {
  // A bf16-K case of D 24 turned into nvfp4 by hand: k_cache [S, Hk, 12], k_scales [S, Hk, 1].
  ixo::GenSpec s = ixo::preset("tiny");
  s.D = 24;
  const ixo::Case c = ixo::generate(s, 5);
  ixo::save_case(c, dir);
  std::string j = ixo::config_to_json(c.cfg);
  j.replace(j.find("\"bf16\""), 6, "\"nvfp4\"");
  std::ofstream(path("case.json")) << j;
  const std::vector<std::uint8_t> k(static_cast<std::size_t>(c.S * c.Hk * 12), 0x22),
      sc(static_cast<std::size_t>(c.S * c.Hk), 0x38);
  ixo::write_npy(path("k_cache.npy"), "|u1", {c.S, c.Hk, 12}, k.data(), k.size());
  ixo::write_npy(path("k_scales.npy"), "|u1", {c.S, c.Hk, 1}, sc.data(), sc.size());
  expect_error("D", "got 24");
}

TEST_F(Dir, Nvfp4KCacheNotPacked) {
  // k_cache [S, Hk, D] (one code a byte) instead of [S, Hk, D/2].
  const ixo::Case c = ixo::generate(new_dtype_spec(KDtype::bf16, KDtype::nvfp4), 5);
  ixo::save_case(c, dir);
  const std::vector<std::uint8_t> k(static_cast<std::size_t>(c.S * c.Hk * c.D), 0x22);
  ixo::write_npy(path("k_cache.npy"), "|u1", {c.S, c.Hk, c.D}, k.data(), k.size());
  expect_error("k_cache", "nvfp4");
}

// ---- Generators and contract -------------------------------------------------------------

TEST(NewDtypeGenerators, EveryValueFamilyValidates) {
  for (auto v :
       {ixo::Values::gaussian, ixo::Values::exact, ixo::Values::near_tie, ixo::Values::ladder, ixo::Values::plateau})
    for (auto [qd, kd] : {std::pair{KDtype::e4m3fn, KDtype::e4m3fn}, std::pair{KDtype::bf16, KDtype::nvfp4},
                          std::pair{KDtype::e4m3fn, KDtype::nvfp4}}) {
      ixo::GenSpec s = new_dtype_spec(qd, kd);
      s.values = v;
      s.fp8_specials = v != ixo::Values::exact;  // special codes (nvfp4: scales) would break the integers
      const ixo::Case c = ixo::generate(s, 11);
      EXPECT_NO_THROW(ixo::validate(c));
      EXPECT_EQ(c.cfg.q_dtype, qd);
      for (auto x : c.q) EXPECT_LE(x, qd == KDtype::bf16 ? 0xFFFF : 0xFF);
      if (v == ixo::Values::exact) {  // integer K (nvfp4: E2M1 0..4, scale 1) and +-1 q: integer dots
        const auto e = ixo::oracle(c);
        const double scale = c.effective_sm_scale() * c.cfg.q_scale * std::numbers::log2e * c.cfg.k_scale;
        for (std::size_t i = 0; i < e.score.size(); ++i)
          if (std::isfinite(e.score[i]) && !e.forced[i]) {
            EXPECT_NEAR(e.score[i] / scale, std::round(e.score[i] / scale), 1e-9);
          }
      }
    }
}

// Values::ladder / plateau copy a slot's whole K row into every token of a level; for NVFP4 the
// row's block scales travel with its bytes, so any two K rows with equal bytes carry equal
// scales. Kills generate.cpp `kv_row * srow` -> `kv_row / srow` (a level's bytes with another
// row's scales), the reference survivor of session 14's judge-mutant run.
TEST(NewDtypeGenerators, LevelsCopyAnNvfp4RowWithItsScales) {
  for (auto v : {ixo::Values::ladder, ixo::Values::plateau})
    for (std::uint64_t seed : {3, 11, 17}) {
      ixo::GenSpec s = new_dtype_spec(KDtype::bf16, KDtype::nvfp4);
      s.values = v;
      s.fp8_specials = false;  // specials rewrite single scales after the copies
      const ixo::Case c = ixo::generate(s, seed);
      const std::size_t row = static_cast<std::size_t>(ixo::k_row_bytes(c.cfg.k_dtype, c.D));
      const std::size_t srow = static_cast<std::size_t>(c.D / 16);
      std::map<std::string, std::string> scales_of;  // K row bytes -> its scales
      int copies = 0;
      for (std::size_t r = 0; r < static_cast<std::size_t>(c.S * c.Hk); ++r) {
        const std::string bytes(c.k_cache.begin() + r * row, c.k_cache.begin() + (r + 1) * row);
        const std::string sc(c.k_scales.begin() + r * srow, c.k_scales.begin() + (r + 1) * srow);
        const auto [it, fresh] = scales_of.emplace(bytes, sc);
        if (fresh) continue;
        ++copies;
        EXPECT_EQ(it->second, sc) << "K row " << r << " has the bytes of an earlier row but other scales (seed " << seed
                                  << ")";
      }
      EXPECT_GT(copies, 0) << "the level fill copied no row (seed " << seed << ")";
    }
}

// fp8_specials/fp8_nonfinite put a special code into any element of a row, the first one
// included (the element a kernel's first dot lane reads): NaN/Inf codes never come from the
// Gaussian fill, so each one seen at element d was put there by the specials.
TEST(NewDtypeGenerators, SpecialCodesReachEveryElementOfARow) {
  ixo::GenSpec s = ixo::preset("fp8-e4m3fn");
  s.D = 16;
  s.fp8_specials = s.fp8_nonfinite = true;
  const ixo::Case c = ixo::generate(s.up_to(4000), 5);
  std::vector<int> seen(static_cast<std::size_t>(c.D), 0);
  for (std::int64_t row = 0; row < c.S * c.Hk; ++row)
    for (std::int64_t d = 0; d < c.D; ++d)
      if (ixo::fp8_kind(c.k_cache[static_cast<std::size_t>(row * c.D + d)], c.cfg.k_dtype) == ixo::Fp8Kind::nonfinite)
        ++seen[static_cast<std::size_t>(d)];
  for (std::int64_t d = 0; d < c.D; ++d)
    EXPECT_GT(seen[static_cast<std::size_t>(d)], 0) << "element " << d << " of " << c.S * c.Hk << " rows";
}

// The selector sweep (msa-sweep, bf16 K): q is 1 on elements 0..2 and 0 elsewhere, K lives
// on elements 0..2 only (x = a + b + r, three bf16 terms), and the six value sets go one a
// request, so among msa-sweep's six requests one is set 1 (every block 1.5: every token of
// its table row the same K row).
TEST(NewDtypeGenerators, SelectorSweepLayoutAndEveryValueSetOnce) {
  for (std::uint64_t seed = 1; seed <= 24; ++seed) {
    const ixo::Case c = ixo::generate(ixo::preset("msa-sweep"), seed);
    ASSERT_EQ(c.cfg.k_dtype, KDtype::bf16);
    const std::uint16_t one = ixo::float_to_q(1.0f, c.cfg.q_dtype);
    for (std::int64_t i = 0; i < c.R * c.Hq; ++i)
      for (std::int64_t d = 0; d < c.D; ++d)
        ASSERT_EQ(c.q[static_cast<std::size_t>(i * c.D + d)], d < 3 ? one : 0)
            << "seed " << seed << " q row " << i << " element " << d;
    const std::size_t row_bytes = static_cast<std::size_t>(c.Hk * c.D * 2);
    for (std::int64_t slot = 0; slot < c.S; ++slot)
      for (std::int64_t h = 0; h < c.Hk; ++h)
        for (std::int64_t d = 3; d < c.D; ++d)
          for (int byte = 0; byte < 2; ++byte)
            ASSERT_EQ(c.k_cache[static_cast<std::size_t>(slot) * row_bytes +
                                static_cast<std::size_t>((h * c.D + d) * 2 + byte)],
                      0)
                << "seed " << seed << " slot " << slot << " element " << d;
    std::vector<std::int64_t> read(static_cast<std::size_t>(c.rows), 0);
    for (std::int64_t r = 0; r < c.R; ++r)
      if (ixo::table_row(c, r) >= 0)
        read[static_cast<std::size_t>(ixo::table_row(c, r))] =
            std::max(read[static_cast<std::size_t>(ixo::table_row(c, r))], c.seq_lens[r]);
    bool constant_row = false;
    for (std::int64_t b = 0; b < c.rows && !constant_row; ++b) {
      if (read[static_cast<std::size_t>(b)] < 2) continue;
      auto k_row = [&](std::int64_t t) {
        std::int64_t s = c.req_to_token[static_cast<std::size_t>(b * c.width + t)];
        if (s < 0) s += c.S;
        return std::vector<std::uint8_t>(
            c.k_cache.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(s) * row_bytes),
            c.k_cache.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(s + 1) * row_bytes));
      };
      const auto first = k_row(0);
      constant_row = true;
      for (std::int64_t t = 1; t < read[static_cast<std::size_t>(b)] && constant_row; ++t)
        constant_row = k_row(t) == first;
    }
    EXPECT_TRUE(constant_row) << "seed " << seed << ": no request took value set 1 (every block 1.5)";
  }
}

// msa-sweep's request lengths sit around 128-token page boundaries past 16 pages
// (p * 128 + {-1, 0, 1, 7}, p >= 16: presets.cpp, upstream-msa.md), where an upstream
// indexer's page arithmetic breaks.
TEST(NewDtypeGenerators, MsaSweepLengthsSitAroundPageBoundariesPastSixteenPages) {
  const ixo::GenSpec s = ixo::preset("msa-sweep");
  ASSERT_EQ(s.prefixes.size(), 6u);
  for (const std::int64_t L : s.prefixes) {
    const std::int64_t p = (L + 1) / 128, off = L - p * 128;
    EXPECT_GE(p, 16) << L;
    EXPECT_TRUE(off == -1 || off == 0 || off == 1 || off == 7) << L;
  }
}

TEST(NewDtypeGenerators, Nvfp4GaussianSaturatesSomeElements) {
  const ixo::Case c = ixo::generate(new_dtype_spec(KDtype::bf16, KDtype::nvfp4).up_to(600), 3);
  // Count elements whose exact product exceeds 448 (then decoded as +-448) and products
  // that needed rounding: the generator's large scales must reach both.
  std::int64_t saturated = 0, rounded = 0;
  for (std::int64_t row = 0; row < c.S * c.Hk; ++row)
    for (std::int64_t d = 0; d < c.D; ++d) {
      const std::uint8_t n = ixo::nvfp4_nibble(&c.k_cache[static_cast<std::size_t>(row * c.D / 2)], d);
      const std::uint8_t s = c.k_scales[static_cast<std::size_t>(row * c.D / 16 + d / 16)];
      const double exact = static_cast<double>(ixo::e2m1_to_float(n)) * ixo::fp8_to_float(s, KDtype::e4m3fn);
      saturated += std::fabs(exact) > 448;
      rounded += std::fabs(exact) <= 448 && exact != ixo::nvfp4_to_float(n, s);
    }
  EXPECT_GT(saturated, 0);
  EXPECT_GT(rounded, 0);
}

TEST(NewDtypeContract, QDtypesRefusesAndRoundTrips) {
  ixo::Contract k = ixo::contract_from_json(R"({"q_dtypes": ["bf16"]})");
  ASSERT_EQ(k.q_dtypes, std::vector<KDtype>{KDtype::bf16});
  const ixo::Case fp8q = ixo::generate(new_dtype_spec(KDtype::e4m3fn, KDtype::bf16), 1);
  ASSERT_TRUE(k.refuses(fp8q));
  EXPECT_NE(k.refuses(fp8q)->find("q_dtype e4m3fn"), std::string::npos);
  EXPECT_FALSE(ixo::Contract{}.refuses(fp8q));  // the spec takes fp8 q
  EXPECT_EQ(ixo::contract_from_json(ixo::contract_to_json(k)).q_dtypes, k.q_dtypes);
  EXPECT_THROW(ixo::contract_from_json(R"({"q_dtypes": ["e5m2"]})"), ixo::InputError);
  // Our CP kernels and SGLang's Triton kernel take neither fp8 q nor nvfp4 K.
  const ixo::Case fp4 = ixo::generate(new_dtype_spec(KDtype::bf16, KDtype::nvfp4), 1);
  for (const char* name : {"ixo-cp", "sglang-triton-decode"}) {
    EXPECT_TRUE(ixo::named_contract(name).refuses(fp8q)) << name;
    EXPECT_TRUE(ixo::named_contract(name).refuses(fp4)) << name;
  }
  EXPECT_FALSE(ixo::named_contract("ixo-native").refuses(fp4));
}

TEST(NewDtypeContract, NonfiniteFp8QAndNanScales) {
  ixo::Contract finite;
  finite.nonfinite = false;
  ixo::Case q = ixo::generate(new_dtype_spec(KDtype::e4m3fn, KDtype::bf16), 1);
  EXPECT_FALSE(finite.refuses(q));
  q.q[0] = 0x7F;  // e4m3fn NaN
  EXPECT_TRUE(finite.refuses(q));
  ixo::Case k = ixo::generate(new_dtype_spec(KDtype::bf16, KDtype::nvfp4), 1);
  EXPECT_FALSE(finite.refuses(k));
  k.k_scales[0] = 0xFF;  // NaN scale
  EXPECT_TRUE(finite.refuses(k));
}

}  // namespace
