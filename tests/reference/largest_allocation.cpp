// Replaces the global operator new so a test can see the largest single allocation, the
// bytes allocated in total (a work bound that does not depend on the machine's speed) and
// the peak of live heap bytes (kept in its own translation unit: GCC's
// -Wmismatched-new-delete misfires when the replacement is inlined next to its callers).
// Allocations over 1 GiB are refused with std::bad_alloc, so a regression fails its test
// instead of paging in gigabytes on a shared machine. Each block carries a 16-byte header
// with its size, so plain operator delete can account for it.
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace {
std::atomic<std::size_t> g_largest{0};
std::atomic<std::size_t> g_live{0};
std::atomic<std::size_t> g_peak{0};
std::atomic<std::size_t> g_total{0};
constexpr std::size_t kHeader = 16;  // keeps the default new alignment (16)
}  // namespace

namespace ixo_test {
std::size_t largest_allocation() { return g_largest.load(); }
void reset_largest_allocation() { g_largest = 0; }
std::size_t total_allocated() { return g_total.load(); }
void reset_total_allocated() { g_total = 0; }
std::size_t live_bytes() { return g_live.load(); }
std::size_t peak_live_bytes() { return g_peak.load(); }
void reset_peak_live_bytes() { g_peak = g_live.load(); }
}  // namespace ixo_test

void* operator new(std::size_t n) {
  std::size_t seen = g_largest.load();
  while (n > seen && !g_largest.compare_exchange_weak(seen, n)) {
  }
  g_total.fetch_add(n);
  if (n > (std::size_t{1} << 30)) throw std::bad_alloc();
  auto* p = static_cast<unsigned char*>(std::malloc(n + kHeader));
  if (!p) throw std::bad_alloc();
  *reinterpret_cast<std::size_t*>(p) = n;
  const std::size_t live = g_live.fetch_add(n) + n;
  std::size_t peak = g_peak.load();
  while (live > peak && !g_peak.compare_exchange_weak(peak, live)) {
  }
  return p + kHeader;
}
void operator delete(void* p) noexcept {
  if (!p) return;
  auto* b = static_cast<unsigned char*>(p) - kHeader;
  g_live.fetch_sub(*reinterpret_cast<std::size_t*>(b));
  std::free(b);
}
void operator delete(void* p, std::size_t) noexcept { operator delete(p); }
