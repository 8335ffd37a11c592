/*
  workflows.c - the CPU backend's table: its context (per-thread workspaces) and the steps of the workflow ladder
  (core/stage.c) over OpenMP threads, row by row with the accumulators of accumulators.c.
*/
#include "cpu/cpu.h"

/* ------------------------------------------------------------------------------------------------ context */

static OceanCpuContext *OceanCpuCtx(OceanContext ctx)
{
  return (OceanCpuContext *)ctx->backend_data;
}

static OceanError OceanCpuContextSetup(OceanContext ctx, int device, const OceanDeviceProfile *profile)
{
  OceanCpuContext *c;

  (void)device;
  (void)profile;
  OceanCall(OceanCalloc(1, &c, "CPU backend context"));
  ctx->backend_data = c;
  return OCEAN_SUCCESS;
}

static void OceanCpuContextTeardown(OceanContext ctx)
{
  OceanCpuContext *c = OceanCpuCtx(ctx);

  if (!c) return;
  OceanWorkspacesDestroy(&c->ws, c->nws);
  OceanFree(ctx->backend_data);
}

OceanError OceanCpuWorkspaces(OceanContext ctx, const OceanSettings *set, OceanWorkspace **ws)
{
  OceanCpuContext *c = OceanCpuCtx(ctx);
  int              n = OceanMaxThreads();

  if (c->nws < n) {
    OceanWorkspacesDestroy(&c->ws, c->nws);
    c->nws = 0;
    OceanCall(OceanWorkspacesCreate(set->bins, n, &c->ws));
    c->nws = n;
  }
  for (n = 0; n < c->nws; n++) c->ws[n].heavy = &set->bins[OCEAN_BIN_HEAVY];
  *ws = c->ws;
  return OCEAN_SUCCESS;
}

/* ------------------------------------------------------------------------------------------------ analysis */

OceanError OceanCpuAnalyzeSample(OceanContext ctx, const OceanSettings *set, const OceanCSR *A, const OceanCSR *B,
                                 OceanAnalysis *an)
{
  int64_t            *sample, *count, ns, j;
  OceanWorkspace     *ws;
  OceanParallelStatus st = {0, OCEAN_SUCCESS, 0, 0};

  OceanCall(OceanAnalysisSampleSelect(&set->options, an, &sample, &ns));
  if (ns == 0) return OCEAN_SUCCESS;
  count = sample + ns;
  {
    OceanError err = OceanCpuWorkspaces(ctx, set, &ws);
    if (err) {
      OceanFree(sample);
      return err;
    }
  }
#pragma omp parallel for schedule(dynamic, 16)
  for (j = 0; j < ns; j++) {
    int64_t    bytes = 0;
    int        retried;
    OceanError err;
    if (OceanParallelFailed(&st)) continue;
    /* p = ub always fits, so this never retries */
    err = OceanCpuCountRow(set, &ws[OceanThreadNum()], A, B, sample[j], &an->rows[sample[j]], an->rows[sample[j]].ub,
                           &count[j], &retried, &bytes);
    if (err) OceanParallelFail(&st, err, sample[j], bytes);
  }
  if (!st.failed) OceanAnalysisSampleFinish(an, sample + 2 * ns, count, ns);
  OceanFree(sample);
  return OceanParallelReport(&st, "analysis: sampling");
}

/* ------------------------------------------------------------------------------------------------ workflows */

/* Numeric pass of the over-allocating workflows: each row within its slot, overflow flagged.  The GPU writes a row
   into its slot of one over-allocated buffer; here a thread appends its rows to its own buffer with a slot's room
   ahead, so the pass touches nnz(C) entries of memory, not the slots' total (fresh memory costs a page clearing). */
static OceanError OceanCpuNumericIntoSlots(OceanContext ctx, OceanStage *st, const OceanCSR *A, const OceanCSR *B,
                                           OceanWorkspace *ws, int nws)
{
  OceanStageScratch  *t  = &st->tmp;
  OceanParallelStatus ps = {0, OCEAN_SUCCESS, 0, 0};
  int64_t             i;
  int                 k;

  for (k = 0; k < nws; k++) ws[k].out_used = 0;
#pragma omp parallel for schedule(dynamic, OCEAN_ROW_CHUNK)
  for (i = 0; i < st->nrows; i++) {
    const int       me    = OceanThreadNum();
    OceanWorkspace *w     = &ws[me];
    int64_t         bytes = 0;
    int             overflow;
    OceanError      err;
    if (OceanParallelFailed(&ps)) continue;
    err = OceanWorkspaceReserveOutput(w, w->out_used + t->routes[i].slot, &bytes);
    if (!err)
      err = OceanCpuRow(w, A, B, i, &st->an.rows[i], &t->routes[i], st->dec.bitmap_query, w->out_cols + w->out_used,
                        w->out_vals + w->out_used, &t->counts[i], &overflow, &bytes);
    if (err) {
      OceanParallelFail(&ps, err, i, bytes);
      continue;
    }
    t->flags[i]   = (uint8_t)overflow;
    t->owner[i]   = me;
    t->offsets[i] = w->out_used;
    if (!overflow) w->out_used += t->counts[i];
  }
  return OceanParallelReport(&ps, st->name);
}

/*
  Fallback for rows whose estimate was too small: their exact count (symbolic accumulators, from twice the slot
  that overflowed), then C's size check, then each is re-routed by its exact count and computed into an exactly
  sized buffer.  Their fallback offsets replace their slot offsets.
*/
static OceanError OceanCpuFallback(OceanContext ctx, OceanStage *st, const OceanCSR *A, const OceanCSR *B,
                                   OceanWorkspace *ws, int64_t n)
{
  OceanStageScratch  *t  = &st->tmp;
  OceanParallelStatus ps = {0, OCEAN_SUCCESS, 0, 0};
  int64_t             i, j, nnz = 0, fb_total = 0;

  OceanCall(OceanMalloc(n, &t->list, "fallback rows"));
  for (i = 0, j = 0; i < st->nrows; i++)
    if (t->flags[i]) t->list[j++] = i;

#pragma omp parallel for schedule(dynamic, 1)
  for (j = 0; j < n; j++) {
    const int64_t        row   = t->list[j];
    const OceanRowShape *sh    = &st->an.rows[row];
    int64_t              bytes = 0;
    int                  retried;
    OceanError           err;
    if (OceanParallelFailed(&ps)) continue;
    err = OceanCpuCountRow(st->set, &ws[OceanThreadNum()], A, B, row, sh, OceanMin64(sh->ub, 2 * t->routes[row].slot),
                           &t->counts[row], &retried, &bytes);
    if (err) OceanParallelFail(&ps, err, row, bytes);
  }
  OceanCall(OceanParallelReport(&ps, st->name));

  for (i = 0; i < st->nrows; i++) nnz += t->counts[i];
  OceanCall(OceanStageCheckNnz(st, nnz));
  for (j = 0; j < n; j++) { /* serial prefix over the fallback rows */
    t->offsets[t->list[j]] = fb_total;
    fb_total += t->counts[t->list[j]];
  }
  OceanCall(OceanMalloc(fb_total, &t->fcols, "fallback columns"));
  OceanCall(OceanMalloc(fb_total, &t->fvals, "fallback values"));

#pragma omp parallel for schedule(dynamic, 1)
  for (j = 0; j < n; j++) {
    const int64_t row = t->list[j];
    OceanRoute    r;
    int64_t       bytes = 0, count;
    int           overflow;
    OceanError    err;
    if (OceanParallelFailed(&ps)) continue;
    OceanRouteRow(st->set, OCEAN_PASS_NUMERIC, t->counts[row], &st->an.rows[row], &r);
    err = OceanCpuRow(&ws[OceanThreadNum()], A, B, row, &st->an.rows[row], &r, st->dec.bitmap_query,
                      t->fcols + t->offsets[row], t->fvals + t->offsets[row], &count, &overflow, &bytes);
    if (!err && (overflow || count != t->counts[row]))
      err = OCEAN_ERR_STATE; /* cannot happen: the exact count routes without overflow */
    if (err) OceanParallelFail(&ps, err, row, bytes);
  }
  return OceanParallelReport(&ps, st->name);
}

/* Compaction of the threads' output buffers (and the fallback buffer) into C.  When one thread computed every row in
   order and none overflowed, its buffer already is C: taken as it is (trimmed), the workspace starts a new one. */
static OceanError OceanCpuCompact(OceanStage *st, OceanWorkspace *ws, int nws)
{
  OceanStageScratch *t = &st->tmp;
  int64_t            i, nnz   = 0;
  int                k, whole = nws >= 1;

  for (i = 0; i < st->nrows; i++) {
    whole = whole && !t->flags[i] && t->owner[i] == 0 && t->offsets[i] == nnz;
    nnz += t->counts[i];
  }
  whole = whole && ws[0].out_used == nnz;
  if (whole) {
    OceanCall(OceanStageAllocRowptr(st, t->counts));
    OceanCall(OceanWorkspaceTakeOutput(&ws[0], &st->colidx, &st->values));
    return OCEAN_SUCCESS;
  }
  OceanCall(OceanStageAllocC(st, t->counts));
  /* buffer by buffer (the fallback's last), each large one freed once its rows are in C: C's pages are touched as the
     buffers go, so the resident memory stays near one C instead of two */
  for (k = 0; k <= nws; k++) {
#pragma omp parallel for schedule(dynamic, OCEAN_ROW_CHUNK)
    for (i = 0; i < st->nrows; i++) {
      const int32_t *c;
      const double  *v;
      if (k == nws ? !t->flags[i] : (t->flags[i] || t->owner[i] != k)) continue;
      c = k == nws ? t->fcols : ws[k].out_cols;
      v = k == nws ? t->fvals : ws[k].out_vals;
      memcpy(st->colidx + st->rowptr[i], c + t->offsets[i], (size_t)t->counts[i] * sizeof(int32_t));
      memcpy(st->values + st->rowptr[i], v + t->offsets[i], (size_t)t->counts[i] * sizeof(double));
    }
    if (k < nws) OceanWorkspacesTrimOutput(&ws[k], 1, OCEAN_CPU_KEEP_OUTPUT);
  }
  return OCEAN_SUCCESS;
}

/* The per-row arrays of a numeric pass into the threads' buffers (OceanCpuNumericIntoSlots). */
static OceanError OceanCpuPassArrays(OceanStage *st)
{
  OceanStageScratch *t = &st->tmp;

  OceanCall(OceanMalloc(st->nrows, &t->owner, "row owners"));
  OceanCall(OceanMalloc(st->nrows, &t->counts, "row counts"));
  OceanCall(OceanMalloc(st->nrows, &t->flags, "overflow flags"));
  return OCEAN_SUCCESS;
}

/* UPPER_BOUND, ESTIMATE and NARROW: route by t->predicted, numeric into slots, fallback, compaction.  Sets *switched
   (and does nothing) when the slots would pass max_output_nnz; NARROW never switches (its dense rows are bounded
   by narrow_max_entries, and C's exact size is checked). */
static OceanError OceanCpuOverAllocated(OceanContext ctx, OceanStage *st, const OceanCSR *A, const OceanCSR *B,
                                        int *switched)
{
  OceanStageScratch *t = &st->tmp;
  OceanStats        *s = &st->stats;
  OceanWorkspace    *ws;
  OceanError         err;
  int64_t            i, total, nover = 0;
  double             t0, fb_products = 0;

  *switched = 0;
  OceanCall(OceanCpuWorkspaces(ctx, st->set, &ws));
  OceanCall(OceanMalloc(st->nrows, &t->routes, "routes"));
  OceanCall(OceanMalloc(st->nrows + 1, &t->offsets, "slot offsets"));
  OceanStageRouteRows(st, OCEAN_PASS_NUMERIC, t->predicted, t->routes);
  t->offsets[0] = 0;
  for (i = 0; i < st->nrows; i++) t->offsets[i + 1] = t->offsets[i] + t->routes[i].slot;
  total = t->offsets[st->nrows];
  if (total > st->set->options.max_output_nnz && st->dec.workflow != OCEAN_WORKFLOW_NARROW) {
    *switched = 1;
    OceanFree(t->routes);
    return OCEAN_SUCCESS;
  }
  s->allocated_entries = total; /* the GPU's over-allocated buffer; here only counted (OceanCpuNumericIntoSlots) */
  OceanCall(OceanCpuPassArrays(st));

  t0           = OceanPhaseBegin(ctx, OCEAN_PHASE_NUMERIC);
  err          = OceanCpuNumericIntoSlots(ctx, st, A, B, ws, OceanCpuCtx(ctx)->nws);
  s->t_numeric = OceanPhaseEnd(ctx, OCEAN_PHASE_NUMERIC, err ? 0.0 : 2.0 * (double)st->an.products, t0);
  OceanCall(err);

  for (i = 0; i < st->nrows; i++) {
    nover += t->flags[i];
    if (t->flags[i]) fb_products += (double)st->an.rows[i].products;
  }
  s->overflow_rows = nover;
  if (nover) {
    t0            = OceanPhaseBegin(ctx, OCEAN_PHASE_FALLBACK);
    err           = OceanCpuFallback(ctx, st, A, B, ws, nover);
    s->t_fallback = OceanPhaseEnd(ctx, OCEAN_PHASE_FALLBACK, err ? 0.0 : 2.0 * fb_products, t0);
    OceanCall(err);
  }

  t0           = OceanPhaseBegin(ctx, OCEAN_PHASE_COMPACT);
  err          = OceanCpuCompact(st, ws, OceanCpuCtx(ctx)->nws);
  s->t_compact = OceanPhaseEnd(ctx, OCEAN_PHASE_COMPACT, 0.0, t0);
  return err;
}

/* ESTIMATE's predictions: min(ub, ceil(estimate x coefficient)). */
static OceanError OceanCpuEstimate(OceanContext ctx, OceanStage *st, const OceanCSR *A, const OceanCSR *B)
{
  OceanStageScratch *t = &st->tmp;
  int64_t            i;
  int                reused;

  OceanCall(OceanMalloc(st->nrows, &t->estimate, "estimates"));
  OceanCall(OceanSketchEstimateRows(ctx, A, B, st->dec.registers, &t->sketches, t->estimate, &reused));
  st->stats.sketches_reused      = reused;
  st->stats.hll_registers        = st->dec.registers;
  st->stats.estimate_coefficient = st->dec.coefficient;
#pragma omp parallel for schedule(static)
  for (i = 0; i < st->nrows; i++) {
    t->predicted[i] = OceanPredictFromEstimate(t->estimate[i], st->dec.coefficient, &st->an.rows[i]);
  }
  return OCEAN_SUCCESS;
}

/* EXACT's symbolic pass: exact counts into t->predicted, each row first routed by products / conservative CR. */
static OceanError OceanCpuExactSymbolic(OceanContext ctx, OceanStage *st, const OceanCSR *A, const OceanCSR *B,
                                        OceanWorkspace *ws)
{
  OceanStageScratch  *t  = &st->tmp;
  OceanParallelStatus ps = {0, OCEAN_SUCCESS, 0, 0};
  int64_t             i, retries = 0;

#pragma omp parallel for schedule(dynamic, OCEAN_ROW_CHUNK) reduction(+ : retries)
  for (i = 0; i < st->nrows; i++) {
    const OceanRowShape *r = &st->an.rows[i];
    int64_t              p = OceanPredictExact(r, st->an.cr_conservative), bytes = 0;
    int                  retried = 0;
    OceanError           err;
    if (OceanParallelFailed(&ps)) continue;
    err = OceanCpuCountRow(st->set, &ws[OceanThreadNum()], A, B, i, r, p, &t->predicted[i], &retried, &bytes);
    if (err) OceanParallelFail(&ps, err, i, bytes);
    retries += retried;
  }
  st->stats.symbolic_retry_rows = retries;
  return OceanParallelReport(&ps, st->name);
}

/* EXACT's numeric pass: every row by its exact route straight into C. */
static OceanError OceanCpuExactNumeric(OceanContext ctx, OceanStage *st, const OceanCSR *A, const OceanCSR *B,
                                       OceanWorkspace *ws)
{
  OceanStageScratch  *t  = &st->tmp;
  OceanParallelStatus ps = {0, OCEAN_SUCCESS, 0, 0};
  int64_t             i;

#pragma omp parallel for schedule(dynamic, OCEAN_ROW_CHUNK)
  for (i = 0; i < st->nrows; i++) {
    int64_t    bytes = 0, count;
    int        overflow;
    OceanError err;
    if (OceanParallelFailed(&ps)) continue;
    err = OceanCpuRow(&ws[OceanThreadNum()], A, B, i, &st->an.rows[i], &t->routes[i], st->dec.bitmap_query,
                      st->colidx + st->rowptr[i], st->values + st->rowptr[i], &count, &overflow, &bytes);
    if (!err && (overflow || count != t->predicted[i]))
      err = OCEAN_ERR_STATE; /* cannot happen: exact routes never overflow */
    if (err) OceanParallelFail(&ps, err, i, bytes);
  }
  return OceanParallelReport(&ps, st->name);
}

/*
  EXACT in one pass, where the threads' buffers make a separate count unnecessary: every row computed once, routed by
  its upper bound (it cannot overflow), into its thread's buffer, then compacted.  The decisions are still the GPU's two
  passes': a row's symbolic retry is its exact count over the slot of its first symbolic route (the symbolic
  accumulators overflow exactly then), and C's routes are those of the exact counts.  Taken when no row can be heavy
  (a multisplit row's route, and its statistics, depend on the prediction) and the upper bounds stay within
  max_output_nnz (C then cannot pass it, as the two passes check before computing values).
*/
static int OceanCpuExactOnePassFits(const OceanStage *st)
{
  const OceanBinConfig *h = &st->set->bins[OCEAN_BIN_HEAVY];
  int64_t               i;

  if (st->an.bound_total > st->set->options.max_output_nnz) return 0;
  if (h->max_products == INT64_MAX) return 1;
  for (i = 0; i < st->nrows; i++)
    if (OceanRowMayBeHeavy(st->set->bins, &st->an.rows[i])) return 0;
  return 1;
}

static OceanError OceanCpuExactOnePass(OceanContext ctx, OceanStage *st, const OceanCSR *A, const OceanCSR *B,
                                       OceanWorkspace *ws)
{
  OceanStageScratch *t = &st->tmp;
  OceanStats        *s = &st->stats;
  OceanError         err;
  int64_t            i, retries = 0;
  double             t0;

  OceanFree(t->offsets);
  OceanCall(OceanMalloc(st->nrows, &t->offsets, "row offsets"));
  OceanCall(OceanCpuPassArrays(st));
  for (i = 0; i < st->nrows; i++) t->predicted[i] = st->an.rows[i].ub;
  OceanStageRouteRows(st, OCEAN_PASS_NUMERIC, t->predicted, t->routes);
  t0           = OceanPhaseBegin(ctx, OCEAN_PHASE_NUMERIC);
  err          = OceanCpuNumericIntoSlots(ctx, st, A, B, ws, OceanCpuCtx(ctx)->nws);
  s->t_numeric = OceanPhaseEnd(ctx, OCEAN_PHASE_NUMERIC, err ? 0.0 : 2.0 * (double)st->an.products, t0);
  OceanCall(err);

#pragma omp parallel for schedule(static) reduction(+ : retries)
  for (i = 0; i < st->nrows; i++) {
    const OceanRowShape *r = &st->an.rows[i];
    OceanRoute           first;
    OceanRouteRow(st->set, OCEAN_PASS_SYMBOLIC, OceanPredictExact(r, st->an.cr_conservative), r, &first);
    retries += t->counts[i] > first.slot;
    t->predicted[i] = t->counts[i];
  }
  s->symbolic_retry_rows = retries;
  t0                     = OceanPhaseBegin(ctx, OCEAN_PHASE_COMPACT);
  err                    = OceanCpuCompact(st, ws, OceanCpuCtx(ctx)->nws);
  s->t_compact           = OceanPhaseEnd(ctx, OCEAN_PHASE_COMPACT, 0.0, t0);
  OceanCall(err);
  s->allocated_entries = st->nnz;
  OceanStageRouteRows(st, OCEAN_PASS_NUMERIC, t->predicted, t->routes);
  return OCEAN_SUCCESS;
}

/* EXACT: symbolic counts with assisted binning, C allocated exactly, numeric straight into it. */
static OceanError OceanCpuExact(OceanContext ctx, OceanStage *st, const OceanCSR *A, const OceanCSR *B)
{
  OceanStageScratch *t = &st->tmp;
  OceanStats        *s = &st->stats;
  OceanWorkspace    *ws;
  OceanError         err;
  double             t0;

  OceanCall(OceanCpuWorkspaces(ctx, st->set, &ws));
  OceanFree(t->routes);
  OceanCall(OceanMalloc(st->nrows, &t->routes, "routes"));
  if (OceanCpuExactOnePassFits(st)) return OceanCpuExactOnePass(ctx, st, A, B, ws);
  t0            = OceanPhaseBegin(ctx, OCEAN_PHASE_SYMBOLIC);
  err           = OceanCpuExactSymbolic(ctx, st, A, B, ws);
  s->t_symbolic = OceanPhaseEnd(ctx, OCEAN_PHASE_SYMBOLIC, 0.0, t0);
  OceanCall(err);

  OceanCall(OceanStageAllocC(st, t->predicted)); /* predicted now holds the exact counts */
  s->allocated_entries = st->nnz;
  OceanStageRouteRows(st, OCEAN_PASS_NUMERIC, t->predicted, t->routes);
  t0           = OceanPhaseBegin(ctx, OCEAN_PHASE_NUMERIC);
  err          = OceanCpuExactNumeric(ctx, st, A, B, ws);
  s->t_numeric = OceanPhaseEnd(ctx, OCEAN_PHASE_NUMERIC, err ? 0.0 : 2.0 * (double)st->an.products, t0);
  return err;
}

/* ------------------------------------------------------------------------------------------------ ladder steps */

static OceanError OceanCpuSymbolicBegin(OceanContext ctx, OceanStage *st, const OceanCSR *A, const OceanCSR *B)
{
  OceanWorkspace *ws;

  (void)A;
  (void)B;
  OceanCall(OceanCpuWorkspaces(ctx, st->set, &ws));
  OceanWorkspacesResetPacked(ws, OceanCpuCtx(ctx)->nws);
  OceanWorkspacesResetHeavyCounts(ws, OceanCpuCtx(ctx)->nws);
  return OceanMalloc(st->nrows, &st->tmp.predicted, "predicted sizes");
}

/* NARROW's analysis is the shapes only (the statistics and row records of the device's NARROW pass). */
static OceanError OceanCpuAnalyze(OceanContext ctx, OceanStage *st, const OceanCSR *A, const OceanCSR *B)
{
  OceanError err;
  double     t0;

  t0  = OceanPhaseBegin(ctx, OCEAN_PHASE_ANALYSIS);
  err = OceanAnalyzeShapes(A, B, st->set, &st->an);
  if (!err && !st->narrow && OceanAnalysisNeedsSample(&st->set->options, &st->an))
    err = OceanCpuAnalyzeSample(ctx, st->set, A, B, &st->an);
  st->stats.t_analysis = OceanPhaseEnd(ctx, OCEAN_PHASE_ANALYSIS, 0.0, t0);
  return err;
}

/* NARROW routes by the upper bound, UPPER_BOUND by OceanPredictBound, ESTIMATE by the sketches' estimate. */
static OceanError OceanCpuPredict(OceanContext ctx, OceanStage *st, const OceanCSR *A, const OceanCSR *B)
{
  OceanError err;
  int64_t    i;
  double     t0;

  if (st->dec.workflow != OCEAN_WORKFLOW_ESTIMATE) {
    for (i = 0; i < st->nrows; i++)
      st->tmp.predicted[i] = OceanPredictBound(st->set->bins, st->set->warp_size, st->set->options.hash_load,
                                               &st->an.rows[i], st->dec.bound_factor);
    return OCEAN_SUCCESS;
  }
  t0                   = OceanPhaseBegin(ctx, OCEAN_PHASE_ESTIMATE);
  err                  = OceanCpuEstimate(ctx, st, A, B);
  st->stats.t_estimate = OceanPhaseEnd(ctx, OCEAN_PHASE_ESTIMATE, 0.0, t0);
  return err;
}

/* The exact routes for numeric-only reuse (the exact workflow's numeric routes already are) and the statistics over
   rows. */
static OceanError OceanCpuFinish(OceanContext ctx, OceanStage *st)
{
  OceanStats *s = &st->stats;

  OceanCall(OceanMalloc(st->nrows, &st->exact, "exact routes"));
  if (st->dec.workflow == OCEAN_WORKFLOW_EXACT)
    memcpy(st->exact, st->tmp.routes, (size_t)st->nrows * sizeof(OceanRoute));
  else OceanStageRouteRows(st, OCEAN_PASS_NUMERIC, st->tmp.counts, st->exact);
  s->packed_sort_keys = OceanWorkspacesAllPacked(OceanCpuCtx(ctx)->ws, OceanCpuCtx(ctx)->nws);
  {
    OceanHeavyCounts hc;
    OceanWorkspacesHeavyCounts(OceanCpuCtx(ctx)->ws, OceanCpuCtx(ctx)->nws, &hc);
    OceanStageSetHeavyCounts(st, &hc);
  }
  OceanStageCountBins(st, st->tmp.routes, s);
  if (s->workflow == OCEAN_WORKFLOW_ESTIMATE) s->estimate_mean_rel_error = OceanStageEstimateError(st);
  st->host_structure = 1;
  st->host_values    = 1;
  return OCEAN_SUCCESS;
}

/* ------------------------------------------------------------------------------------------------ numeric reuse */

/* Every row's values straight into C's known structure (OceanCpuRowKnown: no routes, no sort, no compaction). */
static OceanError OceanCpuNumericReuse(OceanStage *st, const OceanCSR *A, const OceanCSR *B, OceanWorkspace *ws)
{
  OceanParallelStatus ps = {0, OCEAN_SUCCESS, 0, 0};
  int64_t             i;

#pragma omp parallel for schedule(dynamic, OCEAN_ROW_CHUNK)
  for (i = 0; i < st->nrows; i++) {
    OceanWorkspace *w     = &ws[OceanThreadNum()];
    int64_t         bytes = 0;
    OceanError      err;
    if (OceanParallelFailed(&ps)) continue;
    err = OceanCpuRowKnown(w, A, B, i, st->colidx + st->rowptr[i], st->rowptr[i + 1] - st->rowptr[i],
                           st->values + st->rowptr[i], &bytes);
    if (err) OceanParallelFail(&ps, err, i, bytes);
  }
  return OceanParallelReport(&ps, st->name);
}

static OceanError OceanCpuNumeric(OceanContext ctx, OceanStage *st, const OceanCSR *A, const OceanCSR *B)
{
  OceanWorkspace *ws;
  OceanError      err;
  double          t0;

  OceanCall(OceanCpuWorkspaces(ctx, st->set, &ws));
  t0                  = OceanWallTime();
  err                 = OceanCpuNumericReuse(st, A, B, ws);
  st->stats.t_numeric = OceanWallTime() - t0;
  return err;
}

static void OceanCpuExactCounts(const OceanStage *st, OceanStats *s)
{
  OceanStageCountBins(st, st->exact, s);
}

const OceanBackendOps OceanCpuBackendOps = {
  .name              = "cpu",
  .context_setup     = OceanCpuContextSetup,
  .context_teardown  = OceanCpuContextTeardown,
  .symbolic_begin    = OceanCpuSymbolicBegin,
  .analyze           = OceanCpuAnalyze,
  .predict           = OceanCpuPredict,
  .over_allocated    = OceanCpuOverAllocated,
  .exact             = OceanCpuExact,
  .exact_in_one_pass = OceanCpuExactOnePassFits,
  .finish            = OceanCpuFinish,
  .numeric           = OceanCpuNumeric,
  .exact_counts      = OceanCpuExactCounts,
};
