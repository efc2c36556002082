// Case generators: seeded, deterministic, built from the spec (not from kernel code).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ixo/case.hpp"

namespace ixo {

enum class Values : std::uint8_t {
  gaussian,        // q, K ~ N(0,1) rounded to the dtype (K stored as value / k_scale)
  exact,           // tie-free: every block max is a distinct exactly representable value (score max only)
  near_tie,        // block maxima packed into a narrow band
  ladder,          // every block of a request one of ladder_levels K vectors: block scores take a
                   // few distinct values (narrow ladders, histogram-bin crowding)
  plateau,         // every token of a request the same K vector: all logits of a row equal,
                   // exact score ties across every block
  selector_sweep,  // block scores that stress a quantized selector: step-spaced values under the
                   // top, ties, +-1e20, all equal (generate_selector.hpp; score max)
};

// The page table of a paged case (cfg.page_size > 1) over N = max_pages + 3 physical pages,
// row b of the table (MSA's test tables; their 2 x 4 tables are rows 0 and 1 at N = 7):
enum class PageTable : std::uint8_t {
  random,    // per row, the first max_pages of a random permutation of the N pages
  interval,  // (2p + b) mod N: [[0,2,4,6],[1,3,5,0]]
  reverse,   // (N - 1 - 3b - p) mod N: [[6,5,4,3],[3,2,1,0]]
};

struct GenSpec {
  int requests = 2;
  int draft_rows = 4;                  // rows per request (L_j = prefix + j + 1)
  std::vector<std::int64_t> prefixes;  // one per request; empty = random in [1, max_prefix]
  std::int64_t max_prefix = 2000;
  std::int64_t Hq = 1, Hk = 1, D = 128;
  Config cfg;  // cfg.packed_queries is ignored: see packed_queries below
  Values values = Values::gaussian;
  bool permute_slots = true;                // request table rows permuted, never the row/group index, gaps between
  std::vector<std::int64_t> request_slots;  // explicit table rows (overrides permute_slots)
  bool permute_tokens = true;               // token slots a random permutation of the cache
  bool negative_aliases = true;             // some token slots stored as slot - S
  int padding_requests = 0;                 // graph padding: table row 0, prefix 1 (L = 2..ndt+1)
  int inactive_requests = 0;                // slot ids outside the table
  std::int64_t extra_width = 8;             // table columns past the longest row
  // Real CUDA-graph batches (packed_queries is a launch hint: any batch is valid).
  int packed_queries = 0;             // the case's packed_queries; 0 = draft_rows. Another value
                                      // makes groups straddle requests (mixed slot ids) and R
                                      // need not be a multiple of it
  int trailing_padding_rows = 0;      // single graph padding rows after all requests (table row
                                      // 0, L = 2, 3, .., draft_rows+1, 2, ..): they need not fill a group
  int trailing_inactive_rows = 0;     // single inactive rows at the very end (slot id past the
                                      // table, -1 aliasing past it, or length 0)
  int inactive_rows_in_requests = 0;  // rows of real requests made inactive: length 0 (the slot
                                      // id kept) or a slot id past the table (its group then
                                      // mixes slot ids); random rows, each at most once
  // Boundary dimensions (docs/NOTES.md "Condition coverage"); off by default, and off they
  // draw nothing, so older specs give the same cases.
  int ladder_levels = 4;            // Values::ladder: distinct K vectors (>= 1)
  bool fp8_specials = false;        // fp8 K: about one token in 8 gets an element replaced by a
                                    // subnormal or a +-0 code of its format
  bool fp8_nonfinite = false;       // with fp8_specials: NaN/Inf codes too
  bool alias_minus_s = false;       // token slot 0 is always stored as its alias -S
  bool fp8_subnormal_only = false;  // fp8 K: every element a subnormal or zero code of its format
                                    // (a cache quantized with a tiny scale: no normal code at all)
  // Shared K (docs/semantics.md "Paged K"). cfg.page_size > 1: a paged case whose table
  // `pages` maps every table row onto N = max_pages + 3 physical pages, so pages are shared
  // between requests (negative_aliases, alias_minus_s and permute_tokens do not apply).
  // page_size 1: shared_prefix > 0 gives every other real request's first
  // min(shared_prefix, both lengths) positions the first real request's token slots.
  // Values::exact needs private slots (both are errors with it).
  PageTable pages = PageTable::random;
  std::int64_t shared_prefix = 0;

  // One builder for the set-up blocks (GenSpec{}.rows(2, 4).heads(2, 1, 64)...).
  GenSpec& rows(int n_requests, int n_draft_rows) {
    requests = n_requests;
    draft_rows = n_draft_rows;
    return *this;
  }
  GenSpec& heads(std::int64_t hq, std::int64_t hk, std::int64_t d) {
    Hq = hq;
    Hk = hk;
    D = d;
    return *this;
  }
  GenSpec& blocks(int block_size, int topk, int init_blocks, int local_blocks) {
    cfg.block_size = block_size;
    cfg.topk = topk;
    cfg.init_blocks = init_blocks;
    cfg.local_blocks = local_blocks;
    return *this;
  }
  GenSpec& lengths(std::vector<std::int64_t> p) {
    prefixes = std::move(p);
    return *this;
  }
  GenSpec& up_to(std::int64_t prefix) {
    max_prefix = prefix;
    return *this;
  }
  GenSpec& k(KDtype t, double k_scale = 1.0) {
    cfg.k_dtype = t;
    cfg.k_scale = k_scale;
    return *this;
  }
  GenSpec& score(ScoreType t) {
    cfg.score_type = t;
    return *this;
  }
  GenSpec& with(Values v) {
    values = v;
    return *this;
  }
  GenSpec& slots(std::vector<std::int64_t> s) {
    request_slots = std::move(s);
    return *this;
  }
  GenSpec& pack(int p) {
    packed_queries = p;
    return *this;
  }
};

Case generate(const GenSpec& spec, std::uint64_t seed);
const char* values_name(Values v);
const char* page_table_name(PageTable p);  // "random", "interval", "reverse"

// The class of an fp8 code of format t (exponent field 0 and a nonzero mantissa: subnormal).
enum class Fp8Kind : std::uint8_t { normal, subnormal, zero, nonfinite };
Fp8Kind fp8_kind(std::uint8_t code,
                 KDtype t);  // "gaussian", "exact", "near_tie", "ladder", "plateau", "selector_sweep"

// Named presets for `ixo gen` and the default suite.
std::vector<std::string> preset_names();
GenSpec preset(const std::string& name);  // throws InputError("preset", name)

}  // namespace ixo

namespace ixo {

// GenSpec <-> JSON (fixtures and fuzz regressions). Keys: requests, draft_rows,
// prefixes, max_prefix, Hq, Hk, D, config (case.json keys; its packed_queries is ignored),
// values ("gaussian"|"exact"|"near_tie"|"ladder"|"plateau"|"selector_sweep"), permute_slots, request_slots,
// permute_tokens, negative_aliases, padding_requests, inactive_requests, extra_width, packed_queries
// (0 = draft_rows), trailing_padding_rows, trailing_inactive_rows,
// inactive_rows_in_requests, ladder_levels, fp8_specials, fp8_nonfinite, alias_minus_s,
// pages ("random"|"interval"|"reverse"), shared_prefix (the GenSpec
// fields of the same names; all optional, default 0/off), or "preset": NAME as the base that the other keys
// override. Unknown keys are errors.
GenSpec spec_from_json(const std::string& text);
std::string spec_to_json(const GenSpec& s);

}  // namespace ixo
