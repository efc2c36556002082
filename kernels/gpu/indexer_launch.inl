// Host launch code shared by indexer_cuda.cu and indexer_hip.hip (included after
// indexer_kernels.cuh). No allocation, no host synchronization, grids from graph-constant
// values only.
#include <algorithm>

#include "gpu/indexer_launch.hpp"

namespace ixo::gpu {
namespace {
namespace cm = ixo::common;

// D (compile-time) 64 / 128 on CUDA: tensor-core kernel; D = 0: the portable scalar kernel
// (any D <= 256; the only path on HIP).
#if defined(IXO_GPU_CUDA)
template <int D, int KFMT, bool kPacked, bool kStreamK = detail::kPackedStreamK>
gpuError_t launch_score_mma(const detail::ScoreParams& p, dim3 grid, gpuStream_t s) {
  // Dynamic shared memory: the K ring.
  return detail::launch_mma_score_kernel<detail::score_mma_kernel<D, KFMT, kPacked, kStreamK>,
                                         detail::MmaCfg<D, KFMT>::kSmemBytes>(p, grid, s);
}
#endif

// KFMT: the K element format (common::KCode) the kernel is instantiated for.
template <int D, int KFMT>
gpuError_t launch_score_fmt(const detail::ScoreParams& p, dim3 grid, gpuStream_t s) {
#if defined(IXO_GPU_CUDA)
  if constexpr (D > 0) {
    // The per-row plan runs its own instantiation, without the packed plan's decision code.
    if (p.plan.pack > 1) return launch_score_mma<D, KFMT, true>(p, grid, s);
    return launch_score_mma<D, KFMT, false>(p, grid, s);
  }
#endif
  detail::score_scalar_kernel<KFMT><<<grid, detail::kScoreThreads, 0, s>>>(p);
  return gpuSuccess;
}

template <int D>
gpuError_t launch_score_d(const detail::ScoreParams& p, dim3 grid, gpuStream_t s) {
  return detail::with_k_format(p.k_code, [&](auto kc) { return launch_score_fmt<D, decltype(kc)::value>(p, grid, s); });
}

int launch_score(const IndexArgs& a, bool packed, void* stream) {
  if (a.R <= 0) return 0;
  if (!detail::score_args_valid(a)) return static_cast<int>(gpuErrorInvalidValueCode);
  // common::native_plan: graph-constant grid from R, Hk, NB, P (and a forced chunk count) only.
  // Which groups pack is decided by each CTA from slot_ids (common::program_tiles).
  const cm::NativePlan plan = cm::native_plan(a, packed, a.num_chunks);
  const detail::ScoreParams p = detail::score_params(a, plan);
  const dim3 grid(static_cast<unsigned>(plan.grid_x()), static_cast<unsigned>(plan.hk));
  const auto s = static_cast<gpuStream_t>(stream);
  gpuError_t e;
#if defined(IXO_GPU_CUDA)
  if (a.D == 64) {
    e = launch_score_d<64>(p, grid, s);
  } else if (a.D == 128) {
    e = launch_score_d<128>(p, grid, s);
  } else
#endif
  {
    e = launch_score_d<0>(p, grid, s);
  }
  if (e != gpuSuccess) return static_cast<int>(e);
  return static_cast<int>(gpuGetLastError());
}

}  // namespace

bool head_dim_supported(std::int64_t D) { return detail::head_dim_in_range(D); }

bool packed_supported(const IndexArgs& a) { return cm::packed_plan_fits(a.packed_queries, a.Hq, a.Hk); }

int launch_score_rows(const IndexArgs& a, void* stream) { return launch_score(a, false, stream); }

int launch_score_packed(const IndexArgs& a, void* stream) {
  // Fallback (documented in docs/gpu-kernels.md): a pack that does not fit one 16-row tile
  // runs the per-row plan. Otherwise the packed plan: whole groups sharing one slot id pack,
  // every other group and the R % P trailing rows run per row inside their CTA.
  return launch_score(a, true, stream);
}

int launch_topk(const IndexArgs& a, void* stream) {
  if (a.R <= 0 || a.Hq <= 0) return 0;
  const detail::TopkParams p = detail::topk_params(a);
  const unsigned grid = static_cast<unsigned>(a.Hq * a.R);
  const auto st = static_cast<gpuStream_t>(stream);
  detail::with_vote_instantiation(detail::topk_rows_fit_votes(p, detail::kTopkThreads), [&](auto votes) {
    detail::topk_kernel<detail::kTopkThreads, decltype(votes)::value><<<grid, detail::kTopkThreads, 0, st>>>(p);
  });
  return static_cast<int>(gpuGetLastError());
}

namespace {
int launch_step_direct(const IndexArgs& a, bool packed, void* stream) {
  const int e = packed ? launch_score_packed(a, stream) : launch_score_rows(a, stream);
  if (e != 0) return e;
  return launch_topk(a, stream);
}

// The scores_workspace_cached mutant (a graph bug class, catalogue id 41): the step scores
// into a process-wide workspace that grows on demand -- freed and re-allocated when a larger
// batch comes -- between a copy-in and a copy-out of the caller's buffer, so every eager
// launch gives the right bits, but a graph captured before the growth keeps the freed
// workspace in its kernel nodes. (The real launcher never allocates.)
int launch_step_cached_workspace(const IndexArgs& a, bool packed, void* stream) {
  static void* ws = nullptr;
  static std::size_t ws_bytes = 0;
  const std::size_t need = score_workspace_bytes(a.R, a.Hq, a.NB);
  if (need > ws_bytes) {
    if (ws != nullptr) (void)gpuFree(ws);
    ws = nullptr;
    ws_bytes = 0;
    const gpuError_t m = gpuMalloc(&ws, need);
    if (m != gpuSuccess) return static_cast<int>(m);
    ws_bytes = need;
  }
  const auto s = static_cast<gpuStream_t>(stream);
  IndexArgs w = a;
  w.scores = static_cast<float*>(ws);
  gpuError_t e = gpuMemcpyAsync(ws, a.scores, need, gpuMemcpyDeviceToDevice, s);
  if (e != gpuSuccess) return static_cast<int>(e);
  const int r = launch_step_direct(w, packed, stream);
  if (r != 0) return r;
  e = gpuMemcpyAsync(a.scores, ws, need, gpuMemcpyDeviceToDevice, s);
  return static_cast<int>(e);
}
}  // namespace

int launch_index_step(const IndexArgs& a, bool packed, void* stream) {
  if (IXO_MUTANT(a.mutant, mutants::scores_workspace_cached)) return launch_step_cached_workspace(a, packed, stream);
  return launch_step_direct(a, packed, stream);
}

int launch_fill_u32(void* dst, std::uint32_t bits, std::size_t n, void* stream) {
  if (n == 0) return 0;
  const std::size_t blocks = std::min<std::size_t>((n + 255) / 256, 4096);
  detail::fill_u32_kernel<<<static_cast<unsigned>(blocks), 256, 0, static_cast<gpuStream_t>(stream)>>>(
      static_cast<std::uint32_t*>(dst), bits, n);
  return static_cast<int>(gpuGetLastError());
}

const char* error_string(int code) { return gpuGetErrorString(static_cast<gpuError_t>(code)); }

}  // namespace ixo::gpu
