// Backend registry (placeholder until the CPU twin and GPU backends land).
#include "backend.hpp"

#include "ixo/error.hpp"

namespace ixo {

std::vector<std::string> backend_names() { return {}; }

std::unique_ptr<Backend> make_backend(const std::string& name) {
  throw InputError("backend", "unknown backend '" + name + "'");
}

}  // namespace ixo
