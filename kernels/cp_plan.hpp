// Host-side rules of the context-parallel (CP) backends, shared by the CPU twin (cpu-cp,
// kernels/cpu) and the GPU backend (cuda-cp, kernels/gpu): the cases CP implements and the
// launch plan of a run. Plain C++ (no CUDA/HIP); formulas: cp_common.hpp.
#pragma once
#include <cstdint>
#include <string>

#include "backend.hpp"
#include "cp_common.hpp"
#include "ixo/case.hpp"

namespace ixo {
namespace cp {

// Cases the CP backends implement: Hk == 1 (one replicated index-K head), WORLD = Hq in
// [1, 16] (one row's heads fit a tile), block ids < 65536 (the key's 16-bit id field),
// 1 <= topk <= 64 (candidate lists per shard).
inline bool supported(const Case& c, std::string* why) {
  auto no = [&](const std::string& w) {
    if (why) *why = w;
    return false;
  };
  if (c.Hk != 1) return no("CP needs one index-K head (Hk == 1), got Hk " + std::to_string(c.Hk));
  if (c.Hq < 1 || c.Hq > common::cp::kMaxWorld)
    return no("CP runs WORLD = Hq ranks, 1..16, got Hq " + std::to_string(c.Hq));
  if (c.cfg.block_size < 1) return no("block_size must be >= 1");
  if (c.NB() > common::cp::kMaxBlocks)
    return no("block ids must fit the 16-bit key field: NB " + std::to_string(c.NB()) + " > 65536");
  if (c.cfg.topk < 1 || c.cfg.topk > common::cp::kMaxCandidates)
    return no("CP keeps topk candidates per shard, topk 1..64, got " + std::to_string(c.cfg.topk));
  if (c.cfg.q_dtype != KDtype::bf16)
    return no("CP takes bf16 q only, got q_dtype " + std::string(to_string(c.cfg.q_dtype)));
  if (is_nvfp4(c.cfg.k_dtype)) return no("CP does not decode nvfp4 K (k_dtype nvfp4)");
  return true;
}

// The launch plan of a CP run (the same for the CPU twin and the GPU kernels).
struct Plan {
  int world = 1;            // ranks = Hq
  int pack = 1;             // rows of a whole group (1 = per-row plan)
  std::int64_t groups = 0;  // programs along the row axis (common::packed_batch: R/pack + R%pack)
  std::int64_t LOCAL = 0;   // shard cells per (head, row): ceil(NB / world)
  int chunks = 1;           // programs along the shard axis
  int candidates = 0;       // keys kept per (shard, head, row): topk
};

// Packed when allowed (and not options.per_row_plan), P = packed_queries > 1 and P * WORLD <= 16
// (shapes only); otherwise the per-row plan. Which groups pack (whole groups sharing one slot
// id) is decided per program from slot_ids (common::program_tiles); the rest run per row.
inline Plan plan_for(const Case& c, bool allow_pack, const RunOptions& options) {
  namespace cc = common::cp;
  Plan p;
  p.world = static_cast<int>(c.Hq);
  const int P = c.cfg.packed_queries;
  const bool pack = allow_pack && !options.per_row_plan && P > 1 && common::pack_fits(P, p.world);
  p.pack = pack ? P : 1;
  p.groups = common::packed_batch(c.R, p.pack);
  p.LOCAL = cc::local_blocks(c.NB(), p.world);
  p.chunks = options.force_num_chunks > 0 ? options.force_num_chunks : cc::num_chunks(p.groups, p.LOCAL);
  p.candidates = cc::shard_candidates(c.cfg.topk, p.world, options.mutant);
  return p;
}

}  // namespace cp
}  // namespace ixo
