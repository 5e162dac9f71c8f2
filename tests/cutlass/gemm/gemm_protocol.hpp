// A CUTLASS 3 GEMM (a GemmUniversalAdapter over GemmUniversal, as CUTLASS's examples build it)
// as a protocol of an mbcheck command line: the host code a CUTLASS user writes (buffers,
// Arguments, can_implement, initialize, run) runs once with its launch captured, and every
// completed execution's D is compared element by element with CUTLASS's host reference GEMM
// (cutlass/util/reference/host/gemm.h) of the same operands.
//
// The operands are gemm_data.hpp's, which the GPU run (device/cutlass_gemm.cuh) uses too.
#pragma once

#include <fmt/format.h>

#include <charconv>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gemm_data.hpp"
#include "mbcheck/cutlass_host/cli.hpp"
#include "mbcheck/cutlass_host/faults.hpp"
#include "sim/runtime/guarded_tries.hpp"

namespace gemm_check {

using mbcheck::sim::ShapeError;

inline int whole_option(const std::map<std::string, std::string>& o, const char* key, int lo, int hi) {
  const std::string& v = o.at(key);
  int out = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || end != v.data() + v.size() || out < lo || out > hi)
    throw ShapeError(fmt::format("--{} {}: must be a whole number in [{}, {}]", key, v, lo, hi));
  return out;
}

inline std::vector<mbcheck::sim::OptionInfo> gemm_options() {
  return {
      {"m", "256", "rows of A and D"},
      {"n", "384", "columns of B and D"},
      {"k", "128", "the reduction (columns of A)"},
      {"sms", "2", "SMs the persistent tile scheduler may use (its grid)"},
      {"alpha", "1", "D = alpha * A * B + beta * C (a whole number)"},
      {"beta", "1", "beta != 0: the epilogue loads C"},
      {"cta-acquire", "cta",
       "cta: PTX's scopes (a .cta wait does not acquire peers' .release.cluster arrives); peers: it does, as the "
       "H100 was seen to (CUTLASS's multicast producers rely on it)"},
      {"wgmma-convergence", "warp",
       "warp: PTX's .sync (each warp alone); warpgroup: the whole warp group, as the H200 does"},
      {"guarded-tries", "merge",
       "merge: a bool try_wait whose paths meet at the wait it guards is that wait (docs/model.md; CUTLASS's "
       "consumer_try_wait then consumer_wait); poll: both answers explored"},
      {"fault", "none", "a fault injected at CUTLASS's barrier and pipeline API (mbcheck/cutlass_host/faults.hpp)"}};
}

template <class Gemm>
class GemmBuffers {
 public:
  using ElementA = typename Gemm::ElementA;
  using ElementB = typename Gemm::ElementB;
  using ElementC = typename Gemm::ElementC;
  using ElementD = typename Gemm::ElementD;

  GemmBuffers(int m, int n, int k, int sms, int alpha, int beta)
      : m_(m), n_(n), k_(k), sms_(sms), data_(m, n, k, static_cast<float>(alpha), static_cast<float>(beta)) {
    a_dev_ = device_copy(data_.a);
    b_dev_ = device_copy(data_.b);
    c_dev_ = device_copy(data_.c);
    d_dev_ = device_copy(std::vector<ElementD>(std::size_t(m) * n, ElementD(0.f)));
  }

  // The host code of a CUTLASS user: Arguments, can_implement, initialize, run.
  void launch() {
    const auto arguments = gemm_arguments(data_, sms_, a_dev_, b_dev_, c_dev_, d_dev_);
    Gemm gemm;
    if (gemm.can_implement(arguments) != cutlass::Status::kSuccess)
      throw ShapeError(fmt::format("CUTLASS cannot implement this GEMM at {}x{}x{}", m_, n_, k_));
    const std::size_t workspace_bytes = Gemm::get_workspace_size(arguments);
    void* workspace = nullptr;
    if (workspace_bytes) cudaMalloc(&workspace, workspace_bytes);
    if (gemm.initialize(arguments, workspace) != cutlass::Status::kSuccess)
      throw ShapeError("GemmUniversalAdapter::initialize failed");
    if (gemm.run() != cutlass::Status::kSuccess) throw ShapeError("GemmUniversalAdapter::run failed");
  }

  // D against the reference, element by element.
  std::optional<std::string> verify() const {
    std::vector<ElementD> d(std::size_t(m_) * n_);
    cudaMemcpy(d.data(), d_dev_, d.size() * sizeof(ElementD), cudaMemcpyDeviceToHost);
    std::size_t first = 0;
    const std::size_t wrong = data_.mismatches(d, &first);
    if (!wrong) return std::nullopt;
    return fmt::format("D differs from CUTLASS's host reference GEMM in {} of {} elements (first at {}: {} vs {})",
                       wrong, d.size(), first, float(d[first]), float(data_.reference[first]));
  }
  std::uint64_t reference_hash() const { return GemmData<Gemm>::hash(data_.reference); }

 private:
  template <class T>
  static T* device_copy(const std::vector<T>& host) {
    void* p = nullptr;
    cudaMalloc(&p, host.size() * sizeof(T));
    cudaMemcpy(p, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice);
    return static_cast<T*>(p);
  }

  int m_, n_, k_, sms_;
  GemmData<Gemm> data_;
  ElementA* a_dev_ = nullptr;
  ElementB* b_dev_ = nullptr;
  ElementC* c_dev_ = nullptr;
  ElementD* d_dev_ = nullptr;
};

// The protocol entry for one GEMM type.
template <class Gemm>
mbcheck::sim::cli::ProtocolEntry gemm_entry(std::string name, std::string summary) {
  mbcheck::sim::ProtocolInfo info{name, std::move(summary), gemm_options(), {}};
  auto make = [info](const std::map<std::string, std::string>& given) -> std::unique_ptr<mbcheck::sim::CliProgram> {
    std::map<std::string, std::string> o;
    for (const auto& opt : info.options) o[opt.name] = opt.default_value;
    for (const auto& [key, value] : given) {
      if (!o.count(key)) throw ShapeError(fmt::format("{} has no option --{}", info.name, key));
      o[key] = value;
    }
    const auto fault = mbcheck::cutlass_host::parse_fault(o.at("fault"));
    if (!fault)
      throw ShapeError(
          fmt::format("--fault {}: must be none or one of {}", o.at("fault"), mbcheck::cutlass_host::fault_names()));
    mbcheck::cutlass_host::set_fault(*fault);
    auto& policy = mbcheck::cutlass_host::launch_policy();
    if (o.at("cta-acquire") != "cta" && o.at("cta-acquire") != "peers")
      throw ShapeError(fmt::format("--cta-acquire {}: must be cta or peers", o.at("cta-acquire")));
    if (o.at("wgmma-convergence") != "warp" && o.at("wgmma-convergence") != "warpgroup")
      throw ShapeError(fmt::format("--wgmma-convergence {}: must be warp or warpgroup", o.at("wgmma-convergence")));
    policy.cta_waits_acquire_peers = o.at("cta-acquire") == "peers";
    policy.warpgroup_converges = o.at("wgmma-convergence") == "warpgroup";
    if (o.at("guarded-tries") != "merge" && o.at("guarded-tries") != "poll")
      throw ShapeError(fmt::format("--guarded-tries {}: must be merge or poll", o.at("guarded-tries")));
    mbcheck::sim::set_merge_guarded_tries(o.at("guarded-tries") == "merge");
    auto buffers = std::make_shared<GemmBuffers<Gemm>>(whole_option(o, "m", 1, 4096), whole_option(o, "n", 1, 4096),
                                                       whole_option(o, "k", 1, 4096), whole_option(o, "sms", 1, 132),
                                                       whole_option(o, "alpha", -8, 8), whole_option(o, "beta", -8, 8));
    return mbcheck::cutlass_host::launch_protocol([buffers] { buffers->launch(); }, o,
                                                  [buffers] { return buffers->verify(); },
                                                  fmt::format("D equals CUTLASS's host reference GEMM element for "
                                                              "element (D hash {:#018x})",
                                                              buffers->reference_hash()));
  };
  return {info, make};
}

}  // namespace gemm_check
