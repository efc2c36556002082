// What the GPU benchmarks share: the median of CUDA-event-timed launches, and the pure read
// kernel that measures the read ceiling (bench_gpu_index_step's floor, bench_gpu_read_pattern's
// 100 %).
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "cuda_check.hpp"

namespace ixo_bench {

// Median, in microseconds, of `reps` launches on `st`, each between two events, after
// `warmup` untimed ones. launch(i) issues launch i (warm-ups i = 0 .. warmup - 1, then the
// timed ones i = 0 .. reps - 1), so a caller can rotate its inputs.
template <class Launch>
float median_event_us(cudaStream_t st, int warmup, int reps, Launch&& launch) {
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int i = 0; i < warmup; ++i) launch(i);
  std::vector<float> t;
  for (int i = 0; i < reps; ++i) {
    CK(cudaEventRecord(e0, st));
    launch(i);
    CK(cudaEventRecord(e1, st));
    CK(cudaEventSynchronize(e1));
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    t.push_back(ms * 1000.0f);
  }
  CK(cudaGetLastError());
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// The read ceiling: every 16-byte word of p[0, n) loaded once (grid-stride), XORed into a
// sink that is never written in practice (so the loads are not dropped).
__global__ void read_kernel(const uint4* p, std::size_t n, unsigned* sink) {
  uint4 acc = make_uint4(0, 0, 0, 0);
  for (std::size_t i = blockIdx.x * (std::size_t)blockDim.x + threadIdx.x; i < n;
       i += (std::size_t)gridDim.x * blockDim.x) {
    const uint4 v = __ldg(p + i);
    acc.x ^= v.x;
    acc.y ^= v.y;
    acc.z ^= v.z;
    acc.w ^= v.w;
  }
  if ((acc.x ^ acc.y ^ acc.z ^ acc.w) == 0x12345678u) *sink = 1;
}

}  // namespace ixo_bench
