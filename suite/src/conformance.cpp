#include "ixo/conformance.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>

#include "ixo/case_run.hpp"
#include "ixo/default_suite.hpp"
#include "ixo/oracle.hpp"
#include "ixo/suite_checks.hpp"

namespace ixo {

namespace fs = std::filesystem;

namespace {

std::string gtest_safe(std::string s) {
  for (auto& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

std::string self_path() {
  char buf[4096];
  const auto n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string("<test binary>");
}

// A second poison pattern (a negative quiet NaN): a kernel that writes a fixed fill of its
// own instead of leaving RunOptions::score_poison_bits in place fails the poison check.
constexpr std::uint32_t kSecondPoisonBits = 0xffc0ffeeu;

// One registered backend: built lazily, shared by its tests.
struct Subject {
  std::string name;
  BackendFactory factory;
  ConformanceOptions opt;
  std::shared_ptr<const Contract> contract;
  std::unique_ptr<Backend> backend, twin;

  Backend& get() {
    if (!backend) backend = factory();
    return *backend;
  }
  CheckOptions check_options(const std::string& check) const {
    CheckOptions c;
    c.contract = contract;
    c.property_cases = opt.property_cases;
    c.seed = opt.seed;
    const fs::path root = opt.regression_dir.empty()
                              ? fs::temp_directory_path() / ("ixo-conformance-" + std::to_string(::getpid()))
                              : fs::path(opt.regression_dir);
    c.failure_dir = (root / gtest_safe(name) / check).string();
    return c;
  }
};

// The row of a suite check as a test result: FAIL with its reports (the shrunk or written
// case and its replay command), SKIP with the reason, else pass.
void report(const SuiteRow& row) {
  const auto* info = testing::UnitTest::GetInstance()->current_test_info();
  const std::string rerun = self_path() + " --gtest_filter=" + info->test_suite_name() + "." + info->name();
  if (row.status == "FAIL") {
    std::string msg;
    for (const auto& r : row.reports) msg += r + "\n";
    FAIL() << row.backend << " " << row.group << ": " << row.failures << " failure(s) in " << row.cases << " case(s)\n"
           << msg << "rerun this check (same seed, same cases): " << rerun;
  }
  if (row.status == "SKIP") GTEST_SKIP() << (row.reports.empty() ? "no case ran" : row.reports.front());
  if (row.status == "OUTSIDE")
    GTEST_SKIP() << "every case of " << row.group << " lies outside the kernel's contract (not run)";
  testing::Test::RecordProperty("cases", row.cases);
  if (row.skipped) std::cout << "[ note ] " << row.skipped << " unsupported case(s) skipped (not passed)\n";
}

// Runs `check` on the backend when it can run here; else skips with the reason.
void with_backend(Subject& s, const std::function<void(Backend&)>& check) {
  Backend& b = s.get();
  std::string why;
  if (!b.available(&why)) GTEST_SKIP() << s.name << " is not available here: " << why;
  check(b);
}

// ... and with its bitwise twin.
void with_twin(Subject& s, const std::function<void(Backend&, Backend&)>& check) {
  with_backend(s, [&](Backend& b) {
    if (!s.twin) s.twin = make_bitwise_twin(b);
    std::string why;
    if (!s.twin->available(&why))
      GTEST_SKIP() << "bitwise twin " << s.twin->name() << " is not available here: " << why;
    check(b, *s.twin);
  });
}

class Check : public testing::Test {
 public:
  explicit Check(std::function<void()> body) : body_(std::move(body)) {}
  void TestBody() override { body_(); }

 private:
  std::function<void()> body_;
};

void add(const std::string& suite, const std::string& test, std::function<void()> body) {
  testing::RegisterTest(suite.c_str(), test.c_str(), nullptr, nullptr, __FILE__, __LINE__,
                        [body = std::move(body)]() -> testing::Test* { return new Check(body); });
}

}  // namespace

void register_conformance(const std::string& name, BackendFactory factory, const ConformanceOptions& opt) {
  auto s = std::make_shared<Subject>(Subject{name, std::move(factory), opt, nullptr, nullptr, nullptr});
  const std::unique_ptr<Backend> probe = s->factory();
  const BackendTraits traits = probe->traits();
  s->contract = std::make_shared<const Contract>(opt.contract ? *opt.contract : named_contract(traits.contract));
  const bool in_tree = probe->in_tree();
  const std::string suite = "Conformance/" + gtest_safe(name);

  for (const SuiteProperty& p : suite_properties()) {
    if (p.in_tree_only && !in_tree) continue;
    add(suite, "property_" + gtest_safe(p.name),
        [s, &p] { with_backend(*s, [&](Backend& b) { report(check_property(b, p, s->check_options("property"))); }); });
  }
  for (const FixtureFile& f : list_fixtures())
    add(suite, "fixture_" + gtest_safe(f.name), [s, f] {
      with_backend(*s, [&](Backend& b) {
        report(check_cases(b, "fixture " + f.name, {fixture_case(load_fixture(f))}, s->check_options("fixtures")));
      });
    });
  for (const std::string& g : suite_groups())
    add(suite, "matrix_" + gtest_safe(g), [s, g] {
      with_backend(*s, [&](Backend& b) { report(check_cases(b, g, group_cases(g), s->check_options("matrix"))); });
    });
  if (in_tree)
    add(suite, "poison", [s] {
      with_backend(*s, [&](Backend& b) {
        CheckOptions c = s->check_options("poison");
        c.run.score_poison_bits = kSecondPoisonBits;
        std::vector<JudgedCase> cases;  // the first case of each group (exact values: a slow oracle, no poison news)
        for (const std::string& g : suite_groups())
          if (g != "exact") {
            cases.push_back(std::move(group_cases(g, false).front()));
            cases.back().e = oracle(cases.back().c);
          }
        report(check_cases(b, "poison 0xffc0ffee", cases, c));
      });
    });
  if (!traits.bitwise_twin.empty()) {
    add(suite, "twin_matrix", [s] {
      with_twin(*s, [&](Backend& b, Backend& twin) {
        std::vector<JudgedCase> cases;
        for (const std::string& g : suite_groups())
          for (auto& jc : group_cases(g, false)) cases.push_back(std::move(jc));
        for (const FixtureFile& f : list_fixtures()) cases.push_back(fixture_case(load_fixture(f), false));
        report(check_twin_cases(b, twin, "matrix+fixtures", cases));
      });
    });
    add(suite, "twin_property", [s] {
      with_twin(*s, [&](Backend& b, Backend& twin) { report(check_twin_property(b, twin, s->check_options("twin"))); });
    });
  }
}

void register_conformance(const std::string& name, BackendFactory factory, const Contract& contract,
                          ConformanceOptions opt) {
  opt.contract = contract;
  register_conformance(name, std::move(factory), opt);
}

void register_conformance_for_registry(const ConformanceOptions& opt) {
  for (const std::string& name : backend_names())
    if (opt.family.empty() || backend_traits(name).family == opt.family)
      register_conformance(
          name, [name] { return make_backend(name); }, opt);
}

}  // namespace ixo
