// Release builds carry no mutant: this test is compiled WITHOUT IXO_ENABLE_MUTANTS (it
// builds its own copy of the CPU twin, kernels/cpu/cpu_twin.cpp, instead of linking the
// test build's ixo_cpu_twin), so every IXO_MUTANT switch in kernels/common and the twin is
// the constant false here. It checks that at compile time, and that a mutant id passed in
// RunOptions changes no output bit of either plan.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backend.hpp"
#include "common/indexer_common.hpp"
#include "cpu/cpu_backends.hpp"
#include "ixo/generate.hpp"
#include "ixo/verdict.hpp"

#if defined(IXO_ENABLE_MUTANTS)
#error "test_release_nomutants must be compiled without IXO_ENABLE_MUTANTS"
#endif

namespace {

constexpr int kSel = ixo::mutants::group_nb_for_rows;
static_assert(!IXO_MUTANT(kSel, kSel), "IXO_MUTANT must be the constant false in release builds");
static_assert(!IXO_MUTANT(ixo::mutants::stray_column_write, ixo::mutants::stray_column_write));

// The common formulas with every switch selected still compute the true formula.
TEST(ReleaseNoMutants, CommonFormulasIgnoreTheSelector) {
  namespace cm = ixo::common;
  for (const auto& m : ixo::mutants::sites) {
    SCOPED_TRACE(m.key);
    EXPECT_EQ(cm::forced_score(1.f, 5, 6, 6, 1, m.id), cm::forced_score(1.f, 5, 6, 6, 1));
    EXPECT_EQ(cm::wrap_slot(-3, 10, m.id), 7);
    EXPECT_EQ(cm::k_load_row((std::int64_t{1} << 24) + 5, 256, m.id), (std::int64_t{1} << 24) + 5);
    EXPECT_EQ(cm::table_row(99, 10, 4, 5, m.id), -1);
    EXPECT_EQ(cm::fp8_to_float(0x38, cm::kE4m3fnuz, m.id), cm::fp8_to_float(0x38, cm::kE4m3fnuz));
    EXPECT_EQ(cm::logit_multiplier(0.5f, 0.75f, m.id), cm::logit_multiplier(0.5f, 0.75f));
    EXPECT_EQ(cm::topk_key(1.f, 3, m.id), cm::topk_key(1.f, 3));
    EXPECT_EQ(cm::trivial_topk_id(5, 2, m.id), -1);
    EXPECT_EQ(cm::row_writes_scores(0, 2, 4, m.id), false);
    EXPECT_EQ(cm::lse_exp(1.f, m.id), 2.f);
    std::int64_t b0 = 0, b1 = 0;
    cm::chunk_blocks(10, 2, 0, &b0, &b1, m.id);
    EXPECT_EQ(b1, 5);
  }
}

// Every catalogued id (native and CP) through both plans of the twin: bitwise the run
// without a mutant.
TEST(ReleaseNoMutants, MutantIdsChangeNothing) {
  const std::vector<std::string> presets = {"tiny", "gqa", "padding", "local0", "topk-above-nb", "forced-overlap"};
  for (const auto& name : presets) {
    ixo::GenSpec spec = ixo::preset(name);
    if (name == "padding") spec.max_prefix = 1500;
    const ixo::Case c = ixo::generate(spec, 3);
    for (bool packed : {false, true}) {
      auto b = packed ? ixo::make_cpu_packed_backend() : ixo::make_cpu_rows_backend();
      const ixo::Observed base = b->run(c);
      for (const auto& m : ixo::mutants::sites) {
        ixo::RunOptions o;
        o.mutant = m.id;
        const ixo::Verdict v = ixo::compare_bitwise(base, b->run(c, o));
        EXPECT_TRUE(v.pass) << name << " " << b->name() << " mutant " << m.id << " (" << m.key
                            << "): " << (v.reports.empty() ? "" : v.reports[0]);
      }
    }
  }
}

}  // namespace
