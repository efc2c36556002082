// Index step benchmark on the GPU: one index head (Hq = Hk = 1), 4 draft rows, D 128,
// block 128, topk 16, init 0, local 1; 16 x 131072 and 32 x 524288 prefixes; K bf16 and
// e4m3fn (Q bf16). Each step is captured in a CUDA graph; the time is the median of many
// replays, timed with CUDA events, rotating among input sets so L2 is cold. The HBM read
// ceiling (a pure 16-byte-load read kernel) and a device-to-device copy are measured in the
// same run. Usage: bench_gpu_index_step [--reps N] [--out table.md] [--json rows.json] [--quick]
//   [--chunks N] [--gate]
// --chunks N forces the score kernels' KV chunk count (IndexArgs::num_chunks; default: the
// plan's), to measure the wave effects of the grid (CTAs per SM slot, start-up per CTA).
// --json writes the same rows (and % of the floor, per-row and packed) for
// bench/gpu/plot_floor.py, which draws docs/img/floor.png beside SGLang's anchors.
// --gate times every step with the performance gate's protocol instead (graph_replay.cuh: 5
// warm-up + 20 timed replays of a graph of 120 steps rotating among the input sets, CV <= 3 %
// or measured again) and adds the per-row and packed steps as gate cases ("cases": us per
// step, CV) to the JSON, for ci/gpu-perf-gate.py; --reps is then ignored.
// --hot-k (session 38) gives every request the first request's token slots and keeps one input
// set: the K the step reads is one request's (16.8 MB e4m3fn, 33.5 MB bf16 at 16 x 131072), held
// in L2 across replays, so the step runs without the HBM limit: the launch's SM-side time, the
// same grid and the same blocks a CTA as the cold step. The H200's e4m3fn packed step is bound
// by its SMs (docs/experiments row 57); an H100 has the same SMs and clocks, so this measures
// that regime on either card. The 16 x 131072 shapes only; not with --gate.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "gpu/indexer_launch.hpp"

#include "bench_flags.hpp"
#include "cuda_check.hpp"
#include "event_timing.cuh"
#include "graph_replay.cuh"
#include "k_cache_fill.cuh"
#include "read_ceiling.cuh"

namespace gpu = ixo::gpu;
namespace {

struct Shape {
  int requests;
  std::int64_t prefix;
  int fp8;
  bool permuted;
  bool hot = false;  // --hot-k: every request reads request 0's token slots, one input set
};

struct Timing {
  double median_us;
};

// Times `graphs` (one per input set) round-robin; returns the median of `reps` replays.
float time_graphs(const std::vector<cudaGraphExec_t>& graphs, int reps, cudaStream_t st) {
  return ixo_bench::median_event_us(st, 3, reps, [&](int i) { CK(cudaGraphLaunch(graphs[i % graphs.size()], st)); });
}

struct Row {
  std::string shape, kdt;
  double rows_us, packed_us, packed_score_us, topk_us, unique_bytes, rows_bytes;
  std::string gate_name;                            // e.g. index_step/16x131072/bf16
  ixo_bench::ReplayStats rows_stats, packed_stats;  // --gate only
};

// gate: nullptr, or the gate's protocol (then `reps` is not used).
Row run_shape(const Shape& sh, int reps, int chunks, const ixo_bench::ReplayProtocol* gate, cudaStream_t st) {
  const int ndt = 4;
  const std::int64_t R = static_cast<std::int64_t>(sh.requests) * ndt, D = 128;
  const std::int64_t width = sh.prefix + ndt;
  const std::int64_t S = (sh.hot ? 1 : sh.requests) * width + 1;  // token slot 0 unused
  const int esz = sh.fp8 ? 1 : 2;
  const std::size_t kbytes = static_cast<std::size_t>(S) * D * esz;
  const int sets = sh.hot ? 1 : static_cast<int>(std::max<std::size_t>(2, (std::size_t(1) << 30) / kbytes + 1));

  // Host tables: request i uses table row (requests-1-i) (not the row index); token slots
  // contiguous per request, or a random permutation of the cache; hot: every row request 0's slots.
  std::vector<std::int32_t> r2t(static_cast<std::size_t>(sh.requests) * width);
  std::vector<std::int32_t> perm(static_cast<std::size_t>(S - 1));
  std::iota(perm.begin(), perm.end(), 1);
  if (sh.permuted) std::shuffle(perm.begin(), perm.end(), std::mt19937_64(7));
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(r2t.size()); ++i) r2t[i] = perm[sh.hot ? i % width : i];
  std::vector<std::int64_t> slots(R), lens(R);
  for (std::int64_t r = 0; r < R; ++r) {
    slots[r] = sh.requests - 1 - r / ndt;
    lens[r] = sh.prefix + (r % ndt) + 1;
  }
  const std::vector<std::uint16_t> q = ixo_bench::random_bf16_bits(static_cast<std::size_t>(R * D), 11);

  gpu::IndexArgs base;
  base.R = R;
  base.Hq = 1;
  base.Hk = 1;
  base.D = D;
  base.S = S;
  base.rows = sh.requests;
  base.width = width;
  base.NB = (width + 127) / 128;
  base.block_size = 128;
  base.topk = 16;
  base.init_blocks = 0;
  base.local_blocks = 1;
  base.k_code = sh.fp8 ? 1 : 0;
  base.packed_queries = ndt;
  base.num_chunks = chunks;  // 0: the plan's
  base.sm_q_scale = 1.0f / std::sqrt(128.0f);
  base.k_scale = 1.0f;

  std::vector<void*> allocs;
  auto dmalloc = [&](std::size_t n) {
    void* p;
    CK(cudaMalloc(&p, n));
    allocs.push_back(p);
    return p;
  };
  std::vector<gpu::IndexArgs> args(sets, base);
  for (int s = 0; s < sets; ++s) {
    auto& a = args[s];
    auto* k = static_cast<std::uint8_t*>(dmalloc(kbytes));
    ixo_bench::init_k<<<4096, 256, 0, st>>>(k, static_cast<std::size_t>(S) * D, sh.fp8, 1234 + s);
    CK(cudaGetLastError());
    a.k_cache = k;
    auto* dq = static_cast<std::uint16_t*>(dmalloc(q.size() * 2));
    CK(cudaMemcpy(dq, q.data(), q.size() * 2, cudaMemcpyHostToDevice));
    a.q = dq;
    auto* dr = static_cast<std::int32_t*>(dmalloc(r2t.size() * 4));
    CK(cudaMemcpy(dr, r2t.data(), r2t.size() * 4, cudaMemcpyHostToDevice));
    a.req_to_token = dr;
    auto* ds = static_cast<std::int64_t*>(dmalloc(R * 8));
    CK(cudaMemcpy(ds, slots.data(), R * 8, cudaMemcpyHostToDevice));
    a.slot_ids = ds;
    auto* dl = static_cast<std::int64_t*>(dmalloc(R * 8));
    CK(cudaMemcpy(dl, lens.data(), R * 8, cudaMemcpyHostToDevice));
    a.seq_lens = dl;
    a.scores = static_cast<float*>(dmalloc(gpu::score_workspace_bytes(R, 1, a.NB)));
    a.topk_idx = static_cast<std::int32_t*>(dmalloc(R * 16 * 4));
  }
  CK(cudaDeviceSynchronize());

  // Eager warm-up of every launch before any capture (one-time function attributes).
  CL(gpu::launch_index_step(args[0], false, st));
  CL(gpu::launch_index_step(args[0], true, st));
  CK(cudaStreamSynchronize(st));
  auto enqueue = [&](int which,
                     const gpu::IndexArgs& a) {  // 0 rows step, 1 packed step, 2 packed score only, 3 topk only
    if (which == 0) CL(gpu::launch_index_step(a, false, st));
    if (which == 1) CL(gpu::launch_index_step(a, true, st));
    if (which == 2) CL(gpu::launch_score_packed(a, st));
    if (which == 3) CL(gpu::launch_topk(a, st));
  };
  auto capture = [&](int which) {  // one graph per input set
    std::vector<cudaGraphExec_t> ex;
    for (int s = 0; s < sets; ++s) {
      cudaGraph_t g;
      cudaGraphExec_t e;
      CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
      enqueue(which, args[s]);
      CK(cudaStreamEndCapture(st, &g));
      CK(cudaGraphInstantiate(&e, g, 0));
      cudaGraphDestroy(g);
      ex.push_back(e);
    }
    return ex;
  };
  Row row;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%d req x %lld%s", sh.requests, static_cast<long long>(sh.prefix),
                sh.permuted ? ", permuted token slots" : "");
  row.shape = buf;
  row.kdt = sh.fp8 ? "e4m3fn" : "bf16";
  std::snprintf(buf, sizeof buf, "index_step/%dx%lld%s/%s", sh.requests, static_cast<long long>(sh.prefix),
                sh.permuted ? "-permuted" : "", row.kdt.c_str());
  row.gate_name = buf;
  double* outs[4] = {&row.rows_us, &row.packed_us, &row.packed_score_us, &row.topk_us};
  for (int w = 0; w < 4; ++w) {
    if (gate) {  // one graph of calls_per_replay launches, call c on input set c % sets
      const cudaGraphExec_t g = ixo_bench::capture_graph(st, [&] {
        for (int c = 0; c < gate->calls_per_replay; ++c) enqueue(w, args[c % sets]);
      });
      const ixo_bench::ReplayStats stats = ixo_bench::time_replays({g}, *gate, st);
      *outs[w] = stats.us_per_call;
      if (w == 0) row.rows_stats = stats;
      if (w == 1) row.packed_stats = stats;
      cudaGraphExecDestroy(g);
      continue;
    }
    auto ex = capture(w);
    *outs[w] = time_graphs(ex, reps, st);
    for (auto e : ex) cudaGraphExecDestroy(e);
  }
  // Sanity: packed and per-row ids agree on set 0 (the benchmark data is random).
  {
    std::vector<std::int32_t> a(R * 16), b(R * 16);
    CL(gpu::launch_index_step(args[0], false, st));
    CK(cudaStreamSynchronize(st));
    CK(cudaMemcpy(a.data(), args[0].topk_idx, a.size() * 4, cudaMemcpyDeviceToHost));
    CL(gpu::launch_index_step(args[0], true, st));
    CK(cudaStreamSynchronize(st));
    CK(cudaMemcpy(b.data(), args[0].topk_idx, b.size() * 4, cudaMemcpyDeviceToHost));
    if (a != b)
      std::fprintf(stderr, "WARNING: packed ids != per-row ids on %s %s\n", row.shape.c_str(), row.kdt.c_str());
  }
  row.unique_bytes = static_cast<double>(sh.requests) * (sh.prefix + ndt) * D * esz;
  double rb = 0;
  for (std::int64_t r = 0; r < R; ++r) rb += static_cast<double>(lens[r]) * D * esz;
  row.rows_bytes = rb;
  for (void* p : allocs) cudaFree(p);
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 50;
  bool quick = false;
  int chunks = 0;
  bool gate = false;
  bool hot_k = false;
  std::string out, json_path;
  CLI::App app{"bench_gpu_index_step: the index step (score + top-k) per-row and packed on the throughput shapes"};
  app.add_option("--reps", reps, "timed graph replays per step (median)")->check(CLI::Range(1, 1000000));
  app.add_option("--out", out, "write the markdown table here");
  app.add_option("--json", json_path, "write the rows as JSON here");
  app.add_flag("--quick", quick, "the 16 x 131072 shapes only");
  app.add_option("--chunks", chunks, "force the score kernels' KV chunk count (0: the plan's)")
      ->check(CLI::Range(0, 65536));
  app.add_flag("--gate", gate, "the performance gate's protocol (5 warm-up + 20 timed replays, CV <= 3 %)");
  app.add_flag("--hot-k", hot_k,
               "every request reads the first request's K (L2-resident, one input set): the SM-side time; "
               "the 16 x 131072 shapes");
  if (const int rc = ixo_bench::parse_flags(app, argc, argv); rc >= 0) return rc;
  if (gate && hot_k) {
    std::fprintf(stderr, "bench_gpu_index_step: --hot-k: not with --gate (the gate times cold K)\n");
    return 2;
  }
  const ixo_bench::ReplayProtocol gate_protocol = ixo_bench::gate_protocol();
  cudaDeviceProp prop;
  cudaStream_t st;
  if (!ixo_bench::open_device(prop, st)) return 0;

  // Ceilings: pure read of 4 GiB (16-byte loads) and a 2 GiB device copy (read + write).
  const ixo_bench::BandwidthCeilings ceilings = ixo_bench::measure_ceilings(prop, st);
  const double read_gbs = ceilings.read_gbs, copy_gbs = ceilings.copy_gbs;

  std::vector<Shape> shapes = {{16, 131072, 0, false},
                               {16, 131072, 1, false},
                               {32, 524288, 0, false},
                               {32, 524288, 1, false},
                               {16, 131072, 0, true}};
  if (quick || hot_k) shapes = {{16, 131072, 0, false, hot_k}, {16, 131072, 1, false, hot_k}};
  std::vector<Row> rows;
  for (const auto& sh : shapes) {
    rows.push_back(run_shape(sh, reps, chunks, gate ? &gate_protocol : nullptr, st));
    const Row& r = rows.back();
    std::fprintf(stderr, "%s %s: rows %.1f us, packed %.1f us (score %.1f, topk %.1f)\n", r.shape.c_str(),
                 r.kdt.c_str(), r.rows_us, r.packed_us, r.packed_score_us, r.topk_us);
  }

  std::string t;
  char line[1024];
  if (gate) {
    std::snprintf(line, sizeof line,
                  "Device: %s, %d SMs. Ceilings measured in this run: pure read %.0f GB/s, device copy %.0f GB/s "
                  "(read + written). Gate protocol: %d warm-up + %d timed replays (CUDA events) of a graph of %d "
                  "steps rotating among the input sets; us per step = median replay / %d.\n\n",
                  prop.name, prop.multiProcessorCount, read_gbs, copy_gbs, gate_protocol.warmup_replays,
                  gate_protocol.timed_replays, gate_protocol.calls_per_replay, gate_protocol.calls_per_replay);
  } else {
    std::snprintf(line, sizeof line,
                  "Device: %s, %d SMs. Ceilings measured in this run: pure read %.0f GB/s, device copy %.0f GB/s "
                  "(read + written). Median of %d CUDA-graph replays (CUDA events), %s.\n\n",
                  prop.name, prop.multiProcessorCount, read_gbs, copy_gbs, reps,
                  hot_k ? "K hot in L2 (--hot-k: every request reads request 0's K, one input set; the floor and "
                          "bandwidth columns count each request's K as if unique)"
                        : "inputs rotated so L2 is cold");
  }
  t += line;
  if (chunks > 0) t += "Score kernels' KV chunk count forced to " + std::to_string(chunks) + " (--chunks).\n\n";
  t += "| shape | K | per-row step us | packed step us | speedup | packed score alone us | top-k alone us | "
       "unique K MB | per-row K MB read | floor us (unique K / read BW) | packed K GB/s | packed % of read BW |\n";
  t += "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  // The packed step's floor: the unique K bytes at the read ceiling measured above.
  auto floor_us_of = [&](const Row& r) { return r.unique_bytes / (read_gbs * 1e9) * 1e6; };
  for (const Row& r : rows) {
    const double floor_us = floor_us_of(r);
    const double gbs = r.unique_bytes / (r.packed_us * 1e-6) / 1e9;
    std::snprintf(line, sizeof line,
                  "| %s | %s | %.1f | %.1f | %.2fx | %.1f | %.1f | %.0f | %.0f | %.1f | %.0f | %.0f %% |\n",
                  r.shape.c_str(), r.kdt.c_str(), r.rows_us, r.packed_us, r.rows_us / r.packed_us, r.packed_score_us,
                  r.topk_us, r.unique_bytes / 1e6, r.rows_bytes / 1e6, floor_us, gbs, 100.0 * gbs / read_gbs);
    t += line;
  }
  std::printf("%s", t.c_str());
  if (!json_path.empty()) {
    nlohmann::json j;
    j["benchmark"] = "bench_gpu_index_step";
    ixo_bench::add_device_fields(j, prop);
    j["read_gbs"] = read_gbs;
    j["copy_gbs"] = copy_gbs;
    j["reps"] = gate ? gate_protocol.timed_replays : reps;
    j["forced_chunks"] = chunks;  // 0: the plan's
    j["hot_k"] = hot_k;           // every request read request 0's K (L2-resident)
    j["rows"] = nlohmann::json::array();
    for (const Row& r : rows) {
      const double floor_us = floor_us_of(r);
      j["rows"].push_back({{"shape", r.shape},
                           {"k", r.kdt},
                           {"per_row_us", r.rows_us},
                           {"packed_us", r.packed_us},
                           {"packed_score_us", r.packed_score_us},
                           {"topk_us", r.topk_us},
                           {"unique_mb", r.unique_bytes / 1e6},
                           {"per_row_read_mb", r.rows_bytes / 1e6},
                           {"floor_us", floor_us},
                           {"packed_pct_of_floor", 100.0 * floor_us / r.packed_us},
                           {"per_row_pct_of_floor", 100.0 * floor_us / r.rows_us}});
    }
    if (gate) {  // the gate's cases: the two steps (score alone and top-k alone stay in "rows")
      j["protocol"] = ixo_bench::protocol_json(gate_protocol);
      j["cases"] = nlohmann::json::array();
      for (const Row& r : rows) {
        j["cases"].push_back(ixo_bench::case_json(r.gate_name + "/per_row", r.rows_stats));
        j["cases"].push_back(ixo_bench::case_json(r.gate_name + "/packed", r.packed_stats));
      }
    }
    std::ofstream(json_path) << j.dump(2) << "\n";
  }
  if (!out.empty()) {
    FILE* f = std::fopen(out.c_str(), "w");
    if (f) {
      std::fputs(t.c_str(), f);
      std::fclose(f);
    }
  }
  cudaStreamDestroy(st);
  return 0;
}
