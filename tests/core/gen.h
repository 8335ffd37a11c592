/*
  gen.h - test matrices (random, stencils, R-MAT, interpolation) and an independent reference SpGEMM, shared by
  tests/core/test_core.c and tests/gpu/test_gpu.c.  Header-only; include once per program.
*/
#ifndef OCEAN_TEST_GEN_H
#define OCEAN_TEST_GEN_H

#include "ocean.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__)
  #define GEN_UNUSED __attribute__((unused))
#else
  #define GEN_UNUSED
#endif

typedef struct {
  int64_t  m, n;
  int64_t *rp;
  int32_t *ci;
  double  *v;
  uint64_t id;
} Mat;

GEN_UNUSED static uint64_t rng_state;

GEN_UNUSED static uint64_t Rand64(void)
{
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
  z          = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z          = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

GEN_UNUSED static double RandUnit(void) { return (double)(Rand64() >> 11) * (1.0 / 9007199254740992.0); }
GEN_UNUSED static double RandValue(void) { return 2.0 * RandUnit() - 1.0 + (RandUnit() < 0.5 ? 1e-3 : -1e-3); }

GEN_UNUSED static void *Alloc(size_t n)
{
  void *p = calloc(n ? n : 1, 1);
  if (!p) {
    fprintf(stderr, "test_core: out of memory\n");
    exit(2);
  }
  return p;
}

GEN_UNUSED static void MatAlloc(Mat *M, int64_t m, int64_t n, int64_t nnz, uint64_t id)
{
  M->m  = m;
  M->n  = n;
  M->id = id;
  M->rp = Alloc((size_t)(m + 1) * sizeof(int64_t));
  M->ci = Alloc((size_t)nnz * sizeof(int32_t));
  M->v  = Alloc((size_t)nnz * sizeof(double));
}

GEN_UNUSED static void MatFree(Mat *M)
{
  free(M->rp);
  free(M->ci);
  free(M->v);
  memset(M, 0, sizeof(*M));
}

GEN_UNUSED static OceanCSR View(const Mat *M)
{
  OceanCSR c;
  memset(&c, 0, sizeof(c)); /* values_id 0: the values are always uploaded (tests change them in place) */
  c.nrows        = M->m;
  c.ncols        = M->n;
  c.rowptr       = M->rp;
  c.colidx       = M->ci;
  c.values       = M->v;
  c.structure_id = M->id;
  return c;
}

GEN_UNUSED static int64_t Nnz(const Mat *M) { return M->rp[M->m]; }

GEN_UNUSED static int CmpInt32(const void *a, const void *b)
{
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return x < y ? -1 : x > y;
}

/* Random m x n with about per_row distinct columns per row (empty_every: every so many rows is empty). */
GEN_UNUSED static void MatRandom(Mat *M, int64_t m, int64_t n, int per_row, int empty_every, uint64_t seed, uint64_t id)
{
  char   *mark = Alloc((size_t)n);
  int64_t i, nz = 0;

  rng_state = seed;
  MatAlloc(M, m, n, m * (int64_t)per_row, id);
  for (i = 0; i < m; i++) {
    int k, want = (empty_every && i % empty_every == empty_every - 1) ? 0 : 1 + (int)(Rand64() % (uint64_t)(2 * per_row - 1));
    if (want > n) want = (int)n;
    if (want > per_row * 2 - 1) want = per_row * 2 - 1;
    if (nz + want > m * (int64_t)per_row) want = (int)(m * (int64_t)per_row - nz);
    for (k = 0; k < want; k++) {
      int32_t c;
      do c = (int32_t)(Rand64() % (uint64_t)n);
      while (mark[c]);
      mark[c]     = 1;
      M->ci[nz]   = c;
      M->v[nz++]  = RandValue();
    }
    for (k = 0; k < want; k++) mark[M->ci[nz - 1 - k]] = 0;
    qsort(M->ci + nz - want, (size_t)want, sizeof(int32_t), CmpInt32);
    M->rp[i + 1] = nz;
  }
  free(mark);
}

/* Stencil on an nx x ny x nz grid with dof unknowns per point: every point couples with the points within
   distance 1 per axis (box: 9/27 points) or the axis neighbours only (star: 5/7 points), in dof x dof blocks. */
GEN_UNUSED static void MatStencil(Mat *M, int nx, int ny, int nz, int dof, int box, uint64_t seed, uint64_t id)
{
  int64_t np = (int64_t)nx * ny * nz, nzmax = np * dof * 27 * dof, cnt = 0, row = 0;
  int     x, y, z, d, dx, dy, dz, e;

  rng_state = seed;
  MatAlloc(M, np * dof, np * dof, nzmax, id);
  for (z = 0; z < nz; z++)
    for (y = 0; y < ny; y++)
      for (x = 0; x < nx; x++)
        for (d = 0; d < dof; d++) {
          for (dz = -1; dz <= 1; dz++)
            for (dy = -1; dy <= 1; dy++)
              for (dx = -1; dx <= 1; dx++) {
                int X = x + dx, Y = y + dy, Z = z + dz;
                if (X < 0 || Y < 0 || Z < 0 || X >= nx || Y >= ny || Z >= nz) continue;
                if (!box && abs(dx) + abs(dy) + abs(dz) > 1) continue;
                for (e = 0; e < dof; e++) {
                  M->ci[cnt] = (int32_t)((((int64_t)Z * ny + Y) * nx + X) * dof + e);
                  M->v[cnt]  = (dx == 0 && dy == 0 && dz == 0 && d == e) ? 26.0 + RandUnit() : RandValue();
                  cnt++;
                }
              }
          M->rp[++row] = cnt;
        }
}

/* R-MAT (a = .57, b = c = .19, d = .05), 2^scale vertices, edges_per_row * 2^scale edges, duplicates removed. */
GEN_UNUSED static void MatRMAT(Mat *M, int scale, int edges_per_row, uint64_t seed, uint64_t id)
{
  int64_t  N = (int64_t)1 << scale, E = N * edges_per_row, e, i, nz = 0;
  int32_t *r = Alloc((size_t)E * sizeof(int32_t)), *c = Alloc((size_t)E * sizeof(int32_t)), *tmp = Alloc((size_t)E * sizeof(int32_t));
  int64_t *cnt = Alloc((size_t)(N + 1) * sizeof(int64_t)), *pos = Alloc((size_t)N * sizeof(int64_t));

  rng_state = seed;
  for (e = 0; e < E; e++) {
    int32_t a = 0, b = 0;
    int     l;
    for (l = 0; l < scale; l++) {
      double u  = RandUnit();
      int    bi = u >= 0.76, bj = (u >= 0.57 && u < 0.76) || u >= 0.95;
      a         = 2 * a + bi;
      b         = 2 * b + bj;
    }
    r[e] = a;
    c[e] = b;
  }
  for (e = 0; e < E; e++) cnt[r[e] + 1]++;
  for (i = 0; i < N; i++) cnt[i + 1] += cnt[i];
  for (i = 0; i < N; i++) pos[i] = cnt[i];
  for (e = 0; e < E; e++) tmp[pos[r[e]]++] = c[e];
  MatAlloc(M, N, N, E, id);
  for (i = 0; i < N; i++) {
    int64_t t, b = cnt[i], en = cnt[i + 1];
    qsort(tmp + b, (size_t)(en - b), sizeof(int32_t), CmpInt32);
    for (t = b; t < en; t++)
      if (t == b || tmp[t] != tmp[t - 1]) {
        M->ci[nz]  = tmp[t];
        M->v[nz++] = RandValue();
      }
    M->rp[i + 1] = nz;
  }
  free(r);
  free(c);
  free(tmp);
  free(cnt);
  free(pos);
}

/* Aggregation-like interpolation: fine row i has 1-3 nonzeros near coarse column i / ratio. */
GEN_UNUSED static void MatInterpolation(Mat *P, int64_t nf, int64_t nc, uint64_t seed, uint64_t id)
{
  int64_t i, nz = 0;

  rng_state = seed;
  MatAlloc(P, nf, nc, nf * 3, id);
  for (i = 0; i < nf; i++) {
    int64_t c0 = i * nc / nf, k, len = 1 + (int64_t)(Rand64() % 3);
    for (k = 0; k < len && c0 + k < nc; k++) {
      P->ci[nz]  = (int32_t)(c0 + k);
      P->v[nz++] = 0.25 + RandUnit();
    }
    P->rp[i + 1] = nz;
  }
}

GEN_UNUSED static void MatCopy(const Mat *A, Mat *B)
{
  MatAlloc(B, A->m, A->n, Nnz(A), A->id);
  memcpy(B->rp, A->rp, (size_t)(A->m + 1) * sizeof(int64_t));
  memcpy(B->ci, A->ci, (size_t)Nnz(A) * sizeof(int32_t));
  memcpy(B->v, A->v, (size_t)Nnz(A) * sizeof(double));
}

/* Permutes the entries inside every row (columns and values together). */
GEN_UNUSED static void MatShuffleRows(Mat *M, uint64_t seed)
{
  int64_t i, t;
  rng_state = seed;
  for (i = 0; i < M->m; i++)
    for (t = M->rp[i + 1] - 1; t > M->rp[i]; t--) {
      int64_t s  = M->rp[i] + (int64_t)(Rand64() % (uint64_t)(t - M->rp[i] + 1));
      int32_t c  = M->ci[t];
      double  v  = M->v[t];
      M->ci[t]   = M->ci[s];
      M->v[t]    = M->v[s];
      M->ci[s]   = c;
      M->v[s]    = v;
    }
}

GEN_UNUSED static void MatNewValues(Mat *M, uint64_t seed)
{
  int64_t t;
  rng_state = seed;
  for (t = 0; t < Nnz(M); t++) M->v[t] = RandValue();
}

GEN_UNUSED static void MatTranspose(const Mat *A, Mat *T)
{
  int64_t i, t, *next;
  MatAlloc(T, A->n, A->m, Nnz(A), 0);
  for (t = 0; t < Nnz(A); t++) T->rp[A->ci[t] + 1]++;
  for (i = 0; i < A->n; i++) T->rp[i + 1] += T->rp[i];
  next = Alloc((size_t)(A->n + 1) * sizeof(int64_t));
  memcpy(next, T->rp, (size_t)(A->n + 1) * sizeof(int64_t));
  for (i = 0; i < A->m; i++)
    for (t = A->rp[i]; t < A->rp[i + 1]; t++) {
      int64_t d = next[A->ci[t]]++;
      T->ci[d]  = (int32_t)i;
      T->v[d]   = A->v[t];
    }
  free(next);
}

/* Reference C = A*B (sorted rows) and |A||B| per entry: a dense row accumulator, then a sort of its columns. */
GEN_UNUSED static void RefMultiply(const Mat *A, const Mat *B, Mat *C, double **absval)
{
  double  *acc = Alloc((size_t)B->n * sizeof(double)), *aacc = Alloc((size_t)B->n * sizeof(double));
  char    *mark = Alloc((size_t)B->n);
  int32_t *list = Alloc((size_t)B->n * sizeof(int32_t));
  int64_t  i, t, u, cap = 1024, nz = 0;

  C->m  = A->m;
  C->n  = B->n;
  C->id = 0;
  C->rp = Alloc((size_t)(A->m + 1) * sizeof(int64_t));
  C->ci = Alloc((size_t)cap * sizeof(int32_t));
  C->v  = Alloc((size_t)cap * sizeof(double));
  *absval = Alloc((size_t)cap * sizeof(double));
  for (i = 0; i < A->m; i++) {
    int64_t n = 0, j;
    for (t = A->rp[i]; t < A->rp[i + 1]; t++)
      for (u = B->rp[A->ci[t]]; u < B->rp[A->ci[t] + 1]; u++) {
        int32_t c = B->ci[u];
        if (!mark[c]) {
          mark[c]   = 1;
          list[n++] = c;
          acc[c] = aacc[c] = 0;
        }
        acc[c] += A->v[t] * B->v[u];
        aacc[c] += fabs(A->v[t] * B->v[u]);
      }
    qsort(list, (size_t)n, sizeof(int32_t), CmpInt32);
    if (nz + n > cap) {
      while (nz + n > cap) cap *= 2;
      C->ci   = realloc(C->ci, (size_t)cap * sizeof(int32_t));
      C->v    = realloc(C->v, (size_t)cap * sizeof(double));
      *absval = realloc(*absval, (size_t)cap * sizeof(double));
      if (!C->ci || !C->v || !*absval) exit(2);
    }
    for (j = 0; j < n; j++) {
      C->ci[nz]      = list[j];
      C->v[nz]       = acc[list[j]];
      (*absval)[nz++] = aacc[list[j]];
      mark[list[j]]  = 0;
    }
    C->rp[i + 1] = nz;
  }
  free(acc);
  free(aacc);
  free(mark);
  free(list);
}

#endif
