// The protocol of this example, written once over the Platform P: thread 0 hands `rounds`
// values to the consumers through one slot, guarded by two barriers.
#pragma once

#include "spec/mbarrier.hpp"

template <class P>
void handoff(int* slot, int* sums, int rounds, unsigned consumers_expected) {
  auto* bars = reinterpret_cast<typename P::Barrier*>(P::shared_memory());
  mbcheck::Mbarrier<P> full(bars[0]), empty(bars[1]);
  if (P::thread_idx() == 0) full.init(1), empty.init(consumers_expected);
  P::sync_threads();
  for (int r = 0; r < rounds; ++r) {
    if (P::thread_idx() == 0) {
      empty.wait(r - 1);  // phase -1: the slot starts empty
      P::store(slot, r);
      full.arrive();
    } else {
      full.wait(r);
      sums[P::thread_idx()] += P::load(slot);
      empty.arrive();
    }
  }
}
