#include "ixo/arbitrary.hpp"

#include <algorithm>
#include <tuple>

namespace ixo {

void showValue(KDtype t, std::ostream& os) { os << to_string(t); }
void showValue(ScoreType t, std::ostream& os) { os << to_string(t); }

void showValue(const GenSpec& s, std::ostream& os) {
  os << "GenSpec{requests=" << s.requests << " draft_rows=" << s.draft_rows << " prefixes=[";
  for (std::size_t i = 0; i < s.prefixes.size(); ++i) os << (i ? "," : "") << s.prefixes[i];
  os << "] Hq=" << s.Hq << " Hk=" << s.Hk << " D=" << s.D << " block_size=" << s.cfg.block_size
     << " topk=" << s.cfg.topk << " init=" << s.cfg.init_blocks << " local=" << s.cfg.local_blocks
     << " score=" << to_string(s.cfg.score_type) << " k_dtype=" << to_string(s.cfg.k_dtype)
     << " q_dtype=" << to_string(s.cfg.q_dtype) << " k_scale=" << s.cfg.k_scale << " q_scale=" << s.cfg.q_scale
     << " values=" << values_name(s.values) << " ladder_levels=" << s.ladder_levels
     << " fp8_specials=" << s.fp8_specials << " fp8_nonfinite=" << s.fp8_nonfinite
     << " alias_minus_s=" << s.alias_minus_s << " page_size=" << s.cfg.page_size
     << " pages=" << page_table_name(s.pages) << " shared_prefix=" << s.shared_prefix
     << " permute_slots=" << s.permute_slots << " permute_tokens=" << s.permute_tokens
     << " negative_aliases=" << s.negative_aliases << " padding=" << s.padding_requests
     << " inactive=" << s.inactive_requests << " packed_queries=" << s.packed_queries
     << " trailing_padding_rows=" << s.trailing_padding_rows << " trailing_inactive_rows=" << s.trailing_inactive_rows
     << " inactive_rows_in_requests=" << s.inactive_rows_in_requests << "}";
}

namespace gen {

rc::Gen<std::int64_t> prefix(int block_size, std::int64_t max_prefix) {
  const std::int64_t max_m = std::max<std::int64_t>(1, (max_prefix - 2) / block_size);
  return rc::gen::weightedOneOf<std::int64_t>(
      {{3,
        rc::gen::map(rc::gen::pair(rc::gen::inRange<std::int64_t>(1, max_m + 1), rc::gen::inRange<std::int64_t>(-2, 2)),
                     [block_size](const std::pair<std::int64_t, std::int64_t>& p) {
                       return std::max<std::int64_t>(1, p.first * block_size + p.second);
                     })},
       {1, rc::gen::inRange<std::int64_t>(1, max_prefix + 1)}});
}

// The domain a draw comes from: the contract's lists, or the generator's own defaults
// (the spec). Every choice below is drawn from these, so shrinking stays inside too.
namespace {
struct Domain {
  std::vector<int> block_sizes{128, 64, 32, 16}, head_dims{128, 64};
  std::vector<std::pair<int, int>> heads{{1, 1}, {2, 1}, {4, 1}, {8, 2}, {4, 4}};
  std::vector<KDtype> k_dtypes{KDtype::bf16, KDtype::e4m3fn, KDtype::e4m3fnuz, KDtype::e5m2};
  std::vector<ScoreType> score_types{ScoreType::max, ScoreType::lse};
  // The newer dtypes are drawn by Boundary (fp8_q, nvfp4_k) where allowed, not from the lists
  // above: the draws of older seeds keep their dtypes.
  bool fp8_q = true, nvfp4_k = true, q_only_fp8 = false;
  int topk_lo = 1, topk_hi = 64, init_hi = 3, local_lo = 0, local_hi = 3, wide_init_hi = 47;
  std::int64_t max_prefix = 2500, max_rows = 0, max_length = 0;
  Packing packing = Packing::any_rows;
  bool inactive = true, aliases = true, nonfinite = true, long_rows = true, topk1 = true, exact = true;
  bool quantized = false;       // a quantized selector: a third of the gaussian draws become Values::selector_sweep
  std::vector<int> page_sizes;  // the contract's; empty: the generator's own weights
  int long_bs_lo = 1, long_bs_hi = 2;  // block sizes of the 16384+-block rows
  int long_D = 64;
};

Domain domain_of(const Knobs& k) {
  Domain d;
  d.topk_hi = k.max_topk;
  d.max_prefix = k.max_prefix;
  if (!k.contract) return d;
  const Contract& c = *k.contract;
  if (!c.block_sizes.empty()) d.block_sizes = c.block_sizes;
  if (!c.head_dims.empty()) d.head_dims = c.head_dims;
  if (!c.heads.empty()) d.heads = c.heads;
  if (!c.k_dtypes.empty()) d.k_dtypes = c.k_dtypes;
  d.nvfp4_k = c.k_dtypes.empty() || std::find(c.k_dtypes.begin(), c.k_dtypes.end(), KDtype::nvfp4) != c.k_dtypes.end();
  d.fp8_q = c.q_dtypes.empty() || std::find(c.q_dtypes.begin(), c.q_dtypes.end(), KDtype::e4m3fn) != c.q_dtypes.end();
  d.q_only_fp8 = c.q_dtypes.size() == 1 && c.q_dtypes.front() == KDtype::e4m3fn;
  if (!c.score_types.empty()) d.score_types = c.score_types;
  d.topk_lo = c.topk_min;
  d.topk_hi = std::max(c.topk_min, std::min(c.topk_max, k.max_topk));
  if (c.init_max >= 0) d.init_hi = std::min(d.init_hi, c.init_max), d.wide_init_hi = c.init_max;
  d.local_lo = c.local_min;
  d.local_hi = c.local_max >= 0 ? c.local_max : std::max(3, c.local_min);
  d.max_rows = c.max_rows;
  d.max_length = c.max_length;
  // Rows the contract ranks (nb > topk) need prefixes past topk blocks of its smallest block size.
  if (!c.block_sizes.empty())
    d.max_prefix = std::max<std::int64_t>(
        d.max_prefix,
        static_cast<std::int64_t>(*std::min_element(c.block_sizes.begin(), c.block_sizes.end())) * (c.topk_min + 16));
  if (c.max_length > 0)
    d.max_prefix = std::max<std::int64_t>(1, std::min(d.max_prefix, c.max_length - k.max_draft_rows - 1));
  d.packing = c.packing;
  d.inactive = c.inactive_rows;
  d.aliases = c.negative_aliases;
  d.nonfinite = c.nonfinite;
  d.quantized = c.semantics.selection == Selection::quantized16;
  d.page_sizes = c.page_sizes;
  d.topk1 = c.topk_min <= 1;
  d.exact = std::find(d.score_types.begin(), d.score_types.end(), ScoreType::max) != d.score_types.end();
  if (!c.block_sizes.empty())
    d.long_bs_lo = d.long_bs_hi = *std::min_element(c.block_sizes.begin(), c.block_sizes.end());
  d.long_D = std::find(d.head_dims.begin(), d.head_dims.end(), 64) != d.head_dims.end() ? 64 : d.head_dims.front();
  d.long_rows = c.max_length == 0 || 16384LL * d.long_bs_hi + 64 + k.max_draft_rows <= c.max_length;
  return d;
}

template <class T>
rc::Gen<T> one_of(const std::vector<T>& v) {
  return v.size() == 1 ? rc::gen::just(v.front()) : rc::gen::elementOf(v);
}

// The rows of real CUDA-graph batches (GenSpec): packed_queries (0 = draft_rows, else any
// 1..max_draft_rows+1, so groups straddle requests and R need not be a multiple of it),
// trailing padding rows that need not fill a group, trailing inactive rows, inactive rows
// inside requests. Each is off (0) most of the time and shrinks towards off. Under a
// full-groups contract the pack is the draft rows (groups are requests); under a per-row
// one it is 1; inactive rows only where the contract allows them.
rc::Gen<std::tuple<int, int, int, int>> graph_rows(const Knobs& k, const Domain& d, int draft_rows) {
  if (!k.graph_rows) return rc::gen::just(std::tuple<int, int, int, int>{d.packing == Packing::none ? 1 : 0, 0, 0, 0});
  auto mostly_zero = [](int hi) {
    return rc::gen::weightedOneOf<int>({{3, rc::gen::just(0)}, {2, rc::gen::inRange(1, hi + 1)}});
  };
  const int inactive_hi = d.inactive ? 3 : 0;
  auto pack = d.packing == Packing::any_rows
                  ? rc::gen::weightedOneOf<int>(
                        {{3, rc::gen::just(0)}, {2, rc::gen::inRange(1, std::max(k.max_draft_rows, draft_rows) + 2)}})
                  : rc::gen::just(d.packing == Packing::none ? 1 : 0);
  return rc::gen::tuple(std::move(pack), mostly_zero(2 * draft_rows + 1),
                        inactive_hi ? mostly_zero(inactive_hi) : rc::gen::just(0),
                        inactive_hi ? mostly_zero(inactive_hi) : rc::gen::just(0));
}
}  // namespace

// The boundary dimensions (docs/NOTES.md "Condition coverage"), each off most of the time:
// long rows (block size 1-2 and 16384+ blocks, top-k up to 2048), scales that push lse logits
// past the fp32 exp2 range, init windows far wider than short rows, topk 1, fp8 special codes,
// the alias -S, the ladder depth. A contract narrows each (long rows at its smallest block
// size, topk inside its range, no NaN/Inf codes or aliases where it excludes them).
struct Boundary {
  bool long_rows = false;
  int long_bs = 1, long_rows_n = 1, long_extra = 0, long_topk = 1;
  double big_q_scale = 0;  // 0: the ordinary q_scale
  int wide_init = -1;      // -1: the ordinary init_blocks
  bool topk1 = false, fp8_specials = false, fp8_nonfinite = false, alias_minus_s = false;
  int tiny_topk = 1;  // with topk1: topk 1 or 2 (2: the smallest top-k a CP shard can hold whole)
  int ladder_levels = 4;
  int page_size = 1;  // > 1: a paged case with page table `pages`
  PageTable pages = PageTable::random;
  std::int64_t shared_prefix = 0;  // page size 1: positions shared with the first request
  bool fp8_q = false;              // q_dtype e4m3fn (issue 25: MSA's Q8KV8 / Q8KV4)
  bool nvfp4_k = false;            // k_dtype nvfp4 (MSA's Q8KV4), where D is a multiple of 16
};

namespace {
rc::Gen<Boundary> boundary(const Knobs& k, const Domain& d) {
  auto sometimes = [](int one_in) {
    return rc::gen::weightedOneOf<bool>({{one_in - 1, rc::gen::just(false)}, {1, rc::gen::just(true)}});
  };
  const bool shared = k.shared_k && k.values != Values::exact;  // exact values need private slots
  const bool can_long =
      k.long_rows && d.long_rows && k.values != Values::exact && !k.shapes;  // exact values cap the blocks per request
  const int topk_cap = d.topk_lo <= 1 && !k.contract ? 2048 : std::min(2048, k.contract ? k.contract->topk_max : 2048);
  auto long_topk = topk_cap >= 1024 && d.topk_lo <= 64
                       ? rc::gen::weightedOneOf<int>(
                             {{1, rc::gen::inRange(d.topk_lo, 65)}, {1, rc::gen::inRange(1024, topk_cap + 1)}})
                       : rc::gen::inRange(d.topk_lo, std::max(d.topk_lo, std::min(topk_cap, 64)) + 1);
  return rc::gen::build<Boundary>(
      rc::gen::set(&Boundary::long_rows, can_long ? sometimes(4) : rc::gen::just(false)),
      rc::gen::set(&Boundary::long_bs, rc::gen::inRange(d.long_bs_lo, d.long_bs_hi + 1)),
      rc::gen::set(&Boundary::long_rows_n, rc::gen::inRange(1, 3)),
      rc::gen::set(&Boundary::long_extra, rc::gen::inRange(-2, 64)),
      rc::gen::set(&Boundary::long_topk, std::move(long_topk)),
      rc::gen::set(
          &Boundary::big_q_scale,
          k.big_scales ? rc::gen::weightedOneOf<double>({{3, rc::gen::just(0.0)}, {1, rc::gen::element(384.0, -512.0)}})
                       : rc::gen::just(0.0)),
      rc::gen::set(&Boundary::wide_init,
                   d.wide_init_hi >= 4
                       ? rc::gen::weightedOneOf<int>(
                             {{5, rc::gen::just(-1)}, {1, rc::gen::inRange(4, std::min(48, d.wide_init_hi + 1))}})
                       : rc::gen::just(-1)),
      rc::gen::set(&Boundary::topk1, d.topk1 && !k.shapes ? sometimes(16) : rc::gen::just(false)),
      rc::gen::set(&Boundary::fp8_specials, k.fp8_specials ? sometimes(3) : rc::gen::just(false)),
      rc::gen::set(&Boundary::fp8_nonfinite, k.fp8_nonfinite && d.nonfinite ? sometimes(2) : rc::gen::just(false)),
      rc::gen::set(&Boundary::alias_minus_s, d.aliases ? sometimes(4) : rc::gen::just(false)),
      rc::gen::set(&Boundary::ladder_levels, rc::gen::inRange(2, 7)),
      rc::gen::set(&Boundary::tiny_topk,
                   rc::gen::inRange(std::max(1, d.topk_lo), std::min(std::max(1, d.topk_lo) + 2, d.topk_hi + 1))),
      rc::gen::set(&Boundary::page_size,
                   !d.page_sizes.empty() ? one_of(d.page_sizes)
                   : shared              ? rc::gen::weightedOneOf<int>(
                                  {{9, rc::gen::just(1)}, {2, rc::gen::just(16)}, {1, rc::gen::just(128)}})
                            : rc::gen::just(1)),
      rc::gen::set(&Boundary::pages, rc::gen::weightedOneOf<PageTable>({{2, rc::gen::just(PageTable::random)},
                                                                        {1, rc::gen::just(PageTable::interval)},
                                                                        {1, rc::gen::just(PageTable::reverse)}})),
      rc::gen::set(&Boundary::shared_prefix, shared
                                                 ? rc::gen::weightedOneOf<std::int64_t>(
                                                       {{4, rc::gen::just<std::int64_t>(0)},
                                                        {1, rc::gen::element<std::int64_t>(1, 16, 129, 1000, 1 << 20)}})
                                                 : rc::gen::just<std::int64_t>(0)),
      // Appended last: the draws above stay those of older seeds.
      rc::gen::set(&Boundary::fp8_q, d.q_only_fp8 ? rc::gen::just(true)
                                     : d.fp8_q    ? sometimes(6)
                                                  : rc::gen::just(false)),
      rc::gen::set(&Boundary::nvfp4_k, d.nvfp4_k ? sometimes(6) : rc::gen::just(false)));
}

void apply(const Boundary& x, const Domain& d, GenSpec& s) {
  if (x.long_rows) {
    s.requests = 1;
    s.draft_rows = x.long_rows_n;
    s.D = d.long_D;
    s.cfg.block_size = x.long_bs;
    s.prefixes = {16384 * x.long_bs + x.long_extra};
    s.cfg.topk = x.long_topk;
    s.padding_requests = s.inactive_requests = 0;
  }
  if (x.big_q_scale != 0) s.cfg.q_scale = x.big_q_scale;
  if (x.wide_init >= 0) s.cfg.init_blocks = x.wide_init;
  if (x.topk1) s.cfg.topk = x.tiny_topk;
  s.fp8_specials = x.fp8_specials;
  s.fp8_nonfinite = x.fp8_specials && x.fp8_nonfinite;
  s.alias_minus_s = x.alias_minus_s;
  s.ladder_levels = x.ladder_levels;
  s.cfg.page_size = x.page_size;
  s.pages = x.pages;
  s.shared_prefix = x.page_size == 1 ? x.shared_prefix : 0;
  if (x.fp8_q) s.cfg.q_dtype = KDtype::e4m3fn;
  if (x.nvfp4_k && s.D % kNvfp4Block == 0) s.cfg.k_dtype = KDtype::nvfp4;
}

// nvfp4 needs D % 16 == 0: a contract listing nvfp4 with other head dims falls back to its
// first other K dtype there.
void fit_nvfp4(const Domain& d, GenSpec& s) {
  if (!is_nvfp4(s.cfg.k_dtype) || s.D % kNvfp4Block == 0) return;
  for (KDtype t : d.k_dtypes)
    if (!is_nvfp4(t)) {
      s.cfg.k_dtype = t;
      return;
    }
}

// The rows a spec generates (requests, padding and inactive requests, trailing rows).
std::int64_t spec_rows(const GenSpec& s) {
  return static_cast<std::int64_t>(s.requests + s.padding_requests + s.inactive_requests) * s.draft_rows +
         s.trailing_padding_rows + s.trailing_inactive_rows;
}

// A contract's row limit: drop trailing rows, padding and inactive requests, then requests,
// then draft rows (deterministic, so shrinking still converges).
void fit_rows(GenSpec& s, std::int64_t max_rows) {
  if (max_rows <= 0) return;
  while (spec_rows(s) > max_rows) {
    if (s.trailing_padding_rows)
      --s.trailing_padding_rows;
    else if (s.trailing_inactive_rows)
      --s.trailing_inactive_rows;
    else if (s.padding_requests)
      --s.padding_requests;
    else if (s.inactive_requests)
      --s.inactive_requests;
    else if (s.requests > 1)
      --s.requests, s.prefixes.pop_back();
    else
      --s.draft_rows;
  }
  s.inactive_rows_in_requests = std::min<int>(s.inactive_rows_in_requests, s.requests * s.draft_rows);
}

void set_shape(const ShapeKey& key, const Domain& d, GenSpec& s) {
  s.cfg.block_size = key.block_size;
  s.heads(key.Hq, key.Hk, key.D);
  s.cfg.topk = key.topk;
  s.cfg.k_dtype = key.k_dtype;
  s.cfg.q_dtype = key.q_dtype;
  s.cfg.score_type = key.score_type;
  if (key.score_type != ScoreType::max && s.values == Values::exact) s.values = Values::near_tie;
  if (d.packing == Packing::full_groups)
    s.draft_rows = key.pack, s.packed_queries = 0;
  else if (d.packing == Packing::none)
    s.packed_queries = 1;
  else
    s.packed_queries = key.pack;
  if (s.prefixes.size() > static_cast<std::size_t>(s.requests)) s.prefixes.resize(static_cast<std::size_t>(s.requests));
}
}  // namespace

ShapeKey shape_key(const GenSpec& s, Packing packing) {
  ShapeKey k;
  k.block_size = s.cfg.block_size;
  k.D = static_cast<int>(s.D), k.Hq = static_cast<int>(s.Hq), k.Hk = static_cast<int>(s.Hk);
  k.topk = s.cfg.topk;
  k.k_dtype = s.cfg.k_dtype;
  k.q_dtype = s.cfg.q_dtype;
  k.score_type = s.cfg.score_type;
  k.pack = packing == Packing::none                                   ? 1
           : packing == Packing::full_groups || s.packed_queries == 0 ? s.draft_rows
                                                                      : s.packed_queries;
  return k;
}

rc::Gen<GenSpec> spec(Knobs k) {
  const Domain d = domain_of(k);
  if (!d.exact && k.values == Values::exact) k.values = Values::near_tie;  // exact values need score max
  // Structure first (what shrinks most usefully), then the values.
  struct Shape {
    int requests, draft_rows, ratio, D, bs, shape;
  };
  const int n_shapes = k.shapes ? static_cast<int>(k.shapes->size()) : 0;
  const auto shape = rc::gen::build<Shape>(
      rc::gen::set(&Shape::requests, rc::gen::inRange(1, k.max_requests + 1)),
      rc::gen::set(&Shape::draft_rows, rc::gen::inRange(1, k.max_draft_rows + 1)),
      // uniform: inRange is size-scaled and drew 8:2 in 3 % of cases
      rc::gen::set(&Shape::ratio, one_of(std::vector<int>([&] {
        std::vector<int> idx(d.heads.size());
        for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<int>(i);
        return idx;
      }()))),
      rc::gen::set(&Shape::D, one_of(d.head_dims)), rc::gen::set(&Shape::bs, one_of(d.block_sizes)),
      rc::gen::set(&Shape::shape, n_shapes ? rc::gen::inRange(0, n_shapes) : rc::gen::just(0)));
  return rc::gen::mapcat(shape, [k, d](const Shape& sh) {
    const bool exact = k.values == Values::exact;
    const ShapeKey* key = k.shapes && !k.shapes->empty() ? &(*k.shapes)[static_cast<std::size_t>(sh.shape)] : nullptr;
    const int bs = key ? key->block_size : sh.bs;
    // Exact values need at most 2*(D/gqa)*kmax+1 distinct block levels per request.
    const std::int64_t max_prefix = exact ? std::min<std::int64_t>(d.max_prefix, 8 * bs) : d.max_prefix;
    const int topk_hi = std::max(d.topk_lo, d.topk_hi);
    return rc::gen::map(rc::gen::tuple(rc::gen::container<std::vector<std::int64_t>>(
                                           static_cast<std::size_t>(sh.requests), prefix(bs, max_prefix)),
                                       one_of(d.k_dtypes),
                                       exact || !k.allow_lse ? rc::gen::just(ScoreType::max) : one_of(d.score_types),
                                       rc::gen::inRange(d.topk_lo, topk_hi + 1), rc::gen::inRange(0, d.init_hi + 1),
                                       rc::gen::inRange(d.local_lo, d.local_hi + 1),
                                       rc::gen::element(1.0, 0.75, 1.5, 0.3125), rc::gen::element(1.0, 0.5, 2.0),
                                       rc::gen::tuple(rc::gen::arbitrary<bool>(), rc::gen::arbitrary<bool>(),
                                                      rc::gen::inRange(0, 3), rc::gen::inRange(0, d.inactive ? 3 : 1)),
                                       graph_rows(k, d, sh.draft_rows), boundary(k, d), rc::gen::inRange(0, 3)),
                        [sh, k, d, key](const auto& t) {
                          GenSpec s;
                          const auto [hq, hk] = d.heads[static_cast<std::size_t>(sh.ratio)];
                          s.rows(sh.requests, sh.draft_rows).heads(hq, hk, sh.D);
                          s.cfg.block_size = sh.bs;
                          s.prefixes = std::get<0>(t);
                          s.cfg.k_dtype = std::get<1>(t);
                          s.cfg.score_type = std::get<2>(t);
                          s.cfg.topk = std::get<3>(t);
                          s.cfg.init_blocks = std::get<4>(t);
                          s.cfg.local_blocks = std::get<5>(t);
                          s.cfg.k_scale = std::get<6>(t);
                          s.cfg.q_scale = std::get<7>(t);
                          const auto& [keep_order, no_alias, padding, inactive] = std::get<8>(t);
                          s.permute_slots = true;  // slot ids never equal the row or group index
                          s.permute_tokens = !keep_order;
                          s.negative_aliases = !no_alias && d.aliases;
                          s.padding_requests = padding;
                          s.inactive_requests = inactive;
                          const auto& [packed_queries, trailing_padding, trailing_inactive, inactive_in_requests] =
                              std::get<9>(t);
                          s.packed_queries = packed_queries;
                          s.trailing_padding_rows = trailing_padding;
                          s.trailing_inactive_rows = trailing_inactive;
                          s.inactive_rows_in_requests = inactive_in_requests;
                          s.values = k.values;
                          if (d.quantized && s.values == Values::gaussian && std::get<11>(t) == 0)
                            s.values = Values::selector_sweep;
                          apply(std::get<10>(t), d, s);
                          if (key) set_shape(*key, d, s);
                          fit_nvfp4(d, s);
                          if (d.max_rows > 0 && s.draft_rows > d.max_rows) s.draft_rows = static_cast<int>(d.max_rows);
                          fit_rows(s, d.max_rows);
                          return s;
                        });
  });
}

std::vector<ShapeKey> draw_shapes(const Knobs& knobs, int n, std::uint64_t seed) {
  Knobs k = knobs;
  k.shapes.reset();
  const Packing packing = k.contract ? k.contract->packing : Packing::any_rows;
  std::vector<ShapeKey> out;
  const auto gen = spec(k);
  for (std::uint64_t i = 0; static_cast<int>(out.size()) < n && i < 50ULL * static_cast<std::uint64_t>(n); ++i) {
    const ShapeKey key = shape_key(gen(rc::Random(seed * 1000003ULL + i), 50).value(), packing);
    if (std::find(out.begin(), out.end(), key) == out.end()) out.push_back(key);
  }
  return out;
}

}  // namespace gen
}  // namespace ixo
