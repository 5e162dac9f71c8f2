#!/usr/bin/env bash
# The GPU run: builds the device executables for sm_90a, runs every gpu test, the litmus
# runner, compute-sanitizer (memcheck, racecheck, synccheck) on the correct kernels, and the
# benchmark; writes logs under $OUT (default build/gpu-out). Run from the repository root on
# a machine with an H100/H200 and CUDA 13 (nvcc at /usr/local/cuda/bin). Needs only CUDA and
# this repository: no Boost, Catch2 or fmt (the GPU image has none), so it calls nvcc
# directly; where the host dependencies exist, `cmake --preset gpu && ctest --preset gpu`
# builds and runs the same executables.
# Files under $OUT: summary.txt (read it first), build.log (nvidia-smi, nvcc -Xptxas -v, the
# benchmark kernel's SASS), gpu-tests.log, litmus_observed.txt, traces.txt, sanitizer.log,
# bench.log, misuse-rules.txt (test_misuse_rules --list), misuse-rules.sass.
# RUN_GPU_ONLY=cutlass or RUN_GPU_ONLY=rules runs one section alone; unset runs everything.
# Exit status: 0 when every test passed and every sanitizer was clean (recorded runs aside).
set -u
cd "$(dirname "$0")/.."
export PATH=/usr/local/cuda/bin:$PATH
OUT=${OUT:-build/gpu-out}
BIN=build/gpu-nvcc
mkdir -p "$OUT" "$BIN"
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
status=0
note() { echo "$*" | tee -a "$SUMMARY"; }
# step NAME LOG CMD...: runs CMD, appends its output to LOG, records pass/fail in the summary.
step() {
  local name=$1 log=$2
  shift 2
  local t0
  t0=$(date +%s.%N)
  echo "== $name: $*" >>"$log"
  "$@" >>"$log" 2>&1
  local rc=$?
  note "$name: $([ $rc -eq 0 ] && echo PASS || echo "FAIL (exit $rc)") ($(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s)"
  [ $rc -eq 0 ] || status=1
  return $rc
}

nvidia-smi >"$OUT/build.log" 2>&1
note "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1)"
note "nvcc: $(nvcc --version | tail -1)"

NVCC_FLAGS=(-std=c++20 -O3 -gencode=arch=compute_90a,code=sm_90a --Werror=all-warnings -I. -Xptxas -v)
# RUN_GPU_ONLY=cutlass: only the CUTLASS steps at the end; RUN_GPU_ONLY=rules: only the misuse
# rules and proxy litmus section (neither changes what the rest of the run does). Unset: all.
ONLY=${RUN_GPU_ONLY:-}
case "$ONLY" in
  "" | cutlass | rules) ;;
  *) note "RUN_GPU_ONLY=$ONLY: unknown (cutlass, rules, or unset for everything)"; exit 2 ;;
esac
RULE_EXES="test_misuse_rules test_proxy_litmus"
if [ -z "$ONLY" ]; then
built=1
for exe in test_residual_add test_spec_paths test_warp_specialized test_clusters test_sync_ops test_conformance litmus_runner \
  trace_residual_add bench_residual_add $RULE_EXES; do
  step "build $exe" "$OUT/build.log" nvcc "${NVCC_FLAGS[@]}" "device/$exe.cu" -o "$BIN/$exe" || built=0
done
[ $built -eq 1 ] || { note "build failed: see build.log"; exit 1; }
cuobjdump --dump-sass "$BIN/bench_residual_add" 2>&1 |
  awk '/Function : .*residual_add/{p=1} /Function : .*fill_inputs/{p=0} p' >"$BIN/sass.txt"
note "sass (bench residual_add): $(grep -c 'LDG.E.128' "$BIN/sass.txt") LDG.128, $(grep -c 'STG.E.128' "$BIN/sass.txt") STG.128, $(grep -c 'LDS.128' "$BIN/sass.txt") LDS.128, $(grep -c UBLKCP "$BIN/sass.txt") UBLKCP"
cat "$BIN/sass.txt" >>"$OUT/build.log"

step "gpu test residual-add (shapes, stages 1..4, ragged, mutation under watchdog)" "$OUT/gpu-tests.log" \
  "$BIN/test_residual_add"
grep -E "^(case|mutation|PASS|FAIL)" "$OUT/gpu-tests.log" | tail -3 >>"$SUMMARY"

# The bug zoo on hardware, each mutation in its own process (a trap must not take the rest
# down): deadlocks must end by the watchdog; the others are recorded next to the emulator's
# verdict, with racecheck's summary for the racy ones. Then a correct run: the GPU is healthy.
MUTATIONS="consumer-count-plus-one producer-start-phase-0 producer-skips-empty-wait release-before-read
  tx-overcount tx-undercount-split single-stage-wrong-parity double-arrive explicit-without-signal use-before-init
  reinit-live all-lanes-produce"
for m in $MUTATIONS; do
  step "mutation $m" "$OUT/gpu-tests.log" "$BIN/test_residual_add" --mutation "$m"
  grep "^mutation $m " "$OUT/gpu-tests.log" | tail -1 >>"$SUMMARY"
done
for m in producer-skips-empty-wait release-before-read tx-undercount-split double-arrive; do
  echo "== racecheck on mutation $m (recorded, not a pass/fail)" >>"$OUT/sanitizer.log"
  compute-sanitizer --tool racecheck "$BIN/test_residual_add" --mutation "$m" >>"$OUT/sanitizer.log" 2>&1
  note "racecheck mutation $m: $(grep -E 'RACECHECK SUMMARY' "$OUT/sanitizer.log" | tail -1)"
done
step "correct kernels after the mutations" "$OUT/gpu-tests.log" "$BIN/test_residual_add" --quick
step "gpu test spec paths (every pipeline API form, every Mbarrier member)" "$OUT/gpu-tests.log" "$BIN/test_spec_paths"
grep -E "^(pipeline_paths|mbarrier_ops)" "$OUT/gpu-tests.log" | tail -4 >>"$SUMMARY"

step "gpu test warp-specialized (ping-pong: phase bits + named barriers; try-then-wait statuses)" "$OUT/gpu-tests.log" \
  timeout 120 "$BIN/test_warp_specialized"
grep -E "^(pingpong|tma-pipeline|PASS|FAIL)" "$OUT/gpu-tests.log" | tail -6 >>"$SUMMARY"
for tool in racecheck synccheck; do
  step "compute-sanitizer $tool warp-specialized --quick" "$OUT/sanitizer.log" \
    timeout 300 compute-sanitizer --tool "$tool" --error-exitcode 3 "$BIN/test_warp_specialized" --quick
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/sanitizer.log" | tail -1 >>"$SUMMARY"
done

# Clusters: cluster-gemm 2x1/2x2 bit-exact, its deadlocking mutations under the watchdog, the
# cluster and collective litmus tests; the sanitizers on the correct kernels; the lifetime
# misuse alone in its own process (what the hardware does is recorded, not judged).
step "gpu test clusters (cluster-gemm, mutations, litmus)" "$OUT/gpu-tests.log" timeout 240 "$BIN/test_clusters"
grep -E "^(cluster-gemm|litmus|PASS|FAIL)" "$OUT/gpu-tests.log" | tail -15 >>"$SUMMARY"
step "compute-sanitizer synccheck clusters --quick" "$OUT/sanitizer.log" \
  timeout 300 compute-sanitizer --tool synccheck --error-exitcode 3 "$BIN/test_clusters" --quick
grep -E "ERROR SUMMARY" "$OUT/sanitizer.log" | tail -1 >>"$SUMMARY"
# Recorded, not pass/fail: racecheck does not follow bar.arrive -> bar.sync, which orders the
# named-barrier shape's shared tile (device/RESULTS.md, 2026-12-01, "clusters and collectives").
echo "== racecheck clusters --quick (recorded)" >>"$OUT/sanitizer.log"
timeout 300 compute-sanitizer --tool racecheck "$BIN/test_clusters" --quick >>"$OUT/sanitizer.log" 2>&1
note "racecheck clusters --quick (recorded): $(grep -E 'RACECHECK SUMMARY' "$OUT/sanitizer.log" | tail -1)"

echo "== lifetime misuse (recorded, not a pass/fail)" >>"$OUT/gpu-tests.log"
timeout 60 "$BIN/test_clusters" --lifetime >>"$OUT/gpu-tests.log" 2>&1
note "lifetime misuse: exit $? $(grep '^lifetime' "$OUT/gpu-tests.log" | tail -1)"
for tool in memcheck synccheck; do
  echo "== $tool on the lifetime misuse (recorded)" >>"$OUT/sanitizer.log"
  timeout 120 compute-sanitizer --tool "$tool" "$BIN/test_clusters" --lifetime >>"$OUT/sanitizer.log" 2>&1
  note "$tool lifetime misuse: $(grep -E 'ERROR SUMMARY' "$OUT/sanitizer.log" | tail -1)"
done
# The other misuses the emulator reports that hardware can show something for, each alone
# under a timeout (a hang ends as exit 124), with synccheck's word on each.
for m in "test_clusters local-arrive-on-peer" "test_clusters unfenced-init" "test_sync_ops named-count-mismatch" \
  "test_sync_ops syncwarp-without-self"; do
  set -- $m
  echo "== misuse $2 (recorded, not a pass/fail)" >>"$OUT/gpu-tests.log"
  timeout 30 "$BIN/$1" --misuse "$2" >>"$OUT/gpu-tests.log" 2>&1
  rc=$?
  note "misuse $2: exit $rc$([ $rc -eq 124 ] && echo ' (hung: ended by the timeout)') $(grep "^misuse $2" "$OUT/gpu-tests.log" | tail -1)"
  echo "== synccheck on misuse $2 (recorded)" >>"$OUT/sanitizer.log"
  timeout 60 compute-sanitizer --tool synccheck "$BIN/$1" --misuse "$2" >>"$OUT/sanitizer.log" 2>&1
  note "  synccheck: exit $? $(grep -E 'ERROR SUMMARY' "$OUT/sanitizer.log" | tail -1)"
done
step "correct kernels after the lifetime misuse" "$OUT/gpu-tests.log" timeout 120 "$BIN/test_clusters" --quick
# cp.async + cp.async.mbarrier.arrive, bulk wait_group.read 1, bar.red, named-barrier
# counting, OrderedSequenceBarrier (a bar.sync that never completes would hang: timeout).
step "gpu test sync ops (cp.async arrive, wait_group 1, bar.red, named counting, ordered sequence)" \
  "$OUT/gpu-tests.log" timeout 120 "$BIN/test_sync_ops"
grep -E "^(litmus|named-barrier|PASS|FAIL)" "$OUT/gpu-tests.log" | tail -11 >>"$SUMMARY"
step "compute-sanitizer racecheck sync ops --quick" "$OUT/sanitizer.log" \
  timeout 300 compute-sanitizer --tool racecheck --error-exitcode 3 "$BIN/test_sync_ops" --quick
grep -E "RACECHECK SUMMARY" "$OUT/sanitizer.log" | tail -1 >>"$SUMMARY"
# Recorded, not pass/fail: synccheck reports "Missing wait" for the incrementing
# cp.async.mbarrier.arrive beside a plain arrive (device/RESULTS.md, 2026-12-01, "clusters
# and collectives").
echo "== synccheck sync ops --quick (recorded)" >>"$OUT/sanitizer.log"
timeout 300 compute-sanitizer --tool synccheck "$BIN/test_sync_ops" --quick >>"$OUT/sanitizer.log" 2>&1
note "synccheck sync ops --quick (recorded): $(grep -c 'Missing wait' "$OUT/sanitizer.log") 'Missing wait' reports so far in sanitizer.log; $(grep -E 'ERROR SUMMARY' "$OUT/sanitizer.log" | tail -1)"


# The Platform contract's conformance tests (spec/conformance/, the same source the host runs in
# tests/test_conformance.cpp): each test's defined outcome in every one of CONFORMANCE_LAUNCHES
# launches, one line per test. Then the recorded programs (outcomes PTX's text leaves undefined,
# such as elect.sync with exited lanes in the mask), alone under a timeout (one may hang):
# recorded, not pass/fail.
step "gpu test conformance (spec/conformance: the contract's defined outcomes)" "$OUT/gpu-tests.log" \
  timeout 120 "$BIN/test_conformance" "${CONFORMANCE_LAUNCHES:-100}"
grep -E "^conformance" "$OUT/gpu-tests.log" | tail -11 >>"$SUMMARY"
for i in 0 1 2 3 4 5 6 7; do  # each recorded test in its own process: one may hang
  echo "== conformance --recorded, test $i (recorded, not a pass/fail)" >>"$OUT/gpu-tests.log"
  timeout 60 "$BIN/test_conformance" --recorded "${CONFORMANCE_LAUNCHES:-100}" "$i" >"$OUT/recorded.txt" 2>&1
  rc=$?
  cat "$OUT/recorded.txt" >>"$OUT/gpu-tests.log"
  [ $rc -eq 2 ] && break  # no test of that index
  note "conformance recorded $i: exit $rc$([ $rc -eq 124 ] && echo ' (hung: ended by the timeout)') $(grep '^recorded' "$OUT/recorded.txt" | tail -1)"
done
rm -f "$OUT/recorded.txt"

step "gpu litmus runner" "$OUT/gpu-tests.log" "$BIN/litmus_runner" "$OUT/litmus_observed.txt" "${LITMUS_LAUNCHES:-25}"
tail -1 "$OUT/gpu-tests.log" >>"$SUMMARY"

# Barrier logs for the host replay (tests/trace/trace_replay.cpp: mbcheck_trace_replay FILE).
step "gpu trace recorder" "$OUT/gpu-tests.log" "$BIN/trace_residual_add" "$OUT/traces.txt"
tail -1 "$OUT/gpu-tests.log" >>"$SUMMARY"

for tool in memcheck racecheck synccheck; do
  step "compute-sanitizer $tool residual-add --quick" "$OUT/sanitizer.log" \
    compute-sanitizer --tool "$tool" --error-exitcode 3 "$BIN/test_residual_add" --quick
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/sanitizer.log" | tail -1 >>"$SUMMARY"
done

step "benchmark residual-add vs cudaMemcpy" "$OUT/bench.log" "$BIN/bench_residual_add" "${BENCH_LOG2N:-29}" \
  "${BENCH_RUNS:-30}"
grep -E "^(cudaMemcpy|best|PASS|FAIL)" "$OUT/bench.log" >>"$SUMMARY"

fi  # RUN_GPU_ONLY unset

# The emulator's misuse rules on hardware (device/test_misuse_rules.cu): the baseline (each
# rule's kernel with its misuse removed) is a step; each misuse then runs alone under a timeout
# (a hang ends as exit 124; a fault is that process's alone), recorded with its exit status and
# its line, then under synccheck with the error summary and the first error it reports. Then the
# proxy litmus (device/test_proxy_litmus.cu), a measurement, with racecheck per fencing.
# Recorded, not pass/fail, except the two baseline steps.
if [ -z "$ONLY" ] || [ "$ONLY" = rules ]; then
  if [ "$ONLY" = rules ]; then
    built=1
    for exe in $RULE_EXES; do
      step "build $exe" "$OUT/build.log" nvcc "${NVCC_FLAGS[@]}" "device/$exe.cu" -o "$BIN/$exe" || built=0
    done
    [ $built -eq 1 ] || { note "build failed: see build.log"; exit 1; }
  fi
  step "gpu test misuse-rules baseline (every rule's kernel, misuse removed)" "$OUT/gpu-tests.log" \
    timeout 120 "$BIN/test_misuse_rules"
  grep -E "^(baseline .*: WRONG|(PASS|FAIL): [0-9]+ of [0-9]+ baselines wrong)" "$OUT/gpu-tests.log" | tail -25 >>"$SUMMARY"
  "$BIN/test_misuse_rules" --list >"$OUT/misuse-rules.txt" 2>&1
  # How ptxas encoded wait_group.read 8 and the two bar instructions of the divergent kernel.
  cuobjdump --dump-sass "$BIN/test_misuse_rules" >"$OUT/misuse-rules.sass" 2>&1
  note "misuse rules: $(grep -vc '^not expressible' "$OUT/misuse-rules.txt") kernels, $(grep -c '^not expressible' "$OUT/misuse-rules.txt") forms ptxas rejects (misuse-rules.txt)"
  rules=$(grep -v '^not expressible' "$OUT/misuse-rules.txt" | cut -d' ' -f1)
  for m in $rules; do
    echo "== misuse rule $m (recorded, not a pass/fail)" >>"$OUT/gpu-tests.log"
    timeout -k 10 30 "$BIN/test_misuse_rules" --misuse "$m" >"$OUT/rule.txt" 2>&1
    rc=$?
    cat "$OUT/rule.txt" >>"$OUT/gpu-tests.log"
    line=$(grep "^misuse $m " "$OUT/rule.txt" | tail -1)
    result=${line#*): }  # after "misuse NAME (emulator: KIND): "
    kind=${line#*emulator: }
    note "rule $m (emulator ${kind%%)*}): exit $rc$([ $rc -eq 124 ] || [ $rc -eq 137 ] && echo ' (hung: ended by the timeout)'); ${result#*: }"
    echo "== synccheck on misuse rule $m (recorded)" >>"$OUT/sanitizer.log"
    timeout -k 10 60 compute-sanitizer --tool synccheck "$BIN/test_misuse_rules" --misuse "$m" >"$OUT/rule.txt" 2>&1
    rc=$?
    cat "$OUT/rule.txt" >>"$OUT/sanitizer.log"
    first=$(grep -E '^========= [A-Za-z]' "$OUT/rule.txt" | grep -vE 'COMPUTE-SANITIZER|ERROR SUMMARY' | head -1)
    note "  synccheck $m: exit $rc; $(grep -E 'ERROR SUMMARY' "$OUT/rule.txt" | tail -1 | sed 's/^========= //')${first:+; first: ${first#========= }}"
  done
  step "misuse-rules baseline after the misuses" "$OUT/gpu-tests.log" timeout 120 "$BIN/test_misuse_rules"
  step "gpu litmus proxy (generic read/ldmatrix then async write, generic write then bulk store; fenced, unfenced)" \
    "$OUT/gpu-tests.log" timeout 300 "$BIN/test_proxy_litmus" "${PROXY_LITMUS_ROUNDS:-10000}"
  grep -E "^litmus proxy" "$OUT/gpu-tests.log" | tail -6 >>"$SUMMARY"
  for f in fenced unfenced; do
    echo "== racecheck proxy litmus --quick --only $f (recorded)" >>"$OUT/sanitizer.log"
    timeout -k 10 300 compute-sanitizer --tool racecheck "$BIN/test_proxy_litmus" --quick --only "$f" >"$OUT/rule.txt" 2>&1
    rc=$?
    cat "$OUT/rule.txt" >>"$OUT/sanitizer.log"
    first=$(grep -m1 -E '^========= (Error|Warning)' "$OUT/rule.txt")
    note "racecheck proxy litmus --quick $f (recorded): exit $rc; $(grep -E 'RACECHECK SUMMARY' "$OUT/rule.txt" | tail -1 | sed 's/^========= //')${first:+; first: ${first#========= }}"
  done
  rm -f "$OUT/rule.txt"
fi

# The CUTLASS-style example (examples/cutlass_pipeline): the kernel mbcheck checks on the host
# (ctest -L cutlass), here on the GPU from the same source, its output compared bit for bit.
# CUTLASS's include/ comes from MBCHECK_CUTLASS_DIR, else a copy carried into the checkout as
# third_party_cutlass/ (git-ignored), else ../shared/third_party/cutlass.
if [ "$ONLY" != rules ]; then
CUTLASS_DIR=""
for d in "${MBCHECK_CUTLASS_DIR:-}" third_party_cutlass ../shared/third_party/cutlass; do
  if [ -n "$d" ] && [ -f "$d/include/cutlass/cutlass.h" ]; then CUTLASS_DIR=$d; break; fi
done
if [ -n "$CUTLASS_DIR" ]; then
  step "build tile_copy_gpu (CUTLASS $CUTLASS_DIR)" "$OUT/build.log" nvcc "${NVCC_FLAGS[@]}" --expt-relaxed-constexpr \
    -isystem "$CUTLASS_DIR/include" examples/cutlass_pipeline/tile_copy_gpu.cu -o "$BIN/tile_copy_gpu" &&
    step "gpu test cutlass tile-copy (PipelineTmaAsync, bulk copies, NamedBarrier: bit-exact)" "$OUT/gpu-tests.log" \
      timeout 120 "$BIN/tile_copy_gpu"
  grep -E "^tile-copy" "$OUT/gpu-tests.log" | tail -12 >>"$SUMMARY"
else
  note "cutlass tile-copy: SKIPPED (no CUTLASS tree: set MBCHECK_CUTLASS_DIR or carry one as third_party_cutlass/)"
fi

# Whole CUTLASS GEMMs (examples 48 and 49, TMA epilogue, beta != 0), the kernels tests/cutlass/gemm
# checks on the host: D against CUTLASS's host reference (the "D hash" equals the host check's),
# then compute-sanitizer racecheck and synccheck on each, timed (the step's seconds).
if [ -n "$CUTLASS_DIR" ] && [ -f "$CUTLASS_DIR/tools/util/include/cutlass/util/reference/host/gemm.h" ]; then
  gemm_built=1
  GEMM_NVCC_FLAGS=()  # CUTLASS's headers warn under nvcc: no --Werror for them
  for f in "${NVCC_FLAGS[@]}"; do [ "$f" = --Werror=all-warnings ] || GEMM_NVCC_FLAGS+=("$f"); done
  for g in ex48 ex49; do
    nvcc "${GEMM_NVCC_FLAGS[@]}" --expt-relaxed-constexpr -isystem "$CUTLASS_DIR/include" \
      -isystem "$CUTLASS_DIR/tools/util/include" "device/cutlass_gemm_$g.cu" -o "$BIN/cutlass_gemm_$g" \
      >"$BIN/cutlass_gemm_$g.log" 2>&1 &
  done
  for g in ex48 ex49; do
    wait -n || gemm_built=0
  done
  cat "$BIN"/cutlass_gemm_ex4*.log >>"$OUT/build.log"
  note "build cutlass_gemm_ex48, cutlass_gemm_ex49: $([ $gemm_built -eq 1 ] && echo PASS || echo FAIL)"
  [ $gemm_built -eq 1 ] || status=1
  GEMM_SHAPE=${GEMM_SHAPE:-256 384 128 2}
  for cfg in ex48:ex48-1x1 ex48:ex48-2x1 ex49:ex49-cooperative-1x1 ex49:ex49-cooperative-2x1 ex49:ex49-pingpong-1x1 \
    ex49:ex49-pingpong-2x1; do
    [ $gemm_built -eq 1 ] || break
    exe=$BIN/cutlass_gemm_${cfg%%:*} name=${cfg#*:}
    # shellcheck disable=SC2086
    step "gpu test cutlass gemm $name ($GEMM_SHAPE)" "$OUT/gpu-tests.log" timeout 120 "$exe" "$name" $GEMM_SHAPE
    grep -E "^(PASS|FAIL) $name" "$OUT/gpu-tests.log" | tail -1 >>"$SUMMARY"
    for tool in racecheck synccheck; do
      # shellcheck disable=SC2086
      step "compute-sanitizer $tool cutlass gemm $name" "$OUT/sanitizer.log" \
        compute-sanitizer --tool "$tool" --error-exitcode 3 "$exe" "$name" $GEMM_SHAPE
      grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/sanitizer.log" | tail -1 >>"$SUMMARY"
    done
  done
else
  note "cutlass gemm: SKIPPED (no CUTLASS tree with tools/util/include)"
fi
fi  # RUN_GPU_ONLY != rules

note "overall: $([ $status -eq 0 ] && echo PASS || echo FAIL)"
exit $status
