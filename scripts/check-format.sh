#!/usr/bin/env bash
# Fails (exit 1, naming the files) when a tracked C++/CUDA source differs from what
# clang-format makes of it with the repository's .clang-format. Fix: clang-format -i FILE.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "check-format: clang-format is not installed" >&2; exit 2; }
bad=0
while IFS= read -r f; do
  if ! clang-format --style=file "$f" | cmp -s - "$f"; then
    echo "check-format: $f is not formatted (clang-format -i $f)"
    bad=1
  fi
done < <(git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh')
[ $bad -eq 0 ] && echo "check-format: $(git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh' | wc -l) files formatted"
exit $bad
