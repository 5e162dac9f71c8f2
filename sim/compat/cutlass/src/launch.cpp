// Host launches of CUTLASS-style kernels: the kernel registry, the launch as a Program, and
// cudaLaunchKernelExC / cudaLaunchKernel checking it (launch.hpp).
#include "mbcheck/cutlass_host/launch.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>

#include "device_memory.hpp"
#include "mbcheck/cutlass_host/faults.hpp"
#include "mbcheck/cutlass_host/thread_identity.hpp"
#include "shared_window.hpp"

namespace mbcheck::cutlass_host {

namespace {

struct KernelEntry {
  KernelTrampoline call = nullptr;
  ArgumentCopier copy = nullptr;
};
std::map<const void*, KernelEntry>& registry() {
  static std::map<const void*, KernelEntry> r;
  return r;
}
std::vector<LaunchRecord>& records() {
  static std::vector<LaunchRecord> r;
  return r;
}
LaunchGeometry g_geometry;

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

class LaunchProgram final : public sim::Program {
 public:
  LaunchProgram(const KernelEntry& entry, const void* kernel, void** args, LaunchGeometry geometry,
                std::function<std::optional<std::string>()> check_result)
      : call_(entry.call),
        kernel_(kernel),
        args_(entry.copy(args, arg_pointers_)),
        geometry_(geometry),
        memory_(snapshot_device_memory()),
        check_(std::move(check_result)) {
    open_shared_window(geometry_);
  }
  ~LaunchProgram() override { close_shared_window(); }
  LaunchProgram(const LaunchProgram&) = delete;
  LaunchProgram& operator=(const LaunchProgram&) = delete;
  sim::LaunchShape shape() const override {
    sim::LaunchShape s;
    s.ctas = geometry_.grid.x * geometry_.grid.y * geometry_.grid.z;
    s.threads_per_cta = geometry_.block.x * geometry_.block.y * geometry_.block.z;
    s.smem_bytes = geometry_.runtime_smem_bytes();
    s.cluster_x = geometry_.cluster.x;
    s.cluster_y = geometry_.cluster.y;
    s.warpgroup_converges = launch_policy().warpgroup_converges;
    s.cta_waits_acquire_peers = launch_policy().cta_waits_acquire_peers;
    return s;
  }
  void reset() override {
    g_geometry = geometry_;
    reset_fault_state();
    restore_device_memory(memory_);
  }
  void thread_main() override { call_(kernel_, arg_pointers_.data()); }
  std::optional<std::string> check_result() override { return check_ ? check_() : std::nullopt; }
  // A kernel: device code (with the access instrumentation, every write of it is seen).
  bool device_code() const override { return true; }

 private:
  KernelTrampoline call_;
  const void* kernel_;
  std::vector<void*> arg_pointers_;
  std::shared_ptr<void> args_;
  LaunchGeometry geometry_;
  DeviceMemorySnapshot memory_;
  std::function<std::optional<std::string>()> check_;
};

// capture_launch's state: the launch made while host code runs under it.
struct Capture {
  bool active = false;
  std::vector<std::unique_ptr<sim::Program>> programs;
  std::function<std::optional<std::string>()> check_result;
};
Capture g_capture;

std::string describe(dim3 d) { return fmt::format("{}x{}x{}", d.x, d.y, d.z); }

}  // namespace

LaunchGeometry& current_geometry() { return g_geometry; }

void register_trampoline(const void* kernel, KernelTrampoline call, ArgumentCopier copy) {
  registry()[kernel] = {call, copy};
}

LaunchPolicy& launch_policy() {
  static LaunchPolicy p;
  return p;
}

std::vector<LaunchRecord> take_launch_records() { return std::exchange(records(), {}); }

unsigned char* shared_address(const void* address, std::size_t bytes, const char* what) {
  const auto offset = window_offset(address);
  const LaunchGeometry& g = g_geometry;
  if (offset + bytes > g.window_bytes) {
    static thread_local std::string message;
    message = fmt::format(
        "{} at {} (+{} B) is outside the launch's {} B of dynamic shared memory (the kernel's extern "
        "__shared__ array)",
        what, address, bytes, g.window_bytes);
    sim::HostPlatform::check(false, message.c_str());
  }
  return sim::HostPlatform::shared_memory() + offset;
}

sim::MbarrierState& barrier_state(const std::uint64_t* address, CallSite) {
  const auto offset = window_offset(address);
  shared_address(address, 8, "an mbarrier");
  if (offset % 8 != 0) {
    static thread_local std::string message;
    message = fmt::format("mbarrier at shared-memory offset {:#x} is not 8-byte aligned", offset);
    sim::HostPlatform::check(false, message.c_str());
  }
  unsigned char* states = sim::HostPlatform::shared_memory() + g_geometry.states_offset;
  return *reinterpret_cast<sim::MbarrierState*>(states + offset / 8 * sizeof(sim::MbarrierState));
}

std::unique_ptr<sim::Program> make_launch_program(const void* kernel, void** args, dim3 grid, dim3 block, dim3 cluster,
                                                  std::size_t dynamic_smem,
                                                  std::function<std::optional<std::string>()> check_result) {
  auto it = registry().find(kernel);
  if (it == registry().end())
    throw std::invalid_argument(fmt::format(
        "kernel {} was launched but never registered: the host learns a kernel's parameter types from "
        "cudaFuncSetAttribute(kernel, ...) on the typed kernel, or mbcheck::cutlass_host::register_kernel(kernel)",
        kernel));
  if (cluster.x == 0 || cluster.y == 0 || cluster.z == 0) cluster = {1, 1, 1};
  if (cluster.z != 1 || grid.z != 1)
    throw std::invalid_argument(
        fmt::format("grid {} cluster {}: the host models clusters and grids in x and y only (z must be 1)",
                    describe(grid), describe(cluster)));
  if (grid.x % cluster.x != 0 || grid.y % cluster.y != 0)
    throw std::invalid_argument(
        fmt::format("grid {} is not a whole number of clusters {}", describe(grid), describe(cluster)));
  LaunchGeometry g{grid, block, cluster};
  if (dynamic_smem > kSharedWindowBytes)
    throw std::invalid_argument(fmt::format("{} B of dynamic shared memory: the host models at most {} B per CTA",
                                            dynamic_smem, kSharedWindowBytes));
  g.window_bytes = round_up(dynamic_smem, 8);
  g.states_offset = round_up(g.window_bytes, 128);
  return std::make_unique<LaunchProgram>(it->second, kernel, args, g, std::move(check_result));
}

std::unique_ptr<sim::Program> capture_launch(const std::function<void()>& host_code,
                                             std::function<std::optional<std::string>()> check_result) {
  g_capture = Capture{true, {}, std::move(check_result)};
  try {
    host_code();
  } catch (...) {
    g_capture = {};
    throw;
  }
  Capture c = std::exchange(g_capture, {});
  if (c.programs.size() != 1)
    throw std::invalid_argument(
        fmt::format("the host code made {} kernel launches: one is checked at a time", c.programs.size()));
  return std::move(c.programs.front());
}

cudaError_t launch_and_check(const void* kernel, void** args, dim3 grid, dim3 block, dim3 cluster,
                             std::size_t dynamic_smem) {
  LaunchRecord rec;
  rec.shape = fmt::format("grid {} cluster {} block {} smem {} B", describe(grid), describe(cluster), describe(block),
                          dynamic_smem);
  std::unique_ptr<sim::Program> program;
  try {
    program = make_launch_program(kernel, args, grid, block, cluster, dynamic_smem,
                                  g_capture.active ? g_capture.check_result : nullptr);
    if (auto error = sim::launch_shape_error(program->shape())) throw std::invalid_argument(*error);
  } catch (const std::invalid_argument& e) {
    if (g_capture.active) throw;  // capture_launch's caller says it (the CLI: a usage error)
    std::fprintf(stderr, "mbcheck: launch %s: %s\n", rec.shape.c_str(), e.what());
    rec.report = e.what();
    records().push_back(rec);
    return cudaErrorInvalidConfiguration;
  }
  if (g_capture.active) {
    g_capture.programs.push_back(std::move(program));
    return cudaSuccess;
  }
  const LaunchPolicy& policy = launch_policy();
  sim::CheckOptions options = policy.check;
  if (policy.mode == LaunchMode::run) options.max_executions = 1;
  const sim::CheckResult result = sim::check_program(*program, options);
  rec.verdict = result.verdict;
  if (policy.mode == LaunchMode::run && result.verdict == sim::CheckVerdict::incomplete && !result.step_limited)
    rec.verdict = sim::CheckVerdict::verified;  // its one execution completed
  rec.executions = result.stats.executions;
  rec.seconds = result.stats.seconds;
  if (result.counterexample) {
    rec.bug_kind = result.counterexample->kind;
    rec.misuse = result.counterexample->misuse;
    rec.bug_execution = result.stats.executions;
  }
  if (rec.verdict != sim::CheckVerdict::verified) rec.report = sim::format_report(result);
  if (policy.print_reports) {
    std::printf("mbcheck: launch %s: %s%s%s, %llu execution%s, %.3f s\n", rec.shape.c_str(), to_string(rec.verdict),
                rec.bug_kind ? " " : "", rec.bug_kind ? sim::to_string(*rec.bug_kind) : "",
                static_cast<unsigned long long>(rec.executions), rec.executions == 1 ? "" : "s", rec.seconds);
    if (!rec.report.empty()) std::printf("%s\n", rec.report.c_str());
    std::fflush(stdout);
  }
  const bool ok = rec.verdict == sim::CheckVerdict::verified;
  records().push_back(std::move(rec));
  return ok ? cudaSuccess : cudaErrorLaunchFailure;
}

}  // namespace mbcheck::cutlass_host

namespace {
dim3 cluster_of(const cudaLaunchConfig_t& config) {
  for (unsigned i = 0; i < config.numAttrs; ++i)
    if (config.attrs[i].id == cudaLaunchAttributeClusterDimension) {
      const auto& c = config.attrs[i].val.clusterDim;
      return {c.x, c.y, c.z};
    }
  return {1, 1, 1};
}
}  // namespace

// The CUDA runtime's launches, for host code that includes <cuda_runtime.h>: each is checked.
// A launch that finds a bug returns cudaErrorLaunchFailure but leaves cudaGetLastError alone:
// CUTLASS's tests end the process at a sticky error (CUTE_CHECK_LAST), and the verdicts are in
// the launch records (take_launch_records), which the test runner and the CLI read.
extern "C" cudaError_t CUDARTAPI cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* func, void** args) {
  if (!config) return cudaErrorInvalidValue;
  return mbcheck::cutlass_host::launch_and_check(func, args, config->gridDim, config->blockDim, cluster_of(*config),
                                                 config->dynamicSmemBytes);
}
extern "C" cudaError_t CUDARTAPI cudaLaunchKernel(const void* func, dim3 grid, dim3 block, void** args, size_t smem,
                                                  cudaStream_t) {
  return mbcheck::cutlass_host::launch_and_check(func, args, grid, block, {1, 1, 1}, smem);
}
