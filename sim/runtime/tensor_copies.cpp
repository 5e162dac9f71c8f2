// Tensor copies: cp.async.bulk.tensor with a tensor map (tiled mode), global -> shared completing
// tx on an mbarrier (with .multicast::cluster), shared -> global into a bulk group, the reduce-add
// store (cp.reduce.async.bulk.tensor .add) and the L2 prefetch. They are the bulk copies and stores
// of bulk_copies.cpp with a box instead of a contiguous range: the box's bytes (tensor_map.hpp)
// travel with the agent as its segment list, and the race detector sees each segment (rows of a
// box are separate ranges of global memory; the gaps between them are not accessed).
//
// PTX ISA (cp.async.bulk.tensor): the complete-tx of a load counts the box's bytes as laid out in
// shared memory, out-of-bounds elements (filled) included: CUTLASS arms its barriers with the full
// tile's bytes whatever the coordinates (TmaTransactionBytes), and a partial tile completes.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "sim/runtime/perform.hpp"

namespace mbcheck::sim {

namespace {

std::string box_text(const tma::TensorMap& m, const std::int32_t* coords) {
  std::string s;
  for (std::uint32_t i = 0; i < m.rank; ++i) s += fmt::format("{}{}", i ? ", " : "", coords[i]);
  return fmt::format("box {{{}}} of a {}d {} map", s, m.rank, tma::type_name(m.dtype));
}

}  // namespace

const tma::TensorMap& Runtime::tensor_map_operand(const char* what, const void* desc) {
  const tma::TensorMap* m = tma::as_map(desc);
  if (!m)
    perform([&]() -> void {
      throw MisuseError(MisuseKind::operand_range,
                        fmt::format("{}: {} is not a tensor map made by cuTensorMapEncodeTiled", what, desc));
    });
  return *m;
}

// The segments of the box whose first shared-memory byte is `smem` (this CTA's window), into `out`.
void Runtime::tensor_box(const char* what, const tma::TensorMap& m, const std::int32_t* coords, const void* smem,
                         std::vector<tma::Segment>& out) {
  const std::int64_t cta = cta_of(smem, current_->cta);
  perform([&] {
    if (cta != static_cast<std::int64_t>(current_->cta))
      throw MisuseError(MisuseKind::state_space,
                        fmt::format("{}: its shared-memory operand {} is not in this CTA's shared memory", what,
                                    describe_address(smem)));
    const auto offset =
        static_cast<std::uint32_t>(static_cast<const unsigned char*>(smem) - cta_shared_memory(current_->cta));
    const std::string e = tma::box_segments(m, coords, offset, out);
    if (!e.empty())
      throw MisuseError(MisuseKind::tma_misaligned, fmt::format("{} ({}): {}", what, box_text(m, coords), e));
  });
}

void Runtime::tensor_load(const void* desc, const std::int32_t* coords, void* smem_dst, MbarrierState& bar,
                          std::uint16_t cta_mask, bool multicast) {
  info(bar);
  const tma::TensorMap* pm = tma::as_map(desc);
  const std::uint32_t bytes = pm ? tma::box_bytes(*pm) : 0;
  Op op{OpKind::tensor_copy, &bar, bytes};
  op.expected = cta_mask;
  if (!schedule_point(op)) return;
  const char* what = multicast ? "cp.async.bulk.tensor multicast" : "cp.async.bulk.tensor";
  const tma::TensorMap& m = tensor_map_operand(what, desc);
  Agent& issuer = *current_;
  std::vector<tma::Segment> segments;
  tensor_box(what, m, coords, smem_dst, segments);
  const std::uint32_t size = shape_.cluster_size();
  perform([&] {
    if (cta_of(&bar, issuer.cta) != issuer.cta)
      throw MisuseError(MisuseKind::cluster,
                        fmt::format("{}: the mbarrier {} is named by its offset in the issuing CTA's shared memory",
                                    what, barrier_name(bar)));
    if (multicast && (cta_mask == 0 || (size < 16 && (cta_mask >> size) != 0)))
      throw MisuseError(
          MisuseKind::cluster,
          fmt::format("multicast mask {:#06x}: it must name some of the cluster's ranks 0..{} and no others", cta_mask,
                      size - 1));
  });
  record(issuer, &bar);
  StepInfo step{issuer.id, issuer.op, bar.phase};
  const std::uint32_t first_rank = issuer.cta - issuer.cta % size;
  const std::uint16_t mask = multicast ? cta_mask : static_cast<std::uint16_t>(1u << (issuer.cta - first_rank));
  unsigned char* own = cta_shared_memory(issuer.cta);
  for (std::uint32_t r = 0; r < size; ++r) {
    if (!(mask >> r & 1u)) continue;
    const std::uint32_t cta = first_rank + r;
    auto* dst = cta_shared_memory(cta) + (static_cast<unsigned char*>(smem_dst) - own);
    auto* peer_bar =
        reinterpret_cast<MbarrierState*>(cta_shared_memory(cta) + (reinterpret_cast<unsigned char*>(&bar) - own));
    info(*peer_bar);
    if (cta != issuer.cta && !peer_init_visible(issuer.id, *peer_bar))
      perform([&]() -> void {
        throw MisuseError(MisuseKind::unfenced_init,
                          fmt::format("multicast into cta {} before {} is visible to the issuing thread: the "
                                      "initialising thread needs fence.mbarrier_init.release.cluster, then a cluster "
                                      "barrier, before a peer's multicast",
                                      cta, barrier_name(*peer_bar)));
      });
    Agent& c = spawn_copy_agent(issuer, dst, reinterpret_cast<const unsigned char*>(m.global), bytes,
                                {OpKind::copy_land, peer_bar, bytes});
    c.piece = bytes;
    c.segments = segments;
    c.tensor = m;
    if (step.spawned == kNoAgent) step.spawned = c.id;
    ++step.spawned_count;
  }
  observe(step);
}

// A tensor load's landing: every in-bounds segment read from global memory, every segment written
// to shared memory (out-of-bounds ones filled). False when it ended the execution (a race).
bool Runtime::land_tensor_bytes(Agent& c) {
  const std::uint32_t site = site_id(c.site);
  for (const tma::Segment& s : c.segments) {
    auto race = s.global >= 0 ? races_.access(c.id, c.src + s.global, s.bytes, false, true, site) : std::nullopt;
    if (!race) race = races_.access(c.id, c.dst + s.smem, s.bytes, true, true, site);
    if (race) {
      end_race(*race);
      return false;
    }
  }
  for (const tma::Segment& s : c.segments) {
    if (s.global >= 0)
      std::memcpy(c.dst + s.smem, c.src + s.global, s.bytes);
    else
      tma::oob_fill(c.tensor, c.dst + s.smem, s.bytes);
  }
  return true;
}

void Runtime::tensor_store(const void* desc, const std::int32_t* coords, const void* smem_src, bool reduce_add) {
  const tma::TensorMap* pm = tma::as_map(desc);
  const std::uint32_t bytes = pm ? tma::box_bytes(*pm) : 0;
  if (!schedule_point(reduce_add ? OpKind::tensor_reduce : OpKind::tensor_store, nullptr, bytes)) return;
  const char* what = reduce_add ? "cp.reduce.async.bulk.tensor .add" : "cp.async.bulk.tensor store";
  const tma::TensorMap& m = tensor_map_operand(what, desc);
  if (reduce_add && !tma::reduce_add_supported(m.dtype))
    perform([&]() -> void {
      throw MisuseError(MisuseKind::operand_range,
                        fmt::format("{}: no .add of type {} (f16, bf16, f32, s32, u32, u64, s64 are modelled)", what,
                                    tma::type_name(m.dtype)));
    });
  Agent& issuer = *current_;
  std::vector<tma::Segment> segments;
  tensor_box(what, m, coords, smem_src, segments);
  record(issuer, nullptr);
  // The read agent reads the whole box from shared memory; its write agent writes the in-bounds
  // segments (spawn_store_write hands them on).
  Agent& c = spawn_copy_agent(issuer, reinterpret_cast<unsigned char*>(m.global), smem_src, bytes,
                              {OpKind::store_read, nullptr, bytes});
  c.segments = std::move(segments);
  c.tensor = m;
  c.reduce = reduce_add;
  if (!reduce_add) join_tensor_issue(c, coords, smem_src);
  add_group_member(issuer, c, GroupKind::bulk_store);
  observe_with([&] {
    StepInfo step{issuer.id, issuer.op};
    step.spawned = c.id;
    return step;
  });
}

// A tensor store's write agent: its in-bounds segments of global memory, written (or added to)
// from the bytes its read staged. False when it ended the execution.
void Runtime::join_tensor_issue(Agent& c, const std::int32_t* coords, const void* smem) {
  const Agent& lane = *current_;
  const std::uint32_t warp_size = std::max<std::uint32_t>(1, shape_.warp_size);
  const std::uint32_t warp = lane.thread / warp_size;
  const std::uint64_t bit = std::uint64_t{1} << (lane.thread % warp_size % 64);
  const tma::TensorMap& m = c.tensor;
  auto same = [&](const TensorStoreIssue& t) {
    return t.cta == lane.cta && t.warp == warp && std::memcmp(&t.map, &m, sizeof m) == 0 && t.smem == smem &&
           t.site.line == lane.site.line && t.site.column == lane.site.column && t.site.file == lane.site.file &&
           std::equal(coords, coords + m.rank, t.coords);
  };
  for (std::size_t i = 0; i < tensor_issues_.size(); ++i) {  // the oldest issue this lane has not made yet
    TensorStoreIssue& t = tensor_issues_[i];
    if (!(t.lanes & bit) && same(t)) {
      t.lanes |= bit;
      c.tensor_issue = static_cast<std::uint32_t>(i + 1);
      c.tensor_repeat = true;
      return;
    }
  }
  TensorStoreIssue& t = tensor_issues_.emplace_back();
  t.cta = lane.cta;
  t.warp = warp;
  copy_site(t.site, lane.site);
  t.map = m;
  t.smem = smem;
  std::copy(coords, coords + m.rank, t.coords);
  t.lanes = bit;
  c.tensor_issue = static_cast<std::uint32_t>(tensor_issues_.size());
}

bool Runtime::land_tensor_write(Agent& c) {
  const std::uint32_t site = site_id(c.site);
  if (c.tensor_issue != 0) {  // one lane's copy of a store its warp may issue from several lanes
    TensorStoreIssue& t = tensor_issues_[c.tensor_issue - 1];
    if (t.written && t.bytes == c.staged) return true;  // the same bytes, written by another lane's copy
    if (!t.written) {
      t.written = true;
      t.bytes = c.staged;
    }
  }
  for (const tma::Segment& s : c.segments) {
    if (s.global < 0) continue;
    // A reduction reads and writes its bytes atomically (PTX: the .add is performed atomically
    // per element); two reductions of one word do not race, a reduction and a plain access do.
    if (auto race =
            races_.access(c.id, c.dst + s.global, s.bytes, true, true, site, MemorySpace::own_shared, c.reduce)) {
      end_race(*race);
      return false;
    }
  }
  for (const tma::Segment& s : c.segments) {
    if (s.global < 0) continue;
    if (c.reduce)
      tma::reduce_add(c.tensor.dtype, c.dst + s.global, c.staged.data() + s.smem, s.bytes);
    else
      std::memcpy(c.dst + s.global, c.staged.data() + s.smem, s.bytes);
  }
  return true;
}

void Runtime::tensor_prefetch(const void* desc, const std::int32_t* coords) {
  if (over_ || !current_) return;
  const tma::TensorMap& m = tensor_map_operand("cp.async.bulk.prefetch.tensor", desc);
  (void)coords;  // any coordinates: out-of-bounds elements are simply not fetched
  (void)m;
}

}  // namespace mbcheck::sim
