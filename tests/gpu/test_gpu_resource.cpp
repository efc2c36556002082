// ctest resource allocation -> CUDA_VISIBLE_DEVICES (gpu_resource.hpp, gpu_resource_main.cpp):
// the mapping on its own (host only), and, when ctest allocated a GPU to this process, that
// the process sees exactly the allocated device(s).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "gpu_resource.hpp"
#include "gpu_test_util.hpp"

namespace ixo::test {
namespace {

GpuMapping map_env(const std::map<std::string, std::string>& env) {
  return map_ctest_gpus([&](const char* n) -> const char* {
    const auto it = env.find(n);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

TEST(GpuResourceMap, NoAllocationLeavesDevicesAlone) {
  const GpuMapping m = map_env({{"CUDA_VISIBLE_DEVICES", "3"}});
  EXPECT_FALSE(m.allocated);
  EXPECT_TRUE(m.error.empty());
}

TEST(GpuResourceMap, IdIsTheDeviceIndex) {
  const GpuMapping m = map_env({{"CTEST_RESOURCE_GROUP_COUNT", "1"},
                                {"CTEST_RESOURCE_GROUP_0", "gpus"},
                                {"CTEST_RESOURCE_GROUP_0_GPUS", "id:1,slots:1"}});
  EXPECT_TRUE(m.allocated);
  EXPECT_EQ(m.visible, "1");
}

TEST(GpuResourceMap, IdIsAPositionInAnInheritedList) {
  const GpuMapping m = map_env({{"CUDA_VISIBLE_DEVICES", "GPU-aaaa,GPU-bbbb,MIG-cccc"},
                                {"CTEST_RESOURCE_GROUP_COUNT", "1"},
                                {"CTEST_RESOURCE_GROUP_0", "gpus"},
                                {"CTEST_RESOURCE_GROUP_0_GPUS", "slots:2,id:2"}});
  EXPECT_TRUE(m.allocated);
  EXPECT_EQ(m.visible, "MIG-cccc");
  const GpuMapping idx = map_env({{"CUDA_VISIBLE_DEVICES", "4,6"},
                                  {"CTEST_RESOURCE_GROUP_COUNT", "1"},
                                  {"CTEST_RESOURCE_GROUP_0_GPUS", "id:1,slots:1"}});
  EXPECT_EQ(idx.visible, "6");
}

TEST(GpuResourceMap, SeveralGroupsAndAllocations) {
  const GpuMapping m = map_env({{"CTEST_RESOURCE_GROUP_COUNT", "3"},
                                {"CTEST_RESOURCE_GROUP_0_GPUS", "id:2,slots:1"},
                                {"CTEST_RESOURCE_GROUP_1_CPUS", "id:0,slots:4"},
                                {"CTEST_RESOURCE_GROUP_2_GPUS", "id:0,slots:1;id:3,slots:1"}});
  EXPECT_TRUE(m.allocated);
  EXPECT_EQ(m.visible, "2,0,3");
}

TEST(GpuResourceMap, MalformedAllocationsAreErrors) {
  EXPECT_FALSE(map_env({{"CTEST_RESOURCE_GROUP_COUNT", "x"}}).error.empty());
  EXPECT_FALSE(
      map_env({{"CTEST_RESOURCE_GROUP_COUNT", "1"}, {"CTEST_RESOURCE_GROUP_0_GPUS", "slots:1"}}).error.empty());
  EXPECT_FALSE(map_env({{"CUDA_VISIBLE_DEVICES", "0,1"},
                        {"CTEST_RESOURCE_GROUP_COUNT", "1"},
                        {"CTEST_RESOURCE_GROUP_0_GPUS", "id:2,slots:1"}})
                   .error.empty());
}

// Under `ctest --resource-spec-file`, gpu_resource_main.cpp narrowed the visible devices to
// the allocation before the runtime started.
TEST(GpuResource, ProcessSeesOnlyItsAllocation) {
  const char* mine = std::getenv("IXO_CTEST_GPUS");
  if (!mine) GTEST_SKIP() << "not run under a ctest resource spec";
  IXO_REQUIRE_CUDA();
  const char* cvd = std::getenv("CUDA_VISIBLE_DEVICES");
  ASSERT_NE(cvd, nullptr);
  EXPECT_STREQ(cvd, mine);
  int n = 0;
  ASSERT_EQ(cudaGetDeviceCount(&n), cudaSuccess);
  EXPECT_EQ(static_cast<std::size_t>(n), split(mine, ',').size());
  std::printf("[ixo] this test process: CTEST_RESOURCE_GROUP_0_GPUS=%s CUDA_VISIBLE_DEVICES=%s devices=%d\n",
              std::getenv("CTEST_RESOURCE_GROUP_0_GPUS") ? std::getenv("CTEST_RESOURCE_GROUP_0_GPUS") : "-", cvd, n);
}

}  // namespace
}  // namespace ixo::test
