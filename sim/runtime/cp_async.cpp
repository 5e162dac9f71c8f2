// Non-bulk cp.async in the fiber runtime: each cp.async is a copy agent whose landing (the
// bytes written to shared memory) is a step of its own (land_group_member); cp.async.commit_group /
// cp.async.wait_group N group them per thread as the bulk stores' groups are (async_groups.cpp); and
// cp.async.mbarrier.arrive{.noinc} makes a barrier track every cp.async its thread issued so
// far: an arrive agent performs the arrive-on once they all landed. Without .noinc the
// instruction first raises the phase's pending count by one (so the thread need not be in the
// barrier's count); with .noinc the arrival counts toward the expected count.
// Memory order: a copy's writes are ordered after its issue; cp.async.wait_group orders the
// thread after the copies it waited for; the async arrive releases the tracked copies' writes
// (only those, as a bulk copy's landing does) to the phase's waiters.
#include <fmt/format.h>

#include <algorithm>

#include "sim/runtime/perform.hpp"

namespace mbcheck::sim {

void Runtime::cp_async(void* smem_dst, const void* gmem_src, std::uint32_t bytes) {
  if (!schedule_point(OpKind::cp_async, nullptr, bytes)) return;
  Agent& issuer = *current_;
  perform([&] {
    auto misaligned = [&](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % bytes != 0; };
    if ((bytes != 4 && bytes != 8 && bytes != 16) || misaligned(smem_dst) || misaligned(gmem_src))
      throw MisuseError(
          MisuseKind::tma_misaligned,
          fmt::format("cp.async of {} B: it copies 4, 8 or 16 bytes, both addresses aligned to the size", bytes));
    if (cta_of(smem_dst, issuer.cta) != issuer.cta)
      throw MisuseError(MisuseKind::cluster, "cp.async writes this CTA's shared memory (.shared::cta) only");
  });
  record(issuer, nullptr);
  Agent& c = spawn_copy_agent(issuer, smem_dst, gmem_src, bytes, {OpKind::cp_async_land, nullptr, bytes});
  add_group_member(issuer, c, GroupKind::cp_async);
  issuer.cp_async_issued.push_back(c.id);
  observe_with([&] {
    StepInfo step{issuer.id, issuer.op};
    step.spawned = c.id;
    step.spawned_count = 1;
    return step;
  });
}

void Runtime::cp_async_mbarrier_arrive(MbarrierState& bar, bool noinc) {
  info(bar);
  // .noinc changes nothing on the barrier but reads whether it is live: an event on it too.
  if (!schedule_point(noinc ? OpKind::cp_async_arrive_noinc : OpKind::cp_async_arrive, &bar)) return;
  Agent& issuer = *current_;
  perform([&] {
    if (const std::int64_t at = cta_of(&bar, issuer.cta); at >= 0 && at != issuer.cta)
      throw MisuseError(MisuseKind::cluster, "cp.async.mbarrier.arrive takes a barrier of this CTA (.shared::cta)");
  });
  Agent& arriver = spawn_copy_agent(issuer, nullptr, nullptr, 0, {OpKind::async_arrive, &bar, 1});
  // Every cp.async the thread issued before (PTX: "all prior cp.async operations"), landed or
  // not: the arrive releases all their writes, and waits for those in flight.
  arriver.tracked = issuer.cp_async_issued;
  const bool waits = std::any_of(arriver.tracked.begin(), arriver.tracked.end(),
                                 [&](AgentId t) { return agent_at_[t]->state != Agent::State::finished; });
  if (waits) {
    remove_enabled(arriver);
    arriver.state = Agent::State::blocked;
    issuer.cp_async_arrivers.push_back(arriver.id);
  }
  // The pending increment (or the liveness check of .noinc), the step the search sees, with
  // the arrive agent it spawned.
  perform([&] { apply_barrier_op(issuer, issuer.op, arriver.id); });
}

// Arrive agents of `issuer` whose tracked copies have all landed may go now.
void Runtime::release_cp_async_arrivers(Agent& issuer) {
  std::erase_if(issuer.cp_async_arrivers, [&](AgentId id) {
    Agent& arriver = *agent_at_[id];
    const bool ready = std::all_of(arriver.tracked.begin(), arriver.tracked.end(),
                                   [&](AgentId t) { return agent_at_[t]->state == Agent::State::finished; });
    if (ready) add_enabled(arriver);
    return ready;
  });
}

void Runtime::async_arrive(Agent& c) {
  try {
    apply_barrier_op(c, c.op);  // ops.def: release_tracked, the copies' writes and nothing else
  } catch (const MisuseError& e) {
    observe(c.id, c.op, c.op.bar->phase, false);
    end(Verdict::misuse,
        fmt::format("{}: the arrive-on of cp.async.mbarrier.arrive on {}: {}", describe_agent(c.id),
                    barrier_name(*c.op.bar), e.what()),
        e.kind);
    outcome_.culprits = {c.id};
    return;
  }
  c.state = Agent::State::finished;
}

}  // namespace mbcheck::sim
