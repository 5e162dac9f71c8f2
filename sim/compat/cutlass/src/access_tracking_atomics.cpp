// The compiler's atomic callbacks (__tsan_atomic{8,16,32,64,128}_*): each performs its
// operation and returns what the instruction returns, and is an atomic access for the race
// detector (it races with plain accesses of the bytes, never with other atomics).
//
// Performed without a scheduling point inside: every fiber of a launch runs on one OS thread,
// so nothing else runs between the read and the write. The tracking comes first (an access may
// first perform a deferred try_wait, which is a scheduling point); a compare-exchange is a read,
// and a write too once it swapped. Memory orders are not modelled: an atomic orders nothing
// for the race detector (its acquire/release would need scheduling points, docs/semantics.md).
#include <cstddef>
#include <cstdint>

#include "access_tracking.hpp"

namespace {

using mbcheck::cutlass_host::track;

template <class T>
T load(const volatile T* a, const void* pc) {
  track(a, sizeof(T), false, pc, true);
  return *a;
}
template <class T>
void store(volatile T* a, T v, const void* pc) {
  track(a, sizeof(T), true, pc, true);
  *a = v;
}
template <class T, class F>
T fetch(volatile T* a, T v, const void* pc, F op) {
  track(a, sizeof(T), true, pc, true);
  const T old = *a;
  *a = op(old, v);
  return old;
}
template <class T>
bool compare_exchange(volatile T* a, T* expected, T desired, const void* pc) {
  track(a, sizeof(T), false, pc, true);
  const T old = *a;
  if (old != *expected) {
    *expected = old;
    return false;
  }
  *a = desired;
  track(a, sizeof(T), true, pc, true);
  return true;
}

}  // namespace

extern "C" {

#define MBCHECK_TSAN_ATOMIC(bits, T)                                                      \
  T __tsan_atomic##bits##_load(const volatile T* a, int) { return load(a, MBCHECK_PC); }  \
  void __tsan_atomic##bits##_store(volatile T* a, T v, int) { store(a, v, MBCHECK_PC); }  \
  T __tsan_atomic##bits##_exchange(volatile T* a, T v, int) {                             \
    return fetch(a, v, MBCHECK_PC, [](T, T x) { return x; });                             \
  }                                                                                       \
  T __tsan_atomic##bits##_fetch_add(volatile T* a, T v, int) {                            \
    return fetch(a, v, MBCHECK_PC, [](T o, T x) { return static_cast<T>(o + x); });       \
  }                                                                                       \
  T __tsan_atomic##bits##_fetch_sub(volatile T* a, T v, int) {                            \
    return fetch(a, v, MBCHECK_PC, [](T o, T x) { return static_cast<T>(o - x); });       \
  }                                                                                       \
  T __tsan_atomic##bits##_fetch_and(volatile T* a, T v, int) {                            \
    return fetch(a, v, MBCHECK_PC, [](T o, T x) { return static_cast<T>(o & x); });       \
  }                                                                                       \
  T __tsan_atomic##bits##_fetch_or(volatile T* a, T v, int) {                             \
    return fetch(a, v, MBCHECK_PC, [](T o, T x) { return static_cast<T>(o | x); });       \
  }                                                                                       \
  T __tsan_atomic##bits##_fetch_xor(volatile T* a, T v, int) {                            \
    return fetch(a, v, MBCHECK_PC, [](T o, T x) { return static_cast<T>(o ^ x); });       \
  }                                                                                       \
  T __tsan_atomic##bits##_fetch_nand(volatile T* a, T v, int) {                           \
    return fetch(a, v, MBCHECK_PC, [](T o, T x) { return static_cast<T>(~(o & x)); });    \
  }                                                                                       \
  int __tsan_atomic##bits##_compare_exchange_strong(volatile T* a, T* c, T v, int, int) { \
    return compare_exchange(a, c, v, MBCHECK_PC);                                         \
  }                                                                                       \
  int __tsan_atomic##bits##_compare_exchange_weak(volatile T* a, T* c, T v, int, int) {   \
    return compare_exchange(a, c, v, MBCHECK_PC);                                         \
  }                                                                                       \
  T __tsan_atomic##bits##_compare_exchange_val(volatile T* a, T c, T v, int, int) {       \
    compare_exchange(a, &c, v, MBCHECK_PC);                                               \
    return c;                                                                             \
  }
MBCHECK_TSAN_ATOMIC(8, std::uint8_t)
MBCHECK_TSAN_ATOMIC(16, std::uint16_t)
MBCHECK_TSAN_ATOMIC(32, std::uint32_t)
MBCHECK_TSAN_ATOMIC(64, std::uint64_t)
MBCHECK_TSAN_ATOMIC(128, unsigned __int128)
#undef MBCHECK_TSAN_ATOMIC

}  // extern "C"
