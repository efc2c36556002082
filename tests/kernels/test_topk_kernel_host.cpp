// The top-k kernel's own code (gpu::detail::topk_kernel<256> of kernels/gpu/topk_kernel.cuh: the
// row plan and tail ids, the radix select and compaction of radix_select.cuh and, built with
// IXO_TOPK_BALLOT=1, the vote selection of ballot_select.cuh) run on the host: one CTA of 256
// fibers a row through kernels/sim_host's stand-in for gpu_port.hpp. The rows are the GPU test's
// (tests/support's topk_rows.hpp, the same shapes as CudaTopk/TopkRadix), each row's
// ids compared with the oracle's select_topk on the same scores. This is what checks the
// production top-k without a GPU; the H200 runs the same rows through the CUDA build.
#include <gtest/gtest.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "gpu/topk_kernel.cuh"  // IXO_SIM_HOST: through kernels/sim_host/gpu_port_host.hpp
#include "ixo/oracle.hpp"
#include "ixo_test/topk_rows.hpp"
#include "mutants.hpp"

namespace ixo::test {
namespace {

constexpr int NT = gpu::detail::kTopkThreads;

// topk_kernel<NT> (the vote instantiation where launch_topk picks it) over the case's rows (one query
// row each, nb = the row length, every row active), CTAs one after another; the ids row by row. Ids
// never written stay 0x7f7f7f7f.
std::vector<std::int32_t> run_topk_kernel(const TopkCase& tc, int mutant) {
  const TopkLaunchInputs in = topk_launch_inputs(tc);
  const std::int64_t R = in.config.R;
  std::vector<std::int32_t> ids(static_cast<std::size_t>(R * tc.k), 0x7f7f7f7f);
  gpu::detail::TopkParams p{};
  static_cast<common::IndexConfig&>(p) = in.config;
  p.scores = in.scores.data();
  p.slot = in.slots.data();
  p.lens = in.lens.data();
  p.out = ids.data();
  p.mutant = mutant;
  // The instantiation launch_topk picks.
  gpu::detail::with_vote_instantiation(gpu::detail::topk_rows_fit_votes(p, NT), [&](auto votes) {
    for (std::int64_t r = 0; r < R; ++r)
      simt_host::run_cta(NT, static_cast<unsigned>(r), static_cast<unsigned>(R),
                         [&] { gpu::detail::topk_kernel<NT, decltype(votes)::value>(p); });
  });
  return ids;
}

// Rows whose kernel ids differ from select_topk's, with the first difference described.
std::vector<std::string> rows_differing(const TopkCase& tc, const std::vector<std::int32_t>& ids) {
  const std::int64_t NB = static_cast<std::int64_t>(tc.rows[0].size());
  std::vector<std::string> bad;
  for (std::size_t r = 0; r < tc.rows.size(); ++r) {
    std::vector<double> s(tc.rows[r].begin(), tc.rows[r].end());
    std::vector<std::int32_t> want(tc.k);
    select_topk(s.data(), NB, tc.k, want.data());
    for (int i = 0; i < tc.k; ++i)
      if (ids[r * tc.k + i] != want[i]) {
        std::ostringstream os;
        os << "row " << r << " slot " << i << ": id " << ids[r * tc.k + i] << ", the oracle's " << want[i];
        bad.push_back(os.str());
        break;
      }
  }
  return bad;
}

class TopkKernelHost : public ::testing::TestWithParam<TopkShape> {};

TEST_P(TopkKernelHost, IdsMatchTheOracleSelection) {
  const TopkShape sh = GetParam();
  const TopkCase tc = topk_case(sh.nb, sh.k, 7u + static_cast<std::uint32_t>(sh.nb * 31 + sh.k));
  ASSERT_GT(sh.nb, sh.k) << "setup: rows must be ranked (nb > topk), not the trivial shortcut";
  const std::vector<std::string> bad = rows_differing(tc, run_topk_kernel(tc, 0));
  EXPECT_TRUE(bad.empty()) << bad.size() << " of " << tc.rows.size() << " rows differ; first: " << bad.front();
}

// The shapes of CudaTopk/TopkRadix (topk_rows.hpp's kTopkShapes), in both builds: built with the
// knob, the vote selection's shapes take it and the others (k > 64, nb > 4096) the radix select.
INSTANTIATE_TEST_SUITE_P(Host, TopkKernelHost, ::testing::ValuesIn(kTopkShapes),
                         [](const ::testing::TestParamInfo<TopkShape>& i) { return topk_shape_name(i.param); });

// The comparison above fails on the kernel's own top-k mutants (compiled in with IXO_MUTANTS):
// each makes at least one row of its shape differ from the oracle.
struct MutantShape {
  int mutant;
  TopkShape shape;
};
TEST(TopkKernelHost, TheComparisonCatchesTheTopkMutants) {
  if (!IXO_MUTANT(mutants::ids_unsorted, mutants::ids_unsorted)) GTEST_SKIP() << "mutants not compiled";
  const MutantShape table[] = {{mutants::ids_unsorted, {600, 33}},
                               {mutants::tie_rule_reversed, {600, 33}},
                               {mutants::topk_one_short, {300, 64}},
                               {mutants::topk_capped_512, {1024, 600}},
                               {mutants::topk_early_stop_partial_bin, {5000, 16}}};
  for (const MutantShape& m : table) {
    const TopkCase tc = topk_case(m.shape.nb, m.shape.k, 11u);
    EXPECT_FALSE(rows_differing(tc, run_topk_kernel(tc, m.mutant)).empty())
        << "mutant " << m.mutant << " at nb " << m.shape.nb << ", k " << m.shape.k << " gave the oracle's ids";
  }
}

}  // namespace
}  // namespace ixo::test
