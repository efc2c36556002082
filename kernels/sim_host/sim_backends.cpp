// sim-rows / sim-packed: the kernels of kernels/gpu as the HIP build runs them (the scalar score
// kernel, the top-k kernel with 64-lane warps), launched on the host through the stand-in for a GPU
// runtime (gpu_port_host.hpp; this file is compiled with IXO_SIM_HOST and IXO_WARP_SIZE=64). The
// launch is the launcher's (indexer_launch.inl): the same argument checks, plan, parameters and
// grids (detail::score_args_valid / score_params / topk_params, common::native_plan); CTAs run one
// after another, so a run is deterministic.
#include "sim_host/sim_backends.hpp"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gpu/index_args.hpp"
#include "gpu/indexer_kernels.cuh"  // device code, through the stand-in
#include "ixo/error.hpp"
#include "sim_host/sim_grid.hpp"

static_assert(IXO_WARP_SIZE == 64, "the host simulation runs the HIP build's 64-lane warps");

namespace ixo {
namespace {
namespace cm = common;
namespace gd = gpu::detail;

constexpr std::int32_t kIdsUnwritten = 0x7f7f7f7f;  // ids the top-k never wrote: out of every range

class SimBackend final : public Backend {
 public:
  explicit SimBackend(bool packed) : packed_(packed) {}
  std::string name() const override { return packed_ ? "sim-packed" : "sim-rows"; }
  bool available(std::string* /*why*/) const override { return true; }
  // As the GPU backends: bf16 q, bf16 or fp8 K.
  bool supports(const Case& c, std::string* why) const override { return gpu::native_case_supported(c, name(), why); }

  Observed run(const Case& c, const RunOptions& options) override {
    std::string why;
    if (!supports(c, &why)) throw InputError("case", name() + " does not support this case: " + why);
    gpu::IndexArgs a = gpu::native_run_args(c, options);
    if (!gd::score_args_valid(a))
      throw InputError("D", name() + " takes D 1.." + std::to_string(gd::kScalarMaxD) +
                                " and at most 16 q heads a K head, got D " + std::to_string(c.D) + ", Hq " +
                                std::to_string(c.Hq) + ", Hk " + std::to_string(c.Hk));
    const std::int64_t NB = c.NB();
    std::vector<float> scores(static_cast<std::size_t>(c.Hq * c.R * NB));
    for (float& s : scores) std::memcpy(&s, &options.score_poison_bits, sizeof s);
    std::vector<std::int32_t> ids(static_cast<std::size_t>(c.Hq * c.R * c.cfg.topk), kIdsUnwritten);
    a.q = c.q.data();
    a.k_cache = c.k_cache.data();
    a.req_to_token = c.req_to_token.data();
    a.slot_ids = c.slot_ids.data();
    a.seq_lens = c.seq_lens.data();
    a.scores = scores.data();
    a.topk_idx = ids.data();
    sim::run_step(name(), [&] { launch_step(a); });
    Observed o = gpu::observed_for(c, NB, true);
    o.scores = std::move(scores);
    o.topk_idx = std::move(ids);
    return o;
  }

 private:
  // launch_index_step's launches (launch_score, launch_topk), each grid run CTA by CTA.
  void launch_step(const gpu::IndexArgs& a) const {
    if (a.R <= 0) return;
    const cm::NativePlan plan = cm::native_plan(a, packed_, a.num_chunks);
    const gd::ScoreParams p = gd::score_params(a, plan);
    gd::with_k_format(p.k_code, [&](auto kc) {
      sim::run_grid(plan.grid_x(), plan.hk, gd::kScoreThreads,
                    [&] { gd::score_scalar_kernel<decltype(kc)::value>(p); });
    });
    if (a.Hq <= 0) return;
    const gd::TopkParams t = gd::topk_params(a);
    gd::with_vote_instantiation(gd::topk_rows_fit_votes(t, gd::kTopkThreads), [&](auto votes) {  // as launch_topk
      sim::run_grid(a.Hq * a.R, 1, gd::kTopkThreads,
                    [&] { gd::topk_kernel<gd::kTopkThreads, decltype(votes)::value>(t); });
    });
  }

  bool packed_;
};

}  // namespace

std::unique_ptr<Backend> make_sim_rows_backend() { return std::make_unique<SimBackend>(false); }
std::unique_ptr<Backend> make_sim_packed_backend() { return std::make_unique<SimBackend>(true); }

}  // namespace ixo
