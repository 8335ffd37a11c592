/*
  petscmatocean.h - the PETSc face of petsc-ocean.

  Matrix types aijocean (seqaijocean on one process, mpiaijocean on several), derived from AIJ.  Their
  MatProduct AB, AtB and PtAP (also mixed with plain AIJ operands, and PtAP with a MAIJ P) run the
  estimation-driven SpGEMM of ocean.h on each process's local blocks.

  Use: -mat_type aijocean (or -dm_mat_type aijocean); an application that cannot be recompiled loads the types
  with -dll_append /path/to/libpetscocean.so.  A program linked against the library calls
  MatOceanInitializePackage() once after PetscInitialize().

  Options (each may carry the product matrix's prefix):
    -mat_ocean_backend <auto,cpu,cuda>         where the products run (auto: the GPU when one is usable)
    -mat_ocean_workflow <auto,upper_bound,estimate,exact>  force a workflow (default: the Ocean selection)
    -mat_ocean_hll_registers <0>               HyperLogLog registers, 0 = the paper's rule (32, or 64 when ER >= 48)
    -mat_ocean_estimate_coefficient <0>        estimate multiplier, 0 = the paper's rule (2.0 at 32 registers, else 1.5)
    -mat_ocean_acc_smem_per_sm <131072>        shared memory per SM given to accumulators (bytes)
    -mat_ocean_nnz_limit <PETSC_MAX_INT>       largest nnz(C) accepted (lower it to test the overflow path)
    -mat_ocean_view                            print each product's decisions and statistics
  and more (heavy rows, threads, device matrices, reuse map, memory): all of them with their defaults under -help and
  in the README's options table.
*/
#ifndef PETSCMATOCEAN_H
#define PETSCMATOCEAN_H

#include <petscmat.h>
#include "ocean.h"

#define MATAIJOCEAN    "aijocean"
#define MATSEQAIJOCEAN "seqaijocean"
#define MATMPIAIJOCEAN "mpiaijocean"

PETSC_EXTERN PetscErrorCode MatOceanInitializePackage(void);
PETSC_EXTERN PetscErrorCode MatOceanFinalizePackage(void);
PETSC_EXTERN PetscErrorCode PetscDLLibraryRegister_petscocean(void);

PETSC_EXTERN PetscErrorCode MatCreate_SeqAIJOcean(Mat);
PETSC_EXTERN PetscErrorCode MatCreate_MPIAIJOcean(Mat);

/* Statistics of a sequential product computed by petsc-ocean (C from MatProductCreate/MatMatMult/MatPtAP...).
   stage: 0 for AB and AtB; 0 (A*P) or 1 (P^T*(AP)) for PtAP. */
PETSC_EXTERN PetscErrorCode MatOceanProductGetStats(Mat C, PetscInt stage, OceanStats *stats);
PETSC_EXTERN PetscErrorCode MatOceanProductGetPlan(Mat C, OceanProduct *plan);
/* The backend a product ran on. */
PETSC_EXTERN PetscErrorCode MatOceanProductGetBackend(Mat C, OceanBackend *backend);

/* Process-wide counts of local (sequential) products run by petsc-ocean, and of sketch builds and reuses:
   MPI products are checked through these, since every local block product goes through the core. */
typedef struct {
  PetscInt64 symbolic;        /* symbolic phases (each computes values too) */
  PetscInt64 numeric;         /* numeric phases that recomputed values */
  PetscInt64 numeric_skipped; /* numeric phases right after symbolic with unchanged operands */
  PetscInt64 resymbolic;      /* numeric phases that found a new sparsity and redid the symbolic phase */
  PetscInt64 sketches_built, sketches_reused;
} MatOceanCounters;
PETSC_EXTERN PetscErrorCode MatOceanGetCounters(MatOceanCounters *counters);

/* Print one stage's statistics. */
PETSC_EXTERN PetscErrorCode MatOceanStatsView(const OceanStats *stats, PetscViewer viewer);

#endif
