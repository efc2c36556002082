// Every class of malformed input gets an InputError naming the field and the value.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
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
    try {
      ixo::load_case(dir);
      FAIL() << "no error; expected one for " << field;
    } catch (const ixo::InputError& e) {
      EXPECT_EQ(e.field(), field) << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  }
  std::string json_with(const std::string& key, const std::string& value) const {
    std::string j = ixo::config_to_json(c.cfg);
    const auto p = j.find("\"" + key + "\"");
    const auto colon = j.find(':', p), end = j.find_first_of(",\n}", colon + 2);
    return j.substr(0, colon + 2) + value + j.substr(end);
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
  std::string j = ixo::config_to_json(c.cfg);
  j.insert(j.find('{') + 1, "\"top_k\": 3,");
  write_json(j);
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

TEST_F(BadInput, PackedQueriesMustDivideTheRows) {
  auto cfg = c.cfg;
  cfg.packed_queries = 3;  // tiny: 4 rows
  write_json(ixo::config_to_json(cfg));
  expect_error("packed_queries", "does not divide");
}

TEST_F(BadInput, RowsOfAPackedGroupMustShareTheirRequest) {
  auto s = c.slot_ids;
  s[1] = s[0] + 1;
  ixo::write_npy(path("slot_ids.npy"), "<i8", {c.R}, s.data(), s.size() * 8);
  expect_error("slot_ids[1]", "same packed group");
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

}  // namespace
