// The DPOR's provisional ops, checked at the end of each execution: tx-negative decrements
// (provisional_counter) and pending increments (provisional_increment) commute as decs while it
// runs; a phase where that did not hold up runs again with them as incs (execute_observed,
// sim/explore/dpor.hpp). The relation: sim/explore/dpor_relation.hpp.
#include <algorithm>

#include "sim/explore/dpor.hpp"

namespace mbcheck::sim::dpor {

// An increment's checks: an arrival of its thread in its phase after it, and its arrive-on
// (the agent it spawned) landing in its phase.
void DporSearch::add_increment(const StepInfo& step, std::uint32_t index, PhaseEvents& pe) {
  const PhaseKey key{step.op.bar->id, step.phase_before};
  if (pe.first_increment < 0) pe.first_increment = index;
  ++pe.increments;
  pe.unsettled += 2;
  // pending before the phase's first op, and so before any order of its ops, is at most this
  // (pending now, with what its arrivals took): raised by all of its increments, it must stay
  // within the limit in every order (docs/model.md).
  pe.pending_bound = std::max<std::int64_t>(pe.pending_bound, step.op.bar->pending + pe.pending_down);
  if (awaiting_arrival_.size() <= step.agent) awaiting_arrival_.resize(step.agent + 1);
  awaiting_arrival_[step.agent].push_back(key);
  if (step.spawned != kNoAgent) awaiting_landing_[step.spawned] = key;  // (none: it stays unsettled)
  any_provisional_ = any_increment_ = true;
}

void DporSearch::settle_increments(const StepInfo& step, const Event& e, std::uint32_t index) {
  if (pending_taken(step.op) <= 0) return;
  const PhaseKey key{step.op.bar->id, e.phase};
  auto settle = [&] {
    if (PhaseEvents* pe = barriers_[key.first].find(key.second)) {
      --pe->unsettled;
      pe->last_settler = index;
    }
  };
  if (step.agent < awaiting_arrival_.size()) {
    auto& open = awaiting_arrival_[step.agent];
    for (std::size_t i = open.size(); i-- > 0;)
      if (open[i] == key) {
        settle();
        open.erase(open.begin() + static_cast<std::ptrdiff_t>(i));
      }
  }
  if (auto it = awaiting_landing_.find(step.agent); it != awaiting_landing_.end()) {
    if (it->second == key) settle();
    awaiting_landing_.erase(it);
  }
}

bool DporSearch::take_failed_provisions(bool last_step_failed) {
  failed_.clear();
  if (!any_provisional_) return false;
  const std::int64_t failed_step = last_step_failed && n_events_ > 0 ? static_cast<std::int64_t>(n_events_) - 1 : -1;
  for (std::size_t id = 0; id < barriers_.size(); ++id) {
    const BarrierHistory& h = barriers_[id];
    const std::int64_t last_lifecycle = h.lifecycle.empty() ? -1 : static_cast<std::int64_t>(h.lifecycle.back());
    for (std::size_t i = 0; i < h.phases.size(); ++i)
      if (h.phases[i].provision_failed(last_lifecycle) || h.phases[i].increments_failed(last_lifecycle, failed_step))
        failed_.push_back({static_cast<std::uint32_t>(id), static_cast<std::int64_t>(i) - 1});
  }
  return !failed_.empty();
}

}  // namespace mbcheck::sim::dpor
