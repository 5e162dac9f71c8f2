// How the fiber runtime names things in reports: operation kinds and verdicts, agents and
// CTAs, barriers (registered on first sight) and operations, labelled memory, the protocol's
// source lines, and the trace entries that replays print.
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "sim/runtime/runtime.hpp"

namespace mbcheck::sim {

const char* to_string(OpKind kind) {
  // The report template up to its first operand ("arrive {bar}{count}" -> "arrive").
  static const auto names = [] {
    std::array<std::string, kOpKinds> n;
    for (std::size_t k = 0; k < kOpKinds; ++k) {
      const std::string_view r = op_info(static_cast<OpKind>(k)).report;
      std::size_t end = r.size();
      for (std::string_view stop : {" {", "{", " [", " ("}) end = std::min(end, r.find(stop));
      n[k] = std::string(r.substr(0, end));
    }
    return n;
  }();
  return names[static_cast<std::size_t>(kind)].c_str();
}

const char* to_string(Verdict v) {
  switch (v) {
    case Verdict::completed: return "completed";
    case Verdict::deadlock: return "deadlock";
    case Verdict::livelock: return "livelock";
    case Verdict::race: return "race";
    case Verdict::misuse: return "misuse";
    case Verdict::aliasing: return "aliasing";
    case Verdict::assertion: return "assertion";
    case Verdict::lifetime: return "lifetime";
    case Verdict::exception: return "exception";
    case Verdict::crash: return "crash";
    case Verdict::hang: return "hang";
    case Verdict::step_limit: return "step-limit";
    case Verdict::diverged: return "diverged";
    case Verdict::pruned: return "pruned";
  }
  return "?";
}

// ---------------------------------------------------------------------------------------
// naming

std::string Runtime::cta_name(std::uint32_t cta) const {
  // "cta 1 (rank 1 of 2x1) ": a CTA of a cluster is named with its rank in it.
  const std::uint32_t size = shape_.cluster_size();
  if (shape_.ctas == 1) return "";
  if (size == 1) return fmt::format("cta {} ", cta);
  return fmt::format("cta {} (rank {} of {}x{}) ", cta, cta % size, shape_.cluster_x, shape_.cluster_y);
}

std::string Runtime::describe_agent(AgentId id) const {
  const Agent& a = *agent_at_[id];
  const std::string cta = cta_name(a.cta);
  if (a.kind == Agent::Kind::copy && a.op.kind == OpKind::wgmma_read)
    return fmt::format("the wgmma operand read #{} (of {}thread {}'s warp group)", a.copy_seq, cta, a.thread);
  if (a.kind == Agent::Kind::copy) return fmt::format("copy #{} (from {}thread {})", a.copy_seq, cta, a.thread);
  return fmt::format("{}thread {} (warp {} lane {})", cta, a.thread, a.thread / shape_.warp_size,
                     a.thread % shape_.warp_size);
}

std::string Runtime::barrier_name(const MbarrierState& bar) const {
  if (bar.id == 0 || bar.id > n_barriers_) return "mbarrier";
  const BarrierInfo& bi = barriers_[bar.id - 1];
  if (!bi.name.empty()) return bi.name;
  const std::string cta = shape_.ctas > 1 ? fmt::format("cta{}.", bi.cta) : std::string();
  // Index -1: none, as for labelled memory.
  if (bi.labelled) return bi.label_index >= 0 ? fmt::format("{}{}[{}]", cta, bi.label, bi.label_index) : cta + bi.label;
  const auto base = reinterpret_cast<std::uintptr_t>(ctas_[bi.cta].smem.data());
  const auto aligned = base + (128 - base % 128) % 128;
  return fmt::format("{}mbarrier@smem+{:#x}", cta, reinterpret_cast<std::uintptr_t>(&bar) - aligned);
}

std::string Runtime::describe_op(const Agent& a) const {
  const Op& op = a.op;
  const std::string bar = op.bar ? barrier_name(*op.bar) : "";
  if (op.bar && op.bar->id > 0 && op.bar->id <= n_barriers_ && !barriers_[op.bar->id - 1].collective.empty()) {
    // A hidden counter stands for a collective or the cluster barrier: named by what it is.
    if (op.kind == OpKind::arrive_drop_relaxed) return fmt::format("{}: exits, leaves the count", bar);
    if (is_arrival(op)) return fmt::format("{}: arrive{}", bar, op.info().order == Order::relaxed ? " (relaxed)" : "");
    return fmt::format("{}: wait for round {} ({} threads)", bar, op.arg, op.bar->expected);
  }
  // The forms the row's template does not tell apart.
  if (op.remote && op.kind == OpKind::arrive) return fmt::format("arrive.release.cluster {} (remote)", bar);
  if (op.remote && op.kind == OpKind::complete_tx)
    return fmt::format("complete_tx.relaxed.cluster {} {} B (remote)", bar, op.arg);
  switch (op.kind) {
    case OpKind::bulk_copy:
      if (op.expected != 0)
        return fmt::format("cp.async.bulk multicast {} B -> {} in ctas {:#x}", op.arg, bar, op.expected);
      break;
    case OpKind::arrive:
      if (op.bar && op.bar->named) return fmt::format("bar.arrive {} ({} threads)", bar, op.bar->expected);
      break;
    case OpKind::wait:
    case OpKind::test_wait:
    case OpKind::try_wait:
      if (op.bar && op.bar->named)
        return fmt::format("bar.sync {} ({} threads): wait for generation {}", bar, op.bar->expected, op.arg);
      break;
    case OpKind::copy_land:
      return fmt::format("lands {} B ({}/{}) -> complete_tx {}", op.arg, a.copied + op.arg, a.total, bar);
    case OpKind::bulk_wait_read:
      return fmt::format("cp.async.bulk.wait_group.read {} ({} stores still reading)", op.arg, waited_for(a, op));
    case OpKind::bulk_wait:
      return fmt::format("cp.async.bulk.wait_group {} ({} store reads and writes still in flight)", op.arg,
                         waited_for(a, op));
    case OpKind::cp_async_wait:
      return fmt::format("cp.async.wait_group {} ({} copies still in flight)", op.arg, waited_for(a, op));
    case OpKind::wgmma_wait:
      return fmt::format("wgmma.wait_group {} ({} operand reads of the warp group still pending)", op.arg,
                         waited_for(a, op));
    case OpKind::atomic_cas:
      return fmt::format("atomic cas {} {} -> {}", describe_address(op.addr), op.expected, op.arg);
    default: break;
  }
  return report_text(op, bar, op.addr ? describe_address(op.addr) : std::string());
}

std::string report_text(const Op& op, std::string_view bar, std::string_view addr) {
  const bool plain_count = op.arg == 1 && !op.no_complete;
  std::string text = fmt::format(
      fmt::runtime(op.info().report), fmt::arg("bar", bar), fmt::arg("arg", op.arg), fmt::arg("phase", op.arg),
      fmt::arg("parity", op.arg & 1),
      fmt::arg("addr", addr.empty() ? fmt::format("{}", static_cast<const void*>(op.addr)) : std::string(addr)),
      fmt::arg("count", plain_count ? std::string() : fmt::format(" count {}", op.arg)));
  if (op.no_complete) text.insert(text.find(' '), ".noComplete");
  if (op.remote) text += " (.shared::cluster, remote)";
  if (op.await) text += ", spinning";
  return text;
}

Runtime::BarrierInfo& Runtime::register_barrier(MbarrierState& bar) {
  // An entry of an earlier execution is reused, emptied but with its buffers' capacity: a
  // fuzzing campaign registers the same barriers run after run.
  if (n_barriers_ == barriers_.size()) barriers_.emplace_back();
  BarrierInfo& bi = barriers_[n_barriers_++];
  bi.state = &bar;
  const std::int64_t at_cta = cta_of(&bar, current_ ? current_->cta : 0);
  bi.cta = at_cta >= 0 ? static_cast<std::uint32_t>(at_cta) : current_ ? current_->cta : 0;
  bi.name.clear();
  bi.label_index = 0;
  bi.labelled = false;  // (its label string is kept: the next execution's label is mostly the same)
  bi.waiters.clear();
  bi.fragile_waits.clear();
  bi.collective.clear();
  bi.counting.clear();
  for (auto& c : bi.completions) c.phase = -2;
  bar.id = static_cast<std::uint32_t>(n_barriers_);
  return bi;
}

void Runtime::label(MbarrierState& bar, const char* name, int index) {
  // Every thread labels each barrier, every execution: kept as given, formatted when reported.
  BarrierInfo& bi = info(bar);
  if (bi.label != name) bi.label = name;
  bi.label_index = index;
  bi.labelled = true;
}

void Runtime::label_memory(const void* p, std::size_t bytes, std::size_t elem_bytes, const char* name, int index) {
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  // One entry per range: a label made again (by every thread, each execution) replaces it.
  for (MemoryLabel& l : memory_labels_)
    if (l.begin == at && l.end == at + bytes) {
      if (l.name != name) l.name = name;
      l.index = index;
      l.elem_bytes = std::max<std::size_t>(elem_bytes, 1);
      return;
    }
  memory_labels_.push_back({at, at + bytes, std::max<std::size_t>(elem_bytes, 1), name, index});
}

// A source file as reports show it: relative to the working directory when under it, else
// to mbcheck's source tree (the bundled protocols), else as the compiler named it.
std::string source_path(const char* file) {
  static const std::string cwd = [] {
    char buf[4096];
    return getcwd(buf, sizeof buf) ? std::string(buf) + "/" : std::string();
  }();
  const std::string f = file;
  if (!cwd.empty() && f.rfind(cwd, 0) == 0) return f.substr(cwd.size());
#ifdef MBCHECK_SOURCE_DIR
  if (f.rfind(MBCHECK_SOURCE_DIR, 0) == 0) return f.substr(std::strlen(MBCHECK_SOURCE_DIR));
#endif
  return f;
}

void name_site(TraceEntry& t, const CallSite& site) {
  if (site.line == 0) return;
  t.where = fmt::format("{}:{}", source_path(site.file), site.line);
  t.function = site.function;
}

void Runtime::record_step(const Agent& a, const MbarrierState* bar) {
  TraceEntry t{steps_, a.id, describe_agent(a.id), a.op.bar ? barrier_name(*a.op.bar) : "", describe_op(a), {}, {}};
  if (bar) t.what += fmt::format("  => {}", bar->describe());
  name_site(t, a.site);
  trace_.push_back(std::move(t));
}

void Runtime::record_atomic_step(const Agent& a, std::int64_t read, bool wrote) {
  record_step(a, nullptr);
  // The operand is in the op's text; what it returned is known only now.
  std::string& what = trace_.back().what;
  if (a.op.kind == OpKind::atomic_cas)
    what += fmt::format(": read {}, {}", read, wrote ? "swapped" : "not swapped");
  else if (a.op.kind != OpKind::atomic_store)
    what += fmt::format(": read {}", read);
}

}  // namespace mbcheck::sim
