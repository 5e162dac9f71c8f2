// Conformance tests of the Platform contract: small programs, each with one outcome that the
// PTX ISA (or, for a CUDA intrinsic, the CUDA Programming Guide) defines, run by both backends
// from this one source: on the host every schedule is explored and each execution must end
// with that outcome (tests/test_conformance.cpp); on the GPU each runs once per launch shape
// and its results must be that outcome (device/test_conformance.cu). Written from the PTX
// text, not from what sim/ does: a test that fails on one backend is that backend's bug.
//
// A test is a struct with
//   kName        a short name for reports
//   kThreads     threads per CTA (multiples of 32 where warps matter; at most kMaxThreads)
//   kCtas        CTAs in the launch
//   kClusterX    CTAs per cluster (1 unless it is a cluster test; a cluster launch otherwise)
//   kSmemBytes   dynamic shared memory per CTA (zero-filled on the host, NOT on the device:
//                a test reads only what it wrote or copied)
//   kResults     int32 results in Env::out
//   run(env)     a template over the Env, run by every thread of every CTA (no init step:
//                a test initialises its barriers itself and syncs)
//   expected(out, why)   host code both runners call on the results of a finished run: true
//                when they are the defined outcome, else false with a reason in `why`
//                (kWhyBytes, a C string: no std::string, so the device runner needs nothing
//                but the CUDA runtime).
#pragma once

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>

#include "spec/mbarrier.hpp"
#include "spec/platform.hpp"

namespace mbcheck::conformance {

inline constexpr std::uint32_t kGmemBytes = 4096;  // Env::gmem
inline constexpr std::uint32_t kMaxThreads = 256;
inline constexpr std::size_t kWhyBytes = 256;  // expected()'s `why`

// What every thread of a conformance test sees.
template <class P>
struct Env {
  using Platform = P;
  unsigned char* smem;  // the CTA's kSmemBytes of dynamic shared memory, 128-byte aligned
  unsigned char* gmem;  // kGmemBytes of global memory, 16-byte aligned, zeroed, one for the launch
  std::int32_t* out;    // kResults results, zeroed before the launch, one array for the launch

  MBCHECK_HD void result(std::uint32_t i, std::int32_t v) const { P::store(out + i, v); }
  template <class T>
  MBCHECK_HD T* smem_at(std::uint32_t offset) const {
    return reinterpret_cast<T*>(smem + offset);
  }
  template <class T>
  MBCHECK_HD T* gmem_at(std::uint32_t offset) const {
    return reinterpret_cast<T*>(gmem + offset);
  }
  MBCHECK_HD Mbarrier<P> bar(std::uint32_t i) const {
    return Mbarrier<P>(reinterpret_cast<typename P::Barrier*>(smem)[i]);
  }
};

template <class... Tests>
struct TestList {};

// expected()'s helpers (host code): a reason for `why`, and checks that write one.
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
inline bool
fail(char* why, const char* format, ...) {
  va_list args;
  va_start(args, format);
  std::vsnprintf(why, kWhyBytes, format, args);
  va_end(args);
  return false;
}

// out[first + i] == want(i) for i in [0, count).
template <class Want>
bool expect_each(const std::int32_t* out, std::uint32_t first, std::uint32_t count, Want want, const char* what,
                 char* why) {
  for (std::uint32_t i = 0; i < count; ++i)
    if (out[first + i] != want(i))
      return fail(why, "%s: result %u is %d, expected %d", what, first + i, static_cast<int>(out[first + i]),
                  static_cast<int>(want(i)));
  return true;
}

}  // namespace mbcheck::conformance
