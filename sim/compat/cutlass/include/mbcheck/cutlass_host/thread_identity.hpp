// What a CUDA thread of a host launch knows about itself and its launch: threadIdx, blockIdx,
// blockDim, gridDim and the cluster (from the runtime's linear thread and CTA numbers and the
// launch's dim3 shapes), and its dynamic shared memory. One launch runs at a time (a launch
// on the host returns once it has been checked), so the geometry is one global.
#pragma once

#include <cstddef>
#include <cstdint>

#include <vector_types.h>

#include "sim/host_platform.hpp"

// Every kernel's extern __shared__ array (prelude.hpp): the running CTA's shared memory while a
// launch runs (src/shared_window.hpp), no access outside one.
extern "C" char mbcheck_cutlass_shared_window[];

namespace mbcheck::cutlass_host {

inline constexpr std::size_t kSharedWindowBytes = 256 * 1024;  // the most dynamic shared memory a CTA has

// The offset in the CTA's dynamic shared memory of an address in the window (what cvta to a
// 32-bit shared address gives on the GPU); addresses outside it give offsets past the window.
inline std::uintptr_t window_offset(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) - reinterpret_cast<std::uintptr_t>(mbcheck_cutlass_shared_window);
}
inline void* window_address(std::uint32_t offset) { return mbcheck_cutlass_shared_window + offset; }

struct LaunchGeometry {
  dim3 grid{1, 1, 1}, block{1, 1, 1}, cluster{1, 1, 1};
  // The kernel's dynamic shared memory as it addresses it (offsets 0 .. window_bytes), and
  // where in the runtime's per-CTA buffer the barrier states begin: one MbarrierState per
  // 8-byte word of the window, so a CUTLASS barrier keeps its 8-byte footprint in the window
  // and its state lives at the same place in every CTA (mapa maps both alike).
  std::size_t window_bytes = 0;
  std::size_t states_offset = 0;
  // The runtime's per-CTA shared memory: the window, then the barrier states.
  std::size_t runtime_smem_bytes() const { return states_offset + window_bytes / 8 * sizeof(sim::MbarrierState); }
};

// The launch being checked (valid while a launch runs).
LaunchGeometry& current_geometry();

inline uint3 thread_index() {
  const LaunchGeometry& g = current_geometry();
  const std::uint32_t t = sim::HostPlatform::thread_idx();
  return uint3{t % g.block.x, t / g.block.x % g.block.y, t / (g.block.x * g.block.y)};
}
// CTAs are numbered cluster by cluster (rank x-major inside one): a cluster of cx by cy CTAs
// is a tile of the grid, the clusters themselves x-major over the grid.
inline uint3 block_index() {
  const LaunchGeometry& g = current_geometry();
  const std::uint32_t cta = sim::HostPlatform::block_idx();
  const std::uint32_t size = g.cluster.x * g.cluster.y;
  const std::uint32_t cluster = cta / size, rank = cta % size;
  const std::uint32_t clusters_x = g.grid.x / g.cluster.x;
  return uint3{cluster % clusters_x * g.cluster.x + rank % g.cluster.x,
               cluster / clusters_x * g.cluster.y + rank / g.cluster.x, 0};
}
inline uint3 block_dimensions() { return current_geometry().block; }
inline uint3 grid_dimensions() { return current_geometry().grid; }

// A CUDA built-in (threadIdx, ...): .x, .y and .z convert to the calling thread's value.
template <uint3 (*Read)()>
struct BuiltinDim3 {
  struct X {
    operator unsigned() const { return Read().x; }
  };
  struct Y {
    operator unsigned() const { return Read().y; }
  };
  struct Z {
    operator unsigned() const { return Read().z; }
  };
  X x;
  Y y;
  Z z;
  operator dim3() const { return dim3(Read()); }
  operator uint3() const { return Read(); }
};

// An address the kernel derived from its dynamic shared memory (in the window: prelude.hpp)
// as the running CTA's real shared memory; ends the execution with a clear message when it is
// not in the window. `bytes`: how many bytes from it the instruction touches.
unsigned char* shared_address(const void* window_address, std::size_t bytes, const char* what);
// The state of the mbarrier whose 8-byte word is at `window_address`.
sim::MbarrierState& barrier_state(const std::uint64_t* window_address, CallSite site);

}  // namespace mbcheck::cutlass_host
