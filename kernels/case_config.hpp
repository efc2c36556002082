// A Case's kernel configuration (common::IndexConfig): the one place where Case fields
// become launch fields. The CPU twins, the CUDA/HIP backends, cuda-cp, the NCCL runner, the
// benchmarks and the GPU tests all call it; an integer knob is copied by the list of
// ixo/config_fields.hpp (its one line there is the whole plumbing).
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
#define IXO_CONFIG_FIELD(name, dflt, least, most, required, written) k.name = c.cfg.name;
  IXO_CONFIG_INT_FIELDS(IXO_CONFIG_FIELD)
#undef IXO_CONFIG_FIELD
  k.score_lse = c.cfg.score_type == ScoreType::lse ? 1 : 0;
  k.k_code = static_cast<int>(c.cfg.k_dtype);
  k.q_code = static_cast<int>(c.cfg.q_dtype);
  k.sm_q_scale = static_cast<float>(c.effective_sm_scale() * q_scale);
  k.k_scale = static_cast<float>(c.cfg.k_scale);
  return k;
}
inline common::IndexConfig index_config(const Case& c) { return index_config(c, c.cfg.q_scale); }

}  // namespace ixo
