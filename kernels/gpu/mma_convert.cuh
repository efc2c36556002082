// Tensor-core (CUDA, sm_80+) arithmetic shared by the native and CP score kernels
// (mma_tile.cuh): the bf16 / f16 MMAs and the element conversions (fp8 pair widening through
// the hardware cvt or a decode table, bf16 -> f16 for the fp8 f16 path, the q fragments).
#pragma once
#include <cstdint>
#include <type_traits>

#include "gpu/gpu_port.hpp"
#include "indexer_common.hpp"

#if defined(IXO_GPU_CUDA)
namespace ixo::gpu::detail {

namespace cm = ixo::common;

// Built for sm_80+ device passes (the project builds sm_90a and sm_100a).
__device__ __forceinline__ void mma_bf16(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                         std::uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// The same with f16 operands (the fp8 K f16 path: Widen::kF16 below).
__device__ __forceinline__ void mma_f16(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                        std::uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ std::uint32_t pack_bf16x2(float lo, float hi) {
  std::uint32_t d;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));
  return d;
}

// The two halves of an f16x2 (low half first) as floats (exact).
__device__ __forceinline__ void f16x2_to_floats(std::uint32_t h2, float& lo, float& hi) {
  asm("{ .reg .b16 l, h; mov.b32 {l, h}, %2; cvt.f32.f16 %0, l; cvt.f32.f16 %1, h; }" : "=f"(lo), "=f"(hi) : "r"(h2));
}
// The fp8 formats the device pass converts in hardware (cvt.rn.f16x2.e4m3x2 / e5m2x2): the
// widenings below, the decode table's use (fp8_table_read), the f16 path and the integer widening
// (mma_tile.cuh) all take this one rule.
template <int KC>
constexpr bool kHwFp8CvtFor = IXO_GPU_CVT_FP8 != 0 && (KC == cm::kE4m3fn || KC == cm::kE5m2);
// Two fp8 codes (low byte = first element) -> f16x2 (low half = first element): one
// cvt.rn.f16x2.e4m3x2 / e5m2x2 (exact: every e4m3fn / e5m2 code is an f16). The f16 path's
// widening, and the first half of fp8x2_to_bf16x2's hardware conversion.
template <int KC>
__device__ __forceinline__ std::uint32_t fp8x2_to_f16x2(std::uint32_t two) {
  std::uint32_t h2 = 0;
#if IXO_GPU_CVT_FP8
  const unsigned short in = static_cast<unsigned short>(two & 0xFFFFu);
  if constexpr (KC == cm::kE4m3fn) {
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h2) : "h"(in));
  } else if constexpr (KC == cm::kE5m2) {
    asm("cvt.rn.f16x2.e5m2x2 %0, %1;" : "=r"(h2) : "h"(in));
  }
#else
  (void)two;
#endif
  return h2;
}
// Four fp8 codes -> two f16x2: bytes 0-1 into lo, bytes 2-3 into hi (fp8x2_to_f16x2 each).
// IXO_FP8_CVT_HALVES=1 (default; session 38, docs/experiments row 58): one asm block splits the
// word into its 16-bit halves (mov.b32 {l, h}) and converts each, as CUTLASS's e4m3x4 converter
// does, instead of converting w and w >> 16: the same two cvt on the same 16-bit inputs, so the
// same bits, without the shift (32 a warp's sub-tile). H100, one machine (data/s38-cvt-halves-h100):
// per-row e4m3fn 16 x 131072 step 270.2 -> 248.5 us, packed 115.3 -> 114.0; with K hot in L2
// (the H200's SM-bound regime) packed 79.5-80.9 -> 73.3-73.9. 0 keeps the shift (A/B only).
#ifndef IXO_FP8_CVT_HALVES
#define IXO_FP8_CVT_HALVES 1
#endif
template <int KC>
__device__ __forceinline__ void fp8x4_to_f16x2_pair(std::uint32_t w, std::uint32_t& lo, std::uint32_t& hi) {
#if IXO_GPU_CVT_FP8 && IXO_FP8_CVT_HALVES
  if constexpr (KC == cm::kE4m3fn) {
    asm("{ .reg .b16 l, h; mov.b32 {l, h}, %2; cvt.rn.f16x2.e4m3x2 %0, l; cvt.rn.f16x2.e4m3x2 %1, h; }"
        : "=r"(lo), "=r"(hi)
        : "r"(w));
    return;
  } else if constexpr (KC == cm::kE5m2) {
    asm("{ .reg .b16 l, h; mov.b32 {l, h}, %2; cvt.rn.f16x2.e5m2x2 %0, l; cvt.rn.f16x2.e5m2x2 %1, h; }"
        : "=r"(lo), "=r"(hi)
        : "r"(w));
    return;
  }
#endif
  lo = fp8x2_to_f16x2<KC>(w);
  hi = fp8x2_to_f16x2<KC>(w >> 16);
}
// Two fp8 codes (low byte = first element) -> bf16x2 (low half = first element).
// use_lut: take the table even where the hardware converts (the table holds a mutant's decode).
template <int KC>
__device__ __forceinline__ std::uint32_t fp8x2_to_bf16x2(std::uint32_t two, const std::uint16_t* lut,
                                                         bool use_lut = false) {
  if constexpr (kHwFp8CvtFor<KC>) {
    if (!use_lut) {
      float lo, hi;
      f16x2_to_floats(fp8x2_to_f16x2<KC>(two), lo, hi);
      return pack_bf16x2(lo, hi);
    }
  } else {
    (void)use_lut;
  }
  return static_cast<std::uint32_t>(lut[two & 0xFFu]) | (static_cast<std::uint32_t>(lut[(two >> 8) & 0xFFu]) << 16);
}

// Whether a kernel of K format KC reads the fp8 decode table (fp8x2_to_bf16x2): formats the
// hardware does not convert (e4m3fnuz, or no cvt on the device pass), or a mutant's decode.
// Elsewhere the kernels skip building it (fp8_to_float for 256 codes, then a barrier, at the
// head of every fp8 CTA's start chain): H100, one lease (docs/experiments row 45), the latency
// suite's e4m3fn steps -0.2..-0.3 us at 1K (geomean per-row 0.964, packed 0.976), bf16 and the
// 16 x 131072 steps level.
template <int KC>
__device__ __forceinline__ bool fp8_table_read(int mutant) {
  (void)mutant;
  if constexpr (KC == cm::kBf16)
    return false;
  else if constexpr (kHwFp8CvtFor<KC>)
    return cm::fp8_decode_mutated(mutant);
  else
    return true;
}

// The f16 path (IXO_FP8_F16_MMA, e4m3fn / e5m2 K with the hardware conversion): every e4m3fn /
// e5m2 code, NaN and Inf included, is exactly an f16, and so is a bf16 q of magnitude in
// [2^-17, 65504] (its 8 significant bits fit f16's normals and subnormals) or zero; the path
// takes finite q only. When every q element of a tile converts exactly (one vote a warp; the 4
// warps of a tile load the same q), q's fragments become f16 and each K pair widens with one
// cvt.rn.f16x2.e4m3x2 / e5m2x2 into an f16 MMA: the same operand values as the bf16 path's, so
// the same exact products. The scores equal the bf16 path's bit for bit where the tensor core
// sums exact products the same way for both formats (checked on the H200 by
// bench/gpu/fp8_widen_check: 33.5 M outputs of MMA chains of random operands over f16's
// exponent range; GPU tests CudaFp8Paths.* run tiles of both paths side by side). A tile with a
// q outside f16 (or a mutant's decode table) keeps the bf16 path.
#ifndef IXO_FP8_F16_MMA
#define IXO_FP8_F16_MMA 1
#endif
// IXO_FP8_F16_LOOP=1: the score kernels' main loops (native and CP) are instantiated per path
// (the f16 loop without the bf16 widenings' code); 0: one loop choosing the path a sub-tile.
// Same operations either way, so the same bits.
#ifndef IXO_FP8_F16_LOOP
#define IXO_FP8_F16_LOOP 1
#endif
// The K formats (and device passes) the f16 path is built for.
template <int KC>
constexpr bool kF16PathFor = kHwFp8CvtFor<KC>&& IXO_FP8_F16_MMA != 0;
// bf16x2 -> f16x2 (round to nearest); `exact` is cleared unless both halves convert exactly.
__device__ __forceinline__ std::uint32_t bf16x2_to_f16x2(std::uint32_t v, bool& exact) {
  const float lo = __uint_as_float(v << 16), hi = __uint_as_float(v & 0xFFFF0000u);
  std::uint32_t h;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(h) : "f"(hi), "f"(lo));
  float blo, bhi;
  f16x2_to_floats(h, blo, bhi);
  // NaN and Inf keep the bf16 path (Inf converts exactly, but the MMA check covers finite q only).
  exact = exact && blo == lo && bhi == hi && fabsf(lo) <= 65504.0f && fabsf(hi) <= 65504.0f;
  return h;
}
// q's fragments to f16 in place when every element of the warp's converts exactly (warp
// vote); returns whether it did.
template <int D>
__device__ __forceinline__ bool q_fragments_to_f16(std::uint32_t (&qa)[D / 16][4]) {
  bool exact = true;
#pragma unroll
  for (int s = 0; s < D / 16; ++s)
#pragma unroll
    for (int i = 0; i < 4; ++i) (void)bf16x2_to_f16x2(qa[s][i], exact);
  if (!__all_sync(0xffffffffu, exact)) return false;
#pragma unroll
  for (int s = 0; s < D / 16; ++s)
#pragma unroll
    for (int i = 0; i < 4; ++i) qa[s][i] = bf16x2_to_f16x2(qa[s][i], exact);
  return true;
}

// Branch-free fp8 widening of e4m3fn / e5m2 (no NaN / Inf code among the 4 bytes): the
// code's magnitude bits are moved into bf16 position with integer operations, giving the
// value times 2^-120 (e4m3fn) or 2^-112 (e5m2) as a bf16 (subnormal fp8 codes become
// subnormal bf16s with the same scale), then one bf16x2 multiply by the power of two
// restores the value: exact, so the B fragments are the same bits as the cvt path's.
// fp8x4_special: bit 7 of a byte is set iff that byte is a NaN (or e5m2 Inf) code.
template <int KC>
__device__ __forceinline__ std::uint32_t fp8x4_special(std::uint32_t w) {
  constexpr std::uint32_t kMag = KC == cm::kE5m2 ? 0x7C7C7C7Cu : 0x7F7F7F7Fu;
  constexpr std::uint32_t kInc = KC == cm::kE5m2 ? 0x04040404u : 0x01010101u;
  return (w & kMag) + kInc;
}
// Bytes (b_lo, b_hi) of w picked by sel into bits 8-15 / 24-31 -> bf16x2 (b_lo low).
template <int KC>
__device__ __forceinline__ std::uint32_t fp8x2_to_bf16x2_int(std::uint32_t w, unsigned sel) {
  constexpr int kShift = KC == cm::kE5m2 ? 3 : 4;         // magnitude bits -> bf16 position
  constexpr std::uint32_t kSign = 0x80008000u >> kShift;  // where the sign bits land
  constexpr std::uint32_t kFix = (1u << kShift) - 1u;     // y + kFix * sign moves them to bits 15 / 31
  constexpr std::uint32_t kScale = KC == cm::kE5m2 ? 0x77807780u : 0x7B807B80u;  // 2^112 / 2^120
  const std::uint32_t y = __byte_perm(w, 0u, sel) >> kShift;
  const std::uint32_t r = y + kFix * (y & kSign);
  std::uint32_t d;
  asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(r), "r"(kScale), "r"(0x80008000u));
  return d;
}

}  // namespace ixo::gpu::detail
#endif  // IXO_GPU_CUDA
