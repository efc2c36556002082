// The value families of the case generators (generate.cpp): gaussian (and NVFP4's codes
// and scales), near-tie, tie-free exact, ladder / plateau levels, and the fp8 special codes
// planted on top. Every draw comes from the case's generator, in the order generate() calls.
#include "generate_values.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "fast_draws.hpp"
#include "ixo/error.hpp"
#include "ixo/generate.hpp"

namespace ixo::gen_detail {

namespace {

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

}  // namespace

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
}  // namespace ixo::gen_detail
