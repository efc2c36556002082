// The CPU twin: the GPU kernels' tiling (programs over (row or group, KV chunk, K head),
// per-chunk block loops, the packed tile) run on the host with OpenMP. It calls
// kernels/common for every formula. It is a kernel under test, not an oracle.
#pragma once
#include <memory>

#include "backend.hpp"
#include "plans.hpp"

namespace ixo {

// "cpu-rows": one program per (row, chunk, K head); chunks = common::score_chunks(R, Hk, NB).
std::unique_ptr<Backend> make_cpu_rows_backend();
// "cpu-packed": one program per (whole group of packed_queries rows or trailing row, chunk,
// K head); chunks = common::native_chunks (score_chunks(R/P + R%P, Hk, NB); fp8 K, and bf16 K
// with IXO_BF16_PACKED_WAVE=1: one wave of CTAs). A whole group packs when its rows share one
// slot id, else (and a trailing row) runs per row in its program (common::program_tiles). The
// per-row plan when P == 1 or P*gqa > 16.
std::unique_ptr<Backend> make_cpu_packed_backend();
// "cpu-msa" (msa_twin.cpp): a kernel under the msa-decode contract: the per-row scorer in
// natural units on every row, MSA's score buffer (history columns only) and its 16-bit
// quantized selector (15 ranked ids, the local block last).
std::unique_ptr<Backend> make_cpu_msa_backend();

namespace cpu {

// The launch plan a backend uses for a case (exposed for tests and the bench).
using Plan = common::NativePlan;  // the GPU's plan (kernels/common/plans.hpp: native_plan)
// `packed` selects cpu-packed's plan (including its per-row fallback).
Plan plan_for(const Case& c, bool packed, const RunOptions& options);
// The twin's scorer alone (the per-row plan) for backends that select on their own: the
// [Hq, R, NB] score buffer (poisoned first, forced cells 1e30 / 1e29), topk_idx left -1.
struct Scoring {
  bool natural_units = false;  // multiplier without log2(e) (common::natural_logit_multiplier)
  bool every_row = false;      // trivial rows (nb <= topk) scored too
};
Observed score_rows(const Case& c, const RunOptions& options, const Scoring& how);
// K tokens (per K head) the plan loads: each program loads each token of its blocks once.
std::int64_t k_tokens_loaded(const Case& c, const Plan& plan);

}  // namespace cpu
}  // namespace ixo
