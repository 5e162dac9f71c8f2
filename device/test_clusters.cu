// Thread block clusters on the GPU (real clusters: cudaLaunchKernelEx with a cluster
// dimension):
//  1. the bundled cluster-gemm (spec/kernels/cluster_gemm.hpp) at 2x1 and 2x2, with and without
//     the named-barrier order, bit for bit against the host's reference, over many clusters;
//  2. its deadlocking mutations (wrong multicast mask, a skipped remote arrival) end by the
//     watchdog;
//  3. litmus tests of the new operations, each a count of outcomes the emulator forbids:
//     remote arrive (a DSMEM store before it, read after the peer's wait), multicast
//     completion in every CTA of the mask, barrier.cluster (release/acquire of DSMEM stores),
//     and collectives as rendezvous (can a lane pass __syncwarp / elect.sync, or a warp pass
//     wgmma.fence/commit/wait, while another lane or warp of it is delayed?).
// `--lifetime` instead runs the lifetime misuse alone (a CTA exits while its peer still
// arrives on its barrier) and reports what the hardware does; run it in its own process.
// Exit status 0 when every check passed.
#include <cuda/ptx>

#include <cstring>
#include <vector>

#include "device/counters.cuh"
#include "device/cuda_check.cuh"
#include "device/platform.cuh"
#include "device/watchdog.cuh"
#include "spec/kernels/cluster_gemm.hpp"

using namespace mbcheck;
using P = dev::DevicePlatform;

template <int Stages>
__global__ void cluster_gemm(ClusterGemmParams p) {
  cluster_gemm_kernel<P, Stages>(p);
}

namespace {

template <class Kernel, class... Args>
void launch_cluster(Kernel kernel, dim3 grid, dim3 cluster, std::uint32_t threads, std::uint32_t smem, Args... args) {
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = dim3(threads);
  config.dynamicSmemBytes = smem;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = cluster.x;
  attr[0].val.clusterDim.y = cluster.y;
  attr[0].val.clusterDim.z = 1;
  config.attrs = attr;
  config.numAttrs = 1;
  MBCHECK_CUDA(cudaLaunchKernelEx(&config, kernel, args...));
  MBCHECK_CUDA(cudaGetLastError());
}

// One run of cluster-gemm; returns the number of wrong outputs, or -1 if the watchdog fired.
template <int Stages>
int run_cluster_gemm(std::uint32_t cx, std::uint32_t cy, std::uint32_t clusters, ClusterGemmParams p,
                     unsigned long long* fired = nullptr) {
  const std::uint32_t ctas = cx * cy * clusters, rows = clusters * cx, cols = clusters * cy;
  const std::size_t blocks = std::size_t{p.tiles} * p.k_blocks;
  std::vector<float> a(rows * blocks * p.a_elems), b(cols * blocks * p.b_elems);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 7 + 1);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 3 + 1);
  const std::size_t out_n = std::size_t{ctas} * p.tiles * 256;
  float *d_a = nullptr, *d_b = nullptr, *d_out = nullptr;
  MBCHECK_CUDA(cudaMalloc(&d_a, a.size() * sizeof(float)));
  MBCHECK_CUDA(cudaMalloc(&d_b, b.size() * sizeof(float)));
  MBCHECK_CUDA(cudaMalloc(&d_out, out_n * sizeof(float)));
  MBCHECK_CUDA(cudaMemcpy(d_a, a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice));
  MBCHECK_CUDA(cudaMemcpy(d_b, b.data(), b.size() * sizeof(float), cudaMemcpyHostToDevice));
  MBCHECK_CUDA(cudaMemset(d_out, 0xff, out_n * sizeof(float)));
  p.a = d_a;
  p.b = d_b;
  p.out = d_out;
  const std::uint32_t smem = cluster_gemm_smem_bytes<P, Stages>(p);
  MBCHECK_CUDA(cudaFuncSetAttribute(cluster_gemm<Stages>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  MBCHECK_CUDA(dev::watchdog_clear());
  launch_cluster(cluster_gemm<Stages>, dim3(cx * clusters, cy), dim3(cx, cy), kClusterGemmThreads, smem, p);
  MBCHECK_CUDA(cudaDeviceSynchronize());
  dev::WatchdogRecord wd{};
  MBCHECK_CUDA(dev::watchdog_read(&wd));
  if (fired) *fired = wd.fired;
  std::vector<float> out(out_n);
  MBCHECK_CUDA(cudaMemcpy(out.data(), d_out, out_n * sizeof(float), cudaMemcpyDeviceToHost));
  MBCHECK_CUDA(cudaFree(d_a));
  MBCHECK_CUDA(cudaFree(d_b));
  MBCHECK_CUDA(cudaFree(d_out));
  int wrong = 0;
  const std::uint32_t size = cx * cy;
  for (std::uint32_t cta = 0; cta < ctas; ++cta) {
    const std::uint32_t rank = cta % size, c = cta / size, m = c * cx + rank % cx, n = c * cy + rank / cx;
    for (std::uint32_t j = 0; j < p.tiles; ++j)
      for (std::uint32_t i = 0; i < (p.ordered ? 128u : 256u); ++i) {
        const std::uint32_t t = i % 128;
        float expected = 0;
        for (std::uint32_t g = 0; g < (p.ordered ? 2u : 1u); ++g)
          for (std::uint32_t k = 0; k < p.k_blocks; ++k)
            expected += a[((std::size_t{m} * p.tiles + j) * p.k_blocks + k) * p.a_elems + t % p.a_elems] *
                        b[((std::size_t{n} * p.tiles + j) * p.k_blocks + k) * p.b_elems + t % p.b_elems];
        wrong += std::memcmp(&out[(std::size_t{cta} * p.tiles + j) * 256 + i], &expected, sizeof(float)) != 0;
      }
  }
  return wd.fired ? -1 : wrong;
}

// --- litmus kernels -------------------------------------------------------------------------

// Thread 0 inits the CTA's barrier for `count` arrivals and fences the init; the cluster then
// meets, so that peers may use it (what the emulator's unfenced-init rule asks).
__device__ void init_for_the_cluster(P::Barrier& bar, std::uint32_t count) {
  if (P::thread_idx() == 0) {
    P::mbarrier_init(bar, count);
    P::fence_mbarrier_init_release_cluster();
  }
  P::barrier_cluster_arrive();
  P::barrier_cluster_wait();
}

// Remote arrive: rank 0's thread t stores a value into rank 1's smem word t, then arrives on
// rank 1's barrier (count = threads); rank 1's threads wait and read every word. Forbidden:
// a stale word. out[round] counts stale reads.
__global__ void litmus_remote_arrive(std::uint32_t rounds, unsigned int* stale) {
  auto* bar = reinterpret_cast<P::Barrier*>(P::shared_memory());
  auto* words = reinterpret_cast<volatile std::uint32_t*>(P::shared_memory() + 128);
  const std::uint32_t me = P::thread_idx(), n = P::block_dim();
  if (me == 0) {
    P::mbarrier_init(*bar, n);
    P::fence_mbarrier_init_release_cluster();
  }
  words[me] = 0;
  P::barrier_cluster_arrive();
  P::barrier_cluster_wait();
  for (std::uint32_t r = 1; r <= rounds; ++r) {
    if (P::cluster_ctarank() == 0) {
      *P::map_shared_rank(const_cast<std::uint32_t*>(words + me), 1) = r;
      P::mbarrier_arrive_cluster(*bar, 1);
    } else {
      P::mbarrier_wait_parity(*bar, r - 1);
      for (std::uint32_t i = 0; i < n; ++i)
        if (words[i] < r) atomicAdd(stale, 1u);
    }
    P::barrier_cluster_arrive();  // the next round's stores come after this round's reads
    P::barrier_cluster_wait();
  }
}

// Multicast: rank 0 multicasts 1 KiB to every CTA of the cluster; each CTA expects it on its
// own barrier, waits and checks every word. Forbidden: a CTA whose barrier completes with
// wrong bytes (or that never completes: the watchdog).
__global__ void litmus_multicast(const std::uint32_t* src, std::uint32_t rounds, unsigned int* wrong) {
  auto* bar = reinterpret_cast<P::Barrier*>(P::shared_memory());
  auto* data = reinterpret_cast<std::uint32_t*>(P::shared_memory() + 128);
  const std::uint32_t size = P::cluster_nctarank();
  init_for_the_cluster(*bar, 1);
  for (std::uint32_t r = 0; r < rounds; ++r) {
    if (P::thread_idx() == 0) {
      P::mbarrier_arrive_expect_tx(*bar, 1024);
      if (P::cluster_ctarank() == 0)
        P::cp_async_bulk_global_to_shared_multicast(data, src + (r % 4) * 256, 1024, *bar,
                                                    static_cast<std::uint16_t>((1u << size) - 1));
    }
    P::mbarrier_wait_parity(*bar, r);
    for (std::uint32_t i = P::thread_idx(); i < 256; i += P::block_dim())
      if (data[i] != src[(r % 4) * 256 + i]) atomicAdd(wrong, 1u);
    P::barrier_cluster_arrive();  // every CTA read this round before rank 0 multicasts again
    P::barrier_cluster_wait();
  }
}

// barrier.cluster: rank 0 stores into rank 1's smem, then arrive.release / wait.acquire; rank 1
// reads after its wait. Forbidden: a stale read.
__global__ void litmus_cluster_barrier(std::uint32_t rounds, unsigned int* stale) {
  auto* words = reinterpret_cast<volatile std::uint32_t*>(P::shared_memory());
  const std::uint32_t me = P::thread_idx();
  words[me] = 0;
  P::barrier_cluster_arrive();
  P::barrier_cluster_wait();
  for (std::uint32_t r = 1; r <= rounds; ++r) {
    if (P::cluster_ctarank() == 0) *P::map_shared_rank(const_cast<std::uint32_t*>(words + me), 1) = r;
    P::barrier_cluster_arrive_aligned();
    P::barrier_cluster_wait_aligned();
    if (P::cluster_ctarank() == 1 && words[(me + 7) % P::block_dim()] < r) atomicAdd(stale, 1u);
    P::barrier_cluster_arrive();
    P::barrier_cluster_wait();
  }
}

// Collectives as rendezvous: one lane (or warp) spins `delay` cycles, then records clock64()
// and enters the collective; every other lane records clock64() right after it. Forbidden: a
// lane whose exit time precedes the delayed lane's entry (it left before the delayed lane came).
// kind 0: __syncwarp, 1: elect.sync, 2: wgmma fence/commit/wait across the warp group (warp 0
// of the group delayed).
__global__ void litmus_rendezvous(int kind, unsigned long long delay, unsigned int* early, unsigned long long* slack) {
  __shared__ unsigned long long entered_at[4];  // per warp (kind 2: [0], warp 0's lane 0)
  const std::uint32_t me = P::thread_idx();
  const bool delayed = kind == 2 ? me / 32 == 0 : P::lane_idx() == 5;
  if (delayed) {
    const unsigned long long start = clock64();
    while (clock64() - start < delay) {}
    if (kind != 2 || me == 0) entered_at[kind == 2 ? 0 : me / 32] = clock64();
  }
  if (kind == 0) P::syncwarp();
  if (kind == 1) (void)P::elect_sync();
  if (kind == 2) {
    P::wgmma_fence();
    P::wgmma_commit_group();
    P::wgmma_wait_group(0);
  }
  const unsigned long long left = clock64();
  __syncthreads();
  const unsigned long long entered = entered_at[kind == 2 ? 0 : me / 32];
  if (!delayed && left < entered) atomicAdd(early, 1u);
  if (!delayed) atomicMax(slack, left > entered ? left - entered : 0ull);
}

// Remote complete_tx: rank 1 expects 64 bytes a round on its barrier; rank 0 pays them with
// four mbarrier.complete_tx.relaxed.cluster of 16. Forbidden: a round whose phase never
// completes (the watchdog) or completes early (the parity wait of the next round then
// answers at once and the count of completed rounds runs ahead: checked against `rounds`).
__global__ void litmus_remote_complete_tx(std::uint32_t rounds, unsigned int* completed) {
  auto* bar = reinterpret_cast<P::Barrier*>(P::shared_memory());
  init_for_the_cluster(*bar, 1);
  for (std::uint32_t r = 0; r < rounds; ++r) {
    if (P::thread_idx() == 0) {
      if (P::cluster_ctarank() == 1) {
        P::mbarrier_arrive_expect_tx(*bar, 64);
        P::mbarrier_wait_parity(*bar, r);
        atomicAdd(completed, 1u);
      } else {
        for (int i = 0; i < 4; ++i) P::mbarrier_complete_tx_cluster(*bar, 1, 16);
      }
    }
    P::barrier_cluster_arrive();  // one round at a time
    P::barrier_cluster_wait();
  }
}

// The lifetime misuse: rank 1 exits at once; rank 0 waits, then arrives on rank 1's barrier.
__global__ void lifetime_misuse(unsigned long long delay) {
  auto* bar = reinterpret_cast<P::Barrier*>(P::shared_memory());
  init_for_the_cluster(*bar, 1);
  if (P::cluster_ctarank() == 1) return;
  const unsigned long long start = clock64();
  while (clock64() - start < delay) {}
  if (P::thread_idx() == 0) P::mbarrier_arrive_cluster(*bar, 1);
}

// Misuse: rank 0 arrives on rank 1's barrier with the .shared::cta form (its generic DSMEM
// address converted to a shared address), which PTX leaves undefined.
__global__ void local_arrive_on_peer(unsigned int* completed) {
  auto* bar = reinterpret_cast<P::Barrier*>(P::shared_memory());
  init_for_the_cluster(*bar, 1);
  if (P::cluster_ctarank() == 0 && P::thread_idx() == 0) (void)P::mbarrier_arrive(*P::map_shared_rank(bar, 1));
  if (P::cluster_ctarank() == 1 && P::thread_idx() == 0) {
    P::mbarrier_wait_parity(*bar, 0);  // the watchdog ends it if the arrival went elsewhere
    atomicAdd(completed, 1u);
  }
  P::barrier_cluster_arrive();
  P::barrier_cluster_wait();
}

// Misuse: no fence.mbarrier_init before the relaxed cluster arrive; the peer arrives at once.
__global__ void unfenced_init(unsigned int* completed) {
  auto* bar = reinterpret_cast<P::Barrier*>(P::shared_memory());
  if (P::thread_idx() == 0) P::mbarrier_init(*bar, 1);
  P::barrier_cluster_arrive_relaxed();
  P::barrier_cluster_wait();
  if (P::cluster_ctarank() == 0 && P::thread_idx() == 0) P::mbarrier_arrive_cluster(*bar, 1);
  if (P::cluster_ctarank() == 1 && P::thread_idx() == 0) {
    P::mbarrier_wait_parity(*bar, 0);
    atomicAdd(completed, 1u);
  }
  P::barrier_cluster_arrive();
  P::barrier_cluster_wait();
}

using dev::counter;
using dev::read_and_free;

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  if (argc > 1 && std::strcmp(argv[1], "--misuse") == 0 && argc > 2) {
    // One misuse per process (a fault must not take the rest down): what the hardware does.
    const bool local = std::strcmp(argv[2], "local-arrive-on-peer") == 0;
    unsigned int* completed = nullptr;
    MBCHECK_CUDA(cudaMalloc(&completed, sizeof(unsigned int)));
    MBCHECK_CUDA(cudaMemset(completed, 0, sizeof(unsigned int)));
    MBCHECK_CUDA(dev::watchdog_set_budget(200'000'000ull));
    MBCHECK_CUDA(dev::watchdog_clear());
    if (local)
      launch_cluster(local_arrive_on_peer, dim3(2 * 64), dim3(2, 1), 32, 128, completed);
    else
      launch_cluster(unfenced_init, dim3(2 * 64), dim3(2, 1), 32, 128, completed);
    const cudaError_t e = cudaDeviceSynchronize();
    unsigned int done = 0;
    dev::WatchdogRecord wd{};
    if (e == cudaSuccess) {
      MBCHECK_CUDA(cudaMemcpy(&done, completed, sizeof(done), cudaMemcpyDeviceToHost));
      MBCHECK_CUDA(dev::watchdog_read(&wd));
    }
    std::printf(
        "misuse %s (emulator: %s): 64 clusters: kernel %s; rank 1's wait completed in %u, watchdog timeouts "
        "%u\n",
        argv[2], local ? "misuse cluster" : "misuse unfenced-init",
        e == cudaSuccess ? "no error" : cudaGetErrorString(e), done, wd.timeouts);
    return 0;
  }
  if (argc > 1 && std::strcmp(argv[1], "--lifetime") == 0) {
    launch_cluster(lifetime_misuse, dim3(2 * 64), dim3(2, 1), 32, 128, 2'000'000ull);
    const cudaError_t e = cudaDeviceSynchronize();
    std::printf("lifetime misuse (emulator: lifetime): 64 clusters, rank 0 arrives on exited rank 1's barrier: %s\n",
                e == cudaSuccess ? "no error reported" : cudaGetErrorString(e));
    return 0;
  }
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  int failures = 0;
  cudaDeviceProp prop{};
  MBCHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  const std::uint32_t sms = static_cast<std::uint32_t>(prop.multiProcessorCount);

  // 1. cluster-gemm, bit for bit
  struct Shape {
    std::uint32_t cx, cy;
    bool ordered;
  };
  for (const Shape s : {Shape{2, 1, false}, Shape{2, 1, true}, Shape{2, 2, false}, Shape{2, 2, true}}) {
    ClusterGemmParams p;
    p.tiles = quick ? 2 : 16;
    p.k_blocks = quick ? 2 : 8;
    p.a_elems = 512;
    p.b_elems = 512;
    p.ordered = s.ordered;
    const std::uint32_t clusters = quick ? 2 : sms / (s.cx * s.cy);
    int worst = 0;
    for (int run = 0; run < (quick ? 1 : 5); ++run) {
      const int w = run_cluster_gemm<4>(s.cx, s.cy, clusters, p);
      worst = w != 0 ? w : worst;
      failures += w != 0;
    }
    std::printf("cluster-gemm %ux%u x %u clusters, %s, 4 stages, %u tiles x %u k-blocks, %d runs: %s\n", s.cx, s.cy,
                clusters, s.ordered ? "named-barrier order" : "no order", p.tiles, p.k_blocks, quick ? 1 : 5,
                worst == 0  ? "bit-exact"
                : worst < 0 ? "WATCHDOG FIRED"
                            : "WRONG OUTPUT");
  }
  if (quick) {
    std::printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
    return failures ? 1 : 0;
  }

  // 2. deadlocking mutations end by the watchdog
  MBCHECK_CUDA(dev::watchdog_set_budget(200'000'000ull));
  for (auto [mutation, name] : {std::pair{ClusterGemmMutation::wrong_multicast_mask, "wrong-multicast-mask"},
                                std::pair{ClusterGemmMutation::skip_remote_arrivals, "skip-remote-arrivals"}}) {
    ClusterGemmParams p;
    p.tiles = 2;
    p.k_blocks = 2;
    p.a_elems = 512;
    p.b_elems = 512;
    p.mutation = mutation;
    unsigned long long fired = 0;
    run_cluster_gemm<2>(2, 1, 4, p, &fired);
    std::printf("cluster-gemm mutation %s (emulator: deadlock): watchdog %s\n", name,
                fired ? "fired (deadlock ended)" : "DID NOT fire");
    failures += fired == 0;
  }
  MBCHECK_CUDA(dev::watchdog_set_budget(dev::kDefaultWatchdogCycles));

  // 3. litmus
  {
    unsigned int* stale = counter();
    launch_cluster(litmus_remote_arrive, dim3(2 * (sms / 2)), dim3(2, 1), 128, 1024, 2000u, stale);
    MBCHECK_CUDA(cudaDeviceSynchronize());
    const unsigned int v = read_and_free(stale);
    std::printf(
        "litmus remote arrive (DSMEM store, arrive.release.cluster, peer waits): %u clusters x 2000 rounds "
        "x 128 x 128 reads, stale: %u (forbidden)\n",
        sms / 2, v);
    failures += v != 0;
  }
  {
    std::vector<std::uint32_t> src(1024);
    for (std::uint32_t i = 0; i < 1024; ++i) src[i] = i * 2654435761u;
    std::uint32_t* d_src = nullptr;
    MBCHECK_CUDA(cudaMalloc(&d_src, 4096));
    MBCHECK_CUDA(cudaMemcpy(d_src, src.data(), 4096, cudaMemcpyHostToDevice));
    for (std::uint32_t cy : {1u, 2u}) {
      unsigned int* wrong = counter();
      MBCHECK_CUDA(dev::watchdog_clear());
      launch_cluster(litmus_multicast, dim3(2 * (sms / (2 * cy)), cy), dim3(2, cy), 128, 2048, d_src, 1000u, wrong);
      MBCHECK_CUDA(cudaDeviceSynchronize());
      dev::WatchdogRecord wd{};
      MBCHECK_CUDA(dev::watchdog_read(&wd));
      const unsigned int v = read_and_free(wrong);
      std::printf(
          "litmus multicast to every CTA of a 2x%u cluster: %u clusters x 1000 rounds, wrong words: %u, "
          "barriers never completed: %u (both forbidden)\n",
          cy, sms / (2 * cy), v, wd.timeouts);
      failures += v != 0 || wd.fired != 0;
    }
    MBCHECK_CUDA(cudaFree(d_src));
  }
  {
    unsigned int* completed = counter();
    MBCHECK_CUDA(dev::watchdog_clear());
    launch_cluster(litmus_remote_complete_tx, dim3(2 * (sms / 2)), dim3(2, 1), 32, 128, 1000u, completed);
    MBCHECK_CUDA(cudaDeviceSynchronize());
    dev::WatchdogRecord wd{};
    MBCHECK_CUDA(dev::watchdog_read(&wd));
    const unsigned int v = read_and_free(completed);
    std::printf(
        "litmus remote complete_tx (4 x 16 B from the peer per round): %u clusters x 1000 rounds, rounds "
        "completed: %u of %u, waits never completed: %u (anything else forbidden)\n",
        sms / 2, v, (sms / 2) * 1000, wd.timeouts);
    failures += v != (sms / 2) * 1000u || wd.fired != 0;
  }
  {
    unsigned int* stale = counter();
    launch_cluster(litmus_cluster_barrier, dim3(2 * (sms / 2)), dim3(2, 1), 256, 1024, 2000u, stale);
    MBCHECK_CUDA(cudaDeviceSynchronize());
    const unsigned int v = read_and_free(stale);
    std::printf(
        "litmus barrier.cluster (DSMEM store, arrive.release, wait.acquire): %u clusters x 2000 rounds x 256 "
        "reads, stale: %u (forbidden)\n",
        sms / 2, v);
    failures += v != 0;
  }
  const char* names[] = {"__syncwarp", "elect.sync", "wgmma.fence/commit_group/wait_group (warp group)"};
  for (int kind = 0; kind < 3; ++kind) {
    unsigned int* early = counter();
    unsigned long long* slack = nullptr;
    MBCHECK_CUDA(cudaMalloc(&slack, sizeof(unsigned long long)));
    MBCHECK_CUDA(cudaMemset(slack, 0, sizeof(unsigned long long)));
    litmus_rendezvous<<<sms * 4, 128>>>(kind, 100'000ull, early, slack);
    MBCHECK_CUDA(cudaGetLastError());
    MBCHECK_CUDA(cudaDeviceSynchronize());
    unsigned long long max_slack = 0;
    MBCHECK_CUDA(cudaMemcpy(&max_slack, slack, sizeof(max_slack), cudaMemcpyDeviceToHost));
    MBCHECK_CUDA(cudaFree(slack));
    const unsigned int v = read_and_free(early);
    std::printf(
        "litmus rendezvous %s, one %s delayed 100000 cycles: %u CTAs x 128 threads, left before it came: %u "
        "(the emulator forbids it); latest exit after its entry: %llu cycles\n",
        names[kind], kind == 2 ? "warp" : "lane", sms * 4, v, max_slack);
    failures += v != 0;
  }
  std::printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
  return failures ? 1 : 0;
}
