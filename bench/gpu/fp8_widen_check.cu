// Exhaustive check of the score kernel's integer fp8 -> bf16 widening (indexer_kernels.cuh,
// fp8x2_to_bf16x2_int) against the cvt path it replaces, for every pair of e4m3fn and e5m2
// codes without a NaN / Inf code, and of fp8x4_special (the per-sub-tile NaN / Inf test)
// for every code; then the f16 path of the same kernel (mma_convert.cuh, IXO_FP8_F16_MMA): its q
// exactness test on every bf16 against the formats' definition (derived here on the host), and
// its MMA chain (f16 q x cvt-widened K) against the bf16 path's (bf16 q x bf16-widened K) on
// random operands exact in both: every output bit the same. Prints one line per check; exit
// status 1 on any difference.
// Built as the target fp8_widen_check (bench/gpu/CMakeLists.txt); run it on a GPU machine.
#include <cstdio>
#include <vector>

#include <cuda_fp16.h>

#include "gpu/indexer_kernels.cuh"
#include "ixo_test/f16_exact.hpp"  // the host derivation the q test is checked against

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

// ---- the f16 path
// exact[p] = whether bf16 pattern p converts exactly (bf16x2_to_f16x2's flag), and whether
// the f16 it gives is that value.
__global__ void q_exact_flags(unsigned char* exact, unsigned* wrong_value) {
  const unsigned p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= 65536u) return;
  bool ex = true;
  const std::uint32_t h = d::bf16x2_to_f16x2(p | (p << 16), ex);
  exact[p] = ex ? 1 : 0;
  const float back = __half2float(__ushort_as_half(static_cast<unsigned short>(h & 0xFFFFu)));
  if (ex && back != __uint_as_float(p << 16)) atomicAdd(wrong_value, 1u);
}

__device__ __forceinline__ std::uint32_t mix(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}
// A random f16-exact bf16: 1 in 16 zero, else sign, exponent 2^-17 .. 2^15, 7 mantissa bits.
__device__ __forceinline__ std::uint32_t random_exact_bf16(std::uint32_t r) {
  if ((r & 15u) == 0u) return (r >> 4) & 0x8000u;
  const std::uint32_t e = 127u - 17u + (r >> 8) % 33u;
  return ((r >> 4) & 0x8000u) | (e << 7) | ((r >> 20) & 0x7Fu);
}
// Random fp8 bytes without NaN / Inf codes (those bytes are moved off the special exponent).
template <int KC>
__device__ __forceinline__ std::uint32_t random_plain_fp8x4(std::uint32_t w) {
  const std::uint32_t sp = d::fp8x4_special<KC>(w) & 0x80808080u;  // bit 7 of each special byte
  return KC == cm::kE5m2 ? w ^ (sp >> 5) : w ^ (sp >> 7);          // e5m2: clear exponent bit 2; e4m3fn: mantissa bit 0
}
// Warp-level trial: a D 128 MMA chain (8 k-steps, one n-tile) of random q (16 rows) and K (8
// tokens), f16 path vs bf16 path; counts outputs whose bits differ and q the flag rejected.
template <int KC>
__global__ void mma_path_check(unsigned* diff, unsigned* rejected, unsigned seed) {
  const unsigned lane = threadIdx.x & 31u;
  const unsigned warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  std::uint32_t st = mix(seed ^ mix(warp * 32u + lane + 1u));
  std::uint32_t qb[8][4], qh[8][4];
  bool ex = true;
#pragma unroll
  for (int s = 0; s < 8; ++s)
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      st = mix(st + 0x9e3779b9u);
      const std::uint32_t lo = random_exact_bf16(st);
      st = mix(st + 0x9e3779b9u);
      qb[s][i] = lo | (random_exact_bf16(st) << 16);
      qh[s][i] = d::bf16x2_to_f16x2(qb[s][i], ex);
    }
  if (!ex) atomicAdd(rejected, 1u);
  float ab[4] = {0.f, 0.f, 0.f, 0.f}, ah[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
  for (int s = 0; s < 8; ++s) {
    st = mix(st + 0x9e3779b9u);
    const std::uint32_t w = random_plain_fp8x4<KC>(st);
    d::mma_bf16(ab, qb[s], d::fp8x2_to_bf16x2<KC>(w & 0xFFFFu, nullptr, false),
                d::fp8x2_to_bf16x2<KC>(w >> 16, nullptr, false));
    d::mma_f16(ah, qh[s], d::fp8x2_to_f16x2<KC>(w), d::fp8x2_to_f16x2<KC>(w >> 16));
  }
  for (int i = 0; i < 4; ++i)
    if (__float_as_uint(ab[i]) != __float_as_uint(ah[i])) {
      if (atomicAdd(diff, 1u) < 4u)
        printf("warp %u lane %u out %d: bf16 path %a, f16 path %a\n", warp, lane, i, ab[i], ah[i]);
    }
}

int run_f16_path() {
  unsigned char* flags;
  unsigned* cnt;
  cudaMalloc(&flags, 65536);
  cudaMalloc(&cnt, 16);
  cudaMemset(cnt, 0, 16);
  q_exact_flags<<<256, 256>>>(flags, cnt);
  std::vector<unsigned char> h(65536);
  cudaMemcpy(h.data(), flags, 65536, cudaMemcpyDeviceToHost);
  unsigned flag_bad = 0, n_exact = 0;
  for (unsigned p = 0; p < 65536u; ++p) {
    n_exact += h[p];
    const bool formats = ixo::test::bf16_is_f16_exact(static_cast<std::uint16_t>(p));
    if ((h[p] != 0) != formats && flag_bad++ < 4) std::printf("bf16 %04x: flag %d, formats say %d\n", p, h[p], formats);
  }
  constexpr int kBlocks = 4096, kThreads = 256;  // 32768 warps a format and seed
  for (unsigned seed = 1; seed <= 4; ++seed) {
    mma_path_check<cm::kE4m3fn><<<kBlocks, kThreads>>>(cnt + 1, cnt + 2, seed);
    mma_path_check<cm::kE5m2><<<kBlocks, kThreads>>>(cnt + 1, cnt + 2, seed * 7919u);
  }
  unsigned c[4] = {1, 1, 1, 1};
  const cudaError_t e = cudaMemcpy(c, cnt, 16, cudaMemcpyDeviceToHost);
  cudaFree(flags);
  cudaFree(cnt);
  const unsigned long long outputs = 2ull * 4 * kBlocks * kThreads * 4;
  std::printf(
      "f16 path q test: %s, %u of 65536 bf16 flags differ from the formats (%u exact), %u exact flags with a wrong "
      "f16\n",
      e == cudaSuccess ? "ran" : cudaGetErrorString(e), flag_bad, n_exact, c[0]);
  std::printf(
      "f16 path MMA chains: %llu outputs (e4m3fn + e5m2, D 128), %u differ from the bf16 path, %u q sets rejected\n",
      outputs, c[1], c[2]);
  return e == cudaSuccess && flag_bad == 0 && c[0] == 0 && c[1] == 0 && c[2] == 0 ? 0 : 1;
}

int main() { return run<cm::kE4m3fn>("e4m3fn") | run<cm::kE5m2>("e5m2") | run_f16_path(); }
