#include "sim/runtime/call_sites.hpp"

#include <dlfcn.h>

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

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

// ---------------------------------------------------------------------------------------
// program-counter sites

std::uint32_t CallSites::find_pc(const void* pc) {
  auto [it, added] = pc_ids_.try_emplace(pc, static_cast<std::uint32_t>(sites_.size()));
  if (added) {
    sites_.push_back(CallSite{});
    pc_of_.resize(sites_.size(), nullptr);
    pc_of_[it->second] = pc;
  }
  pc_cache_[(reinterpret_cast<std::uintptr_t>(pc) >> 2) % kPcCache] = {pc, it->second};
  return it->second;
}

namespace {
bool system_header(const std::string& file) {
  return file.compare(0, 13, "/usr/include/") == 0 || file.compare(0, 9, "/usr/lib/") == 0;
}
// addr2line -i prints "function\nfile:line[ (discriminator N)]\n" for `address` in `object`
// and then for each function it was inlined into, outward. The innermost frame outside the
// system's headers is the line a report names (an atomic inlined from <atomic> is the user's
// call of it); the innermost when all are.
bool addr2line(const char* object, std::uintptr_t address, std::string& function, std::string& file, unsigned& line) {
  const std::string command = fmt::format("addr2line -i -f -C -e '{}' {:#x} 2>/dev/null", object, address);
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return false;
  char buffer[4096];
  std::vector<std::string> lines;
  while (std::fgets(buffer, sizeof buffer, pipe)) {
    lines.emplace_back(buffer);
    if (!lines.back().empty() && lines.back().back() == '\n') lines.back().pop_back();
  }
  pclose(pipe);
  bool found = false;
  for (std::size_t k = 0; k + 1 < lines.size(); k += 2) {
    std::string where = lines[k + 1].substr(0, lines[k + 1].find(' '));
    const auto colon = where.rfind(':');
    if (colon == std::string::npos || where.compare(0, 2, "??") == 0) continue;
    const unsigned at = static_cast<unsigned>(std::strtoul(where.c_str() + colon + 1, nullptr, 10));
    if (at == 0) continue;
    if (found && system_header(where.substr(0, colon))) continue;
    function = lines[k];
    file = where.substr(0, colon);
    line = at;
    found = true;
    if (!system_header(file)) break;
  }
  return found;
}
}  // namespace

// The call before the return address is the access: its line is pc - 1's. An object built
// without debug information, or no addr2line, leaves the site as the object and its offset.
void CallSites::symbolize(std::uint32_t id) const {
  const void* pc = pc_of_[id];
  pc_of_[id] = nullptr;
  const auto at = reinterpret_cast<std::uintptr_t>(pc) - 1;
  Dl_info info{};
  std::string function, file;
  unsigned line = 0;
  if (dladdr(reinterpret_cast<const void*>(at), &info) && info.dli_fname) {
    const auto base = reinterpret_cast<std::uintptr_t>(info.dli_fbase);
    // A position-independent object's debug addresses are offsets from its load address.
    if (!addr2line(info.dli_fname, at - base, function, file, line))
      addr2line(info.dli_fname, at, function, file, line);
    if (line == 0) {
      file = fmt::format("{}+{:#x}", info.dli_fname, at - base);
      line = 1;
    }
  } else {
    file = fmt::format("pc {}", pc);
    line = 1;
  }
  pc_text_.push_back(std::move(file));
  const char* file_text = pc_text_.back().c_str();
  pc_text_.push_back(std::move(function));
  sites_[id] = CallSite{file_text, line, pc_text_.back().c_str(), 0};
}

}  // namespace mbcheck::sim
