// Backend registry: every backend compiled into this build, in a fixed order
// (CPU twin first, then the CUDA kernels when the build has them).
#include <functional>
#include <utility>

#include "backend.hpp"
#include "cpu/cp_twin.hpp"
#include "cpu/cpu_backends.hpp"
#include "external/exec_backend.hpp"
#include "ixo/error.hpp"
#if defined(IXO_HAVE_CUDA)
#include "gpu/cp_backends.hpp"
#include "gpu/cuda_backends.hpp"
#endif

namespace ixo {
namespace {

using Factory = std::unique_ptr<Backend> (*)();

const std::vector<std::pair<std::string, Factory>>& registry() {
  static const std::vector<std::pair<std::string, Factory>> r = {
      {"cpu-rows", &make_cpu_rows_backend},
      {"cpu-packed", &make_cpu_packed_backend},
      {"cpu-cp", +[]() { return make_cpu_cp_backend(); }},  // context parallel (cp_twin.cpp)
#if defined(IXO_HAVE_CUDA)
      {"cuda-rows", &make_cuda_rows_backend},
      {"cuda-packed", &make_cuda_packed_backend},
      {"cuda-cp", +[]() { return make_cuda_cp_backend(); }},
#endif
  };
  return r;
}

}  // namespace

std::vector<std::string> backend_names() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : registry()) names.push_back(name);
  return names;
}

std::unique_ptr<Backend> make_backend(const std::string& name, const BackendOptions& opt) {
  if (name.rfind("exec:", 0) == 0) return make_exec_backend(name.substr(5), opt.exec_timeout_s);
  std::string known;
  for (const auto& [n, factory] : registry()) {
    if (n == name) return factory();
    known += (known.empty() ? "" : ", ") + n;
  }
  throw InputError("backend", "unknown backend '" + name + "' (known: " + known + ", or exec:COMMAND)");
}

}  // namespace ixo
