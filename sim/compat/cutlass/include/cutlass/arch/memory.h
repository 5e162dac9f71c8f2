// cutlass/arch/memory.h on the host: CUTLASS's own header, whose predicated global loads and
// stores (`@p ld.global` / `@p st.global`, used by CUTLASS 3's default epilogue) and 32-bit
// shared-memory accessors (ld.shared / st.shared) are inline PTX: here they are the same
// accesses in C++ (a load leaves its destination as it was when the predicate is false, as the
// PTX's movs do). They are plain accesses: the race detector sees them in a target built with
// mbcheck_cutlass_track_accesses (docs/semantics.md, "Plain accesses of unmodified code").
#pragma once

#include <cstdint>
#include <cstring>

#include "cutlass/arch/cache_operation.h"
#include "mbcheck/cutlass_host/thread_identity.hpp"

#define global_load cutlass_original_global_load
#define global_store cutlass_original_global_store
#define shared_load cutlass_original_shared_load
#define shared_store cutlass_original_shared_store
#include_next <cutlass/arch/memory.h>
#undef global_load
#undef global_store
#undef shared_load
#undef shared_store

namespace cutlass::arch {

// ld.global (predicated) of LoadBytes into D
template <typename AccessType, int LoadBytes, CacheOperation::Kind cache_op = CacheOperation::Always>
struct global_load {
  global_load(AccessType& D, void const* ptr, bool pred_guard) {
    static_assert(sizeof(AccessType) >= LoadBytes, "global_load: the fragment is smaller than the load");
    if (pred_guard) std::memcpy(&D, ptr, LoadBytes);
  }
};

// st.global (predicated) of StoreBytes from D
template <typename AccessType, int StoreBytes>
struct global_store {
  global_store(AccessType const& D, void* ptr, bool pred_guard) {
    static_assert(sizeof(AccessType) >= StoreBytes, "global_store: the fragment is smaller than the store");
    if (pred_guard) std::memcpy(ptr, &D, StoreBytes);
  }
};

// ld.shared of Bytes at a 32-bit shared address (an offset in the CTA's shared memory)
template <int Bytes>
inline void shared_load(void* dst, uint32_t ptr) {
  std::memcpy(dst, ::mbcheck::cutlass_host::window_address(ptr), Bytes);
}

// st.shared of Bytes at a 32-bit shared address
template <int Bytes>
inline void shared_store(uint32_t ptr, void const* src) {
  std::memcpy(::mbcheck::cutlass_host::window_address(ptr), src, Bytes);
}

}  // namespace cutlass::arch
