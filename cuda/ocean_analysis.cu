/*
  ocean_analysis.cu - the analysis phase of the CUDA SpGEMM: each row's shape (products, span, first column, upper
  bound), the CR sample, the statistics reduced on the device (route counts, the estimate's error), the predictions
  and the routing.  Every decision is the CPU's: predictions and routes come from the same functions of
  core/rules.h, and the reductions are exact integer counts or the CPU's terms.
*/
#include <cub/cub.cuh>
#include <cuda_runtime.h>
#include "ocean_cuda.h"
#include "ocean_launch.cuh"

/* ------------------------------------------------------------------------------------------------ row shapes */

/* Long rows (OceanWideRows) get a warp each, lanes over the entries, reduced by shuffles: integer sums and extremes,
   so the results are a thread per row's. */
__device__ static inline void OceanWarpRange(int32_t *lo, int32_t *hi)
{
  for (int o = 16; o; o >>= 1) {
    *lo = min(*lo, __shfl_xor_sync(OCEAN_FULL_MASK, *lo, o));
    *hi = max(*hi, __shfl_xor_sync(OCEAN_FULL_MASK, *hi, o));
  }
}

/* Rows of at most this many entries are walked by one lane in the thread-per-row kernels; a longer row by its warp. */
#define OCEAN_LANE_ROW_MAX 32

/* Calls finish(i, result) for every row i of rowptr[0..n] with walk(result, t0, t1, step) folded over its entries
   [t0, t1) step apart, from State's identity.  LANES 32 (rows averaging a warp's worth of entries): a warp per row,
   reduce(result) combining its lanes' results, lane 0 finishing.  LANES 1: a lane per row, but a row of more than
   OCEAN_LANE_ROW_MAX entries is walked by the whole warp after the short ones: R-MAT's longest rows hold thousands of
   entries, and one thread walking one took most of a kernel's time (rmat_s15_a8_b8's shapes, 358 of its 4,300 us).
   Every thread of the grid calls it (blocks of whole warps). */
template <int LANES, typename State, typename Walk, typename Reduce, typename Finish>
__device__ __forceinline__ void OceanForRowsSkewed(const int64_t *rowptr, int64_t n, Walk walk, Reduce reduce,
                                                   Finish finish)
{
  const int     lane   = threadIdx.x & 31;
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  if constexpr (LANES == 32) {
    for (int64_t g = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; g < n * 32; g += stride) {
      const int64_t i = g / 32;
      State         r;
      walk(r, rowptr[i] + lane, rowptr[i + 1], 32);
      reduce(r);
      if (lane == 0) finish(i, r);
    }
  } else {
    for (int64_t base = (int64_t)blockIdx.x * blockDim.x + threadIdx.x - lane; base < n; base += stride) {
      const int64_t i = base + lane, t0 = i < n ? rowptr[i] : 0, t1 = i < n ? rowptr[i + 1] : 0;
      const bool    alone = t1 - t0 <= OCEAN_LANE_ROW_MAX;
      State         mine;
      if (alone) walk(mine, t0, t1, 1);
      for (unsigned help = __ballot_sync(OCEAN_FULL_MASK, !alone); help; help &= help - 1) {
        const int src = __ffs(help) - 1;
        State     r;
        walk(r, __shfl_sync(OCEAN_FULL_MASK, t0, src) + lane, __shfl_sync(OCEAN_FULL_MASK, t1, src), 32);
        reduce(r);
        if (lane == src) mine = r;
      }
      if (i < n) finish(i, mine);
    }
  }
}

/* A row's columns' extremes (first > last for an empty row) */
struct OceanColumnRange {
  int32_t lo = INT32_MAX, hi = -1;
};

/* first/last column of every row of B (first > last for an empty row); LANES threads per row (1 or 32, see
   OceanForRowsSkewed).  Also zeroes the totals that OceanKernelRowShapes adds into (it runs after this kernel on the
   stream). */
template <int LANES>
__global__ void OceanKernelRowRange(OceanDevCSR B, int32_t *first, int32_t *last, unsigned long long *totals)
{
  if (blockIdx.x == 0 && threadIdx.x < OCEAN_CUDA_TOTALS) totals[threadIdx.x] = 0;
  OceanForRowsSkewed<LANES, OceanColumnRange>(
    B.rowptr, B.nrows,
    [&](OceanColumnRange &r, int64_t t0, int64_t t1, int step) {
      for (int64_t t = t0; t < t1; t += step) {
        r.lo = min(r.lo, B.colidx[t]);
        r.hi = max(r.hi, B.colidx[t]);
      }
    },
    [](OceanColumnRange &r) { OceanWarpRange(&r.lo, &r.hi); },
    [&](int64_t k, const OceanColumnRange &r) {
      first[k] = r.lo;
      last[k]  = r.hi;
    });
}

/* Adds the block's totals (products, bounds, rows with products, likely slots, rows that may be heavy) into
   totals[0..OCEAN_CUDA_TOTALS): a shuffle sum per warp, then one atomic per block (exact integer sums, so the totals
   do not depend on the order).  Every thread of the block calls it. */
__device__ static inline void OceanBlockAddTotals(unsigned long long v[OCEAN_CUDA_TOTALS], unsigned long long *totals)
{
  __shared__ unsigned long long part[OCEAN_CUDA_TOTALS][OCEAN_THREADS / 32];
#pragma unroll
  for (int k = 0; k < OCEAN_CUDA_TOTALS; k++) {
    for (int o = 16; o; o >>= 1) v[k] += __shfl_xor_sync(OCEAN_FULL_MASK, v[k], o);
    if ((threadIdx.x & 31) == 0) part[k][threadIdx.x / 32] = v[k];
  }
  __syncthreads();
  if (threadIdx.x < OCEAN_CUDA_TOTALS) {
    unsigned long long sum = 0;
    for (int w = 0; w < (int)blockDim.x / 32; w++) sum += part[threadIdx.x][w];
    if (sum) atomicAdd(&totals[threadIdx.x], sum);
  }
}

/* A row of A*B's walk over its entries of A: products, the longest row of B reached, the columns' extremes */
struct OceanShapeWalk {
  int64_t q = 0, longest = 0;
  int32_t lo = INT32_MAX, hi = -1;
};

/* products, span, first column, longest B row and upper bound of every row of A*B, and the totals of products, bounds,
   rows with products, the slots the rows' likely sizes route them to (OceanRouteBound with rp.bound_factor; 0
   without one) and the rows that may be heavy (with_bins: rp's bin table is given) added into totals (zeroed by
   OceanKernelRowRange); with routes, each row's numeric route by its upper bound (OceanKernelRoute's, d_p NULL;
   OceanKernelRouteLikely may replace it); LANES threads per row (1 or 32, see OceanForRowsSkewed), blocks of
   OCEAN_THREADS */
template <int LANES>
__global__ void OceanKernelRowShapes(OceanDevCSR A, OceanDevCSR B, const int32_t *first, const int32_t *last,
                                     OceanRowShape *shapes, uint8_t *nonempty, unsigned long long *totals,
                                     OceanCudaRouteParams rp, bool with_bins, OceanRoute *routes)
{
  unsigned long long sums[OCEAN_CUDA_TOTALS] = {0}; /* products, bounds, rows with products, likely, heavy */
  OceanForRowsSkewed<LANES, OceanShapeWalk>(
    A.rowptr, A.nrows,
    [&](OceanShapeWalk &w, int64_t t0, int64_t t1, int step) {
      for (int64_t t = t0; t < t1; t += step) {
        const int32_t k  = A.colidx[t];
        const int64_t nk = B.rowptr[k + 1] - B.rowptr[k];
        if (!nk) continue;
        w.q += nk;
        w.longest = max(w.longest, nk);
        w.lo      = min(w.lo, first[k]);
        w.hi      = max(w.hi, last[k]);
      }
    },
    [](OceanShapeWalk &w) {
      for (int o = 16; o; o >>= 1) w.q += __shfl_xor_sync(OCEAN_FULL_MASK, w.q, o);
      for (int o = 16; o; o >>= 1) w.longest = max(w.longest, __shfl_xor_sync(OCEAN_FULL_MASK, w.longest, o));
      OceanWarpRange(&w.lo, &w.hi);
    },
    [&](int64_t i, const OceanShapeWalk &w) {
      const int64_t q = w.q;
      OceanRowShape r;
      r.products = q;
      r.span     = q ? (int64_t)w.hi - w.lo + 1 : 0;
      r.colmin   = q ? w.lo : 0;
      r.longest  = (int32_t)w.longest;
      r.ub       = OceanMin64(OceanMin64(q, r.span), B.ncols);
      shapes[i]  = r;
      if (rp.bound_factor) {
        OceanRoute by_bound, likely;
        (void)OceanRouteBound(rp.bins, rp.warp, rp.load, &r, rp.bound_factor, &by_bound, &likely);
        if (routes) routes[i] = by_bound;
        sums[3] += (unsigned long long)likely.slot;
      } else if (routes) {
        OceanRoute route;
        OceanRouteRowBins(rp.bins, rp.warp, rp.load, OCEAN_PASS_NUMERIC, r.ub, &r, &route);
        routes[i] = route;
      }
      sums[0] += (unsigned long long)q;
      sums[1] += (unsigned long long)r.ub;
      sums[2] += q > 0;
      sums[4] += with_bins && OceanRowMayBeHeavy(rp.bins, &r);
      if (nonempty) nonempty[i] = (uint8_t)(q > 0);
    });
  OceanBlockAddTotals(sums, totals);
}

/* The rows' routes by their likely sizes (OceanRouteBound with rp.bound_factor) in place of those by their bounds,
   when the product takes the factor: OceanTakeBoundFactor of the totals OceanKernelRowShapes added (it runs before
   this kernel on the stream), so the analysis's plan is the one the numeric pass runs, with no wait between them;
   totals NULL: taken (the host decided). */
__global__ void OceanKernelRouteLikely(const OceanRowShape *shapes, int64_t n, const unsigned long long *totals,
                                       OceanCudaRouteParams rp, OceanRoute *routes)
{
  if (totals && !OceanTakeBoundFactor((int64_t)totals[3], (int64_t)totals[1])) return;
  OCEAN_GRID_STRIDE(i, n)
  {
    const OceanRowShape r = shapes[i];
    OceanRoute          by_bound, route;
    (void)OceanRouteBound(rp.bins, rp.warp, rp.load, &r, rp.bound_factor, &by_bound, &route);
    routes[i] = route;
  }
}

/* A kernel over the rows of M with LANES threads per row: 32 when its rows average a warp's worth of entries. */
#define OCEAN_LAUNCH_PER_ROW(kernel, nrows, nnz, ...) \
  do { \
    if (OceanWideRows(nrows, nnz)) kernel<32><<<OceanGrid((nrows)*32, OCEAN_THREADS), OCEAN_THREADS>>>(__VA_ARGS__); \
    else kernel<1><<<OceanGrid(nrows, OCEAN_THREADS), OCEAN_THREADS>>>(__VA_ARGS__); \
  } while (0)

/* OceanKernelRouteLikely over rows 0..n-1 (totals NULL: the host took the factor). */
static void OceanLaunchRouteLikely(const OceanRowShape *d_shapes, int64_t n, const unsigned long long *d_totals,
                                   const OceanCudaRouteParams *rp, OceanRoute *d_routes)
{
  if (n > 0)
    OceanKernelRouteLikely<<<OceanGrid(n, OCEAN_THREADS), OCEAN_THREADS>>>(d_shapes, n, d_totals, *rp, d_routes);
}

extern "C" OceanError OceanCudaRouteLikely(const OceanCudaRouteParams *rp, const OceanRowShape *d_shapes, int64_t n,
                                           OceanRoute *d_routes)
{
  OceanLaunchRouteLikely(d_shapes, n, NULL, rp, d_routes);
  OCEAN_CUDA_LAUNCHED("routes by the likely sizes");
  return OCEAN_SUCCESS;
}

extern "C" OceanError OceanCudaAnalyzeRows(OceanCudaDevice dev, OceanDevCSR A, int64_t nnz_a, OceanDevCSR B,
                                           int64_t nnz_b, OceanRowShape *d_shapes, uint8_t *d_nonempty,
                                           unsigned long long *d_totals, const OceanCudaRouteParams *rp,
                                           OceanRoute *d_routes)
{
  int32_t             *first = NULL, *last = NULL;
  OceanCudaRouteParams none;
  OceanError           err;

  if (!rp) {
    memset(&none, 0, sizeof(none));
    d_routes = NULL;
  }

  if (A.nrows == 0)
    return OceanCudaCheck(cudaMemsetAsync(d_totals, 0, OCEAN_CUDA_TOTALS * sizeof(unsigned long long), 0),
                          "analysis: memset");
  if ((err = OceanCudaAlloc(dev, (size_t)OceanMax64(B.nrows, 1) * sizeof(int32_t), (void **)&first)) ||
      (err = OceanCudaAlloc(dev, (size_t)OceanMax64(B.nrows, 1) * sizeof(int32_t), (void **)&last)))
    goto done;
  /* two launches (three with a bound factor), no wait: the launches and waits, not the work, are a small product's
     cost */
  OCEAN_LAUNCH_PER_ROW(OceanKernelRowRange, B.nrows, nnz_b, B, first, last, d_totals);
  OCEAN_LAUNCH_PER_ROW(OceanKernelRowShapes, A.nrows, nnz_a, A, B, first, last, d_shapes, d_nonempty, d_totals,
                       rp ? *rp : none, rp != NULL, d_routes);
  if (d_routes && rp->bound_factor) OceanLaunchRouteLikely(d_shapes, A.nrows, d_totals, rp, d_routes);
  err = OceanCudaCheck(cudaGetLastError(), "analysis kernels: launch");
done:
  OceanCudaFree(dev, first); /* the pool hands them out again in stream order */
  OceanCudaFree(dev, last);
  return err;
}

__global__ void OceanKernelSampleRows(const int64_t *nonempty_rows, int64_t nq, int64_t ns, int64_t *sample)
{
  OCEAN_GRID_STRIDE(j, ns) sample[j] = nonempty_rows[OceanSampleIndex(j, nq, ns)];
}

extern "C" OceanError OceanCudaSampleRows(const int64_t *d_nonempty_rows, int64_t nq, int64_t ns, int64_t *d_sample)
{
  if (ns == 0) return OCEAN_SUCCESS;
  if (ns > nq)
    return OceanSetError(OCEAN_ERR_ARG, "sample rows: %lld of %lld rows with products", (long long)ns, (long long)nq);
  OceanKernelSampleRows<<<OceanGrid(ns, OCEAN_THREADS), OCEAN_THREADS>>>(d_nonempty_rows, nq, ns, d_sample);
  OCEAN_CUDA_LAUNCHED("sample rows");
  return OCEAN_SUCCESS;
}

__global__ void OceanKernelSampleValues(const int64_t *sample, int64_t ns, const OceanRowShape *shapes,
                                        const int64_t *counts, int64_t *out)
{
  OCEAN_GRID_STRIDE(j, ns)
  {
    const int64_t row = sample[j];
    out[j]            = shapes[row].products;
    out[ns + j]       = counts[row];
  }
}

extern "C" OceanError OceanCudaSampleValues(const int64_t *d_sample, int64_t ns, const OceanRowShape *d_shapes,
                                            const int64_t *d_counts, int64_t *d_out)
{
  if (ns == 0) return OCEAN_SUCCESS;
  OceanKernelSampleValues<<<OceanGrid(ns, OCEAN_THREADS), OCEAN_THREADS>>>(d_sample, ns, d_shapes, d_counts, d_out);
  OCEAN_CUDA_LAUNCHED("sample values");
  return OCEAN_SUCCESS;
}

/* The sample's exact counts without routing them (a small product's analysis is its launches and waits, not its
   work): a block per sampled row inserts the row's columns into a shared hash table (OceanHashSlot, linear probing)
   of twice the row's upper bound; a column is counted by the thread whose compare-and-swap inserts it.  A row whose
   bound passes OCEAN_SAMPLE_SLOTS / 2 gets -1 and is counted by its route instead.  out[j] = products, out[ns + j] =
   nnz of row sample[j]. */
#define OCEAN_SAMPLE_SLOTS   4096
#define OCEAN_SAMPLE_THREADS 128

__global__ void __launch_bounds__(OCEAN_SAMPLE_THREADS)
  OceanKernelSampleCounts(OceanDevCSR A, OceanDevCSR B, const int64_t *sample, int64_t ns, const OceanRowShape *shapes,
                          int64_t *out)
{
  __shared__ int32_t  table[OCEAN_SAMPLE_SLOTS];
  __shared__ unsigned part[OCEAN_SAMPLE_THREADS / 32];
  const int           lane = threadIdx.x & 31, warp = threadIdx.x / 32;

  for (int64_t j = blockIdx.x; j < ns; j += gridDim.x) {
    const int64_t       row = sample[j];
    const OceanRowShape r   = shapes[row];
    unsigned            cap = 32, count = 0;
    if (2 * r.ub > OCEAN_SAMPLE_SLOTS) { /* the whole block takes this branch */
      if (threadIdx.x == 0) {
        out[j]      = r.products;
        out[ns + j] = -1;
      }
      continue;
    }
    while (cap < 2 * r.ub) cap <<= 1;
    for (unsigned t = threadIdx.x; t < cap; t += OCEAN_SAMPLE_THREADS) table[t] = -1;
    __syncthreads();
    for (int64_t t = A.rowptr[row] + warp; t < A.rowptr[row + 1]; t += OCEAN_SAMPLE_THREADS / 32) {
      const int32_t k = A.colidx[t];
      for (int64_t u = B.rowptr[k] + lane; u < B.rowptr[k + 1]; u += 32) {
        const int32_t col = B.colidx[u];
        for (uint32_t pos = (uint32_t)OceanHashSlot(col, cap);; pos = pos + 1 == cap ? 0 : pos + 1) {
          const int32_t old = atomicCAS(&table[pos], -1, col);
          if (old == -1) count++;
          if (old == -1 || old == col) break;
        }
      }
    }
    for (int o = 16; o; o >>= 1) count += __shfl_xor_sync(OCEAN_FULL_MASK, count, o);
    if (lane == 0) part[warp] = count;
    __syncthreads();
    if (threadIdx.x == 0) {
      unsigned sum = 0;
      for (int w = 0; w < OCEAN_SAMPLE_THREADS / 32; w++) sum += part[w];
      out[j]      = r.products;
      out[ns + j] = sum;
    }
    __syncthreads(); /* the table and part serve the block's next row */
  }
}

extern "C" OceanError OceanCudaSampleCounts(OceanDevCSR A, OceanDevCSR B, const int64_t *d_sample, int64_t ns,
                                            const OceanRowShape *d_shapes, int64_t *d_out)
{
  if (ns == 0) return OCEAN_SUCCESS;
  OceanKernelSampleCounts<<<OceanGrid(ns, 1), OCEAN_SAMPLE_THREADS>>>(A, B, d_sample, ns, d_shapes, d_out);
  OCEAN_CUDA_LAUNCHED("sample counts");
  return OCEAN_SUCCESS;
}

/* ------------------------------------------------------------------------------------------------ statistics */

/* The second set's routes, made in the counting launch: routed[row] = OceanRouteRowBins(..., p[row], shapes[row]). */
struct OceanCudaRouteOnTheWay {
  OceanCudaRouteParams rp;
  OceanPass            pass;
  const int64_t       *p;
  const OceanRowShape *shapes;
  OceanRoute          *routed;
};

/* Rows per bin (entries 0..OCEAN_NUM_BINS-1) and per accumulator (the rest) of two sets, a row of blocks each:
   blockIdx.y 0 counts the given routes, 1 makes the new routes and counts them (one launch for both).  Shared-memory
   counts per block, then one global atomic per entry and block: exact integer counts whatever the order. */
__global__ void OceanKernelCountRoutes(const OceanRoute *counted, OceanCudaRouteOnTheWay way, int64_t n,
                                       unsigned long long *hist_all)
{
  unsigned long long     *hist = hist_all + blockIdx.y * OCEAN_CUDA_HIST_SIZE;
  __shared__ unsigned int h[OCEAN_CUDA_HIST_SIZE];
  for (int b = threadIdx.x; b < OCEAN_CUDA_HIST_SIZE; b += blockDim.x) h[b] = 0;
  __syncthreads();
  OCEAN_GRID_STRIDE(i, n)
  {
    OceanRoute r;
    if (blockIdx.y == 0) r = counted[i];
    else {
      OceanRouteRowBins(way.rp.bins, way.rp.warp, way.rp.load, way.pass, way.p[i], &way.shapes[i], &r);
      way.routed[i] = r;
    }
    atomicAdd(&h[r.bin < OCEAN_NUM_BINS ? r.bin : OCEAN_NUM_BINS - 1], 1u);
    atomicAdd(&h[OCEAN_NUM_BINS + (r.acc < OCEAN_CUDA_NUM_ACC ? r.acc : 0)], 1u);
  }
  __syncthreads();
  for (int b = threadIdx.x; b < OCEAN_CUDA_HIST_SIZE; b += blockDim.x)
    if (h[b]) atomicAdd(&hist[b], (unsigned long long)h[b]);
}

extern "C" OceanError OceanCudaRouteAndCount(OceanCudaDevice dev, const OceanRoute *d_counted,
                                             const OceanCudaRouteParams *rp, OceanPass pass, const int64_t *d_p,
                                             const OceanRowShape *d_shapes, OceanRoute *d_routed, int64_t n,
                                             unsigned long long hist[OCEAN_CUDA_ROUTE_SETS * OCEAN_CUDA_HIST_SIZE])
{
  unsigned long long *d_hist = NULL;
  const size_t        bytes  = (size_t)OCEAN_CUDA_ROUTE_SETS * OCEAN_CUDA_HIST_SIZE * sizeof(unsigned long long);
  OceanError          err;

  if (n == 0) {
    memset(hist, 0, bytes);
    return OCEAN_SUCCESS;
  }
  if ((err = OceanCudaAlloc(dev, bytes, (void **)&d_hist))) return err;
  if ((err = OceanCudaCheck(cudaMemsetAsync(d_hist, 0, bytes, 0), "route counts: memset"))) goto done;
  /* at most 4096 blocks: per-block counts of at most ~2^32 rows each would need n > 2^44 rows to wrap */
  {
    const unsigned         grid = OceanGrid(n, OCEAN_THREADS) < 4096 ? OceanGrid(n, OCEAN_THREADS) : 4096;
    OceanCudaRouteOnTheWay way  = {*rp, pass, d_p, d_shapes, d_routed};
    OceanKernelCountRoutes<<<dim3(grid, OCEAN_CUDA_ROUTE_SETS), OCEAN_THREADS>>>(d_counted, way, n, d_hist);
  }
  if ((err = OceanCudaCheck(cudaGetLastError(), "routes and their counts: launch"))) goto done;
  err = OceanCudaReadbackDeferred(dev, d_hist, bytes, hist); /* both sets at once */
done:
  OceanCudaFree(dev, d_hist); /* the pool hands it out again in stream order, after the copy */
  return err;
}

extern "C" void OceanCudaRouteCountsFrom(const unsigned long long *hist, int nsets, OceanCudaRouteCounts *counts)
{
  memset(counts, 0, sizeof(*counts) * (size_t)nsets);
  if (!hist) return;
  for (int k = 0; k < nsets; k++) {
    for (int b = 0; b < OCEAN_NUM_BINS; b++) counts[k].bins[b] = (int64_t)hist[k * OCEAN_CUDA_HIST_SIZE + b];
    for (int b = 0; b < OCEAN_CUDA_NUM_ACC; b++)
      counts[k].acc[b] = (int64_t)hist[k * OCEAN_CUDA_HIST_SIZE + OCEAN_NUM_BINS + b];
  }
}

/* Each row's term of the estimate error (0 for rows without nonzeros) and the number of rows with nonzeros. */
__global__ void OceanKernelEstimateError(int64_t n, const OceanRowShape *shapes, const double *estimate,
                                         double coefficient, const int64_t *counts, double *term,
                                         unsigned long long *nrows)
{
  for (int64_t base = (int64_t)blockIdx.x * blockDim.x; base < n; base += (int64_t)gridDim.x * blockDim.x) {
    const int64_t i   = base + threadIdx.x;
    const int64_t nnz = i < n ? counts[i] : 0;
    if (i < n)
      term[i] =
        nnz ? OceanEstimateRelError(OceanPredictFromEstimate(estimate[i], coefficient, &shapes[i]), coefficient, nnz)
            : 0.0;
    const int c = __syncthreads_count(nnz != 0); /* every thread of the block runs the same iterations */
    if (threadIdx.x == 0 && c) atomicAdd(nrows, (unsigned long long)c);
  }
}

extern "C" OceanError OceanCudaEstimateError(OceanCudaDevice dev, int64_t n, const OceanRowShape *d_shapes,
                                             const double *d_estimate, double coefficient, const int64_t *d_counts,
                                             OceanCudaErrorSum *sums)
{
  OceanCudaErrorSum *d_res = NULL;
  double            *term  = NULL;
  OceanTemp          temp(dev);
  size_t             bytes = 0;
  OceanError         err;

  memset(sums, 0, sizeof(*sums));
  if (n == 0) return OCEAN_SUCCESS;
  if ((err = OceanCudaAlloc(dev, sizeof(*d_res), (void **)&d_res)) ||
      (err = OceanCudaAlloc(dev, (size_t)n * sizeof(double), (void **)&term)))
    goto done;
  if ((err = OceanCudaCheck(cudaMemsetAsync(d_res, 0, sizeof(*d_res), 0), "estimate error: memset"))) goto done;
  OceanKernelEstimateError<<<OceanGrid(n, OCEAN_THREADS), OCEAN_THREADS>>>(n, d_shapes, d_estimate, coefficient,
                                                                           d_counts, term, &d_res->rows);
  if ((err = OceanCudaCheck(cudaPeekAtLastError(), "estimate error: launch"))) goto done;
  if ((err = OceanCudaCheck(cub::DeviceReduce::Sum(NULL, bytes, term, &d_res->sum, n), "estimate error: sum")) ||
      (err = temp.get(bytes)) ||
      (err = OceanCudaCheck(cub::DeviceReduce::Sum(temp.ptr, bytes, term, &d_res->sum, n), "estimate error: sum")))
    goto done;
  err = OceanCudaReadbackDeferred(dev, d_res, sizeof(*d_res), sums);
done:
  OceanCudaFree(dev, d_res);
  OceanCudaFree(dev, term);
  return err;
}

/* ------------------------------------------------------------------------------------------ predictions, routes */

__global__ void OceanKernelPredict(OceanCudaPredict kind, const int64_t *list, int64_t n, const OceanRowShape *shapes,
                                   const double *estimate, const OceanRoute *routes, double x, int64_t *p)
{
  OCEAN_GRID_STRIDE(j, n)
  {
    const int64_t        row = list ? list[j] : j;
    const OceanRowShape *r   = &shapes[row];
    switch (kind) {
    case OCEAN_CUDA_PREDICT_UB: p[row] = r->ub; break;
    case OCEAN_CUDA_PREDICT_EXACT: p[row] = OceanPredictExact(r, x); break;
    case OCEAN_CUDA_PREDICT_ESTIMATE: p[row] = OceanPredictFromEstimate(estimate[row], x, r); break;
    case OCEAN_CUDA_PREDICT_RETRY: p[row] = OceanMin64(r->ub, 2 * routes[row].slot); break;
    }
  }
}

extern "C" OceanError OceanCudaPredictRows(OceanCudaPredict kind, const int64_t *d_list, int64_t n,
                                           const OceanRowShape *d_shapes, const double *d_estimate,
                                           const OceanRoute *d_routes, double x, int64_t *d_p)
{
  if (n == 0) return OCEAN_SUCCESS;
  OceanKernelPredict<<<OceanGrid(n, OCEAN_THREADS), OCEAN_THREADS>>>(kind, d_list, n, d_shapes, d_estimate, d_routes, x,
                                                                     d_p);
  OCEAN_CUDA_LAUNCHED("predictions");
  return OCEAN_SUCCESS;
}

/* Routes the rows; a symbolic pass with rp.cells also gives each row that may be heavy and is counted in a shared
   hash, densely or by the multisplit a record of cells (marked not yet counted), every other routed row none. */
__global__ void OceanKernelRoute(OceanCudaRouteParams rp, OceanPass pass, const int64_t *list, int64_t n,
                                 const int64_t *p, const OceanRowShape *shapes, OceanRoute *routes)
{
  OCEAN_GRID_STRIDE(j, n)
  {
    const int64_t row = list ? list[j] : j;
    OceanRoute    r;
    OceanRouteRowBins(rp.bins, rp.warp, rp.load, pass, p ? p[row] : shapes[row].ub, &shapes[row], &r);
    routes[row] = r;
    if (pass == OCEAN_PASS_SYMBOLIC && rp.cells.row_cell) {
      int32_t rec = -1;
      if ((r.acc == OCEAN_ACC_HASH || r.acc == OCEAN_ACC_DENSE || r.acc == OCEAN_ACC_GLOBAL_DENSE ||
           r.acc == OCEAN_ACC_MULTISPLIT) &&
          OceanRowMayBeHeavy(rp.bins, &shapes[row])) {
        const unsigned long long k = atomicAdd(rp.cells.next, 1ULL);
        if (k < (unsigned long long)rp.cells.records) {
          rec                                                                = (int32_t)k;
          rp.cells.cells[(int64_t)k * rp.cells.stride + rp.cells.stride - 1] = -1;
        }
      }
      rp.cells.row_cell[row] = rec;
    }
  }
}

extern "C" OceanError OceanCudaHeavyCellsReset(const OceanHeavyCells *cells)
{
  if (!cells->next) return OCEAN_SUCCESS;
  return OceanCudaCheck(cudaMemsetAsync(cells->next, 0, sizeof(*cells->next), 0), "heavy cells: memset");
}

extern "C" OceanError OceanCudaRouteRows(const OceanCudaRouteParams *rp, OceanPass pass, const int64_t *d_list,
                                         int64_t n, const int64_t *d_p, const OceanRowShape *d_shapes,
                                         OceanRoute *d_routes)
{
  if (n == 0) return OCEAN_SUCCESS;
  OceanKernelRoute<<<OceanGrid(n, OCEAN_THREADS), OCEAN_THREADS>>>(*rp, pass, d_list, n, d_p, d_shapes, d_routes);
  OCEAN_CUDA_LAUNCHED("routing");
  return OCEAN_SUCCESS;
}
