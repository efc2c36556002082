// HIP translation unit of the indexer kernels (hipcc). Same sources as indexer_cuda.cu.
#include "gpu/indexer_kernels.cuh"
#include "gpu/indexer_launch.inl"
