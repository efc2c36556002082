// cpu-msa, the in-tree kernel under the msa-decode contract (issue 25 item 7), and the
// quantized selector's formulas (kernels/common/quantized_topk.hpp) against the verdict's
// independent re-derivation (reference/src/quantized_select.cpp) on MSA's top-k unit
// matrix: widths 16 .. 8192 and its value sets. Each test names the bug it catches.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <random>

#include "backend.hpp"
#include "ixo/contract.hpp"
#include "ixo/generate.hpp"
#include "ixo/oracle.hpp"
#include "ixo/quantized_select.hpp"
#include "ixo/transform.hpp"
#include "ixo/verdict.hpp"
#include "mutants.hpp"
#include "quantized_topk.hpp"

namespace ixo {
namespace {

namespace cm = ixo::common;

// The kernel side: keys from the common formulas, the `take` largest in order.
std::vector<std::int32_t> kernel_select(const std::vector<float>& s, int take) {
  float lo = INFINITY, hi = -INFINITY;
  for (float v : s) lo = fminf(lo, v), hi = fmaxf(hi, v);
  const cm::QuantizedMap m = cm::quantized_map(lo, hi);
  std::vector<std::uint32_t> keys;
  for (std::size_t b = 0; b < s.size(); ++b) keys.push_back(cm::quantized_key(s[b], static_cast<std::int32_t>(b), m));
  std::partial_sort(keys.begin(), keys.begin() + take, keys.end(), std::greater<>());
  std::vector<std::int32_t> ids;
  for (int i = 0; i < take; ++i) ids.push_back(cm::quantized_key_id(keys[i]));
  return ids;
}

std::vector<float> value_set(int kind, int n, std::mt19937_64& g) {
  std::vector<float> v(static_cast<std::size_t>(n));
  std::uniform_real_distribution<double> u100(-100, 100), u1e20(-1e20, 1e20), jit(-0.49, 0.49);
  std::normal_distribution<double> n7(0, 7);
  switch (kind) {
    case 0:
      for (auto& x : v) x = static_cast<float>(u100(g));
      break;
    case 1:
      std::fill(v.begin(), v.end(), 1.5f);
      break;
    case 2:
      for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = i % 4 < 2 ? 3.0f : 2.0f;
      break;
    case 3:
      for (auto& x : v) x = static_cast<float>(u1e20(g));
      break;
    case 4: {  // linspace over [-50, 50] in steps of the quantization step, +-0.49 step jitter
      const double step = 100.0 / 65534.0;
      for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(50.0 - (i + jit(g)) * step);
      v[0] = -50.0f, v[1] = 50.0f;
      std::shuffle(v.begin(), v.end(), g);
      break;
    }
    default:
      for (auto& x : v) x = static_cast<float>(n7(g));
      break;
  }
  return v;
}

// Bug caught: the kernel's selector drifting from MSA's (bucket formula, clamp, id field,
// tie rule) at any of MSA's unit-test widths or value sets.
TEST(QuantizedSelectorSweep, KernelFormulasEqualTheReDerivationBitForBit) {
  std::mt19937_64 g(20261203);
  int rows = 0;
  for (int n : {16, 17, 33, 65, 129, 257, 258, 513, 1025, 2049, 4097, 8192})
    for (int kind = 0; kind < 6; ++kind)
      for (int rep = 0; rep < 3; ++rep, ++rows) {
        const std::vector<float> s = value_set(kind, n, g);
        std::vector<std::int32_t> cand(static_cast<std::size_t>(n));
        std::iota(cand.begin(), cand.end(), 0);
        const int take = std::min(15, n);
        ASSERT_EQ(kernel_select(s, take), quantized_select(s.data(), cand, take))
            << "width " << n << " value set " << kind;
      }
  EXPECT_EQ(rows, 12 * 6 * 3);
}

// All-equal and 3,3,2,2 ties: exact, hand-worked: the lowest ids of the top value win.
TEST(QuantizedSelectorSweep, TiesAreExactByLowestId) {
  std::vector<float> s(20);
  for (int i = 0; i < 20; ++i) s[static_cast<std::size_t>(i)] = i % 4 < 2 ? 3.0f : 2.0f;  // 3 at 0,1,4,5,8,9,...
  EXPECT_EQ(kernel_select(s, 12), (std::vector<std::int32_t>{0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 2, 3}));
}

JudgeOptions under(const Contract& k) {
  JudgeOptions j;
  j.semantics = k.semantics;
  j.contract = k.label();
  j.check_poison = true;
  return j;
}

std::vector<Case> msa_cases() {
  const Contract k = named_contract("msa-decode");
  std::vector<Case> out;
  for (const char* p : {"msa-sweep", "msa-q16", "msa-lengths", "msa-batch-129", "msa-batch-1025", "msa-1m"})
    for (std::uint64_t seed : {1, 2, 3}) {
      const bool large = std::string(p) == "msa-batch-1025" || std::string(p) == "msa-1m";
      if (seed > 1 && large) break;  // 1025 requests; one 1,048,576-token row: one seed
      const Case g = generate(preset(p), seed);
      std::optional<Case> resolved;
      const Case* c = judged_form(k, g, resolved);
      EXPECT_TRUE(c) << p << " seed " << seed << ": " << *k.refuses(g);
      if (c) out.push_back(*c);
    }
  return out;
}

// MSA's length matrix, hand-written: seq_lens p*128 + {-1, 0, 1, 7} and 2^k +- 1, on shared
// 128-token pages (bug caught: a preset that drifts off the boundaries it is named for).
TEST(MsaPresets, LengthsSitOnPageBoundariesAndPagesAreShared) {
  const Case c = generate(preset("msa-lengths"), 1);
  std::vector<std::int64_t> lens(c.seq_lens.begin(), c.seq_lens.end());
  std::sort(lens.begin(), lens.end());
  const std::vector<std::int64_t> want = {2175, 2176, 2177, 2178, 2183, 2184, 4095, 4096,  4096,  4097,  4097,
                                          4098, 4103, 4104, 8191, 8192, 8193, 8194, 16383, 16384, 16385, 16386};
  for (std::int64_t L : want) EXPECT_NE(std::find(lens.begin(), lens.end(), L), lens.end()) << L;
  EXPECT_EQ(c.cfg.page_size, 128);
  ASSERT_FALSE(c.page_table.empty());
  std::vector<std::int32_t> pages(c.page_table.begin(), c.page_table.end());
  std::sort(pages.begin(), pages.end());
  EXPECT_LT(std::unique(pages.begin(), pages.end()) - pages.begin(), static_cast<std::ptrdiff_t>(c.page_table.size()))
      << "no physical page shared between requests";
  std::optional<Case> resolved;
  EXPECT_TRUE(judged_form(named_contract("msa-decode"), c, resolved));
  EXPECT_EQ(generate(preset("msa-batch-129"), 1).R, 129);
}

// The in-tree backend passes msa-decode's verdict bit-exactly (its own scores replayed).
TEST(CpuMsa, PassesTheMsaDecodeVerdictOnItsPresets) {
  const auto b = make_backend("cpu-msa");
  EXPECT_EQ(b->traits().contract, "msa-decode");
  const Contract k = named_contract("msa-decode");
  for (const Case& c : msa_cases()) {
    const Verdict v = judge(c, oracle(c), b->run(c, {}), under(k));
    EXPECT_TRUE(v.pass) << v.summary();
    EXPECT_GT(v.rows_checked, 0);
  }
}

// The planted selector bugs each fail, with a report naming what the verdict measured.
TEST(CpuMsa, EachPlantedSelectorBugFails) {
#if !defined(IXO_ENABLE_MUTANTS)
  GTEST_SKIP() << "a build without the mutant switches (IXO_MUTANTS=OFF)";
#endif
  const auto b = make_backend("cpu-msa");
  const Contract k = named_contract("msa-decode");
  const std::vector<Case> cases = msa_cases();
  const std::pair<int, const char*> bugs[] = {
      {mutants::msa_local_page_from_length, "structure"},  // slot 15 not n - 1
      {mutants::msa_bucket_off_by_one, "selector"},        // the replay on its own scores
      {mutants::msa_ties_higher_id, "selector"},
      {mutants::msa_range_over_forced, ""},  // hi/lo over the forced tail: ids or selector
  };
  for (const auto& [id, tier] : bugs) {
    RunOptions run;
    run.mutant = id;
    bool failed = false;
    std::string report;
    for (const Case& c : cases) {
      const Verdict v = judge(c, oracle(c), b->run(c, run), under(k));
      if (v.pass) continue;
      failed = true;
      report = v.reports[0];
      if (*tier) {
        EXPECT_EQ(v.details[0].tier, tier) << report;
      }
      break;
    }
    EXPECT_TRUE(failed) << "mutant " << id << " passed every msa case";
    EXPECT_NE(report.find("step"), std::string::npos) << report;  // every report names the quantized step
  }
}

}  // namespace
}  // namespace ixo
