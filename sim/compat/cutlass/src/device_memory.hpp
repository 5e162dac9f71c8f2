// Global memory of the host launches (cudaMalloc): plain host allocations, remembered so that
// a launch can restore them before each of its executions.
#pragma once

#include <cstddef>
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

}  // namespace mbcheck::cutlass_host
