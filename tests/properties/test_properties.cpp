// Properties that are not part of the conformance suite (tests/conformance runs the
// suite's properties, fixtures, case matrix, poison and twin checks for every registry
// backend). Here: OpenMP thread counts change nothing, for every registry backend of the
// CPU family (read from the traits). Label `property`; fixed seed (RC_PARAMS in
// CMakeLists.txt).
#include <memory>

#include "backend.hpp"
#include "ixo/backend_properties.hpp"
#include "property_check.hpp"

namespace {

std::vector<std::string> cpu_family() {
  std::vector<std::string> out;
  for (const auto& name : ixo::backend_names())
    if (ixo::backend_traits(name).family == "cpu") out.push_back(name);
  return out;
}

std::string safe(std::string s) {
  for (auto& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

class ThreadCount : public ::testing::TestWithParam<std::string> {};

TEST_P(ThreadCount, ChangesNothing) {
  const auto b = ixo::make_backend(GetParam());
  ixo::prop::check("Registry/ThreadCount", "ChangesNothing/" + safe(GetParam()), 10,
                   [&] { ixo::props::thread_count_changes_nothing(*b, {}); });
}

INSTANTIATE_TEST_SUITE_P(Registry, ThreadCount, ::testing::ValuesIn(cpu_family()),
                         [](const auto& info) { return safe(info.param); });

}  // namespace
