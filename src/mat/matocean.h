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
#if PETSC_VERSION_LT(3, 20, 0)
#define PetscAssertPointer(h, arg) PetscValidPointer(h, arg)
#endif

/* A core error becomes a PETSc error that carries the core's message. */
#define PetscCallOcean(call) \
  do { \
    OceanError ocean_err_ = (call); \
    PetscCheck(ocean_err_ == OCEAN_SUCCESS, PETSC_COMM_SELF, MatOceanPetscErrorCode(ocean_err_), \
               "petsc-ocean: %s: %s", OceanErrorString(ocean_err_), OceanGetLastErrorMessage()); \
  } while (0)

typedef enum { MAT_OCEAN_BACKEND_AUTO = 0, MAT_OCEAN_BACKEND_CPU, MAT_OCEAN_BACKEND_CUDA } MatOceanBackendChoice;

/* Options of one product, read from the options database with the product matrix's prefix. */
typedef struct {
  OceanOptions          core;
  MatOceanBackendChoice backend;
  PetscBool             view;
} MatOceanOptions;

typedef PetscErrorCode (*MatOceanConvertFn)(Mat, MatType, MatReuse, Mat *);

/* What an ocean type adds to its parent (SeqAIJ or MPIAIJ): one table per type, so that attaching and detaching
   compose and remove exactly the same methods. */
typedef struct {
  const char       *kind;         /* "seq" or "mpi": the prefix of the type names */
  MatType           name;         /* MATSEQAIJOCEAN or MATMPIAIJOCEAN */
  MatType           base;         /* MATSEQAIJ or MATMPIAIJ */
  MatType           parent;       /* the type we derive from: base, or its CUDA type (see MatOceanChooseParents) */
  MatOceanConvertFn convert_to;   /* parent -> ocean, in place */
  MatOceanConvertFn convert_back; /* ocean -> parent, or NULL (MatConvert's generic route) */
  PetscErrorCode (*productsetfromoptions)(Mat);
  PetscErrorCode (*assemblyend)(Mat, MatAssemblyType); /* NULL: the parent's */
} MatOceanType;

/* The parent's methods we override (one set per kind: see type.c). */
typedef struct {
  const MatOceanType *type;
  PetscErrorCode (*destroy)(Mat);
  PetscErrorCode (*assemblyend)(Mat, MatAssemblyType);
  PetscErrorCode (*duplicate)(Mat, MatDuplicateOption, Mat *);
  PetscErrorCode (*productsetfromoptions)(Mat);
  /* the base type's (SeqAIJ's host products): aijcusparse's own refuse operands whose type name is not theirs */
  PetscErrorCode (*base_productsetfromoptions)(Mat);
  PetscErrorCode (*storevalues)(Mat);
  PetscErrorCode (*retrievevalues)(Mat);
  PetscErrorCode (*bindtocpu)(Mat, PetscBool);
  PetscErrorCode (*getlocalmatmerge)(Mat, MatReuse, IS *, Mat *);                 /* aijcusparse's (MPI kind only) */
  PetscErrorCode (*setpreallocationcoo)(Mat, PetscCount, PetscInt[], PetscInt[]); /* MPIAIJ's (MPI kind only) */
  PetscErrorCode (*setvaluescoo)(Mat, const PetscScalar[], InsertMode);
} Mat_OceanParent;

PETSC_INTERN PetscErrorCode MatOceanPetscErrorCode(OceanError);
PETSC_INTERN PetscErrorCode MatOceanGetOptions_Private(Mat C, MatOceanOptions *opts);
PETSC_INTERN PetscErrorCode MatOceanGetContext_Private(MatOceanBackendChoice choice, OceanContext *ctx,
                                                       OceanBackend *backend);
PETSC_INTERN PetscErrorCode MatOceanCountersAdd_Private(PetscInt64 symbolic, PetscInt64 numeric, PetscInt64 skipped,
                                                        PetscInt64 resymbolic);
PETSC_INTERN PetscErrorCode MatOceanProductView_Private(Mat C, OceanProduct plan, const char *header,
                                                        PetscViewer viewer);
PETSC_INTERN PetscErrorCode MatOceanEventsBegin_Private(PetscLogEvent *symbolic, PetscLogEvent *numeric,
                                                        PetscLogEvent *setc);
PETSC_INTERN PetscErrorCode MatOceanRuntimeInitialize_Private(void);
PETSC_INTERN PetscErrorCode MatOceanRuntimeFinalize_Private(void);
PETSC_INTERN PetscErrorCode MatOceanSetThreads_Private(void);

/* Shared by the sequential and parallel types. */
/* aijocean derives from aij, or with -mat_ocean_device_matrices (a CUDA-enabled PETSc and a usable device) from
   aijcusparse: the package sets MatOceanType*.parent once, when it is initialized. */
PETSC_INTERN MatOceanType   MatOceanTypeSeq, MatOceanTypeMPI;
PETSC_INTERN PetscErrorCode MatOceanToParent_Private(const MatOceanType *t, Mat *M);
PETSC_INTERN PetscErrorCode MatOceanToBase_Private(const MatOceanType *t, MatType type, Mat *M);

PETSC_INTERN PetscErrorCode MatOceanConvertBegin_Private(Mat A, MatReuse reuse, Mat *newmat, PetscBool *done);
PETSC_INTERN PetscErrorCode MatOceanAttach_Private(Mat B, const MatOceanType *type);
PETSC_INTERN PetscErrorCode MatOceanDetach_Private(Mat B);
/* The parents' methods, [0] sequential, [1] parallel (parent.c); a live matrix's kind; what an ocean matrix keeps of
   its parent type, or NULL for any other matrix. */
PETSC_INTERN Mat_OceanParent  MatOceanParents[2];
PETSC_INTERN int              MatOceanKind_Private(Mat M);
PETSC_INTERN Mat_OceanParent *MatOceanParentOf(Mat M);
PETSC_INTERN PetscBool        MatOceanIsDeviceAIJ_Private(Mat A);
/* C handed to aijcusparse on the device (devicec.cu): built against a CUDA PETSc's source tree (the makefile's
   OCEAN_HAVE_CUSPARSE_DEVICE_C), for the plan's int32 indices and double values; elsewhere PETSc uploads C. */
#if defined(OCEAN_HAVE_CUSPARSE_DEVICE_C) && !defined(PETSC_USE_64BIT_INDICES) && !defined(PETSC_USE_COMPLEX) && \
  defined(PETSC_USE_REAL_DOUBLE)
#define OCEAN_DEVICE_C_HANDOVER 1
/* A new device C's aijcusparse copy made from the plan's C on the device (*done PETSC_FALSE: PETSc's upload makes it
   instead). */
PETSC_INTERN PetscErrorCode MatOceanSetDeviceC_Private(Mat C, OceanProduct plan, PetscBool *done);
/* C's nnz column indices from the plan straight into its preallocated host AIJ (what MatSeqAIJSetColumnIndices does,
   without the caller's copy). */
PETSC_INTERN PetscErrorCode MatOceanSetColumnsFromPlan_Private(Mat C, OceanProduct plan, int64_t nnz);
#endif

PETSC_INTERN PetscErrorCode MatConvert_SeqAIJ_SeqAIJOcean(Mat, MatType, MatReuse, Mat *);
PETSC_INTERN PetscErrorCode MatConvert_MPIAIJ_MPIAIJOcean(Mat, MatType, MatReuse, Mat *);
PETSC_INTERN PetscErrorCode MatProductSetFromOptions_SeqAIJOcean(Mat);
PETSC_INTERN PetscErrorCode MatProductSetFromOptions_MPIAIJOcean(Mat);
PETSC_INTERN PetscErrorCode MatProductSetFromOptions_OceanMAIJ(Mat);
PETSC_INTERN PetscErrorCode MatOceanWrapProduct_Private(Mat);
/* A matrix's sparsity as far as PETSc tells it: its object id and nonzero state, and for MPIAIJ-based matrices those
   of its local blocks too (a new preallocation makes new blocks, and PETSc 3.25's parallel nonzero state, the sum of
   the blocks', can come back to an earlier value); and the nonzeros of its SeqAIJ parts (MatResetPreallocation() and
   an assembly empty a matrix without a new nonzero state). */
typedef struct {
  PetscObjectId    id[3];
  PetscObjectState nz[3];
  PetscLogDouble   used[3];
} MatOceanStructure;

PETSC_INTERN PetscErrorCode MatOceanGetStructure_Private(Mat M, MatOceanStructure *s);
PETSC_INTERN PetscBool      MatOceanStructureEqual_Private(const MatOceanStructure *a, const MatOceanStructure *b);
PETSC_INTERN PetscErrorCode MatOceanComposeCOO_Private(Mat A, MatType parent_type, PetscBool attach);
/* A pointer composed on an object under a name, free_fn(ptr) called when the object goes or the name is composed
   again; query gives NULL where none is composed. */
PETSC_INTERN PetscErrorCode MatOceanComposePointer_Private(PetscObject obj, const char *name, void *ptr,
                                                           PetscErrorCode (*free_fn)(void *));
PETSC_INTERN PetscErrorCode MatOceanQueryPointer_Private(PetscObject obj, const char *name, void **ptr);
PETSC_INTERN PetscErrorCode MatOceanProductSetBlockSizes_Private(Mat C);

#endif
