/*
  rules.h - the decision rules and formats both backends must share, usable from C and from CUDA.

  Every function here is OCEAN_HD: __host__ __device__ under nvcc, plain static inline in C.  The CPU backend
  (src/cpu) and the CUDA kernels (the .cu files in cuda/) call these very functions, so that the two backends route
  every row, size every hash table and read every sketch identically:
    OceanRouteRowBins      - which bin, accumulator, slot and capacity a row gets (THE routing decision)
    OceanHashLimit/...For  - hash table limits
    OceanPredictFromEstimate, OceanPredictExact - the predicted sizes of the estimate and exact workflows
    OceanSampleIndex, OceanEstimateRelError - which rows the CR sample takes, one row's estimate error
    OceanHashColumn, OceanRegister{Unpack,Pack}, OceanSketchInsert, OceanSketchEstimateRegisters - the sketch
                             format (UltraLogLog-layout one-byte registers) and its maximum-likelihood estimate
  No allocation, no OpenMP, no CUDA runtime calls and no PETSc here.
*/
#ifndef OCEAN_CORE_RULES_H
#define OCEAN_CORE_RULES_H

#include "ocean.h"
#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define OCEAN_HD static inline __host__ __device__
#else
#define OCEAN_HD static inline
#endif

OCEAN_HD int64_t OceanMin64(int64_t a, int64_t b)
{
  return a < b ? a : b;
}
OCEAN_HD int64_t OceanMax64(int64_t a, int64_t b)
{
  return a > b ? a : b;
}

/* Number of bits needed to write v (0 for v == 0). */
OCEAN_HD int OceanBitsFor(uint64_t v)
{
  int b = 0;
  while (v) {
    b++;
    v >>= 1;
  }
  return b;
}

/* The largest power of two <= v (1 for v < 1). */
OCEAN_HD int64_t OceanFloorPow2(int64_t v)
{
  int64_t p = 1;
  while (p <= v / 2) p *= 2;
  return p;
}

OCEAN_HD int OceanClz64(uint64_t x)
{
#if defined(__CUDA_ARCH__)
  return __clzll((long long)x);
#elif defined(__GNUC__) || defined(__clang__)
  return __builtin_clzll(x);
#else
  int n = 0;
  while (!(x & 0x8000000000000000ULL)) {
    x <<= 1;
    n++;
  }
  return n;
#endif
}

/* ------------------------------------------------------------------------------------------------ rows */

/* What routing needs to know of one row of C. */
typedef struct {
  int64_t products; /* q: intermediate products */
  int64_t span;     /* s: last reachable column - first reachable column + 1 (0 when q == 0) */
  int64_t ub;       /* min(q, s, ncols): nnz can never exceed it */
  int32_t colmin;   /* first reachable column: dense accumulator offset and sort key base */
  int32_t longest;  /* the longest row of B the row reaches: nnz is at least this */
} OceanRowShape;

/* Which capacities a route uses: the numeric accumulators (column + value) or the symbolic ones (column only). */
typedef enum { OCEAN_PASS_NUMERIC = 0, OCEAN_PASS_SYMBOLIC = 1 } OceanPass;

typedef struct {
  int64_t slot;     /* the most output nonzeros the row may have here; more is an overflow */
  int64_t capacity; /* hash slots (HASH, GLOBAL_HASH), columns (DENSE, GLOBAL_DENSE) or products (ESC) */
  uint8_t bin;      /* OceanBin */
  uint8_t acc;      /* OceanAccumulator */
} OceanRoute;

/* The most entries a hash table of cap slots admits: floor(load*cap), and always one empty slot so probing ends. */
OCEAN_HD int64_t OceanHashLimit(int64_t cap, double load)
{
  int64_t limit = (int64_t)floor(load * (double)cap);
  return OceanMin64(limit, cap - 1);
}

/* The smallest capacity whose limit admits p entries. */
OCEAN_HD int64_t OceanHashCapacityFor(int64_t p, double load)
{
  int64_t cap = (int64_t)ceil((double)p / load);
  if (cap < 1) cap = 1;
  while (OceanHashLimit(cap, load) < p) cap++; /* floor(load * cap) may round just below p */
  return cap;
}

/* Knuth's multiplicative hash of a column, reduced to [0, cap) by the high half of a 64-bit product (fast range). */
OCEAN_HD int64_t OceanHashSlot(int32_t col, int64_t cap)
{
  uint32_t h = (uint32_t)col * 2654435761u;
#if defined(__CUDA_ARCH__)
  return (int64_t)__umulhi(h,
                           (uint32_t)cap); /* the same high half: capacities stay below 2^32 (at most ncols / load) */
#else
  return (int64_t)(((uint64_t)h * (uint64_t)cap) >> 32);
#endif
}

/* Capacities of a bin as seen by the numeric (column + value) or the symbolic (column only) accumulators. */
OCEAN_HD int64_t OceanBinHashCapacity(const OceanBinConfig *c, OceanPass ph)
{
  return ph == OCEAN_PASS_NUMERIC ? c->hash_capacity : c->symbolic_hash_capacity;
}
OCEAN_HD int64_t OceanBinHashLimit(const OceanBinConfig *c, OceanPass ph)
{
  return ph == OCEAN_PASS_NUMERIC ? c->hash_limit : c->symbolic_hash_limit;
}
OCEAN_HD int64_t OceanBinDenseColumns(const OceanBinConfig *c, OceanPass ph)
{
  return ph == OCEAN_PASS_NUMERIC ? c->dense_columns : c->symbolic_dense_columns;
}

OCEAN_HD void OceanRouteSet(OceanRoute *r, int bin, int acc, int64_t slot, int64_t capacity)
{
  r->bin      = (uint8_t)bin;
  r->acc      = (uint8_t)acc;
  r->slot     = slot;
  r->capacity = capacity;
}

/* The opt-in shared memory a LONG block's dense bitmap leaves to its kernel's static shared memory (row states, warp
   sums, the list of long rows of B the block walks together: about 2.5 KB); the launch checks that the bitmap fits. */
#define OCEAN_LONG_STATIC_SMEM 3072

/* HEAVY's split kernel: elements staged per block, and its shared-memory bytes per staged element (an A entry's
   window: product offset, B offset, A value, row; the element's column, value and chunk) */
#define OCEAN_HEAVY_SPLIT_ELEMENTS          1024
#define OCEAN_HEAVY_SPLIT_BYTES_PER_ELEMENT 44
#define OCEAN_HEAVY_MAX_LEVELS              32

/* Products a thread of a row's team may have to itself before the row is moved to a bigger team. */
#define OCEAN_TEAM_PRODUCTS_PER_THREAD 256

/* The threads a bin gives one row (a GPU team is at least a warp). */
OCEAN_HD int64_t OceanBinTeamThreads(const OceanBinConfig *c, int64_t warp)
{
  const int64_t t = c->threads / (c->rows_per_block > 0 ? c->rows_per_block : 1);
  return t < warp ? warp : t;
}

/* A SHORT or N0..N3 row with more products than its team should take (OCEAN_TEAM_PRODUCTS_PER_THREAD each: rows of
   Galerkin products of coarse levels have tens of thousands of products for a few dozen columns) moves up to the
   bin whose team is big enough (N4 at most).  Its slot stays; a hash row takes the bigger bin's table. */
OCEAN_HD void OceanRoutePromote(const OceanBinConfig *bins, int64_t warp, OceanPass ph, const OceanRowShape *row,
                                OceanRoute *r)
{
  while (r->bin >= OCEAN_BIN_SHORT && r->bin < OCEAN_BIN_N4 &&
         row->products > OCEAN_TEAM_PRODUCTS_PER_THREAD * OceanBinTeamThreads(&bins[r->bin], warp)) {
    r->bin = (uint8_t)(r->bin == OCEAN_BIN_SHORT ? OCEAN_BIN_N0 : r->bin + 1);
    if (r->acc == OCEAN_ACC_HASH) r->capacity = OceanBinHashCapacity(&bins[r->bin], ph);
  }
}

/* Whether a row is heavy where it reaches HEAVY's test: more products than max_products and, but with takes_all, a
   span of more than min_span columns. */
OCEAN_HD int OceanRowHeavyEnough(const OceanBinConfig *heavy, const OceanRowShape *row)
{
  return row->products > heavy->max_products && (heavy->takes_all || row->span > heavy->min_span);
}

/* Whether the numeric pass takes the row to HEAVY before the shared-memory bins (auto: many products, wide span). */
OCEAN_HD int OceanRowHeavyEarly(const OceanBinConfig *heavy, const OceanRowShape *row)
{
  return row->products > heavy->early_products && row->span > heavy->min_span;
}

/* Whether some pass might route the row to LONG, where HEAVY's test is (without takes_all): wider than N4's dense rows
   and a bound past N4's hash in either pass (a prediction is at most the bound). */
OCEAN_HD int OceanRowMayTakeLong(const OceanBinConfig *bins, const OceanRowShape *row)
{
  const OceanBinConfig *n4 = &bins[OCEAN_BIN_N4];
  return row->products > bins[OCEAN_BIN_ESC2].max_products &&
         row->span > OceanMin64(n4->dense_columns, n4->symbolic_dense_columns) &&
         row->ub > OceanMin64(n4->hash_limit, n4->symbolic_hash_limit);
}

/* Whether some pass might route the row to HEAVY: HEAVY's test where it is reached (takes_all, or a row that might take
   LONG), or the numeric pass's early test.  The CPU's one-pass exact workflow asks it of every row. */
OCEAN_HD int OceanRowMayBeHeavy(const OceanBinConfig *bins, const OceanRowShape *row)
{
  const OceanBinConfig *heavy = &bins[OCEAN_BIN_HEAVY];
  return (OceanRowHeavyEnough(heavy, row) && (heavy->takes_all || OceanRowMayTakeLong(bins, row))) ||
         OceanRowHeavyEarly(heavy, row);
}

/* A heavy row: its capacity is its products (all expanded); its slot as a dense row's (the multisplit counts
   exactly, so only the prediction bounds it). */
OCEAN_HD void OceanRouteHeavy(OceanPass ph, int64_t p, int64_t warp, const OceanRowShape *row, OceanRoute *r)
{
  const int64_t slot = ph == OCEAN_PASS_NUMERIC ? OceanMin64(row->ub, (p + warp - 1) / warp * warp) : row->ub;
  OceanRouteSet(r, OCEAN_BIN_HEAVY, OCEAN_ACC_MULTISPLIT, slot, row->products);
}

/* What the multisplit did to the heavy rows of a pass (the statistics both backends give) */
typedef struct {
  int64_t rows, products, chunks, dense_chunks, split_elements;
  int64_t rows_in_place; /* rows whose chunks were written straight into C (CUDA, exact workflow) */
  int64_t batches;       /* device batches the rows were taken in (CUDA; their products fit the device memory) */
  int     levels;
} OceanHeavyCounts;

/* The multisplit levels of a product with ncols columns (gMAGNUS eq. 7): level l puts column c into chunk
   c >> shift[l] (the chunks of a level-(l-1) chunk are those sharing its c >> shift[l-1]); the last level's chunks are
   bins[HEAVY].dense_columns wide; every level but the last makes chunks_per_level chunks of its parent, the last what
   is left (one level of one chunk when the columns fit a last-level chunk). */
typedef struct {
  int levels;
  int top_bits; /* bits of the largest column: a row is the chunk c >> top_bits (0) */
  int shift[OCEAN_HEAVY_MAX_LEVELS];
} OceanHeavyLevels;

OCEAN_HD void OceanHeavyPlanLevels(const OceanBinConfig *heavy, int64_t ncols, OceanHeavyLevels *L)
{
  const int wbits = OceanBitsFor((uint64_t)heavy->dense_columns) - 1;
  const int cbits = ncols > 1 ? OceanBitsFor((uint64_t)(ncols - 1)) : 0;
  const int lbits = OceanBitsFor((uint64_t)heavy->chunks_per_level) - 1;
  const int need  = cbits > wbits ? cbits - wbits : 0;
  int       l;

  L->top_bits = cbits > wbits ? cbits : wbits;
  L->levels   = need ? (need + lbits - 1) / lbits : 1;
  for (l = 0; l < L->levels; l++) L->shift[l] = cbits - (l + 1) * lbits > wbits ? cbits - (l + 1) * lbits : wbits;
}

/* The chunk of column c at level l among the chunks of its parent (the row at level 0). */
OCEAN_HD int64_t OceanHeavyChunkOf(const OceanHeavyLevels *L, int l, int32_t c)
{
  const int parent = l ? L->shift[l - 1] : L->top_bits;
  return ((int64_t)c >> L->shift[l]) & ((((int64_t)1) << (parent - L->shift[l])) - 1);
}

/* How many chunks level l makes of one parent (of a row at level 0: of its ncols columns). */
OCEAN_HD int64_t OceanHeavyChunksAt(const OceanHeavyLevels *L, int l, int64_t ncols)
{
  if (l == 0) return ncols > 0 ? ((ncols - 1) >> L->shift[0]) + 1 : 1;
  return ((int64_t)1) << (L->shift[l - 1] - L->shift[l]);
}

/* How many chunks of the last level cover ncols columns (at least one). */
OCEAN_HD int64_t OceanHeavyLastChunks(const OceanHeavyLevels *L, int64_t ncols)
{
  return ncols > 0 ? ((ncols - 1) >> L->shift[L->levels - 1]) + 1 : 1;
}

/*
  Where a row goes, given its predicted nonzeros p and its shape (q products, span s, upper bound ub):
    q == 0                          -> EMPTY
    q <= 64                         -> ESC4 (q <= 32) or ESC2; slot ub (sorting all products cannot overflow).  The
                                       paper also asks p < warp; but an ESC row costs its products, whatever its
                                       output (at most q), and an upper bound p of 33..64 (3D 7-point squared: 49
                                       products, 25 nonzeros) would otherwise take a whole block of N0 per row
    p < warp (and fits)             -> SHORT hash; slot min(limit, ub)
    smallest of N0..N4 where s <= dense columns -> DENSE; slot min(ub, p rounded up to a warp) numeric, ub symbolic
                          or where p <= hash limit -> HASH; slot min(limit, ub)
    otherwise, s <= LONG's dense columns -> LONG, dense in global memory (bitmap in shared); slot as DENSE's
    otherwise                       -> LONG, hash in global memory of capacity for p (at least N4's); slot min(limit,
  ub); but a row with more than HEAVY's max_products products (none asked in auto mode without a threshold) that would
  take LONG, spanning more than HEAVY's min_span columns (every such row with takes_all, after ESC; in the numeric
  pass also every row of more than early_products spanning as much), is heavy: HEAVY,
  the multisplit (slot as DENSE's).  Then SHORT and N0..N3 rows with too many products for their team move up
  (OceanRoutePromote). A row overflows when its nonzeros exceed its slot.  With p >= nnz (exact counts, upper bounds) no
  route overflows.  The symbolic phase uses the symbolic (column-only) capacities.
*/
OCEAN_HD void OceanRouteRowBins(const OceanBinConfig *bins, int64_t warp, double load, OceanPass ph, int64_t p,
                                const OceanRowShape *row, OceanRoute *r)
{
  int b;

  if (row->products == 0) {
    OceanRouteSet(r, OCEAN_BIN_EMPTY, OCEAN_ACC_NONE, 0, 0);
    return;
  }
  if (row->products <= bins[OCEAN_BIN_ESC2].max_products) {
    OceanRouteSet(r, row->products <= bins[OCEAN_BIN_ESC4].max_products ? OCEAN_BIN_ESC4 : OCEAN_BIN_ESC2,
                  OCEAN_ACC_ESC, row->ub, row->products);
    return;
  }
  if ((bins[OCEAN_BIN_HEAVY].takes_all && OceanRowHeavyEnough(&bins[OCEAN_BIN_HEAVY], row)) ||
      (ph == OCEAN_PASS_NUMERIC && OceanRowHeavyEarly(&bins[OCEAN_BIN_HEAVY], row))) {
    OceanRouteHeavy(ph, p, warp, row, r);
    return;
  }
  if (p < warp && p <= OceanBinHashLimit(&bins[OCEAN_BIN_SHORT], ph)) {
    OceanRouteSet(r, OCEAN_BIN_SHORT, OCEAN_ACC_HASH,
                  OceanMin64(OceanBinHashLimit(&bins[OCEAN_BIN_SHORT], ph), row->ub),
                  OceanBinHashCapacity(&bins[OCEAN_BIN_SHORT], ph));
    OceanRoutePromote(bins, warp, ph, row, r);
    return;
  }
  for (b = OCEAN_BIN_N0; b <= OCEAN_BIN_N4; b++) {
    const OceanBinConfig *c = &bins[b];
    if (row->span <= OceanBinDenseColumns(c, ph)) {
      int64_t slot = ph == OCEAN_PASS_NUMERIC ? OceanMin64(row->ub, (p + warp - 1) / warp * warp) : row->ub;
      OceanRouteSet(r, b, OCEAN_ACC_DENSE, slot, row->span);
      OceanRoutePromote(bins, warp, ph, row, r);
      return;
    }
    if (p <= OceanBinHashLimit(c, ph)) {
      OceanRouteSet(r, b, OCEAN_ACC_HASH, OceanMin64(OceanBinHashLimit(c, ph), row->ub), OceanBinHashCapacity(c, ph));
      OceanRoutePromote(bins, warp, ph, row, r);
      return;
    }
  }
  if (OceanRowHeavyEnough(&bins[OCEAN_BIN_HEAVY], row)) { /* takes_all's rows took HEAVY above */
    OceanRouteHeavy(ph, p, warp, row, r);
    return;
  }
  if (row->span <= OceanBinDenseColumns(&bins[OCEAN_BIN_LONG], ph)) {
    int64_t slot = ph == OCEAN_PASS_NUMERIC ? OceanMin64(row->ub, (p + warp - 1) / warp * warp) : row->ub;
    OceanRouteSet(r, OCEAN_BIN_LONG, OCEAN_ACC_GLOBAL_DENSE, slot, row->span);
    return;
  }
  {
    int64_t cap = OceanMax64(OceanHashCapacityFor(p, load), OceanBinHashCapacity(&bins[OCEAN_BIN_N4], ph));
    OceanRouteSet(r, OCEAN_BIN_LONG, OCEAN_ACC_GLOBAL_HASH, OceanMin64(OceanHashLimit(cap, load), row->ub), cap);
  }
}

/* NARROW's route of a row predicted at p nonzeros (its upper bound, or its exact count for numeric reuse): every row
   with products is summed densely over B's columns by its team; no other bin, no overflow. */
OCEAN_HD void OceanRouteNarrow(int64_t p, const OceanRowShape *row, OceanRoute *r)
{
  if (row->products == 0) OceanRouteSet(r, OCEAN_BIN_EMPTY, OCEAN_ACC_NONE, 0, 0);
  else OceanRouteSet(r, OCEAN_BIN_NARROW, OCEAN_ACC_DENSE, p, row->span);
}

/* ESTIMATE's prediction: min(ub, max(1, ceil(estimate x coefficient))), 0 for a row without products. */
OCEAN_HD int64_t OceanPredictFromEstimate(double estimate, double coefficient, const OceanRowShape *r)
{
  double p = ceil(estimate * coefficient);
  return r->products == 0
         ? 0
         : (p < (double)r->ub ? OceanMax64((int64_t)p, 1) : r->ub); /* the comparison also catches inf */
}

/* UPPER_BOUND's route of a row: by ub, or with factor > 0 by the likely size min(ub, factor x longest) when that routes
   the row to a smaller bin (many products into few columns: a smaller table, more rows at once); the rest of the
   bound stays a possible overflow, which the fallback computes again by exact counts.  In the same bin the likely
   size would only shrink a dense row's slot (AMG's coarse levels: a third of such rows overflowed), so the row keeps
   its bound; so do the rows the bound makes heavy, whose multisplit sizes its output by the bound.  *route: the route
   taken, *by_bound: the route by ub; returns the size routed by. */
OCEAN_HD int64_t OceanRouteBound(const OceanBinConfig *bins, int64_t warp, double load, const OceanRowShape *r,
                                 int64_t factor, OceanRoute *by_bound, OceanRoute *route)
{
  OceanRoute by_likely;
  int64_t    likely = OceanMin64(r->ub, OceanMax64(factor * (int64_t)r->longest, 1));

  OceanRouteRowBins(bins, warp, load, OCEAN_PASS_NUMERIC, r->ub, r, by_bound);
  *route = *by_bound;
  if (factor <= 0 || by_bound->bin == OCEAN_BIN_HEAVY || likely == r->ub) return r->ub;
  OceanRouteRowBins(bins, warp, load, OCEAN_PASS_NUMERIC, likely, r, &by_likely);
  if (by_likely.bin >= by_bound->bin) return r->ub;
  *route = by_likely;
  return likely;
}

/* UPPER_BOUND's prediction: the size OceanRouteBound routes the row by. */
OCEAN_HD int64_t OceanPredictBound(const OceanBinConfig *bins, int64_t warp, double load, const OceanRowShape *r,
                                   int64_t factor)
{
  OceanRoute by_bound, route;
  if (factor <= 0) return r->ub;
  return OceanRouteBound(bins, warp, load, r, factor, &by_bound, &route);
}

/* Whether UPPER_BOUND routes a product's rows by OceanPredictBound with its bound factor: when the slots of the rows'
   likely routes total at most OCEAN_LIKELY_BOUND_RATIO of their bounds (a quarter of the slots saved).  On an H100
   the real set's products whose likely slots were 0.40-0.74 of their bounds ran their numeric pass 7-45% faster;
   those at 0.79-0.99 gained nothing, lost up to 22% (zoltan_cage10) or overflowed (NotreDame_www: 265 rows).  The host
   and the device's analysis decide it from the same two totals. */
#define OCEAN_LIKELY_BOUND_RATIO 0.75
OCEAN_HD int OceanTakeBoundFactor(int64_t likely_total, int64_t bound_total)
{
  return (double)likely_total <= OCEAN_LIKELY_BOUND_RATIO * (double)bound_total;
}

/* EXACT's first symbolic prediction: min(ub, ceil(products / conservative CR)). */
OCEAN_HD int64_t OceanPredictExact(const OceanRowShape *r, double cr_conservative)
{
  return OceanMin64(r->ub, (int64_t)ceil((double)r->products / cr_conservative));
}

/* ------------------------------------------------------------------------------------------------ sampling, statistics
 */

/* The j-th of ns sampled rows spread evenly over the nq rows with products: the row of rank
   floor((2j+1) nq / (2 ns)) among them, split so that it cannot overflow.  Strictly increasing in j for ns <= nq. */
OCEAN_HD int64_t OceanSampleIndex(int64_t j, int64_t nq, int64_t ns)
{
  int64_t d = 2 * ns, qd = nq / d, rd = nq % d;
  return (2 * j + 1) * qd + (2 * j + 1) * rd / d;
}

/* One row's term of OceanStats.estimate_mean_rel_error (rows with nnz > 0 only). */
OCEAN_HD double OceanEstimateRelError(int64_t predicted, double coefficient, int64_t nnz)
{
  return fabs((double)predicted / coefficient - (double)nnz) / (double)nnz;
}

/* ------------------------------------------------------------------------------------------------ sketches */

#define OCEAN_HLL_MIN_REGISTERS 16
#define OCEAN_HLL_MAX_REGISTERS 256

/* Measured first-order bias of the maximum-likelihood estimate: E[est]/n - 1 = c/m with c = 0.47 (random sets of
   2m to 64m columns, 15000 per register count: 0.030 at m = 16, 0.015 at 32, 0.007 at 64).  Dividing by 1 + c/m
   removes it. */
#define OCEAN_SKETCH_ML_BIAS 0.47

OCEAN_HD int OceanLog2Int(int m)
{
  return OceanBitsFor((uint64_t)m) - 1;
}

/* The splitmix64 output for the column (a fixed seed: the golden-ratio increment), so sketches built anywhere,
   any time, on any device, agree and can be merged. */
OCEAN_HD uint64_t OceanHashColumn(int32_t col)
{
  uint64_t z = (uint64_t)(uint32_t)col + 0x9e3779b97f4a7c15ULL;
  z          = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z          = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* The set of update values a register knows, bit k-1 for value k: the three bits (1, seen(u-1), seen(u-2)) placed
   with their top at bit u-1 (branch-free; the empty register gives the empty set). */
OCEAN_HD uint64_t OceanRegisterUnpack(uint8_t r)
{
  return ((uint64_t)(4 | (r & 3)) << (r >> 2)) >> 3;
}

OCEAN_HD uint8_t OceanRegisterPack(uint64_t set)
{
  int u;

  if (!set) return 0;
  u = 64 - OceanClz64(set); /* u <= 61, so set << 2 loses nothing */
  return (uint8_t)((u << 2) | (int)(((set << 2) >> (u - 1)) & 3));
}

/* The register index of a column and its update value as a one-bit set. */
OCEAN_HD void OceanSketchUpdate(int log2m, int32_t col, int *idx, uint64_t *bit)
{
  uint64_t h = OceanHashColumn(col);
  uint64_t w = h >> log2m; /* q = 64 - log2m meaningful bits */
  int      k = w ? OceanClz64(w) - log2m + 1 : 64 - log2m + 1;

  *idx = (int)(h & ((1ULL << log2m) - 1));
  *bit = 1ULL << (k - 1);
}

OCEAN_HD void OceanSketchInsert(uint8_t *sketch, int log2m, int32_t col)
{
  int      idx;
  uint64_t bit;

  OceanSketchUpdate(log2m, col, &idx, &bit);
  sketch[idx] = OceanRegisterPack(OceanRegisterUnpack(sketch[idx]) | bit);
}

/* rho_k = 2^-min(k, q): the probability of update value k = 1..q+1 in a register (q = 64 - log2 m hash bits). */
OCEAN_HD double OceanSketchRho(int k, int q)
{
  return ldexp(1.0, -(k <= q ? k : q));
}

/* expm1(x) for x >= 0 from correctly rounded operations only (+ - * /, floor, exact scaling by 2^k), so that the
   CPU and the GPU (compiled without contraction into FMA) get the same bits, which the C library's and CUDA's expm1
   do not: x = k ln2 + r with |r| <= ln2/2 (Cody-Waite, ln2 in two parts), expm1(r) by its Taylor polynomial of
   degree 18 (the remainder is below 2^-60 |r|), then expm1(x) = 2^k (1 + expm1(r)) - 1.  Measured against glibc's
   expm1 on [1e-20, 700]: at most 5e-16 relative. */
OCEAN_HD double OceanExpm1(double x)
{
  const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
  const double inv_ln2 = 1.44269504088896338700e+00;
  /* 1/n! for n = 18 down to 1, as the compiler rounds the quotients (the same constants on both sides) */
  /* clang-format off */
  const double inv_fact[18] = {1.0 / 6402373705728000.0, 1.0 / 355687428096000.0, 1.0 / 20922789888000.0,
                               1.0 / 1307674368000.0,    1.0 / 87178291200.0,     1.0 / 6227020800.0,
                               1.0 / 479001600.0,        1.0 / 39916800.0,        1.0 / 3628800.0,
                               1.0 / 362880.0,           1.0 / 40320.0,           1.0 / 5040.0,
                               1.0 / 720.0,              1.0 / 120.0,             1.0 / 24.0,
                               1.0 / 6.0,                1.0 / 2.0,               1.0};
  /* clang-format on */
  double k, r, p = 0;
  int    i;

  if (!(x <= 709.0)) return INFINITY; /* and NaN: 1/expm1 of either is then 0 */
  k = floor(x * inv_ln2 + 0.5);
  r = (x - k * ln2_hi) - k * ln2_lo;
  for (i = 0; i < 18; i++) p = p * r + inv_fact[i];
  p = p * r;
  return k == 0 ? p : ldexp(p + 1.0, (int)k) - 1.0;
}
/*
  Maximum likelihood under the Poisson model (each register sees Poisson(lambda) columns, lambda = n/m; update
  value k appears in a register with probability 1 - exp(-lambda rho_k), independently):
      log L = -lambda alpha + sum_k beta_k log(1 - exp(-lambda rho_k)),
  alpha = sum of rho over the values known to be absent, beta_k = registers where value k is known to be present.
  The root of   g(lambda) = sum_k beta_k rho_k / expm1(lambda rho_k) - alpha   is bracketed by
  1/x - 1/2 < 1/expm1(x) < 1/x:   lo = B/(alpha + sum beta rho/2) <= lambda <= B/alpha  (B = sum beta).
  g is decreasing and convex, so Newton's steps from lo rise monotonically to the root (a step that leaves the
  bracket through rounding bisects instead).  One OceanExpm1 per step: rho doubles from k to k - 1 (up to q), and
  expm1(2y) = expm1(y) (expm1(y) + 2) gives the other terms, from the largest k (the smallest argument) down.
*/
/* beta[k] for the values k in [k_lo, k_hi] (the only ones some register saw: the terms of the others are zeros, so
   leaving them out changes no bit of the sums, and a solve costs its few seen values instead of all q + 1). */
OCEAN_HD double OceanSketchSolveML(double alpha, const int *beta, int k_lo, int k_hi, int q)
{
  double B = 0, Brho = 0, lo, hi, x;
  int    k, it;

  for (k = k_lo; k <= k_hi; k++) {
    B += (double)beta[k];
    Brho += (double)beta[k] * OceanSketchRho(k, q);
  }
  if (B == 0) return 0;
  if (alpha <= 0) return INFINITY; /* every register saturated */
  lo = B / (alpha + 0.5 * Brho);
  hi = B / alpha;
  x  = lo;
  for (it = 0; it < 100; it++) {
    double g = -alpha, dg = 0, next, em1 = 0, rho = OceanSketchRho(k_hi, q);
    for (k = k_hi; k >= k_lo; k--) {
      if (k == k_hi) em1 = OceanExpm1(x * rho);
      else if (k < q) { /* rho_k = 2 rho_(k+1) */ rho *= 2.0;
        em1 = em1 * (em1 + 2.0);
      }
      if (beta[k]) {
        const double b = (double)beta[k], inv = 1.0 / em1; /* 0 where em1 overflowed: the term vanishes */
        g += b * rho * inv;
        dg -= b * rho * rho * inv * (1.0 + inv);
      }
    }
    if (g > 0) lo = x;
    else hi = x;
    next = (dg < 0) ? x - g / dg : 0.5 * (lo + hi);
    if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
    if (fabs(next - x) <= 1e-12 * x) return next;
    x = next;
  }
  return x;
}

/* The estimate of a merged sketch of m registers. */
OCEAN_HD double OceanSketchEstimateRegisters(const uint8_t *sketch, int registers)
{
  const int log2m = OceanLog2Int(registers), q = 64 - log2m;
  int       beta[66] = {0}, k_lo = q + 2, k_hi = 0, j;
  double    alpha = 0;

  /* beta[k] for update value k = 1..q+1 */
  for (j = 0; j < registers; j++) {
    int r = sketch[j], u = r >> 2;
    if (!r) {
      alpha += 1.0; /* all values absent: sum of rho is 1 */
      continue;
    }
    beta[u] += 1;
    if (u <= q) alpha += ldexp(1.0, -u); /* values above u: sum_{k>u} rho_k = 2^-u */
    if (u >= 2) {
      if (r & 2) beta[u - 1] += 1;
      else alpha += OceanSketchRho(u - 1, q);
    }
    if (u >= 3) {
      if (r & 1) beta[u - 2] += 1;
      else alpha += OceanSketchRho(u - 2, q);
    }
    k_lo = OceanMin64(k_lo, u >= 3 ? u - 2 : u >= 2 ? u - 1 : u);
    k_hi = OceanMax64(k_hi, u);
  }
  return (double)registers * OceanSketchSolveML(alpha, beta, k_lo, k_hi, q) / (1.0 + OCEAN_SKETCH_ML_BIAS / registers);
}

#endif
