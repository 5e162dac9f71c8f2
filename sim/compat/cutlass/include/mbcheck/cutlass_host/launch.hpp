// Kernel launches on the host: a CUTLASS-style launch (cutlass::ClusterLauncher::launch, which
// calls cudaLaunchKernelExC, or cudaLaunchKernel) runs the kernel under mbcheck instead: every
// thread of the grid a fiber, the cluster shape from the launch attributes, and the launch
// returns once the kernel has been checked (exhaustively, or in one execution).
//
// A launch names its kernel by address and its arguments as void* (CUDA's untyped launch), so
// the host must know the kernel's parameter types beforehand: cudaFuncSetAttribute on the typed
// kernel (which every kernel using more than 48 KiB of dynamic shared memory makes anyway), or
// register_kernel. Launching an unregistered kernel fails with cudaErrorInvalidDeviceFunction
// and says why.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "sim/check.hpp"

namespace mbcheck::cutlass_host {

// Calls the kernel at `kernel` with the arguments at `args` (CUDA's void* args array).
using KernelTrampoline = void (*)(const void* kernel, void** args);

template <class... A, std::size_t... I>
void call_kernel(void (*k)(A...), void** args, std::index_sequence<I...>) {
  k(*static_cast<std::remove_cvref_t<A>*>(args[I])...);
}
template <class... A>
void trampoline(const void* kernel, void** args) {
  call_kernel(reinterpret_cast<void (*)(A...)>(const_cast<void*>(kernel)), args, std::index_sequence_for<A...>{});
}
// Copies the arguments at `args` (kept alive by the returned pointer) and points `out` at them.
using ArgumentCopier = std::shared_ptr<void> (*)(void** args, std::vector<void*>& out);
template <class... A, std::size_t... I>
std::shared_ptr<void> copy_arguments(void** args, std::vector<void*>& out, std::index_sequence<I...>) {
  auto values =
      std::make_shared<std::tuple<std::remove_cvref_t<A>...>>(*static_cast<std::remove_cvref_t<A>*>(args[I])...);
  out = {static_cast<void*>(&std::get<I>(*values))...};
  return values;
}
template <class... A>
std::shared_ptr<void> argument_copier(void** args, std::vector<void*>& out) {
  return copy_arguments<A...>(args, out, std::index_sequence_for<A...>{});
}
void register_trampoline(const void* kernel, KernelTrampoline call, ArgumentCopier copy);

template <class... A>
void register_kernel(void (*kernel)(A...)) {
  register_trampoline(reinterpret_cast<const void*>(kernel), &trampoline<A...>, &argument_copier<A...>);
}

// How launches run: check (every distinct interleaving, DPOR), or run (one execution, the
// runtime's default schedule: a smoke test).
enum class LaunchMode : std::uint8_t { check, run };

struct LaunchPolicy {
  LaunchMode mode = LaunchMode::check;
  sim::CheckOptions check;    // limits of the search (a launch past them is "incomplete")
  bool print_reports = true;  // print each launch's verdict line, and a bug's report
  // The warp group converges at every wgmma instruction, as the H200 does (LaunchShape's
  // warpgroup_converges); false: each warp alone, as PTX's .sync promises.
  bool warpgroup_converges = false;
  // A .acquire.cta wait acquires peers' .release.cluster arrives, as the H100 was seen to do
  // (LaunchShape's cta_waits_acquire_peers); false: PTX's scopes.
  bool cta_waits_acquire_peers = false;
};
LaunchPolicy& launch_policy();

// What one launch found.
struct LaunchRecord {
  std::string shape;  // "grid 2x2x1 cluster 2x2x1 block 128x1x1 smem 320 B"
  sim::CheckVerdict verdict = sim::CheckVerdict::incomplete;
  std::optional<sim::Verdict> bug_kind;  // the bug's kind (deadlock, misuse, ...)
  std::optional<sim::MisuseKind> misuse;
  std::uint64_t executions = 0;
  std::uint64_t bug_execution = 0;  // the execution (1-based) that found the bug, if any
  double seconds = 0;
  std::string report;  // the formatted report of a bug or an incomplete check
};
// Every launch since the last take_launch_records(), oldest first.
std::vector<LaunchRecord> take_launch_records();

// A launch as a Program of its own (what cudaLaunchKernelExC checks). Its arguments are
// copied; global memory from cudaMalloc is restored to what it held at the launch before
// every execution; `check_result` (optional) judges the output of a completed execution.
std::unique_ptr<sim::Program> make_launch_program(const void* kernel, void** args, dim3 grid, dim3 block, dim3 cluster,
                                                  std::size_t dynamic_smem,
                                                  std::function<std::optional<std::string>()> check_result = {});

// Runs `host_code` (host code that prepares its buffers and launches one kernel the CUDA way)
// with its launch captured instead of checked, and returns that launch as a Program: how a
// CUTLASS kernel becomes a protocol of the command line (cli.hpp). Throws
// std::invalid_argument when host_code launches no kernel or more than one.
std::unique_ptr<sim::Program> capture_launch(const std::function<void()>& host_code,
                                             std::function<std::optional<std::string>()> check_result = {});

// Checks (or runs) one launch under the policy and records it: what cudaLaunchKernelExC does.
cudaError_t launch_and_check(const void* kernel, void** args, dim3 grid, dim3 block, dim3 cluster,
                             std::size_t dynamic_smem);

}  // namespace mbcheck::cutlass_host

// The typed cudaFuncSetAttribute (more specialised than the CUDA runtime's template over T*):
// registers the kernel's parameter types, then sets nothing (the host has no attributes).
template <class... A>
cudaError_t cudaFuncSetAttribute(void (*kernel)(A...), cudaFuncAttribute, int) {
  mbcheck::cutlass_host::register_kernel(kernel);
  return cudaSuccess;
}
