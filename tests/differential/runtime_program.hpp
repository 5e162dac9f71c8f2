// A DiffProgram run by the fiber runtime through the host Platform: what DPOR explores in
// the differential tests. Each thread keeps its recorded values in a local array (on its
// stack, as a device thread would keep them in registers) and publishes them at its exit.
#pragma once

#include <array>

#include "sim/host_platform.hpp"
#include "spec/mbarrier.hpp"
#include "tests/differential/diff_program.hpp"

namespace mbcheck::diff {

class RuntimeProgram final : public sim::Program {
 public:
  explicit RuntimeProgram(DiffProgram program);
  sim::LaunchShape shape() const override { return shape_; }
  void reset() override;
  void thread_main() override;
  // What the last completed execution left (registers, shared and global memory).
  Observed observed() const;

 private:
  DiffProgram program_;
  sim::LaunchShape shape_;
  std::vector<std::vector<std::int64_t>> registers_;
  std::vector<const unsigned char*> smem_;  // each CTA's shared memory in this execution
  std::array<std::int64_t, kAtomicWords> atomics_{};
  std::vector<std::int64_t> sources_;   // copy sources in global memory, per (cta, slot)
  std::vector<std::int64_t> counters_;  // spin_counter_mem's count, a word per thread (global memory)
};

}  // namespace mbcheck::diff
