// The suite's per-backend checks (suite/src/suite_checks.cpp): which cases are judged
// exactly, what a row reports, how long it says it took. Each test names the rule it pins.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <random>

#include "backend.hpp"
#include "external/exec_backend.hpp"
#include "ixo/default_suite.hpp"
#include "ixo/suite_checks.hpp"

namespace {

// cpu-rows with every case's first id out of range: each judged case fails.
class AlwaysWrong final : public ixo::Backend {
 public:
  std::string name() const override { return "always-wrong"; }
  bool available(std::string*) const override { return true; }
  ixo::Observed run(const ixo::Case& c, const ixo::RunOptions& opt) override {
    ixo::Observed o = inner_->run(c, opt);
    o.topk_idx[0] = static_cast<std::int32_t>(o.NB + 7);
    return o;
  }

 private:
  std::unique_ptr<ixo::Backend> inner_ = ixo::make_backend("cpu-rows");
};

TEST(SuiteChecks, OnlyExactValueGroupsJudgeIdsExactly) {
  for (const auto& jc : ixo::group_cases("exact", false)) EXPECT_TRUE(jc.exact) << jc.label;
  for (const auto& jc : ixo::group_cases("tiny", false)) EXPECT_FALSE(jc.exact) << jc.label;
}

TEST(SuiteChecks, ARowsSecondsAreTheTimeItsCasesTook) {
  auto b = ixo::make_backend("cpu-rows");
  const auto cases = ixo::group_cases("tiny");
  const auto before = std::chrono::steady_clock::now();
  const ixo::SuiteRow row = ixo::check_cases(*b, "tiny", cases, {});
  const double outer = std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count();
  EXPECT_EQ(row.status, "PASS");
  EXPECT_GE(row.seconds, 0.0);
  EXPECT_LE(row.seconds, outer);  // inside the interval the test measured around the call
}

// A failing row keeps at most 8 report lines: the first verdicts' reports (up to 4), then
// one "in <case>" line a failing case until there are 8.
TEST(SuiteChecks, AFailingRowReportsAtMostEightLines) {
  AlwaysWrong b;
  std::vector<ixo::JudgedCase> cases;
  for (int i = 0; i < 6; ++i)
    for (auto& jc : ixo::group_cases("tiny")) cases.push_back(std::move(jc));
  const ixo::SuiteRow row = ixo::check_cases(b, "tiny", cases, {});
  EXPECT_EQ(row.status, "FAIL");
  EXPECT_EQ(row.cases, 12);
  EXPECT_EQ(row.reports.size(), 8u);
}

// run_suite writes the shrunk property failures into SuiteOptions::out_dir when one is given
// (a temporary folder only when none is).
TEST(DefaultSuite, ShrunkPropertyFailuresAreWrittenToTheOutDir) {
  namespace fs = std::filesystem;
  const fs::path out = fs::temp_directory_path() / ("ixo-suite-out-" + std::to_string(std::random_device{}()));
  auto inner = ixo::make_backend("cpu-rows");
  auto wrong = ixo::make_callable_backend("always-wrong", [&](const ixo::Case& c) {
    ixo::Observed o = inner->run(c);
    o.topk_idx[0] = static_cast<std::int32_t>(o.NB + 7);
    return o;
  });
  ixo::SuiteOptions opt;
  opt.groups = opt.fixtures = false;
  opt.only_properties = {"matches-oracle"};
  opt.property_cases = 2;
  opt.out_dir = out.string();
  const ixo::SuiteResult r = ixo::run_suite({wrong.get()}, opt);
  EXPECT_FALSE(r.passed);
  ASSERT_TRUE(fs::is_directory(out));
  EXPECT_FALSE(fs::is_empty(out));
  fs::remove_all(out);
}

}  // namespace
