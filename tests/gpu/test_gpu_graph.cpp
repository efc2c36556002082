// CUDA-graph replay of the whole index step (poison fill + score + top-k), on the per-row
// (cuda-rows) and the packed (cuda-packed) launch paths, bf16 and fp8 K (the K dtype and the
// config are captured statically: one capture each).
//
// The graph is captured once at maximum shapes (R, Hq, Hk, S, table rows x width, NB). Each
// replay first rewrites a different set of inputs *in place* (cudaMemcpy into the captured
// device buffers): seq_lens (shrink and grow across block boundaries, rows made trivial),
// the slot table + slot ids + token slots (permuted, gapped, negative aliases), the K
// contents, groups made to mix slot ids (a request boundary inside a group, padding next to
// a request: the packed kernel must run them per row, decided on the device -- the graph
// is not recaptured), padding and inactive rows, and finally a relabelling of slots that
// must not change the answer. The "ragged" captures have R = 35 with packed_queries 4: the
// last 3 rows are a partial group (padding, then real rows of a request after the mixing
// step), run per row by the packed graph. After every replay:
//   - the outputs equal an eager launch of the same inputs bit for bit (ids and every score
//     cell, poison included) and the cuda backend run on a fresh allocation;
//   - they pass ixo::judge against ixo::oracle for the host Case mirroring the device inputs
//     (poison tier on: the graph's own fill node must re-poison the score buffer);
//   - they differ from the previous replay (a replay that does nothing, or reads stale
//     inputs, fails), except after the relabelling, where they must be identical;
//   - the output buffers are clobbered before each replay, so stale outputs cannot pass.
// The captured graph holds exactly three kernel nodes (no memcpy/memset/host nodes), their
// grids are the launch plan of kernels/gpu/launch_plan.hpp for the maximum shapes, and their
// parameters reference exactly the buffers the replays rewrite.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/index_args.hpp"
#include "gpu/indexer_launch.hpp"
#include "gpu/launch_plan.hpp"
#include "gpu_test_util.hpp"
#include "graph_rig.hpp"
#include "ixo/transform.hpp"
#include "ixo_test/support.hpp"

namespace ixo::test {
namespace {

struct Step {
  std::string name;
  Case c;
  unsigned writes = 0;
  bool same_answer = false;  // a relabelling: outputs must equal the previous replay's
};

struct GraphParam {
  std::string name;
  bool packed;
  KDtype k_dtype;
  ScoreType score;
  bool ragged = false;  // R = 8 groups of 4 + 3 trailing rows (a partial group)
};
void PrintTo(const GraphParam& p, std::ostream* os) { *os << p.name; }

GenSpec base_spec(const GraphParam& gp) {
  GenSpec s = GenSpec{}
                  .rows(6, 4)
                  .lengths({128 * 40 - 2, 128 * 17 + 5, 3000, 3200, 700, 128 * 33 + 1})
                  .heads(4, 2, 128)
                  .blocks(128, 16, 1, 2)
                  .score(gp.score)
                  .k(gp.k_dtype, gp.k_dtype == KDtype::bf16 ? 1.0 : 1.5);
  s.extra_width = 128 * 10;  // room for the lengths to grow past the generated ones
  return s;
}

void set_group(Case& c, std::int64_t g, std::int64_t slot, std::int64_t prefix) {
  const std::int64_t P = c.cfg.packed_queries;
  for (std::int64_t j = 0; j < P; ++j) {
    c.slot_ids[static_cast<std::size_t>(g * P + j)] = slot;
    c.seq_lens[static_cast<std::size_t>(g * P + j)] = prefix + j + 1;
  }
}
std::int64_t group_slot(const Case& c, std::int64_t g) {
  return c.slot_ids[static_cast<std::size_t>(g * c.cfg.packed_queries)];
}

// One row appended (slot id, length; q copied from row 0).
void push_row(Case& c, std::int64_t slot, std::int64_t L) {
  c.slot_ids.push_back(slot);
  c.seq_lens.push_back(L);
  const std::vector<std::uint16_t> q0(c.q.begin(), c.q.begin() + c.Hq * c.D);
  c.q.insert(c.q.end(), q0.begin(), q0.end());
  ++c.R;
}

// The host cases of the replays, all at the same maximum shapes. Groups (P = 4 rows each):
// 0..5 real requests, 6 graph padding, 7 inactive (ixo::append_rows); ragged: rows 32..34
// (a partial group) padding, padding, inactive.
std::vector<Step> make_steps(const GraphParam& gp) {
  const GenSpec spec = base_spec(gp);
  std::vector<Step> steps;
  Case c0 = append_rows(generate(spec, 4242), 1, 1);
  if (gp.ragged) {
    push_row(c0, 0, 2);
    push_row(c0, 0, 3);
    push_row(c0, c0.rows + 5, 4);
  }
  steps.push_back({"initial inputs", c0, kQ | kK | kTable | kSlots | kLens, false});

  // 1. seq_lens only: shrink some requests, grow others past their generated length, cross
  // block boundaries; group 2 straddles nb = topk (lengths 2046..2049: three trivial rows and
  // one row with 17 blocks in one pack), group 3 becomes trivial.
  Case c1 = c0;
  const std::int64_t new_prefix[6] = {128 * 8 + 3, 128 * 49 - 1, 2045, 100, 128 * 30, 128 * 36 + 1};
  for (std::int64_t g = 0; g < 6; ++g) set_group(c1, g, group_slot(c1, g), new_prefix[g]);
  steps.push_back({"seq_lens shrunk and grown", c1, kLens, false});

  // 2. slot table, slot ids and token slots: every real request moves to another table
  // row (gapped, one stored as a negative alias), the inactive group's slot becomes -1
  // (aliases S-1, past the table), and every token slot of the table is redrawn with
  // negative aliases. K is not touched.
  Case c2 = c1;
  {
    std::mt19937_64 g(7);
    std::vector<std::int64_t> rows(static_cast<std::size_t>(c2.rows - 1));
    std::iota(rows.begin(), rows.end(), 1);
    std::shuffle(rows.begin(), rows.end(), g);
    std::size_t next = 0;
    for (std::int64_t grp = 0; grp < 6; ++grp) {
      const std::int64_t old = group_slot(c2, grp);
      while (rows[next] == old) ++next;
      std::int64_t slot = rows[next++];
      if (grp == 1) slot -= c2.S;
      for (std::int64_t j = 0; j < 4; ++j) c2.slot_ids[static_cast<std::size_t>(grp * 4 + j)] = slot;
    }
    for (std::int64_t j = 0; j < 4; ++j) c2.slot_ids[static_cast<std::size_t>(7 * 4 + j)] = -1;
    std::uniform_int_distribution<std::int64_t> any_slot(0, c2.S - 1);
    for (auto& v : c2.req_to_token) {
      std::int64_t s = any_slot(g);
      if (g() % 4 == 0) s -= c2.S;
      v = static_cast<std::int32_t>(s);
    }
  }
  steps.push_back({"slot table, slot ids and token slots rewritten", c2, kTable | kSlots, false});

  // 3. K contents only (same shapes: the same spec, another seed).
  Case c3 = c2;
  c3.k_cache = generate(spec, 777).k_cache;
  steps.push_back({"K contents rewritten", c3, kK, false});

  // 3b. groups mixing slot ids (slot ids and lengths only): the last two rows of group 1
  // move to group 2's request (a request boundary inside a group), row 0 of group 4 becomes
  // a padding row (table row 0, length 3) and row 1 of the padding group 6 a real row of
  // group 5's request; ragged: the partial group's first two rows become real rows of group
  // 2's request, with long lengths.
  Case c3b = c3;
  {
    auto at = [](std::int64_t g, std::int64_t j) { return static_cast<std::size_t>(g * 4 + j); };
    for (std::int64_t j = 2; j < 4; ++j) {
      c3b.slot_ids[at(1, j)] = c3b.slot_ids[at(2, 0)];
      c3b.seq_lens[at(1, j)] = c3b.seq_lens[at(2, 0)] + 128 * j + 3;
    }
    c3b.slot_ids[at(4, 0)] = 0;
    c3b.seq_lens[at(4, 0)] = 3;
    c3b.slot_ids[at(6, 1)] = c3b.slot_ids[at(5, 0)];
    c3b.seq_lens[at(6, 1)] = c3b.seq_lens[at(5, 3)] + 130;
    if (gp.ragged) {
      c3b.slot_ids[32] = c3b.slot_ids[33] = c3b.slot_ids[at(2, 0)];
      c3b.seq_lens[32] = c3b.seq_lens[at(2, 3)] + 200;
      c3b.seq_lens[33] = c3b.seq_lens[at(2, 3)] + 1;
    }
  }
  steps.push_back({"groups mixing slot ids", c3b, kSlots | kLens, false});

  // 4. padding and inactive rows: group 0 becomes graph padding (table row 0, lengths 2..5),
  // the padding group and the inactive group become real requests on unused table rows,
  // group 3 becomes inactive (length 0), and one row inside group 5 gets length 0.
  Case c4 = c3b;
  {
    std::set<std::int64_t> used;
    for (std::int64_t grp = 0; grp < 8; ++grp) {
      const std::int64_t sid = table_row(c4, grp * 4);
      if (sid >= 0) used.insert(sid);
    }
    std::vector<std::int64_t> free_rows;
    for (std::int64_t r = 1; r < c4.rows; ++r)
      if (!used.count(r)) free_rows.push_back(r);
    if (free_rows.size() < 2) throw std::runtime_error("test setup: too few free table rows");
    set_group(c4, 0, 0, 1);
    set_group(c4, 6, free_rows[0], 128 * 22);
    set_group(c4, 7, free_rows.back(), 128 * 45 - 3);
    for (std::int64_t j = 0; j < 4; ++j) c4.seq_lens[static_cast<std::size_t>(3 * 4 + j)] = 0;
    c4.seq_lens[static_cast<std::size_t>(5 * 4 + 2)] = 0;
  }
  steps.push_back({"padding and inactive rows rewritten", c4, kSlots | kLens, false});

  // 5. every cache slot and table row relabelled (K rows moved, table and slot ids
  // rewritten): the same keys at the same positions, so the same bits. relabel_slots keeps
  // the slot id of an inactive row, so group 5 (its length-0 row) now mixes slot ids and
  // runs per row in the packed graph: the bits must not change either.
  Case c5 = relabel_slots(c4, 99);
  steps.push_back({"slots relabelled (same answer)", c5, kK | kTable | kSlots, true});
  return steps;
}

std::uintptr_t addr(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

void check_graph_structure(const Rig& rig) {
  std::size_t all = 0;
  const std::vector<KernelNode> nodes = kernel_nodes(rig.graph, &all);
  EXPECT_EQ(all, 3u) << "the captured step must be exactly fill + score + top-k (no memcpy/memset/host nodes)";
  ASSERT_EQ(nodes.size(), 3u);
  const gpu::plan::ScoreGrid sg = gpu::plan::score_grid(rig.args, rig.packed);
  const std::int64_t tg = gpu::plan::topk_grid(rig.args);
  const std::size_t fill_grid = std::min<std::size_t>((rig.scores.n + 255) / 256, 4096);
  const KernelNode *fill = nullptr, *score = nullptr, *topk = nullptr;
  for (const KernelNode& n : nodes) {
    const KernelNode** slot = n.name.find("fill_u32") != std::string::npos ? &fill
                              : n.name.find("score") != std::string::npos  ? &score
                              : n.name.find("topk") != std::string::npos   ? &topk
                                                                           : nullptr;
    ASSERT_NE(slot, nullptr) << "unexpected kernel in the graph: " << n.name;
    ASSERT_EQ(*slot, nullptr) << "kernel captured twice: " << n.name;
    *slot = &n;
  }
  ASSERT_TRUE(fill && score && topk) << "the graph must hold the fill, score and top-k kernels";
  // Grids are the launch plan for the maximum shapes.
  EXPECT_EQ(static_cast<std::int64_t>(score->grid.x), sg.grid_x())
      << "score grid x: plan pack " << sg.pack << " chunks " << sg.chunks;
  EXPECT_EQ(static_cast<std::int64_t>(score->grid.y), sg.hk);
  EXPECT_EQ(score->grid.z, 1u);
  EXPECT_EQ(static_cast<std::int64_t>(topk->grid.x), tg);
  EXPECT_EQ(fill->grid.x, fill_grid);
  EXPECT_EQ(sg.pack > 1, rig.packed && gpu::packed_supported(rig.args));  // the plan packs iff the launcher does
  // Parameters reference the buffers the replays rewrite, never the eager outputs.
  EXPECT_TRUE(fill->words.count(addr(rig.scores.p))) << "fill node does not poison the captured score buffer";
  for (const void* p : {static_cast<const void*>(rig.q.p), static_cast<const void*>(rig.k.p),
                        static_cast<const void*>(rig.r2t.p), static_cast<const void*>(rig.slots.p),
                        static_cast<const void*>(rig.lens.p), static_cast<const void*>(rig.scores.p)})
    EXPECT_TRUE(score->words.count(addr(p))) << "score node does not reference buffer " << p;
  for (const void* p : {static_cast<const void*>(rig.scores.p), static_cast<const void*>(rig.slots.p),
                        static_cast<const void*>(rig.lens.p), static_cast<const void*>(rig.topk.p)})
    EXPECT_TRUE(topk->words.count(addr(p))) << "top-k node does not reference buffer " << p;
  for (const KernelNode& n : nodes) {
    EXPECT_FALSE(n.words.count(addr(rig.e_scores.p)) || n.words.count(addr(rig.e_topk.p)))
        << "a graph node references an eager output buffer";
  }
}

// Ids differ somewhere.
bool ids_differ(const Observed& a, const Observed& b) { return a.topk_idx != b.topk_idx; }

class GraphReplay : public ::testing::TestWithParam<GraphParam> {};

TEST_P(GraphReplay, InPlaceReplaysMatchEagerAndOracle) {
  IXO_REQUIRE_CUDA();
  const GraphParam& gp = GetParam();
  const std::vector<Step> steps = make_steps(gp);
  ASSERT_GE(steps.size(), 5u);

  // The steps change what they say and nothing else (guards the test's own setup).
  for (std::size_t i = 1; i < steps.size(); ++i) {
    const Case &a = steps[i - 1].c, &b = steps[i].c;
    const unsigned w = steps[i].writes;
    const bool changed[5] = {a.q != b.q, a.k_cache != b.k_cache, a.req_to_token != b.req_to_token,
                             a.slot_ids != b.slot_ids, a.seq_lens != b.seq_lens};
    const unsigned bits[5] = {kQ, kK, kTable, kSlots, kLens};
    for (int t = 0; t < 5; ++t)
      ASSERT_EQ(changed[t], (w & bits[t]) != 0) << "step '" << steps[i].name << "' input " << t;
  }

  const Case& shape = steps[0].c;
  Rig rig(shape, gp.packed);
  if (gp.packed) {
    ASSERT_TRUE(gpu::packed_supported(rig.args)) << "the packed configuration must take the packed path";
  }
  const gpu::IndexArgs captured = rig.args;

  // Warm-up eager launch (as a serving engine does before capture), then capture.
  rig.write(shape, steps[0].writes);
  (void)rig.eager();
  rig.capture();
  check_graph_structure(rig);

  auto backend = gp.packed ? make_cuda_packed_backend() : make_cuda_rows_backend();
  Observed prev;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    SCOPED_TRACE("replay " + std::to_string(i) + ": " + s.name);
    rig.write(s.c, s.writes);
    // Same device buffers as captured.
    ASSERT_EQ(rig.args.q, captured.q);
    ASSERT_EQ(rig.args.k_cache, captured.k_cache);
    ASSERT_EQ(rig.args.req_to_token, captured.req_to_token);
    ASSERT_EQ(rig.args.slot_ids, captured.slot_ids);
    ASSERT_EQ(rig.args.seq_lens, captured.seq_lens);
    ASSERT_EQ(rig.args.scores, captured.scores);
    ASSERT_EQ(rig.args.topk_idx, captured.topk_idx);
    // The device holds exactly the host case.
    ASSERT_EQ(rig.lens.read(), s.c.seq_lens);
    ASSERT_EQ(rig.slots.read(), s.c.slot_ids);

    const Observed g = rig.replay();
    const Observed e = rig.eager();
    EXPECT_TRUE(bitwise_equal(g, e, s.c, "graph replay vs eager launch"));
    EXPECT_TRUE(bitwise_equal(g, backend->run(s.c), s.c, "graph replay vs " + backend->name() + " backend"));
    EXPECT_TRUE(matches_oracle(s.c, oracle(s.c), g, false, "graph replay vs oracle"));
    if (i > 0) {
      if (s.same_answer)
        EXPECT_TRUE(bitwise_equal(g, prev, s.c, "relabelled replay vs previous replay"));
      else
        EXPECT_TRUE(ids_differ(g, prev)) << "the replay's ids did not change although its inputs did";
    }
    prev = g;
  }
  // A second replay of the last inputs is bitwise identical (no state carried over).
  EXPECT_TRUE(bitwise_equal(rig.replay(), prev, steps.back().c, "repeated replay"));
}

INSTANTIATE_TEST_SUITE_P(
    CudaGraph, GraphReplay,
    ::testing::Values(GraphParam{"rows_bf16_max", false, KDtype::bf16, ScoreType::max},
                      GraphParam{"packed_bf16_max", true, KDtype::bf16, ScoreType::max},
                      GraphParam{"rows_e4m3fn_lse", false, KDtype::e4m3fn, ScoreType::lse},
                      GraphParam{"packed_e4m3fn_lse", true, KDtype::e4m3fn, ScoreType::lse},
                      GraphParam{"rows_ragged_bf16_max", false, KDtype::bf16, ScoreType::max, true},
                      GraphParam{"packed_ragged_bf16_max", true, KDtype::bf16, ScoreType::max, true},
                      GraphParam{"packed_ragged_e4m3fn_lse", true, KDtype::e4m3fn, ScoreType::lse, true}),
    [](const ::testing::TestParamInfo<GraphParam>& i) { return i.param.name; });

}  // namespace
}  // namespace ixo::test
