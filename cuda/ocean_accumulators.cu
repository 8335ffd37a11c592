/*
  ocean_accumulators.cu - the accumulators of the CUDA SpGEMM: every row of C by its route, the rows grouped by bin
  (OceanCudaGroupByKey) and each bin launched with its kernel: ESC rows (a team of lanes per row), warp teams (EMPTY,
  SHORT, N0), shared-memory blocks (N1..N4: hash or dense) and LONG (global hash or global dense).  A row of C per team
  (a warp or a block, see OceanTeam).

  Every decision is the CPU backend's: rows are routed by OceanRouteRowBins, hash tables use OceanHashSlot (all from
  core/rules.h).  A row overflows exactly when its distinct columns exceed its slot, as on the CPU.
  Summation order: ESC rows sum in product order (bitwise the CPU's); hash and dense rows accumulate with atomicAdd,
  so their last bits depend on the schedule (the tests allow 1e-12 |A||B|).
  Output order: ESC (rank sort), dense (bitmap scan) and shared-hash (occupied entries compacted, then ranked or
  bitonic-sorted) rows are written in column order; only global-hash (LONG) rows are appended unsorted and sorted
  afterwards, in place, by OceanCudaSortRows (ocean_scan.cu).
*/
#include <cub/cub.cuh>
#include <cuda_runtime.h>
#include "ocean_cuda.h"
#include "ocean_launch.cuh"
#include "ocean_block.cuh"
#include "ocean_rows.cuh"
#include "ocean_team.cuh"

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
  unsigned long long  *next;  /* LONG: the next position of list to take (rows handed out dynamically) */
  OceanHeavyCells      cells; /* symbolic: the records of the rows that may be heavy (row_cell NULL: none) */
};

/* Every product of row i through f, spread over the team (OceanGroupForProducts); a block-wide team walks the long
   rows of B together (lr: its list, emptied before the row). */
template <typename F>
__device__ __forceinline__ void OceanTeamForProducts(const OceanTeam &tm, const OceanRowArgs &a, int64_t i,
                                                     bool numeric, OceanTeamLongRows *lr, F f)
{
  const int64_t tb = a.A.rowptr[i], te = a.A.rowptr[i + 1];
  const int     g = OceanLanesPerEntry(a.shapes[i].products, te - tb);
  OceanGroupForProducts(a.A, a.B, tb, te, tm.tid, tm.size, g, numeric, f, tm.size > 32 ? lr : NULL,
                        a.shapes[i].products);
}

/* Writes the n distinct columns keys[0, n) (and their values) in column order: each thread holds K of them and counts,
   in one pass over the n keys (broadcast reads), those below each of its own; that count is the entry's place.  Up to
   OCEAN_RANK_WRITE_MAX entries this beats the bitonic sort's steps and barriers (H200, the real set: 8% in geometric
   mean while N0 rows had 64-thread teams). */
#define OCEAN_RANK_WRITE_MAX 256
template <int K>
__device__ __forceinline__ void OceanTeamRankWrite(const OceanTeam &tm, const int32_t *keys, const double *hv, int n,
                                                   int32_t *cols, double *vals)
{
  int32_t mine[K];
  int     rank[K];
#pragma unroll
  for (int k = 0; k < K; k++) {
    const int j = tm.tid + k * tm.size;
    mine[k]     = j < n ? keys[j] : INT32_MAX;
    rank[k]     = 0;
  }
  for (int o = 0; o < n; o++) {
    const int32_t other = keys[o];
#pragma unroll
    for (int k = 0; k < K; k++) rank[k] += other < mine[k];
  }
#pragma unroll
  for (int k = 0; k < K; k++) {
    const int j = tm.tid + k * tm.size;
    if (j < n) {
      cols[rank[k]] = mine[k];
      vals[rank[k]] = hv[j];
    }
  }
}

/* A symbolic shared-hash row's count by cells of the multisplit's last level into its record rec (OceanHeavyCells):
   the record cleared, one atomic per occupied slot into its column's cell, then one warp's exclusive prefix with the
   total last (the count itself is the hash's). */
__device__ void OceanTeamHashCountCells(const OceanTeam &tm, const OceanHeavyCells &hc, int32_t rec,
                                        const int32_t *keys, int64_t cap)
{
  const int64_t ncells = hc.stride - 1;
  int32_t      *cell   = hc.cells + (int64_t)rec * hc.stride;

  for (int64_t k = tm.tid; k < ncells; k += tm.size) cell[k] = 0;
  tm.sync();
  for (int64_t j = tm.tid; j < cap; j += tm.size)
    if (keys[j] != -1) atomicAdd(&cell[keys[j] >> hc.shift], 1);
  tm.sync();
  if (tm.tid < 32) OceanWarpCellsPrefix(cell, ncells, tm.tid);
}

/* Hash accumulator (shared table, or global memory for LONG).  A symbolic shared-hash row with a record of cells
   counts by cells into it too (CELLS: a pass with records). */
template <bool CELLS>
__device__ void OceanTeamHashRow(const OceanTeam &tm, const OceanRowArgs &a, int64_t i, const OceanRoute &r,
                                 int32_t *keys, double *hv, bool shared_table, OceanRowState *st, int *warp_sums,
                                 OceanTeamLongRows *lr)
{
  const bool    values = a.cols != NULL; /* numeric: vals too */
  const int64_t cap = r.capacity, slot = r.slot;

  if (shared_table)
    for (int64_t j = tm.tid; j < cap; j += tm.size) {
      keys[j] = -1;
      if (values) hv[j] = 0.0;
    }
  tm.sync();
  if (values && shared_table && tm.size == 32) /* a warp team: the adds in turns, no fp64 shared atomics */
    OceanWarpPhasedProducts(a.A, a.B, a.A.rowptr[i], a.A.rowptr[i + 1],
                            OceanLanesPerEntry(a.shapes[i].products, a.A.rowptr[i + 1] - a.A.rowptr[i]), hv,
                            [&](int32_t col) -> int64_t {
                              return ((volatile int *)&st->over)[0] ? -1 : OceanHashFind(keys, cap, slot, col, st);
                            });
  else
    OceanTeamForProducts(tm, a, i, values, lr, [&](int32_t col, double v) {
      if (!((volatile int *)&st->over)[0]) OceanHashInsert(keys, hv, cap, slot, col, v, values, st);
    });
  tm.sync();
  if (!values) {
    const int32_t rec = CELLS && shared_table ? a.cells.row_cell[i] : -1;
    if (rec >= 0 && !st->over) OceanTeamHashCountCells(tm, a.cells, rec, keys, cap);
    return;
  }
  if (st->over) return;
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
    OceanTeamRankWrite<1>(tm, keys, hv, (int)cnt, a.cols + off, a.vals + off);
    return;
  }
  if (cnt <= OCEAN_RANK_WRITE_MAX && cnt <= 4 * (int64_t)tm.size) {
    if (cnt <= 2 * (int64_t)tm.size) OceanTeamRankWrite<2>(tm, keys, hv, (int)cnt, a.cols + off, a.vals + off);
    else OceanTeamRankWrite<4>(tm, keys, hv, (int)cnt, a.cols + off, a.vals + off);
    return;
  }
  OceanTeamSortTable(tm, (uint32_t *)keys, hv, cnt);
  for (int64_t j = tm.tid; j < cnt; j += tm.size) {
    a.cols[off + j] = keys[j];
    a.vals[off + j] = hv[j];
  }
}

/* The set bits of bm[0, nw) in column order: the k-th (column col0 + j) to cols[k], with dv[j] to vals[k].  Warp w
   takes a contiguous chunk of the words, counts the bits before its chunk, then walks the chunk 32 words at a time
   with a warp scan of the words' bit counts. */
__device__ void OceanTeamWriteBitsInOrder(const OceanTeam &tm, const unsigned *bm, int nw, const double *dv,
                                          int32_t col0, int32_t *cols, double *vals)
{
  const int lane = tm.tid & 31, warp = tm.tid >> 5, nwarps = tm.size >> 5;
  const int chunk = (nw + nwarps - 1) / nwarps, w0 = min(nw, warp * chunk), w1 = min(nw, w0 + chunk);
  unsigned  before = 0; /* at most the row's slot */

  for (int t = lane; t < w0; t += 32) before += (unsigned)__popc(bm[t]);
  for (int d = 16; d > 0; d >>= 1) before += __shfl_xor_sync(0xffffffffu, before, d);
  for (int t = w0; t < w1; t += 32) {
    const int      w    = t + lane;
    unsigned       bits = w < w1 ? bm[w] : 0u;
    const unsigned cnt  = (unsigned)__popc(bits);
    const unsigned incl = OceanWarpInclusiveSum(cnt, lane);
    unsigned o = before + incl - cnt;
    for (; bits; bits &= bits - 1, o++) {
      const int j = w * 32 + __ffs(bits) - 1;
      cols[o]     = col0 + j;
      vals[o]     = dv[j];
    }
    before += __shfl_sync(0xffffffffu, incl, 31);
  }
}

/* A symbolic dense row's count from its bitmap bm (bit j: column colmin + j, span bits) by cells of the multisplit's
   last level into its record rec (OceanHeavyCells): a warp per cell sums its words' bits (the edge words masked), one
   warp turns the counts into the exclusive prefix with the total last.  Adds the total to st->count. */
__device__ void OceanTeamCountCells(const OceanTeam &tm, const OceanHeavyCells &hc, int32_t rec, const unsigned *bm,
                                    int64_t colmin, int64_t span, OceanRowState *st)
{
  const int     lane = tm.tid & 31, warp = tm.tid >> 5, nwarps = tm.size >> 5;
  const int64_t ncells = hc.stride - 1;
  int32_t      *cell   = hc.cells + (int64_t)rec * hc.stride;

  for (int64_t k = warp; k < ncells; k += nwarps) {
    const int64_t jlo = OceanMax64(0, (k << hc.shift) - colmin), jhi = OceanMin64(span, ((k + 1) << hc.shift) - colmin);
    unsigned      c = 0;
    for (int64_t w = (jlo >> 5) + lane; jlo < jhi && w <= (jhi - 1) >> 5; w += 32) {
      unsigned bits = bm[w];
      if (w == jlo >> 5) bits &= ~0u << (jlo & 31);
      if (w == (jhi - 1) >> 5) bits &= ~0u >> (31 - ((jhi - 1) & 31));
      c += (unsigned)__popc(bits);
    }
    for (int d = 16; d > 0; d >>= 1) c += __shfl_xor_sync(OCEAN_FULL_MASK, c, d);
    if (lane == 0) {
      cell[k] = (int32_t)c;
      if (c) atomicAdd(&st->count, c);
    }
  }
  tm.sync();
  if (warp == 0) OceanWarpCellsPrefix(cell, ncells, lane);
}

/* Dense accumulator over the row's span: a bitmap and (numeric) the sums dv in shared memory (DENSE; LONG's dense rows
   count here, symbolic, and sum in OceanTeamWindowedDenseRow).  A symbolic row with a record of cells counts by cells
   into it (OceanTeamCountCells; CELLS: a pass with records, the only kernels that carry that code). */
template <bool CELLS>
__device__ void OceanTeamDenseRow(const OceanTeam &tm, const OceanRowArgs &a, int64_t i, const OceanRoute &r,
                                  const OceanRowShape &sh, double *dv, unsigned *bm, OceanRowState *st,
                                  OceanTeamLongRows *lr)
{
  const bool    values = a.cols != NULL; /* numeric: vals too */
  const int64_t span = r.capacity, nw = (span + 31) / 32;

  for (int64_t j = tm.tid; j < nw; j += tm.size) bm[j] = 0;
  if (values)
    for (int64_t j = tm.tid; j < span; j += tm.size) dv[j] = 0.0;
  tm.sync();
  /* With the plan's bitmap query a value would be written, not added, by the first product of its column; that
     needs an ordering between the bit and the value that atomics alone do not give, so this first version always
     zeroes the values and adds (same result). */
  OceanTeamForProducts(tm, a, i, values, lr, [&](int32_t col, double v) {
    const int64_t  j   = (int64_t)col - sh.colmin;
    const unsigned bit = 1u << (j & 31);
    /* heavy rows set most bits early: reads then, not contended atomics */
    if (!(((volatile unsigned *)bm)[j >> 5] & bit)) atomicOr(&bm[j >> 5], bit);
    if (values) atomicAdd(&dv[j], v);
  });
  tm.sync();
  const int32_t rec = CELLS ? a.cells.row_cell[i] : -1;
  if (CELLS && rec >= 0) OceanTeamCountCells(tm, a.cells, rec, bm, sh.colmin, span, st);
  else
    for (int64_t w = tm.tid; w < nw; w += tm.size) {
      const int c = __popc(bm[w]);
      if (c) atomicAdd(&st->count, (unsigned)c);
    }
  tm.sync();
  if (tm.tid == 0) st->over = st->count > (unsigned long long)r.slot;
  tm.sync();
  if (!values || st->over) return;
  /* a shared-memory bitmap: far below 2^31 words */
  OceanTeamWriteBitsInOrder(tm, bm, (int)nw, dv, (int32_t)sh.colmin, a.cols + a.offsets[i], a.vals + a.offsets[i]);
}

/* LONG's dense rows, numeric: the row's span in windows of OCEAN_LONG_WINDOW columns, each summed in shared memory
   (values and a bitmap) and written in column order before the next, so the sums' fp64 atomics stay in shared memory
   instead of the block's global array (whose blocks' arrays pass the L2: R-MAT 16/32 spans 2^16 columns, 512 KB a
   block).  The first OCEAN_LONG_CURSORS entries of A keep their place and end in their rows of B in shared memory from
   one window to the next (no reload of A's columns and B's row pointers); the rest reload them and search the window's
   first column; g lanes an entry, g from the products a window holds on average.  The row overflows when its entries
   so far pass its slot: nothing more is written. */
#define OCEAN_LONG_WINDOW  8192
#define OCEAN_LONG_CURSORS 2560
#define OCEAN_LONG_WINDOW_BYTES \
  (OCEAN_LONG_WINDOW * (int)sizeof(double) + OCEAN_LONG_WINDOW / 8 + OCEAN_LONG_CURSORS * 2 * (int)sizeof(int64_t))
__device__ void OceanTeamWindowedDenseRow(const OceanTeam &tm, const OceanRowArgs &a, int64_t i, const OceanRoute &r,
                                          const OceanRowShape &sh, char *smem, OceanRowState *st, int *warp_sums)
{
  double         *dv   = (double *)smem;
  unsigned       *bm   = (unsigned *)(dv + OCEAN_LONG_WINDOW);
  int64_t        *cpos = (int64_t *)(bm + OCEAN_LONG_WINDOW / 32), *cend = cpos + OCEAN_LONG_CURSORS;
  const int64_t   span = r.capacity, tb = a.A.rowptr[i], te = a.A.rowptr[i + 1], nent = te - tb;
  const int64_t   ncur = nent < OCEAN_LONG_CURSORS ? nent : OCEAN_LONG_CURSORS;
  const int64_t   nwin = (span + OCEAN_LONG_WINDOW - 1) / OCEAN_LONG_WINDOW;
  const int       g    = OceanLanesPerEntry((a.shapes[i].products + nwin - 1) / nwin, nent);
  const int       lane = tm.tid & 31, warp = tm.tid >> 5, nwarps = tm.size >> 5, per_warp = 32 / g, gw = lane / g;
  const int       sub  = lane & (g - 1);
  const unsigned  gmask = (g == 32 ? 0xffffffffu : ((1u << g) - 1u)) << (gw * g);
  const int64_t   off   = a.offsets[i];
  int64_t         base  = 0; /* the row's entries in the windows before: the same on every thread */

  for (int64_t lo = 0; lo < span; lo += OCEAN_LONG_WINDOW) {
    const int     w = (int)(span - lo < OCEAN_LONG_WINDOW ? span - lo : OCEAN_LONG_WINDOW), nw = (w + 31) / 32;
    const int32_t clo = (int32_t)(sh.colmin + lo), chi = clo + w;
    for (int j = tm.tid; j < w; j += tm.size) dv[j] = 0.0;
    for (int j = tm.tid; j < nw; j += tm.size) bm[j] = 0;
    tm.sync();
    /* the window's products: a group per entry, its lanes from the entry's place on while the columns are below chi */
    for (int64_t c = (int64_t)warp * per_warp; c < nent; c += (int64_t)nwarps * per_warp) {
      const int64_t e  = c + gw;
      const bool    ok = e < nent;
      int64_t       be = 0, p = 0;
      double        av = 0.0;
      if (ok) {
        av = a.A.values[tb + e];
        if (lo > 0 && e < ncur) {
          p  = cpos[e];
          be = cend[e];
        } else {
          const int32_t k = a.A.colidx[tb + e];
          p               = a.B.rowptr[k];
          be              = a.B.rowptr[k + 1];
          if (lo > 0) { /* the first entry of the row of B at or past clo (every one is, in the first window) */
            int64_t h = be;
            while (p < h) {
              const int64_t m = (p + h) >> 1;
              if (a.B.colidx[m] < clo) p = m + 1;
              else h = m;
            }
          }
        }
      }
      bool done = !ok;
      while (__any_sync(0xffffffffu, !done)) {
        const int64_t q  = p + sub;
        const int32_t cl = !done && q < be ? a.B.colidx[q] : INT32_MAX;
        const bool    in = cl < chi;
        if (in) {
          const int      j   = cl - clo;
          const unsigned bit = 1u << (j & 31);
          if (!(((volatile unsigned *)bm)[j >> 5] & bit)) atomicOr(&bm[j >> 5], bit);
          atomicAdd(&dv[j], av * a.B.values[q]);
        }
        /* the columns increase along the row: the lanes in the window are the group's first ones */
        const unsigned m = __ballot_sync(0xffffffffu, in) & gmask;
        if (!done) {
          p += __popc(m);
          if (m != gmask) done = true;
        }
      }
      __syncwarp(); /* the group's lanes read the cursors above (the loop's exit is the warp's) */
      if (ok && sub == 0 && e < ncur) {
        cpos[e] = p;
        cend[e] = be;
      }
    }
    tm.sync();
    /* the window's entries: its words' bits, counted by a block reduction */
    int mine = 0;
    for (int j = tm.tid; j < nw; j += tm.size) mine += __popc(bm[j]);
    for (int d = 16; d > 0; d >>= 1) mine += __shfl_xor_sync(0xffffffffu, mine, d);
    if (lane == 0) warp_sums[warp] = mine;
    tm.sync();
    int cw = 0;
    for (int k = 0; k < nwarps; k++) cw += warp_sums[k];
    if (base + cw > r.slot) { /* the same on every thread */
      if (tm.tid == 0) st->over = 1;
      return;
    }
    OceanTeamWriteBitsInOrder(tm, bm, nw, dv, clo, a.cols + off + base, a.vals + off + base);
    base += cw;
    tm.sync(); /* the window's values and bits read before the next window clears them */
  }
  if (tm.tid == 0) st->count = (unsigned)base;
}

/* Expand-sort-compact for rows of at most OCEAN_ESC_MAX products (ESC4 and ESC2 alike): a team of OCEAN_ESC_LANES
   lanes per row, OCEAN_TEAM_BLOCK / OCEAN_ESC_LANES rows per block.  Short rows are latency-bound (a few dependent
   loads each): many in flight beats wide teams.  Products expanded in product order (OceanFlatProducts), a stable
   rank sort of (column, product index) in shared memory, then each run of equal columns summed in product order (the
   CPU's order, so these rows match it bitwise).  A team's lanes share a warp with other teams: they synchronize on
   their own mask only.  Measured with Nsight Compute on the H200 (3D 7-point squared, 49 products a row): 32 lanes a
   row 5.5 ms, 8 lanes 3.8 ms.  Rows of the team's tables are padded by one entry so that the teams of a warp read
   different banks. */
#define OCEAN_ESC_MAX        64
#define OCEAN_ESC_INDEX_BITS 6 /* a product's index in its row: below OCEAN_ESC_MAX */
#define OCEAN_ESC_LANES      8
#define OCEAN_ESC_PAD        (OCEAN_ESC_MAX + 1)

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
  const bool         values      = a.cols != NULL;                                    /* numeric: vals too */
  const bool         narrow_keys = a.B.ncols <= (1ll << (32 - OCEAN_ESC_INDEX_BITS)); /* (column, index) in 32 bits */
  const int          sub = (int)threadIdx.x % W, t = (int)threadIdx.x / W, first = (int)(threadIdx.x & 31) & ~(W - 1);
  const unsigned     mask = W == 32 ? 0xffffffffu : ((1u << W) - 1u) << first;

  for (int64_t pos = (int64_t)blockIdx.x * R + t; pos < a.n; pos += (int64_t)gridDim.x * R) {
    const int64_t    i     = a.list[pos];
    const OceanRoute r     = a.routes[i];
    const int        q     = (int)r.capacity;
    int              count = 0, before = 0;
    OceanFlatProducts<W>(a.A, a.B, a.A.rowptr[i], a.A.rowptr[i + 1], sub, mask, ex[t], eb[t], ea[t], values,
                         [&](int p, int32_t col, double v) {
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
   only (occupancy): warp teams (EMPTY, SHORT, N0: hash or dense), shared-memory blocks (N1..N4: hash or dense), LONG
   (global hash). */
enum { OCEAN_ROWS_WARP = 0, OCEAN_ROWS_SHARED, OCEAN_ROWS_GLOBAL };
/* Registers: warp teams at 4 blocks of OCEAN_TEAM_BLOCK (64 registers); the 1024-thread kinds at two blocks per SM
   (32 registers, a few spilled to L1), which the hash and dense rows' latency needs more than registers (H200,
   R-MAT scale 18 degree 8: numeric 116 -> 78 ms; elasticity 50 -> 41 ms; the 27-point Laplacian about 3% slower). */
template <int KIND, bool CELLS>
__global__ void __launch_bounds__(KIND == OCEAN_ROWS_WARP ? OCEAN_TEAM_BLOCK : 1024, KIND == OCEAN_ROWS_WARP ? 4 : 2)
  OceanKernelRows(OceanRowArgs a, int team_size, int team_bytes)
{
  /* the list of long rows of B of SHARED's block-wide team; LONG's rows keep their warps' walk: with the list, R-MAT
     16/32 (97% of its products in LONG) took 12% longer (H100) */
  __shared__ OceanTeamLongRows long_rows;
  extern __shared__ double     ocean_smem_d[];
  __shared__ OceanRowState     st[OCEAN_MAX_TEAMS];
  __shared__ int               warp_sums[32];
  __shared__ long long         next_pos;
  OceanTeam                    tm;
  tm.size              = team_size;
  tm.id                = (int)threadIdx.x / team_size;
  tm.tid               = (int)threadIdx.x % team_size;
  const int      teams = (int)blockDim.x / team_size;
  char          *smem  = (char *)ocean_smem_d + (size_t)tm.id * (size_t)team_bytes;
  OceanRowState *s     = &st[tm.id];

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
      if constexpr (KIND == OCEAN_ROWS_SHARED) long_rows.n = 0;
    }
    tm.sync();
    if (r.acc == OCEAN_ACC_HASH) {
      /* values first: 8-byte aligned */
      double  *hv   = (double *)smem;
      int32_t *keys = (int32_t *)(a.cols ? smem + r.capacity * sizeof(double) : smem);
      if constexpr (KIND != OCEAN_ROWS_GLOBAL)
        OceanTeamHashRow<CELLS>(tm, a, i, r, keys, hv, true, s, warp_sums, &long_rows);
    } else if constexpr (KIND != OCEAN_ROWS_GLOBAL) {
      if (r.acc == OCEAN_ACC_DENSE)
        OceanTeamDenseRow<CELLS>(tm, a, i, r, a.shapes[i], (double *)smem,
                                 (unsigned *)(a.cols ? smem + r.capacity * sizeof(double) : smem), s, &long_rows);
    } else {
      if (r.acc == OCEAN_ACC_GLOBAL_DENSE) {
        if (a.cols) OceanTeamWindowedDenseRow(tm, a, i, r, a.shapes[i], smem, s, warp_sums);
        else OceanTeamDenseRow<CELLS>(tm, a, i, r, a.shapes[i], NULL, (unsigned *)smem, s, NULL);
      } else if (r.acc == OCEAN_ACC_GLOBAL_HASH)
        OceanTeamHashRow<false>(tm, a, i, r, a.gkeys + a.goff[pos], a.gvals ? a.gvals + a.goff[pos] : NULL, false, s,
                                warp_sums, NULL);
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
__global__ void OceanKernelGlobalCapacity(const int64_t *list, int64_t n, const OceanRoute *routes, int64_t *cap,
                                          unsigned long long *dense_span)
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
__global__ void OceanKernelKeyRows(const uint8_t *keys, const int64_t *list, int64_t n, int nkeys, int64_t *rows,
                                   unsigned long long *counts)
{
  __shared__ unsigned block_counts[256];
  for (int k = threadIdx.x; k < nkeys; k += blockDim.x) block_counts[k] = 0;
  __syncthreads();
  OCEAN_GRID_STRIDE(j, n)
  {
    const unsigned key = keys[j], peers = __match_any_sync(__activemask(), key);
    rows[j] = list ? list[j] : j;
    if ((int)(threadIdx.x & 31) == __ffs(peers) - 1) atomicAdd(&block_counts[key], (unsigned)__popc(peers));
  }
  __syncthreads();
  for (int k = threadIdx.x; k < nkeys; k += blockDim.x)
    if (block_counts[k]) atomicAdd(&counts[k], (unsigned long long)block_counts[k]);
}

/* OceanCudaGroupByKey without its wait: the counts stay on the device in d_counts[0..nkeys-1] (zeroed here). */
static OceanError OceanCudaGroupByKeyQueued(OceanCudaDevice dev, const uint8_t *d_keys, const int64_t *d_list,
                                            int64_t n, int nkeys, int64_t **d_grouped, unsigned long long *d_counts)
{
  uint8_t   *skeys = NULL;
  int64_t   *rows = NULL, *srows = NULL;
  OceanTemp  temp(dev);
  size_t     bytes = 0;
  const int  bits  = nkeys > 1 ? 32 - __builtin_clz((unsigned)(nkeys - 1)) : 1;
  OceanError err;

  *d_grouped = NULL;
  if (nkeys < 1 || nkeys > 256) return OceanSetError(OCEAN_ERR_ARG, "grouping rows: %d keys, 1 to 256 allowed", nkeys);
  if ((err = OceanCudaCheck(cudaMemsetAsync(d_counts, 0, (size_t)nkeys * sizeof(unsigned long long), 0),
                            "grouping rows: memset")))
    return err;
  if (n == 0) return OCEAN_SUCCESS;
  if ((err = OceanCudaAlloc(dev, (size_t)n, (void **)&skeys)) ||
      (err = OceanCudaAlloc(dev, (size_t)n * sizeof(int64_t), (void **)&rows)) ||
      (err = OceanCudaAlloc(dev, (size_t)n * sizeof(int64_t), (void **)&srows)))
    goto done;
  OceanKernelKeyRows<<<OceanGrid(n, OCEAN_THREADS), OCEAN_THREADS>>>(d_keys, d_list, n, nkeys, rows, d_counts);
  /* a radix sort over the key's bits, stable: rows keep their order inside a group */
  if ((err = OceanCudaCheck(cub::DeviceRadixSort::SortPairs(NULL, bytes, d_keys, skeys, rows, srows, n, 0, bits),
                            "grouping rows: radix sort")) ||
      (err = temp.get(bytes)) ||
      (err = OceanCudaCheck(cub::DeviceRadixSort::SortPairs(temp.ptr, bytes, d_keys, skeys, rows, srows, n, 0, bits),
                            "grouping rows: radix sort")))
    goto done;
  *d_grouped = srows;
  srows      = NULL;
done:
  OceanCudaFree(dev, skeys);
  OceanCudaFree(dev, rows);
  OceanCudaFree(dev, srows);
  return err;
}

extern "C" OceanError OceanCudaGroupByKey(OceanCudaDevice dev, const uint8_t *d_keys, const int64_t *d_list, int64_t n,
                                          int nkeys, int64_t **d_grouped, int64_t *counts)
{
  unsigned long long *d_counts = NULL, h_counts[256];
  OceanError          err;

  *d_grouped = NULL;
  memset(counts, 0, sizeof(int64_t) * (size_t)(nkeys > 0 && nkeys <= 256 ? nkeys : 0));
  if (nkeys < 1 || nkeys > 256) return OceanSetError(OCEAN_ERR_ARG, "grouping rows: %d keys, 1 to 256 allowed", nkeys);
  if (n == 0) return OCEAN_SUCCESS;
  if ((err = OceanCudaAlloc(dev, (size_t)nkeys * sizeof(unsigned long long), (void **)&d_counts))) return err;
  err = OceanCudaGroupByKeyQueued(dev, d_keys, d_list, n, nkeys, d_grouped, d_counts);
  if (!err) err = OceanCudaReadback(dev, h_counts, d_counts, (size_t)nkeys * sizeof(unsigned long long));
  for (int b = 0; !err && b < nkeys; b++) counts[b] = (int64_t)h_counts[b];
  if (err) {
    OceanCudaFree(dev, *d_grouped);
    *d_grouped = NULL;
  }
  OceanCudaFree(dev, d_counts);
  return err;
}

/* OceanCudaGroupRows in one block (n <= OCEAN_SMALL_ROWS): every row's bin read once into shared memory (the loads
   issued four a thread at a time), then grouped from there (OceanBlockGroupBins). */
#define OCEAN_GROUP_LOADS 4
__global__ void __launch_bounds__(OCEAN_SMALL_THREADS)
  OceanKernelGroupSmall(const int64_t *list, int64_t n, const OceanRoute *routes, int64_t *grouped,
                        unsigned long long *counts)
{
  __shared__ uint8_t bin_of[OCEAN_SMALL_ROWS];

  for (int64_t base = 0; base < n; base += OCEAN_SMALL_THREADS * OCEAN_GROUP_LOADS) {
    uint8_t key[OCEAN_GROUP_LOADS];
#pragma unroll
    for (int k = 0; k < OCEAN_GROUP_LOADS; k++) {
      const int64_t j = base + (int64_t)k * OCEAN_SMALL_THREADS + threadIdx.x;
      if (j < n) key[k] = routes[list ? list[j] : j].bin;
    }
#pragma unroll
    for (int k = 0; k < OCEAN_GROUP_LOADS; k++) {
      const int64_t j = base + (int64_t)k * OCEAN_SMALL_THREADS + threadIdx.x;
      if (j < n) bin_of[j] = key[k];
    }
  }
  __syncthreads();
  OceanBlockGroupBins(bin_of, n, list, grouped, counts);
}

/* A small product's routed rows (n <= OCEAN_SMALL_ROWS): their slots scanned into offsets[0..n] and the rows grouped by
   bin in one block (OceanCudaPlanRows), each route read once, its bin kept in shared memory for the grouping;
   counts[OCEAN_NUM_BINS] = the slots' total, read back with the bins' counts.  The routing itself stays a grid-wide
   launch: one block routing 13,366 rows took 50 us on an H200 against 4 us for the grid. */
__global__ void __launch_bounds__(OCEAN_SMALL_THREADS)
  OceanKernelScanGroupSmall(const OceanRoute *routes, int64_t n, int64_t *offsets, int64_t *grouped,
                            unsigned long long *counts)
{
  __shared__ uint8_t bin_of[OCEAN_SMALL_ROWS];
  auto               slot_of = [&](int64_t j) {
    bin_of[j] = routes[j].bin;
    return routes[j].slot;
  };
  const int64_t total = OceanBlockScan(n, slot_of, [&](int64_t j, int64_t x) { offsets[j] = x; });
  if (threadIdx.x == 0) {
    offsets[n]             = total;
    counts[OCEAN_NUM_BINS] = (unsigned long long)total;
  }
  __syncthreads();
  OceanBlockGroupBins(bin_of, n, NULL, grouped, counts);
}

/* The frame of the one-block planning kernels (OceanKernelGroupSmall, OceanKernelScanGroupSmall): the grouped rows
   (n) and ncounts counters allocated, the kernel launched by launch(grouped, d_counts), the counters read back into
   h_counts (one wait).  *d_grouped is set only on success. */
template <typename Launch>
static OceanError OceanCudaOneBlockGroups(OceanCudaDevice dev, int64_t n, int ncounts, const char *what, Launch launch,
                                          int64_t **d_grouped, unsigned long long *h_counts)
{
  unsigned long long *d_counts = NULL;
  int64_t            *grouped  = NULL;
  OceanError          err;

  *d_grouped = NULL;
  if ((err = OceanCudaAlloc(dev, (size_t)n * sizeof(int64_t), (void **)&grouped)) ||
      (err = OceanCudaAlloc(dev, (size_t)ncounts * sizeof(unsigned long long), (void **)&d_counts)))
    goto done;
  launch(grouped, d_counts);
  if ((err = OceanCudaCheck(cudaGetLastError(), what))) goto done;
  err = OceanCudaReadback(dev, h_counts, d_counts, (size_t)ncounts * sizeof(unsigned long long));
done:
  OceanCudaFree(dev, d_counts);
  if (err) OceanCudaFree(dev, grouped);
  else *d_grouped = grouped;
  return err;
}

static OceanError OceanCudaGroupRows(OceanCudaDevice dev, const OceanRoute *d_routes, const int64_t *d_list, int64_t n,
                                     int64_t **d_grouped, int64_t bin_rows[OCEAN_NUM_BINS])
{
  uint8_t   *keys = NULL;
  OceanError err;

  *d_grouped = NULL;
  memset(bin_rows, 0, sizeof(int64_t) * OCEAN_NUM_BINS);
  if (n == 0) return OCEAN_SUCCESS;
  if (n <= OCEAN_SMALL_ROWS) {
    unsigned long long h_counts[OCEAN_NUM_BINS];
    err = OceanCudaOneBlockGroups(
      dev, n, OCEAN_NUM_BINS, "grouping rows by bin (one block): launch",
      [&](int64_t *grouped, unsigned long long *d_counts) {
        OceanKernelGroupSmall<<<1, OCEAN_SMALL_THREADS>>>(d_list, n, d_routes, grouped, d_counts);
      },
      d_grouped, h_counts);
    for (int b = 0; !err && b < OCEAN_NUM_BINS; b++) bin_rows[b] = (int64_t)h_counts[b];
    return err;
  }
  if ((err = OceanCudaAlloc(dev, (size_t)n, (void **)&keys))) return err;
  OceanKernelBinKeys<<<OceanGrid(n, OCEAN_THREADS), OCEAN_THREADS>>>(d_list, n, d_routes, keys);
  err = OceanCudaCheck(cudaGetLastError(), "grouping rows by bin: launch");
  if (!err) err = OceanCudaGroupByKey(dev, keys, d_list, n, OCEAN_NUM_BINS, d_grouped, bin_rows);
  OceanCudaFree(dev, keys);
  return err;
}

/* A bin's launch of the row kernel of its kind: warp teams, LONG (on the default stream) or shared-memory blocks. */
template <bool CELLS>
static void OceanLaunchRows(int team, int64_t bin, dim3 grid, dim3 block, size_t bytes, cudaStream_t stream,
                            const OceanRowArgs &a, int team_bytes)
{
  if (team == 32) OceanKernelRows<OCEAN_ROWS_WARP, CELLS><<<grid, block, bytes, stream>>>(a, team, team_bytes);
  else if (bin == OCEAN_BIN_LONG)
    OceanKernelRows<OCEAN_ROWS_GLOBAL, CELLS><<<grid, block, bytes>>>(a, team, team_bytes);
  else OceanKernelRows<OCEAN_ROWS_SHARED, CELLS><<<grid, block, bytes, stream>>>(a, team, team_bytes);
}

/* Sets the row kernels' opt-in of dynamic shared memory on the current device: what the opt-in limit leaves
   beside their static shared memory (the same for all), into *smem_max. */
static OceanError OceanRowsOptin(int smem_optin, int64_t *smem_max)
{
  cudaFuncAttributes fa;
  int                avail;
  const void        *kernels[] = {
           (const void *)OceanKernelRows<OCEAN_ROWS_WARP, false>,   (const void *)OceanKernelRows<OCEAN_ROWS_SHARED, false>,
           (const void *)OceanKernelRows<OCEAN_ROWS_GLOBAL, false>, (const void *)OceanKernelRows<OCEAN_ROWS_WARP, true>,
           (const void *)OceanKernelRows<OCEAN_ROWS_SHARED, true>,  (const void *)OceanKernelRows<OCEAN_ROWS_GLOBAL, true>};
  OCEAN_CUDA_TRY(cudaFuncGetAttributes(&fa, OceanKernelRows<OCEAN_ROWS_SHARED, false>));
  avail = smem_optin - (int)fa.sharedSizeBytes;
  for (const void *k : kernels)
    OCEAN_CUDA_TRY(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, avail));
  *smem_max = avail;
  return OCEAN_SUCCESS;
}

static OceanError OceanCudaRunGroupedRows(OceanCudaDevice dev, const OceanCudaRouteParams *rp, OceanDevCSR A,
                                          OceanDevCSR B, const OceanRowShape *d_shapes, const OceanRoute *d_routes,
                                          const int64_t *d_grouped, const int64_t bin_rows[OCEAN_NUM_BINS],
                                          int bitmap_query, const int64_t *d_offsets, int32_t *d_cols, double *d_vals,
                                          int64_t *d_counts, uint8_t *d_flags, int *global_hash)
{
  static OceanSmemOptin optin; /* the row kernels' opt-in, per device: the most the device allows */
  int                   smem_max;
  int64_t               smem_kept = 0;
  int64_t              *gcap = NULL, *goff = NULL;
  int32_t              *gkeys = NULL;
  double               *gvals = NULL;
  unsigned long long   *glong = NULL; /* LONG: [0] the widest dense row, [1] the next row to take */
  OceanError            err   = OCEAN_SUCCESS;
  int64_t               start, b, n = 0, long_grid = 1;

  /* the shared-memory bins side by side, each on a stream of its own after the default stream's earlier work (routes,
     lists): the first on the default stream unless the heavy rows take that one (and its waits) */
  cudaStream_t side[OCEAN_CUDA_SIDE_STREAMS];
  int          nshared = 0, nside = 0, k_shared = 0;
  const bool   heavy = bin_rows[OCEAN_BIN_HEAVY] > 0;

  int64_t rows[OCEAN_NUM_BINS]; /* the rows of each launch: the two ESC bins run the same kernel, in one launch */

  static_assert(OCEAN_BIN_ESC2 == OCEAN_BIN_ESC4 + 1, "the ESC bins are neighbours in the grouped rows");
  for (b = 0; b < OCEAN_NUM_BINS; b++) rows[b] = bin_rows[b];
  rows[OCEAN_BIN_ESC4] += rows[OCEAN_BIN_ESC2];
  rows[OCEAN_BIN_ESC2] = 0;
  for (b = 0; b < OCEAN_NUM_BINS; b++) {
    n += rows[b];
    nshared += rows[b] && b != OCEAN_BIN_LONG && b != OCEAN_BIN_HEAVY;
  }
  if (n == 0) return OCEAN_SUCCESS;
  nside = heavy ? nshared : nshared - 1;
  nside = nside < 0 ? 0 : nside > OCEAN_CUDA_SIDE_STREAMS ? OCEAN_CUDA_SIDE_STREAMS : nside;
  if (nside && (err = OceanCudaForkStreams(dev, nside, side))) return err;
  err = optin.ensure((int)rp->smem_optin, [&](int64_t *value) { return OceanRowsOptin((int)rp->smem_optin, value); },
                     &smem_kept);
  if (err) goto done;
  smem_max = (int)smem_kept;
  for (b = 0, start = 0; b < OCEAN_NUM_BINS; start += rows[b], b++) {
    const OceanBinConfig *c  = &rp->bins[b];
    const int64_t         nb = rows[b];
    OceanRowArgs          a;
    int                   team, teams, team_bytes;
    cudaError_t           launch;
    cudaStream_t          stream;

    if (!nb) continue;
    if (b != OCEAN_BIN_LONG && b != OCEAN_BIN_HEAVY) {
      const int k = k_shared++;
      stream      = heavy ? side[k % nside] : k == 0 ? (cudaStream_t)0 : side[(k - 1) % nside];
    } else stream = 0;
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
    if (!d_cols) a.cells = rp->cells;
    /* a team of threads per row: OCEAN_ESC_LANES for ESC (its own kernel), a warp for EMPTY and SHORT (the bin's
       block shared by its rows) and for N0 (each row with N0's whole table; the paper's block of 64 threads per row
       has two warps pay for the table's clearing, compaction and sort, and the kernel is bound by instruction issue:
       H200, the real set: MueLu's vardofpernode symbolic pass 0.82 -> 0.31 ms, 13% in geometric mean), the bin's
       block otherwise; teams smaller than OCEAN_TEAM_BLOCK threads are packed into blocks of that size */
    if (b == OCEAN_BIN_EMPTY) {
      team       = 32;
      team_bytes = 0;
    } else if (b == OCEAN_BIN_ESC4 || b == OCEAN_BIN_ESC2) {
      /* their own kernel (static shared memory), the same team width for both bins */
      const int lanes = OCEAN_ESC_LANES;
      OceanKernelEscRows<OCEAN_ESC_LANES>
        <<<OceanGrid(nb, OCEAN_TEAM_BLOCK / OCEAN_ESC_LANES), OCEAN_TEAM_BLOCK, 0, stream>>>(a);
      if ((launch = cudaGetLastError()) != cudaSuccess) {
        err = OceanSetError(OCEAN_ERR_DEVICE, "accumulators: bin %s (%lld rows, %d lanes a row): %s",
                            OceanBinName((OceanBin)b), (long long)nb, lanes, cudaGetErrorString(launch));
        goto done;
      }
      continue;
    } else if (b == OCEAN_BIN_HEAVY) {
      OceanHeavyCounts unkept;
      double           unkept_times[4] = {0, 0, 0, 0};
      memset(&unkept, 0, sizeof(unkept));
      /* with the phase timers on, the shared-memory bins finish first, so that the heavy rows' clocks time them alone,
         not the light rows running beside them */
      if (nside && OceanCudaTimersOn(dev) && (err = OceanCudaJoinStreams(dev, nside))) goto done;
      err = OceanCudaHeavyRows(dev, rp, A, B, d_shapes, d_routes, d_grouped + start, nb, d_offsets, d_cols, d_vals,
                               d_counts, d_flags, rp->heavy ? rp->heavy : &unkept,
                               rp->heavy_times ? rp->heavy_times : unkept_times);
      if (err) goto done;
      continue;
    } else if (b == OCEAN_BIN_LONG) {
      int64_t            total = 0;
      unsigned long long h[2];
      team       = c->threads;
      team_bytes = 0;
      if ((err = OceanCudaAlloc(dev, (size_t)(nb + 1) * sizeof(int64_t), (void **)&gcap)) ||
          (err = OceanCudaAlloc(dev, (size_t)(nb + 1) * sizeof(int64_t), (void **)&goff)) ||
          (err = OceanCudaAlloc(dev, 2 * sizeof(unsigned long long), (void **)&glong)))
        goto done;
      err = OceanCudaCheck(cudaMemsetAsync(glong, 0, 2 * sizeof(unsigned long long), 0), "accumulators: memset");
      if (err) goto done;
      OceanKernelGlobalCapacity<<<OceanGrid(nb, OCEAN_THREADS), OCEAN_THREADS>>>(d_grouped + start, nb, d_routes, gcap,
                                                                                 glong);
      if ((err = OceanCudaScanCounts(dev, NULL, nb, gcap, goff, NULL, &total)) ||
          (err = OceanCudaReadback(dev, h, glong, sizeof(h))))
        goto done;
      *global_hash = total > 0;
      if (total) {
        if ((err = OceanCudaAlloc(dev, (size_t)total * sizeof(int32_t), (void **)&gkeys))) goto done;
        err = OceanCudaCheck(cudaMemsetAsync(gkeys, 0xff, (size_t)total * sizeof(int32_t), 0), "accumulators: memset");
        if (err) goto done;
        if (d_vals) {
          if ((err = OceanCudaAlloc(dev, (size_t)total * sizeof(double), (void **)&gvals))) goto done;
          err = OceanCudaCheck(cudaMemsetAsync(gvals, 0, (size_t)total * sizeof(double), 0), "accumulators: memset");
          if (err) goto done;
        }
      }
      /* the dense rows: symbolic, the bitmap of their span (LONG's dense columns fit the block); numeric, a window */
      if (h[0]) team_bytes = d_vals ? OCEAN_LONG_WINDOW_BYTES : (int)((h[0] + 31) / 32 * 4 + 15) / 16 * 16;
      if (team_bytes > smem_max) {
        err = OceanSetError(OCEAN_ERR_DEVICE,
                            "accumulators: LONG's dense rows span %llu columns, %d bytes of shared memory (%s); the "
                            "kernel may have %d of dynamic shared memory",
                            h[0], team_bytes, d_vals ? "a window" : "a bitmap", smem_max);
        goto done;
      }
      a.goff  = goff;
      a.gkeys = gkeys;
      a.gvals = gvals;
      a.next  = glong + 1;
      {
        /* as many blocks as are resident at once, taking the rows one after another */
        const int sms    = OceanDeviceSMs();
        int       per_sm = 0;
        if (sms < 1) {
          err = OceanSetError(OCEAN_ERR_DEVICE, "accumulators: the device's multiprocessor count could not be read");
          goto done;
        }
        err = OceanCudaCheck(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                               &per_sm, OceanKernelRows<OCEAN_ROWS_GLOBAL, false>, team, (size_t)team_bytes),
                             "accumulators: occupancy of LONG");
        if (err) goto done;
        if (per_sm < 1) per_sm = 1;
        long_grid = (int64_t)sms * per_sm < nb ? (int64_t)sms * per_sm : nb;
      }
    } else {
      const int rpb = c->rows_per_block > 0 ? c->rows_per_block : 1;
      team          = b == OCEAN_BIN_N0 ? 32 : c->threads / rpb;
      team_bytes    = (int)(((c->smem_bytes / rpb) + 64 + 15) / 16 * 16);
      if (team_bytes > smem_max) team_bytes = smem_max;
    }
    team  = team < 32 ? 32 : (team + 31) / 32 * 32;
    teams = team == 32 ? OCEAN_MAX_TEAMS : 1;
    while (teams > 1 && (int64_t)teams * team_bytes > smem_max) teams--;
    {
      const dim3   grid = b == OCEAN_BIN_LONG ? (unsigned)long_grid : OceanGrid(nb, teams), block = teams * team;
      const size_t bytes = (size_t)teams * (size_t)team_bytes;
      if (a.cells.row_cell) OceanLaunchRows<true>(team, b, grid, block, bytes, stream, a, team_bytes);
      else OceanLaunchRows<false>(team, b, grid, block, bytes, stream, a, team_bytes);
    }
    if ((launch = cudaGetLastError()) != cudaSuccess) {
      err =
        OceanSetError(OCEAN_ERR_DEVICE, "accumulators: bin %s (%lld rows, %d teams of %d threads, %d bytes each): %s",
                      OceanBinName((OceanBin)b), (long long)nb, teams, team, team_bytes, cudaGetErrorString(launch));
      goto done;
    }
  }
  err = OCEAN_SUCCESS;
done:
  if (nside) { /* the default stream's later work waits for the shared-memory bins */
    const OceanError jerr = OceanCudaJoinStreams(dev, nside);
    if (!err) err = jerr;
  }
  OceanCudaFree(dev, gcap);
  OceanCudaFree(dev, goff);
  OceanCudaFree(dev, gkeys);
  OceanCudaFree(dev, gvals);
  OceanCudaFree(dev, glong);
  return err;
}

extern "C" OceanError OceanCudaRunRows(OceanCudaDevice dev, const OceanCudaRouteParams *rp, OceanDevCSR A,
                                       OceanDevCSR B, const OceanRowShape *d_shapes, const OceanRoute *d_routes,
                                       const int64_t *d_list, int64_t n, int bitmap_query, const int64_t *d_offsets,
                                       int32_t *d_cols, double *d_vals, int64_t *d_counts, uint8_t *d_flags,
                                       int *unsorted)
{
  int64_t   *grouped     = NULL, bins[OCEAN_NUM_BINS];
  int        global_hash = 0;
  OceanError err;

  if (n == 0) return OCEAN_SUCCESS;
  err = OceanCudaGroupRows(dev, d_routes, d_list, n, &grouped, bins);
  if (!err)
    err = OceanCudaRunGroupedRows(dev, rp, A, B, d_shapes, d_routes, grouped, bins, bitmap_query, d_offsets, d_cols,
                                  d_vals, d_counts, d_flags, &global_hash);
  if (!err && unsorted && global_hash) *unsorted = 1;
  OceanCudaFree(dev, grouped);
  return err;
}

extern "C" void OceanCudaRowGroupsFree(OceanCudaDevice dev, OceanCudaRowGroups *g)
{
  OceanCudaFree(dev, g->grouped);
  g->grouped = NULL;
}

extern "C" OceanError OceanCudaPlanRowsQueued(OceanCudaDevice dev, const OceanCudaRouteParams *rp, OceanPass pass,
                                              const int64_t *d_p, const OceanRowShape *d_shapes, int64_t n, int routed,
                                              OceanRoute *d_routes, int64_t *d_offsets, unsigned long long *d_counts,
                                              OceanCudaRowGroups *g)
{
  uint8_t   *keys = NULL;
  OceanError err;

  memset(g, 0, sizeof(*g));
  if (n == 0) {
    if ((err = OceanCudaCheck(cudaMemsetAsync(d_offsets, 0, sizeof(int64_t), 0), "planning rows: memset"))) return err;
    return OceanCudaCheck(cudaMemsetAsync(d_counts, 0, (OCEAN_NUM_BINS + 1) * sizeof(unsigned long long), 0),
                          "planning rows: memset");
  }
  if (!routed && (err = OceanCudaRouteRows(rp, pass, NULL, n, d_p, d_shapes, d_routes))) return err;
  if (n <= OCEAN_SMALL_ROWS) { /* the scan and the grouping in one block */
    if ((err = OceanCudaAlloc(dev, (size_t)n * sizeof(int64_t), (void **)&g->grouped))) return err;
    OceanKernelScanGroupSmall<<<1, OCEAN_SMALL_THREADS>>>(d_routes, n, d_offsets, g->grouped, d_counts);
    return OceanCudaCheck(cudaGetLastError(), "scan and grouping of the rows (one block): launch");
  }
  /* grid-wide scan and grouping; the slots' total copied beside the bins' counts */
  if ((err = OceanCudaScanSlots(dev, d_routes, n, d_offsets, NULL))) return err;
  if ((err = OceanCudaCheck(
         cudaMemcpyAsync(d_counts + OCEAN_NUM_BINS, d_offsets + n, sizeof(int64_t), cudaMemcpyDeviceToDevice, 0),
         "planning rows: the slots' total")))
    return err;
  if ((err = OceanCudaAlloc(dev, (size_t)n, (void **)&keys))) return err;
  OceanKernelBinKeys<<<OceanGrid(n, OCEAN_THREADS), OCEAN_THREADS>>>(NULL, n, d_routes, keys);
  err = OceanCudaCheck(cudaGetLastError(), "grouping rows by bin: launch");
  if (!err) err = OceanCudaGroupByKeyQueued(dev, keys, NULL, n, OCEAN_NUM_BINS, &g->grouped, d_counts);
  OceanCudaFree(dev, keys);
  return err;
}

extern "C" void OceanCudaRowGroupsTake(OceanCudaRowGroups *g, const unsigned long long *h_counts, int64_t *total)
{
  for (int b = 0; b < OCEAN_NUM_BINS; b++) g->bins[b] = (int64_t)h_counts[b];
  if (total) *total = (int64_t)h_counts[OCEAN_NUM_BINS];
}

extern "C" OceanError OceanCudaPlanRows(OceanCudaDevice dev, const OceanCudaRouteParams *rp, OceanPass pass,
                                        const int64_t *d_p, const OceanRowShape *d_shapes, int64_t n, int routed,
                                        OceanRoute *d_routes, int64_t *d_offsets, int64_t *total, OceanCudaRowGroups *g)
{
  unsigned long long *d_counts = NULL, h_counts[OCEAN_NUM_BINS + 1]; /* the bins' rows and the slots' total */
  OceanError          err;

  memset(g, 0, sizeof(*g));
  if ((err = OceanCudaAlloc(dev, sizeof(h_counts), (void **)&d_counts))) return err;
  err = OceanCudaPlanRowsQueued(dev, rp, pass, d_p, d_shapes, n, routed, d_routes, d_offsets, d_counts, g);
  if (!err) err = OceanCudaReadback(dev, h_counts, d_counts, sizeof(h_counts));
  OceanCudaFree(dev, d_counts);
  if (err) {
    OceanCudaRowGroupsFree(dev, g);
    return err;
  }
  OceanCudaRowGroupsTake(g, h_counts, total);
  return OCEAN_SUCCESS;
}

extern "C" OceanError OceanCudaRunRowGroups(OceanCudaDevice dev, const OceanCudaRouteParams *rp, OceanDevCSR A,
                                            OceanDevCSR B, const OceanRowShape *d_shapes, const OceanRoute *d_routes,
                                            const OceanCudaRowGroups *g, int bitmap_query, const int64_t *d_offsets,
                                            int32_t *d_cols, double *d_vals, int64_t *d_counts, uint8_t *d_flags,
                                            int *unsorted)
{
  int        global_hash = 0;
  OceanError err         = OceanCudaRunGroupedRows(dev, rp, A, B, d_shapes, d_routes, g->grouped, g->bins, bitmap_query,
                                                   d_offsets, d_cols, d_vals, d_counts, d_flags, &global_hash);
  if (!err && unsorted && global_hash) *unsorted = 1;
  return err;
}
