#include "ixo/suite_checks.hpp"

#include "ixo/default_suite.hpp"  // suite_cases, suite_seeds: the preset groups
#include "ixo/judge_mutants.hpp"
#include "ixo/transform.hpp"

#include <optional>
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <optional>

#include "ixo/backend_properties.hpp"
#include "ixo/case_run.hpp"
#include "ixo/metamorphic_properties.hpp"
#include "ixo/oracle.hpp"
#include "ixo/property_runner.hpp"
#include "ixo/stop.hpp"
#include "ixo/transform.hpp"

namespace ixo {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// A failing case of the matrix or a fixture as a regression directory, named in the row.
void write_failing_case(SuiteRow& row, const Backend& b, const JudgedCase& jc, const Verdict& v,
                        const CheckOptions& opt) {
  if (opt.failure_dir.empty()) {
    row.reports.push_back("  in " + jc.label);
    return;
  }
  Regression reg;
  reg.dir = unique_regression_dir(opt.failure_dir, b.name(), jc.label, jc.seed);
  reg.backend = b.name();
  reg.what = jc.label;
  reg.report = v.summary();
  if (opt.contract && opt.contract->name != "spec") reg.contract_json = contract_to_json(*opt.contract);
  if (jc.spec)
    write_regression(reg, *jc.spec, jc.seed);
  else
    write_case_regression(reg, jc.c, jc.exact);
  row.reports.push_back(
      fmt::format("  in {}: case written to {}; replay: {}", jc.label, reg.dir, replay_command(reg.dir, reg.backend)));
}

}  // namespace

void SuiteRow::absorb(const Verdict& v) {
  checked += v.rows_checked;
  tie_swaps += v.tie_swaps;
  failures += v.failures;
  for (const auto& r : v.reports)
    if (reports.size() < 4) reports.push_back(r);
}

void SuiteRow::finish(double secs) {
  seconds = secs;
  if (failures)
    status = "FAIL";
  else if (cases == 0 && skipped == 0 && outside > 0)
    status = "OUTSIDE";
  else if (cases == 0 && !IXO_JUDGE_MUTANT(suite_skip_counted_pass))
    status = "SKIP";
}

std::vector<JudgedCase> group_cases(const std::string& group, bool with_oracle) {
  const GenSpec spec = preset(group);
  std::vector<JudgedCase> out;
  std::vector<Case> cases = suite_cases(group);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::uint64_t seed = suite_seeds()[i];
    Expected e = with_oracle ? oracle(cases[i]) : Expected{};
    out.push_back({std::move(cases[i]), std::move(e), spec.values == Values::exact,
                   fmt::format("group {} seed {}", group, seed), spec, seed});
  }
  return out;
}

JudgedCase fixture_case(const Fixture& f, bool with_oracle) {
  return {f.c, with_oracle ? oracle(f.c) : Expected{}, f.exact_ids, "fixture " + f.file.name, std::nullopt, 0};
}

const std::vector<SuiteProperty>& suite_properties() {
  static const std::vector<SuiteProperty> p = {
      {"matches-oracle", &props::matches_oracle, false},
      {"exact-ids", &props::exact_values_give_exact_ids, false},
      {"near-ties", &props::near_ties_stay_within_tau, false},
      {"padding-rows", &props::padding_and_inactive_rows_disturb_nothing, false},
      {"slot-relabel", &props::relabeling_slots_changes_nothing, false},
      {"chunking", &props::chunking_changes_nothing, true},
      {"batch-invariance", &props::batch_invariance, false},
      {"repeat-runs", &props::repeat_runs_identical, false},
  };
  return p;
}

SuiteRow check_cases(Backend& b, const std::string& group, const std::vector<JudgedCase>& cases,
                     const CheckOptions& opt) {
  SuiteRow row{b.name(), group};
  const auto t0 = Clock::now();
  for (const JudgedCase& generated : cases) {
    if (stop::stopping()) break;
    std::string why;
    // A contract without negative aliases judges the case with its aliases resolved (the same
    // truth: the oracle's outputs stay); anything else outside the contract is not run.
    std::optional<Case> resolved_case;
    if (opt.contract && !judged_form(*opt.contract, generated.c, resolved_case)) {
      ++row.outside;
      continue;
    }
    std::optional<JudgedCase> resolved;  // the saved case is then the resolved one, not the spec's
    if (resolved_case)
      resolved = JudgedCase{std::move(*resolved_case), generated.e,  generated.exact,
                            generated.label,           std::nullopt, generated.seed};
    const JudgedCase& jc = resolved ? *resolved : generated;
    if (!b.supports(jc.c, &why)) {
      ++row.skipped;
      if (row.reports.empty()) row.reports.push_back("unsupported: " + why);
      continue;
    }
    JudgeOptions j;
    if (opt.contract) j.semantics = opt.contract->semantics, j.contract = opt.contract->label();
    j.exact_ids = jc.exact;
    j.check_poison = true;  // run_and_judge keeps it for in-tree backends only
    j.poison_bits = opt.run.score_poison_bits;
    CaseRun run;
    try {
      run = run_and_judge(b, jc.c, jc.e, j, opt.run);
    } catch (const Interrupted&) {  // Ctrl-C inside the kernel: stop, neither pass nor failure
      stop::interrupt();
      break;
    }
    if (run.skipped) {
      ++row.skipped;
      if (row.reports.empty()) row.reports.push_back("unsupported: " + run.skip_reason);
      continue;
    }
    ++row.cases;
    row.absorb(run.verdict);
    if (!run.verdict.pass && row.reports.size() < 8) write_failing_case(row, b, jc, run.verdict, opt);
  }
  row.finish(since(t0));
  return row;
}

SuiteRow check_twin_cases(Backend& b, Backend& twin, const std::string& group, const std::vector<JudgedCase>& cases) {
  SuiteRow row{b.name() + "==" + twin.name(), group};
  const auto t0 = Clock::now();
  for (const JudgedCase& jc : cases) {
    if (stop::stopping()) break;
    if (!b.supports(jc.c) || !twin.supports(jc.c)) continue;
    Verdict v;
    try {
      v = compare_bitwise(b.run(jc.c), twin.run(jc.c));
    } catch (const Unsupported&) {
      continue;
    } catch (const Interrupted&) {
      stop::interrupt();
      break;
    } catch (const KernelFailure& f) {
      v = kernel_failure_verdict(f.what());
    }
    ++row.cases;
    row.absorb(v);
    if (!v.pass && row.reports.size() < 8) row.reports.push_back("  in " + jc.label);
  }
  row.finish(since(t0));
  return row;
}

namespace {

SuiteRow property_row(const Backend& b, const std::string& name, const CheckOptions& opt,
                      const std::function<void()>& body) {
  SuiteRow row{b.name(), "prop:" + name};
  const auto t0 = Clock::now();
  props::set_contract(opt.contract);
  const PropertyResult r = run_property("suite/" + b.name() + "/" + name, opt.property_cases, opt.seed, body);
  props::set_contract(nullptr);
  row.cases = r.cases;
  if (stop::interrupted()) row.cases = 0;  // the cases after the interrupt passed without running
  if (r.status == PropertyResult::Status::failed) {
    row.failures = 1;
    std::string where = "(no drawn case to write)";
    if (r.counterexample && !opt.failure_dir.empty()) {
      Regression reg;
      reg.dir = unique_regression_dir(opt.failure_dir, b.name(), "prop-" + name, r.counterexample->seed);
      reg.backend = b.name();
      reg.what = fmt::format("property {} (ixo check --seed {})", name, opt.seed);
      reg.report = r.description;
      if (opt.contract && opt.contract->name != "spec") reg.contract_json = contract_to_json(*opt.contract);
      write_regression(reg, r.counterexample->spec, r.counterexample->seed);
      where = reg.dir;
    }
    row.reports.push_back("shrunk case written to " + where + "; replay: " + replay_command(where, b.name()));
    row.reports.push_back(fmt::format("after {} passing cases and {} shrinks: {}", r.cases, r.shrinks, r.description));
  } else if (r.status == PropertyResult::Status::gave_up) {
    row.reports.push_back("gave up (too many unsupported cases): " + r.message);
  }
  row.finish(since(t0));
  return row;
}

}  // namespace

SuiteRow check_property(Backend& b, const SuiteProperty& p, const CheckOptions& opt) {
  return property_row(b, p.name, opt, [&] { p.body(b, opt.run); });
}

SuiteRow check_twin_property(Backend& b, Backend& twin, const CheckOptions& opt) {
  return property_row(b, "twin-bitwise", opt, [&] { props::packed_equals_rows(twin, b, opt.run); });
}

}  // namespace ixo
