#!/usr/bin/env bash
# The mbcheck command line as a user meets it: verdicts, exit codes (0 no bug, 1 bug,
# 2 usage error), one clear line on stderr for bad input, and replay tokens that reproduce.
set -u
MBCHECK=${1:?usage: cli_test.sh path/to/mbcheck path/to/mbcheck_cli_fixture}
# a user's command line over one protocol that loops or crashes where told to (cli_fixture.cpp)
FIXTURE=${2:?usage: cli_test.sh path/to/mbcheck path/to/mbcheck_cli_fixture}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

# expect <exit code> <pattern in stdout+stderr> -- <args...>
expect() {
  local code=$1 pattern=$2
  shift 3
  "$MBCHECK" "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  if [ "$got" -ne "$code" ] || ! grep -qF -- "$pattern" "$tmp/out" "$tmp/err"; then
    echo "FAIL: mbcheck $* -> exit $got (want $code), output lacks: $pattern"
    sed 's/^/  | /' "$tmp/out" "$tmp/err" | head -20
    failures=$((failures + 1))
  else
    echo "ok:   mbcheck $* -> $got"
  fi
}
# usage errors: exactly one line on stderr, nothing on stdout
expect_usage() {
  expect 2 "$1" -- "${@:2}"
  if [ "$(wc -l <"$tmp/err")" -ne 1 ] || [ -s "$tmp/out" ]; then
    echo "FAIL: mbcheck ${*:2}: a usage error must be one line on stderr and nothing on stdout"
    failures=$((failures + 1))
  fi
}

# --version is a request, not an error: the version on stdout, nothing on stderr, exit 0.
"$MBCHECK" --version >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" = 0 ] && grep -qx "mbcheck [0-9][0-9.]*" "$tmp/out" && [ ! -s "$tmp/err" ]; then
  echo "ok:   --version: $(cat "$tmp/out")"
else
  echo "FAIL: --version -> exit $rc, stdout '$(cat "$tmp/out")', stderr '$(cat "$tmp/err")'"; failures=$((failures + 1))
fi
expect 0 "epi-load" -- list
expect 0 "consumer-count-plus-one" -- list
expect 0 "verdict: ok: D matches the CPU reference bit for bit (8192 elements, 8 tiles)" -- run epi-load --seed 7
expect 0 "verdict: ok" -- run epi-load --stages 4 --tiles 8 --seed 3
expect 1 "verdict: bug: deadlock" -- run epi-load --mutation consumer-count-plus-one --seed 2
expect 1 "pending 1/129" -- run epi-load --mutation consumer-count-plus-one --seed 2
# Past the step limit an execution proves nothing: incomplete (exit 3), not a bug.
expect 3 "verdict: incomplete: step-limit" -- run epi-load --max-steps 100
expect 3 "an execution ran past --max-steps" -- check epi-load --tiles 2 --max-steps 100
expect 3 "incomplete: no bug in 3 random runs" -- check epi-load --tiles 2 --strategy random --runs 3 --max-steps 100

expect_usage "--stages 0: must be in [1, 8]" run epi-load --stages 0
expect_usage "a CTA has at most 1024 threads" run epi-load --store-warps 40
expect_usage "exceeds the mbarrier tx-count limit 2^20-1" run epi-load --tile-elems 400000
expect_usage "unknown protocol 'nope'" run nope
# numbers: no sign, no wrap-around, no NaN
expect_usage "--runs: must be a whole number (digits only), got '-1'" check readers --n 2 --strategy random --runs -1
expect_usage "--runs: must be below 2^64" check readers --n 2 --strategy random --runs 99999999999999999999
expect_usage "--max-steps: must be a whole number" check readers --n 2 --max-steps -5
expect_usage "--seed: must be a whole number" run epi-load --seed -1
expect_usage "--time-limit: must be a number of seconds in [0, 1e9], got 'nan'" check readers --n 2 --time-limit nan
expect_usage "--time-limit: must be a number of seconds in [0, 1e9], got '-1'" check readers --n 2 --time-limit -1
expect_usage "the host simulates at most 16384 threads in all" run epi-load --ctas 1024
expect_usage "--bogus-flag" run epi-load --bogus-flag 3
expect_usage "--tiles x: not a whole number" run epi-load --tiles x
# A typo names the flag and the nearest one the subcommand and protocol know; a flag without
# its value names the flag; a shape flag of another protocol is unknown for this one.
expect_usage "unknown flag --stage for 'check epi-load'; did you mean --stages?" check epi-load --stage 3
expect_usage "unknown flag --stgaes for 'run epi-load'; did you mean --stages?" run epi-load --stgaes=3
expect_usage "unknown flag --max-step for 'check readers'; did you mean --max-steps?" check readers --n 2 --max-step 5
expect_usage "unknown flag --jsn for 'replay'; did you mean --json?" replay --jsn
expect_usage "unknown flag --consumer for 'check tma-pipeline'; did you mean --consumers?" check tma-pipeline --consumer 3
expect_usage "unknown flag --n for 'check epi-load' (\`mbcheck check epi-load --help\` lists its flags)" check epi-load --n 3
expect_usage "--stages needs a value" check epi-load --stages
expect_usage "--stages needs a value" check epi-load --stages --tiles 2
expect_usage "--seed needs a value" run epi-load --seed
expect_usage "malformed replay token: a replay token starts with 'mb2:' (or 'mb1:')" replay garbage
expect_usage "malformed replay token: the schedule part is truncated" replay "mb1:epi-load:tiles=2:gA"
expect_usage "--replay-file $tmp/missing: not a file" replay --replay-file "$tmp/missing"
expect_usage "--replay-file /etc: not a file" replay --replay-file /etc
expect_usage "replay needs a TOKEN or --replay-file FILE" replay

# The token printed by run replays the same execution, step by step.
"$MBCHECK" run epi-load --mutation consumer-count-plus-one --tiles 3 --seed 11 >"$tmp/run"
token=$(sed -n 's/^replay:  //p' "$tmp/run")
expect 1 "verdict: bug: deadlock" -- replay "$token"
grep -v '^#' "$tmp/out" | grep -v '^mbcheck replay' >"$tmp/replayed"
grep -v '^mbcheck run' "$tmp/run" >"$tmp/ran"
if ! diff -q "$tmp/ran" "$tmp/replayed" >/dev/null; then
  echo "FAIL: replay does not reproduce the run's verdict, cause, steps and token"
  diff "$tmp/ran" "$tmp/replayed" | head
  failures=$((failures + 1))
fi
steps=$(sed -n 's/^steps:   //p' "$tmp/run")
traced=$(grep -c '^#' "$tmp/out")
[ "$traced" -eq "$steps" ] || { echo "FAIL: replay printed $traced trace lines for $steps steps"; failures=$((failures + 1)); }
printf '%s\n' "$token" >"$tmp/token.txt"
expect 1 "verdict: bug: deadlock" -- replay --replay-file "$tmp/token.txt"

# A token for another shape does not replay silently: the divergence is reported, as a
# result (exit 1), after the steps that fitted.
wrong=$(printf "%s" "$token" | sed "s/threads-per-warp=32/threads-per-warp=16/")
expect 1 "diverged: at step" -- replay "$wrong"
# A token cut short (a whole number of schedule entries, so it still decodes) is diverged too,
# at the step where its schedule ends, not an agent number out of range.
cat >"$tmp/cut_token.py" <<'PY'
# Reads an mb2 token (deflated zigzag-delta runs) and writes an mb1 token (plain runs) of its
# first half of runs.
import base64, sys, zlib
head, sched = sys.argv[1].rsplit(":", 1)
raw = zlib.decompress(base64.urlsafe_b64decode(sched + "=" * (-len(sched) % 4)))
nums, v, shift = [], 0, 0
for b in raw:
    v |= (b & 0x7F) << shift
    shift += 7
    if not b & 0x80:
        nums.append(v); v, shift = 0, 0
runs, agent = [], 0
for zig, repeat in zip(nums[0::2], nums[1::2]):
    agent += (zig >> 1) ^ -(zig & 1)
    runs.append((agent, repeat))
out = bytearray()
for n in [x for run in runs[: len(runs) // 2] for x in run]:
    while True:
        out.append((n & 0x7F) | (0x80 if n >= 0x80 else 0)); n >>= 7
        if not n: break
print("mb1" + head[3:] + ":" + base64.urlsafe_b64encode(bytes(out)).decode().rstrip("="))
PY
short=$(python3 "$tmp/cut_token.py" "$token")
expect 1 "the schedule ends at step" -- replay "$short"
grep -q "4294967295" "$tmp/out" && { echo "FAIL: a short token names agent 4294967295"; failures=$((failures + 1)); }
# An agent the protocol does not have (the search's internal stop among them) does not fit either.
expect_usage "the schedule names agent 4294967294, which no execution has" replay 'mb1:readers:n=2:_v___w8B'
# --json for replay (the steps in check's counterexample schema), list and merge; a correct
# run prints no token unless asked.
"$MBCHECK" replay "$token" --json >"$tmp/rj.json"
python3 - "$tmp/rj.json" <<'PY' && echo "ok:   replay --json has the verdict and every step" || failures=$((failures + 1))
import json, sys
j = json.load(open(sys.argv[1]))
assert j["verdict"] == "bug" and j["kind"] == "deadlock", j["verdict"]
assert len(j["counterexample"]["steps"]) == j["steps"], (len(j["counterexample"]["steps"]), j["steps"])
PY
"$MBCHECK" list --json | python3 -c "import json,sys; a=json.load(sys.stdin); assert any(p['name']=='tma-pipeline' for p in a)" &&
  echo "ok:   list --json names the protocols" || { echo "FAIL: list --json"; failures=$((failures + 1)); }
"$MBCHECK" run epi-load --seed 7 >"$tmp/out" 2>&1
grep -q "^replay:" "$tmp/out" && { echo "FAIL: a correct run printed its token"; failures=$((failures + 1)); } || echo "ok:   a correct run prints no token"
expect 0 "replay:  mb2:epi-load" -- run epi-load --seed 7 --token

# check: exhaustive search, verdict line last, exit 0 verified / 1 bug / 3 incomplete.
expect 0 "verified: 1 executions" -- check epi-load --stages 2 --tiles 4
expect 0 "verified: 256 executions" -- check readers --n 8
expect 1 "bug: deadlock" -- check epi-load --tiles 4 --mutation tx-overcount
expect 1 "timeline:" -- check epi-load --tiles 4 --mutation release-before-read
expect 3 "incomplete: 5 executions" -- check lastzero --n 6 --max-executions 5
expect 3 "alternatives beyond the bound not run" -- check lastzero --n 6 --strategy bounded --preemptions 1
expect 0 "no schedule needed more than 2 preemptions" -- check epi-load --tiles 2 --strategy bounded --preemptions 2
last_line=$("$MBCHECK" check epi-load --tiles 2 | tail -n 1)
case "$last_line" in
  verified:*transitions*blocked*s) echo "ok:   check ends with the verdict line" ;;
  *) echo "FAIL: check's last line is not the verdict line: $last_line"; failures=$((failures + 1)) ;;
esac
expect_usage "--strategy: bogus not in {dpor,bounded,random,pct}" check epi-load --strategy bogus
expect_usage "--tiles 2000000: must be in [0, 1048576]" check epi-load --tiles 2000000
# Zero work is a shape like any other: no tile at all, or a CTA of the grid with none.
expect 0 "verified: 1 executions" -- check epi-load --tiles 0
expect 0 "verified: 1 executions" -- check epi-load --tiles 1 --ctas 2 --threads-per-warp 4
expect 1 "bug: deadlock" -- check epi-load --tiles 0 --mutation consumer-do-while

# --json: one object with the documented fields; its replay token reproduces the bug.
"$MBCHECK" check epi-load --tiles 3 --mutation consumer-count-plus-one --json >"$tmp/json"
code=$?
python3 - "$tmp/json" <<'PY' || failures=$((failures + 1))
import json, sys
j = json.load(open(sys.argv[1]))
for key in ("verdict", "kind", "executions", "transitions", "seconds", "replay", "cause", "timeline"):
    assert key in j, f"--json lacks {key}"
assert j["verdict"] == "bug" and j["kind"] == "deadlock", j
assert j["replay"].startswith("mb2:epi-load:"), j["replay"]
print("ok:   check --json has verdict, kind, executions, transitions, seconds, replay")
PY
[ "$code" -eq 1 ] || { echo "FAIL: check --json on a bug exited $code"; failures=$((failures + 1)); }
token=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['replay'])" "$tmp/json")
expect 1 "verdict: bug: deadlock" -- replay "$token"

# --jobs: an exhaustive search gives the same verdict line (but for the time) with 2 jobs.
one=$("$MBCHECK" check lastzero --n 8 --jobs 1 | tail -n 1 | sed 's/, [0-9.]* s$//')
two=$("$MBCHECK" check lastzero --n 8 --jobs 2 | tail -n 1 | sed 's/, [0-9.]* s$//')
if [ "$one" = "$two" ] && [ -n "$one" ]; then echo "ok:   check --jobs 2 = --jobs 1: $one"; else
  echo "FAIL: check --jobs 2 gave '$two', --jobs 1 gave '$one'"; failures=$((failures + 1)); fi

# --shard i/n: three shards (run at once, then one after another) merge to the unsharded result.
whole=$("$MBCHECK" check lastzero --n 7 | tail -n 1 | sed 's/, [0-9.]* s$//')
for i in 1 2 3; do "$MBCHECK" check lastzero --n 7 --shard $i/3 --shard-dir "$tmp/shards" --json >"$tmp/shard$i.json" & done
wait
expect 0 "merged 3 shard results" -- merge "$tmp/shard1.json" "$tmp/shard2.json" "$tmp/shard3.json"
"$MBCHECK" merge --json "$tmp/shard1.json" "$tmp/shard2.json" "$tmp/shard3.json" |
  python3 -c "import json,sys; j=json.load(sys.stdin); assert j['verdict']=='verified' and j['shards']==3" &&
  echo "ok:   merge --json" || { echo "FAIL: merge --json"; failures=$((failures + 1)); }
"$MBCHECK" merge "$tmp/shard1.json" "$tmp/shard2.json" "$tmp/shard3.json" >"$tmp/out"
merged=$(tail -n 1 "$tmp/out")
[ "$merged" = "$whole" ] && echo "ok:   3 concurrent shards merge to: $merged" ||
  { echo "FAIL: shards merged to '$merged', the whole search gave '$whole'"; failures=$((failures + 1)); }
# One after another: each shard computes what the shards before it left undone.
for i in 1 2 3; do "$MBCHECK" check lastzero --n 7 --shard $i/3 --shard-dir "$tmp/seq" --json >"$tmp/seq$i.json"; done
expect 0 "verified: " -- merge "$tmp/seq1.json" "$tmp/seq2.json" "$tmp/seq3.json"
merged=$(tail -n 1 "$tmp/out")
[ "$merged" = "$whole" ] && echo "ok:   3 shards one after another merge to: $merged" ||
  { echo "FAIL: sequential shards merged to '$merged', the whole search gave '$whole'"; failures=$((failures + 1)); }
for i in 1 2; do "$MBCHECK" check epi-load --tiles 3 --mutation tx-overcount --shard $i/2 --shard-dir "$tmp/bug" --json >"$tmp/bug$i.json" & done
wait
expect 1 "bug: deadlock" -- merge "$tmp/bug1.json" "$tmp/bug2.json"
# A file-size limit (ulimit -f 1: 1 KiB) on a shard and an --html file: the write fails with
# EFBIG, reported (exit 2), not a silent SIGXFSZ death; no truncated page is left.
mkdir -p "$tmp/fsize"
expect_limited() {
  local code=$1 pattern=$2
  shift 3
  (ulimit -f 1; "$MBCHECK" "$@" >"$tmp/out" 2>"$tmp/err")
  local got=$?
  if [ "$got" -ne "$code" ] || ! grep -qF -- "$pattern" "$tmp/err"; then
    echo "FAIL: (ulimit -f 1) mbcheck $* -> exit $got (want $code), stderr lacks: $pattern"
    failures=$((failures + 1))
  else
    echo "ok:   (ulimit -f 1) mbcheck $* -> $got"
  fi
}
expect_limited 2 "File too large" -- check lastzero --n 8 --jobs 1 --shard 1/2 --shard-dir "$tmp/fsize"
expect_limited 2 "cannot write $tmp/fsize.html: File too large" -- run epi-load --tiles 64 --html "$tmp/fsize.html"
if [ -e "$tmp/fsize.html" ]; then
  echo "FAIL: a truncated $tmp/fsize.html was left behind"
  failures=$((failures + 1))
fi
expect_usage "--shard 4/3: expected i/n with 1 <= i <= n" check lastzero --shard 4/3 --shard-dir "$tmp/x"
expect_usage "--shard 1/-3: expected i/n" check lastzero --shard 1/-3 --shard-dir "$tmp/x"
expect_usage "--shard -1/-1: expected i/n" check lastzero --shard -1/-1 --shard-dir "$tmp/x"

# --time-limit holds with several jobs and with shards; SIGINT/SIGTERM stop with the partial
# result (exit 3, "interrupted" in --json); the wall clock is measured around the process.
timed() { local s; s=$(date +%s%N); "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?; ms=$((($(date +%s%N) - s) / 1000000)); }
timed "$MBCHECK" check readers --n 20 --jobs 2 --time-limit 0.2
[ "$rc" = 3 ] && [ "$ms" -lt 1000 ] && echo "ok:   --jobs 2 --time-limit 0.2 stopped after $ms ms" ||
  { echo "FAIL: --jobs 2 --time-limit 0.2: exit $rc after $ms ms"; failures=$((failures + 1)); }
timed "$MBCHECK" check readers --n 20 --shard 1/2 --shard-dir "$tmp/tl" --time-limit 0.3
[ "$rc" = 3 ] && [ "$ms" -lt 1100 ] && echo "ok:   --shard 1/2 --time-limit 0.3 stopped after $ms ms" ||
  { echo "FAIL: --shard 1/2 --time-limit 0.3: exit $rc after $ms ms"; failures=$((failures + 1)); }
for sig in INT TERM; do
  "$MBCHECK" check readers --n 20 --jobs 2 --json >"$tmp/int.json" 2>/dev/null &
  pid=$!
  sleep 0.5
  kill -$sig $pid
  wait $pid
  rc=$?
  if [ "$rc" = 3 ] && grep -q '"interrupted": true' "$tmp/int.json" && grep -q '"verdict": "incomplete"' "$tmp/int.json"; then
    echo "ok:   SIG$sig: exit 3 and the partial result in --json"
  else
    echo "FAIL: SIG$sig: exit $rc, --json: $(head -c 200 "$tmp/int.json")"; failures=$((failures + 1))
  fi
done

# Output: a full stdout is an error (exit 2), output paths are checked before the search, and
# a memory limit is a clear error, not an abort.
"$MBCHECK" check readers --n 3 --json >/dev/full 2>"$tmp/err"
rc=$?
[ "$rc" = 2 ] && grep -q "cannot write the result to stdout" "$tmp/err" && echo "ok:   --json >/dev/full: exit 2, said so" ||
  { echo "FAIL: --json >/dev/full: exit $rc, $(cat "$tmp/err")"; failures=$((failures + 1)); }
# A result larger than stdio's buffer fails while it is written, not only at the end: still
# one line and exit 2 (it was std::terminate, exit 134), for text and --json alike, and the
# --sarif file is written all the same.
full_cases=("check epi-load --mutation consumer-count-plus-one --json --sarif $tmp/full.sarif"
  "check epi-load --mutation consumer-count-plus-one" "check epi-load --tiles 2 --mutation consumer-count-plus-one --strategy random --runs 3 --json"
  "run epi-load --mutation consumer-count-plus-one" "replay $token" "list" "check epi-load --help")
for args in "${full_cases[@]}"; do
  # shellcheck disable=SC2086
  "$MBCHECK" $args >/dev/full 2>"$tmp/err"
  rc=$?
  if [ "$rc" = 2 ] && [ "$(cat "$tmp/err")" = "mbcheck: error: cannot write the result to stdout: No space left on device" ]; then
    echo "ok:   ${args:0:90} >/dev/full: exit 2, one line"
  else
    echo "FAIL: ${args:0:90} >/dev/full: exit $rc, stderr: $(head -c 300 "$tmp/err")"; failures=$((failures + 1))
  fi
done
grep -q '"ruleId": "deadlock"' "$tmp/full.sarif" && echo "ok:   --sarif written although stdout was full" ||
  { echo "FAIL: no --sarif file after a full stdout"; failures=$((failures + 1)); }
expect_usage "--html /nonexistent/x.html: cannot write in /nonexistent" check epi-load --mutation tx-overcount --tiles 2 --html /nonexistent/x.html
expect_usage "--html needs a file name" run epi-load --html ""
expect_usage "--trace $tmp: is a directory" run epi-load --trace "$tmp"
# Every output file is proven creatable before the search, which would take minutes here (a
# search of readers --n 20, a run of a million tiles; --time-limit 5 only bounds a failure):
# /proc refuses new files even to root, to whom access() says yes; a directory that does not
# exist. Nothing is left behind by the proof.
quick_usage() {  # quick_usage <pattern> <args...>: a usage error, before the search
  local s; s=$(date +%s%N)
  expect_usage "$@"
  local ms=$((($(date +%s%N) - s) / 1000000))
  [ "$ms" -lt $((2000 * ${MBCHECK_TIMEOUT_SCALE:-1})) ] ||
    { echo "FAIL: mbcheck ${*:2}: refused after $ms ms, not before the search"; failures=$((failures + 1)); }
}
for opt in --html --trace --sarif; do
  for out in /proc/x.json "$tmp/no-such-dir/x.json"; do
    quick_usage "$opt $out: cannot write in $(dirname "$out"): " check readers --n 20 --time-limit 5 $opt "$out"
    quick_usage "$opt $out: cannot write in $(dirname "$out"): " run epi-load --tiles 1000000 --tile-elems 4 \
      --time-limit 5 $opt "$out"
    quick_usage "$opt $out: cannot write in $(dirname "$out"): " replay "$token" $opt "$out"
  done
done
quick_usage "--shard-dir /proc/x: " check readers --n 20 --time-limit 5 --shard 1/2 --shard-dir /proc/x
quick_usage "--shard-dir /proc: cannot write /proc/search." check readers --n 20 --time-limit 5 --shard 1/2 --shard-dir /proc
mkdir -p "$tmp/probe"
expect 0 "verified: " -- check readers --n 2 --html "$tmp/probe/x.html" --trace "$tmp/probe/x.json" --sarif "$tmp/probe/x.sarif"
[ "$(ls "$tmp/probe")" = "x.sarif" ] && echo "ok:   the output paths' proof leaves no file behind" ||
  { echo "FAIL: after check --html --trace --sarif with no counterexample, $tmp/probe holds: $(ls "$tmp/probe")"; failures=$((failures + 1)); }
expect 2 "out of memory: this shape needs more than the 0.3 GiB limit" -- check epi-load --tile-elems 4 --tiles 2048 --memory-limit 0.3
# The threads' stacks count too: a fiber stack that cannot be mapped is out of memory (it was
# reported as a crash of the protocol).
expect 2 "out of memory: this shape needs more than the 0.1 GiB limit" -- check epi-load --memory-limit 0.1
# A shape whose first execution is provably too deep for the limit is refused before the
# search (one plain run of its first schedule, cut off at the depth the limit allows).
expect 2 "this shape is too large to search exhaustively within --memory-limit 0.35 GiB: its first execution runs more than" -- check epi-load --tile-elems 4 --tiles 16384 --memory-limit 0.35

# Flags that do not apply are errors, not silently ignored; an unknown subcommand lists the
# valid ones; --max-steps 0 means no limit, as everywhere else.
expect_usage "unknown subcommand 'frobnicate': one of list, check, run, replay, merge" frobnicate
expect_usage "--preemptions applies only to --strategy bounded" check readers --preemptions 3
expect_usage "--depth applies only to --strategy pct" check readers --strategy random --runs 3 --depth 2
expect_usage "--runs applies only to --strategy random or pct" check readers --runs 5
expect_usage "--shard-dir applies only to --strategy dpor or bounded" check readers --strategy random --runs 2 --shard 1/2 --shard-dir "$tmp/fz"
expect_usage "--shard needs --shard-dir" check readers --shard 1/2
expect_usage "--shard and --max-executions do not combine" check readers --shard 1/2 --shard-dir "$tmp/fz" --max-executions 3
expect 0 "verdict: ok" -- run epi-load --max-steps 0
expect 0 "verified: " -- check readers --n 2 --max-steps 0

# --shard auto: a Slurm array job (tasks 3 and 4) or a Kubernetes Indexed Job needs no wrapper.
for t in 3 4; do
  SLURM_ARRAY_TASK_ID=$t SLURM_ARRAY_TASK_MIN=3 SLURM_ARRAY_TASK_MAX=4 "$MBCHECK" check lastzero --n 7 --shard auto \
    --shard-dir "$tmp/slurm" --json >"$tmp/slurm$t.json" &
done
wait
expect 0 "merged 2 shard results" -- merge "$tmp/slurm3.json" "$tmp/slurm4.json"
merged=$(tail -n 1 "$tmp/out")
[ "$merged" = "$whole" ] && echo "ok:   a Slurm array job's shards merge to: $merged" ||
  { echo "FAIL: Slurm shards merged to '$merged', the whole search gave '$whole'"; failures=$((failures + 1)); }
JOB_COMPLETION_INDEX=1 expect 0 "shard 2/3" -- check lastzero --n 5 --shard auto/3 --shard-dir "$tmp/k8s"
expect_usage "auto needs a batch scheduler's array index" check lastzero --shard auto --shard-dir "$tmp/k8s2"
JOB_COMPLETION_INDEX=0 expect_usage "give the count as --shard auto/N" check lastzero --shard auto --shard-dir "$tmp/k8s2"

# --stack-size is validated; a protocol's stack overflow is its own report (tests/test_robustness.cpp).
expect_usage "--stack-size" run epi-load --stack-size 1000
expect 0 "verdict: ok" -- run epi-load --stack-size 131072

# Tokens: a step count beyond the step limit (20 characters claiming 2^30 steps), a duplicate
# shape entry and an overlong protocol name are refused before anything is allocated.
expect_usage "the token records more than 10000000 steps" replay 'mb1:readers:n=2:AICAgIAE'
expect_usage "shape entry 'n' appears twice" replay 'mb1:readers:n=2,n=3:AAE'
expect_usage "the protocol name is longer than 64 characters" replay "mb1:$(printf 'a%.0s' $(seq 100)):n=2:AAE"
expect_usage "unknown protocol 'nosuch' (known: epi-load" check nosuch

# A fuzzing campaign shards by run index (no directory): the merged result is the campaign's.
for i in 1 2; do "$MBCHECK" check epi-load --tiles 4 --mutation consumer-count-plus-one --strategy random --runs 6 \
  --shard $i/2 --json >"$tmp/fz$i.json"; done
expect 1 "bug: deadlock: 2 executions" -- merge "$tmp/fz1.json" "$tmp/fz2.json"
python3 - "$tmp/fz1.json" "$tmp/fz2.json" <<'PY' && echo "ok:   fuzz shards took runs 0,2,4 and 1,3,5 (bug_run 0 and 1)" || failures=$((failures + 1))
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert (a["bug_run"], b["bug_run"]) == (0, 1), (a["bug_run"], b["bug_run"])
PY
# Shrinking stays inside --time-limit.
timed "$MBCHECK" check epi-load --mutation release-before-read --strategy random --runs 0 --time-limit 0.5
[ "$rc" = 1 ] && [ "$ms" -lt 1300 ] && echo "ok:   fuzzing with shrinking kept --time-limit 0.5: $ms ms" ||
  { echo "FAIL: fuzz --time-limit 0.5: exit $rc after $ms ms"; failures=$((failures + 1)); }

# A shard killed mid-search (kill -9, holding work) neither hangs the others nor a rerun:
# the other shard computes its items too, and the rerun finds them done.
whole_big=$("$MBCHECK" check lastzero --n 12 --jobs 1 | tail -n 1 | sed 's/, [0-9.]* s$//')
"$MBCHECK" check lastzero --n 12 --shard 1/2 --shard-dir "$tmp/killed" --json >"$tmp/k1.json" 2>/dev/null &
victim=$!
"$MBCHECK" check lastzero --n 12 --shard 2/2 --shard-dir "$tmp/killed" --json >"$tmp/k2.json" 2>/dev/null &
survivor=$!
sleep 1
kill -9 "$victim" 2>/dev/null
wait "$victim" 2>/dev/null
[ -s "$tmp/k1.json" ] && { echo "FAIL: the shard finished before it could be killed"; failures=$((failures + 1)); }
# (MBCHECK_TIMEOUT_SCALE: the debug and asan test presets run several times slower.)
wait_s=$((120 * ${MBCHECK_TIMEOUT_SCALE:-1}))
if timeout "$wait_s" tail --pid="$survivor" -f /dev/null; then
  wait "$survivor"; echo "ok:   the surviving shard finished after the other was killed"
else
  echo "FAIL: the surviving shard hangs after the other was killed"; kill -9 "$survivor"; failures=$((failures + 1))
fi
timeout "$wait_s" "$MBCHECK" check lastzero --n 12 --shard 1/2 --shard-dir "$tmp/killed" --json >"$tmp/k1.json"
expect 0 "merged 2 shard results" -- merge "$tmp/k1.json" "$tmp/k2.json"
merged=$(tail -n 1 "$tmp/out")
[ "$merged" = "$whole_big" ] && echo "ok:   killed and rerun shards merge to the whole search: $merged" ||
  { echo "FAIL: killed+rerun shards merged to '$merged', the whole search gave '$whole_big'"; failures=$((failures + 1)); }
# Later items of a wave are claimed (readers --n 8: one wave of 8 subtrees): a claimed item
# whose result is lost is computed again by a rerun, whether the claim is its own or names a
# shard that is gone.
whole_readers=$("$MBCHECK" check readers --n 8 --jobs 1 | tail -n 1 | sed 's/, [0-9.]* s$//')
for i in 1 2; do "$MBCHECK" check readers --n 8 --shard $i/2 --shard-dir "$tmp/claims" --json >/dev/null & done
wait
# (a record is a line of its shard's log: "<crc32> <wave> <item> <json>"; each line stands alone)
if [ -e "$tmp/claims/w0-3.claim" ] && grep -q '^[0-9a-f]\{8\} 0 3 ' "$tmp"/claims/shard-*.log &&
  sed -i '/^[0-9a-f]\{8\} 0 3 /d' "$tmp"/claims/shard-*.log; then
  expect 0 "verified: " -- check readers --n 8 --shard 1/2 --shard-dir "$tmp/claims"
  got=$(tail -n 1 "$tmp/out" | sed 's/, [0-9.]* s$//')
  [ "$got" = "$whole_readers" ] && echo "ok:   a claimed item whose result was lost is computed again: $got" ||
    { echo "FAIL: rerun over a lost claimed item gave '$got', the whole search '$whole_readers'"; failures=$((failures + 1)); }
else
  echo "FAIL: readers --n 8 with 2 shards left no claim of item 3 with its result"; failures=$((failures + 1))
fi
# A stale lock file of the old exchange, in a fresh directory, means nothing now.
mkdir -p "$tmp/lock" && : >"$tmp/lock/w0-0.lock"
expect 0 "verified: " -- check lastzero --n 5 --shard 1/1 --shard-dir "$tmp/lock"
expect 0 "verified: " -- check lastzero --n 5 --shard 1/2 --shard-dir "$tmp/lock"
# Stale results of another search (search.txt deleted) are refused, never mixed in.
for i in 1 2; do "$MBCHECK" check readers --n 6 --shard $i/2 --shard-dir "$tmp/stale" --json >/dev/null & done
wait
rm "$tmp/stale/search.txt"
# (found during the search, so after its header line)
expect 2 "is the result of another search" -- check readers --n 7 --shard 1/2 --shard-dir "$tmp/stale"
# A shard log that is not one, or a directory in its place: a clear error, not an abort.
mkdir -p "$tmp/junk" && "$MBCHECK" check lastzero --n 5 --shard 1/2 --shard-dir "$tmp/junk" >/dev/null
echo "not a log" >"$tmp/junk/shard-1.log"
expect 2 "shard-1.log is not a shard log" -- check lastzero --n 5 --shard 2/2 --shard-dir "$tmp/junk"
rm "$tmp/junk/shard-1.log" && mkdir "$tmp/junk/shard-1.log"
expect 2 "shard-1.log is not a shard log (not a regular file)" -- check lastzero --n 5 --shard 2/2 --shard-dir "$tmp/junk"
# Nothing is fsynced: a record cut short (a crash in the middle of a write) is never read; the
# other shard computes what it lost, and the shard that wrote it cuts it off when rerun.
whole7=$("$MBCHECK" check lastzero --n 7 | tail -n 1 | sed 's/, [0-9.]* s$//')
"$MBCHECK" check lastzero --n 7 --shard 1/2 --shard-dir "$tmp/torn" >/dev/null
size=$(stat -c %s "$tmp/torn/shard-1.log")
truncate -s $((size / 2)) "$tmp/torn/shard-1.log"
for i in 2 1; do
  expect 0 "verified: " -- check lastzero --n 7 --shard $i/2 --shard-dir "$tmp/torn"
  got=$(tail -n 1 "$tmp/out" | sed 's/, [0-9.]* s$//')
  [ "$got" = "$whole7" ] && echo "ok:   shard $i over a torn log gives the whole search: $got" ||
    { echo "FAIL: shard $i over a torn log gave '$got', the whole search '$whole7'"; failures=$((failures + 1)); }
done
[ "$(tail -c 1 "$tmp/torn/shard-1.log" | od -An -c | tr -d ' ')" = '\n' ] && echo "ok:   the rerun cut its torn line off" ||
  { echo "FAIL: shard-1.log still ends in a torn line after its rerun"; failures=$((failures + 1)); }
# An unwritable directory says so.
if [ "$(id -u)" != 0 ]; then
  mkdir -p "$tmp/ro" && chmod 555 "$tmp/ro"
  expect_usage "Permission denied" check lastzero --n 5 --shard 1/2 --shard-dir "$tmp/ro"
  chmod 755 "$tmp/ro"
fi
expect_usage 'no "shard" (not a' merge "$tmp/json"
expect_usage "holds the work of another search" check lastzero --n 6 --shard 1/3 --shard-dir "$tmp/shards"
expect_usage "not shards of one search" merge "$tmp/shard1.json" "$tmp/bug1.json"
# merge validates: every shard exactly once, all present, fields of the right type and range.
expect_usage "not a file" merge "$tmp"
expect_usage "shard 1/3 is given twice" merge "$tmp/shard1.json" "$tmp/shard1.json" "$tmp/shard1.json"
expect_usage "missing: merge needs all 3 shards" merge "$tmp/shard1.json"
tamper() { sed "$1" "$tmp/shard1.json" >"$tmp/t.json"; }
tamper 's/"own_executions": \([0-9]*\)/"own_executions": "\1"/'
expect_usage '"own_executions" must be a whole number' merge "$tmp/t.json" "$tmp/shard2.json" "$tmp/shard3.json"
tamper 's/"verdict": "verified"/"verdict": 5/'
expect_usage '"verdict" must be a string' merge "$tmp/t.json" "$tmp/shard2.json" "$tmp/shard3.json"
tamper 's/"verdict": "verified"/"verdict": "maybe"/'
expect_usage '"verdict" must be verified, bug or incomplete' merge "$tmp/t.json" "$tmp/shard2.json" "$tmp/shard3.json"
tamper 's/"executions": [0-9]*/"executions": -1/'
expect_usage '"executions" must be a whole number >= 0' merge "$tmp/t.json" "$tmp/shard2.json" "$tmp/shard3.json"
tamper '/"blocked"/d'
expect_usage 'no "blocked"' merge "$tmp/t.json" "$tmp/shard2.json" "$tmp/shard3.json"
sed 's/"replay": "[^"]*"/"replay": null/' "$tmp/bug1.json" >"$tmp/t.json"
expect_usage '"replay" must be a string' merge "$tmp/t.json" "$tmp/bug2.json"

# fuzzing: a bug is exit 1, no bug is incomplete (3): fuzzing proves nothing.
expect 1 "bug: assertion: PCT run" -- check ordering-bug --strategy pct --depth 1 --runs 50
expect 1 "each run finds a depth-1 bug with probability >= 1/(n k^0) = 0.5" -- check ordering-bug --strategy pct --depth 1 --runs 50
expect 3 "incomplete: no bug in 300 random runs" -- check ordering-bug --strategy random --runs 300 --jobs 2
expect 1 "shrunk:" -- check epi-load --tiles 4 --threads-per-warp 8 --mutation double-arrive --strategy random --runs 100
expect_usage "--runs 0 needs a --time-limit" check epi-load --strategy random --runs 0

# Compiler-style diagnostics (editors and CI logs link them): the error at the failing step's
# source line, notes at the other culprits'.
# the lines of the bulk copy's issue and of consumer_release in the bundled pipeline
copy_line=$(grep -n 'P::cp_async_bulk_global_to_shared(dst' "$root/spec/kernels/tma_pipeline.hpp" | cut -d: -f1)
release_line=$(grep -n 'void consumer_release' "$root/spec/kernels/tma_pipeline.hpp" | cut -d: -f1)
expect 1 "spec/kernels/tma_pipeline.hpp:$copy_line: error: race: data race on 'stage 0'[0]" -- check tma-pipeline --consumers 3 --tile-elems 8 --mutation consumer-release-before-read
expect 1 "spec/kernels/tma_pipeline.hpp:$release_line: note: thread 1 (warp 0 lane 1) last ran 'arrive empty[1]' here" -- check tma-pipeline --consumers 3 --tile-elems 8 --mutation consumer-release-before-read

# Counterexample tokens stay short enough to paste: shrunk fuzzing counterexamples of
# cluster-gemm and full-size epi-load (random runs of hundreds to thousands of preemptions).
"$MBCHECK" check cluster-gemm --strategy random --runs 200 --mutation no-producer-tail --json >"$tmp/cg.json"
"$MBCHECK" check epi-load --strategy random --runs 200 --mutation release-before-read --json >"$tmp/el.json"
python3 - "$tmp/cg.json" "$tmp/el.json" <<'PY' && echo "ok:   counterexample tokens under 2 KB (shrunk cluster-gemm and epi-load)" || failures=$((failures + 1))
import json, sys
for path in sys.argv[1:]:
    d = json.load(open(path))
    assert d["verdict"] == "bug" and d["replay"].startswith("mb2:") and len(d["replay"]) < 2048, (path, len(d["replay"]))
    assert d["preemptions"] < d["original_preemptions"], (path, d["preemptions"], d["original_preemptions"])
PY

# --sarif paths are relative to a source root (uriBaseId SRCROOT): by default the repository
# holding the file, whatever the working directory; --source-root picks another.
src_root=$(cd "$(dirname "$0")/.." && pwd)
(cd "$tmp" && "$MBCHECK" check tma-pipeline --consumers 3 --tile-elems 8 --mutation consumer-release-before-read \
   --sarif "$tmp/root.sarif" >/dev/null)
"$MBCHECK" check tma-pipeline --consumers 3 --tile-elems 8 --mutation consumer-release-before-read \
  --sarif "$tmp/root2.sarif" --source-root "$src_root/spec" >/dev/null
python3 - "$tmp/root.sarif" "$tmp/root2.sarif" "$src_root" <<'PY' && echo "ok:   --sarif: paths relative to the source root, with uriBaseId" || failures=$((failures + 1))
import json, os, sys
for path, rel, root in ((sys.argv[1], "spec/kernels/tma_pipeline.hpp", sys.argv[3]),
                        (sys.argv[2], "kernels/tma_pipeline.hpp", os.path.join(sys.argv[3], "spec"))):
    run = json.load(open(path))["runs"][0]
    art = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert art == {"uri": rel, "uriBaseId": "SRCROOT"}, art
    base = run["originalUriBaseIds"]["SRCROOT"]["uri"]
    assert base == "file://" + os.path.realpath(root) + "/", base
PY

# --sarif: SARIF 2.1.0, the bug at a source line with the culprits' steps; no bug, no results.
"$MBCHECK" check tma-pipeline --consumers 3 --tile-elems 8 --mutation consumer-release-before-read --sarif "$tmp/r.sarif" >/dev/null
"$MBCHECK" check readers --n 2 --sarif "$tmp/ok.sarif" >/dev/null
"$MBCHECK" run epi-load --sarif "$tmp/run_ok.sarif" >/dev/null
grep -q '"results": \[\]' "$tmp/run_ok.sarif" && echo "ok:   a correct run's SARIF has no results" ||
  { echo "FAIL: a correct run's SARIF has results"; failures=$((failures + 1)); }
python3 - "$tmp/r.sarif" "$tmp/ok.sarif" <<'PY' && echo "ok:   --sarif: one race result at spec/kernels/tma_pipeline.hpp, none for a verified run" || failures=$((failures + 1))
import json, sys
bug, ok = (json.load(open(f)) for f in sys.argv[1:])
assert bug["version"] == "2.1.0"
(r,) = bug["runs"][0]["results"]
assert r["ruleId"] == "race" and r["level"] == "error", r
assert r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "spec/kernels/tma_pipeline.hpp", r["locations"]
assert r["relatedLocations"] and r["codeFlows"]
assert ok["runs"][0]["results"] == []
PY

# Every --json output validates against sim/output.schema.json (and a damaged one does not).
schema="$(dirname "$0")/../sim/output.schema.json"
validate() {  # validate <definition> <file>
  if python3 "$(dirname "$0")/validate_json.py" "$schema" "$1" "$2"; then echo "ok:   $2 is a valid '$1'"; else failures=$((failures + 1)); fi
}
"$MBCHECK" check epi-load --tiles 4 --mutation tx-undercount-split --json >"$tmp/v_bug.json"
"$MBCHECK" check readers --n 3 --json >"$tmp/v_ok.json"
"$MBCHECK" check epi-load --tiles 2 --strategy bounded --preemptions 1 --json >"$tmp/v_bounded.json"
"$MBCHECK" check epi-load --tiles 4 --mutation tx-undercount-split --strategy pct --runs 3 --json >"$tmp/v_pct.json"
"$MBCHECK" check readers --n 3 --strategy random --runs 3 --json >"$tmp/v_random.json"
"$MBCHECK" replay "$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['replay'])" "$tmp/v_bug.json")" --json >"$tmp/v_replay.json"
"$MBCHECK" list --json >"$tmp/v_list.json"
"$MBCHECK" merge --json "$tmp/shard1.json" "$tmp/shard2.json" "$tmp/shard3.json" >"$tmp/v_merge.json"
"$MBCHECK" merge --json "$tmp/fz1.json" "$tmp/fz2.json" >"$tmp/v_merge_fuzz.json"
for f in v_bug:check v_ok:check v_bounded:check shard1:check k1:check v_pct:fuzz v_random:fuzz fz1:fuzz \
         v_replay:replay v_list:list v_merge:merge v_merge_fuzz:merge; do
  validate "${f#*:}" "$tmp/${f%%:*}.json"
done
# --time-limit holds inside one long execution (epi-load of 20,000 tiles: millions of steps
# in its first execution): incomplete, exit 3, within about a second of the limit, the --json
# document written.
t0=$(date +%s%N)
"$MBCHECK" check epi-load --tiles 20000 --tile-elems 4 --time-limit 2 --quiet --json >"$tmp/tl.json" 2>"$tmp/tl.err"
code=$?
ms=$((($(date +%s%N) - t0) / 1000000))
if [ "$code" -eq 3 ] && [ "$ms" -lt $((5000 * ${MBCHECK_TIMEOUT_SCALE:-1})) ] &&
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['verdict']=='incomplete' and not d['complete']" "$tmp/tl.json"; then
  echo "ok:   --time-limit 2 inside one long execution: exit 3 after $ms ms, --json incomplete"
else
  echo "FAIL: --time-limit 2 inside one long execution: exit $code after $ms ms"; cat "$tmp/tl.err"; failures=$((failures + 1))
fi
# run: --time-limit and SIGINT stop its one execution too (it ran to --max-steps), with the
# prefix's token.
timed "$MBCHECK" run epi-load --tiles 1000000 --tile-elems 4 --time-limit 1
[ "$rc" = 3 ] && [ "$ms" -lt $((4000 * ${MBCHECK_TIMEOUT_SCALE:-1})) ] && grep -qF "verdict: incomplete: time limit" "$tmp/out" &&
  grep -q "^replay:  mb2:epi-load:" "$tmp/out" && echo "ok:   run --time-limit 1: exit 3 after $ms ms, with the prefix's token" ||
  { echo "FAIL: run --time-limit 1: exit $rc after $ms ms: $(head -c 300 "$tmp/out")"; failures=$((failures + 1)); }
"$MBCHECK" run epi-load --tiles 1000000 --tile-elems 4 >"$tmp/run_int.out" 2>&1 &
pid=$!
sleep 1
kill -INT $pid
t0=$(date +%s%N)
wait $pid
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
[ "$rc" = 3 ] && [ "$ms" -lt $((3000 * ${MBCHECK_TIMEOUT_SCALE:-1})) ] && grep -qF "verdict: incomplete: interrupted" "$tmp/run_int.out" &&
  echo "ok:   run, SIGINT inside its execution: exit 3 after $ms ms" ||
  { echo "FAIL: run, SIGINT inside its execution: exit $rc after $ms ms: $(head -c 300 "$tmp/run_int.out")"; failures=$((failures + 1)); }

# The schema as a whole accepts each command's output and refuses documents that match no
# command's definition: an unknown verdict, a missing execution count, a count as a string.
for f in v_bug v_pct v_replay v_list v_merge; do validate top "$tmp/$f.json"; done
python3 - "$tmp" <<'PY'
import json, sys
ok = json.load(open(sys.argv[1] + "/v_ok.json"))
bad = [dict(ok, verdict="foo"), {k: v for k, v in ok.items() if k != "executions"}, dict(ok, executions="12")]
for i, doc in enumerate(bad):
    json.dump(doc, open(f"{sys.argv[1]}/top_bad{i}.json", "w"))
PY
for i in 0 1 2; do
  python3 "$(dirname "$0")/validate_json.py" "$schema" top "$tmp/top_bad$i.json" >/dev/null &&
    { echo "FAIL: the schema accepted top_bad$i.json"; failures=$((failures + 1)); } ||
    echo "ok:   the schema as a whole refuses top_bad$i.json"
done
sed 's/"executions": [0-9]*/"executions": -4/' "$tmp/v_ok.json" >"$tmp/v_bad.json"
python3 "$(dirname "$0")/validate_json.py" "$schema" check "$tmp/v_bad.json" >/dev/null &&
  { echo "FAIL: the schema accepted a negative execution count"; failures=$((failures + 1)); } ||
  echo "ok:   the schema refuses a negative execution count"

# --watchdog (check, run, replay): a thread looping in protocol code without calling into
# mbcheck is stopped after that many seconds: a hang verdict (exit 1) with the source line of
# its last operation, a replay token that replays it, and the flag to raise.
wait_line=$(grep -n 'bar.wait(0);' "$root/tests/cli_fixture.cpp" | cut -d: -f1)
for cmd in run check; do
  timed "$FIXTURE" $cmd handoff-lite --mutation endless-loop --watchdog 0.3
  if [ "$rc" = 1 ] && [ "$ms" -lt 5000 ] && grep -qF "bug: hang" "$tmp/out" && grep -qF "tests/cli_fixture.cpp:$wait_line" "$tmp/out" &&
    grep -qF "raise --watchdog SECONDS" "$tmp/out" && ! grep -q "RunLimits" "$tmp/out"; then
    echo "ok:   $cmd --watchdog 0.3: hang, exit 1 after $ms ms, naming tests/cli_fixture.cpp:$wait_line"
  else
    echo "FAIL: $cmd --watchdog 0.3: exit $rc after $ms ms: $(cat "$tmp/out" "$tmp/err")"; failures=$((failures + 1))
  fi
done
token=$(sed -n 's/^replay: *//p' "$tmp/out" | head -1)
timed "$FIXTURE" replay "$token" --watchdog 0.3
[ "$rc" = 1 ] && grep -qF "hang" "$tmp/out" && echo "ok:   replay --watchdog 0.3: the hang again, exit 1 after $ms ms" ||
  { echo "FAIL: replay --watchdog 0.3: exit $rc: $(cat "$tmp/out" "$tmp/err")"; failures=$((failures + 1)); }
# A stuck thread is a verdict (hang) like any other bug: --json and --sarif are written, and
# the search ends there (it was the process ending with a report on stderr only).
"$FIXTURE" check handoff-lite --waiters 2 --mutation endless-loop --watchdog 0.3 --json --sarif "$tmp/hang.sarif" \
  >"$tmp/hang.json" 2>"$tmp/err"
rc=$?
python3 - "$tmp/hang.json" "$tmp/hang.sarif" "tests/cli_fixture.cpp:$wait_line" <<'PY' && [ "$rc" = 1 ] &&
import json, sys
j, sarif = (json.load(open(f)) for f in sys.argv[1:3])
assert j["verdict"] == "bug" and j["kind"] == "hang", (j["verdict"], j["kind"])
assert "ran protocol code for more than 0.3 s" in j["cause"] and sys.argv[3] in j["cause"], j["cause"]
(r,) = sarif["runs"][0]["results"]
assert r["ruleId"] == "hang", r["ruleId"]
PY
  echo "ok:   a stuck thread: --json (kind hang) and --sarif (rule hang), exit 1" ||
  { echo "FAIL: a stuck thread with --json --sarif: exit $rc, $(head -c 300 "$tmp/err")"; failures=$((failures + 1)); }
validate check "$tmp/hang.json"
expect_usage "--watchdog: must be a number of seconds in [0, 1e9], got '-1'" run epi-load --watchdog -1
expect 0 "verified: " -- check readers --n 2 --watchdog 0

# A crash in protocol code (a waiter stores through a null pointer) is a bug like any other:
# exit 1, the text report, --json on stdout, the --sarif file, a token that replays it. It
# was the process dying of SIGSEGV (exit 139) with nothing on stdout.
MBCHECK=$FIXTURE expect 1 "verdict: bug: crash" -- run handoff-lite --mutation null-deref
MBCHECK=$FIXTURE expect 1 "crashed in protocol code: Segmentation fault (signal 11)" -- run handoff-lite --mutation null-deref
MBCHECK=$FIXTURE expect 1 "bug: crash: " -- check handoff-lite --waiters 2 --mutation null-deref
MBCHECK=$FIXTURE expect 1 "bug: crash: " -- check handoff-lite --mutation null-deref --strategy random --runs 3
"$FIXTURE" check handoff-lite --waiters 2 --mutation null-deref --json --sarif "$tmp/crash.sarif" >"$tmp/crash.json" 2>"$tmp/err"
rc=$?
python3 - "$tmp/crash.json" "$tmp/crash.sarif" <<'PY' && [ "$rc" = 1 ] && echo "ok:   a crash: --json (kind crash) and --sarif (rule crash), exit 1" ||
import json, sys
j, sarif = (json.load(open(f)) for f in sys.argv[1:])
assert j["verdict"] == "bug" and j["kind"] == "crash", (j["verdict"], j["kind"])
assert "crashed in protocol code: Segmentation fault" in j["cause"], j["cause"]
assert j["replay"].startswith("mb2:handoff-lite:"), j["replay"]
(r,) = sarif["runs"][0]["results"]
assert r["ruleId"] == "crash", r["ruleId"]
PY
  { echo "FAIL: a crash with --json --sarif: exit $rc, $(head -c 300 "$tmp/err")"; failures=$((failures + 1)); }
validate check "$tmp/crash.json"
token=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['replay'])" "$tmp/crash.json")
MBCHECK=$FIXTURE expect 1 "verdict: bug: crash" -- replay "$token"
# The crash token from a file, with every output: the same crash, reported as any bug.
echo "$token" >"$tmp/crash.token"
"$FIXTURE" replay --replay-file "$tmp/crash.token" --json --html "$tmp/crash.html" --sarif "$tmp/crash_replay.sarif" \
  >"$tmp/crash_replay.json" 2>"$tmp/err"
rc=$?
python3 - "$tmp/crash_replay.json" "$tmp/crash_replay.sarif" "$tmp/crash.html" <<'PY' && [ "$rc" = 1 ] &&
import json, sys
j, sarif = (json.load(open(f)) for f in sys.argv[1:3])
assert j["verdict"] == "bug" and j["kind"] == "crash", (j["verdict"], j["kind"])
assert "crashed in protocol code: Segmentation fault" in j["cause"], j["cause"]
(r,) = sarif["runs"][0]["results"]
assert r["ruleId"] == "crash", r["ruleId"]
html = open(sys.argv[3]).read()
assert "crashed in protocol code" in html and "</html>" in html
PY
  echo "ok:   replay --replay-file crash.token --json --html --sarif: the crash, exit 1" ||
  { echo "FAIL: replay of a crash token with every output: exit $rc, $(head -c 300 "$tmp/err")"; failures=$((failures + 1)); }
validate replay "$tmp/crash_replay.json"
# A protocol that corrupts the heap: glibc's free() aborts holding its arena's lock, which the
# abandoned frames never give back. With other threads alive (two jobs; the watchdog's) the
# lock is taken, and what the landing allocates waits on it: the process ends within a second
# of the abort with the crash report, exit 1 (it hung until the watchdog called it a hang, and
# with --watchdog 0 for good). AddressSanitizer finds the double free itself, first.
if [ -n "${ASAN_OPTIONS+x}" ]; then
  echo "ok:   (heap corruption: not under AddressSanitizer, which reports the double free itself)"
else
  for args in "check handoff-lite --waiters 2 --jobs 2" "check handoff-lite --waiters 2 --jobs 2 --watchdog 0" "run handoff-lite"; do
    # shellcheck disable=SC2086
    timed timeout -k 1 10 "$FIXTURE" $args --mutation heap-corruption
    end=$(date +%s%N)
    abort_at=$(sed -n 's/^handoff-lite: freeing a chunk twice at \([0-9]*\) ns$/\1/p' "$tmp/err" | head -1)
    after=$(((end - ${abort_at:-0}) / 1000000))
    if [ "$rc" = 1 ] && [ -n "$abort_at" ] && [ "$after" -lt 1000 ] &&
      grep -qF "mbcheck: the protocol crashed (Aborted) in thread 1 (warp 0 lane 1), agent 1, at step" "$tmp/err" &&
      grep -qF "left the allocator locked or broken" "$tmp/err" && grep -q "^replay:  mb1:handoff-lite:" "$tmp/err"; then
      echo "ok:   $args, heap corruption: exit 1 with the crash report, $after ms after the abort"
    else
      echo "FAIL: $args, heap corruption: exit $rc, $after ms after the abort ($ms ms in all): $(head -c 600 "$tmp/err")"
      failures=$((failures + 1))
    fi
  done
fi

# --on-misuse continue: the hardware's answer to a misuse (the second arrive counts), and the
# hang it leads to, named with its root; the replay token keeps the mode.
dbl=(epi-load --mutation double-arrive --tiles 4 --threads-per-warp 1 --store-warps 1)
expect 1 "bug:      misuse" -- check "${dbl[@]}"
expect 1 "the hardware goes on: --on-misuse continue" -- check "${dbl[@]}"
expect 1 "bug:      deadlock" -- check "${dbl[@]}" --on-misuse continue
expect 1 "root misuse (missing-wait, step 18)" -- check "${dbl[@]}" --on-misuse continue
token=$("$MBCHECK" check "${dbl[@]}" --on-misuse continue 2>&1 | sed -n 's/^replay: *//p')
expect 1 "the consequence of the missing-wait at step 18" -- replay "$token"
expect 1 "bug: deadlock" -- check "${dbl[@]}" --on-misuse continue --strategy random --runs 50
expect_usage "--on-misuse later: one of stop, continue" check epi-load --on-misuse later

# check/run PROTOCOL --help: that protocol's own shape flags with their meaning and default,
# no other protocol's; a user's protocol is not called a bundled one.
help_has() {  # help_has <label> <file> <must contain>... -- <must not contain>...
  local label=$1 file=$2 ok=1 neg=0
  shift 2
  for p in "$@"; do
    if [ "$p" = -- ]; then neg=1; continue; fi
    if grep -qF -- "$p" "$file"; then [ $neg = 1 ] && { echo "FAIL: $label shows '$p'"; ok=0; }
    else [ $neg = 0 ] && { echo "FAIL: $label lacks '$p'"; ok=0; }; fi
  done
  [ $ok = 1 ] && echo "ok:   $label" || failures=$((failures + 1))
}
"$MBCHECK" check epi-load --help >"$tmp/help" 2>&1 || { echo "FAIL: check epi-load --help exited $?"; failures=$((failures + 1)); }
help_has "check epi-load --help: epi-load's shape flags with defaults" "$tmp/help" "Shape flags of epi-load:" \
  "pipeline stages (1..8) (default 2)" "tiles of C to stream through the pipeline (0: no work; fewer than --ctas: a CTA with none) (default 8)" "one of: none, consumer-count-plus-one" \
  -- "shape flag (see list)" "--n " "--consumers" "bundled"
"$MBCHECK" check --help >"$tmp/help" 2>&1
help_has "check --help: every protocol's shape flags, each with its protocols" "$tmp/help" "--n TEXT" "shape flag of readers, lastzero" \
  "mbcheck check PROTOCOL --help" -- "shape flag (see list)" "bundled"
"$FIXTURE" run handoff-lite --help >"$tmp/help" 2>&1
help_has "a user's run handoff-lite --help" "$tmp/help" "Usage: $(basename "$FIXTURE") run" \
  "handoff-lite: thread 0 signals" "--waiters TEXT" "threads that wait (default 1)" "one of: none, endless-loop" -- "bundled" "--stages"
for cmd in list check run; do "$FIXTURE" $cmd --help; done >"$tmp/help" 2>&1
help_has "a user's list/check/run --help call no protocol bundled" "$tmp/help" "$(basename "$FIXTURE") list" -- "bundled" "mbcheck list"

if [ "$failures" -ne 0 ]; then
  echo "$failures CLI check(s) failed"
  exit 1
fi
echo "all CLI checks passed"
