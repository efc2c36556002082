// The launch arguments of a Case (its common::IndexConfig from ixo::index_config, without
// device pointers): the CUDA backends, cuda-cp, the NCCL runner and the graph tests call it, so
// they all launch exactly the same step.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "backend.hpp"
#include "case_config.hpp"
#include "cp_plan.hpp"
#include "gpu/cp_launch.hpp"
#include "gpu/indexer_launch.hpp"
#include "ixo/case.hpp"
#include "ixo/error.hpp"
#include "ixo/observed.hpp"
#include "mutants.hpp"

namespace ixo::gpu {

inline IndexArgs index_args(const Case& c, double q_scale) {
  IndexArgs a;
  static_cast<common::IndexConfig&>(a) = index_config(c, q_scale);
  return a;
}

// The cases the native GPU scorers implement (cuda-rows / -packed and their host simulation
// sim-rows / -packed, named `name` in `why`): bf16 q (they widen bf16 q only), bf16 or fp8 K.
inline bool native_case_supported(const Case& c, const std::string& name, std::string* why) {
  if (c.cfg.q_dtype != KDtype::bf16) {
    if (why) *why = name + " takes bf16 q only, got q_dtype " + std::string(to_string(c.cfg.q_dtype));
    return false;
  }
  if (is_nvfp4(c.cfg.k_dtype)) {
    if (why) *why = name + " does not decode nvfp4 K";
    return false;
  }
  return true;
}

// The native step's launch arguments for a run (device pointers left unset): the case's config with
// the run's options (the q_scale_ignored / K-code mutants, forced chunk count, mutant selector).
inline IndexArgs native_run_args(const Case& c, const RunOptions& options) {
  const double q_scale = IXO_MUTANT(options.mutant, mutants::q_scale_ignored) ? 1.0 : c.cfg.q_scale;
  IndexArgs a = index_args(c, q_scale);
  a.k_code = common::launch_k_code(a.k_code, options.mutant);
  a.num_chunks = options.force_num_chunks;
  a.mutant = options.mutant;
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

// The CP step's launch arguments for a run of the simulated all-rank step (cuda-cp, sim-cp; device
// pointers left unset), for a valid case the backend supports: every active row must lie within
// the table width (InputError naming seq_lens otherwise).
inline CpArgs cp_run_args(const Case& c, const RunOptions& options, bool allow_pack) {
  for (std::int64_t r = 0; r < c.R; ++r)
    if (table_row(c, r) >= 0 && c.seq_lens[r] > c.width)
      throw InputError("seq_lens", "row " + std::to_string(r) + " exceeds the table width");
  const cp::Plan plan = cp::plan_for(c, allow_pack, options);
  CpArgs a = cp_args(c, plan.world, 0, plan.world, plan.pack);
  a.num_chunks = options.force_num_chunks;
  a.mutant = options.mutant;
  return a;
}

// The outputs of a GPU-plan run over c (cuda-*, sim-*): ids [Hq, R, topk] and, with has_scores,
// scores [Hq, R, NB]; the arrays are the caller's to fill.
inline Observed observed_for(const Case& c, std::int64_t NB, bool has_scores) {
  Observed o;
  o.Hq = c.Hq;
  o.R = c.R;
  o.topk = c.cfg.topk;
  o.NB = NB;
  o.has_scores = has_scores;
  return o;
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
