// The score kernels' parameters (ScoreParams: the step's IndexConfig and the plan) and the
// per-tile logic every score path shares: the blocks a tile's work covers, its rows' plans
// (common/plans.hpp) and the score write. Included by indexer_kernels.cuh.
#pragma once
#include <cstdint>

#include "gpu/gpu_port.hpp"
#include "index_config.hpp"
#include "indexer_common.hpp"
#include "plans.hpp"
#include "work_claims.hpp"

namespace ixo::gpu::detail {
namespace cm = ixo::common;

// The step's common::IndexConfig (the launch's IndexArgs, copied whole) and the plan.
struct ScoreParams : cm::IndexConfig {
  const std::uint16_t* q;
  const std::uint8_t* k;
  const std::int32_t* r2t;
  const std::int64_t* slot;
  const std::int64_t* lens;
  float* scores;
  std::int64_t whole;  // R / pack: whole groups (common::program_rows_of)
  int pack, gqa, chunks;
  float mult;
  int mutant;
#if IXO_PACKED_BALANCED
  std::int64_t span_ctas;  // > 0: the balanced packed plan (common::cta_part), grid x = span_ctas
#endif
#if IXO_PACKED_CLAIMS
  std::int32_t* counters;   // packed plan: IndexArgs::work_counters (nullptr: static chunks, no claims)
  std::int64_t claim_ctas;  // > 0: the claim grid (common::claim_part), grid x = claim_ctas
#endif
};

// The balanced plan's and the claim grid's CTAs a K head (0: not that plan), whatever the knobs.
__device__ __forceinline__ std::int64_t span_ctas_of(const ScoreParams& p) {
#if IXO_PACKED_BALANCED
  return p.span_ctas;
#else
  return (void)p, 0;
#endif
}
__device__ __forceinline__ std::int64_t claim_ctas_of(const ScoreParams& p) {
#if IXO_PACKED_CLAIMS
  return p.claim_ctas;
#else
  return (void)p, 0;
#endif
}

// The blocks [*b0, *b1) a tile of nb blocks scores: KV chunk c of the chunk plan, or a
// balanced plan's work (common::TileWork; IXO_PACKED_BALANCED).
__device__ __forceinline__ void work_blocks(const ScoreParams& p, int c, std::int64_t nb, std::int64_t* b0,
                                            std::int64_t* b1) {
  cm::chunk_blocks(nb, p.chunks, c, b0, b1, p.mutant);
}
__device__ __forceinline__ void work_blocks(const ScoreParams& p, const cm::TileWork& w, std::int64_t nb,
                                            std::int64_t* b0, std::int64_t* b1) {
  cm::tile_work_blocks(w, nb, b0, b1, p.mutant);
}
// Work claims (IXO_PACKED_CLAIMS): the whole tile, its blocks taken one at a time by the warps.
__device__ __forceinline__ void work_blocks(const ScoreParams&, const cm::ClaimWork&, std::int64_t nb, std::int64_t* b0,
                                            std::int64_t* b1) {
  *b0 = 0;
  *b1 = nb;
}

#if IXO_PACKED_BALANCED || IXO_PACKED_CLAIMS
// Programs along the row axis (common::packed_batch, from the launch's R / pack: no division).
__device__ __forceinline__ std::int64_t row_programs(const ScoreParams& p) {
  return p.whole + (p.R - p.whole * p.pack);
}
#endif

// ---------------------------------------------------------------- shared per-group logic
// The plans (row facts, tile plan, tile row plan, top-k plan) are common/plans.hpp's.
__device__ __forceinline__ cm::RowInputs row_inputs(const ScoreParams& p) { return cm::row_inputs(p, p.slot, p.lens); }
__device__ __forceinline__ cm::GroupPlan group_plan(const ScoreParams& p, std::int64_t first, int pack) {
  return cm::group_plan(row_inputs(p), first, pack, p.mutant);
}

// What the scorer keeps of a tile row's plan (common::row_plan): its lengths and its score
// row base.
struct RowMeta {
  std::int64_t L;
  std::int64_t nb;
  bool write;             // active, nb > topk: this row's columns [0, nb) are written
  float* out;             // score row base
  std::int64_t nb_force;  // the nb its forcing uses (== nb)
  std::int64_t L_mask;    // the length its lanes are masked with (== L)
};

// Tile row i of the tile (rows [first, first + pack), K head kvh) with plan g.
__device__ __forceinline__ RowMeta tile_row_meta(const ScoreParams& p, std::int64_t first, int pack, int kvh, int i,
                                                 const cm::GroupPlan& g) {
  const cm::RowPlan r =
      cm::row_plan(row_inputs(p), cm::TileShape{first, pack, p.gqa, static_cast<int>(p.Hk), kvh}, i, g, p.mutant);
  if (!r.used) return RowMeta{0, 0, false, nullptr, 0, 0};
  return RowMeta{r.f.L,      r.f.nb,  r.f.writes, p.scores + cm::score_index(r.store_head, r.store_row, 0, p.R, p.NB),
                 r.nb_force, r.L_mask};
}

__device__ __forceinline__ void write_block(const RowMeta& m, std::int64_t b, float score, const ScoreParams& p) {
  if (cm::writes_block(m.write, m.nb, b, p.NB)) {
    const float f = cm::forced_score(score, b, m.nb_force, p.init_blocks, p.local_blocks, p.mutant);
    m.out[b] = f;
    if (cm::stray_column(m.nb, b, p.NB, p.mutant)) m.out[b + 1] = f;
  }
}

}  // namespace ixo::gpu::detail
