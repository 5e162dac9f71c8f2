// The runtime's inline fast paths, defined here so that runtime.hpp reads as its interface:
// the announcement every step makes (schedule_point), the enabled set it updates, and the
// per-access hooks HostPlatform calls. Included at the end of runtime.hpp, and only there.
#pragma once

namespace mbcheck::sim {

template <class Skip>
inline AgentId Runtime::lowest_enabled(Skip&& skip) const {
  if (!track_enabled_bits_) {
    AgentId low = kNoAgent;
    for (AgentId id : enabled_)
      if (id < low && !skip(id)) low = id;
    return low;
  }
  for (std::size_t w = 0; w < enabled_bits_.size(); ++w)
    for (std::uint64_t bits = enabled_bits_[w]; bits != 0; bits &= bits - 1) {
      const auto id = static_cast<AgentId>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits)));
      if (!skip(id)) return id;
    }
  return kNoAgent;
}

inline void Runtime::capture_poll_state() {
  if (!current_ || over_) return;
  if (const std::size_t deeper = capture_thread_state(current_->snapshot, current_->stack_top, snapshot_limit_))
    snapshot_too_deep(deeper);
}

inline void Runtime::capture_guard_state() {
  if (over_) return;
  if (capture_thread_state(current_->guard_state, current_->stack_top, snapshot_limit_) != 0)
    current_->guard_state.clear();  // deeper than the scrub: not compared
}

inline bool Runtime::load_wants_state(const std::int64_t* addr, const void* pc) {
  if (!current_ || over_) return false;
  Agent& a = *current_;
  a.load_pc = pc;
  if (a.loads_in_loop == 0) return true;
  const Agent::LoadSeen& last = a.loads_seen[a.loads_in_loop - 1];
  return last.addr == addr || last.pc != pc || pc == nullptr;
}

inline void Runtime::check_barrier_user(MbarrierState& bar) {
  // One CTA: a .shared::cta use names its own CTA's barrier (or a runtime counter outside
  // shared memory); nothing to check.
  if (ctas_.size() == 1 && !current_->op.remote) return;
  check_cluster_barrier_user(bar);
}

inline void Runtime::perform_deferred_try() {
  if (current_->deferred_try != 0 && !over_) perform_deferred_try_now();
}

inline bool Runtime::schedule_point(const Op& op) {
  if (!begin_announcement()) return false;
  copy_op(current_->op, op);
  if (current_->guard_watch != 0) [[unlikely]]
    guarded_announced();
  return announce_and_run();
}

inline bool Runtime::schedule_point(OpKind kind, MbarrierState* bar, std::int64_t arg, bool no_complete,
                                    std::int8_t parity) {
  if (!begin_announcement()) return false;
  set_op(current_->op, kind, bar, arg, no_complete, parity);
  if (current_->guard_watch != 0) [[unlikely]]
    guarded_announced();
  return announce_and_run();
}

inline bool Runtime::begin_announcement() {
  if (current_ && current_->guard_probe != GuardProbeStage::none) [[unlikely]]
    guard_probe_spoil();  // an operation on a probe's path: not the guarded wait
  if (over_) [[unlikely]] {
    if (std::uncaught_exceptions() > 0) return false;
    throw Aborted{};
  }
  perform_deferred_try();  // the thread's try_wait_status comes before this event
  // Its last failed poll was no spin iteration: it is an event (unless it is a guarded try's,
  // which waits for the op: guarded_announced).
  if (failed_poll_ && current_->guard_watch != kGuardNoop) [[unlikely]]
    flush_failed_poll_now();
  to_runtime();
  return true;
}

inline bool Runtime::is_enabled_now(const Agent& a) const {
  if (a.op.kind == OpKind::wait) return a.op.bar->wait_would_proceed(a.op.arg, shape_.on_misuse == OnMisuse::proceed);
  return !needs_enabled_test(a.op.info().dependence) || is_enabled_uncommon(a);
}

inline bool Runtime::wait_is_fragile(const Agent& a) const {
  return !a.op.bar->is_live() || a.op.arg >= a.op.bar->phase || shape_.on_misuse == OnMisuse::proceed;
}

inline void Runtime::add_enabled(Agent& a) {
  a.state = Agent::State::ready;
  if (a.enabled_pos != ~0u) return;
  a.enabled_pos = static_cast<std::uint32_t>(enabled_.size());
  enabled_.push_back(a.id);
  if (track_enabled_bits_) [[unlikely]] {
    if (enabled_bits_.size() <= a.id / 64) enabled_bits_.resize(a.id / 64 + 1, 0);
    enabled_bits_[a.id / 64] |= std::uint64_t{1} << (a.id % 64);
  }
}

inline void Runtime::remove_enabled(Agent& a) {
  if (a.enabled_pos == ~0u) return;
  AgentId last = enabled_.back();
  enabled_[a.enabled_pos] = last;
  agent_at_[last]->enabled_pos = a.enabled_pos;
  enabled_.pop_back();
  if (track_enabled_bits_) [[unlikely]]
    enabled_bits_[a.id / 64] &= ~(std::uint64_t{1} << (a.id % 64));
  a.enabled_pos = ~0u;
}

inline void Runtime::barrier_changed(MbarrierState& bar, bool phase_completed) {
  BarrierInfo& bi = info(bar);  // registers a barrier first seen here, completed or not
  if (phase_completed) new_phase(bar, bi);
}

inline void Runtime::flush_failed_poll(bool spin_noop) {
  if (!failed_poll_) return;
  StepInfo step = *failed_poll_;
  failed_poll_.reset();
  step.spin_noop = spin_noop;
  if (spin_noop && limits_.record_trace && !trace_.empty() && trace_.back().step == failed_poll_step_)
    trace_.back().what += "  (a spin iteration: no effect)";
  observe(step);
}

}  // namespace mbcheck::sim
