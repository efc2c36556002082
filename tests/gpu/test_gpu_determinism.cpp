// Repeat-run determinism (issue 13, section 2): the same inputs give bitwise the same ids and
// scores over repeated launches of the index step while other work runs concurrently on
// another stream (memsets and device copies of a few hundred MB, of a different size each
// time, so the step's warps finish their loads in a different order from launch to launch).
// The cases are exact-tie plateaus (every token of a request has the same K vector: every
// block of a row has the same max score, so the k-th key is shared by thousands of blocks):
// any choice among them is a valid top-k (the verdict accepts it), so only this test sees
// a kernel that breaks the ties by arrival order (catalogue mutant topk_ties_by_arrival,
// ctest mutant.topk_ties_by_arrival). Keys in shared memory (nb <= 8192) and in global
// memory (nb > 8192); per-row and packed.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "gpu/case_inputs.hpp"
#include "gpu/index_args.hpp"
#include "gpu/indexer_launch.hpp"
#include "gpu_test_util.hpp"
#include "ixo/generate.hpp"
#include "ixo/oracle.hpp"
#include "ixo_test/support.hpp"

namespace ixo::test {
namespace {

void ck(cudaError_t e, const char* what) { gpu::check(e, "test_gpu_determinism", what); }
void ck(int e, const char* what) { ck(static_cast<cudaError_t>(e), what); }

struct DeterminismParam {
  const char* name;
  int block_size;
  std::int64_t prefix;  // of the first request; the second has prefix / 2
  bool packed;
};

constexpr int kRepeats = 24;

class RepeatRuns : public ::testing::TestWithParam<DeterminismParam> {};

TEST_P(RepeatRuns, ConcurrentWorkGivesTheSameBits) {
  IXO_REQUIRE_CUDA();
  const DeterminismParam& p = GetParam();
  const Case c = generate(GenSpec{}
                              .rows(2, 4)
                              .heads(2, 1, 128)
                              .blocks(p.block_size, 16, 1, 1)
                              .lengths({p.prefix, p.prefix / 2})
                              .score(ScoreType::max)
                              .with(Values::plateau),
                          2026);
  ASSERT_GT(row_blocks(c, 0), 16 * c.cfg.topk) << "setup: the tie plateau must be much wider than topk";

  gpu::IndexArgs a = gpu::index_args(c, c.cfg.q_scale);
  const gpu::CaseInputs in(c, c.q);
  in.point(a);
  a.mutant = test_mutant();
  const std::size_t ncells = static_cast<std::size_t>(c.Hq * c.R * c.NB());
  const std::size_t nids = static_cast<std::size_t>(c.Hq * c.R * c.cfg.topk);
  gpu::DevBuf<float> scores(ncells);
  gpu::DevBuf<std::int32_t> topk(nids);
  a.scores = scores.p;
  a.topk_idx = topk.p;

  // Concurrent work: a non-blocking stream of memsets and copies over 2 x 256 MB.
  const std::size_t noise_bytes = std::size_t{256} << 20;
  gpu::DevBuf<std::uint8_t> noise_a(noise_bytes), noise_b(noise_bytes);
  cudaStream_t step = nullptr, other = nullptr;
  ck(cudaStreamCreateWithFlags(&step, cudaStreamNonBlocking), "stream");
  ck(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking), "stream");

  std::vector<std::int32_t> first_ids, ids(nids);
  std::vector<float> first_scores, sc(ncells);
  for (int i = 0; i < kRepeats; ++i) {
    ck(gpu::launch_fill_u32(scores.p, kScorePoisonBits, ncells, step), "fill");
    ck(cudaMemsetAsync(topk.p, 0x7f, nids * sizeof(std::int32_t), step), "clobber ids");
    ck(cudaStreamSynchronize(step), "synchronize");
    const std::size_t busy = noise_bytes >> (i % 4);  // a different amount each time
    ck(cudaMemsetAsync(noise_a.p, i, busy, other), "noise memset");
    ck(cudaMemcpyAsync(noise_b.p, noise_a.p, busy, cudaMemcpyDeviceToDevice, other), "noise copy");
    if (i % 3 == 1) ck(cudaStreamSynchronize(other), "quiet run");  // some launches alone
    ck(gpu::launch_index_step(a, p.packed, step), "index step");
    ck(cudaStreamSynchronize(step), "synchronize step");
    ck(cudaMemcpy(ids.data(), topk.p, nids * sizeof(std::int32_t), cudaMemcpyDeviceToHost), "D2H ids");
    ck(cudaMemcpy(sc.data(), scores.p, ncells * sizeof(float), cudaMemcpyDeviceToHost), "D2H scores");
    if (i == 0) {
      first_ids = ids;
      first_scores = sc;
      continue;
    }
    ASSERT_EQ(ids, first_ids) << "launch " << i << " selected other ids than launch 0 (same inputs)";
    ASSERT_EQ(0, std::memcmp(sc.data(), first_scores.data(), ncells * sizeof(float)))
        << "launch " << i << " wrote other score bits than launch 0";
  }
  ck(cudaStreamSynchronize(other), "synchronize other");
  cudaStreamDestroy(step);
  cudaStreamDestroy(other);

  // And the repeated answer is a right one.
  const Observed o = observed_of(c, first_ids, first_scores);
  EXPECT_TRUE(matches_oracle(c, oracle(c), o, false, "repeated launches vs oracle"));
}

// block 128 x ~2000 blocks: keys in shared memory; block 32 x 8500 blocks: keys read from
// global memory by the top-k (nb > kTopkSmemKeys = 8192).
INSTANTIATE_TEST_SUITE_P(CudaDeterminism, RepeatRuns,
                         ::testing::Values(DeterminismParam{"smem_keys_rows", 128, 128 * 2000 + 5, false},
                                           DeterminismParam{"smem_keys_packed", 128, 128 * 2000 + 5, true},
                                           DeterminismParam{"global_keys_rows", 32, 32 * 8500 + 3, false},
                                           DeterminismParam{"global_keys_packed", 32, 32 * 8500 + 3, true}),
                         [](const ::testing::TestParamInfo<DeterminismParam>& i) { return i.param.name; });

}  // namespace
}  // namespace ixo::test
