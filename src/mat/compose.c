/* A pointer composed on a PETSc object under a name and freed with the object (or when the name is composed again):
   one wrapper around PetscContainer, whose destroy callback changed its signature in PETSc 3.23 and 3.25. */
#include "mat/matocean.h"

typedef struct {
  void *ptr;
  PetscErrorCode (*free_fn)(void *);
} MatOceanBox;

static PetscErrorCode MatOceanBoxFree(MatOceanBox *box)
{
  PetscFunctionBegin;
  if (box->free_fn) PetscCall((*box->free_fn)(box->ptr));
  PetscCall(PetscFree(box));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* The container's destroy gets the pointer itself before PETSc 3.23, its address from 3.23 on (void ** until 3.24,
   PetscCtxRt from 3.25). */
#if PETSC_VERSION_LT(3, 23, 0)
static PetscErrorCode MatOceanBoxDestroy(void *ptr)
{
  return MatOceanBoxFree((MatOceanBox *)ptr);
}
#else
#if PETSC_VERSION_LT(3, 25, 0)
static PetscErrorCode MatOceanBoxDestroy(void **ptr)
#else
static PetscErrorCode MatOceanBoxDestroy(PetscCtxRt ptr)
#endif
{
  MatOceanBox *box = *(MatOceanBox **)ptr;

  *(MatOceanBox **)ptr = NULL;
  return MatOceanBoxFree(box);
}
#endif

PetscErrorCode MatOceanComposePointer_Private(PetscObject obj, const char *name, void *ptr,
                                              PetscErrorCode (*free_fn)(void *))
{
  PetscContainer container;
  MatOceanBox   *box;

  PetscFunctionBegin;
  PetscCall(PetscNew(&box));
  box->ptr     = ptr;
  box->free_fn = free_fn;
  PetscCall(PetscContainerCreate(PETSC_COMM_SELF, &container));
  PetscCall(PetscContainerSetPointer(container, box));
#if PETSC_VERSION_LT(3, 23, 0)
  PetscCall(PetscContainerSetUserDestroy(container, MatOceanBoxDestroy));
#else
  PetscCall(PetscContainerSetCtxDestroy(container, MatOceanBoxDestroy));
#endif
  PetscCall(PetscObjectCompose(obj, name, (PetscObject)container));
  PetscCall(PetscContainerDestroy(&container));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

PetscErrorCode MatOceanQueryPointer_Private(PetscObject obj, const char *name, void **ptr)
{
  PetscContainer container;
  MatOceanBox   *box = NULL;

  PetscFunctionBegin;
  *ptr = NULL;
  PetscCall(PetscObjectQuery(obj, name, (PetscObject *)&container));
  if (container) PetscCall(PetscContainerGetPointer(container, (void **)&box));
  if (box) *ptr = box->ptr;
  PetscFunctionReturn(OCEAN_PETSC_OK);
}
