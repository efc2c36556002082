// Paged K and shared slots (issue 25 item 4, docs/semantics.md "Paged K"): the page table
// is the truth and req_to_token is derived from it; case files round-trip it; malformed
// tables are InputErrors naming field and value; sharing pages or slots between requests
// changes no answer (metamorphic: the same case with every page copied to private slots).
#include <gtest/gtest.h>

#include "expect_load_error.hpp"
#include "literal_case.hpp"
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "ixo/case_io.hpp"
#include "ixo/error.hpp"
#include "ixo/generate.hpp"
#include "ixo/npy.hpp"
#include "ixo/oracle.hpp"
#include "ixo/transform.hpp"

namespace fs = std::filesystem;

namespace {

// MSA's two test tables (q8kv8/test_correctness.py): 2 requests x 4 pages over N = 7 pages.
ixo::GenSpec msa_spec(ixo::PageTable kind, int page_size) {
  ixo::GenSpec s = ixo::preset("tiny");
  s.cfg.page_size = page_size;
  s.pages = kind;
  s.rows(2, 1).lengths({40, 50}).slots({0, 1});  // lengths 41, 51 + 8 extra columns: 4 pages of 16
  s.negative_aliases = false;
  return s;
}

std::vector<std::int32_t> table_row_of(const ixo::Case& c, std::int64_t b) {
  return {c.page_table.begin() + b * c.max_pages, c.page_table.begin() + (b + 1) * c.max_pages};
}
std::int32_t slot_at(const ixo::Case& c, std::int64_t b, std::int64_t t) {
  return c.req_to_token[static_cast<std::size_t>(b * c.width + t)];
}

TEST(Paged, DerivedTableOfAHandWrittenCase) {
  ixo::Case c;
  c.cfg.page_size = 2;
  c.rows = 2, c.max_pages = 2;
  c.page_table = {0, 2, 1, 0};
  ixo::derive_req_to_token(c);
  EXPECT_EQ(c.width, 4);
  EXPECT_EQ(c.req_to_token, (std::vector<std::int32_t>{0, 1, 4, 5, 2, 3, 0, 1}));
}

TEST(Paged, ATableOfTheWrongSizeNamesTheElementCountItNeeds) {
  ixo::Case c;
  c.cfg.page_size = 2;
  c.rows = 2, c.max_pages = 3;
  c.page_table = {0, 1, 2, 3, 4};  // 5 elements, [2, 3] needs 6
  try {
    ixo::derive_req_to_token(c);
    FAIL() << "no error for a page table of 5 elements";
  } catch (const ixo::InputError& e) {
    EXPECT_EQ(e.field(), "page_table");
    EXPECT_NE(std::string(e.what()).find("holds 5 elements, shape [2, 3] needs 6"), std::string::npos) << e.what();
  }
}

// rows_sharing_slots counts the table rows whose *read* tokens share a K slot with another
// row's: a table row no request reads (here row 1, whose first slot is row 0's) shares nothing.
TEST(Paged, SharingCountsOnlyTheTokensRowsRead) {
  ixo::Case c = ixo::test::literal_case(ixo::test::small_config(2, 1), 1, 1, 2, {1, 0}, std::vector<float>(8 * 2, 0.5f),
                                        {{0, 1, 2, 3}, {0, 5, 6, 7}}, {0}, {4});
  EXPECT_EQ(ixo::rows_sharing_slots(c), 0);
  c.slot_ids = {0, 1}, c.seq_lens = {4, 1}, c.R = 2, c.q = {c.q[0], c.q[1], c.q[0], c.q[1]};  // row 1 reads slot 0 too
  EXPECT_EQ(ixo::rows_sharing_slots(c), 2);
}

TEST(Paged, IntervalTableIsMsasAndItsSlotsAreHandWorked) {
  const ixo::Case c = ixo::generate(msa_spec(ixo::PageTable::interval, 16), 1);
  ASSERT_EQ(c.max_pages, 4);
  EXPECT_EQ(c.S, 7 * 16);
  EXPECT_EQ(table_row_of(c, 0), (std::vector<std::int32_t>{0, 2, 4, 6}));
  EXPECT_EQ(table_row_of(c, 1), (std::vector<std::int32_t>{1, 3, 5, 0}));
  EXPECT_EQ(c.width, 64);
  // Row 0: page 0 = slots 0..15, page 1 -> physical 2 (32..47), page 3 -> physical 6 (96..111).
  EXPECT_EQ(slot_at(c, 0, 0), 0);
  EXPECT_EQ(slot_at(c, 0, 15), 15);
  EXPECT_EQ(slot_at(c, 0, 16), 32);
  EXPECT_EQ(slot_at(c, 0, 63), 111);
  // Row 1: page 0 -> physical 1 (16..31), page 2 -> physical 5 (80..95), page 3 -> physical 0.
  EXPECT_EQ(slot_at(c, 1, 0), 16);
  EXPECT_EQ(slot_at(c, 1, 33), 81);
  EXPECT_EQ(slot_at(c, 1, 48), 0);
  EXPECT_EQ(slot_at(c, 1, 50), 2);  // the last token of request 1 (length 51) shares row 0's page 0
  EXPECT_GT(ixo::rows_sharing_slots(c), 0);
}

TEST(Paged, ReverseTableIsMsasAndItsSlotsAreHandWorked) {
  const ixo::Case c = ixo::generate(msa_spec(ixo::PageTable::reverse, 16), 1);
  EXPECT_EQ(table_row_of(c, 0), (std::vector<std::int32_t>{6, 5, 4, 3}));
  EXPECT_EQ(table_row_of(c, 1), (std::vector<std::int32_t>{3, 2, 1, 0}));
  EXPECT_EQ(slot_at(c, 0, 0), 96);
  EXPECT_EQ(slot_at(c, 0, 17), 81);
  EXPECT_EQ(slot_at(c, 0, 40), 72);  // page 2 -> physical 4, offset 8
  EXPECT_EQ(slot_at(c, 1, 0), 48);   // physical 3: row 0's page 3
  EXPECT_EQ(slot_at(c, 1, 50), 2);   // page 3 -> physical 0, offset 2
}

TEST(Paged, RandomTablesSharePagesAcrossRequests) {
  ixo::GenSpec s = ixo::preset("verify");
  s.cfg.page_size = 128;
  const ixo::Case c = ixo::generate(s, 3);
  EXPECT_EQ(c.S, (c.max_pages + 3) * 128);
  EXPECT_GE(ixo::rows_sharing_slots(c), 2);
  for (std::int32_t p : c.page_table) EXPECT_TRUE(p >= 0 && p < c.max_pages + 3);
}

TEST(Paged, CaseFilesRoundTripThePageTable) {
  const std::string dir =
      (fs::temp_directory_path() / ("ixo-paged-" + std::to_string(std::random_device{}()))).string();
  for (auto kind : {ixo::PageTable::random, ixo::PageTable::interval, ixo::PageTable::reverse}) {
    ixo::GenSpec s = ixo::preset("tiny");
    s.cfg.page_size = 16;
    s.pages = kind;
    const ixo::Case c = ixo::generate(s, 7);
    ixo::save_case(c, dir);
    ixo::Case d = ixo::load_case(dir);
    EXPECT_EQ(d.cfg.page_size, 16);
    EXPECT_EQ(d.max_pages, c.max_pages);
    EXPECT_EQ(d.page_table, c.page_table);
    EXPECT_EQ(d.req_to_token, c.req_to_token);
    fs::remove(fs::path(dir) / "req_to_token.npy");  // the table alone: req_to_token derived
    d = ixo::load_case(dir);
    EXPECT_EQ(d.req_to_token, c.req_to_token);
    EXPECT_EQ(d.width, c.width);
    EXPECT_EQ(ixo::oracle(d).topk_idx, ixo::oracle(c).topk_idx);
  }
  const ixo::Case flat = ixo::generate(ixo::preset("tiny"), 7);  // written over: no stale page table
  ixo::save_case(flat, dir);
  EXPECT_FALSE(fs::exists(fs::path(dir) / "page_table.npy"));
  EXPECT_FALSE(ixo::load_case(dir).paged());
  fs::remove_all(dir);
}

struct BadPages : ::testing::Test {
  std::string dir;
  ixo::Case c;
  void SetUp() override {
    dir = (fs::temp_directory_path() / ("ixo-badpages-" + std::to_string(std::random_device{}()))).string();
    c = ixo::generate(msa_spec(ixo::PageTable::interval, 16), 1);
    ixo::save_case(c, dir);
  }
  void TearDown() override { fs::remove_all(dir); }
  std::string path(const char* f) const { return (fs::path(dir) / f).string(); }
  void write_table(const std::vector<std::int32_t>& t, std::vector<std::int64_t> shape) const {
    ixo::write_npy(path("page_table.npy"), "<i4", shape, t.data(), t.size() * 4);
  }
  void expect_error(const std::string& field, const std::vector<std::string>& needles) const {
    ixo::test::expect_load_error(dir, field, needles);
  }
};

TEST_F(BadPages, PageOutOfRange) {
  auto t = c.page_table;
  t[1 * 4 + 2] = 7;  // 7 pages: [0, 7)
  write_table(t, {c.rows, 4});
  fs::remove(path("req_to_token.npy"));
  expect_error("page_table[1,2]", {"physical page 7", "[0, 7)"});
}

TEST_F(BadPages, NegativePage) {
  auto t = c.page_table;
  t[3] = -1;
  write_table(t, {c.rows, 4});
  expect_error("page_table[0,3]", {"physical page -1", "no negative aliases"});
}

TEST_F(BadPages, WrongRank) {
  write_table(c.page_table, {c.rows * 4});
  expect_error("page_table", {"rank 1"});
}

TEST_F(BadPages, RowsDisagreeWithReqToToken) {
  write_table({c.page_table.begin(), c.page_table.begin() + 8}, {2, 4});
  expect_error("page_table", {"has 2 rows", "req_to_token " + std::to_string(c.rows)});
}

TEST_F(BadPages, WidthDisagreesWithPages) {
  std::vector<std::int32_t> t3;
  for (std::int64_t b = 0; b < c.rows; ++b)
    t3.insert(t3.end(), c.page_table.begin() + b * 4, c.page_table.begin() + b * 4 + 3);
  write_table(t3, {c.rows, 3});
  expect_error("req_to_token", {"width 64", "3 x 16"});
}

TEST_F(BadPages, SlotsNotAMultipleOfThePageSize) {
  std::vector<std::uint8_t> k(
      c.k_cache.begin(),
      c.k_cache.end() - static_cast<std::ptrdiff_t>(c.k_cache.size() / static_cast<std::size_t>(c.S)));
  ixo::write_npy(path("k_cache.npy"), "<u2", {c.S - 1, c.Hk, c.D}, k.data(), k.size());
  expect_error("k_cache", {"S = 111", "page_size 16"});
}

TEST_F(BadPages, InconsistentTables) {
  auto r2t = c.req_to_token;
  r2t[1 * 64 + 33] = 82;  // the table says 81
  ixo::write_npy(path("req_to_token.npy"), "<i4", {c.rows, 64}, r2t.data(), r2t.size() * 4);
  expect_error("req_to_token[1,33]", {"token slot 82", "page_table[1,2] = 5", "slot 81"});
}

TEST_F(BadPages, PageSizeWithoutATable) {
  fs::remove(path("page_table.npy"));
  expect_error("page_table", {"missing", "page_size 16"});
}

TEST_F(BadPages, PageSizeBelowOne) {
  std::string j = ixo::config_to_json(c.cfg);
  j.replace(j.find("\"page_size\": 16"), 15, "\"page_size\": 0");
  std::ofstream(path("case.json")) << j;
  expect_error("page_size", {"must be >= 1, got 0"});
}

// The same case with every (table row, logical page) on a private physical page: no slot is
// read by two table rows, and the keys each row sees are the same.
ixo::Case private_pages(const ixo::Case& c) {
  ixo::Case d = c;
  const std::int64_t ps = c.cfg.page_size;
  d.S = c.rows * c.max_pages * ps;
  const std::size_t slot_bytes = static_cast<std::size_t>(c.Hk * c.D * ixo::element_bytes(c.cfg.k_dtype));
  d.k_cache.assign(static_cast<std::size_t>(d.S) * slot_bytes, 0);
  for (std::int64_t b = 0; b < c.rows; ++b)
    for (std::int64_t p = 0; p < c.max_pages; ++p) {
      const std::int64_t from = c.page_table[static_cast<std::size_t>(b * c.max_pages + p)], to = b * c.max_pages + p;
      d.page_table[static_cast<std::size_t>(to)] = static_cast<std::int32_t>(to);
      std::memcpy(&d.k_cache[static_cast<std::size_t>(to * ps) * slot_bytes],
                  &c.k_cache[static_cast<std::size_t>(from * ps) * slot_bytes],
                  static_cast<std::size_t>(ps) * slot_bytes);
    }
  ixo::derive_req_to_token(d);
  return d;
}

// The same token-slot case with every (table row, position) its own slot.
ixo::Case private_slots(const ixo::Case& c) {
  ixo::Case d = c;
  d.S = c.rows * c.width;
  const std::size_t slot_bytes = static_cast<std::size_t>(c.Hk * c.D * ixo::element_bytes(c.cfg.k_dtype));
  d.k_cache.assign(static_cast<std::size_t>(d.S) * slot_bytes, 0);
  for (std::int64_t i = 0; i < d.S; ++i) {
    std::int64_t s = c.req_to_token[static_cast<std::size_t>(i)];
    if (s < 0) s += c.S;
    if (s < 0 || s >= c.S) s = 0;  // never read
    d.req_to_token[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(i);
    std::memcpy(&d.k_cache[static_cast<std::size_t>(i) * slot_bytes],
                &c.k_cache[static_cast<std::size_t>(s) * slot_bytes], slot_bytes);
  }
  return d;
}

void expect_same_answer(const ixo::Case& a, const ixo::Case& b) {
  const auto x = ixo::oracle(a), y = ixo::oracle(b);
  EXPECT_EQ(x.topk_idx, y.topk_idx);
  ASSERT_EQ(x.score.size(), y.score.size());
  EXPECT_EQ(std::memcmp(x.score.data(), y.score.data(), x.score.size() * sizeof(double)), 0);
  EXPECT_EQ(std::memcmp(x.tau.data(), y.tau.data(), x.tau.size() * sizeof(double)), 0);
}

TEST(PagedMetamorphic, SharedPagesAnswerAsPrivatePages) {
  int seed = 0;
  for (auto kind : {ixo::PageTable::random, ixo::PageTable::interval, ixo::PageTable::reverse})
    for (int ps : {16, 128}) {
      ixo::GenSpec s = ixo::preset("verify");
      s.Hq = 2;
      s.max_prefix = 2000;
      s.padding_requests = 1;
      s.inactive_requests = 1;
      s.cfg.page_size = ps;
      s.pages = kind;
      const ixo::Case c = ixo::generate(s, static_cast<std::uint64_t>(++seed));
      const ixo::Case d = private_pages(c);
      ASSERT_NO_THROW(ixo::validate(d));
      ASSERT_GT(ixo::rows_sharing_slots(c), 0) << ps;
      ASSERT_EQ(ixo::rows_sharing_slots(d), 0);
      expect_same_answer(c, d);
    }
}

TEST(PagedMetamorphic, SharedPrefixSlotsAnswerAsPrivateSlots) {
  for (std::int64_t shared : {1, 130, 1 << 20}) {
    ixo::GenSpec s = ixo::preset("verify");
    s.max_prefix = 2000;
    s.padding_requests = 1;
    s.shared_prefix = shared;
    const ixo::Case c = ixo::generate(s, static_cast<std::uint64_t>(shared));
    const ixo::Case d = private_slots(c);
    ASSERT_NO_THROW(ixo::validate(d));
    ASSERT_GT(ixo::rows_sharing_slots(c), 0) << shared;
    ASSERT_EQ(ixo::rows_sharing_slots(d), 0);
    expect_same_answer(c, d);
  }
}

TEST(PagedMetamorphic, TransformsKeepPagedCasesValid) {
  ixo::GenSpec s = ixo::preset("verify");
  s.cfg.page_size = 16;
  const ixo::Case c = ixo::generate(s, 11);
  const ixo::Case r = ixo::relabel_slots(c, 5);
  ASSERT_NO_THROW(ixo::validate(r));
  EXPECT_TRUE(r.paged());
  EXPECT_NE(r.page_table, c.page_table);
  expect_same_answer(c, r);
  EXPECT_NO_THROW(ixo::validate(ixo::keep_rows(c, {3, 0})));
  EXPECT_NO_THROW(ixo::validate(ixo::append_rows(c, 1, 1)));
  EXPECT_NO_THROW(ixo::validate(ixo::keep_heads(c, {0})));
}

TEST(PagedGenerate, ExactValuesRefuseSharedSlots) {
  ixo::GenSpec s = ixo::preset("exact");
  s.cfg.page_size = 16;
  EXPECT_THROW(ixo::generate(s, 1), ixo::InputError);
  s.cfg.page_size = 1;
  s.shared_prefix = 10;
  EXPECT_THROW(ixo::generate(s, 1), ixo::InputError);
}

TEST(PagedGenerate, SpecJsonRoundTripsTheSharingKnobs) {
  ixo::GenSpec s = msa_spec(ixo::PageTable::reverse, 16);
  s.shared_prefix = 0;
  const ixo::GenSpec t = ixo::spec_from_json(ixo::spec_to_json(s));
  EXPECT_EQ(t.cfg.page_size, 16);
  EXPECT_EQ(t.pages, ixo::PageTable::reverse);
  EXPECT_EQ(ixo::generate(t, 2).page_table, ixo::generate(s, 2).page_table);
  EXPECT_EQ(ixo::spec_from_json(R"({"preset": "tiny", "shared_prefix": 7})").shared_prefix, 7);
  EXPECT_THROW(ixo::spec_from_json(R"({"pages": "zigzag"})"), ixo::InputError);
}

// A token-slot spec (page_size 1) writes no "pages" key: older spec.json files stay as they
// were; a paged one does.
TEST(PagedGenerate, AFlatSpecWritesNoPagesKey) {
  ixo::GenSpec s = ixo::preset("tiny");
  ASSERT_EQ(s.cfg.page_size, 1);
  EXPECT_EQ(ixo::spec_to_json(s).find("\"pages\""), std::string::npos) << ixo::spec_to_json(s);
  s.cfg.page_size = 16;
  EXPECT_NE(ixo::spec_to_json(s).find("\"pages\""), std::string::npos);
}

}  // namespace
