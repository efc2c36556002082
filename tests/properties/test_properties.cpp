// Properties over every available backend (label `property`). The gate runs a fixed seed
// (RC_PARAMS in CMakeLists.txt); `ixo fuzz` runs fresh seeds. The bodies live in
// properties/src/backend_properties.cpp (the mutation campaign runs the same ones).
#include <map>
#include <memory>

#include "backend.hpp"
#include "ixo/backend_properties.hpp"
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

using Body = void (*)(ixo::Backend&, const ixo::RunOptions&);
void run_for(const std::string& name, const char* suite, const char* prop, int budget, Body body) {
  std::string why;
  if (!usable(name, &why)) GTEST_SKIP() << why;
  ixo::prop::check(suite, prop, budget, [=] { body(backend(name), {}); });
}

void run_pair(const std::string& family, const char* suite, int budget) {
  std::string why;
  if (!usable(family + "-rows", &why) || !usable(family + "-packed", &why)) GTEST_SKIP() << why;
  ixo::prop::check(suite, "PackedEqualsRowsBitwise", budget,
                   [=] { ixo::props::packed_equals_rows(backend(family + "-rows"), backend(family + "-packed"), {}); });
}

}  // namespace

// One property, instantiated per backend: CPU backends get more cases than GPU ones.
#define IXO_BACKEND_PROP(Name, body, CpuBudget, GpuBudget)                             \
  TEST(CpuRows, Name) { run_for("cpu-rows", "CpuRows", #Name, CpuBudget, body); }      \
  TEST(CpuPacked, Name) { run_for("cpu-packed", "CpuPacked", #Name, CpuBudget, body); } \
  TEST(CudaRows, Name) { run_for("cuda-rows", "CudaRows", #Name, GpuBudget, body); }   \
  TEST(CudaPacked, Name) { run_for("cuda-packed", "CudaPacked", #Name, GpuBudget, body); }

IXO_BACKEND_PROP(MatchesOracle, ixo::props::matches_oracle, 60, 40)
IXO_BACKEND_PROP(ExactValuesGiveExactIds, ixo::props::exact_values_give_exact_ids, 40, 25)
IXO_BACKEND_PROP(NearTiesStayWithinTau, ixo::props::near_ties_stay_within_tau, 30, 20)
IXO_BACKEND_PROP(ChunkingChangesNothing, ixo::props::chunking_changes_nothing, 30, 20)
IXO_BACKEND_PROP(PaddingAndInactiveRowsDisturbNothing, ixo::props::padding_and_inactive_rows_disturb_nothing, 30, 20)
IXO_BACKEND_PROP(RelabelingSlotsChangesNothing, ixo::props::relabeling_slots_changes_nothing, 30, 20)

TEST(Cpu, PackedEqualsRowsBitwise) { run_pair("cpu", "Cpu", 60); }
TEST(Cuda, PackedEqualsRowsBitwise) { run_pair("cuda", "Cuda", 30); }

TEST(Cpu, ThreadCountChangesNothing) {
  for (const char* name : {"cpu-rows", "cpu-packed"}) run_for(name, "Cpu", "ThreadCountChangesNothing", 10, ixo::props::thread_count_changes_nothing);
}
