/*
  ocean_known.cu - numeric-only products into a known structure of C (sorted rows from an earlier symbolic phase):
  no analysis, no routes, no sort.  Every product's value is added at its column's position in C's row, found by
  binary search in the row's columns held in shared memory; rows are grouped once by the length of C's row:
    SMALL   L <= 32, at most 64 products: 8 lanes per row, 32 rows per block
    WARP    L <= 32, at most 65536 products: a warp per row, 8 rows per block
    BLOCK   L <= 1024, at most 65536 products: a block of 256 threads per row, 12 KB of shared memory
    BIG     L <= the most the device's shared memory holds (12 bytes per entry), 1024 threads
    GLOBAL  longer rows        1024 threads; search in C's columns in global memory, atomics on C's values
  A product whose column is not in C's row (the operands' structure is not the symbolic phase's) raises a flag the
  launcher returns as an error; C is then wrong and the caller must redo the symbolic phase.
  Summation order: atomics, so the last bits depend on the schedule (the tests allow 1e-12 |A||B|).
  The same kernels without values count and list the products per entry of C for the product map
  (ocean_productmap.cu, through OceanKnownRun).
*/
#include <cuda_runtime.h>
#include "ocean_cuda.h"
#include "ocean_known.cuh"
#include "ocean_launch.cuh"
#include "ocean_rows.cuh"

#define OCEAN_KNOWN_WARPS         8
#define OCEAN_KNOWN_SMALL_LANES   8
#define OCEAN_KNOWN_BLOCK_THREADS 256
#define OCEAN_KNOWN_BIG_THREADS   1024
#define OCEAN_KNOWN_ENTRY_BYTES   (sizeof(double) + sizeof(int32_t))

/* Product (t, u) of value v found at position p of row i's entries in C (cb: the row's first entry; sums: its sums). */
template <int M>
__device__ __forceinline__ void OceanKnownTake(const OceanKnownArgs &a, int64_t cb, int64_t p, double v, int64_t t,
                                               int64_t u, double *sums)
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

__global__ void OceanKernelKnownClass(int64_t nrows, const int64_t *rowptr, const OceanRowShape *shapes,
                                      int64_t big_max, uint8_t *keys)
{
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < nrows; i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t L = rowptr[i + 1] - rowptr[i];
    const int64_t q = shapes[i].products;
    keys[i]         = L <= OCEAN_KNOWN_WARP_MAX && q <= OCEAN_KNOWN_SMALL_PRODUCTS ? OCEAN_CUDA_KNOWN_SMALL
                    : L <= OCEAN_KNOWN_WARP_MAX && q <= OCEAN_KNOWN_WARP_PRODUCTS  ? OCEAN_CUDA_KNOWN_WARP
                    : L <= OCEAN_KNOWN_BLOCK_MAX && q <= OCEAN_KNOWN_WARP_PRODUCTS ? OCEAN_CUDA_KNOWN_BLOCK
                    : L <= big_max                                                 ? OCEAN_CUDA_KNOWN_BIG
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
  const unsigned mask = ((1u << OCEAN_KNOWN_SMALL_LANES) - 1u) << (threadIdx.x & 31 & ~(OCEAN_KNOWN_SMALL_LANES - 1));

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
      OceanFlatProductsAt<OCEAN_KNOWN_SMALL_LANES>(
        a.A, a.B, a.A.rowptr[i], a.A.rowptr[i + 1], sub, mask, ex[r], eb[r], ea[r], M == OCEAN_KNOWN_VALUES,
        [&](int, int32_t c, double v, int64_t t, int64_t u) {
          OceanKnownTake<M>(a, cb, OceanFindColumn(cols[r], L, c), v, t, u, vals[r]);
        });
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

  for (int64_t pos = (int64_t)blockIdx.x * OCEAN_KNOWN_WARPS + w; pos < a.n;
       pos += (int64_t)gridDim.x * OCEAN_KNOWN_WARPS) {
    const int64_t i = a.list[pos], cb = a.rowptr[i];
    const int     L  = (int)(a.rowptr[i + 1] - cb);
    const int64_t tb = a.A.rowptr[i], te = a.A.rowptr[i + 1];
    const int     g = OceanLanesPerEntry(a.shapes[i].products, te - tb);
    cols[w][lane]   = lane < L ? a.cols[cb + lane] : INT32_MAX;
    vals[w][lane]   = 0.0;
    __syncwarp();
    OceanGroupForProductsAt(a.A, a.B, tb, te, lane, 32, g, M == OCEAN_KNOWN_VALUES,
                            [&](int32_t c, double v, int64_t t, int64_t u) {
                              OceanKnownTake<M>(a, cb, OceanFindColumn(cols[w], L, c), v, t, u, vals[w]);
                            });
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
                            [&](int32_t c, double v, int64_t t, int64_t u) {
                              OceanKnownTake<M>(a, cb, OceanFindColumn(cols, L, c), v, t, u, vals);
                            });
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
                            [&](int32_t c, double v, int64_t t, int64_t u) {
                              OceanKnownTake<M>(a, cb, OceanFindColumn(a.cols + cb, L, c), v, t, u, a.vals + cb);
                            });
    __syncthreads();
  }
}

/* The largest row of C the BIG kernel holds in the dynamic shared memory the device allows it. */
static OceanError OceanKnownBigMax(int64_t smem_optin, int64_t *big_max)
{
  cudaFuncAttributes fa;
  OCEAN_CUDA_TRY(cudaFuncGetAttributes(&fa, OceanKernelKnownBlock<OCEAN_KNOWN_VALUES>));
  *big_max = (smem_optin - (int64_t)fa.sharedSizeBytes) / (int64_t)OCEAN_KNOWN_ENTRY_BYTES;
  if (*big_max < OCEAN_KNOWN_BLOCK_MAX) *big_max = OCEAN_KNOWN_BLOCK_MAX;
  return OCEAN_SUCCESS;
}

extern "C" OceanError OceanCudaKnownPlanCreate(OceanCudaDevice dev, int64_t smem_optin, int64_t nrows,
                                               const int64_t *d_rowptr, const OceanRowShape *d_shapes,
                                               OceanCudaKnownPlan *plan)
{
  uint8_t   *keys = NULL;
  OceanError err;

  memset(plan, 0, sizeof(*plan));
  if ((err = OceanKnownBigMax(smem_optin, &plan->big_max))) return err;
  plan->smem_optin = smem_optin;
  if (nrows == 0) return OCEAN_SUCCESS;
  if ((err = OceanCudaAlloc(dev, (size_t)nrows, (void **)&keys))) return err;
  OceanKernelKnownClass<<<OceanGrid(nrows, 256), 256>>>(nrows, d_rowptr, d_shapes, plan->big_max, keys);
  err = OceanCudaCheck(cudaGetLastError(), "known-structure numeric: class kernel launch");
  if (!err) err = OceanCudaGroupByKey(dev, keys, NULL, nrows, OCEAN_CUDA_KNOWN_CLASSES, &plan->rows, plan->count);
  OceanCudaFree(dev, keys);
  return err;
}

extern "C" void OceanCudaKnownPlanDestroy(OceanCudaDevice dev, OceanCudaKnownPlan *plan)
{
  OceanCudaFree(dev, plan->rows);
  memset(plan, 0, sizeof(*plan));
}

template <int M>
OceanError OceanKnownRun(OceanCudaDevice dev, const OceanCudaKnownPlan *plan, unsigned classes, OceanKnownArgs a,
                         int *d_check)
{
  static OceanSmemOptin optin; /* BIG's opt-in, per device: the most the plan allows */
  OceanDeviceFlag       missing(dev);
  int                   raised = 0;
  int64_t               start = 0, smem = 0;
  OceanError            err;
  int                   k;

  if (!plan->rows) return OCEAN_SUCCESS;
  err = optin.ensure(
    plan->smem_optin,
    [&](int64_t *value) {
      *value = plan->big_max * (int64_t)OCEAN_KNOWN_ENTRY_BYTES;
      return OceanCudaCheck(
        cudaFuncSetAttribute(OceanKernelKnownBlock<M>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)*value),
        "known-structure numeric: opting into the shared memory of the BIG rows");
    },
    &smem);
  if (err) return err;
  if (!d_check && (err = missing.init("known-structure numeric"))) return err;
  a.missing = d_check ? d_check : missing.d;
  for (k = 0; k < OCEAN_CUDA_KNOWN_CLASSES; start += plan->count[k], k++) {
    const int64_t n = plan->count[k];
    if (!n || !(classes >> k & 1u)) continue;
    a.list = plan->rows + start;
    a.n    = n;
    switch (k) {
    case OCEAN_CUDA_KNOWN_SMALL:
      OceanKernelKnownSmall<M>
        <<<OceanGrid(n, 32 * OCEAN_KNOWN_WARPS / OCEAN_KNOWN_SMALL_LANES), 32 * OCEAN_KNOWN_WARPS>>>(a);
      break;
    case OCEAN_CUDA_KNOWN_WARP:
      OceanKernelKnownWarp<M><<<OceanGrid(n, OCEAN_KNOWN_WARPS), 32 * OCEAN_KNOWN_WARPS>>>(a);
      break;
    case OCEAN_CUDA_KNOWN_BLOCK:
      OceanKernelKnownBlock<M>
        <<<OceanGrid(n, 1), OCEAN_KNOWN_BLOCK_THREADS, OCEAN_KNOWN_BLOCK_MAX * OCEAN_KNOWN_ENTRY_BYTES>>>(a);
      break;
    case OCEAN_CUDA_KNOWN_BIG:
      OceanKernelKnownBlock<M>
        <<<OceanGrid(n, 1), OCEAN_KNOWN_BIG_THREADS, (size_t)plan->big_max * OCEAN_KNOWN_ENTRY_BYTES>>>(a);
      break;
    default: OceanKernelKnownGlobal<M><<<OceanGrid(n, 1), OCEAN_KNOWN_BIG_THREADS>>>(a); break;
    }
    const cudaError_t launch = cudaGetLastError();
    if (launch != cudaSuccess)
      return OceanSetError(OCEAN_ERR_DEVICE, "known-structure numeric: class %d, %lld rows: %s", k, (long long)n,
                           cudaGetErrorString(launch));
  }
  if (d_check) return OCEAN_SUCCESS; /* the caller reads it when it waits */
  if ((err = missing.read(&raised))) return err;
  if (raised)
    return OceanSetError(OCEAN_ERR_STATE, "numeric into a known structure: a product falls outside the structure of C "
                                          "(the operands' structure changed)");
  return OCEAN_SUCCESS;
}

/* the product map's passes (ocean_productmap.cu) */
template OceanError OceanKnownRun<OCEAN_KNOWN_COUNT>(OceanCudaDevice, const OceanCudaKnownPlan *, unsigned,
                                                     OceanKnownArgs, int *);
template OceanError OceanKnownRun<OCEAN_KNOWN_FILL>(OceanCudaDevice, const OceanCudaKnownPlan *, unsigned,
                                                    OceanKnownArgs, int *);

extern "C" OceanError OceanCudaNumericKnown(OceanCudaDevice dev, const OceanCudaKnownPlan *plan, OceanDevCSR A,
                                            OceanDevCSR B, const OceanRowShape *d_shapes, const int64_t *d_rowptr,
                                            const int32_t *d_colidx, double *d_values, int *d_check)
{
  OceanKnownArgs a = OceanKnownArgsMake(A, B, d_shapes, d_rowptr, d_colidx);
  a.vals           = d_values;
  return OceanKnownRun<OCEAN_KNOWN_VALUES>(dev, plan, OCEAN_KNOWN_ALL, a, d_check);
}
