/* MATSEQAIJOCEAN: SeqAIJ whose products AB, AtB and PtAP run the petsc-ocean SpGEMM (src/mat/seqproduct.c). */
#include "mat/matocean.h"

static PetscErrorCode MatConvert_SeqAIJOcean_SeqAIJ(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  PetscBool done;

  PetscFunctionBegin;
  PetscCall(MatOceanConvertBegin_Private(A, reuse, newmat, &done));
  if (done) PetscFunctionReturn(OCEAN_PETSC_OK);
  PetscCall(MatOceanDetach_Private(*newmat));
  PetscCall(MatOceanToBase_Private(&MatOceanTypeSeq, type, newmat));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

MatOceanType MatOceanTypeSeq = {"seq",
                                MATSEQAIJOCEAN,
                                MATSEQAIJ,
                                MATSEQAIJ,
                                MatConvert_SeqAIJ_SeqAIJOcean,
                                MatConvert_SeqAIJOcean_SeqAIJ,
                                MatProductSetFromOptions_SeqAIJOcean,
                                NULL};

/* In-place conversion as aijcusparse does it: keep SeqAIJ's data, override a few methods. */
PetscErrorCode MatConvert_SeqAIJ_SeqAIJOcean(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  PetscBool done;

  PetscFunctionBegin;
  PetscCall(MatOceanConvertBegin_Private(A, reuse, newmat, &done));
  if (!done && !MatOceanParentOf(*newmat)) { /* a duplicate of ours is ours already */
    PetscCall(MatOceanToParent_Private(&MatOceanTypeSeq, newmat));
    PetscCall(MatOceanAttach_Private(*newmat, &MatOceanTypeSeq));
  }
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/*MC
  MATSEQAIJOCEAN - "seqaijocean" - A sequential AIJ matrix whose MatProduct AB, AtB and PtAP run the estimation-driven
  SpGEMM of petsc-ocean (HyperLogLog row-size estimation, binned accumulators, overflow fallback).

  Options Database Keys:
+ -mat_type aijocean - sets the type (sequential or parallel by communicator size)
. -mat_ocean_backend <auto,cpu,cuda> - where products run
. -mat_ocean_workflow <auto,upper_bound,estimate,exact> - force a workflow
- -mat_ocean_view - print each product's decisions and statistics

  Level: beginner

.seealso: `MATMPIAIJOCEAN`, `MatOceanInitializePackage()`, `MatOceanProductGetStats()`
M*/
PetscErrorCode MatCreate_SeqAIJOcean(Mat B)
{
  PetscFunctionBegin;
  PetscCall(MatSetType(B, MatOceanTypeSeq.parent));
  PetscCall(MatConvert_SeqAIJ_SeqAIJOcean(B, MATSEQAIJOCEAN, MAT_INPLACE_MATRIX, &B));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}
