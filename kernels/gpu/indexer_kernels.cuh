// Single-source CUDA/HIP kernels of the indexer: score (per-row and packed are the same
// kernel; per-row is a pack of 1), top-k and a fill kernel. Included by indexer_cuda.cu
// (nvcc) and indexer_hip.hip (hipcc). Every shared formula comes from indexer_common.hpp.
// Design notes: docs/gpu-kernels.md.
#pragma once
#include <cstdint>
#include <type_traits>

#include "gpu/gpu_port.hpp"
#include "indexer_common.hpp"

namespace ixo::gpu::detail {
namespace cm = ixo::common;

constexpr int kScoreThreads = 128;  // 4 warps (CUDA); the scalar path works for any width
constexpr int kTopkThreads = 256;
constexpr int kTopkSmemKeys = 8192;  // rows with nb <= this keep their keys in shared memory

struct ScoreParams {
  const std::uint16_t* q;
  const std::uint8_t* k;
  const std::int32_t* r2t;
  const std::int64_t* slot;
  const std::int64_t* lens;
  float* scores;
  std::int64_t R, Hq, Hk, D, S, rows, width, NB;
  std::int64_t whole;  // R / pack: whole groups (common::program_rows_of)
  int bs, topk, init, local, lse, kcode, pack, gqa, chunks;
  float mult;
  int mutant;
};

struct TopkParams {
  const float* scores;
  const std::int64_t* slot;
  const std::int64_t* lens;
  std::int32_t* out;
  std::int64_t R, Hq, S, rows, NB;
  int bs, topk;
  int mutant;
};

// ---------------------------------------------------------------- shared per-group logic
// Metadata of one tile row (draft row x head of a kv head).
struct RowMeta {
  std::int64_t L;
  std::int64_t nb;
  bool write;  // active, nb > topk: this row's columns [0, nb) are written
  float* out;  // score row base
  std::int64_t nb_force;  // the nb its forcing uses (== nb)
  std::int64_t L_mask;    // the length its lanes are masked with (== L)
};

__device__ __forceinline__ bool row_writable(const ScoreParams& p, std::int64_t r, std::int64_t* L_out,
                                             std::int64_t* nb_out) {
  const std::int64_t L = p.lens[r];
  const std::int64_t sid = cm::table_row(p.slot[r], p.S, p.rows, L, p.mutant);
  const std::int64_t nb = sid >= 0 ? cm::num_blocks(L, p.bs) : 0;
  *L_out = L;
  *nb_out = nb;
  return cm::row_writes_scores(sid, nb, p.topk, p.mutant);
}

// Tile row i of the tile (rows [first, first + pack), K head kvh) of length Lg.
__device__ __forceinline__ RowMeta tile_row_meta(const ScoreParams& p, std::int64_t first, int pack, int kvh, int i,
                                                 std::int64_t Lg) {
  RowMeta m{0, 0, false, nullptr, 0, 0};
  const cm::TileRow tr = cm::tile_row(i, pack, p.gqa);
  if (!tr.used) return m;
  const std::int64_t r = first + tr.draft;
  m.write = row_writable(p, r, &m.L, &m.nb);
  const std::int64_t nbg = cm::num_blocks(Lg, p.bs);
  if (IXO_MUTANT(p.mutant, mutants::group_nb_for_rows) && m.write) m.nb = nbg;
  m.nb_force = IXO_MUTANT(p.mutant, mutants::no_row_local_reforce) ? nbg : m.nb;
  m.L_mask = IXO_MUTANT(p.mutant, mutants::pack_tail_leak) ? Lg : m.L;
  const cm::TileRow st = cm::store_tile_row(i, pack, p.gqa, p.mutant);  // == tr
  const std::int64_t rs = first + st.draft;
  const std::int64_t h = cm::tile_query_head(kvh, p.gqa, st, static_cast<int>(p.Hk), p.mutant);
  m.out = p.scores + (h * p.R + rs) * p.NB;
  return m;
}

// Tile length (the longest writable row of rows [first, first + pack): K is loaded for it)
// and the table row it reads.
__device__ __forceinline__ std::int64_t group_plan(const ScoreParams& p, std::int64_t first, int pack,
                                                   std::int64_t* sid) {
  std::int64_t Lg = 0;
  bool any = false;
  *sid = -1;
  for (int d = 0; d < pack; ++d) {
    std::int64_t L, nb;
    if (row_writable(p, first + d, &L, &nb)) {
      if (*sid < 0)
        *sid = cm::k_table_row(cm::table_row(p.slot[first + d], p.S, p.rows, L, p.mutant), first + d, p.rows, p.mutant);
      if (IXO_MUTANT(p.mutant, mutants::group_sized_by_shortest))
        Lg = !any || L < Lg ? L : Lg;
      else
        Lg = L > Lg ? L : Lg;
      any = true;
    }
  }
  return Lg;
}

// Online block-score state of one row: max, or (max, sum of exp2) for lse.
struct BlockState {
  float m;
  float s;
};
__device__ __forceinline__ void state_reset(BlockState& st) {
  st.m = -INFINITY;
  st.s = 0.0f;
}
// Adds n logits (already masked to -inf) in the given order.
template <int N>
__device__ __forceinline__ void state_add(BlockState& st, const float (&v)[N], bool lse, int mutant = 0) {
  float mt = -INFINITY;
#pragma unroll
  for (int e = 0; e < N; ++e) mt = fmaxf(mt, v[e]);
  if (!lse) {
    st.m = fmaxf(st.m, mt);
    return;
  }
  const float nm = fmaxf(st.m, mt);
  if (nm == -INFINITY) return;
  float s = st.m == -INFINITY ? 0.0f : st.s * cm::lse_exp(st.m - nm, mutant);
#pragma unroll
  for (int e = 0; e < N; ++e) s += cm::lse_exp(v[e] - nm, mutant);
  st.m = nm;
  st.s = s;
}
// Merges state b into a (a first, then b: a fixed order).
__device__ __forceinline__ void state_merge(BlockState& a, const BlockState& b, bool lse, int mutant = 0) {
  if (!lse) {
    a.m = fmaxf(a.m, b.m);
    return;
  }
  const float nm = fmaxf(a.m, b.m);
  if (nm == -INFINITY) return;
  const float sa = a.m == -INFINITY ? 0.0f : a.s * cm::lse_exp(a.m - nm, mutant);
  const float sb = b.m == -INFINITY ? 0.0f : b.s * cm::lse_exp(b.m - nm, mutant);
  a.m = nm;
  a.s = sa + sb;
}
__device__ __forceinline__ float state_score(const BlockState& st, bool lse, int mutant = 0) {
  if (!lse) return st.m;
  if (st.m == -INFINITY) return -INFINITY;
  const float r = st.m + cm::lse_log(st.s, mutant);
  return r != r ? -INFINITY : r;
}

__device__ __forceinline__ void write_block(const RowMeta& m, std::int64_t b, float score, const ScoreParams& p) {
  if (m.write && b < m.nb && b < p.NB) {
    const float f = cm::forced_score(score, b, m.nb_force, p.init, p.local, p.mutant);
    m.out[b] = f;
    if (IXO_MUTANT(p.mutant, mutants::stray_column_write) && b + 1 == m.nb && b + 1 < p.NB) m.out[b + 1] = f;
  }
}

// bf16 bits of every fp8 code (exact: every fp8 value is a bf16 value).
__device__ __forceinline__ std::uint16_t fp8_bf16_bits(int code, int kcode, int mutant = 0) {
  const float f = cm::fp8_to_float(static_cast<std::uint8_t>(code), kcode, mutant);
  std::uint32_t u;
  __builtin_memcpy(&u, &f, 4);
  if (f != f) return 0x7FC0u;
  return static_cast<std::uint16_t>(u >> 16);
}

#if defined(IXO_GPU_CUDA)
// ---------------------------------------------------------------- tensor-core path (CUDA)
// Built for sm_80+ device passes (the project builds sm_90a and sm_100a).
// Tile: 16 rows (pack x gqa) x 8 tokens per mma.sync.m16n8k16 (bf16 in, fp32 accumulate).
// A warp owns whole blocks (b0 + warp, +4, ...) and walks a block in sub-tiles of 32
// tokens from the block's start, so the order every row's values are reduced in depends
// only on the token's offset inside its block: identical in the per-row and packed launch.
//
// K fragments are loaded straight from global memory, 16 bytes per thread: thread j of a
// token's 4 threads loads bytes [c*64 + j*16, +16) of the K row for load c. The head-dim
// order of the MMA's k index is permuted accordingly (the same permutation for Q), which
// changes no arithmetic outside the hardware's own summation.
__device__ __forceinline__ void mma_bf16(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0, std::uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ std::uint32_t pack_bf16x2(float lo, float hi) {
  std::uint32_t d;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));
  return d;
}

// Two fp8 codes (low byte = first element) -> bf16x2 (low half = first element).
// use_lut: take the table even where the hardware converts (the table holds a mutant's decode).
template <int KC>
__device__ __forceinline__ std::uint32_t fp8x2_to_bf16x2(std::uint32_t two, const std::uint16_t* lut, bool use_lut = false) {
#if IXO_GPU_CVT_FP8
  if constexpr (KC == cm::kE4m3fn || KC == cm::kE5m2) {
    if (!use_lut) {
      std::uint32_t h2;
      const unsigned short in = static_cast<unsigned short>(two & 0xFFFFu);
      if constexpr (KC == cm::kE4m3fn) {
        asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h2) : "h"(in));
      } else {
        asm("cvt.rn.f16x2.e5m2x2 %0, %1;" : "=r"(h2) : "h"(in));
      }
      float lo, hi;
      asm("{ .reg .b16 l, h; mov.b32 {l, h}, %2; cvt.f32.f16 %0, l; cvt.f32.f16 %1, h; }"
          : "=f"(lo), "=f"(hi)
          : "r"(h2));
      return pack_bf16x2(lo, hi);
    }
  }
#else
  (void)use_lut;
#endif
  return static_cast<std::uint32_t>(lut[two & 0xFFu]) | (static_cast<std::uint32_t>(lut[(two >> 8) & 0xFFu]) << 16);
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
  constexpr int kShift = KC == cm::kE5m2 ? 3 : 4;            // magnitude bits -> bf16 position
  constexpr std::uint32_t kSign = 0x80008000u >> kShift;  // where the sign bits land
  constexpr std::uint32_t kFix = (1u << kShift) - 1u;       // y + kFix * sign moves them to bits 15 / 31
  constexpr std::uint32_t kScale = KC == cm::kE5m2 ? 0x77807780u : 0x7B807B80u;  // 2^112 / 2^120
  const std::uint32_t y = __byte_perm(w, 0u, sel) >> kShift;
  const std::uint32_t r = y + kFix * (y & kSign);
  std::uint32_t d;
  asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(r), "r"(kScale), "r"(0x80008000u));
  return d;
}

// 16-byte global -> shared copy that bypasses registers (zero-filled when src_bytes == 0).
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem, int src_bytes) {
  const unsigned sa = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(sa), "l"(gmem), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// Pipeline depth (sub-tiles of 32 tokens per warp in shared memory) and dynamic shared
// memory of the tensor-core kernel.
template <int D, int KC>
struct MmaCfg {
  static constexpr bool kFp8 = KC != cm::kBf16;
  static constexpr int kEsz = kFp8 ? 1 : 2;
  static constexpr int kNL = D * kEsz / 64;  // 16-byte pieces per token-thread
  static constexpr int kStages = kFp8 ? 4 : 3;
  static constexpr int kSmemBytes = (kScoreThreads / 32) * kStages * 4 * kNL * 32 * 16;
};

constexpr int kSplitMaxRem = 3;  // remainder blocks of a CTA (n % 4)
constexpr int kSplitMaxSub = 8;  // sub-tiles per block (block size <= 256) for the split
constexpr int kSlotAhead = 4;    // req_to_token entries loaded this many sub-tiles ahead

// One tile of a score program: rows [first, first + pack) (a packed group, or one row) of
// K head kvh, the blocks of KV chunk c of the tile's length Lg (group_plan, with the table
// row sid). lut: the fp8 decode table.
template <int D, int KC>
__device__ __forceinline__ void score_mma_tile(const ScoreParams& p, std::int64_t first, int pack, std::int64_t Lg,
                                               std::int64_t sid, int c, int kvh, const std::uint16_t* lut) {
  constexpr bool kFp8 = KC != cm::kBf16;
  constexpr int kEsz = kFp8 ? 1 : 2;
  constexpr int kNL = D * kEsz / 64;  // 16-byte loads per token-thread
  constexpr int kNS = MmaCfg<D, KC>::kStages;
  extern __shared__ uint4 kring[];  // [warp][stage][n-tile j][piece l][lane]
  constexpr int kSteps = D / 16;      // mma k-steps
  constexpr int kStepsPerLoad = kSteps / kNL;
  static_assert(D % 64 == 0, "D must be a multiple of 64");

  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int grp = lane >> 2, tig = lane & 3;

  if (Lg <= 0 || sid < 0) return;
  std::int64_t b0, b1;
  cm::chunk_blocks(cm::num_blocks(Lg, p.bs), p.chunks, c, &b0, &b1, p.mutant);
  if (b0 + warp >= b1) return;  // warp-uniform; only the split (b1 - b0 >= 4: no warp left) has a barrier below

  const RowMeta m0 = tile_row_meta(p, first, pack, kvh, grp, Lg);
  const RowMeta m1 = tile_row_meta(p, first, pack, kvh, grp + 8, Lg);

  // Q fragments with the permuted k order.
  std::uint32_t qa[kSteps][4];
  {
    const cm::TileRow t0 = cm::tile_row(grp, pack, p.gqa), t1 = cm::tile_row(grp + 8, pack, p.gqa);
    const std::uint32_t* q0 =
        t0.used ? reinterpret_cast<const std::uint32_t*>(p.q + ((first + t0.draft) * p.Hq + cm::tile_query_head(kvh, p.gqa, t0, static_cast<int>(p.Hk), p.mutant)) * D) : nullptr;
    const std::uint32_t* q1 =
        t1.used ? reinterpret_cast<const std::uint32_t*>(p.q + ((first + t1.draft) * p.Hq + cm::tile_query_head(kvh, p.gqa, t1, static_cast<int>(p.Hk), p.mutant)) * D) : nullptr;
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
      const int ld = s / kStepsPerLoad, sub = s % kStepsPerLoad;
      const int pd = kFp8 ? ld * 64 + tig * 16 + sub * 4 : ld * 32 + tig * 8 + sub * 4;  // first of 4 dims
      qa[s][0] = q0 ? __ldg(q0 + pd / 2) : 0u;
      qa[s][1] = q1 ? __ldg(q1 + pd / 2) : 0u;
      qa[s][2] = q0 ? __ldg(q0 + pd / 2 + 1) : 0u;
      qa[s][3] = q1 ? __ldg(q1 + pd / 2 + 1) : 0u;
    }
  }

  const bool lse = p.lse != 0;
  const int nsub = (p.bs + 31) / 32;
  // Block split of the CTA: warp w scores blocks b0 + w, b0 + w + 4, ... whole. For max
  // scores (no lse) of a range of n >= 4 blocks that is not a multiple of 4, the last n % 4
  // blocks are instead cut into their sub-tiles, dealt round-robin to the 4 warps and merged
  // by max through shared memory, so every warp streams the same number of sub-tiles (give
  // or take one). A max does not depend on the order of its operands (NaN logits are dropped
  // either way), so the bits equal the whole-block path's. lse keeps whole blocks (its sum
  // is order-dependent). The decision is CTA-uniform; with it every warp reaches the barrier.
  __shared__ float part[kSplitMaxRem][kSplitMaxSub][cm::kTileRows];
  const std::int64_t nblk = b1 - b0;
  const bool split = !lse && nblk >= 4 && (nblk & 3) != 0 && nsub <= kSplitMaxSub;
  const std::int64_t nfull_w = split ? nblk / 4 : (nblk - warp + 3) / 4;  // whole blocks of this warp
  const int rem = split ? static_cast<int>(nblk & 3) : 0;
  const std::int64_t full_tiles = nfull_w * nsub;
  const std::int64_t total = full_tiles + (split ? (rem * nsub - warp + 3) / 4 : 0);
  const std::int64_t b_rem = b0 + (nblk & ~std::int64_t{3});  // first block of the remainder
  const std::int32_t* r2t_row = p.r2t + sid * p.width;
  const std::int64_t row_bytes = p.Hk * D * kEsz;
  const std::uint8_t* kbase = p.k + static_cast<std::int64_t>(cm::tile_k_head(kvh, pack, p.mutant)) * D * kEsz + tig * 16;
  const bool use_lut = IXO_MUTANT(p.mutant, mutants::fp8_cast_dropped);

  // First token of sub-tile it, its offset in its block, and its remainder index (-1: whole block).
  auto tile_start = [&](std::int64_t it, int* off0, int* q) -> std::int64_t {
    std::int64_t b;
    if (it < full_tiles) {
      b = b0 + warp + 4 * (it / nsub);
      *off0 = static_cast<int>(it % nsub) * 32;
      *q = -1;
    } else {
      const int qq = warp + 4 * static_cast<int>(it - full_tiles);
      b = b_rem + qq / nsub;
      *off0 = (qq % nsub) * 32;
      *q = qq;
    }
    return b * p.bs + *off0;
  };
  // This lane's token of sub-tile it (-1: not loaded), its req_to_token entry, and its slot
  // (-1: not loaded). The entries are loaded kSlotAhead sub-tiles before their copies are
  // issued, so the dependent req_to_token -> K latency is hidden behind several sub-tiles.
  auto lane_token = [&](std::int64_t it) -> std::int64_t {
    if (it >= total) return -1;
    int off0, q;
    const std::int64_t t = tile_start(it, &off0, &q) + lane;
    return off0 + lane >= p.bs || t >= Lg ? -1 : t;
  };
  auto load_r2t = [&](std::int64_t it) -> std::int32_t {
    const std::int64_t t = lane_token(it);
    return t >= 0 ? __ldg(r2t_row + t) : 0;
  };
  auto to_slot = [&](std::int64_t it, std::int32_t raw) -> std::int64_t {
    return lane_token(it) >= 0 ? cm::wrap_slot(static_cast<std::int64_t>(raw), p.S, p.mutant) : -1;
  };
  // Each lane copies its own 16-byte pieces into the warp's ring and later reads back
  // exactly those pieces: no other thread touches them, so cp.async.wait_group suffices.
  uint4* ring = kring + static_cast<std::size_t>(warp) * kNS * 4 * kNL * 32;
  auto issue = [&](std::int64_t it, std::int64_t my_slot) {
    uint4* st = ring + static_cast<std::size_t>(it % kNS) * 4 * kNL * 32;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const std::int64_t s = __shfl_sync(0xffffffffu, my_slot, j * 8 + grp);
#pragma unroll
      for (int l = 0; l < kNL; ++l)
        cp_async16(st + (j * kNL + l) * 32 + lane, s >= 0 ? kbase + s * row_bytes + l * 64 : kbase, s >= 0 ? 16 : 0);
    }
  };

#pragma unroll
  for (int i = 0; i < kNS - 1; ++i) {
    if (i < total) issue(i, to_slot(i, load_r2t(i)));
    cp_async_commit();
  }
  std::int32_t r2t_ahead[kSlotAhead];  // entries of sub-tiles it + kNS - 1 + i
#pragma unroll
  for (int i = 0; i < kSlotAhead; ++i) r2t_ahead[i] = load_r2t(kNS - 1 + i);
  uint4 kc[4][kNL];
  BlockState st0, st1;
  state_reset(st0);
  state_reset(st1);
  // e4m3fn / e5m2 with the hardware path: sub-tiles without NaN / Inf codes (checked once
  // per sub-tile, warp-uniform) take the integer widening, the others the cvt path.
  constexpr bool kIntWiden = IXO_GPU_CVT_FP8 != 0 && (KC == cm::kE4m3fn || KC == cm::kE5m2);

  for (std::int64_t it = 0; it < total; ++it) {
    cp_async_wait<kNS - 2>();
    {
      const uint4* st = ring + static_cast<std::size_t>(it % kNS) * 4 * kNL * 32;
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int l = 0; l < kNL; ++l) kc[j][l] = st[(j * kNL + l) * 32 + lane];
    }
    if (it + kNS - 1 < total) issue(it + kNS - 1, to_slot(it + kNS - 1, r2t_ahead[0]));
    cp_async_commit();
#pragma unroll
    for (int i = 0; i + 1 < kSlotAhead; ++i) r2t_ahead[i] = r2t_ahead[i + 1];
    r2t_ahead[kSlotAhead - 1] = load_r2t(it + kNS - 1 + kSlotAhead);

    int off0, q;
    const std::int64_t t0 = tile_start(it, &off0, &q);
    float v0[8], v1[8];
    auto dots = [&](auto int_widen) {
      constexpr bool kInt = decltype(int_widen)::value;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        float acc[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
        for (int l = 0; l < kNL; ++l) {
          const std::uint32_t w[4] = {kc[j][l].x, kc[j][l].y, kc[j][l].z, kc[j][l].w};
#pragma unroll
          for (int sub = 0; sub < kStepsPerLoad; ++sub) {
            std::uint32_t bb0, bb1;
            if constexpr (kInt) {
              bb0 = fp8x2_to_bf16x2_int<KC>(w[sub], 0x1404u);
              bb1 = fp8x2_to_bf16x2_int<KC>(w[sub], 0x3424u);
            } else if constexpr (kFp8) {
              bb0 = fp8x2_to_bf16x2<KC>(w[sub] & 0xFFFFu, lut, use_lut);
              bb1 = fp8x2_to_bf16x2<KC>(w[sub] >> 16, lut, use_lut);
            } else {
              bb0 = w[2 * sub];
              bb1 = w[2 * sub + 1];
            }
            mma_bf16(acc, qa[l * kStepsPerLoad + sub], bb0, bb1);
          }
        }
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int off = off0 + j * 8 + tig * 2 + e;
          const std::int64_t t = t0 + j * 8 + tig * 2 + e;
          const bool in_blk = off < p.bs;
          v0[j * 2 + e] = in_blk ? cm::masked_logit(t < m0.L_mask, acc[e] * p.mult, p.mutant) : -INFINITY;
          v1[j * 2 + e] = in_blk ? cm::masked_logit(t < m1.L_mask, acc[2 + e] * p.mult, p.mutant) : -INFINITY;
        }
      }
    };
    if constexpr (kIntWiden) {
      std::uint32_t special = 0;
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int l = 0; l < kNL; ++l)
          special |= fp8x4_special<KC>(kc[j][l].x) | fp8x4_special<KC>(kc[j][l].y) | fp8x4_special<KC>(kc[j][l].z) |
                     fp8x4_special<KC>(kc[j][l].w);
      if (__all_sync(0xffffffffu, !use_lut && (special & 0x80808080u) == 0u))
        dots(std::true_type{});
      else
        dots(std::false_type{});
    } else {
      dots(std::false_type{});
    }
    state_add(st0, v0, lse, p.mutant);
    state_add(st1, v1, lse, p.mutant);

    if (q >= 0 || off0 + 32 >= p.bs) {  // block (or remainder piece) done: reduce over the 4 lanes of a row
#pragma unroll
      for (int x = 1; x <= 2; x <<= 1) {
        BlockState o0{__shfl_xor_sync(0xffffffffu, st0.m, x), __shfl_xor_sync(0xffffffffu, st0.s, x)};
        BlockState o1{__shfl_xor_sync(0xffffffffu, st1.m, x), __shfl_xor_sync(0xffffffffu, st1.s, x)};
        // Fixed order: the lower lane's state first, in every lane.
        if (tig & x) {
          BlockState a0 = o0, a1 = o1;
          state_merge(a0, st0, lse, p.mutant);
          state_merge(a1, st1, lse, p.mutant);
          st0 = a0;
          st1 = a1;
        } else {
          state_merge(st0, o0, lse, p.mutant);
          state_merge(st1, o1, lse, p.mutant);
        }
      }
      if (tig == 0) {
        if (q >= 0) {
          part[q / nsub][q % nsub][grp] = st0.m;
          part[q / nsub][q % nsub][grp + 8] = st1.m;
        } else {
          const std::int64_t b = (t0 - off0) / p.bs;
          write_block(m0, b, state_score(st0, lse, p.mutant), p);
          write_block(m1, b, state_score(st1, lse, p.mutant), p);
        }
      }
      state_reset(st0);
      state_reset(st1);
    }
  }
  cp_async_wait<0>();
  if (split) {
    __syncthreads();
    for (int x = threadIdx.x; x < rem * cm::kTileRows; x += blockDim.x) {
      const int rb = x / cm::kTileRows, i = x % cm::kTileRows;
      const RowMeta m = tile_row_meta(p, first, pack, kvh, i, Lg);
      BlockState sb;
      state_reset(sb);
      for (int s = 0; s < nsub; ++s) sb.m = fmaxf(sb.m, part[rb][s][i]);
      write_block(m, b_rem + rb, state_score(sb, false, p.mutant), p);
    }
  }
}

// The rows [first, first + rows) of a packed-plan program one after the other, each a tile
// of one row (a group that does not pack, or a trailing row): out of line, so the packed
// path's code stays as it was.
template <int D, int KC>
__device__ __noinline__ void score_mma_rows(ScoreParams p, std::int64_t first, int rows, int c, int kvh,
                                            const std::uint16_t* lut) {
  for (int t = 0; t < rows; ++t) {  // CTA-uniform
    if (t > 0) __syncthreads();     // the previous tile's split partials have been read
    std::int64_t sid;
    const std::int64_t L = group_plan(p, first + t, 1, &sid);
    score_mma_tile<D, KC>(p, first + t, 1, L, sid, c, kvh, lut);
  }
}

// Score program (x * chunks + c, K head). Per-row plan (kPacked false, p.pack 1): row x.
// Packed plan: the tiles of row-axis index x (common::program_tiles, written out): one
// packed tile when x is a whole group whose rows share one slot id (common::group_packs: P
// slot ids read here, on the device; the grid never depends on them), else one tile per
// row of x, scored one after the other by this CTA. The packed tile's plan (group_plan) is
// computed before the decision, so the slot id and length loads are in flight together.
template <int D, int KC, bool kPacked>
__global__ void __launch_bounds__(kScoreThreads, KC == cm::kBf16 ? 2 : 3) score_mma_kernel(ScoreParams p) {
  __shared__ std::uint16_t lut[256];
  if constexpr (KC != cm::kBf16) {
    for (int i = threadIdx.x; i < 256; i += blockDim.x) lut[i] = fp8_bf16_bits(i, KC, p.mutant);
    __syncthreads();
  }
  const int c = static_cast<int>(blockIdx.x % p.chunks);
  const int kvh = blockIdx.y;
  if constexpr (!kPacked) {  // the per-row plan (p.pack == 1): program x is row x
    const std::int64_t r = blockIdx.x / p.chunks;
    std::int64_t sid;
    const std::int64_t L = group_plan(p, r, p.pack, &sid);
    score_mma_tile<D, KC>(p, r, p.pack, L, sid, c, kvh, lut);
  } else {
    const cm::ProgramRows pr = cm::program_rows_of(blockIdx.x / p.chunks, p.whole, p.pack);
    std::int64_t sid;
    const std::int64_t Lg = group_plan(p, pr.first, pr.rows, &sid);
    if (cm::group_packs(p.slot, pr.first, pr.rows, p.pack)) {  // CTA-uniform; pr.rows == p.pack
      score_mma_tile<D, KC>(p, pr.first, p.pack, Lg, sid, c, kvh, lut);
      return;
    }
    score_mma_rows<D, KC>(p, pr.first, pr.rows, c, kvh, lut);
  }
}
#endif  // IXO_GPU_CUDA

// ---------------------------------------------------------------- portable scalar path
// HIP (and any target without the tensor-core path): each thread computes whole fp32 dots
// of one token against the tile's rows, in head-dim order; one thread per row reduces a
// block's logits in token order. Per-row arithmetic does not depend on the tile, so the
// packed and per-row launches agree bit for bit here too.
constexpr int kScalarMaxD = 256;
// One tile (rows [first, first + pack), K head kvh, KV chunk c), as score_mma_tile.
template <int KC>
__device__ __forceinline__ void score_scalar_tile(const ScoreParams& p, std::int64_t first, int pack, int c, int kvh) {
  __shared__ float qs[cm::kTileRows][kScalarMaxD];
  __shared__ float lg[cm::kTileRows][kScoreThreads];
  __shared__ BlockState st[cm::kTileRows];
  const int tid = threadIdx.x;
  std::int64_t sid;
  const std::int64_t Lg = group_plan(p, first, pack, &sid);
  if (Lg <= 0 || sid < 0) return;  // block-uniform
  std::int64_t b0, b1;
  cm::chunk_blocks(cm::num_blocks(Lg, p.bs), p.chunks, c, &b0, &b1, p.mutant);
  if (b0 >= b1) return;
  const int used = pack * p.gqa;
  const int D = static_cast<int>(p.D);
  for (int i = tid; i < cm::kTileRows * D; i += blockDim.x) {
    const int row = i / D, d = i % D;
    const cm::TileRow tr = cm::tile_row(row, pack, p.gqa);
    qs[row][d] = tr.used ? cm::bf16_to_float(p.q[((first + tr.draft) * p.Hq +
                                                  cm::tile_query_head(kvh, p.gqa, tr, static_cast<int>(p.Hk), p.mutant)) * D + d])
                         : 0.0f;
  }
  RowMeta mine{0, 0, false, nullptr, 0, 0};
  if (tid < used) mine = tile_row_meta(p, first, pack, kvh, tid, Lg);
  __syncthreads();
  const bool lse = p.lse != 0;
  const int esz = KC == cm::kBf16 ? 2 : 1;
  for (std::int64_t b = b0; b < b1; ++b) {
    if (tid < cm::kTileRows) state_reset(st[tid]);
    for (int off0 = 0; off0 < p.bs; off0 += blockDim.x) {
      const int off = off0 + tid;
      const std::int64_t t = b * p.bs + off;
      float dots[cm::kTileRows];
      for (int i = 0; i < cm::kTileRows; ++i) dots[i] = 0.0f;
      if (off < p.bs && t < Lg) {
        const std::int64_t s = cm::wrap_slot(p.r2t[sid * p.width + t], p.S, p.mutant);
        const std::uint8_t* kr = p.k + (s * p.Hk + cm::tile_k_head(kvh, pack, p.mutant)) * p.D * esz;
        for (int d = 0; d < D; ++d) {
          float kv;
          if (KC == cm::kBf16) {
            kv = cm::bf16_to_float(static_cast<std::uint16_t>(kr[2 * d] | (kr[2 * d + 1] << 8)));
          } else {
            kv = cm::fp8_to_float(kr[d], KC, p.mutant);
          }
          for (int i = 0; i < cm::kTileRows; ++i) dots[i] = fmaf(qs[i][d], kv, dots[i]);
        }
      }
      for (int i = 0; i < cm::kTileRows; ++i) lg[i][tid] = dots[i] * p.mult;
      __syncthreads();
      if (tid < used) {
        const int n = p.bs - off0 < (int)blockDim.x ? p.bs - off0 : (int)blockDim.x;
        for (int e = 0; e < n; ++e) {
          const std::int64_t te = b * p.bs + off0 + e;
          float v[1] = {cm::masked_logit(te < mine.L_mask, lg[tid][e], p.mutant)};
          state_add(st[tid], v, lse, p.mutant);
        }
      }
      __syncthreads();
    }
    if (tid < used) write_block(mine, b, state_score(st[tid], lse, p.mutant), p);
  }
}

// Score program of the portable path: the tiles of row-axis index x, as score_mma_kernel.
template <int KC>
__global__ void __launch_bounds__(kScoreThreads) score_scalar_kernel(ScoreParams p) {
  const int c = static_cast<int>(blockIdx.x % p.chunks);
  const int kvh = blockIdx.y;
  const cm::ProgramTiles pt = cm::program_tiles(p.slot, blockIdx.x / p.chunks, p.R, p.pack);
  for (int t = 0; t < pt.count; ++t) {  // block-uniform
    if (t > 0) __syncthreads();         // the previous tile's shared memory is no longer read
    score_scalar_tile<KC>(p, pt.first + static_cast<std::int64_t>(t) * pt.pack, pt.pack, c, kvh);
  }
}

// ---------------------------------------------------------------- top-k
// One block (256 threads) per (head, row). Trivial rows (nb <= topk) and inactive rows never read the
// scores. Otherwise a 4-pass radix select (8 bits a pass) over the upper 32 bits of
// common::topk_key finds the k-th score key; ties on it go to the lowest ids (the key's
// lower half); the selected ids are compacted in id order, so the output is ascending.
// Block-wide exclusive prefix sum: warp shuffles, then one warp over the warp totals.
template <int NT>
__device__ __forceinline__ std::uint64_t block_exclusive_scan(std::uint64_t v, std::uint64_t* wsum) {
  constexpr int W = IXO_WARP_SIZE;
  static_assert(NT % W == 0 && NT / W <= W, "block scan shape");
  const int tid = threadIdx.x, lane = tid % W, w = tid / W;
  std::uint64_t x = v;
#pragma unroll
  for (int d = 1; d < W; d <<= 1) {
    const std::uint64_t y = IXO_SHFL_UP(x, d);
    if (lane >= d) x += y;
  }
  if (lane == W - 1) wsum[w] = x;
  __syncthreads();
  if (w == 0) {
    std::uint64_t t = lane < NT / W ? wsum[lane] : 0;
#pragma unroll
    for (int d = 1; d < W; d <<= 1) {
      const std::uint64_t y = IXO_SHFL_UP(t, d);
      if (lane >= d) t += y;
    }
    if (lane < NT / W) wsum[lane] = t;
  }
  __syncthreads();
  const std::uint64_t res = (w > 0 ? wsum[w - 1] : 0) + x - v;
  __syncthreads();
  return res;
}

__device__ __forceinline__ std::uint32_t score_key_hi(float s) {
  return static_cast<std::uint32_t>(cm::topk_key(s, 0) >> 32);
}

template <int NT>
__global__ void __launch_bounds__(NT) topk_kernel(TopkParams p) {
  __shared__ std::uint32_t keys[kTopkSmemKeys];
  __shared__ std::uint32_t hist[257];
  __shared__ std::uint64_t scan[IXO_WARP_SIZE];
  static_assert(NT >= 256, "one thread per radix bin");
  __shared__ std::uint32_t sel_digit, sel_need;
  const int tid = threadIdx.x;
  const std::int64_t hr = blockIdx.x;  // h * R + r
  const std::int64_t r = hr % p.R;
  std::int32_t* out = p.out + hr * p.topk;
  const std::int64_t L = p.lens[r];
  const bool active = cm::table_row(p.slot[r], p.S, p.rows, L, p.mutant) >= 0;
  const std::int64_t nb = active ? cm::num_blocks(L, p.bs) : 0;
  const bool no_shortcut = IXO_MUTANT(p.mutant, mutants::trivial_rows_not_shortcut) && nb > 0;
  if (cm::trivial_row(nb, p.topk) && !no_shortcut) {
    for (int i = tid; i < p.topk; i += NT) out[i] = cm::trivial_topk_id(i, nb, p.mutant);
    return;
  }
  // Blocks ranked: the row's nb (the mutant above ranks a trivial row's whole buffer row),
  // k of them selected (topk unless that mutant), `kept` by the radix select (topk_one_short
  // keeps k - 1 and appends block 0).
  const std::int64_t n = cm::trivial_row(nb, p.topk) ? p.NB : (nb < p.NB ? nb : p.NB);
  const int k = n < p.topk ? static_cast<int>(n) : p.topk;
  const int kept = IXO_MUTANT(p.mutant, mutants::topk_one_short) ? k - 1 : k;
  for (int i = tid + kept; i < p.topk; i += NT) out[i] = i < k ? 0 : -1;
  if (kept <= 0) return;
  const float* sc = p.scores + hr * p.NB;
  const bool in_smem = n <= kTopkSmemKeys;
  if (in_smem)
    for (std::int64_t j = tid; j < n; j += NT) keys[j] = score_key_hi(sc[j]);
  __syncthreads();
  auto key = [&](std::int64_t j) -> std::uint32_t { return in_smem ? keys[j] : score_key_hi(sc[j]); };

  std::uint32_t prefix = 0, mask = 0, need = static_cast<std::uint32_t>(kept);
  for (int shift = 24; shift >= 0; shift -= 8) {
    for (int i = tid; i < 257; i += NT) hist[i] = 0;
    __syncthreads();
    for (std::int64_t j = tid; j < n; j += NT) {
      const std::uint32_t u = key(j);
      if ((u & mask) == prefix) atomicAdd(&hist[(u >> shift) & 0xFFu], 1u);
    }
    __syncthreads();
    // Suffix sums over the 256 bins (hist[256] stays 0).
    const std::uint64_t mine = tid < 256 ? hist[255 - tid] : 0;
    const std::uint64_t excl = block_exclusive_scan<NT>(mine, scan);
    if (tid < 256) {
      const std::uint32_t above = static_cast<std::uint32_t>(excl);         // bins > 255 - tid
      const std::uint32_t upto = static_cast<std::uint32_t>(excl + mine);   // bins >= 255 - tid
      if (above < need && upto >= need) {
        sel_digit = 255u - tid;
        sel_need = need - above;
      }
    }
    __syncthreads();
    prefix |= sel_digit << shift;
    mask |= 0xFFu << shift;
    need = sel_need;
    __syncthreads();
  }
  // Ties on the k-th key: the `need` lowest ids of the eq_total tied ones (the last pass's
  // bin of the selected digit counts them); the mutant skips the lowest ones instead.
  const std::uint32_t eq_total = hist[prefix & 0xFFu];
  const std::uint32_t skip = IXO_MUTANT(p.mutant, mutants::tie_rule_reversed) ? eq_total - need : 0u;
  // Compaction in id order: thread tid owns ids [lo, hi).
  const std::int64_t per = (n + NT - 1) / NT;
  const std::int64_t lo = tid * per < n ? tid * per : n;
  const std::int64_t hi = lo + per < n ? lo + per : n;
  std::uint32_t gt = 0, eq = 0;
  for (std::int64_t j = lo; j < hi; ++j) {
    const std::uint32_t u = key(j);
    gt += u > prefix;
    eq += u == prefix;
  }
  const std::uint64_t ex = block_exclusive_scan<NT>((static_cast<std::uint64_t>(gt) << 32) | eq, scan);
  std::uint32_t gt_before = static_cast<std::uint32_t>(ex >> 32), eq_before = static_cast<std::uint32_t>(ex & 0xFFFFFFFFu);
  for (std::int64_t j = lo; j < hi; ++j) {
    const std::uint32_t u = key(j);
    bool take = false;
    if (u > prefix) {
      take = true;
    } else if (u == prefix) {
      take = eq_before >= skip && eq_before - skip < need;
      ++eq_before;
    }
    if (take) {
      const std::uint32_t eq_seen = eq_before - (u == prefix ? 1u : 0u);  // tied ids before j
      const std::uint32_t eq_taken = eq_seen > skip ? eq_seen - skip : 0u;
      std::uint32_t pos = gt_before + (eq_taken < need ? eq_taken : need);
      if (IXO_MUTANT(p.mutant, mutants::ids_unsorted)) pos = static_cast<std::uint32_t>(kept) - 1u - pos;  // descending
      if (pos < static_cast<std::uint32_t>(kept)) out[pos] = static_cast<std::int32_t>(j);
    }
    gt_before += u > prefix;
  }
}

__global__ void fill_u32_kernel(std::uint32_t* dst, std::uint32_t bits, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    dst[i] = bits;
}

}  // namespace ixo::gpu::detail
