// The project's own CUDA/HIP portability header: kernel sources use the gpu* names and
// IXO_GPU_* macros below, and compile unchanged as CUDA (.cu, nvcc) and HIP (.hip, hipcc).
// Debian's ROCm 5.2 wrappers for NVIDIA do not compile under nvcc 13, hence this header.
#pragma once

#if defined(IXO_SIM_HOST)
// The host simulation of the portable kernels (kernels/sim_host): plain C++, GPU threads as fibers.
#include "sim_host/gpu_port_host.hpp"
#elif defined(__HIPCC__) || defined(__HIP_PLATFORM_AMD__)
#include <hip/hip_runtime.h>
#define IXO_GPU_HIP 1
using gpuError_t = hipError_t;
using gpuStream_t = hipStream_t;
#define gpuSuccess hipSuccess
#define gpuGetLastError hipGetLastError
#define gpuGetErrorString hipGetErrorString
#define IXO_WARP_SIZE 64
#define IXO_SHFL_UP(v, d) __shfl_up((v), (d))
#define IXO_BALLOT(pred) static_cast<unsigned long long>(__ballot((pred)))  // bit l: lane l's pred
#define gpuErrorInvalidValueCode hipErrorInvalidValue
#define gpuMalloc hipMalloc
#define gpuFree hipFree
#define gpuMemcpyAsync hipMemcpyAsync
#define gpuMemcpyDeviceToDevice hipMemcpyDeviceToDevice
#else
#include <cuda_runtime.h>
#define IXO_GPU_CUDA 1
using gpuError_t = cudaError_t;
using gpuStream_t = cudaStream_t;
#define gpuSuccess cudaSuccess
#define gpuGetLastError cudaGetLastError
#define gpuGetErrorString cudaGetErrorString
#define IXO_WARP_SIZE 32
#define IXO_SHFL_UP(v, d) __shfl_up_sync(0xffffffffu, (v), (d))
#define IXO_BALLOT(pred) static_cast<unsigned long long>(__ballot_sync(0xffffffffu, (pred)))  // whole warp
#define gpuErrorInvalidValueCode cudaErrorInvalidValue
#define gpuMalloc cudaMalloc
#define gpuFree cudaFree
#define gpuMemcpyAsync cudaMemcpyAsync
#define gpuMemcpyDeviceToDevice cudaMemcpyDeviceToDevice
#endif

// Tensor-core path (mma.sync m16n8k16 bf16, fp8 widening by cvt): NVIDIA sm_80 and newer
// device passes only. Everything else (HIP, host pass) uses the portable scalar path.
#if defined(IXO_GPU_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define IXO_GPU_MMA 1
#else
#define IXO_GPU_MMA 0
#endif
// Hardware fp8x2 -> f16x2 conversion (sm_89+).
#if IXO_GPU_MMA && __CUDA_ARCH__ >= 890
#define IXO_GPU_CVT_FP8 1
#else
#define IXO_GPU_CVT_FP8 0
#endif
