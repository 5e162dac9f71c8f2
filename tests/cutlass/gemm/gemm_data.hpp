// The operands and the expected D of a GEMM check, the same on the host (gemm_protocol.hpp) and
// on the GPU (device/cutlass_gemm.cuh): small integers (A, B in [-2, 2], C in [-4, 4]) from one
// seeded generator, so that every product and sum is exact in fp16/bf16/tf32 and fp32 and D
// must equal CUTLASS's host reference GEMM bit for bit on both. Plain C++ (nvcc and g++).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "cutlass/kernel_hardware_info.hpp"
#include "cutlass/util/packed_stride.hpp"
#include "cutlass/util/reference/host/gemm.h"

namespace gemm_check {

template <class Gemm>
struct GemmData {
  using ElementA = typename Gemm::ElementA;
  using ElementB = typename Gemm::ElementB;
  using ElementC = typename Gemm::ElementC;
  using ElementD = typename Gemm::ElementD;
  using LayoutA = typename Gemm::LayoutA;
  using LayoutB = typename Gemm::LayoutB;
  using LayoutC = typename Gemm::LayoutC;
  using LayoutD = typename Gemm::LayoutD;

  int m, n, k;
  float alpha, beta;
  std::vector<ElementA> a;
  std::vector<ElementB> b;
  std::vector<ElementC> c;
  std::vector<ElementD> reference;

  GemmData(int m_, int n_, int k_, float alpha_, float beta_) : m(m_), n(n_), k(k_), alpha(alpha_), beta(beta_) {
    std::mt19937 rng(2023);
    fill(a, std::size_t(m) * k, 2, rng);
    fill(b, std::size_t(k) * n, 2, rng);
    fill(c, std::size_t(m) * n, 4, rng);
    reference.resize(std::size_t(m) * n);
    cutlass::reference::host::Gemm<ElementA, LayoutA, ElementB, LayoutB, ElementC, LayoutC, float, float> ref;
    ref({m, n, k}, alpha, {a.data(), LayoutA::packed({m, k})}, {b.data(), LayoutB::packed({k, n})}, beta,
        {c.data(), LayoutC::packed({m, n})}, {reference.data(), LayoutD::packed({m, n})}, 0.f);
  }

  // How many elements of `d` differ from the reference, and the first that does.
  std::size_t mismatches(const std::vector<ElementD>& d, std::size_t* first) const {
    std::size_t wrong = 0;
    *first = d.size();
    for (std::size_t i = 0; i < d.size(); ++i)
      if (float(d[i]) != float(reference[i]) && wrong++ == 0) *first = i;
    return wrong;
  }

  // FNV-1a over D's bytes: the host's and the GPU's D print the same value when bit-equal.
  static std::uint64_t hash(const std::vector<ElementD>& d) {
    std::uint64_t h = 1469598103934665603ull;
    const auto* p = reinterpret_cast<const unsigned char*>(d.data());
    for (std::size_t i = 0; i < d.size() * sizeof(ElementD); ++i) h = (h ^ p[i]) * 1099511628211ull;
    return h;
  }

 private:
  template <class T>
  static void fill(std::vector<T>& v, std::size_t count, int range, std::mt19937& rng) {
    v.resize(count);
    std::uniform_int_distribution<int> dist(-range, range);
    for (auto& x : v) x = T(static_cast<float>(dist(rng)));
  }
};

// The Arguments a CUTLASS user builds for D = alpha * A * B + beta * C over the device buffers
// a, b, c, d (packed, the layouts of Gemm), with `sms` SMs for the persistent scheduler.
template <class Gemm>
typename Gemm::Arguments gemm_arguments(const GemmData<Gemm>& data, int sms, const typename Gemm::ElementA* a,
                                        const typename Gemm::ElementB* b, const typename Gemm::ElementC* c,
                                        typename Gemm::ElementD* d) {
  using Kernel = typename Gemm::GemmKernel;
  using cute::make_shape;
  const int m = data.m, n = data.n, k = data.k;
  typename Kernel::ProblemShape problem{};
  if constexpr (cute::rank_v<typename Kernel::ProblemShape> == 4)
    problem = {m, n, k, 1};
  else
    problem = {m, n, k};
  cutlass::KernelHardwareInfo hw_info;
  hw_info.sm_count = sms;
  typename Gemm::Arguments arguments{
      cutlass::gemm::GemmUniversalMode::kGemm,
      problem,
      {a, cutlass::make_cute_packed_stride(typename Kernel::StrideA{}, make_shape(m, k, 1)), b,
       cutlass::make_cute_packed_stride(typename Kernel::StrideB{}, make_shape(n, k, 1))},
      {{},
       c,
       cutlass::make_cute_packed_stride(typename Kernel::StrideC{}, make_shape(m, n, 1)),
       d,
       cutlass::make_cute_packed_stride(typename Kernel::StrideD{}, make_shape(m, n, 1))},
      hw_info};
  arguments.epilogue.thread.alpha = data.alpha;
  arguments.epilogue.thread.beta = data.beta;
  return arguments;
}

}  // namespace gemm_check
