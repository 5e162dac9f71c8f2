// The classic DPOR benchmarks (Flanagan & Godefroid; Abdulla et al.), written over the
// Platform's plain atomics. Their optimal execution counts are known, which makes them the
// yardstick for the explorer's reduction.
#pragma once

#include "spec/platform.hpp"

namespace mbcheck {

// readers(N): thread 0 writes x; threads 1..N read it. 2^N equivalence classes (each reader
// before or after the write).
template <class P>
MBCHECK_HD void readers_thread(std::int64_t* x) {
  if (P::thread_idx() == 0)
    P::atomic_store(x, 1);
  else
    (void)P::atomic_load(x);
}

// lastzero(N): array[0..N] starts at 0. Thread 0 scans from the top for the last zero;
// thread j (1..N) sets array[j] = array[j-1] + 1. (N+3) * 2^(N-2) classes.
template <class P>
MBCHECK_HD void lastzero_thread(std::int64_t* array, std::uint32_t n) {
  const std::uint32_t me = P::thread_idx();
  if (me == 0) {
    for (std::uint32_t i = n; P::atomic_load(&array[i]) != 0; --i) {}
  } else {
    const std::int64_t v = P::atomic_load(&array[me - 1]);
    P::atomic_store(&array[me], v + 1);
  }
}

// ordering-bug(N): a depth-1 bug that a uniform random walk rarely hits. Thread 1 does N
// steps of its own work, then reads a flag that thread 0 sets in its one step; the bug is
// thread 1 reading it unset, i.e. running all N+1 of its steps before thread 0's one: a
// random walk over 2 threads does so with probability 2^-(N+1), PCT with depth 1 with
// probability 1/2 (thread 1 drawn the higher priority).
template <class P>
MBCHECK_HD void ordering_bug_thread(std::int64_t* flag, std::int64_t* work, std::uint32_t n) {
  if (P::thread_idx() == 0) {
    P::atomic_store(flag, 1);
  } else {
    for (std::uint32_t i = 0; i < n; ++i) P::atomic_fetch_add(work, 1);
    P::check(P::atomic_load(flag) == 1, "thread 1 read the flag before thread 0 set it");
  }
}

}  // namespace mbcheck
