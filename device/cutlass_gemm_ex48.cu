// Example 48's GEMM (tf32, automatic schedules) at clusters 1x1 and 2x1 on the GPU: the kernel
// tests/cutlass/gemm checks on the host (device/cutlass_gemm.cuh).
#include "device/cutlass_gemm.cuh"

namespace {
using namespace gemm_check;
const Config kConfigs[] = {{"ex48-1x1", run_gemm<Example48<cute::Shape<cute::_1, cute::_1, cute::_1>>>},
                           {"ex48-2x1", run_gemm<Example48<cute::Shape<cute::_2, cute::_1, cute::_1>>>}};
}  // namespace

int main(int argc, char** argv) { return gemm_main(argc, argv, kConfigs, 2); }
