// Case transformations that must not change any real row's answer (metamorphic tests
// and properties).
#pragma once
#include <optional>
#include <cstdint>
#include <vector>

#include "ixo/case.hpp"
#include "ixo/contract.hpp"

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

// The case with every negative alias resolved: token slots and slot ids in [-S, 0) replaced by
// their wrapped value s + S (the same K rows and table rows, so the same truth). Lets a
// contract without aliases (msa-decode) judge cases generated with them.
Case without_aliases(const Case& c);

// The form of case c a contract judges: &c when admitted (no copy), c without aliases written
// into `resolved` when that is admitted (a contract without negative aliases), else nullptr
// (outside the contract). The result points at c or at *resolved.
const Case* judged_form(const Contract& k, const Case& c, std::optional<Case>& resolved);

}  // namespace ixo
