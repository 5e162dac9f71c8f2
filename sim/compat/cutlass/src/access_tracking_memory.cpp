// memcpy, memmove and memset of an instrumented kernel: the compiler leaves them calls to the
// C library (the sanitizer's runtime would intercept them), so the link wraps them
// (--wrap=memcpy,...: mbcheck_cutlass_track_accesses): each is a read of its source and a
// write of its destination by the calling thread, at the caller's line. The link wraps every
// object's calls, the runtime's too: its own are dismissed (not a kernel thread's code, or no
// shared or global memory).
#include <cstddef>

#include "access_tracking.hpp"

using mbcheck::cutlass_host::track;

extern "C" {

void* __real_memcpy(void* dst, const void* src, std::size_t n);
void* __real_memmove(void* dst, const void* src, std::size_t n);
void* __real_memset(void* dst, int c, std::size_t n);

void* __wrap_memcpy(void* dst, const void* src, std::size_t n) {
  if (n) {
    track(src, n, false, MBCHECK_PC);
    track(dst, n, true, MBCHECK_PC);
  }
  return __real_memcpy(dst, src, n);
}
void* __wrap_memmove(void* dst, const void* src, std::size_t n) {
  if (n) {
    track(src, n, false, MBCHECK_PC);
    track(dst, n, true, MBCHECK_PC);
  }
  return __real_memmove(dst, src, n);
}
void* __wrap_memset(void* dst, int c, std::size_t n) {
  if (n) track(dst, n, true, MBCHECK_PC);
  return __real_memset(dst, c, n);
}

}  // extern "C"

// What a compiler that instruments memory intrinsics itself calls in their place (Clang's
// -fsanitize=thread does where it is told to): the same, performed by the C library's own.
extern "C" {
void* __tsan_memcpy(void* dst, const void* src, std::size_t n) {
  if (n) {
    track(src, n, false, MBCHECK_PC);
    track(dst, n, true, MBCHECK_PC);
  }
  return __real_memcpy(dst, src, n);
}
void* __tsan_memmove(void* dst, const void* src, std::size_t n) {
  if (n) {
    track(src, n, false, MBCHECK_PC);
    track(dst, n, true, MBCHECK_PC);
  }
  return __real_memmove(dst, src, n);
}
void* __tsan_memset(void* dst, int c, std::size_t n) {
  if (n) track(dst, n, true, MBCHECK_PC);
  return __real_memset(dst, c, n);
}
}  // extern "C"
