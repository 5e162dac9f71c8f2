// Named barriers (bar.sync / bar.arrive / bar.red with an id and a thread count) in the fiber
// runtime, counted per warp as the hardware counts them.
//
// PTX: a bar instruction "causes executing thread to wait for all non-exited threads from its
// warp and marks warps' arrival at barrier". So each use is, per warp:
//  1. a rendezvous of the warp's non-exited lanes (its convergence counter: an mbarrier-like
//     counter of the warp's live lanes; a lane that exits while its warp uses named barriers
//     leaves the count as a step of its own). It orders no memory: bar.arrive is a release
//     only ("guarantees that when the barrier completes, prior memory accesses requested by
//     this thread are performed relative to all threads participating"; PTX ISA 9.1,
//     9.7.13.1), so no lane acquires another's past here. bar.* is barrier.*.aligned: the
//     lanes of a round must be at the same instruction (id, count, kind and call site),
//     else a `divergent` misuse;
//  2. the warp's arrival, `warp_size` threads at once, made by its lowest live lane after the
//     rendezvous: it releases every live lane's past (each lane's own clock, still where it
//     arrived), with the generation it arrived in passed to the other lanes by a second round;
//  3. for bar.sync and bar.red, a wait (acquire) for that generation to complete.
// bar.red "should not be intermixed with barrier{.cta}.sync or barrier{.cta}.arrive using the
// same active barrier. Execution in this case is unpredictable": a generation with both is a
// misuse. bar.red 0 over all the CTA's threads is barrier 0 (__syncthreads_count), reduced
// where barrier 0 is (block_sync.cpp).
// The named barrier itself is a counter of `count` threads per CTA and id, an mbarrier
// without the missing-wait rule; its first use fixes the count. So a warp whose upper lanes
// exited still counts as a whole warp (measured on the H200, device/RESULTS.md), and a lane
// busy elsewhere holds up its warp's arrival, as on the hardware.
#include <fmt/format.h>

#include "sim/runtime/perform.hpp"

namespace mbcheck::sim {

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
  if (id == 0 && count == block_thread_count()) {  // __syncthreads' barrier
    if (red)
      red->result = block_reduce(count, *red);
    else
      block_barrier(count, sync);
    return;
  }
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
  Rendezvous& conv =
      cta.collectives[runtime_records::collective_key(runtime_records::CollectiveKind::bar_convergence, warp)];
  if (!conv.bar.is_live()) {
    BarrierInfo& ci = info(conv.bar);
    conv.bar.init(live_lanes(a.cta, warp, nullptr));
    conv.bar.named = true;
    races_.barrier_init(conv.bar.id, a.id, /*hidden=*/true);
    ci.collective = fmt::format("warp {} at a bar instruction", warp);
    ci.name = shape_.ctas > 1 ? fmt::format("cta{}.{}", a.cta, ci.collective) : ci.collective;
  }
  const std::int64_t round_one = conv.bar.phase;
  const Rendezvous::Tag tag{id, count, static_cast<std::uint32_t>(red ? 2 : sync ? 1 : 0), a.site};
  if (conv.participants(round_one, ~0u) == 0) {
    conv.tag[round_one & 1] = tag;  // the round's first lane
  } else if (const Rendezvous::Tag& other = conv.tag[round_one & 1]; !other.same(tag)) {
    end(Verdict::misuse,
        fmt::format("{}: {} {}, {} at {}:{} while another lane of warp {} is at {} {}, {} at {}:{}: bar.* is "
                    "barrier.*.aligned, every lane of a warp executes the same one (PTX: undefined)",
                    describe_agent(a.id), op, id, count, tag.site.file, tag.site.line, warp,
                    other.kind == 2   ? "bar.red"
                    : other.kind == 1 ? "bar.sync"
                                      : "bar.arrive",
                    other.id, other.count, other.site.file, other.site.line),
        MisuseKind::divergent);
    outcome_.culprits = {a.id};
    throw Aborted{};
  }
  conv.last_round[lane % 32] = round_one;
  conv.values[0][lane % 32] = red && red->pred ? 1 : 0;  // read by the arriving lane in round one's wake
  const MbarrierToken first = barrier_op(OpKind::arrive_relaxed, conv.bar, 1);
  if (over_) return;
  races_.converge_knowledge(a.id, conv.bar.id, first.phase, true);  // phase facts, no memory order
  wait(conv.bar, first.phase, Acquire::none);
  if (over_) return;
  races_.converge_knowledge(a.id, conv.bar.id, first.phase, false);
  // 2. the lowest live lane makes the warp's arrival and tells the others its generation
  std::uint32_t lowest = 0;
  const std::uint32_t live = live_lanes(a.cta, warp, &lowest);
  const auto round_two = static_cast<std::size_t>((first.phase + 1) & 1);
  if (a.thread == lowest) {
    const MbarrierToken warp_arrival = barrier_op(OpKind::arrive, bar, ws);
    if (over_) return;
    const auto slot = static_cast<std::size_t>(warp_arrival.phase & 1);
    // The other live lanes' pasts (each waits in round two, where it arrived): released too.
    for (std::uint32_t l = 0; l < ws && l < 32; ++l) {
      const std::uint32_t t = warp * ws + l;
      if (t >= shape_.threads_per_cta || t == a.thread) continue;
      const Agent& lane_agent = *agent_at_[a.cta * shape_.threads_per_cta + t];
      if (lane_agent.state != Agent::State::finished) races_.release(lane_agent.id, bar.id, warp_arrival.phase);
    }
    // A generation of bar.red arrivals only, or of bar.sync / bar.arrive arrivals only.
    const std::uint8_t kind = red ? 1 : 2;
    if (warp_arrival.pending_before == bar.expected) {
      cta.red_mix[id][slot] = kind;
    } else if (cta.red_mix[id][slot] != kind) {
      end(Verdict::misuse,
          fmt::format("{}: {} {}, {}: barrier {}'s generation {} has {} arrivals already: bar.red \"should not be "
                      "intermixed with barrier{{.cta}}.sync or barrier{{.cta}}.arrive using the same active barrier\" "
                      "(PTX: unpredictable)",
                      describe_agent(a.id), op, id, count, id, warp_arrival.phase,
                      red ? "bar.sync/bar.arrive" : "bar.red"),
          MisuseKind::named_barrier);
      outcome_.culprits = {a.id};
      throw Aborted{};
    }
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
  const MbarrierToken second = barrier_op(OpKind::arrive_relaxed, conv.bar, 1);
  if (over_) return;
  wait(conv.bar, second.phase, Acquire::none);
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

}  // namespace mbcheck::sim
