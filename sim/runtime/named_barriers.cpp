// Named barriers (bar.sync / bar.arrive / bar.red with an id and a thread count) in the fiber
// runtime, counted per warp as the hardware counts them.
//
// PTX: a bar instruction "causes executing thread to wait for all non-exited threads from its
// warp and marks warps' arrival at barrier". So each use is, per warp:
//  1. a rendezvous of the warp's non-exited lanes (its convergence counter: an mbarrier-like
//     counter of the warp's live lanes; a lane that exits while its warp uses named barriers
//     leaves the count as a step of its own);
//  2. the warp's arrival, `warp_size` threads at once, made by its lowest live lane after the
//     rendezvous (it has acquired every lane's past there, so the arrival releases the whole
//     warp's), with the generation it arrived in passed to the other lanes by a second round;
//  3. for bar.sync and bar.red, a wait (acquire) for that generation to complete.
// The named barrier itself is a counter of `count` threads per CTA and id, an mbarrier
// without the missing-wait rule; its first use fixes the count. So a warp whose upper lanes
// exited still counts as a whole warp (measured on the H200, device/RESULTS.md), and a lane
// busy elsewhere holds up its warp's arrival, as on the hardware.
#include <fmt/format.h>

#include "sim/runtime/perform.hpp"

namespace mbcheck::sim {

namespace {
constexpr std::uint32_t kConvergenceKey = 2000;  // collectives key of a warp's convergence counter
}

std::uint32_t Runtime::live_lanes(std::uint32_t cta, std::uint32_t warp, std::uint32_t* lowest) const {
  const std::uint32_t ws = shape_.warp_size;
  std::uint32_t live = 0;
  if (lowest) *lowest = ~0u;
  for (std::uint32_t lane = 0; lane < ws; ++lane) {
    const std::uint32_t t = warp * ws + lane;
    if (t >= shape_.threads_per_cta) break;
    if (agent_at_[cta * shape_.threads_per_cta + t]->state == Agent::State::finished) continue;
    if (lowest && *lowest == ~0u) *lowest = t;
    ++live;
  }
  return live;
}

void Runtime::named_barrier(std::uint32_t id, std::uint32_t count, bool sync) {
  named_barrier_op(id, count, sync, nullptr);
}

std::uint32_t Runtime::bar_red(std::uint32_t id, std::uint32_t count, BarReduction op, bool pred) {
  RedArrival red{op, pred};
  named_barrier_op(id, count, true, &red);
  return red.result;
}

void Runtime::named_barrier_op(std::uint32_t id, std::uint32_t count, bool sync, RedArrival* red) {
  if (over_ || !current_) return;
  perform_deferred_try();
  Agent& a = *current_;
  const char* op = red ? "bar.red" : sync ? "bar.sync" : "bar.arrive";
  auto misuse = [&](std::string what) {
    end(Verdict::misuse, fmt::format("{}: {} {}, {}: {}", describe_agent(a.id), op, id, count, what),
        MisuseKind::named_barrier);
    outcome_.culprits = {a.id};
    throw Aborted{};
  };
  const std::uint32_t ws = shape_.warp_size;
  const std::uint32_t cta_threads = (shape_.threads_per_cta + ws - 1) / ws * ws;
  if (id >= kNamedBarriers) misuse(fmt::format("a CTA has named barriers 0..{}", kNamedBarriers - 1));
  if (count == 0 || count % ws != 0 || count > cta_threads)
    misuse(fmt::format("the thread count must be a positive multiple of the warp size ({}) and at most the CTA's {}",
                       ws, cta_threads));
  CtaInfo& cta = ctas_[a.cta];
  if (id == 0 && count == block_thread_count() && !red) return block_barrier(count, sync);  // __syncthreads' barrier
  if (id == 0 && cta.block_used)
    misuse(
        fmt::format("barrier 0 is used over all the CTA's {} threads (sync_threads, or bar.sync/bar.arrive 0, {}): "
                    "uses of one id disagree on the count",
                    block_thread_count(), block_thread_count()));
  cta.named_used = true;  // (reset_execution_state resets them then)
  MbarrierState& bar = cta.named[id];
  BarrierInfo& bi = info(bar);
  if (!bar.is_live()) {
    bar.init(count);
    bar.named = true;
    races_.barrier_init(bar.id, a.id, /*hidden=*/true);
    bi.name = shape_.ctas > 1 ? fmt::format("cta{}.barrier {}", a.cta, id) : fmt::format("barrier {}", id);
  } else if (bar.expected != count) {
    misuse(fmt::format("barrier {} counts {} threads (its first use said so): uses of one id disagree on the count", id,
                       bar.expected));
  }

  // 1. the warp's live lanes meet (round one of its convergence counter)
  const std::uint32_t warp = a.thread / ws, lane = a.thread % ws;
  Rendezvous& conv = cta.collectives[{kConvergenceKey + warp, 0}];
  if (!conv.bar.is_live()) {
    BarrierInfo& ci = info(conv.bar);
    conv.bar.init(live_lanes(a.cta, warp, nullptr));
    conv.bar.named = true;
    races_.barrier_init(conv.bar.id, a.id, /*hidden=*/true);
    ci.collective = fmt::format("warp {} at a bar instruction", warp);
    ci.name = shape_.ctas > 1 ? fmt::format("cta{}.{}", a.cta, ci.collective) : ci.collective;
  }
  conv.values[0][lane % 32] = red && red->pred ? 1 : 0;  // read by the arriving lane in round one's wake
  const MbarrierToken first = barrier_op(OpKind::arrive, conv.bar, 1);
  if (over_) return;
  wait(conv.bar, first.phase);
  if (over_) return;
  // 2. the lowest live lane makes the warp's arrival and tells the others its generation
  std::uint32_t lowest = 0;
  const std::uint32_t live = live_lanes(a.cta, warp, &lowest);
  const auto round_two = static_cast<std::size_t>((first.phase + 1) & 1);
  if (a.thread == lowest) {
    const MbarrierToken warp_arrival = barrier_op(OpKind::arrive, bar, ws);
    if (over_) return;
    const auto slot = static_cast<std::size_t>(warp_arrival.phase & 1);
    if (red) {  // counted in the arrival's own step: nothing runs between the arrive and this
      if (warp_arrival.pending_before == bar.expected) cta.red_true[id][slot] = cta.red_seen[id][slot] = 0;
      for (std::uint32_t l = 0; l < ws && l < 32; ++l) {
        const std::uint32_t t = warp * ws + l;
        if (t >= shape_.threads_per_cta ||
            agent_at_[a.cta * shape_.threads_per_cta + t]->state == Agent::State::finished)
          continue;
        cta.red_true[id][slot] += conv.values[0][l];
      }
      cta.red_seen[id][slot] += live;
    }
    conv.values[round_two][1] = static_cast<std::uint32_t>(warp_arrival.phase);
  }
  const MbarrierToken second = barrier_op(OpKind::arrive, conv.bar, 1);
  if (over_) return;
  wait(conv.bar, second.phase);
  if (over_) return;
  const std::int64_t generation = conv.values[round_two][1];
  // 3. bar.sync / bar.red wait for the generation
  if (sync) wait(bar, generation);
  if (red && !over_) {
    const auto slot = static_cast<std::size_t>(generation & 1);
    const std::uint32_t yes = cta.red_true[id][slot], all = cta.red_seen[id][slot];
    red->result = red->op == BarReduction::popc ? yes : red->op == BarReduction::all ? (yes == all) : (yes > 0);
  }
}

void Runtime::named_barrier_exit() {
  if (over_ || !current_) return;
  Agent& a = *current_;
  if (ctas_[a.cta].collectives.empty()) return;  // no warp of its CTA used one (most protocols)
  auto it = ctas_[a.cta].collectives.find({kConvergenceKey + a.thread / shape_.warp_size, 0});
  if (it == ctas_[a.cta].collectives.end() || !it->second.bar.is_live()) return;  // its warp used none
  leave_count(it->second.bar);
}

}  // namespace mbcheck::sim
