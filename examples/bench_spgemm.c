/*
  bench_spgemm - the SpGEMM benchmark of petsc-ocean: C = A*B (B = A unless a second file is given) with
  cuSPARSE's generic SpGEMM (ALG1, ALG2, ALG3, and the numeric-only cusparseSpGEMMreuse) and with ours
  (bench_ocean below: built in with -DOCEAN_BENCH_OURS, which `make bench` sets when CUDA is found).

  Every time is the median over the timed repetitions, taken with cudaEvents around the whole product from
  device-resident A and B to a complete device CSR C: descriptors, work estimation, every buffer and C's arrays
  allocated with cudaMalloc, compute and copy; everything is freed between repetitions.  The first run of each
  method (the probe, also the first warm-up) records the memory it asks for and a cudaMemGetInfo cross-check,
  and brings C back to the host, where it is checked against a host reference product.

  Usage: bench_spgemm [--only NAME[,NAME]] [--reps N] [--warmup N] [--csv PATH] [--list] [--max-gb G]
                      [--chunk-fraction F] [--small] [FILE.mtx | A.mtx:B.mtx ...]
*/
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>
#define DISABLE_CUSPARSE_DEPRECATED  /* cusparse.h marks its legacy API deprecated, and warns on its own declarations \
                                      */
#include <cuda_runtime.h>
#include <cusparse.h>
#include <errno.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gen.h" /* tests/common: the benchmark's set, the file readers, the host reference product */
#include "ref.h"
#include "ocean.h" /* OceanStats for the phase table; the calls only with -DOCEAN_BENCH_OURS */

/* ---- options ---------------------------------------------------------------------------------------------- */

typedef struct {
  const char  *only; /* comma-separated names, NULL: all */
  int          reps, warmup, list, small, no_cusparse;
  int          no_reuse;        /* no numeric-only runs (the largest products: each of ours copies C) */
  int          heavy;           /* OceanOptions.heavy of ours: 0 auto, 1 off, 2 multisplit */
  int          workflow;        /* OceanOptions.workflow of ours (OCEAN_WORKFLOW_AUTO: the selection) */
  int          rmat_set;        /* the gMAGNUS paper's R-MAT pairs after the built-in set */
  long long    reuse_map_bytes; /* OceanOptions.reuse_map_max_bytes of ours (-1: the default) */
  long long    small_bound;     /* OceanOptions.small_bound of ours (-1: the default) */
  long long    bound_factor;    /* OceanOptions.bound_factor of ours (-1: the default) */
  long long    heavy_threshold; /* OceanOptions.heavy_threshold of ours (0: from the shared memory) */
  long long    heavy_columns;   /* OceanOptions.heavy_chunk_columns of ours (0: from the shared memory) */
  long long    heavy_per_level; /* OceanOptions.heavy_chunks_per_level of ours (0: from the shared memory) */
  long long    heavy_min_span;  /* OceanOptions.heavy_min_span of ours (-1: the default) */
  const char  *csv;
  double       max_gb; /* 0: no limit */
  float        chunk;  /* ALG3's chunk_fraction */
  const char **files;
  int          nfiles;
} Options;

static void usage(FILE *f)
{
  fprintf(
    f, "usage: bench_spgemm [options] [FILE.mtx | A.mtx:B.mtx | ptap:A.bin:P.bin ...]\n"
       "  --only NAME[,NAME]   run only these matrices (built-in names, or file names without .mtx)\n"
       "  --reps N             timed repetitions (10; 3 when one run takes more than 1 s)\n"
       "  --warmup N           warm-up runs before them (3)\n"
       "  --csv PATH           results (build/bench/bench.csv)\n"
       "  --list               print the matrices' statistics (computed on the host) and exit: no GPU needed\n"
       "  --max-gb G           skip a method when its buffers would exceed G GB\n"
       "  --chunk-fraction F   cusparseSpGEMM_estimateMemory's chunk_fraction (0.2)\n"
       "  --small              smaller versions of the built-in matrices, for quick checks\n"
       "  --no-cusparse        ours only (for profiling: no ratio is printed)\n"
       "  --no-reuse           no numeric-only runs, ours or cuSPARSE's (the largest products: each run copies C)\n"
       "  --heavy MODE         our heavy rows: auto (the library's default: the multisplit where rows need it),\n"
       "                       off, multisplit\n"
       "  --heavy-min-span N   auto: the columns a row too heavy for shared memory must span to be heavy (-1, the\n"
       "                       default: the library's, 2^15)\n"
       "  --heavy-threshold N  products above which a row is heavy (at most the shared memory's; 0, the default: the\n"
       "                       shared memory's with multisplit, none asked with auto)\n"
       "  --heavy-columns N    columns of a last-level heavy chunk, a power of two (0, the default: from the shared\n"
       "                       memory)\n"
       "  --heavy-per-level N  most chunks one multisplit level makes, a power of two >= 2 (0, the default: what the\n"
       "                       split kernel's histograms hold); fewer make more levels\n"
       "  --workflow W         our workflow for every product: auto (the selection), upper_bound, estimate, exact,\n"
       "                       narrow (a product the forced workflow cannot take fails and is reported)\n"
       "  --reuse-map-bytes N  our numeric-only reuse: the product map up to N bytes (0: never, searching C's rows;\n"
       "                       -1, the default: up to a quarter of the device memory)\n"
       "  --small-bound N      our selection takes the upper bound without a sample when the rows' bounds total at\n"
       "                       most N entries (-1, the default: the library's)\n"
       "  --bound-factor F     the upper bound routes a row by min(bound, F x the longest row of B it reaches); 0:\n"
       "                       by the bound (-1, the default: the library's)\n"
       "  --rmat-set           add the gMAGNUS paper's R-MAT pairs: rmat_s<scale>_a<deg>_b8, C = A*B with A of\n"
       "                       degree 4, 8, 16, 32 and another R-MAT B of degree 8 (Graph500 a = .57, b = c = .19),\n"
       "                       scales 15-18 (19 and 20 with A of degree 4 and 8)\n"
       "Matrix Market files (coordinate real/integer/pattern, general/symmetric) are added to the set;\n"
       "A.mtx:B.mtx multiplies two files.  Their values are replaced by pseudo-random nonzero ones.\n"
       "ptap:A.bin:P.bin: the Galerkin product P^T A P of two PETSc binary matrices (their own values), ours as a\n"
       "PtAP plan against cuSPARSE's csr2csc + two cusparseSpGEMM (ALG1); named ptap_<A's file name>.\n"
       "--only takes NAME* for every name that starts with NAME.\n");
}

static int parse_options(int argc, char **argv, Options *o)
{
  *o       = (Options){.reps            = 10,
                       .warmup          = 3,
                       .heavy           = 0, /* auto: the library's default (OceanOptionsDefault), what a user gets */
                       .heavy_min_span  = -1,
                       .workflow        = OCEAN_WORKFLOW_AUTO,
                       .reuse_map_bytes = -1,
                       .small_bound     = -1,
                       .bound_factor    = -1,
                       .csv             = "build/bench/bench.csv",
                       .chunk           = 0.2f};
  o->files = (const char **)GenMalloc((size_t)argc * sizeof(char *));
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int         takes = 1;
    if (!strcmp(a, "--list")) o->list = 1, takes = 0;
    else if (!strcmp(a, "--small")) o->small = 1, takes = 0;
    else if (!strcmp(a, "--no-cusparse")) o->no_cusparse = 1, takes = 0;
    else if (!strcmp(a, "--no-reuse")) o->no_reuse = 1, takes = 0;
    else if (!strcmp(a, "--rmat-set")) o->rmat_set = 1, takes = 0;
    else if (!strcmp(a, "--help") || !strcmp(a, "-h")) return usage(stdout), exit(0), 0;
    else if (!v && a[0] == '-') return fprintf(stderr, "bench: %s needs a value\n", a), 1;
    else if (!strcmp(a, "--only")) o->only = v;
    else if (!strcmp(a, "--reps")) o->reps = atoi(v);
    else if (!strcmp(a, "--warmup")) o->warmup = atoi(v);
    else if (!strcmp(a, "--csv")) o->csv = v;
    else if (!strcmp(a, "--max-gb")) o->max_gb = atof(v);
    else if (!strcmp(a, "--chunk-fraction")) o->chunk = (float)atof(v);
    else if (!strcmp(a, "--reuse-map-bytes")) o->reuse_map_bytes = atoll(v);
    else if (!strcmp(a, "--small-bound")) o->small_bound = atoll(v);
    else if (!strcmp(a, "--bound-factor")) o->bound_factor = atoll(v);
    else if (!strcmp(a, "--heavy-threshold")) o->heavy_threshold = atoll(v);
    else if (!strcmp(a, "--heavy-columns")) o->heavy_columns = atoll(v);
    else if (!strcmp(a, "--heavy-per-level")) o->heavy_per_level = atoll(v);
    else if (!strcmp(a, "--heavy-min-span")) o->heavy_min_span = atoll(v);
    else if (!strcmp(a, "--heavy")) {
      o->heavy = !strcmp(v, "auto") ? 0 : !strcmp(v, "off") ? 1 : !strcmp(v, "multisplit") ? 2 : -1;
      if (o->heavy < 0) return fprintf(stderr, "bench: --heavy %s: auto, off or multisplit\n", v), 1;
    } else if (!strcmp(a, "--workflow")) {
      static const char *names[] = {"auto", "upper_bound", "estimate", "exact", "narrow"}; /* OceanWorkflow + 1 */
      o->workflow                = -2;
      for (int w = 0; w < 5; w++)
        if (!strcmp(v, names[w])) o->workflow = w - 1;
      if (o->workflow == -2)
        return fprintf(stderr, "bench: --workflow %s: auto, upper_bound, estimate, exact or narrow\n", v), 1;
    } else if (a[0] == '-') return fprintf(stderr, "bench: unknown option %s\n", a), usage(stderr), 1;
    else o->files[o->nfiles++] = a, takes = 0;
    i += takes;
  }
  if (o->reps < 1 || o->warmup < 1 || o->max_gb < 0 || !(o->chunk > 0 && o->chunk <= 1) || o->reuse_map_bytes < -1 ||
      o->small_bound < -1 || o->bound_factor < -1 || o->heavy_threshold < 0 || o->heavy_columns < 0 ||
      o->heavy_per_level < 0 || o->heavy_min_span < -1) {
    fprintf(stderr, "bench: need --reps >= 1, --warmup >= 1, --max-gb >= 0, 0 < --chunk-fraction <= 1, "
                    "--reuse-map-bytes >= -1, --small-bound >= -1, --bound-factor >= -1, --heavy-threshold >= 0, "
                    "--heavy-columns >= 0, --heavy-per-level >= 0, --heavy-min-span >= -1\n");
    return 1;
  }
  return 0;
}

/* Whether name is in the comma-separated list (NULL: everything is). */
static int selected(const char *list, const char *name)
{
  size_t n = strlen(name);
  for (const char *p = list; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
    size_t k = strchr(p, ',') ? (size_t)(strchr(p, ',') - p) : strlen(p);
    if (k == n && !strncmp(p, name, n)) return 1;
    if (k > 0 && p[k - 1] == '*' && k - 1 <= n && !strncmp(p, name, k - 1)) return 1; /* a prefix */
  }
  return list == NULL;
}

/* ---- results ---------------------------------------------------------------------------------------------- */

typedef enum { RES_NA = 0, RES_OK, RES_FAIL, RES_SKIP } ResState;

#define REUSE_FAILED  (-1.0) /* BenchResult.reuse_ms of ours when its numeric-only runs failed */
#define REUSE_SKIPPED (-2.0) /* ... when --no-reuse left them out */

/* ours' numeric-only column: its time (fmt), or why there is none */
static const char *reuse_text(double ms, double shown, const char *fmt, char buf[32])
{
  if (ms == REUSE_SKIPPED) return "skip(--no-reuse)";
  if (ms < 0) return "fail";
  snprintf(buf, 32, fmt, shown);
  return buf;
}

typedef struct {
  const char *method;        /* name in the CSV */
  ResState    state;         /* RES_NA until the method ran successfully or failed */
  char        status[96];    /* "ok", "fail(CUSPARSE_STATUS_...)", "fail(out of memory)", "skip(...)", "n/a" */
  double      ms;            /* median: end-to-end, or numeric-only for the reuse method */
  int         reps;          /* timed repetitions */
  double      peak_bytes;    /* device memory beyond the inputs, from the sizes the method asked for */
  double      meminfo_bytes; /* the same from cudaMemGetInfo (free before - least free seen); < 0: unknown */
  int64_t     nnz_c;
  int         want_c;   /* bring C of the probe run back to the host (a reference exists to check it) */
  int         verified; /* 1 verified, 0 mismatch, -1 not checked */
  char        verify_msg[160];
  double      reuse_ms;        /* bench_ocean only: its numeric-only median (cuSPARSE's is a method of its own);
                                  REUSE_FAILED, or REUSE_SKIPPED (--no-reuse) */
  double      reuse_first_ms;  /* bench_ocean only: its first numeric-only call (C's rows searched) */
  double      reuse_second_ms; /* bench_ocean only: its second numeric-only call (which makes the product map) */
  double      first_ms;        /* the probe run's time (not in the median) */
  GenCSR      c;               /* C of the probe run, on the host, for verification; freed after it */
  double      c_scale;         /* C should be c_scale * A*B (reuse runs use A's values halved) */
} BenchResult;

static void result_init(BenchResult *r, const char *method)
{
  memset(r, 0, sizeof(*r));
  r->method        = method;
  r->verified      = -1;
  r->meminfo_bytes = -1;
  r->c_scale       = 1;
  snprintf(r->status, sizeof(r->status), "n/a");
}

/* Records the first failure (or skip) of a run; later ones are consequences. */
static void set_status(BenchResult *r, ResState s, const char *fmt, ...)
{
  if (r->state == RES_FAIL || r->state == RES_SKIP) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->status, sizeof(r->status), fmt, ap);
  va_end(ap);
  r->state = s;
}

static void fail_cuda(BenchResult *r, cudaError_t e)
{
  set_status(r, RES_FAIL, "fail(%s)", e == cudaErrorMemoryAllocation ? "out of memory" : cudaGetErrorName(e));
  (void)cudaGetLastError(); /* clear it, so that the next method starts clean */
}

static void fail_sparse(BenchResult *r, cusparseStatus_t s)
{
  set_status(r, RES_FAIL, "fail(%s)", cusparseGetErrorName(s));
  (void)cudaGetLastError();
}

/* Every call is checked; on failure the status is recorded and the function jumps to its cleanup. */
#define TRY_CUDA(r, call) \
  do { \
    cudaError_t e_ = (call); \
    if (e_ != cudaSuccess) { \
      fail_cuda((r), e_); \
      goto done; \
    } \
  } while (0)
#define TRY_SPARSE(r, call) \
  do { \
    cusparseStatus_t s_ = (call); \
    if (s_ != CUSPARSE_STATUS_SUCCESS) { \
      fail_sparse((r), s_); \
      goto done; \
    } \
  } while (0)

/* Checks cleanup calls, which have nothing left to undo: reported, not fatal. */
static void warn_cuda(cudaError_t e, const char *what)
{
  if (e != cudaSuccess) fprintf(stderr, "bench: %s: %s\n", what, cudaGetErrorName(e)), (void)cudaGetLastError();
}
static void warn_sparse(cusparseStatus_t s, const char *what)
{
  if (s != CUSPARSE_STATUS_SUCCESS) fprintf(stderr, "bench: %s: %s\n", what, cusparseGetErrorName(s));
}

/* ---- device memory with accounting ------------------------------------------------------------------------ */

typedef struct {
  void  *p;
  size_t bytes;
} DevBuf;

/* What one run of a method holds.  Probe runs also sample cudaMemGetInfo, which costs a synchronisation and
   therefore stays out of the timed runs. */
typedef struct {
  BenchResult *r;
  size_t       cur, peak, limit; /* limit 0: none */
  int          probe;
  size_t       free0, free_min;
} MemTrack;

static void track_sample(MemTrack *t)
{
  size_t fr, total;
  if (t->probe && cudaMemGetInfo(&fr, &total) == cudaSuccess && fr < t->free_min) t->free_min = fr;
}

static void track_init(MemTrack *t, BenchResult *r, size_t limit, int probe)
{
  *t = (MemTrack){r, 0, 0, limit, probe, 0, SIZE_MAX};
  track_sample(t);
  t->free0 = t->free_min;
}

static int track_alloc(MemTrack *t, DevBuf *b, size_t bytes)
{
  if (t->limit && t->cur + bytes > t->limit) {
    set_status(t->r, RES_SKIP, "skip(needs > %.1f GB)", t->limit / 1e9);
    return 1;
  }
  cudaError_t e = cudaMalloc(&b->p, bytes);
  if (e != cudaSuccess) {
    b->p = NULL;
    fail_cuda(t->r, e);
    return 1;
  }
  b->bytes = bytes;
  t->cur += bytes;
  if (t->cur > t->peak) t->peak = t->cur;
  track_sample(t);
  return 0;
}

static void track_free(MemTrack *t, DevBuf *b)
{
  if (b->p) warn_cuda(cudaFree(b->p), "cudaFree");
  t->cur -= b->p ? b->bytes : 0;
  b->p     = NULL;
  b->bytes = 0;
}

/* The probe's figures into its result. */
static void track_report(const MemTrack *t, BenchResult *r)
{
  r->peak_bytes    = (double)t->peak;
  r->meminfo_bytes = t->free_min <= t->free0 ? (double)(t->free0 - t->free_min) : -1;
}

/* ---- host reference SpGEMM (tests/common/ref.h) ---------------------------------------------------------- */

/* Intermediate products: sum over the nonzeros a_ik of nnz(B row k). */
static int64_t host_products(const GenCSR *A, const GenCSR *B)
{
  int64_t total = 0;
#pragma omp parallel for schedule(dynamic, 1024) reduction(+ : total) /* cheap rows: big chunks */
  for (int64_t i = 0; i < A->nrows; i++)
    for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
      total += B->rowptr[A->colidx[p] + 1] - B->rowptr[A->colidx[p]];
  return total;
}

/* When a whole reference would not fit the host (R-MAT scale 20: 3.6 billion entries), the reference of a sample of
   C's rows: the first REF_SAMPLE_HEAD (R-MAT's heaviest) and REF_SAMPLE_SPREAD more spread evenly over the rest. */
#define REF_SAMPLE_HEAD   64
#define REF_SAMPLE_SPREAD 4032

/* ---- verification ------------------------------------------------------------------------------------------ */

#define VERIFY_RTOL 1e-12

/* 0 when C's row of reference row k matches it scaled by s; else what differs. */
static int verify_row(const GenRef *ref, const GenCSR *C, double s, int64_t k, char *msg, size_t len)
{
  const GenCSR *R = &ref->C;
  const int64_t i = GenRefRow(ref, k);
  if (C->rowptr[i + 1] - C->rowptr[i] != R->rowptr[k + 1] - R->rowptr[k])
    return snprintf(msg, len, "row %lld: %lld entries, reference %lld", (long long)i,
                    (long long)(C->rowptr[i + 1] - C->rowptr[i]), (long long)(R->rowptr[k + 1] - R->rowptr[k])),
           1;
  for (int64_t p = R->rowptr[k], q = C->rowptr[i]; p < R->rowptr[k + 1]; p++, q++) {
    if (C->colidx[q] != R->colidx[p])
      return snprintf(msg, len, "row %lld: column %d where the sorted reference has %d", (long long)i, C->colidx[q],
                      R->colidx[p]),
             1;
    if (!(fabs(C->values[q] - s * R->values[p]) <= VERIFY_RTOL * s * ref->bound[p]))
      return snprintf(msg, len, "row %lld col %d: %.17g, reference %.17g (bound %.3g)", (long long)i, R->colidx[p],
                      C->values[q], s * R->values[p], s * ref->bound[p]),
             1;
  }
  return 0;
}

/* Compares the result's C with the reference: same sorted structure, values within VERIFY_RTOL of sum |a||b|. */
static void verify_result(const GenRef *ref, BenchResult *r)
{
  const GenCSR *C = &r->c;
  if (!C->rowptr || !ref->C.values) return;
  r->verified = 0;
  if (C->nrows != ref->c_nrows || C->ncols != ref->C.ncols) {
    snprintf(r->verify_msg, sizeof(r->verify_msg), "C is %lldx%lld, reference %lldx%lld", (long long)C->nrows,
             (long long)C->ncols, (long long)ref->c_nrows, (long long)ref->C.ncols);
    return;
  }
  int64_t bad = INT64_MAX;
  char    unused[8];
#pragma omp parallel for schedule(dynamic, GEN_REF_ROW_CHUNK) reduction(min : bad)
  for (int64_t k = 0; k < ref->C.nrows; k++)
    if (k < bad && verify_row(ref, C, r->c_scale, k, unused, sizeof(unused))) bad = k;
  if (bad == INT64_MAX) r->verified = 1;
  else verify_row(ref, C, r->c_scale, bad, r->verify_msg, sizeof(r->verify_msg)); /* the first bad row, in words */
}

static void host_abs(const GenCSR *M, GenCSR *Abs)
{
  GenCopy(M, Abs);
  for (int64_t t = 0; t < GenNnz(Abs); t++) Abs->values[t] = fabs(Abs->values[t]);
}

/* The host operands of P^T (A P): ops[0] = P^T, ops[1] = A*P, and the same of |A| and |P| (ops[2], ops[3]), whose
   product bounds the rounding of any order of summation: (|P|^T |A| |P|)_ij. */
static void host_ptap_operands(const GenCSR *A, const GenCSR *P, GenCSR ops[4])
{
  GenCSR Aa, Pa;
  GenTranspose(P, &ops[0]);
  GenRefMultiply(A, P, &ops[1], NULL);
  host_abs(A, &Aa), host_abs(P, &Pa);
  GenTranspose(&Pa, &ops[2]);
  GenRefMultiply(&Aa, &Pa, &ops[3], NULL);
  GenFree(&Aa), GenFree(&Pa);
}

/* ---- device inputs ----------------------------------------------------------------------------------------- */

/* A matrix on the device as cuSPARSE takes it: int32 offsets.  values_half (= values / 2, exact) are the "new
   values" of the numeric-only runs: the result must then be exactly half the reference. */
typedef struct {
  int64_t nrows, ncols, nnz;
  DevBuf  rowptr, colidx, values, values_half;
} DevCSR;

static int upload_array(MemTrack *t, DevBuf *b, const void *host, size_t bytes)
{
  if (track_alloc(t, b, bytes)) return 1;
  cudaError_t e = cudaMemcpy(b->p, host, bytes, cudaMemcpyHostToDevice);
  if (e != cudaSuccess) fail_cuda(t->r, e);
  return e != cudaSuccess;
}

static int upload_csr(const GenCSR *M, MemTrack *t, DevCSR *d)
{
  int64_t  nnz = GenNnz(M);
  int32_t *rp  = (int32_t *)GenMalloc((size_t)(M->nrows + 1) * sizeof(int32_t));
  double  *vh  = (double *)GenMalloc((size_t)nnz * sizeof(double));
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i <= M->nrows; i++) rp[i] = (int32_t)M->rowptr[i]; /* the caller checked nnz < 2^31 */
#pragma omp parallel for schedule(static)
  for (int64_t p = 0; p < nnz; p++) vh[p] = 0.5 * M->values[p];
  *d      = (DevCSR){M->nrows, M->ncols, nnz, {0}, {0}, {0}, {0}};
  int err = upload_array(t, &d->rowptr, rp, (size_t)(M->nrows + 1) * sizeof(int32_t)) ||
            upload_array(t, &d->colidx, M->colidx, (size_t)nnz * sizeof(int32_t)) ||
            upload_array(t, &d->values, M->values, (size_t)nnz * sizeof(double)) ||
            upload_array(t, &d->values_half, vh, (size_t)nnz * sizeof(double));
  free(rp);
  free(vh);
  return err;
}

static void free_dev_csr(MemTrack *t, DevCSR *d)
{
  track_free(t, &d->rowptr);
  track_free(t, &d->colidx);
  track_free(t, &d->values);
  track_free(t, &d->values_half);
}

/* C's device arrays (int32 offsets) into a host GenCSR. */
static int download_c(int64_t nrows, int64_t ncols, int64_t nnz, const DevBuf *rowptr, const DevBuf *colidx,
                      const DevBuf *values, BenchResult *r)
{
  GenCSR  *C  = &r->c;
  int32_t *rp = (int32_t *)GenMalloc((size_t)(nrows + 1) * sizeof(int32_t));
  C->nrows    = nrows;
  C->ncols    = ncols;
  C->rowptr   = (int64_t *)GenMalloc((size_t)(nrows + 1) * sizeof(int64_t));
  C->colidx   = (int32_t *)GenMalloc((size_t)nnz * sizeof(int32_t));
  C->values   = (double *)GenMalloc((size_t)nnz * sizeof(double));
  TRY_CUDA(r, cudaMemcpy(rp, rowptr->p, (size_t)(nrows + 1) * sizeof(int32_t), cudaMemcpyDeviceToHost));
  TRY_CUDA(r, cudaMemcpy(C->colidx, colidx->p, (size_t)nnz * sizeof(int32_t), cudaMemcpyDeviceToHost));
  TRY_CUDA(r, cudaMemcpy(C->values, values->p, (size_t)nnz * sizeof(double), cudaMemcpyDeviceToHost));
  for (int64_t i = 0; i <= nrows; i++) C->rowptr[i] = rp[i];
  free(rp);
  return 0;
done:
  free(rp);
  GenFree(C);
  return 1;
}

/* ---- cuSPARSE ---------------------------------------------------------------------------------------------- */

/* What the cuSPARSE runs of one matrix share. */
typedef struct {
  cusparseHandle_t    handle;
  cudaEvent_t         start, stop;
  const DevCSR       *A, *B;
  cusparseSpGEMMAlg_t alg;
  float               chunk;
  size_t              limit;
  int64_t             products; /* the host's count, to cross-check cuSPARSE's */
  BenchResult        *r;
} SpgemmCtx;

static cusparseStatus_t make_descr(cusparseSpMatDescr_t *d, const DevCSR *M, void *values)
{
  return cusparseCreateCsr(d, M->nrows, M->ncols, M->nnz, M->rowptr.p, M->colidx.p, values, CUSPARSE_INDEX_32I,
                           CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F);
}

static void destroy_descrs(cusparseSpMatDescr_t a, cusparseSpMatDescr_t b, cusparseSpMatDescr_t c,
                           cusparseSpGEMMDescr_t d)
{
  if (a) warn_sparse(cusparseDestroySpMat(a), "cusparseDestroySpMat");
  if (b) warn_sparse(cusparseDestroySpMat(b), "cusparseDestroySpMat");
  if (c) warn_sparse(cusparseDestroySpMat(c), "cusparseDestroySpMat");
  if (d) warn_sparse(cusparseSpGEMM_destroyDescr(d), "cusparseSpGEMM_destroyDescr");
}

/* Milliseconds since start was recorded (stop recorded now and waited for); 1 with r's status on a CUDA error. */
static int event_ms(cudaEvent_t start, cudaEvent_t stop, BenchResult *r, double *ms)
{
  float f = 0;
  TRY_CUDA(r, cudaEventRecord(stop, 0));
  TRY_CUDA(r, cudaEventSynchronize(stop));
  TRY_CUDA(r, cudaEventElapsedTime(&f, start, stop));
  *ms = f;
  return 0;
done:
  return 1;
}

static int elapsed_ms(SpgemmCtx *x, double *ms)
{
  return event_ms(x->start, x->stop, x->r, ms);
}

/* Compares cuSPARSE's product count with ours: a disagreement means the inputs are not what we think. */
static void check_num_products(SpgemmCtx *x, cusparseSpGEMMDescr_t d)
{
  int64_t n;
  if (cusparseSpGEMM_getNumProducts(d, &n) == CUSPARSE_STATUS_SUCCESS && n != x->products)
    fprintf(stderr, "bench: cuSPARSE counts %lld products, the host %lld\n", (long long)n, (long long)x->products);
}

#define SPGEMM_ARGS(x, a, b, c, d) (x)->handle, op, op, &alpha, a, b, &beta, c, CUDA_R_64F, (x)->alg, d

/* One cusparseSpGEMM C = A*B by the documented workflow (workEstimation; for ALG2/ALG3 estimateMemory, whose buffer3
   can be freed before compute; compute; C's arrays; copy), everything left allocated in u for spgemm_run_free, so
   that the frees stay out of the timed region.  Returns 0, or 1 with x->r's status. */
typedef struct {
  cusparseSpMatDescr_t  a, b, c;
  cusparseSpGEMMDescr_t d;
  DevBuf                buf1, buf2, buf3;
  DevCSR                C;
} SpgemmRun;

static int spgemm_run(SpgemmCtx *x, MemTrack *t, const DevCSR *A, const DevCSR *B, SpgemmRun *u)
{
  BenchResult              *r  = x->r;
  size_t                    s1 = 0, s2 = 0, s3 = 0;
  int64_t                   m, n, nnz;
  const double              alpha = 1, beta = 0;
  const cusparseOperation_t op = CUSPARSE_OPERATION_NON_TRANSPOSE;

  memset(u, 0, sizeof(*u));
  TRY_SPARSE(r, make_descr(&u->a, A, A->values.p));
  TRY_SPARSE(r, make_descr(&u->b, B, B->values.p));
  if (track_alloc(t, &u->C.rowptr, (size_t)(A->nrows + 1) * sizeof(int32_t))) goto done;
  TRY_SPARSE(r, cusparseCreateCsr(&u->c, A->nrows, B->ncols, 0, u->C.rowptr.p, NULL, NULL, CUSPARSE_INDEX_32I,
                                  CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
  TRY_SPARSE(r, cusparseSpGEMM_createDescr(&u->d));
  TRY_SPARSE(r, cusparseSpGEMM_workEstimation(SPGEMM_ARGS(x, u->a, u->b, u->c, u->d), &s1, NULL));
  if (track_alloc(t, &u->buf1, s1)) goto done;
  TRY_SPARSE(r, cusparseSpGEMM_workEstimation(SPGEMM_ARGS(x, u->a, u->b, u->c, u->d), &s1, u->buf1.p));
  if (x->alg != CUSPARSE_SPGEMM_ALG1) {
    TRY_SPARSE(r, cusparseSpGEMM_estimateMemory(SPGEMM_ARGS(x, u->a, u->b, u->c, u->d), x->chunk, &s3, NULL, NULL));
    if (track_alloc(t, &u->buf3, s3)) goto done;
    TRY_SPARSE(r, cusparseSpGEMM_estimateMemory(SPGEMM_ARGS(x, u->a, u->b, u->c, u->d), x->chunk, &s3, u->buf3.p, &s2));
    track_free(t, &u->buf3);
  } else TRY_SPARSE(r, cusparseSpGEMM_compute(SPGEMM_ARGS(x, u->a, u->b, u->c, u->d), &s2, NULL));
  if (track_alloc(t, &u->buf2, s2)) goto done;
  TRY_SPARSE(r, cusparseSpGEMM_compute(SPGEMM_ARGS(x, u->a, u->b, u->c, u->d), &s2, u->buf2.p));
  TRY_SPARSE(r, cusparseSpMatGetSize(u->c, &m, &n, &nnz));
  if (track_alloc(t, &u->C.colidx, (size_t)nnz * sizeof(int32_t)) ||
      track_alloc(t, &u->C.values, (size_t)nnz * sizeof(double)))
    goto done;
  TRY_SPARSE(r, cusparseCsrSetPointers(u->c, u->C.rowptr.p, u->C.colidx.p, u->C.values.p));
  TRY_SPARSE(r, cusparseSpGEMM_copy(SPGEMM_ARGS(x, u->a, u->b, u->c, u->d)));
  u->C.nrows = m, u->C.ncols = n, u->C.nnz = nnz;
  return 0;
done:
  return 1;
}

static void spgemm_run_free(MemTrack *t, SpgemmRun *u)
{
  destroy_descrs(u->a, u->b, u->c, u->d);
  track_free(t, &u->buf1), track_free(t, &u->buf2), track_free(t, &u->buf3);
  free_dev_csr(t, &u->C);
  memset(u, 0, sizeof(*u));
}

/* One end-to-end cusparseSpGEMM C = A*B, timed with events; the probe also reports memory and brings C to the host. */
static int spgemm_once(void *ctx, int probe, double *ms)
{
  SpgemmCtx   *x = (SpgemmCtx *)ctx;
  BenchResult *r = x->r;
  MemTrack     t;
  SpgemmRun    u;
  int          err = 1;

  memset(&u, 0, sizeof(u));
  track_init(&t, r, x->limit, probe);
  TRY_CUDA(r, cudaEventRecord(x->start, 0));
  if (spgemm_run(x, &t, x->A, x->B, &u) || elapsed_ms(x, ms)) goto done;
  if (probe) {
    track_report(&t, r);
    check_num_products(x, u.d);
    r->nnz_c = u.C.nnz;
    if (r->want_c && download_c(u.C.nrows, u.C.ncols, u.C.nnz, &u.C.rowptr, &u.C.colidx, &u.C.values, r)) goto done;
  }
  err = 0;
done:
  spgemm_run_free(&t, &u);
  return err;
}

/* cuSPARSE's Galerkin product C = P^T (A P) (x->A = A, x->B = P), end to end like a user writes it: P^T made by
   cusparseCsr2cscEx2 on every call, then two cusparseSpGEMM. */
static int ptap_once(void *ctx, int probe, double *ms)
{
  SpgemmCtx    *x = (SpgemmCtx *)ctx;
  BenchResult  *r = x->r;
  const DevCSR *P = x->B;
  MemTrack      t;
  SpgemmRun     ap, c;
  DevCSR        PT;
  DevBuf        tbuf   = {0};
  size_t        tbytes = 0;
  int           err    = 1;

  memset(&ap, 0, sizeof(ap)), memset(&c, 0, sizeof(c)), memset(&PT, 0, sizeof(PT));
  track_init(&t, r, x->limit, probe);
  TRY_CUDA(r, cudaEventRecord(x->start, 0));
  PT.nrows = P->ncols, PT.ncols = P->nrows, PT.nnz = P->nnz;
  if (track_alloc(&t, &PT.rowptr, (size_t)(PT.nrows + 1) * sizeof(int32_t)) ||
      track_alloc(&t, &PT.colidx, (size_t)PT.nnz * sizeof(int32_t)) ||
      track_alloc(&t, &PT.values, (size_t)PT.nnz * sizeof(double)))
    goto done;
  TRY_SPARSE(r, cusparseCsr2cscEx2_bufferSize(
                  x->handle, (int)P->nrows, (int)P->ncols, (int)P->nnz, P->values.p, (const int *)P->rowptr.p,
                  (const int *)P->colidx.p, PT.values.p, (int *)PT.rowptr.p, (int *)PT.colidx.p, CUDA_R_64F,
                  CUSPARSE_ACTION_NUMERIC, CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG1, &tbytes));
  if (track_alloc(&t, &tbuf, tbytes ? tbytes : 1)) goto done;
  TRY_SPARSE(r, cusparseCsr2cscEx2(x->handle, (int)P->nrows, (int)P->ncols, (int)P->nnz, P->values.p,
                                   (const int *)P->rowptr.p, (const int *)P->colidx.p, PT.values.p, (int *)PT.rowptr.p,
                                   (int *)PT.colidx.p, CUDA_R_64F, CUSPARSE_ACTION_NUMERIC, CUSPARSE_INDEX_BASE_ZERO,
                                   CUSPARSE_CSR2CSC_ALG1, tbuf.p));
  if (spgemm_run(x, &t, x->A, P, &ap) || spgemm_run(x, &t, &PT, &ap.C, &c) || elapsed_ms(x, ms)) goto done;
  if (probe) {
    track_report(&t, r);
    r->nnz_c = c.C.nnz;
    if (r->want_c && download_c(c.C.nrows, c.C.ncols, c.C.nnz, &c.C.rowptr, &c.C.colidx, &c.C.values, r)) goto done;
  }
  err = 0;
done:
  spgemm_run_free(&t, &ap);
  spgemm_run_free(&t, &c);
  free_dev_csr(&t, &PT);
  track_free(&t, &tbuf);
  return err;
}

/* cusparseSpGEMMreuse: the structure phase (workEstimation, nnz, copy) once, then numeric-only computes. */
typedef struct {
  SpgemmCtx            *x;
  MemTrack              t;
  cusparseSpMatDescr_t  a, b, c;
  cusparseSpGEMMDescr_t d;
  DevBuf                buf4, buf5, crow, ccol, cval; /* what compute needs; buffers 1-3 go after the setup */
  int64_t               nnz;
  int                   runs;
} ReuseCtx;

static int reuse_setup(ReuseCtx *u)
{
  SpgemmCtx                *x    = u->x;
  BenchResult              *r    = x->r;
  DevBuf                    buf1 = {0}, buf2 = {0}, buf3 = {0};
  size_t                    s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0;
  int64_t                   m, n;
  const cusparseOperation_t op  = CUSPARSE_OPERATION_NON_TRANSPOSE;
  int                       err = 1;

  track_init(&u->t, r, x->limit, 1);
  TRY_SPARSE(r, make_descr(&u->a, x->A, x->A->values.p));
  TRY_SPARSE(r, make_descr(&u->b, x->B, x->B->values.p));
  if (track_alloc(&u->t, &u->crow, (size_t)(x->A->nrows + 1) * sizeof(int32_t))) goto done;
  TRY_SPARSE(r, cusparseCreateCsr(&u->c, x->A->nrows, x->B->ncols, 0, u->crow.p, NULL, NULL, CUSPARSE_INDEX_32I,
                                  CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
  TRY_SPARSE(r, cusparseSpGEMM_createDescr(&u->d));
#define REUSE_ARGS x->handle, op, op, u->a, u->b, u->c, x->alg, u->d
  TRY_SPARSE(r, cusparseSpGEMMreuse_workEstimation(REUSE_ARGS, &s1, NULL));
  if (track_alloc(&u->t, &buf1, s1)) goto done;
  TRY_SPARSE(r, cusparseSpGEMMreuse_workEstimation(REUSE_ARGS, &s1, buf1.p));
  TRY_SPARSE(r, cusparseSpGEMMreuse_nnz(REUSE_ARGS, &s2, NULL, &s3, NULL, &s4, NULL));
  if (track_alloc(&u->t, &buf2, s2) || track_alloc(&u->t, &buf3, s3) || track_alloc(&u->t, &u->buf4, s4)) goto done;
  TRY_SPARSE(r, cusparseSpGEMMreuse_nnz(REUSE_ARGS, &s2, buf2.p, &s3, buf3.p, &s4, u->buf4.p));
  track_free(&u->t, &buf1), track_free(&u->t, &buf2);
  TRY_SPARSE(r, cusparseSpMatGetSize(u->c, &m, &n, &u->nnz));
  if (track_alloc(&u->t, &u->ccol, (size_t)u->nnz * sizeof(int32_t)) ||
      track_alloc(&u->t, &u->cval, (size_t)u->nnz * sizeof(double)))
    goto done;
  TRY_SPARSE(r, cusparseCsrSetPointers(u->c, u->crow.p, u->ccol.p, u->cval.p));
  TRY_SPARSE(r, cusparseSpGEMMreuse_copy(REUSE_ARGS, &s5, NULL));
  if (track_alloc(&u->t, &u->buf5, s5)) goto done;
  TRY_SPARSE(r, cusparseSpGEMMreuse_copy(REUSE_ARGS, &s5, u->buf5.p));
#undef REUSE_ARGS
  err = 0;
done:
  track_free(&u->t, &buf1), track_free(&u->t, &buf2), track_free(&u->t, &buf3);
  return err;
}

/* One numeric-only product with new values of A (alternately halved and original, switched outside the timed
   region).  The probe runs with the halved ones, so a stale result cannot pass the verification. */
static int reuse_once(void *ctx, int probe, double *ms)
{
  ReuseCtx                 *u     = (ReuseCtx *)ctx;
  SpgemmCtx                *x     = u->x;
  BenchResult              *r     = x->r;
  const double              alpha = 1, beta = 0;
  const cusparseOperation_t op   = CUSPARSE_OPERATION_NON_TRANSPOSE;
  const DevBuf             *vals = u->runs++ % 2 == 0 ? &x->A->values_half : &x->A->values;

  TRY_SPARSE(r, cusparseCsrSetPointers(u->a, x->A->rowptr.p, x->A->colidx.p, vals->p));
  TRY_CUDA(r, cudaEventRecord(x->start, 0));
  TRY_SPARSE(r, cusparseSpGEMMreuse_compute(SPGEMM_ARGS(x, u->a, u->b, u->c, u->d)));
  if (elapsed_ms(x, ms)) goto done;
  if (probe) {
    track_report(&u->t, r);
    r->nnz_c   = u->nnz;
    r->c_scale = 0.5;
    return r->want_c ? download_c(x->A->nrows, x->B->ncols, u->nnz, &u->crow, &u->ccol, &u->cval, r) : 0;
  }
  return 0;
done:
  return 1;
}

static void reuse_teardown(ReuseCtx *u)
{
  destroy_descrs(u->a, u->b, u->c, u->d);
  track_free(&u->t, &u->buf4), track_free(&u->t, &u->buf5);
  track_free(&u->t, &u->crow), track_free(&u->t, &u->ccol), track_free(&u->t, &u->cval);
}

/* ---- timing ------------------------------------------------------------------------------------------------ */

typedef int (*RunFn)(void *ctx, int probe, double *ms);

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *t, int n)
{
  qsort(t, (size_t)n, sizeof(double), cmp_double);
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

#define SLOW_RUN_MS 1000.0 /* runs longer than this get 3 repetitions and no warm-up beyond the probe */

/* The probe (first warm-up), the other warm-ups, then the timed repetitions; the median into r. */
static void time_method(RunFn run, void *ctx, const Options *o, BenchResult *r)
{
  double first, *t = (double *)GenMalloc((size_t)o->reps * sizeof(double));
  int    slow = 0, reps = o->reps, ok = !run(ctx, 1, &first);
  if (ok) r->first_ms = first;
  if (ok && first > SLOW_RUN_MS) slow = 1, reps = reps < 3 ? reps : 3;
  for (int i = 1; ok && !slow && i < o->warmup; i++) ok = !run(ctx, 0, &t[0]);
  for (int i = 0; ok && i < reps; i++) ok = !run(ctx, 0, &t[i]);
  if (ok) {
    r->ms   = median(t, reps);
    r->reps = reps;
    set_status(r, RES_OK, "ok");
  }
  free(t);
}

static const struct {
  const char         *method;
  cusparseSpGEMMAlg_t alg;
} cusparse_algs[] = {{"cusparse_alg1", CUSPARSE_SPGEMM_ALG1},
                     {"cusparse_alg2", CUSPARSE_SPGEMM_ALG2},
                     {"cusparse_alg3", CUSPARSE_SPGEMM_ALG3}};

/* Numeric-only reuse, with the default algorithm (the one cusparseSpGEMMreuse documents). */
static void bench_cusparse_reuse(SpgemmCtx *x, const Options *o)
{
  ReuseCtx u;
  memset(&u, 0, sizeof(u));
  u.x    = x;
  x->alg = CUSPARSE_SPGEMM_DEFAULT;
  if (!reuse_setup(&u)) time_method(reuse_once, &u, o, x->r);
  reuse_teardown(&u);
}

/* ---- one matrix ---------------------------------------------------------------------------------------------- */

enum { M_OCEAN, M_ALG1, M_ALG2, M_ALG3, M_REUSE, M_COUNT };

typedef struct {
  char        name[64];
  int         ptap; /* C = P^T A P (B is P); products: those of A*P and of P^T*(AP) */
  int64_t     rows, cols, nnz_a, nnz_b, products, nnz_c, max_row_nnz;
  int64_t     a_rows; /* A's rows (rows: C's, which PtAP makes fewer) */
  double      t_gen, t_ref;
  BenchResult res[M_COUNT];
  int         have_ostats; /* ours: the statistics of its last timed run, and of its last numeric-only run */
  OceanStats  ostats, ostats_reuse;
  OceanStats  ostage[2]; /* PtAP: each stage's own statistics of the last timed run */
} Summary;

typedef struct {
  cusparseHandle_t handle;
  cudaEvent_t      start, stop;
  double           copy_gbs;      /* measured device-to-device copy rate, GB/s (read + write) */
  OceanContext     ocean;         /* ours: one CUDA context (its device memory pool), like the cuSPARSE handle */
  char             ocean_err[96]; /* why there is none */
} Gpu;

static double gflops(const Summary *s, double ms)
{
  return ms > 0 ? 2.0 * (double)s->products / (ms * 1e6) : 0;
}

static void print_result(const Summary *s, const BenchResult *r)
{
  printf("  %-15s %-10s", r->method, r->state == RES_OK ? "ok" : r->status);
  if (r->state == RES_OK)
    printf(" %10.3f ms %8.2f GFLOPS  reps %2d  peak %9.1f MB (cudaMemGetInfo %9.1f MB)", r->ms, gflops(s, r->ms),
           r->reps, r->peak_bytes / 1e6, r->meminfo_bytes / 1e6);
  if (r->verified >= 0) printf("  %s%s", r->verified ? "verified" : "MISMATCH: ", r->verified ? "" : r->verify_msg);
  printf("\n");
  fflush(stdout);
}

/* The workflow a statistics record took, e.g. "estimate(32 reg)", "exact (switched)". */
static void workflow_name(const OceanStats *st, char *buf, size_t len)
{
#ifdef OCEAN_BENCH_OURS
  if (st->workflow == OCEAN_WORKFLOW_ESTIMATE)
    snprintf(buf, len, "%s(%d reg x%.1f)", OceanWorkflowName(st->workflow), st->hll_registers,
             st->estimate_coefficient);
  else snprintf(buf, len, "%s%s", OceanWorkflowName(st->workflow), st->switched_to_exact ? " (switched)" : "");
#else /* not linked with the core */
  snprintf(buf, len, "workflow %d", (int)st->workflow);
#endif
}

static double bench_copy_gbs; /* Gpu.copy_gbs, for the heavy rows' bandwidth fractions */

/* The heavy rows' kernels' rates as fractions of the measured copy rate, from the bytes each must move at least: the
   outer product reads B's column and value of each product and writes both (24 bytes); the later levels read and
   write their elements (24) and their histograms read the columns (4; level 0's counts come from B's runs of chunks,
   not from the products, unless a row has more than 4,096 chunks); the accumulation (and the assembly of the rows)
   reads each product once (12).  f: outer product, histogram, multisplit, accumulate; -1 where no bytes are counted
   (one level: no multisplit, and level 0's histogram from B's runs). */
static void heavy_copy_fractions(const OceanStats *st, double f[4])
{
  const double p = (double)st->heavy_products, moved = (double)(st->heavy_split_elements - st->heavy_products);
  const double gb = bench_copy_gbs > 0 ? bench_copy_gbs : 1, bytes[4] = {24 * p, 4 * moved, 24 * moved, 12 * p};
  const double t[4] = {st->t_heavy_expand, st->t_heavy_histogram, st->t_heavy_split, st->t_heavy_accumulate};
  for (int k = 0; k < 4; k++) f[k] = bytes[k] <= 0 ? -1.0 : t[k] > 0 ? bytes[k] / t[k] / 1e9 / gb : 0.0;
}

/* A fraction of heavy_copy_fractions as text: "-" where it has no bytes. */
static const char *copy_fraction_text(double f, char buf[16])
{
  if (f < 0) return "-";
  snprintf(buf, 16, "%.2f", f);
  return buf;
}

/* Ours: where the time goes (OceanStats: CUDA event times of each phase, from one run after the timed ones with the
   device timers on). */
static void print_ocean_phases(const Summary *s)
{
  const OceanStats *st = &s->ostats;
  char              wf[64];
  workflow_name(st, wf, sizeof(wf));
  if (st->sampled_rows)
    printf("  %-15s %s, ER %.1f, sampled CR %.2f (conservative %.2f), overflow rows %lld, allocated %.2f x nnz(C)\n",
           "ocean workflow", wf, st->er, st->cr_sampled, st->cr_conservative, (long long)st->overflow_rows,
           st->nnz_c ? (double)st->allocated_entries / (double)st->nnz_c : 0.0);
  else
    printf(
      "  %-15s %s, ER %.1f, not sampled (tight upper bound: CR >= %.2f), overflow rows %lld, allocated %.2f x nnz(C)\n",
      "ocean workflow", wf, st->er, st->bound_nnz ? (double)st->products / (double)st->bound_nnz : 0.0,
      (long long)st->overflow_rows, st->nnz_c ? (double)st->allocated_entries / (double)st->nnz_c : 0.0);
  {
    char buf[32];
    printf("  %-15s analysis %.3f, estimate %.3f, symbolic %.3f, numeric %.3f, fallback %.3f, compact %.3f ms; "
           "numeric-only %s\n",
           "ocean phases", 1e3 * st->t_analysis, 1e3 * st->t_estimate, 1e3 * st->t_symbolic, 1e3 * st->t_numeric,
           1e3 * st->t_fallback, 1e3 * st->t_compact,
           reuse_text(s->res[M_OCEAN].reuse_ms, 1e3 * s->ostats_reuse.t_numeric, "%.3f ms", buf));
  }
  if (st->heavy_rows) {
    double f[4];
    char   fb[4][16];
    heavy_copy_fractions(st, f);
    printf("  %-15s %lld rows (%.1f%%), %lld products (%.1f%%) in %lld batches, %lld chunks of %lld columns (%lld "
           "dense), %d of %d levels, %lld rows written in place; outer product %.3f ms (%s of copy), histogram %.3f "
           "(%s), multisplit %.3f (%s), accumulate %.3f (%s)\n",
           "ocean heavy", (long long)st->heavy_rows,
           100.0 * (double)st->heavy_rows / (double)(st->nrows ? st->nrows : 1), (long long)st->heavy_products,
           100.0 * (double)st->heavy_products / (double)(st->products ? st->products : 1),
           (long long)st->heavy_batches, (long long)st->heavy_chunks,
           (long long)st->heavy_chunk_columns, (long long)st->heavy_dense_chunks, st->heavy_levels,
           st->heavy_levels_planned, (long long)st->heavy_rows_in_place, 1e3 * st->t_heavy_expand,
           copy_fraction_text(f[0], fb[0]), 1e3 * st->t_heavy_histogram, copy_fraction_text(f[1], fb[1]),
           1e3 * st->t_heavy_split, copy_fraction_text(f[2], fb[2]), 1e3 * st->t_heavy_accumulate,
           copy_fraction_text(f[3], fb[3]));
  }
  if (s->ptap)
    for (int k = 0; k < 2; k++) {
      const OceanStats *g = &s->ostage[k];
      workflow_name(g, wf, sizeof(wf));
      printf("  %-15s %s %s: %lld products, nnz %lld; analysis %.3f, estimate %.3f, symbolic %.3f, numeric %.3f, "
             "fallback %.3f, compact %.3f, transpose %.3f ms\n",
             "ocean stage", k ? "1 (P^T*(AP))" : "0 (A*P)", wf, (long long)g->products, (long long)g->nnz_c,
             1e3 * g->t_analysis, 1e3 * g->t_estimate, 1e3 * g->t_symbolic, 1e3 * g->t_numeric, 1e3 * g->t_fallback,
             1e3 * g->t_compact, 1e3 * g->t_transpose);
    }
  fflush(stdout);
}

/* The cuSPARSE methods on device copies of A and B (int32 offsets), each C verified when ref has values. */
static void bench_cusparse(const Options *o, const Gpu *g, const GenCSR *A, const GenCSR *B, const GenRef *ref,
                           Summary *s)
{
  BenchResult *res = s->res;
  DevCSR       dA, dB;
  MemTrack     inputs;

  memset(&dA, 0, sizeof(dA));
  memset(&dB, 0, sizeof(dB));
  track_init(&inputs, &res[M_ALG1], 0, 0); /* an upload failure is reported as ALG1's, then copied */
  /* A C beyond int32 offsets is still attempted: cuSPARSE reports it (INSUFFICIENT_RESOURCES on R-MAT s20) */
  if (o->no_cusparse) {
    for (int m = M_ALG1; m <= M_REUSE; m++) set_status(&res[m], RES_SKIP, "skip(--no-cusparse)");
  } else if (s->nnz_a > INT32_MAX || s->nnz_b > INT32_MAX) {
    for (int m = M_ALG1; m <= M_REUSE; m++) set_status(&res[m], RES_SKIP, "skip(nnz > 2^31-1: int32 offsets)");
  } else if (upload_csr(A, &inputs, &dA) || (B != A && upload_csr(B, &inputs, &dB))) {
    for (int m = M_ALG2; m <= M_REUSE; m++) set_status(&res[m], RES_FAIL, "%s", res[M_ALG1].status);
  } else {
    SpgemmCtx x = {g->handle,
                   g->start,
                   g->stop,
                   &dA,
                   B != A ? &dB : &dA,
                   CUSPARSE_SPGEMM_ALG1,
                   o->chunk,
                   (size_t)(o->max_gb * 1e9),
                   s->products,
                   NULL};
    for (int m = M_ALG1; m <= M_REUSE; m++) {
      x.r         = &res[m];
      x.r->want_c = ref->C.values != NULL;
      if (s->ptap && m != M_ALG1) {
        set_status(x.r, RES_SKIP, "n/a(PtAP: ALG1 only)");
        continue;
      }
      if (m == M_REUSE && o->no_reuse) {
        set_status(x.r, RES_SKIP, "skip(--no-reuse)");
        continue;
      }
      if (s->ptap) time_method(ptap_once, &x, o, x.r);
      else if (m == M_REUSE) bench_cusparse_reuse(&x, o);
      else x.alg = cusparse_algs[m - M_ALG1].alg, time_method(spgemm_once, &x, o, x.r);
      verify_result(ref, x.r);
      print_result(s, x.r);
    }
  }
  for (int m = M_ALG1; m <= M_REUSE; m++) GenFree(&res[m].c);
  free_dev_csr(&inputs, &dA);
  free_dev_csr(&inputs, &dB);
}

/* Whether the host holds easily (half its memory) bytes_per_entry for each of nnz_c entries; *gb: what they need.
   A whole reference and a copy of C: 32 bytes an entry; a sampled reference and a copy of C: 12. */
static int host_holds(int64_t nnz_c, double bytes_per_entry, double *gb)
{
  double need = bytes_per_entry * (double)nnz_c, host = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
  *gb = need / 1e9;
  return need <= 0.5 * host;
}

/* ---- ours -------------------------------------------------------------------------------------------------- */

/* Our GPU SpGEMM through the core API (include/ocean.h), on the rules of the cuSPARSE methods:
     - one CUDA context for the whole run (gpu_init, outside timing, like the cuSPARSE handle); its device memory
       pool caches blocks between products, as cuSPARSE users cache buffers;
     - A and B resident on the device (int64 offsets, the core's convention) before timing starts, handed over with
       OceanProductSetOperandMemType(OCEAN_MEMORY_DEVICE): nothing is uploaded, C stays on the device;
     - one timed run = cudaEvents around OceanProductCreate + OceanProductSymbolic (analysis, workflow, C complete
       as device CSR) + OceanProductGetDeviceC; the plan is destroyed after the stop event (its memory goes back to
       the pool; cuSPARSE's frees are outside its timing too).  Structure ids 0: nothing (sketches of B) is reused
       from one run to the next;
     - time_method()'s probe/warm-up/median policy; the probe also brings C to the host (from OceanProductGetDeviceC)
       for verification;
     - peak: the pool's high-water mark above what it held before the probe (blocks are powers of two, so this is
       what the pool really took); cudaMemGetInfo cross-check: free memory before the probe minus after it (the
       pool is trimmed before, and keeps its blocks after);
     - numeric-only reuse (r->reuse_ms): one plan with structure ids set up once, then OceanProductNumeric with new
       values of A (alternately halved and original, switched outside the timed region), like cusparse_reuse; its
       probe's C is verified against half the reference.  The probe (the first numeric call) searches C's rows, the
       second call (the first warm-up) makes the product map (OceanOptions.reuse_map_max_bytes): their times are
       printed apart (r->reuse_first_ms, r->reuse_second_ms), outside the median, and the map's bytes go into the
       ocean_reuse row's peak_mb column of the CSV. */
#ifdef OCEAN_BENCH_OURS
/* A matrix on the device as the core takes it: int64 offsets; values_half as for cuSPARSE. */
typedef struct {
  DevBuf rowptr, colidx, values, values_half;
} DevCSR64;

static int upload_csr64(const GenCSR *M, MemTrack *t, DevCSR64 *d)
{
  int64_t nnz = GenNnz(M);
  double *vh  = (double *)GenMalloc((size_t)nnz * sizeof(double));
#pragma omp parallel for schedule(static)
  for (int64_t p = 0; p < nnz; p++) vh[p] = 0.5 * M->values[p];
  int err = upload_array(t, &d->rowptr, M->rowptr, (size_t)(M->nrows + 1) * sizeof(int64_t)) ||
            upload_array(t, &d->colidx, M->colidx, (size_t)nnz * sizeof(int32_t)) ||
            upload_array(t, &d->values, M->values, (size_t)nnz * sizeof(double)) ||
            upload_array(t, &d->values_half, vh, (size_t)nnz * sizeof(double));
  free(vh);
  return err;
}

static void free_dev_csr64(MemTrack *t, DevCSR64 *d)
{
  track_free(t, &d->rowptr);
  track_free(t, &d->colidx);
  track_free(t, &d->values);
  track_free(t, &d->values_half);
}

typedef struct {
  const Gpu       *g;
  BenchResult     *r;
  OceanProductType type;         /* AB, or PtAP (b is P) */
  OceanCSR         a, b, a_half; /* device views */
  OceanProduct     reuse;        /* the numeric-only plan */
  int              runs;
  double           second_ms; /* the second numeric-only call's time */
  int64_t          base;      /* pool bytes in use before the probe */
  size_t           free0;     /* cudaMemGetInfo before the probe */
  OceanStats       stats;     /* of the last run */
  OceanStats       stage[2];  /* PtAP: each stage's */
} OceanBench;

static void fail_ocean(BenchResult *r, OceanError e, const char *what)
{
  fprintf(stderr, "bench: ocean: %s: %s: %s\n", what, OceanErrorString(e), OceanGetLastErrorMessage());
  set_status(r, RES_FAIL, "fail(%s)", e == OCEAN_ERR_MEMORY ? "out of memory" : OceanErrorString(e));
  (void)cudaGetLastError();
}

#define TRY_OCEAN(r, call) \
  do { \
    OceanError oe_ = (call); \
    if (oe_ != OCEAN_SUCCESS) { \
      fail_ocean((r), oe_, #call); \
      goto done; \
    } \
  } while (0)

/* C of a plan, on the host (the core's lazy download), into r->c. */
/* C of the plan into r->c: copied straight from its device arrays (one host copy: R-MAT scale 20's C is 43 GB), or
   from the plan's host copy when C was made in chunks of rows on the host. */
static int ocean_download_c(OceanProduct p, BenchResult *r)
{
  int64_t        m, n, nnz;
  const int64_t *rp;
  const int32_t *ci;
  const double  *v;
  GenCSR        *C         = &r->c;
  const int      on_device = OceanProductGetDeviceC(p, &m, &n, &nnz, &rp, &ci, &v) == OCEAN_SUCCESS;
  if (!on_device) TRY_OCEAN(r, OceanProductGetC(p, &m, &n, &nnz, &rp, &ci, &v));
  GenFree(C);
  C->nrows  = m;
  C->ncols  = n;
  C->rowptr = (int64_t *)GenMalloc((size_t)(m + 1) * sizeof(int64_t));
  C->colidx = (int32_t *)GenMalloc((size_t)(nnz ? nnz : 1) * sizeof(int32_t));
  C->values = (double *)GenMalloc((size_t)(nnz ? nnz : 1) * sizeof(double));
  TRY_CUDA(r, cudaMemcpy(C->rowptr, rp, (size_t)(m + 1) * sizeof(int64_t),
                         on_device ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost));
  TRY_CUDA(r, cudaMemcpy(C->colidx, ci, (size_t)nnz * sizeof(int32_t),
                         on_device ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost));
  TRY_CUDA(r, cudaMemcpy(C->values, v, (size_t)nnz * sizeof(double),
                         on_device ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost));
  return 0;
done:
  GenFree(C);
  return 1;
}

static int ocean_elapsed(OceanBench *x, double *ms)
{
  return event_ms(x->g->start, x->g->stop, x->r, ms);
}

/* The statistics of a plan's last call into x->stats: stage 0's, with PtAP's phase times summed over both stages. */
static int ocean_stats(OceanBench *x, OceanProduct p)
{
  BenchResult *r = x->r;
  OceanStats   s1;
  TRY_OCEAN(r, OceanProductGetStats(p, 0, &x->stats));
  x->stage[0] = x->stats;
  if (x->type == OCEAN_PRODUCT_PtAP) {
    TRY_OCEAN(r, OceanProductGetStats(p, 1, &s1));
    x->stage[1] = s1;
    x->stats.t_analysis += s1.t_analysis, x->stats.t_estimate += s1.t_estimate, x->stats.t_symbolic += s1.t_symbolic;
    x->stats.t_numeric += s1.t_numeric, x->stats.t_fallback += s1.t_fallback, x->stats.t_compact += s1.t_compact;
    x->stats.t_transpose += s1.t_transpose;
  }
  return 0;
done:
  return 1;
}

/* One end-to-end product: plan, symbolic (C complete on the device), C's device arrays; the plan goes after timing. */
static int ocean_once(void *ctx, int probe, double *ms)
{
  OceanBench    *x  = (OceanBench *)ctx;
  BenchResult   *r  = x->r;
  OceanContext   oc = x->g->ocean;
  OceanProduct   p  = NULL;
  int64_t        m, n, nnz, peak;
  const int64_t *rp;
  const int32_t *ci;
  const double  *v;
  int            err = 1;

  if (probe) {
    size_t total;
    TRY_OCEAN(r, OceanContextTrimDeviceMemory(oc));
    TRY_OCEAN(r, OceanContextResetDeviceMemoryPeak(oc));
    TRY_OCEAN(r, OceanContextGetDeviceMemory(oc, &x->base, NULL, NULL, NULL));
    TRY_CUDA(r, cudaMemGetInfo(&x->free0, &total));
  }
  TRY_CUDA(r, cudaEventRecord(x->g->start, 0));
  TRY_OCEAN(r, OceanProductCreate(oc, x->type, &p));
  TRY_OCEAN(r, OceanProductSetOperandMemType(p, OCEAN_MEMORY_DEVICE));
  TRY_OCEAN(r, OceanProductSymbolic(p, &x->a, &x->b));
  TRY_OCEAN(r, OceanProductGetDeviceC(p, &m, &n, &nnz, &rp, &ci, &v));
  if (ocean_elapsed(x, ms)) goto done;
  if (ocean_stats(x, p)) goto done;
  if (probe) {
    size_t fr, total;
    TRY_OCEAN(r, OceanContextGetDeviceMemory(oc, NULL, &peak, NULL, NULL));
    TRY_CUDA(r, cudaMemGetInfo(&fr, &total));
    r->peak_bytes    = (double)(peak - x->base);
    r->meminfo_bytes = fr <= x->free0 ? (double)(x->free0 - fr) : -1;
    r->nnz_c         = nnz;
    if (m != (x->type == OCEAN_PRODUCT_PtAP ? x->b.ncols : x->a.nrows) || n != x->b.ncols || (nnz && (!ci || !v)) ||
        !rp) {
      set_status(r, RES_FAIL, "fail(device C is %lldx%lld with %lld nonzeros)", (long long)m, (long long)n,
                 (long long)nnz);
      goto done;
    }
    if (r->want_c && ocean_download_c(p, r)) goto done;
  }
  err = 0;
done:
  OceanProductDestroy(&p);
  return err;
}

/* One numeric-only product with new values of A (alternately halved and original). */
static int ocean_reuse_once(void *ctx, int probe, double *ms)
{
  OceanBench  *x   = (OceanBench *)ctx;
  BenchResult *r   = x->r;
  OceanCSR     a   = x->runs++ % 2 == 0 ? x->a_half : x->a;
  int          err = 1;

  TRY_CUDA(r, cudaEventRecord(x->g->start, 0));
  TRY_OCEAN(r, OceanProductNumeric(x->reuse, &a, &x->b));
  if (ocean_elapsed(x, ms)) goto done;
  if (x->runs == 2) x->second_ms = *ms;
  if (ocean_stats(x, x->reuse)) goto done;
  if (probe) {
    r->c_scale = 0.5;
    if (r->want_c && ocean_download_c(x->reuse, r)) goto done;
  }
  err = 0;
done:
  return err;
}

/* The device's phase timers of our context on or off: off in the timed runs (two event records a phase), on for one
   more run that gives the phase table its times. */
static int ocean_timers(const Gpu *g, int on)
{
  OceanOptions o;
  return OceanContextGetOptions(g->ocean, &o) || (o.device_timers = on, OceanContextSetOptions(g->ocean, &o));
}

static void ocean_view(const GenCSR *M, const DevCSR64 *d, const DevBuf *values, OceanCSR *v)
{
  memset(v, 0, sizeof(*v));
  v->nrows  = M->nrows;
  v->ncols  = M->ncols;
  v->rowptr = (const int64_t *)d->rowptr.p;
  v->colidx = (const int32_t *)d->colidx.p;
  v->values = (const double *)values->p;
}
#endif

/* Ours on one matrix: r filled (and verified here, against ref when it has values), or r's status says why not. */
static void bench_ocean(const Options *o, const Gpu *g, const GenCSR *A, const GenCSR *B, const GenRef *ref, Summary *s)
{
  BenchResult *r = &s->res[M_OCEAN];
#ifdef OCEAN_BENCH_OURS
  OceanBench      x;
  BenchResult     ru;
  MemTrack        inputs;
  DevCSR64        dA, dB;
  static uint64_t ids; /* fresh structure ids for every matrix: the context's sketch cache must not mix them up */

  result_init(&ru, "ocean_reuse");
  memset(&x, 0, sizeof(x));
  memset(&dA, 0, sizeof(dA));
  memset(&dB, 0, sizeof(dB));
  if (!g->ocean) {
    set_status(r, RES_FAIL, "fail(%s)", g->ocean_err);
    return;
  }
  track_init(&inputs, r, 0, 0);
  if (upload_csr64(A, &inputs, &dA) || (B != A && upload_csr64(B, &inputs, &dB))) goto done;
  x.g    = g;
  x.r    = r;
  x.type = s->ptap ? OCEAN_PRODUCT_PtAP : OCEAN_PRODUCT_AB;
  ocean_view(A, &dA, &dA.values, &x.a);
  ocean_view(A, &dA, &dA.values_half, &x.a_half);
  ocean_view(B, B != A ? &dB : &dA, B != A ? &dB.values : &dA.values, &x.b);

  /* end-to-end */
  time_method(ocean_once, &x, o, r);
  if (r->state != RES_OK) goto done;
  {
    double ms;
    if (ocean_timers(g, 1) || ocean_once(&x, 0, &ms) || ocean_timers(g, 0)) {
      fprintf(stderr, "bench: ocean: the run with the phase timers failed: %s\n", OceanGetLastErrorMessage());
      goto done;
    }
  }
  s->ostats      = x.stats;
  s->ostage[0]   = x.stage[0];
  s->ostage[1]   = x.stage[1];
  s->have_ostats = 1;
  verify_result(ref, r);
  GenFree(&r->c);

  if (o->no_reuse) {
    r->reuse_ms = REUSE_SKIPPED;
    goto done;
  }
  /* numeric-only: ids promise that the structure stays (A and B share one when B is A) */
  ru.want_c        = r->want_c;
  x.r              = &ru;
  x.a.structure_id = x.a_half.structure_id = ++ids;
  x.b.structure_id                         = B != A ? ++ids : x.a.structure_id;
  TRY_OCEAN(&ru, OceanProductCreate(g->ocean, x.type, &x.reuse));
  TRY_OCEAN(&ru, OceanProductSetOperandMemType(x.reuse, OCEAN_MEMORY_DEVICE));
  TRY_OCEAN(&ru, OceanProductSymbolic(x.reuse, &x.a, &x.b));
  time_method(ocean_reuse_once, &x, o, &ru);
  if (ru.state == RES_OK) {
    double ms;
    if (ocean_timers(g, 1) || ocean_reuse_once(&x, 0, &ms) || ocean_timers(g, 0))
      fprintf(stderr, "bench: ocean: the numeric-only run with the phase timers failed: %s\n",
              OceanGetLastErrorMessage());
    r->reuse_ms        = ru.ms;
    r->reuse_first_ms  = ru.first_ms;
    r->reuse_second_ms = x.second_ms;
    s->ostats_reuse    = x.stats;
    verify_result(ref, &ru);
    if (ru.verified == 0) {
      r->verified = 0;
      snprintf(r->verify_msg, sizeof(r->verify_msg), "numeric-only: %.140s", ru.verify_msg);
    }
  } else fprintf(stderr, "bench: ocean numeric-only on %s: %s\n", s->name, ru.status);
done:
  if (!o->no_reuse && ru.state != RES_OK && r->state == RES_OK) r->reuse_ms = REUSE_FAILED;
  GenFree(&ru.c);
  OceanProductDestroy(&x.reuse);
  free_dev_csr64(&inputs, &dA);
  free_dev_csr64(&inputs, &dB);
  /* nothing of ours stays on the device while cuSPARSE runs (the trim drops cached sketches too) */
  if (OceanContextTrimDeviceMemory(g->ocean)) fprintf(stderr, "bench: ocean: trim: %s\n", OceanGetLastErrorMessage());
#else
  (void)o, (void)g, (void)A, (void)B, (void)ref, (void)s;
  set_status(r, RES_NA, "n/a");
#endif
}

/* Every method on one matrix; C is verified against the host reference when the host can hold it.  PtAP (s->ptap):
   ops are host_ptap_operands', the reference P^T*(AP) with the bound of |P|^T |A| |P|. */
static void bench_matrix(const Options *o, const Gpu *g, const GenCSR *A, const GenCSR *B, const GenCSR *ops,
                         Summary *s)
{
  GenRef ref;
  double t0 = omp_get_wtime(), gb, gb_copy;

  memset(&ref, 0, sizeof(ref));
  GenRefCount(ops ? &ops[0] : A, ops ? &ops[1] : B, &ref.C);
  s->nnz_c    = GenNnz(&ref.C);
  ref.c_nrows = ref.C.nrows;
  if (!host_holds(s->nnz_c, 32, &gb) && !ops && host_holds(s->nnz_c, 12, &gb_copy)) {
    GenRefSample(A, B, REF_SAMPLE_HEAD, REF_SAMPLE_SPREAD, &ref);
    s->t_ref = omp_get_wtime() - t0;
    printf(
      "  host reference: nnz(C) %lld; a whole reference and a copy of C need %.0f GB of host memory, so C is verified "
      "in %lld sampled rows (%lld entries; the first %d rows and the rest evenly spread), made in %.2f s\n",
      (long long)s->nnz_c, gb, (long long)ref.C.nrows, (long long)GenNnz(&ref.C), REF_SAMPLE_HEAD, s->t_ref);
  } else if (host_holds(s->nnz_c, 32, &gb)) {
    GenRefFill(ops ? &ops[0] : A, ops ? &ops[1] : B, &ref);
    if (ops) {
      GenRef abs_ref;
      memset(&abs_ref, 0, sizeof(abs_ref));
      GenRefCount(&ops[2], &ops[3], &abs_ref.C);
      GenRefFill(&ops[2], &ops[3], &abs_ref);
      memcpy(ref.bound, abs_ref.C.values, (size_t)s->nnz_c * sizeof(double)); /* same structure */
      GenRefFree(&abs_ref);
    }
    s->t_ref = omp_get_wtime() - t0;
    printf("  host reference: nnz(C) %lld in %.2f s\n", (long long)s->nnz_c, s->t_ref);
  } else
    printf("  nnz(C) %lld: not verified, the reference and a copy of C need %.0f GB of host memory\n",
           (long long)s->nnz_c, gb);
  fflush(stdout);

  s->res[M_OCEAN].want_c = ref.C.values != NULL;
  bench_ocean(o, g, A, B, &ref, s);
  GenFree(&s->res[M_OCEAN].c);
  print_result(s, &s->res[M_OCEAN]);
  if (s->have_ostats) print_ocean_phases(s);
  bench_cusparse(o, g, A, B, &ref, s);
  GenRefFree(&ref);
}

/* ---- the matrices ------------------------------------------------------------------------------------------- */

/* The name of a file argument: its base name without .mtx ("A_x_B" for "A.mtx:B.mtx"). */
static void file_name(const char *arg, char *name, size_t len)
{
  char tmp[2][64];
  if (!strncmp(arg, "ptap:", 5)) {
    const char *a = arg + 5, *end = strchr(a, ':') ? strchr(a, ':') : a + strlen(a), *slash;
    for (slash = end; slash > a && slash[-1] != '/'; slash--) {}
    int n = (int)(end - slash) >= 4 && !strncmp(end - 4, ".bin", 4) ? (int)(end - slash) - 4 : (int)(end - slash);
    snprintf(name, len, "ptap_%.*s", n < 50 ? n : 50, slash);
    return;
  }
  const char *colon = strchr(arg, ':');
  for (int k = 0; k < (colon ? 2 : 1); k++) {
    const char *p = k ? colon + 1 : arg, *end = k || !colon ? p + strlen(p) : colon, *slash;
    for (slash = end; slash > p && slash[-1] != '/'; slash--) {}
    int n = (int)(end - slash) >= 4 && !strncmp(end - 4, ".mtx", 4) ? (int)(end - slash) - 4 : (int)(end - slash);
    snprintf(tmp[k], sizeof(tmp[k]), "%.*s", n < 63 ? n : 63, slash);
  }
  if (colon) snprintf(name, len, "%.28s_x_%.28s", tmp[0], tmp[1]);
  else snprintf(name, len, "%s", tmp[0]);
}

/* Reads file argument arg into A (and B for "A.mtx:B.mtx" and "ptap:A.bin:P.bin"; otherwise *B = A).  Returns 0 or 1.
 */
static int read_inputs(const char *arg, GenCSR *A, GenCSR *B, int *two, int *ptap)
{
  char        path[2][4096], err[256];
  const char *colon;
  *ptap = !strncmp(arg, "ptap:", 5);
  if (*ptap) {
    arg += 5;
    colon = strchr(arg, ':');
    if (!colon) return fprintf(stderr, "bench: ptap:%s: give ptap:A.bin:P.bin\n", arg), 1;
    *two = 1;
    snprintf(path[0], sizeof(path[0]), "%.*s", (int)(colon - arg), arg);
    snprintf(path[1], sizeof(path[1]), "%s", colon + 1);
    for (int k = 0; k < 2; k++)
      if (GenReadPetscBinary(path[k], k ? B : A, err, sizeof(err))) {
        fprintf(stderr, "bench: %s: %s\n", path[k], err);
        if (k) GenFree(A);
        return 1;
      }
    if (A->nrows != A->ncols || A->ncols != B->nrows) {
      fprintf(stderr, "bench: ptap:%s: A is %lld x %lld, P %lld x %lld\n", arg, (long long)A->nrows,
              (long long)A->ncols, (long long)B->nrows, (long long)B->ncols);
      GenFree(A), GenFree(B);
      return 1;
    }
    return 0;
  }
  colon = strchr(arg, ':');
  *two  = colon != NULL;
  snprintf(path[0], sizeof(path[0]), "%.*s", colon ? (int)(colon - arg) : (int)strlen(arg), arg);
  if (colon) snprintf(path[1], sizeof(path[1]), "%s", colon + 1);
  for (int k = 0; k < 1 + *two; k++)
    if (GenReadMatrixMarket(path[k], GEN_BENCH_SEED + 100 + (uint64_t)k, k ? B : A, err, sizeof(err))) {
      fprintf(stderr, "bench: %s: %s\n", path[k], err);
      if (k) GenFree(A);
      return 1;
    }
  if (*two && A->ncols != B->nrows) {
    fprintf(stderr, "bench: %s: A has %lld columns, B %lld rows\n", arg, (long long)A->ncols, (long long)B->nrows);
    GenFree(A), GenFree(B);
    return 1;
  }
  return 0;
}

static void matrix_stats(const GenCSR *A, const GenCSR *B, Summary *s)
{
  s->rows     = A->nrows;
  s->a_rows   = A->nrows;
  s->cols     = B->ncols;
  s->nnz_a    = GenNnz(A);
  s->nnz_b    = GenNnz(B);
  s->products = host_products(A, B);
  int64_t mx  = 0;
#pragma omp parallel for reduction(max : mx)
  for (int64_t i = 0; i < A->nrows; i++)
    if (A->rowptr[i + 1] - A->rowptr[i] > mx) mx = A->rowptr[i + 1] - A->rowptr[i];
  s->max_row_nnz = mx;
}

/* --list: nnz(C) from the host's symbolic count, no GPU. */
static void list_matrix(const GenCSR *A, const GenCSR *B, const GenCSR *ops, Summary *s)
{
  GenCSR C;
  double t0 = omp_get_wtime();
  GenRefCount(ops ? &ops[0] : A, ops ? &ops[1] : B, &C);
  s->nnz_c = GenNnz(&C);
  s->t_ref = omp_get_wtime() - t0;
  GenFree(&C);
}

/* ---- output ------------------------------------------------------------------------------------------------- */

static int mkdir_p(const char *file) /* the directories of file's path */
{
  char dir[4096];
  snprintf(dir, sizeof(dir), "%s", file);
  for (char *p = dir + 1; *p; p++)
    if (*p == '/') {
      *p = 0;
      if (mkdir(dir, 0777) && errno != EEXIST) return 1;
      *p = '/';
    }
  return 0;
}

static void csv_header(FILE *f)
{
  fprintf(f, "matrix,rows,cols,nnz_a,nnz_b,products,nnz_c,method,status,ms,gflops,reps,peak_mb,meminfo_mb,verified\n");
}

static void csv_rows(FILE *f, const Summary *s)
{
  for (int m = 0; m < M_COUNT; m++) {
    const BenchResult *r = &s->res[m];
    fprintf(f, "%s,%lld,%lld,%lld,%lld,%lld,%lld,%s,%s,", s->name, (long long)s->rows, (long long)s->cols,
            (long long)s->nnz_a, (long long)s->nnz_b, (long long)s->products, (long long)s->nnz_c, r->method,
            r->status);
    if (r->state == RES_OK)
      fprintf(f, "%.4f,%.3f,%d,%.1f,%.1f,", r->ms, gflops(s, r->ms), r->reps, r->peak_bytes / 1e6,
              r->meminfo_bytes / 1e6);
    else fprintf(f, ",,,,,");
    fprintf(f, "%s\n", r->verified < 0 ? "" : r->verified ? "yes" : "no");
    if (m == M_OCEAN && r->state == RES_OK && r->reuse_ms >= 0) /* ours carries its reuse time in the same result */
      fprintf(f, "%s,%lld,%lld,%lld,%lld,%lld,%lld,ocean_reuse,ok,%.4f,%.3f,%d,%.1f,,\n", s->name, (long long)s->rows,
              (long long)s->cols, (long long)s->nnz_a, (long long)s->nnz_b, (long long)s->products, (long long)s->nnz_c,
              r->reuse_ms, gflops(s, r->reuse_ms), r->reps, s->ostats_reuse.reuse_map_bytes / 1e6);
  }
  fflush(f);
}

/* A table whose columns are as wide as their widest cell (at most TAB_COLS columns). */
#define TAB_COLS 24
#define TAB_CELL 64
typedef struct {
  int nrows, ncols;
  char (*cell)[TAB_COLS][TAB_CELL];
} Table;

static void table_set(Table *t, int row, int col, const char *fmt, ...)
{
  va_list ap;
  if (col >= TAB_COLS) {
    fprintf(stderr, "bench: table column %d of at most %d\n", col, TAB_COLS);
    exit(2);
  }
  va_start(ap, fmt);
  vsnprintf(t->cell[row][col], TAB_CELL, fmt, ap);
  va_end(ap);
}

/* A table of nrows rows below its header row head[0, ncols); free its cells with free(t.cell). */
static Table table_create(const char *const *head, int ncols, int nrows)
{
  Table t = {nrows + 1, ncols, NULL};
  t.cell  = GenMalloc((size_t)(nrows + 1) * sizeof(*t.cell));
  for (int j = 0; j < ncols; j++) table_set(&t, 0, j, "%s", head[j]);
  return t;
}

static void table_print(const Table *t)
{
  int w[TAB_COLS] = {0};
  for (int i = 0; i < t->nrows; i++)
    for (int j = 0; j < t->ncols; j++)
      if ((int)strlen(t->cell[i][j]) > w[j]) w[j] = (int)strlen(t->cell[i][j]);
  for (int i = 0; i < t->nrows; i++) {
    for (int j = 0; j < t->ncols; j++) printf(j ? " | %*s" : "%-*s", w[j], t->cell[i][j]);
    printf("\n");
  }
}

/* A status without cuSPARSE's prefix, which would make the table twice as wide. */
static void cell_status(Table *t, int row, int col, const BenchResult *r)
{
  const char *p = strstr(r->status, "CUSPARSE_STATUS_");
  if (p) table_set(t, row, col, "%.*s%s", (int)(p - r->status), r->status, p + strlen("CUSPARSE_STATUS_"));
  else table_set(t, row, col, "%s", r->status);
}

/* "ok" results as a number, the others as their status ("fail(...)", "skip(...)", "n/a"). */
static void cell_result(Table *t, int row, int col, const BenchResult *r, const char *fmt, double v)
{
  if (r->state == RES_OK) table_set(t, row, col, fmt, v);
  else cell_status(t, row, col, r);
}

/* The fastest successful cuSPARSE algorithm, or NULL. */
static const BenchResult *cusparse_best(const Summary *s, int *alg)
{
  const BenchResult *best = NULL;
  for (int m = M_ALG1; m <= M_ALG3; m++)
    if (s->res[m].state == RES_OK && (!best || s->res[m].ms < best->ms)) best = &s->res[m], *alg = m - M_ALG1 + 1;
  return best;
}

static void summary_row(Table *t, int row, const Summary *s)
{
  const BenchResult *oc  = &s->res[M_OCEAN], *best;
  int                alg = 0;
  table_set(t, row, 0, "%s", s->name);
  table_set(t, row, 1, "%lld", (long long)s->rows);
  table_set(t, row, 2, "%lld", (long long)s->nnz_a);
  table_set(t, row, 3, "%lld", (long long)s->products);
  table_set(t, row, 4, "%lld", (long long)s->nnz_c);
  cell_result(t, row, 5, oc, "%.3f", oc->ms);
  cell_result(t, row, 6, oc, "%.2f", gflops(s, oc->ms));
  cell_result(t, row, 7, oc, "%.1f", oc->peak_bytes / 1e6);
  if ((best = cusparse_best(s, &alg))) {
    table_set(t, row, 8, "%.3f (ALG%d)", best->ms, alg);
    table_set(t, row, 9, "%.2f", gflops(s, best->ms));
  } else { /* every algorithm failed: ALG1's reason */
    cell_status(t, row, 8, &s->res[M_ALG1]);
    cell_status(t, row, 9, &s->res[M_ALG1]);
  }
  for (int m = M_ALG1; m <= M_ALG3; m++)
    cell_result(t, row, 10 + m - M_ALG1, &s->res[m], "%.1f", s->res[m].peak_bytes / 1e6);
  if (best && oc->state == RES_OK) table_set(t, row, 13, "%.2f", best->ms / oc->ms);
  else table_set(t, row, 13, "n/a");
  if (oc->state == RES_OK && oc->reuse_ms < 0) {
    char buf[32];
    table_set(t, row, 14, "%s", reuse_text(oc->reuse_ms, 0.0, "%.3f", buf));
  } else cell_result(t, row, 14, oc, "%.3f", oc->reuse_ms);
  cell_result(t, row, 15, &s->res[M_REUSE], "%.3f", s->res[M_REUSE].ms);
}

static void print_summary(const Summary *sums, int n)
{
  static const char *head[] = {"name",
                               "rows",
                               "nnz(A)",
                               "products",
                               "nnz(C)",
                               "ocean ms",
                               "ocean GFLOPS",
                               "ocean peak MB",
                               "cuSPARSE best (alg) ms",
                               "GFLOPS",
                               "ALG1 peak MB",
                               "ALG2 MB",
                               "ALG3 MB",
                               "ratio",
                               "reuse ocean ms",
                               "reuse cuSPARSE ms"};
  Table              t      = table_create(head, (int)(sizeof(head) / sizeof(head[0])), n);
  for (int i = 0; i < n; i++) summary_row(&t, i + 1, &sums[i]);
  printf("\nSummary (ms: median end-to-end; GFLOPS = 2 * products / time; ratio = cuSPARSE best / ocean;\n"
         "peak MB: device memory beyond the inputs; fail(X): CUSPARSE_STATUS_X or a CUDA error)\n");
  table_print(&t);
  free(t.cell);
}

/* Ours, phase by phase (ms, CUDA event times of one run after the timed ones, with the device timers on; "other" =
   end-to-end minus their sum: plan creation, host statistics, per-row copies, synchronisations), so that one can see
   where the time goes. */
static void print_ocean_phase_summary(const Summary *sums, int n)
{
  static const char *head[] = {"name",
                               "workflow",
                               "overflow rows",
                               "alloc/nnz(C)",
                               "analysis",
                               "estimate",
                               "symbolic",
                               "numeric",
                               "fallback",
                               "compact",
                               "other",
                               "ocean ms",
                               "numeric-only ms",
                               "(its kernels)",
                               "first numeric-only ms",
                               "second (map) ms",
                               "map MB"};
  Table              t      = table_create(head, (int)(sizeof(head) / sizeof(head[0])), n);
  int                rows   = 1;
  for (int i = 0; i < n; i++) {
    const Summary     *s  = &sums[i];
    const OceanStats  *st = &s->ostats;
    const BenchResult *oc = &s->res[M_OCEAN];
    char               wf[64];
    if (!s->have_ostats || oc->state != RES_OK) continue;
    double phases =
      1e3 * (st->t_analysis + st->t_estimate + st->t_symbolic + st->t_numeric + st->t_fallback + st->t_compact);
    workflow_name(st, wf, sizeof(wf));
    table_set(&t, rows, 0, "%s", s->name);
    table_set(&t, rows, 1, "%s", wf);
    table_set(&t, rows, 2, "%lld", (long long)st->overflow_rows);
    table_set(&t, rows, 3, "%.2f", st->nnz_c ? (double)st->allocated_entries / (double)st->nnz_c : 0.0);
    table_set(&t, rows, 4, "%.3f", 1e3 * st->t_analysis);
    table_set(&t, rows, 5, "%.3f", 1e3 * st->t_estimate);
    table_set(&t, rows, 6, "%.3f", 1e3 * st->t_symbolic);
    table_set(&t, rows, 7, "%.3f", 1e3 * st->t_numeric);
    table_set(&t, rows, 8, "%.3f", 1e3 * st->t_fallback);
    table_set(&t, rows, 9, "%.3f", 1e3 * st->t_compact);
    table_set(&t, rows, 10, "%.3f", oc->ms - phases);
    table_set(&t, rows, 11, "%.3f", oc->ms);
    {
      char buf[32];
      table_set(&t, rows, 12, "%s", reuse_text(oc->reuse_ms, oc->reuse_ms, "%.3f", buf));
      table_set(&t, rows, 13, "%s", reuse_text(oc->reuse_ms, 1e3 * s->ostats_reuse.t_numeric, "%.3f", buf));
      table_set(&t, rows, 14, "%s", reuse_text(oc->reuse_ms, oc->reuse_first_ms, "%.3f", buf));
      table_set(&t, rows, 15, "%s", reuse_text(oc->reuse_ms, oc->reuse_second_ms, "%.3f", buf));
      table_set(&t, rows, 16, "%s", reuse_text(oc->reuse_ms, s->ostats_reuse.reuse_map_bytes / 1e6, "%.1f", buf));
    }
    rows++;
  }
  t.nrows = rows;
  if (rows > 1) {
    printf("\nOcean phases (ms of one more run with the device timers on, off in the timed ones; other = ocean ms - "
           "phases: plan, host statistics, per-row copies, syncs;\n"
           "the first numeric-only call searches C's rows, the second makes the product map, map MB; the numeric-only\n"
           "median sums through it)\n");
    table_print(&t);
  }
  free(t.cell);
}

/* The matrices with heavy rows (the multisplit): their share, chunks, levels and the time and copy-rate fraction of
   each of its kernels, from the same run as the phases. */
static void print_heavy_summary(const Summary *sums, int n)
{
  const char *head[] = {"name",         "heavy rows %",  "heavy products %", "chunks",
                        "dense chunks", "chunk columns", "levels",           "outer product ms",
                        "(of copy)",    "histogram ms",  "(of copy)",        "multisplit ms",
                        "(of copy)",    "accumulate ms", "(of copy)",        "ocean ms"};
  Table       t      = table_create(head, (int)(sizeof(head) / sizeof(head[0])), n);
  int         rows   = 1;
  for (int i = 0; i < n; i++) {
    const Summary    *s  = &sums[i];
    const OceanStats *st = &s->ostats;
    double            f[4];
    char              fb[16];
    if (!s->have_ostats || s->res[M_OCEAN].state != RES_OK || !st->heavy_rows) continue;
    heavy_copy_fractions(st, f);
    table_set(&t, rows, 0, "%s", s->name);
    table_set(&t, rows, 1, "%.1f", 100.0 * (double)st->heavy_rows / (double)(st->nrows ? st->nrows : 1));
    table_set(&t, rows, 2, "%.1f", 100.0 * (double)st->heavy_products / (double)(st->products ? st->products : 1));
    table_set(&t, rows, 3, "%lld", (long long)st->heavy_chunks);
    table_set(&t, rows, 4, "%lld", (long long)st->heavy_dense_chunks);
    table_set(&t, rows, 5, "%lld", (long long)st->heavy_chunk_columns);
    table_set(&t, rows, 6, "%d of %d", st->heavy_levels, st->heavy_levels_planned);
    table_set(&t, rows, 7, "%.3f", 1e3 * st->t_heavy_expand);
    table_set(&t, rows, 8, "%s", copy_fraction_text(f[0], fb));
    table_set(&t, rows, 9, "%.3f", 1e3 * st->t_heavy_histogram);
    table_set(&t, rows, 10, "%s", copy_fraction_text(f[1], fb));
    table_set(&t, rows, 11, "%.3f", 1e3 * st->t_heavy_split);
    table_set(&t, rows, 12, "%s", copy_fraction_text(f[2], fb));
    table_set(&t, rows, 13, "%.3f", 1e3 * st->t_heavy_accumulate);
    table_set(&t, rows, 14, "%s", copy_fraction_text(f[3], fb));
    table_set(&t, rows, 15, "%.3f", s->res[M_OCEAN].ms);
    rows++;
  }
  t.nrows = rows;
  if (rows > 1) {
    printf(
      "\nHeavy rows (the multisplit; ms of the phases' run, in which the light rows finish before the heavy ones\n"
      "start; of copy: the least bytes each kernel moves over its time, as a fraction of the measured copy rate)\n");
    table_print(&t);
  }
  free(t.cell);
}

static void print_list(const Summary *sums, int n)
{
  const char *head[] = {"name",    "rows",     "cols",   "nnz(A)",          "nnz/row",
                        "max row", "products", "nnz(C)", "products/nnz(C)", "gen+host s"};
  Table       t      = table_create(head, (int)(sizeof(head) / sizeof(head[0])), n);
  for (int i = 0; i < n; i++) {
    const Summary *s = &sums[i];
    table_set(&t, i + 1, 0, "%s", s->name);
    table_set(&t, i + 1, 1, "%lld", (long long)s->rows);
    table_set(&t, i + 1, 2, "%lld", (long long)s->cols);
    table_set(&t, i + 1, 3, "%lld", (long long)s->nnz_a);
    table_set(&t, i + 1, 4, "%.2f", (double)s->nnz_a / (double)(s->a_rows ? s->a_rows : 1));
    table_set(&t, i + 1, 5, "%lld", (long long)s->max_row_nnz);
    table_set(&t, i + 1, 6, "%lld", (long long)s->products);
    table_set(&t, i + 1, 7, "%lld", (long long)s->nnz_c);
    table_set(&t, i + 1, 8, "%.2f", (double)s->products / (double)(s->nnz_c ? s->nnz_c : 1));
    table_set(&t, i + 1, 9, "%.1f+%.1f", s->t_gen, s->t_ref);
  }
  printf("\n");
  table_print(&t);
  free(t.cell);
}

/* ---- main -------------------------------------------------------------------------------------------------- */

/* The device-to-device copy rate (bytes read + written per second) of a 1 GB cudaMemcpy, median of 5. */
static double copy_rate(Gpu *g)
{
  const size_t bytes = (size_t)1 << 30;
  void        *a = NULL, *b = NULL;
  double       t[5];
  float        ms;
  if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess) {
    (void)cudaGetLastError();
    cudaFree(a);
    return 0;
  }
  cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice);
  for (int k = 0; k < 5; k++) {
    cudaEventRecord(g->start, 0);
    cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice);
    cudaEventRecord(g->stop, 0);
    cudaEventSynchronize(g->stop);
    cudaEventElapsedTime(&ms, g->start, g->stop);
    t[k] = 2.0 * (double)bytes / (1e-3 * ms) / 1e9;
  }
  cudaFree(a);
  cudaFree(b);
  return median(t, 5);
}

static int gpu_init(Gpu *g, const Options *o)
{
  const int             heavy = o->heavy;
  BenchResult           r;
  int                   dev, sms, drv, rt, sp;
  struct cudaDeviceProp p;
  result_init(&r, "init");
  memset(g, 0, sizeof(*g));
  TRY_CUDA(&r, cudaGetDevice(&dev));
  TRY_CUDA(&r, cudaGetDeviceProperties(&p, dev));
  TRY_CUDA(&r, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  TRY_CUDA(&r, cudaDriverGetVersion(&drv));
  TRY_CUDA(&r, cudaRuntimeGetVersion(&rt));
  TRY_SPARSE(&r, cusparseCreate(&g->handle));
  TRY_SPARSE(&r, cusparseGetVersion(g->handle, &sp));
  TRY_CUDA(&r, cudaEventCreate(&g->start));
  TRY_CUDA(&r, cudaEventCreate(&g->stop));
  printf("device %d: %s, %d SMs, %.1f GB, compute capability %d.%d\n", dev, p.name, sms, p.totalGlobalMem / 1e9,
         p.major, p.minor);
#ifdef OCEAN_BENCH_OURS
  {
    OceanOptions opts;
    OceanError   e = OceanContextCreate(OCEAN_BACKEND_CUDA, NULL, &g->ocean);
    OceanOptionsDefault(&opts);
    opts.record_rows         = 0;
    opts.heavy               = (OceanHeavyMode)heavy;
    opts.workflow            = (OceanWorkflow)o->workflow;
    opts.reuse_map_max_bytes = (int64_t)o->reuse_map_bytes;
    if (o->small_bound >= 0) opts.small_bound = (int64_t)o->small_bound;
    if (o->bound_factor >= 0) opts.bound_factor = (int64_t)o->bound_factor;
    opts.heavy_threshold        = (int64_t)o->heavy_threshold;
    opts.heavy_chunk_columns    = (int64_t)o->heavy_columns;
    opts.heavy_chunks_per_level = (int64_t)o->heavy_per_level;
    if (o->heavy_min_span >= 0) opts.heavy_min_span = (int64_t)o->heavy_min_span;
    if (!e) e = OceanContextSetOptions(g->ocean, &opts);
    if (e) {
      fprintf(stderr, "bench: ocean: no CUDA context: %s: %s\n", OceanErrorString(e), OceanGetLastErrorMessage());
      snprintf(g->ocean_err, sizeof(g->ocean_err), "no context: %s", OceanErrorString(e));
      OceanContextDestroy(&g->ocean);
    }
  }
#else
  snprintf(g->ocean_err, sizeof(g->ocean_err), "n/a");
#endif
  g->copy_gbs = copy_rate(g);
  printf("CUDA driver %d.%d, runtime %d.%d, cuSPARSE %d.%d.%d; %d OpenMP threads; device copy %.0f GB/s; our heavy "
         "rows: %s\n",
         drv / 1000, drv % 1000 / 10, rt / 1000, rt % 1000 / 10, sp / 1000, sp % 1000 / 100, sp % 100,
         omp_get_max_threads(), g->copy_gbs,
         heavy == 0   ? "auto"
         : heavy == 1 ? "off"
                      : "multisplit");
  return 0;
done:
  fprintf(stderr, "bench: no usable GPU (%s); --list works without one\n", r.status);
  return 1;
}

static void gpu_finalize(Gpu *g)
{
#ifdef OCEAN_BENCH_OURS
  OceanContextDestroy(&g->ocean);
#endif
  warn_cuda(cudaEventDestroy(g->start), "cudaEventDestroy");
  warn_cuda(cudaEventDestroy(g->stop), "cudaEventDestroy");
  warn_sparse(cusparseDestroy(g->handle), "cusparseDestroy");
}

/* The gMAGNUS paper's R-MAT pairs (its Table III's densities): scale 15-18 with A of degree 4, 8, 16, 32, scales 19
   and 20 with 4 and 8 (the larger ones' intermediate products pass the device memory); B of degree 8, its own seed. */
static const int rmat_pairs[][2] = {{15, 4},  {15, 8},  {15, 16}, {15, 32}, {16, 4},  {16, 8}, {16, 16},
                                    {16, 32}, {17, 4},  {17, 8},  {17, 16}, {17, 32}, {18, 4}, {18, 8},
                                    {18, 16}, {18, 32}, {19, 4},  {19, 8},  {20, 4},  {20, 8}};
#define NUM_RMAT_PAIRS ((int)(sizeof(rmat_pairs) / sizeof(rmat_pairs[0])))

/* Builds input k (built-in specs first, the R-MAT pairs with --rmat-set, then the files): 0 when built, 1 when not
   selected, 2 on error. */
static int make_inputs(const Options *o, int k, GenCSR *A, GenCSR *B, int *two, Summary *s)
{
  double t0   = omp_get_wtime();
  int    ptap = 0;
  memset(A, 0, sizeof(*A)), memset(B, 0, sizeof(*B));
  *two = 0;
  if (k < GenBenchNumSpecs) {
    char name[64];
    snprintf(name, sizeof(name), "%s%s", GenBenchSpecs[k].name, o->small ? "_small" : "");
    if (!selected(o->only, GenBenchSpecs[k].name) && !selected(o->only, name)) return 1;
    GenBenchMatrix(k, o->small, A);
  } else if (o->rmat_set && k < GenBenchNumSpecs + NUM_RMAT_PAIRS) {
    const int scale = rmat_pairs[k - GenBenchNumSpecs][0] - (o->small ? 6 : 0),
              deg   = rmat_pairs[k - GenBenchNumSpecs][1];
    char name[64];
    snprintf(name, sizeof(name), "rmat_s%d_a%d_b8", scale, deg);
    if (!selected(o->only, name)) return 1;
    GenRmatChunked(A, scale, deg, 0.57, 0.19, 0.19, GEN_BENCH_SEED + 1000 + (uint64_t)k);
    GenRmatChunked(B, scale, 8, 0.57, 0.19, 0.19, GEN_BENCH_SEED + 2000 + (uint64_t)k);
    snprintf(A->name, sizeof(A->name), "%s", name);
    *two = 1;
  } else {
    const int f = k - GenBenchNumSpecs - (o->rmat_set ? NUM_RMAT_PAIRS : 0);
    file_name(o->files[f], A->name, sizeof(A->name));
    if (!selected(o->only, A->name)) return 1;
    if (read_inputs(o->files[f], A, B, two, &ptap)) return 2;
  }
  memset(s, 0, sizeof(*s));
  s->ptap = ptap;
  snprintf(s->name, sizeof(s->name), "%s", A->name);
  s->t_gen = omp_get_wtime() - t0;
  return 0;
}

int main(int argc, char **argv)
{
  Options  o;
  Gpu      g;
  FILE    *csv = NULL;
  int      ntotal, n = 0, errors = 0;
  Summary *sums;

  if (parse_options(argc, argv, &o)) return 2;
  if (!o.list && gpu_init(&g, &o)) return 1;
  bench_copy_gbs = o.list ? 0 : g.copy_gbs;
  if (!o.list && (mkdir_p(o.csv) || !(csv = fopen(o.csv, "w")))) {
    fprintf(stderr, "bench: cannot write %s: %s\n", o.csv, strerror(errno));
    return 1;
  }
  if (csv) csv_header(csv);
  ntotal = GenBenchNumSpecs + (o.rmat_set ? NUM_RMAT_PAIRS : 0) + o.nfiles;
  sums   = (Summary *)GenMalloc((size_t)ntotal * sizeof(Summary));
  for (int k = 0; k < ntotal; k++) {
    GenCSR   A, B, ops[4];
    int      two;
    Summary *s    = &sums[n];
    int      made = make_inputs(&o, k, &A, &B, &two, s);
    errors += made == 2;
    if (made) continue;
    memset(ops, 0, sizeof(ops));
    if (s->ptap) host_ptap_operands(&A, &B, ops);
    matrix_stats(&A, two ? &B : &A, s);
    if (s->ptap) s->rows = ops[0].nrows, s->products += host_products(&ops[0], &ops[1]);
    if (s->ptap)
      printf("%s: C %lld x %lld from A %lld x %lld (nnz %lld) and P %lld x %lld (nnz %lld), products %lld (read in "
             "%.2f s)\n",
             s->name, (long long)s->rows, (long long)s->cols, (long long)A.nrows, (long long)A.ncols,
             (long long)s->nnz_a, (long long)B.nrows, (long long)B.ncols, (long long)s->nnz_b, (long long)s->products,
             s->t_gen);
    else
      printf("%s: %lld x %lld, nnz(A) %lld, products %lld (generated in %.2f s)\n", s->name, (long long)s->rows,
             (long long)s->cols, (long long)s->nnz_a, (long long)s->products, s->t_gen);
    fflush(stdout);
    static const char *methods[M_COUNT] = {"ocean", "cusparse_alg1", "cusparse_alg2", "cusparse_alg3",
                                           "cusparse_reuse"};
    for (int m = 0; m < M_COUNT; m++) result_init(&s->res[m], methods[m]);
    if (o.list) list_matrix(&A, two ? &B : &A, s->ptap ? ops : NULL, s);
    else bench_matrix(&o, &g, &A, two ? &B : &A, s->ptap ? ops : NULL, s), csv_rows(csv, s);
    GenFree(&A);
    if (two) GenFree(&B);
    for (int q = 0; q < 4; q++) GenFree(&ops[q]);
    n++;
  }
  if (o.list) print_list(sums, n);
  else {
    print_summary(sums, n);
    print_ocean_phase_summary(sums, n);
    print_heavy_summary(sums, n);
    printf("CSV: %s\n", o.csv);
    fclose(csv);
    gpu_finalize(&g);
  }
  if (n == 0) fprintf(stderr, "bench: no matrix selected\n");
  free(sums);
  free(o.files);
  return n == 0 || errors > 0;
}
