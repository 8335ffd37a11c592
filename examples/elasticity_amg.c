static const char help[] =
  "The petsc-ocean main job: 3D linear elasticity (Q1 hexahedra, 3 dof per node) solved with CG and an\n"
  "AMG preconditioner, once per matrix type, with a table of setup time, time in MatProduct, iterations and residual.\n"
  "  -problem <elasticity>    elasticity (default PC: GAMG) or laplace (3D 7-point on a DMDA; default PC: PCMG with\n"
  "                           Galerkin coarse operators, -pc_mg_levels <4>, interpolation from the grid)\n"
  "  -ne <48>                 elasticity: elements per side ((ne+1)^3 * 3 unknowns)\n"
  "  -nx <129>                laplace: grid points per side (nx^3 unknowns; nx - 1 divisible by 2^(levels-1))\n"
  "  -mat_types <aij,aijocean> the matrix types to compare (aij,aijocean,aijcusparse with a CUDA PETSc);\n"
  "                           a speedup line compares aijocean with each of the others\n"
  "  -resetups <0>            re-setups with new matrix values after the first solve (the nonlinear/time-dependent "
  "case)\n"
  "  -dump_galerkin <dir>     after the first type's setup (1 process, a PCMG-based PC): each level's operator and\n"
  "                           interpolation into dir/galerkin<k>_A.bin, _P.bin (PETSc binary; k = 0 the finest) for\n"
  "                           bench_spgemm ptap:..., with the time of PETSc's own MatPtAP of each level\n"
  "  any KSP/PC option (default -ksp_type cg -pc_type gamg -ksp_rtol 1e-8)\n";

#include <petscksp.h>
#include "petscmatocean.h"
#include "elasticity.h"
#include "laplace.h"

#define PetscCallOcean(call) \
  PetscCheck((call) == OCEAN_SUCCESS, PETSC_COMM_SELF, PETSC_ERR_LIB, "petsc-ocean: %s", OceanGetLastErrorMessage())

/* Seconds spent in matrix-matrix products within a log stage: PETSc's symbolic and numeric product events (the
   user-level MatPtAP/MatMatMult are not events in PETSc 3.18).  On one process they do not nest; on several, the
   MPIAIJ products contain their local products' events, which are then counted twice. */
static PetscErrorCode ProductTime(PetscLogStage stage, PetscReal *seconds)
{
  const char *phases[] = {"MatPtAPSymbolic", "MatPtAPNumeric",   "MatMatMultSym",
                          "MatMatMultNum",   "MatTrnMatMultSym", "MatTrnMatMultNum"};

  PetscFunctionBeginUser;
  *seconds = 0;
  for (size_t k = 0; k < sizeof(phases) / sizeof(phases[0]); k++) {
    PetscLogEvent      ev = -1;
    PetscEventPerfInfo info;
    PetscCall(PetscLogEventGetId(phases[k], &ev));
    if (ev < 0) continue;
    PetscCall(PetscLogEventGetPerfInfo(stage, ev, &info));
    *seconds += info.time;
  }
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, seconds, 1, MPIU_REAL, MPI_MAX, PETSC_COMM_WORLD));
  PetscFunctionReturn(0);
}

/* The Galerkin products of a PCMG hierarchy (GAMG's too) as files, with PETSc's own MatPtAP time per level. */
static PetscErrorCode DumpGalerkin(PC pc, const char *dir)
{
  PetscInt    nlev;
  PetscMPIInt size;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)pc), &size));
  PetscCheck(size == 1, PetscObjectComm((PetscObject)pc), PETSC_ERR_SUP,
             "-dump_galerkin writes sequential matrices: run it on 1 process, not %d", size);
  PetscCall(PCMGGetLevels(pc, &nlev));
  for (PetscInt l = nlev - 1; l > 0; l--) {
    KSP            smoother;
    Mat            A, P, C;
    PetscViewer    v;
    char           path[PETSC_MAX_PATH_LEN];
    PetscLogDouble t0, t1;
    PetscInt       m, n, mp, np;
    MatInfo        ia, ip, ic;
    MatType        mtype;

    PetscCall(PCMGGetSmoother(pc, l, &smoother));
    PetscCall(KSPGetOperators(smoother, &A, NULL));
    PetscCall(PCMGGetInterpolation(pc, l, &P));
    PetscCall(PetscTime(&t0));
    PetscCall(MatPtAP(A, P, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C));
    PetscCall(PetscTime(&t1));
    PetscCall(MatGetSize(A, &m, &n));
    PetscCall(MatGetSize(P, &mp, &np));
    PetscCall(MatGetInfo(A, MAT_LOCAL, &ia));
    PetscCall(MatGetInfo(P, MAT_LOCAL, &ip));
    PetscCall(MatGetInfo(C, MAT_LOCAL, &ic));
    PetscCall(MatGetType(A, &mtype));
    PetscCall(PetscPrintf(PETSC_COMM_SELF,
                          "galerkin level %" PetscInt_FMT ": A %" PetscInt_FMT " x %" PetscInt_FMT
                          " (%.0f nonzeros), P %" PetscInt_FMT " x %" PetscInt_FMT
                          " (%.0f), C %.0f nonzeros; MatPtAP (%s, this process) %.3f s\n",
                          nlev - 1 - l, m, n, ia.nz_used, mp, np, ip.nz_used, ic.nz_used, mtype, (double)(t1 - t0)));
    PetscCall(MatDestroy(&C));
    PetscCall(PetscSNPrintf(path, sizeof(path), "%s/galerkin%" PetscInt_FMT "_A.bin", dir, nlev - 1 - l));
    PetscCall(PetscViewerBinaryOpen(PETSC_COMM_SELF, path, FILE_MODE_WRITE, &v));
    PetscCall(MatView(A, v));
    PetscCall(PetscViewerDestroy(&v));
    PetscCall(PetscSNPrintf(path, sizeof(path), "%s/galerkin%" PetscInt_FMT "_P.bin", dir, nlev - 1 - l));
    PetscCall(PetscViewerBinaryOpen(PETSC_COMM_SELF, path, FILE_MODE_WRITE, &v));
    PetscCall(MatView(P, v));
    PetscCall(PetscViewerDestroy(&v));
  }
  PetscFunctionReturn(0);
}

typedef struct {
  char      type[32];
  PetscReal setup, products, solve, resetup, resetup_products, rnorm;
  PetscInt  its;
} RunResult;

/* elasticity: size = elements per side, GAMG by default; laplace: size = grid points per side, PCMG with Galerkin
   coarse operators (PCMG builds the interpolations from the DMDA, the products go through the matrix type). */
static PetscErrorCode RunOne(PetscBool laplace, PetscInt size, const char *type, PetscInt resetups, const char *dump,
                             RunResult *res)
{
  Mat            A;
  Vec            b, x;
  KSP            ksp;
  DM             da = NULL;
  PC             pc;
  PetscLogStage  stage, restage;
  PetscLogDouble t0, t1;
  char           name[64];

  PetscFunctionBeginUser;
  PetscCall(PetscStrncpy(res->type, type, sizeof(res->type)));
  if (laplace) PetscCall(LaplaceAssemble(size, type, &da, &A, &b));
  else PetscCall(ElasticityAssemble(PETSC_COMM_WORLD, size, type, &A, &b));
  PetscCall(VecDuplicate(b, &x));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  if (da) {
    PetscCall(KSPSetDM(ksp, da));
#if PETSC_VERSION_LT(3, 25, 0)
    PetscCall(KSPSetDMActive(ksp, PETSC_FALSE)); /* our operator, the grid only for the hierarchy */
#else
    PetscCall(KSPSetDMActive(ksp, KSP_DMACTIVE_ALL, PETSC_FALSE)); /* our operator, the grid only for the hierarchy */
#endif
  }
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPSetTolerances(ksp, 1e-8, PETSC_DEFAULT, PETSC_DEFAULT, 500));
  PetscCall(KSPGetPC(ksp, &pc));
  if (laplace) {
    PetscCall(PCSetType(pc, PCMG));
    PetscCall(PCMGSetLevels(pc, 4, NULL));
    PetscCall(PCMGSetGalerkin(pc, PC_MG_GALERKIN_PMAT));
  } else PetscCall(PCSetType(pc, PCGAMG));
  PetscCall(KSPSetFromOptions(ksp));

  PetscCall(PetscSNPrintf(name, sizeof(name), "Setup %s", type));
  PetscCall(PetscLogStageRegister(name, &stage));
  PetscCall(PetscLogStagePush(stage));
  PetscCall(PetscBarrier(NULL));
  PetscCall(PetscTime(&t0));
  PetscCall(KSPSetUp(ksp));
  PetscCall(PetscBarrier(NULL));
  PetscCall(PetscTime(&t1));
  PetscCall(PetscLogStagePop());
  res->setup = t1 - t0;
  PetscCall(ProductTime(stage, &res->products));
  if (dump) PetscCall(DumpGalerkin(pc, dump));

  PetscCall(PetscTime(&t0));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(PetscTime(&t1));
  res->solve = t1 - t0;
  PetscCall(KSPGetIterationNumber(ksp, &res->its));
  PetscCall(KSPGetResidualNorm(ksp, &res->rnorm));

  /* re-setup with new values on the same structure, as a nonlinear or time-dependent solver does */
  res->resetup = res->resetup_products = 0;
  if (resetups > 0) {
    PetscCall(PetscSNPrintf(name, sizeof(name), "Re-setup %s", type));
    PetscCall(PetscLogStageRegister(name, &restage));
    for (PetscInt r = 0; r < resetups; r++) {
      PetscCall(MatScale(A, 1.0 + 0.1 * (r + 1)));
      PetscCall(KSPSetOperators(ksp, A, A));
      PetscCall(PetscLogStagePush(restage));
      PetscCall(PetscTime(&t0));
      PetscCall(KSPSetUp(ksp));
      PetscCall(PetscTime(&t1));
      PetscCall(PetscLogStagePop());
      res->resetup += t1 - t0;
      PetscCall(KSPSolve(ksp, b, x));
    }
    PetscCall(ProductTime(restage, &res->resetup_products));
  }
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&A));
  PetscCall(DMDestroy(&da));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscInt    ne = 48, nx = 129, ntypes = 8, resetups = 0;
  char       *types[8], problem[32] = "elasticity", dump[PETSC_MAX_PATH_LEN] = "";
  RunResult   res[8];
  PetscMPIInt size;
  int         ndev = 0;
  PetscBool   set, laplace;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(MatOceanInitializePackage());
  PetscCall(PetscLogDefaultBegin());
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-problem", problem, sizeof(problem), NULL));
  PetscCall(PetscStrcmp(problem, "laplace", &laplace));
  PetscCheck(laplace || !strcmp(problem, "elasticity"), PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG,
             "-problem %s: elasticity or laplace", problem);
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-ne", &ne, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-nx", &nx, NULL));
  PetscCheck(ne >= 1 && nx >= 3, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
             "-ne %" PetscInt_FMT " must be >= 1 and -nx %" PetscInt_FMT " >= 3", ne, nx);
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-resetups", &resetups, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-dump_galerkin", dump, sizeof(dump), NULL));
  types[0] = (char *)"aij";
  types[1] = (char *)"aijocean";
  types[2] = (char *)"aijcusparse"; /* what a GPU user of this PETSc would pick instead */
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-mat_types", types, &ntypes, &set));
#if defined(PETSC_HAVE_CUDA)
  if (!set) ntypes = 3;
#else
  if (!set) ntypes = 2;
#endif
  if (laplace)
    PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                          "petsc-ocean main job: 3D 7-point Laplacian, %" PetscInt_FMT "^3 grid, %" PetscInt_FMT
                          " unknowns, CG + multigrid with Galerkin coarse operators, %d process(es)\n",
                          nx, nx * nx * nx, size));
  else
    PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                          "petsc-ocean main job: 3D linear elasticity, Q1, %" PetscInt_FMT "^3 elements, %" PetscInt_FMT
                          " unknowns, CG + AMG, %d process(es)\n",
                          ne, 3 * (ne + 1) * (ne + 1) * (ne + 1), size));
  {
    char               choice[16] = "auto";
    OceanDeviceProfile prof;
    OceanContext       cuda = NULL;
    PetscBool          usable;

    /* what -mat_ocean_backend (default auto) will pick: the GPU where a CUDA context can be made */
    PetscCall(PetscOptionsGetString(NULL, NULL, "-mat_ocean_backend", choice, sizeof(choice), NULL));
    (void)OceanCudaDeviceCount(&ndev);
    usable = (PetscBool)(ndev > 0 && OceanContextCreate(OCEAN_BACKEND_CUDA, NULL, &cuda) == OCEAN_SUCCESS);
    PetscCallOcean(OceanContextDestroy(&cuda));
    if (usable && strcmp(choice, "cpu") && OceanCudaDeviceProfile(0, &prof) == OCEAN_SUCCESS)
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "petsc-ocean backend: cuda (%s, %d SMs)\n", prof.name, prof.num_sms));
    else
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "petsc-ocean backend: cpu (%s)\n",
                            !OceanCudaCompiled() ? "built without CUDA"
                            : ndev == 0          ? "no CUDA device found"
                            : usable             ? "-mat_ocean_backend cpu"
                                                 : "CUDA context not usable"));
  }
  for (PetscInt t = 0; t < ntypes; t++)
    PetscCall(RunOne(laplace, laplace ? nx : ne, types[t], resetups, t == 0 && dump[0] ? dump : NULL, &res[t]));

  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\n%-12s %10s %12s %10s %6s %12s", "mat_type", "setup (s)", "products (s)",
                        "solve (s)", "its", "residual"));
  if (resetups) PetscCall(PetscPrintf(PETSC_COMM_WORLD, " %12s %12s", "re-setup (s)", "re-products"));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\n"));
  for (PetscInt t = 0; t < ntypes; t++) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-12s %10.3f %12.3f %10.3f %6" PetscInt_FMT " %12.3e", res[t].type,
                          (double)res[t].setup, (double)res[t].products, (double)res[t].solve, res[t].its,
                          (double)res[t].rnorm));
    if (resetups)
      PetscCall(
        PetscPrintf(PETSC_COMM_WORLD, " %12.3f %12.3f", (double)res[t].resetup, (double)res[t].resetup_products));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\n"));
  }
  for (PetscInt t = 0; t < ntypes; t++) { /* ours over each of the others */
    PetscInt o = 0;
    while (o < ntypes - 1 && !strstr(res[o].type, "ocean")) o++;
    if (t == o) continue;
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "speedup %s over %s: setup %.2fx, products %.2fx, solve %.2fx", res[o].type,
                          res[t].type, (double)(res[t].setup / res[o].setup),
                          (double)(res[o].products > 0 ? res[t].products / res[o].products : 0),
                          (double)(res[t].solve / res[o].solve)));
    if (resetups)
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, ", re-setup %.2fx", (double)(res[t].resetup / res[o].resetup)));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "; iterations %s\n", res[t].its == res[o].its ? "equal" : "DIFFER"));
  }
  if (size > 1)
    PetscCall(PetscPrintf(
      PETSC_COMM_WORLD, "(on several processes the product times include the local products' nested events twice)\n"));
  for (PetscInt t = 0; t < ntypes && set; t++) PetscCall(PetscFree(types[t]));
  PetscCall(PetscFinalize());
  return 0;
}
