// The top-k kernel alone (gpu::launch_topk, radix_select.cuh) on crafted score rows
// (tests/support/include/ixo_test/topk_rows.hpp), against the oracle's selection (ixo::select_topk:
// score desc, NaN lowest, equal scores by lower id) of the same fp32 scores. The radix select ranks
// 32-bit keys 8 bits a pass (the top byte first); the rows are built from key bytes so that the bin
// holding the k-th key is told apart at pass 1, 2, 3 or 4, with that bin exactly the keys still
// needed or more (a selection that stops early must stop only in the first case: session 21's
// variant, docs/experiments/topk-radix-two-barriers.patch, whose mutant the test killed), exact ties
// at the k-th score, NaN and infinities, negative scores, a tie wider than the vote selection's
// gather list, scores rising and falling with the id (the top k in one warp's keys), and random
// rows; keys in shared memory (nb <= 8192) and in global memory (nb > 8192); k from 1 to 2048. ctest
// mutant.tie_rule_reversed runs it with the ties going to the highest ids. With IXO_TOPK_BALLOT (2 by
// default) the rows of <= IXO_TOPK_BALLOT_MAX_KEYS (128) blocks and k <= 64 take ballot_select.cuh
// (nb 40 and 128 by default; topk_rows.hpp lists which shapes a raised limit adds).
// tests/kernels/test_topk_kernel_host.cpp runs the same kernel code on the host (no GPU).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/device_buffer.hpp"
#include "gpu/indexer_launch.hpp"
#include "gpu_test_util.hpp"
#include "ixo/oracle.hpp"
#include "ixo_test/topk_rows.hpp"

namespace ixo::test {
namespace {

// Runs launch_topk on the rows (one query row each, nb = the row length, every row active) and
// compares each row's ids with select_topk on the same scores.
void expect_topk_matches_oracle(const TopkCase& tc) {
  const TopkLaunchInputs in = topk_launch_inputs(tc);
  const std::int64_t R = in.config.R, NB = in.config.NB;
  gpu::IndexArgs a;
  static_cast<common::IndexConfig&>(a) = in.config;
  a.mutant = test_mutant();
  gpu::DevBuf<std::int64_t> dslots(in.slots.data(), in.slots.size()), dlens(in.lens.data(), in.lens.size());
  gpu::DevBuf<float> dscores(in.scores.data(), in.scores.size());
  gpu::DevBuf<std::int32_t> dids(static_cast<std::size_t>(R * tc.k));
  a.slot_ids = dslots.p;
  a.seq_lens = dlens.p;
  a.scores = dscores.p;
  a.topk_idx = dids.p;
  gpu::check(cudaMemset(dids.p, 0x7f, dids.n * sizeof(std::int32_t)), "test_gpu_topk", "clobber ids");
  gpu::check(static_cast<cudaError_t>(gpu::launch_topk(a, nullptr)), "test_gpu_topk", "launch_topk");
  gpu::check(cudaDeviceSynchronize(), "test_gpu_topk", "synchronize");
  std::vector<std::int32_t> ids(dids.n);
  gpu::check(cudaMemcpy(ids.data(), dids.p, ids.size() * 4, cudaMemcpyDeviceToHost), "test_gpu_topk", "D2H");
  for (std::int64_t r = 0; r < R; ++r) {
    std::vector<double> s(tc.rows[r].begin(), tc.rows[r].end());
    std::vector<std::int32_t> want(tc.k);
    select_topk(s.data(), NB, tc.k, want.data());
    const std::vector<std::int32_t> got(ids.begin() + r * tc.k, ids.begin() + (r + 1) * tc.k);
    EXPECT_EQ(got, want) << "row " << r << " (nb " << NB << ", k " << tc.k << ")";
  }
}

class TopkRadix : public ::testing::TestWithParam<TopkShape> {};

TEST_P(TopkRadix, IdsMatchTheOracleSelection) {
  IXO_REQUIRE_CUDA();
  const TopkShape sh = GetParam();
  const TopkCase tc = topk_case(sh.nb, sh.k, 7u + static_cast<std::uint32_t>(sh.nb * 31 + sh.k));
  ASSERT_GT(sh.nb, sh.k) << "setup: rows must be ranked (nb > topk), not the trivial shortcut";
  expect_topk_matches_oracle(tc);
}

// The shapes: topk_rows.hpp's kTopkShapes (the host test runs the same).
INSTANTIATE_TEST_SUITE_P(CudaTopk, TopkRadix, ::testing::ValuesIn(kTopkShapes),
                         [](const ::testing::TestParamInfo<TopkShape>& i) { return topk_shape_name(i.param); });

}  // namespace
}  // namespace ixo::test
