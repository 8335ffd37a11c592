/*
  ocean_narrow.cu - the NARROW workflow: B has at most OCEAN_NARROW_MAX_COLUMNS columns (the interpolation of a
  coarse AMG level), so every row of C fits a dense row in shared memory.  A team of warps takes a row of A; each
  warp sums its share of the row's entries into its own dense row (a value and a seen flag per column of B): the
  columns of one row of B are distinct, so the lanes of a warp never collide and need no atomics.  The team then
  adds its warps' rows and its first warp writes the row in column order (ballots give the positions).  No
  analysis pass, no routing, no sort, and one launch per phase: the coarse levels are latency-bound.
    symbolic  the row into a dense-row workspace (row i at i x ncols(B)), its count, its shape (products, span, upper
              bound, first column: what the analysis would have found) and the totals; OceanCudaCompact makes C
    known     numeric reuse: the values straight into C's known row (its columns checked)
  Summation order: each warp in the order of its entries, then the warps in order (the tests allow 1e-12 |A||B|).
  A team's warps take its row's entries in turns of up to 32 each, so that a row of 100 entries in a team of 32 has
  each warp walk 4 entries, not 4 warps walk 32.
*/
#include <cuda_runtime.h>
#include "ocean_cuda.h"
#include "ocean_launch.cuh"

#define OCEAN_NARROW_FULL 0xffffffffu
/* Warps per block at least (one-warp teams share a block) and at most (one team of 32 warps). */
#define OCEAN_NARROW_MIN_WARPS 8
#define OCEAN_NARROW_MAX_TEAM  32
/* Entries of A's row per warp of its team, about: the team grows (powers of two) until each warp has this many. */
#define OCEAN_NARROW_ENTRIES_PER_WARP 64
/* ... and, while A's rows alone give fewer than OCEAN_NARROW_WARPS_PER_SM warps per multiprocessor, down to this. */
#define OCEAN_NARROW_ENTRIES_MIN  4
#define OCEAN_NARROW_WARPS_PER_SM 32
/* Shared memory a block may take without opting in. */
#define OCEAN_NARROW_SMEM (48 * 1024)

struct OceanNarrowArgs {
  OceanDevCSR A, B;
  int         team; /* warps per row */
  /* symbolic */
  OceanRowShape      *shapes;
  int64_t            *counts, *offsets;
  uint8_t            *flags;
  int32_t            *ws_cols;
  double             *ws_vals;
  unsigned long long *totals; /* products, sum of upper bounds, rows with products */
  /* known */
  const int64_t *c_rowptr;
  const int32_t *c_cols;
  double        *c_vals;
  int           *mismatch;
};

/* Shared memory of a block of `warps` warps summing over NC columns: values, seen flags, each warp's products. */
static size_t OceanNarrowSmem(int warps, int nc)
{
  return (size_t)warps * nc * (sizeof(double) + 1) + (size_t)warps * sizeof(long long);
}

template <int NC, bool KNOWN>
__global__ void OceanKernelNarrow(OceanNarrowArgs a)
{
  extern __shared__ double narrow_smem[];
  const int                warps = blockDim.x >> 5, w = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int                team = a.team, teams = warps / team, t = w / team, wt = w % team, w0 = t * team;
  double                  *vals = narrow_smem;                                   /* [warps][NC] */
  uint8_t                 *seen = (uint8_t *)(narrow_smem + (size_t)warps * NC); /* [warps][NC] */
  long long *wprod = (long long *)(seen + (size_t)warps * NC); /* [warps]; NC is a multiple of 32: aligned */
  double    *mine  = vals + (size_t)w * NC;
  uint8_t   *mseen = seen + (size_t)w * NC;
  const int  ncols = (int)a.B.ncols;

  for (int64_t base = (int64_t)blockIdx.x * teams; base < a.A.nrows; base += (int64_t)gridDim.x * teams) {
    const int64_t i = base + t;
    long long     q = 0;

    for (int c = lane; c < NC; c += 32) {
      mine[c]  = 0.0;
      mseen[c] = 0;
    }
    __syncwarp();
    if (i < a.A.nrows) {
      const int64_t a0 = a.A.rowptr[i], a1 = a.A.rowptr[i + 1];
      /* the team's warps take the row's entries in turns of `span` each (up to 32, one per lane), so that every warp
         of the team has a share: a warp walks its turn's entries one after another */
      const int64_t share = (a1 - a0 + team - 1) / team;
      const int     span  = (int)(share < 1 ? 1 : share < 32 ? share : 32);
      for (int64_t chunk = a0 + (int64_t)wt * span; chunk < a1; chunk += (int64_t)team * span) {
        /* each lane loads one of the warp's next entries and the bounds of its row of B; then the warp walks them */
        const int64_t e  = chunk + lane;
        int64_t       bs = 0, be = 0;
        double        x   = 0.0;
        const int     cnt = (int)(a1 - chunk < span ? a1 - chunk : span);
        if (lane < cnt) {
          const int32_t k = a.A.colidx[e];
          x               = a.A.values[e];
          bs              = a.B.rowptr[k];
          be              = a.B.rowptr[k + 1];
        }
        q += be - bs;
        for (int j = 0; j < cnt; j++) {
          const int64_t s = __shfl_sync(OCEAN_NARROW_FULL, bs, j), f = __shfl_sync(OCEAN_NARROW_FULL, be, j);
          const double  y = __shfl_sync(OCEAN_NARROW_FULL, x, j);
          for (int64_t p = s + lane; p < f; p += 32) {
            const int32_t c = a.B.colidx[p];
            mine[c] += y * a.B.values[p];
            mseen[c] = 1;
          }
          __syncwarp(); /* the next row of B may hit the columns other lanes just wrote */
        }
      }
    }
    for (int o = 16; o > 0; o >>= 1) q += __shfl_down_sync(OCEAN_NARROW_FULL, q, o);
    if (lane == 0) wprod[w] = q;
    __syncthreads();
    if (team > 1) { /* the team's rows into its first warp's, a column per thread */
      for (int c = threadIdx.x - 32 * w0; c < NC; c += 32 * team) {
        double  sum = 0.0;
        uint8_t any = 0;
        for (int u = 0; u < team; u++) {
          sum += vals[(size_t)(w0 + u) * NC + c];
          any |= seen[(size_t)(w0 + u) * NC + c];
        }
        vals[(size_t)w0 * NC + c] = sum;
        seen[(size_t)w0 * NC + c] = any;
      }
      __syncthreads();
    }
    if (wt == 0 && i < a.A.nrows) {
      const double  *row   = vals + (size_t)w0 * NC;
      const uint8_t *rset  = seen + (size_t)w0 * NC;
      const int64_t  out   = KNOWN ? a.c_rowptr[i] : i * (int64_t)ncols;
      const int64_t  len   = KNOWN ? a.c_rowptr[i + 1] - out : 0;
      long long      qt    = 0;
      int64_t        pos   = 0;
      int            first = -1, last = -1;
      bool           bad = false;
      for (int u = 0; u < team; u++) qt += wprod[w0 + u];
      for (int r = 0; r < NC / 32; r++) {
        const int      c = r * 32 + lane;
        const bool     f = c < ncols && rset[c];
        const unsigned m = __ballot_sync(OCEAN_NARROW_FULL, f);
        if (f) {
          const int64_t at = pos + __popc(m & ((1u << lane) - 1u));
          if (KNOWN) {
            if (at < len && a.c_cols[out + at] == c) a.c_vals[out + at] = row[c];
            else bad = true;
          } else {
            a.ws_cols[out + at] = c;
            a.ws_vals[out + at] = row[c];
          }
        }
        if (m && first < 0) first = r * 32 + __ffs((int)m) - 1;
        if (m) last = r * 32 + 31 - __clz((int)m);
        pos += __popc(m);
      }
      if (KNOWN) {
        bad = __any_sync(OCEAN_NARROW_FULL, bad || pos != len);
        if (bad && lane == 0) *a.mismatch = 1;
      } else if (lane == 0) {
        OceanRowShape sh;
        sh.products  = qt;
        sh.span      = qt ? (int64_t)(last - first + 1) : 0;
        sh.colmin    = qt ? first : 0;
        sh.ub        = OceanMin64(OceanMin64(qt, sh.span), ncols);
        a.shapes[i]  = sh;
        a.counts[i]  = pos;
        a.offsets[i] = out;
        a.flags[i]   = 0;
        atomicAdd(&a.totals[0], (unsigned long long)qt);
        atomicAdd(&a.totals[1], (unsigned long long)sh.ub);
        if (qt) atomicAdd(&a.totals[2], 1ull);
      }
    }
    __syncthreads(); /* the next rows reuse the shared rows */
  }
}

/* The team and block for A's rows: warps per row grow with the row's average entries, within the shared memory a
   block may take without opting in.  When A has too few rows to give every multiprocessor its warps (coarse levels,
   small dense blocks), the team grows further down to OCEAN_NARROW_ENTRIES_MIN entries per warp: a warp walks its
   entries one after another, so few warps with long lists leave the device idle (a dense 100 x 100 A: 25 blocks). */
static void OceanNarrowShape(OceanDevCSR A, int64_t nnz_a, int nc, int sms, int *team, int *warps)
{
  const int64_t avg  = A.nrows ? nnz_a / A.nrows : 0;
  const int64_t want = (int64_t)sms * OCEAN_NARROW_WARPS_PER_SM; /* warps in flight that keep the device busy */
  int           tm   = 1;
  while (tm < OCEAN_NARROW_MAX_TEAM && OceanNarrowSmem(2 * tm, nc) <= OCEAN_NARROW_SMEM &&
         ((int64_t)tm * OCEAN_NARROW_ENTRIES_PER_WARP < avg ||
          (A.nrows * tm < want && (int64_t)tm * OCEAN_NARROW_ENTRIES_MIN < avg)))
    tm *= 2;
  *team  = tm;
  *warps = tm > OCEAN_NARROW_MIN_WARPS ? tm : OCEAN_NARROW_MIN_WARPS;
}

template <bool KNOWN>
static OceanError OceanNarrowLaunch(OceanNarrowArgs a, int64_t nnz_a, int sms)
{
  const int nc = a.B.ncols <= 32 ? 32 : a.B.ncols <= 64 ? 64 : a.B.ncols <= 128 ? 128 : 256;
  int       team, warps;
  size_t    smem;
  unsigned  grid;

  if (a.B.ncols > OCEAN_NARROW_MAX_COLUMNS)
    return OceanSetError(OCEAN_ERR_ARG, "narrow workflow: B has %lld columns, more than %d", (long long)a.B.ncols,
                         OCEAN_NARROW_MAX_COLUMNS);
  if (a.A.nrows == 0) return OCEAN_SUCCESS;
  OceanNarrowShape(a.A, nnz_a, nc, sms, &team, &warps);
  a.team = team;
  smem   = OceanNarrowSmem(warps, nc);
  grid   = OceanGrid(a.A.nrows, warps / team);
  switch (nc) {
  case 32: OceanKernelNarrow<32, KNOWN><<<grid, 32 * warps, smem>>>(a); break;
  case 64: OceanKernelNarrow<64, KNOWN><<<grid, 32 * warps, smem>>>(a); break;
  case 128: OceanKernelNarrow<128, KNOWN><<<grid, 32 * warps, smem>>>(a); break;
  default: OceanKernelNarrow<256, KNOWN><<<grid, 32 * warps, smem>>>(a); break;
  }
  OCEAN_CUDA_LAUNCHED(KNOWN ? "narrow numeric into C's structure" : "narrow rows");
  return OCEAN_SUCCESS;
}

extern "C" OceanError OceanCudaNarrowSymbolic(int sms, OceanDevCSR A, int64_t nnz_a, OceanDevCSR B,
                                              OceanRowShape *d_shapes, int64_t *d_counts, int64_t *d_offsets,
                                              uint8_t *d_flags, int32_t *d_ws_cols, double *d_ws_vals,
                                              int64_t *d_totals)
{
  OceanNarrowArgs a;

  memset(&a, 0, sizeof(a));
  OCEAN_CUDA_TRY(cudaMemsetAsync(d_totals, 0, 3 * sizeof(int64_t), 0));
  a.A       = A;
  a.B       = B;
  a.shapes  = d_shapes;
  a.counts  = d_counts;
  a.offsets = d_offsets;
  a.flags   = d_flags;
  a.ws_cols = d_ws_cols;
  a.ws_vals = d_ws_vals;
  a.totals  = (unsigned long long *)d_totals;
  return OceanNarrowLaunch<false>(a, nnz_a, sms);
}

extern "C" OceanError OceanCudaNarrowKnown(OceanCudaDevice dev, int sms, OceanDevCSR A, int64_t nnz_a, OceanDevCSR B,
                                           const int64_t *d_rowptr, const int32_t *d_colidx, double *d_values,
                                           int *d_check)
{
  OceanNarrowArgs a;

  (void)dev;
  if (A.nrows == 0) return OCEAN_SUCCESS;
  memset(&a, 0, sizeof(a));
  a.A        = A;
  a.B        = B;
  a.c_rowptr = d_rowptr;
  a.c_cols   = d_colidx;
  a.c_vals   = d_values;
  a.mismatch = d_check;
  return OceanNarrowLaunch<true>(a, nnz_a, sms);
}
