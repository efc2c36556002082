// One testbed for every in-tree kernel (CUTLASS's Testbed / TestAllGemm style): the registry's
// own backends that run the native or the context-parallel plan and can run here (the CPU
// twins always; cuda-rows, cuda-packed, cuda-cp on a GPU machine) go through the same case,
// each judged by the suite's own step (suite/case_run: run_and_judge) and held to the
// invariants its traits declare. A new in-tree kernel is one registry line: it joins every
// table that calls judge_every_backend. Every failure goes through tests/support's comparators,
// so it saves the case with its replay line, plan place and twin diff.
//
// Example (a case table at the test, see tests/kernels/test_kernel_matrix.cpp):
//   const Case c = generate(spec, seed_of(name));
//   const std::vector<std::string> judged =
//       judge_every_backend(c, name, /*exact_ids=*/false, RunOptions{}, TestbedChecks::all());
//   EXPECT_GE(judged.size(), 3u);  // cpu-rows, cpu-packed, cpu-cp at least
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backend.hpp"
#include "ixo/case.hpp"
#include "ixo_test/support.hpp"

namespace ixo::test {

// The invariants checked beyond the verdict (tiers 1-2, 3 on exact cases, poison), each for
// the backends whose traits declare it.
struct TestbedChecks {
  bool bitwise_twin = true;      // == traits.bitwise_twin bit for bit (cuda-packed == cuda-rows)
  bool ids_twin = true;          // ids == traits.ids_twin's bit for bit (cpu-cp ids == cpu-rows ids)
  bool rerun = false;            // a second run is bit for bit the first
  std::vector<int> chunk_plans;  // forced KV chunk counts: each bit for bit the plan's own
  bool other_poison = false;     // another NaN poison pattern survives outside the written region
  bool per_row_plan = false;     // context-parallel: RunOptions::per_row_plan == the packed plan
  // ids == traits.cpu_twin's (cuda-rows vs cpu-rows) on every (head, row) whose oracle
  // top-k is separated from the rest by more than the error bounds (the dot order differs).
  bool cpu_twin_ids = false;
  static TestbedChecks all() {
    TestbedChecks t;
    t.rerun = t.other_poison = t.per_row_plan = t.cpu_twin_ids = true;
    t.chunk_plans = {1, 3, 7};
    return t;
  }
};

// The in-tree registry backends of the native or CP plan (not the quantized MSA selector,
// judged under its own contract) available here, of the default set (not the opt-in simulation).
std::vector<std::string> runnable_backends();

// Runs every runnable backend on `c` with `opt` and checks the verdict and `checks`
// (gtest failures name the backend and `what`). Returns the backends that judged the case;
// one that declines it (Unsupported, or supports() false: a CP backend needs Hk == 1) is not
// counted.
std::vector<std::string> judge_every_backend(const Case& c, const std::string& what, bool exact_ids,
                                             const RunOptions& opt, const TestbedChecks& checks);

// The same for the named registry backends (e.g. the opt-in sim-rows / sim-packed).
std::vector<std::string> judge_backends(const std::vector<std::string>& names, const Case& c, const std::string& what,
                                        bool exact_ids, const RunOptions& opt, const TestbedChecks& checks);

// judge_backends on nc with gtest's failures intercepted, not reported (the cases they save go to a
// scratch directory, removed afterwards): how many failures the testbed found. A table of injected
// bugs expects > 0 from each.
int intercepted_failures(const std::vector<std::string>& names, const NamedCase& nc, const RunOptions& opt,
                         const TestbedChecks& checks);

// Success when `name` is among the backends judge_every_backend returned (a table row meant for
// a backend that silently declined it judged nothing).
::testing::AssertionResult judged_by(const std::vector<std::string>& judged, const std::string& name);

}  // namespace ixo::test
