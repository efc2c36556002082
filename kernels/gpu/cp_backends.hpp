// "cuda-cp": the context-parallel indexer on one GPU with every rank simulated (score,
// candidates, merge; the all-gathers are identities in one process). allow_pack = false
// forces the per-row plan. Host-side rules (supported, plan_for): kernels/cp_plan.hpp.
#pragma once
#include <memory>

#include "backend.hpp"

namespace ixo {

std::unique_ptr<Backend> make_cuda_cp_backend(bool allow_pack = true);

}  // namespace ixo
