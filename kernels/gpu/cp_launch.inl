// Host launch code of the CP kernels (included after cp_kernels.cuh by cp_cuda.cu and
// cp_hip.hip). No allocation, no host synchronization, grids from graph-constant values.
#include "gpu/cp_launch.hpp"

namespace ixo::gpu {
namespace {

#if defined(IXO_GPU_CUDA)
template <int D, int KFMT, bool kStreamK>
gpuError_t launch_cp_mma(const cpk::CpScoreParams& p, dim3 grid, gpuStream_t s) {
  // Dynamic shared memory: the K ring and the EntryRing.
  return detail::launch_mma_score_kernel<cpk::cp_score_mma_kernel<D, KFMT, kStreamK>,
                                         detail::MmaCfg<D, KFMT>::kSmemBytesWithEntries>(p, grid, s);
}
#endif

// KFMT: the K element format (common::KCode) the kernel is instantiated for.
template <int D, int KFMT>
gpuError_t launch_cp_fmt(const cpk::CpScoreParams& p, dim3 grid, gpuStream_t s) {
#if defined(IXO_GPU_CUDA)
  if constexpr (D > 0) {
    // The packed plan streams K (kPackedStreamK); the per-row plan's CTAs of a request share it in L2.
    if (p.pack > 1) return launch_cp_mma<D, KFMT, detail::kPackedStreamK>(p, grid, s);
    return launch_cp_mma<D, KFMT, false>(p, grid, s);
  }
#endif
  cpk::cp_score_scalar_kernel<KFMT><<<grid, detail::kScoreThreads, 0, s>>>(p);
  return gpuSuccess;
}

template <int D>
gpuError_t launch_cp_d(const cpk::CpScoreParams& p, dim3 grid, gpuStream_t s) {
  return detail::with_k_format(p.k_code, [&](auto kc) { return launch_cp_fmt<D, decltype(kc)::value>(p, grid, s); });
}

}  // namespace

std::int64_t cp_local(const CpArgs& a) { return cpk::cp_local_cells(a); }
bool cp_head_dim_supported(std::int64_t D) { return detail::head_dim_in_range(D); }
bool cp_pack_supported(const CpArgs& a) { return cpk::cp_launch_pack(a) > 1; }

int launch_cp_score(const CpArgs& a, void* stream) {
  if (a.R <= 0) return 0;
  if (!cpk::cp_args_ok(a)) return static_cast<int>(gpuErrorInvalidValueCode);
  const cpk::CpScoreParams p = cpk::cp_score_params(a);
  // Graph-constant grid (R, pack, LOCAL); which groups pack is decided per CTA from slot_ids.
  const dim3 grid(static_cast<unsigned>(cpk::cp_score_grid_x(p)), static_cast<unsigned>(a.ranks));
  const auto s = static_cast<gpuStream_t>(stream);
  gpuError_t e;
#if defined(IXO_GPU_CUDA)
  if (a.D == 64) {
    e = launch_cp_d<64>(p, grid, s);
  } else if (a.D == 128) {
    e = launch_cp_d<128>(p, grid, s);
  } else
#endif
  {
    e = launch_cp_d<0>(p, grid, s);
  }
  if (e != gpuSuccess) return static_cast<int>(e);
  return static_cast<int>(gpuGetLastError());
}

int launch_cp_candidates(const CpArgs& a, void* stream) {
  if (a.R <= 0) return 0;
  if (!cpk::cp_args_ok(a)) return static_cast<int>(gpuErrorInvalidValueCode);
  const cpk::CpCandParams p = cpk::cp_cand_params(a);
  const dim3 grid(static_cast<unsigned>(a.world * a.R), static_cast<unsigned>(a.ranks));
  const auto st = static_cast<gpuStream_t>(stream);
  detail::with_vote_instantiation(cpk::cp_cand_rows_fit_votes(p, cpk::kCandThreads), [&](auto votes) {
    cpk::cp_candidates_kernel<cpk::kCandThreads, decltype(votes)::value><<<grid, cpk::kCandThreads, 0, st>>>(p);
  });
  return static_cast<int>(gpuGetLastError());
}

int launch_cp_merge(const CpArgs& a, const std::uint64_t* gathered, int head_base, int heads, std::int32_t* out,
                    void* stream) {
  if (a.R <= 0 || heads <= 0) return 0;
  if (!cpk::cp_args_ok(a) || head_base < 0 || head_base + heads > a.world)
    return static_cast<int>(gpuErrorInvalidValueCode);
  const cpk::CpMergeParams p = cpk::cp_merge_params(a, gathered, head_base, out);
  cpk::cp_merge_kernel<cpk::kMergeThreads>
      <<<static_cast<unsigned>(heads * a.R), cpk::kMergeThreads, 0, static_cast<gpuStream_t>(stream)>>>(p);
  return static_cast<int>(gpuGetLastError());
}

int launch_cp_step_sim(const CpArgs& a, std::int32_t* out, void* stream) {
  CpArgs s = a;
  s.rank_base = 0;
  s.ranks = a.world;
  int e = launch_cp_score(s, stream);
  if (e == 0) e = launch_cp_candidates(s, stream);
  // With every rank in one launch the candidate buffer is already the gathered layout.
  if (e == 0) e = launch_cp_merge(s, s.keys, 0, s.world, out, stream);
  return e;
}

}  // namespace ixo::gpu
