// AddressSanitizer and the runtime's fibers. ASan keeps one stack per OS thread; a fiber
// switch it is not told of makes it judge one fiber's frames against another's stack (false
// reports, "ASan is ignoring requested __asan_handle_no_return" on every throw). Debian's
// Boost.Context switches with fcontext and carries no annotations (only its ucontext backend
// has them, and Boost.Fiber's library would have to be built with it), so the runtime
// annotates the switches itself, on the old stack, where the target is known: a step's
// switch in Runtime::switch_to (it resumes the target directly), a switch Boost makes itself
// (a fiber ending, its dispatcher) in the scheduling algorithm's pick_next(); the target
// finishes the switch where it regains control (after its switch, at the top of a new fiber,
// or for Boost's dispatcher, whose stack is not ours to know, at its next pick_next()).
// Fake stacks (detect_stack_use_after_return) are not supported: the asan preset turns them off.
// Without -fsanitize=address everything here is empty.
#pragma once

#include <cstddef>

#if defined(__SANITIZE_ADDRESS__)
#include <pthread.h>
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace mbcheck::sim::asan_fibers {

#if defined(__SANITIZE_ADDRESS__)
inline thread_local bool tl_switching = false;

// The OS thread's own stack (the main context's).
inline void thread_stack(const void*& bottom, std::size_t& size) {
  thread_local const void* lo = nullptr;
  thread_local std::size_t bytes = 0;
  if (!lo) {
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
      void* addr = nullptr;
      pthread_attr_getstack(&attr, &addr, &bytes);
      lo = addr;
      pthread_attr_destroy(&attr);
    }
  }
  bottom = lo;
  size = bytes;
}

// A switch whose target we regained control in without finishing (Boost's dispatcher) is
// finished first: ASan allows one switch at a time.
inline void start_switch(const void* bottom, std::size_t size) {
  if (tl_switching) __sanitizer_finish_switch_fiber(nullptr, nullptr, nullptr);
  __sanitizer_start_switch_fiber(nullptr, bottom, size);
  tl_switching = true;
}
// A switch to the main context, on the OS thread's own stack.
inline void announce_thread_stack() {
  const void* bottom = nullptr;
  std::size_t size = 0;
  thread_stack(bottom, size);
  start_switch(bottom, size);
}
inline void finish_switch() {
  if (!tl_switching) return;
  __sanitizer_finish_switch_fiber(nullptr, nullptr, nullptr);
  tl_switching = false;
}
// A pooled stack holds the shadow of the last fiber's frames.
inline void unpoison(const void* lo, std::size_t size) { ASAN_UNPOISON_MEMORY_REGION(lo, size); }
// Copies live stack bytes (redzones included) without ASan's checks: the spin-loop snapshot.
[[gnu::no_sanitize_address, gnu::noinline]] inline void copy_stack(unsigned char* out, const unsigned char* from,
                                                                   std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<const volatile unsigned char*>(from)[i];
}
#else
inline void thread_stack(const void*& bottom, std::size_t& size) {
  bottom = nullptr;
  size = 0;
}
inline void start_switch(const void*, std::size_t) {}
inline void announce_thread_stack() {}
inline void finish_switch() {}
inline void unpoison(const void*, std::size_t) {}
#endif

}  // namespace mbcheck::sim::asan_fibers
