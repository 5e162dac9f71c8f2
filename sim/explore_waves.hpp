// Parallel and sharded exhaustive search: the subtrees of one DPOR node ("a wave") run on
// worker threads, or are shared between shard processes through lock and result files; their
// effects merge in the order one search would have produced them.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "sim/dpor.hpp"
#include "sim/explore.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

namespace mbcheck::sim::dpor {

// One subtree of a wave: below node `d` of `prefix`, alternative `alternative`, with `done`
// the alternatives explored before it at that node (they make its sleep set).
struct WaveItem {
  AgentId alternative;
  AgentSet done;
};

struct WaveResult {
  ExploreStats stats;
  std::vector<DporSearch::Deferred> deferred;
  std::optional<Outcome> bug;
  std::vector<Outcome> outcomes;  // only when someone wants to see every execution
  bool stopped = false;           // it stopped at its bug
};

inline WaveResult run_subtree(Program& program, Runtime& rt, const std::vector<DporNode>& prefix, const WaveItem& item,
                       const ExploreOptions& options, bool keep_outcomes) {
  DporSearch local;
  local.bound = options.preemption_bound;
  local.nodes = prefix;
  local.nodes.back().chosen = item.alternative;
  local.nodes.back().done = item.done;
  local.floor = prefix.size();
  RunLimits limits;
  limits.max_steps = options.max_steps;
  WaveResult res;
  for (;;) {
    Outcome out = rt.execute(program, local, limits, &local);
    explain_divergence(out);
    res.stats.transitions += out.steps;
    if (out.verdict == Verdict::pruned) {
      ++res.stats.redundant;
    } else {
      ++res.stats.executions;
      if (out.verdict == Verdict::deadlock || out.verdict == Verdict::livelock) ++res.stats.blocked;
      const bool bug = is_bug(out.verdict) && !res.bug;
      if (keep_outcomes) res.outcomes.push_back(out);
      if (bug) {
        res.bug = std::move(out);
        if (options.stop_at_first_bug) {
          res.stopped = true;
          break;
        }
      }
    }
    if (!local.advance()) break;
  }
  res.stats.races = local.races;
  res.stats.bound_cut = local.bound_cut;
  res.stats.fallbacks = local.fallbacks;
  res.stats.spin_iterations = local.spin_iterations;
  res.deferred = std::move(local.deferred);
  return res;
}

// Worker threads, each with its own Program and Runtime, that run the items of one wave.
class WavePool {
 public:
  WavePool(unsigned threads, const std::function<std::unique_ptr<Program>()>& make_program) {
    for (unsigned i = 0; i < threads; ++i) programs_.push_back(make_program());
    for (unsigned i = 0; i < threads; ++i) threads_.emplace_back([this, i] { work(*programs_[i]); });
  }
  ~WavePool() {
    {
      std::lock_guard lock(mu_);
      quit_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }
  // Runs fn(program, runtime, i) for every i < n on the workers and the calling thread.
  void run(std::size_t n, Program& own_program, Runtime& own_runtime,
           const std::function<void(Program&, Runtime&, std::size_t)>& fn) {
    {
      std::lock_guard lock(mu_);
      fn_ = &fn;
      n_ = n;
      next_ = 0;
      busy_ = threads_.size();
      ++generation_;
    }
    wake_.notify_all();
    for (std::size_t i; (i = next_.fetch_add(1)) < n;) fn(own_program, own_runtime, i);
    std::unique_lock lock(mu_);
    done_.wait(lock, [&] { return busy_ == 0; });
  }

 private:
  void work(Program& program) {
    Runtime rt;
    std::uint64_t seen = 0;
    for (;;) {
      const std::function<void(Program&, Runtime&, std::size_t)>* fn;
      std::size_t n;
      {
        std::unique_lock lock(mu_);
        wake_.wait(lock, [&] { return quit_ || generation_ != seen; });
        if (quit_) return;
        seen = generation_;
        fn = fn_;
        n = n_;
      }
      for (std::size_t i; (i = next_.fetch_add(1)) < n;) (*fn)(program, rt, i);
      std::lock_guard lock(mu_);
      if (--busy_ == 0) done_.notify_one();
    }
  }

  std::vector<std::unique_ptr<Program>> programs_;
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable wake_, done_;
  const std::function<void(Program&, Runtime&, std::size_t)>* fn_ = nullptr;
  std::size_t n_ = 0;
  std::atomic<std::size_t> next_{0};
  std::size_t busy_ = 0;
  std::uint64_t generation_ = 0;
  bool quit_ = false;
};

// --- sharding: wave subtrees shared through files ----------------------------------------

inline nlohmann::json to_json(const Outcome& o) {
  return {{"verdict", static_cast<int>(o.verdict)},
          {"misuse", o.misuse ? static_cast<int>(*o.misuse) : -1},
          {"message", o.message},
          {"details", o.details},
          {"schedule", o.schedule},
          {"steps", o.steps},
          {"culprits", o.culprits}};
}

inline Outcome outcome_from_json(const nlohmann::json& j) {
  Outcome o;
  o.verdict = static_cast<Verdict>(j.at("verdict").get<int>());
  if (int m = j.at("misuse").get<int>(); m >= 0) o.misuse = static_cast<MisuseKind>(m);
  o.message = j.at("message").get<std::string>();
  o.details = j.at("details").get<std::vector<std::string>>();
  o.schedule = j.at("schedule").get<std::vector<AgentId>>();
  o.steps = j.at("steps").get<std::uint64_t>();
  o.culprits = j.at("culprits").get<std::vector<AgentId>>();
  return o;
}

inline nlohmann::json to_json(const WaveResult& w) {
  nlohmann::json deferred = nlohmann::json::array();
  for (const auto& d : w.deferred) deferred.push_back({d.node, d.initials, d.fallback});
  nlohmann::json j = {{"executions", w.stats.executions}, {"redundant", w.stats.redundant},
                      {"blocked", w.stats.blocked},       {"transitions", w.stats.transitions},
                      {"races", w.stats.races},           {"bound_cut", w.stats.bound_cut},
                      {"fallbacks", w.stats.fallbacks},   {"spin_iterations", w.stats.spin_iterations},
                      {"stopped", w.stopped},             {"deferred", deferred}};
  if (w.bug) j["bug"] = to_json(*w.bug);
  return j;
}

inline WaveResult wave_result_from_json(const nlohmann::json& j) {
  WaveResult w;
  w.stats.executions = j.at("executions");
  w.stats.redundant = j.at("redundant");
  w.stats.blocked = j.at("blocked");
  w.stats.transitions = j.at("transitions");
  w.stats.races = j.at("races");
  w.stats.bound_cut = j.at("bound_cut");
  w.stats.fallbacks = j.at("fallbacks");
  w.stats.spin_iterations = j.at("spin_iterations");
  w.stopped = j.at("stopped");
  for (const auto& d : j.at("deferred"))
    w.deferred.push_back({d.at(0).get<std::size_t>(), d.at(1).get<std::vector<AgentId>>(), d.at(2).get<AgentId>()});
  if (j.contains("bug")) w.bug = outcome_from_json(j.at("bug"));
  return w;
}

// Runs a wave's items across shard processes: each item is computed by the shard whose
// exclusive create of its lock file succeeds; the others wait for its result file.
class ShardExchange {
 public:
  ShardExchange(std::string dir, unsigned index, unsigned count) : dir_(std::move(dir)), index_(index), count_(count) {}

  std::vector<WaveResult> run(std::size_t n, const std::function<WaveResult(std::size_t)>& compute,
                              std::uint64_t* own_executions) {
    const std::uint64_t wave = waves_++;
    std::vector<WaveResult> results(n);
    std::vector<bool> have(n, false);
    // Start at this shard's own offset, so concurrent shards claim different items first.
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t i = (j + index_ * n / count_) % n;
      if (load(wave, i, results[i])) {
        have[i] = true;
      } else if (claim(wave, i)) {
        results[i] = compute(i);
        *own_executions += results[i].stats.executions;
        store(wave, i, results[i]);
        have[i] = true;
      }
    }
    for (std::size_t i = 0; i < n; ++i)
      while (!have[i]) {
        if (load(wave, i, results[i]))
          have[i] = true;
        else
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    return results;
  }

 private:
  std::string path(std::uint64_t wave, std::size_t i, const char* ext) const {
    return fmt::format("{}/w{}-{}.{}", dir_, wave, i, ext);
  }
  bool claim(std::uint64_t wave, std::size_t i) const {
    const int fd = ::open(path(wave, i, "lock").c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
    if (fd < 0) return false;
    ::close(fd);
    return true;
  }
  void store(std::uint64_t wave, std::size_t i, const WaveResult& r) const {
    const std::string tmp = path(wave, i, "tmp"), final_path = path(wave, i, "json");
    std::ofstream(tmp) << to_json(r).dump();
    std::rename(tmp.c_str(), final_path.c_str());  // atomic: readers see all or nothing
  }
  bool load(std::uint64_t wave, std::size_t i, WaveResult& out) const {
    std::ifstream in(path(wave, i, "json"));
    if (!in) return false;
    out = wave_result_from_json(nlohmann::json::parse(in));
    return true;
  }

  std::string dir_;
  unsigned index_, count_;
  std::uint64_t waves_ = 0;
};

}  // namespace mbcheck::sim::dpor
