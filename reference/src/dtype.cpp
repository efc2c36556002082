#include "ixo/dtype.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "ixo/error.hpp"

namespace ixo {

std::string_view to_string(KDtype t) {
  switch (t) {
    case KDtype::bf16: return "bf16";
    case KDtype::e4m3fn: return "e4m3fn";
    case KDtype::e4m3fnuz: return "e4m3fnuz";
    case KDtype::e5m2: return "e5m2";
  }
  return "?";
}

std::string_view to_string(ScoreType t) { return t == ScoreType::max ? "max" : "lse"; }

KDtype parse_kdtype(std::string_view name, const std::string& field) {
  for (KDtype t : {KDtype::bf16, KDtype::e4m3fn, KDtype::e4m3fnuz, KDtype::e5m2})
    if (name == to_string(t)) return t;
  throw InputError(field, "unknown dtype '" + std::string(name) + "' (expected bf16, e4m3fn, e4m3fnuz or e5m2)");
}

ScoreType parse_score_type(std::string_view name, const std::string& field) {
  if (name == "max") return ScoreType::max;
  if (name == "lse") return ScoreType::lse;
  throw InputError(field, "unknown score type '" + std::string(name) + "' (expected max or lse)");
}

float bf16_bits_to_float(std::uint16_t bits) {
  return static_cast<float>(Eigen::numext::bit_cast<Eigen::bfloat16>(bits));
}

std::uint16_t float_to_bf16_bits(float x) {
  return Eigen::numext::bit_cast<std::uint16_t>(Eigen::bfloat16(x));
}

namespace {

// Decode one fp8 code from the format's definition: 1 sign bit, E exponent bits with
// the given bias, M mantissa bits; subnormals at exponent field 0.
struct Fp8Format {
  int exp_bits, man_bits, bias;
};

float decode_fp8(std::uint8_t code, KDtype t) {
  const Fp8Format f = t == KDtype::e5m2 ? Fp8Format{5, 2, 15} : t == KDtype::e4m3fn ? Fp8Format{4, 3, 7} : Fp8Format{4, 3, 8};
  const bool neg = code & 0x80;
  const int e = (code >> f.man_bits) & ((1 << f.exp_bits) - 1);
  const int m = code & ((1 << f.man_bits) - 1);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Special encodings.
  if (t == KDtype::e4m3fnuz && code == 0x80) return nan;                  // the only NaN; no -0, no inf
  if (t == KDtype::e4m3fn && e == 15 && m == 7) return nan;               // S.1111.111; no inf
  if (t == KDtype::e5m2 && e == 31) return m == 0 ? (neg ? -INFINITY : INFINITY) : nan;  // IEEE-like
  double mag;
  if (e == 0)
    mag = std::ldexp(static_cast<double>(m), 1 - f.bias - f.man_bits);
  else
    mag = std::ldexp(static_cast<double>((1 << f.man_bits) + m), e - f.bias - f.man_bits);
  return static_cast<float>(neg ? -mag : mag);
}

std::array<float, 256> build_table(KDtype t) {
  std::array<float, 256> a{};
  for (int c = 0; c < 256; ++c) a[c] = decode_fp8(static_cast<std::uint8_t>(c), t);
  return a;
}

}  // namespace

const std::array<float, 256>& fp8_table(KDtype t) {
  static const std::array<float, 256> fn = build_table(KDtype::e4m3fn);
  static const std::array<float, 256> fnuz = build_table(KDtype::e4m3fnuz);
  static const std::array<float, 256> e5 = build_table(KDtype::e5m2);
  switch (t) {
    case KDtype::e4m3fn: return fn;
    case KDtype::e4m3fnuz: return fnuz;
    case KDtype::e5m2: return e5;
    case KDtype::bf16: break;
  }
  throw InputError("k_dtype", "bf16 has no fp8 table");
}

std::uint8_t float_to_fp8(float x, KDtype t) {
  const auto& tab = fp8_table(t);
  int best = -1;
  float best_err = 0;
  for (int c = 0; c < 256; ++c) {
    const float v = tab[c];
    if (!std::isfinite(v)) continue;
    if (v == 0.0f && std::signbit(v) != std::signbit(x)) continue;  // keep the sign of zero when possible
    const float err = std::fabs(v - x);
    // Ties go to the even code (mantissa lsb 0), as round-to-nearest-even does.
    if (best < 0 || err < best_err || (err == best_err && (c & 1) == 0 && (best & 1) == 1)) {
      best = c;
      best_err = err;
    }
  }
  return static_cast<std::uint8_t>(best);
}

}  // namespace ixo
