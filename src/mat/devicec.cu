/*
  devicec.cu - a product's C handed to aijcusparse on the device.  PETSc has no public call that takes a device CSR
  into an aijcusparse matrix: without this, C's device copy is made by PETSc from the host structure (structure and
  values uploaded, although the values are already on the device).  Here the plan's C is copied on the device into
  the CSR of C's Mat_SeqAIJCUSPARSE, built as PETSc's own upload builds it, so nothing crosses to the device.

  It reads PETSc's private cusparsematimpl.h, present in a PETSc source tree (PETSC_DIR of a CUDA build): the makefile
  compiles this file only there, and matocean.h keeps it to the plan's int32 indices and double values
  (OCEAN_DEVICE_C_HANDOVER); a C with a device copy already is left to PETSc's upload.  C's host structure
  (PETSc's AIJ needs one) takes its column indices straight from the plan into its own array.
  No kernel here: the copies are the core's (OceanProductCopyDeviceCSR32, OceanProductGetCStructureInto).
*/
#include "mat/matocean.h"
#if defined(OCEAN_DEVICE_C_HANDOVER)
#include <../src/mat/impls/aij/seq/aij.h>
#include <../src/mat/impls/aij/seq/seqcusparse/cusparsematimpl.h>

PetscErrorCode MatOceanSetColumnsFromPlan_Private(Mat C, OceanProduct plan, int64_t nnz)
{
  Mat_SeqAIJ *c = (Mat_SeqAIJ *)C->data;

  PetscFunctionBegin;
  PetscCheck(c->maxnz == nnz, PETSC_COMM_SELF, PETSC_ERR_PLIB,
             "Product matrix of type %s: %" PetscInt_FMT " entries preallocated for C's %" PetscInt64_FMT,
             ((PetscObject)C)->type_name, c->maxnz, (PetscInt64)nnz);
  if (nnz) PetscCallOcean(OceanProductGetCStructureInto(plan, NULL, (int32_t *)c->j));
  /* as MatSeqAIJSetColumnIndices leaves it: every row full */
  c->nz = c->maxnz;
  for (PetscInt i = 0; i < C->rmap->n; i++) c->ilen[i] = c->imax[i];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A CSR mult structure as PETSc's upload makes one (CSR format, zero-based, general), empty arrays of C's sizes: mc
   rows (those with entries where C is in compressed rows, their indices in cprowIndices). */
static PetscErrorCode MatOceanNewMultStruct(Mat C, PetscInt mc, PetscBool compressed, PetscInt nnz,
                                            Mat_SeqAIJCUSPARSEMultStruct **out)
{
  Mat_SeqAIJCUSPARSEMultStruct *ms = new Mat_SeqAIJCUSPARSEMultStruct;
  CsrMatrix                    *csr;

  PetscFunctionBegin;
  ms->mat          = NULL;
  ms->descr        = NULL;
  ms->cprowIndices = NULL;
  ms->alpha_one = ms->beta_zero = ms->beta_one = NULL;
  *out                                         = ms; /* from here on the caller frees what exists */
  ms->mat = csr       = new CsrMatrix();             /* vectors NULL until made */
  csr->num_rows       = mc;
  csr->num_cols       = C->cmap->n;
  csr->num_entries    = nnz;
  csr->row_offsets    = new THRUSTINTARRAY(mc + 1);
  csr->column_indices = new THRUSTINTARRAY(nnz);
  csr->values         = new THRUSTARRAY(nnz);
  if (compressed) ms->cprowIndices = new THRUSTINTARRAY(mc);
  PetscCallCUSPARSE(cusparseCreateMatDescr(&ms->descr));
  PetscCallCUSPARSE(cusparseSetMatIndexBase(ms->descr, CUSPARSE_INDEX_BASE_ZERO));
  PetscCallCUSPARSE(cusparseSetMatType(ms->descr, CUSPARSE_MATRIX_TYPE_GENERAL));
  PetscCallCUDA(cudaMalloc((void **)&ms->alpha_one, sizeof(PetscScalar)));
  PetscCallCUDA(cudaMalloc((void **)&ms->beta_zero, sizeof(PetscScalar)));
  PetscCallCUDA(cudaMalloc((void **)&ms->beta_one, sizeof(PetscScalar)));
  PetscCallCUDA(cudaMemcpy(ms->alpha_one, &PETSC_CUSPARSE_ONE, sizeof(PetscScalar), cudaMemcpyHostToDevice));
  PetscCallCUDA(cudaMemcpy(ms->beta_zero, &PETSC_CUSPARSE_ZERO, sizeof(PetscScalar), cudaMemcpyHostToDevice));
  PetscCallCUDA(cudaMemcpy(ms->beta_one, &PETSC_CUSPARSE_ONE, sizeof(PetscScalar), cudaMemcpyHostToDevice));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Frees what MatOceanNewMultStruct made when the hand-over fails half way (PETSc never saw it). */
static void MatOceanFreeMultStruct(Mat_SeqAIJCUSPARSEMultStruct *ms)
{
  CsrMatrix *csr = (CsrMatrix *)ms->mat;

  if (ms->matDescr) (void)cusparseDestroySpMat(ms->matDescr);
  if (ms->descr) (void)cusparseDestroyMatDescr(ms->descr);
  (void)cudaFree(ms->alpha_one);
  (void)cudaFree(ms->beta_zero);
  (void)cudaFree(ms->beta_one);
  delete ms->cprowIndices;
  if (csr) {
    delete csr->row_offsets;
    delete csr->column_indices;
    delete csr->values;
    delete csr;
  }
  delete ms;
}

/* The mult structure of C filled from the plan (*out set as soon as it exists, for the caller to free on an error);
   C in compressed rows (mc of its rows hold entries) gets them compressed on the device as PETSc's host structure
   lists them, and *work the work vector PETSc's MatMult then uses. */
static PetscErrorCode MatOceanBuildDeviceC(Mat C, OceanProduct plan, PetscInt mc, PetscBool compressed, PetscInt nnz,
                                           Mat_SeqAIJCUSPARSEMultStruct **out, THRUSTARRAY **work)
{
  CsrMatrix *csr;

  PetscFunctionBegin;
  try {
    PetscCall(MatOceanNewMultStruct(C, mc, compressed, nnz, out));
    if (compressed) *work = new THRUSTARRAY(mc);
  } catch (const std::exception &e) {
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_MEM,
            "Product matrix of type %s: its device CSR of %" PetscInt_FMT " rows and %" PetscInt_FMT
            " entries could not be made: %s",
            ((PetscObject)C)->type_name, mc, nnz, e.what());
  }
  csr = (CsrMatrix *)(*out)->mat;
  if (compressed)
    PetscCallOcean(OceanProductCopyDeviceCompressedCSR32(plan, mc, (*out)->cprowIndices->data().get(),
                                                         csr->row_offsets->data().get(),
                                                         csr->column_indices->data().get(), csr->values->data().get()));
  else
    PetscCallOcean(OceanProductCopyDeviceCSR32(plan, csr->row_offsets->data().get(), csr->column_indices->data().get(),
                                               csr->values->data().get()));
  /* cuSPARSE refuses a descriptor of zero rows */
  if (mc)
    PetscCallCUSPARSE(cusparseCreateCsr(&(*out)->matDescr, mc, C->cmap->n, nnz, csr->row_offsets->data().get(),
                                        csr->column_indices->data().get(), csr->values->data().get(),
                                        CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* C's device copy from the plan, after its host structure was set and assembled (MatOceanSetCStructure): *done is
   PETSC_FALSE, and nothing changed, where PETSc's upload has to make it instead. */
PetscErrorCode MatOceanSetDeviceC_Private(Mat C, OceanProduct plan, PetscBool *done)
{
  Mat_SeqAIJCUSPARSE           *cusp       = (Mat_SeqAIJCUSPARSE *)C->spptr;
  Mat_SeqAIJ                   *c          = (Mat_SeqAIJ *)C->data;
  Mat_SeqAIJCUSPARSEMultStruct *ms         = NULL;
  const PetscInt                m          = C->rmap->n;
  const PetscBool               compressed = c->compressedrow.use;
  THRUSTARRAY                  *work       = NULL;
  PetscInt                      mc;
  int64_t                       nrows, nnz;
  PetscErrorCode                ierr;

  PetscFunctionBegin;
  *done = PETSC_FALSE;
  if (!cusp || C->factortype != MAT_FACTOR_NONE || cusp->format != MAT_CUSPARSE_CSR || C->boundtocpu)
    PetscFunctionReturn(PETSC_SUCCESS);
  /* a device copy from before (a symbolic phase again on this C) is PETSc's to free: its upload replaces it */
  if (cusp->mat || cusp->matTranspose) {
    PetscCall(PetscInfo(C, "petsc-ocean: C has a device copy from before: PETSc makes the new one by an upload\n"));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCallOcean(OceanProductGetDeviceC(plan, &nrows, NULL, &nnz, NULL, NULL, NULL));
  PetscCheck(nrows == m && nnz == c->nz, PETSC_COMM_SELF, PETSC_ERR_PLIB,
             "Product matrix of type %s: the plan's C has %" PetscInt64_FMT " rows and %" PetscInt64_FMT
             " entries, the matrix %" PetscInt_FMT " and %" PetscInt_FMT,
             ((PetscObject)C)->type_name, (PetscInt64)nrows, (PetscInt64)nnz, m, c->nz);
  /* compressed rows where PETSc's assembly chose them (many empty rows: an off-diagonal block's product) */
  mc   = compressed ? c->compressedrow.nrows : m;
  ierr = MatOceanBuildDeviceC(C, plan, mc, compressed, (PetscInt)nnz, &ms, &work);
  if (ierr) {
    if (ms) MatOceanFreeMultStruct(ms);
    delete work;
    PetscCall(ierr);
  }
  PetscCallCUSPARSE(cusparseSetPointerMode(cusp->handle, CUSPARSE_POINTER_MODE_DEVICE));
  cusp->mat = ms;
  delete cusp->workVector;
  cusp->workVector   = work; /* NULL unless compressed, as PETSc's upload leaves it */
  cusp->nrows        = mc;
  cusp->nonzerostate = C->nonzerostate;
  C->offloadmask     = PETSC_OFFLOAD_GPU;
  *done              = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif
