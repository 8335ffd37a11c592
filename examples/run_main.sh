#!/usr/bin/env bash
# The main job: elasticity + GAMG with -mat_type aij and aijocean.  OCEAN_NE sets the size (default 48: 352,947
# unknowns), OCEAN_NP the number of MPI processes (default 1); extra arguments go to the program.
set -euo pipefail
cd "$(dirname "$0")/.."
np=${OCEAN_NP:-1}
args=(-ne "${OCEAN_NE:-48}" "$@")
if [ "$np" -gt 1 ]; then
  exec mpiexec --allow-run-as-root --oversubscribe -n "$np" build/examples/elasticity_amg "${args[@]}"
else
  exec build/examples/elasticity_amg "${args[@]}"
fi
