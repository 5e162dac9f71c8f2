// The warp-level matrix instructions performed: wgmma.mma_async from its shared-memory
// descriptors (and A in registers), ldmatrix and stmatrix. Where each element lives is
// sim/runtime/matrix_layouts.hpp; here the bytes move and the race detector sees them.
//
// wgmma.mma_async: the warp group converges (collectives.cpp); the first of its threads to
// resume after the round reads both operands into the round's MatrixExchange, the group's
// first thread issues one read agent per shared-memory operand over its exact footprint
// (retired by wgmma.wait_group, async_groups.cpp), and every thread computes its own
// accumulator elements from the staged operands. Reading at the issue is exact whenever no
// race is reported: a write that lands between the issue and the read agents' landing is
// ordered neither before the round (which the reads acquire) nor after the retiring
// wait_group, so the read agent reports it; a write before the issue that is not ordered
// before the round is reported the same way. The staging happens once per round, before
// any thread of the group can leave it, so a lane that resumes late still computes from
// what the operands held at the issue (another warp may have retired the group and
// released the stage meanwhile, which the GPU allows).
//
// ldmatrix / stmatrix: a warp collective that orders no memory (as shfl.sync). Each lane
// whose address is used (lanes 0 .. 8 * count - 1) accesses its own 16-byte row: ldmatrix
// reads it before arriving, stmatrix writes it after the round from the lanes' registers;
// the race detector sees each row as that lane's load or store.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "sim/runtime/perform.hpp"

namespace mbcheck::sim {

using runtime_records::collective_key;
using runtime_records::CollectiveKind;
using runtime_records::kWarpGroupIndex;
using runtime_records::MatrixExchange;

namespace {

bool same_k_family(matrix::ElementType a, matrix::ElementType b) {
  using matrix::ElementType;
  const auto fp8 = [](ElementType t) { return t == ElementType::e4m3 || t == ElementType::e5m2; };
  return a == b || (fp8(a) && fp8(b));
}

// One operand of `rows` x K elements into `out`, row-major, as values (times `sign`).
void stage_operand(const unsigned char* smem, const matrix::MatrixDescriptor& d, matrix::Major major,
                   std::uint32_t rows, matrix::ElementType type, float sign, std::vector<float>& out) {
  const std::uint32_t e = matrix::element_bytes(type), k_elems = 32 / e;
  out.resize(rows * k_elems);
  for (std::uint32_t mn = 0; mn < rows; ++mn)
    for (std::uint32_t k = 0; k < k_elems; ++k)
      out[mn * k_elems + k] = sign * matrix::element_value(type, smem + matrix::element_address(d, major, mn, k, e));
}

}  // namespace

void Runtime::wgmma_mma(const matrix::WgmmaShape& s, std::uint64_t desc_a, const std::uint32_t* a_registers,
                        std::uint64_t desc_b, float* d) {
  using namespace matrix;
  if (over_ || !current_) return;
  const std::uint32_t ea = element_bytes(s.a_type), eb = element_bytes(s.b_type);
  const auto shape_name = [&] {
    return fmt::format("wgmma.mma_async.m64n{}k{}.{}.{}", s.n, s.k(), element_name(s.a_type), element_name(s.b_type));
  };
  if (s.n == 0 || s.n > 256 || s.n % 8 != 0 || !same_k_family(s.a_type, s.b_type))
    collective_misuse(fmt::format("{}: no such shape (N is 8..256 in steps of 8; A and B of one K)", shape_name()),
                      MisuseKind::operand_range);
  if ((s.a_major == Major::mn && (ea != 2 || a_registers)) || (s.b_major == Major::mn && eb != 2))
    collective_misuse(
        fmt::format("{}: only .f16 / .bf16 operands in shared memory may be MN-major (imm-trans)", shape_name()),
        MisuseKind::operand_range);
  const MatrixDescriptor da = MatrixDescriptor::decode(desc_a), db = MatrixDescriptor::decode(desc_b);
  ByteRanges a_ranges, b_ranges;
  if (!a_registers) a_ranges = footprint(da, s.a_major, 64, ea);
  b_ranges = footprint(db, s.b_major, s.n, eb);
  unsigned char* smem = shared_memory();
  for (const ByteRanges* ranges : {&a_ranges, &b_ranges})
    if (!ranges->empty() && ranges->back().first + ranges->back().second > shape_.smem_bytes)
      collective_misuse(fmt::format("{}: its descriptor reads up to shared-memory address {:#x}, past the CTA's {} B",
                                    shape_name(), ranges->back().first + ranges->back().second, shape_.smem_bytes),
                        MisuseKind::operand_range);
  // The read agents' ranges are offsets from each operand's first byte.
  const auto relative = [](ByteRanges& ranges, std::uint32_t& bytes) -> std::uint32_t {
    const std::uint32_t first = ranges.front().first;
    bytes = 0;
    for (auto& [offset, n] : ranges) {
      offset -= first;
      bytes += n;
    }
    return first;
  };
  std::uint32_t a_bytes = 0, b_bytes = 0;
  unsigned char* a = a_ranges.empty() ? nullptr : smem + relative(a_ranges, a_bytes);
  unsigned char* b = smem + relative(b_ranges, b_bytes);
  std::int64_t round = 0;
  if (!warpgroup_step("wgmma.mma_async", WgmmaOperands{a, a_bytes, b, b_bytes, s.n}, true, &round, a_registers)) return;
  const std::uint32_t t = current_->thread % 128;
  Rendezvous& r =
      ctas_[current_->cta].collectives[collective_key(CollectiveKind::wgmma, kWarpGroupIndex | current_->thread / 128)];
  if (!r.matrix) r.matrix = std::make_shared<MatrixExchange>();
  MatrixExchange& x = *r.matrix;
  const std::uint32_t k_elems = s.k();
  if (x.staged_round != round) {  // decoded once for the group, negations applied
    const float sign_a = s.negate_a ? -1.0f : 1.0f, sign_b = s.negate_b ? -1.0f : 1.0f;
    if (a_registers) {
      unsigned char bytes[64 * 32];
      for (std::uint32_t lane = 0; lane < 128; ++lane)
        for (std::uint32_t byte = 0; byte < 16; ++byte) {
          const FragmentPlace p = a_register_element(lane, byte, ea);
          bytes[p.row * 32 + p.k * ea + p.byte] =
              static_cast<unsigned char>(x.registers[round & 1][lane][byte / 4] >> (8 * (byte % 4)));
        }
      x.a.resize(64 * k_elems);
      for (std::uint32_t i = 0; i < 64 * k_elems; ++i) x.a[i] = sign_a * element_value(s.a_type, &bytes[i * ea]);
    } else {
      stage_operand(smem, da, s.a_major, 64, s.a_type, sign_a, x.a);
    }
    stage_operand(smem, db, s.b_major, s.n, s.b_type, sign_b, x.b);
    x.staged_round = round;
  }
  if (group_owner(*current_, GroupKind::wgmma) == current_->id) {
    wgmma_issue(a, a_bytes, b, b_bytes, &r, round, a ? &a_ranges : nullptr, &b_ranges);
    if (over_) return;
  }
  for (std::uint32_t v = 0; v < s.n / 2; ++v) {
    const auto [row, col] = accumulator_element(t, v);
    const float* a_row = &x.a[row * k_elems];
    const float* b_row = &x.b[col * k_elems];
    double sum = 0;
    for (std::uint32_t k = 0; k < k_elems; ++k) sum += static_cast<double>(a_row[k]) * static_cast<double>(b_row[k]);
    d[v] = static_cast<float>(sum + (s.accumulate ? static_cast<double>(d[v]) : 0.0));
  }
}

void Runtime::ldmatrix(const void* row, std::uint32_t count, bool trans, std::uint32_t* out, const CallSite& site) {
  if (over_ || !current_) return;
  Agent& me = *current_;
  if (shape_.warp_size != 32 || (count != 1 && count != 2 && count != 4))
    collective_misuse(fmt::format("ldmatrix.x{}: a warp of 32 lanes loads 1, 2 or 4 matrices", count),
                      MisuseKind::operand_range);
  const std::uint32_t lane = me.thread % 32;
  Rendezvous& r = ctas_[me.cta].collectives[collective_key(CollectiveKind::warp_matrix, me.thread / 32, ~0u)];
  if (!r.matrix) r.matrix = std::make_shared<MatrixExchange>();
  const std::int64_t round = r.bar.is_live() ? r.bar.phase : 0;
  if (lane < 8 * count) {
    if (cta_of(row, me.cta) != static_cast<std::int64_t>(me.cta) || reinterpret_cast<std::uintptr_t>(row) % 16 != 0)
      collective_misuse(fmt::format("ldmatrix: lane {}'s row address {} is not a 16-byte aligned address of its "
                                    "CTA's shared memory",
                                    lane, row),
                        MisuseKind::operand_range);
    data_access(row, 16, false, site);
    if (over_) return;
    std::memcpy(r.matrix->rows[round & 1][lane], row, 16);
  }
  converge_warp(~0u, WarpInstruction::matrix);
  if (over_) return;
  for (std::uint32_t m = 0; m < count; ++m) {
    std::uint32_t value = 0;
    for (std::uint32_t h = 0; h < 2; ++h) {
      const auto [rr, cc] = matrix::ldmatrix_element(lane, h, trans);
      std::uint16_t e;
      std::memcpy(&e, &r.matrix->rows[round & 1][8 * m + rr][2 * cc], 2);
      value |= static_cast<std::uint32_t>(e) << (16 * h);
    }
    out[m] = value;
  }
}

void Runtime::stmatrix(void* row, std::uint32_t count, bool trans, const std::uint32_t* in, const CallSite& site) {
  if (over_ || !current_) return;
  Agent& me = *current_;
  if (shape_.warp_size != 32 || (count != 1 && count != 2 && count != 4))
    collective_misuse(fmt::format("stmatrix.x{}: a warp of 32 lanes stores 1, 2 or 4 matrices", count),
                      MisuseKind::operand_range);
  const std::uint32_t lane = me.thread % 32;
  Rendezvous& r = ctas_[me.cta].collectives[collective_key(CollectiveKind::warp_matrix, me.thread / 32, ~0u)];
  if (!r.matrix) r.matrix = std::make_shared<MatrixExchange>();
  const std::int64_t round = r.bar.is_live() ? r.bar.phase : 0;
  std::copy_n(in, count, r.matrix->registers[round & 1][lane]);
  converge_warp(~0u, WarpInstruction::matrix);
  if (over_ || lane >= 8 * count) return;
  if (cta_of(row, me.cta) != static_cast<std::int64_t>(me.cta) || reinterpret_cast<std::uintptr_t>(row) % 16 != 0)
    collective_misuse(fmt::format("stmatrix: lane {}'s row address {} is not a 16-byte aligned address of its "
                                  "CTA's shared memory",
                                  lane, row),
                      MisuseKind::operand_range);
  // Row rr of matrix m: element (rr, c) is half h of register m of the lane whose fragment
  // holds it (matrix::ldmatrix_element read backwards).
  const std::uint32_t m = lane / 8, rr = lane % 8;
  unsigned char bytes[16];
  for (std::uint32_t c = 0; c < 8; ++c) {
    const std::uint32_t src = trans ? 4 * c + rr / 2 : 4 * rr + c / 2, h = trans ? rr % 2 : c % 2;
    const auto e = static_cast<std::uint16_t>(r.matrix->registers[round & 1][src][m] >> (16 * h));
    std::memcpy(&bytes[2 * c], &e, 2);
  }
  data_access(row, 16, true, site);
  if (over_) return;
  std::memcpy(row, bytes, 16);
}

}  // namespace mbcheck::sim
