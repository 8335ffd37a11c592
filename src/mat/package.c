/* The petsc-ocean package: registration of the matrix types, its initialization and finalization. */
#include "mat/matocean.h"

static PetscBool MatOceanPackageInitialized = PETSC_FALSE;

/*
  The parent of our types: aij, or with -mat_ocean_device_matrices, a CUDA-enabled PETSc and a usable CUDA device,
  aijcusparse (MatMult, the solve and PETSc's other matrix operations then run on the GPU; not the default:
  aijcusparse's MatMult wants CUDA vectors, which an application written for aij does not make).  Decided once:
  every matrix of a type must have the same parent.
*/
static PetscErrorCode MatOceanChooseParents(void)
{
  PetscBool device  = PETSC_FALSE;
  int       devices = 0;

  PetscFunctionBegin;
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-mat_ocean_device_matrices", &device, NULL));
  (void)OceanCudaDeviceCount(&devices);
#if defined(PETSC_HAVE_CUDA)
  if (device && devices > 0) {
    MatOceanTypeSeq.parent = MATSEQAIJCUSPARSE;
    MatOceanTypeMPI.parent = MATMPIAIJCUSPARSE;
  }
#else
  (void)device;
#endif
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/*@C
  MatOceanFinalizePackage - Destroys the core contexts of petsc-ocean; called from PetscFinalize().

  Level: developer

.seealso: `MatOceanInitializePackage()`
@*/
PetscErrorCode MatOceanFinalizePackage(void)
{
  PetscFunctionBegin;
  PetscCall(MatOceanRuntimeFinalize_Private());
  MatOceanPackageInitialized = PETSC_FALSE;
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/*@C
  MatOceanInitializePackage - Registers the matrix types `MATAIJOCEAN`, `MATSEQAIJOCEAN` and `MATMPIAIJOCEAN` and
  the log events of petsc-ocean.  Call once after `PetscInitialize()`; `-dll_append libpetscocean.so` calls it.

  Level: beginner

.seealso: `MatOceanFinalizePackage()`, `MatSetType()`
@*/
PetscErrorCode MatOceanInitializePackage(void)
{
  PetscFunctionBegin;
  if (MatOceanPackageInitialized) PetscFunctionReturn(OCEAN_PETSC_OK);
  MatOceanPackageInitialized = PETSC_TRUE;
  PetscCall(MatInitializePackage());
  PetscCall(MatOceanChooseParents());
  PetscCall(MatRegisterRootName(MATAIJOCEAN, MATSEQAIJOCEAN, MATMPIAIJOCEAN));
  PetscCall(MatRegister(MATSEQAIJOCEAN, MatCreate_SeqAIJOcean));
  PetscCall(MatRegister(MATMPIAIJOCEAN, MatCreate_MPIAIJOcean));
  PetscCall(MatOceanRuntimeInitialize_Private());
  PetscCall(PetscRegisterFinalize(MatOceanFinalizePackage));
  PetscCall(MatOceanSetThreads_Private());
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* Entry point for -dll_append libpetscocean.so */
PetscErrorCode PetscDLLibraryRegister_petscocean(void)
{
  PetscFunctionBegin;
  PetscCall(MatOceanInitializePackage());
  PetscFunctionReturn(OCEAN_PETSC_OK);
}
