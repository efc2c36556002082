// MiniMax's 16-bit quantized top-k selector (../shared/spec/upstream-msa.md section 3),
// re-derived here from its description for the verdict: the selector is a deterministic
// function of the kernel's own fp32 scores, so a kernel that returns them can be judged bit
// for bit (docs/contracts.md, msa-decode). Not kernel code: kernels/common has its own.
//
//   lo = fminf, hi = fmaxf over the candidates (NaN ignored);
//   scale = hi > lo ? 65534.0f / (hi - lo) : 0;  bias = fmaf(-lo, scale, 1.5f);
//   q = min(65535, u32_saturating(fmaf(v, scale, bias)))   (NaN -> 0, negative -> 0);
//   key = (q << 16) | (~id & 0xFFFF): larger ranks first, a tie goes to the lower id.
#pragma once
#include <cstdint>
#include <vector>

namespace ixo {

struct QuantizedRange {
  float lo = 0, hi = 0;       // fminf / fmaxf over the candidates
  float scale = 0, bias = 0;  // the bucket map's fp32 constants
};

// Range over scores[cand[i]] (fp32 arithmetic exactly as the selector does it).
QuantizedRange quantized_range(const float* scores, const std::vector<std::int32_t>& cand);
// Bucket of one score, in [0, 65535] (0 only for NaN or a value below the range).
std::uint32_t quantized_bucket(float v, const QuantizedRange& range);
// The `take` candidates of largest (bucket, lower id), in that order (take <= cand.size()).
std::vector<std::int32_t> quantized_select(const float* scores, const std::vector<std::int32_t>& cand, int take);

// The verdict's slack for a quantized selection, in score units: a selected block can lose to an
// unselected one only inside one bucket, i.e. by less than kQuantizedSlackFactor * (hi - lo) / 65534
// (docs/error-bounds.md derives the factor: 1 + 2^-7 from the fp32 rounding of the fma result,
// widened for the rounding of hi - lo and of the division).
constexpr double kQuantizedSlackFactor = 1.01;
constexpr double kQuantizedSteps = 65534.0;

}  // namespace ixo
