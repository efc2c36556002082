// The work-claim protocol of the packed score kernel (kernels/common/work_claims.hpp;
// IXO_PACKED_CLAIMS), run on the host with one thread per warp: the same claim_block and
// claim_resets the kernel calls, std::atomic for its atomicAdd / atomicExch, and the kernel's
// end-of-tile sequence (count the warp done; the W-th count resets both counters). What the
// tests derive independently: every block of [0, nb) must be scored exactly once a launch,
// and the counters must be back at zero after every launch, so back-to-back launches (graph
// replays) on one workspace each see all their blocks. The GPU side (the counters of real
// launches and replays) is checked by test_gpu / test_gpu_graph in a build with the knob.
//
// Seen to fail on injected bugs (temporarily, one at a time, reverted): claim_resets one warp
// early (done_before == W - 2) and the first dynamic ticket W - 1 + taken (overlapping the
// static tickets) each fail HandWorkedTickets, EveryBlockOnceBackToBack and ManyInterleavings;
// the end-of-tile count skipped by the warps that took no block (as if the kernel returned
// early for them): EveryBlockOnceBackToBack (the counters never reset, from its nb 1 row on).
// The claim grid (claim_part), in a build with -DIXO_PACKED_CLAIMS=1 -DIXO_BF16_PACKED_WAVE=1: a
// program's first CTA rounded down instead of up: ClaimGridWalksThePrograms, ClaimGridHandWorked and
// two tiling edges (threshold_packed_wave_groups133 / 199); one CTA too many counted a program (its
// chunks spread over a CTA that is not there): 134 tests of test_kernels_cpu (the twin's testbed:
// unscored cells) and test_graph_plan's MaxShapePlanCoversSmallerBatchesPacked.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include "gpu/indexer_launch.hpp"
#include "work_claims.hpp"

namespace cm = ixo::common;

namespace {

struct Counters {
  std::atomic<std::int32_t> taken{0}, done{0};
};

// One launch of a tile of nb blocks over `ctas` CTAs (ctas * kScoreWarps warps, one thread
// each); returns how many times each block was taken. `seed` varies the interleaving.
std::vector<int> launch(Counters& ctr, int ctas, std::int64_t nb, unsigned seed) {
  std::vector<std::atomic<int>> hits(static_cast<std::size_t>(nb));
  std::vector<std::thread> warps;
  for (int cta = 0; cta < ctas; ++cta)
    for (int warp = 0; warp < cm::kScoreWarps; ++warp)
      warps.emplace_back([&, cta, warp] {
        std::mt19937 rng(seed * 7919u + static_cast<unsigned>(cta * cm::kScoreWarps + warp));
        const cm::ClaimWork w{cta, ctas, nullptr};
        cm::ClaimState s = cm::claim_start();
        std::int32_t ticket_ahead = 0;
        for (;;) {  // as the kernel: the next ticket taken right after a successful claim
          const std::int64_t b = cm::claim_block(w, warp, nb, s, [&] { return ticket_ahead; });
          if (b < 0) break;
          ticket_ahead = ctr.taken.fetch_add(1);
          hits[static_cast<std::size_t>(b)].fetch_add(1);
          if (rng() % 3 == 0) std::this_thread::yield();  // a slow warp now and then
        }
        // The kernel's end of the tile (indexer_kernels.cuh): every warp counts itself done.
        if (cm::claim_resets(w, ctr.done.fetch_add(1))) {
          ctr.taken.store(0);
          ctr.done.store(0);
        }
      });
  for (std::thread& t : warps) t.join();
  std::vector<int> out;
  for (const std::atomic<int>& h : hits) out.push_back(h.load());
  return out;
}

// Blocks taken other than once, as text (empty: none).
std::string wrong_blocks(const std::vector<int>& hits) {
  std::string s;
  for (std::size_t b = 0; b < hits.size(); ++b)
    if (hits[b] != 1 && s.size() < 200) s += " block " + std::to_string(b) + " x" + std::to_string(hits[b]);
  return s;
}

}  // namespace

// Tickets worked by hand: 2 CTAs = 8 warps, nb 10. Warp 3 of CTA 1 takes ticket 1 * 4 + 3 = 7
// first (no atomic), then 8 + taken: with taken 0 and 1 the blocks 8 and 9, then 8 + 2 = 10 >=
// nb: done. Warp 0 of CTA 0 with taken 5: 0, then 13 -> done.
TEST(WorkClaims, HandWorkedTickets) {
  const cm::ClaimWork w{1, 2, nullptr};
  EXPECT_EQ(cm::claim_warps(w), 8);
  std::int32_t taken = 0;
  auto take = [&] { return taken++; };
  cm::ClaimState s = cm::claim_start();
  EXPECT_EQ(cm::claim_block(w, 3, 10, s, take), 7);
  EXPECT_EQ(taken, 0);  // the first ticket takes no atomic
  EXPECT_EQ(cm::claim_block(w, 3, 10, s, take), 8);
  EXPECT_EQ(cm::claim_block(w, 3, 10, s, take), 9);
  EXPECT_EQ(cm::claim_block(w, 3, 10, s, take), -1);
  EXPECT_TRUE(s.exhausted);
  EXPECT_EQ(s.claimed, 3);
  EXPECT_EQ(cm::claim_block(w, 3, 10, s, take), -1);  // stays done, takes nothing more
  EXPECT_EQ(taken, 3);

  const cm::ClaimWork w0{0, 2, nullptr};
  std::int32_t t5 = 5;
  cm::ClaimState s0 = cm::claim_start();
  EXPECT_EQ(cm::claim_block(w0, 0, 10, s0, [&] { return t5++; }), 0);
  EXPECT_EQ(cm::claim_block(w0, 0, 10, s0, [&] { return t5++; }), -1);  // 8 + 5 = 13
  // The 8th warp's count (7 warps done before it) resets; no other does.
  EXPECT_TRUE(cm::claim_resets(w, 7));
  EXPECT_FALSE(cm::claim_resets(w, 6));
  EXPECT_FALSE(cm::claim_resets(w, 8));
}

// Back-to-back launches on one pair of counters (a graph's replays, or steps of different
// lengths): each takes every block once and leaves the counters at zero. The rows include
// fewer blocks than warps (warps with nothing to score must still count themselves done), one
// block, exact multiples, and the 16 x 131072 plans' tiles (16 and 24 CTAs, 1025 blocks).
TEST(WorkClaims, EveryBlockOnceBackToBack) {
  struct Row {
    int ctas;
    std::int64_t nb[3];
  };
  const Row rows[] = {{1, {1, 4, 5}},   {1, {3, 9, 2}},         {2, {7, 8, 17}},       {3, {2, 40, 5}},
                      {4, {16, 33, 1}}, {16, {1025, 50, 1025}}, {24, {1025, 1025, 43}}};
  unsigned seed = 1;
  for (const Row& r : rows) {
    Counters ctr;
    for (const std::int64_t nb : r.nb) {
      const std::vector<int> hits = launch(ctr, r.ctas, nb, seed++);
      EXPECT_EQ(wrong_blocks(hits), "") << r.ctas << " CTAs, nb " << nb;
      EXPECT_EQ(ctr.taken.load(), 0) << r.ctas << " CTAs, nb " << nb << ": tickets counter not reset";
      EXPECT_EQ(ctr.done.load(), 0) << r.ctas << " CTAs, nb " << nb << ": done counter not reset";
    }
  }
}

// Many interleavings of one shape: 8 CTAs (32 warps) over 300 blocks, 30 launches in a row.
TEST(WorkClaims, ManyInterleavings) {
  Counters ctr;
  for (unsigned seed = 100; seed < 130; ++seed) {
    const std::vector<int> hits = launch(ctr, 8, 300, seed);
    ASSERT_EQ(wrong_blocks(hits), "") << "launch seed " << seed;
    ASSERT_EQ(ctr.taken.load() + ctr.done.load(), 0) << "launch seed " << seed << ": counters not reset";
  }
}

// Every (program, K head) has its own pair of counters inside the workspace the harnesses
// allocate (gpu::work_counter_bytes(R, Hk): the batch of a packed grid is at most R).
TEST(WorkClaims, CounterOffsetsDistinctAndInside) {
  for (std::int64_t R : {1, 2, 7, 64, 65}) {
    for (std::int64_t hk : {1, 2, 8}) {
      for (int P : {1, 2, 4, 8}) {
        const std::int64_t batch = cm::packed_batch(R, P);
        ASSERT_LE(batch, R);
        const std::int64_t words = static_cast<std::int64_t>(ixo::gpu::work_counter_bytes(R, hk) / 4);
        std::vector<int> used(static_cast<std::size_t>(words), 0);
        for (std::int64_t h = 0; h < hk; ++h)
          for (std::int64_t x = 0; x < batch; ++x) {
            const std::int64_t o = cm::claim_counter_offset(x, h, batch);
            ASSERT_GE(o, 0);
            ASSERT_LE(o + 2, words) << "R " << R << " hk " << hk << " P " << P;
            EXPECT_EQ(used[static_cast<std::size_t>(o)]++, 0) << "program " << x << " head " << h << " shares counters";
            EXPECT_EQ(used[static_cast<std::size_t>(o + 1)]++, 0);
          }
      }
    }
  }
}

// The claim grid (plans.hpp claim_part: every slot of the one-wave plan over P programs),
// checked against what it must be rather than its formula: CTAs 0..G-1 walk the programs in
// order, each program's CTAs numbered 0..c-1 with c the same for all of them, every program
// holding floor(G / P) or ceil(G / P) CTAs.
TEST(WorkClaims, ClaimGridWalksThePrograms) {
  for (std::int64_t P = 1; P <= 40; ++P) {
    for (std::int64_t G = P; G <= 3 * P + 7; ++G) {
      std::int64_t program = 0, i = 0, count = 0;
      std::vector<std::int64_t> ctas(static_cast<std::size_t>(P), 0);
      for (std::int64_t x = 0; x < G; ++x) {
        const cm::CtaPart part = cm::claim_part(x, P, G);
        if (x > 0 && part.program != program) {
          ASSERT_EQ(part.program, program + 1) << "P " << P << " G " << G << " x " << x;
          program = part.program;
          i = 0;
        }
        ASSERT_EQ(part.program, program) << "P " << P << " G " << G << " x " << x;
        ASSERT_EQ(part.work.chunk, i++) << "P " << P << " G " << G << " x " << x;
        ASSERT_EQ(part.work.span_ctas, 0);  // static chunks, not balanced spans
        ++ctas[static_cast<std::size_t>(program)];
        ++count;
      }
      ASSERT_EQ(program, P - 1) << "P " << P << " G " << G << ": a program without CTAs";
      for (std::int64_t x = 0; x < G; ++x) {
        const cm::CtaPart part = cm::claim_part(x, P, G);
        ASSERT_EQ(part.work.chunks, ctas[static_cast<std::size_t>(part.program)]) << "P " << P << " G " << G;
        ASSERT_TRUE(part.work.chunks == G / P || part.work.chunks == (G + P - 1) / P) << "P " << P << " G " << G;
      }
      ASSERT_EQ(count, G);
    }
  }
}

// 16 x 131072 worked by hand: 264 bf16 slots over 16 programs = 16.5 a program: program g starts
// at ceil(16.5 g): 0, 17, 33, 50, ... (17, 16, 17, 16 CTAs); 396 e4m3fn slots = 24.75: 0, 25, 50,
// 75, 99 (25, 25, 25, 24). Whether the plan takes it: BalancedPlan.CtasAndThePlan.
TEST(WorkClaims, ClaimGridHandWorked) {
  EXPECT_EQ(cm::claim_part(16, 16, 264).program, 0);
  EXPECT_EQ(cm::claim_part(16, 16, 264).work.chunks, 17);
  EXPECT_EQ(cm::claim_part(17, 16, 264).program, 1);
  EXPECT_EQ(cm::claim_part(17, 16, 264).work.chunk, 0);
  EXPECT_EQ(cm::claim_part(32, 16, 264).work.chunk, 15);
  EXPECT_EQ(cm::claim_part(33, 16, 264).program, 2);
  EXPECT_EQ(cm::claim_part(263, 16, 264).program, 15);
  EXPECT_EQ(cm::claim_part(263, 16, 264).work.chunk, 15);  // program 15 starts at ceil(247.5) = 248
  EXPECT_EQ(cm::claim_part(74, 16, 396).program, 2);
  EXPECT_EQ(cm::claim_part(75, 16, 396).program, 3);
  EXPECT_EQ(cm::claim_part(98, 16, 396).work.chunks, 24);
  EXPECT_EQ(cm::claim_part(99, 16, 396).program, 4);
}
