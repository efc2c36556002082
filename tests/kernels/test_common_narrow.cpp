// kernels/common's helpers of the GPU raw loop's 32-bit indices (experiment rows 60-61): the sub-tile cursor, the
// narrow-index decision and the K row of an entry. Split off test_common.cpp (same binary, same test names).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "indexer_common.hpp"
#include "plans.hpp"

namespace cm = ixo::common;

// The GPU score warps' sub-tile cursor: next() from any start agrees with seek() (unit,
// offset in the unit, ring stage) for every units-per-block count and ring depth the kernels
// use (nsub 1..8: block sizes up to 256; 3 and 4 stages). Fails on a stage that does not
// wrap at kNS and on a unit that does not advance when sub wraps (both tried).
template <int kNS, class Index = std::int64_t>
void check_cursor_walk() {
  for (int nsub = 1; nsub <= 8; ++nsub)
    for (Index start = 0; start < 3 * nsub * kNS; ++start) {
      cm::SubtileCursor<kNS, Index> c, want;
      c.seek(start, nsub);
      for (Index k = 1; k <= 4 * nsub * kNS; ++k) {
        c.next(nsub);
        want.seek(start + k, nsub);
        ASSERT_TRUE(c.it == want.it && c.unit == want.unit && c.sub == want.sub && c.stage == want.stage)
            << "kNS " << kNS << " nsub " << nsub << " start " << start << " after " << k << " steps: it " << c.it
            << " unit " << c.unit << " sub " << c.sub << " stage " << c.stage << ", want unit " << want.unit << " sub "
            << want.sub << " stage " << want.stage;
      }
    }
}
TEST(KernelsCommon, SubtileCursorWalksLikeSeek) {
  check_cursor_walk<3>();
  check_cursor_walk<4>();
  check_cursor_walk<4, std::int32_t>();  // row 60's narrow loop walks a 32-bit cursor
}
// Row 60's decision (common::narrow_index_fits) at its edges: K rows up to 2^31 - 1 (row 61's narrow_entry_row; row
// 60 alone allowed 2^32 - 1), row bytes up to 2^32 - 1, the tile's blocks ending at most 64 tokens below 2^31; and
// narrow_k_row's sentinel never names a row the decision lets through (the largest row of a fitting cache is
// 2^31 - 2). Each edge fails on its bound moved by one (tried: S <= 2^31, row_bytes <= 2^32, the block end
// <= 2^31 - 1).
TEST(KernelsCommon, NarrowIndexFitsAtItsEdges) {
  const std::int64_t kS32 = 0x7FFFFFFFll, kU32 = 0xFFFFFFFFll, kEnd = 0x7FFFFFFFll - 64;
  EXPECT_TRUE(cm::narrow_index_fits(kS32, 128, 1000, 64));
  EXPECT_FALSE(cm::narrow_index_fits(kS32 + 1, 128, 1000, 64));
  EXPECT_FALSE(cm::narrow_index_fits(kU32, 128, 1000, 64));
  EXPECT_TRUE(cm::narrow_index_fits(1000, kU32, 1000, 64));
  EXPECT_FALSE(cm::narrow_index_fits(1000, kU32 + 1, 1000, 64));
  EXPECT_FALSE(cm::narrow_index_fits(-1, 128, 1000, 64));
  EXPECT_FALSE(cm::narrow_index_fits(1000, 0, 1000, 64));
  for (const int bs : {1, 64, 100, 256}) {
    const std::int64_t last_fitting = kEnd / bs * bs;  // the largest length whose blocks end <= kEnd
    EXPECT_TRUE(cm::narrow_index_fits(1000, 128, last_fitting, bs)) << "bs " << bs;
    EXPECT_FALSE(cm::narrow_index_fits(1000, 128, last_fitting + 1, bs)) << "bs " << bs;
    EXPECT_FALSE(cm::narrow_index_fits(1000, 128, std::int64_t{1} << 40, bs)) << "bs " << bs;
  }
  EXPECT_EQ(cm::narrow_k_row(-1), cm::kNoKRow);
  EXPECT_EQ(cm::narrow_k_row(std::int64_t{-1} << 40), cm::kNoKRow);
  EXPECT_EQ(cm::narrow_k_row(0), 0u);
  EXPECT_EQ(cm::narrow_k_row(kS32 - 1), 0x7FFFFFFEu);  // the last row of a cache of 2^31 - 1 rows
  EXPECT_NE(cm::narrow_k_row(kS32 - 1), cm::kNoKRow);
}
// Row 61: narrow_entry_row (32-bit) is wrap_slot then narrow_k_row (64-bit) for every entry, at every cache size
// narrow_index_fits lets through, and the sentinel kNoEntry (a lane that loads no entry) names no row. Fails on: the
// negative alias dropped (s = raw), the alias taken at raw <= 0, the sum done where raw >= 0, and a kNoEntry that
// aliases into the cache (tried: kNoEntry = -1, whose alias is row S - 1).
TEST(KernelsCommon, NarrowEntryRowIsWrapThenNarrow) {
  const std::int32_t kMax = INT32_MAX, kMin = INT32_MIN;
  for (const std::int32_t S : {0, 1, 2, 1000, 65537, kMax - 1, kMax}) {
    std::vector<std::int32_t> raws = {kMin, kMin + 1, -1, 0, 1, kMax, S, S - 1, -S, kMax / 2, kMin / 2};
    if (S > 0) raws.push_back(-S + 1);
    if (S < kMax) raws.push_back(-S - 1);
    for (std::uint32_t x = 12345u, i = 0; i < 200; ++i) {  // a fixed pseudo-random spread over all of int32
      x = x * 1664525u + 1013904223u;
      raws.push_back(static_cast<std::int32_t>(x));
    }
    for (const std::int32_t raw : raws)
      EXPECT_EQ(cm::narrow_entry_row(raw, S), cm::narrow_k_row(cm::wrap_slot(raw, S))) << "raw " << raw << " S " << S;
    EXPECT_EQ(cm::narrow_entry_row(cm::kNoEntry, S), cm::kNoKRow) << "S " << S;
  }
}
