// CP indexer benchmark on one GPU: what one rank of a WORLD = 4 CP group does per step
// (score its shard for all 4 heads + keep its candidates + merge its own head), packed
// (4 draft rows x 4 heads in one 16-row tile, K read once per request) vs per-row (one
// row's 4 heads per tile, K read once per draft row). M3 shapes: D 128, block 128, topk 16,
// init 0, local 1, 4 draft rows (L = prefix + j + 1), Q bf16. The native packed index step
// for the same 4 heads on one GPU (no CP) is timed for reference. Median of N CUDA-graph
// replays (CUDA events) after warm-up, inputs of >= 256 MB (L2 is 60 MB) so K comes from
// HBM; the candidates and merge kernels are also timed launched without a graph.
// Usage: bench_gpu_cp [--reps N] [--out table.md]
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gpu/cp_launch.hpp"
#include "gpu/indexer_launch.hpp"

#include "cuda_check.hpp"

namespace {

struct Shape {
  const char* name;
  int requests;
  std::int64_t prefix;
  int k_code;  // 0 bf16, 1 e4m3fn
};

std::uint64_t lcg(std::uint64_t& s) {
  s = s * 6364136223846793005ull + 1442695040888963407ull;
  return s >> 17;
}

// Median of `reps` timed runs of body() (its launches on stream s) after warm-up. graph:
// body() captured once into a CUDA graph and the graph replayed (how a server runs a decode
// step, and how bench_gpu_index_step times); else body()'s launches are issued each run,
// so the host's per-launch latency is in the time of a short kernel.
template <class F>
double median_us(int reps, cudaStream_t s, bool graph, F&& body) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (int i = 0; i < 3; ++i) body();  // warm-up: first-call kernel attributes outside the capture
  CK(cudaStreamSynchronize(s));
  cudaGraphExec_t ex = nullptr;
  if (graph) {
    cudaGraph_t g;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    body();
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&ex, g, 0));
    CK(cudaGraphDestroy(g));
    for (int i = 0; i < 3; ++i) CK(cudaGraphLaunch(ex, s));
  }
  std::vector<float> t;
  for (int i = 0; i < reps; ++i) {
    CK(cudaEventRecord(a, s));
    if (graph) {
      CK(cudaGraphLaunch(ex, s));
    } else {
      body();
    }
    CK(cudaEventRecord(b, s));
    CK(cudaEventSynchronize(b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  if (ex) cudaGraphExecDestroy(ex);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return 1000.0 * t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 30;
  std::string out_path;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc)
      reps = std::atoi(argv[++i]);
    else if (a == "--out" && i + 1 < argc)
      out_path = argv[++i];
  }
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  const int W = 4, P = 4, D = 128, bs = 128, topk = 16;
  const Shape shapes[] = {{"4 req x 32767..32770 (ROCm PR)", 4, 255 * 128 + 126, 0},
                          {"4 req x 32767..32770 (ROCm PR)", 4, 255 * 128 + 126, 1},
                          {"16 req x 131072", 16, 131072, 0},
                          {"16 req x 131072", 16, 131072, 1},
                          {"32 req x 524288", 32, 524288, 0}};
  std::string table =
      "Device: " + std::string(prop.name) + ", " + std::to_string(prop.multiProcessorCount) +
      " SMs. One rank of WORLD 4 (its shard of blocks for all 4 heads), 4 draft rows per request. "
      "Median of " +
      std::to_string(reps) +
      " CUDA-graph replays (CUDA events); the two launch columns time "
      "the same kernel issued without a graph (host launch latency included, the pre-2026-12-02 method).\n\n"
      "| shape | K | CP packed: score + cand + merge us | CP per-row: score + cand + merge us | speedup | "
      "packed score us | per-row score us | candidates us | merge us | cand + merge in the step us (packed step - "
      "packed score) | candidates us (launched) | merge us (launched) | native packed step, 4 heads, all blocks (no "
      "CP) us |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  for (const Shape& sh : shapes) {
    const std::int64_t R = static_cast<std::int64_t>(sh.requests) * P;
    const std::int64_t len = sh.prefix + P;  // tokens per request
    const std::int64_t width = len + 8;
    const std::int64_t rows = sh.requests + 1;
    const std::int64_t S = sh.requests * len;
    const std::int64_t NB = (width + bs - 1) / bs;
    const int esz = sh.k_code == 0 ? 2 : 1;
    std::uint64_t seed = 12345;
    // Host inputs: request i on table row i + 1, its tokens on a contiguous slot range.
    std::vector<std::int32_t> r2t(static_cast<std::size_t>(rows * width), 0);
    for (int i = 0; i < sh.requests; ++i)
      for (std::int64_t t = 0; t < width; ++t)
        r2t[(i + 1) * width + t] = static_cast<std::int32_t>(t < len ? i * len + t : 0);
    std::vector<std::int64_t> slots(R), lens(R);
    for (std::int64_t r = 0; r < R; ++r) {
      slots[r] = r / P + 1;
      lens[r] = sh.prefix + r % P + 1;
    }
    std::vector<std::uint16_t> q(static_cast<std::size_t>(R * W * D)), qg(q.size());
    // Random bf16 in +-[0.125, 2): sign | exponent 124..127 | mantissa.
    auto rnd_bf16 = [&]() {
      const std::uint64_t x = lcg(seed);
      return static_cast<std::uint16_t>((x & 0x8000) | (0x3E00 + (x >> 20) % 0x200));
    };
    for (auto& v : q) v = rnd_bf16();
    for (int h = 0; h < W; ++h)
      for (std::int64_t r = 0; r < R; ++r) std::memcpy(&qg[(h * R + r) * D], &q[(r * W + h) * D], D * 2);
    std::vector<std::uint8_t> k(static_cast<std::size_t>(S * D * esz));
    if (sh.k_code == 0) {
      for (std::size_t i = 0; i < k.size(); i += 2) {
        const std::uint16_t v = rnd_bf16();
        std::memcpy(&k[i], &v, 2);
      }
    } else {
      for (auto& c : k) {
        c = static_cast<std::uint8_t>(lcg(seed) >> 24);
        if ((c & 0x7F) == 0x7F) c &= 0xFE;  // no NaN code
      }
    }
    auto up = [&](const void* h, std::size_t n) {
      void* d = nullptr;
      CK(cudaMalloc(&d, n));
      CK(cudaMemcpy(d, h, n, cudaMemcpyHostToDevice));
      return d;
    };
    auto* d_q = static_cast<std::uint16_t*>(up(q.data(), q.size() * 2));
    auto* d_qg = static_cast<std::uint16_t*>(up(qg.data(), qg.size() * 2));
    void* d_k = up(k.data(), k.size());
    auto* d_r2t = static_cast<std::int32_t*>(up(r2t.data(), r2t.size() * 4));
    auto* d_slots = static_cast<std::int64_t*>(up(slots.data(), slots.size() * 8));
    auto* d_lens = static_cast<std::int64_t*>(up(lens.data(), lens.size() * 8));

    ixo::gpu::CpArgs a;
    a.qg = d_qg;
    a.k_cache = d_k;
    a.req_to_token = d_r2t;
    a.slot_ids = d_slots;
    a.seq_lens = d_lens;
    a.R = R;
    a.D = D;
    a.S = S;
    a.rows = rows;
    a.width = width;
    a.NB = NB;
    a.world = W;
    a.rank_base = 0;
    a.ranks = 1;
    a.block_size = bs;
    a.topk = topk;
    a.init_blocks = 0;
    a.local_blocks = 1;
    a.k_code = sh.k_code;
    a.sm_q_scale = 1.0f / std::sqrt(static_cast<float>(D));
    const std::int64_t LOCAL = ixo::gpu::cp_local(a);
    void *d_cells = nullptr, *d_keys = nullptr, *d_out = nullptr;
    CK(cudaMalloc(&d_cells, ixo::gpu::cp_cells_bytes(a, LOCAL)));
    CK(cudaMalloc(&d_keys, static_cast<std::size_t>(W) * ixo::gpu::cp_keys_bytes(a)));
    CK(cudaMalloc(&d_out, static_cast<std::size_t>(R) * topk * 4));
    CK(cudaMemset(d_keys, 0, static_cast<std::size_t>(W) * ixo::gpu::cp_keys_bytes(a)));
    a.cells = static_cast<std::uint32_t*>(d_cells);
    a.keys = static_cast<std::uint64_t*>(d_keys);  // rank 0's slice of the gathered buffer
    const auto* gathered = static_cast<const std::uint64_t*>(d_keys);
    auto* out = static_cast<std::int32_t*>(d_out);

    auto run = [&](int pack, int what) {  // what: 0 all, 1 score, 2 candidates, 3 merge
      ixo::gpu::CpArgs b = a;
      b.pack = pack;
      if (what == 0 || what == 1) CL(ixo::gpu::launch_cp_score(b, s));
      if (what == 0 || what == 2) CL(ixo::gpu::launch_cp_candidates(b, s));
      if (what == 0 || what == 3) CL(ixo::gpu::launch_cp_merge(b, gathered, 0, 1, out, s));
    };
    const double packed = median_us(reps, s, true, [&] { run(P, 0); });
    const double rowsx = median_us(reps, s, true, [&] { run(1, 0); });
    const double sp = median_us(reps, s, true, [&] { run(P, 1); });
    const double sr = median_us(reps, s, true, [&] { run(1, 1); });
    const double cand = median_us(reps, s, true, [&] { run(P, 2); });
    const double mrg = median_us(reps, s, true, [&] { run(P, 3); });
    const double cand_launch = median_us(reps, s, false, [&] { run(P, 2); });
    const double mrg_launch = median_us(reps, s, false, [&] { run(P, 3); });

    // Native packed index step for the same 4 heads over all blocks (one GPU, no CP).
    ixo::gpu::IndexArgs n;
    n.q = d_q;
    n.k_cache = d_k;
    n.req_to_token = d_r2t;
    n.slot_ids = d_slots;
    n.seq_lens = d_lens;
    void *d_scores = nullptr, *d_topk = nullptr;
    CK(cudaMalloc(&d_scores, ixo::gpu::score_workspace_bytes(R, W, NB)));
    CK(cudaMalloc(&d_topk, static_cast<std::size_t>(R) * W * topk * 4));
    n.scores = static_cast<float*>(d_scores);
    n.topk_idx = static_cast<std::int32_t*>(d_topk);
    n.R = R;
    n.Hq = W;
    n.Hk = 1;
    n.D = D;
    n.S = S;
    n.rows = rows;
    n.width = width;
    n.NB = NB;
    n.block_size = bs;
    n.topk = topk;
    n.init_blocks = 0;
    n.local_blocks = 1;
    n.k_code = sh.k_code;
    n.packed_queries = P;
    n.sm_q_scale = a.sm_q_scale;
    const double native = median_us(reps, s, true, [&] { CL(ixo::gpu::launch_index_step(n, true, s)); });

    char line[512];
    std::snprintf(line, sizeof line,
                  "| %s | %s | %.1f | %.1f | %.2fx | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |\n",
                  sh.name, sh.k_code == 0 ? "bf16" : "e4m3fn", packed, rowsx, rowsx / packed, sp, sr, cand, mrg,
                  packed - sp, cand_launch, mrg_launch, native);
    table += line;
    std::printf("%s", line);
    std::fflush(stdout);
    for (void* p : {static_cast<void*>(d_q), static_cast<void*>(d_qg), d_k, static_cast<void*>(d_r2t),
                    static_cast<void*>(d_slots), static_cast<void*>(d_lens), d_cells, d_keys, d_out, d_scores, d_topk})
      cudaFree(p);
  }
  if (!out_path.empty()) {
    FILE* f = std::fopen(out_path.c_str(), "w");
    if (f) {
      std::fputs(table.c_str(), f);
      std::fclose(f);
    }
  }
  std::printf("\n%s", table.c_str());
  return 0;
}
