// run_property (suite/src/property_runner.cpp): a failing property's description is the
// failing case's own message, without RapidCheck's macro text and source path.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <stdexcept>

#include "ixo/property_runner.hpp"

namespace {

TEST(PropertyRunner, AFailuresDescriptionIsItsOwnMessage) {
  const auto r = ixo::run_property("always-fails", 3, 1, [] { RC_FAIL("the kernel chose block 7"); });
  ASSERT_EQ(r.status, ixo::PropertyResult::Status::failed);
  EXPECT_EQ(r.description, "the kernel chose block 7");
}

TEST(PropertyRunner, AFailedAssertionIsDescribedWithoutTheSourcePath) {
  const auto r = ixo::run_property("assert-fails", 3, 1, [] { RC_ASSERT(1 + 1 == 3); });
  ASSERT_EQ(r.status, ixo::PropertyResult::Status::failed);
  EXPECT_EQ(r.description.find(".cpp"), std::string::npos) << r.description;
  EXPECT_FALSE(r.description.empty());
  EXPECT_NE(r.description.front(), '\n') << r.description;
}

// An exception thrown by the body (a kernel failure) is described with its whole message:
// never an empty line first, never "(no message)" (that was the one-line case until session
// 12: RapidCheck's "Exception thrown with message:" header was taken for a FILE:LINE: line).
TEST(PropertyRunner, AnExceptionsDescriptionNeverStartsWithANewline) {
  const auto r = ixo::run_property("throws", 3, 1, [] { throw std::runtime_error("first line\nsecond line"); });
  ASSERT_EQ(r.status, ixo::PropertyResult::Status::failed);
  ASSERT_FALSE(r.description.empty());
  EXPECT_NE(r.description.front(), '\n') << r.description;
  EXPECT_NE(r.description.find("first line\nsecond line"), std::string::npos) << r.description;
}

TEST(PropertyRunner, AOneLineExceptionMessageIsShown) {
  const auto r =
      ixo::run_property("throws-one-line", 3, 1, [] { throw std::runtime_error("kernel launch failed: 700"); });
  ASSERT_EQ(r.status, ixo::PropertyResult::Status::failed);
  EXPECT_NE(r.description.find("kernel launch failed: 700"), std::string::npos) << r.description;
  EXPECT_EQ(r.description.find("(no message)"), std::string::npos) << r.description;
}

}  // namespace
