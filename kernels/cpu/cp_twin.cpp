// The CPU twin of the context-parallel (CP) indexer ("cpu-cp"): WORLD = Hq ranks simulated
// in one process, in the GPU kernels' structure:
//   1. all-gather q: rank r holds q[:, r, :]; the gathered buffer is [WORLD (head), R, D];
//   2. shard score: programs (rank, row-axis index x, chunk of shard cells); x is a whole
//      group of `pack` rows or a trailing row (common::program_rows). A whole group sharing
//      one slot id is one tile of pack x WORLD rows (draft row i / WORLD, head i % WORLD) that
//      loads each K token of a shard block once for its longest row; any other group runs
//      its rows one after the other (common::program_tiles). Every row is masked and forced
//      with its own length; cells are ordered values (cp_common.hpp);
//   3. candidates: per (rank, head, row) the top-topk keys of the shard;
//   4. all-gather the keys; 5. merge: rank r takes its own head's WORLD x topk keys, keeps
//      the top topk, writes their ids ascending, -1 padded.
// Block scores use exactly the arithmetic of cpu-rows (common::dot_fp32, block_score,
// forced_score), so the ids equal cpu-rows' bit for bit.
#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "case_config.hpp"
#include "cp_common.hpp"
#include "cpu/cp_twin.hpp"
#include "indexer_common.hpp"
#include "plans.hpp"
#include "ixo/error.hpp"

namespace ixo {
namespace cp {
namespace {

namespace cm = ixo::common;
namespace cc = ixo::common::cp;

// The step's common::IndexConfig (ixo::index_config) and the CP plan.
struct Launch : cm::IndexConfig {
  const Case* c = nullptr;
  Plan plan;
  int eb = 2;
  float multiplier = 0.f;
  int mutant = 0;
  const float* qg = nullptr;       // gathered q, widened: [WORLD, R, D]
  std::uint32_t* cells = nullptr;  // [WORLD (rank), WORLD (head), R, LOCAL]
};

struct Scratch {
  std::vector<cm::RowPlan> tile;  // tile row i: (row, head) and the row's facts
  std::vector<float> k;           // [D]
  std::vector<float> logits;      // [tile rows, bs]
};

// One tile: rows [first, first + pack) of rank `rank`, shard cells [l0, l1).
void run_tile(const Launch& a, std::int64_t first, int pack, int rank, std::int64_t l0, std::int64_t l1, Scratch& w) {
  const Case& c = *a.c;
  const Plan& p = a.plan;
  const int W = p.world;
  const int D = static_cast<int>(c.D);
  const cm::RowInputs in = cm::row_inputs(a, c.slot_ids.data(), c.seq_lens.data());
  const cm::GroupPlan gp = cm::group_plan(in, first, pack, a.mutant);
  const int n = pack * W;
  // Tile row i: (row first + i / WORLD, head i % WORLD): the native tile of gqa = WORLD, one K head.
  const cm::TileShape shape{first, pack, W, 1, 0};
  w.tile.resize(n);
  for (int i = 0; i < n; ++i) w.tile[i] = cm::row_plan(in, shape, i, gp, a.mutant);
  std::uint32_t* rank_cells = a.cells + static_cast<std::int64_t>(rank) * W * c.R * p.LOCAL;
  w.k.resize(D);
  w.logits.resize(static_cast<std::size_t>(n) * a.block_size);
  const std::uint8_t* k_cache = c.k_cache.data();
  const std::int64_t krow_bytes = c.D * a.eb;

  for (std::int64_t l = l0; l < l1; ++l) {
    const std::int64_t b = cc::scored_block(l, rank, W, p.LOCAL, a.mutant);
    bool any = false;
    for (int i = 0; i < n; ++i) {
      const cm::RowPlan& m = w.tile[i];
      if (cc::cell_scored(m.f, gp, b, a.NB, a.mutant)) {
        any = true;
      } else {
        rank_cells[cm::score_index(m.head, m.row, l, c.R, p.LOCAL)] = cc::cell_default(m.f, gp, b, a.NB, a.mutant);
      }
    }
    if (!any) continue;
    // K tokens of block b up to the group's length, each loaded once for the whole tile.
    const int nload = cm::block_tokens(b, gp.Lg, a.block_size);
    for (int tt = 0; tt < nload; ++tt) {
      const std::int64_t t = b * a.block_size + tt;
      const std::int64_t ks = cm::token_slot(c.req_to_token.data(), c.width, gp.sid, t, c.S);
      const std::uint8_t* krow = k_cache + ks * krow_bytes;  // Hk == 1
      for (int d = 0; d < D; ++d) w.k[d] = cm::k_element(krow, d, a.k_code);
      for (int i = 0; i < n; ++i) {
        const cm::RowPlan& m = w.tile[i];
        if (!cc::cell_scored(m.f, gp, b, a.NB, a.mutant) || tt >= cm::block_tokens(b, m.f.L, a.block_size)) continue;
        const float* q = a.qg + (static_cast<std::int64_t>(m.head) * c.R + m.row) * D;
        w.logits[static_cast<std::size_t>(i) * a.block_size + tt] =
            cm::logit(cm::dot_fp32(q, w.k.data(), D), a.multiplier);
      }
    }
    for (int i = 0; i < n; ++i) {
      const cm::RowPlan& m = w.tile[i];
      if (!cc::cell_scored(m.f, gp, b, a.NB, a.mutant)) continue;
      const int own = cm::block_tokens(b, m.f.L, a.block_size);
      const int cnt = own < nload ? own : nload;
      const float score =
          cm::block_score(w.logits.data() + static_cast<std::size_t>(i) * a.block_size, cnt, 1, a.score_lse);
      rank_cells[cm::score_index(m.head, m.row, l, c.R, p.LOCAL)] =
          cc::cell_value(score, m.f, gp, b, a.init_blocks, a.local_blocks, a.mutant);
    }
  }
}

// Program (rank, x, chunk): one packed tile, or the rows of x one after the other.
void run_program(const Launch& a, std::int64_t program, Scratch& w) {
  const Case& c = *a.c;
  const Plan& p = a.plan;
  const int chunk = static_cast<int>(program % p.chunks);
  const std::int64_t x = (program / p.chunks) % p.groups;
  const int rank = static_cast<int>(program / (static_cast<std::int64_t>(p.chunks) * p.groups));
  std::int64_t l0 = 0, l1 = 0;
  cm::chunk_blocks(p.LOCAL, p.chunks, chunk, &l0, &l1);  // shard cells of the chunk
  if (l0 >= l1) return;
  const cm::ProgramTiles pt = cm::program_tiles(c.slot_ids.data(), x, c.R, p.pack);
  for (int t = 0; t < pt.count; ++t)
    run_tile(a, pt.first + static_cast<std::int64_t>(t) * pt.pack, pt.pack, rank, l0, l1, w);
}

// Top candidates of one (rank, head, row) shard: keys in rank order (largest first) into
// out[0, topk); slots past the kept count are 0.
void shard_candidates(const Launch& a, int rank, std::int64_t head, std::int64_t r, std::vector<std::uint64_t>& keys,
                      std::uint64_t* out) {
  const Plan& p = a.plan;
  const std::uint32_t* cell = a.cells + static_cast<std::int64_t>(rank) * p.world * a.c->R * p.LOCAL +
                              cm::score_index(head, r, 0, a.c->R, p.LOCAL);
  keys.resize(p.LOCAL);
  for (std::int64_t l = 0; l < p.LOCAL; ++l) keys[l] = cc::cand_key(cell[l], cc::shard_block(l, rank, p.world));
  const std::int64_t kept = std::min<std::int64_t>(p.candidates, p.LOCAL);
  std::partial_sort(keys.begin(), keys.begin() + kept, keys.end(), std::greater<>());
  for (int k = 0; k < a.topk; ++k) out[k] = k < kept ? keys[k] : 0;
}

// Merge of rank `rank`'s head over the gathered candidates [WORLD (src), WORLD (head), R, topk].
void merge(const Launch& a, const std::vector<std::uint64_t>& gathered, int head, std::int64_t r,
           std::vector<std::uint64_t>& keys, std::int32_t* out) {
  const int W = a.plan.world;
  keys.clear();
  for (int s = 0; s < W; ++s)
    for (int k = 0; k < a.topk; ++k) {
      const std::uint64_t key = gathered[cc::cand_index(s, head, r, k, W, a.c->R, a.topk)];
      if (key != 0) keys.push_back(key);
    }
  const std::size_t take = std::min<std::size_t>(a.topk, keys.size());
  std::partial_sort(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(take), keys.end(), std::greater<>());
  for (std::size_t i = 0; i < take; ++i) out[i] = cc::key_block(keys[i]);
  std::sort(out, out + take);
  for (int i = static_cast<int>(take); i < a.topk; ++i) out[i] = -1;
}

void check_inputs(const Case& c) {
  validate(c);  // every L <= width
  std::string why;
  if (!supported(c, &why)) throw InputError("case", "cpu-cp does not support this case: " + why);
}

Observed run_cp(const Case& c, bool allow_pack, const RunOptions& options) {
  check_inputs(c);
  Launch a;
  static_cast<cm::IndexConfig&>(a) = index_config(c);
  a.c = &c;
  a.plan = plan_for(c, allow_pack, options);
  a.eb = cm::k_element_bytes(a.k_code);
  a.multiplier = cm::logit_multiplier(a.sm_q_scale, a.k_scale);
  a.mutant = options.mutant;
  const int W = a.plan.world;
  const std::int64_t R = c.R, D = c.D, LOCAL = a.plan.LOCAL;

  // 1. All-gather q: rank h contributes its head's rows [R, D]; gathered = [WORLD, R, D].
  std::vector<float> qg(static_cast<std::size_t>(W * R * D));
  for (int h = 0; h < W; ++h)
    for (std::int64_t r = 0; r < R; ++r)
      for (std::int64_t d = 0; d < D; ++d) qg[(h * R + r) * D + d] = cm::bf16_to_float(c.q[(r * c.Hq + h) * D + d]);
  a.qg = qg.data();

  // 2. Shard scores of every rank.
  std::vector<std::uint32_t> cells(static_cast<std::size_t>(W) * W * R * LOCAL, 0xFFFFFFFFu);
  a.cells = cells.data();
  const std::int64_t programs = static_cast<std::int64_t>(W) * a.plan.groups * a.plan.chunks;
#pragma omp parallel
  {
    Scratch w;
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t prog = 0; prog < programs; ++prog) run_program(a, prog, w);
  }

  // 3. Candidates, written straight into the gathered layout (4. the simulated all-gather).
  std::vector<std::uint64_t> gathered(static_cast<std::size_t>(W) * W * R * a.topk, 0);
  const std::int64_t shards = static_cast<std::int64_t>(W) * W * R;
#pragma omp parallel
  {
    std::vector<std::uint64_t> keys;
#pragma omp for schedule(dynamic, 4)
    for (std::int64_t i = 0; i < shards; ++i) {
      const int rank = static_cast<int>(i / (W * R));
      const std::int64_t head = (i / R) % W, r = i % R;
      shard_candidates(a, rank, head, r, keys, gathered.data() + cc::cand_index(rank, head, r, 0, W, R, a.topk));
    }
  }

  // 5. Merge: rank h owns head h.
  Observed o;
  o.Hq = c.Hq;
  o.R = R;
  o.topk = a.topk;
  o.NB = a.NB;
  o.has_scores = false;
  o.topk_idx.assign(static_cast<std::size_t>(W * R * a.topk), -1);
#pragma omp parallel
  {
    std::vector<std::uint64_t> keys;
#pragma omp for schedule(dynamic, 4)
    for (std::int64_t hr = 0; hr < W * R; ++hr)
      merge(a, gathered, static_cast<int>(hr / R), hr % R, keys, o.topk_idx.data() + hr * a.topk);
  }
  return o;
}

class CpuCp final : public Backend {
 public:
  explicit CpuCp(bool allow_pack) : allow_pack_(allow_pack) {}
  std::string name() const override { return allow_pack_ ? "cpu-cp" : "cpu-cp-rows"; }
  bool available(std::string* /*why*/) const override { return true; }
  bool supports(const Case& c, std::string* why) const override { return supported(c, why); }
  Observed run(const Case& c, const RunOptions& options) override { return run_cp(c, allow_pack_, options); }

 private:
  bool allow_pack_;
};

}  // namespace
}  // namespace cp

std::unique_ptr<Backend> make_cpu_cp_backend(bool allow_pack) { return std::make_unique<cp::CpuCp>(allow_pack); }

}  // namespace ixo
