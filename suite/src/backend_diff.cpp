#include "ixo/backend_diff.hpp"

#include <fmt/format.h>

#include <cstring>

#include "case_config.hpp"
#include "common/cell_plan.hpp"

namespace ixo {
namespace {

std::uint32_t bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

bool native_plan_of(const BackendTraits& t) {
  return (t.family == "cpu" || t.family == "cuda" || t.family == "sim") && t.mutant_scope == "native";
}

}  // namespace

FirstDifference first_difference(const Observed& a, const Observed& b) {
  FirstDifference d;
  if (a.Hq != b.Hq || a.R != b.R || a.topk != b.topk || a.has_scores != b.has_scores || a.NB != b.NB ||
      a.topk_idx.size() != b.topk_idx.size() || a.scores.size() != b.scores.size()) {
    d.shapes_differ = true;
    return d;
  }
  for (std::size_t i = 0; i < a.topk_idx.size() && !d.ids; ++i)
    if (a.topk_idx[i] != b.topk_idx[i]) {
      const std::int64_t hr = static_cast<std::int64_t>(i) / a.topk;
      d.ids = true;
      d.ids_head = hr / a.R, d.ids_row = hr % a.R, d.ids_slot = static_cast<std::int64_t>(i) % a.topk;
      d.id_a = a.topk_idx[i], d.id_b = b.topk_idx[i];
    }
  for (std::size_t i = 0; i < a.scores.size() && !d.scores; ++i)
    if (bits(a.scores[i]) != bits(b.scores[i])) {
      const std::int64_t hr = static_cast<std::int64_t>(i) / a.NB;
      d.scores = true;
      d.head = hr / a.R, d.row = hr % a.R, d.block = static_cast<std::int64_t>(i) % a.NB;
      d.score_a = a.scores[i], d.score_b = b.scores[i];
    }
  return d;
}

std::string plan_place(const Case& c, const BackendTraits& traits, int forced_chunks, std::int64_t h, std::int64_t r,
                       std::int64_t b) {
  if (!native_plan_of(traits)) return "no native plan known (" + traits.family + " backend)";
  const common::IndexConfig k = index_config(c);
  const common::NativePlan p = common::native_plan(k, traits.packed, forced_chunks);
  const common::CellPlace at =
      common::locate_cell(common::row_inputs(k, c.slot_ids.data(), c.seq_lens.data()), c.R, p, h, r, b);
  if (!at.scored) return "a cell no program writes (its poison must stay)";
  const std::string rows = at.tile_pack > 1
                               ? fmt::format("rows {}..{} packed", at.tile_first, at.tile_first + at.tile_pack - 1)
                               : fmt::format("row {}", at.tile_first);
  return fmt::format("CTA x {} of {} (program {}: {}, tile row {}), KV chunk {} of {} = blocks [{}, {}), K head {}",
                     at.cta_x, p.grid_x(), at.program, rows, at.tile_row, at.chunk, p.chunks, at.chunk_b0, at.chunk_b1,
                     at.kv_head);
}

std::string failure_place(const Case& c, const BackendTraits& traits, const Verdict& v, int forced_chunks) {
  for (const Failure& f : v.details) {
    if (f.head < 0 || f.row < 0) continue;
    const std::int64_t b = f.block >= 0 ? f.block : (f.missing.empty() ? -1 : f.missing.front());
    if (b < 0) continue;
    return fmt::format("{} cell [head {}, row {}, block {}]{}: {}", f.tier, f.head, f.row, b,
                       f.block >= 0 ? "" : " (a block the oracle selects, missed)",
                       plan_place(c, traits, forced_chunks, f.head, f.row, b));
  }
  return "";
}

std::string diff_report(const Case& c, const std::string& name_a, const BackendTraits& traits_a, const Observed& a,
                        const std::string& name_b, const BackendTraits& traits_b, const Observed& b,
                        const FirstDifference& d, int forced_chunks) {
  if (d.shapes_differ)
    return fmt::format("{} and {} differ in shape: [{},{},{}] NB {} vs [{},{},{}] NB {}\n", name_a, name_b, a.Hq, a.R,
                       a.topk, a.NB, b.Hq, b.R, b.topk, b.NB);
  if (!d.any()) return fmt::format("{} and {} agree bit for bit (ids and every score cell)\n", name_a, name_b);
  std::string out;
  if (d.ids)
    out += fmt::format("first ids difference: head {} row {} slot {}: {} {} vs {} {} (the top-k of head {}, row {})\n",
                       d.ids_head, d.ids_row, d.ids_slot, name_a, d.id_a, name_b, d.id_b, d.ids_head, d.ids_row);
  else
    out += "ids: identical\n";
  if (d.scores) {
    out += fmt::format(
        "first score difference: [head {}, row {}, block {}]: {} {:#010x} ({:.9g}) vs {} {:#010x} ({:.9g})\n", d.head,
        d.row, d.block, name_a, bits(d.score_a), d.score_a, name_b, bits(d.score_b), d.score_b);
    out += fmt::format("  {}: {}\n", name_a, plan_place(c, traits_a, forced_chunks, d.head, d.row, d.block));
    out += fmt::format("  {}: {}\n", name_b, plan_place(c, traits_b, forced_chunks, d.head, d.row, d.block));
  } else {
    out += "scores: identical\n";
  }
  return out;
}

}  // namespace ixo
