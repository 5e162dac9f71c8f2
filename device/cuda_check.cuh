// Small helpers shared by the device test, runner and benchmark executables: they depend on
// the CUDA runtime and the repo's headers only (the GPU machine has no Boost/Catch2/fmt).
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

// Every CUDA call is checked: a failed call ends the program with the call and the error.
#define MBCHECK_CUDA(call)                                                                                         \
  do {                                                                                                             \
    const cudaError_t mbcheck_err_ = (call);                                                                       \
    if (mbcheck_err_ != cudaSuccess) {                                                                             \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(mbcheck_err_)); \
      std::exit(2);                                                                                                \
    }                                                                                                              \
  } while (0)

namespace mbcheck::dev {

// SplitMix64: a fast seeded generator for test inputs (host side).
struct SplitMix64 {
  unsigned long long state;
  unsigned long long next() {
    unsigned long long z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // A float in [-4, 4) with 24 random mantissa bits, so fmaf rounding is exercised.
  float real() { return static_cast<float>(static_cast<long long>(next() >> 40) - (1ll << 23)) / (1 << 21); }
};

}  // namespace mbcheck::dev
