// The CUDA language on the host, for CUTLASS code compiled by a host compiler under mbcheck:
// force-included (-include) before anything else in such a translation unit (the CMake target
// mbcheck::cutlass does it). Every thread of a launch is a fiber of the host runtime; the
// builtins below read its identity from the launch the layer is running (launch.hpp), and
// every synchronising builtin is the Platform call of its PTX instruction.
//
// Shared memory: `extern __shared__ T name[]` names one symbol for all CTAs, which the link
// defines as the layer's shared-memory window (--defsym name=mbcheck_cutlass_shared_window:
// the CMake target mbcheck::cutlass does it for the usual names, see its CMakeLists.txt). An
// address in the window is an offset in the CTA's dynamic shared memory, as a 32-bit shared
// address is on the GPU; the layer maps it to the running CTA's own shared memory (each CTA
// its own) where an instruction takes it. While a launch runs, the window's pages are the
// running CTA's (a second mapping of them, switched when a thread of another CTA runs), so a
// plain load or store of shared memory reads and writes that CTA's bytes; outside a launch
// the window admits no access. Plain accesses reach the race detector only from translation
// units built with mbcheck_cutlass_track_accesses (CMake; docs/semantics.md, "Plain accesses
// of unmodified code"): elsewhere they are performed, unchecked.
#pragma once

#include <cstdint>
#include <cstdlib>

// Before the CUDA headers: they define these keywords only where nobody did.
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __shared__
#define __constant__
#define __managed__
#define __grid_constant__
#define __launch_bounds__(...)

#include <cuda_runtime.h>

// CUTLASS decides on its SM90 paths (cluster launch, CUDA_12_0_SM90_FEATURES_SUPPORTED) by the
// compiler's CUDA version: the host compiler plays the one whose runtime headers it sees.
#ifndef __CUDACC_VER_MAJOR__
#define __CUDACC_VER_MAJOR__ (CUDART_VERSION / 1000)
#define __CUDACC_VER_MINOR__ ((CUDART_VERSION % 1000) / 10)
#endif

// CUTLASS compiles its SM90 kernel bodies only for sm_90a (__CUDA_ARCH_FEAT_SM90_ALL; else each
// thread prints "Arch conditional MMA ... Aborting" and returns): the host is that target.
// CUTLASS's config is read first, so that the feature macro does not also switch on its
// device-only paths (tensormap.replace) there.
#if __has_include(<cutlass/arch/config.h>)
#include <cutlass/arch/config.h>
#endif
#ifndef __CUDA_ARCH_FEAT_SM90_ALL
#define __CUDA_ARCH_FEAT_SM90_ALL 1
#endif

#include "mbcheck/cutlass_host/thread_identity.hpp"
#include "mbcheck/cutlass_host/launch.hpp"
#include "mbcheck/cutlass_host/intrinsics.hpp"

// threadIdx, blockIdx, blockDim, gridDim: objects whose .x, .y, .z read the calling fiber's
// values when converted (variables, not macros: CUTLASS has members named gridDim).
inline constexpr ::mbcheck::cutlass_host::BuiltinDim3<&::mbcheck::cutlass_host::thread_index> threadIdx{};
inline constexpr ::mbcheck::cutlass_host::BuiltinDim3<&::mbcheck::cutlass_host::block_index> blockIdx{};
inline constexpr ::mbcheck::cutlass_host::BuiltinDim3<&::mbcheck::cutlass_host::block_dimensions> blockDim{};
inline constexpr ::mbcheck::cutlass_host::BuiltinDim3<&::mbcheck::cutlass_host::grid_dimensions> gridDim{};

// bar.sync 0
inline void __syncthreads(::mbcheck::CallSite site = ::mbcheck::CallSite::current()) {
  ::mbcheck::sim::HostPlatform::sync_threads(site);
}
// bar.warp.sync
inline void __syncwarp(unsigned mask = 0xffffffffu, ::mbcheck::CallSite site = ::mbcheck::CallSite::current()) {
  ::mbcheck::sim::HostPlatform::syncwarp(mask, site);
}
inline void __nanosleep(unsigned ns) { ::mbcheck::sim::HostPlatform::nanosleep(ns); }
