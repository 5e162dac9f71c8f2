// Example 49's GEMM (CUTLASS examples/49_hopper_gemm_with_collective_builder) with the
// ping-pong kernel and its TMA epilogue: fp16 A (row-major), B (column-major), C and D
// (column-major), fp32 accumulation, tile 128x128x64, built by CUTLASS's collective builders and
// run through GemmUniversalAdapter, unmodified, at clusters 1x1 and 2x1.
//   gemm_ex49_pingpong check ex49-pingpong-1x1 --m 256 --n 384 --k 128 --sms 2
#include "gemm_configs.hpp"
#include "gemm_protocol.hpp"

int main(int argc, char** argv) {
  using namespace gemm_check;
  using Pingpong = cutlass::gemm::KernelTmaWarpSpecializedPingpong;
  using PingpongEpi = cutlass::epilogue::TmaWarpSpecialized;
  return mbcheck::sim::cli::main(
      argc, argv,
      {gemm_entry<Example49<Pingpong, PingpongEpi, cute::Shape<cute::_1, cute::_1, cute::_1>>>(
           "ex49-pingpong-1x1", "example 49's ping-pong GEMM with the TMA epilogue, cluster 1x1"),
       gemm_entry<Example49<Pingpong, PingpongEpi, cute::Shape<cute::_2, cute::_1, cute::_1>>>(
           "ex49-pingpong-2x1", "example 49's ping-pong GEMM with the TMA epilogue, cluster 2x1")});
}
