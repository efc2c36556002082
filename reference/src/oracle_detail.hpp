// Pieces the naive and the fast oracle share: the exact logit scale, the error bounds,
// the block reductions and the forcing rule. See docs/error-bounds.md for tau.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>

#include "ixo/case.hpp"
#include "ixo/judge_mutants.hpp"
#include "ixo/oracle.hpp"

namespace ixo::detail {

constexpr double kU = 0x1p-24;  // fp32 unit roundoff

// Exact (float64) logit multiplier: sm_scale * q_scale * log2(e) * k_scale.
inline double logit_scale(const Case& c) {
  return c.effective_sm_scale() * c.cfg.q_scale * std::numbers::log2e * c.cfg.k_scale;
}

// gamma_n with a doubled unit roundoff (allows truncating tensor-core accumulation).
inline double gamma2(std::int64_t n) {
  const double nu = static_cast<double>(n) * 2 * kU;
  return nu / (1 - nu);
}

// Bound on |fp32 kernel logit - exact logit| for one token, given a bound on sum |q_i k_i|:
// abs_scale * (abs_dot * rel + abs), with rel and abs depending on D only (TauTerms).
struct TauTerms {
  double rel, abs;
  explicit TauTerms(std::int64_t D)
      : rel((gamma2(D) + 10 * kU) * (IXO_JUDGE_MUTANT(tau_rel_halved) ? 0.5 : 1.0)),
        abs(IXO_JUDGE_MUTANT(tau_abs_dropped) ? 0.0 : static_cast<double>(D) * 0x1p-149) {}
  // T is double, or a SIMD vector of several tokens' bounds (the fast oracle).
  template <class T>
  T tau(T abs_dot, double abs_scale) const {
    return abs_scale * (abs_dot * rel + abs);
  }
};
inline double logit_tau(double abs_dot, double abs_scale, std::int64_t D) {
  return TauTerms(D).tau(abs_dot, abs_scale);
}

// Extra bound for a log2-sum-exp block score over n tokens computed in fp32 with
// approximate exp2/log2 (relative 2^-21 each), on top of the largest logit bound.
inline double lse_tau_extra(std::int64_t n, double S) {
  const double nu = static_cast<double>(n) * kU;
  const double sum_rel = 0x1p-20 + 2 * (nu / (1 - nu)) + 4 * kU;
  return sum_rel / std::numbers::ln2 + 0x1p-20 + 2 * kU * std::fabs(S);
}

// The oracle's float64 dot order (both versions): D products in 8 interleaved partial
// sums (lane d % 8, d increasing), then combined pairwise. Any order is far inside the
// fp32 kernel's error bound; fixing one makes naive and fast bitwise equal.
constexpr int kLanes = 8;
// T is double, or a SIMD vector holding one lane of several dots (the fast oracle).
template <class T>
inline T lane_sum(const T* a) {
  return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
}

// Block score over the n visible logits of one (head, row, block), and its bound: the
// max, or log2-sum-exp (in token order); NaN if any logit is NaN.
struct BlockScore {
  double score, tau;
};
inline BlockScore block_score(const double* logits, const double* taus, std::size_t n, bool lse) {
  double m = -std::numeric_limits<double>::infinity(), tau = 0;
  bool nan = false;
  for (std::size_t j = 0; j < n; ++j) {
    nan |= std::isnan(logits[j]);
    m = std::max(m, logits[j]);
    tau = std::max(tau, taus[j]);
  }
  double S = m;
  if (lse && std::isfinite(m)) {
    double sum = 0;
    for (std::size_t j = 0; j < n; ++j) sum += std::exp2(logits[j] - m);
    S = m + std::log2(sum);
    if (!IXO_JUDGE_MUTANT(lse_tau_extra_dropped)) tau += lse_tau_extra(static_cast<std::int64_t>(n), S);
  }
  if (nan && !IXO_JUDGE_MUTANT(block_nan_dropped)) S = std::numeric_limits<double>::quiet_NaN();
  return {S, tau};
}

inline void apply_forcing(const Case& c, Expected& e, std::int64_t h, std::int64_t r) {
  const std::int64_t nb = e.nb[r];
  const std::int64_t local_start =
      std::max<std::int64_t>(0, nb - c.cfg.local_blocks + (IXO_JUDGE_MUTANT(local_window_short) ? 1 : 0));
  for (std::int64_t b = 0; b < nb; ++b) {
    double v;
    if (b >= local_start)
      v = forced_local_value();
    else if (b < c.cfg.init_blocks)
      v = forced_init_value();
    else
      continue;
    e.score[e.at(h, r, b)] = v;
    e.tau[e.at(h, r, b)] = 0;
    e.forced[e.at(h, r, b)] = 1;
  }
}

// Allocates an Expected with nb per row and -inf / zero cells.
Expected make_expected(const Case& c);
// Forcing and selection once every block score is in place.
void finish_expected(const Case& c, Expected& e);

}  // namespace ixo::detail
