// The three async-group families (bulk stores, cp.async, wgmma) share one path: a member is
// issued into its owner's uncommitted list, a commit_group makes those the owner's next group,
// a member's step (its memory access) marks it done in its group, and a wait_group blocks until
// every group but the newest N is done, then is ordered after their members (the race
// detector's group clocks). What differs per family is only which memory a member touches and
// through which proxy: land_group_member.
//
// wgmma: the warp group issues one wgmma.mma_async together (.aligned; the MMA is one operation
// of the group), so its groups are the group's, kept at its first thread, which issues the
// operand reads (one read agent per shared-memory operand) once every thread arrived, and
// commits before it arrives at commit_group's convergence of the group (collectives.cpp): no
// thread waits on a group not yet made. The search relies on that (a wait by another thread is
// not dependent with the first thread's commit).
#include <fmt/format.h>

#include <algorithm>
#include <tuple>

#include "sim/runtime/perform.hpp"

namespace mbcheck::sim {

AgentId Runtime::group_owner(const Agent& thread, GroupKind kind) const {
  if (kind != GroupKind::wgmma) return thread.id;
  return thread.id - thread.thread % 128;  // threads are agents cta * threads_per_cta + t
}

std::uint32_t Runtime::waited_for(const Agent& thread, const Op& op) const {
  const GroupKind kind = op.info().group;
  const AsyncGroupSet& groups = agent_at_[group_owner(thread, kind)]->groups;
  const auto n = static_cast<std::uint32_t>(op.arg);
  // The full bulk wait: a store's write agent exists only once its read is done, so the reads
  // still outstanding count too.
  if (kind == GroupKind::bulk_store_write)
    return groups[group_index(kind)].waited_for(n) + groups[group_index(GroupKind::bulk_store)].waited_for(n);
  return groups[group_index(kind)].waited_for(n);
}

void Runtime::add_group_member(Agent& issuer, Agent& member, GroupKind kind) {
  member.group_owner = group_owner(issuer, kind);
  agent_at_[member.group_owner]->groups[group_index(kind)].uncommitted.push_back(member.id);
}

void Runtime::commit_group(GroupKind kind) {
  if (over_ || !current_) return;
  Agent& me = *current_;
  if (group_owner(me, kind) != me.id) return;  // wgmma: the warp group's first thread commits for it
  // cp.async.bulk.commit_group makes a group of the stores' reads and one of their writes.
  for (const GroupKind k : {kind, GroupKind::bulk_store_write}) {
    AsyncGroups& g = me.groups[group_index(k)];
    const auto group = static_cast<std::uint32_t>(g.outstanding.size());
    for (AgentId id : g.uncommitted) {
      agent_at_[id]->committed = true;
      agent_at_[id]->async_group = group;
    }
    g.outstanding.push_back(static_cast<std::uint32_t>(g.uncommitted.size()));  // an empty group is a group
    g.uncommitted.clear();
    races_.commit_group(me.id, k, group);  // members already done belong to it
    if (kind != GroupKind::bulk_store) break;
  }
}

// N of every wait_group is an immediate (PTX: "an integer constant", no bound stated); the
// contract takes it at run time and both backends accept 0..7 (the device switches over
// those eight instructions), so a larger N is refused here as it traps there.
void Runtime::wait_group(OpKind wait, std::uint32_t pending) {
  if (!schedule_point(wait, nullptr, pending)) return;
  perform([&] {
    if (pending > kMaxWaitGroupN)
      throw MisuseError(MisuseKind::operand_range,
                        fmt::format("{} {}: the contract's N is 0..{} (an immediate of the instruction)",
                                    op_info(wait).ptx, pending, kMaxWaitGroupN));
  });
  Agent& me = *current_;
  const GroupKind kind = op_info(wait).group;
  const AgentId owner = group_owner(me, kind);
  races_.acquire_groups(me.id, owner, kind, agent_at_[owner]->groups[group_index(kind)].covered(pending));
  if (kind == GroupKind::bulk_store_write)  // and the stores' reads
    races_.acquire_groups(me.id, owner, GroupKind::bulk_store,
                          agent_at_[owner]->groups[group_index(GroupKind::bulk_store)].covered(pending));
  record(me, nullptr);
  observe(me.id, me.op);
}

void Runtime::group_member_done(Agent& c) {
  const GroupKind kind = c.op.info().group;
  Agent& owner = *agent_at_[c.group_owner];
  AsyncGroups& g = owner.groups[group_index(kind)];
  if (c.committed) {
    races_.group_member_done(c.id, owner.id, kind, c.async_group);
    --g.outstanding[c.async_group];
  } else {  // done before its commit: joins the group the commit makes
    std::erase(g.uncommitted, c.id);
    races_.group_member_done(c.id, owner.id, kind, ~0u);
  }
  // A cp.async's clock stays: a later cp.async.mbarrier.arrive releases its writes with it;
  // a store's read agent's clock was copied to its write agent already.
  if (kind != GroupKind::cp_async) races_.retire(c.id);
  // Wake the owner's waiters: the owner itself, or every thread of its warp group (wgmma).
  const std::uint32_t users =
      kind == GroupKind::wgmma ? std::min<std::uint32_t>(128, shape_.threads_per_cta - owner.thread) : 1;
  for (AgentId id = owner.id; id < owner.id + users; ++id) {
    Agent& t = *agent_at_[id];
    if (t.kind == Agent::Kind::thread && t.state == Agent::State::blocked && t.op.info().group == kind &&
        t.op.info().dependence == Dependence::group_wait && is_enabled_now(t))
      add_enabled(t);
  }
}

void Runtime::land_group_member(Agent& c) {
  const GroupKind kind = c.op.info().group;
  // A bulk store reads shared memory through the async proxy, then (its write agent) writes
  // global memory; a cp.async reads global memory and writes shared memory (generic proxy);
  // a wgmma operand read reads shared memory through the async proxy and writes nothing.
  const bool async_proxy = kind != GroupKind::cp_async;
  if (kind == GroupKind::bulk_store_write && !c.segments.empty()) {  // a tensor store's rows (tensor_copies.cpp)
    if (!land_tensor_write(c)) return;
    if (limits_.record_trace) record(c, nullptr);
    observe(c.id, c.op);
    c.state = Agent::State::finished;
    group_member_done(c);
    return;
  }
  std::optional<RaceDetector::Race> race;
  if (!c.ranges.empty()) {  // a wgmma operand's exact footprint
    for (auto [offset, bytes] : c.ranges)
      if ((race = races_.access(c.id, c.src + offset, bytes, false, async_proxy, site_id(c.site)))) break;
  } else if (kind != GroupKind::bulk_store_write) {
    race = races_.access(c.id, c.src, c.total, false, async_proxy, site_id(c.site));
  }
  if (!race && c.dst && kind != GroupKind::bulk_store)
    race = races_.access(c.id, c.dst, c.total, true, async_proxy, site_id(c.site));
  if (race) {
    end_race(*race);
    return;
  }
  if (kind == GroupKind::bulk_store) {
    spawn_store_write(c);
    return;
  }
  if (kind == GroupKind::bulk_store_write) {
    std::memcpy(c.dst, c.staged.data(), c.total);
  } else if (c.dst) {
    std::memcpy(c.dst, c.src, c.total);
  }
  if (limits_.record_trace) record(c, nullptr);
  observe(c.id, c.op);
  c.state = Agent::State::finished;
  group_member_done(c);
  if (kind == GroupKind::cp_async) release_cp_async_arrivers(*agent_at_[c.thread_agent]);
}

// The contract's wgmma.mma_async (spec/platform.hpp): k steps of m64n8k16 (bf16), each
// reading 256 B of B and, with A in shared memory, 2 KiB of A; the device issues exactly
// those instructions, so the host tracks exactly those bytes and refuses other sizes.
// A bulk store's read landed: its bytes are staged in a write agent of its own, started from
// the read's clock and a member of the store's group in the write family.
void Runtime::spawn_store_write(Agent& c) {
  Agent& issuer = *agent_at_[c.thread_agent];
  Agent& w = spawn_copy_agent(issuer, c.dst, c.src, c.total, {OpKind::store_write, nullptr, c.total}, &c);
  w.staged.assign(c.src, c.src + c.total);
  if (!c.segments.empty()) {  // a tensor store: the write agent writes the box's rows
    w.segments.swap(c.segments);
    w.tensor = c.tensor;
    w.reduce = c.reduce;
    w.tensor_issue = c.tensor_issue;
  }
  w.site = c.site;
  w.group_owner = c.group_owner;
  AsyncGroups& g = agent_at_[c.group_owner]->groups[group_index(GroupKind::bulk_store_write)];
  if (c.committed) {
    w.committed = true;
    w.async_group = c.async_group;
    ++g.outstanding[c.async_group];
  } else {
    g.uncommitted.push_back(w.id);
  }
  if (limits_.record_trace) record(c, nullptr);
  observe_with([&] {
    StepInfo step{c.id, c.op};
    step.spawned = w.id;
    return step;
  });
  c.state = Agent::State::finished;
  group_member_done(c);
}

void Runtime::wgmma_mma_async(const void* a, std::uint32_t a_bytes, const void* b, std::uint32_t b_bytes) {
  if (over_ || !current_) return;
  if (b_bytes == 0 || b_bytes % 256 != 0 || (a ? a_bytes != 8 * b_bytes : a_bytes != 0))
    collective_misuse(
        fmt::format(
            "wgmma.mma_async(A {} B, B {} B): the contract's MMA is k steps of m64n8k16 (bf16): B is 256 B a step "
            "and A, when in shared memory, 2,048 B a step (a_bytes = 8 * b_bytes; 0 with A in registers)",
            a_bytes, b_bytes),
        MisuseKind::operand_range);
  std::int64_t round = 0;
  if (!warpgroup_step("wgmma.mma_async", WgmmaOperands{a, a_bytes, b, b_bytes, 0}, true, &round)) return;
  if (group_owner(*current_, GroupKind::wgmma) != current_->id) return;  // the group's first thread issues
  wgmma_issue(a, a_bytes, b, b_bytes,
              &ctas_[current_->cta].collectives[runtime_records::collective_key(
                  runtime_records::CollectiveKind::wgmma, runtime_records::kWarpGroupIndex | current_->thread / 128)],
              round);
}

void Runtime::wgmma_issue(const void* a, std::uint32_t a_bytes, const void* b, std::uint32_t b_bytes,
                          const Rendezvous* convergence, std::int64_t round, const ByteRanges* a_ranges,
                          const ByteRanges* b_ranges) {
  if (over_ || !current_) return;
  if (!schedule_point(OpKind::wgmma_mma_async, nullptr, a_bytes + b_bytes)) return;
  Agent& me = *current_;
  perform([&] {
    for (const void* p : {a, b})
      if (p && cta_of(p, me.cta) != me.cta)
        throw MisuseError(MisuseKind::cluster, "wgmma.mma_async reads its operands from this CTA's shared memory");
    if (!b || b_bytes == 0) throw MisuseError(MisuseKind::collective, "wgmma.mma_async reads B from shared memory");
  });
  record(me, nullptr);
  AgentId first = kNoAgent;
  std::uint32_t count = 0;
  for (auto [p, n, ranges] : {std::tuple{a, a_bytes, a_ranges}, std::tuple{b, b_bytes, b_ranges}}) {
    if (!p || n == 0) continue;
    Agent& r = spawn_copy_agent(me, nullptr, p, n, {OpKind::wgmma_read, nullptr, n});
    if (ranges) r.ranges = *ranges;
    // The reads come after every lane's issue: each lane released its past into the
    // convergence round (fenced writes of the operands among it), which the read acquires;
    // the lanes themselves acquire nothing from each other.
    if (convergence) races_.acquire(r.id, convergence->bar.id, round);
    add_group_member(me, r, GroupKind::wgmma);
    if (first == kNoAgent) first = r.id;
    ++count;
  }
  observe_with([&] {
    StepInfo step{me.id, me.op};
    step.spawned = first;
    step.spawned_count = count;
    return step;
  });
}

}  // namespace mbcheck::sim
