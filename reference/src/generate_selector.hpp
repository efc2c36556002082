// Values::selector_sweep (generate_selector.cpp): block scores MiniMax's quantized selector
// finds hard (../shared/spec/upstream-msa.md section 5, their top-k unit matrix).
#pragma once
#include <cstdint>
#include <vector>

#include "ixo/case.hpp"

namespace ixo {

// Every q row of every head is (1, 1, 1, 0, ...); every token of block b of table row t
// holds one K vector whose first three elements sum (in fp32) to the block's value, so a
// block's score is value * scale. The i-th table row holding tokens takes value set (s + i) % 6 (s drawn once):
//   0 U(-100, 100); 1 all equal (1.5); 2 the ties 3, 3, 2, 2 shuffled; 3 U(-1e20, 1e20);
//   4 steps: block 0 = -1, the others 1 - k * step +- 0.49 step (k = 0, 1, ..., shuffled over
//     the blocks; step = 2 / 65534: adjacent quantization buckets from the top down);
//   5 N(0, 7^2).
// bf16 K carries 24 bits (three bf16 terms); fp8 K the value's nearest code; nvfp4 K +-1 in
// element 0 times its block scale (the value's nearest e4m3fn, saturating at 448).
void fill_selector_sweep(Case& c, std::uint64_t seed, const std::vector<std::vector<std::int64_t>>& row_tokens);

}  // namespace ixo
