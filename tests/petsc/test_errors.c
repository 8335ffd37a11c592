static const char help[] =
  "Bad input gets a clear PETSc error, never a crash or a wrong result; unsupported product types fall back to\n"
  "PETSc's implementation with a correct result.\n  -case "
  "sizes|unassembled|nnz_limit|switch_exact|abt|rart|bad_option|cuda_backend|device|narrow|mpi_options|algorithm|"
  "reset_prealloc\n";

#include "oceantest.h"

/* Run `call` with errors returned instead of printed; check the code and that the message names what it should. */
#define EXPECT_ERROR(call, code, text) \
  do { \
    PetscErrorCode ierr_; \
    const char    *msg_ = NULL; \
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL)); \
    ierr_ = (call); \
    PetscCall(PetscPopErrorHandler()); \
    PetscCheck(ierr_ != 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "expected an error from %s", #call); \
    PetscCheck((code) == 0 || ierr_ == (code), PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: error code %d, expected %d", \
               #call, (int)ierr_, (int)(code)); \
    PetscCall(PetscErrorMessage(ierr_, NULL, (void *)&msg_)); /* char ** before PETSc 3.26, then const char ** */ \
    PetscCheck(msg_ != NULL && strstr(msg_, text), PETSC_COMM_SELF, PETSC_ERR_PLIB, \
               "%s: message \"%s\" does not mention \"%s\"", #call, msg_ ? msg_ : "(none)", text); \
  } while (0)

static PetscErrorCode Gen(const char *name, PetscInt size, PetscInt n, PetscInt degree, PetscInt seed, MatType type,
                          Mat *A)
{
  OceanTestGen g;

  PetscFunctionBeginUser;
  PetscCall(OceanTestGenSetup(&g, name, size, n, degree, seed, -1));
  PetscCall(OceanTestGenMat(PETSC_COMM_SELF, &g, type, A));
  PetscCall(OceanTestGenDestroy(&g));
  PetscFunctionReturn(0);
}

static PetscErrorCode ProductAB(Mat A, Mat B, Mat *C)
{
  PetscFunctionBeginUser;
  PetscCall(MatProductCreate(A, B, NULL, C));
  PetscCall(MatProductSetType(*C, MATPRODUCT_AB));
  PetscCall(MatProductSetFromOptions(*C));
  PetscCall(MatProductSymbolic(*C));
  PetscCall(MatProductNumeric(*C));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  char      which[32] = "sizes";
  Mat       A = NULL, B = NULL, C = NULL, R, Bound;
  PetscBool is;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(MatOceanInitializePackage());
  PetscCall(PetscOptionsGetString(NULL, NULL, "-case", which, sizeof(which), NULL));

  PetscCall(PetscStrcmp(which, "sizes", &is));
  if (is) { /* 40 x 30 times 40 x 30 */
    PetscCall(Gen("random", 40, 30, 3, 1, MATAIJOCEAN, &A));
    PetscCall(Gen("random", 40, 30, 3, 2, MATAIJOCEAN, &B));
    EXPECT_ERROR(MatMatMult(A, B, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C), PETSC_ERR_ARG_SIZ, "40x30");
  }
  PetscCall(PetscStrcmp(which, "unassembled", &is));
  if (is) {
    PetscCall(Gen("lap2d", 6, 0, 0, 1, MATAIJOCEAN, &B));
    PetscCall(MatCreate(PETSC_COMM_SELF, &A));
    PetscCall(MatSetSizes(A, 36, 36, 36, 36));
    PetscCall(MatSetType(A, MATAIJOCEAN));
    PetscCall(MatSeqAIJSetPreallocation(A, 5, NULL));
    PetscCall(MatSetValue(A, 0, 0, 1.0, INSERT_VALUES)); /* no assembly */
    EXPECT_ERROR(ProductAB(A, B, &C), 0, "assembled");
  }
  PetscCall(PetscStrcmp(which, "nnz_limit", &is));
  if (is) { /* nnz(C) of a 2D 5-point Laplacian squared on 10^2 points is 1120: a limit of 1000 must refuse it */
    PetscCall(Gen("lap2d", 10, 0, 0, 1, MATAIJOCEAN, &A));
    PetscCall(PetscOptionsSetValue(NULL, "-mat_ocean_nnz_limit", "1000"));
    EXPECT_ERROR(ProductAB(A, A, &C), PETSC_ERR_ARG_OUTOFRANGE, "1000");
  }
  PetscCall(PetscStrcmp(which, "switch_exact", &is));
  if (is) { /* a limit above nnz(C) but below the upper-bound over-allocation: exact counting, correct C */
    OceanStats stats;
    PetscCall(Gen("lap2d", 10, 0, 0, 1, MATAIJOCEAN, &A));
    PetscCall(PetscOptionsSetValue(NULL, "-mat_ocean_nnz_limit", "1200"));
    PetscCall(PetscOptionsSetValue(NULL, "-mat_ocean_workflow", "upper_bound"));
    PetscCall(ProductAB(A, A, &C));
    PetscCall(MatOceanProductGetStats(C, 0, &stats));
    PetscCheck(stats.switched_to_exact && stats.workflow == OCEAN_WORKFLOW_EXACT, PETSC_COMM_SELF, PETSC_ERR_PLIB,
               "expected the switch to exact counting (workflow %s)", OceanWorkflowName(stats.workflow));
    PetscCall(OceanTestReference(MATPRODUCT_AB, A, A, &R, &Bound));
    PetscCall(OceanTestCompare(C, R, Bound, "switch to exact"));
    PetscCall(MatDestroy(&R));
    PetscCall(MatDestroy(&Bound));
  }
  PetscCall(PetscStrcmp(which, "abt", &is));
  if (is) { /* ABt is not ours: PETSc's implementation, and a correct result */
    PetscCall(Gen("random", 30, 20, 3, 1, MATAIJOCEAN, &A));
    PetscCall(Gen("random", 25, 20, 3, 2, MATAIJOCEAN, &B));
    PetscCall(MatMatTransposeMult(A, B, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C));
    PetscCall(OceanTestReference(MATPRODUCT_ABt, A, B, &R, &Bound));
    PetscCall(OceanTestCompare(C, R, Bound, "ABt fallback"));
    PetscCall(MatDestroy(&R));
    PetscCall(MatDestroy(&Bound));
  }
  PetscCall(PetscStrcmp(which, "rart", &is));
  if (is) {
    PetscCall(Gen("lap2d", 6, 0, 0, 1, MATAIJOCEAN, &A));
    PetscCall(Gen("random", 10, 36, 4, 3, MATAIJOCEAN, &B));
    PetscCall(MatRARt(A, B, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C));
    PetscCall(OceanTestReference(MATPRODUCT_RARt, A, B, &R, &Bound));
    PetscCall(OceanTestCompare(C, R, Bound, "RARt fallback"));
    PetscCall(MatDestroy(&R));
    PetscCall(MatDestroy(&Bound));
  }
  PetscCall(PetscStrcmp(which, "bad_option", &is));
  if (is) {
    PetscCall(Gen("lap2d", 6, 0, 0, 1, MATAIJOCEAN, &A));
    PetscCall(PetscOptionsSetValue(NULL, "-mat_ocean_hll_registers", "33"));
    EXPECT_ERROR(ProductAB(A, A, &C), PETSC_ERR_ARG_OUTOFRANGE, "33");
    PetscCall(PetscOptionsClearValue(NULL, "-mat_ocean_hll_registers"));
    PetscCall(MatDestroy(&C)); /* the product the failed call created */
    PetscCall(PetscOptionsSetValue(NULL, "-mat_ocean_reuse_map_mb", "-2"));
    EXPECT_ERROR(ProductAB(A, A, &C), PETSC_ERR_ARG_OUTOFRANGE, "reuse_map_mb");
    PetscCall(PetscOptionsClearValue(NULL, "-mat_ocean_reuse_map_mb"));
    PetscCall(MatDestroy(&C));
    PetscCall(PetscOptionsSetValue(NULL, "-mat_ocean_small_bound", "-1"));
    EXPECT_ERROR(ProductAB(A, A, &C), PETSC_ERR_ARG_OUTOFRANGE, "small_bound");
    PetscCall(PetscOptionsClearValue(NULL, "-mat_ocean_small_bound"));
    PetscCall(MatDestroy(&C));
    PetscCall(PetscOptionsSetValue(NULL, "-mat_ocean_bound_factor", "2000"));
    EXPECT_ERROR(ProductAB(A, A, &C), PETSC_ERR_ARG_OUTOFRANGE, "bound_factor");
    PetscCall(PetscOptionsClearValue(NULL, "-mat_ocean_bound_factor"));
    PetscCall(MatDestroy(&C));
    PetscCall(PetscOptionsSetValue(NULL, "-mat_ocean_heavy_min_span", "-1"));
    EXPECT_ERROR(ProductAB(A, A, &C), PETSC_ERR_ARG_OUTOFRANGE, "-mat_ocean_heavy_min_span -1");
    PetscCall(PetscOptionsClearValue(NULL, "-mat_ocean_heavy_min_span"));
    PetscCall(MatDestroy(&C));
    PetscCall(PetscOptionsSetValue(NULL, "-mat_ocean_device_memory_mb", "-1"));
    EXPECT_ERROR(ProductAB(A, A, &C), PETSC_ERR_ARG_OUTOFRANGE, "device_memory_mb");
  }
  PetscCall(PetscStrcmp(which, "algorithm", &is));
  if (is) { /* an algorithm PETSc's SeqAIJ does not know: refused as aij refuses it, not silently replaced by ours */
    PetscCall(Gen("lap2d", 6, 0, 0, 1, MATAIJOCEAN, &A));
    PetscCall(MatProductCreate(A, A, NULL, &C));
    PetscCall(MatProductSetType(C, MATPRODUCT_AB));
    PetscCall(MatProductSetAlgorithm(C, "no_such_algorithm"));
    PetscCall(MatProductSetFromOptions(C));
    EXPECT_ERROR(MatProductSymbolic(C), PETSC_ERR_SUP, "not supported");
  }
  PetscCall(PetscStrcmp(which, "reset_prealloc", &is));
  if (is) { /* C emptied by MatResetPreallocation() and an assembly: the REUSE names what C can no longer hold */
    PetscCall(Gen("lap2d", 6, 0, 0, 1, MATAIJOCEAN, &A));
    PetscCall(MatMatMult(A, A, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C));
    PetscCall(MatResetPreallocation(C));
    PetscCall(MatAssemblyBegin(C, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(C, MAT_FINAL_ASSEMBLY));
    EXPECT_ERROR(MatMatMult(A, A, MAT_REUSE_MATRIX, PETSC_DEFAULT, &C), PETSC_ERR_ARG_INCOMP, "no longer holds");
  }
  PetscCall(PetscStrcmp(which, "narrow", &is));
  if (is) { /* the narrow workflow: taken for a narrow, well-filled B; forced, a correct C; forced on a wide B and a
               bad limit, errors naming why */
    OceanStats stats;
    PetscCall(Gen("random", 50, 30, 10, 1, MATAIJOCEAN, &A));
    PetscCall(Gen("random", 30, 20, 15, 2, MATAIJOCEAN, &B));
    PetscCall(ProductAB(A, B, &C));
    PetscCall(MatOceanProductGetStats(C, 0, &stats));
    PetscCheck(stats.workflow == OCEAN_WORKFLOW_NARROW && !stats.workflow_forced, PETSC_COMM_SELF, PETSC_ERR_PLIB,
               "B 30 x 20 with %" PetscInt64_FMT " nonzeros: workflow %s", stats.nnz_b,
               OceanWorkflowName(stats.workflow));
    PetscCall(OceanTestReference(MATPRODUCT_AB, A, B, &R, &Bound));
    PetscCall(OceanTestCompare(C, R, Bound, "narrow, automatic"));
    PetscCall(MatDestroy(&R));
    PetscCall(MatDestroy(&Bound));
    PetscCall(MatDestroy(&C));
    PetscCall(MatDestroy(&B));
    PetscCall(PetscOptionsSetValue(NULL, "-mat_ocean_workflow", "narrow"));
    PetscCall(Gen("random", 30, 40, 2, 3, MATAIJOCEAN, &B)); /* sparse: only forced */
    PetscCall(ProductAB(A, B, &C));
    PetscCall(MatOceanProductGetStats(C, 0, &stats));
    PetscCheck(stats.workflow == OCEAN_WORKFLOW_NARROW && stats.workflow_forced, PETSC_COMM_SELF, PETSC_ERR_PLIB,
               "forced narrow: workflow %s", OceanWorkflowName(stats.workflow));
    PetscCall(OceanTestReference(MATPRODUCT_AB, A, B, &R, &Bound));
    PetscCall(OceanTestCompare(C, R, Bound, "narrow, forced"));
    PetscCall(MatDestroy(&R));
    PetscCall(MatDestroy(&Bound));
    PetscCall(MatDestroy(&C));
    PetscCall(MatDestroy(&B));
    PetscCall(Gen("random", 30, 300, 3, 4, MATAIJOCEAN, &B));
    EXPECT_ERROR(ProductAB(A, B, &C), PETSC_ERR_ARG_SIZ, "narrow workflow was forced");
    PetscCall(MatDestroy(&C));
    PetscCall(PetscOptionsClearValue(NULL, "-mat_ocean_workflow"));
    PetscCall(PetscOptionsSetValue(NULL, "-mat_ocean_narrow_max_columns", "300"));
    EXPECT_ERROR(ProductAB(A, B, &C), PETSC_ERR_ARG_OUTOFRANGE, "-mat_ocean_narrow_max_columns 300");
  }
  PetscCall(PetscStrcmp(which, "mpi_options", &is));
  if (is) { /* options without a prefix reach the local products of parallel ones (PETSc names those backend_p<k>_):
               the estimate workflow, forced, builds sketches on every process, where auto takes the upper bound */
    OceanTestGen     g;
    MatOceanCounters c0, c1;
    PetscInt         built;
    PetscCall(OceanTestGenSetup(&g, "lap3d", 12, 12, 0, 1, -1));
    PetscCall(OceanTestGenMat(PETSC_COMM_WORLD, &g, MATAIJOCEAN, &A));
    PetscCall(OceanTestGenDestroy(&g));
    PetscCall(MatOceanGetCounters(&c0));
    PetscCall(PetscOptionsSetValue(NULL, "-mat_ocean_workflow", "estimate"));
    PetscCall(ProductAB(A, A, &C));
    PetscCall(MatOceanGetCounters(&c1));
    built = (PetscInt)(c1.sketches_built + c1.sketches_reused - c0.sketches_built - c0.sketches_reused);
    PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &built, 1, MPIU_INT, MPI_MIN, PETSC_COMM_WORLD));
    PetscCheck(built > 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB,
               "-mat_ocean_workflow estimate did not reach the local products (no sketches on some process)");
    PetscCall(OceanTestReference(MATPRODUCT_AB, A, A, &R, &Bound));
    PetscCall(OceanTestCompare(C, R, Bound, "parallel product, forced estimate"));
    PetscCall(MatDestroy(&R));
    PetscCall(MatDestroy(&Bound));
  }
  PetscCall(PetscStrcmp(which, "cuda_backend", &is));
  if (is) { /* asking for the GPU where none can be used is an error, not a silent CPU run */
    int ndev = 0;
    PetscCall(Gen("lap2d", 6, 0, 0, 1, MATAIJOCEAN, &A));
    PetscCall(PetscOptionsSetValue(NULL, "-mat_ocean_backend", "cuda"));
    (void)OceanCudaDeviceCount(&ndev);
    if (ndev == 0) EXPECT_ERROR(ProductAB(A, A, &C), PETSC_ERR_SUP, "CUDA");
  }
  PetscCall(PetscStrcmp(which, "device", &is));
  if (is) { /* a device that cannot exist is an error, whatever backend auto would pick */
    int          ndev = 0;
    char         bad[32];
    OceanBackend backend;
    (void)OceanCudaDeviceCount(&ndev);
    PetscCall(Gen("lap2d", 6, 0, 0, 1, MATAIJOCEAN, &A));
    PetscCall(PetscOptionsSetValue(NULL, "-mat_ocean_device", "-1"));
    EXPECT_ERROR(ProductAB(A, A, &C), PETSC_ERR_ARG_OUTOFRANGE, "-mat_ocean_device -1");
    PetscCall(MatDestroy(&C));
    if (ndev > 0) { /* one past the last device */
      PetscCall(PetscSNPrintf(bad, sizeof(bad), "%d", ndev));
      PetscCall(PetscOptionsSetValue(NULL, "-mat_ocean_device", bad));
      EXPECT_ERROR(ProductAB(A, A, &C), PETSC_ERR_ARG_OUTOFRANGE, "device(s) visible");
      PetscCall(MatDestroy(&C));
    }
    /* the last device (none here: the index only matters to the CUDA backend) gives a correct product */
    PetscCall(PetscSNPrintf(bad, sizeof(bad), "%d", ndev > 0 ? ndev - 1 : 0));
    PetscCall(PetscOptionsSetValue(NULL, "-mat_ocean_device", bad));
    PetscCall(ProductAB(A, A, &C));
    PetscCall(OceanTestReference(MATPRODUCT_AB, A, A, &R, &Bound));
    PetscCall(OceanTestCompare(C, R, Bound, "product on the chosen device"));
    PetscCall(MatOceanProductGetBackend(C, &backend));
    PetscCheck(backend == (ndev > 0 && OceanCudaCompiled() ? OCEAN_BACKEND_CUDA : OCEAN_BACKEND_CPU), PETSC_COMM_SELF,
               PETSC_ERR_PLIB, "backend %d with %d device(s)", (int)backend, ndev);
    PetscCall(MatDestroy(&R));
    PetscCall(MatDestroy(&Bound));
  }
  PetscCall(MatDestroy(&C));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscCall(PetscFinalize());
  return 0;
}
