// The whole index step (poison fill + packed score + top-k) captured in one CUDA graph:
// replays equal the eager launch bit for bit, pass the oracle, and follow new seq_lens
// written between replays (the grid does not depend on them).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <vector>

#include "gpu/indexer_launch.hpp"
#include "gpu_test_util.hpp"
#include "ixo_test/support.hpp"

namespace ixo::test {
namespace {

#define CK(x) ASSERT_EQ(static_cast<int>(x), 0) << #x << ": " << ::ixo::gpu::error_string(static_cast<int>(x))

template <class T>
T* upload(const std::vector<T>& v) {
  T* p = nullptr;
  if (cudaMalloc(reinterpret_cast<void**>(&p), v.size() * sizeof(T)) != cudaSuccess) return nullptr;
  cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice);
  return p;
}

Observed download(const Case& c, const gpu::IndexArgs& a) {
  Observed o;
  o.Hq = c.Hq;
  o.R = c.R;
  o.topk = c.cfg.topk;
  o.NB = a.NB;
  o.has_scores = true;
  o.topk_idx.resize(static_cast<std::size_t>(c.Hq * c.R * c.cfg.topk));
  o.scores.resize(static_cast<std::size_t>(c.Hq * c.R * a.NB));
  cudaMemcpy(o.topk_idx.data(), a.topk_idx, o.topk_idx.size() * 4, cudaMemcpyDeviceToHost);
  cudaMemcpy(o.scores.data(), a.scores, o.scores.size() * 4, cudaMemcpyDeviceToHost);
  return o;
}

TEST(CudaGraph, IndexStepCaptureReplay) {
  IXO_REQUIRE_CUDA();
  GenSpec s;
  s.requests = 4;
  s.draft_rows = 4;
  s.prefixes = {128 * 20 - 2, 128 * 9 + 5, 3000, 128 * 31 - 1};
  s.cfg.k_dtype = KDtype::e4m3fn;
  Case c = generate(s, 99);
  gpu::IndexArgs a;
  a.R = c.R;
  a.Hq = c.Hq;
  a.Hk = c.Hk;
  a.D = c.D;
  a.S = c.S;
  a.rows = c.rows;
  a.width = c.width;
  a.NB = c.NB();
  a.block_size = c.cfg.block_size;
  a.topk = c.cfg.topk;
  a.init_blocks = c.cfg.init_blocks;
  a.local_blocks = c.cfg.local_blocks;
  a.k_code = static_cast<int>(c.cfg.k_dtype);
  a.packed_queries = c.cfg.packed_queries;
  a.sm_q_scale = static_cast<float>(c.effective_sm_scale() * c.cfg.q_scale);
  a.k_scale = static_cast<float>(c.cfg.k_scale);
  ASSERT_TRUE(gpu::packed_supported(a));
  a.q = upload(c.q);
  a.k_cache = upload(c.k_cache);
  a.req_to_token = upload(c.req_to_token);
  a.slot_ids = upload(c.slot_ids);
  std::int64_t* lens = upload(c.seq_lens);
  a.seq_lens = lens;
  const std::size_t ncells = gpu::score_workspace_bytes(a.R, a.Hq, a.NB) / sizeof(float);
  CK(cudaMalloc(reinterpret_cast<void**>(&a.scores), ncells * sizeof(float)));
  CK(cudaMalloc(reinterpret_cast<void**>(&a.topk_idx), static_cast<std::size_t>(a.Hq * a.R * a.topk) * 4));

  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  // Eager.
  CK(gpu::launch_fill_u32(a.scores, kScorePoisonBits, ncells, st));
  CK(gpu::launch_index_step(a, true, st));
  CK(cudaStreamSynchronize(st));
  const Observed eager = download(c, a);
  EXPECT_TRUE(matches_oracle(c, oracle(c), eager, false, "eager"));

  // Capture.
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
  CK(gpu::launch_fill_u32(a.scores, kScorePoisonBits, ncells, st));
  CK(gpu::launch_index_step(a, true, st));
  CK(cudaStreamEndCapture(st, &graph));
  CK(cudaGraphInstantiate(&exec, graph, 0));
  for (int rep = 0; rep < 3; ++rep) {
    CK(cudaGraphLaunch(exec, st));
    CK(cudaStreamSynchronize(st));
    EXPECT_TRUE(bitwise_equal(eager, download(c, a), c, "graph replay " + std::to_string(rep)));
  }
  // New lengths (each request 70 tokens shorter), same graph.
  for (auto& L : c.seq_lens) L = L > 70 ? L - 70 : L;
  CK(cudaMemcpy(lens, c.seq_lens.data(), c.seq_lens.size() * 8, cudaMemcpyHostToDevice));
  CK(cudaGraphLaunch(exec, st));
  CK(cudaStreamSynchronize(st));
  const Observed replay2 = download(c, a);
  EXPECT_TRUE(matches_oracle(c, oracle(c), replay2, false, "graph replay, new lengths"));
  EXPECT_TRUE(bitwise_equal(make_cuda_packed_backend()->run(c), replay2, c, "replay vs backend, new lengths"));

  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(st);
  cudaFree(const_cast<std::uint16_t*>(a.q));
  cudaFree(const_cast<void*>(a.k_cache));
  cudaFree(const_cast<std::int32_t*>(a.req_to_token));
  cudaFree(const_cast<std::int64_t*>(a.slot_ids));
  cudaFree(lens);
  cudaFree(a.scores);
  cudaFree(a.topk_idx);
}

}  // namespace
}  // namespace ixo::test
