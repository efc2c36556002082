#include "generate_selector.hpp"

#include <algorithm>
#include <cmath>
#include <random>

namespace ixo {

namespace {

std::vector<double> sweep_values(std::mt19937_64& g, std::int64_t n, int kind) {
  std::vector<double> v(static_cast<std::size_t>(n));
  if (v.empty()) return v;
  std::uniform_real_distribution<double> u100(-100.0, 100.0), u1e20(-1e20, 1e20), jitter(-0.49, 0.49);
  std::normal_distribution<double> n7(0.0, 7.0);
  switch (kind) {
    case 0:
      for (auto& x : v) x = u100(g);
      break;
    case 1:
      std::fill(v.begin(), v.end(), 1.5);
      break;
    case 2:
      for (std::size_t i = 0; i < v.size(); ++i) v[i] = (i % 4) < 2 ? 3.0 : 2.0;
      std::shuffle(v.begin(), v.end(), g);
      break;
    case 3:
      for (auto& x : v) x = u1e20(g);
      break;
    case 4: {  // block 0 = -1 sets lo; the rest one step apart under 1, in random block order
      const double step = 2.0 / 65534.0;
      for (std::size_t i = 1; i < v.size(); ++i) v[i] = 1.0 - (static_cast<double>(i) - 1.0) * step + jitter(g) * step;
      std::shuffle(v.begin() + 1, v.end(), g);
      v[0] = -1.0;
      break;
    }
    default:
      for (auto& x : v) x = n7(g);
      break;
  }
  return v;
}

void put_bits(Case& c, std::size_t idx, std::uint16_t b) {
  c.k_cache[2 * idx] = static_cast<std::uint8_t>(b & 0xff);
  c.k_cache[2 * idx + 1] = static_cast<std::uint8_t>(b >> 8);
}

}  // namespace

void fill_selector_sweep(Case& c, std::uint64_t seed, const std::vector<std::vector<std::int64_t>>& row_tokens) {
  std::mt19937_64 g(seed ^ 0x5e1ec7u);
  const std::uint16_t one = float_to_q(1.0f, c.cfg.q_dtype);
  std::fill(c.q.begin(), c.q.end(), 0);
  for (std::int64_t i = 0; i < c.R * c.Hq; ++i)
    for (std::int64_t d = 0; d < std::min<std::int64_t>(3, c.D); ++d) c.q[static_cast<std::size_t>(i * c.D + d)] = one;
  std::fill(c.k_cache.begin(), c.k_cache.end(), 0);
  std::fill(c.k_scales.begin(), c.k_scales.end(), std::uint8_t{0x38});  // nvfp4: e4m3fn 1.0
  const double k_unit = 1.0 / c.cfg.k_scale;
  const std::int64_t bs = c.cfg.block_size;
  const int first_kind = static_cast<int>(g() % 6);
  int used = 0;  // table rows holding tokens so far: consecutive ones take consecutive value sets
  for (const auto& toks : row_tokens) {
    if (toks.empty()) continue;
    const std::int64_t n = ceil_div(static_cast<std::int64_t>(toks.size()), bs);
    const std::vector<double> v = sweep_values(g, n, (first_kind + used++) % 6);
    for (std::size_t t = 0; t < toks.size(); ++t) {
      const double x = v[t / static_cast<std::size_t>(bs)] * k_unit;
      for (std::int64_t h = 0; h < c.Hk; ++h) {
        const std::size_t base = static_cast<std::size_t>((toks[t] * c.Hk + h) * c.D);
        if (is_nvfp4(c.cfg.k_dtype)) {
          // Element 0 = +-1 (E2M1 code 2, sign bit 8), its block scale = |x| as e4m3fn
          // (saturating at 448): the block's value to 3 bits.
          const std::size_t row = static_cast<std::size_t>((toks[t] * c.Hk + h) * k_row_bytes(c.cfg.k_dtype, c.D));
          const std::size_t srow = static_cast<std::size_t>((toks[t] * c.Hk + h) * (c.D / kNvfp4Block));
          c.k_cache[row] = static_cast<std::uint8_t>(x < 0 ? 0x0A : 0x02);
          c.k_scales[srow] = float_to_fp8(static_cast<float>(std::fabs(x)), KDtype::e4m3fn);
          continue;
        }
        if (is_fp8(c.cfg.k_dtype)) {
          c.k_cache[base] = float_to_fp8(static_cast<float>(x), c.cfg.k_dtype);
          continue;
        }
        // x = a + b + r to 24 bits: three bf16 terms.
        double rest = x;
        for (std::int64_t d = 0; d < std::min<std::int64_t>(3, c.D); ++d) {
          const std::uint16_t bits = float_to_bf16_bits(static_cast<float>(rest));
          put_bits(c, base + static_cast<std::size_t>(d), bits);
          rest -= static_cast<double>(bf16_bits_to_float(bits));
        }
      }
    }
  }
}

}  // namespace ixo
