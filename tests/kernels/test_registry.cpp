// The backend registry: names, order, construction, unknown names.
#include <gtest/gtest.h>

#include <algorithm>

#include "backend.hpp"
#include "ixo/error.hpp"

namespace {

TEST(BackendRegistry, ListsTheCpuTwinFirst) {
  const auto names = ixo::backend_names();
  ASSERT_GE(names.size(), 2u);
  EXPECT_EQ(names[0], "cpu-rows");
  EXPECT_EQ(names[1], "cpu-packed");
#if defined(IXO_TEST_EXPECT_CUDA)
  EXPECT_NE(std::find(names.begin(), names.end(), "cuda-rows"), names.end());
#endif
}

TEST(BackendRegistry, MakesEveryListedBackendUnderItsName) {
  for (const auto& n : ixo::backend_names()) {
    const auto b = ixo::make_backend(n);
    ASSERT_NE(b, nullptr) << n;
    EXPECT_EQ(b->name(), n);
  }
  std::string why;
  EXPECT_TRUE(ixo::make_backend("cpu-rows")->available(&why)) << why;
  EXPECT_TRUE(ixo::make_backend("cpu-packed")->available(&why)) << why;
}

TEST(BackendRegistry, UnknownNameIsAnInputErrorListingKnownNames) {
  try {
    ixo::make_backend("cpu-rowz");
    FAIL() << "no exception";
  } catch (const ixo::InputError& e) {
    EXPECT_EQ(e.field(), "backend");
    const std::string what = e.what();
    EXPECT_NE(what.find("unknown backend 'cpu-rowz'"), std::string::npos) << what;
    EXPECT_NE(what.find("cpu-rows"), std::string::npos) << what;
    EXPECT_NE(what.find("cpu-packed"), std::string::npos) << what;
  }
}

}  // namespace
