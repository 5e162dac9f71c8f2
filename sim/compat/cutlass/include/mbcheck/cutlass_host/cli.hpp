// A CUTLASS-style kernel as a protocol of the mbcheck command line: the host code that sets up
// its buffers and launches it (cutlass::ClusterLauncher::launch, cudaLaunchKernelExC) runs
// once with the launch captured (launch.hpp), and the launch is the protocol that `check`,
// `run`, `replay` (and every other command) explore.
//
//   int main(int argc, char** argv) {
//     return mbcheck::sim::cli::main(argc, argv, {{info, [](const auto& options) {
//       auto buffers = std::make_shared<MyBuffers>(options);   // cudaMalloc, cudaMemcpy
//       return mbcheck::cutlass_host::launch_protocol([=] { buffers->launch(); }, options,
//                                                     [=] { return buffers->verify(); }, "output verified");
//     }}});
//   }
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "mbcheck/cutlass_host/launch.hpp"
#include "sim/cli.hpp"

namespace mbcheck::cutlass_host {

class LaunchProtocol final : public sim::CliProgram {
 public:
  LaunchProtocol(std::unique_ptr<sim::Program> launch, std::map<std::string, std::string> options, std::string summary)
      : launch_(std::move(launch)), options_(std::move(options)), summary_(std::move(summary)) {}
  sim::LaunchShape shape() const override { return launch_->shape(); }
  void reset() override { launch_->reset(); }
  void thread_main() override { launch_->thread_main(); }
  std::optional<std::string> check_result() override { return launch_->check_result(); }
  bool device_code() const override { return launch_->device_code(); }
  std::map<std::string, std::string> options() const override { return options_; }
  std::string result_summary() const override { return summary_; }

 private:
  std::unique_ptr<sim::Program> launch_;
  std::map<std::string, std::string> options_;
  std::string summary_;
};

// The launch `host_code` makes, as a protocol. A bad launch (an unregistered kernel, a shape
// the host cannot run) is a sim::ShapeError: the command line reports it as a usage error.
inline std::unique_ptr<sim::CliProgram> launch_protocol(const std::function<void()>& host_code,
                                                        std::map<std::string, std::string> options,
                                                        std::function<std::optional<std::string>()> check_result,
                                                        std::string result_summary) {
  try {
    return std::make_unique<LaunchProtocol>(capture_launch(host_code, std::move(check_result)), std::move(options),
                                            std::move(result_summary));
  } catch (const std::invalid_argument& e) {
    throw sim::ShapeError(e.what());
  }
}

}  // namespace mbcheck::cutlass_host
