// Each verdict check catches what it is for, and accepts what it must accept.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstring>
#include <numeric>

#include "ixo/case_io.hpp"
#include "ixo/generate.hpp"
#include "ixo/oracle.hpp"
#include "ixo/verdict.hpp"

namespace {

struct Fixture : ::testing::Test {
  ixo::Case c;
  ixo::Expected e;
  ixo::Observed good;
  void SetUp() override {
    ixo::GenSpec s = ixo::preset("verify");
    s.cfg.topk = 4;
    s.cfg.init_blocks = 1;
    s.padding_requests = 1;
    s.inactive_requests = 1;
    s.max_prefix = 3000;
    c = ixo::generate(s, 11);
    e = ixo::oracle(c);
    good = ixo::expected_as_observed(e);
    // Our kernels' buffers: poison outside the written region.
    float poison;
    std::memcpy(&poison, &ixo::kScorePoisonBits, 4);
    for (std::int64_t r = 0; r < e.R; ++r)
      for (std::int64_t b = 0; b < e.NB; ++b)
        if (!ixo::score_cell_written(e, r, b)) good.scores[static_cast<std::size_t>(e.at(0, r, b))] = poison;
  }
  // First row with nb > topk + 2 (a real selection with unselected blocks).
  std::int64_t real_row() const {
    for (std::int64_t r = 0; r < e.R; ++r)
      if (e.nb[r] > e.topk + 2) return r;
    return -1;
  }
  std::int32_t* ids(ixo::Observed& o, std::int64_t r) { return &o.topk_idx[r * o.topk]; }
  ixo::Verdict judge(const ixo::Observed& o, bool poison = true, bool exact = false) {
    ixo::JudgeOptions opt;
    opt.check_poison = poison;
    opt.exact_ids = exact;
    return ixo::judge(c, e, o, opt);
  }
};

TEST_F(Fixture, OracleOutputsPassAndTheCheckIsNotVacuous) {
  const auto v = judge(good);
  EXPECT_TRUE(v.pass) << v.summary();
  EXPECT_EQ(v.rows_checked, e.R);
  ASSERT_GE(real_row(), 0);
}

// Issue 10: a +inf element in K gives a +inf block score with tau inf; (inf - inf) was NaN
// and the block dropped out of the comparison, so replacing it passed as a "tie swap".
// Fails on the old verdict (it accepted the swap).
TEST_F(Fixture, DroppingAnInfiniteBlockIsNeverATieSwap) {
  const std::int64_t r = real_row();
  ASSERT_GE(r, 0);
  const std::int32_t* want = &e.topk_idx[static_cast<std::size_t>(r * e.topk)];
  std::int32_t inf_b = -1;  // a selected, unforced block becomes +inf with an infinite bound
  for (std::int64_t k = 0; k < e.topk && inf_b < 0; ++k)
    if (!e.forced[e.at(0, r, want[k])]) inf_b = want[k];
  ASSERT_GE(inf_b, 0);
  e.score[e.at(0, r, inf_b)] = std::numeric_limits<double>::infinity();
  e.tau[e.at(0, r, inf_b)] = std::numeric_limits<double>::infinity();
  std::int32_t best_unselected = -1;
  for (std::int32_t b = 0; b < e.nb[r]; ++b)
    if (std::find(want, want + e.topk, b) == want + e.topk &&
        (best_unselected < 0 || e.score[e.at(0, r, b)] > e.score[e.at(0, r, best_unselected)]))
      best_unselected = b;
  auto o = good;
  o.has_scores = false;
  std::replace(ids(o, r), ids(o, r) + o.topk, inf_b, best_unselected);
  std::sort(ids(o, r), ids(o, r) + o.topk);
  const auto v = judge(o, false);
  EXPECT_FALSE(v.pass) << v.summary();
  ASSERT_FALSE(v.details.empty());
  EXPECT_EQ(v.details[0].tier, "ids");
  // A finite score with an infinite bound is judged exactly too: swapping it out fails.
  e.score[e.at(0, r, inf_b)] = 1e6;
  EXPECT_FALSE(judge(o, false).pass);
}

// Issue 10: an inactive row's failure says why the row is inactive.
TEST_F(Fixture, AnInactiveRowIsReportedAsSuch) {
  std::int64_t r = -1;
  for (std::int64_t i = 0; i < e.R && r < 0; ++i)
    if (ixo::table_row(c, i) < 0 && c.seq_lens[i] > 0) r = i;
  ASSERT_GE(r, 0) << "the fixture has inactive requests";
  auto o = good;
  ids(o, r)[0] = 0;
  const auto v = judge(o, false);
  ASSERT_FALSE(v.pass);
  EXPECT_NE(v.reports[0].find(fmt::format("row {} inactive: slot_ids[{}]={} is not a table row", r, r, c.slot_ids[r])),
            std::string::npos)
      << v.reports[0];
  EXPECT_NE(v.reports[0].find("expected all -1"), std::string::npos);
}

TEST_F(Fixture, UnsortedIdsFailStructure) {
  auto o = good;
  std::swap(ids(o, real_row())[0], ids(o, real_row())[1]);
  const auto v = judge(o);
  ASSERT_FALSE(v.pass);
  EXPECT_NE(v.reports[0].find("structure"), std::string::npos) << v.summary();
}

TEST_F(Fixture, DuplicateIdFailsStructure) {
  auto o = good;
  ids(o, real_row())[1] = ids(o, real_row())[0];
  EXPECT_FALSE(judge(o).pass);
}

TEST_F(Fixture, IdAtOrPastTheRowsBlockCountFails) {
  auto o = good;
  const auto r = real_row();
  ids(o, r)[e.topk - 1] = static_cast<std::int32_t>(e.nb[r]);  // invisible tail block
  EXPECT_FALSE(judge(o).pass);
}

TEST_F(Fixture, MissingMinusOneTailFails) {
  auto o = good;
  for (std::int64_t r = 0; r < e.R; ++r)
    if (e.nb[r] > 0 && e.nb[r] < e.topk) {
      ids(o, r)[e.nb[r]] = static_cast<std::int32_t>(e.nb[r]);  // one id too many
      const auto v = judge(o);
      EXPECT_FALSE(v.pass);
      return;
    }
  FAIL() << "fixture has no trivial row";
}

TEST_F(Fixture, InactiveRowWithIdsFails) {
  auto o = good;
  for (std::int64_t r = 0; r < e.R; ++r)
    if (e.nb[r] == 0) {
      ids(o, r)[0] = 0;
      EXPECT_FALSE(judge(o).pass);
      return;
    }
  FAIL() << "fixture has no inactive row";
}

TEST_F(Fixture, WrongShapeFails) {
  auto o = good;
  o.topk_idx.pop_back();
  EXPECT_FALSE(judge(o).pass);
}

TEST_F(Fixture, SwapBeyondTauFailsWithAnExactReport) {
  auto o = good;
  const auto r = real_row();
  // Replace the best non-forced selected block with the worst block of the row.
  const double* S = &e.score[e.at(0, r, 0)];
  std::int32_t worst = 0;
  for (std::int32_t b = 0; b < e.nb[r]; ++b)
    if (S[b] < S[worst]) worst = b;
  std::vector<std::int32_t> sel(ids(o, r), ids(o, r) + e.topk);
  for (auto& b : sel)
    if (!e.forced[e.at(0, r, b)]) {
      b = worst;
      break;
    }
  std::sort(sel.begin(), sel.end());
  std::copy(sel.begin(), sel.end(), ids(o, r));
  const auto v = judge(o);
  ASSERT_FALSE(v.pass);
  EXPECT_NE(v.reports[0].find("margin"), std::string::npos) << v.summary();
  EXPECT_NE(v.reports[0].find("head 0 row " + std::to_string(r)), std::string::npos) << v.summary();
}

TEST_F(Fixture, SwapWithinTauIsAcceptedAndJustOutsideIsNot) {
  const auto r = real_row();
  // k-th best (weakest selected, non-forced) and (k+1)-th best (strongest unselected).
  std::vector<std::int32_t> order(static_cast<std::size_t>(e.nb[r]));
  std::iota(order.begin(), order.end(), 0);
  const double* S = &e.score[e.at(0, r, 0)];
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return S[a] > S[b]; });
  const auto kth = order[static_cast<std::size_t>(e.topk - 1)], next = order[static_cast<std::size_t>(e.topk)];
  ASSERT_FALSE(e.forced[e.at(0, r, kth)]);
  const double gap = S[kth] - S[next];
  ASSERT_GT(gap, 0);
  auto o = good;
  std::vector<std::int32_t> sel(ids(o, r), ids(o, r) + e.topk);
  *std::find(sel.begin(), sel.end(), kth) = next;
  std::sort(sel.begin(), sel.end());
  std::copy(sel.begin(), sel.end(), ids(o, r));
  // tau of both cells at 0.51 * gap: a kernel within tau could have ranked them either way.
  e.tau[e.at(0, r, kth)] = e.tau[e.at(0, r, next)] = 0.51 * gap;
  auto v = judge(o, true);
  EXPECT_TRUE(v.pass) << v.summary();
  EXPECT_EQ(v.tie_swaps, 1);
  // Tier 3 (exact ids) rejects the same swap.
  EXPECT_FALSE(judge(o, true, true).pass);
  // At 0.49 * gap no fp32 kernel could swap them.
  e.tau[e.at(0, r, kth)] = e.tau[e.at(0, r, next)] = 0.49 * gap;
  EXPECT_FALSE(judge(o, true).pass);
}

TEST_F(Fixture, ScoreOutsideTauFailsAndInsideTauPasses) {
  const auto r = real_row();
  std::int64_t b = 0;
  while (e.forced[e.at(0, r, b)]) ++b;
  auto o = good;
  const double tau = e.tau[e.at(0, r, b)];
  ASSERT_GT(tau, 0);
  o.scores[static_cast<std::size_t>(e.at(0, r, b))] = static_cast<float>(e.score[e.at(0, r, b)] + 3 * tau);
  EXPECT_FALSE(judge(o).pass);
  o.scores[static_cast<std::size_t>(e.at(0, r, b))] = static_cast<float>(e.score[e.at(0, r, b)]);
  EXPECT_TRUE(judge(o).pass);
}

TEST_F(Fixture, NanWhereTheOracleIsFiniteFails) {
  const auto r = real_row();
  auto o = good;
  o.scores[static_cast<std::size_t>(e.at(0, r, 0))] = std::nanf("");
  const auto v = judge(o, false);
  ASSERT_FALSE(v.pass);
  EXPECT_NE(v.summary().find("non-finite"), std::string::npos);
}

TEST_F(Fixture, ForcedBlockMustHoldTheExactForcedValue) {
  const auto r = real_row();
  const std::int64_t last = e.nb[r] - 1;  // local 1: the last block is forced to 1e29
  ASSERT_TRUE(e.forced[e.at(0, r, last)]);
  auto o = good;
  o.scores[static_cast<std::size_t>(e.at(0, r, last))] = std::nextafter(1e29f, 1e30f);
  EXPECT_FALSE(judge(o).pass);
}

TEST_F(Fixture, StrayWriteOutsideTheWrittenRegionFails) {
  auto o = good;
  for (std::int64_t r = 0; r < e.R; ++r)
    if (e.nb[r] > e.topk) {
      if (e.nb[r] < e.NB) {
        o.scores[static_cast<std::size_t>(e.at(0, r, e.nb[r]))] = 0.0f;  // one column past the row's blocks
        const auto v = judge(o);
        ASSERT_FALSE(v.pass);
        EXPECT_NE(v.summary().find("outside the written region"), std::string::npos) << v.summary();
        EXPECT_TRUE(judge(o, false).pass);  // the check is what catches it
        return;
      }
    }
  FAIL() << "no row shorter than NB";
}

TEST_F(Fixture, UnwrittenCellInsideTheRegionFails) {
  auto o = good;
  const auto r = real_row();
  std::memcpy(&o.scores[static_cast<std::size_t>(e.at(0, r, 1))], &ixo::kScorePoisonBits, 4);
  const auto v = judge(o);
  ASSERT_FALSE(v.pass);
  EXPECT_NE(v.summary().find("still hold the poison"), std::string::npos) << v.summary();
}

TEST_F(Fixture, BitwiseComparisonSeesOneBit) {
  EXPECT_TRUE(ixo::compare_bitwise(good, good).pass);
  auto o = good;
  const auto r = real_row();
  std::uint32_t u;
  std::memcpy(&u, &o.scores[static_cast<std::size_t>(e.at(0, r, 0))], 4);
  u ^= 1;
  std::memcpy(&o.scores[static_cast<std::size_t>(e.at(0, r, 0))], &u, 4);
  const auto v = ixo::compare_bitwise(good, o);
  ASSERT_FALSE(v.pass);
  EXPECT_NE(v.summary().find("score bits differ at [head 0, row " + std::to_string(r) + ", block 0]"),
            std::string::npos)
      << v.summary();
  auto p = good;
  p.topk_idx[0] = 99;
  EXPECT_FALSE(ixo::compare_bitwise(good, p).pass);
}

}  // namespace

// Judge rules the judge's mutant campaign (ci/mutate-judge.py) found unguarded: each test is
// named after the rule and fails with its mutant (IXO_JUDGE_MUTANT) on.

namespace {

// Rule: ids lie in [0, nb); nb itself is out of range (judge mutant 3, ids_range_inclusive):
// a structure failure, not a selection that happens to miss a block.
TEST_F(Fixture, AnIdEqualToTheBlockCountIsAStructureFailure) {
  const std::int64_t r = real_row();
  ASSERT_GE(r, 0);
  auto o = good;
  ids(o, r)[e.topk - 1] = static_cast<std::int32_t>(e.nb[r]);  // ascending ids: the last place
  const auto v = judge(o);
  ASSERT_FALSE(v.pass);
  ASSERT_FALSE(v.details.empty());
  EXPECT_EQ(v.details[0].tier, "structure") << v.summary();
}

// Rule: a score cell passes within tau of the oracle's, not within 2 tau (judge mutant 9,
// scores_tolerance_doubled): 1.5 tau off fails, 0.5 tau off passes.
TEST_F(Fixture, AScoreOneAndAHalfTauOffFailsAndHalfATauPasses) {
  const std::int64_t r = real_row();
  ASSERT_GE(r, 0);
  std::int64_t b = 0;
  while (b < e.nb[r] && e.forced[e.at(0, r, b)]) ++b;
  ASSERT_LT(b, e.nb[r]);
  const double want = e.score[e.at(0, r, b)], tau = e.tau[e.at(0, r, b)];
  ASSERT_GT(tau, std::fabs(want) * 1e-6);  // tau spans many float ulps of the score
  for (const auto& [k, passes] : {std::pair{1.5, false}, std::pair{0.5, true}}) {
    auto o = good;
    o.scores[static_cast<std::size_t>(e.at(0, r, b))] = static_cast<float>(want + k * tau);
    const auto v = judge(o);
    EXPECT_EQ(v.pass, passes) << k << " tau: " << v.summary();
    if (!passes) {
      ASSERT_FALSE(v.details.empty());
      EXPECT_EQ(v.details[0].tier, "scores");
    }
  }
}

// Rule: ids must be distinct (judge mutant 1, ids_duplicates_accepted): a repeated id takes a
// place a block should have; without the structure tier, a repeat of a strong block in the
// weakest block's place looks like a selection within tau.
TEST_F(Fixture, ARepeatedIdIsAStructureFailure) {
  const std::int64_t r = real_row();
  ASSERT_GE(r, 0);
  auto o = good;
  std::int32_t* p = ids(o, r);
  p[1] = p[0];  // ascending order kept (equal neighbours), one block lost
  const auto v = judge(o, false);
  ASSERT_FALSE(v.pass);
  ASSERT_FALSE(v.details.empty());
  EXPECT_EQ(v.details[0].tier, "structure") << v.summary();
}

// Operator mutants of verdict.cpp / verdict_detail.hpp (docs/mutation.md): the structured
// report. At most max_reports report lines (not one more); whole-output failures (shape,
// poison) name no head, row or block (-1); an ids failure's margin is how far the strongest
// unselected block (S - tau) lies above the weakest selected one (S + tau).
TEST_F(Fixture, ReportsStopAtMaxReportsAndWholeOutputFailuresNameNoCell) {
  auto o = good;
  std::int64_t broken = 0;
  for (std::int64_t r = 0; r < e.R; ++r)
    if (e.nb[r] > 0) ids(o, r)[0] = -7, ++broken;  // a structure failure in every active row
  ixo::JudgeOptions opt;
  opt.max_reports = 2;
  ASSERT_GT(broken, 2);
  auto v = ixo::judge(c, e, o, opt);
  EXPECT_EQ(v.reports.size(), 2u);
  EXPECT_EQ(v.failures, broken);
  auto shape = good;
  shape.topk_idx.pop_back();
  v = judge(shape);
  ASSERT_FALSE(v.details.empty());
  EXPECT_EQ(v.details[0].tier, "structure");
  EXPECT_EQ(v.details[0].head, -1);
  EXPECT_EQ(v.details[0].row, -1);
  auto stray = good;
  for (std::int64_t r = 0; r < e.R; ++r)  // every cell outside the written region overwritten
    for (std::int64_t b = 0; b < e.NB; ++b)
      if (!ixo::score_cell_written(e, r, b)) stray.scores[static_cast<std::size_t>(e.at(0, r, b))] = 0.0f;
  v = judge(stray);
  ASSERT_EQ(v.details.size(), 1u) << v.summary();
  EXPECT_EQ(v.details.back().tier, "poison");
  EXPECT_EQ(v.details.back().head, -1);
  EXPECT_EQ(v.details.back().row, -1);
  EXPECT_EQ(v.details.back().block, -1);
}

TEST_F(Fixture, AnIdsFailureReportsItsMarginBeyondTau) {
  const std::int64_t r = real_row();
  ASSERT_GE(r, 0);
  auto o = good;
  o.has_scores = false;
  std::int32_t* p = ids(o, r);
  // Replace a selected unforced block by the weakest unselected one.
  std::int64_t k = 0;
  while (k < e.topk && e.forced[e.at(0, r, p[k])]) ++k;
  ASSERT_LT(k, e.topk);
  const std::int32_t dropped = p[k];
  std::int32_t weakest = -1;
  for (std::int32_t b = 0; b < e.nb[r]; ++b)
    if (std::find(p, p + e.topk, b) == p + e.topk &&
        (weakest < 0 || e.score[e.at(0, r, b)] < e.score[e.at(0, r, weakest)]))
      weakest = b;
  ASSERT_GE(weakest, 0);
  p[k] = weakest;
  std::sort(p, p + e.topk);
  const auto v = judge(o, false);
  ASSERT_FALSE(v.pass);
  const auto& f = v.details[0];
  ASSERT_EQ(f.tier, "ids");
  // The margin: (strongest unselected S - tau) - (weakest selected S + tau), both read back
  // from the report's blocks; `dropped` is now unselected and outranks `weakest`.
  double hi = -INFINITY, lo = INFINITY;
  for (std::int32_t b = 0; b < e.nb[r]; ++b) {
    const double s = e.score[e.at(0, r, b)], t = e.tau[e.at(0, r, b)];
    if (std::find(p, p + e.topk, b) != p + e.topk)
      lo = std::min(lo, s + t);
    else
      hi = std::max(hi, s - t);
  }
  EXPECT_GT(e.score[e.at(0, r, dropped)], e.score[e.at(0, r, weakest)]);
  EXPECT_DOUBLE_EQ(f.margin, hi - lo);
  EXPECT_GT(f.margin, 0.0);
}

// Rule: tier 2 reads a row's own blocks [0, nb) only (the operator mutant `b <= nb` read one
// cell past the row). The row is made full width (nb = NB: its extra blocks score -inf, as masked
// blocks do), judged on a tie swap (the path that scans the blocks), and the next row's block 0
// -- the cell just past it -- is made the strongest score anywhere.
TEST_F(Fixture, TierTwoReadsOnlyTheRowsOwnBlocks) {
  std::int64_t r = -1;
  for (std::int64_t x = 0; x + 1 < e.R && r < 0; ++x)
    if (e.nb[x] > e.topk + 2) r = x;
  ASSERT_GE(r, 0);
  auto o = good;
  o.has_scores = false;
  std::int32_t* p = ids(o, r);
  // A tie swap: the weakest selected unforced block and the strongest unselected one get equal scores.
  std::int32_t in = -1, out = -1;
  for (std::int64_t k = 0; k < e.topk; ++k)
    if (!e.forced[e.at(0, r, p[k])] && (in < 0 || e.score[e.at(0, r, p[k])] < e.score[e.at(0, r, in)])) in = p[k];
  for (std::int32_t b = 0; b < e.nb[r]; ++b)
    if (std::find(p, p + e.topk, b) == p + e.topk && (out < 0 || e.score[e.at(0, r, b)] > e.score[e.at(0, r, out)]))
      out = b;
  ASSERT_TRUE(in >= 0 && out >= 0);
  e.score[e.at(0, r, out)] = e.score[e.at(0, r, in)];
  std::replace(p, p + e.topk, in, out);
  std::sort(p, p + e.topk);
  for (std::int64_t b = e.nb[r]; b < e.NB; ++b) e.score[e.at(0, r, b)] = -INFINITY, e.tau[e.at(0, r, b)] = 0;
  e.nb[r] = e.NB;
  e.score[e.at(0, r + 1, 0)] = 1e9;
  const auto v = judge(o, false);
  EXPECT_TRUE(v.pass) << v.summary();
  EXPECT_GE(v.tie_swaps, 1);
}

}  // namespace
