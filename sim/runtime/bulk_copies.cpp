// Bulk copies (cp.async.bulk, global -> shared, completing tx bytes on a barrier as they land)
// and bulk stores (TMA stores, shared -> global; their commit/wait_group.read groups are in
// async_groups.cpp).
#include <fmt/format.h>

#include <stdexcept>

#include "sim/runtime/perform.hpp"

namespace mbcheck::sim {

// ---------------------------------------------------------------------------------------
// bulk copies

void Runtime::land_copy_piece(Agent& c) {
  const auto n = static_cast<std::uint32_t>(c.op.arg);
  if (shape_.cluster_size() > 1) {
    // A multicast (or a copy into a peer): the landing uses the destination CTA's barrier.
    const std::int64_t cta = cta_of(c.dst, c.cta);
    if (cta >= 0 && static_cast<std::uint32_t>(cta) != c.cta) {
      if (!peer_init_visible(c.id, *c.op.bar)) {
        observe(c.id, c.op, c.op.bar->phase, false);
        end(Verdict::misuse,
            fmt::format("{}: lands in cta {} and completes {} before its init is visible to the cluster: the "
                        "initialising thread needs fence.mbarrier_init.release.cluster, then a cluster barrier, "
                        "before a peer's multicast",
                        describe_agent(c.id), cta, barrier_name(*c.op.bar)),
            MisuseKind::unfenced_init);
        outcome_.culprits = {c.id};
        return;
      }
      if (!peer_use(c, static_cast<std::uint32_t>(cta), "multicast landing on", c.op.bar, nullptr)) return;
    }
  }
  if (!c.segments.empty()) {  // a tensor load: its box, in one landing (tensor_copies.cpp)
    if (!land_tensor_bytes(c)) return;
  } else {
    auto race = races_.access(c.id, c.src + c.copied, n, false, true, site_id(c.site));
    if (!race) race = races_.access(c.id, c.dst + c.copied, n, true, true, site_id(c.site));
    if (race) {
      end_race(*race);
      return;
    }
    std::memcpy(c.dst + c.copied, c.src + c.copied, n);
  }
  try {
    apply_barrier_op(c, c.op);  // the landing's complete_tx (ops.def: release_own)
  } catch (const MisuseError& e) {
    observe(c.id, c.op, c.op.bar->phase, false);
    end(Verdict::misuse,
        fmt::format("{}: complete_tx {} {} B: {}", describe_agent(c.id), barrier_name(*c.op.bar), n, e.what()), e.kind);
    outcome_.culprits = {c.id};
    return;
  }
  c.copied += n;
  if (c.copied == c.total) {
    c.state = Agent::State::finished;
    races_.retire(c.id);
    return;
  }
  c.op.arg = std::min(c.piece, c.total - c.copied);
  add_enabled(c);
}

void Runtime::check_bulk_copy(const char* what, const void* dst, const void* src, std::uint32_t bytes) {
  perform([&] {
    auto misaligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 != 0; };
    if (bytes == 0 || bytes % 16 != 0 || misaligned(dst) || misaligned(src))
      throw MisuseError(
          MisuseKind::tma_misaligned,
          fmt::format("{} of {} B: size and both addresses must be non-zero multiples of 16", what, bytes));
  });
}

// The state spaces of a bulk copy's operands (PTX ISA 9.1, 9.7.9.25.4.1: the .dst and .src
// qualifiers name them; a generic address outside the named window is undefined): global
// memory, this CTA's shared memory (.shared::cta), or any CTA's of its cluster (.shared::cluster,
// the destination and the mbarrier of a copy into shared memory).
void Runtime::check_spaces(const char* what, const void* dst, Space dst_space, const void* src, Space src_space,
                           const MbarrierState* bar) {
  perform([&] {
    const Agent& me = *current_;
    const std::uint32_t size = shape_.cluster_size();
    auto check = [&](const void* p, Space want, const char* role) {
      const std::int64_t cta = cta_of(p, me.cta);
      const bool ok = want == Space::global       ? cta < 0
                      : want == Space::own_shared ? cta == static_cast<std::int64_t>(me.cta)
                                                  : cta >= 0 && static_cast<std::uint32_t>(cta) / size == me.cta / size;
      if (!ok)
        throw MisuseError(MisuseKind::state_space,
                          fmt::format("{}: its {} {} is {}, not {}", what, role, describe_address(p),
                                      cta < 0         ? std::string("global memory")
                                      : cta == me.cta ? std::string("this CTA's shared memory")
                                                      : fmt::format("cta {}'s shared memory", cta),
                                      want == Space::global       ? "global memory"
                                      : want == Space::own_shared ? "this CTA's shared memory (.shared::cta)"
                                                                  : "shared memory of its cluster (.shared::cluster)"));
    };
    check(dst, dst_space, "destination");
    check(src, src_space, "source");
    if (bar) check(bar, Space::cluster_shared, "mbarrier");
  });
}

Agent& Runtime::spawn_copy_agent(Agent& issuer, void* dst, const void* src, std::uint32_t bytes, const Op& first,
                                 const Agent* after) {
  Agent& c = new_agent();
  c.kind = Agent::Kind::copy;
  c.cta = issuer.cta;
  c.thread = issuer.thread;
  c.thread_agent = issuer.id;
  c.copy_seq = copies_++;
  c.dst = static_cast<unsigned char*>(dst);
  c.src = static_cast<const unsigned char*>(src);
  c.total = bytes;
  copy_op(c.op, first);
  c.site = issuer.site;
  races_.add_agent(c.id, after ? after->id : issuer.id);  // the copy starts after everything its issuer did
  add_enabled(c);
  return c;
}

std::uint32_t Runtime::copy_piece_bytes(std::uint32_t bytes) const {
  const std::uint32_t pieces = std::max<std::uint32_t>(1, shape_.copy_pieces);
  return std::max<std::uint32_t>(16, ((bytes + pieces - 1) / pieces + 15) / 16 * 16);
}

void Runtime::bulk_copy(void* smem_dst, const void* gmem_src, std::uint32_t bytes, MbarrierState& bar) {
  info(bar);
  if (!schedule_point(OpKind::bulk_copy, &bar, bytes)) return;
  check_bulk_copy("cp.async.bulk", smem_dst, gmem_src, bytes);
  check_spaces("cp.async.bulk.shared::cluster.global", smem_dst, Space::cluster_shared, gmem_src, Space::global, &bar);
  Agent& issuer = *current_;
  record(issuer, &bar);
  const std::uint32_t piece = copy_piece_bytes(bytes);
  Agent& c = spawn_copy_agent(issuer, smem_dst, gmem_src, bytes, {OpKind::copy_land, &bar, std::min(piece, bytes)});
  c.piece = piece;
  observe_with([&] {
    StepInfo step{issuer.id, issuer.op, bar.phase};
    step.spawned = c.id;
    return step;
  });
}

void Runtime::bulk_store(void* gmem_dst, const void* smem_src, std::uint32_t bytes) {
  if (!schedule_point(OpKind::bulk_store, nullptr, bytes)) return;
  check_bulk_copy("cp.async.bulk store", gmem_dst, smem_src, bytes);
  check_spaces("cp.async.bulk.global.shared::cta", gmem_dst, Space::global, smem_src, Space::own_shared, nullptr);
  Agent& issuer = *current_;
  record(issuer, nullptr);
  Agent& c = spawn_copy_agent(issuer, gmem_dst, smem_src, bytes, {OpKind::store_read, nullptr, bytes});
  add_group_member(issuer, c, GroupKind::bulk_store);
  observe_with([&] {
    StepInfo step{issuer.id, issuer.op};
    step.spawned = c.id;
    return step;
  });
}

void Runtime::fence_proxy_async(FenceSpaces spaces) {
  if (!over_ && current_) races_.fence_async(current_->id, spaces);
}

}  // namespace mbcheck::sim
