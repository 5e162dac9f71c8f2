// Runtime::perform, shared by the .cpp files that implement operations (internal to sim/).
#pragma once

#include <fmt/format.h>

#include "sim/runtime/runtime.hpp"

namespace mbcheck::sim {

// Runs an operation's body; a misuse it finds ends the execution with that verdict.
template <class F>
auto Runtime::perform(F&& f) {
  try {
    return f();
  } catch (const MisuseError& e) {
    const Agent& a = *current_;
    // The failing operation is an event too: the explorer must see its races to find the
    // schedules that avoid (or move) this misuse.
    observe(a.id, a.op, a.op.bar ? a.op.bar->phase : 0, false, false);
    end(e.kind == MisuseKind::phase_aliasing ? Verdict::aliasing : Verdict::misuse,
        fmt::format("{}: {}: {}", describe_agent(a.id), describe_op(a), e.what()), e.kind);
    outcome_.culprits = {a.id};
    throw Aborted{};
  }
}

}  // namespace mbcheck::sim
