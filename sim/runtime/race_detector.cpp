// The race detector over dense clocks (its definitions: race_detector_impl.hpp), and the
// shadow pages' generations and pool, one for every detector of the process.
#include <atomic>

#include "sim/runtime/race_detector_impl.hpp"

namespace mbcheck::sim {

// Shadow pages outlive their detector: a check builds a runtime, and so a detector, per
// search, and zeroing fresh 48 KiB pages was a quarter of a 1-execution check's time. A word
// is valid only while its generation is its detector's current one, and generations come from
// one process-wide counter, so no generation is ever handed out twice (until the counter
// wraps, after 2^32 executions: then every detector clears its pages at its next reset, and
// pooled pages are cleared when taken). Pooled per OS thread, up to 64 pages (3 MiB).
namespace {
std::atomic<std::uint32_t> g_generation{0};
std::atomic<std::uint32_t> g_generation_wraps{0};
constexpr std::size_t kPooledPages = 64;

struct PagePool {
  std::vector<std::pair<std::unique_ptr<race_shadow::Page>, std::uint32_t>> pages;  // (page, wraps when pooled)
  static PagePool& of_this_thread() {
    thread_local PagePool pool;
    return pool;
  }
};
}  // namespace

namespace race_shadow {

void clear_generations(Page& p) {
  for (Word& w : p.words) w.generation = 0;
}

std::uint32_t next_generation() {
  std::uint32_t g = g_generation.fetch_add(1, std::memory_order_relaxed) + 1;
  if (g == 0) {
    g_generation_wraps.fetch_add(1, std::memory_order_relaxed);
    g = g_generation.fetch_add(1, std::memory_order_relaxed) + 1;
  }
  return g;
}

std::uint32_t generation_wraps() { return g_generation_wraps.load(std::memory_order_relaxed); }

std::unique_ptr<Page> take_page() {
  auto& pooled = PagePool::of_this_thread().pages;
  if (pooled.empty()) return std::make_unique<Page>();  // generations 0 (default member init)
  auto [page, wraps] = std::move(pooled.back());
  pooled.pop_back();
  if (wraps != generation_wraps()) clear_generations(*page);
  return std::move(page);
}

void pool_page(std::unique_ptr<Page> page) {
  auto& pooled = PagePool::of_this_thread().pages;
  if (pooled.size() < kPooledPages) pooled.emplace_back(std::move(page), generation_wraps());
}

}  // namespace race_shadow

template class RaceDetectorCore<DenseClock>;

}  // namespace mbcheck::sim
