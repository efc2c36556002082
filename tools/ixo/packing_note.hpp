// The command line's packing note (tools/ixo; it lived in kernels/ until issue 24 item 2).
// Which rows of a case the packed backends (cpu-packed, cuda-packed, cpu-cp, cuda-cp) run
// per row instead of in packed groups of packed_queries: one line for a report (`ixo
// check`), or "" when every row is in a packed group (or packed_queries is 1), e.g.
//   rows 8-11 (mixed slot ids), 12-14 (partial group) did not form a packed group of 4: 7 of 15 rows run per row
//
// packed_queries (P) is a launch hint, never part of the truth: every batch is valid and
// every row is judged by its own semantics. The packed plan (kernels/common, program_tiles)
// packs group g = rows g*P .. g*P+P-1 when its rows share one slot id; a group whose slot
// ids differ, and the R % P trailing rows (a partial group), run per row -- same outputs,
// bit for bit, just without the shared K loads. When P x Hq/Hk exceeds one 16-row tile,
// every row runs per row.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "case_config.hpp"
#include "common/plans.hpp"
#include "ixo/case.hpp"

namespace ixo {

inline std::string ungrouped_rows_note(const Case& c) {
  const int P = c.cfg.packed_queries;
  if (P <= 1 || c.R <= 0) return "";
  const std::string group = "packed group of " + std::to_string(P);
  // The packed backends' own plan (common::native_plan, program_tiles): nothing restated here.
  const common::NativePlan plan = common::native_plan(index_config(c), true);
  if (plan.pack == 1) {
    const std::int64_t gqa = c.Hk > 0 ? c.Hq / c.Hk : 0;
    return "packed_queries " + std::to_string(P) + " x Hq/Hk " + std::to_string(gqa) + " = " + std::to_string(P * gqa) +
           " tile rows exceed one " + std::to_string(common::kTileRows) + "-row tile: every row runs per row";
  }
  // Ranges of rows that do not pack, with their reason; adjacent ones of one reason merged.
  struct Range {
    std::int64_t first, last;
    const char* why;
  };
  std::vector<Range> ranges;
  auto add = [&](std::int64_t first, std::int64_t last, const char* why) {
    if (!ranges.empty() && ranges.back().last + 1 == first && ranges.back().why == why)
      ranges.back().last = last;
    else
      ranges.push_back(Range{first, last, why});
  };
  static const char* const kMixed = "mixed slot ids";
  static const char* const kPartial = "partial group";
  for (std::int64_t x = 0; x < plan.batch; ++x) {
    const common::ProgramTiles pt = common::program_tiles(c.slot_ids.data(), x, c.R, plan.pack);
    if (pt.pack > 1) continue;  // one packed tile
    const std::int64_t rows = static_cast<std::int64_t>(pt.count) * pt.pack;
    add(pt.first, pt.first + rows - 1, rows == P ? kMixed : kPartial);  // a whole group, or a trailing row
  }
  if (ranges.empty()) return "";

  std::int64_t rows = 0;
  for (const Range& r : ranges) rows += r.last - r.first + 1;
  constexpr std::size_t kShown = 6;
  std::string list;
  for (std::size_t i = 0; i < ranges.size() && i < kShown; ++i) {
    const Range& r = ranges[i];
    if (i) list += ", ";
    list += std::to_string(r.first);
    if (r.last > r.first) {  // appended piece by piece: GCC 12 -Wrestrict misfires on "-" + to_string
      list += '-';
      list += std::to_string(r.last);
    }
    list += " (";
    list += r.why;
    list += ')';
  }
  if (ranges.size() > kShown) list += ", ...";
  return std::string(rows == 1 ? "row " : "rows ") + list + " did not form a " + group + ": " + std::to_string(rows) +
         " of " + std::to_string(c.R) + " rows run per row";
}

}  // namespace ixo
