// The reference enumerator (see reference.hpp): a plain stateful search, written for being
// obviously right rather than fast. Every state is the whole machine: threads, barriers,
// copies, memory, and the race detector's vector clocks and access histories, encoded into a
// string for the visited set. The search stores the reverse edges so that, at the end, a
// backward pass finds the states that can never reach an end (livelock).
#include "tests/differential/reference.hpp"
#include "tests/differential/reference.hpp"

#include "tests/differential/reference_explorer.hpp"

namespace mbcheck::diff::ref {

ReferenceResult Explorer::run() {
  State init = initial();
  intern(init);
  while (!stack_.empty()) {
    std::uint32_t id = stack_.back();
    stack_.pop_back();
    expand(id);
    if (!result_.complete) break;
  }
  result_.states = keys_.size();
  if (!result_.complete) return result_;
  find_livelock();
  return result_;
}

void Explorer::expand(std::uint32_t id) {
  State s = decode(*keys_[id]);
  bool any = false;
  for (int a = 0; a < agents_; ++a) {
    // An agent that has finished (or not started) cannot move: its step would return false
    // before touching anything, so the copy of the state is skipped.
    const bool idle = a < n_          ? s.threads[static_cast<std::size_t>(a)].finished != 0
                      : a < cpa_base_ ? s.copies[static_cast<std::size_t>(a - n_)].status != 1
                      : a < arv_base_ ? s.cpas[static_cast<std::size_t>(a - cpa_base_)].status != 1
                      : a < wg_base_  ? s.arrivers[static_cast<std::size_t>(a - arv_base_)].status != 1
                                      : s.wgs[static_cast<std::size_t>(a - wg_base_)].status != 1;
    if (idle) continue;
    State next = s;
    try {
      const bool moved = a < n_          ? thread_step(next, a)
                         : a < cpa_base_ ? copy_step(next, a - n_)
                         : a < arv_base_ ? cpa_step(next, a - cpa_base_)
                         : a < wg_base_  ? arrive_step(next, a - arv_base_)
                                         : wg_step(next, a - wg_base_);
      if (!moved) continue;
    } catch (const Bug& bug) {  // the execution ends in the bug: an end reachable from here
      any = true;
      note_bug(bug.kind);
      ends_[id] = 1;
      continue;
    }
    any = true;
    std::uint32_t to = intern(next);
    if (!result_.complete) return;
    if (to != id) edges_.push_back({id, to});  // a self-loop (failed poll) is no progress
  }
  if (any) return;
  ends_[id] = 1;  // nobody can move: completed or deadlocked
  bool all_done = std::all_of(s.threads.begin(), s.threads.end(), [](const Thread& t) { return t.finished != 0; });
  if (!all_done) {
    note_bug("deadlock");
    return;
  }
  Observed o;
  for (const Thread& t : s.threads) o.registers.push_back(t.regs);
  for (const Word& w : s.data) o.data.push_back(w.value);
  for (const Word& w : s.slots) o.slots.push_back(w.value);
  o.atomics = s.atomics;
  result_.outcomes.insert(format_observed(o));
}

// Backward reachability from the ends over the reverse edges: a state that reaches none is
// stuck forever in a cycle of spinning (livelock).
void Explorer::find_livelock() {
  const std::size_t n = keys_.size();
  std::vector<std::uint32_t> start(n + 1, 0), preds(edges_.size());
  for (const auto& e : edges_) ++start[e.second + 1];
  for (std::size_t i = 0; i < n; ++i) start[i + 1] += start[i];
  std::vector<std::uint32_t> fill(start.begin(), start.end() - 1);
  for (const auto& e : edges_) preds[fill[e.second]++] = e.first;
  std::vector<std::uint32_t> queue;
  for (std::uint32_t i = 0; i < n; ++i)
    if (ends_[i]) queue.push_back(i);
  std::vector<char> reaches(ends_.begin(), ends_.end());
  while (!queue.empty()) {
    std::uint32_t v = queue.back();
    queue.pop_back();
    for (std::uint32_t k = start[v]; k < start[v + 1]; ++k)
      if (!reaches[preds[k]]) {
        reaches[preds[k]] = 1;
        queue.push_back(preds[k]);
      }
  }
  if (std::find(reaches.begin(), reaches.end(), 0) != reaches.end()) note_bug("livelock");
}

void Explorer::note_bug(const std::string& kind) {
  result_.bug = true;
  result_.bug_kinds.insert(kind);
}

}  // namespace mbcheck::diff::ref

namespace mbcheck::diff {

ReferenceResult reference_explore(const DiffProgram& program, std::uint64_t max_states) {
  return ref::Explorer(program, max_states).run();
}

}  // namespace mbcheck::diff
