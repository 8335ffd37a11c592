/*
  ocean_rows.cuh - device helpers that walk a row's products, shared by the accumulators (ocean_accumulators.cu),
  the numeric into a known structure (ocean_known.cu) and the product map (ocean_productmap.cu).  Device code only;
  included by .cu files.
*/
#ifndef OCEAN_ROWS_CUH
#define OCEAN_ROWS_CUH

#include "ocean_cuda.h"
#include "ocean_launch.cuh"

/* Lanes per entry of A when a row's products are spread over n threads: the power of two (1..32) nearest above the
   row's mean length of B's rows, so that short rows of B (Laplacians: 5-7) keep most lanes busy. */
__device__ __forceinline__ int OceanLanesPerEntry(int64_t products, int64_t a_len)
{
  const int64_t mean = a_len ? (products + a_len - 1) / a_len : 1;
  int           g    = 1;
  while (g < 32 && g < mean) g <<= 1;
  return g;
}

/* Entry t of A: where its row of B starts, how long it is and (numeric) A's value; an empty row when t >= t_end. */
struct OceanEntryRow {
  int64_t start;
  int     len;
  double  a;
};
__device__ __forceinline__ OceanEntryRow OceanEntryRowAt(const OceanDevCSR &A, const OceanDevCSR &B, int64_t t,
                                                         int64_t t_end, bool numeric)
{
  OceanEntryRow r = {0, 0, 0.0};
  if (t < t_end) {
    const int32_t k = A.colidx[t];
    r.start         = B.rowptr[k];
    r.len           = (int)(B.rowptr[k + 1] - r.start);
    r.a             = numeric ? A.values[t] : 0.0;
  }
  return r;
}

/* The rows of B a block-wide team leaves to all its threads (OceanGroupForProductsAt with a list): a row longer than
   half a warp's share of the row's products and than OCEAN_TEAM_LONG_MIN entries, as many as the list holds.  On R-MAT
   (power-law rows of B beside short ones) one warp walking a row of thousands held its 1024-thread team at the
   barrier after the products: 63% of the stall samples of the largest shared-memory bin's numeric kernel (H100,
   rmat_s18_d8).  Walked flat, each product pays a search of the list, so rows within a warp's share stay with their
   warps. */
#define OCEAN_TEAM_LONG_MIN 128
#define OCEAN_TEAM_LONG_CAP 64
struct OceanTeamLongRows {
  int64_t start[OCEAN_TEAM_LONG_CAP]; /* the row of B's first entry */
  int64_t t[OCEAN_TEAM_LONG_CAP];     /* the entry of A */
  double  a[OCEAN_TEAM_LONG_CAP];     /* its value (numeric) */
  int64_t off[OCEAN_TEAM_LONG_CAP + 1];
  int     len[OCEAN_TEAM_LONG_CAP];
  int     n; /* rows offered (more than the list holds: the rest walked by their warps); 0 before each walk */
};

/* Calls f(column, A value * B value, t, u) for every product of A's entries [t_begin, t_end), t its entry of A and u
   its entry of B, spread over a team of `size` threads (a multiple of 32; tid is the thread's rank in it).  Lanes
   form groups of g (a power of two dividing 32); the team's warps take chunks of 32/g consecutive entries of A in
   turn, a group per entry, its lanes walking that entry's row of B.  A row of B longer than 4g (R-MAT's heavy rows
   beside light ones) is walked by the whole warp instead, so one long row does not leave a small group working
   alone.  With a list (a team that is the whole block, every thread calling; lr->n zero on entry; products: the
   row's), the rows of B longer than half a warp's share of the products are listed instead and walked flat by the
   whole block after the rest (two __syncthreads).  f must not synchronize. */
template <typename F>
__device__ __forceinline__ void OceanGroupForProductsAt(const OceanDevCSR &A, const OceanDevCSR &B, int64_t t_begin,
                                                        int64_t t_end, int tid, int size, int g, bool numeric, F f,
                                                        OceanTeamLongRows *lr = NULL, int64_t products = 0)
{
  const int     lane = tid & 31, warp = tid >> 5, nwarps = size >> 5, per_warp = 32 / g, gw = lane / g;
  const int     sub      = lane & (g - 1);
  const int64_t long_row = 4 * (int64_t)g;
  const int64_t list_min =
    products / (2 * nwarps) > OCEAN_TEAM_LONG_MIN ? products / (2 * nwarps) : OCEAN_TEAM_LONG_MIN;

  for (int64_t c = t_begin + (int64_t)warp * per_warp; c < t_end; c += (int64_t)nwarps * per_warp) {
    const int64_t t  = c + gw;
    OceanEntryRow er = OceanEntryRowAt(A, B, t, t_end, numeric);
    if (lr) {
      bool listed = false;
      if (sub == 0 && er.len > list_min) {
        const int k = atomicAdd(&lr->n, 1);
        if (k < OCEAN_TEAM_LONG_CAP) {
          lr->start[k] = er.start;
          lr->t[k]     = t;
          lr->a[k]     = er.a;
          lr->len[k]   = er.len;
          listed       = true;
        }
      }
      if ((__ballot_sync(0xffffffffu, listed) >> (lane - sub)) & 1u) er.len = 0; /* the group's leader listed it */
    }
    const int64_t bs      = er.start;
    const double  av      = er.a;
    const bool    is_long = g < 32 && er.len > long_row;
    unsigned      longs   = __ballot_sync(0xffffffffu, is_long && sub == 0);
    /* within a row of B, 32-bit offsets from its start (the loops' index arithmetic is a good part of their
       instructions) */
    if (!is_long) {
      const int32_t *bc  = B.colidx + bs;
      const double  *bv  = numeric ? B.values + bs : NULL;
      const int      len = er.len;
      for (int j = sub; j < len; j += g) f(bc[j], numeric ? av * bv[j] : 0.0, t, bs + j);
    }
    while (longs) { /* the same on every lane */
      const int src = __ffs(longs) - 1;
      longs &= longs - 1;
      const int64_t  lb  = __shfl_sync(0xffffffffu, bs, src);
      const int      len = __shfl_sync(0xffffffffu, er.len, src);
      const double   la  = __shfl_sync(0xffffffffu, av, src);
      const int64_t  lt  = c + src / g;
      const int32_t *bc  = B.colidx + lb;
      const double  *bv  = numeric ? B.values + lb : NULL;
      for (int j = lane; j < len; j += 32) f(bc[j], numeric ? la * bv[j] : 0.0, lt, lb + j);
    }
  }
  if (!lr) return;
  __syncthreads();
  const int n = lr->n < OCEAN_TEAM_LONG_CAP ? lr->n : OCEAN_TEAM_LONG_CAP;
  if (n == 0) return; /* the same on every thread */
  if (tid < 32) {     /* the listed rows' offsets: two a lane, a warp scan */
    const int64_t x0 = 2 * tid < n ? lr->len[2 * tid] : 0, x1 = 2 * tid + 1 < n ? lr->len[2 * tid + 1] : 0;
    const int64_t incl = OceanWarpInclusiveSum(x0 + x1, tid);
    if (2 * tid < n) lr->off[2 * tid] = incl - x0 - x1;
    if (2 * tid + 1 < n) lr->off[2 * tid + 1] = incl - x1;
    if (tid == 31) lr->off[n] = incl;
  }
  __syncthreads();
  const int64_t total = lr->off[n];
  for (int64_t q = tid; q < total; q += size) { /* consecutive threads, consecutive entries of B */
    int lo = 0, hi = n - 1;
    while (lo < hi) {
      const int mid = (lo + hi + 1) >> 1;
      if (lr->off[mid] <= q) lo = mid;
      else hi = mid - 1;
    }
    const int64_t u = lr->start[lo] + (q - lr->off[lo]);
    f(B.colidx[u], numeric ? lr->a[lo] * B.values[u] : 0.0, lr->t[lo], u);
  }
}

/* The walk of OceanGroupForProductsAt for one warp (g lanes an entry, long rows of B by the whole warp), numeric, with
   each product's place found by find(column) (-1: none) and its value added by the lanes of one group after another,
   so no two lanes add at once and every sum is taken in a fixed order (the entries of a chunk in turn, then the long
   rows).  A shared hash table then needs no fp64 shared atomic, a compare-and-swap loop on sm_90 (H200: the 27-point
   Laplacian's product 1.15x faster, the real set as before). */
template <typename Find>
__device__ __forceinline__ void OceanWarpPhasedProducts(const OceanDevCSR &A, const OceanDevCSR &B, int64_t t_begin,
                                                        int64_t t_end, int g, double *sums, Find find)
{
  const int lane = threadIdx.x & 31, per_warp = 32 / g, gw = lane / g, sub = lane & (g - 1);

  for (int64_t c = t_begin; c < t_end; c += per_warp) {
    const OceanEntryRow er      = OceanEntryRowAt(A, B, c + gw, t_end, true);
    const int64_t       bs      = er.start;
    const int           len     = er.len;
    const double        av      = er.a;
    const bool          is_long = g < 32 && len > 4 * g;
    unsigned            longs   = __ballot_sync(0xffffffffu, is_long && sub == 0);
    const int           mine    = is_long ? 0 : len;
    const int           most    = (int)__reduce_max_sync(0xffffffffu, (unsigned)mine);
    const int32_t      *bc      = B.colidx + bs;
    const double       *bv      = B.values + bs;
    for (int j0 = 0; j0 < most; j0 += g) {
      const int j   = j0 + sub;
      int64_t   pos = -1;
      double    v   = 0.0;
      if (j < mine) {
        v   = av * bv[j];
        pos = find(bc[j]);
      }
      __syncwarp();
      for (int turn = 0; turn < per_warp; turn++) {
        if (gw == turn && pos >= 0) sums[pos] += v;
        __syncwarp();
      }
    }
    while (longs) { /* the same on every lane: a row of B has distinct columns, so its lanes add at once */
      const int src = __ffs(longs) - 1;
      longs &= longs - 1;
      const int64_t  lb = __shfl_sync(0xffffffffu, bs, src);
      const int      ll = __shfl_sync(0xffffffffu, len, src);
      const double   la = __shfl_sync(0xffffffffu, av, src);
      const int32_t *lc = B.colidx + lb;
      const double  *lv = B.values + lb;
      for (int j = lane; j < ll; j += 32) {
        const int64_t pos = find(lc[j]);
        if (pos >= 0) sums[pos] += la * lv[j];
      }
      __syncwarp();
    }
  }
}

/* OceanGroupForProducts: the same with f(column, value). */
template <typename F>
__device__ __forceinline__ void OceanGroupForProducts(const OceanDevCSR &A, const OceanDevCSR &B, int64_t t_begin,
                                                      int64_t t_end, int tid, int size, int g, bool numeric, F f,
                                                      OceanTeamLongRows *lr = NULL, int64_t products = 0)
{
  OceanGroupForProductsAt(
    A, B, t_begin, t_end, tid, size, g, numeric, [&](int32_t c, double v, int64_t, int64_t) { f(c, v); }, lr, products);
}

/* Calls f(p, column, A value * B value, t, u) for every product of A's entries [t_begin, t_end), p its index in
   product order (A's entries in order, each one's row of B in order), t and u its entries of A and B, spread flat
   over a team of W lanes (W = 8, 16 or 32;
   sub the lane's rank, mask the team's lanes of the warp): W entries of A at a time, their products' offsets by a
   prefix sum, then each lane takes every W-th product and finds its entry by binary search in the offsets, so the
   loads of a row's products are issued together instead of one row of B after another.  Scratch: ex[W] (int),
   eb[W], ea[W] in shared memory, the team's own.  For rows with few products (the offsets are int). */
template <int W, typename F>
__device__ __forceinline__ void OceanFlatProductsAt(const OceanDevCSR &A, const OceanDevCSR &B, int64_t t_begin,
                                                    int64_t t_end, int sub, unsigned mask, int *ex, int64_t *eb,
                                                    double *ea, bool numeric, F f)
{
  int base = 0;
  for (int64_t c = t_begin; c < t_end; c += W) {
    const OceanEntryRow er = OceanEntryRowAt(A, B, c + sub, t_end, numeric);
    ex[sub]                = er.len;
    eb[sub]                = er.start;
    ea[sub]                = er.a;
    __syncwarp(mask);
    int before = 0, total = 0;
    for (int j = 0; j < W; j++) {
      const int v = ex[j];
      before += j < sub ? v : 0;
      total += v;
    }
    __syncwarp(mask);
    ex[sub] = before;
    __syncwarp(mask);
    for (int p = sub; p < total; p += W) {
      int j = 0; /* the last entry starting at or before p: it has products, so p is one of them */
      for (int step = W / 2; step > 0; step >>= 1)
        if (ex[j + step] <= p) j += step;
      const int64_t u = eb[j] + (p - ex[j]);
      f(base + p, B.colidx[u], numeric ? ea[j] * B.values[u] : 0.0, c + j, u);
    }
    base += total;
    __syncwarp(mask);
  }
}

/* OceanFlatProducts: the same with f(p, column, value). */
template <int W, typename F>
__device__ __forceinline__ void OceanFlatProducts(const OceanDevCSR &A, const OceanDevCSR &B, int64_t t_begin,
                                                  int64_t t_end, int sub, unsigned mask, int *ex, int64_t *eb,
                                                  double *ea, bool numeric, F f)
{
  OceanFlatProductsAt<W>(A, B, t_begin, t_end, sub, mask, ex, eb, ea, numeric,
                         [&](int p, int32_t c, double v, int64_t, int64_t) { f(p, c, v); });
}

/* Position of column c in the strictly increasing cols[0, n), or -1 (a row of C has fewer than 2^31 entries).
   Branch-free: the range [lo, lo + len) keeps the last entry <= c. */
__device__ __forceinline__ int64_t OceanFindColumn(const int32_t *cols, int64_t n64, int32_t c)
{
  int lo = 0, len = (int)n64;
  if (len <= 0) return -1;
  while (len > 1) {
    const int half = len >> 1;
    lo             = cols[lo + half] <= c ? lo + half : lo;
    len -= half;
  }
  return cols[lo] == c ? lo : -1;
}

#endif
