/*
  ocean_heavy.cu - heavy rows the gMAGNUS way (OCEAN_BIN_HEAVY, OCEAN_ACC_MULTISPLIT): rows too heavy for a
  shared-memory accumulator are expanded into their intermediate products, split by a hierarchical multisplit into
  column chunks small enough for one, and each chunk is summed in shared memory.

  The heavy rows of a call are taken in batches whose products fit the device memory.  In a batch:
    entries    the rows' entries of A whose row of B is not empty, with their product offsets (a flattened index space
               of the batch's products: the outer product's static partition, equal products per block)
    histogram  each row's count per chunk of level 0: a block per row sums its entries' runs of B (a row of B as runs
               of columns of one chunk, listed once per call) in shared memory; with more than HEAVY_ROW_HIST_MAX
               chunks a row (and at later levels) each block generates its products' columns and counts them, one
               global atomic per nonempty chunk; a prefix sum gives every chunk its place
    expand     the same blocks generate their products with values, permute them by chunk in shared memory and write
               each chunk's run where the block reserved it (coalesced): the products arrive split (level 0)
    levels     a chunk with more elements than tau (the hash a block holds) and not of the last level is split again,
               from one buffer into the other within its own range, by the same two kernels over a flattened space of
               such chunks; a chunk's elements never leave the range of the chunk it came from, so the outputs of the
               chunks already summed are left alone
    accumulate every chunk of the last level densely (values + bitmap: its columns fit; a block a chunk, a warp a
               chunk of at most HEAVY_WARP_MAX elements), a lighter chunk of an earlier level (at most tau elements) in
               a shared hash (four table sizes, by elements); sorted output written straight into C where the exact
               workflow's symbolic pass counted the row by cells (OceanHeavyCells: the entries before the chunk's first
               column are known), else over the chunk's first elements
    assembly   the rows' counts from their chunks' outputs (a chunk written into C must have its cells' count); the
               chunks not written into C sorted by (row, first column), their outputs copied one after another into
               the row's slot.  A symbolic pass with cells instead puts each chunk's count in the row's record
               (OceanHeavyCells), so the numeric pass writes that row in place too
  Decisions (heavy rows, tau, chunk widths, levels, which chunk is summed how) are the CPU backend's: core/rules.h
  (OceanRouteRowBins, OceanHeavyPlanLevels, OceanHeavyChunkOf) and the HEAVY bin's configuration.  Sums use atomics:
  their last bits depend on the schedule, as the other shared-memory accumulators'.
*/
#include <cooperative_groups.h>
#include <cub/cub.cuh>
#include <cuda_runtime.h>
#include "ocean_cuda.h"
#include "ocean_launch.cuh"
#include "ocean_team.cuh"
#include <vector>

#define HEAVY_CALL(expr) \
  do { \
    const OceanError heavy_err_ = (expr); \
    if (heavy_err_ != OCEAN_SUCCESS) return heavy_err_; \
  } while (0)

#define HEAVY_E   OCEAN_HEAVY_SPLIT_ELEMENTS /* elements per block of the split kernels */
#define HEAVY_T   256                        /* their threads */
#define HEAVY_PER (HEAVY_E / HEAVY_T)
static_assert(HEAVY_E % HEAVY_T == 0, "the split kernels' elements must be a multiple of their threads");

/* Hash classes of the accumulation (elements at most, table slots, threads), the dense class after them (a block a
   chunk) and the last level's small chunks (at most HEAVY_WARP_MAX elements: a warp a chunk, no block barriers). */
#define HEAVY_CLASSES  6
#define HEAVY_DENSE    4
#define HEAVY_WARP     5
#define HEAVY_WARP_MAX 256
/* level 0's histogram by runs of B when a row's chunk counts (8 bytes each) fit a block's shared memory */
#define HEAVY_ROW_HIST_MAX 4096
__host__ __device__ __forceinline__ int64_t OceanHeavyClassMax(int cl)
{
  return cl == 0 ? 256 : cl == 1 ? 1024 : cl == 2 ? 4096 : INT64_MAX;
}

/* A chunk: its elements [start, start + n) in the buffer of its level's parity, out entries after accumulation,
   written at dest in C (its row's cells were counted: OceanHeavyInPlace) or, dest -1, over its first elements. */
struct OceanHeavySeg {
  int64_t start, n, out, dest;
  int32_t row;     /* the batch's row */
  int32_t colbase; /* first column of the chunk */
  int32_t level;
  int32_t pad;
};

/* One flattened index space of a split pass: items (entries of A at level 0, chunks after) each with a run of
   elements; an element p of item j is src[base[j] + p - pos[j]] (times aval[j] at level 0). */
struct OceanHeavySplitArgs {
  int64_t             total, nitems;
  const int64_t      *item_pos; /* nitems + 1 */
  const int64_t      *item_base;
  const double       *item_aval; /* NULL: 1 */
  const int32_t      *item_unit; /* the row (level 0) or the chunk whose elements these are */
  const int64_t      *window;    /* the items holding each block's first and last elements (OceanKernelHeavyWindows) */
  const int32_t      *src_col;
  const double       *src_val; /* NULL: symbolic */
  int32_t            *dst_col;
  double             *dst_val;
  OceanHeavyLevels    L;
  int                 level;
  int64_t             nc; /* chunks a unit is split into */
  unsigned long long *counts, *cursor;
  int                 nbins; /* bins the shared-memory histogram holds */
};

static size_t OceanHeavySplitSmem(int nbins)
{
  return (size_t)HEAVY_E * OCEAN_HEAVY_SPLIT_BYTES_PER_ELEMENT + 8 + (size_t)nbins * 16;
}

/* PASS 0 counts the elements of every (unit, chunk); PASS 1 moves them to the places reserved from cursor. */
template <int PASS>
__global__ void __launch_bounds__(HEAVY_T) OceanKernelHeavySplit(OceanHeavySplitArgs a)
{
  extern __shared__ double                  heavy_smem[];
  typedef cub::BlockScan<unsigned, HEAVY_T> Scan;
  __shared__ typename Scan::TempStorage     scan_tmp;
  int64_t                                  *w_pos  = (int64_t *)heavy_smem;
  int64_t                                  *w_base = w_pos + HEAVY_E + 1;
  double                                   *w_aval = (double *)(w_base + HEAVY_E);
  uint64_t                                 *gbase  = (uint64_t *)(w_aval + HEAVY_E);
  double                                   *s_val  = (double *)(gbase + a.nbins);
  int32_t                                  *w_unit = (int32_t *)(s_val + HEAVY_E);
  unsigned                                 *cnt    = (unsigned *)(w_unit + HEAVY_E);
  unsigned                                 *lofs   = cnt + a.nbins;
  int32_t                                  *s_col  = (int32_t *)(lofs + a.nbins);
  int32_t                                  *s_bin  = s_col + HEAVY_E;

  const int64_t start = (int64_t)blockIdx.x * HEAVY_E, end = min(start + HEAVY_E, a.total);
  const bool    numeric = a.src_val != NULL;
  if (start >= end) return;
  /* one barrier before the elements: the window read by every thread, the whole histogram cleared whether or not
     the block's bins turn out to fit it */
  const int64_t e0 = a.window[2 * blockIdx.x];
  const int     W  = (int)(a.window[2 * blockIdx.x + 1] - e0 + 1); /* items are not empty: at most HEAVY_E */
  for (int j = threadIdx.x; j < W; j += HEAVY_T) {
    w_pos[j]  = a.item_pos[e0 + j];
    w_base[j] = a.item_base[e0 + j];
    w_aval[j] = a.item_aval ? a.item_aval[e0 + j] : 1.0;
    w_unit[j] = a.item_unit[e0 + j];
  }
  for (int b = threadIdx.x; b < a.nbins; b += HEAVY_T) cnt[b] = 0;
  __syncthreads();
  const int64_t u0 = w_unit[0], nb = (int64_t)(w_unit[W - 1] - w_unit[0] + 1) * a.nc;
  const bool    local = nb <= a.nbins;

  /* each thread HEAVY_PER consecutive elements: one search for the first, the rest walk on (the warp's loads still
     cover 32 x HEAVY_PER consecutive elements) */
  int32_t col[HEAVY_PER];
  double  val[HEAVY_PER];
  int64_t bin[HEAVY_PER]; /* the block's bin, or the global one when the histogram does not fit; -1: none */
  {
    const int64_t p0 = start + (int64_t)threadIdx.x * HEAVY_PER;
    int           j  = 0;
    if (p0 < end) {
      int lo = 0, hi = W - 1;
      while (lo < hi) {
        const int mid = (lo + hi + 1) >> 1;
        if (w_pos[mid] <= p0) lo = mid;
        else hi = mid - 1;
      }
      j = lo;
    }
#pragma unroll
    for (int k = 0; k < HEAVY_PER; k++) {
      const int64_t p = p0 + k;
      bin[k]          = -1;
      if (p >= end) continue;
      while (j + 1 < W && w_pos[j + 1] <= p) j++;
      const int64_t idx = w_base[j] + (p - w_pos[j]);
      col[k]            = a.src_col[idx];
      val[k]            = numeric ? w_aval[j] * a.src_val[idx] : 0.0;
      const int64_t c   = OceanHeavyChunkOf(&a.L, a.level, col[k]);
      bin[k]            = local ? (w_unit[j] - u0) * a.nc + c : (int64_t)w_unit[j] * a.nc + c;
    }
  }
  if (!local) { /* many small units in one block: straight to global memory */
#pragma unroll
    for (int k = 0; k < HEAVY_PER; k++) {
      if (bin[k] < 0) continue;
      if (PASS == 0) atomicAdd(&a.counts[bin[k]], 1ULL);
      else {
        const int64_t g = (int64_t)atomicAdd(&a.cursor[bin[k]], 1ULL);
        a.dst_col[g]    = col[k];
        if (numeric) a.dst_val[g] = val[k];
      }
    }
    return;
  }
  /* the local histogram: a warp's equal bins counted once (few chunks per block: one counter would serialize them);
     rank[k] the element's place among its warp's equal bins, base the warp's run (PASS 1) */
  const unsigned lt = (1u << (threadIdx.x & 31)) - 1u;
  unsigned       rank[HEAVY_PER];
#pragma unroll
  for (int k = 0; k < HEAVY_PER; k++) {
    const unsigned peers = __match_any_sync(OCEAN_FULL_MASK, (int)bin[k]); /* local bins fit an int (-1: none) */
    rank[k]              = __popc(peers & lt);
    if (bin[k] >= 0 && rank[k] == 0) atomicAdd(&cnt[bin[k]], (unsigned)__popc(peers));
  }
  __syncthreads();
  if (PASS == 0) {
    for (int64_t b = threadIdx.x; b < nb; b += HEAVY_T)
      if (cnt[b]) atomicAdd(&a.counts[u0 * a.nc + b], (unsigned long long)cnt[b]);
    return;
  }
  /* the block's bins in order: local offsets (a scan of contiguous ranges of bins) and the global runs reserved */
  {
    const int64_t per = (nb + HEAVY_T - 1) / HEAVY_T, b0 = min((int64_t)threadIdx.x * per, nb), b1 = min(b0 + per, nb);
    unsigned      sum = 0, before;
    for (int64_t b = b0; b < b1; b++) sum += cnt[b];
    Scan(scan_tmp).ExclusiveSum(sum, before);
    for (int64_t b = b0; b < b1; b++) {
      lofs[b] = before;
      before += cnt[b];
      gbase[b] = cnt[b] ? atomicAdd(&a.cursor[u0 * a.nc + b], (unsigned long long)cnt[b]) : 0;
      cnt[b]   = 0;
    }
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < HEAVY_PER; k++) {
    const unsigned peers  = __match_any_sync(OCEAN_FULL_MASK, (int)bin[k]);
    const int      leader = __ffs(peers) - 1;
    unsigned       base   = 0;
    if (bin[k] >= 0 && rank[k] == 0) base = atomicAdd(&cnt[bin[k]], (unsigned)__popc(peers));
    base = __shfl_sync(OCEAN_FULL_MASK, base, leader);
    if (bin[k] < 0) continue;
    const unsigned q = lofs[bin[k]] + base + rank[k];
    s_col[q]         = col[k];
    s_val[q]         = val[k];
    s_bin[q]         = (int32_t)bin[k];
  }
  __syncthreads();
  for (int q = threadIdx.x; q < end - start; q += HEAVY_T) {
    const int     b = s_bin[q];
    const int64_t g = (int64_t)gbase[b] + (q - lofs[b]);
    a.dst_col[g]    = s_col[q];
    if (numeric) a.dst_val[g] = s_val[q];
  }
}

/* ------------------------------------------------------------------------------------------------ batch setup */

/* q[h] = products of the listed row h0 + h */
__global__ void OceanKernelHeavyProducts(const int64_t *list, int64_t n, const OceanRowShape *shapes, int64_t *q)
{
  OCEAN_GRID_STRIDE(h, n) q[h] = shapes[list[h]].products;
}

/* window[2b], window[2b + 1] = the items holding the first and the last element of split block b (items are not
   empty, so each element is in one): every block finds its items with two loads instead of a search over all. */
__global__ void OceanKernelHeavyWindows(const int64_t *pos, int64_t nitems, int64_t nblocks, int64_t *window)
{
  OCEAN_GRID_STRIDE(j, nitems)
  {
    /* blocks starting in the item: b * HEAVY_E in [pos[j], pos[j + 1]); ending in it: (b + 1) * HEAVY_E - 1 too */
    const int64_t f1 = OceanMin64((pos[j + 1] - 1) / HEAVY_E, nblocks - 1);
    const int64_t l1 = OceanMin64(pos[j + 1] / HEAVY_E - 1, nblocks - 2);
    for (int64_t b = (pos[j] + HEAVY_E - 1) / HEAVY_E; b <= f1; b++) window[2 * b] = j;
    for (int64_t b = (pos[j] + HEAVY_E) / HEAVY_E - 1; b <= l1; b++) window[2 * b + 1] = j;
    if (j == nitems - 1) window[2 * nblocks - 1] = j;
  }
}

/* A warp per batch row: its entries of A with a nonempty row of B, counted (fill == false) or listed at eoff[h]. */
__global__ void OceanKernelHeavyEntries(OceanDevCSR A, OceanDevCSR B, const int64_t *list, int64_t nb, bool fill,
                                        int64_t *ecount, const int64_t *eoff, int64_t *len, int64_t *base, double *aval,
                                        int32_t *unit)
{
  const int lane = threadIdx.x & 31;
  for (int64_t h = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5; h < nb;
       h += ((int64_t)gridDim.x * blockDim.x) >> 5) {
    const int64_t i = list[h], tb = A.rowptr[i], te = A.rowptr[i + 1];
    int64_t       e = fill ? eoff[h] : 0;
    for (int64_t t0 = tb; t0 < te; t0 += 32) {
      const int64_t t  = t0 + lane;
      int64_t       bs = 0, l = 0;
      if (t < te) {
        const int32_t k = A.colidx[t];
        bs              = B.rowptr[k];
        l               = B.rowptr[k + 1] - bs;
      }
      const unsigned m = __ballot_sync(OCEAN_FULL_MASK, l > 0);
      if (fill && l > 0) {
        const int64_t x = e + __popc(m & ((1u << lane) - 1u));
        len[x]          = l;
        base[x]         = bs;
        if (aval) aval[x] = A.values[t];
        unit[x] = (int32_t)h;
      }
      e += __popc(m);
    }
    if (!fill && lane == 0) ecount[h] = e;
  }
}

/* Level 0's histogram without the products: each row of B as runs of columns of one chunk (the chunk, the run's first
   place in the row), so a heavy row's count per chunk sums its entries' runs (a few per entry) instead of generating
   its products (R-MAT 18/8: 88% of the products in 31K rows, 64 chunks a row). */
struct OceanHeavyRun {
  int32_t chunk, start;
};

/* A warp per row of B: its runs counted (runs NULL: into run_count[k]) or listed from run_off[k]. */
__global__ void OceanKernelHeavyRuns(OceanDevCSR B, OceanHeavyLevels L, int64_t *run_count, const int64_t *run_off,
                                     OceanHeavyRun *runs)
{
  const int      lane = threadIdx.x & 31;
  const unsigned lt   = (1u << lane) - 1u;
  for (int64_t k = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5; k < B.nrows;
       k += ((int64_t)gridDim.x * blockDim.x) >> 5) {
    const int64_t rb = B.rowptr[k], re = B.rowptr[k + 1];
    int64_t       r = runs ? run_off[k] : 0;
    for (int64_t t0 = rb; t0 < re; t0 += 32) {
      const int64_t t     = t0 + lane;
      int64_t       c     = 0;
      bool          first = false;
      if (t < re) {
        c     = OceanHeavyChunkOf(&L, 0, B.colidx[t]);
        first = t == rb || OceanHeavyChunkOf(&L, 0, B.colidx[t - 1]) != c;
      }
      const unsigned m = __ballot_sync(OCEAN_FULL_MASK, first);
      if (runs && first) {
        OceanHeavyRun x;
        x.chunk                  = (int32_t)c;
        x.start                  = (int32_t)(t - rb);
        runs[r + __popc(m & lt)] = x;
      }
      r += __popc(m);
    }
    if (!runs && lane == 0) run_count[k] = r;
  }
}

/* Level 0's counts, a block per batch row: its nc chunks' counts in shared memory, summed over its entries' runs.  A
   warp takes 32 entries at a time and deals their runs out to its lanes (an entry's row of B has from none to nc
   runs: a lane per entry would wait on the longest). */
__global__ void __launch_bounds__(HEAVY_T)
  OceanKernelHeavyRowHistogram(OceanDevCSR A, OceanDevCSR B, const int64_t *list, int64_t nb, int64_t nc,
                               const int64_t *run_off, const OceanHeavyRun *runs, unsigned long long *counts)
{
  extern __shared__ unsigned long long heavy_row_hist[];
  __shared__ int64_t                   w_first[HEAVY_T], w_len[HEAVY_T];   /* an entry's first run, its row's length */
  __shared__ int                       w_before[HEAVY_T], w_runs[HEAVY_T]; /* runs of the warp's earlier entries */
  const int                            lane = threadIdx.x & 31, w0 = threadIdx.x & ~31;
  for (int64_t h = blockIdx.x; h < nb; h += gridDim.x) {
    for (int64_t c = threadIdx.x; c < nc; c += HEAVY_T) heavy_row_hist[c] = 0;
    __syncthreads();
    const int64_t i = list[h], te = A.rowptr[i + 1];
    for (int64_t t0 = A.rowptr[i] + w0; t0 < te; t0 += HEAVY_T) {
      const int64_t t  = t0 + lane;
      int           nr = 0, incl;
      if (t < te) {
        const int32_t k      = A.colidx[t];
        w_first[threadIdx.x] = run_off[k];
        nr                   = (int)(run_off[k + 1] - run_off[k]);
        w_len[threadIdx.x]   = B.rowptr[k + 1] - B.rowptr[k];
      }
      incl                  = OceanWarpInclusiveSum(nr, lane);
      w_before[threadIdx.x] = incl - nr;
      w_runs[threadIdx.x]   = nr;
      const int total       = __shfl_sync(OCEAN_FULL_MASK, incl, 31);
      __syncwarp();
      for (int j = lane; j < total; j += 32) {
        int lo = 0, hi = 31; /* the last entry whose runs start at or before j: the one holding j */
        while (lo < hi) {
          const int mid = (lo + hi + 1) >> 1;
          if (w_before[w0 + mid] <= j) lo = mid;
          else hi = mid - 1;
        }
        const int           e = w0 + lo, q = j - w_before[e];
        const int64_t       r   = w_first[e] + q;
        const OceanHeavyRun x   = runs[r];
        const int64_t       end = q + 1 < w_runs[e] ? runs[r + 1].start : w_len[e];
        atomicAdd(&heavy_row_hist[x.chunk], (unsigned long long)(end - x.start));
      }
      __syncwarp();
    }
    __syncthreads();
    for (int64_t c = threadIdx.x; c < nc; c += HEAVY_T) counts[h * nc + c] = heavy_row_hist[c];
    __syncthreads();
  }
}

/* cursor[b] = the first place of bin b: unit u's elements start at units[u].start (units NULL: where the scan puts
   them). */
__global__ void OceanKernelHeavyCursor(int64_t nbins, int64_t nc, const int64_t *offs, const OceanHeavySeg *units,
                                       unsigned long long *cursor)
{
  OCEAN_GRID_STRIDE(b, nbins)
  {
    const int64_t u = b / nc;
    cursor[b]       = (unsigned long long)(units ? units[u].start + offs[b] - offs[u * nc] : offs[b]);
  }
}

/* *p's old value plus the thread's rank among those here with the same label, which add their number once: a million
   chunks counted into a few counters (and a row's chunks into its own) would otherwise queue on one address. */
__device__ __forceinline__ unsigned long long OceanAggregatedIncrement(unsigned long long *p, int64_t label)
{
  namespace cg                  = cooperative_groups;
  const cg::coalesced_group g   = cg::labeled_partition(cg::coalesced_threads(), (unsigned long long)label);
  unsigned long long        old = 0;
  if (g.thread_rank() == 0) old = atomicAdd(p, (unsigned long long)g.num_threads());
  return g.shfl(old, 0) + g.thread_rank();
}

/* A numeric pass's rows whose cells the symbolic pass counted (cells.row_cell NULL: none): each chunk's outputs go
   to C at its row's offset plus the entries of the row's cells before the chunk's first column. */
struct OceanHeavyInPlace {
  OceanHeavyCells   cells;
  const int64_t    *list, *offsets; /* the batch's rows; C's row offsets */
  const OceanRoute *routes;
};

/* Batch row h's record of cells, NULL when it has none, was not counted or passes the row's slot. */
__device__ __forceinline__ const int32_t *OceanHeavyRowCells(const OceanHeavyInPlace &ip, int64_t h)
{
  if (!ip.cells.row_cell) return NULL;
  const int64_t i   = ip.list[h];
  const int32_t rec = ip.cells.row_cell[i];
  if (rec < 0) return NULL;
  const int32_t *cell  = ip.cells.cells + (int64_t)rec * ip.cells.stride;
  const int32_t  total = cell[ip.cells.stride - 1];
  return total >= 0 && total <= ip.routes[i].slot ? cell : NULL;
}

/* Per batch row: chunks summed, of them dense, elements moved by the levels after the first, levels after the first. */
struct OceanHeavyRowStats {
  unsigned long long *chunks, *dense, *moved;
  int                *levels;
};

/* The chunks of a split pass: each nonempty bin a chunk, summed (at most tau elements, or the last level) into its
   hash class's list or the dense one, or split again (into next). */
__global__ void OceanKernelHeavyClassify(int64_t nbins, int64_t nc, const unsigned long long *counts,
                                         const unsigned long long *cursor, const OceanHeavySeg *units,
                                         OceanHeavyLevels L, int level, int64_t tau, OceanHeavySeg *acc,
                                         unsigned long long *nacc, int32_t *lists, int64_t list_stride,
                                         unsigned long long *class_count, OceanHeavySeg *next,
                                         unsigned long long *nnext, OceanHeavyRowStats rs, OceanHeavyInPlace ip,
                                         unsigned long long *nbuffered)
{
  OCEAN_GRID_STRIDE(b, nbins)
  {
    const int64_t n = (int64_t)counts[b];
    if (!n) continue;
    const int64_t u = b / nc, c = b % nc;
    OceanHeavySeg s;
    s.start   = (int64_t)cursor[b] - n;
    s.n       = n;
    s.out     = 0;
    s.dest    = -1;
    s.row     = units ? units[u].row : (int32_t)u;
    s.colbase = (int32_t)((units ? (int64_t)units[u].colbase : 0) + (c << L.shift[level]));
    s.level   = level;
    s.pad     = 0;
    if (level + 1 == L.levels || n <= tau) {
      const int64_t k = (int64_t)OceanAggregatedIncrement(nacc, 0);
      /* every chunk of the last level dense: its columns fit, and dense needs no sort */
      int cl = n <= HEAVY_WARP_MAX ? HEAVY_WARP : HEAVY_DENSE;
      if (level + 1 < L.levels)
        for (cl = 0; n > OceanHeavyClassMax(cl); cl++) {}
      const int32_t *cell = OceanHeavyRowCells(ip, s.row);
      if (cell) s.dest = ip.offsets[ip.list[s.row]] + cell[s.colbase >> ip.cells.shift];
      else OceanAggregatedIncrement(nbuffered, 0);
      acc[k]                                                                            = s;
      lists[cl * list_stride + (int64_t)OceanAggregatedIncrement(&class_count[cl], cl)] = (int32_t)k;
      OceanAggregatedIncrement(&rs.chunks[s.row], s.row);
      if (n > tau) atomicAdd(&rs.dense[s.row], 1ULL);
    } else {
      next[atomicAdd(nnext, 1ULL)] = s;
      atomicAdd(&rs.moved[s.row], (unsigned long long)n);
      atomicMax(&rs.levels[s.row], level + 1);
    }
  }
}

/* ------------------------------------------------------------------------------------------------ accumulation */

/* A chunk's elements in the buffer of its level's parity; C's arrays for the chunks written in place. */
struct OceanHeavyBuffers {
  int32_t *col[2];
  double  *val[2]; /* NULL: symbolic */
  int32_t *c_col;
  double  *c_val;
};

/* Where a summed chunk's outputs go: C at dest, or over its first elements. */
__device__ __forceinline__ int32_t *OceanHeavyOutCols(const OceanHeavyBuffers &buf, const OceanHeavySeg &sg)
{
  return sg.dest >= 0 ? buf.c_col + sg.dest : buf.col[sg.level & 1] + sg.start;
}
__device__ __forceinline__ double *OceanHeavyOutVals(const OceanHeavyBuffers &buf, const OceanHeavySeg &sg)
{
  return sg.dest >= 0 ? buf.c_val + sg.dest : buf.val[sg.level & 1] + sg.start;
}

/* Chunks of at most OceanHeavyClassMax(class) elements in a shared hash of cap slots (load at most 1/2), a block each:
   the table compacted and sorted, written where OceanHeavyOutCols says (over the chunk's first elements: all read
   before). */
template <int THREADS>
__global__ void __launch_bounds__(THREADS)
  OceanKernelHeavyHash(OceanHeavySeg *segs, const int32_t *list, int64_t n, int64_t cap, OceanHeavyBuffers buf)
{
  extern __shared__ double heavy_hash_smem[];
  __shared__ int           warp_sums[32];
  __shared__ OceanRowState state;
  const bool               numeric = buf.val[0] != NULL;
  double                  *hv      = heavy_hash_smem;
  int32_t                 *keys    = (int32_t *)(numeric ? hv + cap : hv);
  OceanTeam                tm;
  tm.tid  = (int)threadIdx.x;
  tm.size = THREADS;
  tm.id   = 0;

  for (int64_t s = blockIdx.x; s < n; s += gridDim.x) {
    OceanHeavySeg *sg = &segs[list[s]];
    const int64_t  st = sg->start, ne = sg->n;
    int32_t       *col = buf.col[sg->level & 1];
    double        *val = buf.val[sg->level & 1];
    for (int64_t j = threadIdx.x; j < cap; j += THREADS) {
      keys[j] = -1;
      if (numeric) hv[j] = 0.0;
    }
    if (threadIdx.x == 0) {
      state.count = 0;
      state.over  = 0;
    }
    __syncthreads();
    /* a slot of cap: a chunk's table (at least twice its elements) never fills */
    for (int64_t j = threadIdx.x; j < ne; j += THREADS)
      OceanHashInsert(keys, hv, cap, cap, col[st + j], numeric ? val[st + j] : 0.0, numeric, &state);
    __syncthreads();
    if (!numeric) {
      if (threadIdx.x == 0) sg->out = state.count;
      __syncthreads();
      continue;
    }
    const int64_t cnt = OceanTeamCompactTable(tm, keys, hv, cap, warp_sums);
    OceanTeamSortTable(tm, (uint32_t *)keys, hv, cnt);
    int32_t *oc = OceanHeavyOutCols(buf, *sg);
    double  *ov = OceanHeavyOutVals(buf, *sg);
    for (int64_t j = threadIdx.x; j < cnt; j += THREADS) {
      oc[j] = keys[j];
      ov[j] = hv[j];
    }
    if (threadIdx.x == 0) sg->out = cnt;
    __syncthreads();
  }
}

/* Chunks of the last level (at most width columns, at most 65536: options.c) summed densely in shared memory, a block
   taking chunk after chunk: the values are zeroed once and left zeroed (each sum cleared where it is read), so a chunk
   costs its elements and the bitmap's words, not its width.  The set bits' columns are listed in order (2 bytes each, a
   thread a run of words), then the outputs written where OceanHeavyOutCols says, output o by thread o % 256
   (coalesced). */
#define HEAVY_DENSE_THREADS 256
__global__ void __launch_bounds__(HEAVY_DENSE_THREADS)
  OceanKernelHeavyDense(OceanHeavySeg *segs, const int32_t *list, int64_t n, int64_t width, OceanHeavyBuffers buf)
{
  extern __shared__ double                         heavy_dense_smem[];
  typedef cub::BlockScan<int, HEAVY_DENSE_THREADS> Scan;
  __shared__ typename Scan::TempStorage            scan_tmp;
  __shared__ int                                   total;
  const bool                                       numeric = buf.val[0] != NULL;
  const int                                        nw      = (int)((width + 31) / 32);
  double                                          *dv      = heavy_dense_smem;
  uint16_t                                        *cols    = (uint16_t *)(numeric ? dv + width : dv); /* numeric only */
  unsigned                                        *bm      = (unsigned *)(numeric ? cols + width : cols);

  if (numeric)
    for (int64_t j = threadIdx.x; j < width; j += HEAVY_DENSE_THREADS) dv[j] = 0.0;
  for (int j = threadIdx.x; j < nw; j += HEAVY_DENSE_THREADS) bm[j] = 0;
  __syncthreads();
  /* the next chunk's descriptor is loaded while this one is summed, and a thread loads two elements before adding
     either: a chunk's chain of dependent loads is most of its time */
  int32_t       k_next = blockIdx.x < n ? list[blockIdx.x] : 0;
  OceanHeavySeg next;
  if (blockIdx.x < n) next = segs[k_next];
  for (int64_t s = blockIdx.x; s < n; s += gridDim.x) {
    const OceanHeavySeg sg = next;
    const int32_t       k  = k_next;
    const int64_t       st = sg.start, ne = sg.n;
    const int32_t       cb  = sg.colbase;
    int32_t            *col = buf.col[sg.level & 1];
    double             *val = buf.val[sg.level & 1];
    if (s + gridDim.x < n) {
      k_next = list[s + gridDim.x];
      next   = segs[k_next];
    }
    for (int64_t j = threadIdx.x; j < ne; j += 2 * HEAVY_DENSE_THREADS) {
      const bool    two = j + HEAVY_DENSE_THREADS < ne;
      const int32_t o0 = col[st + j] - cb, o1 = two ? col[st + j + HEAVY_DENSE_THREADS] - cb : 0;
      const double  v0 = numeric ? val[st + j] : 0.0, v1 = numeric && two ? val[st + j + HEAVY_DENSE_THREADS] : 0.0;
      atomicOr(&bm[o0 >> 5], 1u << (o0 & 31));
      if (numeric) atomicAdd(&dv[o0], v0);
      if (two) {
        atomicOr(&bm[o1 >> 5], 1u << (o1 & 31));
        if (numeric) atomicAdd(&dv[o1], v1);
      }
    }
    __syncthreads();
    { /* contiguous words a thread: their set bits' places by a scan, the words cleared once read */
      const int per = (nw + HEAVY_DENSE_THREADS - 1) / HEAVY_DENSE_THREADS;
      const int w0 = min((int)threadIdx.x * per, nw), w1 = min(w0 + per, nw);
      int       sum = 0, before;
      for (int w = w0; w < w1; w++) sum += __popc(bm[w]);
      Scan(scan_tmp).ExclusiveSum(sum, before);
      if (threadIdx.x == HEAVY_DENSE_THREADS - 1) total = before + sum;
      for (int w = w0; w < w1; w++) {
        if (numeric)
          for (unsigned m = bm[w]; m; m &= m - 1) cols[before++] = (uint16_t)(w * 32 + __ffs(m) - 1);
        bm[w] = 0;
      }
    }
    __syncthreads();
    const int cnt = total;
    if (numeric) {
      int32_t *oc = OceanHeavyOutCols(buf, sg);
      double  *ov = OceanHeavyOutVals(buf, sg);
      for (int o = threadIdx.x; o < cnt; o += HEAVY_DENSE_THREADS) {
        const int off = cols[o];
        oc[o]         = cb + off;
        ov[o]         = dv[off];
        dv[off]       = 0.0;
      }
    }
    if (threadIdx.x == 0) segs[k].out = cnt;
    __syncthreads();
  }
}

/* The last level's chunks of at most HEAVY_WARP_MAX elements (61% of rmat_s18_d8's 1.27M chunks), a warp each: the
   dense kernel's block barriers, bitmap scan and output pass cost a chunk of a hundred elements as much as one of
   thousands.  A warp owns a bitmap of the chunk's columns, a 2-byte place per bitmap word and HEAVY_WARP_MAX sums: the
   elements (at most 8 a lane, all read before anything is written over them) set their bits, a warp scan of the words
   places each column, the values are added at their column's place and the outputs written in column order where
   OceanHeavyOutCols says. */
#define HEAVY_WARP_THREADS 256
#define HEAVY_WARP_PER     (HEAVY_WARP_MAX / 32)
static_assert(HEAVY_WARP_MAX % 32 == 0 && HEAVY_WARP_MAX < 65536, "a warp's chunk: whole lanes, 2-byte places");

/* A warp's shared memory for chunks of width columns, 8-byte aligned: sums (numeric), bitmap, places. */
__host__ __device__ static inline size_t OceanHeavyWarpBytes(int64_t width, bool numeric)
{
  const size_t nw = (size_t)((width + 31) / 32);
  return ((numeric ? HEAVY_WARP_MAX * sizeof(double) : 0) + nw * 6 + 7) / 8 * 8;
}

__global__ void __launch_bounds__(HEAVY_WARP_THREADS)
  OceanKernelHeavyWarp(OceanHeavySeg *segs, const int32_t *list, int64_t n, int64_t width, OceanHeavyBuffers buf)
{
  extern __shared__ double heavy_warp_smem[];
  const bool               numeric = buf.val[0] != NULL;
  const int                lane = (int)threadIdx.x & 31, warps = HEAVY_WARP_THREADS / 32;
  const int                nw = (int)((width + 31) / 32), per = (nw + 31) / 32;
  const int                w0 = min(lane * per, nw), w1 = min(w0 + per, nw); /* the lane's bitmap words */
  char                    *mine  = (char *)heavy_warp_smem + (threadIdx.x >> 5) * OceanHeavyWarpBytes(width, numeric);
  double                  *sums  = (double *)mine;
  unsigned                *bm    = (unsigned *)(numeric ? sums + HEAVY_WARP_MAX : sums);
  uint16_t                *place = (uint16_t *)(bm + nw);

  for (int w = w0; w < w1; w++) bm[w] = 0;
  __syncwarp();
  for (int64_t s = (int64_t)blockIdx.x * warps + (threadIdx.x >> 5); s < n; s += (int64_t)gridDim.x * warps) {
    const int32_t       k   = list[s];
    const OceanHeavySeg sg  = segs[k];
    const int           ne  = (int)sg.n;
    int32_t            *col = buf.col[sg.level & 1] + sg.start;
    double             *val = numeric ? buf.val[sg.level & 1] + sg.start : NULL;
    int                 off[HEAVY_WARP_PER];
    double              v[HEAVY_WARP_PER];
#pragma unroll
    for (int q = 0; q < HEAVY_WARP_PER; q++) {
      const int j = lane + 32 * q;
      off[q]      = j < ne ? col[j] - sg.colbase : -1;
      v[q]        = numeric && j < ne ? val[j] : 0.0;
    }
#pragma unroll
    for (int q = 0; q < HEAVY_WARP_PER; q++)
      if (off[q] >= 0) atomicOr(&bm[off[q] >> 5], 1u << (off[q] & 31));
    __syncwarp();
    int lane_bits = 0, incl;
    for (int w = w0; w < w1; w++) lane_bits += __popc(bm[w]);
    incl            = OceanWarpInclusiveSum(lane_bits, lane);
    const int total = __shfl_sync(OCEAN_FULL_MASK, incl, 31);
    if (numeric) {
      int before = incl - lane_bits;
      for (int w = w0; w < w1; w++) {
        place[w] = (uint16_t)before;
        before += __popc(bm[w]);
      }
      for (int j = lane; j < total; j += 32) sums[j] = 0.0;
      __syncwarp();
#pragma unroll
      for (int q = 0; q < HEAVY_WARP_PER; q++)
        if (off[q] >= 0) {
          const int w = off[q] >> 5;
          atomicAdd(&sums[place[w] + __popc(bm[w] & ((1u << (off[q] & 31)) - 1u))], v[q]);
        }
      __syncwarp();
      int32_t *oc = OceanHeavyOutCols(buf, sg);
      double  *ov = OceanHeavyOutVals(buf, sg);
      before      = incl - lane_bits;
      for (int w = w0; w < w1; w++)
        for (unsigned m = bm[w]; m; m &= m - 1) oc[before++] = sg.colbase + w * 32 + __ffs(m) - 1;
      for (int j = lane; j < total; j += 32) ov[j] = sums[j];
    }
    __syncwarp(); /* every lane's places read before the words are cleared */
    for (int w = w0; w < w1; w++) bm[w] = 0;
    if (lane == 0) segs[k].out = total;
    __syncwarp();
  }
}

/* ------------------------------------------------------------------------------------------------ assembly */

/* Every summed chunk's outputs added to its row's count; a chunk written in place must have as many outputs as its
   cells were counted (*mismatch counts those that do not: C's entries around them are then wrong). */
__global__ void OceanKernelHeavyRowSums(const OceanHeavySeg *segs, int64_t n, OceanHeavyInPlace ip, OceanHeavyLevels L,
                                        unsigned long long *row_count, unsigned long long *mismatch)
{
  OCEAN_GRID_STRIDE(k, n)
  {
    const OceanHeavySeg sg = segs[k];
    atomicAdd(&row_count[sg.row], (unsigned long long)sg.out);
    if (sg.dest >= 0) {
      const int32_t *cell  = OceanHeavyRowCells(ip, sg.row);
      const int64_t  first = (int64_t)sg.colbase >> ip.cells.shift;
      const int64_t end = OceanMin64(first + ((int64_t)1 << (L.shift[sg.level] - ip.cells.shift)), ip.cells.stride - 1);
      if (!cell || cell[end] - cell[first] != sg.out) atomicAdd(mismatch, 1ULL);
    }
  }
}

/* A symbolic pass's batch rows with a record of cells, within their slot, a warp per row: the cells cleared before
   the chunks' counts go in (PREFIX false), then turned into their exclusive prefixes with the row's count last (the
   row is now counted by cells). */
template <bool PREFIX>
__global__ void OceanKernelHeavyCellsRows(OceanHeavyInPlace ip, int64_t nb, const uint8_t *row_over)
{
  const int     lane   = threadIdx.x & 31;
  const int64_t ncells = ip.cells.stride - 1;
  for (int64_t h = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5; h < nb;
       h += ((int64_t)gridDim.x * blockDim.x) >> 5) {
    const int32_t rec = ip.cells.row_cell[ip.list[h]];
    if (rec < 0 || row_over[h]) continue;
    int32_t *cell = ip.cells.cells + (int64_t)rec * ip.cells.stride;
    if (PREFIX) OceanWarpCellsPrefix(cell, ncells, lane);
    else
      for (int64_t k = lane; k < ncells; k += 32) cell[k] = 0;
  }
}

/* Each summed chunk's count into its row's cell of the chunk's first column: a chunk of an earlier level, wider than a
   cell, keeps its whole count there (the numeric pass places it by that cell and checks it against the cells it
   spans). */
__global__ void OceanKernelHeavyCellsFill(const OceanHeavySeg *segs, int64_t n, OceanHeavyInPlace ip,
                                          const uint8_t *row_over)
{
  OCEAN_GRID_STRIDE(k, n)
  {
    const OceanHeavySeg sg  = segs[k];
    const int32_t       rec = ip.cells.row_cell[ip.list[sg.row]];
    if (rec < 0 || row_over[sg.row]) continue;
    ip.cells.cells[(int64_t)rec * ip.cells.stride + (sg.colbase >> ip.cells.shift)] = (int32_t)sg.out;
  }
}

__global__ void OceanKernelHeavySortKeys(const OceanHeavySeg *segs, int64_t n, uint64_t *keys, int32_t *idx)
{
  OCEAN_GRID_STRIDE(k, n)
  {
    keys[k] = ((uint64_t)(uint32_t)segs[k].row << 32) | (uint32_t)segs[k].colbase;
    idx[k]  = (int32_t)k;
  }
}

__global__ void OceanKernelHeavySortedOut(const OceanHeavySeg *segs, const int32_t *sorted, int64_t n, int64_t *out)
{
  OCEAN_GRID_STRIDE(k, n) out[k] = segs[sorted[k]].out;
}

/* The batch's rows: their counts (slot + 1 and the flag when they pass their slot), the first sorted chunk's place. */
__global__ void OceanKernelHeavyRowCounts(const int64_t *list, int64_t nb, const OceanRoute *routes,
                                          const unsigned long long *row_count, int64_t *counts, uint8_t *flags,
                                          uint8_t *row_over)
{
  OCEAN_GRID_STRIDE(h, nb)
  {
    const int64_t i = list[h], c = (int64_t)row_count[h], slot = routes[i].slot;
    const bool    over = c > slot;
    counts[i]          = over ? slot + 1 : c;
    flags[i]           = (uint8_t)over;
    row_over[h]        = (uint8_t)over;
  }
}

__global__ void OceanKernelHeavyRowFirst(const OceanHeavySeg *segs, const int32_t *sorted, int64_t n,
                                         const int64_t *exc, int64_t *row_first)
{
  OCEAN_GRID_STRIDE(k, n)
  {
    const int32_t r = segs[sorted[k]].row;
    if (k == 0 || segs[sorted[k - 1]].row != r) row_first[r] = exc[k];
  }
}

/* A warp per chunk: its output after those of the row's earlier chunks, at the row's slot; four loads of each array
   in flight per lane before their stores (a chunk averages a few hundred outputs: one load at a time left the copy
   waiting on latency). */
__global__ void OceanKernelHeavyWrite(const OceanHeavySeg *segs, const int32_t *sorted, int64_t n, const int64_t *exc,
                                      const int64_t *row_first, const uint8_t *row_over, const int64_t *list,
                                      const int64_t *offsets, OceanHeavyBuffers buf, int32_t *cols, double *vals)
{
  const int lane = threadIdx.x & 31;
  for (int64_t k = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5; k < n;
       k += ((int64_t)gridDim.x * blockDim.x) >> 5) {
    const OceanHeavySeg sg = segs[sorted[k]];
    if (row_over[sg.row] || sg.dest >= 0) continue;
    const int64_t  dest = offsets[list[sg.row]] + exc[k] - row_first[sg.row];
    const int32_t *sc   = buf.col[sg.level & 1] + sg.start;
    const double  *sv   = buf.val[sg.level & 1] + sg.start;
    for (int64_t j0 = lane; j0 < sg.out; j0 += 4 * 32) {
      int32_t c[4];
      double  v[4];
#pragma unroll
      for (int u = 0; u < 4; u++)
        if (j0 + 32 * u < sg.out) {
          c[u] = sc[j0 + 32 * u];
          v[u] = sv[j0 + 32 * u];
        }
#pragma unroll
      for (int u = 0; u < 4; u++)
        if (j0 + 32 * u < sg.out) {
          cols[dest + j0 + 32 * u] = c[u];
          vals[dest + j0 + 32 * u] = v[u];
        }
    }
  }
}

/* The statistics of the rows that fit their slot: rows, products, chunks, dense chunks, moved elements, rows written
   in place, levels. */
__global__ void OceanKernelHeavyStats(int64_t nb, const int64_t *q, const uint8_t *row_over, OceanHeavyRowStats rs,
                                      OceanHeavyInPlace ip, unsigned long long *sum, int *levels)
{
  OCEAN_GRID_STRIDE(h, nb)
  {
    if (row_over[h]) continue;
    atomicAdd(&sum[0], 1ULL);
    atomicAdd(&sum[1], (unsigned long long)q[h]);
    atomicAdd(&sum[2], rs.chunks[h]);
    atomicAdd(&sum[3], rs.dense[h]);
    atomicAdd(&sum[4], (unsigned long long)q[h] + rs.moved[h]);
    if (OceanHeavyRowCells(ip, h)) atomicAdd(&sum[5], 1ULL);
    atomicMax(levels, rs.levels[h] + 1);
  }
}

/* The chunks to split at the next level as its items: each its own unit, its elements where they are. */
__global__ void OceanKernelHeavySegItems(const OceanHeavySeg *segs, int64_t n, int64_t *len, int64_t *base,
                                         int32_t *unit)
{
  OCEAN_GRID_STRIDE(k, n)
  {
    len[k]  = segs[k].n;
    base[k] = segs[k].start;
    unit[k] = (int32_t)k;
  }
}

/* ------------------------------------------------------------------------------------------------ launcher */

/* Device memory freed with the object. */
struct OceanHeavyMem {
  OceanCudaDevice dev;
  void           *p;
  OceanHeavyMem() : dev(NULL), p(NULL) {}
  explicit OceanHeavyMem(OceanCudaDevice d) : dev(d), p(NULL) {}
  ~OceanHeavyMem() { OceanCudaFree(dev, p); }
  OceanHeavyMem(const OceanHeavyMem &)            = delete;
  OceanHeavyMem &operator=(const OceanHeavyMem &) = delete;
  OceanError     get(size_t bytes)
  {
    OceanCudaFree(dev, p);
    p = NULL;
    return OceanCudaAlloc(dev, bytes, &p);
  }
  OceanError zeroed(size_t bytes)
  {
    OceanError err = get(bytes);
    if (!err && bytes) err = OceanCudaCheck(cudaMemsetAsync(p, 0, bytes, 0), "heavy rows: memset");
    return err;
  }
  template <typename T>
  T *as() const
  {
    return (T *)p;
  }
};

/* Seconds between start and stop (two events, one wait) added to *acc: its own events, since the device's phase
   timers (OceanCudaTimerStart) do not nest inside the numeric phase that times this launcher. */
struct OceanHeavyClock {
  cudaEvent_t a = NULL, b = NULL;
  ~OceanHeavyClock()
  {
    if (a) cudaEventDestroy(a);
    if (b) cudaEventDestroy(b);
  }
  OceanError start()
  {
    if (!a) OCEAN_CUDA_TRY(cudaEventCreate(&a));
    if (!b) OCEAN_CUDA_TRY(cudaEventCreate(&b));
    OCEAN_CUDA_TRY(cudaEventRecord(a, 0));
    return OCEAN_SUCCESS;
  }
  OceanError stop(double *acc)
  {
    float ms = 0;
    OCEAN_CUDA_TRY(cudaEventRecord(b, 0));
    OCEAN_CUDA_TRY(cudaEventSynchronize(b));
    OCEAN_CUDA_TRY(cudaEventElapsedTime(&ms, a, b));
    *acc += 1e-3 * (double)ms;
    return OCEAN_SUCCESS;
  }
};

/* The heavy kernels' opt-in of dynamic shared memory: all the device allows beside their static memory. */
static OceanError OceanHeavyOptin(int smem_optin, int64_t *value)
{
  const void *kernels[] = {(const void *)OceanKernelHeavySplit<0>,  (const void *)OceanKernelHeavySplit<1>,
                           (const void *)OceanKernelHeavyHash<128>, (const void *)OceanKernelHeavyHash<256>,
                           (const void *)OceanKernelHeavyHash<512>, (const void *)OceanKernelHeavyHash<1024>,
                           (const void *)OceanKernelHeavyDense,     (const void *)OceanKernelHeavyWarp};
  int64_t     least     = smem_optin;
  for (const void *k : kernels) {
    cudaFuncAttributes fa;
    OCEAN_CUDA_TRY(cudaFuncGetAttributes(&fa, k));
    const int avail = smem_optin - (int)fa.sharedSizeBytes;
    OCEAN_CUDA_TRY(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, avail));
    least = avail < least ? avail : least;
  }
  *value = least;
  return OCEAN_SUCCESS;
}

static OceanError OceanHeavyLaunched(const char *what, int64_t n)
{
  const cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) return OCEAN_SUCCESS;
  return OceanSetError(OCEAN_ERR_DEVICE, "heavy rows: %s (%lld): %s", what, (long long)n, cudaGetErrorString(e));
}

/* A grid of at most want blocks, no more than are resident at once (kernels that take chunk after chunk). */
static unsigned OceanHeavyResident(const void *kernel, int threads, size_t bytes, int64_t want)
{
  int       per_sm = 0;
  const int sms    = OceanDeviceSMs();
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, bytes) != cudaSuccess || per_sm < 1)
    per_sm = 1;
  (void)cudaGetLastError();
  return (unsigned)OceanMin64(want, (int64_t)(sms > 0 ? sms : 1) * per_sm);
}

/* The chunks of one class summed: a block per chunk, or a warp per chunk (HEAVY_WARP). */
static OceanError OceanHeavyAccumulate(int cl, OceanHeavySeg *segs, const int32_t *list, int64_t n,
                                       const OceanBinConfig *hb, OceanHeavyBuffers buf)
{
  const bool    numeric = buf.val[0] != NULL;
  const dim3    grid    = (unsigned)(n < OCEAN_MAX_GRID ? n : OCEAN_MAX_GRID);
  const int64_t per     = numeric ? 12 : 4;
  if (!n) return OCEAN_SUCCESS;
  switch (cl) {
  case 0: OceanKernelHeavyHash<128><<<grid, 128, 512 * per>>>(segs, list, n, 512, buf); break;
  case 1: OceanKernelHeavyHash<256><<<grid, 256, 2048 * per>>>(segs, list, n, 2048, buf); break;
  case 2: OceanKernelHeavyHash<512><<<grid, 512, 8192 * per>>>(segs, list, n, 8192, buf); break;
  case 3:
    OceanKernelHeavyHash<1024><<<grid, 1024, hb->hash_capacity * per>>>(segs, list, n, hb->hash_capacity, buf);
    break;
  case HEAVY_WARP: { /* each warp zeroes its bitmap once */
    const size_t  bytes = HEAVY_WARP_THREADS / 32 * OceanHeavyWarpBytes(hb->dense_columns, numeric);
    const int64_t want  = (n + HEAVY_WARP_THREADS / 32 - 1) / (HEAVY_WARP_THREADS / 32);
    OceanKernelHeavyWarp<<<OceanHeavyResident((const void *)OceanKernelHeavyWarp, HEAVY_WARP_THREADS, bytes, want),
                           HEAVY_WARP_THREADS, bytes>>>(segs, list, n, hb->dense_columns, buf);
  } break;
  default: { /* each block zeroes its values once */
    const int64_t w     = hb->dense_columns;
    const size_t  bytes = (numeric ? 10 * w : 0) + (w + 31) / 32 * 4;
    OceanKernelHeavyDense<<<OceanHeavyResident((const void *)OceanKernelHeavyDense, HEAVY_DENSE_THREADS, bytes, n),
                            HEAVY_DENSE_THREADS, bytes>>>(segs, list, n, w, buf);
  }
  }
  return OceanHeavyLaunched("accumulating chunks", n);
}

/* One batch of heavy rows (list[0, nb), P products, q[h] each): split level by level, summed, placed. */
static OceanError OceanCudaHeavyBatch(OceanCudaDevice dev, const OceanBinConfig *hb, const OceanHeavyLevels *L,
                                      OceanDevCSR A, OceanDevCSR B, const OceanRoute *d_routes, const int64_t *list,
                                      int64_t nb, int64_t P, const int64_t *q, const int64_t *d_offsets,
                                      int32_t *d_cols, double *d_vals, int64_t *d_counts, uint8_t *d_flags,
                                      int64_t smem_max, const int64_t *run_off, const OceanHeavyRun *runs,
                                      const OceanHeavyCells *cells, OceanHeavyCounts *hc, double times[4],
                                      OceanHeavyClock *clock)
{
  const bool    numeric = d_cols != NULL && d_vals != NULL;
  const int64_t tau     = hb->hash_limit;
  OceanHeavyMem ecount(dev), eoff(dev), elen(dev), ebase(dev), eaval(dev), eunit(dev), epos(dev);
  OceanHeavyMem xcol(dev), xval(dev), ycol(dev), yval(dev), counts(dev), cursor(dev), offs(dev), lists(dev), cls(dev);
  OceanHeavyMem rchunks(dev), rdense(dev), rmoved(dev), rlevels(dev), next[2], acc[OCEAN_HEAVY_MAX_LEVELS];
  OceanHeavyMem F(dev), keys(dev), idx(dev), skeys(dev), sidx(dev), rcount(dev), souts(dev), exc(dev), rfirst(dev);
  OceanHeavyMem rover(dev), sums(dev), windows(dev);
  int64_t       nacc[OCEAN_HEAVY_MAX_LEVELS] = {0}, NE = 0, check = 0, nitems, nunits = nb, elems = P, NF = 0;
  int64_t       nbuffered = 0; /* chunks summed over their elements, placed by the sorted assembly */
  int           level, nlev = 0;
  OceanHeavyBuffers    buf;
  OceanHeavyRowStats   rs;
  OceanHeavyInPlace    ip;
  const OceanHeavySeg *units = NULL;
  OceanTemp            temp(dev);

  for (int k = 0; k < 2; k++) next[k].dev = dev;
  for (int k = 0; k < OCEAN_HEAVY_MAX_LEVELS; k++) acc[k].dev = dev;
  /* level 0's items: the rows' entries of A with a nonempty row of B, and their product offsets */
  HEAVY_CALL(ecount.get((size_t)nb * sizeof(int64_t)));
  HEAVY_CALL(eoff.get((size_t)(nb + 1) * sizeof(int64_t)));
  OceanKernelHeavyEntries<<<OceanGrid(nb, OCEAN_THREADS / 32), OCEAN_THREADS>>>(
    A, B, list, nb, false, ecount.as<int64_t>(), NULL, NULL, NULL, NULL, NULL);
  HEAVY_CALL(OceanHeavyLaunched("counting entries", nb));
  HEAVY_CALL(OceanCudaScanCounts(dev, NULL, nb, ecount.as<int64_t>(), eoff.as<int64_t>(), NULL, &NE));
  HEAVY_CALL(elen.get((size_t)NE * sizeof(int64_t)));
  HEAVY_CALL(ebase.get((size_t)NE * sizeof(int64_t)));
  HEAVY_CALL(eunit.get((size_t)NE * sizeof(int32_t)));
  HEAVY_CALL(epos.get((size_t)(NE + 1) * sizeof(int64_t)));
  if (numeric) HEAVY_CALL(eaval.get((size_t)NE * sizeof(double)));
  OceanKernelHeavyEntries<<<OceanGrid(nb, OCEAN_THREADS / 32), OCEAN_THREADS>>>(
    A, B, list, nb, true, NULL, eoff.as<int64_t>(), elen.as<int64_t>(), ebase.as<int64_t>(), eaval.as<double>(),
    eunit.as<int32_t>());
  HEAVY_CALL(OceanHeavyLaunched("listing entries", nb));
  HEAVY_CALL(OceanCudaScanCounts(dev, NULL, NE, elen.as<int64_t>(), epos.as<int64_t>(), NULL, &check));
  if (check != P)
    return OceanSetError(OCEAN_ERR_STATE, "heavy rows: %lld products listed for %lld rows of %lld products",
                         (long long)check, (long long)nb, (long long)P);
  nitems = NE;

  HEAVY_CALL(xcol.get((size_t)P * sizeof(int32_t)));
  if (numeric) HEAVY_CALL(xval.get((size_t)P * sizeof(double)));
  if (L->levels > 1) {
    HEAVY_CALL(ycol.get((size_t)P * sizeof(int32_t)));
    if (numeric) HEAVY_CALL(yval.get((size_t)P * sizeof(double)));
  }
  buf.col[0] = xcol.as<int32_t>();
  buf.col[1] = ycol.as<int32_t>();
  buf.val[0] = xval.as<double>();
  buf.val[1] = yval.as<double>();
  buf.c_col  = d_cols;
  buf.c_val  = d_vals;
  memset(&ip, 0, sizeof(ip));
  if (cells) ip.cells = *cells; /* numeric: chunks written in place; symbolic: the chunks' counts into the cells */
  ip.list    = list;
  ip.offsets = d_offsets;
  ip.routes  = d_routes;
  HEAVY_CALL(rchunks.zeroed((size_t)nb * 8));
  HEAVY_CALL(rdense.zeroed((size_t)nb * 8));
  HEAVY_CALL(rmoved.zeroed((size_t)nb * 8));
  HEAVY_CALL(rlevels.zeroed((size_t)nb * sizeof(int)));
  rs.chunks = rchunks.as<unsigned long long>();
  rs.dense  = rdense.as<unsigned long long>();
  rs.moved  = rmoved.as<unsigned long long>();
  rs.levels = rlevels.as<int>();

  for (level = 0;; level++) {
    const int64_t       nc = OceanHeavyChunksAt(L, level, B.ncols), nbins = nunits * nc;
    const int64_t       cap  = OceanMin64(nbins, elems);
    const bool          more = level + 1 < L->levels;
    const unsigned      grid = (unsigned)((elems + HEAVY_E - 1) / HEAVY_E);
    OceanHeavySplitArgs a;
    unsigned long long
           hcls[HEAVY_CLASSES + 3]; /* the classes' chunks, chunks summed, split again, summed over their elements */
    size_t smem;

    memset(&a, 0, sizeof(a));
    a.total     = elems;
    a.nitems    = nitems;
    a.item_pos  = epos.as<int64_t>();
    a.item_base = ebase.as<int64_t>();
    a.item_aval = level == 0 && numeric ? eaval.as<double>() : NULL;
    a.item_unit = eunit.as<int32_t>();
    a.src_col   = level == 0 ? B.colidx : buf.col[(level - 1) & 1];
    a.src_val   = numeric ? (level == 0 ? B.values : buf.val[(level - 1) & 1]) : NULL;
    a.dst_col   = buf.col[level & 1];
    a.dst_val   = buf.val[level & 1];
    a.L         = *L;
    a.level     = level;
    a.nc        = nc;
    a.nbins =
      (int)OceanMax64(0, OceanMin64(2 * nc, (smem_max - HEAVY_E * OCEAN_HEAVY_SPLIT_BYTES_PER_ELEMENT - 8) / 16));
    smem               = OceanHeavySplitSmem(a.nbins);
    const bool by_runs = level == 0 && runs != NULL; /* every bin's count written: no clearing */
    HEAVY_CALL(by_runs ? counts.get((size_t)nbins * 8) : counts.zeroed((size_t)nbins * 8));
    HEAVY_CALL(cursor.get((size_t)nbins * 8));
    HEAVY_CALL(offs.get((size_t)(nbins + 1) * 8));
    HEAVY_CALL(windows.get((size_t)grid * 2 * sizeof(int64_t)));
    a.counts = counts.as<unsigned long long>();
    a.cursor = cursor.as<unsigned long long>();
    a.window = windows.as<int64_t>();
    HEAVY_CALL(clock->start());
    OceanKernelHeavyWindows<<<OceanGrid(nitems, OCEAN_THREADS), OCEAN_THREADS>>>(a.item_pos, nitems, grid,
                                                                                 windows.as<int64_t>());
    HEAVY_CALL(OceanHeavyLaunched("block windows", nitems));
    if (by_runs) {
      OceanKernelHeavyRowHistogram<<<(unsigned)OceanMin64(nb, 1 << 20), HEAVY_T, (size_t)nc * 8>>>(
        A, B, list, nb, nc, run_off, runs, a.counts);
      HEAVY_CALL(OceanHeavyLaunched("histogram by runs", nb));
    } else {
      OceanKernelHeavySplit<0><<<grid, HEAVY_T, smem>>>(a);
      HEAVY_CALL(OceanHeavyLaunched("histogram", elems));
    }
    HEAVY_CALL(clock->stop(&times[1]));
    HEAVY_CALL(OceanCudaScanCounts(dev, NULL, nbins, counts.as<int64_t>(), offs.as<int64_t>(), NULL, NULL));
    OceanKernelHeavyCursor<<<OceanGrid(nbins, OCEAN_THREADS), OCEAN_THREADS>>>(nbins, nc, offs.as<int64_t>(), units,
                                                                               a.cursor);
    HEAVY_CALL(clock->start());
    OceanKernelHeavySplit<1><<<grid, HEAVY_T, smem>>>(a);
    HEAVY_CALL(OceanHeavyLaunched(level ? "multisplit" : "outer product", elems));
    HEAVY_CALL(clock->stop(level ? &times[2] : &times[0]));

    /* the chunks: summed now (their buffer is left alone by later levels) or split at the next level */
    HEAVY_CALL(acc[level].get((size_t)cap * sizeof(OceanHeavySeg)));
    HEAVY_CALL(lists.get((size_t)HEAVY_CLASSES * (size_t)cap * sizeof(int32_t)));
    HEAVY_CALL(cls.zeroed(sizeof(hcls)));
    HEAVY_CALL(next[level & 1].get(more ? (size_t)cap * sizeof(OceanHeavySeg) : 0));
    OceanKernelHeavyClassify<<<OceanGrid(nbins, OCEAN_THREADS), OCEAN_THREADS>>>(
      nbins, nc, a.counts, a.cursor, units, *L, level, tau, acc[level].as<OceanHeavySeg>(),
      cls.as<unsigned long long>() + HEAVY_CLASSES, lists.as<int32_t>(), cap, cls.as<unsigned long long>(),
      next[level & 1].as<OceanHeavySeg>(), cls.as<unsigned long long>() + HEAVY_CLASSES + 1, rs, ip,
      cls.as<unsigned long long>() + HEAVY_CLASSES + 2);
    HEAVY_CALL(OceanHeavyLaunched("classifying chunks", nbins));
    HEAVY_CALL(OceanCudaReadback(dev, hcls, cls.p, sizeof(hcls)));
    nacc[level] = (int64_t)hcls[HEAVY_CLASSES];
    nbuffered += (int64_t)hcls[HEAVY_CLASSES + 2];
    nlev = level + 1;
    HEAVY_CALL(clock->start());
    for (int c = 0; c < HEAVY_CLASSES; c++)
      HEAVY_CALL(OceanHeavyAccumulate(c, acc[level].as<OceanHeavySeg>(), lists.as<int32_t>() + (int64_t)c * cap,
                                      (int64_t)hcls[c], hb, buf));
    HEAVY_CALL(clock->stop(&times[3]));
    if (!hcls[HEAVY_CLASSES + 1]) break;
    if (!more)
      return OceanSetError(OCEAN_ERR_STATE, "heavy rows: chunks to split past the last of %d levels", L->levels);
    /* the next level's items: the chunks to split */
    nitems = nunits = (int64_t)hcls[HEAVY_CLASSES + 1];
    units           = next[level & 1].as<OceanHeavySeg>();
    HEAVY_CALL(elen.get((size_t)nitems * sizeof(int64_t)));
    HEAVY_CALL(ebase.get((size_t)nitems * sizeof(int64_t)));
    HEAVY_CALL(eunit.get((size_t)nitems * sizeof(int32_t)));
    HEAVY_CALL(epos.get((size_t)(nitems + 1) * sizeof(int64_t)));
    OceanKernelHeavySegItems<<<OceanGrid(nitems, OCEAN_THREADS), OCEAN_THREADS>>>(
      units, nitems, elen.as<int64_t>(), ebase.as<int64_t>(), eunit.as<int32_t>());
    HEAVY_CALL(OceanHeavyLaunched("next level's items", nitems));
    HEAVY_CALL(OceanCudaScanCounts(dev, NULL, nitems, elen.as<int64_t>(), epos.as<int64_t>(), NULL, &elems));
  }

  /* assembly: the rows' counts from their chunks' outputs; the chunks not written in place sorted by (row, first
     column) and copied, each row's outputs one after another */
  HEAVY_CALL(clock->start());
  struct {
    unsigned long long sum[7]; /* rows, products, chunks, dense chunks, moved elements, rows in place, mismatches */
    int                levels;
  } h;
  HEAVY_CALL(sums.zeroed(sizeof(h)));
  HEAVY_CALL(rcount.zeroed((size_t)nb * 8));
  HEAVY_CALL(rover.get((size_t)nb));
  for (level = 0; level < nlev; level++)
    if (nacc[level])
      OceanKernelHeavyRowSums<<<OceanGrid(nacc[level], OCEAN_THREADS), OCEAN_THREADS>>>(
        acc[level].as<OceanHeavySeg>(), nacc[level], ip, *L, rcount.as<unsigned long long>(),
        sums.as<unsigned long long>() + 6);
  OceanKernelHeavyRowCounts<<<OceanGrid(nb, OCEAN_THREADS), OCEAN_THREADS>>>(
    list, nb, d_routes, rcount.as<unsigned long long>(), d_counts, d_flags, rover.as<uint8_t>());
  HEAVY_CALL(OceanHeavyLaunched("row counts", nb));
  if (!numeric) {
    if (ip.cells.row_cell) { /* the rows with a record counted by cells, for the numeric pass to write in place */
      OceanKernelHeavyCellsRows<false>
        <<<OceanGrid(nb, OCEAN_THREADS / 32), OCEAN_THREADS>>>(ip, nb, rover.as<uint8_t>());
      for (level = 0; level < nlev; level++)
        if (nacc[level])
          OceanKernelHeavyCellsFill<<<OceanGrid(nacc[level], OCEAN_THREADS), OCEAN_THREADS>>>(
            acc[level].as<OceanHeavySeg>(), nacc[level], ip, rover.as<uint8_t>());
      OceanKernelHeavyCellsRows<true>
        <<<OceanGrid(nb, OCEAN_THREADS / 32), OCEAN_THREADS>>>(ip, nb, rover.as<uint8_t>());
      HEAVY_CALL(OceanHeavyLaunched("cells of the rows", nb));
    }
    return clock->stop(&times[3]);
  }
  if (nbuffered) {
    for (level = 0; level < nlev; level++) NF += nacc[level];
    HEAVY_CALL(F.get((size_t)NF * sizeof(OceanHeavySeg)));
    for (level = 0, NE = 0; level < nlev; NE += nacc[level], level++)
      if (nacc[level])
        OCEAN_CUDA_TRY(cudaMemcpyAsync(F.as<OceanHeavySeg>() + NE, acc[level].p,
                                       (size_t)nacc[level] * sizeof(OceanHeavySeg), cudaMemcpyDeviceToDevice, 0));
    HEAVY_CALL(keys.get((size_t)NF * 8));
    HEAVY_CALL(skeys.get((size_t)NF * 8));
    HEAVY_CALL(idx.get((size_t)NF * 4));
    HEAVY_CALL(sidx.get((size_t)NF * 4));
    OceanKernelHeavySortKeys<<<OceanGrid(NF, OCEAN_THREADS), OCEAN_THREADS>>>(F.as<OceanHeavySeg>(), NF,
                                                                              keys.as<uint64_t>(), idx.as<int32_t>());
    HEAVY_CALL(OceanHeavyLaunched("sort keys", NF));
    {
      size_t    bytes = 0;
      const int bits  = 32 + OceanBitsFor((uint64_t)nb);
      OCEAN_CUDA_TRY(cub::DeviceRadixSort::SortPairs(NULL, bytes, keys.as<uint64_t>(), skeys.as<uint64_t>(),
                                                     idx.as<int32_t>(), sidx.as<int32_t>(), NF, 0, bits));
      HEAVY_CALL(temp.get(bytes));
      OCEAN_CUDA_TRY(cub::DeviceRadixSort::SortPairs(temp.ptr, bytes, keys.as<uint64_t>(), skeys.as<uint64_t>(),
                                                     idx.as<int32_t>(), sidx.as<int32_t>(), NF, 0, bits));
    }
    HEAVY_CALL(souts.get((size_t)NF * 8));
    HEAVY_CALL(exc.get((size_t)(NF + 1) * 8));
    HEAVY_CALL(rfirst.get((size_t)nb * 8));
    OceanKernelHeavySortedOut<<<OceanGrid(NF, OCEAN_THREADS), OCEAN_THREADS>>>(
      F.as<OceanHeavySeg>(), sidx.as<int32_t>(), NF, souts.as<int64_t>());
    HEAVY_CALL(OceanCudaScanCounts(dev, NULL, NF, souts.as<int64_t>(), exc.as<int64_t>(), NULL, NULL));
    OceanKernelHeavyRowFirst<<<OceanGrid(NF, OCEAN_THREADS), OCEAN_THREADS>>>(
      F.as<OceanHeavySeg>(), sidx.as<int32_t>(), NF, exc.as<int64_t>(), rfirst.as<int64_t>());
    OceanKernelHeavyWrite<<<OceanGrid(NF, OCEAN_THREADS / 32), OCEAN_THREADS>>>(
      F.as<OceanHeavySeg>(), sidx.as<int32_t>(), NF, exc.as<int64_t>(), rfirst.as<int64_t>(), rover.as<uint8_t>(), list,
      d_offsets, buf, d_cols, d_vals);
    HEAVY_CALL(OceanHeavyLaunched("writing rows", NF));
  }
  OceanKernelHeavyStats<<<OceanGrid(nb, OCEAN_THREADS), OCEAN_THREADS>>>(
    nb, q, rover.as<uint8_t>(), rs, ip, sums.as<unsigned long long>(), (int *)(sums.as<unsigned long long>() + 7));
  HEAVY_CALL(OceanHeavyLaunched("statistics", nb));
  HEAVY_CALL(OceanCudaReadback(dev, &h, sums.p, sizeof(h)));
  if (h.sum[6])
    return OceanSetError(OCEAN_ERR_STATE,
                         "heavy rows: %llu chunks written in place have other counts than the symbolic pass's cells "
                         "(%lld rows, %lld products)",
                         h.sum[6], (long long)nb, (long long)P);
  hc->rows += (int64_t)h.sum[0];
  hc->products += (int64_t)h.sum[1];
  hc->chunks += (int64_t)h.sum[2];
  hc->dense_chunks += (int64_t)h.sum[3];
  hc->split_elements += (int64_t)h.sum[4];
  hc->rows_in_place += (int64_t)h.sum[5];
  if (h.levels > hc->levels) hc->levels = h.levels;
  return clock->stop(&times[3]);
}

extern "C" OceanError OceanCudaHeavyRows(OceanCudaDevice dev, const OceanCudaRouteParams *rp, OceanDevCSR A,
                                         OceanDevCSR B, const OceanRowShape *d_shapes, const OceanRoute *d_routes,
                                         const int64_t *d_list, int64_t n, const int64_t *d_offsets, int32_t *d_cols,
                                         double *d_vals, int64_t *d_counts, uint8_t *d_flags, OceanHeavyCounts *hc,
                                         double times[4])
{
  static OceanSmemOptin optin;
  const OceanBinConfig *hb         = &rp->bins[OCEAN_BIN_HEAVY];
  const bool            numeric    = d_cols != NULL && d_vals != NULL;
  const int64_t         elem_bytes = numeric ? 12 : 4;
  OceanHeavyLevels      L;
  OceanHeavyMem         q(dev), qoff(dev), run_count(dev), run_off(dev), runs(dev);
  OceanHeavyClock       clock;
  int64_t               smem_max = 0, free_bytes = 0, h0, h1;
  std::vector<int64_t>  hq;
  OceanError            err;

  if (n == 0) return OCEAN_SUCCESS;
  OceanHeavyPlanLevels(hb, B.ncols, &L);
  const bool with_cells = rp->cells.row_cell != NULL; /* symbolic: counted by cells; numeric: written in place */
  if (with_cells &&
      (rp->cells.shift != L.shift[L.levels - 1] || rp->cells.stride != OceanHeavyLastChunks(&L, B.ncols) + 1))
    return OceanSetError(OCEAN_ERR_STATE,
                         "heavy rows: cells of %lld columns in records of %lld, the multisplit's last chunks %lld "
                         "columns wide over %lld",
                         1LL << rp->cells.shift, (long long)rp->cells.stride, 1LL << L.shift[L.levels - 1],
                         (long long)B.ncols);
  HEAVY_CALL(optin.ensure(
    rp->smem_optin, [&](int64_t *v) { return OceanHeavyOptin((int)rp->smem_optin, v); }, &smem_max));
  /* the rows' products and their offsets on the host: the batches */
  HEAVY_CALL(q.get((size_t)n * sizeof(int64_t)));
  HEAVY_CALL(qoff.get((size_t)(n + 1) * sizeof(int64_t)));
  OceanKernelHeavyProducts<<<OceanGrid(n, OCEAN_THREADS), OCEAN_THREADS>>>(d_list, n, d_shapes, q.as<int64_t>());
  HEAVY_CALL(OceanHeavyLaunched("products", n));
  HEAVY_CALL(OceanCudaScanCounts(dev, NULL, n, q.as<int64_t>(), qoff.as<int64_t>(), NULL, NULL));
  hq.resize((size_t)n + 1);
  HEAVY_CALL(OceanCudaReadback(dev, hq.data(), qoff.p, (size_t)(n + 1) * sizeof(int64_t)));
  /* B's runs of level 0's chunks, for every batch's level-0 histogram, when a row's chunk counts fit a block (after
     the readback: the clock times only this) */
  if (OceanHeavyChunksAt(&L, 0, B.ncols) <= HEAVY_ROW_HIST_MAX && B.nrows > 0) {
    int64_t nruns = 0;
    HEAVY_CALL(clock.start());
    HEAVY_CALL(run_count.get((size_t)B.nrows * sizeof(int64_t)));
    HEAVY_CALL(run_off.get((size_t)(B.nrows + 1) * sizeof(int64_t)));
    OceanKernelHeavyRuns<<<OceanGrid(B.nrows, OCEAN_THREADS / 32), OCEAN_THREADS>>>(B, L, run_count.as<int64_t>(), NULL,
                                                                                    NULL);
    HEAVY_CALL(OceanHeavyLaunched("counting runs of B", B.nrows));
    HEAVY_CALL(OceanCudaScanCounts(dev, NULL, B.nrows, run_count.as<int64_t>(), run_off.as<int64_t>(), NULL, &nruns));
    HEAVY_CALL(runs.get((size_t)OceanMax64(nruns, 1) * sizeof(OceanHeavyRun)));
    OceanKernelHeavyRuns<<<OceanGrid(B.nrows, OCEAN_THREADS / 32), OCEAN_THREADS>>>(B, L, NULL, run_off.as<int64_t>(),
                                                                                    runs.as<OceanHeavyRun>());
    HEAVY_CALL(OceanHeavyLaunched("listing runs of B", B.nrows));
    HEAVY_CALL(clock.stop(&times[1]));
  }
  err = OceanCudaDeviceMemory(dev, &free_bytes, NULL);
  for (h0 = 0; !err && h0 < n; h0 = h1) {
    /* a batch: its elements (one buffer, two with more than one level) and level 0's bins in half the free memory */
    const int64_t nc0    = OceanHeavyChunksAt(&L, 0, B.ncols);
    const int64_t budget = OceanMax64(free_bytes / 2, (int64_t)1 << 28);
    for (h1 = h0 + 1; h1 < n; h1++) {
      const int64_t elems = hq[h1 + 1] - hq[h0], rows = h1 + 1 - h0;
      if (elems * elem_bytes * (L.levels > 1 ? 2 : 1) + rows * nc0 * 24 > budget) break;
    }
    err = OceanCudaHeavyBatch(dev, hb, &L, A, B, d_routes, d_list + h0, h1 - h0, hq[h1] - hq[h0], q.as<int64_t>() + h0,
                              d_offsets, d_cols, d_vals, d_counts, d_flags, smem_max, run_off.as<int64_t>(),
                              runs.as<OceanHeavyRun>(), with_cells ? &rp->cells : NULL, hc, times, &clock);
    if (!err && numeric) hc->batches++;
  }
  return err;
}
