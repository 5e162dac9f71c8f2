// cutlass/kernel_launch.h on the host: CUTLASS launches a kernel here with `<<<...>>>` (or
// cudaLaunchKernelEx for programmatic dependent launch), which only nvcc parses. The layer's
// kernel_launch has CUTLASS's signature and runs the launch under mbcheck, as
// cudaLaunchKernelExC does for a cluster launch (launch.hpp): GemmUniversalAdapter::run and
// every other caller stay as written.
#pragma once

#include <cuda_runtime_api.h>

#include "cutlass/cutlass.h"
#include "cutlass/device_kernel.h"
#include "cutlass/trace.h"
#include "mbcheck/cutlass_host/launch.hpp"

namespace cutlass {

// A kernel's launch configuration (CUTLASS's type of this name).
struct KernelLaunchConfiguration {
  dim3 grid;
  dim3 block;
  size_t dynamic_smem;
  KernelLaunchConfiguration(dim3 grid_ = dim3(1, 1, 1), dim3 block_ = dim3(1, 1, 1), size_t dynamic_smem_ = 0)
      : grid(grid_), block(block_), dynamic_smem(dynamic_smem_) {}
};

// device_kernel<GemmKernel><<<grid, block, smem, stream>>>(params), checked on the host. A
// programmatic dependent launch is an ordinary one here: one launch runs at a time.
template <typename GemmKernel, typename Params>
Status kernel_launch(dim3 const grid_dims, dim3 const block_dims, size_t const smem_size, cudaStream_t /*stream*/,
                     const Params& kernel_params, bool /*launch_with_pdl*/) {
  ::mbcheck::cutlass_host::register_kernel(&device_kernel<GemmKernel>);
  Params copy = kernel_params;
  void* args[] = {&copy};
  const cudaError_t result = ::mbcheck::cutlass_host::launch_and_check(
      reinterpret_cast<const void*>(&device_kernel<GemmKernel>), args, grid_dims, block_dims, dim3(1, 1, 1), smem_size);
  if (result != cudaSuccess) {
    CUTLASS_TRACE_HOST("cutlass::kernel_launch: the host check failed: " << cudaGetErrorString(result));
    return Status::kErrorInternal;
  }
  return Status::kSuccess;
}

}  // namespace cutlass
