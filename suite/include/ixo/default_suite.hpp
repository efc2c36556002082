// The whole suite for any set of backends (built-in, exec:, Python callables): the
// embedded default suite (preset case groups), the fixtures (canonical + fuzz
// regressions), the properties with shrinking, and packed == per-row bitwise for our own
// packed kernels. `ixo check` and indexer_oracle.suite() print its table.
#pragma once
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "backend.hpp"
#include "ixo/case.hpp"
#include "ixo/contract.hpp"
#include "ixo/suite_row.hpp"
#include "ixo/verdict.hpp"

namespace ixo {

// The case groups of the default suite (generator presets) and their cases (seeds 1, 2).
const std::vector<std::string>& suite_groups();
std::vector<Case> suite_cases(const std::string& group);
const std::vector<std::uint64_t>& suite_seeds();  // the generator seeds of suite_cases, in order

struct SuiteOptions {
  bool self_tests = false;                   // rows that check the oracle itself (naive == fast, .npy round trip)
  bool groups = true;                        // the preset case groups (the kernel case matrix)
  bool fixtures = true;                      // fixtures/canonical + fixtures/regressions
  bool properties = true;                    // property rows (RapidCheck, fixed seed, shrinking)
  int property_cases = 12;                   // cases per property and backend
  std::vector<std::string> only_properties;  // non-empty: only these property rows (names of suite_properties())
  std::uint64_t seed = 20261201;
  std::string out_dir;               // shrunk property failures are written here ("" = a temporary folder)
  std::optional<Contract> contract;  // judged under (none: each backend's own, "spec" for outside kernels)
  std::function<bool()> poll;        // extra interrupt check between cases (Python signals)
};

struct SuiteResult {
  bool passed = true;                       // no failure, not interrupted, and every backend judged >= 1 case
  bool interrupted = false;                 // Ctrl-C stopped the run
  std::vector<std::string> nothing_judged;  // backends that judged no case at all (every case skipped)
  std::vector<std::string> contracts;       // "backend: contract label", one per backend run
  std::string outcome() const;              // PASS, FAIL, NOTHING JUDGED or INTERRUPTED
  std::vector<std::string> unavailable;     // "name: why", one line per backend that cannot run here
  std::vector<SuiteRow> rows;
  std::string table(bool failures_only = false) const;  // as `ixo check` prints it
  nlohmann::json json() const;
};

// Runs everything over the given backends. Unavailable backends are listed once and
// skipped; unsupported cases are counted as skipped, never as passed.
SuiteResult run_suite(const std::vector<Backend*>& backends, const SuiteOptions& opt = {});

}  // namespace ixo
