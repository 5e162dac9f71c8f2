// cute/arch/util.hpp on the host: CUTLASS's own header, with cast_smem_ptr_to_uint (cvta to a
// 32-bit shared address; off the GPU CUTE prints an error and answers 0) answering the offset
// in the CTA's dynamic shared memory, as on the GPU (prelude.hpp).
#pragma once

#include <cute/config.hpp>
#include <cute/numeric/integer_sequence.hpp>

#include "mbcheck/cutlass_host/thread_identity.hpp"

#define cast_smem_ptr_to_uint cutlass_original_cast_smem_ptr_to_uint
#include_next <cute/arch/util.hpp>
#undef cast_smem_ptr_to_uint

namespace cute {

inline uint32_t cast_smem_ptr_to_uint(void const* const ptr) {
  return static_cast<uint32_t>(::mbcheck::cutlass_host::window_offset(ptr));
}

}  // namespace cute
