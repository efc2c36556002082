// The property generator draws shared K (issue 25 item 4): paged cases (page size 16 or 128,
// page tables random / interval / reverse) whose physical pages are read by several table
// rows, and token-slot cases whose requests share a prefix of slots; the other draws keep
// the old distribution (every (table row, position) its own slot). Counted over fixed draws.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cstdio>
#include <set>

#include "ixo/arbitrary.hpp"

namespace ixo {
namespace {

struct Counts {
  int n = 0, shared = 0, paged = 0, paged_shared = 0, prefix_shared = 0, private_slots = 0, old_kind_shared = 0;
  std::set<int> page_sizes;
  std::set<PageTable> kinds;
};

Counts count(const gen::Knobs& k, int n) {
  const auto g = gen::spec(k);
  Counts out;
  for (int i = 0; i < n; ++i) {
    const GenSpec s = g(rc::Random(static_cast<std::uint64_t>(i) * 7919 + 11), i % 100).value();
    const Case c = generate(s, static_cast<std::uint64_t>(i) + 1);
    const bool shared = rows_sharing_slots(c) > 0;
    ++out.n;
    out.shared += shared;
    if (c.paged()) {
      ++out.paged;
      out.paged_shared += shared;
      out.page_sizes.insert(c.cfg.page_size);
      out.kinds.insert(s.pages);
    } else if (s.shared_prefix > 0) {
      out.prefix_shared += shared;
    } else {
      ++out.private_slots;
      out.old_kind_shared += shared;  // the old distribution: never shared
    }
  }
  std::printf("%d draws: %d share slots (%d of %d paged, %d with a shared prefix), %d private-slot draws\n", out.n,
              out.shared, out.paged_shared, out.paged, out.prefix_shared, out.private_slots);
  return out;
}

TEST(SharedK, GeneratorDrawsSharedPagesAndSlots) {
  const Counts c = count({}, 400);
  EXPECT_GE(c.shared, c.n / 5);
  EXPECT_GE(c.paged_shared, c.n / 10);
  EXPECT_GE(c.prefix_shared, c.n / 20);
  EXPECT_EQ(c.page_sizes, (std::set<int>{16, 128}));
  EXPECT_EQ(c.kinds.size(), 3u);
  EXPECT_GE(c.private_slots, c.n / 2);  // most draws keep the old distribution
  EXPECT_EQ(c.old_kind_shared, 0);
}

TEST(SharedK, KnobOffAndExactValuesDrawPrivateSlots) {
  gen::Knobs off;
  off.shared_k = false;
  EXPECT_EQ(count(off, 80).shared, 0);
  gen::Knobs exact;
  exact.values = Values::exact;
  EXPECT_EQ(count(exact, 80).shared, 0);  // exact values need private slots
}

}  // namespace
}  // namespace ixo
