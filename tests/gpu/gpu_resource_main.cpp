// gtest main of the GPU test executables: before anything can initialise the CUDA runtime,
// maps the GPU ctest allocated to this process (RESOURCE_GROUPS "gpus:1", run with
// --resource-spec-file) to CUDA_VISIBLE_DEVICES. See gpu_resource.hpp.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "gpu_resource.hpp"

int main(int argc, char** argv) {
  const ixo::test::GpuMapping m = ixo::test::map_ctest_gpus([](const char* n) { return std::getenv(n); });
  if (!m.error.empty()) {
    std::fprintf(stderr, "[ixo] ctest GPU allocation: %s\n", m.error.c_str());
    return 2;
  }
  if (m.allocated) {
    setenv("CUDA_VISIBLE_DEVICES", m.visible.c_str(), 1);
    // Kept so a test can see which device ctest gave it (GpuResource.* tests).
    setenv("IXO_CTEST_GPUS", m.visible.c_str(), 1);
    std::fprintf(stderr, "[ixo] ctest allocated GPU(s) %s: CUDA_VISIBLE_DEVICES=%s\n",
                 std::getenv("CTEST_RESOURCE_GROUP_0_GPUS") ? std::getenv("CTEST_RESOURCE_GROUP_0_GPUS") : "?",
                 m.visible.c_str());
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
