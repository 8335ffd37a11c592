#!/usr/bin/env bash
# On the development machine: build everything the GPU machine runs and gather it, stripped, under .gpu/wt (ignored
# by git; carry it with the device tool: carry [".gpu/wt"]).  Then, on the GPU machine:
#   bash .gpu/wt/tests/gpu/device_batch.sh [stages]        (stages: tests petsc bench examples; default all)
# The PETSc runtime libraries (../shared/gpu/make-petsc-runtime.sh .gpu) go along when .gpu/petsc-rt.tar.xz exists;
# everything must stay under the 64 MiB the device tool carries.
set -euo pipefail
cd "$(dirname "$0")/../.."
# sm_90 only (the H200): the bundle must stay under the carry limit; the next plain make rebuilds the default archs
make OCEAN_CUDA_ARCHS=90 lib tests-build test-gpu bench
W=.gpu/wt
rm -rf "$W"
mkdir -p "$W/build/tests" "$W/build/examples" "$W/lib" "$W/tests/gpu"
for f in build/tests/test_core build/tests/test_products build/tests/test_errors build/tests/test_solvers build/tests/test_hostile build/tests/ksp_ex2 build/tests/test_gpu; do
  strip -o "$W/$f" "$f"
done
for f in build/examples/elasticity_amg build/examples/bench_spgemm build/examples/ksp_ex56; do strip -o "$W/$f" "$f"; done
strip -o "$W/lib/libpetscocean.so" lib/libpetscocean.so
cp tests/run_tests.sh "$W/tests/"
cp tests/gpu/run_gpu_tests.sh tests/gpu/device_batch.sh "$W/tests/gpu/"
# BUNDLE_PETSC=0 leaves the PETSc runtime out (stages tests, bench, profile need none of it)
[ "${BUNDLE_PETSC:-1}" = 1 ] && [ -f .gpu/petsc-rt.tar.xz ] && cp .gpu/petsc-rt.tar.xz "$W/" || echo "bundle: no .gpu/petsc-rt.tar.xz: the petsc and examples stages will be skipped" >&2
du -sh "$W"
