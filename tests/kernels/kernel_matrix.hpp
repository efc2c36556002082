// The kernel case matrix: its table and the testbed run that judges every in-tree backend on it
// are in test_kernel_matrix.cpp; the other kernel tests of test_kernels_cpu (the twin's thread
// and poison invariants, the cell plan) reuse its rows through these two functions.
#pragma once
#include <string>
#include <vector>

#include "ixo_test/support.hpp"

namespace ixo::test {

// Every row of the table (test_kernel_matrix.cpp), built once.
const std::vector<NamedCase>& kernel_cases();
// The row called `name`, or nullptr.
const NamedCase* kernel_case_named(const std::string& name);
// Every `every`-th row (all of them for every <= 1): the heavier variant checks.
std::vector<NamedCase> kernel_cases_subset(int every);

}  // namespace ixo::test
