// The conformance suite (suite/include/ixo/conformance.hpp) for every registry backend of
// one family, through the same register_conformance a consumer calls:
//   test_conformance       family "cpu" (cpu-rows, cpu-packed, cpu-cp), own main;
//   test_conformance_cuda  family "cuda" (CUDA builds), linked with the GPU test main,
//                          which maps ctest's GPU allocation before CUDA starts; its
//                          tests skip (never pass) without a device.
#include <gtest/gtest.h>

#include "ixo/conformance.hpp"

namespace {

ixo::ConformanceOptions options(const char* family) {
  ixo::ConformanceOptions o;
  o.family = family;
  o.property_cases = 20;
  return o;
}

}  // namespace

#if defined(IXO_CONFORMANCE_CUDA)
namespace {
const bool registered = (ixo::register_conformance_for_registry(options("cuda")), true);
}  // namespace
#else
int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  ixo::register_conformance_for_registry(options("cpu"));
  return RUN_ALL_TESTS();
}
#endif
