// tile_copy.cuh's kernel, unmodified, as a protocol of an mbcheck command line of its own:
//   cutlass_tile_copy check tile-copy --ctas 2 --tiles 4
//   cutlass_tile_copy check tile-copy --mutation release-before-store-read   (a race)
// The kernel's host code (buffers, ClusterLauncher::launch) runs once with its launch captured;
// every execution then restores the buffers and the output is compared with the input.
#include <fmt/format.h>

#include <charconv>
#include <memory>

#include "mbcheck/cutlass_host/cli.hpp"
#include "tile_copy.cuh"

namespace {

using mbcheck::sim::ShapeError;

const mbcheck::sim::ProtocolInfo kTileCopy{
    "tile-copy",
    "a producer warp bulk-copies tiles into CUTLASS's PipelineTmaAsync stages; two consumer warps bulk-store "
    "them back out, meet at a NamedBarrier, and one releases each stage",
    {{"ctas", "1", "CTAs (each copies its own tiles)"},
     {"tiles", "3", "tiles per CTA (the ring has 2 stages)"},
     {"mutation", "none", "release-before-store-read | no-epilogue-sync"}},
    {"release-before-store-read", "no-epilogue-sync"}};

int whole(const std::map<std::string, std::string>& o, const char* key, int lo, int hi) {
  const std::string& v = o.at(key);
  int out = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || end != v.data() + v.size() || out < lo || out > hi)
    throw ShapeError(fmt::format("--{} {}: must be a whole number in [{}, {}]", key, v, lo, hi));
  return out;
}

std::unique_ptr<mbcheck::sim::CliProgram> make(const std::map<std::string, std::string>& given) {
  std::map<std::string, std::string> o;
  for (const auto& opt : kTileCopy.options) o[opt.name] = opt.default_value;
  for (const auto& [k, v] : given) {
    if (!o.count(k)) throw ShapeError(fmt::format("tile-copy has no option --{}", k));
    o[k] = v;
  }
  auto copy = std::make_shared<tile_copy::TileCopy>();
  copy->ctas = whole(o, "ctas", 1, 16);
  copy->tiles_per_cta = whole(o, "tiles", 1, 64);
  const std::string& m = o.at("mutation");
  if (m == "none")
    copy->mutation = tile_copy::kCorrect;
  else if (m == "release-before-store-read")
    copy->mutation = tile_copy::kReleaseBeforeStoreRead;
  else if (m == "no-epilogue-sync")
    copy->mutation = tile_copy::kNoEpilogueSync;
  else
    throw ShapeError(fmt::format("--mutation {}: must be none, release-before-store-read or no-epilogue-sync", m));
  return mbcheck::cutlass_host::launch_protocol([copy] { copy->launch(); }, o, [copy] { return copy->verify(); },
                                                "the output equals the input bit for bit");
}

}  // namespace

int main(int argc, char** argv) { return mbcheck::sim::cli::main(argc, argv, {{kTileCopy, make}}); }
