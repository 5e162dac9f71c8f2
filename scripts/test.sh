#!/usr/bin/env bash
# Set up, build, and run the whole test suite (the gpu-labelled tests need a GPU and are
# run by device/run-gpu.sh instead).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
ctest --preset release -j "$(nproc)"
