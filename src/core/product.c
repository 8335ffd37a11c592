/*
  product.c - product plans (the public API).  A plan checks its operands, holds its options (its own or the
  context's), and chains one or two SpGEMM stages (core/stage.c): AB; AtB as A^T*B with A^T made on the host; PtAP as
  A*P then P^T*(AP), on a device backend with P^T and AP kept on the device.
*/
#include "core/backend.h"

#define OCEAN_TAG_AP 0x4f4345414e5f4150ULL /* "OCEAN_AP" */

struct _p_OceanProduct {
  OceanContext        ctx;
  OceanProductType    type;
  int                 nstages;
  OceanStage          stage[2];
  OceanHostTranspose *trans;     /* A^T (AtB), P^T (PtAP on a host backend), shared with the context's other plans */
  OceanCSR            trans_csr; /* its view */
  void               *dtrans;    /* P^T on the device (PtAP on a device backend: ops->transpose_update) */
  OceanSettings       own;       /* OceanProductSetOptions: the plan's own settings ... */
  int                 has_own;   /* ... else the context's */
  uint64_t            own_state; /* bumped by OceanProductSetOptions */
  int                 has_symbolic;
  uint64_t            a_id, b_id, set_state; /* the settings state of the last symbolic phase */
  OceanMemoryType     mtype;                 /* of the operands (OceanProductSetOperandMemType) */
  int64_t            *offsets[2]; /* operands' row offsets widened on the device (OceanProductWidenDeviceOffsets) */
  int64_t             offsets_cap[2];
};

/* ------------------------------------------------------------------------------------------------ transposes */

static OceanError OceanProductTranspose(OceanProduct prod, const OceanCSR *M, double *seconds)
{
  double     t0  = OceanPhaseBegin(prod->ctx, OCEAN_PHASE_TRANSPOSE);
  OceanError err = OceanHostTransposeAcquire(prod->ctx, &prod->trans, M, &prod->trans_csr);
  *seconds       = OceanPhaseEnd(prod->ctx, OCEAN_PHASE_TRANSPOSE, 0.0, t0);
  return err;
}

/* AtB of device-resident operands: A^T made on the device (kept per structure, later calls gather its values), so A
   does not go through the host. */
static OceanError OceanProductDeviceTranspose(OceanProduct prod, const OceanCSR *A, OceanCSR *AT, double *seconds)
{
  double     t0  = OceanPhaseBegin(prod->ctx, OCEAN_PHASE_TRANSPOSE);
  OceanError err = prod->ctx->ops->transpose_update(prod->ctx, &prod->dtrans, A, prod->stage[0].op_nnz[0], AT);

  *seconds = OceanPhaseEnd(prod->ctx, OCEAN_PHASE_TRANSPOSE, 0.0, t0);
  OceanCall(err);
  AT->structure_id = OceanDeriveStructureId(A->structure_id, 1, OCEAN_TAG_TRANSPOSE);
  AT->values_id    = 0; /* device operands: never mirrored */
  return OCEAN_SUCCESS;
}

/* The first operand stage 0 multiplies: A, or A^T for AtB (only its sizes and structure id on the device). */
static OceanCSR OceanProductStageOperand(OceanProduct prod, const OceanCSR *A)
{
  OceanCSR h;
  if (prod->type != OCEAN_PRODUCT_AtB) return *A;
  if (!prod->stage[0].dev_operands) return prod->trans_csr;
  memset(&h, 0, sizeof(h));
  h.nrows        = A->ncols;
  h.ncols        = A->nrows;
  h.structure_id = OceanDeriveStructureId(A->structure_id, 1, OCEAN_TAG_TRANSPOSE);
  return h;
}

/* ------------------------------------------------------------------------------------------------ plans */

/* The plan's settings: its own (OceanProductSetOptions) or the context's. */
static const OceanSettings *OceanProductSettings(OceanProduct prod)
{
  return prod->has_own ? &prod->own : &prod->ctx->set;
}

/* Changes whenever the settings the plan runs with change (a symbolic phase is then redone). */
static uint64_t OceanProductSettingsState(OceanProduct prod)
{
  return prod->has_own ? prod->own_state : prod->ctx->set_state;
}

OceanError OceanProductSetOptions(OceanProduct prod, const OceanOptions *opts)
{
  OceanSettings set;

  OceanCheck(prod && opts, OCEAN_ERR_ARG, "OceanProductSetOptions: NULL argument");
  OceanCall(OceanSettingsCompute(&prod->ctx->profile, opts, &set));
  prod->own = set;
  prod->own_state += prod->has_own ? 1 : prod->ctx->set_state + 1; /* never equal to the state it replaces */
  prod->has_own = 1;
  return OCEAN_SUCCESS;
}

OceanError OceanProductGetOptions(OceanProduct prod, OceanOptions *opts)
{
  OceanCheck(prod && opts, OCEAN_ERR_ARG, "OceanProductGetOptions: NULL argument");
  *opts = OceanProductSettings(prod)->options;
  return OCEAN_SUCCESS;
}

OceanError OceanProductCreate(OceanContext ctx, OceanProductType type, OceanProduct *prod)
{
  OceanProduct p;

  OceanCheck(ctx && prod, OCEAN_ERR_ARG, "OceanProductCreate: NULL argument");
  OceanCheck(type >= OCEAN_PRODUCT_AB && type <= OCEAN_PRODUCT_PtAP, OCEAN_ERR_ARG,
             "OceanProductCreate: unknown product type %d", (int)type);
  OceanCall(OceanCalloc(1, &p, "OceanProductCreate: plan"));
  p->ctx     = ctx;
  p->type    = type;
  p->nstages = type == OCEAN_PRODUCT_PtAP ? 2 : 1;
  if (type == OCEAN_PRODUCT_AB) p->stage[0].name = "AB";
  else if (type == OCEAN_PRODUCT_AtB) p->stage[0].name = "AtB (A^T*B)";
  else {
    p->stage[0].name = "PtAP stage 0 (A*P)";
    p->stage[1].name = "PtAP stage 1 (P^T*(AP))";
  }
  *prod = p;
  return OCEAN_SUCCESS;
}

OceanError OceanProductDestroy(OceanProduct *prod)
{
  if (!prod || !*prod) return OCEAN_SUCCESS;
  OceanStageDestroy((*prod)->ctx, &(*prod)->stage[0]);
  OceanStageDestroy((*prod)->ctx, &(*prod)->stage[1]);
  OceanHostTransposeRelease((*prod)->ctx, &(*prod)->trans);
  if ((*prod)->ctx->ops->transpose_destroy) (*prod)->ctx->ops->transpose_destroy((*prod)->ctx, &(*prod)->dtrans);
  for (int k = 0; k < 2; k++)
    if ((*prod)->offsets[k]) (*prod)->ctx->ops->device_release((*prod)->ctx, (*prod)->offsets[k]);
  OceanFree(*prod);
  return OCEAN_SUCCESS;
}

/* The operands, normalized, validated (columns too when full) and with matching sizes for the product type. */
static OceanError OceanProductCheckOperands(OceanProduct prod, const OceanCSR *A_in, const OceanCSR *B_in, int full,
                                            OceanCSR *A, OceanCSR *B)
{
  const char *bname = prod->type == OCEAN_PRODUCT_PtAP ? "P" : "B";

  OceanCheck(A_in && B_in, OCEAN_ERR_ARG, "%s product: NULL operand", OceanProductTypeName(prod->type));
  prod->stage[0].dev_operands = prod->stage[1].dev_operands = 0;
  if (prod->mtype == OCEAN_MEMORY_DEVICE) {
    OceanStage *st = &prod->stage[0];
    /* OceanProductSetOperandMemType admitted only plans of a CUDA context; the host never reads these arrays */
    OceanCheck(prod->ctx->ops->check_device_csr && prod->ctx->ops->transpose_update, OCEAN_ERR_ARG,
               "%s product: device-resident operands need a plan of a CUDA context", OceanProductTypeName(prod->type));
    *A = *A_in;
    *B = *B_in;
    if (full) {
      const OceanCSR *const ops[2]   = {A, B};
      const char *const     names[2] = {"A", bname};
      OceanCall(prod->ctx->ops->check_device_csr(prod->ctx, ops, names, st->op_nnz));
    } else { /* numeric: the structure ids promise the symbolic call's structure */
      st->op_nnz[0] = st->a_nnz;
      st->op_nnz[1] = st->b_nnz;
    }
    st->dev_operands = 1;
  } else {
    OceanCSRNormalize(A_in, A);
    OceanCSRNormalize(B_in, B);
    if (full) {
      OceanCall(OceanCSRValidate(A, "A"));
      OceanCall(OceanCSRValidate(B, bname));
    }
  }
  switch (prod->type) {
  case OCEAN_PRODUCT_AB:
    OceanCheck(A->ncols == B->nrows, OCEAN_ERR_ARG,
               "AB product: A is %lld x %lld but B is %lld x %lld (A's columns must equal B's rows)",
               (long long)A->nrows, (long long)A->ncols, (long long)B->nrows, (long long)B->ncols);
    break;
  case OCEAN_PRODUCT_AtB:
    OceanCheck(A->nrows == B->nrows, OCEAN_ERR_ARG,
               "AtB product: A is %lld x %lld but B is %lld x %lld (A's rows must equal B's rows)", (long long)A->nrows,
               (long long)A->ncols, (long long)B->nrows, (long long)B->ncols);
    break;
  case OCEAN_PRODUCT_PtAP:
    OceanCheck(
      A->nrows == A->ncols && A->ncols == B->nrows, OCEAN_ERR_ARG,
      "PtAP product: A is %lld x %lld and P is %lld x %lld (A must be square with as many columns as P has rows)",
      (long long)A->nrows, (long long)A->ncols, (long long)B->nrows, (long long)B->ncols);
    break;
  }
  return OCEAN_SUCCESS;
}

/* The CSR view of stage 0's C = A*P (on the host), with a structure id derived from those of A and P. */
static OceanError OceanProductAPView(OceanProduct prod, const OceanCSR *A, const OceanCSR *P, OceanCSR *AP)
{
  OceanStage *st = &prod->stage[0];
  OceanCall(OceanStageHostC(prod->ctx, st, 1));
  AP->nrows        = st->nrows;
  AP->ncols        = st->ncols;
  AP->rowptr       = st->rowptr;
  AP->colidx       = st->colidx;
  AP->values       = st->values;
  AP->structure_id = OceanDeriveStructureId(A->structure_id, P->structure_id, OCEAN_TAG_AP);
  AP->values_id    = 0;
  return OCEAN_SUCCESS;
}

/* PtAP's second stage on a device backend reads its operands on the device: P^T made there from stage 0's upload of
   P (kept, values gathered on later calls) and A*P, stage 0's C, in place.  Nothing goes through the host. */
static OceanError OceanProductDeviceChain(OceanProduct prod, const OceanCSR *A, const OceanCSR *P, OceanCSR *PT,
                                          OceanCSR *AP, double *seconds)
{
  const OceanBackendOps *ops = prod->ctx->ops;
  OceanStage            *s0 = &prod->stage[0], *s1 = &prod->stage[1];
  OceanCSR               Pd;
  double                 t0;
  OceanError             err;

  OceanCall(ops->device_operand(s0, 1, P, &Pd));
  t0       = OceanPhaseBegin(prod->ctx, OCEAN_PHASE_TRANSPOSE);
  err      = ops->transpose_update(prod->ctx, &prod->dtrans, &Pd, OceanStageOperandNnz(s0, 1, P), PT);
  *seconds = OceanPhaseEnd(prod->ctx, OCEAN_PHASE_TRANSPOSE, 0.0, t0);
  OceanCall(err);
  PT->structure_id = OceanDeriveStructureId(P->structure_id, 1, OCEAN_TAG_TRANSPOSE);
  PT->values_id    = 0; /* device operands: never mirrored */
  AP->nrows        = s0->nrows;
  AP->ncols        = s0->ncols;
  AP->structure_id = OceanDeriveStructureId(A->structure_id, P->structure_id, OCEAN_TAG_AP);
  AP->values_id    = 0;
  OceanCall(ops->device_c(s0, &AP->rowptr, &AP->colidx, &AP->values));
  s1->dev_operands = 1;
  s1->op_nnz[0]    = OceanStageOperandNnz(s0, 1, P);
  s1->op_nnz[1]    = s0->nnz;
  return OCEAN_SUCCESS;
}

static OceanError OceanProductRun(OceanProduct prod, const OceanCSR *A, const OceanCSR *B, int numeric)
{
  OceanContext ctx = prod->ctx;
  OceanError (*run)(OceanContext, OceanStage *, const OceanCSR *, const OceanCSR *) =
    numeric ? OceanStageNumeric : OceanStageSymbolic;
  double   tt;
  OceanCSR AP;

  prod->stage[0].set = prod->stage[1].set = OceanProductSettings(prod);
  switch (prod->type) {
  case OCEAN_PRODUCT_AB: OceanCall(run(ctx, &prod->stage[0], A, B)); break;
  case OCEAN_PRODUCT_AtB:
    if (prod->stage[0].dev_operands) {
      OceanCSR AT;
      OceanCall(OceanProductDeviceTranspose(prod, A, &AT, &tt));
      OceanCall(run(ctx, &prod->stage[0], &AT, B));
    } else {
      OceanCall(OceanProductTranspose(prod, A, &tt));
      OceanCall(run(ctx, &prod->stage[0], &prod->trans_csr, B));
    }
    prod->stage[0].stats.t_transpose = tt;
    break;
  case OCEAN_PRODUCT_PtAP:
    OceanCall(run(ctx, &prod->stage[0], A, B));
    if (ctx->ops->transpose_update) {
      OceanCSR PT;
      OceanCall(OceanProductDeviceChain(prod, A, B, &PT, &AP, &tt));
      OceanCall(run(ctx, &prod->stage[1], &PT, &AP));
    } else {
      OceanCall(OceanProductAPView(prod, A, B, &AP));
      OceanCall(OceanProductTranspose(prod, B, &tt));
      OceanCall(run(ctx, &prod->stage[1], &prod->trans_csr, &AP));
    }
    prod->stage[1].stats.t_transpose = tt;
    break;
  }
  return OCEAN_SUCCESS;
}

static OceanStage *OceanProductLastStage(OceanProduct prod)
{
  return &prod->stage[prod->nstages - 1];
}

OceanError OceanProductSymbolic(OceanProduct prod, const OceanCSR *A_in, const OceanCSR *B_in)
{
  OceanCSR   A, B, S;
  OceanError err;

  OceanCheck(prod, OCEAN_ERR_ARG, "OceanProductSymbolic: NULL plan");
  OceanCall(OceanProductCheckOperands(prod, A_in, B_in, 1, &A, &B));
  /* the same structures (and options) as the last symbolic call: C's structure is known, numeric suffices */
  S = OceanProductStageOperand(prod, &A);
  if (prod->has_symbolic && A.structure_id && B.structure_id && A.structure_id == prod->a_id &&
      B.structure_id == prod->b_id && prod->set_state == OceanProductSettingsState(prod) &&
      OceanStageSameOperands(&prod->stage[0], &S, &B) && !OceanProductLastStage(prod)->c_released)
    return OceanProductRun(prod, &A, &B, 1);

  prod->has_symbolic = 0;
  err                = OceanProductRun(prod, &A, &B, 0);
  if (err) return err;
  prod->has_symbolic = 1;
  prod->a_id         = A.structure_id;
  prod->b_id         = B.structure_id;
  prod->set_state    = OceanProductSettingsState(prod);
  return OCEAN_SUCCESS;
}

OceanError OceanProductNumeric(OceanProduct prod, const OceanCSR *A_in, const OceanCSR *B_in)
{
  OceanCSR A, B;

  OceanCheck(prod, OCEAN_ERR_ARG, "OceanProductNumeric: NULL plan");
  OceanCheck(prod->has_symbolic, OCEAN_ERR_STATE, "OceanProductNumeric: %s plan has no successful symbolic phase",
             OceanProductTypeName(prod->type));
  OceanCheck(!OceanProductLastStage(prod)->c_released, OCEAN_ERR_STATE,
             "OceanProductNumeric: the %s plan released its C (OceanProductReleaseHostC): use OceanProductNumericInto",
             OceanProductTypeName(prod->type));
  OceanCall(OceanProductCheckOperands(prod, A_in, B_in, 0, &A, &B));
  OceanCheck(A.structure_id && B.structure_id && A.structure_id == prod->a_id && B.structure_id == prod->b_id,
             OCEAN_ERR_STATE,
             "OceanProductNumeric: %s plan: structure ids (%llu, %llu) differ from those of the symbolic phase (%llu, "
             "%llu) or are 0; call OceanProductSymbolic",
             OceanProductTypeName(prod->type), (unsigned long long)A.structure_id, (unsigned long long)B.structure_id,
             (unsigned long long)prod->a_id, (unsigned long long)prod->b_id);
  return OceanProductRun(prod, &A, &B, 1);
}

OceanError OceanProductGetC(OceanProduct prod, int64_t *nrows, int64_t *ncols, int64_t *nnz, const int64_t **rowptr,
                            const int32_t **colidx, const double **values)
{
  OceanStage *st;

  OceanCheck(prod, OCEAN_ERR_ARG, "OceanProductGetC: NULL plan");
  st = OceanProductLastStage(prod);
  OceanCheck(prod->has_symbolic && st->valid, OCEAN_ERR_STATE, "OceanProductGetC: %s plan has no product computed",
             OceanProductTypeName(prod->type));
  OceanCheck(!st->c_released || (!colidx && !values), OCEAN_ERR_STATE,
             "OceanProductGetC: the %s plan released its C's columns and values (OceanProductReleaseHostC)",
             OceanProductTypeName(prod->type));
  OceanCall(OceanProductSync(prod));
  if (!st->c_released) OceanCall(OceanStageHostC(prod->ctx, st, values != NULL));
  if (nrows) *nrows = st->nrows;
  if (ncols) *ncols = st->ncols;
  if (nnz) *nnz = st->nnz;
  if (rowptr) *rowptr = st->rowptr;
  if (colidx) *colidx = st->colidx;
  if (values) *values = st->values;
  return OCEAN_SUCCESS;
}

OceanError OceanProductGetCStructureInto(OceanProduct prod, int64_t *rowptr, int32_t *colidx)
{
  OceanStage *st;

  OceanCheck(prod, OCEAN_ERR_ARG, "OceanProductGetCStructureInto: NULL plan");
  st = OceanProductLastStage(prod);
  OceanCheck(prod->has_symbolic && st->valid, OCEAN_ERR_STATE,
             "OceanProductGetCStructureInto: %s plan has no product computed", OceanProductTypeName(prod->type));
  OceanCheck(!colidx || !st->c_released, OCEAN_ERR_STATE,
             "OceanProductGetCStructureInto: the %s plan released its C's columns (OceanProductReleaseHostC)",
             OceanProductTypeName(prod->type));
  OceanCall(OceanProductSync(prod));
  if (st->host_structure) {
    if (rowptr) memcpy(rowptr, st->rowptr, (size_t)(st->nrows + 1) * sizeof(int64_t));
    if (colidx && st->nnz) memcpy(colidx, st->colidx, (size_t)st->nnz * sizeof(int32_t));
    return OCEAN_SUCCESS;
  }
  {
    const int64_t *rp;
    const int32_t *ci;
    const double  *v;
    const double   t0 = OceanPhaseBegin(prod->ctx, OCEAN_PHASE_DOWNLOAD);
    OceanError     err;

    OceanCheck(prod->ctx->ops->device_c && prod->ctx->ops->download, OCEAN_ERR_STATE,
               "OceanProductGetCStructureInto: the %s plan's C is neither on the host nor on a device",
               OceanProductTypeName(prod->type)); /* cannot happen */
    err = prod->ctx->ops->device_c(st, &rp, &ci, &v);
    if (!err && rowptr) {
      if (st->nrows) err = prod->ctx->ops->download(prod->ctx, rowptr, rp, (size_t)(st->nrows + 1) * sizeof(int64_t));
      else rowptr[0] = 0;
      if (!err) st->stats.downloaded_bytes += st->nrows ? (st->nrows + 1) * (int64_t)sizeof(int64_t) : 0;
    }
    if (!err && colidx) {
      err = prod->ctx->ops->download(prod->ctx, colidx, ci, (size_t)st->nnz * sizeof(int32_t));
      if (!err) st->stats.downloaded_bytes += st->nnz * (int64_t)sizeof(int32_t);
    }
    st->stats.t_download += OceanPhaseEnd(prod->ctx, OCEAN_PHASE_DOWNLOAD, 0.0, t0);
    return err;
  }
}

OceanError OceanProductReleaseHostC(OceanProduct prod)
{
  OceanStage *st;

  OceanCheck(prod, OCEAN_ERR_ARG, "OceanProductReleaseHostC: NULL plan");
  st = OceanProductLastStage(prod);
  OceanCheck(prod->has_symbolic && st->valid, OCEAN_ERR_STATE,
             "OceanProductReleaseHostC: %s plan has no product computed", OceanProductTypeName(prod->type));
  if (prod->ctx->ops->host_c) return OCEAN_SUCCESS; /* a device backend's C: kept where it is */
  OceanFree(st->colidx);
  OceanFree(st->values);
  st->c_released = 1;
  return OCEAN_SUCCESS;
}

OceanError OceanProductNumericInto(OceanProduct prod, const OceanCSR *A, const OceanCSR *B, int64_t nnz,
                                   const int32_t *colidx, double *values)
{
  OceanStage   *st;
  const double *v;
  OceanError    err;

  OceanCheck(prod, OCEAN_ERR_ARG, "OceanProductNumericInto: NULL plan");
  st = OceanProductLastStage(prod);
  OceanCheck(prod->has_symbolic && st->valid, OCEAN_ERR_STATE,
             "OceanProductNumericInto: %s plan has no product computed", OceanProductTypeName(prod->type));
  OceanCheck(nnz == st->nnz && ((colidx && values) || nnz == 0), OCEAN_ERR_ARG,
             "OceanProductNumericInto: %s plan: C has %lld nonzeros, the caller's arrays %lld%s",
             OceanProductTypeName(prod->type), (long long)st->nnz, (long long)nnz,
             colidx && values ? "" : " (and a NULL array)");
  if (!st->c_released) {
    OceanCall(OceanProductNumeric(prod, A, B));
    OceanCall(OceanProductGetC(prod, NULL, NULL, NULL, NULL, NULL, &v));
    if (nnz) memcpy(values, v, (size_t)nnz * sizeof(double));
    return OCEAN_SUCCESS;
  }
  /* the caller's arrays stand in for the released ones for this call only */
  st->colidx     = (int32_t *)colidx;
  st->values     = values;
  st->c_released = 0;
  err            = OceanProductNumeric(prod, A, B);
  st->colidx     = NULL;
  st->values     = NULL;
  st->c_released = 1;
  return err;
}

OceanError OceanProductGetDeviceC(OceanProduct prod, int64_t *nrows, int64_t *ncols, int64_t *nnz,
                                  const int64_t **d_rowptr, const int32_t **d_colidx, const double **d_values)
{
  OceanStage    *st;
  const int64_t *rp;
  const int32_t *ci;
  const double  *v;

  OceanCheck(prod, OCEAN_ERR_ARG, "OceanProductGetDeviceC: NULL plan");
  OceanCheck(prod->ctx->ops->device_c, OCEAN_ERR_NOT_AVAILABLE,
             "OceanProductGetDeviceC: the %s plan's context is a CPU context: C is on the host (OceanProductGetC)",
             OceanProductTypeName(prod->type));
  st = OceanProductLastStage(prod);
  OceanCheck(prod->has_symbolic && st->valid, OCEAN_ERR_STATE,
             "OceanProductGetDeviceC: %s plan has no product computed", OceanProductTypeName(prod->type));
  OceanCall(prod->ctx->ops->device_c(st, &rp, &ci, &v));
  if (nrows) *nrows = st->nrows;
  if (ncols) *ncols = st->ncols;
  if (nnz) *nnz = st->nnz;
  if (d_rowptr) *d_rowptr = rp;
  if (d_colidx) *d_colidx = ci;
  if (d_values) *d_values = v;
  return OCEAN_SUCCESS;
}

OceanError OceanProductWidenDeviceOffsets(OceanProduct prod, int k, int64_t nrows, const int32_t *d_rowptr32,
                                          const int64_t **d_rowptr)
{
  OceanCheck(prod && d_rowptr, OCEAN_ERR_ARG, "OceanProductWidenDeviceOffsets: NULL argument");
  OceanCheck(k == 0 || k == 1, OCEAN_ERR_ARG, "OceanProductWidenDeviceOffsets: operand %d, not 0 (A) or 1 (B)", k);
  OceanCheck(nrows >= 0, OCEAN_ERR_ARG, "OceanProductWidenDeviceOffsets: %lld rows", (long long)nrows);
  OceanCheck(prod->ctx->ops->offsets_widen, OCEAN_ERR_ARG,
             "OceanProductWidenDeviceOffsets: the %s plan's context is a CPU context: it has no device memory",
             OceanProductTypeName(prod->type));
  OceanCheck(d_rowptr32 || nrows == 0, OCEAN_ERR_ARG,
             "OceanProductWidenDeviceOffsets: operand %d has %lld rows but no row offsets", k, (long long)nrows);
  *d_rowptr = NULL;
  if (!d_rowptr32) return OCEAN_SUCCESS;
  OceanCall(prod->ctx->ops->offsets_widen(prod->ctx, nrows + 1, d_rowptr32, &prod->offsets[k], &prod->offsets_cap[k]));
  *d_rowptr = prod->offsets[k];
  return OCEAN_SUCCESS;
}

OceanError OceanProductCopyDeviceValues(OceanProduct prod, double *d_values)
{
  const int64_t *rp;
  const int32_t *ci;
  const double  *v;
  int64_t        nnz;

  OceanCall(OceanProductGetDeviceC(prod, NULL, NULL, &nnz, &rp, &ci, &v));
  OceanCheck(d_values || nnz == 0, OCEAN_ERR_ARG, "OceanProductCopyDeviceValues: no destination for %lld values",
             (long long)nnz);
  return prod->ctx->ops->device_copy(prod->ctx, d_values, v, (size_t)nnz * sizeof(double));
}

/* C's row offsets narrowed (kept < 0) or compressed to its rows with entries (kept of them, their indices into
   d_rindex), then its columns and values, into the caller's int32 device CSR. */
static OceanError OceanProductCopyDeviceC32(OceanProduct prod, int64_t kept, int32_t *d_rindex, int32_t *d_rowptr,
                                            int32_t *d_colidx, double *d_values)
{
  const char    *name = kept < 0 ? "OceanProductCopyDeviceCSR32" : "OceanProductCopyDeviceCompressedCSR32";
  const int64_t *rp;
  const int32_t *ci;
  const double  *v;
  int64_t        m, nnz;

  OceanCall(OceanProductGetDeviceC(prod, &m, NULL, &nnz, &rp, &ci, &v));
  OceanCheck(nnz <= INT32_MAX && m <= INT32_MAX, OCEAN_ERR_ARG,
             "%s: C of the %s plan has %lld rows and %lld entries, more than int32 indices hold", name,
             OceanProductTypeName(prod->type), (long long)m, (long long)nnz);
  OceanCheck(kept <= m, OCEAN_ERR_ARG, "%s: %lld rows with entries asked for, C has %lld rows", name, (long long)kept,
             (long long)m);
  OceanCheck(d_rowptr && (kept < 0 || d_rindex || kept == 0) && ((d_colidx && d_values) || nnz == 0), OCEAN_ERR_ARG,
             "%s: no destination for C's %lld rows and %lld entries", name, (long long)m, (long long)nnz);
  OceanCheck(prod->ctx->ops->offsets_narrow && prod->ctx->ops->rows_compress, OCEAN_ERR_ARG,
             "%s: the %s plan's context is a CPU context: it has no device memory", name,
             OceanProductTypeName(prod->type));
  if (kept >= 0) OceanCall(prod->ctx->ops->rows_compress(prod->ctx, m, rp, kept, d_rindex, d_rowptr));
  else if (m) OceanCall(prod->ctx->ops->offsets_narrow(prod->ctx, m + 1, rp, d_rowptr));
  else OceanCall(prod->ctx->ops->rows_compress(prod->ctx, 0, rp, 0, NULL, d_rowptr)); /* one offset, 0 */
  OceanCall(prod->ctx->ops->device_copy(prod->ctx, d_colidx, ci, (size_t)nnz * sizeof(int32_t)));
  return prod->ctx->ops->device_copy(prod->ctx, d_values, v, (size_t)nnz * sizeof(double));
}

OceanError OceanProductCopyDeviceCSR32(OceanProduct prod, int32_t *d_rowptr, int32_t *d_colidx, double *d_values)
{
  OceanCheck(prod, OCEAN_ERR_ARG, "OceanProductCopyDeviceCSR32: NULL plan");
  return OceanProductCopyDeviceC32(prod, -1, NULL, d_rowptr, d_colidx, d_values);
}

OceanError OceanProductCopyDeviceCompressedCSR32(OceanProduct prod, int64_t kept, int32_t *d_rindex, int32_t *d_rowptr,
                                                 int32_t *d_colidx, double *d_values)
{
  OceanCheck(prod, OCEAN_ERR_ARG, "OceanProductCopyDeviceCompressedCSR32: NULL plan");
  OceanCheck(kept >= 0, OCEAN_ERR_ARG, "OceanProductCopyDeviceCompressedCSR32: %lld rows with entries",
             (long long)kept);
  return OceanProductCopyDeviceC32(prod, kept, d_rindex, d_rowptr, d_colidx, d_values);
}

OceanError OceanProductSetOperandMemType(OceanProduct prod, OceanMemoryType mtype)
{
  OceanCheck(prod, OCEAN_ERR_ARG, "OceanProductSetOperandMemType: NULL plan");
  OceanCheck(mtype == OCEAN_MEMORY_HOST || mtype == OCEAN_MEMORY_DEVICE, OCEAN_ERR_ARG,
             "OceanProductSetOperandMemType: unknown memory type %d", (int)mtype);
  if (mtype == OCEAN_MEMORY_DEVICE) {
    OceanCheck(prod->ctx->ops->check_device_csr, OCEAN_ERR_ARG,
               "OceanProductSetOperandMemType: device-resident operands need a CUDA context; this %s plan's context is "
               "a CPU context (keep the operands on the host)",
               OceanProductTypeName(prod->type));
  }
  prod->mtype = mtype;
  return OCEAN_SUCCESS;
}

OceanError OceanProductGetOperandMemType(OceanProduct prod, OceanMemoryType *mtype)
{
  OceanCheck(prod && mtype, OCEAN_ERR_ARG, "OceanProductGetOperandMemType: NULL argument");
  *mtype = prod->mtype;
  return OCEAN_SUCCESS;
}

OceanError OceanProductGetNumStages(OceanProduct prod, int *nstages)
{
  OceanCheck(prod && nstages, OCEAN_ERR_ARG, "OceanProductGetNumStages: NULL argument");
  *nstages = prod->nstages;
  return OCEAN_SUCCESS;
}

OceanError OceanProductSync(OceanProduct prod)
{
  OceanCheck(prod, OCEAN_ERR_ARG, "OceanProductSync: NULL plan");
  /* every stage: PtAP's second reads the first's C */
  for (int k = 0; k < prod->nstages; k++) OceanCall(OceanStageComplete(prod->ctx, &prod->stage[k]));
  return OCEAN_SUCCESS;
}

OceanError OceanProductGetStats(OceanProduct prod, int stage, OceanStats *stats)
{
  OceanCheck(prod && stats, OCEAN_ERR_ARG, "OceanProductGetStats: NULL argument");
  OceanCheck(stage >= 0 && stage < prod->nstages, OCEAN_ERR_ARG,
             "OceanProductGetStats: stage %d of a %s plan with %d stage(s)", stage, OceanProductTypeName(prod->type),
             prod->nstages);
  OceanCall(OceanProductSync(prod));
  *stats = prod->stage[stage].stats;
  return OCEAN_SUCCESS;
}

OceanError OceanProductGetRowInfo(OceanProduct prod, int stage, const OceanRowInfo **rows, int64_t *nrows)
{
  OceanCheck(prod && rows && nrows, OCEAN_ERR_ARG, "OceanProductGetRowInfo: NULL argument");
  OceanCheck(stage >= 0 && stage < prod->nstages, OCEAN_ERR_ARG,
             "OceanProductGetRowInfo: stage %d of a %s plan with %d stage(s)", stage, OceanProductTypeName(prod->type),
             prod->nstages);
  OceanCheck(prod->stage[stage].rows && prod->stage[stage].valid, OCEAN_ERR_STATE,
             "OceanProductGetRowInfo: %s: no row records (set OceanOptions.record_rows before the symbolic phase)",
             prod->stage[stage].name);
  *rows  = prod->stage[stage].rows;
  *nrows = prod->stage[stage].nrows;
  return OCEAN_SUCCESS;
}
