// Example 49's cooperative and ping-pong GEMMs (TMA epilogue, beta != 0) at clusters 1x1 and
// 2x1 on the GPU: the kernels tests/cutlass/gemm checks on the host (device/cutlass_gemm.cuh).
#include "device/cutlass_gemm.cuh"

namespace {
using namespace gemm_check;
using Coop = Example49<cutlass::gemm::KernelTmaWarpSpecializedCooperative,
                       cutlass::epilogue::TmaWarpSpecializedCooperative, cute::Shape<cute::_1, cute::_1, cute::_1>>;
using Coop2 = Example49<cutlass::gemm::KernelTmaWarpSpecializedCooperative,
                        cutlass::epilogue::TmaWarpSpecializedCooperative, cute::Shape<cute::_2, cute::_1, cute::_1>>;
using Ping = Example49<cutlass::gemm::KernelTmaWarpSpecializedPingpong, cutlass::epilogue::TmaWarpSpecialized,
                       cute::Shape<cute::_1, cute::_1, cute::_1>>;
using Ping2 = Example49<cutlass::gemm::KernelTmaWarpSpecializedPingpong, cutlass::epilogue::TmaWarpSpecialized,
                        cute::Shape<cute::_2, cute::_1, cute::_1>>;
const Config kConfigs[] = {{"ex49-cooperative-1x1", run_gemm<Coop>},
                           {"ex49-cooperative-2x1", run_gemm<Coop2>},
                           {"ex49-pingpong-1x1", run_gemm<Ping>},
                           {"ex49-pingpong-2x1", run_gemm<Ping2>}};
}  // namespace

int main(int argc, char** argv) { return gemm_main(argc, argv, kConfigs, 4); }
