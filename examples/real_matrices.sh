#!/usr/bin/env bash
# The benchmark's real-matrix set: ten mid-size matrices (1 to 11 million products in A*A: the size of AMG coarse
# levels and of one rank's block in a large MPI run) from the test data of two Debian source packages, trilinos
# 13.2.0 and suitesparse 5.12.0.  Downloads their upstream tarballs from Debian's archive (205 MB, SHA-256 checked),
# extracts the matrices into DIR as NAME.mtx and prints the benchmark command.
#   bash examples/real_matrices.sh [DIR]        (default build/realmat; the tarballs are kept in DIR/src)
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${1:-build/realmat}
POOL=${DEBIAN_POOL:-http://deb.debian.org/debian/pool/main}
mkdir -p "$DIR/src"

# package file, its SHA-256 (from the Debian source package's .dsc), its path in the pool
fetch() {
  local file=$1 sum=$2 path=$3
  if ! echo "$sum  $DIR/src/$file" | sha256sum -c --status 2>/dev/null; then
    curl -fsSL -o "$DIR/src/$file" "$POOL/$path/$file"
    echo "$sum  $DIR/src/$file" | sha256sum -c --quiet
  fi
}
fetch trilinos_13.2.0.orig.tar.gz 0ddb47784ba7b8a6b9a07a4822b33be508feb4ccd54301b2a5d10c9e54524b90 t/trilinos
fetch suitesparse_5.12.0+dfsg.orig.tar.xz bb106c43049138c19675cd70322e72ff8e4fd8bdcab3a096307fd78488913faf \
  s/suitesparse

# name and path inside the tarball
T=Trilinos-trilinos-release-13-2-0/packages
TRILINOS=(
  "tpetra_LpLT $T/tpetra/core/test/CrsGraphTransposer/L+LT.mtx"
  "xpetra_A $T/xpetra/research/max/MatrixMarket_routines/A.mtx"
  "teko_lsc_F_2 $T/teko/tests/data/lsc_F_2.mm"
  "teko_lsc_Qu_2 $T/teko/tests/data/lsc_Qu_2.mm"
  "shylu_wathenSmall $T/shylu/shylu_dd/core/test/wathenSmall.mtx"
  "zoltan_cage10 $T/zoltan/test/hg_cage10/cage10.mtx"
  "teko_szdMat $T/teko/tests/data/szdMat.mm"
  "teko_modified $T/teko/examples/AddMultiplyPrecs/modified.mm"
  "teko_nsjac $T/teko/tests/data/nsjac.mm"
)
SUITESPARSE=("NotreDame_www SuiteSparse-5.12.0/Mongoose/Matrix/NotreDame_www.mtx")

extract() { # tarball, then "name path" entries
  local tarball=$1 entry name path
  shift
  for entry in "$@"; do
    read -r name path <<<"$entry"
    [ -s "$DIR/$name.mtx" ] || tar -xOf "$DIR/src/$tarball" "$path" > "$DIR/$name.mtx"
  done
}
extract trilinos_13.2.0.orig.tar.gz "${TRILINOS[@]}"
extract suitesparse_5.12.0+dfsg.orig.tar.xz "${SUITESPARSE[@]}"
ls "$DIR"/*.mtx | wc -l | xargs echo "matrices in $DIR:"
NAMES=$(for e in "${TRILINOS[@]}" "${SUITESPARSE[@]}"; do echo "${e%% *}"; done | paste -sd, -)
echo "benchmark (GPU machine): build/examples/bench_spgemm --reps 10 --csv real.csv --only $NAMES $DIR/*.mtx"
