#!/usr/bin/env bash
# The petsc-ocean test suite.  Each test passes when it exits 0 and prints nothing (tests are silent when right),
# except scripted tests, which check what they print.  The last line is "N passed, N failed".
#   OCEAN_TEST_FILTER=regex   run only the tests whose names match
#   OCEAN_TEST_SKIP=regex     skip the tests whose names match (e.g. valgrind where there is none)
#   OCEAN_CASE_TIMEOUT=s      a case still running after s seconds fails (default 900)
#   OCEAN_TEST_LOG=file       where the output of failed tests goes (default build/tests/failures.log)
set -u
cd "$(dirname "$0")/.."
T=build/tests
LOG=${OCEAN_TEST_LOG:-$T/failures.log}
: > "$LOG"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
MPI="mpiexec --allow-run-as-root --oversubscribe"
# PETSc checks its own memory: anything we leak is reported by -malloc_dump
PETSC_COMMON="-malloc_dump -options_left 0"
pass=0; fail=0

skip_test() { # name: true when the filter or the skip list leaves it out
  [[ -n "${OCEAN_TEST_FILTER:-}" && ! "$1" =~ ${OCEAN_TEST_FILTER} ]] && return 0
  [[ -n "${OCEAN_TEST_SKIP:-}" && "$1" =~ ${OCEAN_TEST_SKIP} ]] && return 0
  return 1
}

run_case() { # name np program args...
  local name=$1 np=$2; shift 2
  skip_test "$name" && return
  local out rc start=$SECONDS
  # a case that hangs (e.g. one rank failed while the others wait) fails after OCEAN_CASE_TIMEOUT seconds
  local limit="timeout -k 10 ${OCEAN_CASE_TIMEOUT:-900}"
  if [ "$np" -gt 1 ]; then out=$($limit $MPI -n "$np" "$@" $PETSC_COMMON 2>&1); rc=$?
  else out=$($limit "$@" $PETSC_COMMON 2>&1); rc=$?; fi
  if [ $rc -eq 0 ] && [ -z "$out" ]; then pass=$((pass+1)); printf 'ok   %-44s %3ds\n' "$name" $((SECONDS-start))
  else
    fail=$((fail+1)); printf 'FAIL %-44s (exit %d)\n' "$name" $rc
    { echo "=== $name: $*"; echo "$out"; } >> "$LOG"; echo "$out" | head -n 15 | sed 's/^/     | /'
  fi
}

run_script() { # name command (bash), passes on exit 0
  local name=$1; shift
  skip_test "$name" && return
  local out rc start=$SECONDS
  out=$(bash -c "$*" 2>&1); rc=$?
  if [ $rc -eq 0 ]; then pass=$((pass+1)); printf 'ok   %-44s %3ds\n' "$name" $((SECONDS-start))
  else
    fail=$((fail+1)); printf 'FAIL %-44s (exit %d)\n' "$name" $rc
    { echo "=== $name: $*"; echo "$out"; } >> "$LOG"; echo "$out" | tail -n 15 | sed 's/^/     | /'
  fi
}

P=$T/test_products
# ---- core (no PETSc) ----
run_script core/all "$T/test_core"
# the accuracy bounds (<= 0.15 at 32 registers, <= 0.12 at 64) are asserted inside; the figures land in the file
run_script core/hll-accuracy "$T/test_core -v > $T/core_verbose.txt && \
  grep -A2 'HLL mean relative error' $T/core_verbose.txt | tee $T/hll_accuracy.txt | grep -q elasticity"
run_script core/valgrind "OMP_NUM_THREADS=2 valgrind -q --error-exitcode=1 --suppressions=tests/valgrind.supp --leak-check=full \
  --errors-for-leak-kinds=definite $T/test_core -small"
# the layering: no include or call cycle, nothing in src/core that reaches a backend or the PETSc layer
run_script layers/no-cycles "python3 tests/layers/check_layers.py"

# ---- the CUDA backend against the CPU backend (built with it; only where a CUDA device is, else not counted) ----
if ! skip_test gpu/all; then
  if [ ! -x $T/test_gpu ]; then
    echo "skip gpu/all: no $T/test_gpu (the CUDA backend is not built)"
  elif ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    echo "skip gpu/all: no CUDA device (nvidia-smi -L lists none)"
  else run_script gpu/all "$T/test_gpu"; fi
fi

# ---- sequential products against PETSc's SeqAIJ ----
run_case seq/AB-lap2d            1 $P -product AB -gen_a lap2d -size_a 30 \
  -gen_b lap2d -size_b 30 -expect_workflow upper_bound
run_case seq/AB-lap3d            1 $P -product AB -gen_a lap3d -size_a 12 \
  -gen_b lap3d -size_b 12 -expect_workflow upper_bound
run_case seq/AB-lap3d27          1 $P -product AB -gen_a lap3d27 -size_a 10 -gen_b lap3d27 -size_b 10
run_case seq/AB-elast-estimate   1 $P -product AB -gen_a elast -size_a 8 \
  -gen_b elast -size_b 8 -mat_ocean_small_bound 0 -mat_ocean_one_pass_exact 0 -expect_workflow estimate
run_case seq/AB-elast-one-pass    1 $P -product AB -gen_a elast -size_a 8 \
  -gen_b elast -size_b 8 -mat_ocean_small_bound 0 -expect_workflow exact
run_case seq/AB-rmat             1 $P -product AB -gen_a rmat -size_a 11 -degree_a 8 -gen_b rmat -size_b 11 -degree_b 8
run_case seq/AB-rect             1 $P -product AB -gen_a random -size_a 300 -n_a 500 -degree_a 6 \
  -gen_b random -size_b 500 -n_b 200 -degree_b 5
run_case seq/AB-emptyrows        1 $P -product AB -gen_a emptyrows -size_a 400 -n_a 300 \
  -gen_b random -size_b 300 -n_b 350 -degree_b 4
run_case seq/AB-denserow         1 $P -product AB -gen_a random -size_a 600 -n_a 600 -degree_a 3 -dense_row_a 17 \
  -gen_b random -size_b 600 -n_b 600 -degree_b 4
run_case seq/AB-empty            1 $P -product AB -gen_a empty -size_a 50 -n_a 40 \
  -gen_b random -size_b 40 -n_b 30 -expect_workflow upper_bound
run_case seq/AB-zeroB            1 $P -product AB -gen_a random -size_a 50 -n_a 40 -gen_b empty -size_b 40 -n_b 30
run_case seq/AB-onerow           1 $P -product AB -gen_a random -size_a 1 -n_a 60 -degree_a 20 \
  -gen_b random -size_b 60 -n_b 70 -degree_b 5
run_case seq/AB-1x1              1 $P -product AB -gen_a random -size_a 1 -n_a 1 -degree_a 1 \
  -gen_b random -size_b 1 -n_b 1 -degree_b 1
run_case seq/AB-0x0              1 $P -product AB -gen_a empty -size_a 0 -n_a 0 -gen_b empty -size_b 0 -n_b 0
for wf in upper_bound estimate exact; do
  run_case seq/AB-elast-forced-$wf 1 $P -product AB -gen_a elast -size_a 6 \
    -gen_b elast -size_b 6 -mat_ocean_workflow $wf -expect_workflow $wf
  run_case seq/AB-rmat-forced-$wf  1 $P -product AB -gen_a rmat -size_a 10 -degree_a 16 \
    -gen_b rmat -size_b 10 -degree_b 16 -mat_ocean_workflow $wf -expect_workflow $wf
done
run_case seq/AB-estimate-overflow 1 $P -product AB -gen_a rmat -size_a 10 -degree_a 16 \
  -gen_b rmat -size_b 10 -degree_b 16 -mat_ocean_workflow estimate -mat_ocean_hll_registers 16 \
  -mat_ocean_estimate_coefficient 0.5 -expect_overflow
# the upper bound routed by bound_factor x the longest B row reached (8 by default): elasticity's interior rows
# overflow the smaller tables of factor 1 and are computed again
for f in 1 8; do
  run_case seq/AB-elast-bound-factor-$f 1 $P -product AB -gen_a elast -size_a 8 -gen_b elast -size_b 8 \
    -mat_ocean_workflow upper_bound -mat_ocean_bound_factor $f -reuse -expect_workflow upper_bound \
    $([ $f = 1 ] && echo -expect_overflow)
  run_case seq/AB-rmat-bound-factor-$f 1 $P -product AB -gen_a rmat -size_a 10 -degree_a 16 \
    -gen_b rmat -size_b 10 -degree_b 16 -mat_ocean_workflow upper_bound -mat_ocean_bound_factor $f -reuse \
    -expect_workflow upper_bound
  run_case seq/PtAP-elast-bound-factor-$f 1 $P -product PtAP -gen_a elast -size_a 6 -gen_b agg -size_b 648 \
    -degree_b 8 -mat_ocean_workflow upper_bound -mat_ocean_bound_factor $f -reuse
done
run_case mpi2/AB-elast-bound-factor-1 2 $P -product AB -gen_a elast -size_a 8 -gen_b elast -size_b 8 \
  -mat_ocean_workflow upper_bound -mat_ocean_bound_factor 1 -reuse -expect_overflow
# the selection's upper bound by the rows' likely sizes after the sample (27-point stencil), the exact workflow
# without the factor
run_case seq/AB-lap3d27-selected-likely 1 $P -product AB -gen_a lap3d27 -size_a 16 -gen_b lap3d27 -size_b 16 \
  -mat_ocean_small_bound 0 -reuse -expect_workflow upper_bound
run_case seq/AB-lap3d27-selected-exact 1 $P -product AB -gen_a lap3d27 -size_a 16 -gen_b lap3d27 -size_b 16 \
  -mat_ocean_small_bound 0 -mat_ocean_bound_factor 0 -reuse -expect_workflow exact
run_case mpi3/AB-lap3d27-selected-likely 3 $P -product AB -gen_a lap3d27 -size_a 16 -gen_b lap3d27 -size_b 16 \
  -mat_ocean_small_bound 0 -reuse
run_case seq/AB-small-smem       1 $P -product AB -gen_a elast -size_a 6 \
  -gen_b elast -size_b 6 -mat_ocean_acc_smem_per_sm 16384
run_case seq/AtB-rect            1 $P -product AtB -gen_a random -size_a 400 -n_a 300 -degree_a 5 \
  -gen_b random -size_b 400 -n_b 250 -degree_b 4
run_case seq/AtB-elast           1 $P -product AtB -gen_a elast -size_a 6 -gen_b elast -size_b 6
run_case seq/PtAP-agg            1 $P -product PtAP -gen_a lap3d27 -size_a 10 -gen_b agg -size_b 1000 -degree_b 8
run_case seq/PtAP-elast-rect     1 $P -product PtAP -gen_a elast -size_a 6 \
  -gen_b random -size_b 648 -n_b 90 -degree_b 3 -expect_stage 1
run_case seq/PtAP-maij           1 $P -product PtAP -gen_a elast -size_a 6 \
  -gen_b agg -size_b 216 -degree_b 4 -maij_dof 3 -reuse
# a coarse level: P with 40 well-filled columns takes the narrow workflow in both stages
run_case seq/AB-narrow           1 $P -product AB -gen_a random -size_a 300 -n_a 300 -degree_a 60 \
  -gen_b random -size_b 300 -n_b 40 -degree_b 16 -expect_workflow narrow -reuse
run_case seq/PtAP-narrow         1 $P -product PtAP -gen_a random -size_a 300 -n_a 300 -degree_a 60 \
  -gen_b random -size_b 300 -n_b 40 -degree_b 16 -expect_workflow narrow -expect_stage 1 -reuse
run_case seq/AB-mixed-aij-ocean  1 $P -product AB -gen_a lap3d -size_a 10 -type_a aij \
  -gen_b lap3d -size_b 10 -type_b aijocean
run_case seq/AB-mixed-ocean-aij  1 $P -product AB -gen_a lap3d -size_a 10 -type_a aijocean \
  -gen_b lap3d -size_b 10 -type_b aij
run_case seq/PtAP-mixed-ocean-aij 1 $P -product PtAP -gen_a lap3d27 -size_a 8 \
  -gen_b agg -size_b 512 -degree_b 8 -type_b aij
run_case seq/AB-reuse            1 $P -product AB -gen_a elast -size_a 6 -gen_b elast -size_b 6 -reuse
# device matrices (-mat_ocean_device_matrices in PETSC_OPTIONS, a CUDA PETSc and a device), PETSc's own copy
# counters: after a MatScale on the device the numeric products copy nothing between host and device; the symbolic
# products, operands on the device, upload nothing (C's device copy made from the plan's on the device: a CUDA PETSc
# from its source tree, make info's "C on device: yes"), only C's structure comes to the host
for c in AB-reuse-no-copies PtAP-reuse-no-copies AB-initial-no-uploads AtB-initial-no-uploads PtAP-initial-no-uploads; do
  p=${c%%-*}
  if [[ "${PETSC_OPTIONS:-}" == *-mat_ocean_device_matrices* ]]; then
    if [ $p = PtAP ]; then g="-gen_b agg -size_b 648 -degree_b 6"; else g="-gen_b elast -size_b 6"; fi
    if [[ $c == *no-copies ]]; then x=-expect_no_copies; else x=-expect_no_uploads; fi
    run_case seq/$c 1 $P -product $p -gen_a elast -size_a 6 $g -reuse $x
  else
    skip_test seq/$c || echo "skip seq/$c: needs -mat_ocean_device_matrices in PETSC_OPTIONS"
  fi
done
# with the CUDA backend: numeric reuse without the product map (the search in C's rows); the CPU backend ignores it
run_case seq/AB-reuse-no-map     1 $P -product AB -gen_a elast -size_a 6 \
  -gen_b elast -size_b 6 -reuse -mat_ocean_reuse_map_mb 0
# 1 MB of device memory: on the GPU machine's CUDA run C (124,416 entries, 1.5 MB) is made in chunks of rows on the
# host, and the numeric reuse runs them again (the CPU backend ignores the option)
run_case seq/AB-device-memory-chunks 1 $P -product AB -gen_a elast -size_a 6 \
  -gen_b elast -size_b 6 -reuse -mat_ocean_workflow exact -mat_ocean_device_memory_mb 1 -expect_row_chunks
run_case seq/PtAP-reuse-mult-api 1 $P -product PtAP -api mult -gen_a lap3d27 -size_a 8 \
  -gen_b agg -size_b 512 -degree_b 8 -reuse
run_case seq/AtB-reuse           1 $P -product AtB -gen_a random -size_a 300 -n_a 200 -degree_a 5 \
  -gen_b random -size_b 300 -n_b 100 -degree_b 6 -reuse
run_case seq/AB-sparsity-change  1 $P -product AB -api mult -gen_a lap3d -size_a 8 \
  -gen_b lap3d -size_b 8 -sparsity_change
run_case seq/PtAP-sparsity-change 1 $P -product PtAP -gen_a lap3d -size_a 8 \
  -gen_b agg -size_b 512 -degree_b 8 -sparsity_change
run_case seq/AB-sketch-reuse     1 $P -product AB -gen_a elast -size_a 6 \
  -gen_b elast -size_b 6 -mat_ocean_workflow estimate -sketch_reuse
# heavy rows through the multisplit (gMAGNUS), forced small: rows of more than 200 products, chunks of 64 columns,
# 4 a level (2^10 columns: 2 levels), new values and a sparsity change after
run_case seq/AB-rmat-multisplit  1 $P -product AB -gen_a rmat -size_a 10 -degree_a 16 \
  -gen_b rmat -size_b 10 -degree_b 16 -mat_ocean_heavy multisplit -mat_ocean_heavy_threshold 200 \
  -mat_ocean_heavy_chunk_columns 64 -mat_ocean_heavy_chunks_per_level 4 -expect_heavy_levels 2 -reuse
run_case seq/PtAP-multisplit     1 $P -product PtAP -gen_a lap3d27 -size_a 10 \
  -gen_b random -size_b 1000 -n_b 400 -degree_b 3 -mat_ocean_heavy multisplit -mat_ocean_heavy_threshold 70 \
  -mat_ocean_heavy_chunk_columns 32 -expect_heavy_levels 1 -sparsity_change

# ---- parallel products against PETSc's MPIAIJ (every rank has off-process columns) ----
for np in 2 3 4; do
  run_case mpi$np/AB-lap3d27     $np $P -product AB -gen_a lap3d27 -size_a 10 -gen_b lap3d27 -size_b 10 -reuse
  run_case mpi$np/PtAP-agg       $np $P -product PtAP -gen_a elast -size_a 6 -gen_b agg -size_b 648 -degree_b 6 -reuse
  run_case mpi$np/AtB-rect       $np $P -product AtB -gen_a random -size_a 400 -n_a 300 -degree_a 5 \
    -gen_b random -size_b 400 -n_b 250 -degree_b 4
done
run_case mpi2/AB-rmat-mixed      2 $P -product AB -gen_a rmat -size_a 11 -degree_a 8 -type_a aijocean \
  -gen_b rmat -size_b 11 -degree_b 8 -type_b aij
run_case mpi3/AB-rmat-multisplit 3 $P -product AB -gen_a rmat -size_a 11 -degree_a 8 \
  -gen_b rmat -size_b 11 -degree_b 8 -mat_ocean_heavy multisplit -mat_ocean_heavy_threshold 100 \
  -mat_ocean_heavy_chunk_columns 64 -mat_ocean_heavy_chunks_per_level 8 -reuse
run_case mpi3/AB-sparsity-change 3 $P -product AB -gen_a lap3d -size_a 8 -gen_b lap3d -size_b 8 -sparsity_change
run_case mpi2/PtAP-maij          2 $P -product PtAP -gen_a elast -size_a 6 \
  -gen_b agg -size_b 216 -degree_b 4 -maij_dof 3 -reuse
run_case mpi2/PtAP-narrow        2 $P -product PtAP -gen_a random -size_a 300 -n_a 300 -degree_a 60 \
  -gen_b random -size_b 300 -n_b 40 -degree_b 16 -reuse
run_case mpi4/PtAP-narrow        4 $P -product PtAP -gen_a random -size_a 300 -n_a 300 -degree_a 60 \
  -gen_b random -size_b 300 -n_b 40 -degree_b 16 -reuse
run_case mpi4/AB-emptyrows       4 $P -product AB -gen_a emptyrows -size_a 400 -n_a 300 \
  -gen_b random -size_b 300 -n_b 350 -degree_b 4

# ---- bad input and fallbacks ----
for c in sizes unassembled nnz_limit switch_exact abt rart bad_option cuda_backend device narrow algorithm reset_prealloc; do
  run_case errors/$c 1 $T/test_errors -case $c
done
run_case errors/mpi_options 2 $T/test_errors -case mpi_options
# thousands of OpenMP threads exhaust the runtime: a bounded -mat_ocean_threads, refused with the bound named
run_script errors/threads "out=\$($T/test_errors -case sizes -mat_ocean_threads 100000 2>&1); [ \$? -ne 0 ] && echo \"\$out\" | grep -q 'more than 8 per core'"

# ---- hostile sequences: the same unusual but legal calls with aijocean and with aij give the same results ----
H=$T/test_hostile
for t in aij,aijocean,aij aij,aij,aijocean aijocean,aij,aijocean aijocean,aij,aij; do
  run_case hostile/abc-${t//,/-}            1 $H -case abc -types $t
done
for t in aij,aijocean,aij aijocean,aij,aij aijocean,aijocean,aijocean; do
  run_case hostile/abc-np2-${t//,/-}        2 $H -case abc -types $t
done
run_case hostile/abc-np3-aijocean-aij-aijocean 3 $H -case abc -types aijocean,aij,aijocean
for op in scale zero shift setvalues; do run_case hostile/c-user-$op 1 $H -case c_user -op $op -expect_products 2; done
run_case hostile/c-user-scale-np2         2 $H -case c_user -op scale
run_case hostile/c-newnonzero             1 $H -case c_newnonzero
run_case hostile/c-newnonzero-after-reuse 1 $H -case c_newnonzero -change after_reuse
# (a C that PETSc 3.18's own COO assembly made gets its memory corrupted by a new nonzero on several processes: the
#  parallel route's C is assembled by petsc-ocean's, -malloc_debug checks; README, Notes)
run_case hostile/c-newnonzero-np2         2 $H -case c_newnonzero -malloc_debug
run_case hostile/c-newnonzero-after-reuse-np3 3 $H -case c_newnonzero -change after_reuse -malloc_debug
run_case hostile/c-prealloc               1 $H -case c_prealloc
run_case hostile/c-prealloc-np2           2 $H -case c_prealloc
run_case hostile/store-retrieve           1 $H -case store_retrieve -expect_products 3
run_case hostile/store-retrieve-np2       2 $H -case store_retrieve
for c in values move gain; do run_case hostile/maij-$c 1 $H -case maij -change $c -expect_products 2; done
run_case hostile/maij-values-np2          2 $H -case maij -change values
run_case hostile/maij-gain-np2            2 $H -case maij -change gain
# (no maij-move on several processes: a parallel MAIJ cannot follow a new preallocation of its inner matrix; PETSc's
#  own MatConvert of it then reads past the new column map, with plain aij too: test_hostile refuses it)
run_case hostile/blocksizes               1 $H -case blocksizes
run_case hostile/blocksizes-np3           3 $H -case blocksizes
run_case hostile/inf                      1 $H -case inf
run_case hostile/inf-np3                  3 $H -case inf
for np in 2 3 4; do
  run_case hostile/mixed-ptap-aij-ocean-np$np $np $H -case mixed_ptap -types aij,aijocean,aij -expect_products 2
done
run_case hostile/mixed-ptap-replaced-np2  2 $H -case mixed_ptap -types aijocean,aijocean,aij
for p in AB PtAP ABt RARt; do run_case hostile/dense-$p 1 $H -case dense -product $p; done
for p in AB PtAP RARt; do run_case hostile/dense-$p-np2 2 $H -case dense -product $p; done
run_case hostile/convert                  1 $H -case convert
# C's header replaced under MatAXPY/MatAYPX/MatCopy(DIFFERENT_NONZERO_PATTERN), then REUSE (PtAP: a MAIJ P)
for op in copy axpy aypx; do
  for p in AB PtAP; do run_case hostile/c-merge-$op-$p 1 $H -case c_merge -op $op -product $p -expect_products 3; done
done
run_case hostile/c-merge-axpy-AB-np3      3 $H -case c_merge -op axpy -product AB -expect_products 2
run_case hostile/c-merge-copy-PtAP-np2    2 $H -case c_merge -op copy -product PtAP -expect_products 2
# PETSc's own algorithms chosen by the user (not ours, no wrapper around them): as aij, on 1 and 2 processes
for o in "-matmatmult_via scalable" "-matmatmult_via hypre" "-mattransposematmult_via at*b" "-matptap_via hypre"; do
  n=${o#-}; n=${n// /-}; n=${n//\*/}
  run_case hostile/algorithm-$n 1 $H -case algorithm $o
  run_case hostile/algorithm-$n-np2 2 $H -case algorithm $o
done
run_case hostile/algorithm-mpi-np2        2 $H -case algorithm -matmatmult_via nonscalable -mattransposematmult_via scalable -matptap_via scalable
run_case hostile/convert-np3              3 $H -case convert
for np in 1 2 3 4; do run_case hostile/coo-np$np $np $H -case coo; done

# ---- solvers: same iterations with aij and aijocean, Galerkin products through petsc-ocean ----
S=$T/test_solvers
run_case solve/gamg-elasticity      1 $S -problem elasticity -size 6 -pc_type gamg
run_case solve/gamg-elasticity-np2  2 $S -problem elasticity -size 6 -pc_type gamg
run_case solve/gamg-elasticity-np4  4 $S -problem elasticity -size 6 -pc_type gamg
run_case solve/gamg-resetup-reuse   1 $S -problem elasticity -size 6 -pc_type gamg -resetup \
  -pc_gamg_reuse_interpolation -expect_numeric_reuse
run_case solve/gamg-resetup-np3     3 $S -problem elasticity -size 6 -pc_type gamg -resetup \
  -pc_gamg_reuse_interpolation -expect_numeric_reuse
run_case solve/pcmg-galerkin        1 $S -problem laplace -size 17 -pc_type mg -pc_mg_levels 3 -pc_mg_galerkin pmat
run_case solve/pcmg-galerkin-np4    4 $S -problem laplace -size 17 -pc_type mg -pc_mg_levels 3 -pc_mg_galerkin pmat
# BoomerAMG needs a PETSc with hypre (Debian's has it); without, these two are skipped and not counted
if $T/ksp_ex2 -m 3 -n 3 -pc_type hypre > /dev/null 2>&1; then
  run_case solve/hmg-boomeramg        1 $S -problem elasticity -size 5 -pc_type hmg -hmg_inner_pc_type hypre \
    -pc_mg_galerkin pmat
  run_case solve/hmg-boomeramg-maij   1 $S -problem elasticity -size 5 -pc_type hmg -hmg_inner_pc_type hypre \
    -pc_mg_galerkin pmat -pc_hmg_use_subspace_coarsening
else
  for n in solve/hmg-boomeramg solve/hmg-boomeramg-maij; do skip_test $n || echo "skip $n: this PETSc has no hypre"; done
fi

# ---- an unmodified PETSc tutorial with -dll_append ----
LIBSO=$(pwd)/lib/libpetscocean.so
run_script dll/ex2-gamg "out=\$($T/ksp_ex2 -m 40 -n 40 -dll_append $LIBSO -mat_type aijocean -pc_type gamg -ksp_view \
  -mat_ocean_view 2>&1) || { echo \"\$out\"; exit 1; }; \
  echo \"\$out\" | grep -q 'type: seqaijocean' && echo \"\$out\" | grep -q 'petsc-ocean PtAP' || \
  { echo \"\$out\" | tail -40; exit 1; }"

# PETSc's ex56 (3D elasticity, GAMG, a second setup after MatScale with reused interpolation): the same iterations
EX56="build/examples/ksp_ex56 -ne 7 -alpha 1.e-3 -ksp_type cg -pc_type gamg -pc_gamg_agg_nsmooths 1 \
  -pc_gamg_reuse_interpolation true -two_solves -use_mat_nearnullspace -ksp_converged_reason"
run_script dll/ex56-gamg "a=\$($EX56 2>&1 | grep 'Linear solve'); \
  o=\$($EX56 -dll_append $LIBSO -mat_type aijocean -mat_ocean_view 2>&1); \
  echo \"\$o\" | grep -q 'petsc-ocean PtAP' || { echo \"\$o\" | tail -20; exit 1; }; \
  o=\$(echo \"\$o\" | grep 'Linear solve'); \
  [ -n \"\$a\" ] && [ \"\$a\" = \"\$o\" ] || { echo \"aij: \$a\"; echo \"aijocean: \$o\"; exit 1; }"

# PETSc's ex56 test nns_gdsw (PCMG with a GDSW coarse space: MatConvert to MATIS, submatrices): the same residuals to
# six digits (aijocean on aijcusparse multiplies on the GPU, whose last digits differ)
GDSW="build/examples/ksp_ex56 -use_mat_nearnullspace -ksp_monitor_short -pc_type mg -pc_mg_levels 2 \
  -pc_mg_adapt_interp_coarse_space gdsw -pc_mg_galerkin -mg_levels_pc_type bjacobi -ne 3 -options_left 0"
SIX="sed -E 's/([0-9][.][0-9]{5})[0-9]*e/\\1e/g'"
for np in 1 2; do
  run_script dll/ex56-nns-gdsw-np$np "a=\$($MPI -n $np $GDSW 2>&1 | $SIX); \
    o=\$($MPI -n $np $GDSW -dll_append $LIBSO -mat_type aijocean 2>&1 | $SIX); \
    [ -n \"\$a\" ] && [ \"\$a\" = \"\$o\" ] || { echo \"aij: \$a\"; echo \"aijocean: \$o\" | tail -20; exit 1; }"
done

# ---- PETSc's own tutorial tests that run products (ksp ex45, ex56; snes ex5 with Galerkin multigrid): aijocean against
# aij, equal iteration counts (tests/tutorials/run_tutorials.py; `make test-tutorials` runs every test of the four) ----
if [ -n "${OCEAN_PETSC_EXAMPLES:-}" ] && [ -x build/tutorials/ksp_ex56 ]; then
  run_script tutorials/products "python3 tests/tutorials/run_tutorials.py --examples $OCEAN_PETSC_EXAMPLES \
    --bin build/tutorials --lib $LIBSO --petscconf '${OCEAN_PETSC_CONF_H:-}' --filter '^(ksp_ex45|ksp_ex56)|^snes_ex5(_2)? '"
else
  skip_test tutorials/products || echo "skip tutorials/products: run from make test (OCEAN_PETSC_EXAMPLES)"
fi

# ---- the Galerkin benchmark's inputs (dump + PETSc binary reader + host PtAP count; needs the CUDA-linked bench) ----
[ -x build/examples/bench_spgemm ] && run_script examples/galerkin-list "bash tests/galerkin_list.sh"

# ---- valgrind on a product test (PETSc checks its own memory with -malloc_dump as well) ----
run_script valgrind/seq-products "OMP_NUM_THREADS=2 valgrind -q --error-exitcode=1 --suppressions=tests/valgrind.supp $P -product PtAP \
  -gen_a lap3d27 -size_a 6 -gen_b agg -size_b 216 -degree_b 8 -reuse -malloc 0"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
