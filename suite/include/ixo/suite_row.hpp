// One row of the suite's verdict table (a backend x a case group, fixture or property):
// what the checks (suite_checks.hpp) return and the default suite (default_suite.hpp) prints.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ixo/verdict.hpp"

namespace ixo {

struct SuiteRow {
  SuiteRow(std::string b, std::string g) : backend(std::move(b)), group(std::move(g)) {}
  std::string backend, group,
      status = "PASS";  // PASS, FAIL, SKIP (never a pass) or OUTSIDE (the contract excludes every case)
  int cases = 0, skipped = 0, outside = 0;
  std::int64_t checked = 0, tie_swaps = 0, failures = 0;
  double seconds = 0;
  std::vector<std::string> reports;
  void absorb(const Verdict& v);  // counts a judged case's rows, tie swaps, failures, reports
  void finish(double secs);       // status FAIL on failures, SKIP when no case ran
};

}  // namespace ixo
