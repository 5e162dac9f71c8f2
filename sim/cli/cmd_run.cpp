// mbcheck run <protocol> [--seed N]: one execution under a seeded random schedule.
#include <fmt/format.h>

#include <chrono>
#include <limits>

#include "sim/cli/commands.hpp"
#include "sim/explore/explore.hpp"
#include "sim/explore/strategy.hpp"
#include "sim/report/replay_token.hpp"
#include "sim/runtime/runtime.hpp"

namespace mbcheck::sim::cli {

void RunCommand::add(CLI::App& parent, const Registry& registry) {
  app = parent.add_subcommand("run", "run one execution of a protocol under a seeded random schedule");
  app->add_option("protocol", protocol, fmt::format("the protocol (`{} list` shows them)", parent.get_name()))
      ->required();
  app->add_flag("--token", token, "print the replay token also when the execution is correct");
  app->add_option("--seed", seed, "seed of the random schedule")->check(kWholeNumber)->capture_default_str();
  app->add_option("--max-steps", max_steps, "give up after this many steps (0: no limit)")
      ->check(kWholeNumber)
      ->capture_default_str();
  app->add_option("--time-limit", time_limit_s, "stop the execution after this many seconds (0: no limit)")
      ->check(kSeconds);
  flags.add_to(app, registry.infos());
  visuals.add_to(app);
}

int RunCommand::run(const Registry& registry) {
  if (!visuals.check_paths()) return kExitUsage;
  if (max_steps == 0) max_steps = std::numeric_limits<std::uint64_t>::max();
  auto program = make_reported(registry, protocol, flags.given());
  print_out("mbcheck run {}  {}  seed={}\n", protocol, shape_line(program->options()), seed);
  Runtime rt;
  RandomStrategy strategy(seed);
  RunLimits limits;
  limits.max_steps = max_steps;
  stop_within(limits, std::chrono::steady_clock::now(), time_limit_s);  // SIGINT/SIGTERM too (exit 3)
  Outcome out = rt.execute(*program, strategy, limits);
  const int code = report(protocol, *program, out, token);
  // A failed write says so on stderr; a bug's exit code stays the verdict's.
  if (!visuals.write(*program, out.schedule,
                     fmt::format("{} {} seed={}", protocol, shape_line(program->options()), seed),
                     encode_token({protocol, program->options(), out.schedule})))
    return code == kExitOk ? kExitUsage : code;
  return code;
}

}  // namespace mbcheck::sim::cli
