// GPU litmus runner: runs every test of spec/litmus/tests.hpp many times (one instance per
// CTA, litmus thread t = lane 0 of warp t) with delays injected between operations (a clock
// spin whose length a hash of seed, iteration, thread and point picks; a quarter of the
// points get none), and prints the histogram of observed outcomes, one line each:
//   litmus <name> <r0,r1,...> <count>
// tests/litmus/test_litmus.cpp checks a recorded histogram against the emulator's allowed
// outcomes (observed ⊆ allowed) and reports coverage.
//
//   litmus_runner [histogram file] [launches per test (default 25)]
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "device/cuda_check.cuh"
#include "device/platform.cuh"
#include "spec/litmus/tests.hpp"

namespace {

using namespace mbcheck;
using P = dev::DevicePlatform;

__device__ unsigned mix(unsigned h) {
  h ^= h >> 16;
  h *= 0x7feb352du;
  h ^= h >> 15;
  h *= 0x846ca68bu;
  h ^= h >> 16;
  return h;
}

// A spin of 0, up to 256, up to 4096 or up to 65536 cycles, chosen per (iteration, thread,
// point): threads start in different orders and interleave at different operations.
struct SpinDelay {
  unsigned seed;
  unsigned iteration;
  unsigned tid;
  __device__ void operator()(int point) const {
    const unsigned h = mix(seed ^ mix(iteration * 4u + tid) ^ (static_cast<unsigned>(point) * 0x9e3779b9u));
    const unsigned ranges[4] = {0u, 256u, 4096u, 65536u};
    const unsigned range = ranges[h & 3u];
    if (range == 0) return;
    const long long cycles = (h >> 2) % range;
    const long long start = clock64();
    while (clock64() - start < cycles) {}
  }
};

template <class Test>
__global__ void litmus_kernel(const unsigned char* src, std::int32_t* out, unsigned seed, unsigned first_iteration) {
  const unsigned iteration = first_iteration + blockIdx.x;
  const unsigned tid = P::warp_idx();
  const auto env = litmus::make_env<P>(P::shared_memory(), src, out + std::size_t{blockIdx.x} * litmus::kMaxResults,
                                       tid, SpinDelay{seed, iteration, tid});
  litmus::run_instance<Test>(env, P::lane_idx() == 0 && tid < Test::kThreads);
}

constexpr unsigned kCtasPerLaunch = 8192;

template <class Test>
void run_test(const unsigned char* src, std::int32_t* out, int launches, std::FILE* file, int* watchdog_fires) {
  std::map<std::string, unsigned long long> histogram;
  std::vector<std::int32_t> results(std::size_t{kCtasPerLaunch} * litmus::kMaxResults);
  const unsigned smem = litmus::smem_bytes<P>();
  for (int l = 0; l < launches; ++l) {
    MBCHECK_CUDA(cudaMemset(out, 0xff, results.size() * sizeof(std::int32_t)));  // -1: never written
    MBCHECK_CUDA(dev::watchdog_clear());
    litmus_kernel<Test>
        <<<kCtasPerLaunch, 32 * Test::kThreads, smem>>>(src, out, 0x51ed5eedu + 7919u * l, l * kCtasPerLaunch);
    MBCHECK_CUDA(cudaGetLastError());
    MBCHECK_CUDA(cudaDeviceSynchronize());
    dev::WatchdogRecord wd{};
    MBCHECK_CUDA(dev::watchdog_read(&wd));
    if (wd.fired) ++*watchdog_fires;
    MBCHECK_CUDA(cudaMemcpy(results.data(), out, results.size() * sizeof(std::int32_t), cudaMemcpyDeviceToHost));
    for (unsigned i = 0; i < kCtasPerLaunch; ++i) {
      std::string key;
      for (unsigned r = 0; r < Test::kResults; ++r) {
        if (r) key += ',';
        key += std::to_string(results[std::size_t{i} * litmus::kMaxResults + r]);
      }
      ++histogram[key];
    }
  }
  for (const auto& [outcome, count] : histogram) {
    std::printf("litmus %s %s %llu\n", Test::kName, outcome.c_str(), count);
    if (file) std::fprintf(file, "litmus %s %s %llu\n", Test::kName, outcome.c_str(), count);
  }
}

template <class... Tests>
void run_all(litmus::TestList<Tests...>, const unsigned char* src, std::int32_t* out, int launches, std::FILE* file,
             int* watchdog_fires) {
  (run_test<Tests>(src, out, launches, file, watchdog_fires), ...);
}

}  // namespace

int main(int argc, char** argv) {
  std::FILE* file = argc > 1 ? std::fopen(argv[1], "w") : nullptr;
  const int launches = argc > 2 ? std::stoi(argv[2]) : 25;
  unsigned char* src = nullptr;
  std::int32_t* out = nullptr;
  MBCHECK_CUDA(cudaMalloc(&src, litmus::kScratchBytes));
  MBCHECK_CUDA(cudaMalloc(&out, std::size_t{kCtasPerLaunch} * litmus::kMaxResults * sizeof(std::int32_t)));
  unsigned char bytes[litmus::kScratchBytes];
  for (unsigned i = 0; i < litmus::kScratchBytes; ++i) bytes[i] = static_cast<unsigned char>(i);
  MBCHECK_CUDA(cudaMemcpy(src, bytes, sizeof(bytes), cudaMemcpyHostToDevice));
  // Waits in the suite return within microseconds; 0.05 s is a hang.
  MBCHECK_CUDA(dev::watchdog_set_budget(100'000'000ull));
  int watchdog_fires = 0;
  run_all(litmus::AllTests{}, src, out, launches, file, &watchdog_fires);
  std::printf("litmus: %d launches x %u instances per test; watchdog fired in %d launch(es)\n", launches,
              kCtasPerLaunch, watchdog_fires);
  if (file) std::fclose(file);
  return watchdog_fires ? 1 : 0;
}
