// ixo: the indexer oracle's command line.
//   ixo gen --preset NAME|--fixture NAME|--spec FILE [--seed N] --out DIR   write a case directory
//   ixo ref CASE_DIR [--out DIR]                     write the oracle's topk_idx.npy + scores.npy
//   ixo run --backend B CASE_DIR --out DIR           write a backend's outputs (B: ixo list, or exec:COMMAND)
//   ixo check CASE_DIR --topk FILE [--scores F]      judge an outside implementation's files
//   ixo check CASE_DIR --backend B...                run backends on one case and judge them (regression replay)
//   ixo check [--backend B]... [--json]              the whole suite: case groups, fixtures, properties
//   ixo fuzz --seconds N [--backend B]... [--seed S] [--shard i/n] [--out DIR] [--coverage] [--json F]
//   ixo mutate [--backend B]... [--json F]          mutation campaign (kill matrix)
//   ixo diff CASE_DIR --backend A --backend B        first differing ids / score cell, placed in the plan
//   ixo list                                         presets and the backends `ixo run` accepts
// Exit codes: 0 pass, 1 fail, 2 bad input (the field named), 3 anything else.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <csignal>
#include <iostream>
#include <nlohmann/json.hpp>

#include "backend.hpp"
#include "commands.hpp"
#include "ixo/error.hpp"
#include "mutate.hpp"

namespace {

// A --backend option: one value per flag, repeatable.
CLI::Option* add_backends(CLI::App* app, std::vector<std::string>& into, const std::string& what) {
  return app->add_option("--backend", into, what + " (repeat the flag for several; exec:COMMAND runs any program)")
      ->allow_extra_args(false);
}

// A seed: a whole number >= 0 (CLI11 would wrap "-5" into an unsigned option silently).
const CLI::Validator kSeed(
    [](std::string& v) -> std::string {
      std::size_t used = 0;
      long long x = -1;
      try {
        x = std::stoll(v, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != v.size() || x < 0) return "must be a whole number >= 0, got '" + v + "'";
      return "";
    },
    "SEED>=0");

// Ctrl-C: the run stops at the next case (an exec: command is killed) and reports what ran.
// A second Ctrl-C ends the process at once.
void on_sigint(int) {
  if (ixo::interrupt_flag().exchange(true)) std::_Exit(130);
}

void install_sigint_handler() {
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a blocking wait returns
  sigaction(SIGINT, &sa, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ixo: oracle and verdict for sparse-attention indexer kernels"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("ixo ") + IXO_VERSION);

  ixo::cli::Args a;
  ixo::cli::GenSource gen_from;
  std::int64_t gen_seed = 1, suite_seed = static_cast<std::int64_t>(a.suite.seed), fuzz_seed = 1;

  auto* gen = app.add_subcommand("gen", "write a generated case directory");
  gen->add_option("--preset", gen_from.preset, "preset name (ixo list)");
  gen->add_option("--fixture", gen_from.fixture, "a canonical fixture's case (fixtures/canonical/NAME.json)");
  gen->add_option("--spec", gen_from.spec_file,
                  "a generator spec file (spec.json of a saved failure, docs/fuzzing-input.md)");
  gen->add_option("--seed", gen_seed, "generator seed (>= 0)")->check(kSeed);
  gen->add_option("--out", a.out, "output directory")->required();

  auto* ref = app.add_subcommand("ref", "write the oracle's topk_idx.npy and scores.npy");
  ref->add_option("case", a.case_dir, "case directory")->required();
  ref->add_option("--out", a.out, "output directory (default: the case directory)");

  auto* run = app.add_subcommand("run", "run a backend on a case and write its outputs");
  run->add_option("--backend", a.backend, "backend name (ixo list) or exec:COMMAND")->required();
  run->add_option("case", a.case_dir, "case directory")->required();
  run->add_option("--out", a.out, "output directory")->required();
  run->add_option("--exec-timeout", a.backend_opt.exec_timeout_s, "seconds an exec: backend may take per case");

  auto* check = app.add_subcommand("check", "judge outputs against the oracle, or run the whole suite over backends");
  check->add_option("case", a.case_dir, "case directory (omit for the whole suite)");
  check->add_option("--topk", a.topk_file, "topk_idx.npy of the implementation under test (with a case directory)");
  check->add_option("--scores", a.scores_file, "scores.npy of the implementation under test (optional)");
  check->add_flag("--exact", a.exact,
                  "tier 3: ids must equal the oracle's exactly (tie-free inputs; with a case directory)");
  add_backends(check, a.backends,
               "backends to run (with a case directory: judge them on it; without: the suite over them)");
  check->add_option("--exec-timeout", a.backend_opt.exec_timeout_s, "seconds an exec: backend may take per case");
  check->add_flag("--json", a.json, "machine-readable output");
  check->add_option("--plot", a.plot_dir,
                    "with --topk: write DIR/failing_rows.png when the check fails (needs the Python package)");
  check->add_flag("--failures-only", a.failures_only, "suite: print only failing rows");
  check->add_flag("--no-properties", a.no_properties, "suite: skip the property rows");
  check->add_flag("--no-groups", a.no_groups, "suite: skip the preset case groups");
  check->add_flag("--no-fixtures", a.no_fixtures, "suite: skip the fixtures");
  check
      ->add_option("--property", a.suite.only_properties,
                   "suite: run only this property (repeatable; names as in the table without prop:)")
      ->allow_extra_args(false);
  check->add_option("--property-cases", a.suite.property_cases, "suite: cases per property and backend");
  check->add_option("--seed", suite_seed, "suite: property seed (>= 0)")->check(kSeed);
  check->add_option("--contract", a.contract,
                    "judge inside this contract: a name (spec, sglang-triton-decode, ixo-native, ixo-cp) or a JSON "
                    "file (docs/contracts.md)");
  check->add_option("--out", a.suite.out_dir,
                    "suite: where shrunk property failures are written (default: a temp folder)");

  a.fuzz.out_dir = IXO_REGRESSIONS_DIR;
  auto* fuzz = app.add_subcommand("fuzz", "random seeds under a time budget; failing cases are shrunk and saved");
  fuzz->add_option("--seconds", a.fuzz.seconds, "time budget (> 0): returns within it plus one case");
  add_backends(fuzz, a.backends, "backend(s) to fuzz (default: all available)");
  fuzz->add_option("--exec-timeout", a.backend_opt.exec_timeout_s, "seconds an exec: backend may take per case");
  fuzz->add_option("--seed", fuzz_seed, "first seed (>= 0)")->check(kSeed);
  fuzz->add_option("--contract", a.contract,
                   "draw and judge inside this contract: a name or a JSON file (default: each backend's own)");
  fuzz->add_option("--shapes", a.fuzz.shapes,
                   "keep compile-time parameters (block size, D, heads, topk, dtype, score, pack) to N tuples (JIT "
                   "kernels; 0: unlimited)");
  fuzz->add_option("--shard", a.shard, "i/n: this process takes seeds seed+i, seed+i+n, ...");
  fuzz->add_option("--cases", a.fuzz.cases_per_seed, "cases per seed");
  fuzz->add_option("--preset", a.fuzz.presets, "draw only from these presets (repeatable)")->allow_extra_args(false);
  fuzz->add_option("--out", a.fuzz.out_dir, "where shrunk failing cases are written");
  fuzz->add_option("--max-failures", a.fuzz.max_failures,
                   "stop after this many failures (default 0: use the whole budget)");
  fuzz->add_flag("--coverage", a.fuzz.coverage,
                 "print the boundary conditions the judged cases hit (condition, cases, share)");
  fuzz->add_option("--json", a.fuzz_json,
                   "write {\"coverage\": {condition: count}, ...} to this file (implies --coverage)");
  fuzz->add_option("--seeds", a.fuzz.max_seeds, "stop after this many seeds (a fixed run; --seconds still caps it)");
  fuzz->add_option("--mutant", a.fuzz.mutant,
                   "run with a catalogued kernel bug (test builds; shows what a failure looks like)");

  ixo::MutateOptions mut_opt;
  auto* mutate = app.add_subcommand("mutate", "mutation campaign: every catalogued kernel bug must be killed");
  add_backends(mutate, mut_opt.backends, "built-in backend(s) to mutate (default: all available)");
  mutate->add_option("--json", mut_opt.json_path, "write the kill matrix as JSON");
  mutate->add_option("--only", mut_opt.only, "run only these mutant ids");
  mutate->add_option("--property-cases", mut_opt.property_cases, "cases per property check");
  mutate->add_flag("--no-mutants", mut_opt.no_mutants, "only the unmutated run");

  int diff_chunks = 0, diff_mutant = 0;
  auto* diff = app.add_subcommand("diff",
                                  "two backends on one case, bit for bit: the first differing ids and score cell, "
                                  "with the CTA, program, tile row and KV chunk that computed it");
  diff->add_option("case", a.case_dir, "case directory")->required();
  add_backends(diff, a.backends, "the two backends to compare (--backend A --backend B)");
  diff->add_option("--chunks", diff_chunks, "force the score kernels' KV chunk count on both (0: the plan's)");
  diff->add_option("--mutant", diff_mutant, "run B with this catalogue mutant (test builds): what the bug changes");
  diff->add_option("--exec-timeout", a.backend_opt.exec_timeout_s, "seconds an exec: backend may take per case");

  app.add_subcommand("list", "list presets and the backends ixo run accepts");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  a.suite.seed = static_cast<std::uint64_t>(suite_seed);
  a.fuzz.seed = static_cast<std::uint64_t>(fuzz_seed);
  if (*fuzz || *check) install_sigint_handler();
  a.given = [&](const char* flag) {
    for (auto* sub : {check, fuzz, run})
      if (*sub && sub->count(flag)) return true;
    return false;
  };
  try {
    if (*gen) return ixo::cli::gen(gen_from, static_cast<std::uint64_t>(gen_seed), a.out);
    if (*ref) return ixo::cli::ref(a.case_dir, a.out);
    if (*run) return ixo::cli::run(a);
    if (*check) return ixo::cli::check(a);
    if (*fuzz) return ixo::cli::fuzz(a);
    if (*diff) return ixo::cli::diff(a, diff_chunks, diff_mutant);
    if (*mutate) {
      for (const auto& b : mut_opt.backends)
        if (b.rfind("exec:", 0) == 0)
          throw ixo::InputError("--backend", "mutate injects bugs into our own kernels; '" + b + "' is not one");
      return ixo::run_mutate(mut_opt);
    }
    return ixo::cli::list();
  } catch (const ixo::InputError& e) {
    return ixo::cli::error_exit(a.json, 2, "bad input", e.what(), e.field());
  } catch (const std::exception& e) {
    return ixo::cli::error_exit(a.json, 3, "error", e.what(), "");
  }
}
