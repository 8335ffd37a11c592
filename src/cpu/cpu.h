/*
  cpu.h - the CPU backend: the accumulators of one row (src/cpu/accumulators.c) and the per-thread workspaces
  they use; the workflow steps of the backend table (src/cpu/workflows.c).  The CPU backend is the readable
  reference of every decision the CUDA backend makes: both call the functions of core/analysis.h and core/rules.h.
*/
#ifndef OCEAN_CPU_H
#define OCEAN_CPU_H

#include "core/backend.h"

/* Per-thread scratch of the CPU accumulators (accumulators.c), sized from the bin table; the LONG bin grows it. */
typedef struct {
  int32_t  *keys;          /* hash columns, -1 when free; all free between rows */
  double   *hvals;         /* hash values */
  int64_t  *used;          /* table positions in insertion order: clearing, packing */
  double   *dense;         /* dense values; all zero between rows */
  uint64_t *bitmap;        /* dense bitmap; all zero between rows */
  void     *sorta, *sortb; /* key-ptr words (8 bytes per entry reserved) */
  int32_t  *esc_cols;
  double   *esc_vals;
  int32_t  *member;     /* numeric-only reuse: 0 for the columns of the current row of C; all -1 between rows */
  int32_t  *split_cols; /* MULTISPLIT: the other buffer of the expanded products (esc_cols/esc_vals the first) */
  double   *split_vals;
  int64_t  *split_offsets; /* chunk offsets, one array per level */
  int32_t  *out_cols;      /* the over-allocating numeric pass: this thread's rows, one after another (kept across */
  double   *out_vals;      /* products: the slots are counted, not allocated, so no fresh memory per product) */
  int64_t   out_used;
  int64_t   nkeys, nhvals, nused, ndense, nbitmap, nsort, nesc_cols, nesc_vals, nmember, nsplit_cols, nsplit_vals,
    nsplit_offsets, nout_cols, nout_vals;
  int                   all_packed;   /* every hash row sorted 32-bit key-ptr words */
  const OceanBinConfig *heavy;        /* the current settings' HEAVY configuration (OceanCpuWorkspaces) */
  OceanHeavyCounts      heavy_counts; /* MULTISPLIT rows written by numeric passes since the last reset */
  char                  pad[64];      /* the workspaces of different threads sit in one array */
} OceanWorkspace;

/* The CPU backend's state of a context: one workspace per OpenMP thread, made when first needed. */
typedef struct {
  OceanWorkspace *ws;
  int             nws;
} OceanCpuContext;

/* At least OceanMaxThreads() workspaces of the context (ctx->backend_data), sized from the settings' bins. */
OceanError OceanCpuWorkspaces(OceanContext ctx, const OceanSettings *set, OceanWorkspace **ws);
/* The CR sample's exact counts with the symbolic accumulators (st->an's shapes are there). */
OceanError OceanCpuAnalyzeSample(OceanContext ctx, const OceanSettings *set, const OceanCSR *A, const OceanCSR *B,
                                 OceanAnalysis *an);

OceanError OceanWorkspacesCreate(const OceanBinConfig bins[OCEAN_NUM_BINS], int n, OceanWorkspace **ws);
void       OceanWorkspacesDestroy(OceanWorkspace **ws, int n);

/* One row of A*B with the accumulator of route.  Numeric when cols != NULL: writes at most route->slot sorted
   entries to cols/vals.  Symbolic when cols == NULL: counts.  *overflow is set (and nothing valid written) when
   the row has more than route->slot nonzeros.  Fails only when the workspace cannot grow (*bytes: the request). */
OceanError OceanCpuRow(OceanWorkspace *ws, const OceanCSR *A, const OceanCSR *B, int64_t i, const OceanRowShape *row,
                       const OceanRoute *route, int bitmap_query, int32_t *cols, double *vals, int64_t *count,
                       int *overflow, int64_t *bytes);

/* Room for need entries in the thread's output buffer (out_cols/out_vals); *bytes: the request when it fails. */
OceanError OceanWorkspaceReserveOutput(OceanWorkspace *ws, int64_t need, int64_t *bytes);
/* Output buffers of more than keep entries freed once their rows are in C: kept across products they spare the page
   clearing of smaller ones, but a large product's would stay as large as its C for the rest of the run. */
#define OCEAN_CPU_KEEP_OUTPUT ((int64_t)1 << 22)
void OceanWorkspacesTrimOutput(OceanWorkspace *ws, int n, int64_t keep);
/* The output buffer's out_used entries handed over (*cols, *vals: the caller frees them); the workspace has none left.
 */
OceanError OceanWorkspaceTakeOutput(OceanWorkspace *ws, int32_t **cols, double **vals);

/* Numeric-only reuse of row i: the values of C's known row (columns cols[0, n), sorted) into vals, each product added
   at its column's position, in product order (the accumulators' sums, bitwise).  OCEAN_ERR_STATE when a product's
   column is not in the row.  *bytes: the workspace size asked when it fails to grow. */
OceanError OceanCpuRowKnown(OceanWorkspace *ws, const OceanCSR *A, const OceanCSR *B, int64_t i, const int32_t *cols,
                            int64_t n, double *vals, int64_t *bytes);
/* Exact nonzero count of one row by the symbolic accumulators, starting from the route of prediction p and
   retrying with the next larger configuration while the symbolic accumulator overflows. */
OceanError OceanCpuCountRow(const OceanSettings *set, OceanWorkspace *ws, const OceanCSR *A, const OceanCSR *B,
                            int64_t i, const OceanRowShape *row, int64_t p, int64_t *nnz, int *retried, int64_t *bytes);

/* Whether every hash-accumulated row so far sorted 32-bit packed key-ptr words (reset with OceanWorkspacesResetPacked).
 */
int  OceanWorkspacesAllPacked(OceanWorkspace *ws, int n);
void OceanWorkspacesResetPacked(OceanWorkspace *ws, int n);
/* The MULTISPLIT rows' counts summed over the workspaces (levels: the deepest), and their reset. */
void OceanWorkspacesHeavyCounts(const OceanWorkspace *ws, int n, OceanHeavyCounts *sum);
void OceanWorkspacesResetHeavyCounts(OceanWorkspace *ws, int n);

#endif
