// The cuda-cp backend over the CP launch API (cp_launch.hpp). Plain C++ with the CUDA runtime.
#include "gpu/cp_backends.hpp"

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "cp_plan.hpp"
#include "gpu/cp_launch.hpp"
#include "gpu/device_buffer.hpp"
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
    for (std::int64_t r = 0; r < c.R; ++r)
      if (table_row(c, r) >= 0 && c.seq_lens[r] > c.width)
        throw InputError("seq_lens", "row " + std::to_string(r) + " exceeds the table width");
    const cp::Plan plan = cp::plan_for(c, allow_pack_, options);
    const int W = plan.world;
    gpu::CpArgs a;
    a.R = c.R;
    a.D = c.D;
    a.S = c.S;
    a.rows = c.rows;
    a.width = c.width;
    a.NB = c.NB();
    a.world = W;
    a.rank_base = 0;
    a.ranks = W;
    a.block_size = c.cfg.block_size;
    a.topk = c.cfg.topk;
    a.init_blocks = c.cfg.init_blocks;
    a.local_blocks = c.cfg.local_blocks;
    a.score_lse = c.cfg.score_type == ScoreType::lse ? 1 : 0;
    a.k_code = static_cast<int>(c.cfg.k_dtype);
    a.pack = plan.pack;
    a.sm_q_scale = static_cast<float>(c.effective_sm_scale() * c.cfg.q_scale);
    a.k_scale = static_cast<float>(c.cfg.k_scale);
    a.num_chunks = options.force_num_chunks;
    a.mutant = options.mutant;

    // The simulated all-gather of q: rank h's rows [R, D] stacked into [WORLD, R, D].
    std::vector<std::uint16_t> qg(static_cast<std::size_t>(W * c.R * c.D));
    for (int h = 0; h < W; ++h)
      for (std::int64_t r = 0; r < c.R; ++r)
        for (std::int64_t d = 0; d < c.D; ++d) qg[(h * c.R + r) * c.D + d] = c.q[(r * c.Hq + h) * c.D + d];
    gpu::DevBuf<std::uint16_t> q(qg.data(), qg.size());
    gpu::DevBuf<std::uint8_t> k(c.k_cache.data(), c.k_cache.size());
    gpu::DevBuf<std::int32_t> r2t(c.req_to_token.data(), c.req_to_token.size());
    gpu::DevBuf<std::int64_t> slots(c.slot_ids.data(), c.slot_ids.size());
    gpu::DevBuf<std::int64_t> lens(c.seq_lens.data(), c.seq_lens.size());
    const std::int64_t LOCAL = gpu::cp_local(a);
    gpu::DevBuf<std::uint32_t> cells(gpu::cp_cells_bytes(a, LOCAL) / sizeof(std::uint32_t));
    gpu::DevBuf<std::uint64_t> keys(gpu::cp_keys_bytes(a) / sizeof(std::uint64_t));
    gpu::DevBuf<std::int32_t> out(static_cast<std::size_t>(W * c.R * c.cfg.topk));
    a.qg = q.p;
    a.k_cache = k.p;
    a.req_to_token = r2t.p;
    a.slot_ids = slots.p;
    a.seq_lens = lens.p;
    a.cells = cells.p;
    a.keys = keys.p;
    // Poison: every cell and key must be rewritten by the launch.
    if (cells.n) check(cudaMemset(cells.p, 0xA5, cells.n * sizeof(std::uint32_t)), "memset");
    if (keys.n) check(cudaMemset(keys.p, 0xA5, keys.n * sizeof(std::uint64_t)), "memset");
    if (out.n) check(cudaMemset(out.p, 0xA5, out.n * sizeof(std::int32_t)), "memset");
    check(static_cast<cudaError_t>(gpu::launch_cp_step_sim(a, out.p, nullptr)), "cp step");
    check(cudaStreamSynchronize(nullptr), "synchronize");

    Observed o;
    o.Hq = c.Hq;
    o.R = c.R;
    o.topk = c.cfg.topk;
    o.NB = a.NB;
    o.has_scores = false;
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
