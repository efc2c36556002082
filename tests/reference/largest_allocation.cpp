// Replaces the global operator new so a test can see the largest single allocation (kept
// in its own translation unit: GCC's -Wmismatched-new-delete misfires when the replacement
// is inlined next to its callers). Allocations over 1 GiB are refused with std::bad_alloc,
// so a regression fails its test instead of paging in gigabytes on a shared machine.
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace {
std::atomic<std::size_t> g_largest{0};
}  // namespace

namespace ixo_test {
std::size_t largest_allocation() { return g_largest.load(); }
void reset_largest_allocation() { g_largest = 0; }
}  // namespace ixo_test

void* operator new(std::size_t n) {
  std::size_t seen = g_largest.load();
  while (n > seen && !g_largest.compare_exchange_weak(seen, n)) {
  }
  if (n > (std::size_t{1} << 30)) throw std::bad_alloc();
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
