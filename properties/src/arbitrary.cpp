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
     << " score=" << to_string(s.cfg.score_type) << " k_dtype=" << to_string(s.cfg.k_dtype) << " k_scale=" << s.cfg.k_scale
     << " q_scale=" << s.cfg.q_scale << " values="
     << values_name(s.values) << " ladder_levels=" << s.ladder_levels << " fp8_specials=" << s.fp8_specials << " fp8_nonfinite=" << s.fp8_nonfinite
     << " alias_minus_s=" << s.alias_minus_s
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
      {{3, rc::gen::map(rc::gen::pair(rc::gen::inRange<std::int64_t>(1, max_m + 1), rc::gen::inRange<std::int64_t>(-2, 2)),
                        [block_size](const std::pair<std::int64_t, std::int64_t>& p) {
                          return std::max<std::int64_t>(1, p.first * block_size + p.second);
                        })},
       {1, rc::gen::inRange<std::int64_t>(1, max_prefix + 1)}});
}

// The rows of real CUDA-graph batches (GenSpec): packed_queries (0 = draft_rows, else any
// 1..max_draft_rows+1, so groups straddle requests and R need not be a multiple of it),
// trailing padding rows that need not fill a group, trailing inactive rows, inactive rows
// inside requests. Each is off (0) most of the time and shrinks towards off.
namespace {
rc::Gen<std::tuple<int, int, int, int>> graph_rows(const Knobs& k, int draft_rows) {
  if (!k.graph_rows) return rc::gen::just(std::tuple<int, int, int, int>{0, 0, 0, 0});
  auto mostly_zero = [](int hi) { return rc::gen::weightedOneOf<int>({{3, rc::gen::just(0)}, {2, rc::gen::inRange(1, hi + 1)}}); };
  return rc::gen::tuple(
      rc::gen::weightedOneOf<int>({{3, rc::gen::just(0)}, {2, rc::gen::inRange(1, std::max(k.max_draft_rows, draft_rows) + 2)}}),
      mostly_zero(2 * draft_rows + 1), mostly_zero(3), mostly_zero(3));
}
}  // namespace

// The boundary dimensions (docs/NOTES.md "Condition coverage"), each off most of the time:
// long rows (block size 1-2 and 16384+ blocks, top-k up to 2048), scales that push lse logits
// past the fp32 exp2 range, init windows far wider than short rows, topk 1, fp8 special codes,
// the alias -S, the ladder depth.
struct Boundary {
  bool long_rows = false;
  int long_bs = 1, long_rows_n = 1, long_extra = 0, long_topk = 1;
  double big_q_scale = 0;  // 0: the ordinary q_scale
  int wide_init = -1;      // -1: the ordinary init_blocks
  bool topk1 = false, fp8_specials = false, fp8_nonfinite = false, alias_minus_s = false;
  int ladder_levels = 4;
};

namespace {
rc::Gen<Boundary> boundary(const Knobs& k) {
  auto sometimes = [](int one_in) { return rc::gen::weightedOneOf<bool>({{one_in - 1, rc::gen::just(false)}, {1, rc::gen::just(true)}}); };
  const bool can_long = k.long_rows && k.values != Values::exact;  // exact values cap the blocks per request
  return rc::gen::build<Boundary>(
      rc::gen::set(&Boundary::long_rows, can_long ? sometimes(4) : rc::gen::just(false)),
      rc::gen::set(&Boundary::long_bs, rc::gen::element(1, 2)), rc::gen::set(&Boundary::long_rows_n, rc::gen::inRange(1, 3)),
      rc::gen::set(&Boundary::long_extra, rc::gen::inRange(-2, 64)),
      rc::gen::set(&Boundary::long_topk, rc::gen::weightedOneOf<int>({{1, rc::gen::inRange(1, 65)}, {1, rc::gen::inRange(1024, 2049)}})),
      rc::gen::set(&Boundary::big_q_scale, k.big_scales ? rc::gen::weightedOneOf<double>({{3, rc::gen::just(0.0)}, {1, rc::gen::element(384.0, -512.0)}})
                                                        : rc::gen::just(0.0)),
      rc::gen::set(&Boundary::wide_init, rc::gen::weightedOneOf<int>({{5, rc::gen::just(-1)}, {1, rc::gen::inRange(4, 48)}})),
      rc::gen::set(&Boundary::topk1, sometimes(16)),
      rc::gen::set(&Boundary::fp8_specials, k.fp8_specials ? sometimes(3) : rc::gen::just(false)),
      rc::gen::set(&Boundary::fp8_nonfinite, k.fp8_nonfinite ? sometimes(2) : rc::gen::just(false)),
      rc::gen::set(&Boundary::alias_minus_s, sometimes(4)), rc::gen::set(&Boundary::ladder_levels, rc::gen::inRange(2, 7)));
}

void apply(const Boundary& x, GenSpec& s) {
  if (x.long_rows) {
    s.requests = 1;
    s.draft_rows = x.long_rows_n;
    s.D = 64;
    s.cfg.block_size = x.long_bs;
    s.prefixes = {16384 * x.long_bs + x.long_extra};
    s.cfg.topk = x.long_topk;
    s.padding_requests = s.inactive_requests = 0;
  }
  if (x.big_q_scale != 0) s.cfg.q_scale = x.big_q_scale;
  if (x.wide_init >= 0) s.cfg.init_blocks = x.wide_init;
  if (x.topk1) s.cfg.topk = 1;
  s.fp8_specials = x.fp8_specials;
  s.fp8_nonfinite = x.fp8_specials && x.fp8_nonfinite;
  s.alias_minus_s = x.alias_minus_s;
  s.ladder_levels = x.ladder_levels;
}
}  // namespace

rc::Gen<GenSpec> spec(Knobs k) {
  // Structure first (what shrinks most usefully), then the values.
  struct Shape {
    int requests, draft_rows, ratio, D, bs;
  };
  const auto shape = rc::gen::build<Shape>(
      rc::gen::set(&Shape::requests, rc::gen::inRange(1, k.max_requests + 1)),
      rc::gen::set(&Shape::draft_rows, rc::gen::inRange(1, k.max_draft_rows + 1)),
      rc::gen::set(&Shape::ratio, rc::gen::element(0, 1, 2, 3, 4)),  // uniform: inRange is size-scaled and drew 8:2 in 3 % of cases
      rc::gen::set(&Shape::D, rc::gen::element(128, 64)),
      rc::gen::set(&Shape::bs, rc::gen::element(128, 64, 32, 16)));
  return rc::gen::mapcat(shape, [k](const Shape& sh) {
    const int ratios[5][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 2}, {4, 4}};
    const bool exact = k.values == Values::exact;
    // Exact values need at most 2*(D/gqa)*kmax+1 distinct block levels per request.
    const std::int64_t max_prefix = exact ? std::min<std::int64_t>(k.max_prefix, 8 * sh.bs) : k.max_prefix;
    return rc::gen::map(
        rc::gen::tuple(rc::gen::container<std::vector<std::int64_t>>(static_cast<std::size_t>(sh.requests), prefix(sh.bs, max_prefix)),
                       rc::gen::arbitrary<KDtype>(), exact || !k.allow_lse ? rc::gen::just(ScoreType::max) : rc::gen::arbitrary<ScoreType>(),
                       rc::gen::inRange(1, k.max_topk + 1), rc::gen::inRange(0, 4), rc::gen::inRange(0, 4),
                       rc::gen::element(1.0, 0.75, 1.5, 0.3125), rc::gen::element(1.0, 0.5, 2.0),
                       rc::gen::tuple(rc::gen::arbitrary<bool>(), rc::gen::arbitrary<bool>(), rc::gen::inRange(0, 3),
                                      rc::gen::inRange(0, 3)),
                       graph_rows(k, sh.draft_rows), boundary(k)),
        [sh, k, ratios](const auto& t) {
          GenSpec s;
          s.rows(sh.requests, sh.draft_rows).heads(ratios[sh.ratio][0], ratios[sh.ratio][1], sh.D);
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
          s.negative_aliases = !no_alias;
          s.padding_requests = padding;
          s.inactive_requests = inactive;
          const auto& [packed_queries, trailing_padding, trailing_inactive, inactive_in_requests] = std::get<9>(t);
          s.packed_queries = packed_queries;
          s.trailing_padding_rows = trailing_padding;
          s.trailing_inactive_rows = trailing_inactive;
          s.inactive_rows_in_requests = inactive_in_requests;
          s.values = k.values;
          apply(std::get<10>(t), s);
          return s;
        });
  });
}

}  // namespace gen
}  // namespace ixo
