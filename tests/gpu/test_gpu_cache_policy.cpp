// The L2 cache policy of the packed kernels' streamed K copies (kernels/gpu/mma_tile.cuh l2_evict_first_policy):
// the bits they use must be the evict-first policy this device creates (createpolicy.fractional.L2::evict_first,
// fraction 1.0). Experiment row 64 takes the bits from a constant (kEvictFirstPolicyBits) instead of from
// createpolicy; on a device that encodes the policy otherwise the copies would carry a different (or invalid) hint,
// which no score comparison sees: a policy changes where K lives in L2, never a value. So this test reads both back.
// It fails on a wrong constant (tried: the EVICT_LAST bits, docs/experiments/plant-policy-bits.patch).
#include <gtest/gtest.h>

#include "gpu/indexer_launch.hpp"
#include "gpu_test_util.hpp"

namespace ixo::test {
namespace {

TEST(CudaCachePolicy, StreamedCopiesUseTheDevicesEvictFirstPolicy) {
  IXO_REQUIRE_CUDA();
  gpu::EvictFirstPolicy p;
  ASSERT_EQ(gpu::read_evict_first_policy(&p), 0);
  EXPECT_NE(p.created, 0u);
  EXPECT_EQ(p.used, p.created) << std::hex << "used 0x" << p.used << ", created 0x" << p.created;
}

}  // namespace
}  // namespace ixo::test
