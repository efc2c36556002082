// Condition coverage: each detector fires on its witness; the fixed-seed fuzz run of the
// gate hits every condition the CPU backends can reach (docs/NOTES.md "Condition coverage").
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>

#include "backend.hpp"
#include "ixo/coverage.hpp"
#include "ixo/fuzz.hpp"
#include "ixo/oracle.hpp"

namespace {

using ixo::coverage::conditions;

TEST(Coverage, EveryWitnessHitsItsCondition) {
  for (std::size_t i = 0; i < conditions().size(); ++i) {
    const auto& cond = conditions()[i];
    const ixo::Case c = ixo::generate(cond.witness, 1);
    EXPECT_TRUE(ixo::coverage::hits(c, ixo::oracle(c))[i]) << cond.name << ": its witness does not hit it";
  }
}

TEST(Coverage, DefaultSpecHitsFewConditions) {
  // The plain verify shape is far from most boundaries: the detectors are not always on.
  ixo::GenSpec s = ixo::GenSpec{}.rows(2, 4).heads(2, 1, 64).lengths({4000});
  s.negative_aliases = false;
  const ixo::Case c = ixo::generate(s, 1);
  const auto h = ixo::coverage::hits(c, ixo::oracle(c));
  std::string on;
  for (std::size_t i = 0; i < h.size(); ++i)
    if (h[i]) on += conditions()[i].name + " ";
  EXPECT_EQ(on, "") << "hit by a plain case";
}

// The CPU backends' fixed-seed fuzz run: every reachable condition is hit, and hit in at
// least 1 % of the cases of the backends that reach it. IXO_COVERAGE_SEEDS overrides the
// seed count (the default keeps the test near a minute on 2 cores).
TEST(Coverage, FixedSeedFuzzHitsEveryCondition) {
  std::vector<std::unique_ptr<ixo::Backend>> own;
  std::vector<ixo::Backend*> backends;
  for (const char* n : {"cpu-rows", "cpu-packed", "cpu-cp"}) {
    own.push_back(ixo::make_backend(n));
    backends.push_back(own.back().get());
  }
  ixo::FuzzOptions o;
  o.seconds = 1e9;
  o.max_seeds = std::getenv("IXO_COVERAGE_SEEDS") ? std::atoi(std::getenv("IXO_COVERAGE_SEEDS")) : 16;
  o.cases_per_seed = 25;
  o.coverage = true;
  o.out_dir = ::testing::TempDir() + "/coverage-regressions";
  const ixo::FuzzResult r = ixo::run_fuzz(backends, o);
  ASSERT_TRUE(r.coverage);
  std::cout << r.coverage->table();
  EXPECT_TRUE(r.failures.empty()) << r.report;
  std::string never, low;
  for (const auto& n : r.coverage->never_hit()) never += n + " ";
  for (const auto& n : r.coverage->below(0.01)) low += n + " ";
  EXPECT_EQ(never, "") << "conditions never hit by the gate's fuzz run";
  EXPECT_EQ(low, "") << "conditions hit in under 1 % of the cases";
}

}  // namespace
