// Litmus tests of the generic/async proxy boundary in shared memory, each variant with and
// without fence.proxy.async.shared::cta, side by side (a measurement: exit 0 unless a CUDA
// error):
//  - proxy-read-then-async-write: a consumer warp reads a stage with ld.shared.v4.u32 (32 loads
//    of 16 B per lane, kept in registers), then (fenced) fence.proxy.async.shared::cta, then
//    releases it (mbarrier.arrive.release.cta on empty[s]); the producer waits (try_wait.parity
//    acquire) and overwrites the stage with the next round's bytes by cp.async.bulk (complete_tx
//    on full[s]). The values are checked after the release: a violation is a word of a later
//    round (the async write overtook the generic read). PTX's memory model puts the two accesses
//    in different proxies; the emulator asks for no fence on this direction (docs/semantics.md,
//    "Bulk stores, wait_group.read and fence.proxy.async" covers only generic write -> async read).
//  - proxy-ldmatrix-then-async-write: the same with the reads by ldmatrix.x4 (wgmma/mma operand
//    loads read shared memory this way).
//  - proxy-write-then-async-read: the direction the emulator does require a fence for: a writer
//    warp stores a stage with st.shared.v4.u32, (fenced) fences, arrives on full[s]; a storer
//    thread waits, bulk-stores the stage to global (cp.async.bulk.global.shared::cta, wait_group
//    0), arrives on done[s]; a checker warp reads the global copy (ld.global.cg) and releases the
//    stage. A violation is a stored word of an earlier round: the store carried stale bytes.
// Every SM runs 2 CTAs, 4 stages of 16 KiB each, 10,000 rounds by default (a number argument);
// `--quick` is 2 CTAs x 20 rounds for the sanitizers; `--only fenced|unfenced` runs half the
// variants. Waits are bounded by the watchdog (device/watchdog.cuh).
#include <cstdlib>
#include <cstring>
#include <vector>

#include "device/cuda_check.cuh"
#include "device/platform.cuh"
#include "device/watchdog.cuh"

using namespace mbcheck;
using P = dev::DevicePlatform;
using u32 = std::uint32_t;
using ull = unsigned long long;

namespace {

constexpr u32 kStages = 4, kStageWords = 4096, kLoads = 32;  // 32 lanes x 32 x 16 B = 16 KiB
constexpr u32 kPatterns = 256;                               // rounds of source data in global memory
constexpr u32 kDstSlots = 8;                                 // global copies per CTA (write direction)
constexpr u32 kBarBytes = 1024, kSmemBytes = kBarBytes + kStages * kStageWords * 4;

// Round r's word i: the round's tag (r mod 256) above the index.
__host__ __device__ constexpr u32 pattern(u32 r, u32 i) { return ((r % kPatterns) << 16) | i; }

__device__ u32 sa(const void* p) { return dev::ptx::smem_addr(p); }
__device__ P::Barrier* bars(u32 set) { return reinterpret_cast<P::Barrier*>(P::shared_memory()) + set * kStages; }
__device__ u32* stage(u32 s) { return reinterpret_cast<u32*>(P::shared_memory() + kBarBytes) + s * kStageWords; }

// try_wait.parity (acquire.cta) until the phase completes; false after the watchdog budget
// (recorded), and the caller leaves its loop.
__device__ bool wait_bounded(P::Barrier& b, u32 parity) {
  const ull start = clock64();
  while (!P::mbarrier_try_wait_parity_bit(b, parity)) {
    const ull waited = clock64() - start;
    if (waited > dev::watchdog_budget_cycles) {
      dev::watchdog_record_timeout(static_cast<int>(sa(&b) - sa(P::shared_memory())), parity, waited);
      return false;
    }
  }
  return true;
}

// Outcome counters, summed over the grid: out[0] violations, out[1] other rounds' words, out[2]
// garbage, out[3] rounds completed.
struct Tally {
  ull violations = 0, other = 0, garbage = 0;
  // `v` read in round r at word i. Read direction: a later round's word is a violation (the async
  // write overtook the generic read), an earlier one `other` (the full barrier did not order the
  // copy). Write direction: an earlier round's word is a violation (the store carried stale
  // bytes), except the destination's previous copy (kDstSlots rounds back): `other`.
  __device__ void add(u32 v, u32 r, u32 i, bool write_direction) {
    if (v == pattern(r, i)) return;
    if ((v & 0xFFFFu) != i) return void(++garbage);
    const u32 ahead = ((v >> 16) - r) % kPatterns, behind = (r - (v >> 16)) % kPatterns;
    if (!write_direction) return void(ahead < kPatterns / 2 ? ++violations : ++other);
    return void(behind == kDstSlots ? ++other : behind < kPatterns / 2 ? ++violations : ++garbage);
  }
  __device__ void flush(ull* out) {
    if (violations) atomicAdd(&out[0], violations);
    if (other) atomicAdd(&out[1], other);
    if (garbage) atomicAdd(&out[2], garbage);
  }
};

// Reader 0: ld.shared.v4.u32, lane l's load j at words 4 (32 j + l) .. +3. Reader 1:
// ldmatrix.sync.aligned.m8n8.x4.shared.b16, lane l addressing row l of 512 B at j: register m of
// lane l holds word 128 j + 4 (8 m + l / 4) + l % 4.
template <int Reader>
__device__ void load_stage(const u32* st, u32 lane, u32 (&v)[kLoads][4]) {
#pragma unroll
  for (u32 j = 0; j < kLoads; ++j) {
    const u32 addr = Reader == 0 ? sa(st) + (j * 32 + lane) * 16 : sa(st) + j * 512 + lane * 16;
    if (Reader == 0)
      asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(v[j][0]), "=r"(v[j][1]), "=r"(v[j][2]), "=r"(v[j][3])
                   : "r"(addr)
                   : "memory");
    else
      asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                   : "=r"(v[j][0]), "=r"(v[j][1]), "=r"(v[j][2]), "=r"(v[j][3])
                   : "r"(addr)
                   : "memory");
  }
}
template <int Reader>
__device__ u32 word_index(u32 j, u32 lane, u32 c) {
  return Reader == 0 ? (j * 32 + lane) * 4 + c : j * 128 + (8 * c + lane / 4) * 4 + lane % 4;
}

// Generic read, then async write. Warp 0 lane 0 produces, warp 1 consumes.
template <int Reader>
__global__ void __launch_bounds__(64) read_then_async_write(const u32* src, u32 rounds, bool fenced, ull* out) {
  P::Barrier *full = bars(0), *empty = bars(1);
  const u32 t = threadIdx.x, lane = t % 32;
  if (t == 0)
    for (u32 s = 0; s < kStages; ++s) P::mbarrier_init(full[s], 1), P::mbarrier_init(empty[s], 32);
  __syncthreads();
  if (t == 0) {
    for (u32 r = 0; r < rounds; ++r) {
      const u32 s = r % kStages, k = r / kStages;
      if (k > 0 && !wait_bounded(empty[s], k - 1)) break;  // the release of round r - kStages
      P::mbarrier_arrive_expect_tx(full[s], kStageWords * 4);
      P::cp_async_bulk_global_to_shared(stage(s), src + (r % kPatterns) * kStageWords, kStageWords * 4, full[s]);
    }
  } else if (t >= 32) {
    Tally tally;
    u32 r = 0;
    for (; r < rounds; ++r) {
      const u32 s = r % kStages;
      if (!wait_bounded(full[s], r / kStages)) break;
      u32 v[kLoads][4];
      load_stage<Reader>(stage(s), lane, v);
      if (fenced) P::fence_proxy_async_shared_cta();
      (void)P::mbarrier_arrive(empty[s]);
#pragma unroll
      for (u32 j = 0; j < kLoads; ++j)
        for (u32 c = 0; c < 4; ++c) tally.add(v[j][c], r, word_index<Reader>(j, lane, c), false);
    }
    tally.flush(out);
    if (lane == 0) atomicAdd(&out[3], ull{r});
  }
}

// Generic write, then async read. Warp 0 lane 0 stores (bulk), warp 1 writes, warp 2 checks.
__global__ void __launch_bounds__(96) write_then_async_read(u32* dst, u32 rounds, bool fenced, ull* out) {
  P::Barrier *full = bars(0), *empty = bars(1), *done = bars(2);
  const u32 t = threadIdx.x, warp = t / 32, lane = t % 32;
  u32* copies = dst + std::size_t{blockIdx.x} * kDstSlots * kStageWords;
  if (t == 0)
    for (u32 s = 0; s < kStages; ++s)
      P::mbarrier_init(full[s], 32), P::mbarrier_init(empty[s], 32), P::mbarrier_init(done[s], 1);
  __syncthreads();
  if (t == 0) {
    for (u32 r = 0; r < rounds; ++r) {
      const u32 s = r % kStages;
      if (!wait_bounded(full[s], r / kStages)) break;
      P::cp_async_bulk_shared_to_global(copies + (r % kDstSlots) * kStageWords, stage(s), kStageWords * 4);
      P::cp_async_bulk_commit_group();
      P::cp_async_bulk_wait_group(0);  // read, written, and visible to this thread
      (void)P::mbarrier_arrive(done[s]);
    }
  } else if (warp == 1) {
    for (u32 r = 0; r < rounds; ++r) {
      const u32 s = r % kStages, k = r / kStages;
      if (k > 0 && !wait_bounded(empty[s], k - 1)) break;
      const u32 base = sa(stage(s));
#pragma unroll
      for (u32 j = 0; j < kLoads; ++j) {
        const u32 i = (j * 32 + lane) * 4;
        asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};" ::"r"(base + i * 4), "r"(pattern(r, i)),
                     "r"(pattern(r, i + 1)), "r"(pattern(r, i + 2)), "r"(pattern(r, i + 3))
                     : "memory");
      }
      if (fenced) P::fence_proxy_async_shared_cta();
      (void)P::mbarrier_arrive(full[s]);
    }
  } else if (warp == 2) {
    Tally tally;
    u32 r = 0;
    for (; r < rounds; ++r) {
      const u32 s = r % kStages;
      if (!wait_bounded(done[s], r / kStages)) break;
      const u32* copy = copies + (r % kDstSlots) * kStageWords;
      for (u32 j = 0; j < kLoads; ++j) {
        const u32 i = (j * 32 + lane) * 4;
        u32 v[4];
        asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3])
                     : "l"(copy + i)
                     : "memory");
        for (u32 c = 0; c < 4; ++c) tally.add(v[c], r, i + c, true);
      }
      (void)P::mbarrier_arrive(empty[s]);
    }
    tally.flush(out);
    if (lane == 0) atomicAdd(&out[3], ull{r});
  }
}

template <class Kernel, class... Args>
void measure(const char* name, const char* extra, Kernel kernel, u32 ctas, u32 threads, u32 rounds, bool fenced,
             Args... args) {
  ull* d_out = nullptr;
  MBCHECK_CUDA(cudaMalloc(&d_out, 4 * sizeof(ull)));
  MBCHECK_CUDA(cudaMemset(d_out, 0, 4 * sizeof(ull)));
  MBCHECK_CUDA(dev::watchdog_clear());
  MBCHECK_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  kernel<<<ctas, threads, kSmemBytes>>>(args..., rounds, fenced, d_out);
  MBCHECK_CUDA(cudaGetLastError());
  MBCHECK_CUDA(cudaDeviceSynchronize());
  ull o[4];
  dev::WatchdogRecord wd{};
  MBCHECK_CUDA(cudaMemcpy(o, d_out, sizeof o, cudaMemcpyDeviceToHost));
  MBCHECK_CUDA(dev::watchdog_read(&wd));
  MBCHECK_CUDA(cudaFree(d_out));
  std::printf(
      "litmus %s %s: %llu rounds, %llu violations (%u CTAs x %u rounds x %u words; %s %llu, garbage %llu, "
      "watchdog timeouts %u)\n",
      name, fenced ? "fenced" : "unfenced", o[3], o[0], ctas, rounds, kStageWords, extra, o[1], o[2], wd.timeouts);
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  bool quick = false, run[2] = {true, true};  // run[fenced]
  u32 rounds = 10000;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true, rounds = 20;
    } else if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
      const bool fenced = std::strcmp(argv[++i], "fenced") == 0;
      run[!fenced] = false;
    } else {
      rounds = static_cast<u32>(std::strtoul(argv[i], nullptr, 10));
    }
  }
  cudaDeviceProp prop{};
  MBCHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  const u32 ctas = quick ? 2 : 2 * static_cast<u32>(prop.multiProcessorCount);
  // Under a sanitizer every wait is far slower: a larger budget (~20 s) before the watchdog.
  if (quick) MBCHECK_CUDA(dev::watchdog_set_budget(40'000'000'000ull));
  std::printf("%s, %d SMs: %u CTAs, %u stages of %u KiB, %u rounds\n", prop.name, prop.multiProcessorCount, ctas,
              kStages, kStageWords / 256, rounds);

  std::vector<u32> src(std::size_t{kPatterns} * kStageWords);
  for (u32 r = 0; r < kPatterns; ++r)
    for (u32 i = 0; i < kStageWords; ++i) src[std::size_t{r} * kStageWords + i] = pattern(r, i);
  u32 *d_src = nullptr, *d_dst = nullptr;
  MBCHECK_CUDA(cudaMalloc(&d_src, src.size() * 4));
  MBCHECK_CUDA(cudaMemcpy(d_src, src.data(), src.size() * 4, cudaMemcpyHostToDevice));
  MBCHECK_CUDA(cudaMalloc(&d_dst, std::size_t{ctas} * kDstSlots * kStageWords * 4));
  MBCHECK_CUDA(cudaMemset(d_dst, 0xFF, std::size_t{ctas} * kDstSlots * kStageWords * 4));
  const u32* c_src = d_src;
  // Fenced and unfenced back to back per direction, so both see the same machine state.
  for (bool fenced : {true, false})
    if (run[fenced])
      measure("proxy-read-then-async-write", "earlier-round words", read_then_async_write<0>, ctas, 64, rounds, fenced,
              c_src);
  for (bool fenced : {true, false})
    if (run[fenced])
      measure("proxy-ldmatrix-then-async-write", "earlier-round words", read_then_async_write<1>, ctas, 64, rounds,
              fenced, c_src);
  for (bool fenced : {true, false})
    if (run[fenced])
      measure("proxy-write-then-async-read", "previous-copy words", write_then_async_read, ctas, 96, rounds, fenced,
              d_dst);
  MBCHECK_CUDA(cudaFree(d_src));
  MBCHECK_CUDA(cudaFree(d_dst));
  return 0;
}
