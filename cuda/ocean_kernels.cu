/*
  ocean_kernels.cu - the kernels of the CUDA SpGEMM pipeline behind extern "C" launchers (src/ocean_cuda.h).

  Layering (after CUB): thin __global__ entry points; per-team device functions (the accumulators: a row of C per
  team, a warp or a block, see OceanTeam; the sketch estimate: a warp merges 32 rows, a lane solves each); host
  dispatch that owns grid sizes, reads the shared memory limit off the device and sizes CUB's temporary storage in
  two phases (query, then run) from the pool.  Device helpers shared with ocean_numeric.cu are in ocean_rows.cuh.

  Every decision is the CPU backend's: rows are routed by OceanRouteRowBins, hash tables use OceanHashSlot and
  OceanHashLimit, sketches use OceanSketchUpdate / OceanRegisterPack / OceanSketchEstimateRegisters (all from
  ocean_shared.h).  A row overflows exactly when its distinct columns exceed its slot, as on the CPU.
  Summation order: ESC rows sum in product order (bitwise the CPU's); hash and dense rows accumulate with
  atomicAdd, so their last bits depend on the schedule (the tests allow 1e-12 |A||B|).
  Output order: ESC (rank sort), dense (bitmap scan) and shared-hash (occupied entries compacted, then ranked or
  bitonic-sorted) rows are written in column order; only global-hash (LONG) rows are appended unsorted and sorted
  afterwards, in place, by OceanCudaSortRows.
*/
#include <cub/cub.cuh>
#include <cuda_runtime.h>
#include "ocean_cuda.h"
#include "ocean_launch.cuh"
#include "ocean_rows.cuh"

#define OCEAN_CUDA_TRY(call) \
  do { \
    cudaError_t e_ = (call); \
    if (e_ != cudaSuccess) { \
      (void)cudaGetLastError(); \
      return OceanSetError(OCEAN_ERR_DEVICE, "%s failed: %s (%s:%d)", #call, cudaGetErrorString(e_), __FILE__, __LINE__); \
    } \
  } while (0)

/* ------------------------------------------------------------------------------------------------ analysis */

/* Long rows (OceanWideRows) get a warp each, lanes over the entries, reduced by shuffles: integer sums and extremes,
   so the results are a thread per row's. */
__device__ static inline void OceanWarpRange(int32_t *lo, int32_t *hi)
{
  for (int o = 16; o; o >>= 1) {
    *lo = min(*lo, __shfl_xor_sync(OCEAN_FULL_MASK, *lo, o));
    *hi = max(*hi, __shfl_xor_sync(OCEAN_FULL_MASK, *hi, o));
  }
}

/* first/last column of every row of B (first > last for an empty row); LANES threads per row (1 or 32) */
template <int LANES>
__global__ void OceanKernelRowRange(OceanDevCSR B, int32_t *first, int32_t *last)
{
  const int lane = LANES == 1 ? 0 : threadIdx.x & 31;
  OCEAN_GRID_STRIDE(g, B.nrows * LANES)
  {
    const int64_t k  = g / LANES;
    int32_t       lo = INT32_MAX, hi = -1;
    for (int64_t t = B.rowptr[k] + lane; t < B.rowptr[k + 1]; t += LANES) {
      lo = min(lo, B.colidx[t]);
      hi = max(hi, B.colidx[t]);
    }
    if (LANES > 1) OceanWarpRange(&lo, &hi);
    if (lane == 0) {
      first[k] = lo;
      last[k]  = hi;
    }
  }
}

/* products, span, first column and upper bound of every row of A*B; LANES threads per row (1 or 32) */
template <int LANES>
__global__ void OceanKernelRowShapes(OceanDevCSR A, OceanDevCSR B, const int32_t *first, const int32_t *last, OceanRowShape *shapes, uint8_t *nonempty, int64_t *products,
                                     int64_t *bounds)
{
  const int lane = LANES == 1 ? 0 : threadIdx.x & 31;
  OCEAN_GRID_STRIDE(g, A.nrows * LANES)
  {
    const int64_t i  = g / LANES;
    int64_t       q  = 0;
    int32_t       lo = INT32_MAX, hi = -1;
    for (int64_t t = A.rowptr[i] + lane; t < A.rowptr[i + 1]; t += LANES) {
      int32_t k  = A.colidx[t];
      int64_t nk = B.rowptr[k + 1] - B.rowptr[k];
      if (!nk) continue;
      q += nk;
      lo = min(lo, first[k]);
      hi = max(hi, last[k]);
    }
    if (LANES > 1) {
      for (int o = 16; o; o >>= 1) q += __shfl_xor_sync(OCEAN_FULL_MASK, q, o);
      OceanWarpRange(&lo, &hi);
    }
    if (lane == 0) {
      OceanRowShape r;
      r.products  = q;
      r.span      = q ? (int64_t)hi - lo + 1 : 0;
      r.colmin    = q ? lo : 0;
      r.ub        = OceanMin64(OceanMin64(q, r.span), B.ncols);
      shapes[i]   = r;
      products[i] = q;
      bounds[i]   = r.ub;
      if (nonempty) nonempty[i] = (uint8_t)(q > 0);
    }
  }
}

/* A kernel over the rows of M with LANES threads per row: 32 when its rows average a warp's worth of entries. */
#define OCEAN_LAUNCH_PER_ROW(kernel, nrows, nnz, ...) \
  do { \
    if (OceanWideRows(nrows, nnz)) kernel<32><<<OceanGrid((nrows) * 32, OCEAN_THREADS), OCEAN_THREADS>>>(__VA_ARGS__); \
    else kernel<1><<<OceanGrid(nrows, OCEAN_THREADS), OCEAN_THREADS>>>(__VA_ARGS__); \
  } while (0)

extern "C" OceanError OceanCudaAnalyzeRows(OceanCudaDevice dev, OceanDevCSR A, int64_t nnz_a, OceanDevCSR B, int64_t nnz_b, OceanRowShape *d_shapes, uint8_t *d_nonempty,
                                           int64_t *products, int64_t *bound_total)
{
  int32_t   *first = NULL, *last = NULL;
  int64_t   *q = NULL, *ub = NULL, *sums = NULL, h[2];
  OceanTemp  temp(dev);
  size_t     bytes = 0;
  OceanError err;

  *products = *bound_total = 0;
  if (A.nrows == 0) return OCEAN_SUCCESS;
  if ((err = OceanCudaAlloc(dev, (size_t)B.nrows * sizeof(int32_t), (void **)&first)) || (err = OceanCudaAlloc(dev, (size_t)B.nrows * sizeof(int32_t), (void **)&last)) ||
      (err = OceanCudaAlloc(dev, (size_t)A.nrows * sizeof(int64_t), (void **)&q)) || (err = OceanCudaAlloc(dev, (size_t)A.nrows * sizeof(int64_t), (void **)&ub)) ||
      (err = OceanCudaAlloc(dev, 2 * sizeof(int64_t), (void **)&sums)))
    goto done;
  if (B.nrows) OCEAN_LAUNCH_PER_ROW(OceanKernelRowRange, B.nrows, nnz_b, B, first, last);
  OCEAN_LAUNCH_PER_ROW(OceanKernelRowShapes, A.nrows, nnz_a, A, B, first, last, d_shapes, d_nonempty, q, ub);
  if (cudaGetLastError() != cudaSuccess) {
    err = OceanSetError(OCEAN_ERR_DEVICE, "analysis kernels: launch failed");
    goto done;
  }
  /* both totals in one readback */
  if (cub::DeviceReduce::Sum(NULL, bytes, q, sums, A.nrows) != cudaSuccess || (err = temp.get(bytes)) || cub::DeviceReduce::Sum(temp.ptr, bytes, q, sums, A.nrows) != cudaSuccess ||
      cub::DeviceReduce::Sum(temp.ptr, bytes, ub, sums + 1, A.nrows) != cudaSuccess) {
    if (!err) err = OceanSetError(OCEAN_ERR_DEVICE, "analysis: sums of products and bounds failed: %s", cudaGetErrorString(cudaGetLastError()));
    goto done;
  }
  if ((err = OceanCudaReadback(dev, h, sums, sizeof(h)))) goto done;
  *products    = h[0];
  *bound_total = h[1];
done:
  OceanCudaFree(dev, first);
  OceanCudaFree(dev, last);
  OceanCudaFree(dev, q);
  OceanCudaFree(dev, ub);
  OceanCudaFree(dev, sums);
  return err;
}

__global__ void OceanKernelSampleRows(const int64_t *nonempty_rows, int64_t nq, int64_t ns, int64_t *sample)
{
  OCEAN_GRID_STRIDE(j, ns) sample[j] = nonempty_rows[OceanSampleIndex(j, nq, ns)];
}

extern "C" OceanError OceanCudaSampleRows(const int64_t *d_nonempty_rows, int64_t nq, int64_t ns, int64_t *d_sample)
{
  if (ns == 0) return OCEAN_SUCCESS;
  if (ns > nq) return OceanSetError(OCEAN_ERR_ARG, "sample rows: %lld of %lld rows with products", (long long)ns, (long long)nq);
  OceanKernelSampleRows<<<OceanGrid(ns, OCEAN_THREADS), OCEAN_THREADS>>>(d_nonempty_rows, nq, ns, d_sample);
  OCEAN_CUDA_LAUNCHED("sample rows");
  return OCEAN_SUCCESS;
}

__global__ void OceanKernelSampleValues(const int64_t *sample, int64_t ns, const OceanRowShape *shapes, const int64_t *counts, int64_t *out)
{
  OCEAN_GRID_STRIDE(j, ns)
  {
    const int64_t row = sample[j];
    out[j]            = shapes[row].products;
    out[ns + j]       = counts[row];
  }
}

extern "C" OceanError OceanCudaSampleValues(const int64_t *d_sample, int64_t ns, const OceanRowShape *d_shapes, const int64_t *d_counts, int64_t *d_out)
{
  if (ns == 0) return OCEAN_SUCCESS;
  OceanKernelSampleValues<<<OceanGrid(ns, OCEAN_THREADS), OCEAN_THREADS>>>(d_sample, ns, d_shapes, d_counts, d_out);
  OCEAN_CUDA_LAUNCHED("sample values");
  return OCEAN_SUCCESS;
}

/* ------------------------------------------------------------------------------------------------ statistics */

#define OCEAN_HIST_SIZE (OCEAN_NUM_BINS + OCEAN_CUDA_NUM_ACC)

/* Rows per bin (entries 0..OCEAN_NUM_BINS-1) and per accumulator (the rest): shared-memory counts per block, then one
   global atomic per entry and block.  Integer counts: exact whatever the order. */
__global__ void OceanKernelCountRoutes(const OceanRoute *routes, int64_t n, unsigned long long *hist)
{
  __shared__ unsigned int h[OCEAN_HIST_SIZE];
  for (int b = threadIdx.x; b < OCEAN_HIST_SIZE; b += blockDim.x) h[b] = 0;
  __syncthreads();
  OCEAN_GRID_STRIDE(i, n)
  {
    const OceanRoute r = routes[i];
    atomicAdd(&h[r.bin < OCEAN_NUM_BINS ? r.bin : OCEAN_NUM_BINS - 1], 1u);
    atomicAdd(&h[OCEAN_NUM_BINS + (r.acc < OCEAN_CUDA_NUM_ACC ? r.acc : 0)], 1u);
  }
  __syncthreads();
  for (int b = threadIdx.x; b < OCEAN_HIST_SIZE; b += blockDim.x)
    if (h[b]) atomicAdd(&hist[b], (unsigned long long)h[b]);
}

extern "C" OceanError OceanCudaCountRoutes(OceanCudaDevice dev, const OceanRoute *const *d_routes, int nsets, int64_t n, OceanCudaRouteCounts *counts)
{
  unsigned long long *d_hist = NULL, h[OCEAN_CUDA_ROUTE_SETS * OCEAN_HIST_SIZE];
  OceanError          err;
  int                 b, k;

  memset(counts, 0, sizeof(*counts) * (size_t)nsets);
  if (nsets < 1 || nsets > OCEAN_CUDA_ROUTE_SETS) return OceanSetError(OCEAN_ERR_ARG, "route counts: %d sets of routes, 1 to %d allowed", nsets, OCEAN_CUDA_ROUTE_SETS);
  if (n == 0) return OCEAN_SUCCESS;
  if ((err = OceanCudaAlloc(dev, sizeof(h), (void **)&d_hist))) return err;
  if (cudaMemsetAsync(d_hist, 0, sizeof(h), 0) != cudaSuccess) {
    err = OceanSetError(OCEAN_ERR_DEVICE, "route counts: memset: %s", cudaGetErrorString(cudaGetLastError()));
    goto done;
  }
  /* at most 4096 blocks: per-block counts of at most ~2^32 rows each would need n > 2^44 rows to wrap */
  for (k = 0; k < nsets; k++)
    OceanKernelCountRoutes<<<OceanGrid(n, OCEAN_THREADS) < 4096 ? OceanGrid(n, OCEAN_THREADS) : 4096, OCEAN_THREADS>>>(d_routes[k], n, d_hist + k * OCEAN_HIST_SIZE);
  if (cudaGetLastError() != cudaSuccess) {
    err = OceanSetError(OCEAN_ERR_DEVICE, "route counts: launch failed");
    goto done;
  }
  if ((err = OceanCudaReadback(dev, h, d_hist, (size_t)nsets * OCEAN_HIST_SIZE * sizeof(unsigned long long)))) goto done; /* every set at once */
  for (k = 0; k < nsets; k++) {
    for (b = 0; b < OCEAN_NUM_BINS; b++) counts[k].bins[b] = (int64_t)h[k * OCEAN_HIST_SIZE + b];
    for (b = 0; b < OCEAN_CUDA_NUM_ACC; b++) counts[k].acc[b] = (int64_t)h[k * OCEAN_HIST_SIZE + OCEAN_NUM_BINS + b];
  }
done:
  OceanCudaFree(dev, d_hist);
  return err;
}

/* Each row's term of the estimate error (0 for rows without nonzeros) and the number of rows with nonzeros. */
__global__ void OceanKernelEstimateError(int64_t n, const OceanRowShape *shapes, const double *estimate, double coefficient, const int64_t *counts, double *term,
                                         unsigned long long *nrows)
{
  for (int64_t base = (int64_t)blockIdx.x * blockDim.x; base < n; base += (int64_t)gridDim.x * blockDim.x) {
    const int64_t i   = base + threadIdx.x;
    const int64_t nnz = i < n ? counts[i] : 0;
    if (i < n) term[i] = nnz ? OceanEstimateRelError(OceanPredictFromEstimate(estimate[i], coefficient, &shapes[i]), coefficient, nnz) : 0.0;
    const int c = __syncthreads_count(nnz != 0); /* every thread of the block runs the same iterations */
    if (threadIdx.x == 0 && c) atomicAdd(nrows, (unsigned long long)c);
  }
}

extern "C" OceanError OceanCudaEstimateError(OceanCudaDevice dev, int64_t n, const OceanRowShape *d_shapes, const double *d_estimate, double coefficient, const int64_t *d_counts,
                                             double *mean)
{
  struct {
    double             sum;
    unsigned long long rows;
  } h, *d_res = NULL;
  double    *term = NULL;
  OceanTemp  temp(dev);
  size_t     bytes = 0;
  OceanError err;

  *mean = 0.0;
  if (n == 0) return OCEAN_SUCCESS;
  if ((err = OceanCudaAlloc(dev, sizeof(h), (void **)&d_res)) || (err = OceanCudaAlloc(dev, (size_t)n * sizeof(double), (void **)&term))) goto done;
  if (cudaMemsetAsync(d_res, 0, sizeof(h), 0) != cudaSuccess) goto device_error;
  OceanKernelEstimateError<<<OceanGrid(n, OCEAN_THREADS), OCEAN_THREADS>>>(n, d_shapes, d_estimate, coefficient, d_counts, term, &d_res->rows);
  if (cudaPeekAtLastError() != cudaSuccess) goto device_error;
  if (cub::DeviceReduce::Sum(NULL, bytes, term, &d_res->sum, n) != cudaSuccess || (err = temp.get(bytes)) ||
      cub::DeviceReduce::Sum(temp.ptr, bytes, term, &d_res->sum, n) != cudaSuccess)
    goto device_error;
  if ((err = OceanCudaReadback(dev, &h, d_res, sizeof(h)))) goto done;
  *mean = h.rows ? h.sum / (double)h.rows : 0.0;
  goto done;
device_error:
  if (!err) err = OceanSetError(OCEAN_ERR_DEVICE, "estimate error: %s", cudaGetErrorString(cudaGetLastError()));
done:
  OceanCudaFree(dev, d_res);
  OceanCudaFree(dev, term);
  return err;
}

/* ------------------------------------------------------------------------------------------------ predictions, routes */

__global__ void OceanKernelPredict(OceanCudaPredict kind, const int64_t *list, int64_t n, const OceanRowShape *shapes, const double *estimate, const OceanRoute *routes, double x,
                                   int64_t *p)
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

extern "C" OceanError OceanCudaPredictRows(OceanCudaPredict kind, const int64_t *d_list, int64_t n, const OceanRowShape *d_shapes, const double *d_estimate, const OceanRoute *d_routes,
                                           double x, int64_t *d_p)
{
  if (n == 0) return OCEAN_SUCCESS;
  OceanKernelPredict<<<OceanGrid(n, OCEAN_THREADS), OCEAN_THREADS>>>(kind, d_list, n, d_shapes, d_estimate, d_routes, x, d_p);
  OCEAN_CUDA_LAUNCHED("predictions");
  return OCEAN_SUCCESS;
}

__global__ void OceanKernelRoute(OceanCudaRouteParams rp, OceanPass pass, const int64_t *list, int64_t n, const int64_t *p, const OceanRowShape *shapes, OceanRoute *routes)
{
  OCEAN_GRID_STRIDE(j, n)
  {
    const int64_t row = list ? list[j] : j;
    OceanRoute    r;
    OceanRouteRowBins(rp.bins, rp.warp, rp.load, pass, p[row], &shapes[row], &r);
    routes[row] = r;
  }
}

extern "C" OceanError OceanCudaRouteRows(const OceanCudaRouteParams *rp, OceanPass pass, const int64_t *d_list, int64_t n, const int64_t *d_p, const OceanRowShape *d_shapes,
                                         OceanRoute *d_routes)
{
  if (n == 0) return OCEAN_SUCCESS;
  OceanKernelRoute<<<OceanGrid(n, OCEAN_THREADS), OCEAN_THREADS>>>(*rp, pass, d_list, n, d_p, d_shapes, d_routes);
  OCEAN_CUDA_LAUNCHED("routing");
  return OCEAN_SUCCESS;
}

/* ------------------------------------------------------------------------------------------------ accumulators */

struct OceanRowArgs {
  OceanDevCSR          A, B;
  const OceanRowShape *shapes;
  const OceanRoute    *routes;
  const int64_t       *list; /* this bin's rows */
  int64_t              n;
  int                  bitmap_query;
  const int64_t       *offsets;
  int32_t             *cols; /* numeric when not NULL (vals too) */
  double              *vals;
  int64_t             *counts;
  uint8_t             *flags;
  const int64_t       *goff; /* global hash tables: offset per position of list (LONG only) */
  int32_t             *gkeys;
  double              *gvals;
  double              *gdense;        /* global dense values (LONG, numeric): gdense_stride per block, all zero */
  int64_t              gdense_stride;
  unsigned long long  *next;          /* LONG: the next position of list to take (rows handed out dynamically) */
};

/* Per-team state of the row being accumulated.  32-bit counters (a row of C has fewer than 2^31 entries): shared
   atomics on them are native, on 64-bit ones compare-and-swap loops (sm_90 SASS: ATOMS.CAST.SPIN.64). */
struct OceanRowState {
  unsigned count; /* distinct columns inserted */
  unsigned out;   /* entries written */
  int      over;  /* the row passed its slot */
};

/* A team: the threads that accumulate one row together.  One-warp teams are packed OCEAN_TEAM_BLOCK / 32 to a block
   (short rows should not each pay for a block) and synchronize with __syncwarp; larger teams are a block of their own
   and use __syncthreads (named barriers would cap the blocks per SM). */
#define OCEAN_TEAM_BLOCK 256
#define OCEAN_MAX_TEAMS (OCEAN_TEAM_BLOCK / 32)
struct OceanTeam {
  int tid, size, id;
  __device__ __forceinline__ void sync() const
  {
    if (size == 32) __syncwarp();
    else __syncthreads();
  }
};

/* Sorts keys[0, n) ascending (unsigned) in shared memory with vals moved along: a bitonic network over the next power
   of two in its all-ascending form (the first step of each merge compares mirrored pairs), so the virtual entries
   past n act as +infinity and are never touched.  Called by every thread of the team; ends synchronized. */
__device__ void OceanTeamSortTable(const OceanTeam &tm, uint32_t *keys, double *vals, int64_t n64)
{
  const int n = (int)n64; /* a shared-memory table: far below 2^31 entries */
  int       P = 1;
  while (P < n) P <<= 1;
  tm.sync();
  for (int k = 2; k <= P; k <<= 1)
    for (int j = k >> 1; j > 0; j >>= 1) {
      for (int t = tm.tid; t < (P >> 1); t += tm.size) {
        const int lo = ((t & ~(j - 1)) << 1) | (t & (j - 1)); /* bit log2(j) of lo is 0 */
        const int hi = j == (k >> 1) ? (lo ^ (k - 1)) : (lo + j);
        if (hi < n) {
          const uint32_t kl = keys[lo], kh = keys[hi];
          if (kh < kl) {
            const double v = vals[lo];
            keys[lo]       = kh;
            keys[hi]       = kl;
            vals[lo]       = vals[hi];
            vals[hi]       = v;
          }
        }
      }
      tm.sync();
    }
}

/* Moves the occupied entries (key != -1) of a shared hash table to its front, in table order; returns their number.
   A chunk of the team's size at a time: every read of a chunk happens before its writes, which land below it. */
__device__ int64_t OceanTeamCompactTable(const OceanTeam &tm, int32_t *keys, double *vals, int64_t cap, int *warp_sums)
{
  const int lane = tm.tid & 31, w = tm.tid >> 5, nw = tm.size >> 5, w0 = (int)(threadIdx.x >> 5) - w;
  int64_t   base = 0;

  for (int64_t j0 = 0; j0 < cap; j0 += tm.size) {
    const int64_t  j = j0 + tm.tid;
    const int32_t  k = j < cap ? keys[j] : -1;
    const double   v = j < cap ? vals[j] : 0.0;
    const unsigned m = __ballot_sync(0xffffffffu, k != -1);
    if (lane == 0) warp_sums[w0 + w] = __popc(m);
    tm.sync();
    int before = 0, total = 0;
    for (int x = 0; x < nw; x++) {
      const int c = warp_sums[w0 + x];
      before += x < w ? c : 0;
      total += c;
    }
    if (k != -1) {
      const int64_t d = base + before + __popc(m & ((1u << lane) - 1u));
      keys[d]         = k;
      vals[d]         = v;
    }
    base += total;
    tm.sync();
  }
  return base;
}

/* One insertion into a hash table (shared or global memory, keys -1 when free): a new column past the slot sets over.
   Table positions are 32-bit: a row's table has fewer than 2^32 slots. */
__device__ __forceinline__ void OceanHashInsert(int32_t *keys, double *hv, int64_t cap64, int64_t slot, int32_t col, double v, bool numeric, OceanRowState *st)
{
  const uint32_t cap = (uint32_t)cap64;
  uint32_t       pos = (uint32_t)OceanHashSlot(col, cap64);
  for (;;) {
    int32_t k = ((volatile int32_t *)keys)[pos];
    if (k == -1) {
      k = atomicCAS(&keys[pos], -1, col);
      if (k == -1) {
        if (atomicAdd(&st->count, 1u) >= (unsigned long long)slot) {
          atomicExch(&st->over, 1);
          return;
        }
        k = col;
      }
    }
    if (k == col) {
      if (numeric) atomicAdd(&hv[pos], v);
      return;
    }
    if (((volatile int *)&st->over)[0]) return;
    pos = pos + 1 == cap ? 0 : pos + 1;
  }
}

/* Every product of row i through f, spread over the team (OceanGroupForProducts). */
template <typename F>
__device__ __forceinline__ void OceanTeamForProducts(const OceanTeam &tm, const OceanRowArgs &a, int64_t i, bool numeric, F f)
{
  const int64_t tb = a.A.rowptr[i], te = a.A.rowptr[i + 1];
  const int     g  = OceanLanesPerEntry(a.shapes[i].products, te - tb);
  OceanGroupForProducts(a.A, a.B, tb, te, tm.tid, tm.size, g, numeric, f);
}

/* Hash accumulator (shared table, or global memory for LONG). */
__device__ void OceanTeamHashRow(const OceanTeam &tm, const OceanRowArgs &a, int64_t i, const OceanRoute &r, int32_t *keys, double *hv, bool shared_table, OceanRowState *st,
                                 int *warp_sums)
{
  const bool    values = a.cols != NULL; /* numeric: vals too */
  const int64_t cap = r.capacity, slot = r.slot;

  if (shared_table)
    for (int64_t j = tm.tid; j < cap; j += tm.size) {
      keys[j] = -1;
      if (values) hv[j] = 0.0;
    }
  tm.sync();
  OceanTeamForProducts(tm, a, i, values, [&](int32_t col, double v) {
    if (!((volatile int *)&st->over)[0]) OceanHashInsert(keys, hv, cap, slot, col, v, values, st);
  });
  tm.sync();
  if (!values || st->over) return;
  const int64_t off = a.offsets[i];
  if (!shared_table) {
    /* global hash (LONG): appended unsorted; OceanCudaSortRows sorts these rows */
    for (int64_t j = tm.tid; j < cap; j += tm.size) {
      if (keys[j] == -1) continue;
      const unsigned o = atomicAdd(&st->out, 1u);
      a.cols[off + o]  = keys[j];
      a.vals[off + o]  = hv[j];
    }
    return;
  }
  /* shared hash: the occupied entries moved to the front, sorted by column (values moved along, sums untouched),
     written in column order */
  const int64_t cnt = OceanTeamCompactTable(tm, keys, hv, cap, warp_sums);
  if (cnt <= (int64_t)tm.size && cnt <= 512) {
    /* at most one entry per thread: its rank among the (distinct) columns is its place in the row */
    for (int64_t j = tm.tid; j < cnt; j += tm.size) {
      const int32_t k    = keys[j];
      int64_t       rank = 0;
      for (int64_t o = 0; o < cnt; o++) rank += keys[o] < k;
      a.cols[off + rank] = k;
      a.vals[off + rank] = hv[j];
    }
    return;
  }
  OceanTeamSortTable(tm, (uint32_t *)keys, hv, cnt);
  for (int64_t j = tm.tid; j < cnt; j += tm.size) {
    a.cols[off + j] = keys[j];
    a.vals[off + j] = hv[j];
  }
}

/* Dense accumulator over the row's span: a bitmap in shared memory and (numeric) the sums dv, in shared memory (DENSE:
   cleared here) or in the block's global array (GLOBAL_DENSE: all zero on entry, and left so: each sum is cleared
   where it is read, an overflowing row's where its bits are). */
__device__ void OceanTeamDenseRow(const OceanTeam &tm, const OceanRowArgs &a, int64_t i, const OceanRoute &r, const OceanRowShape &sh, double *dv, unsigned *bm, bool global_values,
                                  OceanRowState *st)
{
  const bool    values = a.cols != NULL; /* numeric: vals too */
  const int64_t span = r.capacity, nw = (span + 31) / 32;

  for (int64_t j = tm.tid; j < nw; j += tm.size) bm[j] = 0;
  if (values && !global_values)
    for (int64_t j = tm.tid; j < span; j += tm.size) dv[j] = 0.0;
  tm.sync();
  /* With the plan's bitmap query a value would be written, not added, by the first product of its column; that
     needs an ordering between the bit and the value that atomics alone do not give, so this first version always
     zeroes the values and adds (same result). */
  OceanTeamForProducts(tm, a, i, values, [&](int32_t col, double v) {
    const int64_t  j = (int64_t)col - sh.colmin;
    const unsigned bit = 1u << (j & 31);
    if (!(((volatile unsigned *)bm)[j >> 5] & bit)) atomicOr(&bm[j >> 5], bit); /* heavy rows set most bits early: reads then, not contended atomics */
    if (values) atomicAdd(&dv[j], v);
  });
  tm.sync();
  for (int64_t w = tm.tid; w < nw; w += tm.size) {
    const int c = __popc(bm[w]);
    if (c) atomicAdd(&st->count, (unsigned)c);
  }
  tm.sync();
  if (tm.tid == 0) st->over = st->count > (unsigned long long)r.slot;
  tm.sync();
  if (values && global_values && st->over)
    for (int64_t w = tm.tid; w < nw; w += tm.size)
      for (unsigned bits = bm[w]; bits; bits &= bits - 1) dv[w * 32 + __ffs(bits) - 1] = 0.0;
  if (!values || st->over) return;
  /* in column order: warp k takes a contiguous chunk of the bitmap's words, counts the bits before its chunk, then
     walks the chunk 32 words at a time with a warp scan of the words' bit counts */
  const int64_t off = a.offsets[i];
  const int     lane = tm.tid & 31, warp = tm.tid >> 5, nwarps = tm.size >> 5;
  const int     nwi = (int)nw; /* a shared-memory bitmap: far below 2^31 words */
  const int     chunk = (nwi + nwarps - 1) / nwarps, w0 = min(nwi, warp * chunk), w1 = min(nwi, w0 + chunk);
  unsigned      base = 0; /* entries of the row: at most its slot */
  for (int w = lane; w < w0; w += 32) base += (unsigned)__popc(bm[w]);
  for (int d = 16; d > 0; d >>= 1) base += __shfl_xor_sync(0xffffffffu, base, d);
  for (int t = w0; t < w1; t += 32) {
    const int      w    = t + lane;
    unsigned       bits = w < w1 ? bm[w] : 0u;
    const unsigned c    = (unsigned)__popc(bits);
    unsigned       incl = c;
    for (int d = 1; d < 32; d <<= 1) {
      const unsigned y = __shfl_up_sync(0xffffffffu, incl, d);
      if (lane >= d) incl += y;
    }
    unsigned o = base + incl - c;
    for (; bits; bits &= bits - 1, o++) {
      const int j     = w * 32 + __ffs(bits) - 1;
      a.cols[off + o] = (int32_t)(sh.colmin + j);
      a.vals[off + o] = dv[j];
      if (global_values) dv[j] = 0.0;
    }
    base += __shfl_sync(0xffffffffu, incl, 31);
  }
}

/* Expand-sort-compact for rows of at most OCEAN_ESC_MAX products (ESC4 and ESC2 alike): a team of OCEAN_ESC_LANES
   lanes per row, OCEAN_TEAM_BLOCK / OCEAN_ESC_LANES rows per block.  Short rows are latency-bound (a few dependent
   loads each): many in flight beats wide teams.  Products expanded in product order (OceanFlatProducts), a stable rank sort of (column, product index)
   in shared memory, then each run of equal columns summed in product order (the CPU's order, so these rows match it
   bitwise).  A team's lanes share a warp with other teams: they synchronize on their own mask only.  Measured with
   Nsight Compute on the H200 (3D 7-point squared, 49 products a row): 32 lanes a row 5.5 ms, 8 lanes 3.8 ms.  Rows of the
   team's tables are padded by one entry so that the teams of a warp read different banks. */
#define OCEAN_ESC_MAX 64
#define OCEAN_ESC_INDEX_BITS 6 /* a product's index in its row: below OCEAN_ESC_MAX */
#define OCEAN_ESC_LANES 8
#define OCEAN_ESC_PAD (OCEAN_ESC_MAX + 1)

/* The stable rank sort of a row's q expanded columns ec[0, q) (q <= OCEAN_ESC_MAX) into sc (columns) and sx (their
   product indices): the rank of product p is the number of products o with (column, o) below (column, p).  Lane sub
   of the team holds its products p = sub, sub + W, ... (K slots, enough for q) and ranks them all in one pass over
   the row, comparing (column, index) packed in one Key (32 bits when the columns fit 32 - 6 bits): one shared load
   and one compare per slot and product instead of a pass, a load and three compares per product. */
template <int W, int K, typename Key>
__device__ __forceinline__ void OceanEscRank(const int32_t *ec, int q, int sub, int32_t *sc, uint8_t *sx)
{
  Key mine[K];
  int rank[K];
#pragma unroll
  for (int k = 0; k < K; k++) {
    const int p = sub + k * W;
    mine[k]     = p < q ? ((Key)(uint32_t)ec[p] << OCEAN_ESC_INDEX_BITS) | (Key)p : ~(Key)0;
    rank[k]     = 0;
  }
  for (int o = 0; o < q; o++) {
    const Key other = ((Key)(uint32_t)ec[o] << OCEAN_ESC_INDEX_BITS) | (Key)o;
#pragma unroll
    for (int k = 0; k < K; k++) rank[k] += other < mine[k];
  }
#pragma unroll
  for (int k = 0; k < K; k++) {
    const int p = sub + k * W;
    if (p < q) {
      sc[rank[k]] = ec[p];
      sx[rank[k]] = (uint8_t)p;
    }
  }
}
template <int W>
__global__ void __launch_bounds__(OCEAN_TEAM_BLOCK, 6) OceanKernelEscRows(OceanRowArgs a)
{
  constexpr int      R = OCEAN_TEAM_BLOCK / W;
  __shared__ int32_t ec[R][OCEAN_ESC_PAD]; /* expanded: columns and values in product order */
  __shared__ double  ev[R][OCEAN_ESC_PAD];
  __shared__ int32_t sc[R][OCEAN_ESC_PAD]; /* sorted: columns and the index of their product */
  __shared__ uint8_t sx[R][OCEAN_ESC_PAD + 3];
  __shared__ int     ex[R][W]; /* OceanFlatProducts' scratch */
  __shared__ int64_t eb[R][W];
  __shared__ double  ea[R][W];
  const bool         values = a.cols != NULL; /* numeric: vals too */
  const bool         narrow_keys = a.B.ncols <= (1ll << (32 - OCEAN_ESC_INDEX_BITS)); /* (column, index) in 32 bits */
  const int          sub = (int)threadIdx.x % W, t = (int)threadIdx.x / W, first = (int)(threadIdx.x & 31) & ~(W - 1);
  const unsigned     mask = W == 32 ? 0xffffffffu : ((1u << W) - 1u) << first;

  for (int64_t pos = (int64_t)blockIdx.x * R + t; pos < a.n; pos += (int64_t)gridDim.x * R) {
    const int64_t    i = a.list[pos];
    const OceanRoute r = a.routes[i];
    const int        q = (int)r.capacity;
    int              count = 0, before = 0;
    OceanFlatProducts<W>(a.A, a.B, a.A.rowptr[i], a.A.rowptr[i + 1], sub, mask, ex[t], eb[t], ea[t], values, [&](int p, int32_t col, double v) {
      if (p < OCEAN_ESC_MAX) { /* q <= OCEAN_ESC_MAX by routing; the test only guards the table */
        ec[t][p] = col;
        ev[t][p] = v;
      }
    });
    __syncwarp(mask);
    if (narrow_keys) {
      if (q <= 4 * W) OceanEscRank<W, 4, uint32_t>(ec[t], q, sub, sc[t], sx[t]);
      else OceanEscRank<W, OCEAN_ESC_MAX / W, uint32_t>(ec[t], q, sub, sc[t], sx[t]);
    } else OceanEscRank<W, OCEAN_ESC_MAX / W, uint64_t>(ec[t], q, sub, sc[t], sx[t]);
    __syncwarp(mask);
    for (int p0 = 0; p0 < q; p0 += W) {
      const int p = p0 + sub;
      count += __popc(__ballot_sync(mask, p < q && (p == 0 || sc[t][p] != sc[t][p - 1])) & mask);
    }
    const int over = count > r.slot;
    if (sub == 0) {
      a.counts[i] = over ? r.slot + 1 : count;
      a.flags[i]  = (uint8_t)over;
    }
    if (values && !over) {
      const int64_t off = a.offsets[i];
      for (int p0 = 0; p0 < q; p0 += W) {
        const int      p     = p0 + sub;
        const bool     start = p < q && (p == 0 || sc[t][p] != sc[t][p - 1]);
        const unsigned m     = (__ballot_sync(mask, start) & mask) >> first;
        if (start) {
          double s = ev[t][sx[t][p]];
          for (int x = p + 1; x < q && sc[t][x] == sc[t][p]; x++) s += ev[t][sx[t][x]];
          const int64_t o = off + before + __popc(m & ((1u << sub) - 1u)); /* after the earlier lanes' entries */
          a.cols[o]       = sc[t][p];
          a.vals[o]       = s;
        }
        before += __popc(m);
      }
    }
    __syncwarp(mask);
  }
}

/* Teams of team_size threads, each with team_bytes of the dynamic shared memory, take the bin's rows in turn; the
   accumulator is the route's.  One kernel per kind of bin, so that each gets the registers of its own accumulators
   only (occupancy): warp teams (EMPTY, SHORT), shared-memory blocks (N0..N4: hash or dense), LONG (global hash). */
enum { OCEAN_ROWS_WARP = 0, OCEAN_ROWS_SHARED, OCEAN_ROWS_GLOBAL };
/* Registers: warp teams at 4 blocks of OCEAN_TEAM_BLOCK (64 registers); the 1024-thread kinds at two blocks per SM
   (32 registers, a few spilled to L1), which the hash and dense rows' latency needs more than registers (H200,
   R-MAT scale 18 degree 8: numeric 116 -> 78 ms; elasticity 50 -> 41 ms; the 27-point Laplacian about 3% slower). */
template <int KIND>
__global__ void __launch_bounds__(KIND == OCEAN_ROWS_WARP ? OCEAN_TEAM_BLOCK : 1024, KIND == OCEAN_ROWS_WARP ? 4 : 2) OceanKernelRows(OceanRowArgs a, int team_size, int team_bytes)
{
  extern __shared__ double ocean_smem_d[];
  __shared__ OceanRowState st[OCEAN_MAX_TEAMS];
  __shared__ int           warp_sums[32];
  __shared__ long long     next_pos;
  OceanTeam                tm;
  tm.size                = team_size;
  tm.id                  = (int)threadIdx.x / team_size;
  tm.tid                 = (int)threadIdx.x % team_size;
  const int      teams   = (int)blockDim.x / team_size;
  char          *smem    = (char *)ocean_smem_d + (size_t)tm.id * (size_t)team_bytes;
  OceanRowState *s       = &st[tm.id];

  for (int64_t pos = (int64_t)blockIdx.x * teams + tm.id;; pos += (int64_t)gridDim.x * teams) {
    if constexpr (KIND == OCEAN_ROWS_GLOBAL) {
      /* LONG rows differ by orders of magnitude: a resident grid takes them one at a time */
      if (tm.tid == 0) next_pos = (long long)atomicAdd(a.next, 1ULL);
      tm.sync();
      pos = next_pos;
    }
    if (pos >= a.n) break;
    const int64_t    i = a.list[pos];
    const OceanRoute r = a.routes[i];
    if (tm.tid == 0) {
      s->count = 0;
      s->out   = 0;
      s->over  = 0;
    }
    tm.sync();
    if (r.acc == OCEAN_ACC_HASH) {
      /* values first: 8-byte aligned */
      double  *hv   = (double *)smem;
      int32_t *keys = (int32_t *)(a.cols ? smem + r.capacity * sizeof(double) : smem);
      if constexpr (KIND != OCEAN_ROWS_GLOBAL) OceanTeamHashRow(tm, a, i, r, keys, hv, true, s, warp_sums);
    } else if constexpr (KIND == OCEAN_ROWS_SHARED) {
      if (r.acc == OCEAN_ACC_DENSE) OceanTeamDenseRow(tm, a, i, r, a.shapes[i], (double *)smem, (unsigned *)(a.cols ? smem + r.capacity * sizeof(double) : smem), false, s);
    } else {
      if (r.acc == OCEAN_ACC_GLOBAL_DENSE) OceanTeamDenseRow(tm, a, i, r, a.shapes[i], a.gdense ? a.gdense + (int64_t)blockIdx.x * a.gdense_stride : NULL, (unsigned *)smem, true, s);
      else if (r.acc == OCEAN_ACC_GLOBAL_HASH) OceanTeamHashRow(tm, a, i, r, a.gkeys + a.goff[pos], a.gvals ? a.gvals + a.goff[pos] : NULL, false, s, warp_sums);
    }
    tm.sync();
    if (tm.tid == 0) {
      a.counts[i] = s->over ? r.slot + 1 : (int64_t)s->count;
      a.flags[i]  = (uint8_t)s->over;
    }
    tm.sync();
  }
}

__global__ void OceanKernelBinKeys(const int64_t *list, int64_t n, const OceanRoute *routes, uint8_t *keys)
{
  OCEAN_GRID_STRIDE(j, n) keys[j] = routes[list ? list[j] : j].bin;
}

/* LONG rows: cap[j] the global hash table's entries (0 for dense rows), *dense_span the widest dense row */
__global__ void OceanKernelGlobalCapacity(const int64_t *list, int64_t n, const OceanRoute *routes, int64_t *cap, unsigned long long *dense_span)
{
  OCEAN_GRID_STRIDE(j, n)
  {
    const OceanRoute r = routes[list[j]];
    cap[j]             = r.acc == OCEAN_ACC_GLOBAL_HASH ? r.capacity : 0;
    if (r.acc == OCEAN_ACC_GLOBAL_DENSE) atomicMax(dense_span, (unsigned long long)r.capacity);
  }
}

/* rows[j] = list[j] (list NULL: j) and the count of each key: counted per block in shared memory, a warp's equal keys
   added once, then one global atomic per key and block (most rows share a key: one global counter taking every row's
   atomic serializes millions of them). */
__global__ void OceanKernelKeyRows(const uint8_t *keys, const int64_t *list, int64_t n, int nkeys, int64_t *rows, unsigned long long *counts)
{
  __shared__ unsigned block_counts[256];
  for (int k = threadIdx.x; k < nkeys; k += blockDim.x) block_counts[k] = 0;
  __syncthreads();
  OCEAN_GRID_STRIDE(j, n)
  {
    const unsigned key = keys[j], peers = __match_any_sync(__activemask(), key);
    rows[j]            = list ? list[j] : j;
    if ((int)(threadIdx.x & 31) == __ffs(peers) - 1) atomicAdd(&block_counts[key], (unsigned)__popc(peers));
  }
  __syncthreads();
  for (int k = threadIdx.x; k < nkeys; k += blockDim.x)
    if (block_counts[k]) atomicAdd(&counts[k], (unsigned long long)block_counts[k]);
}

extern "C" OceanError OceanCudaGroupByKey(OceanCudaDevice dev, const uint8_t *d_keys, const int64_t *d_list, int64_t n, int nkeys, int64_t **d_grouped, int64_t *counts)
{
  uint8_t            *skeys = NULL;
  int64_t            *rows = NULL, *srows = NULL;
  unsigned long long *d_counts = NULL, h_counts[256];
  OceanTemp           temp(dev);
  size_t              bytes = 0;
  const int           bits  = nkeys > 1 ? 32 - __builtin_clz((unsigned)(nkeys - 1)) : 1;
  OceanError          err;
  int                 b;

  *d_grouped = NULL;
  memset(counts, 0, sizeof(int64_t) * (size_t)nkeys);
  if (nkeys < 1 || nkeys > 256) return OceanSetError(OCEAN_ERR_ARG, "grouping rows: %d keys, 1 to 256 allowed", nkeys);
  if (n == 0) return OCEAN_SUCCESS;
  if ((err = OceanCudaAlloc(dev, (size_t)n, (void **)&skeys)) || (err = OceanCudaAlloc(dev, (size_t)n * sizeof(int64_t), (void **)&rows)) ||
      (err = OceanCudaAlloc(dev, (size_t)n * sizeof(int64_t), (void **)&srows)) || (err = OceanCudaAlloc(dev, (size_t)nkeys * sizeof(unsigned long long), (void **)&d_counts)))
    goto done;
  if (cudaMemsetAsync(d_counts, 0, (size_t)nkeys * sizeof(unsigned long long), 0) != cudaSuccess) goto device_error;
  OceanKernelKeyRows<<<OceanGrid(n, OCEAN_THREADS), OCEAN_THREADS>>>(d_keys, d_list, n, nkeys, rows, d_counts);
  /* a radix sort over the key's bits, stable: rows keep their order inside a group */
  if (cub::DeviceRadixSort::SortPairs(NULL, bytes, d_keys, skeys, rows, srows, n, 0, bits) != cudaSuccess || (err = temp.get(bytes)) ||
      cub::DeviceRadixSort::SortPairs(temp.ptr, bytes, d_keys, skeys, rows, srows, n, 0, bits) != cudaSuccess)
    goto device_error;
  if ((err = OceanCudaReadback(dev, h_counts, d_counts, (size_t)nkeys * sizeof(unsigned long long)))) goto done;
  for (b = 0; b < nkeys; b++) counts[b] = (int64_t)h_counts[b];
  *d_grouped = srows;
  srows      = NULL;
  err        = OCEAN_SUCCESS;
  goto done;
device_error:
  if (!err) err = OceanSetError(OCEAN_ERR_DEVICE, "grouping rows: %s", cudaGetErrorString(cudaGetLastError()));
done:
  OceanCudaFree(dev, skeys);
  OceanCudaFree(dev, rows);
  OceanCudaFree(dev, srows);
  OceanCudaFree(dev, d_counts);
  return err;
}

static OceanError OceanCudaGroupRows(OceanCudaDevice dev, const OceanRoute *d_routes, const int64_t *d_list, int64_t n, int64_t **d_grouped, int64_t bin_rows[OCEAN_NUM_BINS])
{
  uint8_t   *keys = NULL;
  OceanError err;

  *d_grouped = NULL;
  memset(bin_rows, 0, sizeof(int64_t) * OCEAN_NUM_BINS);
  if (n == 0) return OCEAN_SUCCESS;
  if ((err = OceanCudaAlloc(dev, (size_t)n, (void **)&keys))) return err;
  OceanKernelBinKeys<<<OceanGrid(n, OCEAN_THREADS), OCEAN_THREADS>>>(d_list, n, d_routes, keys);
  err = cudaGetLastError() == cudaSuccess ? OceanCudaGroupByKey(dev, keys, d_list, n, OCEAN_NUM_BINS, d_grouped, bin_rows)
                                          : OceanSetError(OCEAN_ERR_DEVICE, "grouping rows by bin: launch failed");
  OceanCudaFree(dev, keys);
  return err;
}

static OceanError OceanCudaRunGroupedRows(OceanCudaDevice dev, const OceanCudaRouteParams *rp, OceanDevCSR A, OceanDevCSR B, const OceanRowShape *d_shapes,
                                              const OceanRoute *d_routes, const int64_t *d_grouped, const int64_t bin_rows[OCEAN_NUM_BINS], int bitmap_query,
                                              const int64_t *d_offsets, int32_t *d_cols, double *d_vals, int64_t *d_counts, uint8_t *d_flags, int *global_hash)
{
  static int smem_set = -1, smem_max = 0; /* the opt-in is per kernel and device: set once, to the most the device allows */
  int64_t            *gcap = NULL, *goff = NULL;
  int32_t            *gkeys = NULL;
  double             *gvals = NULL, *gdense = NULL;
  unsigned long long *glong = NULL; /* LONG: [0] the widest dense row, [1] the next row to take */
  OceanError err   = OCEAN_SUCCESS;
  int64_t    start, b, n = 0, long_grid = 1;

  for (b = 0; b < OCEAN_NUM_BINS; b++) n += bin_rows[b];
  if (n == 0) return OCEAN_SUCCESS;
  if (smem_set != (int)rp->smem_optin) {
    /* dynamic shared memory may take what the opt-in limit leaves beside the kernel's static shared memory */
    cudaFuncAttributes fa;
    OCEAN_CUDA_TRY(cudaFuncGetAttributes(&fa, OceanKernelRows<OCEAN_ROWS_SHARED>)); /* the three have the same static shared memory */
    smem_max = (int)rp->smem_optin - (int)fa.sharedSizeBytes;
    OCEAN_CUDA_TRY(cudaFuncSetAttribute(OceanKernelRows<OCEAN_ROWS_WARP>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_max));
    OCEAN_CUDA_TRY(cudaFuncSetAttribute(OceanKernelRows<OCEAN_ROWS_SHARED>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_max));
    OCEAN_CUDA_TRY(cudaFuncSetAttribute(OceanKernelRows<OCEAN_ROWS_GLOBAL>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_max));
    smem_set = (int)rp->smem_optin;
  }
  for (b = 0, start = 0; b < OCEAN_NUM_BINS; start += bin_rows[b], b++) {
    const OceanBinConfig *c  = &rp->bins[b];
    const int64_t         nb = bin_rows[b];
    OceanRowArgs          a;
    int                   team, teams, team_bytes;
    cudaError_t           launch;

    if (!nb) continue;
    memset(&a, 0, sizeof(a));
    a.A            = A;
    a.B            = B;
    a.shapes       = d_shapes;
    a.routes       = d_routes;
    a.list         = d_grouped + start;
    a.n            = nb;
    a.bitmap_query = bitmap_query;
    a.offsets      = d_offsets;
    a.cols         = d_cols;
    a.vals         = d_vals;
    a.counts       = d_counts;
    a.flags        = d_flags;
    /* a team of threads per row: OCEAN_ESC_LANES for ESC (its own kernel), a warp for EMPTY and SHORT (the bin's
       block shared by its rows), the bin's block otherwise; teams smaller than OCEAN_TEAM_BLOCK threads are packed
       into blocks of that size */
    if (b == OCEAN_BIN_EMPTY) {
      team       = 32;
      team_bytes = 0;
    } else if (b == OCEAN_BIN_ESC4 || b == OCEAN_BIN_ESC2) {
      /* their own kernel (static shared memory), the same team width for both bins */
      const int lanes = OCEAN_ESC_LANES;
      OceanKernelEscRows<OCEAN_ESC_LANES><<<OceanGrid(nb, OCEAN_TEAM_BLOCK / OCEAN_ESC_LANES), OCEAN_TEAM_BLOCK>>>(a);
      if ((launch = cudaGetLastError()) != cudaSuccess) {
        err = OceanSetError(OCEAN_ERR_DEVICE, "accumulators: bin %s (%lld rows, %d lanes a row): %s", OceanBinName((OceanBin)b), (long long)nb, lanes, cudaGetErrorString(launch));
        goto done;
      }
      continue;
    } else if (b == OCEAN_BIN_LONG) {
      int64_t            total = 0;
      unsigned long long h[2];
      team       = c->threads;
      team_bytes = 0;
      if ((err = OceanCudaAlloc(dev, (size_t)(nb + 1) * sizeof(int64_t), (void **)&gcap)) || (err = OceanCudaAlloc(dev, (size_t)(nb + 1) * sizeof(int64_t), (void **)&goff)) ||
          (err = OceanCudaAlloc(dev, 2 * sizeof(unsigned long long), (void **)&glong)))
        goto done;
      if (cudaMemsetAsync(glong, 0, 2 * sizeof(unsigned long long), 0) != cudaSuccess) goto device_error;
      OceanKernelGlobalCapacity<<<OceanGrid(nb, OCEAN_THREADS), OCEAN_THREADS>>>(d_grouped + start, nb, d_routes, gcap, glong);
      if ((err = OceanCudaScanCounts(dev, NULL, nb, gcap, goff, NULL, &total)) || (err = OceanCudaReadback(dev, h, glong, sizeof(h)))) goto done;
      *global_hash = total > 0;
      if (total) {
        if ((err = OceanCudaAlloc(dev, (size_t)total * sizeof(int32_t), (void **)&gkeys))) goto done;
        if (cudaMemsetAsync(gkeys, 0xff, (size_t)total * sizeof(int32_t), 0) != cudaSuccess) goto device_error;
        if (d_vals) {
          if ((err = OceanCudaAlloc(dev, (size_t)total * sizeof(double), (void **)&gvals))) goto done;
          if (cudaMemsetAsync(gvals, 0, (size_t)total * sizeof(double), 0) != cudaSuccess) goto device_error;
        }
      }
      if (h[0]) team_bytes = (int)((h[0] + 31) / 32 * 4 + 15) / 16 * 16; /* the dense rows' bitmap: LONG's dense columns fit the block */
      if (team_bytes > smem_max) {
        err = OceanSetError(OCEAN_ERR_DEVICE, "accumulators: LONG's dense rows span %llu columns, a bitmap of %d bytes; the kernel may have %d of dynamic shared memory", h[0], team_bytes,
                            smem_max);
        goto done;
      }
      a.goff  = goff;
      a.gkeys = gkeys;
      a.gvals = gvals;
      a.next  = glong + 1;
      {
        /* as many blocks as are resident at once, each with its own dense values (zeroed once, left zeroed) */
        const int sms    = OceanDeviceSMs();
        int       per_sm = 0;
        if (sms < 1) {
          err = OceanSetError(OCEAN_ERR_DEVICE, "accumulators: the device's multiprocessor count could not be read");
          goto done;
        }
        if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, OceanKernelRows<OCEAN_ROWS_GLOBAL>, team, (size_t)team_bytes) != cudaSuccess) goto device_error;
        if (per_sm < 1) per_sm = 1;
        long_grid = (int64_t)sms * per_sm < nb ? (int64_t)sms * per_sm : nb;
      }
      if (h[0] && d_vals) {
        a.gdense_stride = (int64_t)h[0];
        if ((err = OceanCudaAlloc(dev, (size_t)long_grid * (size_t)h[0] * sizeof(double), (void **)&gdense))) goto done;
        if (cudaMemsetAsync(gdense, 0, (size_t)long_grid * (size_t)h[0] * sizeof(double), 0) != cudaSuccess) goto device_error;
        a.gdense = gdense;
      }
    } else {
      const int rpb = c->rows_per_block > 0 ? c->rows_per_block : 1;
      team          = c->threads / rpb;
      team_bytes    = (int)(((c->smem_bytes / rpb) + 64 + 15) / 16 * 16);
      if (team_bytes > smem_max) team_bytes = smem_max;
    }
    team  = team < 32 ? 32 : (team + 31) / 32 * 32;
    teams = team == 32 ? OCEAN_MAX_TEAMS : 1;
    while (teams > 1 && (int64_t)teams * team_bytes > smem_max) teams--;
    {
      const dim3   grid = b == OCEAN_BIN_LONG ? (unsigned)long_grid : OceanGrid(nb, teams), block = teams * team;
      const size_t bytes = (size_t)teams * (size_t)team_bytes;
      if (team == 32) OceanKernelRows<OCEAN_ROWS_WARP><<<grid, block, bytes>>>(a, team, team_bytes);
      else if (b == OCEAN_BIN_LONG) OceanKernelRows<OCEAN_ROWS_GLOBAL><<<grid, block, bytes>>>(a, team, team_bytes);
      else OceanKernelRows<OCEAN_ROWS_SHARED><<<grid, block, bytes>>>(a, team, team_bytes);
    }
    if ((launch = cudaGetLastError()) != cudaSuccess) {
      err = OceanSetError(OCEAN_ERR_DEVICE, "accumulators: bin %s (%lld rows, %d teams of %d threads, %d bytes each): %s", OceanBinName((OceanBin)b), (long long)nb, teams, team,
                          team_bytes, cudaGetErrorString(launch));
      goto done;
    }
  }
  err = OCEAN_SUCCESS;
  goto done;
device_error:
  err = OceanSetError(OCEAN_ERR_DEVICE, "accumulators: %s", cudaGetErrorString(cudaGetLastError()));
done:
  OceanCudaFree(dev, gcap);
  OceanCudaFree(dev, goff);
  OceanCudaFree(dev, gkeys);
  OceanCudaFree(dev, gvals);
  OceanCudaFree(dev, gdense);
  OceanCudaFree(dev, glong);
  return err;
}

extern "C" OceanError OceanCudaRunRows(OceanCudaDevice dev, const OceanCudaRouteParams *rp, OceanDevCSR A, OceanDevCSR B, const OceanRowShape *d_shapes, const OceanRoute *d_routes,
                                       const int64_t *d_list, int64_t n, int bitmap_query, const int64_t *d_offsets, int32_t *d_cols, double *d_vals, int64_t *d_counts,
                                       uint8_t *d_flags, int *unsorted)
{
  int64_t   *grouped = NULL, bins[OCEAN_NUM_BINS];
  int        global_hash = 0;
  OceanError err;

  if (n == 0) return OCEAN_SUCCESS;
  err = OceanCudaGroupRows(dev, d_routes, d_list, n, &grouped, bins);
  if (!err) err = OceanCudaRunGroupedRows(dev, rp, A, B, d_shapes, d_routes, grouped, bins, bitmap_query, d_offsets, d_cols, d_vals, d_counts, d_flags, &global_hash);
  if (!err && unsorted && global_hash) *unsorted = 1;
  OceanCudaFree(dev, grouped);
  return err;
}

/* ------------------------------------------------------------------------------------------------ sketches */

#define OCEAN_SKETCH_WARPS 4
/* A warp per row of B: lanes take the row's columns and OR their update bits into the row's register sets in shared
   memory, then pack them (coalesced bytes).  A register is OceanRegisterPack of the OR of its update bits whatever
   the insertion order (packing keeps the top bit and the two below it, which is all a later insert looks at), so
   this is bitwise OceanSketchBuild's sequence of OceanSketchInsert. */
__global__ void OceanKernelSketchBuild(OceanDevCSR B, int registers, int log2m, uint8_t *sketches)
{
  __shared__ unsigned long long sets[OCEAN_SKETCH_WARPS][OCEAN_HLL_MAX_REGISTERS];
  const int                     lane = threadIdx.x & 31, w = threadIdx.x >> 5;

  for (int64_t k = (int64_t)blockIdx.x * OCEAN_SKETCH_WARPS + w; k < B.nrows; k += (int64_t)gridDim.x * OCEAN_SKETCH_WARPS) {
    uint8_t *s = sketches + (size_t)k * (size_t)registers;
    for (int j = lane; j < registers; j += 32) sets[w][j] = 0;
    __syncwarp();
    for (int64_t t = B.rowptr[k] + lane; t < B.rowptr[k + 1]; t += 32) {
      int      idx;
      uint64_t bit;
      OceanSketchUpdate(log2m, B.colidx[t], &idx, &bit);
      atomicOr(&sets[w][idx], (unsigned long long)bit);
    }
    __syncwarp();
    for (int j = lane; j < registers; j += 32) s[j] = OceanRegisterPack((uint64_t)sets[w][j]);
    __syncwarp();
  }
}

extern "C" OceanError OceanCudaSketchBuild(OceanDevCSR B, int registers, uint8_t *d_sketches)
{
  if (B.nrows == 0) return OCEAN_SUCCESS;
  if (registers > OCEAN_HLL_MAX_REGISTERS) return OceanSetError(OCEAN_ERR_ARG, "sketch build: %d registers, at most %d", registers, OCEAN_HLL_MAX_REGISTERS);
  OceanKernelSketchBuild<<<OceanGrid(B.nrows, OCEAN_SKETCH_WARPS), 32 * OCEAN_SKETCH_WARPS>>>(B, registers, OceanLog2Int(registers), d_sketches);
  OCEAN_CUDA_LAUNCHED("sketch build");
  return OCEAN_SUCCESS;
}

/*
  The estimate of every row of A: a warp takes a batch of consecutive rows (1 to 32), merges each row's registers
  (the OR of the unpacked registers of B's rows, which is order-free), keeps the packed result in shared memory,
  then a lane per row solves (the maximum-likelihood solve is serial and costly: many rows need many lanes on it).
  The merge is atomic-free: registers/8 lanes share an entry, each loading 8 of its registers as one 64-bit word,
  so 256/registers entries go per step; the lanes holding the same registers then OR their sets by shuffles.
  Bitwise OceanSketchEstimate's merge and solve, so the CPU's estimates.
*/
#define OCEAN_ESTIMATE_WARPS 4
__global__ void OceanKernelSketchEstimate(OceanDevCSR A, const uint8_t *sketches, int registers, int batch, double *estimate)
{
  extern __shared__ uint8_t ocean_merged[]; /* [warp][batch rows][registers] */
  const int                 lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const int                 group = registers / 8, part = lane % group, step = 32 / group;
  uint8_t                  *merged = ocean_merged + (size_t)w * (size_t)batch * (size_t)registers;

  for (int64_t i0 = ((int64_t)blockIdx.x * OCEAN_ESTIMATE_WARPS + w) * batch; i0 < A.nrows; i0 += (int64_t)gridDim.x * OCEAN_ESTIMATE_WARPS * batch) {
    const int nr = (int)(A.nrows - i0 < batch ? A.nrows - i0 : batch);
    for (int r = 0; r < nr; r++) {
      uint64_t set[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      for (int64_t t = A.rowptr[i0 + r] + lane / group; t < A.rowptr[i0 + r + 1]; t += step) {
        const uint64_t word = *(const uint64_t *)(sketches + (size_t)A.colidx[t] * (size_t)registers + 8 * (size_t)part);
        if (word) /* an empty register adds nothing */
          for (int b = 0; b < 8; b++) set[b] |= OceanRegisterUnpack((uint8_t)(word >> (8 * b)));
      }
      for (int o = group; o < 32; o <<= 1)
        for (int b = 0; b < 8; b++) set[b] |= __shfl_xor_sync(OCEAN_FULL_MASK, set[b], o);
      if (lane < group)
        for (int b = 0; b < 8; b++) merged[r * registers + 8 * part + b] = OceanRegisterPack(set[b]);
    }
    __syncwarp();
    if (lane < nr) estimate[i0 + lane] = OceanSketchEstimateRegisters(merged + lane * registers, registers);
    __syncwarp();
  }
}

extern "C" OceanError OceanCudaSketchEstimate(OceanDevCSR A, const uint8_t *d_sketches, int registers, double *d_estimate)
{
  const int sms   = OceanDeviceSMs();
  int64_t   warps = (int64_t)(sms > 0 ? sms : 1) * 64, batch = 32;

  if (A.nrows == 0) return OCEAN_SUCCESS;
  if (registers < 8 || registers > OCEAN_HLL_MAX_REGISTERS || (registers & (registers - 1)))
    return OceanSetError(OCEAN_ERR_ARG, "sketch estimate: %d registers, a power of two from 8 to %d expected", registers, OCEAN_HLL_MAX_REGISTERS);
  /* batches as large as keep every resident warp busy (64 per SM), up to a lane per row */
  while (batch > 1 && A.nrows < batch * warps) batch /= 2;
  OceanKernelSketchEstimate<<<OceanGrid((A.nrows + batch - 1) / batch, OCEAN_ESTIMATE_WARPS), 32 * OCEAN_ESTIMATE_WARPS,
                              (size_t)OCEAN_ESTIMATE_WARPS * (size_t)batch * (size_t)registers>>>(A, d_sketches, registers, (int)batch, d_estimate);
  OCEAN_CUDA_LAUNCHED("sketch estimate");
  return OCEAN_SUCCESS;
}

/* ------------------------------------------------------------------------------------------------ scans, selections */

__global__ void OceanKernelGatherCounts(const int64_t *list, int64_t n, const int64_t *in, int64_t *out)
{
  OCEAN_GRID_STRIDE(j, n) out[j] = in[list ? list[j] : j];
}

__global__ void OceanKernelScatter(const int64_t *list, int64_t n, const int64_t *in, int64_t *out)
{
  OCEAN_GRID_STRIDE(j, n) out[list[j]] = in[j];
}

extern "C" OceanError OceanCudaScanCounts(OceanCudaDevice dev, const int64_t *d_list, int64_t n, const int64_t *d_in, int64_t *d_out, int64_t *d_scatter, int64_t *total)
{
  int64_t   *tmp = NULL;
  OceanTemp  temp(dev);
  size_t     bytes = 0;
  OceanError err;

  /* the input gathered into n + 1 entries (the last 0) so that the exclusive sum's last entry is the total */
  if ((err = OceanCudaAlloc(dev, (size_t)(n + 1) * sizeof(int64_t), (void **)&tmp))) return err;
  if (cudaMemsetAsync(tmp + n, 0, sizeof(int64_t), 0) != cudaSuccess) goto device_error;
  if (n) OceanKernelGatherCounts<<<OceanGrid(n, OCEAN_THREADS), OCEAN_THREADS>>>(d_list, n, d_in, tmp);
  if (cub::DeviceScan::ExclusiveSum(NULL, bytes, tmp, d_out, n + 1) != cudaSuccess || (err = temp.get(bytes)) ||
      cub::DeviceScan::ExclusiveSum(temp.ptr, bytes, tmp, d_out, n + 1) != cudaSuccess)
    goto device_error;
  if (d_scatter && n) OceanKernelScatter<<<OceanGrid(n, OCEAN_THREADS), OCEAN_THREADS>>>(d_list, n, d_out, d_scatter);
  if (total && (err = OceanCudaReadback(dev, total, d_out + n, sizeof(int64_t)))) goto device_error;
  OceanCudaFree(dev, tmp);
  return OCEAN_SUCCESS;
device_error:
  OceanCudaFree(dev, tmp);
  return err ? err : OceanSetError(OCEAN_ERR_DEVICE, "scan: %s", cudaGetErrorString(cudaGetLastError()));
}

__global__ void OceanKernelSlots(const OceanRoute *routes, int64_t n, int64_t *slots)
{
  OCEAN_GRID_STRIDE(i, n) slots[i] = routes[i].slot;
}

extern "C" OceanError OceanCudaScanSlots(OceanCudaDevice dev, const OceanRoute *d_routes, int64_t n, int64_t *d_out, int64_t *total)
{
  OceanError err;
  if (n) OceanKernelSlots<<<OceanGrid(n, OCEAN_THREADS), OCEAN_THREADS>>>(d_routes, n, d_out);
  OCEAN_CUDA_LAUNCHED("slots");
  err = OceanCudaScanCounts(dev, NULL, n, d_out, d_out, NULL, total); /* gathered into scratch first, so in place is fine */
  return err;
}

__global__ void OceanKernelListFlags(const int64_t *list, int64_t n, const uint8_t *flags, int64_t *rows, uint8_t *lflags)
{
  OCEAN_GRID_STRIDE(j, n)
  {
    const int64_t row = list ? list[j] : j;
    rows[j]           = row;
    lflags[j]         = flags[row];
  }
}

extern "C" OceanError OceanCudaSelectFlagged(OceanCudaDevice dev, const int64_t *d_list, int64_t n, const uint8_t *d_flags, int64_t *d_out, int64_t *nout)
{
  int64_t   *rows = NULL, *dn = NULL;
  uint8_t   *lf   = NULL;
  OceanTemp  temp(dev);
  size_t     bytes = 0;
  OceanError err;

  *nout = 0;
  if (n == 0) return OCEAN_SUCCESS;
  if ((err = OceanCudaAlloc(dev, (size_t)n * sizeof(int64_t), (void **)&rows)) || (err = OceanCudaAlloc(dev, (size_t)n, (void **)&lf)) ||
      (err = OceanCudaAlloc(dev, sizeof(int64_t), (void **)&dn)))
    goto done;
  OceanKernelListFlags<<<OceanGrid(n, OCEAN_THREADS), OCEAN_THREADS>>>(d_list, n, d_flags, rows, lf);
  if (cub::DeviceSelect::Flagged(NULL, bytes, rows, lf, d_out, dn, n) != cudaSuccess || (err = temp.get(bytes)) ||
      cub::DeviceSelect::Flagged(temp.ptr, bytes, rows, lf, d_out, dn, n) != cudaSuccess || (err = OceanCudaReadback(dev, nout, dn, sizeof(int64_t))))
    if (!err) err = OceanSetError(OCEAN_ERR_DEVICE, "select flagged rows: %s", cudaGetErrorString(cudaGetLastError()));
done:
  OceanCudaFree(dev, rows);
  OceanCudaFree(dev, lf);
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

extern "C" OceanError OceanCudaGather64(const int64_t *d_list, int64_t n, const int64_t *d_src, int64_t *d_dst)
{
  if (n == 0) return OCEAN_SUCCESS;
  OceanKernelGatherCounts<<<OceanGrid(n, OCEAN_THREADS), OCEAN_THREADS>>>(d_list, n, d_src, d_dst);
  OCEAN_CUDA_LAUNCHED("gather");
  return OCEAN_SUCCESS;
}

/* LANES threads per row copy its entries (short rows of C: several rows per warp); cols or vals NULL: not copied. */
template <int LANES>
__global__ void OceanKernelCompact(int64_t nrows, const int64_t *rowptr, const uint8_t *flags, const int64_t *offsets, const int32_t *bcols, const double *bvals,
                                   const int64_t *foffsets, const int32_t *fcols, const double *fvals, int32_t *cols, double *vals)
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

extern "C" OceanError OceanCudaCompact(int64_t nrows, int64_t nnz, const int64_t *d_rowptr, const uint8_t *d_flags, const int64_t *d_offsets, const int32_t *d_bcols,
                                       const double *d_bvals, const int64_t *d_foffsets, const int32_t *d_fcols, const double *d_fvals, int32_t *d_cols, double *d_vals)
{
  /* lanes per row by the rows' mean length: short rows leave fewer lanes idle */
  const auto launch = [&](auto kernel, int lanes) {
    kernel<<<OceanGrid(nrows * lanes, OCEAN_THREADS), OCEAN_THREADS>>>(nrows, d_rowptr, d_flags, d_offsets, d_bcols, d_bvals, d_foffsets, d_fcols, d_fvals, d_cols, d_vals);
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
  for (int64_t i = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5; i < nrows; i += ((int64_t)gridDim.x * blockDim.x) >> 5) {
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
extern "C" OceanError OceanCudaSortRows(OceanCudaDevice dev, int64_t nrows, int64_t nnz, const int64_t *d_rowptr, int32_t *d_cols, double *d_vals)
{
  OceanTemp  temp(dev);
  size_t     bytes = 0;
  uint8_t   *flags = NULL;
  int32_t   *cols_in = NULL;
  double    *vals_in = NULL;
  int64_t   *list = NULL, *begin = NULL, *end = NULL, nsort = 0;
  OceanError err   = OCEAN_SUCCESS;

  if (nnz == 0 || nrows == 0) return OCEAN_SUCCESS;
  if ((err = OceanCudaAlloc(dev, (size_t)nrows, (void **)&flags)) || (err = OceanCudaAlloc(dev, (size_t)nrows * sizeof(int64_t), (void **)&list))) goto done;
  OceanKernelUnsortedRows<<<OceanGrid(nrows * 32, OCEAN_THREADS), OCEAN_THREADS>>>(nrows, d_rowptr, d_cols, flags);
  if (cudaPeekAtLastError() != cudaSuccess) goto device_error;
  if ((err = OceanCudaSelectFlagged(dev, NULL, nrows, flags, list, &nsort))) goto done;
  if (nsort == 0) goto done;
  if ((err = OceanCudaAlloc(dev, (size_t)nsort * sizeof(int64_t), (void **)&begin)) || (err = OceanCudaAlloc(dev, (size_t)nsort * sizeof(int64_t), (void **)&end)) ||
      (err = OceanCudaAlloc(dev, (size_t)nnz * sizeof(int32_t), (void **)&cols_in)) || (err = OceanCudaAlloc(dev, (size_t)nnz * sizeof(double), (void **)&vals_in)))
    goto done;
  if (cudaMemcpyAsync(cols_in, d_cols, (size_t)nnz * sizeof(int32_t), cudaMemcpyDeviceToDevice, 0) != cudaSuccess ||
      cudaMemcpyAsync(vals_in, d_vals, (size_t)nnz * sizeof(double), cudaMemcpyDeviceToDevice, 0) != cudaSuccess)
    goto device_error;
  OceanKernelSegments<<<OceanGrid(nsort, OCEAN_THREADS), OCEAN_THREADS>>>(list, nsort, d_rowptr, begin, end);
  /* segments need not be contiguous; entries outside them are left as they are */
  if (cub::DeviceSegmentedSort::SortPairs(NULL, bytes, cols_in, d_cols, vals_in, d_vals, nnz, nsort, begin, end) != cudaSuccess || (err = temp.get(bytes)) ||
      cub::DeviceSegmentedSort::SortPairs(temp.ptr, bytes, cols_in, d_cols, vals_in, d_vals, nnz, nsort, begin, end) != cudaSuccess)
    goto device_error;
  goto done;
device_error:
  if (!err) err = OceanSetError(OCEAN_ERR_DEVICE, "row sort: %s", cudaGetErrorString(cudaGetLastError()));
done:
  OceanCudaFree(dev, flags);
  OceanCudaFree(dev, list);
  OceanCudaFree(dev, begin);
  OceanCudaFree(dev, end);
  OceanCudaFree(dev, cols_in);
  OceanCudaFree(dev, vals_in);
  return err;
}
