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

// The plan's integers. native_plan turns the round plan on only for grids of one wave (at most
// kFp8PackedWaveSlots CTAs), so every CTA id, batch, chunk count, round and weight sum below fits 32 bits, and
// the plan computes in 32-bit unsigned: session 35's 64-bit form (13 more 64-bit divisions in the packed fp8
// kernel's start) put its CTAs' first K 5.4 us later on the H100, which lost row 57. Only nb x weight sum can
// need 64 bits (round_chunk_blocks checks).
using RoundInt = std::uint32_t;

// CTAs i in [0, c) of the arithmetic sequence base + i * stride (stride > 0) with base + i * stride < t.
IXO_HD RoundInt ctas_below(RoundInt base, RoundInt stride, RoundInt c, RoundInt t) {
  if (t <= base) return 0;
  const RoundInt n = (t - base + stride - 1) / stride;
  return n < c ? n : c;
}

// The weight of a CTA of dispatch round r of `rounds`.
IXO_HD RoundInt round_weight(RoundInt r, RoundInt rounds, RoundInt skew) {
  return kRoundWeightBase + skew * (rounds - 1 - r);
}

// The linear id (y * grid_x + x) of the CTA of chunk c of program `program` (K head kvh) of a chunk-major grid
// of batch x chunks CTAs a K head.
IXO_HD RoundInt round_plan_cta(RoundInt batch, RoundInt chunks, RoundInt program, RoundInt kvh, RoundInt c) {
  return (kvh * chunks + c) * batch + program;
}

// The weight sum of chunks [0, c) of program `program` (K head kvh) of that grid, `rounds` rounds of kPlanSms
// CTAs (the last one takes every later CTA).
IXO_HD RoundInt round_weight_prefix(RoundInt batch, RoundInt chunks, RoundInt program, RoundInt kvh, RoundInt c,
                                    RoundInt rounds, RoundInt skew) {
  const RoundInt base = round_plan_cta(batch, chunks, program, kvh, 0);
  RoundInt sum = 0, before = 0;
  for (RoundInt r = 0; r < rounds; ++r) {
    const RoundInt upto = r + 1 < rounds ? ctas_below(base, batch, c, (r + 1) * RoundInt{kPlanSms}) : c;
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
  const RoundInt B = static_cast<RoundInt>(batch), C = static_cast<RoundInt>(chunks);
  const RoundInt P = static_cast<RoundInt>(program), H = static_cast<RoundInt>(kvh);
  const RoundInt N = static_cast<RoundInt>(rounds), K = static_cast<RoundInt>(skew);
  const RoundInt total = round_weight_prefix(B, C, P, H, C, N, K);
  const RoundInt lo = round_weight_prefix(B, C, P, H, static_cast<RoundInt>(c), N, K);
  const RoundInt id = round_plan_cta(B, C, P, H, static_cast<RoundInt>(c));
  const RoundInt round = id / RoundInt{kPlanSms};
  const RoundInt hi = lo + round_weight(round < N - 1 ? round : N - 1, N, K);
  const std::int64_t n = IXO_MUTANT(mutant, mutants::chunk_floor_division) && nb > 0 ? nb - 1 : nb;
  std::int64_t s, e;
  // n >= 0 and lo <= hi: when n x hi fits 32 bits, so does n x lo (a wide multiply, not a division, decides).
  if (static_cast<std::uint64_t>(n) * hi <= ~RoundInt{0}) {
    const RoundInt n32 = static_cast<RoundInt>(n);
    s = n32 * lo / total;
    e = n32 * hi / total;
  } else {
    s = n * lo / total;
    e = n * hi / total;
  }
  if (IXO_MUTANT(mutant, mutants::chunk_last_block_dropped) && e > s) e -= 1;
  *b0 = s;
  *b1 = e;
}

}  // namespace ixo::common
