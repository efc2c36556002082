// cuda-cp on one GPU (every rank simulated). Labels cp;cuda; skipped without a device. (The
// kernel case matrix runs cuda-cp in the one testbed: tests/kernels/test_kernel_matrix.cpp,
// ctest cuda_testbed.) Here:
//  * ids == cuda-rows ids bit for bit (same per-row arithmetic, same total order);
//  * packed CP == per-row CP bit for bit; vs the oracle (tiers 1-2, 3 on exact cases);
//  * vs cpu-cp: bit for bit on exact cases, elsewhere wherever the oracle's k-th margin is
//    clear (the tensor-core dot order differs from the twin's);
//  * the ROCm PR batch (bf16, e4m3fnuz), WORLD 1/2/4/8/16, winners in one shard, chunk
//    plans, and the CP mutants killed on the GPU too;
//  * real CUDA-graph batches (packed_queries a launch hint): the graph_batch_edits of
//    tests/support (groups mixing slot ids, R not a multiple of P, padding rows alone and in
//    whole groups, inactive rows inside and after groups) on the tensor-core and scalar
//    paths, and the graph-padded preset at WORLD 4: packed CP == per-row CP == cuda-rows ids.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "backend.hpp"
#include "cp_cases.hpp"
#include "cp_common.hpp"
#include "cpu/cp_twin.hpp"
#include "gpu/cp_backends.hpp"
#include "gpu/cuda_backends.hpp"
#include "ixo_test/support.hpp"
#include "ixo_test/testbed.hpp"

namespace {

using ixo::Case;
using ixo::Observed;
using ixo::RunOptions;
using ixo::test::judge_every_backend;
using ixo::test::judged_by;
namespace cc = ixo::common::cp;
namespace ct = ixo::cptest;

#define IXO_REQUIRE_CUDA_CP()                                                 \
  do {                                                                        \
    std::string why_;                                                         \
    if (!ixo::make_cuda_cp_backend()->available(&why_)) GTEST_SKIP() << why_; \
  } while (0)

// Every backend through the one testbed (tests/support/testbed.hpp): cuda-cp against the oracle,
// its ids == cuda-rows ids bit for bit, packed CP == its per-row plan, a rerun, chunk plans, a
// second poison, ids == cpu-cp's wherever the oracle's k-th margin is clear.
void check_gpu(const Case& c, bool exact, const std::string& what) {
  EXPECT_TRUE(judged_by(judge_every_backend(c, what, exact, RunOptions{}, ixo::test::TestbedChecks::all()), "cuda-cp"));
}

TEST(CudaCp, RocmPrVerifyBatch) {
  IXO_REQUIRE_CUDA_CP();
  for (ixo::KDtype k : {ixo::KDtype::bf16, ixo::KDtype::e4m3fnuz, ixo::KDtype::e4m3fn})
    check_gpu(ixo::generate(ct::rocm_pr_spec(k), 41488), false,
              std::string("rocm pr ") + std::string(ixo::to_string(k)));
}

TEST(CudaCp, WorldSizes) {
  IXO_REQUIRE_CUDA_CP();
  for (int world : {1, 2, 4, 8, 16})
    for (int p : {1, 4}) {
      auto spec = ct::world_spec(world, p);
      check_gpu(ixo::generate(spec, 300 + world * 10 + p), false, "world " + std::to_string(world));
      spec.values = ixo::Values::exact;
      check_gpu(ixo::generate(spec, 5 + world), true, "exact world " + std::to_string(world));
      spec = ct::world_spec(world, p);
      spec.D = 40;  // scalar path
      check_gpu(ixo::generate(spec, 17 + world), false, "D 40 world " + std::to_string(world));
    }
}

TEST(CudaCp, WinnersInOneShardAndPadding) {
  IXO_REQUIRE_CUDA_CP();
  for (int world : {2, 4})
    for (int shard = 0; shard < world; ++shard)
      check_gpu(ct::winners_in_one_shard(world, shard, 255 * 128 + 126, 2), true, "winners in one shard");
  auto m = ct::rocm_pr_spec(ixo::KDtype::e4m3fnuz);
  m.requests = 2;
  m.prefixes = {128 * 30 + 126, 128 * 9 - 1};
  m.padding_requests = 2;
  m.inactive_requests = 1;
  check_gpu(ixo::generate(m, 4), false, "M3 padding + inactive");
}

TEST(CudaCp, GraphBatchEdits) {
  IXO_REQUIRE_CUDA_CP();
  for (const std::int64_t D : {64, 40}) {
    ixo::GenSpec s = ixo::test::graph_edit_base_spec();
    s.D = D;
    for (const auto& ed : ixo::test::graph_batch_edits(ixo::generate(s, 1010 + D))) {
      SCOPED_TRACE("D " + std::to_string(D) + " " + ed.name + ": " + ed.what);
      check_gpu(ed.c, false, ed.name);
      RunOptions one;
      one.force_num_chunks = 1;
      EXPECT_TRUE(ixo::test::bitwise_equal(ixo::make_cuda_cp_backend()->run(ed.c),
                                           ixo::make_cuda_cp_backend()->run(ed.c, one), ed.c, "chunks 1 " + ed.name));
    }
  }
}

TEST(CudaCp, GraphPaddedPresetWorld4) {
  IXO_REQUIRE_CUDA_CP();
  for (ixo::KDtype k : {ixo::KDtype::bf16, ixo::KDtype::e4m3fnuz, ixo::KDtype::e4m3fn})
    for (std::uint64_t seed : {1, 2}) {
      auto s = ixo::preset("graph-padded");
      s.Hq = 4;
      s.cfg.init_blocks = 1;
      s.cfg.local_blocks = 2;
      s.cfg.k_dtype = k;
      const Case c = ixo::generate(s, seed);
      ASSERT_NE(c.R % c.cfg.packed_queries, 0);
      check_gpu(c, false, std::string("graph-padded ") + std::string(ixo::to_string(k)));
    }
}

TEST(CudaCp, ChunkPlanIndependent) {
  IXO_REQUIRE_CUDA_CP();
  const Case c = ixo::generate(ct::rocm_pr_spec(ixo::KDtype::bf16), 9);
  auto be = ixo::make_cuda_cp_backend();
  const Observed base = be->run(c);
  for (int chunks : {1, 3, 64, 100}) {
    RunOptions o;
    o.force_num_chunks = chunks;
    EXPECT_TRUE(ixo::test::bitwise_equal(base, be->run(c, o), c, "chunks " + std::to_string(chunks)));
  }
}

TEST(CudaCp, MutantsKilled) {
  IXO_REQUIRE_CUDA_CP();
  if (!IXO_MUTANT(cc::kMutCpContiguousShards, cc::kMutCpContiguousShards)) GTEST_SKIP() << "mutants not compiled";
  std::vector<Case> cases = {ixo::generate(ct::rocm_pr_spec(ixo::KDtype::bf16), 41488),
                             ct::winners_in_one_shard(4, 1, 255 * 128 + 126, 1)};
  auto be = ixo::make_cuda_cp_backend();
  std::vector<Observed> base;
  for (const auto& c : cases) base.push_back(be->run(c));
  for (int id = cc::kMutCpContiguousShards; id <= ixo::mutants::cp_k_by_group_index; ++id) {
    RunOptions o;
    o.mutant = id;
    std::int64_t n = 0;
    for (std::size_t i = 0; i < cases.size(); ++i) n += ct::differing_rows(base[i], be->run(cases[i], o));
    EXPECT_GT(n, 0) << "mutant " << id << " survived on the GPU";
  }
}

}  // namespace
