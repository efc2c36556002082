// The fast oracle: the naive oracle's arithmetic, in the same order, restructured.
// Rows that read the same table row (a request's verify rows) share each decoded K
// block; dots are vectorised across the block's tokens with Eigen, each token's sum
// still running over d = 0..D-1, so every score is bitwise equal to the naive one.
// OpenMP runs over (request, block) work items; each cell has exactly one writer, so
// results do not depend on the thread count.
#include <Eigen/Core>
#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include "ixo/dtype.hpp"
#include "oracle_detail.hpp"

namespace ixo {

namespace {

using RowMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowVec = Eigen::Array<double, 1, Eigen::Dynamic>;

struct Request {
  std::int64_t sid;
  std::vector<std::int64_t> rows;  // query rows reading this table row
  std::int64_t nb_max = 0;
};

// Decodes K for tokens [t0, t1) of table row sid, kv head kvh, into kd (D x T, row-major).
void decode_block(const Case& c, std::int64_t sid, std::int64_t kvh, std::int64_t t0, std::int64_t t1,
                  const std::array<float, 256>* table, RowMat& kd) {
  const std::int64_t T = t1 - t0;
  kd.resize(c.D, T);
  for (std::int64_t j = 0; j < T; ++j) {
    std::int64_t slot = c.req_to_token[static_cast<std::size_t>(sid * c.width + t0 + j)];
    if (slot < 0) slot += c.S;
    const std::size_t base = static_cast<std::size_t>((slot * c.Hk + kvh) * c.D);
    if (table) {
      for (std::int64_t i = 0; i < c.D; ++i) kd(i, j) = (*table)[c.k_cache[base + i]];
    } else {
      const std::uint8_t* p = &c.k_cache[2 * base];
      for (std::int64_t i = 0; i < c.D; ++i)
        kd(i, j) = bf16_bits_to_float(static_cast<std::uint16_t>(p[2 * i] | (p[2 * i + 1] << 8)));
    }
  }
}

}  // namespace

Expected oracle(const Case& c) {
  validate(c);
  Expected e = detail::make_expected(c);
  const double scale = detail::logit_scale(c);
  const double abs_scale = std::fabs(scale);
  const std::int64_t bs = c.cfg.block_size;
  const bool lse = c.cfg.score_type == ScoreType::lse;
  const std::array<float, 256>* table = is_fp8(c.cfg.k_dtype) ? &fp8_table(c.cfg.k_dtype) : nullptr;
  const std::int64_t gqa = c.Hq / c.Hk;

  // Requests: active rows grouped by the table row they read.
  std::map<std::int64_t, Request> by_sid;
  for (std::int64_t r = 0; r < c.R; ++r) {
    const std::int64_t sid = table_row(c, r);
    if (sid < 0) continue;
    Request& q = by_sid[sid];
    q.sid = sid;
    q.rows.push_back(r);
    q.nb_max = std::max(q.nb_max, e.nb[r]);
  }
  std::vector<Request> reqs;
  for (auto& [sid, q] : by_sid) reqs.push_back(std::move(q));
  // Work items: (request, kv head, block).
  struct Item {
    std::int32_t req;
    std::int32_t kvh;
    std::int64_t block;
  };
  std::vector<Item> items;
  for (std::size_t i = 0; i < reqs.size(); ++i)
    for (std::int64_t kvh = 0; kvh < c.Hk; ++kvh)
      for (std::int64_t b = 0; b < reqs[i].nb_max; ++b)
        items.push_back({static_cast<std::int32_t>(i), static_cast<std::int32_t>(kvh), b});

  // Decoded queries, [R*Hq, D] in float64.
  RowMat qd(c.R * c.Hq, c.D);
  for (std::int64_t i = 0; i < c.R * c.Hq; ++i)
    for (std::int64_t d = 0; d < c.D; ++d) qd(i, d) = bf16_bits_to_float(c.q[static_cast<std::size_t>(i * c.D + d)]);

#pragma omp parallel
  {
    RowMat kd;
    RowVec dot, adot;
#pragma omp for schedule(dynamic, 16)
    for (std::int64_t it = 0; it < static_cast<std::int64_t>(items.size()); ++it) {
      const Request& q = reqs[items[it].req];
      const std::int64_t kvh = items[it].kvh, b = items[it].block;
      std::int64_t t_end = 0;  // tokens any row of the request sees in this block
      for (std::int64_t r : q.rows) t_end = std::max(t_end, std::min((b + 1) * bs, c.seq_lens[r]));
      const std::int64_t t0 = b * bs;
      decode_block(c, q.sid, kvh, t0, t_end, table, kd);
      const std::int64_t T = t_end - t0;
      for (std::int64_t r : q.rows) {
        if (b >= e.nb[r]) continue;
        const std::int64_t n = std::min((b + 1) * bs, c.seq_lens[r]) - t0;  // this row's visible tokens
        for (std::int64_t h = kvh * gqa; h < (kvh + 1) * gqa; ++h) {
          const auto qrow = qd.row(r * c.Hq + h);
          dot.setZero(T);
          adot.setZero(T);
          for (std::int64_t d = 0; d < c.D; ++d) {  // each token's sum runs over d in order
            const auto krow = kd.row(d).array();
            dot += qrow(d) * krow;
            adot += std::fabs(qrow(d)) * krow.abs();
          }
          double m = -std::numeric_limits<double>::infinity(), tau = 0;
          bool nan = false;
          for (std::int64_t j = 0; j < n; ++j) {
            const double s = dot(j) * scale;
            nan |= std::isnan(s);
            m = std::max(m, s);
            tau = std::max(tau, detail::logit_tau(adot(j), abs_scale, c.D));
          }
          double S = m;
          if (lse && std::isfinite(m)) {
            double sum = 0;
            for (std::int64_t j = 0; j < n; ++j) sum += std::exp2(dot(j) * scale - m);
            S = m + std::log2(sum);
            tau += detail::lse_tau_extra(n, S);
          }
          if (nan) S = std::numeric_limits<double>::quiet_NaN();
          e.score[e.at(h, r, b)] = S;
          e.tau[e.at(h, r, b)] = tau;
        }
      }
    }
  }
  detail::finish_expected(c, e);
  return e;
}

}  // namespace ixo
