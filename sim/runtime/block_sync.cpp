// Barrier 0 over all of a CTA's threads: __syncthreads() is `bar.sync 0` (PTX: with no thread
// count "all threads in the CTA participate"), and `bar.sync 0, N` / `bar.arrive 0, N` with N
// the CTA's (warp-rounded) thread count are the same barrier, so the forms may be mixed
// (CUTLASS's NamedBarrier::arrive(0) against a __syncthreads, say). Uses of id 0 with a smaller
// count are a named barrier of their own (sim/runtime/named_barriers.cpp); mixing the two
// counts is a misuse, as for any id whose uses disagree on the count.
//
// A generation completes when every warp has arrived: its non-exited lanes all did (a lane
// arrives by waiting, or by bar.arrive and going on). An exited warp counts as arrived only for
// the count-less form (PTX, exit: "barriers waiting on all threads are checked to see if the
// exiting threads are the only threads that have not yet made it"), so `bar.sync 0, N` with a
// whole warp gone deadlocks as on the hardware, and sync_threads does not. A thread that
// arrives twice before its generation completes is a misuse (the hardware would count the warp
// twice and let the barrier go one warp early).
//
// Happens-before: every arrival (a waiter's, or bar.arrive's: a release) -> every waiter of the
// generation (RaceDetector::block_arrive / join_all). For the search, a waiter's event joins
// the events of every arrival of its generation and of the threads whose exit let it go, and
// bar.arrive depends on the completion of the generation before it (dpor.cpp).
#include <fmt/format.h>

#include <algorithm>

#include "sim/runtime/perform.hpp"

namespace mbcheck::sim {

std::uint32_t Runtime::block_thread_count() const {
  const std::uint32_t ws = shape_.warp_size;
  return (shape_.threads_per_cta + ws - 1) / ws * ws;
}

bool Runtime::block_arrived(const CtaInfo& cta, AgentId id) const { return cta.in_generation[agent_at_[id]->thread]; }

// Barrier 0 with an explicit count must not meet the other count of id 0 (named barrier).
bool Runtime::block_count_agrees(Agent& a, const char* form, std::uint32_t count) {
  CtaInfo& cta = ctas_[a.cta];
  if (!cta.named[0].is_live()) {
    cta.block_used = true;
    return true;
  }
  end(Verdict::misuse,
      fmt::format("{}: {}: barrier 0 was used with bar.sync/bar.arrive 0, {} (a named barrier of that many threads); "
                  "{} is barrier 0 over all the CTA's {} threads: uses of one id disagree on the count",
                  describe_agent(a.id), form, cta.named[0].expected, form, count),
      MisuseKind::named_barrier);
  outcome_.culprits = {a.id};
  return false;
}

void Runtime::block_sync() {
  if (over_ || !current_) return;
  if (!block_count_agrees(*current_, "sync_threads", block_thread_count())) throw Aborted{};
  if (!schedule_point(OpKind::block_sync)) return;
  record(*current_, nullptr);
  observe(current_->id, current_->op);
}

void Runtime::block_barrier(std::uint32_t count, bool sync) {
  if (over_ || !current_) return;
  Agent& a = *current_;
  if (!block_count_agrees(a, sync ? "bar.sync 0" : "bar.arrive 0", count)) throw Aborted{};
  if (sync) {
    if (!schedule_point(OpKind::block_sync_count, nullptr, count)) return;
    record(a, nullptr);
    observe(a.id, a.op);
    return;
  }
  if (!schedule_point(OpKind::block_arrive, nullptr, count)) return;
  CtaInfo& cta = ctas_[a.cta];
  if (block_arrived(cta, a.id)) {
    double_block_arrival(a);
    throw Aborted{};
  }
  if (block_red_mixes(a, false)) throw Aborted{};
  races_.block_arrive(a.id, a.cta);
  cta.block_arrivals.push_back({a.id, steps_});
  cta.in_generation[a.thread] = 1;
  record(a, nullptr);
  observe(a.id, a.op);  // before the release: the search reads the generation before this one
  release_block_if_complete(a.cta);
}

// bar.red 0 over all the threads (__syncthreads_count, __syncthreads_and/or): a waiter of
// barrier 0 whose predicate the generation's release counts. Only waiters reduce: a generation
// mixing it with sync_threads, bar.sync 0 or bar.arrive 0 is "unpredictable" (PTX ISA 9.1,
// 9.7.13.1), a misuse at the arrival that mixes them.
std::uint32_t Runtime::block_reduce(std::uint32_t count, const RedArrival& red) {
  if (over_ || !current_) return 0;
  Agent& a = *current_;
  if (!block_count_agrees(a, "bar.red 0", count)) throw Aborted{};
  ctas_[a.cta].block_pred[a.thread] = red.pred ? 1 : 0;  // read at the release (the thread waits until then)
  if (!schedule_point(OpKind::block_red, nullptr, count)) return 0;
  record(a, nullptr);
  observe(a.id, a.op);
  // The generation that released this thread is the last released: the next cannot complete
  // before this thread arrives at it.
  const CtaInfo& cta = ctas_[a.cta];
  switch (red.op) {
    case BarReduction::popc: return cta.block_red_true;
    case BarReduction::all: return cta.block_red_true == cta.block_red_all ? 1 : 0;
    case BarReduction::any: return cta.block_red_true > 0 ? 1 : 0;
  }
  return 0;
}

// Whether a waiter or arrival of barrier 0 mixes bar.red with the other forms in its generation.
bool Runtime::block_red_mixes(Agent& a, bool reduces) {
  CtaInfo& cta = ctas_[a.cta];
  const std::uint8_t kind = reduces ? 1 : 2;
  if (cta.block_red_mix == 0 || cta.block_red_mix == kind) {
    cta.block_red_mix = kind;
    return false;
  }
  end(Verdict::misuse,
      fmt::format("{}: {} in a generation of barrier 0 that has {} arrivals: bar.red \"should not be intermixed with "
                  "barrier{{.cta}}.sync or barrier{{.cta}}.arrive using the same active barrier\" (PTX: unpredictable)",
                  describe_agent(a.id), describe_op(a), reduces ? "sync_threads/bar.sync/bar.arrive" : "bar.red"),
      MisuseKind::named_barrier);
  outcome_.culprits = {a.id};
  return true;
}

void Runtime::double_block_arrival(Agent& a) {
  end(Verdict::misuse,
      fmt::format("{}: {} arrives at barrier 0 a second time before its generation completed (the hardware counts "
                  "its warp twice and lets the barrier go early)",
                  describe_agent(a.id), describe_op(a)),
      MisuseKind::named_barrier);
  outcome_.culprits = {a.id};
}

// A waiter reaches barrier 0 (from announce): it arrives and blocks until its generation completes.
void Runtime::block_wait_arrive(Agent& a) {
  CtaInfo& cta = ctas_[a.cta];
  if (block_arrived(cta, a.id)) return double_block_arrival(a);
  if (block_red_mixes(a, a.op.kind == OpKind::block_red)) return;
  cta.at_sync.push_back(a.id);
  cta.in_generation[a.thread] = 1;
  if (a.op.kind == OpKind::block_sync) cta.all_threads_form = true;
  a.state = Agent::State::blocked;
  release_block_if_complete(a.cta);
}

bool Runtime::block_generation_complete(std::uint32_t cta_index) const {
  const CtaInfo& cta = ctas_[cta_index];
  if (cta.at_sync.empty() && cta.block_arrivals.empty()) return false;
  std::uint32_t live_arrived = static_cast<std::uint32_t>(cta.at_sync.size());
  for (const BlockArrival& b : cta.block_arrivals)
    if (agent_at_[b.agent]->state != Agent::State::finished) ++live_arrived;
  if (live_arrived != cta.live_threads) return false;
  if (cta.all_threads_form) return true;
  // bar.sync / bar.arrive 0, N only: a warp with no live lane counts only if it arrived first.
  const std::uint32_t ws = shape_.warp_size;
  for (std::uint32_t first = 0; first < shape_.threads_per_cta; first += ws) {
    if (live_lanes(cta_index, first / ws, nullptr) > 0) continue;
    bool arrived = false;
    for (std::uint32_t t = first; t < std::min(first + ws, shape_.threads_per_cta) && !arrived; ++t)
      arrived = cta.in_generation[t] != 0;
    if (!arrived) return false;
  }
  return true;
}

void Runtime::release_block_if_complete(std::uint32_t cta_index) {
  if (!block_generation_complete(cta_index)) return;
  CtaInfo& cta = ctas_[cta_index];
  cta.release_step = steps_;
  if (cta.block_red_mix == 1) {  // a bar.red generation: its reduction, read by each waiter as it resumes
    cta.block_red_true = cta.block_red_all = 0;
    for (AgentId id : cta.at_sync) {
      cta.block_red_true += static_cast<std::uint32_t>(cta.block_pred[agent_at_[id]->thread]);
      ++cta.block_red_all;
    }
  }
  cta.block_red_mix = 0;
  races_.join_all(cta.at_sync, cta_index);
  for (AgentId id : cta.at_sync) {
    add_enabled(*agent_at_[id]);
    cta.in_generation[agent_at_[id]->thread] = 0;
  }
  for (const BlockArrival& b : cta.block_arrivals) cta.in_generation[agent_at_[b.agent]->thread] = 0;
  cta.released_waiters.swap(cta.at_sync);
  cta.at_sync.clear();
  cta.released_arrivals.swap(cta.block_arrivals);
  cta.block_arrivals.clear();
  cta.all_threads_form = false;
}

}  // namespace mbcheck::sim
