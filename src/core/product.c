/*
  ocean_product.c - product plans.  A plan runs one or two SpGEMM "stages"; a stage runs the analysis, the
  selected workflow and keeps what depends only on the operands' structure (C's structure, exact routes) for
  numeric-only reuse.

    UPPER_BOUND  route by the upper bound -> numeric into over-allocated slots -> compaction
    ESTIMATE     sketches of B (cached) -> merged estimate x coefficient -> route -> numeric into slots ->
                 overflowed rows: exact count, re-route, recompute into an exactly sized buffer -> compaction
    EXACT        symbolic by products / conservative CR (retrying rows that overflow) -> exact routes ->
                 numeric straight into C
  The over-allocating workflows switch to EXACT when the slots would pass max_output_nnz, and every workflow
  refuses an nnz(C) above it before allocating C.
*/
#include "core/stage.h"
#include <math.h>

#define OCEAN_TAG_TRANSPOSE 0x5452414e53504f53ULL /* "TRANSPOS" */
#define OCEAN_TAG_AP        0x4f4345414e5f4150ULL /* "OCEAN_AP" */

typedef struct {
  int      valid;
  uint64_t id; /* the source's structure id */
  int64_t  nrows, ncols, nnz; /* of the source */
  int64_t *rowptr;
  int32_t *colidx;
  double  *values;
  int64_t *perm; /* values[t] = source values[perm[t]] */
  OceanCSR csr;
} OceanTranspose;

struct _p_OceanProduct {
  OceanContext     ctx;
  OceanProductType type;
  int              nstages;
  OceanStage       stage[2];
  OceanTranspose   trans;  /* A^T (AtB), P^T (PtAP on the CPU backend) */
  OceanCudaTransposeCache dtrans; /* P^T on the device (PtAP on the CUDA backend) */
  int              has_symbolic;
  uint64_t         a_id, b_id, options_state;
  OceanMemoryType  mtype; /* of the operands (OceanProductSetOperandMemType) */
};

/* ------------------------------------------------------------------------------------------------ helpers */

static void OceanStageScratchFree(OceanStageScratch *t)
{
  OceanFree(t->routes);
  OceanFree(t->predicted);
  OceanFree(t->estimate);
  OceanFree(t->offsets);
  OceanFree(t->counts);
  OceanFree(t->flags);
  OceanFree(t->list);
  OceanFree(t->bcols);
  OceanFree(t->fcols);
  OceanFree(t->bvals);
  OceanFree(t->fvals);
  OceanFree(t->sketches);
}

static void OceanStageFreeC(OceanStage *st)
{
  OceanFree(st->rowptr);
  OceanFree(st->colidx);
  OceanFree(st->values);
  OceanFree(st->exact);
  st->valid          = 0;
  st->host_structure = 0;
  st->host_values    = 0;
}

static void OceanStageDestroy(OceanContext ctx, OceanStage *st)
{
  if (st->dev) OceanCudaStageDestroy(ctx, st);
  OceanStageFreeC(st);
  OceanStageScratchFree(&st->tmp);
  OceanAnalysisDestroy(&st->an);
  OceanFree(st->rows);
}

/* Exclusive prefix sum of n counts into off[0..n]; serial so it is the same for every thread count. */
static int64_t OceanPrefixSum(const int64_t *counts, int64_t n, int64_t *off)
{
  int64_t i;
  off[0] = 0;
  for (i = 0; i < n; i++) off[i + 1] = off[i] + counts[i];
  return off[n];
}

OceanError OceanStageCheckNnz(OceanContext ctx, const OceanStage *st, int64_t nnz)
{
  OceanCheck(nnz <= ctx->options.max_output_nnz, OCEAN_ERR_INDEX_OVERFLOW, "%s: C (%lld x %lld) has %lld nonzeros, more than max_output_nnz = %lld", st->name,
             (long long)st->nrows, (long long)st->ncols, (long long)nnz, (long long)ctx->options.max_output_nnz);
  return OCEAN_SUCCESS;
}

/* C's row offsets from exact counts, after the size check; then its column and value arrays. */
static OceanError OceanStageAllocC(OceanContext ctx, OceanStage *st, const int64_t *counts)
{
  int64_t i, nnz = 0;

  for (i = 0; i < st->nrows; i++) nnz += counts[i];
  OceanCall(OceanStageCheckNnz(ctx, st, nnz));
  OceanCall(OceanMalloc(st->nrows + 1, &st->rowptr, "C row offsets"));
  OceanCall(OceanMalloc(nnz, &st->colidx, "C column indices"));
  OceanCall(OceanMalloc(nnz, &st->values, "C values"));
  st->nnz = OceanPrefixSum(counts, st->nrows, st->rowptr);
  return OCEAN_SUCCESS;
}

/* Routes every row by predicted[i] in the given phase (the NARROW workflow has its single route). */
static void OceanStageRouteRows(OceanContext ctx, const OceanStage *st, OceanPass ph, const int64_t *predicted, OceanRoute *routes)
{
  int64_t i;
  if (st->dec.workflow == OCEAN_WORKFLOW_NARROW) {
#pragma omp parallel for schedule(static)
    for (i = 0; i < st->nrows; i++) OceanRouteNarrow(predicted[i], &st->an.rows[i], &routes[i]);
    return;
  }
#pragma omp parallel for schedule(static)
  for (i = 0; i < st->nrows; i++) OceanRouteRow(ctx, ph, predicted[i], &st->an.rows[i], &routes[i]);
}

/* Rows per bin and per accumulator of the routes (the CUDA backend reduces the same on the device:
   OceanCudaRouteCounts). */
static void OceanCountBins(OceanStats *s, int64_t nrows, const OceanRoute *routes)
{
  int64_t i;

  memset(s->rows_per_bin, 0, sizeof(s->rows_per_bin));
  s->dense_rows = s->hash_rows = s->esc_rows = s->global_rows = 0;
  for (i = 0; i < nrows; i++) {
    s->rows_per_bin[routes[i].bin]++;
    switch ((OceanAccumulator)routes[i].acc) {
    case OCEAN_ACC_DENSE: s->dense_rows++; break;
    case OCEAN_ACC_HASH: s->hash_rows++; break;
    case OCEAN_ACC_ESC: s->esc_rows++; break;
    case OCEAN_ACC_GLOBAL_HASH:
    case OCEAN_ACC_GLOBAL_DENSE: s->global_rows++; break;
    case OCEAN_ACC_NONE: break;
    }
  }
}

static void OceanStageCountBins(OceanStage *st, const OceanRoute *routes) { OceanCountBins(&st->stats, st->nrows, routes); }

/* ------------------------------------------------------------------------------------------------ workflows */

/* Numeric pass of the over-allocating workflows: each row into its slot, overflow flagged. */
static OceanError OceanStageNumericIntoSlots(OceanContext ctx, OceanStage *st, const OceanCSR *A, const OceanCSR *B, OceanWorkspace *ws)
{
  OceanStageScratch  *t  = &st->tmp;
  OceanParallelStatus ps = {0, OCEAN_SUCCESS, 0, 0};
  int64_t             i;

#pragma omp parallel for schedule(dynamic, OCEAN_ROW_CHUNK)
  for (i = 0; i < st->nrows; i++) {
    int64_t    bytes = 0;
    int        overflow;
    OceanError err;
    if (OceanParallelFailed(&ps)) continue;
    err = OceanCpuRow(&ws[OceanThreadNum()], A, B, i, &st->an.rows[i], &t->routes[i], st->dec.bitmap_query, t->bcols + t->offsets[i], t->bvals + t->offsets[i], &t->counts[i],
                      &overflow, &bytes);
    if (err) OceanParallelFail(&ps, err, i, bytes);
    t->flags[i] = (uint8_t)overflow;
  }
  return OceanParallelReport(&ps, st->name);
}

/*
  Fallback for rows whose estimate was too small: their exact count (symbolic accumulators, from twice the slot
  that overflowed), then C's size check, then each is re-routed by its exact count and computed into an exactly
  sized buffer.  Their fallback offsets replace their slot offsets.
*/
static OceanError OceanStageFallback(OceanContext ctx, OceanStage *st, const OceanCSR *A, const OceanCSR *B, OceanWorkspace *ws, int64_t n)
{
  OceanStageScratch  *t  = &st->tmp;
  OceanParallelStatus ps = {0, OCEAN_SUCCESS, 0, 0};
  int64_t             i, j, nnz = 0, fb_total = 0;

  OceanCall(OceanMalloc(n, &t->list, "fallback rows"));
  for (i = 0, j = 0; i < st->nrows; i++)
    if (t->flags[i]) t->list[j++] = i;

#pragma omp parallel for schedule(dynamic, 1)
  for (j = 0; j < n; j++) {
    const int64_t  row = t->list[j];
    const OceanRowShape *sh = &st->an.rows[row];
    int64_t        bytes = 0;
    int            retried;
    OceanError     err;
    if (OceanParallelFailed(&ps)) continue;
    err = OceanCpuCountRow(ctx, &ws[OceanThreadNum()], A, B, row, sh, OceanMin64(sh->ub, 2 * t->routes[row].slot), &t->counts[row], &retried, &bytes);
    if (err) OceanParallelFail(&ps, err, row, bytes);
  }
  OceanCall(OceanParallelReport(&ps, st->name));

  for (i = 0; i < st->nrows; i++) nnz += t->counts[i];
  OceanCall(OceanStageCheckNnz(ctx, st, nnz));
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
    OceanRouteRow(ctx, OCEAN_PASS_NUMERIC, t->counts[row], &st->an.rows[row], &r);
    err = OceanCpuRow(&ws[OceanThreadNum()], A, B, row, &st->an.rows[row], &r, st->dec.bitmap_query, t->fcols + t->offsets[row], t->fvals + t->offsets[row], &count, &overflow, &bytes);
    if (!err && (overflow || count != t->counts[row])) err = OCEAN_ERR_STATE; /* cannot happen: the exact count routes without overflow */
    if (err) OceanParallelFail(&ps, err, row, bytes);
  }
  return OceanParallelReport(&ps, st->name);
}

/* Compaction of the slots (and the fallback buffer) into C. */
static OceanError OceanStageCompact(OceanContext ctx, OceanStage *st)
{
  OceanStageScratch *t = &st->tmp;
  int64_t            i;

  OceanCall(OceanStageAllocC(ctx, st, t->counts));
#pragma omp parallel for schedule(dynamic, OCEAN_ROW_CHUNK)
  for (i = 0; i < st->nrows; i++) {
    const int32_t *c = t->flags[i] ? t->fcols : t->bcols;
    const double  *v = t->flags[i] ? t->fvals : t->bvals;
    memcpy(st->colidx + st->rowptr[i], c + t->offsets[i], (size_t)t->counts[i] * sizeof(int32_t));
    memcpy(st->values + st->rowptr[i], v + t->offsets[i], (size_t)t->counts[i] * sizeof(double));
  }
  return OCEAN_SUCCESS;
}

/* UPPER_BOUND, ESTIMATE and NARROW: route by t->predicted, numeric into slots, fallback, compaction.  Sets *switched
   (and does nothing) when the slots would pass max_output_nnz; NARROW never switches (its dense rows are bounded
   by narrow_max_entries, and C's exact size is checked). */
static OceanError OceanStageOverAllocated(OceanContext ctx, OceanStage *st, const OceanCSR *A, const OceanCSR *B, int *switched)
{
  OceanStageScratch *t = &st->tmp;
  OceanStats        *s = &st->stats;
  OceanWorkspace    *ws;
  OceanError         err;
  int64_t            i, total, nover = 0;
  double             t0, fb_products = 0;

  *switched = 0;
  OceanCall(OceanContextGetWorkspaces(ctx, &ws));
  OceanCall(OceanMalloc(st->nrows, &t->routes, "routes"));
  OceanCall(OceanMalloc(st->nrows + 1, &t->offsets, "slot offsets"));
  OceanStageRouteRows(ctx, st, OCEAN_PASS_NUMERIC, t->predicted, t->routes);
  t->offsets[0] = 0;
  for (i = 0; i < st->nrows; i++) t->offsets[i + 1] = t->offsets[i] + t->routes[i].slot;
  total = t->offsets[st->nrows];
  if (total > ctx->options.max_output_nnz && st->dec.workflow != OCEAN_WORKFLOW_NARROW) {
    *switched = 1;
    OceanFree(t->routes);
    return OCEAN_SUCCESS;
  }
  s->allocated_entries = total;
  OceanCall(OceanMalloc(total, &t->bcols, "over-allocated columns"));
  OceanCall(OceanMalloc(total, &t->bvals, "over-allocated values"));
  OceanCall(OceanMalloc(st->nrows, &t->counts, "row counts"));
  OceanCall(OceanMalloc(st->nrows, &t->flags, "overflow flags"));

  t0           = OceanPhaseBegin(ctx, OCEAN_PHASE_NUMERIC);
  err          = OceanStageNumericIntoSlots(ctx, st, A, B, ws);
  s->t_numeric = OceanPhaseEnd(ctx, OCEAN_PHASE_NUMERIC, err ? 0.0 : 2.0 * (double)st->an.products, t0);
  OceanCall(err);

  for (i = 0; i < st->nrows; i++) {
    nover += t->flags[i];
    if (t->flags[i]) fb_products += (double)st->an.rows[i].products;
  }
  s->overflow_rows = nover;
  if (nover) {
    t0            = OceanPhaseBegin(ctx, OCEAN_PHASE_FALLBACK);
    err           = OceanStageFallback(ctx, st, A, B, ws, nover);
    s->t_fallback = OceanPhaseEnd(ctx, OCEAN_PHASE_FALLBACK, err ? 0.0 : 2.0 * fb_products, t0);
    OceanCall(err);
  }

  t0           = OceanPhaseBegin(ctx, OCEAN_PHASE_COMPACT);
  err          = OceanStageCompact(ctx, st);
  s->t_compact = OceanPhaseEnd(ctx, OCEAN_PHASE_COMPACT, 0.0, t0);
  return err;
}

/* ESTIMATE's predictions: min(ub, ceil(estimate x coefficient)). */
static OceanError OceanStageEstimate(OceanContext ctx, OceanStage *st, const OceanCSR *A, const OceanCSR *B)
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
static OceanError OceanStageExactSymbolic(OceanContext ctx, OceanStage *st, const OceanCSR *A, const OceanCSR *B, OceanWorkspace *ws)
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
    err = OceanCpuCountRow(ctx, &ws[OceanThreadNum()], A, B, i, r, p, &t->predicted[i], &retried, &bytes);
    if (err) OceanParallelFail(&ps, err, i, bytes);
    retries += retried;
  }
  st->stats.symbolic_retry_rows = retries;
  return OceanParallelReport(&ps, st->name);
}

/* EXACT's numeric pass: every row by its exact route straight into C. */
static OceanError OceanStageExactNumeric(OceanContext ctx, OceanStage *st, const OceanCSR *A, const OceanCSR *B, OceanWorkspace *ws)
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
    err = OceanCpuRow(&ws[OceanThreadNum()], A, B, i, &st->an.rows[i], &t->routes[i], st->dec.bitmap_query, st->colidx + st->rowptr[i], st->values + st->rowptr[i], &count,
                      &overflow, &bytes);
    if (!err && (overflow || count != t->predicted[i])) err = OCEAN_ERR_STATE; /* cannot happen: exact routes never overflow */
    if (err) OceanParallelFail(&ps, err, i, bytes);
  }
  return OceanParallelReport(&ps, st->name);
}

/* EXACT: symbolic counts with assisted binning, C allocated exactly, numeric straight into it. */
static OceanError OceanStageExact(OceanContext ctx, OceanStage *st, const OceanCSR *A, const OceanCSR *B)
{
  OceanStageScratch *t = &st->tmp;
  OceanStats        *s = &st->stats;
  OceanWorkspace    *ws;
  OceanError         err;
  double             t0;

  OceanCall(OceanContextGetWorkspaces(ctx, &ws));
  OceanFree(t->routes);
  OceanCall(OceanMalloc(st->nrows, &t->routes, "routes"));
  t0            = OceanPhaseBegin(ctx, OCEAN_PHASE_SYMBOLIC);
  err           = OceanStageExactSymbolic(ctx, st, A, B, ws);
  s->t_symbolic = OceanPhaseEnd(ctx, OCEAN_PHASE_SYMBOLIC, 0.0, t0);
  OceanCall(err);

  OceanCall(OceanStageAllocC(ctx, st, t->predicted)); /* predicted now holds the exact counts */
  s->allocated_entries = st->nnz;
  OceanStageRouteRows(ctx, st, OCEAN_PASS_NUMERIC, t->predicted, t->routes);
  t0           = OceanPhaseBegin(ctx, OCEAN_PHASE_NUMERIC);
  err          = OceanStageExactNumeric(ctx, st, A, B, ws);
  s->t_numeric = OceanPhaseEnd(ctx, OCEAN_PHASE_NUMERIC, err ? 0.0 : 2.0 * (double)st->an.products, t0);
  return err;
}

/* ------------------------------------------------------------------------------------------------ stages */

static void OceanStageRecordOperands(OceanStage *st, const OceanCSR *A, const OceanCSR *B)
{
  st->a_id    = A->structure_id;
  st->b_id    = B->structure_id;
  st->a_nrows = A->nrows;
  st->a_ncols = A->ncols;
  st->a_nnz   = OceanStageOperandNnz(st, 0, A);
  st->b_nrows = B->nrows;
  st->b_ncols = B->ncols;
  st->b_nnz   = OceanStageOperandNnz(st, 1, B);
}

static int OceanStageSameOperands(const OceanStage *st, const OceanCSR *A, const OceanCSR *B)
{
  return st->valid && A->structure_id && B->structure_id && A->structure_id == st->a_id && B->structure_id == st->b_id && A->nrows == st->a_nrows && A->ncols == st->a_ncols &&
         OceanStageOperandNnz(st, 0, A) == st->a_nnz && B->nrows == st->b_nrows && B->ncols == st->b_ncols && OceanStageOperandNnz(st, 1, B) == st->b_nnz;
}

void OceanStageStatsFromAnalysis(OceanStage *st, const OceanCSR *A, const OceanCSR *B)
{
  OceanStats *s = &st->stats;
  int64_t     symbolic_calls = s->symbolic_calls, numeric_calls = s->numeric_calls;
  double      t_upload = s->t_upload, t_analysis = s->t_analysis; /* the upload and analysis precede this */
  int64_t     uploaded = s->uploaded_bytes;

  memset(s, 0, sizeof(*s));
  s->t_upload        = t_upload;
  s->t_analysis      = t_analysis;
  s->uploaded_bytes  = uploaded;
  s->symbolic_calls  = symbolic_calls + 1;
  s->numeric_calls   = numeric_calls;
  s->workflow        = st->dec.workflow;
  s->workflow_forced = st->dec.forced;
  s->nrows           = A->nrows;
  s->ncols           = B->ncols;
  s->nnz_a           = OceanStageOperandNnz(st, 0, A);
  s->nnz_b           = OceanStageOperandNnz(st, 1, B);
  s->products        = st->an.products;
  s->bound_nnz       = st->an.bound_total;
  s->er              = st->an.er;
  s->cr_sampled      = st->an.cr_sampled;
  s->cr_mean         = st->an.cr_mean;
  s->cr_std          = st->an.cr_std;
  s->cr_conservative = st->an.cr_conservative;
  s->sampled_rows    = st->an.sampled_rows;
  s->bitmap_query    = st->dec.bitmap_query;
}

/* Nonzeros of row i of C: the exact counts of the run when it kept them (the CUDA backend always does: its C may
   not be on the host), else C's row offsets. */
static inline int64_t OceanStageRowNnz(const OceanStage *st, int64_t i)
{
  return st->tmp.counts ? st->tmp.counts[i] : st->rowptr[i + 1] - st->rowptr[i];
}

/* The mean relative error of the estimates (estimate workflow), serial: independent of the thread count. */
static double OceanStageEstimateError(const OceanStage *st)
{
  const OceanStageScratch *t   = &st->tmp;
  double                   sum = 0;
  int64_t                  i, n = 0;

  for (i = 0; i < st->nrows; i++) {
    int64_t nnz = OceanStageRowNnz(st, i);
    if (!nnz) continue;
    sum += OceanEstimateRelError(t->predicted[i], st->dec.coefficient, nnz);
    n++;
  }
  return n ? sum / (double)n : 0.0;
}

/*
  The CUDA backend's debug check (record_rows: the per-row arrays are on the host): the statistics it reduced on the
  device against the host's sums of the downloaded rows.  Integer statistics must agree exactly; the estimate error
  (a tree sum on the device, a serial sum here) to 1e-12.
*/
static OceanError OceanStageCheckDeviceStats(OceanStage *st)
{
  const OceanStageScratch *t = &st->tmp;
  const OceanStats        *s = &st->stats;
  OceanStats               h = *s;
  int64_t                  i, products = 0, nover = 0, slots = 0, nnz = 0;
  int                      b;

  OceanCountBins(&h, st->nrows, t->routes);
  for (b = 0; b < OCEAN_NUM_BINS; b++)
    OceanCheck(h.rows_per_bin[b] == s->rows_per_bin[b], OCEAN_ERR_STATE, "%s: device reduction: bin %s has %lld rows, the host counts %lld", st->name, OceanBinName((OceanBin)b),
               (long long)s->rows_per_bin[b], (long long)h.rows_per_bin[b]);
  OceanCheck(h.dense_rows == s->dense_rows && h.hash_rows == s->hash_rows && h.esc_rows == s->esc_rows && h.global_rows == s->global_rows, OCEAN_ERR_STATE,
             "%s: device reduction: accumulator rows dense/hash/esc/global %lld/%lld/%lld/%lld, the host counts %lld/%lld/%lld/%lld", st->name, (long long)s->dense_rows,
             (long long)s->hash_rows, (long long)s->esc_rows, (long long)s->global_rows, (long long)h.dense_rows, (long long)h.hash_rows, (long long)h.esc_rows,
             (long long)h.global_rows);
  for (i = 0; i < st->nrows; i++) {
    products += st->an.rows[i].products;
    nnz += t->counts[i];
    if (t->flags) nover += t->flags[i];
    slots += t->routes[i].slot;
  }
  OceanCheck(products == s->products, OCEAN_ERR_STATE, "%s: device reduction: %lld products, the host sums %lld", st->name, (long long)s->products, (long long)products);
  OceanCheck(nnz == s->nnz_c, OCEAN_ERR_STATE, "%s: device reduction: nnz(C) %lld, the host sums %lld", st->name, (long long)s->nnz_c, (long long)nnz);
  OceanCheck(!t->flags || nover == s->overflow_rows, OCEAN_ERR_STATE, "%s: device reduction: %lld overflow rows, the host counts %lld", st->name, (long long)s->overflow_rows,
             (long long)nover);
  OceanCheck(s->workflow == OCEAN_WORKFLOW_EXACT || slots == s->allocated_entries, OCEAN_ERR_STATE, "%s: device reduction: %lld allocated entries, the host sums %lld", st->name,
             (long long)s->allocated_entries, (long long)slots);
  if (s->workflow == OCEAN_WORKFLOW_ESTIMATE) {
    double e = OceanStageEstimateError(st);
    OceanCheck(fabs(e - s->estimate_mean_rel_error) <= 1e-12 * fmax(1.0, fabs(e)), OCEAN_ERR_STATE, "%s: device reduction: estimate error %.17g, the host's %.17g", st->name,
               s->estimate_mean_rel_error, e);
  }
  return OCEAN_SUCCESS;
}

/* Statistics and row records once C is known.  The CUDA backend has already reduced the per-row statistics (bins,
   accumulators, estimate error) on the device, and its per-row arrays are on the host only with record_rows. */
static OceanError OceanStageFinishStats(OceanContext ctx, OceanStage *st, OceanWorkspace *ws)
{
  OceanStageScratch *t = &st->tmp;
  OceanStats        *s = &st->stats;
  int64_t            i;

  s->nnz_c            = st->nnz;
  s->cr               = st->nnz ? (double)s->products / (double)st->nnz : 0.0;
  s->packed_sort_keys = ws ? OceanWorkspacesAllPacked(ws, ctx->nws) : 0; /* the CUDA backend sorts with CUB */
  if (ctx->backend != OCEAN_BACKEND_CUDA) {
    OceanStageCountBins(st, t->routes);
    if (s->workflow == OCEAN_WORKFLOW_ESTIMATE) s->estimate_mean_rel_error = OceanStageEstimateError(st);
  }
  if (!ctx->options.record_rows) return OCEAN_SUCCESS;
  if (ctx->backend == OCEAN_BACKEND_CUDA) OceanCall(OceanStageCheckDeviceStats(st));
  OceanFree(st->rows);
  OceanCall(OceanMalloc(st->nrows, &st->rows, "row records"));
  for (i = 0; i < st->nrows; i++) {
    OceanRowInfo *r = &st->rows[i];
    r->products     = st->an.rows[i].products;
    r->predicted    = t->predicted[i];
    r->nnz          = OceanStageRowNnz(st, i);
    r->slot         = s->workflow == OCEAN_WORKFLOW_EXACT ? r->nnz : t->routes[i].slot;
    r->estimate     = t->estimate ? t->estimate[i] : 0.0;
    r->bin          = t->routes[i].bin;
    r->accumulator  = t->routes[i].acc;
    r->overflowed   = t->flags ? t->flags[i] : 0;
  }
  return OCEAN_SUCCESS;
}

static OceanError OceanStageSymbolic_Private(OceanContext ctx, OceanStage *st, const OceanCSR *A, const OceanCSR *B)
{
  OceanWorkspace *ws;
  OceanError      err;
  int64_t         i;
  int             switched = 0;
  double          t0, seconds;

  OceanStageFreeC(st);
  OceanFree(st->rows);
  st->nrows = A->nrows;
  st->ncols = B->ncols;
  st->nnz   = 0;
  OceanCall(OceanSelectNarrow(&ctx->options, st->name, A->nrows, B->nrows, B->ncols, OceanStageOperandNnz(st, 1, B), &st->narrow));
  if (ctx->backend == OCEAN_BACKEND_CUDA) {
    OceanCall(OceanCudaStageSymbolic(ctx, st, A, B));
    OceanCall(OceanStageFinishStats(ctx, st, NULL));
    OceanStageRecordOperands(st, A, B);
    st->valid = 1;
    return OCEAN_SUCCESS;
  }
  OceanCall(OceanContextGetWorkspaces(ctx, &ws));
  OceanWorkspacesResetPacked(ws, ctx->nws);

  t0 = OceanPhaseBegin(ctx, OCEAN_PHASE_ANALYSIS);
  if (st->narrow) { /* the shapes only: the statistics and row records of the device's NARROW pass */
    err = OceanAnalyzeShapes(A, B, &st->an);
    OceanDecideNarrow(&ctx->options, &st->dec);
  } else {
    err = OceanAnalyze(ctx, A, B, &st->an);
    if (!err) OceanSelectWorkflow(&ctx->options, &st->an, &st->dec);
  }
  seconds = OceanPhaseEnd(ctx, OCEAN_PHASE_ANALYSIS, 0.0, t0);
  OceanCall(err);
  OceanStageStatsFromAnalysis(st, A, B);
  st->stats.t_analysis = seconds;

  OceanCall(OceanMalloc(st->nrows, &st->tmp.predicted, "predicted sizes"));
  if (st->dec.workflow == OCEAN_WORKFLOW_UPPER_BOUND || st->dec.workflow == OCEAN_WORKFLOW_NARROW) {
    for (i = 0; i < st->nrows; i++) st->tmp.predicted[i] = st->an.rows[i].ub;
    OceanCall(OceanStageOverAllocated(ctx, st, A, B, &switched));
  } else if (st->dec.workflow == OCEAN_WORKFLOW_ESTIMATE) {
    t0                   = OceanPhaseBegin(ctx, OCEAN_PHASE_ESTIMATE);
    err                  = OceanStageEstimate(ctx, st, A, B);
    st->stats.t_estimate = OceanPhaseEnd(ctx, OCEAN_PHASE_ESTIMATE, 0.0, t0);
    OceanCall(err);
    OceanCall(OceanStageOverAllocated(ctx, st, A, B, &switched));
  }
  if (switched) {
    st->stats.switched_to_exact = 1;
    st->dec.workflow            = OCEAN_WORKFLOW_EXACT;
    st->stats.workflow          = OCEAN_WORKFLOW_EXACT;
  }
  if (st->dec.workflow == OCEAN_WORKFLOW_EXACT) OceanCall(OceanStageExact(ctx, st, A, B));

  /* exact routes for numeric-only reuse: the exact workflow's numeric routes already are */
  if (st->dec.workflow == OCEAN_WORKFLOW_EXACT) {
    OceanCall(OceanMalloc(st->nrows, &st->exact, "exact routes"));
    memcpy(st->exact, st->tmp.routes, (size_t)st->nrows * sizeof(OceanRoute));
  } else {
    OceanCall(OceanMalloc(st->nrows, &st->exact, "exact routes"));
    OceanStageRouteRows(ctx, st, OCEAN_PASS_NUMERIC, st->tmp.counts, st->exact);
  }
  OceanCall(OceanStageFinishStats(ctx, st, ws));
  OceanStageRecordOperands(st, A, B);
  st->valid          = 1;
  st->host_structure = 1;
  st->host_values    = 1;
  return OCEAN_SUCCESS;
}

static OceanError OceanStageSymbolic(OceanContext ctx, OceanStage *st, const OceanCSR *A, const OceanCSR *B)
{
  OceanError err;

  st->stats.t_upload = st->stats.t_download = 0;
  st->stats.uploaded_bytes                  = 0;
  err                = OceanStageSymbolic_Private(ctx, st, A, B);
  OceanStageScratchFree(&st->tmp);
  if (err) OceanStageFreeC(st);
  return err;
}

/* Every row's values straight into C's known structure (OceanCpuRowKnown: no routes, no sort, no compaction). */
static OceanError OceanStageNumericReuse(OceanStage *st, const OceanCSR *A, const OceanCSR *B, OceanWorkspace *ws)
{
  OceanParallelStatus ps = {0, OCEAN_SUCCESS, 0, 0};
  int64_t             i;

#pragma omp parallel for schedule(dynamic, OCEAN_ROW_CHUNK)
  for (i = 0; i < st->nrows; i++) {
    OceanWorkspace *w     = &ws[OceanThreadNum()];
    int64_t         bytes = 0;
    OceanError      err;
    if (OceanParallelFailed(&ps)) continue;
    err = OceanCpuRowKnown(w, A, B, i, st->colidx + st->rowptr[i], st->rowptr[i + 1] - st->rowptr[i], st->values + st->rowptr[i], &bytes);
    if (err) OceanParallelFail(&ps, err, i, bytes);
  }
  return OceanParallelReport(&ps, st->name);
}

/* Values only, into C's structure, with the exact routes. */
static OceanError OceanStageNumeric(OceanContext ctx, OceanStage *st, const OceanCSR *A, const OceanCSR *B)
{
  OceanWorkspace *ws;
  OceanStats     *s = &st->stats;
  OceanError      err;
  double          t0, seconds;

  st->stats.t_upload = st->stats.t_download = 0;
  st->stats.uploaded_bytes                  = 0;
  OceanCheck(OceanStageSameOperands(st, A, B), OCEAN_ERR_STATE,
             "%s: numeric needs the operands of the last symbolic phase (structure ids %llu, %llu; sizes %lld x %lld with %lld nonzeros and %lld x %lld with %lld), got ids %llu, %llu, sizes %lld x %lld (%lld) and %lld x %lld (%lld)",
             st->name, (unsigned long long)st->a_id, (unsigned long long)st->b_id, (long long)st->a_nrows, (long long)st->a_ncols, (long long)st->a_nnz, (long long)st->b_nrows,
             (long long)st->b_ncols, (long long)st->b_nnz, (unsigned long long)A->structure_id, (unsigned long long)B->structure_id, (long long)A->nrows, (long long)A->ncols,
             (long long)OceanStageOperandNnz(st, 0, A), (long long)B->nrows, (long long)B->ncols, (long long)OceanStageOperandNnz(st, 1, B));
  if (ctx->backend == OCEAN_BACKEND_CUDA) {
    ws      = NULL;
    t0      = OceanPhaseBegin(ctx, OCEAN_PHASE_NUMERIC);
    err     = OceanCudaStageNumeric(ctx, st, A, B); /* sets st->stats.t_numeric from CUDA events */
    seconds = OceanPhaseEnd(ctx, OCEAN_PHASE_NUMERIC, err ? 0.0 : 2.0 * (double)st->an.products, t0);
    OceanCall(err);
    seconds = st->stats.t_numeric;
  } else {
    OceanCall(OceanContextGetWorkspaces(ctx, &ws));
    t0      = OceanPhaseBegin(ctx, OCEAN_PHASE_NUMERIC);
    err     = OceanStageNumericReuse(st, A, B, ws);
    seconds = OceanPhaseEnd(ctx, OCEAN_PHASE_NUMERIC, err ? 0.0 : 2.0 * (double)st->an.products, t0);
    OceanCall(err);
  }

  /* the statistics now describe this call: nothing estimated, allocated, compacted or sorted (both backends add
     into C's known structure); the bins are those of the plan's exact routes */
  s->numeric_calls++;
  s->t_analysis = s->t_estimate = s->t_symbolic = s->t_fallback = s->t_compact = s->t_transpose = 0;
  s->t_numeric                                                                = seconds;
  s->overflow_rows = s->symbolic_retry_rows = 0;
  s->switched_to_exact = s->sketches_reused = 0;
  s->allocated_entries                      = st->nnz;
  s->packed_sort_keys                       = 0;
  if (ctx->backend == OCEAN_BACKEND_CUDA) OceanCudaStageExactCounts(st, s); /* reduced on the device by the symbolic call */
  else OceanStageCountBins(st, st->exact);
  return OCEAN_SUCCESS;
}

/* ------------------------------------------------------------------------------------------------ transposes */

static void OceanTransposeDestroy(OceanTranspose *T)
{
  OceanFree(T->rowptr);
  OceanFree(T->colidx);
  OceanFree(T->values);
  OceanFree(T->perm);
  T->valid = 0;
}

/* The transpose of M (rows sorted).  Cached by structure id: the same structure only gathers the new values
   through the permutation; anything else rebuilds. */
static OceanError OceanTransposeUpdate(OceanTranspose *T, const OceanCSR *M)
{
  const int64_t nnz = OceanCSRNnz(M);
  int64_t       i, t;

  if (T->valid && M->structure_id && T->id == M->structure_id && T->nrows == M->nrows && T->ncols == M->ncols && T->nnz == nnz) {
#pragma omp parallel for schedule(static)
    for (t = 0; t < nnz; t++) T->values[t] = M->values[T->perm[t]];
  } else {
    int64_t *next;
    OceanTransposeDestroy(T);
    OceanCall(OceanCalloc(M->ncols + 1, &T->rowptr, "transpose row offsets"));
    OceanCall(OceanMalloc(nnz, &T->colidx, "transpose column indices"));
    OceanCall(OceanMalloc(nnz, &T->values, "transpose values"));
    OceanCall(OceanMalloc(nnz, &T->perm, "transpose permutation"));
    for (t = 0; t < nnz; t++) T->rowptr[M->colidx[t] + 1]++;
    for (i = 0; i < M->ncols; i++) T->rowptr[i + 1] += T->rowptr[i];
    OceanCall(OceanMalloc(M->ncols, &next, "transpose cursor"));
    memcpy(next, T->rowptr, (size_t)M->ncols * sizeof(int64_t));
    for (i = 0; i < M->nrows; i++) /* rows in order: every row of the transpose comes out sorted */
      for (t = M->rowptr[i]; t < M->rowptr[i + 1]; t++) {
        int64_t d    = next[M->colidx[t]]++;
        T->colidx[d] = (int32_t)i;
        T->perm[d]   = t;
        T->values[d] = M->values[t];
      }
    OceanFree(next);
    T->id    = M->structure_id;
    T->nrows = M->nrows;
    T->ncols = M->ncols;
    T->nnz   = nnz;
    T->valid = 1;
  }
  T->csr.nrows        = M->ncols;
  T->csr.ncols        = M->nrows;
  T->csr.rowptr       = T->rowptr;
  T->csr.colidx       = T->colidx;
  T->csr.values       = T->values;
  T->csr.structure_id = OceanDeriveStructureId(M->structure_id, 1, OCEAN_TAG_TRANSPOSE);
  T->csr.values_id    = M->values_id ? OceanDeriveStructureId(M->values_id, 1, OCEAN_TAG_TRANSPOSE) : 0; /* gathered from M's values */
  return OCEAN_SUCCESS;
}

static OceanError OceanProductTranspose(OceanProduct prod, const OceanCSR *M, double *seconds)
{
  double     t0  = OceanPhaseBegin(prod->ctx, OCEAN_PHASE_TRANSPOSE);
  OceanError err = OceanTransposeUpdate(&prod->trans, M);
  *seconds       = OceanPhaseEnd(prod->ctx, OCEAN_PHASE_TRANSPOSE, 0.0, t0);
  return err;
}

/* ------------------------------------------------------------------------------------------------ plans */

OceanError OceanProductCreate(OceanContext ctx, OceanProductType type, OceanProduct *prod)
{
  OceanProduct p;

  OceanCheck(ctx && prod, OCEAN_ERR_ARG, "OceanProductCreate: NULL argument");
  OceanCheck(type >= OCEAN_PRODUCT_AB && type <= OCEAN_PRODUCT_PtAP, OCEAN_ERR_ARG, "OceanProductCreate: unknown product type %d", (int)type);
  OceanCall(OceanCalloc(1, &p, "OceanProductCreate: plan"));
  p->ctx     = ctx;
  p->type    = type;
  p->nstages = type == OCEAN_PRODUCT_PtAP ? 2 : 1;
  if (type == OCEAN_PRODUCT_AB) p->stage[0].name = "AB";
  else if (type == OCEAN_PRODUCT_AtB) p->stage[0].name = "AtB (A^T*B)";
  else {
    p->stage[0].name = "PtAP stage 0 (A*P)";
    p->stage[1].name = "PtAP stage 1 (P^T*(AP))";
  }
  *prod = p;
  return OCEAN_SUCCESS;
}

OceanError OceanProductDestroy(OceanProduct *prod)
{
  if (!prod || !*prod) return OCEAN_SUCCESS;
  OceanStageDestroy((*prod)->ctx, &(*prod)->stage[0]);
  OceanStageDestroy((*prod)->ctx, &(*prod)->stage[1]);
  OceanTransposeDestroy(&(*prod)->trans);
  OceanCudaTransposeDestroy((*prod)->ctx, &(*prod)->dtrans);
  OceanFree(*prod);
  return OCEAN_SUCCESS;
}

/* The operands, normalized, validated (columns too when full) and with matching sizes for the product type. */
static OceanError OceanProductCheckOperands(OceanProduct prod, const OceanCSR *A_in, const OceanCSR *B_in, int full, OceanCSR *A, OceanCSR *B)
{
  const char *bname = prod->type == OCEAN_PRODUCT_PtAP ? "P" : "B";

  OceanCheck(A_in && B_in, OCEAN_ERR_ARG, "%s product: NULL operand", OceanProductTypeName(prod->type));
  prod->stage[0].dev_operands = prod->stage[1].dev_operands = 0;
  if (prod->mtype == OCEAN_MEMORY_DEVICE) {
    OceanStage *st = &prod->stage[0];
    /* OceanProductSetOperandMemType admitted only AB and PtAP plans of a CUDA context; the host never reads these arrays */
    OceanCheck(prod->ctx->backend == OCEAN_BACKEND_CUDA && prod->type != OCEAN_PRODUCT_AtB, OCEAN_ERR_ARG, "%s product: device-resident operands need an AB or PtAP plan of a CUDA context",
               OceanProductTypeName(prod->type));
    *A = *A_in;
    *B = *B_in;
    if (full) {
      OceanCall(OceanCudaCheckDeviceCSR(prod->ctx, A, "A", &st->op_nnz[0]));
      OceanCall(OceanCudaCheckDeviceCSR(prod->ctx, B, bname, &st->op_nnz[1]));
    } else { /* numeric: the structure ids promise the symbolic call's structure */
      st->op_nnz[0] = st->a_nnz;
      st->op_nnz[1] = st->b_nnz;
    }
    st->dev_operands = 1;
  } else {
    OceanCSRNormalize(A_in, A);
    OceanCSRNormalize(B_in, B);
    if (full) {
      OceanCall(OceanCSRValidate(A, "A"));
      OceanCall(OceanCSRValidate(B, bname));
    }
  }
  switch (prod->type) {
  case OCEAN_PRODUCT_AB:
    OceanCheck(A->ncols == B->nrows, OCEAN_ERR_ARG, "AB product: A is %lld x %lld but B is %lld x %lld (A's columns must equal B's rows)", (long long)A->nrows, (long long)A->ncols,
               (long long)B->nrows, (long long)B->ncols);
    break;
  case OCEAN_PRODUCT_AtB:
    OceanCheck(A->nrows == B->nrows, OCEAN_ERR_ARG, "AtB product: A is %lld x %lld but B is %lld x %lld (A's rows must equal B's rows)", (long long)A->nrows, (long long)A->ncols,
               (long long)B->nrows, (long long)B->ncols);
    break;
  case OCEAN_PRODUCT_PtAP:
    OceanCheck(A->nrows == A->ncols && A->ncols == B->nrows, OCEAN_ERR_ARG, "PtAP product: A is %lld x %lld and P is %lld x %lld (A must be square with as many columns as P has rows)",
               (long long)A->nrows, (long long)A->ncols, (long long)B->nrows, (long long)B->ncols);
    break;
  }
  return OCEAN_SUCCESS;
}

/* C of a stage on the host: the CUDA backend downloads what is stale. */
static OceanError OceanStageHostC(OceanContext ctx, OceanStage *st)
{
  if (st->host_structure && st->host_values) return OCEAN_SUCCESS;
  OceanCheck(ctx->backend == OCEAN_BACKEND_CUDA, OCEAN_ERR_STATE, "%s: C is not on the host", st->name); /* cannot happen */
  return OceanCudaStageDownloadC(ctx, st);
}

/* The CSR view of stage 0's C = A*P (on the host), with a structure id derived from those of A and P. */
static OceanError OceanProductAPView(OceanProduct prod, const OceanCSR *A, const OceanCSR *P, OceanCSR *AP)
{
  OceanStage *st = &prod->stage[0];
  OceanCall(OceanStageHostC(prod->ctx, st));
  AP->nrows            = st->nrows;
  AP->ncols            = st->ncols;
  AP->rowptr           = st->rowptr;
  AP->colidx           = st->colidx;
  AP->values           = st->values;
  AP->structure_id     = OceanDeriveStructureId(A->structure_id, P->structure_id, OCEAN_TAG_AP);
  AP->values_id        = 0;
  return OCEAN_SUCCESS;
}

/* PtAP's second stage on the CUDA backend reads its operands on the device: P^T made there from stage 0's upload of P
   (kept, values gathered on later calls) and A*P, stage 0's C, in place.  Nothing goes through the host. */
static OceanError OceanProductDeviceChain(OceanProduct prod, const OceanCSR *A, const OceanCSR *P, OceanCSR *PT, OceanCSR *AP, double *seconds)
{
  OceanStage *s0 = &prod->stage[0], *s1 = &prod->stage[1];
  OceanCSR    Pd;
  double      t0;
  OceanError  err;

  OceanCall(OceanCudaStageGetDeviceOperand(s0, 1, P, &Pd));
  t0       = OceanPhaseBegin(prod->ctx, OCEAN_PHASE_TRANSPOSE);
  err      = OceanCudaTransposeUpdate(prod->ctx, &prod->dtrans, &Pd, OceanStageOperandNnz(s0, 1, P), PT);
  *seconds = OceanPhaseEnd(prod->ctx, OCEAN_PHASE_TRANSPOSE, 0.0, t0);
  OceanCall(err);
  PT->structure_id = OceanDeriveStructureId(P->structure_id, 1, OCEAN_TAG_TRANSPOSE);
  PT->values_id    = 0; /* device operands: never mirrored */
  AP->nrows        = s0->nrows;
  AP->ncols        = s0->ncols;
  AP->structure_id = OceanDeriveStructureId(A->structure_id, P->structure_id, OCEAN_TAG_AP);
  AP->values_id    = 0;
  OceanCall(OceanCudaStageGetDeviceC(s0, &AP->rowptr, &AP->colidx, &AP->values));
  s1->dev_operands = 1;
  s1->op_nnz[0]    = OceanStageOperandNnz(s0, 1, P);
  s1->op_nnz[1]    = s0->nnz;
  return OCEAN_SUCCESS;
}

static OceanError OceanProductRun(OceanProduct prod, const OceanCSR *A, const OceanCSR *B, int numeric)
{
  OceanContext ctx = prod->ctx;
  OceanError (*run)(OceanContext, OceanStage *, const OceanCSR *, const OceanCSR *) = numeric ? OceanStageNumeric : OceanStageSymbolic;
  double   tt;
  OceanCSR AP;

  switch (prod->type) {
  case OCEAN_PRODUCT_AB: OceanCall(run(ctx, &prod->stage[0], A, B)); break;
  case OCEAN_PRODUCT_AtB:
    OceanCall(OceanProductTranspose(prod, A, &tt));
    OceanCall(run(ctx, &prod->stage[0], &prod->trans.csr, B));
    prod->stage[0].stats.t_transpose = tt;
    break;
  case OCEAN_PRODUCT_PtAP:
    OceanCall(run(ctx, &prod->stage[0], A, B));
    if (ctx->backend == OCEAN_BACKEND_CUDA) {
      OceanCSR PT;
      OceanCall(OceanProductDeviceChain(prod, A, B, &PT, &AP, &tt));
      OceanCall(run(ctx, &prod->stage[1], &PT, &AP));
    } else {
      OceanCall(OceanProductAPView(prod, A, B, &AP));
      OceanCall(OceanProductTranspose(prod, B, &tt));
      OceanCall(run(ctx, &prod->stage[1], &prod->trans.csr, &AP));
    }
    prod->stage[1].stats.t_transpose = tt;
    break;
  }
  return OCEAN_SUCCESS;
}

OceanError OceanProductSymbolic(OceanProduct prod, const OceanCSR *A_in, const OceanCSR *B_in)
{
  OceanCSR   A, B;
  OceanError err;

  OceanCheck(prod, OCEAN_ERR_ARG, "OceanProductSymbolic: NULL plan");
  OceanCall(OceanProductCheckOperands(prod, A_in, B_in, 1, &A, &B));
  /* the same structures (and options) as the last symbolic call: C's structure is known, numeric suffices */
  if (prod->has_symbolic && A.structure_id && B.structure_id && A.structure_id == prod->a_id && B.structure_id == prod->b_id && prod->options_state == prod->ctx->options_state &&
      OceanStageSameOperands(&prod->stage[0], prod->type == OCEAN_PRODUCT_AtB ? &prod->trans.csr : &A, &B))
    return OceanProductRun(prod, &A, &B, 1);

  prod->has_symbolic = 0;
  err                = OceanProductRun(prod, &A, &B, 0);
  if (err) return err;
  prod->has_symbolic  = 1;
  prod->a_id          = A.structure_id;
  prod->b_id          = B.structure_id;
  prod->options_state = prod->ctx->options_state;
  return OCEAN_SUCCESS;
}

OceanError OceanProductNumeric(OceanProduct prod, const OceanCSR *A_in, const OceanCSR *B_in)
{
  OceanCSR A, B;

  OceanCheck(prod, OCEAN_ERR_ARG, "OceanProductNumeric: NULL plan");
  OceanCheck(prod->has_symbolic, OCEAN_ERR_STATE, "OceanProductNumeric: %s plan has no successful symbolic phase", OceanProductTypeName(prod->type));
  OceanCall(OceanProductCheckOperands(prod, A_in, B_in, 0, &A, &B));
  OceanCheck(A.structure_id && B.structure_id && A.structure_id == prod->a_id && B.structure_id == prod->b_id, OCEAN_ERR_STATE,
             "OceanProductNumeric: %s plan: structure ids (%llu, %llu) differ from those of the symbolic phase (%llu, %llu) or are 0; call OceanProductSymbolic",
             OceanProductTypeName(prod->type), (unsigned long long)A.structure_id, (unsigned long long)B.structure_id, (unsigned long long)prod->a_id, (unsigned long long)prod->b_id);
  return OceanProductRun(prod, &A, &B, 1);
}

static OceanStage *OceanProductLastStage(OceanProduct prod) { return &prod->stage[prod->nstages - 1]; }

OceanError OceanProductGetC(OceanProduct prod, int64_t *nrows, int64_t *ncols, int64_t *nnz, const int64_t **rowptr, const int32_t **colidx, const double **values)
{
  OceanStage *st;

  OceanCheck(prod, OCEAN_ERR_ARG, "OceanProductGetC: NULL plan");
  st = OceanProductLastStage(prod);
  OceanCheck(prod->has_symbolic && st->valid, OCEAN_ERR_STATE, "OceanProductGetC: %s plan has no product computed", OceanProductTypeName(prod->type));
  OceanCall(OceanStageHostC(prod->ctx, st));
  if (nrows) *nrows = st->nrows;
  if (ncols) *ncols = st->ncols;
  if (nnz) *nnz = st->nnz;
  if (rowptr) *rowptr = st->rowptr;
  if (colidx) *colidx = st->colidx;
  if (values) *values = st->values;
  return OCEAN_SUCCESS;
}

OceanError OceanProductGetDeviceC(OceanProduct prod, int64_t *nrows, int64_t *ncols, int64_t *nnz, const int64_t **d_rowptr, const int32_t **d_colidx, const double **d_values)
{
  OceanStage    *st;
  const int64_t *rp;
  const int32_t *ci;
  const double  *v;

  OceanCheck(prod, OCEAN_ERR_ARG, "OceanProductGetDeviceC: NULL plan");
  OceanCheck(prod->ctx->backend == OCEAN_BACKEND_CUDA, OCEAN_ERR_NOT_AVAILABLE, "OceanProductGetDeviceC: the %s plan's context is a CPU context: C is on the host (OceanProductGetC)",
             OceanProductTypeName(prod->type));
  st = OceanProductLastStage(prod);
  OceanCheck(prod->has_symbolic && st->valid, OCEAN_ERR_STATE, "OceanProductGetDeviceC: %s plan has no product computed", OceanProductTypeName(prod->type));
  OceanCall(OceanCudaStageGetDeviceC(st, &rp, &ci, &v));
  if (nrows) *nrows = st->nrows;
  if (ncols) *ncols = st->ncols;
  if (nnz) *nnz = st->nnz;
  if (d_rowptr) *d_rowptr = rp;
  if (d_colidx) *d_colidx = ci;
  if (d_values) *d_values = v;
  return OCEAN_SUCCESS;
}

OceanError OceanProductSetOperandMemType(OceanProduct prod, OceanMemoryType mtype)
{
  OceanCheck(prod, OCEAN_ERR_ARG, "OceanProductSetOperandMemType: NULL plan");
  OceanCheck(mtype == OCEAN_MEMORY_HOST || mtype == OCEAN_MEMORY_DEVICE, OCEAN_ERR_ARG, "OceanProductSetOperandMemType: unknown memory type %d", (int)mtype);
  if (mtype == OCEAN_MEMORY_DEVICE) {
    OceanCheck(prod->ctx->backend == OCEAN_BACKEND_CUDA, OCEAN_ERR_ARG,
               "OceanProductSetOperandMemType: device-resident operands need a CUDA context; this %s plan's context is a CPU context (keep the operands on the host)",
               OceanProductTypeName(prod->type));
    OceanCheck(prod->type != OCEAN_PRODUCT_AtB, OCEAN_ERR_ARG, "OceanProductSetOperandMemType: device-resident operands are supported for AB and PtAP plans, not %s (its transpose is made on the host)",
               OceanProductTypeName(prod->type));
  }
  prod->mtype = mtype;
  return OCEAN_SUCCESS;
}

OceanError OceanProductGetOperandMemType(OceanProduct prod, OceanMemoryType *mtype)
{
  OceanCheck(prod && mtype, OCEAN_ERR_ARG, "OceanProductGetOperandMemType: NULL argument");
  *mtype = prod->mtype;
  return OCEAN_SUCCESS;
}

OceanError OceanProductGetNumStages(OceanProduct prod, int *nstages)
{
  OceanCheck(prod && nstages, OCEAN_ERR_ARG, "OceanProductGetNumStages: NULL argument");
  *nstages = prod->nstages;
  return OCEAN_SUCCESS;
}

OceanError OceanProductGetStats(OceanProduct prod, int stage, OceanStats *stats)
{
  OceanCheck(prod && stats, OCEAN_ERR_ARG, "OceanProductGetStats: NULL argument");
  OceanCheck(stage >= 0 && stage < prod->nstages, OCEAN_ERR_ARG, "OceanProductGetStats: stage %d of a %s plan with %d stage(s)", stage, OceanProductTypeName(prod->type), prod->nstages);
  *stats = prod->stage[stage].stats;
  return OCEAN_SUCCESS;
}

OceanError OceanProductGetRowInfo(OceanProduct prod, int stage, const OceanRowInfo **rows, int64_t *nrows)
{
  OceanCheck(prod && rows && nrows, OCEAN_ERR_ARG, "OceanProductGetRowInfo: NULL argument");
  OceanCheck(stage >= 0 && stage < prod->nstages, OCEAN_ERR_ARG, "OceanProductGetRowInfo: stage %d of a %s plan with %d stage(s)", stage, OceanProductTypeName(prod->type), prod->nstages);
  OceanCheck(prod->stage[stage].rows && prod->stage[stage].valid, OCEAN_ERR_STATE, "OceanProductGetRowInfo: %s: no row records (set OceanOptions.record_rows before the symbolic phase)",
             prod->stage[stage].name);
  *rows  = prod->stage[stage].rows;
  *nrows = prod->stage[stage].nrows;
  return OCEAN_SUCCESS;
}

/* ------------------------------------------------------------------------------------------------ counts */

OceanError OceanCountRowNnz(const OceanCSR *A_in, const OceanCSR *B_in, int64_t *nnz)
{
  OceanContext        ctx;
  OceanOptions        opts;
  OceanAnalysis       an;
  OceanWorkspace     *ws;
  OceanParallelStatus ps = {0, OCEAN_SUCCESS, 0, 0};
  OceanCSR            A, B;
  OceanError          err;
  int64_t             i;

  OceanCall(OceanCSRPrepareAB("OceanCountRowNnz", A_in, B_in, &A, &B));
  OceanCheck(nnz || A.nrows == 0, OCEAN_ERR_ARG, "OceanCountRowNnz: NULL output for %lld rows", (long long)A.nrows);

  /* the default configuration's symbolic accumulators, without sampling */
  OceanCall(OceanContextCreate(OCEAN_BACKEND_CPU, NULL, &ctx));
  OceanOptionsDefault(&opts);
  opts.sample_min = opts.sample_max = 0;
  memset(&an, 0, sizeof(an));
  err = OceanContextSetOptions(ctx, &opts);
  if (!err) err = OceanAnalyze(ctx, &A, &B, &an);
  if (!err) err = OceanContextGetWorkspaces(ctx, &ws);
  if (!err) {
#pragma omp parallel for schedule(dynamic, OCEAN_ROW_CHUNK)
    for (i = 0; i < A.nrows; i++) {
      int64_t    bytes = 0;
      int        retried;
      OceanError e;
      if (OceanParallelFailed(&ps)) continue;
      e = OceanCpuCountRow(ctx, &ws[OceanThreadNum()], &A, &B, i, &an.rows[i], an.rows[i].ub, &nnz[i], &retried, &bytes);
      if (e) OceanParallelFail(&ps, e, i, bytes);
    }
    err = OceanParallelReport(&ps, "OceanCountRowNnz");
  }
  OceanAnalysisDestroy(&an);
  OceanContextDestroy(&ctx);
  return err;
}
