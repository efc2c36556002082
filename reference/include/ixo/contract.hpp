// A kernel's contract: what it promises, judged inside, never outside (docs/contracts.md).
// Two parts. The domain: which cases the kernel accepts at all (block sizes, head dims,
// topk, heads, dtypes, init/local, rows and lengths, how rows are packed, inactive rows,
// negative aliases, non-finite inputs); generators draw only inside it and a case outside
// it is never run. The semantics: where peers legitimately differ (NaN blocks, equal forced
// scores, output order, the score buffer); the verdict judges each option exactly.
// One definition here, with a JSON form (contract_from_json / contract_to_json) that the
// command line (--contract FILE|NAME) and the Python package (io.Contract) read.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ixo/case.hpp"

namespace ixo {

// How the kernel's caller forms packed verify groups out of the case's rows.
enum class Packing : std::uint8_t {
  any_rows,     // the kernel takes any batch with packed_queries P and packs what qualifies (ours)
  full_groups,  // only aligned full groups of P consecutive rows on one slot id (chain
                // lengths L..L+P-1) are packed, every other row runs per row (SGLang's caller);
                // generated cases use P = the draft rows of a request
  none,         // a per-row kernel: packed_queries is always 1
};
// Where a block whose score is NaN ranks.
enum class NanRank : std::uint8_t { lowest, highest, unspecified };
// Which blocks a kernel keeps among exactly equal forced scores (more forced blocks than topk).
enum class ForcedTies : std::uint8_t { any, lowest_id };
// Order of the first min(topk, nb) ids of a row.
//   ascending:          ids ascending (ours, SGLang's);
//   score_descending:   ids in descending score order (forced blocks rank by their 1e30/1e29);
//   ranked_forced_last: rows with nb > topk hold the unforced ids in descending score order,
//                       then the forced ids ascending (MiniMax's upstream selector: 15 ranked
//                       history pages, the local page n-1 in slot 15); rows with nb <= topk
//                       hold 0..nb-1 ascending.
enum class IdOrder : std::uint8_t { ascending, score_descending, ranked_forced_last };
// What the returned score buffer must hold:
//   judged:  within tau on columns [0, nb) of rows with nb > topk, forced cells exactly
//            1e30/1e29 (ours);
//   history: within tau on the unforced columns of [0, nb) of EVERY active row (trivial rows
//            too), forced cells and columns >= nb never written (MiniMax's upstream kernel);
//   ignored: a kernel that returns scores it does not promise.
enum class ScoreBuffer : std::uint8_t { judged, ignored, history };
// How the kernel selects among unforced blocks:
//   exact:       the top of its scores, ties to the lower id (judged within tau);
//   quantized16: MiniMax's 16-bit quantized selector over the row's unforced scores:
//                q = floor((v - lo) * 65534 / (hi - lo) + 1.5), ties to the lower id; blocks
//                closer than one step (hi - lo) / 65534 may swap (the verdict's slack delta,
//                docs/error-bounds.md); with the kernel's own scores returned, the selector is
//                replayed bit-exactly on them (docs/contracts.md).
enum class Selection : std::uint8_t { exact, quantized16 };
// Units of the returned scores: log2 (dot * sm_scale * q_scale * log2(e) * k_scale, ours) or
// natural (dot * sm_scale * q_scale * k_scale: no log2(e), MiniMax's upstream scores).
enum class ScoreUnits : std::uint8_t { log2, natural };

struct Semantics {
  NanRank nan_blocks = NanRank::lowest;
  ForcedTies forced_ties = ForcedTies::any;
  IdOrder order = IdOrder::ascending;
  ScoreBuffer scores = ScoreBuffer::judged;
  Selection selection = Selection::exact;
  ScoreUnits score_units = ScoreUnits::log2;
  bool operator==(const Semantics&) const = default;
};

struct Contract {
  std::string name = "spec";
  std::string description = "the whole semantics (docs/semantics.md): every case the oracle defines";
  // Domain. An empty list allows every value; the generators then use their own ranges.
  std::vector<int> block_sizes;
  std::vector<int> head_dims;
  int topk_min = 1, topk_max = kMaxTopk;
  std::vector<std::pair<int, int>> heads;  // allowed (Hq, Hk) pairs; empty: any Hq multiple of Hk
  std::vector<KDtype> k_dtypes;
  std::vector<int> page_sizes;   // K page sizes (1: token slots); empty: any
  std::vector<KDtype> q_dtypes;  // bf16, e4m3fn; empty: any
  std::vector<ScoreType> score_types;
  int init_max = -1;                  // -1: any init_blocks
  int local_min = 0, local_max = -1;  // local_max -1: any
  std::int64_t max_rows = 0;          // 0: any R
  std::int64_t max_length = 0;        // 0: any seq_len
  Packing packing = Packing::any_rows;
  bool inactive_rows = true;     // rows of length 0 or with a slot id outside the table
  bool negative_aliases = true;  // negative token slots / slot ids (wrapped by S)
  bool nonfinite = true;         // NaN/Inf fp8 codes in K or q (NaN nvfp4 scales, NaN/Inf bf16 bits in q or K)
  Semantics semantics;

  // Why case c lies outside the domain (the field and value named), or nothing.
  std::optional<std::string> refuses(const Case& c) const;
  bool admits(const Case& c) const { return !refuses(c); }
  // One line for reports: "contract sglang-triton-decode (nan_blocks unspecified, ...)".
  std::string label() const;
};

// Named contracts (docs/contracts.md): "spec", "sglang-triton-decode", "ixo-native",
// "ixo-cp", "msa-decode".
const std::vector<std::string>& contract_names();
Contract named_contract(const std::string& name);  // throws InputError("contract", ...)
// A contract as JSON: every key optional, "base": NAME (default "spec") supplies the rest;
// unknown keys and bad values are InputErrors naming the key.
Contract contract_from_json(const std::string& text);
std::string contract_to_json(const Contract& c);
// A name of contract_names() or a path to a JSON file (InputError("--contract", ...)).
Contract load_contract(const std::string& name_or_file);

// Aligned full groups of case c under Packing::full_groups: rows [g*P, (g+1)*P) on one raw
// slot id, active, lengths L, L+1, .., L+P-1 (P = c.cfg.packed_queries > 1). Row r's group
// start, or -1 when row r runs per row.
std::vector<std::int64_t> full_group_starts(const Case& c);

std::string_view to_string(Packing p);
std::string_view to_string(NanRank n);
std::string_view to_string(ForcedTies t);
std::string_view to_string(IdOrder o);
std::string_view to_string(ScoreBuffer s);
std::string_view to_string(Selection s);
std::string_view to_string(ScoreUnits u);

}  // namespace ixo
