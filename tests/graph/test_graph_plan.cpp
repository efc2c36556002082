// The launch plan a CUDA graph captures (kernels/gpu/launch_plan.hpp: grid and chunk plan
// from graph-constant maximum shapes only) covers every (head, row, block) that any smaller
// batch replayed into the same buffers must write, exactly once. Host only (label graph).
//
// A replayed graph keeps the grid of its capture: R, Hq, Hk, NB, packed_queries and the
// chunk count are the maxima; the real batch is shorter (fewer real rows, the rest graph
// padding or inactive) and its seq_lens are anything up to the table width. R need not be a
// multiple of packed_queries, requests need not fill whole groups (groups mixing slot ids),
// padding and inactive rows sit alone, in whole groups and inside groups. The ownership map
// built here from the plan (each program's tiles, common::program_tiles, decided from the
// replay's slot ids as the kernels do) must give every written cell exactly one program.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gpu/launch_plan.hpp"

namespace ixo::test {
namespace {

namespace plan = ixo::gpu::plan;
using gpu::IndexArgs;

// The tiles of program x of grid g for the batch (slot ids, lens), each with its blocks
// [b0, b1); returns their number (at most common::kTileRows).
using TilesFn =
    std::function<int(const IndexArgs&, const plan::ScoreGrid&, const std::vector<std::int64_t>& slots,
                      const std::vector<std::int64_t>& lens, std::int64_t x, int kvh, plan::TileBlocks* out)>;

int real_tiles(const IndexArgs& a, const plan::ScoreGrid& g, const std::vector<std::int64_t>& slots,
               const std::vector<std::int64_t>& lens, std::int64_t x, int kvh, plan::TileBlocks* out) {
  return plan::program_tiles(a, g, slots.data(), lens.data(), x, kvh, out);
}

struct Batch {
  std::vector<std::int64_t> slots, lens;  // [R_max]
  std::int64_t real_rows = 0;             // R' <= R_max
};

// Empty when every cell the batch must write is owned by exactly one program of the grid
// and no other cell is owned; else the first few violations.
std::string check_coverage(const IndexArgs& a, const plan::ScoreGrid& g, const Batch& bt, const TilesFn& tiles,
                           std::int64_t* required = nullptr) {
  const std::int64_t R = a.R, Hq = a.Hq, NB = a.NB;
  const int gqa = static_cast<int>(a.Hq / a.Hk);
  std::vector<int> owners(static_cast<std::size_t>(Hq * R * NB), 0);
  std::ostringstream err;
  int reports = 0;
  for (std::int64_t y = 0; y < g.hk; ++y)
    for (std::int64_t x = 0; x < g.grid_x(); ++x) {
      plan::TileBlocks tb[common::kTileRows];
      const int n = tiles(a, g, bt.slots, bt.lens, x, static_cast<int>(y), tb);
      for (int t = 0; t < n; ++t)
        for (int d = 0; d < tb[t].pack; ++d) {
          const std::int64_t r = tb[t].first + d;
          if (r < 0 || r >= R) {
            if (reports++ < 5)
              err << "program (" << x << "," << y << ") tile " << t << " row " << r << " outside [0, R=" << R << ")\n";
            continue;
          }
          std::int64_t nb = 0;
          if (!plan::row_writes(a, bt.slots.data(), bt.lens.data(), r, &nb)) continue;
          for (int j = 0; j < gqa; ++j) {
            const std::int64_t h = y * gqa + j;
            for (std::int64_t b = tb[t].b0; b < tb[t].b1 && b < nb; ++b) {
              if (b < 0 || b >= NB) {
                if (reports++ < 5)
                  err << "program (" << x << "," << y << ") block " << b << " outside [0, NB=" << NB << ")\n";
                continue;
              }
              ++owners[static_cast<std::size_t>(common::score_index(h, r, b, R, NB))];
            }
          }
        }
    }
  for (std::int64_t h = 0; h < Hq; ++h)
    for (std::int64_t r = 0; r < R; ++r) {
      std::int64_t nb = 0;
      const bool writes = plan::row_writes(a, bt.slots.data(), bt.lens.data(), r, &nb);
      for (std::int64_t b = 0; b < NB; ++b) {
        const int want = writes && b < nb ? 1 : 0;
        if (required) *required += want;
        const int got = owners[static_cast<std::size_t>(common::score_index(h, r, b, R, NB))];
        if (got != want && reports++ < 5)
          err << "cell (h=" << h << ", r=" << r << ", b=" << b << "): " << got << " owners, want " << want
              << " (L=" << bt.lens[static_cast<std::size_t>(r)] << ", nb=" << nb
              << ", slot=" << bt.slots[static_cast<std::size_t>(r)] << ")\n";
      }
    }
  if (reports > 5) err << "... " << reports << " violations in all\n";
  return err.str();
}

std::string describe(const IndexArgs& a, const plan::ScoreGrid& g, const Batch& bt) {
  std::ostringstream o;
  o << "R=" << a.R << " R'=" << bt.real_rows << " Hq=" << a.Hq << " Hk=" << a.Hk << " P=" << a.packed_queries
    << " pack=" << g.pack << " bs=" << a.block_size << " topk=" << a.topk << " width=" << a.width << " NB=" << a.NB
    << " chunks=" << g.chunks << " (forced " << a.num_chunks << ") grid=(" << g.grid_x() << "," << g.hk << ")";
  return o.str();
}

std::int64_t pick(std::mt19937_64& g, std::int64_t lo, std::int64_t hi) {  // inclusive
  return std::uniform_int_distribution<std::int64_t>(lo, hi)(g);
}

// Graph-constant maximum shapes.
IndexArgs random_max_shapes(std::mt19937_64& g, bool force_chunks) {
  IndexArgs a;
  const int P = static_cast<int>(pick(g, 1, 5));
  a.packed_queries = P;
  a.Hk = std::vector<std::int64_t>{1, 2, 4}[static_cast<std::size_t>(pick(g, 0, 2))];
  a.Hq = a.Hk * std::vector<std::int64_t>{1, 2, 4, 8}[static_cast<std::size_t>(pick(g, 0, 3))];
  a.R = P * pick(g, 1, 24) + (pick(g, 0, 1) ? pick(g, 0, P - 1) : 0);  // often not a multiple of P
  a.block_size = std::vector<int>{16, 64, 128}[static_cast<std::size_t>(pick(g, 0, 2))];
  a.topk = static_cast<int>(pick(g, 1, 20));
  a.width = pick(g, 1, 80) * a.block_size + pick(g, -2, 2) + P;
  if (a.width < P + 1) a.width = P + 1;
  a.NB = common::ceil_div(a.width, a.block_size);
  a.rows = pick(g, 2, 40);
  a.S = a.rows * a.width + pick(g, 1, 1000);  // > rows: slot -1 aliases S-1, outside the table
  a.num_chunks = force_chunks ? static_cast<int>(pick(g, 1, 9)) : 0;
  // The K format picks the packed plan's wave (fp8: 396 slots, 3 CTAs an SM; bf16: 264, 2 an SM,
  // or score_chunks with IXO_BF16_PACKED_WAVE=0).
  a.k_code = pick(g, 0, 1) ? common::kE4m3fn : common::kBf16;
  return a;
}

// A length near the interesting boundaries (block edges, topk*bs) or anywhere in [0, max].
std::int64_t random_len(std::mt19937_64& g, const IndexArgs& a, std::int64_t max_len) {
  std::int64_t L;
  switch (pick(g, 0, 3)) {
    case 0:
      L = pick(g, 0, max_len);
      break;
    case 1:
      L = pick(g, 1, std::max<std::int64_t>(1, max_len / a.block_size)) * a.block_size + pick(g, -1, 1);
      break;
    case 2:
      L = static_cast<std::int64_t>(a.topk) * a.block_size + pick(g, -1, 1);
      break;
    default:
      L = max_len - pick(g, 0, 2);
      break;
  }
  return std::clamp<std::int64_t>(L, 0, max_len);
}

// A batch of R' <= R real rows followed by graph padding and inactive rows, filling the
// graph's R rows. Real requests have `ndt` verify rows sharing a slot (lengths p+1..p+ndt,
// sometimes a row of length 0 or free lengths); ndt is P most of the time, else 1..P+1, so
// requests straddle groups (mixed slot ids). After them come padding requests (table row
// 0, lengths 2..ndt+1), single padding rows and inactive rows (slot past the table, -1, or
// length 0), in runs that need not fill a group; a partial group ends R when P does not
// divide it.
Batch random_batch(std::mt19937_64& g, const IndexArgs& a) {
  const int P = a.packed_queries;
  const std::int64_t ndt = pick(g, 0, 2) ? P : pick(g, 1, P + 1);
  Batch bt;
  bt.slots.assign(static_cast<std::size_t>(a.R), 0);
  bt.lens.assign(static_cast<std::size_t>(a.R), 0);
  const std::int64_t real_reqs = pick(g, 0, a.R / ndt);
  bt.real_rows = real_reqs * ndt;
  const bool free_lengths = pick(g, 0, 3) == 0;
  std::int64_t r = 0;
  for (std::int64_t q = 0; q < real_reqs; ++q) {
    std::int64_t slot = pick(g, 1, a.rows - 1);
    if (pick(g, 0, 4) == 0) slot -= a.S;  // negative alias of the table row
    const std::int64_t prefix = random_len(g, a, std::max<std::int64_t>(0, a.width - ndt));
    for (std::int64_t j = 0; j < ndt; ++j, ++r) {
      bt.slots[static_cast<std::size_t>(r)] = slot;
      std::int64_t L = free_lengths ? random_len(g, a, a.width) : std::min(a.width, prefix + j + 1);
      if (pick(g, 0, 15) == 0) L = 0;
      bt.lens[static_cast<std::size_t>(r)] = L;
    }
  }
  while (r < a.R) {  // the rest: runs of padding or inactive rows
    const std::int64_t kind = pick(g, 0, 4);
    const std::int64_t run = std::min(a.R - r, kind == 4 ? ndt : pick(g, 1, P + 1));
    const std::int64_t slot = kind == 0 ? a.rows + pick(g, 0, 5) : kind == 1 ? -1 : 0;
    for (std::int64_t j = 0; j < run; ++j, ++r) {
      bt.slots[static_cast<std::size_t>(r)] = slot;
      bt.lens[static_cast<std::size_t>(r)] = kind == 3 ? 0 : std::min<std::int64_t>(a.width, j + 2);
    }
  }
  return bt;
}

// Runs `iters` random (max shapes, smaller batch) pairs through the checker; returns the
// first failure (empty when all pass). Several batches are replayed on each plan, as a
// captured graph would.
std::string run_random(std::uint64_t seed, int iters, bool packed, bool force_chunks, const TilesFn& tiles,
                       std::int64_t* required = nullptr) {
  std::mt19937_64 g(seed);
  for (int it = 0; it < iters; ++it) {
    const IndexArgs a = random_max_shapes(g, force_chunks);
    const plan::ScoreGrid grid = plan::score_grid(a, packed);
    for (int rep = 0; rep < 4; ++rep) {
      const Batch bt = random_batch(g, a);
      const std::string e = check_coverage(a, grid, bt, tiles, required);
      if (!e.empty())
        return "seed " + std::to_string(seed) + " iteration " + std::to_string(it) + " replay " + std::to_string(rep) +
               ": " + describe(a, grid, bt) + "\n" + e;
    }
  }
  return {};
}

TEST(GraphPlan, GridIsFromGraphConstantsOnly) {
  // The plan sees no lengths and no pointers: two batches of the same maxima share it, and
  // it is the documented grid (batch * chunks, Hk) with chunks from num_kv_chunks capped as plans.hpp's
  // score_chunks says (hand-worked values).
  IndexArgs a;
  a.R = 32;
  a.Hq = 8;
  a.Hk = 2;
  a.NB = 51;
  a.packed_queries = 4;
  const plan::ScoreGrid rows = plan::score_grid(a, false), packed = plan::score_grid(a, true);
  EXPECT_EQ(rows.pack, 1);
  EXPECT_EQ(packed.pack, 4);
  EXPECT_EQ(rows.chunks, 4);     // 64 programs: 256 / 64 = 4 chunks fill the grid (51 / 16 = 3)
  EXPECT_EQ(packed.chunks, 12);  // 16 programs: fill 16, capped at 51 / 4 = 12 blocks of 4
  EXPECT_EQ(rows.grid_x(), 32 * rows.chunks);
  EXPECT_EQ(packed.grid_x(), 8 * packed.chunks);
  EXPECT_EQ(rows.hk, 2);
  EXPECT_EQ(plan::topk_grid(a), 8 * 32);
  // A pack that does not fit one tile (P * gqa > 16): per-row plan.
  IndexArgs wide = a;
  wide.Hq = 2 * 8;  // gqa 8, P 4 -> 32 tile rows
  EXPECT_EQ(plan::score_grid(wide, true).pack, 1);
  // R % P != 0 still packs: 7 whole groups and 2 trailing rows, one program each.
  IndexArgs ragged = a;
  ragged.R = 30;
  const plan::ScoreGrid rg = plan::score_grid(ragged, true);
  EXPECT_EQ(rg.pack, 4);
  EXPECT_EQ(rg.batch, 7 + 2);
  EXPECT_EQ(rg.chunks, 12);  // 18 programs: fill 15, capped at 51 / 4 = 12
  EXPECT_EQ(rg.grid_x(), 9 * rg.chunks);
  // Forced chunk counts are taken as they are.
  IndexArgs forced = a;
  forced.num_chunks = 7;
  EXPECT_EQ(plan::score_grid(forced, true).chunks, 7);
}

TEST(GraphPlan, MaxShapePlanCoversSmallerBatchesPerRow) {
  std::int64_t required = 0;
  const std::string e = run_random(11, 1500, false, false, real_tiles, &required);
  EXPECT_TRUE(e.empty()) << e;
  EXPECT_GT(required, 1000000) << "the random batches wrote too few cells to mean anything";
}

TEST(GraphPlan, MaxShapePlanCoversSmallerBatchesPacked) {
  std::int64_t required = 0;
  // The batches reach every kind of program: packed groups, whole groups run per row
  // (mixed slot ids) and the trailing rows of a partial group.
  std::int64_t packed = 0, mixed = 0, trailing = 0;
  const TilesFn counting = [&](const IndexArgs& a, const plan::ScoreGrid& g, const std::vector<std::int64_t>& s,
                               const std::vector<std::int64_t>& l, std::int64_t x, int kvh, plan::TileBlocks* out) {
    const int n = real_tiles(a, g, s, l, x, kvh, out);
    if (g.pack > 1 && common::plan_program_chunk(g, x).chunk == 0) {
      const bool whole = common::plan_program_chunk(g, x).program < a.R / g.pack;
      packed += whole && n == 1;
      mixed += whole && n > 1;
      trailing += !whole;
    }
    return n;
  };
  const std::string e = run_random(12, 1500, true, false, counting, &required);
  EXPECT_TRUE(e.empty()) << e;
  EXPECT_GT(required, 1000000) << "the random batches wrote too few cells to mean anything";
  EXPECT_GT(packed, 1000);
  EXPECT_GT(mixed, 1000);
  EXPECT_GT(trailing, 1000);
}

TEST(GraphPlan, ForcedChunkCountsCoverSmallerBatches) {
  // Including more chunks than a row has blocks (empty chunks).
  std::string e = run_random(13, 600, false, true, real_tiles);
  EXPECT_TRUE(e.empty()) << e;
  e = run_random(14, 600, true, true, real_tiles);
  EXPECT_TRUE(e.empty()) << e;
}

// Longest writable row of a tile (0: none), as the kernels compute it.
std::int64_t tile_length(const IndexArgs& a, const plan::TileBlocks& t, const std::vector<std::int64_t>& s,
                         const std::vector<std::int64_t>& l) {
  std::int64_t Lg = 0, nb;
  for (int d = 0; d < t.pack; ++d) {
    const std::int64_t r = t.first + d;
    if (plan::row_writes(a, s.data(), l.data(), r, &nb)) Lg = std::max(Lg, l[static_cast<std::size_t>(r)]);
  }
  return Lg;
}

// The checker itself must fail on the plan bugs a captured graph would expose.
TEST(GraphPlan, CheckerCatchesBrokenPlans) {
  using Vec = std::vector<std::int64_t>;
  // Chunk size rounded down: the tail blocks of long rows have no owner.
  const TilesFn floor_chunks = [](const IndexArgs& a, const plan::ScoreGrid& g, const Vec& s, const Vec& l,
                                  std::int64_t x, int kvh, plan::TileBlocks* out) {
    const int n = real_tiles(a, g, s, l, x, kvh, out);
    for (int t = 0; t < n; ++t) {
      const std::int64_t nb = common::num_blocks(tile_length(a, out[t], s, l), a.block_size);
      const std::int64_t cs = nb / g.chunks, c = common::plan_program_chunk(g, x).chunk;
      out[t].b0 = std::min(nb, c * cs);
      out[t].b1 = std::min(nb, c * cs + cs);
    }
    return n;
  };
  EXPECT_FALSE(run_random(21, 300, true, false, floor_chunks).empty()) << "floor chunk size not caught";

  // Group length taken from the tile's first row instead of its longest writable row.
  const TilesFn first_row = [](const IndexArgs& a, const plan::ScoreGrid& g, const Vec& s, const Vec& l, std::int64_t x,
                               int kvh, plan::TileBlocks* out) {
    const int n = real_tiles(a, g, s, l, x, kvh, out);
    for (int t = 0; t < n; ++t) {
      out[t].b0 = out[t].b1 = 0;
      if (tile_length(a, out[t], s, l) == 0) continue;
      common::chunk_blocks(common::num_blocks(l[static_cast<std::size_t>(out[t].first)], a.block_size), g.chunks,
                           common::plan_program_chunk(g, x).chunk, &out[t].b0, &out[t].b1);
    }
    return n;
  };
  EXPECT_FALSE(run_random(22, 300, true, false, first_row).empty()) << "first-row group length not caught";

  // Block ranges baked in at capture: the lengths the graph was captured with (here: the
  // lengths halved) instead of the ones written before the replay.
  const TilesFn baked = [](const IndexArgs& a, const plan::ScoreGrid& g, const Vec& s, const Vec& l, std::int64_t x,
                           int kvh, plan::TileBlocks* out) {
    Vec captured(l);
    for (auto& v : captured) v /= 2;
    const int n = plan::program_tiles(a, g, s.data(), captured.data(), x, kvh, out);
    for (int t = 0; t < n; ++t)
      if (tile_length(a, out[t], s, l) == 0) out[t].b0 = out[t].b1 = 0;
    return n;
  };
  EXPECT_FALSE(run_random(23, 300, false, false, baked).empty()) << "capture-time block ranges not caught";

  // Overlapping chunks: a block owned by two programs.
  const TilesFn overlap = [](const IndexArgs& a, const plan::ScoreGrid& g, const Vec& s, const Vec& l, std::int64_t x,
                             int kvh, plan::TileBlocks* out) {
    const int n = real_tiles(a, g, s, l, x, kvh, out);
    for (int t = 0; t < n; ++t)
      if (out[t].b0 > 0 && out[t].b1 > out[t].b0) --out[t].b0;
    return n;
  };
  EXPECT_FALSE(run_random(24, 300, false, false, overlap).empty()) << "overlapping chunks not caught";

  // A grid sized for fewer groups than the maxima (a plan from the real batch, not R_max):
  // only the first half of the row axis gets programs.
  const TilesFn short_grid = [](const IndexArgs& a, const plan::ScoreGrid& g, const Vec& s, const Vec& l,
                                std::int64_t x, int kvh, plan::TileBlocks* out) {
    if (common::plan_program_chunk(g, x).program >= (g.batch + 1) / 2) return 0;
    return real_tiles(a, g, s, l, x, kvh, out);
  };
  EXPECT_FALSE(run_random(25, 300, true, false, short_grid).empty()) << "short grid not caught";

  // The trailing rows of a partial group dropped (the old plan's row axis R / P).
  const TilesFn no_trailing = [](const IndexArgs& a, const plan::ScoreGrid& g, const Vec& s, const Vec& l,
                                 std::int64_t x, int kvh, plan::TileBlocks* out) {
    if (g.pack > 1 && common::plan_program_chunk(g, x).program >= a.R / g.pack) return 0;
    return real_tiles(a, g, s, l, x, kvh, out);
  };
  EXPECT_FALSE(run_random(26, 300, true, false, no_trailing).empty()) << "dropped trailing rows not caught";

  // The partial group run as one tile of P rows (rows past R; the other trailing programs
  // then score its rows again).
  const TilesFn padded_partial = [](const IndexArgs& a, const plan::ScoreGrid& g, const Vec& s, const Vec& l,
                                    std::int64_t x, int kvh, plan::TileBlocks* out) {
    const int n = real_tiles(a, g, s, l, x, kvh, out);
    if (g.pack > 1 && common::plan_program_chunk(g, x).program == a.R / g.pack && a.R % g.pack != 0) {
      out[0].first = (a.R / g.pack) * g.pack;
      out[0].pack = g.pack;
    }
    return n;
  };
  EXPECT_FALSE(run_random(27, 300, true, false, padded_partial).empty())
      << "partial group run as a whole group not caught";
}

}  // namespace
}  // namespace ixo::test
