/*
  ocean_stage.h - one SpGEMM stage of a product plan (ocean_product.c), shared with the CUDA orchestration
  (ocean_cuda.c), which fills the same fields so that statistics and row records come out of the same code.
*/
#ifndef OCEAN_STAGE_H
#define OCEAN_STAGE_H

#include "ocean_impl.h"

/* Arrays of one symbolic run, freed when it ends (also on failure). */
typedef struct {
  OceanRoute *routes;    /* the numeric routes of the run */
  int64_t    *predicted; /* the size each row was routed by */
  double     *estimate;  /* raw sketch estimates */
  int64_t    *offsets;   /* slot offsets in the over-allocated buffer; fallback offsets for overflowed rows */
  int64_t    *counts;    /* nonzeros per row */
  uint8_t    *flags;     /* overflowed (over-allocating workflows) */
  int64_t    *list;      /* overflowed rows */
  int32_t    *bcols, *fcols;
  double     *bvals, *fvals;
  uint8_t    *sketches;  /* sketches of B when its structure id is 0 */
} OceanStageScratch;

typedef struct {
  const char       *name;
  int               valid; /* C and the exact routes describe the operands below */
  uint64_t          a_id, b_id;
  int64_t           a_nrows, a_ncols, a_nnz, b_nrows, b_ncols, b_nnz;
  OceanAnalysis     an;
  OceanDecision     dec;
  OceanRoute       *exact; /* routes with p = nnz: numeric-only reuse */
  int64_t           nrows, ncols, nnz;
  int64_t          *rowptr;
  int32_t          *colidx;
  double           *values;
  OceanStats        stats;
  OceanRowInfo     *rows;
  OceanStageScratch tmp;
  void             *dev; /* the CUDA backend's device state of this stage (OceanCudaStage) */
} OceanStage;

/* Helpers of ocean_product.c that the CUDA stage uses too. */
void       OceanStageStatsFromAnalysis(OceanStage *st, const OceanCSR *A, const OceanCSR *B);
OceanError OceanStageCheckNnz(OceanContext ctx, const OceanStage *st, int64_t nnz);

/* The CUDA backend (ocean_cuda.c).  Symbolic: analysis, workflow and C (on the host and kept on the device), the
   host arrays st->tmp.{predicted,routes,counts,flags,estimate} and st->exact as the CPU stage leaves them.
   Numeric: new values into C's structure with the exact routes. */
OceanError OceanCudaStageSymbolic(OceanContext ctx, OceanStage *st, const OceanCSR *A, const OceanCSR *B);
OceanError OceanCudaStageNumeric(OceanContext ctx, OceanStage *st, const OceanCSR *A, const OceanCSR *B);
void       OceanCudaStageDestroy(OceanContext ctx, OceanStage *st);

#endif
