// The run configuration of one indexer step as every kernel reads it (issue 24): the
// graph-constant shapes and the config of a Case, under the Case's own field names. Made once
// from a Case by ixo::index_config (kernels/case_config.hpp, the one Case -> launch copy) and
// embedded in every launch struct (the twins' Launch, gpu::IndexArgs / gpu::CpArgs, the
// device-side ScoreParams / CpScoreParams). Plain data, host and device. The integer knobs
// (block_size, topk, init_blocks, local_blocks, packed_queries: a launch hint, never part of
// the truth; page_size) come from ixo/config_fields.hpp with their defaults.
#pragma once
#include <cstdint>

#include "ixo/config_fields.hpp"

namespace ixo::common {

struct IndexConfig {
  std::int64_t R = 0, Hq = 1, Hk = 1, D = 128, S = 0, rows = 0, width = 0, NB = 0;
#define IXO_CONFIG_FIELD(name, dflt, least, most, required, written) int name = dflt;
  IXO_CONFIG_INT_FIELDS(IXO_CONFIG_FIELD)
#undef IXO_CONFIG_FIELD
  int score_lse = 0;        // 0 = max, 1 = log2-sum-exp
  int k_code = 0;           // common::KCode of K
  int q_code = 0;           // common::KCode of q (kBf16 or kE4m3fn)
  float sm_q_scale = 1.0f;  // float(sm_scale * q_scale)
  float k_scale = 1.0f;
};

}  // namespace ixo::common
