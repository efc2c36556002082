// The generators' fast value draws (reference/src/fast_draws.hpp, issue 23). Each test names
// the bug it catches; each was shown to fail with that bug planted in fast_draws.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "fast_draws.hpp"

namespace ixo::gen_detail {
namespace {

constexpr int kDraws = 1 << 20;

std::vector<double> normals(std::uint32_t seed) {
  FastDraws d(seed);
  std::vector<double> v(kDraws);
  for (auto& x : v) x = d.normal();
  return v;
}

double fraction_below(const std::vector<double>& v, double x) {
  return static_cast<double>(std::count_if(v.begin(), v.end(), [x](double y) { return y < x; })) /
         static_cast<double>(v.size());
}

// Bug caught: a wrong quantile (erfc without the sqrt 2, a knot table not mirrored) or a
// slope off by a factor (pieces not joined): the CDF at -2..2 and the moments move far
// beyond the sampling error (1/sqrt(2^20) ~ 0.001).
TEST(FastDraws, NormalFollowsTheStandardNormalCdf) {
  const auto v = normals(12345);
  for (const double x : {-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0}) {
    const double phi = 0.5 * std::erfc(-x / std::sqrt(2.0));
    EXPECT_NEAR(fraction_below(v, x), phi, 0.004) << "at x = " << x;
  }
  double mean = 0, var = 0;
  for (const double x : v) mean += x;
  mean /= kDraws;
  for (const double x : v) var += (x - mean) * (x - mean);
  var /= kDraws;
  EXPECT_NEAR(mean, 0.0, 0.005);
  // Tails cut at the outer knots (|x| <= 3.67) take ~0.004 of the variance.
  EXPECT_NEAR(var, 0.997, 0.006);
}

// Bug caught: the lerp reading past the last knot (index 4096 + 1) or the outer knots placed
// at p = 0 / 1 (infinite values).
TEST(FastDraws, NormalIsFiniteAndBoundedByTheOuterKnots) {
  const auto v = normals(7);
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  const double outer = 3.6684;  // the quantile at p = 1 - 0.5 / 4097 (float-rounded knot: 3.66839)
  EXPECT_GE(*lo, -outer);
  EXPECT_LE(*hi, outer);
  EXPECT_LT(*lo, -3.5);  // the tails are reached
  EXPECT_GT(*hi, 3.5);
}

// Bug caught: index(n) out of [0, n) (a shift of 31, a 64-bit draw) or not uniform (a modulo
// of the top byte).
TEST(FastDraws, IndexIsUniformInRange) {
  FastDraws d(99);
  for (const std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{7}, std::size_t{123}, std::size_t{1} << 31}) {
    for (int i = 0; i < 10000; ++i) ASSERT_LT(d.index(n), n) << "n = " << n;
  }
  std::vector<int> hist(7);
  for (int i = 0; i < 700000; ++i) ++hist[d.index(7)];
  for (const int h : hist) EXPECT_NEAR(h, 100000, 1500);
}

// Bug caught: draws not reproducible from the seed (a generator seeded from the clock): every
// case of a seed must be the same bytes on every run.
TEST(FastDraws, SameSeedSameValuesOtherSeedOtherValues) {
  FastDraws a(5), b(5), c(6);
  int differ = 0;
  for (int i = 0; i < 1000; ++i) {
    const float x = a.normal();
    EXPECT_EQ(x, b.normal());
    differ += x != c.normal();
  }
  EXPECT_GT(differ, 990);
}

}  // namespace
}  // namespace ixo::gen_detail
