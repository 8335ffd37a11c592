#!/usr/bin/env bash
# On the development machine: build everything the GPU machine runs and gather it under .gpu/wt (ignored by git; carry
# it with the device tool: carry [".gpu/wt"]): the scripts, the stripped binaries packed in bin.tar.xz (about 2 MB: the
# programs' device code is the same in each), the PETSc runtime libraries when .gpu/petsc-rt.tar.xz exists
# (../shared/gpu/make-petsc-runtime.sh .gpu) and, with BUNDLE_REAL=1, the real-matrix set of build/realmat
# (examples/real_matrices.sh; about 23 MB packed) and, with BUNDLE_BASE=REV, REV's bench_spgemm for the ab stage (about
# 2 MB packed); BUNDLE_VARIANTS="NAME=REV ..." adds more bench_spgemm builds the ab stage runs in turn with head and base
# (NAME: letters and digits; each built in a worktree /tmp/ocean-bundle-NAME, kept between bundles).  Then, on the GPU
# machine:
#   bash .gpu/wt/tests/gpu/device_batch.sh [stages]        (stages: see there; default tests petsc bench examples)
# Everything must stay under the 64 MiB the device tool carries.
set -euo pipefail
cd "$(dirname "$0")/../.."
# sm_90 only (the H200): the bundle must stay under the carry limit; the next plain make rebuilds the default archs
make OCEAN_CUDA_ARCHS=90 lib tests-build test-gpu bench
W=.gpu/wt
S=.gpu/stage
rm -rf "$W" "$S"
mkdir -p "$S/build/tests" "$S/build/examples" "$S/lib" "$W/tests/gpu"
for f in build/tests/test_core build/tests/test_products build/tests/test_errors build/tests/test_solvers build/tests/test_hostile build/tests/ksp_ex2 build/tests/test_gpu; do
  strip -o "$S/$f" "$f"
done
for f in build/examples/elasticity_amg build/examples/bench_spgemm build/examples/ksp_ex56; do strip -o "$S/$f" "$f"; done
strip -o "$S/lib/libpetscocean.so" lib/libpetscocean.so
tar cJf "$W/bin.tar.xz" -C "$S" build lib
rm -rf "$S"
cp tests/run_tests.sh "$W/tests/"
cp tests/gpu/run_gpu_tests.sh tests/gpu/device_batch.sh tests/gpu/ncu_source_summary.py tests/gpu/ab_table.py "$W/tests/gpu/"
# REV's bench_spgemm, stripped, as FILE: built in the worktree DIR, kept between bundles
bench_at() {
  local rev=$1 dir=$2 file=$3
  if [ -d "$dir" ]; then git -C "$dir" checkout -q --detach "$rev"; else git worktree add -f --detach "$dir" "$rev"; fi
  make -C "$dir" OCEAN_CUDA_ARCHS=90 bench
  strip -o "$file" "$dir/build/examples/bench_spgemm"
}
if [ -n "${BUNDLE_BASE:-}" ]; then
  # the ab stage's base, its worktree BUNDLE_BASE_DIR
  base=$(git rev-parse --short "$BUNDLE_BASE")
  mkdir -p "$S" && bench_at "$base" "${BUNDLE_BASE_DIR:-/tmp/ocean-bundle-base}" "$S/bench_base"
  echo "$base" > "$S/bench_base.rev"
  tar cJf "$W/bench_base.tar.xz" -C "$S" bench_base bench_base.rev
  rm -rf "$S"
fi
if [ -n "${BUNDLE_VARIANTS:-}" ]; then
  mkdir -p "$S/variants"
  for nv in $BUNDLE_VARIANTS; do
    name=${nv%%=*} rev=$(git rev-parse --short "${nv#*=}")
    [[ $name =~ ^[A-Za-z0-9]+$ && $name != head && $name != base ]] ||
      { echo "bundle: variant name '$name': letters and digits, not head or base" >&2; exit 1; }
    bench_at "$rev" "/tmp/ocean-bundle-$name" "$S/variants/bench_$name"
    echo "$name $rev" >> "$S/variants/revs"
  done
  tar cJf "$W/bench_variants.tar.xz" -C "$S" variants
  rm -rf "$S"
fi
if [ "${BUNDLE_REAL:-0}" = 1 ]; then
  ls build/realmat/*.mtx > /dev/null || { echo "bundle: BUNDLE_REAL=1 but no build/realmat/*.mtx: run examples/real_matrices.sh" >&2; exit 1; }
  tar cJf "$W/realmat.tar.xz" -C build/realmat $(cd build/realmat && ls *.mtx)
fi
# BUNDLE_PETSC=0 leaves the PETSc runtime out (stages tests, bench, profile need none of it)
[ "${BUNDLE_PETSC:-1}" = 1 ] && [ -f .gpu/petsc-rt.tar.xz ] && cp .gpu/petsc-rt.tar.xz "$W/" || echo "bundle: no .gpu/petsc-rt.tar.xz: the petsc and examples stages will be skipped" >&2
du -sh "$W"
