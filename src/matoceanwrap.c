/* A wrapper around the phases of a product whose work PETSc's own code drives (the MPIAIJ "backend" product), and
   of PtAP with a MAIJ interpolation:
   - MPIAIJ: PETSc never checks that MAT_REUSE_MATRIX keeps the operands' sparsity; the wrapper compares nonzero
     states and redoes the symbolic phase (new COO pattern) when they changed.
   - MAIJ (PCHMG, GAMG with several dof per node): P is expanded into an aijocean matrix once, refreshed by value
     before each numeric phase, and swapped in for the duration of each phase. */
#include "matocean_impl.h"

typedef struct {
  Mat              P;    /* the user's MAIJ, or NULL */
  Mat              Paij; /* its expansion, of the ocean type */
  PetscErrorCode (*symbolic)(Mat);
  PetscErrorCode (*numeric)(Mat);
  PetscObjectId    id[2];
  PetscObjectState nz[2];
} MatOceanWrap;

static PetscErrorCode MatOceanWrapDestroy(void *ptr)
{
  MatOceanWrap *w = (MatOceanWrap *)ptr;

  PetscFunctionBegin;
  PetscCall(MatDestroy(&w->Paij));
  PetscCall(PetscFree(w));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

static PetscErrorCode MatOceanWrapGet(Mat C, PetscBool create, MatOceanWrap **w)
{
  PetscContainer container;

  PetscFunctionBegin;
  *w = NULL;
  PetscCall(PetscObjectQuery((PetscObject)C, "MatOceanWrap", (PetscObject *)&container));
  if (container) PetscCall(PetscContainerGetPointer(container, (void **)w));
  else if (create) {
    PetscCall(PetscNew(w));
    PetscCall(PetscContainerCreate(PETSC_COMM_SELF, &container));
    PetscCall(PetscContainerSetPointer(container, *w));
    PetscCall(PetscContainerSetUserDestroy(container, MatOceanWrapDestroy));
    PetscCall(PetscObjectCompose((PetscObject)C, "MatOceanWrap", (PetscObject)container));
    PetscCall(PetscContainerDestroy(&container));
  }
  PetscCheck(*w || !create, PETSC_COMM_SELF, PETSC_ERR_PLIB, "petsc-ocean product wrapper missing");
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* Expand the MAIJ into AIJ: a new ocean matrix the first time, values only afterwards. */
static PetscErrorCode MatOceanWrapExpandMAIJ(MatOceanWrap *w)
{
  Mat       tmp;
  PetscBool mpi;

  PetscFunctionBegin;
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)w->P, MATMPIMAIJ, &mpi));
  PetscCall(MatConvert(w->P, mpi ? MATMPIAIJ : MATSEQAIJ, MAT_INITIAL_MATRIX, &tmp));
  if (!w->Paij) {
    if (mpi) PetscCall(MatConvert_MPIAIJ_MPIAIJOcean(tmp, MATMPIAIJOCEAN, MAT_INPLACE_MATRIX, &tmp));
    else PetscCall(MatConvert_SeqAIJ_SeqAIJOcean(tmp, MATSEQAIJOCEAN, MAT_INPLACE_MATRIX, &tmp));
    w->Paij = tmp;
  } else {
    PetscCall(MatCopy(tmp, w->Paij, SAME_NONZERO_PATTERN));
    PetscCall(MatDestroy(&tmp));
  }
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

static PetscErrorCode MatOceanWrapRecordStructure(Mat C, MatOceanWrap *w)
{
  Mat ops[2];

  PetscFunctionBegin;
  ops[0] = C->product->A;
  ops[1] = w->Paij ? w->Paij : C->product->B;
  for (int k = 0; k < 2; k++) {
    PetscCall(PetscObjectGetId((PetscObject)ops[k], &w->id[k]));
    PetscCall(MatGetNonzeroState(ops[k], &w->nz[k]));
  }
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

static PetscErrorCode MatOceanWrapStructureChanged(Mat C, MatOceanWrap *w, PetscBool *changed)
{
  Mat              ops[2];
  PetscObjectId    id;
  PetscObjectState nz;

  PetscFunctionBegin;
  ops[0]   = C->product->A;
  ops[1]   = w->Paij ? w->Paij : C->product->B;
  *changed = PETSC_FALSE;
  for (int k = 0; k < 2; k++) {
    PetscCall(PetscObjectGetId((PetscObject)ops[k], &id));
    PetscCall(MatGetNonzeroState(ops[k], &nz));
    if (id != w->id[k] || nz != w->nz[k]) *changed = PETSC_TRUE;
  }
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

static PetscErrorCode MatProductNumeric_OceanWrap(Mat C);

static PetscErrorCode MatProductSymbolic_OceanWrap(Mat C)
{
  Mat_Product  *product = C->product;
  MatOceanWrap *w;

  PetscFunctionBegin;
  PetscCall(MatOceanWrapGet(C, PETSC_TRUE, &w));
  if (w->P) { /* the inner product is PtAP(A, Paij) of ocean types: choose its phases now that Paij exists */
    PetscBool mpi;

    PetscCall(MatOceanWrapExpandMAIJ(w));
    product->B              = w->Paij;
    C->ops->productsymbolic = NULL;
    PetscCall(PetscObjectBaseTypeCompare((PetscObject)w->Paij, MATMPIAIJ, &mpi));
    if (mpi) PetscCall(MatProductSetFromOptions_MPIAIJOcean(C)); /* wraps again: sets w->symbolic */
    else {
      PetscCall(MatProductSetFromOptions_SeqAIJOcean(C));
      w->symbolic = C->ops->productsymbolic;
    }
    PetscCheck(w->symbolic && w->symbolic != MatProductSymbolic_OceanWrap, PETSC_COMM_SELF, PETSC_ERR_SUP, "petsc-ocean has no PtAP for %s and %s", ((PetscObject)product->A)->type_name, ((PetscObject)w->Paij)->type_name);
  }
  PetscCall((*w->symbolic)(C));
  if (w->P) product->B = w->P;
  w->numeric              = C->ops->productnumeric;
  C->ops->productsymbolic = MatProductSymbolic_OceanWrap;
  C->ops->productnumeric  = MatProductNumeric_OceanWrap;
  PetscCall(MatOceanWrapRecordStructure(C, w));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

static PetscErrorCode MatProductNumeric_OceanWrap(Mat C)
{
  Mat_Product  *product = C->product;
  MatOceanWrap *w;
  PetscBool     changed;

  PetscFunctionBegin;
  PetscCall(MatOceanWrapGet(C, PETSC_TRUE, &w));
  if (w->P) PetscCall(MatOceanWrapExpandMAIJ(w));
  PetscCall(MatOceanWrapStructureChanged(C, w, &changed));
  if (changed) { /* a new sparsity: a new symbolic phase, as if the product were new */
    PetscCall(PetscInfo(C, "petsc-ocean: operand sparsity changed since the symbolic phase; redoing it\n"));
    if (product->destroy) PetscCall((*product->destroy)(product->data));
    product->data    = NULL;
    product->destroy = NULL;
    PetscCall(MatProductSymbolic_OceanWrap(C));
    PetscCall(MatOceanCountersAdd_Private(0, 0, 0, 1));
  }
  if (w->P) product->B = w->Paij;
  PetscCall((*w->numeric)(C));
  if (w->P) product->B = w->P;
  C->ops->productnumeric = MatProductNumeric_OceanWrap;
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* Called once the inner setfromoptions has set C->ops->productsymbolic (PETSc may call setfromoptions twice). */
PetscErrorCode MatOceanWrapMPIProduct_Private(Mat C)
{
  MatOceanWrap *w;

  PetscFunctionBegin;
  if (!C->ops->productsymbolic || C->ops->productsymbolic == MatProductSymbolic_OceanWrap) PetscFunctionReturn(OCEAN_PETSC_OK);
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
  PetscCall(MatOceanWrapGet(C, PETSC_TRUE, &w));
  w->P                    = C->product->B;
  w->symbolic             = NULL; /* chosen at symbolic time, once P is expanded */
  C->ops->productsymbolic = MatProductSymbolic_OceanWrap;
  PetscFunctionReturn(OCEAN_PETSC_OK);
}
