// Host helpers of the litmus tests: a zeroed device counter, and reading it back.
#pragma once

#include <cuda_runtime_api.h>

#include "device/cuda_check.cuh"

namespace mbcheck::dev {

inline unsigned int* counter() {
  unsigned int* c = nullptr;
  MBCHECK_CUDA(cudaMalloc(&c, sizeof(unsigned int)));
  MBCHECK_CUDA(cudaMemset(c, 0, sizeof(unsigned int)));
  return c;
}

inline unsigned int read_and_free(unsigned int* c) {
  unsigned int v = 0;
  MBCHECK_CUDA(cudaMemcpy(&v, c, sizeof(v), cudaMemcpyDeviceToHost));
  MBCHECK_CUDA(cudaFree(c));
  return v;
}

}  // namespace mbcheck::dev
