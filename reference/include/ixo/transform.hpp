// Case transformations that must not change any real row's answer (metamorphic tests
// and properties).
#pragma once
#include <cstdint>
#include <vector>

#include "ixo/case.hpp"

namespace ixo {

// Moves every cache slot s to perm[s] and every table row t to perm'[t] (seeded
// permutations), rewriting req_to_token (negative aliases stay negative) and slot_ids. A
// paged case moves whole physical pages and rewrites its page table (still paged). The
// other transforms keep the table, K and page table as they are: paged cases stay valid.
Case relabel_slots(const Case& c, std::uint64_t seed);

// Appends whole packed groups after the real rows: `padding` groups that read the table
// row of row 0's request with short lengths 2..P+1 (graph padding style), and `inactive`
// groups whose slot id lies past the table. Rows 0..R-1 keep their inputs.
Case append_rows(const Case& c, int padding, int inactive);

// The case with only the given rows (in that order); the table, K and config are kept. Used
// to reduce a failing case to the rows that fail.
Case keep_rows(const Case& c, const std::vector<std::int64_t>& rows);

// The case with only the q heads `heads` (in that order; K and its Hk heads kept). New head
// i must read the same K head as old head heads[i] did: the caller picks heads so that
// heads[i] / (Hq / Hk) == i / (new Hq / Hk). Used to reduce a failing case to fewer heads.
Case keep_heads(const Case& c, const std::vector<std::int64_t>& heads);

}  // namespace ixo
