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

#include "case_config.hpp"
#include "cpu/cpu_backends.hpp"
#include "indexer_common.hpp"
#include "plans.hpp"
#include "ixo/error.hpp"

namespace ixo {
namespace cpu {
namespace {

namespace cm = ixo::common;

// Everything a program reads, fixed before the launch (the kernel arguments): the step's
// common::IndexConfig (ixo::index_config; k_code is the launch's, see make_launch) and the plan.
struct Launch : cm::IndexConfig {
  const Case* c = nullptr;
  Plan plan;
  int score_topk = 0;           // rows with nb <= score_topk are not scored (topk; 0: score every active row)
  int eb = 2;                   // bytes per K element (nvfp4: 1, two codes a byte; see krow_bytes)
  std::int64_t krow_bytes = 0;  // bytes of one K row
  float multiplier = 0.f;       // logit multiplier (log2 units)
  int mutant = 0;               // injected bug id (0 = none); reaches the program for IXO_MUTANT
  float* scores = nullptr;
  // fp8 K: the 256 codes decoded once by common::fp8_to_float (the same values, as a
  // GPU kernel's decode table would hold them). Unused for bf16.
  float fp8_lut[256] = {};
};

// One K element of a row, decoded exactly (common::k_element, or its fp8 table; nvfp4:
// common::nvfp4_element with the row's scales).
inline float load_k(const Launch& a, const std::uint8_t* row, const std::uint8_t* scales, int e) {
  if (a.k_code == cm::kNvfp4) return cm::nvfp4_element(row, e, scales);
  return a.eb == 1 ? a.fp8_lut[row[e]] : cm::k_element(row, e, a.k_code, a.mutant);
}

// Per-thread scratch, sized once.
struct Scratch {
  std::vector<cm::RowPlan> tile;
  std::vector<float> q;       // [tile rows, D] widened q
  std::vector<float> k;       // [D] widened K token
  std::vector<float> logits;  // [tile rows, bs]
};

cm::RowInputs row_inputs(const Case& c, int topk) {
  return cm::RowInputs{c.slot_ids.data(), c.seq_lens.data(), c.S, c.rows, c.cfg.block_size, topk};
}
cm::RowInputs row_inputs(const Case& c) { return row_inputs(c, c.cfg.topk); }

// One tile of row-axis program `program`: rows [first, first + pack) of K head kvh, blocks of KV
// chunk `chunk` of the tile's own length (common::plan_chunk_blocks).
void run_tile(const Launch& a, std::int64_t program, std::int64_t first, int pack, int chunk, int kvh, Scratch& w) {
  const Case& c = *a.c;
  const Plan& p = a.plan;
  const int D = static_cast<int>(c.D);

  const cm::RowInputs in = row_inputs(c, a.score_topk);
  const cm::GroupPlan g = cm::group_plan(in, first, pack, a.mutant);
  if (g.Lg <= 0 || g.sid < 0) return;  // no row of the tile writes: reads no K
  std::int64_t b0 = 0, b1 = 0;
  cm::plan_chunk_blocks(p, g.nbg, program, kvh, chunk, &b0, &b1, a.mutant);
  if (b0 >= b1) return;  // empty chunk

  // Tile rows.
  const int tile_n = pack * p.gqa;
  const cm::TileShape shape{first, pack, p.gqa, static_cast<int>(p.hk), kvh};
  w.tile.resize(tile_n);
  for (int i = 0; i < tile_n; ++i) w.tile[i] = cm::row_plan(in, shape, i, g, a.mutant);

  w.q.resize(static_cast<std::size_t>(tile_n) * D);
  for (int i = 0; i < tile_n; ++i) {
    if (!w.tile[i].f.writes) continue;
    const std::uint16_t* qr = c.q.data() + (w.tile[i].row * c.Hq + w.tile[i].head) * c.D;
    for (int d = 0; d < D; ++d) w.q[static_cast<std::size_t>(i) * D + d] = cm::q_element(qr[d], a.q_code);
  }
  w.k.resize(D);
  w.logits.resize(static_cast<std::size_t>(tile_n) * a.block_size);

  const std::uint8_t* k_cache = c.k_cache.data();
  const std::int64_t krow_bytes = a.krow_bytes;
  const std::int64_t srow_bytes = c.D / cm::kNvfp4Block;   // nvfp4 scales a K row
  const int kload = cm::tile_k_head(kvh, pack, a.mutant);  // == kvh
  for (std::int64_t b = b0; b < b1; ++b) {
    bool need = false;
    for (int i = 0; i < tile_n; ++i) need = need || cm::row_writes_block(w.tile[i], b, a.NB);
    if (!need) continue;
    // K tokens of this block up to the group's length, each loaded once for the tile.
    const int nload = cm::block_tokens(b, g.Lg, a.block_size);
    for (int tt = 0; tt < nload; ++tt) {
      const std::int64_t t = b * a.block_size + tt;
      const std::int64_t ks = cm::token_slot(c.req_to_token.data(), c.width, g.sid, t, c.S, a.mutant);
      const std::uint8_t* krow = k_cache + (ks * c.Hk + kload) * krow_bytes;
      const std::uint8_t* srow =
          a.k_code == cm::kNvfp4 ? c.k_scales.data() + (ks * c.Hk + kload) * srow_bytes : nullptr;
      for (int d = 0; d < D; ++d) w.k[d] = load_k(a, krow, srow, d);
      for (int i = 0; i < tile_n; ++i) {
        const cm::RowPlan& s = w.tile[i];
        if (!s.f.writes || tt >= cm::block_tokens(b, s.L_mask, a.block_size)) continue;  // masked lane
        const float dot = cm::dot_fp32(w.q.data() + static_cast<std::size_t>(i) * D, w.k.data(), D);
        w.logits[static_cast<std::size_t>(i) * a.block_size + tt] = cm::logit(dot, a.multiplier);
      }
    }
    // Each row reduces over its own visible tokens and forces with its own nb.
    for (int i = 0; i < tile_n; ++i) {
      const cm::RowPlan& s = w.tile[i];
      if (!cm::row_writes_block(s, b, a.NB)) continue;
      float* lg = w.logits.data() + static_cast<std::size_t>(i) * a.block_size;
      int n = cm::block_tokens(b, s.L_mask, a.block_size);
      if (IXO_MUTANT(a.mutant, mutants::partial_block_zero_mask)) {  // lanes [n, bs) masked with 0, not dropped
        for (int tt = n; tt < a.block_size; ++tt) lg[tt] = cm::masked_logit(false, lg[tt], a.mutant);
        n = a.block_size;
      }
      const float score = cm::block_score(lg, n, 1, a.score_lse, a.mutant);
      const float forced = cm::forced_score(score, b, s.nb_force, a.init_blocks, a.local_blocks, a.mutant);
      a.scores[cm::score_index(s.store_head, s.store_row, b, c.R, a.NB)] = forced;
      if (cm::stray_column(s.f.nb, b, a.NB, a.mutant))
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
  const std::int64_t x = gc / p.chunks;
  const cm::ProgramTiles pt = cm::program_tiles(c.slot_ids.data(), x, c.R, p.pack, a.mutant);
  for (int t = 0; t < pt.count; ++t)
    run_tile(a, x, pt.first + static_cast<std::int64_t>(t) * pt.pack, pt.pack, chunk, kvh, w);
}

// Top-k of one (head, row): one program per pair, as the GPU's one CTA per pair.
void select_row(const Launch& a, std::int64_t h, std::int64_t r, std::vector<std::uint64_t>& keys, std::int32_t* out) {
  const Case& c = *a.c;
  const cm::TopkPlan t = cm::topk_plan(row_inputs(c), r, a.NB, a.mutant);
  if (t.shortcut) {  // trivial rows, inactive rows included (nb = 0): scores are not read
    for (int i = 0; i < a.topk; ++i) out[i] = cm::topk_tail_id(t, i, a.mutant);
    return;
  }
  const std::int64_t n = t.n;
  const int kept = t.kept;
  // topk_scratch_stale: the per-thread key buffer only grows, and the whole buffer is ranked:
  // keys left by a longer row of the same thread compete (batch-dependent state).
  if (!IXO_MUTANT(a.mutant, mutants::topk_scratch_stale) || keys.size() < static_cast<std::size_t>(n)) keys.resize(n);
  const float* row = a.scores + cm::score_index(h, r, 0, c.R, a.NB);
  for (std::int64_t b = 0; b < n; ++b) keys[b] = cm::topk_key(row[b], static_cast<std::int32_t>(b), a.mutant);
  if (IXO_MUTANT(a.mutant, mutants::topk1_argmax_last) && kept == 1) {  // argmax with >=: the last of tied maxima
    std::int64_t best = 0;
    for (std::int64_t b = 1; b < n; ++b) best = (keys[b] >> 32) >= (keys[best] >> 32) ? b : best;
    keys[0] = keys[best];
  } else if (kept > 0) {
    if (IXO_MUTANT(a.mutant, mutants::topk_candidates_capped)) {
      // A candidate buffer of 4096 ids, filled in id order with every block scoring at least the
      // k-th score: when more blocks than that tie with the k-th, later (better) blocks are lost.
      std::vector<std::uint64_t> sorted(keys.begin(), keys.begin() + n);
      std::nth_element(sorted.begin(), sorted.begin() + (kept - 1), sorted.end(), std::greater<>());
      const std::uint64_t thr = sorted[kept - 1] >> 32;
      const std::size_t cap = std::max<std::size_t>(4096, static_cast<std::size_t>(kept));
      std::size_t m = 0;
      for (std::int64_t b = 0; b < n && m < cap; ++b)
        if ((keys[b] >> 32) >= thr) keys[m++] = keys[b];
      keys.resize(m);
    }
    std::nth_element(keys.begin(), keys.begin() + (kept - 1), keys.end(), std::greater<>());
  }
  for (int i = 0; i < kept; ++i) out[i] = cm::topk_key_id(keys[i], a.mutant);
  if (IXO_MUTANT(a.mutant, mutants::ids_unsorted))
    std::sort(out, out + kept, std::greater<>());  // descending instead of ascending
  else
    std::sort(out, out + kept);
  for (int i = kept; i < a.topk; ++i) out[i] = cm::topk_tail_id(t, i, a.mutant);  // the -1 tail
}

// The launch arguments and a poisoned output of the twin's scorer.
Launch make_launch(const Case& c, const Plan& plan, const RunOptions& options, bool natural_units, Observed& o) {
  Launch a;
  const double q_scale = IXO_MUTANT(options.mutant, mutants::q_scale_ignored) ? 1.0 : c.cfg.q_scale;
  static_cast<cm::IndexConfig&>(a) = index_config(c, q_scale);
  a.k_code = cm::launch_k_code(a.k_code, options.mutant);
  a.c = &c;
  a.plan = plan;
  a.score_topk = a.topk;
  a.eb = cm::k_element_bytes(a.k_code);
  a.krow_bytes = cm::k_row_bytes(a.k_code, c.D);
  a.mutant = options.mutant;
  if (a.eb == 1 && a.k_code != cm::kNvfp4)
    for (int code = 0; code < 256; ++code)
      a.fp8_lut[code] = cm::fp8_to_float(static_cast<std::uint8_t>(code), a.k_code, a.mutant);
  a.multiplier = natural_units ? cm::natural_logit_multiplier(a.sm_q_scale, a.k_scale)
                               : cm::logit_multiplier(a.sm_q_scale, a.k_scale, a.mutant);

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
  return a;
}

void score_all(const Launch& a) {
  const std::int64_t programs = a.plan.programs();
#pragma omp parallel
  {
    Scratch w;
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t prog = 0; prog < programs; ++prog) run_program(a, prog, w);
  }
}

Observed run_twin(const Case& c, bool packed, const RunOptions& options) {
  const Plan plan = plan_for(c, packed, options);
  validate(c);  // also Hq % Hk == 0 and every L <= width (so nb <= NB)
  Observed o;
  const Launch a = make_launch(c, plan, options, false, o);
  score_all(a);
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

Observed score_rows(const Case& c, const RunOptions& options, const Scoring& how) {
  const Plan plan = plan_for(c, false, options);
  validate(c);
  Observed o;
  Launch a = make_launch(c, plan, options, how.natural_units, o);
  if (how.every_row) a.score_topk = 0;
  score_all(a);
  return o;
}

Plan plan_for(const Case& c, bool packed, const RunOptions& options) {
  // Shapes only: R need not be a multiple of P (trailing rows run per row), and which groups
  // share a slot id is decided by each program (common::program_tiles).
  const cm::IndexConfig k = index_config(c);
  Plan p = cm::native_plan(k, packed, options.force_num_chunks);
  // packed_trailing_rows_dropped: the row axis sized R / P, the trailing R % P rows never scored.
  if (IXO_MUTANT(options.mutant, mutants::packed_trailing_rows_dropped) && p.pack > 1) {
    p.batch = c.R / p.pack;
    p.chunks = cm::native_chunks(k, p.pack, p.batch, p.hk, options.force_num_chunks);
  }
  return p;
}

std::int64_t k_tokens_loaded(const Case& c, const Plan& p) {
  // run_tile's loading rule: every token of the tile's group length Lg (the longest writing
  // row) once; a tile without a writing row loads nothing.
  std::int64_t total = 0;
  const cm::RowInputs in = row_inputs(c);
  for (std::int64_t x = 0; x < p.batch; ++x) {
    const cm::ProgramTiles pt = cm::program_tiles(c.slot_ids.data(), x, c.R, p.pack);
    for (int t = 0; t < pt.count; ++t)
      total += cm::group_plan(in, pt.first + static_cast<std::int64_t>(t) * pt.pack, pt.pack).Lg;
  }
  return total * p.hk;
}

}  // namespace cpu

std::unique_ptr<Backend> make_cpu_rows_backend() { return std::make_unique<cpu::CpuTwin>(false); }
std::unique_ptr<Backend> make_cpu_packed_backend() { return std::make_unique<cpu::CpuTwin>(true); }

}  // namespace ixo
