#include "sim/runtime/call_sites.hpp"

namespace mbcheck::sim {

std::uint32_t CallSites::find(const CallSite& site) {
  for (std::size_t i = hash(site.line, site.column) & mask_;; i = (i + 1) & mask_) {
    const Slot& slot = table_[i];
    if (slot.holds(site)) return slot.id;
    if (slot.line == 0) break;  // an empty slot: a site not seen yet
  }
  const auto id = static_cast<std::uint32_t>(sites_.size());
  sites_.push_back(site);
  if (4 * sites_.size() > table_.size()) {  // (sites_ holds the unknown site too)
    std::vector<Slot> old(2 * table_.size());
    old.swap(table_);
    mask_ = table_.size() - 1;
    for (const Slot& slot : old)
      if (slot.line != 0) insert(slot);
  }
  insert({site.file, site.line, site.column, id});
  return id;
}

void CallSites::insert(const Slot& entry) {
  std::size_t i = hash(entry.line, entry.column) & mask_;
  while (table_[i].line != 0) i = (i + 1) & mask_;
  table_[i] = entry;
}

}  // namespace mbcheck::sim
