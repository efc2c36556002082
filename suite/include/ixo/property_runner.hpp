// Runs one RapidCheck property body for a budget of cases and reports the outcome as data:
// the shrunk counterexample's message, its reproduce string, and the generator spec and
// seed of the case the body drew (so the suite can write it as a regression directory).
// Used by `ixo check`/`ixo fuzz`, the Python package and the gtest property suite.
#pragma once
#include <rapidcheck.h>

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>

#include "ixo/backend_properties.hpp"

namespace ixo {

struct PropertyResult {
  enum class Status { passed, failed, gave_up };  // gave_up: too many discarded (unsupported) cases
  Status status = Status::passed;
  int cases = 0;                               // cases that ran and passed
  int shrinks = 0;                             // shrink steps taken (failures)
  std::string message;                         // RapidCheck's report (counterexample, shrinks)
  std::string description;                     // the failing case's own message (RC_FAIL, RC_ASSERT),
                                               // without RapidCheck's macro text and source path
  std::string reproduce;                       // RapidCheck reproduce string (failures)
  std::optional<props::Drawn> counterexample;  // the shrunk drawn case (failures)
};

// seed 0 = RapidCheck's configured seed (RC_PARAMS). `reproduce` replays a failure.
PropertyResult run_property(const std::string& id, int cases, std::uint64_t seed, const std::function<void()>& body,
                            const std::unordered_map<std::string, rc::detail::Reproduce>& reproduce = {});

}  // namespace ixo
