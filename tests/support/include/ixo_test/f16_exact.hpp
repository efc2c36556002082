// Whether a bf16 is exactly an f16, derived on the host from the two formats (f16's largest
// finite is 65504 and its subnormals are multiples of 2^-24; a bf16's 8 significant bits fit
// f16's 11), independently of the kernels' device test (kernels/gpu/mma_tile.cuh,
// bf16x2_to_f16x2). Header-only: bench/gpu/fp8_widen_check.cu and tests/gpu/test_gpu_fp8_paths.cpp.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

namespace ixo::test {

inline bool bf16_is_f16_exact(std::uint16_t bits) {
  const std::uint32_t word = static_cast<std::uint32_t>(bits) << 16;
  float v;
  std::memcpy(&v, &word, sizeof v);
  if (v == 0.0f) return true;
  if (!std::isfinite(v) || std::fabs(v) > 65504.0f) return false;
  const double scaled = std::ldexp(static_cast<double>(v), 24);
  return scaled == std::trunc(scaled);
}

}  // namespace ixo::test
