/*
  operands.c - a stage's operands on the device: the caller's device arrays, the context's mirrors of host operands
  with a structure id, or the stage's own uploads; the checks of device-resident operands.
*/
#include "cuda/cuda_backend.h"

#ifdef OCEAN_HAVE_CUDA

/* Uploads bytes for a stage (the upload phase and its statistics). */
static OceanError OceanCudaStageUpload(OceanContext ctx, OceanStage *st, void *d_dst, const void *src, size_t bytes)
{
  const double t0  = OceanPhaseBegin(ctx, OCEAN_PHASE_UPLOAD);
  OceanError   err = OceanCudaUploadStaged(OceanCtxDev(ctx), d_dst, src, bytes);
  st->stats.t_upload += OceanPhaseEnd(ctx, OCEAN_PHASE_UPLOAD, 0.0, t0);
  if (!err) st->stats.uploaded_bytes += (int64_t)bytes;
  return err;
}

static int OceanCudaMirrorMatches(const OceanCudaMirror *m, const OceanCSR *M, int64_t nnz)
{
  return m->structure_id && m->structure_id == M->structure_id && m->nrows == M->nrows && m->ncols == M->ncols &&
         m->nnz == nnz;
}

/* M's structure into the free slot m (the values follow). */
static OceanError OceanCudaMirrorCreate(OceanContext ctx, OceanStage *st, const OceanCSR *M, int64_t nnz,
                                        OceanCudaMirror *m)
{
  OceanCall(OceanDevAlloc(ctx, M->nrows + 1, &m->rowptr));
  OceanCall(OceanDevAlloc(ctx, nnz, &m->colidx));
  OceanCall(OceanDevAlloc(ctx, nnz, &m->values));
  OceanCall(OceanCudaStageUpload(ctx, st, m->rowptr, M->rowptr, (size_t)(M->nrows + 1) * sizeof(int64_t)));
  OceanCall(OceanCudaStageUpload(ctx, st, m->colidx, M->colidx, (size_t)nnz * sizeof(int32_t)));
  m->structure_id = M->structure_id;
  m->nrows        = M->nrows;
  m->ncols        = M->ncols;
  m->nnz          = nnz;
  return OCEAN_SUCCESS;
}

/* The mirror of host operand M (structure id nonzero): found, or made once room is made under the limit; values
   uploaded unless the mirror's values id says they are M's.  *mirror NULL: M is not mirrored (it and the current
   call's mirrors would pass the limit). */
static OceanError OceanCudaMirrorGet(OceanContext ctx, OceanStage *st, const OceanCSR *M, int64_t nnz,
                                     OceanDevCSR *view, const OceanCudaMirror **mirror)
{
  OceanCudaContext *c = (OceanCudaContext *)ctx->backend_data;
  OceanCudaMirror  *m = NULL;
  int               i;

  *mirror = NULL;
  for (i = 0; i < OCEAN_CUDA_MIRRORS && !m; i++)
    if (OceanCudaMirrorMatches(&c->mirrors[i], M, nnz)) m = &c->mirrors[i];
  if (!m && !(OceanCudaMirrorsFit(c, OceanCudaMirrorBytes(M->nrows, nnz)) && (m = OceanCudaMirrorSlot(c))))
    return OCEAN_SUCCESS;
  m->last_use = ++c->mirror_clock; /* before its arrays are allocated: the current call's from now on */
  if (!m->structure_id) {
    OceanError err = OceanCudaMirrorCreate(ctx, st, M, nnz, m);
    if (err) {
      OceanCudaMirrorFree(OceanCtxDev(ctx), m); /* the slot is free again, holding nothing */
      return err;
    }
  }
  if (!(M->values_id && m->values_id == M->values_id)) {
    m->values_id = 0;
    OceanCall(OceanCudaStageUpload(ctx, st, m->values, M->values, (size_t)nnz * sizeof(double)));
    m->values_id = M->values_id;
  }
  *view   = OceanDevView(M->nrows, M->ncols, m->rowptr, m->colidx, m->values);
  *mirror = m;
  return OCEAN_SUCCESS;
}

static void OceanCudaOwnFree(OceanContext ctx, OceanCudaStage *d, int k)
{
  d->own_valid[k] = 0;
  OceanDevFree(ctx, d->own_rowptr[k]);
  OceanDevFree(ctx, d->own_colidx[k]);
  OceanDevFree(ctx, d->own_values[k]);
}

/*
  Operand k (0: A, 1: B) of the current call as a device view (also kept in d->view[k]).  Device operands
  (st->dev_operands) are the caller's arrays, used in place.  Host operands with a structure id go through the
  context's mirrors; without one, or larger than the mirrors' limit allows, they are uploaded into the stage's own
  buffers: everything (symbolic: the structure may have changed), or only the values when the buffers already hold
  this structure (numeric).  B shares A's mirror only with A's values (A*A): B with the same structure but other values
  takes its own buffers, as B without an id.  Operand 0 must be resolved before operand 1.
*/
OceanError OceanCudaOperand(OceanContext ctx, OceanStage *st, OceanCudaStage *d, int k, const OceanCSR *M,
                            int values_only, OceanDevCSR *view)
{
  const int64_t          nnz    = OceanStageOperandNnz(st, k, M);
  const OceanCudaMirror *taken  = k == 1 ? d->mirror[0] : NULL;
  const int              shares = taken && OceanCudaMirrorMatches(taken, M, nnz);
  const int              mirror = M->structure_id &&
                     (!shares || (M->values_id && M->values_id == taken->values_id) || M->values == d->host_values[0]);

  d->nnz[k]         = nnz;
  d->mirror[k]      = NULL;
  d->host_values[k] = st->dev_operands ? NULL : M->values;
  if (!st->dev_operands && mirror) OceanCall(OceanCudaMirrorGet(ctx, st, M, nnz, view, &d->mirror[k]));
  if (st->dev_operands || d->mirror[k]) OceanCudaOwnFree(ctx, d, k);
  if (st->dev_operands) *view = OceanDevView(M->nrows, M->ncols, M->rowptr, M->colidx, M->values);
  else if (!d->mirror[k]) { /* own buffers, kept for the next numeric call */
    if (!(values_only && d->own_valid[k])) {
      OceanCudaOwnFree(ctx, d, k);
      OceanCall(OceanDevAlloc(ctx, M->nrows + 1, &d->own_rowptr[k]));
      OceanCall(OceanDevAlloc(ctx, nnz, &d->own_colidx[k]));
      OceanCall(OceanDevAlloc(ctx, nnz, &d->own_values[k]));
      OceanCall(OceanCudaStageUpload(ctx, st, d->own_rowptr[k], M->rowptr, (size_t)(M->nrows + 1) * sizeof(int64_t)));
      OceanCall(OceanCudaStageUpload(ctx, st, d->own_colidx[k], M->colidx, (size_t)nnz * sizeof(int32_t)));
      d->own_valid[k] = 1;
    }
    OceanCall(OceanCudaStageUpload(ctx, st, d->own_values[k], M->values, (size_t)nnz * sizeof(double)));
    *view = OceanDevView(M->nrows, M->ncols, d->own_rowptr[k], d->own_colidx[k], d->own_values[k]);
  }
  d->view[k] = *view;
  return OCEAN_SUCCESS;
}

/* One operand's checks on the host side; *has_offsets = 0 for an empty matrix given without offsets. */
static OceanError OceanCudaCheckDeviceCSROne(OceanContext ctx, const OceanCSR *M, const char *name, int *has_offsets)
{
  int ok[3];

  *has_offsets = 0;
  OceanCheck(M, OCEAN_ERR_ARG, "matrix %s is NULL", name);
  OceanCheck(ctx->backend_data, OCEAN_ERR_ARG, "device-resident matrix %s: the context has no CUDA device", name);
  OceanCheck(M->nrows >= 0 && M->ncols >= 0, OCEAN_ERR_ARG, "device-resident matrix %s has negative sizes %lld x %lld",
             name, (long long)M->nrows, (long long)M->ncols);
  OceanCheck(M->ncols <= (int64_t)INT32_MAX, OCEAN_ERR_ARG,
             "device-resident matrix %s has %lld columns: column indices are int32", name, (long long)M->ncols);
  if (M->nrows == 0 && !M->rowptr) return OCEAN_SUCCESS; /* an empty matrix may come without offsets */
  OceanCheck(M->rowptr, OCEAN_ERR_ARG, "device-resident matrix %s (%lld x %lld) has no row offsets", name,
             (long long)M->nrows, (long long)M->ncols);
  OceanCall(OceanCudaIsDevicePointer(M->rowptr, &ok[0]));
  OceanCall(OceanCudaIsDevicePointer(M->colidx, &ok[1]));
  OceanCall(OceanCudaIsDevicePointer(M->values, &ok[2]));
  OceanCheck(ok[0] && ok[1] && ok[2], OCEAN_ERR_ARG,
             "device-resident matrix %s (%lld x %lld): its %s pointer is not device memory "
             "(OceanProductSetOperandMemType(OCEAN_MEMORY_DEVICE) was set)",
             name, (long long)M->nrows, (long long)M->ncols,
             !ok[0]   ? "rowptr"
             : !ok[1] ? "colidx"
                      : "values");
  *has_offsets = 1;
  return OCEAN_SUCCESS;
}

OceanError OceanCudaCheckDeviceCSR(OceanContext ctx, const OceanCSR *const M[2], const char *const name[2],
                                   int64_t nnz[2])
{
  int64_t     ends[2][2] = {{0, 0}, {0, 0}}; /* rowptr[0], rowptr[nrows] of each */
  const void *src[4];
  void       *dst[4];
  int         n = 0, has[2], k;

  nnz[0] = nnz[1] = 0;
  for (k = 0; k < 2; k++) {
    OceanCall(OceanCudaCheckDeviceCSROne(ctx, M[k], name[k], &has[k]));
    if (!has[k]) continue;
    src[n]   = M[k]->rowptr;
    dst[n++] = &ends[k][0];
    src[n]   = M[k]->rowptr + M[k]->nrows;
    dst[n++] = &ends[k][1];
  }
  OceanCall(OceanCudaReadbackWords(OceanCtxDev(ctx), n, src, dst)); /* one wait for both operands */
  for (k = 0; k < 2; k++) {
    const int64_t r0 = ends[k][0], rn = ends[k][1];
    if (!has[k]) continue;
    OceanCheck(r0 == 0, OCEAN_ERR_ARG, "device-resident matrix %s: row offsets must start at 0, not %lld", name[k],
               (long long)r0);
    OceanCheck(rn >= 0, OCEAN_ERR_ARG, "device-resident matrix %s: rowptr[%lld] = %lld is negative", name[k],
               (long long)M[k]->nrows, (long long)rn);
    OceanCheck(rn == 0 || (M[k]->colidx && M[k]->values), OCEAN_ERR_ARG,
               "device-resident matrix %s has %lld nonzeros but no column indices or values", name[k], (long long)rn);
    nnz[k] = rn;
  }
  return OCEAN_SUCCESS;
}

OceanError OceanCudaStageGetDeviceOperand(OceanStage *st, int k, const OceanCSR *M, OceanCSR *view)
{
  OceanCudaStage *d = (OceanCudaStage *)st->dev;

  OceanCheck(d && (d->view[k].rowptr || d->view[k].nrows == 0), OCEAN_ERR_STATE, "%s: operand %s is not on the device",
             st->name, k ? "B" : "A");
  *view        = *M;
  view->rowptr = d->view[k].rowptr;
  view->colidx = d->view[k].colidx;
  view->values = d->view[k].values;
  return OCEAN_SUCCESS;
}

#endif
