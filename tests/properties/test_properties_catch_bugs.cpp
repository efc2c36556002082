// Every property can fail: each one is run against the CPU twin with one catalogued bug
// switched on (kernels/common/mutants.hpp) and must fail with a shrunk counterexample
// that its reproduce string replays.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <functional>
#include <map>
#include <memory>
#include <unordered_map>

#include "backend.hpp"
#include "common/mutants.hpp"
#include "ixo/backend_properties.hpp"

namespace {

ixo::Backend& backend(const std::string& name) {
  static std::map<std::string, std::unique_ptr<ixo::Backend>> cache;
  auto& b = cache[name];
  if (!b) b = ixo::make_backend(name);
  return *b;
}

struct Outcome {
  bool failed = false;
  int shrinks = 0;
  std::string counterexample;
  rc::detail::Reproduce reproduce;
};

class CountingListener : public rc::detail::TestListener {
 public:
  int accepted_shrinks = 0;
  void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
  void onShrinkTried(const rc::detail::CaseDescription&, bool accepted) override { accepted_shrinks += accepted; }
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
};

std::string show(const rc::detail::Example& ex) {
  std::string s;
  for (const auto& [type, value] : ex) s += type + ": " + value + "\n";
  return s;
}

Outcome run(const std::string& id, const std::function<void()>& body,
            const std::unordered_map<std::string, rc::detail::Reproduce>& replay = {}) {
  rc::detail::TestParams params;
  params.seed = 20261130;
  params.maxSuccess = 60;
  rc::detail::TestMetadata md;
  md.id = id;
  CountingListener listener;
  const auto r = rc::detail::checkProperty(rc::detail::toProperty(body), md, params, listener, replay);
  Outcome o;
  if (r.template is<rc::detail::FailureResult>()) {
    const auto& f = r.template get<rc::detail::FailureResult>();
    o.failed = true;
    o.shrinks = listener.accepted_shrinks;
    o.counterexample = show(f.counterExample);
    o.reproduce = f.reproduce;
  }
  return o;
}

struct Case {
  const char* property;
  int mutant;
  std::function<void(const ixo::RunOptions&)> body;
};

std::vector<Case> cases() {
  auto on = [](void (*f)(ixo::Backend&, const ixo::RunOptions&), const char* b) {
    return [f, b](const ixo::RunOptions& o) { f(backend(b), o); };
  };
  using namespace ixo::mutants;
  namespace p = ixo::props;
  return {
      {"MatchesOracle", q_scale_ignored, on(p::matches_oracle, "cpu-rows")},
      {"ExactValuesGiveExactIds", k_by_row_index, on(p::exact_values_give_exact_ids, "cpu-rows")},
      {"NearTiesStayWithinTau", k_scale_ignored, on(p::near_ties_stay_within_tau, "cpu-rows")},
      {"ChunkingChangesNothing", chunk_last_block_dropped, on(p::chunking_changes_nothing, "cpu-rows")},
      {"PaddingAndInactiveRowsDisturbNothing", inactive_row_reads_k,
       on(p::padding_and_inactive_rows_disturb_nothing, "cpu-rows")},
      {"RelabelingSlotsChangesNothing", k_by_row_index, on(p::relabeling_slots_changes_nothing, "cpu-rows")},
      {"PackedEqualsRowsBitwise", group_nb_for_rows,
       [](const ixo::RunOptions& o) { p::packed_equals_rows(backend("cpu-rows"), backend("cpu-packed"), o); }},
  };
}

class PropertyCatchesBug : public ::testing::TestWithParam<Case> {};

TEST_P(PropertyCatchesBug, FailsShrinksAndReplays) {
#if !defined(IXO_ENABLE_MUTANTS)
  GTEST_SKIP() << "mutant switches are compiled out of this build";
#endif
  const Case& c = GetParam();
  ixo::RunOptions clean, broken;
  broken.mutant = c.mutant;
  const std::string id = std::string("catch/") + c.property;
  // Unbroken: passes (so the failure below is the bug's doing).
  EXPECT_FALSE(run(id, [&] { c.body(clean); }).failed) << c.property << " fails without any bug";
  const Outcome o = run(id, [&] { c.body(broken); });
  ASSERT_TRUE(o.failed) << c.property << " did not notice mutant " << c.mutant;
  EXPECT_GT(o.shrinks, 0) << "no shrink step was accepted";
  // The reproduce string replays the same shrunk counterexample at once.
  const Outcome again = run(id, [&] { c.body(broken); }, {{id, o.reproduce}});
  ASSERT_TRUE(again.failed);
  EXPECT_EQ(again.counterexample, o.counterexample);
  std::cout << c.property << " with mutant " << c.mutant << ": shrunk counterexample after " << o.shrinks
            << " shrinks:\n"
            << o.counterexample;
}

INSTANTIATE_TEST_SUITE_P(All, PropertyCatchesBug, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return std::string(info.param.property); });

}  // namespace
