// The judge's mutant catalogue (issue 26): hand-written bugs in the code that decides PASS or
// FAIL for everyone else's kernel -- the verdict's tiers, tau's derivation, decoding, case and
// .npy input, the exec: backend, the fuzz/suite layer -- compiled in as switches in test
// builds and selected at run time by the environment variable IXO_JUDGE_MUTANT=<id>.
// ci/mutate-judge.py runs each one against its killer (then the wider gate) and writes the
// kill matrix (docs/mutation.md "Who judges the judge"); ctest judge_mutation_gate runs it.
//
//   X(id, key, area, rule, killer)
//     area:   reference (oracle, tau, decoding, verdict, case and .npy I/O), external (exec:),
//             suite (fuzz, shrinking, regressions, coverage); python-source mutants are text
//             patches in ci/mutate-judge.py (python/indexer_oracle is not compiled)
//     killer: the test expected to kill it, as "BINARY[:GTEST_FILTER]" (a test executable of
//             the build) or "ctest:REGEX"; the campaign tries it first
//
// Release builds (IXO_MUTANTS=OFF) compile every switch away (IXO_JUDGE_MUTANT is false). In a
// test build the switch is off unless IXO_JUDGE_MUTANT is set, and then every verdict summary
// and the first judge call on stderr say so: a judge mutant is never silent.
#pragma once

#define IXO_JUDGE_MUTANT_CATALOGUE(X)                                                                                  \
  X(1, ids_duplicates_accepted, "reference", "tier 1: ids must be distinct (a repeated id takes a place)",             \
    "test_verdict")                                                                                                    \
  X(2, ids_tail_unchecked, "reference", "tier 1: places past min(topk, nb) must hold -1", "test_verdict")              \
  X(3, ids_range_inclusive, "reference", "tier 1: ids lie in [0, nb): nb itself is out of range", "test_verdict")      \
  X(4, tier2_slack_doubled, "reference", "tier 2: a swap is accepted within tau, not 2 tau", "test_verdict")           \
  X(5, tier2_slack_sign_flipped, "reference", "tier 2: selected blocks get + tau, unselected - tau (not the reverse)", \
    "test_verdict")                                                                                                    \
  X(6, nan_rank_reversed, "reference", "NaN blocks rank where the contract says (highest <-> lowest swapped)",         \
    "test_contract:VerdictSemantics.NanBlocksRankWhereTheContractSays")                                                \
  X(7, forced_ties_unchecked, "reference", "forced ties go to the lowest id when the contract says so",                \
    "test_contract:VerdictSemantics.ForcedTiesLowestIdOrAny")                                                          \
  X(8, exact_ids_ignored, "reference", "exact-values cases judge ids exactly (no tau)", "test_verdict")                \
  X(9, scores_tolerance_doubled, "reference", "a score cell is within tau, not 2 tau", "test_verdict")                 \
  X(10, scores_forced_inexact, "reference", "a forced block's score is exactly its marker", "test_verdict")            \
  X(11, scores_nonfinite_lenient, "reference", "NaN / inf score cells must match in position", "test_verdict")         \
  X(12, poison_stray_unchecked, "reference", "score cells outside the written region keep the poison", "test_verdict") \
  X(13, order_unchecked, "reference", "score-descending ids are in descending order within tau",                       \
    "test_contract:VerdictSemantics.ScoreDescendingOrder")                                                             \
  X(14, quantized_delta_tripled, "reference", "the quantized slack is 1.01 steps, not 3", "test_quantized_verdict")    \
  X(15, selector_replay_order_ignored, "reference", "the replayed selector gives the ids in the observed order",       \
    "test_quantized_verdict")                                                                                          \
  X(16, tau_rel_halved, "reference", "tau's relative term is gamma2(D) + 10u (not half of it)", "test_tau_derivation") \
  X(17, tau_abs_dropped, "reference", "tau's absolute term D * 2^-149 (fp32 underflow of the products)",               \
    "test_tau_derivation")                                                                                             \
  X(18, lse_tau_extra_dropped, "reference", "an lse block score's bound adds the exp2/log2/sum error",                 \
    "test_tau_derivation")                                                                                             \
  X(19, block_nan_dropped, "reference", "a block with a NaN logit scores NaN", "test_oracle_handworked")               \
  X(20, local_window_short, "reference", "the local window forces the last local_blocks blocks (not one fewer)",       \
    "test_oracle_handworked")                                                                                          \
  X(21, e4m3fnuz_bias_7, "reference", "e4m3fnuz decodes with bias 8 (not e4m3fn's 7)", "test_decode")                  \
  X(22, npy_fortran_order_ignored, "reference", "a Fortran-ordered .npy is refused (its bytes are transposed)",        \
    "test_npy_hardening")                                                                                              \
  X(23, npy_short_data_accepted, "reference", "a .npy with fewer data bytes than its shape needs is refused",          \
    "test_npy_hardening")                                                                                              \
  X(24, observed_topk_shape_unchecked, "reference", "topk_idx's shape must be [Hq, R, topk]", "test_verdict")          \
  X(25, exec_exit77_passes, "external", "exit 77 is a skip (Unsupported), never a pass",                               \
    "pytest:test_exec_backend.py::test_exit_77_is_a_skip_not_a_pass")                                                  \
  X(26, exec_nonzero_exit_ignored, "external", "a nonzero exit (not 77) fails the case",                               \
    "pytest:test_exec_backend.py::test_nonzero_exit_fails_with_the_stderr_tail")                                       \
  X(27, fuzz_declined_counted_judged, "suite", "a declined case is not a judged case (NOTHING JUDGED, not PASS)",      \
    "pytest:test_fuzz_and_suite.py::test_a_kernel_that_declines_everything_judged_nothing_and_does_not_pass")          \
  X(28, suite_skip_counted_pass, "suite", "a suite row whose cases were all skipped is SKIP, not PASS",                \
    "test_suite_rows")                                                                                                 \
  X(29, regression_dir_reused, "suite", "a failure directory is never overwritten (a suffix when taken)",              \
    "pytest:test_fuzz_and_suite.py::test_failure_directories_never_overwrite_each_other")

namespace ixo::judge_mutants {

#define IXO_JUDGE_MUTANT_ENUM(id, key, area, rule, killer) key = id,
enum Id : int { none = 0, IXO_JUDGE_MUTANT_CATALOGUE(IXO_JUDGE_MUTANT_ENUM) };
#undef IXO_JUDGE_MUTANT_ENUM

struct Info {
  int id;
  const char* key;
  const char* area;
  const char* rule;
  const char* killer;
};
#define IXO_JUDGE_MUTANT_INFO(id, key, area, rule, killer) {id, #key, area, rule, killer},
inline constexpr Info catalogue[] = {IXO_JUDGE_MUTANT_CATALOGUE(IXO_JUDGE_MUTANT_INFO)};
#undef IXO_JUDGE_MUTANT_INFO

// The active judge mutant (IXO_JUDGE_MUTANT, read once; 0 = none). Always 0 in builds without
// the switches. The first call with a mutant active prints a warning on stderr.
int active();
// "" or " [JUDGE MUTANT <id> <key> ACTIVE: verdicts are deliberately wrong]".
const char* banner();

}  // namespace ixo::judge_mutants

#if defined(IXO_ENABLE_JUDGE_MUTANTS)
#define IXO_JUDGE_MUTANT(key) (::ixo::judge_mutants::active() == ::ixo::judge_mutants::key)
#else
#define IXO_JUDGE_MUTANT(key) false
#endif
