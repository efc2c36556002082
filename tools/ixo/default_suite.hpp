// The embedded default suite behind `ixo check` with no case.
#pragma once
#include <string>
#include <vector>

namespace ixo {

// Runs every case group over every selected backend (all when `only` is empty), prints a
// verdict table (or JSON) and returns true when nothing failed. Unavailable backends are
// reported as SKIP, never as PASS.
bool run_default_suite(const std::vector<std::string>& only, bool json);

}  // namespace ixo
