// Shared bits of the GPU test suites.
#pragma once
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>

#include "backend.hpp"
#include <cstdint>
#include <utility>
#include <vector>

#include "common/mutants.hpp"
#include "gpu/cuda_backends.hpp"
#include "ixo/case.hpp"
#include "ixo/observed.hpp"

namespace ixo::test {

// Skips the current test (reported as skipped, not passed) when no CUDA device exists.
#define IXO_REQUIRE_CUDA()                                                        \
  do {                                                                            \
    std::string why_;                                                             \
    if (!::ixo::make_cuda_rows_backend()->available(&why_)) GTEST_SKIP() << why_; \
  } while (0)

// Outputs of a launch on case c read back from the device (scores empty: ids only).
inline Observed observed_of(const Case& c, std::vector<std::int32_t> ids, std::vector<float> scores = {}) {
  Observed o;
  o.Hq = c.Hq;
  o.R = c.R;
  o.topk = c.cfg.topk;
  o.NB = c.NB();
  o.has_scores = !scores.empty();
  o.topk_idx = std::move(ids);
  o.scores = std::move(scores);
  return o;
}

// The catalogue mutant a mutation ctest injects into the launches of a named GPU test
// (`mutant.<key>` runs it with IXO_TEST_MUTANT=<key>, kernels/common/mutants.hpp "gpu-test");
// 0 (none) without the variable. An unknown key is an error, never a silent 0.
inline int test_mutant() {
  const char* v = std::getenv("IXO_TEST_MUTANT");
  if (v == nullptr || *v == '\0') return 0;
  for (const auto& m : ::ixo::mutants::sites)
    if (std::string(m.key) == v || std::to_string(m.id) == v) return m.id;
  throw std::runtime_error(std::string("IXO_TEST_MUTANT=") + v + " names no catalogue mutant");
}

}  // namespace ixo::test
