// Shared helpers for kernel tests (CPU twin and GPU backends).
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "backend.hpp"
#include "ixo/case.hpp"
#include "ixo/generate.hpp"
#include "ixo/observed.hpp"
#include "ixo/oracle.hpp"
#include "ixo/verdict.hpp"

namespace ixo::test {

// One generated case of the kernel matrix. `exact_ids`: tie-free inputs (Values::exact),
// ids must equal the oracle's with no tolerance.
struct NamedCase {
  std::string name;  // a valid gtest name part: [A-Za-z0-9_]
  GenSpec spec;
  std::uint64_t seed = 0;
  bool exact_ids = false;
  Case make() const { return generate(spec, seed); }
};
// gtest prints a NamedCase as its name.
void PrintTo(const NamedCase& c, std::ostream* os);

// The coverage matrix every backend runs: block-boundary prefixes, draft rows 1-5, GQA
// ratios (with packed fallbacks), all K dtypes with k_scale != 1, max and lse, init 0-2 x
// local 0-3, topk above/below/crossing nb, slot tables (permuted, gapped, explicit,
// identity), negative token-slot aliases, padding and inactive requests, exact and near-tie
// values, the M3 shapes. Small enough to run in seconds on 2 cores.
const std::vector<NamedCase>& kernel_cases();
// A smaller subset for the heavier variant checks (chunks, threads).
std::vector<NamedCase> kernel_cases_subset(int every);
// For INSTANTIATE_TEST_SUITE_P name generators.
std::string case_param_name(const ::testing::TestParamInfo<NamedCase>& info);
// Stable 64-bit seed from a name (FNV-1a).
std::uint64_t seed_of(const std::string& name);

// One line naming the case's shape and config (for failure messages).
std::string describe(const Case& c);

// Judge options of the kernel suites: tiers 1-2 (3 when exact_ids), scores within tau,
// the poison check on.
JudgeOptions kernel_judge_options(bool exact_ids, std::uint32_t poison_bits = kScorePoisonBits);

// Success when the verdict passes; otherwise its summary and the case description.
::testing::AssertionResult verdict_ok(const Verdict& v, const Case& c, const std::string& what);
// Judge `o` against `e` with kernel_judge_options.
::testing::AssertionResult matches_oracle(const Case& c, const Expected& e, const Observed& o, bool exact_ids,
                                          const std::string& what,
                                          std::uint32_t poison_bits = kScorePoisonBits);
// Bitwise equality of ids and every score cell (poison included).
::testing::AssertionResult bitwise_equal(const Observed& a, const Observed& b, const Case& c, const std::string& what);

// True when the oracle's top-k of (h, r) is separated from the rest by more than the
// error bounds, so every correct kernel must pick exactly these ids (or nb <= topk).
bool clear_margin(const Expected& e, std::int64_t h, std::int64_t r);

}  // namespace ixo::test
