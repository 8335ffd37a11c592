/*
  ocean_impl.h - internals of the PETSc-free core: errors, memory, the bin table, the analysis, the single
  row-routing decision, HLL sketches and the CPU accumulators.

  The CPU backend is the readable reference of every decision the CUDA backend makes.  Each decision lives in
  exactly one function here and a device pipeline must call (or mirror line by line) the same one:
    OceanBinTableCompute  - kernel configurations from the device profile and the options
    OceanSelectWorkflow   - upper bound / estimation / exact symbolic
    OceanRouteRow         - which bin, accumulator and output slot a row gets
*/
#ifndef OCEAN_IMPL_H
#define OCEAN_IMPL_H

#include "ocean.h"
#include "core/rules.h"
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
  #include <omp.h>
#endif

#if defined(__GNUC__) || defined(__clang__)
  #define OCEAN_THREAD_LOCAL  __thread
  #define OCEAN_PRINTF(f, a)  __attribute__((format(printf, f, a)))
  #define OCEAN_UNLIKELY(x)   __builtin_expect(!!(x), 0)
#elif defined(_MSC_VER)
  #define OCEAN_THREAD_LOCAL __declspec(thread)
  #define OCEAN_PRINTF(f, a)
  #define OCEAN_UNLIKELY(x) (x)
#else
  #define OCEAN_THREAD_LOCAL _Thread_local
  #define OCEAN_PRINTF(f, a)
  #define OCEAN_UNLIKELY(x) (x)
#endif

/* ---------------------------------------------------------------------------------------------------------
   Errors: every failure goes through OceanSetError, which formats the thread-local message and returns err. */
OceanError OceanSetError(OceanError err, const char *fmt, ...) OCEAN_PRINTF(2, 3);

#define OceanCall(expr) \
  do { \
    OceanError ocean_call_err_ = (expr); \
    if (OCEAN_UNLIKELY(ocean_call_err_ != OCEAN_SUCCESS)) return ocean_call_err_; \
  } while (0)

#define OceanCheck(cond, err, ...) \
  do { \
    if (OCEAN_UNLIKELY(!(cond))) return OceanSetError((err), __VA_ARGS__); \
  } while (0)

/* Failures inside OpenMP loops: the worker cannot set the caller's thread-local message, so it records the first
   failure here and the calling thread reports it after the loop. */
typedef struct {
  int        failed;
  OceanError err;
  int64_t    row;
  int64_t    bytes;
} OceanParallelStatus;

int        OceanParallelFailed(OceanParallelStatus *st);
void       OceanParallelFail(OceanParallelStatus *st, OceanError err, int64_t row, int64_t bytes);
OceanError OceanParallelReport(const OceanParallelStatus *st, const char *where);

/* ---------------------------------------------------------------------------------------------------------
   Memory: never malloc(0) (a zero count gets one byte), overflow-checked sizes, messages naming the bytes. */
OceanError OceanMallocBytes(size_t count, size_t size, int zero, const char *what, void **ptr);
OceanError OceanReallocBytes(size_t count, size_t size, const char *what, void **ptr);
void       OceanFreePtr(void *pptr); /* frees *(void **)pptr and sets it to NULL */

#define OceanMalloc(n, p, what)  OceanMallocBytes((size_t)(n), sizeof(**(p)), 0, (what), (void **)(p))
#define OceanCalloc(n, p, what)  OceanMallocBytes((size_t)(n), sizeof(**(p)), 1, (what), (void **)(p))
#define OceanRealloc(n, p, what) OceanReallocBytes((size_t)(n), sizeof(**(p)), (what), (void **)(p))
#define OceanFree(p)             OceanFreePtr((void *)&(p))

/* ---------------------------------------------------------------------------------------------------------
   Threads and time (OpenMP when built with it). */
static inline int OceanMaxThreads(void)
{
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

static inline int OceanThreadNum(void)
{
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

double OceanWallTime(void);

/* Rows per OpenMP work unit of the row kernels (schedule(dynamic, OCEAN_ROW_CHUNK)). */
#define OCEAN_ROW_CHUNK 64

/* ---------------------------------------------------------------------------------------------------------
   CSR helpers. */
/* Checks sizes, offsets and column ranges (the message names the matrix and the first bad row). */
OceanError OceanCSRValidate(const OceanCSR *M, const char *name);
/* A copy whose rowptr is never NULL (an empty matrix may come without one). */
void       OceanCSRNormalize(const OceanCSR *in, OceanCSR *out);
OceanError OceanCSRPrepareAB(const char *caller, const OceanCSR *A_in, const OceanCSR *B_in, OceanCSR *A, OceanCSR *B);
static inline int64_t OceanCSRNnz(const OceanCSR *M) { return M->rowptr[M->nrows]; }
/* Structure id of something derived from one or two patterns (transpose, A*P); 0 when an input id is 0. */
uint64_t   OceanDeriveStructureId(uint64_t a, uint64_t b, uint64_t tag);

/* ---------------------------------------------------------------------------------------------------------
   Bin table. */
OceanError OceanBinTableCompute(const OceanDeviceProfile *profile, const OceanOptions *opts, OceanBinConfig bins[OCEAN_NUM_BINS]);
/* OceanHashLimit and OceanHashCapacityFor: ocean_shared.h */

/* ---------------------------------------------------------------------------------------------------------
   Sketches (ocean_hll.c): 8-bit registers, one sketch per row of B, merged per row of A. */
/* OCEAN_HLL_MIN_REGISTERS, OCEAN_HLL_MAX_REGISTERS: ocean_shared.h */

int      OceanSketchRegistersValid(int registers);
void     OceanSketchBuild(const OceanCSR *B, int registers, uint8_t *sketches); /* nrows(B) x registers bytes */
void     OceanSketchMergeRow(const OceanCSR *A, int64_t i, const uint8_t *sketches, int registers, uint8_t *merged);
double   OceanSketchEstimate(const uint8_t *sketch, int registers);
/* Raw estimates for every row of A*B; the sketches of B come from the context's cache. */
OceanError OceanSketchEstimateRows(OceanContext ctx, const OceanCSR *A, const OceanCSR *B, int registers, uint8_t **scratch, double *estimate, int *reused);

/* ---------------------------------------------------------------------------------------------------------
   Context. */
#define OCEAN_SKETCH_CACHE_SIZE 8

typedef struct {
  uint64_t structure_id; /* 0: unused entry */
  int      registers;
  int64_t  nrows, nnz;   /* checked too: a reused id with other sizes is a caller bug we do not want to crash on */
  uint8_t *sketches;
  uint64_t last_use;
} OceanSketchCacheEntry;

/* Per-thread scratch of the CPU accumulators (ocean_cpu.c), sized from the bin table; the LONG bin grows it. */
typedef struct {
  int32_t  *keys;   /* hash columns, -1 when free; all free between rows */
  double   *hvals;  /* hash values */
  int64_t  *used;   /* table positions in insertion order: clearing, packing */
  double   *dense;  /* dense values; all zero between rows */
  uint64_t *bitmap; /* dense bitmap; all zero between rows */
  void     *sorta, *sortb; /* key-ptr words (8 bytes per entry reserved) */
  int32_t  *esc_cols;
  double   *esc_vals;
  int32_t  *pos;      /* numeric-only reuse: a column's position in the current row of C; all -1 between rows */
  int64_t   nkeys, nhvals, nused, ndense, nbitmap, nsort, nesc_cols, nesc_vals, npos;
  int       all_packed; /* every hash row sorted 32-bit key-ptr words */
  char      pad[64];    /* the workspaces of different threads sit in one array */
} OceanWorkspace;

struct _p_OceanContext {
  OceanBackend          backend;
  OceanDeviceProfile    profile;
  OceanOptions          options;
  uint64_t              options_state; /* bumped by OceanContextSetOptions: plans redo symbolic when it changed */
  OceanBinConfig        bins[OCEAN_NUM_BINS];
  OceanSketchCacheEntry cache[OCEAN_SKETCH_CACHE_SIZE];
  uint64_t              cache_clock;
  int64_t               sketches_built, sketches_reused;
  OceanWorkspace       *ws; /* one per OpenMP thread */
  int                   nws;
  OceanPhaseCallback    phase_callback;
  void                 *phase_user;
  /* CUDA backend (ocean_cuda.c): the device context (memory pool, events) and the cache of device sketches */
  void                 *cuda;
  int                   cuda_device; /* -1 for a CPU context */
  OceanSketchCacheEntry dcache[OCEAN_SKETCH_CACHE_SIZE];
};

/* The sketch cache's lookup, for the host cache and the device one: 1 and the entry when B's sketches with this
   register count are there (its last use is bumped), else 0 and the least recently used entry to replace.  b_nnz:
   B's nonzeros (a device B's cannot be read off its rowptr). */
int OceanSketchCacheFind(OceanSketchCacheEntry *cache, uint64_t *clock, const OceanCSR *B, int64_t b_nnz, int registers, OceanSketchCacheEntry **entry);

/* CUDA context setup and teardown (ocean_cuda.c; NOT_AVAILABLE without a device or without the backend). */
OceanError OceanCudaContextSetup(OceanContext ctx, int device, const OceanDeviceProfile *profile);
void       OceanCudaContextTeardown(OceanContext ctx);

/* Phase brackets: timing and the optional callback, from the calling thread.  End returns the seconds. */
double OceanPhaseBegin(OceanContext ctx, OceanPhase phase);
double OceanPhaseEnd(OceanContext ctx, OceanPhase phase, double flops, double t0);

/* The sketches of B for the given register count: from the cache when B.structure_id is nonzero and known,
   else built (into the cache, or into *scratch when the id is 0). */
OceanError OceanContextGetSketches(OceanContext ctx, const OceanCSR *B, int registers, uint8_t **scratch, const uint8_t **sketches, int *reused);
/* Per-thread accumulator workspaces, at least OceanMaxThreads() of them. */
OceanError OceanContextGetWorkspaces(OceanContext ctx, OceanWorkspace **ws);

/* ---------------------------------------------------------------------------------------------------------
   Analysis (ocean_analysis.c). */

/* OceanRowShape, OceanPass, OceanRoute: ocean_shared.h */
typedef struct {
  int64_t        nrows;
  OceanRowShape *rows;
  int64_t        products;        /* total */
  double         er;              /* products / nnz(A) */
  double         products_per_row;
  int64_t        bound_total;     /* sum of the rows' upper bounds: nnz(C) <= bound_total */
  double         cr_sampled, cr_mean, cr_std, cr_conservative;
  int64_t        sampled_rows;
} OceanAnalysis;

OceanError OceanAnalyze(OceanContext ctx, const OceanCSR *A, const OceanCSR *B, OceanAnalysis *an);
/* The rows' shapes and totals only, no CR sample (the NARROW workflow's analysis on the CPU). */
OceanError OceanAnalyzeShapes(const OceanCSR *A, const OceanCSR *B, OceanAnalysis *an);
void       OceanAnalysisDestroy(OceanAnalysis *an);
/* The pieces of OceanAnalyze a device backend runs around its own row analysis and sampled counts: */
void       OceanAnalysisFinishRows(OceanAnalysis *an, int64_t nnz_a); /* er, products per row (an->products set) */
/* Whether the workflow selection needs the CR sample: not when it is automatic and the upper bound is tight. */
int        OceanAnalysisNeedsSample(const OceanOptions *o, const OceanAnalysis *an);
/* The CR fields before sampling (no sample: cr_conservative 1, the rest 0). */
void       OceanAnalysisSampleReset(OceanAnalysis *an);
/* How many rows the sample takes when nq of the nrows rows have products. */
int64_t    OceanAnalysisSampleSize(const OceanOptions *o, int64_t nrows, int64_t nq);
/* The sampled rows from the host rows (*sample holds 3*ns entries: the rows, room for their counts, their products);
   resets the CR fields. */
OceanError OceanAnalysisSampleSelect(const OceanOptions *o, OceanAnalysis *an, int64_t **sample, int64_t *ns);
/* The CR statistics from the sampled rows' products q[j] and exact counts count[j] (serial sums: any backend). */
void       OceanAnalysisSampleFinish(OceanAnalysis *an, const int64_t *q, const int64_t *count, int64_t ns);

typedef struct {
  OceanWorkflow workflow;
  int           forced;
  int           registers;   /* for the estimation workflow */
  double        coefficient; /* estimate multiplier */
  int           bitmap_query;
} OceanDecision;

void OceanSelectWorkflow(const OceanOptions *opts, const OceanAnalysis *an, OceanDecision *d);
/* Whether a stage takes the NARROW workflow, from the sizes (before any analysis); an error when it is forced on
   operands it cannot take.  OceanDecideNarrow fills the decision. */
OceanError OceanSelectNarrow(const OceanOptions *opts, const char *name, int64_t a_nrows, int64_t b_nrows, int64_t b_ncols, int64_t b_nnz, int *narrow);
void       OceanDecideNarrow(const OceanOptions *opts, OceanDecision *d);

/* THE row-routing decision: predicted size p (estimate x coefficient, upper bound, exact count or products /
   conservative CR) and the row's shape -> bin, accumulator, slot and capacity. */
void OceanRouteRow(OceanContext ctx, OceanPass pass, int64_t p, const OceanRowShape *row, OceanRoute *route);

/* ---------------------------------------------------------------------------------------------------------
   CPU accumulators (ocean_cpu.c). */
OceanError OceanWorkspacesCreate(const OceanBinConfig bins[OCEAN_NUM_BINS], int n, OceanWorkspace **ws);
void       OceanWorkspacesDestroy(OceanWorkspace **ws, int n);

/* One row of A*B with the accumulator of route.  Numeric when cols != NULL: writes at most route->slot sorted
   entries to cols/vals.  Symbolic when cols == NULL: counts.  *overflow is set (and nothing valid written) when
   the row has more than route->slot nonzeros.  Fails only when the workspace cannot grow (*bytes: the request). */
OceanError OceanCpuRow(OceanWorkspace *ws, const OceanCSR *A, const OceanCSR *B, int64_t i, const OceanRowShape *row,
                       const OceanRoute *route, int bitmap_query, int32_t *cols, double *vals, int64_t *count, int *overflow, int64_t *bytes);

/* Exact nonzero count of one row by the symbolic accumulators, starting from the route of prediction p and
   retrying with the next larger configuration while the symbolic accumulator overflows. */
/* Numeric-only reuse of row i: the values of C's known row (columns cols[0, n), sorted) into vals, each product added
   at its column's position, in product order (the accumulators' sums, bitwise).  OCEAN_ERR_STATE when a product's
   column is not in the row.  *bytes: the workspace size asked when it fails to grow. */
OceanError OceanCpuRowKnown(OceanWorkspace *ws, const OceanCSR *A, const OceanCSR *B, int64_t i, const int32_t *cols, int64_t n, double *vals, int64_t *bytes);
OceanError OceanCpuCountRow(OceanContext ctx, OceanWorkspace *ws, const OceanCSR *A, const OceanCSR *B, int64_t i, const OceanRowShape *row,
                            int64_t p, int64_t *nnz, int *retried, int64_t *bytes);

/* Whether every hash-accumulated row so far sorted 32-bit packed key-ptr words (reset with OceanWorkspacesResetPacked). */
int  OceanWorkspacesAllPacked(OceanWorkspace *ws, int n);
void OceanWorkspacesResetPacked(OceanWorkspace *ws, int n);

#endif
