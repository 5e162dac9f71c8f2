// GPU test: the residual-add epilogue on a persistent grid, bit-exact against
// residual_add_reference for several shapes, stage counts 1..4, betas and ragged last tiles;
// then the deadlocking mutation (consumer_count_plus_one) must be cut short by the watchdog
// with a report naming empty[0] phase 0, and a correct run afterwards must still pass.
//
//   test_residual_add            all cases and the mutation
//   test_residual_add --quick    small correct cases only (for compute-sanitizer)
//   test_residual_add --mutation NAME   one bug-zoo mutation (names as `mbcheck list`)
//                                on a small shape: what the GPU does, next to the
//                                emulator's verdict; fails only if the emulator says
//                                deadlock and the watchdog did not fire
// Exit status 0 only if every check passed.
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "device/residual_add_launch.cuh"

namespace {

using mbcheck::ResidualAddMutation;
using mbcheck::ResidualAddParams;
using namespace mbcheck::dev;

struct Case {
  unsigned num_elems;
  unsigned tile_elems;
  int stages;
  float beta;
  unsigned ctas;  // 0: SM count x CTAs per SM
  unsigned store_warps;
};

// Device buffers for one case; D is poisoned with a NaN pattern before the launch so an
// element the kernel never writes cannot match the reference.
struct Buffers {
  float* accum = nullptr;
  float* c = nullptr;
  float* d = nullptr;
  explicit Buffers(unsigned n) {
    MBCHECK_CUDA(cudaMalloc(&accum, n * sizeof(float)));
    MBCHECK_CUDA(cudaMalloc(&c, n * sizeof(float)));
    MBCHECK_CUDA(cudaMalloc(&d, n * sizeof(float)));
  }
  ~Buffers() {
    cudaFree(accum);
    cudaFree(c);
    cudaFree(d);
  }
};

// Seeded inputs and the CPU reference for them.
struct HostInputs {
  std::vector<float> accum, c, expected;
  HostInputs(unsigned long long seed, unsigned n, float beta) : accum(n), c(n), expected(n) {
    SplitMix64 gen{seed};
    for (unsigned i = 0; i < n; ++i) {
      accum[i] = gen.real();
      c[i] = gen.real();
    }
    mbcheck::residual_add_reference(accum.data(), c.data(), beta, expected.data(), n);
  }
};

// Copies the inputs to `buf`, poisons D (a NaN pattern no result can match) and points `p` at
// the buffers.
void upload(const HostInputs& in, Buffers& buf, ResidualAddParams& p) {
  const size_t bytes = in.accum.size() * sizeof(float);
  MBCHECK_CUDA(cudaMemcpy(buf.accum, in.accum.data(), bytes, cudaMemcpyHostToDevice));
  MBCHECK_CUDA(cudaMemcpy(buf.c, in.c.data(), bytes, cudaMemcpyHostToDevice));
  MBCHECK_CUDA(cudaMemset(buf.d, 0xff, bytes));
  p.accum = buf.accum;
  p.c = buf.c;
  p.d = buf.d;
}

unsigned sm_count() {
  int device = 0, sms = 0;
  MBCHECK_CUDA(cudaGetDevice(&device));
  MBCHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return static_cast<unsigned>(sms);
}

// Runs one correct case; returns whether D is bit-exact and the watchdog stayed silent.
bool run_case(const Case& k, unsigned long long seed) {
  ResidualAddParams p;
  p.num_elems = k.num_elems;
  p.tile_elems = k.tile_elems;
  p.beta = k.beta;
  p.store_warps = k.store_warps;
  const unsigned ctas = k.ctas ? k.ctas : sm_count() * static_cast<unsigned>(residual_add_ctas_per_sm(p, k.stages));

  const HostInputs in(seed, k.num_elems, k.beta);
  const std::vector<float>&accum = in.accum, &c = in.c, &expected = in.expected;
  std::vector<float> d(k.num_elems);
  Buffers buf(k.num_elems);
  const size_t bytes = size_t{k.num_elems} * sizeof(float);
  upload(in, buf, p);

  MBCHECK_CUDA(watchdog_clear());
  MBCHECK_CUDA(launch_residual_add(p, k.stages, ctas));
  MBCHECK_CUDA(cudaDeviceSynchronize());
  WatchdogRecord wd{};
  MBCHECK_CUDA(watchdog_read(&wd));
  MBCHECK_CUDA(cudaMemcpy(d.data(), buf.d, bytes, cudaMemcpyDeviceToHost));

  const unsigned tiles = mbcheck::residual_add_num_tiles(p);
  std::printf("case n=%u tile=%u stages=%d beta=%g store_warps=%u ctas=%u tiles=%u seed=%llu: ", k.num_elems,
              k.tile_elems, k.stages, static_cast<double>(k.beta), k.store_warps, ctas, tiles, seed);
  if (wd.fired) {
    std::printf("FAIL: watchdog fired (block %u thread %u, smem offset %d, phase %lld)\n", wd.block, wd.thread,
                wd.smem_offset, wd.phase);
    return false;
  }
  for (unsigned i = 0; i < k.num_elems; ++i) {
    if (std::memcmp(&d[i], &expected[i], sizeof(float)) != 0) {
      std::printf("FAIL: D[%u] (tile %u) = %a, expected %a = fmaf(%a, %a, %a)\n", i, i / k.tile_elems, d[i],
                  expected[i], k.beta, c[i], accum[i]);
      return false;
    }
  }
  std::printf("ok (bit-exact)\n");
  return true;
}

// The mutation the emulator calls a deadlock: every empty[] barrier expects 129 arrivals
// but only 128 come, so the producer's wait for empty[0] phase 0 (its second lap) never
// returns. The watchdog must end the kernel and name that barrier and phase.
bool run_mutation_deadlock() {
  constexpr int kStages = 2;
  constexpr unsigned kCtas = 4;
  ResidualAddParams p;
  p.num_elems = 1u << 16;
  p.tile_elems = 1024;
  p.beta = 0.5f;
  p.mutation = ResidualAddMutation::consumer_count_plus_one;
  Buffers buf(p.num_elems);
  MBCHECK_CUDA(cudaMemset(buf.accum, 0, p.num_elems * sizeof(float)));
  MBCHECK_CUDA(cudaMemset(buf.c, 0, p.num_elems * sizeof(float)));
  p.accum = buf.accum;
  p.c = buf.c;
  p.d = buf.d;

  const unsigned long long budget = 200'000'000ull;  // ~0.1 s at 1.98 GHz
  MBCHECK_CUDA(watchdog_set_budget(budget));
  MBCHECK_CUDA(watchdog_clear());
  cudaEvent_t start, stop;
  MBCHECK_CUDA(cudaEventCreate(&start));
  MBCHECK_CUDA(cudaEventCreate(&stop));
  MBCHECK_CUDA(cudaEventRecord(start));
  MBCHECK_CUDA(launch_residual_add(p, kStages, kCtas));
  MBCHECK_CUDA(cudaEventRecord(stop));
  const cudaError_t sync = cudaDeviceSynchronize();
  float ms = 0;
  MBCHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
  WatchdogRecord wd{};
  MBCHECK_CUDA(watchdog_read(&wd));
  MBCHECK_CUDA(watchdog_set_budget(kDefaultWatchdogCycles));
  MBCHECK_CUDA(cudaEventDestroy(start));
  MBCHECK_CUDA(cudaEventDestroy(stop));

  // empty[0] is barrier kStages (full[0..S) then empty[0..S)); the producer awaits phase 0.
  const int empty0_offset = kStages * static_cast<int>(sizeof(DevicePlatform::Barrier));
  std::printf("mutation consumer_count_plus_one (stages=%d ctas=%u budget=%llu cycles): kernel %s after %.1f ms; ",
              kStages, kCtas, budget, cudaGetErrorString(sync), static_cast<double>(ms));
  if (sync != cudaSuccess || !wd.fired) {
    std::printf("FAIL: %s\n", wd.fired ? "the kernel failed" : "the watchdog did not fire");
    return false;
  }
  std::printf(
      "watchdog: timeout at smem offset %d (empty[0] is %d) phase %lld in block %u thread %u after %llu "
      "cycles; %u threads timed out: ",
      wd.smem_offset, empty0_offset, wd.phase, wd.block, wd.thread, wd.waited, wd.timeouts);
  // The first thread to time out may be the producer (empty[] phase 0) or a store thread
  // whose full[] never filled; the producer's report must be among them, so check it names
  // a barrier of this pipeline and a phase the emulator's deadlock names.
  const bool producer = wd.smem_offset == empty0_offset && wd.phase == 0;
  const bool consumer = wd.smem_offset < kStages * 8 && wd.phase >= 0;
  if (!producer && !consumer) {
    std::printf("FAIL: unexpected barrier/phase\n");
    return false;
  }
  std::printf("ok (%s)\n", producer ? "producer on empty[0] phase 0, as the emulator says" : "a store warp on full[]");
  return true;
}

struct MutationInfo {
  const char* name;
  ResidualAddMutation mutation;
  const char* emulator;  // the emulator's verdict (`mbcheck run epi-load --mutation NAME`)
};
const MutationInfo kMutations[] = {
    {"consumer-count-plus-one", ResidualAddMutation::consumer_count_plus_one, "deadlock"},
    {"producer-start-phase-0", ResidualAddMutation::producer_start_phase_0, "deadlock"},
    {"producer-skips-empty-wait", ResidualAddMutation::producer_skips_empty_wait, "race"},
    {"release-before-read", ResidualAddMutation::release_before_read, "race"},
    {"tx-overcount", ResidualAddMutation::tx_overcount, "deadlock"},
    {"tx-undercount-split", ResidualAddMutation::tx_undercount_split, "race"},
    {"single-stage-wrong-parity", ResidualAddMutation::single_stage_wrong_parity, "aliasing"},
    {"double-arrive", ResidualAddMutation::double_arrive, "misuse"},
    {"explicit-without-signal", ResidualAddMutation::explicit_without_signal, "deadlock"},
    {"use-before-init", ResidualAddMutation::use_before_init, "misuse"},
    {"reinit-live", ResidualAddMutation::reinit_live, "misuse"},
    {"all-lanes-produce", ResidualAddMutation::all_lanes_produce, "aliasing"},
};

std::string barrier_name(int smem_offset, int stages) {
  const int index = smem_offset / static_cast<int>(sizeof(DevicePlatform::Barrier));
  return (index < stages ? "full[" + std::to_string(index) : "empty[" + std::to_string(index - stages)) + "]";
}

// One mutation on 16 tiles, 4 CTAs (stages 2; 1 for the single-stage one), watchdog ~0.1 s.
int run_mutation(const std::string& name) {
  const MutationInfo* info = nullptr;
  for (const auto& m : kMutations)
    if (name == m.name) info = &m;
  if (!info) {
    std::fprintf(stderr, "unknown mutation %s\n", name.c_str());
    return 2;
  }
  const int stages = info->mutation == ResidualAddMutation::single_stage_wrong_parity ? 1 : 2;
  ResidualAddParams p;
  p.num_elems = 16 * 1024;
  p.tile_elems = 1024;
  p.beta = 0.5f;
  p.mutation = info->mutation;
  const HostInputs in(0xb06u, p.num_elems, p.beta);
  const std::vector<float>& expected = in.expected;
  std::vector<float> d(p.num_elems);
  Buffers buf(p.num_elems);
  const size_t bytes = size_t{p.num_elems} * sizeof(float);
  upload(in, buf, p);
  MBCHECK_CUDA(watchdog_set_budget(200'000'000ull));
  MBCHECK_CUDA(watchdog_clear());
  MBCHECK_CUDA(launch_residual_add(p, stages, 4));
  const cudaError_t sync = cudaDeviceSynchronize();
  std::printf("mutation %s (emulator: %s): kernel: %s", info->name, info->emulator, cudaGetErrorString(sync));
  if (sync != cudaSuccess) {
    std::printf("\n");
    return std::string(info->emulator) == "deadlock" ? 1 : 0;
  }
  WatchdogRecord wd{};
  MBCHECK_CUDA(watchdog_read(&wd));
  MBCHECK_CUDA(cudaMemcpy(d.data(), buf.d, bytes, cudaMemcpyDeviceToHost));
  unsigned wrong = 0;
  for (unsigned i = 0; i < p.num_elems; ++i) wrong += std::memcmp(&d[i], &expected[i], sizeof(float)) != 0;
  if (wd.fired)
    std::printf("; watchdog: first timeout %s phase %lld (block %u thread %u), %u threads timed out",
                barrier_name(wd.smem_offset, stages).c_str(), wd.phase, wd.block, wd.thread, wd.timeouts);
  else
    std::printf("; watchdog silent");
  std::printf("; D: %u of %u elements differ from the reference\n", wrong, p.num_elems);
  const bool deadlock = std::string(info->emulator) == "deadlock";
  return deadlock && !wd.fired ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
  if (argc > 2 && std::string(argv[1]) == "--mutation") return run_mutation(argv[2]);
  cudaDeviceProp prop{};
  MBCHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s, %d SMs, sm_%d%d\n", prop.name, prop.multiProcessorCount, prop.major, prop.minor);

  const unsigned long long seed = std::random_device{}();
  std::vector<Case> cases;
  if (quick) {
    cases = {
        {8192 + 36, 1024, 1, 0.5f, 4, 4},
        {16384, 2048, 2, -1.25f, 3, 4},
        {12288 + 1000, 4096, 3, 0.0f, 2, 4},
        {32768 + 4, 1024, 4, 2.0f, 8, 4},
    };
  } else {
    cases = {
        {1u << 20, 1024, 1, 0.5f, 132, 4},
        {(1u << 20) + 36, 1024, 2, -1.25f, 264, 4},  // ragged last tile of 36 floats
        {12288 + 1000, 4096, 3, 0.0f, 7, 4},         // fewer CTAs than tiles, ragged
        {1u << 24, 4096, 4, 2.0f, 0, 4},             // SM count x occupancy
        {4000, 8192, 4, 1.0f, 132, 4},               // one partial tile, most CTAs idle
        {(1u << 22) + 4, 2048, 3, 0.75f, 528, 4},    // last tile of one vector
        {(1u << 23) + 2052, 2048, 2, -3.0f, 0, 4},   // last tile ragged inside a batch
        {(1u << 22) + 516, 8192, 4, 1.5f, 0, 8},     // 8 store warps
        {(1u << 21) + 12, 1024, 1, 0.25f, 1, 2},     // one CTA walks every tile, 2 store warps
        {1u << 26, 4096, 3, 1.0f, 0, 4},             // 256 MiB per array
    };
  }
  int failures = 0;
  for (size_t i = 0; i < cases.size(); ++i) failures += run_case(cases[i], seed + i) ? 0 : 1;
  if (!quick) {
    failures += run_mutation_deadlock() ? 0 : 1;
    // The GPU must be healthy after the watchdog ended the deadlocked kernel.
    failures += run_case({(1u << 20) + 36, 1024, 2, 0.5f, 0, 4}, seed + 1000) ? 0 : 1;
  }
  std::printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
  return failures ? 1 : 0;
}
