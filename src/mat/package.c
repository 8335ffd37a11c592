/* The petsc-ocean package: registration, options, core contexts, counters, log events and viewers. */
#include "mat/matocean.h"
#include <omp.h>
#include <stdlib.h>

static PetscBool        MatOceanPackageInitialized = PETSC_FALSE;
static OceanContext     MatOceanContexts[2]; /* one per backend, created on first use */
static MatOceanCounters MatOceanCount;
static PetscLogEvent    MAT_OCEAN_Symbolic, MAT_OCEAN_Numeric, MAT_OCEAN_SetC, MAT_OCEAN_Phase[OCEAN_NUM_PHASES];

static const char *const MatOceanBackendNames[]  = {"auto", "cpu", "cuda", "MatOceanBackendChoice", "MAT_OCEAN_BACKEND_", NULL};
static const char *const MatOceanWorkflowNames[] = {"auto", "upper_bound", "estimate", "exact", "narrow", "OceanWorkflowOption", "OCEAN_WORKFLOW_", NULL};

PetscErrorCode MatOceanPetscErrorCode(OceanError err)
{
  switch (err) {
  case OCEAN_SUCCESS: return OCEAN_PETSC_OK;
  case OCEAN_ERR_ARG: return PETSC_ERR_ARG_SIZ;
  case OCEAN_ERR_MEMORY: return PETSC_ERR_MEM;
  case OCEAN_ERR_INDEX_OVERFLOW: return PETSC_ERR_ARG_OUTOFRANGE;
  case OCEAN_ERR_STATE: return PETSC_ERR_ARG_WRONGSTATE;
  case OCEAN_ERR_NOT_AVAILABLE: return PETSC_ERR_SUP;
  case OCEAN_ERR_DEVICE: return PETSC_ERR_LIB;
  }
  return PETSC_ERR_LIB;
}

/* Core phases become PETSc log events, so -log_view shows where a product spends its time. */
static void MatOceanPhaseCallback(void *user, OceanPhase phase, int begin, double flops)
{
  if (phase < 0 || phase >= OCEAN_NUM_PHASES) return;
  if (begin) (void)PetscLogEventBegin(MAT_OCEAN_Phase[phase], 0, 0, 0, 0);
  else {
    (void)PetscLogFlops(flops);
    (void)PetscLogEventEnd(MAT_OCEAN_Phase[phase], 0, 0, 0, 0);
  }
}

/*@C
  MatOceanFinalizePackage - Destroys the core contexts of petsc-ocean; called from PetscFinalize().

  Level: developer

.seealso: `MatOceanInitializePackage()`
@*/
PetscErrorCode MatOceanFinalizePackage(void)
{
  PetscFunctionBegin;
  for (int b = 0; b < 2; b++) PetscCallOcean(OceanContextDestroy(&MatOceanContexts[b]));
  PetscCall(PetscMemzero(&MatOceanCount, sizeof(MatOceanCount)));
  MatOceanPackageInitialized = PETSC_FALSE;
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* The CPU backend's OpenMP threads: unless OMP_NUM_THREADS or -mat_ocean_threads says otherwise, the cores divided by
   the processes the launcher started on this node (ranks that each start a thread per core oversubscribe the node).
   Read from the launcher's environment: nothing collective here, packages may initialize on one process only. */
static PetscErrorCode MatOceanSetThreads_Private(void)
{
  const char *names[] = {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE"};
  PetscInt    threads = 0;
  PetscBool   set;
  int         local = 1, cores = omp_get_num_procs();

  PetscFunctionBegin;
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-mat_ocean_threads", &threads, &set));
  PetscCheck(!set || threads >= 1, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-mat_ocean_threads %" PetscInt_FMT " must be at least 1", threads);
  if (!set && getenv("OMP_NUM_THREADS")) PetscFunctionReturn(OCEAN_PETSC_OK);
  if (!set) {
    for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
      const char *v = getenv(names[k]);
      if (v && atoi(v) > 0) {
        local = atoi(v);
        break;
      }
    }
    threads = PetscMax(1, cores / PetscMax(local, 1));
  }
  omp_set_num_threads((int)threads);
  PetscCall(PetscInfo(NULL, "petsc-ocean: %d OpenMP threads for the CPU backend (%d cores, %d processes on this node)\n", (int)threads, cores, local));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/*@C
  MatOceanInitializePackage - Registers the matrix types `MATAIJOCEAN`, `MATSEQAIJOCEAN` and `MATMPIAIJOCEAN` and
  the log events of petsc-ocean.  Call once after `PetscInitialize()`; `-dll_append libpetscocean.so` calls it.

  Level: beginner

.seealso: `MatOceanFinalizePackage()`, `MatSetType()`
@*/
PetscErrorCode MatOceanInitializePackage(void)
{
  PetscFunctionBegin;
  if (MatOceanPackageInitialized) PetscFunctionReturn(OCEAN_PETSC_OK);
  MatOceanPackageInitialized = PETSC_TRUE;
  PetscCall(MatInitializePackage());
  PetscCall(MatRegisterRootName(MATAIJOCEAN, MATSEQAIJOCEAN, MATMPIAIJOCEAN));
  PetscCall(MatRegister(MATSEQAIJOCEAN, MatCreate_SeqAIJOcean));
  PetscCall(MatRegister(MATMPIAIJOCEAN, MatCreate_MPIAIJOcean));
  PetscCall(PetscLogEventRegister("MatOceanSymbolic", MAT_CLASSID, &MAT_OCEAN_Symbolic));
  PetscCall(PetscLogEventRegister("MatOceanNumeric", MAT_CLASSID, &MAT_OCEAN_Numeric));
  PetscCall(PetscLogEventRegister("MatOceanSetC", MAT_CLASSID, &MAT_OCEAN_SetC)); /* C into the PETSc matrix (and off the device) */
  for (int p = 0; p < OCEAN_NUM_PHASES; p++) {
    char name[64];
    PetscCall(PetscSNPrintf(name, sizeof(name), "MatOcean_%s", OceanPhaseName((OceanPhase)p)));
    PetscCall(PetscLogEventRegister(name, MAT_CLASSID, &MAT_OCEAN_Phase[p]));
  }
  PetscCall(PetscRegisterFinalize(MatOceanFinalizePackage));
  PetscCall(MatOceanSetThreads_Private());
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* Entry point for -dll_append libpetscocean.so */
PetscErrorCode PetscDLLibraryRegister_petscocean(void)
{
  PetscFunctionBegin;
  PetscCall(MatOceanInitializePackage());
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

PetscErrorCode MatOceanEventsBegin_Private(PetscLogEvent *symbolic, PetscLogEvent *numeric, PetscLogEvent *setc)
{
  PetscFunctionBegin;
  PetscCall(MatOceanInitializePackage());
  if (symbolic) *symbolic = MAT_OCEAN_Symbolic;
  if (numeric) *numeric = MAT_OCEAN_Numeric;
  if (setc) *setc = MAT_OCEAN_SetC;
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* The options as read, before they are checked. */
typedef struct {
  PetscInt  backend, workflow, registers, nnz_limit, smem, narrow_columns, narrow_entries;
  PetscReal coefficient, narrow_density, reuse_map_mb, device_memory_mb;
  PetscBool view;
} MatOceanRawOptions;

/* Reads the options under one prefix (NULL: none) over the values in *r. */
static PetscErrorCode MatOceanReadOptions_Private(Mat C, const char *prefix, MatOceanRawOptions *r)
{
  PetscFunctionBegin;
  PetscOptionsBegin(PetscObjectComm((PetscObject)C), prefix, "petsc-ocean SpGEMM options", "Mat");
  PetscCall(PetscOptionsEList("-mat_ocean_backend", "Where products run", "MatOceanInitializePackage", MatOceanBackendNames, 3, MatOceanBackendNames[r->backend], &r->backend, NULL));
  PetscCall(PetscOptionsEList("-mat_ocean_workflow", "Force a workflow (auto: the Ocean selection)", "MatOceanInitializePackage", MatOceanWorkflowNames, 5, MatOceanWorkflowNames[r->workflow], &r->workflow, NULL));
  PetscCall(PetscOptionsInt("-mat_ocean_hll_registers", "HyperLogLog registers per sketch (0: 32, or 64 when ER >= 48)", "MatOceanInitializePackage", r->registers, &r->registers, NULL));
  PetscCall(PetscOptionsReal("-mat_ocean_estimate_coefficient", "Estimate multiplier (0: 2.0 at 32 registers, else 1.5)", "MatOceanInitializePackage", r->coefficient, &r->coefficient, NULL));
  PetscCall(PetscOptionsInt("-mat_ocean_acc_smem_per_sm", "Shared memory per SM given to accumulators (bytes)", "MatOceanInitializePackage", r->smem, &r->smem, NULL));
  PetscCall(PetscOptionsInt("-mat_ocean_nnz_limit", "Largest nnz(C) accepted", "MatOceanInitializePackage", r->nnz_limit, &r->nnz_limit, NULL));
  PetscCall(PetscOptionsInt("-mat_ocean_narrow_max_columns", "Narrow workflow when P (B) has at most this many columns (0: never automatically)", "MatOceanInitializePackage", r->narrow_columns, &r->narrow_columns, NULL));
  PetscCall(PetscOptionsReal("-mat_ocean_narrow_min_density", "... and nnz(P) >= this x rows x columns", "MatOceanInitializePackage", r->narrow_density, &r->narrow_density, NULL));
  PetscCall(PetscOptionsInt("-mat_ocean_narrow_max_entries", "... and rows(A) x columns(P) at most this", "MatOceanInitializePackage", r->narrow_entries, &r->narrow_entries, NULL));
  PetscCall(PetscOptionsReal("-mat_ocean_device_memory_mb", "GPU memory (MB) the over-allocating workflows may count on; beyond it they switch to exact counting (0: what is free)", "MatOceanInitializePackage",
                             r->device_memory_mb, &r->device_memory_mb, NULL));
  PetscCall(PetscOptionsReal("-mat_ocean_reuse_map_mb", "Numeric reuse on the GPU: keep a map of each product to its entry of C up to this many MB (-1: a quarter of the device's memory, 0: never)",
                             "MatOceanInitializePackage", r->reuse_map_mb, &r->reuse_map_mb, NULL));
  PetscCall(PetscOptionsBool("-mat_ocean_view", "Print each product's decisions and statistics", "MatOceanProductGetStats", r->view, &r->view, NULL));
  PetscOptionsEnd();
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* The length of prefix without a trailing "backend_p<digits>_": PETSc's MPIAIJ route names its local products so,
   after the parallel product's own prefix. */
static size_t MatOceanOuterPrefixLength(const char *prefix)
{
  const char *tag = "backend_p";
  size_t      n = strlen(prefix), t = strlen(tag), k;

  if (n < t + 2 || prefix[n - 1] != '_') return n;
  for (k = n - 1; k > 0 && prefix[k - 1] >= '0' && prefix[k - 1] <= '9'; k--) {}
  if (k == n - 1 || k < t || strncmp(prefix + k - t, tag, t)) return n;
  return k - t;
}

/*
  The options of product C: those without a prefix, then those under the prefix of the parallel product C belongs to
  (when C is one of the local products of PETSc's MPIAIJ route), then those under C's own prefix; each overrides the
  one before.  So -mat_ocean_* reaches every product, local products of parallel ones included.
*/
PetscErrorCode MatOceanGetOptions_Private(Mat C, MatOceanOptions *opts)
{
  const char        *prefix = ((PetscObject)C)->prefix;
  MatOceanRawOptions r;
  MPI_Comm           comm = PetscObjectComm((PetscObject)C);

  PetscFunctionBegin;
  PetscCall(PetscMemzero(opts, sizeof(*opts)));
  PetscCall(PetscMemzero(&r, sizeof(r)));
  OceanOptionsDefault(&opts->core);
  r.backend        = MAT_OCEAN_BACKEND_AUTO;
  r.workflow       = 0;
  r.nnz_limit      = PETSC_MAX_INT;
  r.registers      = opts->core.hll_registers;
  r.coefficient    = opts->core.estimate_coefficient;
  r.smem           = (PetscInt)opts->core.acc_smem_per_sm;
  r.narrow_columns = (PetscInt)opts->core.narrow_max_columns;
  r.narrow_density = (PetscReal)opts->core.narrow_min_density;
  r.narrow_entries = (PetscInt)opts->core.narrow_max_entries;
  r.reuse_map_mb   = -1;
  PetscCall(MatOceanReadOptions_Private(C, NULL, &r));
  if (prefix && prefix[0]) {
    const size_t outer = MatOceanOuterPrefixLength(prefix);
    if (outer > 0 && outer < strlen(prefix)) {
      char buf[256];
      PetscCall(PetscStrncpy(buf, prefix, PetscMin(sizeof(buf), outer + 1)));
      PetscCall(MatOceanReadOptions_Private(C, buf, &r));
    }
    PetscCall(MatOceanReadOptions_Private(C, prefix, &r));
  }
  PetscCheck(r.registers == 0 || (r.registers >= 16 && r.registers <= 256 && !(r.registers & (r.registers - 1))), comm, PETSC_ERR_ARG_OUTOFRANGE,
             "-mat_ocean_hll_registers %" PetscInt_FMT " must be 0 or a power of two in [16, 256]", r.registers);
  PetscCheck(r.coefficient >= 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "-mat_ocean_estimate_coefficient %g must be >= 0", (double)r.coefficient);
  PetscCheck(r.smem >= 4096, comm, PETSC_ERR_ARG_OUTOFRANGE, "-mat_ocean_acc_smem_per_sm %" PetscInt_FMT " must be at least 4096 bytes", r.smem);
  PetscCheck(r.nnz_limit >= 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "-mat_ocean_nnz_limit %" PetscInt_FMT " must be >= 0", r.nnz_limit);
  PetscCheck(r.narrow_columns >= 0 && r.narrow_columns <= OCEAN_NARROW_MAX_COLUMNS, comm, PETSC_ERR_ARG_OUTOFRANGE, "-mat_ocean_narrow_max_columns %" PetscInt_FMT " must lie in [0, %d]",
             r.narrow_columns, OCEAN_NARROW_MAX_COLUMNS);
  PetscCheck(r.narrow_density >= 0 && r.narrow_density <= 1, comm, PETSC_ERR_ARG_OUTOFRANGE, "-mat_ocean_narrow_min_density %g must lie in [0, 1]", (double)r.narrow_density);
  PetscCheck(r.device_memory_mb >= 0 && r.device_memory_mb < 9e12, comm, PETSC_ERR_ARG_OUTOFRANGE, "-mat_ocean_device_memory_mb %g must be 0 (the free memory) or a size in MB", (double)r.device_memory_mb);
  PetscCheck(r.reuse_map_mb == -1 || (r.reuse_map_mb >= 0 && r.reuse_map_mb < 9e12), comm, PETSC_ERR_ARG_OUTOFRANGE, "-mat_ocean_reuse_map_mb %g must be -1 (a quarter of the device's memory), 0 (never) or a size in MB",
             (double)r.reuse_map_mb);
  PetscCheck(r.narrow_entries >= 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "-mat_ocean_narrow_max_entries %" PetscInt_FMT " must be >= 0", r.narrow_entries);
  opts->backend                   = (MatOceanBackendChoice)r.backend;
  opts->view                      = r.view;
  opts->core.workflow             = (OceanWorkflow)(r.workflow - 1); /* "auto" is OCEAN_WORKFLOW_AUTO = -1 */
  opts->core.hll_registers        = (int)r.registers;
  opts->core.estimate_coefficient = (double)r.coefficient;
  opts->core.acc_smem_per_sm      = (int64_t)r.smem;
  opts->core.max_output_nnz       = (int64_t)r.nnz_limit;
  opts->core.narrow_max_columns   = (int64_t)r.narrow_columns;
  opts->core.narrow_min_density   = (double)r.narrow_density;
  opts->core.narrow_max_entries   = (int64_t)r.narrow_entries;
  opts->core.reuse_map_max_bytes  = r.reuse_map_mb < 0 ? -1 : (int64_t)(r.reuse_map_mb * 1048576.0);
  opts->core.device_memory_limit  = (int64_t)(r.device_memory_mb * 1048576.0);
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* This process's CUDA device: -mat_ocean_device, else its rank in PETSC_COMM_WORLD modulo the visible devices, so
   that ranks sharing a node share its GPUs round robin (MPI_Comm_rank is not collective: any rank may ask first). */
static PetscErrorCode MatOceanChooseDevice_Private(int ndev, int *device)
{
  PetscInt    dev = 0;
  PetscBool   set;
  PetscMPIInt rank;

  PetscFunctionBegin;
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-mat_ocean_device", &dev, &set));
  if (set) {
    PetscCheck(dev >= 0 && (ndev == 0 || dev < ndev), PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-mat_ocean_device %" PetscInt_FMT ": %d CUDA device(s) visible, numbered from 0", dev,
               ndev);
    *device = (int)dev;
  } else {
    PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
    *device = ndev > 0 ? (int)(rank % ndev) : 0;
  }
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

static PetscErrorCode MatOceanCreateContext_Private(OceanBackend backend, OceanContext *ctx)
{
  PetscFunctionBegin;
  PetscCall(MatOceanInitializePackage());
  if (!MatOceanContexts[backend]) {
    OceanDeviceProfile profile, *use = NULL;
    int                ndev = 0, device;

    /* The CPU backend imitates the GPU it would run on: this process's device's profile where there is one. */
    PetscCallOcean(OceanCudaDeviceCount(&ndev));
    PetscCall(MatOceanChooseDevice_Private(ndev, &device));
    if (backend == OCEAN_BACKEND_CPU && ndev > 0 && OceanCudaDeviceProfile(device, &profile) == OCEAN_SUCCESS) use = &profile;
    PetscCallOcean(OceanContextCreateOnDevice(backend, device, use, &MatOceanContexts[backend]));
    PetscCallOcean(OceanContextSetPhaseCallback(MatOceanContexts[backend], MatOceanPhaseCallback, NULL));
  }
  *ctx = MatOceanContexts[backend];
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* auto: the CUDA backend when it is compiled in, a device is present and the backend accepts it; else the CPU. */
PetscErrorCode MatOceanGetContext_Private(MatOceanBackendChoice choice, OceanContext *ctx, OceanBackend *backend)
{
  PetscFunctionBegin;
  if (choice == MAT_OCEAN_BACKEND_CPU) *backend = OCEAN_BACKEND_CPU;
  else if (choice == MAT_OCEAN_BACKEND_CUDA) *backend = OCEAN_BACKEND_CUDA;
  else {
    int ndev = 0;

    *backend = OCEAN_BACKEND_CPU;
    PetscCallOcean(OceanCudaDeviceCount(&ndev));
    if (OceanCudaCompiled() && ndev > 0 && !MatOceanContexts[OCEAN_BACKEND_CUDA]) {
      OceanContext cuda = NULL;
      int          device;

      PetscCall(MatOceanChooseDevice_Private(ndev, &device));
      if (OceanContextCreateOnDevice(OCEAN_BACKEND_CUDA, device, NULL, &cuda) == OCEAN_SUCCESS) {
        MatOceanContexts[OCEAN_BACKEND_CUDA] = cuda;
        PetscCallOcean(OceanContextSetPhaseCallback(cuda, MatOceanPhaseCallback, NULL));
      } else PetscCall(PetscInfo(NULL, "petsc-ocean: CUDA backend not usable (%s); using the CPU backend\n", OceanGetLastErrorMessage()));
    }
    if (MatOceanContexts[OCEAN_BACKEND_CUDA]) *backend = OCEAN_BACKEND_CUDA;
  }
  PetscCall(MatOceanCreateContext_Private(*backend, ctx));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

PetscErrorCode MatOceanCountersAdd_Private(PetscInt64 symbolic, PetscInt64 numeric, PetscInt64 skipped, PetscInt64 resymbolic)
{
  PetscFunctionBegin;
  MatOceanCount.symbolic += symbolic;
  MatOceanCount.numeric += numeric;
  MatOceanCount.numeric_skipped += skipped;
  MatOceanCount.resymbolic += resymbolic;
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/*@C
  MatOceanGetCounters - Process-wide counts of the local products petsc-ocean ran, and of its sketch builds and reuses.

  Not Collective

  Output Parameter:
. counters - the counts

  Level: intermediate

.seealso: `MatOceanProductGetStats()`
@*/
PetscErrorCode MatOceanGetCounters(MatOceanCounters *counters)
{
  int64_t built = 0, reused = 0;

  PetscFunctionBegin;
  PetscValidPointer(counters, 1);
  *counters = MatOceanCount;
  for (int b = 0; b < 2; b++) {
    int64_t nb = 0, nr = 0;
    if (MatOceanContexts[b]) PetscCallOcean(OceanContextGetSketchCounts(MatOceanContexts[b], &nb, &nr));
    built += nb;
    reused += nr;
  }
  counters->sketches_built  = built;
  counters->sketches_reused = reused;
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/*@C
  MatOceanStatsView - Prints the decisions and statistics of one stage of a petsc-ocean product.

  Input Parameters:
+ stats  - from `MatOceanProductGetStats()`
- viewer - an ASCII viewer

  Level: intermediate

.seealso: `MatOceanProductGetStats()`
@*/
PetscErrorCode MatOceanStatsView(const OceanStats *s, PetscViewer viewer)
{
  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(viewer, "workflow %s%s%s, %" PetscInt64_FMT " x %" PetscInt64_FMT ", nnz A %" PetscInt64_FMT " B %" PetscInt64_FMT " C %" PetscInt64_FMT ", products %" PetscInt64_FMT "\n",
                                   OceanWorkflowName(s->workflow), s->workflow_forced ? " (forced)" : " (selected)", s->switched_to_exact == 2 ? " (switched to exact: the over-allocation would not fit the device memory)" : s->switched_to_exact ? " (switched to exact: over-allocation beyond the nnz limit)" : "", s->nrows, s->ncols,
                                   s->nnz_a, s->nnz_b, s->nnz_c, s->products));
  if (s->sampled_rows)
    PetscCall(PetscViewerASCIIPrintf(viewer, "  ER %.3g, CR %.3g; sampled CR %.3g over %" PetscInt64_FMT " rows (mean %.3g, std %.3g, conservative %.3g); upper bound %" PetscInt64_FMT " entries\n", s->er, s->cr, s->cr_sampled,
                                     s->sampled_rows, s->cr_mean, s->cr_std, s->cr_conservative, s->bound_nnz));
  else PetscCall(PetscViewerASCIIPrintf(viewer, "  ER %.3g, CR %.3g; not sampled: the upper bound, %" PetscInt64_FMT " entries, is tight\n", s->er, s->cr, s->bound_nnz));
  if (s->hll_registers)
    PetscCall(PetscViewerASCIIPrintf(viewer, "  HyperLogLog %d registers, coefficient %.2g, sketches %s, mean relative estimate error %.3f\n", s->hll_registers, s->estimate_coefficient, s->sketches_reused ? "reused" : "built",
                                     s->estimate_mean_rel_error));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  rows per bin:"));
  for (int b = 0; b < OCEAN_NUM_BINS; b++) PetscCall(PetscViewerASCIIPrintf(viewer, " %s %" PetscInt64_FMT, OceanBinName((OceanBin)b), s->rows_per_bin[b]));
  PetscCall(PetscViewerASCIIPrintf(viewer, "\n  accumulators: esc %" PetscInt64_FMT " hash %" PetscInt64_FMT " dense %" PetscInt64_FMT " global-hash %" PetscInt64_FMT "; bitmap query %s; packed sort keys %s\n", s->esc_rows, s->hash_rows,
                                   s->dense_rows, s->global_rows, s->bitmap_query ? "yes" : "no", s->packed_sort_keys ? "yes" : "no"));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  overflow rows %" PetscInt64_FMT ", symbolic retries %" PetscInt64_FMT ", allocated entries %" PetscInt64_FMT " (%.2fx nnz C); symbolic calls %" PetscInt64_FMT ", numeric calls %" PetscInt64_FMT "\n",
                                   s->overflow_rows, s->symbolic_retry_rows, s->allocated_entries, s->nnz_c ? (double)s->allocated_entries / (double)s->nnz_c : 0.0, s->symbolic_calls, s->numeric_calls));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  time (ms): analysis %.3f estimate %.3f symbolic %.3f numeric %.3f fallback %.3f compact %.3f transpose %.3f upload %.3f download %.3f\n", 1e3 * s->t_analysis, 1e3 * s->t_estimate,
                                   1e3 * s->t_symbolic, 1e3 * s->t_numeric, 1e3 * s->t_fallback, 1e3 * s->t_compact, 1e3 * s->t_transpose, 1e3 * s->t_upload, 1e3 * s->t_download));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  operands uploaded: %.3f MB (0 when the device copies were current)\n", 1e-6 * (double)s->uploaded_bytes));
  if (s->reuse_map_bytes) PetscCall(PetscViewerASCIIPrintf(viewer, "  numeric through the product map: %.3f MB (-mat_ocean_reuse_map_mb)\n", 1e-6 * (double)s->reuse_map_bytes));
  if (s->row_chunks)
    PetscCall(PetscViewerASCIIPrintf(viewer, "  C made in %" PetscInt64_FMT " chunks of rows, each copied to the host: it did not fit the device memory (-mat_ocean_device_memory_mb)\n", s->row_chunks));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

PetscErrorCode MatOceanProductView_Private(Mat C, OceanProduct plan, const char *header, PetscViewer viewer)
{
  int nstages;

  PetscFunctionBegin;
  PetscCallOcean(OceanProductGetNumStages(plan, &nstages));
  PetscCall(PetscViewerASCIIPrintf(viewer, "%s\n", header));
  PetscCall(PetscViewerASCIIPushTab(viewer));
  for (int st = 0; st < nstages; st++) {
    OceanStats stats;

    PetscCallOcean(OceanProductGetStats(plan, st, &stats));
    if (nstages > 1) PetscCall(PetscViewerASCIIPrintf(viewer, "stage %d (%s): ", st, st == 0 ? "A*P" : "P^T*(AP)"));
    PetscCall(MatOceanStatsView(&stats, viewer));
  }
  PetscCall(PetscViewerASCIIPopTab(viewer));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* ---- shared by seqaijocean and mpiaijocean ---------------------------------------------------------------- */

/* The common start of a conversion: a copy for MAT_INITIAL_MATRIX, values for MAT_REUSE_MATRIX (then done). */
PetscErrorCode MatOceanConvertBegin_Private(Mat A, MatReuse reuse, Mat *newmat, PetscBool *done)
{
  PetscFunctionBegin;
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, newmat));
  else if (reuse == MAT_REUSE_MATRIX) PetscCall(MatCopy(A, *newmat, SAME_NONZERO_PATTERN));
  *done = (PetscBool)(reuse == MAT_REUSE_MATRIX);
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

static PetscErrorCode MatDestroy_Ocean(Mat);

/* What an ocean matrix keeps of its parent, or NULL for any other matrix (or one converted back already). */
static Mat_OceanParent *MatOceanParentOf(Mat M)
{
  return M->ops->destroy == MatDestroy_Ocean ? (Mat_OceanParent *)M->spptr : NULL;
}

/* Composed as MatProductSetFromOptions_anytype_C, which PETSc asks for when no product is composed for the
   operands' exact types: the product another type composes with our parent type (dense times aij, ...). */
static PetscErrorCode MatProductSetFromOptions_OceanAnyType(Mat C)
{
  Mat_Product *product = C->product;
  Mat          ops[3]  = {product->A, product->B, product->type == MATPRODUCT_ABC ? product->C : NULL};
  char         name[256];
  PetscErrorCode (*f)(Mat) = NULL;

  PetscFunctionBegin;
  if (product->type == MATPRODUCT_ABC) { /* three AIJ operands of mixed types: the parent's own triple product */
    PetscBool        aij = PETSC_TRUE, is;
    Mat_OceanParent *own = NULL;
    for (int k = 0; k < 3; k++) {
      PetscCall(PetscObjectBaseTypeCompareAny((PetscObject)ops[k], &is, MATSEQAIJ, MATMPIAIJ, ""));
      aij = (PetscBool)(aij && is);
      if (!own) own = MatOceanParentOf(ops[k]);
    }
    if (aij && own) {
      PetscCall((*own->productsetfromoptions)(C));
      PetscFunctionReturn(OCEAN_PETSC_OK);
    }
  }
  PetscCall(PetscStrncpy(name, "MatProductSetFromOptions", sizeof(name)));
  for (int k = 0; k < 3 && ops[k]; k++) { /* our types by their parent's name: what other types compose with */
    Mat_OceanParent *parent = MatOceanParentOf(ops[k]);
    PetscCall(PetscStrlcat(name, "_", sizeof(name)));
    PetscCall(PetscStrlcat(name, parent ? parent->type->parent : ((PetscObject)ops[k])->type_name, sizeof(name)));
  }
  PetscCall(PetscStrlcat(name, "_C", sizeof(name)));
  for (int k = 0; k < 3 && ops[k] && !f; k++) PetscCall(PetscObjectQueryFunction((PetscObject)ops[k], name, &f));
  if (f && f != MatProductSetFromOptions_OceanAnyType) {
    PetscCall(PetscInfo(C, "petsc-ocean: %s for %s, %s\n", name, ((PetscObject)product->A)->type_name, ((PetscObject)product->B)->type_name));
    PetscCall((*f)(C));
  }
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* name with every '_'-separated token equal to the parent type replaced by ours; hits: how many were, ours: how many
   tokens already name our type. */
static PetscErrorCode MatOceanAliasName(const char *name, const MatOceanType *t, char alias[], size_t len, int *hits, int *ours)
{
  char *dup, *tok, *save = NULL;

  PetscFunctionBegin;
  alias[0] = 0;
  *hits = *ours = 0;
  PetscCall(PetscStrallocpy(name, &dup));
  for (tok = strtok_r(dup, "_", &save); tok; tok = strtok_r(NULL, "_", &save)) {
    PetscBool is_parent, is_ours;
    PetscCall(PetscStrcmp(tok, t->parent, &is_parent));
    PetscCall(PetscStrcmp(tok, t->name, &is_ours));
    *hits += is_parent;
    *ours += is_ours;
    if (alias[0]) PetscCall(PetscStrlcat(alias, "_", len));
    PetscCall(PetscStrlcat(alias, is_parent ? t->name : tok, len));
  }
  PetscCall(PetscFree(dup));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* The functions the parent composes under names that carry its type (converters, products with other types), found
   again under our type name: MatConvert(ours, MATIS, ...) and friends then reach the parent's own implementation.
   Names with the parent type in several places (products of two parent matrices) stay the parent's: those
   products are ours to decide.  attach PETSC_FALSE removes every name that carries our type. */
static PetscErrorCode MatOceanAliasParentMethods(Mat B, const MatOceanType *t, PetscBool attach)
{
  const char **names;
  char       **from, **to; /* attach: compose to[k] as from[k]; detach: remove from[k] */
  int          n, ntodo = 0;

  PetscFunctionBegin;
  PetscCall(PetscFunctionListGet(((PetscObject)B)->qlist, &names, &n));
  PetscCall(PetscCalloc2(n + 1, &from, n + 1, &to));
  for (int k = 0; names[k]; k++) { /* names copied first: composing changes the list */
    char alias[256];
    int  hits, ours;

    PetscCall(MatOceanAliasName(names[k], t, alias, sizeof(alias), &hits, &ours));
    if (attach ? hits == 1 && !ours : ours > 0) {
      PetscCall(PetscStrallocpy(names[k], &from[ntodo]));
      PetscCall(PetscStrallocpy(alias, &to[ntodo++]));
    }
  }
  PetscCall(PetscFree(names));
  for (int k = 0; k < ntodo; k++) {
    if (attach) {
      PetscErrorCode (*f)(void) = NULL, (*existing)(void) = NULL;

      PetscCall(PetscObjectQueryFunction((PetscObject)B, from[k], &f));
      PetscCall(PetscObjectQueryFunction((PetscObject)B, to[k], &existing));
      if (!existing) PetscCall(PetscObjectComposeFunction((PetscObject)B, to[k], f)); /* ours come first */
    } else PetscCall(PetscObjectComposeFunction((PetscObject)B, from[k], NULL));
    PetscCall(PetscFree(from[k]));
    PetscCall(PetscFree(to[k]));
  }
  PetscCall(PetscFree2(from, to));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* MatRetrieveValues() brings back stored values without advancing the object state, by which products (and the
   device copies of operands) tell new values: ours advances it. */
static PetscErrorCode MatRetrieveValues_Ocean(Mat A)
{
  Mat_OceanParent *parent = (Mat_OceanParent *)A->spptr;

  PetscFunctionBegin;
  PetscCheck(parent && parent->retrievevalues, PETSC_COMM_SELF, PETSC_ERR_SUP, "MatRetrieveValues() is not available for %s", ((PetscObject)A)->type_name);
  PetscCall((*parent->retrievevalues)(A));
  PetscCall(PetscObjectStateIncrease((PetscObject)A));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* Compose (attach) or remove the methods an ocean type adds.  MatConvert_<parent>_<ocean> lets MatSetType(parent-type
   matrix, ocean type) convert in place and keep the data (PETSc's transposes do that). */
static PetscErrorCode MatOceanComposeMethods(Mat B, const MatOceanType *t, PetscBool attach)
{
  const char *k = t->kind;
  char        name[128];

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(name, sizeof(name), "MatConvert_%saij_%saijocean_C", k, k));
  PetscCall(PetscObjectComposeFunction((PetscObject)B, name, attach ? t->convert_to : NULL));
  PetscCall(PetscSNPrintf(name, sizeof(name), "MatConvert_%saijocean_%saij_C", k, k));
  PetscCall(PetscObjectComposeFunction((PetscObject)B, name, attach ? t->convert_back : NULL));
  PetscCall(PetscSNPrintf(name, sizeof(name), "MatProductSetFromOptions_%saijocean_%saij_C", k, k));
  PetscCall(PetscObjectComposeFunction((PetscObject)B, name, attach ? t->productsetfromoptions : NULL));
  PetscCall(PetscSNPrintf(name, sizeof(name), "MatProductSetFromOptions_%saij_%saijocean_C", k, k));
  PetscCall(PetscObjectComposeFunction((PetscObject)B, name, attach ? t->productsetfromoptions : NULL));
  PetscCall(PetscSNPrintf(name, sizeof(name), "MatProductSetFromOptions_%saijocean_%smaij_C", k, k));
  PetscCall(PetscObjectComposeFunction((PetscObject)B, name, attach ? MatProductSetFromOptions_OceanMAIJ : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)B, "MatProductSetFromOptions_anytype_C", attach ? MatProductSetFromOptions_OceanAnyType : NULL));
  if (attach) {
    Mat_OceanParent *parent = (Mat_OceanParent *)B->spptr;
    PetscCall(PetscObjectQueryFunction((PetscObject)B, "MatRetrieveValues_C", &parent->retrievevalues));
    if (parent->retrievevalues == MatRetrieveValues_Ocean) parent->retrievevalues = NULL; /* never our own */
    if (parent->retrievevalues) PetscCall(PetscObjectComposeFunction((PetscObject)B, "MatRetrieveValues_C", MatRetrieveValues_Ocean));
  } else {
    Mat_OceanParent *parent = (Mat_OceanParent *)B->spptr;
    if (parent && parent->retrievevalues) PetscCall(PetscObjectComposeFunction((PetscObject)B, "MatRetrieveValues_C", parent->retrievevalues));
  }
  PetscCall(MatOceanAliasParentMethods(B, t, attach));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* The parents' destroy methods, as found when a matrix was first made ours: PETSc's submatrices keep the destroy
   method they were made with and call it even after the matrix was converted back to the parent type. */
static PetscErrorCode (*MatOceanParentDestroy[2])(Mat);

static PetscErrorCode MatDestroy_Ocean(Mat A)
{
  Mat_OceanParent *parent = (Mat_OceanParent *)A->spptr;
  PetscErrorCode (*destroy)(Mat);
  PetscBool        mpi;

  PetscFunctionBegin;
  if (!parent) { /* converted back already: only the parent's destroy is left to run */
    PetscCall(PetscObjectBaseTypeCompare((PetscObject)A, MATMPIAIJ, &mpi));
    PetscCheck(MatOceanParentDestroy[mpi], PETSC_COMM_SELF, PETSC_ERR_PLIB, "No parent destroy method for a matrix of type %s", ((PetscObject)A)->type_name);
    PetscCall((*MatOceanParentDestroy[mpi])(A));
    PetscFunctionReturn(OCEAN_PETSC_OK);
  }
  destroy = parent->destroy;
  PetscCall(MatOceanComposeMethods(A, parent->type, PETSC_FALSE));
  PetscCall(PetscFree(A->spptr));
  PetscCall((*destroy)(A));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* The parent's duplicate creates the copy with our type name; converting again is a no-op on it, but makes sure
   whatever the parent produced ends up ours (and, for MPIAIJ, that its blocks are). */
static PetscErrorCode MatDuplicate_Ocean(Mat A, MatDuplicateOption op, Mat *B)
{
  Mat_OceanParent *parent = (Mat_OceanParent *)A->spptr;

  PetscFunctionBegin;
  PetscCall((*parent->duplicate)(A, op, B));
  PetscCall((*parent->type->convert_to)(*B, parent->type->name, MAT_INPLACE_MATRIX, B));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* Turn a matrix of the parent type into the ocean type in place: keep the parent's data, override a few methods. */
PetscErrorCode MatOceanAttach_Private(Mat B, const MatOceanType *t)
{
  Mat_OceanParent *parent;

  PetscFunctionBegin;
  PetscCheck(!B->spptr, PetscObjectComm((PetscObject)B), PETSC_ERR_ARG_WRONGSTATE, "Cannot convert a matrix of type %s that already carries type-specific data to %s", ((PetscObject)B)->type_name, t->name);
  PetscCall(PetscNew(&parent));
  parent->type                  = t;
  parent->destroy               = B->ops->destroy;
  parent->assemblyend           = B->ops->assemblyend;
  parent->duplicate             = B->ops->duplicate;
  parent->productsetfromoptions = B->ops->productsetfromoptions;
  if (!MatOceanParentDestroy[t->kind[0] == 'm']) MatOceanParentDestroy[t->kind[0] == 'm'] = B->ops->destroy;
  B->spptr                      = parent;
  B->ops->destroy               = MatDestroy_Ocean;
  B->ops->duplicate             = MatDuplicate_Ocean;
  B->ops->productsetfromoptions = t->productsetfromoptions;
  if (t->assemblyend) B->ops->assemblyend = t->assemblyend;
  PetscCall(MatOceanComposeMethods(B, t, PETSC_TRUE));
  PetscCall(PetscObjectChangeTypeName((PetscObject)B, t->name));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* The inverse of MatOceanAttach_Private. */
PetscErrorCode MatOceanDetach_Private(Mat B)
{
  Mat_OceanParent *parent = (Mat_OceanParent *)B->spptr;
  const MatOceanType *t;

  PetscFunctionBegin;
  if (!parent) PetscFunctionReturn(OCEAN_PETSC_OK);
  t = parent->type;
  PetscCall(MatOceanComposeMethods(B, t, PETSC_FALSE));
  B->ops->destroy               = parent->destroy;
  B->ops->assemblyend           = parent->assemblyend;
  B->ops->duplicate             = parent->duplicate;
  B->ops->productsetfromoptions = parent->productsetfromoptions;
  PetscCall(PetscFree(B->spptr));
  PetscCall(PetscObjectChangeTypeName((PetscObject)B, t->parent));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}
