// `ixo mutate`: the mutation campaign. Runs the check list once per catalogued mutant
// (kernels/common/mutants.hpp), the catalogue's expected killer first, stopping at the first
// check that fails (the kill); each killing check must pass unmutated (run once, when it
// first kills). Prints the kill matrix and the mutation score. --no-mutants: every check
// unmutated (the operator mutator's killer).
#pragma once
#include <string>
#include <vector>

namespace ixo {

struct MutateOptions {
  std::vector<std::string> backends;  // empty: every available backend
  std::string json_path;              // write {"mutants": [...]} here
  std::vector<int> only;              // run just these mutant ids (empty: all)
  bool no_mutants = false;            // only the unmutated run (used by the operator mutator)
  int property_cases = 30;
};

// Exit status: 0 all reachable mutants killed (and their killers pass unmutated), 1 otherwise.
int run_mutate(const MutateOptions& o);

}  // namespace ixo
