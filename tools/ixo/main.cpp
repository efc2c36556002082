// ixo: the indexer oracle's command line.
//   ixo gen --preset NAME --seed N --out DIR      write a generated case directory
//   ixo ref CASE_DIR [--out DIR]                   write the oracle's topk_idx.npy + scores.npy
//   ixo run --backend NAME CASE_DIR --out DIR      write a backend's outputs
//   ixo check CASE_DIR --topk FILE [--scores F]    judge an external implementation
//   ixo check [--backend NAME]... [--json]         the embedded default suite
//   ixo fuzz --seconds N [--backend B] [--seed S] [--shard i/n]   random seeds, shrunk regressions
//   ixo mutate [--backend B] [--json F]           mutation campaign (kill matrix)
//   ixo list                                       presets and backends
// Exit codes: 0 pass, 1 fail, 2 bad input.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "backend.hpp"
#include "default_suite.hpp"
#include "fuzz.hpp"
#include "mutate.hpp"
#include "ixo/case_io.hpp"
#include "ixo/error.hpp"
#include "ixo/generate.hpp"
#include "ixo/oracle.hpp"
#include "ixo/verdict.hpp"

namespace {

int cmd_gen(const std::string& preset_name, std::uint64_t seed, const std::string& out) {
  const ixo::Case c = ixo::generate(ixo::preset(preset_name), seed);
  ixo::save_case(c, out);
  fmt::print("wrote case '{}' seed {} to {}: R={} Hq={} Hk={} D={} S={} table [{}x{}] k_dtype={}\n", preset_name, seed, out, c.R,
             c.Hq, c.Hk, c.D, c.S, c.rows, c.width, ixo::to_string(c.cfg.k_dtype));
  return 0;
}

int cmd_ref(const std::string& dir, std::string out) {
  const ixo::Case c = ixo::load_case(dir);
  if (out.empty()) out = dir;
  ixo::save_observed(ixo::expected_as_observed(ixo::oracle(c)), out);
  fmt::print("wrote {}/topk_idx.npy [{},{},{}] and {}/scores.npy [{},{},{}]\n", out, c.Hq, c.R, c.cfg.topk, out, c.Hq, c.R, c.NB());
  return 0;
}

int cmd_run(const std::string& backend, const std::string& dir, const std::string& out) {
  const ixo::Case c = ixo::load_case(dir);
  auto b = ixo::make_backend(backend);
  std::string why;
  if (!b->available(&why)) throw ixo::InputError("backend", backend + " is not available here: " + why);
  ixo::save_observed(b->run(c), out);
  fmt::print("wrote {} outputs to {}\n", backend, out);
  return 0;
}

int cmd_check_case(const std::string& dir, const std::string& topk, const std::string& scores, bool exact, bool json) {
  const ixo::Case c = ixo::load_case(dir);
  const ixo::Observed o = ixo::load_observed(c, topk, scores);
  ixo::JudgeOptions opt;
  opt.exact_ids = exact;
  const ixo::Verdict v = ixo::judge(c, ixo::oracle(c), o, opt);
  if (json) {
    nlohmann::json j{{"pass", v.pass},         {"rows_checked", v.rows_checked}, {"tie_swaps", v.tie_swaps},
                     {"failures", v.failures}, {"reports", v.reports}};
    std::cout << j.dump(2) << "\n";
  } else {
    fmt::print("{}\n", v.summary());
  }
  return v.pass ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ixo: oracle and verdict for sparse-attention indexer kernels"};
  app.require_subcommand(1);

  std::string preset_name, out, case_dir, topk_file, scores_file, backend;
  std::uint64_t seed = 1;
  bool json = false, exact = false;
  std::vector<std::string> backends;

  auto* gen = app.add_subcommand("gen", "write a generated case directory");
  gen->add_option("--preset", preset_name, "preset name (ixo list)")->required();
  gen->add_option("--seed", seed, "generator seed");
  gen->add_option("--out", out, "output directory")->required();

  auto* ref = app.add_subcommand("ref", "write the oracle's topk_idx.npy and scores.npy");
  ref->add_option("case", case_dir, "case directory")->required();
  ref->add_option("--out", out, "output directory (default: the case directory)");

  auto* run = app.add_subcommand("run", "run a backend on a case and write its outputs");
  run->add_option("--backend", backend, "backend name (ixo list)")->required();
  run->add_option("case", case_dir, "case directory")->required();
  run->add_option("--out", out, "output directory")->required();

  auto* check = app.add_subcommand("check", "judge outputs against the oracle, or run the default suite");
  check->add_option("case", case_dir, "case directory (omit for the embedded default suite)");
  check->add_option("--topk", topk_file, "topk_idx.npy of the implementation under test");
  check->add_option("--scores", scores_file, "scores.npy of the implementation under test (optional)");
  check->add_flag("--exact", exact, "tier 3: ids must equal the oracle's exactly (tie-free inputs)");
  check->add_option("--backend", backends, "default suite: only these backends (repeatable)");
  check->add_flag("--json", json, "machine-readable output");

  ixo::FuzzOptions fuzz_opt;
  std::string shard = "0/1";
  fuzz_opt.out_dir = IXO_REGRESSIONS_DIR;
  auto* fuzz = app.add_subcommand("fuzz", "random seeds under a time budget; failing cases are shrunk and saved");
  fuzz->add_option("--seconds", fuzz_opt.seconds, "time budget");
  fuzz->add_option("--backend", fuzz_opt.backends, "backend(s) to fuzz (default: all available)");
  fuzz->add_option("--seed", fuzz_opt.seed, "first seed");
  fuzz->add_option("--shard", shard, "i/n: this process takes seeds seed+i, seed+i+n, ...");
  fuzz->add_option("--cases", fuzz_opt.cases_per_seed, "cases per seed");
  fuzz->add_option("--out", fuzz_opt.out_dir, "where shrunk failing cases are written");
  fuzz->add_option("--mutant", fuzz_opt.mutant, "run with a catalogued kernel bug (test builds; shows what a failure looks like)");

  ixo::MutateOptions mut_opt;
  auto* mutate = app.add_subcommand("mutate", "mutation campaign: every catalogued kernel bug must be killed");
  mutate->add_option("--backend", mut_opt.backends, "backend(s) to mutate (default: all available)");
  mutate->add_option("--json", mut_opt.json_path, "write the kill matrix as JSON");
  mutate->add_option("--only", mut_opt.only, "run only these mutant ids");
  mutate->add_option("--property-cases", mut_opt.property_cases, "cases per property check");
  mutate->add_flag("--no-mutants", mut_opt.no_mutants, "only the unmutated run");

  app.add_subcommand("list", "list presets and backends");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  try {
    if (*gen) return cmd_gen(preset_name, seed, out);
    if (*ref) return cmd_ref(case_dir, out);
    if (*run) return cmd_run(backend, case_dir, out);
    if (*fuzz) {
      const auto slash = shard.find('/');
      try {
        if (slash == std::string::npos) throw std::invalid_argument(shard);
        fuzz_opt.shard = std::stoi(shard.substr(0, slash));
        fuzz_opt.shards = std::stoi(shard.substr(slash + 1));
      } catch (const std::exception&) {
        throw ixo::InputError("--shard", "expected i/n, got '" + shard + "'");
      }
      if (fuzz_opt.shards < 1 || fuzz_opt.shard < 0 || fuzz_opt.shard >= fuzz_opt.shards)
        throw ixo::InputError("--shard", "expected 0 <= i < n, got '" + shard + "'");
      return ixo::run_fuzz(fuzz_opt) == 0 ? 0 : 1;
    }
    if (*mutate) return ixo::run_mutate(mut_opt);
    if (*check) {
      if (!case_dir.empty()) {
        if (topk_file.empty()) throw ixo::InputError("--topk", "is required when a case directory is given");
        return cmd_check_case(case_dir, topk_file, scores_file, exact, json);
      }
      return ixo::run_default_suite(backends, json) ? 0 : 1;
    }
    fmt::print("presets:");
    for (const auto& n : ixo::preset_names()) fmt::print(" {}", n);
    fmt::print("\nbackends: oracle-naive external");
    for (const auto& n : ixo::backend_names()) fmt::print(" {}", n);
    fmt::print("\n");
    return 0;
  } catch (const ixo::InputError& e) {
    fmt::print(stderr, "ixo: error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "ixo: error: {}\n", e.what());
    return 2;
  }
}
