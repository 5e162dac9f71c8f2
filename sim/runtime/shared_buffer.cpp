#include "sim/runtime/shared_buffer.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

namespace mbcheck::sim {

namespace {
std::atomic<bool> g_aliasable{false};
std::size_t page_rounded(std::size_t n) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return (n + page - 1) / page * page;
}
}  // namespace

void SharedBuffer::set_aliasable(bool on) { g_aliasable.store(on, std::memory_order_relaxed); }

void SharedBuffer::assign(std::size_t bytes, unsigned char zero) {
  const bool mapped = g_aliasable.load(std::memory_order_relaxed);
  // A mapping is whole pages; heap memory 128-byte aligned, as the device's shared memory.
  const std::size_t capacity = mapped ? page_rounded(bytes ? bytes : 1) : (bytes + 128) / 128 * 128;
  if (capacity != capacity_ || mapped != mapped_) {
    release();
    void* p = nullptr;
    if (mapped) {
      p = mmap(nullptr, capacity, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) throw std::bad_alloc();
    } else {
      p = std::aligned_alloc(128, capacity);
      if (!p) throw std::bad_alloc();
    }
    data_ = static_cast<unsigned char*>(p);
    capacity_ = capacity;
    mapped_ = mapped;
  }
  size_ = bytes;
  // (A mapping's bytes past `bytes` are the window's too: zeroed as well.)
  std::memset(data_, zero, mapped_ ? capacity_ : bytes);
}

void SharedBuffer::release() {
  if (!data_) return;
  if (mapped_)
    munmap(data_, capacity_);
  else
    std::free(data_);
  data_ = nullptr;
  size_ = capacity_ = 0;
}

void SharedBuffer::swap(SharedBuffer& o) noexcept {
  std::swap(data_, o.data_);
  std::swap(size_, o.size_);
  std::swap(capacity_, o.capacity_);
  std::swap(mapped_, o.mapped_);
}

}  // namespace mbcheck::sim
