// The bundled `pingpong` protocol: spec/kernels/pingpong.hpp on the host, with its shape
// flags and its output check.
#include <fmt/format.h>

#include <cstring>
#include <memory>

#include "sim/host_platform.hpp"
#include "sim/protocols/options.hpp"
#include "sim/protocols/protocols.hpp"
#include "spec/kernels/pingpong.hpp"

namespace mbcheck::sim {

extern const ProtocolInfo kPingPong;
const ProtocolInfo kPingPong{
    "pingpong",
    "persistent ping-pong mainloop (CUTLASS sm90 / FlashAttention-3 style): 1 producer thread -> 2 consumer warp "
    "groups on alternate tiles, ordered by named barriers; waits pass only the phase bit",
    {{"stages", "2", "pipeline stages (1..8)"},
     {"group-threads", "128", "threads per consumer warp group (a multiple of --threads-per-warp)"},
     {"threads-per-warp", "32", "threads per warp (smaller values shrink the shape)"},
     {"tiles", "4", "tiles; group t % 2 consumes tile t (0: no work; 1: group 1 has none)"},
     {"k-blocks", "2", "blocks per tile, each a bulk copy through the next stage (0: the producer has no work)"},
     {"tile-elems", "64", "floats per block (multiple of 4)"},
     {"mutation", "none", "a deliberate protocol bug (see the mutation list)"}},
    {"no-order", "order-count-mismatch", "double-arrive", "producer-start-bit-0", "idle-group-returns"},
};

namespace {

using PingPongFn = void (*)(const PingPongParams&);
template <int S>
void pingpong(const PingPongParams& p) {
  pingpong_kernel<HostPlatform, S>(p);
}
template <int S>
std::uint32_t pingpong_smem(const PingPongParams& p) {
  return pingpong_smem_bytes<HostPlatform, S>(p);
}
constexpr PingPongFn kKernels[] = {pingpong<1>, pingpong<2>, pingpong<3>, pingpong<4>,
                                   pingpong<5>, pingpong<6>, pingpong<7>, pingpong<8>};
constexpr std::uint32_t (*kSmem[])(const PingPongParams&) = {pingpong_smem<1>, pingpong_smem<2>, pingpong_smem<3>,
                                                             pingpong_smem<4>, pingpong_smem<5>, pingpong_smem<6>,
                                                             pingpong_smem<7>, pingpong_smem<8>};

class PingPongProgram final : public CliProgram {
 public:
  explicit PingPongProgram(const std::map<std::string, std::string>& given) {
    OptionReader r(kPingPong, given);
    const auto stages = static_cast<int>(r.integer("stages", 1, 8));
    shape_.warp_size = static_cast<std::uint32_t>(r.integer("threads-per-warp", 1, 32));
    params_.group_threads = static_cast<std::uint32_t>(r.integer("group-threads", 1, 480));
    params_.tiles = static_cast<std::uint32_t>(r.integer("tiles", 0, 1u << 12));
    params_.k_blocks = static_cast<std::uint32_t>(r.integer("k-blocks", 0, 64));
    params_.tile_elems = static_cast<std::uint32_t>(r.integer("tile-elems", 4, 16384));
    params_.mutation = r.mutation<PingPongMutation>();
    if (params_.tile_elems % 4 != 0)
      throw ShapeError(fmt::format("--tile-elems {}: bulk copies move multiples of 16 bytes", params_.tile_elems));
    if (params_.group_threads % shape_.warp_size != 0)
      throw ShapeError(fmt::format("--group-threads {}: a warp group is whole warps of --threads-per-warp {}",
                                   params_.group_threads, shape_.warp_size));
    if ((params_.mutation == PingPongMutation::no_order || params_.mutation == PingPongMutation::double_arrive) &&
        params_.tiles < 3)
      throw ShapeError(fmt::format("--mutation {} needs --tiles 3 or more (group 0's second tile is where it bites)",
                                   r.values().at("mutation")));
    if (params_.mutation == PingPongMutation::idle_group_returns && params_.tiles != 1)
      throw ShapeError(
          "--mutation idle-group-returns bites when one group has a tile and the other none: it needs "
          "--tiles 1");
    shape_.threads_per_cta = shape_.warp_size + 2 * params_.group_threads;
    if (shape_.threads_per_cta > 1024)
      throw ShapeError(fmt::format("{} threads per CTA: a CTA has at most 1024 threads", shape_.threads_per_cta));
    shape_.smem_bytes = kSmem[stages - 1](params_);
    if (shape_.smem_bytes > 227 * 1024)
      throw ShapeError(fmt::format("{} bytes of shared memory: sm_90 allows 227 KiB per CTA", shape_.smem_bytes));
    const std::size_t n = std::size_t{params_.tiles} * params_.k_blocks * params_.tile_elems;
    src_ = std::make_unique<FloatBuffer>(n);
    out_ = std::make_unique<FloatBuffer>(std::size_t{params_.tiles} * params_.group_threads);
    for (std::size_t i = 0; i < n; ++i) src_->data()[i] = static_cast<float>(i % 5 + 1);  // exact sums
    params_.src = src_->data();
    params_.out = out_->data();
    kernel_ = kKernels[stages - 1];
    options_ = r.values();
  }
  LaunchShape shape() const override { return shape_; }
  void reset() override {
    std::memset(out_->data(), 0xff, std::size_t{params_.tiles} * params_.group_threads * sizeof(float));
  }
  void thread_main() override { kernel_(params_); }
  std::optional<std::string> check_result() override {
    const std::uint32_t g = params_.group_threads;
    for (std::uint32_t t = 0; t < params_.tiles; ++t)
      for (std::uint32_t lane = 0; lane < g; ++lane) {
        float expected = 0;
        for (std::uint32_t k = 0; k < params_.k_blocks; ++k)
          for (std::uint32_t i = lane; i < params_.tile_elems; i += g)
            expected += params_.src[(std::size_t{t} * params_.k_blocks + k) * params_.tile_elems + i];
        const float got = out_->data()[std::size_t{t} * g + lane];
        if (std::memcmp(&got, &expected, sizeof(float)) != 0)
          return fmt::format(
              "tile {} thread {} of group {} summed {}, expected {}: it read a stage that did not "
              "hold its block",
              t, lane, t % 2, got, expected);
      }
    return std::nullopt;
  }
  std::map<std::string, std::string> options() const override { return options_; }
  std::string result_summary() const override {
    return fmt::format("both warp groups summed exactly their tiles ({} tiles of {} blocks)", params_.tiles,
                       params_.k_blocks);
  }

 private:
  PingPongParams params_;
  LaunchShape shape_;
  PingPongFn kernel_ = nullptr;
  std::unique_ptr<FloatBuffer> src_, out_;
  std::map<std::string, std::string> options_;
};

}  // namespace

std::unique_ptr<CliProgram> make_pingpong(const std::map<std::string, std::string>& options) {
  return std::make_unique<PingPongProgram>(options);
}

}  // namespace mbcheck::sim
