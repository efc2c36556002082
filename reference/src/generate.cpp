// Seeded case generators built from the spec: verify rows (L_j = prefix + j + 1),
// permuted and gapped slot tables, permuted token slots with negative aliases, graph
// padding and inactive requests, the rows of real CUDA-graph batches (packed_queries other
// than the rows per request, trailing padding and inactive rows that do not fill a group,
// inactive rows inside requests), shared K (paged cases whose physical pages are shared by
// every table row; prefix sharing of token slots); the value families (gaussian, tie-free
// exact, near-tie, ladder, plateau, fp8 specials) are in generate_values.cpp. Every knob at
// its default draws nothing from the generator, so the cases of older specs (fixtures,
// regressions) stay bit for bit the same.
#include "ixo/generate.hpp"

#include "fast_draws.hpp"
#include "generate_selector.hpp"
#include "generate_values.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "ixo/error.hpp"

namespace ixo {

namespace {

using gen_detail::Kind;
using gen_detail::Request;
using gen_detail::Rng;
using gen_detail::uniform;

// A random prefix: half of the time just around a block boundary (m*bs + {-2,-1,0,+1}).
std::int64_t random_prefix(Rng& g, std::int64_t max_prefix, int bs) {
  if (uniform(g, 0, 1) == 0 && max_prefix > bs + 2) {
    const std::int64_t m = uniform(g, 1, std::max<std::int64_t>(1, (max_prefix - 2) / bs));
    return std::max<std::int64_t>(1, m * bs + uniform(g, -2, 1));
  }
  return uniform(g, 1, std::max<std::int64_t>(1, max_prefix));
}

// Prefix sharing (page size 1): how many leading positions of each table row reuse the
// slots of the first real request's row: min(shared_prefix, both used lengths) for every
// other real request's row, 0 elsewhere.
std::vector<std::int64_t> shared_lengths(const std::vector<Request>& reqs, const std::vector<std::int64_t>& used_len,
                                         std::int64_t shared_prefix) {
  std::vector<std::int64_t> share(used_len.size(), 0);
  std::int64_t owner = -1;
  for (const auto& q : reqs) {
    if (q.kind != Kind::real || shared_prefix <= 0) continue;
    if (owner < 0)
      owner = q.slot;
    else if (q.slot != owner)
      share[static_cast<std::size_t>(q.slot)] = std::min(
          {shared_prefix, used_len[static_cast<std::size_t>(q.slot)], used_len[static_cast<std::size_t>(owner)]});
  }
  return share;
}

// Paged K: max_pages covers the width, N = max_pages + 3 physical pages of page_size slots,
// every table row mapped onto them by `kind` (so pages are shared between rows), and
// req_to_token derived. Returns each row's used slots.
std::vector<std::vector<std::int64_t>> paged_tokens(Case& c, PageTable kind, Rng& g,
                                                    const std::vector<std::int64_t>& used_len) {
  const std::int64_t ps = c.cfg.page_size;
  c.max_pages = ceil_div(c.width, ps);
  const std::int64_t n = c.max_pages + 3;
  c.S = n * ps;
  c.page_table.assign(static_cast<std::size_t>(c.rows * c.max_pages), 0);
  std::vector<std::int64_t> perm(static_cast<std::size_t>(n));
  for (std::int64_t b = 0; b < c.rows; ++b) {
    if (kind == PageTable::random) {
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), g);
    }
    for (std::int64_t p = 0; p < c.max_pages; ++p) {
      std::int64_t page = perm[static_cast<std::size_t>(p)];
      if (kind == PageTable::interval) page = (2 * p + b) % n;
      if (kind == PageTable::reverse) page = (((n - 1 - 3 * b - p) % n) + n) % n;
      c.page_table[static_cast<std::size_t>(b * c.max_pages + p)] = static_cast<std::int32_t>(page);
    }
  }
  derive_req_to_token(c);
  std::vector<std::vector<std::int64_t>> tokens(static_cast<std::size_t>(c.rows));
  for (std::int64_t b = 0; b < c.rows; ++b) {
    const auto at = c.req_to_token.begin() + static_cast<std::ptrdiff_t>(b * c.width);
    tokens[static_cast<std::size_t>(b)].assign(at,
                                               at + static_cast<std::ptrdiff_t>(used_len[static_cast<std::size_t>(b)]));
  }
  return tokens;
}

}  // namespace

Fp8Kind fp8_kind(std::uint8_t code, KDtype t) {
  const float v = fp8_table(t)[code];
  if (!std::isfinite(v)) return Fp8Kind::nonfinite;
  if (v == 0.0f) return Fp8Kind::zero;
  const int mant_bits = t == KDtype::e5m2 ? 2 : 3;
  return ((code & 0x7f) >> mant_bits) == 0 ? Fp8Kind::subnormal : Fp8Kind::normal;  // exponent field 0
}

const char* page_table_name(PageTable p) {
  switch (p) {
    case PageTable::interval:
      return "interval";
    case PageTable::reverse:
      return "reverse";
    case PageTable::random:
      break;
  }
  return "random";
}

const char* values_name(Values v) {
  switch (v) {
    case Values::exact:
      return "exact";
    case Values::near_tie:
      return "near_tie";
    case Values::ladder:
      return "ladder";
    case Values::plateau:
      return "plateau";
    case Values::selector_sweep:
      return "selector_sweep";
    case Values::gaussian:
      break;
  }
  return "gaussian";
}

Case generate(const GenSpec& spec, std::uint64_t seed) {
  Rng g(seed);
  Case c;
  c.cfg = spec.cfg;
  c.cfg.packed_queries = spec.packed_queries > 0 ? spec.packed_queries : spec.draft_rows;
  c.Hq = spec.Hq;
  c.Hk = spec.Hk;
  c.D = spec.D;
  if (spec.requests < 0 || spec.draft_rows < 1 || spec.Hq % spec.Hk != 0)
    throw InputError("spec", "requests >= 0, draft_rows >= 1 and Hk | Hq required");
  if (spec.packed_queries < 0 || spec.trailing_padding_rows < 0 || spec.trailing_inactive_rows < 0 ||
      spec.inactive_rows_in_requests < 0)
    throw InputError("spec",
                     "packed_queries, trailing_padding_rows, trailing_inactive_rows and "
                     "inactive_rows_in_requests must be >= 0");
  const int bs = c.cfg.block_size;
  const std::int64_t P = c.cfg.packed_queries;
  // Trailing graph padding row i reads table row 0 with length 2 + i % draft_rows.
  auto trailing_pad_len = [&](int i) { return std::int64_t{2} + i % spec.draft_rows; };
  const std::int64_t trailing_pad_max =
      spec.trailing_padding_rows > 0 ? trailing_pad_len(std::min(spec.trailing_padding_rows, spec.draft_rows) - 1) : 0;

  // Requests: real ones, graph padding (table row 0, prefix 1), inactive (slot outside the table).
  std::vector<Request> reqs;
  for (int i = 0; i < spec.requests; ++i) {
    const std::int64_t p = spec.prefixes.empty() ? random_prefix(g, spec.max_prefix, bs)
                                                 : spec.prefixes[static_cast<std::size_t>(i) % spec.prefixes.size()];
    reqs.push_back({Kind::real, p, 0});
  }
  for (int i = 0; i < spec.inactive_requests; ++i) {
    const auto pos = static_cast<std::ptrdiff_t>(uniform(g, 0, static_cast<std::int64_t>(reqs.size())));
    reqs.insert(reqs.begin() + pos, Request{Kind::inactive, random_prefix(g, spec.max_prefix, bs), 0});
  }
  for (int i = 0; i < spec.padding_requests; ++i) reqs.push_back({Kind::padding, 1, 0});

  const std::int64_t nreq = static_cast<std::int64_t>(reqs.size());
  c.rows = 2 * nreq + 3;  // unused table rows between the used ones
  // Table rows for real requests: never row 0 (padding's), never the request or row index.
  std::vector<std::int64_t> free_rows(static_cast<std::size_t>(c.rows - 1));
  std::iota(free_rows.begin(), free_rows.end(), 1);
  std::shuffle(free_rows.begin(), free_rows.end(), g);
  std::size_t next_free = 0, next_explicit = 0;
  for (std::int64_t i = 0; i < nreq; ++i) {
    Request& q = reqs[static_cast<std::size_t>(i)];
    if (q.kind == Kind::padding) continue;
    if (q.kind == Kind::inactive) continue;
    if (!spec.request_slots.empty()) {
      q.slot = spec.request_slots[next_explicit++ % spec.request_slots.size()];
      if (q.slot < 0) throw InputError("request_slots", "must be >= 0, got " + std::to_string(q.slot));
      c.rows = std::max(c.rows, q.slot + 1);
      continue;
    }
    if (!spec.permute_slots) {
      q.slot = i + 1;
      continue;
    }
    // Never the request index, its rows' indices or (when packed_queries differs from the
    // rows per request) the indices of the groups its rows fall in.
    auto bad = [&](std::int64_t s) {
      if (s == i || (s >= i * spec.draft_rows && s < (i + 1) * spec.draft_rows)) return true;
      return P != spec.draft_rows && s >= i * spec.draft_rows / P && s <= ((i + 1) * spec.draft_rows - 1) / P;
    };
    std::size_t k = next_free;
    while (k < free_rows.size() && bad(free_rows[k])) ++k;
    if (k == free_rows.size()) k = next_free;
    std::swap(free_rows[k], free_rows[next_free]);
    q.slot = free_rows[next_free++];
  }

  // Lengths and the table width.
  std::int64_t max_len = std::max<std::int64_t>(1, trailing_pad_max);
  for (const auto& q : reqs) max_len = std::max(max_len, q.prefix + spec.draft_rows);
  c.width = max_len + spec.extra_width;

  // Token slots: each used (table row, position) gets its own cache slot, except the shared
  // prefixes (the first real request's slots); a random permutation when asked, some stored
  // as negative aliases (slot - S). Paged cases: slots from the page table instead.
  std::vector<std::int64_t> used_len(static_cast<std::size_t>(c.rows), 0);
  for (const auto& q : reqs)
    if (q.kind != Kind::inactive)
      used_len[static_cast<std::size_t>(q.slot)] =
          std::max(used_len[static_cast<std::size_t>(q.slot)], q.prefix + spec.draft_rows);
  used_len[0] = std::max(used_len[0], trailing_pad_max);
  if ((c.cfg.page_size > 1 || spec.shared_prefix > 0) && spec.values == Values::exact)
    throw InputError("values", "exact values need private token slots (page_size 1, shared_prefix 0)");
  std::vector<std::vector<std::int64_t>> row_tokens(static_cast<std::size_t>(c.rows));
  if (c.cfg.page_size > 1) {
    row_tokens = paged_tokens(c, spec.pages, g, used_len);
  } else {
    const std::vector<std::int64_t> share_len = shared_lengths(reqs, used_len, spec.shared_prefix);
    c.S = std::max<std::int64_t>(1, std::accumulate(used_len.begin(), used_len.end(), std::int64_t{0}) -
                                        std::accumulate(share_len.begin(), share_len.end(), std::int64_t{0}));
    std::vector<std::int64_t> perm(static_cast<std::size_t>(c.S));
    std::iota(perm.begin(), perm.end(), 0);
    if (spec.permute_tokens) std::shuffle(perm.begin(), perm.end(), g);
    std::size_t next_slot = 0;
    std::int64_t owner = -1;  // the table row whose slots the shared prefixes reuse
    for (std::int64_t row = 0; row < c.rows; ++row)
      for (std::int64_t t = 0; t < used_len[static_cast<std::size_t>(row)]; ++t)
        row_tokens[static_cast<std::size_t>(row)].push_back(
            t < share_len[static_cast<std::size_t>(row)] ? -1 : perm[next_slot++]);
    for (const auto& q : reqs)
      if (q.kind == Kind::real && owner < 0) owner = q.slot;
    for (std::int64_t row = 0; row < c.rows; ++row)
      for (std::int64_t t = 0; t < share_len[static_cast<std::size_t>(row)]; ++t)
        row_tokens[static_cast<std::size_t>(row)][static_cast<std::size_t>(t)] =
            row_tokens[static_cast<std::size_t>(owner)][static_cast<std::size_t>(t)];
    c.req_to_token.assign(static_cast<std::size_t>(c.rows * c.width), 0);
    for (std::int64_t row = 0; row < c.rows; ++row)
      for (std::int64_t t = 0; t < c.width; ++t) {
        std::int64_t s;
        if (t < used_len[static_cast<std::size_t>(row)])
          s = row_tokens[static_cast<std::size_t>(row)][static_cast<std::size_t>(t)];
        else
          s = uniform(g, 0, c.S - 1);  // never read: any valid slot
        if (spec.negative_aliases && uniform(g, 0, 3) == 0) s -= c.S;
        if (spec.alias_minus_s && s == 0) s = -c.S;
        c.req_to_token[static_cast<std::size_t>(row * c.width + t)] = static_cast<std::int32_t>(s);
      }
  }
  // Inactive requests: slot ids past the table, or -1 (aliases S-1, past the table too
  // whenever S > rows; otherwise use rows + 1).
  for (auto& q : reqs)
    if (q.kind == Kind::inactive) q.slot = (uniform(g, 0, 1) && c.S - 1 >= c.rows) ? -1 : c.rows + uniform(g, 0, 5);

  // Rows: the requests' draft rows, then the trailing padding and inactive rows.
  for (const auto& q : reqs)
    for (int j = 0; j < spec.draft_rows; ++j) {
      c.slot_ids.push_back(q.slot);
      c.seq_lens.push_back(q.prefix + j + 1);
    }
  if (spec.inactive_rows_in_requests > 0) {
    // Random rows of real requests made inactive: length 0, or a slot id past the table.
    std::vector<std::size_t> real_rows;
    for (std::size_t i = 0; i < reqs.size(); ++i)
      if (reqs[i].kind == Kind::real)
        for (int j = 0; j < spec.draft_rows; ++j)
          real_rows.push_back(i * static_cast<std::size_t>(spec.draft_rows) + static_cast<std::size_t>(j));
    std::shuffle(real_rows.begin(), real_rows.end(), g);
    const std::size_t n =
        std::min<std::size_t>(real_rows.size(), static_cast<std::size_t>(spec.inactive_rows_in_requests));
    for (std::size_t k = 0; k < n; ++k) {
      if (uniform(g, 0, 1) == 0)
        c.seq_lens[real_rows[k]] = 0;
      else
        c.slot_ids[real_rows[k]] = c.rows + uniform(g, 0, 5);
    }
  }
  for (int i = 0; i < spec.trailing_padding_rows; ++i) {
    c.slot_ids.push_back(0);
    c.seq_lens.push_back(trailing_pad_len(i));
  }
  for (int i = 0; i < spec.trailing_inactive_rows; ++i) {
    switch (uniform(g, 0, 2)) {
      case 0:
        c.slot_ids.push_back(c.rows + uniform(g, 0, 5));
        c.seq_lens.push_back(uniform(g, 1, c.width));
        break;
      case 1:
        c.slot_ids.push_back(c.S - 1 >= c.rows ? -1 : c.rows + 1);
        c.seq_lens.push_back(uniform(g, 1, c.width));
        break;
      default:
        c.slot_ids.push_back(0);
        c.seq_lens.push_back(0);
        break;  // graph padding of length 0
    }
  }
  c.R = static_cast<std::int64_t>(c.slot_ids.size());
  c.q.assign(static_cast<std::size_t>(c.R * c.Hq * c.D), 0);
  check_nvfp4_head_dim(c.cfg.k_dtype, c.D);
  c.k_cache.assign(static_cast<std::size_t>(c.S * c.Hk * k_row_bytes(c.cfg.k_dtype, c.D)), 0);
  c.k_scales.assign(is_nvfp4(c.cfg.k_dtype) ? static_cast<std::size_t>(c.S * c.Hk * (c.D / kNvfp4Block)) : 0,
                    std::uint8_t{0x38});
  switch (spec.values) {
    case Values::gaussian:
      gen_detail::fill_gaussian(c, g);
      break;
    case Values::near_tie:
      gen_detail::fill_near_tie(c, g);
      break;
    case Values::ladder:
    case Values::plateau:
      gen_detail::fill_levels(c, g, spec.values == Values::plateau ? 1 : spec.ladder_levels, row_tokens);
      break;
    case Values::selector_sweep:
      fill_selector_sweep(c, g(), row_tokens);
      break;
    case Values::exact: {
      std::vector<std::vector<std::int64_t>> toks;
      std::vector<Request> real;
      for (const auto& q : reqs)
        if (q.kind != Kind::inactive) {
          real.push_back(q);
          toks.push_back(row_tokens[static_cast<std::size_t>(q.slot)]);
        }
      if (spec.trailing_padding_rows > 0) {  // they read table row 0 too
        real.push_back(Request{Kind::padding, 1, 0});
        toks.push_back(row_tokens[0]);
      }
      gen_detail::fill_exact(c, g, real, toks);
      break;
    }
  }
  const bool coded = is_fp8(c.cfg.k_dtype) || is_nvfp4(c.cfg.k_dtype);  // fp8 codes, or nvfp4's e4m3fn scales
  if (spec.fp8_specials && coded) gen_detail::put_fp8_specials(c, g, spec.fp8_nonfinite);
  if (spec.fp8_subnormal_only && coded) gen_detail::put_fp8_subnormal_only(c, g);
  validate(c);
  return c;
}

}  // namespace ixo
