// The compiler's ThreadSanitizer callbacks (GCC's and Clang's -fsanitize=thread ABI), without
// the sanitizer's runtime: a kernel's translation unit built with the instrumentation
// (mbcheck_cutlass_track_accesses in CMake) sends each plain load and store here, and those of
// shared memory (the window: the running CTA's bytes, shared_window.hpp; a peer's through
// mapa) and of cudaMalloc'd global memory go to the runtime's race detector with their
// return address as their line (symbolized only for a report). Everything else (the stack,
// host memory, the runtime's own data) is dismissed by a range check; so is every access
// outside a launch's threads. A dismissed store off the thread's stack still ends a spin
// iteration (Runtime::untracked_store): the state it changed is not in the snapshot.
//
// Not tracked: registers, inline asm (the layer's instructions are Platform calls, tracked by
// the runtime), code of translation units built without the instrumentation, the runtime's
// and the host's own code. Atomics (__tsan_atomic*) are performed and tracked as atomic
// accesses, which race with plain accesses and never with each other; they are not scheduling
// points and order nothing (docs/semantics.md, "Plain accesses of unmodified code").
#include <cstddef>
#include <cstdint>
#include <vector>

#include "access_tracking.hpp"
#include "sim/host_platform.hpp"

namespace mbcheck::cutlass_host {
namespace {
// Per agent id: an access of that thread is being recorded, and the recording's own work (a
// memcpy of the runtime's) is not the kernel's. Per thread: a recording may first perform a
// deferred try_wait, a scheduling point, and other threads' accesses count meanwhile.
std::vector<unsigned char> g_recording;

// A CTA's shared memory as the runtime keeps it (a peer's, reached through mapa), in the part
// the kernel's window shows (past it: the barriers' states, which only the runtime touches).
bool peer_window(sim::Runtime& rt, const void* address) {
  const std::int64_t offset = rt.shared_memory_offset(address);
  return offset >= 0 && static_cast<std::uint64_t>(offset) < g_window_range.bytes;
}

}  // namespace

void track_slow(std::uintptr_t at, std::size_t bytes, bool write, const void* pc, bool atomic) {
  sim::Runtime* rt = sim::Runtime::current_or_null();
  if (!rt || !rt->in_thread_code()) return;
  const sim::AgentId self = rt->running_agent()->id;
  if (self < g_recording.size() && g_recording[self]) return;
  const void* address = reinterpret_cast<const void*>(at);
  if (at - g_window_range.begin < g_window_range.bytes) {
    // The window is the running CTA's shared memory: the race detector's address of a byte
    // is its CTA's own (the one bulk copies and TMA use).
    address = sim::HostPlatform::shared_memory() + (at - g_window_range.begin);
  } else if (!(at >= g_device_memory_span.begin && at < g_device_memory_span.end && is_device_memory(address)) &&
             !(g_window_range.cluster && peer_window(*rt, address))) {
    // Not the kernel's memory: no race to find, but a store there is state outside the
    // thread's registers and stack (a loop counter in a host object): spin recognition and
    // guarded tries must see it.
    if (write) rt->untracked_store(address);
    return;
  }
  if (rt->guard_probing()) {  // a bool try's probe: a read is noted, a write ends the probe
    rt->guard_probe_access(address, bytes, write);
    return;
  }
  if (g_recording.size() <= self) g_recording.resize(self + 1, 0);
  g_recording[self] = 1;
  rt->code_access(address, bytes, write, pc, atomic);
  g_recording[self] = 0;
}

void untracked_store_slow(std::uintptr_t at) {
  sim::Runtime* rt = sim::Runtime::current_or_null();
  if (!rt || !rt->in_thread_code()) return;
  const sim::AgentId self = rt->running_agent()->id;
  if (self < g_recording.size() && g_recording[self]) return;  // the runtime's own work
  rt->untracked_store(reinterpret_cast<const void*>(at));
}

}  // namespace mbcheck::cutlass_host

using mbcheck::cutlass_host::track;

extern "C" {

// --- plain, unaligned and volatile loads and stores --------------------------------------
#define MBCHECK_TSAN_ACCESS(n)                                               \
  void __tsan_read##n(void* p) { track(p, n, false, MBCHECK_PC); }           \
  void __tsan_write##n(void* p) { track(p, n, true, MBCHECK_PC); }           \
  void __tsan_unaligned_read##n(void* p) { track(p, n, false, MBCHECK_PC); } \
  void __tsan_unaligned_write##n(void* p) { track(p, n, true, MBCHECK_PC); } \
  void __tsan_volatile_read##n(void* p) { track(p, n, false, MBCHECK_PC); }  \
  void __tsan_volatile_write##n(void* p) { track(p, n, true, MBCHECK_PC); }  \
  void __tsan_read##n##_pc(void* p, void* pc) { track(p, n, false, pc); }    \
  void __tsan_write##n##_pc(void* p, void* pc) { track(p, n, true, pc); }
MBCHECK_TSAN_ACCESS(1)
MBCHECK_TSAN_ACCESS(2)
MBCHECK_TSAN_ACCESS(4)
MBCHECK_TSAN_ACCESS(8)
MBCHECK_TSAN_ACCESS(16)
#undef MBCHECK_TSAN_ACCESS
void __tsan_read_range(void* p, std::size_t n) { track(p, n, false, MBCHECK_PC); }
void __tsan_write_range(void* p, std::size_t n) { track(p, n, true, MBCHECK_PC); }

// --- what the runtime needs nothing of ------------------------------------------------------
void __tsan_init() {}
void __tsan_func_entry(void*) {}
void __tsan_func_exit() {}
void __tsan_vptr_update(void**, void*) {}
void __tsan_vptr_read(void**) {}
void __tsan_atomic_thread_fence(int) {}
void __tsan_atomic_signal_fence(int) {}

}  // extern "C"
