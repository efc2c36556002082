// The fast oracle: the naive oracle's arithmetic, in the same order, restructured.
// Rows that read the same table row (a request's verify rows) share each decoded K
// token; a token is decoded once to float64 and every (row, head) of the request takes
// its dot in the oracle's fixed lane order (oracle_detail.hpp), so each score is
// bitwise equal to the naive one. OpenMP runs over (request, kv head, block) work
// items; each cell has exactly one writer, so results do not depend on thread count.
#include <Eigen/Core>
#include <cmath>
#include <bit>
#include <cstring>
#include <limits>
#include <map>
#include <vector>

#include "ixo/dtype.hpp"
#include "oracle_detail.hpp"

namespace ixo {

namespace {

using Lanes = Eigen::Array<double, detail::kLanes, 1>;
constexpr int kPrefetchTokens = 16;  // token slots are scattered: ask for K this far ahead

struct Request {
  std::int64_t sid = -1;
  std::vector<std::int64_t> rows;  // query rows reading this table row
  std::int64_t nb_max = 0;
};

struct Item {
  std::int32_t req;
  std::int32_t kvh;
  std::int64_t block;
};

std::int64_t padded(std::int64_t D) { return (D + detail::kLanes - 1) / detail::kLanes * detail::kLanes; }

// Lane-ordered sum of a[i] * b[i] over a padded vector.
double lane_dot(const double* a, const double* b, std::int64_t Dp) {
  Lanes acc = Lanes::Zero();
  for (std::int64_t i = 0; i < Dp; i += detail::kLanes) acc += Lanes::Map(a + i) * Lanes::Map(b + i);
  return detail::lane_sum(acc.data());
}

// N lane-ordered dots against the same key, accumulated together.
template <int N>
void lane_dots(const double* const* a, const double* b, std::int64_t Dp, double* out) {
  Lanes acc[N];
  for (int j = 0; j < N; ++j) acc[j].setZero();
  for (std::int64_t i = 0; i < Dp; i += detail::kLanes) {
    const auto kv = Lanes::Map(b + i);
    for (int j = 0; j < N; ++j) acc[j] += Lanes::Map(a[j] + i) * kv;
  }
  for (int j = 0; j < N; ++j) out[j] = detail::lane_sum(acc[j].data());
}

const std::uint8_t* k_row(const Case& c, std::int64_t sid, std::int64_t kvh, std::int64_t t) {
  std::int64_t slot = c.req_to_token[static_cast<std::size_t>(sid * c.width + t)];
  if (slot < 0) slot += c.S;
  return &c.k_cache[static_cast<std::size_t>((slot * c.Hk + kvh) * c.D * element_bytes(c.cfg.k_dtype))];
}

// Decodes one K row into out[0, D): fp8 through its table; bf16 as the upper half of a
// float, which test_decode proves equal to Eigen::bfloat16 on all 65536 codes (this form
// vectorises).
void decode_row(const Case& c, const std::uint8_t* p, const std::array<float, 256>* table, double* out) {
  if (table) {
    for (std::int64_t d = 0; d < c.D; ++d) out[d] = (*table)[p[d]];
  } else {
    for (std::int64_t d = 0; d < c.D; ++d) {
      const std::uint32_t u = static_cast<std::uint32_t>(p[2 * d] | (p[2 * d + 1] << 8)) << 16;
      out[d] = std::bit_cast<float>(u);
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
  const std::int64_t Dp = padded(c.D);
  const std::size_t row_bytes = static_cast<std::size_t>(c.D * element_bytes(c.cfg.k_dtype));

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
  for (auto& kv : by_sid) reqs.push_back(std::move(kv.second));
  std::vector<Item> items;
  for (std::size_t i = 0; i < reqs.size(); ++i)
    for (std::int64_t kvh = 0; kvh < c.Hk; ++kvh)
      for (std::int64_t b = 0; b < reqs[i].nb_max; ++b)
        items.push_back({static_cast<std::int32_t>(i), static_cast<std::int32_t>(kvh), b});

  // Decoded queries [R*Hq][Dp] (zero padded) and their norms.
  std::vector<double> qd(static_cast<std::size_t>(c.R * c.Hq * Dp), 0.0);
  std::vector<double> qnorm(static_cast<std::size_t>(c.R * c.Hq));
  for (std::int64_t i = 0; i < c.R * c.Hq; ++i) {
    double* q = &qd[static_cast<std::size_t>(i * Dp)];
    for (std::int64_t d = 0; d < c.D; ++d) q[d] = bf16_bits_to_float(c.q[static_cast<std::size_t>(i * c.D + d)]);
    qnorm[static_cast<std::size_t>(i)] = std::sqrt(lane_dot(q, q, Dp));
  }

#pragma omp parallel
  {
    std::vector<double> kd(static_cast<std::size_t>(Dp), 0.0);
    std::vector<double> logits, taus;  // [participant][token in block]
    std::vector<std::int64_t> part;    // participants: row * Hq + head
    std::vector<const double*> qptr;  // per participant, then the key itself (its norm)
    std::vector<double> dots;
#pragma omp for schedule(dynamic, 8)
    for (std::int64_t it = 0; it < static_cast<std::int64_t>(items.size()); ++it) {
      const Item& item = items[static_cast<std::size_t>(it)];
      const Request& q = reqs[static_cast<std::size_t>(item.req)];
      const std::int64_t kvh = item.kvh, b = item.block;
      const std::int64_t t0 = b * bs;
      std::int64_t t_end = t0;  // tokens any row of the request sees in this block
      part.clear();
      for (std::int64_t r : q.rows) {
        if (b >= e.nb[r]) continue;
        t_end = std::max(t_end, std::min((b + 1) * bs, c.seq_lens[r]));
        for (std::int64_t h = kvh * gqa; h < (kvh + 1) * gqa; ++h) part.push_back(r * c.Hq + h);
      }
      const std::size_t P = part.size(), T = static_cast<std::size_t>(t_end - t0);
      logits.resize(P * T);
      taus.resize(P * T);
      qptr.resize(P + 1);
      dots.resize(P + 1);
      for (std::int64_t t = t0; t < t_end; ++t) {
        if (t + kPrefetchTokens < t_end) {
          const std::uint8_t* ahead = k_row(c, q.sid, kvh, t + kPrefetchTokens);
          for (std::size_t off = 0; off < row_bytes; off += 64) __builtin_prefetch(ahead + off);
        }
        decode_row(c, k_row(c, q.sid, kvh, t), table, kd.data());
        // All dots of this token (the key's own norm is the last one), four chains at a
        // time in registers so they overlap; each keeps the oracle's lane order.
        for (std::size_t p = 0; p < P; ++p) qptr[p] = &qd[static_cast<std::size_t>(part[p] * Dp)];
        qptr[P] = kd.data();
        for (std::size_t p = 0; p <= P; p += 4) {
          switch (std::min<std::size_t>(4, P + 1 - p)) {
            case 1: lane_dots<1>(&qptr[p], kd.data(), Dp, &dots[p]); break;
            case 2: lane_dots<2>(&qptr[p], kd.data(), Dp, &dots[p]); break;
            case 3: lane_dots<3>(&qptr[p], kd.data(), Dp, &dots[p]); break;
            default: lane_dots<4>(&qptr[p], kd.data(), Dp, &dots[p]); break;
          }
        }
        const double knorm = std::sqrt(dots[P]);
        for (std::size_t p = 0; p < P; ++p) {
          const std::size_t o = p * T + static_cast<std::size_t>(t - t0);
          logits[o] = dots[p] * scale;
          taus[o] = detail::logit_tau(qnorm[static_cast<std::size_t>(part[p])] * knorm, abs_scale, c.D);
        }
      }
      // Block score per participant over its own visible tokens.
      for (std::size_t p = 0; p < P; ++p) {
        const std::int64_t r = part[p] / c.Hq, h = part[p] % c.Hq;
        const std::size_t n = static_cast<std::size_t>(std::min((b + 1) * bs, c.seq_lens[r]) - t0);
        const auto bsc = detail::block_score(&logits[p * T], &taus[p * T], n, lse);
        e.score[e.at(h, r, b)] = bsc.score;
        e.tau[e.at(h, r, b)] = bsc.tau;
      }
    }
  }
  detail::finish_expected(c, e);
  return e;
}

}  // namespace ixo
