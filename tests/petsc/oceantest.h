/* Shared pieces of the PETSc-level tests: matrix generators (the same matrix on any number of processes) and the
   explicit comparison against PETSc's own products. */
#ifndef OCEANTEST_H
#define OCEANTEST_H

#include <petscmat.h>
#include "petscmatocean.h"

/* A deterministic value in [-1, -0.1] U [0.1, 1] for entry (i, j): identical on every process. */
static inline PetscScalar OceanTestValue(PetscInt i, PetscInt j, PetscInt seed)
{
  uint64_t h = (uint64_t)i * 0x9E3779B97F4A7C15ull ^ ((uint64_t)j + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full ^ (uint64_t)seed * 0x165667B19E3779F9ull;
  h ^= h >> 31;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 29;
  double u = (double)(h >> 11) / 9007199254740992.0; /* [0, 1) */
  double v = 0.1 + 0.9 * u;
  return (h & 1) ? v : -v;
}

/* The columns of global row i of a generated matrix. */
typedef PetscErrorCode (*OceanTestRowFn)(void *ctx, PetscInt i, PetscInt *ncols, PetscInt *cols);

typedef struct {
  const char *name;
  PetscInt    m, n;     /* global sizes */
  PetscInt    maxrow;   /* largest row length */
  PetscInt    nx, dof;  /* grids */
  PetscInt    stencil;  /* 5, 7, 27 */
  PetscInt    seed;
  PetscInt    degree;   /* R-MAT edges per row, random density */
  PetscInt    aggsize;  /* aggregation P */
  PetscInt    dense_row;/* -1: none; else this row is full */
  PetscInt    nedges;
  PetscInt    bs_r, bs_c; /* block sizes given to the matrix (0: none) */
  PetscInt   *edge_ptr, *edge_col; /* R-MAT rows, CSR, sorted and unique */
  OceanTestRowFn row;
} OceanTestGen;

static inline PetscErrorCode OceanTestRowGrid(void *ctx, PetscInt i, PetscInt *nc, PetscInt *cols)
{
  OceanTestGen *g = (OceanTestGen *)ctx;
  PetscInt      nx = g->nx, dof = g->dof, node = i / dof, c = 0, dim = g->stencil == 5 ? 2 : 3;
  PetscInt      x = node % nx, y = (node / nx) % nx, z = dim == 3 ? node / (nx * nx) : 0;

  PetscFunctionBeginUser;
  for (PetscInt dz = (dim == 3 ? -1 : 0); dz <= (dim == 3 ? 1 : 0); dz++)
    for (PetscInt dy = -1; dy <= 1; dy++)
      for (PetscInt dx = -1; dx <= 1; dx++) {
        PetscInt nnb = PetscAbsInt(dx) + PetscAbsInt(dy) + PetscAbsInt(dz);
        if (g->stencil != 27 && nnb > 1) continue;
        if (x + dx < 0 || x + dx >= nx || y + dy < 0 || y + dy >= nx || z + dz < 0 || z + dz >= nx) continue;
        PetscInt nb = (z + dz) * nx * nx + (y + dy) * nx + (x + dx);
        if (dim == 2) nb = (y + dy) * nx + (x + dx);
        for (PetscInt d = 0; d < dof; d++) cols[c++] = nb * dof + d;
      }
  *nc = c;
  PetscFunctionReturn(0);
}

static inline PetscErrorCode OceanTestRowEdges(void *ctx, PetscInt i, PetscInt *nc, PetscInt *cols)
{
  OceanTestGen *g = (OceanTestGen *)ctx;

  PetscFunctionBeginUser;
  *nc = g->edge_ptr[i + 1] - g->edge_ptr[i];
  for (PetscInt k = 0; k < *nc; k++) cols[k] = g->edge_col[g->edge_ptr[i] + k];
  PetscFunctionReturn(0);
}

/* Aggregation-style P (m fine rows, n = ceil(m/aggsize) coarse columns): each row has its aggregate and, for a
   smoothed-aggregation look, the neighbouring aggregate when it exists. */
static inline PetscErrorCode OceanTestRowAgg(void *ctx, PetscInt i, PetscInt *nc, PetscInt *cols)
{
  OceanTestGen *g = (OceanTestGen *)ctx;
  PetscInt      a = i / g->aggsize, c = 0;

  PetscFunctionBeginUser;
  if (a > 0 && i % g->aggsize == 0) cols[c++] = a - 1;
  cols[c++] = a;
  if (a + 1 < g->n && i % g->aggsize == g->aggsize - 1) cols[c++] = a + 1;
  *nc = c;
  PetscFunctionReturn(0);
}

static inline int OceanTestCmpInt(const void *a, const void *b)
{
  PetscInt x = *(const PetscInt *)a, y = *(const PetscInt *)b;
  return (x > y) - (x < y);
}

/* Edge lists generated identically on every process: R-MAT (a=.57, b=c=.19) or uniform random, then sorted and
   made unique per row; the dense row (if any) is filled. */
static inline PetscErrorCode OceanTestBuildEdges(OceanTestGen *g, PetscBool rmat)
{
  PetscInt  m = g->m, n = g->n, ne = g->nedges > 0 ? g->nedges : m * g->degree, *rows, *cols, *cnt;
  uint64_t  s = 0x2545F4914F6CDD1Dull ^ (uint64_t)g->seed;
  PetscInt  scale_r = 0, scale_c = 0;

  PetscFunctionBeginUser;
  while (((PetscInt)1 << scale_r) < m) scale_r++;
  while (((PetscInt)1 << scale_c) < n) scale_c++;
  PetscCall(PetscMalloc2(ne, &rows, ne, &cols));
  for (PetscInt e = 0; e < ne; e++) {
    PetscInt r = 0, c = 0;
    if (rmat) {
      for (PetscInt b = 0; b < PetscMax(scale_r, scale_c); b++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        double u = (double)(s >> 11) / 9007199254740992.0;
        int    q = u < 0.57 ? 0 : u < 0.76 ? 1 : u < 0.95 ? 2 : 3;
        if (b < scale_r) r = (r << 1) | (q >> 1);
        if (b < scale_c) c = (c << 1) | (q & 1);
      }
      r %= m;
      c %= n;
    } else {
      s ^= s << 13, s ^= s >> 7, s ^= s << 17;
      r = (PetscInt)(s % (uint64_t)m);
      s ^= s << 13, s ^= s >> 7, s ^= s << 17;
      c = (PetscInt)(s % (uint64_t)n);
    }
    rows[e] = r;
    cols[e] = c;
  }
  PetscCall(PetscCalloc1(m + 1, &cnt));
  for (PetscInt e = 0; e < ne; e++) cnt[rows[e] + 1]++;
  if (g->dense_row >= 0) cnt[g->dense_row + 1] = n;
  PetscCall(PetscMalloc1(m + 1, &g->edge_ptr));
  g->edge_ptr[0] = 0;
  for (PetscInt i = 0; i < m; i++) g->edge_ptr[i + 1] = g->edge_ptr[i] + cnt[i + 1];
  PetscCall(PetscMalloc1(g->edge_ptr[m] + 1, &g->edge_col));
  for (PetscInt i = 0; i <= m; i++) cnt[i] = 0;
  for (PetscInt e = 0; e < ne; e++)
    if (rows[e] != g->dense_row) g->edge_col[g->edge_ptr[rows[e]] + cnt[rows[e]]++] = cols[e];
  if (g->dense_row >= 0)
    for (PetscInt j = 0; j < n; j++) g->edge_col[g->edge_ptr[g->dense_row] + j] = j;
  /* sort and unique each row in place, then squeeze */
  PetscInt w = 0;
  for (PetscInt i = 0; i < m; i++) {
    PetscInt b = g->edge_ptr[i], k = g->dense_row == i ? n : cnt[i], start = w;
    qsort(g->edge_col + b, (size_t)k, sizeof(PetscInt), OceanTestCmpInt);
    for (PetscInt t = 0; t < k; t++)
      if (t == 0 || g->edge_col[b + t] != g->edge_col[b + t - 1]) g->edge_col[w++] = g->edge_col[b + t];
    g->edge_ptr[i] = start;
  }
  g->edge_ptr[m] = w;
  g->maxrow      = 0;
  for (PetscInt i = 0; i < m; i++) g->maxrow = PetscMax(g->maxrow, g->edge_ptr[i + 1] - g->edge_ptr[i]);
  PetscCall(PetscFree(cnt));
  PetscCall(PetscFree2(rows, cols));
  g->row = OceanTestRowEdges;
  PetscFunctionReturn(0);
}

static inline PetscErrorCode OceanTestGenDestroy(OceanTestGen *g)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(g->edge_ptr));
  PetscCall(PetscFree(g->edge_col));
  PetscFunctionReturn(0);
}

/* Generators by name: lap2d, lap3d, lap3d27, elast, rmat, random (rectangular m x n), agg (m x ceil(m/aggsize)),
   empty (m x n, no entries), emptyrows (random with most rows empty).  size: nx for grids, scale for rmat, m for others. */
static inline PetscErrorCode OceanTestGenSetup(OceanTestGen *g, const char *name, PetscInt size, PetscInt n, PetscInt degree, PetscInt seed, PetscInt dense_row)
{
  PetscBool is;

  PetscFunctionBeginUser;
  PetscCall(PetscMemzero(g, sizeof(*g)));
  g->name      = name;
  g->seed      = seed;
  g->degree    = degree;
  g->dense_row = dense_row;
  g->dof       = 1;
  PetscCall(PetscStrcmp(name, "lap2d", &is));
  if (is) { g->nx = size; g->stencil = 5; g->m = g->n = size * size; g->maxrow = 5; g->row = OceanTestRowGrid; PetscFunctionReturn(0); }
  PetscCall(PetscStrcmp(name, "lap3d", &is));
  if (is) { g->nx = size; g->stencil = 7; g->m = g->n = size * size * size; g->maxrow = 7; g->row = OceanTestRowGrid; PetscFunctionReturn(0); }
  PetscCall(PetscStrcmp(name, "lap3d27", &is));
  if (is) { g->nx = size; g->stencil = 27; g->m = g->n = size * size * size; g->maxrow = 27; g->row = OceanTestRowGrid; PetscFunctionReturn(0); }
  PetscCall(PetscStrcmp(name, "elast", &is));
  if (is) { g->nx = size; g->stencil = 27; g->dof = 3; g->m = g->n = 3 * size * size * size; g->maxrow = 81; g->row = OceanTestRowGrid; PetscFunctionReturn(0); }
  PetscCall(PetscStrcmp(name, "rmat", &is));
  if (is) {
    g->m = g->n = (PetscInt)1 << size;
    PetscCall(OceanTestBuildEdges(g, PETSC_TRUE));
    PetscFunctionReturn(0);
  }
  PetscCall(PetscStrcmp(name, "random", &is));
  if (is) {
    g->m = size;
    g->n = n;
    PetscCall(OceanTestBuildEdges(g, PETSC_FALSE));
    PetscFunctionReturn(0);
  }
  PetscCall(PetscStrcmp(name, "emptyrows", &is));
  if (is) { /* m/4 random entries: most rows empty */
    g->m      = size;
    g->n      = n;
    g->nedges = PetscMax(size / 4, 1);
    PetscCall(OceanTestBuildEdges(g, PETSC_FALSE));
    PetscFunctionReturn(0);
  }
  PetscCall(PetscStrcmp(name, "agg", &is));
  if (is) { g->m = size; g->aggsize = PetscMax(degree, 2); g->n = (size + g->aggsize - 1) / g->aggsize; g->maxrow = 3; g->row = OceanTestRowAgg; PetscFunctionReturn(0); }
  PetscCall(PetscStrcmp(name, "empty", &is));
  if (is) {
    g->m      = size;
    g->n      = n;
    g->degree = 0;
    PetscCall(OceanTestBuildEdges(g, PETSC_FALSE));
    PetscFunctionReturn(0);
  }
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "Unknown generator %s", name);
}

/* Build the matrix of a generator with type `type` ("aij" or "aijocean") on comm; values from OceanTestValue. */
static inline PetscErrorCode OceanTestGenMat(MPI_Comm comm, OceanTestGen *g, MatType type, Mat *A)
{
  PetscInt rstart, rend, cstart, cend, *dnz, *onz, *cols, nc;
  PetscScalar *vals;
  PetscInt mloc = PETSC_DECIDE, nloc = PETSC_DECIDE, M = g->m, N = g->n;

  PetscFunctionBeginUser;
  PetscCall(PetscSplitOwnershipBlock(comm, PetscMax(g->bs_r, 1), &mloc, &M));
  PetscCall(PetscSplitOwnershipBlock(comm, PetscMax(g->bs_c, 1), &nloc, &N));
  PetscCallMPI(MPI_Scan(&mloc, &rend, 1, MPIU_INT, MPI_SUM, comm));
  PetscCallMPI(MPI_Scan(&nloc, &cend, 1, MPIU_INT, MPI_SUM, comm));
  rstart = rend - mloc;
  cstart = cend - nloc;
  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetSizes(*A, mloc, nloc, g->m, g->n));
  if (g->bs_r > 0 || g->bs_c > 0) PetscCall(MatSetBlockSizes(*A, PetscMax(g->bs_r, 1), PetscMax(g->bs_c, 1)));
  PetscCall(MatSetType(*A, type));
  PetscCall(PetscMalloc4(rend - rstart + 1, &dnz, rend - rstart + 1, &onz, g->maxrow + g->n + 1, &cols, g->maxrow + g->n + 1, &vals));
  for (PetscInt i = rstart; i < rend; i++) {
    PetscCall(g->row(g, i, &nc, cols));
    dnz[i - rstart] = onz[i - rstart] = 0;
    for (PetscInt k = 0; k < nc; k++) {
      if (cols[k] >= cstart && cols[k] < cend) dnz[i - rstart]++;
      else onz[i - rstart]++;
    }
  }
  PetscCall(MatXAIJSetPreallocation(*A, 1, dnz, onz, NULL, NULL));
  for (PetscInt i = rstart; i < rend; i++) {
    PetscCall(g->row(g, i, &nc, cols));
    for (PetscInt k = 0; k < nc; k++) vals[k] = OceanTestValue(i, cols[k], g->seed);
    PetscCall(MatSetValues(*A, 1, &i, nc, cols, vals, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscFree4(dnz, onz, cols, vals));
  PetscFunctionReturn(0);
}

/* Apply f to every stored value of a SeqAIJ or MPIAIJ matrix (both blocks), in place. */
static inline PetscErrorCode OceanTestMapValues(Mat A, PetscScalar (*f)(PetscInt i, PetscInt j, PetscScalar v, PetscInt seed), PetscInt seed)
{
  Mat       blocks[2];
  PetscInt  nblocks = 1, rstart, cstart;
  PetscBool mpi;
  const PetscInt *colmap = NULL;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)A, MATMPIAIJ, &mpi));
  PetscCall(MatGetOwnershipRange(A, &rstart, NULL));
  PetscCall(MatGetOwnershipRangeColumn(A, &cstart, NULL));
  if (mpi) {
    PetscCall(MatMPIAIJGetSeqAIJ(A, &blocks[0], &blocks[1], &colmap));
    nblocks = 2;
  } else blocks[0] = A;
  for (PetscInt b = 0; b < nblocks; b++) {
    const PetscInt *ai, *aj;
    PetscScalar    *aa;
    PetscMemType    mtype;
    PetscInt        m;
    PetscCall(MatGetLocalSize(blocks[b], &m, NULL));
    PetscCall(MatSeqAIJGetCSRAndMemType(blocks[b], &ai, &aj, &aa, &mtype));
    PetscCall(MatSeqAIJGetArray(blocks[b], &aa));
    for (PetscInt i = 0; i < m; i++)
      for (PetscInt k = ai[i]; k < ai[i + 1]; k++) {
        PetscInt gj = mpi ? (b == 0 ? aj[k] + cstart : colmap[aj[k]]) : aj[k];
        aa[k]       = f(i + rstart, gj, aa[k], seed);
      }
    PetscCall(MatSeqAIJRestoreArray(blocks[b], &aa));
  }
  /* assembly marks the new values in A's object state, as any value change must */
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

static inline PetscScalar OceanTestNewValue(PetscInt i, PetscInt j, PetscScalar v, PetscInt seed)
{
  return OceanTestValue(i, j, seed);
}

static inline PetscScalar OceanTestAbsValue(PetscInt i, PetscInt j, PetscScalar v, PetscInt seed)
{
  return PetscAbsScalar(v);
}

/* New values on the same structure, from another seed. */
static inline PetscErrorCode OceanTestRevalue(Mat A, PetscInt seed)
{
  PetscFunctionBeginUser;
  PetscCall(OceanTestMapValues(A, OceanTestNewValue, seed));
  PetscFunctionReturn(0);
}

/* |A| as a plain AIJ copy. */
static inline PetscErrorCode OceanTestAbs(Mat A, Mat *absA)
{
  PetscFunctionBeginUser;
  PetscCall(MatConvert(A, MATAIJ, MAT_INITIAL_MATRIX, absA));
  PetscCall(OceanTestMapValues(*absA, OceanTestAbsValue, 0));
  PetscFunctionReturn(0);
}

/* PETSc's own product of plain AIJ copies of A and B (reference), and of their absolute values (error bound). */
static inline PetscErrorCode OceanTestReference(MatProductType type, Mat A, Mat B, Mat *R, Mat *Bound)
{
  Mat Aaij, Baij, Aabs, Babs;

  PetscFunctionBeginUser;
  PetscCall(MatConvert(A, MATAIJ, MAT_INITIAL_MATRIX, &Aaij));
  PetscCall(MatConvert(B, MATAIJ, MAT_INITIAL_MATRIX, &Baij));
  PetscCall(OceanTestAbs(A, &Aabs));
  PetscCall(OceanTestAbs(B, &Babs));
  PetscCall(MatProductCreate(Aaij, Baij, NULL, R));
  PetscCall(MatProductSetType(*R, type));
  PetscCall(MatProductSetFromOptions(*R));
  PetscCall(MatProductSymbolic(*R));
  PetscCall(MatProductNumeric(*R));
  PetscCall(MatProductCreate(Aabs, Babs, NULL, Bound));
  PetscCall(MatProductSetType(*Bound, type));
  PetscCall(MatProductSetFromOptions(*Bound));
  PetscCall(MatProductSymbolic(*Bound));
  PetscCall(MatProductNumeric(*Bound));
  PetscCall(MatProductClear(*R));
  PetscCall(MatProductClear(*Bound));
  PetscCall(MatDestroy(&Aaij));
  PetscCall(MatDestroy(&Baij));
  PetscCall(MatDestroy(&Aabs));
  PetscCall(MatDestroy(&Babs));
  PetscFunctionReturn(0);
}

/* Identical sorted structure on every owned row, and values within 1e-12 of the bound: (|A||B|)_ij from Bound, or
   with Bound NULL the row's largest finite reference entry, NaN and +-Inf then where the reference has them;
   collective. */
static inline PetscErrorCode OceanTestCompare(Mat C, Mat R, Mat Bound, const char *what)
{
  PetscInt  rstart, rend, M, N, RM, RN, bad = 0, badall;
  PetscReal worst = 0, worstall;
  char      msg[256] = "";

  PetscFunctionBeginUser;
  PetscCall(MatGetSize(C, &M, &N));
  PetscCall(MatGetSize(R, &RM, &RN));
  PetscCheck(M == RM && N == RN, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: C is %" PetscInt_FMT " x %" PetscInt_FMT ", reference %" PetscInt_FMT " x %" PetscInt_FMT, what, M, N, RM, RN);
  PetscCall(MatGetOwnershipRange(C, &rstart, &rend));
  for (PetscInt i = rstart; i < rend && !bad; i++) {
    PetscInt           nc, nr, nb;
    const PetscInt    *cc, *cr, *cb = NULL;
    const PetscScalar *vc, *vr, *vb = NULL;
    PetscReal          rowmax = 0;
    PetscCall(MatGetRow(C, i, &nc, &cc, &vc));
    PetscCall(MatGetRow(R, i, &nr, &cr, &vr));
    if (Bound) PetscCall(MatGetRow(Bound, i, &nb, &cb, &vb));
    else {
      nb = nr;
      for (PetscInt k = 0; k < nr; k++)
        if (!PetscIsInfOrNanScalar(vr[k])) rowmax = PetscMax(rowmax, PetscAbsScalar(vr[k]));
    }
    if (nc != nr || nb != nr) {
      bad = 1;
      PetscCall(PetscSNPrintf(msg, sizeof(msg), "row %" PetscInt_FMT ": %" PetscInt_FMT " entries, reference %" PetscInt_FMT, i, nc, nr));
    }
    for (PetscInt k = 0; k < nr && !bad; k++) {
      PetscReal c = PetscRealPart(vc[k]), r = PetscRealPart(vr[k]), err = PetscAbsScalar(vc[k] - vr[k]);
      PetscReal tol = 1e-12 * (Bound ? PetscRealPart(vb[k]) : rowmax);
      PetscBool ok  = (PetscBool)(err <= tol);
      if (!Bound && (PetscIsInfOrNanReal(r) || PetscIsInfOrNanReal(c))) ok = (PetscBool)((PetscIsNanReal(r) && PetscIsNanReal(c)) || c == r);
      if (cc[k] != cr[k] || (Bound && cb[k] != cr[k])) {
        bad = 1;
        PetscCall(PetscSNPrintf(msg, sizeof(msg), "row %" PetscInt_FMT " entry %" PetscInt_FMT ": column %" PetscInt_FMT ", reference %" PetscInt_FMT, i, k, cc[k], cr[k]));
      } else if (!ok) {
        bad = 1;
        PetscCall(PetscSNPrintf(msg, sizeof(msg), "row %" PetscInt_FMT " column %" PetscInt_FMT ": %.17g, reference %.17g, bound %.3g", i, cc[k], (double)c, (double)r, (double)tol));
      }
      if (tol > 0) worst = PetscMax(worst, err / tol);
    }
    PetscCall(MatRestoreRow(C, i, &nc, &cc, &vc));
    PetscCall(MatRestoreRow(R, i, &nr, &cr, &vr));
    if (Bound) PetscCall(MatRestoreRow(Bound, i, &nb, &cb, &vb));
  }
  PetscCall(MPIU_Allreduce(&bad, &badall, 1, MPIU_INT, MPI_MAX, PetscObjectComm((PetscObject)C)));
  PetscCall(MPIU_Allreduce(&worst, &worstall, 1, MPIU_REAL, MPI_MAX, PetscObjectComm((PetscObject)C)));
  if (bad) PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAIL %s: %s\n", what, msg));
  PetscCheck(!badall, PetscObjectComm((PetscObject)C), PETSC_ERR_PLIB, "%s: result differs from PETSc's product", what);
  PetscFunctionReturn(0);
}

#endif
