// cute/atom/mma_traits_sm90_gmma.hpp on the host: CUTLASS's own header, and every dense GMMA
// atom (SM90::GMMA::MMA_64xNxK_*_SS / _RS, f16 / bf16 / tf32 / e4m3 / e5m2 inputs, f32 or f16
// accumulators) performed by the host's wgmma.mma_async (sim/host_matrix.hpp) instead of its
// inline PTX. cute calls an atom through mma_unpack(MMA_Traits<Op> const&, D, A, B, C)
// (unqualified: found by argument-dependent lookup in SM90::GMMA); the overload below has
// CUTLASS's template head and parameters plus a requires clause, so for the atoms it accepts
// it is the more constrained candidate and wins partial ordering (C++20 [temp.func.order]).
// Everything the instruction needs comes from the traits and the atom's own template
// arguments: the shape, the value types, the majors (tnspA / tnspB), imm-scale-a/b and
// traits.accumulate_ (scale-d).
#pragma once

#include_next <cute/atom/mma_traits_sm90_gmma.hpp>

#include <cstdint>
#include <type_traits>

#include "sim/host_matrix.hpp"

namespace mbcheck::cutlass_host::gmma {

namespace G = ::cute::SM90::GMMA;
using sim::matrix::ElementType;

template <class T>
inline constexpr int kElementType = -1;  // not an input type the host performs
template <>
inline constexpr int kElementType<::cute::half_t> = static_cast<int>(ElementType::f16);
template <>
inline constexpr int kElementType<::cute::bfloat16_t> = static_cast<int>(ElementType::bf16);
template <>
inline constexpr int kElementType<::cute::tfloat32_t> = static_cast<int>(ElementType::tf32);
template <>
inline constexpr int kElementType<::cute::float_e4m3_t> = static_cast<int>(ElementType::e4m3);
template <>
inline constexpr int kElementType<::cute::float_e5m2_t> = static_cast<int>(ElementType::e5m2);

// An atom's majors and input scales, from its template arguments: <tnspA, tnspB, scaleA,
// scaleB> (16-bit inputs), or <scaleA, scaleB> for the K-major-only _TN atoms (tf32, fp8).
template <class Op>
struct AtomArguments {
  static constexpr bool known = false;
};
template <template <G::Major, G::Major, G::ScaleIn, G::ScaleIn> class Op, G::Major A, G::Major B, G::ScaleIn SA,
          G::ScaleIn SB>
struct AtomArguments<Op<A, B, SA, SB>> {
  static constexpr bool known = true;
  static constexpr G::Major a_major = A, b_major = B;
  static constexpr G::ScaleIn scale_a = SA, scale_b = SB;
};
template <template <G::ScaleIn, G::ScaleIn> class Op, G::ScaleIn SA, G::ScaleIn SB>
struct AtomArguments<Op<SA, SB>> {
  static constexpr bool known = true;
  static constexpr G::Major a_major = G::Major::K, b_major = G::Major::K;
  static constexpr G::ScaleIn scale_a = SA, scale_b = SB;
};

template <class Op>
concept GmmaTraits = requires {
  typename ::cute::MMA_Traits<Op>::ValTypeA;
  typename ::cute::MMA_Traits<Op>::ValTypeB;
  typename ::cute::MMA_Traits<Op>::ValTypeC;
  typename ::cute::MMA_Traits<Op>::Shape_MNK;
  typename Op::ARegisters;
};
template <class Traits>
inline constexpr bool kTypesPerformed = kElementType<typename Traits::ValTypeA> >= 0 &&
                                        kElementType<typename Traits::ValTypeB> >= 0 &&
                                        (std::is_same_v<typename Traits::ValTypeC, float> ||
                                         std::is_same_v<typename Traits::ValTypeC, ::cute::half_t>);
// The atoms the host performs (the conjunction stops at the first unmet part).
template <class Op>
concept PerformedAtom = GmmaTraits<Op> && AtomArguments<Op>::known && kTypesPerformed<::cute::MMA_Traits<Op>>;

template <class Op>
sim::matrix::WgmmaShape shape_of(G::ScaleOut accumulate) {
  using Traits = ::cute::MMA_Traits<Op>;
  using Args = AtomArguments<Op>;
  sim::matrix::WgmmaShape s;
  s.n = static_cast<std::uint32_t>(::cute::size<1>(typename Traits::Shape_MNK{}));
  s.a_type = static_cast<ElementType>(kElementType<typename Traits::ValTypeA>);
  s.b_type = static_cast<ElementType>(kElementType<typename Traits::ValTypeB>);
  s.a_major = Args::a_major == G::Major::MN ? sim::matrix::Major::mn : sim::matrix::Major::k;
  s.b_major = Args::b_major == G::Major::MN ? sim::matrix::Major::mn : sim::matrix::Major::k;
  s.negate_a = Args::scale_a == G::ScaleIn::Neg;
  s.negate_b = Args::scale_b == G::ScaleIn::Neg;
  s.accumulate = accumulate == G::ScaleOut::One;
  return s;
}

}  // namespace mbcheck::cutlass_host::gmma

namespace cute::SM90::GMMA {

template <class MMA_Op, class... MMA_Args, class TD, class DLayout, class TA, class ALayout, class TB, class BLayout,
          class TC, class CLayout>
requires ::mbcheck::cutlass_host::gmma::PerformedAtom<MMA_Op>
void mma_unpack(MMA_Traits<MMA_Op, MMA_Args...> const& traits, Tensor<TD, DLayout>& D, Tensor<TA, ALayout> const& A,
                Tensor<TB, BLayout> const& B, Tensor<TC, CLayout> const&) {
  using Traits = MMA_Traits<MMA_Op, MMA_Args...>;
  using ValTypeC = typename Traits::ValTypeC;
  constexpr bool a_in_registers = !std::is_same_v<std::remove_extent_t<typename MMA_Op::ARegisters>, uint64_t>;
  const ::mbcheck::sim::matrix::WgmmaShape s = ::mbcheck::cutlass_host::gmma::shape_of<MMA_Op>(traits.accumulate_);
  std::uint64_t desc_a = 0;
  std::uint32_t a_registers[4] = {};
  if constexpr (a_in_registers) {
    Tensor rA = recast<uint32_t>(A);
    static_assert(decltype(size(rA))::value == 4, "wgmma's A in registers is four 32-bit registers");
    for (int i = 0; i < 4; ++i) a_registers[i] = rA(i);
  } else {
    desc_a = recast<uint64_t>(A)(0);
  }
  const std::uint64_t desc_b = recast<uint64_t>(B)(0);
  // D: the thread's N / 2 accumulators (C is D: CUTLASS passes the same fragment).
  constexpr int kValues = decltype(size(D))::value;
  static_assert(kValues * 2 == decltype(size<1>(typename Traits::Shape_MNK{}))::value, "the m64nN D fragment");
  float acc[kValues];
  for (int i = 0; i < kValues; ++i) acc[i] = static_cast<float>(D(i));
  ::mbcheck::sim::host_matrix::wgmma_mma_async(s, desc_a, a_in_registers ? a_registers : nullptr, desc_b, acc);
  for (int i = 0; i < kValues; ++i) D(i) = static_cast<ValTypeC>(acc[i]);
}

}  // namespace cute::SM90::GMMA
