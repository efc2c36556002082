// The suite's checks, one backend and one check at a time. run_suite (the `ixo check`
// table, the Python package) and the GoogleTest conformance suite (conformance.hpp) are
// both loops over these; neither repeats a judging loop of its own.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend.hpp"
#include "ixo/case.hpp"
#include "ixo/contract.hpp"
#include "ixo/fixture.hpp"
#include "ixo/generate.hpp"
#include "ixo/oracle.hpp"
#include "ixo/suite_row.hpp"

namespace ixo {

// A case of the suite with its oracle outputs (computed once, shared by every backend).
struct JudgedCase {
  Case c;
  Expected e;
  bool exact = false;           // tier 3 applies
  std::string label;            // "group tiny seed 1", "fixture boundary-32767"
  std::optional<GenSpec> spec;  // generated cases: spec + seed rebuild it
  std::uint64_t seed = 0;
};
// suite_cases(group) / a fixture, with the oracle's outputs unless with_oracle is false
// (bitwise twin checks need none).
std::vector<JudgedCase> group_cases(const std::string& group, bool with_oracle = true);
JudgedCase fixture_case(const Fixture& f, bool with_oracle = true);

// The properties of the suite. in_tree_only: needs RunOptions (forced chunk counts) that
// outside kernels ignore.
struct SuiteProperty {
  const char* name;
  void (*body)(Backend&, const RunOptions&);
  bool in_tree_only;
};
const std::vector<SuiteProperty>& suite_properties();

// Where a check writes failing cases and how it names them.
struct CheckOptions {
  int property_cases = 12;
  std::uint64_t seed = 20261201;
  std::string failure_dir;                   // "" = failing cases are not written
  RunOptions run;                            // the launch options of every run (poison bits, ...)
  std::shared_ptr<const Contract> contract;  // judged under (null: the spec); cases outside are not run
};

// Each returns one table row (status PASS, FAIL or SKIP, never a pass for a skip). A
// failing case is written under failure_dir (when set) and the row's reports say where and
// give its replay command.
SuiteRow check_cases(Backend& b, const std::string& group, const std::vector<JudgedCase>& cases,
                     const CheckOptions& opt);
SuiteRow check_twin_cases(Backend& b, Backend& twin, const std::string& group, const std::vector<JudgedCase>& cases);
SuiteRow check_property(Backend& b, const SuiteProperty& p, const CheckOptions& opt);
SuiteRow check_twin_property(Backend& b, Backend& twin, const CheckOptions& opt);

}  // namespace ixo
