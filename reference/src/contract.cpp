// The contract's domain check and its named instances (docs/contracts.md).
#include "ixo/contract.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "ixo/error.hpp"

namespace ixo {

namespace {

template <class T>
bool allowed(const std::vector<T>& list, const T& v) {
  return list.empty() || std::find(list.begin(), list.end(), v) != list.end();
}

bool bf16_nonfinite(std::uint16_t bits) { return (bits & 0x7F80u) == 0x7F80u; }

bool k_has_nonfinite(const Case& c) {
  const auto k = c.k_view();
  if (is_nvfp4(c.cfg.k_dtype)) {  // E2M1 codes are all finite; a NaN scale makes its 16 elements NaN
    const auto& table = fp8_table(KDtype::e4m3fn);
    return std::any_of(c.k_scales.begin(), c.k_scales.end(),
                       [&](std::uint8_t code) { return !std::isfinite(table[code]); });
  }
  if (is_fp8(c.cfg.k_dtype)) {
    const auto& table = fp8_table(c.cfg.k_dtype);
    return std::any_of(k.begin(), k.end(), [&](std::uint8_t code) { return !std::isfinite(table[code]); });
  }
  for (std::size_t i = 0; i + 1 < k.size(); i += 2)
    if (bf16_nonfinite(static_cast<std::uint16_t>(k[i] | (k[i + 1] << 8)))) return true;
  return false;
}

}  // namespace

std::string_view to_string(Packing p) {
  switch (p) {
    case Packing::any_rows:
      return "any_rows";
    case Packing::full_groups:
      return "full_groups";
    case Packing::none:
      return "none";
  }
  return "?";
}
std::string_view to_string(NanRank n) {
  switch (n) {
    case NanRank::lowest:
      return "lowest";
    case NanRank::highest:
      return "highest";
    case NanRank::unspecified:
      return "unspecified";
  }
  return "?";
}
std::string_view to_string(ForcedTies t) { return t == ForcedTies::any ? "any" : "lowest_id"; }
std::string_view to_string(IdOrder o) {
  switch (o) {
    case IdOrder::ascending:
      return "ascending";
    case IdOrder::score_descending:
      return "score_descending";
    case IdOrder::ranked_forced_last:
      return "ranked_forced_last";
  }
  return "?";
}
std::string_view to_string(ScoreBuffer s) {
  switch (s) {
    case ScoreBuffer::judged:
      return "judged";
    case ScoreBuffer::ignored:
      return "ignored";
    case ScoreBuffer::history:
      return "history";
  }
  return "?";
}
std::string_view to_string(Selection s) { return s == Selection::exact ? "exact" : "quantized16"; }
std::string_view to_string(ScoreUnits u) { return u == ScoreUnits::log2 ? "log2" : "natural"; }

std::optional<std::string> Contract::refuses(const Case& c) const {
  const Config& f = c.cfg;
  if (!allowed(block_sizes, f.block_size))
    return fmt::format("block_size {} (contract allows {})", f.block_size, block_sizes);
  if (!allowed(head_dims, static_cast<int>(c.D))) return fmt::format("D {} (contract allows {})", c.D, head_dims);
  if (f.topk < topk_min || f.topk > topk_max)
    return fmt::format("topk {} (contract allows {}..{})", f.topk, topk_min, topk_max);
  if (!allowed(heads, std::pair<int, int>(static_cast<int>(c.Hq), static_cast<int>(c.Hk))))
    return fmt::format("(Hq, Hk) ({}, {}) (contract allows {})", c.Hq, c.Hk, heads);
  if (!allowed(k_dtypes, f.k_dtype)) return fmt::format("k_dtype {}", to_string(f.k_dtype));
  if (!allowed(page_sizes, f.page_size))
    return fmt::format("page_size {} (contract allows {})", f.page_size, page_sizes);
  if (!allowed(q_dtypes, f.q_dtype)) return fmt::format("q_dtype {}", to_string(f.q_dtype));
  if (!allowed(score_types, f.score_type)) return fmt::format("score_type {}", to_string(f.score_type));
  if (init_max >= 0 && f.init_blocks > init_max)
    return fmt::format("init_blocks {} (contract allows <= {})", f.init_blocks, init_max);
  if (f.local_blocks < local_min || (local_max >= 0 && f.local_blocks > local_max))
    return fmt::format("local_blocks {} (contract allows {}..{})", f.local_blocks, local_min,
                       local_max < 0 ? std::string("any") : std::to_string(local_max));
  if (max_rows > 0 && c.R > max_rows) return fmt::format("R {} rows (contract allows <= {})", c.R, max_rows);
  if (packing == Packing::none && f.packed_queries != 1)
    return fmt::format("packed_queries {} (a per-row contract: packing none)", f.packed_queries);
  for (std::int64_t r = 0; r < c.R; ++r) {
    const std::int64_t L = c.seq_lens[static_cast<std::size_t>(r)];
    if (max_length > 0 && L > max_length)
      return fmt::format("seq_lens[{}] = {} (contract allows <= {})", r, L, max_length);
    const std::int64_t t = table_row(c, r);
    if (t < 0) {
      if (!inactive_rows)
        return fmt::format("row {} is inactive (seq_lens {} , slot_ids {}; contract: no inactive rows)", r, L,
                           c.slot_ids[static_cast<std::size_t>(r)]);
      continue;
    }
    if (negative_aliases) continue;
    if (c.slot_ids[static_cast<std::size_t>(r)] < 0)
      return fmt::format("slot_ids[{}] = {} is a negative alias (contract: none)", r,
                         c.slot_ids[static_cast<std::size_t>(r)]);
    for (std::int64_t j = 0; j < L; ++j)
      if (c.req_to_token[static_cast<std::size_t>(t * c.width + j)] < 0)
        return fmt::format("req_to_token[{}, {}] = {} is a negative alias (contract: none)", t, j,
                           c.req_to_token[static_cast<std::size_t>(t * c.width + j)]);
  }
  if (!nonfinite) {
    for (std::size_t i = 0; i < c.q.size(); ++i)
      if (!std::isfinite(q_to_float(c.q[i], f.q_dtype)))
        return fmt::format("q element {} is NaN/Inf (contract: finite inputs)", i);
    if (k_has_nonfinite(c)) return std::string("k_cache holds NaN/Inf codes (contract: finite inputs)");
  }
  return std::nullopt;
}

std::string Contract::label() const {
  const Semantics s;
  std::string out = "contract " + name;
  std::vector<std::string> diff;
  if (semantics.nan_blocks != s.nan_blocks)
    diff.push_back(fmt::format("NaN blocks {}", to_string(semantics.nan_blocks)));
  if (semantics.forced_ties != s.forced_ties)
    diff.push_back(fmt::format("forced ties {}", to_string(semantics.forced_ties)));
  if (semantics.order != s.order) diff.push_back(fmt::format("order {}", to_string(semantics.order)));
  if (semantics.scores != s.scores) diff.push_back(fmt::format("scores {}", to_string(semantics.scores)));
  if (semantics.selection != s.selection) diff.push_back(fmt::format("selection {}", to_string(semantics.selection)));
  if (semantics.score_units != s.score_units)
    diff.push_back(fmt::format("score units {}", to_string(semantics.score_units)));
  if (!diff.empty()) out += fmt::format(" ({})", fmt::join(diff, ", "));
  return out;
}

std::vector<std::int64_t> full_group_starts(const Case& c) {
  std::vector<std::int64_t> start(static_cast<std::size_t>(c.R), -1);
  const std::int64_t P = c.cfg.packed_queries;
  if (P <= 1) return start;
  for (std::int64_t g = 0; g + P <= c.R; g += P) {
    bool ok = true;
    for (std::int64_t d = 0; d < P && ok; ++d) {
      const auto r = static_cast<std::size_t>(g + d);
      ok = c.slot_ids[r] == c.slot_ids[static_cast<std::size_t>(g)] && table_row(c, g + d) >= 0 &&
           c.seq_lens[r] == c.seq_lens[static_cast<std::size_t>(g)] + d && c.seq_lens[r] >= 1;
    }
    if (ok)
      for (std::int64_t d = 0; d < P; ++d) start[static_cast<std::size_t>(g + d)] = g;
  }
  return start;
}

}  // namespace ixo
