// The subcommands of `ixo` (main.cpp parses the flags into Args and calls one of these).
// Each returns the exit code: 0 pass, 1 fail; errors are thrown (InputError -> 2, else 3).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "backend.hpp"
#include "ixo/default_suite.hpp"
#include "ixo/fuzz.hpp"

namespace ixo::cli {

struct Args {
  std::string out, case_dir, topk_file, scores_file, backend, plot_dir, shard = "0/1", fuzz_json, contract;
  std::vector<std::string> backends;
  BackendOptions backend_opt;
  bool json = false, exact = false, failures_only = false, no_properties = false, no_groups = false,
       no_fixtures = false;
  SuiteOptions suite;
  FuzzOptions fuzz;
  std::function<bool(const char*)> given;  // was this flag given on the command line?
};

// Where `ixo gen` takes its case from: exactly one of a preset, a canonical fixture (its case
// and, for tie-free values, an exact_ids marker) or a generator spec file (spec.json).
struct GenSource {
  std::string preset, fixture, spec_file;
};
int gen(const GenSource& from, std::uint64_t seed, const std::string& out);
int ref(const std::string& dir, std::string out);
int run(const Args& a);
int check(const Args& a);
int fuzz(Args a);
int list();
// b (registry or command name `name`) on c: not available, not supporting the case or
// declining it (Unsupported) are bad input naming --backend.
Observed run_on_case(Backend& b, const std::string& name, const Case& c, const RunOptions& opt);
// Two backends on one case, bit for bit; the first difference placed in the native plan.
int diff(const Args& a, int chunks, int mutant);
// Prints the error (stderr; with --json also a JSON object on stdout) and returns `code`.
int error_exit(bool json, int code, const std::string& kind, const std::string& message, const std::string& field);

}  // namespace ixo::cli
