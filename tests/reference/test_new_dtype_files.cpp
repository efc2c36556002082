// Issue 25 item 3: fp8 (e4m3fn) q and NVFP4 K in the case format, the generators and the
// contract (the decoders and the oracle: test_new_dtypes.cpp, one executable). Expected values
// are worked out from the format definitions (docs/semantics.md "fp8 q" and "NVFP4 K").
//
// Seen to fail on an injected bug (test_new_dtypes.cpp's header lists the runs): q decoded as
// bf16 bits whatever q_dtype says: NewDtypeContract.NonfiniteFp8QAndNanScales; the NVFP4
// product not rounded: NewDtypeGenerators.Nvfp4GaussianSaturatesSomeElements.
#include <gtest/gtest.h>

#include "expect_load_error.hpp"
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <numbers>
#include <random>
#include <string>

#include "ixo/case_io.hpp"
#include "ixo/contract.hpp"
#include "ixo/error.hpp"
#include "ixo/generate.hpp"
#include "ixo/npy.hpp"
#include "ixo/oracle.hpp"

namespace fs = std::filesystem;

namespace {

using ixo::KDtype;

// ---- Case files -------------------------------------------------------------------------

struct Dir : ::testing::Test {
  std::string dir;
  void SetUp() override {
    dir = (fs::temp_directory_path() / ("ixo-dt-" + std::to_string(std::random_device{}()))).string();
  }
  void TearDown() override { fs::remove_all(dir); }
  std::string path(const char* f) const { return (fs::path(dir) / f).string(); }
  void expect_error(const std::string& field, const std::string& needle) const {
    ixo::test::expect_load_error(dir, field, {needle});
  }
};

ixo::GenSpec new_dtype_spec(KDtype q, KDtype k) {
  ixo::GenSpec s = ixo::preset("tiny");
  s.cfg.q_dtype = q;
  s.cfg.k_dtype = k;
  return s;
}

TEST_F(Dir, RoundTrip) {
  for (auto [qd, kd] : {std::pair{KDtype::e4m3fn, KDtype::bf16}, std::pair{KDtype::bf16, KDtype::nvfp4},
                        std::pair{KDtype::e4m3fn, KDtype::nvfp4}}) {
    const ixo::Case c = ixo::generate(new_dtype_spec(qd, kd), 5);
    ixo::save_case(c, dir);
    EXPECT_EQ(ixo::read_npy(path("q.npy"), "q").descr, qd == KDtype::bf16 ? "<u2" : "|u1");
    const auto k = ixo::read_npy(path("k_cache.npy"), "k_cache");
    EXPECT_EQ(k.shape[2], kd == KDtype::nvfp4 ? c.D / 2 : c.D);
    EXPECT_EQ(fs::exists(path("k_scales.npy")), kd == KDtype::nvfp4);
    for (const ixo::Case& d : {ixo::load_case(dir), ixo::load_case_mapped(dir)}) {
      EXPECT_EQ(d.cfg.q_dtype, qd);
      EXPECT_EQ(d.cfg.k_dtype, kd);
      EXPECT_EQ(d.q, c.q);
      EXPECT_TRUE(std::equal(d.k_view().begin(), d.k_view().end(), c.k_cache.begin(), c.k_cache.end()));
      EXPECT_EQ(d.k_scales, c.k_scales);
      const auto a = ixo::oracle(c), b = ixo::oracle(d);
      EXPECT_EQ(a.topk_idx, b.topk_idx);
      EXPECT_EQ(a.score.size(), b.score.size());
      for (std::size_t i = 0; i < a.score.size(); ++i)
        if (!std::isnan(a.score[i])) {
          EXPECT_EQ(a.score[i], b.score[i]) << i;
        }
    }
    fs::remove_all(dir);
  }
}

TEST_F(Dir, OldCaseJsonHasNoQDtypeKey) {
  ixo::save_case(ixo::generate(ixo::preset("tiny"), 5), dir);
  std::ifstream in(path("case.json"));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.find("q_dtype"), std::string::npos) << text;
}

TEST_F(Dir, Fp8QWithUint16NpyIsAnError) {
  // q_dtype e4m3fn in case.json but q.npy still holds bf16 bits (<u2).
  const ixo::Case c = ixo::generate(new_dtype_spec(KDtype::e4m3fn, KDtype::bf16), 5);
  ixo::save_case(c, dir);
  ixo::write_npy(path("q.npy"), "<u2", {c.R, c.Hq, c.D}, c.q.data(), c.q.size() * 2);
  expect_error("q", "q_dtype e4m3fn");
}

// An fp8-q case (q.npy of uint8 codes) whose case.json then names q_dtype `q_dtype` instead.
void save_fp8q_case_relabelled(const Dir& d, const char* q_dtype) {
  const ixo::Case c = ixo::generate(new_dtype_spec(KDtype::e4m3fn, KDtype::bf16), 5);
  ixo::save_case(c, d.dir);
  std::string j = ixo::config_to_json(c.cfg);
  j.replace(j.find("\"e4m3fn\""), 8, std::string("\"") + q_dtype + "\"");
  std::ofstream(d.path("case.json")) << j;
}

TEST_F(Dir, Bf16QWithUint8NpyIsAnError) {
  save_fp8q_case_relabelled(*this, "bf16");
  expect_error("q", "'|u1'");
}

TEST_F(Dir, UnknownQDtype) {
  save_fp8q_case_relabelled(*this, "e5m2");
  expect_error("q_dtype", "'e5m2'");
}

TEST_F(Dir, WrongScalesShape) {
  const ixo::Case c = ixo::generate(new_dtype_spec(KDtype::bf16, KDtype::nvfp4), 5);
  ixo::save_case(c, dir);
  const std::vector<std::uint8_t> s(static_cast<std::size_t>(c.S * c.Hk * c.D / 8), 0x38);
  ixo::write_npy(path("k_scales.npy"), "|u1", {c.S, c.Hk, c.D / 8}, s.data(), s.size());
  expect_error("k_scales", "[S, Hk, D/16]");
}

TEST_F(Dir, MissingScales) {
  ixo::save_case(ixo::generate(new_dtype_spec(KDtype::bf16, KDtype::nvfp4), 5), dir);
  fs::remove(path("k_scales.npy"));
  expect_error("k_scales", "");
}

TEST_F(Dir, ScalesWithoutNvfp4) {
  const ixo::Case c = ixo::generate(new_dtype_spec(KDtype::bf16, KDtype::nvfp4), 5);
  ixo::save_case(c, dir);
  ixo::Case e = ixo::generate(ixo::preset("tiny"), 5);
  e.cfg.k_dtype = KDtype::e4m3fn;
  e.k_cache.assign(static_cast<std::size_t>(e.S * e.Hk * e.D), 0x38);
  ixo::save_case(e, dir + "-e");
  fs::copy_file(path("k_scales.npy"), dir + "-e/k_scales.npy");
  try {
    ixo::load_case(dir + "-e");
    FAIL();
  } catch (const ixo::InputError& x) {
    EXPECT_EQ(x.field(), "k_scales") << x.what();
    EXPECT_NE(std::string(x.what()).find("e4m3fn"), std::string::npos) << x.what();
  }
  fs::remove_all(dir + "-e");
}

TEST_F(Dir, Nvfp4HeadDimNotAMultipleOf16) {
  // A bf16-K case of D 24 turned into nvfp4 by hand: k_cache [S, Hk, 12], k_scales [S, Hk, 1].
  ixo::GenSpec s = ixo::preset("tiny");
  s.D = 24;
  const ixo::Case c = ixo::generate(s, 5);
  ixo::save_case(c, dir);
  std::string j = ixo::config_to_json(c.cfg);
  j.replace(j.find("\"bf16\""), 6, "\"nvfp4\"");
  std::ofstream(path("case.json")) << j;
  const std::vector<std::uint8_t> k(static_cast<std::size_t>(c.S * c.Hk * 12), 0x22),
      sc(static_cast<std::size_t>(c.S * c.Hk), 0x38);
  ixo::write_npy(path("k_cache.npy"), "|u1", {c.S, c.Hk, 12}, k.data(), k.size());
  ixo::write_npy(path("k_scales.npy"), "|u1", {c.S, c.Hk, 1}, sc.data(), sc.size());
  expect_error("D", "got 24");
}

TEST_F(Dir, Nvfp4KCacheNotPacked) {
  // k_cache [S, Hk, D] (one code a byte) instead of [S, Hk, D/2].
  const ixo::Case c = ixo::generate(new_dtype_spec(KDtype::bf16, KDtype::nvfp4), 5);
  ixo::save_case(c, dir);
  const std::vector<std::uint8_t> k(static_cast<std::size_t>(c.S * c.Hk * c.D), 0x22);
  ixo::write_npy(path("k_cache.npy"), "|u1", {c.S, c.Hk, c.D}, k.data(), k.size());
  expect_error("k_cache", "nvfp4");
}

// ---- Generators and contract -------------------------------------------------------------

TEST(NewDtypeGenerators, EveryValueFamilyValidates) {
  for (auto v :
       {ixo::Values::gaussian, ixo::Values::exact, ixo::Values::near_tie, ixo::Values::ladder, ixo::Values::plateau})
    for (auto [qd, kd] : {std::pair{KDtype::e4m3fn, KDtype::e4m3fn}, std::pair{KDtype::bf16, KDtype::nvfp4},
                          std::pair{KDtype::e4m3fn, KDtype::nvfp4}}) {
      ixo::GenSpec s = new_dtype_spec(qd, kd);
      s.values = v;
      s.fp8_specials = v != ixo::Values::exact;  // special codes (nvfp4: scales) would break the integers
      const ixo::Case c = ixo::generate(s, 11);
      EXPECT_NO_THROW(ixo::validate(c));
      EXPECT_EQ(c.cfg.q_dtype, qd);
      for (auto x : c.q) EXPECT_LE(x, qd == KDtype::bf16 ? 0xFFFF : 0xFF);
      if (v == ixo::Values::exact) {  // integer K (nvfp4: E2M1 0..4, scale 1) and +-1 q: integer dots
        const auto e = ixo::oracle(c);
        const double scale = c.effective_sm_scale() * c.cfg.q_scale * std::numbers::log2e * c.cfg.k_scale;
        for (std::size_t i = 0; i < e.score.size(); ++i)
          if (std::isfinite(e.score[i]) && !e.forced[i]) {
            EXPECT_NEAR(e.score[i] / scale, std::round(e.score[i] / scale), 1e-9);
          }
      }
    }
}

// Values::ladder / plateau copy a slot's whole K row into every token of a level; for NVFP4 the
// row's block scales travel with its bytes, so any two K rows with equal bytes carry equal
// scales. Kills generate.cpp `kv_row * srow` -> `kv_row / srow` (a level's bytes with another
// row's scales), the reference survivor of session 14's judge-mutant run.
TEST(NewDtypeGenerators, LevelsCopyAnNvfp4RowWithItsScales) {
  for (auto v : {ixo::Values::ladder, ixo::Values::plateau})
    for (std::uint64_t seed : {3, 11, 17}) {
      ixo::GenSpec s = new_dtype_spec(KDtype::bf16, KDtype::nvfp4);
      s.values = v;
      s.fp8_specials = false;  // specials rewrite single scales after the copies
      const ixo::Case c = ixo::generate(s, seed);
      const std::size_t row = static_cast<std::size_t>(ixo::k_row_bytes(c.cfg.k_dtype, c.D));
      const std::size_t srow = static_cast<std::size_t>(c.D / 16);
      std::map<std::string, std::string> scales_of;  // K row bytes -> its scales
      int copies = 0;
      for (std::size_t r = 0; r < static_cast<std::size_t>(c.S * c.Hk); ++r) {
        const std::string bytes(c.k_cache.begin() + r * row, c.k_cache.begin() + (r + 1) * row);
        const std::string sc(c.k_scales.begin() + r * srow, c.k_scales.begin() + (r + 1) * srow);
        const auto [it, fresh] = scales_of.emplace(bytes, sc);
        if (fresh) continue;
        ++copies;
        EXPECT_EQ(it->second, sc) << "K row " << r << " has the bytes of an earlier row but other scales (seed " << seed
                                  << ")";
      }
      EXPECT_GT(copies, 0) << "the level fill copied no row (seed " << seed << ")";
    }
}

// fp8_specials/fp8_nonfinite put a special code into any element of a row, the first one
// included (the element a kernel's first dot lane reads): NaN/Inf codes never come from the
// Gaussian fill, so each one seen at element d was put there by the specials.
TEST(NewDtypeGenerators, SpecialCodesReachEveryElementOfARow) {
  ixo::GenSpec s = ixo::preset("fp8-e4m3fn");
  s.D = 16;
  s.fp8_specials = s.fp8_nonfinite = true;
  const ixo::Case c = ixo::generate(s.up_to(4000), 5);
  std::vector<int> seen(static_cast<std::size_t>(c.D), 0);
  for (std::int64_t row = 0; row < c.S * c.Hk; ++row)
    for (std::int64_t d = 0; d < c.D; ++d)
      if (ixo::fp8_kind(c.k_cache[static_cast<std::size_t>(row * c.D + d)], c.cfg.k_dtype) == ixo::Fp8Kind::nonfinite)
        ++seen[static_cast<std::size_t>(d)];
  for (std::int64_t d = 0; d < c.D; ++d)
    EXPECT_GT(seen[static_cast<std::size_t>(d)], 0) << "element " << d << " of " << c.S * c.Hk << " rows";
}

// The selector sweep (msa-sweep, bf16 K): q is 1 on elements 0..2 and 0 elsewhere, K lives
// on elements 0..2 only (x = a + b + r, three bf16 terms), and the six value sets go one a
// request, so among msa-sweep's six requests one is set 1 (every block 1.5: every token of
// its table row the same K row).
TEST(NewDtypeGenerators, SelectorSweepLayoutAndEveryValueSetOnce) {
  for (std::uint64_t seed = 1; seed <= 24; ++seed) {
    const ixo::Case c = ixo::generate(ixo::preset("msa-sweep"), seed);
    ASSERT_EQ(c.cfg.k_dtype, KDtype::bf16);
    const std::uint16_t one = ixo::float_to_q(1.0f, c.cfg.q_dtype);
    for (std::int64_t i = 0; i < c.R * c.Hq; ++i)
      for (std::int64_t d = 0; d < c.D; ++d)
        ASSERT_EQ(c.q[static_cast<std::size_t>(i * c.D + d)], d < 3 ? one : 0)
            << "seed " << seed << " q row " << i << " element " << d;
    const std::size_t row_bytes = static_cast<std::size_t>(c.Hk * c.D * 2);
    for (std::int64_t slot = 0; slot < c.S; ++slot)
      for (std::int64_t h = 0; h < c.Hk; ++h)
        for (std::int64_t d = 3; d < c.D; ++d)
          for (int byte = 0; byte < 2; ++byte)
            ASSERT_EQ(c.k_cache[static_cast<std::size_t>(slot) * row_bytes +
                                static_cast<std::size_t>((h * c.D + d) * 2 + byte)],
                      0)
                << "seed " << seed << " slot " << slot << " element " << d;
    std::vector<std::int64_t> read(static_cast<std::size_t>(c.rows), 0);
    for (std::int64_t r = 0; r < c.R; ++r)
      if (ixo::table_row(c, r) >= 0)
        read[static_cast<std::size_t>(ixo::table_row(c, r))] =
            std::max(read[static_cast<std::size_t>(ixo::table_row(c, r))], c.seq_lens[r]);
    bool constant_row = false;
    for (std::int64_t b = 0; b < c.rows && !constant_row; ++b) {
      if (read[static_cast<std::size_t>(b)] < 2) continue;
      auto k_row = [&](std::int64_t t) {
        std::int64_t s = c.req_to_token[static_cast<std::size_t>(b * c.width + t)];
        if (s < 0) s += c.S;
        return std::vector<std::uint8_t>(
            c.k_cache.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(s) * row_bytes),
            c.k_cache.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(s + 1) * row_bytes));
      };
      const auto first = k_row(0);
      constant_row = true;
      for (std::int64_t t = 1; t < read[static_cast<std::size_t>(b)] && constant_row; ++t)
        constant_row = k_row(t) == first;
    }
    EXPECT_TRUE(constant_row) << "seed " << seed << ": no request took value set 1 (every block 1.5)";
  }
}

// msa-sweep's request lengths sit around 128-token page boundaries past 16 pages
// (p * 128 + {-1, 0, 1, 7}, p >= 16: presets.cpp, upstream-msa.md), where an upstream
// indexer's page arithmetic breaks.
TEST(NewDtypeGenerators, MsaSweepLengthsSitAroundPageBoundariesPastSixteenPages) {
  const ixo::GenSpec s = ixo::preset("msa-sweep");
  ASSERT_EQ(s.prefixes.size(), 6u);
  for (const std::int64_t L : s.prefixes) {
    const std::int64_t p = (L + 1) / 128, off = L - p * 128;
    EXPECT_GE(p, 16) << L;
    EXPECT_TRUE(off == -1 || off == 0 || off == 1 || off == 7) << L;
  }
}

TEST(NewDtypeGenerators, Nvfp4GaussianSaturatesSomeElements) {
  const ixo::Case c = ixo::generate(new_dtype_spec(KDtype::bf16, KDtype::nvfp4).up_to(600), 3);
  // Count elements whose exact product exceeds 448 (then decoded as +-448) and products
  // that needed rounding: the generator's large scales must reach both.
  std::int64_t saturated = 0, rounded = 0;
  for (std::int64_t row = 0; row < c.S * c.Hk; ++row)
    for (std::int64_t d = 0; d < c.D; ++d) {
      const std::uint8_t n = ixo::nvfp4_nibble(&c.k_cache[static_cast<std::size_t>(row * c.D / 2)], d);
      const std::uint8_t s = c.k_scales[static_cast<std::size_t>(row * c.D / 16 + d / 16)];
      const double exact = static_cast<double>(ixo::e2m1_to_float(n)) * ixo::fp8_to_float(s, KDtype::e4m3fn);
      saturated += std::fabs(exact) > 448;
      rounded += std::fabs(exact) <= 448 && exact != ixo::nvfp4_to_float(n, s);
    }
  EXPECT_GT(saturated, 0);
  EXPECT_GT(rounded, 0);
}

TEST(NewDtypeContract, QDtypesRefusesAndRoundTrips) {
  ixo::Contract k = ixo::contract_from_json(R"({"q_dtypes": ["bf16"]})");
  ASSERT_EQ(k.q_dtypes, std::vector<KDtype>{KDtype::bf16});
  const ixo::Case fp8q = ixo::generate(new_dtype_spec(KDtype::e4m3fn, KDtype::bf16), 1);
  ASSERT_TRUE(k.refuses(fp8q));
  EXPECT_NE(k.refuses(fp8q)->find("q_dtype e4m3fn"), std::string::npos);
  EXPECT_FALSE(ixo::Contract{}.refuses(fp8q));  // the spec takes fp8 q
  EXPECT_EQ(ixo::contract_from_json(ixo::contract_to_json(k)).q_dtypes, k.q_dtypes);
  EXPECT_THROW(ixo::contract_from_json(R"({"q_dtypes": ["e5m2"]})"), ixo::InputError);
  // Our CP kernels and SGLang's Triton kernel take neither fp8 q nor nvfp4 K.
  const ixo::Case fp4 = ixo::generate(new_dtype_spec(KDtype::bf16, KDtype::nvfp4), 1);
  for (const char* name : {"ixo-cp", "sglang-triton-decode"}) {
    EXPECT_TRUE(ixo::named_contract(name).refuses(fp8q)) << name;
    EXPECT_TRUE(ixo::named_contract(name).refuses(fp4)) << name;
  }
  EXPECT_FALSE(ixo::named_contract("ixo-native").refuses(fp4));
}

TEST(NewDtypeContract, NonfiniteFp8QAndNanScales) {
  ixo::Contract finite;
  finite.nonfinite = false;
  ixo::Case q = ixo::generate(new_dtype_spec(KDtype::e4m3fn, KDtype::bf16), 1);
  EXPECT_FALSE(finite.refuses(q));
  q.q[0] = 0x7F;  // e4m3fn NaN
  EXPECT_TRUE(finite.refuses(q));
  ixo::Case k = ixo::generate(new_dtype_spec(KDtype::bf16, KDtype::nvfp4), 1);
  EXPECT_FALSE(finite.refuses(k));
  k.k_scales[0] = 0xFF;  // NaN scale
  EXPECT_TRUE(finite.refuses(k));
}

}  // namespace
