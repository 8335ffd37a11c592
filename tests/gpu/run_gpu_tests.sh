#!/usr/bin/env bash
# Runs the GPU tests on a machine with a CUDA device, without rebuilding (build with `make test-gpu` first and
# carry build/).  Logs go to $OUT (or build/tests); the last line is the summary of test_gpu's full run.
#   OCEAN_GPU_SANITIZE=0   skip the compute-sanitizer memcheck run on the small cases
#   OCEAN_GPU_RACECHECK=0  skip the compute-sanitizer racecheck run on the small cases
#   OCEAN_GPU_RACECHECK_ONLY=TEXT[|TEXT...]  racecheck the small cases whose names contain one of the texts; by default
#                          one or two cases of each shared-memory kernel (under racecheck the first 26 cases of the
#                          small set took 240 s on an H100; all of them: OCEAN_GPU_RACECHECK_ONLY=all)
set -u
cd "$(dirname "$0")/../.."
BIN=build/tests/test_gpu
LOGDIR=${OUT:-build/tests}
mkdir -p "$LOGDIR"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-8}
[ -x "$BIN" ] || { echo "missing $BIN: run 'make test-gpu' first" >&2; exit 2; }
nvidia-smi --query-gpu=name,memory.total,clocks.sm --format=csv,noheader 2>/dev/null | tee "$LOGDIR/gpu.txt"
timeout 300 "$BIN" 2>&1 | tee "$LOGDIR/test_gpu.log"; rc=${PIPESTATUS[0]}
rc_san=skipped rc_race=skipped
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
if [ "${OCEAN_GPU_SANITIZE:-1}" != 0 ]; then
  timeout 200 "$CS" --tool memcheck --leak-check full --error-exitcode 3 "$BIN" -small > "$LOGDIR/sanitizer.log" 2>&1; rc_san=$?
  grep -E "^(FAIL|ok)|passed|ERROR SUMMARY|LEAK SUMMARY" "$LOGDIR/sanitizer.log" | tail -n 40
  echo "sanitizer (memcheck, -small): exit $rc_san ($(grep -c '^ok' "$LOGDIR/sanitizer.log") ok lines; $(grep -m1 'ERROR SUMMARY' "$LOGDIR/sanitizer.log"))"
fi
# shared-memory races (the accumulators' teams synchronize with __syncwarp / __syncthreads); OCEAN_GPU_RACECHECK=0 skips it
if [ "${OCEAN_GPU_RACECHECK:-1}" != 0 ]; then
  RACE_DEFAULT="AB lap2d 30^2|AB lap3d27 10^3|AB dense row|AB N0 warp teams (hash|long rows of B walked by block-wide teams, auto|AB LONG rows, dense in global memory, forced exact|LONG rows, hash in global memory|AB heavy rows, auto|multisplit, 2 level(s), exact|AB narrow: long rows into 72|PtAP elasticity device operands|AB product map: walked"
  only=(); [ "${OCEAN_GPU_RACECHECK_ONLY:-}" != all ] && only=(-only "${OCEAN_GPU_RACECHECK_ONLY:-$RACE_DEFAULT}")
  timeout ${OCEAN_GPU_RACECHECK_LIMIT:-300} "$CS" --tool racecheck --error-exitcode 3 "$BIN" -small "${only[@]}" > "$LOGDIR/racecheck.log" 2>&1; rc_race=$?
  echo "sanitizer (racecheck, -small): exit $rc_race ($(grep -c '^ok' "$LOGDIR/racecheck.log") ok lines; $(grep -m1 'RACECHECK SUMMARY\|ERROR SUMMARY' "$LOGDIR/racecheck.log"))"
fi
echo "test_gpu: exit $rc; $(tail -n 1 "$LOGDIR/test_gpu.log")"
[ "$rc" -eq 0 ] && { [ "$rc_san" = skipped ] || [ "$rc_san" -eq 0 ]; } && { [ "$rc_race" = skipped ] || [ "$rc_race" -eq 0 ]; }
