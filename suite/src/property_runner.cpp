#include "ixo/property_runner.hpp"

#include <iostream>
#include <sstream>

#include "backend.hpp"
#include "ixo/stop.hpp"

namespace rc::detail {
// Defined in librapidcheck (serialization of the reproduce map), not declared in its headers.
std::string reproduceMapToString(const std::unordered_map<std::string, Reproduce>& map);
}  // namespace rc::detail

namespace ixo {

namespace {

class QuietListener : public rc::detail::TestListener {
 public:
  void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
  void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
};

// RapidCheck's failure description is "FILE:LINE:\nRC_FAIL(expr)\n\nmessage": people get the
// message only (no macro text, no source path). Other descriptions (an exception's "Exception
// thrown with message:\n..." ends its first line with ':' too, but no line number) stay whole.
bool source_location_line(const std::string& line) {  // "FILE:LINE:"
  if (line.size() < 3 || line.back() != ':') return false;
  std::size_t i = line.size() - 1;
  const std::size_t digits_end = i;
  while (i > 0 && line[i - 1] >= '0' && line[i - 1] <= '9') --i;
  return i < digits_end && i > 1 && line[i - 1] == ':';
}

std::string people_description(const std::string& d) {
  const auto first_nl = d.find('\n');
  if (first_nl == std::string::npos || !source_location_line(d.substr(0, first_nl))) return d;
  const auto blank = d.find("\n\n", first_nl);
  if (blank == std::string::npos) {
    const auto second_nl = d.find('\n', first_nl + 1);
    return second_nl == std::string::npos ? std::string("(no message)") : d.substr(second_nl + 1);
  }
  return d.substr(blank + 2);
}

}  // namespace

// RapidCheck announces its configuration on stderr when first used; our callers print
// their own seeds and replay lines, so that banner is swallowed.
const rc::detail::Configuration& quiet_configuration() {
  static const rc::detail::Configuration* config = [] {
    std::ostringstream sink;
    auto* old = std::cerr.rdbuf(sink.rdbuf());
    const rc::detail::Configuration* c = &rc::detail::configuration();
    std::cerr.rdbuf(old);
    return c;
  }();
  return *config;
}

PropertyResult run_property(const std::string& id, int cases, std::uint64_t seed, const std::function<void()>& body,
                            const std::unordered_map<std::string, rc::detail::Reproduce>& reproduce) {
  const auto& config = quiet_configuration();
  rc::detail::TestParams params = config.testParams;
  if (seed != 0) params.seed = seed;
  params.maxSuccess = std::max(1, cases);
  rc::detail::TestMetadata md;
  md.id = id;
  md.description = id;
  // The last failing evaluation is the final shrunk counterexample: RapidCheck accepts
  // every failing shrink and continues from it.
  std::optional<props::Drawn> failing;
  auto wrapped = [&] {
    props::forget_drawn();
    // Out of time or interrupted: the remaining cases and shrink steps pass without running
    // (the caller counts judged cases itself and reports the stop).
    if (stop::stopping()) return;
    try {
      body();
    } catch (const Interrupted&) {
      stop::interrupt();
      return;
    } catch (const rc::detail::CaseResult& r) {
      if (r.type == rc::detail::CaseResult::Type::Failure) failing = props::last_drawn();
      throw;
    } catch (...) {
      failing = props::last_drawn();
      throw;
    }
  };
  QuietListener listener;
  const auto result = rc::detail::checkProperty(rc::detail::toProperty(wrapped), md, params, listener,
                                                reproduce.empty() ? config.reproduce : reproduce);
  PropertyResult out;
  std::ostringstream ss;
  rc::detail::printResultMessage(result, ss);
  out.message = ss.str();
  if (result.template is<rc::detail::SuccessResult>()) {
    out.cases = result.template get<rc::detail::SuccessResult>().numSuccess;
  } else if (result.template is<rc::detail::FailureResult>()) {
    const auto& f = result.template get<rc::detail::FailureResult>();
    out.status = PropertyResult::Status::failed;
    out.cases = f.numSuccess;
    out.shrinks = static_cast<int>(f.reproduce.shrinkPath.size());
    out.description = people_description(f.description);
    out.reproduce = rc::detail::reproduceMapToString({{md.id, f.reproduce}});
    out.counterexample = failing;
  } else {
    out.status = PropertyResult::Status::gave_up;
    if (result.template is<rc::detail::GaveUpResult>())
      out.cases = result.template get<rc::detail::GaveUpResult>().numSuccess;
  }
  return out;
}

}  // namespace ixo
