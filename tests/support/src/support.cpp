#include "ixo_test/support.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ixo/backend_diff.hpp"
#include "ixo/case_run.hpp"

namespace ixo::test {

namespace {

// Small verify batches: bs 16, topk 4, init 1, local 1, D 64, Hq 2 : Hk 1, 2 requests x 4.
GenSpec small() { return GenSpec{}.rows(2, 4).up_to(300).heads(2, 1, 64).blocks(16, 4, 1, 1); }

std::string offset_name(int off) { return off < 0 ? "minus" + std::to_string(-off) : "plus" + std::to_string(off); }

std::vector<NamedCase> build() {
  std::vector<NamedCase> v;
  auto add = [&](std::string name, GenSpec s, bool exact = false) {
    v.push_back(NamedCase{name, std::move(s), seed_of(name), exact});
  };

  // Prefixes straddling block boundaries: m*bs + off, so one group mixes nb and nb+1 rows.
  for (int off : {-2, -1, 0, 1}) {
    GenSpec s = small();
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
    GenSpec s = small();
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
    GenSpec s = small();
    s.Hq = hq;
    s.Hk = hk;
    s.draft_rows = p;
    s.cfg.score_type = hk > 1 ? ScoreType::lse : ScoreType::max;
    add("gqa_" + std::to_string(hq) + "_" + std::to_string(hk) + "_p" + std::to_string(p), s);
  }
  // K dtypes with k_scale != 1 (and q_scale, explicit sm_scale), max and lse.
  for (KDtype t : {KDtype::bf16, KDtype::e4m3fn, KDtype::e4m3fnuz, KDtype::e5m2})
    for (ScoreType st : {ScoreType::max, ScoreType::lse}) {
      GenSpec s = small();
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
      GenSpec s = small();
      s.cfg.topk = 5;
      s.cfg.init_blocks = init;
      s.cfg.local_blocks = local;
      s.max_prefix = 200;
      add("init" + std::to_string(init) + "_local" + std::to_string(local), s);
    }
  // Init and local windows overlapping on non-trivial rows (local must win: 1e29), and more
  // forced blocks than topk (any choice among the equal forced scores is valid).
  {
    GenSpec s = small();
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
    GenSpec s = small();
    s.cfg.topk = 32;
    add("topk_above_nb", s);
    s = small();
    s.requests = 3;
    s.prefixes = {4 * 16 - 2, 4 * 16 - 1, 4 * 16};
    add("topk_crossing", s);
    s = small();
    s.cfg.topk = 1;
    s.cfg.init_blocks = 0;
    s.cfg.local_blocks = 0;
    add("topk1_noforce", s);
    s = small();
    s.cfg.topk = 9;
    s.max_prefix = 600;
    s.cfg.score_type = ScoreType::lse;
    add("topk9_long", s);
  }
  // Slot tables and token slots.
  {
    GenSpec s = small();
    s.requests = 4;
    s.request_slots = {5, 2, 7, 1};
    add("slots_explicit", s);
    s = small();
    s.request_slots = {0, 3};  // a real request on table row 0
    add("slots_explicit_row0", s);
    s = small();
    s.permute_slots = false;
    s.permute_tokens = false;
    s.negative_aliases = false;
    add("slots_identity", s);
    s = small();
    s.requests = 3;
    s.negative_aliases = true;
    s.permute_tokens = true;
    s.permute_slots = true;
    s.Hq = 4;
    s.Hk = 2;
    add("slots_permuted_aliases_hk2", s);
    s = small();
    s.padding_requests = 2;
    add("padding", s);
    s = small();  // bs 2: padding rows (L 2..5 on table row 0) have nb up to 3 > topk 2
    s.cfg.block_size = 2;
    s.cfg.topk = 2;
    s.cfg.init_blocks = 0;
    s.max_prefix = 40;
    s.padding_requests = 2;
    add("padding_nontrivial_bs2", s);
    s = small();
    s.requests = 3;
    s.inactive_requests = 2;
    add("inactive", s);
    s = small();
    s.padding_requests = 2;
    s.inactive_requests = 1;
    s.cfg.score_type = ScoreType::lse;
    s.cfg.k_dtype = KDtype::e4m3fn;
    add("padding_inactive_lse_e4m3fn", s);
  }
  // Exact (tie-free) values: ids must equal the oracle's.
  {
    GenSpec s = small();
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
    s = small();
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
    GenSpec s = small();
    s.values = Values::near_tie;
    s.cfg.k_dtype = t;
    add(std::string("near_tie_") + std::string(to_string(t)), s);
  }
  // Odd head dim (not a multiple of the 16 dot lanes).
  {
    GenSpec s = small();
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
    GenSpec s = small();
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
    s = small();
    s.requests = 3;
    s.prefixes = {5 * 16 + 3, 9 * 16 - 1, 12 * 16 + 2};  // every row scored (nb > topk)
    s.draft_rows = 3;                                    // requests of 3 rows, packed_queries 4: both groups mix two
    s.packed_queries = 4;                                // requests; R 9 = 2 groups + 1 trailing real row
    add("graph_pack4_requests3", s);
    s.draft_rows = 4;
    s.packed_queries = 3;  // requests of 4 rows, P 3: R 12, groups straddle requests
    s.cfg.local_blocks = 0;
    add("graph_pack3_requests4_local0", s);
    s = small();
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
    s = small();
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
    add("threshold_pack_gqa" + std::to_string(p), GenSpec(small()).rows(2, p).heads(1, 1, 32).blocks(16, 3, 0, 1));
  for (int rows : {3, 4, 5})
    add("threshold_chunks256_batch" + std::to_string(rows),
        GenSpec{}.rows(rows, 1).heads(1, 1, 32).lengths({4096 + 4}).blocks(1, 8, 1, 1).pack(1));
  for (int rows : {511, 512, 513}) {
    GenSpec s = GenSpec{}.rows(rows, 1).heads(1, 1, 32).lengths({16 * 33}).blocks(16, 4, 0, 1).pack(1);
    s.permute_tokens = false;
    add("threshold_chunks2_batch" + std::to_string(rows), s);
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

// One row appended to a case: slot id, length, q copied from row `q_from`.
void push_row(Case& c, std::int64_t slot, std::int64_t L, std::int64_t q_from) {
  c.slot_ids.push_back(slot);
  c.seq_lens.push_back(L);
  const std::size_t n = static_cast<std::size_t>(c.Hq * c.D);
  const std::size_t at = static_cast<std::size_t>(q_from) * n;
  c.q.reserve(c.q.size() + n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint16_t v = c.q[at + i];
    c.q.push_back(v);
  }
  ++c.R;
}

// The first R' rows of a case.
Case first_rows(const Case& c, std::int64_t R) {
  Case d = c;
  d.R = R;
  d.slot_ids.resize(static_cast<std::size_t>(R));
  d.seq_lens.resize(static_cast<std::size_t>(R));
  d.q.resize(static_cast<std::size_t>(R * c.Hq * c.D));
  return d;
}

}  // namespace

GenSpec graph_edit_base_spec() {
  GenSpec s = small();  // Hq 2 : Hk 1 (CP runs it: WORLD 2; P 4 x 2 = 8 tile rows)
  s.requests = 4;
  s.prefixes = {37, 16 * 3 - 1, 61, 24};
  s.cfg.block_size = 2;
  s.cfg.topk = 2;
  s.cfg.init_blocks = 0;
  s.cfg.local_blocks = 1;
  s.extra_width = 16;
  return s;
}

std::vector<EditedCase> graph_batch_edits(const Case& base) {
  const std::int64_t P = base.cfg.packed_queries;
  std::vector<EditedCase> v;
  auto add = [&](std::string name, Case c, std::string what) {
    validate(c);
    v.push_back(EditedCase{std::move(name), std::move(c), std::move(what)});
  };
  const std::int64_t out_of_table = base.rows + 3;
  {
    Case c = base;  // an inactive (length 0) row first in a group that still packs
    c.seq_lens[0] = 0;
    c.seq_lens[static_cast<std::size_t>(P + 2)] = 0;
    add("len0_first_and_inside", c,
        "length-0 rows first in group 0 and inside group 1 (the groups still share a slot id)");
  }
  {
    Case c = base;  // a row of group 1 whose slot lies past the table: group 1 mixes slot ids
    c.slot_ids[static_cast<std::size_t>(P + 1)] = out_of_table;
    c.slot_ids[static_cast<std::size_t>(2 * P)] = out_of_table + 1;
    add("inactive_slot_inside_groups", c,
        "rows whose slot id lies past the table inside groups 1 and 2 (mixed slot ids)");
  }
  {
    Case c = base;  // lengths not in chain-verify order inside packing groups
    std::reverse(c.seq_lens.begin(), c.seq_lens.begin() + P);
    std::swap(c.seq_lens[static_cast<std::size_t>(P)], c.seq_lens[static_cast<std::size_t>(P + 2)]);
    add("lengths_not_chain", c, "group 0 lengths descending, group 1 permuted (still one slot id per group)");
  }
  for (const std::int64_t p : {P + 1, P - 1, 2 * P}) {
    if (p < 2) continue;
    Case c = base;  // the same rows under another launch hint: groups straddle requests
    c.cfg.packed_queries = static_cast<int>(p);
    add("packed_queries_" + std::to_string(p), c,
        "packed_queries " + std::to_string(p) + " over requests of " + std::to_string(P) + " rows");
  }
  {
    Case c = first_rows(base, base.R - 1);  // the last group loses a row: a partial group of real rows
    add("partial_real_group", c, "R = " + std::to_string(c.R) + ": the last P-1 real rows form a partial group");
  }
  {
    Case c = base;  // graph padding: a whole group, then rows alone, then inactive rows
    for (std::int64_t j = 0; j < P; ++j) push_row(c, 0, j + 2, j);
    push_row(c, 0, 5, 0);
    push_row(c, 0, 7, 1);
    push_row(c, out_of_table, 9, 2);
    push_row(c, 0, 0, 3);
    push_row(c, -1, 3, 0);  // aliases S-1: past the table
    add("padding_group_alone_inactive_after", c,
        "a padding group, then 2 padding rows + an inactive row (one mixed group), then 2 inactive rows (partial "
        "group)");
  }
  {
    Case c = first_rows(base, 2 * P);  // a group of padding and real rows: slot 0 next to a request
    push_row(c, base.slot_ids[0], base.seq_lens[0] + 3, 0);
    push_row(c, 0, 6, 1);
    push_row(c, 0, 7, 2);
    push_row(c, base.slot_ids[0], base.seq_lens[0] + 5, 3);
    push_row(c, 0, 5, 0);
    add("padding_mixed_with_request", c,
        "a whole group alternating a request's rows and padding rows, then 1 padding row alone");
  }
  return v;
}

std::uint64_t seed_of(const std::string& name) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : name) h = (h ^ ch) * 1099511628211ull;
  return h;
}

const std::vector<NamedCase>& kernel_cases() {
  static const std::vector<NamedCase> cases = build();
  return cases;
}

std::vector<NamedCase> kernel_cases_subset(int every) {
  std::vector<NamedCase> out;
  const auto& all = kernel_cases();
  for (std::size_t i = 0; i < all.size(); ++i)
    if (every <= 1 || i % static_cast<std::size_t>(every) == 0) out.push_back(all[i]);
  return out;
}

void PrintTo(const NamedCase& c, std::ostream* os) { *os << c.name << " (seed " << c.seed << ")"; }
void PrintTo(const EditedCase& c, std::ostream* os) { *os << c.name << " (" << c.what << ")"; }

std::string case_param_name(const ::testing::TestParamInfo<NamedCase>& info) { return info.param.name; }

std::string describe(const Case& c) {
  std::ostringstream os;
  os << "case R=" << c.R << " Hq=" << c.Hq << " Hk=" << c.Hk << " D=" << c.D << " S=" << c.S << " rows=" << c.rows
     << " width=" << c.width << " NB=" << c.NB() << " bs=" << c.cfg.block_size << " topk=" << c.cfg.topk
     << " init=" << c.cfg.init_blocks << " local=" << c.cfg.local_blocks << " score=" << to_string(c.cfg.score_type)
     << " k_dtype=" << to_string(c.cfg.k_dtype) << " k_scale=" << c.cfg.k_scale << " q_scale=" << c.cfg.q_scale
     << " pack=" << c.cfg.packed_queries << " seq_lens=[";
  for (std::size_t r = 0; r < c.seq_lens.size(); ++r) os << (r ? "," : "") << c.seq_lens[r];
  os << "] slot_ids=[";
  for (std::size_t r = 0; r < c.slot_ids.size(); ++r) os << (r ? "," : "") << c.slot_ids[r];
  os << "]";
  return os.str();
}

JudgeOptions kernel_judge_options(bool exact_ids, std::uint32_t poison_bits) {
  JudgeOptions o;
  o.exact_ids = exact_ids;
  o.check_scores = true;
  o.check_poison = true;
  o.poison_bits = poison_bits;
  return o;
}

namespace {

// The registry backend a failure message starts with ("cuda-rows straddle_minus2"), or "".
std::string backend_named_in(const std::string& what) {
  const std::string first = what.substr(0, what.find(' '));
  for (const std::string& n : backend_names())
    if (n == first) return n;
  return "";
}

// The backend whose outputs a failing one is diffed against: its registry CPU twin (the same
// plan: cuda-packed -> cpu-packed), else its bitwise twin (cpu-packed -> cpu-rows).
std::string twin_of(const BackendTraits& t) { return t.cpu_twin.empty() ? t.bitwise_twin : t.cpu_twin; }

std::string current_test_name() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return info ? std::string(info->test_suite_name()) + "." + info->name() : "no-test";
}

}  // namespace

std::string failure_root() {
  const char* dir = std::getenv("IXO_TEST_FAILURES");
  return dir && *dir ? dir : (std::filesystem::current_path() / "ixo-test-failures").string();
}

::testing::AssertionResult verdict_ok(const Verdict& v, const Case& c, const std::string& what, bool exact_ids,
                                      const Observed* observed) {
  if (v.pass) return ::testing::AssertionSuccess();
  auto out = ::testing::AssertionFailure();
  out << what << ": " << v.summary() << "\n  " << describe(c);
  const std::string backend = backend_named_in(what);
  constexpr std::size_t kMaxSavedK = std::size_t{256} << 20;  // a 4 GB offset-test cache is not copied to disk
  if (c.k_view().size() > kMaxSavedK) {
    out << "\n  (case not saved: its K is " << (c.k_view().size() >> 20) << " MiB, above the 256 MiB a failure saves)";
    return out;
  }
  try {
    const std::string root = failure_root();
    require_writable_dir(root, "IXO_TEST_FAILURES");
    Regression reg;
    reg.dir = unique_regression_dir(root, backend.empty() ? "kernel" : backend, current_test_name(), 0);
    reg.backend = backend.empty() ? "BACKEND" : backend;
    reg.what = current_test_name() + ": " + what;
    reg.report = v.summary();
    write_case_regression(reg, c, exact_ids);
    out << "\n  case saved: " << reg.dir
        << " (failure.txt beside it)\n  replay: " << replay_command(reg.dir, reg.backend);
    if (!backend.empty()) {
      const BackendTraits traits = backend_traits(backend);
      const std::string place = failure_place(c, traits, v);
      if (!place.empty()) out << "\n  first failing " << place;
      const std::string twin = twin_of(traits);
      if (!twin.empty()) {
        out << "\n  diff:   ixo diff " << reg.dir << " --backend " << twin << " --backend " << backend;
        if (observed != nullptr) {  // the twin diff, written beside the case
          const Observed t = make_backend(twin)->run(c);
          std::ofstream(std::filesystem::path(reg.dir) / "twin_diff.txt") << diff_report(
              c, twin, backend_traits(twin), t, backend, traits, *observed, first_difference(t, *observed));
          out << "\n  twin diff: " << (std::filesystem::path(reg.dir) / "twin_diff.txt").string();
        }
      }
    }
  } catch (const std::exception& e) {
    out << "\n  (the failing case could not be saved: " << e.what() << ")";
  }
  return out;
}

::testing::AssertionResult matches_oracle(const Case& c, const Expected& e, const Observed& o, bool exact_ids,
                                          const std::string& what, std::uint32_t poison_bits) {
  return verdict_ok(judge(c, e, o, kernel_judge_options(exact_ids, poison_bits)), c, what, exact_ids, &o);
}

::testing::AssertionResult bitwise_equal(const Observed& a, const Observed& b, const Case& c, const std::string& what) {
  const Verdict v = compare_bitwise(a, b);
  if (v.pass) return ::testing::AssertionSuccess();
  auto out = verdict_ok(v, c, what);
  const std::string backend = backend_named_in(what);
  const BackendTraits traits = backend.empty() ? BackendTraits{} : backend_traits(backend);
  return out << "\n  " << diff_report(c, "first", traits, a, "second", traits, b, first_difference(a, b));
}

bool clear_margin(const Expected& e, std::int64_t h, std::int64_t r) {
  const std::int64_t nb = e.nb[r];
  if (nb <= e.topk) return true;
  std::vector<std::int64_t> ids(static_cast<std::size_t>(nb));
  for (std::int64_t b = 0; b < nb; ++b) ids[static_cast<std::size_t>(b)] = b;
  std::sort(ids.begin(), ids.end(), [&](std::int64_t a, std::int64_t b) {
    const double sa = e.score[e.at(h, r, a)], sb = e.score[e.at(h, r, b)];
    return sa != sb ? sa > sb : a < b;
  });
  const auto kth = ids[static_cast<std::size_t>(e.topk - 1)], next = ids[static_cast<std::size_t>(e.topk)];
  const double k = e.score[e.at(h, r, kth)], k1 = e.score[e.at(h, r, next)];
  const double tk = e.tau[e.at(h, r, kth)], tk1 = e.tau[e.at(h, r, next)];
  if (!std::isfinite(k) || !std::isfinite(k1)) return false;
  return (k - k1) > 2.0 * (tk + tk1) && k != k1;
}

}  // namespace ixo::test
