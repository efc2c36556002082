// Experiment row 57's round plan (kernels/common/round_plan.hpp): the packed fp8 one-wave plan whose chunks
// are weighted by the CTA's dispatch round. Off in the default build (IXO_FP8_ROUND_PLAN 0), so these tests
// drive its functions through a NativePlan built here; a build with the knob runs test_graph_plan's
// coverage checks on it too (docs/experiments/round-plan.sh builds one).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "plans.hpp"

namespace cm = ixo::common;

namespace {

// The blocks of every chunk of one program, from a plain loop over the program's CTAs: CTA (program,
// chunk c) is x = c * batch + program of K head kvh, linear id kvh * batch * chunks + x, round
// min(id / 132, rounds - 1), weight 64 + skew * (rounds - 1 - round); chunk c owns
// [floor(nb * W(c) / W), floor(nb * W(c + 1) / W)) of the weights' running sum W.
std::vector<std::int64_t> expected_starts(std::int64_t nb, std::int64_t batch, int chunks, std::int64_t program,
                                          int kvh, int rounds, int skew) {
  std::vector<std::int64_t> w(static_cast<std::size_t>(chunks));
  std::int64_t total = 0;
  for (int c = 0; c < chunks; ++c) {
    const std::int64_t id = static_cast<std::int64_t>(kvh) * batch * chunks + c * batch + program;
    std::int64_t r = id / 132;
    if (r > rounds - 1) r = rounds - 1;
    w[static_cast<std::size_t>(c)] = 64 + skew * (rounds - 1 - r);
    total += w[static_cast<std::size_t>(c)];
  }
  std::vector<std::int64_t> starts{0};
  std::int64_t run = 0;
  for (int c = 0; c < chunks; ++c) {
    run += w[static_cast<std::size_t>(c)];
    starts.push_back(nb * run / total);
  }
  return starts;
}

TEST(RoundPlan, ChunksMatchTheirRoundsWeights) {
  std::mt19937_64 g(57);
  auto pick = [&](std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(g); };
  for (int trial = 0; trial < 3000; ++trial) {
    const std::int64_t batch = pick(1, 40), hk = pick(1, 4);
    const int chunks = static_cast<int>(pick(1, 400 / (batch * hk) + 1));
    const int rounds = static_cast<int>(pick(1, 4)), skew = static_cast<int>(pick(0, 5));
    const std::int64_t nb = pick(0, 2000), program = pick(0, batch - 1);
    const int kvh = static_cast<int>(pick(0, hk - 1));
    const std::vector<std::int64_t> want = expected_starts(nb, batch, chunks, program, kvh, rounds, skew);
    for (int c = 0; c < chunks; ++c) {
      std::int64_t b0 = -1, b1 = -1;
      cm::round_chunk_blocks(nb, batch, chunks, program, kvh, c, rounds, skew, &b0, &b1);
      ASSERT_EQ(b0, want[static_cast<std::size_t>(c)]) << "batch " << batch << " chunks " << chunks << " program "
                                                       << program << " kvh " << kvh << " chunk " << c << " nb " << nb;
      ASSERT_EQ(b1, want[static_cast<std::size_t>(c) + 1]) << "chunk " << c;
    }
  }
}

// The plan computes in 32 bits (round_plan.hpp's RoundInt) but for nb x (a chunk's weight sum), which takes 64 bits
// once it passes 2^32 (the last chunk's, the whole sum, first): the tiles on both sides of that line, and far
// beyond it, keep their chunks.
TEST(RoundPlan, HugeTilesTakeTheWideShares) {
  const std::int64_t batch = 16, program = 5;
  const int chunks = 24, rounds = 3, skew = 2;
  std::int64_t total = 0;  // the weight sum, from the test's own loop (as expected_starts)
  for (int c = 0; c < chunks; ++c) {
    const std::int64_t id = c * batch + program;
    total += 64 + skew * (rounds - 1 - std::min<std::int64_t>(id / 132, rounds - 1));
  }
  const std::int64_t line = static_cast<std::int64_t>(0xffffffffu / static_cast<std::uint32_t>(total));
  for (std::int64_t nb : {line - 1, line, line + 1, line * 3 + 7, std::int64_t{1} << 40}) {
    const std::vector<std::int64_t> want = expected_starts(nb, batch, chunks, program, 0, rounds, skew);
    for (int c = 0; c < chunks; ++c) {
      std::int64_t b0 = -1, b1 = -1;
      cm::round_chunk_blocks(nb, batch, chunks, program, 0, c, rounds, skew, &b0, &b1);
      ASSERT_EQ(b0, want[static_cast<std::size_t>(c)]) << "nb " << nb << " chunk " << c;
      ASSERT_EQ(b1, want[static_cast<std::size_t>(c) + 1]) << "nb " << nb << " chunk " << c;
    }
  }
}

TEST(RoundPlan, ChunksPartitionEveryTile) {
  for (std::int64_t nb = 0; nb <= 300; nb += 7)
    for (std::int64_t batch : {1, 3, 16, 33})
      for (int chunks : {1, 5, 12, 24})
        for (int kvh : {0, 1})
          for (std::int64_t program = 0; program < batch; program += 5) {
            std::int64_t next = 0;
            for (int c = 0; c < chunks; ++c) {
              std::int64_t b0 = -1, b1 = -1;
              cm::round_chunk_blocks(nb, batch, chunks, program, kvh, c, 3, 2, &b0, &b1);
              ASSERT_EQ(b0, next) << "nb " << nb << " batch " << batch << " chunks " << chunks << " chunk " << c;
              ASSERT_LE(b0, b1);
              next = b1;
            }
            ASSERT_EQ(next, nb) << "nb " << nb << " batch " << batch << " chunks " << chunks;
          }
}

// The plan the experiment targets: 16 requests x 1025 blocks, 24 chunks, 384 CTAs in 3 rounds. The first
// round's CTAs take the most blocks, the last round's the fewest; every request's blocks are all owned.
TEST(RoundPlan, TheE4m3fnThroughputShapeShiftsBlocksToTheFirstRounds) {
  cm::NativePlan p;
  p.pack = 4;
  p.batch = 16;
  p.chunks = 24;
  p.rounds = 3;
  p.round_skew = 2;
  std::int64_t blocks[3] = {0, 0, 0}, ctas[3] = {0, 0, 0}, least[3] = {1 << 20, 1 << 20, 1 << 20}, most[3] = {0, 0, 0};
  std::vector<std::int64_t> owned(16, 0);
  for (std::int64_t x = 0; x < p.grid_x(); ++x) {
    const cm::ProgramChunk pc = cm::plan_program_chunk(p, x);
    EXPECT_EQ(pc.program, x % 16);  // chunk-major
    EXPECT_EQ(pc.chunk, x / 16);
    std::int64_t b0, b1;
    cm::plan_chunk_blocks(p, 1025, pc.program, 0, pc.chunk, &b0, &b1);
    const int r = static_cast<int>(x / 132 < 2 ? x / 132 : 2);
    blocks[r] += b1 - b0;
    ++ctas[r];
    least[r] = std::min(least[r], b1 - b0);
    most[r] = std::max(most[r], b1 - b0);
    owned[static_cast<std::size_t>(pc.program)] += b1 - b0;
  }
  for (std::int64_t o : owned) EXPECT_EQ(o, 1025);
  EXPECT_EQ(ctas[0], 132);
  EXPECT_EQ(ctas[1], 132);
  EXPECT_EQ(ctas[2], 120);
  // A program has 8-9 chunks in each round, weights 68 / 66 / 64: 1025 x 68 / ~1584 = ~44.0 blocks a
  // first-round CTA, ~41.4 a last-round one (the equal plan: 43 each, the last chunk 36).
  const double mean0 = static_cast<double>(blocks[0]) / ctas[0], mean2 = static_cast<double>(blocks[2]) / ctas[2];
  EXPECT_GT(mean0 - mean2, 2.0) << mean0 << " vs " << mean2;
  EXPECT_LT(mean0 - mean2, 3.5) << mean0 << " vs " << mean2;
  EXPECT_GE(least[0], 43);
  EXPECT_LE(most[0], 45);
  EXPECT_GE(least[2], 40);
  EXPECT_LE(most[2], 42);
}

// native_plan turns the round plan on only in a build with IXO_FP8_ROUND_PLAN=1, and there only for the
// packed fp8 plans of more than one round of one wave; every other plan keeps chunk_blocks' chunks.
TEST(RoundPlan, NativePlanUsesItOnlyWhereTheKnobAndTheShapeAsk) {
  cm::IndexConfig k;
  k.R = 64;
  k.Hq = 1;
  k.Hk = 1;
  k.NB = 1025;
  k.packed_queries = 4;
  k.k_code = cm::kE4m3fn;
  const cm::NativePlan fp8 = cm::native_plan(k, true);
  EXPECT_EQ(fp8.chunks, 24);
  EXPECT_EQ(fp8.rounds, IXO_FP8_ROUND_PLAN ? 3 : 0);
  k.k_code = cm::kBf16;
  EXPECT_EQ(cm::native_plan(k, true).rounds, 0);  // bf16: DRAM-bound, no dispatch-order effect
  k.k_code = cm::kE4m3fn;
  EXPECT_EQ(cm::native_plan(k, false).rounds, 0);  // per-row
  k.NB = 32;                                       // 16 programs x 8 chunks: one round
  EXPECT_EQ(cm::native_plan(k, true).rounds, 0);
  // Without rounds the plan's chunks are chunk_blocks' and its order program-major.
  cm::NativePlan off = fp8;
  off.rounds = 0;
  for (int c = 0; c < off.chunks; ++c) {
    std::int64_t a0, a1, b0, b1;
    cm::plan_chunk_blocks(off, 1025, 3, 0, c, &a0, &a1);
    cm::chunk_blocks(1025, off.chunks, c, &b0, &b1);
    EXPECT_EQ(a0, b0);
    EXPECT_EQ(a1, b1);
  }
  EXPECT_EQ(cm::plan_program_chunk(off, 50).program, 50 / 24);
  EXPECT_EQ(cm::plan_program_chunk(off, 50).chunk, 50 % 24);
}

// The chunk mutants keep their meaning on the round plan: a tile's last block unowned, or each chunk's.
TEST(RoundPlan, ChunkMutantsBreakItsCoverage) {
  auto covered = [](int mutant) {
    std::int64_t next = 0;
    bool gap = false;
    for (int c = 0; c < 24; ++c) {
      std::int64_t b0, b1;
      cm::round_chunk_blocks(1025, 16, 24, 5, 0, c, 3, 2, &b0, &b1, mutant);
      gap = gap || b0 != next;
      next = b1;
    }
    return !gap && next == 1025;
  };
  EXPECT_TRUE(covered(0));
#if defined(IXO_ENABLE_MUTANTS)
  EXPECT_FALSE(covered(ixo::mutants::chunk_floor_division));
  EXPECT_FALSE(covered(ixo::mutants::chunk_last_block_dropped));
#endif
}

}  // namespace
