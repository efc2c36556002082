// Launch API of the context-parallel (CP) indexer kernels, usable from plain C++.
// One rank's step: score its shard of blocks for all WORLD heads (the all-gathered q),
// keep the top-topk candidate keys per (head, row), and -- after the keys are all-gathered
// -- merge its own head. `ranks` > 1 simulates ranks rank_base .. rank_base+ranks-1 in one
// launch (the single-GPU simulation); a real multi-GPU run launches ranks = 1 per GPU.
// No launch allocates or synchronizes; grids come from graph-constant values only.
// Formulas: kernels/common/cp_common.hpp.
#pragma once
#include <cstddef>
#include <cstdint>

#include "index_config.hpp"

namespace ixo::gpu {

// The step's configuration (common::IndexConfig; Hq, Hk, q_code and packed_queries unused: CP
// has WORLD heads over one K head, bf16 q, and `pack` below) plus the CP launch knobs.
struct CpArgs : common::IndexConfig {
  // Device pointers.
  const std::uint16_t* qg = nullptr;           // gathered q [WORLD (head), R, D] bf16 bits
  const void* k_cache = nullptr;               // [S, 1, D] bf16 bits or fp8 codes
  const std::int32_t* req_to_token = nullptr;  // [rows, width]
  const std::int64_t* slot_ids = nullptr;      // [R]
  const std::int64_t* seq_lens = nullptr;      // [R]
  std::uint32_t* cells = nullptr;              // [ranks, WORLD, R, LOCAL] shard cells (cp_cells_bytes)
  std::uint64_t* keys = nullptr;               // [ranks, WORLD, R, topk] this launch's candidates
  int world = 1;                               // WORLD = ranks of the CP group = index heads
  int rank_base = 0;                           // first rank this launch computes
  int ranks = 1;                               // ranks this launch computes (grid.y)
  int pack = 1;        // packed_queries: rows of a whole group; > 1 only when cp_pack_supported (else per-row)
  int num_chunks = 0;  // 0 = common::cp::num_chunks plan
  int mutant = 0;
};

std::int64_t cp_local(const CpArgs& a);  // LOCAL = ceil(NB / WORLD)
inline std::size_t cp_cells_bytes(const CpArgs& a, std::int64_t LOCAL) {
  return static_cast<std::size_t>(a.ranks) * a.world * a.R * LOCAL * sizeof(std::uint32_t);
}
inline std::size_t cp_keys_bytes(const CpArgs& a) {
  return static_cast<std::size_t>(a.ranks) * a.world * a.R * a.topk * sizeof(std::uint64_t);
}
// Pack fits one tile (pack * WORLD <= 16): shapes only. Any batch is accepted: a whole
// group whose rows share one slot id packs, any other group and the R % pack trailing rows
// run per row inside their CTA (decided on the device from slot_ids).
bool cp_pack_supported(const CpArgs& a);
// Shard scores of ranks rank_base .. +ranks (cells).
int launch_cp_score(const CpArgs& a, void* stream);
// Candidates of the same ranks (keys, launch-relative rank index).
int launch_cp_candidates(const CpArgs& a, void* stream);
// Merge of heads head_base .. head_base+heads over gathered keys [WORLD (src), WORLD, R, topk]:
// out [heads, R, topk] int32 ids ascending, -1 padded.
int launch_cp_merge(const CpArgs& a, const std::uint64_t* gathered, int head_base, int heads, std::int32_t* out,
                    void* stream);
// The whole simulated step on one GPU (ranks = WORLD, rank_base = 0): score, candidates
// (written in gathered layout: the all-gather is the identity), merge of every head into
// out [WORLD, R, topk].
int launch_cp_step_sim(const CpArgs& a, std::int32_t* out, void* stream);
bool cp_head_dim_supported(std::int64_t D);

}  // namespace ixo::gpu
