// CUDA backends over the launch API (indexer_launch.hpp). Plain C++ with the CUDA runtime.
#include "gpu/cuda_backends.hpp"

#include <cuda_runtime.h>

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "indexer_common.hpp"
#include "gpu/case_inputs.hpp"
#include "gpu/indexer_launch.hpp"
#include "gpu/index_args.hpp"
#include "ixo/error.hpp"

namespace ixo {
namespace {

void check(cudaError_t e, const char* what) { gpu::check(e, "cuda", what); }
using gpu::device_present;
void check_launch(int e, const char* what) { check(static_cast<cudaError_t>(e), what); }

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(bool packed) : packed_(packed) {}
  std::string name() const override { return packed_ ? "cuda-packed" : "cuda-rows"; }
  bool available(std::string* why) const override { return device_present(why); }
  // The CUDA scorers widen bf16 q and bf16/fp8 K only: fp8 q and nvfp4 K are declined (skip).
  bool supports(const Case& c, std::string* why) const override { return gpu::native_case_supported(c, name(), why); }

  Observed run(const Case& c, const RunOptions& options) override {
    std::string why;
    if (!device_present(&why)) throw std::runtime_error(name() + " unavailable: " + why);
    if (!supports(c, &why)) throw InputError("case", name() + " does not support this case: " + why);
    if (!gpu::head_dim_supported(c.D))
      throw InputError("D", "cuda backends support D 1..256, got " + std::to_string(c.D));
    const std::int64_t NB = c.NB();
    gpu::IndexArgs a = gpu::native_run_args(c, options);

    const gpu::CaseInputs in(c, c.q);
    in.point(a);
    const std::size_t ncells = static_cast<std::size_t>(c.Hq * c.R * NB);
    gpu::DevBuf<float> scores(ncells);
    gpu::DevBuf<std::int32_t> topk(static_cast<std::size_t>(c.Hq * c.R * c.cfg.topk));
    a.scores = scores.p;
    a.topk_idx = topk.p;

    cudaStream_t s = nullptr;
    check_launch(gpu::launch_fill_u32(scores.p, options.score_poison_bits, ncells, s), "fill");
    // Any batch: the packed kernel decides on the device which groups pack (graph-safe). The
    // one step entry point a server's graph captures (score, then top-k).
    check_launch(gpu::launch_index_step(a, packed_, s), "index step");
    check(cudaStreamSynchronize(s), "synchronize");

    Observed o = gpu::observed_for(c, NB, true);
    o.topk_idx.resize(topk.n);
    o.scores.resize(ncells);
    if (topk.n)
      check(cudaMemcpy(o.topk_idx.data(), topk.p, topk.n * sizeof(std::int32_t), cudaMemcpyDeviceToHost), "D2H");
    if (ncells) check(cudaMemcpy(o.scores.data(), scores.p, ncells * sizeof(float), cudaMemcpyDeviceToHost), "D2H");
    return o;
  }

 private:
  bool packed_;
};

}  // namespace

std::unique_ptr<Backend> make_cuda_rows_backend() { return std::make_unique<CudaBackend>(false); }
std::unique_ptr<Backend> make_cuda_packed_backend() { return std::make_unique<CudaBackend>(true); }

}  // namespace ixo
