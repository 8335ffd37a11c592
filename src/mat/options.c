/* The -mat_ocean_* options of one product, read with the product matrix's prefixes (the outer one wins). */
#include "mat/matocean.h"

static const char *const MatOceanBackendNames[] = {"auto", "cpu", "cuda", "MatOceanBackendChoice", "MAT_OCEAN_BACKEND_",
                                                   NULL};
static const char *const MatOceanWorkflowNames[] = {"auto",   "upper_bound",         "estimate",        "exact",
                                                    "narrow", "OceanWorkflowOption", "OCEAN_WORKFLOW_", NULL};
static const char *const MatOceanHeavyNames[] = {"auto", "off", "multisplit", "OceanHeavyMode", "OCEAN_HEAVY_", NULL};

/* The options as read, before they are checked. */
typedef struct {
  PetscInt  backend, workflow, registers, nnz_limit, smem, narrow_columns, narrow_entries, small_bound, bound_factor;
  PetscInt  heavy, heavy_threshold, heavy_columns, heavy_per_level, heavy_min_span;
  PetscReal coefficient, narrow_density, reuse_map_mb, device_memory_mb;
  PetscBool view, one_pass_exact;
} MatOceanRawOptions;

/* Reads the options under one prefix (NULL: none) over the values in *r. */
static PetscErrorCode MatOceanReadOptions_Private(Mat C, const char *prefix, MatOceanRawOptions *r)
{
  PetscFunctionBegin;
  PetscOptionsBegin(PetscObjectComm((PetscObject)C), prefix, "petsc-ocean SpGEMM options", "Mat");
  PetscCall(PetscOptionsEList("-mat_ocean_backend", "Where products run", "MatOceanInitializePackage",
                              MatOceanBackendNames, 3, MatOceanBackendNames[r->backend], &r->backend, NULL));
  PetscCall(PetscOptionsEList("-mat_ocean_workflow", "Force a workflow (auto: the Ocean selection)",
                              "MatOceanInitializePackage", MatOceanWorkflowNames, 5, MatOceanWorkflowNames[r->workflow],
                              &r->workflow, NULL));
  PetscCall(PetscOptionsInt("-mat_ocean_small_bound",
                            "Upper bound, without a sample, when the rows' bounds total at most this many entries "
                            "(0: never)",
                            "MatOceanInitializePackage", r->small_bound, &r->small_bound, NULL));
  PetscCall(PetscOptionsInt("-mat_ocean_bound_factor",
                            "The upper bound routes a row by min(bound, this x the longest row of B it reaches) (0: by "
                            "the bound)",
                            "MatOceanInitializePackage", r->bound_factor, &r->bound_factor, NULL));
  PetscCall(PetscOptionsBool("-mat_ocean_one_pass_exact",
                             "Where the selection takes the estimate workflow, the CPU backend takes the exact one in "
                             "one pass (false: the GPU's decisions)",
                             "MatOceanInitializePackage", r->one_pass_exact, &r->one_pass_exact, NULL));
  PetscCall(PetscOptionsInt("-mat_ocean_hll_registers", "HyperLogLog registers per sketch (0: 32, or 64 when ER >= 48)",
                            "MatOceanInitializePackage", r->registers, &r->registers, NULL));
  PetscCall(PetscOptionsReal("-mat_ocean_estimate_coefficient",
                             "Estimate multiplier (0: 2.0 at 32 registers, else 1.5)", "MatOceanInitializePackage",
                             r->coefficient, &r->coefficient, NULL));
  PetscCall(PetscOptionsInt("-mat_ocean_acc_smem_per_sm", "Shared memory per SM given to accumulators (bytes)",
                            "MatOceanInitializePackage", r->smem, &r->smem, NULL));
  PetscCall(PetscOptionsInt("-mat_ocean_nnz_limit", "Largest nnz(C) accepted", "MatOceanInitializePackage",
                            r->nnz_limit, &r->nnz_limit, NULL));
  PetscCall(PetscOptionsInt("-mat_ocean_narrow_max_columns",
                            "Narrow workflow when P (B) has at most this many columns (0: never automatically)",
                            "MatOceanInitializePackage", r->narrow_columns, &r->narrow_columns, NULL));
  PetscCall(PetscOptionsReal("-mat_ocean_narrow_min_density", "... and nnz(P) >= this x rows x columns",
                             "MatOceanInitializePackage", r->narrow_density, &r->narrow_density, NULL));
  PetscCall(PetscOptionsInt("-mat_ocean_narrow_max_entries", "... and rows(A) x columns(P) at most this",
                            "MatOceanInitializePackage", r->narrow_entries, &r->narrow_entries, NULL));
  PetscCall(PetscOptionsReal("-mat_ocean_device_memory_mb",
                             "GPU memory (MB) the over-allocating workflows may count on; beyond it they switch to "
                             "exact counting (0: what is free)",
                             "MatOceanInitializePackage", r->device_memory_mb, &r->device_memory_mb, NULL));
  PetscCall(PetscOptionsReal("-mat_ocean_reuse_map_mb",
                             "Numeric reuse on the GPU: keep a map of each product to its entry of C up to this many "
                             "MB (-1: a quarter of the device's memory, 0: never)",
                             "MatOceanInitializePackage", r->reuse_map_mb, &r->reuse_map_mb, NULL));
  PetscCall(PetscOptionsEList(
    "-mat_ocean_heavy",
    "Heavy rows by the multisplit (gMAGNUS): auto (rows no shared-memory accumulator holds, or of more than 4096 "
    "products, spanning more than -mat_ocean_heavy_min_span columns), off, multisplit (every row with more products "
    "than the threshold)",
    "MatOceanInitializePackage", MatOceanHeavyNames, 3, MatOceanHeavyNames[r->heavy], &r->heavy, NULL));
  PetscCall(PetscOptionsInt("-mat_ocean_heavy_min_span",
                            "auto: columns a row of too many products for shared memory must span to be heavy",
                            "MatOceanInitializePackage", r->heavy_min_span, &r->heavy_min_span, NULL));
  PetscCall(PetscOptionsInt("-mat_ocean_heavy_threshold",
                            "Products above which a row is heavy, and elements up to which a chunk is hashed (0: "
                            "from the shared memory; auto: no least products)",
                            "MatOceanInitializePackage", r->heavy_threshold, &r->heavy_threshold, NULL));
  PetscCall(PetscOptionsInt("-mat_ocean_heavy_chunk_columns",
                            "Columns of a last-level chunk, a power of two (0: from the shared memory)",
                            "MatOceanInitializePackage", r->heavy_columns, &r->heavy_columns, NULL));
  PetscCall(PetscOptionsInt("-mat_ocean_heavy_chunks_per_level",
                            "Most chunks a multisplit level makes, a power of two >= 2 (0: from the shared memory)",
                            "MatOceanInitializePackage", r->heavy_per_level, &r->heavy_per_level, NULL));
  PetscCall(PetscOptionsBool("-mat_ocean_view", "Print each product's decisions and statistics",
                             "MatOceanProductGetStats", r->view, &r->view, NULL));
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
  r.small_bound    = (PetscInt)opts->core.small_bound;
  r.bound_factor   = (PetscInt)opts->core.bound_factor;
  r.one_pass_exact = opts->core.one_pass_exact ? PETSC_TRUE : PETSC_FALSE;
  r.reuse_map_mb   = -1;
  r.heavy          = (PetscInt)opts->core.heavy;
  r.heavy_min_span = (PetscInt)opts->core.heavy_min_span;
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
  PetscCheck(r.registers == 0 || (r.registers >= 16 && r.registers <= 256 && !(r.registers & (r.registers - 1))), comm,
             PETSC_ERR_ARG_OUTOFRANGE,
             "-mat_ocean_hll_registers %" PetscInt_FMT " must be 0 or a power of two in [16, 256]", r.registers);
  PetscCheck(r.coefficient >= 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "-mat_ocean_estimate_coefficient %g must be >= 0",
             (double)r.coefficient);
  PetscCheck(r.smem >= 4096, comm, PETSC_ERR_ARG_OUTOFRANGE,
             "-mat_ocean_acc_smem_per_sm %" PetscInt_FMT " must be at least 4096 bytes", r.smem);
  PetscCheck(r.nnz_limit >= 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "-mat_ocean_nnz_limit %" PetscInt_FMT " must be >= 0",
             r.nnz_limit);
  PetscCheck(r.narrow_columns >= 0 && r.narrow_columns <= OCEAN_NARROW_MAX_COLUMNS, comm, PETSC_ERR_ARG_OUTOFRANGE,
             "-mat_ocean_narrow_max_columns %" PetscInt_FMT " must lie in [0, %d]", r.narrow_columns,
             OCEAN_NARROW_MAX_COLUMNS);
  PetscCheck(r.narrow_density >= 0 && r.narrow_density <= 1, comm, PETSC_ERR_ARG_OUTOFRANGE,
             "-mat_ocean_narrow_min_density %g must lie in [0, 1]", (double)r.narrow_density);
  PetscCheck(r.device_memory_mb >= 0 && r.device_memory_mb < 9e12, comm, PETSC_ERR_ARG_OUTOFRANGE,
             "-mat_ocean_device_memory_mb %g must be 0 (the free memory) or a size in MB", (double)r.device_memory_mb);
  PetscCheck(r.reuse_map_mb == -1 || (r.reuse_map_mb >= 0 && r.reuse_map_mb < 9e12), comm, PETSC_ERR_ARG_OUTOFRANGE,
             "-mat_ocean_reuse_map_mb %g must be -1 (a quarter of the device's memory), 0 (never) or a size in MB",
             (double)r.reuse_map_mb);
  PetscCheck(r.narrow_entries >= 0, comm, PETSC_ERR_ARG_OUTOFRANGE,
             "-mat_ocean_narrow_max_entries %" PetscInt_FMT " must be >= 0", r.narrow_entries);
  PetscCheck(r.small_bound >= 0, comm, PETSC_ERR_ARG_OUTOFRANGE,
             "-mat_ocean_small_bound %" PetscInt_FMT " must be >= 0", r.small_bound);
  PetscCheck(r.bound_factor >= 0 && r.bound_factor <= 1024, comm, PETSC_ERR_ARG_OUTOFRANGE,
             "-mat_ocean_bound_factor %" PetscInt_FMT " must lie in [0, 1024] (0: route by the bound)", r.bound_factor);
  PetscCheck(r.heavy_min_span >= 0, comm, PETSC_ERR_ARG_OUTOFRANGE,
             "-mat_ocean_heavy_min_span %" PetscInt_FMT " must be >= 0", r.heavy_min_span);
  PetscCheck(r.heavy_threshold >= 0, comm, PETSC_ERR_ARG_OUTOFRANGE,
             "-mat_ocean_heavy_threshold %" PetscInt_FMT " must be >= 0", r.heavy_threshold);
  PetscCheck(r.heavy_columns >= 0 && !(r.heavy_columns & (r.heavy_columns - 1)), comm, PETSC_ERR_ARG_OUTOFRANGE,
             "-mat_ocean_heavy_chunk_columns %" PetscInt_FMT " must be 0 or a power of two", r.heavy_columns);
  PetscCheck(r.heavy_per_level == 0 ||
               (r.heavy_per_level >= 2 && r.heavy_per_level <= OCEAN_HEAVY_MAX_CHUNKS_PER_LEVEL &&
                !(r.heavy_per_level & (r.heavy_per_level - 1))),
             comm, PETSC_ERR_ARG_OUTOFRANGE,
             "-mat_ocean_heavy_chunks_per_level %" PetscInt_FMT " must be 0 or a power of two in [2, %d]",
             r.heavy_per_level, OCEAN_HEAVY_MAX_CHUNKS_PER_LEVEL);
  opts->backend                     = (MatOceanBackendChoice)r.backend;
  opts->view                        = r.view;
  opts->core.device_timers          = r.view; /* the phase times it prints */
  opts->core.workflow               = (OceanWorkflow)(r.workflow - 1); /* "auto" is OCEAN_WORKFLOW_AUTO = -1 */
  opts->core.hll_registers          = (int)r.registers;
  opts->core.estimate_coefficient   = (double)r.coefficient;
  opts->core.acc_smem_per_sm        = (int64_t)r.smem;
  opts->core.max_output_nnz         = (int64_t)r.nnz_limit;
  opts->core.narrow_max_columns     = (int64_t)r.narrow_columns;
  opts->core.narrow_min_density     = (double)r.narrow_density;
  opts->core.narrow_max_entries     = (int64_t)r.narrow_entries;
  opts->core.small_bound            = (int64_t)r.small_bound;
  opts->core.bound_factor           = (int64_t)r.bound_factor;
  opts->core.one_pass_exact         = r.one_pass_exact ? 1 : 0;
  opts->core.reuse_map_max_bytes    = r.reuse_map_mb < 0 ? -1 : (int64_t)(r.reuse_map_mb * 1048576.0);
  opts->core.device_memory_limit    = (int64_t)(r.device_memory_mb * 1048576.0);
  opts->core.heavy                  = (OceanHeavyMode)r.heavy;
  opts->core.heavy_threshold        = (int64_t)r.heavy_threshold;
  opts->core.heavy_min_span         = (int64_t)r.heavy_min_span;
  opts->core.heavy_chunk_columns    = (int64_t)r.heavy_columns;
  opts->core.heavy_chunks_per_level = (int64_t)r.heavy_per_level;
  PetscFunctionReturn(OCEAN_PETSC_OK);
}
