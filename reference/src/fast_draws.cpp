#include "fast_draws.hpp"

#include <array>
#include <cmath>

namespace ixo::gen_detail {

namespace {

constexpr int kPieceBits = 12;
constexpr int kPieces = 1 << kPieceBits;  // 4096 pieces, 4097 knots

// The x with Phi(x) = p, by bisection on Phi(x) = erfc(-x / sqrt 2) / 2 (60 halvings of [-9, 9]:
// below a double's spacing there).
double normal_quantile(double p) {
  double lo = -9.0, hi = 9.0;
  for (int i = 0; i < 60; ++i) {
    const double mid = 0.5 * (lo + hi);
    (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

}  // namespace

struct NormalKnots {
  std::array<float, kPieces + 1> x{};
  std::array<float, kPieces> slope{};  // x[j+1] - x[j], per unit of the 20 low bits
  NormalKnots() {
    std::array<double, kPieces + 1> q{};
    for (int j = 0; j <= kPieces / 2; ++j) {  // symmetric: x[N - j] = -x[j]
      q[static_cast<std::size_t>(j)] = normal_quantile((j + 0.5) / (kPieces + 1));
      q[static_cast<std::size_t>(kPieces - j)] = -q[static_cast<std::size_t>(j)];
    }
    for (std::size_t j = 0; j <= kPieces; ++j) x[j] = static_cast<float>(q[j]);
    for (std::size_t j = 0; j < kPieces; ++j) slope[j] = static_cast<float>((q[j + 1] - q[j]) * 0x1p-20);
  }
};

namespace {

const NormalKnots& knots() {
  static const NormalKnots k;
  return k;
}

}  // namespace

FastDraws::FastDraws(std::uint32_t seed) : g_(seed), knots_(knots()) {}

float FastDraws::normal() {
  const NormalKnots& k = knots_;
  const std::uint32_t u = bits();
  const std::size_t j = u >> (32 - kPieceBits);
  return k.x[j] + static_cast<float>(u & ((1u << (32 - kPieceBits)) - 1)) * k.slope[j];
}

}  // namespace ixo::gen_detail
