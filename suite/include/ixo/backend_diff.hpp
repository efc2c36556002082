// Two backends' outputs on one case, compared bit for bit, with the first difference placed
// in the native plan: which CTA, program, tile row and KV chunk scored the differing cell
// (kernels/common/cell_plan.hpp). Used by `ixo diff` and by the kernel tests' failure reports.
#pragma once
#include <cstdint>
#include <string>

#include "backend.hpp"
#include "ixo/case.hpp"
#include "ixo/observed.hpp"
#include "ixo/verdict.hpp"

namespace ixo {

struct FirstDifference {
  bool shapes_differ = false;
  // First differing (head, row) of the ids in (head, row) order, its first differing slot.
  bool ids = false;
  std::int64_t ids_head = -1, ids_row = -1, ids_slot = -1;
  std::int32_t id_a = 0, id_b = 0;
  // First score cell whose bits differ, in (head, row, block) order.
  bool scores = false;
  std::int64_t head = -1, row = -1, block = -1;
  float score_a = 0, score_b = 0;
  bool any() const { return shapes_differ || ids || scores; }
};
FirstDifference first_difference(const Observed& a, const Observed& b);

// Where backend `traits` (registry traits: family cpu or cuda with native mutants = the
// native per-row / packed plan) scores cell (h, r, b) of case c with `forced_chunks` (0: the
// plan's): "CTA x 5 (program 1 = rows 4..7 packed, tile row 2), KV chunk 1 of 4 = blocks
// [16, 32), K head 0", or why there is no such place (not scored, not a native plan).
std::string plan_place(const Case& c, const BackendTraits& traits, int forced_chunks, std::int64_t h, std::int64_t r,
                       std::int64_t b);

// Where the verdict's first failing cell was computed: its (head, row, block), or for an ids
// failure the first block the oracle selects and the kernel missed, placed by plan_place.
// "" when no failure names a cell.
std::string failure_place(const Case& c, const BackendTraits& traits, const Verdict& v, int forced_chunks = 0);

// The report of d = first_difference(a, b): identical, or the first differing ids and score
// cell, each with its values and with the place of the differing cell in each backend's plan.
// Every line ends with a newline.
std::string diff_report(const Case& c, const std::string& name_a, const BackendTraits& traits_a, const Observed& a,
                        const std::string& name_b, const BackendTraits& traits_b, const Observed& b,
                        const FirstDifference& d, int forced_chunks = 0);

}  // namespace ixo
