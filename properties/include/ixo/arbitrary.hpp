// RapidCheck generators for the indexer's domain types, one per type, and the knobs of a
// generated case (GenSpec). A property draws a GenSpec and a seed; the Case is
// ixo::generate(spec, seed), so a shrunk counterexample is a small, readable spec.
#pragma once
#include <rapidcheck.h>

#include <memory>
#include <ostream>

#include "ixo/contract.hpp"
#include "ixo/generate.hpp"

namespace ixo {

// Printing for RapidCheck counterexamples.
void showValue(const GenSpec& s, std::ostream& os);
void showValue(KDtype t, std::ostream& os);
void showValue(ScoreType t, std::ostream& os);

namespace gen {

// A prefix length: mostly m*bs + {-2,-1,0,+1} (rows straddling block boundaries), else anywhere.
rc::Gen<std::int64_t> prefix(int block_size, std::int64_t max_prefix);

// The compile-time parameters of a JIT kernel (Triton recompiles for each new tuple):
// block size, head dim, heads, topk, K and q dtypes, score type and the pack P. `ixo fuzz --shapes
// N` keeps a run to N of them and varies everything else.
struct ShapeKey {
  int block_size = 128, D = 128, Hq = 1, Hk = 1, topk = 16, pack = 1;
  KDtype k_dtype = KDtype::bf16;
  KDtype q_dtype = KDtype::bf16;
  ScoreType score_type = ScoreType::max;
  bool operator==(const ShapeKey&) const = default;
};
ShapeKey shape_key(const GenSpec& s, Packing packing);

struct Knobs {
  int max_requests = 8;
  int max_draft_rows = 8;
  std::int64_t max_prefix = 2500;
  int max_topk = 64;
  bool allow_lse = true;
  Values values = Values::gaussian;  // exact forces score max
  // Real CUDA-graph batches: packed_queries other than the rows per request (groups mixing
  // slot ids, R not a multiple of it), trailing padding / inactive rows that do not fill a
  // group, inactive rows inside requests (GenSpec's fields of the same names).
  bool graph_rows = true;
  // Boundary dimensions (arbitrary.cpp, docs/NOTES.md "Condition coverage"): long rows
  // (16384+ blocks, top-k up to 2048), q scales that push lse logits past the fp32 exp2
  // range, fp8 special codes in K. Wide init windows, topk 1 and the alias -S are always on.
  bool long_rows = true;
  bool big_scales = true;
  bool fp8_specials = true;  // subnormal and +-0 codes
  // NaN/Inf codes too (with fp8_specials): a NaN logit makes its block NaN, a +inf one +inf,
  // max and lse, in the oracle and the kernels alike (docs/semantics.md "Scores").
  bool fp8_nonfinite = true;
  // Shared K (issue 25 item 4): about one case in 4 paged (page size 16 or 128, page tables
  // random / interval / reverse: physical pages shared between requests), and one token-slot
  // case in 5 with a shared prefix (requests reading the same slots). Off with exact values.
  bool shared_k = true;
  // The kernel's contract (null: the spec): every drawn case lies inside its domain, and
  // shrinking stays inside (each choice is drawn from the contract's own ranges).
  std::shared_ptr<const Contract> contract;
  // Non-empty: every case takes one of these compile-time tuples (compile-aware fuzzing).
  std::shared_ptr<const std::vector<ShapeKey>> shapes;
};

// Up to n distinct shape tuples drawn inside k's contract (deterministic in seed).
std::vector<ShapeKey> draw_shapes(const Knobs& k, int n, std::uint64_t seed);

// The whole case description: requests, draft rows, Hq:Hk, D, block size, dtype,
// scales, score type, init/local, topk, slot permutation, aliases, padding, inactive, and
// the graph-batch rows above.
rc::Gen<GenSpec> spec(Knobs k = {});

}  // namespace gen
}  // namespace ixo

namespace rc {

template <>
struct Arbitrary<ixo::KDtype> {
  static Gen<ixo::KDtype> arbitrary() {
    return gen::element(ixo::KDtype::bf16, ixo::KDtype::e4m3fn, ixo::KDtype::e4m3fnuz, ixo::KDtype::e5m2);
  }
};

template <>
struct Arbitrary<ixo::ScoreType> {
  static Gen<ixo::ScoreType> arbitrary() { return gen::element(ixo::ScoreType::max, ixo::ScoreType::lse); }
};

template <>
struct Arbitrary<ixo::GenSpec> {
  static Gen<ixo::GenSpec> arbitrary() { return ixo::gen::spec(); }
};

}  // namespace rc
