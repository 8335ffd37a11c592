/*
  stage.h - one SpGEMM stage of a product plan.  core/stage.c runs its workflow ladder through the backend's steps
  (core/backend.h); the backends fill the same fields, so that statistics and row records come out of one code.
*/
#ifndef OCEAN_CORE_STAGE_H
#define OCEAN_CORE_STAGE_H

#include "core/context.h"

/* Arrays of one symbolic run, freed when it ends (also on failure). */
typedef struct {
  OceanRoute *routes;    /* the numeric routes of the run */
  int64_t    *predicted; /* the size each row was routed by */
  double     *estimate;  /* raw sketch estimates */
  int64_t    *offsets;   /* a row's offset in its thread's output buffer; fallback offsets for overflowed rows */
  int32_t    *owner;     /* CPU: the thread whose output buffer holds the row */
  int64_t    *counts;    /* nonzeros per row */
  uint8_t    *flags;     /* overflowed (over-allocating workflows) */
  int64_t    *list;      /* overflowed rows */
  int32_t    *fcols;     /* exactly sized rows of overflowed rows (fallback) */
  double     *fvals;
  uint8_t    *sketches; /* sketches of B when its structure id is 0 */
} OceanStageScratch;

typedef struct _p_OceanStage {
  const char          *name;
  const OceanSettings *set;   /* the plan's settings for the current call */
  int                  valid; /* C and the exact routes describe the operands below */
  uint64_t             a_id, b_id;
  int64_t              a_nrows, a_ncols, a_nnz, b_nrows, b_ncols, b_nnz;
  OceanAnalysis        an;
  OceanDecision        dec;
  int           narrow; /* the current symbolic call takes the NARROW workflow (OceanSelectNarrow, both backends) */
  OceanRoute   *exact;  /* routes with p = nnz: numeric-only reuse */
  int64_t       nrows, ncols, nnz;
  int64_t      *rowptr; /* C on the host: the CPU backend's result; the CUDA backend's copy, made lazily */
  int32_t      *colidx;
  double       *values;
  int           host_structure, host_values; /* rowptr/colidx, values hold the current C */
  int           c_released;   /* colidx/values freed (OceanProductReleaseHostC): a numeric call borrows the caller's */
  int           dev_operands; /* the operands of the current call are device pointers (OCEAN_MEMORY_DEVICE) */
  int64_t       op_nnz[2];    /* and their nonzero counts (A, B), which the host cannot read off rowptr */
  OceanStats    stats;
  OceanRowInfo *rows;
  OceanStageScratch tmp;
  void             *dev; /* the backend's own state of this stage */
} OceanStage;

/* Nonzeros of operand k (0: A, 1: B) of the stage's current call. */
static inline int64_t OceanStageOperandNnz(const OceanStage *st, int k, const OceanCSR *M)
{
  return st->dev_operands ? st->op_nnz[k] : OceanCSRNnz(M);
}

/* The statistics the analysis and the decision give (times of the upload and the analysis kept). */
void OceanStageStatsFromAnalysis(OceanStage *st, const OceanCSR *A, const OceanCSR *B);
/* The statistics of the multisplit rows of the call's numeric pass (and the levels C's columns plan). */
void OceanStageSetHeavyCounts(OceanStage *st, const OceanHeavyCounts *c);
/* C's size against max_output_nnz. */
OceanError OceanStageCheckNnz(const OceanStage *st, int64_t nnz);
/* C's row offsets from exact counts (after the size check), then its column and value arrays, on the host. */
OceanError OceanStageAllocC(OceanStage *st, const int64_t *counts);
/* Only the row offsets (and st->nnz): the caller gives C's columns and values arrays of its own. */
OceanError OceanStageAllocRowptr(OceanStage *st, const int64_t *counts);
/* Rows per bin and per accumulator of routes[0, nrows) into s. */
void OceanStageCountBins(const OceanStage *st, const OceanRoute *routes, OceanStats *s);
/* The mean relative error of the estimates (estimate workflow, per-row arrays on the host), a serial sum. */
double OceanStageEstimateError(const OceanStage *st);
/* Routes every row by predicted[i] (the NARROW workflow has its single route). */
void OceanStageRouteRows(const OceanStage *st, OceanPass pass, const int64_t *predicted, OceanRoute *routes);

/* The stage's symbolic phase (analysis, workflow, C and the exact routes for numeric reuse) and numeric-only phase
   (new values into C's structure), each through the context's backend. */
OceanError OceanStageSymbolic(OceanContext ctx, OceanStage *st, const OceanCSR *A, const OceanCSR *B);
OceanError OceanStageNumeric(OceanContext ctx, OceanStage *st, const OceanCSR *A, const OceanCSR *B);
/* Whether A and B are the operands of the stage's last symbolic phase (structure ids, sizes, nonzeros). */
int OceanStageSameOperands(const OceanStage *st, const OceanCSR *A, const OceanCSR *B);
/* Waits for the stage's queued device work (OceanBackendOps.complete). */
OceanError OceanStageComplete(OceanContext ctx, OceanStage *st);
/* C on the host (a backend that keeps it on the device copies what is stale). */
OceanError OceanStageHostC(OceanContext ctx, OceanStage *st, int values);
void       OceanStageDestroy(OceanContext ctx, OceanStage *st);

#endif
