#include "ixo/quantized_select.hpp"

#include <algorithm>
#include <cmath>

namespace ixo {

QuantizedRange quantized_range(const float* scores, const std::vector<std::int32_t>& cand) {
  QuantizedRange r;
  float lo = INFINITY, hi = -INFINITY;
  for (std::int32_t b : cand) {
    lo = std::fmin(lo, scores[b]);  // fminf: a NaN operand is ignored
    hi = std::fmax(hi, scores[b]);
  }
  r.lo = lo, r.hi = hi;
  r.scale = hi > lo ? 65534.0f / (hi - lo) : 0.0f;
  r.bias = std::fma(-lo, r.scale, 1.5f);
  return r;
}

std::uint32_t quantized_bucket(float v, const QuantizedRange& range) {
  const float t = std::fma(v, range.scale, range.bias);
  // cvt.rzi.u32.f32 (what (unsigned)float compiles to): truncation, NaN and negatives to 0,
  // saturating at 2^32 - 1.
  std::uint32_t q;
  if (!(t > 0.0f))
    q = 0;
  else if (t >= 4294967296.0f)
    q = 0xFFFFFFFFu;
  else
    q = static_cast<std::uint32_t>(t);
  return std::min<std::uint32_t>(65535u, q);
}

std::vector<std::int32_t> quantized_select(const float* scores, const std::vector<std::int32_t>& cand, int take) {
  const QuantizedRange range = quantized_range(scores, cand);
  std::vector<std::uint32_t> keys;
  keys.reserve(cand.size());
  for (std::int32_t b : cand)
    keys.push_back((quantized_bucket(scores[b], range) << 16) | (~static_cast<std::uint32_t>(b) & 0xFFFFu));
  const auto n = std::min<std::size_t>(static_cast<std::size_t>(std::max(take, 0)), keys.size());
  std::partial_sort(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(n), keys.end(), std::greater<>());
  std::vector<std::int32_t> ids(n);
  for (std::size_t i = 0; i < n; ++i) ids[i] = static_cast<std::int32_t>(~keys[i] & 0xFFFFu);
  return ids;
}

}  // namespace ixo
