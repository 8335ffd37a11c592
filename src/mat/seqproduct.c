/* The products AB, AtB and PtAP of SeqAIJ-based matrices through a petsc-ocean plan (a rank's local block products on
   MPI too), and the queries of a product matrix (MatOceanProductGetStats, ...). */
#include "mat/matocean.h"
#if defined(PETSC_HAVE_CUDA)
#include <petscdevice.h>
#endif

/* The data of one product, kept in C->product->data. */
typedef struct {
  OceanProduct     plan;
  OceanProductType type;
  OceanBackend     backend;
  MatOceanOptions  opts;
  uint64_t         a_sid, b_sid;              /* structure ids at the last symbolic phase */
  PetscObjectState a_state, b_state, c_state; /* object states when C's values were last written */
  PetscBool        values_fresh;              /* the symbolic phase computed C's values and nothing ran since */
  PetscScalar     *zeros[2];                  /* values of an operand whose own numeric phase is still to come */
  int64_t         *rowptr[2];                 /* 64-bit row offsets of the operands (the core's CSR convention) */
  PetscInt         rowptr_len[2];
  int32_t         *colidx[2]; /* column indices, only where PetscInt is 64-bit */
  PetscInt         colidx_len[2];
  PetscBool        device_operands; /* the operands were read in place on the device at the last symbolic phase */
  PetscBool        c_released;      /* the plan gave back its host C: numeric phases write into C's own arrays */
} MatProductData_SeqAIJOcean;

/* PETSc 3.25 passes the address of the data pointer (PetscCtxDestroyFn), earlier versions the pointer itself. */
static PetscErrorCode MatProductDataDestroy_SeqAIJOcean(void *ptr)
{
#if PETSC_VERSION_LT(3, 25, 0)
  MatProductData_SeqAIJOcean *data = (MatProductData_SeqAIJOcean *)ptr;
#else
  MatProductData_SeqAIJOcean *data = *(MatProductData_SeqAIJOcean **)ptr;

  *(MatProductData_SeqAIJOcean **)ptr = NULL;
#endif

  PetscFunctionBegin;
  PetscCallOcean(OceanProductDestroy(&data->plan));
  for (int k = 0; k < 2; k++) PetscCall(PetscFree(data->rowptr[k]));
  for (int k = 0; k < 2; k++) PetscCall(PetscFree(data->colidx[k]));
  for (int k = 0; k < 2; k++) PetscCall(PetscFree(data->zeros[k]));
  PetscCall(PetscFree(data));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* The structure id promises "same sparsity": the object id and the nonzero state together.  The values id promises
   "same values": the object id and the object state, which PETSc advances whenever the values may have changed. */
static PetscErrorCode MatOceanIds(Mat A, uint64_t *sid, uint64_t *vid)
{
  PetscObjectId    id;
  PetscObjectState nz, state;

  PetscFunctionBegin;
  PetscCall(PetscObjectGetId((PetscObject)A, &id));
  PetscCall(MatGetNonzeroState(A, &nz));
  PetscCall(PetscObjectStateGet((PetscObject)A, &state));
  PetscCheck(id < ((PetscObjectId)1 << 32), PETSC_COMM_SELF, PETSC_ERR_SUP,
             "PETSc object id %" PetscInt64_FMT " exceeds the 32 bits of a structure id", (PetscInt64)id);
  *sid = ((uint64_t)id << 32) | ((uint64_t)nz & 0xffffffffu);
  *vid = ((uint64_t)id << 32) | ((uint64_t)state & 0xffffffffu);
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* An operand that is itself a product whose symbolic phase has run and whose numeric phase is still to come (PETSc's
   generic triple products and its MPIAIJ route chain products so): its structure is known, its values are not. */
static PetscBool MatOceanValuesPending(Mat A)
{
  return (PetscBool)(!A->assembled && A->product && A->ops->productnumeric);
}

/* Whether the product reads its operands in place on the device: a CUDA plan of AB or PtAP, operands that keep a
   device CSR (aijcusparse-based, not bound to the CPU, their values not pending) and 32-bit PetscInt (cuSPARSE's
   index width).  Anything else reads the host CSR. */
static PetscBool MatOceanDeviceOperands(Mat C, MatProductData_SeqAIJOcean *data)
{
  Mat A = C->product->A, B = C->product->B;

  if (sizeof(PetscInt) != sizeof(int32_t) || data->backend != OCEAN_BACKEND_CUDA) return PETSC_FALSE;
  for (int k = 0; k < 2; k++) {
    Mat M = k ? B : A;
    if (!MatOceanIsDeviceAIJ_Private(M) || MatOceanValuesPending(M) || !M->assembled) return PETSC_FALSE;
#if defined(PETSC_USE_DEBUG)
    { /* a debugging PETSc's aijcusparse accessors check the exact type name, which ours is not */
      PetscBool exact = PETSC_FALSE;
      if (PetscObjectTypeCompare((PetscObject)M, MATSEQAIJCUSPARSE, &exact) || !exact) return PETSC_FALSE;
    }
#endif
#if defined(PETSC_HAVE_DEVICE)
    if (M->boundtocpu) return PETSC_FALSE;
#endif
  }
  return PETSC_TRUE;
}

#if defined(PETSC_HAVE_CUDA)
/* Operand k's device CSR in place (PETSc copies it to the device first if its values are newer on the host): the
   int32 row offsets widened by the plan, the column indices and values as they are. */
static PetscErrorCode MatOceanGetDeviceCSR(MatProductData_SeqAIJOcean *data, int k, Mat A, OceanCSR *csr)
{
  const PetscInt *ai, *aj;
  PetscScalar    *aa;
  PetscMemType    mtype;
  const int64_t  *rowptr;

  PetscFunctionBegin;
  PetscCall(MatSeqAIJGetCSRAndMemType(A, &ai, &aj, &aa, &mtype));
  PetscCheck(PetscMemTypeDevice(mtype), PETSC_COMM_SELF, PETSC_ERR_PLIB,
             "Operand %d of type %s (%" PetscInt_FMT " x %" PetscInt_FMT ") gave a host CSR for a device product", k,
             ((PetscObject)A)->type_name, A->rmap->n, A->cmap->n);
  /* aijcusparse keeps compressed row offsets on the device when many rows are empty: the full ones come from here */
  PetscCall(MatSeqAIJCUSPARSEGetIJ(A, PETSC_FALSE, &ai, &aj));
  {
    const PetscInt *ri = ai, *rj = aj; /* the restore clears the pointers given to it */
    PetscCall(MatSeqAIJCUSPARSERestoreIJ(A, PETSC_FALSE, &ri, &rj));
  }
  PetscCallOcean(OceanProductWidenDeviceOffsets(data->plan, k, A->rmap->n, (const int32_t *)ai, &rowptr));
  csr->nrows  = A->rmap->n;
  csr->ncols  = A->cmap->n;
  csr->rowptr = rowptr;
  csr->colidx = (const int32_t *)aj;
  csr->values = (const double *)aa;
  PetscCall(MatOceanIds(A, &csr->structure_id, &csr->values_id));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}
#endif

/* View the CSR of a SeqAIJ-based matrix in the core's convention; k picks the buffers of operand k. */
static PetscErrorCode MatOceanGetCSR(MatProductData_SeqAIJOcean *data, int k, Mat A, OceanCSR *csr)
{
  const PetscInt *ai, *aj;
  PetscScalar    *aa;
  PetscMemType    mtype;
  PetscInt        m = A->rmap->n, nnz;

  PetscFunctionBegin;
  PetscCheck(A->assembled || MatOceanValuesPending(A), PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE,
             "Operand %d of type %s (%" PetscInt_FMT " x %" PetscInt_FMT ") is not assembled", k,
             ((PetscObject)A)->type_name, A->rmap->n, A->cmap->n);
  if (!MatOceanIsDeviceAIJ_Private(A)) {
    PetscCall(MatSeqAIJGetCSRAndMemType(A, &ai, &aj, &aa, &mtype));
    PetscCheck(PetscMemTypeHost(mtype), PETSC_COMM_SELF, PETSC_ERR_SUP,
               "Operand %d of type %s has its values on the device, which petsc-ocean cannot read there", k,
               ((PetscObject)A)->type_name);
  } else { /* aijcusparse-based: the host arrays, the values brought up to date there */
    const PetscScalar *ha;
    PetscInt           n;
    PetscBool          done;

    PetscCall(MatGetRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ai, &aj, &done));
    PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_SUP, "Operand %d of type %s gives no host CSR", k,
               ((PetscObject)A)->type_name);
    { /* SeqAIJ's own arrays, which stay: only the copies given back are cleared */
      const PetscInt *ri = ai, *rj = aj;
      PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ri, &rj, &done));
    }
    PetscCall(MatSeqAIJGetArrayRead(A, &ha));
    aa = (PetscScalar *)ha; /* SeqAIJ's own array, valid until the values change */
    PetscCall(MatSeqAIJRestoreArrayRead(A, &ha));
  }
  nnz = ai[m];
  if (!aa) { /* a pending product may have no values yet: zeros stand in (its values come with a later numeric phase) */
    PetscCall(PetscFree(data->zeros[k]));
    PetscCall(PetscCalloc1(nnz + 1, &data->zeros[k]));
    aa = data->zeros[k];
  }
  if (data->rowptr_len[k] < m + 1) {
    PetscCall(PetscFree(data->rowptr[k]));
    PetscCall(PetscMalloc1(m + 1, &data->rowptr[k]));
    data->rowptr_len[k] = m + 1;
  }
  for (PetscInt i = 0; i <= m; i++) data->rowptr[k][i] = (int64_t)ai[i];
  if (sizeof(PetscInt) == sizeof(int32_t)) csr->colidx = (const int32_t *)aj;
  else {
    PetscCheck(A->cmap->n <= (PetscInt)INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP,
               "Operand %d has %" PetscInt_FMT " columns, more than 32-bit column indices hold", k, A->cmap->n);
    if (data->colidx_len[k] < nnz) {
      PetscCall(PetscFree(data->colidx[k]));
      PetscCall(PetscMalloc1(nnz, &data->colidx[k]));
      data->colidx_len[k] = nnz;
    }
    for (PetscInt i = 0; i < nnz; i++) data->colidx[k][i] = (int32_t)aj[i];
    csr->colidx = data->colidx[k];
  }
  csr->nrows  = m;
  csr->ncols  = A->cmap->n;
  csr->rowptr = data->rowptr[k];
  csr->values = (const double *)aa;
  PetscCall(MatOceanIds(A, &csr->structure_id, &csr->values_id));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* The operands where the product reads them (data->device_operands), the plan told so. */
static PetscErrorCode MatOceanGetOperands(Mat C, MatProductData_SeqAIJOcean *data, OceanCSR *A, OceanCSR *B)
{
  Mat_Product *product = C->product;

  PetscFunctionBegin;
  PetscCallOcean(
    OceanProductSetOperandMemType(data->plan, data->device_operands ? OCEAN_MEMORY_DEVICE : OCEAN_MEMORY_HOST));
  if (data->device_operands) {
#if defined(PETSC_HAVE_CUDA)
    PetscDeviceContext dctx;

    PetscCall(MatOceanGetDeviceCSR(data, 0, product->A, A));
    PetscCall(MatOceanGetDeviceCSR(data, 1, product->B, B));
    /* PETSc's work on the operands (on its own stream, perhaps a non-blocking one) done before the plan reads them */
    PetscCall(PetscDeviceContextGetCurrentContext(&dctx));
    PetscCall(PetscDeviceContextSynchronize(dctx));
#endif
  } else {
    PetscCall(MatOceanGetCSR(data, 0, product->A, A));
    PetscCall(MatOceanGetCSR(data, 1, product->B, B));
  }
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* Whether C keeps a device CSR and the plan's C is on the device (not made in row chunks, which leave it on the host
   only): its values can then go straight from the plan into C's device CSR. */
static PetscBool MatOceanDeviceValuesPossible(Mat C, MatProductData_SeqAIJOcean *data)
{
#if defined(PETSC_HAVE_CUDA)
  OceanStats stats;
  int        nstages;

  if (!MatOceanIsDeviceAIJ_Private(C) || C->boundtocpu || data->backend != OCEAN_BACKEND_CUDA) return PETSC_FALSE;
  if (OceanProductGetNumStages(data->plan, &nstages) || OceanProductGetStats(data->plan, nstages - 1, &stats))
    return PETSC_FALSE; /* no product: the host path reports it */
  return stats.row_chunks ? PETSC_FALSE : PETSC_TRUE;
#else
  (void)C;
  (void)data;
  return PETSC_FALSE;
#endif
}

/* C's values written in place on the device when MatOceanDeviceValuesPossible: its device structure brought up to
   date first (PETSc uploads C's structure after a symbolic phase), then marked valid there only. */
static PetscErrorCode MatOceanSetDeviceValues(Mat C, MatProductData_SeqAIJOcean *data, PetscBool *done)
{
  PetscFunctionBegin;
  *done = PETSC_FALSE;
#if defined(PETSC_HAVE_CUDA)
  {
    PetscScalar *ca;
    PetscMemType mtype;

    if (!MatOceanDeviceValuesPossible(C, data)) PetscFunctionReturn(OCEAN_PETSC_OK);
    PetscCall(MatSeqAIJGetCSRAndMemType(C, NULL, NULL, &ca, &mtype));
    PetscCheck(PetscMemTypeDevice(mtype), PETSC_COMM_SELF, PETSC_ERR_PLIB, "Product matrix of type %s gave a host CSR",
               ((PetscObject)C)->type_name);
    PetscCallOcean(OceanProductCopyDeviceValues(data->plan, (double *)ca));
    /* what aijcusparse's MatSeqAIJCUSPARSEGetArrayWrite()/RestoreArrayWrite() do, without its check of the type name */
    C->offloadmask  = PETSC_OFFLOAD_GPU;
    C->transupdated = PETSC_FALSE;
    PetscCall(PetscObjectStateIncrease((PetscObject)C));
    *done = PETSC_TRUE;
  }
#else
  (void)C;
  (void)data;
#endif
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* The last call's copies between host and device (operands up, C down) in PETSc's counters, as PETSc's own products
   log theirs: -log_view's CpuToGpu/GpuToCpu columns of the product events then hold ours too. */
static PetscErrorCode MatOceanLogCopies(MatProductData_SeqAIJOcean *data)
{
  int        nstages;
  OceanStats stats;

  PetscFunctionBegin;
  if (data->backend != OCEAN_BACKEND_CUDA) PetscFunctionReturn(OCEAN_PETSC_OK);
  PetscCallOcean(OceanProductGetNumStages(data->plan, &nstages));
  for (int k = 0; k < nstages; k++) {
    PetscCallOcean(OceanProductGetStats(data->plan, k, &stats));
    if (stats.uploaded_bytes) PetscCall(PetscLogCpuToGpu((PetscLogDouble)stats.uploaded_bytes));
    if (stats.downloaded_bytes) PetscCall(PetscLogGpuToCpu((PetscLogDouble)stats.downloaded_bytes));
  }
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* C's structure into the PETSc matrix: exact preallocation, then every column index in one copy
   (MatSeqAIJSetColumnIndices: each row full, no insertion, no per-row call), or, cj NULL, straight from the plan into
   C's own array (MatOceanSetColumnsFromPlan_Private: no host copy in between). */
static PetscErrorCode MatOceanSetCStructure(Mat C, OceanProduct plan, int64_t m, int64_t nnz, const int64_t *ci,
                                            const int32_t *cj)
{
  PetscInt *rowlen, *j;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(m, &rowlen));
  for (int64_t r = 0; r < m; r++) rowlen[r] = (PetscInt)(ci[r + 1] - ci[r]);
  PetscCall(MatSeqAIJSetPreallocation(C, 0, rowlen));
  PetscCall(PetscFree(rowlen));
  if (!cj) {
#if defined(OCEAN_DEVICE_C_HANDOVER)
    PetscCall(MatOceanSetColumnsFromPlan_Private(C, plan, nnz));
#else
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_PLIB, "Product matrix of type %s: no column indices",
            ((PetscObject)C)->type_name);
#endif
  } else {
    if (sizeof(PetscInt) != sizeof(int32_t)) {
      PetscCall(PetscMalloc1(nnz, &j));
      for (int64_t e = 0; e < nnz; e++) j[e] = (PetscInt)cj[e];
    } else j = (PetscInt *)cj; /* only read */
    PetscCall(MatSeqAIJSetColumnIndices(C, j));
    if ((void *)j != (const void *)cj) PetscCall(PetscFree(j));
  }
#if defined(PETSC_HAVE_CUDA)
  /* the host holds the new structure: a device copy from before (a symbolic phase again) is stale */
  if (MatOceanIsDeviceAIJ_Private(C)) C->offloadmask = PETSC_OFFLOAD_CPU;
#endif
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* Copy the plan's C into the PETSc matrix: structure and values (symbolic) or values only (numeric).  A device C
   whose values the plan holds on the device gets only the structure on the host, as PETSc's own device products do;
   its device copy is made from the plan's on the device where this build can (MatOceanSetDeviceC_Private), else by
   PETSc from the host structure, the values then written in place. */
static PetscErrorCode MatOceanSetC(Mat C, MatProductData_SeqAIJOcean *data, PetscBool structure)
{
  const PetscBool device_values = MatOceanDeviceValuesPossible(C, data);
  int64_t         m, n, nnz, *ci_own = NULL;
  const int64_t  *ci;
  const int32_t  *cj = NULL;
  const double   *cv = NULL;
  PetscLogEvent   ev;
  PetscBool       on_device = PETSC_FALSE, direct = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(MatOceanEventsBegin_Private(NULL, NULL, &ev));
  PetscCall(PetscLogEventBegin(ev, C, 0, 0, 0));
#if defined(OCEAN_DEVICE_C_HANDOVER)
  direct = (PetscBool)(structure && device_values);
#endif
  if (direct) { /* the row offsets to the host, the columns later straight into C's array */
    PetscCallOcean(OceanProductGetDeviceC(data->plan, &m, &n, &nnz, NULL, NULL, NULL));
    PetscCall(PetscMalloc1(m + 1, &ci_own));
    PetscCallOcean(OceanProductGetCStructureInto(data->plan, ci_own, NULL));
    ci = ci_own;
  } else if (structure || !device_values) /* the values come to the host only when they cannot go to the device */
    PetscCallOcean(OceanProductGetC(data->plan, &m, &n, &nnz, &ci, &cj, device_values ? NULL : &cv));
  if (structure || !device_values)
    PetscCheck(nnz <= PETSC_MAX_INT, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
               "The product has %" PetscInt64_FMT " nonzeros, more than PetscInt holds", (PetscInt64)nnz);
  if (structure) {
    PetscCall(MatOceanSetCStructure(C, data->plan, m, nnz, ci, cj));
    PetscCall(MatAssemblyBegin(C, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(C, MAT_FINAL_ASSEMBLY));
  }
  PetscCall(PetscFree(ci_own));
#if defined(OCEAN_DEVICE_C_HANDOVER)
  if (direct) {
    PetscCall(MatOceanSetDeviceC_Private(C, data->plan, &on_device));
    if (on_device) {
      C->transupdated = PETSC_FALSE;
      PetscCall(PetscObjectStateIncrease((PetscObject)C));
    }
  }
#endif
  if (!on_device) PetscCall(MatOceanSetDeviceValues(C, data, &on_device));
  PetscCheck(on_device == device_values, PETSC_COMM_SELF, PETSC_ERR_PLIB,
             "Product matrix of type %s: device values expected %d, written %d", ((PetscObject)C)->type_name,
             (int)device_values, (int)on_device);
  if (!on_device) {
    PetscScalar *ca;

    PetscCall(MatSeqAIJGetArrayWrite(C, &ca));
    PetscCall(PetscArraycpy(ca, (const PetscScalar *)cv, nnz));
    PetscCall(MatSeqAIJRestoreArrayWrite(C, &ca));
  }
  PetscCall(MatOceanLogCopies(data));
  PetscCall(PetscLogEventEnd(ev, C, 0, 0, 0));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* A CPU plan's C would live twice on the host, in the plan and in C: once C holds it, the plan gives its copy back and
   numeric phases write straight into C's arrays (a host AIJ with 32-bit indices, as the core's). */
static PetscErrorCode MatOceanReleasePlanC(Mat C, MatProductData_SeqAIJOcean *data)
{
  PetscFunctionBegin;
  data->c_released = PETSC_FALSE;
  if (data->backend != OCEAN_BACKEND_CPU || sizeof(PetscInt) != sizeof(int32_t) || MatOceanIsDeviceAIJ_Private(C))
    PetscFunctionReturn(OCEAN_PETSC_OK);
  PetscCallOcean(OceanProductReleaseHostC(data->plan));
  data->c_released = PETSC_TRUE;
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* A numeric phase into C's own arrays (MatOceanReleasePlanC): C's structure is the plan's (the product guard redoes
   the symbolic phase, or computes into a matrix of its own, when an operand's or C's structure changed). */
static PetscErrorCode MatOceanNumericIntoC(Mat C, MatProductData_SeqAIJOcean *data, const OceanCSR *A,
                                           const OceanCSR *B)
{
  const PetscInt *ci, *cj;
  PetscScalar    *ca, *unused;
  PetscMemType    mtype;

  PetscFunctionBegin;
  PetscCall(MatSeqAIJGetCSRAndMemType(C, &ci, &cj, &unused, &mtype));
  PetscCheck(mtype == PETSC_MEMTYPE_HOST, PETSC_COMM_SELF, PETSC_ERR_PLIB,
             "Product matrix of type %s gave a device CSR", ((PetscObject)C)->type_name);
  PetscCall(MatSeqAIJGetArrayWrite(C, &ca));
  PetscCallOcean(OceanProductNumericInto(data->plan, A, B, (int64_t)ci[C->rmap->n], (const int32_t *)cj, (double *)ca));
  PetscCall(MatSeqAIJRestoreArrayWrite(C, &ca));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

static PetscErrorCode MatOceanRecordStates(Mat C, MatProductData_SeqAIJOcean *data)
{
  PetscFunctionBegin;
  PetscCall(PetscObjectStateGet((PetscObject)C->product->A, &data->a_state));
  PetscCall(PetscObjectStateGet((PetscObject)C->product->B, &data->b_state));
  PetscCall(PetscObjectStateGet((PetscObject)C, &data->c_state));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

static PetscErrorCode MatOceanViewIfAsked(Mat C, MatProductData_SeqAIJOcean *data)
{
  PetscViewer viewer;
  char        header[256];

  PetscFunctionBegin;
  if (!data->opts.view) PetscFunctionReturn(OCEAN_PETSC_OK);
  PetscCall(PetscViewerASCIIGetStdout(PetscObjectComm((PetscObject)C), &viewer));
  PetscCall(PetscSNPrintf(header, sizeof(header), "petsc-ocean %s (%s x %s), backend %s%s:",
                          OceanProductTypeName(data->type), ((PetscObject)C->product->A)->type_name,
                          ((PetscObject)C->product->B)->type_name, data->backend == OCEAN_BACKEND_CUDA ? "cuda" : "cpu",
                          data->device_operands ? ", operands read on the device" : ""));
  PetscCall(MatOceanProductView_Private(C, data->plan, header, viewer));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* Runs the core symbolic phase (which also computes the values) and gives C the resulting structure. */
static PetscErrorCode MatOceanSymbolicRun(Mat C, MatProductData_SeqAIJOcean *data)
{
  OceanCSR      A, B;
  OceanContext  ctx;
  PetscLogEvent ev;

  PetscFunctionBegin;
  PetscCall(MatOceanEventsBegin_Private(&ev, NULL, NULL));
  PetscCall(MatOceanGetContext_Private(data->opts.backend, &ctx, &data->backend));
  if (!data->plan) {
    PetscCallOcean(OceanProductCreate(ctx, data->type, &data->plan));
    PetscCallOcean(OceanProductSetOptions(data->plan, &data->opts.core));
  }
  data->device_operands = MatOceanDeviceOperands(C, data);
  PetscCall(MatOceanGetOperands(C, data, &A, &B));
  PetscCall(PetscLogEventBegin(ev, C, 0, 0, 0));
  PetscCallOcean(OceanProductSymbolic(data->plan, &A, &B));
  PetscCall(PetscLogEventEnd(ev, C, 0, 0, 0));
  data->a_sid = A.structure_id;
  data->b_sid = B.structure_id;
  PetscCall(MatOceanSetC(C, data, PETSC_TRUE));
  PetscCall(MatOceanReleasePlanC(C, data));
  PetscCall(MatOceanRecordStates(C, data));
  /* The values count as current for the numeric phase that follows unless an operand waits for its own values. */
  data->values_fresh = (PetscBool)(!MatOceanValuesPending(C->product->A) && !MatOceanValuesPending(C->product->B));
  PetscCall(MatOceanCountersAdd_Private(1, 0, 0, 0));
  PetscCall(MatOceanViewIfAsked(C, data));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

static PetscErrorCode MatProductNumeric_SeqAIJOcean(Mat C)
{
  MatProductData_SeqAIJOcean *data;
  Mat_Product                *product = C->product;
  PetscObjectState            a_state, b_state, c_state;
  PetscBool                   fresh;
  OceanCSR                    A, B;
  PetscLogEvent               ev;

  PetscFunctionBegin;
  MatCheckProduct(C, 1);
  data = (MatProductData_SeqAIJOcean *)product->data;
  PetscCheck(data, PetscObjectComm((PetscObject)C), PETSC_ERR_PLIB,
             "Product data empty: MatProductSymbolic() was not run by petsc-ocean");
  /* The operands moved between host and device (bound to the CPU, replaced): the plan's device state is for the other
     kind, so the symbolic phase is redone as for a new structure. */
  if (MatOceanDeviceOperands(C, data) != data->device_operands) {
    PetscCall(
      PetscInfo(C, "petsc-ocean: operands moved between host and device since the symbolic phase; redoing it\n"));
    PetscCall(MatOceanSymbolicRun(C, data));
    PetscCall(MatOceanCountersAdd_Private(0, 0, 0, 1));
    PetscFunctionReturn(OCEAN_PETSC_OK);
  }
  PetscCall(MatOceanGetOperands(C, data, &A, &B));
  /* PETSc never checks that REUSE keeps the sparsity: a new structure needs a new symbolic phase. */
  if (A.structure_id != data->a_sid || B.structure_id != data->b_sid) {
    PetscCall(PetscInfo(C, "petsc-ocean: operand sparsity changed since the symbolic phase; redoing it\n"));
    PetscCall(MatOceanSymbolicRun(C, data));
    PetscCall(MatOceanCountersAdd_Private(0, 0, 0, 1));
    PetscFunctionReturn(OCEAN_PETSC_OK);
  }
  /* Only the values the symbolic phase just computed are known to be current: the object state alone cannot tell (the
     user may have changed C, and MatRetrieveValues() restores an operand's values without advancing its state). */
  fresh              = data->values_fresh;
  data->values_fresh = PETSC_FALSE;
  PetscCall(PetscObjectStateGet((PetscObject)product->A, &a_state));
  PetscCall(PetscObjectStateGet((PetscObject)product->B, &b_state));
  PetscCall(PetscObjectStateGet((PetscObject)C, &c_state));
  if (fresh && a_state == data->a_state && b_state == data->b_state && c_state == data->c_state) {
    PetscCall(MatOceanCountersAdd_Private(0, 0, 1, 0));
    PetscFunctionReturn(OCEAN_PETSC_OK);
  }
  PetscCall(MatOceanEventsBegin_Private(NULL, &ev, NULL));
  PetscCall(PetscLogEventBegin(ev, C, 0, 0, 0));
  if (data->c_released) PetscCall(MatOceanNumericIntoC(C, data, &A, &B));
  else PetscCallOcean(OceanProductNumeric(data->plan, &A, &B));
  /* a device plan's numeric call returns once queued: what its check found is reported here, by this product */
  PetscCallOcean(OceanProductSync(data->plan));
  PetscCall(PetscLogEventEnd(ev, C, 0, 0, 0));
  if (!data->c_released) PetscCall(MatOceanSetC(C, data, PETSC_FALSE));
  PetscCall(MatOceanRecordStates(C, data));
  PetscCall(MatOceanCountersAdd_Private(0, 1, 0, 0));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

static PetscErrorCode MatProductSymbolic_SeqAIJOcean(Mat C)
{
  Mat_Product                *product = C->product;
  Mat                         A = product->A, B = product->B;
  MatProductData_SeqAIJOcean *data;
  PetscInt                    m, n;

  PetscFunctionBegin;
  MatCheckProduct(C, 1);
  PetscCheck(!product->data, PetscObjectComm((PetscObject)C), PETSC_ERR_PLIB, "Product data not empty");
  switch (product->type) {
  case MATPRODUCT_AB:
    m = A->rmap->n;
    n = B->cmap->n;
    break;
  case MATPRODUCT_AtB:
    m = A->cmap->n;
    n = B->cmap->n;
    break;
  case MATPRODUCT_PtAP:
    PetscCheck(A->rmap->n == A->cmap->n, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ,
               "PtAP needs a square A, got %" PetscInt_FMT " x %" PetscInt_FMT " (%s)", A->rmap->n, A->cmap->n,
               ((PetscObject)A)->type_name);
    m = B->cmap->n;
    n = B->cmap->n;
    break;
  default:
    SETERRQ(PetscObjectComm((PetscObject)C), PETSC_ERR_SUP,
            "petsc-ocean does not support MatProductType %s for %s and %s", MatProductTypes[product->type],
            ((PetscObject)A)->type_name, ((PetscObject)B)->type_name);
  }
  PetscCall(PetscNew(&data));
  product->data    = data; /* owned by the product from here on, also when a later step fails */
  product->destroy = MatProductDataDestroy_SeqAIJOcean;
  data->type       = product->type == MATPRODUCT_AB  ? OCEAN_PRODUCT_AB
                   : product->type == MATPRODUCT_AtB ? OCEAN_PRODUCT_AtB
                                                     : OCEAN_PRODUCT_PtAP;
  PetscCall(MatOceanGetOptions_Private(C, &data->opts));
  PetscCall(MatSetSizes(C, m, n, m, n));
  PetscCall(MatOceanProductSetBlockSizes_Private(C));
  PetscCall(MatSetType(C, MATSEQAIJOCEAN));
  PetscCall(MatOceanSymbolicRun(C, data));
  C->ops->productnumeric = MatProductNumeric_SeqAIJOcean;
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

static PetscBool MatOceanIsSeqAIJBased(Mat M)
{
  PetscBool flg = PETSC_FALSE;
  if (PetscObjectBaseTypeCompare((PetscObject)M, MATSEQAIJ, &flg)) return PETSC_FALSE;
  return flg;
}

/* AB, AtB, PtAP with SeqAIJ-based operands (ours or plain SeqAIJ, either order) and the default algorithm; anything
   else keeps PETSc's way: ABt, RARt, ABC, and an algorithm the user chose (MatProductSetAlgorithm(), -matmatmult_via,
   -mattransposematmult_via, -matptap_via), which the base type's implementation runs or refuses as with aij.
   PETSc may call this twice for one product: it only sets function pointers. */
PetscErrorCode MatProductSetFromOptions_SeqAIJOcean(Mat C)
{
  Mat_Product     *product = C->product;
  Mat_OceanParent *parent;
  PetscBool        isdefault;

  PetscFunctionBegin;
  MatCheckProduct(C, 1);
  C->ops->productsymbolic = NULL;
  if (!MatOceanIsSeqAIJBased(product->A) || !MatOceanIsSeqAIJBased(product->B)) PetscFunctionReturn(OCEAN_PETSC_OK);
  parent = MatOceanParentOf(product->A);
  if (!parent) parent = MatOceanParentOf(product->B);
  PetscCall(PetscStrcmp(product->alg, MATPRODUCTALGORITHMDEFAULT, &isdefault));
  if (isdefault && (product->type == MATPRODUCT_AB || product->type == MATPRODUCT_AtB || product->type == MATPRODUCT_PtAP)) {
    /* the options PETSc's SeqAIJ reads the algorithm from (its setup sets a named default of its own otherwise) */
    const char *names[] = {"-mat_product_algorithm", product->type == MATPRODUCT_AB    ? "-matmatmult_via"
                                                     : product->type == MATPRODUCT_AtB ? "-mattransposematmult_via"
                                                                                       : "-matptap_via"};
    for (int k = 0; k < 2 && isdefault; k++) {
      PetscBool set;
      PetscCall(PetscOptionsHasName(((PetscObject)C)->options, ((PetscObject)C)->prefix, names[k], &set));
      isdefault = set ? PETSC_FALSE : PETSC_TRUE;
    }
    if (isdefault) {
      C->ops->productsymbolic = MatProductSymbolic_SeqAIJOcean;
      PetscCall(MatOceanWrapProduct_Private(C));
      PetscFunctionReturn(OCEAN_PETSC_OK);
    }
  }
  if (parent && parent->base_productsetfromoptions) PetscCall((*parent->base_productsetfromoptions)(C));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

static PetscErrorCode MatOceanProductGetData(Mat C, MatProductData_SeqAIJOcean **data)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(C, MAT_CLASSID, 1);
  PetscCheck(C->product && C->product->data && C->product->destroy == MatProductDataDestroy_SeqAIJOcean,
             PetscObjectComm((PetscObject)C), PETSC_ERR_ARG_WRONG,
             "Matrix of type %s is not the result of a sequential petsc-ocean product", ((PetscObject)C)->type_name);
  *data = (MatProductData_SeqAIJOcean *)C->product->data;
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/*@C
  MatOceanProductGetStats - Gets the decisions and statistics of one stage of a sequential petsc-ocean product.

  Not Collective

  Input Parameters:
+ C     - the product matrix (from `MatProductCreate()`, `MatMatMult()`, `MatTransposeMatMult()` or `MatPtAP()`)
- stage - 0 for AB and AtB; 0 (A*P) or 1 (P^T*(AP)) for PtAP

  Output Parameter:
. stats - the statistics

  Level: intermediate

.seealso: `MatOceanGetCounters()`, `MatOceanStatsView()`
@*/
PetscErrorCode MatOceanProductGetStats(Mat C, PetscInt stage, OceanStats *stats)
{
  MatProductData_SeqAIJOcean *data;
  int                         nstages;

  PetscFunctionBegin;
  PetscCall(MatOceanProductGetData(C, &data));
  PetscCallOcean(OceanProductGetNumStages(data->plan, &nstages));
  PetscCheck(stage >= 0 && stage < nstages, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
             "Stage %" PetscInt_FMT " out of range: a %s product has %d", stage, OceanProductTypeName(data->type),
             nstages);
  PetscCallOcean(OceanProductGetStats(data->plan, (int)stage, stats));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/*@C
  MatOceanProductGetPlan - Gets the core plan of a sequential petsc-ocean product (per-row decisions, see ocean.h).

  Level: developer

.seealso: `MatOceanProductGetStats()`
@*/
PetscErrorCode MatOceanProductGetPlan(Mat C, OceanProduct *plan)
{
  MatProductData_SeqAIJOcean *data;

  PetscFunctionBegin;
  PetscCall(MatOceanProductGetData(C, &data));
  *plan = data->plan;
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/*@C
  MatOceanProductGetBackend - Gets the backend a sequential petsc-ocean product ran on.

  Level: intermediate

.seealso: `MatOceanProductGetStats()`
@*/
PetscErrorCode MatOceanProductGetBackend(Mat C, OceanBackend *backend)
{
  MatProductData_SeqAIJOcean *data;

  PetscFunctionBegin;
  PetscCall(MatOceanProductGetData(C, &data));
  *backend = data->backend;
  PetscFunctionReturn(OCEAN_PETSC_OK);
}
