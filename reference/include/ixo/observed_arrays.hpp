// An implementation's outputs given as arrays (from Python, or read from .npy files),
// checked against the case's shapes: topk_idx int32 [Hq, R, topk]; scores float32
// [Hq, R, NB] with NB >= the largest nb of the batch. Throws InputError naming the field.
#pragma once
#include <cstdint>
#include <vector>

#include "ixo/case.hpp"
#include "ixo/observed.hpp"

namespace ixo {

struct ScoresArray {
  std::vector<std::int64_t> shape;
  std::vector<float> values;
};

Observed observed_from_arrays(const Case& c, const std::vector<std::int64_t>& topk_shape,
                              std::vector<std::int32_t> topk, const ScoresArray* scores = nullptr);

}  // namespace ixo
