// Spin-loop recognition for polls (inlined into Runtime::test_wait, barrier_ops.cpp) (docs/model.md, "Spin-loop
// recognition"): a poll that comes back to a call site of its loop, on the same barrier and phase, with nothing stored
// or announced in between but failed polls and a few atomic loads, is a re-poll of that loop; from exactly the state
// the earlier poll there was made from, it is a spin iteration, and waits for the phase (an await) instead of being
// explored iteration by iteration. A loop may poll at several call sites (a back-off loop: try_wait, then after some
// rounds a nanosleep and a test_wait): the thread keeps its loop's failed polls one per site, and the iteration is what
// came since the poll at this one's site.
#pragma once

#include <algorithm>

#include "sim/runtime/runtime.hpp"

namespace mbcheck::sim {

// Before the poll's scheduling point: whether it repeats one of its loop's polls, and so
// waits (op.await) or counts as a back-off round (op.backoff).
[[gnu::always_inline]] inline void Runtime::classify_poll(Agent& self, const MbarrierState& bar, std::int64_t awaited,
                                                          OpKind kind, Op& op) {
  const bool captured = !self.snapshot.empty();
  const bool in_loop = captured && self.last_poll_failed && !self.stored_since_poll && self.poll_bar == &bar &&
                       self.poll_phase == awaited && self.polls_in_loop > 0;
  self.poll_repeats = ~0u;
  if (in_loop) {
    for (std::uint32_t i = 0; i < self.polls_in_loop; ++i) {
      const Agent::PollSeen& p = self.loop_polls[i];
      if (p.kind == kind && self.site.same_place(p.site)) {
        self.poll_repeats = i;
        break;
      }
    }
  } else {
    self.polls_in_loop = 0;
    self.backoff_polls = 0;
  }
  if (self.poll_repeats == ~0u) {
    flush_failed_poll(false);
    self.await_reads.clear();
    return;
  }
  const Agent::PollSeen& earlier = self.loop_polls[self.poll_repeats];
  const bool same_state = self.snapshot == earlier.state;
  if (!same_state) {
    ++self.backoff_polls;
    op.backoff = self.backoff_polls > kBackoffExplored;
  }
  op.await = same_state || op.backoff;
  // The failed poll just before this one is no event when this await repeats it with nothing
  // in between (a loop of one poll site and no loads): a thread that had found the phase
  // complete there would have gone on from the same state as this await does. In a loop of
  // several sites, the polls between stay events: the phase may complete between two of them,
  // and the loop then leaves at a later site, by a path of its own.
  const bool repeats_last =
      self.poll_repeats + 1 == self.polls_in_loop && self.loop_reads.size() == earlier.reads_before;
  flush_failed_poll(op.await && repeats_last);
  self.await_reads.clear();
  if (op.await) self.await_reads.assign(self.loop_reads.begin() + earlier.reads_before, self.loop_reads.end());
}

// After the poll's answer (its snapshot still taken): a failed poll joins its loop, in place of
// the one it repeated and of those before it (the loop from there on is the iteration it
// ended); a successful one ends the loop.
[[gnu::always_inline]] inline void Runtime::note_poll_answer(Agent& a, MbarrierState& bar, std::int64_t awaited,
                                                             OpKind kind, bool complete) {
  a.last_poll_failed = !complete;
  if (complete) {
    a.polls_in_loop = 0;
    a.backoff_polls = 0;
    a.loop_reads.clear();
    return;
  }
  if (!(a.poll_bar == &bar && a.poll_phase == awaited)) {  // (the phase resolved again at a re-init)
    a.polls_in_loop = 0;
    a.poll_repeats = ~0u;
  }
  const std::uint32_t drop = a.poll_repeats != ~0u ? a.poll_repeats + 1 : a.polls_in_loop == kLoopPollSitesMax ? 1 : 0;
  std::rotate(a.loop_polls.begin(), a.loop_polls.begin() + drop, a.loop_polls.begin() + a.polls_in_loop);
  a.polls_in_loop -= drop;
  // The loads before the oldest poll kept belong to no iteration any more.
  const std::size_t cut = a.polls_in_loop > 0 ? a.loop_polls[0].reads_before : a.loop_reads.size();
  if (cut > 0) {
    a.loop_reads.erase(a.loop_reads.begin(), a.loop_reads.begin() + static_cast<std::ptrdiff_t>(cut));
    for (std::uint32_t i = 0; i < a.polls_in_loop; ++i) a.loop_polls[i].reads_before -= static_cast<std::uint32_t>(cut);
  }
  if (a.loop_polls.size() <= a.polls_in_loop) a.loop_polls.emplace_back();
  Agent::PollSeen& p = a.loop_polls[a.polls_in_loop++];
  copy_site(p.site, a.site);
  p.kind = kind;
  p.state = a.snapshot;  // copied: each keeps its buffer
  p.reads_before = static_cast<std::uint32_t>(a.loop_reads.size());
  a.poll_bar = &bar;
  a.poll_phase = awaited;
  a.stored_since_poll = false;
}

}  // namespace mbcheck::sim
