// The oracle's speed: 16 requests x 4 draft rows x 131072-token prefixes, one index head,
// D 128, bf16 and e4m3fn K. Reports K bytes scored per second (unique K bytes of the
// batch), the fast oracle vs the naive loop version, and vs a plain sequential read of
// the same K bytes, all measured in this run. Run: ./build/bench/bench_oracle
// (IXO_BENCH_PREFIX=N shrinks the prefix for a quick look.)
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <numeric>

#include "ixo/generate.hpp"
#include "ixo/oracle.hpp"

namespace {

std::int64_t prefix() {
  const char* p = std::getenv("IXO_BENCH_PREFIX");
  return p ? std::atoll(p) : 131072;
}

const ixo::Case& bench_case(ixo::KDtype t) {
  static std::map<ixo::KDtype, ixo::Case> cache;
  auto it = cache.find(t);
  if (it == cache.end()) {
    ixo::GenSpec s = ixo::preset("bench-16x131k");
    s.prefixes = {prefix()};
    s.cfg.k_dtype = t;
    it = cache.emplace(t, ixo::generate(s, 1)).first;
  }
  return it->second;
}

// Unique K bytes the batch reads: each request's tokens once.
double k_bytes(const ixo::Case& c) {
  double tokens = 0;
  for (std::int64_t r = 0; r < c.R; r += c.cfg.packed_queries) tokens += static_cast<double>(c.seq_lens[r + c.cfg.packed_queries - 1]);
  return tokens * static_cast<double>(c.Hk * c.D * ixo::element_bytes(c.cfg.k_dtype));
}

std::map<std::string, double> g_seconds;  // median seconds per benchmark

template <class F>
void timed(benchmark::State& state, const std::string& key, F&& f) {
  std::vector<double> t;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  g_seconds[key] = t[t.size() / 2];
}

void BM_Oracle(benchmark::State& state, ixo::KDtype t) {
  const auto& c = bench_case(t);
  timed(state, fmt::format("oracle/{}", ixo::to_string(t)), [&] { benchmark::DoNotOptimize(ixo::oracle(c)); });
  state.SetBytesProcessed(static_cast<std::int64_t>(k_bytes(c) * static_cast<double>(state.iterations())));
}

void BM_Naive(benchmark::State& state, ixo::KDtype t) {
  const auto& c = bench_case(t);
  timed(state, fmt::format("naive/{}", ixo::to_string(t)), [&] { benchmark::DoNotOptimize(ixo::oracle_naive(c)); });
  state.SetBytesProcessed(static_cast<std::int64_t>(k_bytes(c) * static_cast<double>(state.iterations())));
}

// A plain read of the same number of bytes (all threads, 8 bytes at a time).
void BM_SequentialRead(benchmark::State& state, ixo::KDtype t) {
  const auto& c = bench_case(t);
  const std::size_t n = static_cast<std::size_t>(k_bytes(c)) / 8;
  static std::vector<std::uint64_t> buf;
  buf.assign(n, 0x0101010101010101ull);
  timed(state, fmt::format("read/{}", ixo::to_string(t)), [&] {
    std::uint64_t s = 0;
#pragma omp parallel for reduction(+ : s) schedule(static)
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(n); ++i) s += buf[static_cast<std::size_t>(i)];
    benchmark::DoNotOptimize(s);
  });
  state.SetBytesProcessed(static_cast<std::int64_t>(static_cast<double>(n * 8) * static_cast<double>(state.iterations())));
}

}  // namespace

BENCHMARK_CAPTURE(BM_SequentialRead, bf16, ixo::KDtype::bf16)->Iterations(9)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Oracle, bf16, ixo::KDtype::bf16)->Iterations(3)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Naive, bf16, ixo::KDtype::bf16)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SequentialRead, e4m3fn, ixo::KDtype::e4m3fn)->Iterations(9)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Oracle, e4m3fn, ixo::KDtype::e4m3fn)->Iterations(3)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Naive, e4m3fn, ixo::KDtype::e4m3fn)->Iterations(1)->Unit(benchmark::kMillisecond);

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  fmt::print("\n{} threads; prefix {} tokens; ratios from medians measured in this run\n", omp_get_max_threads(), prefix());
  fmt::print("{:<8} {:>14} {:>14} {:>14} {:>16} {:>16}\n", "K dtype", "oracle GB/s", "naive GB/s", "read GB/s",
             "oracle/naive", "oracle/read");
  for (const char* t : {"bf16", "e4m3fn"}) {
    const std::string k = t;
    if (!g_seconds.count("oracle/" + k)) continue;
    const auto& c = bench_case(k == "bf16" ? ixo::KDtype::bf16 : ixo::KDtype::e4m3fn);
    const double bytes = k_bytes(c);
    const double o = bytes / g_seconds["oracle/" + k] / 1e9;
    const double n = g_seconds.count("naive/" + k) ? bytes / g_seconds["naive/" + k] / 1e9 : 0;
    const double r = g_seconds.count("read/" + k) ? bytes / g_seconds["read/" + k] / 1e9 : 0;
    fmt::print("{:<8} {:>14.3f} {:>14.3f} {:>14.2f} {:>15.1f}x {:>16.3f}\n", k, o, n, r, n > 0 ? o / n : 0.0, r > 0 ? o / r : 0.0);
  }
  benchmark::Shutdown();
  return 0;
}
