// CUDA-graph replay robustness (issue 13, section 2), part of test_gpu_graph:
//  (a) AllocatorChurn: capture fill + index step, then churn the allocator (the warm-up's
//      outputs freed, the cuda backends run on a larger case through the same launcher
//      (they allocate and free their own buffers), then cudaMalloc/cudaFree of other sizes
//      filled with garbage and a torch-like caching pool carved from one big block), then replay with new inputs
//      written in place. The replay equals the oracle and a fresh-allocation backend run bit for bit,
//      no kernel-node parameter word points into any churned allocation, and every one that
//      is a device address lies in a captured buffer (the graph holds only the buffers it
//      was captured with; catalogue mutant scores_workspace_cached keeps its own).
//  (b) PaddedBatch: capture a batch larger than the real one (real requests, then graph
//      padding rows on table row 0 and inactive rows), replay with other real contents and
//      then with fewer real requests (real groups turned into padding / inactive rows):
//      real rows match the oracle and the eager launch; padding rows (nb <= topk) give their
//      trivial ids and leave every score cell poison; inactive rows give all -1 and poison
//      (docs/semantics.md "Score buffer contract"). Outputs are clobbered before each replay.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gpu/device_buffer.hpp"
#include "gpu/index_args.hpp"
#include "gpu/indexer_launch.hpp"
#include "gpu_test_util.hpp"
#include "graph_rig.hpp"
#include "ixo/generate.hpp"
#include "ixo/oracle.hpp"
#include "ixo_test/support.hpp"

namespace ixo::test {
namespace {

// Every 8-byte parameter word of every kernel node of g (graph_rig.hpp's kernel_nodes).
std::vector<std::uintptr_t> param_words(cudaGraph_t g) {
  std::size_t all = 0;
  std::vector<std::uintptr_t> words;
  for (const KernelNode& n : kernel_nodes(g, &all)) words.insert(words.end(), n.words.begin(), n.words.end());
  return words;
}

GenSpec churn_spec(std::uint64_t) {
  return GenSpec{}
      .rows(4, 4)
      .lengths({128 * 30 + 7, 128 * 12 - 1, 2500, 128 * 21})
      .heads(4, 1, 128)
      .blocks(128, 8, 1, 1)
      .score(ScoreType::max);
}

class GraphRobust : public ::testing::TestWithParam<bool> {};  // packed?

TEST_P(GraphRobust, AllocatorChurnBetweenCaptureAndReplay) {
  IXO_REQUIRE_CUDA();
  const bool packed = GetParam();
  const Case c0 = generate(churn_spec(0), 31);
  Case c1 = generate(churn_spec(0), 32);  // same shapes, other contents
  ASSERT_EQ(c1.S, c0.S);
  ASSERT_EQ(c1.width, c0.width);
  std::vector<void*> churn;  // (base, size) of every allocation made after the capture
  std::vector<std::size_t> churn_size;
  const void* rig_q = nullptr;
  {
    // Warm-up buffers freed right after the capture: their addresses are reused below.
    auto warm_out = std::make_unique<gpu::DevBuf<float>>(std::size_t{1} << 20);
    Rig rig(c0, packed);
    rig_q = rig.q.p;
    rig.write(c0, kAllInputs);
    (void)rig.eager();
    rig.capture();
    const gpu::IndexArgs captured = rig.args;
    const Observed first = rig.replay();
    EXPECT_TRUE(matches_oracle(c0, oracle(c0), first, false, "replay before churn"));

    warm_out.reset();
    // A larger batch through the same launcher first (a server's eager step, or another
    // graph's capture): anything the launcher kept and had to grow is freed now, before the
    // churn re-uses the addresses. Then churn: mallocs of several sizes filled with garbage,
    // frees of half of them, a caching pool (one block, sub-allocated).
    GenSpec big = churn_spec(0);
    big.requests = 6;
    big.prefixes = {9000, 300, 128 * 50, 4000, 77, 6000};
    const Case cb = generate(big, 33);
    RunOptions same_launcher;
    same_launcher.mutant = test_mutant();
    (void)make_cuda_rows_backend()->run(cb, same_launcher);
    (void)make_cuda_packed_backend()->run(cb, same_launcher);
    for (std::size_t i = 0; i < 24; ++i) {
      const std::size_t sz = (std::size_t{1} << (12 + i % 12)) + 256 * i;
      void* p = nullptr;
      ck(cudaMalloc(&p, sz), "churn malloc");
      ck(cudaMemset(p, 0x5a + static_cast<int>(i), sz), "churn fill");
      churn.push_back(p);
      churn_size.push_back(sz);
    }
    for (std::size_t i = 0; i < churn.size(); i += 2) {
      ck(cudaFree(churn[i]), "churn free");
      void* p = nullptr;
      ck(cudaMalloc(&p, churn_size[i] * 3 + 512), "churn re-malloc");
      ck(cudaMemset(p, 0xee, churn_size[i] * 3 + 512), "churn fill");
      churn[i] = p;
      churn_size[i] = churn_size[i] * 3 + 512;
    }
    {
      void* pool = nullptr;
      const std::size_t pool_sz = std::size_t{64} << 20;
      ck(cudaMalloc(&pool, pool_sz), "pool");
      ck(cudaMemset(pool, 0xc3, pool_sz), "pool fill");
      churn.push_back(pool);
      churn_size.push_back(pool_sz);
    }

    rig.write(c1, kAllInputs);
    ASSERT_EQ(rig.args.q, captured.q);
    ASSERT_EQ(rig.args.scores, captured.scores);
    const Observed g = rig.replay();
    EXPECT_TRUE(matches_oracle(c1, oracle(c1), g, false, "replay after allocator churn"));
    EXPECT_TRUE(bitwise_equal(g, (packed ? make_cuda_packed_backend() : make_cuda_rows_backend())->run(c1), c1,
                              "replay after churn vs fresh backend run"));
    EXPECT_NE(g.topk_idx, first.topk_idx) << "new inputs must change the answer";
    // The graph holds only the buffers it was captured with: every kernel-node parameter word
    // that is a device address lies inside one of the rig's buffers (not in churned memory,
    // and not in memory the launcher keeps for itself: whether the allocator has handed such
    // memory to someone else by the replay is luck, the reference is the bug).
    const std::pair<const void*, std::size_t> owned[] = {{rig.q.p, rig.q.n * 2},       {rig.k.p, rig.k.n},
                                                         {rig.r2t.p, rig.r2t.n * 4},   {rig.slots.p, rig.slots.n * 8},
                                                         {rig.lens.p, rig.lens.n * 8}, {rig.scores.p, rig.scores.n * 4},
                                                         {rig.topk.p, rig.topk.n * 4}};
    std::size_t refs = 0, device_words = 0;
    for (std::uintptr_t w : param_words(rig.graph)) {
      if (w == reinterpret_cast<std::uintptr_t>(rig_q)) ++refs;
      for (std::size_t i = 0; i < churn.size(); ++i) {
        const auto base = reinterpret_cast<std::uintptr_t>(churn[i]);
        EXPECT_FALSE(w >= base && w < base + churn_size[i]) << "a graph node references churned memory";
      }
      cudaPointerAttributes at{};
      if (cudaPointerGetAttributes(&at, reinterpret_cast<const void*>(w)) != cudaSuccess) {
        (void)cudaGetLastError();
        continue;
      }
      if (at.type != cudaMemoryTypeDevice) continue;
      ++device_words;
      bool inside = false;
      for (const auto& [p, n] : owned) {
        const auto b = reinterpret_cast<std::uintptr_t>(p);
        inside = inside || (w >= b && w < b + n);
      }
      EXPECT_TRUE(inside) << "a graph kernel node references device memory 0x" << std::hex << w
                          << " that is none of the captured buffers";
    }
    EXPECT_GE(refs, 1u) << "the score node must reference the captured q buffer";
    EXPECT_GE(device_words, 7u) << "the nodes' device pointers were not recognised";
  }
  for (void* p : churn) cudaFree(p);
}

// Expected outputs of one row that the contract fixes without scoring: -1 ids for inactive
// rows, and poison in every score cell of a row with nb <= topk.
void expect_unscored_row(const Observed& o, const Expected& e, const Case& c, std::int64_t r, const char* kind) {
  for (std::int64_t h = 0; h < c.Hq; ++h) {
    for (std::int64_t j = 0; j < c.cfg.topk; ++j) {
      const std::size_t at = static_cast<std::size_t>((h * c.R + r) * c.cfg.topk + j);
      EXPECT_EQ(o.topk_idx[at], e.topk_idx[at]) << kind << " row " << r << " head " << h << " slot " << j;
      if (table_row(c, r) < 0) {
        EXPECT_EQ(o.topk_idx[at], -1) << kind << " row " << r;
      }
    }
    for (std::int64_t b = 0; b < c.NB(); ++b) {
      std::uint32_t bits;
      std::memcpy(&bits, &o.scores[static_cast<std::size_t>((h * c.R + r) * c.NB() + b)], sizeof bits);
      EXPECT_EQ(bits, kScorePoisonBits) << kind << " row " << r << " head " << h << " block " << b;
    }
  }
}

TEST_P(GraphRobust, PaddedBatchLargerThanRealBatch) {
  IXO_REQUIRE_CUDA();
  const bool packed = GetParam();
  GenSpec s = churn_spec(0);
  s.requests = 3;
  s.prefixes = {128 * 25 + 3, 128 * 14, 3001};
  s.padding_requests = 1;       // a whole padding group (table row 0, L 2..5)
  s.trailing_padding_rows = 3;  // then single padding rows, not filling a group
  s.trailing_inactive_rows = 2;
  Case a = generate(s, 41);
  Case b = generate(s, 42);
  ASSERT_EQ(a.R, b.R);
  ASSERT_EQ(a.S, b.S);
  const std::int64_t real_rows = 3 * 4;
  ASSERT_GT(a.R, real_rows + 4);
  // c: fewer real rows: request 2 becomes padding (table row 0, L 2..5), request 1 inactive.
  Case c = b;
  for (std::int64_t j = 0; j < 4; ++j) {
    c.slot_ids[static_cast<std::size_t>(8 + j)] = 0;
    c.seq_lens[static_cast<std::size_t>(8 + j)] = 2 + j;
    c.slot_ids[static_cast<std::size_t>(4 + j)] = c.rows + 3;
  }
  Rig rig(a, packed);
  rig.write(a, kAllInputs);
  (void)rig.eager();
  rig.capture();
  Observed prev;
  for (Case* step : {&a, &b, &c}) {
    rig.write(*step, kAllInputs);
    const Observed g = rig.replay();
    const Expected e = oracle(*step);
    EXPECT_TRUE(matches_oracle(*step, e, g, false, "padded replay vs oracle"));
    EXPECT_TRUE(bitwise_equal(g, rig.eager(), *step, "padded replay vs eager"));
    std::int64_t padding = 0, inactive = 0, real = 0;
    for (std::int64_t r = 0; r < step->R; ++r) {
      const std::int64_t sid = table_row(*step, r);
      if (sid < 0) {
        ++inactive;
        expect_unscored_row(g, e, *step, r, "inactive");
      } else if (sid == 0) {
        ++padding;
        ASSERT_LE(row_blocks(*step, r), step->cfg.topk) << "setup: padding rows are trivial";
        expect_unscored_row(g, e, *step, r, "padding");
      } else {
        ++real;
      }
    }
    EXPECT_GE(padding, 7);
    EXPECT_GE(inactive, 2);
    EXPECT_GE(real, 4);
    if (step != &a) {
      EXPECT_NE(g.topk_idx, prev.topk_idx) << "the replay did not change with its inputs";
    }
    prev = g;
  }
}

INSTANTIATE_TEST_SUITE_P(CudaGraph, GraphRobust, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& i) { return i.param ? "packed" : "rows"; });

}  // namespace
}  // namespace ixo::test
