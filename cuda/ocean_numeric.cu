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
};

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
      OceanFlatProducts<OCEAN_KNOWN_SMALL_LANES>(a.A, a.B, a.A.rowptr[i], a.A.rowptr[i + 1], sub, mask, ex[r], eb[r], ea[r], true, [&](int, int32_t c, double v) {
        const int64_t p = OceanFindColumn(cols[r], L, c);
        if (p < 0) *a.missing = 1;
        else atomicAdd(&vals[r][p], v);
      });
      __syncwarp(mask);
      for (int j = sub; j < L; j += OCEAN_KNOWN_SMALL_LANES) a.vals[cb + j] = vals[r][j];
    }
    __syncwarp();
  }
}

/* A warp per row; rows with an empty row of C take part too, so that a stray product is flagged. */
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
    OceanGroupForProducts(a.A, a.B, tb, te, lane, 32, g, true, [&](int32_t c, double v) {
      const int64_t p = OceanFindColumn(cols[w], L, c);
      if (p < 0) *a.missing = 1;
      else atomicAdd(&vals[w][p], v);
    });
    __syncwarp();
    if (lane < L) a.vals[cb + lane] = vals[w][lane];
    __syncwarp();
  }
}

/* A block per row with the row's columns and sums in shared memory (BLOCK and BIG). */
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
    OceanGroupForProducts(a.A, a.B, tb, te, (int)threadIdx.x, (int)blockDim.x, g, true, [&](int32_t c, double v) {
      const int64_t p = OceanFindColumn(cols, L, c);
      if (p < 0) *a.missing = 1;
      else atomicAdd(&vals[p], v);
    });
    __syncthreads();
    for (int64_t j = threadIdx.x; j < L; j += blockDim.x) a.vals[cb + j] = vals[j];
    __syncthreads();
  }
}

/* Rows longer than shared memory holds: C's values zeroed, then atomics at the positions found in global memory. */
__global__ void OceanKernelKnownGlobal(OceanKnownArgs a)
{
  for (int64_t pos = blockIdx.x; pos < a.n; pos += gridDim.x) {
    const int64_t i = a.list[pos], cb = a.rowptr[i], L = a.rowptr[i + 1] - cb;
    const int64_t tb = a.A.rowptr[i], te = a.A.rowptr[i + 1];
    const int     g = OceanLanesPerEntry(a.shapes[i].products, te - tb);
    for (int64_t j = threadIdx.x; j < L; j += blockDim.x) a.vals[cb + j] = 0.0;
    __syncthreads();
    OceanGroupForProducts(a.A, a.B, tb, te, (int)threadIdx.x, (int)blockDim.x, g, true, [&](int32_t c, double v) {
      const int64_t p = OceanFindColumn(a.cols + cb, L, c);
      if (p < 0) *a.missing = 1;
      else atomicAdd(&a.vals[cb + p], v);
    });
    __syncthreads();
  }
}

/* The largest row of C the BIG kernel holds in the dynamic shared memory the device allows it. */
static OceanError OceanKnownBigMax(int64_t smem_optin, int64_t *big_max)
{
  cudaFuncAttributes fa;
  if (cudaFuncGetAttributes(&fa, OceanKernelKnownBlock) != cudaSuccess) {
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

extern "C" OceanError OceanCudaNumericKnown(OceanCudaDevice dev, const OceanCudaKnownPlan *plan, OceanDevCSR A, OceanDevCSR B, const OceanRowShape *d_shapes,
                                            const int64_t *d_rowptr, const int32_t *d_colidx, double *d_values)
{
  static int64_t smem_set = -1; /* the opt-in is per kernel and device: set once, to the most the plan allows */
  int           *d_missing = NULL, missing = 0;
  int64_t        start = 0;
  OceanError     err;
  int            k;

  if (!plan->rows) return OCEAN_SUCCESS;
  if (smem_set != plan->smem_optin) {
    if (cudaFuncSetAttribute(OceanKernelKnownBlock, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)(plan->big_max * (int64_t)OCEAN_KNOWN_ENTRY_BYTES)) != cudaSuccess) {
      (void)cudaGetLastError();
      return OceanSetError(OCEAN_ERR_DEVICE, "known-structure numeric: cannot allow %lld bytes of shared memory", (long long)(plan->big_max * (int64_t)OCEAN_KNOWN_ENTRY_BYTES));
    }
    smem_set = plan->smem_optin;
  }
  if ((err = OceanCudaAlloc(dev, sizeof(int), (void **)&d_missing))) return err;
  if (cudaMemsetAsync(d_missing, 0, sizeof(int), 0) != cudaSuccess) goto device_error;
  for (k = 0; k < OCEAN_CUDA_KNOWN_CLASSES; start += plan->count[k], k++) {
    OceanKnownArgs a;
    const int64_t  n = plan->count[k];
    if (!n) continue;
    a.A       = A;
    a.B       = B;
    a.shapes  = d_shapes;
    a.list    = plan->rows + start;
    a.n       = n;
    a.rowptr  = d_rowptr;
    a.cols    = d_colidx;
    a.vals    = d_values;
    a.missing = d_missing;
    switch (k) {
    case OCEAN_CUDA_KNOWN_SMALL: OceanKernelKnownSmall<<<OceanGrid(n, 32 * OCEAN_KNOWN_WARPS / OCEAN_KNOWN_SMALL_LANES), 32 * OCEAN_KNOWN_WARPS>>>(a); break;
    case OCEAN_CUDA_KNOWN_WARP: OceanKernelKnownWarp<<<OceanGrid(n, OCEAN_KNOWN_WARPS), 32 * OCEAN_KNOWN_WARPS>>>(a); break;
    case OCEAN_CUDA_KNOWN_BLOCK: OceanKernelKnownBlock<<<OceanGrid(n, 1), OCEAN_KNOWN_BLOCK_THREADS, OCEAN_KNOWN_BLOCK_MAX * OCEAN_KNOWN_ENTRY_BYTES>>>(a); break;
    case OCEAN_CUDA_KNOWN_BIG: OceanKernelKnownBlock<<<OceanGrid(n, 1), OCEAN_KNOWN_BIG_THREADS, (size_t)plan->big_max * OCEAN_KNOWN_ENTRY_BYTES>>>(a); break;
    default: OceanKernelKnownGlobal<<<OceanGrid(n, 1), OCEAN_KNOWN_BIG_THREADS>>>(a); break;
    }
    if (cudaGetLastError() != cudaSuccess) goto device_error;
  }
  if ((err = OceanCudaReadback(dev, &missing, d_missing, sizeof(int)))) goto done;
  if (missing) err = OceanSetError(OCEAN_ERR_STATE, "numeric into a known structure: a product falls outside the structure of C (the operands' structure changed)");
  goto done;
device_error:
  err = OceanSetError(OCEAN_ERR_DEVICE, "known-structure numeric: %s", cudaGetErrorString(cudaGetLastError()));
done:
  OceanCudaFree(dev, d_missing);
  return err;
}
