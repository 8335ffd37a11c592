/*
  csr.c - checks and normalization of CSR operands, and the structure ids of derived matrices.
*/
#include "core/base.h"

/* ------------------------------------------------------------------------------------------------ CSR helpers */

void OceanCSRNormalize(const OceanCSR *in, OceanCSR *out)
{
  static const int64_t zero = 0;

  *out = *in;
  if (!out->rowptr && out->nrows == 0) out->rowptr = &zero;
}

/* The host operands of a standalone A*B query (estimates, exact counts): normalized, validated, and A's columns
   matching B's rows; caller names the entry point in the messages. */
OceanError OceanCSRPrepareAB(const char *caller, const OceanCSR *A_in, const OceanCSR *B_in, OceanCSR *A, OceanCSR *B)
{
  OceanCheck(A_in && B_in, OCEAN_ERR_ARG, "%s: NULL operand", caller);
  OceanCSRNormalize(A_in, A);
  OceanCSRNormalize(B_in, B);
  OceanCall(OceanCSRValidate(A, "A"));
  OceanCall(OceanCSRValidate(B, "B"));
  OceanCheck(A->ncols == B->nrows, OCEAN_ERR_ARG,
             "%s: A is %lld x %lld but B is %lld x %lld (A's columns must equal B's rows)", caller, (long long)A->nrows,
             (long long)A->ncols, (long long)B->nrows, (long long)B->ncols);
  return OCEAN_SUCCESS;
}

OceanError OceanCSRValidate(const OceanCSR *M, const char *name)
{
  int64_t i, nnz, bad = INT64_MAX;

  OceanCheck(M, OCEAN_ERR_ARG, "matrix %s is NULL", name);
  OceanCheck(M->nrows >= 0 && M->ncols >= 0, OCEAN_ERR_ARG, "matrix %s has negative sizes %lld x %lld", name,
             (long long)M->nrows, (long long)M->ncols);
  OceanCheck(M->ncols <= (int64_t)INT32_MAX, OCEAN_ERR_ARG, "matrix %s has %lld columns: column indices are int32",
             name, (long long)M->ncols);
  OceanCheck(M->rowptr, OCEAN_ERR_ARG, "matrix %s (%lld x %lld) has no row offsets", name, (long long)M->nrows,
             (long long)M->ncols);
  OceanCheck(M->rowptr[0] == 0, OCEAN_ERR_ARG, "matrix %s: row offsets must start at 0, not %lld", name,
             (long long)M->rowptr[0]);
  for (i = 0; i < M->nrows; i++)
    OceanCheck(M->rowptr[i + 1] >= M->rowptr[i], OCEAN_ERR_ARG, "matrix %s: row offsets decrease at row %lld", name,
               (long long)i);
  nnz = M->rowptr[M->nrows];
  OceanCheck(nnz == 0 || (M->colidx && M->values), OCEAN_ERR_ARG,
             "matrix %s has %lld nonzeros but no column indices or values", name, (long long)nnz);

#pragma omp parallel for schedule(static) reduction(min : bad)
  for (i = 0; i < M->nrows; i++) {
    int64_t t;
    for (t = M->rowptr[i]; t < M->rowptr[i + 1]; t++)
      if (M->colidx[t] < 0 || (int64_t)M->colidx[t] >= M->ncols) {
        if (i < bad) bad = i;
        break;
      }
  }
  if (bad != INT64_MAX) {
    int64_t t;
    for (t = M->rowptr[bad]; t < M->rowptr[bad + 1]; t++)
      if (M->colidx[t] < 0 || (int64_t)M->colidx[t] >= M->ncols) break;
    return OceanSetError(OCEAN_ERR_ARG, "matrix %s (%lld x %lld): row %lld has column index %d outside [0, %lld)", name,
                         (long long)M->nrows, (long long)M->ncols, (long long)bad, (int)M->colidx[t],
                         (long long)M->ncols);
  }
  return OCEAN_SUCCESS;
}

static uint64_t OceanMix64(uint64_t z)
{
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t OceanDeriveStructureId(uint64_t a, uint64_t b, uint64_t tag)
{
  uint64_t id;

  if (a == 0 || b == 0) return 0;
  id = OceanMix64(OceanMix64(a ^ tag) + b);
  return id ? id : 1;
}
