/*
  sketch.c - per-row cardinality sketches: one sketch of m one-byte registers per row of B, built once and
  merged register-wise for each row of A, then a maximum-likelihood estimate of the row's nonzeros.

  Why not the textbook HyperLogLog register (the largest rank seen) with the harmonic-mean estimator: with 32
  registers its pooled mean relative error on the rows of C is about 0.14-0.16, not reliably within 0.15.
  Measured on elasticity (12^3 x 3 dof) and R-MAT (scale 12, 16 edges/row) A*A, rows with >= 64 nonzeros, as the
  mean over 60 hash seeds: Flajolet's estimator with linear counting 0.138 / 0.156 (32 registers) and
  0.092 / 0.099 (64); Ertl's improved estimator 0.142 / 0.158 and 0.092 / 0.099; maximum likelihood on the same
  registers 0.141 / 0.158.  The rows of C share most columns, so a few unlucky hashes move every row together:
  the pooled error of one fixed hash wanders by +-0.01 (elasticity) to +-0.07 (R-MAT) around those means.
  The byte that holds a register has room for more than the rank: besides the largest update value u (6 bits
  suffice) we keep whether u-1 and u-2 were seen (2 bits), the register layout of UltraLogLog (Ertl, VLDB 2024).
  A register then holds the top three elements of the set of update values seen in it, so merging stays exact,
  register-wise, commutative and idempotent (OR of the unpacked sets), only not a plain max.  Our maximum-
  likelihood estimate on these registers gives 0.096 / 0.105 (32) and 0.061 / 0.066 (64) over the same 60 seeds;
  with our fixed hash: 0.096 / 0.119 and 0.064 / 0.077 (tests/core/test_core.c -v prints them).

  A register is 0 when empty, else (u << 2) | (seen(u-1) << 1) | seen(u-2).  A column's update value is
  k = 1 + the number of leading zeros of the q = 64 - log2(m) hash bits above the register index (k = q + 1
  when they are all zero), so k has probability 2^-k (2^-q for k = q + 1).
  On a GPU the merge of row i is one register per lane (no atomics); building the sketch of a long row of B
  can OR the unpacked 64-bit sets with atomicOr and pack them at the end.
*/
#include "core/context.h"
#include <math.h>

/* The register format, the hash, the insertion and the estimator are in core/rules.h (shared with CUDA). */

int OceanSketchRegistersValid(int registers)
{
  return registers >= OCEAN_HLL_MIN_REGISTERS && registers <= OCEAN_HLL_MAX_REGISTERS &&
         (registers & (registers - 1)) == 0;
}

void OceanSketchBuild(const OceanCSR *B, int registers, uint8_t *sketches)
{
  const int log2m = OceanLog2Int(registers);
  int64_t   k;

#pragma omp parallel for schedule(dynamic, 256)
  for (k = 0; k < B->nrows; k++) {
    uint8_t *s = sketches + (size_t)k * (size_t)registers;
    int64_t  t;

    memset(s, 0, (size_t)registers);
    for (t = B->rowptr[k]; t < B->rowptr[k + 1]; t++) OceanSketchInsert(s, log2m, B->colidx[t]);
  }
}

/* OceanRegisterUnpack of every byte: the merge's inner loop is then a load and an OR per register (the shifts of
   the unpacking measured ~10% of the CPU main job).  Filled once; the same values as the shared function. */
static uint64_t ocean_unpack_table[256];

static void OceanUnpackTableInit(void)
{
  int r;
  for (r = 0; r < 256; r++) ocean_unpack_table[r] = OceanRegisterUnpack((uint8_t)r);
}

void OceanSketchMergeRow(const OceanCSR *A, int64_t i, const uint8_t *sketches, int registers, uint8_t *merged)
{
  uint64_t set[OCEAN_HLL_MAX_REGISTERS];
  int64_t  t;
  int      j;

  memset(set, 0, sizeof(uint64_t) * (size_t)registers);
  for (t = A->rowptr[i]; t < A->rowptr[i + 1]; t++) {
    const uint8_t *s = sketches + (size_t)A->colidx[t] * (size_t)registers;
    for (j = 0; j < registers; j++) set[j] |= ocean_unpack_table[s[j]];
  }
  for (j = 0; j < registers; j++) merged[j] = OceanRegisterPack(set[j]);
}

double OceanSketchEstimate(const uint8_t *sketch, int registers)
{
  return OceanSketchEstimateRegisters(sketch, registers);
}

/* Whether row i of A has the columns of row i - 1, in the same order. */
static int OceanSameColumnsAsPrevious(const OceanCSR *A, int64_t i)
{
  const int64_t n = A->rowptr[i + 1] - A->rowptr[i];
  return n == A->rowptr[i] - A->rowptr[i - 1] &&
         !memcmp(A->colidx + A->rowptr[i], A->colidx + A->rowptr[i - 1], (size_t)n * sizeof(int32_t));
}

/* A row with the columns of the row before merges the same sketches, so its estimate is copied instead (the dof of
   one node in a block system: two merges of three saved on 3D elasticity).  The rows run in chunks, each in order on
   one thread, so the row before is done when it is in the same chunk. */
OceanError OceanSketchEstimateRows(OceanContext ctx, const OceanCSR *A, const OceanCSR *B, int registers,
                                   uint8_t **scratch, double *estimate, int *reused)
{
  const uint8_t *sketches;
  const int64_t  nchunks = (A->nrows + OCEAN_ROW_CHUNK - 1) / OCEAN_ROW_CHUNK;
  int64_t        c;

  OceanCall(OceanContextGetSketches(ctx, B, registers, scratch, &sketches, reused));
  if (!ocean_unpack_table[0xff]) OceanUnpackTableInit(); /* entry 0xff is never 0; filled before the threads start */
#pragma omp parallel for schedule(dynamic, 1)
  for (c = 0; c < nchunks; c++) {
    const int64_t first = c * OCEAN_ROW_CHUNK, end = OceanMin64(first + OCEAN_ROW_CHUNK, A->nrows);
    int64_t       i;
    for (i = first; i < end; i++) {
      uint8_t merged[OCEAN_HLL_MAX_REGISTERS];
      if (i > first && OceanSameColumnsAsPrevious(A, i)) {
        estimate[i] = estimate[i - 1];
        continue;
      }
      OceanSketchMergeRow(A, i, sketches, registers, merged);
      estimate[i] = OceanSketchEstimate(merged, registers);
    }
  }
  return OCEAN_SUCCESS;
}

OceanError OceanEstimateRowNnz(OceanContext ctx, const OceanCSR *A_in, const OceanCSR *B_in, int registers,
                               double *estimate)
{
  OceanCSR   A, B;
  uint8_t   *scratch = NULL;
  int        reused;
  OceanError err;

  OceanCheck(ctx, OCEAN_ERR_ARG, "OceanEstimateRowNnz: NULL context");
  OceanCall(OceanCSRPrepareAB("OceanEstimateRowNnz", A_in, B_in, &A, &B));
  OceanCheck(OceanSketchRegistersValid(registers), OCEAN_ERR_ARG,
             "OceanEstimateRowNnz: %d registers: must be a power of two in [%d, %d]", registers,
             OCEAN_HLL_MIN_REGISTERS, OCEAN_HLL_MAX_REGISTERS);
  OceanCheck(estimate || A.nrows == 0, OCEAN_ERR_ARG, "OceanEstimateRowNnz: NULL estimate array for %lld rows",
             (long long)A.nrows);
  err = OceanSketchEstimateRows(ctx, &A, &B, registers, &scratch, estimate, &reused);
  OceanFree(scratch);
  return err;
}

static int OceanSketchCacheMatch(const OceanSketchCacheEntry *e, const OceanCSR *B, int64_t b_nnz, int registers)
{
  return e->sketches && e->structure_id == B->structure_id && e->registers == registers && e->nrows == B->nrows &&
         e->nnz == b_nnz;
}

int OceanSketchCacheFind(OceanSketchCacheEntry *cache, uint64_t *clock, const OceanCSR *B, int64_t b_nnz, int registers,
                         OceanSketchCacheEntry **entry)
{
  OceanSketchCacheEntry *e = NULL;
  int                    i;

  for (i = 0; i < OCEAN_SKETCH_CACHE_SIZE; i++) {
    if (OceanSketchCacheMatch(&cache[i], B, b_nnz, registers)) {
      cache[i].last_use = ++*clock;
      *entry            = &cache[i];
      return 1;
    }
  }
  /* least recently used entry (unused entries have last_use 0) */
  for (i = 0; i < OCEAN_SKETCH_CACHE_SIZE; i++)
    if (!e || cache[i].last_use < e->last_use) e = &cache[i];
  *entry = e;
  return 0;
}

OceanError OceanContextGetSketches(OceanContext ctx, const OceanCSR *B, int registers, uint8_t **scratch,
                                   const uint8_t **sketches, int *reused)
{
  size_t                 nbytes = (size_t)B->nrows * (size_t)registers;
  OceanSketchCacheEntry *e      = NULL;

  *reused = 0;
  if (B->structure_id == 0) { /* unknown pattern: never cached */
    OceanCall(OceanRealloc(nbytes, scratch, "sketches of B"));
    OceanSketchBuild(B, registers, *scratch);
    *sketches = *scratch;
    ctx->sketches_built++;
    return OCEAN_SUCCESS;
  }
  if (OceanSketchCacheFind(ctx->cache, &ctx->cache_clock, B, OceanCSRNnz(B), registers, &e)) {
    *sketches = e->sketches;
    *reused   = 1;
    ctx->sketches_reused++;
    return OCEAN_SUCCESS;
  }
  OceanFree(e->sketches);
  e->structure_id = 0;
  OceanCall(OceanMalloc(nbytes, &e->sketches, "sketch cache entry"));
  OceanSketchBuild(B, registers, e->sketches);
  e->structure_id = B->structure_id;
  e->registers    = registers;
  e->nrows        = B->nrows;
  e->nnz          = OceanCSRNnz(B);
  e->last_use     = ++ctx->cache_clock;
  *sketches       = e->sketches;
  ctx->sketches_built++;
  return OCEAN_SUCCESS;
}
