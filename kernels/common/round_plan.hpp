// Experiment row 57 (docs/experiments/README.md): the packed fp8 one-wave plan with chunks weighted by the
// CTA's dispatch round. Off by default (IXO_FP8_ROUND_PLAN 0: no kernel reads it, the plan is the equal
// chunk plan of chunk_blocks); native_plan (plans.hpp) turns it on for a launch, the kernels, the CPU twin
// and the host plan descriptions all split a chunk through round_chunk_blocks below.
//
// Why: session 17's H200 CTA timeline of the packed e4m3fn 16 x 131072 launch (384 CTAs, 3 an SM, every
// CTA 43 blocks): the three CTAs of one SM end in the order they were dispatched, the first at 73.5 us
// (p50), the second at 75.6, the third at 78.3 (1.532 / 1.578 / 1.631 us a block), on every SM and for
// every request; an SM's CTAs are blockIdx x, x + ~132, x + ~264 (rounds of the 132 SMs). The fp8 bulk is
// SM-bound (87 % of the read ceiling), so the SM's warp scheduler, which favours older warps, sets the
// rates. bf16 (DRAM-bound, 2 an SM) shows no such order (its two CTAs end within 0.8 us).
// The plan: CTA x of the grid is (program x % batch, chunk x / batch) (chunk-major, so every program has
// CTAs in every round), and chunk c of a program gets the share of the program's blocks of its round's
// weight: 64 + skew * (rounds - 1 - round), a round being kPlanSms CTAs of the grid's linear order
// (y * grid_x + x). skew 2 is the timeline's ratio (1.0625 : 1.031 : 1). The scores never depend on it.
#pragma once
#include <cstdint>

#include "indexer_common.hpp"
#include "mutants.hpp"

#ifndef IXO_FP8_ROUND_PLAN
#define IXO_FP8_ROUND_PLAN 0  // 1: the packed fp8 one-wave plan weighted by dispatch round (row 57)
#endif
#ifndef IXO_FP8_ROUND_SKEW
#define IXO_FP8_ROUND_SKEW 2  // the weights' step, in 64ths (0: chunk-major order, equal shares)
#endif

namespace ixo::common {

constexpr std::int64_t kPlanSms = 132;  // the SMs of the card the plans are tuned for (H200, H100 SXM)
constexpr int kRoundWeightBase = 64;

// CTAs i in [0, c) of the arithmetic sequence base + i * stride (stride > 0) with base + i * stride < t.
IXO_HD std::int64_t ctas_below(std::int64_t base, std::int64_t stride, std::int64_t c, std::int64_t t) {
  if (t <= base) return 0;
  const std::int64_t n = ceil_div(t - base, stride);
  return n < c ? n : c;
}

// The weight of a CTA of dispatch round r of `rounds`.
IXO_HD std::int64_t round_weight(int r, int rounds, int skew) {
  return kRoundWeightBase + static_cast<std::int64_t>(skew) * (rounds - 1 - r);
}

// The linear id (y * grid_x + x) of the CTA of chunk c of program `program` (K head kvh) of a chunk-major grid
// of batch x chunks CTAs a K head.
IXO_HD std::int64_t round_plan_cta(std::int64_t batch, int chunks, std::int64_t program, int kvh, int c) {
  return (static_cast<std::int64_t>(kvh) * chunks + c) * batch + program;
}

// The weight sum of chunks [0, c) of program `program` (K head kvh) of that grid, `rounds` rounds of kPlanSms
// CTAs (the last one takes every later CTA).
IXO_HD std::int64_t round_weight_prefix(std::int64_t batch, int chunks, std::int64_t program, int kvh, int c,
                                        int rounds, int skew) {
  const std::int64_t base = round_plan_cta(batch, chunks, program, kvh, 0);
  std::int64_t sum = 0, before = 0;
  for (int r = 0; r < rounds; ++r) {
    const std::int64_t upto = r + 1 < rounds ? ctas_below(base, batch, c, (r + 1) * kPlanSms) : c;
    sum += (upto - before) * round_weight(r, rounds, skew);
    before = upto;
  }
  return sum;
}

// Blocks [*b0, *b1) of chunk c of program `program` (K head kvh) with nb blocks under the round plan.
// The two chunk mutants keep their meaning: the shares rounded so the tail has no owner
// (chunk_floor_division: the last chunk stops at its floor share of nb - 1) and each chunk's last block
// dropped (chunk_last_block_dropped).
IXO_HD void round_chunk_blocks(std::int64_t nb, std::int64_t batch, int chunks, std::int64_t program, int kvh, int c,
                               int rounds, int skew, std::int64_t* b0, std::int64_t* b1, int mutant = 0) {
  const std::int64_t total = round_weight_prefix(batch, chunks, program, kvh, chunks, rounds, skew);
  const std::int64_t lo = round_weight_prefix(batch, chunks, program, kvh, c, rounds, skew);
  const std::int64_t id = round_plan_cta(batch, chunks, program, kvh, c);
  const std::int64_t r = id / kPlanSms < rounds - 1 ? id / kPlanSms : rounds - 1;
  const std::int64_t hi = lo + round_weight(static_cast<int>(r), rounds, skew);
  const std::int64_t n = IXO_MUTANT(mutant, mutants::chunk_floor_division) && nb > 0 ? nb - 1 : nb;
  std::int64_t s = n * lo / total, e = n * hi / total;
  if (IXO_MUTANT(mutant, mutants::chunk_last_block_dropped) && e > s) e -= 1;
  *b0 = s;
  *b1 = e;
}

}  // namespace ixo::common
