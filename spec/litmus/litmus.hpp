// Litmus tests for mbarrier semantics: small programs of 1-3 threads over a few barriers,
// each with an observable outcome (values of test_wait, pending_count, data seen), written
// once as templates over the Platform P. The host explores every schedule of each and
// collects the set of outcomes the emulator allows; the GPU runs each thousands of times
// with injected delays and histograms what it observes. Conformance: observed ⊆ allowed.
//
// A test is a struct with
//   kName, kThreads (litmus threads), kResults (int32 results), kCopyPieces (how many pieces
//   the host lands each bulk copy in), kHostFlagsMisuse (the test deliberately breaks a PTX
//   rule or hits unspecified behaviour: the emulator reports it, the GPU result is recorded),
//   init(env) run by thread 0 before a block sync, and run(env) run by every litmus thread.
// Litmus thread t is lane 0 of warp t on the device (its own warp, so threads are scheduled
// independently); on the host every thread is its own warp.
#pragma once

#include "spec/mbarrier.hpp"

namespace mbcheck::litmus {

inline constexpr std::uint32_t kMaxBarriers = 4;
inline constexpr std::uint32_t kScratchBytes = 256;  // shared memory for bulk-copy targets
inline constexpr std::uint32_t kMaxResults = 8;
inline constexpr std::uint32_t kMaxThreads = 4;

// Shared memory a litmus CTA needs: the barriers, then the 128-byte aligned scratch.
template <class P>
MBCHECK_HD constexpr std::uint32_t smem_bytes() {
  return barrier_bytes<P>(kMaxBarriers) + kScratchBytes;
}

// The host's delay: the explorer varies the schedule itself.
struct NoDelay {
  MBCHECK_HD void operator()(int /*point*/) const {}
};

// Everything one litmus thread sees. `Delay` is called at numbered points between
// operations: the device spins a per-iteration pseudo-random number of cycles there.
template <class P, class Delay>
struct Env {
  using Platform = P;
  typename P::Barrier* bars;  // kMaxBarriers barriers in shared memory
  unsigned char* scratch;     // kScratchBytes of shared memory, 128-byte aligned
  const unsigned char* src;   // kScratchBytes of global memory, 16-byte aligned, src[i] == i
  std::int32_t* out;          // kMaxResults results of this instance
  std::uint32_t tid;          // litmus thread index
  Delay delay;

  MBCHECK_HD Mbarrier<P> bar(int i) const { return Mbarrier<P>(bars[i]); }
  MBCHECK_HD void result(int i, bool v) const { P::store(out + i, static_cast<std::int32_t>(v ? 1 : 0)); }
  MBCHECK_HD void result(int i, std::uint32_t v) const { P::store(out + i, static_cast<std::int32_t>(v)); }
  // Whether the first `bytes` of scratch hold src's bytes (a bulk copy landed whole).
  MBCHECK_HD bool scratch_matches_src(std::uint32_t bytes) const {
    bool same = true;
    for (std::uint32_t i = 0; i < bytes; ++i) same = same && P::load(scratch + i) == P::load(src + i);
    return same;
  }
};

template <class P, class Delay>
MBCHECK_HD Env<P, Delay> make_env(unsigned char* smem, const unsigned char* src, std::int32_t* out, std::uint32_t tid,
                                  Delay delay) {
  return Env<P, Delay>{
      reinterpret_cast<typename P::Barrier*>(smem), smem + barrier_bytes<P>(kMaxBarriers), src, out, tid, delay};
}

// One instance of Test: thread 0 initialises the barriers, the block syncs, then each
// litmus thread runs. Every thread of the CTA calls this; `is_litmus_thread` says whether
// the caller is one of Test's threads (the rest only take part in the block sync).
template <class Test, class P, class Delay>
MBCHECK_HD void run_instance(const Env<P, Delay>& env, bool is_litmus_thread) {
  if (P::thread_idx() == 0) Test::init(env);
  P::sync_threads();
  if (is_litmus_thread) Test::run(env);
}

template <class... Tests>
struct TestList {};

}  // namespace mbcheck::litmus
