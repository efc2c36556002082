// The mutant catalogue's prose (issue 24: kernels keep the ids, the suite the words): for
// each site of kernels/common/mutants.hpp, by its key, the bug it plants, the input that
// exposes it and the check of the campaign expected to kill it (tools/ixo/mutate.cpp,
// docs/mutation.md). catalogue[] joins the two: a site without prose, or prose without a site,
// does not compile.
//
//   X(key, bug, exposing_input, killer)
#pragma once
#include <cstddef>
#include <string_view>

#include "common/mutants.hpp"

#define IXO_MUTANT_PROSE(X)                                                                                            \
  X(group_nb_for_rows,                                                                                                 \
    "the group's block count used in place of each row's (forcing and written columns; top-k keeps the row's own)",    \
    "rows straddling a block boundary in one pack (prefix = m*bs-2, ndt 4)", "fixture:boundary-32767")                 \
  X(group_sized_by_shortest, "the group sized by its shortest row: longer rows' tail tokens never loaded",             \
    "straddling rows, pack >= 2", "fixture:boundary-32767")                                                            \
  X(no_row_local_reforce, "a row's forced local window taken from the group (no per-row re-force)",                    \
    "straddling rows whose own last block scores low", "fixture:boundary-32767")                                       \
  X(pack_tail_leak,                                                                                                    \
    "packed rows masked with the group length: tail keys a shorter row must not see leak into its last block",         \
    "local_blocks 0, pack 3, prefix 64*5-1", "fixture:local0-block64")                                                 \
  X(wrong_score_row, "tile row i mapped to (row i % pack, head i / pack) on store (rows/heads swapped)",               \
    "pack >= 2 with Hq/Hk >= 2, different prefixes", "fixture:exact-tie-free")                                         \
  X(fp8_cast_dropped, "fp8 K code used as an integer value (the fp8 -> bf16 widening dropped)", "fp8 K",               \
    "fixture:exact-tie-free")                                                                                          \
  X(fnuz_as_fn, "e4m3fnuz decoded as e4m3fn (bias 7 instead of 8)", "e4m3fnuz K with lse or scores checked",           \
    "fixture:fp8-e4m3fnuz")                                                                                            \
  X(k_by_row_index, "K addressed by the row's own index (mod the table rows) instead of through slot_ids",             \
    "slot ids that never equal the row index", "fixture:boundary-32767")                                               \
  X(partial_block_zero_mask, "invisible lanes of a partial block count as logit 0 instead of -inf",                    \
    "partial last block with all-negative logits, local 0", "fixture:local0-block64")                                  \
  X(init_over_local, "init/local priority swapped: an init block inside the local window keeps 1e30",                  \
    "init and local windows overlapping in a row with nb > topk (init + local > nb)", "fixture:forced-ties-exact")     \
  X(local_window_off_by_one, "local window starts one block early (nb - local - 1)", "local >= 1 with nb > topk",      \
    "fixture:boundary-32767")                                                                                          \
  X(no_minus_one_tail, "trivial rows (nb < topk) padded with 0 instead of -1", "topk above nb",                        \
    "fixture:exact-tie-free")                                                                                          \
  X(ids_unsorted, "selected ids emitted in descending instead of ascending id order", "any row with nb > topk",        \
    "fixture:boundary-32767")                                                                                          \
  X(k_scale_ignored, "k_scale not applied to the dot", "k_scale != 1 with scores checked", "fixture:exact-tie-free")   \
  X(chunk_last_block_dropped, "each KV chunk skips its last block", "nb > chunks (long rows)",                         \
    "fixture:boundary-32767")                                                                                          \
  X(tie_rule_reversed, "equal scores rank the higher block id first",                                                  \
    "exact ties, e.g. forced blocks beyond topk, exact ids", "fixture:forced-ties-exact")                              \
  X(inactive_row_reads_k,                                                                                              \
    "rows whose slot lies outside the table read K through a wrapped slot (mod rows), write scores and select",        \
    "inactive rows next to real ones", "suite:padding")                                                                \
  X(trivial_rows_scored, "rows with nb <= topk write score columns (stray writes outside the region)",                 \
    "short rows (graph padding)", "fixture:exact-tie-free")                                                            \
  X(trivial_rows_not_shortcut,                                                                                         \
    "top-k does not shortcut rows with 0 < nb <= topk: it ranks their unwritten score row over the buffer width NB",   \
    "topk above nb", "fixture:exact-tie-free")                                                                         \
  X(negative_alias_clamped, "negative token slots clamped to 0 instead of wrapped by S",                               \
    "token slots stored as negative aliases", "fixture:boundary-32767")                                                \
  X(q_scale_ignored, "q_scale left out of the logit multiplier", "q_scale != 1 (property cases)",                      \
    "property:MatchesOracle")                                                                                          \
  X(lse_natural_exp, "lse block score uses natural exp/log instead of exp2/log2", "score_type lse",                    \
    "fixture:lse-pack3")                                                                                               \
  X(kv_head_modulo, "K head of q head h taken as h % Hk instead of h / (Hq/Hk)", "Hq:Hk 8:2", "fixture:gqa-8-2")       \
  X(topk_one_short, "top-k keeps the topk-1 best blocks and appends block 0", "nb > topk, block 0 not a winner",       \
    "fixture:boundary-32767")                                                                                          \
  X(packed_kv_head_of_tile_row,                                                                                        \
    "packed tile row i reads K head i / (pack*Hq/Hk), i.e. head 0 (SGLang's packing, right only for Hk = 1)",          \
    "packed rows with Hk > 1", "fixture:gqa-8-2")                                                                      \
  X(stray_column_write, "the scorer also writes column nb of each row (one past its blocks)",                          \
    "rows shorter than the table width", "fixture:boundary-32767")                                                     \
  X(fn_as_fnuz, "e4m3fn K dispatched as e4m3fnuz (bias 8: every value halved, 0x80 read as NaN)",                      \
    "e4m3fn K with scores checked", "fixture:exact-tie-free")                                                          \
  X(lse_no_max_subtraction, "lse block score sums exp2(s) without taking the block max out (log2(sum exp2 s))",        \
    "score_type lse with log2 logits > 128 or < -149 (large q_scale / k_scale)", "property:MatchesOracle")             \
  X(init_wider_than_row_dropped,                                                                                       \
    "init forcing skipped when init_blocks > nb (the init window only checked against the row when it fits)",          \
    "init_blocks > nb > topk", "fixture:init-wider-than-row")                                                          \
  X(e4m3_subnormal_flushed, "e4m3fn / e4m3fnuz subnormal codes (exponent 0) decoded as +-0",                           \
    "e4m3 K with subnormal codes, scores checked", "property:MatchesOracle")                                           \
  X(e5m2_subnormal_flushed, "e5m2 subnormal codes (exponent 0) decoded as +-0 (a flush-to-zero conversion)",           \
    "e5m2 K made of subnormal codes only (a cache quantized with a tiny scale)", "fixture:fp8-e5m2-subnormal")         \
  X(topk_candidates_capped,                                                                                            \
    "top-k candidate buffer of 4096 ids filled in id order with every block >= the k-th score: better blocks after a " \
    "plateau are lost",                                                                                                \
    "> 4096 blocks tied at the k-th score, better (e.g. forced local) blocks after them", "fixture:plateau-16k")       \
  X(shortcut_strict_less,                                                                                              \
    "the trivial-row shortcut taken for nb < topk only: rows with nb == topk are scored (stray writes) and ranked",    \
    "a row with nb == topk exactly (dispatch threshold)", "fixture:exact-tie-free")                                    \
  X(topk_capped_512, "selection keeps at most 512 ids (a 512-slot buffer): topk > 512 pads with -1",                   \
    "topk >= 1024 with nb > 512", "property:MatchesOracle")                                                            \
  X(chunk_floor_division, "KV chunk size nb / chunks rounded down: the last nb % chunks blocks of a row never scored", \
    "nb not a multiple of the chunk count (chunk-plan boundary)", "fixture:boundary-32767")                            \
  X(padding_rows_select_block0, "inactive (padding) rows given one block: they select block 0 instead of all -1",      \
    "padding rows (slot past the table or length 0)", "fixture:graph-mixed-groups-exact")                              \
  X(topk1_argmax_last, "topk 1 by an argmax scan with >=: the last (highest id) of tied maxima wins",                  \
    "topk 1 with tied best scores (init_blocks >= 2, plateaus)", "property:ExactValuesGiveExactIds")                   \
  X(topk_scratch_stale,                                                                                                \
    "top-k key scratch only grows: keys of a longer earlier row of the same thread are ranked too (batch-dependent)",  \
    "rows of different nb in one batch (batch invariance)", "fixture:fp8-e4m3fn")                                      \
  X(packed_trailing_rows_dropped, "packed plan sized R / P programs: the trailing R % P rows are never scored",        \
    "R not a multiple of packed_queries, packed plan", "property:MatchesOracle")                                       \
  X(cp_contiguous_shards,                                                                                              \
    "CP shard = contiguous block range r*LOCAL+l scored, labelled with the strided ids l*WORLD+r",                     \
    "WORLD >= 2, any non-trivial row", "fixture:exact-tie-free")                                                       \
  X(cp_topk_over_world, "CP keeps topk / WORLD candidates per shard instead of topk",                                  \
    "WORLD >= 2, winners concentrated in one shard (long contexts)", "fixture:exact-tie-free")                         \
  X(cp_group_nb_for_rows, "CP packed: the group's block count used for each row's validity and forcing",               \
    "rows straddling a block boundary in one pack (lengths 32767..32770)", "fixture:boundary-32767")                   \
  X(cp_group_shortest, "CP packed: group sized by its shortest row (longer rows' last block never scored or forced)",  \
    "rows straddling a block boundary in one pack", "fixture:boundary-32767")                                          \
  X(cp_forced_local_dropped, "CP: the forced local window dropped (init forcing kept)",                                \
    "any row with nb > topk whose own last block scores low", "fixture:boundary-32767")                                \
  X(cp_k_by_group_index, "CP: K addressed by the group (row) index instead of through the slot table",                 \
    "slot ids that never equal the row or group index", "fixture:boundary-32767")                                      \
  X(cp_shard_end_floor,                                                                                                \
    "CP: a rank's last shard cell count (nb - rank) / WORLD rounded down: its last block of the row never scored",     \
    "nb - rank not a multiple of WORLD, the last block a winner (forced local)",                                       \
    "GPU: test_cp_gpu / ixo mutate --backend cuda-cp")                                                                 \
  X(cp_trivial_cells_invalid,                                                                                          \
    "CP: valid cells of trivial rows (nb <= topk) marked invalid instead of ord(0): they select nothing",              \
    "rows with 0 < nb <= topk", "fixture:exact-tie-free")                                                              \
  X(group_start_pow2,                                                                                                  \
    "packed groups start at row x << log2(pack) (a power-of-two verify group assumed): groups of 3, 5, 6, 7 draft "    \
    "rows read the wrong rows",                                                                                        \
    "packed_queries 3, 5, 6 or 7 with two or more whole groups", "fixture:fp8-nan-inf-e5m2")                           \
  X(msa_local_page_from_length,                                                                                        \
    "MSA selector: the local page taken as L / 128 instead of (L - 1) / 128 (slot 15 not n - 1 when 128 divides L)",   \
    "msa-decode rows with nb > 16 whose length is a multiple of 128", "property:MatchesOracle")                        \
  X(msa_bucket_off_by_one, "MSA selector: 65535 steps instead of 65534 (the top score clamped into the bucket below)", \
    "msa-decode rows whose two best history scores are within 2 steps, scores returned", "property:MatchesOracle")     \
  X(msa_ties_higher_id, "MSA selector: equal buckets go to the higher page id (id field not inverted)",                \
    "msa-decode rows with equal history scores (plateaus, exact ties)", "suite:msa-sweep")                             \
  X(msa_range_over_forced,                                                                                             \
    "MSA selector: lo/hi taken over the forced local page too (1e29 collapses every history score into one bucket)",   \
    "msa-decode rows with nb > 16", "property:MatchesOracle")                                                          \
  X(k_offset_32bit,                                                                                                    \
    "K byte offset slot * row_bytes computed in 32 bits (unsigned wrap): slots past 2^32 / row_bytes read K rows "     \
    "2^32 bytes lower",                                                                                                \
    "token slots above 2^24 with D 128 bf16 (a 4.3 GB K cache)", "ctest:mutant.k_offset_32bit (test_gpu_offsets)")     \
  X(scores_workspace_cached,                                                                                           \
    "the index step scores into a process-wide workspace grown on demand (freed and re-allocated for a larger "        \
    "batch): a graph captured before the growth replays into freed memory",                                            \
    "graph capture, then a larger batch through the same launcher, then allocator churn and a replay",                 \
    "ctest:mutant.scores_workspace_cached (GraphRobust.AllocatorChurn)")                                               \
  X(topk_ties_by_arrival,                                                                                              \
    "exact ties at the k-th score resolved by atomic arrival order (SGLang's radix top-k): a valid choice, but not "   \
    "the same from run to run",                                                                                        \
    "thousands of blocks tied at the k-th score, keys read from global memory (nb > 8192), launches beside "           \
    "concurrent work",                                                                                                 \
    "ctest:mutant.topk_ties_by_arrival (RepeatRuns)")                                                                  \
  X(topk_early_stop_partial_bin,                                                                                       \
    "the radix select stops after its first pass even when the k-th key's bin is selected only in part: the "          \
    "bin's lowest ids are taken instead of its largest keys",                                                          \
    "rows whose k-th key shares its top 8 key bits with keys that are not selected (nb > topk)",                       \
    "ctest:mutant.topk_early_stop_partial_bin (TopkRadix)")

namespace ixo::mutants {

struct Info {
  int id;
  const char* key;
  const char* where;
  const char* bug;
  const char* input;
  const char* killer;
};

constexpr const char* where_of(int id) {
  for (const Site& s : sites)
    if (s.id == id) return s.where;
  return nullptr;
}

inline constexpr Info catalogue[] = {
#define IXO_MUTANT_INFO(key, bug, input, killer) {Id::key, #key, where_of(Id::key), bug, input, killer},
    IXO_MUTANT_PROSE(IXO_MUTANT_INFO)
#undef IXO_MUTANT_INFO
};

// Every site has its prose exactly once (the prose names sites only: Id::key above).
static_assert(std::size(catalogue) == std::size(sites), "a mutant site without prose (or prose twice)");
constexpr bool every_site_once() {
  for (const Site& s : sites) {
    int n = 0;
    for (const Info& m : catalogue) n += m.id == s.id;
    if (n != 1) return false;
  }
  return true;
}
static_assert(every_site_once(), "a mutant site without prose, or with two");

}  // namespace ixo::mutants
