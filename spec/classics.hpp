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
    for (std::uint32_t i = n; P::atomic_load(&array[i]) != 0; --i) {
    }
  } else {
    const std::int64_t v = P::atomic_load(&array[me - 1]);
    P::atomic_store(&array[me], v + 1);
  }
}

}  // namespace mbcheck
