// CuTe's TMA on the host layer, end to end as a CUTLASS kernel uses it: make_tma_copy encodes the
// tensor maps through cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled") (the host
// stand-in, src/tensor_map.cpp); the kernel loads a 64 x 64 fp16 tile into shared memory laid out
// by the 128B GMMA atom (Swizzle<3,4,3>) with SM90_TMA_LOAD, reads it back through CuTe's own
// swizzled layout, and stores it with SM90_TMA_STORE from every lane of warp 0, as CUTLASS's sm90
// epilogue does, and reduce-adds it twice with SM90_TMA_REDUCE_ADD; a cluster of 2 multicasts it.
// Checked exhaustively; exit status 0 when every case holds.
#include <cuda.h>
#include <cudaTypedefs.h>

#include <cute/tensor.hpp>
#include <cute/atom/copy_traits_sm90_tma.hpp>
#include <cute/atom/mma_traits_sm90_gmma.hpp>
#include <cutlass/arch/barrier.h>
#include <cutlass/cluster_launch.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "mbcheck/cutlass_host/launch.hpp"

using namespace cute;
using P = mbcheck::sim::HostPlatform;

namespace {

using Element = cutlass::half_t;
using SmemLayout = decltype(tile_to_shape(GMMA::Layout_K_SW128_Atom<Element>{}, Shape<_64, _64>{}));
constexpr int kTileBytes = 64 * 64 * 2;

struct alignas(1024) Storage {
  Element tile[64 * 64];
  uint64_t bar;
};

template <class Load, class Store, class Reduce>
struct Params {
  Load load;
  Store store;
  Reduce reduce;
  Element const* a;
};

}  // namespace

template <class Load, class Store, class Reduce>
__global__ void tma_kernel(Params<Load, Store, Reduce> p) {
  extern __shared__ char shared_memory[];
  Storage& s = *reinterpret_cast<Storage*>(shared_memory);
  Tensor sA = make_tensor(make_smem_ptr(s.tile), SmemLayout{});
  auto& bar = *reinterpret_cast<cutlass::arch::ClusterTransactionBarrier*>(&s.bar);
  Tensor mA = p.load.get_tma_tensor(make_shape(64, 64));
  Tensor mB = p.store.get_tma_tensor(make_shape(64, 64));
  auto load = p.load.get_slice(0);
  auto store = p.store.get_slice(0);
  if (threadIdx.x == 0) bar.init(1);
  __syncthreads();
  if (threadIdx.x == 0) {
    bar.arrive_and_expect_tx(kTileBytes);
    copy(p.load.with(*reinterpret_cast<uint64_t*>(&s.bar)), load.partition_S(mA), load.partition_D(sA));
  }
  bar.wait(0);
  // Every element where CuTe's swizzled layout says it is.
  bool ok = true;
  if (threadIdx.x == 0)
    for (int m = 0; m < 64; ++m)
      for (int k = 0; k < 64; ++k) {
        // The layer's shared memory is a window of offsets: read the element where the running
        // CTA's shared memory holds it (a plain read of the window would fault).
        const auto* e = reinterpret_cast<const Element*>(
            mbcheck::cutlass_host::shared_address(&sA(m, k), sizeof(Element), "the tile"));
        ok = ok && P::load(e) == p.a[m * 64 + k];
      }
  P::check(ok, "the tile in shared memory, read through CuTe's Swizzle<3,4,3> layout");
  __syncthreads();
  if (threadIdx.x / 32 == 0) {  // every lane of warp 0 issues the store, as the sm90 epilogue does
    copy(p.store, store.partition_S(sA), store.partition_D(mB));
    tma_store_arrive();
    tma_store_wait<0>();
  }
  if (threadIdx.x == 32) {  // one lane of warp 1 adds the tile into C twice (SM90_TMA_REDUCE_ADD)
    Tensor mC = p.reduce.get_tma_tensor(make_shape(64, 64));
    auto reduce = p.reduce.get_slice(0);
    copy(p.reduce, reduce.partition_S(sA), reduce.partition_D(mC));
    copy(p.reduce, reduce.partition_S(sA), reduce.partition_D(mC));
    tma_store_arrive();
    tma_store_wait<0>();
  }
  __syncthreads();
}

// A cluster of 2: each CTA loads half of the tile and multicasts it to both (SM90_TMA_LOAD_MULTICAST,
// as the 2x1 GEMM shares A or B); each CTA's barrier expects the whole tile.
template <class MLoad>
__global__ void multicast_kernel(MLoad mload, Element const* a) {
  extern __shared__ char shared_memory[];
  Storage& s = *reinterpret_cast<Storage*>(shared_memory);
  Tensor sA = make_tensor(make_smem_ptr(s.tile), SmemLayout{});
  auto& bar = *reinterpret_cast<cutlass::arch::ClusterTransactionBarrier*>(&s.bar);
  Tensor mA = mload.get_tma_tensor(make_shape(64, 64));
  const int rank = int(cute::block_rank_in_cluster());
  auto load = mload.get_slice(rank);
  if (threadIdx.x == 0) bar.init(1);
  cutlass::arch::fence_barrier_init();
  cute::cluster_sync();
  if (threadIdx.x == 0) {
    bar.arrive_and_expect_tx(kTileBytes);
    copy(mload.with(*reinterpret_cast<uint64_t*>(&s.bar), uint16_t(0x3)), load.partition_S(mA), load.partition_D(sA));
  }
  bar.wait(0);
  bool ok = true;
  if (threadIdx.x == 0)
    for (int m = 0; m < 64; ++m)
      for (int k = 0; k < 64; ++k) {
        const auto* e = reinterpret_cast<const Element*>(
            mbcheck::cutlass_host::shared_address(&sA(m, k), sizeof(Element), "the tile"));
        ok = ok && P::load(e) == a[m * 64 + k];
      }
  P::check(ok, "both halves of the tile, multicast into this CTA");
  cute::cluster_sync();  // no CTA exits while its peer's multicast may still land in it
}

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
  std::printf("%s: %s\n", ok ? "ok  " : "FAIL", what.c_str());
  failures += ok ? 0 : 1;
}

}  // namespace

int main() {
  mbcheck::cutlass_host::launch_policy().print_reports = false;
  Element* a = nullptr;
  Element* b = nullptr;
  Element* c = nullptr;
  cudaMalloc(reinterpret_cast<void**>(&a), kTileBytes);
  cudaMalloc(reinterpret_cast<void**>(&b), kTileBytes);
  cudaMalloc(reinterpret_cast<void**>(&c), kTileBytes);
  for (int i = 0; i < 64 * 64; ++i) c[i] = Element(0.0f);
  for (int i = 0; i < 64 * 64; ++i) a[i] = Element(float(i % 509));
  // A row-major 64 x 64 (m, k): k contiguous, as a K-major operand.
  Tensor gA = make_tensor(make_gmem_ptr(a), make_shape(64, 64), make_stride(64, _1{}));
  Tensor gB = make_tensor(make_gmem_ptr(b), make_shape(64, 64), make_stride(64, _1{}));
  Tensor gC = make_tensor(make_gmem_ptr(c), make_shape(64, 64), make_stride(64, _1{}));
  auto load = make_tma_copy(SM90_TMA_LOAD{}, gA, SmemLayout{});
  auto store = make_tma_copy(SM90_TMA_STORE{}, gB, SmemLayout{});
  auto reduce = make_tma_copy(SM90_TMA_REDUCE_ADD{}, gC, SmemLayout{});
  using Par = Params<decltype(load), decltype(store), decltype(reduce)>;
  Par params{load, store, reduce, a};
  auto kernel = tma_kernel<decltype(load), decltype(store), decltype(reduce)>;
  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(sizeof(Storage)));
  void* args[] = {&params};
  cutlass::ClusterLauncher::launch(dim3(1, 1, 1), dim3(1, 1, 1), dim3(64, 1, 1), sizeof(Storage), nullptr,
                                   (const void*)kernel, args);
  auto records = mbcheck::cutlass_host::take_launch_records();
  const bool ran = !records.empty();
  expect(ran && records.back().verdict == mbcheck::sim::CheckVerdict::verified,
         "TMA load (128B swizzle) and a warp-uniform TMA store: verified " + (ran ? records.back().report : ""));
  {
    auto mload = make_tma_copy(SM90_TMA_LOAD_MULTICAST{}, gA, SmemLayout{}, Int<2>{});
    auto mkernel = multicast_kernel<decltype(mload)>;
    cudaFuncSetAttribute(mkernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(sizeof(Storage)));
    Element const* ca = a;
    void* margs[] = {&mload, &ca};
    cutlass::ClusterLauncher::launch(dim3(2, 1, 1), dim3(2, 1, 1), dim3(32, 1, 1), sizeof(Storage), nullptr,
                                     (const void*)mkernel, margs);
    auto mrecords = mbcheck::cutlass_host::take_launch_records();
    const bool mran = !mrecords.empty();
    expect(mran && mrecords.back().verdict == mbcheck::sim::CheckVerdict::verified,
           "TMA multicast of two halves into a cluster of 2: verified " + (mran ? mrecords.back().report : ""));
  }
  bool same = true;
  for (int i = 0; i < 64 * 64; ++i) same = same && b[i] == a[i];
  expect(same, "the stored tile equals the loaded one");
  bool doubled = true;
  for (int i = 0; i < 64 * 64; ++i) doubled = doubled && float(c[i]) == 2.0f * float(a[i]);
  expect(doubled, "two reduce-adds of the tile into zeros: twice the tile");
  // The driver entry point CUTLASS asks for, and a map the driver API's rules refuse (a box
  // dimension over 256): CUDA_ERROR_INVALID_VALUE, with the rule printed.
  void* pfn = nullptr;
  cudaDriverEntryPointQueryResult status{};
  cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &pfn, 12000, cudaEnableDefault, &status);
  expect(pfn != nullptr && status == cudaDriverEntryPointSuccess, "cudaGetDriverEntryPointByVersion finds the encoder");
  int version = 0;
  expect(cudaDriverGetVersion(&version) == cudaSuccess && version >= 12000, "cudaDriverGetVersion");
  alignas(64) CUtensorMap map{};
  const cuuint64_t dims[2] = {64, 64}, strides[1] = {128};
  const cuuint32_t box[2] = {64, 300}, estrides[2] = {1, 1};
  const CUresult bad = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(pfn)(
      &map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, a, dims, strides, box, estrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
      CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  expect(bad == CUDA_ERROR_INVALID_VALUE, "a box dimension of 300 is refused with CUDA_ERROR_INVALID_VALUE");
  std::printf("%s\n", failures == 0 ? "PASS" : "FAIL");
  return failures == 0 ? 0 : 1;
}
