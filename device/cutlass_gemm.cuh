// The GEMMs mbcheck checks on the host (tests/cutlass/gemm: CUTLASS examples 48 and 49 through
// GemmUniversalAdapter, unmodified), here on the GPU from the same configurations and operands
// (gemm_configs.hpp, gemm_data.hpp): D is compared with CUTLASS's host reference GEMM element for
// element and its hash printed, which the host's check prints too ("D hash"): equal hashes,
// bit-equal D. Timed with CUDA events (the launch alone, after a warm-up).
//   cutlass_gemm_ex49_cooperative ex49-cooperative-1x1 256 384 128 2
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tests/cutlass/gemm/gemm_configs.hpp"
#include "tests/cutlass/gemm/gemm_data.hpp"

namespace gemm_check {

#define GEMM_CHECK_CUDA(call)                                                                  \
  do {                                                                                         \
    cudaError_t e_ = (call);                                                                   \
    if (e_ != cudaSuccess) {                                                                   \
      std::printf("FAIL %s: %s (%s:%d)\n", #call, cudaGetErrorString(e_), __FILE__, __LINE__); \
      return 1;                                                                                \
    }                                                                                          \
  } while (0)

template <class T>
T* to_device(const std::vector<T>& host) {
  void* p = nullptr;
  if (cudaMalloc(&p, host.size() * sizeof(T)) != cudaSuccess) return nullptr;
  cudaMemcpy(p, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice);
  return static_cast<T*>(p);
}

// Runs `Gemm` at m x n x k with `sms` SMs for the persistent scheduler; 0 when D is right.
template <class Gemm>
int run_gemm(const char* name, int m, int n, int k, int sms) {
  using ElementD = typename Gemm::ElementD;
  GemmData<Gemm> data(m, n, k, 1.f, 1.f);
  auto* a = to_device(data.a);
  auto* b = to_device(data.b);
  auto* c = to_device(data.c);
  auto* d = to_device(std::vector<ElementD>(std::size_t(m) * n, ElementD(0.f)));
  if (!a || !b || !c || !d) {
    std::printf("FAIL %s: cudaMalloc\n", name);
    return 1;
  }
  const auto arguments = gemm_arguments(data, sms, a, b, c, d);
  Gemm gemm;
  if (gemm.can_implement(arguments) != cutlass::Status::kSuccess) {
    std::printf("FAIL %s: CUTLASS cannot implement %dx%dx%d\n", name, m, n, k);
    return 1;
  }
  void* workspace = nullptr;
  if (std::size_t bytes = Gemm::get_workspace_size(arguments)) GEMM_CHECK_CUDA(cudaMalloc(&workspace, bytes));
  if (gemm.initialize(arguments, workspace) != cutlass::Status::kSuccess) {
    std::printf("FAIL %s: initialize\n", name);
    return 1;
  }
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  float ms = 0;
  for (int i = 0; i < 2; ++i) {  // the second run is timed
    GEMM_CHECK_CUDA(cudaMemset(d, 0, data.reference.size() * sizeof(ElementD)));
    cudaEventRecord(start);
    if (gemm.run() != cutlass::Status::kSuccess) {
      std::printf("FAIL %s: run\n", name);
      return 1;
    }
    cudaEventRecord(stop);
    GEMM_CHECK_CUDA(cudaDeviceSynchronize());
    cudaEventElapsedTime(&ms, start, stop);
  }
  std::vector<ElementD> out(data.reference.size());
  GEMM_CHECK_CUDA(cudaMemcpy(out.data(), d, out.size() * sizeof(ElementD), cudaMemcpyDeviceToHost));
  std::size_t first = 0;
  const std::size_t wrong = data.mismatches(out, &first);
  std::printf("%s %s %dx%dx%d sms %d: D %s CUTLASS's host reference (%zu of %zu differ), D hash %#018llx, %.3f ms\n",
              wrong ? "FAIL" : "PASS", name, m, n, k, sms, wrong ? "differs from" : "equals", wrong, out.size(),
              static_cast<unsigned long long>(GemmData<Gemm>::hash(out)), ms);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  cudaFree(d);
  if (workspace) cudaFree(workspace);
  return wrong ? 1 : 0;
}

// main(): argv = name m n k sms; runs the configuration of that name (or every one with "all").
struct Config {
  const char* name;
  int (*run)(const char*, int, int, int, int);
};
inline int gemm_main(int argc, char** argv, const Config* configs, int count) {
  const std::string want = argc > 1 ? argv[1] : "all";
  const int m = argc > 2 ? std::atoi(argv[2]) : 256, n = argc > 3 ? std::atoi(argv[3]) : 384;
  const int k = argc > 4 ? std::atoi(argv[4]) : 128, sms = argc > 5 ? std::atoi(argv[5]) : 2;
  int failed = 0, ran = 0;
  for (int i = 0; i < count; ++i)
    if (want == "all" || want == configs[i].name) {
      ++ran;
      failed += configs[i].run(configs[i].name, m, n, k, sms) != 0;
    }
  if (!ran) std::printf("FAIL no configuration named %s\n", want.c_str());
  return ran && !failed ? 0 : 1;
}

}  // namespace gemm_check
