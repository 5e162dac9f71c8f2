// cutlass/arch/wmma.h on the host: CUTLASS's own header with WMMA (nvcuda::wmma, <mma.h>) off.
// CUTLASS enables WMMA by the compiler's CUDA version alone; the CUDA headers declare
// nvcuda::wmma only to nvcc, and the host has no WMMA: CUTLASS 2.x warp-level WMMA code does
// not compile against the layer (CUTLASS 3 kernels do not use it).
#pragma once

#pragma push_macro("__CUDACC_VER_MAJOR__")
#undef __CUDACC_VER_MAJOR__
#define __CUDACC_VER_MAJOR__ 8
#include_next <cutlass/arch/wmma.h>
#pragma pop_macro("__CUDACC_VER_MAJOR__")
