// Issue 12: a loaded case holds K once (read straight into Case::k_cache, never copied),
// and load_case_mapped (what `ixo ref` uses) maps k_cache.npy instead of reading it, with
// the same header checks and bitwise the same oracle results.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "ixo/case_io.hpp"
#include "ixo/error.hpp"
#include "ixo/generate.hpp"
#include "ixo/npy.hpp"
#include "ixo/oracle.hpp"

namespace ixo_test {  // largest_allocation.cpp
std::size_t live_bytes();
std::size_t peak_live_bytes();
void reset_peak_live_bytes();
}  // namespace ixo_test

namespace {

namespace fs = std::filesystem;

class CaseMemory : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = (fs::temp_directory_path() / ("ixo-casemem-" + std::to_string(std::random_device{}()))).string();
    ixo::GenSpec s = ixo::preset("tiny");
    s.requests = 1;
    s.D = 128;
    s.prefixes = {16384};  // K: about 16400 slots x 256 bytes = 4 MiB, far above every other array
    c = ixo::generate(s, 5);
    ixo::save_case(c, dir);
    kbytes = c.k_cache.size();
  }
  void TearDown() override { fs::remove_all(dir); }
  // Peak live heap bytes above the level at the start of f().
  template <class F>
  std::size_t peak_during(F&& f) {
    const std::size_t before = ixo_test::live_bytes();
    ixo_test::reset_peak_live_bytes();
    f();
    return ixo_test::peak_live_bytes() - before;
  }
  std::string dir;
  ixo::Case c;
  std::size_t kbytes = 0;
};

TEST_F(CaseMemory, OwnedLoadHoldsKOnce) {
  ASSERT_GT(kbytes, 4u << 20);
  const std::size_t peak = peak_during([&] {
    const ixo::Case l = ixo::load_case(dir);
    EXPECT_EQ(l.k_cache, c.k_cache);
  });
  EXPECT_GE(peak, kbytes);
  EXPECT_LT(peak, kbytes + kbytes / 2) << "load_case held K more than once (peak " << peak << " bytes, K " << kbytes
                                       << ")";
}

TEST_F(CaseMemory, MappedLoadCopiesNoK) {
  const std::size_t peak = peak_during([&] {
    const ixo::Case m = ixo::load_case_mapped(dir);
    EXPECT_TRUE(m.k_cache.empty());
    ASSERT_EQ(m.k_view().size(), kbytes);
    EXPECT_EQ(std::memcmp(m.k_view().data(), c.k_cache.data(), kbytes), 0);
  });
  EXPECT_LT(peak, kbytes / 2) << "load_case_mapped copied K to the heap (peak " << peak << " bytes)";
}

TEST_F(CaseMemory, MappedCaseScoresBitwiseLikeOwned) {
  const ixo::Case m = ixo::load_case_mapped(dir);
  const auto a = ixo::oracle(c), b = ixo::oracle(m), n = ixo::oracle_naive(m);
  for (const auto* x : {&b, &n}) {
    ASSERT_EQ(a.score.size(), x->score.size());
    EXPECT_EQ(std::memcmp(a.score.data(), x->score.data(), a.score.size() * sizeof(double)), 0);
    EXPECT_EQ(std::memcmp(a.tau.data(), x->tau.data(), a.tau.size() * sizeof(double)), 0);
    EXPECT_EQ(a.topk_idx, x->topk_idx);
  }
  // save_case writes the mapped K back unchanged.
  const std::string again = dir + "-again";
  ixo::save_case(m, again);
  EXPECT_EQ(ixo::load_case(again).k_cache, c.k_cache);
  fs::remove_all(again);
}

void expect_input_error(const std::string& dir, const std::string& field, const std::string& fragment) {
  try {
    (void)ixo::load_case_mapped(dir);
    ADD_FAILURE() << "no InputError";
  } catch (const ixo::InputError& e) {
    EXPECT_EQ(e.field(), field);
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST_F(CaseMemory, MappedLoadChecksTheHeaderLikeRead) {
  const std::string k = (fs::path(dir) / "k_cache.npy").string();
  fs::resize_file(k, fs::file_size(k) - 2);
  expect_input_error(dir, "k_cache", "truncated");
  std::vector<std::uint8_t> codes(kbytes);
  ixo::write_npy(k, "|u1", {c.S, c.Hk, 2 * c.D}, codes.data(), codes.size());
  expect_input_error(dir, "k_cache", "expected <u2");
  fs::remove(k);
  expect_input_error(dir, "k_cache", "missing file");
}

}  // namespace
