// HIP translation unit of the CP kernels (hipcc). Same sources as cp_cuda.cu.
#include "gpu/cp_kernels.cuh"
#include "gpu/cp_launch.inl"
