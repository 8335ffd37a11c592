/* 3D 7-point Laplacian (Dirichlet, unit right-hand side) on a DMDA of nx^3 points, so that PCMG can build its
   interpolations from the grid.  Used by the main job (-problem laplace) and by the solver tests. */
#ifndef OCEAN_LAPLACE_H
#define OCEAN_LAPLACE_H

#include <petscksp.h>
#include <petscdmda.h>

static inline PetscErrorCode LaplaceAssemble(PetscInt nx, MatType type, DM *da, Mat *A, Vec *b)
{
  PetscInt xs, ys, zs, xm, ym, zm;

  PetscFunctionBeginUser;
  PetscCall(DMDACreate3d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, nx,
                         nx, nx, PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, NULL, da));
  PetscCall(DMSetMatType(*da, type));
  PetscCall(DMSetUp(*da));
  PetscCall(DMCreateMatrix(*da, A));
  { /* the DM's vectors of the matrix's kind (CUDA vectors for aijcusparse-based matrices: their MatMult needs them) */
    VecType vtype;
    PetscCall(MatGetVecType(*A, &vtype));
    PetscCall(DMSetVecType(*da, vtype));
  }
  PetscCall(DMDAGetCorners(*da, &xs, &ys, &zs, &xm, &ym, &zm));
  for (PetscInt k = zs; k < zs + zm; k++)
    for (PetscInt j = ys; j < ys + ym; j++)
      for (PetscInt i = xs; i < xs + xm; i++) {
        MatStencil  row = {.i = i, .j = j, .k = k}, col[7];
        PetscScalar v[7];
        PetscInt    n = 0;
        col[n]        = row;
        v[n++]        = 6.0;
        if (i > 0) {
          col[n]   = row;
          col[n].i = i - 1;
          v[n++]   = -1.0;
        }
        if (i < nx - 1) {
          col[n]   = row;
          col[n].i = i + 1;
          v[n++]   = -1.0;
        }
        if (j > 0) {
          col[n]   = row;
          col[n].j = j - 1;
          v[n++]   = -1.0;
        }
        if (j < nx - 1) {
          col[n]   = row;
          col[n].j = j + 1;
          v[n++]   = -1.0;
        }
        if (k > 0) {
          col[n]   = row;
          col[n].k = k - 1;
          v[n++]   = -1.0;
        }
        if (k < nx - 1) {
          col[n]   = row;
          col[n].k = k + 1;
          v[n++]   = -1.0;
        }
        PetscCall(MatSetValuesStencil(*A, 1, &row, n, col, v, INSERT_VALUES));
      }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(DMCreateGlobalVector(*da, b));
  PetscCall(VecSet(*b, 1.0));
  PetscFunctionReturn(0);
}

#endif
