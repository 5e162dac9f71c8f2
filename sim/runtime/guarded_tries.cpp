// A bool try_wait that code branches on, followed when it fails by the wait it guards
// (CUTLASS's consumer_try_wait then consumer_wait: `bool done = try_wait(phase)`, then
// `if (!done) wait(phase)`). Its two answers are two paths of the thread; where they meet
// (the same thread state at the next platform call after either), the pair is one blocking
// wait, as a try_wait status and its wait are (docs/model.md, "A bool try_wait guarding a
// wait"). The runtime probes that at each such try, from the try's own state: it runs the
// true answer's path up to the thread's next platform call, puts the thread back as it was at
// the try, runs the false answer's path through the wait (which returns at once) up to the
// platform call after it, compares the two states, and puts the thread back once more to give
// the try its real answer.
#include <atomic>
#include <cstring>
#include <utility>

#include "sim/runtime/asan_fibers.hpp"
#include "sim/runtime/guarded_tries.hpp"
#include "sim/runtime/runtime.hpp"
#include "sim/runtime/runtime_inline.hpp"

extern "C" {
__thread void* mbcheck_zero_ra = nullptr;
__thread unsigned char* mbcheck_zero_from = nullptr;
}

#if defined(__x86_64__)
// zero_on_return's thunk: entered by the swapped return, with the caller's stack pointer; keeps
// rax/rdx (and the vector registers: untouched), zeroes [mbcheck_zero_from, rsp), returns.
asm(R"(
    .text
    .p2align 4
    .globl mbcheck_zero_return_thunk
    .type mbcheck_zero_return_thunk, @function
mbcheck_zero_return_thunk:
    movq %rax, %r8
    movq %rdx, %r9
    movq mbcheck_zero_from@gottpoff(%rip), %r10
    movq %fs:(%r10), %rdi
    movq %rsp, %rcx
    subq %rdi, %rcx
    jbe 1f
    shrq $3, %rcx
    xorl %eax, %eax
    rep stosq
1:
    movq mbcheck_zero_ra@gottpoff(%rip), %r10
    movq %fs:(%r10), %r10
    movq %r8, %rax
    movq %r9, %rdx
    jmpq *%r10
    .size mbcheck_zero_return_thunk, .-mbcheck_zero_return_thunk
)");
#endif

namespace mbcheck::sim {

namespace {
std::atomic<bool> g_merge{true};

// The fork's results (GuardProbe::resume): the true path ran; the false path ran to the
// platform call after its wait; the probe ended early (not a meeting).
constexpr int kAfterTrue = 1, kAfterWait = 2, kSpoiled = 3;

[[gnu::no_sanitize_address, gnu::noinline]] void copy_bytes(unsigned char* out, const unsigned char* from,
                                                            std::size_t n) {
#if defined(__SANITIZE_ADDRESS__)
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<const volatile unsigned char*>(from)[i];
#else
  std::memcpy(out, from, n);
#endif
}

// On the probe's own stack: the thread's stack as it was at the fork, then into the fork's
// frame. (Below the fork's frame, the paths' frames left ASan's shadow of frames no longer
// there: cleared.)
// The two states (registers, then the live stack from the saved stack pointer up) are one,
// but for the bytes dead once the false path's wait returned.
bool paths_meet(GuardProbe& p) {
  auto& t = p.after_true;
  auto& f = p.after_false;
  if (t.empty() || t.size() != f.size() || p.reads_true != p.reads_false) return false;
  constexpr std::size_t kRegs = 8 * sizeof(std::uint64_t), kSp = 6 * sizeof(std::uint64_t);
  if (t.size() < kRegs || std::memcmp(t.data() + kSp, f.data() + kSp, 8) != 0) return false;
  std::uint64_t sp;
  std::memcpy(&sp, t.data() + kSp, 8);
  for (const auto& [addr, bytes] : p.dead) {
    const auto a = reinterpret_cast<std::uint64_t>(addr);
    if (a < sp || a + bytes > sp + (t.size() - kRegs)) continue;
    const std::size_t at = kRegs + (a - sp);
    std::memset(t.data() + at, 0, bytes);
    std::memset(f.data() + at, 0, bytes);
  }
  return t == f;
}

[[noreturn, gnu::noinline, gnu::no_sanitize_address]] void put_back(GuardProbe* p) {
  copy_bytes(p->sp, p->saved.data(), p->saved.size());
  asan_fibers::unpoison(p->lo, static_cast<std::size_t>(p->sp - p->lo));
  __builtin_longjmp(p->jump, 1);
}
}  // namespace

bool merge_guarded_tries() { return g_merge.load(std::memory_order_relaxed); }
void set_merge_guarded_tries(bool on) { g_merge.store(on, std::memory_order_relaxed); }

#if defined(__x86_64__)
// Returns 0 at the fork, then GuardProbe::resume each time put_back jumps here. Its frame and
// every frame above it up to the thread's stack_top are the copy: a jump back finds them, the
// callee-saved registers this frame saved for test_wait among them, as they were.
[[gnu::noinline]] int Runtime::guard_fork(MbarrierState& bar, std::int64_t phase) {
  if (__builtin_setjmp(probe_.jump) != 0) return probe_.resume;
  Agent& a = *current_;
  unsigned char* sp;
  asm volatile("movq %%rsp, %0" : "=r"(sp));
  const auto* top = a.stack_top;
  probe_.sp = sp;
  probe_.lo = const_cast<unsigned char*>(a.stack_lo);
  probe_.saved.resize(static_cast<std::size_t>(top - sp));
  copy_bytes(probe_.saved.data(), sp, probe_.saved.size());
  if (!probe_.own_stack) probe_.own_stack = std::make_unique<unsigned char[]>(GuardProbe::kOwnStackBytes);
  probe_.bar = &bar;
  probe_.phase = phase;
  probe_.after_true.clear();
  probe_.after_false.clear();
  probe_.dead.clear();
  probe_.reads_true.clear();
  probe_.reads_false.clear();
  a.guard_probe = GuardProbeStage::after_true;
  return 0;
}

[[noreturn]] void Runtime::guard_rewind(int resume) {
  probe_.resume = resume;
  auto top =
      reinterpret_cast<std::uintptr_t>(probe_.own_stack.get() + GuardProbe::kOwnStackBytes) & ~std::uintptr_t{15};
  asm volatile(
      "movq %0, %%rsp\n\t"
      "call *%%rax\n\t"
      "ud2"
      :
      : "r"(top), "D"(&probe_), "a"(&put_back)
      : "memory");
  __builtin_unreachable();
}
#else
int Runtime::guard_fork(MbarrierState&, std::int64_t) { return kSpoiled; }
[[noreturn]] void Runtime::guard_rewind(int) { std::abort(); }
#endif

// The try's probe (test_wait, after its answer `complete` is known, before anything of it is
// recorded): 0, run the true path now (the caller returns true); 1, the false path (returns
// false); 2, decided, and `met` says whether the two paths met.
int Runtime::probe_guarded_try(MbarrierState& bar, std::int64_t phase, bool& met) {
  const int r = guard_fork(bar, phase);
  Agent& a = *current_;
  switch (r) {
    case 0: return 0;
    case kAfterTrue: a.guard_probe = GuardProbeStage::after_false; return 1;
    default:
      a.guard_probe = GuardProbeStage::none;
      met = r == kAfterWait && paths_meet(probe_);
      return 2;
  }
}

// A platform call on a probe's path (Runtime::at, after the inlined capture into guard_state).
void Runtime::guard_probe_at() {
  Agent& a = *current_;
  switch (a.guard_probe) {
    case GuardProbeStage::after_true:
      probe_.after_true.swap(a.guard_state);
      guard_rewind(probe_.after_true.empty() ? kSpoiled : kAfterTrue);
    case GuardProbeStage::after_false:
      a.guard_probe = GuardProbeStage::in_wait;  // it must be the wait's (guard_probe_wait)
      return;
    case GuardProbeStage::after_wait: probe_.after_false.swap(a.guard_state); guard_rewind(kAfterWait);
    default: guard_rewind(kSpoiled);  // a second call before the wait
  }
}

// Runtime::wait on a probe's path: the guarded wait (same barrier, same phase) returns at once.
void Runtime::guard_probe_wait(const MbarrierState& bar, std::int64_t phase) {
  Agent& a = *current_;
  if (a.guard_probe != GuardProbeStage::in_wait || &bar != probe_.bar || phase != probe_.phase) guard_rewind(kSpoiled);
  a.guard_probe = GuardProbeStage::after_wait;
}

void Runtime::guard_probe_access(const void* addr, std::size_t bytes, bool write) {
  if (write) guard_rewind(kSpoiled);
  auto& reads = current_->guard_probe == GuardProbeStage::after_true ? probe_.reads_true : probe_.reads_false;
  reads.emplace_back(addr, bytes);
}

void Runtime::guard_probe_wait_returns(void* frame, const void* args, std::size_t bytes) {
  if (args && bytes) probe_.dead.emplace_back(static_cast<const unsigned char*>(args), bytes);
  zero_on_return(frame, current_->stack_lo);
}

// Anything else the runtime would record (an access, another operation, a failed check, the
// thread's end): not a meeting, and nothing of it happens.
void Runtime::guard_probe_spoil() { guard_rewind(kSpoiled); }

// After a try's answer: a try whose paths met and which failed is no event if the thread's
// next operation is the wait (guarded_announced).
void Runtime::watch_probed_try(Agent& a, MbarrierState& bar, bool merged, bool complete) {
  a.guard_bar = &bar;
  a.guard_phase = a.op.arg;
  a.guard_watch = merged && !complete ? kGuardNoop : 0;
}

}  // namespace mbcheck::sim
