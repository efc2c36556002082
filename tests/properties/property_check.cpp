#include "property_check.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <unordered_map>

namespace rc::detail {
// Defined in librapidcheck (Serialization of the reproduce map), not declared in its headers.
std::string reproduceMapToString(const std::unordered_map<std::string, Reproduce>& map);
}  // namespace rc::detail

namespace ixo::prop {

namespace {

class QuietListener : public rc::detail::TestListener {
 public:
  void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
  void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
};

std::string self_path() {
  char buf[4096];
  const auto n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string("<test binary>");
}

}  // namespace

void check(const std::string& suite, const std::string& name, int budget, std::function<void()> body) {
  const auto& config = rc::detail::configuration();
  rc::detail::TestParams params = config.testParams;
  double scale = 1.0;
  if (const char* s = std::getenv("IXO_PROP_SCALE")) scale = std::atof(s);
  params.maxSuccess = std::max(1, static_cast<int>(budget * scale));
  rc::detail::TestMetadata md;
  md.id = suite + "/" + name;
  md.description = name;
  QuietListener listener;
  const auto result = rc::detail::checkProperty(rc::detail::toProperty(body), md, params, listener, config.reproduce);
  if (result.template is<rc::detail::FailureResult>()) {
    const auto& f = result.template get<rc::detail::FailureResult>();
    std::ostringstream ss;
    rc::detail::printResultMessage(result, ss);
    const std::string repro = rc::detail::reproduceMapToString({{md.id, f.reproduce}});
    ss << "\nreproduce string: " << repro << "\nreplay: RC_PARAMS=\"reproduce=" << repro << "\" " << self_path()
       << " --gtest_filter=" << suite << "." << name << "\n"
       << "rerun the whole seed: RC_PARAMS=\"seed=" << params.seed << "\" " << self_path()
       << " --gtest_filter=" << suite << "." << name << "\n";
    FAIL() << ss.str();
  } else if (!result.template is<rc::detail::SuccessResult>()) {
    std::ostringstream ss;
    rc::detail::printResultMessage(result, ss);
    FAIL() << ss.str();
  }
}

}  // namespace ixo::prop
