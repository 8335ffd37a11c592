#!/usr/bin/env bash
# The Galerkin benchmark's inputs, on any machine: elasticity_amg -dump_galerkin writes each GAMG level (PETSc binary
# files), bench_spgemm --list reads them back (ptap:A.bin:P.bin, no GPU needed) and counts nnz(P^T A P) on the host
# through P^T and A*P: level by level it must equal the nonzeros of PETSc's own MatPtAP that the dump reports.  A file
# that is not a PETSc matrix must be refused with a message.
set -eu
cd "$(dirname "$0")/.."
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
build/examples/elasticity_amg -ne 8 -mat_types aij -ksp_max_it 1 -dump_galerkin "$d" > "$d/dump.txt"
args=()
for a in "$d"/galerkin*_A.bin; do args+=("ptap:$a:${a%_A.bin}_P.bin"); done
[ ${#args[@]} -ge 2 ] || { echo "fewer than 2 levels dumped"; cat "$d/dump.txt"; exit 1; }
build/examples/bench_spgemm --list --only 'ptap_*' "${args[@]}" > "$d/list.txt"
fail=0 levels=0
while read -r lvl petsc_nnz; do
  levels=$((levels + 1))
  ours=$(awk -F'|' -v n="ptap_galerkin${lvl}_A" '{ name = $1; gsub(/ /, "", name) } name == n { c = $8; gsub(/ /, "", c); print c }' "$d/list.txt")
  if [ "$ours" != "$petsc_nnz" ]; then
    echo "level $lvl: nnz(C) '$ours' from the files, PETSc's MatPtAP $petsc_nnz"
    fail=1
  fi
done < <(sed -n 's/^galerkin level \([0-9]*\):.* C \([0-9]*\) nonzeros.*/\1 \2/p' "$d/dump.txt")
[ "$levels" = "${#args[@]}" ] || { echo "$levels levels reported, ${#args[@]} dumped"; fail=1; }
printf 'not a matrix' > "$d/bad.bin"
if build/examples/bench_spgemm --list --only 'ptap_*' "ptap:$d/bad.bin:$d/bad.bin" > "$d/bad.txt" 2>&1; then
  echo "a file that is not a PETSc matrix was accepted"
  fail=1
elif ! grep -q "not a PETSc binary matrix" "$d/bad.txt"; then
  echo "no clear message for a bad file:"
  cat "$d/bad.txt"
  fail=1
fi
[ $fail = 0 ] || { cat "$d/dump.txt" "$d/list.txt"; exit 1; }
