// Thread block clusters in the fiber runtime: distributed shared memory (mapa), the
// .shared::cluster forms of the barrier operations on a peer CTA's barriers, multicast bulk
// copies, the cluster barrier, fence.mbarrier_init, and the two rules only clusters have:
//  - unfenced-init (a misuse): a CTA uses a peer's barrier whose mbarrier.init is not visible
//    to it. The initialising thread knows its init from the init on, and the fact travels
//    along every release/acquire edge (a barrier.cluster.arrive, a remote
//    mbarrier.arrive.release.cluster, ...); a barrier.cluster.arrive.relaxed carries only the
//    inits its thread fenced with fence.mbarrier_init.release.cluster (CUTLASS's pattern:
//    init, fence, relaxed cluster arrive, cluster wait).
//  - lifetime (a verdict of its own): a CTA that exits while a peer may still arrive on its
//    barriers, land a multicast in it or touch its shared memory. Judged by happens-before, as
//    races are: each peer use must happen before the exit of some thread of that CTA (CUTLASS's
//    producer_tail makes the producer wait for the last releases of its stages), otherwise
//    another schedule lets the CTA exit first. A peer's counter op (arrive, complete_tx, a
//    multicast landing) is also done once a thread of the CTA saw its phase complete before
//    exiting: the op has been performed, though a .relaxed complete_tx orders nothing.
#include <fmt/format.h>

#include <algorithm>
#include <bit>

#include "sim/runtime/perform.hpp"

namespace mbcheck::sim {

std::optional<std::string> launch_shape_error(const LaunchShape& s) {
  if (s.ctas == 0 || s.threads_per_cta == 0) return "a launch needs at least one CTA of one thread";
  if (s.warp_size == 0) return "the warp size must be positive";
  if (s.cluster_x == 0 || s.cluster_y == 0 || s.cluster_size() > 16)
    return fmt::format("a cluster of {}x{} CTAs: each dimension must be positive and the cluster at most 16 CTAs",
                       s.cluster_x, s.cluster_y);
  if (s.ctas % s.cluster_size() != 0)
    return fmt::format("{} CTAs do not make whole clusters of {}x{}", s.ctas, s.cluster_x, s.cluster_y);
  return std::nullopt;
}

std::int64_t Runtime::cta_of(const void* p, std::uint32_t likely) const {
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  auto holds = [&](std::uint32_t cta) {
    const auto& smem = ctas_[cta].smem;
    const auto begin = reinterpret_cast<std::uintptr_t>(smem.data());
    return at >= begin && at < begin + smem.size();
  };
  if (likely < ctas_.size() && holds(likely)) return likely;  // the caller's own CTA, most of the time
  for (std::uint32_t cta = 0; cta < ctas_.size(); ++cta)
    if (holds(cta)) return cta;
  return -1;
}

std::int64_t Runtime::shared_memory_offset(const void* p) {
  const std::int64_t cta = cta_of(p, current_ ? current_->cta : 0);
  if (cta < 0) return -1;
  return static_cast<const unsigned char*>(p) - cta_shared_memory(static_cast<std::uint32_t>(cta));
}

void* Runtime::map_shared_rank(const void* p, std::uint32_t rank) {
  if (over_ || !current_) return const_cast<void*>(p);
  Agent& a = *current_;
  const std::uint32_t size = shape_.cluster_size();
  auto misuse = [&](const std::string& what) {
    end(Verdict::misuse, fmt::format("{}: mapa to rank {}: {}", describe_agent(a.id), rank, what), MisuseKind::cluster);
    outcome_.culprits = {a.id};
    throw Aborted{};
  };
  if (rank >= size) misuse(fmt::format("the cluster has ranks 0..{}", size - 1));
  if (cta_of(p, a.cta) != a.cta) misuse("the address is not in this CTA's shared memory");
  const std::uint32_t peer = a.cta - a.cta % size + rank;
  const auto offset = static_cast<const unsigned char*>(p) - cta_shared_memory(a.cta);
  return cta_shared_memory(peer) + offset;
}

void Runtime::check_cluster_barrier_user(MbarrierState& bar) {
  const std::int64_t at = cta_of(&bar, current_->cta);
  if (at < 0) return;  // a runtime's own counter (named barriers, collectives)
  Agent& a = *current_;
  const auto cta = static_cast<std::uint32_t>(at);
  if (!a.op.remote) {
    if (cta != a.cta)
      throw MisuseError(MisuseKind::cluster,
                        fmt::format("a barrier of cta {} used with the .shared::cta form: a peer's barrier takes the "
                                    ".shared::cluster arrive and complete_tx, and no wait",
                                    cta));
    return;
  }
  if (cta == a.cta) return;  // a .shared::cluster form on its own CTA's barrier is a local use
  if (!peer_init_visible(a.id, bar))
    throw MisuseError(MisuseKind::unfenced_init,
                      fmt::format("used from cta {} before {} is visible to the cluster: the initialising "
                                  "thread needs fence.mbarrier_init.release.cluster after mbarrier.init, then a "
                                  "cluster barrier (arrive, wait) before a peer's first use",
                                  a.cta, bar.is_live() ? "its init" : "an init of it (it is not initialised)"));
  if (!peer_use(a, cta, to_string(a.op.kind), &bar, nullptr)) throw Aborted{};
}

std::string Runtime::describe_use(const CtaInfo::PeerUse& use) const {
  return fmt::format("{} {}", use.verb, use.bar ? barrier_name(*use.bar) : describe_address(use.addr));
}

bool Runtime::peer_use(const Agent& user, std::uint32_t cta, const char* verb, const MbarrierState* bar,
                       const void* addr) {
  CtaInfo& target = ctas_[cta];
  CtaInfo::PeerUse use{races_.now(user.id), steps_, verb, bar, addr};
  if (target.live_threads == 0) {
    end(Verdict::lifetime,
        fmt::format("{}: {}: cta {} has exited, its shared memory is gone (a CTA must wait for its peers' last "
                    "uses, as CUTLASS's producer_tail does, or meet them at a cluster barrier before it exits)",
                    describe_agent(user.id), describe_use(use), cta));
    outcome_.culprits = {user.id};
    return false;
  }
  CtaInfo::PeerUses& uses = target.peer_uses[user.id];
  uses.newest = use;
  if (!bar) {
    uses.access = use;
    return true;
  }
  use.phase = bar->phase;  // called before the op applies: the phase it counts in
  auto same = std::find_if(uses.counter_ops.begin(), uses.counter_ops.end(),
                           [bar](const CtaInfo::PeerUse& u) { return u.bar == bar; });
  if (same == uses.counter_ops.end())
    uses.counter_ops.push_back(use);
  else
    *same = use;
  return true;
}

// A thread of the CTA exits: a peer's counter op on one of its barriers whose phase this
// thread saw complete (through happens-before: its own wait, or what flowed to it) was performed.
void Runtime::note_performed_peer_ops(const Agent& exiting) {
  for (auto& [agent, uses] : ctas_[exiting.cta].peer_uses)
    for (CtaInfo::PeerUse& u : uses.counter_ops)
      if (!u.performed && u.bar->is_live() && races_.known_phase(exiting.id, u.bar->id) >= u.phase) u.performed = true;
}

void Runtime::cta_exited(std::uint32_t cta) {
  CtaInfo& c = ctas_[cta];
  auto before_exit = [&](AgentId agent, const CtaInfo::PeerUse& use) {
    return races_.before_exit(cta, agent, use.clock);
  };
  for (const auto& [agent, uses] : c.peer_uses) {
    if (before_exit(agent, uses.newest)) continue;
    const CtaInfo::PeerUse* late = nullptr;
    if (uses.access && !before_exit(agent, *uses.access)) late = &*uses.access;
    for (const CtaInfo::PeerUse& u : uses.counter_ops)
      if (!late && !u.performed && !before_exit(agent, u)) late = &u;
    if (!late) continue;
    end(Verdict::lifetime,
        fmt::format("cta {} exits (step {}) while {} may still use its shared memory: its {} (step {}) happens before "
                    "the exit of no thread of cta {}{}, so in another schedule it comes after the CTA is gone",
                    cta, steps_, describe_agent(agent), describe_use(*late), late->step, cta,
                    late->bar ? fmt::format(" and no thread of it saw phase {} complete", late->phase) : ""));
    outcome_.culprits = {agent};
    return;
  }
}

// A barrier operation in its .shared::cluster form on the barrier at `local`'s offset in CTA
// `rank`: the form travels in the Op (check_barrier_user reads it after the scheduling point,
// when other fibers have run), never in a field of the runtime.
MbarrierToken Runtime::barrier_op_remote(Op op, std::uint32_t rank) {
  auto* peer = static_cast<MbarrierState*>(map_shared_rank(op.bar, rank));
  if (over_) return {};
  op.bar = peer;
  op.remote = true;
  op.scope = Scope::cluster;
  return barrier_op(op);
}

void Runtime::bulk_copy_multicast(void* smem_dst, const void* gmem_src, std::uint32_t bytes, MbarrierState& bar,
                                  std::uint16_t cta_mask) {
  info(bar);
  Op op{OpKind::bulk_copy, &bar, bytes};
  op.expected = cta_mask;
  if (!schedule_point(op)) return;
  check_bulk_copy("cp.async.bulk multicast", smem_dst, gmem_src, bytes);
  check_spaces("cp.async.bulk.shared::cluster.global.multicast::cluster", smem_dst, Space::cluster_shared, gmem_src,
               Space::global, &bar);
  Agent& issuer = *current_;
  const std::uint32_t size = shape_.cluster_size();
  perform([&] {
    if (cta_mask == 0 || (size < 16 && (cta_mask >> size) != 0))
      throw MisuseError(MisuseKind::cluster, fmt::format("multicast mask {:#06x}: it must name some of the cluster's "
                                                         "ranks 0..{} and no others",
                                                         cta_mask, size - 1));
    if (cta_of(smem_dst, issuer.cta) != issuer.cta || cta_of(&bar, issuer.cta) != issuer.cta)
      throw MisuseError(MisuseKind::cluster,
                        "a multicast names its destination and barrier by their offsets in the issuing CTA's "
                        "shared memory");
  });
  record(issuer, &bar);
  const std::uint32_t piece = copy_piece_bytes(bytes);
  StepInfo step{issuer.id, issuer.op, bar.phase};
  const std::uint32_t first_rank = issuer.cta - issuer.cta % size;
  for (std::uint32_t r = 0; r < size; ++r) {
    if (!(cta_mask >> r & 1u)) continue;
    const std::uint32_t cta = first_rank + r;
    unsigned char* own = cta_shared_memory(issuer.cta);
    auto* dst = cta_shared_memory(cta) + (static_cast<unsigned char*>(smem_dst) - own);
    auto* peer_bar =
        reinterpret_cast<MbarrierState*>(cta_shared_memory(cta) + (reinterpret_cast<unsigned char*>(&bar) - own));
    info(*peer_bar);
    // The issuing thread signals the peers' barriers: their inits must be visible to it now
    // (its copy agents carry what it knows at the issue and learn nothing later).
    if (cta != issuer.cta && !peer_init_visible(issuer.id, *peer_bar))
      perform([&]() -> void {
        throw MisuseError(MisuseKind::unfenced_init,
                          fmt::format("multicast into cta {} before {} is visible to the issuing thread: the "
                                      "initialising thread needs fence.mbarrier_init.release.cluster, then a cluster "
                                      "barrier, before a peer's multicast",
                                      cta, barrier_name(*peer_bar)));
      });
    Agent& c = spawn_copy_agent(issuer, dst, gmem_src, bytes, {OpKind::copy_land, peer_bar, std::min(piece, bytes)});
    c.piece = piece;
    if (step.spawned == kNoAgent) step.spawned = c.id;
    ++step.spawned_count;
  }
  observe(step);
}

// The cluster barrier is a counter of the cluster's threads; barrier.cluster.wait waits for
// the phase of the thread's last arrive. PTX counts the non-exited threads: the counter is
// made at the cluster's first use with the threads alive then, and a thread that exits after
// that leaves the count as a step of its own (cluster_barrier_exit), which releases nothing
// (an exit has no memory semantics). Arrive is a release at cluster scope, .relaxed carries
// only the inits its thread fenced; wait is an acquire.
MbarrierState& Runtime::cluster_barrier() {
  const std::uint32_t size = shape_.cluster_size(), cluster = current_->cta / size;
  MbarrierState& bar = cluster_bars_[cluster].bar;
  if (!bar.is_live()) {
    BarrierInfo& bi = info(bar);
    std::uint32_t live = 0;
    for (std::uint32_t cta = cluster * size; cta < (cluster + 1) * size; ++cta) live += ctas_[cta].live_threads;
    bar.init(live);
    bar.named = true;
    races_.barrier_init(bar.id, current_->id, /*hidden=*/true);
    bi.cta = cluster * size;
    bi.collective = cluster_bars_.size() > 1 ? fmt::format("cluster {} barrier.cluster", cluster) : "barrier.cluster";
    bi.name = bi.collective;
  }
  return bar;
}

void Runtime::cluster_arrive(bool relaxed) {
  if (over_ || !current_) return;
  perform_deferred_try();
  Agent& a = *current_;
  MbarrierState& bar = cluster_barrier();
  // Not the generic path: the arrive is counted on the cluster's barrier, and .relaxed
  // releases only the thread's fenced inits.
  const Op op{relaxed ? OpKind::arrive_relaxed : OpKind::arrive, &bar, 1};
  if (!schedule_point(op)) return;
  perform([&] {
    if (a.cluster_arrived >= 0)
      throw MisuseError(
          MisuseKind::cluster,
          "barrier.cluster.arrive twice with no barrier.cluster.wait between: each arrive needs its wait");
  });
  bool done = false;
  const std::int64_t phase_before = bar.phase;
  perform([&] { bar.arrive(1, false, &done); });
  a.cluster_arrived = phase_before;
  if (relaxed) {
    races_.release_knowledge(a.id, bar.id, phase_before);
  } else {
    races_.release(a.id, bar.id, phase_before, /*remote=*/true);  // .release.cluster: for the cluster's waits
  }
  barrier_changed(bar, done);
  record(a, &bar);
  observe(a.id, a.op, phase_before, done);
}

void Runtime::cluster_wait() {
  if (over_ || !current_) return;
  perform_deferred_try();
  Agent& a = *current_;
  MbarrierState& bar = cluster_barrier();
  if (a.cluster_arrived < 0) {
    if (!schedule_point(OpKind::try_wait, &bar, bar.phase)) return;  // reported as a step, always enabled
    perform([&]() -> void {
      throw MisuseError(MisuseKind::cluster, "barrier.cluster.wait with no barrier.cluster.arrive before it");
    });
    return;
  }
  const std::int64_t phase = a.cluster_arrived;
  a.cluster_arrived = -1;
  wait(bar, phase, Acquire::cluster);  // barrier.cluster.wait: .acquire at cluster scope
}

void Runtime::cluster_barrier_exit() {
  if (over_ || !current_) return;
  Agent& a = *current_;
  const std::uint32_t cluster_size = shape_.cluster_size();  // (no division at every exit where it is 1)
  MbarrierState& bar = cluster_bars_[cluster_size == 1 ? a.cta : a.cta / cluster_size].bar;
  if (!bar.is_live()) return;  // the cluster never used it: nothing counts this thread
  if (a.cluster_arrived >= 0 && bar.phase == a.cluster_arrived) {
    // It arrived in the open phase and exits without its wait: counted there, it leaves the
    // count of the phases after it (they expect one fewer). Not a step: the order of this
    // against the completion of that phase changes nothing (after it, it would be the
    // arrive_drop below, in the next phase, with the same counts).
    a.cluster_arrived = -1;
    --bar.expected;
    return;
  }
  a.cluster_arrived = -1;
  leave_count(bar);
}

void Runtime::fence_mbarrier_init() {
  if (over_ || !current_) return;
  races_.fence_inits(current_->id);
}

}  // namespace mbcheck::sim
