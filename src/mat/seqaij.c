/* MATSEQAIJOCEAN: SeqAIJ whose products AB, AtB and PtAP run the petsc-ocean SpGEMM (src/mat/seqproduct.c). */
#include "mat/matocean.h"

static PetscErrorCode MatConvert_SeqAIJOcean_SeqAIJ(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  PetscBool done;

  PetscFunctionBegin;
  PetscCall(MatOceanConvertBegin_Private(A, reuse, newmat, &done));
  if (!done) PetscCall(MatOceanDetach_Private(*newmat));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

static const MatOceanType MatOceanTypeSeq = {"seq",
                                             MATSEQAIJOCEAN,
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
  if (!done && !(*newmat)->spptr)
    PetscCall(MatOceanAttach_Private(*newmat, &MatOceanTypeSeq)); /* a duplicate of ours is ours already */
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
  PetscCall(MatSetType(B, MATSEQAIJ));
  PetscCall(MatConvert_SeqAIJ_SeqAIJOcean(B, MATSEQAIJOCEAN, MAT_INPLACE_MATRIX, &B));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}
