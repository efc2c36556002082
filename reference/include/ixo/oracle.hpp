// The oracle: exact expected block scores (float64 from exactly decoded inputs), an error
// bound tau per score for an fp32 kernel, and the expected top-k ids.
#pragma once
#include <cstdint>
#include <vector>

#include "ixo/case.hpp"
#include "ixo/observed.hpp"

namespace ixo {

struct Expected {
  std::int64_t Hq = 0, R = 0, NB = 0, topk = 0;
  std::vector<std::int64_t> nb;        // [R] blocks of each row (0: inactive or empty)
  std::vector<double> score;           // [Hq, R, NB] forced scores; -inf past nb
  std::vector<double> tau;             // [Hq, R, NB] error bound of an fp32 kernel (0 when forced)
  std::vector<std::uint8_t> forced;    // [Hq, R, NB] 1 when the block is forced
  std::vector<std::int32_t> topk_idx;  // [Hq, R, topk] ascending, -1 padded

  std::int64_t at(std::int64_t h, std::int64_t r, std::int64_t b) const { return (h * R + r) * NB + b; }
};

// Forced score values as the kernels store them (fp32 1e30 and 1e29), widened exactly.
double forced_init_value();
double forced_local_value();

// Naive loop version: obviously right, for small cases.
Expected oracle_naive(const Case& c);
// Eigen + OpenMP version: same arithmetic in the same order (bitwise equal scores), fast.
Expected oracle(const Case& c);

// Selection from a row of forced scores (score desc, lower id first, NaN lowest;
// nb <= topk gives 0..nb-1); writes topk ids ascending, -1 padded.
void select_topk(const double* scores, std::int64_t nb, std::int64_t topk, std::int32_t* out);

// The oracle's outputs as an implementation's (scores as float32): save_observed writes them
// as topk_idx.npy and scores.npy.
Observed expected_as_observed(const Expected& e);

}  // namespace ixo
