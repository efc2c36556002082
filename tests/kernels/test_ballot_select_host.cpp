// The device code of kernels/gpu/ballot_select.cuh (the vote selection of the top-k kernel's
// knob IXO_TOPK_BALLOT) run on the host: one CTA of 256 fibers through kernels/sim_host's stand-in
// for gpu_port.hpp (barriers for __syncthreads and the warp votes). Built twice: 32-lane warps
// (CUDA) and 64-lane ones (HIP). Each case's ids are compared with the oracle's select_topk on the
// same scores (ties to the lowest ids; with ties_high, the tie_rule_reversed mutant's rule, with
// select_topk on the reversed row), each warp's bound (step 1) and whether the call fell back to the
// radix select with the ones worked out here from each warp's own keys.
// This is what checks the vote selection without a GPU; on the H200, CudaTopk/TopkRadix runs it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <ostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gpu/ballot_select.cuh"  // IXO_SIM_HOST: through kernels/sim_host/gpu_port_host.hpp
#include "gpu/topk_kernel.cuh"    // score_key_hi: the top-k kernel's key of a score
#include "ixo/oracle.hpp"

namespace ixo::test {
namespace {

constexpr int NT = 256;
using gpu::detail::BallotShared;

using gpu::detail::score_key_hi;

struct VoteRun {
  bool selected;                           // false: fell back (nothing emitted)
  std::vector<std::int32_t> ids;           // by output position; -7 = never written
  std::vector<std::uint32_t> warp_bounds;  // step 1's result, read from the shared memory after the run
  int bad_emits = 0;                       // positions out of range or written twice
};

VoteRun run_ballot_topk(const std::vector<float>& row, int kept, bool ties_high, bool lane_max) {
  const std::int64_t n = static_cast<std::int64_t>(row.size());
  VoteRun run{false, std::vector<std::int32_t>(kept, -7), {}, 0};
  BallotShared<NT> shared;
  std::vector<unsigned char> returned(NT);
  std::vector<int> bad(NT, 0);
  simt_host::run_cta(NT, 0, 1, [&] {
    const unsigned t = threadIdx.x;
    auto key = [&](std::int64_t j) { return score_key_hi(row[static_cast<std::size_t>(j)]); };
    auto emit = [&](std::uint32_t pos, std::int64_t j) {
      if (pos >= static_cast<std::uint32_t>(kept) || run.ids[pos] != -7) {
        ++bad[t];
        return;
      }
      run.ids[pos] = static_cast<std::int32_t>(j);  // distinct positions: no two threads write one
    };
    const bool done = lane_max ? gpu::detail::ballot_topk_any<NT, true>(n, key, kept, ties_high, shared, emit)
                               : gpu::detail::ballot_topk_any<NT, false>(n, key, kept, ties_high, shared, emit);
    returned[t] = done ? 1 : 0;
  });
  run.selected = returned[0] != 0;
  run.warp_bounds.assign(shared.warp_bound, shared.warp_bound + BallotShared<NT>::kWarps);
  for (int t = 0; t < NT; ++t) {
    EXPECT_EQ(returned[t], returned[0]) << "thread " << t << ": the return must be the same in the whole CTA";
    run.bad_emits += bad[t];
  }
  return run;
}

// The oracle's ids (ascending); ties_high: the highest ids among equal scores (the reversed row).
std::vector<std::int32_t> expected_ids(const std::vector<float>& row, int kept, bool ties_high) {
  const std::int64_t n = static_cast<std::int64_t>(row.size());
  std::vector<double> s(row.begin(), row.end());
  if (ties_high) std::reverse(s.begin(), s.end());
  std::vector<std::int32_t> ids(kept);
  select_topk(s.data(), n, kept, ids.data());
  if (ties_high)
    for (auto& id : ids) id = static_cast<std::int32_t>(n - 1 - id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

// Each warp's bound: the kept-th largest of its keys (a warp of W lanes holds ids [w W M, (w + 1) W
// M), M = 1, 2, 4, 8 or 16 keys a lane, lane l the ids = l mod W), 0 when it holds no more than kept;
// lane_max (M > 1, kept <= W): the kept-th largest of its lanes' largest keys. The selection gathers
// the keys at or above the largest bound.
std::vector<std::uint32_t> warp_bounds(const std::vector<float>& row, int kept, bool lane_max) {
  const std::int64_t n = static_cast<std::int64_t>(row.size());
  std::int64_t m = 1;
  while (m * NT < n) m *= 2;
  const std::int64_t span = IXO_WARP_SIZE * m;
  std::vector<std::uint32_t> bounds(NT / IXO_WARP_SIZE, 0);
  for (std::int64_t lo = 0, w = 0; lo < n; lo += span, ++w) {
    std::vector<std::uint32_t> keys, lane_top(IXO_WARP_SIZE, 0);
    for (std::int64_t j = lo; j < std::min(n, lo + span); ++j) {
      keys.push_back(score_key_hi(row[j]));
      lane_top[(j - lo) % IXO_WARP_SIZE] = std::max(lane_top[(j - lo) % IXO_WARP_SIZE], keys.back());
    }
    if (static_cast<int>(keys.size()) <= kept) continue;
    if (lane_max && m > 1 && kept <= IXO_WARP_SIZE) keys = lane_top;
    std::nth_element(keys.begin(), keys.begin() + (kept - 1), keys.end(), std::greater<>());
    bounds[w] = keys[kept - 1];
  }
  return bounds;
}

enum class Family { random, few_values, all_equal, special_values, rising, falling };
const char* family_name(Family f) {
  constexpr const char* names[] = {"random", "few_values", "all_equal", "special_values", "rising", "falling"};
  return names[static_cast<int>(f)];
}

std::vector<float> make_row(int n, Family f, std::mt19937& rng) {
  std::uniform_real_distribution<float> ud(0.25f, 4.0f);
  std::vector<float> row(n);
  for (int i = 0; i < n; ++i) {
    switch (f) {
      case Family::random:
        row[i] = (rng() & 1) ? ud(rng) : -ud(rng);
        break;
      case Family::few_values:
        row[i] = 1.0f + static_cast<float>(rng() % 5);
        break;  // wide ties
      case Family::all_equal:
        row[i] = 2.0f;
        break;
      case Family::special_values:  // NaN (lowest), +-inf, no zeros (the oracle's doubles tie +0 and -0)
        row[i] = i % 5 == 0    ? std::numeric_limits<float>::quiet_NaN()
                 : i % 11 == 1 ? std::numeric_limits<float>::infinity()
                 : i % 13 == 2 ? -std::numeric_limits<float>::infinity()
                               : -ud(rng);
        break;
      case Family::rising:
        row[i] = 1.0f + static_cast<float>(i);
        break;  // the top k in the last warp's ids
      case Family::falling:
        row[i] = static_cast<float>(n - i);
        break;
    }
  }
  return row;
}

struct BallotCase {
  int n, kept;
  Family family;
  bool ties_high;
  bool lane_max = false;  // IXO_TOPK_BALLOT=2's bound
};

// The case table: n from one key a CTA to 16 keys a thread (the knob's limit, 4096), kept from 1
// to its limit 64, warps with fewer keys than kept (n 33, 300), every family (at 4096 four of them),
// both tie rules where ties occur, and the lane-max bound where it applies (several keys a lane,
// kept <= 16).
std::vector<BallotCase> ballot_cases() {
  std::vector<BallotCase> cases;
  for (int n : {1, 33, 300, 1000, 1024, 4096})
    for (int kept : {1, 16, 64})
      for (Family f : {Family::random, Family::few_values, Family::all_equal, Family::special_values, Family::rising,
                       Family::falling}) {
        if (kept > n) continue;
        // 16 keys a thread costs ~1 s a case here (16 votes a probe, each a barrier round of 32
        // threads): there, kept 16 and 64 and the families that differ in what they exercise.
        if (n == 4096 && (kept == 1 || f == Family::all_equal || f == Family::falling)) continue;
        if (n == 4096 && IXO_WARP_SIZE == 64) continue;  // 64-lane warps: the layout's logic, up to M = 4
        cases.push_back({n, kept, f, false});
        if (f == Family::few_values || f == Family::all_equal) cases.push_back({n, kept, f, true});
        if (kept <= 16 && n >= 300) cases.push_back({n, kept, f, false, true});
      }
  return cases;
}

void PrintTo(const BallotCase& c, std::ostream* os) {
  *os << "n " << c.n << ", kept " << c.kept << ", " << family_name(c.family) << (c.ties_high ? ", ties high" : "")
      << (c.lane_max ? ", lane-max bound" : "");
}

class BallotSelectHost : public ::testing::TestWithParam<BallotCase> {};

TEST_P(BallotSelectHost, IdsMatchTheOracleOrFallBackOnAWideTie) {
  const BallotCase c = GetParam();
  std::mt19937 rng(static_cast<std::uint32_t>(c.n * 131 + c.kept * 7 + static_cast<int>(c.family)));
  const std::vector<float> row = make_row(c.n, c.family, rng);
  const VoteRun run = run_ballot_topk(row, c.kept, c.ties_high, c.lane_max);
  const std::vector<std::uint32_t> bounds = warp_bounds(row, c.kept, c.lane_max);
  EXPECT_EQ(run.warp_bounds, bounds) << "each warp's bound (step 1)";
  const std::uint32_t bound = *std::max_element(bounds.begin(), bounds.end());
  const std::int64_t gathered =
      std::count_if(row.begin(), row.end(), [&](float v) { return score_key_hi(v) >= bound; });
  EXPECT_EQ(run.selected, gathered <= BallotShared<NT>::kCap)
      << gathered << " keys at or above the warps' bound (falls back above " << BallotShared<NT>::kCap << ")";
  EXPECT_EQ(run.bad_emits, 0) << "positions out of range or written twice";
  if (run.selected)
    EXPECT_EQ(run.ids, expected_ids(row, c.kept, c.ties_high));
  else
    EXPECT_EQ(run.ids, std::vector<std::int32_t>(c.kept, -7)) << "a fallback must emit nothing";
}

INSTANTIATE_TEST_SUITE_P(Votes, BallotSelectHost, ::testing::ValuesIn(ballot_cases()),
                         [](const ::testing::TestParamInfo<BallotCase>& i) {
                           std::ostringstream name;
                           name << "n" << i.param.n << "_k" << i.param.kept << "_" << family_name(i.param.family)
                                << (i.param.ties_high ? "_ties_high" : "") << (i.param.lane_max ? "_lane_max" : "");
                           return name.str();
                         });

}  // namespace
}  // namespace ixo::test
