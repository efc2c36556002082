// The oracle, the verdict and case files from an installed IndexerOracle::reference, without
// the suite: generate a case, write and read it back, judge outputs against ixo::oracle.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "ixo/case_io.hpp"
#include "ixo/generate.hpp"
#include "ixo/oracle.hpp"
#include "ixo/verdict.hpp"
#include "toy_kernel.hpp"

namespace {

ixo::Observed as_observed(const ixo::Expected& e) {
  ixo::Observed o;
  o.Hq = e.Hq;
  o.R = e.R;
  o.topk = e.topk;
  o.topk_idx = e.topk_idx;
  return o;
}

TEST(Reference, CaseFilesRoundTrip) {
  const ixo::Case c = ixo::generate(ixo::preset("verify"), 1);
  const auto dir = std::filesystem::temp_directory_path() / "ixo-consumer-case";
  std::filesystem::remove_all(dir);
  ixo::save_case(c, dir.string());
  const ixo::Case back = ixo::load_case(dir.string());
  std::filesystem::remove_all(dir);
  EXPECT_EQ(back.seq_lens, c.seq_lens);
  EXPECT_EQ(ixo::oracle(back).topk_idx, ixo::oracle(c).topk_idx);
}

TEST(Reference, OracleIdsPassTheVerdictAndAWrongIdFails) {
  const ixo::Case c = ixo::generate(ixo::preset("verify"), 1);
  const ixo::Expected e = ixo::oracle(c);
  ixo::Observed o = as_observed(e);
  EXPECT_TRUE(ixo::judge(c, e, o).pass);
  o.topk_idx[0] = o.topk_idx[0] == 0 ? 1 : 0;  // a duplicate or an unselected block
  const ixo::Verdict v = ixo::judge(c, e, o);
  EXPECT_FALSE(v.pass);
  EXPECT_FALSE(v.reports.empty());
}

// One fixed case where the planted bug shows (a row whose last key decides its block).
TEST(Reference, ToyKernelJudgedOnOneCase) {
  const ixo::Case c = ixo::generate(ixo::preset("verify"), 1);
  const ixo::Verdict v = ixo::judge(c, ixo::oracle(c), toy::kernel(c));
  EXPECT_EQ(v.pass, !TOY_PLANTED_BUG) << v.summary();
  if (!v.pass) std::printf("planted bug seen by ixo::judge:\n%s\n", v.summary().c_str());
}

}  // namespace
