// Read-pattern benchmark (issue 12's packed bf16 limiter): how fast an H200 reads the packed
// bf16 16 x 131072 shape's K (537 MB of 256-byte rows) when only the copy method and the
// order of the reads change, without any scoring. Every kernel reads every byte once and
// XORs it into a sink, with the score kernel's grid (1024 CTAs x 4 warps, ~98 KB of shared
// memory a CTA, 2 CTAs an SM) and its unit of work (a warp's sub-tile: 32 rows = 8 KB).
//   method ldg:    16-byte loads into registers, the score kernel's piece layout (lane = token
//                  grp of n-tile j, tig * 16 + l * 64 bytes of its row).
//   method cpasync: the score kernel's copy ring (3 stages of cp.async.cg 16-byte pieces,
//                  wait_group, LDS back) (kernels/gpu/mma_tile.cuh ring_issue / ring_step),
//                  without the L2 prefetch-size hint (as before session 16) and with
//                  .L2::128B (the kernel's now).
//   method bulk:   TMA bulk copies (cp.async.bulk, one 256-byte row per lane) into a 3-stage
//                  ring completed by an mbarrier per stage.
//   ldg half (+ pf): half a sub-tile in registers at a time (+ prefetch.global.L2 of each
//                  lane's row kPfAhead sub-tiles ahead); cpasync pf: the ring + that prefetch.
//   order chunk:   the score kernel's: CTA x reads a contiguous 512 KB chunk, warp w its
//                  blocks w, w + 4, ... (32 KB each, 4 sub-tiles in order).
//   order spread:  sub-tile k * 4096 + x * 4 + w: the CTAs running together read neighbouring
//                  sub-tiles (a window of ~8 MB), as the pure read kernel does.
// Usage: bench_gpu_read_pattern [--reps N] [--out table.md]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "cuda_check.hpp"
#include "event_timing.cuh"

namespace {

constexpr int kRowBytes = 256;  // bf16, D 128
constexpr int kSubRows = 32;    // rows a sub-tile
constexpr int kSubBytes = kSubRows * kRowBytes;
constexpr int kSubsPerBlock = 4;                          // block size 128
constexpr int kWarps = 4;                                 // a CTA
constexpr int kCtas = 1024;                               // the packed plan's grid at 16 x 131072
constexpr int kStages = 3;                                // the bf16 ring's depth
constexpr int kRingBytes = kWarps * kStages * kSubBytes;  // 96 KB a CTA
enum Method { kLdg = 0, kCpAsync = 1, kBulk = 2, kLdgHalf = 3, kLdgHalfPf = 4, kCpAsyncPf = 5, kCpAsyncL2 = 6 };
constexpr int kPfAhead = 3;  // sub-tiles ahead that the *Pf methods prefetch into L2
enum Order { kChunk = 0, kSpread = 1 };

// Byte offset of sub-tile i of warp w of CTA x (subs: sub-tiles a warp).
template <int O>
__device__ __forceinline__ std::size_t sub_offset(int x, int w, int i, int subs) {
  if constexpr (O == kChunk) {
    const std::size_t chunk = static_cast<std::size_t>(x) * kWarps * subs * kSubBytes;
    const int blk = w + kWarps * (i / kSubsPerBlock);
    return chunk + (static_cast<std::size_t>(blk) * kSubsPerBlock + i % kSubsPerBlock) * kSubBytes;
  } else {
    return (static_cast<std::size_t>(i) * kCtas * kWarps + static_cast<std::size_t>(x) * kWarps + w) * kSubBytes;
  }
}

__device__ __forceinline__ void xor_in(uint4& acc, const uint4& v) {
  acc.x ^= v.x;
  acc.y ^= v.y;
  acc.z ^= v.z;
  acc.w ^= v.w;
}
// This lane's 16 pieces of a sub-tile at `base` (row j * 8 + grp, bytes l * 64 + tig * 16).
__device__ __forceinline__ std::size_t piece(int j, int l, int lane) {
  return static_cast<std::size_t>(j * 8 + (lane >> 2)) * kRowBytes + l * 64 + (lane & 3) * 16;
}

// kL2Hint: with the L2 prefetch-size hint .L2::128B (the score kernel's since session 16).
template <bool kL2Hint = false>
__device__ __forceinline__ void cp16(void* smem, const void* g) {
  const unsigned sa = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  if constexpr (kL2Hint) {
    asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16;\n" ::"r"(sa), "l"(g) : "memory");
  } else {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(sa), "l"(g) : "memory");
  }
}
// L2 prefetch of this lane's row (both 128-byte lines) of the sub-tile at `base`.
__device__ __forceinline__ void prefetch_row(const std::uint8_t* base, int lane) {
  const std::uint8_t* r = base + static_cast<std::size_t>(lane) * kRowBytes;
  asm volatile("prefetch.global.L2 [%0];\n" ::"l"(r));
  asm volatile("prefetch.global.L2 [%0];\n" ::"l"(r + 128));
}
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wait_group() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void bar_init(std::uint64_t* bar) {
  asm volatile("mbarrier.init.shared.b64 [%0], 1;\n" ::"r"(smem_addr(bar)) : "memory");
}
__device__ __forceinline__ void bar_expect(std::uint64_t* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void bulk_row(void* dst, const void* src, std::uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(smem_addr(dst)),
      "l"(src), "n"(kRowBytes), "r"(smem_addr(bar))
      : "memory");
}
__device__ __forceinline__ void bar_wait(std::uint64_t* bar, unsigned parity) {
  asm volatile(
      "{\n .reg .pred p;\n WAIT_%=:\n mbarrier.try_wait.parity.shared.b64 p, [%0], %1;\n @!p bra WAIT_%=;\n}\n" ::"r"(
          smem_addr(bar)),
      "r"(parity)
      : "memory");
}

template <int M, int O>
__global__ void __launch_bounds__(kWarps * 32, 2) read_pattern(const std::uint8_t* k, int subs, unsigned* sink) {
  extern __shared__ uint4 ring[];
  __shared__ std::uint64_t bars[kWarps][kStages];
  const int w = threadIdx.x >> 5, lane = threadIdx.x & 31, x = blockIdx.x;
  uint4 acc = make_uint4(0, 0, 0, 0);
  std::uint8_t* my = reinterpret_cast<std::uint8_t*>(ring) + w * kStages * kSubBytes;
  if constexpr (M == kLdg) {
    for (int i = 0; i < subs; ++i) {
      const std::uint8_t* b = k + sub_offset<O>(x, w, i, subs);
      uint4 v[16];
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int l = 0; l < 4; ++l) v[j * 4 + l] = __ldcg(reinterpret_cast<const uint4*>(b + piece(j, l, lane)));
#pragma unroll
      for (int q = 0; q < 16; ++q) xor_in(acc, v[q]);
    }
  } else if constexpr (M == kLdgHalf || M == kLdgHalfPf) {
    // Half a sub-tile (n-tiles j = 0, 1 or 2, 3: 4 KB a warp) in flight at a time.
    for (int i = 0; i < subs; ++i) {
      const std::uint8_t* b = k + sub_offset<O>(x, w, i, subs);
      if constexpr (M == kLdgHalfPf) {
        if (i + kPfAhead < subs) prefetch_row(k + sub_offset<O>(x, w, i + kPfAhead, subs), lane);
      }
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        uint4 v[8];
#pragma unroll
        for (int j = 0; j < 2; ++j)
#pragma unroll
          for (int l = 0; l < 4; ++l)
            v[j * 4 + l] = __ldcg(reinterpret_cast<const uint4*>(b + piece(h * 2 + j, l, lane)));
#pragma unroll
        for (int q = 0; q < 8; ++q) xor_in(acc, v[q]);
      }
    }
  } else if constexpr (M == kCpAsync || M == kCpAsyncPf || M == kCpAsyncL2) {
    auto issue = [&](int i) {
      if constexpr (M == kCpAsyncPf) {
        if (i + kPfAhead < subs) prefetch_row(k + sub_offset<O>(x, w, i + kPfAhead, subs), lane);
      }
      const std::uint8_t* b = k + sub_offset<O>(x, w, i, subs);
      uint4* st = reinterpret_cast<uint4*>(my + (i % kStages) * kSubBytes);
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int l = 0; l < 4; ++l) cp16<M == kCpAsyncL2>(st + (j * 4 + l) * 32 + lane, b + piece(j, l, lane));
    };
    for (int i = 0; i < kStages - 1; ++i) {
      if (i < subs) issue(i);
      commit();
    }
    for (int i = 0; i < subs; ++i) {
      if (i + kStages - 1 < subs) issue(i + kStages - 1);
      commit();
      wait_group<kStages - 1>();
      const uint4* st = reinterpret_cast<const uint4*>(my + (i % kStages) * kSubBytes);
#pragma unroll
      for (int q = 0; q < 16; ++q) xor_in(acc, st[q * 32 + lane]);
    }
    wait_group<0>();
  } else {
    if (lane == 0)
      for (int s = 0; s < kStages; ++s) bar_init(&bars[w][s]);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    __syncwarp();
    auto issue = [&](int i) {
      const int s = i % kStages;
      if (lane == 0) bar_expect(&bars[w][s], kSubBytes);
      __syncwarp();
      bulk_row(my + s * kSubBytes + lane * kRowBytes, k + sub_offset<O>(x, w, i, subs) + lane * kRowBytes, &bars[w][s]);
    };
    for (int i = 0; i < kStages - 1 && i < subs; ++i) issue(i);
    for (int i = 0; i < subs; ++i) {
      if (i + kStages - 1 < subs) issue(i + kStages - 1);
      bar_wait(&bars[w][i % kStages], static_cast<unsigned>((i / kStages) & 1));
      const std::uint8_t* st = my + (i % kStages) * kSubBytes;
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int l = 0; l < 4; ++l) xor_in(acc, *reinterpret_cast<const uint4*>(st + piece(j, l, lane)));
      __syncwarp();  // every lane has read stage i % kStages before the next issue refills it
    }
  }
  if ((acc.x ^ acc.y ^ acc.z ^ acc.w) == 0x12345678u) *sink = 1;
}

__global__ void fill(std::uint32_t* p, std::size_t n) {
  for (std::size_t i = blockIdx.x * (std::size_t)blockDim.x + threadIdx.x; i < n;
       i += (std::size_t)gridDim.x * blockDim.x)
    p[i] = static_cast<std::uint32_t>(i * 2654435761u);
}

// smem: dynamic shared memory a CTA (kRingBytes: 2 CTAs an SM, as the score kernel; more: 1).
template <int M, int O>
float run_pattern(const std::uint8_t* k, int subs, unsigned* sink, int reps, cudaStream_t st, int smem = kRingBytes) {
  CK(cudaFuncSetAttribute(read_pattern<M, O>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  return ixo_bench::median_event_us(st, 3, reps,
                                    [&](int) { read_pattern<M, O><<<kCtas, kWarps * 32, smem, st>>>(k, subs, sink); });
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 30;
  std::string out;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc)
      reps = std::max(1, std::atoi(argv[++i]));
    else if (a == "--out" && i + 1 < argc)
      out = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--reps N] [--out table.md]\n", argv[0]);
      return 2;
    }
  }
  int dev_count = 0;
  if (cudaGetDeviceCount(&dev_count) != cudaSuccess || dev_count == 0) {
    std::fprintf(stderr, "no CUDA device\n");
    return 77;
  }
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  const int subs = 16;  // a warp's sub-tiles: 16 x 131072 x 256 B / (1024 x 4 x 8 KB)
  const std::size_t bytes = static_cast<std::size_t>(kCtas) * kWarps * subs * kSubBytes;
  std::uint8_t* k;
  unsigned* sink;
  CK(cudaMalloc(&k, bytes));
  CK(cudaMalloc(&sink, 4));
  fill<<<1024, 256>>>(reinterpret_cast<std::uint32_t*>(k), bytes / 4);
  CK(cudaDeviceSynchronize());
  cudaStream_t st;
  CK(cudaStreamCreate(&st));
  struct Row {
    const char* method;
    const char* order;
    float us;
  };
  std::vector<Row> rows;
  rows.push_back(
      {"plain 16-byte loads, grid-stride (the read ceiling)", "-", ixo_bench::median_event_us(st, 3, reps, [&](int) {
         ixo_bench::read_kernel<<<prop.multiProcessorCount * 8, 512, 0, st>>>(reinterpret_cast<const uint4*>(k),
                                                                              bytes / 16, sink);
       })});
  rows.push_back({"ldg (registers)", "chunk", run_pattern<kLdg, kChunk>(k, subs, sink, reps, st)});
  rows.push_back({"ldg (registers)", "spread", run_pattern<kLdg, kSpread>(k, subs, sink, reps, st)});
  rows.push_back({"cp.async ring, no L2 hint (the score kernel's until session 16)", "chunk",
                  run_pattern<kCpAsync, kChunk>(k, subs, sink, reps, st)});
  rows.push_back({"cp.async ring, no L2 hint (the score kernel's until session 16)", "spread",
                  run_pattern<kCpAsync, kSpread>(k, subs, sink, reps, st)});
  rows.push_back({"cp.async ring, .L2::128B (the score kernel's)", "chunk",
                  run_pattern<kCpAsyncL2, kChunk>(k, subs, sink, reps, st)});
  rows.push_back({"TMA bulk rows + mbarrier ring", "chunk", run_pattern<kBulk, kChunk>(k, subs, sink, reps, st)});
  rows.push_back({"TMA bulk rows + mbarrier ring", "spread", run_pattern<kBulk, kSpread>(k, subs, sink, reps, st)});
  rows.push_back(
      {"ldg (registers), 1 CTA an SM", "chunk", run_pattern<kLdg, kChunk>(k, subs, sink, reps, st, 160 * 1024)});
  rows.push_back({"ldg, half a sub-tile in flight", "chunk", run_pattern<kLdgHalf, kChunk>(k, subs, sink, reps, st)});
  rows.push_back({"ldg, half a sub-tile + L2 prefetch 3 ahead", "chunk",
                  run_pattern<kLdgHalfPf, kChunk>(k, subs, sink, reps, st)});
  rows.push_back(
      {"cp.async ring + L2 prefetch 3 ahead", "chunk", run_pattern<kCpAsyncPf, kChunk>(k, subs, sink, reps, st)});
  rows.push_back(
      {"cp.async ring, 1 CTA an SM", "chunk", run_pattern<kCpAsync, kChunk>(k, subs, sink, reps, st, 160 * 1024)});
  std::string table =
      "Device: " + std::string(prop.name) + ", " + std::to_string(prop.multiProcessorCount) + " SMs. " +
      std::to_string(bytes / 1000000) + " MB read once a launch, median of " + std::to_string(reps) +
      " launches (CUDA events).\n\n| method | order | us | GB/s | % of the read ceiling |\n|---|---|---|---|---|\n";
  for (const Row& r : rows) {
    char line[256];
    std::snprintf(line, sizeof line, "| %s | %s | %.1f | %.0f | %.0f %% |\n", r.method, r.order, r.us,
                  bytes / (r.us * 1e3), 100.0 * rows[0].us / r.us);
    table += line;
  }
  std::fputs(table.c_str(), stdout);
  if (!out.empty()) std::ofstream(out) << table;
  cudaFree(k);
  cudaFree(sink);
  return 0;
}
