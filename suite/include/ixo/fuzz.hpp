// Fuzzing: random seeds under a time budget, for any backends (built-in, exec:, Python
// callables), each judged inside its contract (ixo/contract.hpp): cases are drawn inside
// the contract's domain and judged under its semantics. Each failing case is shrunk by
// RapidCheck, reduced to the rows that fail, and written as a regression case directory
// whose failure.txt holds the exact replay command.
#pragma once
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend.hpp"
#include "ixo/contract.hpp"
#include "ixo/coverage.hpp"

namespace ixo {

struct FuzzOptions {
  double seconds = 20;        // budget (> 0); infinity only with max_seeds
  std::uint64_t seed = 1;     // first seed of this shard
  int shard = 0, shards = 1;  // seeds seed + shard, seed + shard + shards, ...
  int cases_per_seed = 25;
  std::string out_dir;               // where shrunk failing cases go (checked writable first)
  int mutant = 0;                    // test builds: run in-tree backends with this catalogued bug
  std::vector<std::string> presets;  // draw from these presets only (empty: the full generator)
  int max_failures = 0;              // stop after this many failures (0: run the whole budget)
  int max_seeds = 0;                 // stop after this many seeds (0: only the time budget): fixed runs
  bool coverage = false;             // tally the boundary conditions the judged cases hit (coverage.hpp)
  // The kernel's contract; none: each backend's own (its traits; "spec" for outside kernels).
  std::optional<Contract> contract;
  int shapes = 0;              // > 0: at most this many compile-time tuples a backend (JIT kernels)
  std::function<bool()> poll;  // extra interrupt check between cases (Python signals)
};

struct FuzzResult {
  int runs = 0;                             // (seed, backend) property runs
  int cases = 0;                            // cases judged and passed
  int judged = 0;                           // cases judged (passed or failed)
  int skipped = 0;                          // cases the kernel declined (Unsupported): never passes
  int outside = 0;                          // drawn cases outside the contract (presets only), not run
  int gave_up = 0;                          // runs where the backend declined (almost) every case
  bool interrupted = false;                 // Ctrl-C (or an Interrupted kernel) stopped the run
  bool out_of_time = false;                 // the budget ended the run
  double seconds = 0;                       // wall time of the run
  std::vector<std::string> contracts;       // the contract each backend was judged under (label)
  std::vector<std::string> failures;        // regression directories written
  std::string report;                       // the first failure's report
  std::optional<coverage::Tally> coverage;  // with FuzzOptions::coverage
  // PASS (judged >= 1, no failure, not interrupted), FAIL, NOTHING JUDGED or INTERRUPTED.
  std::string outcome() const;
  bool passed() const { return outcome() == "PASS"; }
  std::string summary() const;  // one line: outcome, counts, why
};

// Validates o (InputError naming the field: seconds, cases_per_seed, shapes, out, ...) before
// any work. `log` receives one message per failure and a closing summary line.
FuzzResult run_fuzz(const std::vector<Backend*>& backends, const FuzzOptions& o,
                    const std::function<void(const std::string&)>& log = {});

}  // namespace ixo
