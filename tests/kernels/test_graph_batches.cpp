// The generators of real CUDA-graph batches (GenSpec: packed_queries, trailing padding and
// inactive rows, inactive rows inside requests; the graph-padded preset; their spec JSON
// keys): they produce the rows they promise, and knobs left at their defaults change no
// generated case (fixtures and regressions keep their bits).
#include <gtest/gtest.h>

#include <string>

#include "ixo/case.hpp"
#include "ixo/error.hpp"
#include "ixo/generate.hpp"
#include "packing_note.hpp"

namespace {

using ixo::Case;
using ixo::GenSpec;

// The tiny preset (bs 16, topk 4, Hq 2, D 64, prefixes <= 300) with 3 requests x 4 draft rows.
GenSpec small() {
  GenSpec s = ixo::preset("tiny");
  s.requests = 3;
  s.draft_rows = 4;
  s.cfg.init_blocks = 0;
  return s;
}

bool same_case(const Case& a, const Case& b) {
  return a.R == b.R && a.S == b.S && a.rows == b.rows && a.width == b.width && a.q == b.q && a.k_cache == b.k_cache &&
         a.req_to_token == b.req_to_token && a.slot_ids == b.slot_ids && a.seq_lens == b.seq_lens &&
         a.cfg.packed_queries == b.cfg.packed_queries;
}

TEST(GraphBatchGenerator, DefaultsChangeNothing) {
  for (std::uint64_t seed : {1, 2, 3}) {
    GenSpec s = small();
    s.padding_requests = 1;
    s.inactive_requests = 1;
    const Case base = ixo::generate(s, seed);
    EXPECT_EQ(base.cfg.packed_queries, 4);
    EXPECT_EQ(base.R, 5 * 4);
    GenSpec explicit_p = s;
    explicit_p.packed_queries = 4;  // = draft_rows: the same case, bit for bit
    EXPECT_TRUE(same_case(base, ixo::generate(explicit_p, seed))) << "seed " << seed;
  }
}

TEST(GraphBatchGenerator, TrailingAndInactiveRows) {
  GenSpec s = small();
  s.packed_queries = 3;
  s.trailing_padding_rows = 5;
  s.trailing_inactive_rows = 3;
  s.inactive_rows_in_requests = 2;
  for (std::uint64_t seed : {1, 2, 3, 4, 5}) {
    const Case c = ixo::generate(s, seed);
    EXPECT_EQ(c.cfg.packed_queries, 3);
    ASSERT_EQ(c.R, 3 * 4 + 5 + 3);
    // Trailing padding rows: table row 0, lengths 2, 3, 4, 5, 2 (2 + i % draft_rows).
    for (int i = 0; i < 5; ++i) {
      EXPECT_EQ(c.slot_ids[static_cast<std::size_t>(12 + i)], 0);
      EXPECT_EQ(c.seq_lens[static_cast<std::size_t>(12 + i)], 2 + i % 4);
      EXPECT_EQ(ixo::table_row(c, 12 + i), 0);
    }
    // Trailing inactive rows: slot past the table (or -1 aliasing past it), or length 0.
    for (int i = 0; i < 3; ++i) EXPECT_EQ(ixo::table_row(c, 17 + i), -1) << "seed " << seed << " row " << 17 + i;
    // Exactly 2 rows of the requests inactive; the others keep their request's slot id and
    // chain lengths.
    int inactive = 0;
    for (std::int64_t r = 0; r < 12; ++r) {
      if (ixo::table_row(c, r) < 0) {
        ++inactive;
        continue;
      }
      EXPECT_EQ(c.seq_lens[static_cast<std::size_t>(r)], c.seq_lens[static_cast<std::size_t>(r - r % 4)] + r % 4)
          << "row " << r;
    }
    EXPECT_EQ(inactive, 2) << "seed " << seed;
    // P 3 over requests of 4: groups straddle requests, R 20 leaves a partial group of 2.
    const std::string note = ixo::ungrouped_rows_note(c);
    EXPECT_NE(note.find("18-19 (partial group)"), std::string::npos) << note;
    EXPECT_NE(note.find("(mixed slot ids)"), std::string::npos) << note;
    // Slot ids of real requests are never a group index of their rows (nor a row index).
    for (std::int64_t r = 0; r < 12; ++r)
      if (ixo::table_row(c, r) > 0) {
        EXPECT_NE(c.slot_ids[static_cast<std::size_t>(r)], r / 3) << "row " << r;
        EXPECT_NE(c.slot_ids[static_cast<std::size_t>(r)], r) << "row " << r;
      }
  }
}

TEST(GraphBatchGenerator, ExactValuesReachTrailingPaddingRows) {
  GenSpec s = small();
  s.values = ixo::Values::exact;
  s.trailing_padding_rows = 2;
  const Case c = ixo::generate(s, 9);
  ixo::validate(c);
  EXPECT_EQ(c.R, 14);
  EXPECT_EQ(c.seq_lens.back(), 3);
}

TEST(GraphBatchGenerator, SpecJsonKeys) {
  const GenSpec s = ixo::spec_from_json(
      R"({"preset": "tiny", "packed_queries": 3, "trailing_padding_rows": 2, "trailing_inactive_rows": 1,
          "inactive_rows_in_requests": 1})");
  EXPECT_EQ(s.packed_queries, 3);
  EXPECT_EQ(s.trailing_padding_rows, 2);
  EXPECT_EQ(s.trailing_inactive_rows, 1);
  EXPECT_EQ(s.inactive_rows_in_requests, 1);
  const GenSpec t = ixo::spec_from_json(ixo::spec_to_json(s));
  EXPECT_EQ(t.packed_queries, 3);
  EXPECT_EQ(t.trailing_padding_rows, 2);
  EXPECT_EQ(t.trailing_inactive_rows, 1);
  EXPECT_EQ(t.inactive_rows_in_requests, 1);
  EXPECT_TRUE(same_case(ixo::generate(s, 3), ixo::generate(t, 3)));
  // Older specs (without the keys) still load, with the defaults.
  const GenSpec old = ixo::spec_from_json(R"({"preset": "verify", "requests": 2})");
  EXPECT_EQ(old.packed_queries, 0);
  EXPECT_EQ(old.trailing_padding_rows, 0);
  EXPECT_THROW(ixo::spec_from_json(R"({"trailing_padding_row": 1})"), ixo::InputError);
  EXPECT_THROW(ixo::generate(ixo::spec_from_json(R"({"packed_queries": -1})"), 1), ixo::InputError);
}

TEST(GraphBatchGenerator, GraphPaddedPreset) {
  const Case c = ixo::generate(ixo::preset("graph-padded"), 1);
  EXPECT_EQ(c.cfg.packed_queries, 4);
  EXPECT_EQ(c.R, 25);
  EXPECT_NE(ixo::ungrouped_rows_note(c), "");
}

}  // namespace
