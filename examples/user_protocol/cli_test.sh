#!/usr/bin/env bash
# The handoff protocol's own command line: every flag of mbcheck, through the registration API.
set -u
CLI=${1:?usage: cli_test.sh path/to/handoff_cli}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
expect() {  # expect <exit code> <text in the output> -- <args...>
  local code=$1 text=$2
  shift 3
  "$CLI" "$@" >"$tmp/out" 2>&1
  local got=$?
  if [ "$got" -ne "$code" ] || ! grep -qF -- "$text" "$tmp/out"; then
    echo "FAIL: handoff_cli $* -> exit $got (want $code), output lacks: $text"; sed 's/^/  | /' "$tmp/out" | head -10
    failures=$((failures + 1))
  else
    echo "ok:   handoff_cli $* -> $got"
  fi
}
expect 0 "handoff" -- list
expect 0 "verified: " -- check handoff --rounds 3 --consumers 2
expect 1 "bug: deadlock" -- check handoff --mutation expect-extra-consumer
# Every step of the counterexample names this project's own source line.
expect 1 "handoff.hpp:" -- check handoff --mutation expect-extra-consumer
expect 2 "--rounds 0: must be a whole number" -- check handoff --rounds 0
expect 1 "bug: deadlock" -- check handoff --mutation expect-extra-consumer --html "$tmp/cex.html" --trace "$tmp/cex.json"
grep -q "<html" "$tmp/cex.html" && echo "ok:   --html wrote the timeline" || { echo "FAIL: --html"; failures=$((failures + 1)); }
grep -q '"traceEvents"' "$tmp/cex.json" && echo "ok:   --trace wrote trace events" || { echo "FAIL: --trace"; failures=$((failures + 1)); }
expect 1 "bug: deadlock" -- check handoff --mutation expect-extra-consumer --sarif "$tmp/cex.sarif"
grep -q '"version": "2.1.0"' "$tmp/cex.sarif" && grep -q 'handoff.hpp' "$tmp/cex.sarif" &&
  echo "ok:   --sarif names handoff.hpp" || { echo "FAIL: --sarif"; failures=$((failures + 1)); }
expect 1 '"verdict": "bug"' -- check handoff --mutation expect-extra-consumer --json
token=$(sed -n 's/.*"replay": "\(mb[12]:[^"]*\)".*/\1/p' "$tmp/out")
expect 1 "verdict: bug: deadlock" -- replay "$token"
expect 1 "bug: deadlock" -- check handoff --mutation expect-extra-consumer --strategy pct --runs 50
expect 3 "incomplete: no bug in 20 random runs" -- check handoff --strategy random --runs 20
for i in 1 2; do "$CLI" check handoff --rounds 4 --consumers 3 --shard $i/2 --shard-dir "$tmp/shards" --json >"$tmp/s$i.json" & done
wait
expect 0 "verified: " -- merge "$tmp/s1.json" "$tmp/s2.json"
[ "$failures" -eq 0 ] && echo "all handoff CLI checks passed" || { echo "$failures handoff CLI check(s) failed"; exit 1; }
