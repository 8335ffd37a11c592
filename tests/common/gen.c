/*
  gen.c - the suites' matrices (gen.h): CSR basics, random streams and value hashes, the generators, the benchmark's
  set, the Matrix Market and PETSc binary readers.
*/
#include "gen.h"
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- memory and CSR basics --------------------------------------------------------------------------------------- */

/* Host allocations never fail quietly: no test or benchmark has a sensible way to continue without memory. */
static void CheckAlloc(const void *p, size_t bytes)
{
  if (!p) {
    fprintf(stderr, "out of host memory (%.2f GB)\n", bytes / 1e9);
    exit(2);
  }
}

void *GenMalloc(size_t bytes)
{
  void *p = malloc(bytes ? bytes : 1);
  CheckAlloc(p, bytes);
  return p;
}

void *GenCalloc(size_t bytes)
{
  void *p = calloc(bytes ? bytes : 1, 1);
  CheckAlloc(p, bytes);
  return p;
}

void GenAlloc(GenCSR *M, int64_t nrows, int64_t ncols, int64_t nnz, uint64_t id)
{
  M->nrows  = nrows;
  M->ncols  = ncols;
  M->id     = id;
  M->rowptr = (int64_t *)GenCalloc((size_t)(nrows + 1) * sizeof(int64_t));
  M->colidx = (int32_t *)GenCalloc((size_t)nnz * sizeof(int32_t));
  M->values = (double *)GenCalloc((size_t)nnz * sizeof(double));
}

void GenFree(GenCSR *M)
{
  free(M->rowptr);
  free(M->colidx);
  free(M->values);
  M->rowptr = NULL;
  M->colidx = NULL;
  M->values = NULL;
  M->nrows = M->ncols = 0;
  M->id               = 0;
}

int64_t GenNnz(const GenCSR *M)
{
  return M->rowptr ? M->rowptr[M->nrows] : 0;
}

void GenCopy(const GenCSR *A, GenCSR *B)
{
  GenAlloc(B, A->nrows, A->ncols, GenNnz(A), A->id);
  memcpy(B->rowptr, A->rowptr, (size_t)(A->nrows + 1) * sizeof(int64_t));
  memcpy(B->colidx, A->colidx, (size_t)GenNnz(A) * sizeof(int32_t));
  memcpy(B->values, A->values, (size_t)GenNnz(A) * sizeof(double));
}

/* Rows of T in M's row order: sorted. */
void GenTranspose(const GenCSR *M, GenCSR *T)
{
  int64_t i, t, *next, nnz = GenNnz(M);
  GenAlloc(T, M->ncols, M->nrows, nnz, 0);
  for (t = 0; t < nnz; t++) T->rowptr[M->colidx[t] + 1]++;
  for (i = 0; i < M->ncols; i++) T->rowptr[i + 1] += T->rowptr[i];
  next = (int64_t *)GenMalloc((size_t)(M->ncols + 1) * sizeof(int64_t));
  memcpy(next, T->rowptr, (size_t)(M->ncols + 1) * sizeof(int64_t));
  for (i = 0; i < M->nrows; i++)
    for (t = M->rowptr[i]; t < M->rowptr[i + 1]; t++) {
      int64_t d    = next[M->colidx[t]]++;
      T->colidx[d] = (int32_t)i;
      T->values[d] = M->values[t];
    }
  free(next);
}

/* Serial: a few ms for 4M rows. */
void GenCountsToOffsets(int64_t *rowptr, int64_t n)
{
  int64_t sum = 0;
  for (int64_t i = 0; i < n; i++) {
    int64_t c = rowptr[i];
    rowptr[i] = sum;
    sum += c;
  }
  rowptr[n] = sum;
}

static int CmpInt32(const void *a, const void *b)
{
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

int64_t GenSortUnique(int32_t *c, int64_t n)
{
  if (n < 32) { /* insertion sort: most rows are short, qsort's call overhead would dominate */
    for (int64_t i = 1; i < n; i++) {
      int32_t v = c[i];
      int64_t j = i;
      for (; j > 0 && c[j - 1] > v; j--) c[j] = c[j - 1];
      c[j] = v;
    }
  } else qsort(c, (size_t)n, sizeof(int32_t), CmpInt32);
  int64_t m = 0;
  for (int64_t i = 0; i < n; i++)
    if (m == 0 || c[i] != c[m - 1]) c[m++] = c[i];
  return m;
}

/* ---- random numbers and values ----------------------------------------------------------------------------------- */

/* Internal inline versions: this file is built with -fPIC, where calls to exported functions are not inlined. */
static inline uint64_t Mix64(uint64_t x)
{
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

static inline double Unit(uint64_t h)
{
  return (double)(h >> 11) * 0x1.0p-53;
}

static uint64_t stream_state;

static inline uint64_t Rand64(void)
{
  uint64_t z = Mix64(stream_state);
  stream_state += 0x9E3779B97F4A7C15ull;
  return z;
}

static inline double RandUnit(void)
{
  return Unit(Rand64());
}

static inline double RandValue(void)
{
  double u = RandUnit(); /* the magnitude's draw first, then the offset's */
  return 2.0 * u - 1.0 + (RandUnit() < 0.5 ? 1e-3 : -1e-3);
}

static inline double ValueMix(uint64_t seed, int64_t i, int32_t j)
{
  uint64_t h   = Mix64(seed ^ Mix64((uint64_t)i * 0x100000001B3ull + (uint64_t)(uint32_t)j));
  double   mag = 0.1 + 0.9 * Unit(h);
  return (h & 1) ? -mag : mag;
}

static inline double ValueMul(uint64_t seed, int64_t i, int64_t j)
{
  uint64_t h = (uint64_t)i * 0x9E3779B97F4A7C15ull ^ ((uint64_t)j + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full ^
               seed * 0x165667B19E3779F9ull;
  h ^= h >> 31;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 29;
  double v = 0.1 + 0.9 * Unit(h);
  return (h & 1) ? v : -v;
}

void GenRandSeed(uint64_t seed)
{
  stream_state = seed;
}

uint64_t GenRand64(void)
{
  return Rand64();
}

double GenRandUnit(void)
{
  return RandUnit();
}

double GenRandValue(void)
{
  return RandValue();
}

double GenValueMix(uint64_t seed, int64_t i, int32_t j)
{
  return ValueMix(seed, i, j);
}

double GenValueMul(uint64_t seed, int64_t i, int64_t j)
{
  return ValueMul(seed, i, j);
}

/* The stream's values, from where the stream stands. */
static void FillStream(GenCSR *M, int diagonal)
{
  for (int64_t i = 0; i < M->nrows; i++)
    for (int64_t p = M->rowptr[i]; p < M->rowptr[i + 1]; p++)
      M->values[p] = diagonal && M->colidx[p] == i ? 26.0 + RandUnit() : RandValue();
}

void GenFillValues(GenCSR *M, GenValues values, uint64_t seed)
{
  if (!M->values) M->values = (double *)GenMalloc((size_t)GenNnz(M) * sizeof(double));
  if (values == GEN_VALUES_STREAM || values == GEN_VALUES_STREAM_DIAG) {
    stream_state = seed;
    FillStream(M, values == GEN_VALUES_STREAM_DIAG);
    return;
  }
#pragma omp parallel for schedule(dynamic, 1024)
  for (int64_t i = 0; i < M->nrows; i++)
    for (int64_t p = M->rowptr[i]; p < M->rowptr[i + 1]; p++)
      M->values[p] = values == GEN_VALUES_MIX ? ValueMix(seed, i, M->colidx[p]) : ValueMul(seed, i, M->colidx[p]);
}

/* ---- stencils ---------------------------------------------------------------------------------------------------- */

typedef struct {
  int64_t nx, ny, nz;
  int     box; /* 0: star (|dx|+|dy|+|dz| <= 1), 1: box (max |d| <= 1) */
} Grid;

/* Neighbour nodes of node (x, y, z) in increasing node number, which keeps the columns of a row sorted. */
static int GridNeighbours(const Grid *s, int64_t node, int64_t *nbr)
{
  int64_t x = node % s->nx, y = (node / s->nx) % s->ny, z = node / (s->nx * s->ny);
  int     n = 0;
  for (int dz = -1; dz <= 1; dz++)
    for (int dy = -1; dy <= 1; dy++)
      for (int dx = -1; dx <= 1; dx++) {
        if (s->nz == 1 && dz) continue;
        if (!s->box && abs(dx) + abs(dy) + abs(dz) > 1) continue;
        int64_t X = x + dx, Y = y + dy, Z = z + dz;
        if (X < 0 || X >= s->nx || Y < 0 || Y >= s->ny || Z < 0 || Z >= s->nz) continue;
        nbr[n++] = (Z * s->ny + Y) * s->nx + X;
      }
  return n;
}

void GenStencil(GenCSR *M, int64_t nx, int64_t ny, int64_t nz, int dof, int box, GenValues values, uint64_t seed,
                uint64_t id)
{
  const Grid s = {nx, ny, nz, box};
  M->nrows = M->ncols = nx * ny * nz * dof;
  M->id               = id;
  M->values           = NULL;
  M->rowptr           = (int64_t *)GenMalloc((size_t)(M->nrows + 1) * sizeof(int64_t));
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < M->nrows; i++) {
    int64_t nbr[27];
    M->rowptr[i] = (int64_t)GridNeighbours(&s, i / dof, nbr) * dof;
  }
  GenCountsToOffsets(M->rowptr, M->nrows);
  M->colidx = (int32_t *)GenMalloc((size_t)GenNnz(M) * sizeof(int32_t));
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < M->nrows; i++) {
    int64_t nbr[27], p = M->rowptr[i];
    int     n = GridNeighbours(&s, i / dof, nbr);
    for (int k = 0; k < n; k++)
      for (int d = 0; d < dof; d++) M->colidx[p++] = (int32_t)(nbr[k] * dof + d);
  }
  GenFillValues(M, values, seed);
}

/* ---- edge lists -------------------------------------------------------------------------------------------------- */

/* M's structure from ne (row, column) pairs: rows sorted, repeats dropped, no values. */
static void CSRFromEdges(GenCSR *M, int64_t nrows, int64_t ncols, int64_t ne, const int32_t *ri, const int32_t *ci)
{
  int64_t *start = (int64_t *)GenCalloc((size_t)(nrows + 1) * sizeof(int64_t));
  int64_t *fill  = (int64_t *)GenMalloc((size_t)nrows * sizeof(int64_t));
  int32_t *tmp   = (int32_t *)GenMalloc((size_t)ne * sizeof(int32_t));
#pragma omp parallel for schedule(static)
  for (int64_t e = 0; e < ne; e++) {
#pragma omp atomic
    start[ri[e]]++;
  }
  GenCountsToOffsets(start, nrows);
  memcpy(fill, start, (size_t)nrows * sizeof(int64_t));
  /* the order within a row depends on the threads; sorting the row afterwards makes the result deterministic */
  /* clang-format 14 mangles this loop around its "#pragma omp atomic capture" */
  /* clang-format off */
#pragma omp parallel for schedule(static)
  for (int64_t e = 0; e < ne; e++) {
    int64_t p;
#pragma omp atomic capture
    p = fill[ri[e]]++;
    tmp[p] = ci[e];
  }
  /* clang-format on */
  M->nrows  = nrows;
  M->ncols  = ncols;
  M->values = NULL;
  M->rowptr = fill;                            /* reused: per-row unique counts */
#pragma omp parallel for schedule(dynamic, 16) /* the heavy rows of R-MAT are neighbours */
  for (int64_t i = 0; i < nrows; i++) M->rowptr[i] = GenSortUnique(tmp + start[i], start[i + 1] - start[i]);
  M->rowptr = (int64_t *)realloc(M->rowptr, (size_t)(nrows + 1) * sizeof(int64_t));
  CheckAlloc(M->rowptr, (size_t)(nrows + 1) * sizeof(int64_t));
  GenCountsToOffsets(M->rowptr, nrows);
  M->colidx = (int32_t *)GenMalloc((size_t)GenNnz(M) * sizeof(int32_t));
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < nrows; i++)
    memcpy(M->colidx + M->rowptr[i], tmp + start[i], (size_t)(M->rowptr[i + 1] - M->rowptr[i]) * sizeof(int32_t));
  free(tmp);
  free(start);
}

/* Row dense_row of M's structure replaced by every column. */
static void SetRowFull(GenCSR *M, int64_t row)
{
  int64_t  old = M->rowptr[row + 1] - M->rowptr[row], nnz = GenNnz(M) - old + M->ncols, i;
  int32_t *ci = (int32_t *)GenMalloc((size_t)nnz * sizeof(int32_t));
  memcpy(ci, M->colidx, (size_t)M->rowptr[row] * sizeof(int32_t));
  for (i = 0; i < M->ncols; i++) ci[M->rowptr[row] + i] = (int32_t)i;
  memcpy(ci + M->rowptr[row] + M->ncols, M->colidx + M->rowptr[row + 1],
         (size_t)(GenNnz(M) - M->rowptr[row + 1]) * sizeof(int32_t));
  for (i = row + 1; i <= M->nrows; i++) M->rowptr[i] += M->ncols - old;
  free(M->colidx);
  M->colidx = ci;
}

/* One R-MAT level: the quadrant of u with thresholds t1 = a, t2 = a + b, t3 = a + b + c (row bit, column bit). */
static void RmatQuadrant(double u, double t1, double t2, double t3, int *i, int *j)
{
  *i = u >= t2;
  *j = (u >= t1 && u < t2) || u >= t3;
}

void GenRmatStream(GenCSR *M, int scale, int edges_per_row, uint64_t seed, uint64_t id)
{
  int64_t  n = (int64_t)1 << scale, ne = n * edges_per_row, e;
  int32_t *ri = (int32_t *)GenMalloc((size_t)ne * sizeof(int32_t)),
          *ci = (int32_t *)GenMalloc((size_t)ne * sizeof(int32_t));

  stream_state = seed;
  for (e = 0; e < ne; e++) {
    int32_t r = 0, c = 0;
    for (int l = 0; l < scale; l++) {
      int i, j;
      RmatQuadrant(RandUnit(), 0.57, 0.76, 0.95, &i, &j);
      r = 2 * r + i;
      c = 2 * c + j;
    }
    ri[e] = r;
    ci[e] = c;
  }
  CSRFromEdges(M, n, n, ne, ri, ci);
  free(ri);
  free(ci);
  M->values = (double *)GenMalloc((size_t)GenNnz(M) * sizeof(double));
  M->id     = id;
  FillStream(M, 0); /* the stream goes on from the edges */
}

#define RMAT_CHUNK 65536 /* edges per counter stream: the edge list is the same for any thread count */

void GenRmatChunked(GenCSR *M, int scale, int64_t degree, double a, double b, double c, uint64_t seed)
{
  int64_t  n = (int64_t)1 << scale, ne = degree * n, nchunks = (ne + RMAT_CHUNK - 1) / RMAT_CHUNK;
  int32_t *ri = (int32_t *)GenMalloc((size_t)ne * sizeof(int32_t)),
          *ci = (int32_t *)GenMalloc((size_t)ne * sizeof(int32_t));
#pragma omp parallel for schedule(dynamic, 4)
  for (int64_t k = 0; k < nchunks; k++) {
    uint64_t state = Mix64(seed ^ Mix64((uint64_t)k)) << 24; /* far-apart counters */
    int64_t  end   = (k + 1) * RMAT_CHUNK < ne ? (k + 1) * RMAT_CHUNK : ne;
    for (int64_t e = k * RMAT_CHUNK; e < end; e++) {
      int32_t r = 0, col = 0;
      for (int l = 0; l < scale; l++) {
        int i, j;
        RmatQuadrant(Unit(Mix64(state++)), a, a + b, a + b + c, &i, &j);
        r   = (r << 1) | i;
        col = (col << 1) | j;
      }
      ri[e] = r;
      ci[e] = col;
    }
  }
  CSRFromEdges(M, n, n, ne, ri, ci);
  free(ri);
  free(ci);
  M->id = 0;
  GenFillValues(M, GEN_VALUES_MIX, seed);
}

static uint64_t Xorshift(uint64_t *s)
{
  *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
  return *s;
}

void GenXorshiftEdges(GenCSR *M, int64_t m, int64_t n, int64_t ne, int rmat, int64_t dense_row, GenValues values,
                      uint64_t seed)
{
  uint64_t s       = 0x2545F4914F6CDD1Dull ^ seed;
  int      scale_r = 0, scale_c = 0;
  int32_t *ri = (int32_t *)GenMalloc((size_t)ne * sizeof(int32_t)),
          *ci = (int32_t *)GenMalloc((size_t)ne * sizeof(int32_t));

  while (((int64_t)1 << scale_r) < m) scale_r++;
  while (((int64_t)1 << scale_c) < n) scale_c++;
  for (int64_t e = 0; e < ne; e++) {
    int64_t r = 0, c = 0;
    if (rmat) {
      for (int b = 0; b < (scale_r > scale_c ? scale_r : scale_c); b++) {
        int i, j;
        RmatQuadrant(Unit(Xorshift(&s)), 0.57, 0.76, 0.95, &i, &j);
        if (b < scale_r) r = (r << 1) | i;
        if (b < scale_c) c = (c << 1) | j;
      }
      r %= m;
      c %= n;
    } else {
      r = (int64_t)(Xorshift(&s) % (uint64_t)m);
      c = (int64_t)(Xorshift(&s) % (uint64_t)n);
    }
    ri[e] = (int32_t)r;
    ci[e] = (int32_t)c;
  }
  CSRFromEdges(M, m, n, ne, ri, ci);
  free(ri);
  free(ci);
  if (dense_row >= 0) SetRowFull(M, dense_row);
  M->id = 0;
  GenFillValues(M, values, seed);
}

/* ---- stream-built matrices, P ------------------------------------------------------------------------------------ */

void GenRandomRows(GenCSR *M, int64_t m, int64_t n, int per_row, int empty_every, uint64_t seed, uint64_t id)
{
  char   *mark = (char *)GenCalloc((size_t)n);
  int64_t i, nz = 0;

  stream_state = seed;
  GenAlloc(M, m, n, m * (int64_t)per_row, id);
  for (i = 0; i < m; i++) {
    int k, want = (empty_every && i % empty_every == empty_every - 1)
                  ? 0
                  : 1 + (int)(Rand64() % (uint64_t)(2 * per_row - 1));
    if (want > n) want = (int)n;
    if (want > per_row * 2 - 1) want = per_row * 2 - 1;
    if (nz + want > m * (int64_t)per_row) want = (int)(m * (int64_t)per_row - nz);
    for (k = 0; k < want; k++) {
      int32_t c;
      do c = (int32_t)(Rand64() % (uint64_t)n);
      while (mark[c]);
      mark[c]         = 1;
      M->colidx[nz]   = c;
      M->values[nz++] = RandValue();
    }
    for (k = 0; k < want; k++) mark[M->colidx[nz - 1 - k]] = 0;
    qsort(M->colidx + nz - want, (size_t)want, sizeof(int32_t), CmpInt32);
    M->rowptr[i + 1] = nz;
  }
  free(mark);
}

void GenInterpolation(GenCSR *P, int64_t nf, int64_t nc, uint64_t seed, uint64_t id)
{
  int64_t i, nz = 0;

  stream_state = seed;
  GenAlloc(P, nf, nc, nf * 3, id);
  for (i = 0; i < nf; i++) {
    int64_t c0 = i * nc / nf, k, len = 1 + (int64_t)(Rand64() % 3);
    for (k = 0; k < len && c0 + k < nc; k++) {
      P->colidx[nz]   = (int32_t)(c0 + k);
      P->values[nz++] = 0.25 + RandUnit();
    }
    P->rowptr[i + 1] = nz;
  }
}

void GenAggregation(GenCSR *P, int64_t m, int64_t aggsize, GenValues values, uint64_t seed)
{
  int64_t n = (m + aggsize - 1) / aggsize, nz = 0;

  GenAlloc(P, m, n, 3 * m, 0);
  free(P->values);
  P->values = NULL;
  for (int64_t i = 0; i < m; i++) {
    int64_t a = i / aggsize;
    if (a > 0 && i % aggsize == 0) P->colidx[nz++] = (int32_t)(a - 1);
    P->colidx[nz++] = (int32_t)a;
    if (a + 1 < n && i % aggsize == aggsize - 1) P->colidx[nz++] = (int32_t)(a + 1);
    P->rowptr[i + 1] = nz;
  }
  GenFillValues(P, values, seed);
}

void GenShuffleRows(GenCSR *M, uint64_t seed)
{
  int64_t i, t;
  stream_state = seed;
  for (i = 0; i < M->nrows; i++)
    for (t = M->rowptr[i + 1] - 1; t > M->rowptr[i]; t--) {
      int64_t s    = M->rowptr[i] + (int64_t)(Rand64() % (uint64_t)(t - M->rowptr[i] + 1));
      int32_t c    = M->colidx[t];
      double  v    = M->values[t];
      M->colidx[t] = M->colidx[s];
      M->values[t] = M->values[s];
      M->colidx[s] = c;
      M->values[s] = v;
    }
}

/* ---- the benchmark's set ----------------------------------------------------------------------------------------- */

/* The eight matrices, in its order. */
const GenBenchSpec GenBenchSpecs[] = {
  {"lap2d_5pt_2048", GEN_BENCH_STENCIL, 2048, 2048, 1, 1, 0, 0, 0},
  {"lap3d_7pt_150", GEN_BENCH_STENCIL, 150, 150, 150, 1, 0, 0, 0},
  {"lap3d_27pt_100", GEN_BENCH_STENCIL, 100, 100, 100, 1, 1, 0, 0},
  {"elast3d_27pt_48x3", GEN_BENCH_STENCIL, 48, 48, 48, 3, 1, 0, 0},
  {"rmat_s16_d32", GEN_BENCH_RMAT, 0, 0, 0, 0, 0, 16, 32},
  {"rmat_s18_d8", GEN_BENCH_RMAT, 0, 0, 0, 0, 0, 18, 8},
  {"rmat_s18_d16", GEN_BENCH_RMAT, 0, 0, 0, 0, 0, 18, 16},
  {"rmat_s20_d8", GEN_BENCH_RMAT, 0, 0, 0, 0, 0, 20, 8},
};
const int GenBenchNumSpecs = (int)(sizeof(GenBenchSpecs) / sizeof(GenBenchSpecs[0]));

void GenBenchMatrix(int k, int small, GenCSR *M)
{
  const GenBenchSpec *s    = &GenBenchSpecs[k];
  uint64_t            seed = GEN_BENCH_SEED + (uint64_t)k;
  if (s->kind == GEN_BENCH_STENCIL) {
    int64_t nx = s->nx, ny = s->ny, nz = s->nz;
    if (small) {
      nx = s->nz == 1 ? s->nx / 4 : s->nx / 8;
      ny = s->nz == 1 ? s->ny / 4 : s->ny / 8;
      nz = s->nz == 1 ? 1 : s->nz / 8;
    }
    GenStencil(M, nx, ny, nz, s->dof, s->box, GEN_VALUES_MIX, seed, 0);
  } else GenRmatChunked(M, small ? s->scale - 6 : s->scale, s->degree, 0.57, 0.19, 0.19, seed);
  snprintf(M->name, sizeof(M->name), "%s%s", s->name, small ? "_small" : "");
}

/* ---- files ------------------------------------------------------------------------------------------------------- */

/* A whole file into a NUL-terminated buffer: one read and strtol/strtod parse large files much faster than fscanf. */
static char *ReadFile(const char *path, size_t *len)
{
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char  *buf = NULL;
  size_t cap = 0, n = 0, got;
  do {
    if (n + 1 >= cap) {
      cap = cap ? 2 * cap : (size_t)1 << 20;
      buf = (char *)realloc(buf, cap);
      CheckAlloc(buf, cap);
    }
    got = fread(buf + n, 1, cap - n - 1, f);
    n += got;
  } while (got > 0);
  fclose(f);
  buf[n] = 0;
  *len   = n;
  return buf;
}

static void Lower(char *s)
{
  for (; *s; s++) *s = (char)tolower((unsigned char)*s);
}

/* The banner: 0 and *symmetric for coordinate real/integer/pattern general/symmetric. */
static int MatrixMarketBanner(const char *line, int *symmetric, char *err, size_t errlen)
{
  char obj[32] = "", fmt[32] = "", field[32] = "", sym[32] = "";
  if (sscanf(line, "%%%%MatrixMarket %31s %31s %31s %31s", obj, fmt, field, sym) != 4) {
    snprintf(err, errlen, "no %%%%MatrixMarket banner");
    return 1;
  }
  Lower(obj), Lower(fmt), Lower(field), Lower(sym);
  if (strcmp(obj, "matrix") || strcmp(fmt, "coordinate")) {
    snprintf(err, errlen, "only coordinate matrices are supported (got %s %s)", obj, fmt);
    return 1;
  }
  if (strcmp(field, "real") && strcmp(field, "integer") && strcmp(field, "pattern")) {
    snprintf(err, errlen, "field %s is not supported (real, integer, pattern)", field);
    return 1;
  }
  if (strcmp(sym, "general") && strcmp(sym, "symmetric")) {
    snprintf(err, errlen, "symmetry %s is not supported (general, symmetric)", sym);
    return 1;
  }
  *symmetric = !strcmp(sym, "symmetric");
  return 0;
}

static char *NextLine(char *p)
{
  return strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p);
}

/* ne entries "i j [value]" (1-based) into 0-based pairs, mirrored for symmetric files. */
static int MatrixMarketEntries(char *p, int64_t m, int64_t n, int64_t ne, int symmetric, int32_t *ri, int32_t *ci,
                               int64_t *k, char *err, size_t errlen)
{
  *k = 0;
  for (int64_t e = 0; e < ne; e++) {
    char     *q, *r;
    long long i = strtoll(p, &q, 10), j = strtoll(q, &r, 10);
    if (q == p || r == q || i < 1 || i > m || j < 1 || j > n) {
      snprintf(err, errlen, "bad entry %lld", (long long)e + 1);
      return 1;
    }
    p      = NextLine(r); /* skips the value, if any */
    ri[*k] = (int32_t)(i - 1), ci[(*k)++] = (int32_t)(j - 1);
    if (symmetric && i != j) ri[*k] = (int32_t)(j - 1), ci[(*k)++] = (int32_t)(i - 1);
  }
  return 0;
}

int GenReadMatrixMarket(const char *path, uint64_t seed, GenCSR *M, char *err, size_t errlen)
{
  size_t    len;
  char     *buf = ReadFile(path, &len), *p;
  int       symmetric, bad;
  long long m, n, ne;
  if (!buf) {
    snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
    return 1;
  }
  bad = MatrixMarketBanner(buf, &symmetric, err, errlen);
  for (p = buf; !bad && *p == '%';) p = NextLine(p); /* banner and comments */
  if (!bad && (sscanf(p, "%lld %lld %lld", &m, &n, &ne) != 3 || m < 0 || n < 0 || ne < 0 || m > INT32_MAX ||
               n > INT32_MAX || (symmetric && m != n))) {
    snprintf(err, errlen, "bad size line");
    bad = 1;
  }
  if (!bad) {
    int64_t  cap = symmetric ? 2 * ne : ne, k;
    int32_t *ri  = (int32_t *)GenMalloc((size_t)cap * sizeof(int32_t));
    int32_t *ci  = (int32_t *)GenMalloc((size_t)cap * sizeof(int32_t));
    bad          = MatrixMarketEntries(NextLine(p), m, n, ne, symmetric, ri, ci, &k, err, errlen);
    if (!bad) CSRFromEdges(M, m, n, k, ri, ci);
    free(ri), free(ci);
  }
  free(buf);
  if (bad) return 1;
  M->id = 0;
  GenFillValues(M, GEN_VALUES_MIX, seed);
  return 0;
}

static uint32_t BigEndian32(const unsigned char *p)
{
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/* The format: classid 1211216, rows, columns, nonzeros, the row lengths, the column indices, then the values. */
int GenReadPetscBinary(const char *path, GenCSR *M, char *err, size_t errlen)
{
  size_t               len = 0;
  unsigned char       *buf = (unsigned char *)ReadFile(path, &len);
  const unsigned char *p;
  int64_t              m, n, nz, i, t;

  M->nrows = M->ncols = 0;
  M->rowptr = NULL, M->colidx = NULL, M->values = NULL, M->id = 0;
  if (!buf) return snprintf(err, errlen, "cannot read: %s", strerror(errno)), 1;
  if (len < 16 || BigEndian32(buf) != 1211216) {
    snprintf(err, errlen, "not a PETSc binary matrix (classid %u)", len >= 4 ? BigEndian32(buf) : 0);
    free(buf);
    return 1;
  }
  m = (int32_t)BigEndian32(buf + 4), n = (int32_t)BigEndian32(buf + 8), nz = (int32_t)BigEndian32(buf + 12);
  if (m < 0 || n < 0 || nz < 0 || len < (size_t)(16 + 4 * m + 12 * nz)) {
    snprintf(err, errlen,
             "%lld x %lld with %lld nonzeros does not fit its %zu bytes (64-bit indices are not supported)",
             (long long)m, (long long)n, (long long)nz, len);
    free(buf);
    return 1;
  }
  M->nrows = m, M->ncols = n;
  M->rowptr    = (int64_t *)GenMalloc((size_t)(m + 1) * sizeof(int64_t));
  M->colidx    = (int32_t *)GenMalloc((size_t)nz * sizeof(int32_t));
  M->values    = (double *)GenMalloc((size_t)nz * sizeof(double));
  M->rowptr[0] = 0;
  for (i = 0, p = buf + 16; i < m; i++, p += 4) M->rowptr[i + 1] = M->rowptr[i] + (int32_t)BigEndian32(p);
  if (M->rowptr[m] != nz) {
    snprintf(err, errlen, "row lengths sum to %lld, not %lld", (long long)M->rowptr[m], (long long)nz);
    GenFree(M), free(buf);
    return 1;
  }
  for (t = 0; t < nz; t++, p += 4) {
    M->colidx[t] = (int32_t)BigEndian32(p);
    if (M->colidx[t] < 0 || M->colidx[t] >= n) {
      snprintf(err, errlen, "column %d out of range", M->colidx[t]);
      GenFree(M), free(buf);
      return 1;
    }
  }
  for (t = 0; t < nz; t++, p += 8) {
    uint64_t u = (uint64_t)BigEndian32(p) << 32 | BigEndian32(p + 4);
    memcpy(&M->values[t], &u, sizeof(double));
  }
  free(buf);
  return 0;
}
