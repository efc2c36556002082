// Properties over every available backend (label `property`). The gate runs a fixed seed
// (RC_PARAMS in CMakeLists.txt); `ixo fuzz` runs fresh seeds.
#include <omp.h>

#include <cstring>
#include <map>
#include <memory>

#include "backend.hpp"
#include "ixo/arbitrary.hpp"
#include "ixo/oracle.hpp"
#include "ixo/transform.hpp"
#include "ixo/verdict.hpp"
#include "property_check.hpp"

namespace {

ixo::Backend& backend(const std::string& name) {
  static std::map<std::string, std::unique_ptr<ixo::Backend>> cache;
  auto& b = cache[name];
  if (!b) b = ixo::make_backend(name);
  return *b;
}

// Skips (reported as skipped, never passed) when the backend is not built or cannot run.
bool usable(const std::string& name, std::string* why) {
  const auto names = ixo::backend_names();
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    *why = name + " is not built in this configuration";
    return false;
  }
  return backend(name).available(why);
}

ixo::Case draw_case(ixo::gen::Knobs k = {}) {
  const ixo::GenSpec spec = *ixo::gen::spec(k);
  const auto seed = *rc::gen::arbitrary<std::uint32_t>();
  return ixo::generate(spec, seed);
}

// A case every named backend implements (others are discarded, not passed).
ixo::Case draw_case_for(std::initializer_list<std::string> names, ixo::gen::Knobs k = {}) {
  ixo::Case c = draw_case(k);
  for (const auto& n : names) RC_PRE(backend(n).supports(c));
  return c;
}

void assert_pass(const ixo::Verdict& v) {
  if (!v.pass) RC_FAIL(v.summary());
}

// Rows [0, R) of b must equal a bit for bit (ids and score rows).
void assert_same_rows(const ixo::Observed& a, const ixo::Observed& b, std::int64_t R) {
  for (std::int64_t h = 0; h < a.Hq; ++h)
    for (std::int64_t r = 0; r < R; ++r) {
      for (std::int64_t k = 0; k < a.topk; ++k)
        RC_ASSERT(a.topk_idx[static_cast<std::size_t>((h * a.R + r) * a.topk + k)] ==
                  b.topk_idx[static_cast<std::size_t>((h * b.R + r) * b.topk + k)]);
      for (std::int64_t n = 0; n < a.NB; ++n)
        RC_ASSERT(std::memcmp(&a.scores[static_cast<std::size_t>((h * a.R + r) * a.NB + n)],
                              &b.scores[static_cast<std::size_t>((h * b.R + r) * b.NB + n)], 4) == 0);
    }
}

using Body = void (*)(const std::string&);
void run_for(const std::string& backend_name, const char* suite, const char* name, int budget, Body body) {
  std::string why;
  if (!usable(backend_name, &why)) GTEST_SKIP() << why;
  ixo::prop::check(suite, name, budget, [=] { body(backend_name); });
}

}  // namespace

// One property body, instantiated per backend: CPU backends get more cases than GPU ones.
#define IXO_BACKEND_PROP(Name, CpuBudget, GpuBudget)                                                            \
  static void prop_##Name(const std::string& backend_name);                                                    \
  TEST(CpuRows, Name) { run_for("cpu-rows", "CpuRows", #Name, CpuBudget, &prop_##Name); }                     \
  TEST(CpuPacked, Name) { run_for("cpu-packed", "CpuPacked", #Name, CpuBudget, &prop_##Name); }               \
  TEST(CudaRows, Name) { run_for("cuda-rows", "CudaRows", #Name, GpuBudget, &prop_##Name); }                  \
  TEST(CudaPacked, Name) { run_for("cuda-packed", "CudaPacked", #Name, GpuBudget, &prop_##Name); }            \
  static void prop_##Name(const std::string& backend_name)

IXO_BACKEND_PROP(MatchesOracle, 60, 40) {
  const auto c = draw_case_for({backend_name});
  ixo::JudgeOptions opt;
  opt.check_poison = true;
  assert_pass(ixo::judge(c, ixo::oracle(c), backend(backend_name).run(c), opt));
}

IXO_BACKEND_PROP(ExactValuesGiveExactIds, 40, 25) {
  ixo::gen::Knobs k;
  k.values = ixo::Values::exact;
  const auto c = draw_case_for({backend_name}, k);
  ixo::JudgeOptions opt;
  opt.exact_ids = true;
  opt.check_poison = true;
  assert_pass(ixo::judge(c, ixo::oracle(c), backend(backend_name).run(c), opt));
}

IXO_BACKEND_PROP(NearTiesStayWithinTau, 30, 20) {
  ixo::gen::Knobs k;
  k.values = ixo::Values::near_tie;
  const auto c = draw_case_for({backend_name}, k);
  assert_pass(ixo::judge(c, ixo::oracle(c), backend(backend_name).run(c)));
}

IXO_BACKEND_PROP(ChunkingChangesNothing, 30, 20) {
  const auto c = draw_case_for({backend_name});
  const auto chunks = *rc::gen::element(1, 2, 3, 7);
  ixo::RunOptions forced;
  forced.force_num_chunks = chunks;
  assert_pass(ixo::compare_bitwise(backend(backend_name).run(c), backend(backend_name).run(c, forced)));
}

IXO_BACKEND_PROP(PaddingAndInactiveRowsDisturbNothing, 30, 20) {
  const auto c = draw_case_for({backend_name});
  const auto padded = ixo::append_rows(c, *rc::gen::inRange(0, 3), *rc::gen::inRange(0, 3));
  const auto a = backend(backend_name).run(c), b = backend(backend_name).run(padded);
  assert_same_rows(a, b, c.R);
  // The appended rows themselves are right too.
  ixo::JudgeOptions opt;
  opt.check_poison = true;
  assert_pass(ixo::judge(padded, ixo::oracle(padded), b, opt));
}

IXO_BACKEND_PROP(RelabelingSlotsChangesNothing, 30, 20) {
  const auto c = draw_case_for({backend_name});
  const auto d = ixo::relabel_slots(c, *rc::gen::arbitrary<std::uint32_t>());
  assert_pass(ixo::compare_bitwise(backend(backend_name).run(c), backend(backend_name).run(d)));
}

// Packed and per-row kernels of one family run the same arithmetic: bitwise equal.
static void prop_packed_equals_rows(const std::string& family) {
  const auto c = draw_case_for({family + "-rows", family + "-packed"});
  assert_pass(ixo::compare_bitwise(backend(family + "-rows").run(c), backend(family + "-packed").run(c)));
}
TEST(Cpu, PackedEqualsRowsBitwise) {
  std::string why;
  if (!usable("cpu-packed", &why)) GTEST_SKIP() << why;
  ixo::prop::check("Cpu", "PackedEqualsRowsBitwise", 60, [] { prop_packed_equals_rows("cpu"); });
}
TEST(Cuda, PackedEqualsRowsBitwise) {
  std::string why;
  if (!usable("cuda-packed", &why) || !usable("cuda-rows", &why)) GTEST_SKIP() << why;
  ixo::prop::check("Cuda", "PackedEqualsRowsBitwise", 30, [] { prop_packed_equals_rows("cuda"); });
}

IXO_PROP(Cpu, ThreadCountChangesNothing, 20) {
  const auto c = draw_case();
  for (const char* name : {"cpu-rows", "cpu-packed"}) {
    const int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    const auto one = backend(name).run(c);
    omp_set_num_threads(2);
    const auto two = backend(name).run(c);
    omp_set_num_threads(saved);
    assert_pass(ixo::compare_bitwise(one, two));
  }
}
