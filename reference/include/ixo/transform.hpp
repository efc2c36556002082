// Case transformations that must not change any real row's answer (metamorphic tests
// and properties).
#pragma once
#include <cstdint>

#include "ixo/case.hpp"

namespace ixo {

// Moves every cache slot s to perm[s] and every table row t to perm'[t] (seeded
// permutations), rewriting req_to_token (negative aliases stay negative) and slot_ids.
Case relabel_slots(const Case& c, std::uint64_t seed);

// Appends whole packed groups after the real rows: `padding` groups that read the table
// row of row 0's request with short lengths 2..P+1 (graph padding style), and `inactive`
// groups whose slot id lies past the table. Rows 0..R-1 keep their inputs.
Case append_rows(const Case& c, int padding, int inactive);

}  // namespace ixo
