// A CUTLASS-style TMA mainloop pipeline (PipelineTmaAsync at cluster 1x1), over which one
// producer thread streams tiles of global memory through `Stages` shared-memory buffers to
// `consumers` consumer threads.
//
// Barriers: full[s] (count 1: the producer's arrive.expect_tx; the bulk copy's bytes then
// complete it) and empty[s] (count `consumers`: each consumer releases the stage).
//   producer_acquire  wait empty[s] for the phase of the previous round; a fresh barrier's
//                     phase -1 is complete from the start (CUTLASS's "producer starts at
//                     phase 1": -1 & 1 == 1), so the first pass does not block
//   producer_commit   arrive.expect_tx(tile bytes) on full[s], then the bulk copy that
//                     completes it
//   consumer_try_wait try_wait on full[s] (CUTLASS's consumer_try_wait: a token for later)
//   consumer_wait     blocking wait on full[s] unless the token says it already completed;
//                     the token is P::WaitStatus, which only this wait reads
//   consumer_release  arrive on empty[s]
// Consumer c (1-based) reads elements c-1, c-1+consumers, ... of each tile and stores the
// sum of everything it read to out[c-1] at the end: the host checks it against the inputs.
#pragma once

#include "spec/pipeline.hpp"
#include "spec/platform.hpp"

namespace mbcheck {

enum class TmaMainloopMutation : std::uint32_t {
  none = 0,
  producer_start_phase_0,        // the producer waits for phase 0 of a fresh empty barrier: deadlock
  producer_skips_empty_wait,     // a second arrive.expect_tx on a full phase still open: over-arrival
  consumer_release_before_read,  // empty[s] arrives before the reads of stage s: race
  tx_overcount,                  // expect_tx counts 16 bytes more than the copy brings: deadlock
  consumer_peeled_first,         // the consumers peel their first iteration (wait for it before
                                 // testing the count, right while there is one): with no tile
                                 // they wait for a fill that never comes: deadlock
};

struct TmaMainloopParams {
  const float* src = nullptr;  // [iterations * tile_elems], 16-byte aligned
  float* out = nullptr;        // [consumers]
  std::uint32_t consumers = 1;
  std::uint32_t iterations = 1;
  std::uint32_t tile_elems = 4;  // multiple of 4
  bool try_wait_first = false;   // consumer_try_wait before consumer_wait
  TmaMainloopMutation mutation = TmaMainloopMutation::none;
};

template <class P, int Stages>
class PipelineTmaAsync {
 public:
  using State = PipelineState<Stages>;

  MBCHECK_HD explicit PipelineTmaAsync(typename P::Barrier* barriers) : bars_(barriers) {}

  // One thread; the others sync_threads() before using the pipeline.
  MBCHECK_HD void init(std::uint32_t consumers) const {
    for (int s = 0; s < Stages; ++s) {
      P::label(bars_[s], "full", s);
      P::label(bars_[Stages + s], "empty", s);
      full(s).init(1);
      empty(s).init(consumers);
    }
  }
  MBCHECK_HD Mbarrier<P> full(std::uint32_t s) const { return Mbarrier<P>(bars_[s]); }
  MBCHECK_HD Mbarrier<P> empty(std::uint32_t s) const { return Mbarrier<P>(bars_[Stages + s]); }

  MBCHECK_HD void producer_acquire(const State& st) const { empty(st.index()).wait(st.phase()); }
  // arrive.expect_tx for `expect_bytes`, then the copy of `bytes` into `dst` that completes it.
  MBCHECK_HD void producer_commit(const State& st, void* dst, const void* src, std::uint32_t bytes,
                                  std::uint32_t expect_bytes) const {
    full(st.index()).arrive_expect_tx(expect_bytes);
    P::cp_async_bulk_global_to_shared(dst, src, bytes, full(st.index()).raw());
  }
  // CUTLASS's ConsumerToken: the try's answer, read only by consumer_wait.
  using ConsumerToken = typename P::WaitStatus;
  MBCHECK_HD ConsumerToken consumer_try_wait(const State& st) const {
    return full(st.index()).try_wait_status(st.phase());
  }
  MBCHECK_HD void consumer_wait(const State& st) const { full(st.index()).wait(st.phase()); }
  MBCHECK_HD void consumer_wait(const State& st, ConsumerToken token) const { full(st.index()).wait(token); }
  MBCHECK_HD void consumer_release(const State& st) const { empty(st.index()).arrive(); }

 private:
  typename P::Barrier* bars_;
};

template <class P, int Stages>
MBCHECK_HD std::uint32_t tma_mainloop_smem_bytes(const TmaMainloopParams& p) {
  return barrier_bytes<P>(2 * Stages) + Stages * p.tile_elems * static_cast<std::uint32_t>(sizeof(float));
}

template <class P, int Stages>
MBCHECK_HD void tma_mainloop_kernel(const TmaMainloopParams& p) {
  using M = TmaMainloopMutation;
  auto* bars = reinterpret_cast<typename P::Barrier*>(P::shared_memory());
  auto* tiles = reinterpret_cast<float*>(P::shared_memory() + barrier_bytes<P>(2 * Stages));
  const std::uint32_t bytes = p.tile_elems * static_cast<std::uint32_t>(sizeof(float));
  PipelineTmaAsync<P, Stages> pipe(bars);
  const std::uint32_t me = P::thread_idx();
  if (me == 0) pipe.init(p.consumers);
  if (me == 0)  // names for reports (host only)
    for (int s = 0; s < Stages; ++s) label_memory<P>(tiles + s * p.tile_elems, p.tile_elems, "stage", s);
  P::sync_threads();
  if (me == 0) {
    auto st =
        p.mutation == M::producer_start_phase_0 ? PipelineState<Stages>(0) : PipelineState<Stages>::producer_start();
    for (std::uint32_t k = 0; k < p.iterations; ++k, ++st) {
      if (p.mutation != M::producer_skips_empty_wait) pipe.producer_acquire(st);
      pipe.producer_commit(st, tiles + st.index() * p.tile_elems, p.src + k * p.tile_elems, bytes,
                           bytes + (p.mutation == M::tx_overcount ? 16 : 0));
    }
  } else if (me <= p.consumers) {
    auto st = PipelineState<Stages>::consumer_start();
    float sum = 0;
    const bool peeled = p.mutation == M::consumer_peeled_first;
    for (std::uint32_t k = 0; k < p.iterations || (peeled && k == 0); ++k, ++st) {
      if (p.try_wait_first)
        pipe.consumer_wait(st, pipe.consumer_try_wait(st));
      else
        pipe.consumer_wait(st);
      if (p.mutation == M::consumer_release_before_read) pipe.consumer_release(st);
      const float* tile = tiles + st.index() * p.tile_elems;
      for (std::uint32_t i = me - 1; i < p.tile_elems; i += p.consumers) sum += P::load(tile + i);
      // Read with ordinary loads, overwritten next by a bulk copy (the async proxy): PTX orders
      // the two only through a proxy fence (docs/semantics.md).
      P::fence_proxy_async_shared_cta();
      if (p.mutation != M::consumer_release_before_read) pipe.consumer_release(st);
    }
    P::store(p.out + (me - 1), sum);
  }
}

}  // namespace mbcheck
