/*
  ocean_numeric.cu - numeric-only products into a known structure of C (sorted rows from an earlier symbolic phase):
  no analysis, no routes, no sort.  Every product's value is added at its column's position in C's row, found by
  binary search in the row's columns held in shared memory; rows are grouped once by the length of C's row:
    SMALL   L <= 32, at most 64 products: 8 lanes per row, 32 rows per block
    WARP    L <= 32            a warp per row, 8 rows per block
    BLOCK   L <= 1024          a block of 256 threads per row, 12 KB of shared memory
    BIG     L <= the most the device's shared memory holds (12 bytes per entry), 1024 threads
    GLOBAL  longer rows        1024 threads; search in C's columns in global memory, atomics on C's values
  A product whose column is not in C's row (the operands' structure is not the symbolic phase's) raises a flag the
  launcher returns as an error; C is then wrong and the caller must redo the symbolic phase.
  Summation order: atomics, so the last bits depend on the schedule (the tests allow 1e-12 |A||B|).

  The product map (OceanCudaProductMap): the same kernels, run twice over the products without values, count each
  entry's products and then list them (their entries of A and B) grouped by entry of C.  A numeric call with the map
  is then a gather and a segmented sum: no search, no atomics, a fixed summation order (the map's, so repeated calls
  give the same bits), reads streamed.  It costs 8 bytes per product, so the caller decides whether to keep one.
*/
#include <cub/cub.cuh>
#include <cuda_runtime.h>
#include "ocean_cuda.h"
#include "ocean_launch.cuh"
#include "ocean_rows.cuh"

#define OCEAN_KNOWN_WARPS 8
#define OCEAN_KNOWN_WARP_MAX 32
#define OCEAN_KNOWN_SMALL_LANES 8
#define OCEAN_KNOWN_SMALL_PRODUCTS 64
#define OCEAN_KNOWN_BLOCK_MAX 1024
#define OCEAN_KNOWN_BLOCK_THREADS 256
#define OCEAN_KNOWN_BIG_THREADS 1024
#define OCEAN_KNOWN_ENTRY_BYTES (sizeof(double) + sizeof(int32_t))

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

/* Product (t, u) of value v found at position p of row i's entries in C (cb: the row's first entry; sums: its sums). */
template <int M>
__device__ __forceinline__ void OceanKnownTake(const OceanKnownArgs &a, int64_t cb, int64_t p, double v, int64_t t, int64_t u, double *sums)
{
  if (p < 0) *a.missing = 1;
  else if (M == OCEAN_KNOWN_VALUES) atomicAdd(&sums[p], v);
  else if (M == OCEAN_KNOWN_COUNT) atomicAdd(&a.cursor[cb + p], 1);
  else {
    const int64_t k = (a.eptr32 ? (int64_t)a.eptr32[cb + p] : a.eptr[cb + p]) + atomicAdd(&a.cursor[cb + p], 1);
    a.aidx[k]       = (int32_t)t;
    a.bidx[k]       = (int32_t)u;
  }
}

__global__ void OceanKernelKnownClass(int64_t nrows, const int64_t *rowptr, const OceanRowShape *shapes, int64_t big_max, uint8_t *keys)
{
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < nrows; i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t L = rowptr[i + 1] - rowptr[i];
    keys[i] = L <= OCEAN_KNOWN_WARP_MAX ? (shapes[i].products <= OCEAN_KNOWN_SMALL_PRODUCTS ? OCEAN_CUDA_KNOWN_SMALL : OCEAN_CUDA_KNOWN_WARP)
            : L <= OCEAN_KNOWN_BLOCK_MAX ? OCEAN_CUDA_KNOWN_BLOCK
            : L <= big_max               ? OCEAN_CUDA_KNOWN_BIG
                                         : OCEAN_CUDA_KNOWN_GLOBAL;
  }
}

/* SMALL: OCEAN_KNOWN_SMALL_LANES lanes per row, several rows per warp (short rows are latency-bound: more rows in
   flight), products spread flat over the row's lanes (at most OCEAN_KNOWN_SMALL_PRODUCTS of them). */
template <int M>
__global__ void __launch_bounds__(32 * OCEAN_KNOWN_WARPS) OceanKernelKnownSmall(OceanKnownArgs a)
{
  const int          per_block = 32 * OCEAN_KNOWN_WARPS / OCEAN_KNOWN_SMALL_LANES;
  __shared__ int32_t cols[per_block][OCEAN_KNOWN_WARP_MAX];
  __shared__ double  vals[per_block][OCEAN_KNOWN_WARP_MAX];
  __shared__ int     ex[per_block][OCEAN_KNOWN_SMALL_LANES];
  __shared__ int64_t eb[per_block][OCEAN_KNOWN_SMALL_LANES];
  __shared__ double  ea[per_block][OCEAN_KNOWN_SMALL_LANES];
  const int          sub = threadIdx.x % OCEAN_KNOWN_SMALL_LANES, r = threadIdx.x / OCEAN_KNOWN_SMALL_LANES;
  const unsigned     mask = ((1u << OCEAN_KNOWN_SMALL_LANES) - 1u) << (threadIdx.x & 31 & ~(OCEAN_KNOWN_SMALL_LANES - 1));

  for (int64_t base = (int64_t)blockIdx.x * per_block; base < a.n; base += (int64_t)gridDim.x * per_block) {
    const int64_t pos = base + r;
    if (pos < a.n) {
      const int64_t i = a.list[pos], cb = a.rowptr[i];
      const int     L = (int)(a.rowptr[i + 1] - cb);
      for (int j = sub; j < OCEAN_KNOWN_WARP_MAX; j += OCEAN_KNOWN_SMALL_LANES) {
        cols[r][j] = j < L ? a.cols[cb + j] : INT32_MAX;
        vals[r][j] = 0.0;
      }
      __syncwarp(mask);
      OceanFlatProductsAt<OCEAN_KNOWN_SMALL_LANES>(a.A, a.B, a.A.rowptr[i], a.A.rowptr[i + 1], sub, mask, ex[r], eb[r], ea[r], M == OCEAN_KNOWN_VALUES,
                                                   [&](int, int32_t c, double v, int64_t t, int64_t u) { OceanKnownTake<M>(a, cb, OceanFindColumn(cols[r], L, c), v, t, u, vals[r]); });
      __syncwarp(mask);
      if (M == OCEAN_KNOWN_VALUES)
        for (int j = sub; j < L; j += OCEAN_KNOWN_SMALL_LANES) a.vals[cb + j] = vals[r][j];
    }
    __syncwarp();
  }
}

/* A warp per row; rows with an empty row of C take part too, so that a stray product is flagged. */
template <int M>
__global__ void __launch_bounds__(32 * OCEAN_KNOWN_WARPS) OceanKernelKnownWarp(OceanKnownArgs a)
{
  __shared__ int32_t cols[OCEAN_KNOWN_WARPS][OCEAN_KNOWN_WARP_MAX];
  __shared__ double  vals[OCEAN_KNOWN_WARPS][OCEAN_KNOWN_WARP_MAX];
  const int          lane = threadIdx.x & 31, w = threadIdx.x >> 5;

  for (int64_t pos = (int64_t)blockIdx.x * OCEAN_KNOWN_WARPS + w; pos < a.n; pos += (int64_t)gridDim.x * OCEAN_KNOWN_WARPS) {
    const int64_t i = a.list[pos], cb = a.rowptr[i];
    const int     L = (int)(a.rowptr[i + 1] - cb);
    const int64_t tb = a.A.rowptr[i], te = a.A.rowptr[i + 1];
    const int     g  = OceanLanesPerEntry(a.shapes[i].products, te - tb);
    cols[w][lane]    = lane < L ? a.cols[cb + lane] : INT32_MAX;
    vals[w][lane]    = 0.0;
    __syncwarp();
    OceanGroupForProductsAt(a.A, a.B, tb, te, lane, 32, g, M == OCEAN_KNOWN_VALUES,
                            [&](int32_t c, double v, int64_t t, int64_t u) { OceanKnownTake<M>(a, cb, OceanFindColumn(cols[w], L, c), v, t, u, vals[w]); });
    __syncwarp();
    if (M == OCEAN_KNOWN_VALUES && lane < L) a.vals[cb + lane] = vals[w][lane];
    __syncwarp();
  }
}

/* A block per row with the row's columns and sums in shared memory (BLOCK and BIG). */
template <int M>
__global__ void OceanKernelKnownBlock(OceanKnownArgs a)
{
  extern __shared__ double ocean_known_smem[];

  for (int64_t pos = blockIdx.x; pos < a.n; pos += gridDim.x) {
    const int64_t i = a.list[pos], cb = a.rowptr[i], L = a.rowptr[i + 1] - cb;
    const int64_t tb = a.A.rowptr[i], te = a.A.rowptr[i + 1];
    const int     g    = OceanLanesPerEntry(a.shapes[i].products, te - tb);
    double       *vals = ocean_known_smem;
    int32_t      *cols = (int32_t *)(vals + L);
    for (int64_t j = threadIdx.x; j < L; j += blockDim.x) {
      cols[j] = a.cols[cb + j];
      vals[j] = 0.0;
    }
    __syncthreads();
    OceanGroupForProductsAt(a.A, a.B, tb, te, (int)threadIdx.x, (int)blockDim.x, g, M == OCEAN_KNOWN_VALUES,
                            [&](int32_t c, double v, int64_t t, int64_t u) { OceanKnownTake<M>(a, cb, OceanFindColumn(cols, L, c), v, t, u, vals); });
    __syncthreads();
    if (M == OCEAN_KNOWN_VALUES)
      for (int64_t j = threadIdx.x; j < L; j += blockDim.x) a.vals[cb + j] = vals[j];
    __syncthreads();
  }
}

/* Rows longer than shared memory holds: C's values zeroed, then atomics at the positions found in global memory. */
template <int M>
__global__ void OceanKernelKnownGlobal(OceanKnownArgs a)
{
  for (int64_t pos = blockIdx.x; pos < a.n; pos += gridDim.x) {
    const int64_t i = a.list[pos], cb = a.rowptr[i], L = a.rowptr[i + 1] - cb;
    const int64_t tb = a.A.rowptr[i], te = a.A.rowptr[i + 1];
    const int     g = OceanLanesPerEntry(a.shapes[i].products, te - tb);
    if (M == OCEAN_KNOWN_VALUES)
      for (int64_t j = threadIdx.x; j < L; j += blockDim.x) a.vals[cb + j] = 0.0;
    __syncthreads();
    OceanGroupForProductsAt(a.A, a.B, tb, te, (int)threadIdx.x, (int)blockDim.x, g, M == OCEAN_KNOWN_VALUES,
                            [&](int32_t c, double v, int64_t t, int64_t u) { OceanKnownTake<M>(a, cb, OceanFindColumn(a.cols + cb, L, c), v, t, u, a.vals + cb); });
    __syncthreads();
  }
}

/* The largest row of C the BIG kernel holds in the dynamic shared memory the device allows it. */
static OceanError OceanKnownBigMax(int64_t smem_optin, int64_t *big_max)
{
  cudaFuncAttributes fa;
  if (cudaFuncGetAttributes(&fa, OceanKernelKnownBlock<OCEAN_KNOWN_VALUES>) != cudaSuccess) {
    (void)cudaGetLastError();
    return OceanSetError(OCEAN_ERR_DEVICE, "known-structure numeric: cannot read the kernel's attributes");
  }
  *big_max = (smem_optin - (int64_t)fa.sharedSizeBytes) / (int64_t)OCEAN_KNOWN_ENTRY_BYTES;
  if (*big_max < OCEAN_KNOWN_BLOCK_MAX) *big_max = OCEAN_KNOWN_BLOCK_MAX;
  return OCEAN_SUCCESS;
}

extern "C" OceanError OceanCudaKnownPlanCreate(OceanCudaDevice dev, int64_t smem_optin, int64_t nrows, const int64_t *d_rowptr, const OceanRowShape *d_shapes, OceanCudaKnownPlan *plan)
{
  uint8_t   *keys = NULL;
  OceanError err;

  memset(plan, 0, sizeof(*plan));
  if ((err = OceanKnownBigMax(smem_optin, &plan->big_max))) return err;
  plan->smem_optin = smem_optin;
  if (nrows == 0) return OCEAN_SUCCESS;
  if ((err = OceanCudaAlloc(dev, (size_t)nrows, (void **)&keys))) return err;
  OceanKernelKnownClass<<<OceanGrid(nrows, 256), 256>>>(nrows, d_rowptr, d_shapes, plan->big_max, keys);
  err = cudaGetLastError() == cudaSuccess ? OceanCudaGroupByKey(dev, keys, NULL, nrows, OCEAN_CUDA_KNOWN_CLASSES, &plan->rows, plan->count)
                                          : OceanSetError(OCEAN_ERR_DEVICE, "known-structure numeric: class kernel launch failed");
  OceanCudaFree(dev, keys);
  return err;
}

extern "C" void OceanCudaKnownPlanDestroy(OceanCudaDevice dev, OceanCudaKnownPlan *plan)
{
  OceanCudaFree(dev, plan->rows);
  memset(plan, 0, sizeof(*plan));
}

/* Every product of the plan's rows through the kernels of mode M (a's A, B, shapes, rowptr, cols and the mode's
   arrays set by the caller); OCEAN_ERR_STATE when a product's column is not in its row of C. */
template <int M>
static OceanError OceanKnownRun(OceanCudaDevice dev, const OceanCudaKnownPlan *plan, OceanKnownArgs a)
{
  static int64_t  smem_set = -1; /* the opt-in is per kernel and device: set once, to the most the plan allows */
  OceanDeviceFlag missing(dev);
  int             raised = 0;
  int64_t         start  = 0;
  OceanError      err;
  int             k;

  if (!plan->rows) return OCEAN_SUCCESS;
  if (smem_set != plan->smem_optin) {
    if (cudaFuncSetAttribute(OceanKernelKnownBlock<M>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)(plan->big_max * (int64_t)OCEAN_KNOWN_ENTRY_BYTES)) != cudaSuccess) {
      (void)cudaGetLastError();
      return OceanSetError(OCEAN_ERR_DEVICE, "known-structure numeric: cannot allow %lld bytes of shared memory", (long long)(plan->big_max * (int64_t)OCEAN_KNOWN_ENTRY_BYTES));
    }
    smem_set = plan->smem_optin;
  }
  if ((err = missing.init("known-structure numeric"))) return err;
  a.missing = missing.d;
  for (k = 0; k < OCEAN_CUDA_KNOWN_CLASSES; start += plan->count[k], k++) {
    const int64_t n = plan->count[k];
    if (!n) continue;
    a.list = plan->rows + start;
    a.n    = n;
    switch (k) {
    case OCEAN_CUDA_KNOWN_SMALL: OceanKernelKnownSmall<M><<<OceanGrid(n, 32 * OCEAN_KNOWN_WARPS / OCEAN_KNOWN_SMALL_LANES), 32 * OCEAN_KNOWN_WARPS>>>(a); break;
    case OCEAN_CUDA_KNOWN_WARP: OceanKernelKnownWarp<M><<<OceanGrid(n, OCEAN_KNOWN_WARPS), 32 * OCEAN_KNOWN_WARPS>>>(a); break;
    case OCEAN_CUDA_KNOWN_BLOCK: OceanKernelKnownBlock<M><<<OceanGrid(n, 1), OCEAN_KNOWN_BLOCK_THREADS, OCEAN_KNOWN_BLOCK_MAX * OCEAN_KNOWN_ENTRY_BYTES>>>(a); break;
    case OCEAN_CUDA_KNOWN_BIG: OceanKernelKnownBlock<M><<<OceanGrid(n, 1), OCEAN_KNOWN_BIG_THREADS, (size_t)plan->big_max * OCEAN_KNOWN_ENTRY_BYTES>>>(a); break;
    default: OceanKernelKnownGlobal<M><<<OceanGrid(n, 1), OCEAN_KNOWN_BIG_THREADS>>>(a); break;
    }
    const cudaError_t launch = cudaGetLastError();
    if (launch != cudaSuccess) return OceanSetError(OCEAN_ERR_DEVICE, "known-structure numeric: class %d, %lld rows: %s", k, (long long)n, cudaGetErrorString(launch));
  }
  if ((err = missing.read(&raised))) return err;
  if (raised) return OceanSetError(OCEAN_ERR_STATE, "numeric into a known structure: a product falls outside the structure of C (the operands' structure changed)");
  return OCEAN_SUCCESS;
}

static OceanKnownArgs OceanKnownArgsMake(OceanDevCSR A, OceanDevCSR B, const OceanRowShape *d_shapes, const int64_t *d_rowptr, const int32_t *d_colidx)
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

extern "C" OceanError OceanCudaNumericKnown(OceanCudaDevice dev, const OceanCudaKnownPlan *plan, OceanDevCSR A, OceanDevCSR B, const OceanRowShape *d_shapes,
                                            const int64_t *d_rowptr, const int32_t *d_colidx, double *d_values)
{
  OceanKnownArgs a = OceanKnownArgsMake(A, B, d_shapes, d_rowptr, d_colidx);
  a.vals           = d_values;
  return OceanKnownRun<OCEAN_KNOWN_VALUES>(dev, plan, a);
}

/* ------------------------------------------------------------------------------------------------ product map */

#define OCEAN_MAP_WARPS 8
#define OCEAN_MAP_PER_LANE 4 /* consecutive products per lane in the values kernel */

/* The index arrays padded to a multiple of OCEAN_MAP_PER_LANE (the values kernel loads 4 at once); entry offsets
   of 32 bits when every product's index fits. */
static int64_t OceanMapPadded(int64_t products) { return (products + OCEAN_MAP_PER_LANE - 1) / OCEAN_MAP_PER_LANE * OCEAN_MAP_PER_LANE; }

extern "C" int64_t OceanCudaProductMapBytes(int64_t products, int64_t nnz_c)
{
  return 2 * OceanMapPadded(products) * (int64_t)sizeof(int32_t) + (nnz_c + 1) * (int64_t)(products <= INT32_MAX ? sizeof(int32_t) : sizeof(int64_t));
}

/* The exclusive sum of the counts (nnz + 1 of them, the last 0) into eptr (Offset: int32_t when every product's index
   fits, else int64_t); *total = eptr[nnz]. */
template <typename Offset>
static OceanError OceanMapOffsets(OceanCudaDevice dev, const int32_t *counts, int64_t nnz, Offset *eptr, int64_t *total)
{
  OceanTemp temp(dev);
  size_t    bytes = 0;
  Offset    last  = 0;
  OceanError err;

  if (cub::DeviceScan::ExclusiveScan(NULL, bytes, counts, eptr, ::cuda::std::plus<>{}, (Offset)0, nnz + 1) != cudaSuccess)
    return OceanSetError(OCEAN_ERR_DEVICE, "product map: scan: %s", cudaGetErrorString(cudaGetLastError()));
  if ((err = temp.get(bytes))) return err;
  if (cub::DeviceScan::ExclusiveScan(temp.ptr, bytes, counts, eptr, ::cuda::std::plus<>{}, (Offset)0, nnz + 1) != cudaSuccess)
    return OceanSetError(OCEAN_ERR_DEVICE, "product map: scan: %s", cudaGetErrorString(cudaGetLastError()));
  if ((err = OceanCudaReadback(dev, &last, eptr + nnz, sizeof(Offset)))) return err;
  *total = (int64_t)last;
  return OCEAN_SUCCESS;
}

extern "C" OceanError OceanCudaProductMapCreate(OceanCudaDevice dev, const OceanCudaKnownPlan *plan, OceanDevCSR A, OceanDevCSR B, const OceanRowShape *d_shapes, int64_t nnz_c,
                                                const int64_t *d_rowptr, const int32_t *d_colidx, int64_t products, OceanCudaProductMap *map)
{
  OceanKnownArgs a      = OceanKnownArgsMake(A, B, d_shapes, d_rowptr, d_colidx);
  const int64_t  padded = OceanMapPadded(products);
  const int      narrow = products <= INT32_MAX;
  int64_t        listed = 0;
  OceanError     err;

  memset(map, 0, sizeof(*map));
  map->nnz      = nnz_c;
  map->products = products;
  /* about 128 products per warp's entries (4 per lane) */
  map->entries_per_warp = nnz_c && products >= 3 * nnz_c ? 32 : nnz_c && 2 * products >= 3 * nnz_c ? 64 : 128;
  map->bytes            = OceanCudaProductMapBytes(products, nnz_c);
  /* the counts get one more entry (0) so that the exclusive sum ends with the total */
  if ((err = OceanCudaAlloc(dev, (size_t)(nnz_c + 1) * sizeof(int32_t), (void **)&a.cursor))) goto done;
  if (narrow) err = OceanCudaAlloc(dev, (size_t)(nnz_c + 1) * sizeof(int32_t), (void **)&map->eptr32);
  else err = OceanCudaAlloc(dev, (size_t)(nnz_c + 1) * sizeof(int64_t), (void **)&map->eptr);
  if (err) goto done;
  if (cudaMemsetAsync(a.cursor, 0, (size_t)(nnz_c + 1) * sizeof(int32_t), 0) != cudaSuccess) goto device_error;
  if ((err = OceanKnownRun<OCEAN_KNOWN_COUNT>(dev, plan, a))) goto done;
  err = narrow ? OceanMapOffsets(dev, a.cursor, nnz_c, map->eptr32, &listed) : OceanMapOffsets(dev, a.cursor, nnz_c, map->eptr, &listed);
  if (err) goto done;
  if (listed != products) {
    err = OceanSetError(OCEAN_ERR_STATE, "product map: %lld products counted into C's %lld entries, %lld expected", (long long)listed, (long long)nnz_c, (long long)products);
    goto done;
  }
  if ((err = OceanCudaAlloc(dev, (size_t)padded * sizeof(int32_t), (void **)&map->aidx))) goto done;
  if ((err = OceanCudaAlloc(dev, (size_t)padded * sizeof(int32_t), (void **)&map->bidx))) goto done;
  if (cudaMemsetAsync(a.cursor, 0, (size_t)nnz_c * sizeof(int32_t), 0) != cudaSuccess) goto device_error;
  if (padded > products && (cudaMemsetAsync(map->aidx + products, 0, (size_t)(padded - products) * sizeof(int32_t), 0) != cudaSuccess ||
                            cudaMemsetAsync(map->bidx + products, 0, (size_t)(padded - products) * sizeof(int32_t), 0) != cudaSuccess))
    goto device_error;
  a.eptr   = map->eptr;
  a.eptr32 = map->eptr32;
  a.aidx   = map->aidx;
  a.bidx   = map->bidx;
  err      = OceanKnownRun<OCEAN_KNOWN_FILL>(dev, plan, a);
  goto done;
device_error:
  err = OceanSetError(OCEAN_ERR_DEVICE, "product map: %s", cudaGetErrorString(cudaGetLastError()));
done:
  OceanCudaFree(dev, a.cursor);
  if (err) OceanCudaProductMapDestroy(dev, map);
  return err;
}

extern "C" void OceanCudaProductMapDestroy(OceanCudaDevice dev, OceanCudaProductMap *map)
{
  OceanCudaFree(dev, map->eptr);
  OceanCudaFree(dev, map->eptr32);
  OceanCudaFree(dev, map->aidx);
  OceanCudaFree(dev, map->bidx);
  memset(map, 0, sizeof(*map));
}

/*
  C's values from the map.  A warp takes E consecutive entries (32, 64 or 128, so that they hold about 128 products),
  whose products lie consecutively in the map, and walks them 128 at a time, four consecutive products per lane
  (one 16-byte load of each index array, the four gathers issued together).  A lane sums its products entry by
  entry: an entry it holds from start to end is its alone and goes straight into the entry's sum in shared memory;
  its first and last pieces may continue in the lanes around it, so the last pieces are summed across lanes by a
  segmented scan (shuffles, once per 128 products), and each entry's sum is added by the lane where it ends (the
  next 128 continue it).  One writer per entry at a time, no atomics, and a fixed order set by the map and E.
*/
template <int E, typename Offset>
__global__ void __launch_bounds__(32 * OCEAN_MAP_WARPS) OceanKernelMapValues(int64_t nnz, const Offset *eptr, const int32_t *aidx, const int32_t *bidx, const double *avals,
                                                                              const double *bvals, double *cvals)
{
  constexpr int      P = OCEAN_MAP_PER_LANE;
  __shared__ int64_t first_all[OCEAN_MAP_WARPS][E + 1];
  __shared__ double  sums_all[OCEAN_MAP_WARPS][E];
  const int          lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  int64_t           *first = first_all[w];
  double            *sums  = sums_all[w];

  for (int64_t e0 = ((int64_t)blockIdx.x * OCEAN_MAP_WARPS + w) * E; e0 < nnz; e0 += (int64_t)gridDim.x * OCEAN_MAP_WARPS * E) {
    const int ne = (int)(nnz - e0 < E ? nnz - e0 : E);
    for (int j = lane; j <= E; j += 32) first[j] = (int64_t)eptr[e0 + (j < ne ? j : ne)]; /* entries past the last start at the end */
    for (int j = lane; j < E; j += 32) sums[j] = 0.0;
    __syncwarp();
    const int64_t kb = first[0], ke = first[E];
    for (int64_t k0 = kb & ~(int64_t)(P - 1); k0 < ke; k0 += 32 * P) {
      const int64_t ks = k0 + (int64_t)lane * P;
      int           cur = -1, head = -1; /* the entry being summed; the entry of the lane's first piece once it ended */
      double        part = 0.0, head_sum = 0.0;
      if (ks < ke && ks + P > kb) {
        const int4 ai = *(const int4 *)(aidx + ks), bi = *(const int4 *)(bidx + ks); /* the arrays are padded to 4 */
        const int  a4[P] = {ai.x, ai.y, ai.z, ai.w}, b4[P] = {bi.x, bi.y, bi.z, bi.w};
        double     v[P];
#pragma unroll
        for (int p = 0; p < P; p++) v[p] = ks + p >= kb && ks + p < ke ? avals[a4[p]] * bvals[b4[p]] : 0.0;
        const int64_t kf = ks < kb ? kb : ks;
        cur              = 0; /* the last entry starting at or before the lane's first product */
        for (int step = E / 2; step > 0; step >>= 1)
          if (first[cur + step] <= kf) cur += step;
#pragma unroll
        for (int p = 0; p < P; p++) {
          const int64_t k = ks + p;
          if (k < kb || k >= ke) continue;
          if (first[cur + 1] <= k) { /* entry cur ends before k */
            if (head < 0) head = cur, head_sum = part;
            else sums[cur] += part; /* begun and ended in this lane */
            part = 0.0;
            do cur++;
            while (first[cur + 1] <= k);
          }
          part += v[p];
        }
      }
      /* the lanes' last pieces (entry cur): a segmented scan; a segment starts at a lane whose last piece begins in it */
      const int      prev_cur = __shfl_up_sync(OCEAN_FULL_MASK, cur, 1);
      const unsigned starts   = __ballot_sync(OCEAN_FULL_MASK, lane == 0 || head >= 0 || cur < 0 || prev_cur != cur);
      const int      start    = 31 - __clz(starts & (0xffffffffu >> (31 - lane)));
      double         x        = part;
      for (int o = 1; o < 32; o <<= 1) {
        const double up = __shfl_up_sync(OCEAN_FULL_MASK, x, o);
        if (lane - o >= start) x += up;
      }
      /* a lane's first piece ends its entry: with what the lanes before it carried of that entry */
      const double carry = __shfl_up_sync(OCEAN_FULL_MASK, x, 1);
      if (head >= 0) sums[head] += (lane > 0 && prev_cur == head ? carry : 0.0) + head_sum;
      /* the last piece's entry, unless the next lane goes on with it */
      const int next_first = __shfl_down_sync(OCEAN_FULL_MASK, head >= 0 ? head : cur, 1);
      if (cur >= 0 && !(lane < 31 && next_first == cur)) sums[cur] += x;
      __syncwarp();
    }
    for (int j = lane; j < ne; j += 32) cvals[e0 + j] = sums[j];
    __syncwarp();
  }
}

template <typename Offset>
static void OceanMapValuesLaunch(const OceanCudaProductMap *map, const Offset *eptr, const double *d_avals, const double *d_bvals, double *d_cvals)
{
  const int64_t n = map->nnz;
  if (map->entries_per_warp == 128) OceanKernelMapValues<128, Offset><<<OceanGrid((n + 127) / 128, OCEAN_MAP_WARPS), 32 * OCEAN_MAP_WARPS>>>(n, eptr, map->aidx, map->bidx, d_avals, d_bvals, d_cvals);
  else if (map->entries_per_warp == 64) OceanKernelMapValues<64, Offset><<<OceanGrid((n + 63) / 64, OCEAN_MAP_WARPS), 32 * OCEAN_MAP_WARPS>>>(n, eptr, map->aidx, map->bidx, d_avals, d_bvals, d_cvals);
  else OceanKernelMapValues<32, Offset><<<OceanGrid((n + 31) / 32, OCEAN_MAP_WARPS), 32 * OCEAN_MAP_WARPS>>>(n, eptr, map->aidx, map->bidx, d_avals, d_bvals, d_cvals);
}

extern "C" OceanError OceanCudaNumericMap(const OceanCudaProductMap *map, const double *d_avals, const double *d_bvals, double *d_cvals)
{
  if (map->nnz == 0) return OCEAN_SUCCESS;
  if (map->eptr32) OceanMapValuesLaunch(map, map->eptr32, d_avals, d_bvals, d_cvals);
  else OceanMapValuesLaunch(map, map->eptr, d_avals, d_bvals, d_cvals);
  OCEAN_CUDA_LAUNCHED("product map values");
  return OCEAN_SUCCESS;
}
