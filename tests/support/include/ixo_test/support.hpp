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

// Small verify batches: bs 16, topk 4, init 1, local 1, D 64, Hq 2 : Hk 1, 2 requests x 4
// (prefixes up to 300). The base of most kernel-matrix rows (tests/kernels/test_kernel_matrix.cpp).
GenSpec small_verify_spec();
// For INSTANTIATE_TEST_SUITE_P name generators.
std::string case_param_name(const ::testing::TestParamInfo<NamedCase>& info);
// Stable 64-bit seed from a name (FNV-1a).
std::uint64_t seed_of(const std::string& name);

// One line naming the case's shape and config (for failure messages).
std::string describe(const Case& c);

// Judge options of the kernel suites: tiers 1-2 (3 when exact_ids), scores within tau,
// the poison check on.
JudgeOptions kernel_judge_options(bool exact_ids, std::uint32_t poison_bits = kScorePoisonBits);

// Success when the verdict passes. Otherwise its summary and the case description, and the
// case saved for replay (issue 24: one failure culture): a directory under failure_root()
// named after the backend and the test, with failure.txt, the `ixo check DIR --backend B`
// replay line, the plan place (CTA, program, tile row, chunk) of the first failing cell and,
// for a backend with a twin (cuda-X -> cpu-X, cpu-packed -> cpu-rows), the `ixo diff` line;
// with `observed`, twin_diff.txt (the twin run in-process, first difference placed). B is the
// first word of `what` when it names a registry backend.
::testing::AssertionResult verdict_ok(const Verdict& v, const Case& c, const std::string& what, bool exact_ids = false,
                                      const Observed* observed = nullptr);
// Where failing kernel tests save their cases: $IXO_TEST_FAILURES, else ./ixo-test-failures
// (ctest runs a test in its build directory).
std::string failure_root();
// Judge `o` against `e` with kernel_judge_options.
::testing::AssertionResult matches_oracle(const Case& c, const Expected& e, const Observed& o, bool exact_ids,
                                          const std::string& what, std::uint32_t poison_bits = kScorePoisonBits);
// Observed with only its ids (for comparing a CP backend, which has no score buffer, or ids alone).
Observed ids_only(Observed o);
// Bitwise equality of ids and every score cell (poison included).
::testing::AssertionResult bitwise_equal(const Observed& a, const Observed& b, const Case& c, const std::string& what);

// Graph-padded batches built by hand from a generated one, each putting one kind of row
// exactly where a packed kernel could go wrong (packed_queries is a launch hint: all are
// valid). `what` says what the edit did.
struct EditedCase {
  std::string name;  // [A-Za-z0-9_]
  Case c;
  std::string what;
};
// The base: 4 requests x 4 draft rows (P 4), Hq 2 : Hk 1, bs 2, topk 2, init 0, local 1,
// D 64, prefixes 37, 47, 61, 24 (padding rows of length >= 5 are non-trivial: scored).
GenSpec graph_edit_base_spec();
// Edits of `base` (P = its packed_queries, at least 3 whole groups of one request each):
// length-0 rows first in and inside packing groups; slot ids past the table inside groups;
// lengths not in chain-verify order; packed_queries P+1, P-1, 2P over the same rows; a
// partial group of real rows; a padding group, padding rows alone, inactive rows after the
// groups; a group alternating a request's rows with padding rows.
std::vector<EditedCase> graph_batch_edits(const Case& base);
// gtest prints an EditedCase as its name and edit.
void PrintTo(const EditedCase& c, std::ostream* os);

// True when the oracle's top-k of (h, r) is separated from the rest by more than the
// error bounds, so every correct kernel must pick exactly these ids (or nb <= topk).
bool clear_margin(const Expected& e, std::int64_t h, std::int64_t r);

}  // namespace ixo::test
