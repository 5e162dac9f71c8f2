// A bool try_wait that code branches on, followed when it fails by the wait it guards
// (sim/runtime/guarded_tries.cpp; docs/model.md "A bool try_wait guarding a wait"): what a
// runtime learnt of one program's tries, and whether it merges them at all.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace mbcheck::sim {

class Program;

// On by default. Off, every bool try_wait is an ordinary poll (both answers explored).
bool merge_guarded_tries();
void set_merge_guarded_tries(bool on);

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

}  // namespace mbcheck::sim
