// The CPU twin. One engine runs both plans: a program is (row-axis index x, KV chunk, K
// head), exactly the GPU grid (batch * chunks, Hk). The per-row plan is the pack = 1 case
// (x = row; a tile of the gqa q heads of one K head); in the packed plan x is a whole group
// of `pack` consecutive rows or a trailing row (common::program_rows). A whole group whose
// rows share one slot id is one tile of pack * gqa rows (draft row i / gqa, head
// kvh * gqa + i % gqa) that loads every K token of the group's blocks once; any other group
// (and a trailing row) is scored row after row, one-row tiles, in the same program
// (common::program_tiles). Every formula comes from kernels/common.
//
// Determinism: each score cell is written by exactly one program (the program owning its
// row, head and block), each top-k row by exactly one iteration, and every value is
// computed in a fixed order; results do not depend on the OpenMP thread count or schedule.
#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "cpu/cpu_backends.hpp"
#include "indexer_common.hpp"
#include "ixo/error.hpp"

namespace ixo {
namespace cpu {
namespace {

namespace cm = ixo::common;

// Everything a program reads, fixed before the launch (the kernel arguments).
struct Launch {
  const Case* c = nullptr;
  Plan plan;
  int bs = 0, topk = 0, init = 0, local = 0;
  bool lse = false;
  int kcode = 0;           // common::KCode
  int eb = 2;              // bytes per K element
  float multiplier = 0.f;  // logit multiplier (log2 units)
  std::int64_t NB = 0;
  int mutant = 0;          // injected bug id (0 = none); reaches the program for IXO_MUTANT
  float* scores = nullptr;
  // fp8 K: the 256 codes decoded once by common::fp8_to_float (the same values, as a
  // GPU kernel's decode table would hold them). Unused for bf16.
  float fp8_lut[256] = {};
};

// One K element of a row, decoded exactly (common::k_element, or its fp8 table).
inline float load_k(const Launch& a, const std::uint8_t* row, int e) {
  return a.eb == 1 ? a.fp8_lut[row[e]] : cm::k_element(row, e, a.kcode, a.mutant);
}

// One tile row of a program, resolved from common::tile_row.
struct TileSlot {
  std::int64_t row = 0;
  int head = 0;
  std::int64_t L = 0;
  std::int64_t nb = 0;
  bool writes = false;  // active and non-trivial: writes score columns [0, nb)
  std::int64_t store_row = 0;  // where its scores are stored (== row, head)
  int store_head = 0;
};

// Per-thread scratch, sized once.
struct Scratch {
  std::vector<TileSlot> tile;
  std::vector<float> q;       // [tile rows, D] widened q
  std::vector<float> k;       // [D] widened K token
  std::vector<float> logits;  // [tile rows, bs]
};

// One tile of a program: rows [first, first + pack) of K head kvh, blocks of KV chunk
// `chunk` of the tile's own length.
void run_tile(const Launch& a, std::int64_t first, int pack, int chunk, int kvh, Scratch& w) {
  const Case& c = *a.c;
  const Plan& p = a.plan;
  const int D = static_cast<int>(c.D);

  const std::int64_t Lg = cm::group_length(c.seq_lens.data(), first, pack, a.mutant);
  const std::int64_t sid0 = cm::table_row(c.slot_ids[first], c.S, c.rows, Lg, a.mutant);
  if (sid0 < 0) return;  // no row of the group is active: reads no K
  const std::int64_t sid = cm::k_table_row(sid0, first, c.rows, a.mutant);
  const std::int64_t nbg = cm::num_blocks(Lg, a.bs);
  std::int64_t b0 = 0, b1 = 0;
  cm::chunk_blocks(nbg, p.chunks, chunk, &b0, &b1, a.mutant);
  if (b0 >= b1) return;  // empty chunk

  // Tile rows.
  const int tile_n = pack * p.gqa;
  const int hk = static_cast<int>(p.hk);
  w.tile.assign(tile_n, TileSlot{});
  bool any_writes = false;
  for (int i = 0; i < tile_n; ++i) {
    const cm::TileRow tr = cm::tile_row(i, pack, p.gqa);
    TileSlot& s = w.tile[i];
    if (!tr.used) continue;
    s.row = cm::tile_query_row(first, tr);
    s.head = cm::tile_query_head(kvh, p.gqa, tr, hk, a.mutant);
    s.L = c.seq_lens[s.row];
    s.nb = cm::num_blocks(s.L, a.bs);
    s.writes = cm::row_writes_scores(cm::table_row(c.slot_ids[s.row], c.S, c.rows, s.L, a.mutant), s.nb, a.topk, a.mutant);
    if (IXO_MUTANT(a.mutant, mutants::group_nb_for_rows) && s.writes) s.nb = nbg;
    const cm::TileRow st = cm::store_tile_row(i, pack, p.gqa, a.mutant);  // == tr
    s.store_row = cm::tile_query_row(first, st);
    s.store_head = cm::tile_query_head(kvh, p.gqa, st, hk, a.mutant);
    any_writes = any_writes || s.writes;
  }
  if (!any_writes) return;  // trivial or inactive rows only: nothing to score

  w.q.resize(static_cast<std::size_t>(tile_n) * D);
  for (int i = 0; i < tile_n; ++i) {
    if (!w.tile[i].writes) continue;
    const std::uint16_t* qr = c.q.data() + (w.tile[i].row * c.Hq + w.tile[i].head) * c.D;
    for (int d = 0; d < D; ++d) w.q[static_cast<std::size_t>(i) * D + d] = cm::bf16_to_float(qr[d]);
  }
  w.k.resize(D);
  w.logits.resize(static_cast<std::size_t>(tile_n) * a.bs);

  const std::uint8_t* kc = c.k_cache.data();
  const std::int64_t krow_bytes = c.D * a.eb;
  const int kload = cm::tile_k_head(kvh, pack, a.mutant);  // == kvh
  for (std::int64_t b = b0; b < b1; ++b) {
    bool need = false;
    for (int i = 0; i < tile_n; ++i) need = need || (w.tile[i].writes && b < w.tile[i].nb);
    if (!need) continue;
    // K tokens of this block up to the group's length, each loaded once for the tile.
    const int nload = cm::block_tokens(b, Lg, a.bs);
    for (int tt = 0; tt < nload; ++tt) {
      const std::int64_t t = b * a.bs + tt;
      const std::int64_t ks = cm::token_slot(c.req_to_token.data(), c.width, sid, t, c.S, a.mutant);
      const std::uint8_t* krow = kc + (ks * c.Hk + kload) * krow_bytes;
      for (int d = 0; d < D; ++d) w.k[d] = load_k(a, krow, d);
      for (int i = 0; i < tile_n; ++i) {
        const TileSlot& s = w.tile[i];
        const std::int64_t Lmask = IXO_MUTANT(a.mutant, mutants::pack_tail_leak) ? Lg : s.L;
        if (!s.writes || tt >= cm::block_tokens(b, Lmask, a.bs)) continue;  // masked lane
        const float dot = cm::dot_fp32(w.q.data() + static_cast<std::size_t>(i) * D, w.k.data(), D);
        w.logits[static_cast<std::size_t>(i) * a.bs + tt] = cm::logit(dot, a.multiplier);
      }
    }
    // Each row reduces over its own visible tokens and forces with its own nb.
    for (int i = 0; i < tile_n; ++i) {
      const TileSlot& s = w.tile[i];
      if (!s.writes || b >= s.nb) continue;
      float* lg = w.logits.data() + static_cast<std::size_t>(i) * a.bs;
      int n = cm::block_tokens(b, IXO_MUTANT(a.mutant, mutants::pack_tail_leak) ? Lg : s.L, a.bs);
      if (IXO_MUTANT(a.mutant, mutants::partial_block_zero_mask)) {  // lanes [n, bs) masked with 0, not dropped
        for (int tt = n; tt < a.bs; ++tt) lg[tt] = cm::masked_logit(false, lg[tt], a.mutant);
        n = a.bs;
      }
      const float score = cm::block_score(lg, n, 1, a.lse, a.mutant);
      const std::int64_t nb_force = IXO_MUTANT(a.mutant, mutants::no_row_local_reforce) ? nbg : s.nb;
      const float forced = cm::forced_score(score, b, nb_force, a.init, a.local, a.mutant);
      a.scores[cm::score_index(s.store_head, s.store_row, b, c.R, a.NB)] = forced;
      if (IXO_MUTANT(a.mutant, mutants::stray_column_write) && b + 1 == s.nb && s.nb < a.NB)
        a.scores[cm::score_index(s.store_head, s.store_row, b + 1, c.R, a.NB)] = forced;
    }
  }
}

// Program (x, chunk, K head): one packed tile when x is a whole group whose rows share one
// slot id, else its rows one after the other (a tile of one row each).
void run_program(const Launch& a, std::int64_t program, Scratch& w) {
  const Case& c = *a.c;
  const Plan& p = a.plan;
  const int kvh = static_cast<int>(program % p.hk);
  const std::int64_t gc = program / p.hk;
  const int chunk = static_cast<int>(gc % p.chunks);
  const cm::ProgramTiles pt = cm::program_tiles(c.slot_ids.data(), gc / p.chunks, c.R, p.pack);
  for (int t = 0; t < pt.count; ++t) run_tile(a, pt.first + static_cast<std::int64_t>(t) * pt.pack, pt.pack, chunk, kvh, w);
}

// Top-k of one (head, row): one program per pair, as the GPU's one CTA per pair.
void select_row(const Launch& a, std::int64_t h, std::int64_t r, std::vector<std::uint64_t>& keys,
                std::int32_t* out) {
  const Case& c = *a.c;
  const std::int64_t L = c.seq_lens[r];
  const std::int64_t nb = cm::table_row(c.slot_ids[r], c.S, c.rows, L, a.mutant) < 0 ? 0 : cm::num_blocks(L, a.bs);
  const bool no_shortcut = IXO_MUTANT(a.mutant, mutants::trivial_rows_not_shortcut) && nb > 0;
  if (cm::trivial_row(nb, a.topk) && !no_shortcut) {  // includes inactive rows (nb = 0): scores are not read
    cm::trivial_topk(nb, a.topk, out, a.mutant);
    return;
  }
  // Blocks ranked: the row's nb (the mutant above ranks a trivial row's whole buffer row).
  const std::int64_t n = cm::trivial_row(nb, a.topk) ? a.NB : nb;
  const int k = n < a.topk ? static_cast<int>(n) : a.topk;
  // Selected: the k best (the topk_one_short mutant keeps k - 1 and appends block 0).
  const int kept = IXO_MUTANT(a.mutant, mutants::topk_one_short) ? k - 1 : k;
  keys.resize(n);
  const float* row = a.scores + cm::score_index(h, r, 0, c.R, a.NB);
  for (std::int64_t b = 0; b < n; ++b) keys[b] = cm::topk_key(row[b], static_cast<std::int32_t>(b), a.mutant);
  if (kept > 0) std::nth_element(keys.begin(), keys.begin() + (kept - 1), keys.end(), std::greater<>());
  for (int i = 0; i < kept; ++i) out[i] = cm::topk_key_id(keys[i], a.mutant);
  if (IXO_MUTANT(a.mutant, mutants::ids_unsorted))
    std::sort(out, out + kept, std::greater<>());  // descending instead of ascending
  else
    std::sort(out, out + kept);
  for (int i = kept; i < a.topk; ++i) out[i] = i < k ? 0 : -1;  // topk_one_short's block 0; the -1 tail
}

void check_inputs(const Case& c) {
  validate(c);
  if (c.Hk <= 0 || c.Hq % c.Hk != 0) throw InputError("Hq", "Hq must be a multiple of Hk");
  const std::int64_t NB = c.NB();
  for (std::int64_t r = 0; r < c.R; ++r) {
    const std::int64_t L = c.seq_lens[r];
    if (cm::table_row(c.slot_ids[r], c.S, c.rows, L) >= 0 && (L > c.width || cm::num_blocks(L, c.cfg.block_size) > NB))
      throw InputError("seq_lens", "row " + std::to_string(r) + " length " + std::to_string(L) +
                                       " exceeds the table width " + std::to_string(c.width));
  }
}

Observed run_twin(const Case& c, bool packed, const RunOptions& options) {
  const Plan plan = plan_for(c, packed, options);
  check_inputs(c);

  Launch a;
  a.c = &c;
  a.plan = plan;
  a.bs = c.cfg.block_size;
  a.topk = c.cfg.topk;
  a.init = c.cfg.init_blocks;
  a.local = c.cfg.local_blocks;
  a.lse = c.cfg.score_type == ScoreType::lse;
  a.kcode = cm::launch_k_code(static_cast<int>(c.cfg.k_dtype), options.mutant);
  a.eb = cm::k_element_bytes(a.kcode);
  a.mutant = options.mutant;
  if (a.eb == 1)
    for (int code = 0; code < 256; ++code)
      a.fp8_lut[code] = cm::fp8_to_float(static_cast<std::uint8_t>(code), a.kcode, a.mutant);
  const double q_scale = IXO_MUTANT(a.mutant, mutants::q_scale_ignored) ? 1.0 : c.cfg.q_scale;
  a.multiplier = cm::logit_multiplier(static_cast<float>(c.effective_sm_scale() * q_scale),
                                      static_cast<float>(c.cfg.k_scale), a.mutant);
  a.NB = c.NB();

  Observed o;
  o.Hq = c.Hq;
  o.R = c.R;
  o.topk = a.topk;
  o.NB = a.NB;
  o.has_scores = true;
  float poison;
  std::memcpy(&poison, &options.score_poison_bits, sizeof poison);
  o.scores.assign(static_cast<std::size_t>(c.Hq * c.R * a.NB), poison);
  o.topk_idx.assign(static_cast<std::size_t>(c.Hq * c.R * a.topk), -1);
  a.scores = o.scores.data();

  const std::int64_t programs = plan.programs();
#pragma omp parallel
  {
    Scratch w;
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t prog = 0; prog < programs; ++prog) run_program(a, prog, w);
  }
  const std::int64_t pairs = c.Hq * c.R;
#pragma omp parallel
  {
    std::vector<std::uint64_t> keys;
#pragma omp for schedule(dynamic, 4)
    for (std::int64_t hr = 0; hr < pairs; ++hr)
      select_row(a, hr / c.R, hr % c.R, keys, o.topk_idx.data() + hr * a.topk);
  }
  return o;
}

class CpuTwin final : public Backend {
 public:
  explicit CpuTwin(bool packed) : packed_(packed) {}
  std::string name() const override { return packed_ ? "cpu-packed" : "cpu-rows"; }
  bool available(std::string* /*why*/) const override { return true; }
  Observed run(const Case& c, const RunOptions& options) override { return run_twin(c, packed_, options); }

 private:
  bool packed_;
};

}  // namespace

Plan plan_for(const Case& c, bool packed, const RunOptions& options) {
  Plan p;
  p.hk = c.Hk > 0 ? c.Hk : 1;
  p.gqa = static_cast<int>(c.Hq / p.hk);
  const int P = c.cfg.packed_queries;
  // Packed needs P > 1 and one tile per group (P * gqa <= 16); otherwise the per-row plan.
  // Shapes only: R need not be a multiple of P (trailing rows run per row), and which
  // groups share a slot id is decided by each program (common::program_tiles).
  const bool use_pack = packed && P > 1 && cm::pack_fits(P, p.gqa);
  p.pack = use_pack ? P : 1;
  p.groups = cm::packed_batch(c.R, p.pack);
  p.chunks = options.force_num_chunks > 0 ? options.force_num_chunks : cm::num_kv_chunks(p.groups, p.hk);
  return p;
}

std::int64_t k_tokens_loaded(const Case& c, const Plan& p) {
  // Mirrors run_tile's loading rule: blocks with a writing row, up to the tile length.
  std::int64_t total = 0;
  const int bs = c.cfg.block_size;
  for (std::int64_t x = 0; x < p.groups; ++x) {
    const cm::ProgramTiles pt = cm::program_tiles(c.slot_ids.data(), x, c.R, p.pack);
    for (int t = 0; t < pt.count; ++t) {
      const std::int64_t first = pt.first + static_cast<std::int64_t>(t) * pt.pack;
      const std::int64_t Lg = cm::group_length(c.seq_lens.data(), first, pt.pack);
      if (cm::table_row(c.slot_ids[first], c.S, c.rows, Lg) < 0) continue;
      std::int64_t need_blocks = 0;  // blocks b < max nb over writing rows
      for (int i = 0; i < pt.pack; ++i) {
        const std::int64_t r = first + i;
        const std::int64_t nb = cm::num_blocks(c.seq_lens[r], bs);
        if (cm::row_writes_scores(cm::table_row(c.slot_ids[r], c.S, c.rows, c.seq_lens[r]), nb, c.cfg.topk))
          need_blocks = std::max(need_blocks, nb);
      }
      for (std::int64_t b = 0; b < need_blocks; ++b) total += cm::block_tokens(b, Lg, bs);
    }
  }
  return total * p.hk;
}

}  // namespace cpu

std::unique_ptr<Backend> make_cpu_rows_backend() { return std::make_unique<cpu::CpuTwin>(false); }
std::unique_ptr<Backend> make_cpu_packed_backend() { return std::make_unique<cpu::CpuTwin>(true); }

}  // namespace ixo
