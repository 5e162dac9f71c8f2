// Producer/consumer mbarrier pipelines, written once for every Platform P.
//
// ProducerConsumerPipeline<P, Stages> mirrors Modular's ProducerConsumerPipeline and
// CUTLASS's PipelineTmaAsync: 2*Stages barriers laid out full[0..S) then empty[S..2S).
//   producer: wait empty[i] (stage released) -> fill stage i, signal full[i] -> step
//   consumer: wait full[i] (stage filled)    -> use stage i -> arrive empty[i] -> step
// EpiLoadPipeline<P, Stages> is the epilogue-load instance of it (spec/kernels/residual_add.hpp;
// docs/semantics.md, "How pipelines use it"):
// 1 producer arrival per stage (the elected lane's arrive_expect_tx) and 128 consumer
// arrivals (4 store warps x 32 threads).
#pragma once

#include "spec/mbarrier.hpp"

namespace mbcheck {

// Where one side of a pipeline is: stage index, full phase number of the phase it waits for
// next, and how many stages it has stepped through. Stepping past the last stage wraps the
// index and moves to the next phase.
//
// Phases are full counts (see platform.hpp). The consumer starts at phase 0 (it waits for
// the first fill). The producer starts at phase -1, the phase before init, which is complete
// from the start: the stages begin empty. Its parity, -1 & 1 == 1, is Modular's and
// CUTLASS's "producer starts at phase 1"; the full count is what lets the host tell a wait
// for phase k from one for phase k+2.
template <int Stages>
class PipelineState {
  static_assert(Stages >= 1, "a pipeline needs at least one stage");

 public:
  MBCHECK_HD constexpr explicit PipelineState(std::int64_t start_phase) : phase_(start_phase) {}
  MBCHECK_HD static constexpr PipelineState producer_start() { return PipelineState(-1); }
  MBCHECK_HD static constexpr PipelineState consumer_start() { return PipelineState(0); }

  MBCHECK_HD constexpr std::uint32_t index() const { return index_; }
  MBCHECK_HD constexpr std::int64_t phase() const { return phase_; }
  MBCHECK_HD constexpr std::uint32_t parity() const { return static_cast<std::uint32_t>(phase_ & 1); }
  MBCHECK_HD constexpr std::uint64_t count() const { return count_; }

  MBCHECK_HD constexpr PipelineState& operator++() {
    ++count_;
    if (++index_ == static_cast<std::uint32_t>(Stages)) {
      index_ = 0;
      ++phase_;
    }
    return *this;
  }

 private:
  std::uint32_t index_ = 0;
  std::int64_t phase_;
  std::uint64_t count_ = 0;
};

// CUTLASS's PipelineState: a stage index and a phase BIT, flipped when the index wraps.
template <int Stages>
class PipelineStateBit {
 public:
  MBCHECK_HD constexpr explicit PipelineStateBit(std::uint32_t phase_bit) : phase_(phase_bit) {}
  MBCHECK_HD constexpr std::uint32_t index() const { return index_; }
  MBCHECK_HD constexpr std::uint32_t phase() const { return phase_; }
  MBCHECK_HD constexpr PipelineStateBit& operator++() {
    if (++index_ == static_cast<std::uint32_t>(Stages)) {
      index_ = 0;
      phase_ ^= 1u;
    }
    return *this;
  }
  MBCHECK_HD constexpr void advance(std::uint32_t n) {
    for (std::uint32_t i = 0; i < n; ++i) ++*this;
  }

 private:
  std::uint32_t index_ = 0;
  std::uint32_t phase_;
};

template <class P, int Stages>
class ProducerConsumerPipeline {
 public:
  using Barrier = typename P::Barrier;
  static constexpr int kStages = Stages;
  static constexpr int kNumBarriers = 2 * Stages;

  // `barriers` points to 2*Stages barriers in shared memory. The start phases are the
  // protocol's (-1 and 0); other values exist to study what goes wrong without them.
  MBCHECK_HD explicit ProducerConsumerPipeline(Barrier* barriers, std::int64_t producer_start_phase = -1,
                                               std::int64_t consumer_start_phase = 0)
      : bars_(barriers), producer_(producer_start_phase), consumer_(consumer_start_phase) {}

  // Called by one thread; the others must sync_threads() before using the pipeline.
  MBCHECK_HD void init_barriers(std::uint32_t producer_arv_count, std::uint32_t consumer_arv_count) const {
    for (int i = 0; i < Stages; ++i) {
      P::label(bars_[i], "full", i);
      P::label(bars_[Stages + i], "empty", i);
      full(i).init(producer_arv_count);
      empty(i).init(consumer_arv_count);
    }
  }

  MBCHECK_HD Mbarrier<P> full(std::uint32_t stage) const { return Mbarrier<P>(bars_[stage]); }
  MBCHECK_HD Mbarrier<P> empty(std::uint32_t stage) const { return Mbarrier<P>(bars_[Stages + stage]); }

  // --- producer side -------------------------------------------------------------------
  MBCHECK_HD void wait_consumer() const { empty(producer_.index()).wait(producer_.phase()); }
  MBCHECK_HD Mbarrier<P> producer_mbar() const { return full(producer_.index()); }
  MBCHECK_HD std::uint32_t producer_stage() const { return producer_.index(); }
  MBCHECK_HD void producer_step() { ++producer_; }
  MBCHECK_HD const PipelineState<Stages>& producer_state() const { return producer_; }

  // --- consumer side -------------------------------------------------------------------
  MBCHECK_HD void wait_producer() const { full(consumer_.index()).wait(consumer_.phase()); }
  MBCHECK_HD Mbarrier<P> consumer_mbar() const { return empty(consumer_.index()); }
  MBCHECK_HD std::uint32_t consumer_stage() const { return consumer_.index(); }
  MBCHECK_HD void consumer_release() const { consumer_mbar().arrive(); }
  MBCHECK_HD void consumer_step() { ++consumer_; }
  MBCHECK_HD const PipelineState<Stages>& consumer_state() const { return consumer_; }

  // --- scoped contexts (Mojo's `with pipeline.produce() as stage`) ----------------------
  // Destructors that perform barrier operations are noexcept(false): on the host a barrier
  // operation is a scheduling point, and ending an execution unwinds the thread from there.
  // Waits for the stage to be released on construction; steps on destruction. The producer
  // signals full[stage] itself (arrive_expect_tx + TMA complete_tx).
  class ProduceContext {
   public:
    MBCHECK_HD explicit ProduceContext(ProducerConsumerPipeline& p) : p_(p) { p_.wait_consumer(); }
    MBCHECK_HD ~ProduceContext() noexcept(false) { p_.producer_step(); }
    ProduceContext(const ProduceContext&) = delete;
    ProduceContext& operator=(const ProduceContext&) = delete;
    MBCHECK_HD std::uint32_t index() const { return p_.producer_stage(); }
    MBCHECK_HD Mbarrier<P> mbar() const { return p_.producer_mbar(); }

   private:
    ProducerConsumerPipeline& p_;
  };

  // Waits for the stage to be filled; on destruction arrives on empty[stage] and steps.
  class ConsumeContext {
   public:
    MBCHECK_HD explicit ConsumeContext(ProducerConsumerPipeline& p) : p_(p) { p_.wait_producer(); }
    MBCHECK_HD ~ConsumeContext() noexcept(false) {
      p_.consumer_release();
      p_.consumer_step();
    }
    ConsumeContext(const ConsumeContext&) = delete;
    ConsumeContext& operator=(const ConsumeContext&) = delete;
    MBCHECK_HD std::uint32_t index() const { return p_.consumer_stage(); }

   private:
    ProducerConsumerPipeline& p_;
  };

  // Waits for the stage to be filled; on destruction only steps: the caller signals
  // empty[stage] itself through mbar() (lane-guarded signalling).
  class ExplicitConsumeContext {
   public:
    MBCHECK_HD explicit ExplicitConsumeContext(ProducerConsumerPipeline& p) : p_(p) { p_.wait_producer(); }
    MBCHECK_HD ~ExplicitConsumeContext() { p_.consumer_step(); }
    ExplicitConsumeContext(const ExplicitConsumeContext&) = delete;
    ExplicitConsumeContext& operator=(const ExplicitConsumeContext&) = delete;
    MBCHECK_HD std::uint32_t index() const { return p_.consumer_stage(); }
    MBCHECK_HD Mbarrier<P> mbar() const { return p_.consumer_mbar(); }

   private:
    ProducerConsumerPipeline& p_;
  };

  MBCHECK_HD ProduceContext produce() { return ProduceContext(*this); }
  MBCHECK_HD ConsumeContext consume() { return ConsumeContext(*this); }
  MBCHECK_HD ExplicitConsumeContext consume_explicit() { return ExplicitConsumeContext(*this); }

  // --- handles that must be released (the non-scoped form) ------------------------------
  class ProducerStage {
   public:
    MBCHECK_HD explicit ProducerStage(ProducerConsumerPipeline& p) : p_(&p) { p_->wait_consumer(); }
    MBCHECK_HD ~ProducerStage() noexcept(false) {
      P::check(p_ == nullptr, "ProducerStage destroyed without release()");
    }
    ProducerStage(const ProducerStage&) = delete;
    ProducerStage& operator=(const ProducerStage&) = delete;
    MBCHECK_HD std::uint32_t index() const { return p_->producer_stage(); }
    MBCHECK_HD Mbarrier<P> mbar() const { return p_->producer_mbar(); }
    MBCHECK_HD void release() {
      p_->producer_step();
      p_ = nullptr;
    }

   private:
    ProducerConsumerPipeline* p_;
  };

  class ConsumerStage {
   public:
    MBCHECK_HD explicit ConsumerStage(ProducerConsumerPipeline& p) : p_(&p) { p_->wait_producer(); }
    MBCHECK_HD ~ConsumerStage() noexcept(false) {
      P::check(p_ == nullptr, "ConsumerStage destroyed without release()");
    }
    ConsumerStage(const ConsumerStage&) = delete;
    ConsumerStage& operator=(const ConsumerStage&) = delete;
    MBCHECK_HD std::uint32_t index() const { return p_->consumer_stage(); }
    MBCHECK_HD Mbarrier<P> mbar() const { return p_->consumer_mbar(); }
    MBCHECK_HD void release() {
      p_->consumer_release();
      p_->consumer_step();
      p_ = nullptr;
    }

   private:
    ProducerConsumerPipeline* p_;
  };

  MBCHECK_HD ProducerStage acquire_producer() { return ProducerStage(*this); }
  MBCHECK_HD ConsumerStage acquire_consumer() { return ConsumerStage(*this); }

 private:
  Barrier* bars_;
  PipelineState<Stages> producer_;
  PipelineState<Stages> consumer_;
};

// Epilogue-load warp -> epilogue-store warps (residual add D = accum + beta * C).
template <class P, int Stages>
class EpiLoadPipeline {
 public:
  using Pipeline = ProducerConsumerPipeline<P, Stages>;
  static constexpr int kNumBarriers = Pipeline::kNumBarriers;

  MBCHECK_HD explicit EpiLoadPipeline(typename P::Barrier* barriers, std::int64_t producer_start_phase = -1,
                                      std::int64_t consumer_start_phase = 0)
      : pipeline(barriers, producer_start_phase, consumer_start_phase) {}

  MBCHECK_HD void init_barriers(std::uint32_t producer_arv_count = 1, std::uint32_t consumer_arv_count = 128) const {
    pipeline.init_barriers(producer_arv_count, consumer_arv_count);
  }

  MBCHECK_HD typename Pipeline::ProduceContext produce() { return pipeline.produce(); }
  MBCHECK_HD typename Pipeline::ProducerStage acquire_producer() { return pipeline.acquire_producer(); }
  MBCHECK_HD void wait_consumer() const { pipeline.wait_consumer(); }
  MBCHECK_HD Mbarrier<P> producer_mbar() const { return pipeline.producer_mbar(); }
  MBCHECK_HD void producer_step() { pipeline.producer_step(); }

  MBCHECK_HD typename Pipeline::ConsumeContext consume() { return pipeline.consume(); }
  MBCHECK_HD typename Pipeline::ExplicitConsumeContext consume_explicit() { return pipeline.consume_explicit(); }
  MBCHECK_HD typename Pipeline::ConsumerStage acquire_consumer() { return pipeline.acquire_consumer(); }
  MBCHECK_HD void wait_producer() const { pipeline.wait_producer(); }
  MBCHECK_HD std::uint32_t consumer_stage() const { return pipeline.consumer_stage(); }
  MBCHECK_HD void consumer_step() { pipeline.consumer_step(); }

  Pipeline pipeline;
};

}  // namespace mbcheck
