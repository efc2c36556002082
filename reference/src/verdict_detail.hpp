// Helpers the verdict's translation units share (verdict.cpp, verdict_ranked.cpp).
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "ixo/verdict.hpp"
#include "ixo/judge_mutants.hpp"

namespace ixo::verdict_detail {

// Ranking value under the contract's NaN rule (unspecified: callers leave NaN blocks out).
inline double rank_value(double s, NanRank nan = NanRank::lowest) {
  if (!std::isnan(s)) return s;
  return (nan == NanRank::highest) != IXO_JUDGE_MUTANT(nan_rank_reversed) ? std::numeric_limits<double>::infinity()
                                                                          : -std::numeric_limits<double>::infinity();
}

inline void fail(Verdict& v, const JudgeOptions& opt, Failure f) {
  v.pass = false;
  ++v.failures;
  if (static_cast<int>(v.reports.size()) < opt.max_reports) {
    v.reports.push_back(f.message);
    v.details.push_back(std::move(f));
  }
}

inline Failure at(std::string tier, std::int64_t h, std::int64_t r, std::int64_t b, std::string msg) {
  Failure f;
  f.tier = std::move(tier);
  f.head = h, f.row = r, f.block = b;
  f.message = std::move(msg);
  return f;
}

inline std::vector<std::int32_t> row_ids(const std::int32_t* p, std::int64_t n) { return {p, p + n}; }

// Tau of block b as the ids tiers use it. Non-finite scores or bounds never widen what is
// accepted: such a block is judged exactly (slack 0), so +inf - inf never becomes a NaN that
// drops out of the comparison.
inline double block_slack(const double* S, const double* T, std::int32_t b) {
  return std::isfinite(S[b]) && std::isfinite(T[b]) ? T[b] : 0.0;
}

// A row's facts the tiers share.
struct RowView {
  std::int64_t h = 0, r = 0, nb = 0, K = 0;
  std::vector<std::int32_t> ids, want;  // observed and oracle ids of the row
  const double* S = nullptr;            // oracle scores [nb]
  const double* T = nullptr;            // tau [nb]
  std::string where;                    // "head h row r (L=.., nb=..)"
  double slack(std::int32_t b) const { return block_slack(S, T, b); }
};

// Rows with nb > topk judged under IdOrder::ranked_forced_last or Selection::quantized16
// (verdict_ranked.cpp): structure, the set within tau plus the quantized slack, the order,
// forced ties, and the selector replayed on the kernel's own scores.
void judge_ranked_row(const Expected& e, const Observed& o, const JudgeOptions& opt, const RowView& row, Verdict& v);

// Whether the forced ties rule holds (ForcedTies::lowest_id), reporting when it does not.
bool forced_ties_ok(const std::vector<std::int32_t>& ids, std::int64_t k_eff, std::int64_t nb, const double* S,
                    const Expected& e, std::int64_t h, std::int64_t r, const std::string& where, Verdict& v,
                    const JudgeOptions& opt);

}  // namespace ixo::verdict_detail
