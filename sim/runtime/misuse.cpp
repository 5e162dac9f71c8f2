// A misuse found by an operation: the execution ends with it (OnMisuse::stop), or, for the
// misuses the hardware answers, it is kept as the root and the operation runs as the hardware
// runs it, so the search reaches what follows (OnMisuse::proceed):
//   missing-wait    the arrive-on counts (nothing in the barrier tracks waits)
//   phase-aliasing  the wait is answered by the parity of the phase, as try_wait.parity reads it
// Every other misuse ends the execution in both modes: an over-arrival killed the kernel on
// the H200 (device/RESULTS.md, 2026-11-30: `unspecified launch failure`), and for the rest PTX
// leaves the outcome undefined.
#include <fmt/format.h>

#include "sim/runtime/runtime.hpp"

namespace mbcheck::sim {

namespace {
bool hardware_answers(MisuseKind kind) {
  return kind == MisuseKind::missing_wait || kind == MisuseKind::phase_aliasing;
}
}  // namespace

void Runtime::end_misuse(const MisuseError& e) {
  const Agent& a = *current_;
  // The failing operation is an event too: the explorer must see its races to find the
  // schedules that avoid (or move) this misuse.
  observe(a.id, a.op, a.op.bar ? a.op.bar->phase : 0, false, false);
  end(e.kind == MisuseKind::phase_aliasing ? Verdict::aliasing : Verdict::misuse,
      fmt::format("{}: {}: {}", describe_agent(a.id), describe_op(a), e.what()), e.kind);
  outcome_.culprits = {a.id};
  throw Aborted{};
}

bool Runtime::answer_as_hardware(const MisuseError& e) {
  if (shape_.on_misuse != OnMisuse::proceed || !hardware_answers(e.kind) || over_ || !current_ || !current_->op.bar ||
      current_->op.bar->named)
    return false;
  if (!outcome_.root) {
    const Agent& a = *current_;
    RootMisuse root;
    root.kind = e.kind;
    root.verdict = e.kind == MisuseKind::phase_aliasing ? Verdict::aliasing : Verdict::misuse;
    root.message = fmt::format("{}: {}: {}", describe_agent(a.id), describe_op(a), e.what());
    root.step = steps_;
    root.culprits = {a.id};
    outcome_.root = std::move(root);
  }
  return true;
}

// After the execution: with a root misuse, the verdict is its consequence, named with it, or,
// with none, the misuse's own (Outcome::root_only).
void Runtime::conclude_root() {
  if (!outcome_.root || outcome_.cut_short || outcome_.verdict == Verdict::pruned) return;
  const RootMisuse& root = *outcome_.root;
  if (outcome_.verdict == Verdict::completed) {
    outcome_.verdict = root.verdict;
    outcome_.misuse = root.kind;
    outcome_.message = fmt::format(
        "{}; answered as the hardware does, this execution then completed with the right "
        "result (another schedule may not: see its consequences)",
        root.message);
    outcome_.culprits = root.culprits;
    outcome_.root_only = true;
    return;
  }
  outcome_.message += fmt::format(" -- the consequence of the {} at step {}", to_string(root.kind), root.step);
  outcome_.details.push_back(
      fmt::format("root misuse ({}, step {}): {}", to_string(root.kind), root.step, root.message));
  for (AgentId id : root.culprits)
    if (std::find(outcome_.culprits.begin(), outcome_.culprits.end(), id) == outcome_.culprits.end())
      outcome_.culprits.push_back(id);
}

}  // namespace mbcheck::sim
