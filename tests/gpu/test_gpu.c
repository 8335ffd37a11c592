/*
  test_gpu.c - the CUDA backend against the CPU backend and an independent reference, on the same inputs.

  Usage: test_gpu [-small] [-only TEXT[|TEXT...]]   (-small: only the small cases, for compute-sanitizer; -only: the
                                                    cases whose names contain one of the texts)
  For every case: C of the CUDA backend has the reference's sorted structure and |c - r| <= 1e-12 (|A||B|)_ij;
  the workflow and every row's decisions (bin, accumulator, overflowed, predicted size, slot) equal the CPU
  backend's, which is given the device's own profile (these cases set record_rows, so the CUDA backend also checks its
  device reductions against host sums).  Cases "no records" run without record_rows (no per-row array comes to the
  host) and compare C and every scalar statistic with the CPU backend.  Device-resident operands (OCEAN_MEMORY_DEVICE)
  give the decisions and C of host operands, and C's device arrays (OceanProductGetDeviceC) are its host copy.  One line
  per case; the last line is "N passed, N failed". Exit 0 when all pass, 1 when one fails, 77 when there is no CUDA
  device.
*/
#include "ocean.h"
#include "gen.h" /* tests/common: the matrices, the reference product, the library's view */
#include "ref.h"
#include "view.h"
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int  small, npass, nfail;
static char msg[1024];

#define CHECK(cond, ...) \
  do { \
    if (!(cond)) { \
      int n_ = snprintf(msg, sizeof(msg), "%s:%d: ", __FILE__, __LINE__); \
      snprintf(msg + n_, sizeof(msg) - (size_t)n_, __VA_ARGS__); \
      return 1; \
    } \
  } while (0)

#define CALL(expr) \
  do { \
    OceanError e_ = (expr); \
    if (e_ != OCEAN_SUCCESS) { \
      snprintf(msg, sizeof(msg), "%s:%d: %s: %s: %s", __FILE__, __LINE__, #expr, OceanErrorString(e_), \
               OceanGetLastErrorMessage()); \
      return 1; \
    } \
  } while (0)

static OceanContext gpu, cpu;

/* C of the plan against the reference. */
static int CompareRef(OceanProduct prod, const GenCSR *R, const double *absval)
{
  int64_t        m, n, nnz, i, t;
  const int64_t *rp;
  const int32_t *ci;
  const double  *v;

  CALL(OceanProductGetC(prod, &m, &n, &nnz, &rp, &ci, &v));
  CHECK(m == R->nrows && n == R->ncols, "C is %lld x %lld, reference %lld x %lld", (long long)m, (long long)n,
        (long long)R->nrows, (long long)R->ncols);
  CHECK(nnz == GenNnz(R), "nnz(C) %lld, reference %lld", (long long)nnz, (long long)GenNnz(R));
  for (i = 0; i < m; i++)
    CHECK(rp[i + 1] == R->rowptr[i + 1], "row %lld ends at %lld, reference %lld", (long long)i, (long long)rp[i + 1],
          (long long)R->rowptr[i + 1]);
  for (t = 0; t < nnz; t++) {
    CHECK(ci[t] == R->colidx[t], "entry %lld has column %d, reference %d", (long long)t, ci[t], R->colidx[t]);
    CHECK(fabs(v[t] - R->values[t]) <= 1e-12 * absval[t], "entry %lld (column %d): %.17g, reference %.17g",
          (long long)t, ci[t], v[t], R->values[t]);
  }
  return 0;
}

/* Same workflow and per-row decisions in both backends' plans (every stage). */
/* The multisplit's statistics of the two backends: the same rows, chunks, levels and moved elements. */
static int CompareHeavy(int s, const OceanStats *g, const OceanStats *c)
{
  CHECK(g->heavy_rows == c->heavy_rows && g->heavy_products == c->heavy_products &&
          g->heavy_chunks == c->heavy_chunks && g->heavy_dense_chunks == c->heavy_dense_chunks &&
          g->heavy_split_elements == c->heavy_split_elements && g->heavy_levels == c->heavy_levels &&
          g->heavy_levels_planned == c->heavy_levels_planned && g->heavy_chunk_columns == c->heavy_chunk_columns,
        "stage %d: heavy rows %lld/%lld, products %lld/%lld, chunks %lld/%lld (dense %lld/%lld), moved %lld/%lld, "
        "levels %d/%d of %d/%d (gpu/cpu)",
        s, (long long)g->heavy_rows, (long long)c->heavy_rows, (long long)g->heavy_products,
        (long long)c->heavy_products, (long long)g->heavy_chunks, (long long)c->heavy_chunks,
        (long long)g->heavy_dense_chunks, (long long)c->heavy_dense_chunks, (long long)g->heavy_split_elements,
        (long long)c->heavy_split_elements, g->heavy_levels, c->heavy_levels, g->heavy_levels_planned,
        c->heavy_levels_planned);
  /* device batches: at least one where there are heavy rows, at most one a row; none on the CPU */
  CHECK((g->heavy_rows ? g->heavy_batches >= 1 && g->heavy_batches <= g->heavy_rows : g->heavy_batches == 0) &&
          c->heavy_batches == 0,
        "stage %d: %lld heavy rows in %lld device batches (cpu: %lld batches)", s, (long long)g->heavy_rows,
        (long long)g->heavy_batches, (long long)c->heavy_batches);
  return 0;
}

static int CompareDecisions(OceanProduct pg, OceanProduct pc)
{
  int ns, s;

  CALL(OceanProductGetNumStages(pg, &ns));
  for (s = 0; s < ns; s++) {
    OceanStats          sg, sc;
    const OceanRowInfo *rg, *rc;
    int64_t             ng, nc, i;
    int                 b;
    CALL(OceanProductGetStats(pg, s, &sg));
    CALL(OceanProductGetStats(pc, s, &sc));
    CHECK(sg.workflow == sc.workflow && sg.switched_to_exact == sc.switched_to_exact,
          "stage %d: workflow %s (gpu) vs %s (cpu)", s, OceanWorkflowName(sg.workflow), OceanWorkflowName(sc.workflow));
    CHECK(sg.products == sc.products && sg.nnz_c == sc.nnz_c && sg.sampled_rows == sc.sampled_rows &&
            sg.cr_sampled == sc.cr_sampled && sg.cr_conservative == sc.cr_conservative,
          "stage %d: analysis differs (products %lld/%lld, sampled CR %.17g/%.17g)", s, (long long)sg.products,
          (long long)sc.products, sg.cr_sampled, sc.cr_sampled);
    CHECK(sg.overflow_rows == sc.overflow_rows && sg.symbolic_retry_rows == sc.symbolic_retry_rows &&
            sg.allocated_entries == sc.allocated_entries,
          "stage %d: overflow %lld/%lld, retries %lld/%lld, allocated %lld/%lld", s, (long long)sg.overflow_rows,
          (long long)sc.overflow_rows, (long long)sg.symbolic_retry_rows, (long long)sc.symbolic_retry_rows,
          (long long)sg.allocated_entries, (long long)sc.allocated_entries);
    for (b = 0; b < OCEAN_NUM_BINS; b++)
      CHECK(sg.rows_per_bin[b] == sc.rows_per_bin[b], "stage %d: bin %s has %lld rows (gpu), %lld (cpu)", s,
            OceanBinName((OceanBin)b), (long long)sg.rows_per_bin[b], (long long)sc.rows_per_bin[b]);
    if (CompareHeavy(s, &sg, &sc)) return 1;
    CALL(OceanProductGetRowInfo(pg, s, &rg, &ng));
    CALL(OceanProductGetRowInfo(pc, s, &rc, &nc));
    CHECK(ng == nc, "stage %d: %lld rows vs %lld", s, (long long)ng, (long long)nc);
    for (i = 0; i < ng; i++)
      CHECK(rg[i].bin == rc[i].bin && rg[i].accumulator == rc[i].accumulator && rg[i].overflowed == rc[i].overflowed &&
              rg[i].predicted == rc[i].predicted && rg[i].slot == rc[i].slot && rg[i].nnz == rc[i].nnz &&
              rg[i].products == rc[i].products && rg[i].estimate == rc[i].estimate,
            "stage %d row %lld: gpu bin %s acc %s overflowed %d predicted %lld slot %lld nnz %lld estimate %.17g; cpu "
            "bin %s acc %s overflowed %d predicted %lld slot %lld nnz %lld estimate %.17g",
            s, (long long)i, OceanBinName((OceanBin)rg[i].bin),
            OceanAccumulatorName((OceanAccumulator)rg[i].accumulator), rg[i].overflowed, (long long)rg[i].predicted,
            (long long)rg[i].slot, (long long)rg[i].nnz, rg[i].estimate, OceanBinName((OceanBin)rc[i].bin),
            OceanAccumulatorName((OceanAccumulator)rc[i].accumulator), rc[i].overflowed, (long long)rc[i].predicted,
            (long long)rc[i].slot, (long long)rc[i].nnz, rc[i].estimate);
  }
  return 0;
}

/* The two backends' C: identical structure, values within tol * max |c|. */
static int CompareBackends(OceanProduct pg, OceanProduct pc)
{
  int64_t        ng, nc, t, m, i;
  const int64_t *rg, *rc;
  const int32_t *cg, *cc;
  const double  *vg, *vc;
  double         vmax = 0;

  CALL(OceanProductGetC(pg, &m, NULL, &ng, &rg, &cg, &vg));
  CALL(OceanProductGetC(pc, NULL, NULL, &nc, &rc, &cc, &vc));
  CHECK(ng == nc, "nnz(C) %lld (gpu) vs %lld (cpu)", (long long)ng, (long long)nc);
  for (i = 0; i <= m; i++) CHECK(rg[i] == rc[i], "row offset %lld differs", (long long)i);
  for (t = 0; t < nc; t++) vmax = fmax(vmax, fabs(vc[t]));
  for (t = 0; t < nc; t++) {
    CHECK(cg[t] == cc[t], "entry %lld: column %d (gpu) vs %d (cpu)", (long long)t, cg[t], cc[t]);
    CHECK(fabs(vg[t] - vc[t]) <= 1e-11 * vmax, "entry %lld: %.17g (gpu) vs %.17g (cpu)", (long long)t, vg[t], vc[t]);
  }
  return 0;
}

/* Numeric through the product map sums in a fixed order: the same values again give the same bits. */
static int RepeatBitwise(OceanProduct p, const OceanCSR *a, const OceanCSR *b)
{
  int64_t       nnz, t;
  const double *v;
  double       *first;

  CALL(OceanProductGetC(p, NULL, NULL, &nnz, NULL, NULL, &v));
  first = (double *)malloc((size_t)(nnz ? nnz : 1) * sizeof(double));
  CHECK(first, "out of host memory");
  memcpy(first, v, (size_t)nnz * sizeof(double));
  CALL(OceanProductNumeric(p, a, b));
  CALL(OceanProductGetC(p, NULL, NULL, &nnz, NULL, NULL, &v));
  for (t = 0; t < nnz && memcmp(&first[t], &v[t], sizeof(double)) == 0; t++) {}
  free(first);
  CHECK(t == nnz, "product map: entry %lld differs between two numeric calls with the same values", (long long)t);
  return 0;
}

/* reuse_map_max_bytes of the cases' options: 0 makes numeric reuse search C's rows (ReuseCases) */
static int64_t case_reuse_map = -1;
/* numeric calls whose product map ran its two parts side by side (the check after ReuseCases) */
static int map_side_by_side_calls;
/* the heavy-row options of the cases (CaseLong turns them off, CaseHeavy forces them) */
static OceanHeavyMode case_heavy = OCEAN_HEAVY_AUTO;
static int64_t        case_heavy_threshold, case_heavy_columns, case_heavy_per_level;
static int64_t        case_bound_factor = -1; /* >= 0: the cases' OceanOptions.bound_factor (-1: the default) */
static int64_t        case_memory_limit;      /* the cases' OceanOptions.device_memory_limit */

static void Options(OceanOptions *o, int workflow, int registers, double coefficient)
{
  OceanOptionsDefault(o);
  o->one_pass_exact         = 0; /* the CPU backend makes the GPU's decisions */
  o->reuse_map_max_bytes    = case_reuse_map;
  o->workflow               = (OceanWorkflow)workflow;
  o->hll_registers          = registers;
  o->estimate_coefficient   = coefficient;
  o->record_rows            = 1;
  o->heavy                  = case_heavy;
  o->heavy_threshold        = case_heavy_threshold;
  o->heavy_chunk_columns    = case_heavy_columns;
  o->heavy_chunks_per_level = case_heavy_per_level;
  if (case_bound_factor >= 0) o->bound_factor = case_bound_factor;
  o->device_memory_limit = case_memory_limit;
}

static OceanWorkflow last_workflow; /* RunAB's GPU product's */
static OceanStats    last_stats;    /* ... and its symbolic call's statistics */

/* The workflow RunAB's last GPU product took was w. */
static int CheckSelected(OceanWorkflow w)
{
  if (last_workflow == w) return 0;
  snprintf(msg, sizeof(msg), "the selection took %s, %s expected", OceanWorkflowName(last_workflow),
           OceanWorkflowName(w));
  return 1;
}

/* AB on both backends with the options; reference check, decisions, then numeric with new values (reuse). */
static int RunAB(const OceanOptions *o, GenCSR *A, GenCSR *B, int expect_overflow, int reuse)
{
  OceanProduct pg, pc;
  OceanCSR     a, b;
  GenCSR       R;
  double      *absval;
  OceanStats   st;
  int          r = 1;

  CALL(OceanContextSetOptions(gpu, o));
  CALL(OceanContextSetOptions(cpu, o));
  a = GenView(A);
  b = GenView(B);
  CALL(OceanProductCreate(gpu, OCEAN_PRODUCT_AB, &pg));
  CALL(OceanProductCreate(cpu, OCEAN_PRODUCT_AB, &pc));
  CALL(OceanProductSymbolic(pg, &a, &b));
  CALL(OceanProductSymbolic(pc, &a, &b));
  GenRefMultiply(A, B, &R, &absval);
  if (CompareRef(pg, &R, absval) || CompareDecisions(pg, pc)) goto out;
  CALL(OceanProductGetStats(pg, 0, &st));
  last_workflow = st.workflow;
  last_stats    = st;
  if (o->workflow != OCEAN_WORKFLOW_AUTO && !st.switched_to_exact && st.workflow != o->workflow) {
    snprintf(msg, sizeof(msg), "forced %s, took %s", OceanWorkflowName(o->workflow), OceanWorkflowName(st.workflow));
    goto out;
  }
  if (expect_overflow && st.overflow_rows == 0) {
    snprintf(msg, sizeof(msg), "no overflow rows (expected some)");
    goto out;
  }
  if (reuse && A->id && B->id) {
    int k;
    for (k = 0; k < 2; k++) {
      GenFillValues(A, GEN_VALUES_STREAM, 1000 + (uint64_t)k);
      GenFillValues(B, GEN_VALUES_STREAM, 2000 + (uint64_t)k);
      GenFree(&R);
      free(absval);
      GenRefMultiply(A, B, &R, &absval);
      CALL(OceanProductNumeric(pg, &a, &b));
      CALL(OceanProductNumeric(pc, &a, &b));
      if (CompareRef(pg, &R, absval) || CompareBackends(pg, pc)) goto out;
      CALL(OceanProductGetStats(pg, 0, &st));
      if (st.numeric_calls != k + 1 || st.overflow_rows) {
        snprintf(msg, sizeof(msg), "numeric reuse: %lld numeric calls, %lld overflow rows", (long long)st.numeric_calls,
                 (long long)st.overflow_rows);
        goto out;
      }
      /* the product map from the second numeric call on unless the options forbid it (the narrow workflow has its
         own numeric; a C made in row chunks lives on the host and each numeric call runs the chunks again) */
      if ((st.reuse_map_bytes > 0) !=
          (k >= 1 && o->reuse_map_max_bytes != 0 && st.workflow != OCEAN_WORKFLOW_NARROW && st.row_chunks == 0)) {
        snprintf(msg, sizeof(msg),
                 "numeric reuse: product map of %lld bytes with reuse_map_max_bytes %lld, workflow %s",
                 (long long)st.reuse_map_bytes, (long long)o->reuse_map_max_bytes, OceanWorkflowName(st.workflow));
        goto out;
      }
    }
    map_side_by_side_calls += st.reuse_map_side_by_side;
    if (st.reuse_map_bytes && RepeatBitwise(pg, &a, &b)) goto out;
  }
  r = 0;
out:
  OceanProductDestroy(&pg);
  OceanProductDestroy(&pc);
  GenFree(&R);
  free(absval);
  return r;
}

/* Other product types: the two backends agree (decisions and values), with one numeric reuse. */
static int RunType(OceanProductType type, GenCSR *A, GenCSR *B)
{
  OceanProduct pg, pc;
  OceanOptions o;
  OceanCSR     a = GenView(A), b = GenView(B);

  Options(&o, OCEAN_WORKFLOW_AUTO, 0, 0);
  CALL(OceanContextSetOptions(gpu, &o));
  CALL(OceanContextSetOptions(cpu, &o));
  CALL(OceanProductCreate(gpu, type, &pg));
  CALL(OceanProductCreate(cpu, type, &pc));
  CALL(OceanProductSymbolic(pg, &a, &b));
  CALL(OceanProductSymbolic(pc, &a, &b));
  if (CompareDecisions(pg, pc) || CompareBackends(pg, pc)) return 1;
  GenFillValues(A, GEN_VALUES_STREAM, 77);
  GenFillValues(B, GEN_VALUES_STREAM, 78);
  CALL(OceanProductNumeric(pg, &a, &b));
  CALL(OceanProductNumeric(pc, &a, &b));
  if (CompareBackends(pg, pc)) return 1;
  OceanProductDestroy(&pg);
  OceanProductDestroy(&pc);
  return 0;
}

/* A matrix copied to the device (int64 offsets): a device-resident operand. */
typedef struct {
  int64_t *rowptr;
  int32_t *colidx;
  double  *values;
} DevMat;

#define CUDA_CALL(expr) \
  do { \
    cudaError_t ce_ = (expr); \
    if (ce_ != cudaSuccess) { \
      snprintf(msg, sizeof(msg), "%s:%d: %s: %s", __FILE__, __LINE__, #expr, cudaGetErrorString(ce_)); \
      return 1; \
    } \
  } while (0)

static void DevFree(DevMat *d)
{
  cudaFree(d->rowptr);
  cudaFree(d->colidx);
  cudaFree(d->values);
  memset(d, 0, sizeof(*d));
}

/* Uploads M (values too) and views it as a device operand with M's structure id. */
static int Upload(const GenCSR *M, DevMat *d, OceanCSR *c)
{
  const int64_t nnz = GenNnz(M);
  memset(d, 0, sizeof(*d));
  CUDA_CALL(cudaMalloc((void **)&d->rowptr, (size_t)(M->nrows + 1) * sizeof(int64_t)));
  CUDA_CALL(cudaMalloc((void **)&d->colidx, (size_t)(nnz ? nnz : 1) * sizeof(int32_t)));
  CUDA_CALL(cudaMalloc((void **)&d->values, (size_t)(nnz ? nnz : 1) * sizeof(double)));
  CUDA_CALL(cudaMemcpy(d->rowptr, M->rowptr, (size_t)(M->nrows + 1) * sizeof(int64_t), cudaMemcpyHostToDevice));
  CUDA_CALL(cudaMemcpy(d->colidx, M->colidx, (size_t)nnz * sizeof(int32_t), cudaMemcpyHostToDevice));
  CUDA_CALL(cudaMemcpy(d->values, M->values, (size_t)nnz * sizeof(double), cudaMemcpyHostToDevice));
  *c        = GenView(M);
  c->rowptr = d->rowptr;
  c->colidx = d->colidx;
  c->values = d->values;
  return 0;
}

/* C's device arrays equal the plan's host copy, bitwise; so do the structure copied into the caller's host arrays
   (OceanProductGetCStructureInto: here the plan already holds a host copy; straight from the device it is taken by the
   PETSc suite's device matrices, its initial-no-uploads cases) and C copied into a device CSR with int32 row offsets
   (OceanProductCopyDeviceCSR32). */
static int CompareDeviceC(OceanProduct p)
{
  int64_t        m, n, nnz, m2, n2, nnz2;
  const int64_t *drp, *rp;
  const int32_t *dci, *ci;
  const double  *dv, *v;
  int64_t       *hrp, *srp;
  int32_t       *hci, *sci, *hrp32, *drp32 = NULL, *dci32 = NULL;
  double        *hv, *hv32, *dv32 = NULL;
  int            bad = 0;

  CALL(OceanProductGetDeviceC(p, &m, &n, &nnz, &drp, &dci, &dv));
  srp = malloc((size_t)(m + 1) * sizeof(int64_t));
  sci = malloc((size_t)(nnz ? nnz : 1) * sizeof(int32_t));
  if (OceanProductGetCStructureInto(p, srp, sci)) {
    free(srp);
    free(sci);
    CHECK(0, "OceanProductGetCStructureInto: %s", OceanGetLastErrorMessage());
  }
  CALL(OceanProductGetC(p, &m2, &n2, &nnz2, &rp, &ci, &v));
  CHECK(m == m2 && n == n2 && nnz == nnz2, "device C %lld x %lld (%lld), host C %lld x %lld (%lld)", (long long)m,
        (long long)n, (long long)nnz, (long long)m2, (long long)n2, (long long)nnz2);
  hrp   = malloc((size_t)(m + 1) * sizeof(int64_t));
  hci   = malloc((size_t)(nnz ? nnz : 1) * sizeof(int32_t));
  hv    = malloc((size_t)(nnz ? nnz : 1) * sizeof(double));
  hrp32 = malloc((size_t)(m + 1) * sizeof(int32_t));
  hv32  = malloc((size_t)(nnz ? nnz : 1) * sizeof(double));
  bad   = cudaMemcpy(hrp, drp, (size_t)(m + 1) * sizeof(int64_t), cudaMemcpyDeviceToHost) != cudaSuccess ||
        cudaMemcpy(hci, dci, (size_t)nnz * sizeof(int32_t), cudaMemcpyDeviceToHost) != cudaSuccess ||
        cudaMemcpy(hv, dv, (size_t)nnz * sizeof(double), cudaMemcpyDeviceToHost) != cudaSuccess;
  if (!bad)
    bad = 2 * (memcmp(hrp, rp, (size_t)(m + 1) * sizeof(int64_t)) || memcmp(hci, ci, (size_t)nnz * sizeof(int32_t)) ||
               memcmp(hv, v, (size_t)nnz * sizeof(double)));
  if (!bad)
    bad = 3 * (memcmp(srp, rp, (size_t)(m + 1) * sizeof(int64_t)) || memcmp(sci, ci, (size_t)nnz * sizeof(int32_t)));
  if (!bad) {
    bad = cudaMalloc((void **)&drp32, (size_t)(m + 1) * sizeof(int32_t)) != cudaSuccess ||
          cudaMalloc((void **)&dci32, (size_t)(nnz ? nnz : 1) * sizeof(int32_t)) != cudaSuccess ||
          cudaMalloc((void **)&dv32, (size_t)(nnz ? nnz : 1) * sizeof(double)) != cudaSuccess;
    if (!bad) bad = 4 * (OceanProductCopyDeviceCSR32(p, drp32, dci32, dv32) != OCEAN_SUCCESS);
    if (!bad)
      bad = cudaMemcpy(hrp32, drp32, (size_t)(m + 1) * sizeof(int32_t), cudaMemcpyDeviceToHost) != cudaSuccess ||
            cudaMemcpy(hci, dci32, (size_t)nnz * sizeof(int32_t), cudaMemcpyDeviceToHost) != cudaSuccess ||
            cudaMemcpy(hv32, dv32, (size_t)nnz * sizeof(double), cudaMemcpyDeviceToHost) != cudaSuccess;
    for (int64_t i = 0; !bad && i <= m; i++) bad = 5 * (hrp32[i] != rp[i]);
    if (!bad)
      bad = 5 * (memcmp(hci, ci, (size_t)nnz * sizeof(int32_t)) || memcmp(hv32, v, (size_t)nnz * sizeof(double)));
  }
  if (!bad) { /* compressed rows: the rows with entries in order, their offsets; a wrong count refused */
    int64_t  kept = 0, k = 0;
    int32_t *drix = NULL, *hrix = malloc((size_t)(m ? m : 1) * sizeof(int32_t));
    for (int64_t i = 0; i < m; i++) kept += rp[i + 1] > rp[i];
    bad = cudaMalloc((void **)&drix, (size_t)(m ? m : 1) * sizeof(int32_t)) != cudaSuccess;
    if (!bad) bad = 6 * (OceanProductCopyDeviceCompressedCSR32(p, kept, drix, drp32, dci32, dv32) != OCEAN_SUCCESS);
    if (!bad)
      bad = cudaMemcpy(hrix, drix, (size_t)kept * sizeof(int32_t), cudaMemcpyDeviceToHost) != cudaSuccess ||
            cudaMemcpy(hrp32, drp32, (size_t)(kept + 1) * sizeof(int32_t), cudaMemcpyDeviceToHost) != cudaSuccess;
    for (int64_t i = 0; !bad && i < m; i++)
      if (rp[i + 1] > rp[i]) {
        bad = 7 * (hrix[k] != i || hrp32[k] != rp[i]);
        k++;
      }
    if (!bad) bad = 7 * (hrp32[kept] != rp[m]);
    if (!bad && m) /* a count within the rows, but not theirs */
      bad = 8 * (OceanProductCopyDeviceCompressedCSR32(p, kept < m ? kept + 1 : kept - 1, drix, drp32, dci32, dv32) !=
                 OCEAN_ERR_STATE);
    cudaFree(drix);
    free(hrix);
  }
  cudaFree(drp32);
  cudaFree(dci32);
  cudaFree(dv32);
  free(hrp);
  free(hci);
  free(hv);
  free(hrp32);
  free(hv32);
  free(srp);
  free(sci);
  CHECK(!bad, "%s",
        bad == 1               ? "copying the device C failed"
        : bad == 2             ? "OceanProductGetDeviceC's arrays differ from OceanProductGetC's"
        : bad == 3             ? "OceanProductGetCStructureInto's arrays differ from OceanProductGetC's"
        : bad == 4 || bad == 6 ? OceanGetLastErrorMessage()
        : bad == 5             ? "OceanProductCopyDeviceCSR32's arrays differ from OceanProductGetC's"
        : bad == 7 ? "OceanProductCopyDeviceCompressedCSR32's rows or offsets differ from OceanProductGetC's"
                   : "OceanProductCopyDeviceCompressedCSR32 took a wrong count of rows with entries");
  return 0;
}

/* Numeric of the device plan pd with its operands' row offsets given as int32 (widened by the plan) against the host
   plan ph with the same values; C's values copied into a device array must be ph's. */
static int WidenedOperands(OceanProduct pd, OceanProduct ph, const GenCSR *A, const GenCSR *B, const OceanCSR *da,
                           const OceanCSR *db)
{
  const GenCSR *M[2]   = {A, B};
  OceanCSR      w[2]   = {*da, *db};
  int32_t      *d32[2] = {NULL, NULL}, *h32;
  double       *dv     = NULL, *hv;
  const double *cv;
  int64_t       nnz;
  int           k, r = 1;

  for (k = 0; k < 2; k++) {
    h32 = (int32_t *)malloc((size_t)(M[k]->nrows + 1) * sizeof(int32_t));
    for (int64_t i = 0; i <= M[k]->nrows; i++) h32[i] = (int32_t)M[k]->rowptr[i];
    if (cudaMalloc((void **)&d32[k], (size_t)(M[k]->nrows + 1) * sizeof(int32_t)) != cudaSuccess ||
        cudaMemcpy(d32[k], h32, (size_t)(M[k]->nrows + 1) * sizeof(int32_t), cudaMemcpyHostToDevice) != cudaSuccess) {
      free(h32);
      snprintf(msg, sizeof(msg), "uploading int32 row offsets failed");
      goto done;
    }
    free(h32);
    if (OceanProductWidenDeviceOffsets(pd, k, M[k]->nrows, d32[k], &w[k].rowptr)) {
      snprintf(msg, sizeof(msg), "OceanProductWidenDeviceOffsets: %s", OceanGetLastErrorMessage());
      goto done;
    }
  }
  if (OceanProductNumeric(pd, &w[0], &w[1]) || CompareBackends(pd, ph)) {
    if (!msg[0]) snprintf(msg, sizeof(msg), "numeric with widened offsets: %s", OceanGetLastErrorMessage());
    goto done;
  }
  if (OceanProductGetC(pd, NULL, NULL, &nnz, NULL, NULL, &cv) ||
      cudaMalloc((void **)&dv, (size_t)(nnz ? nnz : 1) * sizeof(double)) != cudaSuccess ||
      OceanProductCopyDeviceValues(pd, dv)) {
    snprintf(msg, sizeof(msg), "OceanProductCopyDeviceValues: %s", OceanGetLastErrorMessage());
    goto done;
  }
  hv = (double *)malloc((size_t)(nnz ? nnz : 1) * sizeof(double));
  if (cudaMemcpy(hv, dv, (size_t)nnz * sizeof(double), cudaMemcpyDeviceToHost) != cudaSuccess ||
      (nnz && memcmp(hv, cv, (size_t)nnz * sizeof(double)))) {
    snprintf(msg, sizeof(msg), "OceanProductCopyDeviceValues: the copied values differ from OceanProductGetC's");
    free(hv);
    goto done;
  }
  free(hv);
  r = 0;
done:
  cudaFree(d32[0]);
  cudaFree(d32[1]);
  cudaFree(dv);
  return r;
}

/* The host reference of an AB or AtB product. */
static void RefProduct(OceanProductType type, const GenCSR *A, const GenCSR *B, GenCSR *R, double **absval)
{
  GenCSR T;
  if (type == OCEAN_PRODUCT_AB) {
    GenRefMultiply(A, B, R, absval);
    return;
  }
  GenTranspose(A, &T);
  GenRefMultiply(&T, B, R, absval);
  GenFree(&T);
}

/* Device-resident operands against host operands on the GPU (AB; AtB and PtAP, whose A^T and P^T are then made from
   the device operand): decisions, C (AB, AtB: the reference too), C's structure alone on the host (no values
   downloaded), device C, numeric-only with new device values; then (AB) the refusals (CPU context, host pointers). */
static int RunDeviceOperands(OceanProductType type, GenCSR *A, GenCSR *B)
{
  OceanProduct ph = NULL, pd = NULL, pe = NULL;
  OceanOptions o;
  OceanCSR     a, b, da, db;
  DevMat       dA, dB;
  GenCSR       R;
  double      *absval;
  int64_t      m;
  OceanError   e;
  int          k, r = 1;

  memset(&R, 0, sizeof(R));
  absval = NULL;
  Options(&o, OCEAN_WORKFLOW_AUTO, 0, 0);
  CALL(OceanContextSetOptions(gpu, &o));
  a = GenView(A);
  b = GenView(B);
  if (Upload(A, &dA, &da) || Upload(B, &dB, &db)) return 1;
  CALL(OceanProductCreate(gpu, type, &ph));
  CALL(OceanProductCreate(gpu, type, &pd));
  CALL(OceanProductSetOperandMemType(pd, OCEAN_MEMORY_DEVICE));
  CALL(OceanProductSymbolic(ph, &a, &b));
  CALL(OceanProductSymbolic(pd, &da, &db));
  { /* the structure alone: no values come to the host */
    OceanStats     sd;
    const int64_t *rp;
    const int32_t *ci;
    int64_t        nr, nnz;
    CALL(OceanProductGetC(pd, &nr, NULL, &nnz, &rp, &ci, NULL));
    CALL(OceanProductGetStats(pd, type == OCEAN_PRODUCT_PtAP ? 1 : 0, &sd));
    CHECK(sd.downloaded_bytes == (nr ? (nr + 1) * 8 : 0) + nnz * 4,
          "C's structure alone: %lld bytes downloaded, expected %lld", (long long)sd.downloaded_bytes,
          (long long)((nr ? (nr + 1) * 8 : 0) + nnz * 4));
  }
  if (type != OCEAN_PRODUCT_PtAP) RefProduct(type, A, B, &R, &absval);
  if (CompareDecisions(pd, ph) || (type != OCEAN_PRODUCT_PtAP && CompareRef(pd, &R, absval)) ||
      CompareBackends(pd, ph) || CompareDeviceC(pd))
    goto out;
  {
    /* the upload phase: host operands only; the download phase: both, once C was asked for on the host */
    OceanStats sh, sd;
    int        last = type == OCEAN_PRODUCT_PtAP ? 1 : 0;
    CALL(OceanProductGetStats(ph, 0, &sh));
    CALL(OceanProductGetStats(pd, 0, &sd));
    CHECK(sh.t_upload > 0 && sd.t_upload == 0, "upload time %g s with host operands, %g s with device operands",
          sh.t_upload, sd.t_upload);
    CALL(OceanProductGetStats(ph, last, &sh));
    CALL(OceanProductGetStats(pd, last, &sd));
    CHECK(sh.t_download > 0 && sd.t_download > 0, "download time %g s and %g s after OceanProductGetC", sh.t_download,
          sd.t_download);
    { /* the structure once and the values once since the call began: PETSc's copy counters get exactly this */
      const int64_t expect = (sd.nrows ? (sd.nrows + 1) * 8 : 0) + sd.nnz_c * 12;
      CHECK(sd.downloaded_bytes == expect && sh.downloaded_bytes == expect,
            "downloaded bytes %lld (device operands) and %lld (host operands) after OceanProductGetC, expected %lld",
            (long long)sd.downloaded_bytes, (long long)sh.downloaded_bytes, (long long)expect);
    }
  }
  for (k = 0; k < 2; k++) {
    GenFillValues(A, GEN_VALUES_STREAM, 3000 + (uint64_t)k);
    GenFillValues(B, GEN_VALUES_STREAM, 4000 + (uint64_t)k);
    GenFree(&R);
    free(absval);
    absval = NULL;
    if (type != OCEAN_PRODUCT_PtAP) RefProduct(type, A, B, &R, &absval);
    if (cudaMemcpy(dA.values, A->values, (size_t)GenNnz(A) * sizeof(double), cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaMemcpy(dB.values, B->values, (size_t)GenNnz(B) * sizeof(double), cudaMemcpyHostToDevice) != cudaSuccess) {
      snprintf(msg, sizeof(msg), "uploading new values failed");
      goto out;
    }
    CALL(OceanProductNumeric(pd, &da, &db));
    CALL(OceanProductNumeric(ph, &a, &b));
    if ((type != OCEAN_PRODUCT_PtAP && CompareRef(pd, &R, absval)) || CompareDeviceC(pd) || CompareBackends(pd, ph))
      goto out;
  }
  /* cuSPARSE's int32 row offsets widened by the plan (PETSc's aijcusparse operands), and C's values copied into a
     device array of the caller (aijcusparse's): the same C as the host plan's, bit for bit */
  if (WidenedOperands(pd, ph, A, B, &da, &db)) goto out;
  if (type != OCEAN_PRODUCT_AB) {
    r = 0;
    goto out;
  }
  /* refusals */
  CALL(OceanProductCreate(cpu, OCEAN_PRODUCT_AB, &pe));
  e = OceanProductSetOperandMemType(pe, OCEAN_MEMORY_DEVICE);
  CHECK(e == OCEAN_ERR_ARG, "device operands on a CPU context: %s, expected OCEAN_ERR_ARG", OceanErrorString(e));
  e = OceanProductGetDeviceC(pe, &m, NULL, NULL, NULL, NULL, NULL);
  CHECK(e == OCEAN_ERR_NOT_AVAILABLE, "OceanProductGetDeviceC on a CPU plan: %s", OceanErrorString(e));
  {
    const int64_t *w   = NULL;
    const int32_t  one = 0;
    e                  = OceanProductWidenDeviceOffsets(pe, 0, 0, &one, &w);
    CHECK(e == OCEAN_ERR_ARG, "OceanProductWidenDeviceOffsets on a CPU plan: %s", OceanErrorString(e));
    e = OceanProductCopyDeviceValues(pe, NULL);
    CHECK(e == OCEAN_ERR_NOT_AVAILABLE, "OceanProductCopyDeviceValues on a CPU plan: %s", OceanErrorString(e));
  }
  OceanProductDestroy(&pe);
  CALL(OceanProductCreate(gpu, OCEAN_PRODUCT_AB, &pe));
  CALL(OceanProductSetOperandMemType(pe, OCEAN_MEMORY_DEVICE));
  e = GenNnz(A) ? OceanProductSymbolic(pe, &a, &b) : OCEAN_ERR_ARG; /* host pointers where device ones are promised */
  CHECK(e == OCEAN_ERR_ARG, "host arrays as device operands: %s, expected OCEAN_ERR_ARG", OceanErrorString(e));
  r = 0;
out:
  OceanProductDestroy(&ph);
  OceanProductDestroy(&pd);
  OceanProductDestroy(&pe);
  DevFree(&dA);
  DevFree(&dB);
  GenFree(&R);
  free(absval);
  return r;
}

static int CaseDevice(OceanProductType type, GenCSR *A, GenCSR *B)
{
  int r = RunDeviceOperands(type, A, B);
  GenFree(A);
  GenFree(B);
  return r;
}

/* The scalar statistics of the two backends' plans: decisions and analysis bitwise, counts exactly, the estimate
   error (a device tree sum against a serial host sum) to 1e-12. */
static int CompareStats(OceanProduct pg, OceanProduct pc)
{
  int ns, s, b;

  CALL(OceanProductGetNumStages(pg, &ns));
  for (s = 0; s < ns; s++) {
    OceanStats g, c;
    CALL(OceanProductGetStats(pg, s, &g));
    CALL(OceanProductGetStats(pc, s, &c));
    CHECK(g.workflow == c.workflow && g.switched_to_exact == c.switched_to_exact &&
            g.workflow_forced == c.workflow_forced,
          "stage %d: workflow %s (gpu) vs %s (cpu)", s, OceanWorkflowName(g.workflow), OceanWorkflowName(c.workflow));
    CHECK(g.nrows == c.nrows && g.ncols == c.ncols && g.nnz_a == c.nnz_a && g.nnz_b == c.nnz_b && g.nnz_c == c.nnz_c &&
            g.products == c.products,
          "stage %d: sizes differ (nnz(C) %lld/%lld, products %lld/%lld)", s, (long long)g.nnz_c, (long long)c.nnz_c,
          (long long)g.products, (long long)c.products);
    CHECK(g.er == c.er && g.cr == c.cr && g.sampled_rows == c.sampled_rows && g.cr_sampled == c.cr_sampled &&
            g.cr_mean == c.cr_mean && g.cr_std == c.cr_std && g.cr_conservative == c.cr_conservative,
          "stage %d: analysis differs: sampled %lld/%lld rows, CR sampled %.17g/%.17g mean %.17g/%.17g std %.17g/%.17g "
          "conservative %.17g/%.17g",
          s, (long long)g.sampled_rows, (long long)c.sampled_rows, g.cr_sampled, c.cr_sampled, g.cr_mean, c.cr_mean,
          g.cr_std, c.cr_std, g.cr_conservative, c.cr_conservative);
    CHECK(g.bitmap_query == c.bitmap_query && g.hll_registers == c.hll_registers &&
            g.estimate_coefficient == c.estimate_coefficient,
          "stage %d: bitmap query %d/%d, registers %d/%d", s, g.bitmap_query, c.bitmap_query, g.hll_registers,
          c.hll_registers);
    CHECK(g.overflow_rows == c.overflow_rows && g.symbolic_retry_rows == c.symbolic_retry_rows &&
            g.allocated_entries == c.allocated_entries,
          "stage %d: overflow %lld/%lld, retries %lld/%lld, allocated %lld/%lld", s, (long long)g.overflow_rows,
          (long long)c.overflow_rows, (long long)g.symbolic_retry_rows, (long long)c.symbolic_retry_rows,
          (long long)g.allocated_entries, (long long)c.allocated_entries);
    for (b = 0; b < OCEAN_NUM_BINS; b++)
      CHECK(g.rows_per_bin[b] == c.rows_per_bin[b], "stage %d: bin %s has %lld rows (gpu), %lld (cpu)", s,
            OceanBinName((OceanBin)b), (long long)g.rows_per_bin[b], (long long)c.rows_per_bin[b]);
    CHECK(g.dense_rows == c.dense_rows && g.hash_rows == c.hash_rows && g.esc_rows == c.esc_rows &&
            g.global_rows == c.global_rows,
          "stage %d: dense/hash/esc/global rows %lld/%lld/%lld/%lld (gpu), %lld/%lld/%lld/%lld (cpu)", s,
          (long long)g.dense_rows, (long long)g.hash_rows, (long long)g.esc_rows, (long long)g.global_rows,
          (long long)c.dense_rows, (long long)c.hash_rows, (long long)c.esc_rows, (long long)c.global_rows);
    if (CompareHeavy(s, &g, &c)) return 1;
    CHECK(fabs(g.estimate_mean_rel_error - c.estimate_mean_rel_error) <=
            1e-12 * fmax(1.0, fabs(c.estimate_mean_rel_error)),
          "stage %d: estimate error %.17g (gpu), %.17g (cpu)", s, g.estimate_mean_rel_error, c.estimate_mean_rel_error);
  }
  return 0;
}

/* Without record_rows (the benchmark's setting: no per-row array comes to the host): C and the scalar statistics
   against the CPU backend, host or device-resident operands, then numeric reuse with new values; the GPU plan must
   have no row records. */
static int RunNoRecord(GenCSR *A, GenCSR *B, int workflow, int registers, double coef, int device)
{
  OceanProduct        pg = NULL, pc = NULL;
  OceanOptions        o;
  OceanCSR            a, b, ga, gb;
  DevMat              dA, dB;
  const OceanRowInfo *rows;
  int64_t             nrows;
  OceanError          e;
  int                 k, r = 1;

  memset(&dA, 0, sizeof(dA));
  memset(&dB, 0, sizeof(dB));
  Options(&o, workflow, registers, coef);
  o.record_rows = 0;
  CALL(OceanContextSetOptions(gpu, &o));
  CALL(OceanContextSetOptions(cpu, &o));
  a  = GenView(A);
  b  = GenView(B);
  ga = a;
  gb = b;
  if (device && (Upload(A, &dA, &ga) || Upload(B, &dB, &gb))) goto out;
  CALL(OceanProductCreate(gpu, OCEAN_PRODUCT_AB, &pg));
  CALL(OceanProductCreate(cpu, OCEAN_PRODUCT_AB, &pc));
  if (device) CALL(OceanProductSetOperandMemType(pg, OCEAN_MEMORY_DEVICE));
  CALL(OceanProductSymbolic(pg, &ga, &gb));
  CALL(OceanProductSymbolic(pc, &a, &b));
  if (CompareStats(pg, pc) || CompareBackends(pg, pc)) goto out;
  e = OceanProductGetRowInfo(pg, 0, &rows, &nrows);
  if (e != OCEAN_ERR_STATE) {
    snprintf(msg, sizeof(msg), "row records without record_rows: %s, expected OCEAN_ERR_STATE", OceanErrorString(e));
    goto out;
  }
  if (A->id && B->id)
    for (k = 0; k < 2; k++) {
      GenFillValues(A, GEN_VALUES_STREAM, 5000 + (uint64_t)k);
      GenFillValues(B, GEN_VALUES_STREAM, 6000 + (uint64_t)k);
      if (device && (cudaMemcpy(dA.values, A->values, (size_t)GenNnz(A) * sizeof(double), cudaMemcpyHostToDevice) !=
                       cudaSuccess ||
                     cudaMemcpy(dB.values, B->values, (size_t)GenNnz(B) * sizeof(double), cudaMemcpyHostToDevice) !=
                       cudaSuccess)) {
        snprintf(msg, sizeof(msg), "uploading new values failed");
        goto out;
      }
      CALL(OceanProductNumeric(pg, &ga, &gb));
      CALL(OceanProductNumeric(pc, &a, &b));
      if (CompareStats(pg, pc) || CompareBackends(pg, pc)) goto out;
    }
  r = 0;
out:
  OceanProductDestroy(&pg);
  OceanProductDestroy(&pc);
  DevFree(&dA);
  DevFree(&dB);
  return r;
}

static int CaseNoRecord(GenCSR *A, GenCSR *B, int workflow, int registers, double coef, int device)
{
  int r = RunNoRecord(A, B, workflow, registers, coef, device);
  GenFree(A);
  if (B != A) GenFree(B);
  return r;
}

/* A small product's waits (device operands, no records, the pool warm from a first plan): its symbolic call waits
   twice (the analysis read back with the upper bound's plan, then C's size; its statistics come with the next wait),
   a numeric-only call not at all once the first two have grouped C's rows and made the product map, and C and the
   decisions are the CPU's.  The device's phase timers are off by default (the phase times 0) and time the phases
   when OceanOptions.device_timers is set. */
static int RunSmallWaits(GenCSR *A)
{
  OceanProduct pg = NULL, pc = NULL;
  OceanOptions o;
  OceanStats   s;
  OceanCSR     a, ga;
  DevMat       dA;
  int          k, r = 1;

  memset(&dA, 0, sizeof(dA));
  Options(&o, -1, 0, 0);
  o.record_rows         = 0;
  o.reuse_map_max_bytes = -1;
  CALL(OceanContextSetOptions(gpu, &o));
  CALL(OceanContextSetOptions(cpu, &o));
  a = GenView(A);
  if (Upload(A, &dA, &ga)) goto out;
  CALL(OceanProductCreate(cpu, OCEAN_PRODUCT_AB, &pc));
  CALL(OceanProductSymbolic(pc, &a, &a));
  for (k = 0; k < 2; k++) {
    OceanProductDestroy(&pg);
    CALL(OceanProductCreate(gpu, OCEAN_PRODUCT_AB, &pg));
    CALL(OceanProductSetOperandMemType(pg, OCEAN_MEMORY_DEVICE));
    CALL(OceanProductSymbolic(pg, &ga, &ga));
  }
  CALL(OceanProductGetStats(pg, 0, &s));
  if (s.workflow != OCEAN_WORKFLOW_UPPER_BOUND || s.host_waits != 2) {
    snprintf(msg, sizeof(msg),
             "workflow %s (the upper bound expected), the symbolic call waited %lld times (2 expected)",
             OceanWorkflowName(s.workflow), (long long)s.host_waits);
    goto out;
  }
  if (CompareStats(pg, pc) || CompareBackends(pg, pc)) goto out;
  for (k = 0; k < 3; k++) {
    if (OceanProductNumeric(pg, &ga, &ga) || OceanProductGetStats(pg, 0, &s)) {
      snprintf(msg, sizeof(msg), "numeric call %d: %s", k, OceanGetLastErrorMessage());
      goto out;
    }
  }
  if (s.host_waits != 0 || s.reuse_map_bytes == 0 || s.t_numeric != 0) {
    snprintf(msg, sizeof(msg),
             "the third numeric-only call waited %lld times for the device (map of %lld bytes), timed %g s without "
             "the device timers",
             (long long)s.host_waits, (long long)s.reuse_map_bytes, s.t_numeric);
    goto out;
  }
  CALL(OceanProductNumeric(pc, &a, &a));
  if (CompareBackends(pg, pc)) goto out;
  o.device_timers = 1;
  CALL(OceanContextSetOptions(gpu, &o));
  if (OceanProductSymbolic(pg, &ga, &ga) || OceanProductGetStats(pg, 0, &s)) {
    snprintf(msg, sizeof(msg), "symbolic with the device timers: %s", OceanGetLastErrorMessage());
    goto out;
  }
  if (!(s.t_analysis > 0 && s.t_numeric > 0 && s.t_compact > 0 && s.host_waits == 2)) {
    snprintf(msg, sizeof(msg), "with the device timers: analysis %g, numeric %g, compact %g s, %lld waits",
             s.t_analysis, s.t_numeric, s.t_compact, (long long)s.host_waits);
    goto out;
  }
  if (OceanProductNumeric(pg, &ga, &ga) || OceanProductGetStats(pg, 0, &s) || !(s.t_numeric > 0)) {
    snprintf(msg, sizeof(msg), "numeric-only call with the device timers: %g s (%s)", s.t_numeric,
             OceanGetLastErrorMessage());
    goto out;
  }
  if (CompareBackends(pg, pc)) goto out;
  r = 0;
out:
  OceanProductDestroy(&pg);
  OceanProductDestroy(&pc);
  DevFree(&dA);
  return r;
}

/* The analysis plans the rows by their upper bounds when it guesses, from the operands' sizes, that the product is
   small; here the guess is wrong (R-MAT's skewed rows: small_bound set to the guess, its bounds total more and its rows
   average more than ub_products_per_row products), the plan goes unused and the sampled workflow runs: C and every
   decision are the CPU's. */
static int RunUnusedPlan(GenCSR *A)
{
  OceanOptions o;
  OceanStats   s;
  OceanProduct pg = NULL;
  OceanCSR     a  = GenView(A);
  OceanError   e;

  Options(&o, -1, 0, 0);
  o.small_bound = (int64_t)((double)GenNnz(A) * (double)GenNnz(A) / (double)A->nrows);
  if (RunAB(&o, A, A, 0, 1)) return 1;
  CALL(OceanContextSetOptions(gpu, &o));
  CALL(OceanProductCreate(gpu, OCEAN_PRODUCT_AB, &pg));
  e = OceanProductSymbolic(pg, &a, &a);
  if (!e) e = OceanProductGetStats(pg, 0, &s);
  OceanProductDestroy(&pg);
  CALL(e);
  CHECK(s.workflow != OCEAN_WORKFLOW_UPPER_BOUND && s.sampled_rows > 0 && s.bound_nnz > o.small_bound,
        "workflow %s with %lld sampled rows and bounds of %lld entries (small_bound %lld): the plan was used",
        OceanWorkflowName(s.workflow), (long long)s.sampled_rows, (long long)s.bound_nnz, (long long)o.small_bound);
  return 0;
}

static int CaseSmallWaits(GenCSR *A)
{
  int r = RunSmallWaits(A);
  GenFree(A);
  return r;
}

static int CaseUnusedPlan(GenCSR *A)
{
  int r = RunUnusedPlan(A);
  GenFree(A);
  return r;
}

static void Report(const char *name, int failed, double seconds)
{
  if (failed) {
    nfail++;
    printf("FAIL %-40s %s\n", name, msg);
  } else {
    npass++;
    printf("ok   %-40s %7.2fs\n", name, seconds);
  }
  fflush(stdout);
}

static double Now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* -only TEXT[|TEXT...]: the cases whose names contain one of the texts, separated by '|' as names have commas (the
   others' operands, generated before the case, are not freed: not for memcheck's leak check) */
static const char *only;

static int Selected(const char *name)
{
  const char *t = only;
  char        part[128];
  if (!only) return 1;
  while (*t) {
    size_t n = strcspn(t, "|");
    if (n && n < sizeof(part)) {
      memcpy(part, t, n);
      part[n] = 0;
      if (strstr(name, part)) return 1;
    }
    t += n + (t[n] == '|');
  }
  return 0;
}

#define CASE(name, body) \
  do { \
    double t0_ = Now(); \
    int    f_; \
    if (!Selected(name)) break; \
    msg[0] = 0; \
    f_     = (body); \
    Report(name, f_, Now() - t0_); \
  } while (0)

static int CaseAB(GenCSR *A, GenCSR *B, int workflow, int registers, double coef, int expect_overflow, int reuse)
{
  OceanOptions o;
  int          r;
  Options(&o, workflow, registers, coef);
  r = RunAB(&o, A, B, expect_overflow, reuse);
  GenFree(A);
  if (B != A) GenFree(B);
  return r;
}

/* The CPU backend's per-row decisions for A*B under the options (the GPU's must equal them): *p to destroy. */
static int CpuRoutes(const OceanOptions *o, const GenCSR *A, const GenCSR *B, OceanProduct *p,
                     const OceanRowInfo **rows, int64_t *nrows)
{
  const OceanCSR a = GenView(A), b = GenView(B);
  CALL(OceanContextSetOptions(cpu, o));
  CALL(OceanProductCreate(cpu, OCEAN_PRODUCT_AB, p));
  CALL(OceanProductSymbolic(*p, &a, &b));
  CALL(OceanProductGetRowInfo(*p, 0, rows, nrows));
  return 0;
}

/* Rows of N0 run as warp teams: pairs of operands whose rows of C, by the CPU backend's decisions, take N0 with each
   way a warp team writes its row (a rank count of 2 or 4 entries a lane, the bitonic sort above 128 entries) and
   N0's dense accumulator.  Pairs 0, 2, 3: random A (k entries a row) times random B (p a row over ncols columns);
   pair 1: banded A (10 consecutive columns) times B whose rows draw 8 of 48 columns 100 apart, the same 48 for 100
   consecutive rows, so a row of C has 80 products and about 40 entries spread over 4,800 columns (a hash row). */
static void PairN0(int which, GenCSR *A, GenCSR *B)
{
  static const int     k[4] = {10, 10, 20, 10}, p[4] = {8, 8, 10, 10};
  static const int64_t ncols[4] = {100000, 250000, 100000, 400};
  const uint64_t       id       = 70 + (uint64_t)which;
  if (which != 1) {
    GenRandomRows(A, 3000, 5000, k[which], 0, id, id);
    GenRandomRows(B, 5000, ncols[which], p[which], 0, id + 10, id + 10);
    return;
  }
  memset(A, 0, sizeof(*A));
  memset(B, 0, sizeof(*B));
  GenAlloc(A, 3000, 5000, 3000 * (int64_t)k[1], id);
  for (int64_t i = 0; i < 3000; i++) {
    A->rowptr[i + 1] = A->rowptr[i] + k[1];
    for (int t = 0; t < k[1]; t++) A->colidx[A->rowptr[i] + t] = (int32_t)(i % (5000 - k[1] + 1) + t);
  }
  GenAlloc(B, 5000, ncols[1], 5000 * (int64_t)p[1], id + 10);
  GenRandSeed(id + 10);
  for (int64_t j = 0; j < 5000; j++) {
    int32_t *c       = B->colidx + j * p[1];
    int      n       = 0;
    B->rowptr[j + 1] = B->rowptr[j] + p[1];
    while (n < p[1]) { /* p distinct of the 48 */
      const int32_t col = (int32_t)(j / 100 * 5000 + 100 * (int64_t)(GenRand64() % 48));
      int           dup = 0;
      for (int t = 0; t < n; t++) dup |= c[t] == col;
      if (!dup) c[n++] = col;
    }
    GenSortUnique(c, p[1]);
  }
  GenFillValues(A, GEN_VALUES_STREAM, id);
  GenFillValues(B, GEN_VALUES_STREAM, id + 10);
}

static int CaseN0Teams(int workflow, int registers, double coef)
{
  int64_t ways[4] = {0, 0, 0, 0}; /* N0 hash rows of 33-64, 65-128 and over 128 entries; N0 dense rows */
  for (int w = 0; w < 4; w++) {
    GenCSR              A, B;
    OceanOptions        o;
    OceanProduct        pc;
    const OceanRowInfo *ri;
    int64_t             n;
    PairN0(w, &A, &B);
    Options(&o, workflow, registers, coef);
    if (CpuRoutes(&o, &A, &B, &pc, &ri, &n)) return 1;
    for (int64_t i = 0; i < n; i++) {
      if (ri[i].bin != OCEAN_BIN_N0) continue;
      if (ri[i].accumulator == OCEAN_ACC_DENSE) ways[3]++;
      else if (ri[i].accumulator == OCEAN_ACC_HASH && ri[i].nnz > 32)
        ways[ri[i].nnz <= 64 ? 0 : ri[i].nnz <= 128 ? 1 : 2]++;
    }
    OceanProductDestroy(&pc);
    if (CaseAB(&A, &B, workflow, registers, coef, 0, 1)) return 1;
  }
  CHECK(ways[0] && ways[1] && ways[2] && ways[3],
        "N0 rows: hash with 33-64 entries %lld, 65-128 %lld, over 128 %lld; dense %lld (each expected)",
        (long long)ways[0], (long long)ways[1], (long long)ways[2], (long long)ways[3]);
  return 0;
}

/* D = A with the rows i % every == first replaced by full rows (every column, random values); A is freed. */
static void MatFullRows(GenCSR *A, int64_t every, int64_t first, uint64_t id, GenCSR *D)
{
  int64_t i, nz = 0, t, nfull = A->nrows > first ? (A->nrows - 1 - first) / every + 1 : 0;

  GenAlloc(D, A->nrows, A->ncols, GenNnz(A) + nfull * A->ncols, id);
  for (i = 0; i < A->nrows; i++) {
    if (i % every == first)
      for (t = 0; t < A->ncols; t++) {
        D->colidx[nz]   = (int32_t)t;
        D->values[nz++] = GenRandValue();
      }
    else
      for (t = A->rowptr[i]; t < A->rowptr[i + 1]; t++) {
        D->colidx[nz]   = A->colidx[t];
        D->values[nz++] = A->values[t];
      }
    D->rowptr[i + 1] = nz;
  }
  GenFree(A);
}

/* LONG rows: full rows of A (acols columns) over a B of ncols columns, 5 per row (5 x acols products each); the CPU
   backend (whose decisions the GPU's must equal) must route them to acc, then CaseAB. */
static int CaseLong(int64_t acols, int64_t ncols, OceanAccumulator acc, int workflow, int registers, double coef,
                    int expect_overflow, uint64_t seed)
{
  GenCSR              A, B, D;
  OceanOptions        o;
  OceanProduct        p;
  const OceanRowInfo *rows;
  int64_t             nrows, i, nacc = 0;

  GenRandomRows(&A, 64, acols, 4, 0, seed, 0);
  MatFullRows(&A, 16, 3, seed, &D);
  GenRandomRows(&B, acols, ncols, 5, 0, seed + 1, seed + 1);
  case_heavy        = OCEAN_HEAVY_OFF; /* the full rows' products would make them heavy */
  case_bound_factor = 0;               /* and their likely sizes (8 x 5) would take them to a shared-memory table */
  Options(&o, workflow, registers, coef);
  if (CpuRoutes(&o, &D, &B, &p, &rows, &nrows)) return 1;
  for (i = 0; i < nrows; i++) nacc += rows[i].bin == OCEAN_BIN_LONG && rows[i].accumulator == acc;
  OceanProductDestroy(&p);
  if (nacc != 4) {
    snprintf(msg, sizeof(msg), "%lld LONG rows with accumulator %s, expected the 4 full rows", (long long)nacc,
             OceanAccumulatorName(acc));
    GenFree(&D);
    GenFree(&B);
    case_heavy        = OCEAN_HEAVY_AUTO;
    case_bound_factor = -1;
    return 1;
  }
  i                 = CaseAB(&D, &B, workflow, registers, coef, expect_overflow, 1);
  case_heavy        = OCEAN_HEAVY_AUTO;
  case_bound_factor = -1;
  return (int)i;
}

/* Heavy rows (the multisplit) with the given options (threshold 0: auto mode, the device's own parameters): the CPU
   backend's plan must make `levels` levels and heavy rows (and, forced over several levels, dense chunks); then both
   backends through CaseAB (decisions, heavy statistics, C, numeric reuse). */
static int CaseHeavy(GenCSR *A, GenCSR *B, int workflow, int64_t threshold, int64_t columns, int64_t per_level,
                     int levels, int expect_overflow)
{
  OceanOptions o;
  OceanProduct p;
  OceanStats   st;
  OceanCSR     a = GenView(A), b = GenView(B);
  int          r;

  case_heavy           = threshold ? OCEAN_HEAVY_MULTISPLIT : OCEAN_HEAVY_AUTO;
  case_heavy_threshold = threshold;
  case_heavy_columns   = columns;
  case_heavy_per_level = per_level;
  Options(&o, workflow, workflow == OCEAN_WORKFLOW_ESTIMATE && expect_overflow ? 16 : 0,
          workflow == OCEAN_WORKFLOW_ESTIMATE && expect_overflow ? 0.3 : 0);
  CALL(OceanContextSetOptions(cpu, &o));
  CALL(OceanProductCreate(cpu, OCEAN_PRODUCT_AB, &p));
  CALL(OceanProductSymbolic(p, &a, &b));
  CALL(OceanProductGetStats(p, 0, &st));
  OceanProductDestroy(&p);
  if (st.heavy_rows == 0 || st.heavy_levels != levels || (threshold && levels > 1 && st.heavy_dense_chunks == 0)) {
    snprintf(msg, sizeof(msg), "cpu plan: %lld heavy rows, %d levels (expected %d), %lld dense chunks",
             (long long)st.heavy_rows, st.heavy_levels, levels, (long long)st.heavy_dense_chunks);
    GenFree(A); /* as CaseAB would */
    if (B != A) GenFree(B);
    r = 1;
  } else r = CaseAB(A, B, workflow, o.hll_registers, o.estimate_coefficient, expect_overflow, 1);
  case_heavy           = OCEAN_HEAVY_AUTO;
  case_heavy_threshold = case_heavy_columns = case_heavy_per_level = 0;
  return r;
}

/* Heavy rows of three kinds in the exact workflow, in one batch: B's first 1,000 rows draw 12 columns of the first
   300,000, the others 6 of 3,000,000; A's rows 3, 19, ... are full (18,000 products spanning 3M columns: heavy in the
   symbolic pass too, its multisplit puts their chunks' counts in their cells), its rows 7, 23, ... hold its first
   1,000 columns (12,000 products over 300,000 columns: counted in a shared-memory bitmap by cells) and its rows 11,
   27, ... its columns 1,000 to 1,799 (about 5,000 products over 3M columns: counted in a shared hash by cells).  All
   are heavy in the numeric pass (more than 4,096 products over more than heavy_min_span's columns) and all have their
   chunks written straight into C.  With a memory limit, C is made in row chunks; with per_level (chunks a level
   makes, 0: the device's), the rows go through `levels` levels, the chunks of the earlier ones written into C from
   their first cell. */
static int CaseHeavyInPlace(int64_t memory_limit, int64_t per_level, int levels)
{
  GenCSR  A, B;
  int64_t i, t, nz = 0, start, rows = 0;
  int     r;

  GenRandomRows(&B, 2000, 3000000, 12, 0, 87, 87);
  for (i = 0, start = 0; i < B.nrows; i++) { /* the first 1,000 rows: a tenth of the columns; the others: every other */
    const int64_t end = B.rowptr[i + 1], row0 = nz;
    for (t = start; t < end; t++) {
      const int32_t c = i < 1000 ? B.colidx[t] / 10 : B.colidx[t];
      if ((i >= 1000 && (t - start) % 2) || (nz > row0 && B.colidx[nz - 1] == c)) continue; /* dropped, a repeat */
      B.colidx[nz]   = c;
      B.values[nz++] = B.values[t];
    }
    start           = end;
    B.rowptr[i + 1] = nz;
  }
  GenAlloc(&A, 64, 2000, 64 * 2000, 88);
  for (i = 0, nz = 0; i < A.nrows; i++) {
    const int64_t n = i % 16 == 3 ? 2000 : i % 16 == 7 ? 1000 : i % 16 == 11 ? 800 : 4;
    for (t = 0; t < n; t++) {
      A.colidx[nz]   = (int32_t)(n == 4 ? 1500 + 100 * t + i : n == 800 ? 1000 + t : t);
      A.values[nz++] = GenRandValue();
    }
    A.rowptr[i + 1] = nz;
    rows += n > 4;
  }
  case_memory_limit = memory_limit;
  r                 = CaseHeavy(&A, &B, OCEAN_WORKFLOW_EXACT, 0, 0, per_level, levels, 0);
  case_memory_limit = 0;
  if (r) return 1;
  CHECK(last_stats.heavy_rows == rows && last_stats.heavy_rows_in_place == rows,
        "%lld heavy rows (expected %lld), %lld of them written in place (expected all)",
        (long long)last_stats.heavy_rows, (long long)rows, (long long)last_stats.heavy_rows_in_place);
  CHECK(!memory_limit || last_stats.row_chunks > 1, "C of %lld entries under a %lld-byte limit: %lld row chunks",
        (long long)last_stats.nnz_c, (long long)memory_limit, (long long)last_stats.row_chunks);
  return 0;
}

static int64_t CsrBytes(const GenCSR *M)
{
  return (M->nrows + 1) * (int64_t)sizeof(int64_t) + GenNnz(M) * (int64_t)(sizeof(int32_t) + sizeof(double));
}

/* Host operands with structure ids go through the context's device mirrors: a later plan with the same ids and
   values ids uploads nothing (PtAP after A*P, as GAMG does), a new values id uploads only those values, a values id
   of 0 always uploads them, and B with A's structure but other values is not read from A's mirror. */
static int CaseMirrors(void)
{
  GenCSR       A, B, P, R;
  double      *absval = NULL;
  OceanCSR     a, b, p;
  OceanProduct ab = NULL, ptap = NULL, ptapc = NULL, aa = NULL;
  OceanOptions o;
  OceanStats   st;
  int          r = 1;

  memset(&R, 0, sizeof(R));
  GenStencil(&A, 12, 12, 12, 1, 1, GEN_VALUES_STREAM_DIAG, 95, 95);
  GenInterpolation(&P, A.nrows, A.nrows / 8, 96, 96);
  Options(&o, OCEAN_WORKFLOW_AUTO, 0, 0);
  CALL(OceanContextSetOptions(gpu, &o));
  CALL(OceanContextSetOptions(cpu, &o));
  CALL(OceanContextTrimDeviceMemory(gpu)); /* no mirrors left by earlier cases */
  a           = GenView(&A);
  p           = GenView(&P);
  a.values_id = 1;
  p.values_id = 2;
  CALL(OceanProductCreate(gpu, OCEAN_PRODUCT_AB, &ab));
  CALL(OceanProductSymbolic(ab, &a, &p));
  CALL(OceanProductGetStats(ab, 0, &st));
  if (st.uploaded_bytes != CsrBytes(&A) + CsrBytes(&P)) {
    snprintf(msg, sizeof(msg), "A*P uploaded %lld bytes, its operands have %lld", (long long)st.uploaded_bytes,
             (long long)(CsrBytes(&A) + CsrBytes(&P)));
    goto out;
  }
  GenRefMultiply(&A, &P, &R, &absval);
  if (CompareRef(ab, &R, absval)) goto out;

  CALL(OceanProductCreate(gpu, OCEAN_PRODUCT_PtAP, &ptap));
  CALL(OceanProductCreate(cpu, OCEAN_PRODUCT_PtAP, &ptapc));
  CALL(OceanProductSymbolic(ptap, &a, &p));
  CALL(OceanProductSymbolic(ptapc, &a, &p));
  CALL(OceanProductGetStats(ptap, 0, &st));
  if (st.uploaded_bytes != 0) {
    snprintf(msg, sizeof(msg), "PtAP after A*P with the same ids uploaded %lld bytes", (long long)st.uploaded_bytes);
    goto out;
  }
  if (CompareBackends(ptap, ptapc)) goto out;

  GenFillValues(&A, GEN_VALUES_STREAM, 97);
  a.values_id = 3;
  CALL(OceanProductNumeric(ab, &a, &p));
  CALL(OceanProductGetStats(ab, 0, &st));
  if (st.uploaded_bytes != GenNnz(&A) * (int64_t)sizeof(double)) {
    snprintf(msg, sizeof(msg), "new values of A: %lld bytes uploaded, %lld expected", (long long)st.uploaded_bytes,
             (long long)(GenNnz(&A) * (int64_t)sizeof(double)));
    goto out;
  }
  GenFree(&R);
  free(absval);
  GenRefMultiply(&A, &P, &R, &absval);
  if (CompareRef(ab, &R, absval)) goto out;
  CALL(OceanProductNumeric(ptap, &a, &p)); /* A's mirror is current: nothing to upload */
  CALL(OceanProductNumeric(ptapc, &a, &p));
  CALL(OceanProductGetStats(ptap, 0, &st));
  if (st.uploaded_bytes != 0 || CompareBackends(ptap, ptapc)) {
    if (!msg[0])
      snprintf(msg, sizeof(msg), "PtAP numeric after A's values went up: %lld bytes uploaded",
               (long long)st.uploaded_bytes);
    goto out;
  }
  a.values_id = 0; /* unknown values: uploaded every time */
  CALL(OceanProductNumeric(ab, &a, &p));
  CALL(OceanProductGetStats(ab, 0, &st));
  if (st.uploaded_bytes != GenNnz(&A) * (int64_t)sizeof(double)) {
    snprintf(msg, sizeof(msg), "values id 0: %lld bytes uploaded, %lld expected", (long long)st.uploaded_bytes,
             (long long)(GenNnz(&A) * (int64_t)sizeof(double)));
    goto out;
  }

  GenCopy(&A, &B); /* A's structure id and structure, other values */
  GenFillValues(&B, GEN_VALUES_STREAM, 98);
  b           = GenView(&B);
  a.values_id = 3;
  b.values_id = 4;
  CALL(OceanProductCreate(gpu, OCEAN_PRODUCT_AB, &aa));
  CALL(OceanProductSymbolic(aa, &a, &b));
  GenFree(&R);
  free(absval);
  GenRefMultiply(&A, &B, &R, &absval);
  if (CompareRef(aa, &R, absval)) goto out;
  GenFree(&B);
  r = 0;
out:
  OceanProductDestroy(&ab);
  OceanProductDestroy(&ptap);
  OceanProductDestroy(&ptapc);
  OceanProductDestroy(&aa);
  GenFree(&R);
  free(absval);
  GenFree(&A);
  GenFree(&P);
  return r;
}

/* Every stage of a fresh GPU plan (auto options) takes the NARROW workflow. */
static int StagesNarrow(OceanProductType type, GenCSR *A, GenCSR *B)
{
  OceanProduct p;
  OceanOptions o;
  OceanCSR     a = GenView(A), b = GenView(B);
  OceanStats   st;
  int          ns, s;

  Options(&o, OCEAN_WORKFLOW_AUTO, 0, 0);
  CALL(OceanContextSetOptions(gpu, &o));
  CALL(OceanProductCreate(gpu, type, &p));
  CALL(OceanProductSymbolic(p, &a, &b));
  CALL(OceanProductGetNumStages(p, &ns));
  for (s = 0; s < ns; s++) {
    CALL(OceanProductGetStats(p, s, &st));
    CHECK(st.workflow == OCEAN_WORKFLOW_NARROW && !st.workflow_forced,
          "stage %d took %s (B %lld x %lld with %lld nonzeros)", s, OceanWorkflowName(st.workflow), (long long)B->nrows,
          (long long)B->ncols, (long long)GenNnz(B));
  }
  OceanProductDestroy(&p);
  return 0;
}

/* AB of a narrow B chosen automatically: then CaseAB (reference, decisions, reuse). */
static int CaseNarrowAB(GenCSR *A, GenCSR *B)
{
  if (StagesNarrow(OCEAN_PRODUCT_AB, A, B)) return 1;
  return CaseAB(A, B, OCEAN_WORKFLOW_AUTO, 0, 0, 0, 1);
}

/* PtAP of a coarse level: both stages narrow; the backends agree (with reuse); device-resident operands too. */
static int CaseNarrowPtAP(GenCSR *S, GenCSR *P)
{
  GenCSR Sd, Pd;
  if (StagesNarrow(OCEAN_PRODUCT_PtAP, S, P) || RunType(OCEAN_PRODUCT_PtAP, S, P)) return 1;
  GenCopy(S, &Sd);
  GenCopy(P, &Pd);
  GenFree(S);
  GenFree(P);
  return CaseDevice(OCEAN_PRODUCT_PtAP, &Sd, &Pd);
}

/* Forced NARROW over a B of ncols columns (the kernel's column blocks 32..256, partial ones included), A with
   empty rows and a full row. */
static int CaseNarrowForced(int64_t ncols, uint64_t seed)
{
  GenCSR A, D, B;
  GenRandomRows(&A, 500, 400, 30, 9, seed, 0);
  MatFullRows(&A, 500, 41, seed, &D);
  D.id = seed;
  GenRandomRows(&B, 400, ncols, ncols < 8 ? 1 : 8, 11, seed + 1, seed + 1);
  return CaseAB(&D, &B, OCEAN_WORKFLOW_NARROW, 0, 0, 0, 1);
}

/* c[k..n): random columns in [lo, hi) distinct from each other and from c[0..k), then c[0..n) sorted. */
static void RandomDistinctColumns(int32_t *c, int k, int n, int64_t lo, int64_t hi)
{
  while (k < n) {
    for (int t = k; t < n; t++) c[t] = (int32_t)(lo + (int64_t)(GenRand64() % (uint64_t)(hi - lo)));
    k = (int)GenSortUnique(c, n);
  }
}

/* Rows of B far longer than the rest under rows of C that the shared-memory bins N1-N4 take: B's rows 0-19 have
   300-1200 entries, the others 6 (200000 columns); row i of A has entry i % 20 and 40 others, so each row of C has one
   long row of B beside 40 short ones (540-1440 products, as many entries).  The block-wide teams list the long rows and
   walk them with all their threads; the CPU backend's decisions must put the rows in N1-N4 (counted), then CaseAB. */
static int CaseLongRowsOfB(int workflow)
{
  GenCSR              A, B;
  OceanOptions        o;
  OceanProduct        pc;
  const OceanRowInfo *ri;
  int64_t             n, in_teams = 0;
  const int64_t       m = 3000, nb = 5000, ncols = 200000;

  GenAlloc(&B, nb, ncols, 20 * 1200 + nb * 6, 90);
  GenAlloc(&A, m, nb, m * 41, 91);
  GenRandSeed(92);
  for (int64_t j = 0; j < nb; j++) {
    const int len = j < 20 ? 300 + 100 * (int)(j % 10) : 6;
    RandomDistinctColumns(B.colidx + B.rowptr[j], 0, len, 0, ncols);
    B.rowptr[j + 1] = B.rowptr[j] + len;
  }
  for (int64_t i = 0; i < m; i++) {
    A.colidx[A.rowptr[i]] = (int32_t)(i % 20);
    RandomDistinctColumns(A.colidx + A.rowptr[i], 1, 41, 20, nb);
    A.rowptr[i + 1] = A.rowptr[i] + 41;
  }
  GenFillValues(&A, GEN_VALUES_STREAM, 91);
  GenFillValues(&B, GEN_VALUES_STREAM, 90);
  Options(&o, workflow, 0, 0);
  if (CpuRoutes(&o, &A, &B, &pc, &ri, &n)) return 1;
  for (int64_t i = 0; i < n; i++) in_teams += ri[i].bin >= OCEAN_BIN_N1 && ri[i].bin <= OCEAN_BIN_N4;
  OceanProductDestroy(&pc);
  CHECK(in_teams == m, "rows of C in N1-N4: %lld of %lld", (long long)in_teams, (long long)m);
  return CaseAB(&A, &B, workflow, 0, 0, 0, 1);
}

/* Short rows of C (B has 600 columns, too many for the narrow workflow) under rows of A from 1 to 40000 entries: light
   rows beside full rows of about 120000 products each, which the known-structure kernels and the product map must
   spread over many threads, with reuse. */
static int CaseShortRowsManyProducts(uint64_t seed)
{
  GenCSR A, D, B;
  GenRandomRows(&A, 300, 40000, 20, 7, seed, 0);
  MatFullRows(&A, 40, 5, seed, &D);
  GenRandomRows(&B, 40000, 600, 3, 0, seed + 1, seed + 1);
  return CaseAB(&D, &B, -1, 0, 0, 0, 1);
}

/* The cases whose numeric reuse sums through the product map (case_reuse_map -1), and with case_reuse_map 0 searches
   C's rows instead: every class of row of the known-structure kernels.  mode ends each case's name. */
static void ReuseCases(const char *mode)
{
  GenCSR A, B;
  char   name[200];

#define REUSE_CASE(title, body) \
  do { \
    snprintf(name, sizeof(name), "%s (+reuse%s)", title, mode); \
    CASE(name, body); \
  } while (0)
  GenStencil(&A, 700, 700, 1, 1, 0, GEN_VALUES_STREAM_DIAG, 47, 47);
  GenCopy(&A, &B);
  REUSE_CASE("AB lap2d 700^2: operands and C in several staged chunks", CaseAB(&A, &B, -1, 0, 0, 0, 1));
  GenStencil(&A, 8, 8, 8, 3, 1, GEN_VALUES_STREAM_DIAG, 14, 14);
  GenCopy(&A, &B);
  REUSE_CASE("AB elasticity 8^3x3", CaseAB(&A, &B, -1, 0, 0, 0, 1));
  GenRmatStream(&A, 11, 8, 15, 15);
  GenCopy(&A, &B);
  REUSE_CASE("AB rmat 11/8", CaseAB(&A, &B, -1, 0, 0, 0, 1));
  REUSE_CASE("AB short rows of C, some of 120000 products", CaseShortRowsManyProducts(74));
  REUSE_CASE("AB LONG rows, dense in global memory", CaseLong(2000, 30000, OCEAN_ACC_GLOBAL_DENSE, -1, 0, 0, 0, 60));
  REUSE_CASE("AB LONG rows, hash in global memory", CaseLong(2000, 2000000, OCEAN_ACC_GLOBAL_HASH, -1, 0, 0, 0, 66));
#undef REUSE_CASE
}

/* Numeric reuse when B's structure changed under the same ids (device-resident operands: a host B's mirror would keep
   the structure its id promises): a row of B gets its last column, b_cols - 1, which no row of B had, so C's rows
   lack it, and the first numeric call finds it (the narrow workflow's; the product map's count, or the search in C's
   rows with map_bytes 0): OCEAN_ERR_STATE, from the numeric call (C in row chunks waits there) or, the work being
   queued only, from OceanProductSync; and again from the next numeric call's OceanProductGetC. */
static int CaseMismatch(int workflow, int64_t a_degree, int64_t b_cols, int64_t map_bytes, int64_t memory_limit,
                        uint64_t seed)
{
  GenCSR       A, B;
  OceanOptions o;
  OceanProduct p;
  OceanCSR     da, db;
  DevMat       dA, dB;
  OceanError   e;
  int64_t      at;
  int32_t      col = (int32_t)(b_cols - 1);
  int          queued; /* the numeric call returned before the device's check (not C in row chunks) */

  GenRandomRows(&A, 200, 300, a_degree, 0, seed, seed);
  GenRandomRows(&B, 300, b_cols - 1, 16, 0, seed + 1, seed + 1);
  B.ncols = b_cols; /* the last column empty */
  Options(&o, workflow, 0, 0);
  o.reuse_map_max_bytes = map_bytes;
  o.device_memory_limit = memory_limit;
  CALL(OceanContextSetOptions(gpu, &o));
  if (Upload(&A, &dA, &da) || Upload(&B, &dB, &db)) return 1;
  CALL(OceanProductCreate(gpu, OCEAN_PRODUCT_AB, &p));
  CALL(OceanProductSetOperandMemType(p, OCEAN_MEMORY_DEVICE));
  CALL(OceanProductSymbolic(p, &da, &db));
  if (memory_limit) {
    OceanStats st;
    CALL(OceanProductGetStats(p, 0, &st));
    CHECK(st.row_chunks > 1, "C of %lld entries under a %lld-byte limit: %lld row chunks", (long long)st.nnz_c,
          (long long)memory_limit, (long long)st.row_chunks);
  }
  at = B.rowptr[A.colidx[0] + 1] - 1; /* the last entry of the row of B that row 0 of A reaches first */
  CHECK(B.colidx[at] < col, "row %d of B ends at column %d", (int)A.colidx[0], (int)B.colidx[at]);
  CUDA_CALL(cudaMemcpy(dB.colidx + at, &col, sizeof(col), cudaMemcpyHostToDevice));
  e      = OceanProductNumeric(p, &da, &db);
  queued = e == OCEAN_SUCCESS;
  if (queued) e = OceanProductSync(p);
  CHECK(e == OCEAN_ERR_STATE && strstr(OceanGetLastErrorMessage(), "structure"),
        "a changed structure accepted by the numeric (workflow %s, map bytes %lld): %s: %s",
        OceanWorkflowName((OceanWorkflow)workflow), (long long)map_bytes, OceanErrorString(e),
        OceanGetLastErrorMessage());
  CHECK(!queued || OceanProductSync(p) == OCEAN_ERR_STATE, "the changed structure reported once only (workflow %s)",
        OceanWorkflowName((OceanWorkflow)workflow));
  e = OceanProductNumeric(p, &da, &db);
  if (e == OCEAN_SUCCESS) {
    const double *cv;
    e = OceanProductGetC(p, NULL, NULL, NULL, NULL, NULL, &cv);
  }
  CHECK(e == OCEAN_ERR_STATE && strstr(OceanGetLastErrorMessage(), "structure"),
        "a changed structure accepted by a second numeric call and OceanProductGetC (workflow %s, map bytes %lld): "
        "%s: %s",
        OceanWorkflowName((OceanWorkflow)workflow), (long long)map_bytes, OceanErrorString(e),
        OceanGetLastErrorMessage());
  OceanProductDestroy(&p);
  DevFree(&dA);
  DevFree(&dB);
  GenFree(&A);
  GenFree(&B);
  return 0;
}

/* A*B (B NULL: A*A) under a device-memory limit smaller than C: the over-allocating workflows switch to exact counting
   (reported as 2), and exact makes C in chunks of rows (each at most a quarter of the limit's entries, at least one
   row), on the host only: C is right, OceanProductGetDeviceC refuses, numeric reuse runs the chunks again. */
static int CaseMemoryLimit(GenCSR *A, GenCSR *B, int workflow, int64_t limit)
{
  OceanOptions   o;
  OceanProduct   p;
  OceanCSR       a, b;
  OceanStats     st;
  GenCSR         R;
  double        *absval;
  int64_t        m, nc, nz;
  const int64_t *drp;
  const int32_t *dci;
  const double  *dv;
  int            r  = 1;
  GenCSR        *Bm = B ? B : A;

  Options(&o, workflow, 0, 0);
  o.device_memory_limit = limit;
  CALL(OceanContextSetOptions(gpu, &o));
  a = GenView(A);
  b = GenView(Bm);
  CALL(OceanProductCreate(gpu, OCEAN_PRODUCT_AB, &p));
  CALL(OceanProductSymbolic(p, &a, &b));
  GenRefMultiply(A, Bm, &R, &absval);
  if (CompareRef(p, &R, absval)) goto out;
  CALL(OceanProductGetStats(p, 0, &st));
  if (st.switched_to_exact != (workflow == OCEAN_WORKFLOW_EXACT ? 0 : 2) || st.workflow != OCEAN_WORKFLOW_EXACT ||
      st.allocated_entries * 12 <= limit || st.row_chunks < st.allocated_entries * 12 * 4 / limit) {
    snprintf(msg, sizeof(msg),
             "forced %s with %lld bytes: switched %d, workflow %s, %lld entries allocated, %lld row chunks",
             OceanWorkflowName((OceanWorkflow)workflow), (long long)limit, st.switched_to_exact,
             OceanWorkflowName(st.workflow), (long long)st.allocated_entries, (long long)st.row_chunks);
    goto out;
  }
  if (OceanProductGetDeviceC(p, &m, &nc, &nz, &drp, &dci, &dv) != OCEAN_ERR_STATE) {
    snprintf(msg, sizeof(msg),
             "C made in %lld row chunks, yet OceanProductGetDeviceC did not fail with OCEAN_ERR_STATE",
             (long long)st.row_chunks);
    goto out;
  }
  GenFillValues(A, GEN_VALUES_STREAM, 3000);
  if (B) GenFillValues(B, GEN_VALUES_STREAM, 3001);
  GenFree(&R);
  free(absval);
  GenRefMultiply(A, Bm, &R, &absval);
  CALL(OceanProductNumeric(p, &a, &b));
  if (CompareRef(p, &R, absval)) goto out;
  CALL(OceanProductGetStats(p, 0, &st));
  if (st.row_chunks < 2) {
    snprintf(msg, sizeof(msg), "numeric reuse of a chunked C: %lld row chunks", (long long)st.row_chunks);
    goto out;
  }
  r = 0;
out:
  OceanProductDestroy(&p);
  GenFree(&R);
  free(absval);
  GenFree(A);
  if (B) GenFree(B);
  return r;
}

/* The most the mirrors held at any phase boundary of the products watched (a phase callback). */
static int64_t mirrors_most;
static void    WatchMirrors(void *ctx, OceanPhase phase, int begin, double flops)
{
  int64_t bytes = 0;
  (void)OceanContextGetDeviceMirrors((OceanContext)ctx, &bytes, NULL);
  if (bytes > mirrors_most) mirrors_most = bytes;
}

/* AB of host operands on both backends: C against the reference and the CPU backend's, and the bytes uploaded. */
static int RunMirrorAB(const OceanCSR *a, const OceanCSR *p, const GenCSR *A, const GenCSR *P, int64_t *uploaded)
{
  OceanProduct pg = NULL, pc = NULL;
  OceanStats   st;
  GenCSR       R;
  double      *absval = NULL;
  int          r      = 1;

  memset(&R, 0, sizeof(R));
  CALL(OceanProductCreate(gpu, OCEAN_PRODUCT_AB, &pg));
  CALL(OceanProductCreate(cpu, OCEAN_PRODUCT_AB, &pc));
  if (OceanProductSymbolic(pg, a, p) || OceanProductSymbolic(pc, a, p) || OceanProductGetStats(pg, 0, &st)) {
    snprintf(msg, sizeof(msg), "AB %lld x %lld: %s", (long long)A->nrows, (long long)P->ncols,
             OceanGetLastErrorMessage());
    goto out;
  }
  *uploaded = st.uploaded_bytes;
  GenRefMultiply(A, P, &R, &absval);
  if (CompareRef(pg, &R, absval) || CompareBackends(pg, pc)) goto out;
  r = 0;
out:
  OceanProductDestroy(&pg);
  OceanProductDestroy(&pc);
  GenFree(&R);
  free(absval);
  return r;
}

/*
  The mirrors under a byte limit L = bytes of (A2, P2), the larger pair: A1*P1, then A2*P2 (A1 and P1 evicted, least
  recently used first, while A2's mirror stays as P2's is made: A2*P2 again uploads nothing), then A1*P1 again (all
  re-uploaded).  Then a limit below A1's bytes: A1 goes into the stage's own buffers (numeric: only its values
  uploaded), in AB and PtAP.  C always equals the reference's and the CPU backend's; the mirrors never hold more than
  the limit (watched at every phase boundary); limit 0 is a quarter of the device's memory.
*/
static int RunMirrorLimit(GenCSR *A1, GenCSR *P1, GenCSR *A2, GenCSR *P2)
{
  OceanCSR      a1 = GenView(A1), p1 = GenView(P1), a2 = GenView(A2), p2 = GenView(P2);
  const int64_t b_a1 = CsrBytes(A1), b_p1 = CsrBytes(P1), b_a2 = CsrBytes(A2), b_p2 = CsrBytes(P2);
  OceanOptions  o;
  OceanProduct  ab = NULL, abc = NULL, ptap = NULL, ptapc = NULL;
  OceanStats    st;
  int64_t       limit = b_a2 + b_p2, got_limit, bytes, up;
  size_t        fr, total;
  int           r = 1;

  CHECK(b_a1 + b_p1 <= limit && b_a1 + b_p1 > b_p2,
        "setup: A1 and P1 (%lld bytes) must fit under the limit %lld, and pass it beside A2 and P2",
        (long long)(b_a1 + b_p1), (long long)limit);
  a1.values_id = 1, p1.values_id = 2, a2.values_id = 3, p2.values_id = 4; /* current mirrors upload nothing */
  Options(&o, OCEAN_WORKFLOW_AUTO, 0, 0);
  CALL(OceanContextSetOptions(gpu, &o));
  CALL(OceanContextSetOptions(cpu, &o));
  CALL(OceanContextTrimDeviceMemory(gpu));
  CALL(OceanContextSetDeviceMirrorLimit(gpu, 0));
  CALL(OceanContextGetDeviceMirrors(gpu, &bytes, &got_limit));
  CUDA_CALL(cudaMemGetInfo(&fr, &total));
  CHECK(bytes == 0 && got_limit == (int64_t)(total / 4),
        "default: %lld bytes of mirrors after a trim, limit %lld (a quarter of %zu expected)", (long long)bytes,
        (long long)got_limit, total);
  CALL(OceanContextSetDeviceMirrorLimit(gpu, limit));
  CALL(OceanContextSetPhaseCallback(gpu, WatchMirrors, gpu));
  mirrors_most = 0;

  if (RunMirrorAB(&a1, &p1, A1, P1, &up)) goto out;
  if (up != b_a1 + b_p1) {
    snprintf(msg, sizeof(msg), "A1*P1 uploaded %lld bytes, its operands have %lld", (long long)up,
             (long long)(b_a1 + b_p1));
    goto out;
  }
  if (RunMirrorAB(&a2, &p2, A2, P2, &up)) goto out;
  if (up != b_a2 + b_p2) {
    snprintf(msg, sizeof(msg), "A2*P2 uploaded %lld bytes, its operands have %lld", (long long)up,
             (long long)(b_a2 + b_p2));
    goto out;
  }
  if (RunMirrorAB(&a2, &p2, A2, P2, &up)) goto out;
  if (up != 0) {
    snprintf(msg, sizeof(msg),
             "A2*P2 again uploaded %lld bytes: A2's mirror was evicted while P2's was made (limit %lld)", (long long)up,
             (long long)limit);
    goto out;
  }
  if (RunMirrorAB(&a1, &p1, A1, P1, &up)) goto out;
  if (up != b_a1 + b_p1) {
    snprintf(msg, sizeof(msg),
             "A1*P1 after A2*P2 uploaded %lld bytes; %lld expected (both evicted under the limit %lld)", (long long)up,
             (long long)(b_a1 + b_p1), (long long)limit);
    goto out;
  }
  if (mirrors_most > limit) {
    snprintf(msg, sizeof(msg), "the mirrors held %lld bytes, past the limit %lld", (long long)mirrors_most,
             (long long)limit);
    goto out;
  }

  /* A1 past the limit: its stage's own buffers; P1 mirrored */
  limit = b_a1 - 1;
  CHECK(b_p1 <= limit, "P1 (%lld bytes) must fit under the limit %lld", (long long)b_p1, (long long)limit);
  CALL(OceanContextSetDeviceMirrorLimit(gpu, limit));
  mirrors_most = 0;
  CALL(OceanContextGetDeviceMirrors(gpu, &bytes, &got_limit));
  CHECK(bytes <= limit && got_limit == limit,
        "after lowering the limit to %lld: %lld bytes of mirrors, limit read %lld", (long long)limit, (long long)bytes,
        (long long)got_limit);
  CALL(OceanProductCreate(gpu, OCEAN_PRODUCT_AB, &ab));
  CALL(OceanProductCreate(cpu, OCEAN_PRODUCT_AB, &abc));
  CALL(OceanProductSymbolic(ab, &a1, &p1));
  CALL(OceanProductSymbolic(abc, &a1, &p1));
  if (CompareBackends(ab, abc)) goto out;
  GenFillValues(A1, GEN_VALUES_STREAM, 124);
  a1.values_id = 5;
  CALL(OceanProductNumeric(ab, &a1, &p1));
  CALL(OceanProductNumeric(abc, &a1, &p1));
  CALL(OceanProductGetStats(ab, 0, &st));
  if (st.uploaded_bytes != GenNnz(A1) * (int64_t)sizeof(double) || CompareBackends(ab, abc)) {
    if (!msg[0])
      snprintf(msg, sizeof(msg), "numeric with A1 in its own buffers uploaded %lld bytes, its values are %lld",
               (long long)st.uploaded_bytes, (long long)(GenNnz(A1) * (int64_t)sizeof(double)));
    goto out;
  }
  CALL(OceanProductCreate(gpu, OCEAN_PRODUCT_PtAP, &ptap));
  CALL(OceanProductCreate(cpu, OCEAN_PRODUCT_PtAP, &ptapc));
  CALL(OceanProductSymbolic(ptap, &a1, &p1));
  CALL(OceanProductSymbolic(ptapc, &a1, &p1));
  if (CompareBackends(ptap, ptapc)) goto out;
  GenFillValues(P1, GEN_VALUES_STREAM, 125);
  p1.values_id = 6;
  CALL(OceanProductNumeric(ptap, &a1, &p1));
  CALL(OceanProductNumeric(ptapc, &a1, &p1));
  if (CompareBackends(ptap, ptapc)) goto out;
  CALL(OceanContextGetDeviceMirrors(gpu, &bytes, NULL));
  if (mirrors_most > limit || bytes != b_p1) {
    snprintf(msg, sizeof(msg),
             "A1 past the limit %lld: the mirrors held %lld bytes at most, %lld at the end (P1 alone has %lld)",
             (long long)limit, (long long)mirrors_most, (long long)bytes, (long long)b_p1);
    goto out;
  }
  r = 0;
out:
  OceanProductDestroy(&ab);
  OceanProductDestroy(&abc);
  OceanProductDestroy(&ptap);
  OceanProductDestroy(&ptapc);
  return r;
}

static int CaseMirrorLimit(void)
{
  GenCSR A1, P1, A2, P2;
  int    r;

  GenStencil(&A1, 11, 11, 11, 1, 1, GEN_VALUES_STREAM_DIAG, 120, 120);
  GenInterpolation(&P1, A1.nrows, A1.nrows / 8, 121, 121);
  GenStencil(&A2, 12, 12, 12, 1, 1, GEN_VALUES_STREAM_DIAG, 122, 122);
  GenInterpolation(&P2, A2.nrows, A2.nrows / 8, 123, 123);
  r = RunMirrorLimit(&A1, &P1, &A2, &P2);
  OceanContextSetPhaseCallback(gpu, NULL, NULL); /* the later cases run with the default limit */
  OceanContextSetDeviceMirrorLimit(gpu, 0);
  GenFree(&A1);
  GenFree(&P1);
  GenFree(&A2);
  GenFree(&P2);
  return r;
}

/*
  Out of device memory: a fresh context g measures the pool's peak for A*P (need), then mirrors H and K (at least twice
  need) in a product that is then destroyed; the test takes all free device memory but a quarter of need with
  cudaMalloc (*ballast).  A*P again must then free H's and K's mirrors when the pool's cudaMalloc fails (nothing else
  would: four mirrors under the default limit) and give the CPU backend's C.
*/
static int RunMirrorOutOfMemory(OceanContext g, GenCSR *A, GenCSR *P, GenCSR *H, GenCSR *K, void **ballast)
{
  OceanProduct pg = NULL, pc = NULL;
  OceanOptions o;
  OceanCSR     a = GenView(A), p = GenView(P), h, k;
  int64_t      need, in_use, reserved, bytes, per_row, i, j, cols = (int64_t)1 << 20;
  size_t       fr, total, margin;
  int          r = 1;

  a.values_id = 1, p.values_id = 2;
  Options(&o, OCEAN_WORKFLOW_AUTO, 0, 0);
  CALL(OceanContextSetOptions(g, &o));
  CALL(OceanContextSetOptions(cpu, &o));
  CALL(OceanProductCreate(g, OCEAN_PRODUCT_AB, &pg));
  CALL(OceanProductSymbolic(pg, &a, &p));
  OceanProductDestroy(&pg);
  CALL(OceanContextGetDeviceMemory(g, NULL, &need, NULL, NULL));
  CALL(OceanContextTrimDeviceMemory(g)); /* nothing left: A*P below uploads its operands again */

  /* H: 1000 rows of per_row columns spread over 2^20; K: 2^20 x 8, one entry a row.  H*K is small. */
  per_row = (2 * need) / (1000 * (int64_t)(sizeof(int32_t) + sizeof(double))) + 1;
  CHECK(per_row <= cols / 2, "setup: A*P needs %lld bytes, too many for H", (long long)need);
  GenAlloc(H, 1000, cols, 1000 * per_row, 132);
  for (i = 0; i < H->nrows; i++) {
    for (j = 0; j < per_row; j++) {
      H->colidx[i * per_row + j] = (int32_t)(j * (cols / per_row) + i % (cols / per_row));
      H->values[i * per_row + j] = GenRandValue();
    }
    H->rowptr[i + 1] = (i + 1) * per_row;
  }
  GenAlloc(K, cols, 8, cols, 133);
  for (i = 0; i < cols; i++) {
    K->colidx[i]     = (int32_t)(i % 8);
    K->values[i]     = GenRandValue();
    K->rowptr[i + 1] = i + 1;
  }
  h = GenView(H), k = GenView(K);
  h.values_id = 3, k.values_id = 4;
  CALL(OceanProductCreate(g, OCEAN_PRODUCT_AB, &pg));
  CALL(OceanProductSymbolic(pg, &h, &k));
  OceanProductDestroy(&pg);
  CALL(OceanContextGetDeviceMemory(g, &in_use, NULL, &reserved, NULL));
  CALL(OceanContextGetDeviceMirrors(g, &bytes, NULL));
  CHECK(bytes == CsrBytes(H) + CsrBytes(K) && reserved - in_use < need / 4,
        "setup: the mirrors of H and K hold %lld bytes (%lld expected), the pool caches %lld unused (A*P needs %lld)",
        (long long)bytes, (long long)(CsrBytes(H) + CsrBytes(K)), (long long)(reserved - in_use), (long long)need);

  margin = (size_t)need / 4;
  CUDA_CALL(cudaMemGetInfo(&fr, &total));
  CHECK(fr > margin, "setup: %zu bytes free on the device", fr);
  CUDA_CALL(cudaMalloc(ballast, fr - margin));
  if (OceanProductCreate(g, OCEAN_PRODUCT_AB, &pg) || OceanProductSymbolic(pg, &a, &p)) {
    snprintf(msg, sizeof(msg),
             "A*P with %zu bytes free besides the pool's (it needs %lld, the mirrors of H and K hold %lld): %s", margin,
             (long long)need, (long long)bytes, OceanGetLastErrorMessage());
    goto out;
  }
  cudaFree(*ballast);
  *ballast = NULL;
  CALL(OceanContextGetDeviceMirrors(g, &bytes, NULL));
  if (bytes != CsrBytes(A) + CsrBytes(P)) {
    snprintf(msg, sizeof(msg), "after A*P short of memory the mirrors hold %lld bytes, A's and P's have %lld",
             (long long)bytes, (long long)(CsrBytes(A) + CsrBytes(P)));
    goto out;
  }
  CALL(OceanProductCreate(cpu, OCEAN_PRODUCT_AB, &pc));
  CALL(OceanProductSymbolic(pc, &a, &p));
  if (CompareBackends(pg, pc)) goto out;
  r = 0;
out:
  OceanProductDestroy(&pg);
  OceanProductDestroy(&pc);
  return r;
}

static int CaseMirrorOutOfMemory(void)
{
  OceanContext g       = NULL;
  void        *ballast = NULL;
  GenCSR       A, P, H, K;
  int          r = 1;

  memset(&H, 0, sizeof(H));
  memset(&K, 0, sizeof(K));
  GenStencil(&A, 32, 32, 32, 1, 1, GEN_VALUES_STREAM_DIAG, 130, 130);
  GenInterpolation(&P, A.nrows, A.nrows / 8, 131, 131);
  if (OceanContextCreate(OCEAN_BACKEND_CUDA, NULL, &g))
    snprintf(msg, sizeof(msg), "a second CUDA context: %s", OceanGetLastErrorMessage());
  else r = RunMirrorOutOfMemory(g, &A, &P, &H, &K, &ballast);
  if (ballast) cudaFree(ballast); /* the later cases need the device's memory */
  OceanContextDestroy(&g);
  GenFree(&A);
  GenFree(&P);
  GenFree(&H);
  GenFree(&K);
  return r;
}

int main(int argc, char **argv)
{
  OceanDeviceProfile prof;
  GenCSR             A, B;
  int                ndev = 0, w, a;
  int64_t            in_use, peak, reserved, mallocs;
  char               name[96];

  for (a = 1; a < argc; a++) {
    if (!strcmp(argv[a], "-small")) small = 1;
    else if (!strcmp(argv[a], "-only") && a + 1 < argc) only = argv[++a];
    else {
      fprintf(stderr, "usage: %s [-small] [-only TEXT[|TEXT...]]\n", argv[0]);
      return 2;
    }
  }
  if (!OceanCudaCompiled() || OceanCudaDeviceCount(&ndev) || ndev == 0) {
    printf("test_gpu: no CUDA device (backend %s)\n", OceanCudaCompiled() ? "compiled" : "not compiled");
    return 77;
  }
  if (OceanContextCreate(OCEAN_BACKEND_CUDA, NULL, &gpu)) {
    printf("FAIL cuda context: %s\n", OceanGetLastErrorMessage());
    return 1;
  }
  OceanContextGetProfile(gpu, &prof);
  printf("device: %s, %d SMs, %lld KB shared memory per block, %lld per SM\n", prof.name, prof.num_sms,
         (long long)prof.smem_per_block / 1024, (long long)prof.smem_per_sm / 1024);
  if (OceanContextCreate(OCEAN_BACKEND_CPU, &prof, &cpu)) {
    printf("FAIL cpu context: %s\n", OceanGetLastErrorMessage());
    return 1;
  }

  GenStencil(&A, 30, 30, 1, 1, 0, GEN_VALUES_STREAM_DIAG, 11, 11);
  CASE("AB lap2d 30^2", CaseAB(&A, &A, -1, 0, 0, 0, 0));
  GenStencil(&A, 12, 12, 12, 1, 0, GEN_VALUES_STREAM_DIAG, 12, 12);
  GenCopy(&A, &B);
  CASE("AB lap3d 12^3 (+reuse)", CaseAB(&A, &B, -1, 0, 0, 0, 1));
  GenStencil(&A, 10, 10, 10, 1, 1, GEN_VALUES_STREAM_DIAG, 13, 13);
  GenCopy(&A, &B);
  CASE("AB lap3d27 10^3 (+reuse)", CaseAB(&A, &B, -1, 0, 0, 0, 1));
  GenRandomRows(&A, 300, 500, 6, 0, 16, 16);
  GenRandomRows(&B, 500, 200, 5, 0, 17, 17);
  CASE("AB rectangular 300x500x200", CaseAB(&A, &B, -1, 0, 0, 0, 1));
  GenRandomRows(&A, 0, 0, 1, 0, 18, 18);
  GenRandomRows(&B, 0, 0, 1, 0, 19, 19);
  CASE("AB empty 0x0", CaseAB(&A, &B, -1, 0, 0, 0, 0));
  GenRandomRows(&A, 50, 40, 3, 1, 20, 20); /* every row empty */
  GenRandomRows(&B, 40, 30, 3, 0, 21, 21);
  CASE("AB empty A 50x40", CaseAB(&A, &B, -1, 0, 0, 0, 0));
  GenRandomRows(&A, 400, 300, 4, 3, 22, 22);
  GenRandomRows(&B, 300, 350, 4, 5, 23, 23);
  CASE("AB empty rows", CaseAB(&A, &B, -1, 0, 0, 0, 1));
  {
    GenCSR D;
    GenRandomRows(&A, 600, 600, 3, 0, 24, 0);
    MatFullRows(&A, 600, 17, 24, &D); /* row 17 dense */
    GenRandomRows(&B, 600, 600, 4, 0, 25, 25);
    CASE("AB dense row", CaseAB(&D, &B, -1, 0, 0, 0, 1));
  }
  CASE("AB N0 warp teams (hash 33-272 entries, dense), auto", CaseN0Teams(-1, 0, 0));
  CASE("AB N0 warp teams, forced exact", CaseN0Teams(OCEAN_WORKFLOW_EXACT, 0, 0));
  CASE("AB N0 warp teams, forced estimate", CaseN0Teams(OCEAN_WORKFLOW_ESTIMATE, 32, 2.0));
  CASE("AB long rows of B walked by block-wide teams, auto", CaseLongRowsOfB(-1));
  CASE("AB long rows of B walked by block-wide teams, forced exact", CaseLongRowsOfB(OCEAN_WORKFLOW_EXACT));
  CASE("AB LONG rows, dense in global memory, estimate overflow",
       CaseLong(2000, 30000, OCEAN_ACC_GLOBAL_DENSE, OCEAN_WORKFLOW_ESTIMATE, 64, 0.7, 1, 62));
  CASE("AB LONG rows, dense in global memory, forced exact",
       CaseLong(2000, 30000, OCEAN_ACC_GLOBAL_DENSE, OCEAN_WORKFLOW_EXACT, 0, 0, 0, 64));
  CASE("AB LONG rows, dense over 1M columns (bitmap of the opt-in shared memory)",
       CaseLong(2000, 1000000, OCEAN_ACC_GLOBAL_DENSE, OCEAN_WORKFLOW_EXACT, 0, 0, 0, 68));
  /* rows of 6000 entries of A: the numeric windows keep a place in B's rows for the first 2560, search for the rest */
  CASE("AB LONG rows, dense in global memory, 6000 entries of A a row",
       CaseLong(6000, 30000, OCEAN_ACC_GLOBAL_DENSE, OCEAN_WORKFLOW_EXACT, 0, 0, 0, 69));
  /* heavy rows: the multisplit at the device's own parameters, then 1, 2 and 3 levels forced on R-MAT (rows heavy at
     one level and light at the next, empty chunks), every workflow, overflow and fallback */
  {
    GenCSR D;
    GenRandomRows(&A, 64, 2000, 4, 0, 80, 0);
    MatFullRows(&A, 16, 3, 80, &D);
    GenRandomRows(&B, 2000, 300000, 6, 0, 81, 81); /* the full rows span more than heavy_min_span's 2^15 columns */
    CASE("AB heavy rows, auto (rows spanning 300000 columns, chunks of 4096)", CaseHeavy(&D, &B, -1, 0, 0, 0, 1, 0));
    /* 4,688 chunks of 64 columns at level 0: more than a block's histogram by runs of B holds (4,096), so level 0
       counts the products themselves */
    GenRandomRows(&A, 64, 2000, 4, 0, 80, 0);
    MatFullRows(&A, 16, 3, 80, &D);
    GenRandomRows(&B, 2000, 300000, 6, 0, 81, 81);
    CASE("AB heavy rows, 4688 chunks at level 0 (histogram of the products)",
         CaseHeavy(&D, &B, -1, 300, 64, 65536, 1, 0));
  }
  CASE("AB heavy rows, exact: counted by cells (bitmap, hash, split), written in place", CaseHeavyInPlace(0, 0, 1));
  CASE("AB heavy rows, exact, C in row chunks: written in place", CaseHeavyInPlace(1 << 20, 0, 1));
  /* 8 or 4 chunks a level over 3M columns: the rows' chunks summed at level 1 or 2 (hashes), written in place */
  CASE("AB heavy rows, exact, 2 levels: written in place", CaseHeavyInPlace(0, 8, 2));
  CASE("AB heavy rows, exact, 3 levels: written in place", CaseHeavyInPlace(0, 4, 3));
  for (w = OCEAN_WORKFLOW_AUTO; w <= OCEAN_WORKFLOW_EXACT; w++) {
    int levels;
    for (levels = 1; levels <= 3; levels++) {
      GenRmatStream(&A, 12, 8, 82 + (uint64_t)levels, 82 + (uint64_t)levels);
      GenCopy(&A, &B);
      snprintf(name, sizeof(name), "AB rmat 12/8 multisplit, %d level(s), %s", levels,
               OceanWorkflowName((OceanWorkflow)w));
      /* 2^12 columns in chunks of 64: 64 chunks, in one level of 64, two of 8 or three of 4 (4, 4, 4) */
      CASE(name, CaseHeavy(&A, &B, w, 300, 64, levels == 1 ? 64 : levels == 2 ? 8 : 4, levels, 0));
    }
  }
  GenRmatStream(&A, 12, 8, 86, 86);
  GenCopy(&A, &B);
  CASE("AB rmat 12/8 multisplit, estimate overflow (16 reg, coef 0.3)",
       CaseHeavy(&A, &B, OCEAN_WORKFLOW_ESTIMATE, 300, 64, 4, 3, 1));
  /* numeric reuse through the product map, then without it (the search in C's rows) */
  ReuseCases("");
  /* the cases above hold rows of both parts of the map (rmat, short rows beside rows of 120000 products) */
  CASE("AB product map: walked and listed rows side by side in the reuse cases",
       (snprintf(msg, sizeof(msg), "no numeric call ran the parts side by side"), map_side_by_side_calls == 0));
  case_reuse_map = 0;
  ReuseCases(", search");
  case_reuse_map = -1;
  for (w = OCEAN_WORKFLOW_UPPER_BOUND; w <= OCEAN_WORKFLOW_EXACT; w++) {
    GenStencil(&A, 6, 6, 6, 3, 1, GEN_VALUES_STREAM_DIAG, 26, 26);
    GenCopy(&A, &B);
    snprintf(name, sizeof(name), "AB elasticity 6^3x3 forced %s", OceanWorkflowName((OceanWorkflow)w));
    CASE(name, CaseAB(&A, &B, w, 0, 0, 0, 1));
    GenRmatStream(&A, 10, 16, 27, 27);
    GenCopy(&A, &B);
    snprintf(name, sizeof(name), "AB rmat 10/16 forced %s", OceanWorkflowName((OceanWorkflow)w));
    CASE(name, CaseAB(&A, &B, w, 0, 0, 0, 1));
  }
  /* the upper bound routed by bound_factor x the longest B row: the analysis's plan (forced) and the over-allocated
     step's (auto, a sample); elasticity's interior rows (375 entries) overflow the smaller accumulators of factors 1
     and 2 (N0's hash of 272) and are computed again */
  for (int f = 0; f < 3; f++) {
    static const int64_t factors[3] = {8, 1, 2};
    OceanOptions         o;
    for (int m = 0; m < 2; m++) { /* elasticity 8^3x3, R-MAT 10/16 */
      if (m == 0) GenStencil(&A, 8, 8, 8, 3, 1, GEN_VALUES_STREAM_DIAG, 35, 35);
      else GenRmatStream(&A, 10, 16, 37, 37);
      GenCopy(&A, &B);
      Options(&o, OCEAN_WORKFLOW_UPPER_BOUND, 0, 0);
      o.bound_factor = factors[f];
      snprintf(name, sizeof(name), "AB %s upper bound, bound_factor %lld", m == 0 ? "elasticity 8^3x3" : "rmat 10/16",
               (long long)factors[f]);
      CASE(name, RunAB(&o, &A, &B, m == 0 && factors[f] < 8, 1));
      GenFree(&A);
      GenFree(&B);
    }
    /* the selection's upper bound, planned after the sample (the analysis's guess of the products is 50 times too
       high: A reaches only B's rows of 4 entries, B's other rows have 400) */
    memset(&A, 0, sizeof(A));
    memset(&B, 0, sizeof(B));
    GenAlloc(&A, 2000, 2000, 2000 * 6, 38);
    for (int64_t i = 0; i < 2000; i++) {
      A.rowptr[i + 1] = A.rowptr[i] + 6;
      for (int t = 0; t < 6; t++) A.colidx[A.rowptr[i] + t] = (int32_t)((i + 97 * t) % 1000);
      GenSortUnique(A.colidx + A.rowptr[i], 6);
    }
    GenAlloc(&B, 2000, 4000, 1000 * 4 + 1000 * 400, 39);
    for (int64_t j = 0; j < 2000; j++) {
      const int len   = j < 1000 ? 4 : 400;
      B.rowptr[j + 1] = B.rowptr[j] + len;
      for (int t = 0; t < len; t++)
        B.colidx[B.rowptr[j] + t] = (int32_t)((j * 7 + (int64_t)t * (j < 1000 ? 997 : 10)) % 4000);
      GenSortUnique(B.colidx + B.rowptr[j], len);
    }
    GenFillValues(&A, GEN_VALUES_STREAM, 38);
    GenFillValues(&B, GEN_VALUES_STREAM, 39);
    Options(&o, OCEAN_WORKFLOW_AUTO, 0, 0);
    o.bound_factor = factors[f];
    o.small_bound  = 0;
    snprintf(name, sizeof(name), "AB skewed B, selected upper bound planned late, bound_factor %lld",
             (long long)factors[f]);
    CASE(name, RunAB(&o, &A, &B, 0, 1) || CheckSelected(OCEAN_WORKFLOW_UPPER_BOUND));
    GenFree(&A);
    GenFree(&B);
  }
  {
    /* the selection's upper bound by likely sizes after the sample (27-point stencil: likely slots 2.3x the sampled
       nnz(C)), planned late; the exact workflow without the factor */
    OceanOptions o;
    for (int f = 0; f < 2; f++) {
      GenStencil(&A, 16, 16, 16, 1, 1, GEN_VALUES_STREAM_DIAG, 40, 40);
      GenCopy(&A, &B);
      Options(&o, OCEAN_WORKFLOW_AUTO, 0, 0);
      o.small_bound = 0;
      if (f) o.bound_factor = 0;
      snprintf(name, sizeof(name), "AB lap3d27 16^3 selected %s",
               f ? "exact, bound_factor 0" : "upper bound by likely sizes");
      CASE(name, RunAB(&o, &A, &B, 0, 1) || CheckSelected(f ? OCEAN_WORKFLOW_EXACT : OCEAN_WORKFLOW_UPPER_BOUND));
      GenFree(&A);
      GenFree(&B);
    }
  }
  GenRmatStream(&A, 10, 16, 28, 28);
  GenCopy(&A, &B);
  CASE("AB estimate overflow (16 reg, coef 0.1)", CaseAB(&A, &B, OCEAN_WORKFLOW_ESTIMATE, 16, 0.1, 1, 1));
  GenStencil(&A, 5, 5, 5, 3, 1, GEN_VALUES_STREAM_DIAG, 29, 29);
  GenCopy(&A, &B);
  CASE("AB elasticity overflow (16 reg, coef 0.1)", CaseAB(&A, &B, OCEAN_WORKFLOW_ESTIMATE, 16, 0.1, 1, 1));
  GenRandomRows(&A, 8, 400, 60, 0, 30, 30);
  GenRandomRows(&B, 400, 1 << 22, 40, 0, 31, 31);
  CASE("AB 4M columns exact (long rows)", CaseAB(&A, &B, OCEAN_WORKFLOW_EXACT, 0, 0, 0, 1));
  {
    GenCSR P;
    GenStencil(&A, 6, 6, 6, 3, 1, GEN_VALUES_STREAM_DIAG, 32, 32);
    GenRandomRows(&B, A.nrows, 90, 3, 0, 33, 33);
    CASE("AtB elasticity x random (cpu transpose)", RunType(OCEAN_PRODUCT_AtB, &A, &B));
    GenFree(&B);
    GenInterpolation(&P, A.nrows, A.nrows / 6, 34, 34);
    CASE("PtAP elasticity, aggregation P (device P^T)", RunType(OCEAN_PRODUCT_PtAP, &A, &P));
    GenFree(&P);
    GenRandomRows(&P, A.nrows, 3 * A.nrows, 2, 5, 44,
                  44); /* empty rows of P and many empty columns: empty rows of P^T */
    CASE("PtAP elasticity, random P with empty columns (device P^T)", RunType(OCEAN_PRODUCT_PtAP, &A, &P));
    GenFree(&A);
    GenFree(&P);
  }
  GenStencil(&A, 8, 8, 8, 3, 1, GEN_VALUES_STREAM_DIAG, 40, 40);
  GenCopy(&A, &B);
  CASE("AB elasticity 8^3x3 device operands (+reuse)", CaseDevice(OCEAN_PRODUCT_AB, &A, &B));
  GenRmatStream(&A, 11, 8, 41, 41);
  GenCopy(&A, &B);
  CASE("AB rmat 11/8 device operands (+reuse)", CaseDevice(OCEAN_PRODUCT_AB, &A, &B));
  GenRandomRows(&A, 300, 500, 6, 0, 42, 42);
  GenRandomRows(&B, 500, 200, 5, 0, 43, 43);
  CASE("AB rectangular device operands (+reuse)", CaseDevice(OCEAN_PRODUCT_AB, &A, &B));
  GenStencil(&A, 8, 8, 8, 1, 1, GEN_VALUES_STREAM_DIAG, 47, 47);
  GenCopy(&A, &B);
  CASE("AtB 3D 27-point device operands, A^T on the device (+reuse)", CaseDevice(OCEAN_PRODUCT_AtB, &A, &B));
  GenRandomRows(&A, 300, 500, 6, 7, 48, 48);
  GenRandomRows(&B, 300, 200, 5, 0, 49, 49);
  CASE("AtB rectangular device operands, empty rows and columns of A (+reuse)", CaseDevice(OCEAN_PRODUCT_AtB, &A, &B));
  GenStencil(&A, 6, 6, 6, 3, 1, GEN_VALUES_STREAM_DIAG, 45, 45);
  GenInterpolation(&B, A.nrows, A.nrows / 6, 46, 46);
  CASE("PtAP elasticity device operands (+reuse)", CaseDevice(OCEAN_PRODUCT_PtAP, &A, &B));
  /* NARROW: B with few, well-filled columns (coarse AMG levels) */
  GenRandomRows(&A, 400, 300, 120, 7, 60, 60);
  GenRandomRows(&B, 300, 40, 16, 0, 61, 61);
  CASE("AB narrow: coarse level A*P, auto (+reuse)", CaseNarrowAB(&A, &B));
  GenRandomRows(&A, 64, 3000, 1500, 0, 62, 62); /* rows of ~1500 entries: teams of 32 warps */
  GenRandomRows(&B, 3000, 72, 40, 0, 63, 63);
  CASE("AB narrow: long rows into 72 columns, auto (+reuse)", CaseNarrowAB(&A, &B));
  GenRandomRows(&A, 64, 3000, 1500, 0, 64, 64);
  GenRandomRows(&B, 3000, 256, 100, 0, 65, 65);
  CASE("AB narrow: long rows into 256 columns, auto (+reuse)", CaseNarrowAB(&A, &B));
  GenRandomRows(&A, 100, 100, 100, 0, 90, 90); /* few rows: teams grow until the device is busy */
  GenCopy(&A, &B);
  B.id = 91;
  CASE("AB narrow: a dense 100 x 100 block squared, auto (+reuse)", CaseNarrowAB(&A, &B));
  {
    static const int64_t widths[] = {1, 31, 33, 64, 65, 200, 256};
    size_t               k;
    for (k = 0; k < sizeof(widths) / sizeof(widths[0]); k++) {
      snprintf(name, sizeof(name), "AB forced narrow, B with %lld columns (+reuse)", (long long)widths[k]);
      CASE(name, CaseNarrowForced(widths[k], 66 + 2 * (uint64_t)k));
    }
  }
  GenRandomRows(&A, 600, 600, 200, 13, 80, 80);
  GenRandomRows(&B, 600, 72, 40, 0, 81, 81);
  CASE("PtAP narrow: coarse level, both stages (+reuse, device operands)", CaseNarrowPtAP(&A, &B));
  GenRandomRows(&A, 400, 300, 120, 7, 82, 82);
  GenRandomRows(&B, 300, 40, 16, 0, 83, 83);
  CASE("AB narrow no records, device operands", CaseNoRecord(&A, &B, -1, 0, 0, 1));
  CASE("AB narrow numeric after a structure change under the same ids (device operands)",
       CaseMismatch(OCEAN_WORKFLOW_NARROW, 40, 40, -1, 0, 70));
  GenStencil(&A, 8, 8, 8, 3, 1, GEN_VALUES_STREAM_DIAG, 49, 49);
  CASE("AB elasticity 8^3x3, forced estimate, 1 MB of device memory: switch to exact, row chunks (+reuse)",
       CaseMemoryLimit(&A, NULL, OCEAN_WORKFLOW_ESTIMATE, 1 << 20));
  {
    GenCSR D; /* 4 full rows over 2M columns: LONG global-hash rows (sorted within their chunk), each above a chunk's
                 budget */
    GenRandomRows(&A, 64, 2000, 4, 0, 51, 0);
    MatFullRows(&A, 16, 3, 51, &D);
    GenRandomRows(&B, 2000, 2000000, 5, 0, 52, 52);
    CASE("AB LONG global-hash rows, forced exact, 256 KB of device memory: row chunks (+reuse)",
         CaseMemoryLimit(&D, &B, OCEAN_WORKFLOW_EXACT, 256 << 10));
  }
  CASE("AB numeric (product map) after a structure change under the same ids (device operands)",
       CaseMismatch(OCEAN_WORKFLOW_AUTO, 12, 1000, -1, 0, 72));
  CASE("AB numeric (search) after a structure change under the same ids (device operands)",
       CaseMismatch(OCEAN_WORKFLOW_AUTO, 12, 1000, 0, 0, 72));
  CASE("AB numeric (row chunks, 256 KB of device memory) after a structure change under the same ids (device operands)",
       CaseMismatch(OCEAN_WORKFLOW_EXACT, 12, 1000, -1, 256 << 10, 72));
  CASE("device mirrors of host operands across plans (AB, then PtAP; new values; values id 0; B sharing A's structure)",
       CaseMirrors());
  CASE("device mirrors under a byte limit (LRU eviction and re-uploads; an operand past it in own buffers; AB, PtAP)",
       CaseMirrorLimit());
  /* without record_rows: statistics from device reductions, the sample selected on the device */
  GenStencil(&A, 8, 8, 8, 3, 1, GEN_VALUES_STREAM_DIAG, 50, 50);
  GenCopy(&A, &B);
  CASE("AB elasticity 8^3x3 no records (+reuse)", CaseNoRecord(&A, &B, -1, 0, 0, 0));
  GenStencil(&A, 8, 8, 8, 3, 1, GEN_VALUES_STREAM_DIAG, 51, 51);
  GenCopy(&A, &B);
  CASE("AB elasticity 8^3x3 no records, device operands", CaseNoRecord(&A, &B, -1, 0, 0, 1));
  GenStencil(&A, 40, 40, 1, 1, 0, GEN_VALUES_STREAM_DIAG, 52, 52);
  GenCopy(&A, &B);
  CASE("AB lap2d 40^2 no records, device operands", CaseNoRecord(&A, &B, -1, 0, 0, 1));
  GenStencil(&A, 40, 40, 1, 1, 0, GEN_VALUES_STREAM_DIAG, 52, 52);
  CASE("AB lap2d 40^2, device operands: the symbolic call waits twice, numeric never", CaseSmallWaits(&A));
  GenRmatStream(&A, 11, 8, 53, 53);
  CASE("AB rmat 11/8: the analysis's upper-bound plan unused (a sampled workflow)", CaseUnusedPlan(&A));
  GenRmatStream(&A, 11, 8, 53, 53);
  GenCopy(&A, &B);
  CASE("AB rmat 11/8 no records (+reuse)", CaseNoRecord(&A, &B, -1, 0, 0, 0));
  GenRmatStream(&A, 10, 16, 54, 54);
  GenCopy(&A, &B);
  CASE("AB rmat 10/16 no records forced exact", CaseNoRecord(&A, &B, OCEAN_WORKFLOW_EXACT, 0, 0, 1));
  GenStencil(&A, 5, 5, 5, 3, 1, GEN_VALUES_STREAM_DIAG, 55, 55);
  GenCopy(&A, &B);
  CASE("AB elasticity overflow no records", CaseNoRecord(&A, &B, OCEAN_WORKFLOW_ESTIMATE, 16, 0.1, 1));
  GenRandomRows(&A, 400, 300, 4, 3, 56, 56);
  GenRandomRows(&B, 300, 350, 4, 5, 57, 57);
  CASE("AB empty rows no records", CaseNoRecord(&A, &B, -1, 0, 0, 0));
  GenRandomRows(&A, 50, 40, 3, 1, 58, 58); /* every row empty: no sample */
  GenRandomRows(&B, 40, 30, 3, 0, 59, 59);
  CASE("AB empty A no records", CaseNoRecord(&A, &B, -1, 0, 0, 1));
  if (!small) {
    /* row chunks of many launches each: too slow under racecheck, whose small set keeps the elasticity and LONG cases
     */
    GenStencil(&A, 300, 300, 1, 1, 0, GEN_VALUES_STREAM_DIAG, 48, 48);
    CASE("AB lap2d 300^2, forced upper bound, 1 MB of device memory: switch to exact, row chunks (+reuse)",
         CaseMemoryLimit(&A, NULL, OCEAN_WORKFLOW_UPPER_BOUND, 1 << 20));
    GenRmatStream(&A, 12, 8, 50, 50);
    CASE("AB rmat 12/8, forced exact, 1 MB of device memory: row chunks (+reuse)",
         CaseMemoryLimit(&A, NULL, OCEAN_WORKFLOW_EXACT, 1 << 20));
    GenStencil(&A, 1500, 1500, 1, 1, 0, GEN_VALUES_STREAM_DIAG, 38, 38);
    GenCopy(&A, &B);
    CASE("AB lap2d 1500^2: 2.25M rows (+reuse)", CaseAB(&A, &B, -1, 0, 0, 0, 1));
    GenStencil(&A, 24, 24, 24, 3, 1, GEN_VALUES_STREAM_DIAG, 35, 35);
    GenCopy(&A, &B);
    CASE("AB elasticity 24^3x3 (+reuse)", CaseAB(&A, &B, -1, 0, 0, 0, 1));
    GenRmatStream(&A, 16, 8, 36, 36);
    GenCopy(&A, &B);
    CASE("AB rmat 16/8 (+reuse)", CaseAB(&A, &B, -1, 0, 0, 0, 1));
    GenStencil(&A, 40, 40, 40, 1, 1, GEN_VALUES_STREAM_DIAG, 37, 37);
    GenCopy(&A, &B);
    CASE("AB lap3d27 40^3 exact", CaseAB(&A, &B, OCEAN_WORKFLOW_EXACT, 0, 0, 0, 1));
    GenRandomRows(&A, 2508, 2508, 800, 0, 84, 84); /* a Galerkin level 2: 2M nonzeros, P of 72 columns */
    GenRandomRows(&B, 2508, 72, 54, 0, 85, 85);
    CASE("PtAP narrow: 2508 rows of 800 entries, 72 columns", CaseNarrowPtAP(&A, &B));
    CASE("device mirrors freed when the pool runs out of memory (the test takes the device's free memory)",
         CaseMirrorOutOfMemory());
  }
  OceanContextGetDeviceMemory(gpu, &in_use, &peak, &reserved, &mallocs);
  printf("device pool: peak %.1f MB in use, %.1f MB reserved, %lld cudaMalloc calls, %lld bytes in use at the end\n",
         (double)peak / 1048576.0, (double)reserved / 1048576.0, (long long)mallocs, (long long)in_use);
  OceanContextDestroy(&gpu);
  OceanContextDestroy(&cpu);
  printf("%d passed, %d failed\n", npass, nfail);
  return nfail ? 1 : 0;
}
