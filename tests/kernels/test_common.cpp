// Unit tests of kernels/common: the formulas every backend (CPU twin, CUDA) shares.
// Where the reference has an independent version (fp8/bf16 decoding) the two are compared.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "indexer_common.hpp"
#include "plans.hpp"
#include "ixo/dtype.hpp"

namespace cm = ixo::common;

namespace {

bool same_float(float a, float b) { return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, 4) == 0; }

TEST(KernelsCommon, Fp8DecodeMatchesReferenceTables) {
  for (auto [code, t] : {std::pair{cm::kE4m3fn, ixo::KDtype::e4m3fn}, std::pair{cm::kE4m3fnuz, ixo::KDtype::e4m3fnuz},
                         std::pair{cm::kE5m2, ixo::KDtype::e5m2}})
    for (int c = 0; c < 256; ++c) {
      const float want = ixo::fp8_to_float(static_cast<std::uint8_t>(c), t);
      const float got = cm::fp8_to_float(static_cast<std::uint8_t>(c), code);
      ASSERT_TRUE(same_float(want, got)) << "format " << ixo::to_string(t) << " code " << c << ": reference " << want
                                         << " common " << got;
    }
}

TEST(KernelsCommon, KCodeOrderEqualsKDtypeOrder) {
  EXPECT_EQ(static_cast<int>(ixo::KDtype::bf16), cm::kBf16);
  EXPECT_EQ(static_cast<int>(ixo::KDtype::e4m3fn), cm::kE4m3fn);
  EXPECT_EQ(static_cast<int>(ixo::KDtype::e4m3fnuz), cm::kE4m3fnuz);
  EXPECT_EQ(static_cast<int>(ixo::KDtype::e5m2), cm::kE5m2);
}

TEST(KernelsCommon, Bf16DecodeAndLittleEndianKElements) {
  for (std::uint32_t b = 0; b < 65536; ++b) {
    const auto bits = static_cast<std::uint16_t>(b);
    ASSERT_TRUE(same_float(ixo::bf16_bits_to_float(bits), cm::bf16_to_float(bits))) << "bits " << b;
    const std::uint8_t row[4] = {0, 0, static_cast<std::uint8_t>(bits & 0xff), static_cast<std::uint8_t>(bits >> 8)};
    ASSERT_TRUE(same_float(cm::k_element(row, 1, cm::kBf16), cm::bf16_to_float(bits))) << "bits " << b;
  }
  const std::uint8_t fp8row[3] = {0x00, 0x38, 0xb8};  // e4m3fn: 0, 1.0, -1.0
  EXPECT_EQ(cm::k_element(fp8row, 1, cm::kE4m3fn), 1.0f);
  EXPECT_EQ(cm::k_element(fp8row, 2, cm::kE4m3fn), -1.0f);
  EXPECT_EQ(cm::k_element(fp8row, 1, cm::kE4m3fnuz), 0.5f);  // bias 8
  EXPECT_EQ(cm::k_element_bytes(cm::kBf16), 2);
  EXPECT_EQ(cm::k_element_bytes(cm::kE5m2), 1);
}

TEST(KernelsCommon, NumKvChunksIsGraphConstantPowerOfTwo) {
  EXPECT_EQ(cm::num_kv_chunks(1, 1), 256);
  EXPECT_EQ(cm::num_kv_chunks(32, 1), 128);
  EXPECT_EQ(cm::num_kv_chunks(20, 1), 128);  // 204 -> 128
  EXPECT_EQ(cm::num_kv_chunks(16, 4), 64);
  EXPECT_EQ(cm::num_kv_chunks(0, 1), 256);
  EXPECT_EQ(cm::num_kv_chunks(5000, 1), 1);
}

TEST(KernelsCommon, ChunkBlocksPartitionEveryRow) {
  for (std::int64_t nb = 0; nb <= 70; ++nb)
    for (int chunks : {1, 2, 3, 7, 64, 256}) {
      std::int64_t next = 0;
      for (int c = 0; c < chunks; ++c) {
        std::int64_t b0 = -1, b1 = -1;
        cm::chunk_blocks(nb, chunks, c, &b0, &b1);
        if (b0 >= b1) continue;
        ASSERT_EQ(b0, next) << "nb " << nb << " chunks " << chunks << " chunk " << c;
        next = b1;
      }
      ASSERT_EQ(next, nb) << "nb " << nb << " chunks " << chunks;
    }
}

TEST(KernelsCommon, ForcingLocalWinsOverInit) {
  // nb 6, init 2, local 3: blocks 3,4,5 local; 0,1 init; 2 keeps its score.
  const float s = 0.25f;
  EXPECT_EQ(cm::forced_score(s, 0, 6, 2, 3), cm::kInitForce);
  EXPECT_EQ(cm::forced_score(s, 1, 6, 2, 3), cm::kInitForce);
  EXPECT_EQ(cm::forced_score(s, 2, 6, 2, 3), s);
  for (int b = 3; b < 6; ++b) EXPECT_EQ(cm::forced_score(s, b, 6, 2, 3), cm::kLocalForce);
  EXPECT_EQ(cm::forced_score(s, 0, 2, 2, 3), cm::kLocalForce);  // init block inside the local window
  EXPECT_EQ(cm::forced_score(s, 5, 6, 0, 0), s);                // local 0, init 0: nothing forced
  EXPECT_GT(cm::kInitForce, cm::kLocalForce);
}

TEST(KernelsCommon, TopkKeyOrder) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  EXPECT_GT(cm::topk_key(-inf, 5), cm::topk_key(nan, 0));     // NaN ranks lowest
  EXPECT_GT(cm::topk_key(0.0f, 5), cm::topk_key(-0.0f, 0));   // +0 above -0
  EXPECT_GT(cm::topk_key(1.0f, 7), cm::topk_key(1.0f, 8));    // tie: lower id first
  EXPECT_GT(cm::topk_key(2.0f, 9), cm::topk_key(1.0f, 0));    // score first
  EXPECT_GT(cm::topk_key(-1.0f, 9), cm::topk_key(-2.0f, 0));  // negative scores ordered
  EXPECT_GT(cm::topk_key(cm::kInitForce, 3), cm::topk_key(cm::kLocalForce, 0));
  for (std::int32_t id : {0, 1, 255, 65535, 1 << 20}) EXPECT_EQ(cm::topk_key_id(cm::topk_key(0.5f, id)), id);
}

TEST(KernelsCommon, AddressingWrapsAndTableRows) {
  EXPECT_EQ(cm::wrap_slot(-1, 10), 9);
  EXPECT_EQ(cm::wrap_slot(-10, 10), 0);
  EXPECT_EQ(cm::wrap_slot(3, 10), 3);
  EXPECT_EQ(cm::table_row(2, 10, 4, 5), 2);
  EXPECT_EQ(cm::table_row(-8, 10, 4, 5), 2);   // alias of 2 modulo the cache slots
  EXPECT_EQ(cm::table_row(-1, 10, 4, 5), -1);  // 9: past the table
  EXPECT_EQ(cm::table_row(4, 10, 4, 5), -1);
  EXPECT_EQ(cm::table_row(1, 10, 4, 0), -1);  // empty row
  const std::int32_t table[2 * 3] = {0, 1, 2, -3, 7, -10};
  EXPECT_EQ(cm::token_slot(table, 3, 1, 0, 10), 7);
  EXPECT_EQ(cm::token_slot(table, 3, 1, 1, 10), 7);
  EXPECT_EQ(cm::token_slot(table, 3, 1, 2, 10), 0);
  EXPECT_EQ(cm::kv_head_of(5, 4), 1);
}

// K rows are addressed in 64 bits: row 2^24 + 5 of 256-byte rows (byte offset 2^32 + 1280)
// stays that row; the k_offset_32bit mutant wraps the byte offset to 32 bits (row 5), the
// bug test_gpu_offsets' decoy K catches on the GPU (ctest mutant.k_offset_32bit).
TEST(KernelsCommon, KLoadRowIs64Bit) {
  const std::int64_t big = (std::int64_t{1} << 24) + 5;
  EXPECT_EQ(cm::k_load_row(big, 256), big);
  EXPECT_EQ(cm::k_load_row(3, 256), 3);
#if defined(IXO_ENABLE_MUTANTS)
  EXPECT_EQ(cm::k_load_row(big, 256, ixo::mutants::k_offset_32bit), 5);
  EXPECT_EQ(cm::k_load_row(3, 256, ixo::mutants::k_offset_32bit), 3);
#endif
}

// Verify groups of any size 1..8 (odd ones included) start at x * P; the group_start_pow2
// mutant (a power-of-two pack assumed) starts group 1 of a 3-row pack at row 2.
TEST(KernelsCommon, GroupsOfEveryVerifySizeStartAtXTimesP) {
  for (int P = 1; P <= 8; ++P) {
    const std::int64_t R = 3 * P + P / 2;  // three whole groups, then R % P trailing rows
    std::int64_t next = 0;
    for (std::int64_t x = 0; x < cm::packed_batch(R, P); ++x) {
      const cm::ProgramRows pr = cm::program_rows(x, R, P);
      EXPECT_EQ(pr.first, next) << "P " << P << " program " << x;
      next = pr.first + pr.rows;
    }
    EXPECT_EQ(next, R) << "P " << P << ": every row in exactly one program";
  }
#if defined(IXO_ENABLE_MUTANTS)
  EXPECT_EQ(cm::program_rows(1, 9, 3, ixo::mutants::group_start_pow2).first, 2);
#endif
}

TEST(KernelsCommon, GroupPlanIsLongestWritableRowAndTileMapping) {
  const std::int64_t lens[6] = {9, 9, 12, 10, 11, 3};
  std::int64_t slots[6] = {0, 0, 0, 0, 0, 0};
  // bs 1, topk 2: a row writes when active and L > 2 (row 5, L 3, writes; L 2 would not).
  cm::RowInputs in{slots, lens, 10, 1, 1, 2};
  EXPECT_EQ(cm::group_plan(in, 0, 4).Lg, 12);  // not the last (10), not the first (9)
  EXPECT_EQ(cm::group_plan(in, 3, 3).Lg, 11);
  EXPECT_EQ(cm::group_plan(in, 3, 3).nbg, 11);
  EXPECT_EQ(cm::group_plan(in, 3, 3).sid, 0);
  slots[2] = 5;  // row 2 (the longest) reads past the 1-row table: inactive, not counted
  EXPECT_FALSE(cm::row_facts(in, 2).active);
  EXPECT_EQ(cm::group_plan(in, 0, 4).Lg, 10);
  const std::int64_t shorts[2] = {2, 1};  // trivial rows (nb <= topk): nothing to score
  in.lens = shorts;
  EXPECT_EQ(cm::group_plan(in, 0, 2).sid, -1);
  EXPECT_EQ(cm::group_plan(in, 0, 2).Lg, 0);
  // pack 4, gqa 2: tile row 5 -> draft 2, head-in-group 1 -> q head kvh*2 + 1.
  const cm::TileRow tr = cm::tile_row(5, 4, 2);
  EXPECT_EQ(tr.draft, 2);
  EXPECT_EQ(tr.head, 1);
  EXPECT_TRUE(tr.used);
  EXPECT_FALSE(cm::tile_row(8, 4, 2).used);
  EXPECT_EQ(cm::tile_query_row(12, tr), 14);  // tile starting at row 12 (group 3 of 4)
  EXPECT_EQ(cm::tile_query_head(1, 2, tr), 3);
  EXPECT_TRUE(cm::pack_fits(4, 4));
  EXPECT_FALSE(cm::pack_fits(5, 4));
  EXPECT_FALSE(cm::pack_fits(0, 1));
}

// The packed plan's row axis (graph-constant) and the device-side group decision.
TEST(KernelsCommon, PackedPlanRowAxisAndGroupDecision) {
  // R 14, P 4: programs 0..2 are the whole groups (rows 0-3, 4-7, 8-11), 3 and 4 the
  // trailing rows 12 and 13.
  EXPECT_EQ(cm::packed_batch(14, 4), 3 + 2);
  EXPECT_EQ(cm::packed_batch(16, 4), 4);
  EXPECT_EQ(cm::packed_batch(3, 4), 3);    // no whole group: every row alone
  EXPECT_EQ(cm::packed_batch(14, 1), 14);  // per-row plan
  const cm::ProgramRows g1 = cm::program_rows(1, 14, 4), t0 = cm::program_rows(3, 14, 4),
                        t1 = cm::program_rows(4, 14, 4);
  EXPECT_EQ(g1.first, 4);
  EXPECT_EQ(g1.rows, 4);
  EXPECT_EQ(t0.first, 12);
  EXPECT_EQ(t0.rows, 1);
  EXPECT_EQ(t1.first, 13);
  EXPECT_EQ(t1.rows, 1);
  EXPECT_EQ(cm::program_rows(5, 14, 1).first, 5);
  // Rows: group 0 one request (slot 7), group 1 a request boundary (7, 7, 3, 3), group 2
  // graph padding (slot 0) with an inactive row (slot 99 past the table), trailing rows on
  // slot 0 (same slot id, but a partial group).
  const std::int64_t slots[14] = {7, 7, 7, 7, 7, 7, 3, 3, 0, 0, 99, 0, 0, 0};
  EXPECT_TRUE(cm::group_packs(slots, 0, 4, 4));
  EXPECT_FALSE(cm::group_packs(slots, 4, 4, 4));
  EXPECT_FALSE(cm::group_packs(slots, 8, 4, 4));
  EXPECT_FALSE(cm::group_packs(slots, 12, 1, 4));  // partial group, although its slots agree
  EXPECT_FALSE(cm::group_packs(slots, 11, 3, 4));  // three rows are not a group of 4
  EXPECT_TRUE(cm::group_packs(slots, 10, 1, 1));   // per-row plan: a row is its own tile
  const std::int64_t alias[2] = {3, 3 - 50};       // the same table row, another slot id value
  EXPECT_FALSE(cm::group_packs(alias, 0, 2, 2));
  const cm::ProgramTiles a = cm::program_tiles(slots, 0, 14, 4);
  EXPECT_EQ(a.first, 0);
  EXPECT_EQ(a.count, 1);
  EXPECT_EQ(a.pack, 4);
  const cm::ProgramTiles b = cm::program_tiles(slots, 2, 14, 4);
  EXPECT_EQ(b.first, 8);
  EXPECT_EQ(b.count, 4);
  EXPECT_EQ(b.pack, 1);
  const cm::ProgramTiles t = cm::program_tiles(slots, 4, 14, 4);
  EXPECT_EQ(t.first, 13);
  EXPECT_EQ(t.count, 1);
  EXPECT_EQ(t.pack, 1);
  // Every row lies in exactly one tile of exactly one program, packed or not.
  for (int P : {1, 2, 3, 4, 5, 16})
    for (std::int64_t R = 0; R <= 14; ++R) {
      std::vector<int> seen(static_cast<std::size_t>(R), 0);
      for (std::int64_t x = 0; x < cm::packed_batch(R, P); ++x) {
        const cm::ProgramTiles pt = cm::program_tiles(slots, x, R, P);
        for (int i = 0; i < pt.count * pt.pack; ++i) {
          ASSERT_LT(pt.first + i, R) << "P " << P << " R " << R << " x " << x;
          ++seen[static_cast<std::size_t>(pt.first + i)];
        }
      }
      for (std::int64_t r = 0; r < R; ++r)
        ASSERT_EQ(seen[static_cast<std::size_t>(r)], 1) << "P " << P << " R " << R << " row " << r;
    }
}

TEST(KernelsCommon, BlocksAndTrivialRows) {
  EXPECT_EQ(cm::num_blocks(0, 16), 0);
  EXPECT_EQ(cm::num_blocks(16, 16), 1);
  EXPECT_EQ(cm::num_blocks(17, 16), 2);
  EXPECT_EQ(cm::block_tokens(1, 17, 16), 1);
  EXPECT_EQ(cm::block_tokens(0, 17, 16), 16);
  EXPECT_EQ(cm::block_tokens(2, 17, 16), 0);
  EXPECT_TRUE(cm::trivial_row(4, 4));
  EXPECT_FALSE(cm::trivial_row(5, 4));
  EXPECT_TRUE(cm::row_writes_scores(0, 5, 4));
  EXPECT_FALSE(cm::row_writes_scores(-1, 5, 4));
  EXPECT_FALSE(cm::row_writes_scores(3, 4, 4));
  std::int32_t out[5];
  cm::trivial_topk(3, 5, out);
  EXPECT_EQ(std::vector<std::int32_t>(out, out + 5), (std::vector<std::int32_t>{0, 1, 2, -1, -1}));
  cm::trivial_topk(0, 5, out);
  EXPECT_EQ(std::vector<std::int32_t>(out, out + 5), (std::vector<std::int32_t>(5, -1)));
  EXPECT_EQ(cm::score_index(1, 2, 3, 4, 10), (1 * 4 + 2) * 10 + 3);
}

TEST(KernelsCommon, DotLaneOrderAndLogitScaleOrder) {
  // Lane order: lane 0 gets 1e8 and -1e8 (cancel), lanes 1..15 one each: 15.
  // A sequential sum would absorb the ones into 1e8 and return 0.
  std::vector<float> a(32, 0.0f), b(32, 1.0f);
  a[0] = 1e8f;
  for (int d = 1; d < 16; ++d) a[d] = 1.0f;
  a[16] = -1e8f;
  EXPECT_EQ(cm::dot_fp32(a.data(), b.data(), 32), 15.0f);
  // Tail elements (n not a multiple of 16) land in lanes 0.. of the last step.
  std::vector<float> c(19, 1.0f);
  EXPECT_EQ(cm::dot_fp32(c.data(), c.data(), 19), 19.0f);
  // SGLang's fp32 order ((sm*q) * log2e) * k_scale; for these values the other two
  // association orders round differently.
  volatile float sq = 0.1f, ks = 0.3f, l2e = cm::kLog2e;
  const float sl = sq * l2e;
  EXPECT_EQ(cm::logit_multiplier(sq, ks), sl * ks);
  const float lk = l2e * ks, sk = sq * ks;
  EXPECT_NE(cm::logit_multiplier(sq, ks), sq * lk);
  EXPECT_NE(cm::logit_multiplier(sq, ks), sk * l2e);
}

TEST(KernelsCommon, BlockScoreMaxAndLse) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float s[4] = {1.0f, 3.0f, nan, 2.0f};
  // A NaN logit makes the block NaN, max and lse, wherever it sits (docs/semantics.md
  // "Scores"; the oracle's rule): first, middle, last, or the only logit.
  EXPECT_TRUE(std::isnan(cm::block_score(s, 4, 1, false)));
  EXPECT_TRUE(std::isnan(cm::block_score(s, 4, 1, true)));
  const float nan_first[3] = {nan, 7.0f, -1.0f}, nan_last[3] = {7.0f, -1.0f, nan};
  for (bool lse : {false, true}) {
    EXPECT_TRUE(std::isnan(cm::block_score(nan_first, 3, 1, lse))) << lse;
    EXPECT_TRUE(std::isnan(cm::block_score(nan_last, 3, 1, lse))) << lse;
    EXPECT_TRUE(std::isnan(cm::block_score(nan_first, 1, 1, lse))) << lse;
    EXPECT_FLOAT_EQ(cm::block_score(nan_first + 1, 2, 1, lse), lse ? 7.0f + std::log2(1.0f + 0.00390625f) : 7.0f)
        << lse;
  }
  // +inf logits: the block is +inf (max and lse: m = +inf is the score, no inf - inf in
  // the sum), unless a NaN is there too; -inf logits are skipped like masked lanes.
  const float pinf[4] = {1.0f, INFINITY, -INFINITY, INFINITY};
  for (bool lse : {false, true}) {
    EXPECT_EQ(cm::block_score(pinf, 4, 1, lse), INFINITY) << lse;
    EXPECT_EQ(cm::block_score(pinf + 1, 1, 1, lse), INFINITY) << lse;
    const float inf_nan[2] = {INFINITY, nan}, nan_inf[2] = {nan, INFINITY};
    EXPECT_TRUE(std::isnan(cm::block_score(inf_nan, 2, 1, lse))) << lse;
    EXPECT_TRUE(std::isnan(cm::block_score(nan_inf, 2, 1, lse))) << lse;
  }
  EXPECT_EQ(cm::block_score(pinf, 2, 2, true), 1.0f);  // 1, -inf: 1 + log2(2^0 + 0)
  // The max keeps the first of equal values (-0 then +0 stays -0), as the oracle's std::max.
  const float zeros[2] = {-0.0f, 0.0f};
  EXPECT_TRUE(std::signbit(cm::block_score(zeros, 2, 1, false)));
  EXPECT_EQ(cm::block_score(s, 0, 1, false), -INFINITY);
  EXPECT_EQ(cm::block_score(s, 0, 1, true), -INFINITY);
  const float two[2] = {5.0f, 5.0f};
  EXPECT_EQ(cm::block_score(two, 2, 1, true), 6.0f);  // log2(2^5 + 2^5)
  EXPECT_EQ(cm::block_score(two, 1, 1, true), 5.0f);
  const float strided[4] = {1.0f, 100.0f, 2.0f, 100.0f};
  EXPECT_EQ(cm::block_score(strided, 2, 2, false), 2.0f);
  const float ninf[2] = {-INFINITY, -INFINITY};
  EXPECT_EQ(cm::block_score(ninf, 2, 1, true), -INFINITY);
}

// The online state the GPU kernels merge lanes with (cm::state_add / state_merge, the
// twin's block_score is one state_add): adding a block in groups and merging partial
// states gives the block's score, hand-worked on values whose sums are exact.
float grouped_score(const std::vector<std::vector<float>>& groups, bool lse, bool merge) {
  cm::BlockState st;
  cm::state_reset(st);
  for (const auto& g : groups) {
    if (!merge) {
      cm::state_add(st, g.data(), static_cast<int>(g.size()), 1, lse, cm::MaxStep{});
      continue;
    }
    cm::BlockState part;
    cm::state_reset(part);
    cm::state_add(part, g.data(), static_cast<int>(g.size()), 1, lse, cm::MaxStep{});
    cm::state_merge(st, part, lse, cm::MaxStep{});
  }
  return cm::state_score(st, lse);
}

TEST(KernelsCommon, BlockStateGroupsAndMergesGiveTheBlockScore) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (bool merge : {false, true}) {
    SCOPED_TRACE(merge ? "merged partial states" : "groups added in turn");
    // 3 then 5: the running sum 2^0 is rescaled by 2^(3-5) once: 5 + log2(1.25).
    EXPECT_EQ(grouped_score({{3.0f}, {5.0f}}, true, merge), 5.0f + std::log2(1.25f));
    EXPECT_EQ(grouped_score({{5.0f}, {3.0f}}, true, merge), 5.0f + std::log2(1.25f));
    EXPECT_EQ(grouped_score({{5.0f, 5.0f}, {5.0f, 5.0f}}, true, merge), 7.0f);  // log2(4 * 2^5)
    EXPECT_EQ(grouped_score({{1.0f, 4.0f}, {2.0f}}, false, merge), 4.0f);
    // Empty and fully masked groups change nothing, first or last.
    EXPECT_EQ(grouped_score({{}, {5.0f, 5.0f}, {-INFINITY}}, true, merge), 6.0f);
    EXPECT_EQ(grouped_score({{-INFINITY}, {}}, true, merge), -INFINITY);
    // A NaN or +inf in any group decides the block, as in block_score.
    EXPECT_TRUE(std::isnan(grouped_score({{1.0f}, {nan}, {2.0f}}, true, merge)));
    EXPECT_TRUE(std::isnan(grouped_score({{nan}, {INFINITY}}, false, merge)));
    EXPECT_EQ(grouped_score({{1.0f}, {INFINITY}, {2.0f}}, true, merge), INFINITY);
  }
  // The whole block in one group is block_score, bit for bit.
  const float v[5] = {0.3f, -2.5f, 1.75f, 1.7f, -40.0f};
  const float whole = grouped_score({{v[0], v[1], v[2], v[3], v[4]}}, true, false);
  EXPECT_EQ(std::bit_cast<std::uint32_t>(whole), std::bit_cast<std::uint32_t>(cm::block_score(v, 5, 1, true)));
}

}  // namespace

// The score grid's CTA order: every (program, chunk) exactly once in both plans; per-row
// (pack 1) chunk-major, so the rows of one request score a chunk in neighbouring CTAs (the
// L2 sharing the per-row bench depends on); packed program-major. Shown to fail on
// `{x / chunks, x % chunks}` for pack 1 (neighbour check) and on `x / batch` as the
// program (coverage check). The native score kernel calls program_chunk_of_plan (its plan a
// template constant), the others program_chunk: both are checked, and must agree (fails on
// program_chunk passing `pack != 1`).
TEST(KernelsCommon, ProgramChunkCoversTheGridOnceInItsOrder) {
  for (const int pack : {1, 4})
    for (const std::int64_t batch : {1, 5, 64})
      for (const int chunks : {1, 3, 16}) {
        std::vector<int> seen(static_cast<std::size_t>(batch * chunks), 0);
        for (std::int64_t x = 0; x < batch * chunks; ++x) {
          const cm::ProgramChunk pc = cm::program_chunk_of_plan(x, batch, chunks, pack == 1);
          const cm::ProgramChunk via_pack = cm::program_chunk(x, batch, chunks, pack);
          ASSERT_TRUE(via_pack.program == pc.program && via_pack.chunk == pc.chunk) << "pack " << pack << " x " << x;
          ASSERT_TRUE(pc.program >= 0 && pc.program < batch && pc.chunk >= 0 && pc.chunk < chunks) << x;
          ++seen[static_cast<std::size_t>(pc.program * chunks + pc.chunk)];
          if (x + 1 < batch * chunks) {
            const cm::ProgramChunk nx = cm::program_chunk_of_plan(x + 1, batch, chunks, pack == 1);
            const bool row_major_step = nx.chunk == pc.chunk && nx.program == pc.program + 1;
            const bool chunk_step = nx.program == pc.program && nx.chunk == pc.chunk + 1;
            if (pack == 1 && (x + 1) % batch != 0) {
              EXPECT_TRUE(row_major_step) << x;
            }
            if (pack != 1 && (x + 1) % chunks != 0) {
              EXPECT_TRUE(chunk_step) << x;
            }
          }
        }
        for (const int n : seen) EXPECT_EQ(n, 1) << "pack " << pack << " batch " << batch << " chunks " << chunks;
      }
}

// The plans of plans.hpp: the chunk plan (the GPU's NB / kMinChunkBlocks cap), the top-k plan and the
// tile row plan.
TEST(KernelsCommon, ChunkTopkAndRowPlans) {
  EXPECT_EQ(cm::score_chunks(32, 1, 100000), 32);  // 1024 programs / 32; cap 6250: not reached
  EXPECT_EQ(cm::score_chunks(64, 1, 1024), 16);    // per-row 16 x 131072 (bench): 1024 CTAs
  EXPECT_EQ(cm::score_chunks(16, 1, 1024), 64);    // packed 16 x 131072: 1024 / 16 (cap 256: not reached)
  EXPECT_EQ(cm::score_chunks(48, 1, 100000), 16);  // 21.3 rounded down to a power of two
  EXPECT_EQ(cm::score_chunks(4096, 1, 100000), 1);
  EXPECT_EQ(cm::score_chunks(32, 1, 51), 8);   // 32 capped at the fill 256 / 32 (above 51 / 16 = 3, below 51 / 4)
  EXPECT_EQ(cm::score_chunks(8, 1, 32), 8);    // 8 rows of 4K tokens: fill 32, capped at 32 / 4 blocks
  EXPECT_EQ(cm::score_chunks(4, 4, 297), 18);  // 4 groups x 4 heads of 38K: 297 / 16 = 18 (fill 16)
  EXPECT_EQ(cm::score_chunks(8, 1, 212), 32);  // 8 rows of 27K: fill 256 / 8 = 32 (212 / 16 = 13)
  EXPECT_EQ(cm::score_chunks(32, 1, 7), 1);
  EXPECT_EQ(cm::score_chunks(32, 1, 51, 5), 5);  // forced
  // fp8 K on the packed plan: one wave of kFp8PackedWaveSlots = 396 CTAs (132 SMs x 3).
  EXPECT_EQ(cm::fp8_packed_chunks(16, 1, 1024), 24);  // packed 16 x 131072: 396 / 16 = 24.75
  EXPECT_EQ(cm::fp8_packed_chunks(32, 1, 4096), 12);  // packed 32 x 524288: 396 / 32 = 12.4
  EXPECT_EQ(cm::fp8_packed_chunks(4, 4, 297), 24);    // 16 programs of 38K tokens
  EXPECT_EQ(cm::fp8_packed_chunks(1, 1, 26), 6);      // one group of 3.3K tokens: 26 / 4 blocks
  EXPECT_EQ(cm::fp8_packed_chunks(2, 1, 3), 1);       // fewer blocks than a warp each: one chunk
  EXPECT_EQ(cm::fp8_packed_chunks(500, 1, 100000), 1);
  EXPECT_EQ(cm::fp8_packed_chunks(16, 1, 1024, 7), 7);  // forced
  // bf16 K on the packed plan (IXO_BF16_PACKED_WAVE=1): one wave of kBf16PackedWaveSlots = 264
  // CTAs (132 SMs x 2); else score_chunks.
  const std::int64_t w = cm::kBf16PackedWaveSlots;
  EXPECT_EQ(w, 264);
  EXPECT_EQ(cm::packed_wave_chunks(16, 1, 1024, w), 16);  // packed 16 x 131072: 264 / 16 = 16.5
  EXPECT_EQ(cm::packed_wave_chunks(32, 1, 4096, w), 8);   // packed 32 x 524288: 264 / 32 = 8.25
  EXPECT_EQ(cm::packed_wave_chunks(4, 4, 297, w), 16);    // 16 programs of 38K tokens
  EXPECT_EQ(cm::packed_wave_chunks(2, 1, 32, w), 8);      // 2 groups of 4K tokens: 32 / 4 blocks
  EXPECT_EQ(cm::packed_wave_chunks(300, 1, 100000, w), 1);
  EXPECT_EQ(cm::bf16_packed_chunks(16, 1, 1024), IXO_BF16_PACKED_WAVE ? 16 : 64);
  EXPECT_EQ(cm::bf16_packed_chunks(4, 4, 297), IXO_BF16_PACKED_WAVE ? 16 : 18);
  EXPECT_EQ(cm::bf16_packed_chunks(16, 1, 1024, 7), 7);  // forced
  {
    cm::IndexConfig k;  // 16 requests x 4 draft rows of 131072 tokens, bs 128, P 4
    k.R = 64;
    k.NB = 1024;
    k.packed_queries = 4;
    for (const int code : {cm::kE4m3fn, cm::kE4m3fnuz, cm::kE5m2}) {
      k.k_code = code;
      EXPECT_EQ(cm::native_plan(k, true).chunks, 24) << code;   // packed: one wave
      EXPECT_EQ(cm::native_plan(k, false).chunks, 16) << code;  // per-row: score_chunks(64, 1, 1024)
      EXPECT_EQ(cm::native_plan(k, true, 5).chunks, 5) << code;
    }
    k.k_code = cm::kBf16;
    EXPECT_EQ(cm::native_plan(k, true).chunks, IXO_BF16_PACKED_WAVE ? 16 : 64);  // one wave, or score_chunks
    EXPECT_EQ(cm::native_plan(k, false).chunks, 16);  // bf16 per-row: score_chunks(64, 1, 1024)
    k.k_code = cm::kE4m3fn;
    k.packed_queries = 5;                                                 // 5 x 1 tile rows still pack
    EXPECT_EQ(cm::native_plan(k, true).chunks, 396 / (64 / 5 + 64 % 5));  // batch 16: 24
  }
  EXPECT_TRUE(cm::packed_plan_fits(4, 8, 2));  // 4 * 4 tile rows
  EXPECT_FALSE(cm::packed_plan_fits(5, 8, 2));
  EXPECT_FALSE(cm::packed_plan_fits(1, 1, 1));
  EXPECT_FALSE(cm::packed_plan_fits(2, 3, 2));  // Hq not a multiple of Hk

  const std::int64_t slots[3] = {0, 0, 7};
  const std::int64_t lens[3] = {40, 10, 40};  // bs 4, topk 4: nb 10 (ranked), 3 (trivial), inactive
  const cm::RowInputs in{slots, lens, 10, 1, 4, 4};
  const cm::TopkPlan ranked = cm::topk_plan(in, 0, 10);
  EXPECT_FALSE(ranked.shortcut);
  EXPECT_EQ(ranked.n, 10);
  EXPECT_EQ(ranked.k, 4);
  EXPECT_EQ(ranked.kept, 4);
  const cm::TopkPlan trivial = cm::topk_plan(in, 1, 10);
  EXPECT_TRUE(trivial.shortcut);
  EXPECT_EQ(cm::topk_tail_id(trivial, 2), 2);
  EXPECT_EQ(cm::topk_tail_id(trivial, 3), -1);
  const cm::TopkPlan inactive = cm::topk_plan(in, 2, 10);
  EXPECT_TRUE(inactive.shortcut);
  EXPECT_EQ(inactive.nb, 0);
  EXPECT_EQ(cm::topk_tail_id(inactive, 0), -1);

  // Tile of rows [0, 2), gqa 2, K head 1 of 2: tile row 3 = (row 1, q head 1*2 + 1).
  const cm::GroupPlan g = cm::group_plan(in, 0, 2);
  EXPECT_EQ(g.Lg, 40);  // row 1 is trivial: the group length is row 0's
  const cm::RowPlan m = cm::row_plan(in, cm::TileShape{0, 2, 2, 2, 1}, 3, g);
  EXPECT_TRUE(m.used);
  EXPECT_EQ(m.row, 1);
  EXPECT_EQ(m.head, 3);
  EXPECT_EQ(m.store_row, 1);
  EXPECT_EQ(m.store_head, 3);
  EXPECT_FALSE(m.f.writes);  // trivial
  EXPECT_EQ(m.L_mask, 10);   // its own length, not the group's
  EXPECT_FALSE(cm::row_plan(in, cm::TileShape{0, 2, 2, 2, 1}, 4, g).used);
  const cm::RowPlan m0 = cm::row_plan(in, cm::TileShape{0, 2, 2, 2, 1}, 0, g);
  EXPECT_TRUE(cm::row_writes_block(m0, 9, 10));
  EXPECT_FALSE(cm::row_writes_block(m0, 10, 11));
  EXPECT_EQ(m0.nb_force, 10);
}
