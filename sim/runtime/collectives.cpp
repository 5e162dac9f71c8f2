// Warp and warp-group collectives as rendezvous: no thread leaves the instruction before
// every thread that takes part has reached it. On the GPU a warp's lanes may run apart
// (independent thread scheduling) until a .sync instruction converges them; a warp group's
// warps meet at wgmma.fence / commit_group / wait_group, which are .sync.aligned across the
// group. Without this bound one lane could run arbitrarily far ahead of the rest of its warp
// (or warp group), which is what made CUTLASS's multi-CTA pipelines look like phase aliasing.
//
// Each rendezvous is a hidden counter, like a named barrier: an arrival (a release, as a
// barrier's) then a wait for the round to complete (an acquire), so the search orders it as
// it does an mbarrier's and one round over n threads is one execution. What the model leaves
// out: a lane that exited while the others wait for it deadlocks here (PTX leaves it undefined).
#include <fmt/format.h>

#include <bit>

#include "sim/runtime/perform.hpp"

namespace mbcheck::sim {

template <class MakeName>
void Runtime::rendezvous(Rendezvous& r, std::uint32_t count, const MakeName& make_name) {
  MbarrierState& bar = r.bar;
  BarrierInfo& bi = info(bar);
  if (!bar.is_live()) {
    bar.init(count);
    bar.named = true;
    races_.barrier_init(bar.id, current_->id, /*hidden=*/true);
    bi.collective = make_name();
    bi.name = shape_.ctas > 1 ? fmt::format("cta{}.{}", current_->cta, bi.collective) : bi.collective;
  }
  const MbarrierToken token = barrier_op(OpKind::arrive, bar, 1);
  if (!over_) wait(bar, token.phase);
}

// An exiting thread leaves a hidden counter's count, as a step of its own: an arrive_drop
// (its arrival in the open phase, and one fewer expected from then on) that releases nothing:
// PTX gives an exit no memory semantics, so the phase it completes orders none of its accesses.
void Runtime::leave_count(MbarrierState& bar) { barrier_op(OpKind::arrive_drop_relaxed, bar, 1); }

// The lanes of `mask` in the calling thread's warp meet at `instruction`; each instruction has
// its own rendezvous per mask (a lane at elect.sync does not meet one at __syncwarp), so a
// deadlock names the instruction the lanes are stuck in. Returns the mask as PTX counts it, or
// 0 when the execution is over.
std::uint32_t Runtime::converge_warp(std::uint32_t mask, WarpInstruction instruction) {
  if (over_ || !current_) return 0;
  perform_deferred_try();
  Agent& a = *current_;
  const std::uint32_t ws = shape_.warp_size, lane = a.thread % ws, warp = a.thread / ws;
  const std::uint32_t lanes_mask = ws >= 32 ? ~0u : (1u << ws) - 1;
  const std::uint32_t warp_lanes = std::min(ws, shape_.threads_per_cta - warp * ws);
  const std::uint32_t present = warp_lanes >= 32 ? ~0u : (1u << warp_lanes) - 1;
  static constexpr const char* kNames[] = {"__syncwarp", "elect.sync", "shfl.sync.idx"};
  const char* name = kNames[static_cast<int>(instruction)];
  // Mask bits past the warp (host warps may be narrower than 32) or past a partial last warp
  // name no thread: they do not count.
  const std::uint32_t given = mask;
  mask &= lanes_mask & present;
  if (!(mask >> lane & 1u)) {
    end(Verdict::misuse,
        fmt::format("{}: {}({:#010x}): the mask must include the calling lane", describe_agent(a.id), name, given),
        MisuseKind::collective);
    outcome_.culprits = {a.id};
    throw Aborted{};
  }
  rendezvous(warp_rendezvous(a.cta, warp, mask, instruction), static_cast<std::uint32_t>(std::popcount(mask)),
             [&] { return fmt::format("warp {} {}({:#x})", warp, name, mask); });
  return over_ ? 0 : mask;
}

Runtime::Rendezvous& Runtime::warp_rendezvous(std::uint32_t cta, std::uint32_t warp, std::uint32_t mask,
                                              WarpInstruction instruction) {
  return ctas_[cta].collectives[{warp + 4096 * static_cast<std::uint32_t>(instruction), mask}];
}

void Runtime::syncwarp(std::uint32_t mask) { converge_warp(mask, WarpInstruction::syncwarp); }

bool Runtime::elect_sync(std::uint32_t mask) {
  const std::uint32_t m = converge_warp(mask, WarpInstruction::elect_sync);
  if (m == 0) return false;
  return current_->thread % shape_.warp_size == static_cast<std::uint32_t>(std::countr_zero(m));
}

std::uint32_t Runtime::shfl_sync(std::uint32_t mask, std::uint32_t value, std::uint32_t src_lane) {
  if (over_ || !current_) return value;
  Agent& a = *current_;
  const std::uint32_t ws = shape_.warp_size, warp = a.thread / ws, lane = a.thread % ws;
  const std::uint32_t lanes_mask = ws >= 32 ? ~0u : (1u << ws) - 1;
  const std::uint32_t warp_lanes = std::min(ws, shape_.threads_per_cta - warp * ws);
  const std::uint32_t present = warp_lanes >= 32 ? ~0u : (1u << warp_lanes) - 1;
  Rendezvous& r = warp_rendezvous(a.cta, warp, mask & lanes_mask & present, WarpInstruction::shfl_sync);
  // The round this shuffle is: every lane writes its operand for it before it arrives, and
  // reads after the round completed; a lane cannot start the round after next before every
  // lane arrived at the next one, so two slots, by parity, suffice.
  const std::int64_t round = r.bar.is_live() ? r.bar.phase : 0;
  r.values[round & 1][lane % 32] = value;
  converge_warp(mask, WarpInstruction::shfl_sync);
  if (over_) return value;
  if (src_lane >= ws || !(mask >> src_lane & 1u)) return value;  // PTX: the lane's own value
  return r.values[round & 1][src_lane % 32];
}

void Runtime::warpgroup_collective(const char* instruction) {
  if (over_ || !current_) return;
  perform_deferred_try();
  Agent& a = *current_;
  const std::uint32_t group = a.thread / 128;
  if ((group + 1) * 128 > shape_.threads_per_cta) {
    end(Verdict::misuse,
        fmt::format("{}: {}: a warp group is 4 whole warps (128 threads); the CTA's {} threads leave thread {}'s "
                    "group short",
                    describe_agent(a.id), instruction, shape_.threads_per_cta, a.thread),
        MisuseKind::collective);
    outcome_.culprits = {a.id};
    throw Aborted{};
  }
  rendezvous(ctas_[a.cta].collectives[{1000 + group, 0}], 128,
             [&] { return fmt::format("warp group {} wgmma", group); });
}

}  // namespace mbcheck::sim
