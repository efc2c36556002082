// One interface for every implementation under test (CPU twin, CUDA, CP, ...).
#pragma once
#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
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
  // True forces a packed context-parallel backend onto its per-row plan (tests: packed CP ==
  // per-row CP bit for bit); the native backends have their per-row twin in the registry.
  bool per_row_plan = false;
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

// Thrown by Backend::run when the user interrupted the run (Ctrl-C) while the kernel ran:
// callers stop at once and report what ran; the case is neither a pass nor a failure.
class Interrupted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Set from a SIGINT handler (ixo) or by the Python package when Ctrl-C arrives; exec:
// backends poll it while their command runs (and kill it). Reset at the start of a run.
std::atomic<bool>& interrupt_flag();

// What the registry declares about a backend (kernels/registry.cpp, one entry per
// backend). Every decision that used to be read off a backend's name (its twin, its
// family, which catalogued mutants it contains) reads these instead.
struct BackendTraits {
  // Where it runs: "cpu", "cuda", or "external" (exec:, callables, a consumer's own
  // kernel). Decides ctest labels and GPU resource groups of the conformance tests.
  std::string family = "external";
  // Registry name of a backend that must agree with this one bit for bit (ids and score
  // cells), e.g. cuda-packed -> cuda-rows; "" = none.
  std::string bitwise_twin;
  // Which part of the mutant catalogue (kernels/common/mutants.hpp) its switches
  // implement: "native" (common, topk, and the family's own), "cp", or "" (none).
  std::string mutant_scope;
  bool packed = false;  // runs the packed scorer (catalogue mutants with where "packed")
  // Our own kernel: fills the score buffer with RunOptions::score_poison_bits first and
  // honours RunOptions (chunks, mutants), so the poison tier and chunk property apply.
  bool in_tree = false;
  // The named contract (reference/include/ixo/contract.hpp) it promises: fuzzing draws
  // inside it unless the caller names another one.
  std::string contract = "spec";
  // Registry name of the CPU twin that runs the same plan (cuda-packed -> cpu-packed): a
  // failing kernel test diffs against it (tests/support); "" = none.
  std::string cpu_twin;
  // Registry name of a backend whose top-k ids (values and order; not the scores) must equal
  // this one's bit for bit, e.g. cpu-cp -> cpu-rows (the same per-row arithmetic and total
  // order, sharded); "" = none.
  std::string ids_twin;
  // False for a backend that runs only when named (--backend NAME, make_backend): the host
  // simulation of the GPU kernels takes minutes a suite. ixo check / fuzz / mutate without
  // --backend and the testbed's runnable_backends take default_backend_names() only.
  bool in_default_set = true;
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
  // Defaults to traits().in_tree (do not override in new code).
  virtual bool in_tree() const { return traits_.in_tree; }
  // Declared at the registry entry (make_backend sets them); backends built outside the
  // registry keep the default: family "external", not in-tree, no twin, no mutants.
  const BackendTraits& traits() const { return traits_; }
  void set_traits(BackendTraits t) { traits_ = std::move(t); }

 private:
  BackendTraits traits_;
};

struct BackendOptions {
  double exec_timeout_s = 60;  // exec: backends, per case
};

// Registry: every backend compiled into this build, in a fixed order.
std::vector<std::string> backend_names();
// The registry's backends with traits.in_default_set: what runs when no backend is named.
std::vector<std::string> default_backend_names();
// A registry name, or "exec:COMMAND" for a kernel behind a command (exec_backend.hpp).
// Its traits are set from the registry entry (exec: gets the external defaults).
std::unique_ptr<Backend> make_backend(const std::string& name,
                                      const BackendOptions& opt = {});  // throws InputError("backend", ...)
// The traits of a registry name without building the backend (exec:... -> external).
BackendTraits backend_traits(const std::string& name);  // throws InputError("backend", ...)

}  // namespace ixo
