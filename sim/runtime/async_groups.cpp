// The three async-group families (bulk stores, cp.async, wgmma) share one path: a member is
// issued into its owner's uncommitted list, a commit_group makes those the owner's next group,
// a member's step (its memory access) marks it done in its group, and a wait_group blocks until
// every group but the newest N is done, then is ordered after their members (the race
// detector's group clocks). What differs per family is only which memory a member touches and
// through which proxy: land_group_member.
//
// wgmma: a warp group issues one wgmma.mma_async together (.sync.aligned); the host has its
// first thread issue it, with one read agent per shared-memory operand, and keeps the warp
// group's groups there. Its commit_group and wait_group are rendezvous of the warp group
// (collectives.cpp) around this bookkeeping: the first thread commits before it reaches the
// wait's rendezvous, so no thread of the group waits on a group not yet made. The search
// relies on that: a wait by another thread is not dependent with the first thread's commit
// (a step of that thread's), so wait_group(wgmma) without the rendezvous would not be
// explored in both orders (the differential programs, which skip it, wait in thread 0 only).
#include <fmt/format.h>

#include <algorithm>

#include "sim/runtime/perform.hpp"

namespace mbcheck::sim {

AgentId Runtime::group_owner(const Agent& thread, GroupKind kind) const {
  if (kind != GroupKind::wgmma) return thread.id;
  return thread.id - thread.thread % 128;  // threads are agents cta * threads_per_cta + t
}

std::uint32_t Runtime::waited_for(const Agent& thread, const Op& op) const {
  const GroupKind kind = op.info().group;
  return agent_at_[group_owner(thread, kind)]->groups[group_index(kind)].waited_for(static_cast<std::uint32_t>(op.arg));
}

void Runtime::add_group_member(Agent& issuer, Agent& member, GroupKind kind) {
  member.group_owner = group_owner(issuer, kind);
  agent_at_[member.group_owner]->groups[group_index(kind)].uncommitted.push_back(member.id);
}

void Runtime::commit_group(GroupKind kind) {
  if (over_ || !current_) return;
  Agent& me = *current_;
  if (group_owner(me, kind) != me.id) return;  // wgmma: the warp group's first thread commits for it
  AsyncGroups& g = me.groups[group_index(kind)];
  const auto group = static_cast<std::uint32_t>(g.outstanding.size());
  for (AgentId id : g.uncommitted) {
    agent_at_[id]->committed = true;
    agent_at_[id]->async_group = group;
  }
  g.outstanding.push_back(static_cast<std::uint32_t>(g.uncommitted.size()));  // an empty group is a group
  g.uncommitted.clear();
  races_.commit_group(me.id, kind, group);  // members already done belong to it
}

void Runtime::wait_group(OpKind wait, std::uint32_t pending) {
  if (!schedule_point(wait, nullptr, pending)) return;
  Agent& me = *current_;
  const GroupKind kind = op_info(wait).group;
  const AgentId owner = group_owner(me, kind);
  races_.acquire_groups(me.id, owner, kind, agent_at_[owner]->groups[group_index(kind)].covered(pending));
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
  // A cp.async's clock stays: a later cp.async.mbarrier.arrive releases its writes with it.
  if (kind != GroupKind::cp_async) races_.retire(c.id);
  // Wake the owner's waiters: the owner itself, or every thread of its warp group (the
  // threads after the owner in its CTA, at most 128).
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
  // A bulk store reads shared memory through the async proxy and writes global memory; a
  // cp.async reads global memory and writes shared memory (generic proxy); a wgmma operand
  // read reads shared memory through the async proxy and writes nothing.
  const bool async_proxy = kind != GroupKind::cp_async;
  auto race = races_.access(c.id, c.src, c.total, false, async_proxy, site_id(c.site));
  if (!race && c.dst) race = races_.access(c.id, c.dst, c.total, true, async_proxy, site_id(c.site));
  if (race) {
    end_race(*race);
    return;
  }
  if (c.dst) std::memcpy(c.dst, c.src, c.total);
  if (limits_.record_trace) record(c, nullptr);
  observe(c.id, c.op);
  c.state = Agent::State::finished;
  group_member_done(c);
  if (kind == GroupKind::cp_async) release_cp_async_arrivers(*agent_at_[c.thread_agent]);
}

void Runtime::wgmma_mma_async(const void* a, std::uint32_t a_bytes, const void* b, std::uint32_t b_bytes) {
  if (over_ || !current_) return;
  // One instruction of the warp group: the thread that owns its groups issues it.
  if (group_owner(*current_, GroupKind::wgmma) != current_->id) return;
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
  for (auto [p, n] : {std::pair{a, a_bytes}, std::pair{b, b_bytes}}) {
    if (!p || n == 0) continue;
    Agent& r = spawn_copy_agent(me, nullptr, p, n, {OpKind::wgmma_read, nullptr, n});
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
