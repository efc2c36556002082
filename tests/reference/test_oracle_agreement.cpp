// The naive and the fast (SIMD/OpenMP) oracle agree bit for bit (scores, tau) and exactly on ids,
// over randomized cases of every preset family; and the fast one does not depend on the
// number of threads.
#include <gtest/gtest.h>
#include <omp.h>

#include <cstring>
#include <random>

#include "ixo/generate.hpp"
#include "ixo/oracle.hpp"

namespace {

void expect_identical(const ixo::Expected& a, const ixo::Expected& b, const std::string& what) {
  ASSERT_EQ(a.score.size(), b.score.size()) << what;
  EXPECT_EQ(std::memcmp(a.score.data(), b.score.data(), a.score.size() * sizeof(double)), 0)
      << what << ": scores differ";
  EXPECT_EQ(std::memcmp(a.tau.data(), b.tau.data(), a.tau.size() * sizeof(double)), 0) << what << ": tau differs";
  EXPECT_EQ(a.topk_idx, b.topk_idx) << what << ": ids differ";
  EXPECT_EQ(a.forced, b.forced) << what;
  EXPECT_EQ(a.nb, b.nb) << what;
}

class PresetAgreement : public ::testing::TestWithParam<std::string> {};

TEST_P(PresetAgreement, NaiveEqualsFast) {
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const auto c = ixo::generate(ixo::preset(GetParam()), seed);
    expect_identical(ixo::oracle_naive(c), ixo::oracle(c), GetParam() + " seed " + std::to_string(seed));
  }
}

INSTANTIATE_TEST_SUITE_P(Presets, PresetAgreement,
                         ::testing::Values("tiny", "verify", "km-slots", "fp8-e4m3fn", "fp8-e4m3fnuz", "e5m2-lse",
                                           "gqa", "padding", "local0", "exact", "near-tie", "topk-above-nb",
                                           "forced-overlap"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (auto& ch : n)
                             if (ch == '-') ch = '_';
                           return n;
                         });

TEST(Agreement, RandomShapesNaiveEqualsFast) {
  std::mt19937_64 g(7);
  for (int i = 0; i < 40; ++i) {
    ixo::GenSpec s;
    s.requests = 1 + static_cast<int>(g() % 4);
    s.draft_rows = 1 + static_cast<int>(g() % 5);
    const int ratio[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 2}};
    const auto& hr = ratio[g() % 4];
    s.Hq = hr[0];
    s.Hk = hr[1];
    s.D = (g() % 2) ? 64 : 128;
    s.cfg.block_size = 16 << (g() % 4);
    s.cfg.topk = 1 + static_cast<int>(g() % 20);
    s.cfg.init_blocks = static_cast<int>(g() % 3);
    s.cfg.local_blocks = static_cast<int>(g() % 4);
    s.cfg.score_type = (g() % 2) ? ixo::ScoreType::lse : ixo::ScoreType::max;
    s.cfg.k_dtype = static_cast<ixo::KDtype>(g() % 4);
    s.cfg.k_scale = 0.25 + static_cast<double>(g() % 8) * 0.25;
    s.cfg.q_scale = 1.5;
    s.max_prefix = 1500;
    s.padding_requests = static_cast<int>(g() % 2);
    s.inactive_requests = static_cast<int>(g() % 2);
    const auto c = ixo::generate(s, g());
    expect_identical(ixo::oracle_naive(c), ixo::oracle(c), "random shape " + std::to_string(i));
  }
}

// The random shapes above draw bf16 and fp8 K with bf16 q only: NVFP4 K (one e4m3fn scale per
// 16 elements, D 64/128: several scales a row) and e4m3fn q agree too.
TEST(Agreement, Nvfp4KAndFp8QNaiveEqualsFast) {
  std::mt19937_64 g(11);
  for (int i = 0; i < 12; ++i) {
    ixo::GenSpec s;
    s.requests = 1 + static_cast<int>(g() % 3);
    s.draft_rows = 1 + static_cast<int>(g() % 3);
    s.Hq = (i % 3 == 0) ? 4 : 2;
    s.Hk = (i % 3 == 0) ? 2 : 1;
    s.D = (g() % 2) ? 64 : 128;
    s.cfg.block_size = 16 << (g() % 3);
    s.cfg.topk = 1 + static_cast<int>(g() % 12);
    s.cfg.score_type = (g() % 2) ? ixo::ScoreType::lse : ixo::ScoreType::max;
    s.cfg.k_dtype = (i % 2 == 0) ? ixo::KDtype::nvfp4 : ixo::KDtype::e4m3fn;
    s.cfg.q_dtype = (i % 4 < 2) ? ixo::KDtype::e4m3fn : ixo::KDtype::bf16;
    s.max_prefix = 600;
    const auto c = ixo::generate(s, g());
    expect_identical(ixo::oracle_naive(c), ixo::oracle(c), "nvfp4/fp8-q shape " + std::to_string(i));
  }
}

TEST(Agreement, ThreadCountDoesNotChangeAnything) {
  const auto c = ixo::generate(ixo::preset("boundary"), 3);
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const auto one = ixo::oracle(c);
  omp_set_num_threads(2);
  const auto two = ixo::oracle(c);
  omp_set_num_threads(saved);
  expect_identical(one, two, "threads 1 vs 2");
}

}  // namespace

namespace {

// Issue 12: the fast oracle scores each K tile (8 tokens) once for every participant
// (draft row x head of the kv group) of a request. Cases that stress that sharing: many
// participants per kv head (every group-size remainder of the 3-participant passes), rows
// of one request with different lengths ending inside a tile, block sizes that are not a
// multiple of the tile, head dims that are not a multiple of the 8 lanes, fp8 with
// k_scale, permuted and aliased slots, inactive rows inside requests and padding rows.
TEST(Agreement, SharedTilesNaiveEqualsFast) {
  std::mt19937_64 g(12);
  const std::int64_t heads[][2] = {{1, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 1}, {7, 1}, {8, 2}, {6, 3}};
  for (int i = 0; i < 24; ++i) {
    ixo::GenSpec s;
    s.requests = 1 + static_cast<int>(g() % 3);
    s.draft_rows = 1 + static_cast<int>(g() % 6);
    const auto& hr = heads[i % 8];
    s.Hq = hr[0];
    s.Hk = hr[1];
    s.D = (i % 3 == 0) ? 72 : (i % 3 == 1) ? 36 : 128;
    s.cfg.block_size = (i % 2) ? 13 : 40;
    s.cfg.topk = 1 + static_cast<int>(g() % 8);
    s.cfg.local_blocks = static_cast<int>(g() % 2);
    s.cfg.init_blocks = static_cast<int>(g() % 2);
    s.cfg.score_type = (i % 4 == 3) ? ixo::ScoreType::lse : ixo::ScoreType::max;
    s.cfg.k_dtype = static_cast<ixo::KDtype>(g() % 4);
    s.cfg.k_scale = 0.375;
    s.max_prefix = 300;
    s.padding_requests = static_cast<int>(g() % 2);
    s.inactive_requests = static_cast<int>(g() % 2);
    s.inactive_rows_in_requests = static_cast<int>(g() % 2);
    s.trailing_padding_rows = static_cast<int>(g() % 3);
    const auto c = ixo::generate(s, g());
    expect_identical(ixo::oracle_naive(c), ixo::oracle(c), "shared tiles " + std::to_string(i));
  }
}

}  // namespace
