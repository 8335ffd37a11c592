/*
  gen.h - the matrices of every suite: the core and GPU tests (tests/core, tests/gpu), the PETSc tests (tests/petsc,
  through oceantest.h) and the benchmark programs (examples/bench_spgemm.c, examples/row_bins.c).  One host CSR
  type, the random streams and value hashes, the generators, the benchmark's set and its file readers.  Plain C99
  and OpenMP, no PETSc, no library: built once (build/tests/common/gen.o) and linked into each program.

  Conventions (include/ocean.h's): int64 row offsets, int32 column indices, fp64 values, rows sorted and free of
  duplicates (GenShuffleRows alone unsorts them).  Every generator is deterministic whatever the thread count.

  Where two suites made the same kind of matrix differently, both variants are kept, named for what differs, so that
  every matrix a test's expectations or a benchmark's earlier runs rest on is bit-identical to what its suite made
  before the generators were merged:
    values   GEN_VALUES_STREAM(_DIAG): drawn in storage order from the sequential stream (the core tests; their
             stencils with a dominant diagonal), GEN_VALUES_MIX: a splitmix64 hash of (seed, i, j) (the benchmark),
             GEN_VALUES_MUL: a multiplicative hash of (seed, i, j) (the PETSc tests);
    R-MAT    GenRmatStream: edges from the sequential stream (core), GenRmatChunked: per-chunk counter streams, any
             a, b, c (benchmark), GenXorshiftEdges: xorshift64 edges, rectangular too (PETSc tests);
    random   GenRandomRows: distinct columns drawn per row (core), GenXorshiftEdges: uniform (row, column) pairs
             (PETSc tests);
    P        GenInterpolation: 1-3 entries near column i * nc / nf (core), GenAggregation: an aggregate per row and
             its neighbour at aggregate boundaries (PETSc tests).
  The stencils' structure is one for all (star or box, dof unknowns per node); only their values differ.
*/
#ifndef OCEAN_TEST_GEN_H
#define OCEAN_TEST_GEN_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
  char     name[64]; /* the caller's label (the benchmark's); no generator touches it */
  int64_t  nrows, ncols;
  int64_t *rowptr; /* nrows + 1 */
  int32_t *colidx; /* rowptr[nrows] */
  double  *values; /* rowptr[nrows] */
  uint64_t id;     /* the structure id a core test hands to the library (0: none) */
} GenCSR;

/* ---- memory and CSR basics ---------------------------------------------------------------------------------- */

void   *GenMalloc(size_t bytes); /* never NULL: out of host memory is a message and exit(2) */
void   *GenCalloc(size_t bytes); /* zeroed */
void    GenAlloc(GenCSR *M, int64_t nrows, int64_t ncols, int64_t nnz, uint64_t id); /* zeroed arrays */
void    GenFree(GenCSR *M);                                                          /* keeps the name */
int64_t GenNnz(const GenCSR *M);                                                     /* 0 without arrays */
void    GenCopy(const GenCSR *A, GenCSR *B);                                         /* arrays, sizes and id */
void    GenTranspose(const GenCSR *M, GenCSR *T);                                    /* with values; id 0 */
void    GenCountsToOffsets(int64_t *rowptr, int64_t n); /* counts in rowptr[0..n-1] -> offsets, rowptr[n] total */
int64_t GenSortUnique(int32_t *c, int64_t n);           /* sorts and drops repeats; returns the new length */

/* ---- random numbers and values ---------------------------------------------------------------------------------- */

/* The sequential stream of the core tests (one per program, not thread-safe): splitmix64 from a seed. */
void     GenRandSeed(uint64_t seed);
uint64_t GenRand64(void);
double   GenRandUnit(void);  /* [0, 1) */
double   GenRandValue(void); /* in (-1.001, 1.001), from two draws */
/* Position hashes: the value of entry (i, j) whatever the order, the process or the thread that makes it; both in
   [-1, -0.1] U [0.1, 1].  Mix: the benchmark's; Mul: the PETSc tests' (oceantest.h's OceanTestValue). */
double GenValueMix(uint64_t seed, int64_t i, int32_t j);
double GenValueMul(uint64_t seed, int64_t i, int64_t j);

typedef enum {
  GEN_VALUES_STREAM,      /* GenRandValue() in storage order, from the stream seeded with seed */
  GEN_VALUES_STREAM_DIAG, /* the same, 26 + GenRandUnit() on the diagonal (the core tests' stencils) */
  GEN_VALUES_MIX,         /* GenValueMix(seed, i, j) */
  GEN_VALUES_MUL          /* GenValueMul(seed, i, j) */
} GenValues;

/* M's values (allocated when M has none), on its structure. */
void GenFillValues(GenCSR *M, GenValues values, uint64_t seed);

/* ---- generators ------------------------------------------------------------------------------------------------- */

/* An nx x ny x nz grid (nz = 1: 2D) with dof unknowns per node, numbered node-major: each unknown couples to every
   unknown of its neighbour nodes, the star (5 or 7 points) or the box (9 or 27 points). */
void GenStencil(GenCSR *M, int64_t nx, int64_t ny, int64_t nz, int dof, int box, GenValues values, uint64_t seed,
                uint64_t id);
/* m x n with 1..2 per_row - 1 distinct columns a row (every empty_every-th row empty when empty_every > 0), columns and
   values drawn together from the stream. */
void GenRandomRows(GenCSR *M, int64_t m, int64_t n, int per_row, int empty_every, uint64_t seed, uint64_t id);
/* R-MAT (a = .57, b = c = .19), 2^scale vertices, edges_per_row * 2^scale edges from the stream, repeats dropped,
   then stream values. */
void GenRmatStream(GenCSR *M, int scale, int edges_per_row, uint64_t seed, uint64_t id);
/* R-MAT with quadrant probabilities a, b, c (d = 1 - a - b - c), 2^scale vertices, degree * 2^scale edges from
   per-chunk counter streams (the same for any thread count), repeats dropped, GEN_VALUES_MIX values. */
void GenRmatChunked(GenCSR *M, int scale, int64_t degree, double a, double b, double c, uint64_t seed);
/* m x n from ne edges of one xorshift64 stream: R-MAT (a = .57, b = c = .19, over the next powers of two of m and n,
   folded back) or uniform; repeats dropped; row dense_row (when >= 0) holds every column instead of its edges. */
void GenXorshiftEdges(GenCSR *M, int64_t m, int64_t n, int64_t ne, int rmat, int64_t dense_row, GenValues values,
                      uint64_t seed);
/* Interpolation nf x nc: fine row i has 1-3 entries from column i * nc / nf on, values 0.25 + GenRandUnit(). */
void GenInterpolation(GenCSR *P, int64_t nf, int64_t nc, uint64_t seed, uint64_t id);
/* Aggregation m x ceil(m / aggsize): row i in aggregate i / aggsize, and the neighbouring aggregate on the first
   and last row of its own. */
void GenAggregation(GenCSR *P, int64_t m, int64_t aggsize, GenValues values, uint64_t seed);
/* Permutes the entries inside every row (columns and values together), from the stream. */
void GenShuffleRows(GenCSR *M, uint64_t seed);

/* ---- the benchmark's set (examples/bench_spgemm.c, examples/row_bins.c) ----------------------------------------- */

typedef enum { GEN_BENCH_STENCIL, GEN_BENCH_RMAT } GenBenchKind;

typedef struct {
  const char  *name;
  GenBenchKind kind;
  int64_t      nx, ny, nz; /* GEN_BENCH_STENCIL */
  int          dof, box;
  int          scale, degree; /* GEN_BENCH_RMAT: a = .57, b = c = .19 */
} GenBenchSpec;

#define GEN_BENCH_SEED 20240611u /* matrix k's seed is GEN_BENCH_SEED + k; Matrix Market file k's + 100 + k */

extern const GenBenchSpec GenBenchSpecs[];
extern const int          GenBenchNumSpecs;

/* Matrix k of the set, named; small: grids of 1/8 the side (1/4 in 2D), R-MAT scales 6 lower, "_small" names. */
void GenBenchMatrix(int k, int small, GenCSR *M);

/* ---- files ---------------------------------------------------------------------------------------------------- */

/* The structure of a Matrix Market file (coordinate real/integer/pattern, general/symmetric; symmetric expanded,
   repeats dropped) with GEN_VALUES_MIX values: the file's are ignored.  0, or 1 with a message in err. */
int GenReadMatrixMarket(const char *path, uint64_t seed, GenCSR *M, char *err, size_t errlen);
/* An AIJ matrix in PETSc's binary format (MatView; 32-bit indices, big-endian), its own values.  0, or 1 with a
   message in err. */
int GenReadPetscBinary(const char *path, GenCSR *M, char *err, size_t errlen);

#endif
