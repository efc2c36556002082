// The kernel case matrix, at the test: every in-tree backend that can run here (cpu-rows,
// cpu-packed, cpu-cp; cuda-rows, cuda-packed, cuda-cp on a GPU machine: ctest cuda_testbed)
// runs each row through one testbed (tests/support/testbed.hpp: the suite's run_and_judge and
// the invariants each backend's traits declare):
//   - the verdict: tiers 1-2 (tier 3 on the exact rows), scores within tau, the poison check;
//   - packed == per-row bit for bit (traits.bitwise_twin), CP ids == per-row ids (ids_twin),
//     CP packed == CP per-row plan (RunOptions::per_row_plan);
//   - a rerun, 1 / 3 / 7 forced KV chunks and a second poison pattern bit for bit;
//   - GPU ids == the CPU twin's wherever the oracle's k-th margin is clear (cpu_twin).
// A failure saves the case with its replay line, plan place and twin diff (tests/support).
//
// The rows: block-boundary prefixes, draft rows 1-5, GQA ratios (with packed fallbacks), all K
// dtypes with k_scale != 1, max and lse, init 0-2 x local 0-3, topk above/below/crossing nb, slot
// tables (permuted, gapped, explicit, identity), negative token-slot aliases, padding and
// inactive requests, exact and near-tie values, the M3 shapes, real CUDA-graph batches (graph_*:
// groups mixing slot ids, R not a multiple of packed_queries, padding rows alone and in whole
// groups, inactive rows inside and after groups) and the dispatch thresholds +-1.
//
// Each dimension was seen to fail on an injected bug: the graph_* rows on the packing bugs
// listed in test_cpu_twin.cpp; KernelMatrixCatches below runs catalogue mutants through the
// same testbed (a table that cannot fail proves nothing).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "common/mutants.hpp"
#include "indexer_common.hpp"
#include "ixo_test/testbed.hpp"
#include "kernel_matrix.hpp"

namespace ixo::test {

namespace {

std::string offset_name(int off) { return off < 0 ? "minus" + std::to_string(-off) : "plus" + std::to_string(off); }

std::vector<NamedCase> build() {
  std::vector<NamedCase> v;
  auto add = [&](std::string name, GenSpec s, bool exact = false) {
    v.push_back(NamedCase{name, std::move(s), seed_of(name), exact});
  };

  // Prefixes straddling block boundaries: m*bs + off, so one group mixes nb and nb+1 rows.
  for (int off : {-2, -1, 0, 1}) {
    GenSpec s = small_verify_spec();
    s.requests = 3;
    s.prefixes = {5 * 16 + off, 9 * 16 + off, 12 * 16 + off};
    s.cfg.topk = 3;
    s.cfg.init_blocks = 0;
    add("straddle_" + offset_name(off), s);
    // local 0: a shorter row's partial tail block must not see the group's extra keys.
    s.cfg.local_blocks = 0;
    s.cfg.score_type = ScoreType::lse;
    add("straddle_local0_lse_" + offset_name(off), s);
  }
  // Draft rows 1..5 (Hq 2: 5 x 2 = 10 rows still fit one tile).
  for (int p = 1; p <= 5; ++p) {
    GenSpec s = small_verify_spec();
    s.requests = 3;
    s.draft_rows = p;
    add("draft" + std::to_string(p), s);
  }
  // GQA ratios. 8:1 with 4 draft rows (32 tile rows) and 4:1 with 5 (20) fall back to rows.
  struct Gqa {
    int hq, hk, p;
  };
  for (const Gqa g :
       {Gqa{1, 1, 4}, Gqa{2, 1, 4}, Gqa{4, 1, 4}, Gqa{8, 2, 4}, Gqa{4, 4, 4}, Gqa{8, 1, 4}, Gqa{4, 1, 5}}) {
    const int hq = g.hq, hk = g.hk, p = g.p;
    GenSpec s = small_verify_spec();
    s.Hq = hq;
    s.Hk = hk;
    s.draft_rows = p;
    s.cfg.score_type = hk > 1 ? ScoreType::lse : ScoreType::max;
    add("gqa_" + std::to_string(hq) + "_" + std::to_string(hk) + "_p" + std::to_string(p), s);
  }
  // K dtypes with k_scale != 1 (and q_scale, explicit sm_scale), max and lse.
  for (KDtype t : {KDtype::bf16, KDtype::e4m3fn, KDtype::e4m3fnuz, KDtype::e5m2})
    for (ScoreType st : {ScoreType::max, ScoreType::lse}) {
      GenSpec s = small_verify_spec();
      s.cfg.k_dtype = t;
      s.cfg.k_scale = 0.37;
      s.cfg.q_scale = 1.5;
      if (st == ScoreType::lse) s.cfg.sm_scale = 0.2;
      s.cfg.score_type = st;
      add(std::string("dtype_") + std::string(to_string(t)) + "_" + std::string(to_string(st)), s);
    }
  // Forcing: init 0-2 x local 0-3.
  for (int init = 0; init <= 2; ++init)
    for (int local = 0; local <= 3; ++local) {
      GenSpec s = small_verify_spec();
      s.cfg.topk = 5;
      s.cfg.init_blocks = init;
      s.cfg.local_blocks = local;
      s.max_prefix = 200;
      add("init" + std::to_string(init) + "_local" + std::to_string(local), s);
    }
  // Init and local windows overlapping on non-trivial rows (local must win: 1e29), and more
  // forced blocks than topk (any choice among the equal forced scores is valid).
  {
    GenSpec s = small_verify_spec();
    s.requests = 3;
    s.prefixes = {2 * 16 + 5, 3 * 16 - 1, 4 * 16 + 1};
    s.cfg.topk = 2;
    s.cfg.init_blocks = 2;
    s.cfg.local_blocks = 3;
    add("forced_overlap_topk2", s);
    s.cfg.topk = 3;
    s.cfg.init_blocks = 3;
    s.cfg.local_blocks = 1;
    s.cfg.score_type = ScoreType::lse;
    add("forced_exceed_topk3", s);
  }
  // topk above nb (every row trivial: no score written), crossing (nb = topk, topk + 1 in
  // one group), 1, and well below nb.
  {
    GenSpec s = small_verify_spec();
    s.cfg.topk = 32;
    add("topk_above_nb", s);
    s = small_verify_spec();
    s.requests = 3;
    s.prefixes = {4 * 16 - 2, 4 * 16 - 1, 4 * 16};
    add("topk_crossing", s);
    s = small_verify_spec();
    s.cfg.topk = 1;
    s.cfg.init_blocks = 0;
    s.cfg.local_blocks = 0;
    add("topk1_noforce", s);
    s = small_verify_spec();
    s.cfg.topk = 9;
    s.max_prefix = 600;
    s.cfg.score_type = ScoreType::lse;
    add("topk9_long", s);
  }
  // Slot tables and token slots.
  {
    GenSpec s = small_verify_spec();
    s.requests = 4;
    s.request_slots = {5, 2, 7, 1};
    add("slots_explicit", s);
    s = small_verify_spec();
    s.request_slots = {0, 3};  // a real request on table row 0
    add("slots_explicit_row0", s);
    s = small_verify_spec();
    s.permute_slots = false;
    s.permute_tokens = false;
    s.negative_aliases = false;
    add("slots_identity", s);
    s = small_verify_spec();
    s.requests = 3;
    s.negative_aliases = true;
    s.permute_tokens = true;
    s.permute_slots = true;
    s.Hq = 4;
    s.Hk = 2;
    add("slots_permuted_aliases_hk2", s);
    s = small_verify_spec();
    s.padding_requests = 2;
    add("padding", s);
    s = small_verify_spec();  // bs 2: padding rows (L 2..5 on table row 0) have nb up to 3 > topk 2
    s.cfg.block_size = 2;
    s.cfg.topk = 2;
    s.cfg.init_blocks = 0;
    s.max_prefix = 40;
    s.padding_requests = 2;
    add("padding_nontrivial_bs2", s);
    s = small_verify_spec();
    s.requests = 3;
    s.inactive_requests = 2;
    add("inactive", s);
    s = small_verify_spec();
    s.padding_requests = 2;
    s.inactive_requests = 1;
    s.cfg.score_type = ScoreType::lse;
    s.cfg.k_dtype = KDtype::e4m3fn;
    add("padding_inactive_lse_e4m3fn", s);
  }
  // Exact (tie-free) values: ids must equal the oracle's.
  {
    GenSpec s = small_verify_spec();
    s.values = Values::exact;
    s.requests = 3;
    add("exact_bf16", s, true);
    s.cfg.k_dtype = KDtype::e4m3fn;
    s.Hq = 4;
    s.Hk = 1;
    s.cfg.k_scale = 0.5;
    add("exact_e4m3fn_gqa4", s, true);
    s.cfg.k_dtype = KDtype::e5m2;
    s.Hq = 4;
    s.Hk = 2;
    s.cfg.init_blocks = 2;
    s.cfg.local_blocks = 2;
    add("exact_e5m2_hk2_init2_local2", s, true);
    s = small_verify_spec();
    s.values = Values::exact;
    s.cfg.k_dtype = KDtype::e4m3fnuz;
    s.cfg.local_blocks = 0;
    s.cfg.init_blocks = 0;
    s.requests = 3;
    s.prefixes = {7 * 16 - 2, 11 * 16 - 1, 13 * 16};
    add("exact_e4m3fnuz_local0_straddle", s, true);
    s.padding_requests = 1;
    s.inactive_requests = 1;
    s.cfg.k_dtype = KDtype::bf16;
    s.draft_rows = 3;
    add("exact_padding_inactive_p3", s, true);
  }
  // Near ties: block maxima a few ulps apart (tier 2 with tau).
  for (KDtype t : {KDtype::bf16, KDtype::e4m3fn}) {
    GenSpec s = small_verify_spec();
    s.values = Values::near_tie;
    s.cfg.k_dtype = t;
    add(std::string("near_tie_") + std::string(to_string(t)), s);
  }
  // Odd head dim (not a multiple of the 16 dot lanes).
  {
    GenSpec s = small_verify_spec();
    s.D = 40;
    add("odd_dim40", s);
  }
  // M3 shapes: bs 128, top-16, init 0, local 1, D 128, 4 draft rows.
  {
    add("m3_km_slots_e4m3fn", GenSpec{}
                                  .rows(4, 4)
                                  .lengths({128 * 40 - 2, 128 * 23 - 1, 7777, 128 * 60})
                                  .slots({5, 2, 7, 1})
                                  .k(KDtype::e4m3fn));
    add("m3_hk4_e4m3fnuz",
        GenSpec{}.rows(3, 4).heads(4, 4, 128).lengths({128 * 31 - 3, 4321, 128 * 17 - 2}).k(KDtype::e4m3fnuz, 0.75));
    GenSpec s = GenSpec{}.rows(2, 4).lengths({128 * 30 + 126}).blocks(128, 16, 1, 2).score(ScoreType::lse);
    s.padding_requests = 2;
    add("m3_init1_local2_lse_padding", s);
  }
  // Real CUDA-graph batches: packed_queries is a launch hint, any batch is valid. Groups
  // (P consecutive rows from row 0) that mix slot ids, R not a multiple of P, padding rows
  // alone and in whole groups, inactive rows inside and after groups. bs 2 / topk 1 /
  // local 0 makes the padding rows of length >= 3 non-trivial: scored, their own best block
  // selected.
  {
    GenSpec s = small_verify_spec();
    s.trailing_padding_rows = 2;  // a partial group of padding rows after 2 requests x 4
    add("graph_partial_padding_tail", s);
    s.cfg.block_size = 2;
    s.cfg.topk = 1;
    s.cfg.init_blocks = 0;
    s.cfg.local_blocks = 0;
    s.max_prefix = 40;
    s.padding_requests = 1;  // padding in a whole group, then 3 padding rows alone
    s.trailing_padding_rows = 3;
    add("graph_padding_group_and_alone_bs2", s);
    s.trailing_inactive_rows = 2;  // [pad, pad, pad, inactive] + 1 trailing inactive row
    s.inactive_rows_in_requests = 2;
    s.cfg.score_type = ScoreType::lse;
    add("graph_padding_inactive_inside_after_bs2_lse", s);
    s = small_verify_spec();
    s.requests = 3;
    s.prefixes = {5 * 16 + 3, 9 * 16 - 1, 12 * 16 + 2};  // every row scored (nb > topk)
    s.draft_rows = 3;                                    // requests of 3 rows, packed_queries 4: both groups mix two
    s.packed_queries = 4;                                // requests; R 9 = 2 groups + 1 trailing real row
    add("graph_pack4_requests3", s);
    s.draft_rows = 4;
    s.packed_queries = 3;  // requests of 4 rows, P 3: R 12, groups straddle requests
    s.cfg.local_blocks = 0;
    add("graph_pack3_requests4_local0", s);
    s = small_verify_spec();
    s.requests = 3;
    s.prefixes = {5 * 16 - 2, 9 * 16 - 1, 12 * 16};  // rows straddling block boundaries
    s.packed_queries = 2;                            // 4 rows per request, P 2: whole groups inside requests
    s.inactive_rows_in_requests = 3;
    s.trailing_inactive_rows = 1;
    s.Hq = 4;
    s.Hk = 2;
    s.cfg.k_dtype = KDtype::e4m3fn;
    s.cfg.k_scale = 0.75;
    add("graph_pack2_inactive_rows_hk2_e4m3fn", s);
    s = small_verify_spec();
    s.values = Values::exact;  // tie-free: ids must equal the oracle's
    s.requests = 3;
    s.draft_rows = 3;
    s.packed_queries = 2;
    s.padding_requests = 1;
    s.trailing_padding_rows = 1;
    s.trailing_inactive_rows = 2;
    add("graph_exact_pack2_requests3_tail", s, true);
    s = GenSpec{};  // M3 shapes: bs 128, top-16, init 0, local 1
    s.requests = 2;
    s.prefixes = {128 * 30 + 126, 128 * 9 - 1};
    s.padding_requests = 1;
    s.trailing_padding_rows = 3;
    s.trailing_inactive_rows = 1;
    s.inactive_rows_in_requests = 1;
    s.cfg.k_dtype = KDtype::e4m3fn;
    add("graph_m3_padded_e4m3fn", s);
  }
  // Dispatch thresholds +-1 (kernels/common/indexer_common.hpp, kernels/gpu/launch_plan.hpp,
  // indexer_kernels.cuh): pack * Hq/Hk around the 16-row tile (packed vs per-row plan); the
  // chunk count common::score_chunks around 1024 / 2^k (kScoreGridPrograms; batch 3, 4, 5
  // at 256 -> 128 chunks; 511..513 at 2 -> 1) with the NB / 4 cap out of the way, and NB
  // around that cap (7, 8, 9: 1 -> 2 chunks); nb around the top-k kernel's shared-memory key limit
  // (8192) and the trivial-row shortcut (nb = topk +-1 with topk 2048).
  for (int p : {15, 16, 17})
    add("threshold_pack_gqa" + std::to_string(p),
        GenSpec(small_verify_spec()).rows(2, p).heads(1, 1, 32).blocks(16, 3, 0, 1));
  for (int rows : {3, 4, 5})
    add("threshold_chunks256_batch" + std::to_string(rows),
        GenSpec{}.rows(rows, 1).heads(1, 1, 32).lengths({4096 + 4}).blocks(1, 8, 1, 1).pack(1));
  for (int rows : {511, 512, 513}) {
    GenSpec s = GenSpec{}.rows(rows, 1).heads(1, 1, 32).lengths({16 * 33}).blocks(16, 4, 0, 1).pack(1);
    s.permute_tokens = false;
    add("threshold_chunks2_batch" + std::to_string(rows), s);
  }
  // The packed plans' one wave (common::packed_wave_chunks): groups around 396 / 2 (fp8: 2 -> 1
  // chunks) and 264 / 2 (bf16 with IXO_BF16_PACKED_WAVE=1; 2 chunks either side with score_chunks).
  // Rows of 513 / 514 tokens: nb 33, odd, so two chunks split 17 + 16. A floor-divided chunk size
  // (mutant chunk_floor_division's rule, planted always-on) leaves block 32 unscored in every
  // 2-chunk launch: all four cases fail, 199 only through cpu-rows (398 rows: 2 chunks; its
  // packed plan has 1).
  for (int groups : {132, 133, 198, 199}) {
    GenSpec s = GenSpec{}.rows(groups, 2).heads(1, 1, 32).lengths({16 * 32}).blocks(16, 4, 0, 1).pack(2);
    s.permute_tokens = false;
    if (groups > 133) s.cfg.k_dtype = KDtype::e4m3fn;
    add("threshold_packed_wave_groups" + std::to_string(groups), s);
  }
  for (int nb : {7, 8, 9}) {
    GenSpec s = GenSpec{}.rows(1, 1).heads(2, 1, 32).lengths({16 * nb - 1}).blocks(16, 4, 0, 1);
    s.extra_width = 0;  // NB = nb
    add("threshold_nb_cap" + std::to_string(nb), s);
  }
  for (int nb : {8191, 8192, 8193}) {
    GenSpec s = GenSpec{}.rows(1, 1).heads(2, 1, 32).lengths({nb - 1}).blocks(1, 64, 0, 1);
    add("threshold_topk_smem_nb" + std::to_string(nb), s);
    s.cfg.topk = 2048;
    s.prefixes = {2048 + (nb - 8192) - 1};  // nb = 2047, 2048, 2049 around topk 2048
    add("threshold_trivial_topk2048_nb" + std::to_string(nb - 8192 + 2048), s);
  }
  return v;
}

}  // namespace

const std::vector<NamedCase>& kernel_cases() {
  static const std::vector<NamedCase> cases = build();
  return cases;
}

const NamedCase* kernel_case_named(const std::string& name) {
  for (const NamedCase& c : kernel_cases())
    if (c.name == name) return &c;
  return nullptr;
}

void PrintTo(const MutantRow& k, std::ostream* os) { *os << "mutant " << k.mutant << " on " << k.row; }

std::string mutant_row_name(const ::testing::TestParamInfo<MutantRow>& i) {
  return "mutant" + std::to_string(i.param.mutant) + "_" + i.param.row;
}

int failures_with_mutant(const std::vector<std::string>& backends, const MutantRow& k, const TestbedChecks& checks) {
  const NamedCase* nc = kernel_case_named(k.row);
  if (nc == nullptr) {
    ADD_FAILURE() << "no kernel-matrix row " << k.row;
    return 0;
  }
  RunOptions opt;
  opt.mutant = k.mutant;
  return intercepted_failures(backends, *nc, opt, checks);
}

std::vector<NamedCase> kernel_cases_subset(int every) {
  std::vector<NamedCase> out;
  const auto& all = kernel_cases();
  for (std::size_t i = 0; i < all.size(); ++i)
    if (every <= 1 || i % static_cast<std::size_t>(every) == 0) out.push_back(all[i]);
  return out;
}

namespace {

class KernelMatrix : public ::testing::TestWithParam<NamedCase> {};

TEST_P(KernelMatrix, EveryBackend) {
  const NamedCase& nc = GetParam();
  const std::vector<std::string> judged =
      judge_every_backend(nc.make(), nc.name, nc.exact_ids, RunOptions{}, TestbedChecks::all());
  // cpu-rows and cpu-packed judge every row; cpu-cp the rows it supports (Hk 1)
  EXPECT_GE(judged.size(), 2u) << nc.name;
  std::string names;
  for (const std::string& n : judged) names += " " + n;
  RecordProperty("judged", names);
}

INSTANTIATE_TEST_SUITE_P(Kernels, KernelMatrix, ::testing::ValuesIn(kernel_cases()), case_param_name);

// Every runnable backend takes part in the table (a row a backend silently declines judges
// nothing there): the native backends support every row, the CP backends the rows with one K
// head (most of them: WORLD = Hq, Hk 1). Counted from supports(), no runs.
TEST(KernelMatrixCoverage, EveryRunnableBackendTakesPart) {
  const auto& rows = kernel_cases();
  for (const std::string& name : runnable_backends()) {
    auto b = make_backend(name);
    std::size_t supported = 0, one_k_head = 0;
    for (const NamedCase& nc : rows) {
      const Case c = nc.make();
      supported += b->supports(c) ? 1 : 0;
      one_k_head += c.Hk == 1 ? 1 : 0;
    }
    if (b->traits().mutant_scope == "native") {
      EXPECT_EQ(supported, rows.size()) << name;
    } else {
      EXPECT_GE(supported + 8, one_k_head) << name << " (at most 8 one-head rows outside its limits)";
      EXPECT_GT(supported, rows.size() / 2) << name;
    }
    std::printf("%s supports %zu of %zu rows\n", name.c_str(), supported, rows.size());
  }
}

// The testbed catches bugs through the matrix: a catalogue mutant (kernels/common/mutants.hpp)
// on the in-tree backends fails the named row. The failures are intercepted and their saved
// cases go to a scratch directory, removed afterwards.
class KernelMatrixCatches : public ::testing::TestWithParam<MutantRow> {};

TEST_P(KernelMatrixCatches, AMutantFailsTheTestbed) {
  const MutantRow& k = GetParam();
  if (!IXO_MUTANT(k.mutant, k.mutant)) GTEST_SKIP() << "mutant switches not compiled (IXO_MUTANTS=OFF)";
  EXPECT_GT(failures_with_mutant(runnable_backends(), k, TestbedChecks::all()), 0)
      << "mutant " << k.mutant << " passed the testbed on " << k.row;
}

// Native packed, common, top-k and context-parallel mutants, each on a row that exposes it.
INSTANTIATE_TEST_SUITE_P(Kernels, KernelMatrixCatches,
                         ::testing::ValuesIn(std::vector<MutantRow>{
                             {mutants::group_nb_for_rows, "straddle_minus2"},
                             {mutants::packed_trailing_rows_dropped, "graph_pack4_requests3"},
                             {mutants::ids_unsorted, "topk9_long"},
                             {mutants::chunk_floor_division, "threshold_nb_cap9"},
                             {mutants::cp_group_nb_for_rows, "straddle_minus2"},
                             {mutants::cp_topk_over_world, "topk9_long"},
                         }),
                         mutant_row_name);

}  // namespace
}  // namespace ixo::test
