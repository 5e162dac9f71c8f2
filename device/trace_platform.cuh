// A logging variant of the device Platform, for trace conformance: every barrier operation
// and bulk-copy issue appends a record to its CTA's log, ordered by a per-CTA atomic counter.
// The sequence number of an operation that signals (init, arrive, expect_tx, complete_tx,
// copy issue) is taken BEFORE it, and that of a wait AFTER it returns, so a wait's record
// always follows the records of the operations that completed the phase it saw (the arrive's
// release and the wait's acquire order the counter updates). The host replays each CTA's
// log through sim::MbarrierState (tests/trace/trace_replay.cpp).
#pragma once

#include "device/platform.cuh"

namespace mbcheck::dev {

enum class TraceOp : unsigned char { init = 1, arrive, arrive_expect_tx, expect_tx, complete_tx, bulk_copy, wait };

struct TraceRecord {
  long long arg;          // count, bytes, or the FULL phase a wait returned for
  unsigned seq;           // position in the CTA's log
  unsigned short thread;  // threadIdx.x
  unsigned char op;       // TraceOp
  unsigned char barrier;  // barrier index: smem offset / 8
};

struct TraceLog {
  TraceRecord* records = nullptr;  // [ctas][capacity]
  unsigned* counters = nullptr;    // [ctas]: records taken (may exceed capacity: overflow)
  unsigned capacity = 0;
};

static __constant__ TraceLog trace_log;

static inline cudaError_t trace_log_set(const TraceLog& log) {
  return cudaMemcpyToSymbol(trace_log, &log, sizeof(log));
}

struct TracingDevicePlatform : DevicePlatform {
  __device__ static unsigned barrier_index(const Barrier& b) {
    return (ptx::smem_addr(&b) - ptx::smem_addr(shared_memory())) / sizeof(Barrier);
  }
  __device__ static void record(TraceOp op, const Barrier& b, long long arg) {
    const unsigned seq = atomicAdd(&trace_log.counters[blockIdx.x], 1u);
    if (seq >= trace_log.capacity) return;  // the host sees the overflow in the counter
    TraceRecord& r = trace_log.records[static_cast<size_t>(blockIdx.x) * trace_log.capacity + seq];
    r.arg = arg;
    r.seq = seq;
    r.thread = static_cast<unsigned short>(threadIdx.x);
    r.op = static_cast<unsigned char>(op);
    r.barrier = static_cast<unsigned char>(barrier_index(b));
  }

  __device__ static void mbarrier_init(Barrier& b, std::uint32_t count) {
    record(TraceOp::init, b, count);
    DevicePlatform::mbarrier_init(b, count);
  }
  __device__ static Token mbarrier_arrive(Barrier& b, std::uint32_t count = 1) {
    record(TraceOp::arrive, b, count);
    return DevicePlatform::mbarrier_arrive(b, count);
  }
  __device__ static Token mbarrier_arrive_expect_tx(Barrier& b, std::uint32_t bytes) {
    record(TraceOp::arrive_expect_tx, b, bytes);
    return DevicePlatform::mbarrier_arrive_expect_tx(b, bytes);
  }
  __device__ static void mbarrier_expect_tx(Barrier& b, std::uint32_t bytes) {
    record(TraceOp::expect_tx, b, bytes);
    DevicePlatform::mbarrier_expect_tx(b, bytes);
  }
  __device__ static void mbarrier_complete_tx(Barrier& b, std::uint32_t bytes) {
    record(TraceOp::complete_tx, b, bytes);
    DevicePlatform::mbarrier_complete_tx(b, bytes);
  }
  __device__ static void mbarrier_wait_parity(Barrier& b, std::int64_t phase) {
    DevicePlatform::mbarrier_wait_parity(b, phase);
    record(TraceOp::wait, b, phase);
  }
  __device__ static void cp_async_bulk_global_to_shared(void* smem, const void* gmem, std::uint32_t bytes, Barrier& b) {
    record(TraceOp::bulk_copy, b, bytes);
    DevicePlatform::cp_async_bulk_global_to_shared(smem, gmem, bytes, b);
  }
};

}  // namespace mbcheck::dev
