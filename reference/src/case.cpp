#include "ixo/case.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <stdexcept>
#include <string>

#include "ixo/checked.hpp"
#include "ixo/error.hpp"

namespace ixo {

namespace {
std::string str(std::int64_t v) { return std::to_string(v); }

// How many tokens of each table row the batch reads: the longest prefix of any row reading it
// (inactive rows read nothing). rows_sharing_slots and validate's slot range check scan these.
std::vector<std::int64_t> table_read_lengths(const Case& c) {
  std::vector<std::int64_t> read_len(static_cast<std::size_t>(c.rows), 0);
  for (std::int64_t r = 0; r < c.R; ++r) {
    const std::int64_t b = table_row(c, r);
    if (b >= 0) read_len[static_cast<std::size_t>(b)] = std::max(read_len[static_cast<std::size_t>(b)], c.seq_lens[r]);
  }
  return read_len;
}
std::string at(const char* name, std::int64_t i) { return std::string(name) + "[" + str(i) + "]"; }
std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

// The logit multiplier as the kernels form it in fp32, ((sm_scale*q_scale) * log2e) *
// k_scale (kernels/common/indexer_common.hpp), must be a finite normal float whenever the
// exact product is nonzero: otherwise every score is inf/NaN, or flushed to 0/subnormal and
// outside the error bound's relative-rounding model.
void check_scale_product(const Case& c) {
  const Config& g = c.cfg;
  const double sm = c.effective_sm_scale();
  const double exact = sm * g.q_scale * std::numbers::log2e * g.k_scale;
  const float a = static_cast<float>(sm * g.q_scale);
  const float b = a * static_cast<float>(std::numbers::log2e);
  const float m = b * static_cast<float>(g.k_scale);
  const std::string field = "q_scale, k_scale, sm_scale";
  const std::string what = "product q_scale*k_scale*sm_scale*log2(e) = " + num(g.q_scale) + "*" + num(g.k_scale) + "*" +
                           num(sm) + (g.sm_scale ? "" : " (D^-0.5)") + "*1.4427";
  bool finite = std::isfinite(exact) && std::isfinite(m) && std::isfinite(b);
  for (const double f : {sm, g.q_scale, g.k_scale, sm * g.q_scale}) finite = finite && std::fabs(f) <= FLT_MAX;
  if (!finite)
    throw InputError(field, what +
                                " overflows float32 (the kernels form it in fp32; every factor, partial product "
                                "and the product must be at most " +
                                num(FLT_MAX) + " in magnitude)");
  if (exact != 0 && (std::fabs(a) < FLT_MIN || std::fabs(b) < FLT_MIN || std::fabs(m) < FLT_MIN))
    throw InputError(field, what + " = " + num(exact) +
                                " underflows float32 (the kernels form it in fp32; a nonzero "
                                "product and its partial products must be at least " +
                                num(FLT_MIN) + " in magnitude)");
}
// Paged K: the table's shape and range, S a multiple of the page size, and req_to_token
// equal to the table's derivation (docs/semantics.md "Paged K").
void check_pages(const Case& c) {
  const std::int64_t ps = c.cfg.page_size;
  if (!c.paged()) return;
  if (c.max_pages < 1)
    throw InputError("page_table",
                     "missing: page_size " + str(ps) + " needs a page table [rows, max_pages] (page_table.npy)");
  const std::int64_t pnum = checked_product("page_table", "elements rows x max_pages", {c.rows, c.max_pages});
  if (static_cast<std::int64_t>(c.page_table.size()) != pnum)
    throw InputError("page_table", "holds " + str(static_cast<std::int64_t>(c.page_table.size())) +
                                       " elements, shape [" + str(c.rows) + ", " + str(c.max_pages) + "] needs " +
                                       str(pnum));
  if (c.S % ps != 0)
    throw InputError("k_cache", "S = " + str(c.S) + " slots is not a multiple of page_size " + str(ps));
  if (c.S > (std::int64_t{1} << 31))
    throw InputError("k_cache", "S = " + str(c.S) + " slots: a paged cache holds at most 2^31 (int32 slots)");
  const std::int64_t width = checked_product("page_table", "tokens max_pages x page_size", {c.max_pages, ps});
  if (c.width != width)
    throw InputError("req_to_token", "width " + str(c.width) + " differs from max_pages x page_size = " +
                                         str(c.max_pages) + " x " + str(ps) + " of page_table");
  const std::int64_t pages = c.S / ps;
  for (std::int64_t b = 0; b < c.rows; ++b)
    for (std::int64_t p = 0; p < c.max_pages; ++p) {
      const std::int64_t v = c.page_table[static_cast<std::size_t>(b * c.max_pages + p)];
      if (v < 0 || v >= pages)
        throw InputError("page_table[" + str(b) + "," + str(p) + "]",
                         "physical page " + str(v) + " is outside [0, " + str(pages) + ") (S = " + str(c.S) +
                             " slots / page_size " + str(ps) + "; page tables hold no negative aliases)");
    }
  for (std::int64_t b = 0; b < c.rows; ++b)
    for (std::int64_t t = 0; t < c.width; ++t) {
      const std::int64_t page = c.page_table[static_cast<std::size_t>(b * c.max_pages + t / ps)];
      const std::int64_t want = paged_slot(page, t, ps);
      const std::int64_t got = c.req_to_token[static_cast<std::size_t>(b * c.width + t)];
      if (got != want)
        throw InputError("req_to_token[" + str(b) + "," + str(t) + "]",
                         "token slot " + str(got) + " contradicts page_table[" + str(b) + "," + str(t / ps) +
                             "] = " + str(page) + ", which gives slot " + str(want) + " (page_size " + str(ps) + ")");
    }
}
}  // namespace

void derive_req_to_token(Case& c) {
  const std::int64_t ps = c.cfg.page_size;
  if (ps < 1) throw InputError("page_size", "must be >= 1, got " + str(ps));
  c.width = checked_product("page_table", "tokens max_pages x page_size", {c.max_pages, ps});
  const std::int64_t n =
      checked_product("page_table", "req_to_token elements rows x max_pages x page_size", {c.rows, c.width});
  if (static_cast<std::int64_t>(c.page_table.size()) != c.rows * c.max_pages)
    throw InputError("page_table", "holds " + str(static_cast<std::int64_t>(c.page_table.size())) +
                                       " elements, shape [" + str(c.rows) + ", " + str(c.max_pages) + "] needs " +
                                       str(c.rows * c.max_pages));
  c.req_to_token.assign(static_cast<std::size_t>(n), 0);
  for (std::int64_t b = 0; b < c.rows; ++b)
    for (std::int64_t t = 0; t < c.width; ++t)
      c.req_to_token[static_cast<std::size_t>(b * c.width + t)] = static_cast<std::int32_t>(
          paged_slot(c.page_table[static_cast<std::size_t>(b * c.max_pages + t / ps)], t, ps));
}

std::int64_t rows_sharing_slots(const Case& c) {
  const std::vector<std::int64_t> read_len = table_read_lengths(c);
  std::vector<std::int64_t> reader(static_cast<std::size_t>(c.S), -1);  // first table row reading each slot
  std::vector<char> sharing(static_cast<std::size_t>(c.rows), 0);
  for (std::int64_t b = 0; b < c.rows; ++b)
    for (std::int64_t t = 0; t < read_len[static_cast<std::size_t>(b)]; ++t) {
      std::int64_t s = c.req_to_token[static_cast<std::size_t>(b * c.width + t)];
      if (s < 0) s += c.S;
      std::int64_t& first = reader[static_cast<std::size_t>(s)];
      if (first < 0)
        first = b;
      else if (first != b)
        sharing[static_cast<std::size_t>(b)] = sharing[static_cast<std::size_t>(first)] = 1;
    }
  return std::count(sharing.begin(), sharing.end(), 1);
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  std::int64_t s;
  if (__builtin_add_overflow(a, b - 1, &s)) return a / b + (a % b != 0);  // a near INT64_MAX: same value
  return s / b;
}

double Case::effective_sm_scale() const {
  return cfg.sm_scale ? *cfg.sm_scale : 1.0 / std::sqrt(static_cast<double>(D));
}

std::int64_t Case::NB() const { return ceil_div(width, cfg.block_size); }

std::int64_t table_row(const Case& c, std::int64_t r) {
  const std::int64_t L = c.seq_lens[r];
  std::int64_t sid = c.slot_ids[r];
  if (sid < 0 && sid >= -c.S) sid += c.S;  // negative slot ids alias modulo the cache size
  if (L <= 0 || sid < 0 || sid >= c.rows) return -1;
  return sid;
}

std::int64_t row_blocks(const Case& c, std::int64_t r) {
  return table_row(c, r) < 0 ? 0 : ceil_div(c.seq_lens[r], c.cfg.block_size);
}

void check_nvfp4_head_dim(KDtype k_dtype, std::int64_t D) {
  if (is_nvfp4(k_dtype) && D % kNvfp4Block != 0)
    throw InputError(
        "D", "nvfp4 K needs a head dim that is a multiple of 16 (one e4m3fn scale per 16 elements), got " + str(D));
}

namespace {

// Every slot a row reads lies in [-S, S): each table row is scanned once, up to the longest
// prefix any row reads from it, by a min/max the compiler vectorises (rows of one request
// share a table row: ixo ref's 64 rows read 16 rows of the table).
bool slots_in_range(const Case& c) {
  const std::vector<std::int64_t> read_len = table_read_lengths(c);
  for (std::int64_t b = 0; b < c.rows; ++b) {
    const std::int32_t* row = c.req_to_token.data() + b * c.width;
    std::int32_t lo = 0, hi = 0;
    for (std::int64_t t = 0; t < read_len[static_cast<std::size_t>(b)]; ++t) {
      lo = std::min(lo, row[t]);
      hi = std::max(hi, row[t]);
    }
    if (lo < -c.S || hi >= c.S) return false;
  }
  return true;
}

// The error for the first (row, token) in row order whose slot is out of range.
[[noreturn]] void name_first_slot_out_of_range(const Case& c) {
  for (std::int64_t r = 0; r < c.R; ++r) {
    const std::int64_t sid = table_row(c, r);
    if (sid < 0) continue;
    for (std::int64_t t = 0; t < c.seq_lens[r]; ++t) {
      const std::int64_t s = c.req_to_token[sid * c.width + t];
      if (s < -c.S || s >= c.S)
        throw InputError(
            "req_to_token[" + str(sid) + "," + str(t) + "]",
            "token slot " + str(s) + " is outside [-" + str(c.S) + ", " + str(c.S) + ") (row " + str(r) + ")");
    }
  }
  throw std::logic_error("name_first_slot_out_of_range: every slot is in range");
}

}  // namespace

void validate(const Case& c) {
  const Config& g = c.cfg;
  if (g.q_dtype != KDtype::bf16 && g.q_dtype != KDtype::e4m3fn)
    throw InputError("q_dtype", "must be bf16 or e4m3fn, got " + std::string(to_string(g.q_dtype)));
#define IXO_CONFIG_FIELD(name, dflt, least, most, required, written)                  \
  if (g.name < (least) || g.name > (most))                                            \
    throw InputError(#name, (most) == 2147483647                                      \
                                ? "must be >= " + str(least) + ", got " + str(g.name) \
                                : "must be in [" + str(least) + ", " + str(most) + "], got " + str(g.name));
  IXO_CONFIG_INT_FIELDS(IXO_CONFIG_FIELD)
#undef IXO_CONFIG_FIELD
  if (g.sm_scale && !std::isfinite(*g.sm_scale))
    throw InputError("sm_scale", "must be finite, got " + std::to_string(*g.sm_scale));
  if (!std::isfinite(g.q_scale)) throw InputError("q_scale", "must be finite, got " + std::to_string(g.q_scale));
  if (!std::isfinite(g.k_scale)) throw InputError("k_scale", "must be finite, got " + std::to_string(g.k_scale));

  if (c.R < 0) throw InputError("q", "rows must be >= 0, got " + str(c.R));
  if (c.Hq < 1) throw InputError("q", "heads (dim 1) must be >= 1, got " + str(c.Hq));
  if (c.Hk < 1) throw InputError("k_cache", "heads (dim 1) must be >= 1, got " + str(c.Hk));
  if (c.D < 1) throw InputError("q", "head dim (dim 2) must be >= 1, got " + str(c.D));
  if (c.Hq % c.Hk != 0)
    throw InputError("q", "heads Hq=" + str(c.Hq) + " is not a multiple of k_cache heads Hk=" + str(c.Hk));
  if (c.S < 0 || c.rows < 0 || c.width < 0) throw InputError("k_cache", "negative dimension");
  check_scale_product(c);
  check_nvfp4_head_dim(g.k_dtype, c.D);
  const std::int64_t qnum = checked_product("q", "elements R x Hq x D", {c.R, c.Hq, c.D});
  if (static_cast<std::int64_t>(c.q.size()) != qnum)
    throw InputError("q",
                     "holds " + str(static_cast<std::int64_t>(c.q.size())) + " elements, shape needs " + str(qnum));
  if (g.q_dtype != KDtype::bf16)
    for (std::size_t i = 0; i < c.q.size(); ++i)
      if (c.q[i] > 0xFF)
        throw InputError("q", "element " + str(static_cast<std::int64_t>(i)) + " holds " + str(c.q[i]) +
                                  ", not an 8-bit " + std::string(to_string(g.q_dtype)) + " code (q_dtype " +
                                  std::string(to_string(g.q_dtype)) + ")");
  const std::int64_t kbytes =
      is_nvfp4(g.k_dtype)
          ? checked_product("k_cache", "bytes S x Hk x D/2", {c.S, c.Hk, c.D / 2})
          : checked_product("k_cache", "bytes S x Hk x D x element size", {c.S, c.Hk, c.D, element_bytes(g.k_dtype)});
  if (static_cast<std::int64_t>(c.k_view().size()) != kbytes)
    throw InputError(
        "k_cache", "holds " + str(static_cast<std::int64_t>(c.k_view().size())) + " bytes, shape needs " + str(kbytes));
  const std::int64_t sbytes =
      is_nvfp4(g.k_dtype) ? checked_product("k_scales", "bytes S x Hk x D/16", {c.S, c.Hk, c.D / kNvfp4Block}) : 0;
  if (static_cast<std::int64_t>(c.k_scales.size()) != sbytes)
    throw InputError("k_scales", "holds " + str(static_cast<std::int64_t>(c.k_scales.size())) + " bytes, " +
                                     (is_nvfp4(g.k_dtype) ? "shape S x Hk x D/16 needs " + str(sbytes)
                                                          : "expected none (only nvfp4 K has block scales; k_dtype " +
                                                                std::string(to_string(g.k_dtype)) + ")"));
  const std::int64_t tnum = checked_product("req_to_token", "elements rows x width", {c.rows, c.width});
  if (static_cast<std::int64_t>(c.req_to_token.size()) != tnum)
    throw InputError("req_to_token", "holds " + str(static_cast<std::int64_t>(c.req_to_token.size())) +
                                         " elements, shape needs " + str(tnum));
  check_pages(c);
  if (static_cast<std::int64_t>(c.slot_ids.size()) != c.R)
    throw InputError("slot_ids", "has " + str(static_cast<std::int64_t>(c.slot_ids.size())) + " entries, q has " +
                                     str(c.R) + " rows");
  if (static_cast<std::int64_t>(c.seq_lens.size()) != c.R)
    throw InputError("seq_lens", "has " + str(static_cast<std::int64_t>(c.seq_lens.size())) + " entries, q has " +
                                     str(c.R) + " rows");
  // The score buffer [Hq, R, NB] must be allocatable: at most 2^22 blocks per row and
  // 2^32 cells (a 2^31-token context at block size 512 still fits).
  if (c.width > 0 && c.NB() > (std::int64_t{1} << 22))
    throw InputError("req_to_token", "width " + str(c.width) + " gives " + str(c.NB()) + " blocks of " +
                                         str(g.block_size) + " tokens per row; at most 4194304 are supported");
  const std::int64_t cells = checked_product("q", "score cells Hq x R x blocks", {c.Hq, c.R, c.NB()});
  if (cells > (std::int64_t{1} << 32))
    throw InputError("q", "Hq x R x blocks = " + str(cells) + " score cells; at most 2^32 are supported");
  // packed_queries is a launch hint, not part of the truth: any R and any slot ids within a
  // group are accepted (partial groups, graph padding, inactive rows); every row is judged
  // by its own semantics, and packed kernels run rows that do not form a group per row.

  for (std::int64_t r = 0; r < c.R; ++r) {
    const std::int64_t L = c.seq_lens[r];
    if (L < 0) throw InputError(at("seq_lens", r), "is negative: " + str(L));
    if (L > c.width) throw InputError(at("seq_lens", r), str(L) + " exceeds the req_to_token width " + str(c.width));
  }
  if (!slots_in_range(c)) name_first_slot_out_of_range(c);
}

}  // namespace ixo
