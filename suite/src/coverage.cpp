// Condition coverage (coverage.hpp): what each case really hits, from the Case and the
// oracle's scores and ids. The list is issue 13 section 1; docs/NOTES.md explains it.
#include "ixo/coverage.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace ixo::coverage {

namespace {

// What a case hits; one flag per condition.
struct Facts {
  bool len_mod0 = false, len_mod1 = false, len_mod_bs1 = false;
  bool nb_le_topk = false, nb_eq_topk = false, nb_eq_topk1 = false;
  bool init_gt_nb = false, init_gt_nb_gt_topk = false, forced_gt_topk = false, local0_mixed = false;
  bool lse_big = false, lse_equal = false;
  bool fp8[3][3] = {};  // [format e4m3fn, e4m3fnuz, e5m2][subnormal, zero, nonfinite]
  bool fp8_kscale = false, alias_neg = false, alias_minus_s = false;
  bool inactive_past = false, inactive_neg = false, padding = false, r_not_multiple = false;
  bool pack_gqa8 = false, pack_gqa16 = false, r11 = false, r41 = false, r82 = false, r44 = false;
  bool topk1 = false, topk1024 = false, nb16k = false, ties1000 = false, ties16k = false, ladder = false,
       ladder16k = false;
  bool cp_shard_empty = false, cp_all_empty = false, cp_one_shard = false;
};

// The small base of the witnesses: 2 requests x 3 draft rows, Hq 2 : Hk 1, D 64, bs 16.
GenSpec base() { return GenSpec{}.rows(2, 3).heads(2, 1, 64).up_to(300).blocks(16, 4, 1, 1); }
GenSpec with_specials(KDtype t) {
  GenSpec s = base().k(t, 0.75);
  s.fp8_specials = true;
  s.fp8_nonfinite = true;
  return s;
}

struct Entry {
  const char* name;
  const char* what;
  Scope scope;
  GenSpec witness;
  bool Facts::*flag;
};

std::vector<Entry> entries() {
  using V = Values;
  const GenSpec lens = base().lengths({16 * 5 - 1, 16 * 6 - 2}).blocks(16, 5, 1, 1);  // L 80..82, 95..97: nb 5, 6, 6
  GenSpec alias = base();
  alias.alias_minus_s = true;
  alias.negative_aliases = false;
  GenSpec past = base();
  past.inactive_requests = 3;
  past.trailing_inactive_rows = 3;
  GenSpec pad = base();
  pad.padding_requests = 1;
  GenSpec big = base().score(ScoreType::lse);
  big.cfg.q_scale = 384;
  GenSpec ladder = base().rows(1, 2).lengths({1024}).blocks(1, 8, 0, 0).with(V::ladder);
  GenSpec ladder16 = ladder;
  ladder16.prefixes = {16384 + 3};
  std::vector<Entry> v = {
      {"len_mod_bs_0", "L % block_size == 0", Scope::any, lens, &Facts::len_mod0},
      {"len_mod_bs_1", "L % block_size == 1", Scope::any, lens, &Facts::len_mod1},
      {"len_mod_bs_minus1", "L % block_size == bs - 1 (bs > 2)", Scope::any, lens, &Facts::len_mod_bs1},
      {"nb_le_topk", "0 < nb <= topk", Scope::any, base().blocks(16, 32, 1, 1), &Facts::nb_le_topk},
      {"nb_eq_topk", "nb == topk", Scope::any, lens, &Facts::nb_eq_topk},
      {"nb_eq_topk_plus1", "nb == topk + 1", Scope::any, lens, &Facts::nb_eq_topk1},
      {"init_gt_nb", "init_blocks > nb", Scope::any, GenSpec(lens).blocks(16, 2, 8, 1), &Facts::init_gt_nb},
      {"init_gt_nb_gt_topk", "init_blocks > nb > topk", Scope::any, GenSpec(lens).blocks(16, 2, 8, 1),
       &Facts::init_gt_nb_gt_topk},
      {"init_local_gt_topk", "init + local > topk (nb > topk)", Scope::any, GenSpec(lens).blocks(16, 3, 2, 2),
       &Facts::forced_gt_topk},
      {"local0_packed_mixed_nb", "local_blocks 0, one packed group of rows with different nb", Scope::any,
       GenSpec(lens).blocks(16, 3, 1, 0), &Facts::local0_mixed},
      {"lse_logit_beyond_126", "lse, |log2 logit| > 126 (past the fp32 exp2 range)", Scope::any, big, &Facts::lse_big},
      {"lse_all_logits_equal", "lse, every logit of a row equal", Scope::any,
       base().score(ScoreType::lse).with(V::plateau), &Facts::lse_equal},
  };
  const char* kinds[3] = {"subnormal", "zero", "nan_inf"};
  const KDtype fmts[3] = {KDtype::e4m3fn, KDtype::e4m3fnuz, KDtype::e5m2};
  static const std::vector<std::string> names = [&] {
    std::vector<std::string> n;
    for (KDtype t : fmts)
      for (const char* k : kinds) n.push_back(fmt::format("fp8_{}_{}", k, to_string(t)));
    return n;
  }();
  static const std::vector<std::string> whats = [&] {
    std::vector<std::string> n;
    for (KDtype t : fmts)
      for (const char* k : kinds) n.push_back(fmt::format("{} codes in K read by a row ({})", k, to_string(t)));
    return n;
  }();
  // fp8[i][j] is no member pointer: these entries have none and hits() walks them in order.
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      v.push_back({names[static_cast<std::size_t>(3 * i + j)].c_str(),
                   whats[static_cast<std::size_t>(3 * i + j)].c_str(), Scope::any, with_specials(fmts[i]), nullptr});
  const std::vector<Entry> rest = {
      {"fp8_k_scale_not_1", "fp8 K with k_scale != 1", Scope::any, base().k(KDtype::e5m2, 1.5), &Facts::fp8_kscale},
      {"negative_alias", "a token slot stored as a negative alias", Scope::any, alias, &Facts::alias_neg},
      {"alias_minus_S", "a token slot stored as exactly -S", Scope::any, alias, &Facts::alias_minus_s},
      {"inactive_slot_past_table", "inactive row: slot id past the table", Scope::any, past, &Facts::inactive_past},
      {"inactive_slot_negative", "inactive row: negative slot id", Scope::any, past, &Facts::inactive_neg},
      {"padding_rows", "graph padding rows (table row 0)", Scope::any, pad, &Facts::padding},
      {"R_not_multiple_of_pack", "R not a multiple of packed_queries", Scope::any, base().pack(4),
       &Facts::r_not_multiple},
      {"pack_gqa_gt_8", "packed_queries * Hq/Hk > 8", Scope::any, base().heads(4, 1, 64), &Facts::pack_gqa8},
      {"pack_gqa_gt_16", "packed_queries * Hq/Hk > 16", Scope::any, base().heads(8, 1, 64), &Facts::pack_gqa16},
      {"hq_hk_1_1", "Hq:Hk 1:1", Scope::any, base().heads(1, 1, 64), &Facts::r11},
      {"hq_hk_4_1", "Hq:Hk 4:1", Scope::any, base().heads(4, 1, 64), &Facts::r41},
      {"hq_hk_8_2", "Hq:Hk 8:2", Scope::any, base().heads(8, 2, 64), &Facts::r82},
      {"hq_hk_4_4", "Hq:Hk 4:4", Scope::any, base().heads(4, 4, 64), &Facts::r44},
      {"topk_1", "topk 1", Scope::any, base().blocks(16, 1, 0, 0), &Facts::topk1},
      {"topk_ge_1024", "topk >= 1024", Scope::any, base().blocks(1, 1024, 1, 1), &Facts::topk1024},
      {"nb_ge_16384", "a row with nb >= 16384", Scope::any, ladder16, &Facts::nb16k},
      {"ties_ge_1000_blocks", "exact score ties across >= 1000 blocks of a row", Scope::any,
       GenSpec(ladder).with(V::plateau), &Facts::ties1000},
      {"ties_ge_16384_blocks", "exact score ties across >= 16384 blocks of a row", Scope::any,
       GenSpec(ladder16).with(V::plateau), &Facts::ties16k},
      {"ladder", "near-tie ladder: >= 16 blocks of a row with 2..8 distinct scores", Scope::any, ladder,
       &Facts::ladder},
      {"ladder_ge_16384_blocks", "ladder over >= 16384 blocks", Scope::any, ladder16, &Facts::ladder16k},
      {"cp_shard_empty", "CP: a shard holds no block of a row (0 < nb < WORLD)", Scope::cp,
       base().heads(4, 1, 64).lengths({1, 17}).rows(2, 2), &Facts::cp_shard_empty},
      {"cp_all_shards_empty", "CP: every shard empty (an active table row, length 0)", Scope::cp,
       [] {
         GenSpec s = base().heads(4, 1, 64).pack(1);
         s.trailing_inactive_rows = 3;
         s.inactive_rows_in_requests = 3;
         return s;
       }(),
       &Facts::cp_all_empty},
      {"cp_one_shard_all_topk", "CP: one shard holds every top-k block of a row", Scope::cp,
       base().heads(2, 1, 64).blocks(16, 2, 0, 0), &Facts::cp_one_shard},
  };
  v.insert(v.end(), rest.begin(), rest.end());
  return v;
}

const std::vector<Entry>& table() {
  static const std::vector<Entry> t = entries();
  return t;
}

int format_index(KDtype t) { return t == KDtype::e4m3fn ? 0 : t == KDtype::e4m3fnuz ? 1 : 2; }

// Scores of one (head, row) that are not forced and finite: exact ties and ladders.
void score_shape(const Expected& e, std::int64_t h, std::int64_t r, Facts& f) {
  std::vector<double> s;
  for (std::int64_t b = 0; b < e.nb[static_cast<std::size_t>(r)]; ++b) {
    const auto i = static_cast<std::size_t>(e.at(h, r, b));
    if (!e.forced[i] && std::isfinite(e.score[i])) s.push_back(e.score[i]);
  }
  if (s.size() < 16) return;
  std::sort(s.begin(), s.end());
  std::size_t distinct = 1, run = 1, longest = 1;
  for (std::size_t i = 1; i < s.size(); ++i) {
    run = s[i] == s[i - 1] ? run + 1 : 1;
    distinct += s[i] != s[i - 1];
    longest = std::max(longest, run);
  }
  f.ties1000 |= longest >= 1000;
  f.ties16k |= longest >= 16384;
  const bool ladder = distinct >= 2 && distinct <= 8;
  f.ladder |= ladder;
  f.ladder16k |= ladder && s.size() >= 16384;
}

Facts facts(const Case& c, const Expected& e) {
  Facts f;
  const auto& g = c.cfg;
  const std::int64_t bs = g.block_size, gqa = c.Hq / c.Hk, P = g.packed_queries;
  f.topk1 = g.topk == 1;
  f.topk1024 = g.topk >= 1024;
  f.r11 = c.Hq == 1 && c.Hk == 1;
  f.r41 = c.Hq == 4 && c.Hk == 1;
  f.r82 = c.Hq == 8 && c.Hk == 2;
  f.r44 = c.Hq == 4 && c.Hk == 4;
  f.pack_gqa8 = P * gqa > 8;
  f.pack_gqa16 = P * gqa > 16;
  f.r_not_multiple = c.R % P != 0;
  f.fp8_kscale = is_fp8(g.k_dtype) && g.k_scale != 1.0;
  const std::int64_t world = c.Hq;
  std::vector<char> read(static_cast<std::size_t>(c.S), 0);
  const std::size_t row_bytes = static_cast<std::size_t>(k_row_bytes(g.k_dtype, c.D));
  for (std::int64_t r = 0; r < c.R; ++r) {
    const std::int64_t L = c.seq_lens[static_cast<std::size_t>(r)], sid = c.slot_ids[static_cast<std::size_t>(r)];
    const std::int64_t row = table_row(c, r), nb = e.nb[static_cast<std::size_t>(r)];
    if (L > 0 && row < 0) {
      f.inactive_past |= sid >= c.rows;
      f.inactive_neg |= sid < 0;
    }
    if (row == 0) f.padding = true;
    // Length 0 on a slot id inside the table (after aliasing): every shard of the row empty.
    const std::int64_t aliased = sid < 0 && sid >= -c.S ? sid + c.S : sid;
    if (L == 0 && aliased >= 0 && aliased < c.rows && world > 1) f.cp_all_empty = true;
    if (row < 0 || nb == 0) continue;
    f.len_mod0 |= L % bs == 0;
    f.len_mod1 |= bs > 1 && L % bs == 1;
    f.len_mod_bs1 |= bs > 2 && L % bs == bs - 1;
    f.nb_le_topk |= nb <= g.topk;
    f.nb_eq_topk |= nb == g.topk;
    f.nb_eq_topk1 |= nb == g.topk + 1;
    f.init_gt_nb |= g.init_blocks > nb;
    f.init_gt_nb_gt_topk |= g.init_blocks > nb && nb > g.topk;
    f.forced_gt_topk |=
        nb > g.topk && std::min<std::int64_t>(g.init_blocks, nb) + std::min<std::int64_t>(g.local_blocks, nb) > g.topk;
    f.nb16k |= nb >= 16384;
    f.cp_shard_empty |= world > 1 && nb < world;
    bool all_same = nb >= 2;
    for (std::int64_t t = 0; t < L; ++t) {
      const std::int32_t v = c.req_to_token[static_cast<std::size_t>(row * c.width + t)];
      f.alias_neg |= v < 0;
      f.alias_minus_s |= v == -c.S;
      const std::int64_t slot = v < 0 ? v + c.S : v;
      read[static_cast<std::size_t>(slot)] = 1;
      if (all_same && t > 0 && g.score_type == ScoreType::lse) {
        const std::int32_t v0 = c.req_to_token[static_cast<std::size_t>(row * c.width)];
        const std::int64_t s0 = v0 < 0 ? v0 + c.S : v0;
        all_same = std::memcmp(&c.k_cache[static_cast<std::size_t>(s0 * c.Hk) * row_bytes],
                               &c.k_cache[static_cast<std::size_t>(slot * c.Hk) * row_bytes],
                               row_bytes * static_cast<std::size_t>(c.Hk)) == 0;
      }
    }
    f.lse_equal |= g.score_type == ScoreType::lse && all_same;
    for (std::int64_t h = 0; h < c.Hq; ++h) {
      score_shape(e, h, r, f);
      if (g.score_type == ScoreType::lse)
        for (std::int64_t b = 0; b < nb; ++b) {
          const auto i = static_cast<std::size_t>(e.at(h, r, b));
          const double S = e.score[i];
          // m <= S <= m + log2(bs): the block's largest logit m is past +-126 when
          f.lse_big |= !e.forced[i] && std::isfinite(S) && (S - std::log2(static_cast<double>(bs)) > 126 || S < -126);
        }
      if (world > 1 && nb > g.topk && g.topk >= 2) {
        const std::int32_t* ids = &e.topk_idx[static_cast<std::size_t>((h * c.R + r) * g.topk)];
        bool one = true;
        for (std::int64_t k = 1; k < g.topk && ids[k] >= 0; ++k) one &= ids[k] % world == ids[0] % world;
        f.cp_one_shard |= one;
      }
    }
  }
  // local 0 with a packed group (packed_queries rows, one table row) of different nb.
  if (g.local_blocks == 0 && P > 1)
    for (std::int64_t r0 = 0; r0 + P <= c.R; r0 += P) {
      bool same_row = table_row(c, r0) >= 0, mixed = false;
      for (std::int64_t r = r0 + 1; r < r0 + P; ++r) {
        same_row &= c.slot_ids[static_cast<std::size_t>(r)] == c.slot_ids[static_cast<std::size_t>(r0)];
        mixed |= e.nb[static_cast<std::size_t>(r)] != e.nb[static_cast<std::size_t>(r0)];
      }
      f.local0_mixed |= same_row && mixed;
    }
  if (is_fp8(g.k_dtype)) {
    const int fi = format_index(g.k_dtype);
    for (std::int64_t s = 0; s < c.S; ++s) {
      if (!read[static_cast<std::size_t>(s)]) continue;
      for (std::size_t i = 0; i < row_bytes * static_cast<std::size_t>(c.Hk); ++i) {
        const Fp8Kind k = fp8_kind(c.k_cache[static_cast<std::size_t>(s * c.Hk) * row_bytes + i], g.k_dtype);
        if (k != Fp8Kind::normal) f.fp8[fi][static_cast<int>(k) - 1] = true;
      }
    }
  }
  return f;
}

}  // namespace

const std::vector<Condition>& conditions() {
  static const std::vector<Condition> c = [] {
    std::vector<Condition> v;
    for (const Entry& e : table()) v.push_back({e.name, e.what, e.scope, e.witness});
    return v;
  }();
  return c;
}

std::vector<bool> hits(const Case& c, const Expected& e) {
  const Facts f = facts(c, e);
  std::vector<bool> out;
  int fp8_next = 0;
  for (const Entry& x : table()) {
    if (x.flag) {
      out.push_back(f.*x.flag);
    } else {  // the fp8 (format, kind) entries, in order
      out.push_back(f.fp8[fp8_next / 3][fp8_next % 3]);
      ++fp8_next;
    }
  }
  return out;
}

bool context_parallel(const Backend& b) { return b.traits().mutant_scope == "cp"; }  // registry traits

namespace {
// reaches() with the condition's witness case already generated.
bool reaches_witness(const Backend& b, const Condition& cond, const Case& witness) {
  if (cond.scope == Scope::cp && !context_parallel(b)) return false;
  return b.supports(witness);
}
}  // namespace

bool reaches(const Backend& b, const Condition& cond) { return reaches_witness(b, cond, generate(cond.witness, 1)); }

Tally::Tally(const std::vector<Backend*>& backends, const std::vector<const Contract*>& contracts)
    : hit_(conditions().size(), 0), cases_(conditions().size(), 0), outside_(conditions().size(), false) {
  std::vector<Case> witnesses;  // generated once, asked of every backend
  for (const auto& c : conditions()) witnesses.push_back(generate(c.witness, 1));
  for (std::size_t k = 0; k < backends.size(); ++k) {
    const Contract* contract = k < contracts.size() ? contracts[k] : nullptr;
    std::vector<bool> r;
    for (std::size_t i = 0; i < witnesses.size(); ++i) {
      bool reach = reaches_witness(*backends[k], conditions()[i], witnesses[i]);
      if (reach && contract && !contract->admits(witnesses[i])) reach = false, outside_[i] = true;
      r.push_back(reach);
    }
    reach_.push_back(std::move(r));
  }
}

void Tally::add(std::size_t backend_index, const Case& c, const Expected& e) {
  const std::vector<bool> h = hits(c, e);
  const auto& reach = reach_[backend_index];
  ++total_;
  for (std::size_t i = 0; i < h.size(); ++i) {
    if (!reach[i]) continue;
    ++cases_[i];
    hit_[i] += h[i];
  }
}

std::vector<Tally::Row> Tally::rows() const {
  std::vector<Row> out;
  for (std::size_t i = 0; i < conditions().size(); ++i) {
    bool reachable = false;
    for (const auto& r : reach_) reachable |= r[i];
    out.push_back(
        {conditions()[i].name, conditions()[i].what, hit_[i], cases_[i], reachable, !reachable && outside_[i]});
  }
  return out;
}

std::string Tally::table() const {
  std::string t = fmt::format("{:<26} {:>8} {:>7}  {}\n", "condition", "cases", "share", "what");
  for (const Row& r : rows())
    if (r.reachable)
      t += fmt::format("{:<26} {:>8} {:>6.1f}%  {}{}\n", r.name, r.hit,
                       r.cases ? 100.0 * static_cast<double>(r.hit) / static_cast<double>(r.cases) : 0.0, r.what,
                       r.hit == 0 ? "  <- NEVER HIT" : "");
  std::string outside;
  for (const Row& r : rows())
    if (r.outside_contract) outside += (outside.empty() ? "" : ", ") + r.name;
  if (!outside.empty()) t += "unreachable under the contract (not misses): " + outside + "\n";
  return t + fmt::format("{} cases judged; conditions no backend of this run can reach are not listed\n", total_);
}

std::map<std::string, long> Tally::counts() const {
  std::map<std::string, long> m;
  for (const Row& r : rows())
    if (r.reachable) m[r.name] = r.hit;
  return m;
}

std::vector<std::string> Tally::never_hit() const { return below(0.0); }

std::vector<std::string> Tally::below(double share) const {
  std::vector<std::string> out;
  for (const Row& r : rows())
    if (r.reachable && (r.hit == 0 || static_cast<double>(r.hit) < share * static_cast<double>(r.cases)))
      out.push_back(r.name);
  return out;
}

}  // namespace ixo::coverage
