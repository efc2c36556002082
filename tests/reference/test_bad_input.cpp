// Every class of malformed input gets an InputError naming the field and the value.
#include <gtest/gtest.h>

#include <algorithm>

#include "expect_load_error.hpp"
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <random>

#include "ixo/case_io.hpp"
#include "ixo/error.hpp"
#include "ixo/generate.hpp"
#include "ixo/npy.hpp"

namespace fs = std::filesystem;

namespace {

struct BadInput : ::testing::Test {
  std::string dir;
  ixo::Case c;
  void SetUp() override {
    dir = (fs::temp_directory_path() / ("ixo-bad-" + std::to_string(std::random_device{}()))).string();
    c = ixo::generate(ixo::preset("tiny"), 3);
    ixo::save_case(c, dir);
  }
  void TearDown() override { fs::remove_all(dir); }
  std::string path(const char* f) const { return (fs::path(dir) / f).string(); }
  void write_json(const std::string& text) const { std::ofstream(path("case.json")) << text; }
  // Expects load_case to throw an InputError for `field` whose message contains `needle`.
  void expect_error(const std::string& field, const std::string& needle) const {
    ixo::test::expect_load_error(dir, field, {needle});
  }
  std::string json_with(const std::string& key, const std::string& value) const {
    std::string j = ixo::config_to_json(c.cfg);
    const auto p = j.find("\"" + key + "\"");
    const auto colon = j.find(':', p), end = j.find_first_of(",\n}", colon + 2);
    return j.substr(0, colon + 2) + value + j.substr(end);
  }
  // case.json with `"key": value,` inserted before the first key.
  std::string json_plus(const std::string& key, const std::string& value) const {
    std::string j = ixo::config_to_json(c.cfg);
    j.insert(j.find('{') + 1, "\"" + key + "\": " + value + ",");
    return j;
  }
};

TEST_F(BadInput, GeneratedCaseLoads) { EXPECT_NO_THROW(ixo::load_case(dir)); }

TEST_F(BadInput, WrongRank) {
  ixo::write_npy(path("q.npy"), "<u2", {c.R, c.Hq * c.D}, c.q.data(), c.q.size() * 2);
  expect_error("q", "rank 2");
}

TEST_F(BadInput, WrongShapeOfSlotIds) {
  ixo::write_npy(path("slot_ids.npy"), "<i8", {c.R - 1}, c.slot_ids.data(), (c.slot_ids.size() - 1) * 8);
  expect_error("slot_ids", "does not match q rows");
}

TEST_F(BadInput, MismatchedHeadDim) {
  std::vector<std::uint16_t> k(static_cast<std::size_t>(c.S * c.Hk * (c.D + 1)), 0);
  ixo::write_npy(path("k_cache.npy"), "<u2", {c.S, c.Hk, c.D + 1}, k.data(), k.size() * 2);
  expect_error("k_cache", "does not match q head dim");
}

TEST_F(BadInput, HqNotAMultipleOfHk) {
  std::vector<std::uint16_t> k(static_cast<std::size_t>(c.S * 3 * c.D), 0);  // Hq = 2, Hk = 3
  ixo::write_npy(path("k_cache.npy"), "<u2", {c.S, 3, c.D}, k.data(), k.size() * 2);
  expect_error("q", "not a multiple");
}

TEST_F(BadInput, TokenSlotOutsideTheCache) {
  auto t = c.req_to_token;
  const std::int64_t sid = ixo::table_row(c, 0);
  t[static_cast<std::size_t>(sid * c.width)] = static_cast<std::int32_t>(c.S);  // one past the end
  ixo::write_npy(path("req_to_token.npy"), "<i4", {c.rows, c.width}, t.data(), t.size() * 4);
  expect_error("req_to_token[" + std::to_string(sid) + ",0]", "token slot " + std::to_string(c.S) + " is outside");
  t[static_cast<std::size_t>(sid * c.width)] = static_cast<std::int32_t>(-c.S - 1);  // below the alias range
  ixo::write_npy(path("req_to_token.npy"), "<i4", {c.rows, c.width}, t.data(), t.size() * 4);
  expect_error("req_to_token[" + std::to_string(sid) + ",0]", "is outside");
}

TEST_F(BadInput, SeqLenBeyondTheTableWidth) {
  auto l = c.seq_lens;
  l[1] = c.width + 1;
  ixo::write_npy(path("seq_lens.npy"), "<i8", {c.R}, l.data(), l.size() * 8);
  expect_error("seq_lens[1]", "exceeds the req_to_token width");
}

TEST_F(BadInput, NegativeSeqLen) {
  std::vector<std::int32_t> l(c.seq_lens.begin(), c.seq_lens.end());  // int32 is accepted too
  l[2] = -5;
  ixo::write_npy(path("seq_lens.npy"), "<i4", {c.R}, l.data(), l.size() * 4);
  expect_error("seq_lens[2]", "-5");
}

TEST_F(BadInput, TopkZeroAndTooLarge) {
  write_json(json_with("topk", "0"));
  expect_error("topk", "got 0");
  write_json(json_with("topk", "2049"));
  expect_error("topk", "got 2049");
}

TEST_F(BadInput, BlockSizeZero) {
  write_json(json_with("block_size", "0"));
  expect_error("block_size", "got 0");
}

TEST_F(BadInput, UnknownDtype) {
  write_json(json_with("k_dtype", "\"fp16\""));
  expect_error("k_dtype", "'fp16'");
}

TEST_F(BadInput, UnknownScoreType) {
  write_json(json_with("score_type", "\"mean\""));
  expect_error("score_type", "'mean'");
}

TEST_F(BadInput, UnknownKeyIsAnError) {
  write_json(json_plus("top_k", "3"));
  expect_error("top_k", "unknown key");
}

TEST_F(BadInput, WrongJsonType) {
  write_json(json_with("init_blocks", "\"one\""));
  expect_error("init_blocks", "must be an integer");
}

TEST_F(BadInput, BadJson) {
  write_json("{\"block_size\": 16, ");
  expect_error("case.json", "not valid JSON");
}

TEST_F(BadInput, NumberOverflowingADouble) {
  write_json(json_with("q_scale", "1e400"));
  expect_error("case.json", "number overflow");
}

TEST_F(BadInput, TableTooWideForAScoreBuffer) {
  std::vector<std::int32_t> t(static_cast<std::size_t>(0));
  ixo::write_npy(path("req_to_token.npy"), "<i4", {0, std::int64_t{1} << 40}, t.data(), 0);  // no rows, huge width
  expect_error("req_to_token", "blocks of");
}

TEST_F(BadInput, MissingNpy) {
  fs::remove(path("seq_lens.npy"));
  expect_error("seq_lens", "cannot open");
}

TEST_F(BadInput, TruncatedNpy) {
  const auto size = fs::file_size(path("q.npy"));
  fs::resize_file(path("q.npy"), size - 10);
  expect_error("q", "truncated");
}

TEST_F(BadInput, NotAnNpyFile) {
  std::ofstream(path("k_cache.npy")) << "hello";
  expect_error("k_cache", "bad magic");
}

TEST_F(BadInput, WrongNpyDtype) {
  std::vector<std::int64_t> t(c.req_to_token.begin(), c.req_to_token.end());
  ixo::write_npy(path("req_to_token.npy"), "<i8", {c.rows, c.width}, t.data(), t.size() * 8);
  expect_error("req_to_token", "expected <i4");
}

TEST_F(BadInput, Fp8CacheWithBf16Elements) {
  auto cfg = c.cfg;
  cfg.k_dtype = ixo::KDtype::e4m3fn;
  write_json(ixo::config_to_json(cfg));  // k_cache.npy still holds uint16
  expect_error("k_cache", "expected |u1");
}

// packed_queries is a launch hint, never part of the truth: real CUDA-graph batches have
// partial groups and groups that mix slot ids, and they are valid input (they failed as
// bad input before; the packed backends run such rows per row).
TEST_F(BadInput, RowsThatDoNotFillAPackedGroupAreValid) {
  auto cfg = c.cfg;
  cfg.packed_queries = 3;  // tiny: 4 rows
  write_json(ixo::config_to_json(cfg));
  EXPECT_NO_THROW(ixo::load_case(dir));
}

TEST_F(BadInput, PackedGroupsMixingSlotIdsAreValid) {
  auto s = c.slot_ids;
  s[1] = s[0] + 1;
  ixo::write_npy(path("slot_ids.npy"), "<i8", {c.R}, s.data(), s.size() * 8);
  EXPECT_NO_THROW(ixo::load_case(dir));
}

TEST_F(BadInput, ObservedTopkWithTheWrongShape) {
  std::vector<std::int32_t> t(static_cast<std::size_t>(c.Hq * c.R * (c.cfg.topk + 1)), -1);
  ixo::write_npy(path("topk_idx.npy"), "<i4", {c.Hq, c.R, c.cfg.topk + 1}, t.data(), t.size() * 4);
  try {
    ixo::load_observed(c, path("topk_idx.npy"), "");
    FAIL();
  } catch (const ixo::InputError& e) {
    EXPECT_EQ(e.field(), "topk_idx");
    EXPECT_NE(std::string(e.what()).find("(Hq, R, topk)"), std::string::npos) << e.what();
  }
}

TEST_F(BadInput, ObservedScoresWithTheWrongDtype) {
  std::vector<std::int32_t> t(static_cast<std::size_t>(c.Hq * c.R * c.cfg.topk), -1);
  ixo::write_npy(path("topk_idx.npy"), "<i4", {c.Hq, c.R, c.cfg.topk}, t.data(), t.size() * 4);
  std::vector<double> s(static_cast<std::size_t>(c.Hq * c.R * c.NB()), 0);
  ixo::write_npy(path("scores.npy"), "<f8", {c.Hq, c.R, c.NB()}, s.data(), s.size() * 8);
  try {
    ixo::load_observed(c, path("topk_idx.npy"), path("scores.npy"));
    FAIL();
  } catch (const ixo::InputError& e) {
    EXPECT_EQ(e.field(), "scores");
    EXPECT_NE(std::string(e.what()).find("<f8"), std::string::npos) << e.what();
  }
}

// Issue 10: a key given twice is an error naming the key (the JSON library keeps the last).
TEST_F(BadInput, DuplicateKeyInCaseJson) {
  write_json(json_plus("topk", "3"));
  expect_error("topk", "more than once in case.json");
}

TEST_F(BadInput, DeeplyNestedJsonIsRefusedNotDumped) {
  const int depth = 100000;  // dumping this for the message would overflow the stack
  write_json(json_with("topk", std::string(depth, '[') + std::string(depth, ']')));
  expect_error("case.json", "nests deeper than 64 levels");
}

TEST_F(BadInput, IntegerBeyondInt64IsOutOfRange) {
  write_json(json_with("topk", "18446744073709551615"));  // parsed as uint64, was read as -1
  expect_error("topk", "out of range: 18446744073709551615");
}

// The kernels form ((sm_scale*q_scale)*log2e)*k_scale in fp32: it must stay a finite normal float.
TEST_F(BadInput, ScaleProductOverflowingFloat32) {
  const std::string fields = "q_scale, k_scale, sm_scale";
  auto with = [&](double q, double k, std::optional<double> sm) {
    auto cfg = c.cfg;
    cfg.q_scale = q;
    cfg.k_scale = k;
    cfg.sm_scale = sm;
    write_json(ixo::config_to_json(cfg));
  };
  with(1e300, 1e300, std::nullopt);  // inf even in float64
  expect_error(fields, "1e+300*1e+300*0.125 (D^-0.5)*1.4427 overflows float32");
  with(1e20, 1e20, std::nullopt);  // finite in float64, inf in float32
  expect_error(fields, "overflows float32");
  with(1e-39, 1e39, 1.0);  // the product is fine, but k_scale itself is not a float
  expect_error(fields, "overflows float32");
  with(1.0, 1.0, 1e39);
  expect_error(fields, "overflows float32");
  with(1e-30, 1e-30, std::nullopt);  // flushed to 0 in fp32 while the exact product is not
  expect_error(fields, "underflows float32");
  with(1e10, 1e10, std::nullopt);  // 1.8e19: fine
  EXPECT_NO_THROW(ixo::load_case(dir));
  with(0.0, 1.0, std::nullopt);  // an exact zero is every kernel's zero too
  EXPECT_NO_THROW(ixo::load_case(dir));
  with(-2.0, 0.5, -3.0);
  EXPECT_NO_THROW(ixo::load_case(dir));
}

TEST_F(BadInput, WidthNearInt64MaxDoesNotWrapTheBlockCount) {
  std::vector<std::int32_t> t;
  ixo::write_npy(path("req_to_token.npy"), "<i4", {0, std::numeric_limits<std::int64_t>::max()}, t.data(), 0);
  expect_error("req_to_token", "blocks of");
}

// validate() on a Case built in memory: shape products that wrap around int64 are errors,
// not a size that happens to match an empty tensor.
TEST(ValidateProducts, OverflowingShapeProductsAreNamed) {
  auto expect = [](const ixo::Case& c, const std::string& field, const std::string& needle) {
    try {
      ixo::validate(c);
      ADD_FAILURE() << "no error; expected one for " << field;
    } catch (const ixo::InputError& e) {
      EXPECT_EQ(e.field(), field) << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  ixo::Case c;  // every tensor empty
  c.D = 64;
  c.R = std::int64_t{1} << 58;  // R x Hq x D = 2^64 wraps to 0
  expect(c, "q", "elements R x Hq x D = 288230376151711744 x 1 x 64 overflows int64");
  c.R = 0;
  c.S = std::int64_t{1} << 58;
  c.Hk = 1;  // S x Hk x D x 2 bytes = 2^65
  expect(c, "k_cache", "bytes S x Hk x D x element size = 288230376151711744 x 1 x 64 x 2 overflows int64");
  c.S = 0;
  c.rows = std::int64_t{1} << 62;
  c.width = 4;
  expect(c, "req_to_token", "elements rows x width = 4611686018427387904 x 4 overflows int64");
}

// The slot-range check scans each table row once up to the longest prefix any row reads from
// it: a bad slot that only a later, longer row of the same table row reads is named with that
// row; a slot past every row's length is never read and is accepted; -S and S - 1 are in range.
TEST(ValidateSlots, ABadSlotReadOnlyByTheLongerRowOfASharedTableRowIsNamedWithThatRow) {
  ixo::Case c = ixo::generate(ixo::preset("tiny"), 3);
  ASSERT_GE(c.R, 2);
  ASSERT_GE(c.width, 12);
  c.slot_ids[1] = c.slot_ids[0];
  c.seq_lens[0] = 5;
  c.seq_lens[1] = 9;
  const std::int64_t b = ixo::table_row(c, 0);
  ASSERT_GE(b, 0);
  for (std::int64_t r = 2; r < c.R; ++r) c.seq_lens[r] = 0;  // only rows 0 and 1 read
  auto slot = [&](std::int64_t t) -> std::int32_t& {
    return c.req_to_token[static_cast<std::size_t>(b * c.width + t)];
  };
  slot(0) = static_cast<std::int32_t>(-c.S);
  slot(4) = static_cast<std::int32_t>(c.S - 1);
  slot(9) = static_cast<std::int32_t>(c.S);  // past both rows: never read
  EXPECT_NO_THROW(ixo::validate(c));
  slot(6) = static_cast<std::int32_t>(c.S);  // read by row 1 only
  try {
    ixo::validate(c);
    ADD_FAILURE() << "no error for slot S at token 6 of row 1";
  } catch (const ixo::InputError& e) {
    EXPECT_EQ(e.field(), "req_to_token[" + std::to_string(b) + ",6]") << e.what();
    EXPECT_NE(std::string(e.what()).find("(row 1)"), std::string::npos) << e.what();
  }
  slot(6) = 0;
  slot(8) = static_cast<std::int32_t>(-c.S - 1);  // the last token row 1 reads
  EXPECT_THROW(ixo::validate(c), ixo::InputError);
}

// A table row that no request reads is never validated: its first entry may hold any value
// (graph-padding tables keep stale rows).
TEST(ValidateSlots, ATableRowNoRequestReadsIsNotChecked) {
  ixo::Case c = ixo::generate(ixo::preset("tiny"), 3);
  std::vector<char> read(static_cast<std::size_t>(c.rows), 0);
  for (std::int64_t r = 0; r < c.R; ++r)
    if (ixo::table_row(c, r) >= 0) read[static_cast<std::size_t>(ixo::table_row(c, r))] = 1;
  const auto unread = std::find(read.begin(), read.end(), 0);
  ASSERT_NE(unread, read.end()) << "tiny seed 3 reads every table row";
  const std::int64_t b = unread - read.begin();
  c.req_to_token[static_cast<std::size_t>(b * c.width)] = static_cast<std::int32_t>(c.S);
  EXPECT_NO_THROW(ixo::validate(c));
}

}  // namespace
