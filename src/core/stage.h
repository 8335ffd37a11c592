/*
  ocean_stage.h - one SpGEMM stage of a product plan (ocean_product.c), shared with the CUDA orchestration
  (ocean_cuda.c), which fills the same fields so that statistics and row records come out of the same code.
*/
#ifndef OCEAN_STAGE_H
#define OCEAN_STAGE_H

#include "core/core.h"

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
  int               narrow; /* the current symbolic call takes the NARROW workflow (OceanSelectNarrow, both backends) */
  OceanRoute       *exact; /* routes with p = nnz: numeric-only reuse */
  int64_t           nrows, ncols, nnz;
  int64_t          *rowptr; /* C on the host: the CPU backend's result; the CUDA backend's copy, made lazily */
  int32_t          *colidx;
  double           *values;
  int               host_structure, host_values; /* rowptr/colidx, values hold the current C */
  int               dev_operands; /* the operands of the current call are device pointers (OCEAN_MEMORY_DEVICE) */
  int64_t           op_nnz[2];    /* and their nonzero counts (A, B), which the host cannot read off rowptr */
  OceanStats        stats;
  OceanRowInfo     *rows;
  OceanStageScratch tmp;
  void             *dev; /* the CUDA backend's device state of this stage (OceanCudaStage) */
} OceanStage;

/* Nonzeros of operand k (0: A, 1: B) of the stage's current call. */
static inline int64_t OceanStageOperandNnz(const OceanStage *st, int k, const OceanCSR *M) { return st->dev_operands ? st->op_nnz[k] : OceanCSRNnz(M); }

/* Helpers of ocean_product.c that the CUDA stage uses too. */
void       OceanStageStatsFromAnalysis(OceanStage *st, const OceanCSR *A, const OceanCSR *B);
OceanError OceanStageCheckNnz(OceanContext ctx, const OceanStage *st, int64_t nnz);

/* The CUDA backend (ocean_cuda.c).  Symbolic: analysis, workflow and C on the device; the per-row statistics
   (rows per bin and accumulator, estimate error) reduced on the device into st->stats.  Only with
   OceanOptions.record_rows are the per-row arrays downloaded: st->an.rows, st->tmp.{predicted,routes,counts,flags,
   estimate} and st->exact as the CPU stage leaves them (else they stay NULL).  C's host copy is not made:
   OceanCudaStageDownloadC.  Numeric: new values into C's structure with the exact routes.  Operands are host
   CSR (uploaded) or, with st->dev_operands, device CSR used in place. */
OceanError OceanCudaStageSymbolic(OceanContext ctx, OceanStage *st, const OceanCSR *A, const OceanCSR *B);
OceanError OceanCudaStageNumeric(OceanContext ctx, OceanStage *st, const OceanCSR *A, const OceanCSR *B);
void       OceanCudaStageDestroy(OceanContext ctx, OceanStage *st);
/* C's host copy (st->rowptr, colidx, values) brought up to date: what is stale is downloaded. */
OceanError OceanCudaStageDownloadC(OceanContext ctx, OceanStage *st);
/* The rows per bin and accumulator of the exact routes (reduced on the device by the symbolic call) into s. */
void       OceanCudaStageExactCounts(const OceanStage *st, OceanStats *s);
/* C's device arrays. */
OceanError OceanCudaStageGetDeviceC(OceanStage *st, const int64_t **d_rowptr, const int32_t **d_colidx, const double **d_values);
/* Operand k (0: A, 1: B) of the stage's last call as a device CSR: *view is M (its sizes and structure id) with the
   device arrays that call read (a mirror, the stage's own upload, or M's own when device-resident). */
OceanError OceanCudaStageGetDeviceOperand(OceanStage *st, int k, const OceanCSR *M, OceanCSR *view);
/* A transpose kept on the device (PtAP's P^T): *T (device arrays, structure id left to the caller) = M^T of the device
   CSR M with nnz entries.  Made once per structure id (sizes equal); later calls gather the new values only. */
typedef struct _p_OceanCudaTranspose *OceanCudaTransposeCache;
OceanError OceanCudaTransposeUpdate(OceanContext ctx, OceanCudaTransposeCache *cache, const OceanCSR *M, int64_t nnz, OceanCSR *T);
void       OceanCudaTransposeDestroy(OceanContext ctx, OceanCudaTransposeCache *cache);
/* A device operand's checks without reading its arrays on the host: pointers are device memory, rowptr[0] = 0;
   *nnz = rowptr[nrows] (8-byte copies). */
OceanError OceanCudaCheckDeviceCSR(OceanContext ctx, const OceanCSR *M, const char *name, int64_t *nnz);

#endif
