/* What the petsc-ocean products use at run time: the core contexts (one per backend, each on its device), counters,
   log events (the core's phases among them) and the threads of the CPU backend. */
#include "mat/matocean.h"
#include <omp.h>
#include <stdlib.h>

static PetscBool        MatOceanEventsRegistered = PETSC_FALSE;
static OceanContext     MatOceanContexts[2]; /* one per backend, created on first use */
static MatOceanCounters MatOceanCount;
static PetscLogEvent    MAT_OCEAN_Symbolic, MAT_OCEAN_Numeric, MAT_OCEAN_SetC, MAT_OCEAN_Phase[OCEAN_NUM_PHASES];

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

/* The CPU backend's OpenMP threads: unless OMP_NUM_THREADS or -mat_ocean_threads says otherwise, the cores divided by
   the processes the launcher started on this node (ranks that each start a thread per core oversubscribe the node).
   Read from the launcher's environment: nothing collective here, packages may initialize on one process only. */
#define MAT_OCEAN_THREADS_PER_CORE 8
PetscErrorCode MatOceanSetThreads_Private(void)
{
  const char *names[] = {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE"};
  PetscInt    threads = 0;
  PetscBool   set;
  int         local = 1, cores = omp_get_num_procs();

  PetscFunctionBegin;
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-mat_ocean_threads", &threads, &set));
  PetscCheck(!set || threads >= 1, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
             "-mat_ocean_threads %" PetscInt_FMT " must be at least 1", threads);
  /* more threads than this only thrash (and thousands exhaust the OpenMP runtime's stacks) */
  PetscCheck(!set || threads <= MAT_OCEAN_THREADS_PER_CORE * cores, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
             "-mat_ocean_threads %" PetscInt_FMT " is more than %d per core of the %d this process can use (at most %d)",
             threads, MAT_OCEAN_THREADS_PER_CORE, cores, MAT_OCEAN_THREADS_PER_CORE * cores);
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
  PetscCall(PetscInfo(NULL,
                      "petsc-ocean: %d OpenMP threads for the CPU backend (%d cores, %d processes on this node)\n",
                      (int)threads, cores, local));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* The log events, registered once per PetscInitialize() (the package's or the first product's call). */
static PetscErrorCode MatOceanEventsRegister_Private(void)
{
  PetscFunctionBegin;
  if (MatOceanEventsRegistered) PetscFunctionReturn(OCEAN_PETSC_OK);
  MatOceanEventsRegistered = PETSC_TRUE;
  PetscCall(PetscLogEventRegister("MatOceanSymbolic", MAT_CLASSID, &MAT_OCEAN_Symbolic));
  PetscCall(PetscLogEventRegister("MatOceanNumeric", MAT_CLASSID, &MAT_OCEAN_Numeric));
  PetscCall(PetscLogEventRegister("MatOceanSetC", MAT_CLASSID,
                                  &MAT_OCEAN_SetC)); /* C into the PETSc matrix (and off the device) */
  for (int p = 0; p < OCEAN_NUM_PHASES; p++) {
    char name[64];
    PetscCall(PetscSNPrintf(name, sizeof(name), "MatOcean_%s", OceanPhaseName((OceanPhase)p)));
    PetscCall(PetscLogEventRegister(name, MAT_CLASSID, &MAT_OCEAN_Phase[p]));
  }
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

PetscErrorCode MatOceanRuntimeInitialize_Private(void)
{
  PetscFunctionBegin;
  PetscCall(MatOceanEventsRegister_Private());
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* The contexts destroyed and the counts reset: PetscFinalize() through MatOceanFinalizePackage(). */
PetscErrorCode MatOceanRuntimeFinalize_Private(void)
{
  PetscFunctionBegin;
  for (int b = 0; b < 2; b++) PetscCallOcean(OceanContextDestroy(&MatOceanContexts[b]));
  PetscCall(PetscMemzero(&MatOceanCount, sizeof(MatOceanCount)));
  MatOceanEventsRegistered = PETSC_FALSE;
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

PetscErrorCode MatOceanEventsBegin_Private(PetscLogEvent *symbolic, PetscLogEvent *numeric, PetscLogEvent *setc)
{
  PetscFunctionBegin;
  PetscCall(MatOceanEventsRegister_Private());
  if (symbolic) *symbolic = MAT_OCEAN_Symbolic;
  if (numeric) *numeric = MAT_OCEAN_Numeric;
  if (setc) *setc = MAT_OCEAN_SetC;
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
    PetscCheck(dev >= 0 && (ndev == 0 || dev < ndev), PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
               "-mat_ocean_device %" PetscInt_FMT ": %d CUDA device(s) visible, numbered from 0", dev, ndev);
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
  if (!MatOceanContexts[backend]) {
    OceanDeviceProfile profile, *use = NULL;
    int                ndev = 0, device;

    /* The CPU backend imitates the GPU it would run on: this process's device's profile where there is one. */
    PetscCallOcean(OceanCudaDeviceCount(&ndev));
    PetscCall(MatOceanChooseDevice_Private(ndev, &device));
    if (backend == OCEAN_BACKEND_CPU && ndev > 0 && OceanCudaDeviceProfile(device, &profile) == OCEAN_SUCCESS)
      use = &profile;
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
      } else
        PetscCall(PetscInfo(NULL, "petsc-ocean: CUDA backend not usable (%s); using the CPU backend\n",
                            OceanGetLastErrorMessage()));
    }
    if (MatOceanContexts[OCEAN_BACKEND_CUDA]) *backend = OCEAN_BACKEND_CUDA;
  }
  PetscCall(MatOceanCreateContext_Private(*backend, ctx));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

PetscErrorCode MatOceanCountersAdd_Private(PetscInt64 symbolic, PetscInt64 numeric, PetscInt64 skipped,
                                           PetscInt64 resymbolic)
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
  PetscAssertPointer(counters, 1);
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
