// The oracle's speed: 16 requests x 4 draft rows x 131072-token prefixes, one index head,
// D 128, bf16 and e4m3fn K. Reports K bytes scored per second, per row (each draft row's
// K counted: the issue-12 metric) and unique (each request's K once), from the median
// wall time: the fast oracle on the generated case (oracle: K on the heap in 4 KiB pages),
// the same case saved and loaded back (loaded: load_case's heap K, huge pages advised;
// mapped: K mapped from k_cache.npy, as `ixo ref` loads it), the naive loop version,
// a plain sequential read of the unique K bytes, and the CLI's whole path (cli: `ixo ref CASE
// --out DIR` as a child process on the saved case: start, load, validate, score, write),
// all measured in this run.
// Run: ./build/bench/bench_oracle --benchmark_repetitions=5 (IXO_BENCH_PREFIX=N shrinks
// the prefix for a quick look; the cases are written under TMPDIR or /tmp).
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <numeric>

#include <filesystem>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ixo/case_io.hpp"
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

// The generated case saved to disk and loaded back: K read into the heap (load_case's
// default, huge pages advised) or mapped from k_cache.npy (what `ixo ref` does).
const ixo::Case& loaded_case(ixo::KDtype t, bool mapped) {
  static std::map<std::pair<ixo::KDtype, bool>, ixo::Case> cache;
  auto it = cache.find({t, mapped});
  if (it == cache.end()) {
    const char* tmp = std::getenv("TMPDIR");
    const auto dir = std::filesystem::path(tmp ? tmp : "/tmp") / fmt::format("ixo-bench-oracle-{}", ixo::to_string(t));
    ixo::save_case(bench_case(t), dir.string());
    it =
        cache.emplace(std::pair{t, mapped}, mapped ? ixo::load_case_mapped(dir.string()) : ixo::load_case(dir.string()))
            .first;
    std::filesystem::remove_all(dir);  // a mapping keeps the data
  }
  return it->second;
}

// The saved bf16 / e4m3fn case directory that `ixo ref` reads (written once, removed at exit).
struct SavedCase {
  std::filesystem::path dir;
  explicit SavedCase(ixo::KDtype t) {
    const char* tmp = std::getenv("TMPDIR");
    dir = std::filesystem::path(tmp ? tmp : "/tmp") / fmt::format("ixo-bench-cli-{}-{}", ixo::to_string(t), getpid());
    ixo::save_case(bench_case(t), (dir / "case").string());
  }
  ~SavedCase() { std::filesystem::remove_all(dir); }
};

const SavedCase& saved_case(ixo::KDtype t) {
  static std::map<ixo::KDtype, std::unique_ptr<SavedCase>> cache;
  auto& p = cache[t];
  if (!p) p = std::make_unique<SavedCase>(t);
  return *p;
}

extern "C" char** environ;

// Runs `ixo ref CASE --out DIR` (stdout to /dev/null) and returns its exit status.
int run_ixo_ref(const SavedCase& s) {
  const std::string casedir = (s.dir / "case").string(), out = (s.dir / "out").string();
  std::vector<std::string> args = {IXO_BINARY, "ref", casedir, "--out", out};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  int status = -1;
  if (posix_spawn(&pid, IXO_BINARY, &fa, nullptr, argv.data(), environ) == 0) waitpid(pid, &status, 0);
  posix_spawn_file_actions_destroy(&fa);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

// K bytes each row reads (its own visible tokens), summed over rows.
double row_k_bytes(const ixo::Case& c) {
  double tokens = 0;
  for (std::int64_t r = 0; r < c.R; ++r) tokens += static_cast<double>(c.seq_lens[r]);
  return tokens * static_cast<double>(c.Hk * c.D * ixo::element_bytes(c.cfg.k_dtype));
}

// Unique K bytes the batch reads: each request's tokens once.
double k_bytes(const ixo::Case& c) {
  double tokens = 0;
  for (std::int64_t r = 0; r < c.R; r += c.cfg.packed_queries)
    tokens += static_cast<double>(c.seq_lens[r + c.cfg.packed_queries - 1]);
  return tokens * static_cast<double>(c.Hk * c.D * ixo::element_bytes(c.cfg.k_dtype));
}

std::map<std::string, std::vector<double>> g_runs;  // wall seconds of every run, all repetitions
std::map<std::string, double> g_seconds;            // their medians (main)

template <class F>
void timed(benchmark::State& state, const std::string& key, F&& f) {
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    g_runs[key].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
}

void BM_Oracle(benchmark::State& state, ixo::KDtype t) {
  const auto& c = bench_case(t);
  timed(state, fmt::format("oracle/{}", ixo::to_string(t)), [&] { benchmark::DoNotOptimize(ixo::oracle(c)); });
  state.SetBytesProcessed(static_cast<std::int64_t>(k_bytes(c) * static_cast<double>(state.iterations())));
}

void BM_OracleLoaded(benchmark::State& state, ixo::KDtype t) {
  const auto& c = loaded_case(t, false);
  timed(state, fmt::format("loaded/{}", ixo::to_string(t)), [&] { benchmark::DoNotOptimize(ixo::oracle(c)); });
  state.SetBytesProcessed(static_cast<std::int64_t>(k_bytes(c) * static_cast<double>(state.iterations())));
}

void BM_OracleMapped(benchmark::State& state, ixo::KDtype t) {
  const auto& c = loaded_case(t, true);
  timed(state, fmt::format("mapped/{}", ixo::to_string(t)), [&] { benchmark::DoNotOptimize(ixo::oracle(c)); });
  state.SetBytesProcessed(static_cast<std::int64_t>(k_bytes(c) * static_cast<double>(state.iterations())));
}

// The CLI's whole path: process start, load_case_mapped, validate, oracle, writing the
// two .npy files. One untimed run first (page cache, output files present).
void BM_CliRef(benchmark::State& state, ixo::KDtype t) {
  const auto& s = saved_case(t);
  std::filesystem::create_directories(s.dir / "out");
  if (run_ixo_ref(s) != 0) {
    state.SkipWithError("ixo ref failed");
    return;
  }
  int rc = 0;
  timed(state, fmt::format("cli/{}", ixo::to_string(t)), [&] { rc |= run_ixo_ref(s); });
  if (rc != 0) state.SkipWithError("ixo ref failed");
  state.SetBytesProcessed(static_cast<std::int64_t>(k_bytes(bench_case(t)) * static_cast<double>(state.iterations())));
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
  state.SetBytesProcessed(
      static_cast<std::int64_t>(static_cast<double>(n * 8) * static_cast<double>(state.iterations())));
}

}  // namespace

BENCHMARK_CAPTURE(BM_SequentialRead, bf16, ixo::KDtype::bf16)->Iterations(9)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Oracle, bf16, ixo::KDtype::bf16)->Iterations(3)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_OracleLoaded, bf16, ixo::KDtype::bf16)->Iterations(3)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_OracleMapped, bf16, ixo::KDtype::bf16)->Iterations(3)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_CliRef, bf16, ixo::KDtype::bf16)->Iterations(5)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Naive, bf16, ixo::KDtype::bf16)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SequentialRead, e4m3fn, ixo::KDtype::e4m3fn)->Iterations(9)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Oracle, e4m3fn, ixo::KDtype::e4m3fn)->Iterations(3)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_OracleLoaded, e4m3fn, ixo::KDtype::e4m3fn)->Iterations(3)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_OracleMapped, e4m3fn, ixo::KDtype::e4m3fn)->Iterations(3)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_CliRef, e4m3fn, ixo::KDtype::e4m3fn)->Iterations(5)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Naive, e4m3fn, ixo::KDtype::e4m3fn)->Iterations(1)->Unit(benchmark::kMillisecond);

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  for (auto& [key, t] : g_runs) {
    std::sort(t.begin(), t.end());
    g_seconds[key] = t[t.size() / 2];
  }
  fmt::print(
      "\n{} threads; prefix {} tokens; GB/s from the median of each benchmark's runs (Google Benchmark's own\n"
      "bytes_per_second above divides by the main thread's CPU time: ignore it)\n",
      omp_get_max_threads(), prefix());
  fmt::print("{:<8} {:<16} {:>10} {:>14} {:>14} {:>12}\n", "K dtype", "run", "median ms", "per-row GB/s", "unique GB/s",
             "vs read");
  for (const char* t : {"bf16", "e4m3fn"}) {
    const std::string k = t;
    if (!g_seconds.count("oracle/" + k) && !g_seconds.count("mapped/" + k) && !g_seconds.count("cli/" + k)) continue;
    const auto& c = bench_case(k == "bf16" ? ixo::KDtype::bf16 : ixo::KDtype::e4m3fn);
    const double unique = k_bytes(c), rows = row_k_bytes(c);
    const double read = g_seconds.count("read/" + k) ? g_seconds["read/" + k] : 0;
    for (const char* run : {"oracle", "loaded", "mapped", "cli", "naive", "read"}) {
      const auto it = g_seconds.find(std::string(run) + "/" + k);
      if (it == g_seconds.end()) continue;
      const double s = it->second;
      fmt::print("{:<8} {:<16} {:>10.1f} {:>14.3f} {:>14.3f} {:>11.3f}x\n", k, run, s * 1e3,
                 std::string(run) == "read" ? 0.0 : rows / s / 1e9, unique / s / 1e9, read > 0 ? read / s : 0.0);
    }
  }
  benchmark::Shutdown();
  return 0;
}
