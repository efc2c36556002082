// One assertion the case-file tests share (test_bad_input, test_new_dtypes, test_paged):
// load_case(dir) throws an InputError for `field` whose message holds every needle.
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ixo/case_io.hpp"
#include "ixo/error.hpp"

namespace ixo::test {

inline void expect_load_error(const std::string& dir, const std::string& field,
                              const std::vector<std::string>& needles) {
  try {
    ixo::load_case(dir);
    FAIL() << "no error; expected one for " << field;
  } catch (const ixo::InputError& e) {
    EXPECT_EQ(e.field(), field) << e.what();
    for (const auto& n : needles)
      EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what() << " lacks " << n;
  }
}

}  // namespace ixo::test
