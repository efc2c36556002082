// The conformance suite as GoogleTest tests, for any backend: ours (every registry entry
// goes through it, tests/conformance) or a kernel of an outside C++ project, judged from
// that project's own GoogleTest binary:
//
//   int main(int argc, char** argv) {
//     testing::InitGoogleTest(&argc, argv);
//     ixo::register_conformance("my-kernel", [] { return std::make_unique<MyKernel>(); });
//     return RUN_ALL_TESTS();
//   }
//
// One test per check, in suite "Conformance/<name>" (non-alphanumerics -> '_'):
//   property_<p>   each property of the suite (RapidCheck, fixed seed, shrinking); a failure
//                  prints the shrunk case's report, the directory it was written to and its
//                  replay command
//   fixture_<f>    each fixture (fixtures/canonical, fixtures/regressions)
//   matrix_<g>     the kernel case matrix: the default suite's preset groups
//   poison         in-tree backends only: the matrix again under a second poison pattern
//   twin_matrix, twin_property   when traits().bitwise_twin is set: bit-for-bit equality
// A backend that is unavailable here, or cases it does not support, give GTEST_SKIP with
// the reason, never a pass.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "backend.hpp"
#include "ixo/contract.hpp"

namespace ixo {

using BackendFactory = std::function<std::unique_ptr<Backend>()>;

struct ConformanceOptions {
  int property_cases = 12;  // cases per property
  std::uint64_t seed = 20261201;
  std::string regression_dir;  // "" = a temporary folder; failing cases are written here
  // register_conformance_for_registry only: "" = every registry backend, else only those
  // whose traits().family is this ("cpu", "cuda"), so each family gets its ctest labels.
  std::string family;
  // The kernel's contract (docs/contracts.md): properties draw inside it, matrix and fixture
  // cases outside it are not run, every verdict judges its semantics. None: the backend's own
  // (traits().contract: "spec" for outside kernels).
  std::optional<Contract> contract;
};

// Registers the whole conformance suite for one backend as GoogleTest tests
// (testing::RegisterTest). The factory is called once at registration (to read traits()
// and in_tree()) and once more, lazily, by the first test that runs. Call before
// RUN_ALL_TESTS.
void register_conformance(const std::string& name, BackendFactory factory, const ConformanceOptions& opt = {});
// The same, judged inside `contract` (e.g. ixo::named_contract("sglang-triton-decode") or
// ixo::load_contract("my_kernel.contract.json")).
void register_conformance(const std::string& name, BackendFactory factory, const Contract& contract,
                          ConformanceOptions opt = {});

// Registers it for every registry backend (make_backend(name) as the factory).
void register_conformance_for_registry(const ConformanceOptions& opt = {});

}  // namespace ixo
