// The signal handlers (a fatal signal, the watchdog's hang signal), the landing of protocol
// code that crashed or hung back in the runtime (Runtime::run_thread_main), and the hooks on
// exit() and quick_exit(). What they print is formatted by crash_report.cpp.
#include "sim/runtime/crash.hpp"

#include <fmt/format.h>
#include <pthread.h>
#include <signal.h>
#include <ucontext.h>
#include <unistd.h>

#include <boost/fiber/context.hpp>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "sim/runtime/crash_report.hpp"
#include "sim/runtime/watchdog.hpp"

namespace mbcheck::sim {

namespace {

using crash_report::Writer;

// Why a landed crash or hang that did not reach a usable allocator ends the process (its
// report is written only then).
constexpr const char* kCrashEnded =
    ", and left the allocator locked or broken (a corrupted heap? malloc() and free() abort holding their "
    "lock): the process ends here";
constexpr const char* kHangEnded =
    "; stopped inside the allocator, or with it broken, it cannot go on: the process ends here";

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

// Protocol code may have been interrupted anywhere, inside malloc() holding its lock too: the
// report that ends the process is written now, and armed (crash_report.hpp) until the landing
// finds the allocator usable.
[[noreturn]] void land(const Agent& a, int how, const Writer* armed) {
  if (armed) crash_report::arm(*armed);
  siglongjmp(const_cast<Agent&>(a).landing, how);  // the runtime's own agent, as the runtime holds it
}

void put_crash(Writer& w, const Runtime& rt, int sig, const Agent* overflow, const char* ended) {
  if (overflow) {
    w.put("\nmbcheck: stack overflow in ");
    crash_report::put_agent(w, rt, *overflow);
    w.put(", at step ");
    w.put(rt.steps());
    w.put(": protocol code needed more than its fiber stack of ");
    w.put(rt.limits().stack_bytes);
    w.put(
        " bytes (a large local array or deep recursion?); raise it with --stack-size "
        "(RunLimits::stack_bytes)");
    if (ended) w.put(ended);
    w.put(". This replays it up to the overflow:\n");
  } else {
    w.put("\nmbcheck: the protocol crashed (");
    w.put(crash_report::signal_name(sig));
    w.put(")");
    if (const Agent* a = rt.running_agent()) {
      w.put(" in ");
      crash_report::put_agent(w, rt, *a);
      w.put(",");
    }
    w.put(" at step ");
    w.put(rt.steps());
    if (ended) w.put(ended);
    w.put("; this replays it up to the crash:\n");
  }
  crash_report::put_replay(w, rt, "replay:  ");
  w.put("\n");
}

// ---------------------------------------------------------------------------------------
// A stuck thread ended as a verdict: the watchdog signals the OS thread that runs it, and the
// handler lands it (as a crash does) if it is still stuck in the same place: in protocol code
// on its fiber, with no progress since the watchdog looked. Otherwise the handler does
// nothing and the watchdog's next round reports the hang and ends the process.

extern "C" void on_hang_signal(int, siginfo_t*, void* context) {
  const Runtime* rt = Runtime::current_or_null();
  if (!rt || !watchdog::hang_requested(*rt)) return;
  const Agent* a = landable_agent(*rt);
  if (!a || !on_fiber_stack(*a, interrupted_stack_pointer(context))) return;
  watchdog::clear_hang_request();
  Writer w;
  const bool report = crash_report::claim();
  if (report) crash_report::put_hang(w, *rt, rt->limits().watchdog_seconds, kHangEnded);
  land(*a, watchdog::kHangLanding, report ? &w : nullptr);
}

extern "C" void on_fatal_signal(int sig, siginfo_t* info, void* context) {
  crash_report::end_if_armed();  // a landing that crashed in turn: its report, exit 1
  const Runtime* rt = Runtime::current_or_null();
  const std::uintptr_t sp = interrupted_stack_pointer(context);
  const Agent* overflow =
      rt && sig == SIGSEGV ? overflowed_agent(*rt, reinterpret_cast<std::uintptr_t>(info->si_addr), sp) : nullptr;
  if (const Agent* a = rt ? landable_agent(*rt) : nullptr; a && (overflow ? overflow == a : on_fiber_stack(*a, sp))) {
    Writer w;
    const bool report = crash_report::claim();
    if (report) put_crash(w, *rt, sig, overflow, kCrashEnded);
    land(*a, overflow ? -sig : sig, report ? &w : nullptr);
  }
  if (rt && crash_report::claim()) {
    Writer w;
    put_crash(w, *rt, sig, overflow, nullptr);
    w.flush();
    if (overflow) _exit(1);
  }
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  raise(sig);  // delivered once this handler returns: the process dies of the signal
}

// Every heap arena's lock taken and given back (mallinfo2 visits each arena under its lock):
// a landing from inside malloc() or free() that still holds one never gets past this, and its
// armed report ends the process.
void wait_for_usable_allocator() {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  (void)mallinfo2();
#else
  void* volatile probe = std::malloc(64 * 1024);  // past the small-size caches that take no lock
  std::free(probe);
#endif
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
  if (!crash_report::claim()) _exit(1);
  Writer w;
  w.put("\nmbcheck: protocol code called ");
  w.put(what);
  w.put(" in ");
  crash_report::put_agent(w, *rt, *a);
  w.put(", at step ");
  w.put(rt->steps());
  w.put("; replay: ");
  crash_report::put_replay(w, *rt, "");
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

}  // namespace

// ---------------------------------------------------------------------------------------

void install_crash_reporter(std::function<std::string(const std::vector<AgentId>&)> token_of,
                            ScheduleEncoder encode_schedule) {
  crash_report::set_token(token_of ? token_of({}) : std::string(), encode_schedule);
  crash_report::prepare_landing_timer();
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
  watchdog::register_fork_hooks();
  static std::once_flag hooks;
  std::call_once(hooks, [] {
    struct sigaction sa {};
    sa.sa_sigaction = on_hang_signal;
    sa.sa_flags = SA_ONSTACK | SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(watchdog::hang_signal(), &sa, nullptr);
    std::at_quick_exit(on_quick_exit);
    std::atexit(on_atexit);  // only a fallback: the thread reporter's destructor runs first
  });
}

// ---------------------------------------------------------------------------------------

// The thread's protocol code. A fatal signal in it (or its stack overflowing) lands back here
// from the signal handler, its frames abandoned, and ends the execution as a crash like any
// other bug. `how`: the signal, negated for a stack overflow.
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
    sigaddset(&delivered, how == watchdog::kHangLanding ? watchdog::hang_signal() : how < 0 ? -how : how);
    pthread_sigmask(SIG_UNBLOCK, &delivered, nullptr);
    // The abandoned frames' redzones would stay poisoned for AddressSanitizer (a no-op otherwise).
    const unsigned char here = 0;
    if (a.stack_lo && &here > a.stack_lo)
      asan_fibers::unpoison(a.stack_lo, static_cast<std::size_t>(&here - a.stack_lo));
    if (a.guard_probe != GuardProbeStage::none) {  // on a bool try's probe: a path not taken
      a.can_land = true;
      guard_probe_spoil();
    }
    // Nothing above allocates; from here on, what follows may (past this, the report is not needed).
    wait_for_usable_allocator();
    crash_report::disarm();
    if (outcome_.culprits.empty()) outcome_.culprits = {a.id};
    // Still "in protocol code" until fiber_main leaves it: should the allocator become
    // unusable after all, the watchdog ends the process.
    if (how == watchdog::kHangLanding) {
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
