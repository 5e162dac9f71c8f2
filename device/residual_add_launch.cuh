// The residual-add epilogue kernels (spec/kernels/residual_add.hpp on the device Platform)
// and their launch: one kernel per stage count, a persistent grid of `ctas` CTAs of
// 32 * (1 + store_warps) threads. Include from exactly one .cu file per executable (the
// watchdog variables are per translation unit: device/watchdog.cuh).
#pragma once

#include "device/cuda_check.cuh"
#include "device/platform.cuh"
#include "spec/kernels/residual_add.hpp"

namespace mbcheck::dev {

template <int Stages>
__global__ void residual_add(ResidualAddParams p) {
  residual_add_kernel<DevicePlatform, Stages>(p);
}

inline constexpr int kMaxResidualAddStages = 4;

template <int Stages>
cudaError_t launch_residual_add_stages(const ResidualAddParams& p, unsigned ctas, cudaStream_t stream) {
  const unsigned smem = residual_add_smem_bytes<DevicePlatform, Stages>(p);
  // Above 48 KiB a kernel needs an explicit opt-in; setting it every time is cheap.
  cudaError_t err =
      cudaFuncSetAttribute(residual_add<Stages>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
  if (err != cudaSuccess) return err;
  residual_add<Stages><<<ctas, 32 * (1 + p.store_warps), smem, stream>>>(p);
  return cudaGetLastError();
}

// Launches residual_add<stages> (1..4).
inline cudaError_t launch_residual_add(const ResidualAddParams& p, int stages, unsigned ctas,
                                       cudaStream_t stream = nullptr) {
  switch (stages) {
    case 1: return launch_residual_add_stages<1>(p, ctas, stream);
    case 2: return launch_residual_add_stages<2>(p, ctas, stream);
    case 3: return launch_residual_add_stages<3>(p, ctas, stream);
    case 4: return launch_residual_add_stages<4>(p, ctas, stream);
    default: return cudaErrorInvalidValue;
  }
}

// CTAs of this shape that fit on one SM at once (the persistent grid is a multiple of it).
inline int residual_add_ctas_per_sm(const ResidualAddParams& p, int stages) {
  int blocks = 0;
  const int threads = 32 * (1 + static_cast<int>(p.store_warps));
  auto query = [&](auto kernel, unsigned smem) {
    cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, smem);
  };
  switch (stages) {
    case 1: query(residual_add<1>, residual_add_smem_bytes<DevicePlatform, 1>(p)); break;
    case 2: query(residual_add<2>, residual_add_smem_bytes<DevicePlatform, 2>(p)); break;
    case 3: query(residual_add<3>, residual_add_smem_bytes<DevicePlatform, 3>(p)); break;
    case 4: query(residual_add<4>, residual_add_smem_bytes<DevicePlatform, 4>(p)); break;
    default: break;
  }
  return blocks;
}

}  // namespace mbcheck::dev
