// One interface for every implementation under test (CPU twin, CUDA, CP, ...).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "ixo/case.hpp"
#include "ixo/observed.hpp"

namespace ixo {

struct RunOptions {
  // Fill value for the score buffer before the launch (bit pattern); the verdict checks
  // that cells outside each row's written region still hold it.
  std::uint32_t score_poison_bits = kScorePoisonBits;
  // 0 = the kernels' own chunk plan; >0 forces that many KV chunks (tests of
  // chunk independence).
  int force_num_chunks = 0;
  // Injected bug to activate (mutation testing); 0 = none.
  int mutant = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // False when the backend cannot run here (e.g. no GPU); `why` says why.
  virtual bool available(std::string* why = nullptr) const = 0;
  // False when this backend does not implement the case's configuration (e.g. a CP
  // backend needs Hk == 1); `why` says why. Callers skip such cases, never pass them.
  virtual bool supports(const Case& /*c*/, std::string* /*why*/ = nullptr) const { return true; }
  // Runs score + top-k on the case. The returned scores cover [Hq, R, NB] with
  // NB = c.NB(); cells outside the written region hold options.score_poison_bits.
  virtual Observed run(const Case& c, const RunOptions& options = {}) = 0;
};

// Registry: every backend compiled into this build, in a fixed order.
std::vector<std::string> backend_names();
std::unique_ptr<Backend> make_backend(const std::string& name);  // throws InputError("backend", ...)

}  // namespace ixo
