#include "sim/protocols/protocols.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "sim/host_platform.hpp"
#include "sim/protocols/options.hpp"
#include "spec/classics.hpp"
#include "spec/kernels/residual_add.hpp"
#include "spec/kernels/tma_pipeline.hpp"
#include "spec/kernels/tma_store.hpp"

namespace mbcheck::sim {

namespace {

// The most threads one execution simulates (each a fiber with a 64 KiB stack: 1 GiB).
constexpr std::uint64_t kMaxHostThreads = 16384;

// --- epi-load: the residual-add epilogue over EpiLoadPipeline ---------------------------

const ProtocolInfo kEpiLoad{
    "epi-load",
    "residual-add epilogue D = accum + beta*C: 1 TMA load warp -> store warps over EpiLoadPipeline",
    {
        {"stages", "2", "pipeline stages (1..8)"},
        {"tiles", "8", "tiles of C to stream through the pipeline (0: no work; fewer than --ctas: a CTA with none)"},
        {"store-warps", "4", "epilogue-store (consumer) warps"},
        {"threads-per-warp", "32", "threads per warp (smaller values shrink the shape)"},
        {"tile-elems", "1024", "floats per tile (multiple of 4)"},
        {"last-tile-elems", "0", "floats in the last tile, for a ragged edge (0: a full tile)"},
        {"ctas", "1", "CTAs in the (persistent) grid"},
        {"copy-pieces", "1", "pieces each bulk copy lands in (one complete_tx each)"},
        {"beta", "0.5", "the beta of D = accum + beta*C"},
        {"mutation", "none", "a deliberate protocol bug (see the mutation list)"},
    },
    {"consumer-count-plus-one", "producer-start-phase-0", "producer-skips-empty-wait", "release-before-read",
     "tx-overcount", "tx-undercount-split", "single-stage-wrong-parity", "double-arrive", "explicit-without-signal",
     "use-before-init", "reinit-live", "all-lanes-produce", "consumer-do-while", "no-read-fence"},
};

using KernelFn = void (*)(const ResidualAddParams&);

template <int S>
void epi_load_kernel(const ResidualAddParams& p) {
  residual_add_kernel<HostPlatform, S>(p);
}

template <int S>
std::uint32_t epi_load_smem(const ResidualAddParams& p) {
  return residual_add_smem_bytes<HostPlatform, S>(p);
}

constexpr KernelFn kEpiLoadKernels[] = {epi_load_kernel<1>, epi_load_kernel<2>, epi_load_kernel<3>, epi_load_kernel<4>,
                                        epi_load_kernel<5>, epi_load_kernel<6>, epi_load_kernel<7>, epi_load_kernel<8>};
constexpr std::uint32_t (*kEpiLoadSmem[])(const ResidualAddParams&) = {
    epi_load_smem<1>, epi_load_smem<2>, epi_load_smem<3>, epi_load_smem<4>,
    epi_load_smem<5>, epi_load_smem<6>, epi_load_smem<7>, epi_load_smem<8>};

class EpiLoadProgram final : public CliProgram {
 public:
  explicit EpiLoadProgram(const std::map<std::string, std::string>& given) {
    OptionReader r(kEpiLoad, given);
    stages_ = static_cast<int>(r.integer("stages", 1, 8));
    const auto tiles = static_cast<std::uint32_t>(r.integer("tiles", 0, 1u << 20));
    params_.store_warps = static_cast<std::uint32_t>(r.integer("store-warps", 1, 1023));
    shape_.warp_size = static_cast<std::uint32_t>(r.integer("threads-per-warp", 1, 32));
    params_.tile_elems = static_cast<std::uint32_t>(r.integer("tile-elems", 4, 1u << 20));
    const auto last = static_cast<std::uint32_t>(r.integer("last-tile-elems", 0, 1u << 20));
    shape_.ctas = static_cast<std::uint32_t>(r.integer("ctas", 1, 1024));
    shape_.copy_pieces = static_cast<std::uint32_t>(r.integer("copy-pieces", 1, 64));
    params_.beta = r.real("beta");
    params_.mutation = r.mutation<ResidualAddMutation>();
    if (params_.mutation == ResidualAddMutation::single_stage_wrong_parity && stages_ != 1)
      throw ShapeError("--mutation single-stage-wrong-parity needs --stages 1");
    if (params_.mutation == ResidualAddMutation::consumer_do_while && tiles >= shape_.ctas)
      throw ShapeError(
          fmt::format("--mutation consumer-do-while bites in a CTA with no tile: it needs fewer --tiles than --ctas {}",
                      shape_.ctas));

    if (params_.tile_elems % 4 != 0)
      throw ShapeError(
          fmt::format("--tile-elems {}: bulk copies move multiples of 16 bytes, so tiles hold a "
                      "multiple of 4 floats",
                      params_.tile_elems));
    const std::uint64_t tile_bytes = std::uint64_t{params_.tile_elems} * sizeof(float);
    if (tile_bytes > static_cast<std::uint64_t>(kMaxTxCount))
      throw ShapeError(
          fmt::format("--tile-elems {}: a tile of {} bytes exceeds the mbarrier tx-count limit "
                      "2^20-1 = {}",
                      params_.tile_elems, tile_bytes, kMaxTxCount));
    if (last != 0 && tiles == 0)
      throw ShapeError(fmt::format("--last-tile-elems {}: --tiles 0 has no last tile", last));
    if (last != 0 && (last % 4 != 0 || last > params_.tile_elems))
      throw ShapeError(fmt::format("--last-tile-elems {}: must be a multiple of 4 and at most --tile-elems {}", last,
                                   params_.tile_elems));
    shape_.threads_per_cta = (1 + params_.store_warps) * shape_.warp_size;
    if (shape_.threads_per_cta > 1024)
      throw ShapeError(
          fmt::format("{} threads per CTA (1 load warp + {} store warps of {}): a CTA has at most "
                      "1024 threads",
                      shape_.threads_per_cta, params_.store_warps, shape_.warp_size));
    // Every simulated thread is a fiber with a 64 KiB stack.
    if (std::uint64_t{shape_.ctas} * shape_.threads_per_cta > kMaxHostThreads)
      throw ShapeError(
          fmt::format("{} CTAs of {} threads: the host simulates at most {} threads in all (one fiber "
                      "each); use fewer CTAs",
                      shape_.ctas, shape_.threads_per_cta, kMaxHostThreads));
    const std::uint64_t elems =
        tiles == 0 ? 0 : std::uint64_t{tiles - 1} * params_.tile_elems + (last ? last : params_.tile_elems);
    if (elems > std::numeric_limits<std::uint32_t>::max() / 2)
      throw ShapeError(fmt::format("{} elements in all: too large for one run", elems));
    params_.num_elems = static_cast<std::uint32_t>(elems);
    shape_.smem_bytes = kEpiLoadSmem[stages_ - 1](params_);
    if (shape_.smem_bytes > 227 * 1024)
      throw ShapeError(fmt::format("{} bytes of shared memory ({} stages of {} floats): sm_90 allows 227 KiB per CTA",
                                   shape_.smem_bytes, stages_, params_.tile_elems));
    options_ = r.values();

    accum_ = std::make_unique<FloatBuffer>(params_.num_elems);
    c_ = std::make_unique<FloatBuffer>(params_.num_elems);
    d_ = std::make_unique<FloatBuffer>(params_.num_elems);
    expected_.resize(params_.num_elems);
    // Fixed inputs (the schedule, not the data, is what varies between executions).
    SplitMix64Data gen(0x5eed);
    for (std::uint32_t i = 0; i < params_.num_elems; ++i) {
      accum_->data()[i] = gen.real();
      c_->data()[i] = gen.real();
    }
    residual_add_reference(accum_->data(), c_->data(), params_.beta, expected_.data(), params_.num_elems);
    params_.accum = accum_->data();
    params_.c = c_->data();
    params_.d = d_->data();
    kernel_ = kEpiLoadKernels[stages_ - 1];
  }

  LaunchShape shape() const override { return shape_; }
  void reset() override {
    // A NaN pattern, so an element the kernel never writes cannot match the reference.
    std::memset(d_->data(), 0xff, std::size_t{params_.num_elems} * sizeof(float));
  }
  void thread_main() override { kernel_(params_); }
  std::optional<std::string> check_result() override {
    for (std::uint32_t i = 0; i < params_.num_elems; ++i) {
      if (std::memcmp(&d_->data()[i], &expected_[i], sizeof(float)) != 0)
        return fmt::format(
            "D[{}] (tile {}) = {}, expected {} = {} + {} * {}: the output differs from the "
            "CPU reference",
            i, i / params_.tile_elems, d_->data()[i], expected_[i], accum_->data()[i], params_.beta, c_->data()[i]);
    }
    return std::nullopt;
  }
  std::map<std::string, std::string> options() const override { return options_; }
  std::string result_summary() const override {
    return fmt::format("D matches the CPU reference bit for bit ({} elements, {} tiles)", params_.num_elems,
                       residual_add_num_tiles(params_));
  }

 private:
  struct SplitMix64Data {
    explicit SplitMix64Data(std::uint64_t s) : state(s) {}
    float real() {  // in [-1, 1), on a 2^-20 grid
      std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      z ^= z >> 31;
      return static_cast<float>(static_cast<std::int64_t>(z >> 43) - (1 << 20)) / static_cast<float>(1 << 20);
    }
    std::uint64_t state;
  };

  int stages_ = 2;
  ResidualAddParams params_;
  LaunchShape shape_;
  KernelFn kernel_ = nullptr;
  std::map<std::string, std::string> options_;
  std::unique_ptr<FloatBuffer> accum_, c_, d_;
  std::vector<float> expected_;
};

// --- readers / lastzero: the classic DPOR benchmarks over plain atomics -----------------

const ProtocolInfo kReaders{
    "readers", "DPOR benchmark: one writer, N readers of one word (2^N classes)", {{"n", "2", "readers"}}, {}};
const ProtocolInfo kLastzero{"lastzero",
                             "DPOR benchmark: thread 0 looks for the last zero while N threads fill the array "
                             "((N+3)*2^(N-2) classes)",
                             {{"n", "5", "writer threads (2..20)"}},
                             {}};

const ProtocolInfo kOrderingBug{"ordering-bug",
                                "a depth-1 ordering bug a random walk hits with probability 2^-(N+1): thread 1 must "
                                "not run N+1 steps before thread 0's one",
                                {{"n", "20", "steps of thread 1 before it reads the flag"}},
                                {}};

class ClassicProgram final : public CliProgram {
 public:
  ClassicProgram(const ProtocolInfo& info, const std::map<std::string, std::string>& given) : info_(info) {
    OptionReader r(info, given);
    n_ = static_cast<std::uint32_t>(
        r.integer("n", info.name == "lastzero" ? 2 : 1, info.name == "ordering-bug" ? 60 : 20));
    options_ = r.values();
    shape_.threads_per_cta = info.name == "ordering-bug" ? 2 : n_ + 1;
    memory_.assign(n_ + 1, 0);
  }
  LaunchShape shape() const override { return shape_; }
  void reset() override { std::fill(memory_.begin(), memory_.end(), 0); }
  void thread_main() override {
    if (info_.name == "readers")
      readers_thread<HostPlatform>(memory_.data());
    else if (info_.name == "lastzero")
      lastzero_thread<HostPlatform>(memory_.data(), n_);
    else
      ordering_bug_thread<HostPlatform>(&memory_[0], &memory_[1], n_);
  }
  std::map<std::string, std::string> options() const override { return options_; }
  std::string result_summary() const override { return "all threads finished"; }

 private:
  const ProtocolInfo& info_;
  std::uint32_t n_ = 0;
  LaunchShape shape_;
  std::vector<std::int64_t> memory_;
  std::map<std::string, std::string> options_;
};

// --- tma-store: ordinary stores to shared memory, then a bulk store to global ----------

const ProtocolInfo kTmaStore{
    "tma-store",
    "TMA-store epilogue: threads fill a shared tile, one thread bulk-stores it, the tile is reused next round",
    {{"warps", "2", "warps in the CTA"},
     {"threads-per-warp", "32", "threads per warp"},
     {"tile-elems", "256", "floats per tile (multiple of 4)"},
     {"rounds", "2", "tiles written through the one shared buffer (0: no work)"},
     {"mutation", "none", "a deliberate protocol bug (see the mutation list)"}},
    {"missing-proxy-fence", "skip-read-wait"},
};

class TmaStoreProgram final : public CliProgram {
 public:
  explicit TmaStoreProgram(const std::map<std::string, std::string>& given) {
    OptionReader r(kTmaStore, given);
    const auto warps = static_cast<std::uint32_t>(r.integer("warps", 1, 32));
    shape_.warp_size = static_cast<std::uint32_t>(r.integer("threads-per-warp", 1, 32));
    params_.tile_elems = static_cast<std::uint32_t>(r.integer("tile-elems", 4, 16384));
    params_.rounds = static_cast<std::uint32_t>(r.integer("rounds", 0, 64));
    const std::string mutation = r.choice("mutation", {"none", "missing-proxy-fence", "skip-read-wait"});
    if (mutation == "missing-proxy-fence") params_.mutation = TmaStoreMutation::missing_proxy_fence;
    if (mutation == "skip-read-wait") params_.mutation = TmaStoreMutation::skip_read_wait;
    if (params_.tile_elems % 4 != 0)
      throw ShapeError(fmt::format("--tile-elems {}: bulk copies move multiples of 16 bytes", params_.tile_elems));
    shape_.threads_per_cta = warps * shape_.warp_size;
    if (shape_.threads_per_cta > 1024)
      throw ShapeError(fmt::format("{} threads per CTA: a CTA has at most 1024 threads", shape_.threads_per_cta));
    shape_.smem_bytes = params_.tile_elems * sizeof(float);
    out_ = std::make_unique<FloatBuffer>(std::size_t{params_.rounds} * params_.tile_elems);
    params_.out = out_->data();
    options_ = r.values();
  }
  LaunchShape shape() const override { return shape_; }
  void reset() override {
    std::memset(out_->data(), 0xff, std::size_t{params_.rounds} * params_.tile_elems * sizeof(float));
  }
  void thread_main() override { tma_store_kernel<HostPlatform>(params_); }
  std::optional<std::string> check_result() override {
    for (std::uint32_t r = 0; r < params_.rounds; ++r)
      for (std::uint32_t i = 0; i < params_.tile_elems; ++i) {
        const float got = out_->data()[r * params_.tile_elems + i];
        if (std::memcmp(&got, &(const float&)tma_store_value(r, i), sizeof(float)) != 0)
          return fmt::format("out[{}] of round {} = {}, expected {}", i, r, got, tma_store_value(r, i));
      }
    return std::nullopt;
  }
  std::map<std::string, std::string> options() const override { return options_; }
  std::string result_summary() const override {
    return fmt::format("all {} tiles reached global memory intact", params_.rounds);
  }

 private:
  TmaStoreParams params_;
  LaunchShape shape_;
  std::unique_ptr<FloatBuffer> out_;
  std::map<std::string, std::string> options_;
};

// --- tma-pipeline: a CUTLASS-style TMA mainloop (PipelineTmaAsync) ----------------------

const ProtocolInfo kTmaPipeline{
    "tma-pipeline",
    "CUTLASS-style TMA mainloop: 1 producer thread (arrive.expect_tx + bulk copy) -> consumer threads over "
    "PipelineTmaAsync",
    {{"stages", "2", "pipeline stages (1..8)"},
     {"consumers", "128", "consumer threads"},
     {"iterations", "4", "tiles streamed through the pipeline (0: no work)"},
     {"tile-elems", "64", "floats per tile (multiple of 4)"},
     {"consumer-wait", "wait",
      "how consumers wait for a stage: wait, or try-then-wait (consumer_try_wait, "
      "then consumer_wait if that failed)"},
     {"mutation", "none", "a deliberate protocol bug (see the mutation list)"}},
    {"producer-start-phase-0", "producer-skips-empty-wait", "consumer-release-before-read", "tx-overcount",
     "consumer-peeled-first"},
};

using TmaMainloopFn = void (*)(const TmaMainloopParams&);
template <int S>
void tma_mainloop(const TmaMainloopParams& p) {
  tma_mainloop_kernel<HostPlatform, S>(p);
}
template <int S>
std::uint32_t tma_mainloop_smem(const TmaMainloopParams& p) {
  return tma_mainloop_smem_bytes<HostPlatform, S>(p);
}
constexpr TmaMainloopFn kTmaMainloops[] = {tma_mainloop<1>, tma_mainloop<2>, tma_mainloop<3>, tma_mainloop<4>,
                                           tma_mainloop<5>, tma_mainloop<6>, tma_mainloop<7>, tma_mainloop<8>};
constexpr std::uint32_t (*kTmaMainloopSmem[])(const TmaMainloopParams&) = {
    tma_mainloop_smem<1>, tma_mainloop_smem<2>, tma_mainloop_smem<3>, tma_mainloop_smem<4>,
    tma_mainloop_smem<5>, tma_mainloop_smem<6>, tma_mainloop_smem<7>, tma_mainloop_smem<8>};

class TmaPipelineProgram final : public CliProgram {
 public:
  explicit TmaPipelineProgram(const std::map<std::string, std::string>& given) {
    OptionReader r(kTmaPipeline, given);
    const auto stages = static_cast<int>(r.integer("stages", 1, 8));
    params_.consumers = static_cast<std::uint32_t>(r.integer("consumers", 1, 1023));
    params_.iterations = static_cast<std::uint32_t>(r.integer("iterations", 0, 1u << 16));
    params_.tile_elems = static_cast<std::uint32_t>(r.integer("tile-elems", 4, 16384));
    params_.try_wait_first = r.choice("consumer-wait", {"wait", "try-then-wait"}) == "try-then-wait";
    params_.mutation = r.mutation<TmaMainloopMutation>();
    if (params_.tile_elems % 4 != 0)
      throw ShapeError(fmt::format("--tile-elems {}: bulk copies move multiples of 16 bytes", params_.tile_elems));
    if (params_.mutation == TmaMainloopMutation::producer_skips_empty_wait &&
        params_.iterations <= std::uint32_t(stages))
      throw ShapeError(
          "--mutation producer-skips-empty-wait needs more --iterations than --stages (a stage must be "
          "reused for the bug to exist)");
    if (params_.mutation == TmaMainloopMutation::consumer_peeled_first && params_.iterations != 0)
      throw ShapeError("--mutation consumer-peeled-first bites when there is no tile: it needs --iterations 0");
    shape_.threads_per_cta = 1 + params_.consumers;
    shape_.smem_bytes = kTmaMainloopSmem[stages - 1](params_);
    if (shape_.smem_bytes > 227 * 1024)
      throw ShapeError(fmt::format("{} bytes of shared memory: sm_90 allows 227 KiB per CTA", shape_.smem_bytes));
    src_ = std::make_unique<FloatBuffer>(std::size_t{params_.iterations} * params_.tile_elems);
    out_ = std::make_unique<FloatBuffer>(params_.consumers);
    // Small whole numbers: every sum is exact, whatever the order of additions.
    for (std::size_t i = 0; i < std::size_t{params_.iterations} * params_.tile_elems; ++i)
      src_->data()[i] = static_cast<float>(i % 7 + 1);
    params_.src = src_->data();
    params_.out = out_->data();
    kernel_ = kTmaMainloops[stages - 1];
    options_ = r.values();
  }
  LaunchShape shape() const override { return shape_; }
  void reset() override { std::memset(out_->data(), 0xff, std::size_t{params_.consumers} * sizeof(float)); }
  void thread_main() override { kernel_(params_); }
  std::optional<std::string> check_result() override {
    for (std::uint32_t c = 0; c < params_.consumers; ++c) {
      float expected = 0;
      for (std::uint32_t k = 0; k < params_.iterations; ++k)
        for (std::uint32_t i = c; i < params_.tile_elems; i += params_.consumers)
          expected += params_.src[std::size_t{k} * params_.tile_elems + i];
      if (std::memcmp(&out_->data()[c], &expected, sizeof(float)) != 0)
        return fmt::format("consumer {} summed {}, expected {}: it read a stage that did not hold its tile", c + 1,
                           out_->data()[c], expected);
    }
    return std::nullopt;
  }
  std::map<std::string, std::string> options() const override { return options_; }
  std::string result_summary() const override {
    return fmt::format("every consumer summed exactly its elements of the {} tiles", params_.iterations);
  }

 private:
  TmaMainloopParams params_;
  LaunchShape shape_;
  TmaMainloopFn kernel_ = nullptr;
  std::unique_ptr<FloatBuffer> src_, out_;
  std::map<std::string, std::string> options_;
};

}  // namespace

// sim/protocols/pingpong.cpp
extern const ProtocolInfo kPingPong;
std::unique_ptr<CliProgram> make_pingpong(const std::map<std::string, std::string>& options);
// sim/protocols/cluster_gemm.cpp
extern const ProtocolInfo kClusterGemm;
std::unique_ptr<CliProgram> make_cluster_gemm(const std::map<std::string, std::string>& options);

const std::vector<ProtocolInfo>& bundled_protocols() {
  static const std::vector<ProtocolInfo> all{kEpiLoad,  kTmaPipeline, kPingPong, kClusterGemm,
                                             kTmaStore, kReaders,     kLastzero, kOrderingBug};
  return all;
}

namespace {
std::unique_ptr<CliProgram> make_bundled(const std::string& name, const std::map<std::string, std::string>& options) {
  if (name == kEpiLoad.name) return std::make_unique<EpiLoadProgram>(options);
  if (name == kTmaPipeline.name) return std::make_unique<TmaPipelineProgram>(options);
  if (name == kPingPong.name) return make_pingpong(options);
  if (name == kClusterGemm.name) return make_cluster_gemm(options);
  if (name == kTmaStore.name) return std::make_unique<TmaStoreProgram>(options);
  if (name == kReaders.name) return std::make_unique<ClassicProgram>(kReaders, options);
  if (name == kLastzero.name) return std::make_unique<ClassicProgram>(kLastzero, options);
  if (name == kOrderingBug.name) return std::make_unique<ClassicProgram>(kOrderingBug, options);
  std::string known;
  for (const auto& p : bundled_protocols()) known += (known.empty() ? "" : ", ") + p.name;
  throw ShapeError(fmt::format("unknown protocol '{}' (bundled: {})", name, known));
}
}  // namespace

std::unique_ptr<CliProgram> make_protocol(const std::string& name, const std::map<std::string, std::string>& options) {
  return make_with_modes([&](const auto& o) { return make_bundled(name, o); }, options);
}

}  // namespace mbcheck::sim
