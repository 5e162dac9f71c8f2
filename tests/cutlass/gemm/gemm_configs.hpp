// The GEMM configurations of CUTLASS's Hopper examples 48 and 49, built as the examples build
// them (collective builders, GemmUniversal, GemmUniversalAdapter), with the cluster shape a
// parameter (the examples fix 4x2x1 and 2x1x1).
#pragma once

#include "cute/tensor.hpp"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/dispatch_policy.hpp"
#include "cutlass/gemm/kernel/gemm_universal.hpp"

namespace gemm_check {

// Example 49's ExampleRunner: fp16 operands, fp32 accumulation, tile 128x128x64, alignment 8,
// the linear-combination epilogue D = alpha * acc + beta * C.
template <class MainloopSchedule, class EpilogueSchedule, class Cluster>
struct Example49Types {
  using Element = cutlass::half_t;
  static constexpr int kAlignment = 16 / sizeof(Element);
  using Tile = cute::Shape<cute::_128, cute::_128, cute::_64>;
  using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Tile, Cluster,
      cutlass::epilogue::collective::EpilogueTileAuto, float, float, Element, cutlass::layout::ColumnMajor, kAlignment,
      Element, cutlass::layout::ColumnMajor, kAlignment, EpilogueSchedule,
      cutlass::epilogue::fusion::LinearCombination<Element, float, Element, float>>::CollectiveOp;
  using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Element, cutlass::layout::RowMajor, kAlignment, Element,
      cutlass::layout::ColumnMajor, kAlignment, float, Tile, Cluster,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename Epilogue::SharedStorage))>,
      MainloopSchedule>::CollectiveOp;
  using Kernel = cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, int>, Mainloop, Epilogue,
                                                      cutlass::gemm::PersistentScheduler>;
  using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;
};
template <class MainloopSchedule, class EpilogueSchedule, class Cluster>
using Example49 = typename Example49Types<MainloopSchedule, EpilogueSchedule, Cluster>::Gemm;

// Example 48's GEMM: fp32 operands (tf32 MMA), A row-major, B, C, D column-major, tile
// 128x128x32, the builders' automatic schedules.
template <class Cluster>
struct Example48Types {
  static constexpr int kAlignment = 4;
  using Tile = cute::Shape<cute::_128, cute::_128, cute::_32>;
  using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Tile, Cluster,
      cutlass::epilogue::collective::EpilogueTileAuto, float, float, float, cutlass::layout::ColumnMajor, kAlignment,
      float, cutlass::layout::ColumnMajor, kAlignment,
      cutlass::epilogue::collective::EpilogueScheduleAuto>::CollectiveOp;
  using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, float, cutlass::layout::RowMajor, kAlignment, float,
      cutlass::layout::ColumnMajor, kAlignment, float, Tile, Cluster,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename Epilogue::SharedStorage))>,
      cutlass::gemm::collective::KernelScheduleAuto>::CollectiveOp;
  using Kernel = cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int>, Mainloop, Epilogue>;
  using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;
};
template <class Cluster>
using Example48 = typename Example48Types<Cluster>::Gemm;

}  // namespace gemm_check
