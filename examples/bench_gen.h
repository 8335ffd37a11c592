/*
  bench_gen.h - inputs of the SpGEMM benchmark (examples/bench_spgemm.c): host CSR matrices from stencil
  generators, an R-MAT generator and a Matrix Market reader.

  Conventions (those of include/ocean.h): int64 row offsets, int32 column indices, fp64 values, rows sorted and
  free of duplicates.  Everything is OpenMP-parallel over rows or edges and deterministic whatever the thread
  count: random numbers come from counter-based hashes (values) or from per-chunk streams (R-MAT edges), never
  from a shared generator.  Values are pseudo-random in [-1,-0.1] U [0.1,1], never zero, so no product is
  ever a multiplication by zero and no entry of C vanishes by accident.
*/
#ifndef BENCH_GEN_H
#define BENCH_GEN_H

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>

typedef struct {
  char     name[64];
  int64_t  nrows, ncols;
  int64_t *rowptr; /* nrows + 1 */
  int32_t *colidx; /* rowptr[nrows] */
  double  *values; /* rowptr[nrows] */
} BenchCSR;

static void bench_csr_free(BenchCSR *M)
{
  free(M->rowptr);
  free(M->colidx);
  free(M->values);
  M->rowptr = NULL;
  M->colidx = NULL;
  M->values = NULL;
}

static int64_t bench_csr_nnz(const BenchCSR *M) { return M->rowptr ? M->rowptr[M->nrows] : 0; }

/* Host allocations never fail quietly: the benchmark has no sensible way to continue without memory. */
static void bench_check_alloc(const void *p, size_t bytes)
{
  if (!p) {
    fprintf(stderr, "bench: out of host memory (%.2f GB)\n", bytes / 1e9);
    exit(1);
  }
}

static void *bench_xmalloc(size_t bytes)
{
  void *p = malloc(bytes ? bytes : 1);
  bench_check_alloc(p, bytes);
  return p;
}

/* ---- pseudo-random numbers ----------------------------------------------------------------------------- */

static uint64_t bench_mix64(uint64_t x) /* splitmix64's finalizer */
{
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

static double bench_unit(uint64_t h) { return (double)(h >> 11) * 0x1.0p-53; } /* [0, 1) */

/* The value of entry (i, j): a hash of its position, so that it does not depend on how the matrix was built. */
static double bench_value(uint64_t seed, int64_t i, int32_t j)
{
  uint64_t h   = bench_mix64(seed ^ bench_mix64((uint64_t)i * 0x100000001B3ull + (uint64_t)(uint32_t)j));
  double   mag = 0.1 + 0.9 * bench_unit(h);
  return (h & 1) ? -mag : mag;
}

static void bench_fill_values(BenchCSR *M, uint64_t seed)
{
  M->values = (double *)bench_xmalloc((size_t)bench_csr_nnz(M) * sizeof(double));
#pragma omp parallel for schedule(dynamic, 1024)
  for (int64_t i = 0; i < M->nrows; i++)
    for (int64_t p = M->rowptr[i]; p < M->rowptr[i + 1]; p++) M->values[p] = bench_value(seed, i, M->colidx[p]);
}

/* rowptr[0..n-1] holds counts on entry, offsets (rowptr[n] = total) on exit.  Serial: a few ms for 4M rows. */
static void bench_counts_to_offsets(int64_t *rowptr, int64_t n)
{
  int64_t sum = 0;
  for (int64_t i = 0; i < n; i++) {
    int64_t c = rowptr[i];
    rowptr[i] = sum;
    sum += c;
  }
  rowptr[n] = sum;
}

/* ---- stencils -------------------------------------------------------------------------------------------- */

/* A grid of nx*ny*nz nodes (nz = 1 in 2D) with dof unknowns per node, numbered node-major.  Each unknown couples
   to every unknown of its neighbour nodes: the star stencil (5 or 7 points) or the full box (9 or 27 points). */
typedef struct {
  int64_t nx, ny, nz;
  int     dof;
  int     box; /* 0: star (|dx|+|dy|+|dz| <= 1), 1: box (max |d| <= 1) */
} BenchStencil;

/* Neighbour nodes of node (x, y, z) in increasing node number, which keeps the columns of a row sorted. */
static int bench_stencil_neighbours(const BenchStencil *s, int64_t x, int64_t y, int64_t z, int64_t *nbr)
{
  int n = 0;
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

static void bench_stencil_row(const BenchStencil *s, int64_t row, int64_t *nbr, int *n)
{
  int64_t node = row / s->dof;
  *n           = bench_stencil_neighbours(s, node % s->nx, (node / s->nx) % s->ny, node / (s->nx * s->ny), nbr);
}

static void bench_gen_stencil(const BenchStencil *s, uint64_t seed, BenchCSR *M)
{
  M->nrows = M->ncols = s->nx * s->ny * s->nz * s->dof;
  M->rowptr           = (int64_t *)bench_xmalloc((size_t)(M->nrows + 1) * sizeof(int64_t));
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < M->nrows; i++) {
    int64_t nbr[27];
    int     n;
    bench_stencil_row(s, i, nbr, &n);
    M->rowptr[i] = (int64_t)n * s->dof;
  }
  bench_counts_to_offsets(M->rowptr, M->nrows);
  M->colidx = (int32_t *)bench_xmalloc((size_t)bench_csr_nnz(M) * sizeof(int32_t));
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < M->nrows; i++) {
    int64_t nbr[27], p = M->rowptr[i];
    int     n;
    bench_stencil_row(s, i, nbr, &n);
    for (int k = 0; k < n; k++)
      for (int d = 0; d < s->dof; d++) M->colidx[p++] = (int32_t)(nbr[k] * s->dof + d);
  }
  bench_fill_values(M, seed);
}

/* ---- coordinate lists to CSR (R-MAT, Matrix Market) ------------------------------------------------------- */

static int bench_cmp_i32(const void *a, const void *b)
{
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* Sorts a row and removes repeated columns; returns the new length. */
static int64_t bench_sort_unique(int32_t *c, int64_t n)
{
  if (n < 32) { /* insertion sort: most rows are short, qsort's call overhead would dominate */
    for (int64_t i = 1; i < n; i++) {
      int32_t v = c[i];
      int64_t j = i;
      for (; j > 0 && c[j - 1] > v; j--) c[j] = c[j - 1];
      c[j] = v;
    }
  } else qsort(c, (size_t)n, sizeof(int32_t), bench_cmp_i32);
  int64_t m = 0;
  for (int64_t i = 0; i < n; i++)
    if (m == 0 || c[i] != c[m - 1]) c[m++] = c[i];
  return m;
}

/* Builds M's structure from ne (row, col) pairs: rows sorted, duplicates dropped (values come afterwards). */
static void bench_csr_from_coo(int64_t nrows, int64_t ncols, int64_t ne, const int32_t *ri, const int32_t *ci, BenchCSR *M)
{
  int64_t *start = (int64_t *)bench_xmalloc((size_t)(nrows + 1) * sizeof(int64_t));
  int64_t *fill  = (int64_t *)bench_xmalloc((size_t)nrows * sizeof(int64_t));
  int32_t *tmp   = (int32_t *)bench_xmalloc((size_t)ne * sizeof(int32_t));
  memset(start, 0, (size_t)(nrows + 1) * sizeof(int64_t));
#pragma omp parallel for schedule(static)
  for (int64_t e = 0; e < ne; e++) {
#pragma omp atomic
    start[ri[e]]++;
  }
  bench_counts_to_offsets(start, nrows);
  memcpy(fill, start, (size_t)nrows * sizeof(int64_t));
  /* the order within a row depends on the threads; sorting the row afterwards makes the result deterministic */
#pragma omp parallel for schedule(static)
  for (int64_t e = 0; e < ne; e++) {
    int64_t p;
#pragma omp atomic capture
    p = fill[ri[e]]++;
    tmp[p] = ci[e];
  }
  M->nrows  = nrows;
  M->ncols  = ncols;
  M->rowptr = fill; /* reused: per-row unique counts */
#pragma omp parallel for schedule(dynamic, 16) /* the heavy rows of R-MAT are neighbours */
  for (int64_t i = 0; i < nrows; i++) M->rowptr[i] = bench_sort_unique(tmp + start[i], start[i + 1] - start[i]);
  M->rowptr = (int64_t *)realloc(M->rowptr, (size_t)(nrows + 1) * sizeof(int64_t));
  bench_check_alloc(M->rowptr, (size_t)(nrows + 1) * sizeof(int64_t));
  bench_counts_to_offsets(M->rowptr, nrows);
  M->colidx = (int32_t *)bench_xmalloc((size_t)bench_csr_nnz(M) * sizeof(int32_t));
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < nrows; i++)
    memcpy(M->colidx + M->rowptr[i], tmp + start[i], (size_t)(M->rowptr[i + 1] - M->rowptr[i]) * sizeof(int32_t));
  free(tmp);
  free(start);
}

/* ---- R-MAT ------------------------------------------------------------------------------------------------ */

#define BENCH_RMAT_CHUNK 65536 /* edges per random stream: the edge list is the same for any thread count */

/* One edge: at each of the scale levels, pick a quadrant with probabilities a, b, c, d = 1-a-b-c. */
static void bench_rmat_edge(uint64_t *state, int scale, double a, double b, double c, int32_t *row, int32_t *col)
{
  int32_t r = 0, k = 0;
  for (int l = 0; l < scale; l++) {
    double u = bench_unit(bench_mix64((*state)++));
    int    i = u >= a + b, j = (u >= a && u < a + b) || u >= a + b + c;
    r        = (r << 1) | i;
    k        = (k << 1) | j;
  }
  *row = r;
  *col = k;
}

/* R-MAT graph with 2^scale vertices and degree * 2^scale generated edges (before duplicates are removed). */
static void bench_gen_rmat(int scale, int64_t degree, double a, double b, double c, uint64_t seed, BenchCSR *M)
{
  int64_t  n = (int64_t)1 << scale, ne = degree * n, nchunks = (ne + BENCH_RMAT_CHUNK - 1) / BENCH_RMAT_CHUNK;
  int32_t *ri = (int32_t *)bench_xmalloc((size_t)ne * sizeof(int32_t));
  int32_t *ci = (int32_t *)bench_xmalloc((size_t)ne * sizeof(int32_t));
#pragma omp parallel for schedule(dynamic, 4)
  for (int64_t k = 0; k < nchunks; k++) {
    uint64_t state = bench_mix64(seed ^ bench_mix64((uint64_t)k)) << 24; /* far-apart counters */
    int64_t  end   = (k + 1) * BENCH_RMAT_CHUNK < ne ? (k + 1) * BENCH_RMAT_CHUNK : ne;
    for (int64_t e = k * BENCH_RMAT_CHUNK; e < end; e++) bench_rmat_edge(&state, scale, a, b, c, ri + e, ci + e);
  }
  bench_csr_from_coo(n, n, ne, ri, ci, M);
  free(ri);
  free(ci);
  bench_fill_values(M, seed);
}

/* ---- Matrix Market ---------------------------------------------------------------------------------------- */

/* Reads a whole file into a NUL-terminated buffer: one read and strtol/strtod parse large files much faster
   than fscanf. */
static char *bench_read_file(const char *path, size_t *len)
{
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char  *buf = NULL;
  size_t cap = 0, n = 0, got;
  do {
    if (n + 1 >= cap) {
      cap = cap ? 2 * cap : (size_t)1 << 20;
      buf = (char *)realloc(buf, cap);
      bench_check_alloc(buf, cap);
    }
    got = fread(buf + n, 1, cap - n - 1, f);
    n += got;
  } while (got > 0);
  fclose(f);
  buf[n] = 0;
  *len   = n;
  return buf;
}

static void bench_lower(char *s)
{
  for (; *s; s++) *s = (char)tolower((unsigned char)*s);
}

/* Parses the banner; returns 0 and sets *symmetric for coordinate real/integer/pattern general/symmetric. */
static int bench_mm_banner(const char *line, int *symmetric, char *err, size_t errlen)
{
  char obj[32] = "", fmt[32] = "", field[32] = "", sym[32] = "";
  if (sscanf(line, "%%%%MatrixMarket %31s %31s %31s %31s", obj, fmt, field, sym) != 4) {
    snprintf(err, errlen, "no %%%%MatrixMarket banner");
    return 1;
  }
  bench_lower(obj), bench_lower(fmt), bench_lower(field), bench_lower(sym);
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

static char *bench_next_line(char *p) { return strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p); }

/* Parses ne entries "i j [value]" (1-based) into 0-based pairs, mirrored for symmetric files. */
static int bench_mm_entries(char *p, int64_t m, int64_t n, int64_t ne, int symmetric, int32_t *ri, int32_t *ci,
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
    p      = bench_next_line(r); /* skips the value, if any */
    ri[*k] = (int32_t)(i - 1), ci[(*k)++] = (int32_t)(j - 1);
    if (symmetric && i != j) ri[*k] = (int32_t)(j - 1), ci[(*k)++] = (int32_t)(i - 1);
  }
  return 0;
}

/* Reads the structure of a Matrix Market file into M (symmetric files are expanded, duplicates dropped).  The
   file's values are ignored: like the generated matrices, M gets pseudo-random nonzero values.  Returns 0, or 1
   with a message in err. */
static int bench_read_mm(const char *path, uint64_t seed, BenchCSR *M, char *err, size_t errlen)
{
  size_t    len;
  char     *buf = bench_read_file(path, &len), *p;
  int       symmetric, bad;
  long long m, n, ne;
  if (!buf) {
    snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
    return 1;
  }
  bad = bench_mm_banner(buf, &symmetric, err, errlen);
  for (p = buf; !bad && *p == '%';) p = bench_next_line(p); /* banner and comments */
  if (!bad && (sscanf(p, "%lld %lld %lld", &m, &n, &ne) != 3 || m < 0 || n < 0 || ne < 0 || m > INT32_MAX ||
               n > INT32_MAX || (symmetric && m != n))) {
    snprintf(err, errlen, "bad size line");
    bad = 1;
  }
  if (!bad) {
    int64_t  cap = symmetric ? 2 * ne : ne, k;
    int32_t *ri = (int32_t *)bench_xmalloc((size_t)cap * sizeof(int32_t));
    int32_t *ci = (int32_t *)bench_xmalloc((size_t)cap * sizeof(int32_t));
    bad         = bench_mm_entries(bench_next_line(p), m, n, ne, symmetric, ri, ci, &k, err, errlen);
    if (!bad) bench_csr_from_coo(m, n, k, ri, ci, M);
    free(ri), free(ci);
  }
  free(buf);
  if (bad) return 1;
  bench_fill_values(M, seed);
  return 0;
}

/* PETSc's binary format of an AIJ matrix (MatView to a binary viewer; 32-bit indices, big-endian): classid 1211216,
   rows, columns, nonzeros, the row lengths, the column indices, then the values.  The values are kept (the Galerkin
   products of a real hierarchy).  Returns 0, or 1 with a message in err. */
static uint32_t bench_be32(const unsigned char *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3]; }

static int bench_read_petsc(const char *path, BenchCSR *M, char *err, size_t errlen)
{
  size_t               len = 0;
  unsigned char       *buf = (unsigned char *)bench_read_file(path, &len);
  const unsigned char *p;
  int64_t              m, n, nz, i, t;

  M->nrows = M->ncols = 0; /* M->name is the caller's */
  M->rowptr = NULL, M->colidx = NULL, M->values = NULL;
  if (!buf) return snprintf(err, errlen, "cannot read: %s", strerror(errno)), 1;
  if (len < 16 || bench_be32(buf) != 1211216) return snprintf(err, errlen, "not a PETSc binary matrix (classid %u)", len >= 4 ? bench_be32(buf) : 0), free(buf), 1;
  m = (int32_t)bench_be32(buf + 4), n = (int32_t)bench_be32(buf + 8), nz = (int32_t)bench_be32(buf + 12);
  if (m < 0 || n < 0 || nz < 0 || len < (size_t)(16 + 4 * m + 12 * nz))
    return snprintf(err, errlen, "%lld x %lld with %lld nonzeros does not fit its %zu bytes (64-bit indices are not supported)", (long long)m, (long long)n, (long long)nz, len), free(buf), 1;
  M->nrows  = m, M->ncols = n;
  M->rowptr = (int64_t *)bench_xmalloc((size_t)(m + 1) * sizeof(int64_t));
  M->colidx = (int32_t *)bench_xmalloc((size_t)(nz ? nz : 1) * sizeof(int32_t));
  M->values = (double *)bench_xmalloc((size_t)(nz ? nz : 1) * sizeof(double));
  M->rowptr[0] = 0;
  for (i = 0, p = buf + 16; i < m; i++, p += 4) M->rowptr[i + 1] = M->rowptr[i] + (int32_t)bench_be32(p);
  if (M->rowptr[m] != nz) return snprintf(err, errlen, "row lengths sum to %lld, not %lld", (long long)M->rowptr[m], (long long)nz), bench_csr_free(M), free(buf), 1;
  for (t = 0; t < nz; t++, p += 4) {
    M->colidx[t] = (int32_t)bench_be32(p);
    if (M->colidx[t] < 0 || M->colidx[t] >= n) return snprintf(err, errlen, "column %d out of range", M->colidx[t]), bench_csr_free(M), free(buf), 1;
  }
  for (t = 0; t < nz; t++, p += 8) {
    uint64_t u = (uint64_t)bench_be32(p) << 32 | bench_be32(p + 4);
    memcpy(&M->values[t], &u, sizeof(double));
  }
  free(buf);
  return 0;
}

/* ---- the default set ------------------------------------------------------------------------------------- */

typedef enum { BENCH_GEN_STENCIL, BENCH_GEN_RMAT } BenchGenKind;

typedef struct {
  const char  *name;
  BenchGenKind kind;
  BenchStencil stencil;       /* BENCH_GEN_STENCIL */
  int          scale, degree; /* BENCH_GEN_RMAT */
} BenchSpec;

#define BENCH_SEED 20240611u

/* The eight matrices, in its order.  R-MAT: a = .57, b = c = .19, d = .05. */
static const BenchSpec bench_specs[] = {
  {"lap2d_5pt_2048", BENCH_GEN_STENCIL, {2048, 2048, 1, 1, 0}, 0, 0},
  {"lap3d_7pt_150", BENCH_GEN_STENCIL, {150, 150, 150, 1, 0}, 0, 0},
  {"lap3d_27pt_100", BENCH_GEN_STENCIL, {100, 100, 100, 1, 1}, 0, 0},
  {"elast3d_27pt_48x3", BENCH_GEN_STENCIL, {48, 48, 48, 3, 1}, 0, 0},
  {"rmat_s16_d32", BENCH_GEN_RMAT, {0, 0, 0, 0, 0}, 16, 32},
  {"rmat_s18_d8", BENCH_GEN_RMAT, {0, 0, 0, 0, 0}, 18, 8},
  {"rmat_s18_d16", BENCH_GEN_RMAT, {0, 0, 0, 0, 0}, 18, 16},
  {"rmat_s20_d8", BENCH_GEN_RMAT, {0, 0, 0, 0, 0}, 20, 8},
};
#define BENCH_NUM_SPECS ((int)(sizeof(bench_specs) / sizeof(bench_specs[0])))

/* Generates spec k.  small: grids of 1/8 the side (1/4 in 2D) and R-MAT scales 6 lower, for quick checks. */
static void bench_generate(int k, int small, BenchCSR *M)
{
  const BenchSpec *s = &bench_specs[k];
  uint64_t         seed = BENCH_SEED + (uint64_t)k;
  if (s->kind == BENCH_GEN_STENCIL) {
    BenchStencil st = s->stencil;
    if (small) {
      st.nx = st.nz == 1 ? st.nx / 4 : st.nx / 8;
      st.ny = st.nz == 1 ? st.ny / 4 : st.ny / 8;
      st.nz = st.nz == 1 ? 1 : st.nz / 8;
    }
    bench_gen_stencil(&st, seed, M);
  } else bench_gen_rmat(small ? s->scale - 6 : s->scale, s->degree, 0.57, 0.19, 0.19, seed, M);
  snprintf(M->name, sizeof(M->name), "%s%s", s->name, small ? "_small" : "");
}

#endif
