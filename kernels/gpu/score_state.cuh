// Device pieces of the score kernels shared by the native (indexer_kernels.cuh) and CP
// (cp_kernels.cuh) kernels, portable (CUDA and HIP): the launch shape, the online block
// score state's max and the fp8 -> bf16 decode table entry. Formulas: kernels/common.
#pragma once
#include <cstdint>
#include <type_traits>

#include "gpu/gpu_port.hpp"
#include "indexer_common.hpp"
#include "plans.hpp"

namespace ixo::gpu::detail {
namespace cm = ixo::common;

constexpr int kScoreThreads = cm::kScoreWarps * 32;  // 4 warps (CUDA); the scalar path works for any width
constexpr int kScalarMaxD = 256;                     // head dims of the scalar path

// ---- Host code of the launches (the CUDA/HIP launchers and the host simulation, kernels/sim_host).
// Head dims the score kernels run (native and CP): 1..256 (64 and 128 also on the tensor-core path).
inline bool head_dim_in_range(std::int64_t D) { return D >= 1 && D <= kScalarMaxD; }
// Calls f(std::integral_constant<int, KC>{}) for the K format code k_code (common::KCode): where a
// run-time format picks a kernel instantiation.
template <class F>
decltype(auto) with_k_format(int k_code, F&& f) {
  switch (k_code) {
    case cm::kBf16:
      return f(std::integral_constant<int, cm::kBf16>{});
    case cm::kE4m3fn:
      return f(std::integral_constant<int, cm::kE4m3fn>{});
    case cm::kE4m3fnuz:
      return f(std::integral_constant<int, cm::kE4m3fnuz>{});
    default:
      return f(std::integral_constant<int, cm::kE5m2>{});
  }
}

// The block max of two values, NaN-propagating (a NaN logit makes the block score NaN,
// docs/semantics.md "Scores"; cm::max_step is the CPU twin's). NVIDIA sm_80+: PTX
// max.NaN.f32, one instruction like fmaxf's max.f32 (which drops a NaN); elsewhere (HIP,
// the host pass, older archs) a portable fallback.
__device__ __forceinline__ float nan_max(float a, float b) {
#if IXO_GPU_MMA
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
#else
  return (a != a || b != b) ? NAN : fmaxf(a, b);
#endif
}

// The online block-score state (cm::BlockState, the CPU twin's too) with the GPU's max.
using cm::BlockState;
using cm::state_reset;
struct NanMax {
  __device__ __forceinline__ float operator()(float a, float b) const { return nan_max(a, b); }
};
// Adds n logits (already masked to -inf) in the given order.
template <int N>
__device__ __forceinline__ void state_add(BlockState& st, const float (&v)[N], bool lse, int mutant = 0) {
  cm::state_add(st, v, N, 1, lse, NanMax{}, mutant);
}
// Merges state b into a (a first, then b: a fixed order).
__device__ __forceinline__ void state_merge(BlockState& a, const BlockState& b, bool lse, int mutant = 0) {
  cm::state_merge(a, b, lse, NanMax{}, mutant);
}
using cm::state_score;

// bf16 bits of every fp8 code (exact: every fp8 value is a bf16 value).
__device__ __forceinline__ std::uint16_t fp8_bf16_bits(int code, int kcode, int mutant = 0) {
  const float f = cm::fp8_to_float(static_cast<std::uint8_t>(code), kcode, mutant);
  std::uint32_t u;
  __builtin_memcpy(&u, &f, 4);
  if (f != f) return 0x7FC0u;
  return static_cast<std::uint16_t>(u >> 16);
}

}  // namespace ixo::gpu::detail
