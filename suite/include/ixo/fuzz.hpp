// Fuzzing: random seeds under a time budget, for any backends (built-in, exec:, Python
// callables). Each failing case is shrunk by RapidCheck and written as a regression case
// directory whose failure.txt holds the exact replay command.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "backend.hpp"
#include "ixo/coverage.hpp"

namespace ixo {

struct FuzzOptions {
  double seconds = 20;
  std::uint64_t seed = 1;             // first seed of this shard
  int shard = 0, shards = 1;          // seeds seed + shard, seed + shard + shards, ...
  int cases_per_seed = 25;
  std::string out_dir;                // where shrunk failing cases go
  int mutant = 0;                     // test builds: run in-tree backends with this catalogued bug
  std::vector<std::string> presets;   // draw from these presets only (empty: the full generator)
  int max_failures = 0;               // stop after this many failures (0: run the whole budget)
  int max_seeds = 0;                  // stop after this many seeds (0: only the time budget): fixed runs
  bool coverage = false;              // tally the boundary conditions the judged cases hit (coverage.hpp)
};

struct FuzzResult {
  int runs = 0;                       // (seed, backend) property runs
  int cases = 0;                      // cases that ran and passed
  int gave_up = 0;                    // runs where the backend declined (almost) every case
  std::vector<std::string> failures;  // shrunk regression directories written
  std::string report;                 // the first failure's report
  std::optional<coverage::Tally> coverage;  // with FuzzOptions::coverage
};

// `log` receives one message per failure and a closing summary line.
FuzzResult run_fuzz(const std::vector<Backend*>& backends, const FuzzOptions& o,
                    const std::function<void(const std::string&)>& log = {});

}  // namespace ixo
