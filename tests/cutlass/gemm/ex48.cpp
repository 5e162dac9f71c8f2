// Example 48's GEMM (CUTLASS examples/48_hopper_warp_specialized_gemm): fp32 operands through
// tf32 wgmma, A row-major, B, C and D column-major, tile 128x128x32, the collective builders'
// automatic kernel and epilogue schedules, run through GemmUniversalAdapter, unmodified, at
// clusters 1x1 and 2x1 (the example's own is 4x2).
//   gemm_ex48 check ex48-1x1 --m 256 --n 384 --k 128 --sms 2
#include "gemm_configs.hpp"
#include "gemm_protocol.hpp"

int main(int argc, char** argv) {
  using namespace gemm_check;
  return mbcheck::sim::cli::main(
      argc, argv,
      {gemm_entry<Example48<cute::Shape<cute::_1, cute::_1, cute::_1>>>("ex48-1x1", "example 48's GEMM, cluster 1x1"),
       gemm_entry<Example48<cute::Shape<cute::_2, cute::_1, cute::_1>>>("ex48-2x1", "example 48's GEMM, cluster 2x1")});
}
