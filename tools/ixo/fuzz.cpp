#include "fuzz.hpp"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>

#include "backend.hpp"
#include "ixo/arbitrary.hpp"
#include "ixo/case_io.hpp"
#include "ixo/error.hpp"
#include "ixo/oracle.hpp"
#include "ixo/verdict.hpp"

namespace ixo {

namespace {

struct Failing {
  GenSpec spec;
  std::uint32_t seed = 0;
  std::string summary;
};

// One fuzz property: a drawn case must pass the oracle on `backend` (tiers 1-2, poison,
// tier 3 for exact values) and, for a packed backend, equal its per-row twin bitwise.
// The last failing case seen is the shrunk counterexample (RapidCheck keeps shrinking
// only while the property still fails).
void fuzz_body(Backend& b, Backend* twin, gen::Knobs knobs, const RunOptions& run, std::optional<Failing>& last) {
  const GenSpec spec = *gen::spec(knobs);
  const auto seed = *rc::gen::arbitrary<std::uint32_t>();
  const Case c = generate(spec, seed);
  RC_PRE(b.supports(c) && (!twin || twin->supports(c)));
  JudgeOptions opt;
  opt.check_poison = true;
  opt.exact_ids = spec.values == Values::exact;
  const Observed o = b.run(c, run);
  Verdict v = judge(c, oracle(c), o, opt);
  if (v.pass && twin) v = compare_bitwise(twin->run(c, run), o);
  if (!v.pass) {
    last = Failing{spec, seed, v.summary()};
    RC_FAIL(v.summary());
  }
}

}  // namespace

int run_fuzz(const FuzzOptions& o) {
  std::vector<std::unique_ptr<Backend>> backends;
  std::vector<std::string> names = o.backends.empty() ? backend_names() : o.backends;
  for (const auto& n : names) {
    auto b = make_backend(n);
    std::string why;
    if (!b->available(&why)) {
      fmt::print("skip {}: {}\n", n, why);
      continue;
    }
    backends.push_back(std::move(b));
  }
  if (backends.empty()) throw InputError("backend", "no selected backend can run here");
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  RunOptions run;
  run.mutant = o.mutant;
  const Values families[] = {Values::gaussian, Values::gaussian, Values::exact, Values::near_tie};
  int failures = 0, runs = 0, cases = 0;
  for (std::uint64_t k = 0; elapsed() < o.seconds; ++k) {
    const std::uint64_t seed = o.seed + static_cast<std::uint64_t>(o.shard) + k * static_cast<std::uint64_t>(o.shards);
    for (auto& b : backends) {
      if (elapsed() >= o.seconds) break;
      std::unique_ptr<Backend> twin;
      const auto pos = b->name().rfind("-packed");
      if (pos != std::string::npos) {
        const std::string tn = b->name().substr(0, pos) + "-rows";
        const auto all = backend_names();
        if (std::find(all.begin(), all.end(), tn) != all.end()) twin = make_backend(tn);
      }
      gen::Knobs knobs;
      knobs.values = families[seed % 4];
      std::optional<Failing> last;
      rc::detail::TestParams params;
      params.seed = seed;
      params.maxSuccess = o.cases_per_seed;
      rc::detail::TestMetadata md;
      md.id = "fuzz/" + b->name();
      const auto result = rc::detail::checkTestable([&] { fuzz_body(*b, twin.get(), knobs, run, last); }, md, params);
      ++runs;
      if (result.template is<rc::detail::SuccessResult>()) {
        cases += result.template get<rc::detail::SuccessResult>().numSuccess;
        continue;
      }
      ++failures;
      std::string where = "(not written)";
      if (last) {
        const Case c = generate(last->spec, last->seed);
        const std::string dir = (std::filesystem::path(o.out_dir) / fmt::format("{}-seed{}", b->name(), seed)).string();
        save_case(c, dir);
        std::ofstream(std::filesystem::path(dir) / "spec.json") << spec_to_json(last->spec);
        std::ofstream(std::filesystem::path(dir) / "failure.txt")
            << fmt::format("backend {}{}\nfuzz seed {} (ixo fuzz --seed {} --backend {} --seconds 5{})\ngenerator seed {}\n{}\n",
                           b->name(), o.mutant ? fmt::format(" with mutant {}", o.mutant) : "", seed, seed, b->name(),
                           o.mutant ? fmt::format(" --mutant {}", o.mutant) : "", last->seed, last->summary);
        if (last->spec.values == Values::exact) std::ofstream(std::filesystem::path(dir) / "exact_ids") << "1\n";
        where = dir;
      }
      std::ostringstream ss;
      rc::detail::printResultMessage(result, ss);
      fmt::print("FAIL {} seed {}: shrunk case written to {}\n{}\n", b->name(), seed, where, ss.str());
    }
  }
  fmt::print("fuzz: {} runs ({} cases) over {} backends in {:.1f} s, shard {}/{}, first seed {}: {} failures\n", runs, cases,
             backends.size(), elapsed(), o.shard, o.shards, o.seed, failures);
  return failures;
}

}  // namespace ixo
