/*
  ocean_productmap.cu - the product map (OceanCudaProductMap) of a known structure: repeated numeric calls cheaper
  and their sums the same bits each time, without atomics.  The BLOCK rows (and SMALL and WARP when they are fewer)
  keep each product's position in C's row (2 bytes), found once by search; a warp per row then walks A and B and adds
  every product at its position in shared memory.  The other rows' products are listed by entry of C (their entries
  of A and B, 8 bytes), by the known-structure kernels run twice without values (count per entry, then list:
  ocean_known.cu); a numeric call over them is a gather and a segmented sum.  Measured on the H200 (bench_spgemm,
  numeric-only ms): walking every row of up to 1024 entries beat the gather on the 3D 27-point stencil (3.3 against
  4.7) and elasticity (7.9 against 9.7) and lost on the 2D 5-point one (1.1 against 0.74: a short row's chain of
  dependent loads is most of its time); rows of many products need a block and a fixed order across its warps, which
  the gather gives.  The two parts run side by side on two streams when they write disjoint entries of C (every entry
  outside the walked rows has listed products): on a web graph (NotreDame_www) they take about 57 and 81 us one
  after the other, neither filling the GPU.  The caller decides whether the map's bytes are worth it.
*/
#include <cub/cub.cuh>
#include <cuda_runtime.h>
#include "ocean_cuda.h"
#include "ocean_known.cuh"
#include "ocean_launch.cuh"
#include "ocean_rows.cuh"

#define OCEAN_MAP_WARPS    8
#define OCEAN_MAP_PER_LANE 4 /* consecutive products per lane in the entry kernel */
/* turns of 32 products a walking warp loads before it adds them (H200, numeric-only: 1.06x-1.09x on the real set and
   1.15x on the 3D stencils over one; four no faster, eight slower) */
#define OCEAN_MAP_TURNS 2
#define OCEAN_MAP_SHORT    ((1u << OCEAN_CUDA_KNOWN_SMALL) | (1u << OCEAN_CUDA_KNOWN_WARP))

/* The index arrays padded to a multiple of OCEAN_MAP_PER_LANE (the entry kernel loads 4 at once). */
static int64_t OceanMapPadded(int64_t products)
{
  return (products + OCEAN_MAP_PER_LANE - 1) / OCEAN_MAP_PER_LANE * OCEAN_MAP_PER_LANE;
}

/* Device bytes of the map: positions and row offsets of the walked rows, indices and entry offsets of the rest. */
static int64_t OceanMapBytes(int64_t walk_rows, int64_t walk_products, int64_t entry_products, int64_t nnz_c)
{
  int64_t bytes = (walk_rows + 1) * (int64_t)sizeof(int64_t) + walk_products * (int64_t)sizeof(uint16_t);
  if (entry_products)
    bytes += 2 * OceanMapPadded(entry_products) * (int64_t)sizeof(int32_t) +
             (nnz_c + 1) * (int64_t)(entry_products <= INT32_MAX ? sizeof(int32_t) : sizeof(int64_t));
  return bytes;
}

/* The walked rows' part: what their kernels read and write. */
struct OceanRowMapArgs {
  OceanDevCSR    A, B;
  const int64_t *list; /* rows */
  const int64_t *roff; /* their first products in pos (n + 1) */
  int64_t        n;
  const int64_t *rowptr; /* C */
  const int32_t *cols;   /* C (fill) */
  double        *vals;   /* C (values) */
  uint16_t      *pos;
  int           *missing;
};

/* Inclusive sum over a team of T lanes (T a power of two up to 32, aligned in its warp; sub the lane's rank). */
template <int T>
__device__ __forceinline__ int64_t OceanTeamInclusiveSum(int64_t x, int sub, unsigned mask)
{
  for (int o = 1; o < T; o <<= 1) {
    const int64_t y = __shfl_up_sync(mask, x, o, T);
    if (sub >= o) x += y;
  }
  return x;
}

/* Each walked row's product count, then (scanned) its first product in pos. */
__global__ void OceanKernelRowMapCounts(int64_t n, const int64_t *list, const OceanRowShape *shapes, int64_t *counts)
{
  OCEAN_GRID_STRIDE(j, n + 1) counts[j] = j < n ? shapes[list[j]].products : 0;
}

/* Positions: a warp per row, 32 entries of A at a time (their products' offsets by a prefix sum of their rows of B),
   each row of B walked by the warp, every column found in C's row. */
__global__ void __launch_bounds__(32 * OCEAN_MAP_WARPS) OceanKernelRowMapFill(OceanRowMapArgs a)
{
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;

  for (int64_t r = (int64_t)blockIdx.x * OCEAN_MAP_WARPS + w; r < a.n; r += (int64_t)gridDim.x * OCEAN_MAP_WARPS) {
    const int64_t i = a.list[r], cb = a.rowptr[i], L = a.rowptr[i + 1] - cb, tb = a.A.rowptr[i], te = a.A.rowptr[i + 1];
    const int64_t mend = a.roff[r + 1];
    int64_t       m    = a.roff[r];
    for (int64_t c = tb; c < te; c += 32) {
      const int64_t t  = c + lane;
      int64_t       bs = 0, len = 0;
      if (t < te) {
        const int32_t k = a.A.colidx[t];
        bs              = a.B.rowptr[k];
        len             = a.B.rowptr[k + 1] - bs;
      }
      const int64_t incl = OceanTeamInclusiveSum<32>(len, lane, OCEAN_FULL_MASK), seg = incl - len;
      const int     nt = (int)(te - c < 32 ? te - c : 32);
      for (int s = 0; s < nt; s++) {
        const int64_t sb = __shfl_sync(OCEAN_FULL_MASK, bs, s), sl = __shfl_sync(OCEAN_FULL_MASK, len, s);
        const int64_t so = m + __shfl_sync(OCEAN_FULL_MASK, seg, s);
        for (int64_t j = lane; j < sl; j += 32) {
          const int64_t p = OceanFindColumn(a.cols + cb, L, a.B.colidx[sb + j]);
          if (p < 0 || so + j >= mend) *a.missing = 1;
          else a.pos[so + j] = (uint16_t)p;
        }
      }
      m += __shfl_sync(OCEAN_FULL_MASK, incl, 31);
    }
    if (lane == 0 && m != mend) *a.missing = 1;
  }
}

/*
  Values of the walked rows: a warp per row sums it in `cap` doubles of shared memory (cap: the longest of these rows
  of C).  The warp takes 32 entries of A at a time: each lane loads one
  entry's row of B (start, length) and value, a prefix sum gives their products' offsets, and the lanes then take
  the chunk's products flat, one each in turn (the entry by binary search in the offsets), so every lane works
  whatever the lengths of B's rows, and the position in C's row comes from the map (row order: streamed like B's
  values).  Products of one entry of A have distinct positions; products of different entries may share one, so in
  each turn the entries present add one after another: every entry of C is summed in an order fixed by the
  structure (the same bits each call), without atomics.
*/
template <int U>
__global__ void __launch_bounds__(256) OceanKernelRowMapValues(OceanRowMapArgs a, int cap)
{
  extern __shared__ double ocean_rowmap_acc[];
  __shared__ int           ex_all[256]; /* per lane of the block: its entry's first product in the chunk */
  __shared__ int64_t       eb_all[256]; /* its entry's row of B */
  __shared__ double        ea_all[256]; /* its entry's value */
  constexpr int            T     = 32;
  constexpr unsigned       mask  = OCEAN_FULL_MASK;
  const int                warps = blockDim.x / T, sub = threadIdx.x % T, w = threadIdx.x / T;
  double                  *acc = ocean_rowmap_acc + (int64_t)w * cap;
  int                     *ex  = ex_all + w * T;
  int64_t                 *eb  = eb_all + w * T;
  double                  *ea  = ea_all + w * T;

  for (int64_t r = (int64_t)blockIdx.x * warps + w; r < a.n; r += (int64_t)gridDim.x * warps) {
    const int64_t i = a.list[r], cb = a.rowptr[i], tb = a.A.rowptr[i], te = a.A.rowptr[i + 1], mend = a.roff[r + 1];
    const int     L = (int)(a.rowptr[i + 1] - cb);
    int64_t       m = a.roff[r];
    for (int j = sub; j < L; j += T) acc[j] = 0.0;
    for (int64_t c = tb; c < te; c += T) {
      const int64_t t  = c + sub;
      int64_t       bs = 0, len = 0;
      double        av = 0.0;
      if (t < te) {
        const int32_t k = a.A.colidx[t];
        bs              = a.B.rowptr[k];
        len             = a.B.rowptr[k + 1] - bs;
        av              = a.A.values[t];
      }
      const int64_t incl = OceanTeamInclusiveSum<T>(len, sub, mask), all = __shfl_sync(mask, incl, T - 1, T);
      if (m + all > mend) { /* more products than the map's: the structure changed */
        if (sub == 0) *a.missing = 1;
        break;
      }
      const int total = (int)all; /* a walked row has at most OCEAN_KNOWN_WARP_PRODUCTS products */
      ex[sub]         = (int)(incl - len);
      eb[sub]         = bs;
      ea[sub]         = av;
      __syncwarp(mask);
      for (int p0 = 0; p0 < total; p0 += U * T) {
        int    e[U], pos[U];
        double v[U];
        /* U turns' loads issued before any of their adds: the map's positions and B's values are the latency */
#pragma unroll
        for (int u = 0; u < U; u++) {
          const int p = p0 + u * T + sub;
          e[u]        = 0; /* the last entry starting at or before p: it has products, so p is one of them */
          for (int step = T / 2; step > 0; step >>= 1)
            if (ex[e[u] + step] <= p) e[u] += step;
          pos[u] = 0;
          v[u]   = 0.0;
          if (p < total) {
            pos[u] = a.pos[m + p];
            v[u]   = a.B.values[eb[e[u]] + (p - ex[e[u]])];
          }
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
          const int q0 = p0 + u * T;
          if (q0 >= total) break;
          const bool on      = q0 + sub < total;
          const int  last    = (total - q0 < T ? total - q0 : T) - 1; /* the turn's last lane with a product */
          const int  e_first = __shfl_sync(mask, e[u], 0, T), e_end = __shfl_sync(mask, e[u], last, T);
          if (on) v[u] *= ea[e[u]];
          if (e_first == e_end) {
            if (on) acc[pos[u]] += v[u];
          } else
            for (int s = e_first; s <= e_end; s++) {
              if (on && e[u] == s) acc[pos[u]] += v[u];
              __syncwarp(mask);
            }
          __syncwarp(mask);
        }
      }
      m += total;
    }
    __syncwarp(mask);
    if (sub == 0 && m != mend) *a.missing = 1;
    for (int j = sub; j < L; j += T) a.vals[cb + j] = acc[j];
    __syncwarp(mask);
  }
}

/* The longest row of C among the walked rows (the values kernel's sums per warp). */
__global__ void OceanKernelRowMapLongest(int64_t n, const int64_t *list, const int64_t *rowptr, int *longest)
{
  OCEAN_GRID_STRIDE(j, n) atomicMax(longest, (int)(rowptr[list[j] + 1] - rowptr[list[j]]));
}

/* The exclusive sum of the counts (n + 1 of them, the last 0) into offsets (Offset: int32_t when every product's
   index fits, else int64_t); *total = offsets[n]. */
template <typename Count, typename Offset>
static OceanError OceanMapOffsets(OceanCudaDevice dev, const Count *counts, int64_t n, Offset *offsets, int64_t *total)
{
  OceanTemp  temp(dev);
  size_t     bytes = 0;
  Offset     last  = 0;
  OceanError err;

  OCEAN_CUDA_TRY(cub::DeviceScan::ExclusiveScan(NULL, bytes, counts, offsets, ::cuda::std::plus<>{}, (Offset)0, n + 1));
  if ((err = temp.get(bytes))) return err;
  OCEAN_CUDA_TRY(
    cub::DeviceScan::ExclusiveScan(temp.ptr, bytes, counts, offsets, ::cuda::std::plus<>{}, (Offset)0, n + 1));
  if ((err = OceanCudaReadback(dev, &last, offsets + n, sizeof(Offset)))) return err;
  *total = (int64_t)last;
  return OCEAN_SUCCESS;
}

/* The classes of rows the map walks: BLOCK, and SMALL and WARP when they are fewer (a few short rows, like a 3D
   27-point stencil's boundary, would otherwise make the entry kernel run over all of C: it writes every entry), and
   where the walked rows begin in the plan's list (its classes SMALL, WARP, BLOCK come first, in that order). */
static unsigned OceanMapWalked(const OceanCudaKnownPlan *plan)
{
  const int64_t shorts = plan->count[OCEAN_CUDA_KNOWN_SMALL] + plan->count[OCEAN_CUDA_KNOWN_WARP];
  return (1u << OCEAN_CUDA_KNOWN_BLOCK) | (shorts <= plan->count[OCEAN_CUDA_KNOWN_BLOCK] ? OCEAN_MAP_SHORT : 0u);
}
static int64_t OceanMapWalkStart(const OceanCudaKnownPlan *plan)
{
  static_assert(OCEAN_CUDA_KNOWN_SMALL == 0 && OCEAN_CUDA_KNOWN_WARP == 1 && OCEAN_CUDA_KNOWN_BLOCK == 2,
                "the walked classes lead the plan");
  const int64_t shorts = plan->count[OCEAN_CUDA_KNOWN_SMALL] + plan->count[OCEAN_CUDA_KNOWN_WARP];
  return OceanMapWalked(plan) & OCEAN_MAP_SHORT ? 0 : shorts;
}
static int64_t OceanMapWalkRows(const OceanCudaKnownPlan *plan)
{
  const int64_t walkable =
    plan->count[OCEAN_CUDA_KNOWN_SMALL] + plan->count[OCEAN_CUDA_KNOWN_WARP] + plan->count[OCEAN_CUDA_KNOWN_BLOCK];
  return walkable - OceanMapWalkStart(plan);
}

/* The walked rows' first products (map->roff) and their total; nothing else allocated. */
static OceanError OceanMapBlockOffsets(OceanCudaDevice dev, const OceanCudaKnownPlan *plan,
                                       const OceanRowShape *d_shapes, OceanCudaProductMap *map)
{
  int64_t   *counts = NULL;
  OceanError err;

  map->walk_rows = OceanMapWalkRows(plan);
  if ((err = OceanCudaAlloc(dev, (size_t)(map->walk_rows + 1) * sizeof(int64_t), (void **)&map->roff))) return err;
  if ((err = OceanCudaAlloc(dev, (size_t)(map->walk_rows + 1) * sizeof(int64_t), (void **)&counts))) return err;
  OceanKernelRowMapCounts<<<OceanGrid(map->walk_rows + 1, OCEAN_THREADS), OCEAN_THREADS>>>(
    map->walk_rows, plan->rows + OceanMapWalkStart(plan), d_shapes, counts);
  err = OceanCudaCheck(cudaGetLastError(), "product map: row counts launch");
  if (!err) err = OceanMapOffsets(dev, counts, map->walk_rows, map->roff, &map->walk_products);
  OceanCudaFree(dev, counts);
  return err;
}

/* The longer rows' part: their products counted per entry of C, then listed by entry. */
static OceanError OceanMapEntriesCreate(OceanCudaDevice dev, const OceanCudaKnownPlan *plan, OceanKnownArgs a,
                                        OceanCudaProductMap *map)
{
  const int64_t nnz_c = map->nnz, products = map->entry_products, padded = OceanMapPadded(products);
  const int     narrow = products <= INT32_MAX;
  int64_t       listed = 0;
  OceanError    err;

  /* about 128 products per warp's entries (4 per lane) */
  map->entries_per_warp = nnz_c && products >= 3 * nnz_c ? 32 : nnz_c && 2 * products >= 3 * nnz_c ? 64 : 128;
  /* the counts get one more entry (0) so that the exclusive sum ends with the total */
  if ((err = OceanCudaAlloc(dev, (size_t)(nnz_c + 1) * sizeof(int32_t), (void **)&a.cursor))) goto done;
  if (narrow) err = OceanCudaAlloc(dev, (size_t)(nnz_c + 1) * sizeof(int32_t), (void **)&map->eptr32);
  else err = OceanCudaAlloc(dev, (size_t)(nnz_c + 1) * sizeof(int64_t), (void **)&map->eptr);
  if (err) goto done;
  err = OceanCudaCheck(cudaMemsetAsync(a.cursor, 0, (size_t)(nnz_c + 1) * sizeof(int32_t), 0), "product map: memset");
  if (err) goto done;
  if ((err = OceanKnownRun<OCEAN_KNOWN_COUNT>(dev, plan, OCEAN_KNOWN_ALL & ~OceanMapWalked(plan), a, NULL))) goto done;
  err = narrow ? OceanMapOffsets(dev, a.cursor, nnz_c, map->eptr32, &listed)
               : OceanMapOffsets(dev, a.cursor, nnz_c, map->eptr, &listed);
  if (err) goto done;
  if (listed != products) {
    err = OceanSetError(OCEAN_ERR_STATE, "product map: %lld products counted into the long rows of C, %lld expected",
                        (long long)listed, (long long)products);
    goto done;
  }
  if ((err = OceanCudaAlloc(dev, (size_t)padded * sizeof(int32_t), (void **)&map->aidx))) goto done;
  if ((err = OceanCudaAlloc(dev, (size_t)padded * sizeof(int32_t), (void **)&map->bidx))) goto done;
  err = OceanCudaCheck(cudaMemsetAsync(a.cursor, 0, (size_t)nnz_c * sizeof(int32_t), 0), "product map: memset");
  if (err) goto done;
  if (padded > products &&
      ((err = OceanCudaCheck(cudaMemsetAsync(map->aidx + products, 0, (size_t)(padded - products) * sizeof(int32_t), 0),
                             "product map: memset")) ||
       (err = OceanCudaCheck(cudaMemsetAsync(map->bidx + products, 0, (size_t)(padded - products) * sizeof(int32_t), 0),
                             "product map: memset"))))
    goto done;
  a.eptr   = map->eptr;
  a.eptr32 = map->eptr32;
  a.aidx   = map->aidx;
  a.bidx   = map->bidx;
  err      = OceanKnownRun<OCEAN_KNOWN_FILL>(dev, plan, OCEAN_KNOWN_ALL & ~OceanMapWalked(plan), a, NULL);
done:
  OceanCudaFree(dev, a.cursor);
  return err;
}

static OceanRowMapArgs OceanRowMapArgsMake(const OceanCudaKnownPlan *plan, const OceanCudaProductMap *map,
                                           OceanDevCSR A, OceanDevCSR B, const int64_t *d_rowptr, int *missing)
{
  OceanRowMapArgs a;
  memset(&a, 0, sizeof(a));
  a.A       = A;
  a.B       = B;
  a.list    = plan->rows + OceanMapWalkStart(plan);
  a.roff    = map->roff;
  a.n       = map->walk_rows;
  a.rowptr  = d_rowptr;
  a.pos     = map->pos;
  a.missing = missing;
  return a;
}

/* Entries of C without listed products, less the walked rows' entries (which have none): 0 when every other entry has
   some, so that the entry kernel may leave the walked rows' entries to their own kernel. */
template <typename Offset>
__global__ void OceanKernelMapUnlisted(int64_t nnz, const Offset *eptr, int64_t walk_rows, const int64_t *list,
                                       const int64_t *rowptr, unsigned long long *excess)
{
  unsigned long long mine = 0;
  OCEAN_GRID_STRIDE(j, nnz + walk_rows)
  {
    if (j < nnz) mine += eptr[j] == eptr[j + 1];
    else mine -= (unsigned long long)(rowptr[list[j - nnz] + 1] - rowptr[list[j - nnz]]);
  }
  if (mine) atomicAdd(excess, mine); /* modulo 2^64: the sum is exact when it is 0 */
}

static OceanError OceanMapSideBySide(OceanCudaDevice dev, const OceanCudaKnownPlan *plan, const int64_t *d_rowptr,
                                     OceanCudaProductMap *map)
{
  OceanTemp          excess(dev);
  unsigned long long found = 1;
  const int64_t      n     = map->nnz + map->walk_rows;
  OceanError         err;

  map->side_by_side = 0;
  if (!map->walk_rows || !map->entry_products) return OCEAN_SUCCESS;
  if ((err = excess.get(sizeof(found)))) return err;
  OCEAN_CUDA_TRY(cudaMemsetAsync(excess.ptr, 0, sizeof(found), 0));
  if (map->eptr32)
    OceanKernelMapUnlisted<<<OceanGrid(n, OCEAN_THREADS), OCEAN_THREADS>>>(
      map->nnz, map->eptr32, map->walk_rows, plan->rows + OceanMapWalkStart(plan), d_rowptr,
      (unsigned long long *)excess.ptr);
  else
    OceanKernelMapUnlisted<<<OceanGrid(n, OCEAN_THREADS), OCEAN_THREADS>>>(
      map->nnz, map->eptr, map->walk_rows, plan->rows + OceanMapWalkStart(plan), d_rowptr,
      (unsigned long long *)excess.ptr);
  OCEAN_CUDA_LAUNCHED("product map: unlisted entries kernel");
  if ((err = OceanCudaReadback(dev, &found, excess.ptr, sizeof(found)))) return err;
  map->side_by_side = found == 0;
  return OCEAN_SUCCESS;
}

extern "C" OceanError OceanCudaProductMapCreate(OceanCudaDevice dev, const OceanCudaKnownPlan *plan, OceanDevCSR A,
                                                OceanDevCSR B, const OceanRowShape *d_shapes, int64_t nnz_c,
                                                const int64_t *d_rowptr, const int32_t *d_colidx, int64_t products,
                                                int64_t max_bytes, OceanCudaProductMap *map)
{
  OceanDeviceFlag missing(dev);
  int             raised = 0;
  int64_t         bytes;
  OceanError      err;

  memset(map, 0, sizeof(*map));
  map->nnz      = nnz_c;
  map->products = products;
  if ((err = OceanMapBlockOffsets(dev, plan, d_shapes, map))) goto done;
  map->entry_products = products - map->walk_products;
  if (map->entry_products < 0) {
    err = OceanSetError(OCEAN_ERR_STATE, "product map: the walked rows of C have %lld products, more than all %lld",
                        (long long)map->walk_products, (long long)products);
    goto done;
  }
  bytes = OceanMapBytes(map->walk_rows, map->walk_products, map->entry_products, nnz_c);
  if (bytes > max_bytes) {
    OceanCudaProductMapDestroy(dev, map); /* too large: the numeric calls search C's rows */
    return OCEAN_SUCCESS;
  }
  if ((err = missing.init("product map"))) goto done;
  map->walk_cap = OCEAN_KNOWN_WARP_MAX;
  if (map->walk_rows) { /* the values kernel's warps hold the longest of them */
    OceanDeviceFlag longest(dev);
    int             cap = 0;
    if ((err = longest.init("product map"))) goto done;
    OceanKernelRowMapLongest<<<OceanGrid(map->walk_rows, OCEAN_THREADS), OCEAN_THREADS>>>(
      map->walk_rows, plan->rows + OceanMapWalkStart(plan), d_rowptr, longest.d);
    if ((err = OceanCudaCheck(cudaGetLastError(), "product map: longest row kernel launch"))) goto done;
    if ((err = longest.read(&cap))) goto done;
    map->walk_cap = cap > OCEAN_KNOWN_WARP_MAX ? cap : OCEAN_KNOWN_WARP_MAX;
  }
  if (map->walk_products) {
    OceanRowMapArgs a;
    if ((err = OceanCudaAlloc(dev, (size_t)map->walk_products * sizeof(uint16_t), (void **)&map->pos))) goto done;
    a      = OceanRowMapArgsMake(plan, map, A, B, d_rowptr, missing.d);
    a.cols = d_colidx;
    OceanKernelRowMapFill<<<OceanGrid(a.n, OCEAN_MAP_WARPS), 32 * OCEAN_MAP_WARPS>>>(a);
    if ((err = OceanCudaCheck(cudaGetLastError(), "product map: positions kernel launch"))) goto done;
  }
  if (map->entry_products &&
      (err = OceanMapEntriesCreate(dev, plan, OceanKnownArgsMake(A, B, d_shapes, d_rowptr, d_colidx), map)))
    goto done;
  if ((err = OceanMapSideBySide(dev, plan, d_rowptr, map))) goto done;
  if ((err = missing.read(&raised))) goto done;
  if (raised)
    err = OceanSetError(OCEAN_ERR_STATE, "numeric into a known structure: a product falls outside the structure of C "
                                         "(the operands' structure changed)");
  map->bytes = bytes;
done:
  if (err) OceanCudaProductMapDestroy(dev, map);
  return err;
}

extern "C" void OceanCudaProductMapDestroy(OceanCudaDevice dev, OceanCudaProductMap *map)
{
  OceanCudaFree(dev, map->roff);
  OceanCudaFree(dev, map->pos);
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
template <int E, typename Offset, bool ListedOnly>
__global__ void __launch_bounds__(32 * OCEAN_MAP_WARPS)
  OceanKernelMapValues(int64_t nnz, const Offset *eptr, const int32_t *aidx, const int32_t *bidx, const double *avals,
                       const double *bvals, double *cvals)
{
  constexpr int      P = OCEAN_MAP_PER_LANE;
  __shared__ int64_t first_all[OCEAN_MAP_WARPS][E + 1];
  __shared__ double  sums_all[OCEAN_MAP_WARPS][E];
  const int          lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  int64_t           *first = first_all[w];
  double            *sums  = sums_all[w];

  for (int64_t e0 = ((int64_t)blockIdx.x * OCEAN_MAP_WARPS + w) * E; e0 < nnz;
       e0 += (int64_t)gridDim.x * OCEAN_MAP_WARPS * E) {
    const int ne = (int)(nnz - e0 < E ? nnz - e0 : E);
    /* entries past the last start at the end */
    for (int j = lane; j <= E; j += 32) first[j] = (int64_t)eptr[e0 + (j < ne ? j : ne)];
    for (int j = lane; j < E; j += 32) sums[j] = 0.0;
    __syncwarp();
    const int64_t kb = first[0], ke = first[E];
    for (int64_t k0 = kb & ~(int64_t)(P - 1); k0 < ke; k0 += 32 * P) {
      const int64_t ks  = k0 + (int64_t)lane * P;
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
      /* the lanes' last pieces (entry cur): a segmented scan; a segment starts at a lane whose last piece begins in
         it */
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
    for (int j = lane; j < ne; j += 32)
      if (!ListedOnly || first[j] < first[j + 1]) cvals[e0 + j] = sums[j];
    __syncwarp();
  }
}

template <bool ListedOnly, typename Offset>
static void OceanMapValuesLaunch(const OceanCudaProductMap *map, const Offset *eptr, const double *d_avals,
                                 const double *d_bvals, double *d_cvals)
{
  const int64_t n = map->nnz;
  if (map->entries_per_warp == 128)
    OceanKernelMapValues<128, Offset, ListedOnly><<<OceanGrid((n + 127) / 128, OCEAN_MAP_WARPS), 32 * OCEAN_MAP_WARPS>>>(
      n, eptr, map->aidx, map->bidx, d_avals, d_bvals, d_cvals);
  else if (map->entries_per_warp == 64)
    OceanKernelMapValues<64, Offset, ListedOnly><<<OceanGrid((n + 63) / 64, OCEAN_MAP_WARPS), 32 * OCEAN_MAP_WARPS>>>(
      n, eptr, map->aidx, map->bidx, d_avals, d_bvals, d_cvals);
  else
    OceanKernelMapValues<32, Offset, ListedOnly><<<OceanGrid((n + 31) / 32, OCEAN_MAP_WARPS), 32 * OCEAN_MAP_WARPS>>>(
      n, eptr, map->aidx, map->bidx, d_avals, d_bvals, d_cvals);
}

template <bool ListedOnly>
static void OceanMapValuesLaunch(const OceanCudaProductMap *map, const double *d_avals, const double *d_bvals,
                                 double *d_cvals)
{
  if (map->eptr32) OceanMapValuesLaunch<ListedOnly>(map, map->eptr32, d_avals, d_bvals, d_cvals);
  else OceanMapValuesLaunch<ListedOnly>(map, map->eptr, d_avals, d_bvals, d_cvals);
}

extern "C" OceanError OceanCudaNumericMap(OceanCudaDevice dev, const OceanCudaKnownPlan *plan,
                                          const OceanCudaProductMap *map, OceanDevCSR A, OceanDevCSR B,
                                          const OceanRowShape *d_shapes, const int64_t *d_rowptr, double *d_cvals,
                                          int *d_check)
{
  cudaStream_t walk_stream = 0;
  OceanError   err;

  (void)d_shapes;
  if (map->nnz == 0) return OCEAN_SUCCESS;
  /* the two parts write disjoint entries when side by side; else the entry kernel writes every entry of C (0 in the
     walked rows') and goes first */
  if (map->side_by_side && (err = OceanCudaForkStreams(dev, 1, &walk_stream))) return err;
  if (map->entry_products) {
    if (map->side_by_side) OceanMapValuesLaunch<true>(map, A.values, B.values, d_cvals);
    else OceanMapValuesLaunch<false>(map, A.values, B.values, d_cvals);
    OCEAN_CUDA_LAUNCHED("product map values (by entry)");
  }
  if (map->walk_rows) {
    OceanRowMapArgs a = OceanRowMapArgsMake(plan, map, A, B, d_rowptr, d_check);
    /* the sums and the lanes' 5 KB within the 48 KB of a plain launch */
    const int warps = map->walk_cap > 640 ? 4 : 8;
    a.vals          = d_cvals;
    OceanKernelRowMapValues<OCEAN_MAP_TURNS>
      <<<OceanGrid(a.n, warps), 32 * warps, (size_t)warps * map->walk_cap * sizeof(double), walk_stream>>>(
        a, map->walk_cap);
    OCEAN_CUDA_LAUNCHED("product map values (walked rows)");
  }
  return map->side_by_side ? OceanCudaJoinStreams(dev, 1) : OCEAN_SUCCESS;
}
