// Fiber stacks with guard regions (GuardedStackPool, sim/runtime/crash.hpp), the process-wide
// cache of unused ones, and the defaults every RunLimits starts with (stack size, watchdog).
#include <fmt/format.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <new>
#include <stdexcept>
#include <utility>
#include <vector>

#include "sim/runtime/crash.hpp"

namespace mbcheck::sim {

namespace {

std::atomic<std::size_t> g_default_stack_bytes{64 * 1024};
std::atomic<double> g_default_watchdog_s{10};

constexpr std::size_t kCachedStackBytes = std::size_t{256} << 20;
struct StackCache {
  std::mutex mu;
  std::vector<std::pair<std::size_t, unsigned char*>> stacks;  // (size, lowest usable byte)
  std::size_t bytes = 0;
};
StackCache& stack_cache() {
  static auto* cache = new StackCache;  // never destroyed: pools may die during static destruction
  // A fork's child must not inherit its lock held.
  static const bool hooked =
      pthread_atfork([] { cache->mu.lock(); }, [] { cache->mu.unlock(); }, [] { cache->mu.unlock(); }) == 0;
  (void)hooked;
  return *cache;
}

// A fiber stack that cannot be mapped for want of memory is out of memory like any other
// allocation: the process's new-handler (the CLI's one-line report) if there is one.
[[noreturn]] void out_of_memory() {
  if (std::new_handler h = std::get_new_handler()) h();
  throw std::bad_alloc();
}

}  // namespace

std::optional<std::string> stack_size_error(std::size_t bytes) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  if (bytes < 16 * 1024 || bytes > 16 * 1024 * 1024 || bytes % page != 0)
    return fmt::format(
        "fiber stack size {} bytes: must be a multiple of the page size ({} bytes) from 16 KiB "
        "(16384) to 16 MiB (16777216)",
        bytes, page);
  return std::nullopt;
}

std::size_t default_stack_bytes() { return g_default_stack_bytes.load(std::memory_order_relaxed); }

void set_default_stack_bytes(std::size_t bytes) {
  if (auto err = stack_size_error(bytes)) throw std::invalid_argument(*err);
  g_default_stack_bytes.store(bytes, std::memory_order_relaxed);
}

double default_watchdog_seconds() { return g_default_watchdog_s.load(std::memory_order_relaxed); }
void set_default_watchdog_seconds(double seconds) { g_default_watchdog_s.store(seconds, std::memory_order_relaxed); }

GuardedStackPool::~GuardedStackPool() {
  StackCache& cache = stack_cache();
  std::lock_guard lock(cache.mu);
  for (unsigned char* lo : free_) {
    if (cache.bytes + bytes_ <= kCachedStackBytes) {
      cache.stacks.push_back({bytes_, lo});
      cache.bytes += bytes_;
    } else {
      munmap(lo - kStackGuardBytes, kStackGuardBytes + bytes_);
    }
  }
}

unsigned char* GuardedStackPool::take() {
  if (!free_.empty()) {
    unsigned char* lo = free_.back();
    free_.pop_back();
    return lo;
  }
  free_.reserve(taken_ + 1);  // give() never allocates
  ++taken_;
  {
    StackCache& cache = stack_cache();
    std::lock_guard lock(cache.mu);
    for (std::size_t i = cache.stacks.size(); i-- > 0;) {
      if (cache.stacks[i].first != bytes_) continue;
      unsigned char* lo = cache.stacks[i].second;
      cache.stacks.erase(cache.stacks.begin() + static_cast<std::ptrdiff_t>(i));
      cache.bytes -= bytes_;
      return lo;
    }
  }
  // Reserved PROT_NONE, then the stack part made writable: the guard costs address space only.
  void* base = mmap(nullptr, kStackGuardBytes + bytes_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) {
    --taken_;
    if (errno == ENOMEM) out_of_memory();
    throw std::runtime_error(
        fmt::format("mbcheck: cannot map a fiber stack of {} bytes: {}", bytes_, std::strerror(errno)));
  }
  auto* lo = static_cast<unsigned char*>(base) + kStackGuardBytes;
  if (mprotect(lo, bytes_, PROT_READ | PROT_WRITE) != 0) {
    const int err = errno;
    munmap(base, kStackGuardBytes + bytes_);
    --taken_;
    if (err == ENOMEM) out_of_memory();
    throw std::runtime_error(
        fmt::format("mbcheck: cannot map a fiber stack of {} bytes: {}", bytes_, std::strerror(err)));
  }
  return lo;
}

void GuardedStackPool::give(unsigned char* lo) noexcept { free_.push_back(lo); }

}  // namespace mbcheck::sim
