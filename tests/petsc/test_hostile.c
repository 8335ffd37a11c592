static const char help[] =
  "Unusual but legal call sequences: the same sequence runs with petsc-ocean's types and with plain aij, and every\n"
  "intermediate result must agree (structure, values to 1e-12 of the row's largest entry, NaN/Inf in the same\n"
  "places, block sizes).\n"
  "  -case abc (-types X,Y,Z) | c_user (-op scale|zero|shift|setvalues) | c_newnonzero (-change after_reuse) | "
  "c_prealloc\n"
  "        | store_retrieve\n"
  "        | maij (-change values|move|gain) | blocksizes | inf | mixed_ptap | dense (-product AB|PtAP|ABt|RARt)\n"
  "        | structure_only | convert | c_merge (-op copy|axpy|aypx, -product AB|PtAP) | algorithm | coo\n";

#include "oceantest.h"
#include <petsc/private/petscimpl.h> /* PetscObjectStateGet(): what products and device copies go by */

#define MAX_SNAPSHOTS 8

/* The results one run of a sequence leaves: copies of the product after each step, and the petsc-ocean counters. */
typedef struct {
  Mat              snap[MAX_SNAPSHOTS];
  const char      *what[MAX_SNAPSHOTS];
  int              n;
  MatOceanCounters count;
} Run;

typedef struct {
  char      kase[32], op[32], change[32], product[16];
  char      types[3][32];
  PetscBool ocean; /* this run uses the types asked for; the reference run uses aij for all */
} Setup;

static PetscErrorCode Snapshot(Run *run, Mat D, const char *what)
{
  PetscFunctionBeginUser;
  PetscCheck(run->n < MAX_SNAPSHOTS, PETSC_COMM_SELF, PETSC_ERR_PLIB, "too many snapshots");
  PetscCall(MatDuplicate(D, MAT_COPY_VALUES, &run->snap[run->n]));
  run->what[run->n++] = what;
  PetscFunctionReturn(0);
}

static MatType TypeOf(Setup *s, int k)
{
  return s->ocean ? s->types[k] : MATAIJ;
}

static PetscErrorCode Gen(Setup *s, int k, const char *name, PetscInt size, PetscInt n, PetscInt degree, PetscInt seed,
                          PetscInt bs_r, PetscInt bs_c, Mat *M)
{
  OceanTestGen g;

  PetscFunctionBeginUser;
  PetscCall(OceanTestGenSetup(&g, name, size, n, degree, seed, -1));
  g.bs_r = bs_r;
  g.bs_c = bs_c;
  PetscCall(OceanTestGenMat(PETSC_COMM_WORLD, &g, TypeOf(s, k), M));
  PetscCall(OceanTestGenDestroy(&g));
  PetscFunctionReturn(0);
}

static PetscScalar ShiftedValue(PetscInt i, PetscInt j, PetscScalar v, PetscInt seed)
{
  return v + 0.25 * OceanTestValue(i, j, seed);
}

/* A*B*C with the three types asked for, then new values in all three and a REUSE. */
static PetscErrorCode SeqABC(Setup *s, Run *run)
{
  Mat A, B, C, D;

  PetscFunctionBeginUser;
  PetscCall(Gen(s, 0, "random", 60, 50, 4, 1, 0, 0, &A));
  PetscCall(Gen(s, 1, "random", 50, 70, 3, 2, 0, 0, &B));
  PetscCall(Gen(s, 2, "random", 70, 40, 3, 3, 0, 0, &C));
  PetscCall(MatMatMatMult(A, B, C, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &D));
  PetscCall(Snapshot(run, D, "ABC initial"));
  PetscCall(OceanTestMapValues(A, ShiftedValue, 11));
  PetscCall(OceanTestMapValues(B, ShiftedValue, 12));
  PetscCall(OceanTestMapValues(C, ShiftedValue, 13));
  PetscCall(MatMatMatMult(A, B, C, MAT_REUSE_MATRIX, PETSC_DEFAULT, &D));
  PetscCall(Snapshot(run, D, "ABC reuse"));
  PetscCall(MatDestroy(&D));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&C));
  PetscFunctionReturn(0);
}

/* The user changes C's values, then asks for the product again with unchanged operands: C = A*B again. */
static PetscErrorCode SeqCUser(Setup *s, Run *run)
{
  Mat       A, B, D;
  PetscBool is;
  PetscInt  rstart, rend;

  PetscFunctionBeginUser;
  PetscCall(Gen(s, 0, "lap3d", 6, 0, 0, 1, 0, 0, &A));
  PetscCall(Gen(s, 1, "lap3d", 6, 0, 0, 2, 0, 0, &B));
  PetscCall(MatMatMult(A, B, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &D));
  PetscCall(PetscStrcmp(s->op, "scale", &is));
  if (is) PetscCall(MatScale(D, 2.0));
  PetscCall(PetscStrcmp(s->op, "zero", &is));
  if (is) PetscCall(MatZeroEntries(D));
  PetscCall(PetscStrcmp(s->op, "shift", &is));
  if (is) PetscCall(MatShift(D, 5.0));
  PetscCall(PetscStrcmp(s->op, "setvalues", &is));
  if (is) { /* an entry that is in C's structure (the diagonal of a Laplacian squared) */
    PetscCall(MatGetOwnershipRange(D, &rstart, &rend));
    for (PetscInt i = rstart; i < rend; i += 7) PetscCall(MatSetValue(D, i, i, 42.0, INSERT_VALUES));
    PetscCall(MatAssemblyBegin(D, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(D, MAT_FINAL_ASSEMBLY));
  }
  PetscCall(Snapshot(run, D, "C changed by the user"));
  PetscCall(MatMatMult(A, B, MAT_REUSE_MATRIX, PETSC_DEFAULT, &D));
  PetscCall(Snapshot(run, D, "reuse with unchanged operands"));
  PetscCall(MatDestroy(&D));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(0);
}

/* The user adds an entry to C's structure, then the operands' values change and the product is asked for again. */
static PetscErrorCode SeqCNewNonzero(Setup *s, Run *run)
{
  Mat         A, B, D;
  PetscInt    rstart, rend, N;
  PetscBool   after_reuse;
  PetscMPIInt size;

  PetscFunctionBeginUser;
  PetscCall(Gen(s, 0, "lap3d", 6, 0, 0, 1, 0, 0, &A));
  PetscCall(Gen(s, 1, "lap3d", 6, 0, 0, 2, 0, 0, &B));
  PetscCall(MatMatMult(A, B, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &D));
  PetscCall(PetscStrcmp(s->change, "after_reuse", &after_reuse));
  if (after_reuse) { /* C's values from a numeric phase first (written on the device with device matrices) */
    PetscCall(OceanTestMapValues(A, ShiftedValue, 20));
    PetscCall(MatMatMult(A, B, MAT_REUSE_MATRIX, PETSC_DEFAULT, &D));
    PetscCall(Snapshot(run, D, "reuse before C's structure grew"));
  }
  PetscCall(MatSetOption(D, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatGetOwnershipRange(D, &rstart, &rend));
  PetscCall(MatGetSize(D, NULL, &N));
  for (PetscInt i = rstart; i < rend; i += 5)
    PetscCall(MatSetValue(D, i, (i + N / 2) % N, 7.0, INSERT_VALUES)); /* far from the stencil */
  PetscCall(MatAssemblyBegin(D, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(D, MAT_FINAL_ASSEMBLY));
  PetscCall(Snapshot(run, D, "C with new nonzeros"));
  PetscCall(OceanTestMapValues(A, ShiftedValue, 21));
  PetscCall(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  if (!s->ocean && size > 1) {
    /* PETSc 3.18's MPI REUSE into C's grown structure writes values off their places (plain aij: a product's value
       at a new nonzero): the reference is a new product copied into C's structure, as one process gives */
    Mat F;
    PetscCall(MatMatMult(A, B, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &F));
    PetscCall(MatZeroEntries(D));
    PetscCall(MatAXPY(D, 1.0, F, SUBSET_NONZERO_PATTERN));
    PetscCall(MatDestroy(&F));
  } else PetscCall(MatMatMult(A, B, MAT_REUSE_MATRIX, PETSC_DEFAULT, &D));
  PetscCall(Snapshot(run, D, "reuse after C's structure grew"));
  PetscCall(MatDestroy(&D));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(0);
}

/* The user preallocates C again, smaller, and fills a diagonal; then asks for the product again. */
static PetscErrorCode SeqCPrealloc(Setup *s, Run *run)
{
  Mat      A, B, D;
  PetscInt rstart, rend;

  PetscFunctionBeginUser;
  PetscCall(Gen(s, 0, "lap3d", 6, 0, 0, 1, 0, 0, &A));
  PetscCall(Gen(s, 1, "lap3d", 6, 0, 0, 2, 0, 0, &B));
  PetscCall(MatMatMult(A, B, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &D));
  PetscCall(MatSeqAIJSetPreallocation(D, 1, NULL));
  PetscCall(MatMPIAIJSetPreallocation(D, 1, NULL, 0, NULL));
  PetscCall(MatGetOwnershipRange(D, &rstart, &rend));
  for (PetscInt i = rstart; i < rend; i++) PetscCall(MatSetValue(D, i, i, 1.0, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(D, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(D, MAT_FINAL_ASSEMBLY));
  PetscCall(Snapshot(run, D, "C preallocated again"));
  PetscCall(OceanTestMapValues(A, ShiftedValue, 31));
  if (s->ocean) { /* C cannot hold the product any more: a clear error (aij writes what fits and drops the rest) */
    PetscErrorCode ierr;
    char          *msg = NULL;
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    ierr = MatMatMult(A, B, MAT_REUSE_MATRIX, PETSC_DEFAULT, &D);
    PetscCall(PetscPopErrorHandler());
    PetscCheck(ierr == PETSC_ERR_ARG_INCOMP, PETSC_COMM_SELF, PETSC_ERR_PLIB,
               "REUSE into a C preallocated smaller: error %d, expected %d", (int)ierr, (int)PETSC_ERR_ARG_INCOMP);
    PetscCall(PetscErrorMessage(ierr, NULL, (void *)&msg)); /* char ** before PETSc 3.26, then const char ** */
    PetscCheck(msg && strstr(msg, "no longer holds the product"), PETSC_COMM_SELF, PETSC_ERR_PLIB,
               "unclear message: %s", msg ? msg : "(none)");
  }
  PetscCall(MatDestroy(&D));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(0);
}

/* MatStoreValues / new values / MatRetrieveValues on an operand between REUSE products. */
static PetscErrorCode SeqStoreRetrieve(Setup *s, Run *run)
{
  Mat A, B, D;

  PetscFunctionBeginUser;
  PetscCall(Gen(s, 0, "elast", 3, 0, 0, 1, 0, 0, &A));
  PetscCall(Gen(s, 1, "elast", 3, 0, 0, 2, 0, 0, &B));
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_LOCATIONS, PETSC_FALSE));
  PetscCall(MatStoreValues(A));
  PetscCall(MatMatMult(A, B, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &D));
  PetscCall(Snapshot(run, D, "initial"));
  PetscCall(OceanTestMapValues(A, ShiftedValue, 41));
  PetscCall(MatMatMult(A, B, MAT_REUSE_MATRIX, PETSC_DEFAULT, &D));
  PetscCall(Snapshot(run, D, "reuse with new values"));
  {
    PetscObjectState before, after;
    PetscCall(PetscObjectStateGet((PetscObject)A, &before));
    PetscCall(MatRetrieveValues(A));
    PetscCall(PetscObjectStateGet((PetscObject)A, &after));
    /* the device copies of operands are refreshed by object state: ours must tell the values changed */
    PetscCheck(!s->ocean || after > before, PETSC_COMM_SELF, PETSC_ERR_PLIB,
               "MatRetrieveValues() left the object state of an aijocean matrix unchanged");
  }
  PetscCall(MatMatMult(A, B, MAT_REUSE_MATRIX, PETSC_DEFAULT, &D));
  PetscCall(Snapshot(run, D, "reuse after MatRetrieveValues"));
  PetscCall(MatDestroy(&D));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(0);
}

/* Refill an assembled matrix with the pattern of another generator (the user re-preallocates and assembles anew). */
static PetscErrorCode Refill(Mat M, const char *name, PetscInt size, PetscInt n, PetscInt degree, PetscInt seed)
{
  OceanTestGen       g;
  Mat                T;
  PetscInt           rstart, rend, nc, *dnz, *onz, cstart, cend;
  const PetscInt    *cols;
  const PetscScalar *vals;

  PetscFunctionBeginUser;
  PetscCall(OceanTestGenSetup(&g, name, size, n, degree, seed, -1));
  PetscCall(OceanTestGenMat(PetscObjectComm((PetscObject)M), &g, MATAIJ, &T));
  PetscCall(OceanTestGenDestroy(&g));
  PetscCall(MatGetOwnershipRange(T, &rstart, &rend));
  PetscCall(MatGetOwnershipRangeColumn(T, &cstart, &cend));
  PetscCall(PetscCalloc2(rend - rstart + 1, &dnz, rend - rstart + 1, &onz));
  for (PetscInt i = rstart; i < rend; i++) {
    PetscCall(MatGetRow(T, i, &nc, &cols, NULL));
    for (PetscInt k = 0; k < nc; k++) {
      if (cols[k] >= cstart && cols[k] < cend) dnz[i - rstart]++;
      else onz[i - rstart]++;
    }
    PetscCall(MatRestoreRow(T, i, &nc, &cols, NULL));
  }
  PetscCall(MatXAIJSetPreallocation(M, 1, dnz, onz, NULL, NULL));
  for (PetscInt i = rstart; i < rend; i++) {
    PetscCall(MatGetRow(T, i, &nc, &cols, &vals));
    PetscCall(MatSetValues(M, 1, &i, nc, cols, vals, INSERT_VALUES));
    PetscCall(MatRestoreRow(T, i, &nc, &cols, &vals));
  }
  PetscCall(MatAssemblyBegin(M, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(M, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscFree2(dnz, onz));
  PetscCall(MatDestroy(&T));
  PetscFunctionReturn(0);
}

/* Elasticity A (3 dof per node) and a MAIJ of a random inner AIJ (3 dof): P is the MAIJ itself for the ocean run,
   the MAIJ converted to aij (its block sizes kept) for the aij run. */
static PetscErrorCode GenMAIJ(Setup *s, Mat *A, Mat *inner, Mat *maij, Mat *P)
{
  PetscFunctionBeginUser;
  PetscCall(Gen(s, 0, "elast", 4, 0, 0, 1, 3, 3, A));
  PetscCall(Gen(s, 1, "random", 64, 20, 2, 2, 0, 0, inner));
  PetscCall(MatCreateMAIJ(*inner, 3, maij));
  if (s->ocean) PetscCall(PetscObjectReference((PetscObject)(*P = *maij)));
  else {
    PetscCall(MatConvert(*maij, MATAIJ, MAT_INITIAL_MATRIX, P));
    PetscCall(MatSetBlockSizesFromMats(*P, *maij, *maij));
  }
  PetscFunctionReturn(0);
}

/* PtAP with a MAIJ P (3 dof per node) whose inner AIJ changes between REUSE products.  The reference multiplies by the
   MAIJ converted to aij anew (what MatMult with the MAIJ applies): PETSc's own MPI PtAP with a MAIJ P, REUSE or new,
   keeps the values it saw first.  "move" preallocates the inner matrix anew, which only one process allows: a
   parallel MAIJ keeps the diagonal and off-diagonal blocks it was made with, and after a new preallocation PETSc's
   own MatConvert of it reads the old off-diagonal block through the new column map, past its end (valgrind, PETSc
   3.18, plain aij). */
static PetscErrorCode SeqMAIJ(Setup *s, Run *run)
{
  Mat       A, inner, maij, P, D;
  PetscBool is;
  PetscInt  rstart, rend, N;

  PetscFunctionBeginUser;
  PetscCall(PetscStrcmp(s->change, "move", &is));
  if (is) {
    PetscMPIInt size;
    PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    PetscCheck(
      size == 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG,
      "-case maij -change move on %d processes: a parallel MAIJ cannot follow a new preallocation of its inner "
      "matrix (PETSc's own MatMult and MatConvert of it then read stale blocks); run it on one process",
      (int)size);
  }
  PetscCall(GenMAIJ(s, &A, &inner, &maij, &P));
  PetscCall(MatPtAP(A, P, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &D));
  PetscCall(Snapshot(run, D, "PtAP with MAIJ P"));
  PetscCall(PetscStrcmp(s->change, "values", &is));
  if (is) PetscCall(OceanTestMapValues(inner, ShiftedValue, 51));
  PetscCall(PetscStrcmp(s->change, "move", &is));
  if (is) PetscCall(Refill(inner, "random", 64, 20, 2, 3)); /* same count of nonzeros here, other places */
  PetscCall(PetscStrcmp(s->change, "gain", &is));
  if (is) {
    PetscCall(MatSetOption(inner, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
    PetscCall(MatGetOwnershipRange(inner, &rstart, &rend));
    PetscCall(MatGetSize(inner, NULL, &N));
    if (rend > rstart) PetscCall(MatSetValue(inner, rstart, (rstart * 7 + 5) % N, 0.5, ADD_VALUES));
    PetscCall(MatAssemblyBegin(inner, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(inner, MAT_FINAL_ASSEMBLY));
  }
  if (s->ocean) {
    Mat Aa, Pa, R;

    PetscCall(MatPtAP(A, P, MAT_REUSE_MATRIX, PETSC_DEFAULT, &D));
    /* and against PETSc's own product with this very MAIJ as aij, in this process: where the aij run's MAIJ sees
       other inner blocks (a parallel inner matrix of another parent type, preallocated anew), this still holds */
    PetscCall(MatConvert(A, MATAIJ, MAT_INITIAL_MATRIX, &Aa));
    PetscCall(MatConvert(maij, MATAIJ, MAT_INITIAL_MATRIX, &Pa));
    PetscCall(MatConvert(Pa, MATAIJ, MAT_INPLACE_MATRIX, &Pa)); /* plain aij, whatever the inner matrix's type */
    PetscCall(MatPtAP(Aa, Pa, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &R));
    PetscCall(OceanTestCompare(D, R, NULL, "reuse after the inner AIJ changed, against PETSc's PtAP of the same MAIJ"));
    PetscCall(MatDestroy(&R));
    PetscCall(MatDestroy(&Pa));
    PetscCall(MatDestroy(&Aa));
  } else {
    PetscCall(MatDestroy(&D));
    PetscCall(MatDestroy(&P));
    PetscCall(MatConvert(maij, MATAIJ, MAT_INITIAL_MATRIX, &P));
    PetscCall(MatSetBlockSizesFromMats(P, maij, maij));
    PetscCall(MatPtAP(A, P, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &D));
  }
  PetscCall(Snapshot(run, D, "reuse after the inner AIJ changed"));
  PetscCall(MatDestroy(&D));
  PetscCall(MatDestroy(&P));
  PetscCall(MatDestroy(&maij));
  PetscCall(MatDestroy(&inner));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(0);
}

/* Products of operands with block sizes: C's block sizes as PETSc's own products give them. */
static PetscErrorCode SeqBlockSizes(Setup *s, Run *run)
{
  Mat A, P, D;

  PetscFunctionBeginUser;
  PetscCall(Gen(s, 0, "elast", 4, 0, 0, 1, 3, 3, &A));
  PetscCall(Gen(s, 1, "agg", 192, 0, 8, 2, 3, 2, &P)); /* 192 x 24 */
  PetscCall(MatPtAP(A, P, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &D));
  PetscCall(Snapshot(run, D, "PtAP"));
  PetscCall(MatDestroy(&D));
  PetscCall(MatMatMult(A, P, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &D));
  PetscCall(Snapshot(run, D, "AB"));
  PetscCall(MatDestroy(&D));
  PetscCall(MatTransposeMatMult(P, A, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &D));
  PetscCall(Snapshot(run, D, "AtB"));
  PetscCall(MatDestroy(&D));
  PetscCall(MatDestroy(&P));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(0);
}

static PetscScalar InfValue(PetscInt i, PetscInt j, PetscScalar v, PetscInt seed)
{
  if ((i * 31 + j) % 97 == 0) return PETSC_INFINITY;
  if ((i * 17 + j) % 89 == 0) return PETSC_NINFINITY;
  return v;
}

/* PtAP with +-Inf in P: Inf and NaN in the same places as PETSc's own PtAP. */
static PetscErrorCode SeqInf(Setup *s, Run *run)
{
  Mat A, P, D;

  PetscFunctionBeginUser;
  PetscCall(Gen(s, 0, "lap3d", 6, 0, 0, 1, 0, 0, &A));
  PetscCall(Gen(s, 1, "agg", 216, 0, 6, 2, 0, 0, &P));
  PetscCall(OceanTestMapValues(P, InfValue, 0));
  PetscCall(MatPtAP(A, P, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &D));
  PetscCall(Snapshot(run, D, "PtAP with Inf in P"));
  PetscCall(MatDestroy(&D));
  PetscCall(MatDestroy(&P));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(0);
}

/* PtAP with the types asked for (e.g. plain aij A, aijocean P); REUSE with new values; then A replaced by another
   matrix of the third type and REUSE again. */
static PetscErrorCode SeqMixedPtAP(Setup *s, Run *run)
{
  Mat A, A2, P, D;

  PetscFunctionBeginUser;
  PetscCall(Gen(s, 0, "lap3d27", 6, 0, 0, 1, 0, 0, &A));
  PetscCall(Gen(s, 1, "agg", 216, 0, 6, 2, 0, 0, &P));
  PetscCall(Gen(s, 2, "lap3d27", 6, 0, 0, 3, 0, 0, &A2));
  PetscCall(MatPtAP(A, P, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &D));
  PetscCall(Snapshot(run, D, "PtAP"));
  PetscCall(OceanTestMapValues(A, ShiftedValue, 61));
  PetscCall(OceanTestMapValues(P, ShiftedValue, 62));
  PetscCall(MatPtAP(A, P, MAT_REUSE_MATRIX, PETSC_DEFAULT, &D));
  PetscCall(Snapshot(run, D, "PtAP reuse"));
  PetscCall(MatPtAP(A2, P, MAT_REUSE_MATRIX, PETSC_DEFAULT, &D));
  PetscCall(Snapshot(run, D, "PtAP reuse with A replaced"));
  PetscCall(MatDestroy(&D));
  PetscCall(MatDestroy(&P));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&A2));
  PetscFunctionReturn(0);
}

/* Products with a dense operand: PETSc's implementations, with our type on the sparse side. */
static PetscErrorCode SeqDense(Setup *s, Run *run)
{
  Mat       S, Dn, D;
  PetscBool is;

  PetscFunctionBeginUser;
  PetscCall(Gen(s, 0, "random", 40, 40, 4, 1, 0, 0, &S));
  PetscCall(MatCreateDense(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, 40, 40, NULL, &Dn));
  PetscCall(MatSetRandom(Dn, NULL));
  PetscCall(MatAssemblyBegin(Dn, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(Dn, MAT_FINAL_ASSEMBLY));
  {
    Mat T;
    PetscCall(MatConvert(S, MATDENSE, MAT_INITIAL_MATRIX, &T)); /* deterministic values on any process count */
    PetscCall(MatCopy(T, Dn, SAME_NONZERO_PATTERN));
    PetscCall(MatShift(Dn, 3.0));
    PetscCall(MatDestroy(&T));
  }
  PetscCall(PetscStrcmp(s->product, "AB", &is));
  if (is) PetscCall(MatMatMult(Dn, S, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &D));
  PetscCall(PetscStrcmp(s->product, "PtAP", &is));
  if (is) PetscCall(MatPtAP(Dn, S, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &D));
  PetscCall(PetscStrcmp(s->product, "ABt", &is));
  if (is) PetscCall(MatMatTransposeMult(S, Dn, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &D));
  PetscCall(PetscStrcmp(s->product, "RARt", &is));
  if (is) PetscCall(MatRARt(S, Dn, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &D));
  PetscCall(Snapshot(run, D, s->product));
  PetscCall(MatDestroy(&D));
  PetscCall(MatDestroy(&Dn));
  PetscCall(MatDestroy(&S));
  PetscFunctionReturn(0);
}

/* MatConvert back to aij, as a new matrix and in place: PETSc's plain type, the same entries. */
static PetscErrorCode SeqConvert(Setup *s, Run *run)
{
  Mat       A, B;
  PetscBool plain;

  PetscFunctionBeginUser;
  PetscCall(Gen(s, 0, "lap3d27", 5, 0, 0, 1, 0, 0, &A));
  if (s->ocean) { /* a converter of its own (O(nnz), in place), not MatConvert's entry-by-entry copy */
    PetscErrorCode (*f)(void) = NULL, (*g)(void) = NULL;
    PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatConvert_seqaijocean_seqaij_C", &f));
    PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatConvert_mpiaijocean_mpiaij_C", &g));
    PetscCheck(f || g, PETSC_COMM_SELF, PETSC_ERR_PLIB, "no converter back to aij composed on the aijocean matrix");
  }
  PetscCall(MatConvert(A, MATAIJ, MAT_INITIAL_MATRIX, &B));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)B, &plain, MATSEQAIJ, MATMPIAIJ, ""));
  PetscCheck(plain, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatConvert to aij did not give a plain aij matrix");
  PetscCall(Snapshot(run, B, "converted copy"));
  PetscCall(MatDestroy(&B));
  PetscCall(MatConvert(A, MATAIJ, MAT_INPLACE_MATRIX, &A));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)A, &plain, MATSEQAIJ, MATMPIAIJ, ""));
  PetscCheck(plain, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatConvert in place to aij did not give a plain aij matrix");
  PetscCall(Snapshot(run, A, "converted in place"));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(0);
}

/* PETSc replaces C's header: MatAXPY(), MatAYPX() and MatCopy() with DIFFERENT_NONZERO_PATTERN merge a new matrix
   into C, which keeps its product but loses what was composed on it.  Then two REUSE products with new operand
   values, into C's new (larger) structure.  -op copy|axpy|aypx; -product AB (Laplacians) or PtAP (a MAIJ P with 3 dof
   per node; the aij run multiplies by the MAIJ converted to aij). */
static PetscErrorCode SeqCMerge(Setup *s, Run *run)
{
  Mat       A, B, D, R, inner = NULL, maij = NULL;
  PetscBool ptap, is;
  PetscInt  n;

  PetscFunctionBeginUser;
  PetscCall(PetscStrcmp(s->product, "PtAP", &ptap));
  if (ptap) {
    PetscCall(GenMAIJ(s, &A, &inner, &maij, &B));
    PetscCall(MatPtAP(A, B, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &D));
  } else {
    PetscCall(Gen(s, 0, "lap3d", 6, 0, 0, 1, 0, 0, &A));
    PetscCall(Gen(s, 1, "lap3d", 6, 0, 0, 2, 0, 0, &B));
    PetscCall(MatMatMult(A, B, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &D));
  }
  PetscCall(MatGetSize(D, &n, NULL));
  PetscCall(Gen(s, 2, "random", n, n, 2, 9, 0, 0, &R)); /* entries outside the product's structure */
  PetscCall(PetscStrcmp(s->op, "copy", &is));
  if (is) {
    Mat X;
    PetscCall(MatDuplicate(D, MAT_COPY_VALUES, &X));
    PetscCall(MatAXPY(X, 1.0, R, DIFFERENT_NONZERO_PATTERN));
    PetscCall(MatCopy(X, D, DIFFERENT_NONZERO_PATTERN));
    PetscCall(MatDestroy(&X));
  }
  PetscCall(PetscStrcmp(s->op, "axpy", &is));
  if (is) PetscCall(MatAXPY(D, 2.0, R, DIFFERENT_NONZERO_PATTERN));
  PetscCall(PetscStrcmp(s->op, "aypx", &is));
  if (is) PetscCall(MatAYPX(D, 2.0, R, DIFFERENT_NONZERO_PATTERN));
  PetscCall(Snapshot(run, D, "C after its header was replaced"));
  for (int round = 0; round < 2; round++) {
    PetscMPIInt size;

    PetscCall(OceanTestMapValues(A, ShiftedValue, 60 + round));
    PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    if (!s->ocean && size > 1) {
      /* PETSc 3.18's MPI REUSE into the replaced header writes values off their places (plain aij: nonzeros where
         a new product has no entry): the reference is a new product copied into C's structure, as one process gives */
      Mat F;
      if (ptap) PetscCall(MatPtAP(A, B, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &F));
      else PetscCall(MatMatMult(A, B, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &F));
      PetscCall(MatZeroEntries(D));
      PetscCall(MatAXPY(D, 1.0, F, SUBSET_NONZERO_PATTERN));
      PetscCall(MatDestroy(&F));
    } else if (ptap) PetscCall(MatPtAP(A, B, MAT_REUSE_MATRIX, PETSC_DEFAULT, &D));
    else PetscCall(MatMatMult(A, B, MAT_REUSE_MATRIX, PETSC_DEFAULT, &D));
    PetscCall(Snapshot(run, D, round ? "second reuse after the header was replaced" : "reuse after the header was replaced"));
  }
  PetscCall(MatDestroy(&R));
  PetscCall(MatDestroy(&D));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&maij));
  PetscCall(MatDestroy(&inner));
  PetscFunctionReturn(0);
}

/* AB, AtB and PtAP and their REUSE with new values, under whatever algorithm options the command line gives
   (-matmatmult_via, -mattransposematmult_via, -matptap_via: PETSc's own algorithms, for aij and for ours alike). */
static PetscErrorCode SeqAlgorithm(Setup *s, Run *run)
{
  Mat A, B, C[3];

  PetscFunctionBeginUser;
  PetscCall(Gen(s, 0, "random", 90, 90, 4, 1, 0, 0, &A));
  PetscCall(Gen(s, 1, "random", 90, 40, 3, 2, 0, 0, &B));
  PetscCall(MatMatMult(A, B, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C[0]));
  PetscCall(MatTransposeMatMult(A, B, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C[1]));
  PetscCall(MatPtAP(A, B, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C[2]));
  PetscCall(Snapshot(run, C[0], "AB"));
  PetscCall(Snapshot(run, C[1], "AtB"));
  PetscCall(Snapshot(run, C[2], "PtAP"));
  PetscCall(OceanTestMapValues(A, ShiftedValue, 70));
  PetscCall(OceanTestMapValues(B, ShiftedValue, 71));
  PetscCall(MatMatMult(A, B, MAT_REUSE_MATRIX, PETSC_DEFAULT, &C[0]));
  PetscCall(MatTransposeMatMult(A, B, MAT_REUSE_MATRIX, PETSC_DEFAULT, &C[1]));
  PetscCall(MatPtAP(A, B, MAT_REUSE_MATRIX, PETSC_DEFAULT, &C[2]));
  PetscCall(Snapshot(run, C[0], "AB reuse"));
  PetscCall(Snapshot(run, C[1], "AtB reuse"));
  PetscCall(Snapshot(run, C[2], "PtAP reuse"));
  for (int k = 0; k < 3; k++) PetscCall(MatDestroy(&C[k]));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(0);
}

/* COO assembly into a product matrix (on several processes ours, not MPIAIJ's) and into a new matrix of the same type:
   entries in any order, repeated (summed), with negative indices (ignored) and in rows of other processes (sent to
   their owner); values inserted, then added. */
static PetscErrorCode CooEntries(Mat M, PetscInt seed, PetscCount *n, PetscInt **ci, PetscInt **cj, PetscScalar **v)
{
  PetscInt    rows, cols;
  PetscMPIInt rank;

  PetscFunctionBeginUser;
  PetscCall(MatGetSize(M, &rows, &cols));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  *n = 7 * rows + 5;
  PetscCall(PetscMalloc3(*n, ci, *n, cj, *n, v));
  for (PetscCount k = 0; k < *n; k++) {
    const PetscInt h = (PetscInt)((k * 2654435761u + (PetscCount)(rank + 1) * 40503u + seed * 977u) % 1000003u);
    (*ci)[k]         = h % (rows + 1) - (k % 97 == 0); /* some -1 */
    (*cj)[k]         = (h / 7) % (cols + 1) - (k % 89 == 0);
    if ((*ci)[k] == rows) (*ci)[k] = (k * 31) % rows; /* a few rows hit many times */
    if ((*cj)[k] == cols) (*cj)[k] = 0;
    (*v)[k] = 1.0 + 0.001 * (PetscReal)(h % 1000) + rank;
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode SeqCOO(Setup *s, Run *run)
{
  Mat          A, B, C, N;
  PetscCount   n = 0;
  PetscInt    *ci, *cj, *ti, *tj, rows, cols, mloc, nloc;
  PetscScalar *v;
  PetscBool    mpi;

  PetscFunctionBeginUser;
  PetscCall(Gen(s, 0, "random", 60, 70, 4, 1, 0, 0, &A));
  PetscCall(Gen(s, 1, "random", 70, 50, 3, 2, 0, 0, &B));
  PetscCall(MatMatMult(A, B, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C));
  PetscCall(Snapshot(run, C, "AB"));
  PetscCall(CooEntries(C, 5, &n, &ci, &cj, &v));
  PetscCall(PetscMalloc2(n, &ti, n, &tj)); /* MatSetPreallocationCOO() may change the index arrays */
  PetscCall(PetscArraycpy(ti, ci, n));
  PetscCall(PetscArraycpy(tj, cj, n));
  PetscCall(MatSetPreallocationCOO(C, n, ti, tj));
  PetscCall(MatSetValuesCOO(C, v, INSERT_VALUES));
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)C, MATMPIAIJ, &mpi));
  if (s->ocean && mpi) { /* the route taken: petsc-ocean's COO assembly keeps its map composed on the matrix */
    PetscObject map;
    PetscCall(PetscObjectQuery((PetscObject)C, "MatOceanCOO", &map));
    PetscCheck(map, PETSC_COMM_SELF, PETSC_ERR_PLIB, "the %s product matrix was not assembled by petsc-ocean's COO",
               ((PetscObject)C)->type_name);
  }
  PetscCall(Snapshot(run, C, "COO into the product matrix"));
  for (PetscCount k = 0; k < n; k++) v[k] = -0.5 * v[k] + (PetscScalar)(k % 13);
  PetscCall(MatSetValuesCOO(C, v, ADD_VALUES));
  PetscCall(Snapshot(run, C, "COO values added"));
  PetscCall(MatGetSize(C, &rows, &cols));
  PetscCall(MatGetLocalSize(C, &mloc, &nloc));
  PetscCall(MatCreate(PETSC_COMM_WORLD, &N));
  PetscCall(MatSetSizes(N, mloc, nloc, rows, cols));
  PetscCall(MatSetType(N, TypeOf(s, 0)));
  PetscCall(PetscArraycpy(ti, ci, n));
  PetscCall(PetscArraycpy(tj, cj, n));
  PetscCall(MatSetPreallocationCOO(N, n, ti, tj));
  PetscCall(MatSetValuesCOO(N, v, INSERT_VALUES));
  PetscCall(Snapshot(run, N, "COO into a new matrix"));
  PetscCall(PetscFree2(ti, tj));
  PetscCall(PetscFree3(ci, cj, v));
  PetscCall(MatDestroy(&N));
  PetscCall(MatDestroy(&C));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(0);
}

static PetscErrorCode RunSequence(Setup *s, Run *run)
{
  struct {
    const char *name;
    PetscErrorCode (*fn)(Setup *, Run *);
  } table[] = {
    {"abc", SeqABC},
    {"c_user", SeqCUser},
    {"c_newnonzero", SeqCNewNonzero},
    {"c_prealloc", SeqCPrealloc},
    {"store_retrieve", SeqStoreRetrieve},
    {"maij", SeqMAIJ},
    {"blocksizes", SeqBlockSizes},
    {"inf", SeqInf},
    {"mixed_ptap", SeqMixedPtAP},
    {"dense", SeqDense},
    {"convert", SeqConvert},
    {"c_merge", SeqCMerge},
    {"algorithm", SeqAlgorithm},
    {"coo", SeqCOO},
  };
  PetscBool is;

  PetscFunctionBeginUser;
  for (size_t k = 0; k < sizeof(table) / sizeof(table[0]); k++) {
    PetscCall(PetscStrcmp(s->kase, table[k].name, &is));
    if (is) {
      PetscCall((*table[k].fn)(s, run));
      PetscCall(MatOceanGetCounters(&run->count));
      PetscFunctionReturn(0);
    }
  }
  SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "Unknown case %s", s->kase);
}

/* The same block sizes, and OceanTestCompare against the aij run without a bound matrix: the same sorted structure,
   values within 1e-12 of the row's largest reference entry, NaN and +-Inf where aij has them.  Collective. */
static PetscErrorCode CompareRuns(Mat C, Mat R, const char *what)
{
  PetscInt crbs, ccbs, rrbs, rcbs;

  PetscFunctionBeginUser;
  PetscCall(MatGetBlockSizes(C, &crbs, &ccbs));
  PetscCall(MatGetBlockSizes(R, &rrbs, &rcbs));
  PetscCheck(crbs == rrbs && ccbs == rcbs, PETSC_COMM_WORLD, PETSC_ERR_PLIB,
             "%s: block sizes %" PetscInt_FMT ", %" PetscInt_FMT "; aij gives %" PetscInt_FMT ", %" PetscInt_FMT, what,
             crbs, ccbs, rrbs, rcbs);
  PetscCall(OceanTestCompare(C, R, NULL, what));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  Setup     s;
  Run       ocean, ref;
  char      types[128] = "aijocean,aijocean,aijocean";
  char     *tok, *save = NULL;
  PetscInt  expect_products = -1;
  PetscBool flg;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(MatOceanInitializePackage());
  PetscCall(PetscMemzero(&s, sizeof(s)));
  PetscCall(PetscMemzero(&ocean, sizeof(ocean)));
  PetscCall(PetscMemzero(&ref, sizeof(ref)));
  PetscCall(PetscStrncpy(s.kase, "abc", sizeof(s.kase)));
  PetscCall(PetscStrncpy(s.op, "scale", sizeof(s.op)));
  PetscCall(PetscStrncpy(s.change, "values", sizeof(s.change)));
  PetscCall(PetscStrncpy(s.product, "AB", sizeof(s.product)));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-case", s.kase, sizeof(s.kase), NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-op", s.op, sizeof(s.op), NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-change", s.change, sizeof(s.change), NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-product", s.product, sizeof(s.product), NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-types", types, sizeof(types), NULL));
  /* -expect_products N: at least N local products ran through petsc-ocean (symbolic or numeric) */
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-expect_products", &expect_products, &flg));
  tok = strtok_r(types, ",", &save);
  for (int k = 0; k < 3; k++) {
    PetscCall(PetscStrncpy(s.types[k], tok ? tok : MATAIJOCEAN, sizeof(s.types[k])));
    if (tok) tok = strtok_r(NULL, ",", &save);
  }
  s.ocean = PETSC_FALSE;
  PetscCall(RunSequence(&s, &ref));
  s.ocean = PETSC_TRUE;
  PetscCall(RunSequence(&s, &ocean));
  PetscCheck(ocean.n == ref.n, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%d results, aij %d", ocean.n, ref.n);
  for (int k = 0; k < ocean.n; k++) PetscCall(CompareRuns(ocean.snap[k], ref.snap[k], ocean.what[k]));
  if (flg) {
    PetscInt64 ran = (ocean.count.symbolic + ocean.count.numeric) - (ref.count.symbolic + ref.count.numeric);
    PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &ran, 1, MPIU_INT64, MPI_MIN, PETSC_COMM_WORLD));
    PetscCheck(ran >= expect_products, PETSC_COMM_WORLD, PETSC_ERR_PLIB,
               "%" PetscInt64_FMT " products ran through petsc-ocean on some process, expected at least %" PetscInt_FMT,
               ran, expect_products);
  }
  for (int k = 0; k < ocean.n; k++) PetscCall(MatDestroy(&ocean.snap[k]));
  for (int k = 0; k < ref.n; k++) PetscCall(MatDestroy(&ref.snap[k]));
  PetscCall(PetscFinalize());
  return 0;
}
