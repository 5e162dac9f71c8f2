#include "sim/runtime/runtime.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <boost/fiber/algo/algorithm.hpp>
#include <boost/fiber/all.hpp>
#include <cstring>
#include <exception>
#include <map>
#include <stdexcept>
#include <utility>

#include "sim/runtime/asan_fibers.hpp"
#include "sim/runtime/crash.hpp"

namespace mbcheck::sim {

unsigned char* Runtime::cta_shared_memory(std::uint32_t cta) {
  auto& smem = ctas_[cta].smem;
  auto addr = reinterpret_cast<std::uintptr_t>(smem.data());
  return smem.data() + ((128 - addr % 128) % 128);  // 128-byte aligned, as the device's
}

unsigned char* Runtime::shared_memory() { return cta_shared_memory(current_->cta); }

// ---------------------------------------------------------------------------------------
// the enabled set

bool Runtime::is_enabled_uncommon(const Agent& a) const {
  switch (a.op.kind) {
    case OpKind::test_wait:
    case OpKind::try_wait:
      return !a.op.await || a.op.bar->wait_would_proceed(a.op.arg, shape_.on_misuse == OnMisuse::proceed) ||
             await_word_changed(a);
    case OpKind::atomic_load:  // a load loop's await: once a word of its iteration changed
      return !a.op.await || await_word_changed(a);
    default: return a.op.info().dependence != Dependence::group_wait || waited_for(a, a.op) == 0;
  }
}

// Does a word the await's loop read hold another value than it read (Agent::await_reads)?
bool Runtime::await_word_changed(const Agent& a) {
  for (const auto& [addr, value] : a.await_reads)
    if (*addr != value) return true;
  return false;
}

// Inline: schedule_point is its only caller, once per step.
[[gnu::always_inline]] inline void Runtime::announce(Agent& a) {
  if (a.op.info().dependence == Dependence::block_sync) return block_wait_arrive(a);
  if (is_enabled_now(a)) {
    add_enabled(a);
    if (is_blocking_wait(a.op) && wait_is_fragile(a)) info(*a.op.bar).fragile_waits.push_back(a.id);
    return;
  }
  a.state = Agent::State::blocked;
  if (a.op.info().dependence == Dependence::group_wait) return;  // landings enable it
  if (!a.op.bar) return;                                         // a load loop's await: atomic_written enables it
  info(*a.op.bar).waiters.push_back(a.id);
}

void Runtime::new_phase(MbarrierState& bar, BarrierInfo& bi) {
  // A new phase (or init) can also disable an enabled wait: one announced on uninitialised
  // memory, or one for a phase ahead of the barrier that has now become the current phase.
  // The list is taken and bi's is refilled: the two buffers trade places, so no phase
  // allocates one.
  std::vector<AgentId>& fragile = fragile_scratch_;
  fragile.clear();
  fragile.swap(bi.fragile_waits);
  for (AgentId id : fragile) {
    Agent& w = *agent_at_[id];
    if (w.enabled_pos == ~0u || !is_blocking_wait(w.op) || w.op.bar != &bar) continue;  // it has moved on
    if (!is_enabled_now(w)) {
      remove_enabled(w);
      w.state = Agent::State::blocked;
      bi.waiters.push_back(w.id);
    } else if (wait_is_fragile(w)) {
      bi.fragile_waits.push_back(id);
    }
  }
  auto keep = bi.waiters.begin();
  for (AgentId id : bi.waiters) {
    Agent& w = *agent_at_[id];
    if (is_enabled_now(w)) {
      add_enabled(w);
      if (shape_.on_misuse == OnMisuse::proceed && is_blocking_wait(w.op)) bi.fragile_waits.push_back(id);
    } else
      *keep++ = id;
  }
  bi.waiters.erase(keep, bi.waiters.end());
}

// A re-init starts the barrier again at phase 0: a wait left enabled by its old incarnation
// (its phase complete there, or the barrier invalidated) may be a wait for an open phase now.
// Each becomes fragile, so that new_phase (right after, for the init) re-checks it. A wait or
// poll by phase bit means another phase now: the bit is read again against what its thread
// knows of the new incarnation (nothing yet: the hardware's parity test of the new phase 0),
// as the thread would at its next attempt. Rare (an init), so every enabled agent is looked at.
void Runtime::make_waits_fragile_at_init(MbarrierState& bar) {
  BarrierInfo& bi = info(bar);
  auto read_bit_again = [&](Agent& w) {
    if (w.kind == Agent::Kind::thread && w.op.parity >= 0 && w.op.bar == &bar)
      w.op.arg = phase_by_bit(w, bar, static_cast<std::uint32_t>(w.op.parity));
  };
  for (AgentId id : enabled_) {
    Agent& w = *agent_at_[id];
    read_bit_again(w);
    if (w.kind == Agent::Kind::thread && is_blocking_wait(w.op) && w.op.bar == &bar) bi.fragile_waits.push_back(id);
  }
  for (AgentId id : bi.waiters) read_bit_again(*agent_at_[id]);
}

// ---------------------------------------------------------------------------------------
// scheduling

// The step loop: picks the next agent and runs copy steps, until a thread is to run (its
// context is returned) or the execution ends (the main context). Inline in schedule_point,
// the step of nearly every transition; its rare ends are out of line (end_none_enabled,
// checkpoint, end_diverged), so that the loop itself keeps few registers and a small frame.
[[gnu::always_inline]] inline boost::fibers::context* Runtime::decide_inline() {
  while (!over_) {
    if (enabled_.empty()) [[unlikely]] {
      end_none_enabled();
      break;
    }
    if (steps_ >= next_check_ && !checkpoint()) [[unlikely]]
      break;
    const AgentId pick = strategy_->choose(*this);
    if (pick >= agent_at_.size() || agent_at_[pick]->enabled_pos == ~0u) [[unlikely]] {
      end_diverged(pick);
      break;
    }
    outcome_.schedule.push_back(pick);
    Agent& a = *agent_at_[pick];
    remove_enabled(a);
    ++steps_;
    accesses_in_step_ = 0;
    races_.tick(pick, steps_);
    last_agent_ = pick;
    if (a.kind == Agent::Kind::copy) [[unlikely]] {
      if (a.op.info().group != GroupKind::none)
        land_group_member(a);
      else if (a.op.kind == OpKind::async_arrive)
        async_arrive(a);
      else
        land_copy_piece(a);
      continue;
    }
    a.state = Agent::State::running;
    current_ = &a;
    return a.ctx;
  }
  current_ = nullptr;
  return main_ctx_;
}

boost::fibers::context* Runtime::decide() { return decide_inline(); }

void Runtime::end_none_enabled() {
  if (unfinished_threads_ == 0)
    end(Verdict::completed, "all threads finished");
  else
    end_blocked();
}

// At every kStopCheckSteps-th step (--time-limit, an interrupt) and at the step limit: false
// when the execution ends here. Sets the step of the next check.
bool Runtime::checkpoint() {
  if (steps_ % RunLimits::kStopCheckSteps == 0 && steps_ > 0 && stop_due()) {
    outcome_.cut_short = true;
    end(Verdict::pruned, fmt::format("stopped at step {} (--time-limit or an interrupt)", steps_));
    return false;
  }
  if (steps_ >= limits_.max_steps) {
    end(Verdict::step_limit,
        fmt::format("no end after {} steps (raise --max-steps if the protocol is just long)", steps_));
    return false;
  }
  next_check_ = std::min((steps_ / RunLimits::kStopCheckSteps + 1) * RunLimits::kStopCheckSteps, limits_.max_steps);
  return true;
}

// The strategy named no agent that can run now: stopped (a search's), or a schedule replayed
// onto an execution that goes otherwise.
void Runtime::end_diverged(AgentId pick) {
  if (pick == kStopExecution) return end(Verdict::pruned, "stopped by the strategy");
  end(Verdict::diverged,
      pick == kNoAgent ? fmt::format("the schedule ends at step {}, but the execution goes on here", steps_)
      : pick >= agent_at_.size()
          ? fmt::format("the schedule names agent {} at step {}, which does not exist here", pick, steps_)
          : fmt::format("the schedule runs {} at step {}, but it is not enabled here (it is at: {})",
                        describe_agent(pick), steps_, describe_op(*agent_at_[pick])));
}

void Runtime::flush_failed_poll_now() { flush_failed_poll(false); }

bool Runtime::announce_and_run() {
  Agent& a = *current_;
  const Op& op = a.op;
  if (is_plain_announcement(op.kind)) [[likely]] {  // (most steps: arrivals, copies)
    a.last_poll_failed = false;
    a.loads_in_loop = 0;
    add_enabled(a);
  } else {
    // A spin iteration may read atomics between its polls (Agent::loop_reads); anything else
    // ends the loop.
    if (!is_poll(op.kind) && !(op.kind == OpKind::atomic_load && a.loop_reads.size() < kLoopReadsMax))
      a.last_poll_failed = false;
    if (op.kind != OpKind::atomic_load) a.loads_in_loop = 0;  // any other event ends a run of loads
    announce(a);
  }
  if (op.await && !a.await_reads.empty()) read_awaiters_.push_back(a.id);
  if (priming_) {
    switch_to(primed_next(a.id));
  } else {
    boost::fibers::context* next = decide_inline();
    if (next != a.ctx) switch_to(next);
  }
  current_ = &a;
  to_protocol();  // also when it only unwinds: its destructors are protocol code
  if (over_) {
    if (std::uncaught_exceptions() > 0) return false;
    throw Aborted{};
  }
  return true;
}

bool Runtime::run_again_with(bool& feature, const char* why) {
  if (feature) return false;
  feature = true;
  end_to_run_again(why);
  return true;
}

void Runtime::end_to_run_again(const char* why) {
  run_again_ = true;
  end(Verdict::pruned, fmt::format("run again: {}", why));
}

void Runtime::deepen_scrub(std::size_t stack_bytes) {
  const std::size_t deeper =
      std::min(std::max((snapshot_wanted_ + 1023) / 1024 * 1024, kSnapshotFirstScrub), stack_bytes);
  if (deeper <= snapshot_limit_) throw std::logic_error("mbcheck: a spin snapshot deeper than the fiber stack");
  snapshot_limit_ = deeper;
  snapshot_wanted_ = 0;
}

void Runtime::snapshot_too_deep(std::size_t depth) {
  snapshot_wanted_ = std::max(snapshot_wanted_, depth);
  end_to_run_again("a spin snapshot deeper than the stack scrubbed for it");
}

void Runtime::end(Verdict v, std::string_view message, std::optional<MisuseKind> misuse) {
  if (over_) return;
  flush_failed_poll(false);  // a failed poll before a crash or exit: an event all the same
  over_ = true;
  // The step that failed did not get to record itself: record it, marked.
  if (limits_.record_trace && last_agent_ != kNoAgent && v != Verdict::completed && v != Verdict::pruned &&
      (trace_.empty() || trace_.back().step != steps_)) {
    const Agent& a = *agent_at_[last_agent_];
    TraceEntry t{steps_,
                 a.id,
                 describe_agent(a.id),
                 a.op.bar ? barrier_name(*a.op.bar) : "",
                 describe_op(a) + "  (fails here: " + to_string(v) + ")",
                 {},
                 {}};
    name_site(t, a.site);
    trace_.push_back(std::move(t));
  }
  outcome_.verdict = v;
  outcome_.message.assign(message);  // (its buffer kept from run to run: no allocation)
  outcome_.misuse = misuse;
}

void Runtime::end_blocked() {
  if (observer_) observer_->on_blocked(*this);
  // Group blocked threads that wait for the same thing, as ranges of consecutive threads.
  struct Group {
    std::uint32_t cta, first, last;
    std::string what;
  };
  std::vector<Group> groups;
  std::uint32_t blocked = 0;
  for (const Agent* agent : agent_at_) {
    const Agent& a = *agent;
    if (a.kind != Agent::Kind::thread || a.state == Agent::State::finished) continue;
    ++blocked;
    std::string what;
    if (a.op.info().dependence == Dependence::block_sync) {
      const CtaInfo& cta = ctas_[a.cta];
      what = fmt::format("wait at {} ({} of {} live threads waiting, {} arrived by bar.arrive)", describe_op(a),
                         cta.at_sync.size(), cta.live_threads, cta.block_arrivals.size());
    } else if (!a.op.bar || !info_of(*a.op.bar).collective.empty()) {
      what = describe_op(a);
    } else if (a.op.bar->named) {  // "bar.sync barrier 2 (...): wait for generation 0"
      what = fmt::format("{}; {}: {}", describe_op(a), barrier_name(*a.op.bar), a.op.bar->describe());
    } else {  // "wait" once: the op's own text starts with it
      what = fmt::format("wait {}; {}: {}", describe_op(a).substr(a.op.kind == OpKind::wait ? 5 : 0),
                         barrier_name(*a.op.bar), a.op.bar->describe());
      const MbarrierState& bar = *a.op.bar;
      if (shape_.on_misuse == OnMisuse::proceed && bar.is_live() && !bar.named && a.op.arg < bar.phase - 1) {
        // A wait the barrier lapped: stopping, the emulator reports it as phase-aliasing; the
        // hardware reads the parity and waits on. The misuse is the root, if nothing came first.
        if (!outcome_.root) {
          outcome_.root.emplace();
          outcome_.root->kind = MisuseKind::phase_aliasing;
          outcome_.root->verdict = Verdict::aliasing;
          outcome_.root->message = fmt::format("{}: {}: waits for phase {} while the barrier is in phase {}",
                                               describe_agent(a.id), describe_op(a), a.op.arg, bar.phase);
          outcome_.root->step = steps_;
          outcome_.root->culprits = {a.id};
        }
        what += fmt::format(
            " (phases {} to {} completed: the open phase {} has the parity of phase {}, so the "
            "wait reads it as not complete)",
            a.op.arg, bar.phase - 1, bar.phase, a.op.arg);
      }
    }
    if (!groups.empty() && groups.back().cta == a.cta && groups.back().last + 1 == a.thread &&
        groups.back().what == what) {
      groups.back().last = a.thread;
    } else {
      groups.push_back({a.cta, a.thread, a.thread, std::move(what)});
      outcome_.culprits.push_back(a.id);  // one thread of each group
    }
  }
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const Group& g = groups[i];
    std::string who = cta_name(g.cta);
    std::uint32_t ws = shape_.warp_size;
    if (g.first == g.last)
      who += fmt::format("thread {} (warp {} lane {})", g.first, g.first / ws, g.first % ws);
    else if (g.first / ws == g.last / ws)
      who += fmt::format("threads {}-{} (warp {})", g.first, g.last, g.first / ws);
    else
      who += fmt::format("threads {}-{} (warps {}-{})", g.first, g.last, g.first / ws, g.last / ws);
    outcome_.details.push_back(fmt::format("{} {}", who, g.what));
    // Where each group is blocked: the line of its (first thread's) wait.
    outcome_.located.push_back(located(agent_at_[outcome_.culprits[i]]->site, outcome_.details.back()));
  }
  std::string first = groups.empty() ? std::string() : ": " + outcome_.details.front();
  for (const Agent* agent : agent_at_) {
    const Agent& a = *agent;
    if (a.kind != Agent::Kind::thread || a.state == Agent::State::finished || !a.op.await) continue;
    outcome_.culprits = {a.id};
    outcome_.located = {located(a.site, fmt::format("{} spins here", describe_agent(a.id)))};
    if (!a.op.bar) {  // a loop of atomic loads
      std::string words;
      for (const auto& [addr, value] : a.await_reads)
        words += fmt::format("{}{} = {}", words.empty() ? "" : ", ", describe_address(addr), value);
      end(Verdict::livelock,
          fmt::format("{} spins forever on atomic loads ({}): every iteration reads the same values and changes "
                      "nothing, and no other thread can change them",
                      describe_agent(a.id), words));
      return;
    }
    end(Verdict::livelock,
        fmt::format("{} spins forever on {} {} for phase {}: every poll fails and its loop changes nothing, and no "
                    "other thread can complete the phase; {}: {}",
                    describe_agent(a.id), to_string(a.op.kind), barrier_name(*a.op.bar), a.op.arg,
                    barrier_name(*a.op.bar), a.op.bar->describe()));
    return;
  }
  end(Verdict::deadlock, fmt::format("{} of {} threads blocked, none can proceed{}{}", blocked, threads_, first,
                                     groups.size() > 1 ? fmt::format(" (and {} more groups)", groups.size() - 1) : ""));
}

void Runtime::thread_finished(Agent& a) {
  a.state = Agent::State::finished;
  remove_enabled(a);
  --unfinished_threads_;
  CtaInfo& cta = ctas_[a.cta];
  --cta.live_threads;
  if (shape_.cluster_size() > 1 && !over_) {
    races_.thread_exit(a.id, a.cta);
    note_performed_peer_ops(a);
    if (cta.live_threads == 0) cta_exited(a.cta);
  }
  if (!over_) release_block_if_complete(a.cta);  // the exit may be what barrier 0 waited for
}

void Runtime::fiber_main(AgentId id) {
  Agent& a = *agent_at_[id];
  a.stack_top = static_cast<const unsigned char*>(__builtin_frame_address(0));
  try {
    if (!over_) {
      to_protocol();
      const bool ran = run_thread_main(a);
      if (a.guard_probe != GuardProbeStage::none) guard_probe_spoil();  // a probe's path ended the thread
      if (ran) {
        perform_deferred_try();  // a try nothing waited on still happened before the exit
        collectives_exit();
        cluster_barrier_exit();
      }
    }
  } catch (const Aborted&) {
  } catch (const std::exception& e) {
    if (a.guard_probe != GuardProbeStage::none) guard_probe_spoil();  // thrown on a probe's path
    end(Verdict::exception, fmt::format("{} threw: {}", describe_agent(id), e.what()));
    if (outcome_.culprits.empty()) outcome_.culprits = {id};
  } catch (...) {
    if (a.guard_probe != GuardProbeStage::none) guard_probe_spoil();
    end(Verdict::exception, fmt::format("{} threw a non-std exception", describe_agent(id)));
    if (outcome_.culprits.empty()) outcome_.culprits = {id};
  }
  to_runtime();
  flush_failed_poll(false);
  thread_finished(a);
  if (priming_) {
    next_ctx_ = primed_next(id);
  } else if (over_) {
    current_ = nullptr;
    next_ctx_ = main_ctx_;
  } else {
    next_ctx_ = decide();
  }
}

// ---------------------------------------------------------------------------------------
// one execution

Outcome& Runtime::execute_in_place(Program& program, Strategy& strategy, const RunLimits& limits,
                                   StepObserver* observer) {
  if (auto err = stack_size_error(limits.stack_bytes)) throw std::invalid_argument(*err);
  prepare_fibers(limits.stack_bytes);
  prepare_thread_for_reports();
  watch_limit_s_.store(limits.watchdog_seconds, std::memory_order_relaxed);
  os_thread_ = pthread_self();
  if (limits.watchdog_seconds > 0 && !watched_) {
    watch(*this);
    watched_ = true;
  }
  MakeCurrent current(this);  // the outer runtime is current again however this returns
  auto bind = [&] {
    program_ = &program;
    strategy_ = &strategy;
    observer_ = observer;
    limits_ = limits;
    shape_ = program.shape();
  };
  bind();
  if (auto err = launch_shape_error(shape_)) throw ProgramError(fmt::format("Program::shape(): {}", *err));
  for (bool again = false;; again = true) {
    reset_execution_state();
    try {
      program.reset();
    } catch (const std::exception& e) {
      throw ProgramError(fmt::format("Program::reset() threw: {}", e.what()));
    } catch (...) {
      throw ProgramError("Program::reset() threw a non-std exception");
    }
    races_.track_knowledge(phase_knowledge_ || shape_.cluster_size() > 1);  // (before reset: it clears it)
    races_.reset(threads_);
    races_.set_strict_proxy(shape_.proxy_fences == ProxyFences::strict, threads_, shape_.threads_per_cta);
    races_.track_init_visibility(shape_.cluster_size() > 1);
    memory_labels_.clear();
    if (!again) {
      strategy.begin_execution();
    } else {
      strategy.restart_execution();
      if (observer && observer != dynamic_cast<StepObserver*>(&strategy)) observer->restart_execution();
    }
    main_ctx_ = boost::fibers::context::active();
    spawn_threads();
    run_threads();
    if (!run_again_) break;
    // Again, from the start, with what the execution lacked from its first step on (a deeper
    // scrub, phase knowledge, the count-down records): the strategy makes the same choices up
    // to where it ended (restart_execution: a seed's run again, a search's recorded prefix),
    // and from there on what the execution then allows.
    run_again_ = false;
    if (std::exchange(learn_wanted_, false)) {  // a bool try_wait came first: its program's are learnt
      learn_guarded_tries(program, limits);     // (by executions of their own: guarded_tries_learnt.cpp)
      bind();
    }
    if (snapshot_wanted_ > 0) deepen_scrub(limits.stack_bytes);
  }
  outcome_.steps = steps_;
  if (outcome_.verdict == Verdict::completed) judge_output(program);
  if (outcome_.root) conclude_root();
  return outcome_;
}

// Everything one execution leaves behind, cleared for the next (the CTAs' storage is kept).
void Runtime::reset_execution_state() {
  agent_at_.clear();
  n_barriers_ = 0;  // their entries (and buffers) are reused by the next execution
  enabled_.clear();
  std::fill(enabled_bits_.begin(), enabled_bits_.end(), 0);
  track_enabled_bits_ = strategy_->wants_lowest_enabled();
  trace_.clear();
  tries_.clear();
  failed_poll_.reset();
  read_awaiters_.clear();
  tensor_issues_.clear();
  outcome_.clear();  // its buffers kept, where the last outcome stayed here (execute_in_place)
  // Sized like the last schedule: it grows once, not by doublings every run.
  outcome_.schedule.reserve(std::min<std::uint64_t>(steps_ + 16, 1u << 20));
  steps_ = 0;
  next_check_ = 0;  // checkpoint() at the first step
  copies_ = 0;
  over_ = false;
  last_agent_ = kNoAgent;
  threads_ = shape_.ctas * shape_.threads_per_cta;
  unfinished_threads_ = threads_;
  ctas_.resize(shape_.ctas);
  entered_cta_ = ~0u;  // the buffers below may move
  for (CtaInfo& cta : ctas_) {
    cta.smem.assign(shape_.smem_bytes + 128, 0);
    cta.live_threads = shape_.threads_per_cta;
    cta.at_sync.clear();
    cta.block_arrivals.clear();
    cta.released_arrivals.clear();
    cta.released_waiters.clear();
    cta.in_generation.assign(shape_.threads_per_cta, 0);
    cta.all_threads_form = cta.block_used = false;
    cta.block_pred.assign(shape_.threads_per_cta, 0);
    cta.block_red_mix = 0;
    cta.block_red_true = cta.block_red_all = 0;
    cta.release_step = 0;
    if (cta.named_used) {  // (most protocols use none: 16 barriers a CTA)
      for (MbarrierState& nb : cta.named) nb = MbarrierState{};
      for (std::uint32_t id = 0; id < kNamedBarriers; ++id)
        for (int slot = 0; slot < 2; ++slot)
          cta.red_true[id][slot] = cta.red_seen[id][slot] = cta.red_mix[id][slot] = 0;
      cta.named_used = false;
    }
    cta.collectives.clear();
    cta.wgmma_steps.clear();
    cta.wgmma_seq.clear();
    cta.peer_uses.clear();
  }
  cluster_bars_.assign(shape_.ctas / shape_.cluster_size(), Rendezvous{});
}

// The output check judges this schedule's output: its exception is this execution's bug.
void Runtime::judge_output(Program& program) {
  try {
    if (auto err = program.check_result()) {
      outcome_.verdict = Verdict::assertion;
      outcome_.message = *err;
    }
  } catch (const std::exception& e) {
    outcome_.verdict = Verdict::exception;
    outcome_.message = fmt::format("Program::check_result() threw: {}", e.what());
  } catch (...) {
    outcome_.verdict = Verdict::exception;
    outcome_.message = "Program::check_result() threw a non-std exception";
  }
}

}  // namespace mbcheck::sim
