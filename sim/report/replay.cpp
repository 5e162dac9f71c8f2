// The library's replay: a result's token, and the execution a token records, run again.
#include <fmt/format.h>

#include "sim/explore/strategy.hpp"
#include "sim/report.hpp"
#include "sim/runtime/runtime.hpp"

namespace mbcheck::sim {

std::string replay_token(const CheckResult& result) {
  if (!result.counterexample) return "";
  return encode_token({result.protocol.name, result.protocol.options, result.counterexample->schedule});
}

Outcome replay(Program& program, const std::string& token, std::vector<TraceEntry>* trace,
               const std::atomic<bool>* stop) {
  return replay(program, decode_token(token), trace, stop);
}

Outcome replay(Program& program, const ReplayToken& token, std::vector<TraceEntry>* trace,
               const std::atomic<bool>* stop) {
  Runtime rt;
  ReplayStrategy strategy(token.schedule);
  RunLimits limits;
  limits.max_steps = token.schedule.size() + 1;  // one more: a token that ends too early diverges
  limits.record_trace = trace != nullptr;
  limits.stop = stop;
  Outcome out = rt.execute(program, strategy, limits);
  if (trace) *trace = rt.take_trace();
  // A schedule that names an agent the program does not have (the search's own "pruned" stop
  // included), or that the execution does not follow, does not fit the program.
  if (!out.cut_short &&
      (out.verdict == Verdict::pruned || (out.verdict != Verdict::diverged && !strategy.finished()))) {
    out.verdict = Verdict::diverged;
    out.message =
        fmt::format("the execution ended after {} steps but the token records {}", out.steps, token.schedule.size());
  }
  if (out.verdict == Verdict::diverged)
    out.message = fmt::format(
        "{} (a token of another shape or protocol, cut short, from before a change to the "
        "protocol, or protocol code that does not repeat itself)",
        out.message);
  return out;
}

}  // namespace mbcheck::sim
