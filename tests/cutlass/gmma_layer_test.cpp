// CUTLASS's GMMA, LDSM and STSM atoms through cute, unmodified, performed by the layer: a warp
// group multiplies 64x64 by 64x64 half_t tiles in shared memory (CUTLASS's GMMA layout atoms,
// both majors, every swizzle; descriptors from CUTLASS's make_gmma_desc; four k-blocks) with
// SM90_64x64x16 SS atoms, the _RS atom (A through ldmatrix) and an f16-accumulator atom, and a
// warp writes and reads back a tile with stmatrix / ldmatrix. D is compared with a plain GEMM;
// each launch is checked exhaustively. Exit status 0 when every case holds.
#include <cute/tensor.hpp>
#include <cute/atom/copy_atom.hpp>
#include <cute/atom/mma_atom.hpp>
#include <cutlass/arch/barrier.h>
#include <cutlass/cluster_launch.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "mbcheck/cutlass_host/launch.hpp"

using namespace cute;
using P = mbcheck::sim::HostPlatform;

namespace {

using SS = SM90_64x64x16_F32F16F16_SS<GMMA::Major::K, GMMA::Major::K>;
using SS_F16 = SM90_64x64x16_F16F16F16_SS<GMMA::Major::K, GMMA::Major::K>;  // f16 accumulators
using RS = SM90_64x64x16_F32F16F16_RS<GMMA::Major::K, GMMA::Major::K>;
// The layer's mma_unpack takes these atoms (and CUTLASS's own would leave D untouched).
static_assert(mbcheck::cutlass_host::gmma::PerformedAtom<SS>);
static_assert(mbcheck::cutlass_host::gmma::PerformedAtom<RS>);
static_assert(mbcheck::cutlass_host::gmma::PerformedAtom<SM90_64x8x8_F32TF32TF32_SS_TN<>>);
static_assert(!mbcheck::cutlass_host::gmma::PerformedAtom<SM90_64x8x32_S32S8S8_SS_TN>);

constexpr int kTile = 64;
int a_value(int m, int k) { return (m * 3 + k * 5) % 7 - 3; }
int b_value(int n, int k) { return (n * 2 + k * 3 + 1) % 5 - 2; }

// Thread 0 fills the operand tiles (the window is reached through the layer's mapping: a plain
// store to it would crash), then makes them visible to the async proxy.
template <class TensorA, class TensorB>
void fill_operands(TensorA const& sA, TensorB const& sB) {
  if (threadIdx.x == 0)
    for (int i = 0; i < kTile; ++i)
      for (int k = 0; k < kTile; ++k) {
        const half_t a(static_cast<float>(a_value(i, k))), b(static_cast<float>(b_value(i, k)));
        P::store(reinterpret_cast<half_t*>(mbcheck::cutlass_host::shared_address(&sA(i, k), 2, "A")), a);
        P::store(reinterpret_cast<half_t*>(mbcheck::cutlass_host::shared_address(&sB(i, k), 2, "B")), b);
      }
  cutlass::arch::fence_view_async_shared();
  __syncthreads();
}

}  // namespace

// The tiles in `layout_a` / `layout_b` (CUTLASS's GMMA layout atoms tiled to 64x64), multiplied
// with `tiled_mma` over four k-blocks; with an _RS atom A goes to registers by ldmatrix (cute's
// LDSM copy atom) first.
template <class TiledMma, class LayoutA, class LayoutB>
void gemm_body(float* d, TiledMma tiled_mma, LayoutA layout_a, LayoutB layout_b) {
  extern __shared__ char shared_memory[];
  auto* smem = reinterpret_cast<half_t*>(shared_memory);
  Tensor sA = make_tensor(make_smem_ptr(smem), layout_a);
  Tensor sB = make_tensor(make_smem_ptr(smem + kTile * kTile), layout_b);
  Tensor gD = make_tensor(make_gmem_ptr(d), make_shape(Int<kTile>{}, Int<kTile>{}), make_stride(Int<kTile>{}, _1{}));
  fill_operands(sA, sB);
  auto thr = tiled_mma.get_thread_slice(static_cast<int>(threadIdx.x));
  Tensor tCrB = thr.make_fragment_B(thr.partition_B(sB));
  Tensor tCrC = partition_fragment_C(tiled_mma, Shape<Int<kTile>, Int<kTile>>{});
  Tensor tCrA = [&] {
    if constexpr (std::is_same_v<TiledMma, decltype(make_tiled_mma(RS{}))>) {
      Tensor r = thr.partition_fragment_A(sA);
      auto ldsm = make_tiled_copy_A(Copy_Atom<SM75_U32x4_LDSM_N, half_t>{}, tiled_mma);
      auto thr_ldsm = ldsm.get_thread_slice(static_cast<int>(threadIdx.x));
      copy(ldsm, thr_ldsm.partition_S(sA), thr_ldsm.retile_D(r));
      return r;
    } else {
      return thr.make_fragment_A(thr.partition_A(sA));
    }
  }();
  warpgroup_fence_operand(tCrC);
  warpgroup_arrive();
  tiled_mma.accumulate_ = GMMA::ScaleOut::Zero;
  for (int k = 0; k < size<2>(tCrA); ++k) {
    cute::gemm(tiled_mma, tCrA(_, _, k), tCrB(_, _, k), tCrC);
    tiled_mma.accumulate_ = GMMA::ScaleOut::One;
  }
  warpgroup_commit_batch();
  warpgroup_wait<0>();
  warpgroup_fence_operand(tCrC);
  Tensor tCgD = thr.partition_C(gD);
  for (int i = 0; i < size(tCrC); ++i) tCgD(i) = static_cast<float>(tCrC(i));
}

template <class Atom>
auto tile(Atom atom) {
  return tile_to_shape(atom, Shape<Int<kTile>, Int<kTile>>{});
}

constexpr const char* kAtoms[] = {
    "SM90_64x64x16_F32F16F16_SS, K-major 128-byte swizzle",
    "SM90_64x64x16_F32F16F16_RS (A by SM75_U32x4_LDSM_N)",
    "SM90_64x64x16_F16F16F16_SS (f16 accumulators)",
    "SM90_64x64x16_F32F16F16_SS<MN, MN>, 128-byte swizzle",
    "SM90_64x64x16_F32F16F16_SS<K, MN>, A K-major 32-byte, B MN-major 64-byte swizzle",
    "SM90_64x64x16_F32F16F16_SS<MN, K>, A MN-major, B K-major, no swizzle",
};
__global__ void gemm_kernel(float* d, int atom) {
  using namespace GMMA;
  switch (atom) {
    case 0:
      return gemm_body(d, make_tiled_mma(SS{}), tile(Layout_K_SW128_Atom<half_t>{}),
                       tile(Layout_K_SW128_Atom<half_t>{}));
    case 1:
      return gemm_body(d, make_tiled_mma(RS{}), tile(Layout_K_SW128_Atom<half_t>{}),
                       tile(Layout_K_SW128_Atom<half_t>{}));
    case 2:
      return gemm_body(d, make_tiled_mma(SS_F16{}), tile(Layout_K_SW128_Atom<half_t>{}),
                       tile(Layout_K_SW128_Atom<half_t>{}));
    case 3:
      return gemm_body(d, make_tiled_mma(SM90_64x64x16_F32F16F16_SS<Major::MN, Major::MN>{}),
                       tile(Layout_MN_SW128_Atom<half_t>{}), tile(Layout_MN_SW128_Atom<half_t>{}));
    case 4:
      return gemm_body(d, make_tiled_mma(SM90_64x64x16_F32F16F16_SS<Major::K, Major::MN>{}),
                       tile(Layout_K_SW32_Atom<half_t>{}), tile(Layout_MN_SW64_Atom<half_t>{}));
    default:
      return gemm_body(d, make_tiled_mma(SM90_64x64x16_F32F16F16_SS<Major::MN, Major::K>{}),
                       tile(Layout_MN_INTER_Atom<half_t>{}), tile(Layout_K_INTER_Atom<half_t>{}));
  }
}

// A warp stores a 16x16 half_t tile with stmatrix (x4) from fragments it built, reads it back
// with ldmatrix (x4) into other registers, and checks they agree.
__global__ void stsm_ldsm_kernel(float*, int trans) {
  extern __shared__ char shared_memory[];
  auto* row_base = reinterpret_cast<uint128_t*>(shared_memory);
  const uint32_t lane = threadIdx.x % 32;
  // Lane l names row l % 16 of the tile, in its left (l < 16) or right half.
  uint128_t& row = row_base[2 * (lane % 16) + lane / 16];
  uint32_t in[4], out[4];
  for (uint32_t i = 0; i < 4; ++i) in[i] = lane * 4 + i + 0x10000u * (i + 1);
  if (trans) {
    SM90_U16x8_STSM_T::copy(in[0], in[1], in[2], in[3], row);
    __syncwarp();
    SM75_U16x8_LDSM_T::copy(row, out[0], out[1], out[2], out[3]);
  } else {
    SM90_U32x4_STSM_N::copy(in[0], in[1], in[2], in[3], row);
    __syncwarp();
    SM75_U32x4_LDSM_N::copy(row, out[0], out[1], out[2], out[3]);
  }
  for (uint32_t i = 0; i < 4; ++i) P::check(out[i] == in[i], "ldmatrix reads back what stmatrix wrote");
}

namespace {

int failures = 0;
void expect(bool ok, const std::string& what) {
  std::printf("%s: %s\n", ok ? "ok  " : "FAIL", what.c_str());
  failures += ok ? 0 : 1;
}

mbcheck::cutlass_host::LaunchRecord launch(void (*kernel)(float*, int), float* d, int arg, unsigned threads,
                                           std::size_t smem) {
  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
  void* args[] = {&d, &arg};
  cutlass::ClusterLauncher::launch(dim3(1, 1, 1), dim3(1, 1, 1), dim3(threads, 1, 1), smem, nullptr,
                                   (const void*)kernel, args);
  auto records = mbcheck::cutlass_host::take_launch_records();
  return records.empty() ? mbcheck::cutlass_host::LaunchRecord{} : records.back();
}

std::string compare(const float* d_device) {
  std::vector<float> d(kTile * kTile);
  cudaMemcpy(d.data(), d_device, d.size() * sizeof(float), cudaMemcpyDeviceToHost);
  for (int m = 0; m < kTile; ++m)
    for (int n = 0; n < kTile; ++n) {
      int want = 0;
      for (int k = 0; k < kTile; ++k) want += a_value(m, k) * b_value(n, k);
      if (d[m * kTile + n] != static_cast<float>(want))
        return "D[" + std::to_string(m) + "][" + std::to_string(n) + "] = " + std::to_string(d[m * kTile + n]) +
               ", want " + std::to_string(want);
    }
  return "";
}

}  // namespace

int main() {
  mbcheck::cutlass_host::launch_policy().print_reports = false;
  float* d = nullptr;
  cudaMalloc(&d, kTile * kTile * sizeof(float));
  const std::size_t smem = 2 * kTile * kTile * sizeof(half_t);
  for (int atom = 0; atom < 6; ++atom) {
    cudaMemset(d, 0, kTile * kTile * sizeof(float));
    auto r = launch(gemm_kernel, d, atom, 128, smem);
    expect(r.verdict == mbcheck::sim::CheckVerdict::verified,
           std::string(kAtoms[atom]) + " through cute::gemm: verified " + r.report);
    const std::string wrong = compare(d);
    expect(wrong.empty(), "D = A*B over four k-blocks " + wrong);
  }
  for (int trans = 0; trans < 2; ++trans) {
    auto r = launch(stsm_ldsm_kernel, d, trans, 32, 512);
    expect(
        r.verdict == mbcheck::sim::CheckVerdict::verified,
        std::string(trans ? "SM90_U16x8_STSM_T then SM75_U16x8_LDSM_T" : "SM90_U32x4_STSM_N then SM75_U32x4_LDSM_N") +
            ": verified " + r.report);
  }
  cudaFree(d);
  std::printf("%s\n", failures == 0 ? "PASS" : "FAIL");
  return failures == 0 ? 0 : 1;
}
