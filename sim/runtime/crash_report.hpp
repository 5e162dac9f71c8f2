// The crash reporter's text (sim/runtime/crash.hpp), for the signal handlers, the exit hooks
// and the watchdog: one static buffer, formatted by hand and written with write(2). Nothing
// here allocates, takes a lock or touches locale or stdio, so that it works from a signal
// handler while the heap is corrupt and another thread (or the interrupted code itself) holds
// the allocator's lock.
//
// A crash that lands back in the runtime (a crash or hang verdict) has its report written all
// the same, before the landing, and armed: should the landing not reach a usable allocator
// within kLandingDeadlineSeconds (a fault inside malloc() or free(), which abort holding their
// lock), a timer's signal handler writes it and ends the process with exit status 1.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "sim/runtime/crash.hpp"
#include "sim/runtime/runtime.hpp"

namespace mbcheck::sim::crash_report {

inline constexpr std::size_t kReportBytes = std::size_t{4} << 20;
inline constexpr double kLandingDeadlineSeconds = 0.5;

// The buffer is held by one report at a time. try_claim: false if held (by any thread);
// claim: waits for it, false if this thread holds it already (it faulted while writing).
bool try_claim() noexcept;
bool claim() noexcept;
void release() noexcept;
bool held_by_this_thread() noexcept;

// Appends to the held buffer, dropping what does not fit.
struct Writer {
  std::size_t len = 0;
  void put(const char* s, std::size_t n) noexcept;
  void put(const char* s) noexcept;
  void put(std::uint64_t v) noexcept;
  void put_seconds(double s) noexcept;  // "0.3", "10", "2.125": up to three decimals, as %g
  void flush() const noexcept;          // to stderr
};

// "thread 3 (warp 0 lane 3), agent 3", as Runtime::describe_agent.
void put_agent(Writer& w, const Runtime& rt, const Agent& a) noexcept;
// `label`, then the replay token of the schedule so far, or why it is not printed.
void put_replay(Writer& w, const Runtime& rt, const char* label) noexcept;
// "spec/kernels/x.hpp:97", relative to the source root as source_path writes it.
void put_site(Writer& w, const CallSite& site) noexcept;
const char* signal_name(int sig) noexcept;  // strsignal's text, which strsignal may allocate
// The watchdog's report of a thread stuck in protocol code for more than `limit` seconds;
// `ended` (or null) says why the process ends, before the replay token.
void put_hang(Writer& w, const Runtime& rt, double limit, const char* ended) noexcept;

// install_crash_reporter: the token's prefix and the schedule encoder; creates the landing
// timer (again in a fork's child, which does not inherit it).
void set_token(const std::string& prefix, ScheduleEncoder encode);
void prepare_landing_timer();

// A landing's report: `w` (the held buffer) is written if disarm() does not come within the
// deadline, or if this thread faults before it. Async-signal-safe.
void arm(const Writer& w) noexcept;
void disarm() noexcept;  // and releases the buffer; nothing if this thread armed none
// For a fault on the thread that armed a report (the landing itself crashed): writes it and
// ends the process, exit 1. Returns if none is armed on this thread.
void end_if_armed() noexcept;

}  // namespace mbcheck::sim::crash_report
