#include "ixo/verdict.hpp"
#include "ixo/judge_mutants.hpp"

#include "verdict_detail.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>
#include <set>

namespace ixo {

namespace {

using namespace verdict_detail;

// Observed score cell in the oracle's units (log2): natural-unit kernels are scaled by log2(e)
// exactly in float64; forced cells (1e30 / 1e29 markers) are compared as they are.
double observed_in_oracle_units(float got, bool forced, ScoreUnits units) {
  if (forced || units == ScoreUnits::log2) return static_cast<double>(got);
  return static_cast<double>(got) * std::numbers::log2e;  // the oracle's constant (oracle_detail.hpp)
}

std::uint32_t bits_of(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// IdOrder::score_descending: each id's oracle score (within tau) is at least the next one's.
template <class Slack>
bool order_ok(const std::vector<std::int32_t>& ids, std::int64_t k_eff, const double* S, const Slack& slack,
              NanRank nan, const std::string& where, Verdict& v, const JudgeOptions& opt, std::int64_t h,
              std::int64_t r) {
  if (IXO_JUDGE_MUTANT(order_unchecked)) return true;
  for (std::int64_t i = 0; i + 1 < k_eff; ++i) {
    const std::int32_t a = ids[i], b = ids[i + 1];
    if (nan == NanRank::unspecified && (std::isnan(S[a]) || std::isnan(S[b]))) continue;
    if (rank_value(S[a], nan) + slack(a) >= rank_value(S[b], nan) - slack(b)) continue;
    Failure f =
        at("order", h, r, -1,
           fmt::format("order: {}: ids {} must be in descending score order; id {} (score {:.9g}) at place {} comes "
                       "before id {} (score {:.9g})",
                       where, ids, a, S[a], i, b, S[b]));
    f.observed = ids;
    fail(v, opt, std::move(f));
    return false;
  }
  return true;
}

}  // namespace

// ForcedTies::lowest_id: among blocks of exactly equal forced score, the selected ones are
// the lowest ids.
bool verdict_detail::forced_ties_ok(const std::vector<std::int32_t>& ids, std::int64_t k_eff, std::int64_t nb,
                                    const double* S, const Expected& e, std::int64_t h, std::int64_t r,
                                    const std::string& where, Verdict& v, const JudgeOptions& opt) {
  if (IXO_JUDGE_MUTANT(forced_ties_unchecked)) return true;
  const std::set<std::int32_t> chosen(ids.begin(), ids.begin() + k_eff);
  for (std::int32_t b = 0; b < nb; ++b) {
    if (chosen.count(b) || !e.forced[e.at(h, r, b)]) continue;
    for (std::int32_t a : chosen)
      if (a > b && e.forced[e.at(h, r, a)] && S[a] == S[b]) {
        Failure f =
            at("forced ties", h, r, -1,
               fmt::format("forced ties: {}: block {} is kept and block {} dropped although both hold the forced "
                           "score {:.9g} (contract: the lowest ids win)",
                           where, a, b, S[a]));
        f.observed = ids;
        fail(v, opt, std::move(f));
        return false;
      }
  }
  return true;
}

std::string Verdict::summary() const {
  std::string s = pass ? "PASS" : "FAIL";
  s += fmt::format(": {} (head,row) pairs checked, {} tie swaps within tau, {} failures", rows_checked, tie_swaps,
                   failures);
  if (!contract.empty()) s += " under " + contract;
  s += judge_mutants::banner();
  for (const auto& r : reports) s += "\n  " + r;
  if (failures > static_cast<std::int64_t>(reports.size()))
    s += fmt::format("\n  ... and {} more", failures - static_cast<std::int64_t>(reports.size()));
  return s;
}

Verdict kernel_failure_verdict(const std::string& what) {
  Verdict v;
  fail(v, JudgeOptions{}, at("kernel", -1, -1, -1, what));
  return v;
}

bool score_cell_written(const Expected& e, std::int64_t r, std::int64_t b, ScoreBuffer buffer) {
  if (buffer == ScoreBuffer::history) return b < e.nb[r] && !e.forced[e.at(0, r, b)];
  return e.nb[r] > e.topk && b < e.nb[r];
}

Verdict judge(const Case& c, const Expected& e, const Observed& o, const JudgeOptions& opt) {
  Verdict v;
  v.contract = opt.contract;
  const Semantics& sem = opt.semantics;
  if (!IXO_JUDGE_MUTANT(observed_topk_shape_unchecked) &&
      (o.Hq != e.Hq || o.R != e.R || o.topk != e.topk ||
       static_cast<std::int64_t>(o.topk_idx.size()) != e.Hq * e.R * e.topk)) {
    fail(v, opt,
         at("structure", -1, -1, -1,
            fmt::format("structure: topk_idx shape [{},{},{}] ({} values), expected [{},{},{}]", o.Hq, o.R, o.topk,
                        o.topk_idx.size(), e.Hq, e.R, e.topk)));
    return v;
  }
  const std::int64_t K = e.topk;
  for (std::int64_t h = 0; h < e.Hq; ++h) {
    for (std::int64_t r = 0; r < e.R; ++r) {
      ++v.rows_checked;
      const std::int64_t nb = e.nb[r];
      const auto ids = row_ids(&o.topk_idx[(h * e.R + r) * K], K);
      const auto want = row_ids(&e.topk_idx[(h * e.R + r) * K], K);
      const std::string where = fmt::format("head {} row {} (L={}, nb={})", h, r, c.seq_lens[r], nb);
      // Ranked / quantized selectors (MiniMax's upstream kernel) on rows they rank.
      if (nb > K && (sem.order == IdOrder::ranked_forced_last || sem.selection == Selection::quantized16)) {
        RowView rv;
        rv.h = h, rv.r = r, rv.nb = nb, rv.K = K, rv.ids = ids, rv.want = want, rv.where = where;
        rv.S = &e.score[e.at(h, r, 0)], rv.T = &e.tau[e.at(h, r, 0)];
        judge_ranked_row(e, o, opt, rv, v);
        continue;
      }
      // Tier 1: min(topk, nb) distinct ascending ids in [0, nb), then -1.
      const std::int64_t k_eff = std::min(K, nb);
      const bool descending = sem.order == IdOrder::score_descending;
      // Score-descending kernels: the ids as a set are judged like ascending ones; their
      // order is checked against the oracle's scores below.
      std::vector<std::int32_t> sorted_ids = ids;
      if (descending) std::sort(sorted_ids.begin(), sorted_ids.begin() + k_eff);
      bool ok = true;
      for (std::int64_t i = 0; i < K && ok; ++i) {
        if (i < k_eff)
          ok = sorted_ids[i] >= 0 &&
               (sorted_ids[i] < nb || (IXO_JUDGE_MUTANT(ids_range_inclusive) && sorted_ids[i] == nb)) &&
               (i == 0 || sorted_ids[i] > sorted_ids[i - 1] ||
                (IXO_JUDGE_MUTANT(ids_duplicates_accepted) && sorted_ids[i] == sorted_ids[i - 1])) &&
               ids[i] >= 0;
        else
          ok = ids[i] == -1 || IXO_JUDGE_MUTANT(ids_tail_unchecked);
      }
      if (!ok) {
        // An inactive row says why it is inactive: that is what a kernel got wrong.
        const std::string msg =
            nb > 0 ? fmt::format("structure: {}: ids {} must be {} {}distinct ids in [0,{}) then -1; expected {}",
                                 where, ids, k_eff, descending ? "" : "ascending ", nb, want)
            : c.seq_lens[r] == 0
                ? fmt::format("structure: head {} row {} inactive: seq_lens[{}]=0; expected all -1, observed {}", h, r,
                              r, ids)
                : fmt::format(
                      "structure: head {} row {} inactive: slot_ids[{}]={} is not a table row (table has {} rows, "
                      "k_cache {} slots); expected all -1, observed {}",
                      h, r, r, c.slot_ids[r], c.rows, c.S, ids);
        Failure f = at("structure", h, r, -1, msg);
        f.expected = want, f.observed = ids;
        fail(v, opt, std::move(f));
        continue;
      }
      const double* S = &e.score[e.at(h, r, 0)];
      const double* T = &e.tau[e.at(h, r, 0)];
      auto slack = [&](std::int32_t b) { return block_slack(S, T, b); };
      if (descending && nb > K && !order_ok(ids, k_eff, S, slack, sem.nan_blocks, where, v, opt, h, r)) continue;
      const bool nan_free =
          sem.nan_blocks == NanRank::lowest || std::none_of(S, S + nb, [](double x) { return std::isnan(x); });
      if (nb <= K || (sorted_ids == want && nan_free)) {
        if (nb > K && sem.forced_ties == ForcedTies::lowest_id)
          forced_ties_ok(sorted_ids, k_eff, nb, S, e, h, r, where, v, opt);
        continue;
      }
      const std::vector<std::int32_t>& ids_set = sorted_ids;
      std::vector<std::int32_t> missing, extra;
      std::set_difference(want.begin(), want.begin() + k_eff, ids_set.begin(), ids_set.begin() + k_eff,
                          std::back_inserter(missing));
      std::set_difference(ids_set.begin(), ids_set.begin() + k_eff, want.begin(), want.begin() + k_eff,
                          std::back_inserter(extra));
      // Tier 3 (exact values: every real score distinct) is tier 2 with no slack: only blocks
      // of exactly equal score -- forced ones -- may be swapped (any choice among equal forced
      // scores is valid unless the contract says lowest id).
      auto exact_slack = [&](std::int32_t b) {
        if (IXO_JUDGE_MUTANT(tier2_slack_doubled)) return opt.exact_ids ? 0.0 : 2 * slack(b);
        return opt.exact_ids && !IXO_JUDGE_MUTANT(exact_ids_ignored) ? 0.0 : slack(b);
      };
      // Tier 2: a valid selection is the top-k of some scores within tau of the oracle's:
      // min over selected (S + tau) >= max over unselected (S - tau). NaN blocks rank where
      // the contract says; "unspecified" leaves them out on both sides (a selected NaN block
      // only takes a place, the rest must still be the top of the finite blocks).
      std::set<std::int32_t> chosen(ids_set.begin(), ids_set.end());
      double lo = std::numeric_limits<double>::infinity(), hi = -std::numeric_limits<double>::infinity();
      std::int32_t lo_b = -1, hi_b = -1;
      for (std::int32_t b = 0; b < nb; ++b) {
        if (std::isnan(S[b]) && sem.nan_blocks == NanRank::unspecified) continue;
        if (chosen.count(b)) {
          const double x =
              rank_value(S[b], sem.nan_blocks) + (IXO_JUDGE_MUTANT(tier2_slack_sign_flipped) ? -1 : 1) * exact_slack(b);
          if (x < lo) lo = x, lo_b = b;
        } else {
          const double x =
              rank_value(S[b], sem.nan_blocks) - (IXO_JUDGE_MUTANT(tier2_slack_sign_flipped) ? -1 : 1) * exact_slack(b);
          if (x > hi) hi = x, hi_b = b;
        }
      }
      if (lo >= hi) {
        if (sem.forced_ties == ForcedTies::lowest_id && !forced_ties_ok(ids_set, k_eff, nb, S, e, h, r, where, v, opt))
          continue;
        if (ids_set != want) ++v.tie_swaps;
        continue;
      }
      if (opt.exact_ids) {
        Failure f = at("exact ids", h, r, -1, fmt::format("exact ids: {}: expected {} observed {}", where, want, ids));
        f.expected = want, f.observed = ids, f.missing = missing, f.extra = extra;
        fail(v, opt, std::move(f));
        continue;
      }
      Failure f =
          at("ids", h, r, -1,
             fmt::format(
                 "ids: {}: expected {} observed {}; missing {} extra {}; weakest selected block {} score {:.9g} "
                 "(tau {:.3g}) vs strongest unselected block {} score {:.9g} (tau {:.3g}); margin {:.3g} beyond tau",
                 where, want, ids, missing, extra, lo_b, S[lo_b], T[lo_b], hi_b, S[hi_b], T[hi_b], hi - lo));
      f.expected = want, f.observed = ids, f.missing = missing, f.extra = extra;
      f.margin = hi - lo, f.tau = std::max(T[lo_b], T[hi_b]);
      fail(v, opt, std::move(f));
    }
  }

  if (o.has_scores && opt.check_scores && sem.scores != ScoreBuffer::ignored) {
    double worst = 0;
    std::string worst_at;
    for (std::int64_t h = 0; h < e.Hq; ++h)
      for (std::int64_t r = 0; r < e.R; ++r) {
        // judged: trivial rows' scores need not be written; history: every row's unforced cells.
        for (std::int64_t b = 0; b < e.nb[r] && b < o.NB; ++b) {
          if (!score_cell_written(e, r, b, sem.scores)) continue;
          const double want = e.score[e.at(h, r, b)], tau = e.tau[e.at(h, r, b)];
          const float raw = o.scores[static_cast<std::size_t>((h * o.R + r) * o.NB + b)];
          const double got = observed_in_oracle_units(raw, e.forced[e.at(h, r, b)], sem.score_units);
          const std::string where = fmt::format("scores[head {}, row {}, block {}]", h, r, b);
          // inf/NaN positions must match before any tolerance.
          if (std::isnan(want) || std::isnan(got) || std::isinf(want) || std::isinf(got)) {
            const bool same =
                (std::isnan(want) && std::isnan(got)) || (!std::isnan(want) && !std::isnan(got) && want == got);
            if (!same && !IXO_JUDGE_MUTANT(scores_nonfinite_lenient))
              fail(v, opt,
                   at("scores", h, r, b,
                      fmt::format("{}: expected {} observed {} (non-finite mismatch)", where, want, got)));
            continue;
          }
          if (e.forced[e.at(h, r, b)]) {
            if (got != want && !IXO_JUDGE_MUTANT(scores_forced_inexact))
              fail(v, opt,
                   at("scores", h, r, b,
                      fmt::format("{}: forced block must hold exactly {:.9g}, observed {:.9g}", where, want, got)));
            continue;
          }
          const double err = std::fabs(got - want);
          if (err > (IXO_JUDGE_MUTANT(scores_tolerance_doubled) ? 2 * tau : tau)) {
            Failure f = at("scores", h, r, b,
                           fmt::format("{}: expected {:.9g} +- {:.3g}, observed {:.9g} (error {:.3g})", where, want,
                                       tau, got, err));
            f.margin = err - tau, f.tau = tau;
            fail(v, opt, std::move(f));
          }
          if (tau > 0 && err / tau > worst) worst = err / tau, worst_at = where;
        }
      }
  }

  if (opt.check_poison && o.has_scores) {
    std::int64_t stray = 0, unwritten = 0;
    std::string first_stray, first_unwritten;
    for (std::int64_t h = 0; h < o.Hq; ++h)
      for (std::int64_t r = 0; r < o.R; ++r)
        for (std::int64_t b = 0; b < o.NB; ++b) {
          const bool poisoned =
              bits_of(o.scores[static_cast<std::size_t>((h * o.R + r) * o.NB + b)]) == opt.poison_bits;
          const bool written = b < e.NB && score_cell_written(e, r, b, sem.scores);
          if (!written && !poisoned && !IXO_JUDGE_MUTANT(poison_stray_unchecked) && stray++ == 0)
            first_stray = fmt::format("[head {}, row {}, block {}]", h, r, b);
          if (written && poisoned && unwritten++ == 0)
            first_unwritten = fmt::format("[head {}, row {}, block {}]", h, r, b);
        }
    if (stray)
      fail(v, opt,
           at("poison", -1, -1, -1,
              fmt::format("poison: {} score cells outside the written region were overwritten, first at {}", stray,
                          first_stray)));
    if (unwritten)
      fail(v, opt,
           at("poison", -1, -1, -1,
              fmt::format("poison: {} score cells inside the written region still hold the poison, first at {}",
                          unwritten, first_unwritten)));
  }
  return v;
}

Verdict compare_bitwise(const Observed& a, const Observed& b, int max_reports) {
  Verdict v;
  JudgeOptions opt;
  opt.max_reports = max_reports;
  if (a.Hq != b.Hq || a.R != b.R || a.topk != b.topk || a.has_scores != b.has_scores || a.NB != b.NB) {
    fail(v, opt,
         at("bitwise", -1, -1, -1,
            fmt::format("shapes differ: [{},{},{}] NB {} vs [{},{},{}] NB {}", a.Hq, a.R, a.topk, a.NB, b.Hq, b.R,
                        b.topk, b.NB)));
    return v;
  }
  for (std::int64_t h = 0; h < a.Hq; ++h)
    for (std::int64_t r = 0; r < a.R; ++r) {
      ++v.rows_checked;
      const auto x = row_ids(&a.topk_idx[(h * a.R + r) * a.topk], a.topk);
      const auto y = row_ids(&b.topk_idx[(h * b.R + r) * b.topk], b.topk);
      if (x != y) {
        Failure f = at("bitwise", h, r, -1, fmt::format("ids differ at head {} row {}: {} vs {}", h, r, x, y));
        f.expected = x, f.observed = y;
        fail(v, opt, std::move(f));
      }
    }
  if (a.has_scores)
    for (std::size_t i = 0; i < a.scores.size(); ++i)
      if (bits_of(a.scores[i]) != bits_of(b.scores[i])) {
        const std::int64_t hb = static_cast<std::int64_t>(i) / a.NB;
        fail(v, opt,
             at("bitwise", hb / a.R, hb % a.R, static_cast<std::int64_t>(i) % a.NB,
                fmt::format("score bits differ at [head {}, row {}, block {}]: {:#010x} ({:.9g}) vs {:#010x} ({:.9g})",
                            hb / a.R, hb % a.R, static_cast<std::int64_t>(i) % a.NB, bits_of(a.scores[i]), a.scores[i],
                            bits_of(b.scores[i]), b.scores[i])));
      }
  return v;
}

}  // namespace ixo
