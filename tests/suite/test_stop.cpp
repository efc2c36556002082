// The run budget (suite/src/stop.cpp): what fuzz --seconds and the suite loops ask before
// every case. No wall-time limit is asserted: only consistency with the test's own clock.
#include <gtest/gtest.h>

#include <chrono>

#include "ixo/stop.hpp"

namespace {

using Clock = std::chrono::steady_clock;

TEST(StopScope, AnHourBudgetIsNotSpentWhenTheScopeStarts) {
  ixo::stop::StopScope scope(3600.0);
  EXPECT_FALSE(ixo::stop::stopping());
  EXPECT_FALSE(ixo::stop::out_of_time());
}

TEST(StopScope, AZeroBudgetIsSpentAtOnce) {
  ixo::stop::StopScope scope(0.0);
  EXPECT_TRUE(ixo::stop::stopping());
  EXPECT_TRUE(ixo::stop::out_of_time());
  EXPECT_FALSE(ixo::stop::interrupted());
}

TEST(StopScope, ElapsedSecondsIsTheTimeSinceTheScopeBegan) {
  const auto before = Clock::now();
  double elapsed = -1;
  {
    ixo::stop::StopScope scope;
    elapsed = ixo::stop::elapsed_seconds();
  }
  const double outer = std::chrono::duration<double>(Clock::now() - before).count();
  EXPECT_GE(elapsed, 0.0);
  EXPECT_LE(elapsed, outer);                     // inside the interval the test itself measured around the scope
  EXPECT_EQ(ixo::stop::elapsed_seconds(), 0.0);  // no scope: 0
}

TEST(StopScope, ANestedScopeRestoresTheOuterOne) {
  ixo::stop::StopScope outer(3600.0);
  {
    ixo::stop::StopScope inner(0.0);
    EXPECT_TRUE(ixo::stop::stopping());
  }
  EXPECT_FALSE(ixo::stop::stopping());
}

}  // namespace
