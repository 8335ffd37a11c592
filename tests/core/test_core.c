/*
  test_core.c - tests of the PETSc-free core (ocean.h) against an independent reference SpGEMM.

  Usage: test_core [-v] [-small]
    -v      print what is measured (HLL accuracy, workflows, bins)
    -small  smaller matrices (for valgrind and sanitizers); accuracy thresholds are then only reported
  Prints nothing and returns 0 when every test passes; prints the failures and returns 1 otherwise.
*/
#include "ocean.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static int verbose, small;

static void Say(const char *fmt, ...)
{
  va_list ap;
  if (!verbose) return;
  va_start(ap, fmt);
  vprintf(fmt, ap);
  fflush(stdout);
  va_end(ap);
}

#define CHECK(cond, ...) \
  do { \
    if (!(cond)) { \
      fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__); \
      fprintf(stderr, "\n"); \
      return 1; \
    } \
  } while (0)

#define CALL(expr) \
  do { \
    OceanError call_err_ = (expr); \
    if (call_err_ != OCEAN_SUCCESS) { \
      fprintf(stderr, "FAIL %s:%d: %s returned %s: %s\n", __FILE__, __LINE__, #expr, OceanErrorString(call_err_), \
              OceanGetLastErrorMessage()); \
      return 1; \
    } \
  } while (0)

#define TRY(expr) \
  do { \
    if (expr) return 1; \
  } while (0)

/* ------------------------------------------------------------------------------------------------ matrices */

#include "gen.h" /* tests/common: the matrices, the reference product, the library's view */
#include "ref.h"
#include "view.h"
#include "core/rules.h" /* the sketch format and its solve, tested directly */

/* The plan's C against the reference: identical sorted structure, |c - r| <= 1e-12 (|A||B|)_ij. */
static int CompareC(OceanProduct prod, const GenCSR *R, const double *absval, const char *what)
{
  int64_t        m, n, nnz, i, t;
  const int64_t *rp;
  const int32_t *ci;
  const double  *v;

  CALL(OceanProductGetC(prod, &m, &n, &nnz, &rp, &ci, &v));
  CHECK(m == R->nrows && n == R->ncols, "%s: C is %lld x %lld, reference %lld x %lld", what, (long long)m, (long long)n,
        (long long)R->nrows, (long long)R->ncols);
  CHECK(nnz == GenNnz(R), "%s: nnz(C) %lld, reference %lld", what, (long long)nnz, (long long)GenNnz(R));
  for (i = 0; i < m; i++)
    CHECK(rp[i + 1] == R->rowptr[i + 1], "%s: row %lld ends at %lld, reference %lld", what, (long long)i,
          (long long)rp[i + 1], (long long)R->rowptr[i + 1]);
  for (t = 0; t < nnz; t++) {
    CHECK(ci[t] == R->colidx[t], "%s: entry %lld has column %d, reference %d", what, (long long)t, ci[t], R->colidx[t]);
    CHECK(fabs(v[t] - R->values[t]) <= 1e-12 * absval[t], "%s: entry %lld (column %d) is %.17g, reference %.17g", what,
          (long long)t, ci[t], v[t], R->values[t]);
  }
  return 0;
}

/* C = A*B through a fresh AB plan with the given options, compared with the reference; stats returned. */
static int CheckAB(OceanContext ctx, const OceanOptions *opts, const GenCSR *A, const GenCSR *B, const char *what,
                   OceanStats *stats)
{
  OceanProduct prod;
  OceanCSR     a = GenView(A), b = GenView(B);
  GenCSR       R;
  double      *absval;
  int64_t      i, sum = 0;

  if (opts) CALL(OceanContextSetOptions(ctx, opts));
  CALL(OceanProductCreate(ctx, OCEAN_PRODUCT_AB, &prod));
  CALL(OceanProductSymbolic(prod, &a, &b));
  GenRefMultiply(A, B, &R, &absval);
  TRY(CompareC(prod, &R, absval, what));
  CALL(OceanProductGetStats(prod, 0, stats));
  for (i = 0; i < OCEAN_NUM_BINS; i++) sum += stats->rows_per_bin[i];
  CHECK(sum == A->nrows, "%s: rows per bin sum to %lld, not %lld", what, (long long)sum, (long long)A->nrows);
  CHECK(stats->nnz_c == GenNnz(&R), "%s: stats nnz_c %lld", what, (long long)stats->nnz_c);
  Say("  %-34s %-11s ER %7.2f CR %6.2f (sampled %6.2f) nnz(C) %9lld overflow %lld retry %lld\n", what,
      OceanWorkflowName(stats->workflow), stats->er, stats->cr, stats->cr_sampled, (long long)stats->nnz_c,
      (long long)stats->overflow_rows, (long long)stats->symbolic_retry_rows);
  CALL(OceanProductDestroy(&prod));
  GenFree(&R);
  free(absval);
  return 0;
}

/* Every workflow forced, and auto: each C checked against the reference and all bitwise identical (the CPU
   accumulators add in product order).  NARROW forced where B is too wide must fail with OCEAN_ERR_ARG. */
static int CheckAllWorkflows(OceanContext ctx, const GenCSR *A, const GenCSR *B, const char *what)
{
  OceanOptions opts;
  OceanStats   stats;
  OceanCSR     a = GenView(A), b = GenView(B);
  double      *first = NULL;
  int64_t      nnz0  = 0;
  int          w;

  for (w = OCEAN_WORKFLOW_AUTO; w <= OCEAN_WORKFLOW_NARROW; w++) {
    OceanProduct  prod;
    const double *v;
    int64_t       nnz;
    char          name[96];
    OceanOptionsDefault(&opts);
    opts.workflow = (OceanWorkflow)w;
    snprintf(name, sizeof(name), "%s [%s]", what, OceanWorkflowName((OceanWorkflow)w));
    if (w == OCEAN_WORKFLOW_NARROW && (B->ncols > OCEAN_NARROW_MAX_COLUMNS ||
                                       (double)A->nrows * (double)B->ncols > (double)opts.narrow_max_entries)) {
      OceanError err;
      CALL(OceanContextSetOptions(ctx, &opts));
      CALL(OceanProductCreate(ctx, OCEAN_PRODUCT_AB, &prod));
      err = OceanProductSymbolic(prod, &a, &b);
      CHECK(err == OCEAN_ERR_ARG && strstr(OceanGetLastErrorMessage(), "narrow workflow was forced"),
            "%s: B with %lld columns accepted (%s: %s)", name, (long long)B->ncols, OceanErrorString(err),
            OceanGetLastErrorMessage());
      CALL(OceanProductDestroy(&prod));
      continue;
    }
    TRY(CheckAB(ctx, &opts, A, B, name, &stats));
    CHECK(w == OCEAN_WORKFLOW_AUTO || stats.workflow == (OceanWorkflow)w, "%s: took %s", name,
          OceanWorkflowName(stats.workflow));
    CHECK(stats.workflow_forced == (w != OCEAN_WORKFLOW_AUTO), "%s: workflow_forced %d", name, stats.workflow_forced);
    CALL(OceanProductCreate(ctx, OCEAN_PRODUCT_AB, &prod));
    CALL(OceanProductSymbolic(prod, &a, &b));
    CALL(OceanProductGetC(prod, NULL, NULL, &nnz, NULL, NULL, &v));
    if (!first) {
      nnz0  = nnz;
      first = GenCalloc((size_t)nnz * sizeof(double));
      memcpy(first, v, (size_t)nnz * sizeof(double));
    } else {
      CHECK(nnz == nnz0 && !memcmp(first, v, (size_t)nnz * sizeof(double)),
            "%s: values differ from the auto workflow's", name);
    }
    CALL(OceanProductDestroy(&prod));
  }
  free(first);
  OceanOptionsDefault(&opts);
  CALL(OceanContextSetOptions(ctx, &opts));
  return 0;
}

/* ------------------------------------------------------------------------------------------------ tests */

static int TestBins(void)
{
  OceanContext       ctx, ctx48;
  OceanDeviceProfile prof;
  OceanBinConfig     c, c48;
  OceanOptions       opts;
  int                b, count = -1;

  CALL(OceanContextCreate(OCEAN_BACKEND_CPU, NULL, &ctx));
  for (b = OCEAN_BIN_N0; b <= OCEAN_BIN_N4; b++) {
    CALL(OceanContextGetBinConfig(ctx, (OceanBin)b, &c));
    CHECK(c.smem_bytes == (int64_t)4096 << (b - OCEAN_BIN_N0) && c.threads == 64 << (b - OCEAN_BIN_N0),
          "bin %s: %lld bytes, %d threads", OceanBinName((OceanBin)b), (long long)c.smem_bytes, c.threads);
    CHECK(c.hash_capacity == c.smem_bytes / 12 && c.hash_limit == (int64_t)(0.8 * (double)c.hash_capacity) &&
            c.dense_columns == c.smem_bytes * 8 / 65,
          "bin %s capacities", OceanBinName((OceanBin)b));
    CHECK(c.symbolic_hash_capacity == c.smem_bytes / 4 && c.symbolic_dense_columns == c.smem_bytes * 8,
          "bin %s symbolic capacities", OceanBinName((OceanBin)b));
  }
  CALL(OceanContextGetBinConfig(ctx, OCEAN_BIN_N4, &c));
  CHECK(c.hash_capacity == 5461 && c.hash_limit == 4368 && c.dense_columns == 8065, "N4: %lld %lld %lld",
        (long long)c.hash_capacity, (long long)c.hash_limit, (long long)c.dense_columns);
  CALL(OceanContextGetBinConfig(ctx, OCEAN_BIN_SHORT, &c));
  CHECK(c.rows_per_block == 8 && c.hash_capacity == 42 && c.hash_limit == 33 && c.smem_bytes == 4096 && c.threads == 64,
        "SHORT: %d rows, capacity %lld, limit %lld", c.rows_per_block, (long long)c.hash_capacity,
        (long long)c.hash_limit);
  CALL(OceanContextGetBinConfig(ctx, OCEAN_BIN_ESC4, &c));
  CHECK(c.threads == 64 && c.rows_per_block == 4 && c.max_products == 32 && c.smem_bytes == 4 * 32 * 12, "ESC4");
  CALL(OceanContextGetBinConfig(ctx, OCEAN_BIN_ESC2, &c));
  CHECK(c.threads == 64 && c.rows_per_block == 2 && c.max_products == 64 && c.smem_bytes == 2 * 64 * 12, "ESC2");
  CALL(OceanContextGetBinConfig(ctx, OCEAN_BIN_LONG, &c));
  CHECK(c.smem_bytes == 224 * 1024 && c.threads == 1024 && c.hash_capacity == 5461,
        "LONG: its bitmap may take the opt-in 227 KB less 3 KB; global hash tables at least N4's");
  CHECK(OceanContextGetBinConfig(ctx, OCEAN_NUM_BINS, &c) == OCEAN_ERR_ARG, "bin out of range accepted");

  /* a 48 KB SM: 24 KB for N4, and SHORT packs fewer rows so that a row still holds a warp */
  OceanDeviceProfileDefault(&prof);
  prof.smem_per_sm = prof.smem_per_block = 48 * 1024;
  CALL(OceanContextCreate(OCEAN_BACKEND_CPU, &prof, &ctx48));
  CALL(OceanContextGetBinConfig(ctx48, OCEAN_BIN_N4, &c48));
  CHECK(c48.smem_bytes == 24 * 1024 && c48.hash_capacity == 2048, "48 KB N4: %lld bytes", (long long)c48.smem_bytes);
  CALL(OceanContextGetBinConfig(ctx48, OCEAN_BIN_SHORT, &c48));
  CHECK(c48.rows_per_block == 2 && c48.hash_limit >= 32, "48 KB SHORT: %d rows per block, limit %lld",
        c48.rows_per_block, (long long)c48.hash_limit);
  Say("  H200 N4 %lld B/%d thr; 48 KB profile: N4 24 KB, SHORT %d rows/block, limit %lld\n", (long long)65536, 1024,
      c48.rows_per_block, (long long)c48.hash_limit);

  /* options move the bins too; bad options are refused */
  OceanOptionsDefault(&opts);
  opts.acc_smem_per_sm = 64 * 1024;
  CALL(OceanContextSetOptions(ctx, &opts));
  CALL(OceanContextGetBinConfig(ctx, OCEAN_BIN_N4, &c));
  CHECK(c.smem_bytes == 32 * 1024, "acc_smem_per_sm 64 KB gives N4 %lld bytes", (long long)c.smem_bytes);
  opts.hll_registers = 48;
  CHECK(OceanContextSetOptions(ctx, &opts) == OCEAN_ERR_ARG && strstr(OceanGetLastErrorMessage(), "48"),
        "48 registers accepted: %s", OceanGetLastErrorMessage());

  /* CUDA: a context where a device is present; elsewhere "not available", with a message */
  {
    OceanContext cu = (OceanContext)&count;
    CALL(OceanCudaDeviceCount(&count));
    int device = 0;
    /* the device index: checked for every backend; a CPU context has none */
    CHECK(OceanContextCreateOnDevice(OCEAN_BACKEND_CPU, -1, NULL, &cu) == OCEAN_ERR_ARG && cu == NULL &&
            strstr(OceanGetLastErrorMessage(), "-1"),
          "device -1 accepted: %s", OceanGetLastErrorMessage());
    CALL(OceanContextGetDevice(ctx, &device));
    CHECK(device == -1, "a CPU context reports device %d", device);
    CHECK(OceanContextCreateOnDevice(OCEAN_BACKEND_CUDA, count + 3, NULL, &cu) ==
              (count ? OCEAN_ERR_ARG : OCEAN_ERR_NOT_AVAILABLE) &&
            cu == NULL,
          "CUDA device %d of %d: %s", count + 3, count, OceanGetLastErrorMessage());
    if (count == 0) {
      CHECK(OceanContextCreate(OCEAN_BACKEND_CUDA, NULL, &cu) == OCEAN_ERR_NOT_AVAILABLE && cu == NULL,
            "CUDA context without a device");
      CHECK(strstr(OceanGetLastErrorMessage(), "CUDA") != NULL, "message: %s", OceanGetLastErrorMessage());
      CHECK(OceanCudaDeviceProfile(0, &prof) == OCEAN_ERR_NOT_AVAILABLE, "device profile without a device");
    } else {
      OceanBackend backend;
      CALL(OceanContextCreateOnDevice(OCEAN_BACKEND_CUDA, count - 1, NULL, &cu));
      CALL(OceanContextGetBackend(cu, &backend));
      CALL(OceanContextGetDevice(cu, &device));
      CHECK(backend == OCEAN_BACKEND_CUDA && device == count - 1, "CUDA context reports backend %d, device %d",
            (int)backend, device);
      CALL(OceanContextDestroy(&cu));
    }
  }
  CALL(OceanContextDestroy(&ctx));
  CALL(OceanContextDestroy(&ctx48));
  CHECK(ctx == NULL, "destroy does not clear the handle");
  return 0;
}

static int TestRandom(OceanContext ctx)
{
  GenCSR A, B;
  GenRandomRows(&A, small ? 300 : 1500, small ? 400 : 2000, 12, 0, 11, 0);
  GenRandomRows(&B, A.ncols, small ? 350 : 1800, 12, 0, 12, 0);
  TRY(CheckAllWorkflows(ctx, &A, &B, "random"));
  GenFree(&A);
  GenFree(&B);
  return 0;
}

static int TestRectangular(OceanContext ctx)
{
  GenCSR A, B;
  GenRandomRows(&A, 250, 700, 20, 0, 21, 0);
  GenRandomRows(&B, 700, 90, 6, 0, 22, 0);
  TRY(CheckAllWorkflows(ctx, &A, &B, "rectangular 250x700 * 700x90"));
  GenFree(&B);
  GenRandomRows(&B, 700, 5000, 30, 0, 23, 0);
  TRY(CheckAllWorkflows(ctx, &A, &B, "rectangular 250x700 * 700x5000"));
  GenFree(&A);
  GenFree(&B);
  return 0;
}

static int TestStencils(OceanContext ctx)
{
  GenCSR     L2, L3, E;
  OceanStats stats;
  int        n2 = small ? 24 : 64, n3 = small ? 8 : 14, ne = small ? 5 : 8;

  GenStencil(&L2, n2, n2, 1, 1, 0, GEN_VALUES_STREAM_DIAG, 31, 0);
  TRY(CheckAllWorkflows(ctx, &L2, &L2, "2D 5-point Laplacian squared"));
  TRY(CheckAB(ctx, NULL, &L2, &L2, "2D 5-point (auto)", &stats));
  CHECK(stats.workflow == OCEAN_WORKFLOW_UPPER_BOUND && stats.overflow_rows == 0 &&
          stats.allocated_entries >= stats.nnz_c,
        "2D Laplacian squared took %s", OceanWorkflowName(stats.workflow));
  GenStencil(&L3, n3, n3, n3, 1, 1, GEN_VALUES_STREAM_DIAG, 32, 0);
  TRY(CheckAllWorkflows(ctx, &L3, &L3, "3D 27-point Laplacian squared"));
  GenStencil(&E, ne, ne, ne, 3, 1, GEN_VALUES_STREAM_DIAG, 33, 0);
  TRY(CheckAllWorkflows(ctx, &E, &E, "elasticity 3-dof squared"));
  GenFree(&L2);
  GenFree(&L3);
  GenFree(&E);
  return 0;
}

static int TestRMAT(OceanContext ctx)
{
  GenCSR G;
  GenRmatStream(&G, small ? 9 : 11, 8, 41, 0);
  TRY(CheckAllWorkflows(ctx, &G, &G, "R-MAT squared"));
  GenFree(&G);
  return 0;
}

/* Empty matrices, empty rows, zero nonzeros, 1x1. */
static int TestEmpty(OceanContext ctx)
{
  OceanStats stats;
  GenCSR     Z, A, B, one, Y;
  int64_t    zero = 0;

  GenAlloc(&Z, 0, 0, 0, 0);
  TRY(CheckAllWorkflows(ctx, &Z, &Z, "0x0"));
  GenFree(&Z);
  GenAlloc(&Z, 0, 5, 0, 0); /* 0 x 5 times 5 x 3 */
  GenAlloc(&Y, 5, 3, 0, 0);
  TRY(CheckAllWorkflows(ctx, &Z, &Y, "0x5 * 5x3 (no nonzeros)"));
  GenFree(&Y);
  GenFree(&Z);
  GenAlloc(&Z, 4, 0, 0, 0); /* 4 x 0 times 0 x 6: a 4 x 6 zero matrix */
  GenAlloc(&Y, 0, 6, 0, 0);
  TRY(CheckAllWorkflows(ctx, &Z, &Y, "4x0 * 0x6"));
  GenFree(&Y);
  GenFree(&Z);
  GenRandomRows(&A, 200, 300, 8, 0, 51, 0);
  GenAlloc(&Z, 300, 100, 0, 0); /* B without nonzeros */
  TRY(CheckAllWorkflows(ctx, &A, &Z, "A * zero B"));
  GenFree(&Z);
  GenAlloc(&Z, 100, 200, 0, 0); /* A without nonzeros */
  TRY(CheckAllWorkflows(ctx, &Z, &A, "zero A * B"));
  CHECK(CheckAB(ctx, NULL, &Z, &A, "zero A * B", &stats) == 0 && stats.workflow == OCEAN_WORKFLOW_UPPER_BOUND &&
          stats.er == 0 && stats.cr == 0 && stats.nnz_c == 0,
        "zero A");
  CHECK(stats.rows_per_bin[OCEAN_BIN_EMPTY] == 100, "empty rows %lld", (long long)stats.rows_per_bin[OCEAN_BIN_EMPTY]);
  GenFree(&Z);
  GenFree(&A);
  GenRandomRows(&A, 300, 300, 10, 3, 52, 0); /* every third row empty */
  GenRandomRows(&B, 300, 400, 10, 4, 53, 0);
  TRY(CheckAllWorkflows(ctx, &A, &B, "empty rows"));
  GenFree(&A);
  GenFree(&B);
  GenAlloc(&one, 1, 1, 1, 0);
  one.rowptr[1] = 1;
  one.values[0] = 3.0;
  TRY(CheckAllWorkflows(ctx, &one, &one, "1x1"));
  GenFree(&one);
  { /* an empty matrix may come without row offsets */
    OceanCSR     e = {0, 0, NULL, NULL, NULL, 0, 0};
    OceanProduct prod;
    int64_t      m, nnz;
    CALL(OceanProductCreate(ctx, OCEAN_PRODUCT_AB, &prod));
    CALL(OceanProductSymbolic(prod, &e, &e));
    CALL(OceanProductGetC(prod, &m, NULL, &nnz, NULL, NULL, NULL));
    CHECK(m == 0 && nnz == 0, "0x0 without offsets");
    CALL(OceanCountRowNnz(&e, &e, &zero));
    CALL(OceanProductDestroy(&prod));
  }
  return 0;
}

/* A row of A with every column: a dense row of C over a narrow B (dense accumulator), a wide one (LONG, dense in global
   memory) and one too wide for LONG's bitmap (LONG, hash in global memory). */
static int TestDenseRow(OceanContext ctx)
{
  OceanOptions        opts;
  OceanProduct        prod;
  const OceanRowInfo *rows;
  int64_t             nrows, t;
  GenCSR              A, B, Bw, Bx, D;
  OceanBinConfig      lc;
  OceanStats          stats;
  OceanCSR            a, b;
  int                 k;

  GenRandomRows(&A, 300, 2000, 6, 0, 61, 0);
  GenAlloc(&D, A.nrows, A.ncols, GenNnz(&A) + A.ncols, 0); /* row 0 replaced by a full row */
  for (k = 0; k < A.ncols; k++) {
    D.colidx[k] = k;
    D.values[k] = GenRandValue();
  }
  D.rowptr[1] = A.ncols;
  for (t = 1; t <= A.nrows - 1; t++) D.rowptr[t + 1] = D.rowptr[t] + (A.rowptr[t + 1] - A.rowptr[t]);
  memcpy(D.colidx + D.rowptr[1], A.colidx + A.rowptr[1], (size_t)(GenNnz(&A) - A.rowptr[1]) * sizeof(int32_t));
  memcpy(D.values + D.rowptr[1], A.values + A.rowptr[1], (size_t)(GenNnz(&A) - A.rowptr[1]) * sizeof(double));
  GenRandomRows(&B, 2000, 3000, 5, 0, 62, 0);
  GenRandomRows(&Bw, 2000, 20000, 5, 0, 63, 0);
  CALL(OceanContextGetBinConfig(ctx, OCEAN_BIN_LONG, &lc));
  CHECK(lc.dense_columns == lc.smem_bytes * 8 && lc.symbolic_dense_columns == lc.dense_columns,
        "LONG's dense columns %lld for %lld bytes", (long long)lc.dense_columns, (long long)lc.smem_bytes);
  /* the H200 profile: the bitmap may take the opt-in 227 KB less 3 KB for the kernel's own shared memory (R-MAT scale
   * 20's 2^20 columns fit) */
  CHECK(lc.smem_bytes == 224 * 1024 && lc.dense_columns >= (1 << 20), "LONG's bitmap %lld bytes, %lld columns",
        (long long)lc.smem_bytes, (long long)lc.dense_columns);
  GenRandomRows(&Bx, 2000, lc.dense_columns + 100000, 5, 0, 64, 0);

  OceanOptionsDefault(&opts);
  opts.record_rows = 1;
  opts.workflow    = OCEAN_WORKFLOW_EXACT;
  CALL(OceanContextSetOptions(ctx, &opts));
  TRY(CheckAllWorkflows(ctx, &D, &B, "dense row, narrow B"));
  TRY(CheckAllWorkflows(ctx, &D, &Bw, "dense row, wide B"));
  TRY(CheckAllWorkflows(ctx, &D, &Bx, "dense row, B wider than LONG's bitmap"));
  opts.record_rows = 1;
  opts.workflow    = OCEAN_WORKFLOW_EXACT;
  opts.heavy       = OCEAN_HEAVY_OFF; /* the LONG route: auto may make a row of 10,000 products heavy */
  CALL(OceanContextSetOptions(ctx, &opts));
  CALL(OceanProductCreate(ctx, OCEAN_PRODUCT_AB, &prod));
  a = GenView(&D);
  b = GenView(&B);
  CALL(OceanProductSymbolic(prod, &a, &b));
  CALL(OceanProductGetRowInfo(prod, 0, &rows, &nrows));
  CHECK(rows[0].accumulator == OCEAN_ACC_DENSE, "dense row over 3000 columns went to %s/%s",
        OceanBinName((OceanBin)rows[0].bin), OceanAccumulatorName((OceanAccumulator)rows[0].accumulator));
  Say("  dense row, narrow B: %s/%s (nnz %lld)\n", OceanBinName((OceanBin)rows[0].bin),
      OceanAccumulatorName((OceanAccumulator)rows[0].accumulator), (long long)rows[0].nnz);
  b = GenView(&Bw);
  CALL(OceanProductSymbolic(prod, &a, &b));
  CALL(OceanProductGetRowInfo(prod, 0, &rows, &nrows));
  CHECK(rows[0].bin == OCEAN_BIN_LONG && rows[0].accumulator == OCEAN_ACC_GLOBAL_DENSE,
        "dense row over 20000 columns went to %s/%s", OceanBinName((OceanBin)rows[0].bin),
        OceanAccumulatorName((OceanAccumulator)rows[0].accumulator));
  CALL(OceanProductGetStats(prod, 0, &stats));
  CHECK(stats.global_rows >= 1 && stats.rows_per_bin[OCEAN_BIN_LONG] >= 1, "no LONG row");
  Say("  dense row, wide B: %s/%s (nnz %lld)\n", OceanBinName((OceanBin)rows[0].bin),
      OceanAccumulatorName((OceanAccumulator)rows[0].accumulator), (long long)rows[0].nnz);
  b = GenView(&Bx);
  CALL(OceanProductSymbolic(prod, &a, &b));
  CALL(OceanProductGetRowInfo(prod, 0, &rows, &nrows));
  CHECK(rows[0].bin == OCEAN_BIN_LONG && rows[0].accumulator == OCEAN_ACC_GLOBAL_HASH,
        "dense row over %lld columns went to %s/%s", (long long)Bx.ncols, OceanBinName((OceanBin)rows[0].bin),
        OceanAccumulatorName((OceanAccumulator)rows[0].accumulator));
  Say("  dense row, B wider than LONG's bitmap: %s/%s (nnz %lld)\n", OceanBinName((OceanBin)rows[0].bin),
      OceanAccumulatorName((OceanAccumulator)rows[0].accumulator), (long long)rows[0].nnz);
  CALL(OceanProductDestroy(&prod));
  OceanOptionsDefault(&opts);
  CALL(OceanContextSetOptions(ctx, &opts));
  GenFree(&A);
  GenFree(&D);
  GenFree(&B);
  GenFree(&Bw);
  GenFree(&Bx);
  return 0;
}

/* Rows with far more products than outputs (coarse Galerkin levels: thousands of products into a few dozen columns)
   move up to a bin with a bigger team, keeping their accumulator kind and slot; C is right on every workflow. */
static int CheckHeavyRows(OceanContext ctx, const GenCSR *A, const GenCSR *B, OceanBin expect_bin,
                          OceanAccumulator expect_acc, const char *what)
{
  OceanOptions        opts;
  OceanProduct        prod;
  const OceanRowInfo *rows;
  OceanCSR            a = GenView(A), b = GenView(B);
  int64_t             nrows, i, moved = 0;

  TRY(CheckAllWorkflows(ctx, A, B, what));
  OceanOptionsDefault(&opts);
  opts.record_rows = 1;
  opts.workflow    = OCEAN_WORKFLOW_UPPER_BOUND;
  CALL(OceanContextSetOptions(ctx, &opts));
  CALL(OceanProductCreate(ctx, OCEAN_PRODUCT_AB, &prod));
  CALL(OceanProductSymbolic(prod, &a, &b));
  CALL(OceanProductGetRowInfo(prod, 0, &rows, &nrows));
  for (i = 0; i < nrows; i++) {
    CHECK(rows[i].slot == rows[i].predicted, "%s, row %lld: slot %lld, its bound %lld (a promotion keeps the slot)",
          what, (long long)i, (long long)rows[i].slot, (long long)rows[i].predicted);
    moved += rows[i].bin == expect_bin && rows[i].accumulator == expect_acc;
  }
  CHECK(moved == nrows, "%s: %lld of %lld rows in %s/%s", what, (long long)moved, (long long)nrows,
        OceanBinName(expect_bin), OceanAccumulatorName(expect_acc));
  Say("  %s: every row in %s/%s\n", what, OceanBinName(expect_bin), OceanAccumulatorName(expect_acc));
  CALL(OceanProductDestroy(&prod));
  OceanOptionsDefault(&opts);
  CALL(OceanContextSetOptions(ctx, &opts));
  return 0;
}

static int TestHeavyRows(OceanContext ctx)
{
  OceanBinConfig n0;
  GenCSR         A, B40, B16;
  int            r = 0;

  int64_t i, k;

  CALL(OceanContextGetBinConfig(ctx, OCEAN_BIN_N0, &n0));
  /* every row of A full (2000 entries): each row's products are nnz(B), about 24,000 (12 per row of B), more than
     256 per thread of N0's 64 threads, fewer than N1's 128 take */
  GenAlloc(&A, 40, 2000, 40 * 2000, 0);
  GenRandSeed(131);
  for (i = 0; i < A.nrows; i++) {
    for (k = 0; k < A.ncols; k++) {
      A.colidx[i * A.ncols + k] = (int32_t)k;
      A.values[i * A.ncols + k] = GenRandValue();
    }
    A.rowptr[i + 1] = (i + 1) * A.ncols;
  }
  GenRandomRows(&B40, 2000, 40, 12, 0, 132, 0); /* 40 columns: dense in N0, moved to N1 */
  GenRandomRows(&B16, 2000, 16, 12, 0, 133, 0); /* 16 columns: a SHORT hash row, moved past N0 to N1 */
  CHECK(GenNnz(&B40) > 256 * 64 && GenNnz(&B40) <= 256 * 128 && GenNnz(&B16) > 256 * 64 && GenNnz(&B16) <= 256 * 128,
        "B has %lld and %lld nonzeros", (long long)GenNnz(&B40), (long long)GenNnz(&B16));
  CHECK(n0.threads == 64 && n0.dense_columns >= 40, "N0: %d threads, %lld dense columns (the H200 profile expected)",
        n0.threads, (long long)n0.dense_columns);
  if (CheckHeavyRows(ctx, &A, &B40, OCEAN_BIN_N1, OCEAN_ACC_DENSE, "heavy rows, 40 columns") ||
      CheckHeavyRows(ctx, &A, &B16, OCEAN_BIN_N1, OCEAN_ACC_HASH, "heavy rows, 16 columns"))
    r = 1;
  GenFree(&A);
  GenFree(&B40);
  GenFree(&B16);
  return r;
}

/* ------------------------------------------------------------------------------------------------ multisplit */

/* The multisplit's statistics recomputed by brute force from the chunk widths (a last-level chunk is `width`
   columns; each level above is chunks_per_level times wider, the top one at least the row): a chunk of at most tau
   elements, or of the last level, is summed (dense when it has more than tau); the others split again. */
typedef struct {
  int64_t rows, products, chunks, dense, moved;
  int     levels;
} RefHeavy;

static void RefHeavyChunks(const int32_t *cols, int64_t n, int l, const int64_t *widths, int nlevels, int64_t tau,
                           RefHeavy *h)
{
  int64_t  a, b;
  int32_t *sorted = GenMalloc((size_t)n * sizeof(int32_t));

  h->moved += n;
  if (l + 1 > h->levels) h->levels = l + 1;
  memcpy(sorted, cols, (size_t)n * sizeof(int32_t));
  for (a = 1; a < n; a++) { /* insertion sort by chunk only: the groups, not their order, matter */
    int32_t x = sorted[a];
    for (b = a; b > 0 && sorted[b - 1] / widths[l] > x / widths[l]; b--) sorted[b] = sorted[b - 1];
    sorted[b] = x;
  }
  for (a = 0; a < n; a = b) {
    for (b = a; b < n && sorted[b] / widths[l] == sorted[a] / widths[l]; b++) {}
    if (l + 1 == nlevels || b - a <= tau) {
      h->chunks++;
      h->dense += b - a > tau;
    } else RefHeavyChunks(sorted + a, b - a, l + 1, widths, nlevels, tau, h);
  }
  free(sorted);
}

/* Every row with more than min_products products (and more than ESC's 64) through the brute force. */
static void RefHeavyRows(const GenCSR *A, const GenCSR *B, int64_t min_products, int64_t tau, int64_t width,
                         int64_t per_level, RefHeavy *h)
{
  int64_t widths[64], top = 1, i;
  int     nlevels = 0;

  while (top < B->ncols) top *= 2;
  if (top < width) top = width;
  for (int64_t w = top / per_level;; w /= per_level) { /* the widths from the top down, the last one width */
    widths[nlevels++] = w > width ? w : width;
    if (w <= width) break;
  }
  memset(h, 0, sizeof(*h));
  for (i = 0; i < A->nrows; i++) {
    int64_t  q = 0, n = 0, t, u;
    int32_t *cols;
    for (t = A->rowptr[i]; t < A->rowptr[i + 1]; t++) q += B->rowptr[A->colidx[t] + 1] - B->rowptr[A->colidx[t]];
    if (q <= 64 || q <= min_products) continue;
    cols = GenMalloc((size_t)q * sizeof(int32_t));
    for (t = A->rowptr[i]; t < A->rowptr[i + 1]; t++)
      for (u = B->rowptr[A->colidx[t]]; u < B->rowptr[A->colidx[t] + 1]; u++) cols[n++] = B->colidx[u];
    h->rows++;
    h->products += q;
    RefHeavyChunks(cols, q, 0, widths, nlevels, tau, h);
    free(cols);
  }
}

/* C of each workflow with the given heavy options against the reference and bitwise against heavy rows off (a stable
   split sums every column in product order), the statistics against the brute force. */
static int CheckMultisplit(OceanContext ctx, const OceanOptions *base, const GenCSR *A, const GenCSR *B,
                           int64_t min_products, int64_t tau, const char *what, RefHeavy *ref)
{
  OceanOptions   opts = *base;
  OceanCSR       a = GenView(A), b = GenView(B);
  OceanBinConfig heavy;
  double        *off_values;
  int64_t        off_nnz;
  int            w;

  {
    OceanProduct  prod;
    const double *v;
    opts.heavy = OCEAN_HEAVY_OFF;
    CALL(OceanContextSetOptions(ctx, &opts));
    CALL(OceanProductCreate(ctx, OCEAN_PRODUCT_AB, &prod));
    CALL(OceanProductSymbolic(prod, &a, &b));
    CALL(OceanProductGetC(prod, NULL, NULL, &off_nnz, NULL, NULL, &v));
    off_values = GenMalloc((size_t)(off_nnz + 1) * sizeof(double));
    memcpy(off_values, v, (size_t)off_nnz * sizeof(double));
    CALL(OceanProductDestroy(&prod));
  }
  opts = *base;
  CALL(OceanContextSetOptions(ctx, &opts));
  CALL(OceanContextGetBinConfig(ctx, OCEAN_BIN_HEAVY, &heavy));
  RefHeavyRows(A, B, min_products, tau, heavy.dense_columns, heavy.chunks_per_level, ref);
  for (w = OCEAN_WORKFLOW_AUTO; w <= OCEAN_WORKFLOW_EXACT; w++) {
    OceanStats    stats;
    OceanProduct  prod;
    const double *v;
    int64_t       nnz;
    char          name[128];
    opts          = *base;
    opts.workflow = (OceanWorkflow)w;
    snprintf(name, sizeof(name), "%s [%s]", what, OceanWorkflowName((OceanWorkflow)w));
    TRY(CheckAB(ctx, &opts, A, B, name, &stats));
    CHECK(stats.heavy_rows == ref->rows && stats.heavy_products == ref->products && stats.heavy_chunks == ref->chunks &&
            stats.heavy_dense_chunks == ref->dense && stats.heavy_split_elements == ref->moved &&
            stats.heavy_levels == ref->levels && stats.rows_per_bin[OCEAN_BIN_HEAVY] == ref->rows,
          "%s: heavy rows %lld (in the bin %lld), products %lld, chunks %lld (dense %lld), moved %lld, levels %d; "
          "brute force %lld, %lld, %lld (%lld), %lld, %d",
          name, (long long)stats.heavy_rows, (long long)stats.rows_per_bin[OCEAN_BIN_HEAVY],
          (long long)stats.heavy_products, (long long)stats.heavy_chunks, (long long)stats.heavy_dense_chunks,
          (long long)stats.heavy_split_elements, stats.heavy_levels, (long long)ref->rows, (long long)ref->products,
          (long long)ref->chunks, (long long)ref->dense, (long long)ref->moved, ref->levels);
    CALL(OceanProductCreate(ctx, OCEAN_PRODUCT_AB, &prod));
    CALL(OceanProductSymbolic(prod, &a, &b));
    CALL(OceanProductGetC(prod, NULL, NULL, &nnz, NULL, NULL, &v));
    CHECK(nnz == off_nnz && !memcmp(v, off_values, (size_t)nnz * sizeof(double)),
          "%s: values differ from those without heavy rows", name);
    CALL(OceanProductDestroy(&prod));
  }
  Say("  %-44s heavy rows %lld, products %lld, chunks %lld (dense %lld), moved %lld, levels %d\n", what,
      (long long)ref->rows, (long long)ref->products, (long long)ref->chunks, (long long)ref->dense,
      (long long)ref->moved, ref->levels);
  free(off_values);
  OceanOptionsDefault(&opts);
  CALL(OceanContextSetOptions(ctx, &opts));
  return 0;
}

static int TestMultisplit(OceanContext ctx)
{
  OceanOptions   opts;
  OceanBinConfig heavy;
  OceanStats     stats;
  RefHeavy       ref;
  GenCSR         G, A, B;
  int64_t        i, k;
  OceanError     err;

  /* R-MAT squared with every row of more than 300 products heavy: chunks of 64 columns, 4 chunks per level from
     2^11 columns: 3 levels, rows heavy at one level and light at the next, empty chunks */
  GenRmatStream(&G, 11, 8, 57, 0); /* 2^11 columns: the levels below need them */
  OceanOptionsDefault(&opts);
  opts.heavy                  = OCEAN_HEAVY_MULTISPLIT;
  opts.heavy_threshold        = 300;
  opts.heavy_chunk_columns    = 64;
  opts.heavy_chunks_per_level = 4;
  TRY(CheckMultisplit(ctx, &opts, &G, &G, 300, 300, "R-MAT, 3 levels forced", &ref));
  CHECK(ref.rows > 0 && ref.levels == 3 && ref.chunks > ref.rows && ref.dense > 0 && ref.moved > ref.products,
        "R-MAT: %lld heavy rows, %d levels, %lld chunks (%lld dense): not the mix meant", (long long)ref.rows,
        ref.levels, (long long)ref.chunks, (long long)ref.dense);
  if (!small) {                      /* (-small, under valgrind: the three levels above cover the kernels' paths) */
    opts.heavy_chunks_per_level = 8; /* 2^11 / 64 = 32 chunks: 8 then 4 */
    TRY(CheckMultisplit(ctx, &opts, &G, &G, 300, 300, "R-MAT, 2 levels", &ref));
    CHECK(ref.levels == 2, "R-MAT: %d levels, 2 expected", ref.levels);
    opts.heavy_chunks_per_level = 64; /* one level of 32 chunks */
    TRY(CheckMultisplit(ctx, &opts, &G, &G, 300, 300, "R-MAT, 1 level", &ref));
    CHECK(ref.levels == 1 && ref.moved == ref.products, "R-MAT: %d levels, %lld moved", ref.levels,
          (long long)ref.moved);
  }

  /* auto with the H200 profile's parameters: a dense row of 2000 entries into B of 20,000 columns and 12 entries a row:
     24,000 products, too many for N4 (span and nonzeros) and more than tau: heavy in auto mode once its span passes
     heavy_min_span, 5 chunks of 4,096 columns; LONG below it */
  GenAlloc(&A, 3, 2000, 2000 + 2, 0);
  GenRandSeed(58);
  for (k = 0; k < 2000; k++) {
    A.colidx[k] = (int32_t)k;
    A.values[k] = GenRandValue();
  }
  A.rowptr[1]    = 2000;
  A.colidx[2000] = 5; /* two light rows */
  A.values[2000] = 1.5;
  A.rowptr[2]    = 2001;
  A.colidx[2001] = 7;
  A.values[2001] = -0.5;
  A.rowptr[3]    = 2002;
  GenRandomRows(&B, 2000, 20000, 12, 0, 59, 0);
  OceanOptionsDefault(&opts);
  CHECK(opts.heavy == OCEAN_HEAVY_AUTO && opts.heavy_min_span == (int64_t)1 << 15,
        "heavy rows are %s by default, spanning more than %lld columns", OceanHeavyModeName(opts.heavy),
        (long long)opts.heavy_min_span);
  CALL(OceanContextSetOptions(ctx, &opts));
  CALL(OceanContextGetBinConfig(ctx, OCEAN_BIN_HEAVY, &heavy));
  CHECK(heavy.dense_columns == 4096 && heavy.hash_limit < 24000 && heavy.max_products == 0 &&
          heavy.chunks_per_level >= 1024 && !heavy.takes_all && heavy.min_span == opts.heavy_min_span,
        "HEAVY on the H200 profile: %lld columns a chunk, least products %lld (auto: none), tau %lld, %lld chunks a "
        "level, rows spanning more than %lld columns",
        (long long)heavy.dense_columns, (long long)heavy.max_products, (long long)heavy.hash_limit,
        (long long)heavy.chunks_per_level, (long long)heavy.min_span);
  opts.heavy_min_span = 0;
  TRY(CheckMultisplit(ctx, &opts, &A, &B, 0, heavy.hash_limit, "dense row, auto", &ref));
  CHECK(ref.rows == 1 && ref.levels == 1 && ref.chunks == 5, "dense row: %lld heavy rows, %d levels, %lld chunks",
        (long long)ref.rows, ref.levels, (long long)ref.chunks);
  { /* a row of 600 entries: about 7,200 products, fewer than tau, about 6,000 nonzeros over 20,000 columns, too many
       for N4: LONG's, so heavy in auto mode; LONG when a threshold of tau is given */
    GenCSR        A6;
    const int64_t factor = opts.bound_factor;
    GenAlloc(&A6, 3, 2000, 600 + 2, 0);
    for (k = 0; k < 600; k++) {
      A6.colidx[k] = (int32_t)(3 * k);
      A6.values[k] = GenRandValue();
    }
    A6.rowptr[1]   = 600;
    A6.colidx[600] = 5;
    A6.values[600] = 1.5;
    A6.rowptr[2]   = 601;
    A6.colidx[601] = 7;
    A6.values[601] = -0.5;
    A6.rowptr[3]   = 602;
    TRY(CheckMultisplit(ctx, &opts, &A6, &B, 0, heavy.hash_limit, "row below tau, auto", &ref));
    CHECK(ref.rows == 1 && ref.products > 6000 && ref.products < heavy.hash_limit,
          "row below tau: %lld heavy rows of %lld products (tau %lld)", (long long)ref.rows, (long long)ref.products,
          (long long)heavy.hash_limit);
    opts.heavy_threshold = heavy.hash_limit;
    opts.bound_factor    = 0; /* routed by its bound, not by its likely size (96): the global path */
    TRY(CheckAB(ctx, &opts, &A6, &B, "row below tau, auto with the threshold tau", &stats));
    CHECK(stats.heavy_rows == 0 && stats.global_rows == 1, "auto, threshold tau: %lld heavy rows, %lld global",
          (long long)stats.heavy_rows, (long long)stats.global_rows);
    opts.heavy_threshold = 0;
    opts.bound_factor    = factor;
    GenFree(&A6);
  }
  { /* rows of 400 and 300 entries of A over a B whose rows hold 12 columns 25,000 apart (300 patterns): 4,800 and
       3,600 products, 720 nonzeros, which a shared hash holds (N4's holds 4,368), over about 275,000 columns; the
       numeric pass takes the first (more than OCEAN_HEAVY_EARLY_PRODUCTS products, wider than heavy_min_span) to
       HEAVY in auto mode, whatever its prediction, not the second, and neither with a threshold given */
    GenCSR B7;
    GenAlloc(&B7, 2000, 300000, 2000 * 12, 0);
    for (k = 0; k < 2000; k++) {
      for (int j = 0; j < 12; j++) {
        B7.colidx[12 * k + j] = (int32_t)(25000 * j + k % 300);
        B7.values[12 * k + j] = GenRandValue();
      }
      B7.rowptr[k + 1] = 12 * (k + 1);
    }
    for (int len = 400; len >= 300; len -= 100) {
      GenCSR    A7;
      const int heavy_row = len == 400;
      char      what[96];
      GenAlloc(&A7, 2, 2000, len + 1, 0);
      for (k = 0; k < len; k++) {
        A7.colidx[k] = (int32_t)(5 * k);
        A7.values[k] = GenRandValue();
      }
      A7.rowptr[1]   = len;
      A7.colidx[len] = 9;
      A7.values[len] = 0.25;
      A7.rowptr[2]   = len + 1;
      snprintf(what, sizeof(what), "row of %d entries, 720 nonzeros over 275,000 columns, auto", len);
      opts.heavy_min_span = (int64_t)1 << 15;
      TRY(CheckAB(ctx, &opts, &A7, &B7, what, &stats));
      CHECK(stats.heavy_rows == heavy_row && stats.products == 12 * (len + 1) && stats.nnz_c == 720 + 12,
            "%s: %lld heavy rows, %lld products, %lld nonzeros", what, (long long)stats.heavy_rows,
            (long long)stats.products, (long long)stats.nnz_c);
      if (heavy_row) TRY(CheckMultisplit(ctx, &opts, &A7, &B7, 0, heavy.hash_limit, what, &ref));
      opts.heavy_threshold = heavy.hash_limit;
      snprintf(what, sizeof(what), "row of %d entries, 720 nonzeros, auto with the threshold tau", len);
      TRY(CheckAB(ctx, &opts, &A7, &B7, what, &stats));
      CHECK(stats.heavy_rows == 0, "%s: %lld heavy rows", what, (long long)stats.heavy_rows);
      opts.heavy_threshold = 0;
      opts.heavy_min_span  = 0;
      GenFree(&A7);
    }
    GenFree(&B7);
  }
  opts.heavy_min_span = 20000; /* the row spans fewer columns: LONG */
  opts.bound_factor   = 0;     /* routed by its bound: the global path (here and with heavy off below) */
  TRY(CheckAB(ctx, &opts, &A, &B, "dense row, auto, narrower than heavy_min_span", &stats));
  CHECK(stats.heavy_rows == 0 && stats.rows_per_bin[OCEAN_BIN_HEAVY] == 0 && stats.global_rows == 1,
        "auto, span below heavy_min_span: %lld heavy rows, %lld global", (long long)stats.heavy_rows,
        (long long)stats.global_rows);
  opts.heavy_min_span = (int64_t)1 << 15;
  opts.heavy          = OCEAN_HEAVY_OFF;
  TRY(CheckAB(ctx, &opts, &A, &B, "dense row, heavy off", &stats));
  CHECK(stats.heavy_rows == 0 && stats.rows_per_bin[OCEAN_BIN_HEAVY] == 0 && stats.global_rows == 1,
        "heavy off: %lld heavy rows, %lld global", (long long)stats.heavy_rows, (long long)stats.global_rows);
  /* by its likely size (8 x its longest B row of 12) into a shared table it overflows: computed again by its count */
  opts.bound_factor = 8;
  TRY(CheckAB(ctx, &opts, &A, &B, "dense row, heavy off, bound factor 8", &stats));
  CHECK(stats.bound_factor == 8 && stats.overflow_rows == 1 && stats.global_rows == 0,
        "heavy off, bound factor 8: factor %lld, %lld overflow rows, %lld global", (long long)stats.bound_factor,
        (long long)stats.overflow_rows, (long long)stats.global_rows);

  /* options the kernels cannot take */
  for (i = 0; i < 5; i++) {
    OceanOptionsDefault(&opts);
    if (i == 4) opts.heavy_min_span = -1;
    if (i == 0) opts.heavy_chunk_columns = 48;
    if (i == 1) opts.heavy_chunk_columns = (int64_t)1 << 20;
    if (i == 2) opts.heavy_chunks_per_level = 3;
    if (i == 3) opts.heavy = (OceanHeavyMode)7;
    err = OceanContextSetOptions(ctx, &opts);
    CHECK(err == OCEAN_ERR_ARG && strstr(OceanGetLastErrorMessage(), "heavy"), "heavy option %lld accepted (%s)",
          (long long)i, OceanGetLastErrorMessage());
  }
  OceanOptionsDefault(&opts);
  CALL(OceanContextSetOptions(ctx, &opts));
  GenFree(&G);
  GenFree(&A);
  GenFree(&B);
  return 0;
}

/* Rows given in any order give the sorted C of the sorted operands. */
static int TestUnsorted(OceanContext ctx)
{
  GenCSR A, B;
  GenStencil(&A, 6, 6, 6, 3, 1, GEN_VALUES_STREAM_DIAG, 71, 0);
  GenRandomRows(&B, A.ncols, 900, 15, 0, 72, 0);
  GenShuffleRows(&A, 73);
  GenShuffleRows(&B, 74);
  TRY(CheckAllWorkflows(ctx, &A, &B, "unsorted rows"));
  GenFree(&A);
  GenFree(&B);
  return 0;
}

/* Estimates made far too small: rows overflow, the fallback recomputes them, C stays exact. */
static int TestOverflow(OceanContext ctx)
{
  OceanOptions        opts;
  OceanStats          stats;
  OceanProduct        prod;
  const OceanRowInfo *rows;
  int64_t             nrows, i, over = 0;
  GenCSR              E;
  OceanCSR            e;

  GenStencil(&E, small ? 6 : 8, small ? 6 : 8, small ? 6 : 8, 3, 1, GEN_VALUES_STREAM_DIAG, 81, 0);
  OceanOptionsDefault(&opts);
  opts.workflow             = OCEAN_WORKFLOW_ESTIMATE;
  opts.hll_registers        = 16;
  opts.estimate_coefficient = 0.1;
  opts.record_rows          = 1;
  TRY(CheckAB(ctx, &opts, &E, &E, "elasticity, coefficient 0.1", &stats));
  CHECK(stats.workflow == OCEAN_WORKFLOW_ESTIMATE && stats.overflow_rows > 0 && stats.hll_registers == 16,
        "overflow rows %lld", (long long)stats.overflow_rows);
  CALL(OceanProductCreate(ctx, OCEAN_PRODUCT_AB, &prod));
  e = GenView(&E);
  CALL(OceanProductSymbolic(prod, &e, &e));
  CALL(OceanProductGetRowInfo(prod, 0, &rows, &nrows));
  for (i = 0; i < nrows; i++) {
    CHECK(!rows[i].overflowed == (rows[i].nnz <= rows[i].slot), "row %lld: nnz %lld, slot %lld, overflowed %d",
          (long long)i, (long long)rows[i].nnz, (long long)rows[i].slot, rows[i].overflowed);
    over += rows[i].overflowed;
  }
  CHECK(over == stats.overflow_rows, "row records count %lld overflows, stats %lld", (long long)over,
        (long long)stats.overflow_rows);
  Say("  coefficient 0.1, 16 registers: %lld of %lld rows overflowed and were recomputed\n", (long long)over,
      (long long)nrows);
  CALL(OceanProductDestroy(&prod));
  OceanOptionsDefault(&opts);
  CALL(OceanContextSetOptions(ctx, &opts));
  GenFree(&E);
  return 0;
}

/* The paper's workflow choices, and sketch reuse. */
static int TestStats(OceanContext ctx)
{
  OceanStats   stats, s2;
  OceanProduct p1, p2;
  OceanOptions opts;
  GenCSR       L, E, R, B, A2;
  OceanCSR     b, a2;
  int64_t      built0, reused0, built, reused;

  /* the paper's choices on matrices this small: without the small-product rule, checked after them; the selection's
     own (the GPU's), without the CPU backend's one-pass exact in place of the estimate, checked after them too */
  OceanOptionsDefault(&opts);
  opts.small_bound    = 0;
  opts.one_pass_exact = 0;
  CALL(OceanContextSetOptions(ctx, &opts));
  GenStencil(&L, 40, 40, 1, 1, 0, GEN_VALUES_STREAM_DIAG, 91, 0);
  TRY(CheckAB(ctx, NULL, &L, &L, "2D 5-point squared", &stats));
  CHECK(stats.workflow == OCEAN_WORKFLOW_UPPER_BOUND && !stats.workflow_forced && stats.hll_registers == 0,
        "2D Laplacian: %s", OceanWorkflowName(stats.workflow));

  GenStencil(&E, 8, 8, 8, 3, 1, GEN_VALUES_STREAM_DIAG, 92,
             0); /* at 6^3 its 648 columns would bound the rows tightly: not an estimate case */
  TRY(CheckAB(ctx, NULL, &E, &E, "elasticity squared", &stats));
  CHECK(stats.er >= 8 && stats.cr_sampled >= 8, "elasticity: ER %g, sampled CR %g", stats.er, stats.cr_sampled);
  CHECK(stats.workflow == OCEAN_WORKFLOW_ESTIMATE && stats.hll_registers == 64 && stats.estimate_coefficient == 1.5,
        "elasticity: %s with %d registers", OceanWorkflowName(stats.workflow), stats.hll_registers);
  CHECK(stats.bitmap_query && stats.packed_sort_keys && stats.cr_conservative >= 1 &&
          stats.cr_conservative <= stats.cr_mean,
        "elasticity stats");
  CHECK(stats.estimate_mean_rel_error > 0 && stats.estimate_mean_rel_error < 0.2, "elasticity: estimate error %g",
        stats.estimate_mean_rel_error);
  CHECK(fabs(stats.cr_sampled / stats.cr - 1) < 0.1, "sampled CR %g, exact %g", stats.cr_sampled, stats.cr);
  {
    OceanStats est      = stats;
    opts.one_pass_exact = 1; /* the default: where the selection takes the estimate, the CPU's exact in one pass */
    TRY(CheckAB(ctx, &opts, &E, &E, "elasticity squared, one-pass exact", &stats));
    CHECK(stats.workflow == OCEAN_WORKFLOW_EXACT && stats.switched_to_exact == 3 && stats.hll_registers == 0 &&
            stats.t_estimate == 0 && stats.t_symbolic == 0 && stats.allocated_entries == stats.nnz_c &&
            stats.nnz_c == est.nnz_c && stats.sampled_rows == est.sampled_rows,
          "elasticity, one-pass exact: %s (switched %d), %d registers, %lld of %lld entries allocated",
          OceanWorkflowName(stats.workflow), stats.switched_to_exact, stats.hll_registers,
          (long long)stats.allocated_entries, (long long)stats.nnz_c);
    opts.one_pass_exact = 0;
    CALL(OceanContextSetOptions(ctx, &opts));
  }

  GenRandomRows(&R, 2000, 2000, 10, 0, 93, 0);
  TRY(CheckAB(ctx, NULL, &R, &R, "random, low CR", &stats));
  CHECK(stats.workflow == OCEAN_WORKFLOW_EXACT && stats.cr < 2 && !stats.bitmap_query, "random: %s, CR %g",
        OceanWorkflowName(stats.workflow), stats.cr);
  /* the CPU backend's exact workflow makes C in one pass (no separate count: OceanCpuExactOnePass) */
  CHECK(stats.sampled_rows == 600 && stats.t_numeric > 0, "random: sampled %lld rows", (long long)stats.sampled_rows);
  CHECK(stats.allocated_entries == stats.nnz_c, "exact workflow allocated %lld entries for %lld",
        (long long)stats.allocated_entries, (long long)stats.nnz_c);

  /* a small product (its bounds within small_bound) takes the upper bound without a sample, whatever its ER and CR */
  OceanOptionsDefault(&opts);
  TRY(CheckAB(ctx, &opts, &E, &E, "elasticity squared, a small product", &stats));
  CHECK(stats.workflow == OCEAN_WORKFLOW_UPPER_BOUND && stats.sampled_rows == 0 &&
          stats.bound_nnz <= opts.small_bound && stats.allocated_entries == stats.bound_nnz && stats.t_symbolic == 0,
        "small elasticity: %s, %lld sampled rows, bound %lld, allocated %lld", OceanWorkflowName(stats.workflow),
        (long long)stats.sampled_rows, (long long)stats.bound_nnz, (long long)stats.allocated_entries);
  opts.small_bound    = stats.bound_nnz - 1; /* one entry less: the paper's estimate again */
  opts.one_pass_exact = 0;
  TRY(CheckAB(ctx, &opts, &E, &E, "elasticity squared, just above small_bound", &stats));
  CHECK(stats.workflow == OCEAN_WORKFLOW_ESTIMATE && stats.sampled_rows > 0, "elasticity above small_bound: %s",
        OceanWorkflowName(stats.workflow));

  /* narrow B (a coarse level's P: 24 columns): the upper bound is tight, taken without a sample; forced, it samples */
  {
    GenCSR N, W;
    GenRandomRows(&W, 700, 900, 120, 0, 97, 0);
    GenRandomRows(&N, 900, 24, 6, 0, 98, 0);
    OceanOptionsDefault(&opts);
    opts.narrow_max_columns = 0; /* the upper bound's own case: not the NARROW workflow */
    TRY(CheckAB(ctx, &opts, &W, &N, "wide A times narrow B", &stats));
    CHECK(stats.workflow == OCEAN_WORKFLOW_UPPER_BOUND && !stats.workflow_forced && stats.sampled_rows == 0 &&
            stats.bitmap_query,
          "narrow B: %s, %lld sampled rows", OceanWorkflowName(stats.workflow), (long long)stats.sampled_rows);
    CHECK(stats.bound_nnz <= 700 * 24 && stats.products >= 8 * stats.bound_nnz && stats.nnz_c <= stats.bound_nnz &&
            stats.allocated_entries == stats.bound_nnz,
          "narrow B: bound %lld for %lld products, nnz(C) %lld, allocated %lld", (long long)stats.bound_nnz,
          (long long)stats.products, (long long)stats.nnz_c, (long long)stats.allocated_entries);
    OceanOptionsDefault(&opts);
    opts.workflow = OCEAN_WORKFLOW_EXACT;
    TRY(CheckAB(ctx, &opts, &W, &N, "wide A times narrow B, exact", &stats));
    CHECK(stats.sampled_rows == 600, "narrow B, forced exact: %lld sampled rows", (long long)stats.sampled_rows);
    GenFree(&W);
    GenFree(&N);
  }

  /* the same B (structure id 77) under a second plan and another A: sketches come from the cache */
  GenRandomRows(&B, 1000, 1000, 40, 0, 94, 77);
  GenRandomRows(&A2, 800, 1000, 30, 0, 95, 78);
  OceanOptionsDefault(&opts);
  opts.workflow = OCEAN_WORKFLOW_ESTIMATE;
  CALL(OceanContextSetOptions(ctx, &opts));
  CALL(OceanContextGetSketchCounts(ctx, &built0, &reused0));
  b  = GenView(&B);
  a2 = GenView(&A2);
  CALL(OceanProductCreate(ctx, OCEAN_PRODUCT_AB, &p1));
  CALL(OceanProductCreate(ctx, OCEAN_PRODUCT_AB, &p2));
  {
    GenCSR   A1;
    OceanCSR a1;
    GenRandomRows(&A1, 500, 1000, 30, 0, 96, 79);
    a1 = GenView(&A1);
    CALL(OceanProductSymbolic(p1, &a1, &b));
    CALL(OceanProductGetStats(p1, 0, &stats));
    CALL(OceanProductSymbolic(p2, &a2, &b));
    CALL(OceanProductGetStats(p2, 0, &s2));
    GenFree(&A1);
  }
  CALL(OceanContextGetSketchCounts(ctx, &built, &reused));
  CHECK(!stats.sketches_reused && s2.sketches_reused && built == built0 + 1 && reused == reused0 + 1,
        "sketches: reused %d/%d, built %lld, reused %lld", stats.sketches_reused, s2.sketches_reused,
        (long long)(built - built0), (long long)(reused - reused0));
  CALL(OceanProductDestroy(&p1));
  CALL(OceanProductDestroy(&p2));
  OceanOptionsDefault(&opts);
  CALL(OceanContextSetOptions(ctx, &opts));
  GenFree(&L);
  GenFree(&E);
  GenFree(&R);
  GenFree(&B);
  GenFree(&A2);
  return 0;
}

static int TestAtB(OceanContext ctx)
{
  OceanProduct prod;
  OceanOptions opts;
  GenCSR       A, B, At, R, Bad;
  OceanCSR     a, b, bad;
  double      *absval;
  OceanStats   stats;
  int          w;

  GenRandomRows(&A, 600, 250, 8, 0, 101, 101);
  GenRandomRows(&B, 600, 400, 9, 0, 102, 102);
  GenTranspose(&A, &At);
  GenRefMultiply(&At, &B, &R, &absval);
  a = GenView(&A);
  b = GenView(&B);
  for (w = OCEAN_WORKFLOW_AUTO; w <= OCEAN_WORKFLOW_EXACT; w++) {
    OceanOptionsDefault(&opts);
    opts.workflow = (OceanWorkflow)w;
    CALL(OceanContextSetOptions(ctx, &opts));
    CALL(OceanProductCreate(ctx, OCEAN_PRODUCT_AtB, &prod));
    CALL(OceanProductSymbolic(prod, &a, &b));
    TRY(CompareC(prod, &R, absval, "AtB"));
    CALL(OceanProductGetStats(prod, 0, &stats));
    CHECK(stats.nrows == 250 && stats.ncols == 400 && stats.nnz_a == GenNnz(&A), "AtB stats");
    CALL(OceanProductDestroy(&prod));
  }
  OceanOptionsDefault(&opts);
  CALL(OceanContextSetOptions(ctx, &opts));

  /* new values of A, same structure: numeric refreshes the cached transpose's values */
  CALL(OceanProductCreate(ctx, OCEAN_PRODUCT_AtB, &prod));
  CALL(OceanProductSymbolic(prod, &a, &b));
  GenFillValues(&A, GEN_VALUES_STREAM, 103);
  GenFree(&At);
  GenFree(&R);
  free(absval);
  GenTranspose(&A, &At);
  GenRefMultiply(&At, &B, &R, &absval);
  CALL(OceanProductNumeric(prod, &a, &b));
  /* a CPU plan's calls return when done: nothing to wait for */
  CALL(OceanProductSync(prod));
  CHECK(OceanProductSync(NULL) == OCEAN_ERR_ARG, "OceanProductSync(NULL) accepted");
  TRY(CompareC(prod, &R, absval, "AtB numeric"));

  GenRandomRows(&Bad, 599, 400, 9, 0, 104, 0);
  bad = GenView(&Bad);
  CHECK(OceanProductSymbolic(prod, &a, &bad) == OCEAN_ERR_ARG && strstr(OceanGetLastErrorMessage(), "599"),
        "AtB size mismatch: %s", OceanGetLastErrorMessage());
  CALL(OceanProductDestroy(&prod));
  GenFree(&Bad);
  GenFree(&A);
  GenFree(&B);
  GenFree(&At);
  GenFree(&R);
  free(absval);
  return 0;
}

/* Rows whose CR is far below the conservative CR overflow their symbolic hash and are retried larger. */
static int TestSymbolicRetry(OceanContext ctx)
{
  OceanOptions opts;
  OceanStats   stats;
  GenCSR       A, B;
  int64_t      i, nz = 0, t;
  const int    nh = 600, nl = 30, per = 40;

  /* B: rows 0..999 each 50 columns of [0, 100); rows 1000..1999 each 50 columns anywhere in [0, 100000) */
  GenAlloc(&B, 2000, 100000, 2000 * 50, 0);
  GenRandSeed(191);
  for (i = 0; i < 2000; i++) {
    int32_t span = i < 1000 ? 100 : 100000, k;
    for (k = 0; k < 50; k++) {
      int32_t c;
      do {
        c = (int32_t)(GenRand64() % (uint64_t)span);
        for (t = B.rowptr[i]; t < nz && B.colidx[t] != c; t++) {}
      } while (t < nz);
      B.colidx[nz]   = c;
      B.values[nz++] = GenRandValue();
    }
    B.rowptr[i + 1] = nz;
  }
  /* A: nh rows over the clustered rows of B (CR about 20), nl rows over the scattered ones (CR about 1) */
  GenAlloc(&A, nh + nl, 2000, (nh + nl) * per, 0);
  for (i = 0, nz = 0; i < nh + nl; i++) {
    int32_t base = i < nh ? 0 : 1000, k;
    for (k = 0; k < per; k++) {
      A.colidx[nz]   = base + (int32_t)(k * 25 + (i * 7) % 25);
      A.values[nz++] = GenRandValue();
    }
    A.rowptr[i + 1] = nz;
  }
  OceanOptionsDefault(&opts);
  opts.workflow = OCEAN_WORKFLOW_EXACT;
  TRY(CheckAB(ctx, &opts, &A, &B, "mixed CR, exact", &stats));
  CHECK(stats.cr_conservative > 4 && stats.symbolic_retry_rows > 0 && stats.symbolic_retry_rows <= nl,
        "conservative CR %g, retried rows %lld", stats.cr_conservative, (long long)stats.symbolic_retry_rows);
  Say("  conservative CR %.2f (mean %.2f, std %.2f): %lld rows retried\n", stats.cr_conservative, stats.cr_mean,
      stats.cr_std, (long long)stats.symbolic_retry_rows);
  { /* the one-pass exact workflow (no row can be heavy, the bounds within max_output_nnz) against the counting pass and
       the numeric pass (max_output_nnz at nnz(C), below the bounds' total): the same C bit for bit and the same
       decisions */
    OceanProduct   one, two;
    OceanCSR       a = GenView(&A), b = GenView(&B);
    OceanStats     s1, s2;
    int64_t        n1, n2;
    const int64_t *r1, *r2;
    const int32_t *c1, *c2;
    const double  *v1, *v2;
    CALL(OceanProductCreate(ctx, OCEAN_PRODUCT_AB, &one));
    CALL(OceanProductSymbolic(one, &a, &b));
    CALL(OceanProductGetC(one, NULL, NULL, &n1, NULL, NULL, NULL));
    opts.max_output_nnz = n1;
    CALL(OceanContextSetOptions(ctx, &opts));
    CALL(OceanProductCreate(ctx, OCEAN_PRODUCT_AB, &two));
    CALL(OceanProductSymbolic(two, &a, &b));
    CALL(OceanProductGetStats(one, 0, &s1));
    CALL(OceanProductGetStats(two, 0, &s2));
    CHECK(s1.t_symbolic == 0 && s2.t_symbolic > 0, "exact: one pass %g s counting, two passes %g s", s1.t_symbolic,
          s2.t_symbolic);
    CHECK(s1.symbolic_retry_rows == s2.symbolic_retry_rows && s1.allocated_entries == s2.allocated_entries &&
            !memcmp(s1.rows_per_bin, s2.rows_per_bin, sizeof(s1.rows_per_bin)) && s2.rows_per_bin[OCEAN_BIN_HEAVY] == 0,
          "exact: one pass retried %lld rows, two passes %lld", (long long)s1.symbolic_retry_rows,
          (long long)s2.symbolic_retry_rows);
    CALL(OceanProductGetC(one, NULL, NULL, &n1, &r1, &c1, &v1));
    CALL(OceanProductGetC(two, NULL, NULL, &n2, &r2, &c2, &v2));
    CHECK(n1 == n2 && !memcmp(r1, r2, (size_t)(A.nrows + 1) * sizeof(int64_t)) &&
            !memcmp(c1, c2, (size_t)n1 * sizeof(int32_t)) && !memcmp(v1, v2, (size_t)n1 * sizeof(double)),
          "exact: one pass and two passes differ (nnz %lld, %lld)", (long long)n1, (long long)n2);
    CALL(OceanProductDestroy(&one));
    CALL(OceanProductDestroy(&two));
  }
  OceanOptionsDefault(&opts);
  CALL(OceanContextSetOptions(ctx, &opts));
  GenFree(&A);
  GenFree(&B);
  return 0;
}

/* R = P^T (A P) with its tolerance scale |P^T| (|A||P|) per entry (*absval, malloc'd). */
static void RefPtAP(const GenCSR *A, const GenCSR *P, GenCSR *R, double **absval)
{
  GenCSR  Pt, AP, APabs, Ra;
  double *absap, *dummy;
  int64_t i, t, u;

  GenTranspose(P, &Pt);
  GenRefMultiply(A, P, &AP, &absap);
  GenRefMultiply(&Pt, &AP, R, absval);
  GenCopy(&AP, &APabs);
  memcpy(APabs.values, absap, (size_t)GenNnz(&AP) * sizeof(double));
  for (t = 0; t < GenNnz(&Pt); t++) Pt.values[t] = fabs(Pt.values[t]);
  GenRefMultiply(&Pt, &APabs, &Ra, &dummy);
  for (i = 0; i < R->nrows; i++)
    for (t = R->rowptr[i], u = Ra.rowptr[i]; t < R->rowptr[i + 1]; t++, u++) (*absval)[t] = Ra.values[u];
  GenFree(&Ra);
  GenFree(&APabs);
  GenFree(&Pt);
  GenFree(&AP);
  free(dummy);
  free(absap);
}

/* PtAP of A and P in three rounds (symbolic; numeric with new values; symbolic with the same ids, which runs as
   numeric), each C against the reference; the plan is left in *prod. */
static int CheckPtAPRounds(OceanContext ctx, GenCSR *A, GenCSR *P, const char *what, OceanProduct *prod)
{
  OceanCSR a = GenView(A), p = GenView(P);
  double  *absval;
  int      ns, round;
  char     name[96];

  CALL(OceanProductCreate(ctx, OCEAN_PRODUCT_PtAP, prod));
  CALL(OceanProductGetNumStages(*prod, &ns));
  CHECK(ns == 2, "%s: PtAP has %d stages", what, ns);
  for (round = 0; round < 3; round++) {
    GenCSR R;
    if (round == 0) CALL(OceanProductSymbolic(*prod, &a, &p));
    else {
      GenFillValues(A, GEN_VALUES_STREAM, 113 + (uint64_t)round);
      GenFillValues(P, GEN_VALUES_STREAM, 117 + (uint64_t)round);
      if (round == 1) CALL(OceanProductNumeric(*prod, &a, &p));
      else CALL(OceanProductSymbolic(*prod, &a, &p)); /* same ids: runs as numeric */
    }
    RefPtAP(A, P, &R, &absval);
    snprintf(name, sizeof(name), "%s%s", what, round == 0 ? "" : " reuse");
    TRY(CompareC(*prod, &R, absval, name));
    GenFree(&R);
    free(absval);
  }
  return 0;
}

static int TestPtAP(OceanContext ctx)
{
  OceanProduct prod;
  GenCSR       A, P;
  OceanCSR     a;
  OceanStats   s0, s1;
  int          n = small ? 6 : 9;

  GenStencil(&A, n, n, n, 3, 1, GEN_VALUES_STREAM_DIAG, 111, 111);
  GenInterpolation(&P, A.nrows, A.nrows / 8, 112, 112);
  a = GenView(&A);
  TRY(CheckPtAPRounds(ctx, &A, &P, "PtAP", &prod));
  CALL(OceanProductGetStats(prod, 0, &s0));
  CALL(OceanProductGetStats(prod, 1, &s1));
  CHECK(s0.symbolic_calls == 1 && s0.numeric_calls == 2 && s1.symbolic_calls == 1 && s1.numeric_calls == 2,
        "calls: stage 0 %lld/%lld, stage 1 %lld/%lld", (long long)s0.symbolic_calls, (long long)s0.numeric_calls,
        (long long)s1.symbolic_calls, (long long)s1.numeric_calls);
  CHECK(s0.nrows == A.nrows && s0.ncols == P.ncols && s1.nrows == P.ncols && s1.ncols == P.ncols, "PtAP stage sizes");
  Say("  PtAP: stage 0 %s (nnz %lld), stage 1 %s (nnz %lld)\n", OceanWorkflowName(s0.workflow), (long long)s0.nnz_c,
      OceanWorkflowName(s1.workflow), (long long)s1.nnz_c);
  {
    GenCSR   Bad;
    OceanCSR bad;
    GenRandomRows(&Bad, A.nrows + 1, 10, 2, 0, 119, 0);
    bad = GenView(&Bad);
    CHECK(OceanProductSymbolic(prod, &a, &bad) == OCEAN_ERR_ARG, "PtAP size mismatch accepted");
    GenFree(&Bad);
  }
  CALL(OceanProductDestroy(&prod));
  GenFree(&A);
  GenFree(&P);
  return 0;
}

/* The AtB plan's C against the reference P^T B. */
static int CompareAtB(OceanProduct atb, const GenCSR *P, const GenCSR *B, const char *what)
{
  GenCSR  Pt, R;
  double *absval;
  int     err;

  GenTranspose(P, &Pt);
  GenRefMultiply(&Pt, B, &R, &absval);
  err = CompareC(atb, &R, absval, what);
  GenFree(&Pt);
  GenFree(&R);
  free(absval);
  return err;
}

/* PtAP(A, P) and AtB(P, B) share P^T (PETSc's MPIAIJ route does both with P's local rows): one transpose made,
   values gathered once per new values id and on every call without one, each plan right after the other's numeric
   calls, after the other plan is gone and after P changes its structure; a P without a structure id is never shared. */
static int TestSharedTransposes(OceanContext ctx)
{
  OceanProduct ptap, atb;
  GenCSR       A, P, B, R, Q;
  OceanCSR     a, p, b, q;
  double      *absval;
  int64_t      built0, shared0, built, shared;
  int          round;

  GenStencil(&A, 6, 6, 6, 3, 1, GEN_VALUES_STREAM_DIAG, 301, 301);
  GenInterpolation(&P, A.nrows, A.nrows / 8, 302, 302);
  GenRandomRows(&B, A.nrows, 90, 5, 7, 303, 303);
  a = GenView(&A);
  p = GenView(&P);
  b = GenView(&B);
  CALL(OceanContextGetTransposeCounts(ctx, &built0, &shared0));
  CALL(OceanProductCreate(ctx, OCEAN_PRODUCT_PtAP, &ptap));
  CALL(OceanProductCreate(ctx, OCEAN_PRODUCT_AtB, &atb));
  for (round = 0; round < 4; round++) {
    /* round 0: symbolic; 1: new values, no values id; 2: new values with id 7; 3: the same id, so no new gather */
    if (round == 1 || round == 2) GenFillValues(&P, GEN_VALUES_STREAM, 304 + (uint64_t)round);
    p.values_id = round >= 2 ? 7 : 0;
    if (round == 0) {
      CALL(OceanProductSymbolic(ptap, &a, &p));
      CALL(OceanProductSymbolic(atb, &p, &b));
    } else {
      CALL(OceanProductNumeric(round == 3 ? atb : ptap, round == 3 ? &p : &a, round == 3 ? &b : &p));
      CALL(OceanProductNumeric(round == 3 ? ptap : atb, round == 3 ? &a : &p, round == 3 ? &p : &b));
    }
    RefPtAP(&A, &P, &R, &absval);
    TRY(CompareC(ptap, &R, absval, "shared transposes: PtAP"));
    GenFree(&R);
    free(absval);
    TRY(CompareAtB(atb, &P, &B, "shared transposes: AtB"));
  }
  CALL(OceanContextGetTransposeCounts(ctx, &built, &shared));
  CHECK(built == built0 + 1 && shared == shared0 + 1, "P^T made %lld times and shared %lld times, expected 1 and 1",
        (long long)(built - built0), (long long)(shared - shared0));

  /* the PtAP plan gone, the AtB plan keeps the transpose: new values (and id) still reach it */
  CALL(OceanProductDestroy(&ptap));
  GenFillValues(&P, GEN_VALUES_STREAM, 309);
  p.values_id = 8;
  CALL(OceanProductNumeric(atb, &p, &b));
  TRY(CompareAtB(atb, &P, &B, "shared transposes: AtB alone"));

  /* another structure of the same sizes: a transpose of its own; without a structure id: never shared */
  GenInterpolation(&Q, A.nrows, A.nrows / 8, 310, 310);
  q = GenView(&Q);
  CALL(OceanProductSymbolic(atb, &q, &b));
  q.structure_id = 0;
  CALL(OceanProductCreate(ctx, OCEAN_PRODUCT_PtAP, &ptap));
  CALL(OceanProductSymbolic(ptap, &a, &q));
  CALL(OceanContextGetTransposeCounts(ctx, &built, &shared));
  CHECK(built == built0 + 3 && shared == shared0 + 1, "after new structures: P^T made %lld times and shared %lld times",
        (long long)(built - built0), (long long)(shared - shared0));
  TRY(CompareAtB(atb, &Q, &B, "shared transposes: AtB of a new structure"));
  RefPtAP(&A, &Q, &R, &absval);
  TRY(CompareC(ptap, &R, absval, "shared transposes: PtAP without a structure id"));
  GenFree(&R);
  free(absval);
  CALL(OceanProductDestroy(&ptap));
  CALL(OceanProductDestroy(&atb));
  GenFree(&A);
  GenFree(&P);
  GenFree(&B);
  GenFree(&Q);
  return 0;
}

/* C in the caller's arrays (the PETSc layer's use): after OceanProductReleaseHostC the plan keeps C's row offsets only,
   OceanProductNumericInto writes new values into the caller's copy of C's structure (AB and PtAP, against the
   reference), OceanProductNumeric and the columns and values of OceanProductGetC are refused, a wrong size is an
   error, and a symbolic call with the same ids makes C anew.  A plan that kept C copies its values out. */
static int CheckInto(OceanProduct prod, const OceanCSR *a, const OceanCSR *b, const int32_t *cols, double *vals,
                     int64_t nnz, const GenCSR *R, const double *absval, const char *what)
{
  const int64_t *rp;
  int64_t        t;

  CALL(OceanProductNumericInto(prod, a, b, nnz, cols, vals));
  CALL(OceanProductGetC(prod, NULL, NULL, NULL, &rp, NULL, NULL));
  CHECK(nnz == GenNnz(R) && !memcmp(rp, R->rowptr, (size_t)(R->nrows + 1) * sizeof(int64_t)), "%s: structure", what);
  for (t = 0; t < nnz; t++)
    CHECK(cols[t] == R->colidx[t] && fabs(vals[t] - R->values[t]) <= 1e-12 * absval[t],
          "%s: entry %lld is %.17g (column %d), reference %.17g (column %d)", what, (long long)t, vals[t], cols[t],
          R->values[t], R->colidx[t]);
  return 0;
}

static int TestReleasedC(OceanContext ctx)
{
  GenCSR         A, P, R;
  OceanCSR       a, p;
  double        *absval, *vals;
  int32_t       *cols;
  const int32_t *ci;
  int64_t        nnz;
  int            type;

  GenStencil(&A, 6, 6, 6, 3, 1, GEN_VALUES_STREAM_DIAG, 321, 321);
  GenInterpolation(&P, A.nrows, A.nrows / 8, 322, 322);
  a = GenView(&A);
  p = GenView(&P);
  for (type = 0; type < 2; type++) {
    const char  *what = type ? "released C, PtAP" : "released C, AB";
    OceanProduct prod;
    int          release;
    for (release = 0; release < 2; release++) {
      CALL(OceanProductCreate(ctx, type ? OCEAN_PRODUCT_PtAP : OCEAN_PRODUCT_AB, &prod));
      CALL(OceanProductSymbolic(prod, &a, &p));
      CALL(OceanProductGetC(prod, NULL, NULL, &nnz, NULL, &ci, NULL));
      cols = (int32_t *)GenMalloc((size_t)(nnz ? nnz : 1) * sizeof(int32_t));
      vals = (double *)GenMalloc((size_t)(nnz ? nnz : 1) * sizeof(double));
      memcpy(cols, ci, (size_t)nnz * sizeof(int32_t));
      { /* the structure copied into the caller's arrays: the plan's */
        const int64_t *rp;
        int64_t        m, *rows;
        int32_t       *cols2 = (int32_t *)GenMalloc((size_t)(nnz ? nnz : 1) * sizeof(int32_t));
        CALL(OceanProductGetC(prod, &m, NULL, NULL, &rp, NULL, NULL));
        rows = (int64_t *)GenMalloc((size_t)(m + 1) * sizeof(int64_t));
        CALL(OceanProductGetCStructureInto(prod, rows, cols2));
        CHECK(!memcmp(rows, rp, (size_t)(m + 1) * sizeof(int64_t)) &&
                !memcmp(cols2, cols, (size_t)nnz * sizeof(int32_t)),
              "%s: OceanProductGetCStructureInto differs from OceanProductGetC", what);
        if (release) { /* the row offsets are kept, the columns not */
          CALL(OceanProductReleaseHostC(prod));
          CALL(OceanProductGetCStructureInto(prod, rows, NULL));
          CHECK(!memcmp(rows, rp, (size_t)(m + 1) * sizeof(int64_t)) &&
                  OceanProductGetCStructureInto(prod, NULL, cols2) == OCEAN_ERR_STATE,
                "%s: a released C's structure: row offsets not given, or columns given", what);
        }
        free(rows);
        free(cols2);
      }
      if (release) {
        const double *v;
        CHECK(OceanProductGetC(prod, NULL, NULL, NULL, NULL, &ci, NULL) == OCEAN_ERR_STATE &&
                OceanProductGetC(prod, NULL, NULL, NULL, NULL, NULL, &v) == OCEAN_ERR_STATE,
              "%s: the columns and values of a released C were given", what);
        CHECK(OceanProductNumeric(prod, &a, &p) == OCEAN_ERR_STATE, "%s: OceanProductNumeric ran", what);
        CHECK(OceanProductNumericInto(prod, &a, &p, nnz - 1, cols, vals) == OCEAN_ERR_ARG, "%s: a short C taken", what);
      }
      GenFillValues(&A, GEN_VALUES_STREAM, 323 + (uint64_t)release);
      GenFillValues(&P, GEN_VALUES_STREAM, 325 + (uint64_t)release);
      if (type) RefPtAP(&A, &P, &R, &absval);
      else GenRefMultiply(&A, &P, &R, &absval);
      TRY(CheckInto(prod, &a, &p, cols, vals, nnz, &R, absval, what));
      if (release) { /* the same ids again: a new symbolic phase makes C, which the plan holds again */
        CALL(OceanProductSymbolic(prod, &a, &p));
        TRY(CompareC(prod, &R, absval, what));
      }
      GenFree(&R);
      free(absval);
      free(cols);
      free(vals);
      CALL(OceanProductDestroy(&prod));
    }
  }
  GenFree(&A);
  GenFree(&P);
  return 0;
}

/*
  NARROW: taken automatically, without a sample, for B with few and well-filled columns (a coarse level's P), every
  row with products in its bin with the slot of its upper bound; not taken below the density, beyond the dense
  rows' entries or when disabled (forced beyond the entries: an error); forced on a sparse B and on 256 columns;
  PtAP with both stages narrow, numeric reuse included.
*/
static int TestNarrow(OceanContext ctx)
{
  OceanOptions        opts;
  OceanStats          stats, s1;
  OceanProduct        prod;
  const OceanRowInfo *rows;
  GenCSR              A, P, Ps, W, S;
  OceanCSR            a, p;
  int64_t             i, nrows, empty = 0;

  GenRandomRows(&A, 400, 300, 120, 7, 141, 141); /* every 7th row empty */
  GenRandomRows(&P, 300, 40, 16, 0, 142, 142);   /* 16 of 40 columns per row on average */
  for (i = 0; i < A.nrows; i++) empty += A.rowptr[i + 1] == A.rowptr[i];
  OceanOptionsDefault(&opts);
  opts.record_rows = 1;
  TRY(CheckAB(ctx, &opts, &A, &P, "coarse level A*P", &stats));
  CHECK(stats.workflow == OCEAN_WORKFLOW_NARROW && !stats.workflow_forced && stats.sampled_rows == 0 &&
          stats.hll_registers == 0,
        "coarse A*P: %s%s, %lld sampled rows", OceanWorkflowName(stats.workflow),
        stats.workflow_forced ? " (forced)" : "", (long long)stats.sampled_rows);
  CHECK(stats.rows_per_bin[OCEAN_BIN_NARROW] == A.nrows - empty && stats.rows_per_bin[OCEAN_BIN_EMPTY] == empty &&
          stats.dense_rows == A.nrows - empty && stats.overflow_rows == 0,
        "coarse A*P: %lld narrow and %lld empty rows (want %lld and %lld)",
        (long long)stats.rows_per_bin[OCEAN_BIN_NARROW], (long long)stats.rows_per_bin[OCEAN_BIN_EMPTY],
        (long long)(A.nrows - empty), (long long)empty);
  CHECK(stats.allocated_entries == stats.bound_nnz && stats.nnz_c <= stats.bound_nnz &&
          stats.bound_nnz <= A.nrows * P.ncols,
        "coarse A*P: bound %lld, allocated %lld, nnz(C) %lld", (long long)stats.bound_nnz,
        (long long)stats.allocated_entries, (long long)stats.nnz_c);
  a = GenView(&A);
  p = GenView(&P);
  CALL(OceanProductCreate(ctx, OCEAN_PRODUCT_AB, &prod));
  CALL(OceanProductSymbolic(prod, &a, &p));
  CALL(OceanProductGetRowInfo(prod, 0, &rows, &nrows));
  for (i = 0; i < nrows; i++) {
    const OceanRowInfo *r  = &rows[i];
    const int           ok = r->products ? r->bin == OCEAN_BIN_NARROW && r->accumulator == OCEAN_ACC_DENSE &&
                                   r->slot == r->predicted && r->nnz <= r->slot && r->nnz > 0
                                         : r->bin == OCEAN_BIN_EMPTY && r->nnz == 0;
    CHECK(ok && !r->overflowed && r->estimate == 0,
          "coarse A*P row %lld: bin %s, accumulator %s, products %lld, predicted %lld, slot %lld, nnz %lld",
          (long long)i, OceanBinName((OceanBin)r->bin), OceanAccumulatorName((OceanAccumulator)r->accumulator),
          (long long)r->products, (long long)r->predicted, (long long)r->slot, (long long)r->nnz);
  }
  CALL(OceanProductDestroy(&prod));

  /* not narrow: a sparse B, NARROW disabled, or dense rows beyond the entries (then forcing it is an error) */
  GenRandomRows(&Ps, 300, 40, 2, 0, 143, 143);
  OceanOptionsDefault(&opts);
  TRY(CheckAB(ctx, &opts, &A, &Ps, "coarse level, sparse P", &stats));
  CHECK(stats.workflow != OCEAN_WORKFLOW_NARROW, "sparse P (density %.3f) took NARROW",
        (double)GenNnz(&Ps) / (300.0 * 40.0));
  opts.narrow_max_columns = 0;
  TRY(CheckAB(ctx, &opts, &A, &P, "coarse level, NARROW disabled", &stats));
  CHECK(stats.workflow != OCEAN_WORKFLOW_NARROW, "narrow_max_columns 0: took NARROW");
  OceanOptionsDefault(&opts);
  opts.narrow_max_entries = A.nrows * P.ncols - 1;
  TRY(CheckAB(ctx, &opts, &A, &P, "coarse level, too many entries", &stats));
  CHECK(stats.workflow != OCEAN_WORKFLOW_NARROW, "rows(A) x columns(P) beyond narrow_max_entries: took NARROW");
  opts.workflow = OCEAN_WORKFLOW_NARROW;
  CALL(OceanContextSetOptions(ctx, &opts));
  CALL(OceanProductCreate(ctx, OCEAN_PRODUCT_AB, &prod));
  CHECK(OceanProductSymbolic(prod, &a, &p) == OCEAN_ERR_ARG && strstr(OceanGetLastErrorMessage(), "narrow_max_entries"),
        "forced NARROW beyond the entries accepted: %s", OceanGetLastErrorMessage());
  CALL(OceanProductDestroy(&prod));

  /* forced: on the sparse P, and on B with the most columns */
  OceanOptionsDefault(&opts);
  opts.workflow = OCEAN_WORKFLOW_NARROW;
  TRY(CheckAB(ctx, &opts, &A, &Ps, "coarse level, sparse P, forced narrow", &stats));
  CHECK(stats.workflow == OCEAN_WORKFLOW_NARROW && stats.workflow_forced, "forced NARROW on a sparse P: %s",
        OceanWorkflowName(stats.workflow));
  GenRandomRows(&W, 300, OCEAN_NARROW_MAX_COLUMNS, 60, 5, 144, 144);
  TRY(CheckAB(ctx, &opts, &A, &W, "B with 256 columns, forced narrow", &stats));
  CHECK(stats.workflow == OCEAN_WORKFLOW_NARROW, "256 columns: %s", OceanWorkflowName(stats.workflow));

  /* PtAP of a square operator and the narrow P: both stages NARROW, numeric reuse with new values */
  OceanOptionsDefault(&opts);
  CALL(OceanContextSetOptions(ctx, &opts));
  GenRandomRows(&S, 300, 300, 90, 11, 145, 145);
  TRY(CheckPtAPRounds(ctx, &S, &P, "coarse level PtAP", &prod));
  CALL(OceanProductGetStats(prod, 0, &stats));
  CALL(OceanProductGetStats(prod, 1, &s1));
  CHECK(stats.workflow == OCEAN_WORKFLOW_NARROW && s1.workflow == OCEAN_WORKFLOW_NARROW && stats.numeric_calls == 2 &&
          s1.numeric_calls == 2,
        "coarse PtAP: stages %s and %s, numeric calls %lld and %lld", OceanWorkflowName(stats.workflow),
        OceanWorkflowName(s1.workflow), (long long)stats.numeric_calls, (long long)s1.numeric_calls);
  CHECK(stats.rows_per_bin[OCEAN_BIN_NARROW] + stats.rows_per_bin[OCEAN_BIN_EMPTY] == S.nrows,
        "coarse PtAP: numeric reuse's bins");
  CALL(OceanProductDestroy(&prod));
  GenFree(&A);
  GenFree(&P);
  GenFree(&Ps);
  GenFree(&W);
  GenFree(&S);
  return 0;
}

/* Numeric-only reuse: new values give the reference's C; a new structure id is refused. */
static int TestReuse(OceanContext ctx)
{
  OceanProduct prod;
  GenCSR       A, B, R;
  OceanCSR     a, b;
  double      *absval;
  OceanStats   stats;
  int          w;

  for (w = OCEAN_WORKFLOW_UPPER_BOUND; w <= OCEAN_WORKFLOW_EXACT; w++) {
    OceanOptions opts;
    OceanOptionsDefault(&opts);
    opts.workflow = (OceanWorkflow)w;
    CALL(OceanContextSetOptions(ctx, &opts));
    GenStencil(&A, small ? 4 : 7, small ? 4 : 7, small ? 4 : 7, 3, 1, GEN_VALUES_STREAM_DIAG, 121, 121);
    GenRandomRows(&B, A.ncols, 1200, 20, 0, 122, 122);
    a = GenView(&A);
    b = GenView(&B);
    CALL(OceanProductCreate(ctx, OCEAN_PRODUCT_AB, &prod));
    CHECK(OceanProductNumeric(prod, &a, &b) == OCEAN_ERR_STATE, "numeric before symbolic accepted");
    CALL(OceanProductSymbolic(prod, &a, &b));
    GenFillValues(&A, GEN_VALUES_STREAM, 123);
    GenFillValues(&B, GEN_VALUES_STREAM, 124);
    CALL(OceanProductNumeric(prod, &a, &b));
    GenRefMultiply(&A, &B, &R, &absval);
    TRY(CompareC(prod, &R, absval, "numeric reuse"));
    CALL(OceanProductGetStats(prod, 0, &stats));
    CHECK(stats.numeric_calls == 1 && stats.symbolic_calls == 1 && stats.overflow_rows == 0 &&
            stats.allocated_entries == stats.nnz_c,
          "reuse stats");
    A.id = 999; /* another structure */
    a    = GenView(&A);
    CHECK(OceanProductNumeric(prod, &a, &b) == OCEAN_ERR_STATE && strstr(OceanGetLastErrorMessage(), "999"),
          "structure change accepted: %s", OceanGetLastErrorMessage());
    A.id = 0;
    a    = GenView(&A);
    CHECK(OceanProductNumeric(prod, &a, &b) == OCEAN_ERR_STATE, "structure id 0 accepted by numeric");
    CALL(OceanProductSymbolic(prod, &a, &b)); /* a full symbolic with id 0 works */
    TRY(CompareC(prod, &R, absval, "symbolic with id 0"));
    CALL(OceanProductDestroy(&prod));
    GenFree(&A);
    GenFree(&B);
    GenFree(&R);
    free(absval);
  }
  {
    OceanOptions opts;
    OceanOptionsDefault(&opts);
    CALL(OceanContextSetOptions(ctx, &opts));
  }
  /* a structure change under the same ids (a caller's bug) is caught: row 55 of a 10 x 10 Laplacian B gets column 0
     instead of 45, so row 55 of A*B has a product far outside its row of C */
  GenStencil(&A, 10, 10, 1, 1, 0, GEN_VALUES_STREAM_DIAG, 125, 125);
  GenCopy(&A, &B);
  B.id = 126;
  a    = GenView(&A);
  b    = GenView(&B);
  CALL(OceanProductCreate(ctx, OCEAN_PRODUCT_AB, &prod));
  CALL(OceanProductSymbolic(prod, &a, &b));
  CHECK(B.colidx[B.rowptr[55]] == 45, "row 55 of the Laplacian starts at column %d", (int)B.colidx[B.rowptr[55]]);
  B.colidx[B.rowptr[55]] = 0;
#ifdef _OPENMP
  const int nt = omp_get_max_threads();
  omp_set_num_threads(1); /* the refused row's scratch and the next product's rows on one thread's workspace */
#endif
  CHECK(OceanProductNumeric(prod, &a, &b) == OCEAN_ERR_STATE && strstr(OceanGetLastErrorMessage(), "structure"),
        "a product outside C's structure accepted: %s", OceanGetLastErrorMessage());
  CALL(OceanProductDestroy(&prod));
  /* nothing of the refused product is left in the workspace: with B restored, a new product's numeric-only pass
     (column 0, where the stray product went, is in rows 0-10 of C) matches the reference */
  B.colidx[B.rowptr[55]] = 45;
  B.id                   = 127;
  b                      = GenView(&B);
  CALL(OceanProductCreate(ctx, OCEAN_PRODUCT_AB, &prod));
  CALL(OceanProductSymbolic(prod, &a, &b));
  CALL(OceanProductNumeric(prod, &a, &b));
  {
    GenCSR  R;
    double *absval;
    GenRefMultiply(&A, &B, &R, &absval);
    TRY(CompareC(prod, &R, absval, "numeric-only after a refused structure"));
    GenFree(&R);
    free(absval);
  }
#ifdef _OPENMP
  omp_set_num_threads(nt);
#endif
  CALL(OceanProductDestroy(&prod));
  GenFree(&A);
  GenFree(&B);
  return 0;
}

/* max_output_nnz: over-allocation switches to exact; a C above the limit is refused before allocation. */
static int TestIndexOverflow(OceanContext ctx)
{
  OceanOptions opts;
  OceanProduct prod;
  OceanStats   stats;
  GenCSR       L, R;
  OceanCSR     l;
  double      *absval;
  int          w;

  GenStencil(&L, 30, 30, 1, 1, 0, GEN_VALUES_STREAM_DIAG, 131, 0);
  GenRefMultiply(&L, &L, &R, &absval);
  l = GenView(&L);
  OceanOptionsDefault(&opts);
  opts.max_output_nnz = GenNnz(&R); /* fits C, not the upper-bound slots */
  TRY(CheckAB(ctx, &opts, &L, &L, "max_output_nnz = nnz(C)", &stats));
  CHECK(stats.switched_to_exact && stats.workflow == OCEAN_WORKFLOW_EXACT && stats.allocated_entries == GenNnz(&R),
        "did not switch to exact");
  for (w = OCEAN_WORKFLOW_AUTO; w <= OCEAN_WORKFLOW_EXACT; w++) {
    OceanOptionsDefault(&opts);
    opts.workflow       = (OceanWorkflow)w;
    opts.max_output_nnz = GenNnz(&R) - 1;
    CALL(OceanContextSetOptions(ctx, &opts));
    CALL(OceanProductCreate(ctx, OCEAN_PRODUCT_AB, &prod));
    CHECK(OceanProductSymbolic(prod, &l, &l) == OCEAN_ERR_INDEX_OVERFLOW, "workflow %s: limit not enforced",
          OceanWorkflowName((OceanWorkflow)w));
    {
      char num[64];
      snprintf(num, sizeof(num), "%lld", (long long)GenNnz(&R));
      CHECK(strstr(OceanGetLastErrorMessage(), num) != NULL, "message does not name the count: %s",
            OceanGetLastErrorMessage());
    }
    CHECK(OceanProductGetC(prod, NULL, NULL, NULL, NULL, NULL, NULL) == OCEAN_ERR_STATE,
          "C available after a failed symbolic");
    CALL(OceanProductDestroy(&prod));
  }
  OceanOptionsDefault(&opts);
  CALL(OceanContextSetOptions(ctx, &opts));
  GenFree(&L);
  GenFree(&R);
  free(absval);
  return 0;
}

/* Another device profile routes differently but computes the same C. */
static int TestSmallProfile(void)
{
  OceanDeviceProfile prof;
  OceanContext       ctx;
  OceanStats         s48, sdef;
  OceanContext       def;
  GenCSR             E;
  int                b, differ = 0;

  OceanDeviceProfileDefault(&prof);
  snprintf(prof.name, sizeof(prof.name), "48 KB test device");
  prof.smem_per_sm = prof.smem_per_block = 48 * 1024;
  prof.max_threads_per_sm                = 1536;
  CALL(OceanContextCreate(OCEAN_BACKEND_CPU, &prof, &ctx));
  CALL(OceanContextCreate(OCEAN_BACKEND_CPU, NULL, &def));
  GenStencil(&E, small ? 4 : 6, small ? 4 : 6, small ? 4 : 6, 3, 1, GEN_VALUES_STREAM_DIAG, 141, 0);
  TRY(CheckAllWorkflows(ctx, &E, &E, "elasticity on 48 KB"));
  TRY(CheckAB(ctx, NULL, &E, &E, "elasticity on 48 KB (auto)", &s48));
  TRY(CheckAB(def, NULL, &E, &E, "elasticity on H200 (auto)", &sdef));
  for (b = 0; b < OCEAN_NUM_BINS; b++) differ += s48.rows_per_bin[b] != sdef.rows_per_bin[b];
  CHECK(differ, "the 48 KB profile routes exactly like the H200");
  CALL(OceanContextDestroy(&ctx));
  CALL(OceanContextDestroy(&def));
  GenFree(&E);
  return 0;
}

/* Argument errors name what is wrong. */
static int TestErrors(OceanContext ctx)
{
  OceanProduct prod;
  GenCSR       A, B;
  OceanCSR     a, b;

  GenRandomRows(&A, 30, 40, 4, 0, 151, 0);
  GenRandomRows(&B, 41, 50, 4, 0, 152, 0);
  a = GenView(&A);
  b = GenView(&B);
  CALL(OceanProductCreate(ctx, OCEAN_PRODUCT_AB, &prod));
  CHECK(OceanProductSymbolic(prod, &a, &b) == OCEAN_ERR_ARG && strstr(OceanGetLastErrorMessage(), "30 x 40") &&
          strstr(OceanGetLastErrorMessage(), "41 x 50"),
        "size mismatch: %s", OceanGetLastErrorMessage());
  B.nrows               = 40;
  B.rowptr[40]          = B.rowptr[40]; /* B is now 40 x 50 (its first 40 rows) */
  b                     = GenView(&B);
  A.colidx[A.rowptr[7]] = 40; /* out of range in row 7 */
  CHECK(OceanProductSymbolic(prod, &a, &b) == OCEAN_ERR_ARG && strstr(OceanGetLastErrorMessage(), "row 7"),
        "bad column: %s", OceanGetLastErrorMessage());
  A.colidx[A.rowptr[7]] = 0;
  CHECK(OceanProductSymbolic(prod, &a, NULL) == OCEAN_ERR_ARG, "NULL operand accepted");
  CHECK(OceanProductGetStats(prod, 1, NULL) == OCEAN_ERR_ARG, "NULL stats accepted");
  CHECK(strcmp(OceanErrorString(OCEAN_ERR_INDEX_OVERFLOW), OceanErrorString(OCEAN_ERR_STATE)) != 0, "error strings");
  CHECK(!strcmp(OceanPhaseName(OCEAN_PHASE_NUMERIC), "numeric") && !strcmp(OceanBinName(OCEAN_BIN_LONG), "long"),
        "names");
  CALL(OceanProductDestroy(&prod));
  GenFree(&A);
  GenFree(&B);
  return 0;
}

/* Same bits whatever the thread count; the 64-bit key-ptr sort for wide rows. */
static int TestDeterminism(OceanContext ctx)
{
#ifdef _OPENMP
  int           nt = omp_get_max_threads(), w;
  GenCSR        E;
  OceanCSR      e;
  const double *v;
  double       *v1;
  int64_t       nnz;

  GenStencil(&E, small ? 4 : 6, small ? 4 : 6, small ? 4 : 6, 3, 1, GEN_VALUES_STREAM_DIAG, 161, 0);
  e = GenView(&E);
  for (w = OCEAN_WORKFLOW_UPPER_BOUND; w <= OCEAN_WORKFLOW_EXACT; w++) {
    OceanOptions opts;
    OceanProduct p;
    OceanOptionsDefault(&opts);
    opts.workflow = (OceanWorkflow)w;
    CALL(OceanContextSetOptions(ctx, &opts));
    omp_set_num_threads(1);
    CALL(OceanProductCreate(ctx, OCEAN_PRODUCT_AB, &p));
    CALL(OceanProductSymbolic(p, &e, &e));
    CALL(OceanProductGetC(p, NULL, NULL, &nnz, NULL, NULL, &v));
    v1 = GenCalloc((size_t)nnz * sizeof(double));
    memcpy(v1, v, (size_t)nnz * sizeof(double));
    CALL(OceanProductDestroy(&p));
    omp_set_num_threads(nt > 1 ? nt : 2);
    CALL(OceanProductCreate(ctx, OCEAN_PRODUCT_AB, &p));
    CALL(OceanProductSymbolic(p, &e, &e));
    CALL(OceanProductGetC(p, NULL, NULL, &nnz, NULL, NULL, &v));
    CHECK(!memcmp(v1, v, (size_t)nnz * sizeof(double)), "%s: values depend on the thread count",
          OceanWorkflowName((OceanWorkflow)w));
    CALL(OceanProductDestroy(&p));
    free(v1);
  }
  omp_set_num_threads(nt);
  GenFree(&E);
#endif
  {
    OceanOptions opts;
    OceanStats   stats;
    GenCSR       A, B;
    OceanOptionsDefault(&opts);
    opts.workflow = OCEAN_WORKFLOW_EXACT;
    GenRandomRows(&A, small ? 8 : 40, 400, 60, 0, 162, 0);
    GenRandomRows(&B, 400, 1 << 22, 40, 0, 163, 0); /* 22-bit keys beside 12-13 bit table positions */
    TRY(CheckAB(ctx, &opts, &A, &B, "4M columns (64-bit key-ptr words)", &stats));
    CHECK(!stats.packed_sort_keys && stats.hash_rows > 0, "wide rows: packed_sort_keys %d", stats.packed_sort_keys);
    OceanOptionsDefault(&opts);
    CALL(OceanContextSetOptions(ctx, &opts));
    GenFree(&A);
    GenFree(&B);
  }
  return 0;
}

typedef struct {
  int    open[OCEAN_NUM_PHASES], begins[OCEAN_NUM_PHASES], bad;
  double flops[OCEAN_NUM_PHASES];
} PhaseLog;

static void PhaseRecord(void *user, OceanPhase phase, int begin, double flops)
{
  PhaseLog *log = (PhaseLog *)user;
  if (begin) {
    log->bad += log->open[phase];
    log->open[phase] = 1;
    log->begins[phase]++;
  } else {
    log->bad += !log->open[phase];
    log->open[phase] = 0;
    log->flops[phase] += flops;
  }
}

static int TestPhases(OceanContext ctx)
{
  PhaseLog     log;
  OceanProduct prod;
  OceanStats   stats;
  GenCSR       A, P;
  OceanCSR     a, p;
  int          i;

  memset(&log, 0, sizeof(log));
  GenStencil(&A, 5, 5, 5, 3, 1, GEN_VALUES_STREAM_DIAG, 171, 171);
  GenInterpolation(&P, A.nrows, A.nrows / 6, 172, 172);
  a = GenView(&A);
  p = GenView(&P);
  CALL(OceanContextSetPhaseCallback(ctx, PhaseRecord, &log));
  CALL(OceanProductCreate(ctx, OCEAN_PRODUCT_PtAP, &prod));
  CALL(OceanProductSymbolic(prod, &a, &p));
  CALL(OceanProductNumeric(prod, &a, &p));
  CALL(OceanContextSetPhaseCallback(ctx, NULL, NULL));
  for (i = 0; i < OCEAN_NUM_PHASES; i++) CHECK(!log.open[i], "phase %s left open", OceanPhaseName((OceanPhase)i));
  CHECK(!log.bad && log.begins[OCEAN_PHASE_ANALYSIS] == 2 && log.begins[OCEAN_PHASE_TRANSPOSE] == 2 &&
          log.begins[OCEAN_PHASE_NUMERIC] == 4,
        "phases: %d analysis, %d transpose, %d numeric", log.begins[OCEAN_PHASE_ANALYSIS],
        log.begins[OCEAN_PHASE_TRANSPOSE], log.begins[OCEAN_PHASE_NUMERIC]);
  {
    OceanStats s0;
    CALL(OceanProductGetStats(prod, 0, &s0));
    CALL(OceanProductGetStats(prod, 1, &stats));
    CHECK(log.flops[OCEAN_PHASE_NUMERIC] == 4.0 * (double)(s0.products + stats.products),
          "numeric flops %g, products %lld + %lld", log.flops[OCEAN_PHASE_NUMERIC], (long long)s0.products,
          (long long)stats.products);
  }
  CALL(OceanProductDestroy(&prod));
  GenFree(&A);
  GenFree(&P);
  return 0;
}

/* The root of the maximum-likelihood equation by plain bisection with the C library's expm1: the reference of
   OceanSketchSolveML's Newton steps and its expm1 built from squarings. */
static double ReferenceSolveML(double alpha, const int *beta, int k_lo, int k_hi, int q)
{
  double B = 0, Brho = 0, lo, hi;
  int    k, it;

  for (k = k_lo; k <= k_hi; k++) {
    B += beta[k];
    Brho += beta[k] * OceanSketchRho(k, q);
  }
  if (B == 0) return 0;
  lo = B / (alpha + 0.5 * Brho);
  hi = B / alpha;
  for (it = 0; it < 200 && hi - lo > 1e-15 * hi; it++) {
    double x = 0.5 * (lo + hi), g = -alpha;
    for (k = k_lo; k <= k_hi; k++) g += beta[k] * OceanSketchRho(k, q) / expm1(x * OceanSketchRho(k, q));
    if (g > 0) lo = x;
    else hi = x;
  }
  return 0.5 * (lo + hi);
}

/* OceanExpm1 against the C library's, and the estimate's solve against bisection, on sketches of 1 to 10^5
   random columns with 16 to 256 registers. */
static int TestHLLSolve(OceanContext ctx)
{
  double   x, worst = 0;
  uint64_t state = 12345;
  int      m, n, rep;

  for (x = 1e-20; x < 709; x *= 1.003) {
    double rel = fabs(OceanExpm1(x) - expm1(x)) / expm1(x);
    worst      = fmax(worst, rel);
  }
  CHECK(worst <= 2e-15, "OceanExpm1: relative error %.3g against expm1", worst);
  CHECK(OceanExpm1(0) == 0 && isinf(OceanExpm1(710)) && isinf(OceanExpm1(NAN)), "OceanExpm1(0, 710, NaN) = %g, %g, %g",
        OceanExpm1(0), OceanExpm1(710), OceanExpm1(NAN));
  worst = 0;
  for (m = 16; m <= 256; m *= 2) {
    const int log2m = OceanLog2Int(m), q = 64 - log2m;
    for (n = 1; n <= 100000; n = n < 10 ? n + 1 : n * 3 / 2) {
      for (rep = 0; rep < 4; rep++) {
        uint8_t sketch[OCEAN_HLL_MAX_REGISTERS] = {0};
        int     beta[66] = {0}, k_lo = q + 2, k_hi = 0, j, c;
        double  alpha = 0, got, ref;
        for (c = 0; c < n; c++) {
          state = state * 6364136223846793005ULL + 1442695040888963407ULL;
          OceanSketchInsert(sketch, log2m, (int32_t)(state >> 33));
        }
        /* the same alpha and beta as OceanSketchEstimateRegisters */
        for (j = 0; j < m; j++) {
          int r = sketch[j], u = r >> 2;
          if (!r) {
            alpha += 1.0;
            continue;
          }
          beta[u]++;
          if (u <= q) alpha += ldexp(1.0, -u);
          if (u >= 2) {
            if (r & 2) beta[u - 1]++;
            else alpha += OceanSketchRho(u - 1, q);
          }
          if (u >= 3) {
            if (r & 1) beta[u - 2]++;
            else alpha += OceanSketchRho(u - 2, q);
          }
          k_lo = (int)OceanMin64(k_lo, u >= 3 ? u - 2 : u >= 2 ? u - 1 : u);
          k_hi = (int)OceanMax64(k_hi, u);
        }
        got = OceanSketchSolveML(alpha, beta, k_lo, k_hi, q);
        ref = ReferenceSolveML(alpha, beta, k_lo, k_hi, q);
        CHECK(fabs(got - ref) <= 1e-10 * ref, "%d registers, %d columns: solve %.17g, bisection %.17g", m, n, got, ref);
        CHECK(m * got / (1.0 + OCEAN_SKETCH_ML_BIAS / m) == OceanSketchEstimateRegisters(sketch, m),
              "%d registers, %d columns: the estimate is not the solve's", m, n);
        worst = fmax(worst, fabs(got - ref) / ref);
      }
    }
  }
  Say("  ML solve: worst relative difference to bisection %.3g\n", worst);
  return 0;
}

/* Pooled mean relative error of the sketch estimates over rows with at least 64 nonzeros. */
static int MeasureEstimates(OceanContext ctx, const GenCSR *A, int registers, double *err, int64_t *rows)
{
  OceanCSR a   = GenView(A);
  double  *est = GenCalloc((size_t)A->nrows * sizeof(double));
  int64_t *nnz = GenCalloc((size_t)A->nrows * sizeof(int64_t)), i;
  double   sum = 0;

  CALL(OceanEstimateRowNnz(ctx, &a, &a, registers, est));
  CALL(OceanCountRowNnz(&a, &a, nnz));
  *rows = 0;
  for (i = 0; i < A->nrows; i++) {
    if (nnz[i] < 64) continue;
    sum += fabs(est[i] - (double)nnz[i]) / (double)nnz[i];
    (*rows)++;
  }
  *err = *rows ? sum / (double)*rows : 0;
  free(est);
  free(nnz);
  return 0;
}

/* Acceptance: mean relative error <= 0.15 with 32 registers and <= 0.12 with 64 on elasticity and R-MAT A*A. */
static int TestHLLAccuracy(OceanContext ctx)
{
  GenCSR   E, G, R;
  double   err[2][2], *absval;
  int64_t  rows[2][2], i, *nnz;
  int      r;
  OceanCSR e;

  GenStencil(&E, small ? 6 : 12, small ? 6 : 12, small ? 6 : 12, 3, 1, GEN_VALUES_STREAM_DIAG, 181, 0);
  GenRmatStream(&G, small ? 9 : 12, 16, 12345, 0);
  for (r = 0; r < 2; r++) {
    TRY(MeasureEstimates(ctx, &E, 32 << r, &err[0][r], &rows[0][r]));
    TRY(MeasureEstimates(ctx, &G, 32 << r, &err[1][r], &rows[1][r]));
  }
  Say("  HLL mean relative error (rows with >= 64 nonzeros)   32 registers   64 registers\n");
  Say("    elasticity %2d^3 x 3 dof, A*A (%5lld rows)            %.4f         %.4f\n", small ? 6 : 12,
      (long long)rows[0][0], err[0][0], err[0][1]);
  Say("    R-MAT scale %2d, 16 edges/row, A*A (%5lld rows)       %.4f         %.4f\n", small ? 9 : 12,
      (long long)rows[1][0], err[1][0], err[1][1]);
  if (!small) {
    for (r = 0; r < 2; r++) {
      CHECK(rows[r][0] > 1000, "too few rows measured");
      CHECK(err[r][0] <= 0.15, "%s: 32 registers: mean relative error %.4f > 0.15", r ? "R-MAT" : "elasticity",
            err[r][0]);
      CHECK(err[r][1] <= 0.12, "%s: 64 registers: mean relative error %.4f > 0.12", r ? "R-MAT" : "elasticity",
            err[r][1]);
    }
  }
  /* the reference count agrees with the reference product */
  GenRefMultiply(&E, &E, &R, &absval);
  nnz = GenCalloc((size_t)E.nrows * sizeof(int64_t));
  e   = GenView(&E);
  CALL(OceanCountRowNnz(&e, &e, nnz));
  for (i = 0; i < E.nrows; i++)
    CHECK(nnz[i] == R.rowptr[i + 1] - R.rowptr[i], "OceanCountRowNnz row %lld: %lld, reference %lld", (long long)i,
          (long long)nnz[i], (long long)(R.rowptr[i + 1] - R.rowptr[i]));
  CHECK(OceanEstimateRowNnz(ctx, &e, &e, 24, (double *)nnz) == OCEAN_ERR_ARG, "24 registers accepted");
  free(nnz);
  free(absval);
  GenFree(&R);
  GenFree(&E);
  GenFree(&G);
  return 0;
}

/* ------------------------------------------------------------------------------------------------ main */

typedef struct {
  const char *name;
  int (*fn)(OceanContext);
} Test;

static int TestBinsCtx(OceanContext ctx)
{
  return TestBins();
}
static int TestSmallProfileCtx(OceanContext ctx)
{
  return TestSmallProfile();
}

/* A plan's own options (OceanProductSetOptions) decide its products; the context's only those of plans without
   options of their own, which redo their symbolic phase when the context's change.  Invalid options leave a plan's. */
static int TestPlanOptions(OceanContext ctx)
{
  OceanProduct own, shared;
  OceanOptions opts, got;
  OceanStats   stats;
  GenCSR       A, B, R;
  OceanCSR     a, b;
  double      *absval;

  GenStencil(&A, small ? 4 : 7, small ? 4 : 7, small ? 4 : 7, 3, 1, GEN_VALUES_STREAM_DIAG, 131, 131);
  GenRandomRows(&B, A.ncols, 900, 16, 0, 132, 132);
  a = GenView(&A);
  b = GenView(&B);
  GenRefMultiply(&A, &B, &R, &absval);
  OceanOptionsDefault(&opts);
  CALL(OceanContextSetOptions(ctx, &opts));
  CALL(OceanProductCreate(ctx, OCEAN_PRODUCT_AB, &own));
  CALL(OceanProductCreate(ctx, OCEAN_PRODUCT_AB, &shared));
  opts.workflow = OCEAN_WORKFLOW_EXACT;
  CALL(OceanProductSetOptions(own, &opts));
  CALL(OceanProductSymbolic(own, &a, &b));
  CALL(OceanProductSymbolic(shared, &a, &b));
  TRY(CompareC(own, &R, absval, "plan options: own"));
  TRY(CompareC(shared, &R, absval, "plan options: context's"));
  CALL(OceanProductGetStats(own, 0, &stats));
  CHECK(stats.workflow == OCEAN_WORKFLOW_EXACT && stats.workflow_forced, "own options: workflow %s, forced %d",
        OceanWorkflowName(stats.workflow), stats.workflow_forced);
  CALL(OceanProductGetStats(shared, 0, &stats));
  CHECK(!stats.workflow_forced, "the context's default options forced workflow %s", OceanWorkflowName(stats.workflow));

  /* the context's options change: the plan that follows them redoes its symbolic phase, the other computes values */
  OceanOptionsDefault(&opts);
  opts.workflow = OCEAN_WORKFLOW_UPPER_BOUND;
  CALL(OceanContextSetOptions(ctx, &opts));
  CALL(OceanProductSymbolic(own, &a, &b));
  CALL(OceanProductSymbolic(shared, &a, &b));
  TRY(CompareC(own, &R, absval, "plan options: own after the context's changed"));
  TRY(CompareC(shared, &R, absval, "plan options: context's after they changed"));
  CALL(OceanProductGetStats(own, 0, &stats));
  CHECK(stats.workflow == OCEAN_WORKFLOW_EXACT && stats.symbolic_calls == 1 && stats.numeric_calls == 1,
        "own options after the context's changed: workflow %s, %lld symbolic and %lld numeric calls",
        OceanWorkflowName(stats.workflow), (long long)stats.symbolic_calls, (long long)stats.numeric_calls);
  CALL(OceanProductGetStats(shared, 0, &stats));
  CHECK(stats.workflow == OCEAN_WORKFLOW_UPPER_BOUND && stats.symbolic_calls == 2,
        "context's options changed: workflow %s after %lld symbolic calls", OceanWorkflowName(stats.workflow),
        (long long)stats.symbolic_calls);
  CALL(OceanProductGetOptions(own, &got));
  CHECK(got.workflow == OCEAN_WORKFLOW_EXACT, "OceanProductGetOptions: own workflow %d", (int)got.workflow);
  CALL(OceanProductGetOptions(shared, &got));
  CHECK(got.workflow == OCEAN_WORKFLOW_UPPER_BOUND, "OceanProductGetOptions: context's workflow %d", (int)got.workflow);

  /* new own options redo the symbolic phase; invalid ones are refused and change nothing */
  OceanOptionsDefault(&opts);
  opts.workflow = OCEAN_WORKFLOW_ESTIMATE;
  CALL(OceanProductSetOptions(own, &opts));
  CALL(OceanProductSymbolic(own, &a, &b));
  TRY(CompareC(own, &R, absval, "plan options: own, changed"));
  CALL(OceanProductGetStats(own, 0, &stats));
  CHECK(stats.workflow == OCEAN_WORKFLOW_ESTIMATE && stats.symbolic_calls == 2, "own options changed: workflow %s",
        OceanWorkflowName(stats.workflow));
  opts.hll_registers = 48;
  CHECK(OceanProductSetOptions(own, &opts) == OCEAN_ERR_ARG && strstr(OceanGetLastErrorMessage(), "48"),
        "48 registers accepted by a plan: %s", OceanGetLastErrorMessage());
  CALL(OceanProductGetOptions(own, &got));
  CHECK(got.workflow == OCEAN_WORKFLOW_ESTIMATE && got.hll_registers == 0, "refused options changed the plan's");
  CHECK(OceanProductSetOptions(NULL, &opts) == OCEAN_ERR_ARG && OceanProductGetOptions(own, NULL) == OCEAN_ERR_ARG,
        "NULL arguments accepted");

  OceanOptionsDefault(&opts);
  CALL(OceanContextSetOptions(ctx, &opts));
  CALL(OceanProductDestroy(&own));
  CALL(OceanProductDestroy(&shared));
  GenFree(&A);
  GenFree(&B);
  GenFree(&R);
  free(absval);
  return 0;
}

int main(int argc, char **argv)
{
  static const Test tests[] = {
    {"bins", TestBinsCtx},
    {"random", TestRandom},
    {"rectangular", TestRectangular},
    {"stencils", TestStencils},
    {"rmat", TestRMAT},
    {"empty", TestEmpty},
    {"dense row", TestDenseRow},
    {"heavy rows", TestHeavyRows},
    {"multisplit", TestMultisplit},
    {"unsorted", TestUnsorted},
    {"overflow", TestOverflow},
    {"symbolic retry", TestSymbolicRetry},
    {"stats", TestStats},
    {"AtB", TestAtB},
    {"PtAP", TestPtAP},
    {"shared transposes", TestSharedTransposes},
    {"released C", TestReleasedC},
    {"narrow", TestNarrow},
    {"reuse", TestReuse},
    {"plan options", TestPlanOptions},
    {"index overflow", TestIndexOverflow},
    {"small profile", TestSmallProfileCtx},
    {"errors", TestErrors},
    {"determinism", TestDeterminism},
    {"phases", TestPhases},
    {"HLL accuracy", TestHLLAccuracy},
    {"HLL solve", TestHLLSolve},
  };
  OceanContext ctx;
  size_t       i;
  int          a, failed = 0;

  for (a = 1; a < argc; a++) {
    if (!strcmp(argv[a], "-v")) verbose = 1;
    else if (!strcmp(argv[a], "-small")) small = 1;
    else {
      fprintf(stderr, "usage: %s [-v] [-small]\n", argv[0]);
      return 2;
    }
  }
  if (OceanContextCreate(OCEAN_BACKEND_CPU, NULL, &ctx)) {
    fprintf(stderr, "FAIL: context: %s\n", OceanGetLastErrorMessage());
    return 1;
  }
  for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
    Say("%s\n", tests[i].name);
    if (tests[i].fn(ctx)) {
      fprintf(stderr, "FAIL: test '%s'\n", tests[i].name);
      failed++;
    }
  }
  OceanContextDestroy(&ctx);
  if (failed) fprintf(stderr, "%d of %d core tests failed\n", failed, (int)(sizeof(tests) / sizeof(tests[0])));
  else Say("all %d core tests passed\n", (int)(sizeof(tests) / sizeof(tests[0])));
  return failed ? 1 : 0;
}
