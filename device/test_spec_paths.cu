// Launches the kernels of spec_compile_check.cu that residual_add does not cover and checks
// what they computed: pipeline_paths (produce, acquire_producer, the manual producer calls,
// consume, acquire_consumer, consume_explicit, the manual consumer calls; a kernel's own
// P::check traps on a wrong item) and mbarrier_ops (every Mbarrier member, with the values
// the emulator gives for the same sequence). Exit status 0 when everything matched.
#include "device/cuda_check.cuh"
#include "device/spec_compile_check.cu"

using namespace mbcheck;
using namespace mbcheck::dev::compile_check;

namespace {

template <int Stages>
int run_pipeline_paths(std::uint32_t items, std::uint32_t consumer_warps) {
  const std::uint32_t consumers = consumer_warps * 32;
  std::uint32_t* sums = nullptr;
  MBCHECK_CUDA(cudaMalloc(&sums, consumers * sizeof(std::uint32_t)));
  MBCHECK_CUDA(cudaMemset(sums, 0xff, consumers * sizeof(std::uint32_t)));
  const std::uint32_t smem = barrier_bytes<P>(2 * Stages) + Stages * sizeof(std::uint32_t);
  pipeline_paths<Stages><<<1, 32 * (1 + consumer_warps), smem>>>(items, consumer_warps, sums);
  MBCHECK_CUDA(cudaGetLastError());
  MBCHECK_CUDA(cudaDeviceSynchronize());
  std::uint32_t host[1024];
  MBCHECK_CUDA(cudaMemcpy(host, sums, consumers * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
  MBCHECK_CUDA(cudaFree(sums));
  int wrong = 0;
  for (std::uint32_t i = 0; i < consumers; ++i) wrong += host[i] != items * (items - 1) / 2;
  std::printf("pipeline_paths<%d> items=%u consumer_warps=%u: %s (%d of %u consumer sums wrong)\n", Stages, items,
              consumer_warps, wrong ? "FAIL" : "ok", wrong, consumers);
  return wrong ? 1 : 0;
}

int run_mbarrier_ops() {
  const std::uint32_t src_host[4] = {11, 22, 33, 44};
  std::uint32_t *src = nullptr, *out = nullptr;
  MBCHECK_CUDA(cudaMalloc(&src, sizeof src_host));
  MBCHECK_CUDA(cudaMalloc(&out, 8 * sizeof(std::uint32_t)));
  MBCHECK_CUDA(cudaMemcpy(src, src_host, sizeof src_host, cudaMemcpyHostToDevice));
  mbarrier_ops<<<1, 32, barrier_bytes<P>(4) + 16>>>(src, out);
  MBCHECK_CUDA(cudaGetLastError());
  MBCHECK_CUDA(cudaDeviceSynchronize());
  std::uint32_t got[8];
  MBCHECK_CUDA(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  MBCHECK_CUDA(cudaFree(src));
  MBCHECK_CUDA(cudaFree(out));
  // pending_count before the arrive on init(2) is 2; every wait answers true; the copy lands.
  const std::uint32_t expected[8] = {2, 1, 1, 1, 11, 22, 33, 44};
  int wrong = 0;
  for (int i = 0; i < 8; ++i) wrong += got[i] != expected[i];
  std::printf("mbarrier_ops: %s (out = %u %u %u %u %u %u %u %u)\n", wrong ? "FAIL" : "ok", got[0], got[1], got[2],
              got[3], got[4], got[5], got[6], got[7]);
  return wrong ? 1 : 0;
}

}  // namespace

int main() {
  int failures = 0;
  failures += run_pipeline_paths<1>(300, 2);
  failures += run_pipeline_paths<2>(300, 4);
  failures += run_pipeline_paths<4>(1000, 1);
  failures += run_mbarrier_ops();
  std::printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
  return failures ? 1 : 0;
}
