// The portable scalar score path's block loop, shared by the native (indexer_kernels.cuh)
// and CP (cp_kernels.cuh) scalar kernels (HIP, and CUDA head dims other than 64 / 128):
// each thread computes whole fp32 dots of one token against the tile's 16 rows, in head-dim
// order, with K decoded by common::k_element; one thread per row reduces a block's logits
// in token order. Per-row arithmetic does not depend on the tile, so packed and per-row
// launches agree bit for bit.
#pragma once
#include <cstdint>

#include "gpu/gpu_port.hpp"
#include "gpu/score_state.cuh"
#include "indexer_common.hpp"

namespace ixo::gpu::detail {

// Where a tile reads K: table row r2t_row (req_to_token entries), slots wrapped by S, K head
// k_head of Hk, head dim D; tokens past Lg (the tile's length) are not loaded.
struct ScalarKeys {
  const std::uint8_t* k;
  const std::int32_t* r2t_row;
  std::int64_t S, Hk, D, Lg;
  int k_head, bs;
  float mult;
  int mutant;
};

// Shared memory of a scalar tile: widened q of the 16 tile rows, one logit per (row,
// thread) and each row's block state.
struct ScalarSmem {
  float qs[cm::kTileRows][kScalarMaxD];
  float lg[cm::kTileRows][kScoreThreads];
  BlockState st[cm::kTileRows];
};

// Block b of the tile: returns, in thread i < used, tile row i's block score over the tokens
// it sees (t < L_mask, its own masking length); block-wide (every thread calls it).
template <int KC>
__device__ __forceinline__ float scalar_block_score(const ScalarKeys& kk, std::int64_t b, int used, std::int64_t L_mask,
                                                    bool lse, ScalarSmem& sm) {
  const int tid = threadIdx.x;
  const int D = static_cast<int>(kk.D);
  const int esz = cm::k_element_bytes(KC);
  if (tid < cm::kTileRows) state_reset(sm.st[tid]);
  for (int off0 = 0; off0 < kk.bs; off0 += blockDim.x) {
    const int off = off0 + tid;
    const std::int64_t t = b * kk.bs + off;
    float dots[cm::kTileRows];
    for (int i = 0; i < cm::kTileRows; ++i) dots[i] = 0.0f;
    if (off < kk.bs && t < kk.Lg) {
      const std::int64_t s = cm::wrap_slot(kk.r2t_row[t], kk.S, kk.mutant);
      const std::uint8_t* kr = kk.k + (s * kk.Hk + kk.k_head) * kk.D * esz;
      for (int d = 0; d < D; ++d) {
        const float kv = cm::k_element(kr, d, KC, kk.mutant);
        for (int i = 0; i < cm::kTileRows; ++i) dots[i] = fmaf(sm.qs[i][d], kv, dots[i]);
      }
    }
    for (int i = 0; i < cm::kTileRows; ++i) sm.lg[i][tid] = dots[i] * kk.mult;
    __syncthreads();
    if (tid < used) {
      const int n = kk.bs - off0 < static_cast<int>(blockDim.x) ? kk.bs - off0 : static_cast<int>(blockDim.x);
      for (int e = 0; e < n; ++e) {
        const std::int64_t te = b * kk.bs + off0 + e;
        float v[1] = {cm::masked_logit(te < L_mask, sm.lg[tid][e], kk.mutant)};
        state_add(sm.st[tid], v, lse, kk.mutant);
      }
    }
    __syncthreads();
  }
  return tid < used ? state_score(sm.st[tid], lse, kk.mutant) : 0.0f;
}

}  // namespace ixo::gpu::detail
