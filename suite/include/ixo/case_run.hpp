// One backend on one case, judged: the step every part of the suite repeats (default
// suite, fixtures, fuzz, the Python package). Outside kernels (exec:, callables) may
// decline a case or fail without outputs; both are handled here, once.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "backend.hpp"
#include "ixo/generate.hpp"
#include "ixo/verdict.hpp"

namespace ixo {

struct CaseRun {
  bool skipped = false;  // the backend declined the case (Unsupported): never a pass
  std::string skip_reason;
  bool has_observed = false;
  Observed observed;
  Verdict verdict;  // failing with the kernel's report when it produced nothing judgeable
};

// Runs b on c and judges against e. Poison is checked only for in-tree backends (and only
// when opt.check_poison is set); a KernelFailure becomes a failing verdict.
CaseRun run_and_judge(Backend& b, const Case& c, const Expected& e, JudgeOptions opt, const RunOptions& run = {});

// The backend that must agree with b bit for bit (b.traits().bitwise_twin, e.g.
// cuda-packed -> cuda-rows), built from the registry, or null when b declares none.
std::unique_ptr<Backend> make_bitwise_twin(const Backend& b);

// The raw pointers of owned backends (the suite functions take Backend*).
std::vector<Backend*> pointers_of(const std::vector<std::unique_ptr<Backend>>& owned);

// A failing generated case as a regression directory: the case files, spec.json (the
// generator spec and seed reproduce it), exact_ids when tier 3 applies, and failure.txt
// with the backend, the report and the exact replay command.
struct Regression {
  std::string dir;            // where to write (unique_regression_dir)
  std::string backend;        // name as given to --backend
  std::string what;           // "fuzz seed 7", "property matches-oracle", ...
  std::string report;         // the verdict summary
  std::string contract_json;  // the contract judged under, written as contract.json ("" = the spec)
};
// A fresh directory name under root for a failure of `backend` in `check` (fuzz, a property,
// a case group) with generator seed `seed`: backend-check-seedN, with -2, -3, .. when taken,
// so two backends or two runs into one folder never overwrite each other.
std::string unique_regression_dir(const std::string& root, const std::string& backend, const std::string& check,
                                  std::uint64_t seed);
// Creates root if needed and checks that a file can be written there (InputError(field)).
void require_writable_dir(const std::string& root, const std::string& field);
void write_regression(const Regression& r, const GenSpec& spec, std::uint64_t seed);
// The same for a case that has no generator spec (a fixture): case files, exact_ids when
// `exact`, failure.txt (`found_by_seed` < 0: no generator seed line).
void write_case_regression(const Regression& r, const Case& c, bool exact, std::int64_t found_by_seed = -1);

// The command that replays DIR on the backend: `ixo check DIR --backend 'NAME'` (NAME quoted
// for a POSIX shell; DIR/contract.json and DIR/exact_ids are picked up from the directory),
// or for a Python kernel "python:MODULE:NAME" a python3 line that imports it and calls
// indexer_oracle.replay.
std::string replay_command(const std::string& dir, const std::string& backend);

}  // namespace ixo
