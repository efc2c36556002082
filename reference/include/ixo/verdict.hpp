// The verdict: judge an implementation's outputs against the oracle.
// Tier 1 structure, tier 2 tie-aware ids (tau), tier 3 exact ids, tier 4 bitwise /
// poison checks. See docs/semantics.md and docs/error-bounds.md.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ixo/case.hpp"
#include "ixo/contract.hpp"
#include "ixo/observed.hpp"
#include "ixo/oracle.hpp"

namespace ixo {

struct JudgeOptions {
  bool exact_ids = false;     // tier 3: ids must equal the oracle's (tie-free inputs)
  bool check_scores = true;   // compare observed scores (if any) within tau
  bool check_poison = false;  // tier 4: cells outside the written region keep the poison
  std::uint32_t poison_bits = kScorePoisonBits;
  int max_reports = 8;  // failures printed in full
  // The kernel's contract: its semantic options are judged exactly (NaN blocks, equal forced
  // scores, id order, score buffer); `contract` names it in the report ("" = the spec).
  Semantics semantics;
  std::string contract;
};

// One failure in structured form (the same facts as its report line).
struct Failure {
  std::string tier;  // "structure", "ids", "exact ids", "scores", "poison", "bitwise", "kernel"
  std::int64_t head = -1, row = -1, block = -1;                  // -1 where it does not apply
  std::vector<std::int32_t> expected, observed, missing, extra;  // ids (tiers structure/ids/exact ids)
  double margin = 0, tau = 0;                                    // ids: how far beyond tau; scores: error and tau
  std::string message;                                           // the report line
};

struct Verdict {
  bool pass = true;
  std::int64_t rows_checked = 0;     // (head,row) pairs checked
  std::int64_t tie_swaps = 0;        // accepted selections that differ from the oracle's within tau
  std::int64_t failures = 0;         // failing (head,row) pairs or cells
  std::vector<std::string> reports;  // first max_reports failures, exact
  std::vector<Failure> details;      // the same failures, structured
  std::string contract;              // the contract judged under ("" = the spec)
  std::string summary() const;
};

// A failing verdict for an implementation that produced no judgeable output (it crashed,
// timed out, raised, wrote malformed files): `what` is the report.
Verdict kernel_failure_verdict(const std::string& what);

// Written region of the score buffer. ScoreBuffer::judged (our own kernels): active rows with
// nb > topk, columns [0, nb); trivial rows (nb <= topk) and inactive rows write nothing.
// ScoreBuffer::history (MiniMax's upstream kernel): the unforced columns of [0, nb) of every
// row, trivial rows included; forced cells are never written.
bool score_cell_written(const Expected& e, std::int64_t r, std::int64_t b, ScoreBuffer buffer = ScoreBuffer::judged);

Verdict judge(const Case& c, const Expected& e, const Observed& o, const JudgeOptions& opt = {});

// Tier 4: two implementations that run the same arithmetic must agree bit for bit on ids
// and on every score cell (poison included).
Verdict compare_bitwise(const Observed& a, const Observed& b, int max_reports = 8);

}  // namespace ixo
