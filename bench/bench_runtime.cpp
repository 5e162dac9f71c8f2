// Prints what one visible operation costs in the fiber runtime (fiber switch + scheduling
// bookkeeping + the emulator) and how many full-size executions run per second.
// Not a test: figures vary with the machine; compare them within one run.
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>

#include "sim/host_platform.hpp"
#include "sim/protocols/protocols.hpp"
#include "sim/runtime/runtime.hpp"
#include "sim/explore/strategy.hpp"
#include "spec/mbarrier.hpp"

using namespace mbcheck::sim;
using Clock = std::chrono::steady_clock;

namespace {

// Threads that each arrive on and wait for their own barrier, `rounds` times: every step
// is a visible operation, and a random schedule switches fibers at almost every step.
class PingProgram final : public Program {
 public:
  PingProgram(std::uint32_t threads, int rounds) : rounds_(rounds) {
    shape_.threads_per_cta = threads;
    shape_.smem_bytes = threads * sizeof(MbarrierState);
  }
  LaunchShape shape() const override { return shape_; }
  void reset() override {}
  void thread_main() override {
    auto* bars = reinterpret_cast<MbarrierState*>(HostPlatform::shared_memory());
    mbcheck::Mbarrier<HostPlatform> bar(bars[HostPlatform::thread_idx()]);
    bar.init(1);
    for (int phase = 0; phase < rounds_; ++phase) {
      bar.arrive();
      bar.wait(phase);
    }
  }

 private:
  LaunchShape shape_;
  int rounds_;
};

struct Figures {
  double seconds = 0;
  std::uint64_t steps = 0, executions = 0;
};

Figures measure(Program& prog, double min_seconds) {
  Runtime rt;
  Figures f;
  auto start = Clock::now();
  for (std::uint64_t seed = 0;; ++seed) {
    RandomStrategy s(seed);
    Outcome out = rt.execute(prog, s);
    if (out.verdict != Verdict::completed) {
      fmt::print(stderr, "unexpected verdict {}: {}\n", to_string(out.verdict), out.message);
      std::exit(1);
    }
    f.steps += out.steps;
    ++f.executions;
    f.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (f.seconds >= min_seconds) return f;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 2.0;
  fmt::print("mbcheck runtime benchmark ({:.1f} s per figure, random strategy)\n\n", seconds);

  PingProgram ping(8, 2000);
  Figures p = measure(ping, seconds);
  fmt::print("visible operation, 8 threads x 2000 arrive+wait rounds:\n");
  fmt::print("  {:.1f} ns per operation ({} operations in {:.2f} s)\n\n", p.seconds * 1e9 / p.steps, p.steps,
             p.seconds);

  for (const char* stages : {"2", "4"}) {
    auto prog = make_protocol("epi-load", {{"stages", stages}, {"tiles", "8"}});
    Figures f = measure(*prog, seconds);
    fmt::print("epi-load full size (1 load + 4 store warps x 32 threads, {} stages, 8 tiles):\n", stages);
    fmt::print(
        "  {:.0f} executions/s, {:.1f} ns per step all-in ({:.0f} steps per execution, incl. creating "
        "160 fibers and checking D)\n\n",
        f.executions / f.seconds, f.seconds * 1e9 / f.steps, double(f.steps) / f.executions);
  }
  return 0;
}
