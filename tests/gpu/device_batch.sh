#!/usr/bin/env bash
# On the GPU machine, from a bundle made by tests/gpu/bundle.sh (carried as .gpu/wt): one call runs the stages given
# (default: tests petsc bench examples), each under its own time limit, logs into $OUT, a summary last.
#   tests     test_gpu, then compute-sanitizer memcheck and racecheck on the small set (run_gpu_tests.sh)
#   petsc     the PETSc suite with the CUDA backend under auto (no valgrind there: those tests are left out)
#   bench     bench_spgemm, the built-in set (BENCH_ARGS adds options, e.g. --reps 5 --only NAME)
#   examples  the main job's program: elasticity + GAMG (-ne 48) and the Laplacian + PCMG (-nx 129), -resetups 1,
#             with the -log_view lines of the product events
#   profile   (not in the default) Nsight Compute on the row kernels of one benchmark matrix, see below
set -u
W=$(cd "$(dirname "$0")/../.." && pwd)
cd "$W"
OUT=${OUT:-$W/out}
mkdir -p "$OUT"
stages=${*:-tests petsc bench examples}
summary=()
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-16}
have_petsc=0
if [ -f petsc-rt.tar.xz ]; then
  mkdir -p /opt/prt && tar xJf petsc-rt.tar.xz -C /opt/prt && have_petsc=1
fi
export LD_LIBRARY_PATH=/opt/prt/lib:$W/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
for s in $stages; do
  case $s in
  tests)
    OUT=$OUT timeout 560 bash tests/gpu/run_gpu_tests.sh > "$OUT/tests.txt" 2>&1
    summary+=("tests: exit $?; $(grep -E '^(sanitizer|test_gpu:)' "$OUT/tests.txt" | tr '\n' ';')") ;;
  petsc)
    if [ $have_petsc = 0 ]; then summary+=("petsc: skipped (no PETSc runtime in the bundle)"); continue; fi
    OCEAN_TEST_LOG=$OUT/petsc_failures.log OCEAN_TEST_FILTER='^(core|seq|mpi|errors|solve|dll)' OCEAN_TEST_SKIP='valgrind' timeout 560 bash tests/run_tests.sh > "$OUT/petsc.txt" 2>&1
    summary+=("petsc (CUDA backend, auto): $(tail -n 1 "$OUT/petsc.txt")") ;;
  bench)
    timeout 560 build/examples/bench_spgemm --csv "$OUT/bench.csv" ${BENCH_ARGS:-} > "$OUT/bench.txt" 2>&1
    summary+=("bench: exit $?; table in bench.txt") ;;
  examples)
    if [ $have_petsc = 0 ]; then summary+=("examples: skipped (no PETSc runtime in the bundle)"); continue; fi
    for p in "-ne 48" "-problem laplace -nx 129"; do
      timeout 270 build/examples/elasticity_amg $p -resetups 1 -log_view > "$OUT/example.txt" 2>&1
      grep -E "^(petsc-ocean|mat_type|aij|speedup)" "$OUT/example.txt" | tee -a "$OUT/examples.txt"
      grep -E "^(MatOcean|MatPtAP|MatMatMult|MatTrnMatMult)" "$OUT/example.txt" | cut -c1-100 | tee -a "$OUT/examples.txt"
    done
    summary+=("examples: see examples.txt") ;;
  profile)
    # ncu on the row kernels of one matrix (PROFILE_MATRIX, default rmat_s16_d32; PROFILE_KERNELS a regex, PROFILE_COUNT
    # launches): duration, registers, occupancy, instructions, warp states, for the R-MAT regression's comparison
    NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
    timeout 560 "$NCU" -k regex:"${PROFILE_KERNELS:-OceanKernelRows|OceanKernelKnown}" -c "${PROFILE_COUNT:-12}" --section SpeedOfLight --section Occupancy \
      --section LaunchStats --section WarpStateStats --section InstructionStats build/examples/bench_spgemm --only "${PROFILE_MATRIX:-rmat_s16_d32}" --reps 1 --warmup 1 \
      --csv "$OUT/profile_bench.csv" > "$OUT/profile.txt" 2>&1
    summary+=("profile: exit $?; $(grep -cE '^  Ocean' "$OUT/profile.txt") kernel launches in profile.txt") ;;
  *) summary+=("$s: unknown stage") ;;
  esac
done
printf '%s\n' "${summary[@]}"
