// Rows a ranked or quantized selector ranks (nb > topk) under IdOrder::ranked_forced_last
// and/or Selection::quantized16: MiniMax's upstream selector (../shared/spec/upstream-msa.md
// section 3, docs/contracts.md "msa-decode"). Tiers, in order:
//   structure: min(topk, nb) distinct ids in [0, nb); ranked_forced_last: the unforced ids
//              first, then the forced ids of the oracle's selection ascending (MSA: slot 15 =
//              the local page n-1);
//   ids:       the selection is the top of some scores within tau of the oracle's, up to the
//              quantized slack delta (docs/error-bounds.md) among unforced blocks;
//   order:     the ranked ids in descending score within tau + delta;
//   selector:  with the kernel's own scores returned, MSA's selector replayed on them gives
//              exactly the observed ids in the observed order.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "ixo/quantized_select.hpp"
#include "ixo/judge_mutants.hpp"
#include "verdict_detail.hpp"

namespace ixo::verdict_detail {

namespace {

bool is_forced(const Expected& e, const RowView& row, std::int32_t b) { return e.forced[e.at(row.h, row.r, b)] != 0; }

// The quantized slack over the row's unforced finite blocks: factor * (hi+ - lo-) / 65534 with
// hi+ = max(S + tau), lo- = min(S - tau). 0 for the exact selection.
double quantized_delta(const Expected& e, const RowView& row, const Semantics& sem, double* step) {
  *step = 0;
  if (sem.selection != Selection::quantized16) return 0;
  double hi = -std::numeric_limits<double>::infinity(), lo = std::numeric_limits<double>::infinity();
  for (std::int32_t b = 0; b < row.nb; ++b) {
    if (is_forced(e, row, b) || !std::isfinite(row.S[b])) continue;
    hi = std::max(hi, row.S[b] + row.slack(b));
    lo = std::min(lo, row.S[b] - row.slack(b));
  }
  if (!(hi > lo)) return 0;
  *step = (hi - lo) / kQuantizedSteps;
  return (IXO_JUDGE_MUTANT(quantized_delta_tripled) ? 3.0 : kQuantizedSlackFactor) * *step;
}

std::string selector_detail(const float* raw, const std::vector<std::int32_t>& cand) {
  const QuantizedRange q = quantized_range(raw, cand);
  return fmt::format("lo {:.9g}, hi {:.9g}, step {:.3g}", q.lo, q.hi,
                     q.hi > q.lo ? (q.hi - q.lo) / kQuantizedSteps : 0.0);
}

}  // namespace

void judge_ranked_row(const Expected& e, const Observed& o, const JudgeOptions& opt, const RowView& row, Verdict& v) {
  const Semantics& sem = opt.semantics;
  const std::int64_t K = row.K, nb = row.nb;
  const auto& ids = row.ids;
  const auto& want = row.want;
  const bool ranked_last = sem.order == IdOrder::ranked_forced_last;

  // The forced ids of the oracle's selection (ascending): the structural tail.
  std::vector<std::int32_t> tail;
  for (std::int64_t i = 0; i < K; ++i)
    if (want[i] >= 0 && is_forced(e, row, want[i])) tail.push_back(want[i]);
  std::int64_t forced_in_row = 0;
  for (std::int32_t b = 0; b < nb; ++b) forced_in_row += is_forced(e, row, b);
  // Every forced block fits in the row's slots: the tail is exact. (More forced blocks than
  // topk: every slot is forced, judged as a set.)
  const bool tail_exact = ranked_last && forced_in_row <= K;
  const std::int64_t ranked = tail_exact ? K - static_cast<std::int64_t>(tail.size()) : K;

  // Structure.
  std::vector<std::int32_t> sorted_ids = ids;
  std::sort(sorted_ids.begin(), sorted_ids.end());
  bool ok = std::adjacent_find(sorted_ids.begin(), sorted_ids.end()) == sorted_ids.end() &&
            std::all_of(ids.begin(), ids.end(), [&](std::int32_t b) { return b >= 0 && b < nb; });
  std::string rule = "distinct ids in [0, nb)";
  if (ok && sem.order == IdOrder::ascending)
    ok = std::is_sorted(ids.begin(), ids.end()), rule = "ascending distinct ids";
  if (ok && tail_exact) {
    rule = fmt::format("{} ranked unforced ids, then the forced ids {}", ranked, tail);
    ok = std::equal(tail.begin(), tail.end(), ids.begin() + ranked) &&
         std::none_of(ids.begin(), ids.begin() + ranked, [&](std::int32_t b) { return is_forced(e, row, b); });
  }
  double step = 0;
  const double delta = quantized_delta(e, row, sem, &step);
  if (!ok) {
    Failure f =
        at("structure", row.h, row.r, -1,
           fmt::format(
               "structure: {}: ids {} must be {} {}{}; expected (as a set) {}{}", row.where, ids, K, rule,
               tail_exact && !tail.empty() ? fmt::format(" (slot {} holds the local block {})", K - 1, tail.back())
                                           : std::string(),
               want,
               sem.selection == Selection::quantized16
                   ? fmt::format(" (no quantized slack applies to structure; delta {:.3g}, step {:.3g})", delta, step)
                   : std::string()));
    f.expected = want, f.observed = ids;
    fail(v, opt, std::move(f));
    return;
  }

  // Ids: the set within tau, plus the quantized slack among unforced blocks.
  auto exact_slack = [&](std::int32_t b) { return opt.exact_ids ? 0.0 : row.slack(b); };
  const std::set<std::int32_t> chosen(ids.begin(), ids.end());
  double lo = std::numeric_limits<double>::infinity(), hi = -std::numeric_limits<double>::infinity();
  std::int32_t lo_b = -1, hi_b = -1;
  for (std::int32_t b = 0; b < nb; ++b) {
    if (std::isnan(row.S[b]) && sem.nan_blocks == NanRank::unspecified) continue;
    if (chosen.count(b)) {
      const double x = rank_value(row.S[b], sem.nan_blocks) + exact_slack(b);
      if (x < lo) lo = x, lo_b = b;
    } else {
      const double x = rank_value(row.S[b], sem.nan_blocks) - exact_slack(b);
      if (x > hi) hi = x, hi_b = b;
    }
  }
  if (lo + delta < hi) {
    std::vector<std::int32_t> missing, extra;
    std::set_difference(want.begin(), want.end(), sorted_ids.begin(), sorted_ids.end(), std::back_inserter(missing));
    std::set_difference(sorted_ids.begin(), sorted_ids.end(), want.begin(), want.end(), std::back_inserter(extra));
    Failure f =
        at(opt.exact_ids ? "exact ids" : "ids", row.h, row.r, -1,
           fmt::format("{}: {}: expected {} observed {}; missing {} extra {}; weakest selected block {} score "
                       "{:.9g} (tau {:.3g}) vs strongest unselected block {} score {:.9g} (tau {:.3g}); margin "
                       "{:.3g} beyond tau and the quantized slack delta {:.3g} (step (hi - lo) / 65534 = {:.3g})",
                       opt.exact_ids ? "exact ids" : "ids", row.where, want, ids, missing, extra, lo_b, row.S[lo_b],
                       row.T[lo_b], hi_b, row.S[hi_b], row.T[hi_b], hi - lo - delta, delta, step));
    f.expected = want, f.observed = ids, f.missing = missing, f.extra = extra;
    f.margin = hi - lo - delta, f.tau = std::max(row.T[lo_b], row.T[hi_b]);
    fail(v, opt, std::move(f));
    return;
  }
  if (sem.forced_ties == ForcedTies::lowest_id &&
      !forced_ties_ok(sorted_ids, K, nb, row.S, e, row.h, row.r, row.where, v, opt))
    return;

  // Order: the ranked ids in descending score within tau + delta.
  if (sem.order != IdOrder::ascending) {
    for (std::int64_t i = 0; i + 1 < ranked; ++i) {
      const std::int32_t a = ids[i], b = ids[i + 1];
      if (sem.nan_blocks == NanRank::unspecified && (std::isnan(row.S[a]) || std::isnan(row.S[b]))) continue;
      if (rank_value(row.S[a], sem.nan_blocks) + exact_slack(a) + delta >=
          rank_value(row.S[b], sem.nan_blocks) - exact_slack(b))
        continue;
      Failure f = at("order", row.h, row.r, -1,
                     fmt::format("order: {}: ranked ids {} must be in descending score order within tau and the "
                                 "quantized slack delta {:.3g} (step {:.3g}); id {} (score {:.9g}) at slot {} comes "
                                 "before id {} (score {:.9g})",
                                 row.where, std::vector<std::int32_t>(ids.begin(), ids.begin() + ranked), delta, step,
                                 a, row.S[a], i, b, row.S[b]));
      f.observed = ids;
      fail(v, opt, std::move(f));
      return;
    }
  }

  // Selector: replayed bit-exactly on the kernel's own scores of the unforced columns.
  if (sem.selection == Selection::quantized16 && o.has_scores && sem.scores != ScoreBuffer::ignored && nb <= o.NB &&
      (tail_exact || !ranked_last)) {
    std::vector<std::int32_t> cand;
    for (std::int32_t b = 0; b < nb; ++b)
      if (!is_forced(e, row, b)) cand.push_back(b);
    const float* raw = &o.scores[static_cast<std::size_t>((row.h * o.R + row.r) * o.NB)];
    const std::int64_t take = K - static_cast<std::int64_t>(tail.size());
    std::vector<std::int32_t> expect = quantized_select(raw, cand, static_cast<int>(take));
    if (ranked_last)
      expect.insert(expect.end(), tail.begin(), tail.end());
    else {
      expect.insert(expect.end(), tail.begin(), tail.end());
      std::sort(expect.begin(), expect.end());
    }
    const bool same = sem.order == IdOrder::score_descending
                          ? std::is_permutation(expect.begin(), expect.end(), ids.begin())
                          : expect == ids || (IXO_JUDGE_MUTANT(selector_replay_order_ignored) &&
                                              std::is_permutation(expect.begin(), expect.end(), ids.begin()));
    if (!same) {
      std::int64_t i = 0;
      while (i < K && expect[i] == ids[i]) ++i;
      const QuantizedRange q = quantized_range(raw, cand);
      Failure f = at("selector", row.h, row.r, -1,
                     fmt::format("selector: {}: the quantized selector replayed on the kernel's own scores ({}) "
                                 "gives {}, observed {}; first difference at slot {}: expected id {} (score {:.9g}, "
                                 "bucket {}), observed id {}{}",
                                 row.where, selector_detail(raw, cand), expect, ids, i, expect[i], raw[expect[i]],
                                 quantized_bucket(raw[expect[i]], q), ids[i],
                                 ids[i] >= 0 && ids[i] < o.NB ? fmt::format(" (score {:.9g}, bucket {})", raw[ids[i]],
                                                                            quantized_bucket(raw[ids[i]], q))
                                                              : std::string()));
      f.expected = expect, f.observed = ids;
      fail(v, opt, std::move(f));
      return;
    }
  }
  if (sorted_ids != want) ++v.tie_swaps;
}

}  // namespace ixo::verdict_detail
