// The call sites the runtime's records name, interned: a race record, an access epoch keeps a
// 32-bit id, not the site (id 0: unknown). Every site seen, by (file, line, column), in an
// open-addressed table (a direct-mapped cache of 64 slots thrashed where two sites of one
// step shared a slot: with columns from std::source_location, epi-load's did, 12 linear
// searches a run). Kept across executions: a protocol's sites are the same in every one.
//
// A site may also be a program counter (the return address of a compiler-instrumented access:
// pc_id): its file and line are found only when a report reads it (at), by the debug
// information of the executable or library holding it (addr2line), since most accesses are
// never named.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "spec/platform.hpp"

namespace mbcheck::sim {

class CallSites {
 public:
  // Inline for the first probe (nearly every access finds its site there).
  std::uint32_t id(const CallSite& site) {
    if (site.line == 0) return 0;
    const Slot& slot = table_[hash(site.line, site.column) & mask_];
    if (slot.holds(site)) return slot.id;
    return find(site);
  }
  const CallSite& at(std::uint32_t id) const {
    if (id < pc_of_.size() && pc_of_[id]) [[unlikely]]
      symbolize(id);
    return sites_[id];
  }
  // The site of a program counter (inline for the first probe of a direct-mapped cache).
  std::uint32_t pc_id(const void* pc) {
    const PcSlot& slot = pc_cache_[(reinterpret_cast<std::uintptr_t>(pc) >> 2) % kPcCache];
    if (slot.pc == pc) return slot.id;
    return find_pc(pc);
  }

 private:
  struct Slot {
    const char* file = nullptr;
    unsigned line = 0, column = 0;  // line 0: empty
    std::uint32_t id = 0;
    bool holds(const CallSite& site) const { return file == site.file && line == site.line && column == site.column; }
  };
  static std::size_t hash(unsigned line, unsigned column) { return (line * 0x9E3779B1u ^ column * 0x85EBCA6Bu) >> 16; }
  std::uint32_t find(const CallSite& site);  // the probes past the first slot; adds a new site
  void insert(const Slot& entry);
  std::vector<Slot> table_ = std::vector<Slot>(256);  // a power of two, at most a quarter full
  std::size_t mask_ = 255;                            // its size - 1
  mutable std::vector<CallSite> sites_{CallSite{}};   // by id; 0: unknown (a pc's: filled in by at())
  // Program-counter sites: per id its pc while not yet symbolized (else null), the pc's ids,
  // and the text symbolization made (kept in place: sites_ points into it).
  struct PcSlot {
    const void* pc = nullptr;
    std::uint32_t id = 0;
  };
  static constexpr std::size_t kPcCache = 1024;
  std::uint32_t find_pc(const void* pc);
  void symbolize(std::uint32_t id) const;
  std::vector<PcSlot> pc_cache_ = std::vector<PcSlot>(kPcCache);
  std::unordered_map<const void*, std::uint32_t> pc_ids_;
  mutable std::vector<const void*> pc_of_;
  mutable std::deque<std::string> pc_text_;
};

}  // namespace mbcheck::sim
