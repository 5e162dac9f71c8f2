#!/usr/bin/env bash
# The main job: set up, build, and check the bundled EpiLoadPipeline residual-add protocol
# (1 TMA load warp + 4 store warps of 32 threads): every distinct schedule of the full-size
# shape with 2 and with 4 stages, then one seeded random execution with D checked.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
build/release/sim/mbcheck check epi-load --stages 2 --tiles 8 "$@"
build/release/sim/mbcheck check epi-load --stages 4 --tiles 16 "$@"
exec build/release/sim/mbcheck run epi-load --stages 2 --tiles 8 --seed 1
