// The toy kernel under the whole conformance suite, from the project's own GoogleTest
// binary: fixtures, the preset case groups, the properties with shrinking. A failing
// property prints its shrunk case (written to a folder) and the replay command.
#include <gtest/gtest.h>

#include <memory>

#include "external/exec_backend.hpp"  // ixo::make_callable_backend
#include "toy_kernel.hpp"
#if TOY_HAVE_CONFORMANCE
#include "ixo/conformance.hpp"  // ixo::register_conformance
#else
#include "ixo/default_suite.hpp"  // ixo::run_suite
#endif

namespace {

std::unique_ptr<ixo::Backend> make_toy() { return ixo::make_callable_backend("toy-kernel", toy::kernel); }

#if !TOY_HAVE_CONFORMANCE
// A package built without IndexerOracle::conformance: the same suite as one test.
TEST(ToyKernel, WholeSuite) {
  const auto backend = make_toy();
  const ixo::SuiteResult r = ixo::run_suite({backend.get()});
  EXPECT_TRUE(r.passed) << r.table(/*failures_only=*/true);
}
#endif

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
#if TOY_HAVE_CONFORMANCE
  ixo::register_conformance("toy-kernel", make_toy);  // one gtest test per fixture, case group and property
#endif
  return RUN_ALL_TESTS();
}
