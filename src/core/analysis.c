/*
  analysis.c - the analysis of a product (per-row products, span and upper bound; sampled compression
  ratio), the workflow selection and the row routing.  These are the decisions a device pipeline must make
  identically, so each is one function.
*/
#include "core/analysis.h"
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
static OceanError OceanAnalyzeRows(const OceanCSR *A, const OceanCSR *B, const OceanSettings *set, OceanAnalysis *an)
{
  int32_t   *first = NULL, *last = NULL;
  int64_t    i, products = 0, bound_total = 0, likely_total = 0;
  OceanError err;

  err = OceanRowColumnRange(B, &first, &last);
  if (!err) {
#pragma omp parallel for schedule(static) reduction(+ : products, bound_total, likely_total)
    for (i = 0; i < A->nrows; i++) {
      OceanRowShape *r = &an->rows[i];
      int64_t        q = 0, t, longest = 0;
      int32_t        lo = INT32_MAX, hi = -1;

      for (t = A->rowptr[i]; t < A->rowptr[i + 1]; t++) {
        int32_t k  = A->colidx[t];
        int64_t nk = B->rowptr[k + 1] - B->rowptr[k];
        if (!nk) continue;
        q += nk;
        if (nk > longest) longest = nk;
        if (first[k] < lo) lo = first[k];
        if (last[k] > hi) hi = last[k];
      }
      r->products = q;
      r->span     = q ? (int64_t)hi - lo + 1 : 0;
      r->colmin   = q ? lo : 0;
      r->longest  = (int32_t)longest;
      r->ub       = OceanMin64(OceanMin64(q, r->span), B->ncols);
      products += q;
      bound_total += r->ub;
      if (set && set->options.bound_factor) {
        OceanRoute by_bound, likely;
        (void)OceanRouteBound(set->bins, set->warp_size, set->options.hash_load, r, set->options.bound_factor,
                              &by_bound, &likely);
        likely_total += likely.slot;
      }
    }
  }
  OceanFree(first);
  OceanFree(last);
  an->products     = products;
  an->bound_total  = bound_total;
  an->likely_total = likely_total;
  return err;
}

/*
  The compression ratio from a sample.  ns = clamp(round(fraction * m), sample_min, sample_max) rows, at most all
  rows with products, evenly spaced over those rows (deterministic: OceanSampleIndex); each gets its exact nnz.
    cr_sampled      = sum q / sum nnz over the sample (the workflow criterion),
    cr_mean, cr_std = mean and population deviation of the per-row q/nnz,
    cr_conservative = max(1, cr_mean - 2 cr_std).
  The paper derives a "conservative" whole-matrix CR from the sampled mean and deviation, but its equation did not
  survive in our copy.  Ours is our own choice: two deviations below the mean, so that for most rows q/cr_conservative
  is at least the row's nnz and the assisted symbolic pass rarely retries a row; never below 1, where it degrades to
  the classic binning by products.
  The CUDA backend selects the same rows on the device (rows with products compacted, then OceanSampleIndex) and
  calls OceanAnalysisSampleReset, OceanAnalysisSampleSize and OceanAnalysisSampleFinish itself.
*/
void OceanAnalysisSampleReset(OceanAnalysis *an)
{
  an->cr_sampled = an->cr_mean = an->cr_std = 0;
  an->cr_conservative                       = 1;
  an->sampled_rows                          = 0;
}

int64_t OceanAnalysisSampleSize(const OceanOptions *o, int64_t nrows, int64_t nq)
{
  int64_t ns = llround(o->sample_fraction * (double)nrows);
  return OceanMin64(OceanMin64(OceanMax64(ns, o->sample_min), o->sample_max), nq);
}

OceanError OceanAnalysisSampleSelect(const OceanOptions *o, OceanAnalysis *an, int64_t **sample, int64_t *ns_out)
{
  int64_t nq = 0, ns, i, j, r;

  *sample = NULL;
  *ns_out = 0;
  OceanAnalysisSampleReset(an);
  for (i = 0; i < an->nrows; i++) nq += an->rows[i].products > 0;
  ns = OceanAnalysisSampleSize(o, an->nrows, nq);
  if (ns == 0) return OCEAN_SUCCESS;
  OceanCall(OceanMalloc(3 * ns, sample, "analysis: sampled rows, counts and products"));
  for (i = 0, r = 0, j = 0; i < an->nrows && j < ns;
       i++) /* the r-th row with products is sampled when r is the j-th index */
    if (an->rows[i].products > 0 && r++ == OceanSampleIndex(j, nq, ns)) {
      (*sample)[2 * ns + j] = an->rows[i].products;
      (*sample)[j++]        = i;
    }
  *ns_out = ns;
  return OCEAN_SUCCESS;
}

void OceanAnalysisSampleFinish(OceanAnalysis *an, const int64_t *q, const int64_t *count, int64_t ns)
{
  double  sum_q = 0, sum_nnz = 0, sum_cr = 0, sum_dev2 = 0;
  int64_t j;

  if (ns == 0) return;
  for (j = 0; j < ns; j++) { /* serial sums: the same for every thread count and backend */
    sum_q += (double)q[j];
    sum_nnz += (double)count[j];
    sum_cr += (double)q[j] / (double)count[j];
  }
  an->cr_mean = sum_cr / (double)ns;
  for (j = 0; j < ns; j++) {
    double d = (double)q[j] / (double)count[j] - an->cr_mean;
    sum_dev2 += d * d;
  }
  an->sampled_rows    = ns;
  an->cr_sampled      = sum_q / sum_nnz;
  an->cr_std          = sqrt(sum_dev2 / (double)ns);
  an->cr_conservative = fmax(1.0, an->cr_mean - 2.0 * an->cr_std);
}

void OceanAnalysisFinishRows(OceanAnalysis *an, int64_t nnz_a)
{
  an->er               = nnz_a ? (double)an->products / (double)nnz_a : 0.0;
  an->products_per_row = an->nrows ? (double)an->products / (double)an->nrows : 0.0;
}

int64_t OceanDecideBoundFactor(const OceanOptions *opts, const OceanAnalysis *an, OceanWorkflow workflow)
{
  if (workflow != OCEAN_WORKFLOW_UPPER_BOUND || opts->bound_factor <= 0) return 0;
  return OceanTakeBoundFactor(an->likely_total, an->bound_total) ? opts->bound_factor : 0;
}

OceanError OceanAnalyzeShapes(const OceanCSR *A, const OceanCSR *B, const OceanSettings *set, OceanAnalysis *an)
{
  if (an->nrows != A->nrows || !an->rows) {
    OceanFree(an->rows);
    an->nrows = 0;
    OceanCall(OceanMalloc(A->nrows, &an->rows, "analysis: rows"));
    an->nrows = A->nrows;
  }
  OceanCall(OceanAnalyzeRows(A, B, set, an));
  OceanAnalysisFinishRows(an, OceanCSRNnz(A));
  OceanAnalysisSampleReset(an);
  return OCEAN_SUCCESS;
}

/*
  NARROW is decided from the sizes alone, before any analysis: B has few columns (at most narrow_max_columns), its
  rows fill a good part of them (nnz(B) >= narrow_min_density x rows x columns) and C's dense rows fit the workspace
  (rows(A) x columns(B) <= narrow_max_entries).  Galerkin products of coarse AMG levels are like that: a few dozen
  columns, rows of tens of thousands of products, where the analysis, the routing and their host waits cost more
  than the product.  Each row's team then sums in its own dense rows, without atomics across warps, and writes the
  row in column order.  Forced (OCEAN_WORKFLOW_NARROW), only the hard limits apply: an error when B has more
  than OCEAN_NARROW_MAX_COLUMNS columns or the dense rows pass narrow_max_entries.
*/
OceanError OceanSelectNarrow(const OceanOptions *o, const char *name, int64_t a_nrows, int64_t b_nrows, int64_t b_ncols,
                             int64_t b_nnz, int *narrow)
{
  const double dense = (double)a_nrows * (double)b_ncols;

  *narrow = 0;
  if (o->workflow == OCEAN_WORKFLOW_NARROW) {
    OceanCheck(b_ncols <= OCEAN_NARROW_MAX_COLUMNS && dense <= (double)o->narrow_max_entries, OCEAN_ERR_ARG,
               "%s: the narrow workflow was forced but needs B with at most %d columns and rows(A) x columns(B) <= "
               "narrow_max_entries = %lld; A has %lld rows, B is %lld x %lld",
               name, OCEAN_NARROW_MAX_COLUMNS, (long long)o->narrow_max_entries, (long long)a_nrows, (long long)b_nrows,
               (long long)b_ncols);
    *narrow = 1;
  } else if (o->workflow == OCEAN_WORKFLOW_AUTO) {
    *narrow = b_ncols >= 1 && b_nrows >= 1 && b_ncols <= o->narrow_max_columns &&
              dense <= (double)o->narrow_max_entries &&
              (double)b_nnz >= o->narrow_min_density * (double)b_nrows * (double)b_ncols;
  }
  return OCEAN_SUCCESS;
}

void OceanDecideNarrow(const OceanOptions *o, OceanDecision *d)
{
  memset(d, 0, sizeof(*d));
  d->workflow = OCEAN_WORKFLOW_NARROW;
  d->forced   = o->workflow == OCEAN_WORKFLOW_NARROW;
}

/*
  The upper bound is tight when it already compresses the products at least as much as estimation requires
  (cr_threshold): narrow B (Galerkin products of coarse levels, whose P has a few dozen columns) bounds every row by
  its few columns.  Over-allocating the bound then costs less than a sample and sketches would, and
  products / bound_total is a lower bound of CR.
*/
static int OceanBoundIsTight(const OceanOptions *o, const OceanAnalysis *an)
{
  return an->products > 0 && (double)an->products >= o->cr_threshold * (double)an->bound_total;
}

/* The automatic selection takes the upper bound before it looks at CR: then no sample is needed.  So it does for a
   product whose bounds total at most small_bound entries: its over-allocation costs less than a sample and an exact
   symbolic pass (or the sketches) cost time (H200, real matrices of up to 20 million products: the upper bound
   1.1x-1.6x faster than the exact and the estimate workflows, at up to 7.6x nnz(C) of slots). */
static int OceanUpperBoundWithoutSample(const OceanOptions *o, const OceanAnalysis *an)
{
  return (an->products_per_row >= o->ub_products_per_row && OceanBoundIsTight(o, an)) ||
         an->bound_total <= o->small_bound;
}

/* After the sample: the upper bound routed by the rows' likely sizes (OceanTakeBoundFactor) when their slots are at
   most OCEAN_LIKELY_SLOTS_PER_NNZ times the sampled nnz(C) (products / CR): one numeric pass and a compaction then
   cost less than the estimate's sketches or the exact symbolic pass (H200, against the workflows selected without
   it: lap3d_27pt_100 12.2 ms against the exact workflow's 18.9 at 2.26x slots, elast3d_27pt_48x3 32.7 against the
   estimate's 38.3 at 3.14x). */
#define OCEAN_LIKELY_SLOTS_PER_NNZ 4.0
static int OceanLikelyBoundIsTight(const OceanOptions *o, const OceanAnalysis *an)
{
  return o->bound_factor > 0 && an->sampled_rows > 0 && an->cr_sampled > 0.0 &&
         OceanTakeBoundFactor(an->likely_total, an->bound_total) &&
         (double)an->likely_total * an->cr_sampled <= OCEAN_LIKELY_SLOTS_PER_NNZ * (double)an->products;
}

int OceanAnalysisNeedsSample(const OceanOptions *o, const OceanAnalysis *an)
{
  return o->workflow != OCEAN_WORKFLOW_AUTO || !OceanUpperBoundWithoutSample(o, an);
}

/*
  The paper's Table 1.  Upper bound when the average products per row is below 64 (a row is then cheap to
  over-allocate and a symbolic or estimation pass would cost more than it saves); estimation when ER >= 8 (merging
  one-byte registers then reads no more than a symbolic pass reads four-byte columns) and the sampled CR >= 8 (enough
  compression to amortise the compaction); else the exact symbolic pass, binned by products / conservative CR.
  Ours on top: the upper bound also when it is tight (OceanBoundIsTight) or small (small_bound), decided before any
  sample is taken (the bitmap query then follows from the bound's CR, a lower bound of the true one), and after the
  sample when the rows' likely sizes are (OceanLikelyBoundIsTight).
*/
void OceanSelectWorkflow(const OceanOptions *o, const OceanAnalysis *an, OceanDecision *d)
{
  d->forced = o->workflow != OCEAN_WORKFLOW_AUTO;
  if (d->forced) d->workflow = o->workflow;
  else if (an->products_per_row < o->ub_products_per_row || OceanUpperBoundWithoutSample(o, an))
    d->workflow = OCEAN_WORKFLOW_UPPER_BOUND;
  else if (OceanLikelyBoundIsTight(o, an)) d->workflow = OCEAN_WORKFLOW_UPPER_BOUND;
  else if (an->er >= o->er_threshold && an->cr_sampled >= o->cr_threshold) d->workflow = OCEAN_WORKFLOW_ESTIMATE;
  else d->workflow = OCEAN_WORKFLOW_EXACT;

  d->registers    = o->hll_registers ? o->hll_registers : (an->er < o->hll_er_64 ? 32 : 64);
  d->coefficient  = o->estimate_coefficient > 0 ? o->estimate_coefficient : (d->registers <= 32 ? 2.0 : 1.5);
  d->bitmap_query = (an->sampled_rows  ? an->cr_sampled
                     : an->bound_total ? (double)an->products / (double)an->bound_total
                                       : 0.0) > o->bitmap_cr_threshold;
}

/* THE routing decision is OceanRouteRowBins (core/rules.h), shared with the CUDA kernels. */
void OceanRouteRow(const OceanSettings *set, OceanPass ph, int64_t p, const OceanRowShape *row, OceanRoute *r)
{
  OceanRouteRowBins(set->bins, set->warp_size, set->options.hash_load, ph, p, row, r);
}
