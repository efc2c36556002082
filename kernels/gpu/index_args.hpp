// The launch arguments of a Case (its common::IndexConfig from ixo::index_config, without
// device pointers): the CUDA backends, cuda-cp, the NCCL runner and the graph tests call it, so
// they all launch exactly the same step.
#pragma once
#include <cstdint>
#include <vector>

#include "gpu/cp_launch.hpp"
#include "case_config.hpp"
#include "gpu/indexer_launch.hpp"
#include "ixo/case.hpp"

namespace ixo::gpu {

inline IndexArgs index_args(const Case& c, double q_scale) {
  IndexArgs a;
  static_cast<common::IndexConfig&>(a) = index_config(c, q_scale);
  return a;
}

// CP ranks rank_base .. rank_base + ranks - 1 of a WORLD-rank group; pack = the plan's pack
// (cp::plan_for), 1 = per-row.
inline CpArgs cp_args(const Case& c, int world, int rank_base, int ranks, int pack) {
  CpArgs a;
  static_cast<common::IndexConfig&>(a) = index_config(c);
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
