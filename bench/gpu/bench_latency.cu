// Latency suite of the index step on the GPU (issue 27 item 3), beside the throughput
// benchmark bench_index_step.cu: batches of 1 / 2 / 4 requests x contexts of 1K / 4K / 8K /
// 32K tokens x index heads H 1 / 4 (Hq = Hk = H) x K bf16 / e4m3fn (Q bf16); 8 query rows a
// request (packed_queries 8), D 128, block 128, topk 16, init 0, local 1 (bench_index_step's
// config). Variable lengths: request i's last row ends at L_i, uniform in [3/4, 5/4] x context
// (mt19937_64 seeded with 27 + context: the same L_i for every batch size's first requests,
// every H and K type); its rows end at L_i - 7 .. L_i. For each case the per-row and the packed index step
// (score + top-k, gpu::launch_index_step) are each captured in CUDA graphs of 120 steps; a step's time is the
// median replay (CUDA events) / 120. The steps rotate among copies of the K cache (4 x L2 in
// all, each copy reused only after all the others) so every step reads K from HBM, as a
// decode step does after the other layers ran. Effective bandwidth = unique K bytes (each
// request's K up to its longest row that scores, all heads) / time, and its % of the pure
// read ceiling measured in the same run (read_ceiling.cuh). Contexts up to topk x block
// (2048 tokens) score nothing: every row has nb <= topk and top-k alone returns all blocks.
// Usage: bench_gpu_latency [--reps N] [--calls N] [--out table.md] [--json cases.json] [--quick]
//   [--gate]
// --reps: timed replays (default 50, after 5 warm-ups); --calls: steps per graph (120).
// --gate: the performance gate's protocol exactly (graph_replay.cuh: 5 + 20 replays of 120
// steps, CV <= 3 % or measured again) for ci/gpu-perf-gate.py; --reps and --calls are ignored.
// --quick: batches 1 and 4 x contexts 1K and 32K, H 1, bf16 (a smoke run; not for the gate).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "gpu/indexer_launch.hpp"

#include "bench_flags.hpp"
#include "cuda_check.hpp"
#include "graph_replay.cuh"
#include "k_cache_fill.cuh"
#include "read_ceiling.cuh"

namespace gpu = ixo::gpu;
namespace {

constexpr int kRowsPerRequest = 8;
constexpr std::int64_t kHeadDim = 128;
constexpr int kBlockSize = 128;
constexpr int kTopk = 16;
constexpr std::uint64_t kLengthSeed = 27;  // + context: the requests' lengths (issue 27)
constexpr int kColdL2Multiple = 4;         // K copies in rotation: at least this many x L2

struct LatencyCase {
  int requests;
  std::int64_t context;  // nominal tokens a request
  int heads;             // Hq = Hk
  int fp8;               // K e4m3fn (else bf16)
};

std::string kdt_name(const LatencyCase& c) { return c.fp8 ? "e4m3fn" : "bf16"; }
std::string context_name(std::int64_t context) { return std::to_string(context / 1024) + "K"; }
// The gate's case name, e.g. latency/b4/ctx32K/H4/bf16/packed.
std::string gate_case_name(const LatencyCase& c, const char* path) {
  return "latency/b" + std::to_string(c.requests) + "/ctx" + context_name(c.context) + "/H" + std::to_string(c.heads) +
         "/" + kdt_name(c) + "/" + path;
}

// The batch's rows: request i (table row requests - 1 - i) ends at last_len[i].
struct BatchRows {
  std::vector<std::int64_t> last_len;     // [requests]
  std::vector<std::int64_t> slots, lens;  // [R]
  std::int64_t width = 0;                 // table width = the longest request
};

BatchRows batch_rows(const LatencyCase& c) {
  BatchRows b;
  std::mt19937_64 rng(kLengthSeed + static_cast<std::uint64_t>(c.context));  // raw draws: any standard library
  const std::int64_t lo = c.context * 3 / 4, hi = c.context * 5 / 4;
  for (int i = 0; i < c.requests; ++i) {
    b.last_len.push_back(lo + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(hi - lo + 1)));
    b.width = std::max(b.width, b.last_len.back());
    for (int j = 0; j < kRowsPerRequest; ++j) {
      b.slots.push_back(c.requests - 1 - i);
      b.lens.push_back(b.last_len.back() - (kRowsPerRequest - 1) + j);
    }
  }
  return b;
}

bool row_scores(std::int64_t len) { return (len + kBlockSize - 1) / kBlockSize > kTopk; }

// K copies in rotation and their graphs: at least kColdL2Multiple x L2 bytes of K and 2 copies;
// a divisor of calls (one graph, call c on copy c % copies) or a multiple of it (copies / calls
// graphs, each copy once a round), so every copy is reused only after all the others.
struct Rotation {
  int copies, graphs;
};
Rotation cold_rotation(std::size_t copy_bytes, std::size_t l2_bytes, int calls) {
  const std::size_t cold = kColdL2Multiple * std::max<std::size_t>(l2_bytes, 1);
  const int needed = static_cast<int>(std::max<std::size_t>(2, (cold + copy_bytes - 1) / copy_bytes));
  if (needed > calls) {
    const int graphs = (needed + calls - 1) / calls;
    return {graphs * calls, graphs};
  }
  int copies = needed;
  while (calls % copies != 0) ++copies;
  return {copies, 1};
}

struct LatencyResult {
  LatencyCase c;
  std::int64_t min_len, max_len;
  double unique_bytes, per_row_bytes;  // K the packed step must read once; K the rows read
  int copies;
  bool ids_agree;
  ixo_bench::ReplayStats per_row, packed;
};

LatencyResult run_case(const LatencyCase& c, const ixo_bench::ReplayProtocol& protocol, std::size_t l2_bytes,
                       cudaStream_t st) {
  const BatchRows b = batch_rows(c);
  const std::int64_t R = static_cast<std::int64_t>(c.requests) * kRowsPerRequest, H = c.heads, D = kHeadDim;
  const std::int64_t S = c.requests * b.width + 1;  // token slot 0 unused
  const int esz = c.fp8 ? 1 : 2;
  const std::size_t token_bytes = static_cast<std::size_t>(H * D * esz);
  const std::size_t copy_bytes = (static_cast<std::size_t>(S) * token_bytes + 4095) / 4096 * 4096;
  const Rotation rot = cold_rotation(copy_bytes, l2_bytes, protocol.calls_per_replay);

  // Token slots contiguous per request, table row r holding slots r * width + 1 ...
  std::vector<std::int32_t> r2t(static_cast<std::size_t>(c.requests) * b.width);
  for (std::size_t i = 0; i < r2t.size(); ++i) r2t[i] = static_cast<std::int32_t>(i + 1);
  const std::vector<std::uint16_t> q = ixo_bench::random_bf16_bits(static_cast<std::size_t>(R * H * D), 11);

  gpu::IndexArgs base;
  base.R = R;
  base.Hq = H;
  base.Hk = H;
  base.D = D;
  base.S = S;
  base.rows = c.requests;
  base.width = b.width;
  base.NB = (b.width + kBlockSize - 1) / kBlockSize;
  base.block_size = kBlockSize;
  base.topk = kTopk;
  base.init_blocks = 0;
  base.local_blocks = 1;
  base.k_code = c.fp8 ? 1 : 0;
  base.packed_queries = kRowsPerRequest;
  base.sm_q_scale = 1.0f / std::sqrt(static_cast<float>(D));
  base.k_scale = 1.0f;

  std::vector<void*> allocs;
  auto upload = [&](const void* host, std::size_t bytes) {
    void* p;
    CK(cudaMalloc(&p, bytes));
    allocs.push_back(p);
    if (host) CK(cudaMemcpy(p, host, bytes, cudaMemcpyHostToDevice));
    return p;
  };
  auto* k_copies = static_cast<std::uint8_t*>(upload(nullptr, copy_bytes * rot.copies));
  ixo_bench::init_k<<<4096, 256, 0, st>>>(k_copies, copy_bytes * rot.copies / esz, c.fp8, 1234);
  CK(cudaGetLastError());
  base.q = static_cast<const std::uint16_t*>(upload(q.data(), q.size() * 2));
  base.req_to_token = static_cast<const std::int32_t*>(upload(r2t.data(), r2t.size() * 4));
  base.slot_ids = static_cast<const std::int64_t*>(upload(b.slots.data(), R * 8));
  base.seq_lens = static_cast<const std::int64_t*>(upload(b.lens.data(), R * 8));
  base.scores = static_cast<float*>(upload(nullptr, gpu::score_workspace_bytes(R, H, base.NB)));
  base.topk_idx = static_cast<std::int32_t*>(upload(nullptr, static_cast<std::size_t>(H * R * kTopk) * 4));
  std::vector<gpu::IndexArgs> args(rot.copies, base);
  for (int s = 0; s < rot.copies; ++s) args[s].k_cache = k_copies + copy_bytes * s;
  CK(cudaDeviceSynchronize());

  LatencyResult res{c, *std::min_element(b.lens.begin(), b.lens.end()), b.width, 0, 0, rot.copies, true, {}, {}};
  // Eager steps before any capture (one-time function attributes), and the sanity check:
  // packed and per-row ids agree on copy 0.
  std::vector<std::int32_t> ids_rows(static_cast<std::size_t>(H * R * kTopk)), ids_packed(ids_rows.size());
  CL(gpu::launch_index_step(args[0], false, st));
  CK(cudaMemcpyAsync(ids_rows.data(), base.topk_idx, ids_rows.size() * 4, cudaMemcpyDeviceToHost, st));
  CL(gpu::launch_index_step(args[0], true, st));
  CK(cudaMemcpyAsync(ids_packed.data(), base.topk_idx, ids_packed.size() * 4, cudaMemcpyDeviceToHost, st));
  CK(cudaStreamSynchronize(st));
  res.ids_agree = ids_rows == ids_packed;

  for (int path = 0; path < 2; ++path) {  // 0 per-row step, 1 packed step
    std::vector<cudaGraphExec_t> graphs;
    for (int g = 0; g < rot.graphs; ++g) {
      graphs.push_back(ixo_bench::capture_graph(st, [&] {
        for (int call = 0; call < protocol.calls_per_replay; ++call) {
          CL(gpu::launch_index_step(args[(g * protocol.calls_per_replay + call) % rot.copies], path == 1, st));
        }
      }));
    }
    (path == 0 ? res.per_row : res.packed) = ixo_bench::time_replays(graphs, protocol, st);
    for (auto g : graphs) cudaGraphExecDestroy(g);
  }
  for (int i = 0; i < c.requests; ++i) {
    std::int64_t longest_scoring = 0;
    for (int j = 0; j < kRowsPerRequest; ++j) {
      const std::int64_t len = b.lens[i * kRowsPerRequest + j];
      if (!row_scores(len)) continue;
      longest_scoring = std::max(longest_scoring, len);
      res.per_row_bytes += static_cast<double>(len) * static_cast<double>(token_bytes);
    }
    res.unique_bytes += static_cast<double>(longest_scoring) * static_cast<double>(token_bytes);
  }
  for (void* p : allocs) cudaFree(p);
  return res;
}

std::vector<LatencyCase> suite(bool quick) {
  std::vector<LatencyCase> cases;
  for (int fp8 : {0, 1}) {
    for (int heads : {1, 4}) {
      for (int requests : {1, 2, 4}) {
        for (std::int64_t context : {1024, 4096, 8192, 32768}) {
          const bool in_quick = fp8 == 0 && heads == 1 && requests != 2 && (context == 1024 || context == 32768);
          if (!quick || in_quick) cases.push_back({requests, context, heads, fp8});
        }
      }
    }
  }
  return cases;
}

// "%.1f" of us, or "-" when the step reads no K (bytes 0).
std::string floor_cell(double bytes, double us) {
  if (bytes <= 0) return "-";
  char cell[32];
  std::snprintf(cell, sizeof cell, "%.1f", us);
  return cell;
}

// GB/s and % of the read ceiling of `bytes` in `us`; "-" when the step reads no K.
std::string bandwidth_cell(double bytes, double us, double read_gbs) {
  if (bytes <= 0) return "-";
  char cell[64];
  const double gbs = bytes / (us * 1e-6) / 1e9;
  std::snprintf(cell, sizeof cell, "%.0f (%.0f %%)", gbs, 100.0 * gbs / read_gbs);
  return cell;
}

std::string markdown_table(const std::vector<LatencyResult>& results, const cudaDeviceProp& prop,
                           const ixo_bench::BandwidthCeilings& ceilings, const ixo_bench::ReplayProtocol& p) {
  std::string t;
  char line[1024];
  std::snprintf(
      line, sizeof line,
      "Device: %s, %d SMs. Ceilings measured in this run: pure read %.0f GB/s, device copy %.0f GB/s "
      "(read + written). %s%d warm-up + %d timed replays (CUDA events) of graphs of %d steps, K copies "
      "rotated (>= %d x L2) so every step reads K from HBM; us per step = median replay / %d. 8 rows a "
      "request, D 128, block 128, topk 16; lengths uniform in [3/4, 5/4] x context (seed %d + context). GB/s = "
      "unique K / step time, %% of the pure read ceiling; '-': no row scores (nb <= topk).\n\n",
      prop.name, prop.multiProcessorCount, ceilings.read_gbs, ceilings.copy_gbs, p.gate ? "Gate protocol: " : "",
      p.warmup_replays, p.timed_replays, p.calls_per_replay, kColdL2Multiple, p.calls_per_replay,
      static_cast<int>(kLengthSeed));
  t += line;
  t += "| batch | context (row lengths) | H | K | per-row step us | packed step us | speedup | unique K MB | "
       "floor us | per-row GB/s (% read) | packed GB/s (% read) | CV per-row / packed |\n";
  t += "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const LatencyResult& r : results) {
    const double floor_us = r.unique_bytes / (ceilings.read_gbs * 1e9) * 1e6;
    std::snprintf(
        line, sizeof line,
        "| %d | %s (%lld-%lld) | %d | %s | %.1f | %.1f | %.2fx | %.1f | %s | %s | %s | %.1f / %.1f %%%s%s |\n",
        r.c.requests, context_name(r.c.context).c_str(), static_cast<long long>(r.min_len),
        static_cast<long long>(r.max_len), r.c.heads, kdt_name(r.c).c_str(), r.per_row.us_per_call,
        r.packed.us_per_call, r.per_row.us_per_call / r.packed.us_per_call, r.unique_bytes / 1e6,
        floor_cell(r.unique_bytes, floor_us).c_str(),
        bandwidth_cell(r.unique_bytes, r.per_row.us_per_call, ceilings.read_gbs).c_str(),
        bandwidth_cell(r.unique_bytes, r.packed.us_per_call, ceilings.read_gbs).c_str(), 100 * r.per_row.cv,
        100 * r.packed.cv, r.per_row.noisy || r.packed.noisy ? ", noisy" : "", r.ids_agree ? "" : ", ids differ");
    t += line;
  }
  return t;
}

nlohmann::json results_json(const std::vector<LatencyResult>& results, const cudaDeviceProp& prop,
                            const ixo_bench::BandwidthCeilings& ceilings, const ixo_bench::ReplayProtocol& p) {
  nlohmann::json j;
  j["benchmark"] = "bench_gpu_latency";
  ixo_bench::add_device_fields(j, prop);
  j["read_gbs"] = ceilings.read_gbs;
  j["copy_gbs"] = ceilings.copy_gbs;
  j["protocol"] = ixo_bench::protocol_json(p);
  j["config"] = {{"rows_per_request", kRowsPerRequest},
                 {"D", kHeadDim},
                 {"block_size", kBlockSize},
                 {"topk", kTopk},
                 {"init_blocks", 0},
                 {"local_blocks", 1},
                 {"length_seed", kLengthSeed},
                 {"lengths", "uniform in [3/4, 5/4] x context, seed 27 + context"}};
  j["rows"] = nlohmann::json::array();
  j["cases"] = nlohmann::json::array();
  for (const LatencyResult& r : results) {
    const double floor_us = r.unique_bytes / (ceilings.read_gbs * 1e9) * 1e6;
    auto gbs = [&](double us) {
      return r.unique_bytes > 0 ? nlohmann::json(r.unique_bytes / (us * 1e-6) / 1e9) : nlohmann::json();
    };
    j["rows"].push_back({{"batch", r.c.requests},
                         {"context", r.c.context},
                         {"heads", r.c.heads},
                         {"k", kdt_name(r.c)},
                         {"min_len", r.min_len},
                         {"max_len", r.max_len},
                         {"per_row_us", r.per_row.us_per_call},
                         {"packed_us", r.packed.us_per_call},
                         {"unique_mb", r.unique_bytes / 1e6},
                         {"per_row_read_mb", r.per_row_bytes / 1e6},
                         {"floor_us", r.unique_bytes > 0 ? nlohmann::json(floor_us) : nlohmann::json()},
                         {"per_row_gbs", gbs(r.per_row.us_per_call)},
                         {"packed_gbs", gbs(r.packed.us_per_call)},
                         {"k_copies", r.copies},
                         {"ids_agree", r.ids_agree}});
    j["cases"].push_back(ixo_bench::case_json(gate_case_name(r.c, "per_row"), r.per_row));
    j["cases"].push_back(ixo_bench::case_json(gate_case_name(r.c, "packed"), r.packed));
  }
  return j;
}

}  // namespace

int main(int argc, char** argv) {
  ixo_bench::ReplayProtocol protocol;  // 5 warm-ups, 120 steps a graph, measured once
  protocol.timed_replays = 50;
  bool quick = false, gate = false;
  std::string out, json_path, only;  // only: cases whose gate name starts with it (a profile of one case)
  CLI::App app{"bench_gpu_latency: small-batch index steps (batches 1/2/4 x 1K..32K, 8 rows a request)"};
  app.add_option("--reps", protocol.timed_replays, "timed graph replays per case (median)")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--calls", protocol.calls_per_replay, "steps per graph replay")->check(CLI::Range(1, 1000000));
  app.add_option("--out", out, "write the markdown table here");
  app.add_option("--json", json_path, "write the cases as JSON here");
  app.add_flag("--quick", quick, "a few cases only");
  app.add_flag("--gate", gate, "the performance gate's protocol (5 warm-up + 20 timed replays, CV <= 3 %)");
  app.add_option("--only", only, "cases whose gate name starts with this, e.g. latency/b1/ctx4K/");
  if (const int rc = ixo_bench::parse_flags(app, argc, argv); rc >= 0) return rc;
  if (gate) protocol = ixo_bench::gate_protocol();
  cudaDeviceProp prop;
  cudaStream_t st;
  if (!ixo_bench::open_device(prop, st)) return 0;
  const ixo_bench::BandwidthCeilings ceilings = ixo_bench::measure_ceilings(prop, st);

  std::vector<LatencyResult> results;
  for (const LatencyCase& c : suite(quick)) {
    if (!only.empty() && gate_case_name(c, "").rfind(only, 0) != 0) continue;
    results.push_back(run_case(c, protocol, static_cast<std::size_t>(prop.l2CacheSize), st));
    const LatencyResult& r = results.back();
    std::fprintf(stderr,
                 "b%d ctx %s H%d %s: per-row %.2f us (CV %.1f %%, %d tries), packed %.2f us (CV %.1f %%, %d tries)%s\n",
                 c.requests, context_name(c.context).c_str(), c.heads, kdt_name(c).c_str(), r.per_row.us_per_call,
                 100 * r.per_row.cv, r.per_row.attempts, r.packed.us_per_call, 100 * r.packed.cv, r.packed.attempts,
                 r.ids_agree ? "" : " WARNING: packed ids != per-row ids");
  }
  const std::string table = markdown_table(results, prop, ceilings, protocol);
  std::printf("%s", table.c_str());
  if (!json_path.empty()) std::ofstream(json_path) << results_json(results, prop, ceilings, protocol).dump(2) << "\n";
  if (!out.empty()) std::ofstream(out) << table;
  cudaStreamDestroy(st);
  return 0;
}
