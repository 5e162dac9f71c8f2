#include "sim/runtime/crash_report.hpp"

#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>

namespace mbcheck::sim::crash_report {

namespace {

// One report at a time holds the buffer; a fatal one never gives it back (it ends the process).
constexpr std::size_t kReportTail = 1024;  // kept for what follows the schedule
char g_report[kReportBytes];
std::atomic<bool> g_held{false};
thread_local bool tl_held = false;

constexpr std::size_t kPrefixBytes = 1024;
char g_prefix[kPrefixBytes];         // the replay token of an empty schedule: "mb1:<protocol>:<shape>:"
ScheduleEncoder g_encode = nullptr;  // the report layer's schedule encoding (install_crash_reporter)
std::size_t g_prefix_len = 0;        // 0: no install_crash_reporter yet, or a prefix too long to keep

}  // namespace

bool try_claim() noexcept { return !tl_held && !g_held.exchange(true) && (tl_held = true); }

bool claim() noexcept {
  if (tl_held) return false;
  while (!try_claim()) {
    timespec ms{0, 1'000'000};
    nanosleep(&ms, nullptr);
  }
  return true;
}

void release() noexcept {
  tl_held = false;
  g_held = false;
}

bool held_by_this_thread() noexcept { return tl_held; }

void Writer::put(const char* s, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n && len < kReportBytes; ++i) g_report[len++] = s[i];
}
void Writer::put(const char* s) noexcept { put(s, std::strlen(s)); }
void Writer::put(std::uint64_t v) noexcept {
  char digits[20];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v);
  while (n > 0 && len < kReportBytes) g_report[len++] = digits[--n];
}
void Writer::put_seconds(double s) noexcept {
  if (!(s >= 0) || s > 1e15) s = 0;  // a limit is validated to [0, 1e9]: never here
  const auto millis = static_cast<std::uint64_t>(s * 1000 + 0.5);
  put(millis / 1000);
  std::uint64_t frac = millis % 1000;
  if (frac == 0) return;
  char digits[4] = {'.', static_cast<char>('0' + frac / 100), static_cast<char>('0' + frac / 10 % 10),
                    static_cast<char>('0' + frac % 10)};
  std::size_t n = 4;
  while (digits[n - 1] == '0') --n;
  put(digits, n);
}
void Writer::flush() const noexcept {
  for (std::size_t done = 0; done < len;) {
    const ssize_t n = write(STDERR_FILENO, g_report + done, len - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

void put_agent(Writer& w, const Runtime& rt, const Agent& a) noexcept {
  const LaunchShape& shape = rt.launch();
  if (shape.ctas > 1) {
    w.put("cta ");
    w.put(a.cta);
    w.put(" ");
  }
  w.put("thread ");
  w.put(a.thread);
  if (shape.warp_size > 0) {
    w.put(" (warp ");
    w.put(a.thread / shape.warp_size);
    w.put(" lane ");
    w.put(a.thread % shape.warp_size);
    w.put(")");
  }
  w.put(", agent ");
  w.put(a.id);
}

void put_replay(Writer& w, const Runtime& rt, const char* label) noexcept {
  const std::vector<AgentId>& schedule = rt.schedule_so_far();
  const std::size_t start = w.len;
  w.put(label);
  if (g_prefix_len > 0)
    w.put(g_prefix, g_prefix_len);
  else
    w.put("(no replay token: install_crash_reporter was not called) schedule ");
  const std::size_t room = w.len + kReportTail < kReportBytes ? kReportBytes - kReportTail - w.len : 0;
  const std::size_t need = g_encode ? g_encode(schedule.data(), schedule.size(), g_report + w.len, room) : 0;
  if (need <= room) {
    w.len += need;
    return;
  }
  w.len = start;
  w.put(label);
  w.put("not printed: the schedule so far (");
  w.put(schedule.size());
  w.put(" steps) takes ");
  w.put(need);
  w.put(" bytes, more than the crash reporter's buffer of ");
  w.put(kReportBytes - kReportTail);
  w.put("; re-run the execution (its seed or schedule) under mbcheck replay or a debugger");
}

void put_site(Writer& w, const CallSite& site) noexcept {
  const char* file = site.file ? site.file : "";
#ifdef MBCHECK_SOURCE_DIR
  if (std::strncmp(file, MBCHECK_SOURCE_DIR, std::strlen(MBCHECK_SOURCE_DIR)) == 0)
    file += std::strlen(MBCHECK_SOURCE_DIR);
#endif
  w.put(file);
  w.put(":");
  w.put(site.line);
}

const char* signal_name(int sig) noexcept {
  switch (sig) {
    case SIGSEGV: return "Segmentation fault";
    case SIGBUS: return "Bus error";
    case SIGFPE: return "Floating point exception";
    case SIGILL: return "Illegal instruction";
    case SIGABRT: return "Aborted";
  }
  return "signal";
}

void put_hang(Writer& w, const Runtime& rt, double limit, const char* ended) noexcept {
  w.put("\nmbcheck: ");
  const Agent* a = rt.running_agent();
  if (a)
    put_agent(w, rt, *a);
  else
    w.put("a thread");
  w.put(", ran protocol code for more than ");
  w.put_seconds(limit);
  w.put(" s without a visible operation, load or store, at step ");
  w.put(rt.steps());
  if (a && a->site.line > 0) {
    w.put(", since its operation at ");
    put_site(w, a->site);
  }
  w.put(" (an endless loop? if it is only slow, raise --watchdog SECONDS; 0: no limit)");
  if (ended) w.put(ended);
  w.put("; replay: ");
  put_replay(w, rt, "");
  w.put("\n");
}

void set_token(const std::string& prefix, ScheduleEncoder encode) {
  g_encode = encode;
  g_prefix_len = 0;
  if (prefix.size() <= kPrefixBytes) {
    std::memcpy(g_prefix, prefix.data(), prefix.size());
    g_prefix_len = prefix.size();
  }
}

// ---------------------------------------------------------------------------------------
// The landing deadline: a POSIX timer (made before any crash: timer_create is not
// async-signal-safe, timer_settime is) whose signal, delivered to whichever thread does not
// block it, writes the armed report. The kernel delivers it whatever the threads are blocked
// in, a futex of the allocator's lock included.

namespace {

const int kDeadlineSignal = SIGRTMIN + 4;
timer_t g_timer{};
std::atomic<bool> g_timer_ready{false};
std::atomic<bool> g_armed{false};  // taken (exchanged to false) by whoever writes or disarms it
std::size_t g_armed_len = 0;
thread_local bool tl_armed = false;

[[noreturn]] void write_armed_and_exit() {
  Writer w;
  w.len = g_armed_len;
  w.flush();
  _exit(1);
}

extern "C" void on_landing_deadline(int, siginfo_t*, void*) {
  if (g_armed.exchange(false)) write_armed_and_exit();
}

void make_timer() {
  sigevent ev{};
  ev.sigev_notify = SIGEV_SIGNAL;
  ev.sigev_signo = kDeadlineSignal;
  g_timer_ready = timer_create(CLOCK_MONOTONIC, &ev, &g_timer) == 0;
}

void set_timer(double seconds) noexcept {
  if (!g_timer_ready.load()) return;
  itimerspec when{};
  when.it_value.tv_sec = static_cast<time_t>(seconds);
  when.it_value.tv_nsec = static_cast<long>((seconds - static_cast<double>(when.it_value.tv_sec)) * 1e9);
  timer_settime(g_timer, 0, &when, nullptr);
}

}  // namespace

void prepare_landing_timer() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_sigaction = on_landing_deadline;
    sa.sa_flags = SA_ONSTACK | SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(kDeadlineSignal, &sa, nullptr);
    make_timer();
    // A fork's child has no timers of its parent's; nor a report armed by another thread.
    pthread_atfork(nullptr, nullptr, [] {
      g_armed = false;
      make_timer();
    });
  });
}

void arm(const Writer& w) noexcept {
  g_armed_len = w.len;
  tl_armed = true;
  g_armed = true;
  set_timer(kLandingDeadlineSeconds);
}

void disarm() noexcept {
  if (!tl_armed) return;
  set_timer(0);  // (a zero it_value stops the timer)
  tl_armed = false;
  if (!g_armed.exchange(false))
    for (;;) pause();  // the deadline came first: its handler is writing the report and ends the process
  release();
}

void end_if_armed() noexcept {
  if (tl_armed && g_armed.exchange(false)) write_armed_and_exit();
}

}  // namespace mbcheck::sim::crash_report
