// The mutant catalogue: the one table that the kernel code (IXO_MUTANT switches), the
// campaign (`ixo mutate`), the CI gate and docs/mutation.md are built from.
//
//   X(id, key, where, bug, exposing_input, killer)
//     where: "common" (shared formula: every backend family), "packed" (packed scorers),
//            "topk" (top-k stages), "cpu" / "gpu" (one family only), "cp" (CP backends),
//            "msa" (the quantized selector of the msa-decode backends, kernels/common/quantized_topk.hpp),
//            "cp-gpu" (CP formulas only the CUDA CP kernels call, e.g. local_end),
//            "gpu-test" (native CUDA code whose exposing input only a named GPU test builds:
//            a multi-GB K cache, a graph replayed after allocator churn, repeated launches
//            beside concurrent work; `ixo mutate` does not run these: the ctest
//            `mutant.<key>` (label cuda) runs the named test with IXO_TEST_MUTANT=<key> and
//            passes only when that test fails)
//     killer: the check of the campaign expected to kill it (see tools/ixo/mutate.cpp)
//
// A switch in kernel code reads `if (IXO_MUTANT(mutant, ixo::mutants::key)) ...`; in
// release builds (IXO_MUTANTS=OFF) IXO_MUTANT is the constant false and the branch is
// compiled away.
#pragma once

#define IXO_MUTANT_CATALOGUE(X)                                                                                        \
  X(1, group_nb_for_rows, "packed",                                                                                    \
    "the group's block count used in place of each row's (forcing and written columns; top-k keeps the row's own)",    \
    "rows straddling a block boundary in one pack (prefix = m*bs-2, ndt 4)", "fixture:boundary-32767")                 \
  X(2, group_sized_by_shortest, "packed",                                                                              \
    "the group sized by its shortest row: longer rows' tail tokens never loaded", "straddling rows, pack >= 2",        \
    "fixture:boundary-32767")                                                                                          \
  X(3, no_row_local_reforce, "packed", "a row's forced local window taken from the group (no per-row re-force)",       \
    "straddling rows whose own last block scores low", "fixture:boundary-32767")                                       \
  X(4, pack_tail_leak, "packed",                                                                                       \
    "packed rows masked with the group length: tail keys a shorter row must not see leak into its last block",         \
    "local_blocks 0, pack 3, prefix 64*5-1", "fixture:local0-block64")                                                 \
  X(5, wrong_score_row, "packed", "tile row i mapped to (row i % pack, head i / pack) on store (rows/heads swapped)",  \
    "pack >= 2 with Hq/Hk >= 2, different prefixes", "fixture:exact-tie-free")                                         \
  X(6, fp8_cast_dropped, "common", "fp8 K code used as an integer value (the fp8 -> bf16 widening dropped)", "fp8 K",  \
    "fixture:exact-tie-free")                                                                                          \
  X(7, fnuz_as_fn, "common", "e4m3fnuz decoded as e4m3fn (bias 7 instead of 8)",                                       \
    "e4m3fnuz K with lse or scores checked", "fixture:fp8-e4m3fnuz")                                                   \
  X(8, k_by_row_index, "common",                                                                                       \
    "K addressed by the row's own index (mod the table rows) instead of through slot_ids",                             \
    "slot ids that never equal the row index", "fixture:boundary-32767")                                               \
  X(9, partial_block_zero_mask, "common", "invisible lanes of a partial block count as logit 0 instead of -inf",       \
    "partial last block with all-negative logits, local 0", "fixture:local0-block64")                                  \
  X(10, init_over_local, "common", "init/local priority swapped: an init block inside the local window keeps 1e30",    \
    "init and local windows overlapping in a row with nb > topk (init + local > nb)", "fixture:forced-ties-exact")     \
  X(11, local_window_off_by_one, "common", "local window starts one block early (nb - local - 1)",                     \
    "local >= 1 with nb > topk", "fixture:boundary-32767")                                                             \
  X(12, no_minus_one_tail, "topk", "trivial rows (nb < topk) padded with 0 instead of -1", "topk above nb",            \
    "fixture:exact-tie-free")                                                                                          \
  X(13, ids_unsorted, "topk", "selected ids emitted in descending instead of ascending id order",                      \
    "any row with nb > topk", "fixture:boundary-32767")                                                                \
  X(14, k_scale_ignored, "common", "k_scale not applied to the dot", "k_scale != 1 with scores checked",               \
    "fixture:exact-tie-free")                                                                                          \
  X(15, chunk_last_block_dropped, "common", "each KV chunk skips its last block", "nb > chunks (long rows)",           \
    "fixture:boundary-32767")                                                                                          \
  X(16, tie_rule_reversed, "common", "equal scores rank the higher block id first",                                    \
    "exact ties, e.g. forced blocks beyond topk, exact ids", "fixture:forced-ties-exact")                              \
  X(17, inactive_row_reads_k, "common",                                                                                \
    "rows whose slot lies outside the table read K through a wrapped slot (mod rows), write scores and select",        \
    "inactive rows next to real ones", "suite:padding")                                                                \
  X(18, trivial_rows_scored, "common", "rows with nb <= topk write score columns (stray writes outside the region)",   \
    "short rows (graph padding)", "fixture:exact-tie-free")                                                            \
  X(19, trivial_rows_not_shortcut, "topk",                                                                             \
    "top-k does not shortcut rows with 0 < nb <= topk: it ranks their unwritten score row over the buffer width NB",   \
    "topk above nb", "fixture:exact-tie-free")                                                                         \
  X(20, negative_alias_clamped, "common", "negative token slots clamped to 0 instead of wrapped by S",                 \
    "token slots stored as negative aliases", "fixture:boundary-32767")                                                \
  X(21, q_scale_ignored, "common", "q_scale left out of the logit multiplier", "q_scale != 1 (property cases)",        \
    "property:MatchesOracle")                                                                                          \
  X(22, lse_natural_exp, "common", "lse block score uses natural exp/log instead of exp2/log2", "score_type lse",      \
    "fixture:lse-pack3")                                                                                               \
  X(23, kv_head_modulo, "common", "K head of q head h taken as h % Hk instead of h / (Hq/Hk)", "Hq:Hk 8:2",            \
    "fixture:gqa-8-2")                                                                                                 \
  X(24, topk_one_short, "topk", "top-k keeps the topk-1 best blocks and appends block 0",                              \
    "nb > topk, block 0 not a winner", "fixture:boundary-32767")                                                       \
  X(25, packed_kv_head_of_tile_row, "packed",                                                                          \
    "packed tile row i reads K head i / (pack*Hq/Hk), i.e. head 0 (SGLang's packing, right only for Hk = 1)",          \
    "packed rows with Hk > 1", "fixture:gqa-8-2")                                                                      \
  X(26, stray_column_write, "common", "the scorer also writes column nb of each row (one past its blocks)",            \
    "rows shorter than the table width", "fixture:boundary-32767")                                                     \
  X(27, fn_as_fnuz, "common", "e4m3fn K dispatched as e4m3fnuz (bias 8: every value halved, 0x80 read as NaN)",        \
    "e4m3fn K with scores checked", "fixture:exact-tie-free")                                                          \
  /* Issue 13: bug classes the independent (non-catalogue) bugs taught; one per class. */                              \
  X(28, lse_no_max_subtraction, "cpu",                                                                                 \
    "lse block score sums exp2(s) without taking the block max out (log2(sum exp2 s))",                                \
    "score_type lse with log2 logits > 128 or < -149 (large q_scale / k_scale)", "property:MatchesOracle")             \
  X(29, init_wider_than_row_dropped, "common",                                                                         \
    "init forcing skipped when init_blocks > nb (the init window only checked against the row when it fits)",          \
    "init_blocks > nb > topk", "fixture:init-wider-than-row")                                                          \
  X(30, e4m3_subnormal_flushed, "common", "e4m3fn / e4m3fnuz subnormal codes (exponent 0) decoded as +-0",             \
    "e4m3 K with subnormal codes, scores checked", "property:MatchesOracle")                                           \
  X(31, e5m2_subnormal_flushed, "common",                                                                              \
    "e5m2 subnormal codes (exponent 0) decoded as +-0 (a flush-to-zero conversion)",                                   \
    "e5m2 K made of subnormal codes only (a cache quantized with a tiny scale)", "fixture:fp8-e5m2-subnormal")         \
  X(32, topk_candidates_capped, "cpu",                                                                                 \
    "top-k candidate buffer of 4096 ids filled in id order with every block >= the k-th score: better blocks after a " \
    "plateau are lost",                                                                                                \
    "> 4096 blocks tied at the k-th score, better (e.g. forced local) blocks after them", "fixture:plateau-16k")       \
  X(33, shortcut_strict_less, "common",                                                                                \
    "the trivial-row shortcut taken for nb < topk only: rows with nb == topk are scored (stray writes) and ranked",    \
    "a row with nb == topk exactly (dispatch threshold)", "fixture:exact-tie-free")                                    \
  X(34, topk_capped_512, "topk", "selection keeps at most 512 ids (a 512-slot buffer): topk > 512 pads with -1",       \
    "topk >= 1024 with nb > 512", "property:MatchesOracle")                                                            \
  X(35, chunk_floor_division, "common",                                                                                \
    "KV chunk size nb / chunks rounded down: the last nb % chunks blocks of a row never scored",                       \
    "nb not a multiple of the chunk count (chunk-plan boundary)", "fixture:boundary-32767")                            \
  X(36, padding_rows_select_block0, "common",                                                                          \
    "inactive (padding) rows given one block: they select block 0 instead of all -1",                                  \
    "padding rows (slot past the table or length 0)", "fixture:graph-mixed-groups-exact")                              \
  X(37, topk1_argmax_last, "cpu", "topk 1 by an argmax scan with >=: the last (highest id) of tied maxima wins",       \
    "topk 1 with tied best scores (init_blocks >= 2, plateaus)", "property:ExactValuesGiveExactIds")                   \
  X(38, topk_scratch_stale, "cpu",                                                                                     \
    "top-k key scratch only grows: keys of a longer earlier row of the same thread are ranked too (batch-dependent)",  \
    "rows of different nb in one batch (batch invariance)", "fixture:fp8-e4m3fn")                                      \
  X(39, packed_trailing_rows_dropped, "cpu",                                                                           \
    "packed plan sized R / P programs: the trailing R % P rows are never scored",                                      \
    "R not a multiple of packed_queries, packed plan", "property:MatchesOracle")                                       \
  /* CP mutants (kernels/common/cp_common.hpp, cpu-cp / cuda-cp); tests/cp kills each one too. */                      \
  X(601, cp_contiguous_shards, "cp",                                                                                   \
    "CP shard = contiguous block range r*LOCAL+l scored, labelled with the strided ids l*WORLD+r",                     \
    "WORLD >= 2, any non-trivial row", "fixture:exact-tie-free")                                                       \
  X(602, cp_topk_over_world, "cp", "CP keeps topk / WORLD candidates per shard instead of topk",                       \
    "WORLD >= 2, winners concentrated in one shard (long contexts)", "fixture:exact-tie-free")                         \
  X(603, cp_group_nb_for_rows, "cp", "CP packed: the group's block count used for each row's validity and forcing",    \
    "rows straddling a block boundary in one pack (lengths 32767..32770)", "fixture:boundary-32767")                   \
  X(604, cp_group_shortest, "cp",                                                                                      \
    "CP packed: group sized by its shortest row (longer rows' last block never scored or forced)",                     \
    "rows straddling a block boundary in one pack", "fixture:boundary-32767")                                          \
  X(605, cp_forced_local_dropped, "cp", "CP: the forced local window dropped (init forcing kept)",                     \
    "any row with nb > topk whose own last block scores low", "fixture:boundary-32767")                                \
  X(606, cp_k_by_group_index, "cp", "CP: K addressed by the group (row) index instead of through the slot table",      \
    "slot ids that never equal the row or group index", "fixture:boundary-32767")                                      \
  X(607, cp_shard_end_floor, "cp-gpu",                                                                                 \
    "CP: a rank's last shard cell count (nb - rank) / WORLD rounded down: its last block of the row never scored",     \
    "nb - rank not a multiple of WORLD, the last block a winner (forced local)",                                       \
    "GPU: test_cp_gpu / ixo mutate --backend cuda-cp")                                                                 \
  X(608, cp_trivial_cells_invalid, "cp",                                                                               \
    "CP: valid cells of trivial rows (nb <= topk) marked invalid instead of ord(0): they select nothing",              \
    "rows with 0 < nb <= topk", "fixture:exact-tie-free")                                                              \
  X(43, group_start_pow2, "cpu",                                                                                       \
    "packed groups start at row x << log2(pack) (a power-of-two verify group assumed): groups of 3, 5, 6, 7 draft "    \
    "rows read the wrong rows",                                                                                        \
    "packed_queries 3, 5, 6 or 7 with two or more whole groups", "fixture:fp8-nan-inf-e5m2")                           \
  X(48, msa_local_page_from_length, "msa",                                                                             \
    "MSA selector: the local page taken as L / 128 instead of (L - 1) / 128 (slot 15 not n - 1 when 128 divides L)",   \
    "msa-decode rows with nb > 16 whose length is a multiple of 128", "property:MatchesOracle")                        \
  X(49, msa_bucket_off_by_one, "msa",                                                                                  \
    "MSA selector: 65535 steps instead of 65534 (the top score clamped into the bucket below)",                        \
    "msa-decode rows whose two best history scores are within 2 steps, scores returned", "property:MatchesOracle")     \
  X(50, msa_ties_higher_id, "msa", "MSA selector: equal buckets go to the higher page id (id field not inverted)",     \
    "msa-decode rows with equal history scores (plateaus, exact ties)", "suite:msa-sweep")                             \
  X(51, msa_range_over_forced, "msa",                                                                                  \
    "MSA selector: lo/hi taken over the forced local page too (1e29 collapses every history score into one bucket)",   \
    "msa-decode rows with nb > 16", "property:MatchesOracle")                                                          \
  X(40, k_offset_32bit, "gpu-test",                                                                                    \
    "K byte offset slot * row_bytes computed in 32 bits (unsigned wrap): slots past 2^32 / row_bytes read K rows "     \
    "2^32 bytes lower",                                                                                                \
    "token slots above 2^24 with D 128 bf16 (a 4.3 GB K cache)", "ctest:mutant.k_offset_32bit (test_gpu_offsets)")     \
  X(41, scores_workspace_cached, "gpu-test",                                                                           \
    "the index step scores into a process-wide workspace grown on demand (freed and re-allocated for a larger "        \
    "batch): a graph captured before the growth replays into freed memory",                                            \
    "graph capture, then a larger batch through the same launcher, then allocator churn and a replay",                 \
    "ctest:mutant.scores_workspace_cached (GraphRobust.AllocatorChurn)")                                               \
  X(42, topk_ties_by_arrival, "gpu-test",                                                                              \
    "exact ties at the k-th score resolved by atomic arrival order (SGLang's radix top-k): a valid choice, but not "   \
    "the same from run to run",                                                                                        \
    "thousands of blocks tied at the k-th score, keys read from global memory (nb > 8192), launches beside "           \
    "concurrent work",                                                                                                 \
    "ctest:mutant.topk_ties_by_arrival (RepeatRuns)")

namespace ixo::mutants {

enum Id : int {
  none = 0,
#define IXO_MUTANT_ENUM(id, key, where, bug, input, killer) key = id,
  IXO_MUTANT_CATALOGUE(IXO_MUTANT_ENUM)
#undef IXO_MUTANT_ENUM
};

struct Info {
  int id;
  const char* key;
  const char* where;
  const char* bug;
  const char* input;
  const char* killer;
};

inline constexpr Info catalogue[] = {
#define IXO_MUTANT_INFO(id, key, where, bug, input, killer) {id, #key, where, bug, input, killer},
    IXO_MUTANT_CATALOGUE(IXO_MUTANT_INFO)
#undef IXO_MUTANT_INFO
};

}  // namespace ixo::mutants
