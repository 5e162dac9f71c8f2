// The shared-memory window (shared_window.hpp): a second mapping of the running CTA's pages.
#include "shared_window.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <thread>

#include "sim/runtime/runtime.hpp"
#include "sim/runtime/shared_buffer.hpp"

alignas(4096) char mbcheck_cutlass_shared_window[mbcheck::cutlass_host::kSharedWindowBytes];

namespace mbcheck::cutlass_host {

WindowRange g_window_range;

namespace {

std::size_t page_rounded(std::size_t n) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return (n + page - 1) / page * page;
}

// No access: a plain load or store of shared memory outside a launch crashes loudly instead
// of reading or writing bytes that are no CTA's.
void seal() {
  void* at = mmap(mbcheck_cutlass_shared_window, kSharedWindowBytes, PROT_NONE,
                  MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (at == MAP_FAILED) std::perror("mbcheck: sealing the shared-memory window");
}
[[maybe_unused]] const bool g_sealed = (seal(), true);

std::size_t g_mapped_bytes = 0;  // of the window, mapped onto a CTA (0: sealed)
// The window is one per process: it follows the executions of one OS thread (the first to
// enter a CTA after the launch began). A search on several threads (--jobs) leaves the others'
// plain shared-memory accesses on that thread's CTA: they are told once.
std::atomic<std::thread::id> g_owner{};
std::atomic<bool> g_told_jobs{false};
std::atomic<bool> g_told_mremap{false};

// The runtime's hook: a thread of another CTA enters kernel code. mremap with old size 0
// makes a second mapping of the CTA's shared pages at the window (the old one stays).
void enter_cta(unsigned char* smem, std::size_t) {
  std::thread::id owner{};
  g_owner.compare_exchange_strong(owner, std::this_thread::get_id());
  if (owner != std::thread::id{} && owner != std::this_thread::get_id()) {
    if (!g_told_jobs.exchange(true))
      std::fprintf(stderr,
                   "mbcheck: the CUTLASS host layer's shared-memory window follows one worker thread: plain "
                   "shared-memory accesses of kernel code need --jobs 1\n");
    return;
  }
  const std::size_t bytes = page_rounded(current_geometry().window_bytes);
  if (bytes == 0) return;
  void* at = mremap(smem, 0, bytes, MREMAP_MAYMOVE | MREMAP_FIXED, mbcheck_cutlass_shared_window);
  if (at == MAP_FAILED) {
    // (valgrind, for one, declines the second mapping): the window stays sealed, and a plain
    // shared-memory access crashes as it did before the window followed the CTAs.
    if (!g_told_mremap.exchange(true))
      std::perror("mbcheck: mapping the shared-memory window onto a CTA (plain shared-memory accesses will crash)");
    if (g_mapped_bytes) seal();
    g_mapped_bytes = 0;
    return;
  }
  g_mapped_bytes = bytes;
}

}  // namespace

void open_shared_window(const LaunchGeometry& g) {
  sim::SharedBuffer::set_aliasable(true);
  sim::Runtime::set_cta_entered_hook(&enter_cta);
  g_window_range = {reinterpret_cast<std::uintptr_t>(mbcheck_cutlass_shared_window), g.window_bytes,
                    g.cluster.x * g.cluster.y > 1};
}

void close_shared_window() {
  sim::Runtime::set_cta_entered_hook(nullptr);
  g_owner = std::thread::id{};
  g_window_range = {};
  if (g_mapped_bytes) seal();
  g_mapped_bytes = 0;
}

}  // namespace mbcheck::cutlass_host
