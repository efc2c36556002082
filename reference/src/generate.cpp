// Seeded case generators built from the spec: verify rows (L_j = prefix + j + 1),
// permuted and gapped slot tables, permuted token slots with negative aliases, graph
// padding and inactive requests, the rows of real CUDA-graph batches (packed_queries other
// than the rows per request, trailing padding and inactive rows that do not fill a group,
// inactive rows inside requests), shared K (paged cases whose physical pages are shared by
// every table row; prefix sharing of token slots), and the value families (gaussian, tie-free
// exact, near-tie, ladder, plateau). Every knob at its default draws nothing from the generator, so the cases of
// older specs (fixtures, regressions) stay bit for bit the same.
#include "ixo/generate.hpp"

#include "fast_draws.hpp"
#include "generate_selector.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "ixo/error.hpp"

namespace ixo {

namespace {

using Rng = std::mt19937_64;

std::int64_t uniform(Rng& g, std::int64_t lo, std::int64_t hi) {  // inclusive
  return std::uniform_int_distribution<std::int64_t>(lo, hi)(g);
}

// A random prefix: half of the time just around a block boundary (m*bs + {-2,-1,0,+1}).
std::int64_t random_prefix(Rng& g, std::int64_t max_prefix, int bs) {
  if (uniform(g, 0, 1) == 0 && max_prefix > bs + 2) {
    const std::int64_t m = uniform(g, 1, std::max<std::int64_t>(1, (max_prefix - 2) / bs));
    return std::max<std::int64_t>(1, m * bs + uniform(g, -2, 1));
  }
  return uniform(g, 1, std::max<std::int64_t>(1, max_prefix));
}

enum class Kind { real, padding, inactive };

struct Request {
  Kind kind;
  std::int64_t prefix;
  std::int64_t slot;  // value stored in slot_ids
};

// The E2M1 code nearest to v (ties to the even code), for generators.
std::uint8_t e2m1_code(float v) {
  int best = 0;
  for (int m = 1; m < 8; ++m)
    if (std::fabs(e2m1_to_float(static_cast<std::uint8_t>(m)) - std::fabs(v)) <
        std::fabs(e2m1_to_float(static_cast<std::uint8_t>(best)) - std::fabs(v)))
      best = m;
  return static_cast<std::uint8_t>(best | (std::signbit(v) ? 8 : 0));
}

// Stores one K element value into the cache (value is already in stored units; nvfp4: the
// element's E2M1 code with its group's scale left as it is, 1.0 for fill_exact).
void put_k(Case& c, std::size_t idx, float v) {
  if (is_nvfp4(c.cfg.k_dtype)) {
    std::uint8_t& b = c.k_cache[idx / 2];
    const int sh = 4 * static_cast<int>(idx & 1);
    b = static_cast<std::uint8_t>((b & ~(0xF << sh)) | (e2m1_code(v) << sh));
  } else if (is_fp8(c.cfg.k_dtype)) {
    c.k_cache[idx] = float_to_fp8(v, c.cfg.k_dtype);
  } else {
    const std::uint16_t b = float_to_bf16_bits(v);
    c.k_cache[2 * idx] = static_cast<std::uint8_t>(b & 0xff);
    c.k_cache[2 * idx + 1] = static_cast<std::uint8_t>(b >> 8);
  }
}

// Moderate finite fp8 codes (|v| in [2^-6, 8] or 0): sampled uniformly for fast fills.
std::vector<std::uint8_t> moderate_codes(KDtype t) {
  std::vector<std::uint8_t> out;
  for (int c = 0; c < 256; ++c) {
    const float v = fp8_table(t)[c];
    if (std::isfinite(v) && (v == 0.0f || (std::fabs(v) >= 0x1p-6f && std::fabs(v) <= 8.0f)))
      out.push_back(static_cast<std::uint8_t>(c));
  }
  return out;
}

// NVFP4 K: uniformly random E2M1 codes (all finite) and positive e4m3fn scales, about one
// group in 8 large ([64, 448]: the products of the larger codes saturate at 448), the rest
// moderate ([2^-6, 8]: most products need rounding to e4m3).
void fill_nvfp4(Case& c, gen_detail::FastDraws& fast) {
  std::vector<std::uint8_t> moderate, large;
  for (const std::uint8_t code : moderate_codes(KDtype::e4m3fn)) {
    const float v = fp8_table(KDtype::e4m3fn)[code];
    if (v > 0) moderate.push_back(code);
  }
  for (int code = 0; code < 0x7f; ++code)
    if (fp8_table(KDtype::e4m3fn)[code] >= 64.0f) large.push_back(static_cast<std::uint8_t>(code));
  for (auto& b : c.k_cache) b = static_cast<std::uint8_t>(fast.bits() >> 24);
  for (auto& s : c.k_scales)
    s = fast.index(8) == 0 ? large[fast.index(large.size())] : moderate[fast.index(moderate.size())];
}

void fill_gaussian(Case& c, Rng& g) {
  gen_detail::FastDraws fast(static_cast<std::uint32_t>(g()));
  if (is_nvfp4(c.cfg.k_dtype)) {
    fill_nvfp4(c, fast);
  } else if (is_fp8(c.cfg.k_dtype)) {
    const auto codes = moderate_codes(c.cfg.k_dtype);
    for (auto& b : c.k_cache) b = codes[fast.index(codes.size())];
  } else {
    const float inv = static_cast<float>(1.0 / c.cfg.k_scale);
    for (std::size_t i = 0; i < c.k_cache.size() / 2; ++i) put_k(c, i, fast.normal() * inv);
  }
  for (auto& q : c.q) q = float_to_q(fast.normal(), c.cfg.q_dtype);
}

// Near ties: every token of a request is one base vector with a one-step change in a
// single element, so block maxima crowd into a band a few ulps wide.
void fill_near_tie(Case& c, Rng& g) {
  fill_gaussian(c, g);
  if (is_nvfp4(c.cfg.k_dtype)) {  // one base row (codes and scales), one code magnitude +-1 a row
    const std::size_t rb = static_cast<std::size_t>(c.D / 2), sb = static_cast<std::size_t>(c.D / kNvfp4Block);
    for (std::int64_t s = 1; s < c.S * c.Hk; ++s) {
      std::copy_n(c.k_cache.begin(), rb, c.k_cache.begin() + static_cast<std::ptrdiff_t>(s * rb));
      std::copy_n(c.k_scales.begin(), sb, c.k_scales.begin() + static_cast<std::ptrdiff_t>(s * sb));
      const std::size_t e = static_cast<std::size_t>(s) * static_cast<std::size_t>(c.D) +
                            static_cast<std::size_t>(uniform(g, 0, c.D - 1));
      std::uint8_t& b = c.k_cache[e / 2];
      const int sh = 4 * static_cast<int>(e & 1), code = (b >> sh) & 0xF;
      const int mag = std::clamp((code & 7) + static_cast<int>(uniform(g, -1, 1)), 0, 7);
      b = static_cast<std::uint8_t>((b & ~(0xF << sh)) | (((code & 8) | mag) << sh));
    }
    return;
  }
  const std::size_t row = static_cast<std::size_t>(c.D);
  std::vector<std::uint8_t> base(c.k_cache.begin(),
                                 c.k_cache.begin() + static_cast<std::ptrdiff_t>(row * element_bytes(c.cfg.k_dtype)));
  for (std::int64_t s = 0; s < c.S * c.Hk; ++s) {
    const std::size_t off = static_cast<std::size_t>(s) * row;
    const std::int64_t d = uniform(g, 0, c.D - 1);
    if (is_fp8(c.cfg.k_dtype)) {
      std::copy(base.begin(), base.end(), c.k_cache.begin() + static_cast<std::ptrdiff_t>(off));
      std::uint8_t& code = c.k_cache[off + static_cast<std::size_t>(d)];
      const int step = static_cast<int>(uniform(g, -1, 1));
      const int nc = code + step;
      if ((nc & 0x7f) != 0x7f && (nc & 0x80) == (code & 0x80) && nc != 0x80 &&
          std::isfinite(fp8_table(c.cfg.k_dtype)[nc & 0xff]))
        code = static_cast<std::uint8_t>(nc);
    } else {
      std::copy(base.begin(), base.end(), c.k_cache.begin() + static_cast<std::ptrdiff_t>(2 * off));
      std::uint16_t b = static_cast<std::uint16_t>(c.k_cache[2 * (off + d)] | (c.k_cache[2 * (off + d) + 1] << 8));
      b = static_cast<std::uint16_t>(b + uniform(g, -1, 1));
      c.k_cache[2 * (off + d)] = static_cast<std::uint8_t>(b & 0xff);
      c.k_cache[2 * (off + d) + 1] = static_cast<std::uint8_t>(b >> 8);
    }
  }
}

// Tie-free exact values (score max): q rows are +-1 on a disjoint slice of dims per
// head of a kv group, K elements are small integers (exact in every dtype), and every
// token of block b of a request has slice sum level[b], a distinct integer. So each
// block max is an exact, distinct integer times the logit scale.
void fill_exact(Case& c, Rng& g, const std::vector<Request>& reqs,
                const std::vector<std::vector<std::int64_t>>& tokens) {
  const std::int64_t gqa = c.Hq / c.Hk;
  const std::int64_t slice = c.D / gqa;
  // Integers up to kmax are exact in K's dtype (nvfp4 with scale 1: 0..4 in E2M1).
  const int kmax = c.cfg.k_dtype == KDtype::e5m2 ? 8 : is_nvfp4(c.cfg.k_dtype) ? 4 : 16;
  const std::int64_t M = slice * kmax;
  for (std::int64_t r = 0; r < c.R; ++r)
    for (std::int64_t h = 0; h < c.Hq; ++h) {
      const std::int64_t j = h % gqa;
      const float sign = uniform(g, 0, 1) ? 1.0f : -1.0f;
      for (std::int64_t d = 0; d < c.D; ++d)
        c.q[static_cast<std::size_t>((r * c.Hq + h) * c.D + d)] =
            float_to_q(d >= j * slice && d < (j + 1) * slice ? sign : 0.0f, c.cfg.q_dtype);
    }
  std::fill(c.k_cache.begin(), c.k_cache.end(), 0);
  std::fill(c.k_scales.begin(), c.k_scales.end(), std::uint8_t{0x38});  // e4m3fn 1.0
  std::vector<std::int64_t> pool(static_cast<std::size_t>(2 * M + 1));
  std::iota(pool.begin(), pool.end(), -M);
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    const auto& toks = tokens[i];
    const std::int64_t nblocks = ceil_div(static_cast<std::int64_t>(toks.size()), c.cfg.block_size);
    if (nblocks > 2 * M + 1)
      throw InputError("values", "exact generator supports at most " + std::to_string(2 * M + 1) +
                                     " blocks per request, got " + std::to_string(nblocks));
    for (std::int64_t kvh = 0; kvh < c.Hk; ++kvh)
      for (std::int64_t j = 0; j < gqa; ++j) {
        std::shuffle(pool.begin(), pool.end(), g);
        for (std::size_t t = 0; t < toks.size(); ++t) {
          const std::int64_t level = pool[t / static_cast<std::size_t>(c.cfg.block_size)];
          // Random integer vector over the slice with sum == level, entries in [-kmax, kmax].
          std::vector<int> v(static_cast<std::size_t>(slice));
          std::int64_t sum = 0;
          for (auto& x : v) sum += (x = static_cast<int>(uniform(g, -kmax / 2, kmax / 2)));
          while (sum != level) {
            const std::size_t k = static_cast<std::size_t>(uniform(g, 0, slice - 1));
            if (sum < level && v[k] < kmax) ++v[k], ++sum;
            if (sum > level && v[k] > -kmax) --v[k], --sum;
          }
          const std::int64_t slot = toks[t];
          for (std::int64_t d = 0; d < slice; ++d)
            put_k(c, static_cast<std::size_t>((slot * c.Hk + kvh) * c.D + j * slice + d),
                  static_cast<float>(v[static_cast<std::size_t>(d)]));
        }
      }
  }
}

// Ladder / plateau: every block of request i (its tokens in table order) gets one of
// `levels` K vectors (plateau: one vector for the whole request), so block scores take at
// most `levels` distinct values (the partial last block aside under lse).
void fill_levels(Case& c, Rng& g, int levels, const std::vector<std::vector<std::int64_t>>& tokens) {
  fill_gaussian(c, g);  // q, and the vectors copied below
  const std::size_t row = static_cast<std::size_t>(k_row_bytes(c.cfg.k_dtype, c.D));
  const std::size_t srow = is_nvfp4(c.cfg.k_dtype) ? static_cast<std::size_t>(c.D / kNvfp4Block) : 0;  // scales a row
  const std::int64_t nvec = std::min<std::int64_t>(std::max(levels, 1), c.S);
  for (const auto& toks : tokens) {
    std::vector<std::int64_t> vec(static_cast<std::size_t>(nvec));
    for (auto& v : vec) v = uniform(g, 0, c.S - 1);
    std::vector<std::uint8_t> base, sbase;
    for (const std::int64_t v : vec)
      for (std::int64_t h = 0; h < c.Hk; ++h) {
        const std::size_t kv_row = static_cast<std::size_t>(v * c.Hk + h);  // K row (slot v, head h)
        const auto at = c.k_cache.begin() + static_cast<std::ptrdiff_t>(kv_row * row);
        base.insert(base.end(), at, at + static_cast<std::ptrdiff_t>(row));
        // NVFP4 block scales of that row, bounds-checked (a wrong index throws, never reads past them).
        for (std::size_t i = 0; i < srow; ++i) sbase.push_back(c.k_scales.at(kv_row * srow + i));
      }
    std::int64_t level = 0;
    for (std::size_t t = 0; t < toks.size(); ++t) {
      if (t % static_cast<std::size_t>(c.cfg.block_size) == 0) level = uniform(g, 0, nvec - 1);
      const auto src = base.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(level * c.Hk) * row);
      std::copy(src, src + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(c.Hk) * row),
                c.k_cache.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(toks[t] * c.Hk) * row));
      const auto ssrc = sbase.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(level * c.Hk) * srow);
      std::copy(ssrc, ssrc + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(c.Hk) * srow),
                c.k_scales.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(toks[t] * c.Hk) * srow));
    }
  }
}

// About one token slot in 8 gets one element replaced by a special code of its fp8 format:
// a subnormal, a zero (+0, and -0 where the format has one) or (nonfinite_too) a NaN/Inf code.
// nvfp4: the same on its e4m3fn scales (one scale of about one row in 8).
void put_fp8_specials(Case& c, Rng& g, bool nonfinite_too) {
  const bool fp4 = is_nvfp4(c.cfg.k_dtype);
  const KDtype fmt = fp4 ? KDtype::e4m3fn : c.cfg.k_dtype;
  std::vector<std::uint8_t>& target = fp4 ? c.k_scales : c.k_cache;
  const std::int64_t per_row = fp4 ? c.D / kNvfp4Block : c.D;
  std::vector<std::uint8_t> sub, zero, nonfinite;
  for (int code = 0; code < 256; ++code) {
    const auto b = static_cast<std::uint8_t>(code);
    switch (fp8_kind(b, fmt)) {
      case Fp8Kind::subnormal:
        sub.push_back(b);
        break;
      case Fp8Kind::zero:
        zero.push_back(b);
        break;
      case Fp8Kind::nonfinite:
        nonfinite.push_back(b);
        break;
      case Fp8Kind::normal:
        break;
    }
  }
  const std::vector<std::uint8_t>* kinds[3] = {&sub, &zero, &nonfinite};
  for (std::int64_t s = 0; s < c.S * c.Hk; ++s) {
    if (uniform(g, 0, 7) != 0) continue;
    const auto& pool = *kinds[uniform(g, 0, nonfinite_too ? 2 : 1)];
    target[static_cast<std::size_t>(s * per_row + uniform(g, 0, per_row - 1))] =
        pool[static_cast<std::size_t>(uniform(g, 0, static_cast<std::int64_t>(pool.size()) - 1))];
  }
}

// Every K element replaced by a random subnormal or zero code of its fp8 format (about one in
// 8 a zero), signs random: the scores are made of subnormals only.
// nvfp4: every scale instead (the elements are then subnormal or zero products, rounded).
void put_fp8_subnormal_only(Case& c, Rng& g) {
  const bool fp4 = is_nvfp4(c.cfg.k_dtype);
  std::vector<std::uint8_t> sub, zero;
  for (int code = 0; code < 256; ++code) {
    const auto b = static_cast<std::uint8_t>(code);
    const Fp8Kind k = fp8_kind(b, fp4 ? KDtype::e4m3fn : c.cfg.k_dtype);
    if (k == Fp8Kind::subnormal) sub.push_back(b);
    if (k == Fp8Kind::zero) zero.push_back(b);
  }
  for (auto& e : fp4 ? c.k_scales : c.k_cache) {
    const auto& pool = uniform(g, 0, 7) == 0 ? zero : sub;
    e = pool[static_cast<std::size_t>(uniform(g, 0, static_cast<std::int64_t>(pool.size()) - 1))];
  }
}

// Prefix sharing (page size 1): how many leading positions of each table row reuse the
// slots of the first real request's row: min(shared_prefix, both used lengths) for every
// other real request's row, 0 elsewhere.
std::vector<std::int64_t> shared_lengths(const std::vector<Request>& reqs, const std::vector<std::int64_t>& used_len,
                                         std::int64_t shared_prefix) {
  std::vector<std::int64_t> share(used_len.size(), 0);
  std::int64_t owner = -1;
  for (const auto& q : reqs) {
    if (q.kind != Kind::real || shared_prefix <= 0) continue;
    if (owner < 0)
      owner = q.slot;
    else if (q.slot != owner)
      share[static_cast<std::size_t>(q.slot)] = std::min(
          {shared_prefix, used_len[static_cast<std::size_t>(q.slot)], used_len[static_cast<std::size_t>(owner)]});
  }
  return share;
}

// Paged K: max_pages covers the width, N = max_pages + 3 physical pages of page_size slots,
// every table row mapped onto them by `kind` (so pages are shared between rows), and
// req_to_token derived. Returns each row's used slots.
std::vector<std::vector<std::int64_t>> paged_tokens(Case& c, PageTable kind, Rng& g,
                                                    const std::vector<std::int64_t>& used_len) {
  const std::int64_t ps = c.cfg.page_size;
  c.max_pages = ceil_div(c.width, ps);
  const std::int64_t n = c.max_pages + 3;
  c.S = n * ps;
  c.page_table.assign(static_cast<std::size_t>(c.rows * c.max_pages), 0);
  std::vector<std::int64_t> perm(static_cast<std::size_t>(n));
  for (std::int64_t b = 0; b < c.rows; ++b) {
    if (kind == PageTable::random) {
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), g);
    }
    for (std::int64_t p = 0; p < c.max_pages; ++p) {
      std::int64_t page = perm[static_cast<std::size_t>(p)];
      if (kind == PageTable::interval) page = (2 * p + b) % n;
      if (kind == PageTable::reverse) page = (((n - 1 - 3 * b - p) % n) + n) % n;
      c.page_table[static_cast<std::size_t>(b * c.max_pages + p)] = static_cast<std::int32_t>(page);
    }
  }
  derive_req_to_token(c);
  std::vector<std::vector<std::int64_t>> tokens(static_cast<std::size_t>(c.rows));
  for (std::int64_t b = 0; b < c.rows; ++b) {
    const auto at = c.req_to_token.begin() + static_cast<std::ptrdiff_t>(b * c.width);
    tokens[static_cast<std::size_t>(b)].assign(at,
                                               at + static_cast<std::ptrdiff_t>(used_len[static_cast<std::size_t>(b)]));
  }
  return tokens;
}

}  // namespace

Fp8Kind fp8_kind(std::uint8_t code, KDtype t) {
  const float v = fp8_table(t)[code];
  if (!std::isfinite(v)) return Fp8Kind::nonfinite;
  if (v == 0.0f) return Fp8Kind::zero;
  const int mant_bits = t == KDtype::e5m2 ? 2 : 3;
  return ((code & 0x7f) >> mant_bits) == 0 ? Fp8Kind::subnormal : Fp8Kind::normal;  // exponent field 0
}

const char* page_table_name(PageTable p) {
  switch (p) {
    case PageTable::interval:
      return "interval";
    case PageTable::reverse:
      return "reverse";
    case PageTable::random:
      break;
  }
  return "random";
}

const char* values_name(Values v) {
  switch (v) {
    case Values::exact:
      return "exact";
    case Values::near_tie:
      return "near_tie";
    case Values::ladder:
      return "ladder";
    case Values::plateau:
      return "plateau";
    case Values::selector_sweep:
      return "selector_sweep";
    case Values::gaussian:
      break;
  }
  return "gaussian";
}

Case generate(const GenSpec& spec, std::uint64_t seed) {
  Rng g(seed);
  Case c;
  c.cfg = spec.cfg;
  c.cfg.packed_queries = spec.packed_queries > 0 ? spec.packed_queries : spec.draft_rows;
  c.Hq = spec.Hq;
  c.Hk = spec.Hk;
  c.D = spec.D;
  if (spec.requests < 0 || spec.draft_rows < 1 || spec.Hq % spec.Hk != 0)
    throw InputError("spec", "requests >= 0, draft_rows >= 1 and Hk | Hq required");
  if (spec.packed_queries < 0 || spec.trailing_padding_rows < 0 || spec.trailing_inactive_rows < 0 ||
      spec.inactive_rows_in_requests < 0)
    throw InputError("spec",
                     "packed_queries, trailing_padding_rows, trailing_inactive_rows and "
                     "inactive_rows_in_requests must be >= 0");
  const int bs = c.cfg.block_size;
  const std::int64_t P = c.cfg.packed_queries;
  // Trailing graph padding row i reads table row 0 with length 2 + i % draft_rows.
  auto trailing_pad_len = [&](int i) { return std::int64_t{2} + i % spec.draft_rows; };
  const std::int64_t trailing_pad_max =
      spec.trailing_padding_rows > 0 ? trailing_pad_len(std::min(spec.trailing_padding_rows, spec.draft_rows) - 1) : 0;

  // Requests: real ones, graph padding (table row 0, prefix 1), inactive (slot outside the table).
  std::vector<Request> reqs;
  for (int i = 0; i < spec.requests; ++i) {
    const std::int64_t p = spec.prefixes.empty() ? random_prefix(g, spec.max_prefix, bs)
                                                 : spec.prefixes[static_cast<std::size_t>(i) % spec.prefixes.size()];
    reqs.push_back({Kind::real, p, 0});
  }
  for (int i = 0; i < spec.inactive_requests; ++i) {
    const auto pos = static_cast<std::ptrdiff_t>(uniform(g, 0, static_cast<std::int64_t>(reqs.size())));
    reqs.insert(reqs.begin() + pos, Request{Kind::inactive, random_prefix(g, spec.max_prefix, bs), 0});
  }
  for (int i = 0; i < spec.padding_requests; ++i) reqs.push_back({Kind::padding, 1, 0});

  const std::int64_t nreq = static_cast<std::int64_t>(reqs.size());
  c.rows = 2 * nreq + 3;  // unused table rows between the used ones
  // Table rows for real requests: never row 0 (padding's), never the request or row index.
  std::vector<std::int64_t> free_rows(static_cast<std::size_t>(c.rows - 1));
  std::iota(free_rows.begin(), free_rows.end(), 1);
  std::shuffle(free_rows.begin(), free_rows.end(), g);
  std::size_t next_free = 0, next_explicit = 0;
  for (std::int64_t i = 0; i < nreq; ++i) {
    Request& q = reqs[static_cast<std::size_t>(i)];
    if (q.kind == Kind::padding) continue;
    if (q.kind == Kind::inactive) continue;
    if (!spec.request_slots.empty()) {
      q.slot = spec.request_slots[next_explicit++ % spec.request_slots.size()];
      if (q.slot < 0) throw InputError("request_slots", "must be >= 0, got " + std::to_string(q.slot));
      c.rows = std::max(c.rows, q.slot + 1);
      continue;
    }
    if (!spec.permute_slots) {
      q.slot = i + 1;
      continue;
    }
    // Never the request index, its rows' indices or (when packed_queries differs from the
    // rows per request) the indices of the groups its rows fall in.
    auto bad = [&](std::int64_t s) {
      if (s == i || (s >= i * spec.draft_rows && s < (i + 1) * spec.draft_rows)) return true;
      return P != spec.draft_rows && s >= i * spec.draft_rows / P && s <= ((i + 1) * spec.draft_rows - 1) / P;
    };
    std::size_t k = next_free;
    while (k < free_rows.size() && bad(free_rows[k])) ++k;
    if (k == free_rows.size()) k = next_free;
    std::swap(free_rows[k], free_rows[next_free]);
    q.slot = free_rows[next_free++];
  }

  // Lengths and the table width.
  std::int64_t max_len = std::max<std::int64_t>(1, trailing_pad_max);
  for (const auto& q : reqs) max_len = std::max(max_len, q.prefix + spec.draft_rows);
  c.width = max_len + spec.extra_width;

  // Token slots: each used (table row, position) gets its own cache slot, except the shared
  // prefixes (the first real request's slots); a random permutation when asked, some stored
  // as negative aliases (slot - S). Paged cases: slots from the page table instead.
  std::vector<std::int64_t> used_len(static_cast<std::size_t>(c.rows), 0);
  for (const auto& q : reqs)
    if (q.kind != Kind::inactive)
      used_len[static_cast<std::size_t>(q.slot)] =
          std::max(used_len[static_cast<std::size_t>(q.slot)], q.prefix + spec.draft_rows);
  used_len[0] = std::max(used_len[0], trailing_pad_max);
  if ((c.cfg.page_size > 1 || spec.shared_prefix > 0) && spec.values == Values::exact)
    throw InputError("values", "exact values need private token slots (page_size 1, shared_prefix 0)");
  std::vector<std::vector<std::int64_t>> row_tokens(static_cast<std::size_t>(c.rows));
  if (c.cfg.page_size > 1) {
    row_tokens = paged_tokens(c, spec.pages, g, used_len);
  } else {
    const std::vector<std::int64_t> share_len = shared_lengths(reqs, used_len, spec.shared_prefix);
    c.S = std::max<std::int64_t>(1, std::accumulate(used_len.begin(), used_len.end(), std::int64_t{0}) -
                                        std::accumulate(share_len.begin(), share_len.end(), std::int64_t{0}));
    std::vector<std::int64_t> perm(static_cast<std::size_t>(c.S));
    std::iota(perm.begin(), perm.end(), 0);
    if (spec.permute_tokens) std::shuffle(perm.begin(), perm.end(), g);
    std::size_t next_slot = 0;
    std::int64_t owner = -1;  // the table row whose slots the shared prefixes reuse
    for (std::int64_t row = 0; row < c.rows; ++row)
      for (std::int64_t t = 0; t < used_len[static_cast<std::size_t>(row)]; ++t)
        row_tokens[static_cast<std::size_t>(row)].push_back(
            t < share_len[static_cast<std::size_t>(row)] ? -1 : perm[next_slot++]);
    for (const auto& q : reqs)
      if (q.kind == Kind::real && owner < 0) owner = q.slot;
    for (std::int64_t row = 0; row < c.rows; ++row)
      for (std::int64_t t = 0; t < share_len[static_cast<std::size_t>(row)]; ++t)
        row_tokens[static_cast<std::size_t>(row)][static_cast<std::size_t>(t)] =
            row_tokens[static_cast<std::size_t>(owner)][static_cast<std::size_t>(t)];
    c.req_to_token.assign(static_cast<std::size_t>(c.rows * c.width), 0);
    for (std::int64_t row = 0; row < c.rows; ++row)
      for (std::int64_t t = 0; t < c.width; ++t) {
        std::int64_t s;
        if (t < used_len[static_cast<std::size_t>(row)])
          s = row_tokens[static_cast<std::size_t>(row)][static_cast<std::size_t>(t)];
        else
          s = uniform(g, 0, c.S - 1);  // never read: any valid slot
        if (spec.negative_aliases && uniform(g, 0, 3) == 0) s -= c.S;
        if (spec.alias_minus_s && s == 0) s = -c.S;
        c.req_to_token[static_cast<std::size_t>(row * c.width + t)] = static_cast<std::int32_t>(s);
      }
  }
  // Inactive requests: slot ids past the table, or -1 (aliases S-1, past the table too
  // whenever S > rows; otherwise use rows + 1).
  for (auto& q : reqs)
    if (q.kind == Kind::inactive) q.slot = (uniform(g, 0, 1) && c.S - 1 >= c.rows) ? -1 : c.rows + uniform(g, 0, 5);

  // Rows: the requests' draft rows, then the trailing padding and inactive rows.
  for (const auto& q : reqs)
    for (int j = 0; j < spec.draft_rows; ++j) {
      c.slot_ids.push_back(q.slot);
      c.seq_lens.push_back(q.prefix + j + 1);
    }
  if (spec.inactive_rows_in_requests > 0) {
    // Random rows of real requests made inactive: length 0, or a slot id past the table.
    std::vector<std::size_t> real_rows;
    for (std::size_t i = 0; i < reqs.size(); ++i)
      if (reqs[i].kind == Kind::real)
        for (int j = 0; j < spec.draft_rows; ++j)
          real_rows.push_back(i * static_cast<std::size_t>(spec.draft_rows) + static_cast<std::size_t>(j));
    std::shuffle(real_rows.begin(), real_rows.end(), g);
    const std::size_t n =
        std::min<std::size_t>(real_rows.size(), static_cast<std::size_t>(spec.inactive_rows_in_requests));
    for (std::size_t k = 0; k < n; ++k) {
      if (uniform(g, 0, 1) == 0)
        c.seq_lens[real_rows[k]] = 0;
      else
        c.slot_ids[real_rows[k]] = c.rows + uniform(g, 0, 5);
    }
  }
  for (int i = 0; i < spec.trailing_padding_rows; ++i) {
    c.slot_ids.push_back(0);
    c.seq_lens.push_back(trailing_pad_len(i));
  }
  for (int i = 0; i < spec.trailing_inactive_rows; ++i) {
    switch (uniform(g, 0, 2)) {
      case 0:
        c.slot_ids.push_back(c.rows + uniform(g, 0, 5));
        c.seq_lens.push_back(uniform(g, 1, c.width));
        break;
      case 1:
        c.slot_ids.push_back(c.S - 1 >= c.rows ? -1 : c.rows + 1);
        c.seq_lens.push_back(uniform(g, 1, c.width));
        break;
      default:
        c.slot_ids.push_back(0);
        c.seq_lens.push_back(0);
        break;  // graph padding of length 0
    }
  }
  c.R = static_cast<std::int64_t>(c.slot_ids.size());
  c.q.assign(static_cast<std::size_t>(c.R * c.Hq * c.D), 0);
  check_nvfp4_head_dim(c.cfg.k_dtype, c.D);
  c.k_cache.assign(static_cast<std::size_t>(c.S * c.Hk * k_row_bytes(c.cfg.k_dtype, c.D)), 0);
  c.k_scales.assign(is_nvfp4(c.cfg.k_dtype) ? static_cast<std::size_t>(c.S * c.Hk * (c.D / kNvfp4Block)) : 0,
                    std::uint8_t{0x38});
  switch (spec.values) {
    case Values::gaussian:
      fill_gaussian(c, g);
      break;
    case Values::near_tie:
      fill_near_tie(c, g);
      break;
    case Values::ladder:
    case Values::plateau:
      fill_levels(c, g, spec.values == Values::plateau ? 1 : spec.ladder_levels, row_tokens);
      break;
    case Values::selector_sweep:
      fill_selector_sweep(c, g(), row_tokens);
      break;
    case Values::exact: {
      std::vector<std::vector<std::int64_t>> toks;
      std::vector<Request> real;
      for (const auto& q : reqs)
        if (q.kind != Kind::inactive) {
          real.push_back(q);
          toks.push_back(row_tokens[static_cast<std::size_t>(q.slot)]);
        }
      if (spec.trailing_padding_rows > 0) {  // they read table row 0 too
        real.push_back(Request{Kind::padding, 1, 0});
        toks.push_back(row_tokens[0]);
      }
      fill_exact(c, g, real, toks);
      break;
    }
  }
  const bool coded = is_fp8(c.cfg.k_dtype) || is_nvfp4(c.cfg.k_dtype);  // fp8 codes, or nvfp4's e4m3fn scales
  if (spec.fp8_specials && coded) put_fp8_specials(c, g, spec.fp8_nonfinite);
  if (spec.fp8_subnormal_only && coded) put_fp8_subnormal_only(c, g);
  validate(c);
  return c;
}

}  // namespace ixo
