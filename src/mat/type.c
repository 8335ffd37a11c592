/* What seqaijocean and mpiaijocean add to their parents: conversion, the parent's methods and composed functions
   reachable under our type names, products with other types, destroy and duplicate. */
#include "mat/matocean.h"

/* The common start of a conversion: a copy for MAT_INITIAL_MATRIX, values for MAT_REUSE_MATRIX (then done). */
PetscErrorCode MatOceanConvertBegin_Private(Mat A, MatReuse reuse, Mat *newmat, PetscBool *done)
{
  PetscFunctionBegin;
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, newmat));
  else if (reuse == MAT_REUSE_MATRIX) PetscCall(MatCopy(A, *newmat, SAME_NONZERO_PATTERN));
  *done = (PetscBool)(reuse == MAT_REUSE_MATRIX);
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

static PetscErrorCode MatDestroy_SeqOcean(Mat);
static PetscErrorCode MatDestroy_MPIOcean(Mat);

/* The index of a type table's kind in MatOceanParents (0: seq, 1: mpi). */
static int MatOceanTypeKind(const MatOceanType *t)
{
  return t->kind[0] == 'm';
}

/* Composed as MatProductSetFromOptions_anytype_C, which PETSc asks for when no product is composed for the
   operands' exact types: the product another type composes with our parent type (dense times aij, ...). */
static PetscErrorCode MatProductSetFromOptions_OceanAnyType(Mat C)
{
  Mat_Product *product = C->product;
  Mat          ops[3]  = {product->A, product->B, product->type == MATPRODUCT_ABC ? product->C : NULL};
  char         name[256];
  PetscErrorCode (*f)(Mat) = NULL;

  PetscFunctionBegin;
  if (product->type == MATPRODUCT_ABC) { /* three AIJ operands of mixed types: the parent's own triple product */
    PetscBool        aij = PETSC_TRUE, is;
    Mat_OceanParent *own = NULL;
    for (int k = 0; k < 3; k++) {
      PetscCall(PetscObjectBaseTypeCompareAny((PetscObject)ops[k], &is, MATSEQAIJ, MATMPIAIJ, ""));
      aij = (PetscBool)(aij && is);
      if (!own) own = MatOceanParentOf(ops[k]);
    }
    if (aij && own) {
      PetscCall((*own->productsetfromoptions)(C));
      PetscFunctionReturn(OCEAN_PETSC_OK);
    }
  }
  /* our types by their base type's name, then by their parent's: what other types compose with.  The base's first:
     aijcusparse's products with other types check that their operand is exactly aijcusparse */
  for (int pass = 0; pass < 2 && !f; pass++) {
    PetscCall(PetscStrncpy(name, "MatProductSetFromOptions", sizeof(name)));
    for (int k = 0; k < 3 && ops[k]; k++) {
      Mat_OceanParent *parent = MatOceanParentOf(ops[k]);
      PetscCall(PetscStrlcat(name, "_", sizeof(name)));
      PetscCall(PetscStrlcat(
        name, parent ? (pass ? parent->type->parent : parent->type->base) : ((PetscObject)ops[k])->type_name,
        sizeof(name)));
    }
    PetscCall(PetscStrlcat(name, "_C", sizeof(name)));
    for (int k = 0; k < 3 && ops[k] && !f; k++) PetscCall(PetscObjectQueryFunction((PetscObject)ops[k], name, &f));
  }
  if (f && f != MatProductSetFromOptions_OceanAnyType) {
    PetscCall(PetscInfo(C, "petsc-ocean: %s for %s, %s\n", name, ((PetscObject)product->A)->type_name,
                        ((PetscObject)product->B)->type_name));
    PetscCall((*f)(C));
  }
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* name with every '_'-separated token equal to the parent type replaced by ours; hits: how many were, ours: how many
   tokens already name our type. */
static PetscErrorCode MatOceanAliasName(const char *name, const MatOceanType *t, char alias[], size_t len, int *hits,
                                        int *ours, int *device)
{
  char *dup, *tok, *save = NULL;

  PetscFunctionBegin;
  alias[0] = 0;
  *hits = *ours = *device = 0;
  PetscCall(PetscStrallocpy(name, &dup));
  for (tok = strtok_r(dup, "_", &save); tok; tok = strtok_r(NULL, "_", &save)) {
    PetscBool is_parent, is_base, is_ours;
    PetscCall(PetscStrcmp(tok, t->parent, &is_parent));
    PetscCall(PetscStrcmp(tok, t->base, &is_base));
    *device += is_parent && !is_base; /* the CUDA parent's own name */
    is_parent = (PetscBool)(is_parent || is_base);
    PetscCall(PetscStrcmp(tok, t->name, &is_ours));
    *hits += is_parent;
    *ours += is_ours;
    if (alias[0]) PetscCall(PetscStrlcat(alias, "_", len));
    PetscCall(PetscStrlcat(alias, is_parent ? t->name : tok, len));
  }
  PetscCall(PetscFree(dup));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* The functions the parent composes under names that carry its type (converters, products with other types), found
   again under our type name: MatConvert(ours, MATIS, ...) and friends then reach the parent's own implementation.
   Names with the parent type in several places (products of two parent matrices) stay the parent's: those
   products are ours to decide.  With a CUDA parent the base type's functions come first, and its own products with
   other types are left out (aijcusparse's check that their operand is exactly aijcusparse).  attach PETSC_FALSE
   removes every name that carries our type. */
static PetscErrorCode MatOceanAliasParentMethods(Mat B, const MatOceanType *t, PetscBool attach)
{
  const char **names;
  char       **from, **to; /* attach: compose to[k] as from[k]; detach: remove from[k] */
  int          n, ntodo = 0;

  PetscFunctionBegin;
  PetscCall(PetscFunctionListGet(((PetscObject)B)->qlist, &names, &n));
  PetscCall(PetscCalloc2(n + 1, &from, n + 1, &to));
  for (int pass = 0; pass < 2; pass++)        /* the base type's names, then the CUDA parent's */
    for (int k = 0; k < n && names[k]; k++) { /* copied first: composing changes the list; 3.18 ends it by NULL */
      char      alias[256];
      int       hits, ours, device;
      PetscBool product;

      PetscCall(MatOceanAliasName(names[k], t, alias, sizeof(alias), &hits, &ours, &device));
      PetscCall(PetscStrbeginswith(names[k], "MatProductSetFromOptions_", &product));
      if (attach ? hits == 1 && !ours && (device > 0) == pass && !(device && product) : ours > 0 && !pass) {
        PetscCall(PetscStrallocpy(names[k], &from[ntodo]));
        PetscCall(PetscStrallocpy(alias, &to[ntodo++]));
      }
    }
  PetscCall(PetscFree(names));
  for (int k = 0; k < ntodo; k++) {
    if (attach) {
      PetscErrorCode (*f)(void) = NULL, (*existing)(void) = NULL;

      PetscCall(PetscObjectQueryFunction((PetscObject)B, from[k], &f));
      PetscCall(PetscObjectQueryFunction((PetscObject)B, to[k], &existing));
      if (!existing) PetscCall(PetscObjectComposeFunction((PetscObject)B, to[k], f)); /* ours come first */
    } else PetscCall(PetscObjectComposeFunction((PetscObject)B, from[k], NULL));
    PetscCall(PetscFree(from[k]));
    PetscCall(PetscFree(to[k]));
  }
  PetscCall(PetscFree2(from, to));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* The parent's MatStoreValues() or MatRetrieveValues() (which: 0 or 1) of A, and the SeqAIJ matrices that hold A's
   values: A, or the diagonal and off-diagonal blocks of an MPIAIJ-based A. */
static PetscErrorCode MatOceanStoredValuesMethod(Mat A, int which, PetscErrorCode (**f)(Mat), Mat blocks[2],
                                                 PetscInt *n)
{
  Mat_OceanParent *parent = &MatOceanParents[MatOceanKind_Private(A)];

  PetscFunctionBegin;
  *f = which ? parent->retrievevalues : parent->storevalues;
  PetscCheck(*f, PETSC_COMM_SELF, PETSC_ERR_SUP, "%s() is not available for %s",
             which ? "MatRetrieveValues" : "MatStoreValues", ((PetscObject)A)->type_name);
  if (MatOceanKind_Private(A)) {
    PetscCall(MatMPIAIJGetSeqAIJ(A, &blocks[0], &blocks[1], NULL));
    *n = 2;
  } else {
    blocks[0] = A;
    *n        = 1;
  }
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* MatStoreValues() copies SeqAIJ's host values: on aijcusparse those may be older than the device's, so they are
   brought up to date first. */
static PetscErrorCode MatStoreValues_Ocean(Mat A)
{
  PetscErrorCode (*store)(Mat);
  Mat      blocks[2];
  PetscInt n;

  PetscFunctionBegin;
  PetscCall(MatOceanStoredValuesMethod(A, 0, &store, blocks, &n));
  for (PetscInt b = 0; b < n; b++) {
    const PetscScalar *v;
    PetscCall(MatSeqAIJGetArrayRead(blocks[b], &v));
    PetscCall(MatSeqAIJRestoreArrayRead(blocks[b], &v));
  }
  PetscCall((*store)(A));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* MatRetrieveValues() brings back stored values without advancing the object state, by which products (and the
   device copies of operands) tell new values: ours advances it.  It writes SeqAIJ's host values only, so a device copy
   (aijcusparse) is marked out of date. */
static PetscErrorCode MatRetrieveValues_Ocean(Mat A)
{
  PetscErrorCode (*retrieve)(Mat);
  Mat      blocks[2];
  PetscInt n;

  PetscFunctionBegin;
  PetscCall(MatOceanStoredValuesMethod(A, 1, &retrieve, blocks, &n));
  PetscCall((*retrieve)(A));
  for (PetscInt b = 0; b < n; b++) {
#if defined(PETSC_HAVE_DEVICE)
    if (blocks[b]->offloadmask != PETSC_OFFLOAD_UNALLOCATED) blocks[b]->offloadmask = PETSC_OFFLOAD_CPU;
#endif
    if (blocks[b] != A) PetscCall(PetscObjectStateIncrease((PetscObject)blocks[b]));
  }
  PetscCall(PetscObjectStateIncrease((PetscObject)A));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* Compose (attach) or remove the methods an ocean type adds.  MatConvert_<parent>_<ocean> lets MatSetType(parent-type
   matrix, ocean type) convert in place and keep the data (PETSc's transposes do that). */
static PetscErrorCode MatOceanComposeMethods(Mat B, const MatOceanType *t, PetscBool attach)
{
  const char *k = t->kind;
  char        name[128];

  PetscFunctionBegin;
  for (int p = 0; p < 2; p++) { /* the base type (seqaij, mpiaij) and the parent (the same, or its CUDA type) */
    const char *other = p ? t->parent : t->base;
    if (p && t->parent == t->base) break;
    PetscCall(PetscSNPrintf(name, sizeof(name), "MatConvert_%s_%s_C", other, t->name));
    PetscCall(PetscObjectComposeFunction((PetscObject)B, name, attach ? t->convert_to : NULL));
    PetscCall(PetscSNPrintf(name, sizeof(name), "MatConvert_%s_%s_C", t->name, other));
    PetscCall(PetscObjectComposeFunction((PetscObject)B, name, attach ? t->convert_back : NULL));
    PetscCall(PetscSNPrintf(name, sizeof(name), "MatProductSetFromOptions_%s_%s_C", t->name, other));
    PetscCall(PetscObjectComposeFunction((PetscObject)B, name, attach ? t->productsetfromoptions : NULL));
    PetscCall(PetscSNPrintf(name, sizeof(name), "MatProductSetFromOptions_%s_%s_C", other, t->name));
    PetscCall(PetscObjectComposeFunction((PetscObject)B, name, attach ? t->productsetfromoptions : NULL));
  }
  PetscCall(PetscSNPrintf(name, sizeof(name), "MatProductSetFromOptions_%saijocean_%smaij_C", k, k));
  PetscCall(PetscObjectComposeFunction((PetscObject)B, name, attach ? MatProductSetFromOptions_OceanMAIJ : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)B, "MatProductSetFromOptions_anytype_C",
                                       attach ? MatProductSetFromOptions_OceanAnyType : NULL));
  {
    /* the parent's stored-values methods wrapped by ours (kept per kind, never our own), and given back on detach */
    Mat_OceanParent *parent = &MatOceanParents[MatOceanTypeKind(t)];
    struct {
      const char *name;
      PetscErrorCode (**kept)(Mat);
      PetscErrorCode (*ours)(Mat);
    } wrapped[2] = {{"MatRetrieveValues_C", &parent->retrievevalues, MatRetrieveValues_Ocean},
                    {"MatStoreValues_C", &parent->storevalues, MatStoreValues_Ocean}};
    for (int w = 0; w < 2; w++) {
      if (attach) {
        PetscErrorCode (*f)(Mat) = NULL;
        PetscCall(PetscObjectQueryFunction((PetscObject)B, wrapped[w].name, &f));
        if (f && f != wrapped[w].ours) *wrapped[w].kept = f;
        if (f) PetscCall(PetscObjectComposeFunction((PetscObject)B, wrapped[w].name, wrapped[w].ours));
      } else if (*wrapped[w].kept)
        PetscCall(PetscObjectComposeFunction((PetscObject)B, wrapped[w].name, *wrapped[w].kept));
    }
  }
  PetscCall(MatOceanAliasParentMethods(B, t, attach));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* Also reached for a matrix converted back to the parent type (see MatOceanParentOf): the parent's destroy either way;
   the kind is the function's own (MatHeaderMerge() calls it on a matrix whose type name is gone).  Nothing is composed
   or removed here: the composed functions go with the header, and MatHeaderMerge() has freed the function list already
   when it calls this (composing would make a new list that nothing frees). */
static PetscErrorCode MatDestroy_OceanKind(Mat A, int kind)
{
  Mat_OceanParent *parent = &MatOceanParents[kind];

  PetscFunctionBegin;
  PetscCheck(parent->destroy, PETSC_COMM_SELF, PETSC_ERR_PLIB, "No parent destroy method for a %s matrix",
             kind ? "parallel" : "sequential");
  PetscCall((*parent->destroy)(A));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

static PetscErrorCode MatDestroy_SeqOcean(Mat A)
{
  return MatDestroy_OceanKind(A, 0);
}

static PetscErrorCode MatDestroy_MPIOcean(Mat A)
{
  return MatDestroy_OceanKind(A, 1);
}

/* The parent's duplicate creates the copy with our type name; converting again is a no-op on it, but makes sure
   whatever the parent produced ends up ours (and, for MPIAIJ, that its blocks are). */
static PetscErrorCode MatDuplicate_Ocean(Mat A, MatDuplicateOption op, Mat *B)
{
  Mat_OceanParent *parent = &MatOceanParents[MatOceanKind_Private(A)];

  PetscFunctionBegin;
  PetscCall((*parent->duplicate)(A, op, B));
  PetscCall((*parent->type->convert_to)(*B, parent->type->name, MAT_INPLACE_MATRIX, B));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* aijcusparse's MatBindToCPU() sets its own product methods (or aij's): ours come back after it. */
static PetscErrorCode MatBindToCPU_Ocean(Mat A, PetscBool flg)
{
  Mat_OceanParent *parent = MatOceanParentOf(A);

  PetscFunctionBegin;
  PetscCheck(parent && parent->bindtocpu, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatBindToCPU() on a %s matrix",
             ((PetscObject)A)->type_name);
  PetscCall((*parent->bindtocpu)(A, flg));
  A->ops->productsetfromoptions = parent->type->productsetfromoptions;
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* A matrix of the base type converted to the parent type in place, where they differ (aij to aijcusparse). */
PetscErrorCode MatOceanToParent_Private(const MatOceanType *t, Mat *M)
{
  PetscBool is_base;

  PetscFunctionBegin;
  if (t->parent == t->base) PetscFunctionReturn(OCEAN_PETSC_OK);
  PetscCall(PetscObjectTypeCompare((PetscObject)*M, t->base, &is_base));
  if (is_base) PetscCall(MatConvert(*M, t->parent, MAT_INPLACE_MATRIX, M));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* The inverse, after MatOceanDetach_Private: an aijcusparse-based matrix asked for as anything but aijcusparse becomes
   the base type. */
PetscErrorCode MatOceanToBase_Private(const MatOceanType *t, MatType type, Mat *M)
{
  PetscFunctionBegin;
  if (t->parent != t->base && strcmp(type, t->parent)) PetscCall(MatConvert(*M, t->base, MAT_INPLACE_MATRIX, M));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* Turn a matrix of the parent type into the ocean type in place: keep the parent's data, override a few methods. */
PetscErrorCode MatOceanAttach_Private(Mat B, const MatOceanType *t)
{
  Mat_OceanParent *parent = &MatOceanParents[MatOceanTypeKind(t)];
  PetscBool        is_parent;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)B, t->parent, &is_parent));
  PetscCheck(is_parent, PetscObjectComm((PetscObject)B), PETSC_ERR_ARG_WRONG,
             "Cannot convert a matrix of type %s to %s in place: only %s matrices are", ((PetscObject)B)->type_name,
             t->name, t->parent);
  if (!parent->type) {
    parent->type                       = t;
    parent->destroy                    = B->ops->destroy;
    parent->assemblyend                = B->ops->assemblyend;
    parent->duplicate                  = B->ops->duplicate;
    parent->productsetfromoptions      = B->ops->productsetfromoptions;
    parent->bindtocpu                  = B->ops->bindtocpu;
    parent->base_productsetfromoptions = B->ops->productsetfromoptions;
    if (t->parent != t->base) { /* read off a matrix of the base type */
      Mat T;
      PetscCall(MatCreate(PETSC_COMM_SELF, &T));
      PetscCall(MatSetType(T, t->base));
      parent->base_productsetfromoptions = T->ops->productsetfromoptions;
      PetscCall(MatDestroy(&T));
    }
  }
  PetscCheck(B->ops->destroy == parent->destroy, PETSC_COMM_SELF, PETSC_ERR_PLIB,
             "A %s matrix with another destroy method than the first one made %s", t->parent, t->name);
  B->ops->destroy               = MatOceanTypeKind(t) ? MatDestroy_MPIOcean : MatDestroy_SeqOcean;
  B->ops->duplicate             = MatDuplicate_Ocean;
  B->ops->productsetfromoptions = t->productsetfromoptions;
  if (parent->bindtocpu) B->ops->bindtocpu = MatBindToCPU_Ocean;
  if (t->assemblyend) B->ops->assemblyend = t->assemblyend;
  PetscCall(MatOceanComposeMethods(B, t, PETSC_TRUE));
  PetscCall(PetscObjectChangeTypeName((PetscObject)B, t->name));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* The inverse of MatOceanAttach_Private. */
PetscErrorCode MatOceanDetach_Private(Mat B)
{
  Mat_OceanParent    *parent = MatOceanParentOf(B);
  const MatOceanType *t;

  PetscFunctionBegin;
  if (!parent) PetscFunctionReturn(OCEAN_PETSC_OK);
  t = parent->type;
  PetscCall(MatOceanComposeMethods(B, t, PETSC_FALSE));
  B->ops->destroy               = parent->destroy;
  B->ops->assemblyend           = parent->assemblyend;
  B->ops->duplicate             = parent->duplicate;
  B->ops->productsetfromoptions = parent->productsetfromoptions;
  if (parent->bindtocpu) B->ops->bindtocpu = parent->bindtocpu;
  PetscCall(PetscObjectChangeTypeName((PetscObject)B, t->parent));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}
