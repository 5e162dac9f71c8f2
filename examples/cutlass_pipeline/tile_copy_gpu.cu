// tile_copy.cuh's kernel on the GPU (sm_90a), from the same source mbcheck checks on the host:
// the output must equal the input bit for bit. Built by device/run-gpu.sh with CUTLASS's
// include directory (MBCHECK_CUTLASS_DIR, default ../shared/third_party/cutlass).
#include <cstdio>

#include "tile_copy.cuh"

int main() {
  int failures = 0;
  for (int ctas : {1, 2, 4}) {
    for (int tiles : {1, 3, 8, 64}) {
      tile_copy::TileCopy copy;
      copy.ctas = ctas;
      copy.tiles_per_cta = tiles;
      cudaError_t e = copy.launch();
      if (e == cudaSuccess) e = cudaDeviceSynchronize();
      const auto diff = e == cudaSuccess ? copy.verify() : std::optional<std::string>(cudaGetErrorString(e));
      std::printf("tile-copy ctas %d tiles %d: %s\n", ctas, tiles, diff ? diff->c_str() : "bit-exact");
      failures += diff ? 1 : 0;
      cudaFree(copy.in);
      cudaFree(copy.out);
    }
  }
  std::printf("%s\n", failures == 0 ? "PASS" : "FAIL");
  return failures == 0 ? 0 : 1;
}
