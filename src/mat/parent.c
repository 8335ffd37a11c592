/* The parents of our types: the methods of theirs we override, and which matrices are ours (a file of its own: the
   rest of the PETSc layer reaches it, and it reaches none of the rest). */
#include "mat/matocean.h"

/* The parents' methods we override, one set per kind (0: seq, 1: mpi), taken from the first matrix made ours: every
   matrix of the parent type has the same.  Nothing is kept in the matrix itself (B->spptr is the parent's, e.g.
   aijcusparse's device data). */
Mat_OceanParent MatOceanParents[2];

/* A live matrix's kind by its type name (MPIAIJ-based or not). */
int MatOceanKind_Private(Mat M)
{
  PetscBool mpi = PETSC_FALSE;
  if (PetscObjectBaseTypeCompare((PetscObject)M, MATMPIAIJ, &mpi)) return 0;
  return mpi ? 1 : 0;
}

/* A sequential aijcusparse, or ours derived from it: its CSR may be newer on the device than on the host. */
PetscBool MatOceanIsDeviceAIJ_Private(Mat A)
{
  PetscBool is = PETSC_FALSE;
#if defined(PETSC_HAVE_CUDA)
  if (PetscObjectTypeCompare((PetscObject)A, MATSEQAIJCUSPARSE, &is)) return PETSC_FALSE;
  if (!is && MatOceanParentOf(A)) is = (PetscBool)!strcmp(MatOceanParentOf(A)->type->parent, MATSEQAIJCUSPARSE);
#else
  (void)A;
#endif
  return is;
}

/* What an ocean matrix keeps of its parent, or NULL for any other matrix: ours are those that carry our type name
   (a matrix converted back carries the parent's, and may still carry our destroy or duplicate: PETSc's submatrices
   keep the methods they were made with). */
Mat_OceanParent *MatOceanParentOf(Mat M)
{
  Mat_OceanParent *parent = &MatOceanParents[MatOceanKind_Private(M)];
  PetscBool        ours   = PETSC_FALSE;

  if (!parent->type || PetscObjectTypeCompare((PetscObject)M, parent->type->name, &ours)) return NULL;
  return ours ? parent : NULL;
}
