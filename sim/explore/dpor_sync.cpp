// The DPOR relation's classes outside an mbarrier's phases: barrier 0 (sync_threads,
// bar.arrive 0) and the waits on async groups (bulk stores, cp.async, wgmma operand reads).
// The step observer that calls them: sim/explore/dpor.cpp.
#include "sim/explore/dpor.hpp"

namespace mbcheck::sim::dpor {

// Every waiter leaves barrier 0 after every live thread arrived: join the events of its
// generation's waiters (their last before the release), its bar.arrive arrivals, and the threads
// whose exit let it go (they had to finish first).
void DporSearch::classify_block_sync(const Runtime& rt, const StepInfo& step, std::vector<const Summary*>& forced) {
  const Agent& me = rt.agent(step.agent);
  auto& sj = sync_join_[me.cta];
  const std::uint64_t release = rt.sync_release_step(me.cta);
  if (sj.release != release) {  // the first waiter of a newly released generation
    sj.release = release;
    sj.clock.clear();
    auto join_last = [&](AgentId id) {
      if (id < last_event_.size() && last_event_[id] >= 0 && static_cast<std::uint64_t>(last_event_[id]) < release)
        arena_.join_into(events_[last_event_[id]], sj.clock.dense);
    };
    for (AgentId id : rt.sync_released_waiters(me.cta)) join_last(id);
    for (std::size_t id = 0; id < rt.agent_count(); ++id) {
      const Agent& a = rt.agent(static_cast<AgentId>(id));
      if (a.kind == Agent::Kind::thread && a.cta == me.cta && a.state == Agent::State::finished)
        join_last(static_cast<AgentId>(id));
    }
    for (const BlockArrival& b : rt.sync_released_arrivals(me.cta))
      if (b.step >= 1 && b.step - 1 < n_events_) arena_.join_into(events_[b.step - 1], sj.clock.dense);
  }
  forced.push_back(&sj.clock);
}

// bar.arrive 0 arrives in the generation open now: run before the completion of the one
// before, it would have arrived in that one (a second arrival of its thread there is a misuse).
void DporSearch::classify_block_arrive(const Runtime& rt, const StepInfo& step, std::vector<Group>& groups) {
  const std::uint64_t release = rt.sync_release_step(rt.agent(step.agent).cta);
  block_prev_.clear();
  if (release >= 1 && release - 1 < n_events_) block_prev_.push_back(static_cast<std::uint32_t>(release - 1));
  groups.push_back({all_of(block_prev_), nullptr});
}

// It waits for the members of its owner's groups of its family (its bulk stores, its
// cp.asyncs, its warp group's wgmma operand reads) in every committed group but the newest N.
// What an earlier wait of the thread forced is in its past anyway: per waiting thread, each
// member is looked at until joined, not at every wait (a scan of every agent per wait grew
// with the copies issued), and a wait joins only the members no earlier one did (joining all
// of them again cost a look at every chunk of the thread's clock per wait).
void DporSearch::classify_group_wait(const Runtime& rt, const StepInfo& step, std::vector<const Summary*>& forced) {
  for (; scanned_agents_ < rt.agent_count(); ++scanned_agents_) {
    const Agent& a = rt.agent(static_cast<AgentId>(scanned_agents_));
    if (a.kind == Agent::Kind::copy && a.group_owner != kNoAgent)
      group_members_[a.group_owner].push_back(static_cast<AgentId>(scanned_agents_));
  }
  const GroupKind family = step.op.info().group;
  const AgentId owner = rt.group_owner(rt.agent(step.agent), family);
  const std::uint32_t waited =
      rt.agent(owner).groups[group_index(family)].covered(static_cast<std::uint32_t>(step.op.arg));
  GroupWaitJoin& j = group_waits_[std::uint64_t{step.agent} << 8 | static_cast<std::uint64_t>(group_index(family))];
  const std::vector<AgentId>& members = group_members_[owner];
  if (j.joined.size() < members.size()) j.joined.resize(members.size(), 0);
  group_join_.clear();
  for (std::size_t i = j.next; i < members.size(); ++i) {
    const AgentId id = members[i];
    const Agent& a = rt.agent(id);
    const bool other_family = a.op.info().group != family;
    const bool joins = !other_family && a.committed && a.async_group < waited && a.state == Agent::State::finished &&
                       id < last_event_.size() && last_event_[id] >= 0;
    if (joins && !j.joined[i]) {
      arena_.join_into(events_[last_event_[id]], group_join_.dense);
      j.joined[i] = 1;
    }
    if (i == j.next && (j.joined[i] || (other_family && a.state == Agent::State::finished))) ++j.next;
  }
  if (!group_join_.dense.empty()) forced.push_back(&group_join_);
}

}  // namespace mbcheck::sim::dpor
