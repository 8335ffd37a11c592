/*
  workflows.c - the CUDA backend's workflows on the device: the analysis and its CR sample, the sketches, the
  over-allocating workflows with their fallback and compaction, the exact workflow (in row chunks when C does not
  fit), and the NARROW pass.
*/
#include "cuda/cuda_backend.h"

#ifdef OCEAN_HAVE_CUDA

void OceanCudaRouteParamsGet(const OceanStage *st, OceanCudaRouteParams *rp)
{
  memcpy(rp->bins, st->set->bins, sizeof(rp->bins));
  rp->warp         = st->set->warp_size;
  rp->load         = st->set->options.hash_load;
  rp->smem_optin   = st->set->smem_per_block;
  rp->bound_factor = st->set->options.bound_factor;
  rp->heavy        = NULL;
  rp->heavy_times  = NULL;
  memset(&rp->cells, 0, sizeof(rp->cells));
}

void OceanCudaScratchFree(OceanContext ctx, OceanCudaScratch *s)
{
  OceanDevFree(ctx, s->p);
  OceanDevFree(ctx, s->counts);
  OceanDevFree(ctx, s->offsets);
  OceanDevFree(ctx, s->foffsets);
  OceanDevFree(ctx, s->list);
  OceanDevFree(ctx, s->list2);
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
static OceanError OceanCudaCountRows(OceanContext ctx, const OceanCudaRouteParams *rp, OceanDevCSR A, OceanDevCSR B,
                                     OceanCudaScratch *s, const OceanRowShape *d_shapes, const int64_t *d_list,
                                     int64_t n, int64_t *retried)
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
    if ((err = OceanCudaRunRows(dev, rp, A, B, d_shapes, s->sroutes, list, n, 0, NULL, NULL, NULL, s->counts, s->cflags,
                                NULL)))
      break;
    if ((err = OceanCudaSelectFlagged(dev, list, n, s->cflags, next, &nnext))) break;
    if (round == 0) *retried = nnext;
    if (nnext &&
        (err = OceanCudaPredictRows(OCEAN_CUDA_PREDICT_RETRY, next, nnext, d_shapes, NULL, s->sroutes, 0.0, s->p)))
      break;
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
static OceanError OceanCudaCheckSample(OceanContext ctx, OceanStage *st, const int64_t *d_sample, const int64_t *h_q,
                                       int64_t ns)
{
  OceanAnalysis *an     = &st->an;
  OceanAnalysis  copy   = *an; /* SampleSelect resets the CR fields */
  int64_t       *sample = NULL, *rows = NULL, hns = 0, j;
  OceanError     err;

  OceanCall(OceanAnalysisSampleSelect(&st->set->options, &copy, &sample, &hns));
  err = hns == ns ? OCEAN_SUCCESS
                  : OceanSetError(OCEAN_ERR_STATE, "%s: device sample of %lld rows, the host's has %lld", st->name,
                                  (long long)ns, (long long)hns);
  if (!err && ns) err = OceanMalloc(ns, &rows, "sampled rows");
  if (!err && ns) err = OceanCudaReadback(OceanCtxDev(ctx), rows, d_sample, (size_t)ns * sizeof(int64_t));
  for (j = 0; !err && j < ns; j++)
    if (rows[j] != sample[j] || h_q[j] != sample[2 * ns + j])
      err = OceanSetError(
        OCEAN_ERR_STATE,
        "%s: sampled row %lld is row %lld with %lld products on the device, row %lld with %lld on the host", st->name,
        (long long)j, (long long)rows[j], (long long)h_q[j], (long long)sample[j], (long long)sample[2 * ns + j]);
  OceanFree(rows);
  OceanFree(sample);
  return err;
}

/* Whether the analysis also plans the rows by their upper bounds (routes, slots, rows grouped by bin), read back in its
   one wait: when the upper bound is forced or likely.  The guess of the products, nnz(A) x nnz(B) / rows(B), is
   exact for B's rows of equal length; a wrong guess costs the plan's launches, a missed one the wait it would save. */
static int OceanCudaPlanWithAnalysis(const OceanStage *st, const OceanCudaStage *d, OceanDevCSR A, OceanDevCSR B)
{
  const OceanOptions *o = &st->set->options;
  double              guess;

  if (A.nrows == 0 || o->workflow == OCEAN_WORKFLOW_UPPER_BOUND) return 1;
  if (o->workflow != OCEAN_WORKFLOW_AUTO) return 0;
  guess = (double)d->nnz[0] * (double)d->nnz[1] / (double)(B.nrows > 0 ? B.nrows : 1);
  return guess <= (double)o->small_bound || guess < o->ub_products_per_row * (double)A.nrows;
}

/*
  The analysis on the device: shapes (kept in d->shapes; copied to st->an.rows only with record_rows), the totals of
  products, bounds and rows with products and, when OceanCudaPlanWithAnalysis says so, the upper bound's plan
  (d->plan, taken by OceanCudaOverAllocated): one readback for both.  Then, when the selection needs a sample, the rows
  with products listed (CUB select), the sample (OceanSampleIndex over them), its exact counts (a shared hash table a
  row, OceanCudaSampleCounts), and to the host only the sample's ns (products, nnz) pairs: one more wait.  When a
  sampled row is too large for that kernel's table, the sample is counted again by its routes (symbolic accumulators,
  p = ub): three more waits, for such samples only.
*/
OceanError OceanCudaAnalyze(OceanContext ctx, OceanStage *st, OceanCudaStage *d, const OceanCudaRouteParams *rp,
                            OceanDevCSR A, OceanDevCSR B, OceanCudaScratch *s)
{
  OceanCudaDevice dev    = OceanCtxDev(ctx);
  OceanAnalysis  *an     = &st->an;
  const int       record = st->set->options.record_rows;
  int64_t         ns = 0, nq = 0, large = 0, j, retried, *h = NULL;
  int64_t        *d_sample = NULL, *d_vals = NULL;
  OceanError      err;

  OceanFree(an->rows);
  an->nrows = A.nrows;
  OceanAnalysisSampleReset(an);
  OceanCall(OceanDevAlloc(ctx, A.nrows, &d->shapes));
  {
    /* words[0..OCEAN_CUDA_TOTALS): the totals; then the plan's rows per bin and slots */
    const int           plan    = OceanCudaPlanWithAnalysis(st, d, A, B);
    const int           T       = OCEAN_CUDA_TOTALS;
    unsigned long long *d_words = NULL, words[OCEAN_CUDA_TOTALS + OCEAN_NUM_BINS + 1];

    OceanCall(OceanDevAlloc(ctx, T + OCEAN_NUM_BINS + 1, &d_words));
    /* s->cflags: the rows with products (the symbolic counts below reuse it as their overflow flags) */
    err =
      OceanCudaAnalyzeRows(dev, A, d->nnz[0], B, d->nnz[1], d->shapes, s->cflags, d_words, rp, plan ? s->routes : NULL);
    if (!err && plan)
      err = OceanCudaPlanRowsQueued(dev, rp, OCEAN_PASS_NUMERIC, NULL, d->shapes, A.nrows, A.nrows > 0, s->routes,
                                    s->offsets, d_words + T, &d->plan);
    if (!err)
      err = OceanCudaReadback(dev, words, d_words, (size_t)(plan ? T + OCEAN_NUM_BINS + 1 : T) * sizeof(words[0]));
    OceanDevFree(ctx, d_words);
    if (err) {
      OceanCudaRowGroupsFree(dev, &d->plan);
      return err;
    }
    an->products           = (int64_t)words[0];
    an->bound_total        = (int64_t)words[1];
    nq                     = (int64_t)words[2];
    an->likely_total       = (int64_t)words[3];
    d->heavy_rows_possible = (int64_t)words[4];
    if (plan) OceanCudaRowGroupsTake(&d->plan, words + T, NULL);
    d->planned = plan;
  }
  OceanAnalysisFinishRows(an, d->nnz[0]);
  if (record) {
    OceanCall(OceanMalloc(A.nrows, &an->rows, "analysis: rows"));
    OceanCall(OceanCudaDownload(an->rows, d->shapes, (size_t)A.nrows * sizeof(OceanRowShape)));
  }
  if (A.nrows == 0 || !OceanAnalysisNeedsSample(&st->set->options, an)) return OCEAN_SUCCESS;
  ns = OceanAnalysisSampleSize(&st->set->options, A.nrows, nq);
  if (ns == 0) return OCEAN_SUCCESS;
  if ((err = OceanCudaSelectFlagged(dev, NULL, A.nrows, s->cflags, s->list, NULL))) goto done;
  if ((err = OceanDevAlloc(ctx, ns, &d_sample)) || (err = OceanDevAlloc(ctx, 2 * ns, &d_vals)) ||
      (err = OceanMalloc(2 * ns, &h, "analysis: sampled products and counts")))
    goto done;
  if ((err = OceanCudaSampleRows(s->list, nq, ns, d_sample))) goto done;
  if ((err = OceanCudaSampleCounts(A, B, d_sample, ns, d->shapes, d_vals))) goto done;
  if ((err = OceanCudaReadback(dev, h, d_vals, (size_t)(2 * ns) * sizeof(int64_t)))) goto done;
  for (j = 0; j < ns; j++) large += h[ns + j] < 0;
  if (large) { /* rows the kernel's table does not hold: the sample by its routes, p = ub (always fits: no retry) */
    if ((err = OceanCudaPredictRows(OCEAN_CUDA_PREDICT_UB, d_sample, ns, d->shapes, NULL, NULL, 0.0, s->p))) goto done;
    if ((err = OceanCudaCountRows(ctx, rp, A, B, s, d->shapes, d_sample, ns, &retried))) goto done;
    if ((err = OceanCudaSampleValues(d_sample, ns, d->shapes, s->counts, d_vals))) goto done;
    if ((err = OceanCudaReadback(dev, h, d_vals, (size_t)(2 * ns) * sizeof(int64_t)))) goto done;
  }
  if (record && (err = OceanCudaCheckSample(ctx, st, d_sample, h, ns))) goto done;
  OceanAnalysisSampleFinish(an, h, h + ns, ns);
done:
  OceanDevFree(ctx, d_sample);
  OceanDevFree(ctx, d_vals);
  OceanFree(h);
  return err;
}

/* The sketches of B on the device: from the device cache when B's structure id is known there. */
OceanError OceanCudaGetSketches(OceanContext ctx, const OceanCSR *Bh, int64_t b_nnz, OceanDevCSR B, int registers,
                                OceanCudaScratch *s, const uint8_t **sketches, int *reused)
{
  OceanSketchCacheEntry *e      = NULL;
  size_t                 nbytes = (size_t)B.nrows * (size_t)registers;

  *reused = 0;
  if (Bh->structure_id == 0) {
    OceanCall(OceanDevAlloc(ctx, nbytes, &s->sketches));
    OceanCall(OceanCudaSketchBuild(B, registers, s->sketches));
    *sketches = s->sketches;
    ctx->sketches_built++;
    return OCEAN_SUCCESS;
  }
  if (OceanSketchCacheFind(OceanCudaCtx(ctx)->dcache, &ctx->cache_clock, Bh, b_nnz, registers, &e)) {
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

/* The exact routes for numeric-only reuse (d->exact, from the exact counts s->counts) and the statistics over rows
   reduced on the device (rows per bin and accumulator of the run's routes and of the exact ones, the estimate's
   error), queued: read with the phase timers by the first wait for the stage (OceanCudaTakeStats); queued again, the
   later copies overwrite the earlier. */
OceanError OceanCudaQueueRowStats(OceanContext ctx, OceanStage *st, OceanCudaStage *d, OceanCudaScratch *s)
{
  OceanCudaDevice dev = OceanCtxDev(ctx);
  const int64_t   n   = st->nrows;

  if (!d->exact) OceanCall(OceanDevAlloc(ctx, n, &d->exact)); /* queued again after a fallback: the same array */
  OceanCall(OceanCudaRouteAndCount(dev, s->routes, &d->rp, OCEAN_PASS_NUMERIC, s->counts, d->shapes, d->exact, n,
                                   d->route_hist));
  if (st->dec.workflow == OCEAN_WORKFLOW_ESTIMATE) {
    OceanCall(OceanCudaEstimateError(dev, n, d->shapes, s->estimate, st->dec.coefficient, s->counts, &d->error_sums));
    d->error_sums_queued = 1;
  }
  d->stats_queued = 1;
  return OCEAN_SUCCESS;
}

/* C's row offsets from the exact counts (s->counts) and its nonzero count (after the size check). */
static OceanError OceanCudaAllocRowptr(OceanContext ctx, OceanStage *st, OceanCudaStage *d, OceanCudaScratch *s)
{
  int64_t nnz;
  OceanCall(OceanDevAlloc(ctx, st->nrows + 1, &d->c_rowptr));
  OceanCall(OceanCudaScanCounts(OceanCtxDev(ctx), NULL, st->nrows, s->counts, d->c_rowptr, NULL, &nnz));
  OceanCall(OceanStageCheckNnz(st, nnz));
  d->c_nnz = nnz;
  st->nnz  = nnz;
  return OCEAN_SUCCESS;
}

/* The device memory a product can count on now: free memory, the pool's cached blocks not in use and the mirrors
   the running call does not read (the pool reclaims those when it runs short); at most
   OceanOptions.device_memory_limit when set. */
static OceanError OceanCudaAvailable(OceanContext ctx, const OceanStage *st, int64_t *bytes)
{
  const OceanCudaContext *c          = (const OceanCudaContext *)ctx->backend_data;
  const int64_t           limit      = st->set->options.device_memory_limit;
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
static OceanError OceanCudaFits(OceanContext ctx, const OceanStage *st, int64_t bytes, int *fits)
{
  const OceanCudaContext *c      = (const OceanCudaContext *)ctx->backend_data;
  const int64_t           limit  = st->set->options.device_memory_limit;
  int64_t                 in_use = 0, reserved = 0, available;

  OceanCudaPoolStats(c->dev, &in_use, NULL, &reserved, NULL);
  *fits = bytes <= reserved - in_use && (limit == 0 || bytes <= limit);
  if (*fits || (limit > 0 && bytes > limit)) return OCEAN_SUCCESS;
  OceanCall(OceanCudaAvailable(ctx, st, &available));
  *fits = bytes <= available;
  return OCEAN_SUCCESS;
}

/* Up to this many slots C's columns and values are compacted in one launch (each launch costs a small product about
   5 us of host time on an H200); above it the slots' columns are freed before C's values are allocated. */
#define OCEAN_CUDA_ONE_COMPACTION (1 << 22)

/* UPPER_BOUND (routed by the rows' bounds) and ESTIMATE (by the predictions in s->p): slots, numeric, fallback,
   compaction, sort.  *switched: 1
   when the slots would pass max_output_nnz, 2 when they would not fit the device memory (nothing done then). */
OceanError OceanCudaOverAllocated(OceanContext ctx, OceanStage *st, OceanCudaStage *d, const OceanCudaRouteParams *rp,
                                  OceanDevCSR A, OceanDevCSR B, OceanCudaScratch *s, int *switched)
{
  OceanCudaDevice    dev = OceanCtxDev(ctx);
  OceanStats        *S   = &st->stats;
  int64_t            total, nover = 0, retried, fb_total = 0;
  int                unsorted = 0; /* global-hash rows written: C's rows need the sort */
  const int          bounded  = st->dec.workflow == OCEAN_WORKFLOW_UPPER_BOUND;
  const int64_t      factor   = bounded ? st->dec.bound_factor : 0;
  double             t0;
  OceanCudaRowGroups groups;
  OceanError         err = OCEAN_SUCCESS;

  *switched = 0;
  /* routes, slots and the rows grouped by bin: the analysis's plan (by the bounds, or by the likely sizes when the
     analysis took the bound factor, as the host did from the same totals), or one wait (a small product: one launch).
     Routed by their bounds, every route's slot is its row's bound, the total the analysis's, and no row can overflow;
     by their likely sizes, the slots total the analysis's likely_total. */
  if (bounded && d->planned) {
    groups = d->plan;
    total  = factor ? st->an.likely_total : st->an.bound_total;
  } else {
    OceanCudaRowGroupsFree(dev, &d->plan);
    if (factor) OceanCall(OceanCudaRouteLikely(rp, d->shapes, st->nrows, s->routes));
    OceanCall(OceanCudaPlanRows(dev, rp, OCEAN_PASS_NUMERIC, bounded ? NULL : s->p, d->shapes, st->nrows, factor != 0,
                                s->routes, s->offsets, &total, &groups));
  }
  memset(&d->plan, 0, sizeof(d->plan));
  d->planned = 0;
  if (total > st->set->options.max_output_nnz) *switched = 1;
  else {
    int fits = 1;
    err      = OceanCudaFits(ctx, st, total * (int64_t)(sizeof(int32_t) + sizeof(double)), &fits);
    if (!err && !fits) *switched = 2;
  }
  if (err || *switched) {
    OceanCudaRowGroupsFree(dev, &groups);
    return err;
  }
  S->allocated_entries = total;
  t0                   = OceanPhaseBegin(ctx, OCEAN_PHASE_NUMERIC);
  err                  = OceanDevAlloc(ctx, total, &s->bcols);
  if (!err) err = OceanDevAlloc(ctx, total, &s->bvals);
  if (!err) err = OceanCudaTimerStart(dev);
  if (!err)
    err = OceanCudaRunRowGroups(dev, rp, A, B, d->shapes, s->routes, &groups, st->dec.bitmap_query, s->offsets,
                                s->bcols, s->bvals, s->counts, s->flags, &unsorted);
  OceanCudaRowGroupsFree(dev, &groups);
  OceanCall(err);
  /* the rows that overflowed listed (when a row can), C's row offsets scanned from the counts and the row statistics
     queued behind them, so that their launches overlap the numeric pass; then one wait for C's size and the number
     of overflowed rows together.  Those rows' counts are not final: the fallback counts them again, and the
     offsets and the statistics are made again after it. */
  {
    const int   checked = !bounded || factor;
    int64_t    *d_nover = NULL;
    const void *src[2];
    void       *dst[2] = {&d->c_nnz, &nover};
    OceanError  werr;

    if (checked) {
      OceanCall(OceanDevAlloc(ctx, 1, &d_nover));
      werr = OceanCudaSelectFlaggedQueued(dev, NULL, st->nrows, s->flags, s->list, d_nover);
    } else werr = OCEAN_SUCCESS;
    if (!werr) werr = OceanDevAlloc(ctx, st->nrows + 1, &d->c_rowptr);
    if (!werr) werr = OceanCudaScanCounts(dev, NULL, st->nrows, s->counts, d->c_rowptr, NULL, NULL);
    if (!werr) werr = OceanStageTimerStop(ctx, &S->t_numeric);
    if (!werr) werr = OceanCudaQueueRowStats(ctx, st, d, s);
    src[0] = d->c_rowptr + st->nrows;
    src[1] = d_nover;
    if (!werr) werr = OceanCudaReadbackWords(dev, checked ? 2 : 1, src, dst);
    OceanDevFree(ctx, d_nover);
    OceanCall(werr);
  }
  (void)OceanPhaseEnd(ctx, OCEAN_PHASE_NUMERIC, 2.0 * (double)st->an.products, t0);
  S->overflow_rows = nover;
  if (nover) {
    t0 = OceanPhaseBegin(ctx, OCEAN_PHASE_FALLBACK);
    OceanCall(OceanCudaTimerStart(dev));
    /* exact counts from twice the slot that overflowed, then exactly sized buffers */
    OceanCall(OceanCudaPredictRows(OCEAN_CUDA_PREDICT_RETRY, s->list, nover, d->shapes, NULL, s->routes, 0.0, s->p));
    OceanCall(OceanCudaCountRows(ctx, rp, A, B, s, d->shapes, s->list, nover, &retried));
    OceanCall(OceanCudaScanCounts(dev, NULL, st->nrows, s->counts, d->c_rowptr, NULL, &d->c_nnz));
    OceanCall(OceanStageCheckNnz(st, d->c_nnz));
    OceanCall(OceanCudaScanCounts(dev, s->list, nover, s->counts, s->list2, s->foffsets, &fb_total));
    OceanCall(OceanDevAlloc(ctx, fb_total, &s->fcols));
    OceanCall(OceanDevAlloc(ctx, fb_total, &s->fvals));
    OceanCall(OceanCudaRouteRows(rp, OCEAN_PASS_NUMERIC, s->list, nover, s->counts, d->shapes, s->sroutes));
    /* the fallback's own counts and flags go to scratch: the over-allocated run's flags are the record */
    OceanCall(OceanCudaRunRows(dev, rp, A, B, d->shapes, s->sroutes, s->list, nover, st->dec.bitmap_query, s->foffsets,
                               s->fcols, s->fvals, s->p, s->nflags, &unsorted));
    OceanCall(OceanStageTimerStop(ctx, &S->t_fallback));
    (void)OceanPhaseEnd(ctx, OCEAN_PHASE_FALLBACK, 0.0, t0);
    OceanCall(OceanCudaQueueRowStats(ctx, st, d, s)); /* from the final counts */
  }
  OceanCall(OceanStageCheckNnz(st, d->c_nnz));
  st->nnz = d->c_nnz;

  t0 = OceanPhaseBegin(ctx, OCEAN_PHASE_COMPACT);
  OceanCall(OceanCudaTimerStart(dev));
  /* the peak of the run is here (slots, C, per-row arrays): the scratch nothing reads any more goes first, and C's
     columns are compacted and the slots' columns freed before C's values are allocated (the Laplacians' upper
     bounds: slots of about twice C) */
  OceanDevFree(ctx, s->p);
  OceanDevFree(ctx, s->list);
  OceanDevFree(ctx, s->list2);
  OceanDevFree(ctx, s->sroutes);
  OceanDevFree(ctx, s->cflags);
  OceanDevFree(ctx, s->nflags);
  OceanCall(OceanDevAlloc(ctx, d->c_nnz, &d->c_colidx));
  if (total <= OCEAN_CUDA_ONE_COMPACTION) { /* small: both arrays in one launch, the peak a few MB higher */
    OceanCall(OceanDevAlloc(ctx, d->c_nnz, &d->c_values));
    OceanCall(OceanCudaCompact(st->nrows, d->c_nnz, d->c_rowptr, s->flags, s->offsets, s->bcols, s->bvals, s->foffsets,
                               s->fcols, s->fvals, d->c_colidx, d->c_values));
    OceanDevFree(ctx, s->bcols);
    OceanDevFree(ctx, s->fcols);
  } else {
    OceanCall(OceanCudaCompact(st->nrows, d->c_nnz, d->c_rowptr, s->flags, s->offsets, s->bcols, NULL, s->foffsets,
                               s->fcols, NULL, d->c_colidx, NULL));
    OceanDevFree(ctx, s->bcols);
    OceanDevFree(ctx, s->fcols);
    OceanCall(OceanDevAlloc(ctx, d->c_nnz, &d->c_values));
    OceanCall(OceanCudaCompact(st->nrows, d->c_nnz, d->c_rowptr, s->flags, s->offsets, NULL, s->bvals, s->foffsets,
                               NULL, s->fvals, NULL, d->c_values));
  }
  OceanDevFree(ctx, s->bvals);
  OceanDevFree(ctx, s->fvals);
  if (unsorted) OceanCall(OceanCudaSortRows(dev, st->nrows, d->c_nnz, d->c_rowptr, d->c_colidx, d->c_values));
  OceanCall(OceanStageTimerStop(ctx, &S->t_compact));
  (void)OceanPhaseEnd(ctx, OCEAN_PHASE_COMPACT, 0.0, t0);
  return OCEAN_SUCCESS;
}

/* C's host arrays for st->nnz entries, its row offsets downloaded (its columns and values not yet current). */
OceanError OceanCudaStageHostC(OceanContext ctx, OceanStage *st, const OceanCudaStage *d)
{
  const int64_t n = st->nrows;

  st->host_structure = st->host_values = 0;
  OceanFree(st->rowptr);
  OceanFree(st->colidx);
  OceanFree(st->values);
  OceanCall(OceanMalloc(n + 1, &st->rowptr, "C row offsets"));
  OceanCall(OceanMalloc(st->nnz, &st->colidx, "C column indices"));
  OceanCall(OceanMalloc(st->nnz, &st->values, "C values"));
  if (n)
    OceanCall(OceanCudaDownloadStaged(OceanCtxDev(ctx), st->rowptr, d->c_rowptr, (size_t)(n + 1) * sizeof(int64_t)));
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
OceanError OceanCudaChunkedRows(OceanContext ctx, OceanStage *st, OceanCudaStage *d, const OceanCudaRouteParams *rp,
                                OceanDevCSR A, OceanDevCSR B, const OceanRoute *routes, int check, int64_t *counts,
                                uint8_t *flags)
{
  OceanCudaDevice dev = OceanCtxDev(ctx);
  const int64_t   n   = st->nrows;
  int64_t  available, budget, most = 0, excess = 0, r0, r1, i, chunks = 0, *off = NULL, *hslots = NULL, *hcounts = NULL;
  int32_t *cols = NULL, *hcols = NULL;
  double  *vals  = NULL;
  OceanError err = OCEAN_SUCCESS;

  if (!check) OceanCall(OceanCudaStageHostC(ctx, st, d));
  OceanCall(OceanCudaAvailable(ctx, st, &available));
  budget = OceanMax64(available / 4 / (int64_t)(sizeof(int32_t) + sizeof(double)), 1);
  for (r0 = 0; r0 < n; r0 = r1) {
    r1   = OceanCudaChunkEnd(st->rowptr, n, r0, budget);
    most = OceanMax64(most, st->rowptr[r1] - st->rowptr[r0]);
  }
  if ((err = OceanDevAlloc(ctx, n + 1, &off))) goto done;
  if (check) {
    /* the routes' slots (the scan into off, before off holds a chunk's offsets): the largest excess over C's row */
    if ((err = OceanCudaScanSlots(dev, routes, n, off, NULL)) || (err = OceanMalloc(n + 1, &hslots, "route slots")) ||
        (err = OceanCudaDownloadStaged(dev, hslots, off, (size_t)(n + 1) * sizeof(int64_t))) ||
        (err = OceanMalloc(n, &hcounts, "a chunk's row counts")) ||
        (err = OceanMalloc(most, &hcols, "a chunk of C's columns")))
      goto done;
    for (i = 0; i < n; i++)
      excess = OceanMax64(excess, (hslots[i + 1] - hslots[i]) - (st->rowptr[i + 1] - st->rowptr[i]));
  }
  if ((err = OceanDevAlloc(ctx, most + excess, &cols)) || (err = OceanDevAlloc(ctx, most + excess, &vals))) goto done;
  for (r0 = 0; r0 < n; r0 = r1) {
    int64_t              base, cnnz;
    OceanDevCSR          Ac       = A;
    OceanCudaRouteParams rc       = *rp; /* the chunk's rows are its A's rows from 0 */
    int                  unsorted = 0;
    if (rc.cells.row_cell) rc.cells.row_cell += r0;
    r1        = OceanCudaChunkEnd(st->rowptr, n, r0, budget);
    base      = st->rowptr[r0];
    cnnz      = st->rowptr[r1] - base;
    Ac.rowptr = A.rowptr + r0;
    Ac.nrows  = r1 - r0;
    if ((err = OceanCudaRebaseOffsets(d->c_rowptr + r0, r1 - r0 + 1, off)) ||
        (err = OceanCudaRunRows(dev, &rc, Ac, B, d->shapes + r0, routes + r0, NULL, r1 - r0, st->dec.bitmap_query, off,
                                cols, vals, counts + r0, flags + r0, &unsorted)) ||
        (unsorted && (err = OceanCudaSortRows(dev, r1 - r0, cnnz, off, cols, vals))))
      goto done;
    if (check) { /* a row that overflowed its slot counts slot + 1 */
      if ((err = OceanCudaDownloadStaged(dev, hcounts, counts + r0, (size_t)(r1 - r0) * sizeof(int64_t)))) goto done;
      for (i = r0; i < r1; i++)
        if (hcounts[i - r0] != st->rowptr[i + 1] - st->rowptr[i]) {
          err = OceanSetError(OCEAN_ERR_STATE, "%s: row %lld of chunk %lld has %lld entries, C %lld", st->name,
                              (long long)i, (long long)chunks, (long long)hcounts[i - r0],
                              (long long)(st->rowptr[i + 1] - st->rowptr[i]));
          goto done;
        }
    }
    if (cnnz &&
        (err = OceanCudaDownloadStaged(dev, check ? hcols : st->colidx + base, cols, (size_t)cnnz * sizeof(int32_t))))
      goto done;
    if (check && memcmp(hcols, st->colidx + base, (size_t)cnnz * sizeof(int32_t))) {
      err = OceanSetError(OCEAN_ERR_STATE, "%s: chunk %lld (rows %lld to %lld) does not have C's known columns",
                          st->name, (long long)chunks, (long long)r0, (long long)r1 - 1);
      goto done;
    }
    if (cnnz && (err = OceanCudaDownloadStaged(dev, st->values + base, vals, (size_t)cnnz * sizeof(double)))) goto done;
    st->stats.downloaded_bytes += cnnz * (int64_t)(sizeof(int32_t) + sizeof(double));
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
static OceanError OceanCudaExactWhole(OceanContext ctx, OceanStage *st, OceanCudaStage *d,
                                      const OceanCudaRouteParams *rp, OceanDevCSR A, OceanDevCSR B, OceanCudaScratch *s)
{
  int unsorted = 0;

  OceanCall(OceanDevAlloc(ctx, d->c_nnz, &d->c_colidx));
  OceanCall(OceanDevAlloc(ctx, d->c_nnz, &d->c_values));
  /* numeric counts and flags into scratch (s->p, s->nflags): the exact routes never overflow */
  OceanCall(OceanCudaRunRows(OceanCtxDev(ctx), rp, A, B, d->shapes, s->routes, NULL, st->nrows, st->dec.bitmap_query,
                             d->c_rowptr, d->c_colidx, d->c_values, s->p, s->nflags, &unsorted));
  if (unsorted)
    OceanCall(OceanCudaSortRows(OceanCtxDev(ctx), st->nrows, d->c_nnz, d->c_rowptr, d->c_colidx, d->c_values));
  return OCEAN_SUCCESS;
}

static void OceanCudaHeavyCellsFree(OceanContext ctx, OceanHeavyCells *cells)
{
  OceanDevFree(ctx, cells->row_cell);
  OceanDevFree(ctx, cells->cells);
  OceanDevFree(ctx, cells->next);
  memset(cells, 0, sizeof(*cells));
}

/* The exact workflow's cells of heavy rows (OceanHeavyCells): a record for each row the analysis found may be heavy,
   when the records take at most an eighth of the available memory and their allocation succeeds; else none (the
   multisplit then copies its chunks' outputs into C). */
static OceanError OceanCudaHeavyCellsCreate(OceanContext ctx, const OceanStage *st, const OceanCudaStage *d,
                                            const OceanCudaRouteParams *rp, OceanDevCSR B, OceanHeavyCells *cells)
{
  OceanHeavyLevels L;
  int64_t          available, stride;
  int              shift;
  OceanError       err;

  memset(cells, 0, sizeof(*cells));
  if (d->heavy_rows_possible == 0 || st->nrows == 0) return OCEAN_SUCCESS;
  OceanHeavyPlanLevels(&rp->bins[OCEAN_BIN_HEAVY], B.ncols, &L);
  shift  = L.shift[L.levels - 1];
  stride = OceanHeavyLastChunks(&L, B.ncols) + 1; /* a cell per last-level chunk, the total last */
  OceanCall(OceanCudaAvailable(ctx, st, &available));
  if ((d->heavy_rows_possible * stride + st->nrows) * (int64_t)sizeof(int32_t) > available / 8) return OCEAN_SUCCESS;
  if ((err = OceanDevAlloc(ctx, st->nrows, &cells->row_cell)) ||
      (err = OceanDevAlloc(ctx, d->heavy_rows_possible * stride, &cells->cells)) ||
      (err = OceanDevAlloc(ctx, 1, &cells->next))) {
    OceanCudaHeavyCellsFree(ctx, cells);
    return err == OCEAN_ERR_MEMORY ? OCEAN_SUCCESS : err; /* an optimization only: the product goes on without */
  }
  cells->records = d->heavy_rows_possible;
  cells->stride  = stride;
  cells->shift   = shift;
  return OceanCudaHeavyCellsReset(cells);
}

static OceanError OceanCudaExactWithCells(OceanContext ctx, OceanStage *st, OceanCudaStage *d,
                                          const OceanCudaRouteParams *rp, OceanDevCSR A, OceanDevCSR B,
                                          OceanCudaScratch *s)
{
  OceanCudaDevice dev = OceanCtxDev(ctx);
  OceanStats     *S   = &st->stats;
  int64_t         retried;
  int             fits;
  double          t0;

  t0 = OceanPhaseBegin(ctx, OCEAN_PHASE_SYMBOLIC);
  OceanCall(OceanCudaTimerStart(dev));
  OceanCall(OceanCudaPredictRows(OCEAN_CUDA_PREDICT_EXACT, NULL, st->nrows, d->shapes, NULL, NULL,
                                 st->an.cr_conservative, s->p));
  OceanCall(OceanCudaCountRows(ctx, rp, A, B, s, d->shapes, NULL, st->nrows, &retried));
  OceanCall(OceanStageTimerStop(ctx, &S->t_symbolic));
  (void)OceanPhaseEnd(ctx, OCEAN_PHASE_SYMBOLIC, 0.0, t0);
  S->symbolic_retry_rows = retried;

  OceanCall(OceanCudaAllocRowptr(ctx, st, d, s));
  S->allocated_entries = st->nnz;
  OceanCall(OceanCudaRouteRows(rp, OCEAN_PASS_NUMERIC, NULL, st->nrows, s->counts, d->shapes, s->routes));
  OceanCall(OceanCudaFits(ctx, st, d->c_nnz * (int64_t)(sizeof(int32_t) + sizeof(double)), &fits));
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

/* EXACT: symbolic counts (assisted binning, retries), C, numeric into it, sort.  C whole on the device when its
   entries fit the available memory (and the run finds the memory for its workspace), else in chunks of rows.  Rows
   that may be heavy are counted by cells, for their multisplit to write into C in place. */
OceanError OceanCudaExact(OceanContext ctx, OceanStage *st, OceanCudaStage *d, const OceanCudaRouteParams *rp,
                          OceanDevCSR A, OceanDevCSR B, OceanCudaScratch *s)
{
  OceanCudaRouteParams rpc = *rp;
  OceanError           err = OceanCudaHeavyCellsCreate(ctx, st, d, rp, B, &rpc.cells);

  if (!err) err = OceanCudaExactWithCells(ctx, st, d, &rpc, A, B, s);
  OceanCudaHeavyCellsFree(ctx, &rpc.cells);
  return err;
}

/*
  NARROW (OceanSelectNarrow): one pass of a team per row into a dense-row workspace, which also gives every row's shape
  and the totals; C's offsets by a CUB scan; one wait, for nnz(C) and the totals together; compaction.  No analysis
  pass, no routes, no sort.  The statistics and row records are the CPU's: every row with products in the NARROW bin
  (OceanRouteNarrow), slots at the rows' upper bounds.
*/
OceanError OceanCudaNarrow(OceanContext ctx, OceanStage *st, OceanCudaStage *d, OceanDevCSR A, OceanDevCSR B,
                           OceanCudaScratch *s)
{
  OceanCudaDevice    dev = OceanCtxDev(ctx);
  OceanStats        *S   = &st->stats;
  OceanStageScratch *t   = &st->tmp;
  OceanAnalysis     *an  = &st->an;
  const int64_t      n   = st->nrows;
  int64_t            nnz = 0, totals[3] = {0, 0, 0}, nonempty, i;
  double             t0;

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
  OceanCall(OceanCudaNarrowSymbolic(ctx->profile.num_sms, A, d->nnz[0], B, d->shapes, s->counts, s->offsets, s->flags,
                                    s->bcols, s->bvals, s->list));
  OceanCall(OceanCudaScanCounts(dev, NULL, n, s->counts, d->c_rowptr, NULL, NULL));
  OceanCall(OceanStageTimerStop(ctx, &S->t_numeric));
  {
    const void *src[4] = {d->c_rowptr + n, s->list, s->list + 1, s->list + 2};
    void       *dst[4] = {&nnz, &totals[0], &totals[1], &totals[2]};
    OceanCall(OceanCudaReadbackWords(dev, 4, src, dst)); /* the stage's one wait */
  }
  (void)OceanPhaseEnd(ctx, OCEAN_PHASE_NUMERIC, 2.0 * (double)totals[0], t0);
  an->products     = totals[0];
  an->bound_total  = totals[1];
  an->likely_total = 0;
  nonempty         = totals[2];
  OceanAnalysisFinishRows(an, d->nnz[0]);
  S->products          = an->products;
  S->bound_nnz         = an->bound_total;
  S->er                = an->er;
  S->allocated_entries = an->bound_total; /* the CPU's slots; the device's workspace is rows x columns */
  OceanCall(OceanStageCheckNnz(st, nnz));
  d->c_nnz = st->nnz = nnz;

  t0 = OceanPhaseBegin(ctx, OCEAN_PHASE_COMPACT);
  OceanCall(OceanCudaTimerStart(dev));
  OceanCall(OceanDevAlloc(ctx, nnz, &d->c_colidx));
  OceanCall(OceanDevAlloc(ctx, nnz, &d->c_values));
  OceanCall(OceanCudaCompact(n, d->c_nnz, d->c_rowptr, s->flags, s->offsets, s->bcols, s->bvals, NULL, NULL, NULL,
                             d->c_colidx, d->c_values));
  OceanCall(OceanStageTimerStop(ctx, &S->t_compact));
  (void)OceanPhaseEnd(ctx, OCEAN_PHASE_COMPACT, 0.0, t0);

  memset(&d->exact_counts, 0, sizeof(d->exact_counts));
  d->exact_counts.bins[OCEAN_BIN_NARROW] = d->exact_counts.acc[OCEAN_ACC_DENSE] = nonempty;
  d->exact_counts.bins[OCEAN_BIN_EMPTY] = d->exact_counts.acc[OCEAN_ACC_NONE] = n - nonempty;
  S->rows_per_bin[OCEAN_BIN_NARROW] = S->dense_rows = nonempty;
  S->rows_per_bin[OCEAN_BIN_EMPTY]                  = n - nonempty;
  st->host_structure = st->host_values = 0;
  if (!st->set->options.record_rows) return OCEAN_SUCCESS;

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

#endif
