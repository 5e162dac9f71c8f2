// cutlass/pipeline/sm90_pipeline.hpp on the host: CUTLASS's own header, with the consumer side
// of PipelineTransactionAsync (the C loads of the SM90 TMA epilogue) open to the layer's fault
// hooks (faults.hpp: c-released-before-read, wrong-c-stage). Without a fault it is CUTLASS's
// class: the derived one adds nothing else.
#pragma once

#include "mbcheck/cutlass_host/faults.hpp"

#define PipelineTransactionAsync cutlass_original_PipelineTransactionAsync
#include_next <cutlass/pipeline/sm90_pipeline.hpp>
#undef PipelineTransactionAsync

namespace cutlass {

template <int Stages_>
class PipelineTransactionAsync : public cutlass_original_PipelineTransactionAsync<Stages_> {
  using Base = cutlass_original_PipelineTransactionAsync<Stages_>;

 public:
  using Base::Base;
  using typename Base::PipelineState;

  void consumer_wait(PipelineState state, ConsumerToken token = {BarrierStatus::WaitAgain}) {
    namespace host = ::mbcheck::cutlass_host;
    PipelineState waited = state;
    const uint32_t stage = host::c_wait_stage(state.index(), Base::Stages);
    while (waited.index() != stage) ++waited;
    Base::consumer_wait(waited, token);
    if (host::c_release_early()) Base::consumer_release(state);
  }
  void consumer_release(PipelineState state) {
    if (!::mbcheck::cutlass_host::c_release_early()) Base::consumer_release(state);
  }
};

}  // namespace cutlass
