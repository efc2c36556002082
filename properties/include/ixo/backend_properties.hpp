// The properties every backend must satisfy, as bodies that draw their own inputs with
// RapidCheck (call them inside a property). Shared by the property tests and by the
// mutation campaign (`ixo mutate`), which runs them with a mutant selected in `opt`.
#pragma once
#include <string>

#include "backend.hpp"
#include "ixo/arbitrary.hpp"

namespace ixo::props {

// A drawn case that every given backend supports (others are discarded, never passed).
Case draw_case(std::initializer_list<const Backend*> backends, gen::Knobs k = {});

void matches_oracle(Backend& b, const RunOptions& opt);            // tiers 1-2 + poison
void exact_values_give_exact_ids(Backend& b, const RunOptions& opt);  // tier 3
void near_ties_stay_within_tau(Backend& b, const RunOptions& opt);
void chunking_changes_nothing(Backend& b, const RunOptions& opt);     // bitwise vs forced chunk counts
void padding_and_inactive_rows_disturb_nothing(Backend& b, const RunOptions& opt);
void relabeling_slots_changes_nothing(Backend& b, const RunOptions& opt);
void packed_equals_rows(Backend& rows, Backend& packed, const RunOptions& opt);  // bitwise
void thread_count_changes_nothing(Backend& b, const RunOptions& opt);            // OpenMP 1 vs 2

}  // namespace ixo::props
