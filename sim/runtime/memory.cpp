// Plain atomics (and the spin awaits a write to one may wake), the loads and stores of protocol
// data (the race detector's accesses), and how a race is reported.
#include <fmt/format.h>

#include <stdexcept>

#include "sim/runtime/perform.hpp"

namespace mbcheck::sim {

std::int64_t Runtime::atomic(OpKind kind, std::int64_t* addr, std::int64_t arg, std::int64_t expected) {
  Op op{kind, nullptr, arg};
  op.addr = addr;
  op.expected = expected;
  if (!schedule_point(op)) return 0;
  StepInfo step{current_->id, op};
  step.value = *addr;
  switch (kind) {
    case OpKind::atomic_store:
      *addr = arg;
      step.wrote = true;
      break;
    case OpKind::atomic_fetch_add:
      *addr += arg;
      step.wrote = true;
      break;
    case OpKind::atomic_cas:
      if (*addr == expected) {
        *addr = arg;
        step.wrote = true;
      }
      break;
    default: break;
  }
  Agent& a = *current_;
  if (step.wrote) a.stored_since_poll = true;
  if (kind == OpKind::atomic_load && a.last_poll_failed) a.loop_reads.emplace_back(addr, step.value);
  record(a, nullptr);
  observe(step);
  if (step.wrote && !read_awaiters_.empty()) atomic_written(addr);
  return step.value;
}

// A word an await of its loop read has changed (or changed back): re-decide its enabledness.
void Runtime::atomic_written(const std::int64_t* addr) {
  auto keep = read_awaiters_.begin();
  for (AgentId id : read_awaiters_) {
    Agent& w = *agent_at_[id];
    const bool waiting = w.kind == Agent::Kind::thread && w.state != Agent::State::finished &&
                         w.state != Agent::State::running && w.op.await && !w.await_reads.empty();
    if (!waiting) continue;  // it has moved on
    *keep++ = id;
    bool reads_it = false;
    for (const auto& r : w.await_reads) reads_it = reads_it || r.first == addr;
    if (!reads_it) continue;
    auto& waiters = info(*w.op.bar).waiters;
    const bool enabled = is_enabled_now(w);
    if (enabled && w.enabled_pos == ~0u) {
      std::erase(waiters, w.id);
      add_enabled(w);
    } else if (!enabled && w.enabled_pos != ~0u) {
      remove_enabled(w);
      w.state = Agent::State::blocked;
      waiters.push_back(w.id);
    }
  }
  read_awaiters_.erase(keep, read_awaiters_.end());
}

std::string Runtime::describe_address(const void* addr) const {
  const auto at = reinterpret_cast<std::uintptr_t>(addr);
  std::string label;
  for (auto l = memory_labels_.rbegin(); l != memory_labels_.rend(); ++l)
    if (at >= l->begin && at < l->end) {
      const std::string name = l->index >= 0 ? fmt::format("{} {}", l->name, l->index) : l->name;
      label = fmt::format("'{}'[{}] ", name, (at - l->begin) / l->elem_bytes);
      break;
    }
  for (std::uint32_t cta = 0; cta < ctas_.size(); ++cta) {
    const auto& smem = ctas_[cta].smem;
    auto raw = reinterpret_cast<std::uintptr_t>(smem.data());
    auto base = raw + (128 - raw % 128) % 128;
    if (at >= base && at < raw + smem.size()) {
      const std::string where =
          shape_.ctas > 1 ? fmt::format("cta {} smem+{:#x}", cta, at - base) : fmt::format("smem+{:#x}", at - base);
      return label.empty() ? where : label + "(" + where + ")";
    }
  }
  return label.empty() ? fmt::format("global memory {}", addr) : label + fmt::format("(global memory {})", addr);
}

void Runtime::end_race(const RaceDetector::Race& race) {
  auto what = [](bool writes) { return writes ? "writes" : "reads"; };
  if (race.missing_fence) {
    end(Verdict::race,
        fmt::format("missing fence.proxy.async: {} reads {} with the async proxy (step {}), but {} wrote it with an "
                    "ordinary store (step {}) and ran no fence.proxy.async after that",
                    describe_agent(race.second), describe_address(race.address), race.second_step,
                    describe_agent(race.first), race.first_step));
    outcome_.culprits = {race.first, race.second};
    outcome_.located = {
        located(sites_[race.second_site],
                fmt::format("{} reads {} with the async proxy here (step {})", describe_agent(race.second),
                            describe_address(race.address), race.second_step)),
        located(sites_[race.first_site], fmt::format("{} wrote it here (step {}), with no fence.proxy.async after it",
                                                     describe_agent(race.first), race.first_step))};
    return;
  }
  end(Verdict::race,
      fmt::format("data race on {}: {} {} it (step {}) and {} {} it (step {}) with no happens-before between them",
                  describe_address(race.address), describe_agent(race.first), what(race.first_writes), race.first_step,
                  describe_agent(race.second), what(race.second_writes), race.second_step));
  outcome_.culprits = {race.first, race.second};
  // The two accesses' own lines: the one that completed the race first (where it was found).
  auto access_text = [&](AgentId who, bool writes, std::uint32_t step) {
    const Agent& a = *agent_at_[who];
    return fmt::format("{} {} {} here (step {}){}", describe_agent(who), what(writes), describe_address(race.address),
                       step, a.kind == Agent::Kind::copy ? ": the copy was issued here" : "");
  };
  outcome_.located = {located(sites_[race.second_site], access_text(race.second, race.second_writes, race.second_step)),
                      located(sites_[race.first_site], access_text(race.first, race.first_writes, race.first_step))};
}

std::uint32_t Runtime::intern_site(const CallSite& site) {
  std::uint32_t id = 0;
  for (std::uint32_t i = 1; i < sites_.size() && !id; ++i)
    if (sites_[i].file == site.file && sites_[i].line == site.line && sites_[i].column == site.column) id = i;
  if (!id) {
    id = static_cast<std::uint32_t>(sites_.size());
    sites_.push_back(site);
  }
  site_cache_[(site.line * 31u + site.column) % kSiteCache] = {site.file, site.line, site.column, id};
  return id;
}

Outcome::Located Runtime::located(const CallSite& site, std::string text) const {
  TraceEntry t;
  name_site(t, site);
  return {t.where, t.function, std::move(text)};
}

void Runtime::data_access(const void* addr, std::size_t bytes, bool write, const CallSite& site) {
  if (over_ || !current_) return;
  perform_deferred_try();  // an access is an event: the try comes before it
  if (over_) return;
  tick();  // the watchdog's sign of life: a loop over data is max_accesses_per_step's to end
  if (write) current_->stored_since_poll = true;
  if (shape_.cluster_size() > 1) {
    // Distributed shared memory: a peer's smem while that CTA lives (and only in the cluster).
    const std::int64_t cta = cta_of(addr, current_->cta);
    const std::uint32_t size = shape_.cluster_size();
    if (cta >= 0 && static_cast<std::uint32_t>(cta) != current_->cta) {
      if (static_cast<std::uint32_t>(cta) / size != current_->cta / size) {
        end(Verdict::misuse,
            fmt::format("{}: {} {}: the shared memory of a CTA outside its cluster", describe_agent(current_->id),
                        write ? "store to" : "load from", describe_address(addr)),
            MisuseKind::cluster);
        outcome_.culprits = {current_->id};
        if (std::uncaught_exceptions() == 0) throw Aborted{};
        return;
      }
      if (!peer_use(*current_, static_cast<std::uint32_t>(cta), write ? "store to" : "load from", nullptr, addr)) {
        if (std::uncaught_exceptions() == 0) throw Aborted{};
        return;
      }
    }
  }
  if (++accesses_in_step_ > limits_.max_accesses_per_step) {
    end(Verdict::step_limit,
        fmt::format("{} made {} loads/stores without reaching a barrier operation: an endless loop?",
                    describe_agent(current_->id), limits_.max_accesses_per_step));
    outcome_.culprits = {current_->id};
    if (std::uncaught_exceptions() == 0) throw Aborted{};
    return;
  }
  if (auto race = races_.access(current_->id, addr, bytes, write, false, site_id(site))) {
    end_race(*race);
    if (std::uncaught_exceptions() == 0) throw Aborted{};
  }
}

void Runtime::check_failed(const char* what) {
  if (over_ && std::uncaught_exceptions() > 0) return;
  end(Verdict::assertion, fmt::format("{}: check failed: {}", describe_agent(current_->id), what));
  if (outcome_.culprits.empty()) outcome_.culprits = {current_->id};
  if (std::uncaught_exceptions() > 0) return;
  throw Aborted{};
}

}  // namespace mbcheck::sim
