#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine lacks to build and run petsc-ocean; does nothing when it is all there.
set -euo pipefail
need=()
[ -f /usr/lib/petsc/lib/petsc/conf/petscvariables ] || [ -n "${PETSC_DIR:-}" ] || need+=(petsc-dev)
[ -e /usr/include/hypre/HYPRE.h ] || need+=(libhypre-dev)
command -v mpiexec >/dev/null 2>&1 || need+=(openmpi-bin)
command -v make >/dev/null 2>&1 || need+=(make)
command -v valgrind >/dev/null 2>&1 || need+=(valgrind)
command -v python3 >/dev/null 2>&1 || need+=(python3)
command -v nm >/dev/null 2>&1 || need+=(binutils)
[ -d /usr/share/petsc/3.18/share/petsc/examples/src/ksp/ksp/tutorials ] || [ -n "${PETSC_DIR:-}" ] || need+=(libpetsc3.18-dev-examples)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
