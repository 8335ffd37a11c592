#!/usr/bin/env bash
# On the GPU machine, from a bundle made by tests/gpu/bundle.sh (carried as .gpu/wt): one call unpacks it, runs the
# stages given (default: tests petsc bench examples), each under its own time limit and with its output capped, and
# leaves every log in one archive, $OUT/logs.tar.xz (the device tool brings back at most 8 files), a summary last.
#   tests     test_gpu, then compute-sanitizer memcheck and racecheck on the small set (run_gpu_tests.sh)
#   petsc     the PETSc suite with the CUDA backend under auto (no valgrind there: those tests are left out)
#   bench     bench_spgemm, the built-in set (BENCH_ARGS adds options, e.g. --reps 5 --only NAME)
#   real      bench_spgemm on the real-matrix set (a bundle made with BUNDLE_REAL=1), --reps 10
#   examples  the main job's program: elasticity + GAMG (-ne 48), the Laplacian + PCMG (-nx 129) and elasticity with
#             BoomerAMG's interpolation inside PCHMG (-ne 32, MAIJ), -resetups 1, with the -log_view lines of the
#             product events
#   ex56      PETSc's ex56 (3D elasticity, GAMG, -ne EX56_NE (63: 786K dof), -two_solves: a re-setup with new values
#             and -pc_gamg_reuse_interpolation): EX56_TYPES (aij aijocean; aijcusparse too with a CUDA PETSc) on
#             EX56_NPS ranks (1 8; ex56 needs a cube number of ranks) sharing the GPU; the stage times of -log_view, the
#             product events and the host-device copy counts
#   mpi       the main job's Laplacian on 4 ranks and elasticity on 8 ranks, sharing the GPU; then PETSc's aij alone
#             on all 16 cores (elasticity -ne MPI16_NE, 63 by default: ex56 itself needs a cube number of ranks)
#   galerkin  the Galerkin products of a real GAMG hierarchy (the main job's elasticity, -ne GAL_NE (63: 786K rows),
#             PETSc's aij setup on the CPU, its MatPtAP timed per level), written as PETSc binary files, then
#             bench_spgemm ptap:... on each level: our PtAP on device-resident operands against cuSPARSE's
#             csr2csc + two SpGEMM, both verified against a host reference
#   workflows (not in the default) every forced workflow (upper_bound, exact, estimate) on WORKFLOW_MATRICES (the real
#             set's mid-size matrices and lap3d_27pt_100 by default), ours only, --reps 5: the phase tables side by
#             side (the exact workflow's numeric phase routes rows by their real sizes, the upper bound's by bounds)
#   profile   (not in the default) Nsight Compute on the row kernels of one benchmark matrix, see below
#   ab        (not in the default; a bundle made with BUNDLE_BASE=REV) this build's bench_spgemm against REV's in turns,
#             and the bundle's variants (BUNDLE_VARIANTS) after them, AB_ROUNDS rounds (2) of AB_MATRICES (built-in or
#             real-set names; rmat_s18_d8, rmat_s16_d32, elast3d_27pt_48x3, lap3d_27pt_100, lap2d_5pt_2048 and seven of
#             the real set by default), --reps AB_REPS (3), ours only, BENCH_ARGS added: medians and base/head (and
#             base/variant) per matrix (tests/gpu/ab_table.py)
set -u
W=$(cd "$(dirname "$0")/../.." && pwd)
cd "$W"
[ -f bin.tar.xz ] && tar xJf bin.tar.xz
[ -f realmat.tar.xz ] && mkdir -p build/realmat && tar xJf realmat.tar.xz -C build/realmat
[ -f bench_base.tar.xz ] && tar xJf bench_base.tar.xz
[ -f bench_variants.tar.xz ] && tar xJf bench_variants.tar.xz
RESULTS=${OUT:-$W/out}
OUT=/tmp/ocean-logs # every stage's logs; packed into $RESULTS/logs.tar.xz at the end
rm -rf "$OUT" && mkdir -p "$OUT" "$RESULTS"
CAP="head -c 4000000" # a program's output beyond this is cut (and the program stopped by the broken pipe)
stages=${*:-tests petsc bench examples}
summary=()
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-16}
have_petsc=0
if [ -f petsc-rt.tar.xz ]; then
  mkdir -p /opt/prt && tar xJf petsc-rt.tar.xz -C /opt/prt && have_petsc=1
fi
export LD_LIBRARY_PATH=/opt/prt/lib:$W/lib:${LD_LIBRARY_PATH:-}
MPI="mpirun --allow-run-as-root --oversubscribe --bind-to none"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
for s in $stages; do
  case $s in
  tests)
    OUT=$OUT timeout 560 bash tests/gpu/run_gpu_tests.sh > "$OUT/tests.txt" 2>&1
    summary+=("tests: exit $?; $(grep -E '^(sanitizer|test_gpu:)' "$OUT/tests.txt" | tr '\n' ';')") ;;
  petsc)
    if [ $have_petsc = 0 ]; then summary+=("petsc: skipped (no PETSc runtime in the bundle)"); continue; fi
    OCEAN_TEST_LOG=$OUT/petsc_failures.log OCEAN_TEST_FILTER='^(core|seq|mpi|errors|hostile|solve|dll)' OCEAN_TEST_SKIP='valgrind' timeout 560 bash tests/run_tests.sh > "$OUT/petsc.txt" 2>&1
    summary+=("petsc (CUDA backend, auto): $(tail -n 1 "$OUT/petsc.txt")") ;;
  bench)
    timeout 560 build/examples/bench_spgemm --csv "$OUT/bench.csv" ${BENCH_ARGS:-} 2>&1 | $CAP > "$OUT/bench.txt"
    summary+=("bench: exit ${PIPESTATUS[0]}; table in bench.txt") ;;
  real)
    if ! ls build/realmat/*.mtx > /dev/null 2>&1; then summary+=("real: skipped (bundle made without BUNDLE_REAL=1)"); continue; fi
    REAL=tpetra_LpLT,xpetra_A,teko_lsc_F_2,teko_lsc_Qu_2,shylu_wathenSmall,zoltan_cage10,teko_szdMat,teko_modified,teko_nsjac,muelu_vardofpernode,zoltan_brack2,metis_copter2,metis_mdual,NotreDame_www
    timeout 300 build/examples/bench_spgemm --reps 10 --csv "$OUT/real.csv" --only $REAL ${BENCH_ARGS:-} build/realmat/*.mtx 2>&1 | $CAP > "$OUT/real.txt"
    summary+=("real: exit ${PIPESTATUS[0]}; table in real.txt") ;;
  workflows)
    WM=${WORKFLOW_MATRICES:-xpetra_A,teko_nsjac,teko_modified,muelu_vardofpernode,metis_copter2,zoltan_brack2,NotreDame_www,lap3d_27pt_100}
    for w in upper_bound exact estimate; do
      echo "== --workflow $w" >> "$OUT/workflows.txt"
      timeout 200 build/examples/bench_spgemm --reps 5 --no-cusparse --workflow $w --only "$WM" --csv "$OUT/workflow_$w.csv" \
        $(ls build/realmat/*.mtx 2> /dev/null) 2>&1 | $CAP >> "$OUT/workflows.txt"
      echo "exit ${PIPESTATUS[0]}" >> "$OUT/workflows.txt"
    done
    summary+=("workflows: see workflows.txt") ;;
  examples)
    if [ $have_petsc = 0 ]; then summary+=("examples: skipped (no PETSc runtime in the bundle)"); continue; fi
    for p in "-ne 48" "-problem laplace -nx 129" "-ne 32 -pc_type hmg -hmg_inner_pc_type hypre -pc_mg_galerkin pmat -pc_hmg_use_subspace_coarsening"; do
      timeout 270 build/examples/elasticity_amg $p -resetups 1 -log_view > "$OUT/example.txt" 2>&1
      grep -E "^(petsc-ocean|mat_type|aij|speedup)" "$OUT/example.txt" | tee -a "$OUT/examples.txt"
      grep -E "^(MatOcean|MatPtAP|MatMatMult|MatTrnMatMult)" "$OUT/example.txt" | cut -c1-100 | tee -a "$OUT/examples.txt"
    done
    summary+=("examples: see examples.txt") ;;
  ex56)
    if [ $have_petsc = 0 ]; then summary+=("ex56: skipped (no PETSc runtime in the bundle)"); continue; fi
    EX56="build/examples/ksp_ex56 -ne ${EX56_NE:-63} -alpha 1.e-3 -ksp_type cg -pc_type gamg -pc_gamg_agg_nsmooths 1 -pc_gamg_reuse_interpolation true -two_solves
          -use_mat_nearnullspace -ksp_converged_reason -ksp_rtol 1e-8 -log_view"
    for np in ${EX56_NPS:-1 8}; do
      for t in ${EX56_TYPES:-aij aijocean}; do
        extra=""; [ $t = aijocean ] && extra="-dll_append $W/lib/libpetscocean.so -mat_type aijocean"
        [ $t = aijcusparse ] && extra="-mat_type aijcusparse -vec_type cuda -use_gpu_aware_mpi 0"
        echo "== ex56 -ne ${EX56_NE:-63} $t, $np rank(s)" >> "$OUT/ex56.txt"
        OMP_NUM_THREADS=$((16 / np)) timeout 200 $MPI -n $np $EX56 $extra > "$OUT/ex56_${t}_$np.txt" 2>&1
        echo "exit $?" >> "$OUT/ex56.txt"
        grep -E "Linear solve|^ *[0-9]: +(Main Stage|Setup|Solve|2nd Setup|2nd Solve):|^(MatPtAP|MatMatMult|MatTransposeMatMult|MatProduct|MatOcean|MatCUSPARSCopyTo|MatCUSPARSCopyFr|MatCUSPARSSolve)" "$OUT/ex56_${t}_$np.txt" | cut -c1-240 >> "$OUT/ex56.txt"
      done
    done
    summary+=("ex56: see ex56.txt") ;;
  galerkin)
    if [ $have_petsc = 0 ]; then summary+=("galerkin: skipped (no PETSc runtime in the bundle)"); continue; fi
    G=/tmp/galerkin && rm -rf $G && mkdir -p $G
    timeout 200 build/examples/elasticity_amg -ne ${GAL_NE:-63} -mat_types aij -ksp_max_it 1 -dump_galerkin $G > "$OUT/galerkin_dump.txt" 2>&1
    grep "^galerkin level" "$OUT/galerkin_dump.txt" | tee "$OUT/galerkin.txt"
    args=""; for a in $G/galerkin*_A.bin; do args="$args ptap:$a:${a%_A.bin}_P.bin"; done
    timeout 300 build/examples/bench_spgemm --only 'ptap_*' --reps ${GAL_REPS:-5} --csv "$OUT/galerkin.csv" $args 2>&1 | $CAP >> "$OUT/galerkin.txt"
    summary+=("galerkin: exit ${PIPESTATUS[0]}; see galerkin.txt") ;;
  mpi)
    if [ $have_petsc = 0 ]; then summary+=("mpi: skipped (no PETSc runtime in the bundle)"); continue; fi
    OMP_NUM_THREADS=4 timeout 200 $MPI -n 4 build/examples/elasticity_amg -problem laplace -nx 129 -resetups 1 > "$OUT/mpi_laplace4.txt" 2>&1
    echo "laplace 4 ranks: exit $?" >> "$OUT/mpi.txt"
    grep -E "^(petsc-ocean|mat_type|aij|speedup)" "$OUT/mpi_laplace4.txt" >> "$OUT/mpi.txt"
    OMP_NUM_THREADS=2 timeout 200 $MPI -n 8 build/examples/elasticity_amg -ne 48 -resetups 1 > "$OUT/mpi_elast8.txt" 2>&1
    echo "elasticity 8 ranks: exit $?" >> "$OUT/mpi.txt"
    grep -E "^(petsc-ocean|mat_type|aij|speedup)" "$OUT/mpi_elast8.txt" >> "$OUT/mpi.txt"
    OMP_NUM_THREADS=1 timeout 200 $MPI -n 16 build/examples/elasticity_amg -ne ${MPI16_NE:-63} -mat_types aij -resetups 1 > "$OUT/mpi_elast16_aij.txt" 2>&1
    echo "elasticity -ne ${MPI16_NE:-63}, aij on 16 ranks: exit $?" >> "$OUT/mpi.txt"
    grep -E "^(petsc-ocean|mat_type|aij|speedup)" "$OUT/mpi_elast16_aij.txt" >> "$OUT/mpi.txt"
    summary+=("mpi: see mpi.txt") ;;
  ab)
    if [ ! -x bench_base ]; then summary+=("ab: skipped (no bench_base: a bundle made without BUNDLE_BASE)"); continue; fi
    AM=${AB_MATRICES:-rmat_s18_d8,rmat_s16_d32,elast3d_27pt_48x3,lap3d_27pt_100,lap2d_5pt_2048,xpetra_A,teko_szdMat,teko_nsjac,muelu_vardofpernode,zoltan_brack2,metis_copter2,NotreDame_www}
    for r in $(seq "${AB_ROUNDS:-2}"); do
      for v in head base $(awk '{print $1}' variants/revs 2> /dev/null); do
        exe=build/examples/bench_spgemm; [ $v = base ] && exe=./bench_base
        [ -x variants/bench_$v ] && exe=variants/bench_$v
        timeout 250 $exe --only "$AM" --reps "${AB_REPS:-3}" --warmup 1 --no-cusparse ${BENCH_ARGS:-} --csv "$OUT/ab_${v}_$r.csv" \
          $(ls build/realmat/*.mtx 2> /dev/null) 2>&1 | $CAP > "$OUT/ab_${v}_$r.txt"
        echo "ab $v round $r: exit ${PIPESTATUS[0]}" >> "$OUT/ab.txt"
      done
    done
    [ -f variants/revs ] && sed 's/^/variant /' variants/revs >> "$OUT/ab.txt"
    python3 tests/gpu/ab_table.py "$OUT" "$(cat bench_base.rev 2> /dev/null)" >> "$OUT/ab.txt" 2>&1
    summary+=("ab: see ab.txt") ;;
  profile)
    # ncu on the row kernels of one matrix (PROFILE_MATRIX, default rmat_s16_d32; PROFILE_KERNELS a regex, PROFILE_COUNT
    # launches): duration, registers, occupancy, instructions, warp states, for the R-MAT regression's comparison
    # (the numeric-only kernels: PROFILE_KERNELS='MapValues|Known|Narrow'; BENCH_ARGS adds options).
    # PROFILE_TRACE=1: only each kernel's duration, for every kernel of ours (and CUB's), one ocean run per matrix
    # (a comma list in PROFILE_MATRIX; BENCH_ARGS adds options), cuSPARSE not run: where an end-to-end time goes.  Clocks left alone.
    # a matrix of the real set (BUNDLE_REAL=1) is read from its file
    NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
    mfile() { [ -f "build/realmat/$1.mtx" ] && echo "build/realmat/$1.mtx"; }
    if [ "${PROFILE_TRACE:-0}" = 1 ]; then
      for m in $(echo "${PROFILE_MATRIX:-lap2d_5pt_2048}" | tr ',' ' '); do
        timeout 280 "$NCU" --clock-control none -k regex:"${PROFILE_KERNELS:-Ocean|cub}" --metrics gpu__time_duration.sum --csv \
          build/examples/bench_spgemm --only "$m" --reps 1 --warmup 1 --no-cusparse ${BENCH_ARGS:-} $(mfile "$m") 2>&1 | $CAP > "$OUT/trace_$m.csv"
        echo "== $m (exit ${PIPESTATUS[0]})" >> "$OUT/profile.txt"
        # per kernel name (templates kept): launches and total microseconds, largest first
        python3 - "$OUT/trace_$m.csv" >> "$OUT/profile.txt" <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1], errors="replace")) if len(r) > 10]
if not rows: sys.exit(0)
h = rows[0]; k = h.index("Kernel Name"); u = h.index("Metric Unit"); v = h.index("Metric Value")
tot = collections.defaultdict(float); cnt = collections.Counter()
US = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3}
for r in rows[1:]:
    if r[u] not in US: continue
    x = float(r[v].replace(",", "")) * US[r[u]]
    name = r[k].split("(")[0][:90]; tot[name] += x; cnt[name] += 1
for name, x in sorted(tot.items(), key=lambda t: -t[1]): print("%10.1f us %4d  %s" % (x, cnt[name], name))
all_us = sum(tot.values()); print("%10.1f us total (both runs: the first and the timed one)" % all_us)
b = h.index("Block Size") if "Block Size" in h else None; g = h.index("Grid Size") if "Grid Size" in h else None
print("launches over 1% of the total, in order (block, grid):")
for r in rows[1:]:
    if r[u] not in US: continue
    x = float(r[v].replace(",", "")) * US[r[u]]
    if x > 0.01 * all_us: print("%10.1f us  %-40s %s %s" % (x, r[k].split("(")[0][:40], r[b] if b is not None else "", r[g] if g is not None else ""))
PY
      done
      summary+=("profile (trace): see profile.txt"); continue
    fi
    # PROFILE_SOURCE=1 also samples warp stalls per SASS instruction (SourceCounters): source.txt and sass_*.txt below;
    # PROFILE_SKIP=N leaves out the first N matching launches
    src=(); [ "${PROFILE_SOURCE:-0}" = 1 ] && src=(--section SourceCounters -o "$OUT/prof" -f)
    [ -n "${PROFILE_SKIP:-}" ] && src+=(--launch-skip "$PROFILE_SKIP")
    timeout 400 "$NCU" --clock-control none -k regex:"${PROFILE_KERNELS:-OceanKernelRows|OceanKernelKnown}" -c "${PROFILE_COUNT:-12}" --section SpeedOfLight --section Occupancy \
      --section LaunchStats --section WarpStateStats --section InstructionStats --section MemoryWorkloadAnalysis "${src[@]}" build/examples/bench_spgemm --only "${PROFILE_MATRIX:-rmat_s16_d32}" --reps 1 --warmup 1 --no-cusparse \
      ${BENCH_ARGS:-} --csv "$OUT/profile_bench.csv" $(mfile "${PROFILE_MATRIX:-rmat_s16_d32}") 2>&1 | $CAP > "$OUT/profile.txt"
    rc=${PIPESTATUS[0]}
    if [ -f "$OUT/prof.ncu-rep" ]; then
      # the source page is megabytes per launch: tests/gpu/ncu_source_summary.py keeps each launch's busiest basic
      # blocks and stall sites (source.txt) and the whole listing of the two largest launches (sass_*.txt)
      timeout 100 "$NCU" -i "$OUT/prof.ncu-rep" --page source --csv --print-source sass 2>/dev/null |
        python3 tests/gpu/ncu_source_summary.py --full "$OUT" | $CAP > "$OUT/source.txt"
      timeout 100 "$NCU" -i "$OUT/prof.ncu-rep" --print-details all 2>&1 | $CAP >> "$OUT/profile.txt"
      rm -f "$OUT/prof.ncu-rep"
    fi
    summary+=("profile: exit $rc; $(grep -cE '^  (void )?Ocean\w*(<[0-9]+>)?\(' "$OUT/profile.txt") kernel launches in profile.txt") ;;
  *) summary+=("$s: unknown stage") ;;
  esac
done
printf '%s\n' "${summary[@]}" | tee "$OUT/summary.txt"
tar cJf "$RESULTS/logs.tar.xz" -C "$(dirname "$OUT")" "$(basename "$OUT")"
