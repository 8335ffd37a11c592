static const char help[] =
  "AMG solves with -mat_type aij and aijocean must take the same iterations, and the aijocean setup must run its\n"
  "Galerkin products through petsc-ocean.\n"
  "  -problem elasticity|laplace  -ne N (elasticity elements per side) -nx N (laplace grid points per side)\n"
  "  -resetup: scale the operator, set up and solve again; -expect_numeric_reuse: its products must be numeric only\n"
  "  PC options as usual (e.g. -pc_type gamg; -pc_type mg -pc_mg_levels 3 -pc_mg_galerkin pmat; -pc_type hmg ...)\n";

#include <petscksp.h>
#include "petscmatocean.h"
/* The main job's problems themselves (examples/elasticity_amg.c's), through -Iexamples (makefile): not copies. */
#include "elasticity.h"
#include "laplace.h"

/* Solve once, then (resetup) scale the operator as a nonlinear or time-dependent solver would and set up and solve
   again, twice: its[] are the first and the last iteration counts, resetup_counts[] the petsc-ocean symbolic and
   numeric products of the last re-setup. */
static PetscErrorCode Solve(const char *problem, PetscInt size, MatType type, PetscBool resetup, PetscInt its[2],
                            PetscInt64 *ocean_symbolic, PetscInt64 resetup_counts[2])
{
  Mat                A;
  Vec                b, x;
  KSP                ksp;
  DM                 da = NULL;
  KSPConvergedReason reason;
  PetscBool          elasticity;
  MatOceanCounters   c0, c1;

  PetscFunctionBeginUser;
  PetscCall(PetscStrcmp(problem, "elasticity", &elasticity));
  if (elasticity) PetscCall(ElasticityAssemble(PETSC_COMM_WORLD, size, type, &A, &b));
  else PetscCall(LaplaceAssemble(size, type, &da, &A, &b));
  PetscCall(VecDuplicate(b, &x));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  if (da) {
    PetscCall(KSPSetDM(ksp, da));
#if PETSC_VERSION_LT(3, 25, 0)
    PetscCall(KSPSetDMActive(ksp, PETSC_FALSE));
#else
    PetscCall(KSPSetDMActive(ksp, KSP_DMACTIVE_ALL, PETSC_FALSE));
#endif
  }
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPSetTolerances(ksp, 1e-8, PETSC_DEFAULT, PETSC_DEFAULT, 300));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(MatOceanGetCounters(&c0));
  PetscCall(KSPSetUp(ksp));
  PetscCall(MatOceanGetCounters(&c1));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  PetscCheck(reason > 0, PETSC_COMM_WORLD, PETSC_ERR_NOT_CONVERGED, "%s with %s did not converge: %s", problem, type,
             KSPConvergedReasons[reason]);
  PetscCall(KSPGetIterationNumber(ksp, &its[0]));
  *ocean_symbolic   = c1.symbolic - c0.symbolic;
  its[1]            = 0;
  resetup_counts[0] = resetup_counts[1] = 0;
  /* twice: GAMG's first re-setup redoes its Galerkin products from scratch, later ones reuse them */
  for (int r = 0; r < (resetup ? 2 : 0); r++) {
    PetscCall(MatScale(A, 3.0));
    PetscCall(KSPSetOperators(ksp, A, A));
    PetscCall(MatOceanGetCounters(&c0));
    PetscCall(KSPSetUp(ksp));
    PetscCall(MatOceanGetCounters(&c1));
    resetup_counts[0] = c1.symbolic - c0.symbolic;
    resetup_counts[1] = c1.numeric - c0.numeric;
    PetscCall(MPIU_Allreduce(MPI_IN_PLACE, resetup_counts, 2, MPIU_INT64, MPI_SUM, PETSC_COMM_WORLD));
    PetscCall(KSPSolve(ksp, b, x));
    PetscCall(KSPGetConvergedReason(ksp, &reason));
    PetscCheck(reason > 0, PETSC_COMM_WORLD, PETSC_ERR_NOT_CONVERGED, "%s with %s did not converge after re-setup: %s",
               problem, type, KSPConvergedReasons[reason]);
    PetscCall(KSPGetIterationNumber(ksp, &its[1]));
  }
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, ocean_symbolic, 1, MPIU_INT64, MPI_SUM, PETSC_COMM_WORLD));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&A));
  PetscCall(DMDestroy(&da));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  char       problem[32] = "elasticity";
  PetscInt   size        = 6, its_aij[2], its_ocean[2];
  PetscInt64 n_aij, n_ocean, re_aij[2], re_ocean[2];
  PetscBool  resetup = PETSC_FALSE, numeric_reuse = PETSC_FALSE;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(MatOceanInitializePackage());
  PetscCall(PetscOptionsGetString(NULL, NULL, "-problem", problem, sizeof(problem), NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-size", &size, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-resetup", &resetup, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-expect_numeric_reuse", &numeric_reuse, NULL));
  PetscCall(Solve(problem, size, MATAIJ, resetup, its_aij, &n_aij, re_aij));
  PetscCall(Solve(problem, size, MATAIJOCEAN, resetup, its_ocean, &n_ocean, re_ocean));
  /* with -pc_gamg_reuse_interpolation the re-setup's Galerkin products are numeric only */
  if (numeric_reuse)
    PetscCheck(re_ocean[0] == 0 && re_ocean[1] > 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB,
               "re-setup ran %" PetscInt64_FMT " symbolic and %" PetscInt64_FMT
               " numeric petsc-ocean products; expected numeric only",
               re_ocean[0], re_ocean[1]);
  PetscCheck(n_aij == 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "the aij setup ran %" PetscInt64_FMT " petsc-ocean products",
             n_aij);
  PetscCheck(n_ocean > 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "the aijocean setup ran no petsc-ocean product");
  for (int k = 0; k < 2; k++)
    PetscCheck(its_aij[k] == its_ocean[k], PETSC_COMM_WORLD, PETSC_ERR_PLIB,
               "iterations differ%s: aij %" PetscInt_FMT ", aijocean %" PetscInt_FMT, k ? " after re-setup" : "",
               its_aij[k], its_ocean[k]);
  PetscCall(PetscFinalize());
  return 0;
}
