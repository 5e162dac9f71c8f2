// Plain atomics (and the spin awaits a write to one may wake), the loads and stores of protocol
// data (the race detector's accesses), and how a race is reported.
#include <fmt/format.h>

#include <stdexcept>

#include "sim/runtime/perform.hpp"

namespace mbcheck::sim {

std::int64_t Runtime::atomic(OpKind kind, std::int64_t* addr, std::int64_t arg, std::int64_t expected) {
  Op op{kind, nullptr, arg};
  op.addr = addr;
  op.expected = expected;
  if (kind == OpKind::atomic_load) recognise_load_spin(op);
  if (!schedule_point(op)) return 0;
  StepInfo step{current_->id, op};
  step.value = *addr;
  switch (kind) {
    case OpKind::atomic_store:
      *addr = arg;
      step.wrote = true;
      break;
    case OpKind::atomic_fetch_add:
      *addr += arg;
      step.wrote = true;
      break;
    case OpKind::atomic_cas:
      if (*addr == expected) {
        *addr = arg;
        step.wrote = true;
      }
      break;
    default: break;
  }
  Agent& a = *current_;
  if (step.wrote) a.stored_since_poll = true;
  if (kind == OpKind::atomic_load && a.last_poll_failed) a.loop_reads.emplace_back(addr, step.value);
  const bool captured = kind == OpKind::atomic_load && !a.snapshot.empty();
  if (kind == OpKind::atomic_load) note_load(a, addr, step.value, a.op.await);
  if (limits_.record_trace) [[unlikely]]
    record_atomic_step(a, step.value, step.wrote);
  if (captured && (observer_ || limits_.record_trace)) {
    // Reported at the thread's next announcement, which shows whether it was a spin iteration
    // (recognise_load_spin), as a failed poll is.
    failed_poll_ = step;
    failed_poll_step_ = steps_;
  } else {
    observe(step);
  }
  // An atomic is an access like any other (PTX: atom on a peer's shared memory is a
  // .shared::cluster access while that CTA lives; a plain access racing it is a race), except
  // that atomics never race one another.
  if (shape_.cluster_size() > 1 && !cluster_access_allowed(addr, step.wrote)) [[unlikely]]
    throw Aborted{};
  {
    const std::int64_t cta = step.wrote ? cta_of(addr, a.cta) : a.cta;
    const MemorySpace space = cta < 0                                    ? MemorySpace::global
                              : static_cast<std::uint32_t>(cta) == a.cta ? MemorySpace::own_shared
                                                                         : MemorySpace::peer_shared;
    if (auto race = races_.access(a.id, addr, sizeof(std::int64_t), step.wrote, false, site_id(a.site), space, true))
        [[unlikely]] {
      end_race(*race);
      throw Aborted{};
    }
  }
  if (step.wrote && !read_awaiters_.empty()) atomic_written(addr);
  return step.value;
}

// An atomic load that comes back to the call site and word of an earlier load of the thread's
// current run of loads (nothing else announced, nothing stored since) from exactly the same
// state (the program counter included): the iteration from that load to here changed nothing,
// and would repeat as long as the words it read hold the values it read. So this load is an
// await of those words (enabled when one of them holds another value), as a poll loop's await
// is of its phase (docs/model.md, "Spin-loop recognition").
void Runtime::recognise_load_spin(Op& op) {
  if (!current_ || over_) return;
  perform_deferred_try();  // an event before this load: it ends the run of loads
  if (over_) return;
  Agent& a = *current_;
  for (std::uint32_t i = a.loads_in_loop; i-- > 0;) {
    const Agent::LoadSeen& anchor = a.loads_seen[i];
    if (anchor.addr != op.addr || !anchor.site.same_place(a.site)) continue;
    if (!a.snapshot.empty() && anchor.state == a.snapshot) {
      op.await = true;
      a.woken_at = 0;
      a.await_reads.clear();
      for (std::uint32_t j = i; j < a.loads_in_loop; ++j)
        a.await_reads.emplace_back(a.loads_seen[j].addr, a.loads_seen[j].value);
      // An iteration of this one load: that load changed nothing, and is no event (its report
      // waited for this announcement). A longer iteration's loads stay events.
      if (i + 1 == a.loads_in_loop) flush_failed_poll(true);
    }
    return;
  }
}

// The load joins the thread's run of loads, with the state taken at it (if any). An await
// that ran (a word changed) starts a new run; so does a run longer than any recognised loop.
void Runtime::note_load(Agent& a, const std::int64_t* addr, std::int64_t value, bool awaited) {
  if (awaited || a.loads_in_loop == kLoadLoopMax) a.loads_in_loop = 0;
  if (a.loads_seen.size() <= a.loads_in_loop) a.loads_seen.emplace_back();
  Agent::LoadSeen& seen = a.loads_seen[a.loads_in_loop++];
  copy_site(seen.site, a.site);
  seen.pc = a.load_pc;
  seen.addr = addr;
  seen.value = value;
  seen.state.swap(a.snapshot);
  a.snapshot.clear();
  a.snapshot.reserve(snapshot_bytes());  // the entry's old buffer may be one never captured into
}

// A word an await of its loop read has changed (or changed back): re-decide its enabledness.
void Runtime::atomic_written(const std::int64_t* addr) {
  auto keep = read_awaiters_.begin();
  for (AgentId id : read_awaiters_) {
    Agent& w = *agent_at_[id];
    const bool waiting = w.kind == Agent::Kind::thread && w.state != Agent::State::finished &&
                         w.state != Agent::State::running && w.op.await && !w.await_reads.empty();
    if (!waiting) continue;  // it has moved on
    *keep++ = id;
    bool reads_it = false;
    for (const auto& r : w.await_reads) reads_it = reads_it || r.first == addr;
    if (!reads_it) continue;
    // A poll's await is also among its barrier's waiters; a load loop's is only here.
    const bool enabled = is_enabled_now(w);
    if (enabled && w.enabled_pos == ~0u) {
      if (w.op.bar)
        std::erase(info(*w.op.bar).waiters, w.id);
      else
        w.woken_at = steps_;  // this step's write: what the search orders it after
      add_enabled(w);
    } else if (!enabled && w.enabled_pos != ~0u) {
      remove_enabled(w);
      w.state = Agent::State::blocked;
      if (w.op.bar) info(*w.op.bar).waiters.push_back(w.id);
    }
  }
  read_awaiters_.erase(keep, read_awaiters_.end());
}

std::string Runtime::describe_address(const void* addr) const {
  const auto at = reinterpret_cast<std::uintptr_t>(addr);
  std::string label;
  for (auto l = memory_labels_.rbegin(); l != memory_labels_.rend(); ++l)
    if (at >= l->begin && at < l->end) {
      const std::string name = l->index >= 0 ? fmt::format("{} {}", l->name, l->index) : l->name;
      label = fmt::format("'{}'[{}] ", name, (at - l->begin) / l->elem_bytes);
      break;
    }
  for (std::uint32_t cta = 0; cta < ctas_.size(); ++cta) {
    const auto& smem = ctas_[cta].smem;
    auto raw = reinterpret_cast<std::uintptr_t>(smem.data());
    auto base = raw + (128 - raw % 128) % 128;
    if (at >= base && at < raw + smem.size()) {
      const std::string where =
          shape_.ctas > 1 ? fmt::format("cta {} smem+{:#x}", cta, at - base) : fmt::format("smem+{:#x}", at - base);
      return label.empty() ? where : label + "(" + where + ")";
    }
  }
  return label.empty() ? fmt::format("global memory {}", addr) : label + fmt::format("(global memory {})", addr);
}

namespace {
// The narrowest fence.proxy.async whose state space holds an access to `space` (fence_covers).
const char* covering_fence(MemorySpace space) {
  return space == MemorySpace::global        ? "fence.proxy.async.global"
         : space == MemorySpace::peer_shared ? "fence.proxy.async.shared::cluster"
                                             : "fence.proxy.async.shared::cta";
}
}  // namespace

void Runtime::end_race(const RaceDetector::Race& race) {
  auto what = [](bool writes) { return writes ? "writes" : "reads"; };
  if (race.missing_fence && !race.first_writes) {
    // --proxy-fences strict: a generic read, then the async proxy's write of the same bytes.
    const char* fence = covering_fence(race.written_space);
    end(Verdict::race,
        fmt::format("missing fence.proxy.async: {} overwrites {} with the async proxy (step {}), but {} read it "
                    "with an ordinary load (step {}) and no {} (or fence.proxy.async) came between: the reader's "
                    "after its read and before its release, the issuer's after it learnt of the read, or another "
                    "thread's of its CTA that knew of the read (--proxy-fences strict)",
                    describe_agent(race.second), describe_address(race.address), race.second_step,
                    describe_agent(race.first), race.first_step, fence));
    outcome_.culprits = {race.first, race.second};
    outcome_.located = {
        located(sites_.at(race.second_site),
                fmt::format("{} overwrites {} with the async proxy (issued here, step {})", describe_agent(race.second),
                            describe_address(race.address), race.second_step)),
        located(sites_.at(race.first_site),
                fmt::format("{} read it here (step {}), with no fence.proxy.async after it before its release",
                            describe_agent(race.first), race.first_step))};
    return;
  }
  if (race.missing_fence) {
    const char* fence = covering_fence(race.written_space);
    end(Verdict::race,
        fmt::format("missing fence.proxy.async: {} reads {} with the async proxy (step {}), but {} wrote it with an "
                    "ordinary store (step {}) and ran no {} (or fence.proxy.async) after that",
                    describe_agent(race.second), describe_address(race.address), race.second_step,
                    describe_agent(race.first), race.first_step, fence));
    outcome_.culprits = {race.first, race.second};
    outcome_.located = {
        located(sites_.at(race.second_site),
                fmt::format("{} reads {} with the async proxy here (step {})", describe_agent(race.second),
                            describe_address(race.address), race.second_step)),
        located(sites_.at(race.first_site),
                fmt::format("{} wrote it here (step {}), with no fence.proxy.async after it",
                            describe_agent(race.first), race.first_step))};
    return;
  }
  end(Verdict::race,
      fmt::format("data race on {}: {} {} it (step {}) and {} {} it (step {}) with no happens-before between them",
                  describe_address(race.address), describe_agent(race.first), what(race.first_writes), race.first_step,
                  describe_agent(race.second), what(race.second_writes), race.second_step));
  outcome_.culprits = {race.first, race.second};
  // The two accesses' own lines: the one that completed the race first (where it was found).
  auto access_text = [&](AgentId who, bool writes, std::uint32_t step) {
    const Agent& a = *agent_at_[who];
    return fmt::format("{} {} {} here (step {}){}", describe_agent(who), what(writes), describe_address(race.address),
                       step, a.kind == Agent::Kind::copy ? ": the copy was issued here" : "");
  };
  outcome_.located = {
      located(sites_.at(race.second_site), access_text(race.second, race.second_writes, race.second_step)),
      located(sites_.at(race.first_site), access_text(race.first, race.first_writes, race.first_step))};
}

Outcome::Located Runtime::located(const CallSite& site, std::string text) const {
  TraceEntry t;
  name_site(t, site);
  return {t.where, t.function, std::move(text)};
}

// False when the access ended the execution (the caller throws Aborted, if it may).
bool Runtime::access_data(const void* addr, std::size_t bytes, bool write, std::uint32_t site, bool atomic) {
  if (over_ || !current_) return true;
  // On a bool try's probe: a read is noted (the paths must read alike), a write ends the probe.
  if (guard_probing()) [[unlikely]] {
    guard_probe_access(addr, bytes, write);
    return true;
  }
  perform_deferred_try();  // an access is an event: the try comes before it
  if (over_) return true;  // the thread unwinds at its next operation
  // The watchdog's sign of life: a loop over data is max_accesses_per_step's to end.
  tick();
  current_->guard_touched = true;  // a learnt try's paths must not differ in what they access
  if (write) {
    current_->stored_since_poll = true;
    current_->loads_in_loop = 0;  // a store ends a loop of loads: it is no spin iteration
  }
  if (shape_.cluster_size() > 1 && !cluster_access_allowed(addr, write)) [[unlikely]]
    return false;
  if (++accesses_in_step_ > limits_.max_accesses_per_step) [[unlikely]] {
    end_endless_accesses();
    return false;
  }
  // A write's state space relative to its writer decides which fence.proxy.async covers it (and
  // a read's, under --proxy-fences strict).
  MemorySpace space = MemorySpace::own_shared;
  if (write || shape_.proxy_fences == ProxyFences::strict) {
    const std::int64_t cta = cta_of(addr, current_->cta);
    space = cta < 0                                            ? MemorySpace::global
            : static_cast<std::uint32_t>(cta) == current_->cta ? MemorySpace::own_shared
                                                               : MemorySpace::peer_shared;
  }
  if (auto race = races_.access(current_->id, addr, bytes, write, false, site, space, atomic)) [[unlikely]] {
    end_race(*race);
    return false;
  }
  return true;
}

void Runtime::code_access(const void* addr, std::size_t bytes, bool write, const void* pc, bool atomic) noexcept {
  try {
    access_data(addr, bytes, write, sites_.pc_id(pc), atomic);
  } catch (const Aborted&) {
    // A deferred try_wait performed first (a scheduling point) found the execution over: the
    // thread unwinds at its next operation.
  }
}

void Runtime::untracked_store(const void* addr) noexcept {
  if (!current_) return;
  const auto* p = static_cast<const unsigned char*>(addr);
  if (p >= current_->stack_lo && p < current_->stack_hi) return;  // in the snapshot
  // The runtime's own work in instrumented protocol code (its inlined code writes the agent and
  // the runtime; its copies, through the wrapped memcpy, a capture's buffer and a probe's):
  // not the protocol's state.
  const auto in = [p](const void* lo, std::size_t bytes) {
    return p >= static_cast<const unsigned char*>(lo) && p < static_cast<const unsigned char*>(lo) + bytes;
  };
  if (in(current_, sizeof(Agent)) || in(this, sizeof(Runtime)) ||
      in(current_->guard_state.data(), current_->guard_state.capacity()) ||
      in(current_->snapshot.data(), current_->snapshot.capacity()) || in(probe_.saved.data(), probe_.saved.capacity()))
    return;
  if (guard_probing()) guard_probe_spoil();  // state off the stack
  current_->stored_since_poll = true;
  current_->loads_in_loop = 0;
  current_->guard_touched = true;
}

namespace runtime_detail {
constinit CtaEnteredHook cta_entered_hook = nullptr;
constinit std::atomic<bool> cta_hook_set_once{false};
}  // namespace runtime_detail

void Runtime::enter_cta() {
  if (!current_ || current_->kind != Agent::Kind::thread || current_->cta == entered_cta_) return;
  entered_cta_ = current_->cta;
  runtime_detail::cta_entered_hook(cta_shared_memory(entered_cta_), shape_.smem_bytes);
}

// Distributed shared memory: a peer's smem while that CTA lives (and only in the cluster).
// False when the access ends the execution.
bool Runtime::cluster_access_allowed(const void* addr, bool write) {
  const std::int64_t cta = cta_of(addr, current_->cta);
  const std::uint32_t size = shape_.cluster_size();
  if (cta < 0 || static_cast<std::uint32_t>(cta) == current_->cta) return true;
  if (static_cast<std::uint32_t>(cta) / size != current_->cta / size) {
    end(Verdict::misuse,
        fmt::format("{}: {} {}: the shared memory of a CTA outside its cluster", describe_agent(current_->id),
                    write ? "store to" : "load from", describe_address(addr)),
        MisuseKind::cluster);
    outcome_.culprits = {current_->id};
    return false;
  }
  return peer_use(*current_, static_cast<std::uint32_t>(cta), write ? "store to" : "load from", nullptr, addr);
}

void Runtime::end_endless_accesses() {
  end(Verdict::step_limit, fmt::format("{} made {} loads/stores without reaching a barrier operation: an endless loop?",
                                       describe_agent(current_->id), limits_.max_accesses_per_step));
  outcome_.culprits = {current_->id};
}

void Runtime::check_failed(const char* what) {
  if (guard_probing()) guard_probe_spoil();  // a path the thread may not take
  if (over_ && std::uncaught_exceptions() > 0) return;
  end(Verdict::assertion, fmt::format("{}: check failed: {}", describe_agent(current_->id), what));
  if (outcome_.culprits.empty()) outcome_.culprits = {current_->id};
  if (std::uncaught_exceptions() > 0) return;
  throw Aborted{};
}

}  // namespace mbcheck::sim
