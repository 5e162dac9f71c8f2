// A bool try_wait that code branches on, followed when it fails by the wait it guards
// (sim/runtime/guarded_tries.cpp; docs/model.md "A bool try_wait guarding a wait"): the probe
// that runs both of its answers' paths from the try's own state, and whether the runtime
// merges such pairs at all.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace mbcheck::sim {

class MbarrierState;
class Program;

// On by default. Off, every bool try_wait is an ordinary poll (both answers explored).
bool merge_guarded_tries();
void set_merge_guarded_tries(bool on);

// In a host program (Program::device_code() false: a probe's path could write what the runtime
// does not see, into the program's own objects, and that would happen twice), the runtime
// learns its tries instead, by two runs of its own (sim/runtime/guarded_tries_learnt.cpp).
// A try is known by its thread, barrier, phase, call site and state (registers, live stack).
// It meets when, from that key, both answers were seen, the false one followed by a wait for
// the same phase, and the thread was in one state at its next platform call after the true
// answer and after that wait, with no plain access between. Then the pair is one blocking
// wait: a true answer is reported as that wait, a false one as no event (its wait follows).
struct GuardedTry {
  std::vector<unsigned char> after_true, after_false;
  bool unguarded = false;  // the false answer was followed by something other than the wait
  bool met() const { return !unguarded && !after_true.empty() && after_true == after_false; }
};

// Learnt by two runs made when a program's first bool try_wait comes (the execution then runs
// again from its start: Runtime::learn_guarded_tries), then fixed: every execution of a
// search, in every worker, classifies a try alike.
enum class GuardLearning : std::uint8_t {
  none,          // the table is read, not written
  answer_true,   // a try not known to meet blocks until its phase completes, answered true
  answer_false,  // a try not known to meet is answered false once per key (its wait then runs)
};

struct GuardedTries {
  std::unordered_map<std::string, GuardedTry> tries;
  const Program* program = nullptr;  // the program they are of
  GuardLearning learning = GuardLearning::none;
};

// Agent::guard_probe: where the thread is on a probe's paths. after_true: the try answered
// true, up to its next platform call; after_false: answered false, up to its next platform
// call, which must be the guarded wait's; in_wait: inside that call, before the wait;
// after_wait: the wait returned (at once), up to the platform call after it.
enum class GuardProbeStage : std::uint8_t { none, after_true, after_false, in_wait, after_wait };

// One probe at a time (only the running thread makes one). The thread's stack from the fork's
// frame up to its top is copied at the fork and put back, from a stack of the probe's own, to
// run the other answer's path and then the real one (a copying continuation: every address on
// the stack stays what it was, so pointers into it stay valid).
struct GuardProbe {
  void* jump[5] = {};                // __builtin_setjmp's buffer: the fork's frame
  unsigned char* sp = nullptr;       // the lowest byte copied
  unsigned char* lo = nullptr;       // the thread's stack's lowest byte
  std::vector<unsigned char> saved;  // [sp, the thread's stack_top)
  int resume = 0;                    // what the fork returns when it is jumped to
  MbarrierState* bar = nullptr;      // the try's barrier and (resolved) phase: the wait's must match
  std::int64_t phase = 0;
  std::vector<unsigned char> after_true, after_false;                        // the states at the next platform calls
  std::vector<std::pair<const unsigned char*, std::size_t>> dead;            // left out of the comparison
  std::vector<std::pair<const void*, std::size_t>> reads_true, reads_false;  // what each path read
  std::unique_ptr<unsigned char[]> own_stack;                                // where the copy is put back from
  static constexpr std::size_t kOwnStackBytes = 64 * 1024;
};

// A probe's two paths compare the thread's whole live stack, dead slots included: what the
// runtime's frames left below the protocol's would differ between a path that returned from the
// try and one that returned from the try and then from the wait. So on a probe's path, those
// returns (test_wait's, and the blocking waits' at the protocol's edge) zero the stack below
// their caller as they return: the function's return address is swapped for a thunk that zeroes
// [from, its caller's stack pointer) and jumps to it, with the return registers kept.
extern "C" void mbcheck_zero_return_thunk();
extern "C" __thread void* mbcheck_zero_ra;             // where the thunk returns to
extern "C" __thread unsigned char* mbcheck_zero_from;  // the lowest byte it zeroes
inline constexpr std::size_t kZeroOnReturnBytes = 8 * 1024;

// Called last in a function with a frame pointer (`frame`: __builtin_frame_address(0)), nothing
// that may throw after it: its return zeroes the stack below its caller (not below `lo`).
[[gnu::always_inline]] inline void zero_on_return(void* frame, const unsigned char* lo) {
#if defined(__x86_64__)
  void** slot = static_cast<void**>(frame) + 1;
  auto* cfa = static_cast<unsigned char*>(frame) + 16;
  unsigned char* from = static_cast<std::size_t>(cfa - lo) > kZeroOnReturnBytes ? cfa - kZeroOnReturnBytes
                                                                                : const_cast<unsigned char*>(lo);
  mbcheck_zero_from =
      reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(from) + 7) & ~std::uintptr_t{7});
  mbcheck_zero_ra = *slot;
  *slot = reinterpret_cast<void*>(&mbcheck_zero_return_thunk);
#else
  (void)frame;
  (void)lo;
#endif
}

}  // namespace mbcheck::sim
