// Hand-worked cases: the expected ids are derived in the comments, not by the oracle.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numbers>

#include "ixo/oracle.hpp"
#include "literal_case.hpp"

namespace {

using ixo::test::literal_case;
using ixo::test::small_config;
using Ids = std::vector<std::int32_t>;

Ids ids_of(const ixo::Expected& e, std::int64_t h, std::int64_t r) {
  const auto* p = &e.topk_idx[(h * e.R + r) * e.topk];
  return {p, p + e.topk};
}

// D = 2, q = (sign, 0): the logit of token t is sign * K[t][0] (times a positive scale).
// K first components for tokens 0..7: 3 1 | 5 2 | 0 4 | 6 7   (block size 2)
const std::vector<float> kK = {3, 0, 1, 0, 5, 0, 2, 0, 0, 0, 4, 0, 6, 0, 7, 0};
const std::vector<std::vector<std::int32_t>> kIdentity = {{0, 1, 2, 3, 4, 5, 6, 7}};

TEST(Handworked, MaxWithLocalWindow) {
  // L = 7: blocks {3,1} {5,2} {0,4} {6}; token 7 (value 7) is invisible. nb = 4 > topk 2.
  // local 1 forces block 3; the remaining place goes to the best block max: b1 (5) over
  // b2 (4) and b0 (3). Ascending: [1, 3].
  auto c = literal_case(small_config(2, 2, 0, 1), 1, 1, 2, {1, 0}, kK, kIdentity, {0}, {7});
  EXPECT_EQ(ids_of(ixo::oracle(c), 0, 0), (Ids{1, 3}));
  EXPECT_EQ(ids_of(ixo::oracle_naive(c), 0, 0), (Ids{1, 3}));
}

TEST(Handworked, PartialBlockIsMaskedWithMinusInfinityNotZero) {
  // q = (-1, 0): logits -3 -1 | -5 -2 | 0 -4 | -6 (-7 invisible). Block maxima -1, -2, 0, -6.
  // No forcing, topk 2: b2 (0) and b0 (-1) -> [0, 2]. A kernel that masks the invisible
  // token with 0 instead of -inf would give b3 a max of 0 and select [2, 3].
  auto c = literal_case(small_config(2, 2), 1, 1, 2, {-1, 0}, kK, kIdentity, {0}, {7});
  const auto e = ixo::oracle(c);
  EXPECT_EQ(ids_of(e, 0, 0), (Ids{0, 2}));
  EXPECT_LT(e.score[e.at(0, 0, 3)], -5.0);  // -6 * scale with scale = 2^-0.5 * log2(e) > 0.7
}

TEST(Handworked, LseDiffersFromMax) {
  // sm_scale = ln 2 makes the log2-unit logit equal the dot: tokens 1 1 | 1.5 0 | 0 0 | 1.75.
  // max:  b0 1, b1 1.5, b2 0, b3 1.75                      -> top-1 is b3 -> [3]
  // lse:  b0 log2(2+2) = 2, b1 log2(2^1.5 + 1) = 1.936,
  //       b2 log2(1+1) = 1, b3 1.75                         -> top-1 is b0 -> [0]
  const std::vector<float> k = {1, 0, 1, 0, 1.5, 0, 0, 0, 0, 0, 0, 0, 1.75, 0, 9, 0};
  auto cfg = small_config(2, 1);
  cfg.sm_scale = std::numbers::ln2;
  auto c = literal_case(cfg, 1, 1, 2, {1, 0}, k, kIdentity, {0}, {7});
  EXPECT_EQ(ids_of(ixo::oracle(c), 0, 0), (Ids{3}));
  c.cfg.score_type = ixo::ScoreType::lse;
  const auto e = ixo::oracle(c);
  EXPECT_EQ(ids_of(e, 0, 0), (Ids{0}));
  EXPECT_NEAR(e.score[e.at(0, 0, 0)], 2.0, 1e-12);
  EXPECT_NEAR(e.score[e.at(0, 0, 1)], std::log2(std::exp2(1.5) + 1.0), 1e-12);
}

TEST(Handworked, LocalWinsOverInitAndInitOutranksLocal) {
  // 10 tokens, block 2 -> nb 5. init 2 forces b0, b1 to 1e30; local 2 forces b3, b4 to
  // 1e29. topk 3: both init blocks, then the lower id of the equal local blocks -> [0, 1, 3].
  std::vector<float> k(20, 0.0f);
  std::vector<std::vector<std::int32_t>> t = {{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}};
  auto c = literal_case(small_config(2, 3, 2, 2), 1, 1, 2, {1, 0}, k, t, {0}, {10});
  auto e = ixo::oracle(c);
  EXPECT_EQ(ids_of(e, 0, 0), (Ids{0, 1, 3}));
  EXPECT_EQ(e.score[e.at(0, 0, 0)], static_cast<double>(1e30f));
  EXPECT_EQ(e.score[e.at(0, 0, 4)], static_cast<double>(1e29f));
  // local 4 covers b1..b4: b1 is both init and local and gets the local value 1e29.
  c.cfg.local_blocks = 4;
  e = ixo::oracle(c);
  EXPECT_EQ(e.score[e.at(0, 0, 1)], static_cast<double>(1e29f));
  EXPECT_EQ(ids_of(e, 0, 0), (Ids{0, 1, 2}));  // b0 (1e30), then b1, b2 (lowest ids of 1e29)
}

TEST(Handworked, LocalZeroForcesNothing) {
  // Same K as the first test, q = (-1, 0), local 0 and init 0: nothing is forced, the
  // last block (-6) is dropped in favour of b2 (0) -> [0, 2] (as above), never b3.
  auto c = literal_case(small_config(2, 2, 0, 0), 1, 1, 2, {-1, 0}, kK, kIdentity, {0}, {7});
  const auto e = ixo::oracle(c);
  for (std::int64_t b = 0; b < 4; ++b) EXPECT_FALSE(e.forced[e.at(0, 0, b)]);
}

TEST(Handworked, EqualScoresPreferTheLowerBlockId) {
  std::vector<float> k(16, 1.0f);
  auto c = literal_case(small_config(2, 2), 1, 1, 2, {1, 1}, k, kIdentity, {0}, {8});
  EXPECT_EQ(ids_of(ixo::oracle(c), 0, 0), (Ids{0, 1}));
}

TEST(Handworked, TrivialInactiveAndEmptyRows) {
  // Row 0: L 3 -> nb 2 <= topk 4 -> [0, 1, -1, -1] whatever the scores.
  // Row 1: slot 5 lies outside the 1-row table -> inactive -> all -1.
  // Row 2: L 0 -> nothing.
  auto c = literal_case(small_config(2, 4), 1, 1, 2, {1, 0, 1, 0, 1, 0}, kK, kIdentity, {0, 5, 0}, {3, 6, 0});
  const auto e = ixo::oracle(c);
  EXPECT_EQ(ids_of(e, 0, 0), (Ids{0, 1, -1, -1}));
  EXPECT_EQ(ids_of(e, 0, 1), (Ids{-1, -1, -1, -1}));
  EXPECT_EQ(ids_of(e, 0, 2), (Ids{-1, -1, -1, -1}));
  EXPECT_EQ(e.nb[1], 0);
}

TEST(Handworked, TokenSlotsGoThroughTheTableWithNegativeAliases) {
  // The cache holds the 8 tokens in reverse order; the table maps position t to slot
  // 7 - t, written as the negative alias (7 - t) - 8 for odd t. Same logical values as
  // the first test, so the same answer [1, 3].
  std::vector<float> k(16);
  std::vector<std::vector<std::int32_t>> t(2, std::vector<std::int32_t>(8, 0));
  for (int i = 0; i < 8; ++i) {
    k[2 * (7 - i)] = kK[2 * i];
    t[1][i] = (i % 2) ? (7 - i) - 8 : 7 - i;
  }
  // Row reads table row 1 (row 0 is a decoy that maps everything to slot 0).
  auto c = literal_case(small_config(2, 2, 0, 1), 1, 1, 2, {1, 0}, k, t, {1}, {7});
  EXPECT_EQ(ids_of(ixo::oracle(c), 0, 0), (Ids{1, 3}));
}

TEST(Handworked, VerifyRowsEachUseTheirOwnLength) {
  // One request, 2 draft rows: L = 5 and 6 (prefix 4), block 2 -> nb 3 and 3; topk 1,
  // local 0. Token values 3 1 | 5 2 | 0 4: row 0 sees token 4 (0) only in b2 -> b1 (5);
  // row 1 sees tokens 4, 5 (0, 4) -> still b1 (5). Row maxima of b2: 0 and 4.
  auto c = literal_case(small_config(2, 1), 1, 1, 2, {1, 0, 1, 0}, kK, kIdentity, {0, 0}, {5, 6});
  const auto e = ixo::oracle(c);
  EXPECT_EQ(ids_of(e, 0, 0), (Ids{1}));
  EXPECT_EQ(ids_of(e, 0, 1), (Ids{1}));
  const double scale = std::sqrt(0.5) * std::numbers::log2e;
  EXPECT_DOUBLE_EQ(e.score[e.at(0, 0, 2)], 0.0 * scale);
  EXPECT_DOUBLE_EQ(e.score[e.at(0, 1, 2)], 4.0 * scale);
}

TEST(Handworked, HeadsMapToTheirKvHead) {
  // Hq 2, Hk 2, D 1: head 0 reads K head 0 (values 1 2 | 3 0), head 1 reads K head 1
  // (values 4 0 | 1 1). topk 1, L 4, block 2: head 0 -> b1 (3), head 1 -> b0 (4).
  const std::vector<float> k = {1, 4, 2, 0, 3, 1, 0, 1};  // [S=4, Hk=2, D=1]
  auto c = literal_case(small_config(2, 1), 2, 2, 1, {1, 1}, k, {{0, 1, 2, 3}}, {0}, {4});
  const auto e = ixo::oracle(c);
  EXPECT_EQ(ids_of(e, 0, 0), (Ids{1}));
  EXPECT_EQ(ids_of(e, 1, 0), (Ids{0}));
}

TEST(Handworked, Fp8KIsDecodedWithItsOwnFormatAndScaled) {
  // e4m3fnuz code 0x40 is 1.0 (bias 8) while e4m3fn code 0x40 is 2.0 (bias 7). With
  // k_scale -1 the ranking flips: values 1 2 | 0.5 0.25 -> scaled -1 -2 | -0.5 -0.25
  // -> top-1 is b1 (max -0.25) instead of b0 (max 2).
  auto cfg = small_config(2, 1);
  cfg.k_dtype = ixo::KDtype::e4m3fnuz;
  auto c = literal_case(cfg, 1, 1, 1, {1}, {1, 2, 0.5, 0.25}, {{0, 1, 2, 3}}, {0}, {4});
  EXPECT_EQ(c.k_cache[0], 0x40);
  EXPECT_EQ(ids_of(ixo::oracle(c), 0, 0), (Ids{0}));
  c.cfg.k_scale = -1.0;
  EXPECT_EQ(ids_of(ixo::oracle(c), 0, 0), (Ids{1}));
}

// Rule: a block with a NaN logit scores NaN, for max and lse alike, even when a larger finite
// logit shares the block (judge mutant 19, block_nan_dropped: the max would skip the NaN).
// q = (1, 0); tokens 3 NaN | 1 0 | 2 0 | 0 0: block 0 holds 3 and NaN.
TEST(Handworked, ANanLogitMakesItsBlockNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> k = {3, 0, nan, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0};
  for (auto st : {ixo::ScoreType::max, ixo::ScoreType::lse}) {
    auto cfg = small_config(2, 1);
    cfg.score_type = st;
    const auto e = ixo::oracle(literal_case(cfg, 1, 1, 2, {1, 0}, k, kIdentity, {0}, {8}));
    EXPECT_TRUE(std::isnan(e.score[e.at(0, 0, 0)])) << ixo::to_string(st) << ": " << e.score[e.at(0, 0, 0)];
    EXPECT_FALSE(std::isnan(e.score[e.at(0, 0, 1)]));
  }
}

}  // namespace
