// What the tests of small hand-written protocols share: barriers and 64-bit words in the
// CTA's shared memory, and a search that runs to the end rather than the first bug.
#pragma once

#include <cstdint>

#include "sim/explore/explore.hpp"
#include "sim/host_platform.hpp"
#include "spec/mbarrier.hpp"

namespace mbcheck::sim::test {

using Bar = Mbarrier<HostPlatform>;

// Barrier i at the start of shared memory; word i from byte 1024 on.
inline Bar smem_bar(int i) { return Bar(reinterpret_cast<HostPlatform::Barrier*>(HostPlatform::shared_memory())[i]); }
inline std::int64_t* smem_word(int i) {
  return reinterpret_cast<std::int64_t*>(HostPlatform::shared_memory() + 1024) + i;
}

// One CTA of n threads with room for the barriers and words above.
inline LaunchShape threads(std::uint32_t n) {
  LaunchShape shape;
  shape.threads_per_cta = n;
  shape.smem_bytes = 2048;
  return shape;
}

inline ExploreResult explore_all(Program& prog) {
  ExploreOptions o;
  o.stop_at_first_bug = false;
  return explore(prog, o);
}

}  // namespace mbcheck::sim::test
