// The suite table's row status (suite/src/suite_checks.cpp SuiteRow::finish): the rules a
// kernel's suite verdict rests on, each test named after its rule. Judge mutant 28
// (suite_skip_counted_pass, ci/mutate-judge.py) fails the first.
#include <gtest/gtest.h>

#include "ixo/default_suite.hpp"

namespace {

ixo::SuiteRow row(int cases, int skipped, int outside, std::int64_t failures) {
  ixo::SuiteRow r("backend", "group");
  r.cases = cases, r.skipped = skipped, r.outside = outside, r.failures = failures;
  r.finish(0.5);
  return r;
}

TEST(SuiteRow, AllCasesSkippedIsSkipNeverPass) { EXPECT_EQ(row(0, 2, 0, 0).status, "SKIP"); }
TEST(SuiteRow, NoCaseAtAllIsSkip) { EXPECT_EQ(row(0, 0, 0, 0).status, "SKIP"); }
TEST(SuiteRow, EveryCaseOutsideTheContractIsOutside) { EXPECT_EQ(row(0, 0, 3, 0).status, "OUTSIDE"); }
TEST(SuiteRow, AnyFailureIsFail) { EXPECT_EQ(row(3, 1, 0, 1).status, "FAIL"); }
TEST(SuiteRow, OneJudgedCaseWithoutFailureIsPass) {
  const auto r = row(1, 5, 2, 0);
  EXPECT_EQ(r.status, "PASS");
  EXPECT_EQ(r.seconds, 0.5);
}

}  // namespace
