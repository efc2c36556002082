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
    case KDtype::nvfp4: return "nvfp4";
  }
  return "?";
}

std::string_view to_string(ScoreType t) { return t == ScoreType::max ? "max" : "lse"; }

KDtype parse_kdtype(std::string_view name, const std::string& field) {
  for (KDtype t : {KDtype::bf16, KDtype::e4m3fn, KDtype::e4m3fnuz, KDtype::e5m2, KDtype::nvfp4})
    if (name == to_string(t)) return t;
  throw InputError(field, "unknown dtype '" + std::string(name) + "' (expected bf16, e4m3fn, e4m3fnuz, e5m2 or nvfp4)");
}

KDtype parse_qdtype(std::string_view name, const std::string& field) {
  if (name == "bf16") return KDtype::bf16;
  if (name == "e4m3fn") return KDtype::e4m3fn;
  throw InputError(field, "unknown q dtype '" + std::string(name) + "' (expected bf16 or e4m3fn)");
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
    case KDtype::bf16:
    case KDtype::nvfp4: break;
  }
  throw InputError("k_dtype", std::string(to_string(t)) + " has no fp8 table");
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

float q_to_float(std::uint16_t stored, KDtype q_dtype) {
  return q_dtype == KDtype::bf16 ? bf16_bits_to_float(stored) : fp8_to_float(static_cast<std::uint8_t>(stored), q_dtype);
}

std::uint16_t float_to_q(float x, KDtype q_dtype) {
  return q_dtype == KDtype::bf16 ? float_to_bf16_bits(x) : float_to_fp8(x, q_dtype);
}

float e2m1_to_float(std::uint8_t nibble) {
  // Sign bit 3, exponent bits 2..1 (bias 1), mantissa bit 0; exponent 0 is subnormal (m * 0.5).
  const int e = (nibble >> 1) & 3, m = nibble & 1;
  const double mag = e == 0 ? 0.5 * m : std::ldexp(1.0 + 0.5 * m, e - 1);
  return static_cast<float>((nibble & 8) ? -mag : mag);
}

const std::array<float, 16 * 256>& nvfp4_table() {
  static const std::array<float, 16 * 256> table = [] {
    std::array<float, 16 * 256> a{};
    const auto& scale = fp8_table(KDtype::e4m3fn);
    for (int n = 0; n < 16; ++n)
      for (int s = 0; s < 256; ++s) {
        // e2m1 (2 significant bits) x e4m3 (4) is exact in float; then the nearest e4m3fn value.
        const float p = e2m1_to_float(static_cast<std::uint8_t>(n)) * scale[s];
        a[n * 256 + s] = std::isnan(p) ? p : fp8_to_float(float_to_fp8(p, KDtype::e4m3fn), KDtype::e4m3fn);
      }
    return a;
  }();
  return table;
}

}  // namespace ixo
