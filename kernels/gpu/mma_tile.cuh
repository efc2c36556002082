// Tensor-core (CUDA, sm_80+) pieces of the score kernels shared by the native
// (indexer_kernels.cuh) and CP (cp_kernels.cuh) kernels: the MMA and fp8 widening
// (mma_convert.cuh), the per-warp cp.async ring of K sub-tiles, the Q fragments, the logits of one 32-token
// sub-tile (MMA + widening + masking) and the merge of a row's 4 lanes. Both kernels call
// these, so a block's fp32 score has the same bits in both.
#pragma once
#include <cstdint>
#include <type_traits>

#include "gpu/gpu_port.hpp"
#include "gpu/mma_convert.cuh"
#include "gpu/score_state.cuh"
#include "indexer_common.hpp"
#include "plans.hpp"

#if defined(IXO_GPU_CUDA)
namespace ixo::gpu::detail {

// Tile: 16 rows (pack x gqa) x 8 tokens per mma.sync.m16n8k16 (bf16 in, fp32 accumulate).
// A warp owns whole blocks (b0 + warp, +4, ...) and walks a block in sub-tiles of 32
// tokens from the block's start, so the order every row's values are reduced in depends
// only on the token's offset inside its block: identical in the per-row and packed launch.
//
// K fragments, 16 bytes per thread (copied global -> shared by the cp.async ring below, then
// read by the same lane): thread j of a token's 4 threads takes bytes [c*64 + j*16, +16) of
// the K row for load c. The head-dim
// order of the MMA's k index is permuted accordingly (the same permutation for Q), which
// changes no arithmetic outside the hardware's own summation.

// 16-byte global -> shared copy that bypasses registers (zero-filled when src_bytes == 0),
// with the L2 prefetch-size hint .L2::128B (IXO_CP_ASYNC_L2_PREFETCH 128, the default; 256:
// .L2::256B; 0: no hint). A lane's 16-byte pieces are 64 bytes of a token row a warp
// instruction (8 rows x 64 B), so without the hint each 128-byte line reached the L2 as two
// 64-byte misses (the likely reason for the gain; not measured with ncu). H200, one lease
// (docs/performance.md "Session 16"): 128 took the packed bf16 score kernel 160.8 -> 146.0 us
// (16 x 131072) and 1134.6 -> 1006.5 (32 x 524288), e4m3fn -3 / -4 %, CP per-row bf16 -7 / -8 %;
// 256 was faster than none for packed but 8 % slower per-row.
// kEvictFirst: the copy carries an L2 evict-first cache policy (createpolicy + .L2::cache_hint,
// 128B form only): K streamed once a step. The packed score kernels take it (experiment row 48,
// session 30, H100, one call: 16 x 131072 packed step bf16 -2.3 %, e4m3fn -2.2 %, 32 x 524288
// -0.5 %; row 50, session 31: the CP packed kernel too, -2.2..-3.0 % on the large shapes); the
// per-row kernels do not (their CTAs of one request re-read K from L2: per-row e4m3fn
// +2.3..+2.9 % with it). IXO_CP_ASYNC_EVICT_FIRST=1 gives it to every copy (row 48 as measured).
#ifndef IXO_CP_ASYNC_L2_PREFETCH
#define IXO_CP_ASYNC_L2_PREFETCH 128
#endif
#ifndef IXO_CP_ASYNC_EVICT_FIRST
#define IXO_CP_ASYNC_EVICT_FIRST 0
#endif
#ifndef IXO_PACKED_K_EVICT_FIRST
#define IXO_PACKED_K_EVICT_FIRST 1  // 0: the packed kernels' copies as the per-row kernels' (before session 30)
#endif
#if (IXO_CP_ASYNC_EVICT_FIRST || IXO_PACKED_K_EVICT_FIRST) && IXO_CP_ASYNC_L2_PREFETCH != 128
#error "the evict-first copies are built for the .L2::128B form only (IXO_CP_ASYNC_L2_PREFETCH 128)"
#endif
// The packed plans' copies stream K (the native packed kernel, session 30; the CP packed kernel,
// session 31); the per-row plans' do not (a request's row CTAs share K through L2).
constexpr bool kPackedStreamK = IXO_PACKED_K_EVICT_FIRST != 0;
// The L2 evict-first cache policy of the streamed copies (cp_async16, cp_async16_fill).
__device__ __forceinline__ unsigned long long l2_evict_first_policy() {
  unsigned long long policy;
  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
  return policy;
}
template <bool kEvictFirst = false>
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem, int src_bytes) {
  static_assert(!kEvictFirst || kPackedStreamK, "kEvictFirst comes from kPackedStreamK (IXO_PACKED_K_EVICT_FIRST)");
  const unsigned sa = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  if constexpr (kEvictFirst || IXO_CP_ASYNC_EVICT_FIRST) {  // the #error above: the 128B form
    const unsigned long long policy = l2_evict_first_policy();
    asm volatile("cp.async.cg.shared.global.L2::cache_hint.L2::128B [%0], [%1], 16, %2, %3;\n" ::"r"(sa), "l"(gmem),
                 "r"(src_bytes), "l"(policy)
                 : "memory");
    return;
  }
#if IXO_CP_ASYNC_L2_PREFETCH == 256
  asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16, %2;\n" ::"r"(sa), "l"(gmem), "r"(src_bytes)
               : "memory");
#elif IXO_CP_ASYNC_L2_PREFETCH == 128
  asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16, %2;\n" ::"r"(sa), "l"(gmem), "r"(src_bytes)
               : "memory");
#else
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(sa), "l"(gmem), "r"(src_bytes) : "memory");
#endif
}
// 4-byte global -> shared copy (zero-filled when src_bytes == 0; nothing is read then).
__device__ __forceinline__ void cp_async4(void* smem, const void* gmem, int src_bytes) {
  const unsigned sa = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(sa), "l"(gmem), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// Pipeline depth (sub-tiles of 32 tokens per warp in shared memory) and dynamic shared
// memory of the tensor-core kernel. IXO_MMA_STAGES_BF16 / _FP8 override the depth (tuning
// experiments, docs/performance.md).
#ifndef IXO_MMA_STAGES_BF16
#define IXO_MMA_STAGES_BF16 ::ixo::common::kMmaStagesBf16
#endif
#ifndef IXO_MMA_STAGES_FP8
#define IXO_MMA_STAGES_FP8 ::ixo::common::kMmaStagesFp8
#endif
template <int D, int KC>
struct MmaCfg {
  static constexpr bool kFp8 = KC != cm::kBf16;
  static constexpr int kEsz = kFp8 ? 1 : 2;
  static constexpr int kNL = D * kEsz / 64;  // 16-byte pieces per token-thread
  static constexpr int kStages = kFp8 ? IXO_MMA_STAGES_FP8 : IXO_MMA_STAGES_BF16;
  static_assert(kStages >= 2, "the ring issues ahead of the sub-tile it waits for");
  static constexpr int kRingBytes = (kScoreThreads / 32) * kStages * 4 * kNL * 32 * 16;  // K sub-tiles
  static constexpr int kEntryBytes = (kScoreThreads / 32) * kStages * 32 * 4;            // EntryRing
  static constexpr int kSmemBytes = kRingBytes;                                          // native score kernel
  static constexpr int kSmemBytesWithEntries = kRingBytes + kEntryBytes;                 // CP score kernel
};

// A warp's share of the cp.async ring: [stage][n-tile j][piece l][lane] 16-byte pieces.
template <int D, int KC>
constexpr int kRingStage = 4 * MmaCfg<D, KC>::kNL * 32;

// A warp's req_to_token entries (the table entry of each lane's token of a sub-tile) on their
// way to the K copies, in shared memory behind the K ring: [warp][stage][lane] int32. The
// entry of sub-tile y is copied by cp.async into stage y % kStages in the commit group of the
// step kStages before the one that issues y's K copy, so the ring's own wait_group has
// completed it by then, and no register waits for it. `loaded` bit s: this lane's entry in
// stage s was copied (a lane past its block or its tile's length copies nothing and loads no
// K). Used by the CP score kernel (whose single entry loaded one step ahead was consumed at
// once: CP per-row -9 / -15 %, packed -7 / -9 %, session 7). The native kernel keeps its
// register ring (kSlotAhead): there the ring removed the stall at the register shift (35 % of
// the packed bf16 kernel's warp-stall samples, ncu source view) but not the time (packed bf16
// -1 %, per-row 32 x 524288 +7 %, docs/performance.md "Session 7").
template <int D, int KC>
struct EntryRing {
  std::int32_t* st;  // this warp's [kStages][32]
  unsigned loaded;
  __device__ __forceinline__ EntryRing(uint4* smem, int warp)
      : st(reinterpret_cast<std::int32_t*>(reinterpret_cast<char*>(smem) + MmaCfg<D, KC>::kRingBytes) +
           warp * MmaCfg<D, KC>::kStages * 32),
        loaded(0u) {}
  // Copies entry `row[t]` (t < 0: none) into stage `stage` of this lane.
  __device__ __forceinline__ void issue(int stage, int lane, const std::int32_t* row, std::int64_t t) {
    cp_async4(st + stage * 32 + lane, row + (t >= 0 ? t : 0), t >= 0 ? 4 : 0);
    loaded = t >= 0 ? loaded | (1u << stage) : loaded & ~(1u << stage);
  }
  // This lane's entry of stage `stage` (after the wait that completed its copy); false: none.
  __device__ __forceinline__ bool read(int stage, int lane, std::int32_t* raw) const {
    *raw = st[stage * 32 + lane];
    return ((loaded >> stage) & 1u) != 0u;
  }
};

// Q fragments of the two tile rows grp and grp + 8 (row pointers q0 / q1, nullptr: unused
// row), with the permuted k order of the K loads.
template <int D, int KC>
__device__ __forceinline__ void load_q_fragments(std::uint32_t (&qa)[D / 16][4], const std::uint32_t* q0,
                                                 const std::uint32_t* q1, int tig) {
  constexpr bool kFp8 = MmaCfg<D, KC>::kFp8;
  constexpr int kStepsPerLoad = (D / 16) / MmaCfg<D, KC>::kNL;
#pragma unroll
  for (int s = 0; s < D / 16; ++s) {
    const int ld = s / kStepsPerLoad, sub = s % kStepsPerLoad;
    const int pd = kFp8 ? ld * 64 + tig * 16 + sub * 4 : ld * 32 + tig * 8 + sub * 4;  // first of 4 dims
    qa[s][0] = q0 ? __ldg(q0 + pd / 2) : 0u;
    qa[s][1] = q1 ? __ldg(q1 + pd / 2) : 0u;
    qa[s][2] = q0 ? __ldg(q0 + pd / 2 + 1) : 0u;
    qa[s][3] = q1 ? __ldg(q1 + pd / 2 + 1) : 0u;
  }
}

// Whether this tile's sub-tiles take the f16 path (converting q's fragments to f16 if so):
// e4m3fn / e5m2 K with the hardware conversion, no mutant's decode table, and every q element
// exact in f16. It reads q's fragments, so the warp waits for their loads where it is called:
// the score kernels call it after the ring's first K copies and the req_to_token entries ahead
// are issued (experiment row 49, session 30: before them, q's load preceded the entries' in
// the fp8 start chain; H100 latency suite e4m3fn per-row -1.1 % geomean, the steps level).
template <int D, int KC>
__device__ __forceinline__ bool tile_takes_f16_path(std::uint32_t (&qa)[D / 16][4], bool use_lut) {
  if constexpr (kF16PathFor<KC>) return !use_lut && q_fragments_to_f16<D>(qa);
  (void)qa;
  (void)use_lut;
  return false;
}

// Runs the score kernels' main loop once a widening path (IXO_FP8_F16_LOOP): loop(true_type)
// for a tile on the f16 path (q_f16, warp-uniform), loop(false_type) otherwise.
template <int KC, class Loop>
__device__ __forceinline__ void run_per_widening_path(bool q_f16, Loop&& loop) {
  if constexpr (kF16PathFor<KC> && IXO_FP8_F16_LOOP) {
    if (q_f16) {
      loop(std::true_type{});
      return;
    }
  }
  loop(std::false_type{});
}

// The position in a warp's stream of sub-tiles (common::SubtileCursor), with the ring's
// stage count.
template <int D, int KC>
using RingCursor = cm::SubtileCursor<MmaCfg<D, KC>::kStages>;

// Issues the copies of one sub-tile into ring stage `stage` of the warp: token j * 8 + grp
// of the sub-tile (its K row held by that lane, -1: not loaded, zero-filled) for every
// n-tile j. Each lane copies its own 16-byte pieces and later reads back exactly those
// pieces: no other thread touches them, so cp.async.wait_group suffices. A row not loaded
// copies 0 bytes from row 0 (nothing is read), so the pieces' addresses are one base plus
// constant offsets. kEvictFirst: cp_async16's L2 policy (the packed score kernels).
template <int D, int KC, bool kEvictFirst = false>
__device__ __forceinline__ void ring_issue(uint4* ring, int stage, std::int64_t my_slot, const std::uint8_t* kbase,
                                           std::int64_t row_bytes, int lane, int grp) {
  constexpr int kNL = MmaCfg<D, KC>::kNL;
  uint4* st = ring + static_cast<std::size_t>(stage) * kRingStage<D, KC>;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const std::int64_t s = __shfl_sync(0xffffffffu, my_slot, j * 8 + grp);
    const std::uint8_t* src = kbase + (s >= 0 ? s : 0) * row_bytes;
    const int n = s >= 0 ? 16 : 0;
#pragma unroll
    for (int l = 0; l < kNL; ++l) cp_async16<kEvictFirst>(st + (j * kNL + l) * 32 + lane, src + l * 64, n);
  }
}
// Reads this lane's pieces of ring stage `stage` back (after cp_async_wait).
template <int D, int KC>
__device__ __forceinline__ void ring_drain(const uint4* ring, int stage, uint4 (&kf)[4][MmaCfg<D, KC>::kNL], int lane) {
  constexpr int kNL = MmaCfg<D, KC>::kNL;
  const uint4* st = ring + static_cast<std::size_t>(stage) * kRingStage<D, KC>;
#pragma unroll
  for (int j = 0; j < 4; ++j)
#pragma unroll
    for (int l = 0; l < kNL; ++l) kf[j][l] = st[(j * kNL + l) * 32 + lane];
}

// The warp's copy pipeline over its `total` sub-tiles (native and CP score tiles). Start:
// issue sub-tiles 0 .. kStages - 2 (cursor `iss`, then at kStages - 1), one commit group
// each (empty past `total`). issue(iss) issues the sub-tile at cursor iss.
template <int D, int KC, class Cursor, class Issue>
__device__ __forceinline__ void ring_start(Cursor& iss, int nsub, typename Cursor::Index total, Issue&& issue) {
#pragma unroll
  for (int i = 0; i < MmaCfg<D, KC>::kStages - 1; ++i) {
    if (iss.it < total) issue(iss);
    cp_async_commit();
    iss.next(nsub);
  }
}
// Step at cursor `cur`: first issue the sub-tile at `iss` (cur.it + kStages - 1, if any)
// into the stage read back in the previous step (its pieces are in registers by now: the same
// lane wrote and read them) and advance iss; then wait for cur's sub-tile and read this lane's
// pieces of it into kf. Issuing before the wait keeps every stage of the ring in flight while
// the warp waits (kStages sub-tiles, not kStages - 1).
template <int D, int KC, class Cursor, class Issue, class Drain>
__device__ __forceinline__ void ring_step_then(Cursor& iss, int nsub, typename Cursor::Index total, Issue&& issue,
                                               Drain&& drain) {
  constexpr int kNS = MmaCfg<D, KC>::kStages;
  if (iss.it < total) issue(iss);
  cp_async_commit();
  iss.next(nsub);
  cp_async_wait<kNS - 1>();
  drain();
}
template <int D, int KC, class Cursor, class Issue>
__device__ __forceinline__ void ring_step(const uint4* ring, const Cursor& cur, Cursor& iss, int nsub,
                                          typename Cursor::Index total, uint4 (&kf)[4][MmaCfg<D, KC>::kNL], int lane,
                                          Issue&& issue) {
  ring_step_then<D, KC>(iss, nsub, total, issue, [&] { ring_drain<D, KC>(ring, cur.stage, kf, lane); });
}

// ring_start with an EntryRing: first the entries of sub-tiles iss.it + kStages - 1 ..
// iss.it + 2 kStages - 2 (the K copies of the first kStages steps) in a commit group of their
// own, then ring_start (its kStages - 1 sub-tiles issued with direct(c), which loads their
// entries itself), then a wait for that first group only. token(c): this lane's token of
// sub-tile c (-1: none). Afterwards ahd = iss + kStages, where entry_issue continues.
template <int D, int KC, class Token, class Direct>
__device__ __forceinline__ void ring_start_entries(RingCursor<D, KC>& iss, RingCursor<D, KC>& ahd,
                                                   EntryRing<D, KC>& ents, int nsub, std::int64_t total, int lane,
                                                   const std::int32_t* row, Token&& token, Direct&& direct) {
  constexpr int kNS = MmaCfg<D, KC>::kStages;
  ahd.seek(iss.it + kNS - 1, nsub);
#pragma unroll
  for (int i = 0; i < kNS; ++i) {
    if (ahd.it < total) ents.issue(ahd.stage, lane, row, token(ahd));
    ahd.next(nsub);
  }
  cp_async_commit();
  ring_start<D, KC>(iss, nsub, total, direct);
  cp_async_wait<kNS - 1>();
}
// The issue of sub-tile c in a ring_step with an EntryRing: this lane's entry of c (its copy
// was in the group the previous step's wait completed) goes to issue(c, raw, loaded); then
// the entry of sub-tile ahd = c + kStages is copied into the stage just read.
template <int D, int KC, class Token, class Issue>
__device__ __forceinline__ void entry_issue(const RingCursor<D, KC>& c, RingCursor<D, KC>& ahd, EntryRing<D, KC>& ents,
                                            int nsub, std::int64_t total, int lane, const std::int32_t* row,
                                            Token&& token, Issue&& issue) {
  std::int32_t raw;
  const bool loaded = ents.read(c.stage, lane, &raw);
  issue(c, raw, loaded);
  if (ahd.it < total) ents.issue(ahd.stage, lane, row, token(ahd));
  ahd.next(nsub);
}

// What the logits of a sub-tile need besides the fragments: where the sub-tile starts
// (token t0 at offset off0 of its block), the block size, the logit multiplier, the lengths
// rows grp / grp + 8 are masked with, the fp8 table (use_lut: even where the hardware
// converts) and the mutant selector.
// The mask length of a tile row whose scores are never written (an idle tile row, a row with
// nothing to write): its lanes need no mask, and it must not keep a sub-tile off the
// interior fast path of subtile_logits.
// I: the token index type (std::int32_t in row 60's narrow loop, whose tokens fit: common::narrow_index_fits).
constexpr std::int64_t kNoMaskLength = INT64_MAX;
template <class I>
struct SubtileMaskOf {
  I t0;
  int off0, bs;
  float mult;
  I L0, L1;
  const std::uint16_t* lut;
  bool use_lut;
  int mutant;
  bool q_f16 = false;  // q's fragments are f16 (q_fragments_to_f16): the f16 path
};
using SubtileMask = SubtileMaskOf<std::int64_t>;
// The mask length of a tile row in index type I: L (or the type's no-mask length, kNoMaskLength / INT32_MAX, when the
// row writes nothing). In 32 bits a length past INT32_MAX masks like INT32_MAX: every token of a narrow tile is below
// it.
template <class I>
__device__ __forceinline__ I mask_length(bool write, std::int64_t L) {
  if constexpr (std::is_same_v<I, std::int64_t>) {
    return write ? L : kNoMaskLength;
  } else {
    return write && L < INT32_MAX ? static_cast<I>(L) : I{INT32_MAX};
  }
}

// Logits of one 32-token sub-tile for tile rows grp (v0) and grp + 8 (v1): element
// j * 2 + e is token j * 8 + tig * 2 + e; lanes past the block are -inf, tokens past a
// row's length are masked (common::masked_logit). kRaw: the MMA sums, not yet times mk.mult
// (the caller multiplies the block max; see kDeferLogitMult).
enum class Widen { kGeneric, kInt, kF16 };  // bf16 K / cvt or table; integer widening; f16 path
template <int D, int KC, Widen kMode, bool kRaw = false, class I = std::int64_t>
__device__ __forceinline__ void subtile_logits_with(const uint4 (&kf)[4][MmaCfg<D, KC>::kNL],
                                                    const std::uint32_t (&qa)[D / 16][4], const SubtileMaskOf<I>& mk,
                                                    int tig, float (&v0)[8], float (&v1)[8]) {
  constexpr int kNL = MmaCfg<D, KC>::kNL;
  constexpr int kStepsPerLoad = (D / 16) / kNL;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int l = 0; l < kNL; ++l) {
      const std::uint32_t w[4] = {kf[j][l].x, kf[j][l].y, kf[j][l].z, kf[j][l].w};
#pragma unroll
      for (int sub = 0; sub < kStepsPerLoad; ++sub) {
        if constexpr (kMode == Widen::kF16) {
          std::uint32_t h0, h1;
          fp8x4_to_f16x2_pair<KC>(w[sub], h0, h1);
          mma_f16(acc, qa[l * kStepsPerLoad + sub], h0, h1);
          continue;
        }
        std::uint32_t bb0, bb1;
        if constexpr (kMode == Widen::kInt) {
          bb0 = fp8x2_to_bf16x2_int<KC>(w[sub], 0x1404u);
          bb1 = fp8x2_to_bf16x2_int<KC>(w[sub], 0x3424u);
        } else if constexpr (MmaCfg<D, KC>::kFp8) {
          bb0 = fp8x2_to_bf16x2<KC>(w[sub] & 0xFFFFu, mk.lut, mk.use_lut);
          bb1 = fp8x2_to_bf16x2<KC>(w[sub] >> 16, mk.lut, mk.use_lut);
        } else {
          bb0 = w[2 * sub];
          bb1 = w[2 * sub + 1];
        }
        mma_bf16(acc, qa[l * kStepsPerLoad + sub], bb0, bb1);
      }
    }
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      v0[j * 2 + e] = kRaw ? acc[e] : acc[e] * mk.mult;
      v1[j * 2 + e] = kRaw ? acc[2 + e] : acc[2 + e] * mk.mult;
    }
  }
  // Interior sub-tiles (every token inside the block and below both rows' lengths, for the
  // whole warp: one vote) keep the products; the others mask. Same bits either way.
  const I lmin = mk.L0 < mk.L1 ? mk.L0 : mk.L1;
  if (__all_sync(0xffffffffu, mk.off0 + 32 <= mk.bs && mk.t0 + 32 <= lmin)) return;
#pragma unroll
  for (int j = 0; j < 4; ++j)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int off = mk.off0 + j * 8 + tig * 2 + e;
      const I t = mk.t0 + j * 8 + tig * 2 + e;
      const bool in_blk = off < mk.bs;
      v0[j * 2 + e] = in_blk ? cm::masked_logit(t < mk.L0, v0[j * 2 + e], mk.mutant) : -INFINITY;
      v1[j * 2 + e] = in_blk ? cm::masked_logit(t < mk.L1, v1[j * 2 + e], mk.mutant) : -INFINITY;
    }
}
// The same, choosing the widening: e4m3fn / e5m2 with the hardware path take the branch-free
// integer widening for sub-tiles without NaN / Inf codes (checked once per sub-tile,
// warp-uniform), the cvt path (or the table) otherwise.
template <int D, int KC, bool kRaw = false, class I = std::int64_t>
__device__ __forceinline__ void subtile_logits(const uint4 (&kf)[4][MmaCfg<D, KC>::kNL],
                                               const std::uint32_t (&qa)[D / 16][4], const SubtileMaskOf<I>& mk,
                                               int tig, float (&v0)[8], float (&v1)[8]) {
  constexpr bool kIntWiden = kHwFp8CvtFor<KC>;
  if constexpr (kRaw) {  // only the f16 loop (IXO_FP8_F16_LOOP, q_f16) takes raw logits
    static_assert(kF16PathFor<KC>, "raw logits are the f16 path's only");
    subtile_logits_with<D, KC, Widen::kF16, true, I>(kf, qa, mk, tig, v0, v1);
    return;
  }
  if constexpr (kF16PathFor<KC>) {
    if (mk.q_f16) {  // warp-uniform (tile_takes_f16_path)
      subtile_logits_with<D, KC, Widen::kF16>(kf, qa, mk, tig, v0, v1);
      return;
    }
  }
  if constexpr (kIntWiden) {
    std::uint32_t special = 0;
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int l = 0; l < MmaCfg<D, KC>::kNL; ++l)
        special |= fp8x4_special<KC>(kf[j][l].x) | fp8x4_special<KC>(kf[j][l].y) | fp8x4_special<KC>(kf[j][l].z) |
                   fp8x4_special<KC>(kf[j][l].w);
    if (__all_sync(0xffffffffu, !mk.use_lut && (special & 0x80808080u) == 0u))
      subtile_logits_with<D, KC, Widen::kInt>(kf, qa, mk, tig, v0, v1);
    else
      subtile_logits_with<D, KC, Widen::kGeneric>(kf, qa, mk, tig, v0, v1);
  } else {
    subtile_logits_with<D, KC, Widen::kGeneric>(kf, qa, mk, tig, v0, v1);
  }
}

// Merges the states of a row's 4 lanes (tig 0..3) in a fixed order, the lower lane's state
// first, in every lane: afterwards every lane holds the row's block state.
__device__ __forceinline__ void merge_row_lanes(BlockState& st0, BlockState& st1, int tig, bool lse, int mutant) {
#pragma unroll
  for (int x = 1; x <= 2; x <<= 1) {
    BlockState o0{__shfl_xor_sync(0xffffffffu, st0.m, x), __shfl_xor_sync(0xffffffffu, st0.s, x)};
    BlockState o1{__shfl_xor_sync(0xffffffffu, st1.m, x), __shfl_xor_sync(0xffffffffu, st1.s, x)};
    if (tig & x) {
      BlockState a0 = o0, a1 = o1;
      state_merge(a0, st0, lse, mutant);
      state_merge(a1, st1, lse, mutant);
      st0 = a0;
      st1 = a1;
    } else {
      state_merge(st0, o0, lse, mutant);
      state_merge(st1, o1, lse, mutant);
    }
  }
}

// Host code: launches a tensor-core score kernel (native or CP) with Smem bytes of dynamic shared
// memory (its cp.async ring, MmaCfg), after raising the kernel's limit past the default 48 KB once
// (the first launch of each instantiation); if that fails the kernel is not launched and the error
// is returned. indexer_launch.inl and cp_launch.inl both launch through it.
template <auto Kernel, int Smem, class Params>
cudaError_t launch_mma_score_kernel(const Params& p, dim3 grid, cudaStream_t s) {
  static const cudaError_t attr = cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Smem);
  if (attr != cudaSuccess) return attr;  // the ring would not fit: do not launch
  Kernel<<<grid, kScoreThreads, Smem, s>>>(p);
  return cudaSuccess;
}

}  // namespace ixo::gpu::detail
#endif  // IXO_GPU_CUDA
