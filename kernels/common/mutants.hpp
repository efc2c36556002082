// The mutant sites: the ids, keys and places of the switches that the kernel code reads
// (IXO_MUTANT), the campaign (`ixo mutate`), the CI gate and docs/mutation.md select. What each
// mutant does, the input that exposes it and its expected killer are the suite's prose
// (suite/include/ixo/mutant_catalogue.hpp, keyed by the key here): kernels keep the ids only.
//
//   X(id, key, where)
//     where: "common" (shared formula: every backend family), "packed" (packed scorers),
//            "topk" (top-k stages), "cpu" / "gpu" (one family only), "cp" (CP backends),
//            "msa" (the quantized selector of the msa-decode backends, kernels/common/quantized_topk.hpp),
//            "cp-gpu" (CP formulas only the GPU CP kernels call, e.g. local_end: cuda-cp, and sim-cp
//            that runs their portable path on the host),
//            "gpu-test" (native CUDA code whose exposing input only a named GPU test builds:
//            a multi-GB K cache, a graph replayed after allocator churn, repeated launches
//            beside concurrent work; `ixo mutate` does not run these: the ctest
//            `mutant.<key>` (label cuda) runs the named test with IXO_TEST_MUTANT=<key> and
//            passes only when that test fails)
//
// A switch in kernel code reads `if (IXO_MUTANT(mutant, ixo::mutants::key)) ...`; in
// release builds (IXO_MUTANTS=OFF) IXO_MUTANT is the constant false and the branch is
// compiled away.
#pragma once

#define IXO_MUTANT_SITES(X)                                                                       \
  X(1, group_nb_for_rows, "packed")                                                               \
  X(2, group_sized_by_shortest, "packed")                                                         \
  X(3, no_row_local_reforce, "packed")                                                            \
  X(4, pack_tail_leak, "packed")                                                                  \
  X(5, wrong_score_row, "packed")                                                                 \
  X(6, fp8_cast_dropped, "common")                                                                \
  X(7, fnuz_as_fn, "common")                                                                      \
  X(8, k_by_row_index, "common")                                                                  \
  X(9, partial_block_zero_mask, "common")                                                         \
  X(10, init_over_local, "common")                                                                \
  X(11, local_window_off_by_one, "common")                                                        \
  X(12, no_minus_one_tail, "topk")                                                                \
  X(13, ids_unsorted, "topk")                                                                     \
  X(14, k_scale_ignored, "common")                                                                \
  X(15, chunk_last_block_dropped, "common")                                                       \
  X(16, tie_rule_reversed, "common")                                                              \
  X(17, inactive_row_reads_k, "common")                                                           \
  X(18, trivial_rows_scored, "common")                                                            \
  X(19, trivial_rows_not_shortcut, "topk")                                                        \
  X(20, negative_alias_clamped, "common")                                                         \
  X(21, q_scale_ignored, "common")                                                                \
  X(22, lse_natural_exp, "common")                                                                \
  X(23, kv_head_modulo, "common")                                                                 \
  X(24, topk_one_short, "topk")                                                                   \
  X(25, packed_kv_head_of_tile_row, "packed")                                                     \
  X(26, stray_column_write, "common")                                                             \
  X(27, fn_as_fnuz, "common")                                                                     \
  X(28, lse_no_max_subtraction, "cpu")                                                            \
  X(29, init_wider_than_row_dropped, "common")                                                    \
  X(30, e4m3_subnormal_flushed, "common")                                                         \
  X(31, e5m2_subnormal_flushed, "common")                                                         \
  X(32, topk_candidates_capped, "cpu")                                                            \
  X(33, shortcut_strict_less, "common")                                                           \
  X(34, topk_capped_512, "topk")                                                                  \
  X(35, chunk_floor_division, "common")                                                           \
  X(36, padding_rows_select_block0, "common")                                                     \
  X(37, topk1_argmax_last, "cpu")                                                                 \
  X(38, topk_scratch_stale, "cpu")                                                                \
  X(39, packed_trailing_rows_dropped, "cpu")                                                      \
  /* CP mutants (kernels/common/cp_common.hpp, cpu-cp / cuda-cp); tests/cp kills each one too. */ \
  X(601, cp_contiguous_shards, "cp")                                                              \
  X(602, cp_topk_over_world, "cp")                                                                \
  X(603, cp_group_nb_for_rows, "cp")                                                              \
  X(604, cp_group_shortest, "cp")                                                                 \
  X(605, cp_forced_local_dropped, "cp")                                                           \
  X(606, cp_k_by_group_index, "cp")                                                               \
  X(607, cp_shard_end_floor, "cp-gpu")                                                            \
  X(608, cp_trivial_cells_invalid, "cp")                                                          \
  X(43, group_start_pow2, "cpu")                                                                  \
  X(48, msa_local_page_from_length, "msa")                                                        \
  X(49, msa_bucket_off_by_one, "msa")                                                             \
  X(50, msa_ties_higher_id, "msa")                                                                \
  X(51, msa_range_over_forced, "msa")                                                             \
  X(40, k_offset_32bit, "gpu-test")                                                               \
  X(41, scores_workspace_cached, "gpu-test")                                                      \
  X(42, topk_ties_by_arrival, "gpu-test")                                                         \
  X(44, topk_early_stop_partial_bin, "gpu-test")

namespace ixo::mutants {

enum Id : int {
  none = 0,
#define IXO_MUTANT_ENUM(id, key, where) key = id,
  IXO_MUTANT_SITES(IXO_MUTANT_ENUM)
#undef IXO_MUTANT_ENUM
};

struct Site {
  int id;
  const char* key;
  const char* where;
};

inline constexpr Site sites[] = {
#define IXO_MUTANT_SITE(id, key, where) {id, #key, where},
    IXO_MUTANT_SITES(IXO_MUTANT_SITE)
#undef IXO_MUTANT_SITE
};

}  // namespace ixo::mutants
