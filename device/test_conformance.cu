// The Platform contract's conformance tests (spec/conformance/) on the GPU: each test of
// AllTests runs in one launch of the shape it gives (a cluster launch through cudaLaunchKernelEx
// where kClusterX > 1), its results checked by its own expected(); one line per test.
// tests/test_conformance.cpp runs the same tests on the host.
// `--recorded` instead runs RecordedTests (outcomes PTX's text leaves undefined, such as
// elect.sync with exited lanes in the mask: it may hang, so run it in its own process under a
// timeout) and prints their results without judging them: the last launch's, or for a test
// with kSumLaunches (stale-value counts) their sums over the launches.
// Usage: test_conformance [--recorded] [launches [index]]  (each test runs `launches` times,
// default 1; with `--recorded launches index` only RecordedTests' index-th, exit 2 if none)
// Exit status 0 when every test of AllTests gave its expected outcome in every launch. A test
// that traps (a failed P::check, a wait_group N out of range) ends the process: the CUDA
// context is lost, so the rest cannot run; the line says so.
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "device/cuda_check.cuh"
#include "device/platform.cuh"
#include "device/watchdog.cuh"
#include "spec/conformance/all.hpp"

using namespace mbcheck;
using P = dev::DevicePlatform;

namespace {

template <class Test>
__global__ void __launch_bounds__(conformance::kMaxThreads) conformance_kernel(unsigned char* gmem, std::int32_t* out) {
  const conformance::Env<P> env{P::shared_memory(), gmem, out};
  Test::run(env);
}

template <class Test>
void launch(unsigned char* gmem, std::int32_t* out) {
  static_assert(Test::kThreads >= 1 && Test::kThreads <= conformance::kMaxThreads, "threads per CTA");
  static_assert(Test::kCtas % Test::kClusterX == 0, "the cluster divides the grid");
  auto kernel = conformance_kernel<Test>;
  if (Test::kSmemBytes > 48 * 1024)
    MBCHECK_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Test::kSmemBytes));
  if constexpr (Test::kClusterX > 1) {
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(Test::kCtas);
    config.blockDim = dim3(Test::kThreads);
    config.dynamicSmemBytes = Test::kSmemBytes;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = Test::kClusterX;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    config.attrs = attr;
    config.numAttrs = 1;
    MBCHECK_CUDA(cudaLaunchKernelEx(&config, kernel, gmem, out));
  } else {
    kernel<<<Test::kCtas, Test::kThreads, Test::kSmemBytes>>>(gmem, out);
  }
  MBCHECK_CUDA(cudaGetLastError());
}

// Runs Test `launches` times; prints one line; returns whether every launch gave the expected
// outcome (`judged`) or, for a recorded test, prints the results of the last launch.
template <class Test>
bool run_test(unsigned launches, bool judged) {
  unsigned char* gmem = nullptr;
  std::int32_t* out = nullptr;
  MBCHECK_CUDA(cudaMalloc(&gmem, conformance::kGmemBytes));  // 256-byte aligned
  MBCHECK_CUDA(cudaMalloc(&out, Test::kResults * sizeof(std::int32_t)));
  std::vector<std::int32_t> results(Test::kResults);
  std::vector<long long> sums(Test::kResults, 0);  // over launches, for a kSumLaunches test
  char why[conformance::kWhyBytes] = {};
  unsigned wrong = 0;
  for (unsigned l = 0; l < launches; ++l) {
    MBCHECK_CUDA(cudaMemset(gmem, 0, conformance::kGmemBytes));
    MBCHECK_CUDA(cudaMemset(out, 0, Test::kResults * sizeof(std::int32_t)));
    MBCHECK_CUDA(dev::watchdog_clear());
    launch<Test>(gmem, out);
    const cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
      std::printf(
          "conformance %s: FAIL (the kernel failed: %s; the CUDA context is lost, the remaining tests do not "
          "run)\n",
          Test::kName, cudaGetErrorString(e));
      std::exit(1);
    }
    dev::WatchdogRecord wd{};
    MBCHECK_CUDA(dev::watchdog_read(&wd));
    MBCHECK_CUDA(cudaMemcpy(results.data(), out, Test::kResults * sizeof(std::int32_t), cudaMemcpyDeviceToHost));
    for (std::uint32_t i = 0; i < Test::kResults; ++i) sums[i] += results[i];
    if (wd.fired) {
      ++wrong;
      std::snprintf(why, sizeof why, "the watchdog fired: block %u thread %u waited %llu cycles at smem offset %d",
                    wd.block, wd.thread, wd.waited, wd.smem_offset);
    } else if (!Test::expected(results.data(), why)) {
      ++wrong;
    }
  }
  MBCHECK_CUDA(cudaFree(gmem));
  MBCHECK_CUDA(cudaFree(out));
  // The first results, for the record (elected lanes, values read; counts summed over the
  // launches where the test asks for it).
  constexpr bool summed = requires { Test::kSumLaunches; };
  char head[160] = {};
  std::size_t used = 0;
  for (std::uint32_t i = 0; i < Test::kResults && i < 32 && used + 24 < sizeof head; ++i)
    used += static_cast<std::size_t>(std::snprintf(head + used, sizeof head - used, "%s%lld", i ? " " : "",
                                                   summed ? sums[i] : static_cast<long long>(results[i])));
  if (judged) {
    std::printf("conformance %s: %s (%u CTA%s x %u threads%s, %u launch%s%s%s) results[0..]: %s%s\n", Test::kName,
                wrong == 0 ? "PASS" : "FAIL", Test::kCtas, Test::kCtas == 1 ? "" : "s", Test::kThreads,
                Test::kClusterX > 1 ? ", cluster launch" : "", launches, launches == 1 ? "" : "es",
                wrong ? ", wrong in " : "", wrong ? std::to_string(wrong).c_str() : "", head,
                wrong ? (std::string("; ") + why).c_str() : "");
  } else {
    const char* as_expected = "as if exited lanes were excused";  // ExitedLanesElect's reading
    if constexpr (requires { Test::kAsExpected; }) as_expected = Test::kAsExpected;
    std::printf("recorded %s: %s%s%s (%u launch%s) results[0..]%s: %s\n", Test::kName, wrong == 0 ? as_expected : "in ",
                wrong == 0 ? "" : (std::to_string(wrong) + " launches: ").c_str(), wrong == 0 ? "" : why, launches,
                launches == 1 ? "" : "es", summed ? " summed over launches" : "", head);
  }
  return wrong == 0;
}

template <class... Tests>
int run_all(conformance::TestList<Tests...>, unsigned launches, bool judged) {
  int failures = 0;
  ((failures += run_test<Tests>(launches, judged) ? 0 : 1), ...);
  return failures;
}

// Runs the index-th test of the list alone; false when there is none (a recorded test may hang,
// so run-gpu.sh gives each its own process and timeout).
template <class... Tests>
bool run_one(conformance::TestList<Tests...>, unsigned launches, unsigned long index, bool judged) {
  unsigned long i = 0;
  bool found = false;
  ((found = found || (i++ == index && (run_test<Tests>(launches, judged), true))), ...);
  return found;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  int arg = 1;
  const bool recorded = argc > arg && std::strcmp(argv[arg], "--recorded") == 0;
  if (recorded) ++arg;
  const unsigned long n = argc > arg ? std::strtoul(argv[arg], nullptr, 10) : 1ul;
  const unsigned launches = n < 1 ? 1u : static_cast<unsigned>(n);
  if (recorded) {
    if (argc > arg + 1) {  // one recorded test, by its index in RecordedTests
      const unsigned long index = std::strtoul(argv[arg + 1], nullptr, 10);
      return run_one(conformance::RecordedTests{}, launches, index, false) ? 0 : 2;
    }
    run_all(conformance::RecordedTests{}, launches, false);
    return 0;
  }
  const int failures = run_all(conformance::AllTests{}, launches, true);
  std::printf("conformance: %s (%d failed)\n", failures == 0 ? "PASS" : "FAIL", failures);
  return failures == 0 ? 0 : 1;
}
