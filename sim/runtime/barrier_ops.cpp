// The mbarrier operations of the fiber runtime. Every operation that changes a barrier's
// state goes through one path, driven by its row of sim/runtime/ops.def: barrier_op() for a
// thread (its scheduling point, the rules of its barrier operand, then apply_barrier_op()),
// and apply_barrier_op() alone for an agent of the async proxy (a copy's landing, the
// arrive-on of cp.async.mbarrier.arrive). Waits and polls follow (they only read the phase).
// Scheduling and the execution itself are in runtime.cpp; when each op is enabled:
// sim/runtime/runtime.hpp.
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "sim/runtime/guarded_tries.hpp"
#include "sim/runtime/spin_loops.hpp"
#include "sim/runtime/perform.hpp"

namespace mbcheck::sim {

// ---------------------------------------------------------------------------------------
// the generic path

Runtime::BarrierEffect Runtime::apply_barrier_op(Agent& a, const Op& op, AgentId spawned) {
  const OpInfo& row = op.info();
  MbarrierState& bar = *op.bar;
  BarrierEffect r;
  r.phase_before = row.effect == Effect::init ? 0 : bar.phase;
  // The arrivals and the copies' complete_tx first, as compare-and-branch (nearly every step
  // that gets here is one of them); the rest by a switch, an indirect jump.
  if (row.effect == Effect::arrive)
    r.token = bar.arrive(op.arg, op.no_complete, &r.completed);
  else if (row.effect == Effect::arrive_expect_tx)
    r.token = bar.arrive_expect_tx(op.arg, &r.completed);
  else if (row.effect == Effect::complete_tx)
    r.completed = bar.complete_tx(op.arg);
  else
    switch (row.effect) {
      case Effect::init: bar.init(op.arg); break;
      case Effect::inval: bar.inval(); break;
      case Effect::arrive:
      case Effect::arrive_expect_tx:
      case Effect::complete_tx: break;  // above
      case Effect::arrive_drop: r.token = bar.arrive_drop(op.arg, &r.completed); break;
      case Effect::expect_tx: bar.expect_tx(op.arg); break;
      case Effect::increment_pending: bar.increment_pending(); break;
      case Effect::liveness:
        if (!bar.is_live())
          throw MisuseError(
              bar.life == MbarrierState::Life::invalidated ? MisuseKind::invalidated : MisuseKind::uninitialized,
              fmt::format("{} on a barrier that is not live", row.ptx));
        break;
      case Effect::observe:
      case Effect::none: throw std::logic_error("mbcheck: apply_barrier_op on an operation that changes no barrier");
    }
  if (count_down_records_ && bar.id >= 1 && bar.id <= n_barriers_) count_down(a, bar, row.effect, r);
  // The row's memory-order role: what the operation publishes to the phase's waiters.
  switch (row.order) {
    case Order::release:  // a peer's .release.cluster arrive reaches only .cluster acquires
      races_.release(a.id, bar.id, r.phase_before, a.cta != barriers_[bar.id - 1].cta);
      break;
    case Order::release_own: races_.release_own(a.id, bar.id, r.phase_before); break;
    case Order::release_tracked:
      for (AgentId t : a.tracked) races_.release_own(t, bar.id, r.phase_before);  // the copies' writes only
      break;
    case Order::none:
    case Order::relaxed:
    case Order::acquire: break;
  }
  if (row.effect == Effect::init) {
    races_.barrier_init(bar.id, a.id);
    make_waits_fragile_at_init(bar);
  }
  barrier_changed(bar, r.completed || row.effect == Effect::init || row.effect == Effect::inval);
  record(a, &bar);
  observe_with([&] {
    StepInfo step{a.id, op, r.phase_before, r.completed};
    if (spawned != kNoAgent) {
      step.spawned = spawned;
      step.spawned_count = 1;
    }
    return step;
  });
  return r;
}

MbarrierToken Runtime::barrier_op(const Op& op) {
  MbarrierState& bar = *op.bar;
  info(bar);
  if (!schedule_point(op)) return {};
  perform([&] { check_barrier_user(bar); });
  return perform([&] { return apply_barrier_op(*current_, current_->op); }).token;
}

MbarrierToken Runtime::barrier_op(OpKind kind, MbarrierState& bar, std::int64_t arg, bool no_complete) {
  info(bar);
  if (!schedule_point(kind, &bar, arg, no_complete)) return {};
  perform([&] { check_barrier_user(bar); });
  return perform([&] { return apply_barrier_op(*current_, current_->op); }).token;
}

// ---------------------------------------------------------------------------------------
// waits and polls

void Runtime::wait(MbarrierState& bar, std::int64_t phase, Acquire acquire) {
  if (guard_probing()) [[unlikely]]
    return guard_probe_wait(bar, phase);  // a probe's false path: returns at once (guarded_tries.cpp)
  info(bar);
  if (!schedule_point(OpKind::wait, &bar, phase, false, take_parity_next())) return;
  phase = current_->op.arg;  // by phase bit: resolved again if the barrier was re-initialised meanwhile
  perform([&] { check_barrier_user(bar); });
  perform([&] {
    // Enabled means complete (or a misuse, which throws); anything else is a runtime bug.
    if (!bar.test_wait_parity(phase)) throw std::logic_error("mbcheck: a blocked wait was scheduled");
  });
  phase = answered_phase(bar, phase);
  if (acquire != Acquire::none)
    races_.acquire(current_->id, bar.id, phase, acquire == Acquire::cluster || shape_.cta_waits_acquire_peers);
  record(*current_, &bar);
  observe(current_->id, current_->op, bar.phase, false, true);
}

// mbarrier.try_wait with a state token, in a loop: the token must come from an arrive on this
// barrier (PTX: "returned by an mbarrier.arrive instruction on the same mbarrier object"), as
// test_wait/try_wait check it (MbarrierState::test_wait); a blocking wait would otherwise wait
// for the token's phase number on whichever barrier it is given.
void Runtime::wait_token(MbarrierState& bar, const MbarrierToken& token) {
  info(bar);
  if (over_ || !current_) return;
  if (token.barrier_id != bar.id) {
    if (!schedule_point(OpKind::try_wait, &bar, token.phase)) return;  // a poll: always enabled
    perform([&]() -> void {
      throw MisuseError(MisuseKind::bad_token, token.barrier_id == 0 ? "wait with a state token that no arrive returned"
                                                                     : "wait with a state token from another mbarrier");
    });
    return;
  }
  wait(bar, token.phase);
}

bool Runtime::test_wait(MbarrierState& bar, std::int64_t phase, OpKind kind, const MbarrierToken* token) {
  info(bar);
  std::int64_t awaited = token ? token->phase : phase;
  Op op{kind, &bar, awaited};
  op.parity = token ? std::int8_t{-1} : take_parity_next();
  if (current_ && !over_) {
    perform_deferred_try();                            // an event before this poll: it decides what "the last poll" was
    classify_poll(*current_, bar, awaited, kind, op);  // a spin iteration? (spin_loops.hpp)
  }
  // A bool try_wait (not a token's, not a status's: those come with no state): one whose two
  // paths meet at the wait it guards is that wait. Probed from its state in device code
  // (Program::device_code(): guarded_tries.cpp), else learnt (guarded_tries_learnt.cpp). Only
  // for a search's classification (an observer's): a run or a fuzzing campaign makes the same
  // steps either way.
  const bool bool_try = kind == OpKind::try_wait && !token && current_ && !over_ && !current_->snapshot.empty() &&
                        !op.await && merge_guarded_tries();
  const bool probed = bool_try && observer_ && program_->device_code();
  const bool learnt = bool_try && !probed;
  const std::int64_t key_phase = awaited;
  // The program's first: its tries are learnt before it runs again from its start (the
  // scheduling point below ends the execution).
  if (learnt && observer_ && guarded_.program != program_ && guarded_.learning == GuardLearning::none) {
    learn_wanted_ = true;
    end_to_run_again("a bool try_wait, whose program's tries are learnt first");
  }
  const GuardedTry* known = learnt ? known_guarded_try(*current_, bar, key_phase) : nullptr;
  bool merged = known && known->met();
  // The runs that learn tries: blocked until the phase completes; or answered false, the first
  // time the key comes.
  const bool learn_true = learnt && !merged && guarded_.learning == GuardLearning::answer_true;
  const bool force_false = learnt && !merged && guarded_.learning == GuardLearning::answer_false &&
                           (!known || (known->after_false.empty() && !known->unguarded));
  if (learn_true) op.await = true;
  if (!schedule_point(op)) return false;
  if (!token) phase = awaited = current_->op.arg;  // by phase bit: resolved again at a re-init
  perform([&] { check_barrier_user(bar); });
  bool complete = perform([&] { return token ? bar.test_wait(*token) : bar.test_wait_parity(phase); });
  if (force_false) complete = false;
  if (probed && !over_) {
    // Its two paths first, from here (each ends at its next platform call and comes back).
    switch (probe_guarded_try(bar, phase, merged)) {
      case 0: zero_on_return(__builtin_frame_address(0), current_->stack_lo); return true;
      case 1: zero_on_return(__builtin_frame_address(0), current_->stack_lo); return false;
      default: break;
    }
  }
  Agent& a = *current_;
  if (merged && complete) a.op.await = true;  // the guarded wait, run here: a blocking wait's event
  if (learnt) watch_learnt_try(a, bar, key_phase, complete);
  if (probed) watch_probed_try(a, bar, merged, complete);
  if (complete) races_.acquire(a.id, bar.id, answered_phase(bar, awaited));
  // An await that a changed word let run while the phase is still open is an ordinary
  // failed poll, ordered after the write that changed it (StepInfo::read_woken).
  const bool read_woken = !complete && a.op.await;
  if (read_woken) a.op.await = false;
  const bool captured = !a.snapshot.empty();
  note_poll_answer(a, bar, awaited, kind, complete);
  a.snapshot.clear();
  record(a, &bar);
  auto step = [&] {
    StepInfo s{a.id, a.op, bar.phase, false, complete};
    s.read_woken = read_woken;
    return s;
  };
  if (!complete && captured) {
    // Reported at the thread's next announcement, which shows whether it was a spin iteration.
    failed_poll_ = step();
    failed_poll_step_ = steps_;
  } else {
    observe_with(step);
  }
  return complete;
}

std::int64_t Runtime::phase_for_parity(MbarrierState& bar, std::uint32_t parity) {
  if (guard_probing()) [[unlikely]]
    return phase_by_bit(*current_, bar, parity & 1);  // on a probe's path: nothing recorded
  info(bar);
  if (over_ || !current_) return 0;
  if (run_again_with(phase_knowledge_, "a wait by phase bit reads the phase knowledge")) return 0;
  perform_deferred_try();  // its answer may add to what this thread knows
  current_->parity_next = static_cast<std::int8_t>(parity & 1);
  return phase_by_bit(*current_, bar, parity & 1);
}

std::int8_t Runtime::take_parity_next() {
  if (!current_) return -1;
  const std::int8_t bit = current_->parity_next;
  current_->parity_next = -1;
  return bit;
}

std::int64_t Runtime::phase_by_bit(const Agent& a, const MbarrierState& bar, std::uint32_t bit) const {
  const std::int64_t known = races_.known_phase(a.id, bar.id);
  return (known & 1) == static_cast<std::int64_t>(bit) ? known : known + 1;
}

TryWaitStatus Runtime::try_wait_status(MbarrierState& bar, std::int64_t phase) {
  info(bar);
  if (over_ || !current_) return {};
  // The runtime's first status: the execution runs again with what its waits read
  // (surely_complete) kept from the first step; protocols without statuses pay nothing.
  if (run_again_with(count_down_records_, "a try_wait status reads the count-down records") ||
      run_again_with(phase_knowledge_, "a try_wait status reads the phase knowledge"))
    return {};
  current_->parity_next = -1;  // a status keeps the phase its try resolved
  perform_deferred_try();      // the previous one: this try is invisible, so that one's next event is now
  tries_.push_back({current_->id, &bar, phase, current_->site});
  current_->deferred_try = tries_.size();
  return {tries_.size()};
}

void Runtime::perform_deferred_try_now() {
  Agent& a = *current_;
  const std::uint64_t index = a.deferred_try - 1;
  const DeferredTry t = tries_[index];
  a.deferred_try = 0;
  // A poll of its own, at the try's call site, never a spin iteration (the thread's state
  // when it made the try is gone); the caller's call site and snapshot are kept around it.
  const CallSite caller = a.site;
  std::vector<unsigned char> snapshot;
  snapshot.swap(a.snapshot);
  a.site = t.site;
  const bool done = test_wait(*t.bar, t.phase, OpKind::try_wait);
  tries_[index].state = done ? DeferredTry::State::done : DeferredTry::State::failed;
  a.site = caller;
  a.snapshot.swap(snapshot);
}

void Runtime::wait_status(MbarrierState& bar, const TryWaitStatus& status) {
  info(bar);
  if (over_ || !current_) return;
  Agent& a = *current_;
  const char* wrong = status.id == 0 ? "wait on a try_wait status that no try_wait returned"
                      : status.id > tries_.size() || tries_[status.id - 1].agent != a.id
                          ? "wait on a try_wait status of another thread (a status is a register of the thread "
                            "whose try_wait made it)"
                      : tries_[status.id - 1].bar != &bar ? "wait on a try_wait status of another barrier"
                                                          : nullptr;
  if (wrong) {
    // Reported as a step of its own (a poll: always enabled), as every misuse is.
    if (!schedule_point(OpKind::try_wait, &bar, 0)) return;
    perform([&]() -> void { throw MisuseError(MisuseKind::bad_token, wrong); });
    return;
  }
  DeferredTry& t = tries_[status.id - 1];
  if (a.deferred_try == status.id) {
    // The deferred try and this wait are one blocking wait (see runtime.hpp). Its answer
    // matters only to a later wait on the same status: surely_complete says whether the try
    // found the phase complete in every order of the execution's events; otherwise it may
    // have timed out, and a later wait waits as well. (It was answered by "is the completing
    // op ordered before the thread", which DPOR cannot tell apart by the order of two
    // arrivals: a second wait on the status aliased in a schedule it never ran; the
    // differential soak's program 83,991,311.)
    a.deferred_try = 0;
    t.state = surely_complete(a, bar, t.phase) ? DeferredTry::State::done : DeferredTry::State::failed;
  } else if (t.state == DeferredTry::State::done) {
    return;  // the try found the phase complete (and acquired): nothing to wait for
  }
  wait(bar, t.phase);
}

// Keeps the ops that count the phase down (read by surely_complete), before the op's
// release moves its agent's epoch on.
void Runtime::count_down(const Agent& a, const MbarrierState& bar, Effect effect, const BarrierEffect& r) {
  BarrierInfo& bi = barriers_[bar.id - 1];
  if (effect == Effect::init) {  // a new incarnation: its phases start again
    bi.counting.clear();
    bi.completions[0].phase = bi.completions[1].phase = -2;
    return;
  }
  if (effect == Effect::arrive || effect == Effect::arrive_expect_tx || effect == Effect::arrive_drop ||
      effect == Effect::complete_tx)
    bi.counting.emplace_back(a.id, races_.entry(a.id, a.id));
  if (r.completed) {
    std::swap(bi.completions[0], bi.completions[1]);
    bi.completions[0].phase = r.phase_before;
    bi.completions[0].ops.swap(bi.counting);
    bi.counting.clear();
  }
}

// Complete for every try only if the thread knows the phase complete (a wait or poll saw it,
// by itself or by anyone whose past flows to it), or every op that counted the phase down
// happens before it; the thread's own completing arrive is not enough, since another
// thread's arrive not ordered before the try may come after it and complete the phase.
bool Runtime::surely_complete(const Agent& a, const MbarrierState& bar, std::int64_t phase) const {
  if (races_.known_phase(a.id, bar.id) >= phase) return true;  // seen complete, by a wait or poll
  if (bar.id == 0 || bar.id > n_barriers_ || !bar.is_live() || phase >= bar.phase) return false;  // not complete now
  for (const BarrierInfo::Completion& c : barriers_[bar.id - 1].completions)
    if (c.phase == phase)
      return std::all_of(c.ops.begin(), c.ops.end(),
                         [&](const auto& op) { return races_.entry(a.id, op.first) >= op.second; });
  return false;
}

std::uint32_t Runtime::pending_count(const MbarrierToken& token) {
  return perform([&] { return MbarrierState::pending_count(token); });
}

}  // namespace mbcheck::sim
