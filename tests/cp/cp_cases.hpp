// Cases of the CP test suites (CPU twin and GPU): the ROCm packed-CP PR's verify batch,
// world sizes, slot tables, padding, and a long context whose winners all sit in one shard.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ixo/case.hpp"
#include "ixo/generate.hpp"
#include "ixo/observed.hpp"

namespace ixo::cptest {

// The ROCm PR's packed verify case: 4 requests x 4 draft rows ending at 32767..32770
// (prefix 255*128+126: one group mixes 256- and 257-block rows), M3 block 128, topk 16,
// init 1, local 2 (the CP tests' values), WORLD = Hq = 4, permuted gapped slots.
GenSpec rocm_pr_spec(KDtype k);
// A verify batch with WORLD = Hq heads (small: bs 16, topk 4, D 64, init 1, local 2).
GenSpec world_spec(int world, int draft_rows);
// Long context where, for head h, the blocks b = (s + h) (mod WORLD) score highest: every
// winner that is not forced sits in one shard. bs 128, topk 16, init 1, local 2, exact
// (tie-free at the k-th place) bf16 values.
Case winners_in_one_shard(int world, int shard, std::int64_t prefix, int requests);

// Number of (head, row) pairs whose id lists differ.
std::int64_t differing_rows(const Observed& a, const Observed& b);

}  // namespace ixo::cptest
