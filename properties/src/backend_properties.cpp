#include "ixo/backend_properties.hpp"

#include <omp.h>

#include <cstring>

#include "ixo/oracle.hpp"
#include "ixo/transform.hpp"
#include "ixo/verdict.hpp"

namespace ixo::props {

namespace {

void assert_pass(const Verdict& v) {
  if (!v.pass) RC_FAIL(v.summary());
}

// Rows [0, R) of b equal a bit for bit (ids and score rows).
void assert_same_rows(const Observed& a, const Observed& b, std::int64_t R) {
  for (std::int64_t h = 0; h < a.Hq; ++h)
    for (std::int64_t r = 0; r < R; ++r) {
      for (std::int64_t k = 0; k < a.topk; ++k)
        RC_ASSERT(a.topk_idx[static_cast<std::size_t>((h * a.R + r) * a.topk + k)] ==
                  b.topk_idx[static_cast<std::size_t>((h * b.R + r) * b.topk + k)]);
      if (!a.has_scores || !b.has_scores) continue;
      for (std::int64_t n = 0; n < a.NB; ++n)
        RC_ASSERT(std::memcmp(&a.scores[static_cast<std::size_t>((h * a.R + r) * a.NB + n)],
                              &b.scores[static_cast<std::size_t>((h * b.R + r) * b.NB + n)], 4) == 0);
    }
}

}  // namespace

thread_local std::optional<Drawn> drawn;
thread_local std::vector<std::string> preset_names_;
thread_local std::shared_ptr<const Contract> contract_;

void set_contract(std::shared_ptr<const Contract> c) { contract_ = std::move(c); }
const std::shared_ptr<const Contract>& current_contract() { return contract_; }
JudgeOptions contract_judge_options() {
  JudgeOptions j;
  if (contract_) j.semantics = contract_->semantics, j.contract = contract_->label();
  return j;
}

const std::optional<Drawn>& last_drawn() { return drawn; }
void forget_drawn() { drawn.reset(); }
void set_presets(std::vector<std::string> names) {
  for (const auto& n : names) preset(n);  // throws InputError for an unknown name
  preset_names_ = std::move(names);
}

Case draw_case(std::initializer_list<const Backend*> backends, gen::Knobs k) {
  GenSpec spec;
  if (!k.contract) k.contract = contract_;
  if (preset_names_.empty()) {
    spec = *gen::spec(k);
  } else {
    spec = preset(*rc::gen::elementOf(preset_names_));
    if (k.values != Values::gaussian) spec.values = k.values;
    if (spec.values == Values::exact) spec.cfg.score_type = ScoreType::max;
  }
  const auto seed = *rc::gen::arbitrary<std::uint32_t>();
  drawn = Drawn{spec, seed};
  Case c = generate(spec, seed);
  if (k.contract && !preset_names_.empty())
    if (const auto why = k.contract->refuses(c)) RC_DISCARD("outside the contract: " + *why);
  for (const Backend* b : backends) RC_PRE(b->supports(c));
  return c;
}

Observed run(Backend& b, const Case& c, const RunOptions& opt) {
  try {
    return b.run(c, opt);
  } catch (const Unsupported& e) {
    RC_DISCARD(e.what());
  }
}

void matches_oracle(Backend& b, const RunOptions& opt) {
  const Case c = draw_case({&b});
  JudgeOptions j = contract_judge_options();
  j.check_poison = b.in_tree();
  assert_pass(judge(c, oracle(c), run(b, c, opt), j));
}

void exact_values_give_exact_ids(Backend& b, const RunOptions& opt) {
  gen::Knobs k;
  k.values = Values::exact;
  const Case c = draw_case({&b}, k);
  JudgeOptions j = contract_judge_options();
  j.exact_ids = true;
  j.check_poison = b.in_tree();
  assert_pass(judge(c, oracle(c), run(b, c, opt), j));
}

void near_ties_stay_within_tau(Backend& b, const RunOptions& opt) {
  gen::Knobs k;
  k.values = Values::near_tie;
  const Case c = draw_case({&b}, k);
  assert_pass(judge(c, oracle(c), run(b, c, opt), contract_judge_options()));
}

void chunking_changes_nothing(Backend& b, const RunOptions& opt) {
  const Case c = draw_case({&b});
  RunOptions forced = opt;
  forced.force_num_chunks = *rc::gen::element(1, 2, 3, 7);
  assert_pass(compare_bitwise(run(b, c, opt), run(b, c, forced)));
}

void padding_and_inactive_rows_disturb_nothing(Backend& b, const RunOptions& opt) {
  const Case c = draw_case({&b});
  // Inactive rows only where the contract has them (a kernel without them is never given one).
  const int inactive = contract_ && !contract_->inactive_rows ? 0 : *rc::gen::inRange(0, 3);
  const Case padded = append_rows(c, *rc::gen::inRange(0, 3), inactive);
  if (contract_)
    if (const auto why = contract_->refuses(padded)) RC_DISCARD("padded case outside the contract: " + *why);
  const Observed x = run(b, c, opt), y = run(b, padded, opt);
  assert_same_rows(x, y, c.R);
  JudgeOptions j = contract_judge_options();  // the appended rows themselves are right too
  j.check_poison = b.in_tree();
  assert_pass(judge(padded, oracle(padded), y, j));
}

void relabeling_slots_changes_nothing(Backend& b, const RunOptions& opt) {
  const Case c = draw_case({&b});
  const Case d = relabel_slots(c, *rc::gen::arbitrary<std::uint32_t>());
  assert_pass(compare_bitwise(run(b, c, opt), run(b, d, opt)));
}

void packed_equals_rows(Backend& rows, Backend& packed, const RunOptions& opt) {
  const Case c = draw_case({&rows, &packed});
  assert_pass(compare_bitwise(run(rows, c, opt), run(packed, c, opt)));
}

void thread_count_changes_nothing(Backend& b, const RunOptions& opt) {
  const Case c = draw_case({&b});
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const Observed one = run(b, c, opt);
  omp_set_num_threads(2);
  const Observed two = run(b, c, opt);
  omp_set_num_threads(saved);
  assert_pass(compare_bitwise(one, two));
}

}  // namespace ixo::props
