/*
  backend.h - the one table between the core and a backend.  Each backend fills an OceanBackendOps (src/cpu,
  src/cuda); the context takes it when it is created (OceanContextCreate in src/backends.c) and the core reaches the
  backend only through it.

  The symbolic phase is one ladder for every backend (core/stage.c): analyze -> the decision (core) -> predict and
  over_allocated (UPPER_BOUND, ESTIMATE; NARROW unless the backend has a narrow step) -> exact (EXACT, or when the
  slots would pass max_output_nnz) -> finish.  Each step times and brackets its own phases (OceanPhaseBegin/End).
  Entries marked "may be NULL" are features a backend may lack; the core then says so in its error.
*/
#ifndef OCEAN_CORE_BACKEND_H
#define OCEAN_CORE_BACKEND_H

#include "core/stage.h"

typedef OceanError (*OceanStageStep)(OceanContext ctx, OceanStage *st, const OceanCSR *A, const OceanCSR *B);

typedef struct _p_OceanBackendOps {
  const char *name;

  /* ---- context */
  OceanError (*probe)(int device); /* whether the backend can run on the device (may be NULL: always) */
  /* the backend's state into ctx->backend_data; may replace ctx->profile by the device's when profile is NULL */
  OceanError (*context_setup)(OceanContext ctx, int device, const OceanDeviceProfile *profile);
  void (*context_teardown)(OceanContext ctx);

  /* ---- the symbolic ladder */
  OceanStageStep symbolic_begin; /* per-call state (the operands are those of every later step) */
  OceanStageStep analyze;        /* st->an: shapes, totals and, when the selection needs it, the CR sample
                                    (st->narrow: the shapes at most); times st->stats.t_analysis */
  OceanStageStep predict;        /* each row's predicted size: the upper bound, or the estimate (t_estimate) */
  OceanError (*over_allocated)(OceanContext ctx, OceanStage *st, const OceanCSR *A, const OceanCSR *B, int *switched);
  OceanStageStep narrow; /* the NARROW workflow in one pass (may be NULL: predict + over_allocated) */
  OceanStageStep exact;  /* symbolic counts, C sized exactly, numeric */
  int (*exact_in_one_pass)(const OceanStage *st); /* whether exact would take one pass (may be NULL: never) */
  /* after C: the exact routes, the row statistics (bins, accumulators, estimate error) and, with record_rows, the
     per-row arrays of st->tmp the row records are made of */
  OceanError (*finish)(OceanContext ctx, OceanStage *st);
  /* after the ladder, also when a step failed (may replace *err by its own failure; may be NULL) */
  void (*symbolic_end)(OceanContext ctx, OceanStage *st, OceanError *err);

  /* ---- numeric-only reuse: values into C's known structure; sets st->stats.t_numeric.  A device backend may return
     once the work is queued: complete then waits for it, fills the statistics it left and reports what it found (may
     be NULL: every call waits) */
  OceanStageStep numeric;
  OceanError (*complete)(OceanContext ctx, OceanStage *st);
  void (*exact_counts)(const OceanStage *st, OceanStats *s); /* rows per bin and accumulator of the exact routes */
  void (*stage_destroy)(OceanContext ctx, OceanStage *st);   /* st->dev (may be NULL: no stage state) */

  /* ---- C and operands on the device (all may be NULL: the backend keeps everything on the host) */
  /* C's host copy brought up to date (values 0: its structure only) */
  OceanError (*host_c)(OceanContext ctx, OceanStage *st, int values);
  OceanError (*device_c)(OceanStage *st, const int64_t **d_rowptr, const int32_t **d_colidx, const double **d_values);
  /* operand k (0: A, 1: B) of the stage's last call as a device CSR (M's sizes and ids, the device arrays) */
  OceanError (*device_operand)(OceanStage *st, int k, const OceanCSR *M, OceanCSR *view);
  /* the two device operands' checks without reading their arrays on the host (one wait for both); nnz[k] =
     M[k]->rowptr[nrows] */
  OceanError (*check_device_csr)(OceanContext ctx, const OceanCSR *const M[2], const char *const name[2],
                                 int64_t nnz[2]);
  /* *T = M^T of the device CSR M (nnz entries), kept in *cache: made once per structure, later calls gather values */
  OceanError (*transpose_update)(OceanContext ctx, void **cache, const OceanCSR *M, int64_t nnz, OceanCSR *T);
  void (*transpose_destroy)(OceanContext ctx, void **cache);
  /* count int32 device row offsets (cuSPARSE's) widened into *buf, from the context's memory, grown to count when *cap
     (its length) is less */
  OceanError (*offsets_widen)(OceanContext ctx, int64_t count, const int32_t *d_in, int64_t **buf, int64_t *cap);
  /* count int64 device row offsets narrowed into the caller's int32 device array (each fits); returns when done */
  OceanError (*offsets_narrow)(OceanContext ctx, int64_t count, const int64_t *d_in, int32_t *d_out);
  /* the m rows' int64 device offsets compressed to the kept rows with entries: their indices and int32 offsets
     (kept + 1) into the caller's device arrays (OCEAN_ERR_STATE unless exactly kept rows have entries) */
  OceanError (*rows_compress)(OceanContext ctx, int64_t m, const int64_t *d_rowptr, int64_t kept, int32_t *d_rindex,
                              int32_t *d_offsets);
  OceanError (*device_copy)(OceanContext ctx, void *d_dst, const void *d_src, size_t bytes); /* returns when done */
  OceanError (*download)(OceanContext ctx, void *dst, const void *d_src, size_t bytes); /* to the host, when done */
  void (*device_release)(OceanContext ctx, void *d_ptr); /* what offsets_widen allocated */

  /* ---- device memory (all may be NULL) */
  OceanError (*memory_get)(OceanContext ctx, int64_t *in_use, int64_t *peak, int64_t *reserved, int64_t *mallocs);
  OceanError (*memory_reset_peak)(OceanContext ctx);
  OceanError (*memory_trim)(OceanContext ctx);
  OceanError (*mirror_limit_set)(OceanContext ctx, int64_t bytes);
  OceanError (*mirrors_get)(OceanContext ctx, int64_t *bytes, int64_t *limit);
} OceanBackendOps;

/* The table of a backend (src/backends.c); NULL for an unknown one. */
const OceanBackendOps *OceanBackendOpsGet(OceanBackend backend);
/* A context on the backend of table ops (NULL: an unknown backend, an error); OceanContextCreate picks the table. */
OceanError OceanContextCreateWith(const OceanBackendOps *ops, OceanBackend backend, int device,
                                  const OceanDeviceProfile *profile, OceanContext *ctx);

#endif
