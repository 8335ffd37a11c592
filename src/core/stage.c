/*
  stage.c - one SpGEMM stage: the workflow ladder through the backend's steps, numeric-only reuse, the statistics
  and row records, and the stage's C on the host.  Names no backend: they are reached through ctx->ops.

    UPPER_BOUND  route by the upper bound -> numeric into over-allocated slots -> compaction
    ESTIMATE     sketches of B (cached) -> merged estimate x coefficient -> route -> numeric into slots ->
                 overflowed rows: exact count, re-route, recompute into an exactly sized buffer -> compaction
    EXACT        symbolic by products / conservative CR (retrying rows that overflow) -> exact routes ->
                 numeric straight into C
    NARROW       (B with few columns) dense rows of C per row of A -> compaction
  The over-allocating workflows switch to EXACT when the slots would pass max_output_nnz, and every workflow
  refuses an nnz(C) above it before allocating C.
*/
#include "core/backend.h"
#include <math.h>

static void OceanStageScratchFree(OceanStageScratch *t)
{
  OceanFree(t->routes);
  OceanFree(t->predicted);
  OceanFree(t->estimate);
  OceanFree(t->offsets);
  OceanFree(t->owner);
  OceanFree(t->counts);
  OceanFree(t->flags);
  OceanFree(t->list);
  OceanFree(t->fcols);
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
  st->c_released     = 0;
}

void OceanStageDestroy(OceanContext ctx, OceanStage *st)
{
  if (st->dev && ctx->ops->stage_destroy) ctx->ops->stage_destroy(ctx, st);
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

OceanError OceanStageCheckNnz(const OceanStage *st, int64_t nnz)
{
  OceanCheck(nnz <= st->set->options.max_output_nnz, OCEAN_ERR_INDEX_OVERFLOW,
             "%s: C (%lld x %lld) has %lld nonzeros, more than max_output_nnz = %lld", st->name, (long long)st->nrows,
             (long long)st->ncols, (long long)nnz, (long long)st->set->options.max_output_nnz);
  return OCEAN_SUCCESS;
}

OceanError OceanStageAllocRowptr(OceanStage *st, const int64_t *counts)
{
  int64_t i, nnz = 0;

  for (i = 0; i < st->nrows; i++) nnz += counts[i];
  OceanCall(OceanStageCheckNnz(st, nnz));
  OceanCall(OceanMalloc(st->nrows + 1, &st->rowptr, "C row offsets"));
  st->nnz = OceanPrefixSum(counts, st->nrows, st->rowptr);
  return OCEAN_SUCCESS;
}

OceanError OceanStageAllocC(OceanStage *st, const int64_t *counts)
{
  OceanCall(OceanStageAllocRowptr(st, counts));
  OceanCall(OceanMalloc(st->nnz, &st->colidx, "C column indices"));
  OceanCall(OceanMalloc(st->nnz, &st->values, "C values"));
  return OCEAN_SUCCESS;
}

void OceanStageRouteRows(const OceanStage *st, OceanPass ph, const int64_t *predicted, OceanRoute *routes)
{
  int64_t i;
  if (st->dec.workflow == OCEAN_WORKFLOW_NARROW) {
#pragma omp parallel for schedule(static)
    for (i = 0; i < st->nrows; i++) OceanRouteNarrow(predicted[i], &st->an.rows[i], &routes[i]);
    return;
  }
#pragma omp parallel for schedule(static)
  for (i = 0; i < st->nrows; i++) OceanRouteRow(st->set, ph, predicted[i], &st->an.rows[i], &routes[i]);
}

/* The CUDA backend reduces the same on the device (OceanCudaRouteAndCount). */
void OceanStageCountBins(const OceanStage *st, const OceanRoute *routes, OceanStats *s)
{
  const int64_t nrows = st->nrows;
  int64_t       i;

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
    case OCEAN_ACC_MULTISPLIT:
    case OCEAN_ACC_NONE: break;
    }
  }
}

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

int OceanStageSameOperands(const OceanStage *st, const OceanCSR *A, const OceanCSR *B)
{
  return st->valid && A->structure_id && B->structure_id && A->structure_id == st->a_id &&
         B->structure_id == st->b_id && A->nrows == st->a_nrows && A->ncols == st->a_ncols &&
         OceanStageOperandNnz(st, 0, A) == st->a_nnz && B->nrows == st->b_nrows && B->ncols == st->b_ncols &&
         OceanStageOperandNnz(st, 1, B) == st->b_nnz;
}

void OceanStageStatsFromAnalysis(OceanStage *st, const OceanCSR *A, const OceanCSR *B)
{
  OceanStats *s              = &st->stats;
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

void OceanStageSetHeavyCounts(OceanStage *st, const OceanHeavyCounts *c)
{
  OceanStats      *s = &st->stats;
  OceanHeavyLevels L;

  OceanHeavyPlanLevels(&st->set->bins[OCEAN_BIN_HEAVY], st->ncols, &L);
  s->heavy_rows           = c->rows;
  s->heavy_products       = c->products;
  s->heavy_chunks         = c->chunks;
  s->heavy_dense_chunks   = c->dense_chunks;
  s->heavy_split_elements = c->split_elements;
  s->heavy_rows_in_place  = c->rows_in_place;
  s->heavy_batches        = c->batches;
  s->heavy_levels         = c->levels;
  s->heavy_levels_planned = L.levels;
  s->heavy_chunk_columns  = st->set->bins[OCEAN_BIN_HEAVY].dense_columns;
}

/* Nonzeros of row i of C: the exact counts of the run when it kept them (the CUDA backend always does: its C may
   not be on the host), else C's row offsets. */
static inline int64_t OceanStageRowNnz(const OceanStage *st, int64_t i)
{
  return st->tmp.counts ? st->tmp.counts[i] : st->rowptr[i + 1] - st->rowptr[i];
}

double OceanStageEstimateError(const OceanStage *st)
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

/* The row records (record_rows) from the per-row arrays the backend left in st->tmp. */
static OceanError OceanStageRowRecords(OceanStage *st)
{
  OceanStageScratch *t = &st->tmp;
  OceanStats        *s = &st->stats;
  int64_t            i;

  if (!st->set->options.record_rows) return OCEAN_SUCCESS;
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

/* The workflow ladder, the same for every backend: the backend's steps, the decisions of core/analysis.h. */
static OceanError OceanStageLadder(OceanContext ctx, OceanStage *st, const OceanCSR *A, const OceanCSR *B)
{
  const OceanBackendOps *ops      = ctx->ops;
  int                    switched = 0, one_pass = 0;

  OceanCall(ops->analyze(ctx, st, A, B));
  if (st->narrow) OceanDecideNarrow(&st->set->options, &st->dec);
  else OceanSelectWorkflow(&st->set->options, &st->an, &st->dec);
  if (st->dec.workflow == OCEAN_WORKFLOW_ESTIMATE && !st->dec.forced && st->set->options.one_pass_exact &&
      ops->exact_in_one_pass && ops->exact_in_one_pass(st)) {
    st->dec.workflow = OCEAN_WORKFLOW_EXACT; /* one pass: cheaper than the sketches and a pass */
    one_pass         = 1;
  }
  st->dec.bound_factor = OceanDecideBoundFactor(&st->set->options, &st->an, st->dec.workflow);
  OceanStageStatsFromAnalysis(st, A, B);
  st->stats.bound_factor = st->dec.bound_factor;
  if (one_pass) st->stats.switched_to_exact = 3; /* the estimate's place */

  if (st->dec.workflow == OCEAN_WORKFLOW_NARROW && ops->narrow) OceanCall(ops->narrow(ctx, st, A, B));
  else if (st->dec.workflow != OCEAN_WORKFLOW_EXACT) {
    OceanCall(ops->predict(ctx, st, A, B));
    OceanCall(ops->over_allocated(ctx, st, A, B, &switched));
  }
  if (switched) {                           /* the slots would pass max_output_nnz */
    st->stats.switched_to_exact = switched; /* 1: max_output_nnz, 2: device memory */
    st->stats.bound_factor      = 0;
    st->dec.workflow            = OCEAN_WORKFLOW_EXACT;
    st->stats.workflow          = OCEAN_WORKFLOW_EXACT;
  }
  if (st->dec.workflow == OCEAN_WORKFLOW_EXACT) OceanCall(ops->exact(ctx, st, A, B));

  st->stats.nnz_c            = st->nnz;
  st->stats.cr               = st->nnz ? (double)st->stats.products / (double)st->nnz : 0.0;
  st->stats.packed_sort_keys = 0;
  OceanCall(ops->finish(ctx, st));
  return OceanStageRowRecords(st);
}

OceanError OceanStageSymbolic(OceanContext ctx, OceanStage *st, const OceanCSR *A, const OceanCSR *B)
{
  OceanError err;

  st->stats.t_upload = st->stats.t_download = 0;
  st->stats.uploaded_bytes = st->stats.downloaded_bytes = 0;
  OceanStageFreeC(st);
  OceanFree(st->rows);
  st->nrows = A->nrows;
  st->ncols = B->ncols;
  st->nnz   = 0;
  err = OceanSelectNarrow(&st->set->options, st->name, A->nrows, B->nrows, B->ncols, OceanStageOperandNnz(st, 1, B),
                          &st->narrow);
  if (!err) err = ctx->ops->symbolic_begin(ctx, st, A, B);
  if (!err) {
    err = OceanStageLadder(ctx, st, A, B);
    if (ctx->ops->symbolic_end) ctx->ops->symbolic_end(ctx, st, &err);
  }
  OceanStageScratchFree(&st->tmp);
  if (err) {
    OceanStageFreeC(st);
    return err;
  }
  OceanStageRecordOperands(st, A, B);
  st->valid = 1;
  return OCEAN_SUCCESS;
}

/* Values only, into C's structure, with the exact routes. */
OceanError OceanStageNumeric(OceanContext ctx, OceanStage *st, const OceanCSR *A, const OceanCSR *B)
{
  OceanStats *s = &st->stats;
  OceanError  err;
  double      t0, seconds;

  st->stats.t_upload = st->stats.t_download = 0;
  st->stats.uploaded_bytes = st->stats.downloaded_bytes = 0;
  OceanCheck(
    OceanStageSameOperands(st, A, B), OCEAN_ERR_STATE,
    "%s: numeric needs the operands of the last symbolic phase (structure ids %llu, %llu; sizes %lld x %lld with %lld "
    "nonzeros and %lld x %lld with %lld), got ids %llu, %llu, sizes %lld x %lld (%lld) and %lld x %lld (%lld)",
    st->name, (unsigned long long)st->a_id, (unsigned long long)st->b_id, (long long)st->a_nrows,
    (long long)st->a_ncols, (long long)st->a_nnz, (long long)st->b_nrows, (long long)st->b_ncols, (long long)st->b_nnz,
    (unsigned long long)A->structure_id, (unsigned long long)B->structure_id, (long long)A->nrows, (long long)A->ncols,
    (long long)OceanStageOperandNnz(st, 0, A), (long long)B->nrows, (long long)B->ncols,
    (long long)OceanStageOperandNnz(st, 1, B));
  t0  = OceanPhaseBegin(ctx, OCEAN_PHASE_NUMERIC);
  err = ctx->ops->numeric(ctx, st, A, B);
  (void)OceanPhaseEnd(ctx, OCEAN_PHASE_NUMERIC, err ? 0.0 : 2.0 * (double)st->an.products, t0);
  OceanCall(err);
  seconds = st->stats.t_numeric;

  /* the statistics now describe this call: nothing estimated, allocated, compacted or sorted (both backends add
     into C's known structure); the bins are those of the plan's exact routes */
  s->numeric_calls++;
  s->t_analysis = s->t_estimate = s->t_symbolic = s->t_fallback = s->t_compact = s->t_transpose = 0;
  s->t_numeric                                                                                  = seconds;
  s->overflow_rows = s->symbolic_retry_rows = 0;
  s->switched_to_exact = s->sketches_reused = 0;
  s->allocated_entries                      = st->nnz;
  s->packed_sort_keys                       = 0;
  ctx->ops->exact_counts(st, s);
  return OCEAN_SUCCESS;
}

/* The stage's queued device work waited for, its statistics filled and what it found reported. */
OceanError OceanStageComplete(OceanContext ctx, OceanStage *st)
{
  return ctx->ops->complete ? ctx->ops->complete(ctx, st) : OCEAN_SUCCESS;
}

/* C of a stage on the host (values 0: its structure only): a device backend copies what is stale. */
OceanError OceanStageHostC(OceanContext ctx, OceanStage *st, int values)
{
  OceanCall(OceanStageComplete(ctx, st));
  if (st->host_structure && (st->host_values || !values)) return OCEAN_SUCCESS;
  OceanCheck(ctx->ops->host_c, OCEAN_ERR_STATE, "%s: C is not on the host", st->name); /* cannot happen */
  return ctx->ops->host_c(ctx, st, values);
}
