// Batch invariance and repeat-run determinism (metamorphic_properties.hpp).
#include "ixo/metamorphic_properties.hpp"

#include <cstring>

#include "ixo/backend_properties.hpp"

namespace ixo::props {

namespace {

// Rows [a0, a0 + n) of a equal rows [b0, b0 + n) of b bit for bit (ids and score rows).
void assert_rows_equal(const Observed& a, std::int64_t a0, const Observed& b, std::int64_t b0, std::int64_t n) {
  RC_ASSERT(a.Hq == b.Hq && a.topk == b.topk && a.NB == b.NB && a.has_scores == b.has_scores);
  for (std::int64_t h = 0; h < a.Hq; ++h)
    for (std::int64_t r = 0; r < n; ++r) {
      const auto ia = static_cast<std::size_t>(h * a.R + a0 + r), ib = static_cast<std::size_t>(h * b.R + b0 + r);
      for (std::int64_t k = 0; k < a.topk; ++k)
        RC_ASSERT(a.topk_idx[ia * static_cast<std::size_t>(a.topk) + static_cast<std::size_t>(k)] ==
                  b.topk_idx[ib * static_cast<std::size_t>(b.topk) + static_cast<std::size_t>(k)]);
      if (a.has_scores)
        RC_ASSERT(std::memcmp(&a.scores[ia * static_cast<std::size_t>(a.NB)],
                              &b.scores[ib * static_cast<std::size_t>(b.NB)], 4 * static_cast<std::size_t>(a.NB)) == 0);
    }
}

}  // namespace

Case sub_batch(const Case& c, std::int64_t r0, std::int64_t n) {
  Case s = c;
  s.R = n;
  const auto q0 = c.q.begin() + static_cast<std::ptrdiff_t>(r0 * c.Hq * c.D);
  s.q.assign(q0, q0 + static_cast<std::ptrdiff_t>(n * c.Hq * c.D));
  s.slot_ids.assign(c.slot_ids.begin() + r0, c.slot_ids.begin() + r0 + n);
  s.seq_lens.assign(c.seq_lens.begin() + r0, c.seq_lens.begin() + r0 + n);
  validate(s);
  return s;
}

void batch_invariance(Backend& b, const RunOptions& opt) {
  const Case c = draw_case({&b});
  const std::int64_t P = c.cfg.packed_queries, groups = (c.R + P - 1) / P;
  RC_PRE(groups >= 2);
  // Whole groups, so a packed kernel forms the same groups alone and in the batch.
  const std::int64_t g0 = *rc::gen::inRange<std::int64_t>(0, groups);
  const std::int64_t gn = *rc::gen::inRange<std::int64_t>(1, groups - g0 + 1);
  const std::int64_t r0 = g0 * P, n = std::min(c.R, (g0 + gn) * P) - r0;
  RC_TAG(n == c.R ? "whole batch" : "part");
  const Case alone = sub_batch(c, r0, n);
  RC_PRE(b.supports(alone));
  assert_rows_equal(run(b, alone, opt), 0, run(b, c, opt), r0, n);
}

void repeat_runs_identical(Backend& b, const RunOptions& opt) {
  const Case other = draw_case({&b});
  const Case c = draw_case({&b});  // drawn last: the regression saved on a failure
  const Observed first = run(b, c, opt);
  run(b, other, opt);  // other work between the launches
  const Observed second = run(b, c, opt);
  assert_rows_equal(first, 0, second, 0, c.R);
}

}  // namespace ixo::props
