// Context-parallel (CP) indexer backend "cpu-cp" (kernels/cpu/cp_twin.cpp, the CPU twin of
// the CP kernels with every rank simulated in one process). The host-side rules it shares
// with the GPU CP backend (supported cases, the launch plan) are kernels/cp_plan.hpp;
// formulas: kernels/common/cp_common.hpp. Design notes: docs/gpu-kernels.md (CP section).
#pragma once
#include <memory>

#include "backend.hpp"
#include "cp_plan.hpp"
#include "ixo/case.hpp"

namespace ixo {

// "cpu-cp". allow_pack = false forces the per-row plan (packed CP == unpacked CP tests).
std::unique_ptr<Backend> make_cpu_cp_backend(bool allow_pack = true);

}  // namespace ixo
