// The DPOR's provisional ops, checked at the end of each execution: tx-negative decrements
// (provisional_counter), pending increments (provisional_increment) and expect_tx ops whose
// thread still owes its arrival (provisional_expect) commute as decs while it runs; a phase where that did not hold up
// runs again with them as incs (execute_observed, sim/explore/dpor.hpp). The relation: sim/explore/dpor_relation.hpp.
#include <algorithm>

#include "sim/explore/dpor.hpp"

namespace mbcheck::sim::dpor {

// An increment's checks: an arrival of its thread in its phase after it, and its arrive-on
// (the agent it spawned) landing in its phase; an expect's: the arrival only (checks 1). A
// phase's increments come mostly one after another: its entry is looked for from the newest.
void DporSearch::add_increment(const StepInfo& step, std::uint32_t index, std::uint32_t checks) {
  const std::uint32_t bar = step.op.bar->id;
  const std::int64_t phase = step.phase_before;
  std::size_t at = increment_checks_.size();
  while (at > 0 && (increment_checks_[at - 1].bar != bar || increment_checks_[at - 1].phase != phase)) --at;
  if (at == 0) {
    increment_checks_.push_back({bar, phase, index});
    at = increment_checks_.size();
  }
  IncrementChecks& c = increment_checks_[at - 1];
  ++(checks == 2 ? c.increments : c.expects);
  c.unsettled += checks;
  const auto id = static_cast<std::uint32_t>(at - 1);
  if (awaiting_arrival_.size() <= step.agent) awaiting_arrival_.resize(step.agent + 1);
  awaiting_arrival_[step.agent].push_back(id);
  if (checks == 2 && step.spawned != kNoAgent) awaiting_landing_[step.spawned] = id;  // (none: it stays unsettled)
  any_provisional_ = any_increment_ = true;
}

void DporSearch::settle_increments(const StepInfo& step, const Event& e, std::uint32_t index) {
  if (pending_taken(step.op) <= 0) return;
  auto settles = [&](std::uint32_t id) {
    IncrementChecks& c = increment_checks_[id];
    if (c.bar != step.op.bar->id || c.phase != e.phase) return false;
    --c.unsettled;
    c.last_settler = index;
    return true;
  };
  if (step.agent < awaiting_arrival_.size()) {
    auto& open = awaiting_arrival_[step.agent];
    open.erase(std::remove_if(open.begin(), open.end(), settles), open.end());
  }
  if (auto it = awaiting_landing_.find(step.agent); it != awaiting_landing_.end()) {
    settles(it->second);
    awaiting_landing_.erase(it);
  }
}

bool DporSearch::take_failed_provisions(bool last_step_failed) {
  failed_.clear();
  if (!any_provisional_) return false;
  auto last_lifecycle = [](const BarrierHistory& h) {
    return h.lifecycle.empty() ? std::int64_t{-1} : static_cast<std::int64_t>(h.lifecycle.back());
  };
  for (std::size_t id = 0; id < barriers_.size(); ++id) {
    const BarrierHistory& h = barriers_[id];
    for (std::size_t i = 0; i < h.phases.size(); ++i)
      if (h.phases[i].provision_failed(last_lifecycle(h)))
        failed_.push_back({static_cast<std::uint32_t>(id), static_cast<std::int64_t>(i) - 1});
  }
  const std::int64_t failed_step = last_step_failed && n_events_ > 0 ? static_cast<std::int64_t>(n_events_) - 1 : -1;
  for (const IncrementChecks& c : increment_checks_) {
    const BarrierHistory& h = barriers_[c.bar];
    const auto i = static_cast<std::size_t>(c.phase + 1);
    const bool has_inc = i < h.phases.size() && !h.phases[i].incs.empty();
    if (c.failed(last_lifecycle(h), failed_step, h.init_count, has_inc) && !failed_before(c.bar, c.phase))
      failed_.push_back({c.bar, c.phase});
  }
  return !failed_.empty();
}

}  // namespace mbcheck::sim::dpor
