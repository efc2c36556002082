// One failure culture (issue 24): a failing kernel comparison in a GoogleTest saves the case,
// prints the replay line, places the first failing cell in the plan and writes the twin diff.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "ixo/case_io.hpp"
#include "common/mutants.hpp"
#include "ixo_test/support.hpp"

namespace ixo::test {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The failure directory: between "case saved: " and " (failure.txt".
std::string saved_dir(const std::string& message) {
  const auto a = message.find("case saved: ");
  if (a == std::string::npos) return "";
  const auto b = message.find(" (failure.txt", a);
  return message.substr(a + 12, b - a - 12);
}

struct FailureReport : ::testing::Test {
  fs::path root = fs::temp_directory_path() / ("ixo-failure-report-" + std::to_string(std::random_device{}()));
  void SetUp() override { setenv("IXO_TEST_FAILURES", root.c_str(), 1); }
  void TearDown() override {
    unsetenv("IXO_TEST_FAILURES");
    fs::remove_all(root);
  }
};

TEST_F(FailureReport, ABrokenKernelsFailureSavesTheCaseTheReplayLineThePlacedCellAndTheTwinDiff) {
  GenSpec s = GenSpec{}.rows(4, 4).up_to(2000).heads(2, 1, 64).blocks(16, 4, 1, 1);
  const Case c = generate(s, 5);
  RunOptions broken;
  broken.mutant = mutants::k_by_row_index;  // K read through the row's own index, not its slot
  const Observed o = make_backend("cpu-packed")->run(c, broken);
  const ::testing::AssertionResult r = matches_oracle(c, oracle(c), o, false, "cpu-packed k_by_row_index");
  ASSERT_FALSE(r);
  const std::string m = r.message();
  const std::string dir = saved_dir(m);
  ASSERT_FALSE(dir.empty()) << m;
  EXPECT_EQ(fs::path(dir).parent_path(), root) << m;
  EXPECT_NE(m.find("replay: ixo check '" + dir + "' --backend 'cpu-packed'"), std::string::npos) << m;
  EXPECT_NE(m.find("diff:   ixo diff " + dir + " --backend cpu-rows --backend cpu-packed"), std::string::npos) << m;
  EXPECT_NE(m.find("first failing "), std::string::npos) << m;
  EXPECT_NE(m.find("(program "), std::string::npos) << m;
  // The saved case is the case: the same outputs fail it the same way.
  const Case back = load_case(dir);
  EXPECT_FALSE(judge(back, oracle(back), o, kernel_judge_options(false)).pass);
  EXPECT_EQ(back.q, c.q);
  EXPECT_NE(read(fs::path(dir) / "failure.txt").find("replay: ixo check"), std::string::npos);
  const std::string twin = read(fs::path(dir) / "twin_diff.txt");
  EXPECT_NE(twin.find("first score difference"), std::string::npos) << twin;
  EXPECT_NE(twin.find("cpu-packed: CTA x"), std::string::npos) << twin;
}

TEST_F(FailureReport, APassingComparisonSavesNothing) {
  const Case c = generate(GenSpec{}.rows(2, 2).up_to(300).heads(2, 1, 64).blocks(16, 4, 1, 1), 6);
  const Observed o = make_backend("cpu-packed")->run(c);
  EXPECT_TRUE(matches_oracle(c, oracle(c), o, false, "cpu-packed"));
  EXPECT_TRUE(bitwise_equal(o, make_backend("cpu-rows")->run(c), c, "cpu-packed vs cpu-rows"));
  EXPECT_FALSE(fs::exists(root));
}

TEST_F(FailureReport, ABitwiseMismatchNamesTheFirstDifferingCellAndItsPlace) {
  const Case c = generate(GenSpec{}.rows(2, 4).up_to(600).heads(2, 1, 64).blocks(16, 4, 1, 1), 7);
  const Observed a = make_backend("cpu-packed")->run(c);
  Observed b = a;
  std::size_t at = b.scores.size();
  for (std::size_t i = 0; i < b.scores.size() && at == b.scores.size(); ++i)  // the first real score, one ulp up
    if (std::isfinite(b.scores[i]) && std::fabs(b.scores[i]) < 1e20f) {
      b.scores[i] = std::nextafter(b.scores[i], 1e30f);
      at = i;
    }
  ASSERT_LT(at, b.scores.size());
  const ::testing::AssertionResult r = bitwise_equal(a, b, c, "cpu-packed rerun");
  ASSERT_FALSE(r);
  const std::int64_t hr = static_cast<std::int64_t>(at) / c.NB();
  std::ostringstream cell;
  cell << "first score difference: [head " << hr / c.R << ", row " << hr % c.R << ", block "
       << static_cast<std::int64_t>(at) % c.NB() << "]";
  EXPECT_NE(std::string(r.message()).find(cell.str()), std::string::npos) << r.message();
  EXPECT_NE(std::string(r.message()).find("first: CTA x"), std::string::npos) << r.message();
}

}  // namespace
}  // namespace ixo::test
