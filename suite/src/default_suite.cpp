#include "ixo/default_suite.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <random>

#include "ixo/case_io.hpp"
#include "ixo/case_run.hpp"
#include "ixo/fixture.hpp"
#include "ixo/generate.hpp"
#include "ixo/oracle.hpp"
#include "ixo/stop.hpp"
#include "ixo/suite_checks.hpp"

namespace ixo {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// The oracle's own rows: naive == fast bit for bit, and the .npy file path round trip.
void self_test_rows(const std::string& group, const std::vector<JudgedCase>& cases, const fs::path& tmp,
                    std::vector<SuiteRow>& rows) {
  SuiteRow naive{"self-test: oracle-naive", group}, files{"self-test: npy round trip", group};
  const auto t0 = Clock::now();
  for (const auto& jc : cases) {
    ++naive.cases;
    naive.absorb(compare_bitwise(expected_as_observed(oracle_naive(jc.c)), expected_as_observed(jc.e)));
  }
  naive.finish(since(t0));
  const auto t1 = Clock::now();
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto dir = (tmp / fmt::format("{}-{}", group, i)).string();
    save_case(cases[i].c, dir);
    const Case back = load_case(dir);
    save_observed(expected_as_observed(oracle(back)), dir);
    JudgeOptions opt;
    opt.exact_ids = true;
    ++files.cases;
    files.absorb(judge(back, cases[i].e, load_observed(back, dir + "/topk_idx.npy", dir + "/scores.npy"), opt));
  }
  files.finish(since(t1));
  rows.push_back(naive);
  rows.push_back(files);
}

}  // namespace

const std::vector<std::string>& suite_groups() {
  static const std::vector<std::string> g = {
      "tiny",         "verify",    "boundary", "km-slots", "fp8-e4m3fn", "fp8-e4m3fnuz",  "e5m2-lse",
      "gqa",          "padding",   "local0",   "exact",    "near-tie",   "topk-above-nb", "forced-overlap",
      "graph-padded", "msa-sweep", "msa-q16"};
  return g;
}

const std::vector<std::uint64_t>& suite_seeds() {
  static const std::vector<std::uint64_t> s = {1, 2};
  return s;
}

std::vector<Case> suite_cases(const std::string& group) {
  std::vector<Case> out;
  for (auto seed : suite_seeds()) out.push_back(generate(preset(group), seed));
  return out;
}

SuiteResult run_suite(const std::vector<Backend*>& all, const SuiteOptions& opt) {
  SuiteResult result;
  std::vector<Backend*> backends;
  for (Backend* b : all) {
    std::string why;
    if (b->available(&why))
      backends.push_back(b);
    else
      result.unavailable.push_back(b->name() + ": " + why);
  }
  stop::StopScope scope(std::numeric_limits<double>::infinity(), opt.poll);
  // Each backend is judged inside its contract (the caller's, else its own from the registry).
  std::map<const Backend*, CheckOptions> check_opt;
  const fs::path tmp = fs::temp_directory_path() / fmt::format("ixo-suite-{}", std::random_device{}());
  for (Backend* b : backends) {
    CheckOptions& c = check_opt[b];
    c.contract = std::make_shared<const Contract>(opt.contract ? *opt.contract : named_contract(b->traits().contract));
    c.property_cases = opt.property_cases;
    c.seed = opt.seed;
    result.contracts.push_back(b->name() + ": " + c.contract->label());
  }
  // Backends that declare a bitwise twin (traits) must equal it bit for bit.
  std::vector<std::pair<Backend*, std::unique_ptr<Backend>>> twins;
  for (Backend* b : backends)
    if (auto t = make_bitwise_twin(*b); t && t->available()) twins.emplace_back(b, std::move(t));

  auto& rows = result.rows;
  for (const auto& group : suite_groups()) {
    if (stop::stopping() || !opt.groups) break;
    const std::vector<JudgedCase> cases = group_cases(group);
    if (opt.self_tests) self_test_rows(group, cases, tmp, rows);
    for (Backend* b : backends)
      rows.push_back(check_cases(*b, group, cases, check_opt[b]));  // the matrix writes no files
    for (auto& [b, twin] : twins) rows.push_back(check_twin_cases(*b, *twin, group, cases));
  }

  if (opt.fixtures && !stop::stopping()) {
    std::vector<JudgedCase> fixtures;
    for (const auto& f : list_fixtures()) fixtures.push_back(fixture_case(load_fixture(f)));
    for (Backend* b : backends) rows.push_back(check_cases(*b, "fixtures", fixtures, check_opt[b]));
  }

  if (opt.properties) {
    for (Backend* b : backends) {
      CheckOptions prop_opt = check_opt[b];
      prop_opt.failure_dir = opt.out_dir.empty() ? (tmp.string() + "-failures") : opt.out_dir;
      for (const auto& p : suite_properties()) {
        const auto& only = opt.only_properties;
        if (!only.empty() && std::find(only.begin(), only.end(), p.name) == only.end()) continue;
        if ((!p.in_tree_only || b->in_tree()) && !stop::stopping()) rows.push_back(check_property(*b, p, prop_opt));
      }
    }
    for (auto& [b, twin] : twins)
      if (!stop::stopping() && opt.only_properties.empty())
        rows.push_back(check_twin_property(*b, *twin, check_opt[b]));
  }
  std::error_code ec;
  fs::remove_all(tmp, ec);

  result.interrupted = stop::interrupted();
  for (const auto& r : rows) result.passed &= r.status != "FAIL";
  // A backend that judged nothing passed nothing: all its cases skipped (or outside its contract).
  for (Backend* b : backends) {
    int judged = 0;
    for (const auto& r : rows)
      if (r.backend == b->name()) judged += r.cases;
    if (judged == 0) result.nothing_judged.push_back(b->name());
  }
  if (backends.empty()) result.nothing_judged.push_back("(no backend can run here)");
  result.passed = result.passed && result.nothing_judged.empty() && !result.interrupted;
  return result;
}

std::string SuiteResult::outcome() const {
  for (const auto& r : rows)
    if (r.status == "FAIL") return "FAIL";
  if (interrupted) return "INTERRUPTED";
  if (!nothing_judged.empty()) return "NOTHING JUDGED";
  return "PASS";
}

std::string SuiteResult::table(bool failures_only) const {
  std::string s;
  for (const auto& u : unavailable) s += fmt::format("unavailable here, skipped: {}\n", u);
  std::size_t group_width = 18;  // the longest group name (fixtures, property rows) keeps the columns aligned
  for (const auto& r : rows) group_width = std::max(group_width, r.group.size());
  s += fmt::format("{:<28} {:<{}} {:>5} {:>5} {:>9} {:>9} {:>8} {:>8}  {}\n", "backend", "case group", group_width,
                   "cases", "skip", "head-rows", "tie-swaps", "failures", "seconds", "verdict");
  int n_pass = 0, n_fail = 0, n_skip = 0;
  for (const auto& r : rows) {
    (r.status == "PASS" ? n_pass : r.status == "FAIL" ? n_fail : n_skip)++;
    if (failures_only && r.status != "FAIL") continue;
    s += fmt::format("{:<28} {:<{}} {:>5} {:>5} {:>9} {:>9} {:>8} {:>8.2f}  {}\n", r.backend, r.group, group_width,
                     r.cases, r.skipped, r.checked, r.tie_swaps, r.failures, r.seconds, r.status);
    if (r.status != "PASS")
      for (const auto& m : r.reports) s += "    " + m + "\n";
  }
  for (const auto& c : contracts) s += "judged under " + c + "\n";
  s += fmt::format("\n{} PASS, {} FAIL, {} SKIP (skipped rows and cases are not passes) -> {}\n", n_pass, n_fail,
                   n_skip, outcome());
  if (!nothing_judged.empty())
    s += fmt::format(
        "NOTHING JUDGED: {} judged no case (every case skipped or outside the contract); a run that judged "
        "nothing is not a pass\n",
        fmt::join(nothing_judged, ", "));
  if (interrupted) s += "INTERRUPTED: Ctrl-C stopped the run; the rows above are what ran\n";
  return s;
}

nlohmann::json SuiteResult::json() const {
  nlohmann::json j;
  j["pass"] = passed;
  j["outcome"] = outcome();
  if (!nothing_judged.empty()) j["reason"] = "nothing judged: " + fmt::format("{}", fmt::join(nothing_judged, ", "));
  j["nothing_judged"] = nothing_judged;
  j["interrupted"] = interrupted;
  j["contracts"] = contracts;
  j["unavailable"] = unavailable;
  j["rows"] = nlohmann::json::array();
  for (const auto& r : rows)
    j["rows"].push_back({{"backend", r.backend},
                         {"group", r.group},
                         {"status", r.status},
                         {"cases", r.cases},
                         {"skipped", r.skipped},
                         {"outside", r.outside},
                         {"rows_checked", r.checked},
                         {"tie_swaps", r.tie_swaps},
                         {"failures", r.failures},
                         {"seconds", r.seconds},
                         {"reports", r.reports}});
  return j;
}

}  // namespace ixo
