// A Case's kernel configuration (common::IndexConfig): the one place where Case fields
// become launch fields. The CPU twins, the CUDA/HIP backends, cuda-cp, the NCCL runner, the
// benchmarks and the GPU tests all call it, so a new config knob is a Config field
// (ixo/case.hpp), its case.json spelling (case_io.cpp) and one line here.
#pragma once
#include "index_config.hpp"
#include "ixo/case.hpp"

namespace ixo {

// q_scale is a parameter so a caller can inject the q_scale_ignored mutant.
inline common::IndexConfig index_config(const Case& c, double q_scale) {
  common::IndexConfig k;
  k.R = c.R;
  k.Hq = c.Hq;
  k.Hk = c.Hk;
  k.D = c.D;
  k.S = c.S;
  k.rows = c.rows;
  k.width = c.width;
  k.NB = c.NB();
  k.block_size = c.cfg.block_size;
  k.topk = c.cfg.topk;
  k.init_blocks = c.cfg.init_blocks;
  k.local_blocks = c.cfg.local_blocks;
  k.score_lse = c.cfg.score_type == ScoreType::lse ? 1 : 0;
  k.k_code = static_cast<int>(c.cfg.k_dtype);
  k.q_code = static_cast<int>(c.cfg.q_dtype);
  k.packed_queries = c.cfg.packed_queries;
  k.sm_q_scale = static_cast<float>(c.effective_sm_scale() * q_scale);
  k.k_scale = static_cast<float>(c.cfg.k_scale);
  return k;
}
inline common::IndexConfig index_config(const Case& c) { return index_config(c, c.cfg.q_scale); }

}  // namespace ixo
