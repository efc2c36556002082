// The launch arguments of a Case (shapes, config, scales), without device pointers.
// Shared by the CUDA backends and the graph tests, so both launch exactly the same step.
#pragma once
#include "gpu/indexer_launch.hpp"
#include "ixo/case.hpp"

namespace ixo::gpu {

// q_scale is a parameter so a caller can inject the q_scale_ignored mutant.
inline IndexArgs index_args(const Case& c, double q_scale) {
  IndexArgs a;
  a.R = c.R;
  a.Hq = c.Hq;
  a.Hk = c.Hk;
  a.D = c.D;
  a.S = c.S;
  a.rows = c.rows;
  a.width = c.width;
  a.NB = c.NB();
  a.block_size = c.cfg.block_size;
  a.topk = c.cfg.topk;
  a.init_blocks = c.cfg.init_blocks;
  a.local_blocks = c.cfg.local_blocks;
  a.score_lse = c.cfg.score_type == ScoreType::lse ? 1 : 0;
  a.k_code = static_cast<int>(c.cfg.k_dtype);
  a.packed_queries = c.cfg.packed_queries;
  a.sm_q_scale = static_cast<float>(c.effective_sm_scale() * q_scale);
  a.k_scale = static_cast<float>(c.cfg.k_scale);
  return a;
}

}  // namespace ixo::gpu
