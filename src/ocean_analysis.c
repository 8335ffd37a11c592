/*
  ocean_analysis.c - the analysis of a product (per-row products, span and upper bound; sampled compression
  ratio), the workflow selection and the row routing.  These are the decisions a device pipeline must make
  identically, so each is one function.
*/
#include "ocean_impl.h"
#include <math.h>

void OceanAnalysisDestroy(OceanAnalysis *an)
{
  OceanFree(an->rows);
  memset(an, 0, sizeof(*an));
}

/* First and last column of every row of B (rows need not be sorted); an empty row gets first > last. */
static OceanError OceanRowColumnRange(const OceanCSR *B, int32_t **first, int32_t **last)
{
  int64_t k;

  OceanCall(OceanMalloc(B->nrows, first, "analysis: first columns of B"));
  OceanCall(OceanMalloc(B->nrows, last, "analysis: last columns of B"));
#pragma omp parallel for schedule(static)
  for (k = 0; k < B->nrows; k++) {
    int32_t lo = INT32_MAX, hi = -1;
    int64_t t;
    for (t = B->rowptr[k]; t < B->rowptr[k + 1]; t++) {
      if (B->colidx[t] < lo) lo = B->colidx[t];
      if (B->colidx[t] > hi) hi = B->colidx[t];
    }
    (*first)[k] = lo;
    (*last)[k]  = hi;
  }
  return OCEAN_SUCCESS;
}

/* Exact per-row products, span and upper bound. */
static OceanError OceanAnalyzeRows(const OceanCSR *A, const OceanCSR *B, OceanAnalysis *an)
{
  int32_t   *first = NULL, *last = NULL;
  int64_t    i, products = 0;
  OceanError err;

  err = OceanRowColumnRange(B, &first, &last);
  if (!err) {
#pragma omp parallel for schedule(static) reduction(+ : products)
    for (i = 0; i < A->nrows; i++) {
      OceanRowShape *r  = &an->rows[i];
      int64_t        q  = 0, t;
      int32_t        lo = INT32_MAX, hi = -1;

      for (t = A->rowptr[i]; t < A->rowptr[i + 1]; t++) {
        int32_t k  = A->colidx[t];
        int64_t nk = B->rowptr[k + 1] - B->rowptr[k];
        if (!nk) continue;
        q += nk;
        if (first[k] < lo) lo = first[k];
        if (last[k] > hi) hi = last[k];
      }
      r->products = q;
      r->span     = q ? (int64_t)hi - lo + 1 : 0;
      r->colmin   = q ? lo : 0;
      r->ub       = OceanMin64(OceanMin64(q, r->span), B->ncols);
      products += q;
    }
  }
  OceanFree(first);
  OceanFree(last);
  an->products = products;
  return err;
}

/* The j-th of ns rows spread evenly over nq: floor((2j+1) nq / (2 ns)), split so that it cannot overflow. */
static int64_t OceanSampleIndex(int64_t j, int64_t nq, int64_t ns)
{
  int64_t d = 2 * ns, qd = nq / d, rd = nq % d;
  return (2 * j + 1) * qd + (2 * j + 1) * rd / d;
}

/*
  The compression ratio from a sample.  ns = clamp(round(fraction * m), sample_min, sample_max) rows, at most all
  rows with products, evenly spaced over those rows (deterministic); each gets its exact nnz.
    cr_sampled      = sum q / sum nnz over the sample (the workflow criterion),
    cr_mean, cr_std = mean and population deviation of the per-row q/nnz,
    cr_conservative = max(1, cr_mean - 2 cr_std).
  The paper derives a "conservative" whole-matrix CR from the sampled mean and deviation, but its equation did not
  survive in our copy.  Ours is our own choice: two deviations below the mean, so that for most rows q/cr_conservative
  is at least the row's nnz and the assisted symbolic pass rarely retries a row; never below 1, where it degrades to
  the classic binning by products.
*/
static OceanError OceanAnalyzeSample(OceanContext ctx, const OceanCSR *A, const OceanCSR *B, OceanAnalysis *an)
{
  const OceanOptions *o = &ctx->options;
  int64_t            *sample, *count, nq = 0, ns, i, j, r;
  double              sum_q = 0, sum_nnz = 0, sum_cr = 0, sum_dev2 = 0;
  OceanWorkspace     *ws;
  OceanParallelStatus st = {0, OCEAN_SUCCESS, 0, 0};

  an->cr_sampled = an->cr_mean = an->cr_std = 0;
  an->cr_conservative                       = 1;
  an->sampled_rows                          = 0;
  for (i = 0; i < A->nrows; i++) nq += an->rows[i].products > 0;
  ns = llround(o->sample_fraction * (double)A->nrows);
  ns = OceanMin64(OceanMin64(OceanMax64(ns, o->sample_min), o->sample_max), nq);
  if (ns == 0) return OCEAN_SUCCESS;

  OceanCall(OceanContextGetWorkspaces(ctx, &ws));
  OceanCall(OceanMalloc(2 * ns, &sample, "analysis: sampled rows and counts"));
  count = sample + ns;
  for (i = 0, r = 0, j = 0; i < A->nrows && j < ns; i++) /* the r-th row with products is sampled when r is the j-th index */
    if (an->rows[i].products > 0 && r++ == OceanSampleIndex(j, nq, ns)) sample[j++] = i;

#pragma omp parallel for schedule(dynamic, 16)
  for (j = 0; j < ns; j++) {
    int64_t    bytes = 0;
    int        retried;
    OceanError err;
    if (OceanParallelFailed(&st)) continue;
    /* p = ub always fits, so this never retries */
    err = OceanCpuCountRow(ctx, &ws[OceanThreadNum()], A, B, sample[j], &an->rows[sample[j]], an->rows[sample[j]].ub, &count[j], &retried, &bytes);
    if (err) OceanParallelFail(&st, err, sample[j], bytes);
  }
  if (!st.failed) { /* serial sums: the same for every thread count */
    for (j = 0; j < ns; j++) {
      sum_q += (double)an->rows[sample[j]].products;
      sum_nnz += (double)count[j];
      sum_cr += (double)an->rows[sample[j]].products / (double)count[j];
    }
    an->cr_mean = sum_cr / (double)ns;
    for (j = 0; j < ns; j++) {
      double d = (double)an->rows[sample[j]].products / (double)count[j] - an->cr_mean;
      sum_dev2 += d * d;
    }
    an->sampled_rows    = ns;
    an->cr_sampled      = sum_q / sum_nnz;
    an->cr_std          = sqrt(sum_dev2 / (double)ns);
    an->cr_conservative = fmax(1.0, an->cr_mean - 2.0 * an->cr_std);
  }
  OceanFree(sample);
  return OceanParallelReport(&st, "analysis: sampling");
}

OceanError OceanAnalyze(OceanContext ctx, const OceanCSR *A, const OceanCSR *B, OceanAnalysis *an)
{
  int64_t nnz_a = OceanCSRNnz(A);

  if (an->nrows != A->nrows || !an->rows) {
    OceanFree(an->rows);
    an->nrows = 0;
    OceanCall(OceanMalloc(A->nrows, &an->rows, "analysis: rows"));
    an->nrows = A->nrows;
  }
  OceanCall(OceanAnalyzeRows(A, B, an));
  an->er               = nnz_a ? (double)an->products / (double)nnz_a : 0.0;
  an->products_per_row = A->nrows ? (double)an->products / (double)A->nrows : 0.0;
  OceanCall(OceanAnalyzeSample(ctx, A, B, an));
  return OCEAN_SUCCESS;
}

/*
  The paper's Table 1.  Upper bound when the average products per row is below 64 (a row is then cheap to
  over-allocate and a symbolic or estimation pass would cost more than it saves); estimation when ER >= 8 (merging
  one-byte registers then reads no more than a symbolic pass reads four-byte columns) and the sampled CR >= 8 (enough
  compression to amortise the compaction); else the exact symbolic pass, binned by products / conservative CR.
*/
void OceanSelectWorkflow(const OceanOptions *o, const OceanAnalysis *an, OceanDecision *d)
{
  d->forced = o->workflow != OCEAN_WORKFLOW_AUTO;
  if (d->forced) d->workflow = o->workflow;
  else if (an->products_per_row < o->ub_products_per_row) d->workflow = OCEAN_WORKFLOW_UPPER_BOUND;
  else if (an->er >= o->er_threshold && an->cr_sampled >= o->cr_threshold) d->workflow = OCEAN_WORKFLOW_ESTIMATE;
  else d->workflow = OCEAN_WORKFLOW_EXACT;

  d->registers    = o->hll_registers ? o->hll_registers : (an->er < o->hll_er_64 ? 32 : 64);
  d->coefficient  = o->estimate_coefficient > 0 ? o->estimate_coefficient : (d->registers <= 32 ? 2.0 : 1.5);
  d->bitmap_query = an->cr_sampled > o->bitmap_cr_threshold;
}

/* Capacities of a bin as seen by the numeric (column + value) or the symbolic (column only) accumulators. */
static int64_t OceanBinHashCapacity(const OceanBinConfig *c, OceanPass ph) { return ph == OCEAN_PASS_NUMERIC ? c->hash_capacity : c->symbolic_hash_capacity; }
static int64_t OceanBinHashLimit(const OceanBinConfig *c, OceanPass ph) { return ph == OCEAN_PASS_NUMERIC ? c->hash_limit : c->symbolic_hash_limit; }
static int64_t OceanBinDenseColumns(const OceanBinConfig *c, OceanPass ph) { return ph == OCEAN_PASS_NUMERIC ? c->dense_columns : c->symbolic_dense_columns; }

static void OceanRouteSet(OceanRoute *r, OceanBin bin, OceanAccumulator acc, int64_t slot, int64_t capacity)
{
  r->bin      = (uint8_t)bin;
  r->acc      = (uint8_t)acc;
  r->slot     = slot;
  r->capacity = capacity;
}

/*
  Where a row goes, given its predicted nonzeros p and its shape (q products, span s, upper bound ub):
    q == 0                          -> EMPTY
    p < warp and q <= 64            -> ESC4 (q <= 32) or ESC2; slot ub (sorting all products cannot overflow)
    p < warp (and fits)             -> SHORT hash; slot min(limit, ub)
    smallest of N0..N4 where s <= dense columns -> DENSE; slot min(ub, p rounded up to a warp) numeric, ub symbolic
                          or where p <= hash limit -> HASH; slot min(limit, ub)
    otherwise                       -> LONG, hash in global memory of capacity for p (at least N4's); slot min(limit, ub)
  A row overflows when its nonzeros exceed its slot.  With p >= nnz (exact counts, upper bounds) no route
  overflows.  The symbolic phase uses the symbolic (column-only) capacities.
*/
void OceanRouteRow(OceanContext ctx, OceanPass ph, int64_t p, const OceanRowShape *row, OceanRoute *r)
{
  const OceanBinConfig *bins = ctx->bins;
  const int64_t         warp = ctx->profile.warp_size;
  const double          load = ctx->options.hash_load;
  int                   b;

  if (row->products == 0) {
    OceanRouteSet(r, OCEAN_BIN_EMPTY, OCEAN_ACC_NONE, 0, 0);
    return;
  }
  if (p < warp && row->products <= bins[OCEAN_BIN_ESC2].max_products) {
    OceanRouteSet(r, row->products <= bins[OCEAN_BIN_ESC4].max_products ? OCEAN_BIN_ESC4 : OCEAN_BIN_ESC2, OCEAN_ACC_ESC, row->ub, row->products);
    return;
  }
  if (p < warp && p <= OceanBinHashLimit(&bins[OCEAN_BIN_SHORT], ph)) {
    OceanRouteSet(r, OCEAN_BIN_SHORT, OCEAN_ACC_HASH, OceanMin64(OceanBinHashLimit(&bins[OCEAN_BIN_SHORT], ph), row->ub), OceanBinHashCapacity(&bins[OCEAN_BIN_SHORT], ph));
    return;
  }
  for (b = OCEAN_BIN_N0; b <= OCEAN_BIN_N4; b++) {
    const OceanBinConfig *c = &bins[b];
    if (row->span <= OceanBinDenseColumns(c, ph)) {
      int64_t slot = ph == OCEAN_PASS_NUMERIC ? OceanMin64(row->ub, (p + warp - 1) / warp * warp) : row->ub;
      OceanRouteSet(r, (OceanBin)b, OCEAN_ACC_DENSE, slot, row->span);
      return;
    }
    if (p <= OceanBinHashLimit(c, ph)) {
      OceanRouteSet(r, (OceanBin)b, OCEAN_ACC_HASH, OceanMin64(OceanBinHashLimit(c, ph), row->ub), OceanBinHashCapacity(c, ph));
      return;
    }
  }
  {
    int64_t cap = OceanMax64(OceanHashCapacityFor(p, load), OceanBinHashCapacity(&bins[OCEAN_BIN_N4], ph));
    OceanRouteSet(r, OCEAN_BIN_LONG, OCEAN_ACC_GLOBAL_HASH, OceanMin64(OceanHashLimit(cap, load), row->ub), cap);
  }
}
