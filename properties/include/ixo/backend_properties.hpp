// The properties every backend must satisfy, as bodies that draw their own inputs with
// RapidCheck (call them inside a property). Shared by the property tests and by the
// mutation campaign (`ixo mutate`), which runs them with a mutant selected in `opt`.
#pragma once
#include <optional>
#include <string>

#include "backend.hpp"
#include "ixo/arbitrary.hpp"
#include "ixo/verdict.hpp"

namespace ixo::props {

// A drawn case that every given backend supports (others are discarded, never passed).
// Generators: the random spec of gen::spec(k), or, when set_presets() named presets, one
// of those presets (the seed shrinks).
Case draw_case(std::initializer_list<const Backend*> backends, gen::Knobs k = {});
void set_presets(std::vector<std::string> names);  // empty = gen::spec (this thread)
// The contract the bodies draw inside and judge under (this thread; null: the spec). A
// preset case outside it is discarded, never run.
void set_contract(std::shared_ptr<const Contract> c);
const std::shared_ptr<const Contract>& current_contract();
JudgeOptions contract_judge_options();  // the contract's semantics and label

// The spec and seed of the case the current property body drew last (this thread): the
// runner saves it as a regression directory when the body fails.
struct Drawn {
  GenSpec spec;
  std::uint32_t seed = 0;
};
const std::optional<Drawn>& last_drawn();
void forget_drawn();

// b.run(c) inside a property: Unsupported discards the case (never a pass).
Observed run(Backend& b, const Case& c, const RunOptions& opt);

void matches_oracle(Backend& b, const RunOptions& opt);               // tiers 1-2 + poison
void exact_values_give_exact_ids(Backend& b, const RunOptions& opt);  // tier 3
void near_ties_stay_within_tau(Backend& b, const RunOptions& opt);
void chunking_changes_nothing(Backend& b, const RunOptions& opt);  // bitwise vs forced chunk counts
void padding_and_inactive_rows_disturb_nothing(Backend& b, const RunOptions& opt);
void relabeling_slots_changes_nothing(Backend& b, const RunOptions& opt);
void packed_equals_rows(Backend& rows, Backend& packed, const RunOptions& opt);  // bitwise
void thread_count_changes_nothing(Backend& b, const RunOptions& opt);            // OpenMP 1 vs 2

}  // namespace ixo::props
