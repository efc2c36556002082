// The CUDA backends: "cuda-rows" (per-row score kernel) and "cuda-packed" (packed score
// kernel, falling back to per-row when the pack does not fit). Both run score + top-k and
// return the poisoned score buffer too.
#pragma once
#include <memory>

#include "backend.hpp"

namespace ixo {

std::unique_ptr<Backend> make_cuda_rows_backend();
std::unique_ptr<Backend> make_cuda_packed_backend();

}  // namespace ixo
