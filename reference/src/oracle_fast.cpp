// The fast oracle: the naive oracle's arithmetic, in the same order, restructured.
//
// Work items are (request, kv head, block); OpenMP runs over them and each score cell has
// exactly one writer, so results do not depend on the thread count. A request is every
// active row reading one table row (its draft rows); each K tile of kTile tokens is
// decoded once, transposed (kt[d] holds element d of the tile's kTile tokens) and then
// scored against every participant (draft row x query head of the kv group) of the
// request that sees the block. The dots keep the oracle's fixed order
// (oracle_detail.hpp): lane l = d % 8 accumulates d = l, l + 8, ... in increasing d, then
// lane_sum combines the lanes pairwise. Vectorising across the tile's tokens instead of
// across d means every SIMD lane runs exactly the naive scalar sequence for one token:
// no horizontal sums, no reassociation, bitwise equal to the naive oracle.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <vector>

// Without AVX-512 (IXO_NATIVE=OFF, other CPUs) GCC notes that passing a 64-byte vector
// by value has another ABI there; every such function here (and the oracle_detail.hpp
// templates instantiated with it) is used inside this file only.
#pragma GCC diagnostic ignored "-Wpsabi"

#include "ixo/dtype.hpp"
#include "oracle_detail.hpp"

namespace ixo {

namespace {

constexpr int kTile = 8;  // tokens per SIMD vector (one AVX-512 register of float64)
using Vec = double __attribute__((vector_size(kTile * sizeof(double))));
using F8 = float __attribute__((vector_size(kTile * sizeof(float))));
constexpr int kPrefetch = 16;  // tokens

// Participants scored per pass over a K tile: each holds kLanes accumulators, so 3 fill
// 24 of AVX-512's 32 registers; without AVX-512 a Vec is two registers.
#ifdef __AVX512F__
constexpr int kGroup = 3;
#else
constexpr int kGroup = 1;
#endif

struct Request {
  std::int64_t sid = -1;
  std::vector<std::int64_t> rows;  // query rows reading this table row
  std::int64_t nb_max = 0;
  std::int64_t tokens = 0;  // tokens the longest row sees
};

struct Item {
  std::int32_t req;
  std::int32_t kvh;
  std::int64_t block;
};

std::int64_t padded(std::int64_t D) { return (D + detail::kLanes - 1) / detail::kLanes * detail::kLanes; }

// Lane-ordered sum of a[i] * b[i] over a padded vector (the query norms).
double lane_dot(const double* a, const double* b, std::int64_t Dp) {
  double acc[detail::kLanes] = {};
  for (std::int64_t i = 0; i < Dp; i += detail::kLanes)
    for (int l = 0; l < detail::kLanes; ++l) acc[l] += a[i + l] * b[i + l];
  return detail::lane_sum(acc);
}

// G dots of broadcast queries q[j] against the tile's kTile keys kt[0, Dp), in lane order;
// with Norm, also the keys' squared norms (out[G]).
template <int G, bool Norm>
void tile_dots(const double* const* q, const Vec* kt, std::int64_t Dp, Vec* out) {
  constexpr int N = G + (Norm ? 1 : 0);
  Vec acc[N][detail::kLanes] = {};
  for (std::int64_t d = 0; d < Dp; d += detail::kLanes)
    for (int l = 0; l < detail::kLanes; ++l) {
      const Vec k = kt[d + l];
      for (int j = 0; j < G; ++j) acc[j][l] += q[j][d + l] * k;
      if constexpr (Norm) acc[G][l] += k * k;
    }
  for (int j = 0; j < N; ++j) out[j] = detail::lane_sum(acc[j]);
}

// g <= kGroup participants (Norm: g <= kGroup - 1, plus the norms) in one pass.
template <bool Norm>
void group_dots(std::size_t g, const double* const* q, const Vec* kt, std::int64_t Dp, Vec* out) {
  static_assert(kGroup <= 3);
  if (g == 0) {
    if constexpr (Norm) tile_dots<0, true>(q, kt, Dp, out);
  } else if (g == 1) {
    tile_dots<1, Norm>(q, kt, Dp, out);
  } else if (g == 2) {
    tile_dots<2, Norm>(q, kt, Dp, out);
  } else {
    tile_dots<3, Norm>(q, kt, Dp, out);
  }
}

const std::uint8_t* k_row(const Case& c, const std::uint8_t* k, std::int64_t sid, std::int64_t kvh, std::int64_t t) {
  std::int64_t slot = c.req_to_token[static_cast<std::size_t>(sid * c.width + t)];
  if (slot < 0) slot += c.S;
  return k + static_cast<std::size_t>((slot * c.Hk + kvh) * k_row_bytes(c.cfg.k_dtype, c.D));
}

// The e4m3fn scales of the K row of token t (nvfp4 only).
const std::uint8_t* k_scale_row(const Case& c, std::int64_t sid, std::int64_t kvh, std::int64_t t) {
  std::int64_t slot = c.req_to_token[static_cast<std::size_t>(sid * c.width + t)];
  if (slot < 0) slot += c.S;
  return c.k_scales.data() + static_cast<std::size_t>((slot * c.Hk + kvh) * (c.D / kNvfp4Block));
}

// Every cache line of [p, p + n): rows need not be line-aligned (a vector's heap block
// starts 16 bytes into a page), and a missed fifth line costs a full memory latency.
void prefetch_row(const std::uint8_t* p, std::size_t n) {
  const std::uintptr_t first = reinterpret_cast<std::uintptr_t>(p) & ~std::uintptr_t{63};
  const std::uintptr_t last = reinterpret_cast<std::uintptr_t>(p) + n - 1;
  for (std::uintptr_t a = first; a <= last; a += 64) __builtin_prefetch(reinterpret_cast<const void*>(a));
}

// Decodes one K row into floats out[0, D): fp8 through its table; nvfp4 (scales given)
// through nvfp4_table; bf16 as the upper half of a float, which test_decode proves equal to
// Eigen::bfloat16 on all 65536 codes.
void decode_row(const std::uint8_t* p, std::int64_t D, const std::array<float, 256>* table, const std::uint8_t* scales,
                float* out) {
  if (scales) {
    const auto& t = nvfp4_table();
    for (std::int64_t d = 0; d < D; ++d) out[d] = t[nvfp4_nibble(p, d) * 256u + scales[d / kNvfp4Block]];
  } else if (table) {
    for (std::int64_t d = 0; d < D; ++d) out[d] = (*table)[p[d]];
  } else {
    for (std::int64_t d = 0; d < D; ++d) {
      std::uint16_t bits;
      std::memcpy(&bits, p + 2 * d, 2);
      out[d] = std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
    }
  }
}

// rows[j][0, Dp) (token j of the tile, floats) -> kt[d] (element d of every token), 8x8
// blocks transposed in registers. Exact: float -> double widening and data movement only.
// The shuffle stages index std::arrays through at(): every index is a constant once the
// loops unroll, so the checks fold away, and a wrong loop bound throws instead of writing
// past the stack (operator mutant reference #25 of docs/mutation.md).
void transpose_tile(const float* rows, std::int64_t Dp, Vec* kt) {
  static_assert(kTile == 8 && detail::kLanes == 8);
  for (std::int64_t d = 0; d < Dp; d += 8) {
    std::array<Vec, 8> r;
    for (int j = 0; j < 8; ++j) {
      F8 f;
      std::memcpy(&f, rows + j * Dp + d, sizeof f);
      r.at(j) = __builtin_convertvector(f, Vec);
    }
    std::array<Vec, 8> a;  // pairs of tokens, even / odd dims
    for (int j = 0; j < 4; ++j) {
      a.at(j) = __builtin_shufflevector(r.at(2 * j), r.at(2 * j + 1), 0, 8, 2, 10, 4, 12, 6, 14);
      a.at(4 + j) = __builtin_shufflevector(r.at(2 * j), r.at(2 * j + 1), 1, 9, 3, 11, 5, 13, 7, 15);
    }
    std::array<Vec, 8> b;  // quads of tokens: dims {0,4}, {2,6} (from even) and {1,5}, {3,7} (from odd)
    for (int h = 0; h < 2; ++h)
      for (int k = 0; k < 2; ++k) {
        const Vec& x = a.at(4 * k + 2 * h);
        const Vec& y = a.at(4 * k + 2 * h + 1);
        b.at(4 * k + h) = __builtin_shufflevector(x, y, 0, 1, 8, 9, 4, 5, 12, 13);
        b.at(4 * k + 2 + h) = __builtin_shufflevector(x, y, 2, 3, 10, 11, 6, 7, 14, 15);
      }
    // b[4k + 2m + h]: tokens 4h..4h+3 of dims (2m + k) and (2m + k + 4).
    for (int k = 0; k < 2; ++k)
      for (int m = 0; m < 2; ++m) {
        const Vec& lo = b.at(4 * k + 2 * m);
        const Vec& hi = b.at(4 * k + 2 * m + 1);
        kt[d + 2 * m + k] = __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 8, 9, 10, 11);
        kt[d + 2 * m + k + 4] = __builtin_shufflevector(lo, hi, 4, 5, 6, 7, 12, 13, 14, 15);
      }
  }
}

// Requests: active rows grouped by the table row they read.
std::vector<Request> group_requests(const Case& c, const Expected& e) {
  std::map<std::int64_t, Request> by_sid;
  for (std::int64_t r = 0; r < c.R; ++r) {
    const std::int64_t sid = table_row(c, r);
    if (sid < 0) continue;
    Request& q = by_sid[sid];
    q.sid = sid;
    q.rows.push_back(r);
    q.nb_max = std::max(q.nb_max, e.nb[r]);
    q.tokens = std::max(q.tokens, c.seq_lens[r]);
  }
  std::vector<Request> reqs;
  for (auto& kv : by_sid) reqs.push_back(std::move(kv.second));
  return reqs;
}

}  // namespace

Expected oracle(const Case& c) {
  validate(c);
  Expected e = detail::make_expected(c);
  const double scale = detail::logit_scale(c);
  const double abs_scale = std::fabs(scale);
  const detail::TauTerms tau_terms(c.D);
  const std::int64_t bs = c.cfg.block_size;
  const bool lse = c.cfg.score_type == ScoreType::lse;
  const std::array<float, 256>* table = is_fp8(c.cfg.k_dtype) ? &fp8_table(c.cfg.k_dtype) : nullptr;
  const std::int64_t gqa = c.Hq / c.Hk;
  const std::int64_t Dp = padded(c.D);
  const std::uint8_t* kbase = c.k_view().data();
  const std::size_t row_bytes = static_cast<std::size_t>(k_row_bytes(c.cfg.k_dtype, c.D));
  const bool fp4 = is_nvfp4(c.cfg.k_dtype);

  const std::vector<Request> reqs = group_requests(c, e);
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
    for (std::int64_t d = 0; d < c.D; ++d) q[d] = q_to_float(c.q[static_cast<std::size_t>(i * c.D + d)], c.cfg.q_dtype);
    qnorm[static_cast<std::size_t>(i)] = std::sqrt(lane_dot(q, q, Dp));
  }

#pragma omp parallel
  {
    std::vector<float> rows(static_cast<std::size_t>(kTile * Dp), 0.0f);  // the tile's decoded rows (pad dims stay 0)
    std::vector<Vec> kt(static_cast<std::size_t>(Dp));                    // the tile, transposed
    std::vector<double> logits, taus;                                     // [participant][token in block]
    std::vector<std::int64_t> part;                                       // participants: row * Hq + head
    std::vector<const double*> qptr;
    std::vector<Vec> dots;
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
      const std::size_t Tp = (T + kTile - 1) / kTile * kTile;
      logits.resize(P * Tp);
      taus.resize(P * Tp);
      qptr.resize(P);
      dots.resize(P + kGroup);
      for (std::size_t p = 0; p < P; ++p) qptr[p] = &qd[static_cast<std::size_t>(part[p] * Dp)];
      for (std::int64_t ta = t0; ta < t_end; ta += kTile) {
        for (int j = 0; j < kTile; ++j) {
          // Slots are scattered: ask for K kPrefetch tokens ahead, into the next blocks of
          // the request (usually this thread's next items).
          if (ta + j + kPrefetch < q.tokens) {
            const std::uint8_t* ahead = k_row(c, kbase, q.sid, kvh, ta + j + kPrefetch);
            prefetch_row(ahead, row_bytes);
          }
          float* row = &rows[static_cast<std::size_t>(j * Dp)];
          if (ta + j < t_end)
            decode_row(k_row(c, kbase, q.sid, kvh, ta + j), c.D, table,
                       fp4 ? k_scale_row(c, q.sid, kvh, ta + j) : nullptr, row);
          else
            std::fill(row, row + c.D, 0.0f);  // past the block: scored, never read
        }
        transpose_tile(rows.data(), Dp, kt.data());
        // The first pass also takes the keys' squared norms (dots[P]).
        const std::size_t g0 = std::min<std::size_t>(kGroup - 1, P);
        group_dots<true>(g0, qptr.data(), kt.data(), Dp, dots.data());
        dots[P] = dots[g0];
        for (std::size_t p = g0; p < P; p += kGroup)
          group_dots<false>(std::min<std::size_t>(kGroup, P - p), &qptr[p], kt.data(), Dp, &dots[p]);
        Vec knorm = dots[P];
        for (int j = 0; j < kTile; ++j) knorm[j] = std::sqrt(knorm[j]);
        const std::size_t o = static_cast<std::size_t>(ta - t0);
        for (std::size_t p = 0; p < P; ++p) {
          const Vec lg = dots[p] * scale;
          const Vec tau = tau_terms.tau(qnorm[static_cast<std::size_t>(part[p])] * knorm, abs_scale);
          std::memcpy(&logits[p * Tp + o], &lg, sizeof(Vec));
          std::memcpy(&taus[p * Tp + o], &tau, sizeof(Vec));
        }
      }
      // Block score per participant over its own visible tokens.
      for (std::size_t p = 0; p < P; ++p) {
        const std::int64_t r = part[p] / c.Hq, h = part[p] % c.Hq;
        const std::size_t n = static_cast<std::size_t>(std::min((b + 1) * bs, c.seq_lens[r]) - t0);
        const auto bsc = detail::block_score(&logits[p * Tp], &taus[p * Tp], n, lse);
        e.score[e.at(h, r, b)] = bsc.score;
        e.tau[e.at(h, r, b)] = bsc.tau;
      }
    }
  }
  detail::finish_expected(c, e);
  return e;
}

}  // namespace ixo
