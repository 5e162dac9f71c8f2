// The watchdog: one thread per process, started by the first watch(). A registered runtime is
// checked while it runs protocol code (Runtime::in_protocol_code); one stuck there longer than
// its limit is first ended as a verdict (the hang signal lands it, crash.cpp), and, should that
// not land, reported by the next round, which ends the process.
#include "sim/runtime/watchdog.hpp"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "sim/runtime/crash.hpp"
#include "sim/runtime/crash_report.hpp"

namespace mbcheck::sim {

namespace {

using Clock = std::chrono::steady_clock;

std::atomic<const Runtime*> g_hang_rt{nullptr};  // what the watchdog saw stuck, and when
std::atomic<std::uint64_t> g_hang_ticks{0};

struct Watchdog {
  struct Entry {
    const Runtime* rt;
    std::uint64_t ticks;
    Clock::time_point since;  // when ticks last changed, or protocol code was last left
  };
  std::mutex mu;
  std::vector<Entry> watched;
  bool running = false;  // its thread exists in this process (a fork's child has none)
};
Watchdog& the_watchdog() {
  static auto* wd = new Watchdog;  // never destroyed: its thread outlives static destruction
  return *wd;
}

// Called with the watchdog's lock held. Formats from the runtime's state (its thread is
// inside protocol code and touches none of it), then checks that it has not moved on.
void report_hang(const Runtime& rt, std::uint64_t ticks, double limit) {
  if (g_hang_rt.load() != &rt || g_hang_ticks.load() != ticks) {  // first: end it as a verdict
    g_hang_ticks.store(ticks);
    g_hang_rt.store(&rt);
    pthread_kill(rt.os_thread(), watchdog::hang_signal());
    return;
  }
  if (!crash_report::try_claim()) return;  // another report is being written: look again next round
  crash_report::Writer w;
  crash_report::put_hang(w, rt, limit, nullptr);
  if (rt.progress_ticks() != ticks || !rt.in_protocol_code()) {
    crash_report::release();  // it moved on while this was written: not stuck after all
    return;
  }
  w.flush();
  _exit(1);
}

void watchdog_main() {
  Watchdog& wd = the_watchdog();
  auto period = std::chrono::milliseconds(100);
  auto last_scan = Clock::now();
  for (;;) {
    std::this_thread::sleep_for(period);
    std::lock_guard lock(wd.mu);
    const auto now = Clock::now();
    // A scan far later than planned means this thread was stopped too (a debugger, SIGSTOP):
    // the time without progress was not all watched. Start over.
    const bool paused = now - last_scan > 4 * period + std::chrono::milliseconds(500);
    last_scan = now;
    double shortest = 1;
    for (Watchdog::Entry& e : wd.watched) {
      const double limit = e.rt->watched_limit_s();
      const std::uint64_t ticks = e.rt->progress_ticks();
      if (limit > 0) shortest = std::min(shortest, limit);
      if (paused || limit <= 0 || ticks != e.ticks || !e.rt->in_protocol_code()) {
        e.ticks = ticks;
        e.since = now;
      } else if (std::chrono::duration<double>(now - e.since).count() > limit) {
        report_hang(*e.rt, ticks, limit);
      }
    }
    period = std::clamp(std::chrono::milliseconds(static_cast<long>(shortest * 250)), std::chrono::milliseconds(5),
                        std::chrono::milliseconds(500));
  }
}

}  // namespace

namespace watchdog {

int hang_signal() { return SIGRTMIN + 3; }

bool hang_requested(const Runtime& rt) { return g_hang_rt.load() == &rt && rt.progress_ticks() == g_hang_ticks.load(); }

void clear_hang_request() { g_hang_rt.store(nullptr); }

void register_fork_hooks() {
  static std::once_flag once;
  std::call_once(once, [] {
    pthread_atfork([] { the_watchdog().mu.lock(); }, [] { the_watchdog().mu.unlock(); },
                   [] {
                     Watchdog& wd = the_watchdog();
                     wd.watched.clear();
                     wd.running = false;
                     wd.mu.unlock();
                   });
  });
}

}  // namespace watchdog

void watch(const Runtime& rt) {
  watchdog::register_fork_hooks();
  Watchdog& wd = the_watchdog();
  std::lock_guard lock(wd.mu);
  wd.watched.push_back({&rt, rt.progress_ticks(), Clock::now()});
  if (!wd.running) {
    wd.running = true;
    std::thread(watchdog_main).detach();
  }
}

void unwatch(const Runtime& rt) {
  Watchdog& wd = the_watchdog();
  std::lock_guard lock(wd.mu);
  std::erase_if(wd.watched, [&](const Watchdog::Entry& e) { return e.rt == &rt; });
}

}  // namespace mbcheck::sim
