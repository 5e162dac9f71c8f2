// Protocol code that breaks the process:
//   * a fatal signal (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT: a wild pointer, a failed
//     assert) in protocol code on its thread's fiber, or that fiber's stack overflowing: the
//     handler jumps back to the thread's landing (Runtime::run_thread_main), which ends the
//     execution with Verdict::crash, a bug like any other (its report, --json, --sarif, exit 1);
// and what is printed before the process dies, for what cannot be a verdict:
//   * a fatal signal elsewhere (the runtime's own code, off the fibers): the schedule so far as
//     a replay token, then the signal's default action (the process dies of that signal);
//   * a fault in the guard region below a fiber stack outside protocol code: "stack overflow
//     in thread N", exit 1;
//   * a crash (or hang, below) that landed but left the allocator unusable: malloc() and
//     free() abort on a corrupted heap holding their arena's lock, which the abandoned frames
//     never give back. The landing waits for every arena's lock before it allocates; if that
//     takes longer than half a second (or faults), the crash's report is printed and the
//     process ends, exit 1, whatever the other threads are blocked in;
//   * exit() or quick_exit() called by protocol code: the thread and the step, exit 1;
//   * a thread running protocol code for longer than RunLimits::watchdog_seconds (the CLI's
//     --watchdog) without calling into the runtime (no visible operation, load or store): the
//     watchdog signals its OS thread and the handler lands it as a crash lands, ending the
//     execution with Verdict::hang (a bug like any other); should it not land (no longer in
//     protocol code on its fiber), the watchdog's next round names it and the source line of
//     its last operation, exit 1.
// Exit status 1 is mbcheck's "bug found" (sim/cli/cli_support.hpp): each of these is a bug of
// the protocol, and the process cannot go on to print a verdict. Each report ends with the
// replay token of the schedule so far.
//
// The signal handlers are async-signal-safe: they allocate nothing and take no lock (a crash
// after heap corruption, with other threads alive, must not deadlock on the heap lock). They
// write the preformatted token prefix and the schedule, encoded in place, from a fixed buffer
// with write(2) (sim/runtime/crash_report.hpp); a schedule too long for that buffer is said to
// be so, not cut. The files: crash.cpp (the handlers, the landing, the exit hooks),
// crash_report.cpp (the report's text and the landing's deadline), watchdog.cpp, and
// fiber_stacks.cpp (the guarded stacks below).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "sim/runtime/runtime.hpp"

namespace mbcheck::sim {

// `token_of` turns a schedule into a replay token; it is called once, here, with an empty
// schedule, to keep the token's prefix (protocol and shape). Installs the signal handlers
// for the process and an alternate signal stack for the calling thread (Runtime::execute
// gives every other thread that runs executions one too).
// `encode_schedule` writes a schedule in the token's encoding into a fixed buffer and returns
// the bytes it needs (the report layer's encode_schedule_to): the handler calls it, so it must
// be async-signal-safe. The runtime knows no token format; the caller brings both.
using ScheduleEncoder = std::size_t (*)(const AgentId* schedule, std::size_t n, char* out, std::size_t cap) noexcept;
void install_crash_reporter(std::function<std::string(const std::vector<AgentId>&)> token_of,
                            ScheduleEncoder encode_schedule);

// --- for the runtime --------------------------------------------------------------------

// Called by Runtime::execute on each OS thread, after Boost.Fiber's thread state exists:
// an alternate signal stack (a fiber that overflows has no stack left for the handler) and
// the hooks that catch exit() and quick_exit() from protocol code. Cheap after the first call.
void prepare_thread_for_reports();

// Fiber stacks, pooled, each with a PROT_NONE guard region below it. The guard is far larger
// than a page: without -fstack-clash-protection a big frame's first touch is its lowest byte,
// which jumps a single guard page and lands in the next stack. A pool's stacks go to a
// process-wide cache when it dies (up to 256 MiB of them), so that short-lived runtimes (a
// replay, the shrinker's searches) do not map and unmap stacks every time.
inline constexpr std::size_t kStackGuardBytes = std::size_t{1} << 20;

class GuardedStackPool {
 public:
  explicit GuardedStackPool(std::size_t bytes) : bytes_(bytes) {}  // bytes: valid (stack_size_error)
  ~GuardedStackPool();
  GuardedStackPool(const GuardedStackPool&) = delete;
  GuardedStackPool& operator=(const GuardedStackPool&) = delete;
  std::size_t bytes() const { return bytes_; }
  // The lowest usable byte of a stack of bytes() bytes (reused ones hold old frames); throws
  // std::runtime_error when the kernel refuses the mapping.
  unsigned char* take();
  void give(unsigned char* lo) noexcept;  // every stack taken comes back before the pool dies

 private:
  std::size_t bytes_;
  std::size_t taken_ = 0;  // stacks this pool handed out, in all
  std::vector<unsigned char*> free_;
};

// The watchdog (watchdog.cpp): one thread per process, started by the first watch(). A
// registered runtime is checked while it runs protocol code (Runtime::in_protocol_code).
void watch(const Runtime& rt);
void unwatch(const Runtime& rt);

}  // namespace mbcheck::sim
