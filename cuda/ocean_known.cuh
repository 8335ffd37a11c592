/*
  ocean_known.cuh - what the product map (ocean_productmap.cu) takes from the numeric into a known structure
  (ocean_known.cu): the plan's row classes, the kernels' arguments and the run of a mode's kernels over the plan's
  rows (its count and fill passes make the map).  Included by .cu files only.
*/
#ifndef OCEAN_KNOWN_CUH
#define OCEAN_KNOWN_CUH

#include <string.h>
#include "ocean_cuda.h"

/* The classes' limits (OCEAN_CUDA_KNOWN_*): L entries of C's row, q products */
#define OCEAN_KNOWN_WARP_MAX       32 /* SMALL and WARP: L at most this */
#define OCEAN_KNOWN_SMALL_PRODUCTS 64 /* SMALL: q at most this */
/* BLOCK: L at most this (the product map keeps positions, 16 bits, in rows up to BLOCK's) */
#define OCEAN_KNOWN_BLOCK_MAX OCEAN_CUDA_ROWMAP_MAX
/* rows of more products take a block whatever their length (the product map walks a BLOCK row with a warp) */
#define OCEAN_KNOWN_WARP_PRODUCTS 65536
#define OCEAN_KNOWN_ALL           ((1u << OCEAN_CUDA_KNOWN_CLASSES) - 1u) /* class masks of OceanKnownRun */

struct OceanKnownArgs {
  OceanDevCSR          A, B;
  const OceanRowShape *shapes;
  const int64_t       *list;
  int64_t              n;
  const int64_t       *rowptr; /* C */
  const int32_t       *cols;
  double              *vals;
  int                 *missing;
  int32_t             *cursor; /* map passes: products per entry of C (COUNT), then entries filled so far (FILL) */
  const int64_t       *eptr;   /* FILL: each entry's first product in the map (eptr32 instead when it is set) */
  const int32_t       *eptr32;
  int32_t             *aidx, *bidx; /* FILL: the map */
};

/* What the kernels do with each product: add its value into the row's sums, or count it, or list it in the map. */
enum { OCEAN_KNOWN_VALUES = 0, OCEAN_KNOWN_COUNT, OCEAN_KNOWN_FILL };

static inline OceanKnownArgs OceanKnownArgsMake(OceanDevCSR A, OceanDevCSR B, const OceanRowShape *d_shapes,
                                                const int64_t *d_rowptr, const int32_t *d_colidx)
{
  OceanKnownArgs a;
  memset(&a, 0, sizeof(a));
  a.A      = A;
  a.B      = B;
  a.shapes = d_shapes;
  a.rowptr = d_rowptr;
  a.cols   = d_colidx;
  return a;
}

/* Every product of the plan's rows of the classes in the mask (bit k: class k) through the kernels of mode M (a's A,
   B, shapes, rowptr, cols and the mode's arrays set by the caller); OCEAN_ERR_STATE when a product's column is not in
   its row of C.  Defined in ocean_known.cu for the three modes. */
template <int M>
OceanError OceanKnownRun(OceanCudaDevice dev, const OceanCudaKnownPlan *plan, unsigned classes, OceanKnownArgs a,
                         int *d_check);

#endif
