// CUDA translation unit of the indexer kernels (nvcc). Same sources as indexer_hip.hip.
#include "gpu/indexer_kernels.cuh"
#include "gpu/indexer_launch.inl"
