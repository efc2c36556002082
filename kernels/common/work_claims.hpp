// Work claims of the packed score kernel (IXO_PACKED_CLAIMS=1; default 0: not yet measured on
// the H200). docs/performance.md "Session 19": a one-wave launch loses its last ~5.7 us (bf16)
// / ~4.2 us (fp8) to rate differences between SMs and between the CTAs of one SM, which no
// static plan removes; a simulation from session 17's CTA timelines (docs/experiments/tail_sim.py:
// per-SM rates, blocks handed out one at a time on every slot) predicts for the 16 x 131072 launch
// bf16 the read bound (126.9 us; measured 132.1 on the chunk plan) and e4m3fn 73.8 us (79.6).
//
// The protocol, one packed tile of nb blocks scored by the `ctas` CTAs of its program (the claim
// grid, plans.hpp claim_part: every slot of the one-wave plan; or the chunk plan's chunks when a
// chunk count is forced) and their W = ctas * kScoreWarps warps:
//   - warp w = cta * kScoreWarps + warp takes ticket w first (no atomic: the start chain is the
//     chunk plan's), then tickets W + counter[0]++ (one atomic a block); ticket t is block t; the
//     kernel takes each dynamic ticket as soon as the warp's previous claim succeeded (its value
//     is read a block later), so a warp takes as many tickets as when it takes them on demand;
//   - a warp whose ticket is >= nb stops, and counts itself in counter[1]; the warp that counts
//     the W-th resets both counters to 0, so the next launch (stream order, a graph replay)
//     finds them zeroed without a reset node. Each warp's last ticket precedes its count (a
//     fence between), so no ticket is taken after the reset.
// Every block of the tile is scored by exactly one warp, in whole (the scores are those of the
// chunk plan, bit for bit: a block's score never depends on which warp computes it). The
// counters live in the caller's workspace (gpu::IndexArgs::work_counters, zeroed once when
// allocated, one per launch that may run concurrently); without one the kernel runs the chunk
// plan. Host and device share these functions; tests/kernels/test_work_claims.cpp runs the
// protocol with threads for warps.
#pragma once
#include <cstdint>

#include "indexer_common.hpp"
#include "plans.hpp"

namespace ixo::common {

// What a packed tile under work claims needs: its CTA among the program's, how many, and the
// program's two counters (tickets taken, warps done).
struct ClaimWork {
  int cta, ctas;
  std::int32_t* counter;
};
// A warp's claim state (warp-uniform on the GPU).
struct ClaimState {
  std::int64_t claimed;  // tickets that gave a block
  bool exhausted;        // a ticket was >= nb: no more blocks for this warp
};
IXO_HD ClaimState claim_start() { return ClaimState{0, false}; }
IXO_HD int claim_warps(const ClaimWork& w) { return w.ctas * kScoreWarps; }
// The next block of warp `warp` of CTA w.cta (-1: none left). take() gives the old value of
// counter[0] of the warp's next dynamic ticket (the kernel's, added after its previous success);
// it is called for every ticket after the first.
template <class Take>
IXO_HD std::int64_t claim_block(const ClaimWork& w, int warp, std::int64_t nb, ClaimState& s, Take&& take) {
  if (s.exhausted) return -1;
  const std::int64_t t = s.claimed == 0 ? static_cast<std::int64_t>(w.cta) * kScoreWarps + warp
                                        : claim_warps(w) + static_cast<std::int64_t>(take());
  if (t >= nb) {
    s.exhausted = true;
    return -1;
  }
  ++s.claimed;
  return t;
}
// Whether the warp whose count found `done_before` warps done resets the counters.
IXO_HD bool claim_resets(const ClaimWork& w, std::int32_t done_before) { return done_before == claim_warps(w) - 1; }
// The counters of (row-axis program, K head kvh) of a grid of `batch` row-axis programs, in a
// workspace of gpu::work_counter_bytes(R, Hk) (batch <= R).
IXO_HD std::int64_t claim_counter_offset(std::int64_t program, std::int64_t kvh, std::int64_t batch) {
  return 2 * (kvh * batch + program);
}

}  // namespace ixo::common
