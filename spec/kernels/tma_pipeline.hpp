// A CUTLASS-style TMA mainloop pipeline, reduced to its synchronization: thread 0 produces
// (waits on the stage's empty barrier for the previous round, starting with phase -1 on a
// fresh barrier, then arrive.expect_tx on full and one bulk copy that completes it), threads
// 1..consumers consume (wait on full, optionally try_wait first and block only if that failed,
// as CUTLASS's consumer_try_wait / consumer_wait do, then arrive on empty).
// Shared memory: `2 * stages` barriers, then one 16-byte slot per stage at offset 1024.
#pragma once

#include "spec/mbarrier.hpp"

namespace mbcheck {

template <class P>
MBCHECK_HD void tma_pipeline(std::uint32_t stages, std::uint32_t consumers, std::uint32_t iterations,
                             bool try_wait_first, const void* gmem_src) {
  auto* bars = reinterpret_cast<typename P::Barrier*>(P::shared_memory());
  auto full = [&](std::uint32_t s) { return Mbarrier<P>(bars[s]); };
  auto empty = [&](std::uint32_t s) { return Mbarrier<P>(bars[stages + s]); };
  if (P::thread_idx() == 0)
    for (std::uint32_t s = 0; s < stages; ++s) full(s).init(1), empty(s).init(consumers);
  P::sync_threads();
  for (std::uint32_t k = 0; k < iterations; ++k) {
    const std::uint32_t s = k % stages;
    const std::int64_t round = k / stages;
    if (P::thread_idx() == 0) {
      empty(s).wait(round - 1);
      full(s).arrive_expect_tx(16);
      P::cp_async_bulk_global_to_shared(P::shared_memory() + 1024 + 16 * s, gmem_src, 16, full(s).raw());
    } else if (P::thread_idx() <= consumers) {
      if (!try_wait_first || !full(s).try_wait(round)) full(s).wait(round);
      empty(s).arrive();
    }
  }
}

}  // namespace mbcheck
