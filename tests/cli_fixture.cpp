// A user's command line (sim/cli.hpp) over one small protocol whose mutations break the
// process the way protocol code can: tests/cli_test.sh runs it for what the bundled protocols
// cannot show (the watchdog, a crash, help and messages for a protocol that is not bundled).
//   mbcheck_cli_fixture run handoff-lite --mutation endless-loop --watchdog 0.3
#include <fmt/format.h>

#include <cstdlib>
#include <ctime>
#include <map>
#include <memory>
#include <string>

#include "sim/cli.hpp"
#include "sim/host_platform.hpp"
#include "spec/mbarrier.hpp"

using namespace mbcheck::sim;
using P = HostPlatform;

namespace {

const ProtocolInfo kInfo{"handoff-lite",
                         "thread 0 signals a barrier that the other threads wait on",
                         {{"waiters", "1", "threads that wait"},
                          {"mutation", "none",
                           "endless-loop: a waiter then loops without calling into mbcheck; null-deref: a waiter "
                           "then stores through a null pointer; heap-corruption: a waiter then frees a chunk "
                           "twice (glibc aborts inside free(), holding its heap lock)"}},
                         {"endless-loop", "null-deref", "heap-corruption"}};

// Volatile, so that the compiler can prove neither the loop endless nor the pointer null.
volatile bool g_spin = true;
int* volatile g_null = nullptr;

// A real fault, not stopped first by the UBSan of the debug preset.
__attribute__((no_sanitize("undefined"))) void store_through(int* p) { *p = 1; }

// A chunk too large for glibc's per-thread cache and fast bins, freed twice: the second free()
// finds it free already ("double free or corruption") and aborts holding the arena's lock,
// which the abandoned frames never give back. Prints the time of the abort (cli_test.sh
// measures from it to the end of the process).
[[gnu::noinline]] void free_twice() {
  char* volatile chunk = static_cast<char*>(std::malloc(4096));
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  fmt::print(stderr, "handoff-lite: freeing a chunk twice at {} ns\n",
             static_cast<long long>(now.tv_sec) * 1'000'000'000 + now.tv_nsec);
  std::free(chunk);
  std::free(chunk);
}

class Fixture final : public CliProgram {
 public:
  explicit Fixture(const std::map<std::string, std::string>& given) {
    for (const auto& o : kInfo.options) options_[o.name] = o.default_value;
    for (const auto& [k, v] : given) options_[k] = v;
    if (options_["waiters"] != "1" && options_["waiters"] != "2") throw ShapeError("--waiters: must be 1 or 2");
    const std::string& m = options_["mutation"];
    if (m != "none" && m != "endless-loop" && m != "null-deref" && m != "heap-corruption")
      throw ShapeError(fmt::format("--mutation {}: must be none, endless-loop, null-deref or heap-corruption", m));
  }
  LaunchShape shape() const override {
    return {.ctas = 1,
            .threads_per_cta = 1 + static_cast<std::uint32_t>(std::stoul(options_.at("waiters"))),
            .warp_size = 32,
            .smem_bytes = 64};
  }
  void reset() override {}
  void thread_main() override {
    mbcheck::Mbarrier<P> bar(*reinterpret_cast<P::Barrier*>(P::shared_memory()));
    if (P::thread_idx() == 0) bar.init(1);
    P::sync_threads();
    if (P::thread_idx() == 0) {
      bar.arrive();
      return;
    }
    bar.wait(0);  // the waiters' last operation (cli_test.sh looks for this line)
    if (options_.at("mutation") == "endless-loop")
      while (g_spin) {}
    if (options_.at("mutation") == "null-deref") store_through(g_null);
    if (options_.at("mutation") == "heap-corruption") free_twice();
  }
  std::map<std::string, std::string> options() const override { return options_; }
  std::string result_summary() const override { return "every waiter saw the signal"; }

 private:
  std::map<std::string, std::string> options_;
};

}  // namespace

int main(int argc, char** argv) {
  return cli::main(argc, argv, {{kInfo, [](const std::map<std::string, std::string>& o) {
                                   return std::unique_ptr<CliProgram>(std::make_unique<Fixture>(o));
                                 }}});
}
