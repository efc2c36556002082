// The launch arguments of a Case (shapes, config, scales), without device pointers, and the
// upload of a Case's five input arrays. The one place where a Case becomes launch
// arguments: the CUDA backends, cuda-cp, the NCCL runner and the graph tests call it, so
// they all launch exactly the same step.
#pragma once
#include <cstdint>
#include <vector>

#include "gpu/cp_launch.hpp"
#include "gpu/indexer_launch.hpp"
#include "ixo/case.hpp"

namespace ixo::gpu {

// The shape and config fields IndexArgs and CpArgs share. q_scale is a parameter so a caller
// can inject the q_scale_ignored mutant.
template <class Args>
void set_case_config(Args& a, const Case& c, double q_scale) {
  a.R = c.R;
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
  a.sm_q_scale = static_cast<float>(c.effective_sm_scale() * q_scale);
  a.k_scale = static_cast<float>(c.cfg.k_scale);
}

inline IndexArgs index_args(const Case& c, double q_scale) {
  IndexArgs a;
  set_case_config(a, c, q_scale);
  a.Hq = c.Hq;
  a.Hk = c.Hk;
  a.packed_queries = c.cfg.packed_queries;
  return a;
}

// CP ranks rank_base .. rank_base + ranks - 1 of a WORLD-rank group; pack = the plan's pack
// (cp::plan_for), 1 = per-row.
inline CpArgs cp_args(const Case& c, int world, int rank_base, int ranks, int pack) {
  CpArgs a;
  set_case_config(a, c, c.cfg.q_scale);
  a.world = world;
  a.rank_base = rank_base;
  a.ranks = ranks;
  a.pack = pack;
  return a;
}

// q [R, Hq, D] -> the gathered layout [Hq (head), R, D] of the CP kernels (the simulated
// all-gather: rank h contributes its head's rows).
inline std::vector<std::uint16_t> gathered_q(const Case& c) {
  std::vector<std::uint16_t> qg(static_cast<std::size_t>(c.Hq * c.R * c.D));
  for (std::int64_t h = 0; h < c.Hq; ++h)
    for (std::int64_t r = 0; r < c.R; ++r)
      for (std::int64_t d = 0; d < c.D; ++d) qg[(h * c.R + r) * c.D + d] = c.q[(r * c.Hq + h) * c.D + d];
  return qg;
}

}  // namespace ixo::gpu
