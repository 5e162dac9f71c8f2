#!/usr/bin/env bash
# The input parsers under randomly damaged input (replay tokens, shard results for merge, wave
# results in shard directories): N inputs per parser (default 10,000,000; the suite runs
# 100,000). Exit 1 if any input crashes a parser or is mis-parsed.
#   scripts/soak-parsers.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh >/dev/null
time MBCHECK_PARSER_INPUTS="${1:-10000000}" build/release/tests/mbcheck_tests "[fuzz][merge],[fuzz][shard],[fuzz][token]"
