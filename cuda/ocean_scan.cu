/*
  ocean_scan.cu - the bookkeeping between the phases (CUB behind thin kernels): exclusive sums of row counts and slots,
  the selection of flagged rows, the rebase of row offsets, the compaction of C's rows into CSR and the segmented
  sort of the rows left unsorted.
*/
#include <cub/cub.cuh>
#include <cuda_runtime.h>
#include "ocean_cuda.h"
#include "ocean_launch.cuh"
#include "ocean_block.cuh"

__global__ void OceanKernelGatherCounts(const int64_t *list, int64_t n, const int64_t *in, int64_t *out)
{
  OCEAN_GRID_STRIDE(j, n) out[j] = in[list ? list[j] : j];
}

__global__ void OceanKernelScatter(const int64_t *list, int64_t n, const int64_t *in, int64_t *out)
{
  OCEAN_GRID_STRIDE(j, n) out[list[j]] = in[j];
}

/* OceanCudaScanCounts in one block (n <= OCEAN_SMALL_ROWS, and in != out when there is a list; slots: the counts are
   the routes' slots, OceanCudaScanSlots without a kernel of its own). */
__global__ void __launch_bounds__(OCEAN_SMALL_THREADS)
  OceanKernelScanSmall(const int64_t *list, int64_t n, const int64_t *in, const OceanRoute *slots, int64_t *out,
                       int64_t *scatter)
{
  const int64_t total = OceanBlockScan(
    n, [&](int64_t j) { return slots ? slots[j].slot : in[list ? list[j] : j]; },
    [&](int64_t j, int64_t x) {
      out[j] = x;
      if (scatter) scatter[list[j]] = x;
    });
  if (threadIdx.x == 0) out[n] = total;
}

extern "C" OceanError OceanCudaScanCounts(OceanCudaDevice dev, const int64_t *d_list, int64_t n, const int64_t *d_in,
                                          int64_t *d_out, int64_t *d_scatter, int64_t *total)
{
  int64_t   *tmp = NULL;
  OceanTemp  temp(dev);
  size_t     bytes = 0;
  OceanError err;

  if (n <= OCEAN_SMALL_ROWS && (!d_list || d_in != d_out)) {
    OceanKernelScanSmall<<<1, OCEAN_SMALL_THREADS>>>(d_list, n, d_in, NULL, d_out, d_scatter);
    OCEAN_CUDA_LAUNCHED("scan (one block)");
    return total ? OceanCudaReadback(dev, total, d_out + n, sizeof(int64_t)) : OCEAN_SUCCESS;
  }

  /* the input gathered into n + 1 entries (the last 0) so that the exclusive sum's last entry is the total */
  if ((err = OceanCudaAlloc(dev, (size_t)(n + 1) * sizeof(int64_t), (void **)&tmp))) return err;
  if ((err = OceanCudaCheck(cudaMemsetAsync(tmp + n, 0, sizeof(int64_t), 0), "scan: memset"))) goto done;
  if (n) OceanKernelGatherCounts<<<OceanGrid(n, OCEAN_THREADS), OCEAN_THREADS>>>(d_list, n, d_in, tmp);
  if ((err = OceanCudaCheck(cub::DeviceScan::ExclusiveSum(NULL, bytes, tmp, d_out, n + 1), "scan")) ||
      (err = temp.get(bytes)) ||
      (err = OceanCudaCheck(cub::DeviceScan::ExclusiveSum(temp.ptr, bytes, tmp, d_out, n + 1), "scan")))
    goto done;
  if (d_scatter && n) OceanKernelScatter<<<OceanGrid(n, OCEAN_THREADS), OCEAN_THREADS>>>(d_list, n, d_out, d_scatter);
  if (total) err = OceanCudaReadback(dev, total, d_out + n, sizeof(int64_t));
done:
  OceanCudaFree(dev, tmp);
  return err;
}

__global__ void OceanKernelRowHasEntries(int64_t m, const int64_t *rowptr, int64_t *flags)
{
  OCEAN_GRID_STRIDE(i, m) flags[i] = rowptr[i + 1] > rowptr[i];
}

__global__ void OceanKernelCompressRows(int64_t m, const int64_t *rowptr, const int64_t *pos, int32_t *rindex,
                                        int32_t *offsets)
{
  OCEAN_GRID_STRIDE(i, m)
  if (rowptr[i + 1] > rowptr[i]) {
    rindex[pos[i]]  = (int32_t)i;
    offsets[pos[i]] = (int32_t)rowptr[i];
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) offsets[pos[m]] = (int32_t)rowptr[m];
}

/* The rows of a CSR with entries, in order (PETSc's compressed rows): rindex[k] = i, offsets[k] = rowptr[i] as int32,
   offsets[kept] = rowptr[m]; OCEAN_ERR_STATE unless exactly `kept` rows have entries.  Returns when done. */
extern "C" OceanError OceanCudaCompressRows(OceanCudaDevice dev, int64_t m, const int64_t *d_rowptr, int64_t kept,
                                            int32_t *d_rindex, int32_t *d_offsets)
{
  int64_t   *flags = NULL, *pos = NULL, total = 0;
  OceanError err;

  if (m == 0) { /* no rows (and perhaps no row offsets): one offset, 0 */
    if (kept)
      return OceanSetError(OCEAN_ERR_STATE, "compressed rows: no rows, %lld with entries expected", (long long)kept);
    OCEAN_CUDA_TRY(cudaMemsetAsync(d_offsets, 0, sizeof(int32_t), 0));
    return OceanCudaCheck(cudaStreamSynchronize(0), "compressed rows");
  }
  if ((err = OceanCudaAlloc(dev, (size_t)m * sizeof(int64_t), (void **)&flags)) ||
      (err = OceanCudaAlloc(dev, (size_t)(m + 1) * sizeof(int64_t), (void **)&pos)))
    goto done;
  OceanKernelRowHasEntries<<<OceanGrid(m, OCEAN_THREADS), OCEAN_THREADS>>>(m, d_rowptr, flags);
  if ((err = OceanCudaCheck(cudaGetLastError(), "rows with entries: launch"))) goto done;
  if ((err = OceanCudaScanCounts(dev, NULL, m, flags, pos, NULL, &total))) goto done; /* waits for the total */
  if (total != kept) {
    err = OceanSetError(OCEAN_ERR_STATE, "compressed rows: %lld of the %lld rows have entries, %lld expected",
                        (long long)total, (long long)m, (long long)kept);
    goto done;
  }
  OceanKernelCompressRows<<<OceanGrid(m, OCEAN_THREADS), OCEAN_THREADS>>>(m, d_rowptr, pos, d_rindex, d_offsets);
  if ((err = OceanCudaCheck(cudaGetLastError(), "compressed rows: launch"))) goto done;
  err = OceanCudaCheck(cudaStreamSynchronize(0), "compressed rows"); /* the caller may use them on another stream */
done:
  OceanCudaFree(dev, flags);
  OceanCudaFree(dev, pos);
  return err;
}

__global__ void OceanKernelSlots(const OceanRoute *routes, int64_t n, int64_t *slots)
{
  OCEAN_GRID_STRIDE(i, n) slots[i] = routes[i].slot;
}

extern "C" OceanError OceanCudaScanSlots(OceanCudaDevice dev, const OceanRoute *d_routes, int64_t n, int64_t *d_out,
                                         int64_t *total)
{
  if (n <= OCEAN_SMALL_ROWS) { /* the one-block scan reads the slots itself: one launch */
    OceanKernelScanSmall<<<1, OCEAN_SMALL_THREADS>>>(NULL, n, NULL, d_routes, d_out, NULL);
    OCEAN_CUDA_LAUNCHED("scan of the slots (one block)");
    return total ? OceanCudaReadback(dev, total, d_out + n, sizeof(int64_t)) : OCEAN_SUCCESS;
  }
  OceanKernelSlots<<<OceanGrid(n, OCEAN_THREADS), OCEAN_THREADS>>>(d_routes, n, d_out);
  OCEAN_CUDA_LAUNCHED("slots");
  /* gathered into scratch first: in place is fine */
  return OceanCudaScanCounts(dev, NULL, n, d_out, d_out, NULL, total);
}

__global__ void OceanKernelListFlags(const int64_t *list, int64_t n, const uint8_t *flags, int64_t *rows,
                                     uint8_t *lflags)
{
  OCEAN_GRID_STRIDE(j, n)
  {
    const int64_t row = list ? list[j] : j;
    rows[j]           = row;
    lflags[j]         = flags[row];
  }
}

extern "C" OceanError OceanCudaSelectFlaggedQueued(OceanCudaDevice dev, const int64_t *d_list, int64_t n,
                                                   const uint8_t *d_flags, int64_t *d_out, int64_t *d_nout)
{
  int64_t   *rows = NULL;
  uint8_t   *lf   = NULL;
  OceanTemp  temp(dev);
  size_t     bytes = 0;
  OceanError err;

  if (n == 0) return OceanCudaCheck(cudaMemsetAsync(d_nout, 0, sizeof(int64_t), 0), "select flagged rows: memset");
  if ((err = OceanCudaAlloc(dev, (size_t)n * sizeof(int64_t), (void **)&rows)) ||
      (err = OceanCudaAlloc(dev, (size_t)n, (void **)&lf)))
    goto done;
  OceanKernelListFlags<<<OceanGrid(n, OCEAN_THREADS), OCEAN_THREADS>>>(d_list, n, d_flags, rows, lf);
  if ((err =
         OceanCudaCheck(cub::DeviceSelect::Flagged(NULL, bytes, rows, lf, d_out, d_nout, n), "select flagged rows")) ||
      (err = temp.get(bytes)) ||
      (err = OceanCudaCheck(cub::DeviceSelect::Flagged(temp.ptr, bytes, rows, lf, d_out, d_nout, n),
                            "select flagged rows")))
    goto done;
done:
  OceanCudaFree(dev, rows); /* the pool hands them out again in stream order */
  OceanCudaFree(dev, lf);
  return err;
}

extern "C" OceanError OceanCudaSelectFlagged(OceanCudaDevice dev, const int64_t *d_list, int64_t n,
                                             const uint8_t *d_flags, int64_t *d_out, int64_t *nout)
{
  int64_t   *dn = NULL;
  OceanError err;

  if (nout) *nout = 0;
  if (n == 0) return OCEAN_SUCCESS;
  if ((err = OceanCudaAlloc(dev, sizeof(int64_t), (void **)&dn))) return err;
  err = OceanCudaSelectFlaggedQueued(dev, d_list, n, d_flags, d_out, dn);
  if (!err && nout) err = OceanCudaReadback(dev, nout, dn, sizeof(int64_t));
  OceanCudaFree(dev, dn);
  return err;
}

__global__ void OceanKernelRebaseOffsets(const int64_t *src, int64_t n, int64_t *dst)
{
  OCEAN_GRID_STRIDE(j, n) dst[j] = src[j] - src[0];
}

extern "C" OceanError OceanCudaRebaseOffsets(const int64_t *d_src, int64_t n, int64_t *d_dst)
{
  if (n == 0) return OCEAN_SUCCESS;
  OceanKernelRebaseOffsets<<<OceanGrid(n, OCEAN_THREADS), OCEAN_THREADS>>>(d_src, n, d_dst);
  OCEAN_CUDA_LAUNCHED("rebasing row offsets");
  return OCEAN_SUCCESS;
}

/* LANES threads per row copy its entries (short rows of C: several rows per warp); cols or vals NULL: not copied. */
template <int LANES>
__global__ void OceanKernelCompact(int64_t nrows, const int64_t *rowptr, const uint8_t *flags, const int64_t *offsets,
                                   const int32_t *bcols, const double *bvals, const int64_t *foffsets,
                                   const int32_t *fcols, const double *fvals, int32_t *cols, double *vals)
{
  const int sub = threadIdx.x & (LANES - 1);
  OCEAN_GRID_STRIDE(g, nrows * LANES)
  {
    const int64_t i  = g / LANES;
    const bool    fb = flags && flags[i];
    const int64_t o = fb ? foffsets[i] : offsets[i], n = rowptr[i + 1] - rowptr[i], d = rowptr[i];
    if (cols) {
      const int32_t *c = (fb ? fcols : bcols) + o;
      for (int64_t t = sub; t < n; t += LANES) cols[d + t] = c[t];
    }
    if (vals) {
      const double *v = (fb ? fvals : bvals) + o;
      for (int64_t t = sub; t < n; t += LANES) vals[d + t] = v[t];
    }
  }
}

extern "C" OceanError OceanCudaCompact(int64_t nrows, int64_t nnz, const int64_t *d_rowptr, const uint8_t *d_flags,
                                       const int64_t *d_offsets, const int32_t *d_bcols, const double *d_bvals,
                                       const int64_t *d_foffsets, const int32_t *d_fcols, const double *d_fvals,
                                       int32_t *d_cols, double *d_vals)
{
  /* lanes per row by the rows' mean length: short rows leave fewer lanes idle */
  const auto launch = [&](auto kernel, int lanes) {
    kernel<<<OceanGrid(nrows * lanes, OCEAN_THREADS), OCEAN_THREADS>>>(
      nrows, d_rowptr, d_flags, d_offsets, d_bcols, d_bvals, d_foffsets, d_fcols, d_fvals, d_cols, d_vals);
  };
  if (nrows == 0) return OCEAN_SUCCESS;
  if (nnz <= 16 * nrows) launch(OceanKernelCompact<8>, 8);
  else if (nnz <= 32 * nrows) launch(OceanKernelCompact<16>, 16);
  else launch(OceanKernelCompact<32>, 32);
  OCEAN_CUDA_LAUNCHED("compaction");
  return OCEAN_SUCCESS;
}

/* Flags the rows whose columns are not strictly increasing (a warp per row). */
__global__ void OceanKernelUnsortedRows(int64_t nrows, const int64_t *rowptr, const int32_t *cols, uint8_t *flags)
{
  const int lane = threadIdx.x & 31;
  for (int64_t i = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5; i < nrows;
       i += ((int64_t)gridDim.x * blockDim.x) >> 5) {
    const int64_t b = rowptr[i], e = rowptr[i + 1];
    int           bad = 0;
    for (int64_t t = b + 1 + lane; t < e; t += 32) bad |= cols[t - 1] >= cols[t];
    bad = __any_sync(0xffffffffu, bad);
    if (lane == 0) flags[i] = (uint8_t)bad;
  }
}

__global__ void OceanKernelSegments(const int64_t *list, int64_t n, const int64_t *rowptr, int64_t *begin, int64_t *end)
{
  OCEAN_GRID_STRIDE(k, n)
  {
    begin[k] = rowptr[list[k]];
    end[k]   = rowptr[list[k] + 1];
  }
}

/* C's rows in column order, in place: the accumulators already write most rows sorted (ESC, dense bitmap scan,
   shared hash sorted in place), so only the rows found unsorted (global-hash LONG rows) are copied out and sorted
   back by a segmented sort over that list of segments; nothing is copied when every row is sorted. */
extern "C" OceanError OceanCudaSortRows(OceanCudaDevice dev, int64_t nrows, int64_t nnz, const int64_t *d_rowptr,
                                        int32_t *d_cols, double *d_vals)
{
  OceanTemp  temp(dev);
  size_t     bytes   = 0;
  uint8_t   *flags   = NULL;
  int32_t   *cols_in = NULL;
  double    *vals_in = NULL;
  int64_t   *list = NULL, *begin = NULL, *end = NULL, nsort = 0;
  OceanError err = OCEAN_SUCCESS;

  if (nnz == 0 || nrows == 0) return OCEAN_SUCCESS;
  if ((err = OceanCudaAlloc(dev, (size_t)nrows, (void **)&flags)) ||
      (err = OceanCudaAlloc(dev, (size_t)nrows * sizeof(int64_t), (void **)&list)))
    goto done;
  OceanKernelUnsortedRows<<<OceanGrid(nrows * 32, OCEAN_THREADS), OCEAN_THREADS>>>(nrows, d_rowptr, d_cols, flags);
  if ((err = OceanCudaCheck(cudaPeekAtLastError(), "row sort: launch"))) goto done;
  if ((err = OceanCudaSelectFlagged(dev, NULL, nrows, flags, list, &nsort))) goto done;
  if (nsort == 0) goto done;
  if ((err = OceanCudaAlloc(dev, (size_t)nsort * sizeof(int64_t), (void **)&begin)) ||
      (err = OceanCudaAlloc(dev, (size_t)nsort * sizeof(int64_t), (void **)&end)) ||
      (err = OceanCudaAlloc(dev, (size_t)nnz * sizeof(int32_t), (void **)&cols_in)) ||
      (err = OceanCudaAlloc(dev, (size_t)nnz * sizeof(double), (void **)&vals_in)))
    goto done;
  err = OceanCudaCheck(cudaMemcpyAsync(cols_in, d_cols, (size_t)nnz * sizeof(int32_t), cudaMemcpyDeviceToDevice, 0),
                       "row sort: copy");
  if (!err)
    err = OceanCudaCheck(cudaMemcpyAsync(vals_in, d_vals, (size_t)nnz * sizeof(double), cudaMemcpyDeviceToDevice, 0),
                         "row sort: copy");
  if (err) goto done;
  OceanKernelSegments<<<OceanGrid(nsort, OCEAN_THREADS), OCEAN_THREADS>>>(list, nsort, d_rowptr, begin, end);
  /* segments need not be contiguous; entries outside them are left as they are */
  err = OceanCudaCheck(
    cub::DeviceSegmentedSort::SortPairs(NULL, bytes, cols_in, d_cols, vals_in, d_vals, nnz, nsort, begin, end),
    "row sort: segmented sort");
  if (!err) err = temp.get(bytes);
  if (!err)
    err = OceanCudaCheck(
      cub::DeviceSegmentedSort::SortPairs(temp.ptr, bytes, cols_in, d_cols, vals_in, d_vals, nnz, nsort, begin, end),
      "row sort: segmented sort");
done:
  OceanCudaFree(dev, flags);
  OceanCudaFree(dev, list);
  OceanCudaFree(dev, begin);
  OceanCudaFree(dev, end);
  OceanCudaFree(dev, cols_in);
  OceanCudaFree(dev, vals_in);
  return err;
}
