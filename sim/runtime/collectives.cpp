// Warp and warp-group collectives: a convergence of the lanes that take part (no lane leaves
// the instruction before every one of them reached it), each with the memory order PTX gives
// it and no more (docs/semantics.md, "Warp and warp-group collectives"):
//  - bar.warp.sync (__syncwarp): "also guarantee memory ordering among threads participating
//    in barrier" (PTX ISA 9.1, 9.7.13.2): every lane's past to every lane (release, acquire);
//  - elect.sync and shfl.sync: no memory ordering at all (their text has none; the CUDA guide:
//    shuffles "do not guarantee any memory ordering"): relaxed arrivals, waits that acquire
//    nothing, so lane 0's store and lane 1's load around a shfl race as on the GPU;
//  - wgmma.fence / commit_group / wait_group / mma_async: `.sync` converges the *warp*,
//    `.aligned` requires every thread of the warp group to execute the same instruction
//    (9.7.15.5.2, 9.7.15.7): a convergence per warp with no memory order, and a check that
//    the group's warps execute one sequence of wgmma instructions.
// Exited lanes: shfl.sync waits for "all non-exited threads corresponding to membermask"
// (9.7.9.6), __syncwarp for "all non-exited threads named in mask" (CUDA guide 10.6); elect.sync's
// text is silent and is read the same way (its leader is an "active" thread): a lane that has
// exited is not waited for, and one that exits later leaves the count as a step of its own.
// wgmma's .aligned has no such exception: a thread of the group that exited is a misuse.
//
// Each convergence is a hidden counter (an mbarrier without the missing-wait rule), so the
// search orders it as an mbarrier's arrivals and waits and one round is one execution.
#include <fmt/format.h>

#include <algorithm>
#include <bit>

#include "sim/runtime/perform.hpp"

namespace mbcheck::sim {

using runtime_records::collective_index;
using runtime_records::collective_key;
using runtime_records::collective_kind;
using runtime_records::CollectiveKind;
using runtime_records::kWarpGroupIndex;
using runtime_records::WgmmaStep;

template <class MakeName>
std::int64_t Runtime::rendezvous(Rendezvous& r, std::uint32_t count, std::uint32_t lane, RendezvousOrder order,
                                 const MakeName& make_name) {
  MbarrierState& bar = r.bar;
  BarrierInfo& bi = info(bar);
  if (!bar.is_live()) {
    bar.init(count);
    bar.named = true;
    races_.barrier_init(bar.id, current_->id, /*hidden=*/true);
    bi.collective = make_name();
    bi.name = shape_.ctas > 1 ? fmt::format("cta{}.{}", current_->cta, bi.collective) : bi.collective;
  }
  const std::int64_t round = bar.phase;  // cannot move on before this lane arrives
  r.last_round[lane % 32] = round;
  const MbarrierToken token =
      barrier_op(order == RendezvousOrder::none ? OpKind::arrive_relaxed : OpKind::arrive, bar, 1);
  if (over_) return round;
  if (order != RendezvousOrder::full) races_.converge_knowledge(current_->id, bar.id, token.phase, true);
  wait(bar, token.phase, order == RendezvousOrder::full ? Acquire::cta : Acquire::none);
  if (!over_ && order != RendezvousOrder::full) races_.converge_knowledge(current_->id, bar.id, token.phase, false);
  return round;
}

// An exiting thread leaves a hidden counter's count, as a step of its own: an arrive_drop
// (its arrival in the open phase, and one fewer expected from then on) that releases nothing:
// PTX gives an exit no memory semantics, so the phase it completes orders none of its accesses.
void Runtime::leave_count(MbarrierState& bar) { barrier_op(OpKind::arrive_drop_relaxed, bar, 1); }

std::uint32_t Runtime::live_mask(std::uint32_t cta, std::uint32_t warp) const {
  const std::uint32_t ws = shape_.warp_size;
  std::uint32_t m = 0;
  for (std::uint32_t lane = 0; lane < ws && lane < 32; ++lane) {
    const std::uint32_t t = warp * ws + lane;
    if (t >= shape_.threads_per_cta) break;
    if (agent_at_[cta * shape_.threads_per_cta + t]->state != Agent::State::finished) m |= 1u << lane;
  }
  return m;
}

[[noreturn]] void Runtime::collective_misuse(const std::string& what, MisuseKind kind) {
  end(Verdict::misuse, fmt::format("{}: {}", describe_agent(current_->id), what), kind);
  outcome_.culprits = {current_->id};
  throw Aborted{};
}

// The lanes of `mask` in the calling thread's warp meet at `instruction`; each instruction has
// its own counter per mask (a lane at elect.sync does not meet one at __syncwarp), so a
// deadlock names the instruction the lanes are stuck in. Returns the round's participants
// (the mask's lanes that had not exited), or 0 when the execution is over.
std::uint32_t Runtime::converge_warp(std::uint32_t mask, WarpInstruction instruction) {
  if (over_ || !current_) return 0;
  perform_deferred_try();
  Agent& a = *current_;
  const std::uint32_t ws = shape_.warp_size, lane = a.thread % ws, warp = a.thread / ws;
  const std::uint32_t lanes_mask = ws >= 32 ? ~0u : (1u << ws) - 1;
  static constexpr const char* kNames[] = {"__syncwarp", "elect.sync", "shfl.sync.idx", "ldmatrix/stmatrix"};
  const char* name = kNames[static_cast<int>(instruction)];
  // Mask bits past the warp (host warps may be narrower than 32) or past a partial last warp
  // name no thread: they do not count.
  const std::uint32_t given = mask;
  mask &= (lanes_mask & live_mask(a.cta, warp)) | (1u << lane);
  if (!(given >> lane & 1u))
    collective_misuse(
        fmt::format("{}({:#010x}): the mask must include the calling lane (PTX: undefined)", name, given));
  Rendezvous& r = ctas_[a.cta].collectives[collective_key(warp_collective_kind(instruction), warp, given)];
  const std::int64_t round =
      rendezvous(r, static_cast<std::uint32_t>(std::popcount(mask)), lane,
                 instruction == WarpInstruction::syncwarp ? RendezvousOrder::full : RendezvousOrder::none,
                 [&] { return fmt::format("warp {} {}({:#x})", warp, name, given); });
  return over_ ? 0 : r.participants(round, given);
}

void Runtime::syncwarp(std::uint32_t mask) { converge_warp(mask, WarpInstruction::syncwarp); }

// The leader: the lowest participating lane. PTX promises only that "the same leader thread is
// elected for the same membermask every time"; the lowest is what the hardware elects
// (spec/conformance/collectives.hpp holds it on the GPU).
bool Runtime::elect_sync(std::uint32_t mask) {
  const std::uint32_t m = converge_warp(mask, WarpInstruction::elect_sync);
  if (m == 0) return false;
  return current_->thread % shape_.warp_size == static_cast<std::uint32_t>(std::countr_zero(m));
}

// shfl.sync.idx with c = 0x1f: the source lane is src_lane & 31, always in range (PTX's .idx
// mode: j = bval[4:0]). Sourcing "a register from an inactive thread or a thread that is not in
// membermask" is undefined: a misuse here, as is a lane past a host warp narrower than 32.
std::uint32_t Runtime::shfl_sync(std::uint32_t mask, std::uint32_t value, std::uint32_t src_lane) {
  if (over_ || !current_) return value;
  Agent& a = *current_;
  const std::uint32_t ws = shape_.warp_size, warp = a.thread / ws, lane = a.thread % ws;
  Rendezvous& r = ctas_[a.cta].collectives[collective_key(CollectiveKind::shfl_sync, warp, mask)];
  // Every lane writes its operand for the round before it arrives and reads after the round
  // completed; a lane cannot start the round after next before every lane arrived at the next
  // one, so two slots, by parity, suffice.
  const std::int64_t round = r.bar.is_live() ? r.bar.phase : 0;
  r.values[round & 1][lane % 32] = value;
  const std::uint32_t m = converge_warp(mask, WarpInstruction::shfl_sync);
  if (over_) return value;
  const std::uint32_t j = src_lane & 31u;
  if (j >= ws || !(mask >> j & 1u) || !(m >> j & 1u))
    collective_misuse(fmt::format("shfl.sync.idx({:#010x}, src {}): source lane {} {} (PTX: the result is undefined)",
                                  mask, src_lane, j,
                                  j >= ws             ? fmt::format("is past the warp's {} lanes", ws)
                                  : !(mask >> j & 1u) ? std::string("is not in membermask")
                                                      : std::string("has exited")));
  return r.values[round & 1][j];
}

// wgmma.fence / commit_group / wait_group / mma_async: the lanes converge (no memory order),
// and each thread's k-th wgmma instruction must be the k-th of every thread of its group
// (.aligned). wgmma.fence and wait_group converge the warp (`.sync`); mma_async and
// commit_group the whole warp group: the MMA is one operation of the group, which cannot
// execute before its four warps issued it, and its reads (one agent per operand, issued by the
// group's first thread once all 128 arrived) and its group (committed by the first thread
// before it arrives at commit_group's convergence) are the group's. So no warp waits on a group
// not yet made, and a wait orders its lane after the group's one read. (A warp may thus not run
// past its mma_async before the other warps reach theirs, which the hardware allows; what it
// could do there before its wait_group is the schedule the model leaves out: docs/model.md.)
// With LaunchShape::warpgroup_converges every wgmma instruction converges the group.
// Returns false when the execution is over.
bool Runtime::warpgroup_step(const char* instruction, const WgmmaOperands& operands, bool release, std::int64_t* round,
                             const std::uint32_t* registers) {
  if (over_ || !current_) return false;
  perform_deferred_try();
  Agent& a = *current_;
  const std::uint32_t ws = shape_.warp_size, group = a.thread / 128, warp = a.thread / ws;
  if ((group + 1) * 128 > shape_.threads_per_cta)
    collective_misuse(fmt::format(
        "{}: a warp group is 4 whole warps (128 threads); the CTA's {} threads leave thread {}'s group short",
        instruction, shape_.threads_per_cta, a.thread));
  CtaInfo& cta = ctas_[a.cta];
  if (cta.wgmma_seq.size() != shape_.threads_per_cta) cta.wgmma_seq.assign(shape_.threads_per_cta, 0);
  const std::uint32_t k = cta.wgmma_seq[a.thread]++;  // this thread's k-th wgmma instruction
  std::vector<WgmmaStep>& steps = cta.wgmma_steps[group];
  const WgmmaStep step{instruction, operands.a, operands.b, operands.a_bytes, operands.b_bytes, operands.arg};
  if (steps.size() == k) {
    steps.push_back(step);
  } else if (!(steps[k] == step)) {
    const WgmmaStep& first = steps[k];
    collective_misuse(fmt::format(
        "warp group {}: thread {}'s wgmma instruction {} is {} but another thread's was {}{}; .aligned: every "
        "thread of the warp group executes the same one (PTX: undefined)",
        group, a.thread, k + 1, describe_wgmma(step), describe_wgmma(first),
        std::string_view(first.instruction) == step.instruction ? " (other operands)" : ""));
  }
  // A thread of the group that has exited without executing it never will.
  for (std::uint32_t t = group * 128; t < (group + 1) * 128; ++t)
    if (agent_at_[a.cta * shape_.threads_per_cta + t]->state == Agent::State::finished && cta.wgmma_seq[t] <= k)
      collective_misuse(
          fmt::format("{}: thread {} of warp group {} exited without executing it; .aligned: every "
                      "thread of the warp group executes it (PTX: undefined)",
                      instruction, t, group));
  const std::string_view name(instruction);
  const bool whole_group = shape_.warpgroup_converges || name == "wgmma.mma_async" || name == "wgmma.commit_group";
  Rendezvous& r = cta.collectives[collective_key(CollectiveKind::wgmma, whole_group ? kWarpGroupIndex | group : warp)];
  if (registers) {  // wgmma's A in registers: brought to the round (warp_matrix.cpp reads them)
    if (!r.matrix) r.matrix = std::make_shared<runtime_records::MatrixExchange>();
    std::copy_n(registers, 4, r.matrix->registers[(r.bar.is_live() ? r.bar.phase : 0) & 1][a.thread % 128]);
  }
  const std::int64_t done = rendezvous(
      r, whole_group ? 128u : std::min(ws, 32u), a.thread % 128,
      release ? RendezvousOrder::release : RendezvousOrder::none,
      [&] { return whole_group ? fmt::format("warp group {} wgmma", group) : fmt::format("warp {} wgmma", warp); });
  if (round) *round = done;
  return !over_;
}

std::string Runtime::describe_wgmma(const WgmmaStep& s) const {
  if (std::string_view(s.instruction) == "wgmma.mma_async")
    return fmt::format("wgmma.mma_async(A {} {} B, B {} {} B)", s.a ? describe_address(s.a) : "in registers", s.a_bytes,
                       describe_address(s.b), s.b_bytes);
  if (std::string_view(s.instruction) == "wgmma.wait_group") return fmt::format("wgmma.wait_group {}", s.arg);
  return s.instruction;
}

bool Runtime::warpgroup_collective(const char* instruction, std::uint32_t arg) {
  return warpgroup_step(instruction, WgmmaOperands{nullptr, 0, nullptr, 0, arg}, false);
}

// A lane that exits leaves the counters of its warp's collectives whose mask names it; a
// thread of a warp group leaving while its warp is inside a wgmma instruction, or with
// wgmma instructions other warps of its group executed still ahead of it, breaks .aligned.
void Runtime::collectives_exit() {
  if (over_ || !current_) return;
  Agent& a = *current_;
  CtaInfo& cta = ctas_[a.cta];
  if (cta.collectives.empty()) return;  // its CTA used none (most protocols)
  const std::uint32_t ws = shape_.warp_size, warp = a.thread / ws, lane = a.thread % ws;
  std::vector<MbarrierState*> leave;
  for (auto& [key, r] : cta.collectives) {
    const CollectiveKind kind = collective_kind(key.first);
    if (!r.bar.is_live()) continue;
    if (kind == CollectiveKind::wgmma) continue;  // below
    if (kind == CollectiveKind::bar_convergence) {
      if (collective_index(key.first) == warp) leave.push_back(&r.bar);
      continue;
    }
    if (collective_index(key.first) == warp && (key.second >> lane & 1u)) leave.push_back(&r.bar);
  }
  // .aligned: a thread of a warp group may not exit with wgmma instructions of its group ahead.
  if (auto steps = cta.wgmma_steps.find(a.thread / 128); steps != cta.wgmma_steps.end()) {
    const std::uint32_t done = a.thread < cta.wgmma_seq.size() ? cta.wgmma_seq[a.thread] : 0;
    if (done < steps->second.size())
      collective_misuse(
          fmt::format("exits before {} that its warp group executes; .aligned: every thread of the warp "
                      "group executes it (PTX: undefined)",
                      describe_wgmma(steps->second[done])));
  }
  for (MbarrierState* bar : leave) {
    if (over_) return;
    leave_count(*bar);
  }
}

}  // namespace mbcheck::sim
