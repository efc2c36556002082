// The cuda-cp backend over the CP launch API (cp_launch.hpp). Plain C++ with the CUDA runtime.
#include "gpu/cp_backends.hpp"

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "cp_plan.hpp"
#include "gpu/cp_launch.hpp"
#include "gpu/case_inputs.hpp"
#include "gpu/index_args.hpp"
#include "ixo/error.hpp"

namespace ixo {
namespace {

void check(cudaError_t e, const char* what) { gpu::check(e, "cuda-cp", what); }
using gpu::device_present;

class CudaCp final : public Backend {
 public:
  explicit CudaCp(bool allow_pack) : allow_pack_(allow_pack) {}
  std::string name() const override { return allow_pack_ ? "cuda-cp" : "cuda-cp-rows"; }
  bool available(std::string* why) const override { return device_present(why); }
  bool supports(const Case& c, std::string* why) const override {
    if (!cp::supported(c, why)) return false;
    if (!gpu::cp_head_dim_supported(c.D)) {
      if (why) *why = "cuda-cp supports D 1..256, got " + std::to_string(c.D);
      return false;
    }
    return true;
  }

  Observed run(const Case& c, const RunOptions& options) override {
    std::string why;
    if (!device_present(&why)) throw std::runtime_error(name() + " unavailable: " + why);
    validate(c);
    if (!supports(c, &why)) throw InputError("case", name() + " does not support this case: " + why);
    gpu::CpArgs a = gpu::cp_run_args(c, options, allow_pack_);
    const int W = a.world;
    const gpu::CaseInputs in(c, gpu::gathered_q(c));  // the simulated all-gather of q
    in.point(a);
    const gpu::CpScratch scratch(a, static_cast<std::size_t>(W * c.R * c.cfg.topk));  // poisoned
    const gpu::DevBuf<std::int32_t>& out = scratch.out;
    check(static_cast<cudaError_t>(gpu::launch_cp_step_sim(a, out.p, nullptr)), "cp step");
    check(cudaStreamSynchronize(nullptr), "synchronize");

    Observed o = gpu::observed_for(c, a.NB, false);
    o.topk_idx.resize(out.n);
    if (out.n) check(cudaMemcpy(o.topk_idx.data(), out.p, out.n * sizeof(std::int32_t), cudaMemcpyDeviceToHost), "D2H");
    return o;
  }

 private:
  bool allow_pack_;
};

}  // namespace

std::unique_ptr<Backend> make_cuda_cp_backend(bool allow_pack) { return std::make_unique<CudaCp>(allow_pack); }

}  // namespace ixo
