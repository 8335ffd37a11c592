/*
  transpose.h - host transposes (A^T for AtB, P^T for PtAP on a host backend), shared by the plans of a context that
  transpose the same structure: PETSc's MPIAIJ route multiplies by the transpose of P's local rows in two products
  of one PtAP (P^T*(A_d*P) and P^T*(A_o*P_oth)), so they share one transpose instead of making two.
*/
#ifndef OCEAN_CORE_TRANSPOSE_H
#define OCEAN_CORE_TRANSPOSE_H

#include "core/base.h"

#define OCEAN_TAG_TRANSPOSE 0x5452414e53504f53ULL /* "TRANSPOS": the structure id of a transpose */

typedef struct OceanHostTranspose {
  uint64_t                   id;        /* the source's structure id (0: unknown, the transpose is not shared) */
  uint64_t                   values_id; /* the source's values taken last (0: unknown, taken every time) */
  int64_t                    nrows, ncols, nnz; /* of the source */
  int64_t                   *rowptr;
  int32_t                   *colidx;
  double                    *values;
  int                        refs; /* plans holding it */
  struct OceanHostTranspose *next; /* the context's list of shared transposes */
} OceanHostTranspose;

/* The transpose of M into *T and its CSR view MT (rows sorted): *T kept when it transposes M's structure, else released
   and replaced by the context's transpose of that structure or a new one; made again when M's values may have changed.
 */
OceanError OceanHostTransposeAcquire(OceanContext ctx, OceanHostTranspose **T, const OceanCSR *M, OceanCSR *MT);
/* Drops the plan's hold on *T (freed with the last one) and sets *T to NULL. */
void OceanHostTransposeRelease(OceanContext ctx, OceanHostTranspose **T);

#endif
