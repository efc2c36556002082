// CUDA-graph replay robustness (issue 13, section 2), part of test_gpu_graph:
//  (a) AllocatorChurn: capture fill + index step, then churn the allocator (the warm-up's
//      outputs freed, cudaMalloc/cudaFree of other sizes filled with garbage, a torch-like
//      caching pool carved from one big block, and the cuda backends run on a larger case,
//      which allocate and free their own buffers), then replay with new inputs written in
//      place. The replay equals the oracle and a fresh-allocation backend run bit for bit,
//      and no kernel-node parameter word points into any churned allocation (the graph holds
//      only the buffers it was captured with).
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
#include <vector>

#include "gpu/device_buffer.hpp"
#include "gpu/index_args.hpp"
#include "gpu/indexer_launch.hpp"
#include "gpu_test_util.hpp"
#include "ixo/generate.hpp"
#include "ixo/oracle.hpp"
#include "ixo_test/support.hpp"

namespace ixo::test {
namespace {

void ck(cudaError_t e, const char* what) { gpu::check(e, "graph robust", what); }
void ck(int e, const char* what) { ck(static_cast<cudaError_t>(e), what); }

template <class T>
void put(const gpu::DevBuf<T>& b, const std::vector<T>& v) {
  ASSERT_EQ(v.size(), b.n) << "a step changed a graph-constant shape";
  ck(cudaMemcpy(b.p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice), "H2D");
}
template <class T>
std::vector<T> get(const gpu::DevBuf<T>& b) {
  std::vector<T> v(b.n);
  ck(cudaMemcpy(v.data(), b.p, b.n * sizeof(T), cudaMemcpyDeviceToHost), "D2H");
  return v;
}

// Captured inputs/outputs of one case shape.
struct MiniRig {
  Case shape;
  bool packed;
  gpu::DevBuf<std::uint16_t> q;
  gpu::DevBuf<std::uint8_t> k;
  gpu::DevBuf<std::int32_t> r2t;
  gpu::DevBuf<std::int64_t> slots, lens;
  gpu::DevBuf<float> scores;
  gpu::DevBuf<std::int32_t> topk;
  gpu::IndexArgs a;
  cudaStream_t st = nullptr;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  MiniRig(const Case& c, bool pk)
      : shape(c), packed(pk), q(c.q.size()), k(c.k_cache.size()), r2t(c.req_to_token.size()),
        slots(c.slot_ids.size()), lens(c.seq_lens.size()),
        scores(static_cast<std::size_t>(c.Hq * c.R * c.NB())),
        topk(static_cast<std::size_t>(c.Hq * c.R * c.cfg.topk)) {
    a = gpu::index_args(c, c.cfg.q_scale);
    a.q = q.p;
    a.k_cache = k.p;
    a.req_to_token = r2t.p;
    a.slot_ids = slots.p;
    a.seq_lens = lens.p;
    a.scores = scores.p;
    a.topk_idx = topk.p;
    ck(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "stream");
  }
  ~MiniRig() {
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
    if (st) cudaStreamDestroy(st);
  }
  void write(const Case& c) {
    put(q, c.q);
    put(k, c.k_cache);
    put(r2t, c.req_to_token);
    put(slots, c.slot_ids);
    put(lens, c.seq_lens);
  }
  void capture() {
    ck(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal), "begin capture");
    const int e1 = gpu::launch_fill_u32(a.scores, kScorePoisonBits, scores.n, st);
    const int e2 = e1 == 0 ? gpu::launch_index_step(a, packed, st) : e1;
    const cudaError_t end = cudaStreamEndCapture(st, &graph);
    ck(e1, "fill during capture");
    ck(e2, "index step during capture");
    ck(end, "end capture");
    ck(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
  }
  Observed read() const {
    Observed o;
    o.Hq = shape.Hq;
    o.R = shape.R;
    o.topk = shape.cfg.topk;
    o.NB = shape.NB();
    o.has_scores = true;
    o.topk_idx = get(topk);
    o.scores = get(scores);
    return o;
  }
  Observed replay() {
    ck(cudaMemsetAsync(topk.p, 0x7f, topk.n * sizeof(std::int32_t), st), "clobber ids");
    ck(cudaMemsetAsync(scores.p, 0, scores.n * sizeof(float), st), "clobber scores");
    ck(cudaGraphLaunch(exec, st), "graph launch");
    ck(cudaStreamSynchronize(st), "graph sync");
    return read();
  }
  // Eager launch into the captured outputs (not a graph).
  Observed eager() {
    ck(gpu::launch_fill_u32(a.scores, kScorePoisonBits, scores.n, st), "eager fill");
    ck(gpu::launch_index_step(a, packed, st), "eager step");
    ck(cudaStreamSynchronize(st), "eager sync");
    return read();
  }
};

// Every 8-byte word of every kernel node's parameters.
std::vector<std::uintptr_t> param_words(cudaGraph_t g) {
  std::size_t n = 0;
  ck(cudaGraphGetNodes(g, nullptr, &n), "nodes");
  std::vector<cudaGraphNode_t> nodes(n);
  ck(cudaGraphGetNodes(g, nodes.data(), &n), "nodes");
  std::vector<std::uintptr_t> words;
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type;
    ck(cudaGraphNodeGetType(node, &type), "node type");
    if (type != cudaGraphNodeTypeKernel) continue;
    cudaKernelNodeParams kp{};
    ck(cudaGraphKernelNodeGetParams(node, &kp), "kernel params");
    const char* name = nullptr;
    ck(cudaFuncGetName(&name, kp.func), "kernel name");
    // fill_u32_kernel(dst, bits, n); the score and top-k kernels take one parameter struct
    // (no probing past the last parameter: an API error under compute-sanitizer).
    const std::size_t nparams = name && std::strstr(name, "fill_u32") ? 3 : 1;
    for (std::size_t i = 0; i < nparams; ++i) {
      std::size_t off = 0, size = 0;
      ck(cudaFuncGetParamInfo(kp.func, i, &off, &size), "parameter info");
      const auto* bytes = static_cast<const unsigned char*>(kp.kernelParams[i]);
      for (std::size_t b = 0; b + sizeof(std::uintptr_t) <= size; b += sizeof(std::uintptr_t)) {
        std::uintptr_t w;
        std::memcpy(&w, bytes + b, sizeof w);
        words.push_back(w);
      }
    }
  }
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
    MiniRig rig(c0, packed);
    rig_q = rig.q.p;
    rig.write(c0);
    (void)rig.eager();
    rig.capture();
    const gpu::IndexArgs captured = rig.a;
    const Observed first = rig.replay();
    EXPECT_TRUE(matches_oracle(c0, oracle(c0), first, false, "replay before churn"));

    warm_out.reset();
    // Churn: mallocs of several sizes filled with garbage, frees of half of them, a caching
    // pool (one block, sub-allocated), and backend runs on a larger case.
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
    GenSpec big = churn_spec(0);
    big.requests = 6;
    big.prefixes = {9000, 300, 128 * 50, 4000, 77, 6000};
    const Case cb = generate(big, 33);
    (void)make_cuda_rows_backend()->run(cb);
    (void)make_cuda_packed_backend()->run(cb);

    rig.write(c1);
    ASSERT_EQ(rig.a.q, captured.q);
    ASSERT_EQ(rig.a.scores, captured.scores);
    const Observed g = rig.replay();
    EXPECT_TRUE(matches_oracle(c1, oracle(c1), g, false, "replay after allocator churn"));
    EXPECT_TRUE(bitwise_equal(g, (packed ? make_cuda_packed_backend() : make_cuda_rows_backend())->run(c1), c1,
                              "replay after churn vs fresh backend run"));
    EXPECT_NE(g.topk_idx, first.topk_idx) << "new inputs must change the answer";
    std::size_t refs = 0;
    for (std::uintptr_t w : param_words(rig.graph)) {
      if (w == reinterpret_cast<std::uintptr_t>(rig_q)) ++refs;
      for (std::size_t i = 0; i < churn.size(); ++i) {
        const auto base = reinterpret_cast<std::uintptr_t>(churn[i]);
        EXPECT_FALSE(w >= base && w < base + churn_size[i]) << "a graph node references churned memory";
      }
    }
    EXPECT_GE(refs, 1u) << "the score node must reference the captured q buffer";
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
  MiniRig rig(a, packed);
  rig.write(a);
  (void)rig.eager();
  rig.capture();
  Observed prev;
  for (Case* step : {&a, &b, &c}) {
    rig.write(*step);
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
