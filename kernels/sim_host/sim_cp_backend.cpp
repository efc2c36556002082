// sim-cp: the context-parallel kernels of kernels/gpu/cp_kernels.cuh as the HIP build runs them (the
// scalar shard score kernel, the candidates and merge kernels with 64-lane warps), launched on the
// host as cuda-cp launches them on one GPU (launch_cp_step_sim: every rank in one launch, the
// all-gather the identity): the same argument checks, parameters and grids (cpk::cp_args_ok /
// cp_score_params / cp_cand_params / cp_merge_params). Compiled with IXO_SIM_HOST.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "cp_plan.hpp"
#include "gpu/cp_kernels.cuh"  // device code, through the stand-in
#include "gpu/index_args.hpp"
#include "ixo/error.hpp"
#include "sim_host/sim_backends.hpp"
#include "sim_host/sim_grid.hpp"

namespace ixo {
namespace {
namespace cpk = gpu::cpk;

// Scratch poisoned with 0xA5 bytes (CpScratch's pattern): every cell, key and id must be rewritten.
template <class T>
std::vector<T> poisoned(std::size_t n) {
  std::vector<T> v(n);
  if (n) std::memset(v.data(), 0xA5, n * sizeof(T));
  return v;
}

class SimCp final : public Backend {
 public:
  std::string name() const override { return "sim-cp"; }
  bool available(std::string* /*why*/) const override { return true; }
  bool supports(const Case& c, std::string* why) const override { return cp::supported(c, why); }

  Observed run(const Case& c, const RunOptions& options) override {
    std::string why;
    validate(c);
    if (!supports(c, &why)) throw InputError("case", name() + " does not support this case: " + why);
    gpu::CpArgs a = gpu::cp_run_args(c, options, true);
    const int W = a.world;
    if (!cpk::cp_args_ok(a))
      throw InputError(
          "D", name() + " takes D 1.." + std::to_string(gpu::detail::kScalarMaxD) + ", got D " + std::to_string(c.D));
    const std::vector<std::uint16_t> qg = gpu::gathered_q(c);  // the simulated all-gather of q
    a.qg = qg.data();
    a.k_cache = c.k_cache.data();
    a.req_to_token = c.req_to_token.data();
    a.slot_ids = c.slot_ids.data();
    a.seq_lens = c.seq_lens.data();
    auto cells = poisoned<std::uint32_t>(gpu::cp_cells_bytes(a, cpk::cp_local_cells(a)) / sizeof(std::uint32_t));
    auto keys = poisoned<std::uint64_t>(gpu::cp_keys_bytes(a) / sizeof(std::uint64_t));
    auto out = poisoned<std::int32_t>(static_cast<std::size_t>(W * c.R * c.cfg.topk));
    a.cells = cells.data();
    a.keys = keys.data();
    if (a.R > 0) sim::run_step(name(), [&] { launch_step(a, out.data()); });
    Observed o = gpu::observed_for(c, a.NB, false);
    o.topk_idx = std::move(out);
    return o;
  }

 private:
  // launch_cp_step_sim's launches: shard scores, candidates (already the gathered layout), merge.
  static void launch_step(const gpu::CpArgs& a, std::int32_t* out) {
    const cpk::CpScoreParams p = cpk::cp_score_params(a);
    gpu::detail::with_k_format(p.k_code, [&](auto kc) {
      sim::run_grid(cpk::cp_score_grid_x(p), a.ranks, gpu::detail::kScoreThreads,
                    [&] { cpk::cp_score_scalar_kernel<decltype(kc)::value>(p); });
    });
    const cpk::CpCandParams cand = cpk::cp_cand_params(a);
    gpu::detail::with_vote_instantiation(cpk::cp_cand_rows_fit_votes(cand, cpk::kCandThreads), [&](auto votes) {
      sim::run_grid(static_cast<std::int64_t>(a.world) * a.R, a.ranks, cpk::kCandThreads,  // as launch_cp_candidates
                    [&] { cpk::cp_candidates_kernel<cpk::kCandThreads, decltype(votes)::value>(cand); });
    });
    const cpk::CpMergeParams merge = cpk::cp_merge_params(a, a.keys, 0, out);
    sim::run_grid(static_cast<std::int64_t>(a.world) * a.R, 1, cpk::kMergeThreads,
                  [&] { cpk::cp_merge_kernel<cpk::kMergeThreads>(merge); });
  }
};

}  // namespace

std::unique_ptr<Backend> make_sim_cp_backend() { return std::make_unique<SimCp>(); }

}  // namespace ixo
