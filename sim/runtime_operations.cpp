// What each operation of the fiber runtime does once its agent is chosen: the barrier
// instructions, bulk copies and stores, atomics and the data accesses the race detector
// checks, as HostPlatform calls them (sim/runtime.hpp says when each is enabled). Scheduling
// and the execution itself are in runtime.cpp.
#include <fmt/format.h>

#include <stdexcept>

#include "sim/runtime_perform.hpp"

namespace mbcheck::sim {

// ---------------------------------------------------------------------------------------
// bulk copies

void Runtime::land_copy_piece(Agent& c) {
  const auto n = static_cast<std::uint32_t>(c.op.arg);
  if (shape_.cluster_size() > 1) {
    // A multicast (or a copy into a peer): the landing uses the destination CTA's barrier.
    const std::int64_t cta = cta_of(c.dst, c.cta);
    if (cta >= 0 && static_cast<std::uint32_t>(cta) != c.cta) {
      if (c.op.bar->is_live() && !races_.init_published(c.id, c.op.bar->id)) {
        observe({c.id, c.op, c.op.bar->phase, false});
        end(Verdict::misuse,
            fmt::format("{}: lands in cta {} and completes {} before its init is visible to the cluster: the "
                        "initialising thread needs fence.mbarrier_init.release.cluster, then a cluster barrier, "
                        "before a peer's multicast",
                        describe_agent(c.id), cta, barrier_name(*c.op.bar)),
            MisuseKind::unfenced_init);
        outcome_.culprits = {c.id};
        return;
      }
      if (!peer_use(c, static_cast<std::uint32_t>(cta), "multicast landing on", c.op.bar, nullptr)) return;
    }
  }
  auto race = races_.access(c.id, c.src + c.copied, n, false, true);
  if (!race) race = races_.access(c.id, c.dst + c.copied, n, true, true);
  if (race) {
    end_race(*race);
    return;
  }
  std::memcpy(c.dst + c.copied, c.src + c.copied, n);
  if (limits_.record_trace) record(c, nullptr);
  c.copied += n;
  try {
    const std::int64_t phase_before = c.op.bar->phase;
    bool done = c.op.bar->complete_tx(n);
    // The landing's complete_tx makes the bytes it wrote visible to the phase's waiters,
    // nothing else: its issuer's earlier stores are not released by it.
    races_.release_own(c.id, c.op.bar->id, phase_before);
    barrier_changed(*c.op.bar, done);
    observe({c.id, c.op, phase_before, done});
  } catch (const MisuseError& e) {
    observe({c.id, c.op, c.op.bar->phase, false});
    end(Verdict::misuse, fmt::format("{}: complete_tx {} {} B: {}", describe_agent(c.id), barrier_name(*c.op.bar), n, e.what()),
        e.kind);
    outcome_.culprits = {c.id};
    return;
  }
  if (limits_.record_trace) trace_.back().what += fmt::format("  => {}", c.op.bar->describe());
  if (c.copied == c.total) {
    c.state = Agent::State::finished;
    races_.retire(c.id);
    return;
  }
  c.op.arg = std::min(c.piece, c.total - c.copied);
  add_enabled(c);
}

void Runtime::check_bulk_copy(const char* what, const void* dst, const void* src, std::uint32_t bytes) {
  perform([&] {
    auto misaligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 != 0; };
    if (bytes == 0 || bytes % 16 != 0 || misaligned(dst) || misaligned(src))
      throw MisuseError(MisuseKind::tma_misaligned,
                        fmt::format("{} of {} B: size and both addresses must be non-zero multiples of 16", what, bytes));
  });
}

Agent& Runtime::spawn_copy_agent(Agent& issuer, void* dst, const void* src, std::uint32_t bytes, const Op& first) {
  Agent c;
  c.id = static_cast<AgentId>(agents_.size());
  c.kind = Agent::Kind::copy;
  c.cta = issuer.cta;
  c.thread = issuer.thread;
  c.thread_agent = issuer.id;
  c.copy_seq = copies_++;
  c.dst = static_cast<unsigned char*>(dst);
  c.src = static_cast<const unsigned char*>(src);
  c.total = bytes;
  c.op = first;
  c.site = issuer.site;
  agents_.push_back(c);
  agent_at_.push_back(&agents_.back());
  races_.add_agent(c.id, issuer.id);  // the copy starts after everything its issuer did
  add_enabled(agents_.back());
  return agents_.back();
}

std::uint32_t Runtime::copy_piece_bytes(std::uint32_t bytes) const {
  const std::uint32_t pieces = std::max<std::uint32_t>(1, shape_.copy_pieces);
  return std::max<std::uint32_t>(16, ((bytes + pieces - 1) / pieces + 15) / 16 * 16);
}

void Runtime::bulk_copy(void* smem_dst, const void* gmem_src, std::uint32_t bytes, MbarrierState& bar) {
  info(bar);
  if (!schedule_point({OpKind::bulk_copy, &bar, bytes})) return;
  check_bulk_copy("cp.async.bulk", smem_dst, gmem_src, bytes);
  Agent& issuer = *current_;
  record(issuer, &bar);
  const std::uint32_t piece = copy_piece_bytes(bytes);
  Agent& c = spawn_copy_agent(issuer, smem_dst, gmem_src, bytes, {OpKind::copy_land, &bar, std::min(piece, bytes)});
  c.piece = piece;
  observe({issuer.id, issuer.op, bar.phase, false, false, 0, false, c.id});
}

void Runtime::bulk_store(void* gmem_dst, const void* smem_src, std::uint32_t bytes) {
  if (!schedule_point({OpKind::bulk_store, nullptr, bytes})) return;
  check_bulk_copy("cp.async.bulk store", gmem_dst, smem_src, bytes);
  Agent& issuer = *current_;
  record(issuer, nullptr);
  Agent& c = spawn_copy_agent(issuer, gmem_dst, smem_src, bytes, {OpKind::store_land, nullptr, bytes});
  issuer.uncommitted_stores.push_back(c.id);
  observe({issuer.id, issuer.op, 0, false, false, 0, false, c.id});
}

void Runtime::bulk_commit_group() {
  if (over_ || !current_) return;
  Agent& a = *current_;
  const auto group = static_cast<std::uint32_t>(a.store_groups.size());
  for (AgentId id : a.uncommitted_stores) {
    agent_at_[id]->committed = true;
    agent_at_[id]->async_group = group;
  }
  a.store_groups.push_back(static_cast<std::uint32_t>(a.uncommitted_stores.size()));  // an empty group is a group
  a.uncommitted_stores.clear();
  races_.commit_group(a.id, RaceDetector::Groups::bulk_store, group);  // stores that already read belong to it
}

std::uint32_t Runtime::stores_waited_for(const Agent& a, std::uint32_t pending) {
  std::uint32_t reading = 0;
  const std::size_t waited = a.store_groups.size() > pending ? a.store_groups.size() - pending : 0;
  for (std::size_t g = 0; g < waited; ++g) reading += a.store_groups[g];
  return reading;
}

void Runtime::bulk_wait_read(std::uint32_t pending) {
  if (!schedule_point({OpKind::bulk_wait_read, nullptr, pending})) return;
  const std::size_t groups = current_->store_groups.size();
  races_.acquire_groups(current_->id, RaceDetector::Groups::bulk_store,
                        groups > pending ? static_cast<std::uint32_t>(groups - pending) : 0);
  record(*current_, nullptr);
  observe({current_->id, current_->op});
}

void Runtime::fence_proxy_async() {
  if (!over_ && current_) races_.fence_async(current_->id);
}

void Runtime::land_store(Agent& c) {
  // The async proxy reads shared memory: ordered after the writes (and fenced), then writes
  // global memory.
  auto race = races_.access(c.id, c.src, c.total, false, true);
  if (!race) race = races_.access(c.id, c.dst, c.total, true, true);
  if (race) {
    end_race(*race);
    return;
  }
  std::memcpy(c.dst, c.src, c.total);
  if (limits_.record_trace) record(c, nullptr);
  observe({c.id, c.op});
  c.state = Agent::State::finished;
  Agent& issuer = *agent_at_[c.thread_agent];
  if (!c.committed) {
    std::erase(issuer.uncommitted_stores, c.id);
    // read before its commit: joins the group the commit makes
    races_.group_member_done(c.id, issuer.id, RaceDetector::Groups::bulk_store, ~0u);
    races_.retire(c.id);
    return;
  }
  races_.group_member_done(c.id, issuer.id, RaceDetector::Groups::bulk_store, c.async_group);
  races_.retire(c.id);
  --issuer.store_groups[c.async_group];
  if (issuer.op.kind == OpKind::bulk_wait_read && issuer.state == Agent::State::blocked && is_enabled_now(issuer))
    add_enabled(issuer);
}

// ---------------------------------------------------------------------------------------
// barrier operations, as the HostPlatform calls them

void Runtime::init(MbarrierState& bar, std::int64_t count) {
  info(bar);
  if (!schedule_point({OpKind::init, &bar, count})) return;
  perform([&] { check_barrier_user(bar); });
  perform([&] { bar.init(count); });
  races_.barrier_init(bar.id, current_->id);
  barrier_changed(bar, true);
  record(*current_, &bar);
  observe({current_->id, current_->op, 0, false});
}

void Runtime::inval(MbarrierState& bar) {
  info(bar);
  if (!schedule_point({OpKind::inval, &bar})) return;
  perform([&] { check_barrier_user(bar); });
  const std::int64_t phase_before = bar.phase;
  perform([&] { bar.inval(); });
  barrier_changed(bar, true);
  record(*current_, &bar);
  observe({current_->id, current_->op, phase_before, false});
}

MbarrierToken Runtime::arrive(MbarrierState& bar, std::int64_t count, bool no_complete) {
  info(bar);
  Op op{OpKind::arrive, &bar, count, no_complete};
  op.remote = remote_form_;
  if (!schedule_point(op)) return {};
  perform([&] { check_barrier_user(bar); });
  bool done = false;
  const std::int64_t phase_before = bar.phase;
  MbarrierToken t = perform([&] { return bar.arrive(count, no_complete, &done); });
  races_.release(current_->id, bar.id, phase_before);
  barrier_changed(bar, done);
  record(*current_, &bar);
  observe({current_->id, current_->op, phase_before, done});
  return t;
}

MbarrierToken Runtime::arrive_expect_tx(MbarrierState& bar, std::int64_t bytes) {
  info(bar);
  if (!schedule_point({OpKind::arrive_expect_tx, &bar, bytes})) return {};
  perform([&] { check_barrier_user(bar); });
  bool done = false;
  const std::int64_t phase_before = bar.phase;
  MbarrierToken t = perform([&] { return bar.arrive_expect_tx(bytes, &done); });
  races_.release(current_->id, bar.id, phase_before);
  barrier_changed(bar, done);
  record(*current_, &bar);
  observe({current_->id, current_->op, phase_before, done});
  return t;
}

MbarrierToken Runtime::arrive_drop(MbarrierState& bar, std::int64_t count) {
  info(bar);
  if (!schedule_point({OpKind::arrive_drop, &bar, count})) return {};
  perform([&] { check_barrier_user(bar); });
  bool done = false;
  const std::int64_t phase_before = bar.phase;
  MbarrierToken t = perform([&] { return bar.arrive_drop(count, &done); });
  races_.release(current_->id, bar.id, phase_before);
  barrier_changed(bar, done);
  record(*current_, &bar);
  observe({current_->id, current_->op, phase_before, done});
  return t;
}

void Runtime::expect_tx(MbarrierState& bar, std::int64_t bytes) {
  info(bar);
  if (!schedule_point({OpKind::expect_tx, &bar, bytes})) return;
  perform([&] { check_barrier_user(bar); });
  const std::int64_t phase_before = bar.phase;
  perform([&] { bar.expect_tx(bytes); });
  barrier_changed(bar, false);
  record(*current_, &bar);
  observe({current_->id, current_->op, phase_before, false});
}

void Runtime::complete_tx(MbarrierState& bar, std::int64_t bytes) {
  info(bar);
  Op op{OpKind::complete_tx, &bar, bytes};
  op.remote = remote_form_;
  if (!schedule_point(op)) return;
  perform([&] { check_barrier_user(bar); });
  const std::int64_t phase_before = bar.phase;
  bool done = perform([&] { return bar.complete_tx(bytes); });
  // No release: mbarrier.complete_tx is .relaxed (PTX ISA; CCCL's wrapper takes sem_relaxed).
  barrier_changed(bar, done);
  record(*current_, &bar);
  observe({current_->id, current_->op, phase_before, done});
}

void Runtime::wait(MbarrierState& bar, std::int64_t phase) {
  info(bar);
  if (!schedule_point({OpKind::wait, &bar, phase})) return;
  perform([&] { check_barrier_user(bar); });
  perform([&] {
    // Enabled means complete (or a misuse, which throws); anything else is a runtime bug.
    if (!bar.test_wait_parity(phase)) throw std::logic_error("mbcheck: a blocked wait was scheduled");
  });
  races_.acquire(current_->id, bar.id, phase);
  record(*current_, &bar);
  observe({current_->id, current_->op, bar.phase, false, true});
}

bool Runtime::test_wait(MbarrierState& bar, std::int64_t phase, OpKind kind, const MbarrierToken* token) {
  info(bar);
  const std::int64_t awaited = token ? token->phase : phase;
  Op op{kind, &bar, awaited};
  if (current_ && !over_) {
    perform_deferred_try();  // an event before this poll: it decides what "the last poll" was
    Agent& self = *current_;
    // A spin iteration: the same poll as the last, failed, one from exactly the same state
    // (HostPlatform captured it into self.snapshot, in the caller's frame).
    const bool captured = !self.snapshot.empty();
    op.await = captured && self.last_poll_failed && !self.stored_since_poll && self.poll_bar == &bar &&
               self.poll_phase == awaited && self.poll_kind == kind && self.snapshot == self.poll_state;
  }
  if (!schedule_point(op)) return false;
  perform([&] { check_barrier_user(bar); });
  bool complete = perform([&] { return token ? bar.test_wait(*token) : bar.test_wait_parity(phase); });
  Agent& a = *current_;
  if (complete) races_.acquire(a.id, bar.id, awaited);
  a.last_poll_failed = !complete;
  if (!complete) {
    a.poll_state = a.snapshot;  // the state this failed poll was made from (copied: each keeps its buffer)
    a.poll_bar = &bar;
    a.poll_phase = awaited;
    a.poll_kind = kind;
    a.stored_since_poll = false;
  }
  a.snapshot.clear();
  record(a, &bar);
  observe({a.id, a.op, bar.phase, false, complete});
  return complete;
}

std::int64_t Runtime::phase_for_parity(MbarrierState& bar, std::uint32_t parity) {
  info(bar);
  if (over_ || !current_) return 0;
  perform_deferred_try();  // its answer may add to what this thread knows
  const std::int64_t known = races_.known_phase(current_->id, bar.id);
  return (known & 1) == static_cast<std::int64_t>(parity & 1) ? known : known + 1;
}

TryWaitStatus Runtime::try_wait_status(MbarrierState& bar, std::int64_t phase) {
  info(bar);
  if (over_ || !current_) return {};
  perform_deferred_try();  // the previous one: this try is invisible, so that one's next event is now
  tries_.push_back({current_->id, &bar, phase, current_->site});
  current_->deferred_try = tries_.size();
  return {tries_.size()};
}

void Runtime::perform_deferred_try() {
  Agent& a = *current_;
  if (a.deferred_try == 0 || over_) return;
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
    if (!schedule_point({OpKind::try_wait, &bar, 0})) return;
    perform([&]() -> void { throw MisuseError(MisuseKind::bad_token, wrong); });
    return;
  }
  DeferredTry& t = tries_[status.id - 1];
  if (a.deferred_try == status.id) {
    // The deferred try and this wait are one blocking wait (see runtime.hpp).
    a.deferred_try = 0;
    t.state = DeferredTry::State::failed;  // a later wait on this status waits as well
  } else if (t.state == DeferredTry::State::done) {
    return;  // the try found the phase complete (and acquired): nothing to wait for
  }
  wait(bar, t.phase);
}

std::uint32_t Runtime::pending_count(const MbarrierToken& token) {
  return perform([&] { return MbarrierState::pending_count(token); });
}

void Runtime::block_sync() {
  if (!schedule_point({OpKind::block_sync})) return;
  record(*current_, nullptr);
  observe({current_->id, current_->op});
}

std::int64_t Runtime::atomic(OpKind kind, std::int64_t* addr, std::int64_t arg, std::int64_t expected) {
  Op op{kind, nullptr, arg};
  op.addr = addr;
  op.expected = expected;
  if (!schedule_point(op)) return 0;
  StepInfo step{current_->id, op};
  step.value = *addr;
  switch (kind) {
    case OpKind::atomic_store: *addr = arg; step.wrote = true; break;
    case OpKind::atomic_fetch_add: *addr += arg; step.wrote = true; break;
    case OpKind::atomic_cas:
      if (*addr == expected) {
        *addr = arg;
        step.wrote = true;
      }
      break;
    default: break;
  }
  if (step.wrote) current_->stored_since_poll = true;
  record(*current_, nullptr);
  observe(step);
  return step.value;
}

std::string Runtime::describe_address(const void* addr) const {
  const auto at = reinterpret_cast<std::uintptr_t>(addr);
  std::string label;
  for (auto l = memory_labels_.rbegin(); l != memory_labels_.rend(); ++l)
    if (at >= l->begin && at < l->end) {
      label = fmt::format("'{}'[{}] ", l->name, (at - l->begin) / l->elem_bytes);
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

void Runtime::end_race(const RaceDetector::Race& race) {
  auto what = [](bool writes) { return writes ? "writes" : "reads"; };
  if (race.missing_fence) {
    end(Verdict::race,
        fmt::format("missing fence.proxy.async: {} reads {} with the async proxy (step {}), but {} wrote it with an "
                    "ordinary store (step {}) and ran no fence.proxy.async after that",
                    describe_agent(race.second), describe_address(race.address), race.second_step,
                    describe_agent(race.first), race.first_step));
    outcome_.culprits = {race.first, race.second};
    return;
  }
  end(Verdict::race,
      fmt::format("data race on {}: {} {} it (step {}) and {} {} it (step {}) with no happens-before between them",
                  describe_address(race.address), describe_agent(race.first), what(race.first_writes), race.first_step,
                  describe_agent(race.second), what(race.second_writes), race.second_step));
  outcome_.culprits = {race.first, race.second};
}

void Runtime::data_access(const void* addr, std::size_t bytes, bool write) {
  if (over_ || !current_) return;
  perform_deferred_try();  // an access is an event: the try comes before it
  if (over_) return;
  tick();  // the watchdog's sign of life: a loop over data is max_accesses_per_step's to end
  if (write) current_->stored_since_poll = true;
  if (shape_.cluster_size() > 1) {
    // Distributed shared memory: a peer's smem while that CTA lives (and only in the cluster).
    const std::int64_t cta = cta_of(addr, current_->cta);
    const std::uint32_t size = shape_.cluster_size();
    if (cta >= 0 && static_cast<std::uint32_t>(cta) != current_->cta) {
      if (static_cast<std::uint32_t>(cta) / size != current_->cta / size) {
        end(Verdict::misuse,
            fmt::format("{}: {} {}: the shared memory of a CTA outside its cluster", describe_agent(current_->id),
                        write ? "store to" : "load from", describe_address(addr)),
            MisuseKind::cluster);
        outcome_.culprits = {current_->id};
        if (std::uncaught_exceptions() == 0) throw Aborted{};
        return;
      }
      if (!peer_use(*current_, static_cast<std::uint32_t>(cta), write ? "store to" : "load from", nullptr, addr)) {
        if (std::uncaught_exceptions() == 0) throw Aborted{};
        return;
      }
    }
  }
  if (++accesses_in_step_ > limits_.max_accesses_per_step) {
    end(Verdict::step_limit,
        fmt::format("{} made {} loads/stores without reaching a barrier operation: an endless loop?",
                    describe_agent(current_->id), limits_.max_accesses_per_step));
    outcome_.culprits = {current_->id};
    if (std::uncaught_exceptions() == 0) throw Aborted{};
    return;
  }
  if (auto race = races_.access(current_->id, addr, bytes, write)) {
    end_race(*race);
    if (std::uncaught_exceptions() == 0) throw Aborted{};
  }
}

void Runtime::check_failed(const char* what) {
  if (over_ && std::uncaught_exceptions() > 0) return;
  end(Verdict::assertion, fmt::format("{}: check failed: {}", describe_agent(current_->id), what));
  if (outcome_.culprits.empty()) outcome_.culprits = {current_->id};
  if (std::uncaught_exceptions() > 0) return;
  throw Aborted{};
}


}  // namespace mbcheck::sim
