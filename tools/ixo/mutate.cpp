#include "mutate.hpp"

#include "ixo/contract.hpp"

#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>

#include "backend.hpp"
#include "ixo/mutant_catalogue.hpp"
#include "ixo/contract.hpp"
#include "ixo/default_suite.hpp"
#include "ixo/backend_properties.hpp"
#include "ixo/metamorphic_properties.hpp"
#include "ixo/error.hpp"
#include "ixo/fixture.hpp"
#include "ixo/transform.hpp"
#include "ixo/oracle.hpp"
#include "ixo/property_runner.hpp"
#include "ixo/verdict.hpp"

namespace ixo {

namespace {

struct Selected {
  std::vector<std::unique_ptr<Backend>> all;
  std::vector<std::pair<Backend*, Backend*>> pairs;  // (bitwise twin, backend), both selected
};

// A check passes (returns nullopt) or fails with a one-line reason.
using Check = std::function<std::optional<std::string>(Selected&, const RunOptions&)>;
struct NamedCheck {
  std::string name;
  Check run;
};

std::optional<std::string> judge_cases(Selected& s, const RunOptions& opt, const std::vector<Case>& cases, bool exact) {
  for (const Case& c : cases) {
    const Expected e = oracle(c);
    for (auto& b : s.all) {
      if (!b->supports(c)) continue;
      const Contract k = named_contract(b->traits().contract);  // each backend judged inside what it promises
      std::optional<Case> resolved;
      const Case* inside = judged_form(k, c, resolved);
      if (!inside) continue;
      JudgeOptions j;
      j.semantics = k.semantics;
      j.contract = k.label();
      j.check_poison = true;
      j.exact_ids = exact;
      const Verdict v = judge(*inside, e, b->run(*inside, opt), j);
      if (!v.pass) return b->name() + ": " + (v.reports.empty() ? v.summary() : v.reports[0]);
    }
    for (auto [rows, packed] : s.pairs) {
      if (!rows->supports(c) || !packed->supports(c)) continue;
      const Verdict v = compare_bitwise(rows->run(c, opt), packed->run(c, opt));
      if (!v.pass) return packed->name() + " vs " + rows->name() + ": " + v.reports[0];
    }
  }
  return std::nullopt;
}

std::optional<std::string> property(const std::string& id, int cases, std::function<void()> body) {
  const PropertyResult r = run_property(id, cases, 20261130, body);
  if (r.status == PropertyResult::Status::passed) return std::nullopt;
  if (r.status == PropertyResult::Status::failed) return r.description.substr(0, r.description.find('\n'));
  return r.message;
}

std::vector<NamedCheck> make_checks(int property_cases) {
  std::vector<NamedCheck> checks;
  // Canonical fixtures first (cheap, targeted), the long one last among them.
  auto files = list_fixtures();
  std::stable_partition(files.begin(), files.end(),
                        [](const FixtureFile& f) { return f.name.find("long") == std::string::npos; });
  for (const auto& f : files)
    checks.push_back({"fixture:" + f.name, [f](Selected& s, const RunOptions& o) {
                        const Fixture fx = load_fixture(f);
                        return judge_cases(s, o, {fx.c}, fx.exact_ids);
                      }});
  for (const auto& g : suite_groups())
    checks.push_back({"suite:" + g, [g](Selected& s, const RunOptions& o) {
                        return judge_cases(s, o, suite_cases(g), preset(g).values == Values::exact);
                      }});
  using Body = void (*)(Backend&, const RunOptions&);
  const std::pair<const char*, Body> props[] = {
      {"MatchesOracle", &props::matches_oracle},
      {"ExactValuesGiveExactIds", &props::exact_values_give_exact_ids},
      {"ChunkingChangesNothing", &props::chunking_changes_nothing},
      {"PaddingAndInactiveRowsDisturbNothing", &props::padding_and_inactive_rows_disturb_nothing},
      {"RelabelingSlotsChangesNothing", &props::relabeling_slots_changes_nothing},
      {"NearTiesStayWithinTau", &props::near_ties_stay_within_tau},
      {"BatchInvariance", &props::batch_invariance},
      {"RepeatRunsIdentical", &props::repeat_runs_identical},
  };
  for (const auto& [name, body] : props)
    checks.push_back({std::string("property:") + name,
                      [name = std::string(name), body, property_cases](
                          Selected& s, const RunOptions& o) -> std::optional<std::string> {
                        for (auto& b : s.all) {
                          props::set_contract(std::make_shared<const Contract>(named_contract(b->traits().contract)));
                          auto f = property("mutate/" + name + "/" + b->name(), property_cases, [&] { body(*b, o); });
                          props::set_contract(nullptr);
                          if (f) return b->name() + ": " + *f;
                        }
                        return std::nullopt;
                      }});
  checks.push_back({"property:PackedEqualsRowsBitwise",
                    [property_cases](Selected& s, const RunOptions& o) -> std::optional<std::string> {
                      for (auto [rows, packed] : s.pairs)
                        if (auto f = property("mutate/packed/" + packed->name(), property_cases,
                                              [&] { props::packed_equals_rows(*rows, *packed, o); }))
                          return packed->name() + ": " + *f;
                      return std::nullopt;
                    }});
  return checks;
}

// Does the mutant live in code that one of the selected backends runs? Read from the
// registry's traits (kernels/common/mutants.hpp says what each `where` means; the prose is ixo/mutant_catalogue.hpp).
bool reaches(const mutants::Info& m, const Selected& s) {
  const std::string where = m.where;
  if (where == "gpu-test") return false;  // run by its ctest mutant.<key>, not by a backend campaign
  for (const auto& b : s.all) {
    const BackendTraits& t = b->traits();
    const bool native = t.mutant_scope == "native";
    if (where == "msa"      ? t.mutant_scope == "msa"
        : where == "cp"     ? t.mutant_scope == "cp"
        : where == "cp-gpu" ? t.mutant_scope == "cp" && (t.family == "cuda" || t.family == "sim")  // GPU CP code
        : where == "packed" ? native && t.packed
        : where == "cpu"    ? native && t.family == "cpu"
        : where == "gpu"    ? native && t.family == "cuda"
                            : native)  // common, topk: every native backend (cpu-msa: only its "msa" selector mutants)
      return true;
  }
  return false;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int run_mutate(const MutateOptions& o) {
#if !defined(IXO_ENABLE_MUTANTS)
  throw InputError("mutate", "this build has no mutant switches (IXO_MUTANTS=OFF); use a test build");
#endif
  Selected s;
  for (const auto& n : o.backends.empty() ? default_backend_names() : o.backends) {
    auto b = make_backend(n);
    std::string why;
    if (!b->available(&why)) {
      fmt::print("backend {} not available ({}): its mutants are not run\n", n, why);
      continue;
    }
    s.all.push_back(std::move(b));
  }
  if (s.all.empty()) throw InputError("backend", "no selected backend can run here");
  for (auto& p : s.all)  // (twin, backend) pairs whose twin was selected too
    for (auto& r : s.all)
      if (!p->traits().bitwise_twin.empty() && r->name() == p->traits().bitwise_twin)
        s.pairs.emplace_back(r.get(), p.get());
  const auto checks = make_checks(o.property_cases);

  // 1. Unmutated: a kill means something only if the killing check passes without the mutant.
  //    --no-mutants runs every check (what the operator mutator needs: the whole list is its
  //    killer). A campaign runs each check unmutated once, when it first kills a mutant: a
  //    check that kills nothing needs no baseline (each check is deterministic: fixed cases,
  //    fixed property seed), and the gate still fails on any kill by a failing check.
  auto t0 = std::chrono::steady_clock::now();
  double baseline_seconds = 0;
  std::vector<int> baseline(checks.size(), -1);  // -1 not run, 0 fails, 1 passes
  std::string baseline_failure;
  auto passes_unmutated = [&](std::size_t i) {
    if (baseline[i] < 0) {
      const auto t = std::chrono::steady_clock::now();
      const auto f = checks[i].run(s, RunOptions{});
      baseline[i] = f ? 0 : 1;
      if (f) baseline_failure = fmt::format("UNMUTATED SUITE FAILS at {}: {}", checks[i].name, *f);
      baseline_seconds += seconds_since(t);
    }
    return baseline[i] == 1;
  };
  if (o.no_mutants) {
    for (std::size_t i = 0; i < checks.size(); ++i)
      if (!passes_unmutated(i)) {
        fmt::print("{}\n", baseline_failure);
        return 1;
      }
    fmt::print("unmutated: {} checks pass over {} backends in {:.1f} s\n", checks.size(), s.all.size(),
               seconds_since(t0));
    return 0;
  }

  // 2. One run per mutant, stopping at the first kill. The catalogue's expected killer is
  //    tried first (a hint: the order of the checks, never what counts as a kill), then every
  //    other check in the list's order.
  nlohmann::json out;
  out["mutants"] = nlohmann::json::array();
  int reachable = 0, killed = 0;
  fmt::print("\n{:>3} {:<28} {:<8} {:<8} {:<34} {:>7}\n", "id", "mutant", "where", "result", "killed by", "seconds");
  for (const auto& m : mutants::catalogue) {
    if (!o.only.empty() && std::find(o.only.begin(), o.only.end(), m.id) == o.only.end()) continue;
    nlohmann::json row{{"id", m.id},       {"key", m.key},     {"description", m.bug},
                       {"where", m.where}, {"input", m.input}, {"expected_killer", m.killer}};
    if (!reaches(m, s)) {
      row["killed"] = nullptr;
      row["killed_by"] = std::string(m.where) == "gpu-test" ? std::string("not run here: named GPU test, ") + m.killer
                                                            : "not run: no selected backend contains it";
      fmt::print("{:>3} {:<28} {:<8} {:<8}\n", m.id, m.key, m.where, "not run");
      out["mutants"].push_back(row);
      continue;
    }
    ++reachable;
    RunOptions opt;
    opt.mutant = m.id;
    t0 = std::chrono::steady_clock::now();
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < checks.size(); ++i)
      if (checks[i].name == m.killer) order.push_back(i);
    for (std::size_t i = 0; i < checks.size(); ++i)
      if (checks[i].name != m.killer) order.push_back(i);
    std::string by, reason;
    for (std::size_t i : order)
      if (auto f = checks[i].run(s, opt)) {
        by = checks[i].name;
        reason = *f;
        if (!passes_unmutated(i)) {  // not a kill: the check fails without the mutant too
          fmt::print("{}\n", baseline_failure);
          return 1;
        }
        break;
      }
    const double dt = seconds_since(t0);
    killed += !by.empty();
    row["killed"] = !by.empty();
    row["killed_by"] = by;
    row["reason"] = reason.substr(0, 300);
    row["seconds"] = dt;
    out["mutants"].push_back(row);
    fmt::print("{:>3} {:<28} {:<8} {:<8} {:<34} {:>7.2f}\n", m.id, m.key, m.where, by.empty() ? "SURVIVED" : "killed",
               by.empty() ? "-" : by, dt);
  }
  const auto baselined = std::count(baseline.begin(), baseline.end(), 1);
  fmt::print("\nunmutated: the {} checks that killed pass without a mutant ({:.1f} s)\n", baselined, baseline_seconds);
  out["baselined_checks"] = baselined;
  const double score = reachable ? 100.0 * killed / reachable : 0.0;
  fmt::print("\nmutation score: {}/{} reachable mutants killed ({:.1f} %)\n", killed, reachable, score);
  out["killed"] = killed;
  out["reachable"] = reachable;
  if (!o.json_path.empty()) std::ofstream(o.json_path) << out.dump(2) << "\n";
  if (reachable == 0) {  // a campaign that ran no mutant judged nothing: not a pass
    fmt::print("NOTHING JUDGED: no selected mutant reaches the selected backends\n");
    return 1;
  }
  return killed == reachable ? 0 : 1;
}

}  // namespace ixo
