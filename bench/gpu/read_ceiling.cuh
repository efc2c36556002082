// The bandwidth ceilings the GPU benchmarks compare against, measured in the same run: a pure
// read of 4 GiB (ixo_bench::read_kernel, 16-byte loads) and a 2 GiB device-to-device copy
// (read + written).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdio>

#include "cuda_check.hpp"
#include "event_timing.cuh"

namespace ixo_bench {

struct BandwidthCeilings {
  double read_gbs;  // pure read, GB/s
  double copy_gbs;  // device copy, bytes read + written, GB/s
};

// Device 0 and a non-blocking stream for a benchmark; false (printed: skipped) without a device.
inline bool open_device(cudaDeviceProp& prop, cudaStream_t& st) {
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    std::printf("no CUDA device: benchmark skipped\n");
    return false;
  }
  CK(cudaGetDeviceProperties(&prop, 0));
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  return true;
}

inline BandwidthCeilings measure_ceilings(const cudaDeviceProp& prop, cudaStream_t st) {
  BandwidthCeilings c;
  const std::size_t n = std::size_t(4) << 30;
  void *a, *b;
  unsigned* sink;
  CK(cudaMalloc(&a, n));
  CK(cudaMalloc(&b, n / 2));
  CK(cudaMalloc(&sink, 4));
  CK(cudaMemset(a, 1, n));
  const float read_us = median_event_us(st, 3, 20, [&](int) {
    read_kernel<<<prop.multiProcessorCount * 8, 512, 0, st>>>(static_cast<const uint4*>(a), n / 16, sink);
  });
  c.read_gbs = n / (read_us * 1e-6) / 1e9;
  const float copy_us =
      median_event_us(st, 3, 10, [&](int) { CK(cudaMemcpyAsync(b, a, n / 2, cudaMemcpyDeviceToDevice, st)); });
  c.copy_gbs = 2.0 * (n / 2) / (copy_us * 1e-6) / 1e9;
  cudaFree(a);
  cudaFree(b);
  cudaFree(sink);
  return c;
}

}  // namespace ixo_bench
