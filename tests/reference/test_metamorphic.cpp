// Metamorphic properties of the oracle: changes that must not change the answer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>

#include "ixo/error.hpp"
#include "ixo/generate.hpp"
#include "ixo/observed_arrays.hpp"
#include "ixo/oracle.hpp"
#include "ixo/transform.hpp"

namespace {

void expect_same_answer(const ixo::Expected& a, const ixo::Expected& b) {
  EXPECT_EQ(a.topk_idx, b.topk_idx);
  ASSERT_EQ(a.score.size(), b.score.size());
  EXPECT_EQ(std::memcmp(a.score.data(), b.score.data(), a.score.size() * sizeof(double)), 0);
}

ixo::Case base_case(std::uint64_t seed) {
  ixo::GenSpec s = ixo::preset("verify");
  s.Hq = 2;
  s.max_prefix = 3000;
  s.padding_requests = 1;
  s.inactive_requests = 1;
  return ixo::generate(s, seed);
}

TEST(Metamorphic, RelabelingCacheSlotsAndTableRowsChangesNothing) {
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const ixo::Case c = base_case(seed);
    const ixo::Case d = ixo::relabel_slots(c, seed * 77);
    ASSERT_NE(c.req_to_token, d.req_to_token);
    expect_same_answer(ixo::oracle(c), ixo::oracle(d));
  }
}

TEST(Metamorphic, TokensPastTheLengthAreNeverRead) {
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    ixo::Case c = base_case(seed);
    // Each table row's entries past its longest reader point at fresh cache slots full of
    // huge keys: the answer must not change.
    ixo::Case d = c;
    std::vector<std::int64_t> used(static_cast<std::size_t>(c.rows), 0);
    for (std::int64_t r = 0; r < c.R; ++r)
      if (ixo::table_row(c, r) >= 0)
        used[static_cast<std::size_t>(ixo::table_row(c, r))] =
            std::max(used[static_cast<std::size_t>(ixo::table_row(c, r))], c.seq_lens[r]);
    const std::int64_t big = d.S;
    d.S += 1;
    const std::size_t row_bytes = static_cast<std::size_t>(c.Hk * c.D * ixo::element_bytes(c.cfg.k_dtype));
    d.k_cache.resize(d.k_cache.size() + row_bytes, 0x7e);  // 448 in e4m3fn, ~8e37 in bf16
    for (auto& v : d.req_to_token)
      if (v < 0) --v;  // negative aliases are relative to S, which grew by one
    for (std::int64_t row = 0; row < c.rows; ++row)
      for (std::int64_t t = used[static_cast<std::size_t>(row)]; t < c.width; ++t)
        d.req_to_token[static_cast<std::size_t>(row * c.width + t)] = static_cast<std::int32_t>(big);
    expect_same_answer(ixo::oracle(c), ixo::oracle(d));
  }
}

TEST(Metamorphic, WideningTheTableKeepsEveryRowsSelection) {
  ixo::Case c = base_case(5);
  ixo::Case d = c;
  const std::int64_t extra = 300;
  d.width = c.width + extra;
  d.req_to_token.assign(static_cast<std::size_t>(d.rows * d.width), 0);
  for (std::int64_t r = 0; r < c.rows; ++r)
    std::copy_n(&c.req_to_token[r * c.width], c.width, &d.req_to_token[r * d.width]);
  const auto a = ixo::oracle(c), b = ixo::oracle(d);
  EXPECT_EQ(a.topk_idx, b.topk_idx);
  for (std::int64_t h = 0; h < a.Hq; ++h)
    for (std::int64_t r = 0; r < a.R; ++r)
      for (std::int64_t blk = 0; blk < a.nb[r]; ++blk) EXPECT_EQ(a.score[a.at(h, r, blk)], b.score[b.at(h, r, blk)]);
}

TEST(Metamorphic, PaddingAndInactiveRowsDoNotDisturbRealRows) {
  // Appended padding groups read the SAME table row as a real request (short lengths),
  // inactive groups read nothing; every original row's scores and ids stay identical.
  // (The fast oracle shares decoded K between rows of one table row: a grouping bug that
  // lets the short rows shrink or grow the shared range would show here.)
  const ixo::Case c = base_case(6);
  const ixo::Case d = ixo::append_rows(c, 2, 2);
  ASSERT_EQ(d.R, c.R + 4 * c.cfg.packed_queries);
  const auto a = ixo::oracle(c), b = ixo::oracle(d);
  for (std::int64_t h = 0; h < c.Hq; ++h)
    for (std::int64_t r = 0; r < c.R; ++r) {
      for (std::int64_t k = 0; k < a.topk; ++k)
        EXPECT_EQ(a.topk_idx[(h * a.R + r) * a.topk + k], b.topk_idx[(h * b.R + r) * b.topk + k]);
      for (std::int64_t blk = 0; blk < a.NB; ++blk) EXPECT_EQ(a.score[a.at(h, r, blk)], b.score[b.at(h, r, blk)]);
    }
  for (std::int64_t r = d.R - 2 * c.cfg.packed_queries; r < d.R; ++r)
    EXPECT_EQ(b.topk_idx[r * b.topk], -1);  // inactive
  for (std::int64_t r = c.R; r < c.R + c.cfg.packed_queries; ++r)
    EXPECT_EQ(b.topk_idx[r * b.topk], 0);  // padding: block 0
}

// relabel_slots moves each row with its table row: every token an active row reads holds the
// same K bytes after the move (rows of table row 0 included: its new index is perm'[0]).
TEST(Transform, RelabelingMovesEveryRowWithItsTableRow) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const ixo::Case c = base_case(seed);
    const ixo::Case d = ixo::relabel_slots(c, seed * 77);
    const std::size_t row_bytes = static_cast<std::size_t>(c.Hk * c.D * ixo::element_bytes(c.cfg.k_dtype));
    auto k_of = [&](const ixo::Case& x, std::int64_t r, std::int64_t t) {
      std::int64_t s = x.req_to_token[static_cast<std::size_t>(ixo::table_row(x, r) * x.width + t)];
      if (s < 0) s += x.S;
      return std::vector<std::uint8_t>(
          x.k_cache.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(s) * row_bytes),
          x.k_cache.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(s + 1) * row_bytes));
    };
    for (std::int64_t r = 0; r < c.R; ++r) {
      ASSERT_EQ(ixo::table_row(c, r) >= 0, ixo::table_row(d, r) >= 0) << "row " << r;
      if (ixo::table_row(c, r) < 0) continue;
      for (std::int64_t t = 0; t < c.seq_lens[static_cast<std::size_t>(r)]; ++t)
        ASSERT_EQ(k_of(c, r, t), k_of(d, r, t)) << "seed " << seed << " row " << r << " token " << t;
    }
  }
}

// append_rows: the padding groups read the table row of row 0's request (not another row's).
TEST(Transform, PaddingGroupsReadRowZerosTableRow) {
  ixo::GenSpec s = ixo::preset("tiny");
  s.rows(3, 1);  // three requests of one row each: three different table rows
  const ixo::Case c = ixo::generate(s, 4);
  ASSERT_GE(ixo::table_row(c, 0), 0);
  ASSERT_NE(ixo::table_row(c, 1), ixo::table_row(c, 0));
  const ixo::Case d = ixo::append_rows(c, 1, 0);
  ASSERT_EQ(d.R, c.R + c.cfg.packed_queries);
  for (std::int64_t r = c.R; r < d.R; ++r) EXPECT_EQ(ixo::table_row(d, r), ixo::table_row(c, 0)) << "padding row " << r;
}

// Scores given as arrays need NB >= the largest nb of the batch's rows, and no more: a
// narrower-than-needed buffer is refused, the exact width accepted.
TEST(ObservedArrays, ScoresNeedTheWidestRowsBlocksExactly) {
  ixo::Case c = base_case(1);
  // What lies past the vectors' ends (never a row) is a huge active length: reading it would
  // demand a wider buffer.
  c.seq_lens.push_back(1 << 30), c.seq_lens.pop_back();
  c.slot_ids.push_back(0), c.slot_ids.pop_back();
  std::int64_t need = 0;
  for (std::int64_t r = 0; r < c.R; ++r) need = std::max(need, ixo::row_blocks(c, r));
  const std::vector<std::int64_t> shape{c.Hq, c.R, c.cfg.topk};
  const std::vector<std::int32_t> ids(static_cast<std::size_t>(c.Hq * c.R * c.cfg.topk), -1);
  ixo::ScoresArray ok{{c.Hq, c.R, need}, std::vector<float>(static_cast<std::size_t>(c.Hq * c.R * need), 0.0f)};
  EXPECT_NO_THROW(ixo::observed_from_arrays(c, shape, ids, &ok));
  ixo::ScoresArray narrow{{c.Hq, c.R, need - 1},
                          std::vector<float>(static_cast<std::size_t>(c.Hq * c.R * (need - 1)), 0.0f)};
  EXPECT_THROW(ixo::observed_from_arrays(c, shape, ids, &narrow), ixo::InputError);
}

}  // namespace
