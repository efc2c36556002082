// cuda-cp, packed path, local_blocks 0 with rows of different lengths in one packed group
// (issue 13: not exercised on the GPU before). Labels cp;cuda; skipped without a device.
// Each case: packed CP == per-row CP bit for bit, ids == cuda-rows ids, vs the oracle.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "backend.hpp"
#include "cp_cases.hpp"
#include "gpu/cp_backends.hpp"
#include "gpu/cuda_backends.hpp"
#include "ixo/generate.hpp"
#include "ixo/oracle.hpp"
#include "ixo_test/support.hpp"

namespace {

struct Local0 {
  std::string name;
  ixo::GenSpec spec;
};

// Prefixes m*bs - 2 (and -1, +0): a group of P rows mixes nb = m and m + 1; local 0 so no
// row re-forces its own last block, init 0/1, topk below nb.
std::vector<Local0> cases() {
  std::vector<Local0> v;
  for (int world : {1, 2, 4, 8})
    for (int P : {2, 3, 4}) {
      if (P * world > 16) continue;  // the CP pack limit: then the per-row plan runs
      for (ixo::ScoreType st : {ixo::ScoreType::max, ixo::ScoreType::lse}) {
        ixo::GenSpec s = ixo::GenSpec{}
                             .rows(3, P)
                             .heads(world, 1, 64)
                             .lengths({16 * 5 - 2, 16 * 9 - 1, 16 * 12 - P})
                             .blocks(16, 3, st == ixo::ScoreType::max ? 1 : 0, 0)
                             .score(st)
                             .k(world == 4 ? ixo::KDtype::e4m3fn : ixo::KDtype::bf16, world == 4 ? 0.75 : 1.0);
        // Built with a stream: GCC 12 -O2 reports a false -Wrestrict on chained string +.
        std::ostringstream name;
        name << "w" << world << "_p" << P << "_" << ixo::to_string(st);
        v.push_back({name.str(), s});
      }
    }
  return v;
}

class CudaCpLocal0 : public ::testing::TestWithParam<Local0> {};

TEST_P(CudaCpLocal0, PackedEqualsRowsAndOracle) {
  std::string why;
  if (!ixo::make_cuda_cp_backend()->available(&why)) GTEST_SKIP() << why;
  const ixo::Case c = ixo::generate(GetParam().spec, 11);
  ASSERT_TRUE(ixo::make_cuda_cp_backend()->supports(c, &why)) << why;
  const ixo::Expected e = ixo::oracle(c);
  const ixo::Observed packed = ixo::make_cuda_cp_backend(true)->run(c);
  const ixo::Observed rows = ixo::make_cuda_cp_backend(false)->run(c);
  const ixo::Observed native = ixo::test::ids_only(ixo::make_cuda_rows_backend()->run(c));
  const std::string what = GetParam().name;
  EXPECT_TRUE(ixo::test::matches_oracle(c, e, packed, false, "cuda-cp packed " + what));
  EXPECT_TRUE(ixo::test::bitwise_equal(rows, packed, c, "cuda-cp per-row vs packed " + what));
  EXPECT_TRUE(ixo::test::bitwise_equal(native, packed, c, "cuda-rows vs cuda-cp ids " + what));
}

INSTANTIATE_TEST_SUITE_P(Local0, CudaCpLocal0, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Local0>& i) { return i.param.name; });

}  // namespace
