#include "property_check.hpp"

#include <unistd.h>

#include <cstdlib>

#include "ixo/property_runner.hpp"

namespace ixo::prop {

namespace {

std::string self_path() {
  char buf[4096];
  const auto n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string("<test binary>");
}

}  // namespace

void check(const std::string& suite, const std::string& name, int budget, std::function<void()> body) {
  double scale = 1.0;
  if (const char* s = std::getenv("IXO_PROP_SCALE")) scale = std::atof(s);
  const PropertyResult r = run_property(suite + "/" + name, static_cast<int>(budget * scale), 0, body);
  if (r.status == PropertyResult::Status::failed) {
    const auto seed = rc::detail::configuration().testParams.seed;
    FAIL() << r.message << "\nreproduce string: " << r.reproduce << "\nreplay: RC_PARAMS=\"reproduce=" << r.reproduce
           << "\" " << self_path() << " --gtest_filter=" << suite << "." << name << "\n"
           << "rerun the whole seed: RC_PARAMS=\"seed=" << seed << "\" " << self_path() << " --gtest_filter=" << suite
           << "." << name << "\n";
  } else if (r.status == PropertyResult::Status::gave_up) {
    FAIL() << r.message;
  }
}

}  // namespace ixo::prop
