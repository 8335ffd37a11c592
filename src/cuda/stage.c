/*
  ocean_cuda.c - host orchestration of the CUDA backend: the same stage pipeline as ocean_product.c, run on the
  device through the launchers of ocean_cuda.h (no CUDA header here).

    analysis   rows' shapes on the device; the rows with products compacted (CUB select) and the CR sample taken
               from them by OceanSampleIndex (the CPU's OceanAnalysisSampleSelect, on the device); sampled rows counted
               by the symbolic accumulators; only the sample's (products, nnz) pairs come to the host, where the CPU's
               very functions make the CR statistics and the workflow (OceanAnalysisSampleFinish, OceanSelectWorkflow)
    UPPER_BOUND / ESTIMATE  predictions on the device -> routes (OceanRouteRowBins) -> slots (CUB scan) ->
               numeric per bin into the slots -> overflowed rows (CUB select): exact counts with retries, their
               own exactly sized buffer -> compaction into CSR -> unsorted (LONG) rows sorted in place (CUB
               segmented sort over those rows only)
    EXACT      symbolic per bin from products / conservative CR, overflowing rows retried one configuration up;
               rowptr (CUB scan); numeric per bin (rows written sorted but LONG's); LONG rows sorted
    numeric-only  values added into C's known structure by the kernels of ocean_numeric.cu (binary search in the
               row of C, no routes, no sort); their grouping of C's rows is made by the first such call and kept
  Operands: host CSR with a structure id live in the context's device mirrors, shared by every plan and uploaded
  only when new (values only when the values id says they changed); host CSR without one are uploaded into the
  stage's own buffers (numeric: values only); device CSR (OCEAN_MEMORY_DEVICE) are used in place.  C stays on the device (numeric reuse, OceanProductGetDeviceC) and is
  copied to the host only when asked (OceanCudaStageDownloadC).  Statistics over rows (rows per bin and
  accumulator, estimate error, totals) are device reductions: only scalars come back (through a pinned buffer).  The
  per-row arrays (shapes, predicted, routes, counts, flags, estimates) come to the host stage's scratch only with
  OceanOptions.record_rows, where the CPU code turns them into OceanRowInfo and checks the device reductions against
  host sums.  Times are CUDA event times.
*/
#include "core/stage.h"
#include "ocean_cuda.h"
#include <math.h>

#ifdef OCEAN_HAVE_CUDA

/*
  Device mirrors of host operands, kept by the context across plans (GAMG multiplies the same A by P, then forms
  P^T A P): found by structure id (with equal sizes and nonzeros), their values current when the values ids are
  equal and nonzero, otherwise only the values are uploaded.  Their bytes (rowptr, colidx, values) stay within a limit
  (by default a quarter of the device's memory): the least recently used mirrors make room, and an operand larger than
  the limit goes into its stage's own buffers.  A mirror is in use by the current call when its last use is at or
  after the call's start (mirror_call); those are never freed under it, neither to make room nor when a pool
  allocation runs out of memory (OceanCudaMirrorsReclaim).
*/
#define OCEAN_CUDA_MIRRORS 8
typedef struct {
  uint64_t structure_id, values_id; /* 0: free */
  int64_t  nrows, ncols, nnz;
  int64_t *rowptr;
  int32_t *colidx;
  double  *values;
  uint64_t last_use;
} OceanCudaMirror;

typedef struct {
  OceanCudaDevice dev;
  OceanCudaMirror mirrors[OCEAN_CUDA_MIRRORS];
  uint64_t        mirror_clock;
  uint64_t        mirror_call;   /* mirror_clock + 1 when the current stage call began */
  int64_t         mirror_limit;  /* set by OceanContextSetDeviceMirrorLimit; 0: the default */
  int64_t         device_memory; /* the device's total memory (bytes) */
} OceanCudaContext;

/* Device state of one stage: operands (k = 0: A, 1: B), shapes, C and the exact routes for numeric reuse. */
typedef struct {
  int64_t        nnz[2];      /* of the operands */
  OceanDevCSR    view[2];     /* the operands of the current call on the device */
  const OceanCudaMirror *mirror[2]; /* their mirrors, NULL where none */
  const double  *host_values[2]; /* their host values */
  int            own_valid[2]; /* own_* hold operand k's uploaded structure */
  int64_t       *own_rowptr[2]; /* uploads of host operands without a structure id (those with one use mirrors) */
  int32_t       *own_colidx[2];
  double        *own_values[2];
  int64_t        c_nnz;
  int64_t       *c_rowptr;
  int32_t       *c_colidx;
  double        *c_values;
  OceanRowShape *shapes;
  OceanRoute    *exact;
  OceanCudaKnownPlan known;   /* C's rows grouped for numeric-only products (made by the first numeric call) */
  OceanCudaProductMap map;    /* numeric-only calls sum through it when made (OceanCudaStageMapCreate) */
  int            map_tried;   /* the first numeric call decided on the map */
  OceanCudaRouteCounts exact_counts; /* rows per bin and accumulator of the exact routes (numeric calls' statistics) */
  int64_t        row_chunks;  /* > 0: C was made in row chunks and is on the host only (c_colidx, c_values NULL) */
} OceanCudaStage;

static OceanCudaDevice OceanCtxDev(OceanContext ctx) { return ((OceanCudaContext *)ctx->cuda)->dev; }

/* A phase's device time into *seconds: at once when a phase callback (PETSc's log events) brackets the phases on the
   host, so that they measure the phase; else read with the stage's other timers when it ends. */
static OceanError OceanStageTimerStop(OceanContext ctx, double *seconds) { return OceanCudaTimerStop(OceanCtxDev(ctx), seconds, ctx->phase_callback != NULL); }

#define OceanDevAlloc(ctx, n, p) OceanCudaAlloc(OceanCtxDev(ctx), (size_t)(n) * sizeof(**(p)), (void **)(p))
#define OceanDevFree(ctx, p) \
  do { \
    OceanCudaFree(OceanCtxDev(ctx), (void *)(p)); \
    (p) = NULL; \
  } while (0)

static int OceanCudaMirrorsReclaim(void *ctx_cuda);

OceanError OceanCudaContextSetup(OceanContext ctx, int device, const OceanDeviceProfile *profile)
{
  OceanCudaContext *c;
  OceanError        err;

  OceanCall(OceanCalloc(1, &c, "CUDA context"));
  ctx->cuda_device = device;
  err              = OceanCudaDeviceCreate(device, &c->dev);
  if (!err && !profile) err = OceanCudaDeviceProfile(device, &ctx->profile);
  if (!err) err = OceanCudaDeviceMemory(c->dev, NULL, &c->device_memory); /* the mirrors' default limit */
  if (err) {
    OceanCudaDeviceDestroy(&c->dev);
    free(c);
    return err == OCEAN_ERR_DEVICE ? OceanSetError(err, "OceanContextCreate: CUDA device %d: %s", device, OceanGetLastErrorMessage()) : err;
  }
  OceanCudaPoolSetReclaim(c->dev, OceanCudaMirrorsReclaim, c);
  ctx->cuda = c;
  return OCEAN_SUCCESS;
}

static void OceanCudaMirrorFree(OceanCudaDevice dev, OceanCudaMirror *m)
{
  OceanCudaFree(dev, m->rowptr);
  OceanCudaFree(dev, m->colidx);
  OceanCudaFree(dev, m->values);
  memset(m, 0, sizeof(*m));
}

static void OceanCudaMirrorsFree(OceanCudaContext *c)
{
  int i;
  for (i = 0; i < OCEAN_CUDA_MIRRORS; i++) OceanCudaMirrorFree(c->dev, &c->mirrors[i]);
}

static int64_t OceanCudaMirrorBytes(int64_t nrows, int64_t nnz) { return (nrows + 1) * (int64_t)sizeof(int64_t) + nnz * (int64_t)(sizeof(int32_t) + sizeof(double)); }

static int64_t OceanCudaMirrorLimit(const OceanCudaContext *c) { return c->mirror_limit ? c->mirror_limit : c->device_memory / 4; }

/* The bytes of the mirrors; *in_use (optional): of those the current call uses. */
static int64_t OceanCudaMirrorsBytes(const OceanCudaContext *c, int64_t *in_use)
{
  int64_t total = 0, used = 0;
  int     i;

  for (i = 0; i < OCEAN_CUDA_MIRRORS; i++) {
    const OceanCudaMirror *m = &c->mirrors[i];
    const int64_t          b = m->structure_id ? OceanCudaMirrorBytes(m->nrows, m->nnz) : 0;
    total += b;
    if (m->last_use >= c->mirror_call) used += b;
  }
  if (in_use) *in_use = used;
  return total;
}

/* The least recently used mirror that the current call does not use; NULL when there is none. */
static OceanCudaMirror *OceanCudaMirrorVictim(OceanCudaContext *c)
{
  OceanCudaMirror *v = NULL;
  int              i;

  for (i = 0; i < OCEAN_CUDA_MIRRORS; i++) {
    OceanCudaMirror *m = &c->mirrors[i];
    if (m->structure_id && m->last_use < c->mirror_call && (!v || m->last_use < v->last_use)) v = m;
  }
  return v;
}

/* The pool's reclaim when cudaMalloc fails: every mirror that the current call does not use goes back to the pool
   (they are only caches, uploaded again when needed); the number freed. */
static int OceanCudaMirrorsReclaim(void *ctx_cuda)
{
  OceanCudaContext *c = (OceanCudaContext *)ctx_cuda;
  OceanCudaMirror  *m;
  int               freed = 0;

  for (; (m = OceanCudaMirrorVictim(c)); freed++) OceanCudaMirrorFree(c->dev, m);
  return freed;
}

/* Frees the least recently used mirrors that the current call does not use until `bytes` more fit under the limit;
   0, with nothing freed, when the call's own mirrors and those bytes would pass it. */
static int OceanCudaMirrorsFit(OceanCudaContext *c, int64_t bytes)
{
  const int64_t    limit = OceanCudaMirrorLimit(c);
  int64_t          in_use, total = OceanCudaMirrorsBytes(c, &in_use);
  OceanCudaMirror *v;

  if (in_use + bytes > limit) return 0;
  while (total + bytes > limit && (v = OceanCudaMirrorVictim(c))) {
    total -= OceanCudaMirrorBytes(v->nrows, v->nnz);
    OceanCudaMirrorFree(c->dev, v);
  }
  return 1;
}

/* A free mirror slot: an empty one, else the least recently used that the current call does not use (a call uses at
   most two of them), freed. */
static OceanCudaMirror *OceanCudaMirrorSlot(OceanCudaContext *c)
{
  OceanCudaMirror *m = NULL;
  int              i;

  for (i = 0; i < OCEAN_CUDA_MIRRORS && !m; i++)
    if (!c->mirrors[i].structure_id) m = &c->mirrors[i];
  if (!m && (m = OceanCudaMirrorVictim(c))) OceanCudaMirrorFree(c->dev, m);
  return m;
}

/* A stage call begins: the mirrors it uses are those it touches from now on (the transpose of PtAP, made from stage
   0's mirror of P before stage 1 begins, still counts as stage 0's call). */
static void OceanCudaMirrorsCallBegin(OceanContext ctx)
{
  OceanCudaContext *c = (OceanCudaContext *)ctx->cuda;
  c->mirror_call      = c->mirror_clock + 1;
}

void OceanCudaContextTeardown(OceanContext ctx)
{
  OceanCudaContext *c = (OceanCudaContext *)ctx->cuda;
  int               i;

  if (!c) return;
  OceanCudaMirrorsFree(c);
  for (i = 0; i < OCEAN_SKETCH_CACHE_SIZE; i++) OceanCudaFree(c->dev, ctx->dcache[i].sketches);
  OceanCudaDeviceDestroy(&c->dev);
  free(c);
  ctx->cuda = NULL;
}

OceanError OceanContextGetDeviceMemory(OceanContext ctx, int64_t *in_use, int64_t *peak, int64_t *reserved, int64_t *cuda_mallocs)
{
  OceanCheck(ctx, OCEAN_ERR_ARG, "OceanContextGetDeviceMemory: NULL context");
  if (!ctx->cuda) {
    if (in_use) *in_use = 0;
    if (peak) *peak = 0;
    if (reserved) *reserved = 0;
    if (cuda_mallocs) *cuda_mallocs = 0;
    return OCEAN_SUCCESS;
  }
  OceanCudaPoolStats(OceanCtxDev(ctx), in_use, peak, reserved, cuda_mallocs);
  return OCEAN_SUCCESS;
}

static OceanDevCSR OceanDevView(int64_t nrows, int64_t ncols, const int64_t *rp, const int32_t *ci, const double *v)
{
  OceanDevCSR m;
  m.nrows  = nrows;
  m.ncols  = ncols;
  m.rowptr = rp;
  m.colidx = ci;
  m.values = v;
  return m;
}

static void OceanCudaRouteParamsGet(OceanContext ctx, OceanCudaRouteParams *rp)
{
  memcpy(rp->bins, ctx->bins, sizeof(rp->bins));
  rp->warp       = ctx->profile.warp_size;
  rp->load       = ctx->options.hash_load;
  rp->smem_optin = ctx->profile.smem_per_block;
}

void OceanCudaStageDestroy(OceanContext ctx, OceanStage *st)
{
  OceanCudaStage *d = (OceanCudaStage *)st->dev;

  if (!d) return;
  if (ctx->cuda) {
    int k;
    for (k = 0; k < 2; k++) {
      OceanDevFree(ctx, d->own_rowptr[k]);
      OceanDevFree(ctx, d->own_colidx[k]);
      OceanDevFree(ctx, d->own_values[k]);
    }
    OceanDevFree(ctx, d->c_rowptr);
    OceanDevFree(ctx, d->c_colidx);
    OceanDevFree(ctx, d->c_values);
    OceanDevFree(ctx, d->shapes);
    OceanDevFree(ctx, d->exact);
    OceanCudaKnownPlanDestroy(OceanCtxDev(ctx), &d->known);
    OceanCudaProductMapDestroy(OceanCtxDev(ctx), &d->map);
  }
  free(d);
  st->dev = NULL;
}

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
  return m->structure_id && m->structure_id == M->structure_id && m->nrows == M->nrows && m->ncols == M->ncols && m->nnz == nnz;
}

/* M's structure into the free slot m (the values follow). */
static OceanError OceanCudaMirrorCreate(OceanContext ctx, OceanStage *st, const OceanCSR *M, int64_t nnz, OceanCudaMirror *m)
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
static OceanError OceanCudaMirrorGet(OceanContext ctx, OceanStage *st, const OceanCSR *M, int64_t nnz, OceanDevCSR *view, const OceanCudaMirror **mirror)
{
  OceanCudaContext *c = (OceanCudaContext *)ctx->cuda;
  OceanCudaMirror  *m = NULL;
  int               i;

  *mirror = NULL;
  for (i = 0; i < OCEAN_CUDA_MIRRORS && !m; i++)
    if (OceanCudaMirrorMatches(&c->mirrors[i], M, nnz)) m = &c->mirrors[i];
  if (!m && !(OceanCudaMirrorsFit(c, OceanCudaMirrorBytes(M->nrows, nnz)) && (m = OceanCudaMirrorSlot(c)))) return OCEAN_SUCCESS;
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
static OceanError OceanCudaOperand(OceanContext ctx, OceanStage *st, OceanCudaStage *d, int k, const OceanCSR *M, int values_only, OceanDevCSR *view)
{
  const int64_t          nnz    = OceanStageOperandNnz(st, k, M);
  const OceanCudaMirror *taken  = k == 1 ? d->mirror[0] : NULL;
  const int              shares = taken && OceanCudaMirrorMatches(taken, M, nnz);
  const int              mirror = M->structure_id && (!shares || (M->values_id && M->values_id == taken->values_id) || M->values == d->host_values[0]);

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

OceanError OceanCudaCheckDeviceCSR(OceanContext ctx, const OceanCSR *M, const char *name, int64_t *nnz)
{
  int64_t r0 = 0, rn = 0;
  int     ok[3];

  *nnz = 0;
  OceanCheck(M, OCEAN_ERR_ARG, "matrix %s is NULL", name);
  OceanCheck(ctx->cuda, OCEAN_ERR_ARG, "device-resident matrix %s: the context has no CUDA device", name);
  OceanCheck(M->nrows >= 0 && M->ncols >= 0, OCEAN_ERR_ARG, "device-resident matrix %s has negative sizes %lld x %lld", name, (long long)M->nrows, (long long)M->ncols);
  OceanCheck(M->ncols <= (int64_t)INT32_MAX, OCEAN_ERR_ARG, "device-resident matrix %s has %lld columns: column indices are int32", name, (long long)M->ncols);
  if (M->nrows == 0 && !M->rowptr) return OCEAN_SUCCESS; /* an empty matrix may come without offsets */
  OceanCheck(M->rowptr, OCEAN_ERR_ARG, "device-resident matrix %s (%lld x %lld) has no row offsets", name, (long long)M->nrows, (long long)M->ncols);
  OceanCall(OceanCudaIsDevicePointer(M->rowptr, &ok[0]));
  OceanCall(OceanCudaIsDevicePointer(M->colidx, &ok[1]));
  OceanCall(OceanCudaIsDevicePointer(M->values, &ok[2]));
  OceanCheck(ok[0] && ok[1] && ok[2], OCEAN_ERR_ARG, "device-resident matrix %s (%lld x %lld): its %s pointer is not device memory (OceanProductSetOperandMemType(OCEAN_MEMORY_DEVICE) was set)",
             name, (long long)M->nrows, (long long)M->ncols, !ok[0] ? "rowptr" : !ok[1] ? "colidx" : "values");
  {
    const void *src[2] = {M->rowptr, M->rowptr + M->nrows};
    void       *dst[2] = {&r0, &rn};
    OceanCall(OceanCudaReadbackWords(OceanCtxDev(ctx), 2, src, dst)); /* one wait for both */
  }
  OceanCheck(r0 == 0, OCEAN_ERR_ARG, "device-resident matrix %s: row offsets must start at 0, not %lld", name, (long long)r0);
  OceanCheck(rn >= 0, OCEAN_ERR_ARG, "device-resident matrix %s: rowptr[%lld] = %lld is negative", name, (long long)M->nrows, (long long)rn);
  OceanCheck(rn == 0 || (M->colidx && M->values), OCEAN_ERR_ARG, "device-resident matrix %s has %lld nonzeros but no column indices or values", name, (long long)rn);
  *nnz = rn;
  return OCEAN_SUCCESS;
}

/* Scratch of one symbolic run on the device; freed when it ends. */
typedef struct {
  int64_t    *p, *counts, *offsets, *foffsets, *list, *list2, *scan;
  OceanRoute *routes, *sroutes;
  uint8_t    *flags, *cflags, *nflags, *sketches; /* overflow record; symbolic and fallback scratch */
  double     *estimate;
  int32_t    *bcols, *fcols; /* the slot and fallback buffers */
  double     *bvals, *fvals;
} OceanCudaScratch;

static void OceanCudaScratchFree(OceanContext ctx, OceanCudaScratch *s)
{
  OceanDevFree(ctx, s->p);
  OceanDevFree(ctx, s->counts);
  OceanDevFree(ctx, s->offsets);
  OceanDevFree(ctx, s->foffsets);
  OceanDevFree(ctx, s->list);
  OceanDevFree(ctx, s->list2);
  OceanDevFree(ctx, s->scan);
  OceanDevFree(ctx, s->routes);
  OceanDevFree(ctx, s->sroutes);
  OceanDevFree(ctx, s->flags);
  OceanDevFree(ctx, s->cflags);
  OceanDevFree(ctx, s->nflags);
  OceanDevFree(ctx, s->sketches);
  OceanDevFree(ctx, s->estimate);
  OceanDevFree(ctx, s->bcols);
  OceanDevFree(ctx, s->fcols);
  OceanDevFree(ctx, s->bvals);
  OceanDevFree(ctx, s->fvals);
}

/*
  Exact counts of the listed rows (d_list NULL: all) into s->counts: each routed symbolically by s->p[row]; rows
  whose symbolic accumulator overflows are retried with p = min(ub, 2 slot) (OceanCpuCountRow's rule) until none
  does.  *retried: rows that needed a retry.
*/
static OceanError OceanCudaCountRows(OceanContext ctx, const OceanCudaRouteParams *rp, OceanDevCSR A, OceanDevCSR B, OceanCudaScratch *s, const OceanRowShape *d_shapes,
                                     const int64_t *d_list, int64_t n, int64_t *retried)
{
  OceanCudaDevice dev = OceanCtxDev(ctx);
  int64_t        *cur = NULL, *next = NULL, nnext, round = 0;
  OceanError      err = OCEAN_SUCCESS;

  *retried = 0;
  if (n == 0) return OCEAN_SUCCESS;
  if ((err = OceanDevAlloc(ctx, n, &cur)) || (err = OceanDevAlloc(ctx, n, &next))) goto done;
  while (n > 0) {
    const int64_t *list = round == 0 ? d_list : cur;
    if ((err = OceanCudaRouteRows(rp, OCEAN_PASS_SYMBOLIC, list, n, s->p, d_shapes, s->sroutes))) break;
    if ((err = OceanCudaRunRows(dev, rp, A, B, d_shapes, s->sroutes, list, n, 0, NULL, NULL, NULL, s->counts, s->cflags, NULL))) break;
    if ((err = OceanCudaSelectFlagged(dev, list, n, s->cflags, next, &nnext))) break;
    if (round == 0) *retried = nnext;
    if (nnext && (err = OceanCudaPredictRows(OCEAN_CUDA_PREDICT_RETRY, next, nnext, d_shapes, NULL, s->sroutes, 0.0, s->p))) break;
    {
      int64_t *t = cur;
      cur        = next;
      next       = t;
    }
    n = nnext;
    round++;
  }
done:
  OceanDevFree(ctx, cur);
  OceanDevFree(ctx, next);
  return err;
}

/* The host's sample (from the downloaded shapes, record_rows only) against the device's: the same rows and products. */
static OceanError OceanCudaCheckSample(OceanContext ctx, OceanStage *st, const int64_t *d_sample, const int64_t *h_q, int64_t ns)
{
  OceanAnalysis *an     = &st->an;
  OceanAnalysis  copy   = *an; /* SampleSelect resets the CR fields */
  int64_t       *sample = NULL, *rows = NULL, hns = 0, j;
  OceanError     err;

  OceanCall(OceanAnalysisSampleSelect(&ctx->options, &copy, &sample, &hns));
  err = hns == ns ? OCEAN_SUCCESS : OceanSetError(OCEAN_ERR_STATE, "%s: device sample of %lld rows, the host's has %lld", st->name, (long long)ns, (long long)hns);
  if (!err && ns) err = OceanMalloc(ns, &rows, "sampled rows");
  if (!err && ns) err = OceanCudaReadback(OceanCtxDev(ctx), rows, d_sample, (size_t)ns * sizeof(int64_t));
  for (j = 0; !err && j < ns; j++)
    if (rows[j] != sample[j] || h_q[j] != sample[2 * ns + j])
      err = OceanSetError(OCEAN_ERR_STATE, "%s: sampled row %lld is row %lld with %lld products on the device, row %lld with %lld on the host", st->name, (long long)j,
                          (long long)rows[j], (long long)h_q[j], (long long)sample[j], (long long)sample[2 * ns + j]);
  OceanFree(rows);
  OceanFree(sample);
  return err;
}

/*
  The analysis on the device: shapes (kept in d->shapes; copied to st->an.rows only with record_rows), the total of
  products (CUB sum), the rows with products (CUB select: their number nq), the sample (OceanSampleIndex over them),
  its exact counts (symbolic accumulators), and to the host only the sample's ns (products, nnz) pairs.
*/
static OceanError OceanCudaAnalyze(OceanContext ctx, OceanStage *st, OceanCudaStage *d, const OceanCudaRouteParams *rp, OceanDevCSR A, OceanDevCSR B, OceanCudaScratch *s)
{
  OceanCudaDevice dev    = OceanCtxDev(ctx);
  OceanAnalysis  *an     = &st->an;
  const int       record = ctx->options.record_rows;
  int64_t         ns = 0, nq = 0, retried, *h = NULL;
  int64_t        *d_sample = NULL, *d_vals = NULL;
  OceanError      err;

  OceanFree(an->rows);
  an->nrows = A.nrows;
  OceanAnalysisSampleReset(an);
  OceanCall(OceanDevAlloc(ctx, A.nrows, &d->shapes));
  /* s->cflags: the rows with products (the symbolic counts below reuse it as their overflow flags) */
  OceanCall(OceanCudaAnalyzeRows(dev, A, d->nnz[0], B, d->nnz[1], d->shapes, s->cflags, &an->products, &an->bound_total));
  OceanAnalysisFinishRows(an, d->nnz[0]);
  if (record) {
    OceanCall(OceanMalloc(A.nrows, &an->rows, "analysis: rows"));
    OceanCall(OceanCudaDownload(an->rows, d->shapes, (size_t)A.nrows * sizeof(OceanRowShape)));
  }
  if (A.nrows == 0 || !OceanAnalysisNeedsSample(&ctx->options, an)) return OCEAN_SUCCESS;
  OceanCall(OceanCudaSelectFlagged(dev, NULL, A.nrows, s->cflags, s->list, &nq));
  ns = OceanAnalysisSampleSize(&ctx->options, A.nrows, nq);
  if (ns == 0) return OCEAN_SUCCESS;
  if ((err = OceanDevAlloc(ctx, ns, &d_sample)) || (err = OceanDevAlloc(ctx, 2 * ns, &d_vals)) || (err = OceanMalloc(2 * ns, &h, "analysis: sampled products and counts"))) goto done;
  if ((err = OceanCudaSampleRows(s->list, nq, ns, d_sample))) goto done;
  /* p = ub always fits, so this never retries */
  if ((err = OceanCudaPredictRows(OCEAN_CUDA_PREDICT_UB, d_sample, ns, d->shapes, NULL, NULL, 0.0, s->p))) goto done;
  if ((err = OceanCudaCountRows(ctx, rp, A, B, s, d->shapes, d_sample, ns, &retried))) goto done;
  if ((err = OceanCudaSampleValues(d_sample, ns, d->shapes, s->counts, d_vals))) goto done;
  if ((err = OceanCudaReadback(dev, h, d_vals, (size_t)(2 * ns) * sizeof(int64_t)))) goto done;
  if (record && (err = OceanCudaCheckSample(ctx, st, d_sample, h, ns))) goto done;
  OceanAnalysisSampleFinish(an, h, h + ns, ns);
done:
  OceanDevFree(ctx, d_sample);
  OceanDevFree(ctx, d_vals);
  OceanFree(h);
  return err;
}

/* The sketches of B on the device: from the device cache when B's structure id is known there. */
static OceanError OceanCudaGetSketches(OceanContext ctx, const OceanCSR *Bh, int64_t b_nnz, OceanDevCSR B, int registers, OceanCudaScratch *s, const uint8_t **sketches, int *reused)
{
  OceanSketchCacheEntry *e = NULL;
  size_t                 nbytes = (size_t)B.nrows * (size_t)registers;

  *reused = 0;
  if (Bh->structure_id == 0) {
    OceanCall(OceanDevAlloc(ctx, nbytes, &s->sketches));
    OceanCall(OceanCudaSketchBuild(B, registers, s->sketches));
    *sketches = s->sketches;
    ctx->sketches_built++;
    return OCEAN_SUCCESS;
  }
  if (OceanSketchCacheFind(ctx->dcache, &ctx->cache_clock, Bh, b_nnz, registers, &e)) {
    *sketches = e->sketches;
    *reused   = 1;
    ctx->sketches_reused++;
    return OCEAN_SUCCESS;
  }
  OceanCudaFree(OceanCtxDev(ctx), e->sketches);
  e->sketches     = NULL;
  e->structure_id = 0;
  OceanCall(OceanDevAlloc(ctx, nbytes, &e->sketches));
  OceanCall(OceanCudaSketchBuild(B, registers, e->sketches));
  e->structure_id = Bh->structure_id;
  e->registers    = registers;
  e->nrows        = Bh->nrows;
  e->nnz          = b_nnz;
  e->last_use     = ++ctx->cache_clock;
  *sketches       = e->sketches;
  ctx->sketches_built++;
  return OCEAN_SUCCESS;
}

/* C's row offsets from the exact counts (s->counts) and its nonzero count (after the size check). */
static OceanError OceanCudaAllocRowptr(OceanContext ctx, OceanStage *st, OceanCudaStage *d, OceanCudaScratch *s)
{
  int64_t nnz;
  OceanCall(OceanDevAlloc(ctx, st->nrows + 1, &d->c_rowptr));
  OceanCall(OceanCudaScanCounts(OceanCtxDev(ctx), NULL, st->nrows, s->counts, d->c_rowptr, NULL, &nnz));
  OceanCall(OceanStageCheckNnz(ctx, st, nnz));
  d->c_nnz = nnz;
  st->nnz  = nnz;
  return OCEAN_SUCCESS;
}

/* The device memory a product can count on now: free memory, the pool's cached blocks not in use and the mirrors
   the running call does not read (the pool reclaims those when it runs short); at most
   OceanOptions.device_memory_limit when set. */
static OceanError OceanCudaAvailable(OceanContext ctx, int64_t *bytes)
{
  const OceanCudaContext *c     = (const OceanCudaContext *)ctx->cuda;
  const int64_t           limit = ctx->options.device_memory_limit;
  int64_t                 free_bytes = 0, in_use = 0, reserved = 0, mirrors, mirrors_in_use = 0;

  OceanCudaPoolStats(c->dev, &in_use, NULL, &reserved, NULL);
  OceanCall(OceanCudaDeviceMemory(c->dev, &free_bytes, NULL));
  mirrors = OceanCudaMirrorsBytes(c, &mirrors_in_use);
  *bytes  = free_bytes + (reserved - in_use) + (mirrors - mirrors_in_use);
  if (limit > 0 && *bytes > limit) *bytes = limit;
  return OCEAN_SUCCESS;
}

/* Whether bytes fit the memory of OceanCudaAvailable; the driver is asked only when the pool's cached blocks do not
   suffice. */
static OceanError OceanCudaFits(OceanContext ctx, int64_t bytes, int *fits)
{
  const OceanCudaContext *c     = (const OceanCudaContext *)ctx->cuda;
  const int64_t           limit = ctx->options.device_memory_limit;
  int64_t                 in_use = 0, reserved = 0, available;

  OceanCudaPoolStats(c->dev, &in_use, NULL, &reserved, NULL);
  *fits = bytes <= reserved - in_use && (limit == 0 || bytes <= limit);
  if (*fits || (limit > 0 && bytes > limit)) return OCEAN_SUCCESS;
  OceanCall(OceanCudaAvailable(ctx, &available));
  *fits = bytes <= available;
  return OCEAN_SUCCESS;
}

/* UPPER_BOUND and ESTIMATE after the predictions in s->p: slots, numeric, fallback, compaction, sort.  *switched: 1
   when the slots would pass max_output_nnz, 2 when they would not fit the device memory (nothing done then). */
static OceanError OceanCudaOverAllocated(OceanContext ctx, OceanStage *st, OceanCudaStage *d, const OceanCudaRouteParams *rp, OceanDevCSR A, OceanDevCSR B, OceanCudaScratch *s,
                                         int *switched)
{
  OceanCudaDevice dev = OceanCtxDev(ctx);
  OceanStats     *S   = &st->stats;
  int64_t         total, nover = 0, retried, fb_total = 0;
  int             unsorted = 0; /* global-hash rows written: C's rows need the sort */
  const int       bounded  = st->dec.workflow == OCEAN_WORKFLOW_UPPER_BOUND;
  double          t0;

  *switched = 0;
  OceanCall(OceanCudaRouteRows(rp, OCEAN_PASS_NUMERIC, NULL, st->nrows, s->p, d->shapes, s->routes));
  /* upper bounds: every route's slot is its row's bound (OceanRouteRowBins with p = ub), so the total is the
     analysis's and no row can overflow: two waits fewer */
  OceanCall(OceanCudaScanSlots(dev, s->routes, st->nrows, s->offsets, bounded ? NULL : &total));
  if (bounded) total = st->an.bound_total;
  if (total > ctx->options.max_output_nnz) {
    *switched = 1;
    return OCEAN_SUCCESS;
  }
  {
    int fits;
    OceanCall(OceanCudaFits(ctx, total * (int64_t)(sizeof(int32_t) + sizeof(double)), &fits));
    if (!fits) {
      *switched = 2;
      return OCEAN_SUCCESS;
    }
  }
  S->allocated_entries = total;
  OceanCall(OceanDevAlloc(ctx, total, &s->bcols));
  OceanCall(OceanDevAlloc(ctx, total, &s->bvals));

  t0 = OceanPhaseBegin(ctx, OCEAN_PHASE_NUMERIC);
  OceanCall(OceanCudaTimerStart(dev));
  OceanCall(OceanCudaRunRows(dev, rp, A, B, d->shapes, s->routes, NULL, st->nrows, st->dec.bitmap_query, s->offsets, s->bcols, s->bvals, s->counts, s->flags, &unsorted));
  OceanCall(OceanStageTimerStop(ctx, &S->t_numeric));
  (void)OceanPhaseEnd(ctx, OCEAN_PHASE_NUMERIC, 2.0 * (double)st->an.products, t0);

  if (!bounded) OceanCall(OceanCudaSelectFlagged(dev, NULL, st->nrows, s->flags, s->list, &nover));
  S->overflow_rows = nover;
  if (nover) {
    t0 = OceanPhaseBegin(ctx, OCEAN_PHASE_FALLBACK);
    OceanCall(OceanCudaTimerStart(dev));
    /* exact counts from twice the slot that overflowed, then exactly sized buffers */
    OceanCall(OceanCudaPredictRows(OCEAN_CUDA_PREDICT_RETRY, s->list, nover, d->shapes, NULL, s->routes, 0.0, s->p));
    OceanCall(OceanCudaCountRows(ctx, rp, A, B, s, d->shapes, s->list, nover, &retried));
    {
      int64_t nnz = 0;
      OceanCall(OceanCudaScanCounts(dev, NULL, st->nrows, s->counts, s->scan, NULL, &nnz));
      OceanCall(OceanStageCheckNnz(ctx, st, nnz));
    }
    OceanCall(OceanCudaScanCounts(dev, s->list, nover, s->counts, s->list2, s->foffsets, &fb_total));
    OceanCall(OceanDevAlloc(ctx, fb_total, &s->fcols));
    OceanCall(OceanDevAlloc(ctx, fb_total, &s->fvals));
    OceanCall(OceanCudaRouteRows(rp, OCEAN_PASS_NUMERIC, s->list, nover, s->counts, d->shapes, s->sroutes));
    /* the fallback's own counts and flags go to scratch: the over-allocated run's flags are the record */
    OceanCall(OceanCudaRunRows(dev, rp, A, B, d->shapes, s->sroutes, s->list, nover, st->dec.bitmap_query, s->foffsets, s->fcols, s->fvals, s->p, s->nflags, &unsorted));
    OceanCall(OceanStageTimerStop(ctx, &S->t_fallback));
    (void)OceanPhaseEnd(ctx, OCEAN_PHASE_FALLBACK, 0.0, t0);
  }

  t0 = OceanPhaseBegin(ctx, OCEAN_PHASE_COMPACT);
  OceanCall(OceanCudaTimerStart(dev));
  /* the peak of the run is here (slots, C, per-row arrays): the scratch nothing reads any more goes first, and C's
     columns are compacted and the slots' columns freed before C's values are allocated (the Laplacians' upper
     bounds: slots of about twice C) */
  OceanDevFree(ctx, s->p);
  OceanDevFree(ctx, s->list);
  OceanDevFree(ctx, s->list2);
  OceanDevFree(ctx, s->scan);
  OceanDevFree(ctx, s->sroutes);
  OceanDevFree(ctx, s->cflags);
  OceanDevFree(ctx, s->nflags);
  OceanCall(OceanCudaAllocRowptr(ctx, st, d, s));
  OceanCall(OceanDevAlloc(ctx, d->c_nnz, &d->c_colidx));
  OceanCall(OceanCudaCompact(st->nrows, d->c_nnz, d->c_rowptr, s->flags, s->offsets, s->bcols, NULL, s->foffsets, s->fcols, NULL, d->c_colidx, NULL));
  OceanDevFree(ctx, s->bcols);
  OceanDevFree(ctx, s->fcols);
  OceanCall(OceanDevAlloc(ctx, d->c_nnz, &d->c_values));
  OceanCall(OceanCudaCompact(st->nrows, d->c_nnz, d->c_rowptr, s->flags, s->offsets, NULL, s->bvals, s->foffsets, NULL, s->fvals, NULL, d->c_values));
  OceanDevFree(ctx, s->bvals);
  OceanDevFree(ctx, s->fvals);
  if (unsorted) OceanCall(OceanCudaSortRows(dev, st->nrows, d->c_nnz, d->c_rowptr, d->c_colidx, d->c_values));
  OceanCall(OceanStageTimerStop(ctx, &S->t_compact));
  (void)OceanPhaseEnd(ctx, OCEAN_PHASE_COMPACT, 0.0, t0);
  return OCEAN_SUCCESS;
}

/* C's host arrays for st->nnz entries, its row offsets downloaded (its columns and values not yet current). */
static OceanError OceanCudaStageHostC(OceanContext ctx, OceanStage *st, const OceanCudaStage *d)
{
  const int64_t n = st->nrows;

  st->host_structure = st->host_values = 0;
  OceanFree(st->rowptr);
  OceanFree(st->colidx);
  OceanFree(st->values);
  OceanCall(OceanMalloc(n + 1, &st->rowptr, "C row offsets"));
  OceanCall(OceanMalloc(st->nnz, &st->colidx, "C column indices"));
  OceanCall(OceanMalloc(st->nnz, &st->values, "C values"));
  if (n) OceanCall(OceanCudaDownloadStaged(OceanCtxDev(ctx), st->rowptr, d->c_rowptr, (size_t)(n + 1) * sizeof(int64_t)));
  else st->rowptr[0] = 0;
  return OCEAN_SUCCESS;
}

/* The end of the chunk of rows starting at r0: as many rows as C's offsets rowptr keep within budget entries, at
   least one. */
static int64_t OceanCudaChunkEnd(const int64_t *rowptr, int64_t n, int64_t r0, int64_t budget)
{
  int64_t r1 = r0 + 1;
  while (r1 < n && rowptr[r1 + 1] - rowptr[r0] <= budget) r1++;
  return r1;
}

/*
  C in chunks of rows, when it does not fit the device beside the accumulators' workspace: each chunk's rows are
  summed by the given routes (with exact slots) into a buffer of the chunk's entries (offsets rebased to it), sorted
  where global-hash rows need it, and copied into C's host arrays.  A chunk holds at most a quarter of the available
  memory's worth of entries (the rest: the accumulators' global workspace and the sort's copy), at least one row.
  The first call (check 0) allocates C's host arrays and downloads the row offsets; a numeric-only call (check 1) must
  reproduce C's known rows, entry counts and columns: a structure changed under the same ids is OCEAN_ERR_STATE.
  Such a row may write up to its route's slot, beyond its entries in C, so in that call the chunk buffers have room
  for the largest slot's excess past the chunk's last row.  counts and flags: per-row scratch of nrows entries.
*/
static OceanError OceanCudaChunkedRows(OceanContext ctx, OceanStage *st, OceanCudaStage *d, const OceanCudaRouteParams *rp, OceanDevCSR A, OceanDevCSR B, const OceanRoute *routes,
                                       int check, int64_t *counts, uint8_t *flags)
{
  OceanCudaDevice dev = OceanCtxDev(ctx);
  const int64_t   n   = st->nrows;
  int64_t         available, budget, most = 0, excess = 0, r0, r1, i, chunks = 0, *off = NULL, *hslots = NULL, *hcounts = NULL;
  int32_t        *cols = NULL, *hcols = NULL;
  double         *vals = NULL;
  OceanError      err = OCEAN_SUCCESS;

  if (!check) OceanCall(OceanCudaStageHostC(ctx, st, d));
  OceanCall(OceanCudaAvailable(ctx, &available));
  budget = OceanMax64(available / 4 / (int64_t)(sizeof(int32_t) + sizeof(double)), 1);
  for (r0 = 0; r0 < n; r0 = r1) {
    r1   = OceanCudaChunkEnd(st->rowptr, n, r0, budget);
    most = OceanMax64(most, st->rowptr[r1] - st->rowptr[r0]);
  }
  if ((err = OceanDevAlloc(ctx, n + 1, &off))) goto done;
  if (check) {
    /* the routes' slots (the scan into off, before off holds a chunk's offsets): the largest excess over C's row */
    if ((err = OceanCudaScanSlots(dev, routes, n, off, NULL)) || (err = OceanMalloc(n + 1, &hslots, "route slots")) ||
        (err = OceanCudaDownloadStaged(dev, hslots, off, (size_t)(n + 1) * sizeof(int64_t))) || (err = OceanMalloc(n, &hcounts, "a chunk's row counts")) ||
        (err = OceanMalloc(most, &hcols, "a chunk of C's columns")))
      goto done;
    for (i = 0; i < n; i++) excess = OceanMax64(excess, (hslots[i + 1] - hslots[i]) - (st->rowptr[i + 1] - st->rowptr[i]));
  }
  if ((err = OceanDevAlloc(ctx, most + excess, &cols)) || (err = OceanDevAlloc(ctx, most + excess, &vals))) goto done;
  for (r0 = 0; r0 < n; r0 = r1) {
    int64_t     base, cnnz;
    OceanDevCSR Ac       = A;
    int         unsorted = 0;
    r1        = OceanCudaChunkEnd(st->rowptr, n, r0, budget);
    base      = st->rowptr[r0];
    cnnz      = st->rowptr[r1] - base;
    Ac.rowptr = A.rowptr + r0;
    Ac.nrows  = r1 - r0;
    if ((err = OceanCudaRebaseOffsets(d->c_rowptr + r0, r1 - r0 + 1, off)) ||
        (err = OceanCudaRunRows(dev, rp, Ac, B, d->shapes + r0, routes + r0, NULL, r1 - r0, st->dec.bitmap_query, off, cols, vals, counts + r0, flags + r0, &unsorted)) ||
        (unsorted && (err = OceanCudaSortRows(dev, r1 - r0, cnnz, off, cols, vals))))
      goto done;
    if (check) { /* a row that overflowed its slot counts slot + 1 */
      if ((err = OceanCudaDownloadStaged(dev, hcounts, counts + r0, (size_t)(r1 - r0) * sizeof(int64_t)))) goto done;
      for (i = r0; i < r1; i++)
        if (hcounts[i - r0] != st->rowptr[i + 1] - st->rowptr[i]) {
          err = OceanSetError(OCEAN_ERR_STATE, "%s: row %lld of chunk %lld has %lld entries, C %lld", st->name, (long long)i, (long long)chunks, (long long)hcounts[i - r0],
                              (long long)(st->rowptr[i + 1] - st->rowptr[i]));
          goto done;
        }
    }
    if (cnnz && (err = OceanCudaDownloadStaged(dev, check ? hcols : st->colidx + base, cols, (size_t)cnnz * sizeof(int32_t)))) goto done;
    if (check && memcmp(hcols, st->colidx + base, (size_t)cnnz * sizeof(int32_t))) {
      err = OceanSetError(OCEAN_ERR_STATE, "%s: chunk %lld (rows %lld to %lld) does not have C's known columns", st->name, (long long)chunks, (long long)r0, (long long)r1 - 1);
      goto done;
    }
    if (cnnz && (err = OceanCudaDownloadStaged(dev, st->values + base, vals, (size_t)cnnz * sizeof(double)))) goto done;
    chunks++;
  }
  d->row_chunks = st->stats.row_chunks = chunks;
  st->host_structure = st->host_values = 1;
done:
  OceanDevFree(ctx, off);
  OceanDevFree(ctx, cols);
  OceanDevFree(ctx, vals);
  OceanFree(hslots);
  OceanFree(hcounts);
  OceanFree(hcols);
  return err;
}

/* C whole on the device: its arrays, the numeric run into them by the exact routes, the sort of global-hash rows. */
static OceanError OceanCudaExactWhole(OceanContext ctx, OceanStage *st, OceanCudaStage *d, const OceanCudaRouteParams *rp, OceanDevCSR A, OceanDevCSR B, OceanCudaScratch *s)
{
  int unsorted = 0;

  OceanCall(OceanDevAlloc(ctx, d->c_nnz, &d->c_colidx));
  OceanCall(OceanDevAlloc(ctx, d->c_nnz, &d->c_values));
  /* numeric counts and flags into scratch (s->p, s->nflags): the exact routes never overflow */
  OceanCall(OceanCudaRunRows(OceanCtxDev(ctx), rp, A, B, d->shapes, s->routes, NULL, st->nrows, st->dec.bitmap_query, d->c_rowptr, d->c_colidx, d->c_values, s->p, s->nflags, &unsorted));
  if (unsorted) OceanCall(OceanCudaSortRows(OceanCtxDev(ctx), st->nrows, d->c_nnz, d->c_rowptr, d->c_colidx, d->c_values));
  return OCEAN_SUCCESS;
}

/* EXACT: symbolic counts (assisted binning, retries), C, numeric into it, sort.  C whole on the device when its
   entries fit the available memory (and the run finds the memory for its workspace), else in chunks of rows. */
static OceanError OceanCudaExact(OceanContext ctx, OceanStage *st, OceanCudaStage *d, const OceanCudaRouteParams *rp, OceanDevCSR A, OceanDevCSR B, OceanCudaScratch *s)
{
  OceanCudaDevice dev = OceanCtxDev(ctx);
  OceanStats     *S   = &st->stats;
  int64_t         retried;
  int             fits;
  double          t0;

  t0 = OceanPhaseBegin(ctx, OCEAN_PHASE_SYMBOLIC);
  OceanCall(OceanCudaTimerStart(dev));
  OceanCall(OceanCudaPredictRows(OCEAN_CUDA_PREDICT_EXACT, NULL, st->nrows, d->shapes, NULL, NULL, st->an.cr_conservative, s->p));
  OceanCall(OceanCudaCountRows(ctx, rp, A, B, s, d->shapes, NULL, st->nrows, &retried));
  OceanCall(OceanStageTimerStop(ctx, &S->t_symbolic));
  (void)OceanPhaseEnd(ctx, OCEAN_PHASE_SYMBOLIC, 0.0, t0);
  S->symbolic_retry_rows = retried;

  OceanCall(OceanCudaAllocRowptr(ctx, st, d, s));
  S->allocated_entries = st->nnz;
  OceanCall(OceanCudaRouteRows(rp, OCEAN_PASS_NUMERIC, NULL, st->nrows, s->counts, d->shapes, s->routes));
  OceanCall(OceanCudaFits(ctx, d->c_nnz * (int64_t)(sizeof(int32_t) + sizeof(double)), &fits));
  t0 = OceanPhaseBegin(ctx, OCEAN_PHASE_NUMERIC);
  OceanCall(OceanCudaTimerStart(dev));
  if (fits) {
    OceanError err = OceanCudaExactWhole(ctx, st, d, rp, A, B, s);
    if (err == OCEAN_ERR_MEMORY) { /* the workspace beside C did not fit: chunks after all */
      OceanDevFree(ctx, d->c_colidx);
      OceanDevFree(ctx, d->c_values);
      fits = 0;
    } else OceanCall(err);
  }
  if (!fits) OceanCall(OceanCudaChunkedRows(ctx, st, d, rp, A, B, s->routes, 0, s->p, s->nflags));
  OceanCall(OceanStageTimerStop(ctx, &S->t_numeric));
  (void)OceanPhaseEnd(ctx, OCEAN_PHASE_NUMERIC, 2.0 * (double)st->an.products, t0);
  return OCEAN_SUCCESS;
}

/*
  NARROW (OceanSelectNarrow): one pass of a team per row into a dense-row workspace, which also gives every row's shape
  and the totals; C's offsets by a CUB scan; one wait, for nnz(C) and the totals together; compaction.  No analysis
  pass, no routes, no sort.  The statistics and row records are the CPU's: every row with products in the NARROW bin
  (OceanRouteNarrow), slots at the rows' upper bounds.
*/
static OceanError OceanCudaNarrow(OceanContext ctx, OceanStage *st, OceanCudaStage *d, const OceanCSR *Ah, const OceanCSR *Bh, OceanDevCSR A, OceanDevCSR B, OceanCudaScratch *s)
{
  OceanCudaDevice    dev = OceanCtxDev(ctx);
  OceanStats        *S   = &st->stats;
  OceanStageScratch *t   = &st->tmp;
  OceanAnalysis     *an  = &st->an;
  const int64_t      n   = st->nrows;
  int64_t            nnz = 0, totals[3] = {0, 0, 0}, nonempty, i;
  double             t0;

  OceanFree(an->rows);
  an->nrows = n;
  OceanAnalysisSampleReset(an);
  OceanDecideNarrow(&ctx->options, &st->dec);
  OceanStageStatsFromAnalysis(st, Ah, Bh); /* the totals come with the pass below */
  OceanCall(OceanDevAlloc(ctx, n, &d->shapes));
  OceanCall(OceanDevAlloc(ctx, n, &s->counts));
  OceanCall(OceanDevAlloc(ctx, n + 1, &s->offsets));
  OceanCall(OceanDevAlloc(ctx, n, &s->flags));
  OceanCall(OceanDevAlloc(ctx, 3, &s->list));
  OceanCall(OceanDevAlloc(ctx, n * B.ncols, &s->bcols));
  OceanCall(OceanDevAlloc(ctx, n * B.ncols, &s->bvals));
  OceanCall(OceanDevAlloc(ctx, n + 1, &d->c_rowptr));

  t0 = OceanPhaseBegin(ctx, OCEAN_PHASE_NUMERIC);
  OceanCall(OceanCudaTimerStart(dev));
  OceanCall(OceanCudaNarrowSymbolic(A, d->nnz[0], B, d->shapes, s->counts, s->offsets, s->flags, s->bcols, s->bvals, s->list));
  OceanCall(OceanCudaScanCounts(dev, NULL, n, s->counts, d->c_rowptr, NULL, NULL));
  OceanCall(OceanStageTimerStop(ctx, &S->t_numeric));
  {
    const void *src[4] = {d->c_rowptr + n, s->list, s->list + 1, s->list + 2};
    void       *dst[4] = {&nnz, &totals[0], &totals[1], &totals[2]};
    OceanCall(OceanCudaReadbackWords(dev, 4, src, dst)); /* the stage's one wait */
  }
  (void)OceanPhaseEnd(ctx, OCEAN_PHASE_NUMERIC, 2.0 * (double)totals[0], t0);
  an->products    = totals[0];
  an->bound_total = totals[1];
  nonempty        = totals[2];
  OceanAnalysisFinishRows(an, d->nnz[0]);
  S->products          = an->products;
  S->bound_nnz         = an->bound_total;
  S->er                = an->er;
  S->allocated_entries = an->bound_total; /* the CPU's slots; the device's workspace is rows x columns */
  OceanCall(OceanStageCheckNnz(ctx, st, nnz));
  d->c_nnz = st->nnz = nnz;

  t0 = OceanPhaseBegin(ctx, OCEAN_PHASE_COMPACT);
  OceanCall(OceanCudaTimerStart(dev));
  OceanCall(OceanDevAlloc(ctx, nnz, &d->c_colidx));
  OceanCall(OceanDevAlloc(ctx, nnz, &d->c_values));
  OceanCall(OceanCudaCompact(n, d->c_nnz, d->c_rowptr, s->flags, s->offsets, s->bcols, s->bvals, NULL, NULL, NULL, d->c_colidx, d->c_values));
  OceanCall(OceanStageTimerStop(ctx, &S->t_compact));
  (void)OceanPhaseEnd(ctx, OCEAN_PHASE_COMPACT, 0.0, t0);

  memset(&d->exact_counts, 0, sizeof(d->exact_counts));
  d->exact_counts.bins[OCEAN_BIN_NARROW] = d->exact_counts.acc[OCEAN_ACC_DENSE] = nonempty;
  d->exact_counts.bins[OCEAN_BIN_EMPTY] = d->exact_counts.acc[OCEAN_ACC_NONE] = n - nonempty;
  S->rows_per_bin[OCEAN_BIN_NARROW] = S->dense_rows = nonempty;
  S->rows_per_bin[OCEAN_BIN_EMPTY]                  = n - nonempty;
  st->host_structure = st->host_values = 0;
  if (!ctx->options.record_rows) return OCEAN_SUCCESS;

  /* record_rows: the shapes and counts to the host; the routes are OceanRouteNarrow's, as on the CPU */
  OceanCall(OceanMalloc(n, &an->rows, "analysis: rows"));
  OceanCall(OceanMalloc(n, &t->counts, "row counts"));
  OceanCall(OceanMalloc(n, &t->predicted, "predicted sizes"));
  OceanCall(OceanMalloc(n, &t->routes, "routes"));
  OceanCall(OceanMalloc(n, &st->exact, "exact routes"));
  OceanCall(OceanCalloc(n, &t->flags, "overflow flags"));
  OceanCall(OceanCudaDownload(an->rows, d->shapes, (size_t)n * sizeof(OceanRowShape)));
  OceanCall(OceanCudaDownload(t->counts, s->counts, (size_t)n * sizeof(int64_t)));
  for (i = 0; i < n; i++) {
    t->predicted[i] = an->rows[i].ub;
    OceanRouteNarrow(t->predicted[i], &an->rows[i], &t->routes[i]);
    OceanRouteNarrow(t->counts[i], &an->rows[i], &st->exact[i]);
  }
  return OCEAN_SUCCESS;
}

static OceanError OceanCudaStageSymbolic_Private(OceanContext ctx, OceanStage *st, OceanCudaStage *d, const OceanCSR *Ah, const OceanCSR *Bh, OceanCudaScratch *s)
{
  OceanCudaDevice      dev = OceanCtxDev(ctx);
  OceanStageScratch   *t   = &st->tmp;
  OceanCudaRouteParams rp;
  OceanDevCSR          A, B;
  int64_t              n = st->nrows;
  int                  switched = 0, reused = 0;
  double               t0;

  OceanCudaRouteParamsGet(ctx, &rp);
  t0 = OceanPhaseBegin(ctx, OCEAN_PHASE_ANALYSIS);
  OceanCall(OceanCudaTimerStart(dev));
  OceanCall(OceanCudaOperand(ctx, st, d, 0, Ah, 0, &A));
  OceanCall(OceanCudaOperand(ctx, st, d, 1, Bh, 0, &B));
  if (st->narrow) {
    OceanCall(OceanStageTimerStop(ctx, &st->stats.t_analysis)); /* the uploads, if any */
    (void)OceanPhaseEnd(ctx, OCEAN_PHASE_ANALYSIS, 0.0, t0);
    return OceanCudaNarrow(ctx, st, d, Ah, Bh, A, B, s);
  }
  /* per-row scratch */
  OceanCall(OceanDevAlloc(ctx, n, &s->p));
  OceanCall(OceanDevAlloc(ctx, n, &s->counts));
  OceanCall(OceanDevAlloc(ctx, n + 1, &s->offsets));
  OceanCall(OceanDevAlloc(ctx, n, &s->foffsets));
  OceanCall(OceanDevAlloc(ctx, n, &s->list));
  OceanCall(OceanDevAlloc(ctx, n + 1, &s->list2));
  OceanCall(OceanDevAlloc(ctx, n + 1, &s->scan));
  OceanCall(OceanDevAlloc(ctx, n, &s->routes));
  OceanCall(OceanDevAlloc(ctx, n, &s->sroutes));
  OceanCall(OceanDevAlloc(ctx, n, &s->flags));
  OceanCall(OceanDevAlloc(ctx, n, &s->cflags));
  OceanCall(OceanDevAlloc(ctx, n, &s->nflags));
  OceanCall(OceanCudaAnalyze(ctx, st, d, &rp, A, B, s));
  OceanSelectWorkflow(&ctx->options, &st->an, &st->dec);
  OceanCall(OceanStageTimerStop(ctx, &st->stats.t_analysis)); /* kept by OceanStageStatsFromAnalysis */
  (void)OceanPhaseEnd(ctx, OCEAN_PHASE_ANALYSIS, 0.0, t0);
  OceanStageStatsFromAnalysis(st, Ah, Bh);

  if (st->dec.workflow == OCEAN_WORKFLOW_UPPER_BOUND) {
    OceanCall(OceanCudaPredictRows(OCEAN_CUDA_PREDICT_UB, NULL, n, d->shapes, NULL, NULL, 0.0, s->p));
    OceanCall(OceanCudaOverAllocated(ctx, st, d, &rp, A, B, s, &switched));
  } else if (st->dec.workflow == OCEAN_WORKFLOW_ESTIMATE) {
    const uint8_t *sk;
    t0 = OceanPhaseBegin(ctx, OCEAN_PHASE_ESTIMATE);
    OceanCall(OceanCudaTimerStart(dev));
    OceanCall(OceanDevAlloc(ctx, n, &s->estimate));
    OceanCall(OceanCudaGetSketches(ctx, Bh, d->nnz[1], B, st->dec.registers, s, &sk, &reused));
    OceanCall(OceanCudaSketchEstimate(A, sk, st->dec.registers, s->estimate));
    OceanCall(OceanCudaPredictRows(OCEAN_CUDA_PREDICT_ESTIMATE, NULL, n, d->shapes, s->estimate, NULL, st->dec.coefficient, s->p));
    OceanCall(OceanStageTimerStop(ctx, &st->stats.t_estimate));
    (void)OceanPhaseEnd(ctx, OCEAN_PHASE_ESTIMATE, 0.0, t0);
    st->stats.sketches_reused      = reused;
    st->stats.hll_registers        = st->dec.registers;
    st->stats.estimate_coefficient = st->dec.coefficient;
    OceanCall(OceanCudaOverAllocated(ctx, st, d, &rp, A, B, s, &switched));
  }
  if (switched) {
    st->stats.switched_to_exact = switched;
    st->dec.workflow            = OCEAN_WORKFLOW_EXACT;
    st->stats.workflow          = OCEAN_WORKFLOW_EXACT;
  }
  if (st->dec.workflow == OCEAN_WORKFLOW_EXACT) OceanCall(OceanCudaExact(ctx, st, d, &rp, A, B, s));

  /* exact routes for numeric-only reuse (the exact workflow's numeric routes already are) */
  OceanCall(OceanDevAlloc(ctx, n, &d->exact));
  OceanCall(OceanCudaRouteRows(&rp, OCEAN_PASS_NUMERIC, NULL, n, s->counts, d->shapes, d->exact));

  /* the statistics over rows, reduced on the device (FinishStats leaves them; with record_rows it checks them) */
  {
    OceanCudaRouteCounts rcs[2], rc;
    const OceanRoute    *sets[2] = {s->routes, d->exact};
    OceanStats          *S       = &st->stats;
    int                  b;
    OceanCall(OceanCudaCountRoutes(dev, sets, 2, n, rcs));
    rc              = rcs[0];
    d->exact_counts = rcs[1];
    for (b = 0; b < OCEAN_NUM_BINS; b++) S->rows_per_bin[b] = rc.bins[b];
    S->dense_rows  = rc.acc[OCEAN_ACC_DENSE];
    S->hash_rows   = rc.acc[OCEAN_ACC_HASH];
    S->esc_rows    = rc.acc[OCEAN_ACC_ESC];
    S->global_rows = rc.acc[OCEAN_ACC_GLOBAL_HASH] + rc.acc[OCEAN_ACC_GLOBAL_DENSE];
    if (st->dec.workflow == OCEAN_WORKFLOW_ESTIMATE) OceanCall(OceanCudaEstimateError(dev, n, d->shapes, s->estimate, st->dec.coefficient, s->counts, &S->estimate_mean_rel_error));
  }
  st->host_structure = st->host_values = d->row_chunks > 0; /* row chunks: C is on the host, and only there */
  if (!ctx->options.record_rows) return OCEAN_SUCCESS;

  /* record_rows: to the host, the per-row arrays the row records are made of (C stays on the device) */
  OceanCall(OceanMalloc(n, &t->routes, "routes"));
  OceanCall(OceanMalloc(n, &t->counts, "row counts"));
  OceanCall(OceanMalloc(n, &st->exact, "exact routes"));
  OceanCall(OceanCudaDownload(t->routes, s->routes, (size_t)n * sizeof(OceanRoute)));
  OceanCall(OceanCudaDownload(t->counts, s->counts, (size_t)n * sizeof(int64_t)));
  OceanCall(OceanCudaDownload(st->exact, d->exact, (size_t)n * sizeof(OceanRoute)));
  if (st->dec.workflow == OCEAN_WORKFLOW_EXACT) {
    OceanCall(OceanMalloc(n, &t->predicted, "predicted sizes"));
    memcpy(t->predicted, t->counts, (size_t)n * sizeof(int64_t)); /* as on the CPU: predicted holds the exact counts */
  } else {
    OceanCall(OceanMalloc(n, &t->predicted, "predicted sizes"));
    OceanCall(OceanMalloc(n, &t->flags, "overflow flags"));
    OceanCall(OceanCudaDownload(t->flags, s->flags, (size_t)n));
    /* the predictions as on the device (s->p was reused as scratch by the fallback), by the same shared functions */
    if (st->dec.workflow == OCEAN_WORKFLOW_ESTIMATE) {
      int64_t i;
      OceanCall(OceanMalloc(n, &t->estimate, "estimates"));
      OceanCall(OceanCudaDownload(t->estimate, s->estimate, (size_t)n * sizeof(double)));
      for (i = 0; i < n; i++) t->predicted[i] = OceanPredictFromEstimate(t->estimate[i], st->dec.coefficient, &st->an.rows[i]);
    } else {
      int64_t i;
      for (i = 0; i < n; i++) t->predicted[i] = st->an.rows[i].ub;
    }
  }
  return OCEAN_SUCCESS;
}

OceanError OceanCudaStageSymbolic(OceanContext ctx, OceanStage *st, const OceanCSR *A, const OceanCSR *B)
{
  OceanCudaScratch s;
  OceanError       err;

  OceanCheck(ctx->cuda, OCEAN_ERR_NOT_AVAILABLE, "%s: the context has no CUDA device", st->name);
  OceanCudaMirrorsCallBegin(ctx);
  OceanCudaStageDestroy(ctx, st);
  OceanCall(OceanCalloc(1, (OceanCudaStage **)&st->dev, "CUDA stage"));
  memset(&s, 0, sizeof(s));
  err = OceanCudaStageSymbolic_Private(ctx, st, (OceanCudaStage *)st->dev, A, B, &s);
  {
    OceanError terr = OceanCudaTimersRead(OceanCtxDev(ctx)); /* the phase times, while the stage's statistics exist */
    if (!err) err = terr;
  }
  OceanCudaScratchFree(ctx, &s);
  if (err) OceanCudaStageDestroy(ctx, st);
  return err;
}

/* The product map of the stage's known structure, made by its first numeric call when the options allow its bytes
   and the operands' entries have 32-bit indices.  A pool that cannot hold it is no error: the calls search C's rows. */
static OceanError OceanCudaStageMapCreate(OceanContext ctx, OceanStage *st, OceanCudaStage *d, OceanDevCSR A, OceanDevCSR B)
{
  const OceanCudaContext *c     = (const OceanCudaContext *)ctx->cuda;
  const int64_t           limit = ctx->options.reuse_map_max_bytes < 0 ? c->device_memory / 4 : ctx->options.reuse_map_max_bytes;
  OceanError              err;

  d->map_tried = 1;
  if (limit == 0 || d->nnz[0] > INT32_MAX || d->nnz[1] > INT32_MAX) return OCEAN_SUCCESS;
  err = OceanCudaProductMapCreate(OceanCtxDev(ctx), &d->known, A, B, d->shapes, d->c_nnz, d->c_rowptr, d->c_colidx, st->an.products, limit, &d->map);
  return err == OCEAN_ERR_MEMORY ? OCEAN_SUCCESS : err;
}

/* Values only: new values (uploaded, or the caller's device arrays) added into C's known structure (no routes, no
   sort).  A product outside that structure is an error (the operands' structure changed under the same ids).  C's
   host copy is then stale until asked for. */
static OceanError OceanCudaStageNumeric_Private(OceanContext ctx, OceanStage *st, const OceanCSR *Ah, const OceanCSR *Bh)
{
  OceanCudaDevice dev = OceanCtxDev(ctx);
  OceanCudaStage *d   = (OceanCudaStage *)st->dev;
  OceanDevCSR     A, B;
  OceanError      err;

  OceanCheck(d && d->c_rowptr, OCEAN_ERR_STATE, "%s: numeric without a device symbolic phase", st->name);
  OceanCall(OceanCudaTimerStart(dev));
  st->host_values = 0;
  OceanCall(OceanCudaOperand(ctx, st, d, 0, Ah, 1, &A));
  OceanCall(OceanCudaOperand(ctx, st, d, 1, Bh, 1, &B));
  st->stats.row_chunks = 0;
  if (d->row_chunks) {
    /* C on the host only: the chunks again, by the exact routes */
    OceanCudaRouteParams rp;
    int64_t             *counts = NULL;
    uint8_t             *flags  = NULL;
    OceanCudaRouteParamsGet(ctx, &rp);
    err = OceanDevAlloc(ctx, st->nrows, &counts);
    if (!err) err = OceanDevAlloc(ctx, st->nrows, &flags);
    if (!err) err = OceanCudaChunkedRows(ctx, st, d, &rp, A, B, d->exact, 1, counts, flags);
    OceanDevFree(ctx, counts);
    OceanDevFree(ctx, flags);
  } else if (st->dec.workflow == OCEAN_WORKFLOW_NARROW) err = OceanCudaNarrowKnown(dev, A, d->nnz[0], B, d->c_rowptr, d->c_colidx, d->c_values);
  else {
    /* the grouping of C's rows is the same for every numeric call: made once, kept */
    if (!d->known.rows && st->nrows) OceanCall(OceanCudaKnownPlanCreate(dev, ctx->profile.smem_per_block, st->nrows, d->c_rowptr, d->shapes, &d->known));
    err = d->map_tried ? OCEAN_SUCCESS : OceanCudaStageMapCreate(ctx, st, d, A, B);
    if (!err) err = d->map.bytes ? OceanCudaNumericMap(dev, &d->known, &d->map, A, B, d->shapes, d->c_rowptr, d->c_values) : OceanCudaNumericKnown(dev, &d->known, A, B, d->shapes, d->c_rowptr, d->c_colidx, d->c_values);
  }
  st->stats.reuse_map_bytes = d->map.bytes;
  if (err == OCEAN_ERR_STATE)
    return OceanSetError(err, "%s: C does not have the structure of the symbolic phase although the operands' structure ids match (a product falls outside it)", st->name);
  OceanCall(err);
  return OceanStageTimerStop(ctx, &st->stats.t_numeric);
}

OceanError OceanCudaStageNumeric(OceanContext ctx, OceanStage *st, const OceanCSR *Ah, const OceanCSR *Bh)
{
  OceanError err, terr;

  OceanCudaMirrorsCallBegin(ctx);
  err  = OceanCudaStageNumeric_Private(ctx, st, Ah, Bh);
  terr = OceanCudaTimersRead(OceanCtxDev(ctx));
  return err ? err : terr;
}

static OceanError OceanCudaStageDownloadC_Private(OceanContext ctx, OceanStage *st, OceanCudaStage *d)
{
  if (!st->host_structure) {
    OceanCall(OceanCudaStageHostC(ctx, st, d));
    OceanCall(OceanCudaDownloadStaged(OceanCtxDev(ctx), st->colidx, d->c_colidx, (size_t)st->nnz * sizeof(int32_t)));
    st->host_structure = 1;
  }
  if (!st->host_values) {
    OceanCall(OceanCudaDownloadStaged(OceanCtxDev(ctx), st->values, d->c_values, (size_t)st->nnz * sizeof(double)));
    st->host_values = 1;
  }
  return OCEAN_SUCCESS;
}

OceanError OceanCudaStageDownloadC(OceanContext ctx, OceanStage *st)
{
  OceanCudaStage *d = (OceanCudaStage *)st->dev;
  OceanError      err;
  double          t0;

  OceanCheck(d && d->c_rowptr, OCEAN_ERR_STATE, "%s: no C on the device", st->name);
  OceanCheck(!d->row_chunks || (st->host_structure && st->host_values), OCEAN_ERR_STATE, "%s: C is made in chunks of rows on the host, and the last numeric call failed: its values are not current",
             st->name);
  t0                   = OceanPhaseBegin(ctx, OCEAN_PHASE_DOWNLOAD);
  err                  = OceanCudaStageDownloadC_Private(ctx, st, d);
  st->stats.t_download += OceanPhaseEnd(ctx, OCEAN_PHASE_DOWNLOAD, 0.0, t0);
  return err;
}

void OceanCudaStageExactCounts(const OceanStage *st, OceanStats *s)
{
  const OceanCudaStage *d = (const OceanCudaStage *)st->dev;
  int                   b;

  if (!d) return;
  for (b = 0; b < OCEAN_NUM_BINS; b++) s->rows_per_bin[b] = d->exact_counts.bins[b];
  s->dense_rows  = d->exact_counts.acc[OCEAN_ACC_DENSE];
  s->hash_rows   = d->exact_counts.acc[OCEAN_ACC_HASH];
  s->esc_rows    = d->exact_counts.acc[OCEAN_ACC_ESC];
  s->global_rows = d->exact_counts.acc[OCEAN_ACC_GLOBAL_HASH] + d->exact_counts.acc[OCEAN_ACC_GLOBAL_DENSE];
}

OceanError OceanCudaStageGetDeviceC(OceanStage *st, const int64_t **d_rowptr, const int32_t **d_colidx, const double **d_values)
{
  OceanCudaStage *d = (OceanCudaStage *)st->dev;

  OceanCheck(d && d->c_rowptr, OCEAN_ERR_STATE, "%s: no C on the device", st->name);
  OceanCheck(!d->row_chunks, OCEAN_ERR_STATE, "%s: C (%lld x %lld, %lld nonzeros) did not fit the device memory; it was made in %lld chunks of rows and is on the host only", st->name,
             (long long)st->nrows, (long long)st->ncols, (long long)st->nnz, (long long)d->row_chunks);
  *d_rowptr = d->c_rowptr;
  *d_colidx = d->c_colidx;
  *d_values = d->c_values;
  return OCEAN_SUCCESS;
}

OceanError OceanCudaStageGetDeviceOperand(OceanStage *st, int k, const OceanCSR *M, OceanCSR *view)
{
  OceanCudaStage *d = (OceanCudaStage *)st->dev;

  OceanCheck(d && (d->view[k].rowptr || d->view[k].nrows == 0), OCEAN_ERR_STATE, "%s: operand %s is not on the device", st->name, k ? "B" : "A");
  *view        = *M;
  view->rowptr = d->view[k].rowptr;
  view->colidx = d->view[k].colidx;
  view->values = d->view[k].values;
  return OCEAN_SUCCESS;
}

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

OceanError OceanCudaTransposeUpdate(OceanContext ctx, OceanCudaTransposeCache *cache, const OceanCSR *M, int64_t nnz, OceanCSR *T)
{
  OceanCudaTransposeCache c;

  if (!*cache) OceanCall(OceanCalloc(1, cache, "device transpose"));
  c = *cache;
  if (c->valid && M->structure_id && c->id == M->structure_id && c->nrows == M->nrows && c->ncols == M->ncols && c->nnz == nnz) {
    OceanCall(OceanCudaGatherValues(c->perm, nnz, M->values, c->values));
  } else {
    OceanError err;
    OceanCudaTransposeFree(ctx, c);
    OceanCall(OceanDevAlloc(ctx, M->ncols + 1, &c->rowptr));
    OceanCall(OceanDevAlloc(ctx, nnz, &c->perm));
    OceanCall(OceanDevAlloc(ctx, nnz, &c->colidx));
    OceanCall(OceanDevAlloc(ctx, nnz, &c->values));
    err = OceanCudaTranspose(OceanCtxDev(ctx), OceanDevView(M->nrows, M->ncols, M->rowptr, M->colidx, M->values), nnz, c->rowptr, c->colidx, c->values, c->perm);
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

void OceanCudaTransposeDestroy(OceanContext ctx, OceanCudaTransposeCache *cache)
{
  if (!*cache) return;
  if (ctx->cuda) OceanCudaTransposeFree(ctx, *cache);
  free(*cache);
  *cache = NULL;
}

OceanError OceanContextResetDeviceMemoryPeak(OceanContext ctx)
{
  OceanCheck(ctx, OCEAN_ERR_ARG, "OceanContextResetDeviceMemoryPeak: NULL context");
  if (ctx->cuda) OceanCudaPoolResetPeak(OceanCtxDev(ctx));
  return OCEAN_SUCCESS;
}

OceanError OceanContextTrimDeviceMemory(OceanContext ctx)
{
  int i;

  OceanCheck(ctx, OCEAN_ERR_ARG, "OceanContextTrimDeviceMemory: NULL context");
  if (!ctx->cuda) return OCEAN_SUCCESS;
  OceanCudaMirrorsFree((OceanCudaContext *)ctx->cuda); /* mirrors and sketches are only caches: rebuilt on demand */
  for (i = 0; i < OCEAN_SKETCH_CACHE_SIZE; i++) {
    OceanCudaFree(OceanCtxDev(ctx), ctx->dcache[i].sketches);
    memset(&ctx->dcache[i], 0, sizeof(ctx->dcache[i]));
  }
  OceanCudaPoolTrim(OceanCtxDev(ctx));
  return OCEAN_SUCCESS;
}

OceanError OceanContextSetDeviceMirrorLimit(OceanContext ctx, int64_t bytes)
{
  OceanCudaContext *c;

  OceanCheck(ctx, OCEAN_ERR_ARG, "OceanContextSetDeviceMirrorLimit: NULL context");
  OceanCheck(bytes >= 0, OCEAN_ERR_ARG, "OceanContextSetDeviceMirrorLimit: a limit of %lld bytes (0: the default)", (long long)bytes);
  if (!ctx->cuda) return OCEAN_SUCCESS;
  c               = (OceanCudaContext *)ctx->cuda;
  c->mirror_limit = bytes;
  c->mirror_call  = c->mirror_clock + 1; /* between products no mirror is in use: all may go */
  (void)OceanCudaMirrorsFit(c, 0);
  return OCEAN_SUCCESS;
}

OceanError OceanContextGetDeviceMirrors(OceanContext ctx, int64_t *bytes, int64_t *limit)
{
  const OceanCudaContext *c;

  OceanCheck(ctx, OCEAN_ERR_ARG, "OceanContextGetDeviceMirrors: NULL context");
  c = (const OceanCudaContext *)ctx->cuda;
  if (bytes) *bytes = c ? OceanCudaMirrorsBytes(c, NULL) : 0;
  if (limit) *limit = c ? OceanCudaMirrorLimit(c) : 0;
  return OCEAN_SUCCESS;
}

#else /* no CUDA backend compiled */

OceanError OceanCudaContextSetup(OceanContext ctx, int device, const OceanDeviceProfile *profile)
{
  return OceanSetError(OCEAN_ERR_NOT_AVAILABLE, "OceanContextCreate: the CUDA backend was not compiled in");
}
void       OceanCudaContextTeardown(OceanContext ctx) { (void)ctx; }
void       OceanCudaStageDestroy(OceanContext ctx, OceanStage *st) { (void)ctx; st->dev = NULL; }
OceanError OceanCudaStageSymbolic(OceanContext ctx, OceanStage *st, const OceanCSR *A, const OceanCSR *B)
{
  return OceanSetError(OCEAN_ERR_NOT_AVAILABLE, "%s: the CUDA backend was not compiled in", st->name);
}
OceanError OceanCudaStageNumeric(OceanContext ctx, OceanStage *st, const OceanCSR *A, const OceanCSR *B)
{
  return OceanSetError(OCEAN_ERR_NOT_AVAILABLE, "%s: the CUDA backend was not compiled in", st->name);
}
OceanError OceanCudaStageDownloadC(OceanContext ctx, OceanStage *st)
{
  return OceanSetError(OCEAN_ERR_NOT_AVAILABLE, "%s: the CUDA backend was not compiled in", st->name);
}
void OceanCudaStageExactCounts(const OceanStage *st, OceanStats *s)
{
  (void)st;
  (void)s;
}
OceanError OceanCudaStageGetDeviceC(OceanStage *st, const int64_t **d_rowptr, const int32_t **d_colidx, const double **d_values)
{
  return OceanSetError(OCEAN_ERR_NOT_AVAILABLE, "%s: the CUDA backend was not compiled in", st->name);
}
OceanError OceanCudaCheckDeviceCSR(OceanContext ctx, const OceanCSR *M, const char *name, int64_t *nnz)
{
  *nnz = 0;
  return OceanSetError(OCEAN_ERR_ARG, "device-resident matrix %s: the CUDA backend was not compiled in", name);
}
OceanError OceanCudaStageGetDeviceOperand(OceanStage *st, int k, const OceanCSR *M, OceanCSR *view)
{
  return OceanSetError(OCEAN_ERR_NOT_AVAILABLE, "%s: the CUDA backend was not compiled in", st->name);
}
OceanError OceanCudaTransposeUpdate(OceanContext ctx, OceanCudaTransposeCache *cache, const OceanCSR *M, int64_t nnz, OceanCSR *T)
{
  return OceanSetError(OCEAN_ERR_NOT_AVAILABLE, "device transpose: the CUDA backend was not compiled in");
}
void OceanCudaTransposeDestroy(OceanContext ctx, OceanCudaTransposeCache *cache) { (void)ctx; *cache = NULL; }
OceanError OceanContextResetDeviceMemoryPeak(OceanContext ctx)
{
  OceanCheck(ctx, OCEAN_ERR_ARG, "OceanContextResetDeviceMemoryPeak: NULL context");
  return OCEAN_SUCCESS;
}
OceanError OceanContextTrimDeviceMemory(OceanContext ctx)
{
  OceanCheck(ctx, OCEAN_ERR_ARG, "OceanContextTrimDeviceMemory: NULL context");
  return OCEAN_SUCCESS;
}
OceanError OceanContextSetDeviceMirrorLimit(OceanContext ctx, int64_t bytes)
{
  OceanCheck(ctx, OCEAN_ERR_ARG, "OceanContextSetDeviceMirrorLimit: NULL context");
  OceanCheck(bytes >= 0, OCEAN_ERR_ARG, "OceanContextSetDeviceMirrorLimit: a limit of %lld bytes (0: the default)", (long long)bytes);
  return OCEAN_SUCCESS;
}
OceanError OceanContextGetDeviceMirrors(OceanContext ctx, int64_t *bytes, int64_t *limit)
{
  OceanCheck(ctx, OCEAN_ERR_ARG, "OceanContextGetDeviceMirrors: NULL context");
  if (bytes) *bytes = 0;
  if (limit) *limit = 0;
  return OCEAN_SUCCESS;
}
OceanError OceanContextGetDeviceMemory(OceanContext ctx, int64_t *in_use, int64_t *peak, int64_t *reserved, int64_t *cuda_mallocs)
{
  OceanCheck(ctx, OCEAN_ERR_ARG, "OceanContextGetDeviceMemory: NULL context");
  if (in_use) *in_use = 0;
  if (peak) *peak = 0;
  if (reserved) *reserved = 0;
  if (cuda_mallocs) *cuda_mallocs = 0;
  return OCEAN_SUCCESS;
}

#endif
