/*
  ref.h - the host reference product of every suite: C = A*B with C's rows sorted and, per entry, the bound
  sum |a_ik b_kj|, the scale of the rounding errors any order of summation can make.  Each entry is summed in A's,
  then B's storage order; rows in parallel (OpenMP), so the result does not depend on the thread count.  Of every
  row of C, or of a sample of its rows (the benchmark's, when a whole reference would not fit the host).
*/
#ifndef OCEAN_TEST_REF_H
#define OCEAN_TEST_REF_H

#include "gen.h"

#define GEN_REF_ROW_CHUNK 16 /* rows per OpenMP chunk: R-MAT's heavy rows are neighbours (the lowest numbers) */

typedef struct {
  GenCSR   C;       /* the reference's rows */
  double  *bound;   /* per entry of C */
  int64_t *rows;    /* NULL: reference row k is C's row k; else C's row rows[k] */
  int64_t  c_nrows; /* C's rows */
} GenRef;

/* C's row of reference row k. */
static inline int64_t GenRefRow(const GenRef *ref, int64_t k)
{
  return ref->rows ? ref->rows[k] : k;
}

/* C's row offsets, the count of C = A*B (C's columns and values stay NULL). */
void GenRefCount(const GenCSR *A, const GenCSR *B, GenCSR *C);
/* ref->C's columns, values and ref->bound, into the offsets of GenRefCount (or of GenRefSample's rows). */
void GenRefFill(const GenCSR *A, const GenCSR *B, GenRef *ref);
/* From C's offsets (GenRefCount's, in ref->C): the reference of C's first head rows and of spread more spread
   evenly over the rest. */
void GenRefSample(const GenCSR *A, const GenCSR *B, int64_t head, int64_t spread, GenRef *ref);
/* The whole reference: C and its bound (freed here when bound is NULL; else the caller frees *bound). */
void GenRefMultiply(const GenCSR *A, const GenCSR *B, GenCSR *C, double **bound);
void GenRefFree(GenRef *ref);

#endif
