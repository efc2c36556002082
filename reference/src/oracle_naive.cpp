// The naive oracle: one loop per (head, row, block, token, dim), float64 throughout.
#include <cmath>
#include <limits>
#include <vector>

#include "ixo/dtype.hpp"
#include "oracle_detail.hpp"

namespace ixo {

namespace detail {

Expected make_expected(const Case& c) {
  Expected e;
  e.Hq = c.Hq;
  e.R = c.R;
  e.NB = c.NB();
  e.topk = c.cfg.topk;
  e.nb.resize(c.R);
  for (std::int64_t r = 0; r < c.R; ++r) e.nb[r] = row_blocks(c, r);
  const std::size_t cells = static_cast<std::size_t>(c.Hq * c.R * e.NB);
  e.score.assign(cells, -std::numeric_limits<double>::infinity());
  e.tau.assign(cells, 0.0);
  e.forced.assign(cells, 0);
  e.topk_idx.assign(static_cast<std::size_t>(c.Hq * c.R * c.cfg.topk), -1);
  return e;
}

void finish_expected(const Case& c, Expected& e) {
  for (std::int64_t h = 0; h < c.Hq; ++h)
    for (std::int64_t r = 0; r < c.R; ++r) {
      apply_forcing(c, e, h, r);
      select_topk(&e.score[e.at(h, r, 0)], e.nb[r], c.cfg.topk, &e.topk_idx[(h * c.R + r) * c.cfg.topk]);
    }
}

}  // namespace detail

double forced_init_value() { return static_cast<double>(1e30f); }
double forced_local_value() { return static_cast<double>(1e29f); }

namespace {

// Exact value of K element (slot, head, i).
double k_value(const Case& c, std::int64_t slot, std::int64_t kvh, std::int64_t i) {
  const std::size_t idx = static_cast<std::size_t>((slot * c.Hk + kvh) * c.D + i);
  if (c.cfg.k_dtype == KDtype::bf16) {
    const std::uint16_t bits = static_cast<std::uint16_t>(c.k_view()[2 * idx] | (c.k_view()[2 * idx + 1] << 8));
    return bf16_bits_to_float(bits);
  }
  if (is_nvfp4(c.cfg.k_dtype)) {  // packed E2M1 codes, one e4m3fn scale per 16 elements
    const std::uint8_t* row = c.k_view().data() + static_cast<std::size_t>((slot * c.Hk + kvh) * (c.D / 2));
    const std::uint8_t scale =
        c.k_scales[static_cast<std::size_t>((slot * c.Hk + kvh) * (c.D / kNvfp4Block) + i / kNvfp4Block)];
    return nvfp4_to_float(nvfp4_nibble(row, i), scale);
  }
  return fp8_to_float(c.k_view()[idx], c.cfg.k_dtype);
}

}  // namespace

Expected oracle_naive(const Case& c) {
  validate(c);
  Expected e = detail::make_expected(c);
  const double scale = detail::logit_scale(c);
  const std::int64_t bs = c.cfg.block_size;
  const bool lse = c.cfg.score_type == ScoreType::lse;
  for (std::int64_t h = 0; h < c.Hq; ++h) {
    const std::int64_t kvh = h / (c.Hq / c.Hk);
    for (std::int64_t r = 0; r < c.R; ++r) {
      const std::int64_t sid = table_row(c, r);
      const std::int64_t L = c.seq_lens[r];
      const std::uint16_t* q = &c.q[static_cast<std::size_t>((r * c.Hq + h) * c.D)];
      for (std::int64_t b = 0; b < e.nb[r]; ++b) {
        std::vector<double> logits, taus;
        for (std::int64_t t = b * bs; t < std::min((b + 1) * bs, L); ++t) {
          std::int64_t slot = c.req_to_token[static_cast<std::size_t>(sid * c.width + t)];
          if (slot < 0) slot += c.S;
          double dot[detail::kLanes] = {}, qq[detail::kLanes] = {}, kk[detail::kLanes] = {};
          for (std::int64_t i = 0; i < c.D; ++i) {
            const double qi = q_to_float(q[i], c.cfg.q_dtype);
            const double ki = k_value(c, slot, kvh, i);
            dot[i % detail::kLanes] += qi * ki;
            qq[i % detail::kLanes] += qi * qi;
            kk[i % detail::kLanes] += ki * ki;
          }
          logits.push_back(detail::lane_sum(dot) * scale);
          // sum |q_i k_i| <= |q| |k| (Cauchy-Schwarz) bounds the accumulation error.
          taus.push_back(detail::logit_tau(std::sqrt(detail::lane_sum(qq)) * std::sqrt(detail::lane_sum(kk)),
                                           std::fabs(scale), c.D));
        }
        // Block score: max, or log2-sum-exp, over the row's own visible tokens.
        const auto bsc = detail::block_score(logits.data(), taus.data(), logits.size(), lse);
        e.score[e.at(h, r, b)] = bsc.score;
        e.tau[e.at(h, r, b)] = bsc.tau;
      }
    }
  }
  detail::finish_expected(c, e);
  return e;
}

}  // namespace ixo
