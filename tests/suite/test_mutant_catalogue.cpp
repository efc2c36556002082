// The mutant catalogue's prose (suite/include/ixo/mutant_catalogue.hpp) joined with the
// kernels' sites (kernels/common/mutants.hpp).
#include <gtest/gtest.h>

#include <string>

#include "ixo/mutant_catalogue.hpp"

namespace {

// Every "gpu-test" mutant names the mutation ctest that runs it (tests/gpu/CMakeLists.txt
// adds `mutant.<key>` for each): its killer reads "ctest:mutant.<key> (...)".
TEST(MutantCatalogue, GpuTestMutantsNameTheirCtest) {
  int n = 0;
  for (const auto& m : ixo::mutants::catalogue) {
    if (std::string(m.where) != "gpu-test") continue;
    ++n;
    EXPECT_EQ(std::string(m.killer).rfind(std::string("ctest:mutant.") + m.key + " (", 0), 0u)
        << m.key << ": " << m.killer;
  }
  EXPECT_GE(n, 3);
}

// The join: each catalogue row carries its site's id and where, and says something.
TEST(MutantCatalogue, EveryRowIsItsSiteWithProse) {
  ASSERT_EQ(std::size(ixo::mutants::catalogue), std::size(ixo::mutants::sites));
  for (const auto& m : ixo::mutants::catalogue) {
    const ixo::mutants::Site* site = nullptr;
    for (const auto& s : ixo::mutants::sites)
      if (s.id == m.id) site = &s;
    ASSERT_NE(site, nullptr) << m.key;
    EXPECT_STREQ(site->key, m.key);
    EXPECT_STREQ(site->where, m.where);
    EXPECT_GT(std::string(m.bug).size(), 10u) << m.key;
    EXPECT_GT(std::string(m.input).size(), 3u) << m.key;
    EXPECT_GT(std::string(m.killer).size(), 3u) << m.key;
  }
  EXPECT_STREQ(ixo::mutants::catalogue[0].key, "group_nb_for_rows");
  EXPECT_EQ(ixo::mutants::catalogue[0].id, 1);
  EXPECT_STREQ(ixo::mutants::catalogue[0].killer, "fixture:boundary-32767");
}

}  // namespace
