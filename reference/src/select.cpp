#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "ixo/oracle.hpp"

namespace ixo {

void select_topk(const double* scores, std::int64_t nb, std::int64_t topk, std::int32_t* out) {
  std::fill(out, out + topk, -1);
  if (nb <= 0) return;
  if (nb <= topk) {  // every block is selected; scores are not consulted
    for (std::int64_t b = 0; b < nb; ++b) out[b] = static_cast<std::int32_t>(b);
    return;
  }
  // Rank: higher score first, NaN lowest, equal scores by lower id.
  auto above = [&](std::int32_t a, std::int32_t b) {
    const double sa = scores[a], sb = scores[b];
    const bool na = std::isnan(sa), nb_ = std::isnan(sb);
    if (na != nb_) return nb_;
    if (!na && sa != sb) return sa > sb;
    return a < b;
  };
  std::vector<std::int32_t> ids(static_cast<std::size_t>(nb));
  std::iota(ids.begin(), ids.end(), 0);
  std::partial_sort(ids.begin(), ids.begin() + topk, ids.end(), above);
  std::sort(ids.begin(), ids.begin() + topk);
  std::copy(ids.begin(), ids.begin() + topk, out);
}

Observed expected_as_observed(const Expected& e) {
  Observed o;
  o.Hq = e.Hq;
  o.R = e.R;
  o.topk = e.topk;
  o.topk_idx = e.topk_idx;
  o.has_scores = true;
  o.NB = e.NB;
  o.scores.resize(e.score.size());
  for (std::size_t i = 0; i < e.score.size(); ++i) o.scores[i] = static_cast<float>(e.score[i]);
  return o;
}

}  // namespace ixo
