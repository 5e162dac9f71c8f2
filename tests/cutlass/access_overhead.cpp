// What tracking plain accesses costs: one execution of a block reduction in shared memory (the
// shape of a softmax's row statistics), built twice from this file, with and without
// mbcheck_cutlass_track_accesses. Prints the steps and the best of twenty times.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "mbcheck/cutlass_host/launch.hpp"
#include "sim/check.hpp"

__global__ void row_sums_kernel(const float* in, float* out, int rows) {
  extern __shared__ float smem[];
  const unsigned t = threadIdx.x;
  for (int row = 0; row < rows; ++row) {
    smem[t] = in[(blockIdx.x * rows + row) * blockDim.x + t];
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
      if (t < s) smem[t] += smem[t + s];
      __syncthreads();
    }
    if (t == 0) out[blockIdx.x * rows + row] = smem[0];
    __syncthreads();
  }
}

int main() {
  constexpr unsigned kCtas = 2, kThreads = 128;
  int rows = 8;
  std::vector<float> host(kCtas * rows * kThreads, 1.0f);
  float *in = nullptr, *out = nullptr;
  cudaMalloc(reinterpret_cast<void**>(&in), host.size() * sizeof(float));
  cudaMalloc(reinterpret_cast<void**>(&out), kCtas * rows * sizeof(float));
  cudaMemcpy(in, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice);
  mbcheck::cutlass_host::register_kernel(row_sums_kernel);
  void* args[] = {&in, &out, &rows};
  double best = 1e9;
  mbcheck::sim::CheckResult result;
  for (int i = 0; i < 20; ++i) {
    auto program = mbcheck::cutlass_host::make_launch_program(reinterpret_cast<const void*>(row_sums_kernel), args,
                                                              dim3(kCtas), dim3(kThreads), dim3(1), kThreads * 4);
    mbcheck::sim::CheckOptions options;
    options.max_executions = 1;
    const auto start = std::chrono::steady_clock::now();
    result = mbcheck::sim::check_program(*program, options);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  const bool sums_ok = out[0] == float(kThreads) && out[kCtas * rows - 1] == float(kThreads);
  std::printf("%s: %u CTAs x %u threads, %d rows: %llu steps, verdict %s, sums %s, best of 20: %.4f s\n",
#ifdef MBCHECK_TRACKED
              "tracked",
#else
              "untracked",
#endif
              kCtas, kThreads, rows, static_cast<unsigned long long>(result.stats.transitions),
              result.counterexample ? "bug" : "none", sums_ok ? "right" : "WRONG", best);
  cudaFree(in);
  cudaFree(out);
  return sums_ok && !result.counterexample ? 0 : 1;
}
