// The warp-specialized protocols of spec/ on the GPU: the ping-pong mainloop (phase-bit waits,
// named barriers ordering two consumer warp groups) and the TMA mainloop with try-then-wait
// consumers (P::WaitStatus), each checked bit for bit against sums computed on the host; then
// the ping-pong's deadlocking mutation must end by the watchdog. Exit status 0 when all passed.
#include <cstring>
#include <vector>

#include "device/cuda_check.cuh"
#include "device/platform.cuh"
#include "device/watchdog.cuh"
#include "spec/kernels/pingpong.hpp"
#include "spec/kernels/tma_pipeline.hpp"

using namespace mbcheck;
using P = dev::DevicePlatform;

template <int Stages>
__global__ void pingpong(PingPongParams p) {
  pingpong_kernel<P, Stages>(p);
}
template <int Stages>
__global__ void tma_mainloop(TmaMainloopParams p) {
  tma_mainloop_kernel<P, Stages>(p);
}

namespace {

// Runs the ping-pong once; returns the number of wrong sums (or -1 if the watchdog fired).
template <int Stages>
int run_pingpong(PingPongMutation mutation, std::uint32_t tiles, std::uint32_t k_blocks, std::uint32_t elems,
                 unsigned long long* watchdog_fired = nullptr) {
  const std::uint32_t g = 128;
  const std::size_t n = std::size_t{tiles} * k_blocks * elems;
  std::vector<float> src(n);
  for (std::size_t i = 0; i < n; ++i) src[i] = static_cast<float>(i % 5 + 1);
  float *d_src = nullptr, *d_out = nullptr;
  MBCHECK_CUDA(cudaMalloc(&d_src, n * sizeof(float)));
  MBCHECK_CUDA(cudaMalloc(&d_out, std::size_t{tiles} * g * sizeof(float)));
  MBCHECK_CUDA(cudaMemcpy(d_src, src.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  MBCHECK_CUDA(cudaMemset(d_out, 0xff, std::size_t{tiles} * g * sizeof(float)));
  PingPongParams p{d_src, d_out, g, tiles, k_blocks, elems, mutation};
  const std::uint32_t smem = pingpong_smem_bytes<P, Stages>(p);
  MBCHECK_CUDA(cudaFuncSetAttribute(pingpong<Stages>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  MBCHECK_CUDA(dev::watchdog_clear());
  pingpong<Stages><<<1, 32 + 2 * g, smem>>>(p);
  MBCHECK_CUDA(cudaGetLastError());
  MBCHECK_CUDA(cudaDeviceSynchronize());
  dev::WatchdogRecord wd{};
  MBCHECK_CUDA(dev::watchdog_read(&wd));
  if (watchdog_fired) *watchdog_fired = wd.fired;
  std::vector<float> out(std::size_t{tiles} * g);
  MBCHECK_CUDA(cudaMemcpy(out.data(), d_out, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
  MBCHECK_CUDA(cudaFree(d_src));
  MBCHECK_CUDA(cudaFree(d_out));
  int wrong = 0;
  for (std::uint32_t t = 0; t < tiles; ++t)
    for (std::uint32_t lane = 0; lane < g; ++lane) {
      float expected = 0;
      for (std::uint32_t k = 0; k < k_blocks; ++k)
        for (std::uint32_t i = lane; i < elems; i += g) expected += src[(std::size_t{t} * k_blocks + k) * elems + i];
      wrong += std::memcmp(&out[std::size_t{t} * g + lane], &expected, sizeof(float)) != 0;
    }
  return wd.fired ? -1 : wrong;
}

template <int Stages>
int run_tma_try_then_wait(std::uint32_t consumers, std::uint32_t iterations, std::uint32_t elems) {
  const std::size_t n = std::size_t{iterations} * elems;
  std::vector<float> src(n);
  for (std::size_t i = 0; i < n; ++i) src[i] = static_cast<float>(i % 7 + 1);
  float *d_src = nullptr, *d_out = nullptr;
  MBCHECK_CUDA(cudaMalloc(&d_src, n * sizeof(float)));
  MBCHECK_CUDA(cudaMalloc(&d_out, consumers * sizeof(float)));
  MBCHECK_CUDA(cudaMemcpy(d_src, src.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  TmaMainloopParams p{d_src, d_out, consumers, iterations, elems, true, TmaMainloopMutation::none};
  const std::uint32_t smem = tma_mainloop_smem_bytes<P, Stages>(p);
  MBCHECK_CUDA(cudaFuncSetAttribute(tma_mainloop<Stages>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  tma_mainloop<Stages><<<1, 1 + consumers, smem>>>(p);
  MBCHECK_CUDA(cudaGetLastError());
  MBCHECK_CUDA(cudaDeviceSynchronize());
  std::vector<float> out(consumers);
  MBCHECK_CUDA(cudaMemcpy(out.data(), d_out, consumers * sizeof(float), cudaMemcpyDeviceToHost));
  MBCHECK_CUDA(cudaFree(d_src));
  MBCHECK_CUDA(cudaFree(d_out));
  int wrong = 0;
  for (std::uint32_t c = 0; c < consumers; ++c) {
    float expected = 0;
    for (std::uint32_t k = 0; k < iterations; ++k)
      for (std::uint32_t i = c; i < elems; i += consumers) expected += src[std::size_t{k} * elems + i];
    wrong += std::memcmp(&out[c], &expected, sizeof(float)) != 0;
  }
  return wrong;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each line reaches the log even if a kernel hangs
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;  // correct kernels once (sanitizers)
  int failures = 0;
  for (int run = 0; run < (quick ? 1 : 10); ++run) {
    const int a = run_pingpong<2>(PingPongMutation::none, 64, 4, 256);
    const int b = run_pingpong<4>(PingPongMutation::none, 128, 2, 1024);
    if (run == 0 || a != 0 || b != 0)
      std::printf("pingpong run %d: 2 stages 64x4 tiles: %d wrong sums; 4 stages 128x2 tiles: %d wrong sums\n", run, a,
                  b);
    failures += (a != 0) + (b != 0);
  }
  const int t = run_tma_try_then_wait<2>(128, 256, 512);
  std::printf("tma-pipeline try-then-wait (WaitStatus), 128 consumers, 256 tiles: %d wrong sums\n", t);
  failures += t != 0;
  if (quick) {
    std::printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
    return failures ? 1 : 0;
  }
  // The deadlock mutation with one tile: group 1 has no tile, so no thread is left on a named
  // barrier (bar.sync has no timeout: only mbarrier waits are bounded by the watchdog).
  MBCHECK_CUDA(dev::watchdog_set_budget(200'000'000ull));
  unsigned long long fired = 0;
  run_pingpong<2>(PingPongMutation::producer_start_bit_0, 1, 2, 256, &fired);
  std::printf("pingpong mutation producer-start-bit-0 (emulator: deadlock): watchdog %s\n",
              fired ? "fired (deadlock ended)" : "DID NOT fire");
  failures += fired == 0;
  MBCHECK_CUDA(dev::watchdog_set_budget(dev::kDefaultWatchdogCycles));
  std::printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
  return failures ? 1 : 0;
}
