// The verdict: judge an implementation's outputs against the oracle.
// Tier 1 structure, tier 2 tie-aware ids (tau), tier 3 exact ids, tier 4 bitwise /
// poison checks. See docs/architecture.md.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ixo/case.hpp"
#include "ixo/observed.hpp"
#include "ixo/oracle.hpp"

namespace ixo {

struct JudgeOptions {
  bool exact_ids = false;        // tier 3: ids must equal the oracle's (tie-free inputs)
  bool check_scores = true;      // compare observed scores (if any) within tau
  bool check_poison = false;     // tier 4: cells outside the written region keep the poison
  std::uint32_t poison_bits = kScorePoisonBits;
  int max_reports = 8;           // failures printed in full
};

struct Verdict {
  bool pass = true;
  std::int64_t rows_checked = 0;     // (head,row) pairs checked
  std::int64_t tie_swaps = 0;        // accepted selections that differ from the oracle's within tau
  std::int64_t failures = 0;         // failing (head,row) pairs or cells
  std::vector<std::string> reports;  // first max_reports failures, exact
  std::string summary() const;
};

// Written region of the score buffer of our own kernels: active rows with nb > topk,
// columns [0, nb). Trivial rows (nb <= topk) and inactive rows write nothing.
bool score_cell_written(const Expected& e, std::int64_t r, std::int64_t b);

Verdict judge(const Case& c, const Expected& e, const Observed& o, const JudgeOptions& opt = {});

// Tier 4: two implementations that run the same arithmetic must agree bit for bit on ids
// and on every score cell (poison included).
Verdict compare_bitwise(const Observed& a, const Observed& b, int max_reports = 8);

}  // namespace ixo
