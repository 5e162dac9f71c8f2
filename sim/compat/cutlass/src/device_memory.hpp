// Global memory of the host launches (cudaMalloc): plain host allocations, remembered so that
// a launch can restore them before each of its executions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mbcheck::cutlass_host {

struct DeviceMemorySnapshot {
  struct Block {
    void* at;
    std::vector<unsigned char> bytes;
  };
  std::vector<Block> blocks;
};
DeviceMemorySnapshot snapshot_device_memory();
void restore_device_memory(const DeviceMemorySnapshot& snapshot);

// The span from the lowest to the end of the highest allocation (the compiler callbacks' first
// range check), and whether `p` is in an allocation.
struct DeviceMemorySpan {
  std::uintptr_t begin = 0, end = 0;
};
extern DeviceMemorySpan g_device_memory_span;
bool is_device_memory(const void* p);

}  // namespace mbcheck::cutlass_host
