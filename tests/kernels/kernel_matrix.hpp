// The kernel case matrix: its table and the testbed run that judges every in-tree backend on it
// are in test_kernel_matrix.cpp; the other kernel tests of test_kernels_cpu (the twin's thread
// and poison invariants, the cell plan, the sim backends) reuse its rows through these functions.
#pragma once
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "ixo_test/support.hpp"
#include "ixo_test/testbed.hpp"

namespace ixo::test {

// Every row of the table (test_kernel_matrix.cpp), built once.
const std::vector<NamedCase>& kernel_cases();
// The row called `name`, or nullptr.
const NamedCase* kernel_case_named(const std::string& name);
// Every `every`-th row (all of them for every <= 1): the heavier variant checks.
std::vector<NamedCase> kernel_cases_subset(int every);

// A catalogue mutant and the row that exposes it (KernelMatrixCatches, SimCatches).
struct MutantRow {
  int mutant;
  std::string row;
};
void PrintTo(const MutantRow& k, std::ostream* os);
std::string mutant_row_name(const ::testing::TestParamInfo<MutantRow>& i);  // "mutant<id>_<row>"
// The failures the testbed finds (intercepted_failures) on k's row with k's mutant on `backends`
// (an unknown row is a test failure, and 0).
int failures_with_mutant(const std::vector<std::string>& backends, const MutantRow& k, const TestbedChecks& checks);

}  // namespace ixo::test
