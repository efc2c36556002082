// Metamorphic properties over any Backend (issue 13 section 2), beside backend_properties.hpp:
// batch invariance and repeat-run determinism. Bodies draw their own inputs (call them
// inside a property; props::draw_case).
#pragma once
#include "backend.hpp"
#include "ixo/case.hpp"

namespace ixo::props {

// The rows [r0, r0 + n) of c as a batch of their own (same K cache, table, config).
Case sub_batch(const Case& c, std::int64_t r0, std::int64_t n);

// A request's rows (whole packed groups) give bitwise the same ids and scores alone and
// inside the batch.
void batch_invariance(Backend& b, const RunOptions& opt);
// The same inputs give bitwise the same outputs over repeated launches, with other work
// (another case) run between them.
void repeat_runs_identical(Backend& b, const RunOptions& opt);

}  // namespace ixo::props
