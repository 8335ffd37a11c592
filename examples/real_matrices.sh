#!/usr/bin/env bash
# The benchmark's real-matrix set: fourteen mid-size matrices (1 to 11 million products in A*A: the size of AMG
# coarse levels and of one rank's block in a large MPI run) from the test data of Debian packages: the trilinos
# 13.2.0 and suitesparse 5.12.0 source packages and libmetis-doc 5.1.0 (METIS' example graphs).  Downloads them from
# Debian's archive (208 MB, SHA-256 checked), extracts the matrices into DIR as NAME.mtx (graphs as pattern matrices
# of their adjacency, no diagonal) and prints the benchmark command.
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
fetch libmetis-doc_5.1.0.dfsg-7_all.deb 1a1ec91160520e1fa16f82fa62e195811b5afc6521a17b3e6ebad9e560c45c5c m/metis

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
  "muelu_vardofpernode $T/muelu/test/vardofpernode/theMatrix.m"
)
TRILINOS_GRAPHS=("zoltan_brack2 $T/zoltan/test/ch_brack2_3/brack2_3.graph")
METIS_GRAPHS=(
  "metis_copter2 ./usr/share/doc/libmetis-dev/examples/graphs/copter2.graph"
  "metis_mdual ./usr/share/doc/libmetis-dev/examples/graphs/mdual.graph"
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
# A METIS/Chaco graph file (header "n m [fmt [ncon]]", then vertex i's line: ncon weights when fmt's tens digit is
# set, then its neighbours, each followed by an edge weight when fmt's units digit is set) as the pattern matrix of
# its adjacency.
graph_to_mtx() { # the graph on standard input, the .mtx file to write
  awk -v entries="$1.entries" '
    /^[ \t]*%/ { next }
    !started { if (NF == 0) next; n = $1; fmt = NF > 2 ? $3 : 0; ncon = NF > 3 ? $4 : 1
               vw = int(fmt / 10) % 10; ew = fmt % 10; started = 1; next }
    { i++; for (k = 1 + (vw ? ncon : 0); k <= NF; k += 1 + ew) { print i, $k > entries; ne++ } }
    END { if (i != n) { print "graph: " i " vertex lines, the header says " n > "/dev/stderr"; exit 1 }
          print "%%MatrixMarket matrix coordinate pattern general"; print n, n, ne }' > "$1.header"
  cat "$1.header" "$1.entries" > "$1"
  rm -f "$1.header" "$1.entries"
}
extract_graphs() { # the command that writes an archive member to standard output, then "name path" entries
  local cat_member=$1 entry name path
  shift
  for entry in "$@"; do
    read -r name path <<<"$entry"
    [ -s "$DIR/$name.mtx" ] || $cat_member "$path" | graph_to_mtx "$DIR/$name.mtx"
  done
}
extract trilinos_13.2.0.orig.tar.gz "${TRILINOS[@]}"
extract suitesparse_5.12.0+dfsg.orig.tar.xz "${SUITESPARSE[@]}"
from_trilinos() { tar -xOf "$DIR/src/trilinos_13.2.0.orig.tar.gz" "$1"; }
from_metis_doc() { dpkg-deb --fsys-tarfile "$DIR/src/libmetis-doc_5.1.0.dfsg-7_all.deb" | tar -xO "$1"; }
extract_graphs from_trilinos "${TRILINOS_GRAPHS[@]}"
extract_graphs from_metis_doc "${METIS_GRAPHS[@]}"
ls "$DIR"/*.mtx | wc -l | xargs echo "matrices in $DIR:"
NAMES=$(for e in "${TRILINOS[@]}" "${TRILINOS_GRAPHS[@]}" "${METIS_GRAPHS[@]}" "${SUITESPARSE[@]}"; do
  echo "${e%% *}"; done | paste -sd, -)
echo "benchmark (GPU machine): build/examples/bench_spgemm --reps 10 --csv real.csv --only $NAMES $DIR/*.mtx"
