// CUTLASS's tools/util GPU_Clock for host-compiled tests: wall-clock time of the host.
#pragma once

#include <chrono>

struct GPU_Clock {
  void start() { start_ = std::chrono::steady_clock::now(); }
  float milliseconds() const {
    return std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - start_).count();
  }
  float seconds() const { return milliseconds() / 1000.0f; }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};
