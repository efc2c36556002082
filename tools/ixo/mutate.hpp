// `ixo mutate`: the mutation campaign. Runs the check list unmutated (it must pass), then
// once per catalogued mutant (kernels/common/mutants.hpp), stopping at the first check
// that fails (the kill), and prints the kill matrix and the mutation score.
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

// Exit status: 0 all reachable mutants killed (and the unmutated run passed), 1 otherwise.
int run_mutate(const MutateOptions& o);

}  // namespace ixo
