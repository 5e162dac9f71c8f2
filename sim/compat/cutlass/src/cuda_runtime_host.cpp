// The parts of the CUDA runtime API a CUTLASS test or launch path calls, on the host: memory
// is host memory, events and streams are tokens, and a launch is a check (launch.cpp).
// Nothing here touches a GPU or libcudart.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "device_memory.hpp"
#include "mbcheck/cutlass_host/launch.hpp"

namespace mbcheck::cutlass_host {
namespace {
cudaError_t g_last_error = cudaSuccess;
std::map<void*, std::size_t>& allocations() {
  static std::map<void*, std::size_t> a;
  return a;
}
}  // namespace

DeviceMemorySpan g_device_memory_span;

namespace {
void update_span() {
  const auto& a = allocations();
  g_device_memory_span = {};
  if (a.empty()) return;
  g_device_memory_span.begin = reinterpret_cast<std::uintptr_t>(a.begin()->first);
  g_device_memory_span.end = reinterpret_cast<std::uintptr_t>(a.rbegin()->first) + a.rbegin()->second;
}
}  // namespace

bool is_device_memory(const void* p) {
  const auto& a = allocations();
  auto it = a.upper_bound(const_cast<void*>(p));
  if (it == a.begin()) return false;
  --it;
  return static_cast<const unsigned char*>(p) < static_cast<const unsigned char*>(it->first) + it->second;
}

DeviceMemorySnapshot snapshot_device_memory() {
  DeviceMemorySnapshot s;
  for (const auto& [at, bytes] : allocations()) {
    const auto* p = static_cast<const unsigned char*>(at);
    s.blocks.push_back({at, std::vector<unsigned char>(p, p + bytes)});
  }
  return s;
}

void restore_device_memory(const DeviceMemorySnapshot& snapshot) {
  for (const auto& b : snapshot.blocks) std::memcpy(b.at, b.bytes.data(), b.bytes.size());
}

}  // namespace mbcheck::cutlass_host

using mbcheck::cutlass_host::allocations;

extern "C" {

cudaError_t CUDARTAPI cudaGetLastError(void) { return std::exchange(mbcheck::cutlass_host::g_last_error, cudaSuccess); }
cudaError_t CUDARTAPI cudaPeekAtLastError(void) { return mbcheck::cutlass_host::g_last_error; }
const char* CUDARTAPI cudaGetErrorString(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "no error";
    case cudaErrorLaunchFailure: return "mbcheck found a bug in the launch (its report is above)";
    case cudaErrorInvalidConfiguration: return "mbcheck cannot run this launch configuration (see above)";
    case cudaErrorMemoryAllocation: return "out of host memory";
    default: return "CUDA error (host stand-in)";
  }
}
const char* CUDARTAPI cudaGetErrorName(cudaError_t error) {
  return error == cudaSuccess ? "cudaSuccess" : cudaGetErrorString(error);
}
cudaError_t CUDARTAPI cudaDeviceSynchronize(void) { return cudaSuccess; }
cudaError_t CUDARTAPI cudaDeviceReset(void) { return cudaSuccess; }
cudaError_t CUDARTAPI cudaSetDevice(int) { return cudaSuccess; }
cudaError_t CUDARTAPI cudaGetDevice(int* device) {
  *device = 0;
  return cudaSuccess;
}
cudaError_t CUDARTAPI cudaGetDeviceCount(int* count) {
  *count = 1;
  return cudaSuccess;
}
// An H100/H200-like SM 9.0 device: what CUTLASS's host code asks before a launch.
cudaError_t CUDARTAPI cudaGetDeviceProperties(cudaDeviceProp* prop, int) {
  std::memset(prop, 0, sizeof *prop);
  std::strncpy(prop->name, "mbcheck host (sm_90a model)", sizeof prop->name - 1);
  prop->major = 9;
  prop->minor = 0;
  prop->multiProcessorCount = 132;
  prop->warpSize = 32;
  prop->maxThreadsPerBlock = 1024;
  prop->sharedMemPerBlockOptin = 232448;
  prop->sharedMemPerMultiprocessor = 233472;
  prop->sharedMemPerBlock = 49152;
  return cudaSuccess;
}
cudaError_t CUDARTAPI cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int) {
  switch (attr) {
    case cudaDevAttrMultiProcessorCount: *value = 132; break;
    case cudaDevAttrComputeCapabilityMajor: *value = 9; break;
    case cudaDevAttrComputeCapabilityMinor: *value = 0; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = 232448; break;
    default: *value = 0;
  }
  return cudaSuccess;
}
cudaError_t CUDARTAPI cudaFuncSetAttribute(const void*, cudaFuncAttribute, int) { return cudaSuccess; }

cudaError_t CUDARTAPI cudaMalloc(void** p, size_t bytes) {
  *p = std::calloc(bytes ? bytes : 1, 1);
  if (!*p) return cudaErrorMemoryAllocation;
  allocations()[*p] = bytes;
  mbcheck::cutlass_host::update_span();
  return cudaSuccess;
}
cudaError_t CUDARTAPI cudaFree(void* p) {
  if (!p) return cudaSuccess;
  if (!allocations().erase(p)) return cudaErrorInvalidValue;
  mbcheck::cutlass_host::update_span();
  std::free(p);
  return cudaSuccess;
}
cudaError_t CUDARTAPI cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind) {
  std::memmove(dst, src, bytes);
  return cudaSuccess;
}
cudaError_t CUDARTAPI cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind, cudaStream_t) {
  std::memmove(dst, src, bytes);
  return cudaSuccess;
}
cudaError_t CUDARTAPI cudaMemset(void* dst, int value, size_t bytes) {
  std::memset(dst, value, bytes);
  return cudaSuccess;
}

// Events time the launches in host wall-clock time.
namespace {
using Clock = std::chrono::steady_clock;
std::map<cudaEvent_t, Clock::time_point>& events() {
  static std::map<cudaEvent_t, Clock::time_point> e;
  return e;
}
std::uintptr_t g_next_handle = 1;
}  // namespace
cudaError_t CUDARTAPI cudaEventCreate(cudaEvent_t* event) {
  *event = reinterpret_cast<cudaEvent_t>(g_next_handle++);
  events()[*event] = Clock::now();
  return cudaSuccess;
}
cudaError_t CUDARTAPI cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int) { return cudaEventCreate(event); }
cudaError_t CUDARTAPI cudaEventRecord(cudaEvent_t event, cudaStream_t) {
  events()[event] = Clock::now();
  return cudaSuccess;
}
cudaError_t CUDARTAPI cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
cudaError_t CUDARTAPI cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  *ms = std::chrono::duration<float, std::milli>(events()[end] - events()[start]).count();
  return cudaSuccess;
}
cudaError_t CUDARTAPI cudaEventDestroy(cudaEvent_t event) {
  events().erase(event);
  return cudaSuccess;
}
cudaError_t CUDARTAPI cudaStreamCreate(cudaStream_t* stream) {
  *stream = reinterpret_cast<cudaStream_t>(g_next_handle++);
  return cudaSuccess;
}
cudaError_t CUDARTAPI cudaStreamDestroy(cudaStream_t) { return cudaSuccess; }
cudaError_t CUDARTAPI cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }

}  // extern "C"
