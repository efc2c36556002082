// The host simulation of the GPU kernels' portable path (kernels/sim_host/sim_backends.cpp): the
// score and top-k kernels of kernels/gpu, as the HIP build compiles them (the scalar score kernel
// for every head dim, 64-lane warps in the top-k), run on the CPU with one fiber a GPU thread. So
// the code path of AMD GPUs is judged in CI, where no AMD GPU runs.
#pragma once
#include <memory>

#include "backend.hpp"

namespace ixo {

// "sim-rows": launch_score_rows' plan (one CTA a row, KV chunk and K head), then the top-k kernel.
std::unique_ptr<Backend> make_sim_rows_backend();
// "sim-packed": launch_score_packed's plan (whole groups sharing a slot id in one tile).
std::unique_ptr<Backend> make_sim_packed_backend();
// "sim-cp" (sim_cp_backend.cpp): cuda-cp's launches (shard scores, candidates, merge; every rank in
// one launch) of the CP kernels' portable path.
std::unique_ptr<Backend> make_sim_cp_backend();

}  // namespace ixo
