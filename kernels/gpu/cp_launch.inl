// Host launch code of the CP kernels (included after cp_kernels.cuh by cp_cuda.cu and
// cp_hip.hip). No allocation, no host synchronization, grids from graph-constant values.
#include "gpu/cp_launch.hpp"

namespace ixo::gpu {
namespace {
namespace cpc = ixo::common::cp;

cpk::CpScoreParams cp_score_params(const CpArgs& a, int pack, std::int64_t LOCAL) {
  cpk::CpScoreParams p{};
  static_cast<ixo::common::IndexConfig&>(p) = a;
  p.qg = a.qg;
  p.k = static_cast<const std::uint8_t*>(a.k_cache);
  p.r2t = a.req_to_token;
  p.slot = a.slot_ids;
  p.lens = a.seq_lens;
  p.cells = a.cells;
  p.LOCAL = LOCAL;
  p.world = a.world;
  p.rank_base = a.rank_base;
  p.pack = pack;
  p.whole = a.R / pack;
  p.chunks = a.num_chunks > 0 ? a.num_chunks : cpc::num_chunks(ixo::common::packed_batch(a.R, pack), LOCAL);
  p.mult = ixo::common::logit_multiplier(a.sm_q_scale, a.k_scale);
  p.mutant = a.mutant;
  return p;
}

// KFMT: the K element format (common::KCode) the kernel is instantiated for.
template <int D, int KFMT>
gpuError_t launch_cp_fmt(const cpk::CpScoreParams& p, dim3 grid, gpuStream_t s) {
#if defined(IXO_GPU_CUDA)
  if constexpr (D > 0) {
    constexpr int smem = detail::MmaCfg<D, KFMT>::kSmemBytesWithEntries;  // K ring + EntryRing
    static const cudaError_t attr =
        cudaFuncSetAttribute(cpk::cp_score_mma_kernel<D, KFMT>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (attr != cudaSuccess) return attr;  // the ring would not fit: do not launch
    cpk::cp_score_mma_kernel<D, KFMT><<<grid, detail::kScoreThreads, smem, s>>>(p);
    return gpuSuccess;
  }
#endif
  cpk::cp_score_scalar_kernel<KFMT><<<grid, detail::kScoreThreads, 0, s>>>(p);
  return gpuSuccess;
}

template <int D>
gpuError_t launch_cp_d(const cpk::CpScoreParams& p, dim3 grid, gpuStream_t s) {
  switch (p.k_code) {
    case ixo::common::kBf16:
      return launch_cp_fmt<D, ixo::common::kBf16>(p, grid, s);
    case ixo::common::kE4m3fn:
      return launch_cp_fmt<D, ixo::common::kE4m3fn>(p, grid, s);
    case ixo::common::kE4m3fnuz:
      return launch_cp_fmt<D, ixo::common::kE4m3fnuz>(p, grid, s);
    default:
      return launch_cp_fmt<D, ixo::common::kE5m2>(p, grid, s);
  }
}

bool args_ok(const CpArgs& a) {
  return cp_head_dim_supported(a.D) && a.world >= 1 && a.world <= cpc::kMaxWorld && a.k_code >= 0 && a.k_code <= 3 &&
         a.ranks >= 1 && a.rank_base >= 0 && a.rank_base + a.ranks <= a.world && a.topk >= 1 &&
         a.topk <= cpc::kMaxCandidates && a.NB <= cpc::kMaxBlocks && a.NB >= 1;
}

}  // namespace

std::int64_t cp_local(const CpArgs& a) { return cpc::local_blocks(a.NB, a.world); }
bool cp_head_dim_supported(std::int64_t D) { return D >= 1 && D <= detail::kScalarMaxD; }
bool cp_pack_supported(const CpArgs& a) { return a.pack > 1 && ixo::common::pack_fits(a.pack, a.world); }

int launch_cp_score(const CpArgs& a, void* stream) {
  if (a.R <= 0) return 0;
  if (!args_ok(a)) return static_cast<int>(gpuErrorInvalidValueCode);
  const int pack = cp_pack_supported(a) ? a.pack : 1;
  const cpk::CpScoreParams p = cp_score_params(a, pack, cp_local(a));
  // Graph-constant grid (R, pack, LOCAL); which groups pack is decided per CTA from slot_ids.
  const dim3 grid(static_cast<unsigned>(ixo::common::packed_batch(a.R, pack) * p.chunks),
                  static_cast<unsigned>(a.ranks));
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
  if (!args_ok(a)) return static_cast<int>(gpuErrorInvalidValueCode);
  cpk::CpCandParams p{};
  p.cells = a.cells;
  p.keys = a.keys;
  p.R = a.R;
  p.LOCAL = cp_local(a);
  p.world = a.world;
  p.rank_base = a.rank_base;
  p.topk = a.topk;
  p.mutant = a.mutant;
  const dim3 grid(static_cast<unsigned>(a.world * a.R), static_cast<unsigned>(a.ranks));
  cpk::cp_candidates_kernel<cpk::kCandThreads><<<grid, cpk::kCandThreads, 0, static_cast<gpuStream_t>(stream)>>>(p);
  return static_cast<int>(gpuGetLastError());
}

int launch_cp_merge(const CpArgs& a, const std::uint64_t* gathered, int head_base, int heads, std::int32_t* out,
                    void* stream) {
  if (a.R <= 0 || heads <= 0) return 0;
  if (!args_ok(a) || head_base < 0 || head_base + heads > a.world) return static_cast<int>(gpuErrorInvalidValueCode);
  cpk::CpMergeParams p{};
  p.gathered = gathered;
  p.out = out;
  p.R = a.R;
  p.world = a.world;
  p.topk = a.topk;
  p.head_base = head_base;
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
