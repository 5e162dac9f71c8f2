#include "sim/runtime/crash.hpp"

#include <fmt/format.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <boost/fiber/context.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <mutex>
#include <thread>

namespace mbcheck::sim {

namespace {

// ---------------------------------------------------------------------------------------
// The report: written into one static buffer (nothing is allocated once the process is
// broken) and out with write(2). One report at a time holds it; the first fatal one never
// gives it back (it ends the process).

constexpr std::size_t kReportBytes = std::size_t{4} << 20;
constexpr std::size_t kReportTail = 1024;  // kept for what follows the schedule
char g_report[kReportBytes];
std::atomic<bool> g_reporting{false};

constexpr std::size_t kPrefixBytes = 1024;
char g_prefix[kPrefixBytes];         // the replay token of an empty schedule: "mb1:<protocol>:<shape>:"
ScheduleEncoder g_encode = nullptr;  // the report layer's schedule encoding (install_crash_reporter)
std::size_t g_prefix_len = 0;        // 0: no install_crash_reporter yet, or a prefix too long to keep

thread_local bool tl_reporting = false;  // this thread holds it
bool try_claim_report() { return !tl_reporting && !g_reporting.exchange(true) && (tl_reporting = true); }
// Waits for the report; false if this thread holds it already (it faulted writing it).
bool claim_report() {
  if (tl_reporting) return false;
  while (!try_claim_report()) {
    timespec ms{0, 1'000'000};
    nanosleep(&ms, nullptr);  // async-signal-safe
  }
  return true;
}
void release_report() {
  tl_reporting = false;
  g_reporting = false;
}

struct Writer {
  std::size_t len = 0;
  void put(const char* s, std::size_t n) {
    for (std::size_t i = 0; i < n && len < kReportBytes; ++i) g_report[len++] = s[i];
  }
  void put(const char* s) { put(s, std::strlen(s)); }
  void put(std::uint64_t v) {
    char digits[20];
    int n = 0;
    do {
      digits[n++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v);
    while (n > 0 && len < kReportBytes) g_report[len++] = digits[--n];
  }
  void flush() const {
    for (std::size_t done = 0; done < len;) {
      const ssize_t n = write(STDERR_FILENO, g_report + done, len - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      done += static_cast<std::size_t>(n);
    }
  }
};

// As Runtime::describe_agent, without allocating: "thread 3 (warp 0 lane 3), agent 3".
void put_agent(Writer& w, const Runtime& rt, const Agent& a) {
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

// `label`, then the replay token of the schedule so far, encoded in place.
void put_replay(Writer& w, const Runtime& rt, const char* label) {
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

const char* signal_name(int sig) {
  switch (sig) {  // strsignal's text, which strsignal itself may allocate to produce
    case SIGSEGV: return "Segmentation fault";
    case SIGBUS: return "Bus error";
    case SIGFPE: return "Floating point exception";
    case SIGILL: return "Illegal instruction";
    case SIGABRT: return "Aborted";
  }
  return "signal";
}

std::uintptr_t interrupted_stack_pointer(void* context) {
#if defined(__linux__) && defined(__x86_64__)
  return static_cast<std::uintptr_t>(static_cast<ucontext_t*>(context)->uc_mcontext.gregs[REG_RSP]);
#elif defined(__linux__) && defined(__aarch64__)
  return static_cast<std::uintptr_t>(static_cast<ucontext_t*>(context)->uc_mcontext.sp);
#else
  (void)context;
  return 0;
#endif
}

// The thread whose guard region holds the stack pointer (it ran off its stack) or, failing
// that, the faulting address.
const Agent* overflowed_agent(const Runtime& rt, std::uintptr_t addr, std::uintptr_t sp) {
  auto in_guard = [](const Agent& a, std::uintptr_t p) {
    const auto lo = reinterpret_cast<std::uintptr_t>(a.stack_lo);
    return a.stack_lo && p < lo && lo - p <= kStackGuardBytes;
  };
  for (std::uintptr_t p : {sp, addr})
    for (std::size_t id = 0; id < rt.agent_count(); ++id)
      if (in_guard(rt.agent(static_cast<AgentId>(id)), p)) return &rt.agent(static_cast<AgentId>(id));
  return nullptr;
}

// A fault in protocol code on its thread's fiber (or that fiber's stack overflowing) goes
// back to the thread's landing (Runtime::run_thread_main), which ends the execution as a
// crash verdict: the fiber's state is Boost's own (nothing was switched), only the protocol
// frames are abandoned. Not a fault in the runtime's code (its state may be half-changed)
// nor off the fiber: those are reported below and end the process.
// The running thread, if a signal may land it: it runs protocol code, not the runtime's.
const Agent* landable_agent(const Runtime& rt) {
  const Agent* a = rt.running_agent();
  return a && a->can_land && rt.in_protocol_code() ? a : nullptr;
}
bool on_fiber_stack(const Agent& a, std::uintptr_t sp) {
  return sp >= reinterpret_cast<std::uintptr_t>(a.stack_lo) && sp < reinterpret_cast<std::uintptr_t>(a.stack_hi);
}
[[noreturn]] void land(const Agent& a, int how) {
  siglongjmp(const_cast<Agent&>(a).landing, how);  // the runtime's own agent, as the runtime holds it
}

void land_in_protocol(const Runtime& rt, int sig, const Agent* overflow, std::uintptr_t sp) {
  const Agent* a = landable_agent(rt);
  if (!a) return;
  if (overflow == a) land(*a, -sig);
  if (!overflow && on_fiber_stack(*a, sp)) land(*a, sig);
}

// ---------------------------------------------------------------------------------------
// A stuck thread ended as a verdict: the watchdog signals the OS thread that runs it, and the
// handler lands it (as a crash does) if it is still stuck in the same place: in protocol code
// on its fiber, with no progress since the watchdog looked. Otherwise the handler does
// nothing and the watchdog's next round reports the hang and ends the process (report_hang).

const int kHangSignal = SIGRTMIN + 3;
constexpr int kHangLanding = 4096;               // sigsetjmp's value for a hang: no signal number
std::atomic<const Runtime*> g_hang_rt{nullptr};  // what the watchdog saw stuck, and when
std::atomic<std::uint64_t> g_hang_ticks{0};

extern "C" void on_hang_signal(int, siginfo_t*, void* context) {
  const Runtime* rt = Runtime::current_or_null();
  if (!rt || g_hang_rt.load() != rt || rt->progress_ticks() != g_hang_ticks.load()) return;
  const Agent* a = landable_agent(*rt);
  if (!a || !on_fiber_stack(*a, interrupted_stack_pointer(context))) return;
  g_hang_rt.store(nullptr);
  land(*a, kHangLanding);
}

extern "C" void on_fatal_signal(int sig, siginfo_t* info, void* context) {
  const Runtime* rt = Runtime::current_or_null();
  const Agent* overflow = rt && sig == SIGSEGV ? overflowed_agent(*rt, reinterpret_cast<std::uintptr_t>(info->si_addr),
                                                                  interrupted_stack_pointer(context))
                                               : nullptr;
  if (rt) land_in_protocol(*rt, sig, overflow, interrupted_stack_pointer(context));  // returns if it cannot
  if (rt && claim_report()) {
    Writer w;
    if (overflow) {
      w.put("\nmbcheck: stack overflow in ");
      put_agent(w, *rt, *overflow);
      w.put(", at step ");
      w.put(rt->steps());
      w.put(": protocol code needed more than its fiber stack of ");
      w.put(rt->limits().stack_bytes);
      w.put(
          " bytes (a large local array or deep recursion?); raise it with --stack-size "
          "(RunLimits::stack_bytes). This replays it up to the overflow:\n");
      put_replay(w, *rt, "replay:  ");
      w.put("\n");
      w.flush();
      _exit(1);
    }
    w.put("\nmbcheck: the protocol crashed (");
    w.put(signal_name(sig));
    w.put(")");
    if (const Agent* a = rt->running_agent()) {
      w.put(" in ");
      put_agent(w, *rt, *a);
      w.put(",");
    }
    w.put(" at step ");
    w.put(rt->steps());
    w.put("; this replays it up to the crash:\n");
    put_replay(w, *rt, "replay:  ");
    w.put("\n");
    w.flush();
  }
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  raise(sig);  // delivered once this handler returns: the process dies of the signal
}

// ---------------------------------------------------------------------------------------
// exit() and quick_exit() from protocol code

// The running thread, if the caller's frame is on its fiber stack (protocol code, or the
// runtime called from it, is what runs).
const Agent* fiber_of_caller(const Runtime& rt) {
  const Agent* a = rt.running_agent();
  return a && a->stack_lo && on_fiber_stack(*a, reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0))) ? a
                                                                                                              : nullptr;
}

void report_exit_from_protocol(const char* what) {
  const Runtime* rt = Runtime::current_or_null();
  const Agent* a = rt ? fiber_of_caller(*rt) : nullptr;
  if (!a) return;  // an ordinary exit
  if (!claim_report()) _exit(1);
  Writer w;
  w.put("\nmbcheck: protocol code called ");
  w.put(what);
  w.put(" in ");
  put_agent(w, *rt, *a);
  w.put(", at step ");
  w.put(rt->steps());
  w.put("; replay: ");
  put_replay(w, *rt, "");
  w.put("\n");
  w.flush();
  _exit(1);
}

extern "C" void on_quick_exit() { report_exit_from_protocol("quick_exit()"); }
extern "C" void on_atexit() { report_exit_from_protocol("exit()"); }

// Per OS thread: the alternate signal stack, and the hook for exit(). exit() first destroys
// the calling thread's thread_local objects, in reverse order of construction, and only then
// runs atexit handlers; Boost.Fiber's thread state is among them, and a fiber that outlives
// it crashes. So the hook is this object's destructor, constructed after Boost's.
constexpr std::size_t kAltStackBytes = 128 * 1024;
struct ThreadReporter {
  std::unique_ptr<unsigned char[]> alt_stack{new unsigned char[kAltStackBytes]};
  void use_alt_stack() const {
    stack_t ss{};
    ss.ss_sp = alt_stack.get();
    ss.ss_size = kAltStackBytes;
    sigaltstack(&ss, nullptr);
  }
  ~ThreadReporter() {
    report_exit_from_protocol("exit()");  // returns unless a fiber of this thread called exit()
    stack_t now{};
    if (sigaltstack(nullptr, &now) == 0 && now.ss_sp == alt_stack.get()) {
      stack_t off{};
      off.ss_flags = SS_DISABLE;
      sigaltstack(&off, nullptr);
    }
  }
};

ThreadReporter& thread_reporter() {
  boost::fibers::context::active();  // Boost's thread state first: it is destroyed after ours
  thread_local ThreadReporter reporter;
  return reporter;
}

// ---------------------------------------------------------------------------------------
// the watchdog

using Clock = std::chrono::steady_clock;

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
Watchdog& watchdog() {
  static auto* wd = new Watchdog;  // never destroyed: its thread outlives static destruction
  return *wd;
}

// "spec/kernels/x.hpp:97", as source_path writes it but without allocating (the watched
// thread may be stuck inside the allocator).
void put_site(Writer& w, const CallSite& site) {
  const char* file = site.file ? site.file : "";
#ifdef MBCHECK_SOURCE_DIR
  if (std::strncmp(file, MBCHECK_SOURCE_DIR, std::strlen(MBCHECK_SOURCE_DIR)) == 0)
    file += std::strlen(MBCHECK_SOURCE_DIR);
#endif
  w.put(file);
  w.put(":");
  w.put(site.line);
}

// Called with the watchdog's lock held. Formats from the runtime's state (its thread is
// inside protocol code and touches none of it), then checks that it has not moved on.
void report_hang(const Runtime& rt, std::uint64_t ticks, double limit) {
  if (g_hang_rt.load() != &rt || g_hang_ticks.load() != ticks) {  // first: end it as a verdict
    g_hang_ticks.store(ticks);
    g_hang_rt.store(&rt);
    pthread_kill(rt.os_thread(), kHangSignal);
    return;
  }
  if (!try_claim_report()) return;  // another report is being written: look again next round
  Writer w;
  w.put("\nmbcheck: ");
  if (const Agent* a = rt.running_agent())
    put_agent(w, rt, *a);
  else
    w.put("a thread");
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%g", limit);
  w.put(", ran protocol code for more than ");
  w.put(seconds);
  w.put(" s without a visible operation, load or store, at step ");
  w.put(rt.steps());
  if (const Agent* a = rt.running_agent(); a && a->site.line > 0) {
    w.put(", since its operation at ");
    put_site(w, a->site);
  }
  w.put(" (an endless loop? if it is only slow, raise --watchdog SECONDS; 0: no limit); replay: ");
  put_replay(w, rt, "");
  w.put("\n");
  if (rt.progress_ticks() != ticks || !rt.in_protocol_code()) {
    release_report();  // it moved on while this was written: not stuck after all
    return;
  }
  w.flush();
  _exit(1);
}

void watchdog_main() {
  Watchdog& wd = watchdog();
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

std::atomic<std::size_t> g_default_stack_bytes{64 * 1024};

constexpr std::size_t kCachedStackBytes = std::size_t{256} << 20;
struct StackCache {
  std::mutex mu;
  std::vector<std::pair<std::size_t, unsigned char*>> stacks;  // (size, lowest usable byte)
  std::size_t bytes = 0;
};
StackCache& stack_cache() {
  static auto* cache = new StackCache;  // never destroyed: pools may die during static destruction
  return *cache;
}

// A fork's child must not inherit these locks held, nor watch threads it does not have.
void register_fork_hooks() {
  static std::once_flag once;
  std::call_once(once, [] {
    pthread_atfork(
        [] {
          stack_cache().mu.lock();
          watchdog().mu.lock();
        },
        [] {
          watchdog().mu.unlock();
          stack_cache().mu.unlock();
        },
        [] {
          Watchdog& wd = watchdog();
          wd.watched.clear();
          wd.running = false;
          wd.mu.unlock();
          stack_cache().mu.unlock();
        });
  });
}

}  // namespace

// ---------------------------------------------------------------------------------------

void install_crash_reporter(std::function<std::string(const std::vector<AgentId>&)> token_of,
                            ScheduleEncoder encode_schedule) {
  g_encode = encode_schedule;
  const std::string prefix = token_of ? token_of({}) : std::string();
  g_prefix_len = 0;
  if (prefix.size() <= kPrefixBytes) {
    std::memcpy(g_prefix, prefix.data(), prefix.size());
    g_prefix_len = prefix.size();
  }
  prepare_thread_for_reports();
  thread_reporter().use_alt_stack();  // again: a test framework may have replaced it
  struct sigaction sa {};
  sa.sa_sigaction = on_fatal_signal;
  sa.sa_flags = SA_ONSTACK | SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) sigaction(sig, &sa, nullptr);
}

void prepare_thread_for_reports() {
  thread_local bool ready = false;
  if (ready) return;
  ready = true;
  thread_reporter().use_alt_stack();
  register_fork_hooks();
  static std::once_flag hooks;
  std::call_once(hooks, [] {
    struct sigaction sa {};
    sa.sa_sigaction = on_hang_signal;
    sa.sa_flags = SA_ONSTACK | SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(kHangSignal, &sa, nullptr);
    std::at_quick_exit(on_quick_exit);
    std::atexit(on_atexit);  // only a fallback: the thread reporter's destructor runs first
  });
}

// ---------------------------------------------------------------------------------------
// fiber stacks

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

namespace {
std::atomic<double> g_default_watchdog_s{10};
}
double default_watchdog_seconds() { return g_default_watchdog_s.load(std::memory_order_relaxed); }
void set_default_watchdog_seconds(double seconds) { g_default_watchdog_s.store(seconds, std::memory_order_relaxed); }

void set_default_stack_bytes(std::size_t bytes) {
  if (auto err = stack_size_error(bytes)) throw std::invalid_argument(*err);
  g_default_stack_bytes.store(bytes, std::memory_order_relaxed);
}

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

namespace {
// A fiber stack that cannot be mapped for want of memory is out of memory like any other
// allocation: the process's new-handler (the CLI's one-line report) if there is one.
[[noreturn]] void out_of_memory() {
  if (std::new_handler h = std::get_new_handler()) h();
  throw std::bad_alloc();
}
}  // namespace

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

// ---------------------------------------------------------------------------------------

void watch(const Runtime& rt) {
  register_fork_hooks();
  Watchdog& wd = watchdog();
  std::lock_guard lock(wd.mu);
  wd.watched.push_back({&rt, rt.progress_ticks(), Clock::now()});
  if (!wd.running) {
    wd.running = true;
    std::thread(watchdog_main).detach();
  }
}

void unwatch(const Runtime& rt) {
  Watchdog& wd = watchdog();
  std::lock_guard lock(wd.mu);
  std::erase_if(wd.watched, [&](const Watchdog::Entry& e) { return e.rt == &rt; });
}

// ---------------------------------------------------------------------------------------

// The thread's protocol code. A fatal signal in it (or its stack overflowing) lands back here
// from the signal handler (crash.cpp), its frames abandoned, and ends the execution as a crash
// like any other bug. `how`: the signal, negated for a stack overflow.
bool Runtime::run_thread_main(Agent& a) {
  struct Landed {  // however it leaves (a return, an exception), it can land no more
    Agent& a;
    ~Landed() { a.can_land = false; }
  } landed{a};
  // 0: no signal mask saved (a system call per thread and execution); the signal that landed
  // is unblocked below instead. `how` lives in the function's scope, not the if's: sigsetjmp
  // returns into the if's scope a second time, after it was left, and AddressSanitizer's
  // use-after-scope check would report the write of the second return.
  int how = 0;
  if ((how = sigsetjmp(a.landing, 0)) != 0) {
    a.can_land = false;  // a fault from here on is the runtime's own: reported, fatal
    sigset_t delivered;
    sigemptyset(&delivered);
    sigaddset(&delivered, how == kHangLanding ? kHangSignal : how < 0 ? -how : how);
    pthread_sigmask(SIG_UNBLOCK, &delivered, nullptr);
    // The abandoned frames' redzones would stay poisoned for AddressSanitizer (a no-op otherwise).
    const unsigned char here = 0;
    if (a.stack_lo && &here > a.stack_lo)
      asan_fibers::unpoison(a.stack_lo, static_cast<std::size_t>(&here - a.stack_lo));
    if (outcome_.culprits.empty()) outcome_.culprits = {a.id};
    // Still "in protocol code" until fiber_main leaves it: should the allocator be unusable
    // (a crash inside it, holding its lock), the watchdog ends the process.
    if (how == kHangLanding) {
      end(Verdict::hang,
          fmt::format("{} ran protocol code for more than {:g} s without a visible operation, load or store{} (an "
                      "endless loop? if it is only slow, raise --watchdog SECONDS; 0: no limit)",
                      describe_agent(a.id), limits_.watchdog_seconds,
                      a.site.line > 0
                          ? fmt::format(", since its operation at {}:{}", source_path(a.site.file), a.site.line)
                          : std::string()));
      return false;
    }
    end(Verdict::crash,
        how < 0
            ? fmt::format("stack overflow in {}: protocol code needed more than its fiber stack of {} bytes (a "
                          "large local array or deep recursion?); raise it with --stack-size",
                          describe_agent(a.id), limits_.stack_bytes)
            : fmt::format("{} crashed in protocol code: {} (signal {})", describe_agent(a.id), strsignal(how), how));
    return false;
  }
  a.can_land = true;
  program_->thread_main();
  return true;
}

}  // namespace mbcheck::sim
