// `ixo fuzz`: random seeds under a time budget; every failing case is shrunk by
// RapidCheck and written as a case directory under fixtures/regressions/.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ixo {

struct FuzzOptions {
  double seconds = 20;
  std::vector<std::string> backends;  // empty = every available backend
  std::uint64_t seed = 1;             // first seed of this shard
  int shard = 0, shards = 1;          // seeds seed + shard, seed + shard + shards, ...
  int cases_per_seed = 25;
  std::string out_dir;                // where regressions go
  int mutant = 0;                     // test builds: run the backends with this catalogued bug
};

// Returns the number of failures found (0 = clean).
int run_fuzz(const FuzzOptions& o);

}  // namespace ixo
