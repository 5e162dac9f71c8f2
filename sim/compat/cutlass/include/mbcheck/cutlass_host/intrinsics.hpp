// The CUDA device intrinsics a host compiler is not given (cuda_runtime.h declares them only
// under __CUDACC__), for CUTLASS headers that name them whether or not the kernel at hand calls
// them. Those that synchronise are the Platform calls of their PTX instruction; arithmetic ones
// compute what the CUDA Math API documents; those the host model does not have (32-bit global
// atomics, memory fences with their ordering) end the execution with a clear message when a
// kernel reaches them, never silently.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "sim/host_platform.hpp"

namespace mbcheck::cutlass_host {

// A 32-bit shfl.sync.idx of any value of 4 bytes or fewer (CUDA's overloads on int, unsigned,
// float, and bool or narrower integers through int), and of 8 bytes as two (as CUDA does).
template <class T>
T shfl_idx(unsigned mask, T value, unsigned src, CallSite site) {
  using P = sim::HostPlatform;
  if constexpr (sizeof(T) == 8) {
    std::uint64_t bits;
    std::memcpy(&bits, &value, 8);
    const std::uint64_t lo = P::shfl_sync_idx(mask, static_cast<std::uint32_t>(bits), src, site);
    const std::uint64_t hi = P::shfl_sync_idx(mask, static_cast<std::uint32_t>(bits >> 32), src, site);
    bits = lo | hi << 32;
    T out;
    std::memcpy(&out, &bits, 8);
    return out;
  } else if constexpr (sizeof(T) == 4) {
    std::uint32_t bits;
    std::memcpy(&bits, &value, 4);
    bits = P::shfl_sync_idx(mask, bits, src, site);
    T out;
    std::memcpy(&out, &bits, 4);
    return out;
  } else {
    static_assert(std::is_integral_v<T>, "__shfl_sync moves 4- or 8-byte values, or integers (as int)");
    return static_cast<T>(
        static_cast<int>(P::shfl_sync_idx(mask, static_cast<std::uint32_t>(static_cast<int>(value)), src, site)));
  }
}

[[noreturn]] void not_modelled(const char* what);

}  // namespace mbcheck::cutlass_host

// shfl.sync.idx.b32 (the lanes' values are exchanged through the rendezvous)
template <class T>
inline T __shfl_sync(unsigned mask, T value, int src_lane, int width = 32,
                     ::mbcheck::CallSite site = ::mbcheck::CallSite::current()) {
  const unsigned lane = ::mbcheck::sim::HostPlatform::lane_idx();
  const unsigned base = lane & ~static_cast<unsigned>(width - 1);
  return ::mbcheck::cutlass_host::shfl_idx(mask, value, base + (static_cast<unsigned>(src_lane) % width), site);
}
// shfl.sync.up.b32: lane - delta within the lane's segment of `width`, else its own value.
template <class T>
inline T __shfl_up_sync(unsigned mask, T value, unsigned delta, int width = 32,
                        ::mbcheck::CallSite site = ::mbcheck::CallSite::current()) {
  const unsigned lane = ::mbcheck::sim::HostPlatform::lane_idx();
  const unsigned in_seg = lane % width;
  const unsigned src = in_seg >= delta ? lane - delta : lane;
  return ::mbcheck::cutlass_host::shfl_idx(mask, value, src, site);
}
// shfl.sync.down.b32
template <class T>
inline T __shfl_down_sync(unsigned mask, T value, unsigned delta, int width = 32,
                          ::mbcheck::CallSite site = ::mbcheck::CallSite::current()) {
  const unsigned lane = ::mbcheck::sim::HostPlatform::lane_idx();
  const unsigned in_seg = lane % width;
  const unsigned src = in_seg + delta < static_cast<unsigned>(width) ? lane + delta : lane;
  return ::mbcheck::cutlass_host::shfl_idx(mask, value, src, site);
}
// shfl.sync.bfly.b32
template <class T>
inline T __shfl_xor_sync(unsigned mask, T value, int lane_mask, int width = 32,
                         ::mbcheck::CallSite site = ::mbcheck::CallSite::current()) {
  const unsigned lane = ::mbcheck::sim::HostPlatform::lane_idx();
  const unsigned src = lane ^ static_cast<unsigned>(lane_mask);
  const unsigned base = lane & ~static_cast<unsigned>(width - 1);
  return ::mbcheck::cutlass_host::shfl_idx(mask, value, (src & ~static_cast<unsigned>(width - 1)) == base ? src : lane,
                                           site);
}

// bar.red.{and,or,popc} 0 over the CTA
inline int __syncthreads_and(int pred, ::mbcheck::CallSite site = ::mbcheck::CallSite::current()) {
  using P = ::mbcheck::sim::HostPlatform;
  return P::bar_red_and(0, P::block_dim(), pred != 0, site);
}
inline int __syncthreads_or(int pred, ::mbcheck::CallSite site = ::mbcheck::CallSite::current()) {
  using P = ::mbcheck::sim::HostPlatform;
  return P::bar_red_or(0, P::block_dim(), pred != 0, site);
}
inline int __syncthreads_count(int pred, ::mbcheck::CallSite site = ::mbcheck::CallSite::current()) {
  using P = ::mbcheck::sim::HostPlatform;
  return static_cast<int>(P::bar_red_popc(0, P::block_dim(), pred != 0, site));
}

// membar / fence.sc: the host model has no fences of the generic proxy beyond what its
// synchronising instructions give (docs/semantics.md); a kernel relying on one is not checked.
inline void __threadfence() { ::mbcheck::cutlass_host::not_modelled("__threadfence (fence.sc.gpu)"); }
inline void __threadfence_block() { ::mbcheck::cutlass_host::not_modelled("__threadfence_block (fence.sc.cta)"); }
inline void __threadfence_system() { ::mbcheck::cutlass_host::not_modelled("__threadfence_system (fence.sc.sys)"); }

// Global atomics of 32 bits (and float/double adds): not in the host model (its atomics are
// 64-bit words, P::atomic_*).
template <class T, class U>
inline T atomicAdd(T*, U) {
  ::mbcheck::cutlass_host::not_modelled("atomicAdd");
}
template <class T, class U>
inline T atomicSub(T*, U) {
  ::mbcheck::cutlass_host::not_modelled("atomicSub");
}
template <class T, class U>
inline T atomicMax(T*, U) {
  ::mbcheck::cutlass_host::not_modelled("atomicMax");
}
template <class T, class U>
inline T atomicMin(T*, U) {
  ::mbcheck::cutlass_host::not_modelled("atomicMin");
}
template <class T, class U>
inline T atomicExch(T*, U) {
  ::mbcheck::cutlass_host::not_modelled("atomicExch");
}
template <class T, class U, class V>
inline T atomicCAS(T*, U, V) {
  ::mbcheck::cutlass_host::not_modelled("atomicCAS");
}

// Integer intrinsics (CUDA Math API, integer intrinsics)
inline int __ffs(int x) { return x == 0 ? 0 : std::countr_zero(static_cast<unsigned>(x)) + 1; }
inline int __ffsll(long long x) { return x == 0 ? 0 : std::countr_zero(static_cast<unsigned long long>(x)) + 1; }
inline int __popc(unsigned x) { return std::popcount(x); }
inline int __popcll(unsigned long long x) { return std::popcount(x); }
inline int __clz(int x) { return std::countl_zero(static_cast<unsigned>(x)); }
inline int __clzll(long long x) { return std::countl_zero(static_cast<unsigned long long>(x)); }
inline unsigned __brev(unsigned x) {
  unsigned r = 0;
  for (int i = 0; i < 32; ++i) r |= ((x >> i) & 1u) << (31 - i);
  return r;
}
// prmt.b32 in its default mode: byte i of the result is byte (s >> 4i) & 7 of {y, x}.
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  const std::uint64_t bytes = static_cast<std::uint64_t>(y) << 32 | x;
  unsigned r = 0;
  for (int i = 0; i < 4; ++i) r |= static_cast<unsigned>(bytes >> (8 * ((s >> (4 * i)) & 7u)) & 0xffu) << (8 * i);
  return r;
}
// dp4a.s32.s32: a's and b's four signed bytes multiplied pairwise, summed, plus c.
inline int __dp4a(int a, int b, int c) {
  for (int i = 0; i < 4; ++i)
    c += static_cast<std::int8_t>(static_cast<unsigned>(a) >> (8 * i)) *
         static_cast<std::int8_t>(static_cast<unsigned>(b) >> (8 * i));
  return c;
}
inline int __dp4a(unsigned a, unsigned b, unsigned c) {
  unsigned r = c;
  for (int i = 0; i < 4; ++i) r += ((a >> (8 * i)) & 0xffu) * ((b >> (8 * i)) & 0xffu);
  return static_cast<int>(r);
}
inline int __float_as_int(float f) { return std::bit_cast<int>(f); }
inline unsigned __float_as_uint(float f) { return std::bit_cast<unsigned>(f); }
inline float __int_as_float(int i) { return std::bit_cast<float>(i); }
inline float __uint_as_float(unsigned i) { return std::bit_cast<float>(i); }
inline long long __double_as_longlong(double d) { return std::bit_cast<long long>(d); }
inline double __longlong_as_double(long long i) { return std::bit_cast<double>(i); }
