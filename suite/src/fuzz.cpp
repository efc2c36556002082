#include "ixo/fuzz.hpp"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <iterator>

#include "ixo/arbitrary.hpp"
#include "ixo/backend_properties.hpp"
#include "ixo/case_run.hpp"
#include "ixo/error.hpp"
#include "ixo/oracle.hpp"
#include "ixo/property_runner.hpp"
#include "ixo/verdict.hpp"

namespace ixo {

namespace {

// One fuzz property: a drawn case must pass the oracle on `backend` (tiers 1-2, poison
// for our own kernels, tier 3 for exact values) and, for our packed kernels, equal the
// per-row twin bitwise.
void fuzz_body(Backend& b, Backend* twin, const gen::Knobs& knobs, const RunOptions& run, coverage::Tally* tally, std::size_t index) {
  const Case c = props::draw_case({&b}, knobs);
  if (twin) RC_PRE(twin->supports(c));
  JudgeOptions opt;
  opt.check_poison = true;
  opt.exact_ids = props::last_drawn()->spec.values == Values::exact;
  const Expected e = oracle(c);
  const CaseRun r = run_and_judge(b, c, e, opt, run);
  if (r.skipped) RC_DISCARD(r.skip_reason);
  if (tally) tally->add(index, c, e);  // the conditions of every judged case
  Verdict v = r.verdict;
  if (v.pass && twin) v = compare_bitwise(twin->run(c, run), r.observed);
  if (!v.pass) RC_FAIL(v.summary());
}

}  // namespace

FuzzResult run_fuzz(const std::vector<Backend*>& all, const FuzzOptions& o, const std::function<void(const std::string&)>& log) {
  std::vector<Backend*> backends;
  for (Backend* b : all) {
    std::string why;
    if (b->available(&why)) backends.push_back(b);
    else if (log) log(fmt::format("unavailable here, skipped: {}: {}", b->name(), why));
  }
  if (backends.empty()) throw InputError("backend", "no selected backend can run here");
  props::set_presets(o.presets);
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  RunOptions run;
  run.mutant = o.mutant;
  const Values families[] = {Values::gaussian, Values::gaussian, Values::exact, Values::near_tie, Values::ladder, Values::plateau};
  std::vector<std::unique_ptr<Backend>> twins;  // each backend's bitwise twin (traits), or null
  for (Backend* b : backends) twins.push_back(make_bitwise_twin(*b));
  FuzzResult res;
  if (o.coverage) res.coverage.emplace(backends);
  coverage::Tally* const tally = res.coverage ? &*res.coverage : nullptr;
  auto done = [&] {
    return elapsed() >= o.seconds || (o.max_seeds > 0 && res.runs >= o.max_seeds * static_cast<int>(backends.size())) || (o.max_failures > 0 && static_cast<int>(res.failures.size()) >= o.max_failures);
  };
  for (std::uint64_t k = 0; !done(); ++k) {
    const std::uint64_t seed = o.seed + static_cast<std::uint64_t>(o.shard) + k * static_cast<std::uint64_t>(o.shards);
    for (std::size_t i = 0; i < backends.size(); ++i) {
      if (done()) break;
      Backend* const b = backends[i];
      Backend* const twin = twins[i].get();
      gen::Knobs knobs;
      knobs.values = families[seed % std::size(families)];
      const PropertyResult r =
          run_property("fuzz/" + b->name(), o.cases_per_seed, seed, [&] { fuzz_body(*b, twin, knobs, run, tally, i); });
      ++res.runs;
      res.cases += r.cases;
      if (r.status == PropertyResult::Status::gave_up) ++res.gave_up;
      if (r.status != PropertyResult::Status::failed) continue;
      std::string where = "(not written)";
      if (r.counterexample) {
        Regression reg;
        reg.dir = (std::filesystem::path(o.out_dir) / fmt::format("{}-seed{}", b->in_tree() ? b->name() : "kernel", seed)).string();
        reg.backend = b->name();
        reg.what = fmt::format("fuzz seed {} (ixo fuzz --seed {} --seconds 5{}){}", seed, seed,
                               o.mutant ? fmt::format(" --mutant {}", o.mutant) : "",
                               o.mutant ? fmt::format(" with mutant {}", o.mutant) : "");
        reg.report = r.message;
        write_regression(reg, r.counterexample->spec, r.counterexample->seed);
        where = reg.dir;
        res.failures.push_back(where);
      }
      const std::string msg = fmt::format("FAIL {} seed {}: shrunk case written to {}\nreplay: {}\n{}", b->name(), seed, where,
                                          replay_command(where, b->name()), r.message);
      if (res.report.empty()) res.report = msg;
      if (log) log(msg);
    }
  }
  props::set_presets({});
  if (log)
    log(fmt::format("fuzz: {} runs ({} cases) over {} backends in {:.1f} s, shard {}/{}, first seed {}: {} failures{}", res.runs,
                    res.cases, backends.size(), elapsed(), o.shard, o.shards, o.seed, res.failures.size(),
                    res.gave_up ? fmt::format(", {} runs gave up (the kernel declined almost every case)", res.gave_up) : ""));
  return res;
}

}  // namespace ixo
