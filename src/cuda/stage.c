/*
  stage.c - the CUDA backend's table: the ladder's steps over the workflows of workflows.c, numeric-only reuse
  (known structure, product map), C brought to the host, and the device statistics' check.
*/
#include "cuda/cuda_backend.h"

#ifdef OCEAN_HAVE_CUDA

static void OceanCudaStageDestroy(OceanContext ctx, OceanStage *st)
{
  OceanCudaStage *d = (OceanCudaStage *)st->dev;

  if (!d) return;
  if (ctx->backend_data) {
    int k;
    /* queued numeric calls' timers point into the stage's statistics: read before it goes */
    (void)OceanCudaTimersRead(OceanCtxDev(ctx));
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
    OceanCudaRowGroupsFree(OceanCtxDev(ctx), &d->plan);
    OceanCudaKnownPlanDestroy(OceanCtxDev(ctx), &d->known);
    OceanCudaProductMapDestroy(OceanCtxDev(ctx), &d->map);
    OceanDevFree(ctx, d->check);
  }
  free(d);
  st->dev = NULL;
}

/* Every symbolic or numeric call on the stage begins so: traced, the operands' mirrors told, the device timers on when
   someone reads them. */
static void OceanCudaCallBegins(OceanContext ctx, OceanStage *st, const char *what)
{
  OceanCudaTraceMark(what);
  OceanCudaMirrorsCallBegin(ctx);
  OceanCudaTimersEnable(OceanCtxDev(ctx), st->set->options.device_timers || ctx->phase_callback);
}

static OceanError OceanCudaSymbolicBegin(OceanContext ctx, OceanStage *st, const OceanCSR *A, const OceanCSR *B)
{
  OceanCudaStage *d;

  (void)A;
  (void)B;
  OceanCheck(ctx->backend_data, OCEAN_ERR_NOT_AVAILABLE, "%s: the context has no CUDA device", st->name);
  OceanCudaCallBegins(ctx, st, "symbolic phase begins");
  OceanCudaStageDestroy(ctx, st);
  OceanCall(OceanCalloc(1, &d, "CUDA stage"));
  st->dev         = d;
  d->waits_before = OceanCudaWaits();
  OceanCudaRouteParamsGet(st, &d->rp);
  d->rp.heavy       = &d->heavy;
  d->rp.heavy_times = d->heavy_times;
  return OCEAN_SUCCESS;
}

/* The operands on the device (their uploads count into the analysis) and, but for NARROW (whose pass gives the shapes
   and totals), the analysis. */
static OceanError OceanCudaAnalyzeStep(OceanContext ctx, OceanStage *st, const OceanCSR *Ah, const OceanCSR *Bh)
{
  OceanCudaDevice   dev = OceanCtxDev(ctx);
  OceanCudaStage   *d   = (OceanCudaStage *)st->dev;
  OceanCudaScratch *s   = &d->run;
  OceanDevCSR       A, B;
  const int64_t     n = st->nrows;
  double            t0;

  t0 = OceanPhaseBegin(ctx, OCEAN_PHASE_ANALYSIS);
  OceanCall(OceanCudaTimerStart(dev));
  OceanCall(OceanCudaOperand(ctx, st, d, 0, Ah, 0, &A));
  OceanCall(OceanCudaOperand(ctx, st, d, 1, Bh, 0, &B));
  if (st->narrow) {
    OceanCall(OceanStageTimerStop(ctx, &st->stats.t_analysis)); /* the uploads, if any */
    (void)OceanPhaseEnd(ctx, OCEAN_PHASE_ANALYSIS, 0.0, t0);
    OceanFree(st->an.rows);
    st->an.nrows = n;
    OceanAnalysisSampleReset(&st->an);
    return OCEAN_SUCCESS;
  }
  /* per-row scratch */
  OceanCall(OceanDevAlloc(ctx, n, &s->p));
  OceanCall(OceanDevAlloc(ctx, n, &s->counts));
  OceanCall(OceanDevAlloc(ctx, n + 1, &s->offsets));
  OceanCall(OceanDevAlloc(ctx, n, &s->foffsets));
  OceanCall(OceanDevAlloc(ctx, n, &s->list));
  OceanCall(OceanDevAlloc(ctx, n + 1, &s->list2));
  OceanCall(OceanDevAlloc(ctx, n, &s->routes));
  OceanCall(OceanDevAlloc(ctx, n, &s->sroutes));
  OceanCall(OceanDevAlloc(ctx, n, &s->flags));
  OceanCall(OceanDevAlloc(ctx, n, &s->cflags));
  OceanCall(OceanDevAlloc(ctx, n, &s->nflags));
  OceanCall(OceanCudaAnalyze(ctx, st, d, &d->rp, A, B, s));
  OceanCall(OceanStageTimerStop(ctx, &st->stats.t_analysis)); /* kept by OceanStageStatsFromAnalysis */
  (void)OceanPhaseEnd(ctx, OCEAN_PHASE_ANALYSIS, 0.0, t0);
  return OCEAN_SUCCESS;
}

/* ESTIMATE routes by the sketches' estimate (into run.p); UPPER_BOUND by OceanPredictBound: the rows' bounds (the
   analysis's plan) or, with a bound factor decided, the predictions the over-allocated step makes (no kernel here). */
static OceanError OceanCudaPredictStep(OceanContext ctx, OceanStage *st, const OceanCSR *Ah, const OceanCSR *Bh)
{
  OceanCudaDevice   dev = OceanCtxDev(ctx);
  OceanCudaStage   *d   = (OceanCudaStage *)st->dev;
  OceanCudaScratch *s   = &d->run;
  const int64_t     n   = st->nrows;
  const uint8_t    *sk;
  int               reused = 0;
  double            t0;

  (void)Ah;
  if (st->dec.workflow != OCEAN_WORKFLOW_ESTIMATE) return OCEAN_SUCCESS;
  t0 = OceanPhaseBegin(ctx, OCEAN_PHASE_ESTIMATE);
  OceanCall(OceanCudaTimerStart(dev));
  OceanCall(OceanDevAlloc(ctx, n, &s->estimate));
  OceanCall(OceanCudaGetSketches(ctx, Bh, d->nnz[1], d->view[1], st->dec.registers, s, &sk, &reused));
  OceanCall(OceanCudaSketchEstimate(d->view[0], sk, st->dec.registers, s->estimate));
  OceanCall(OceanCudaPredictRows(OCEAN_CUDA_PREDICT_ESTIMATE, NULL, n, d->shapes, s->estimate, NULL,
                                 st->dec.coefficient, s->p));
  OceanCall(OceanStageTimerStop(ctx, &st->stats.t_estimate));
  (void)OceanPhaseEnd(ctx, OCEAN_PHASE_ESTIMATE, 0.0, t0);
  st->stats.sketches_reused      = reused;
  st->stats.hll_registers        = st->dec.registers;
  st->stats.estimate_coefficient = st->dec.coefficient;
  return OCEAN_SUCCESS;
}

static OceanError OceanCudaOverAllocatedStep(OceanContext ctx, OceanStage *st, const OceanCSR *A, const OceanCSR *B,
                                             int *switched)
{
  OceanCudaStage *d = (OceanCudaStage *)st->dev;

  (void)A;
  (void)B;
  return OceanCudaOverAllocated(ctx, st, d, &d->rp, d->view[0], d->view[1], &d->run, switched);
}

static OceanError OceanCudaNarrowStep(OceanContext ctx, OceanStage *st, const OceanCSR *A, const OceanCSR *B)
{
  OceanCudaStage *d = (OceanCudaStage *)st->dev;

  (void)A;
  (void)B;
  return OceanCudaNarrow(ctx, st, d, d->view[0], d->view[1], &d->run);
}

static OceanError OceanCudaExactStep(OceanContext ctx, OceanStage *st, const OceanCSR *A, const OceanCSR *B)
{
  OceanCudaStage *d = (OceanCudaStage *)st->dev;

  (void)A;
  (void)B;
  return OceanCudaExact(ctx, st, d, &d->rp, d->view[0], d->view[1], &d->run);
}

/*
  The debug check (record_rows: the per-row arrays are on the host): the statistics it reduced on the
  device against the host's sums of the downloaded rows.  Integer statistics must agree exactly; the estimate error
  (a tree sum on the device, a serial sum here) to 1e-12.
*/
static OceanError OceanCudaCheckStats(OceanStage *st)
{
  const OceanStageScratch *t = &st->tmp;
  const OceanStats        *s = &st->stats;
  OceanStats               h = *s;
  int64_t                  i, products = 0, nover = 0, slots = 0, nnz = 0;
  int                      b;

  OceanStageCountBins(st, t->routes, &h);
  for (b = 0; b < OCEAN_NUM_BINS; b++)
    OceanCheck(h.rows_per_bin[b] == s->rows_per_bin[b], OCEAN_ERR_STATE,
               "%s: device reduction: bin %s has %lld rows, the host counts %lld", st->name, OceanBinName((OceanBin)b),
               (long long)s->rows_per_bin[b], (long long)h.rows_per_bin[b]);
  OceanCheck(h.dense_rows == s->dense_rows && h.hash_rows == s->hash_rows && h.esc_rows == s->esc_rows &&
               h.global_rows == s->global_rows,
             OCEAN_ERR_STATE,
             "%s: device reduction: accumulator rows dense/hash/esc/global %lld/%lld/%lld/%lld, the host counts "
             "%lld/%lld/%lld/%lld",
             st->name, (long long)s->dense_rows, (long long)s->hash_rows, (long long)s->esc_rows,
             (long long)s->global_rows, (long long)h.dense_rows, (long long)h.hash_rows, (long long)h.esc_rows,
             (long long)h.global_rows);
  for (i = 0; i < st->nrows; i++) {
    products += st->an.rows[i].products;
    nnz += t->counts[i];
    if (t->flags) nover += t->flags[i];
    slots += t->routes[i].slot;
  }
  OceanCheck(products == s->products, OCEAN_ERR_STATE, "%s: device reduction: %lld products, the host sums %lld",
             st->name, (long long)s->products, (long long)products);
  OceanCheck(nnz == s->nnz_c, OCEAN_ERR_STATE, "%s: device reduction: nnz(C) %lld, the host sums %lld", st->name,
             (long long)s->nnz_c, (long long)nnz);
  OceanCheck(!t->flags || nover == s->overflow_rows, OCEAN_ERR_STATE,
             "%s: device reduction: %lld overflow rows, the host counts %lld", st->name, (long long)s->overflow_rows,
             (long long)nover);
  OceanCheck(s->workflow == OCEAN_WORKFLOW_EXACT || slots == s->allocated_entries, OCEAN_ERR_STATE,
             "%s: device reduction: %lld allocated entries, the host sums %lld", st->name,
             (long long)s->allocated_entries, (long long)slots);
  if (s->workflow == OCEAN_WORKFLOW_ESTIMATE) {
    double e = OceanStageEstimateError(st);
    OceanCheck(fabs(e - s->estimate_mean_rel_error) <= 1e-12 * fmax(1.0, fabs(e)), OCEAN_ERR_STATE,
               "%s: device reduction: estimate error %.17g, the host's %.17g", st->name, s->estimate_mean_rel_error, e);
  }
  return OCEAN_SUCCESS;
}

/* The symbolic call's phase times and the statistics OceanCudaQueueRowStats queued (route counts, estimate error),
   after a wait for them; before a numeric call on the stage changes its statistics. */
static OceanError OceanCudaTakeStats(OceanContext ctx, OceanStage *st)
{
  OceanCudaStage      *d = (OceanCudaStage *)st->dev;
  OceanStats          *S = &st->stats;
  OceanCudaRouteCounts rcs[OCEAN_CUDA_ROUTE_SETS];
  int                  b;

  if (!d || !d->symbolic_queued) return OCEAN_SUCCESS;
  OceanCall(OceanCudaTimersRead(OceanCtxDev(ctx)));
  d->symbolic_queued = 0;
  if (!d->stats_queued) return OCEAN_SUCCESS;
  d->stats_queued = 0;
  OceanCudaRouteCountsFrom(d->route_hist, OCEAN_CUDA_ROUTE_SETS, rcs);
  d->exact_counts = rcs[1];
  for (b = 0; b < OCEAN_NUM_BINS; b++) S->rows_per_bin[b] = rcs[0].bins[b];
  S->dense_rows         = rcs[0].acc[OCEAN_ACC_DENSE];
  S->hash_rows          = rcs[0].acc[OCEAN_ACC_HASH];
  S->esc_rows           = rcs[0].acc[OCEAN_ACC_ESC];
  S->global_rows        = rcs[0].acc[OCEAN_ACC_GLOBAL_HASH] + rcs[0].acc[OCEAN_ACC_GLOBAL_DENSE];
  S->t_heavy_expand     = d->heavy_times[0];
  S->t_heavy_histogram  = d->heavy_times[1];
  S->t_heavy_split      = d->heavy_times[2];
  S->t_heavy_accumulate = d->heavy_times[3];
  if (d->error_sums_queued)
    S->estimate_mean_rel_error = d->error_sums.rows ? d->error_sums.sum / (double)d->error_sums.rows : 0.0;
  d->error_sums_queued = 0;
  return OCEAN_SUCCESS;
}

/* The exact routes for numeric-only reuse (the exact workflow's numeric routes already are) and the statistics over
   rows, reduced on the device; with record_rows the per-row arrays come to the host and the reductions are checked
   against their host sums.  The NARROW pass did all of it itself. */
static OceanError OceanCudaFinish(OceanContext ctx, OceanStage *st)
{
  OceanCudaStage    *d = (OceanCudaStage *)st->dev;
  OceanCudaScratch  *s = &d->run;
  OceanStageScratch *t = &st->tmp;
  const int64_t      n = st->nrows;

  OceanStageSetHeavyCounts(st, &d->heavy); /* none with NARROW, which has its own pass */
  if (st->dec.workflow == OCEAN_WORKFLOW_NARROW) return OCEAN_SUCCESS;
  /* the over-allocating workflows queued them before the wait for C's size */
  if (!d->stats_queued) OceanCall(OceanCudaQueueRowStats(ctx, st, d, s));
  st->host_structure = st->host_values = d->row_chunks > 0; /* row chunks: C is on the host, and only there */
  if (!st->set->options.record_rows) return OCEAN_SUCCESS;
  d->symbolic_queued = 1;
  OceanCall(OceanCudaTakeStats(ctx, st)); /* the check below compares them */

  /* record_rows: to the host, the per-row arrays the row records are made of (C stays on the device) */
  OceanCall(OceanMalloc(n, &t->routes, "routes"));
  OceanCall(OceanMalloc(n, &t->counts, "row counts"));
  OceanCall(OceanMalloc(n, &st->exact, "exact routes"));
  OceanCall(OceanCudaDownload(t->routes, s->routes, (size_t)n * sizeof(OceanRoute)));
  OceanCall(OceanCudaDownload(t->counts, s->counts, (size_t)n * sizeof(int64_t)));
  OceanCall(OceanCudaDownload(st->exact, d->exact, (size_t)n * sizeof(OceanRoute)));
  OceanCall(OceanMalloc(n, &t->predicted, "predicted sizes"));
  if (st->dec.workflow == OCEAN_WORKFLOW_EXACT) {
    memcpy(t->predicted, t->counts, (size_t)n * sizeof(int64_t)); /* as on the CPU: predicted holds the exact counts */
  } else {
    OceanCall(OceanMalloc(n, &t->flags, "overflow flags"));
    OceanCall(OceanCudaDownload(t->flags, s->flags, (size_t)n));
    /* the predictions as on the device (s->p was reused as scratch by the fallback), by the same shared functions */
    if (st->dec.workflow == OCEAN_WORKFLOW_ESTIMATE) {
      int64_t i;
      OceanCall(OceanMalloc(n, &t->estimate, "estimates"));
      OceanCall(OceanCudaDownload(t->estimate, s->estimate, (size_t)n * sizeof(double)));
      for (i = 0; i < n; i++)
        t->predicted[i] = OceanPredictFromEstimate(t->estimate[i], st->dec.coefficient, &st->an.rows[i]);
    } else {
      int64_t i;
      for (i = 0; i < n; i++)
        t->predicted[i] = OceanPredictBound(st->set->bins, st->set->warp_size, st->set->options.hash_load,
                                            &st->an.rows[i], st->dec.bound_factor);
    }
  }
  return OceanCudaCheckStats(st);
}

/* The call ends with its work queued: the phase times and statistics are taken by the first wait for the stage
   (OceanCudaStageComplete: C on the host, the statistics asked for) and the scratch goes back to the pool, which hands
   it out again in stream order. */
static void OceanCudaSymbolicEnd(OceanContext ctx, OceanStage *st, OceanError *err)
{
  OceanCudaStage *d = (OceanCudaStage *)st->dev;

  if (d) {
    OceanCudaScratchFree(ctx, &d->run);
    OceanCudaRowGroupsFree(OceanCtxDev(ctx), &d->plan);
    d->planned           = 0;
    d->symbolic_queued   = 1;
    st->stats.host_waits = OceanCudaWaits() - d->waits_before;
  }
  if (*err) OceanCudaStageDestroy(ctx, st);
  OceanCudaTraceMark("symbolic phase ends");
}

/* The product map of the stage's known structure, made by its second numeric call when the options allow its bytes
   and the operands' entries have 32-bit indices.  A pool that cannot hold it is no error: the calls search C's rows. */
OceanError OceanCudaStageMapCreate(OceanContext ctx, OceanStage *st, OceanCudaStage *d, OceanDevCSR A, OceanDevCSR B)
{
  const OceanCudaContext *c = (const OceanCudaContext *)ctx->backend_data;
  const int64_t           limit =
    st->set->options.reuse_map_max_bytes < 0 ? c->device_memory / 4 : st->set->options.reuse_map_max_bytes;
  OceanError err;

  if (limit == 0 || d->nnz[0] > INT32_MAX || d->nnz[1] > INT32_MAX) return OCEAN_SUCCESS;
  err = OceanCudaProductMapCreate(OceanCtxDev(ctx), &d->known, A, B, d->shapes, d->c_nnz, d->c_rowptr, d->c_colidx,
                                  st->an.products, limit, &d->map);
  return err == OCEAN_ERR_MEMORY ? OCEAN_SUCCESS : err;
}

static OceanError OceanCudaOutsideC(const OceanStage *st)
{
  return OceanSetError(OCEAN_ERR_STATE,
                       "%s: C does not have the structure of the symbolic phase although the operands' structure ids "
                       "match (a product falls outside it)",
                       st->name);
}

/* Values only: new values (uploaded, or the caller's device arrays) added into C's known structure (no routes, no
   sort).  C's host copy is then stale until asked for.  But for C in row chunks (host C, its own waits) the work is
   queued and nothing waits: a product outside C's structure (the operands' structure changed under the same ids)
   sets d->check, which OceanCudaStageComplete reads. */
static OceanError OceanCudaStageNumeric_Private(OceanContext ctx, OceanStage *st, const OceanCSR *Ah,
                                                const OceanCSR *Bh)
{
  OceanCudaDevice dev = OceanCtxDev(ctx);
  OceanCudaStage *d   = (OceanCudaStage *)st->dev;
  OceanDevCSR     A, B;
  OceanError      err;

  OceanCheck(d && d->c_rowptr, OCEAN_ERR_STATE, "%s: numeric without a device symbolic phase", st->name);
  OceanCall(OceanCudaTakeStats(ctx, st)); /* the symbolic call's exact route counts, unless a wait took them */
  OceanCall(OceanCudaTimerStart(dev));
  st->host_values = 0;
  OceanCall(OceanCudaOperand(ctx, st, d, 0, Ah, 1, &A));
  OceanCall(OceanCudaOperand(ctx, st, d, 1, Bh, 1, &B));
  st->stats.row_chunks = 0;
  if (!d->check) {
    const int zero = 0;
    OceanCall(OceanDevAlloc(ctx, 1, &d->check));
    OceanCall(OceanCudaUpload(d->check, &zero, sizeof(zero)));
  }
  if (d->row_chunks) {
    /* C on the host only: the chunks again, by the exact routes */
    OceanCudaRouteParams rp;
    int64_t             *counts = NULL;
    uint8_t             *flags  = NULL;
    OceanCudaRouteParamsGet(st, &rp);
    err = OceanDevAlloc(ctx, st->nrows, &counts);
    if (!err) err = OceanDevAlloc(ctx, st->nrows, &flags);
    if (!err) err = OceanCudaChunkedRows(ctx, st, d, &rp, A, B, d->exact, 1, counts, flags);
    OceanDevFree(ctx, counts);
    OceanDevFree(ctx, flags);
  } else if (st->dec.workflow == OCEAN_WORKFLOW_NARROW)
    err =
      OceanCudaNarrowKnown(dev, ctx->profile.num_sms, A, d->nnz[0], B, d->c_rowptr, d->c_colidx, d->c_values, d->check);
  else {
    /* the grouping of C's rows is the same for every numeric call: made once, kept */
    if (!d->known.rows && st->nrows)
      OceanCall(
        OceanCudaKnownPlanCreate(dev, ctx->profile.smem_per_block, st->nrows, d->c_rowptr, d->shapes, &d->known));
    /* the map costs several calls' worth to make (H200, teko_nsjac: a first call 0.54 ms through a new map, 0.29 ms
       searching C's rows; 0.08 and 0.17 ms a call after): made by the second call, so that a single re-setup (GAMG
       reusing its interpolation) does not pay for it */
    err = d->numeric_calls == 1 ? OceanCudaStageMapCreate(ctx, st, d, A, B) : OCEAN_SUCCESS;
    d->numeric_calls++;
    if (!err)
      err = d->map.bytes
            ? OceanCudaNumericMap(dev, &d->known, &d->map, A, B, d->shapes, d->c_rowptr, d->c_values, d->check)
            : OceanCudaNumericKnown(dev, &d->known, A, B, d->shapes, d->c_rowptr, d->c_colidx, d->c_values, d->check);
  }
  st->stats.reuse_map_bytes        = d->map.bytes;
  st->stats.reuse_map_side_by_side = d->map.bytes && d->map.side_by_side;
  if (err == OCEAN_ERR_STATE) return OceanCudaOutsideC(st); /* found while making the map */
  OceanCall(err);
  d->check_pending = 1;
  return OceanStageTimerStop(ctx, &st->stats.t_numeric);
}

/* Waits for the stage's queued work: its timers read, and what a numeric-only call found on the device reported.  The
   check word is never cleared and stays pending once set, so every later wait reports it again until a symbolic
   phase makes the stage anew (a caller that set the first report aside still gets it from OceanProductGetC). */
static OceanError OceanCudaStageComplete(OceanContext ctx, OceanStage *st)
{
  OceanCudaStage *d       = (OceanCudaStage *)st->dev;
  int             outside = 0;

  OceanCall(OceanCudaTimersRead(OceanCtxDev(ctx)));
  OceanCall(OceanCudaTakeStats(ctx, st));
  if (!d || !d->check_pending) return OCEAN_SUCCESS;
  OceanCall(OceanCudaReadback(OceanCtxDev(ctx), &outside, d->check, sizeof(outside)));
  if (outside) return OceanCudaOutsideC(st);
  d->check_pending = 0;
  return OCEAN_SUCCESS;
}

static OceanError OceanCudaStageNumeric(OceanContext ctx, OceanStage *st, const OceanCSR *Ah, const OceanCSR *Bh)
{
  const int64_t waits_before = OceanCudaWaits();
  OceanError    err;

  OceanCudaCallBegins(ctx, st, "numeric phase begins");
  err = OceanCudaStageNumeric_Private(ctx, st, Ah, Bh);
  /* C in row chunks waited for its chunks; a failed call reports now */
  if (err || ((OceanCudaStage *)st->dev)->row_chunks) {
    const OceanError cerr = OceanCudaStageComplete(ctx, st);
    if (!err) err = cerr;
  }
  st->stats.host_waits = OceanCudaWaits() - waits_before;
  OceanCudaTraceMark("numeric phase ends");
  return err;
}

static OceanError OceanCudaStageDownloadC_Private(OceanContext ctx, OceanStage *st, OceanCudaStage *d, int values)
{
  if (!st->host_structure) {
    OceanCall(OceanCudaStageHostC(ctx, st, d));
    OceanCall(OceanCudaDownloadStaged(OceanCtxDev(ctx), st->colidx, d->c_colidx, (size_t)st->nnz * sizeof(int32_t)));
    st->host_structure = 1;
    st->stats.downloaded_bytes +=
      (st->nrows ? (st->nrows + 1) * (int64_t)sizeof(int64_t) : 0) + st->nnz * (int64_t)sizeof(int32_t);
  }
  if (values && !st->host_values) {
    OceanCall(OceanCudaDownloadStaged(OceanCtxDev(ctx), st->values, d->c_values, (size_t)st->nnz * sizeof(double)));
    st->host_values = 1;
    st->stats.downloaded_bytes += st->nnz * (int64_t)sizeof(double);
  }
  return OCEAN_SUCCESS;
}

static OceanError OceanCudaStageDownloadC(OceanContext ctx, OceanStage *st, int values)
{
  OceanCudaStage *d = (OceanCudaStage *)st->dev;
  OceanError      err;
  double          t0;

  OceanCheck(d && d->c_rowptr, OCEAN_ERR_STATE, "%s: no C on the device", st->name);
  OceanCheck(
    !d->row_chunks || (st->host_structure && st->host_values), OCEAN_ERR_STATE,
    "%s: C is made in chunks of rows on the host, and the last numeric call failed: its values are not current",
    st->name);
  t0  = OceanPhaseBegin(ctx, OCEAN_PHASE_DOWNLOAD);
  err = OceanCudaStageDownloadC_Private(ctx, st, d, values);
  st->stats.t_download += OceanPhaseEnd(ctx, OCEAN_PHASE_DOWNLOAD, 0.0, t0);
  return err;
}

static void OceanCudaStageExactCounts(const OceanStage *st, OceanStats *s)
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

static OceanError OceanCudaStageGetDeviceC(OceanStage *st, const int64_t **d_rowptr, const int32_t **d_colidx,
                                           const double **d_values)
{
  OceanCudaStage *d = (OceanCudaStage *)st->dev;

  OceanCheck(d && d->c_rowptr, OCEAN_ERR_STATE, "%s: no C on the device", st->name);
  OceanCheck(!d->row_chunks, OCEAN_ERR_STATE,
             "%s: C (%lld x %lld, %lld nonzeros) did not fit the device memory; it was made in %lld chunks of rows and "
             "is on the host only",
             st->name, (long long)st->nrows, (long long)st->ncols, (long long)st->nnz, (long long)d->row_chunks);
  *d_rowptr = d->c_rowptr;
  *d_colidx = d->c_colidx;
  *d_values = d->c_values;
  return OCEAN_SUCCESS;
}

const OceanBackendOps OceanCudaBackendOps = {
  .name              = "cuda",
  .probe             = OceanCudaProbe,
  .context_setup     = OceanCudaContextSetup,
  .context_teardown  = OceanCudaContextTeardown,
  .symbolic_begin    = OceanCudaSymbolicBegin,
  .analyze           = OceanCudaAnalyzeStep,
  .predict           = OceanCudaPredictStep,
  .over_allocated    = OceanCudaOverAllocatedStep,
  .narrow            = OceanCudaNarrowStep,
  .exact             = OceanCudaExactStep,
  .finish            = OceanCudaFinish,
  .symbolic_end      = OceanCudaSymbolicEnd,
  .numeric           = OceanCudaStageNumeric,
  .complete          = OceanCudaStageComplete,
  .exact_counts      = OceanCudaStageExactCounts,
  .stage_destroy     = OceanCudaStageDestroy,
  .host_c            = OceanCudaStageDownloadC,
  .device_c          = OceanCudaStageGetDeviceC,
  .device_operand    = OceanCudaStageGetDeviceOperand,
  .check_device_csr  = OceanCudaCheckDeviceCSR,
  .transpose_update  = OceanCudaTransposeUpdate,
  .transpose_destroy = OceanCudaTransposeDestroy,
  .memory_get        = OceanCudaMemoryGet,
  .memory_reset_peak = OceanCudaMemoryResetPeak,
  .memory_trim       = OceanCudaMemoryTrim,
  .mirror_limit_set  = OceanCudaMirrorLimitSet,
  .mirrors_get       = OceanCudaMirrorsGet,
  .offsets_widen     = OceanCudaOffsetsWiden,
  .offsets_narrow    = OceanCudaOffsetsNarrow,
  .rows_compress     = OceanCudaRowsCompress,
  .device_copy       = OceanCudaDeviceCopy,
  .download          = OceanCudaDeviceDownload,
  .device_release    = OceanCudaDeviceRelease,
};

#endif
