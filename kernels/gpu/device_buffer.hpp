// Host-side CUDA helpers shared by the GPU backends: error checks, an owning device
// buffer, and the device-presence test behind Backend::available().
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace ixo::gpu {

// Throws with `who` (the backend) and `what` (the call) when a CUDA call failed.
inline void check(cudaError_t e, const char* who, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(who) + ": " + what + ": " + cudaGetErrorString(e));
}

// An owning device allocation of `count` T, optionally filled from the host.
template <class T>
struct DevBuf {
  T* p = nullptr;
  std::size_t n = 0;
  explicit DevBuf(std::size_t count) : n(count) {
    if (count) check(cudaMalloc(reinterpret_cast<void**>(&p), count * sizeof(T)), "cuda", "cudaMalloc");
  }
  DevBuf(const T* host, std::size_t count) : DevBuf(count) {
    if (count) check(cudaMemcpy(p, host, count * sizeof(T), cudaMemcpyHostToDevice), "cuda", "cudaMemcpy H2D");
  }
  ~DevBuf() {
    if (p) cudaFree(p);
  }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
};

// True when a CUDA device can be used; otherwise `why` says why (and the sticky error is cleared).
inline bool device_present(std::string* why) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    // Without a GPU the runtime says "CUDA driver version is insufficient..." (no driver at
    // all): users need to read "no CUDA device" first.
    if (why) *why = e != cudaSuccess ? std::string("no CUDA device (") + cudaGetErrorString(e) + ")" : "no CUDA device";
    cudaGetLastError();
    return false;
  }
  return true;
}

}  // namespace ixo::gpu
