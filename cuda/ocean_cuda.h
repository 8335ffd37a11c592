/*
  ocean_cuda.h - the launchers of the CUDA backend (the .cu files of cuda/, extern "C", each returns an OceanError)
  and the device context they share.  Included by the host orchestration (src/cuda/, plain C: no CUDA header) and by
  the .cu files.  Pointers named d_* are device memory from the context's pool.
*/
#ifndef OCEAN_CUDA_H
#define OCEAN_CUDA_H

#include "ocean.h"
#include "core/rules.h"
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

OceanError OceanSetError(OceanError err, const char *fmt, ...);

/* A device CSR (the same layout as OceanCSR, in device memory). */
typedef struct {
  int64_t        nrows, ncols;
  const int64_t *rowptr;
  const int32_t *colidx;
  const double  *values;
} OceanDevCSR;

/* Heavy rows' entries per column cell (a cell: the multisplit's last-level chunk, 1 << shift columns), counted by the
   exact workflow's symbolic pass so that its numeric multisplit writes every chunk straight into C: the symbolic
   routing gives each row that may be heavy (OceanRowMayBeHeavy) and is counted densely a record of stride int32 (the
   row's exclusive prefix of its entries per cell, its total last: -1 until counted); a shared-memory bitmap row fills
   its record as it counts.  row_cell NULL: none. */
typedef struct {
  int32_t            *row_cell; /* per row of A: its record, -1 for none */
  int32_t            *cells;    /* records * stride */
  unsigned long long *next;     /* records handed out so far */
  int64_t             records, stride;
  int                 shift;
} OceanHeavyCells;

/* No record of cells handed out yet (queued on the default stream). */
OceanError OceanCudaHeavyCellsReset(const OceanHeavyCells *cells);

/* What the device needs to route a row: the bin table and the two constants of OceanRouteRowBins. */
typedef struct {
  OceanBinConfig bins[OCEAN_NUM_BINS];
  int64_t        warp;
  double         load;
  int64_t        smem_optin;   /* the most dynamic shared memory a block may have */
  int64_t        bound_factor; /* OceanPredictBound's: the analysis totals the slots of the rows' likely routes */
  /* where OceanCudaRunRows adds what the heavy rows of its numeric passes did (host memory; NULL: not kept) */
  OceanHeavyCounts *heavy;
  double           *heavy_times; /* 4 entries, see OceanCudaHeavyRows */
  OceanHeavyCells   cells;       /* the exact workflow's, in its symbolic and numeric passes only */
} OceanCudaRouteParams;

/* ---- device context (cuda/ocean_device.cu): the device, its memory pool (cached cudaMalloc blocks, never freed
   until destroy), timing events and the sketch cache's storage lives in pool blocks owned by the caller */
typedef struct _p_OceanCudaDevice *OceanCudaDevice;

OceanError OceanCudaDeviceCreate(int device, OceanCudaDevice *dev);
void       OceanCudaDeviceDestroy(OceanCudaDevice *dev);
OceanError OceanCudaAlloc(OceanCudaDevice dev, size_t bytes, void **d_ptr); /* from the pool; *d_ptr NULL for 0 bytes */
void       OceanCudaFree(OceanCudaDevice dev, void *d_ptr);                 /* back to the pool (NULL is fine) */
void OceanCudaPoolStats(OceanCudaDevice dev, int64_t *in_use, int64_t *peak, int64_t *reserved, int64_t *cuda_mallocs);
void OceanCudaPoolResetPeak(OceanCudaDevice dev); /* peak = in use now */
void OceanCudaPoolTrim(OceanCudaDevice dev);      /* cudaFree of the cached blocks not in use */
/* When a cudaMalloc fails even after the pool's unused blocks went back, the pool calls reclaim(user), which may give
   blocks back (OceanCudaFree) and returns nonzero if it did; the cudaMalloc is then tried once more. */
typedef int (*OceanCudaReclaim)(void *user);
void OceanCudaPoolSetReclaim(OceanCudaDevice dev, OceanCudaReclaim reclaim, void *user);
/* cudaMemGetInfo (bytes); either may be NULL */
OceanError OceanCudaDeviceMemory(OceanCudaDevice dev, int64_t *free_bytes, int64_t *total);
/* *ok = 1 when d_ptr is device (or managed) memory the device can read; NULL is fine (*ok = 1). */
OceanError OceanCudaIsDevicePointer(const void *d_ptr, int *ok);
OceanError OceanCudaUploadAt(void *d_dst, const void *src, size_t bytes, const char *where);
OceanError OceanCudaDownloadAt(void *dst, const void *d_src, size_t bytes, const char *where);
/* A device-to-device copy on the default stream, returned when done. */
OceanError OceanCudaCopyOnDeviceAt(void *d_dst, const void *d_src, size_t bytes, const char *where);
#define OceanCudaUpload(d_dst, src, bytes)       OceanCudaUploadAt(d_dst, src, bytes, __func__)
#define OceanCudaDownload(dst, d_src, bytes)     OceanCudaDownloadAt(dst, d_src, bytes, __func__)
#define OceanCudaCopyOnDevice(d_dst, src, bytes) OceanCudaCopyOnDeviceAt(d_dst, src, bytes, __func__)
/* d_out[i] = d_in[i] for count int32 row offsets (cuSPARSE's) into the int64 of OceanDevCSR, on the default stream. */
OceanError OceanCudaWidenOffsets(int64_t count, const int32_t *d_in, int64_t *d_out);
/* d_out[i] = d_in[i] narrowed to int32 (every offset must fit: the caller checks), returned when done. */
OceanError OceanCudaNarrowOffsets(int64_t count, const int64_t *d_in, int32_t *d_out);
/* The m rows' offsets compressed to the rows with entries (PETSc's compressed-row form): rindex[k] the k-th row with
   entries, offsets (kept + 1, int32) its start; OCEAN_ERR_STATE unless exactly kept rows have entries.  Returns when
   done. */
OceanError OceanCudaCompressRows(OceanCudaDevice dev, int64_t m, const int64_t *d_rowptr, int64_t kept,
                                 int32_t *d_rindex, int32_t *d_offsets);
/* Large copies (operands up, C down) through two pinned chunks of the context: the host copies one chunk (OpenMP
   threads) while the other is in flight.  Ordered on the default stream like the kernels; an upload returns when its
   last chunk is queued (the source may be reused at once).  Below a few MB they are plain cudaMemcpy. */
OceanError OceanCudaUploadStaged(OceanCudaDevice dev, void *d_dst, const void *src, size_t bytes);
OceanError OceanCudaDownloadStaged(OceanCudaDevice dev, void *dst, const void *d_src, size_t bytes);
/* A small download (scalars, the CR sample): through the context's pinned staging buffer (grown on demand), an
   asynchronous copy on the default stream, then a wait for that stream only. */
OceanError OceanCudaReadbackAt(OceanCudaDevice dev, void *dst, const void *d_src, size_t bytes, const char *where);
/* n (at most 16) scattered 8-byte words: *dst[k] = *d_src[k], with one wait. */
OceanError OceanCudaReadbackWordsAt(OceanCudaDevice dev, int n, const void *const *d_src, void *const *dst,
                                    const char *where);
#define OceanCudaReadback(dev, dst, d_src, bytes)  OceanCudaReadbackAt(dev, dst, d_src, bytes, __func__)
#define OceanCudaReadbackWords(dev, n, d_src, dst) OceanCudaReadbackWordsAt(dev, n, d_src, dst, __func__)
/* The host's waits for the device, traced when the environment sets OCEAN_CUDA_TRACE (to stderr, one line each: the
   caller, the host time since the previous wait ended, the wait): where a product's fixed costs go.  Mark starts a
   section (a product phase) and prints the section before it. */
void OceanCudaTraceWait(const char *where, double wait_began);
/* The host's waits for the device so far (each of those OceanCudaTraceWait sees, traced or not). */
int64_t OceanCudaWaits(void);
void    OceanCudaTraceMark(const char *what);
/* Phase timers (CUDA events): Stop sets *seconds at once when sync is set, else at the next OceanCudaTimersRead (one
   wait for all), which must come while *seconds is still valid.  At most OCEAN_CUDA_TIMERS wait at a time (a Start
   beyond that reads them first). */
#define OCEAN_CUDA_TIMERS 8
OceanError OceanCudaTimerStart(OceanCudaDevice dev);
/* Timers on (the default) or off: off, Start records nothing and Stop sets *seconds to 0 (two event records a phase
   are a small product's microseconds). */
void       OceanCudaTimersEnable(OceanCudaDevice dev, int on);
OceanError OceanCudaTimerStop(OceanCudaDevice dev, double *seconds, int sync);
OceanError OceanCudaTimersRead(OceanCudaDevice dev);
/* A readback without a wait, for results nothing needs before the next OceanCudaTimersRead (statistics): d_src's bytes
   are copied behind the queued work into pinned memory and from there to dst by that OceanCudaTimersRead, which must
   come while dst is still valid.  Up to OCEAN_CUDA_DEFERRED_COPIES copies of OCEAN_CUDA_DEFERRED_BYTES in all wait
   together; one more reads them first. */
#define OCEAN_CUDA_DEFERRED_BYTES  4096
#define OCEAN_CUDA_DEFERRED_COPIES 16
OceanError OceanCudaReadbackDeferred(OceanCudaDevice dev, const void *d_src, size_t bytes, void *dst);

/* ---- analysis (cuda/ocean_analysis.cu): per-row shapes of A*B, d_nonempty[row] = (products > 0), and
   d_totals[0..OCEAN_CUDA_TOTALS) the totals of products, of the per-row upper bounds, of the rows with products, of the
   slots of the rows' likely routes (rp->bound_factor; 0 without) and of the rows that may be heavy
   (OceanRowMayBeHeavy; 0 without rp), queued (no wait: the caller reads the totals with whatever else it needs);
   with rp, d_routes[row] = the row's numeric route by its upper bound (OceanCudaRouteRows with d_p NULL) in the same
   launch, or by its likely size (OceanRouteBound) when OceanTakeBoundFactor takes the totals.  nnz_a, nnz_b: the
   operands' nonzeros (long rows get a warp each). */
#define OCEAN_CUDA_TOTALS 5
OceanError OceanCudaAnalyzeRows(OceanCudaDevice dev, OceanDevCSR A, int64_t nnz_a, OceanDevCSR B, int64_t nnz_b,
                                OceanRowShape *d_shapes, uint8_t *d_nonempty, unsigned long long *d_totals,
                                const OceanCudaRouteParams *rp, OceanRoute *d_routes);
/* d_routes[row] = the numeric route of rows 0..n-1 by their likely sizes (OceanRouteBound with rp->bound_factor). */
OceanError OceanCudaRouteLikely(const OceanCudaRouteParams *rp, const OceanRowShape *d_shapes, int64_t n,
                                OceanRoute *d_routes);
/* The CR sample (OceanAnalysisSampleSelect's rows): d_sample[j] = d_nonempty_rows[OceanSampleIndex(j, nq, ns)],
   j < ns, where d_nonempty_rows lists the nq rows with products in order. */
OceanError OceanCudaSampleRows(const int64_t *d_nonempty_rows, int64_t nq, int64_t ns, int64_t *d_sample);
/* d_out[j] = products of row d_sample[j], d_out[ns + j] = its exact nnz, or -1 for a row whose upper bound is too
   large for the kernel's shared table (count it with the accumulators, then OceanCudaSampleValues). */
OceanError OceanCudaSampleCounts(OceanDevCSR A, OceanDevCSR B, const int64_t *d_sample, int64_t ns,
                                 const OceanRowShape *d_shapes, int64_t *d_out);
/* d_out[j] = products of row d_sample[j], d_out[ns + j] = d_counts[d_sample[j]] (j < ns). */
OceanError OceanCudaSampleValues(const int64_t *d_sample, int64_t ns, const OceanRowShape *d_shapes,
                                 const int64_t *d_counts, int64_t *d_out);

/* ---- statistics reduced on the device (only scalars come back; cuda/ocean_analysis.cu) */
#define OCEAN_CUDA_NUM_ACC (OCEAN_ACC_MULTISPLIT + 1)
typedef struct {
  int64_t bins[OCEAN_NUM_BINS];    /* rows per OceanBin */
  int64_t acc[OCEAN_CUDA_NUM_ACC]; /* rows per OceanAccumulator */
} OceanCudaRouteCounts;
/* d_routed[row] = OceanRouteRowBins(..., d_p[row], d_shapes[row]) for rows 0..n-1 and, in the same launch, the rows per
   bin and per accumulator (exact integer counts) of the OCEAN_CUDA_ROUTE_SETS sets d_counted and d_routed, read back
   deferred (OceanCudaReadbackDeferred) into the host's hist (zeroed at once when n is 0); after the next
   OceanCudaTimersRead, OceanCudaRouteCountsFrom makes the counts of it (hist NULL: all zero). */
#define OCEAN_CUDA_ROUTE_SETS 2
#define OCEAN_CUDA_HIST_SIZE  (OCEAN_NUM_BINS + OCEAN_CUDA_NUM_ACC)
OceanError OceanCudaRouteAndCount(OceanCudaDevice dev, const OceanRoute *d_counted, const OceanCudaRouteParams *rp,
                                  OceanPass pass, const int64_t *d_p, const OceanRowShape *d_shapes,
                                  OceanRoute *d_routed, int64_t n,
                                  unsigned long long hist[OCEAN_CUDA_ROUTE_SETS * OCEAN_CUDA_HIST_SIZE]);
void       OceanCudaRouteCountsFrom(const unsigned long long *hist, int nsets, OceanCudaRouteCounts *counts);
/* OceanStats.estimate_mean_rel_error = sum / rows (0 without rows): the mean over rows with d_counts[row] > 0 of
   OceanEstimateRelError(OceanPredictFromEstimate(d_estimate[row], coefficient, shape), coefficient, d_counts[row]),
   read back deferred into the host's *sums (zeroed at once when n is 0).  The terms are the CPU's bitwise; their sum is
   a CUB tree sum (the CPU's is serial: last bits may differ). */
typedef struct {
  double             sum;
  unsigned long long rows;
} OceanCudaErrorSum;
OceanError OceanCudaEstimateError(OceanCudaDevice dev, int64_t n, const OceanRowShape *d_shapes,
                                  const double *d_estimate, double coefficient, const int64_t *d_counts,
                                  OceanCudaErrorSum *sums);

/* ---- predictions, per row (d_list NULL: rows 0..n-1, else the listed rows; cuda/ocean_analysis.cu) */
typedef enum {
  OCEAN_CUDA_PREDICT_UB = 0,
  OCEAN_CUDA_PREDICT_EXACT,
  OCEAN_CUDA_PREDICT_ESTIMATE,
  OCEAN_CUDA_PREDICT_RETRY
} OceanCudaPredict;
/* UB: p = ub; EXACT: OceanPredictExact(x = conservative CR); ESTIMATE: OceanPredictFromEstimate(d_estimate,
   x = coefficient); RETRY: p = min(ub, 2 * d_routes[row].slot) (the next configuration up after a symbolic
   overflow). */
OceanError OceanCudaPredictRows(OceanCudaPredict kind, const int64_t *d_list, int64_t n, const OceanRowShape *d_shapes,
                                const double *d_estimate, const OceanRoute *d_routes, double x, int64_t *d_p);

/* ---- routing: d_routes[row] = OceanRouteRowBins(..., d_p[row], d_shapes[row]), d_p NULL: the rows' upper bounds
   (cuda/ocean_analysis.cu) */
OceanError OceanCudaRouteRows(const OceanCudaRouteParams *rp, OceanPass pass, const int64_t *d_list, int64_t n,
                              const int64_t *d_p, const OceanRowShape *d_shapes, OceanRoute *d_routes);

/* ---- the accumulators (cuda/ocean_accumulators.cu): every listed row (d_list NULL: rows 0..n-1) by its route,
   launched per bin.  Numeric when d_cols and d_vals are given (row entries at d_offsets[row], in column order but for
   the global-hash LONG rows); always d_counts[row] (nonzeros, or slot + 1 on overflow) and d_flags[row]
   (overflowed).  *unsorted (optional) is set to 1 when global-hash LONG rows were written, unsorted (only then does
   C need OceanCudaSortRows). */
OceanError OceanCudaRunRows(OceanCudaDevice dev, const OceanCudaRouteParams *rp, OceanDevCSR A, OceanDevCSR B,
                            const OceanRowShape *d_shapes, const OceanRoute *d_routes, const int64_t *d_list, int64_t n,
                            int bitmap_query, const int64_t *d_offsets, int32_t *d_cols, double *d_vals,
                            int64_t *d_counts, uint8_t *d_flags, int *unsorted);

/* A product's rows routed and grouped by bin ahead of OceanCudaRunRowGroups: OceanCudaPlanRows routes rows 0..n-1
   (d_routes[row] = OceanRouteRowBins(..., d_p[row], ...), d_p NULL: the rows' upper bounds), scans their slots into
   d_offsets[0..n] (*total = d_offsets[n]; NULL: not read back) and groups them, one wait (the scan and the grouping in
   one block up to OCEAN_SMALL_ROWS rows: two launches); without the routing when routed (d_routes are made).  Then
   OceanCudaRunRowGroups is OceanCudaRunRows over rows 0..n-1, and OceanCudaRowGroupsFree gives the grouping's memory
   back.  OceanCudaPlanRowsQueued is the same without the wait: the bins' rows and the slots' total stay on the
   device in d_counts[0..OCEAN_NUM_BINS] until OceanCudaRowGroupsTake takes them from their copy on the host. */
typedef struct {
  int64_t *grouped;              /* the rows, bin after bin (device) */
  int64_t  bins[OCEAN_NUM_BINS]; /* rows per bin */
} OceanCudaRowGroups;
OceanError OceanCudaPlanRows(OceanCudaDevice dev, const OceanCudaRouteParams *rp, OceanPass pass, const int64_t *d_p,
                             const OceanRowShape *d_shapes, int64_t n, int routed, OceanRoute *d_routes,
                             int64_t *d_offsets, int64_t *total, OceanCudaRowGroups *g);
OceanError OceanCudaPlanRowsQueued(OceanCudaDevice dev, const OceanCudaRouteParams *rp, OceanPass pass,
                                   const int64_t *d_p, const OceanRowShape *d_shapes, int64_t n, int routed,
                                   OceanRoute *d_routes, int64_t *d_offsets, unsigned long long *d_counts,
                                   OceanCudaRowGroups *g);
void       OceanCudaRowGroupsTake(OceanCudaRowGroups *g, const unsigned long long *h_counts, int64_t *total);
OceanError OceanCudaRunRowGroups(OceanCudaDevice dev, const OceanCudaRouteParams *rp, OceanDevCSR A, OceanDevCSR B,
                                 const OceanRowShape *d_shapes, const OceanRoute *d_routes, const OceanCudaRowGroups *g,
                                 int bitmap_query, const int64_t *d_offsets, int32_t *d_cols, double *d_vals,
                                 int64_t *d_counts, uint8_t *d_flags, int *unsorted);
void       OceanCudaRowGroupsFree(OceanCudaDevice dev, OceanCudaRowGroups *g);

/* ---- heavy rows (cuda/ocean_heavy.cu): the listed rows of the HEAVY bin (OCEAN_ACC_MULTISPLIT), as OceanCudaRunRows
   takes them (d_cols NULL: counts only); a numeric pass adds the rows that fit their slot to *hc and its seconds to
   times[0..3] (outer product, histograms, later levels' multisplits, accumulation and assembly). */
OceanError OceanCudaHeavyRows(OceanCudaDevice dev, const OceanCudaRouteParams *rp, OceanDevCSR A, OceanDevCSR B,
                              const OceanRowShape *d_shapes, const OceanRoute *d_routes, const int64_t *d_list,
                              int64_t n, const int64_t *d_offsets, int32_t *d_cols, double *d_vals, int64_t *d_counts,
                              uint8_t *d_flags, OceanHeavyCounts *hc, double times[4]);

/* Rows grouped by a small key: d_keys[j] (< nkeys <= 256) for the listed rows (d_list NULL: 0..n-1); *d_grouped
   (n rows from the pool, the caller frees it) lists them by key, in their order inside a key; counts[key] of each. */
OceanError OceanCudaGroupByKey(OceanCudaDevice dev, const uint8_t *d_keys, const int64_t *d_list, int64_t n, int nkeys,
                               int64_t **d_grouped, int64_t *counts);

/* ---- numeric into a known structure (numeric-only reuse; cuda/ocean_known.cu): C's sorted rows are given, every
   product's value is added at its column's position.  The plan groups the rows by the length of C's row, once. */
enum {
  OCEAN_CUDA_KNOWN_SMALL = 0,
  OCEAN_CUDA_KNOWN_WARP,
  OCEAN_CUDA_KNOWN_BLOCK,
  OCEAN_CUDA_KNOWN_BIG,
  OCEAN_CUDA_KNOWN_GLOBAL,
  OCEAN_CUDA_KNOWN_CLASSES
};
typedef struct {
  int64_t *rows;                            /* device: the rows grouped by class */
  int64_t  count[OCEAN_CUDA_KNOWN_CLASSES]; /* rows per class */
  int64_t  big_max;                         /* the longest row of C held in shared memory */
  int64_t  smem_optin;
} OceanCudaKnownPlan;
OceanError OceanCudaKnownPlanCreate(OceanCudaDevice dev, int64_t smem_optin, int64_t nrows, const int64_t *d_rowptr,
                                    const OceanRowShape *d_shapes, OceanCudaKnownPlan *plan);
void       OceanCudaKnownPlanDestroy(OceanCudaDevice dev, OceanCudaKnownPlan *plan);
/* d_values of C = A*B into C's structure (d_rowptr, d_colidx: strictly increasing columns per row).  Queued only:
   nothing waits for the device.  A product whose column is not in its row of C sets *d_check to 1 (then d_values is
   garbage); the caller reads it when it waits. */
OceanError OceanCudaNumericKnown(OceanCudaDevice dev, const OceanCudaKnownPlan *plan, OceanDevCSR A, OceanDevCSR B,
                                 const OceanRowShape *d_shapes, const int64_t *d_rowptr, const int32_t *d_colidx,
                                 double *d_values, int *d_check);

/* ---- the product map of a known structure (cuda/ocean_productmap.cu), so that a numeric call needs no search in
   C's rows and sums every entry in the same order each call (the same bits), without atomics.  The plan's BLOCK rows
   (more than 32 and at most OCEAN_CUDA_ROWMAP_MAX entries of C, at most 65536 products; SMALL and WARP too when they
   are fewer) keep each product's position in its row (2 bytes a product, in product order: A's entries in order,
   each one's row of B in order), and a warp per row sums into shared memory, walking A and B as the products come;
   the other rows list their products by entry of C (their entries of A and B: 8 bytes a product, and an offset per
   entry of C), summed by a gather and a segmented sum.  The operands' structure must stay that of its creation (a
   walked row whose product count changed raises the known-structure error). */
#define OCEAN_CUDA_ROWMAP_MAX 1024
typedef struct {
  int64_t   nnz, products;
  int64_t   bytes;     /* device memory it holds (0: no map) */
  int64_t   walk_rows; /* the rows walked, from the plan's list: positions in their rows */
  int64_t   walk_products;
  int64_t  *roff;             /* walk_rows + 1: each of those rows' first product in pos */
  uint16_t *pos;              /* walk_products: each product's position in its row of C */
  int       walk_cap;         /* the longest of those rows of C (the values kernel's sums) */
  int64_t   entry_products;   /* the other rows' products, listed by entry of C: */
  int       entries_per_warp; /* of the entry kernel: 32, 64 or 128, so that a warp's entries hold about 128 products */
  int64_t  *eptr;             /* nnz + 1: entry e's products are [eptr[e], eptr[e + 1]) ... */
  int32_t  *eptr32;           /* ... or this instead (32 bits) when the products number fewer than 2^31 */
  int32_t  *aidx, *bidx;      /* products (padded to a multiple of 4): their entries of A and of B */
  int       side_by_side;     /* both parts, and every entry of C outside the walked rows has listed products: the entry
                                 kernel then writes only those, and the walked rows' kernel runs beside it */
} OceanCudaProductMap;
/* Made by the plan's rows in two parts (positions of the walked rows; count per entry, then list, for the others);
   A and B need fewer than 2^31 entries.  Nothing is kept and no error raised when the map would take more than
   max_bytes (map->bytes is then 0).  OCEAN_ERR_STATE when a product's column is not in its row of C or the counts
   are not `products`; OCEAN_ERR_MEMORY when the pool cannot hold it (nothing is kept then). */
OceanError OceanCudaProductMapCreate(OceanCudaDevice dev, const OceanCudaKnownPlan *plan, OceanDevCSR A, OceanDevCSR B,
                                     const OceanRowShape *d_shapes, int64_t nnz_c, const int64_t *d_rowptr,
                                     const int32_t *d_colidx, int64_t products, int64_t max_bytes,
                                     OceanCudaProductMap *map);
void       OceanCudaProductMapDestroy(OceanCudaDevice dev, OceanCudaProductMap *map);
/* C's values through the map: every entry of C summed from its products.  Queued only; *d_check set to 1 when the
   operands' structure gives a walked row another product count than the map's. */
OceanError OceanCudaNumericMap(OceanCudaDevice dev, const OceanCudaKnownPlan *plan, const OceanCudaProductMap *map,
                               OceanDevCSR A, OceanDevCSR B, const OceanRowShape *d_shapes, const int64_t *d_rowptr,
                               double *d_cvals, int *d_check);

/* ---- the NARROW workflow (cuda/ocean_narrow.cu): B has at most OCEAN_NARROW_MAX_COLUMNS columns; a team of warps
   per row of A sums it densely over them in shared memory and writes it in column order.  nnz_a sizes the teams. */
/* Row i into the dense-row workspace at i x ncols(B) (d_ws_cols, d_ws_vals: rows(A) x ncols(B) entries), d_counts[i]
   its nonzeros, d_offsets[i] = i x ncols(B) and d_flags[i] = 0 (OceanCudaCompact's inputs), d_shapes[i] its shape as
   the analysis makes it; d_totals[0..2] (zeroed here) = products, sum of the rows' upper bounds, rows with
   products.  sms: the device's multiprocessors (the teams grow when A's rows are too few to keep them busy). */
OceanError OceanCudaNarrowSymbolic(int sms, OceanDevCSR A, int64_t nnz_a, OceanDevCSR B, OceanRowShape *d_shapes,
                                   int64_t *d_counts, int64_t *d_offsets, uint8_t *d_flags, int32_t *d_ws_cols,
                                   double *d_ws_vals, int64_t *d_totals);
/* Numeric reuse: C's values into its known rows (d_rowptr, d_colidx).  Queued only; *d_check set to 1 when a row's
   columns are not C's. */
OceanError OceanCudaNarrowKnown(OceanCudaDevice dev, int sms, OceanDevCSR A, int64_t nnz_a, OceanDevCSR B,
                                const int64_t *d_rowptr, const int32_t *d_colidx, double *d_values, int *d_check);

/* ---- sketches (cuda/ocean_sketches.cu): one of m registers per row of B; merged per row of A and estimated */
OceanError OceanCudaSketchBuild(OceanDevCSR B, int registers, uint8_t *d_sketches);
OceanError OceanCudaSketchEstimate(OceanDevCSR A, const uint8_t *d_sketches, int registers, double *d_estimate);

/* ---- transposes (cuda/ocean_transpose.cu): M^T (M.ncols x M.nrows, nnz entries, rows sorted) into d_trowptr
   (M.ncols + 1), d_tcolidx, d_tvalues, with d_perm (nnz): entry t of M^T is entry d_perm[t] of M.  New values of
   the same structure: OceanCudaGatherValues(d_perm, nnz, M.values, d_tvalues). */
OceanError OceanCudaTranspose(OceanCudaDevice dev, OceanDevCSR M, int64_t nnz, int64_t *d_trowptr, int32_t *d_tcolidx,
                              double *d_tvalues, int64_t *d_perm);
/* d_dst[j] = d_src[d_perm[j]], j < n */
OceanError OceanCudaGatherValues(const int64_t *d_perm, int64_t n, const double *d_src, double *d_dst);

/* ---- scans, selections, compaction, row sort (cuda/ocean_scan.cu; CUB) */
/* d_out[0..n]: exclusive sum of d_in[row] over the listed rows (d_list NULL: rows 0..n-1); *total = d_out[n]
   (total NULL: not read back, no wait).
   With d_scatter, the sums go to d_scatter[row] instead (d_out is then scratch of n + 1). */
OceanError OceanCudaScanCounts(OceanCudaDevice dev, const int64_t *d_list, int64_t n, const int64_t *d_in,
                               int64_t *d_out, int64_t *d_scatter, int64_t *total);
/* d_out[0..n]: exclusive sum of the routes' slots (rows 0..n-1); *total = d_out[n] (total NULL: not read back). */
OceanError OceanCudaScanSlots(OceanCudaDevice dev, const OceanRoute *d_routes, int64_t n, int64_t *d_out,
                              int64_t *total);
/* The listed rows (d_list NULL: 0..n-1) whose flag is set, in order, into d_out; *nout of them (nout NULL: not read
   back, for a caller that knows the number). */
OceanError OceanCudaSelectFlagged(OceanCudaDevice dev, const int64_t *d_list, int64_t n, const uint8_t *d_flags,
                                  int64_t *d_out, int64_t *nout);
/* The same, queued: their number into the device word d_nout (the caller reads it with whatever else it waits for). */
OceanError OceanCudaSelectFlaggedQueued(OceanCudaDevice dev, const int64_t *d_list, int64_t n, const uint8_t *d_flags,
                                        int64_t *d_out, int64_t *d_nout);
/* d_dst[j] = d_src[j] - d_src[0] for j < n: a range of rows' offsets into a buffer of their own entries */
OceanError OceanCudaRebaseOffsets(const int64_t *d_src, int64_t n, int64_t *d_dst);
/* Row i of C (d_rowptr, nnz entries in all) from the slot buffer at d_offsets[i], or from the fallback buffer at
   d_foffsets[i] when flagged.  d_cols or d_vals NULL: that half is not copied (its sources may be NULL too). */
OceanError OceanCudaCompact(int64_t nrows, int64_t nnz, const int64_t *d_rowptr, const uint8_t *d_flags,
                            const int64_t *d_offsets, const int32_t *d_bcols, const double *d_bvals,
                            const int64_t *d_foffsets, const int32_t *d_fcols, const double *d_fvals, int32_t *d_cols,
                            double *d_vals);
/* Every row of a CSR by column, in place: only the rows found out of order (the global-hash LONG rows; the shared
   accumulators write rows sorted) are copied out and sorted back by a DeviceSegmentedSort. */
OceanError OceanCudaSortRows(OceanCudaDevice dev, int64_t nrows, int64_t nnz, const int64_t *d_rowptr, int32_t *d_cols,
                             double *d_vals);

#ifdef __cplusplus
}
#endif
#endif
