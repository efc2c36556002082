// Shared bits of the GPU test suites.
#pragma once
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "backend.hpp"
#include "gpu/cuda_backends.hpp"

namespace ixo::test {

// Skips the current test (reported as skipped, not passed) when no CUDA device exists.
#define IXO_REQUIRE_CUDA()                                                           \
  do {                                                                               \
    std::string why_;                                                                \
    if (!::ixo::make_cuda_rows_backend()->available(&why_)) GTEST_SKIP() << why_;    \
  } while (0)

}  // namespace ixo::test
