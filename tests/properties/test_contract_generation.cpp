// Generators draw inside the kernel's contract (issue 22): never generate-then-skip. Each
// test states the bug it catches; each was shown to fail with the contract ignored by the
// generator (domain_of returning the spec's defaults: the block size 8..128 / e4m3fnuz /
// inactive-row draws appear at once).
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cstdlib>
#include <set>
#include <tuple>

#include "ixo/arbitrary.hpp"
#include "ixo/contract.hpp"

namespace ixo {
namespace {

int draws() {
  const char* env = std::getenv("IXO_CONTRACT_DRAWS");
  return env ? std::atoi(env) : 10000;
}
constexpr int kShards = 4;  // the 10,000 SGLang draws as 4 ctest tests (they run side by side)

// Draw n specs from the contract's generator (sizes 0..99 as RapidCheck uses them), generate
// each case and return how many the contract refused (with the first reason). Rows of 16384+
// blocks (one code path, 262144+ tokens at block size 16: ~0.15 s each) are generated one in
// 25; every other draw is generated and checked.
int refused_among(const Contract& c, int n, std::string* first, gen::Knobs k = {}, int from = 0) {
  k.contract = std::make_shared<const Contract>(c);
  const auto g = gen::spec(k);
  int refused = 0, long_rows = 0;
  for (int i = from; i < from + n; ++i) {
    const GenSpec s = g(rc::Random(static_cast<std::uint64_t>(i) * 7919 + 1), i % 100).value();
    const bool is_long = s.prefixes.size() == 1 && s.prefixes[0] >= 16384LL * s.cfg.block_size - 2;
    if (is_long && long_rows++ % 25 != 0) continue;
    if (const auto why = c.refuses(generate(s, static_cast<std::uint64_t>(i)))) {
      if (refused++ == 0 && first) *first = *why;
    }
  }
  return refused;
}

// Bug caught: the generator drawing a block size, dtype, topk, inactive row ... the contract excludes.
class SglangDraws : public testing::TestWithParam<int> {};
TEST_P(SglangDraws, StayInsideTheContract) {
  std::string why;
  const int n = draws() / kShards;
  EXPECT_EQ(refused_among(named_contract("sglang-triton-decode"), n, &why, {}, GetParam() * n), 0) << why;
}
INSTANTIATE_TEST_SUITE_P(ContractGeneration, SglangDraws, testing::Range(0, kShards));

TEST(ContractGeneration, CpDrawsStayInsideTheContract) {
  std::string why;
  EXPECT_EQ(refused_among(named_contract("ixo-cp"), draws() / 10, &why), 0) << why;
}

// A user's narrow contract: one block size, one head dim, few rows, short rows, no packing,
// finite inputs, no aliases; the exact-values family too (it caps lengths on its own).
TEST(ContractGeneration, NarrowCustomContractStaysInside) {
  const Contract c = contract_from_json(R"({"name": "narrow", "block_sizes": [64], "head_dims": [128], "topk": [2, 8],
      "heads": [[4, 1]], "k_dtypes": ["e4m3fn"], "score_types": ["max"], "init_max": 0, "local_blocks": [1, 1],
      "max_rows": 6, "max_length": 3000, "packing": "none", "inactive_rows": false, "negative_aliases": false,
      "nonfinite": false})");
  std::string why;
  EXPECT_EQ(refused_among(c, draws() / 10, &why), 0) << why;
  gen::Knobs exact;
  exact.values = Values::exact;
  EXPECT_EQ(refused_among(c, draws() / 30, &why, exact), 0) << why;
}

// Bug caught: shrinking leaving the contract (every shrink of a drawn spec is a spec of the
// same generator: RapidCheck shrinks inside each choice's own range).
TEST(ContractGeneration, ShrinksStayInsideTheContract) {
  const Contract c = named_contract("sglang-triton-decode");
  gen::Knobs k;
  k.contract = std::make_shared<const Contract>(c);
  const auto g = gen::spec(k);
  int checked = 0;
  for (int i = 0; i < 8; ++i) {
    auto shrinkable = g(rc::Random(static_cast<std::uint64_t>(i) + 99), 60);
    // Walk the first shrink of each step down to a fixed point (a path RapidCheck may take).
    for (int depth = 0; depth < 30; ++depth) {
      const auto next = shrinkable.shrinks().next();
      if (!next) break;
      shrinkable = *next;
      const auto why = c.refuses(generate(shrinkable.value(), 1));
      EXPECT_FALSE(why) << *why;
      ++checked;
    }
  }
  EXPECT_GT(checked, 20);
}

// Bug caught: --shapes N ignored (a JIT kernel recompiling for every case).
TEST(ContractGeneration, ShapesKeepCompileTimeTuplesToN) {
  gen::Knobs k;
  k.contract = std::make_shared<const Contract>(named_contract("sglang-triton-decode"));
  const auto shapes = gen::draw_shapes(k, 3, 1);
  ASSERT_EQ(shapes.size(), 3u);
  k.shapes = std::make_shared<const std::vector<gen::ShapeKey>>(shapes);
  const auto g = gen::spec(k);
  std::set<std::tuple<int, int, int, int, int, int, int, int>> seen, unlimited;
  for (int i = 0; i < 300; ++i) {
    const GenSpec s = g(rc::Random(static_cast<std::uint64_t>(i) + 5), i % 100).value();
    const gen::ShapeKey key = gen::shape_key(s, Packing::full_groups);
    EXPECT_NE(std::find(shapes.begin(), shapes.end(), key), shapes.end());
    seen.insert({key.block_size, key.D, key.Hq, key.Hk, key.topk, key.pack, static_cast<int>(key.k_dtype),
                 static_cast<int>(key.score_type)});
    EXPECT_FALSE(k.contract->refuses(generate(s, 1)));
  }
  EXPECT_EQ(seen.size(), 3u);  // and every tuple is used
  k.shapes.reset();
  const auto free = gen::spec(k);
  for (int i = 0; i < 300; ++i) {
    const gen::ShapeKey key =
        gen::shape_key(free(rc::Random(static_cast<std::uint64_t>(i) + 5), i % 100).value(), Packing::full_groups);
    unlimited.insert({key.block_size, key.D, key.Hq, key.Hk, key.topk, key.pack, static_cast<int>(key.k_dtype),
                      static_cast<int>(key.score_type)});
  }
  EXPECT_GT(unlimited.size(), 100u);  // without --shapes nearly every case is a new compile
}

}  // namespace
}  // namespace ixo
