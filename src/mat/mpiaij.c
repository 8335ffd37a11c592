/* MATMPIAIJOCEAN: MPIAIJ whose diagonal and off-diagonal blocks are seqaijocean, so that PETSc's MPIAIJ "backend"
   product (off-process rows, local products, COO merge) runs every local product through petsc-ocean. */
#include "mat/matocean.h"

/* The blocks come back as plain SeqAIJ whenever MPIAIJ (re)builds them (preallocation, assembly): convert them. */
static PetscErrorCode MatOceanConvertBlocks_MPIAIJOcean(Mat A)
{
  Mat       Ad, Ao;
  PetscBool ours;

  PetscFunctionBegin;
  PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, NULL));
  if (Ad) {
    PetscCall(PetscObjectTypeCompare((PetscObject)Ad, MATSEQAIJOCEAN, &ours));
    if (!ours) PetscCall(MatConvert_SeqAIJ_SeqAIJOcean(Ad, MATSEQAIJOCEAN, MAT_INPLACE_MATRIX, &Ad));
  }
  if (Ao) {
    PetscCall(PetscObjectTypeCompare((PetscObject)Ao, MATSEQAIJOCEAN, &ours));
    if (!ours) PetscCall(MatConvert_SeqAIJ_SeqAIJOcean(Ao, MATSEQAIJOCEAN, MAT_INPLACE_MATRIX, &Ao));
  }
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

static PetscErrorCode MatAssemblyEnd_MPIAIJOcean(Mat A, MatAssemblyType mode)
{
  Mat_OceanParent *parent = MatOceanParentOf(A);

  PetscFunctionBegin;
  PetscCheck(parent, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Matrix of type %s is not %s", ((PetscObject)A)->type_name,
             MATMPIAIJOCEAN);
  PetscCall((*parent->assemblyend)(A, mode));
  if (mode == MAT_FINAL_ASSEMBLY) PetscCall(MatOceanConvertBlocks_MPIAIJOcean(A));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

static PetscBool MatOceanIsMPIAIJOcean(Mat M)
{
  PetscBool flg = PETSC_FALSE;
  if (PetscObjectTypeCompare((PetscObject)M, MATMPIAIJOCEAN, &flg)) return PETSC_FALSE;
  return flg;
}

/* Products with MPIAIJ-based operands take PETSc's MPIAIJ "backend" algorithm, whose local products are products of
   our seqaijocean blocks.  An algorithm the user chose (-matmatmult_via, -mat_product_algorithm) is respected. */
PetscErrorCode MatProductSetFromOptions_MPIAIJOcean(Mat C)
{
  Mat_Product     *product = C->product;
  Mat              own     = MatOceanIsMPIAIJOcean(product->A) ? product->A : product->B;
  Mat_OceanParent *parent  = MatOceanParentOf(own);
  PetscBool        isdefault, isbackend, mpiA, mpiB;

  PetscFunctionBegin;
  MatCheckProduct(C, 1);
  C->ops->productsymbolic = NULL;
  PetscCheck(parent, PETSC_COMM_SELF, PETSC_ERR_PLIB, "No %s operand in this product", MATMPIAIJOCEAN);
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)product->A, MATMPIAIJ, &mpiA));
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)product->B, MATMPIAIJ, &mpiB));
  if (!mpiA || !mpiB) PetscFunctionReturn(OCEAN_PETSC_OK); /* e.g. dense B: PETSc's generic paths */
  if (MatOceanIsMPIAIJOcean(product->A) && product->A->assembled)
    PetscCall(MatOceanConvertBlocks_MPIAIJOcean(product->A));
  if (MatOceanIsMPIAIJOcean(product->B) && product->B->assembled)
    PetscCall(MatOceanConvertBlocks_MPIAIJOcean(product->B));
  /* ABt, RARt, ABC; and operands whose values are still to come from their own numeric phase (PETSc's generic triple
     products chain products so): PETSc's MPIAIJ algorithms, which gather the off-process rows again at numeric time */
  if ((product->type != MATPRODUCT_AB && product->type != MATPRODUCT_AtB && product->type != MATPRODUCT_PtAP) ||
      !product->A->assembled || !product->B->assembled) {
    PetscCall((*parent->productsetfromoptions)(C));
    PetscFunctionReturn(OCEAN_PETSC_OK);
  }
  PetscCall(PetscStrcmp(product->alg, MATPRODUCTALGORITHMDEFAULT, &isdefault));
  if (isdefault) PetscCall(MatProductSetAlgorithm(C, "backend"));
  PetscCall((*parent->productsetfromoptions)(C)); /* reads -matmatmult_via and the like into product->alg */
  PetscCall(PetscStrcmp(product->alg, "backend", &isbackend));
  /* PETSc's other algorithms (scalable, nonscalable, seqmpi, hypre, ...) run whole, as with aij */
  if (isbackend) PetscCall(MatOceanWrapProduct_Private(C));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* Composed as MatMPIAIJGetLocalMatMerge_C over aijcusparse's, which makes the merged local rows (the B operand of the
   local products in PETSc's MPIAIJ "backend" PtAP and AtB) a plain seqaijcusparse: ours then, so that those local
   products run through petsc-ocean whatever the other operand's type (PETSc's generic merge sets Ad's type itself). */
static PetscErrorCode MatMPIAIJGetLocalMatMerge_MPIAIJOcean(Mat A, MatReuse scall, IS *glob, Mat *A_loc)
{
  Mat_OceanParent *parent = &MatOceanParents[1];
  PetscBool        ours;

  PetscFunctionBegin;
  PetscCheck(parent->getlocalmatmerge, PETSC_COMM_SELF, PETSC_ERR_PLIB,
             "No parent MatMPIAIJGetLocalMatMerge() for a matrix of type %s", ((PetscObject)A)->type_name);
  PetscCall((*parent->getlocalmatmerge)(A, scall, glob, A_loc));
  if (scall != MAT_INITIAL_MATRIX) PetscFunctionReturn(OCEAN_PETSC_OK);
  PetscCall(PetscObjectTypeCompare((PetscObject)*A_loc, MATSEQAIJOCEAN, &ours));
  if (!ours) PetscCall(MatConvert_SeqAIJ_SeqAIJOcean(*A_loc, MATSEQAIJOCEAN, MAT_INPLACE_MATRIX, A_loc));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* Ours composed over the parent's local merge (kept, and given back on detach); a host parent composes none. */
static PetscErrorCode MatOceanComposeLocalMerge(Mat A, PetscBool attach)
{
  Mat_OceanParent *parent                         = &MatOceanParents[1];
  const char      *name                           = "MatMPIAIJGetLocalMatMerge_C";
  PetscErrorCode (*f)(Mat, MatReuse, IS *, Mat *) = NULL;

  PetscFunctionBegin;
  if (attach) {
    PetscCall(PetscObjectQueryFunction((PetscObject)A, name, &f));
    if (f && f != MatMPIAIJGetLocalMatMerge_MPIAIJOcean) parent->getlocalmatmerge = f;
    if (f) PetscCall(PetscObjectComposeFunction((PetscObject)A, name, MatMPIAIJGetLocalMatMerge_MPIAIJOcean));
  } else if (parent->getlocalmatmerge)
    PetscCall(PetscObjectComposeFunction((PetscObject)A, name, parent->getlocalmatmerge));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* Back to MPIAIJ in place (or on a copy): the parent's data stays, the blocks become plain SeqAIJ again. */
static PetscErrorCode MatConvert_MPIAIJOcean_MPIAIJ(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  PetscBool done;
  Mat       Ad, Ao;

  PetscFunctionBegin;
  PetscCall(MatOceanConvertBegin_Private(A, reuse, newmat, &done));
  if (done) PetscFunctionReturn(OCEAN_PETSC_OK);
  PetscCall(MatOceanComposeLocalMerge(*newmat, PETSC_FALSE));
  PetscCall(MatOceanComposeCOO_Private(*newmat, MatOceanTypeMPI.parent, PETSC_FALSE));
  PetscCall(MatOceanDetach_Private(*newmat));
  if ((*newmat)->assembled) {
    PetscCall(MatMPIAIJGetSeqAIJ(*newmat, &Ad, &Ao, NULL));
    if (Ad) PetscCall(MatOceanDetach_Private(Ad));
    if (Ao) PetscCall(MatOceanDetach_Private(Ao));
  }
  PetscCall(MatOceanToBase_Private(&MatOceanTypeMPI, type, newmat));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

MatOceanType MatOceanTypeMPI = {"mpi",
                                MATMPIAIJOCEAN,
                                MATMPIAIJ,
                                MATMPIAIJ,
                                MatConvert_MPIAIJ_MPIAIJOcean,
                                MatConvert_MPIAIJOcean_MPIAIJ,
                                MatProductSetFromOptions_MPIAIJOcean,
                                MatAssemblyEnd_MPIAIJOcean};

PetscErrorCode MatConvert_MPIAIJ_MPIAIJOcean(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  PetscBool done;

  PetscFunctionBegin;
  PetscCall(MatOceanConvertBegin_Private(A, reuse, newmat, &done));
  if (done) PetscFunctionReturn(OCEAN_PETSC_OK);
  if (!MatOceanParentOf(*newmat)) {
    PetscCall(MatOceanToParent_Private(&MatOceanTypeMPI, newmat));
    PetscCall(MatOceanAttach_Private(*newmat, &MatOceanTypeMPI));
    PetscCall(MatOceanComposeLocalMerge(*newmat, PETSC_TRUE));
    PetscCall(MatOceanComposeCOO_Private(*newmat, MatOceanTypeMPI.parent, PETSC_TRUE));
  }
  if ((*newmat)->assembled) PetscCall(MatOceanConvertBlocks_MPIAIJOcean(*newmat));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/*MC
  MATMPIAIJOCEAN - "mpiaijocean" - A parallel AIJ matrix whose local block products run the petsc-ocean SpGEMM; the
  off-process rows and the assembly of the result go through PETSc's MPIAIJ "backend" product.

  Level: beginner

.seealso: `MATSEQAIJOCEAN`, `MatOceanInitializePackage()`, `MatOceanGetCounters()`
M*/
PetscErrorCode MatCreate_MPIAIJOcean(Mat B)
{
  PetscFunctionBegin;
  PetscCall(MatSetType(B, MatOceanTypeMPI.parent));
  PetscCall(MatConvert_MPIAIJ_MPIAIJOcean(B, MATMPIAIJOCEAN, MAT_INPLACE_MATRIX, &B));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}
