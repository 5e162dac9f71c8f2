// The range check of the compiler callbacks (access_tracking.cpp, access_tracking_atomics.cpp,
// access_tracking_memory.cpp): inline in each, so that an access of neither shared nor global
// memory costs a few compares.
#pragma once

#include <cstddef>
#include <cstdint>

#include "device_memory.hpp"
#include "shared_window.hpp"

namespace mbcheck::cutlass_host {

// An access of the calling kernel thread, at `at` (the window's bytes translated to the
// running CTA's): to the race detector if it is shared or global memory.
void track_slow(std::uintptr_t at, std::size_t bytes, bool write, const void* pc, bool atomic);
// A store outside the kernel's memory and away from the running thread's stack (a host object,
// a global of the program): Runtime::untracked_store.
void untracked_store_slow(std::uintptr_t at);
// Stores this far above the callback's own frame are the thread's stack, which spin snapshots
// hold (a deeper one is told apart by untracked_store_slow against the fiber's bounds).
inline constexpr std::uintptr_t kNearStackBytes = std::uintptr_t{1} << 20;

[[gnu::always_inline]] inline void track(const volatile void* p, std::size_t bytes, bool write, const void* pc,
                                         bool atomic = false) {
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  if (g_window_range.begin == 0) return;  // no launch
  if (at - g_window_range.begin >= g_window_range.bytes &&
      (at < g_device_memory_span.begin || at >= g_device_memory_span.end) && !g_window_range.cluster) {
    if (write && at - reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0)) >= kNearStackBytes) [[unlikely]]
      untracked_store_slow(at);
    return;
  }
  track_slow(at, bytes, write, pc, atomic);
}

}  // namespace mbcheck::cutlass_host

#define MBCHECK_PC __builtin_return_address(0)
