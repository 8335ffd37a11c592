/* The PETSc-level tests' own pieces: Mats from the common generator (tests/common/gen.h; the same matrix on any
   number of processes) and the explicit comparison against PETSc's own products. */
#ifndef OCEANTEST_H
#define OCEANTEST_H

#include <petscmat.h>
#include "petscmatocean.h"
#include "gen.h"

/* A deterministic value in [-1, -0.1] U [0.1, 1] for entry (i, j): identical on every process. */
static inline PetscScalar OceanTestValue(PetscInt i, PetscInt j, PetscInt seed)
{
  return GenValueMul((uint64_t)seed, i, j);
}

typedef struct {
  const char *name;
  PetscInt    m, n; /* global sizes */
  PetscInt    seed;
  PetscInt    bs_r, bs_c; /* block sizes given to the matrix (0: none) */
  GenCSR      csr;        /* the whole matrix, the same on every process; values OceanTestValue's */
} OceanTestGen;

/* Generators by name: lap2d, lap3d, lap3d27, elast, rmat, random (rectangular m x n), agg (m x ceil(m/aggsize)),
   empty (m x n, no entries), emptyrows (random with most rows empty).  size: nx for grids, scale for rmat, m for
   others; degree: edges per row (rmat, random), aggsize (agg, at least 2); dense_row (rmat, random, empty, emptyrows;
   -1: none): a row with every column.  From tests/common/gen.h: its stencils, xorshift edges and aggregation. */
static inline PetscErrorCode OceanTestGenSetup(OceanTestGen *g, const char *name, PetscInt size, PetscInt n,
                                               PetscInt degree, PetscInt seed, PetscInt dense_row)
{
  static const struct {
    const char *name;
    int         dim, dof, box;
  } grids[] = {{"lap2d", 2, 1, 0}, {"lap3d", 3, 1, 0}, {"lap3d27", 3, 1, 1}, {"elast", 3, 3, 1}};

  const uint64_t s = (uint64_t)seed;
  PetscBool      is;

  PetscFunctionBeginUser;
  PetscCall(PetscMemzero(g, sizeof(*g)));
  g->name = name;
  g->seed = seed;
  for (size_t k = 0; k < sizeof(grids) / sizeof(grids[0]); k++) {
    PetscCall(PetscStrcmp(name, grids[k].name, &is));
    if (is)
      GenStencil(&g->csr, size, size, grids[k].dim == 3 ? size : 1, grids[k].dof, grids[k].box, GEN_VALUES_MUL, s, 0);
  }
  PetscCall(PetscStrcmp(name, "rmat", &is));
  if (is)
    GenXorshiftEdges(&g->csr, (PetscInt)1 << size, (PetscInt)1 << size, ((PetscInt)1 << size) * degree, 1, dense_row,
                     GEN_VALUES_MUL, s);
  PetscCall(PetscStrcmp(name, "random", &is));
  if (is) GenXorshiftEdges(&g->csr, size, n, size * degree, 0, dense_row, GEN_VALUES_MUL, s);
  PetscCall(PetscStrcmp(name, "emptyrows", &is)); /* m/4 random entries: most rows empty */
  if (is) GenXorshiftEdges(&g->csr, size, n, PetscMax(size / 4, 1), 0, dense_row, GEN_VALUES_MUL, s);
  PetscCall(PetscStrcmp(name, "agg", &is));
  if (is) GenAggregation(&g->csr, size, PetscMax(degree, 2), GEN_VALUES_MUL, s);
  PetscCall(PetscStrcmp(name, "empty", &is));
  if (is) GenXorshiftEdges(&g->csr, size, n, 0, 0, dense_row, GEN_VALUES_MUL, s);
  PetscCheck(g->csr.rowptr, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "Unknown generator %s", name);
  g->m = (PetscInt)g->csr.nrows;
  g->n = (PetscInt)g->csr.ncols;
  PetscFunctionReturn(0);
}

static inline PetscErrorCode OceanTestGenDestroy(OceanTestGen *g)
{
  PetscFunctionBeginUser;
  GenFree(&g->csr);
  PetscFunctionReturn(0);
}

/* Build the matrix of a generator with type `type` ("aij" or "aijocean") on comm: the rows of its CSR this process
   owns. */
static inline PetscErrorCode OceanTestGenMat(MPI_Comm comm, OceanTestGen *g, MatType type, Mat *A)
{
  const GenCSR *c = &g->csr;
  PetscInt      rstart, rend, cstart, cend, *dnz, *onz, *cols, maxrow = 0;
  PetscScalar  *vals;
  PetscInt      mloc = PETSC_DECIDE, nloc = PETSC_DECIDE, M = g->m, N = g->n;

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
  for (PetscInt i = rstart; i < rend; i++) maxrow = PetscMax(maxrow, (PetscInt)(c->rowptr[i + 1] - c->rowptr[i]));
  PetscCall(PetscMalloc4(rend - rstart + 1, &dnz, rend - rstart + 1, &onz, maxrow + 1, &cols, maxrow + 1, &vals));
  for (PetscInt i = rstart; i < rend; i++) {
    dnz[i - rstart] = onz[i - rstart] = 0;
    for (int64_t p = c->rowptr[i]; p < c->rowptr[i + 1]; p++) {
      if (c->colidx[p] >= cstart && c->colidx[p] < cend) dnz[i - rstart]++;
      else onz[i - rstart]++;
    }
  }
  PetscCall(MatXAIJSetPreallocation(*A, 1, dnz, onz, NULL, NULL));
  /* its block size 1 is for both maps: the generator's block sizes again */
  if (g->bs_r > 0 || g->bs_c > 0) PetscCall(MatSetBlockSizes(*A, PetscMax(g->bs_r, 1), PetscMax(g->bs_c, 1)));
  for (PetscInt i = rstart; i < rend; i++) {
    PetscInt nc = (PetscInt)(c->rowptr[i + 1] - c->rowptr[i]);
    for (PetscInt k = 0; k < nc; k++) cols[k] = c->colidx[c->rowptr[i] + k], vals[k] = c->values[c->rowptr[i] + k];
    PetscCall(MatSetValues(*A, 1, &i, nc, cols, vals, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscFree4(dnz, onz, cols, vals));
  PetscFunctionReturn(0);
}

/* Apply f to every stored value of a SeqAIJ or MPIAIJ matrix (both blocks), in place. */
static inline PetscErrorCode
OceanTestMapValues(Mat A, PetscScalar (*f)(PetscInt i, PetscInt j, PetscScalar v, PetscInt seed), PetscInt seed)
{
  Mat             blocks[2];
  PetscInt        nblocks = 1, rstart, cstart;
  PetscBool       mpi;
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
    PetscInt        m, n;
    PetscBool       done;
    PetscCall(MatGetLocalSize(blocks[b], &m, NULL));
    /* the host structure (aijcusparse-based matrices keep it there too) and the host values, brought up to date */
    PetscCall(MatGetRowIJ(blocks[b], 0, PETSC_FALSE, PETSC_FALSE, &n, &ai, &aj, &done));
    PetscCheck(done && n == m, PETSC_COMM_SELF, PETSC_ERR_SUP, "no host CSR for block %" PetscInt_FMT, b);
    PetscCall(MatSeqAIJGetArray(blocks[b], &aa));
    for (PetscInt i = 0; i < m; i++)
      for (PetscInt k = ai[i]; k < ai[i + 1]; k++) {
        PetscInt gj = mpi ? (b == 0 ? aj[k] + cstart : colmap[aj[k]]) : aj[k];
        aa[k]       = f(i + rstart, gj, aa[k], seed);
      }
    PetscCall(MatSeqAIJRestoreArray(blocks[b], &aa));
    PetscCall(MatRestoreRowIJ(blocks[b], 0, PETSC_FALSE, PETSC_FALSE, &n, &ai, &aj, &done));
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
  PetscReal worst    = 0, worstall;
  char      msg[256] = "";

  PetscFunctionBeginUser;
  PetscCall(MatGetSize(C, &M, &N));
  PetscCall(MatGetSize(R, &RM, &RN));
  PetscCheck(M == RM && N == RN, PETSC_COMM_SELF, PETSC_ERR_PLIB,
             "%s: C is %" PetscInt_FMT " x %" PetscInt_FMT ", reference %" PetscInt_FMT " x %" PetscInt_FMT, what, M, N,
             RM, RN);
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
      PetscCall(PetscSNPrintf(msg, sizeof(msg),
                              "row %" PetscInt_FMT ": %" PetscInt_FMT " entries, reference %" PetscInt_FMT, i, nc, nr));
    }
    for (PetscInt k = 0; k < nr && !bad; k++) {
      PetscReal c = PetscRealPart(vc[k]), r = PetscRealPart(vr[k]), err = PetscAbsScalar(vc[k] - vr[k]);
      PetscReal tol = 1e-12 * (Bound ? PetscRealPart(vb[k]) : rowmax);
      PetscBool ok  = (PetscBool)(err <= tol);
      if (!Bound && (PetscIsInfOrNanReal(r) || PetscIsInfOrNanReal(c)))
        ok = (PetscBool)((PetscIsNanReal(r) && PetscIsNanReal(c)) || c == r);
      if (cc[k] != cr[k] || (Bound && cb[k] != cr[k])) {
        bad = 1;
        PetscCall(PetscSNPrintf(msg, sizeof(msg),
                                "row %" PetscInt_FMT " entry %" PetscInt_FMT ": column %" PetscInt_FMT
                                ", reference %" PetscInt_FMT,
                                i, k, cc[k], cr[k]));
      } else if (!ok) {
        bad = 1;
        PetscCall(PetscSNPrintf(msg, sizeof(msg),
                                "row %" PetscInt_FMT " column %" PetscInt_FMT ": %.17g, reference %.17g, bound %.3g", i,
                                cc[k], (double)c, (double)r, (double)tol));
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
