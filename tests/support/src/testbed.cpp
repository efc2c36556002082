#include "ixo_test/testbed.hpp"

#include <gtest/gtest-spi.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>

#include "ixo/case_run.hpp"
#include "ixo_test/support.hpp"

namespace ixo::test {

namespace {

RunOptions with_chunks(RunOptions o, int chunks) {
  o.force_num_chunks = chunks;
  return o;
}

// The (head, row) pairs with a clear oracle margin whose ids differ between a and b.
void expect_clear_margin_ids_equal(const Case& c, const Expected& e, const Observed& a, const Observed& b,
                                   const std::string& what) {
  std::int64_t compared = 0, differ = 0;
  for (std::int64_t h = 0; h < c.Hq; ++h)
    for (std::int64_t r = 0; r < c.R; ++r) {
      if (!clear_margin(e, h, r)) continue;
      ++compared;
      for (std::int64_t i = 0; i < c.cfg.topk; ++i) {
        const std::int64_t at = (h * c.R + r) * c.cfg.topk + i;
        if (a.topk_idx[at] == b.topk_idx[at]) continue;
        ++differ;
        ADD_FAILURE() << what << ": ids differ at head " << h << " row " << r << " slot " << i << ": " << a.topk_idx[at]
                      << " vs " << b.topk_idx[at] << "\n  " << describe(c);
        break;
      }
    }
  EXPECT_EQ(differ, 0) << what << ": " << compared << " (head, row) pairs with a clear margin compared";
}

}  // namespace

std::vector<std::string> runnable_backends() {
  std::vector<std::string> names;
  for (const std::string& n : default_backend_names()) {
    auto b = make_backend(n);
    const BackendTraits& t = b->traits();
    if (t.in_tree && (t.mutant_scope == "native" || t.mutant_scope == "cp") && b->available()) names.push_back(n);
  }
  return names;
}

std::vector<std::string> judge_every_backend(const Case& c, const std::string& what, bool exact_ids,
                                             const RunOptions& opt, const TestbedChecks& checks) {
  return judge_backends(runnable_backends(), c, what, exact_ids, opt, checks);
}

std::vector<std::string> judge_backends(const std::vector<std::string>& names, const Case& c, const std::string& what,
                                        bool exact_ids, const RunOptions& opt, const TestbedChecks& checks) {
  const Expected e = oracle(c);
  std::vector<std::string> judged;
  for (const std::string& name : names) {
    auto b = make_backend(name);
    if (!b->supports(c)) continue;  // outside the backend's configuration: not counted
    const std::string label = name + " " + what;
    const CaseRun run = run_and_judge(*b, c, e, kernel_judge_options(exact_ids), opt);
    if (run.skipped) continue;
    judged.push_back(name);
    EXPECT_TRUE(verdict_ok(run.verdict, c, label, exact_ids, run.has_observed ? &run.observed : nullptr));
    if (!run.has_observed) continue;
    const Observed& o = run.observed;
    const BackendTraits& t = b->traits();
    if (checks.bitwise_twin && !t.bitwise_twin.empty()) {
      EXPECT_TRUE(bitwise_equal(o, make_backend(t.bitwise_twin)->run(c, opt), c, label + " vs " + t.bitwise_twin));
    }
    if (checks.ids_twin && !t.ids_twin.empty()) {
      EXPECT_TRUE(bitwise_equal(ids_only(o), ids_only(make_backend(t.ids_twin)->run(c, opt)), c,
                                label + " ids vs " + t.ids_twin + " ids"));
    }
    if (checks.rerun) {
      EXPECT_TRUE(bitwise_equal(o, b->run(c, opt), c, label + " rerun"));
    }
    for (int chunks : checks.chunk_plans) {
      EXPECT_TRUE(bitwise_equal(o, b->run(c, with_chunks(opt, chunks)), c,
                                label + " vs " + std::to_string(chunks) + " KV chunks"));
    }
    if (checks.other_poison) {
      RunOptions poison = opt;
      poison.score_poison_bits = 0xff800001u;  // another NaN pattern: unwritten cells keep it
      EXPECT_TRUE(
          matches_oracle(c, e, b->run(c, poison), exact_ids, label + " (poison 0xff800001)", poison.score_poison_bits));
    }
    if (checks.per_row_plan && t.mutant_scope == "cp") {
      RunOptions rows = opt;
      rows.per_row_plan = true;
      EXPECT_TRUE(bitwise_equal(o, b->run(c, rows), c, label + " vs its per-row plan"));
    }
    if (checks.cpu_twin_ids && !t.cpu_twin.empty())
      expect_clear_margin_ids_equal(c, e, o, make_backend(t.cpu_twin)->run(c, opt), label + " vs " + t.cpu_twin);
  }
  return judged;
}

int intercepted_failures(const std::vector<std::string>& names, const NamedCase& nc, const RunOptions& opt,
                         const TestbedChecks& checks) {
  const std::filesystem::path scratch =
      std::filesystem::temp_directory_path() / ("ixo-testbed-catches-" + std::to_string(::getpid()));
  const char* old = std::getenv("IXO_TEST_FAILURES");
  const std::string saved = old ? old : "";
  ::setenv("IXO_TEST_FAILURES", scratch.c_str(), 1);
  ::testing::TestPartResultArray failures;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ALL_THREADS, &failures);
    judge_backends(names, nc.make(), nc.name, nc.exact_ids, opt, checks);
  }
  old ? ::setenv("IXO_TEST_FAILURES", saved.c_str(), 1) : ::unsetenv("IXO_TEST_FAILURES");
  std::filesystem::remove_all(scratch);
  return failures.size();
}

::testing::AssertionResult judged_by(const std::vector<std::string>& judged, const std::string& name) {
  for (const std::string& n : judged)
    if (n == name) return ::testing::AssertionSuccess();
  std::string got;
  for (const std::string& n : judged) got += " " + n;
  return ::testing::AssertionFailure() << name << " did not judge the case (judged:" << (got.empty() ? " none" : got)
                                       << ")";
}

}  // namespace ixo::test
