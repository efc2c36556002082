// Contracts (ixo/contract.hpp): the domain check names the field, the JSON form round-trips
// and refuses typos, and the verdict judges each semantic option exactly. Every test here
// states the bug it catches; each was run against the rule it pins broken (see the names).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "ixo/contract.hpp"
#include "ixo/error.hpp"
#include "ixo/generate.hpp"
#include "ixo/verdict.hpp"
#include "literal_case.hpp"

namespace ixo {
namespace {

Case small_case(int bs = 16, int topk = 4) {
  GenSpec s = GenSpec{}.rows(2, 2).heads(2, 1, 64).blocks(bs, topk, 0, 1).lengths({100, 70});
  return generate(s, 3);
}

// Bug caught: a domain check that ignores a field (every field is refused by name).
TEST(Contract, RefusesEachDomainFieldByName) {
  const Case c = small_case();
  EXPECT_FALSE(Contract{}.refuses(c));
  auto refused = [&](Contract k, const char* word) {
    const auto why = k.refuses(c);
    ASSERT_TRUE(why) << word;
    EXPECT_NE(why->find(word), std::string::npos) << *why;
  };
  Contract k;
  k.block_sizes = {128};
  refused(k, "block_size");
  k = {};
  k.head_dims = {128};
  refused(k, "D 64");
  k = {};
  k.topk_max = 3;
  refused(k, "topk 4");
  k = {};
  k.heads = {{1, 1}};
  refused(k, "(Hq, Hk)");
  k = {};
  k.k_dtypes = {KDtype::e4m3fn};
  refused(k, "k_dtype bf16");
  k = {};
  k.score_types = {ScoreType::lse};
  refused(k, "score_type max");
  k = {};
  k.local_min = 2;
  refused(k, "local_blocks 1");
  k = {};
  k.max_rows = 3;
  refused(k, "R 4");
  k = {};
  k.max_length = 80;
  refused(k, "seq_lens[0]");
  Case p = c;
  p.cfg.packed_queries = 2;
  k = {};
  k.packing = Packing::none;
  EXPECT_TRUE(k.refuses(p));
}

// Bug caught: max_length off by one (a row of exactly max_length refused) or a small bound
// (max_length 1) taken for "no bound".
TEST(Contract, MaxLengthIsAnInclusiveBoundDownToOne) {
  const Case c = small_case();
  const std::int64_t longest = *std::max_element(c.seq_lens.begin(), c.seq_lens.end());
  Contract k;
  k.max_length = longest;
  EXPECT_FALSE(k.refuses(c)) << *k.refuses(c);
  k.max_length = longest - 1;
  EXPECT_TRUE(k.refuses(c));
  k.max_length = 1;
  ASSERT_TRUE(k.refuses(c));
  EXPECT_NE(k.refuses(c)->find("contract allows <= 1"), std::string::npos) << *k.refuses(c);
}

// Bug caught: inactive rows, negative aliases or NaN codes slipping into a contract that excludes them.
TEST(Contract, RefusesInactiveRowsAliasesAndNonFiniteInputs) {
  GenSpec s = GenSpec{}.rows(2, 2).heads(1, 1, 64).blocks(16, 4, 0, 1).lengths({100, 70});
  s.inactive_requests = 1;
  s.negative_aliases = false;
  Contract no_inactive;
  no_inactive.inactive_rows = false;
  EXPECT_TRUE(no_inactive.refuses(generate(s, 1)));
  s.inactive_requests = 0;
  EXPECT_FALSE(no_inactive.refuses(generate(s, 1)));
  s.negative_aliases = true;
  Contract no_alias;
  no_alias.negative_aliases = false;
  EXPECT_TRUE(no_alias.refuses(generate(s, 1)));
  s.negative_aliases = false;
  s.alias_minus_s = false;
  EXPECT_FALSE(no_alias.refuses(generate(s, 1)));
  s.k(KDtype::e5m2);
  s.fp8_specials = s.fp8_nonfinite = true;
  Contract finite;
  finite.nonfinite = false;
  EXPECT_TRUE(finite.refuses(generate(s, 1)));
  s.fp8_nonfinite = false;
  EXPECT_FALSE(finite.refuses(generate(s, 1)));
}

// Bug caught: the refusal of a negative token alias naming another table cell's value.
TEST(Contract, ANegativeTokenAliasIsNamedWithItsCellAndValue) {
  Config cfg;
  cfg.block_size = 2, cfg.topk = 1, cfg.init_blocks = 0, cfg.local_blocks = 0;
  const Case c = test::literal_case(cfg, 1, 1, 2, {1, 0}, std::vector<float>(8 * 2, 0.5f),
                                    {{0, 1, 2, 3}, {4, 5, -3, 7}}, {1}, {4});
  Contract k;
  k.negative_aliases = false;
  const auto why = k.refuses(c);
  ASSERT_TRUE(why);
  EXPECT_EQ(*why, "req_to_token[1, 2] = -3 is a negative alias (contract: none)");
}

// Bug caught: msa-decode's domain drifting from the upstream indexer's (docs/contracts.md: Hk 1
// with H 1/2/4; a contract that admits Hq 3 or refuses Hq 2 fuzzes the wrong shapes).
TEST(Contract, MsaDecodeTakesOneTwoOrFourQueryHeadsOverOneKvHead) {
  const Contract k = named_contract("msa-decode");
  EXPECT_EQ(k.heads, (std::vector<std::pair<int, int>>{{1, 1}, {2, 1}, {4, 1}}));
}

// Bug caught: a JSON key silently dropped on the way out or in (typos must fail by name).
TEST(Contract, JsonRoundTripsEveryNamedContractAndRefusesUnknownKeys) {
  for (const auto& name : contract_names()) {
    const Contract a = named_contract(name);
    const Contract b = contract_from_json(contract_to_json(a));
    EXPECT_EQ(contract_to_json(a), contract_to_json(b)) << name;
    EXPECT_EQ(b.name, name);
  }
  const Contract mine = contract_from_json(R"({"base": "sglang-triton-decode", "name": "mine", "topk": [1, 16],
                                               "nan_blocks": "highest", "heads": [[4, 1]]})");
  EXPECT_EQ(mine.topk_max, 16);
  EXPECT_EQ(mine.block_sizes, (std::vector<int>{16, 32, 64, 128}));  // from the base
  EXPECT_EQ(mine.semantics.nan_blocks, NanRank::highest);
  EXPECT_EQ(mine.packing, Packing::full_groups);
  try {
    contract_from_json(R"({"topk_max": 5})");
    FAIL() << "unknown key accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "contract.topk_max");
  }
  EXPECT_THROW(contract_from_json(R"({"nan_blocks": "first"})"), InputError);
  EXPECT_THROW(contract_from_json(R"({"heads": [[3, 2]]})"), InputError);
  EXPECT_THROW(contract_from_json(R"({"topk": [5, 1]})"), InputError);
  EXPECT_THROW(named_contract("sglang"), InputError);
}

// Bug caught: SGLang's contract admitting what its code asserts on (topk 128, block 8, e4m3fnuz,
// inactive rows) or refusing what it silently accepts (Hk > 1, lse, NaN codes).
TEST(Contract, SglangTritonDecodeIsWhatItsCodeDocuments) {
  const Contract c = named_contract("sglang-triton-decode");
  GenSpec s = GenSpec{}
                  .rows(2, 4)
                  .heads(4, 2, 128)
                  .blocks(64, 16, 0, 0)
                  .lengths({300, 900})
                  .k(KDtype::e5m2)
                  .score(ScoreType::lse);
  EXPECT_FALSE(c.refuses(generate(s, 1)));
  GenSpec t = s;
  t.cfg.topk = 128;
  EXPECT_TRUE(c.refuses(generate(t, 1)));
  t = s;
  t.cfg.block_size = 8;
  EXPECT_TRUE(c.refuses(generate(t, 1)));
  t = s;
  t.cfg.k_dtype = KDtype::e4m3fnuz;
  EXPECT_TRUE(c.refuses(generate(t, 1)));
  t = s;
  t.trailing_inactive_rows = 1;
  EXPECT_TRUE(c.refuses(generate(t, 1)));
  EXPECT_EQ(c.semantics.nan_blocks, NanRank::unspecified);
}

// Bug caught: full groups that ignore the slot id or the chain lengths (SGLang's caller packs
// only aligned groups of one request's consecutive draft rows).
TEST(Contract, FullGroupsAreAlignedChainGroupsOnOneSlot) {
  Case c = generate(GenSpec{}.rows(2, 3).heads(1, 1, 64).blocks(16, 4, 0, 1).lengths({40, 90}), 1);
  c.cfg.packed_queries = 3;
  EXPECT_EQ(full_group_starts(c), (std::vector<std::int64_t>{0, 0, 0, 3, 3, 3}));
  c.seq_lens[4] += 1;  // not a chain any more
  EXPECT_EQ(full_group_starts(c), (std::vector<std::int64_t>{0, 0, 0, -1, -1, -1}));
  c.cfg.packed_queries = 2;  // groups [0,2) on one slot, [2,4) straddles two requests
  EXPECT_EQ(full_group_starts(c)[0], 0);
  EXPECT_EQ(full_group_starts(c)[2], -1);
}

// One row of one head with hand-set oracle scores (the verdict reads only these).
struct Row {
  Case c;
  Expected e;
  Observed o;
  Row(std::vector<double> scores, int topk, std::vector<std::int32_t> ids, std::vector<std::uint8_t> forced = {}) {
    const auto nb = static_cast<std::int64_t>(scores.size());
    c.R = 1, c.Hq = 1, c.Hk = 1, c.D = 64, c.cfg.block_size = 1, c.cfg.topk = topk;
    c.seq_lens = {nb}, c.slot_ids = {0};
    e.Hq = 1, e.R = 1, e.NB = nb, e.topk = topk, e.nb = {nb};
    e.score = scores;
    e.tau.assign(scores.size(), 0.0);
    e.forced = forced.empty() ? std::vector<std::uint8_t>(scores.size(), 0) : forced;
    std::vector<std::int32_t> want(static_cast<std::size_t>(topk));
    select_topk(scores.data(), nb, topk, want.data());
    e.topk_idx = want;
    o.Hq = 1, o.R = 1, o.topk = topk, o.topk_idx = std::move(ids);
  }
  bool pass(Semantics s, bool exact = false) {
    JudgeOptions opt;
    opt.semantics = s;
    opt.exact_ids = exact;
    return judge(c, e, o, opt).pass;
  }
};

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Bug caught: a NaN rule ignored (NaN first accepted under "lowest", NaN skipped under
// "highest"), or "unspecified" accepting a wrong finite pick.
TEST(VerdictSemantics, NanBlocksRankWhereTheContractSays) {
  Semantics lowest, highest, unspecified;
  highest.nan_blocks = NanRank::highest;
  unspecified.nan_blocks = NanRank::unspecified;
  const std::vector<double> s = {5, kNaN, 3, 4, 1};
  EXPECT_TRUE(Row(s, 2, {0, 3}).pass(lowest));  // NaN lowest: the two best finite
  EXPECT_FALSE(Row(s, 2, {0, 1}).pass(lowest));
  EXPECT_TRUE(Row(s, 2, {0, 1}).pass(highest));  // NaN first, like torch.topk
  EXPECT_FALSE(Row(s, 2, {0, 3}).pass(highest));
  EXPECT_TRUE(Row(s, 2, {0, 1}).pass(unspecified));  // NaN taken or not ...
  EXPECT_TRUE(Row(s, 2, {0, 3}).pass(unspecified));
  EXPECT_FALSE(Row(s, 2, {1, 3}).pass(unspecified));  // ... the rest must still be the best
  EXPECT_FALSE(Row(s, 2, {0, 2}).pass(unspecified));
}

// Bug caught: "lowest id among equal forced scores" not enforced, or enforced under "any".
TEST(VerdictSemantics, ForcedTiesLowestIdOrAny) {
  const double f = 1e30;
  const std::vector<double> s = {f, f, f, 2, 1};
  const std::vector<std::uint8_t> forced = {1, 1, 1, 0, 0};
  Semantics any, lowest;
  lowest.forced_ties = ForcedTies::lowest_id;
  EXPECT_TRUE(Row(s, 2, {0, 2}, forced).pass(any));
  EXPECT_FALSE(Row(s, 2, {0, 2}, forced).pass(lowest));
  EXPECT_TRUE(Row(s, 2, {0, 1}, forced).pass(lowest));
  EXPECT_FALSE(Row(s, 2, {0, 3}, forced).pass(any));  // a forced block must win over a real one
  // Tier 3 (exact values) too: equal forced scores may be swapped, real scores never.
  EXPECT_TRUE(Row(s, 2, {0, 2}, forced).pass(any, /*exact=*/true));
  EXPECT_FALSE(Row(s, 2, {0, 2}, forced).pass(lowest, /*exact=*/true));
  EXPECT_FALSE(Row({5, 4, 3, 2, 1}, 2, {0, 2}).pass(any, /*exact=*/true));
}

// Bug caught: score-descending ids judged as ascending (every real MSA row rejected), or
// their order never checked.
TEST(VerdictSemantics, ScoreDescendingOrder) {
  Semantics asc, desc;
  desc.order = IdOrder::score_descending;
  const std::vector<double> s = {1, 9, 3, 7, 5};
  EXPECT_TRUE(Row(s, 3, {1, 3, 4}).pass(asc));
  EXPECT_TRUE(Row(s, 3, {1, 3, 4}).pass(desc));   // 9, 7, 5 is descending
  EXPECT_FALSE(Row(s, 3, {4, 3, 1}).pass(desc));  // ascending scores
  EXPECT_FALSE(Row(s, 3, {3, 1, 4}).pass(asc));   // not ascending ids
  EXPECT_FALSE(Row(s, 3, {1, 3, 2}).pass(desc));  // wrong set
}

// Bug caught: a score buffer judged although the contract says it holds nothing promised.
TEST(VerdictSemantics, ScoreBufferIgnored) {
  Row r({5, 4, 3, 2, 1}, 2, {0, 1});
  r.o.has_scores = true;
  r.o.NB = 5;
  r.o.scores = {0, 0, 0, 0, 0};
  Semantics judged, ignored;
  ignored.scores = ScoreBuffer::ignored;
  EXPECT_FALSE(r.pass(judged));
  EXPECT_TRUE(r.pass(ignored));
}

}  // namespace
}  // namespace ixo
