/* The guard around every petsc-ocean product (sequential, the MPIAIJ "backend" route, PtAP with a MAIJ P): what
   PETSc does not check between the phases of a product, and what its generic paths expect of a product matrix.
   - Operand sparsity: PETSc never checks that MAT_REUSE_MATRIX keeps it; a change redoes the symbolic phase.
   - C's sparsity: a user who changed C's structure (new nonzeros, a new preallocation) gets the product in C's
     structure from then on (zeros where the product has none, a PETSc error for a product entry C cannot hold), as
     with aij; the product is computed into a matrix of its own ("shadow") and copied.
   - MAIJ (PCHMG, GAMG with several dof per node): P is expanded into an aijocean matrix, refreshed by value before
     each numeric phase (made anew when the inner AIJ's sparsity changed) and swapped in for each phase.
   - C's block sizes, as PETSc's own products set them (its MPIAIJ "backend" route leaves them unset), for the
     sequential products too.
   - C->ops->matmultnumeric and transposematmultnumeric, which PETSc's generic triple products call directly. */
#include "mat/matocean.h"

static PetscErrorCode MatOceanGetUsed(Mat M, PetscLogDouble *used)
{
  PetscBool seq;
  MatInfo   info;

  PetscFunctionBegin;
  *used = -1;
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)M, MATSEQAIJ, &seq));
  if (!seq || !M->data || !M->assembled) PetscFunctionReturn(OCEAN_PETSC_OK);
  PetscCall(MatGetInfo(M, MAT_LOCAL, &info));
  *used = info.nz_used;
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

PetscErrorCode MatOceanGetStructure_Private(Mat M, MatOceanStructure *s)
{
  PetscBool mpi;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(s, sizeof(*s)));
  PetscCall(PetscObjectGetId((PetscObject)M, &s->id[0]));
  PetscCall(MatGetNonzeroState(M, &s->nz[0]));
  PetscCall(MatOceanGetUsed(M, &s->used[0]));
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)M, MATMPIAIJ, &mpi));
  if (mpi && M->data) {
    Mat blocks[2];
    PetscCall(MatMPIAIJGetSeqAIJ(M, &blocks[0], &blocks[1], NULL));
    for (int k = 0; k < 2; k++) {
      if (!blocks[k]) continue;
      PetscCall(PetscObjectGetId((PetscObject)blocks[k], &s->id[k + 1]));
      PetscCall(MatGetNonzeroState(blocks[k], &s->nz[k + 1]));
      PetscCall(MatOceanGetUsed(blocks[k], &s->used[k + 1]));
    }
  }
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

PetscBool MatOceanStructureEqual_Private(const MatOceanStructure *a, const MatOceanStructure *b)
{
  for (int k = 0; k < 3; k++)
    if (a->id[k] != b->id[k] || a->nz[k] != b->nz[k] || a->used[k] != b->used[k]) return PETSC_FALSE;
  return PETSC_TRUE;
}

typedef struct {
  Mat                 P;      /* the user's MAIJ, or NULL */
  const MatOceanType *type;   /* with a MAIJ P: the ocean type of A, whose converter and products P's expansion takes */
  Mat                 Paij;   /* its expansion, of the ocean type */
  MatOceanStructure   inner;  /* the MAIJ's inner AIJ when Paij was made */
  Mat                 shadow; /* the product in a matrix of its own, once the user changed C's structure */
  PetscErrorCode (*symbolic)(Mat);
  PetscErrorCode (*numeric)(Mat);
  MatOceanStructure ops[2]; /* the operands at the last symbolic phase */
  MatOceanStructure c;      /* C when petsc-ocean last wrote it */
} MatOceanWrap;

static PetscErrorCode MatOceanWrapFree(void *ptr)
{
  MatOceanWrap *w = (MatOceanWrap *)ptr;

  PetscFunctionBegin;
  PetscCall(MatDestroy(&w->Paij));
  PetscCall(MatDestroy(&w->shadow));
  PetscCall(PetscFree(w));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

static PetscErrorCode MatOceanWrapGet(Mat C, PetscBool create, MatOceanWrap **w)
{
  PetscFunctionBegin;
  PetscCall(MatOceanQueryPointer_Private((PetscObject)C, "MatOceanWrap", (void **)w));
  if (!*w && create) {
    PetscCall(PetscNew(w));
    PetscCall(MatOceanComposePointer_Private((PetscObject)C, "MatOceanWrap", *w, MatOceanWrapFree));
  }
  PetscCheck(*w || !create, PETSC_COMM_SELF, PETSC_ERR_PLIB, "petsc-ocean product wrapper missing");
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* PETSc's product data of C dropped, before a new symbolic phase or a new dispatch. */
static PetscErrorCode MatOceanProductDataReset(Mat C)
{
  Mat_Product *product = C->product;

  PetscFunctionBegin;
#if PETSC_VERSION_LT(3, 25, 0)
  if (product->destroy) PetscCall((*product->destroy)(product->data));
#else
  if (product->destroy) PetscCall((*product->destroy)(&product->data)); /* 3.25: the address of the pointer */
#endif
  product->data    = NULL;
  product->destroy = NULL;
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

static PetscErrorCode MatProductSymbolic_OceanWrap(Mat C);

/* C's wrapper; or, where PETSc dropped it (MatHeaderMerge() under MatAXPY(), MatAYPX() and MatCopy() with
   DIFFERENT_NONZERO_PATTERN destroys C's composed objects but keeps C->product and C->ops), the product dispatched
   again from its operands, which wraps it anew (*lost then PETSC_TRUE: C's structure is the user's).  Collective. */
static PetscErrorCode MatOceanWrapFind(Mat C, MatOceanWrap **w, PetscBool *lost)
{
  PetscInt    missing;
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCall(MatOceanWrapGet(C, PETSC_FALSE, w));
  missing = !*w;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)C), &size));
  if (size > 1) PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &missing, 1, MPIU_INT, MPI_MAX, PetscObjectComm((PetscObject)C)));
  *lost = missing ? PETSC_TRUE : PETSC_FALSE;
  if (!missing) PetscFunctionReturn(OCEAN_PETSC_OK);
  PetscCall(PetscInfo(C, "petsc-ocean: C's product wrapper was dropped with its header (MatAXPY(), MatAYPX() or "
                         "MatCopy() with DIFFERENT_NONZERO_PATTERN); the product is set up again from its operands\n"));
  PetscCall(PetscObjectCompose((PetscObject)C, "MatOceanWrap", NULL));
  PetscCall(MatOceanProductDataReset(C));
  C->ops->productsymbolic = NULL;
  C->ops->productnumeric  = NULL;
  PetscCall(MatProductSetFromOptions(C));
  PetscCall(MatOceanWrapGet(C, PETSC_FALSE, w));
  PetscCheck(*w && C->ops->productsymbolic == MatProductSymbolic_OceanWrap,
             PETSC_COMM_SELF, PETSC_ERR_PLIB, "petsc-ocean: the product of %s and %s (%s) could not be set up again",
             ((PetscObject)C->product->A)->type_name, ((PetscObject)C->product->B)->type_name,
             MatProductTypes[C->product->type]);
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

static PetscErrorCode MatOceanWrapInnerState(MatOceanWrap *w, MatOceanStructure *s)
{
  Mat inner;

  PetscFunctionBegin;
  PetscCall(MatMAIJGetAIJ(w->P, &inner));
  PetscCall(MatOceanGetStructure_Private(inner, s));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* Expand the MAIJ into AIJ: a new ocean matrix the first time and whenever the inner AIJ's sparsity changed (its new
   object id then tells the structure check to redo the symbolic phase), values only otherwise. */
static PetscErrorCode MatOceanWrapExpandMAIJ(MatOceanWrap *w)
{
  Mat               tmp;
  MatOceanStructure inner;

  PetscFunctionBegin;
  PetscCall(MatOceanWrapInnerState(w, &inner));
  if (w->Paij && !MatOceanStructureEqual_Private(&inner, &w->inner)) PetscCall(MatDestroy(&w->Paij));
  PetscCall(MatConvert(w->P, w->type->base, MAT_INITIAL_MATRIX, &tmp));
  if (!w->Paij) {
    PetscCall((*w->type->convert_to)(tmp, w->type->name, MAT_INPLACE_MATRIX, &tmp));
    w->Paij  = tmp;
    w->inner = inner;
  } else {
    PetscCall(MatCopy(tmp, w->Paij, SAME_NONZERO_PATTERN));
    PetscCall(MatDestroy(&tmp));
  }
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

static PetscErrorCode MatOceanWrapOperands(Mat C, MatOceanWrap *w, Mat ops[2])
{
  PetscFunctionBegin;
  ops[0] = C->product->A;
  ops[1] = w->Paij ? w->Paij : C->product->B;
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

static PetscErrorCode MatOceanWrapRecordStructure(Mat C, MatOceanWrap *w)
{
  Mat ops[2];

  PetscFunctionBegin;
  PetscCall(MatOceanWrapOperands(C, w, ops));
  for (int k = 0; k < 2; k++) PetscCall(MatOceanGetStructure_Private(ops[k], &w->ops[k]));
  PetscCall(MatOceanGetStructure_Private(C, &w->c));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

enum { MAT_OCEAN_CHANGED_OPERANDS = 1, MAT_OCEAN_CHANGED_C = 2 };

/* What changed since petsc-ocean last wrote C, agreed on by every process (a structure change on one process only
   must not leave the others in another phase). */
static PetscErrorCode MatOceanWrapChanges(Mat C, MatOceanWrap *w, PetscInt *changes)
{
  Mat               ops[2];
  MatOceanStructure now;
  PetscMPIInt       size;

  PetscFunctionBegin;
  *changes = 0;
  if (w->P) {
    PetscCall(MatOceanWrapInnerState(w, &now));
    if (!w->Paij || !MatOceanStructureEqual_Private(&now, &w->inner)) *changes |= MAT_OCEAN_CHANGED_OPERANDS;
  }
  PetscCall(MatOceanWrapOperands(C, w, ops));
  for (int k = 0; k < 2; k++) {
    PetscCall(MatOceanGetStructure_Private(ops[k], &now));
    if (!MatOceanStructureEqual_Private(&now, &w->ops[k])) *changes |= MAT_OCEAN_CHANGED_OPERANDS;
  }
  PetscCall(MatOceanGetStructure_Private(C, &now));
  if (!MatOceanStructureEqual_Private(&now, &w->c)) *changes |= MAT_OCEAN_CHANGED_C;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)C), &size));
  if (size > 1) PetscCall(MPIU_Allreduce(MPI_IN_PLACE, changes, 1, MPIU_INT, MPI_BOR, PetscObjectComm((PetscObject)C)));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

static PetscErrorCode MatProductNumeric_OceanWrap(Mat C);

/* PETSc's generic triple products (ABC, PtAP and RARt fallbacks) call these directly with the operands. */
static PetscErrorCode MatOceanWrapNumericWith(Mat A, Mat B, Mat C)
{
  Mat_Product *product = C->product;
  Mat          a, b;

  PetscFunctionBegin;
  MatCheckProduct(C, 3);
  a          = product->A;
  b          = product->B;
  product->A = A;
  product->B = B;
  PetscCall(MatProductNumeric_OceanWrap(C));
  product->A = a;
  product->B = b;
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* C's block sizes as PETSc's own AIJ products set them (GAMG's coarsening relies on them): AB rows of A and columns of
   B, AtB columns of A and of B, PtAP columns of P on both sides (product->B: the P of the caller's product). */
PetscErrorCode MatOceanProductSetBlockSizes_Private(Mat C)
{
  Mat_Product *product = C->product;
  Mat          A = product->A, B = product->B;

  PetscFunctionBegin;
  if (product->type == MATPRODUCT_AB) PetscCall(MatSetBlockSizesFromMats(C, A, B));
  else if (product->type == MATPRODUCT_AtB)
    PetscCall(MatSetBlockSizes(C, PetscAbs(A->cmap->bs), PetscAbs(B->cmap->bs)));
  else PetscCall(MatSetBlockSizes(C, PetscAbs(B->cmap->bs), PetscAbs(B->cmap->bs)));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

static PetscErrorCode MatProductSymbolic_OceanWrap(Mat C)
{
  Mat_Product  *product = C->product;
  MatOceanWrap *w;
  PetscBool     lost;

  PetscFunctionBegin;
  PetscCall(MatOceanWrapFind(C, &w, &lost));
  PetscCall(MatDestroy(&w->shadow));
  if (w->P) { /* the inner product is PtAP(A, Paij) of ocean types: choose its phases now that Paij exists */
    PetscCall(MatOceanWrapExpandMAIJ(w));
    product->B              = w->Paij;
    C->ops->productsymbolic = NULL;
    w->symbolic             = NULL;
    PetscCall((*w->type->productsetfromoptions)(C)); /* wraps again: sets w->symbolic */
    PetscCheck(w->symbolic && w->symbolic != MatProductSymbolic_OceanWrap, PETSC_COMM_SELF, PETSC_ERR_SUP,
               "petsc-ocean has no PtAP for %s and %s", ((PetscObject)product->A)->type_name,
               ((PetscObject)w->Paij)->type_name);
  }
  PetscCall((*w->symbolic)(C));
  if (w->P) product->B = w->P;
  /* PETSc's MPIAIJ "backend" route leaves C's block sizes unset: as PETSc's own products set them (a MAIJ P's
     column blocks included), which GAMG's coarsening reads */
  PetscCall(MatOceanProductSetBlockSizes_Private(C));
  w->numeric                      = C->ops->productnumeric;
  C->ops->productsymbolic         = MatProductSymbolic_OceanWrap;
  C->ops->productnumeric          = MatProductNumeric_OceanWrap;
  C->ops->matmultnumeric          = product->type == MATPRODUCT_AB ? MatOceanWrapNumericWith : NULL;
  C->ops->transposematmultnumeric = product->type == MATPRODUCT_AtB ? MatOceanWrapNumericWith : NULL;
  PetscCall(MatOceanWrapRecordStructure(C, w));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* Whether C's structure still holds every entry of the product's (both sorted by row); collective. */
static PetscErrorCode MatOceanWrapCheckHolds(Mat C, Mat product)
{
  PetscInt rstart, rend, bad_row = -1, bad_col = -1, any;

  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRange(product, &rstart, &rend));
  for (PetscInt i = rstart; i < rend && bad_row < 0; i++) {
    PetscInt        np, nc, k = 0;
    const PetscInt *cp, *cc;

    PetscCall(MatGetRow(product, i, &np, &cp, NULL));
    PetscCall(MatGetRow(C, i, &nc, &cc, NULL));
    for (PetscInt e = 0; e < np && bad_row < 0; e++) {
      while (k < nc && cc[k] < cp[e]) k++;
      if (k == nc || cc[k] != cp[e]) {
        bad_row = i;
        bad_col = cp[e];
      }
    }
    PetscCall(MatRestoreRow(C, i, &nc, &cc, NULL));
    PetscCall(MatRestoreRow(product, i, &np, &cp, NULL));
  }
  any = bad_row >= 0;
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &any, 1, MPIU_INT, MPI_MAX, PetscObjectComm((PetscObject)C)));
  PetscCheck(!any, PetscObjectComm((PetscObject)C), PETSC_ERR_ARG_INCOMP,
             "C (%s, %" PetscInt_FMT " x %" PetscInt_FMT ") no longer holds the product's structure%s%" PetscInt_FMT
             ", column %" PetscInt_FMT
             "): its structure was changed after the symbolic phase; create the product anew (MAT_INITIAL_MATRIX)",
             ((PetscObject)C)->type_name, C->rmap->N, C->cmap->N,
             bad_row >= 0 ? " (first at row " : " (on another process; -1 here: row ", bad_row, bad_col);
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* C's device CSR (of each block, for MPIAIJ) brought up to date with its host one before C is copied into:
   aijcusparse's MatZeroEntries() (under MatCopy()) takes an existing device copy as the current one, also when the user
   has put new nonzeros into the host structure since (its stale device structure would then receive the copy). */
static PetscErrorCode MatOceanWrapSyncDevice(Mat C)
{
  Mat       blocks[2] = {C, NULL};
  PetscBool mpi;

  PetscFunctionBegin;
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)C, MATMPIAIJ, &mpi));
  if (mpi) PetscCall(MatMPIAIJGetSeqAIJ(C, &blocks[0], &blocks[1], NULL));
  for (int k = 0; k < 2; k++) {
    const PetscInt *i, *j;
    PetscScalar    *a;
    PetscMemType    mtype;
    PetscBool       bound;

    if (!blocks[k] || !MatOceanIsDeviceAIJ_Private(blocks[k])) continue;
    PetscCall(MatBoundToCPU(blocks[k], &bound));
    if (!bound)
      PetscCall(MatSeqAIJGetCSRAndMemType(blocks[k], &i, &j, &a, &mtype)); /* uploads what the host has newer */
  }
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* The product computed into a matrix of its own and copied into C's (user-changed) structure. */
static PetscErrorCode MatOceanWrapNumericShadow(Mat C, MatOceanWrap *w)
{
  Mat_Product *product = C->product;
  Mat          ops[2];

  PetscFunctionBegin;
  if (!w->shadow) {
    PetscCall(PetscInfo(C, "petsc-ocean: C's structure was changed by the user; the product goes to a matrix of its "
                           "own and is copied into C\n"));
    PetscCall(MatOceanWrapOperands(C, w, ops));
    PetscCall(MatProductCreate(ops[0], ops[1], NULL, &w->shadow));
    PetscCall(MatProductSetType(w->shadow, product->type));
    PetscCall(MatProductSetFill(w->shadow, product->fill));
    PetscCall(MatProductSetFromOptions(w->shadow));
    PetscCall(MatProductSymbolic(w->shadow));
  }
  PetscCall(MatProductNumeric(w->shadow));
  PetscCall(MatOceanWrapCheckHolds(C, w->shadow));
  PetscCall(MatOceanWrapSyncDevice(C));
  PetscCall(MatCopy(w->shadow, C, SUBSET_NONZERO_PATTERN));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

static PetscErrorCode MatProductNumeric_OceanWrap(Mat C)
{
  Mat_Product  *product = C->product;
  MatOceanWrap *w;
  PetscInt      changes;
  PetscBool     lost;
  PetscErrorCode (*caller)(Mat) = C->ops->productnumeric; /* ours, or PETSc's generic triple product calling us */

  PetscFunctionBegin;
  PetscCall(MatOceanWrapFind(C, &w, &lost));
  if (lost) { /* C keeps the structure the user gave it: the product goes to a matrix of its own (the shadow) */
    if (w->P) PetscCall(MatOceanWrapExpandMAIJ(w));
    PetscCall(MatOceanWrapRecordStructure(C, w));
    PetscCall(PetscMemzero(&w->c, sizeof(w->c)));
  }
  PetscCall(MatOceanWrapChanges(C, w, &changes));
  if (changes & MAT_OCEAN_CHANGED_OPERANDS) { /* a new sparsity: a new symbolic phase (it expands a MAIJ P anew) */
    PetscCall(PetscInfo(C, "petsc-ocean: operand sparsity changed since the symbolic phase; redoing it\n"));
    PetscCall(MatOceanProductDataReset(C));
    PetscCall(MatProductSymbolic_OceanWrap(C));
    PetscCall(MatOceanCountersAdd_Private(0, 0, 0, 1));
  } else if (w->P) PetscCall(MatOceanWrapExpandMAIJ(w)); /* the inner AIJ's current values */
  if (w->shadow || (changes & MAT_OCEAN_CHANGED_C)) PetscCall(MatOceanWrapNumericShadow(C, w));
  else {
    if (w->P) product->B = w->Paij;
    PetscCall((*w->numeric)(C));
    if (w->P) product->B = w->P;
  }
  C->ops->productnumeric = caller;
  PetscCall(MatOceanGetStructure_Private(C, &w->c));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* Called once the inner setfromoptions has set C->ops->productsymbolic (PETSc may call setfromoptions twice). */
PetscErrorCode MatOceanWrapProduct_Private(Mat C)
{
  MatOceanWrap *w;

  PetscFunctionBegin;
  if (!C->ops->productsymbolic || C->ops->productsymbolic == MatProductSymbolic_OceanWrap)
    PetscFunctionReturn(OCEAN_PETSC_OK);
  PetscCall(MatOceanWrapGet(C, PETSC_TRUE, &w));
  w->symbolic             = C->ops->productsymbolic;
  C->ops->productsymbolic = MatProductSymbolic_OceanWrap;
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* Composed as MatProductSetFromOptions_<ocean type>_<maij type>_C on our matrices: PtAP only. */
PetscErrorCode MatProductSetFromOptions_OceanMAIJ(Mat C)
{
  MatOceanWrap *w;

  PetscFunctionBegin;
  MatCheckProduct(C, 1);
  C->ops->productsymbolic = NULL;
  if (C->product->type != MATPRODUCT_PtAP) PetscFunctionReturn(OCEAN_PETSC_OK);
  PetscCheck(MatOceanParentOf(C->product->A), PETSC_COMM_SELF, PETSC_ERR_PLIB,
             "PtAP with a MAIJ P: A (%s) is not of a petsc-ocean type", ((PetscObject)C->product->A)->type_name);
  PetscCall(MatOceanWrapGet(C, PETSC_TRUE, &w));
  w->P                    = C->product->B;
  w->type                 = MatOceanParentOf(C->product->A)->type;
  w->symbolic             = NULL; /* chosen at symbolic time, once P is expanded */
  C->ops->productsymbolic = MatProductSymbolic_OceanWrap;
  PetscFunctionReturn(OCEAN_PETSC_OK);
}
