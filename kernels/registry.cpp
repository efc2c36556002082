// Backend registry: every backend compiled into this build, in a fixed order (CPU twin
// first, then the CUDA kernels when the build has them), each with its traits. Adding a
// backend = one entry here; the suite, `ixo mutate`, fuzzing and the conformance tests
// read the traits, never the name.
#include <functional>
#include <utility>

#include "backend.hpp"
#include "cpu/cp_twin.hpp"
#include "cpu/cpu_backends.hpp"
#include "external/exec_backend.hpp"
#include "ixo/error.hpp"
#include "sim_host/sim_backends.hpp"
#if defined(IXO_HAVE_CUDA)
#include "gpu/cp_backends.hpp"
#include "gpu/cuda_backends.hpp"
#endif

namespace ixo {
namespace {

struct Entry {
  std::string name;
  std::unique_ptr<Backend> (*factory)();
  BackendTraits traits;
};

BackendTraits native(const char* family, const char* twin, bool packed, const char* cpu_twin = "") {
  return {.family = family,
          .bitwise_twin = twin,
          .mutant_scope = "native",
          .packed = packed,
          .in_tree = true,
          .contract = "ixo-native",
          .cpu_twin = cpu_twin,
          .ids_twin = ""};
}
BackendTraits context_parallel(const char* family, const char* ids_twin, const char* cpu_twin = "") {
  return {.family = family,
          .bitwise_twin = "",
          .mutant_scope = "cp",
          .packed = false,
          .in_tree = true,
          .contract = "ixo-cp",
          .cpu_twin = cpu_twin,
          .ids_twin = ids_twin};
}

// Runs only when named (BackendTraits::in_default_set).
BackendTraits opt_in(BackendTraits t) {
  t.in_default_set = false;
  return t;
}

const std::vector<Entry>& registry() {
  static const std::vector<Entry> r = {
    {"cpu-rows", &make_cpu_rows_backend, native("cpu", "", false)},
    {"cpu-packed", &make_cpu_packed_backend, native("cpu", "cpu-rows", true)},
    {"cpu-cp", +[]() { return make_cpu_cp_backend(); }, context_parallel("cpu", "cpu-rows")},  // cp_twin.cpp
    {"cpu-msa",
     &make_cpu_msa_backend,  // msa_twin.cpp: MiniMax's upstream selector
     {.family = "cpu",
      .bitwise_twin = "",
      .mutant_scope = "msa",
      .packed = false,
      .in_tree = true,
      .contract = "msa-decode",
      .cpu_twin = "",
      .ids_twin = ""}},
    // The GPU kernels' portable path (HIP's) on the host: slow (a fiber a GPU thread), family "sim".
    {"sim-rows", &make_sim_rows_backend, opt_in(native("sim", "", false, "cpu-rows"))},
    {"sim-packed", &make_sim_packed_backend, opt_in(native("sim", "sim-rows", true, "cpu-packed"))},
    {"sim-cp", &make_sim_cp_backend, opt_in(context_parallel("sim", "sim-rows", "cpu-cp"))},
#if defined(IXO_HAVE_CUDA)
    {"cuda-rows", &make_cuda_rows_backend, native("cuda", "", false, "cpu-rows")},
    {"cuda-packed", &make_cuda_packed_backend, native("cuda", "cuda-rows", true, "cpu-packed")},
    {"cuda-cp", +[]() { return make_cuda_cp_backend(); }, context_parallel("cuda", "cuda-rows", "cpu-cp")},
#endif
  };
  return r;
}

const Entry* find(const std::string& name) {
  for (const auto& e : registry())
    if (e.name == name) return &e;
  return nullptr;
}

[[noreturn]] void unknown(const std::string& name) {
  std::string known;
  for (const auto& e : registry()) known += (known.empty() ? "" : ", ") + e.name;
  throw InputError("backend", "unknown backend '" + name + "' (known: " + known + ", or exec:COMMAND)");
}

}  // namespace

std::atomic<bool>& interrupt_flag() {
  static std::atomic<bool> flag{false};
  return flag;
}

std::vector<std::string> backend_names() {
  std::vector<std::string> names;
  for (const auto& e : registry()) names.push_back(e.name);
  return names;
}

std::vector<std::string> default_backend_names() {
  std::vector<std::string> names;
  for (const auto& e : registry())
    if (e.traits.in_default_set) names.push_back(e.name);
  return names;
}

BackendTraits backend_traits(const std::string& name) {
  if (name.rfind("exec:", 0) == 0) return {};
  if (const Entry* e = find(name)) return e->traits;
  unknown(name);
}

std::unique_ptr<Backend> make_backend(const std::string& name, const BackendOptions& opt) {
  if (name.rfind("exec:", 0) == 0) return make_exec_backend(name.substr(5), opt.exec_timeout_s);
  const Entry* e = find(name);
  if (!e) unknown(name);
  auto b = e->factory();
  b->set_traits(e->traits);
  return b;
}

}  // namespace ixo
