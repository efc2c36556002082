// ixo::index_config (kernels/case_config.hpp): the one place where a Case becomes the kernels'
// configuration (issue 24). Bug caught: a field not copied, copied from the wrong Case field,
// or renamed on the way (a twin or GPU launch reading a default instead of the case's value).
#include <gtest/gtest.h>

#include <cmath>

#include "case_config.hpp"

namespace ixo {
namespace {

// A case whose every config field and shape differs from IndexConfig's default.
Case odd_case() {
  Case c;
  c.R = 3;
  c.Hq = 8;
  c.Hk = 2;
  c.D = 64;
  c.S = 1000;
  c.rows = 5;
  c.width = 77;
  c.cfg.block_size = 16;  // NB = ceil(77 / 16) = 5
  c.cfg.topk = 3;
  c.cfg.init_blocks = 2;
  c.cfg.local_blocks = 4;
  c.cfg.score_type = ScoreType::lse;
  c.cfg.k_dtype = KDtype::e5m2;
  c.cfg.q_dtype = KDtype::e4m3fn;
  c.cfg.packed_queries = 3;
  c.cfg.page_size = 7;
  c.cfg.sm_scale = 0.25;
  c.cfg.q_scale = 3.0;
  c.cfg.k_scale = 0.5;
  return c;
}

TEST(IndexConfig, EveryFieldComesFromItsCaseField) {
  const common::IndexConfig k = index_config(odd_case());
  EXPECT_EQ(k.R, 3);
  EXPECT_EQ(k.Hq, 8);
  EXPECT_EQ(k.Hk, 2);
  EXPECT_EQ(k.D, 64);
  EXPECT_EQ(k.S, 1000);
  EXPECT_EQ(k.rows, 5);
  EXPECT_EQ(k.width, 77);
  EXPECT_EQ(k.NB, 5);
  EXPECT_EQ(k.block_size, 16);
  EXPECT_EQ(k.topk, 3);
  EXPECT_EQ(k.init_blocks, 2);
  EXPECT_EQ(k.local_blocks, 4);
  EXPECT_EQ(k.score_lse, 1);
  EXPECT_EQ(k.k_code, static_cast<int>(KDtype::e5m2));
  EXPECT_EQ(k.q_code, static_cast<int>(KDtype::e4m3fn));
  EXPECT_EQ(k.packed_queries, 3);
  EXPECT_EQ(k.page_size, 7);
  EXPECT_EQ(k.sm_q_scale, 0.75f);  // sm_scale * q_scale
  EXPECT_EQ(k.k_scale, 0.5f);
}

// Bug caught: the q_scale_ignored mutant's hook (the explicit q_scale) not reaching sm_q_scale,
// or the default sm_scale (D^-0.5) not applied when the case has none.
TEST(IndexConfig, QScaleArgumentAndDefaultSmScale) {
  Case c = odd_case();
  EXPECT_EQ(index_config(c, 1.0).sm_q_scale, 0.25f);
  c.cfg.sm_scale.reset();
  EXPECT_EQ(index_config(c).sm_q_scale, static_cast<float>(3.0 / std::sqrt(64.0)));
}

// Bug caught: the kernels' defaults drifting from the Case's (a launch struct made without a
// case reading block_size 64 where a Case says 128): one default for every field.
TEST(IndexConfig, DefaultsEqualTheCaseDefaults) {
  const common::IndexConfig d;
  const common::IndexConfig k = index_config(Case{});
  EXPECT_EQ(d.block_size, k.block_size);
  EXPECT_EQ(d.topk, k.topk);
  EXPECT_EQ(d.init_blocks, k.init_blocks);
  EXPECT_EQ(d.local_blocks, k.local_blocks);
  EXPECT_EQ(d.score_lse, k.score_lse);
  EXPECT_EQ(d.k_code, k.k_code);
  EXPECT_EQ(d.q_code, k.q_code);
  EXPECT_EQ(d.packed_queries, k.packed_queries);
  EXPECT_EQ(d.page_size, k.page_size);
  EXPECT_EQ(d.k_scale, k.k_scale);
  EXPECT_EQ(d.Hq, k.Hq);
  EXPECT_EQ(d.Hk, k.Hk);
  EXPECT_EQ(d.D, k.D);
}

}  // namespace
}  // namespace ixo
