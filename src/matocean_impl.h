/* Internal header of the PETSc layer of petsc-ocean (not installed). */
#ifndef MATOCEAN_IMPL_H
#define MATOCEAN_IMPL_H

#include <petsc/private/matimpl.h>
#include <petscversion.h>
#include "petscmatocean.h"

#if PETSC_VERSION_LT(3, 19, 0)
  #define OCEAN_PETSC_OK 0
#else
  #define OCEAN_PETSC_OK PETSC_SUCCESS
#endif

/* A core error becomes a PETSc error that carries the core's message. */
#define PetscCallOcean(call) \
  do { \
    OceanError ocean_err_ = (call); \
    PetscCheck(ocean_err_ == OCEAN_SUCCESS, PETSC_COMM_SELF, MatOceanPetscErrorCode(ocean_err_), "petsc-ocean: %s: %s", OceanErrorString(ocean_err_), OceanGetLastErrorMessage()); \
  } while (0)

typedef enum { MAT_OCEAN_BACKEND_AUTO = 0, MAT_OCEAN_BACKEND_CPU, MAT_OCEAN_BACKEND_CUDA } MatOceanBackendChoice;

/* Options of one product, read from the options database with the product matrix's prefix. */
typedef struct {
  OceanOptions          core;
  MatOceanBackendChoice backend;
  PetscBool             view;
} MatOceanOptions;

/* The parent's (SeqAIJ's or MPIAIJ's) methods we override, kept in B->spptr. */
typedef struct {
  PetscErrorCode (*destroy)(Mat);
  PetscErrorCode (*assemblyend)(Mat, MatAssemblyType);
  PetscErrorCode (*duplicate)(Mat, MatDuplicateOption, Mat *);
  PetscErrorCode (*productsetfromoptions)(Mat);
} Mat_OceanParent;

PETSC_INTERN PetscErrorCode MatOceanPetscErrorCode(OceanError);
PETSC_INTERN PetscErrorCode MatOceanGetOptions_Private(Mat C, MatOceanOptions *opts);
PETSC_INTERN PetscErrorCode MatOceanGetContext_Private(MatOceanBackendChoice choice, OceanContext *ctx, OceanBackend *backend);
PETSC_INTERN PetscErrorCode MatOceanCountersAdd_Private(PetscInt64 symbolic, PetscInt64 numeric, PetscInt64 skipped, PetscInt64 resymbolic);
PETSC_INTERN PetscErrorCode MatOceanProductView_Private(Mat C, OceanProduct plan, const char *header, PetscViewer viewer);
PETSC_INTERN PetscErrorCode MatOceanEventsBegin_Private(PetscLogEvent *symbolic, PetscLogEvent *numeric);

/* Shared by the sequential and parallel types. */
PETSC_INTERN PetscErrorCode MatOceanSaveParentOps_Private(Mat B);
PETSC_INTERN PetscErrorCode MatOceanRestoreParentOps_Private(Mat B);
PETSC_INTERN PetscErrorCode MatOceanComposeParentConverter_Private(Mat B, const char *parent, const char *child, const char *to);

PETSC_INTERN PetscErrorCode MatConvert_SeqAIJ_SeqAIJOcean(Mat, MatType, MatReuse, Mat *);
PETSC_INTERN PetscErrorCode MatConvert_MPIAIJ_MPIAIJOcean(Mat, MatType, MatReuse, Mat *);
PETSC_INTERN PetscErrorCode MatProductSetFromOptions_SeqAIJOcean(Mat);
PETSC_INTERN PetscErrorCode MatProductSetFromOptions_MPIAIJOcean(Mat);
PETSC_INTERN PetscErrorCode MatProductSetFromOptions_OceanMAIJ(Mat);
PETSC_INTERN PetscErrorCode MatOceanWrapMPIProduct_Private(Mat);

#endif
