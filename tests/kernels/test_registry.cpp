// The backend registry: names, order, construction, unknown names, traits.
#include <gtest/gtest.h>

#include <algorithm>

#include "backend.hpp"
#include "external/exec_backend.hpp"
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

TEST(BackendRegistry, TraitsAreDeclaredAndConsistent) {
  const auto names = ixo::backend_names();
  for (const auto& n : names) {
    const auto b = ixo::make_backend(n);
    const ixo::BackendTraits& t = b->traits();
    const ixo::BackendTraits d = ixo::backend_traits(n);
    EXPECT_EQ(t.family, d.family) << n;
    EXPECT_EQ(t.bitwise_twin, d.bitwise_twin) << n;
    EXPECT_EQ(t.mutant_scope, d.mutant_scope) << n;
    EXPECT_EQ(t.packed, d.packed) << n;
    EXPECT_EQ(t.cpu_twin, d.cpu_twin) << n;
    if (!t.cpu_twin.empty()) {  // the CPU backend of the same plan (failure reports diff against it)
      ASSERT_NE(std::find(names.begin(), names.end(), t.cpu_twin), names.end()) << n << " -> " << t.cpu_twin;
      const ixo::BackendTraits ct = ixo::backend_traits(t.cpu_twin);
      EXPECT_EQ(ct.family, "cpu") << n;
      EXPECT_NE(t.family, "cpu") << n;
      EXPECT_EQ(ct.mutant_scope, t.mutant_scope) << n;
      EXPECT_EQ(ct.packed, t.packed) << n;
    }
    EXPECT_TRUE(t.in_tree && b->in_tree()) << n << ": registry backends are ours";
    EXPECT_TRUE(t.family == "cpu" || t.family == "cuda" || t.family == "sim") << n << ": " << t.family;
    EXPECT_EQ(t.in_default_set, t.family != "sim") << n << ": only the host simulation is opt-in";
    EXPECT_TRUE(t.mutant_scope == "native" || t.mutant_scope == "cp" || t.mutant_scope == "msa")
        << n << ": " << t.mutant_scope;
    if (t.bitwise_twin.empty()) continue;
    // A twin is another registry backend of the same family and catalogue part.
    ASSERT_NE(std::find(names.begin(), names.end(), t.bitwise_twin), names.end()) << n << " -> " << t.bitwise_twin;
    const ixo::BackendTraits tt = ixo::backend_traits(t.bitwise_twin);
    EXPECT_NE(t.bitwise_twin, n);
    EXPECT_EQ(tt.family, t.family) << n;
    EXPECT_EQ(tt.mutant_scope, t.mutant_scope) << n;
    EXPECT_TRUE(tt.bitwise_twin.empty()) << "twins do not chain: " << t.bitwise_twin;
  }
  const auto& packed = ixo::backend_traits("cpu-packed");
  EXPECT_EQ(packed.bitwise_twin, "cpu-rows");
  EXPECT_TRUE(packed.packed);
  EXPECT_EQ(ixo::backend_traits("cpu-cp").mutant_scope, "cp");
  EXPECT_EQ(ixo::backend_traits("cpu-cp").bitwise_twin, "");
  EXPECT_EQ(ixo::backend_traits("cpu-cp").ids_twin, "cpu-rows");  // the testbed's CP ids check
  EXPECT_EQ(packed.ids_twin, "");
  EXPECT_EQ(packed.cpu_twin, "");                                             // a CPU backend is its own reference
  if (std::find(names.begin(), names.end(), "cuda-packed") != names.end()) {  // a CUDA build (no device needed)
    EXPECT_EQ(ixo::backend_traits("cuda-packed").cpu_twin, "cpu-packed");
    EXPECT_EQ(ixo::backend_traits("cuda-rows").cpu_twin, "cpu-rows");
    EXPECT_EQ(ixo::backend_traits("cuda-cp").cpu_twin, "cpu-cp");
    EXPECT_EQ(ixo::backend_traits("cuda-cp").ids_twin, "cuda-rows");
  }
#if defined(IXO_TEST_EXPECT_CUDA)
  EXPECT_EQ(ixo::backend_traits("cuda-packed").bitwise_twin, "cuda-rows");
  EXPECT_EQ(ixo::backend_traits("cuda-cp").family, "cuda");
#endif
}

// The host simulation of the GPU kernels' portable path is listed and made by name, but runs only when
// named: ixo check / fuzz / mutate without --backend and the testbed take default_backend_names().
TEST(BackendRegistry, TheSimulatedKernelsAreOptIn) {
  const auto all = ixo::backend_names();
  const auto defaults = ixo::default_backend_names();
  for (const char* n : {"sim-rows", "sim-packed", "sim-cp"}) {
    EXPECT_NE(std::find(all.begin(), all.end(), n), all.end()) << n;
    EXPECT_EQ(ixo::make_backend(n)->name(), n);
  }
  for (const auto& n : all)  // the default set: every backend but the simulation, in registry order
    EXPECT_EQ(std::find(defaults.begin(), defaults.end(), n) != defaults.end(), ixo::backend_traits(n).family != "sim")
        << n;
  EXPECT_TRUE(std::is_sorted(defaults.begin(), defaults.end(), [&](const std::string& a, const std::string& b) {
    return std::find(all.begin(), all.end(), a) < std::find(all.begin(), all.end(), b);
  }));
  EXPECT_EQ(ixo::backend_traits("sim-packed").bitwise_twin, "sim-rows");
  EXPECT_EQ(ixo::backend_traits("sim-packed").cpu_twin, "cpu-packed");
  EXPECT_EQ(ixo::backend_traits("sim-rows").cpu_twin, "cpu-rows");
  EXPECT_EQ(ixo::backend_traits("sim-cp").ids_twin, "sim-rows");
  EXPECT_EQ(ixo::backend_traits("sim-cp").cpu_twin, "cpu-cp");
  EXPECT_EQ(ixo::backend_traits("sim-cp").mutant_scope, "cp");
  EXPECT_EQ(defaults.front(), "cpu-rows");
}

TEST(BackendRegistry, OutsideKernelsGetExternalTraits) {
  for (const auto& b : {ixo::make_backend("exec:/bin/true"),
                        ixo::make_callable_backend("k", [](const ixo::Case&) -> ixo::Observed { return {}; })}) {
    EXPECT_EQ(b->traits().family, "external") << b->name();
    EXPECT_FALSE(b->traits().in_tree) << b->name();
    EXPECT_FALSE(b->in_tree()) << b->name();
    EXPECT_EQ(b->traits().bitwise_twin, "") << b->name();
    EXPECT_EQ(b->traits().mutant_scope, "") << b->name();
  }
  EXPECT_EQ(ixo::backend_traits("exec:anything").family, "external");
  EXPECT_THROW(ixo::backend_traits("cpu-rowz"), ixo::InputError);
}

}  // namespace

// exec: splits its command like a POSIX shell. Expected words derived by bash itself
// (`bash -c "printf '[%s]' WORDS"`), not from the splitter. The escaped quote inside a quoted
// word ("x\"y") kills the operator mutant command[j + 1] -> command[j + 2] (a survivor of the
// session-14 judge-mutant run: the next-but-one character decided whether \ escapes).
TEST(BackendRegistry, ExecCommandSplitsLikeAShell) {
  using W = std::vector<std::string>;
  EXPECT_EQ(ixo::split_command("a b  c"), (W{"a", "b", "c"}));
  EXPECT_EQ(ixo::split_command("'a b' c"), (W{"a b", "c"}));
  EXPECT_EQ(ixo::split_command(R"("x\"y" z)"), (W{"x\"y", "z"}));
  EXPECT_EQ(ixo::split_command(R"("a\\b")"), (W{"a\\b"}));
  EXPECT_EQ(ixo::split_command(R"("a\b")"), (W{"a\\b"}));
  EXPECT_EQ(ixo::split_command(R"("\$HOME")"), (W{"$HOME"}));
  EXPECT_EQ(ixo::split_command(R"(a\ b)"), (W{"a b"}));
  EXPECT_EQ(ixo::split_command(R"("\`")"), (W{"`"}));
  EXPECT_THROW(ixo::split_command(R"("a\")"), ixo::InputError);  // the closing quote is escaped
  EXPECT_THROW(ixo::split_command("'open"), ixo::InputError);
}
