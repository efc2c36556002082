// MiniMax's quantized ranked selection as a verdict mode (contract msa-decode, issue 25):
// the selector's re-derivation (ixo/quantized_select.hpp) on hand-worked values, and every
// tier of the ranked verdict (structure, ids within the quantized slack delta, order,
// selector replay, history score buffer, natural units) on hand-built rows. Expected values
// are worked out by hand in the comments, never taken from the code under test. Each test
// names the bug it catches.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <numbers>
#include <numeric>

#include "ixo/contract.hpp"
#include "ixo/error.hpp"
#include "ixo/quantized_select.hpp"
#include "ixo/verdict.hpp"

namespace ixo {
namespace {

// ---- The selector --------------------------------------------------------------------

// lo 0, hi 65534: scale = 65534 / 65534 = 1 exactly, bias = fma(-0, 1, 1.5) = 1.5, so the
// bucket of v is floor(v + 1.5) (all exact in fp32 for these values).
TEST(QuantizedSelect, BucketsOnAUnitScaleAreFloorOfVPlusOneAndAHalf) {
  const float s[] = {0.0f, 65534.0f, 10.4f, 10.6f, 65533.4f};
  const QuantizedRange r = quantized_range(s, {0, 1, 2, 3, 4});
  EXPECT_EQ(r.lo, 0.0f);
  EXPECT_EQ(r.hi, 65534.0f);
  EXPECT_EQ(r.scale, 1.0f);
  EXPECT_EQ(r.bias, 1.5f);
  EXPECT_EQ(quantized_bucket(0.0f, r), 1u);          // floor(1.5)
  EXPECT_EQ(quantized_bucket(65534.0f, r), 65535u);  // floor(65535.5)
  EXPECT_EQ(quantized_bucket(10.4f, r), 11u);        // floor(11.9)
  EXPECT_EQ(quantized_bucket(10.6f, r), 12u);        // floor(12.1)
  EXPECT_EQ(quantized_bucket(65533.4f, r), 65534u);  // floor(65534.9)
  // Below the range and NaN: cvt.rzi.u32 gives 0 (a negative or NaN fma result).
  EXPECT_EQ(quantized_bucket(-5.0f, r), 0u);
  EXPECT_EQ(quantized_bucket(NAN, r), 0u);
  // Above the range: clamped to 65535.
  EXPECT_EQ(quantized_bucket(70000.0f, r), 65535u);
}

// Bug caught: ties broken by the higher id, or by the raw score instead of the bucket.
// 10.4 (id 5) and 10.2 (id 3) share bucket 11: the lower id (3) ranks first although its
// score is smaller; 10.6 (id 4, bucket 12) ranks above both.
// Operator mutants of quantized_select.cpp (docs/mutation.md "operator mutants of the judge"):
// the u32 saturation starts at exactly 2^32 (t >= 2^32, not t > 2^32: (unsigned)2^32 is out of
// range), and a selection of 0 ids returns none (not max(take, 1)).
TEST(QuantizedSelect, SaturationStartsAtExactlyTwoToThe32AndTakeZeroSelectsNothing) {
  QuantizedRange r;
  r.scale = 1.0f, r.bias = 0.0f;                          // t = v
  EXPECT_EQ(quantized_bucket(4294967296.0f, r), 65535u);  // t = 2^32 exactly: saturates
  EXPECT_EQ(quantized_bucket(4294967040.0f, r), 65535u);  // the float below 2^32: min(65535, q)
  const float s[] = {1, 2, 3};
  EXPECT_TRUE(quantized_select(s, {0, 1, 2}, 0).empty());
  EXPECT_EQ(quantized_select(s, {0, 1, 2}, 1), (std::vector<std::int32_t>{2}));
}

TEST(QuantizedSelect, EqualBucketsGoToTheLowerIdNotTheLargerScore) {
  const float s[] = {0.0f, 65534.0f, 7.0f, 10.2f, 10.6f, 10.4f};
  const std::vector<std::int32_t> cand = {0, 1, 2, 3, 4, 5};
  EXPECT_EQ(quantized_select(s, cand, 5), (std::vector<std::int32_t>{1, 4, 3, 5, 2}));
}

// Bug caught: a degenerate row (hi == lo) dividing by zero; MSA gives scale 0, every bucket
// floor(1.5) = 1, so the lowest ids win.
TEST(QuantizedSelect, AllEqualScoresGiveTheLowestIds) {
  const std::vector<float> s(20, 3.25f);
  std::vector<std::int32_t> cand(20);
  std::iota(cand.begin(), cand.end(), 0);
  const QuantizedRange r = quantized_range(s.data(), cand);
  EXPECT_EQ(r.scale, 0.0f);
  EXPECT_EQ(quantized_bucket(3.25f, r), 1u);
  EXPECT_EQ(quantized_select(s.data(), cand, 15),
            (std::vector<std::int32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}));
}

// ---- The ranked verdict on a hand-built row ------------------------------------------
// One row, L = 17 * 128 + 1 = 2177 tokens: nb = 18 blocks, topk 16, init 0 / local 1: block
// 17 forced (1e29), 17 history blocks 0..16. History scores S_b = b * 4096 for b < 16 and
// S_16 = 65534: lo 0, hi 65534, so one quantization step is exactly 1 and the verdict's
// slack delta = 1.01 (tau 0). The oracle selects every history block but the
// two smallest, 0 and 1), ranked 16, 15, ..., 2, then the local block 17.

struct Row {
  Case c;
  Expected e;
  Observed o;
};

Row ranked_row() {
  Row x;
  x.c.R = 1;
  x.c.cfg.topk = 16;
  x.c.seq_lens = {2177};
  x.c.slot_ids = {0};
  Expected& e = x.e;
  e.Hq = 1, e.R = 1, e.NB = 18, e.topk = 16;
  e.nb = {18};
  e.score.resize(18);
  e.tau.assign(18, 0.0);
  e.forced.assign(18, 0);
  for (int b = 0; b < 16; ++b) e.score[b] = b * 4096.0;
  e.score[16] = 65534.0;
  e.score[17] = forced_local_value();
  e.forced[17] = 1;
  // The oracle's 16 best: forced 17, then 16 (65534), 15, ..., 2: blocks 1 (4096) and 0 out.
  e.topk_idx = {2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17};
  Observed& o = x.o;
  o.Hq = 1, o.R = 1, o.topk = 16;
  o.topk_idx = {16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 17};  // MSA's layout
  return x;
}

JudgeOptions msa() {
  JudgeOptions j;
  const Contract k = named_contract("msa-decode");
  j.semantics = k.semantics;
  j.contract = k.label();
  return j;
}

TEST(RankedVerdict, MsaLayoutPassesUnderMsaDecodeAndFailsTheSpecsAscendingRule) {
  const Row x = ranked_row();
  EXPECT_TRUE(judge(x.c, x.e, x.o, msa()).pass) << judge(x.c, x.e, x.o, msa()).summary();
  // Bug caught: a verdict that ignores the contract's order (the spec wants ascending ids).
  EXPECT_FALSE(judge(x.c, x.e, x.o, JudgeOptions{}).pass);
}

// Bug caught: slot 15 not the local block (a kernel that ranks the local page or puts it first).
TEST(RankedVerdict, LocalBlockMustBeInTheLastSlot) {
  Row x = ranked_row();
  std::swap(x.o.topk_idx[0], x.o.topk_idx[15]);  // 17 first, 16 last
  const Verdict v = judge(x.c, x.e, x.o, msa());
  ASSERT_FALSE(v.pass);
  EXPECT_EQ(v.details[0].tier, "structure");
  EXPECT_NE(v.reports[0].find("slot 15 holds the local block 17"), std::string::npos) << v.reports[0];
}

// The quantized slack, hand-worked: selecting block 1 (4096) in place of block 2 (8192) is
// 4096 steps wrong: rejected, and the report names delta (1.01) and the step (1).
TEST(RankedVerdict, ASelectionManyStepsWrongIsRejectedNamingTheQuantizedSlack) {
  Row x = ranked_row();
  x.o.topk_idx[14] = 1;  // 2 -> 1
  const Verdict v = judge(x.c, x.e, x.o, msa());
  ASSERT_FALSE(v.pass);
  EXPECT_EQ(v.details[0].tier, "ids");
  EXPECT_NE(v.reports[0].find("quantized slack delta 1.01"), std::string::npos) << v.reports[0];
  EXPECT_NE(v.reports[0].find("step (hi - lo) / 65534 = 1"), std::string::npos) << v.reports[0];
  EXPECT_NEAR(v.details[0].margin, 4096 - 1.01, 1e-9);
}

// Within one step: move block 1 to 8191.5 (0.5 below block 2's 8192). A quantized selector may
// keep block 1 (they can share a bucket): accepted as a tie swap under msa-decode, rejected
// by the exact selection (the spec) since 8192 > 8191.5 with tau 0.
TEST(RankedVerdict, ASwapWithinOneStepIsAcceptedOnlyUnderTheQuantizedSelection) {
  Row x = ranked_row();
  x.e.score[1] = 8191.5;
  x.o.topk_idx = {16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 1, 17};
  const Verdict v = judge(x.c, x.e, x.o, msa());
  EXPECT_TRUE(v.pass) << v.summary();
  EXPECT_EQ(v.tie_swaps, 1);
  JudgeOptions exact = msa();
  exact.semantics.selection = Selection::exact;
  EXPECT_FALSE(judge(x.c, x.e, x.o, exact).pass);
  // 1.2 steps apart (8190.8 vs 8192) is beyond delta = 1.01: rejected (bug caught: a slack
  // of two or three steps, as MSA's own test tolerance 1.5 * step on both sides allows).
  x.e.score[1] = 8190.8;
  EXPECT_FALSE(judge(x.c, x.e, x.o, msa()).pass);
}

// Bug caught: ranked ids out of descending order by more than the slack.
TEST(RankedVerdict, RankedIdsMustDescendWithinTheSlack) {
  Row x = ranked_row();
  std::swap(x.o.topk_idx[0], x.o.topk_idx[5]);  // 11 (45056) before 16 (65534)
  const Verdict v = judge(x.c, x.e, x.o, msa());
  ASSERT_FALSE(v.pass);
  EXPECT_EQ(v.details[0].tier, "order");
}

// The selector replayed on the kernel's own scores: with the scores returned, a swap that
// the slack accepts is still wrong if the kernel's own buckets say otherwise.
TEST(RankedVerdict, KernelScoresAreReplayedThroughTheSelectorBitExactly) {
  Row x = ranked_row();
  x.o.has_scores = true;
  x.o.NB = 18;
  x.o.scores.assign(18, 0.0f);
  for (int b = 0; b < 17; ++b) x.o.scores[b] = static_cast<float>(x.e.score[b] / std::numbers::log2e);  // natural units
  x.o.scores[17] = NAN;                            // never written (the local column)
  for (int b = 0; b < 17; ++b) x.e.tau[b] = 0.02;  // the fp32 rounding of the natural-unit scores
  {
    const Verdict v = judge(x.c, x.e, x.o, msa());
    EXPECT_TRUE(v.pass) << v.summary();
  }
  // Blocks 16 and 15 swapped: within tau? No (tau 0), and the replay gives 16 first.
  Row y = x;
  std::swap(y.o.topk_idx[0], y.o.topk_idx[1]);
  const Verdict v = judge(y.c, y.e, y.o, msa());
  ASSERT_FALSE(v.pass);
  // Scores ignored by the contract: the replay does not run, the order tier still judges.
  JudgeOptions ignored = msa();
  ignored.semantics.scores = ScoreBuffer::ignored;
  const Verdict w = judge(y.c, y.e, y.o, ignored);
  ASSERT_FALSE(w.pass);
  EXPECT_EQ(w.details[0].tier, "order");
}

TEST(RankedVerdict, ReplayCatchesASwapInsideOneBucket) {
  // Blocks 3 and 4 at the same bucket in the kernel's own scores (within one step): the
  // replay puts the lower id first; a kernel that puts 4 first fails the selector tier
  // (bug caught: ties to the higher id), though the slack accepts the order.
  Row x = ranked_row();
  x.e.score[4] = 12288.3;
  x.e.score[3] = 12288.0;
  x.o.has_scores = true;
  x.o.NB = 18;
  x.o.scores.assign(18, NAN);
  for (int b = 0; b < 17; ++b) x.o.scores[b] = static_cast<float>(x.e.score[b] / std::numbers::log2e);
  for (int b = 0; b < 17; ++b) x.e.tau[b] = 0.02;  // the fp32 rounding of the natural-unit scores
  // Buckets: ((S / log2e) - lo) * 65534 / (hi - lo) + 1.5 with lo = 0, hi = 65534 / log2e:
  // 12288.3 + 1.5 and 12288.0 + 1.5 both floor to 12289 (to fp32 rounding of a few 1e-4).
  x.o.topk_idx = {16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 17};
  const Verdict v = judge(x.c, x.e, x.o, msa());
  ASSERT_FALSE(v.pass);
  EXPECT_EQ(v.details[0].tier, "selector");
  EXPECT_NE(v.reports[0].find("bucket 12289"), std::string::npos) << v.reports[0];
  std::swap(x.o.topk_idx[12], x.o.topk_idx[13]);  // 3 before 4: what the selector does
  EXPECT_TRUE(judge(x.c, x.e, x.o, msa()).pass) << judge(x.c, x.e, x.o, msa()).summary();
}

// History score buffer in natural units: judged on the unforced cells of every row, forced
// cells must stay unwritten (poison tier).
TEST(RankedVerdict, HistoryScoresAreNaturalUnitsAndTheLocalCellStaysUnwritten) {
  Row x = ranked_row();
  x.o.has_scores = true;
  x.o.NB = 18;
  float poison;
  const std::uint32_t bits = kScorePoisonBits;
  std::memcpy(&poison, &bits, 4);
  x.o.scores.assign(18, poison);
  for (int b = 0; b < 17; ++b) x.o.scores[b] = static_cast<float>(x.e.score[b] / std::numbers::log2e);
  JudgeOptions j = msa();
  j.check_poison = true;
  // tau 0 and a float conversion: give every history block a tau of 0.02 (a fp32 rounding).
  for (int b = 0; b < 17; ++b) x.e.tau[b] = 0.02;
  EXPECT_TRUE(judge(x.c, x.e, x.o, j).pass) << judge(x.c, x.e, x.o, j).summary();
  // Bug caught: scores in log2 units under a natural-units contract.
  Row y = x;
  for (int b = 0; b < 17; ++b) y.o.scores[b] = static_cast<float>(y.e.score[b]);
  EXPECT_FALSE(judge(y.c, y.e, y.o, j).pass);
  // Bug caught: the local cell written.
  Row z = x;
  z.o.scores[17] = 1e29f;
  const Verdict v = judge(z.c, z.e, z.o, j);
  ASSERT_FALSE(v.pass);
  EXPECT_EQ(v.details.back().tier, "poison");
}

// A trivial row (nb <= 16) is 0..nb-1 ascending under msa-decode too, and its history
// cells are judged (MSA writes them for every row).
TEST(RankedVerdict, TrivialRowsAreAscendingAndTheirHistoryCellsAreJudged) {
  Case c;
  c.R = 1;
  c.seq_lens = {1000};  // nb = 8
  c.slot_ids = {0};
  Expected e;
  e.Hq = 1, e.R = 1, e.NB = 8, e.topk = 16;
  e.nb = {8};
  e.score = {1, 2, 3, 4, 5, 6, 7, forced_local_value()};
  e.tau.assign(8, 1e-3);
  e.forced = {0, 0, 0, 0, 0, 0, 0, 1};
  e.topk_idx = {0, 1, 2, 3, 4, 5, 6, 7, -1, -1, -1, -1, -1, -1, -1, -1};
  Observed o;
  o.Hq = 1, o.R = 1, o.topk = 16, o.NB = 8, o.has_scores = true;
  o.topk_idx = e.topk_idx;
  o.scores.assign(8, NAN);
  for (int b = 0; b < 7; ++b) o.scores[b] = static_cast<float>(e.score[b] / std::numbers::log2e);
  EXPECT_TRUE(judge(c, e, o, msa()).pass) << judge(c, e, o, msa()).summary();
  o.scores[3] = 0;  // a wrong history cell of a trivial row
  EXPECT_FALSE(judge(c, e, o, msa()).pass);
}

TEST(RankedVerdict, MsaDecodeContractRoundTripsThroughJson) {
  const Contract k = named_contract("msa-decode");
  const Contract back = contract_from_json(contract_to_json(k));
  EXPECT_EQ(back.semantics, k.semantics);
  EXPECT_EQ(back.semantics.selection, Selection::quantized16);
  EXPECT_EQ(back.semantics.order, IdOrder::ranked_forced_last);
  EXPECT_EQ(back.semantics.scores, ScoreBuffer::history);
  EXPECT_EQ(back.semantics.score_units, ScoreUnits::natural);
  EXPECT_THROW(contract_from_json(R"({"selection": "quantized8"})"), InputError);
  EXPECT_THROW(contract_from_json(R"({"score_units": "log10"})"), InputError);
}

}  // namespace
}  // namespace ixo
