// The case generators' value families (generate_values.cpp), called by generate()
// (generate.cpp) after it has laid out the requests, table rows and slots. Each draws from the
// case's one generator, so a spec and seed give the same case bit for bit.
#pragma once
#include <cstdint>
#include <random>
#include <vector>

#include "ixo/case.hpp"

namespace ixo::gen_detail {

using Rng = std::mt19937_64;

inline std::int64_t uniform(Rng& g, std::int64_t lo, std::int64_t hi) {  // inclusive
  return std::uniform_int_distribution<std::int64_t>(lo, hi)(g);
}

enum class Kind { real, padding, inactive };

struct Request {
  Kind kind;
  std::int64_t prefix;
  std::int64_t slot;  // value stored in slot_ids
};

// Gaussian q and K (fp8: uniform over the moderate finite codes; NVFP4: random codes, scales
// about one group in 8 large).
void fill_gaussian(Case& c, Rng& g);
// Near ties: one base vector a request, a one-step change in one element a token.
void fill_near_tie(Case& c, Rng& g);
// Tie-free exact integer block maxima (score max) for the real requests `reqs` whose used
// slots are `tokens`.
void fill_exact(Case& c, Rng& g, const std::vector<Request>& reqs,
                const std::vector<std::vector<std::int64_t>>& tokens);
// Ladder / plateau: each block of a request one of `levels` K vectors (plateau: 1), over
// each table row's used slots `tokens`.
void fill_levels(Case& c, Rng& g, int levels, const std::vector<std::vector<std::int64_t>>& tokens);
// About one token in 8 gets a subnormal / zero (nonfinite_too: NaN / Inf) code of its format.
void put_fp8_specials(Case& c, Rng& g, bool nonfinite_too);
// Every K code (NVFP4: every scale) a subnormal or zero code, about one in 8 a zero.
void put_fp8_subnormal_only(Case& c, Rng& g);

}  // namespace ixo::gen_detail
