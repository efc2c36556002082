// Batch invariance and repeat-run determinism over the CPU backends, and two planted bugs
// they catch: a backend whose scores depend on the batch size, one that drifts per launch.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include "backend.hpp"
#include "ixo/metamorphic_properties.hpp"
#include "ixo/property_runner.hpp"

#include <cmath>

namespace {

// Passed (not gave up: declined cases are never counted as passes).
bool holds(const std::function<void()>& body, int cases) {
  return ixo::run_property("metamorphic", cases, 7, body).status == ixo::PropertyResult::Status::passed;
}
bool fails(const std::function<void()>& body, int cases) {
  return ixo::run_property("metamorphic", cases, 7, body).status == ixo::PropertyResult::Status::failed;
}

// Wraps a backend and breaks it in one of two ways.
class Broken : public ixo::Backend {
 public:
  enum Bug { batch_dependent, drifting };
  Broken(std::unique_ptr<ixo::Backend> b, Bug bug) : b_(std::move(b)), bug_(bug) {}
  std::string name() const override { return "broken-" + b_->name(); }
  bool available(std::string* why) const override { return b_->available(why); }
  bool supports(const ixo::Case& c, std::string* why) const override { return b_->supports(c, why); }
  ixo::Observed run(const ixo::Case& c, const ixo::RunOptions& o) override {
    ixo::Observed out = b_->run(c, o);
    const bool touch = bug_ == batch_dependent ? c.R % 2 == 1 : (++launches_ % 3) == 0;
    if (touch && out.has_scores)
      for (auto& s : out.scores)
        if (s > 0 && s < 1e20f) s = std::nextafter(s, 2 * s);
    return out;
  }

 private:
  std::unique_ptr<ixo::Backend> b_;
  Bug bug_;
  long launches_ = 0;
};

class Metamorphic : public ::testing::TestWithParam<const char*> {};

TEST_P(Metamorphic, BatchInvariance) {
  auto b = ixo::make_backend(GetParam());
  EXPECT_TRUE(holds([&] { ixo::props::batch_invariance(*b, {}); }, 40));
}

TEST_P(Metamorphic, RepeatRunsIdentical) {
  auto b = ixo::make_backend(GetParam());
  EXPECT_TRUE(holds([&] { ixo::props::repeat_runs_identical(*b, {}); }, 25));
}

INSTANTIATE_TEST_SUITE_P(Cpu, Metamorphic, ::testing::Values("cpu-rows", "cpu-packed", "cpu-cp"));

TEST(MetamorphicCatches, BatchDependentScores) {
  Broken b(ixo::make_backend("cpu-packed"), Broken::batch_dependent);
  EXPECT_TRUE(fails([&] { ixo::props::batch_invariance(b, {}); }, 60));
}

TEST(MetamorphicCatches, DriftingLaunches) {
  Broken b(ixo::make_backend("cpu-rows"), Broken::drifting);
  EXPECT_TRUE(fails([&] { ixo::props::repeat_runs_identical(b, {}); }, 30));
}

}  // namespace
