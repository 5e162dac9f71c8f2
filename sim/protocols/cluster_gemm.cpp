// The bundled `cluster-gemm` protocol: spec/kernels/cluster_gemm.hpp on the host, with its
// shape flags and its output check.
#include <fmt/format.h>

#include <charconv>
#include <cstring>
#include <memory>

#include "sim/host_platform.hpp"
#include "sim/protocols/options.hpp"
#include "sim/protocols/protocols.hpp"
#include "spec/kernels/cluster_gemm.hpp"

namespace mbcheck::sim {

extern const ProtocolInfo kClusterGemm;
const ProtocolInfo kClusterGemm{
    "cluster-gemm",
    "warp-specialized mainloop over thread block clusters (CUTLASS sm90 TMA multicast style): per CTA a producer "
    "warp and 2 consumer warp groups of 128; A multicast along cluster columns, B along rows; consumers release "
    "stages on the empty barriers of their whole row and column; producer_tail; optionally the two groups take "
    "turns on one shared tile, ordered by named barriers",
    {{"cluster", "2x1", "cluster shape XxY (at most 16 CTAs)"},
     {"clusters", "1", "clusters in the grid"},
     {"stages", "2", "pipeline stages (1..8)"},
     {"tiles", "2", "output tiles per CTA (0: no work), or in all with --schedule persistent"},
     {"schedule", "per-cta",
      "per-cta (every CTA computes --tiles), or persistent: a persistent scheduler deals the --tiles cluster tiles "
      "round-robin to the clusters, so with fewer tiles than --clusters some get none"},
     {"k-blocks", "2", "blocks per tile, each through the next stage (0: the producers have no work)"},
     {"a-elems", "64", "floats of an A block (a multiple of 4 x cluster Y)"},
     {"b-elems", "64", "floats of a B block (a multiple of 4 x cluster X)"},
     {"order", "none", "none, or named-barriers: the groups take turns on one shared tile"},
     {"mutation", "none", "a deliberate protocol bug (see the mutation list)"}},
    {"no-producer-tail", "local-release-only", "unscaled-empty-count", "no-init-fence", "no-cluster-sync",
     "wrong-multicast-mask", "skip-remote-arrivals", "order-count-mismatch", "double-arrive", "no-order",
     "peeled-first-k-block"},
};

namespace {

using Fn = void (*)(const ClusterGemmParams&);
template <int S>
void kernel(const ClusterGemmParams& p) {
  cluster_gemm_kernel<HostPlatform, S>(p);
}
template <int S>
std::uint32_t smem(const ClusterGemmParams& p) {
  return cluster_gemm_smem_bytes<HostPlatform, S>(p);
}
constexpr Fn kKernels[] = {kernel<1>, kernel<2>, kernel<3>, kernel<4>, kernel<5>, kernel<6>, kernel<7>, kernel<8>};
constexpr std::uint32_t (*kSmem[])(const ClusterGemmParams&) = {smem<1>, smem<2>, smem<3>, smem<4>,
                                                                smem<5>, smem<6>, smem<7>, smem<8>};

class ClusterGemmProgram final : public CliProgram {
 public:
  explicit ClusterGemmProgram(const std::map<std::string, std::string>& given) {
    OptionReader r(kClusterGemm, given);
    const std::string cluster = r.values().at("cluster");
    // XxY: two whole numbers of at most two digits, nothing else (no sign, no spaces).
    std::uint32_t cx = 0, cy = 0;
    const char* const end = cluster.data() + cluster.size();
    const auto [after_x, ex] = std::from_chars(cluster.data(), end, cx);
    bool ok = ex == std::errc() && after_x != cluster.data() && after_x - cluster.data() <= 2 && after_x < end &&
              *after_x == 'x';
    if (ok) {
      const auto [after_y, ey] = std::from_chars(after_x + 1, end, cy);
      ok = ey == std::errc() && after_y == end && after_y - (after_x + 1) >= 1 && after_y - (after_x + 1) <= 2;
    }
    if (!ok || cx == 0 || cy == 0 || cx * cy > 16)
      throw ShapeError(fmt::format("--cluster {}: must be XxY with X, Y >= 1 and X*Y <= 16 (e.g. 2x1, 2x2)", cluster));
    shape_.cluster_x = cx;
    shape_.cluster_y = cy;
    const auto clusters = static_cast<std::uint32_t>(r.integer("clusters", 1, 64));
    const auto stages = static_cast<int>(r.integer("stages", 1, 8));
    params_.tiles = static_cast<std::uint32_t>(r.integer("tiles", 0, 1u << 12));
    params_.persistent = r.choice("schedule", {"per-cta", "persistent"}) == "persistent";
    params_.k_blocks = static_cast<std::uint32_t>(r.integer("k-blocks", 0, 64));
    params_.a_elems = static_cast<std::uint32_t>(r.integer("a-elems", 4, 16384));
    params_.b_elems = static_cast<std::uint32_t>(r.integer("b-elems", 4, 16384));
    params_.ordered = r.choice("order", {"none", "named-barriers"}) == "named-barriers";
    params_.mutation = r.mutation<ClusterGemmMutation>();
    if (params_.a_elems % (4 * cy) != 0)
      throw ShapeError(
          fmt::format("--a-elems {}: each of the {} A slices must be a multiple of 16 bytes", params_.a_elems, cy));
    if (params_.b_elems % (4 * cx) != 0)
      throw ShapeError(
          fmt::format("--b-elems {}: each of the {} B slices must be a multiple of 16 bytes", params_.b_elems, cx));
    using M = ClusterGemmMutation;
    const M mu = params_.mutation;
    if ((mu == M::order_count_mismatch || mu == M::double_arrive || mu == M::no_order) && !params_.ordered)
      throw ShapeError(fmt::format("--mutation {} breaks the named-barrier order: it needs --order named-barriers",
                                   r.values().at("mutation")));
    if ((mu == M::no_producer_tail || mu == M::local_release_only || mu == M::unscaled_empty_count ||
         mu == M::no_init_fence || mu == M::wrong_multicast_mask || mu == M::skip_remote_arrivals) &&
        cx * cy == 1)
      throw ShapeError(fmt::format("--mutation {} needs a cluster of 2 or more CTAs", r.values().at("mutation")));
    if (mu == M::wrong_multicast_mask && cx == 1)
      throw ShapeError("--mutation wrong-multicast-mask breaks the B multicast: it needs a cluster X of 2 or more");
    // Cluster 0 has the most tiles.
    if (mu == M::local_release_only &&
        cluster_gemm_tiles(params_, 0, clusters) * params_.k_blocks <= static_cast<std::uint32_t>(stages))
      throw ShapeError(
          fmt::format("--mutation local-release-only bites when a stage is refilled: it needs more "
                      "than --stages {} blocks (tiles x k-blocks)",
                      stages));
    if (mu == M::peeled_first_k_block && (params_.k_blocks != 0 || params_.tiles == 0))
      throw ShapeError(
          "--mutation peeled-first-k-block bites on a tile with no k-block: it needs --k-blocks 0 and a tile");
    shape_.ctas = cx * cy * clusters;
    shape_.threads_per_cta = kClusterGemmThreads;
    shape_.warp_size = 32;
    shape_.smem_bytes = kSmem[stages - 1](params_);
    if (shape_.smem_bytes > 227 * 1024)
      throw ShapeError(fmt::format("{} bytes of shared memory: sm_90 allows 227 KiB per CTA", shape_.smem_bytes));
    const std::uint32_t rows = clusters * cx, cols = clusters * cy;
    const std::size_t blocks = std::size_t{params_.tiles} * params_.k_blocks;
    a_ = std::make_unique<FloatBuffer>(rows * blocks * params_.a_elems);
    b_ = std::make_unique<FloatBuffer>(cols * blocks * params_.b_elems);
    out_size_ = std::size_t{shape_.ctas} * params_.tiles * 256;
    out_ = std::make_unique<FloatBuffer>(out_size_);
    for (std::size_t i = 0; i < rows * blocks * params_.a_elems; ++i) a_->data()[i] = static_cast<float>(i % 7 + 1);
    for (std::size_t i = 0; i < cols * blocks * params_.b_elems; ++i) b_->data()[i] = static_cast<float>(i % 3 + 1);
    params_.a = a_->data();
    params_.b = b_->data();
    params_.out = out_->data();
    kernel_ = kKernels[stages - 1];
    options_ = r.values();
  }
  LaunchShape shape() const override { return shape_; }
  void reset() override { std::memset(out_->data(), 0xff, out_size_ * sizeof(float)); }
  void thread_main() override { kernel_(params_); }
  std::optional<std::string> check_result() override {
    const std::uint32_t size = shape_.cluster_size();
    const float* out = out_->data();
    for (std::uint32_t cta = 0; cta < shape_.ctas; ++cta) {
      const std::uint32_t rank = cta % size, c = cta / size;
      const std::uint32_t m = c * shape_.cluster_x + rank % shape_.cluster_x;
      const std::uint32_t n = c * shape_.cluster_y + rank / shape_.cluster_x;
      const std::uint32_t dealt = cluster_gemm_tiles(params_, c, shape_.ctas / size);
      // A tile not dealt to the CTA keeps reset's pattern: nobody computed it.
      for (std::size_t e = (std::size_t{cta} * params_.tiles + dealt) * 256;
           e < (std::size_t{cta} + 1) * params_.tiles * 256; ++e) {
        if (!unwritten(out[e]))
          return fmt::format("cta {} wrote {} to tile {}, which it was not dealt", cta, out[e],
                             e / 256 % params_.tiles);
      }
      for (std::uint32_t j = 0; j < dealt; ++j)
        for (std::uint32_t i = 0; i < (params_.ordered ? 128u : 256u); ++i) {
          const std::uint32_t t = i % 128;
          float expected = 0;
          for (std::uint32_t group = 0; group < (params_.ordered ? 2u : 1u); ++group)
            for (std::uint32_t k = 0; k < params_.k_blocks; ++k) {
              const std::size_t ba = (std::size_t{m} * params_.tiles + j) * params_.k_blocks + k;
              const std::size_t bb = (std::size_t{n} * params_.tiles + j) * params_.k_blocks + k;
              expected += params_.a[ba * params_.a_elems + t % params_.a_elems] *
                          params_.b[bb * params_.b_elems + t % params_.b_elems];
            }
          const float got = out[(std::size_t{cta} * params_.tiles + j) * 256 + i];
          if (std::memcmp(&got, &expected, sizeof(float)) == 0) continue;
          if (unwritten(got))
            return fmt::format("cta {} tile {}: consumer thread {}'s result (expected {}) was never written", cta, j, i,
                               expected);
          return fmt::format(
              "cta {} tile {} consumer thread {} computed {}, expected {}: it read a stage that did "
              "not hold its block",
              cta, j, i, got, expected);
        }
    }
    return std::nullopt;
  }
  std::map<std::string, std::string> options() const override { return options_; }
  std::string result_summary() const override {
    return fmt::format("every consumer of {} CTAs ({}x{} clusters) computed its {} tiles{} exactly", shape_.ctas,
                       shape_.cluster_x, shape_.cluster_y, params_.tiles, params_.persistent ? " of the grid" : "");
  }

 private:
  // Still reset's pattern: nobody wrote it.
  static bool unwritten(float v) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    return bits == 0xffffffffu;
  }

  ClusterGemmParams params_;
  LaunchShape shape_;
  Fn kernel_ = nullptr;
  std::unique_ptr<FloatBuffer> a_, b_, out_;
  std::size_t out_size_ = 0;
  std::map<std::string, std::string> options_;
};

}  // namespace

std::unique_ptr<CliProgram> make_cluster_gemm(const std::map<std::string, std::string>& options) {
  return std::make_unique<ClusterGemmProgram>(options);
}

}  // namespace mbcheck::sim
