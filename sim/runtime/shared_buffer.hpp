// A CTA's shared memory: zeroed bytes, 128-byte aligned. Heap memory, or (where a layer asks
// for it, set_aliasable) whole pages of a shared anonymous mapping, which a second virtual
// range can alias (mremap with old size 0): the CUTLASS host layer maps its shared-memory
// window onto the running CTA's pages, so that plain loads and stores of a kernel reach that
// CTA's bytes.
#pragma once

#include <cstddef>

namespace mbcheck::sim {

class SharedBuffer {
 public:
  SharedBuffer() = default;
  ~SharedBuffer() { release(); }
  SharedBuffer(SharedBuffer&& o) noexcept { swap(o); }
  SharedBuffer& operator=(SharedBuffer&& o) noexcept {
    swap(o);
    return *this;
  }
  SharedBuffer(const SharedBuffer&) = delete;
  SharedBuffer& operator=(const SharedBuffer&) = delete;

  // `bytes` zeroed bytes (the old ones are kept, zeroed, when the size and kind are the same).
  void assign(std::size_t bytes, unsigned char zero);
  unsigned char* data() { return data_; }
  const unsigned char* data() const { return data_; }
  std::size_t size() const { return size_; }
  bool aliasable() const { return mapped_; }

  // For the whole process, from the next assign on: CTAs' shared memory as aliasable mappings.
  static void set_aliasable(bool on);

 private:
  void release();
  void swap(SharedBuffer& o) noexcept;
  unsigned char* data_ = nullptr;
  std::size_t size_ = 0, capacity_ = 0;  // capacity_: the mapping's or allocation's bytes
  bool mapped_ = false;
};

}  // namespace mbcheck::sim
