// What an implementation under test produced for a Case.
#pragma once
#include <cstdint>
#include <vector>

namespace ixo {

struct Observed {
  std::int64_t Hq = 0, R = 0, topk = 0;
  std::vector<std::int32_t> topk_idx;  // [Hq, R, topk]
  bool has_scores = false;
  std::int64_t NB = 0;
  std::vector<float> scores;  // [Hq, R, NB] when has_scores
};

// The bit pattern our own backends fill score buffers with before a launch; cells a
// kernel must not write keep it (checked by the verdict's poison tier).
constexpr std::uint32_t kScorePoisonBits = 0x7fbadbadu;  // a signalling-NaN payload

}  // namespace ixo
