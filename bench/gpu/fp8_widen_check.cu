// Exhaustive check of the score kernel's integer fp8 -> bf16 widening (indexer_kernels.cuh,
// fp8x2_to_bf16x2_int) against the cvt path it replaces, for every pair of e4m3fn and e5m2
// codes without a NaN / Inf code, and of fp8x4_special (the per-sub-tile NaN / Inf test)
// for every code. Prints one line per format; exit status 1 on any difference.
// Built as the target fp8_widen_check (bench/gpu/CMakeLists.txt); run it on a GPU machine.
#include <cstdio>

#include "gpu/indexer_kernels.cuh"

namespace d = ixo::gpu::detail;
namespace cm = ixo::common;

template <int KC>
__global__ void widen_check(unsigned* bad, unsigned* special_bad) {
  const unsigned pair = blockIdx.x * blockDim.x + threadIdx.x;  // 16 bits: two codes
  if (pair >= 65536u) return;
  const unsigned c0 = pair & 0xFFu, c1 = pair >> 8;
  const unsigned w = pair | (pair << 16);  // bytes c0 c1 c0 c1
  const bool sp0 = KC == cm::kE5m2 ? (c0 & 0x7Cu) == 0x7Cu : (c0 & 0x7Fu) == 0x7Fu;
  const bool sp1 = KC == cm::kE5m2 ? (c1 & 0x7Cu) == 0x7Cu : (c1 & 0x7Fu) == 0x7Fu;
  const unsigned sp = d::fp8x4_special<KC>(w) & 0x80808080u;
  const unsigned want = (sp0 ? 0x00800080u : 0u) | (sp1 ? 0x80008000u : 0u);
  if (sp != want) atomicAdd(special_bad, 1u);
  if (sp0 || sp1) return;
  const std::uint32_t ref = d::fp8x2_to_bf16x2<KC>(pair, nullptr, false);
  const std::uint32_t lo = d::fp8x2_to_bf16x2_int<KC>(w, 0x1404u);
  const std::uint32_t hi = d::fp8x2_to_bf16x2_int<KC>(w, 0x3424u);
  if (lo != ref || hi != ref) {
    if (atomicAdd(bad, 1u) < 4u) printf("pair %04x: cvt %08x int %08x %08x\n", pair, ref, lo, hi);
  }
}

template <int KC>
int run(const char* name) {
  unsigned* dev;
  cudaMalloc(&dev, 8);
  cudaMemset(dev, 0, 8);
  widen_check<KC><<<256, 256>>>(dev, dev + 1);
  unsigned h[2] = {1, 1};
  const cudaError_t e = cudaMemcpy(h, dev, 8, cudaMemcpyDeviceToHost);
  cudaFree(dev);
  std::printf("fp8 widen check %s: %s, %u pairs differ, %u special-code mismatches\n", name,
              e == cudaSuccess ? "ran" : cudaGetErrorString(e), h[0], h[1]);
  return e == cudaSuccess && h[0] == 0 && h[1] == 0 ? 0 : 1;
}

int main() { return run<cm::kE4m3fn>("e4m3fn") | run<cm::kE5m2>("e5m2"); }
