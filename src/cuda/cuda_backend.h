/*
  cuda_backend.h - the CUDA backend's host side (src/cuda, plain C: no CUDA header): its context (device, memory pool,
  operand mirrors, device sketches), a stage's device state, and the functions its files share.  The launchers it
  calls are the extern "C" contract of cuda/ocean_cuda.h.
*/
#ifndef OCEAN_CUDA_BACKEND_H
#define OCEAN_CUDA_BACKEND_H

#include "core/backend.h"
#include "ocean_cuda.h"

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
  OceanCudaDevice       dev;
  OceanSketchCacheEntry dcache[OCEAN_SKETCH_CACHE_SIZE]; /* the device sketches of B (core/sketch.h's routine) */
  OceanCudaMirror       mirrors[OCEAN_CUDA_MIRRORS];
  uint64_t              mirror_clock;
  uint64_t              mirror_call;   /* mirror_clock + 1 when the current stage call began */
  int64_t               mirror_limit;  /* set by OceanContextSetDeviceMirrorLimit; 0: the default */
  int64_t               device_memory; /* the device's total memory (bytes) */
} OceanCudaContext;

/* Scratch of one symbolic run on the device; freed when it ends. */
typedef struct {
  int64_t    *p, *counts, *offsets, *foffsets, *list, *list2;
  OceanRoute *routes, *sroutes;
  uint8_t    *flags, *cflags, *nflags, *sketches; /* overflow record; symbolic and fallback scratch */
  double     *estimate;
  int32_t    *bcols, *fcols; /* the slot and fallback buffers */
  double     *bvals, *fvals;
} OceanCudaScratch;

/* Device state of one stage: operands (k = 0: A, 1: B), shapes, C and the exact routes for numeric reuse. */
typedef struct {
  int64_t                nnz[2];         /* of the operands */
  OceanDevCSR            view[2];        /* the operands of the current call on the device */
  const OceanCudaMirror *mirror[2];      /* their mirrors, NULL where none */
  const double          *host_values[2]; /* their host values */
  int                    own_valid[2];   /* own_* hold operand k's uploaded structure */
  int64_t             *own_rowptr[2]; /* uploads of host operands without a structure id (those with one use mirrors) */
  int32_t             *own_colidx[2];
  double              *own_values[2];
  int64_t              c_nnz;
  int64_t             *c_rowptr;
  int32_t             *c_colidx;
  double              *c_values;
  OceanRowShape       *shapes;
  OceanRoute          *exact;
  OceanCudaKnownPlan   known;         /* C's rows grouped for numeric-only products (made by the first numeric call) */
  OceanCudaProductMap  map;           /* numeric-only calls sum through it when made (OceanCudaStageMapCreate) */
  int64_t              numeric_calls; /* numeric-only calls on this structure (the second decides on the map) */
  int                 *check;         /* set on the device by a numeric-only call whose products fall outside C */
  int                  check_pending; /* a numeric-only call was queued since the last OceanCudaStageComplete */
  OceanCudaRouteCounts exact_counts;  /* rows per bin and accumulator of the exact routes (numeric calls' statistics) */
  /* the symbolic call's statistics reduced on the device, read back deferred (the call ends without a wait); taken
     into the stage's statistics by the first wait for the stage after it (OceanCudaTakeStats) */
  unsigned long long   route_hist[OCEAN_CUDA_ROUTE_SETS * OCEAN_CUDA_HIST_SIZE];
  OceanCudaErrorSum    error_sums;
  int                  error_sums_queued;
  int                  stats_queued;    /* route_hist (and error_sums when queued) are on their way */
  int                  symbolic_queued; /* the symbolic call's timers and statistics are not taken yet */
  int64_t              waits_before;    /* OceanCudaWaits() when the call began */
  int64_t              row_chunks; /* > 0: C was made in row chunks and is on the host only (c_colidx, c_values NULL) */
  OceanCudaScratch     run;        /* the symbolic call's scratch (freed when it ends) */
  OceanCudaRowGroups   plan;       /* the rows' plan by their upper bounds, made with the analysis when planned */
  int                  planned;    /* (routes and offsets in run.routes, run.offsets) */
  OceanCudaRouteParams rp;         /* the symbolic call's routing parameters */
  int64_t              heavy_rows_possible; /* rows the analysis found may be heavy (OceanRowMayBeHeavy) */
  OceanHeavyCounts     heavy;               /* what its numeric passes' heavy rows did (rp.heavy points here) */
  double               heavy_times[4];
} OceanCudaStage;

static inline OceanCudaContext *OceanCudaCtx(OceanContext ctx)
{
  return (OceanCudaContext *)ctx->backend_data;
}
static inline OceanCudaDevice OceanCtxDev(OceanContext ctx)
{
  return OceanCudaCtx(ctx)->dev;
}

/* A phase's device time into *seconds: at once when a phase callback (PETSc's log events) brackets the phases on the
   host, so that they measure the phase; else read with the stage's other timers when it ends. */
static inline OceanError OceanStageTimerStop(OceanContext ctx, double *seconds)
{
  return OceanCudaTimerStop(OceanCtxDev(ctx), seconds, ctx->phase_callback != NULL);
}

#define OceanDevAlloc(ctx, n, p) OceanCudaAlloc(OceanCtxDev(ctx), (size_t)(n) * sizeof(**(p)), (void **)(p))
#define OceanDevFree(ctx, p) \
  do { \
    OceanCudaFree(OceanCtxDev(ctx), (void *)(p)); \
    (p) = NULL; \
  } while (0)

static inline OceanDevCSR OceanDevView(int64_t nrows, int64_t ncols, const int64_t *rp, const int32_t *ci,
                                       const double *v)
{
  OceanDevCSR m;
  m.nrows  = nrows;
  m.ncols  = ncols;
  m.rowptr = rp;
  m.colidx = ci;
  m.values = v;
  return m;
}

void             OceanCudaMirrorFree(OceanCudaDevice dev, OceanCudaMirror *m);
int64_t          OceanCudaMirrorBytes(int64_t nrows, int64_t nnz);
int64_t          OceanCudaMirrorsBytes(const OceanCudaContext *c, int64_t *in_use);
int              OceanCudaMirrorsFit(OceanCudaContext *c, int64_t bytes);
OceanCudaMirror *OceanCudaMirrorSlot(OceanCudaContext *c);
void             OceanCudaMirrorsCallBegin(OceanContext ctx);
OceanError       OceanCudaOperand(OceanContext ctx, OceanStage *st, OceanCudaStage *d, int k, const OceanCSR *M,
                                  int values_only, OceanDevCSR *view);
void             OceanCudaRouteParamsGet(const OceanStage *st, OceanCudaRouteParams *rp);
void             OceanCudaScratchFree(OceanContext ctx, OceanCudaScratch *s);
OceanError       OceanCudaAnalyze(OceanContext ctx, OceanStage *st, OceanCudaStage *d, const OceanCudaRouteParams *rp,
                                  OceanDevCSR A, OceanDevCSR B, OceanCudaScratch *s);
OceanError       OceanCudaGetSketches(OceanContext ctx, const OceanCSR *Bh, int64_t b_nnz, OceanDevCSR B, int registers,
                                      OceanCudaScratch *s, const uint8_t **sketches, int *reused);
OceanError       OceanCudaQueueRowStats(OceanContext ctx, OceanStage *st, OceanCudaStage *d, OceanCudaScratch *s);
OceanError OceanCudaOverAllocated(OceanContext ctx, OceanStage *st, OceanCudaStage *d, const OceanCudaRouteParams *rp,
                                  OceanDevCSR A, OceanDevCSR B, OceanCudaScratch *s, int *switched);
OceanError OceanCudaStageHostC(OceanContext ctx, OceanStage *st, const OceanCudaStage *d);
OceanError OceanCudaChunkedRows(OceanContext ctx, OceanStage *st, OceanCudaStage *d, const OceanCudaRouteParams *rp,
                                OceanDevCSR A, OceanDevCSR B, const OceanRoute *routes, int check, int64_t *counts,
                                uint8_t *flags);
OceanError OceanCudaExact(OceanContext ctx, OceanStage *st, OceanCudaStage *d, const OceanCudaRouteParams *rp,
                          OceanDevCSR A, OceanDevCSR B, OceanCudaScratch *s);
OceanError OceanCudaNarrow(OceanContext ctx, OceanStage *st, OceanCudaStage *d, OceanDevCSR A, OceanDevCSR B,
                           OceanCudaScratch *s);
OceanError OceanCudaStageMapCreate(OceanContext ctx, OceanStage *st, OceanCudaStage *d, OceanDevCSR A, OceanDevCSR B);

/* the table's entries (src/cuda/stage.c gathers them) */
OceanError OceanCudaProbe(int device);
OceanError OceanCudaContextSetup(OceanContext ctx, int device, const OceanDeviceProfile *profile);
void       OceanCudaContextTeardown(OceanContext ctx);
OceanError OceanCudaCheckDeviceCSR(OceanContext ctx, const OceanCSR *const M[2], const char *const name[2],
                                   int64_t nnz[2]);
OceanError OceanCudaStageGetDeviceOperand(OceanStage *st, int k, const OceanCSR *M, OceanCSR *view);
OceanError OceanCudaTransposeUpdate(OceanContext ctx, void **cache, const OceanCSR *M, int64_t nnz, OceanCSR *T);
void       OceanCudaTransposeDestroy(OceanContext ctx, void **cache);
OceanError OceanCudaMemoryGet(OceanContext ctx, int64_t *in_use, int64_t *peak, int64_t *reserved,
                              int64_t *cuda_mallocs);
OceanError OceanCudaMemoryResetPeak(OceanContext ctx);
OceanError OceanCudaMemoryTrim(OceanContext ctx);
OceanError OceanCudaMirrorLimitSet(OceanContext ctx, int64_t bytes);
OceanError OceanCudaMirrorsGet(OceanContext ctx, int64_t *bytes, int64_t *limit);
OceanError OceanCudaOffsetsWiden(OceanContext ctx, int64_t count, const int32_t *d_in, int64_t **buf, int64_t *cap);
OceanError OceanCudaOffsetsNarrow(OceanContext ctx, int64_t count, const int64_t *d_in, int32_t *d_out);
OceanError OceanCudaDeviceCopy(OceanContext ctx, void *d_dst, const void *d_src, size_t bytes);
OceanError OceanCudaDeviceDownload(OceanContext ctx, void *dst, const void *d_src, size_t bytes);
OceanError OceanCudaRowsCompress(OceanContext ctx, int64_t m, const int64_t *d_rowptr, int64_t kept, int32_t *d_rindex,
                                 int32_t *d_offsets);
void       OceanCudaDeviceRelease(OceanContext ctx, void *d_ptr);

#endif
