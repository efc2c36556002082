// The context-parallel indexer on WORLD GPUs: one process per GPU (fork), the NCCL unique
// id handed to the other ranks through pipes, ncclAllGather of the index queries (each rank
// holds its own head) and of the candidate keys, each rank merging its own head. The ids
// (all-gathered once more) and the gathered keys must equal the single-process simulation
// (launch_cp_step_sim on rank 0's GPU) bit for bit. Then the step time, all-gathers
// included, is measured.
//
//   ixo_cp_nccl [--world N] [--case NAME]... [--reps N]
//   cases: rocm-bf16, rocm-e4m3fnuz (4 requests x 4 draft rows ending at 32767..32770,
//   init 1, local 2), bench-bf16 / bench-e4m3fn (8 requests x 4 draft rows x 131072).
// Exit: 0 all equal, 1 a mismatch or error, 77 fewer than 2 GPUs (and no --world).
// NVLink multicast stays off (NCCL_NVLS_ENABLE=0 is set before NCCL starts).
#include <cuda_runtime.h>
#include <nccl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cp_common.hpp"
#include "gpu/cp_launch.hpp"
#include "gpu/index_args.hpp"
#include "ixo/case.hpp"
#include "ixo/generate.hpp"

namespace {

// Check a CUDA (CK) or NCCL (NK) call; on failure print it with this rank and return 1.
#define IXO_RANK_CHECK(type, ok, to_string, x)                              \
  do {                                                                      \
    const type e_ = (x);                                                    \
    if (e_ != ok) {                                                         \
      std::fprintf(stderr, "rank %d: %s: %s\n", g_rank, #x, to_string(e_)); \
      return 1;                                                             \
    }                                                                       \
  } while (0)
#define CK(x) IXO_RANK_CHECK(cudaError_t, cudaSuccess, cudaGetErrorString, x)
#define NK(x) IXO_RANK_CHECK(ncclResult_t, ncclSuccess, ncclGetErrorString, x)

int g_rank = -1;

ixo::Case make_case(const std::string& name, int world) {
  // The ROCm PR's shape (tests/cp/cp_cases.cpp rocm_pr_spec builds the same through the builder).
  ixo::GenSpec s = ixo::GenSpec{}.rows(4, 4).heads(world, 1, 128).blocks(128, 16, 1, 2).lengths({255 * 128 + 126});
  if (name == "rocm-e4m3fnuz") s.cfg.k_dtype = ixo::KDtype::e4m3fnuz;
  if (name.rfind("bench", 0) == 0) {
    s.rows(8, 4).blocks(128, 16, 0, 1).lengths({131072});
    s.negative_aliases = false;
    if (name == "bench-e4m3fn") s.cfg.k_dtype = ixo::KDtype::e4m3fn;
  }
  return ixo::generate(s, 41488);
}

template <class T>
T* upload(const std::vector<T>& v) {
  T* p = nullptr;
  if (cudaMalloc(reinterpret_cast<void**>(&p), std::max<std::size_t>(1, v.size()) * sizeof(T)) != cudaSuccess)
    return nullptr;
  if (!v.empty()) cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice);
  return p;
}
template <class T>
T* alloc(std::size_t n) {
  T* p = nullptr;
  if (cudaMalloc(reinterpret_cast<void**>(&p), std::max<std::size_t>(1, n) * sizeof(T)) != cudaSuccess) return nullptr;
  return p;
}

// One rank (one process, one GPU). Returns the process exit code.
int rank_main(int rank, int world, const ixo::Case& c, const std::string& name, const ncclUniqueId& id, int reps,
              int pack) {
  g_rank = rank;
  CK(cudaSetDevice(rank));
  const std::int64_t R = c.R, D = c.D;
  // Replicated inputs; this rank's own index head q[:, rank, :].
  std::vector<std::uint16_t> qloc(static_cast<std::size_t>(R * D));
  for (std::int64_t r = 0; r < R; ++r)
    std::memcpy(&qloc[r * D], &c.q[(r * c.Hq + rank) * D], D * sizeof(std::uint16_t));
  ixo::gpu::CpArgs a = ixo::gpu::cp_args(c, world, rank, 1, pack);
  const std::int64_t LOCAL = ixo::gpu::cp_local(a);
  const std::size_t nkeys = static_cast<std::size_t>(world) * R * a.topk;

  std::uint16_t* d_qloc = upload(qloc);
  std::uint16_t* d_qg = alloc<std::uint16_t>(static_cast<std::size_t>(world) * R * D);
  std::uint8_t* d_k = upload(c.k_cache);
  std::int32_t* d_r2t = upload(c.req_to_token);
  std::int64_t* d_slot = upload(c.slot_ids);
  std::int64_t* d_lens = upload(c.seq_lens);
  std::uint32_t* d_cells = alloc<std::uint32_t>(ixo::gpu::cp_cells_bytes(a, LOCAL) / 4);
  std::uint64_t* d_keys = alloc<std::uint64_t>(nkeys);
  std::uint64_t* d_keys_g = alloc<std::uint64_t>(nkeys * world);
  std::int32_t* d_out = alloc<std::int32_t>(static_cast<std::size_t>(R) * a.topk);
  std::int32_t* d_out_all = alloc<std::int32_t>(static_cast<std::size_t>(world) * R * a.topk);
  if (!d_qloc || !d_qg || !d_k || !d_r2t || !d_slot || !d_lens || !d_cells || !d_keys || !d_keys_g || !d_out ||
      !d_out_all) {
    std::fprintf(stderr, "rank %d: cudaMalloc failed\n", rank);
    return 1;
  }
  a.qg = d_qg;
  a.k_cache = d_k;
  a.req_to_token = d_r2t;
  a.slot_ids = d_slot;
  a.seq_lens = d_lens;
  a.cells = d_cells;
  a.keys = d_keys;

  ncclComm_t comm;
  NK(ncclCommInitRank(&comm, world, id, rank));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  auto local_work = [&]() -> int {
    int e = ixo::gpu::launch_cp_score(a, s);
    if (e == 0) e = ixo::gpu::launch_cp_candidates(a, s);
    return e;
  };
  auto step = [&]() -> int {
    NK(ncclAllGather(d_qloc, d_qg, static_cast<std::size_t>(R * D) * 2, ncclUint8, comm, s));
    CK(static_cast<cudaError_t>(local_work()));
    NK(ncclAllGather(d_keys, d_keys_g, nkeys * 8, ncclUint8, comm, s));
    CK(static_cast<cudaError_t>(ixo::gpu::launch_cp_merge(a, d_keys_g, rank, 1, d_out, s)));
    return 0;
  };
  if (step() != 0) return 1;
  NK(ncclAllGather(d_out, d_out_all, static_cast<std::size_t>(R) * a.topk, ncclInt32, comm, s));
  CK(cudaStreamSynchronize(s));

  int status = 0;
  if (rank == 0) {
    // The single-process simulation of all WORLD ranks on this GPU.
    std::vector<std::uint16_t> qg(static_cast<std::size_t>(world * R * D));
    for (int h = 0; h < world; ++h)
      for (std::int64_t r = 0; r < R; ++r)
        std::memcpy(&qg[(h * R + r) * D], &c.q[(r * c.Hq + h) * D], D * sizeof(std::uint16_t));
    ixo::gpu::CpArgs sim = a;
    sim.rank_base = 0;
    sim.ranks = world;
    sim.qg = upload(qg);
    sim.cells = alloc<std::uint32_t>(ixo::gpu::cp_cells_bytes(sim, LOCAL) / 4);
    sim.keys = alloc<std::uint64_t>(nkeys * world);
    std::int32_t* d_sim_out = alloc<std::int32_t>(static_cast<std::size_t>(world) * R * a.topk);
    CK(static_cast<cudaError_t>(ixo::gpu::launch_cp_step_sim(sim, d_sim_out, s)));
    CK(cudaStreamSynchronize(s));
    std::vector<std::int32_t> got(static_cast<std::size_t>(world) * R * a.topk), want(got.size());
    std::vector<std::uint64_t> kg(nkeys * world), ks(nkeys * world);
    CK(cudaMemcpy(got.data(), d_out_all, got.size() * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(want.data(), d_sim_out, want.size() * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(kg.data(), d_keys_g, kg.size() * 8, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(ks.data(), sim.keys, ks.size() * 8, cudaMemcpyDeviceToHost));
    std::int64_t bad_ids = 0, bad_keys = 0, minus_one = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      bad_ids += got[i] != want[i];
      minus_one += got[i] < 0;
    }
    for (std::size_t i = 0; i < kg.size(); ++i) bad_keys += kg[i] != ks[i];
    std::printf(
        "case %s WORLD %d pack %d: R %lld NB %lld LOCAL %lld: ids %s (%zu ids, %lld differ, %lld are -1), "
        "gathered keys %s (%lld differ)\n",
        name.c_str(), world, pack, static_cast<long long>(R), static_cast<long long>(a.NB),
        static_cast<long long>(LOCAL), bad_ids ? "DIFFER" : "EQUAL", got.size(), static_cast<long long>(bad_ids),
        static_cast<long long>(minus_one), bad_keys ? "DIFFER" : "EQUAL", static_cast<long long>(bad_keys));
    status = (bad_ids || bad_keys) ? 1 : 0;
  }

  if (reps > 0) {
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    auto timed = [&](auto&& body) -> double {
      for (int i = 0; i < 3; ++i) body();
      std::vector<float> ms;
      for (int i = 0; i < reps; ++i) {
        cudaEventRecord(e0, s);
        body();
        cudaEventRecord(e1, s);
        cudaEventSynchronize(e1);
        float t = 0;
        cudaEventElapsedTime(&t, e0, e1);
        ms.push_back(t);
      }
      std::sort(ms.begin(), ms.end());
      return 1000.0 * ms[ms.size() / 2];
    };
    const double full = timed([&] { step(); });
    const double compute = timed([&] {
      local_work();
      ixo::gpu::launch_cp_merge(a, d_keys_g, rank, 1, d_out, s);
    });
    const double gather_q =
        timed([&] { ncclAllGather(d_qloc, d_qg, static_cast<std::size_t>(R * D) * 2, ncclUint8, comm, s); });
    const double gather_k = timed([&] { ncclAllGather(d_keys, d_keys_g, nkeys * 8, ncclUint8, comm, s); });
    std::printf(
        "TIMING case %s WORLD %d pack %d rank %d: step %.1f us (score + candidates + merge %.1f us, "
        "all-gather q %.1f us, all-gather keys %.1f us), median of %d\n",
        name.c_str(), world, pack, rank, full, compute, gather_q, gather_k, reps);
  }
  std::fflush(stdout);
  ncclCommDestroy(comm);
  return status;
}

// Number of GPUs, counted in a child process so the parent never initialises CUDA
// before forking the ranks.
int probe_devices() {
  const pid_t pid = fork();
  if (pid == 0) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
    std::_Exit(std::min(n, 100));
  }
  int st = 0;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 0;
}

}  // namespace

int main(int argc, char** argv) {
  setenv("NCCL_NVLS_ENABLE", "0", 1);  // never NVLink multicast
  int world = 0, reps = 20;
  std::vector<std::string> cases;
  std::vector<int> packs = {4, 1};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--world" && i + 1 < argc)
      world = std::atoi(argv[++i]);
    else if (a == "--case" && i + 1 < argc)
      cases.push_back(argv[++i]);
    else if (a == "--reps" && i + 1 < argc)
      reps = std::atoi(argv[++i]);
    else if (a == "--pack" && i + 1 < argc)
      packs = {std::atoi(argv[++i])};
    else {
      std::fprintf(stderr, "usage: %s [--world N] [--case NAME]... [--reps N] [--pack P]\n", argv[0]);
      return 1;
    }
  }
  if (cases.empty()) cases = {"rocm-bf16", "rocm-e4m3fnuz"};
  const int ndev = probe_devices();
  if (world == 0) {
    if (ndev < 2) {
      std::printf("ixo_cp_nccl: %d GPU(s): the multi-GPU run needs 2 or more (skipped)\n", ndev);
      return 77;
    }
    world = std::min(ndev, ixo::common::cp::kMaxWorld);
  }
  if (world > ndev) {
    std::printf("ixo_cp_nccl: WORLD %d > %d GPU(s) (skipped)\n", world, ndev);
    return 77;
  }
  int status = 0;
  for (const auto& name : cases) {
    const auto t0 = std::chrono::steady_clock::now();
    const ixo::Case c = make_case(name, world);  // before fork: the ranks inherit it
    const double gen_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("case %s: generated in %.1f s\n", name.c_str(), gen_s);
    std::fflush(stdout);
    for (int pack : packs) {
      // Rank 0 makes the unique id and writes it to one pipe per other rank.
      std::vector<int> pipes(2 * world, -1);
      for (int r = 1; r < world; ++r)
        if (pipe(&pipes[2 * r]) != 0) return 1;
      std::vector<pid_t> pids;
      for (int r = 0; r < world; ++r) {
        const pid_t pid = fork();
        if (pid == 0) {
          ncclUniqueId id;
          if (r == 0) {
            if (ncclGetUniqueId(&id) != ncclSuccess) std::_Exit(1);
            for (int o = 1; o < world; ++o)
              if (write(pipes[2 * o + 1], &id, sizeof id) != static_cast<ssize_t>(sizeof id)) std::_Exit(1);
          } else {
            std::size_t got = 0;
            while (got < sizeof id) {
              const ssize_t n = read(pipes[2 * r], reinterpret_cast<char*>(&id) + got, sizeof id - got);
              if (n <= 0) std::_Exit(1);
              got += static_cast<std::size_t>(n);
            }
          }
          std::_Exit(rank_main(r, world, c, name, id, reps, pack));
        }
        pids.push_back(pid);
      }
      for (pid_t pid : pids) {
        int st = 0;
        waitpid(pid, &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) status = 1;
      }
      for (int fd : pipes)
        if (fd >= 0) close(fd);
    }
  }
  std::printf("ixo_cp_nccl: %s\n", status == 0 ? "PASS (multi-GPU == single-process simulation)" : "FAIL");
  return status;
}
