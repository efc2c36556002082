// Per-test budgets for RapidCheck properties under GoogleTest, with a replay line.
//   IXO_PROP(Suite, Name, budget) { ... body using *gen ... }
// runs the body for `budget` cases (times IXO_PROP_SCALE, default 1) with the seed of
// RC_PARAMS (the ctest gate fixes it). A failure prints RapidCheck's shrunk
// counterexample, its reproduce string and the exact command that replays it.
#pragma once
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <functional>
#include <string>

namespace ixo::prop {

void check(const std::string& suite, const std::string& name, int budget, std::function<void()> body);

}  // namespace ixo::prop

#define IXO_PROP(Suite, Name, Budget)                                                               \
  static void ixo_prop_body_##Suite##_##Name();                                                     \
  TEST(Suite, Name) { ::ixo::prop::check(#Suite, #Name, Budget, &ixo_prop_body_##Suite##_##Name); } \
  static void ixo_prop_body_##Suite##_##Name()
