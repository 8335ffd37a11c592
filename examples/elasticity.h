/* 3D linear elasticity on the unit cube with trilinear (Q1) hexahedra: ne^3 elements, 3 dof per node, clamped at
   x = 0, loaded by gravity.  Used by the main job and by the solver tests. */
#ifndef OCEAN_ELASTICITY_H
#define OCEAN_ELASTICITY_H

#include <petscksp.h>

/* Element stiffness of a cube of side h (E = 1, nu = 0.3) by 2x2x2 Gauss quadrature; 24 x 24, node-major. */
static inline void ElasticityElementStiffness(PetscReal h, PetscReal Ke[24 * 24])
{
  const PetscReal E = 1.0, nu = 0.3, lambda = E * nu / ((1 + nu) * (1 - 2 * nu)), mu = E / (2 * (1 + nu));
  const PetscReal g = 1.0 / PetscSqrtReal(3.0), xi[2] = {-g, g};
  const int corner[8][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}, {0, 0, 1}, {1, 0, 1}, {0, 1, 1}, {1, 1, 1}};

  for (int k = 0; k < 24 * 24; k++) Ke[k] = 0;
  for (int q = 0; q < 8; q++) {
    PetscReal p[3] = {xi[q & 1], xi[(q >> 1) & 1], xi[(q >> 2) & 1]}, dN[8][3], w = (h / 2) * (h / 2) * (h / 2);
    for (int a = 0; a < 8; a++) {
      PetscReal s[3];
      for (int d = 0; d < 3; d++) s[d] = corner[a][d] ? 1.0 : -1.0;
      for (int d = 0; d < 3; d++) {
        PetscReal v = s[d] / 8.0;
        for (int e = 0; e < 3; e++)
          if (e != d) v *= 1 + s[e] * p[e];
        dN[a][d] = v * 2.0 / h; /* d/dx = (2/h) d/dxi */
      }
    }
    /* K_ab,ij = lambda dNa_i dNb_j + mu (dNa_j dNb_i + delta_ij dNa . dNb) */
    for (int a = 0; a < 8; a++)
      for (int b = 0; b < 8; b++) {
        PetscReal dot = dN[a][0] * dN[b][0] + dN[a][1] * dN[b][1] + dN[a][2] * dN[b][2];
        for (int i = 0; i < 3; i++)
          for (int j = 0; j < 3; j++)
            Ke[(3 * a + i) * 24 + 3 * b + j] +=
              w * (lambda * dN[a][i] * dN[b][j] + mu * dN[a][j] * dN[b][i] + (i == j ? mu * dot : 0));
      }
  }
}

/* Assemble the operator (type mattype), the right-hand side, and the rigid-body near-null space. */
static inline PetscErrorCode ElasticityAssemble(MPI_Comm comm, PetscInt ne, MatType mattype, Mat *A, Vec *b)
{
  PetscInt     nn = ne + 1, N = 3 * nn * nn * nn, mloc = PETSC_DECIDE, rstart, rend, kmin, kmax, nbc = 0, *bc;
  PetscReal    h = 1.0 / ne, Ke[24 * 24];
  Vec          coords;
  PetscScalar *xc;
  MatNullSpace nsp;

  PetscFunctionBeginUser;
  ElasticityElementStiffness(h, Ke);
  /* whole nodes per process */
  PetscCall(PetscSplitOwnershipBlock(comm, 3, &mloc, &N));
  PetscCallMPI(MPI_Scan(&mloc, &rend, 1, MPIU_INT, MPI_SUM, comm));
  rstart = rend - mloc;
  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetSizes(*A, mloc, mloc, N, N));
  PetscCall(MatSetBlockSize(*A, 3));
  PetscCall(MatSetType(*A, mattype));
  {
    PetscInt *dnz, *onz, cs = rstart, ce = rend;
    PetscCall(PetscMalloc2(rend - rstart, &dnz, rend - rstart, &onz));
    for (PetscInt r = rstart; r < rend; r++) {
      PetscInt node = r / 3, i = node % nn, j = (node / nn) % nn, k = node / (nn * nn), d = 0, o = 0;
      for (PetscInt dk = -1; dk <= 1; dk++)
        for (PetscInt dj = -1; dj <= 1; dj++)
          for (PetscInt di = -1; di <= 1; di++) {
            if (i + di < 0 || i + di >= nn || j + dj < 0 || j + dj >= nn || k + dk < 0 || k + dk >= nn) continue;
            PetscInt c = 3 * (((k + dk) * nn + j + dj) * nn + i + di);
            if (c >= cs && c < ce) d += 3;
            else o += 3;
          }
      dnz[r - rstart] = d;
      onz[r - rstart] = o;
    }
    PetscCall(MatXAIJSetPreallocation(*A, 1, dnz, onz, NULL, NULL));
    PetscCall(PetscFree2(dnz, onz));
  }
  /* elements touching owned nodes; rows owned elsewhere are skipped (negative row index) */
  kmin = PetscMax(rstart / 3 / (nn * nn) - 1, 0);
  kmax = PetscMin((rend - 1) / 3 / (nn * nn), ne - 1);
  for (PetscInt k = kmin; k <= kmax && rend > rstart; k++)
    for (PetscInt j = 0; j < ne; j++)
      for (PetscInt i = 0; i < ne; i++) {
        PetscInt idx[24], rows[24];
        for (int a = 0; a < 8; a++) {
          PetscInt node = ((k + ((a >> 2) & 1)) * nn + j + ((a >> 1) & 1)) * nn + i + (a & 1);
          for (int d = 0; d < 3; d++) {
            idx[3 * a + d]  = 3 * node + d;
            rows[3 * a + d] = (3 * node + d >= rstart && 3 * node + d < rend) ? 3 * node + d : -1;
          }
        }
        PetscCall(MatSetValues(*A, 24, rows, 24, idx, Ke, ADD_VALUES));
      }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));

  /* gravity load, clamped face x = 0 (symmetric elimination keeps the operator SPD) */
  PetscCall(MatCreateVecs(*A, NULL, b));
  PetscCall(VecSetBlockSize(*b, 3));
  PetscCall(PetscMalloc1(rend - rstart, &bc));
  for (PetscInt r = rstart; r < rend; r++) {
    PetscInt node = r / 3;
    if (node % nn == 0) bc[nbc++] = r;
    PetscCall(VecSetValue(*b, r, r % 3 == 2 ? -h * h * h : 0.0, INSERT_VALUES));
  }
  PetscCall(VecAssemblyBegin(*b));
  PetscCall(VecAssemblyEnd(*b));
  PetscCall(MatZeroRowsColumns(*A, nbc, bc, 1.0, NULL, NULL));
  for (PetscInt t = 0; t < nbc; t++) PetscCall(VecSetValue(*b, bc[t], 0.0, INSERT_VALUES));
  PetscCall(VecAssemblyBegin(*b));
  PetscCall(VecAssemblyEnd(*b));
  PetscCall(PetscFree(bc));

  PetscCall(VecDuplicate(*b, &coords));
  PetscCall(VecGetArray(coords, &xc));
  for (PetscInt r = rstart; r < rend; r++) {
    PetscInt node = r / 3, ijk[3] = {node % nn, (node / nn) % nn, node / (nn * nn)};
    xc[r - rstart] = h * ijk[r % 3];
  }
  PetscCall(VecRestoreArray(coords, &xc));
  PetscCall(MatNullSpaceCreateRigidBody(coords, &nsp));
  PetscCall(MatSetNearNullSpace(*A, nsp));
  PetscCall(MatNullSpaceDestroy(&nsp));
  PetscCall(VecDestroy(&coords));
  PetscFunctionReturn(0);
}

#endif
