#include "commands.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fmt/ranges.h>
#include <fstream>
#include <iostream>
#include <sstream>
#include <nlohmann/json.hpp>

#include "ixo/case_io.hpp"
#include "ixo/case_run.hpp"
#include "ixo/contract.hpp"
#include "ixo/suite_checks.hpp"
#include "ixo/error.hpp"
#include "ixo/fixture.hpp"
#include "ixo/generate.hpp"
#include "ixo/oracle.hpp"
#include "ixo/transform.hpp"
#include "ixo/verdict.hpp"
#include "packing_note.hpp"

namespace ixo::cli {

namespace {

nlohmann::json verdict_json(const Verdict& v) {
  nlohmann::json fails = nlohmann::json::array();
  for (const auto& f : v.details)
    fails.push_back({{"tier", f.tier},
                     {"head", f.head},
                     {"row", f.row},
                     {"block", f.block},
                     {"expected", f.expected},
                     {"observed", f.observed},
                     {"missing", f.missing},
                     {"extra", f.extra},
                     {"margin", f.margin},
                     {"tau", f.tau},
                     {"message", f.message}});
  return {{"pass", v.pass},         {"rows_checked", v.rows_checked}, {"tie_swaps", v.tie_swaps},
          {"failures", v.failures}, {"reports", v.reports},           {"details", fails}};
}

std::vector<std::unique_ptr<Backend>> make_backends(const std::vector<std::string>& names, const BackendOptions& opt) {
  std::vector<std::unique_ptr<Backend>> out;
  for (const auto& n : names) {
    auto b = make_backend(n, opt);
    std::string why;
    // A named outside kernel that cannot start is a mistake in the command line.
    if (!b->in_tree() && !b->available(&why)) throw InputError("--backend", n + ": " + why);
    out.push_back(std::move(b));
  }
  return out;
}

void refuse(const Args& a, std::initializer_list<const char*> flags, const std::string& why) {
  for (const char* f : flags)
    if (a.given(f)) throw InputError(f, why);
}

// `--plot DIR`: the Python package draws the failing rows (python3 -m indexer_oracle plot).
void plot_failing_rows(const Args& a) {
#if defined(IXO_PYTHON) && defined(IXO_PYTHON_DIR)
  std::string cmd = std::string("env PYTHONPATH=") + IXO_PYTHON_DIR + " " + IXO_PYTHON + " -m indexer_oracle plot '" +
                    a.case_dir + "' --topk '" + a.topk_file + "' --out '" + a.plot_dir + "'";
  if (!a.scores_file.empty()) cmd += " --scores '" + a.scores_file + "'";
  if (a.exact) cmd += " --exact";
  if (std::system(cmd.c_str()) == -1) fmt::print(stderr, "ixo: --plot: could not run {}\n", IXO_PYTHON);
#else
  (void)a;
  fmt::print(stderr, "ixo: --plot: this ixo was built without the Python package; no picture written\n");
#endif
}

// One note line when some rows of the batch do not form packed groups (not an error).
void print_packing_note(const Args& a, const Case& c) {
  const std::string note = ungrouped_rows_note(c);
  if (!note.empty() && !a.json)
    fmt::print("note: {} (packed kernels only; every row is judged by its own semantics)\n", note);
}

// The contract a command judges under: --contract, else CASE/contract.json (written with a
// regression found under a contract), else none (each backend's own / the spec).
std::optional<Contract> contract_of(const Args& a) {
  if (!a.contract.empty()) return load_contract(a.contract);
  if (!a.case_dir.empty()) {
    const auto file = std::filesystem::path(a.case_dir) / "contract.json";
    if (std::filesystem::exists(file)) return load_contract(file.string());
  }
  return std::nullopt;
}

JudgeOptions judge_options_under(const std::optional<Contract>& contract) {
  JudgeOptions opt;
  if (contract) opt.semantics = contract->semantics, opt.contract = contract->label();
  return opt;
}

// Exit code of an outcome: PASS 0; FAIL and NOTHING JUDGED 1; INTERRUPTED 3.
int exit_code(const std::string& outcome) {
  if (outcome == "PASS") return 0;
  if (outcome == "INTERRUPTED") {
    fmt::print(stderr, "ixo: interrupted (Ctrl-C): the run stopped early; what ran is reported above\n");
    return 3;
  }
  return 1;
}

// `ixo check CASE --backend B...`: each backend on one case (a regression replay).
int check_case_with_backends(const Args& a) {
  const Case c = load_case(a.case_dir);
  print_packing_note(a, c);
  const bool exact = a.exact || std::filesystem::exists(std::filesystem::path(a.case_dir) / "exact_ids");
  const std::optional<Contract> given = contract_of(a);
  const Expected e = oracle(c);
  bool pass = true;
  int judged = 0;
  nlohmann::json j = nlohmann::json::object();
  for (auto& b : make_backends(a.backends, a.backend_opt)) {
    std::string why;
    if (!b->available(&why) || !b->supports(c, &why)) {
      fmt::print("SKIP {}: {}\n", b->name(), why);
      j[b->name()] = {{"skipped", why}};
      continue;
    }
    const Contract contract = given ? *given : named_contract(b->traits().contract);
    std::optional<Case> resolved;
    const Case* inside = judged_form(contract, c, resolved);  // aliases resolved where the contract has none
    if (!inside) {
      const std::string outside = *contract.refuses(c);
      fmt::print("OUTSIDE {}: the case lies outside {}: {} (not run)\n", b->name(), contract.label(), outside);
      j[b->name()] = {{"outside_contract", outside}};
      continue;
    }
    JudgeOptions opt = judge_options_under(contract);
    opt.exact_ids = exact;
    opt.check_poison = true;
    const CaseRun r = run_and_judge(*b, *inside, e, opt);
    if (r.skipped) {
      fmt::print("SKIP {}: {}\n", b->name(), r.skip_reason);
      j[b->name()] = {{"skipped", r.skip_reason}};
      continue;
    }
    ++judged;
    pass &= r.verdict.pass;
    j[b->name()] = verdict_json(r.verdict);
    if (!a.json) fmt::print("{}: {}\n", b->name(), r.verdict.summary());
  }
  if (judged == 0 && !a.json) fmt::print("no backend judged this case (skips are not passes) -> FAIL\n");
  if (a.json) std::cout << nlohmann::json{{"pass", pass && judged > 0}, {"backends", j}}.dump(2) << "\n";
  return pass && judged > 0 ? 0 : 1;
}

// Checks before any work that FILE can be written (and leaves no file behind).
void require_writable_file(const std::string& path, const std::string& field) {
  const bool existed = std::filesystem::exists(path);
  {
    std::ofstream f(path, std::ios::app);
    if (!f) throw InputError(field, "cannot write '" + path + "'");
  }
  if (!existed) std::filesystem::remove(path);
}

// `ixo fuzz --coverage [--json FILE]`: the table of reachable conditions, and the JSON file.
void write_coverage(const coverage::Tally& t, const FuzzResult& r, const std::string& json_path) {
  fmt::print("{}", t.table());
  const auto never = t.never_hit();
  if (!never.empty()) fmt::print("never hit: {}\n", fmt::join(never, ", "));
  if (json_path.empty()) return;
  nlohmann::json share = nlohmann::json::object();
  for (const auto& row : t.rows())
    if (row.reachable)
      share[row.name] = row.cases ? static_cast<double>(row.hit) / static_cast<double>(row.cases) : 0.0;
  const nlohmann::json j = {{"coverage", t.counts()}, {"share", share}, {"never_hit", never},
                            {"cases", t.cases()},     {"runs", r.runs}, {"failures", r.failures}};
  std::ofstream f(json_path);
  if (!(f << j.dump(2) << "\n")) throw InputError("--json", "cannot write " + json_path);
}

}  // namespace

int gen(const GenSource& from, std::uint64_t seed, const std::string& out) {
  const int given = !from.preset.empty() + !from.fixture.empty() + !from.spec_file.empty();
  if (given != 1)
    throw InputError("--preset",
                     fmt::format("give exactly one of --preset NAME, --fixture NAME, --spec FILE (got {})", given));
  Case c;
  bool exact = false;
  std::string what;
  if (!from.preset.empty()) {
    c = generate(preset(from.preset), seed);
    what = fmt::format("preset '{}' seed {}", from.preset, seed);
  } else if (!from.spec_file.empty()) {
    std::ifstream f(from.spec_file);
    if (!f) throw InputError("--spec", "cannot read '" + from.spec_file + "'");
    std::stringstream text;
    text << f.rdbuf();
    const GenSpec spec = spec_from_json(text.str());
    c = generate(spec, seed);
    exact = spec.values == Values::exact;
    what = fmt::format("spec {} seed {}", from.spec_file, seed);
  } else {
    std::string known;
    for (const FixtureFile& ff : list_fixtures()) {
      if (ff.name != from.fixture) {
        if (!ff.regression) known += (known.empty() ? "" : ", ") + ff.name;
        continue;
      }
      Fixture fx = load_fixture(ff);
      c = std::move(fx.c);
      exact = fx.exact_ids;
      what = fmt::format("fixture '{}' ({})", from.fixture, ff.path);
    }
    if (what.empty()) throw InputError("--fixture", "unknown fixture '" + from.fixture + "' (known: " + known + ")");
  }
  save_case(c, out);
  if (exact) std::ofstream(std::filesystem::path(out) / "exact_ids") << "1\n";  // ixo check DIR judges tier 3
  fmt::print("wrote {} to {}: R={} Hq={} Hk={} D={} S={} table [{}x{}] k_dtype={}{}\n", what, out, c.R, c.Hq, c.Hk, c.D,
             c.S, c.rows, c.width, to_string(c.cfg.k_dtype), exact ? " (exact ids)" : "");
  return 0;
}

int ref(const std::string& dir, std::string out) {
  const Case c = load_case_mapped(dir);  // K mapped, never copied: the oracle only reads it
  if (out.empty()) out = dir;
  save_observed(expected_as_observed(oracle(c)), out);
  fmt::print("wrote {}/topk_idx.npy [{},{},{}] and {}/scores.npy [{},{},{}]\n", out, c.Hq, c.R, c.cfg.topk, out, c.Hq,
             c.R, c.NB());
  return 0;
}

Observed run_on_case(Backend& b, const std::string& name, const Case& c, const RunOptions& opt) {
  std::string why;
  if (!b.available(&why)) throw InputError("--backend", name + " is not available here: " + why);
  if (!b.supports(c, &why)) throw InputError("--backend", name + " does not support this case: " + why);
  try {
    return b.run(c, opt);
  } catch (const Unsupported& e) {
    throw InputError("--backend", e.what());
  }
}

int run(const Args& a) {
  const Case c = load_case(a.case_dir);
  auto b = make_backend(a.backend, a.backend_opt);
  save_observed(run_on_case(*b, a.backend, c, {}), a.out);
  fmt::print("wrote {} outputs to {}\n", a.backend, a.out);
  return 0;
}

int check(const Args& a) {
  if (!a.case_dir.empty()) {
    refuse(a,
           {"--failures-only", "--no-properties", "--no-groups", "--no-fixtures", "--property-cases", "--property",
            "--seed", "--out"},
           "is a flag of the suite (ixo check without a case directory)");
    if (!a.topk_file.empty()) {
      refuse(a, {"--backend", "--exec-timeout"},
             "judges files given by --topk; run a backend with ixo check CASE --backend B");
      const Case c = load_case(a.case_dir);
      print_packing_note(a, c);
      const Observed o = load_observed(c, a.topk_file, a.scores_file);
      const std::optional<Contract> contract = contract_of(a);
      std::optional<Case> resolved;
      if (contract && !judged_form(*contract, c, resolved))  // aliases alone: judged (the same truth)
        throw InputError("case", "lies outside " + contract->label() + ": " + *contract->refuses(c));
      JudgeOptions opt = judge_options_under(contract);
      opt.exact_ids = a.exact;
      const Verdict v = judge(c, oracle(c), o, opt);
      if (a.json)
        std::cout << verdict_json(v).dump(2) << "\n";
      else
        fmt::print("{}\n", v.summary());
      if (!v.pass && !a.plot_dir.empty()) plot_failing_rows(a);
      return v.pass ? 0 : 1;
    }
    refuse(a, {"--scores", "--plot"}, "needs --topk");
    if (a.backends.empty())
      throw InputError("--topk", "is required with a case directory (or --backend B to run a backend on it)");
    return check_case_with_backends(a);
  }
  refuse(a, {"--topk", "--scores", "--exact", "--plot"}, "needs a case directory: ixo check CASE_DIR --topk FILE");
  const bool all = a.backends.empty();
  const auto backends = make_backends(all ? default_backend_names() : a.backends, a.backend_opt);
  if (!a.suite.out_dir.empty()) require_writable_dir(a.suite.out_dir, "--out");  // before any work
  for (const auto& name : a.suite.only_properties) {
    std::string known;
    bool found = false;
    for (const auto& p : suite_properties()) {
      found |= name == p.name;
      known += (known.empty() ? "" : ", ") + std::string(p.name);
    }
    if (!found) throw InputError("--property", "unknown property '" + name + "' (known: " + known + ")");
  }
  SuiteOptions opt = a.suite;
  opt.self_tests = all;
  opt.properties = !a.no_properties;
  opt.groups = !a.no_groups;
  opt.fixtures = !a.no_fixtures;
  opt.contract = contract_of(a);
  const SuiteResult r = run_suite(pointers_of(backends), opt);
  if (a.json)
    std::cout << r.json().dump(2) << "\n";
  else
    fmt::print("{}", r.table(a.failures_only));
  return exit_code(r.outcome());
}

int fuzz(Args a) {
  const auto slash = a.shard.find('/');
  try {
    if (slash == std::string::npos) throw std::invalid_argument(a.shard);
    a.fuzz.shard = std::stoi(a.shard.substr(0, slash));
    a.fuzz.shards = std::stoi(a.shard.substr(slash + 1));
  } catch (const std::exception&) {
    throw InputError("--shard", "expected i/n, got '" + a.shard + "'");
  }
  if (a.fuzz.shards < 1 || a.fuzz.shard < 0 || a.fuzz.shard >= a.fuzz.shards)
    throw InputError("--shard", "expected 0 <= i < n, got '" + a.shard + "'");
  if (!a.fuzz_json.empty()) a.fuzz.coverage = true;
  a.fuzz.contract = contract_of(a);
  if (!a.fuzz_json.empty()) require_writable_file(a.fuzz_json, "--json");
  const auto backends = make_backends(a.backends.empty() ? default_backend_names() : a.backends, a.backend_opt);
  FuzzResult r;
  try {
    r = run_fuzz(pointers_of(backends), a.fuzz, [](const std::string& m) { fmt::print("{}\n", m); });
  } catch (const InputError& e) {
    const std::string what = e.what();  // "field: message": renamed to the flag that carries the value
    throw InputError("--" + e.field(), what.substr(std::min(what.size(), e.field().size() + 2)));
  }
  for (const auto& c : r.contracts) fmt::print("judged under {}\n", c);
  if (r.coverage) write_coverage(*r.coverage, r, a.fuzz_json);
  return exit_code(r.outcome());
}

int list() {
  fmt::print("presets:");
  for (const auto& n : preset_names()) fmt::print(" {}", n);
  fmt::print("\nbackends:");
  for (const auto& n : default_backend_names()) fmt::print(" {}", n);
  fmt::print(" exec:COMMAND\nrun only when named (--backend):");
  for (const auto& n : backend_names())
    if (!backend_traits(n).in_default_set) fmt::print(" {}", n);
  fmt::print("\n");
  return 0;
}

int error_exit(bool json, int code, const std::string& kind, const std::string& message, const std::string& field) {
  fmt::print(stderr, "ixo: {}: {}\n", code == 2 ? "error" : "internal error", message);
  if (json)
    std::cout
        << nlohmann::json{{"error", {{"exit", code}, {"kind", kind}, {"field", field}, {"message", message}}}}.dump(2)
        << "\n";
  return code;
}

}  // namespace ixo::cli
