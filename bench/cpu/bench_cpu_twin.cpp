// cpu-rows vs cpu-packed on a verify batch: 4 requests x 4 draft rows, 16384-token
// prefixes, D 128, Hq = Hk = 1, bf16 and e4m3fn K, M3 config (bs 128, top-16, local 1).
// bytes_per_second counts the K bytes the per-row semantics covers (each row's own L
// tokens), so both backends are measured against the same work; "k_loaded_per_iter" is
// the K bytes the plan actually loads per iteration (packed loads each token once per
// group) and "k_rows_per_iter" the per-row bytes behind bytes_per_second.
#include <benchmark/benchmark.h>

#include <map>
#include <memory>

#include "backend.hpp"
#include "cpu/cpu_backends.hpp"
#include "ixo/generate.hpp"

namespace {

const ixo::Case& bench_case(ixo::KDtype t) {
  static std::map<ixo::KDtype, ixo::Case> cache;
  auto it = cache.find(t);
  if (it == cache.end()) {
    ixo::GenSpec s;
    s.requests = 4;
    s.draft_rows = 4;
    s.prefixes = {16384};
    s.Hq = 1;
    s.Hk = 1;
    s.D = 128;
    s.cfg.k_dtype = t;
    it = cache.emplace(t, ixo::generate(s, 42)).first;
  }
  return it->second;
}

void BM_CpuTwin(benchmark::State& state, const char* backend, ixo::KDtype t) {
  const ixo::Case& c = bench_case(t);
  auto b = ixo::make_backend(backend);
  const std::int64_t elem = ixo::element_bytes(t);
  std::int64_t row_bytes = 0;
  for (std::int64_t r = 0; r < c.R; ++r) row_bytes += c.seq_lens[r] * c.Hk * c.D * elem;
  const auto plan = ixo::cpu::plan_for(c, std::string(backend) == "cpu-packed", {});
  const std::int64_t loaded = ixo::cpu::k_tokens_loaded(c, plan) * c.D * elem;
  for (auto _ : state) {
    auto o = b->run(c);
    benchmark::DoNotOptimize(o.topk_idx.data());
  }
  state.SetBytesProcessed(state.iterations() * row_bytes);
  state.counters["k_loaded_per_iter"] = static_cast<double>(loaded);
  state.counters["k_rows_per_iter"] = static_cast<double>(row_bytes);
  state.counters["pack"] = plan.pack;
}

BENCHMARK_CAPTURE(BM_CpuTwin, rows_bf16, "cpu-rows", ixo::KDtype::bf16)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_CpuTwin, packed_bf16, "cpu-packed", ixo::KDtype::bf16)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_CpuTwin, rows_e4m3fn, "cpu-rows", ixo::KDtype::e4m3fn)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_CpuTwin, packed_e4m3fn, "cpu-packed", ixo::KDtype::e4m3fn)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
