#include "ixo/case_run.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "ixo/case_io.hpp"

namespace ixo {

namespace fs = std::filesystem;

CaseRun run_and_judge(Backend& b, const Case& c, const Expected& e, JudgeOptions opt, const RunOptions& run) {
  CaseRun out;
  opt.check_poison = opt.check_poison && b.in_tree();
  try {
    out.observed = b.run(c, run);
    out.has_observed = true;
  } catch (const Unsupported& u) {
    out.skipped = true;
    out.skip_reason = u.what();
    return out;
  } catch (const KernelFailure& f) {
    out.verdict = kernel_failure_verdict(f.what());
    return out;
  }
  out.verdict = judge(c, e, out.observed, opt);
  return out;
}

std::unique_ptr<Backend> make_bitwise_twin(const Backend& b) {
  const std::string& twin = b.traits().bitwise_twin;
  return twin.empty() ? nullptr : make_backend(twin);
}

std::vector<Backend*> pointers_of(const std::vector<std::unique_ptr<Backend>>& owned) {
  std::vector<Backend*> out;
  for (const auto& b : owned) out.push_back(b.get());
  return out;
}

std::string replay_command(const std::string& dir, const std::string& backend) {
  auto quote = [](const std::string& s) {
    std::string q = "'";
    for (char ch : s) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    return q + "'";
  };
  if (backend.rfind("python:", 0) == 0)  // a Python kernel: replay it where it lives
    return fmt::format("python3 -c \"import indexer_oracle as io; c = io.Case.load({}); io.assert_indexer(c, *{}(c))\"",
                       quote(dir), backend.substr(7));
  return fmt::format("ixo check {} --backend {}", quote(dir), quote(backend));
}

void write_case_regression(const Regression& r, const Case& c, bool exact, std::int64_t found_by_seed) {
  save_case(c, r.dir);
  if (exact) std::ofstream(fs::path(r.dir) / "exact_ids") << "1\n";
  std::ofstream(fs::path(r.dir) / "failure.txt")
      << fmt::format("backend {}\nfound by {}\n{}replay: {}\n{}\n", r.backend, r.what,
                     found_by_seed >= 0 ? fmt::format("generator seed {}\n", found_by_seed) : "",
                     replay_command(r.dir, r.backend), r.report);
}

void write_regression(const Regression& r, const GenSpec& spec, std::uint64_t seed) {
  write_case_regression(r, generate(spec, seed), spec.values == Values::exact, static_cast<std::int64_t>(seed));
  std::ofstream(fs::path(r.dir) / "spec.json") << spec_to_json(spec);
}

}  // namespace ixo
