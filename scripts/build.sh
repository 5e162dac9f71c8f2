#!/usr/bin/env bash
# Installs missing dependencies, then configures and builds the release preset. The CUDA
# toolkit is used when present (the spec headers are then also compiled for sm_90a).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-deps.sh
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)"
