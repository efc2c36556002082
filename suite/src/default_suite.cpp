#include "ixo/default_suite.hpp"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <random>

#include "ixo/backend_properties.hpp"
#include "ixo/case_io.hpp"
#include "ixo/case_run.hpp"
#include "ixo/fixture.hpp"
#include "ixo/generate.hpp"
#include "ixo/oracle.hpp"
#include "ixo/property_runner.hpp"

namespace ixo {

namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kSeeds[] = {1, 2};

void absorb(SuiteRow& row, const Verdict& v) {
  row.checked += v.rows_checked;
  row.tie_swaps += v.tie_swaps;
  row.failures += v.failures;
  for (const auto& r : v.reports)
    if (row.reports.size() < 4) row.reports.push_back(r);
}

void finish(SuiteRow& row, std::chrono::steady_clock::time_point t0) {
  row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (row.failures) row.status = "FAIL";
  else if (row.cases == 0) row.status = "SKIP";
}

// One case through one backend into a table row.
void judge_into(SuiteRow& row, Backend& b, const Case& c, const Expected& e, bool exact) {
  std::string why;
  if (!b.supports(c, &why)) {
    ++row.skipped;
    if (row.reports.empty()) row.reports.push_back("unsupported: " + why);
    return;
  }
  JudgeOptions opt;
  opt.exact_ids = exact;
  opt.check_poison = true;
  const CaseRun run = run_and_judge(b, c, e, opt);
  if (run.skipped) {
    ++row.skipped;
    if (row.reports.empty()) row.reports.push_back("unsupported: " + run.skip_reason);
    return;
  }
  ++row.cases;
  absorb(row, run.verdict);
}

// The oracle's own rows: naive == fast bit for bit, and the .npy file path round trip.
void self_test_rows(const std::string& group, const std::vector<Case>& cases, const std::vector<Expected>& expected,
                    const fs::path& tmp, std::vector<SuiteRow>& rows) {
  SuiteRow naive{"self-test: oracle-naive", group}, files{"self-test: npy round trip", group};
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < cases.size(); ++i) {
    ++naive.cases;
    absorb(naive, compare_bitwise(expected_as_observed(oracle_naive(cases[i])), expected_as_observed(expected[i])));
  }
  finish(naive, t0);
  const auto t1 = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto dir = (tmp / fmt::format("{}-{}", group, i)).string();
    save_case(cases[i], dir);
    const Case back = load_case(dir);
    save_observed(expected_as_observed(oracle(back)), dir);
    JudgeOptions opt;
    opt.exact_ids = true;
    ++files.cases;
    absorb(files, judge(back, expected[i], load_observed(back, dir + "/topk_idx.npy", dir + "/scores.npy"), opt));
  }
  finish(files, t1);
  rows.push_back(naive);
  rows.push_back(files);
}

struct NamedProperty {
  const char* name;
  void (*body)(Backend&, const RunOptions&);
  bool in_tree_only;  // needs RunOptions (forced chunk counts) that outside kernels ignore
};

constexpr NamedProperty kProperties[] = {
    {"matches-oracle", &props::matches_oracle, false},
    {"exact-ids", &props::exact_values_give_exact_ids, false},
    {"near-ties", &props::near_ties_stay_within_tau, false},
    {"padding-rows", &props::padding_and_inactive_rows_disturb_nothing, false},
    {"slot-relabel", &props::relabeling_slots_changes_nothing, false},
    {"chunking", &props::chunking_changes_nothing, true},
};

SuiteRow property_row(const std::string& backend, const std::string& name, const SuiteOptions& opt,
                      const std::string& out_dir, const std::function<void()>& body) {
  SuiteRow row{backend, "prop:" + name};
  const auto t0 = std::chrono::steady_clock::now();
  const PropertyResult r = run_property("suite/" + backend + "/" + name, opt.property_cases, opt.seed, body);
  row.cases = r.cases;
  if (r.status == PropertyResult::Status::failed) {
    row.failures = 1;
    std::string where = "(no drawn case to write)";
    if (r.counterexample) {
      Regression reg;
      reg.dir = (fs::path(out_dir) / fmt::format("prop-{}-{}", name, r.counterexample->seed)).string();
      reg.backend = backend;
      reg.what = fmt::format("property {} (ixo check --seed {})", name, opt.seed);
      reg.report = r.message;
      write_regression(reg, r.counterexample->spec, r.counterexample->seed);
      where = reg.dir;
    }
    row.reports.push_back("shrunk case written to " + where + "; replay: " + replay_command(where, backend));
    row.reports.push_back(r.message);
  } else if (r.status == PropertyResult::Status::gave_up) {
    row.reports.push_back("gave up (too many unsupported cases): " + r.message);
  }
  finish(row, t0);
  return row;
}

}  // namespace

const std::vector<std::string>& suite_groups() {
  static const std::vector<std::string> g = {"tiny",    "verify",         "boundary",      "km-slots", "fp8-e4m3fn",
                                             "fp8-e4m3fnuz", "e5m2-lse",  "gqa",           "padding",  "local0",
                                             "exact",   "near-tie",       "topk-above-nb", "forced-overlap",
                                             "graph-padded"};
  return g;
}

std::vector<Case> suite_cases(const std::string& group) {
  std::vector<Case> out;
  for (auto seed : kSeeds) out.push_back(generate(preset(group), seed));
  return out;
}

SuiteResult run_suite(const std::vector<Backend*>& all, const SuiteOptions& opt) {
  SuiteResult result;
  std::vector<Backend*> backends;
  for (Backend* b : all) {
    std::string why;
    if (b->available(&why)) backends.push_back(b);
    else result.unavailable.push_back(b->name() + ": " + why);
  }
  // Our own packed kernels must equal their per-row twin bit for bit.
  std::vector<std::pair<Backend*, std::unique_ptr<Backend>>> twins;
  for (Backend* b : backends)
    if (auto t = packed_twin(*b); t && t->available()) twins.emplace_back(b, std::move(t));

  const fs::path tmp = fs::temp_directory_path() / fmt::format("ixo-suite-{}", std::random_device{}());
  auto& rows = result.rows;
  for (const auto& group : suite_groups()) {
    const bool exact = preset(group).values == Values::exact;
    const std::vector<Case> cases = suite_cases(group);
    std::vector<Expected> expected;
    for (const auto& c : cases) expected.push_back(oracle(c));
    if (opt.self_tests) self_test_rows(group, cases, expected, tmp, rows);
    for (Backend* b : backends) {
      SuiteRow row{b->name(), group};
      const auto t0 = std::chrono::steady_clock::now();
      for (std::size_t i = 0; i < cases.size(); ++i) judge_into(row, *b, cases[i], expected[i], exact);
      finish(row, t0);
      rows.push_back(row);
    }
    for (auto& [packed, twin] : twins) {
      SuiteRow row{packed->name() + "==" + twin->name(), group};
      const auto t0 = std::chrono::steady_clock::now();
      for (const auto& c : cases) {
        if (!packed->supports(c) || !twin->supports(c)) continue;
        ++row.cases;
        absorb(row, compare_bitwise(packed->run(c), twin->run(c)));
      }
      finish(row, t0);
      rows.push_back(row);
    }
  }

  if (opt.fixtures) {
    const auto files = list_fixtures();
    std::vector<Fixture> fixtures;
    std::vector<Expected> expected;
    for (const auto& f : files) {
      fixtures.push_back(load_fixture(f));
      expected.push_back(oracle(fixtures.back().c));
    }
    for (Backend* b : backends) {
      SuiteRow row{b->name(), "fixtures"};
      const auto t0 = std::chrono::steady_clock::now();
      for (std::size_t i = 0; i < fixtures.size(); ++i) {
        const auto before = row.failures;
        judge_into(row, *b, fixtures[i].c, expected[i], fixtures[i].exact_ids);
        if (row.failures > before && row.reports.size() < 8) row.reports.push_back("  in fixture " + fixtures[i].file.path);
      }
      finish(row, t0);
      rows.push_back(row);
    }
  }

  if (opt.properties) {
    const std::string out_dir = opt.out_dir.empty() ? (tmp.string() + "-failures") : opt.out_dir;
    for (Backend* b : backends) {
      for (const auto& p : kProperties) {
        if (p.in_tree_only && !b->in_tree()) continue;
        rows.push_back(property_row(b->name(), p.name, opt, out_dir, [&] { p.body(*b, RunOptions{}); }));
      }
    }
    for (auto& [packed, twin] : twins)
      rows.push_back(property_row(packed->name(), "packed==rows", opt, out_dir,
                                  [&] { props::packed_equals_rows(*twin, *packed, RunOptions{}); }));
  }
  std::error_code ec;
  fs::remove_all(tmp, ec);

  for (const auto& r : rows) result.passed &= r.status != "FAIL";
  return result;
}

std::string SuiteResult::table(bool failures_only) const {
  std::string s;
  for (const auto& u : unavailable) s += fmt::format("unavailable here, skipped: {}\n", u);
  s += fmt::format("{:<28} {:<18} {:>5} {:>5} {:>9} {:>9} {:>8} {:>8}  {}\n", "backend", "case group", "cases", "skip",
                   "head-rows", "tie-swaps", "failures", "seconds", "verdict");
  int n_pass = 0, n_fail = 0, n_skip = 0;
  for (const auto& r : rows) {
    (r.status == "PASS" ? n_pass : r.status == "FAIL" ? n_fail : n_skip)++;
    if (failures_only && r.status != "FAIL") continue;
    s += fmt::format("{:<28} {:<18} {:>5} {:>5} {:>9} {:>9} {:>8} {:>8.2f}  {}\n", r.backend, r.group, r.cases, r.skipped,
                     r.checked, r.tie_swaps, r.failures, r.seconds, r.status);
    if (r.status != "PASS")
      for (const auto& m : r.reports) s += "    " + m + "\n";
  }
  s += fmt::format("\n{} PASS, {} FAIL, {} SKIP (skipped rows and cases are not passes) -> {}\n", n_pass, n_fail, n_skip,
                   passed ? "PASS" : "FAIL");
  return s;
}

nlohmann::json SuiteResult::json() const {
  nlohmann::json j;
  j["pass"] = passed;
  j["unavailable"] = unavailable;
  j["rows"] = nlohmann::json::array();
  for (const auto& r : rows)
    j["rows"].push_back({{"backend", r.backend}, {"group", r.group}, {"status", r.status}, {"cases", r.cases},
                         {"skipped", r.skipped}, {"rows_checked", r.checked}, {"tie_swaps", r.tie_swaps},
                         {"failures", r.failures}, {"seconds", r.seconds}, {"reports", r.reports}});
  return j;
}

}  // namespace ixo
