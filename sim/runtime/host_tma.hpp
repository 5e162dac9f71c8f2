// The host entry points of the tensor copies (cp.async.bulk.tensor with a tensor map), for code
// that runs natively on the host against the runtime, as HostPlatform's functions do: the CUTLASS
// layer's TMA atoms (sim/compat/cutlass/include/cute/arch/copy_sm90_tma.hpp). They are not
// Platform contract functions (spec/platform.hpp): CUTLASS's kernels issue these instructions
// themselves on the GPU, so the contract and the device backend have no counterpart to keep in
// step (docs/semantics.md, "Tensor copies").
#pragma once

#include <cstdint>

#include "sim/runtime/runtime.hpp"
#include "sim/runtime/tensor_map.hpp"

namespace mbcheck::sim {

struct HostTma {
  static Runtime& rt() { return Runtime::current(); }

  // cp.async.bulk.tensor.Nd.shared::cluster.global.tile.mbarrier::complete_tx::bytes
  // [smem], [desc, {coords}], [bar]: the box's bytes land in `smem` and complete on `bar`.
  static void load(const void* desc, const std::int32_t* coords, void* smem, MbarrierState& bar,
                   const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().tensor_load(desc, coords, smem, bar);
  }
  // The same with .multicast::cluster: into each CTA of `cta_mask` at smem's and bar's offsets.
  static void load_multicast(const void* desc, const std::int32_t* coords, void* smem, MbarrierState& bar,
                             std::uint16_t cta_mask, const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().tensor_load(desc, coords, smem, bar, cta_mask, true);
  }
  // cp.async.bulk.tensor.Nd.global.shared::cta.tile.bulk_group [desc, {coords}], [smem]
  static void store(const void* desc, const std::int32_t* coords, const void* smem,
                    const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().tensor_store(desc, coords, smem, false);
  }
  // cp.reduce.async.bulk.tensor.Nd.global.shared::cta.add.tile.bulk_group [desc, {coords}], [smem]
  static void reduce_add(const void* desc, const std::int32_t* coords, const void* smem,
                         const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().tensor_store(desc, coords, smem, true);
  }
  // cp.async.bulk.prefetch.tensor.Nd.L2.global [desc, {coords}]: validates the map only.
  static void prefetch(const void* desc, const std::int32_t* coords, const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().tensor_prefetch(desc, coords);
  }
  // The bytes a load of the map at `desc` moves into shared memory (0: not a tensor map).
  static std::uint32_t box_bytes(const void* desc) {
    const tma::TensorMap* m = tma::as_map(desc);
    return m ? tma::box_bytes(*m) : 0;
  }
};

}  // namespace mbcheck::sim
