// Random inputs the GPU benchmarks share: K cache contents filled on the device (bf16 in
// about [-2, 2), never NaN, or finite e4m3fn codes) and bf16 query bits on the host.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace ixo_bench {

__device__ __forceinline__ std::uint32_t hash32(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return static_cast<std::uint32_t>(x);
}
// Random bf16 in about [-2, 2) (never NaN) or random finite e4m3fn codes.
__global__ void init_k(std::uint8_t* k, std::size_t n_elems, int fp8, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * (std::size_t)blockDim.x + threadIdx.x; i < n_elems;
       i += (std::size_t)gridDim.x * blockDim.x) {
    const std::uint32_t h = hash32(i * 0x9E3779B97F4A7C15ull + seed);
    if (fp8) {
      std::uint8_t c = static_cast<std::uint8_t>(h & 0xFF);
      if ((c & 0x7F) == 0x7F) c &= 0xFE;  // no NaN
      k[i] = c;
    } else {
      const float f = (static_cast<float>(h & 0xFFFF) / 32768.0f) - 1.0f;
      std::uint32_t u;
      std::memcpy(&u, &f, 4);
      reinterpret_cast<std::uint16_t*>(k)[i] = static_cast<std::uint16_t>(u >> 16);
    }
  }
}

// n bf16 values uniform in [-1, 1) (truncated float bits), from an mt19937 seeded with `seed`.
inline std::vector<std::uint16_t> random_bf16_bits(std::size_t n, unsigned seed) {
  std::vector<std::uint16_t> bits(n);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> U(-1.f, 1.f);
  for (auto& x : bits) {
    const float f = U(rng);
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    x = static_cast<std::uint16_t>(u >> 16);
  }
  return bits;
}

}  // namespace ixo_bench
