// The driver API's tensor-map encoder on the host, and what CUTLASS reaches it through.
// cute's make_tma_copy (cute/atom/copy_traits_sm90_tma.hpp) calls
// CUTLASS_CUDA_DRIVER_WRAPPER_CALL(cuTensorMapEncodeTiled): with CUDA 13 headers that is
// cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &pfn, 12000, ...), before 13
// cudaGetDriverEntryPoint, and with CUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL the function itself
// (cutlass/cuda_host_adapter.hpp); afterwards it reads cudaDriverGetVersion. All four are here.
// The map is recorded in the CUtensorMap's 128 bytes by the host TMA engine
// (sim/runtime/tensor_map.hpp), which validates the arguments as the driver API documents.
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>

#include "sim/runtime/tensor_map.hpp"

namespace {

static_assert(sizeof(CUtensorMap) >= sizeof(mbcheck::sim::tma::TensorMap), "the recorded map fits a CUtensorMap");

// The driver version reported: CUDA 13.0's, the headers the layer builds with. Above 13.1 (13010)
// CUTLASS would skip its clearing of bit 21 of the map's second word; the recorded map leaves
// that byte unused either way (tensor_map.hpp).
constexpr int kDriverVersion = CUDA_VERSION;

}  // namespace

extern "C" {

CUresult CUDAAPI cuTensorMapEncodeTiled(CUtensorMap* tensorMap, CUtensorMapDataType tensorDataType,
                                        cuuint32_t tensorRank, void* globalAddress, const cuuint64_t* globalDim,
                                        const cuuint64_t* globalStrides, const cuuint32_t* boxDim,
                                        const cuuint32_t* elementStrides, CUtensorMapInterleave interleave,
                                        CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2Promotion,
                                        CUtensorMapFloatOOBfill oobFill) {
  namespace tma = mbcheck::sim::tma;
  tma::TiledArgs a;
  a.map_address = tensorMap;
  a.dtype = static_cast<std::uint32_t>(tensorDataType);
  a.rank = tensorRank;
  a.global = globalAddress;
  a.dims = globalDim;
  a.strides = globalStrides;
  a.box = boxDim;
  a.elem_strides = elementStrides;
  a.interleave = static_cast<std::uint32_t>(interleave);
  a.swizzle = static_cast<std::uint32_t>(swizzle);
  a.l2_promotion = static_cast<std::uint32_t>(l2Promotion);
  a.oob_fill = static_cast<std::uint32_t>(oobFill);
  tma::TensorMap m;
  const std::string error = tensorMap ? tma::encode_tiled(a, m) : std::string("tensorMap is null");
  if (!error.empty()) {
    std::fprintf(stderr, "mbcheck: cuTensorMapEncodeTiled: CUDA_ERROR_INVALID_VALUE: %s\n", error.c_str());
    return CUDA_ERROR_INVALID_VALUE;
  }
  std::memset(tensorMap, 0, sizeof(CUtensorMap));
  std::memcpy(tensorMap, &m, sizeof m);
  return CUDA_SUCCESS;
}

// Im2col maps are not modelled: refused, so that a kernel using them fails at its set-up, not
// with a silent no-op copy.
CUresult CUDAAPI cuTensorMapEncodeIm2col(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                         const cuuint64_t*, const int*, const int*, cuuint32_t, cuuint32_t,
                                         const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                         CUtensorMapL2promotion, CUtensorMapFloatOOBfill) {
  std::fprintf(stderr,
               "mbcheck: cuTensorMapEncodeIm2col: CUDA_ERROR_NOT_SUPPORTED: im2col tensor maps are not modelled "
               "by the host TMA engine (tiled maps are)\n");
  return CUDA_ERROR_NOT_SUPPORTED;
}

cudaError_t CUDARTAPI cudaDriverGetVersion(int* driverVersion) {
  if (!driverVersion) return cudaErrorInvalidValue;
  *driverVersion = kDriverVersion;
  return cudaSuccess;
}

}  // extern "C"

namespace {

cudaError_t entry_point(const char* symbol, void** funcPtr, cudaDriverEntryPointQueryResult* status) {
  if (!symbol || !funcPtr) return cudaErrorInvalidValue;
  void* f = nullptr;
  if (std::strcmp(symbol, "cuTensorMapEncodeTiled") == 0) f = reinterpret_cast<void*>(&cuTensorMapEncodeTiled);
  if (std::strcmp(symbol, "cuTensorMapEncodeIm2col") == 0) f = reinterpret_cast<void*>(&cuTensorMapEncodeIm2col);
  *funcPtr = f;
  if (status) *status = f ? cudaDriverEntryPointSuccess : cudaDriverEntryPointSymbolNotFound;
  if (!f) std::fprintf(stderr, "mbcheck: cudaGetDriverEntryPoint: %s has no host stand-in\n", symbol);
  return cudaSuccess;
}

}  // namespace

// Declared by cuda_runtime_api.h with C++ default arguments (C linkage).
extern "C" cudaError_t CUDARTAPI cudaGetDriverEntryPointByVersion(const char* symbol, void** funcPtr,
                                                                  unsigned int cudaVersion, unsigned long long,
                                                                  cudaDriverEntryPointQueryResult* driverStatus) {
  if (cudaVersion < 12000) {  // the encoder exists from CUDA 12.0 on
    if (funcPtr) *funcPtr = nullptr;
    if (driverStatus) *driverStatus = cudaDriverEntryPointVersionNotSufficent;
    return cudaSuccess;
  }
  return entry_point(symbol, funcPtr, driverStatus);
}

extern "C" cudaError_t CUDARTAPI cudaGetDriverEntryPoint(const char* symbol, void** funcPtr, unsigned long long,
                                                         cudaDriverEntryPointQueryResult* driverStatus) {
  return entry_point(symbol, funcPtr, driverStatus);
}
