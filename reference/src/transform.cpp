#include "ixo/transform.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

namespace ixo {

Case relabel_slots(const Case& c, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  // Paged K moves whole pages (a slot keeps its offset in the page), so the table stays a
  // page table; token slots move one by one.
  const std::int64_t ps = c.paged() ? c.cfg.page_size : 1;
  std::vector<std::int64_t> unit_perm(static_cast<std::size_t>(c.S / ps)), row_perm(static_cast<std::size_t>(c.rows));
  std::iota(unit_perm.begin(), unit_perm.end(), 0);
  std::iota(row_perm.begin(), row_perm.end(), 0);
  std::shuffle(unit_perm.begin(), unit_perm.end(), g);
  std::shuffle(row_perm.begin(), row_perm.end(), g);
  std::vector<std::int64_t> slot_perm(static_cast<std::size_t>(c.S));
  for (std::int64_t s = 0; s < c.S; ++s)
    slot_perm[static_cast<std::size_t>(s)] = paged_slot(unit_perm[static_cast<std::size_t>(s / ps)], s, ps);
  Case d = c;
  const std::size_t row_bytes = static_cast<std::size_t>(c.Hk * k_row_bytes(c.cfg.k_dtype, c.D));
  const std::size_t scale_bytes =
      c.k_scales.size() / static_cast<std::size_t>(std::max<std::int64_t>(c.S, 1));  // nvfp4: Hk * D/16
  for (std::int64_t s = 0; s < c.S; ++s) {
    const auto to = static_cast<std::size_t>(slot_perm[static_cast<std::size_t>(s)]),
               from = static_cast<std::size_t>(s);
    std::memcpy(&d.k_cache[to * row_bytes], &c.k_cache[from * row_bytes], row_bytes);
    if (scale_bytes) std::memcpy(&d.k_scales[to * scale_bytes], &c.k_scales[from * scale_bytes], scale_bytes);
  }
  if (c.paged()) {
    for (std::int64_t t = 0; t < c.rows; ++t)
      for (std::int64_t p = 0; p < c.max_pages; ++p)
        d.page_table[static_cast<std::size_t>(row_perm[static_cast<std::size_t>(t)] * c.max_pages + p)] =
            static_cast<std::int32_t>(
                unit_perm[static_cast<std::size_t>(c.page_table[static_cast<std::size_t>(t * c.max_pages + p)])]);
    derive_req_to_token(d);
  } else {
    for (std::int64_t t = 0; t < c.rows; ++t)
      for (std::int64_t j = 0; j < c.width; ++j) {
        const std::int32_t v = c.req_to_token[static_cast<std::size_t>(t * c.width + j)];
        const bool neg = v < 0;
        const std::int64_t s = neg ? v + c.S : v;
        std::int64_t m = (s >= 0 && s < c.S) ? slot_perm[static_cast<std::size_t>(s)] : s;
        if (neg && s >= 0 && s < c.S) m -= c.S;
        d.req_to_token[static_cast<std::size_t>(row_perm[static_cast<std::size_t>(t)] * c.width + j)] =
            static_cast<std::int32_t>(m);
      }
  }
  for (std::int64_t r = 0; r < c.R; ++r) {
    const std::int64_t sid = table_row(c, r);
    if (sid >= 0) d.slot_ids[static_cast<std::size_t>(r)] = row_perm[static_cast<std::size_t>(sid)];
  }
  return d;
}

Case append_rows(const Case& c, int padding, int inactive) {
  Case d = c;
  const std::int64_t P = c.cfg.packed_queries;
  std::int64_t sid = c.R > 0 ? table_row(c, 0) : -1;
  const bool can_pad = sid >= 0;
  for (int g = 0; g < padding + inactive; ++g) {
    const bool pad = g < padding && can_pad;
    for (std::int64_t j = 0; j < P; ++j) {
      d.slot_ids.push_back(pad ? sid : c.rows + 5);
      d.seq_lens.push_back(std::min<std::int64_t>(c.width, j + 2));
      const std::int64_t src = c.R > 0 ? (g * P + j) % c.R : 0;  // reuse real query rows
      for (std::int64_t i = 0; i < c.Hq * c.D; ++i)
        d.q.push_back(c.q.empty() ? float_to_q(1.0f, c.cfg.q_dtype)
                                  : c.q[static_cast<std::size_t>(src * c.Hq * c.D + i)]);
    }
    d.R += P;
  }
  return d;
}

Case keep_rows(const Case& c, const std::vector<std::int64_t>& rows) {
  Case out = c;
  out.R = static_cast<std::int64_t>(rows.size());
  out.q.clear(), out.slot_ids.clear(), out.seq_lens.clear();
  const auto qrow = static_cast<std::size_t>(c.Hq * c.D);
  for (std::int64_t r : rows) {
    const auto i = static_cast<std::size_t>(r);
    out.q.insert(out.q.end(), c.q.begin() + static_cast<std::ptrdiff_t>(i * qrow),
                 c.q.begin() + static_cast<std::ptrdiff_t>((i + 1) * qrow));
    out.slot_ids.push_back(c.slot_ids[i]);
    out.seq_lens.push_back(c.seq_lens[i]);
  }
  return out;
}

Case keep_heads(const Case& c, const std::vector<std::int64_t>& heads) {
  Case out = c;
  out.Hq = static_cast<std::int64_t>(heads.size());
  out.q.clear();
  const auto D = static_cast<std::size_t>(c.D);
  for (std::int64_t r = 0; r < c.R; ++r)
    for (std::int64_t h : heads) {
      const auto from = static_cast<std::ptrdiff_t>((static_cast<std::size_t>(r * c.Hq + h)) * D);
      out.q.insert(out.q.end(), c.q.begin() + from, c.q.begin() + from + static_cast<std::ptrdiff_t>(D));
    }
  return out;
}

Case without_aliases(const Case& c) {
  Case d = c;
  for (auto& t : d.req_to_token)
    if (t < 0 && t >= -d.S) t = static_cast<std::int32_t>(t + d.S);
  for (auto& s : d.slot_ids)
    if (s < 0 && s >= -d.S) s += d.S;
  return d;
}

const Case* judged_form(const Contract& k, const Case& c, std::optional<Case>& resolved) {
  resolved.reset();
  if (k.admits(c)) return &c;
  if (k.negative_aliases) return nullptr;
  resolved = without_aliases(c);
  if (k.admits(*resolved)) return &*resolved;
  resolved.reset();
  return nullptr;
}

}  // namespace ixo
