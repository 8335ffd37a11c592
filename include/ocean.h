/*
  ocean.h - the PETSc-free core API of petsc-ocean.

  An estimation-driven sparse general matrix-matrix product (SpGEMM) after the Ocean paper: a sampled
  analysis chooses one of three workflows (upper bound, HyperLogLog estimation, exact symbolic), rows are
  binned into accumulator configurations derived from a device profile, overflowing rows are detected and
  recomputed, and the output is compacted into sorted CSR.  A B with few, well-filled columns (the interpolation of
  a coarse AMG level) takes a fourth workflow, NARROW, decided from the sizes before any analysis: every row of C
  summed densely over B's columns in one pass.  Plans keep everything that depends only on the
  sparsity of the operands (sketches of B, the structure of C, exact bins) so that repeated products with
  new values run numeric-only.

  Conventions: int32 column indices, int64 row offsets, fp64 values.  Every call returns an OceanError;
  OceanGetLastErrorMessage() gives the text of the last failure on the calling thread.
*/
#ifndef OCEAN_H
#define OCEAN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  OCEAN_SUCCESS = 0,
  OCEAN_ERR_ARG,            /* a bad argument: sizes that do not match, a NULL pointer, an index out of range */
  OCEAN_ERR_MEMORY,         /* an allocation failed */
  OCEAN_ERR_INDEX_OVERFLOW, /* the exact nonzero count of C exceeds OceanOptions.max_output_nnz */
  OCEAN_ERR_STATE,          /* numeric called with operands whose structure differs from the symbolic phase */
  OCEAN_ERR_NOT_AVAILABLE,  /* the backend is not built, or no device is present */
  OCEAN_ERR_DEVICE          /* a CUDA call failed */
} OceanError;

const char *OceanErrorString(OceanError err);
const char *OceanGetLastErrorMessage(void);

/* A CSR matrix the caller owns.  Rows need not be sorted, but must not repeat a column.  structure_id names
   the sparsity pattern: equal nonzero ids promise an identical pattern (used to reuse sketches, transposes, the
   structure of C and the CUDA backend's device copies of host operands); 0 means "unknown, never reuse".
   values_id names the values of that pattern: equal nonzero ids (with equal structure ids) promise identical values,
   so a device copy is not uploaded again; 0 means "unknown, always upload".  Zero-initialize what you do not set. */
typedef struct {
  int64_t        nrows, ncols;
  const int64_t *rowptr; /* nrows + 1 offsets */
  const int32_t *colidx; /* rowptr[nrows] column indices in [0, ncols) */
  const double  *values; /* rowptr[nrows] values */
  uint64_t       structure_id;
  uint64_t       values_id;
} OceanCSR;

typedef enum { OCEAN_BACKEND_CPU = 0, OCEAN_BACKEND_CUDA = 1 } OceanBackend;

/* The resources the binning is derived from.  The CPU backend takes the profile of the GPU it imitates. */
typedef struct {
  char    name[64];
  int64_t smem_per_block; /* largest dynamic shared memory a block may opt in to (bytes) */
  int64_t smem_per_sm;    /* shared memory per multiprocessor (bytes) */
  int     num_sms;
  int     warp_size;
  int     max_threads_per_block;
  int     max_threads_per_sm;
} OceanDeviceProfile;

/* The NVIDIA H200: 227 KB per block, 228 KB per SM, 132 SMs, warps of 32, 1024/2048 threads. */
void OceanDeviceProfileDefault(OceanDeviceProfile *profile);

typedef enum {
  OCEAN_WORKFLOW_AUTO        = -1, /* the paper's selection from the analysis */
  OCEAN_WORKFLOW_UPPER_BOUND = 0,  /* bins by intermediate products: no symbolic, no estimation */
  OCEAN_WORKFLOW_ESTIMATE    = 1,  /* HyperLogLog estimates size the accumulators; overflow falls back */
  OCEAN_WORKFLOW_EXACT       = 2,  /* exact symbolic pass (binned by products / conservative CR) */
  OCEAN_WORKFLOW_NARROW      = 3   /* B has few columns: each row of C summed densely over them by a team, no
                                      analysis pass, no routing (Galerkin products of coarse levels); chosen from
                                      the sizes before any analysis (OceanOptions.narrow_*) */
} OceanWorkflow;

const char *OceanWorkflowName(OceanWorkflow w);

/* The NARROW workflow's limit: the columns of B a warp's dense row in shared memory holds (8 per lane). */
#define OCEAN_NARROW_MAX_COLUMNS 256

/* Heavy rows, the gMAGNUS way: their products expanded, split by a hierarchical multisplit into column chunks small
   enough for a shared-memory accumulator, each chunk summed there. */
typedef enum {
  OCEAN_HEAVY_AUTO       = 0, /* LONG's rows spanning more than heavy_min_span columns (and, when heavy_threshold is
                                   given, of more than that many products); without a threshold also, in the numeric
                                   pass, the rows of more than OCEAN_HEAVY_EARLY_PRODUCTS products spanning as much */
  OCEAN_HEAVY_OFF        = 1, /* never: such rows accumulate in global memory (LONG) */
  OCEAN_HEAVY_MULTISPLIT = 2  /* every row with more than heavy_threshold products (and more than ESC's) */
} OceanHeavyMode;

const char *OceanHeavyModeName(OceanHeavyMode m);

/* The most chunks OceanOptions.heavy_chunks_per_level may ask of one multisplit level. */
#define OCEAN_HEAVY_MAX_CHUNKS_PER_LEVEL 65536
/* auto mode without a threshold: a row of more products, spanning more than heavy_min_span columns, is heavy in the
   numeric pass even where a shared-memory hash would hold it (R-MAT 18/8: 4,383 more heavy rows, 19.8M products out of
   the shared-memory hashes, 46.6 -> 44.6 ms on an H100) */
#define OCEAN_HEAVY_EARLY_PRODUCTS 4096

typedef struct {
  OceanWorkflow workflow;      /* AUTO, or a forced workflow */
  int           hll_registers; /* 0: the paper's rule (32 when ER < hll_er_64, else 64); or 16..256, a power of two */
  double        estimate_coefficient;   /* 0: the paper's rule (2.0 with 32 registers or fewer, else 1.5) */
  double        sample_fraction;        /* rows sampled for CR (0.03) */
  int64_t       sample_min, sample_max; /* 600, 10000 */
  double        ub_products_per_row;    /* upper bound below this average of products per row (64) */
  int64_t       small_bound;            /* ... and, without a sample, when the rows' bounds total at most this many
                                           entries (2^25, 400 MB of slots; 0: never): below that a sample and an
                                           exact symbolic pass (or sketches) cost more time than the slots memory */
  int64_t bound_factor;                 /* UPPER_BOUND routes a row by min(ub, bound_factor x the longest row of B it
                                           reaches) instead of ub, into a smaller accumulator and slot (rows that
                                           overflow it are computed again by their exact counts), in products whose
                                           rows' likely slots total at most 3/4 of their bounds (8: a mesh row of
                                           A*B reaches up to 2^3 times the rows of B in 3D); 0: by ub */
  int     one_pass_exact;               /* where the selection takes ESTIMATE, a backend whose EXACT runs in one pass
                                           (the CPU's: each thread appends its rows to its own buffer) takes EXACT
                                           instead, which needs neither the sketches nor a second pass (1); 0: the
                                           selection's choice, the decisions a GPU makes */
  double  er_threshold;                 /* estimation needs ER >= this (8) */
  double  cr_threshold;                 /* ... and sampled CR >= this (8) */
  double  hll_er_64;                    /* 64 registers from this ER on (48) */
  double  bitmap_cr_threshold;          /* dense accumulators query the bitmap before writing when CR > this (2) */
  double  hash_load;                    /* a hash accumulator admits at most this fraction of its slots (0.8) */
  int64_t acc_smem_per_sm;              /* shared memory per SM given to accumulation (128 KB, capped by the device) */
  int64_t max_output_nnz;               /* nnz(C) limit; over-allocation beyond it switches to exact counting */
  int64_t narrow_max_columns;           /* NARROW when B has at most this many columns (256, the most; 0: never
                                           automatically) ... */
  double  narrow_min_density;           /* ... nnz(B) >= this x rows(B) x columns(B) (0.25) ... */
  int64_t narrow_max_entries;           /* ... and rows(A) x columns(B) <= this (2^22: its dense rows, 12 bytes each) */
  int     record_rows;                  /* keep the per-row decisions (OceanProductGetRowInfo) */
  int     device_timers;                /* CUDA: time the phases on the device (two events a phase; OceanStats.t_*
                                           stay 0 without them; on whenever a phase callback is set) (0) */
  int64_t device_memory_limit;    /* CUDA: the device memory (bytes) the over-allocating workflows may count on for
                                     their slots (12 bytes per allocated entry); 0 (default): what the device has
                                     free, with the pool's cached blocks and the mirrors no running product reads.
                                     Slots that would not fit switch the product to exact counting (whose output
                                     is exactly C); if that does not fit either, the call fails with
                                     OCEAN_ERR_MEMORY and C is not touched */
  int64_t reuse_map_max_bytes;    /* CUDA numeric-only calls: the second one makes a map of every product to its entry
                                     of C (2 bytes per product in the rows a warp walks, 8 bytes per product and up
                                     to 8 per entry of C in the others; kept by the plan) when it takes
                                     at most this many bytes, and every call then sums through it (no search, no
                                     atomics, the same bits each call); else, or when the pool cannot hold it,
                                     each call searches C's rows.  -1 (default): a quarter of the device's memory;
                                     0: never */
  OceanHeavyMode heavy;           /* rows too heavy for the shared-memory bins (gMAGNUS); OceanOptionsDefault: AUTO */
  int64_t        heavy_threshold; /* a row is heavy above this many products, and a chunk is summed in a shared hash
                                     at most this many (0: the shared memory a block may have / 24, the paper's eq. 4:
                                     12-byte entries at load 1/2; in auto mode 0 sets no least products) */
  int64_t heavy_chunk_columns;    /* columns of a chunk of the last multisplit level, summed densely in shared memory
                                     (0: the largest power of two whose values, output list and bitmap fit a quarter
                                     of an SM's shared memory; else a power of two) */
  int64_t heavy_chunks_per_level; /* most chunks one multisplit level makes of a row or chunk (0: what the split
                                     kernel's shared-memory histograms hold, the paper's eq. 6; else a power of two
                                     >= 2): fewer make more levels */
  int64_t        heavy_min_span; /* AUTO: a LONG row is heavy only when its columns span more than this (2^15): LONG
                                    sums narrower rows at least as fast (its dense values per block stay small),
                                    the multisplit wider ones (R-MAT on an H100: 1.05x-1.39x at 2^16 and 2^17
                                    columns, nothing gained at 2^14) */
} OceanOptions;

void OceanOptionsDefault(OceanOptions *opts);

/* Bins, in the order of the kernels a GPU launches. */
typedef enum {
  OCEAN_BIN_EMPTY = 0, /* no intermediate products */
  OCEAN_BIN_ESC4,      /* expand-sort-compact, 4 rows per 64-thread block */
  OCEAN_BIN_ESC2,      /* expand-sort-compact, 2 rows per 64-thread block */
  OCEAN_BIN_SHORT,     /* many short rows per block, each with a small hash (smallest normal configuration) */
  OCEAN_BIN_N0,        /* five normal configurations, each twice the previous: hash or dense */
  OCEAN_BIN_N1,
  OCEAN_BIN_N2,
  OCEAN_BIN_N3,
  OCEAN_BIN_N4,
  OCEAN_BIN_LONG,   /* largest configuration, accumulating in global memory: dense (bitmap in shared memory) or hash */
  OCEAN_BIN_HEAVY,  /* heavy rows: outer product, hierarchical multisplit, chunks summed in shared memory */
  OCEAN_BIN_NARROW, /* the NARROW workflow's rows: dense over B's few columns, one team of warps per row */
  OCEAN_NUM_BINS
} OceanBin;

typedef enum {
  OCEAN_ACC_NONE = 0,
  OCEAN_ACC_ESC,
  OCEAN_ACC_HASH,
  OCEAN_ACC_DENSE,
  OCEAN_ACC_GLOBAL_HASH,
  OCEAN_ACC_GLOBAL_DENSE,
  OCEAN_ACC_MULTISPLIT /* HEAVY: expanded, split into column chunks, each chunk summed in shared memory */
} OceanAccumulator;

const char *OceanBinName(OceanBin bin);
const char *OceanAccumulatorName(OceanAccumulator acc);

/* One kernel configuration.  Capacities are in entries; limits are the most output nonzeros a row may have in it. */
typedef struct {
  int     threads;                /* threads per block */
  int     rows_per_block;         /* rows one block handles at once */
  int64_t smem_bytes;             /* shared memory per block (LONG: the most its dense bitmap may take) */
  int64_t hash_capacity;          /* numeric hash slots per row (column + value: 12 bytes each) */
  int64_t hash_limit;             /* floor(hash_load * hash_capacity) */
  int64_t dense_columns;          /* numeric dense accumulator: columns per row (8-byte value + 1 bitmap bit) */
  int64_t symbolic_hash_capacity; /* symbolic hash slots per row (4-byte column) */
  int64_t symbolic_hash_limit;
  int64_t symbolic_dense_columns; /* symbolic dense accumulator: bitmap only */
  int64_t max_products;           /* ESC: most intermediate products per row; HEAVY: a row with more is heavy, a chunk
                                     with at most this many is summed in its shared hash (hash_limit); 0 elsewhere */
  int64_t chunks_per_level;       /* HEAVY: most chunks one multisplit level makes (a power of two); 0 elsewhere */
  int     takes_all;              /* HEAVY: every row with more than max_products products is heavy (not only LONG's) */
  int64_t min_span;               /* HEAVY: a LONG row is heavy when its span passes this (AUTO); 0 elsewhere */
  int64_t early_products; /* HEAVY: in the numeric pass a row with more products, spanning more than min_span, is
                             heavy before the shared-memory bins (AUTO without a threshold); INT64_MAX elsewhere */
} OceanBinConfig;

typedef struct _p_OceanContext *OceanContext;
typedef struct _p_OceanProduct *OceanProduct;

/* profile NULL: the device's own (CUDA) or the H200 default (CPU).  The CUDA backend uses device 0. */
OceanError OceanContextCreate(OceanBackend backend, const OceanDeviceProfile *profile, OceanContext *ctx);
/* The same on CUDA device `device` (0 .. OceanCudaDeviceCount() - 1; it becomes the calling thread's current
   device); the CPU backend only checks device >= 0.  One device per context: MPI ranks sharing a node pick theirs. */
OceanError OceanContextCreateOnDevice(OceanBackend backend, int device, const OceanDeviceProfile *profile,
                                      OceanContext *ctx);
/* The CUDA device of a CUDA context; -1 for a CPU context. */
OceanError OceanContextGetDevice(OceanContext ctx, int *device);
OceanError OceanContextDestroy(OceanContext *ctx);
/* The default options of the context's plans: a plan without options of its own (OceanProductSetOptions) runs with
   the context's, and redoes its symbolic phase when they change. */
OceanError OceanContextSetOptions(OceanContext ctx, const OceanOptions *opts);
OceanError OceanContextGetOptions(OceanContext ctx, OceanOptions *opts);
OceanError OceanContextGetProfile(OceanContext ctx, OceanDeviceProfile *profile);
OceanError OceanContextGetBackend(OceanContext ctx, OceanBackend *backend);
OceanError OceanContextGetBinConfig(OceanContext ctx, OceanBin bin, OceanBinConfig *cfg);
/* How many times sketches of B were built and reused through this context's sketch cache. */
OceanError OceanContextGetSketchCounts(OceanContext ctx, int64_t *built, int64_t *reused);
/* How many host transposes (AtB's A^T, PtAP's P^T on a host backend) plans of this context made, and how many times a
   plan took one another plan had made of the same structure. */
OceanError OceanContextGetTransposeCounts(OceanContext ctx, int64_t *built, int64_t *shared);

/* Whether the CUDA backend was compiled in, and how many devices it sees (0 without a driver or GPU). */
int        OceanCudaCompiled(void);
OceanError OceanCudaDeviceCount(int *count);
OceanError OceanCudaDeviceProfile(int device, OceanDeviceProfile *profile);

/* The CUDA backend's device memory pool of this context (bytes): in use now, the most ever in use, held from
   cudaMalloc (cached for later products), and the number of cudaMalloc calls.  All 0 for a CPU context. */
OceanError OceanContextGetDeviceMemory(OceanContext ctx, int64_t *in_use, int64_t *peak, int64_t *reserved,
                                       int64_t *cuda_mallocs);
/* The peak above restarts from the memory in use now (e.g. between benchmark matrices). */
OceanError OceanContextResetDeviceMemoryPeak(OceanContext ctx);
/* Gives back what the context only caches: the device sketch cache (rebuilt on demand) and the pool's blocks that
   are not in use (cudaFree).  Plans' device memory (their C, operands, exact routes) stays.  Nothing to do for a CPU
   context. */
OceanError OceanContextTrimDeviceMemory(OceanContext ctx);
/* Device mirrors: host operands with a structure id stay on the device after their product (at most eight, kept by
   the context), so that a later product with the same operand uploads nothing, or only its values.  Their bytes (row
   offsets, column indices, values) stay within a limit, bytes, or with 0 the default, a quarter of the device's memory:
   the least recently used mirrors make room, never one the running product reads, and an operand that does not fit
   beside those is uploaded for its product alone.  When a device allocation fails, the mirrors the running product
   does not read are freed and the allocation is tried once more.  OceanContextTrimDeviceMemory frees them all.  A CPU
   context ignores the limit. */
OceanError OceanContextSetDeviceMirrorLimit(OceanContext ctx, int64_t bytes);
/* The mirrors' bytes now and their limit (0 and 0 for a CPU context). */
OceanError OceanContextGetDeviceMirrors(OceanContext ctx, int64_t *bytes, int64_t *limit);

/* Phases of the pipeline, reported to an optional callback (e.g. profiling events) from the calling thread. */
typedef enum {
  OCEAN_PHASE_ANALYSIS = 0, /* per-row products and spans, sampled CR, workflow selection */
  OCEAN_PHASE_ESTIMATE,     /* HyperLogLog sketches of B (unless cached) and their merge per row of A */
  OCEAN_PHASE_SYMBOLIC,     /* exact symbolic pass */
  OCEAN_PHASE_NUMERIC,      /* numeric accumulation */
  OCEAN_PHASE_FALLBACK,     /* overflow rows recomputed */
  OCEAN_PHASE_COMPACT,      /* over-allocated output compacted into CSR */
  OCEAN_PHASE_TRANSPOSE,    /* transposes for AtB and PtAP */
  OCEAN_PHASE_UPLOAD,       /* host operands copied to the device (CUDA; inside the analysis or numeric phase) */
  OCEAN_PHASE_DOWNLOAD,     /* C copied to the host (CUDA; when OceanProductGetC asks for it) */
  OCEAN_NUM_PHASES
} OceanPhase;

const char *OceanPhaseName(OceanPhase phase);
/* begin: 1 when the phase starts, 0 when it ends; flops: floating-point operations of the phase (at its end). */
typedef void (*OceanPhaseCallback)(void *user, OceanPhase phase, int begin, double flops);
OceanError OceanContextSetPhaseCallback(OceanContext ctx, OceanPhaseCallback callback, void *user);

typedef enum { OCEAN_PRODUCT_AB = 0, OCEAN_PRODUCT_AtB, OCEAN_PRODUCT_PtAP } OceanProductType;
const char *OceanProductTypeName(OceanProductType t);

/* A product plan.  AB: C = A*B.  AtB: C = A^T*B through a cached transpose of A.  PtAP: C = P^T*(A*P)
   through a cached transpose of P (the second operand is P; on a CUDA context P^T is made and kept on the device
   and A*P stays there).  Each SpGEMM inside is a "stage":
   AB and AtB have one, PtAP two (stage 0: A*P, stage 1: P^T*(AP)). */
OceanError OceanProductCreate(OceanContext ctx, OceanProductType type, OceanProduct *prod);
OceanError OceanProductDestroy(OceanProduct *prod);
/* The plan's own options (validated, the bin table computed once here); the next OceanProductSymbolic redoes the
   symbolic phase.  GetOptions: the plan's own, else the context's. */
OceanError OceanProductSetOptions(OceanProduct prod, const OceanOptions *opts);
OceanError OceanProductGetOptions(OceanProduct prod, OceanOptions *opts);

/* Symbolic and numeric: afterwards the structure and the values of C are available.  Structures whose ids
   match the previous call are reused (sketches, transposes, C). */
OceanError OceanProductSymbolic(OceanProduct prod, const OceanCSR *A, const OceanCSR *B);

/* Numeric only: the operands' structure ids must be those of the last symbolic call (else OCEAN_ERR_STATE).
   Recomputes the values of C into the plan's storage with exact bins.  With a CUDA context (C on the device) it
   returns once the work is queued on the default stream, like cusparseSpGEMMreuse_compute: the statistics of the
   call, and an operand whose structure changed under the same ids (OCEAN_ERR_STATE: a product falls outside C), come
   with the next OceanProductSync, OceanProductGetStats or OceanProductGetC. */
OceanError OceanProductNumeric(OceanProduct prod, const OceanCSR *A, const OceanCSR *B);
/* Waits for the plan's queued device work and reports what it found (see OceanProductNumeric); nothing with the CPU
   backend, whose calls return when done. */
OceanError OceanProductSync(OceanProduct prod);

/* C as computed by the last symbolic or numeric call, on the host; owned by the plan, valid until the next call.
   With a CUDA context C is computed on the device and copied to the host here, on the first request after each
   symbolic or numeric call (the structure once per symbolic call, the values once per call); values NULL asks
   for the structure only, and the values stay on the device. */
OceanError OceanProductGetC(OceanProduct prod, int64_t *nrows, int64_t *ncols, int64_t *nnz, const int64_t **rowptr,
                            const int32_t **colidx, const double **values);

/* For a caller that keeps C in arrays of its own (the PETSc layer: C's matrix): a host backend's plan frees its copy
   of C's column indices and values (a CPU plan's C lives on the host only, so it would be held twice); a device
   backend's plan keeps what it has.  Numeric calls then go through OceanProductNumericInto, OceanProductGetC gives the
   row offsets only, and the next OceanProductSymbolic makes C anew. */
OceanError OceanProductReleaseHostC(OceanProduct prod);
/* C's structure copied into the caller's host arrays, either may be NULL: rowptr (nrows + 1 offsets), colidx (nnz
   column indices).  A device plan copies straight from the device and keeps no host copy of its own: for a caller
   whose matrix holds C's structure (no second copy, no second pass over it). */
OceanError OceanProductGetCStructureInto(OceanProduct prod, int64_t *rowptr, int32_t *colidx);
/* OceanProductNumeric with C's values written into values[0, nnz), in the structure colidx gives (the plan's C, row
   by row: what OceanProductGetC gave after the symbolic call).  Every plan takes it; a plan that kept its C copies
   the values out of it. */
OceanError OceanProductNumericInto(OceanProduct prod, const OceanCSR *A, const OceanCSR *B, int64_t nnz,
                                   const int32_t *colidx, double *values);

/* Where the operands of a plan's OceanProductSymbolic and OceanProductNumeric calls live. */
typedef enum { OCEAN_MEMORY_HOST = 0, OCEAN_MEMORY_DEVICE = 1 } OceanMemoryType;

/* OCEAN_MEMORY_HOST (the default): rowptr, colidx and values of A and B are host pointers.
   OCEAN_MEMORY_DEVICE: they are device pointers on the CUDA context's device (cudaMalloc or managed memory), used in
   place: nothing is uploaded and nothing of size nnz comes to the host (symbolic reads rowptr[0] and rowptr[nrows]
   of each operand; per-row records come to the host only with OceanOptions.record_rows).  Column indices are not
   validated on the host, so out-of-range ones are the caller's bug.  Numeric trusts that operands with the symbolic
   call's structure ids have its structure (nnz included).  Only plans of a CUDA context (OCEAN_ERR_ARG otherwise);
   AtB makes A^T and PtAP makes P^T on the device.  C is then read with OceanProductGetDeviceC; OceanProductGetC
   still works (it downloads). */
OceanError OceanProductSetOperandMemType(OceanProduct prod, OceanMemoryType mtype);
OceanError OceanProductGetOperandMemType(OceanProduct prod, OceanMemoryType *mtype);

/* C of the last symbolic or numeric call in device memory (CUDA context; OCEAN_ERR_NOT_AVAILABLE for a CPU one):
   sorted CSR with int64 row offsets, owned by the plan (its context's pool), valid until the next symbolic or numeric
   call or the plan's destruction.  Nothing is copied. */
OceanError OceanProductGetDeviceC(OceanProduct prod, int64_t *nrows, int64_t *ncols, int64_t *nnz,
                                  const int64_t **d_rowptr, const int32_t **d_colidx, const double **d_values);

/* Device CSR whose row offsets are int32 (cuSPARSE's, PETSc's aijcusparse) in the int64 convention of OceanCSR: the
   nrows + 1 offsets widened on the device into the plan's storage for operand k (0: A, 1: B), *d_rowptr pointing there
   (NULL for nrows == 0 without offsets); valid until the plan's next call of this for k or its destruction.  CUDA
   contexts only (OCEAN_ERR_ARG for a CPU one). */
OceanError OceanProductWidenDeviceOffsets(OceanProduct prod, int k, int64_t nrows, const int32_t *d_rowptr32,
                                          const int64_t **d_rowptr);

/* The values of C (as OceanProductGetDeviceC gives them) copied into d_values, nnz doubles of device memory, e.g. the
   value array of a cuSPARSE matrix with C's structure; returns when the copy is done. */
OceanError OceanProductCopyDeviceValues(OceanProduct prod, double *d_values);

/* C (as OceanProductGetDeviceC gives it) copied into the caller's device CSR with int32 row offsets (cuSPARSE's,
   PETSc's aijcusparse with 32-bit PetscInt): nrows + 1 offsets, nnz column indices and values; OCEAN_ERR_ARG when nnz
   passes INT32_MAX.  Returns when the copies are done. */
OceanError OceanProductCopyDeviceCSR32(OceanProduct prod, int32_t *d_rowptr, int32_t *d_colidx, double *d_values);
/* The same in compressed rows (PETSc's aijcusparse form for a C with many empty rows): only C's kept rows with
   entries, their indices into d_rindex (kept) and their offsets into d_rowptr (kept + 1); OCEAN_ERR_STATE unless
   exactly kept rows of C have entries. */
OceanError OceanProductCopyDeviceCompressedCSR32(OceanProduct prod, int64_t kept, int32_t *d_rindex, int32_t *d_rowptr,
                                                 int32_t *d_colidx, double *d_values);

typedef struct {
  OceanWorkflow workflow;          /* taken */
  int           workflow_forced;   /* by OceanOptions.workflow */
  int           switched_to_exact; /* the over-allocation would have passed max_output_nnz (1), or the device memory
                                      (2: OceanOptions.device_memory_limit); or the selection's ESTIMATE was taken
                                      as the backend's one-pass EXACT (3: OceanOptions.one_pass_exact) */
  int64_t bound_factor;            /* UPPER_BOUND routed rows by min(ub, bound_factor x longest B row) (0: by ub) */
  int     hll_registers;           /* 0 when no estimation ran */
  double  estimate_coefficient;
  int64_t nrows, ncols;
  int64_t nnz_a, nnz_b, nnz_c;
  int64_t products;        /* intermediate products */
  int64_t bound_nnz;       /* sum of the rows' upper bounds min(products, column span, columns): nnz(C) <= this */
  double  er;              /* products / nnz(A) */
  double  cr;              /* products / nnz(C), exact */
  double  cr_sampled;      /* sum of sampled products / sum of sampled nnz */
  double  cr_mean, cr_std; /* per sampled row */
  double  cr_conservative; /* max(1, mean - 2 std): sizes the exact symbolic bins */
  int64_t sampled_rows;    /* 0 when the workflow needed no sample (a tight upper bound) */
  int     bitmap_query;    /* dense accumulators query the bitmap before writing */
  int64_t rows_per_bin[OCEAN_NUM_BINS];                 /* the numeric bins of the pipeline's run */
  int64_t dense_rows, hash_rows, esc_rows, global_rows; /* global: LONG rows (global-memory hash or dense) */
  int64_t overflow_rows;                                /* estimate too small: recomputed by the fallback */
  int64_t symbolic_retry_rows;     /* exact workflow: symbolic accumulator too small, retried larger */
  int64_t allocated_entries;       /* over-allocated output entries before compaction */
  double  estimate_mean_rel_error; /* mean |predicted/coef - nnz| / nnz over rows with nnz > 0 (estimate workflow) */
  int     packed_sort_keys;        /* column index and slot packed in 32 bits for the sort */
  int     sketches_reused;         /* sketches of B came from the cache */
  int64_t symbolic_calls, numeric_calls;
  double  t_analysis, t_estimate, t_symbolic, t_numeric, t_fallback, t_compact, t_transpose; /* seconds, last call */
  double  t_upload, t_download; /* seconds (host wall time) copying operands up and C down since the last call began */
  int64_t uploaded_bytes; /* operand bytes copied to the device by the last call (0: its device copies were current) */
  int64_t downloaded_bytes;       /* bytes of C copied to the host since the last call began (OceanProductGetC) */
  int64_t reuse_map_bytes;        /* numeric-only call (CUDA): the bytes of the product map it summed through (0: it
                                     searched C's rows; OceanOptions.reuse_map_max_bytes) */
  int     reuse_map_side_by_side; /* ... and its two parts (walked rows, rows listed by entry) ran on two streams */
  int64_t host_waits; /* CUDA: the times the last call's host waited for the device (a symbolic call: from its analysis
                         to its return, device memory allocations included; 0 on the CPU) */
  /* heavy rows (OCEAN_ACC_MULTISPLIT) of the call's numeric pass, the same on every backend */
  int64_t heavy_rows, heavy_products; /* rows and their intermediate products */
  int64_t heavy_chunks;               /* chunks summed (light chunks of every level, all chunks of the last) */
  int64_t heavy_dense_chunks;         /* ... of them with more elements than tau (the paper's dense chunks) */
  int64_t heavy_split_elements;       /* elements the multisplits moved, all levels */
  int64_t heavy_rows_in_place;        /* CUDA: heavy rows whose chunks went straight into C (the exact workflow's
                                         symbolic pass counted them by chunk); the others' outputs were copied */
  int64_t heavy_batches;              /* CUDA: batches the heavy rows were taken in, each with its products in half the
                                         memory the device had for them (0 on the CPU) */
  int     heavy_levels;               /* multisplit levels the rows went through (deepest) */
  int     heavy_levels_planned;       /* levels C's columns need (the paper's eq. 7) */
  int64_t heavy_chunk_columns;        /* columns of a last-level chunk */
  double  t_heavy_expand, t_heavy_histogram, t_heavy_split, t_heavy_accumulate; /* CUDA: seconds (device events) */
  int64_t row_chunks; /* CUDA: C did not fit the device memory beside the accumulators, so the exact
                         workflow made it in this many chunks of rows, each copied to the host as done;
                         C is then on the host only (OceanProductGetDeviceC fails).  0: C whole on the device */
} OceanStats;

OceanError OceanProductGetNumStages(OceanProduct prod, int *nstages);
OceanError OceanProductGetStats(OceanProduct prod, int stage, OceanStats *stats);

/* Per-row decisions of one stage (OceanOptions.record_rows must be set before symbolic). */
typedef struct {
  int64_t products;    /* intermediate products */
  int64_t predicted;   /* the size the bin was chosen by (estimate x coefficient, upper bound, or exact) */
  int64_t slot;        /* output entries allocated before compaction (estimate and upper-bound workflows) */
  int64_t nnz;         /* actual nonzeros */
  double  estimate;    /* raw HyperLogLog estimate (0 when none) */
  uint8_t bin;         /* OceanBin */
  uint8_t accumulator; /* OceanAccumulator */
  uint8_t overflowed;
} OceanRowInfo;

OceanError OceanProductGetRowInfo(OceanProduct prod, int stage, const OceanRowInfo **rows, int64_t *nrows);

/* Raw HyperLogLog estimates of the nonzeros of each row of A*B with the given register count (a power of two,
   16..256).  For accuracy studies and tests; the pipeline uses the same sketches and estimator. */
OceanError OceanEstimateRowNnz(OceanContext ctx, const OceanCSR *A, const OceanCSR *B, int registers, double *estimate);

/* Exact nonzeros of each row of A*B (a reference count, no binning). */
OceanError OceanCountRowNnz(const OceanCSR *A, const OceanCSR *B, int64_t *nnz);

#ifdef __cplusplus
}
#endif
#endif
