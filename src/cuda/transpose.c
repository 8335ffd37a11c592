/*
  transpose.c - a transpose kept on the device (PtAP's P^T): made once per structure, later calls gather values.
*/
#include "cuda/cuda_backend.h"

#ifdef OCEAN_HAVE_CUDA
typedef struct _p_OceanCudaTranspose *OceanCudaTransposeCache;
#endif

#ifdef OCEAN_HAVE_CUDA

struct _p_OceanCudaTranspose {
  int      valid;
  uint64_t id;                /* the source's structure id */
  int64_t  nrows, ncols, nnz; /* of the source */
  int64_t *rowptr, *perm;     /* values[t] = source values[perm[t]] */
  int32_t *colidx;
  double  *values;
};

static void OceanCudaTransposeFree(OceanContext ctx, OceanCudaTransposeCache T)
{
  OceanDevFree(ctx, T->rowptr);
  OceanDevFree(ctx, T->perm);
  OceanDevFree(ctx, T->colidx);
  OceanDevFree(ctx, T->values);
  T->valid = 0;
}

OceanError OceanCudaTransposeUpdate(OceanContext ctx, void **cache_, const OceanCSR *M, int64_t nnz, OceanCSR *T)
{
  OceanCudaTransposeCache *cache = (OceanCudaTransposeCache *)cache_;
  OceanCudaTransposeCache  c;

  if (!*cache) OceanCall(OceanCalloc(1, cache, "device transpose"));
  c = *cache;
  if (c->valid && M->structure_id && c->id == M->structure_id && c->nrows == M->nrows && c->ncols == M->ncols &&
      c->nnz == nnz) {
    OceanCall(OceanCudaGatherValues(c->perm, nnz, M->values, c->values));
  } else {
    OceanError err;
    OceanCudaTransposeFree(ctx, c);
    OceanCall(OceanDevAlloc(ctx, M->ncols + 1, &c->rowptr));
    OceanCall(OceanDevAlloc(ctx, nnz, &c->perm));
    OceanCall(OceanDevAlloc(ctx, nnz, &c->colidx));
    OceanCall(OceanDevAlloc(ctx, nnz, &c->values));
    err = OceanCudaTranspose(OceanCtxDev(ctx), OceanDevView(M->nrows, M->ncols, M->rowptr, M->colidx, M->values), nnz,
                             c->rowptr, c->colidx, c->values, c->perm);
    if (err) {
      OceanCudaTransposeFree(ctx, c);
      return err;
    }
    c->id    = M->structure_id;
    c->nrows = M->nrows;
    c->ncols = M->ncols;
    c->nnz   = nnz;
    c->valid = 1;
  }
  T->nrows  = M->ncols;
  T->ncols  = M->nrows;
  T->rowptr = c->rowptr;
  T->colidx = c->colidx;
  T->values = c->values;
  return OCEAN_SUCCESS;
}

void OceanCudaTransposeDestroy(OceanContext ctx, void **cache_)
{
  OceanCudaTransposeCache *cache = (OceanCudaTransposeCache *)cache_;

  if (!*cache) return;
  if (ctx->backend_data) OceanCudaTransposeFree(ctx, *cache);
  free(*cache);
  *cache = NULL;
}

#endif
