// One interface for every implementation under test (CPU twin, CUDA, CP, ...).
#pragma once
#include <memory>
#include <stdexcept>
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

// Thrown by Backend::run when the backend declines this case at run time (an exec:
// kernel exiting 77, a Python kernel raising indexer_oracle.Unsupported). Callers count
// the case as SKIP, never as a pass.
class Unsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Thrown by Backend::run when the implementation failed on this case: it crashed, exited
// non-zero, timed out, wrote missing or malformed outputs, or raised. Callers count a
// failing case; what() is the report (with the tail of the kernel's stderr).
class KernelFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
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
  // May throw Unsupported or KernelFailure (see above).
  virtual Observed run(const Case& c, const RunOptions& options = {}) = 0;
  // True for our own kernels: they fill the score buffer with options.score_poison_bits
  // first and honour RunOptions (chunks, mutants). Outside kernels allocate their own
  // outputs, so the poison tier does not apply to them.
  virtual bool in_tree() const { return true; }
};

struct BackendOptions {
  double exec_timeout_s = 60;  // exec: backends, per case
};

// Registry: every backend compiled into this build, in a fixed order.
std::vector<std::string> backend_names();
// A registry name, or "exec:COMMAND" for a kernel behind a command (exec_backend.hpp).
std::unique_ptr<Backend> make_backend(const std::string& name, const BackendOptions& opt = {});  // throws InputError("backend", ...)


}  // namespace ixo
