#include "sim/crash.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>

namespace mbcheck::sim {

namespace {
std::function<std::string(const std::vector<AgentId>&)> g_token_of;

extern "C" void report_crash(int sig) {
  if (Runtime* rt = Runtime::current_or_null(); rt && g_token_of) {
    const std::string msg =
        fmt::format("\nmbcheck: the protocol crashed ({}) at step {}; this replays it up to the crash:\nreplay:  {}\n",
                    strsignal(sig), rt->steps(), g_token_of(rt->schedule_so_far()));
    (void)!write(STDERR_FILENO, msg.data(), msg.size());
  }
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}
}  // namespace

void install_crash_reporter(std::function<std::string(const std::vector<AgentId>&)> token_of) {
  g_token_of = std::move(token_of);
  static thread_local std::vector<char> alt_stack(256 * 1024);
  stack_t ss{};
  ss.ss_sp = alt_stack.data();
  ss.ss_size = alt_stack.size();
  sigaltstack(&ss, nullptr);
  struct sigaction sa {};
  sa.sa_handler = report_crash;
  sa.sa_flags = SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) sigaction(sig, &sa, nullptr);
}

}  // namespace mbcheck::sim
