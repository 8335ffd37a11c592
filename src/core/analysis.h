/*
  analysis.h - the decisions of a product, made the same way by every backend: the settings (options and the bin
  table they give), the analysis of A*B (row shapes, the CR sample), the workflow selection and the routing of a
  row.  The backends run the analysis's passes their own way and call these functions for every decision:
    OceanSettingsCompute  - kernel configurations from the device profile and the options
    OceanSelectWorkflow   - upper bound / estimation / exact symbolic (OceanSelectNarrow: the NARROW workflow)
    OceanRouteRow         - which bin, accumulator and output slot a row gets
*/
#ifndef OCEAN_CORE_ANALYSIS_H
#define OCEAN_CORE_ANALYSIS_H

#include "core/base.h"

/* A plan's options with what they decide for the device profile: the bin table and the routing constants. */
typedef struct {
  OceanOptions   options;
  OceanBinConfig bins[OCEAN_NUM_BINS];
  int64_t        warp_size;
  int64_t        smem_per_block; /* the most dynamic shared memory a block may have (the profile's) */
} OceanSettings;

/* Validates the options against the profile and computes the bin table. */
OceanError OceanSettingsCompute(const OceanDeviceProfile *profile, const OceanOptions *opts, OceanSettings *set);
OceanError OceanBinTableCompute(const OceanDeviceProfile *profile, const OceanOptions *opts,
                                OceanBinConfig bins[OCEAN_NUM_BINS]);
OceanError OceanOptionsValidate(const OceanOptions *o);
OceanError OceanProfileValidate(const OceanDeviceProfile *p);
/* OceanHashLimit and OceanHashCapacityFor: core/rules.h */

/* OceanRowShape, OceanPass, OceanRoute: core/rules.h */
typedef struct {
  int64_t        nrows;
  OceanRowShape *rows;
  int64_t        products; /* total */
  double         er;       /* products / nnz(A) */
  double         products_per_row;
  int64_t        bound_total;  /* sum of the rows' upper bounds: nnz(C) <= bound_total */
  int64_t        likely_total; /* the slots the rows' likely sizes (OceanPredictBound with the options' bound_factor)
                                  route them to, in all (0 with bound_factor 0) */
  double  cr_sampled, cr_mean, cr_std, cr_conservative;
  int64_t sampled_rows;
} OceanAnalysis;

/* The rows' shapes and totals, no CR sample (the CR fields reset). */
OceanError OceanAnalyzeShapes(const OceanCSR *A, const OceanCSR *B, const OceanSettings *set, OceanAnalysis *an);
void       OceanAnalysisDestroy(OceanAnalysis *an);
/* The pieces of the analysis a backend runs around its own row analysis and sampled counts: */
void OceanAnalysisFinishRows(OceanAnalysis *an, int64_t nnz_a); /* er, products per row (an->products set) */
/* Whether the workflow selection needs the CR sample: not when it is automatic and the upper bound is tight. */
int OceanAnalysisNeedsSample(const OceanOptions *o, const OceanAnalysis *an);
/* The CR fields before sampling (no sample: cr_conservative 1, the rest 0). */
void OceanAnalysisSampleReset(OceanAnalysis *an);
/* How many rows the sample takes when nq of the nrows rows have products. */
int64_t OceanAnalysisSampleSize(const OceanOptions *o, int64_t nrows, int64_t nq);
/* The sampled rows from the host rows (*sample holds 3*ns entries: the rows, room for their counts, their products);
   resets the CR fields. */
OceanError OceanAnalysisSampleSelect(const OceanOptions *o, OceanAnalysis *an, int64_t **sample, int64_t *ns);
/* The CR statistics from the sampled rows' products q[j] and exact counts count[j] (serial sums: any backend). */
void OceanAnalysisSampleFinish(OceanAnalysis *an, const int64_t *q, const int64_t *count, int64_t ns);

typedef struct {
  OceanWorkflow workflow;
  int           forced;
  int           registers;   /* for the estimation workflow */
  double        coefficient; /* estimate multiplier */
  int           bitmap_query;
  int64_t       bound_factor; /* UPPER_BOUND routes by OceanPredictBound with it (0: by the bounds) */
} OceanDecision;

void OceanSelectWorkflow(const OceanOptions *opts, const OceanAnalysis *an, OceanDecision *d);
/* UPPER_BOUND's bound factor: the options' when OceanTakeBoundFactor (core/rules.h) takes it for the analysis's
   totals, else 0. */
int64_t OceanDecideBoundFactor(const OceanOptions *opts, const OceanAnalysis *an, OceanWorkflow workflow);
/* Whether a stage takes the NARROW workflow, from the sizes (before any analysis); an error when it is forced on
   operands it cannot take.  OceanDecideNarrow fills the decision. */
OceanError OceanSelectNarrow(const OceanOptions *opts, const char *name, int64_t a_nrows, int64_t b_nrows,
                             int64_t b_ncols, int64_t b_nnz, int *narrow);
void       OceanDecideNarrow(const OceanOptions *opts, OceanDecision *d);

/* THE row-routing decision: predicted size p (estimate x coefficient, upper bound, exact count or products /
   conservative CR) and the row's shape -> bin, accumulator, slot and capacity. */
void OceanRouteRow(const OceanSettings *set, OceanPass pass, int64_t p, const OceanRowShape *row, OceanRoute *route);

#endif
