// cutlass/gemm/device/gemm_universal_base.h on the host: CUTLASS 2.x's device-level GEMM base
// launches with `<<<...>>>`, which only nvcc parses. GemmUniversalAdapter names it in its
// CUTLASS 2.x branch, so it is declared here and left undefined: a CUTLASS 3 kernel through the
// adapter compiles and runs; a 2.x kernel through it fails to compile ("incomplete type
// GemmUniversalBase"). The includes are those of CUTLASS's header, which the adapter relies on.
#pragma once

#include "cutlass/cutlass.h"
#include "cutlass/numeric_types.h"
#include "cutlass/arch/arch.h"
#include "cutlass/device_kernel.h"
#include "cutlass/cuda_host_adapter.hpp"
#include "cutlass/gemm/gemm.h"
#include "cutlass/gemm/kernel/gemm_universal.h"
#include "cutlass/gemm/kernel/default_gemm_universal.h"
#include "cutlass/gemm/device/default_gemm_configuration.h"
#include "cutlass/trace.h"

namespace cutlass::gemm::device {

template <typename GemmKernel_>
class GemmUniversalBase;

}  // namespace cutlass::gemm::device
