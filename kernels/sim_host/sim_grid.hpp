// A kernel launch of the host simulation (sim-rows, sim-packed, sim-cp): every CTA of a grid, one
// after another, through the stand-in's run_cta. Only for translation units built with IXO_SIM_HOST.
#pragma once
#include <cstdint>
#include <string>

#include "backend.hpp"
#include "sim_host/gpu_port_host.hpp"  // the stand-in (what gpu/gpu_port.hpp includes under IXO_SIM_HOST)

namespace ixo::sim {

// Runs fn() as every CTA of a grid_x x grid_y grid of `threads` threads (x fastest); stops between
// CTAs when the user interrupts (Interrupted).
template <class Fn>
void run_grid(std::int64_t grid_x, std::int64_t grid_y, int threads, Fn fn) {
  const simt_host::Dim3 grid{static_cast<unsigned>(grid_x), static_cast<unsigned>(grid_y), 1};
  for (unsigned y = 0; y < grid.y; ++y)
    for (unsigned x = 0; x < grid.x; ++x) {
      if (interrupt_flag().load()) throw Interrupted("interrupted while the simulated kernels ran");
      simt_host::run_cta(threads, simt_host::Dim3{x, y, 0}, grid, fn);
    }
}

// Runs a step's launches; a barrier misuse in them (simt_host::SimtError) is the backend's
// KernelFailure (a failing case, its report naming the threads).
template <class Launches>
void run_step(const std::string& backend, Launches launches) {
  try {
    launches();
  } catch (const simt_host::SimtError& e) {
    throw KernelFailure(backend + ": " + e.what());
  }
}

}  // namespace ixo::sim
