// Host tests written for operator mutants of kernels/common/indexer_common.hpp that the
// `ixo mutate` suite cannot see (ci/mutate-operators.py, docs/mutation.md).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "common/indexer_common.hpp"

namespace cm = ixo::common;

// Scores one ulp apart must still rank by score (the key keeps every bit of the float):
// kills `<< 32` -> `<< 31` in topk_key, which merges the last mantissa bit into the id part.
TEST(OperatorSurvivors, TopkKeyOrdersAdjacentFloats) {
  for (float x : {1.0f, -1.0f, 0.75f, 1e-30f, 3.0e29f}) {
    const float up = std::nextafter(x, INFINITY);
    EXPECT_GT(cm::topk_key(up, 1 << 20), cm::topk_key(x, 0)) << x;
    EXPECT_EQ(cm::topk_key_id(cm::topk_key(up, 77)), 77);
  }
}
