// Fast random values for the case generators (issue 23: std::normal_distribution<float> and
// std::uniform_int_distribution were ~70 % of generating a large case). One 32-bit draw per
// value; the values are for tests, not statistics, so two approximations are fine and kept
// here in one place:
// - normal(): the inverse of the standard normal CDF, linear between 4097 knots at
//   p = (j + 0.5) / 4097 (j = 0..4096): symmetric, mean 0, |value| <= 3.67 (the outer knots).
// - index(n): Lemire's multiply-shift, uniform in [0, n) up to a bias of n / 2^32.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>

namespace ixo::gen_detail {

struct NormalKnots;  // the knot table, built once per process (fast_draws.cpp)

class FastDraws {
 public:
  explicit FastDraws(std::uint32_t seed);
  float normal();
  std::size_t index(std::size_t n) { return static_cast<std::size_t>((std::uint64_t{g_()} * n) >> 32); }
  std::uint32_t bits() { return static_cast<std::uint32_t>(g_()); }

 private:
  std::mt19937 g_;
  const NormalKnots& knots_;
};

}  // namespace ixo::gen_detail
