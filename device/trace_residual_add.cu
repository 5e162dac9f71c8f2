// GPU trace recorder: runs the residual-add epilogue on the tracing Platform
// (device/trace_platform.cuh) for several shapes, checks D bit-exact, and writes every CTA's
// log as text for the host replay (tests/trace/trace_replay.cpp):
//   run <id> stages <S> ctas <C> store_warps <W> num_elems <N> tile_elems <T>
//   <cta> <seq> <op> <barrier> <thread> <arg>          (one line per record, in seq order)
//
//   trace_residual_add <trace file>
#include <cstring>
#include <vector>

#include "device/cuda_check.cuh"
#include "device/trace_platform.cuh"
#include "spec/kernels/residual_add.hpp"

namespace {

using namespace mbcheck;
using namespace mbcheck::dev;

template <int Stages>
__global__ void traced_residual_add(ResidualAddParams p) {
  residual_add_kernel<TracingDevicePlatform, Stages>(p);
}

template <int Stages>
void launch(const ResidualAddParams& p, unsigned ctas) {
  const unsigned smem = residual_add_smem_bytes<TracingDevicePlatform, Stages>(p);
  MBCHECK_CUDA(cudaFuncSetAttribute(traced_residual_add<Stages>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(smem)));
  traced_residual_add<Stages><<<ctas, 32 * (1 + p.store_warps), smem>>>(p);
  MBCHECK_CUDA(cudaGetLastError());
}

struct Shape {
  int stages;
  unsigned ctas, store_warps, num_elems, tile_elems;
};

// Returns whether the run was bit-exact, the log complete and the watchdog silent.
bool trace_shape(int id, const Shape& s, std::FILE* file) {
  ResidualAddParams p;
  p.num_elems = s.num_elems;
  p.tile_elems = s.tile_elems;
  p.store_warps = s.store_warps;
  p.beta = 0.5f;
  const size_t bytes = size_t{s.num_elems} * sizeof(float);
  std::vector<float> accum(s.num_elems), c(s.num_elems), d(s.num_elems), want(s.num_elems);
  SplitMix64 gen{0x7ace0000ull + id};
  for (unsigned i = 0; i < s.num_elems; ++i) {
    accum[i] = gen.real();
    c[i] = gen.real();
  }
  residual_add_reference(accum.data(), c.data(), p.beta, want.data(), s.num_elems);
  float *d_accum, *d_c, *d_d;
  MBCHECK_CUDA(cudaMalloc(&d_accum, bytes));
  MBCHECK_CUDA(cudaMalloc(&d_c, bytes));
  MBCHECK_CUDA(cudaMalloc(&d_d, bytes));
  MBCHECK_CUDA(cudaMemcpy(d_accum, accum.data(), bytes, cudaMemcpyHostToDevice));
  MBCHECK_CUDA(cudaMemcpy(d_c, c.data(), bytes, cudaMemcpyHostToDevice));
  MBCHECK_CUDA(cudaMemset(d_d, 0xff, bytes));
  p.accum = d_accum;
  p.c = d_c;
  p.d = d_d;

  const unsigned tiles = residual_add_num_tiles(p);
  const unsigned per_cta_tiles = (tiles + s.ctas - 1) / s.ctas;
  TraceLog log;
  log.capacity = 64 + per_cta_tiles * (4 + 2 * 32 * s.store_warps);
  MBCHECK_CUDA(cudaMalloc(&log.records, size_t{s.ctas} * log.capacity * sizeof(TraceRecord)));
  MBCHECK_CUDA(cudaMalloc(&log.counters, s.ctas * sizeof(unsigned)));
  MBCHECK_CUDA(cudaMemset(log.counters, 0, s.ctas * sizeof(unsigned)));
  MBCHECK_CUDA(trace_log_set(log));
  MBCHECK_CUDA(watchdog_clear());

  switch (s.stages) {
    case 1: launch<1>(p, s.ctas); break;
    case 2: launch<2>(p, s.ctas); break;
    case 3: launch<3>(p, s.ctas); break;
    default: launch<4>(p, s.ctas); break;
  }
  MBCHECK_CUDA(cudaDeviceSynchronize());
  WatchdogRecord wd{};
  MBCHECK_CUDA(watchdog_read(&wd));
  std::vector<TraceRecord> records(size_t{s.ctas} * log.capacity);
  std::vector<unsigned> counters(s.ctas);
  MBCHECK_CUDA(cudaMemcpy(records.data(), log.records, records.size() * sizeof(TraceRecord), cudaMemcpyDeviceToHost));
  MBCHECK_CUDA(cudaMemcpy(counters.data(), log.counters, s.ctas * sizeof(unsigned), cudaMemcpyDeviceToHost));
  MBCHECK_CUDA(cudaMemcpy(d.data(), d_d, bytes, cudaMemcpyDeviceToHost));

  bool overflow = false;
  size_t total = 0;
  std::fprintf(file, "run %d stages %d ctas %u store_warps %u num_elems %u tile_elems %u\n", id, s.stages, s.ctas,
               s.store_warps, s.num_elems, s.tile_elems);
  for (unsigned cta = 0; cta < s.ctas; ++cta) {
    overflow = overflow || counters[cta] > log.capacity;
    for (unsigned i = 0; i < counters[cta] && i < log.capacity; ++i) {
      const TraceRecord& r = records[size_t{cta} * log.capacity + i];
      std::fprintf(file, "%u %u %u %u %u %lld\n", cta, r.seq, r.op, r.barrier, r.thread, r.arg);
      ++total;
    }
  }
  const bool exact = std::memcmp(d.data(), want.data(), bytes) == 0;
  std::printf(
      "trace run %d: stages %d, %u CTAs x %u store warps, %u elems / tile %u: %zu records%s, D %s, watchdog %s\n", id,
      s.stages, s.ctas, s.store_warps, s.num_elems, s.tile_elems, total, overflow ? " (OVERFLOW)" : "",
      exact ? "bit-exact" : "WRONG", wd.fired ? "FIRED" : "silent");
  cudaFree(d_accum);
  cudaFree(d_c);
  cudaFree(d_d);
  cudaFree(log.records);
  cudaFree(log.counters);
  return exact && !overflow && !wd.fired;
}

}  // namespace

int main(int argc, char** argv) {
  std::FILE* file = std::fopen(argc > 1 ? argv[1] : "traces.txt", "w");
  if (!file) return 2;
  const Shape shapes[] = {
      {1, 4, 1, 16 * 1024 + 36, 1024},  // small, ragged: the sample the CI replays
      {2, 4, 1, 32 * 512, 512},         // small
      {1, 64, 4, (1u << 18) + 36, 1024}, {2, 132, 4, 1u << 19, 2048}, {3, 96, 4, (1u << 18) + 1028, 1024},
      {4, 132, 4, 1u << 19, 1024},
  };
  int failures = 0;
  int id = 0;
  for (const Shape& s : shapes) failures += trace_shape(id++, s, file) ? 0 : 1;
  std::fclose(file);
  std::printf("%s: %d trace run(s) failed\n", failures ? "FAIL" : "PASS", failures);
  return failures ? 1 : 0;
}
