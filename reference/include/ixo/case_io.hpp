// Case directories: case.json + q.npy, k_cache.npy, req_to_token.npy, slot_ids.npy,
// seq_lens.npy, and for paged K page_table.npy (int32 [rows, max_pages]; req_to_token.npy
// may then be left out: it is derived from the table; case.json "page_size"); outputs topk_idx.npy
// (int32 [Hq,R,topk]) and scores.npy (float32 [Hq,R,NB]).
#pragma once
#include <string>

#include "ixo/case.hpp"
#include "ixo/observed.hpp"

namespace ixo {

Config parse_config_json(const std::string& text);  // unknown keys are errors
std::string config_to_json(const Config& cfg);

Case load_case(const std::string& dir);  // validates; throws InputError
// The same, with K mapped read-only from k_cache.npy instead of read into Case::k_cache
// (Case::k_mapped; see case.hpp for who may read such a case). `ixo ref` uses it.
Case load_case_mapped(const std::string& dir);
void save_case(const Case& c, const std::string& dir);

// Load an implementation's outputs (scores optional: empty path = none) and check shapes.
Observed load_observed(const Case& c, const std::string& topk_path, const std::string& scores_path);
void save_observed(const Observed& o, const std::string& dir);

}  // namespace ixo
