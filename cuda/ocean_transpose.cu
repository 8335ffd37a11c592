/*
  ocean_transpose.cu - M^T on the device, for PtAP's P^T (and any transpose a plan keeps on the device).

  M's entries are sorted by column with a stable radix sort (CUB), the entry index riding along: within a column
  they keep M's order, which is row order, so every row of M^T comes out sorted.  The sort's output is the
  permutation perm (entry t of M^T is entry perm[t] of M), kept by the caller so that new values of the same
  structure need one gather only.
*/
#include <cub/cub.cuh>
#include <cuda_runtime.h>
#include "ocean_cuda.h"
#include "ocean_launch.cuh"

/* row_of[t] = the row of entry t; a warp per row so that long rows do not hold one thread */
__global__ void OceanKernelEntryRows(OceanDevCSR M, int32_t *row_of)
{
  const int64_t warps = (int64_t)gridDim.x * blockDim.x / 32;
  for (int64_t i = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; i < M.nrows; i += warps)
    for (int64_t t = M.rowptr[i] + (threadIdx.x & 31); t < M.rowptr[i + 1]; t += 32) row_of[t] = (int32_t)i;
}

__global__ void OceanKernelIota64(int64_t n, int64_t *x)
{
  OCEAN_GRID_STRIDE(t, n) x[t] = t;
}

__global__ void OceanKernelColumnCounts(const int32_t *colidx, int64_t nnz, unsigned long long *counts)
{
  OCEAN_GRID_STRIDE(t, nnz) atomicAdd(&counts[colidx[t]], 1ULL);
}

/* M^T's columns (M's rows) and values through the permutation */
__global__ void OceanKernelTransposeGather(int64_t nnz, const int64_t *perm, const int32_t *row_of,
                                           const double *values, int32_t *tcolidx, double *tvalues)
{
  OCEAN_GRID_STRIDE(t, nnz)
  {
    const int64_t s = perm[t];
    tcolidx[t]      = row_of[s];
    tvalues[t]      = values[s];
  }
}

__global__ void OceanKernelGatherValues(int64_t n, const int64_t *perm, const double *src, double *dst)
{
  OCEAN_GRID_STRIDE(t, n) dst[t] = src[perm[t]];
}

extern "C" OceanError OceanCudaTranspose(OceanCudaDevice dev, OceanDevCSR M, int64_t nnz, int64_t *d_trowptr,
                                         int32_t *d_tcolidx, double *d_tvalues, int64_t *d_perm)
{
  int32_t   *row_of = NULL, *keys = NULL;
  int64_t   *iota = NULL, *counts = NULL;
  void      *temp  = NULL;
  size_t     bytes = 0;
  int        bits  = 1;
  OceanError err   = OCEAN_SUCCESS;

  if (M.ncols > (int64_t)INT32_MAX || M.nrows > (int64_t)INT32_MAX)
    return OceanSetError(OCEAN_ERR_ARG, "device transpose of a %lld x %lld matrix: both sizes must fit int32 indices",
                         (long long)M.nrows, (long long)M.ncols);
  while (bits < 31 && ((int64_t)1 << bits) < M.ncols) bits++;
  if ((err = OceanCudaAlloc(dev, (size_t)(M.ncols + 1) * sizeof(int64_t), (void **)&counts))) goto done;
  err =
    OceanCudaCheck(cudaMemsetAsync(counts, 0, (size_t)(M.ncols + 1) * sizeof(int64_t), 0), "device transpose: memset");
  if (err) goto done;
  if (nnz) {
    if ((err = OceanCudaAlloc(dev, (size_t)nnz * sizeof(int32_t), (void **)&row_of)) ||
        (err = OceanCudaAlloc(dev, (size_t)nnz * sizeof(int32_t), (void **)&keys)) ||
        (err = OceanCudaAlloc(dev, (size_t)nnz * sizeof(int64_t), (void **)&iota)))
      goto done;
    OceanKernelColumnCounts<<<OceanGrid(nnz, OCEAN_THREADS), OCEAN_THREADS>>>(M.colidx, nnz,
                                                                              (unsigned long long *)counts);
    OceanKernelEntryRows<<<OceanGrid(M.nrows * 32, OCEAN_THREADS), OCEAN_THREADS>>>(M, row_of);
    OceanKernelIota64<<<OceanGrid(nnz, OCEAN_THREADS), OCEAN_THREADS>>>(nnz, iota);
    if ((err = OceanCudaCheck(cudaPeekAtLastError(), "device transpose: launch"))) goto done;
    /* stable: entries of a column stay in row order */
    err = OceanCudaCheck(cub::DeviceRadixSort::SortPairs(NULL, bytes, M.colidx, keys, iota, d_perm, nnz, 0, bits),
                         "device transpose: radix sort");
    if (err) goto done;
    if ((err = OceanCudaAlloc(dev, bytes ? bytes : 1, &temp))) goto done;
    err = OceanCudaCheck(cub::DeviceRadixSort::SortPairs(temp, bytes, M.colidx, keys, iota, d_perm, nnz, 0, bits),
                         "device transpose: radix sort");
    if (err) goto done;
    OceanKernelTransposeGather<<<OceanGrid(nnz, OCEAN_THREADS), OCEAN_THREADS>>>(nnz, d_perm, row_of, M.values,
                                                                                 d_tcolidx, d_tvalues);
    if ((err = OceanCudaCheck(cudaPeekAtLastError(), "device transpose: launch"))) goto done;
  }
  /* the counts add up to nnz by construction: no readback, no wait (coarse levels are latency-bound) */
  err = OceanCudaScanCounts(dev, NULL, M.ncols, counts, d_trowptr, NULL, NULL);
done:
  OceanCudaFree(dev, temp);
  OceanCudaFree(dev, iota);
  OceanCudaFree(dev, keys);
  OceanCudaFree(dev, row_of);
  OceanCudaFree(dev, counts);
  return err;
}

extern "C" OceanError OceanCudaGatherValues(const int64_t *d_perm, int64_t n, const double *d_src, double *d_dst)
{
  if (n == 0) return OCEAN_SUCCESS;
  OceanKernelGatherValues<<<OceanGrid(n, OCEAN_THREADS), OCEAN_THREADS>>>(n, d_perm, d_src, d_dst);
  OCEAN_CUDA_LAUNCHED("gathering values through a transpose's permutation");
  return OCEAN_SUCCESS;
}
