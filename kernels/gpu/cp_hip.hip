// HIP translation unit of the CP kernels (hipcc). Same sources as cp_cuda.cu.
// indexer_kernels.cuh is also compiled by indexer_hip.hip: its only non-template kernel is
// renamed here so the two objects do not both define it (the copy here is unused).
#define fill_u32_kernel ixo_cp_tu_unused_fill_u32_kernel
#include "gpu/indexer_kernels.cuh"
#undef fill_u32_kernel
#include "gpu/cp_kernels.cuh"
#include "gpu/cp_launch.inl"
