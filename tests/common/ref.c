/* ref.c - the host reference product (ref.h). */
#include "ref.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Row i of C's structure: appends the columns not marked yet (unsorted) to cols; returns how many. */
static int64_t RowStructure(const GenCSR *A, const GenCSR *B, int64_t i, int32_t *mark, int32_t *cols)
{
  int64_t n = 0;
  for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
    int32_t k = A->colidx[p];
    for (int64_t q = B->rowptr[k]; q < B->rowptr[k + 1]; q++) {
      int32_t j = B->colidx[q];
      if (mark[j] != (int32_t)i) {
        mark[j] = (int32_t)i;
        if (cols) cols[n] = j;
        n++;
      }
    }
  }
  return n;
}

/* Per-thread marker arrays, stamped with the row number, make each row's pass proportional to its products. */
static int32_t *NewMarker(int64_t n)
{
  int32_t *mark = (int32_t *)GenMalloc((size_t)n * sizeof(int32_t));
  for (int64_t j = 0; j < n; j++) mark[j] = -1;
  return mark;
}

void GenRefCount(const GenCSR *A, const GenCSR *B, GenCSR *C)
{
  memset(C, 0, sizeof(*C));
  C->nrows  = A->nrows;
  C->ncols  = B->ncols;
  C->rowptr = (int64_t *)GenMalloc((size_t)(C->nrows + 1) * sizeof(int64_t));
#pragma omp parallel
  {
    int32_t *mark = NewMarker(B->ncols);
#pragma omp for schedule(dynamic, GEN_REF_ROW_CHUNK)
    for (int64_t i = 0; i < A->nrows; i++) C->rowptr[i] = RowStructure(A, B, i, mark, NULL);
    free(mark);
  }
  GenCountsToOffsets(C->rowptr, C->nrows);
}

static void RowValues(const GenCSR *A, const GenCSR *B, int64_t k, double *acc, double *abs_acc, GenRef *ref)
{
  const int64_t i = GenRefRow(ref, k);
  for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
    int32_t l = A->colidx[p];
    double  a = A->values[p];
    for (int64_t q = B->rowptr[l]; q < B->rowptr[l + 1]; q++) {
      acc[B->colidx[q]] += a * B->values[q];
      abs_acc[B->colidx[q]] += fabs(a * B->values[q]);
    }
  }
  for (int64_t p = ref->C.rowptr[k]; p < ref->C.rowptr[k + 1]; p++) { /* gather and clear what the row touched */
    int32_t j        = ref->C.colidx[p];
    ref->C.values[p] = acc[j];
    ref->bound[p]    = abs_acc[j];
    acc[j] = abs_acc[j] = 0;
  }
}

void GenRefFill(const GenCSR *A, const GenCSR *B, GenRef *ref)
{
  GenCSR *C  = &ref->C;
  C->colidx  = (int32_t *)GenMalloc((size_t)GenNnz(C) * sizeof(int32_t));
  C->values  = (double *)GenMalloc((size_t)GenNnz(C) * sizeof(double));
  ref->bound = (double *)GenMalloc((size_t)GenNnz(C) * sizeof(double));
#pragma omp parallel
  {
    int32_t *mark    = NewMarker(B->ncols);
    double  *acc     = (double *)GenCalloc((size_t)B->ncols * sizeof(double));
    double  *abs_acc = (double *)GenCalloc((size_t)B->ncols * sizeof(double));
#pragma omp for schedule(dynamic, GEN_REF_ROW_CHUNK)
    for (int64_t k = 0; k < C->nrows; k++) {
      int32_t *cols = C->colidx + C->rowptr[k];
      GenSortUnique(cols, RowStructure(A, B, GenRefRow(ref, k), mark, cols));
      RowValues(A, B, k, acc, abs_acc, ref);
    }
    free(mark);
    free(acc);
    free(abs_acc);
  }
}

void GenRefSample(const GenCSR *A, const GenCSR *B, int64_t head, int64_t spread, GenRef *ref)
{
  const int64_t n = ref->C.nrows, ns = n < head + spread ? n : head + spread;
  int64_t      *full = ref->C.rowptr, *rowptr = (int64_t *)GenMalloc((size_t)(ns + 1) * sizeof(int64_t));

  ref->rows = (int64_t *)GenMalloc((size_t)ns * sizeof(int64_t));
  rowptr[0] = 0;
  for (int64_t k = 0; k < ns; k++) {
    ref->rows[k]  = k < head || ns == n ? k : head + (k - head) * (n - head) / (ns - head);
    rowptr[k + 1] = rowptr[k] + full[ref->rows[k] + 1] - full[ref->rows[k]];
  }
  free(full);
  ref->C.rowptr = rowptr;
  ref->C.nrows  = ns;
  GenRefFill(A, B, ref);
}

void GenRefMultiply(const GenCSR *A, const GenCSR *B, GenCSR *C, double **bound)
{
  GenRef r;
  memset(&r, 0, sizeof(r));
  GenRefCount(A, B, &r.C);
  GenRefFill(A, B, &r);
  *C = r.C;
  if (bound) *bound = r.bound;
  else free(r.bound);
}

void GenRefFree(GenRef *ref)
{
  GenFree(&ref->C);
  free(ref->bound);
  free(ref->rows);
  memset(ref, 0, sizeof(*ref));
}
