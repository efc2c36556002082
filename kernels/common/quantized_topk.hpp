// MiniMax's 16-bit quantized top-k selector (../shared/spec/upstream-msa.md section 3), the
// kernel side: the in-tree msa-decode backend selects with these formulas. The verdict
// re-derives the selector on its own (reference/src/quantized_select.cpp) and never includes
// this file.
//   scale = hi > lo ? 65534 / (hi - lo) : 0, bias = fmaf(-lo, scale, 1.5)   (fp32)
//   bucket = min(65535, u32(fmaf(v, scale, bias)))   key = bucket << 16 | (~id & 0xFFFF)
#pragma once
#include <cmath>
#include <cstdint>

#include "indexer_common.hpp"

namespace ixo::common {

struct QuantizedMap {
  float scale, bias;
};

// (msa_bucket_off_by_one: 65535 steps instead of 65534: the largest score lands past the last
// bucket and is clamped into the one below, merging the top two buckets.)
IXO_HD QuantizedMap quantized_map(float lo, float hi, int mutant = 0) {
  const float steps = IXO_MUTANT(mutant, mutants::msa_bucket_off_by_one) ? 65535.0f : 65534.0f;
  const float scale = hi > lo ? steps / (hi - lo) : 0.0f;
  return QuantizedMap{scale, fmaf(-lo, scale, 1.5f)};
}

// cvt.rzi.u32.f32: truncate, NaN and negatives to 0, saturate at 2^32 - 1.
IXO_HD std::uint32_t u32_saturating(float t) {
  if (!(t > 0.0f)) return 0u;
  if (t >= 4294967296.0f) return 0xFFFFFFFFu;
  return static_cast<std::uint32_t>(t);
}

// Larger key ranks first; a tie in the bucket goes to the lower id (msa_ties_higher_id: the id
// field not inverted, the higher id wins).
IXO_HD std::uint32_t quantized_key(float v, std::int32_t id, QuantizedMap m, int mutant = 0) {
  std::uint32_t q = u32_saturating(fmaf(v, m.scale, m.bias));
  q = q < 65535u ? q : 65535u;
  const std::uint32_t field = IXO_MUTANT(mutant, mutants::msa_ties_higher_id)
                                  ? static_cast<std::uint32_t>(id) & 0xFFFFu
                                  : ~static_cast<std::uint32_t>(id) & 0xFFFFu;
  return (q << 16) | field;
}
IXO_HD std::int32_t quantized_key_id(std::uint32_t key, int mutant = 0) {
  return static_cast<std::int32_t>(IXO_MUTANT(mutant, mutants::msa_ties_higher_id) ? key & 0xFFFFu : ~key & 0xFFFFu);
}

// Whether block b of a row with nb blocks is forced (common::forced_score's rule: a forced
// block holds 1e30 or 1e29, never the 0 passed in).
IXO_HD bool block_forced(std::int64_t b, std::int64_t nb, int init_blocks, int local_blocks) {
  return forced_score(0.0f, b, nb, init_blocks, local_blocks) != 0.0f;
}

// The local page id MSA writes to the last slot of a ranked row of length L: its last block
// nb - 1 = (L - 1) / bs (msa_local_page_from_length: L / bs, one past it when bs divides L).
IXO_HD std::int64_t local_page(std::int64_t L, int bs, int mutant = 0) {
  return IXO_MUTANT(mutant, mutants::msa_local_page_from_length) ? L / bs : (L - 1) / bs;
}

}  // namespace ixo::common
