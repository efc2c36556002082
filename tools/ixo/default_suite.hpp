// The embedded default suite behind `ixo check` with no case.
#pragma once
#include <string>
#include <vector>

#include "ixo/case.hpp"

namespace ixo {

// The case groups of the default suite (generator presets) and their cases (seeds 1, 2).
const std::vector<std::string>& suite_groups();
std::vector<Case> suite_cases(const std::string& group);

// Runs every case group over every selected backend (all when `only` is empty), prints a
// verdict table (or JSON) and returns true when nothing failed. Unavailable backends are
// reported as SKIP, never as PASS.
bool run_default_suite(const std::vector<std::string>& only, bool json);

}  // namespace ixo
