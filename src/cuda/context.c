/*
  context.c - the CUDA backend's context: the device and its memory pool, the operand mirrors kept across plans
  (least recently used first out, never one in use), and the device-memory queries of the public API.
*/
#include "cuda/cuda_backend.h"

#ifdef OCEAN_HAVE_CUDA

static int OceanCudaMirrorsReclaim(void *ctx_cuda);

OceanError OceanCudaContextSetup(OceanContext ctx, int device, const OceanDeviceProfile *profile)
{
  OceanCudaContext *c;
  OceanError        err;

  OceanCall(OceanCalloc(1, &c, "CUDA context"));
  ctx->device = device;
  err         = OceanCudaDeviceCreate(device, &c->dev);
  if (!err && !profile) err = OceanCudaDeviceProfile(device, &ctx->profile);
  if (!err) err = OceanCudaDeviceMemory(c->dev, NULL, &c->device_memory); /* the mirrors' default limit */
  if (err) {
    OceanCudaDeviceDestroy(&c->dev);
    free(c);
    return err == OCEAN_ERR_DEVICE
           ? OceanSetError(err, "OceanContextCreate: CUDA device %d: %s", device, OceanGetLastErrorMessage())
           : err;
  }
  OceanCudaPoolSetReclaim(c->dev, OceanCudaMirrorsReclaim, c);
  ctx->backend_data = c;
  return OCEAN_SUCCESS;
}

void OceanCudaMirrorFree(OceanCudaDevice dev, OceanCudaMirror *m)
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

int64_t OceanCudaMirrorBytes(int64_t nrows, int64_t nnz)
{
  return (nrows + 1) * (int64_t)sizeof(int64_t) + nnz * (int64_t)(sizeof(int32_t) + sizeof(double));
}

static int64_t OceanCudaMirrorLimit(const OceanCudaContext *c)
{
  return c->mirror_limit ? c->mirror_limit : c->device_memory / 4;
}

/* The bytes of the mirrors; *in_use (optional): of those the current call uses. */
int64_t OceanCudaMirrorsBytes(const OceanCudaContext *c, int64_t *in_use)
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
int OceanCudaMirrorsFit(OceanCudaContext *c, int64_t bytes)
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
OceanCudaMirror *OceanCudaMirrorSlot(OceanCudaContext *c)
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
void OceanCudaMirrorsCallBegin(OceanContext ctx)
{
  OceanCudaContext *c = (OceanCudaContext *)ctx->backend_data;
  c->mirror_call      = c->mirror_clock + 1;
}

void OceanCudaContextTeardown(OceanContext ctx)
{
  OceanCudaContext *c = (OceanCudaContext *)ctx->backend_data;
  int               i;

  if (!c) return;
  OceanCudaMirrorsFree(c);
  for (i = 0; i < OCEAN_SKETCH_CACHE_SIZE; i++) OceanCudaFree(c->dev, OceanCudaCtx(ctx)->dcache[i].sketches);
  OceanCudaDeviceDestroy(&c->dev);
  free(c);
  ctx->backend_data = NULL;
}

OceanError OceanCudaMemoryGet(OceanContext ctx, int64_t *in_use, int64_t *peak, int64_t *reserved,
                              int64_t *cuda_mallocs)
{
  OceanCudaPoolStats(OceanCtxDev(ctx), in_use, peak, reserved, cuda_mallocs);
  return OCEAN_SUCCESS;
}

OceanError OceanCudaMemoryResetPeak(OceanContext ctx)
{
  OceanCudaPoolResetPeak(OceanCtxDev(ctx));
  return OCEAN_SUCCESS;
}

OceanError OceanCudaMemoryTrim(OceanContext ctx)
{
  int i;

  OceanCudaMirrorsFree(OceanCudaCtx(ctx)); /* mirrors and sketches are only caches: rebuilt on demand */
  for (i = 0; i < OCEAN_SKETCH_CACHE_SIZE; i++) {
    OceanCudaFree(OceanCtxDev(ctx), OceanCudaCtx(ctx)->dcache[i].sketches);
    memset(&OceanCudaCtx(ctx)->dcache[i], 0, sizeof(OceanCudaCtx(ctx)->dcache[i]));
  }
  OceanCudaPoolTrim(OceanCtxDev(ctx));
  return OCEAN_SUCCESS;
}

OceanError OceanCudaMirrorLimitSet(OceanContext ctx, int64_t bytes)
{
  OceanCudaContext *c = OceanCudaCtx(ctx);

  c->mirror_limit = bytes;
  c->mirror_call  = c->mirror_clock + 1; /* between products no mirror is in use: all may go */
  (void)OceanCudaMirrorsFit(c, 0);
  return OCEAN_SUCCESS;
}

OceanError OceanCudaMirrorsGet(OceanContext ctx, int64_t *bytes, int64_t *limit)
{
  const OceanCudaContext *c = OceanCudaCtx(ctx);

  if (bytes) *bytes = OceanCudaMirrorsBytes(c, NULL);
  if (limit) *limit = OceanCudaMirrorLimit(c);
  return OCEAN_SUCCESS;
}

OceanError OceanCudaOffsetsWiden(OceanContext ctx, int64_t count, const int32_t *d_in, int64_t **buf, int64_t *cap)
{
  if (count > *cap) {
    OceanDevFree(ctx, *buf);
    *cap = 0;
    OceanCall(OceanDevAlloc(ctx, count, buf));
    *cap = count;
  }
  return OceanCudaWidenOffsets(count, d_in, *buf);
}

OceanError OceanCudaOffsetsNarrow(OceanContext ctx, int64_t count, const int64_t *d_in, int32_t *d_out)
{
  (void)ctx;
  return OceanCudaNarrowOffsets(count, d_in, d_out);
}

OceanError OceanCudaRowsCompress(OceanContext ctx, int64_t m, const int64_t *d_rowptr, int64_t kept, int32_t *d_rindex,
                                 int32_t *d_offsets)
{
  return OceanCudaCompressRows(OceanCtxDev(ctx), m, d_rowptr, kept, d_rindex, d_offsets);
}

OceanError OceanCudaDeviceDownload(OceanContext ctx, void *dst, const void *d_src, size_t bytes)
{
  return OceanCudaDownloadStaged(OceanCtxDev(ctx), dst, d_src, bytes);
}

OceanError OceanCudaDeviceCopy(OceanContext ctx, void *d_dst, const void *d_src, size_t bytes)
{
  (void)ctx;
  return OceanCudaCopyOnDevice(d_dst, d_src, bytes);
}

void OceanCudaDeviceRelease(OceanContext ctx, void *d_ptr)
{
  OceanCudaFree(OceanCtxDev(ctx), d_ptr);
}

/* A CUDA context needs the backend compiled in and the device to exist. */
OceanError OceanCudaProbe(int device)
{
  int ndev = 0;

  (void)OceanCudaDeviceCount(&ndev);
  OceanCheck(ndev > 0, OCEAN_ERR_NOT_AVAILABLE,
             "OceanContextCreate: no CUDA device (CUDA backend %s, %d device(s) visible); use OCEAN_BACKEND_CPU",
             "compiled", ndev);
  OceanCheck(device < ndev, OCEAN_ERR_ARG, "OceanContextCreate: CUDA device %d requested, %d visible (0 to %d)", device,
             ndev, ndev - 1);
  return OCEAN_SUCCESS;
}

#endif
