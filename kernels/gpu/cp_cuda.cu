// CUDA translation unit of the CP kernels (nvcc). Same sources as cp_hip.hip.
#include "gpu/cp_kernels.cuh"
#include "gpu/cp_launch.inl"
