/*
  accumulators.c - the CPU accumulators, one row at a time, each imitating the GPU kernel of its bin:

    ESC          expand the products into a buffer of q (column, value), stable sort by column, compact-sum
    HASH         open addressing with linear probing in a table of exactly the bin's capacity; the slot of a column
                 is a multiplicative hash reduced by a multiply-high ("fast range", no power-of-two mask), and the
                 row aborts when a new column would take it past its slot; a row of narrow column span is summed
                 over its span instead (OceanSpanDenseRow: the same result without the table and the sort)
    DENSE        values over the row's column span (offset by its first column) plus a bitmap; with bitmap_query
                 the bit is tested before it is set, as the GPU does to save shared-memory writes when CR is high
    GLOBAL_HASH  HASH with a larger table (the GPU keeps it in global memory)
    GLOBAL_DENSE DENSE over a wider span (the GPU keeps the values in global memory, the bitmap in shared memory)
    MULTISPLIT   gMAGNUS's heavy rows: the products expanded, split level by level into column chunks by a stable
                 counting sort, each chunk that is small enough (or of the last level) summed densely over its columns

  Symbolic variants keep columns only.  Hash rows are sorted by an indirect key-ptr LSD radix sort: the key
  (column - first column) and the table position packed in one 32-bit word when they fit, else 64 bits.

  Every row is summed in the order of its products (A's row, then B's rows), whatever the accumulator, so
  results do not depend on the bin, the workflow or the thread count.
*/
#include "cpu/cpu.h"

/* ------------------------------------------------------------------------------------------------ workspace */

/* Grows an array of n entries of size bytes to at least need; new entries are filled with fill (-1: none). */
static OceanError OceanGrow(void **ptr, int64_t *n, int64_t need, size_t size, int fill, int64_t *bytes)
{
  int64_t newn;

  if (need <= *n) return OCEAN_SUCCESS;
  newn   = OceanMax64(need, *n + *n / 2);
  *bytes = newn * (int64_t)size;
  OceanCall(OceanReallocBytes((size_t)newn, size, "accumulator workspace", ptr));
  if (fill >= 0) memset((char *)*ptr + (size_t)*n * size, fill, (size_t)(newn - *n) * size);
  *n = newn;
  return OCEAN_SUCCESS;
}

#define OceanGrowArray(ws, f, need, fill, bytes) \
  OceanGrow((void **)&(ws)->f, &(ws)->n##f, (need), sizeof(*(ws)->f), (fill), (bytes))

static OceanError OceanWorkspaceEnsure(OceanWorkspace *ws, const OceanRoute *r, int numeric, int64_t *bytes)
{
  switch ((OceanAccumulator)r->acc) {
  case OCEAN_ACC_ESC:
    OceanCall(OceanGrowArray(ws, esc_cols, r->capacity, -1, bytes));
    if (numeric) OceanCall(OceanGrowArray(ws, esc_vals, r->capacity, -1, bytes));
    break;
  case OCEAN_ACC_HASH:
  case OCEAN_ACC_GLOBAL_HASH:
    OceanCall(OceanGrowArray(ws, keys, r->capacity, 0xff, bytes)); /* -1 */
    OceanCall(OceanGrowArray(ws, used, r->slot, -1, bytes));
    if (numeric) {
      OceanCall(OceanGrowArray(ws, hvals, r->capacity, -1, bytes));
      if (r->slot > ws->nsort) { /* both sort buffers, to the same size */
        int64_t n = ws->nsort, na = n, nb = n;
        OceanCall(OceanGrow(&ws->sorta, &na, r->slot, sizeof(uint64_t), -1, bytes));
        OceanCall(OceanGrow(&ws->sortb, &nb, r->slot, sizeof(uint64_t), -1, bytes));
        ws->nsort = OceanMin64(na, nb);
      }
    }
    break;
  case OCEAN_ACC_DENSE:
  case OCEAN_ACC_GLOBAL_DENSE:
    OceanCall(OceanGrowArray(ws, bitmap, (r->capacity + 63) / 64, 0, bytes));
    if (numeric) OceanCall(OceanGrowArray(ws, dense, r->capacity, 0, bytes));
    break;
  case OCEAN_ACC_MULTISPLIT: /* OceanHeavyRow grows its own */
  case OCEAN_ACC_NONE: break;
  }
  return OCEAN_SUCCESS;
}

/* Workspaces sized for the largest shared-memory configuration (N4) and the ESC bins up front; only the
   LONG bin's global hash grows them later. */
OceanError OceanWorkspacesCreate(const OceanBinConfig bins[OCEAN_NUM_BINS], int n, OceanWorkspace **ws)
{
  const OceanBinConfig *n4   = &bins[OCEAN_BIN_N4];
  const OceanRoute      r[4] = {
         {.acc = OCEAN_ACC_ESC, .capacity = bins[OCEAN_BIN_ESC2].max_products, .slot = 0},
         {.acc = OCEAN_ACC_HASH, .capacity = n4->hash_capacity, .slot = n4->hash_limit},
         /* symbolic */
         {.acc = OCEAN_ACC_HASH, .capacity = n4->symbolic_hash_capacity, .slot = n4->symbolic_hash_limit},
         {.acc = OCEAN_ACC_DENSE, .capacity = OceanMax64(n4->dense_columns, n4->symbolic_dense_columns), .slot = 0},
  };
  int     t, j;
  int64_t bytes = 0;

  OceanCall(OceanCalloc(n, ws, "accumulator workspaces"));
  for (t = 0; t < n; t++) {
    (*ws)[t].all_packed = 1;
    for (j = 0; j < 4; j++) {
      OceanError err = OceanWorkspaceEnsure(&(*ws)[t], &r[j], j != 2, &bytes);
      if (err) {
        OceanWorkspacesDestroy(ws, n);
        return err;
      }
    }
  }
  return OCEAN_SUCCESS;
}

void OceanWorkspacesDestroy(OceanWorkspace **ws, int n)
{
  int t;

  if (!*ws) return;
  for (t = 0; t < n; t++) {
    OceanWorkspace *w = &(*ws)[t];
    OceanFree(w->keys);
    OceanFree(w->hvals);
    OceanFree(w->used);
    OceanFree(w->dense);
    OceanFree(w->bitmap);
    OceanFree(w->sorta);
    OceanFree(w->sortb);
    OceanFree(w->esc_cols);
    OceanFree(w->esc_vals);
    OceanFree(w->member);
    OceanFree(w->split_cols);
    OceanFree(w->split_vals);
    OceanFree(w->split_offsets);
    OceanFree(w->out_cols);
    OceanFree(w->out_vals);
  }
  OceanFree(*ws);
}

OceanError OceanWorkspaceReserveOutput(OceanWorkspace *ws, int64_t need, int64_t *bytes)
{
  OceanCall(OceanGrowArray(ws, out_cols, need, -1, bytes));
  OceanCall(OceanGrowArray(ws, out_vals, need, -1, bytes));
  return OCEAN_SUCCESS;
}

void OceanWorkspacesTrimOutput(OceanWorkspace *ws, int n, int64_t keep)
{
  int k;
  for (k = 0; k < n; k++)
    if (ws[k].nout_cols > keep || ws[k].nout_vals > keep) {
      OceanFree(ws[k].out_cols);
      OceanFree(ws[k].out_vals);
      ws[k].nout_cols = ws[k].nout_vals = ws[k].out_used = 0;
    }
}

OceanError OceanWorkspaceTakeOutput(OceanWorkspace *ws, int32_t **cols, double **vals)
{
  const int64_t n = OceanMax64(ws->out_used, 1);

  /* trimmed to what the rows took (a shrinking realloc moves nothing); the workspace starts a new buffer */
  OceanCall(OceanReallocBytes((size_t)n, sizeof(int32_t), "C column indices", (void **)&ws->out_cols));
  OceanCall(OceanReallocBytes((size_t)n, sizeof(double), "C values", (void **)&ws->out_vals));
  *cols         = ws->out_cols;
  *vals         = ws->out_vals;
  ws->out_cols  = NULL;
  ws->out_vals  = NULL;
  ws->nout_cols = ws->nout_vals = ws->out_used = 0;
  return OCEAN_SUCCESS;
}

int OceanWorkspacesAllPacked(OceanWorkspace *ws, int n)
{
  int t, all = 1;
  for (t = 0; t < n; t++) all = all && ws[t].all_packed;
  return all;
}

void OceanWorkspacesResetPacked(OceanWorkspace *ws, int n)
{
  int t;
  for (t = 0; t < n; t++) ws[t].all_packed = 1;
}

void OceanWorkspacesHeavyCounts(const OceanWorkspace *ws, int n, OceanHeavyCounts *sum)
{
  int t;
  memset(sum, 0, sizeof(*sum));
  for (t = 0; t < n; t++) {
    const OceanHeavyCounts *c = &ws[t].heavy_counts;
    sum->rows += c->rows;
    sum->products += c->products;
    sum->chunks += c->chunks;
    sum->dense_chunks += c->dense_chunks;
    sum->split_elements += c->split_elements;
    if (c->levels > sum->levels) sum->levels = c->levels;
  }
}

void OceanWorkspacesResetHeavyCounts(OceanWorkspace *ws, int n)
{
  int t;
  for (t = 0; t < n; t++) memset(&ws[t].heavy_counts, 0, sizeof(ws[t].heavy_counts));
}

/* ------------------------------------------------------------------------------------------------ key-ptr sort */

#define OCEAN_INSERTION_SORT_MAX 32

/*
  Sorts n packed words by the nbits key bits starting at bit lo, one 8-bit digit per pass (LSD radix), and
  returns the buffer (w or tmp) holding the result.  The ptr bits below lo are never looked at by the radix
  passes; short rows use insertion sort on whole words, which orders them the same way because keys are unique.
*/
#define OCEAN_DEFINE_KEYPTR_SORT(NAME, T) \
  static T *NAME(T *w, T *tmp, int64_t n, int lo, int nbits) \
  { \
    int shift; \
    if (n <= OCEAN_INSERTION_SORT_MAX) { \
      int64_t a, b; \
      for (a = 1; a < n; a++) { \
        T x = w[a]; \
        for (b = a; b > 0 && w[b - 1] > x; b--) w[b] = w[b - 1]; \
        w[b] = x; \
      } \
      return w; \
    } \
    for (shift = lo; shift < lo + nbits; shift += 8) { \
      int64_t count[257], j; \
      T       mask = (T)((1u << (lo + nbits - shift < 8 ? lo + nbits - shift : 8)) - 1); \
      T      *s; \
      memset(count, 0, sizeof(count)); \
      for (j = 0; j < n; j++) count[((w[j] >> shift) & mask) + 1]++; \
      for (j = 0; j < 256; j++) count[j + 1] += count[j]; \
      for (j = 0; j < n; j++) tmp[count[(w[j] >> shift) & mask]++] = w[j]; \
      s   = w; \
      w   = tmp; \
      tmp = s; \
    } \
    return w; \
  }

OCEAN_DEFINE_KEYPTR_SORT(OceanSortKeyPtr32, uint32_t)
OCEAN_DEFINE_KEYPTR_SORT(OceanSortKeyPtr64, uint64_t)

/* ------------------------------------------------------------------------------------------------ ESC */

static void OceanEscRow(OceanWorkspace *ws, const OceanCSR *A, const OceanCSR *B, int64_t i, const OceanRoute *r,
                        int32_t *cols, double *vals, int64_t *count, int *overflow)
{
  const int numeric = cols != NULL;
  int32_t  *ec      = ws->esc_cols;
  double   *ev      = ws->esc_vals;
  int64_t   n       = 0, a, b, t, u, c;

  for (t = A->rowptr[i]; t < A->rowptr[i + 1]; t++) { /* expand */
    const int32_t k = A->colidx[t];
    for (u = B->rowptr[k]; u < B->rowptr[k + 1]; u++, n++) {
      ec[n] = B->colidx[u];
      if (numeric) ev[n] = A->values[t] * B->values[u];
    }
  }
  for (a = 1; a < n; a++) { /* stable sort: equal columns keep the order of their products */
    int32_t x = ec[a];
    double  v = numeric ? ev[a] : 0;
    for (b = a; b > 0 && ec[b - 1] > x; b--) {
      ec[b] = ec[b - 1];
      if (numeric) ev[b] = ev[b - 1];
    }
    ec[b] = x;
    if (numeric) ev[b] = v;
  }
  for (a = 0, c = 0; a < n; a++) c += (a == 0 || ec[a] != ec[a - 1]);
  *count    = c;
  *overflow = c > r->slot;
  if (!numeric || *overflow) return;
  for (a = 0, c = -1; a < n; a++) { /* compact */
    if (a == 0 || ec[a] != ec[a - 1]) {
      cols[++c] = ec[a];
      vals[c]   = ev[a];
    } else vals[c] += ev[a];
  }
}

/* ------------------------------------------------------------------ bits; the dense bitmap's clearing and output */

static inline int OceanPopcount64(uint64_t x)
{
#if defined(__GNUC__) || defined(__clang__)
  return __builtin_popcountll(x);
#else
  int c = 0;
  for (; x; x &= x - 1) c++;
  return c;
#endif
}

static inline int OceanCtz64(uint64_t x)
{
#if defined(__GNUC__) || defined(__clang__)
  return __builtin_ctzll(x);
#else
  int c = 0;
  while (!(x & 1)) {
    x >>= 1;
    c++;
  }
  return c;
#endif
}

/* The first nw words of the dense bitmap cleared, and the values under their bits when numeric. */
static void OceanDenseClear(OceanWorkspace *ws, int64_t nw, int numeric)
{
  uint64_t *bm = ws->bitmap;
  int64_t   w;

  if (numeric)
    for (w = 0; w < nw; w++)
      for (; bm[w]; bm[w] &= bm[w] - 1) ws->dense[w * 64 + OceanCtz64(bm[w])] = 0;
  memset(bm, 0, (size_t)nw * sizeof(uint64_t));
}

/* Output in column order when the row fits its slot; always leaves the bitmap and values cleared. */
static void OceanDenseExtract(OceanWorkspace *ws, const OceanRowShape *row, const OceanRoute *r, int32_t *cols,
                              double *vals, int64_t *count, int *overflow)
{
  const int64_t nw = (row->span + 63) / 64;
  uint64_t     *bm = ws->bitmap;
  int64_t       w, n = 0;

  for (w = 0; w < nw; w++) n += OceanPopcount64(bm[w]);
  *count    = n;
  *overflow = n > r->slot;
  if (!cols || *overflow) {
    OceanDenseClear(ws, nw, cols != NULL);
    return;
  }
  for (w = 0, n = 0; w < nw; w++) {
    for (; bm[w]; bm[w] &= bm[w] - 1, n++) {
      const int64_t j = w * 64 + OceanCtz64(bm[w]);
      cols[n]         = (int32_t)(row->colmin + j);
      vals[n]         = ws->dense[j];
      ws->dense[j]    = 0;
    }
  }
}

/* ------------------------------------------------------------------------------------------------ hash */

/* OceanHashSlot (the table position of a column): core/rules.h */

/* Inserts all products of row i; returns 1 (overflow) when a new column would pass the slot. */
static int OceanHashAccumulate(OceanWorkspace *ws, const OceanCSR *A, const OceanCSR *B, int64_t i, const OceanRoute *r,
                               int numeric, int64_t *count)
{
  const int64_t cap = r->capacity, slot = r->slot, tend = A->rowptr[i + 1];
  const int64_t *restrict brow = B->rowptr;
  const int32_t *restrict bcol = B->colidx;
  const double *restrict bval  = B->values;
  int32_t *restrict keys       = ws->keys;
  double *restrict hv          = ws->hvals;
  int64_t *restrict used       = ws->used;
  int64_t n                    = 0, t, u;

  for (t = A->rowptr[i]; t < tend; t++) {
    const int32_t k  = A->colidx[t];
    const int64_t ue = brow[k + 1];
    const double  a  = numeric ? A->values[t] : 0;
    for (u = brow[k]; u < ue; u++) {
      const int32_t col = bcol[u];
      int64_t       pos = OceanHashSlot(col, cap);
      while (keys[pos] != col && keys[pos] != -1) pos = (pos + 1 == cap) ? 0 : pos + 1;
      if (keys[pos] == -1) {
        if (n == slot) {
          *count = n;
          return 1;
        }
        keys[pos] = col;
        used[n++] = pos;
        if (numeric) hv[pos] = a * bval[u];
      } else if (numeric) hv[pos] += a * bval[u];
    }
  }
  *count = n;
  return 0;
}

static void OceanHashClear(OceanWorkspace *ws, int64_t n)
{
  int64_t j;
  for (j = 0; j < n; j++) ws->keys[ws->used[j]] = -1;
}

/* Sorted output of the n entries in the table, through packed key-ptr words; clears the table. */
static void OceanHashExtract(OceanWorkspace *ws, int64_t n, const OceanRowShape *row, const OceanRoute *r,
                             int32_t *cols, double *vals)
{
  const int     kb = OceanBitsFor((uint64_t)(row->span - 1)), pb = OceanBitsFor((uint64_t)(r->capacity - 1));
  const int32_t base = row->colmin;
  int32_t      *keys = ws->keys;
  const double *hv   = ws->hvals;
  int64_t       j;

  if (kb + pb <= 32) {
    const uint32_t mask = (uint32_t)((1ULL << pb) - 1);
    uint32_t      *w    = (uint32_t *)ws->sorta;
    for (j = 0; j < n; j++)
      w[j] = (uint32_t)(((uint64_t)(uint32_t)(keys[ws->used[j]] - base) << pb) | (uint64_t)ws->used[j]);
    w = OceanSortKeyPtr32(w, (uint32_t *)ws->sortb, n, pb, kb);
    for (j = 0; j < n; j++) {
      const int64_t pos = w[j] & mask;
      cols[j]           = keys[pos];
      vals[j]           = hv[pos];
      keys[pos]         = -1;
    }
  } else {
    const uint64_t mask = (1ULL << pb) - 1;
    uint64_t      *w    = (uint64_t *)ws->sorta;
    ws->all_packed      = 0;
    for (j = 0; j < n; j++) w[j] = ((uint64_t)(uint32_t)(keys[ws->used[j]] - base) << pb) | (uint64_t)ws->used[j];
    w = OceanSortKeyPtr64(w, (uint64_t *)ws->sortb, n, pb, kb);
    for (j = 0; j < n; j++) {
      const int64_t pos = (int64_t)(w[j] & mask);
      cols[j]           = keys[pos];
      vals[j]           = hv[pos];
      keys[pos]         = -1;
    }
  }
}

/*
  A HASH row whose column span is narrow enough is summed over that span instead, in the DENSE workspace: the same
  columns in the same order, the same sums (a column's first product stored, the others added in product order) and
  the same abort when a new column would pass the slot, without the probing and the sort a CPU pays for a table
  that only the GPU's shared memory needs.  Narrow: at most OCEAN_CPU_SPAN_DENSE_MAX columns (the values stay in a
  core's cache) and a bitmap scan of at most four words per product.
*/
#define OCEAN_CPU_SPAN_DENSE_MAX (1 << 16)

static int OceanSpanDenseFits(const OceanRowShape *row)
{
  return row->span > 0 && row->span <= OCEAN_CPU_SPAN_DENSE_MAX && row->span <= 256 * row->products;
}

static OceanError OceanSpanDenseRow(OceanWorkspace *ws, const OceanCSR *A, const OceanCSR *B, int64_t i,
                                    const OceanRowShape *row, const OceanRoute *r, int32_t *cols, double *vals,
                                    int64_t *count, int *overflow, int64_t *bytes)
{
  const int     numeric = cols != NULL;
  const int64_t nw = (row->span + 63) / 64, slot = r->slot, base = row->colmin, tend = A->rowptr[i + 1];
  const int64_t *restrict brow = B->rowptr;
  const int32_t *restrict bcol = B->colidx;
  const double *restrict bval  = B->values;
  uint64_t *restrict bm;
  double *restrict dv;
  int64_t n = 0, t, u;

  OceanCall(OceanGrowArray(ws, bitmap, nw, 0, bytes));
  if (numeric) OceanCall(OceanGrowArray(ws, dense, row->span, 0, bytes));
  bm = ws->bitmap;
  dv = ws->dense;
  /* the loops keep B's arrays and bounds in locals: stores to the bitmap could otherwise alias B->rowptr */
  for (t = A->rowptr[i]; t < tend && !*overflow; t++) {
    const int32_t k  = A->colidx[t];
    const int64_t ue = brow[k + 1];
    if (numeric) {
      const double a = A->values[t];
      for (u = brow[k]; u < ue; u++) {
        const int64_t  j   = (int64_t)bcol[u] - base;
        const uint64_t bit = 1ULL << (j & 63);
        if (bm[j >> 6] & bit) dv[j] += a * bval[u];
        else if (n == slot) {
          *overflow = 1;
          break;
        } else {
          bm[j >> 6] |= bit;
          n++;
          dv[j] = a * bval[u];
        }
      }
    } else {
      for (u = brow[k]; u < ue; u++) {
        const int64_t  j   = (int64_t)bcol[u] - base;
        const uint64_t bit = 1ULL << (j & 63);
        if (bm[j >> 6] & bit) continue;
        if (n == slot) {
          *overflow = 1;
          break;
        }
        bm[j >> 6] |= bit;
        n++;
      }
    }
  }
  if (*overflow) {
    *count = n;
    OceanDenseClear(ws, nw, numeric);
  } else OceanDenseExtract(ws, row, r, cols, vals, count, overflow); /* the row fits: the same count, no overflow */
  return OCEAN_SUCCESS;
}

static OceanError OceanHashRow(OceanWorkspace *ws, const OceanCSR *A, const OceanCSR *B, int64_t i,
                               const OceanRowShape *row, const OceanRoute *r, int32_t *cols, double *vals,
                               int64_t *count, int *overflow, int64_t *bytes)
{
  if (OceanSpanDenseFits(row)) return OceanSpanDenseRow(ws, A, B, i, row, r, cols, vals, count, overflow, bytes);
  *overflow = OceanHashAccumulate(ws, A, B, i, r, cols != NULL, count);
  if (*overflow || !cols) OceanHashClear(ws, *count);
  else OceanHashExtract(ws, *count, row, r, cols, vals);
  return OCEAN_SUCCESS;
}

/* ------------------------------------------------------------------------------------------------ dense */

static void OceanDenseAccumulate(OceanWorkspace *ws, const OceanCSR *A, const OceanCSR *B, int64_t i,
                                 const OceanRowShape *row, int numeric, int bitmap_query)
{
  const int64_t base = row->colmin, tend = A->rowptr[i + 1];
  const int64_t *restrict brow = B->rowptr;
  const int32_t *restrict bcol = B->colidx;
  const double *restrict bval  = B->values;
  uint64_t *restrict bm        = ws->bitmap;
  double *restrict dv          = ws->dense;
  int64_t t, u;

  for (t = A->rowptr[i]; t < tend; t++) {
    const int32_t k  = A->colidx[t];
    const int64_t ue = brow[k + 1];
    const double  a  = numeric ? A->values[t] : 0;
    if (!numeric)
      for (u = brow[k]; u < ue; u++) {
        const int64_t j = (int64_t)bcol[u] - base;
        bm[j >> 6] |= 1ULL << (j & 63);
      }
    else if (bitmap_query)
      for (u = brow[k]; u < ue; u++) {
        const int64_t  j   = (int64_t)bcol[u] - base;
        const uint64_t bit = 1ULL << (j & 63);
        if (bm[j >> 6] & bit) dv[j] += a * bval[u];
        else {
          bm[j >> 6] |= bit;
          dv[j] = a * bval[u];
        }
      }
    else
      for (u = brow[k]; u < ue; u++) {
        const int64_t j = (int64_t)bcol[u] - base;
        bm[j >> 6] |= 1ULL << (j & 63);
        dv[j] += a * bval[u];
      }
  }
}

/* ------------------------------------------------------------------------------------------------ multisplit */

/* One MULTISPLIT row in progress: its levels, its output so far and what the splits did. */
typedef struct {
  OceanHeavyLevels L;
  int64_t          ncols, slot, count;
  int32_t         *cols; /* NULL: symbolic */
  double          *vals;
  OceanHeavyCounts c;
} OceanHeavyRowState;

/* A chunk's elements [s, e) summed densely over their columns in element order, appended to the row's output (counted
   only once the row passed its slot). */
static void OceanHeavyAccumulate(OceanWorkspace *ws, OceanHeavyRowState *h, const int32_t *ec, const double *ev,
                                 int64_t s, int64_t e)
{
  uint64_t *bm   = ws->bitmap;
  double   *dv   = ws->dense;
  int32_t   cmin = ec[s], cmax = ec[s];
  int64_t   k, w, nw;

  for (k = s + 1; k < e; k++) {
    cmin = ec[k] < cmin ? ec[k] : cmin;
    cmax = ec[k] > cmax ? ec[k] : cmax;
  }
  for (k = s; k < e; k++) {
    const int64_t j = ec[k] - cmin;
    bm[j >> 6] |= 1ULL << (j & 63);
    if (h->cols) dv[j] += ev[k];
  }
  nw = ((int64_t)(cmax - cmin) >> 6) + 1;
  for (w = 0; w < nw; w++) {
    for (; bm[w]; bm[w] &= bm[w] - 1) {
      const int64_t j = w * 64 + OceanCtz64(bm[w]);
      if (h->cols && h->count < h->slot) {
        h->cols[h->count] = (int32_t)(cmin + j);
        h->vals[h->count] = dv[j];
      }
      if (h->cols) dv[j] = 0;
      h->count++;
    }
  }
}

/* Splits the elements [lo, hi) of (sc, sv), one chunk of level l - 1 (the row at l = 0), into the chunks of level l in
   (dc, dv) by a stable counting sort, then sums each chunk the hash of a block would hold (hash_limit elements) or of
   the last level, and splits the others again, back into (sc, sv): chunks in column order, so the output is sorted. */
static void OceanHeavySplit(OceanWorkspace *ws, OceanHeavyRowState *h, int l, int32_t *sc, double *sv, int32_t *dc,
                            double *dv, int64_t lo, int64_t hi)
{
  const int64_t nc  = OceanHeavyChunksAt(&h->L, l, h->ncols);
  int64_t      *off = ws->split_offsets + (int64_t)l * (ws->heavy->chunks_per_level + 1);
  int64_t       k, c, start;

  memset(off, 0, (size_t)(nc + 1) * sizeof(int64_t));
  for (k = lo; k < hi; k++) off[OceanHeavyChunkOf(&h->L, l, sc[k]) + 1]++;
  for (c = 0; c < nc; c++) off[c + 1] += off[c];
  for (k = lo; k < hi; k++) {
    const int64_t pos = lo + off[OceanHeavyChunkOf(&h->L, l, sc[k])]++; /* off[c] becomes chunk c's end */
    dc[pos]           = sc[k];
    if (h->cols) dv[pos] = sv[k];
  }
  h->c.split_elements += hi - lo;
  if (l + 1 > h->c.levels) h->c.levels = l + 1;
  for (c = 0, start = lo; c < nc; start = lo + off[c], c++) {
    const int64_t end = lo + off[c], n = end - start;
    if (!n) continue;
    if (l + 1 == h->L.levels || n <= ws->heavy->hash_limit) {
      h->c.chunks++;
      if (n > ws->heavy->hash_limit) h->c.dense_chunks++;
      OceanHeavyAccumulate(ws, h, dc, dv, start, end);
    } else OceanHeavySplit(ws, h, l + 1, dc, dv, sc, sv, start, end);
  }
}

/* MULTISPLIT: the row's products expanded in product order (the GPU's outer product gives the same elements), split
   and summed chunk by chunk; the sums of every other accumulator, since a stable split keeps each column's products
   in order. */
static OceanError OceanHeavyRow(OceanWorkspace *ws, const OceanCSR *A, const OceanCSR *B, int64_t i,
                                const OceanRowShape *row, const OceanRoute *r, int32_t *cols, double *vals,
                                int64_t *count, int *overflow, int64_t *bytes)
{
  const int          numeric = cols != NULL;
  OceanHeavyRowState h;
  int64_t            n = 0, t, u;

  memset(&h, 0, sizeof(h));
  OceanHeavyPlanLevels(ws->heavy, B->ncols, &h.L);
  h.ncols = B->ncols;
  h.slot  = r->slot;
  h.cols  = cols;
  h.vals  = vals;
  OceanCall(OceanGrowArray(ws, esc_cols, row->products, -1, bytes));
  OceanCall(OceanGrowArray(ws, split_cols, row->products, -1, bytes));
  if (numeric) {
    OceanCall(OceanGrowArray(ws, esc_vals, row->products, -1, bytes));
    OceanCall(OceanGrowArray(ws, split_vals, row->products, -1, bytes));
  }
  OceanCall(OceanGrowArray(ws, split_offsets, (int64_t)h.L.levels * (ws->heavy->chunks_per_level + 1), -1, bytes));
  OceanCall(OceanGrowArray(ws, bitmap, (B->ncols + 63) / 64 + 1, 0, bytes));
  if (numeric) OceanCall(OceanGrowArray(ws, dense, B->ncols, 0, bytes));
  for (t = A->rowptr[i]; t < A->rowptr[i + 1]; t++) {
    const int32_t k = A->colidx[t];
    for (u = B->rowptr[k]; u < B->rowptr[k + 1]; u++, n++) {
      ws->esc_cols[n] = B->colidx[u];
      if (numeric) ws->esc_vals[n] = A->values[t] * B->values[u];
    }
  }
  if (n) OceanHeavySplit(ws, &h, 0, ws->esc_cols, ws->esc_vals, ws->split_cols, ws->split_vals, 0, n);
  *count    = h.count;
  *overflow = h.count > r->slot;
  if (numeric && !*overflow) { /* the row is done: what its pass reports */
    OceanHeavyCounts *c = &ws->heavy_counts;
    c->rows++;
    c->products += n;
    c->chunks += h.c.chunks;
    c->dense_chunks += h.c.dense_chunks;
    c->split_elements += h.c.split_elements;
    if (h.c.levels > c->levels) c->levels = h.c.levels;
  }
  return OCEAN_SUCCESS;
}

/* ------------------------------------------------------------------------------------------------ rows */

OceanError OceanCpuRow(OceanWorkspace *ws, const OceanCSR *A, const OceanCSR *B, int64_t i, const OceanRowShape *row,
                       const OceanRoute *r, int bitmap_query, int32_t *cols, double *vals, int64_t *count,
                       int *overflow, int64_t *bytes)
{
  *count    = 0;
  *overflow = 0;
  OceanCall(OceanWorkspaceEnsure(ws, r, cols != NULL, bytes));
  switch ((OceanAccumulator)r->acc) {
  case OCEAN_ACC_NONE: break;
  case OCEAN_ACC_ESC: OceanEscRow(ws, A, B, i, r, cols, vals, count, overflow); break;
  case OCEAN_ACC_HASH:
  case OCEAN_ACC_GLOBAL_HASH: return OceanHashRow(ws, A, B, i, row, r, cols, vals, count, overflow, bytes);
  case OCEAN_ACC_DENSE:
  case OCEAN_ACC_GLOBAL_DENSE:
    OceanDenseAccumulate(ws, A, B, i, row, cols != NULL, bitmap_query);
    OceanDenseExtract(ws, row, r, cols, vals, count, overflow);
    break;
  case OCEAN_ACC_MULTISPLIT: return OceanHeavyRow(ws, A, B, i, row, r, cols, vals, count, overflow, bytes);
  }
  return OCEAN_SUCCESS;
}

OceanError OceanCpuRowKnown(OceanWorkspace *ws, const OceanCSR *A, const OceanCSR *B, int64_t i, const int32_t *cols,
                            int64_t n, double *vals, int64_t *bytes)
{
  const int64_t tend           = A->rowptr[i + 1];
  const int64_t *restrict brow = B->rowptr;
  const int32_t *restrict bcol = B->colidx;
  const double *restrict bval  = B->values;
  int32_t *restrict member;
  double *restrict dense;
  int64_t j, t, u;
  int32_t missing = 0; /* negative once a column is not in C's row */

  OceanCall(OceanGrowArray(ws, member, B->ncols, 0xff, bytes)); /* -1 */
  OceanCall(OceanGrowArray(ws, dense, B->ncols, 0, bytes));
  member = ws->member;
  dense  = ws->dense;
  for (j = 0; j < n; j++) member[cols[j]] = 0;
  /* every product added into a dense row of B's columns, two a step (the same sums in the same order as one at a
     time), the membership test beside it rather than in front of it: the loads of a product are independent.  Against
     a position map (member holding the place in C's row, the add through it), paired in-process runs on this
     project's 2-core machine gave 1.12x-1.22x for the numeric-only products of the main job on 2 ranks */
  for (t = A->rowptr[i]; t < tend; t++) {
    const int32_t k  = A->colidx[t];
    const int64_t ue = brow[k + 1];
    const double  av = A->values[t];
    for (u = brow[k]; u + 1 < ue; u += 2) {
      const int32_t c0 = bcol[u], c1 = bcol[u + 1];
      const double  x0 = av * bval[u], x1 = av * bval[u + 1];
      missing |= member[c0] | member[c1];
      dense[c0] += x0;
      dense[c1] += x1;
    }
    if (u < ue) {
      const int32_t c = bcol[u];
      missing |= member[c];
      dense[c] += av * bval[u];
    }
  }
  for (j = 0; j < n; j++) {
    vals[j]         = dense[cols[j]];
    dense[cols[j]]  = 0.0;
    member[cols[j]] = -1;
  }
  if (missing < 0) { /* products fell outside C's row: the dense row is zeroed again for the next */
    memset(dense, 0, (size_t)B->ncols * sizeof(*dense));
    return OCEAN_ERR_STATE;
  }
  return OCEAN_SUCCESS;
}

OceanError OceanCpuCountRow(const OceanSettings *set, OceanWorkspace *ws, const OceanCSR *A, const OceanCSR *B,
                            int64_t i, const OceanRowShape *row, int64_t p, int64_t *nnz, int *retried, int64_t *bytes)
{
  *retried = 0;
  for (;;) {
    OceanRoute r;
    int        overflow;

    OceanRouteRow(set, OCEAN_PASS_SYMBOLIC, p, row, &r);
    OceanCall(OceanCpuRow(ws, A, B, i, row, &r, 0, NULL, NULL, nnz, &overflow, bytes));
    if (!overflow) return OCEAN_SUCCESS;
    /* the row has more than r.slot (< ub) nonzeros: the next configuration up, global memory at worst */
    *retried = 1;
    p        = OceanMin64(row->ub, 2 * r.slot);
  }
}
