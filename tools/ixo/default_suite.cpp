#include "default_suite.hpp"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>

#include "backend.hpp"
#include "ixo/case_io.hpp"
#include "ixo/generate.hpp"
#include "ixo/oracle.hpp"
#include "ixo/verdict.hpp"

namespace ixo {

namespace {

struct Row {
  Row(std::string b, std::string g) : backend(std::move(b)), group(std::move(g)) {}
  std::string backend, group, status = "PASS";
  int cases = 0;
  std::int64_t checked = 0, tie_swaps = 0, failures = 0;
  double seconds = 0;
  std::vector<std::string> reports;
};

constexpr std::uint64_t kSeeds[] = {1, 2};

void absorb(Row& row, const Verdict& v) {
  row.checked += v.rows_checked;
  row.tie_swaps += v.tie_swaps;
  row.failures += v.failures;
  for (const auto& r : v.reports)
    if (row.reports.size() < 4) row.reports.push_back(r);
}

bool selected(const std::vector<std::string>& only, const std::string& name) {
  return only.empty() || std::find(only.begin(), only.end(), name) != only.end();
}

}  // namespace

const std::vector<std::string>& suite_groups() {
  static const std::vector<std::string> g = {"tiny",    "verify",         "boundary",      "km-slots", "fp8-e4m3fn",
                                             "fp8-e4m3fnuz", "e5m2-lse",  "gqa",           "padding",  "local0",
                                             "exact",   "near-tie",       "topk-above-nb", "forced-overlap"};
  return g;
}

std::vector<Case> suite_cases(const std::string& group) {
  std::vector<Case> out;
  for (auto seed : kSeeds) out.push_back(generate(preset(group), seed));
  return out;
}

bool run_default_suite(const std::vector<std::string>& only, bool json) {
  std::vector<std::string> names = {"oracle-naive", "external"};
  for (const auto& n : backend_names()) names.push_back(n);
  for (const auto& n : only)
    if (std::find(names.begin(), names.end(), n) == names.end()) make_backend(n);  // throws: unknown backend
  const auto tmp = std::filesystem::temp_directory_path() /
                   fmt::format("ixo-suite-{}", std::random_device{}());
  std::vector<Row> rows;
  for (const auto& group : suite_groups()) {
    const GenSpec spec = preset(group);
    const bool exact = spec.values == Values::exact;
    const std::vector<Case> cases = suite_cases(group);
    std::vector<Expected> expected;
    for (const auto& c : cases) expected.push_back(oracle(c));
    std::vector<Observed> runs_of_rows;  // for the packed == rows bitwise row
    for (const auto& name : names) {
      if (!selected(only, name)) continue;
      Row row(name, group);
      const auto t0 = std::chrono::steady_clock::now();
      std::unique_ptr<Backend> backend;
      if (name != "oracle-naive" && name != "external") {
        backend = make_backend(name);
        std::string why;
        if (!backend->available(&why)) {
          row.status = "SKIP";
          row.reports.push_back(why);
          rows.push_back(row);
          continue;
        }
      }
      for (std::size_t i = 0; i < cases.size(); ++i) {
        const Case& c = cases[i];
        std::string why;
        if (backend && !backend->supports(c, &why)) {
          if (row.reports.empty()) row.reports.push_back("unsupported: " + why);
          continue;
        }
        ++row.cases;
        if (name == "oracle-naive") {  // the two oracle implementations agree bit for bit
          absorb(row, compare_bitwise(expected_as_observed(oracle_naive(c)), expected_as_observed(expected[i])));
        } else if (name == "external") {  // the file path: case and outputs through .npy
          const auto dir = (tmp / fmt::format("{}-{}", group, i)).string();
          save_case(c, dir);
          const Case back = load_case(dir);
          save_observed(expected_as_observed(oracle(back)), dir);
          const Observed o = load_observed(back, dir + "/topk_idx.npy", dir + "/scores.npy");
          JudgeOptions opt;
          opt.exact_ids = true;
          absorb(row, judge(back, expected[i], o, opt));
        } else {
          JudgeOptions opt;
          opt.exact_ids = exact;
          opt.check_poison = true;
          const Observed o = backend->run(c);
          absorb(row, judge(c, expected[i], o, opt));
        }
      }
      row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (row.failures) row.status = "FAIL";
      else if (row.cases == 0) row.status = "SKIP";
      rows.push_back(row);
    }
    // Packed backends must equal their per-row twin bit for bit.
    for (const auto& name : names) {
      const auto pos = name.rfind("-packed");
      if (pos == std::string::npos || !selected(only, name)) continue;
      const std::string twin = name.substr(0, pos) + "-rows";
      if (std::find(names.begin(), names.end(), twin) == names.end()) continue;
      Row row(name + "==" + twin, group);
      auto a = make_backend(name), b = make_backend(twin);
      std::string why;
      if (!a->available(&why) || !b->available(&why)) {
        row.status = "SKIP";
        row.reports.push_back(why);
        rows.push_back(row);
        continue;
      }
      const auto t0 = std::chrono::steady_clock::now();
      for (const auto& c : cases) {
        if (!a->supports(c, &why) || !b->supports(c, &why)) continue;
        ++row.cases;
        absorb(row, compare_bitwise(a->run(c), b->run(c)));
      }
      if (row.cases == 0 && !row.failures) row.status = "SKIP";
      row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (row.failures) row.status = "FAIL";
      rows.push_back(row);
    }
  }
  std::filesystem::remove_all(tmp);

  bool pass = true;
  int n_pass = 0, n_fail = 0, n_skip = 0;
  for (const auto& r : rows) {
    pass &= r.status != "FAIL";
    (r.status == "PASS" ? n_pass : r.status == "FAIL" ? n_fail : n_skip)++;
  }
  if (json) {
    nlohmann::json j;
    j["pass"] = pass;
    for (const auto& r : rows)
      j["rows"].push_back({{"backend", r.backend}, {"group", r.group}, {"status", r.status}, {"cases", r.cases},
                           {"rows_checked", r.checked}, {"tie_swaps", r.tie_swaps}, {"failures", r.failures},
                           {"seconds", r.seconds}, {"reports", r.reports}});
    std::cout << j.dump(2) << "\n";
    return pass;
  }
  fmt::print("{:<28} {:<16} {:>5} {:>9} {:>9} {:>8} {:>8}  {}\n", "backend", "case group", "cases", "head-rows", "tie-swaps",
             "failures", "seconds", "verdict");
  for (const auto& r : rows) {
    fmt::print("{:<28} {:<16} {:>5} {:>9} {:>9} {:>8} {:>8.2f}  {}\n", r.backend, r.group, r.cases, r.checked, r.tie_swaps,
               r.failures, r.seconds, r.status);
    if (r.status != "PASS")
      for (const auto& m : r.reports) fmt::print("    {}\n", m);
  }
  fmt::print("\n{} PASS, {} FAIL, {} SKIP (skipped rows are not passes) -> {}\n", n_pass, n_fail, n_skip,
             pass ? "PASS" : "FAIL");
  return pass;
}

}  // namespace ixo
