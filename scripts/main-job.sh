#!/usr/bin/env bash
# The main job: set up, build, and check the bundled EpiLoadPipeline residual-add protocol
# (1 TMA load warp + 4 store warps of 32 threads, 2 stages, 8 tiles).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
exec build/release/sim/mbcheck run epi-load --stages 2 --tiles 8 --seed 1 "$@"
