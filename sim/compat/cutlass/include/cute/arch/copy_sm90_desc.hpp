// cute/arch/copy_sm90_desc.hpp on the host: CUTLASS's own header (TmaDescriptor, the GMMA and TMA
// descriptor helpers), with prefetch_tma_descriptor as the host's prefetch.tensormap: a cache
// hint with no effect on what a kernel can observe (off the GPU CuTe prints an error instead).
#pragma once

#define prefetch_tma_descriptor cutlass_original_prefetch_tma_descriptor
#include_next <cute/arch/copy_sm90_desc.hpp>
#undef prefetch_tma_descriptor

namespace cute {

// prefetch.tensormap [desc]
inline void prefetch_tma_descriptor(TmaDescriptor const*) {}

}  // namespace cute
