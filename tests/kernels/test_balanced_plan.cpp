// The balanced packed plan's arithmetic (kernels/common/plans.hpp cta_span_count / cta_span, span_blocks,
// balanced_ctas; IXO_PACKED_BALANCED). The coverage checks below derive ownership from the
// unit layout's definition (program g owns units [g G, (g + 1) G), CTA x units [x P, (x + 1) P)),
// not from the functions; the literal values are worked out by hand in the comments.
// The whole plan (grid, twin, kernels) is judged by the testbed when the tree is built with
// -DIXO_PACKED_BALANCED=1 (test_kernels_cpu, test_graph_plan's coverage of real batches).
//
// Seen to fail on injected bugs (temporarily, one at a time, reverted), in a build with
// -DIXO_PACKED_BALANCED=1 -DIXO_BF16_PACKED_WAVE=1: span_blocks ending each span one block early:
// PartitionsEveryTile, HandWorked16x131072 and 149 tests of the twin's testbed (unscored cells);
// cta_span_count always 1 (a crossing CTA drops the next program's head): CoversEveryUnitOnce,
// PartitionsEveryTile, HandWorked16x131072, two kernel-matrix rows and test_graph_plan's
// GraphPlan.MaxShapePlanCoversSmallerBatchesPacked; the dead units applied to every program
// (not only those a CTA crosses into): HandWorked16x131072.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "plans.hpp"

namespace cm = ixo::common;

namespace {

// CTA x's spans, all of them (plans.hpp gives them one at a time).
struct CtaSpans {
  cm::ProgramSpan span[2];
  int count;
};
CtaSpans cta_spans(std::int64_t x, std::int64_t P, std::int64_t G) {
  CtaSpans r{};
  r.count = cm::cta_span_count(x, P, G);
  for (int i = 0; i < r.count && i < 2; ++i) r.span[i] = cm::cta_span(x, P, G, i);
  return r;
}

std::vector<std::int64_t> shapes_g(std::int64_t P) {
  std::vector<std::int64_t> v;
  for (std::int64_t G = P; G <= 3 * P + 7; ++G) v.push_back(G);
  for (const std::int64_t G : {264, 396})
    if (G >= P) v.push_back(G);
  return v;
}

TEST(BalancedPlan, CoversEveryUnitOnce) {
  for (std::int64_t P = 1; P <= 40; ++P)
    for (const std::int64_t G : shapes_g(P)) {
      std::vector<int> owners(static_cast<std::size_t>(P * G), 0);
      for (std::int64_t x = 0; x < G; ++x) {
        const CtaSpans cs = cta_spans(x, P, G);
        ASSERT_GE(cs.count, 1) << "P " << P << " G " << G << " x " << x;
        ASSERT_LE(cs.count, 2);
        std::int64_t units = 0;
        for (int i = 0; i < cs.count; ++i) {
          const cm::ProgramSpan& s = cs.span[i];
          ASSERT_TRUE(s.program >= 0 && s.program < P && s.u0 < s.u1 && s.u0 >= 0 && s.u1 <= G)
              << "P " << P << " G " << G << " x " << x << " span " << i;
          for (std::int64_t u = s.u0; u < s.u1; ++u) {
            const std::int64_t global = s.program * G + u;
            ASSERT_TRUE(global >= x * P && global < (x + 1) * P) << "unit " << global << " is not CTA " << x << "'s";
            ++owners[static_cast<std::size_t>(global)];
          }
          units += s.u1 - s.u0;
        }
        EXPECT_EQ(units, P) << "every CTA covers P units";
      }
      for (std::size_t i = 0; i < owners.size(); ++i)
        ASSERT_EQ(owners[i], 1) << "P " << P << " G " << G << " unit " << i;
    }
}

TEST(BalancedPlan, CrossedMeansTheCtaHoldsThePreviousProgramsEnd) {
  for (std::int64_t P = 1; P <= 24; ++P)
    for (const std::int64_t G : shapes_g(P))
      for (std::int64_t x = 0; x < G; ++x) {
        const CtaSpans cs = cta_spans(x, P, G);
        for (int i = 0; i < cs.count; ++i) {
          const cm::ProgramSpan& s = cs.span[i];
          // The program's unit 0 is inside a CTA iff that CTA also holds the previous program's last unit.
          const bool holds_previous = i == 1 && cs.span[0].program == s.program - 1 && cs.span[0].u1 == G;
          if (s.u0 == 0) {
            EXPECT_EQ(s.crossed, holds_previous) << "P " << P << " G " << G << " x " << x;
          }
        }
      }
}

TEST(BalancedPlan, PartitionsEveryTile) {
  std::vector<std::int64_t> nbs;
  for (std::int64_t nb = 0; nb <= 80; ++nb) nbs.push_back(nb);
  for (const std::int64_t nb : {257, 1025, 4097}) nbs.push_back(nb);
  for (const std::int64_t P : {1, 2, 3, 5, 8, 16, 17, 32})
    for (const std::int64_t G : shapes_g(P))
      for (const std::int64_t nb : nbs)
        for (std::int64_t g = 0; g < P; ++g) {
          // CTAs in order: program g's spans must tile [0, nb) without gap or overlap.
          std::int64_t next = 0;
          for (std::int64_t x = 0; x < G; ++x) {
            const CtaSpans cs = cta_spans(x, P, G);
            for (int i = 0; i < cs.count; ++i) {
              if (cs.span[i].program != g) continue;
              std::int64_t b0 = -1, b1 = -1;
              cm::span_blocks(cs.span[i], nb, G, &b0, &b1);
              ASSERT_EQ(b0, next) << "P " << P << " G " << G << " nb " << nb << " program " << g << " CTA " << x;
              ASSERT_LE(b0, b1);
              next = b1;
            }
          }
          ASSERT_EQ(next, nb) << "P " << P << " G " << G << " nb " << nb << " program " << g;
        }
}

TEST(BalancedPlan, HandWorked16x131072) {
  // 16 groups (P), nb 1025 blocks (131072 + 4 tokens, bs 128).
  std::int64_t b0, b1;
  // bf16 one wave, G = 264: CTA 0 covers units [0, 16) of group 0, unit u -> block ceil(u * 1025 / 264).
  CtaSpans cs = cta_spans(0, 16, 264);
  ASSERT_EQ(cs.count, 1);
  cm::span_blocks(cs.span[0], 1025, 264, &b0, &b1);
  EXPECT_EQ(b0, 0);
  EXPECT_EQ(b1, 63);  // ceil(16 * 1025 / 264) = ceil(62.12)
  // CTA 16: units [256, 272) = group 0 [256, 264) and group 1 [0, 8). Group 1 starts inside the
  // CTA (264 % 16 = 8): dead units d = round(4 * 264 / 1025) = 1.
  cs = cta_spans(16, 16, 264);
  ASSERT_EQ(cs.count, 2);
  EXPECT_EQ(cs.span[0].program, 0);
  EXPECT_FALSE(cs.span[0].crossed);
  cm::span_blocks(cs.span[0], 1025, 264, &b0, &b1);
  EXPECT_EQ(b0, 994);  // ceil(256 * 1025 / 264) = ceil(993.94)
  EXPECT_EQ(b1, 1025);
  EXPECT_EQ(cs.span[1].program, 1);
  EXPECT_TRUE(cs.span[1].crossed);
  cm::span_blocks(cs.span[1], 1025, 264, &b0, &b1);
  EXPECT_EQ(b0, 0);
  EXPECT_EQ(b1, 28);  // (8 - 1) units of 263: ceil(7 * 1025 / 263) = ceil(27.28)
  // CTA 17: group 1 units [8, 24): blocks [28, ceil(23 * 1025 / 263) = ceil(89.64) = 90).
  cs = cta_spans(17, 16, 264);
  ASSERT_EQ(cs.count, 1);
  cm::span_blocks(cs.span[0], 1025, 264, &b0, &b1);
  EXPECT_EQ(b0, 28);
  EXPECT_EQ(b1, 90);
  // CTA 33: units [528, 544) = group 2 [0, 16); 528 = 33 * 16, so no CTA crosses into group 2: no dead units.
  cs = cta_spans(33, 16, 264);
  ASSERT_EQ(cs.count, 1);
  EXPECT_EQ(cs.span[0].program, 2);
  EXPECT_FALSE(cs.span[0].crossed);
  cm::span_blocks(cs.span[0], 1025, 264, &b0, &b1);
  EXPECT_EQ(b0, 0);
  EXPECT_EQ(b1, 63);
  // fp8 one wave, G = 396: CTA 24 covers units [384, 400) = group 0 [384, 396) and group 1 [0, 4);
  // d = round(4 * 396 / 1025) = round(1.55) = 2; group 1 blocks [0, ceil(2 * 1025 / 394) = ceil(5.20) = 6).
  cs = cta_spans(24, 16, 396);
  ASSERT_EQ(cs.count, 2);
  cm::span_blocks(cs.span[0], 1025, 396, &b0, &b1);
  EXPECT_EQ(b0, 994);  // ceil(384 * 1025 / 396) = ceil(993.94)
  EXPECT_EQ(b1, 1025);
  cm::span_blocks(cs.span[1], 1025, 396, &b0, &b1);
  EXPECT_EQ(b0, 0);
  EXPECT_EQ(b1, 6);
  // A CTA of fp8's balanced plan streams at most 42 blocks (16 units of 1025 / 396 = 2.59 blocks,
  // ceil at both ends), against 43 in the chunk plan's 24 chunks.
  std::int64_t most = 0;
  for (std::int64_t x = 0; x < 396; ++x) {
    cs = cta_spans(x, 16, 396);
    std::int64_t n = 0;
    for (int i = 0; i < cs.count; ++i) {
      cm::span_blocks(cs.span[i], 1025, 396, &b0, &b1);
      n += b1 - b0;
    }
    most = n > most ? n : most;
  }
  EXPECT_EQ(most, 42);
}

TEST(BalancedPlan, CtasAndThePlan) {
  EXPECT_EQ(cm::balanced_ctas(16, 1, 1025, 396), 396);  // every fp8 slot
  EXPECT_EQ(cm::balanced_ctas(16, 1, 1025, 264), 264);
  EXPECT_EQ(cm::balanced_ctas(16, 4, 1025, 396), 99);  // a K head's share
  EXPECT_EQ(cm::balanced_ctas(8, 1, 26, 396), 48);     // at least 4 blocks a CTA: 8 x (26 / 4)
  EXPECT_EQ(cm::balanced_ctas(500, 1, 4096, 396), 0);  // more programs than slots: the chunk plan
  EXPECT_EQ(cm::balanced_ctas(16, 1, 3, 396), 0);      // fewer than 4 blocks: 16 x 0 < 16
  cm::IndexConfig k;                                   // 16 requests x 4 draft rows of 131072 tokens, bs 128, P 4
  k.R = 64;
  k.NB = 1025;
  k.packed_queries = 4;
  k.k_code = cm::kE4m3fn;
  EXPECT_EQ(cm::native_plan(k, true).span_ctas, IXO_PACKED_BALANCED ? 396 : 0);
  EXPECT_EQ(cm::native_plan(k, true).grid_x(), IXO_PACKED_BALANCED || IXO_PACKED_CLAIMS == 1 ? 396 : 16 * 24);
  EXPECT_EQ(cm::native_plan(k, true, 5).span_ctas, 0);  // a forced chunk count keeps the chunk plan
  EXPECT_EQ(cm::native_plan(k, false).span_ctas, 0);    // per-row
  k.k_code = cm::kBf16;
  EXPECT_EQ(cm::native_plan(k, true).span_ctas, IXO_PACKED_BALANCED && IXO_BF16_PACKED_WAVE ? 264 : 0);
  // The claim grid (IXO_PACKED_CLAIMS, work_claims.hpp): the same slots (1) or the chunk plan's CTAs (2),
  // only with the knob (and, for bf16, the one-wave plan), never for a forced chunk count or per-row.
  k.k_code = cm::kE4m3fn;
  EXPECT_EQ(cm::native_plan(k, true).claim_ctas, IXO_PACKED_CLAIMS == 1 ? 396 : IXO_PACKED_CLAIMS == 2 ? 16 * 24 : 0);
  EXPECT_EQ(cm::native_plan(k, true, 5).claim_ctas, 0);
  EXPECT_EQ(cm::native_plan(k, false).claim_ctas, 0);
  k.k_code = cm::kBf16;
  EXPECT_EQ(cm::native_plan(k, true).claim_ctas,
            !IXO_BF16_PACKED_WAVE ? 0 : IXO_PACKED_CLAIMS == 1 ? 264 : IXO_PACKED_CLAIMS == 2 ? 16 * 16 : 0);
  EXPECT_EQ(cm::native_plan(k, true).grid_x(),
            IXO_BF16_PACKED_WAVE ? (IXO_PACKED_CLAIMS == 1 || IXO_PACKED_BALANCED ? 264 : 16 * 16) : 16 * 64);
}

}  // namespace
