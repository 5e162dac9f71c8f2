// Bool try_waits guarding waits in host programs (Program::device_code() false): a probe of a
// try's two paths (guarded_tries.cpp) could make a write the runtime does not see twice, so the runtime learns the
// tries instead, by two runs of its own made when the program's first bool try_wait comes, keyed by the thread's state
// (docs/model.md, "A bool try_wait guarding a wait"). Keys hold dead stack bytes too, so a try whose key differs
// between runs keeps both answers.
#include <cstring>
#include <utility>

#include "sim/runtime/first_schedule.hpp"
#include "sim/runtime/guarded_tries.hpp"
#include "sim/runtime/runtime.hpp"
#include "sim/runtime/runtime_inline.hpp"

namespace mbcheck::sim {

namespace {
template <class T>
void append(std::string& key, const T& v) {
  key.append(reinterpret_cast<const char*>(&v), sizeof v);
}
// A recorded path's state: a second record that differs (a protocol whose state lives
// elsewhere) makes the try never meet.
void record_path(std::vector<unsigned char>& slot, const std::vector<unsigned char>& state, bool& unguarded) {
  if (!slot.empty() && slot != state) unguarded = true;
  slot = state;
}

// The try's key: its thread, barrier (by address: ids follow the order of first use), phase,
// call site and state (the poll's capture: registers, program counter, live stack). Its local
// code from here to its next platform call is a function of that state and of the answer.
void make_key(std::string& key, const Agent& a, const MbarrierState& bar, std::int64_t phase) {
  key.clear();
  append(key, a.id);
  append(key, &bar);
  append(key, phase);
  append(key, a.site.file);
  append(key, a.site.line);
  append(key, a.site.column);
  key.append(reinterpret_cast<const char*>(a.snapshot.data()), a.snapshot.size());
}
}  // namespace

// Two runs of the program's first schedule, when its first bool try_wait comes in a search's
// execution (the execution then runs again from its start, Runtime::execute_in_place): in the
// first, a try not known to meet blocks until its phase completes and is answered true (PTX
// lets try_wait suspend until then); in the second, it is answered false the first time its
// key comes (even where the phase is complete: the run only measures the thread's local code
// from that state), and its wait runs. Each records the thread's state at its next platform call, so a key on
// both runs' paths is known to meet before any execution of the search classifies it. Their
// outcomes are not executions of the search and are dropped (the search explores the program
// where those pairs are waits, which has the same behaviours: docs/model.md). The table is
// then fixed: what a search's executions classify does not depend on the order they ran in,
// so parallel waves (a runtime each) and one job explore alike.
void Runtime::learn_guarded_tries(Program& program, const RunLimits& limits) {
  guarded_.tries.clear();
  guarded_.program = &program;
  FirstScheduleStrategy first;
  RunLimits learn = limits;
  guarded_.learning = GuardLearning::answer_true;
  const std::uint64_t steps = execute_in_place(program, first, learn, nullptr).steps;
  // False answers where the phase was complete may take a loop round more than once: twice
  // the legal run's steps, and never more than the caller allows.
  const std::uint64_t bound = 2 * steps + 1024;
  if (learn.max_steps == 0 || learn.max_steps > bound) learn.max_steps = bound;
  guarded_.learning = GuardLearning::answer_false;
  execute_in_place(program, first, learn, nullptr);
  guarded_.learning = GuardLearning::none;
}

// Before the try's scheduling point (its thread's watch of an earlier try is still open: the
// key goes to a scratch string, not to Agent::guard_key): what was learnt of this try, if
// anything (of this program only).
const GuardedTry* Runtime::known_guarded_try(const Agent& a, const MbarrierState& bar, std::int64_t phase) const {
  if (guarded_.program != program_) return nullptr;
  thread_local std::string key;
  make_key(key, a, bar, phase);
  const auto it = guarded_.tries.find(key);
  return it == guarded_.tries.end() ? nullptr : &it->second;
}

// After its answer (the state and call site are still the try's); `phase` as the key had it,
// the op's own (resolved again at a re-init) is what the wait must match.
void Runtime::watch_learnt_try(Agent& a, MbarrierState& bar, std::int64_t phase, bool complete) {
  make_key(a.guard_key, a, bar, phase);
  a.guard_bar = &bar;
  a.guard_phase = a.op.arg;
  a.guard_touched = false;
  a.guard_state.clear();
  const auto it = guarded_.tries.find(a.guard_key);
  const bool met = guarded_.program == program_ && it != guarded_.tries.end() && it->second.met();
  if (met)
    a.guard_watch = complete ? 0 : kGuardNoop;  // a true answer was reported as the wait already
  else if (guarded_.learning == GuardLearning::none)
    a.guard_watch = 0;  // learnt by the learning runs only
  else
    a.guard_watch = complete ? kGuardAfterTrue : kGuardAfterFalse;
}

void Runtime::guarded_announced() {
  Agent& a = *current_;
  const bool guarded_wait = a.op.kind == OpKind::wait && a.op.bar == a.guard_bar && a.op.arg == a.guard_phase;
  const std::uint8_t watch = std::exchange(a.guard_watch, std::uint8_t{0});
  if (watch == kGuardNoop) {
    // A try known to meet, which failed: in the program where the pair is one wait it is no
    // event (that wait follows), as a failed poll before its spin's await is not.
    flush_failed_poll(guarded_wait);
    return;
  }
  // A plain access between (the paths may access different words), or a state deeper than
  // the scrub: nothing learnt.
  if (a.guard_touched || a.guard_state.empty()) return;
  GuardedTry& g = guarded_.tries[a.guard_key];
  switch (watch) {
    case kGuardAfterTrue: record_path(g.after_true, a.guard_state, g.unguarded); break;
    case kGuardAfterFalse:
      if (!guarded_wait) {
        g.unguarded = true;
        break;
      }
      a.guard_watch = kGuardAfterWait;  // its state at the platform call after the wait
      a.guard_state.clear();
      break;
    case kGuardAfterWait: record_path(g.after_false, a.guard_state, g.unguarded); break;
    default: break;
  }
}

}  // namespace mbcheck::sim
