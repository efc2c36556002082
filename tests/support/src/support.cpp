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

GenSpec small_verify_spec() { return GenSpec{}.rows(2, 4).up_to(300).heads(2, 1, 64).blocks(16, 4, 1, 1); }

GenSpec graph_edit_base_spec() {
  GenSpec s = small_verify_spec();  // Hq 2 : Hk 1 (CP runs it: WORLD 2; P 4 x 2 = 8 tile rows)
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

Observed ids_only(Observed o) {
  o.has_scores = false;
  o.scores.clear();
  return o;
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
