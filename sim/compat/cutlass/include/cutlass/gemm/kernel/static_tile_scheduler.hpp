// cutlass/gemm/kernel/static_tile_scheduler.hpp on the host: CUTLASS's own header, whose
// persistent scheduler sets its first work tile from blockIdx and gridDim only under
// __CUDA_ARCH__ ("MSVC requires protecting use of CUDA-specific nonstandard syntax"), and asserts
// otherwise. The layer's blockIdx and gridDim are the calling thread's (prelude.hpp), so the
// header is read with __CUDA_ARCH__ set; its includes come first, without it.
#pragma once

#include "cutlass/fast_math.h"
#include "cutlass/gemm_coord.hpp"
#include "cutlass/kernel_hardware_info.hpp"
#include "cutlass/gemm/kernel/tile_scheduler_params.h"
#include "cute/layout.hpp"
#include "cute/tensor.hpp"
#include "cute/arch/cluster_sm90.hpp"
#include "cutlass/pipeline/pipeline.hpp"

#ifndef __CUDA_ARCH__
#define __CUDA_ARCH__ 900
#define MBCHECK_CUTLASS_ARCH_FOR_SCHEDULER
#endif
#include_next <cutlass/gemm/kernel/static_tile_scheduler.hpp>
#ifdef MBCHECK_CUTLASS_ARCH_FOR_SCHEDULER
#undef __CUDA_ARCH__
#undef MBCHECK_CUTLASS_ARCH_FOR_SCHEDULER
#endif
