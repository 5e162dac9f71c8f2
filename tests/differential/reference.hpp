// The reference enumerator: the ground truth of "what the hardware may do" for a DiffProgram.
//
// A stateful exhaustive search over every interleaving of atomic steps (one agent per
// thread plus one per in-flight bulk copy), with a hash set of visited states. It shares no
// code with sim/: the barrier rules, the happens-before race detector and the verdicts are
// written again here, small and slow, so that it can serve as an independent oracle for the
// runtime explored by DPOR. Semantics: the comments of diff_program.hpp.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "tests/differential/diff_program.hpp"

namespace mbcheck::diff {

struct ReferenceResult {
  std::set<std::string> outcomes;   // format_observed() of the final state of every completed execution
  bool bug = false;                 // some schedule ends in a bug, or some reachable state can never reach an end
  std::set<std::string> bug_kinds;  // "deadlock", "livelock", "race", "aliasing", "misuse:<kind>"
  std::uint64_t states = 0;         // distinct states visited
  bool complete = true;             // false when max_states was reached (the result is then unusable)
};

// Throws std::invalid_argument for a malformed program (scripts or counts of the wrong size,
// a data/slot/atomic index out of range, copy_pieces outside [1, 2]). A barrier index at or
// above `barriers` names a barrier that is never initialised (misuse:uninitialized).
ReferenceResult reference_explore(const DiffProgram& program, std::uint64_t max_states = 2'000'000);

}  // namespace mbcheck::diff
