#include "ixo/case_run.hpp"
#include "ixo/judge_mutants.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include <cctype>

#include "ixo/case_io.hpp"
#include "ixo/error.hpp"

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

namespace {
std::string quote(const std::string& s) {
  std::string q = "'";
  for (char ch : s) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}
std::string file_safe(const std::string& s, std::size_t max) {
  std::string out;
  for (char ch : s) {
    const bool ok = std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '.';
    if (ok)
      out += ch;
    else if (!out.empty() && out.back() != '_')
      out += '_';
    if (out.size() >= max) break;
  }
  while (!out.empty() && (out.back() == '_' || out.back() == '.')) out.pop_back();
  return out.empty() ? "kernel" : out;
}
}  // namespace

std::string unique_regression_dir(const std::string& root, const std::string& backend, const std::string& check,
                                  std::uint64_t seed) {
  const std::string base = fmt::format("{}-{}-seed{}", file_safe(backend, 48), file_safe(check, 32), seed);
  fs::path dir = fs::path(root) / base;
  for (int n = 2; fs::exists(dir) && !IXO_JUDGE_MUTANT(regression_dir_reused); ++n)
    dir = fs::path(root) / fmt::format("{}-{}", base, n);
  return dir.string();
}

void require_writable_dir(const std::string& root, const std::string& field) {
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec || !fs::is_directory(root)) throw InputError(field, "cannot create directory '" + root + "': " + ec.message());
  const fs::path probe = fs::path(root) / fmt::format(".ixo-write-probe-{}", ::getpid());
  {
    std::ofstream f(probe);
    if (!(f << "ok\n")) throw InputError(field, "directory '" + root + "' is not writable");
  }
  fs::remove(probe, ec);
}

std::string replay_command(const std::string& dir, const std::string& backend) {
  if (backend.rfind("python:", 0) == 0) {  // a Python kernel: import it from its module and replay
    const std::string rest = backend.substr(7);
    const auto colon = rest.find(':');
    const std::string module = colon == std::string::npos ? "" : rest.substr(0, colon);
    const std::string name = colon == std::string::npos ? rest : rest.substr(colon + 1);
    const bool importable = !module.empty() && module != "__main__" && name.find('<') == std::string::npos &&
                            name.find('.') == std::string::npos;
    if (importable)
      return fmt::format("python3 -c \"import indexer_oracle as io; from {} import {}; io.replay({}, {})\"", module,
                         name, quote(dir), name);
    return fmt::format(
        "python3 -c \"import indexer_oracle as io; io.replay({}, KERNEL)\"  "
        "# KERNEL: your function {} (not importable from a module: define or import it first)",
        quote(dir), name);
  }
  return fmt::format("ixo check {} --backend {}", quote(dir), quote(backend));
}

void write_case_regression(const Regression& r, const Case& c, bool exact, std::int64_t found_by_seed) {
  save_case(c, r.dir);
  if (exact) std::ofstream(fs::path(r.dir) / "exact_ids") << "1\n";
  if (!r.contract_json.empty()) std::ofstream(fs::path(r.dir) / "contract.json") << r.contract_json << "\n";
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
