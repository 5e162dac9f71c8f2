#!/usr/bin/env bash
# The differential soak: DPOR against the reference enumerator on N generated programs
# (default 1,000,000), from seed S (default 1). Prints the coverage histogram, the totals and
# every disagreement shrunk to a minimal program; exit 1 on any disagreement.
#   scripts/soak-differential.sh [N] [S]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh >/dev/null
exec build/release/tests/differential/mbcheck_soak --programs "${1:-1000000}" --seed "${2:-1}"
