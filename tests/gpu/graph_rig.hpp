// The CUDA-graph test rig shared by test_gpu_graph.cpp (in-place replays) and
// test_gpu_graph_robust.cpp (allocator churn, padded batches): device inputs and outputs at
// the captured (maximum) shapes, the capture of fill + index step, replays into clobbered
// outputs, eager launches into separate outputs, and the kernel nodes of a captured graph.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/index_args.hpp"
#include "gpu_test_util.hpp"
#include "gpu/indexer_launch.hpp"
#include "ixo/case.hpp"
#include "ixo/observed.hpp"
#include "ixo_test/support.hpp"

namespace ixo::test {

inline void ck(cudaError_t e, const std::string& what) {
  if (e != cudaSuccess) throw std::runtime_error("cuda: " + what + ": " + cudaGetErrorString(e));
}
inline void ck(int e, const std::string& what) { ck(static_cast<cudaError_t>(e), what); }

// One device buffer, allocated once at the maximum size; writes go into the same memory.
template <class T>
struct DevBuf {
  T* p = nullptr;
  std::size_t n = 0;
  explicit DevBuf(std::size_t count) : n(count) {
    ck(cudaMalloc(reinterpret_cast<void**>(&p), std::max<std::size_t>(count, 1) * sizeof(T)), "cudaMalloc");
  }
  ~DevBuf() { cudaFree(p); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  void write(const std::vector<T>& v, const char* what) {
    if (v.size() != n)
      throw std::runtime_error(std::string(what) + ": host tensor of " + std::to_string(v.size()) +
                               " elements does not match the captured " + std::to_string(n));
    ck(cudaMemcpy(p, v.data(), n * sizeof(T), cudaMemcpyHostToDevice), std::string("write ") + what);
  }
  std::vector<T> read() const {
    std::vector<T> v(n);
    ck(cudaMemcpy(v.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost), "read");
    return v;
  }
};

// Which inputs a step rewrites.
// Which inputs a write rewrites.
enum Inputs : unsigned { kQ = 1, kK = 2, kTable = 4, kSlots = 8, kLens = 16, kAllInputs = 31 };

inline gpu::IndexArgs args_for(const Case& c) { return gpu::index_args(c, c.cfg.q_scale); }

// Device state of one capture: inputs and outputs at the maximum shapes, plus separate
// outputs for the eager launches (same inputs).
struct Rig {
  Case shape;
  bool packed;
  DevBuf<std::uint16_t> q;
  DevBuf<std::uint8_t> k;
  DevBuf<std::int32_t> r2t;
  DevBuf<std::int64_t> slots, lens;
  DevBuf<float> scores, e_scores;
  DevBuf<std::int32_t> topk, e_topk;
  gpu::IndexArgs args, eager_args;
  cudaStream_t st = nullptr;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;

  Rig(const Case& c, bool pk)
      : shape(c),
        packed(pk),
        q(c.q.size()),
        k(c.k_cache.size()),
        r2t(c.req_to_token.size()),
        slots(c.slot_ids.size()),
        lens(c.seq_lens.size()),
        scores(static_cast<std::size_t>(c.Hq * c.R * c.NB())),
        e_scores(scores.n),
        topk(static_cast<std::size_t>(c.Hq * c.R * c.cfg.topk)),
        e_topk(topk.n) {
    args = args_for(c);
    args.q = q.p;
    args.k_cache = k.p;
    args.req_to_token = r2t.p;
    args.slot_ids = slots.p;
    args.seq_lens = lens.p;
    args.scores = scores.p;
    args.topk_idx = topk.p;
    args.mutant = test_mutant();  // a mutation ctest's injected mutant (gpu_test_util.hpp), else 0
    eager_args = args;
    eager_args.scores = e_scores.p;
    eager_args.topk_idx = e_topk.p;
    ck(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "stream");
  }
  ~Rig() {
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
    if (st) cudaStreamDestroy(st);
  }

  void check_shape(const Case& c) const {
    const bool same = c.R == shape.R && c.Hq == shape.Hq && c.Hk == shape.Hk && c.D == shape.D && c.S == shape.S &&
                      c.rows == shape.rows && c.width == shape.width && c.NB() == shape.NB() &&
                      c.cfg.k_dtype == shape.cfg.k_dtype && c.cfg.packed_queries == shape.cfg.packed_queries;
    if (!same) throw std::runtime_error("test setup: a step changed the graph-constant shapes: " + describe(c));
  }

  void write(const Case& c, unsigned what) {
    check_shape(c);
    if (what & kQ) q.write(c.q, "q");
    if (what & kK) k.write(c.k_cache, "k_cache");
    if (what & kTable) r2t.write(c.req_to_token, "req_to_token");
    if (what & kSlots) slots.write(c.slot_ids, "slot_ids");
    if (what & kLens) lens.write(c.seq_lens, "seq_lens");
  }

  void capture() {
    ck(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal), "begin capture");
    const int e1 = gpu::launch_fill_u32(args.scores, kScorePoisonBits, scores.n, st);
    const int e2 = e1 == 0 ? gpu::launch_index_step(args, packed, st) : e1;
    const cudaError_t end = cudaStreamEndCapture(st, &graph);
    ck(e1, "fill during capture");
    ck(e2, "index step during capture");
    ck(end, "end capture");
    ck(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
  }

  Observed observed(const DevBuf<float>& s, const DevBuf<std::int32_t>& t) const {
    return observed_of(shape, t.read(), s.read());
  }

  // Replay into clobbered outputs: whatever the replay does not write is visibly wrong
  // (ids 0x7f7f7f7f, scores 0.0 instead of the poison the graph's fill node must put back).
  Observed replay() {
    ck(cudaMemsetAsync(topk.p, 0x7f, topk.n * sizeof(std::int32_t), st), "clobber ids");
    ck(cudaMemsetAsync(scores.p, 0, scores.n * sizeof(float), st), "clobber scores");
    ck(cudaGraphLaunch(exec, st), "graph launch");
    ck(cudaStreamSynchronize(st), "graph sync");
    return observed(scores, topk);
  }

  Observed eager() {
    ck(gpu::launch_fill_u32(e_scores.p, kScorePoisonBits, e_scores.n, st), "eager fill");
    ck(gpu::launch_index_step(eager_args, packed, st), "eager index step");
    ck(cudaStreamSynchronize(st), "eager sync");
    return observed(e_scores, e_topk);
  }
};

// A kernel node of the captured graph: its kernel's (mangled) name, launch shape and the
// 8-byte words of its parameters.
struct KernelNode {
  std::string name;
  dim3 grid, block;
  std::set<std::uintptr_t> words;
};

inline std::vector<KernelNode> kernel_nodes(cudaGraph_t graph, std::size_t* all_nodes) {
  std::size_t n = 0;
  ck(cudaGraphGetNodes(graph, nullptr, &n), "graph nodes");
  std::vector<cudaGraphNode_t> nodes(n);
  ck(cudaGraphGetNodes(graph, nodes.data(), &n), "graph nodes");
  *all_nodes = n;
  std::vector<KernelNode> out;
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type;
    ck(cudaGraphNodeGetType(node, &type), "node type");
    if (type != cudaGraphNodeTypeKernel) continue;
    cudaKernelNodeParams kp{};
    ck(cudaGraphKernelNodeGetParams(node, &kp), "kernel node params");
    KernelNode kn;
    const char* name = nullptr;
    ck(cudaFuncGetName(&name, kp.func), "kernel name");
    kn.name = name ? name : "";
    kn.grid = kp.gridDim;
    kn.block = kp.blockDim;
    // fill_u32_kernel(dst, bits, n); the score and top-k kernels take one parameter struct.
    // (No probing past the last parameter: that is an API error under compute-sanitizer.)
    const std::size_t nparams = kn.name.find("fill_u32") != std::string::npos ? 3 : 1;
    for (std::size_t i = 0; i < nparams; ++i) {
      std::size_t off = 0, size = 0;
      ck(cudaFuncGetParamInfo(kp.func, i, &off, &size), "parameter info of " + kn.name);
      const auto* bytes = static_cast<const unsigned char*>(kp.kernelParams[i]);
      for (std::size_t b = 0; b + sizeof(std::uintptr_t) <= size; b += sizeof(std::uintptr_t)) {
        std::uintptr_t w;
        std::memcpy(&w, bytes + b, sizeof w);
        kn.words.insert(w);
      }
    }
    out.push_back(kn);
  }
  return out;
}

}  // namespace ixo::test
