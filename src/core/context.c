/*
  ocean_context.c - errors, memory, names, defaults, the bin table, the context and its sketch cache.
*/
#include "core/core.h"
#include <math.h>
#include <stdio.h>
#include <time.h>

/* ------------------------------------------------------------------------------------------------ errors */

static OCEAN_THREAD_LOCAL char ocean_last_error[1024];

const char *OceanErrorString(OceanError err)
{
  switch (err) {
  case OCEAN_SUCCESS: return "success";
  case OCEAN_ERR_ARG: return "invalid argument";
  case OCEAN_ERR_MEMORY: return "out of memory";
  case OCEAN_ERR_INDEX_OVERFLOW: return "output too large";
  case OCEAN_ERR_STATE: return "operand structure changed";
  case OCEAN_ERR_NOT_AVAILABLE: return "not available";
  case OCEAN_ERR_DEVICE: return "device error";
  }
  return "unknown error";
}

const char *OceanGetLastErrorMessage(void) { return ocean_last_error; }

OceanError OceanSetError(OceanError err, const char *fmt, ...)
{
  va_list ap;
  int     n = snprintf(ocean_last_error, sizeof(ocean_last_error), "%s: ", OceanErrorString(err));

  if (n < 0 || (size_t)n >= sizeof(ocean_last_error)) return err;
  va_start(ap, fmt);
  vsnprintf(ocean_last_error + n, sizeof(ocean_last_error) - (size_t)n, fmt, ap);
  va_end(ap);
  return err;
}

int OceanParallelFailed(OceanParallelStatus *st)
{
  int failed;
#pragma omp atomic read
  failed = st->failed;
  return failed;
}

void OceanParallelFail(OceanParallelStatus *st, OceanError err, int64_t row, int64_t bytes)
{
#pragma omp critical(ocean_parallel_fail)
  {
    /* keep the failure of the lowest row so the message does not depend on the thread count */
    if (!st->failed || row < st->row) {
      st->err   = err;
      st->row   = row;
      st->bytes = bytes;
    }
#pragma omp atomic write
    st->failed = 1;
  }
}

OceanError OceanParallelReport(const OceanParallelStatus *st, const char *where)
{
  if (!st->failed) return OCEAN_SUCCESS;
  if (st->err == OCEAN_ERR_MEMORY)
    return OceanSetError(st->err, "%s: could not grow an accumulator workspace to %lld bytes (row %lld)", where, (long long)st->bytes, (long long)st->row);
  if (st->err == OCEAN_ERR_STATE)
    return OceanSetError(st->err, "%s: row %lld of C does not have the structure of the symbolic phase although the operands' structure ids match", where,
                         (long long)st->row);
  return OceanSetError(st->err, "%s: failed at row %lld", where, (long long)st->row);
}

/* ------------------------------------------------------------------------------------------------ memory */

static OceanError OceanBytes(size_t count, size_t size, const char *what, size_t *bytes)
{
  if (count == 0) count = 1; /* never ask malloc for 0 bytes: its result may be NULL */
  OceanCheck(count <= SIZE_MAX / size, OCEAN_ERR_MEMORY, "%s: %zu entries of %zu bytes overflow size_t", what, count, size);
  *bytes = count * size;
  return OCEAN_SUCCESS;
}

OceanError OceanMallocBytes(size_t count, size_t size, int zero, const char *what, void **ptr)
{
  size_t bytes = 0;

  *ptr = NULL;
  OceanCall(OceanBytes(count, size, what, &bytes));
  *ptr = zero ? calloc(1, bytes) : malloc(bytes);
  OceanCheck(*ptr, OCEAN_ERR_MEMORY, "%s: could not allocate %zu bytes", what, bytes);
  return OCEAN_SUCCESS;
}

OceanError OceanReallocBytes(size_t count, size_t size, const char *what, void **ptr)
{
  size_t bytes = 0;
  void  *p;

  OceanCall(OceanBytes(count, size, what, &bytes));
  p = realloc(*ptr, bytes);
  OceanCheck(p, OCEAN_ERR_MEMORY, "%s: could not grow to %zu bytes", what, bytes);
  *ptr = p;
  return OCEAN_SUCCESS;
}

void OceanFreePtr(void *pptr)
{
  void **p = (void **)pptr;
  free(*p);
  *p = NULL;
}

double OceanWallTime(void)
{
#ifdef _OPENMP
  return omp_get_wtime();
#else
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
#endif
}

/* ------------------------------------------------------------------------------------------------ names */

const char *OceanWorkflowName(OceanWorkflow w)
{
  switch (w) {
  case OCEAN_WORKFLOW_AUTO: return "auto";
  case OCEAN_WORKFLOW_UPPER_BOUND: return "upper_bound";
  case OCEAN_WORKFLOW_ESTIMATE: return "estimate";
  case OCEAN_WORKFLOW_EXACT: return "exact";
  case OCEAN_WORKFLOW_NARROW: return "narrow";
  }
  return "unknown";
}

const char *OceanBinName(OceanBin bin)
{
  static const char *names[OCEAN_NUM_BINS] = {"empty", "esc4", "esc2", "short", "n0", "n1", "n2", "n3", "n4", "long", "narrow"};
  return (bin >= 0 && bin < OCEAN_NUM_BINS) ? names[bin] : "unknown";
}

const char *OceanAccumulatorName(OceanAccumulator acc)
{
  switch (acc) {
  case OCEAN_ACC_NONE: return "none";
  case OCEAN_ACC_ESC: return "esc";
  case OCEAN_ACC_HASH: return "hash";
  case OCEAN_ACC_DENSE: return "dense";
  case OCEAN_ACC_GLOBAL_HASH: return "global_hash";
  case OCEAN_ACC_GLOBAL_DENSE: return "global_dense";
  }
  return "unknown";
}

const char *OceanPhaseName(OceanPhase phase)
{
  static const char *names[OCEAN_NUM_PHASES] = {"analysis", "estimate", "symbolic", "numeric", "fallback", "compact", "transpose", "upload", "download"};
  return (phase >= 0 && phase < OCEAN_NUM_PHASES) ? names[phase] : "unknown";
}

const char *OceanProductTypeName(OceanProductType t)
{
  switch (t) {
  case OCEAN_PRODUCT_AB: return "AB";
  case OCEAN_PRODUCT_AtB: return "AtB";
  case OCEAN_PRODUCT_PtAP: return "PtAP";
  }
  return "unknown";
}

/* ------------------------------------------------------------------------------------------------ defaults */

void OceanDeviceProfileDefault(OceanDeviceProfile *profile)
{
  memset(profile, 0, sizeof(*profile));
  snprintf(profile->name, sizeof(profile->name), "NVIDIA H200 (default profile)");
  profile->smem_per_block        = 227 * 1024;
  profile->smem_per_sm           = 228 * 1024;
  profile->num_sms               = 132;
  profile->warp_size             = 32;
  profile->max_threads_per_block = 1024;
  profile->max_threads_per_sm    = 2048;
}

void OceanOptionsDefault(OceanOptions *opts)
{
  memset(opts, 0, sizeof(*opts));
  opts->workflow             = OCEAN_WORKFLOW_AUTO;
  opts->hll_registers        = 0;
  opts->estimate_coefficient = 0.0;
  opts->sample_fraction      = 0.03;
  opts->sample_min           = 600;
  opts->sample_max           = 10000;
  opts->ub_products_per_row  = 64.0;
  opts->er_threshold         = 8.0;
  opts->cr_threshold         = 8.0;
  opts->hll_er_64            = 48.0;
  opts->bitmap_cr_threshold  = 2.0;
  opts->hash_load            = 0.8;
  opts->acc_smem_per_sm      = 128 * 1024;
  opts->max_output_nnz       = INT64_MAX;
  opts->narrow_max_columns   = OCEAN_NARROW_MAX_COLUMNS;
  opts->narrow_min_density   = 0.25;
  opts->narrow_max_entries   = (int64_t)1 << 22;
  opts->record_rows          = 0;
  opts->device_memory_limit  = 0;
  opts->reuse_map_max_bytes  = -1;
}

static OceanError OceanOptionsValidate(const OceanOptions *o)
{
  OceanCheck(o->workflow >= OCEAN_WORKFLOW_AUTO && o->workflow <= OCEAN_WORKFLOW_NARROW, OCEAN_ERR_ARG, "options: workflow %d is not AUTO (-1), UPPER_BOUND, ESTIMATE, EXACT or NARROW", (int)o->workflow);
  OceanCheck(o->hll_registers == 0 || OceanSketchRegistersValid(o->hll_registers), OCEAN_ERR_ARG, "options: hll_registers %d must be 0 or a power of two in [%d, %d]", o->hll_registers,
             OCEAN_HLL_MIN_REGISTERS, OCEAN_HLL_MAX_REGISTERS);
  OceanCheck(o->estimate_coefficient >= 0.0, OCEAN_ERR_ARG, "options: estimate_coefficient %g must be 0 (the paper's rule) or positive", o->estimate_coefficient);
  OceanCheck(o->sample_fraction >= 0.0 && o->sample_fraction <= 1.0, OCEAN_ERR_ARG, "options: sample_fraction %g must lie in [0, 1]", o->sample_fraction);
  OceanCheck(o->sample_min >= 0 && o->sample_max >= o->sample_min, OCEAN_ERR_ARG, "options: sample_min %lld and sample_max %lld must satisfy 0 <= min <= max", (long long)o->sample_min,
             (long long)o->sample_max);
  OceanCheck(o->hash_load > 0.0 && o->hash_load <= 1.0, OCEAN_ERR_ARG, "options: hash_load %g must lie in (0, 1]", o->hash_load);
  OceanCheck(o->acc_smem_per_sm > 0, OCEAN_ERR_ARG, "options: acc_smem_per_sm %lld must be positive", (long long)o->acc_smem_per_sm);
  OceanCheck(o->max_output_nnz >= 0, OCEAN_ERR_ARG, "options: max_output_nnz %lld must not be negative", (long long)o->max_output_nnz);
  OceanCheck(o->narrow_max_columns >= 0 && o->narrow_max_columns <= OCEAN_NARROW_MAX_COLUMNS, OCEAN_ERR_ARG, "options: narrow_max_columns %lld must lie in [0, %d]",
             (long long)o->narrow_max_columns, OCEAN_NARROW_MAX_COLUMNS);
  OceanCheck(o->narrow_min_density >= 0.0 && o->narrow_min_density <= 1.0, OCEAN_ERR_ARG, "options: narrow_min_density %g must lie in [0, 1]", o->narrow_min_density);
  OceanCheck(o->narrow_max_entries >= 0, OCEAN_ERR_ARG, "options: narrow_max_entries %lld must not be negative", (long long)o->narrow_max_entries);
  OceanCheck(o->device_memory_limit >= 0, OCEAN_ERR_ARG, "options: device_memory_limit %lld must be 0 (the free memory) or a byte count", (long long)o->device_memory_limit);
  OceanCheck(o->reuse_map_max_bytes >= -1, OCEAN_ERR_ARG, "options: reuse_map_max_bytes %lld must be -1 (a quarter of the device's memory), 0 (never) or a byte count",
             (long long)o->reuse_map_max_bytes);
  return OCEAN_SUCCESS;
}

static OceanError OceanProfileValidate(const OceanDeviceProfile *p)
{
  OceanCheck(p->smem_per_block > 0 && p->smem_per_sm > 0, OCEAN_ERR_ARG, "device profile '%s': shared memory per block %lld and per SM %lld must be positive", p->name,
             (long long)p->smem_per_block, (long long)p->smem_per_sm);
  OceanCheck(p->warp_size > 0 && p->max_threads_per_block >= p->warp_size && p->max_threads_per_sm >= p->warp_size, OCEAN_ERR_ARG,
             "device profile '%s': warp size %d, threads per block %d and per SM %d are inconsistent", p->name, p->warp_size, p->max_threads_per_block, p->max_threads_per_sm);
  return OCEAN_SUCCESS;
}

/* ------------------------------------------------------------------------------------------------ bin table */

/* A normal configuration: one row per block, with smem bytes of shared memory. */
static void OceanBinNormal(int64_t smem, int threads, double load, OceanBinConfig *c)
{
  memset(c, 0, sizeof(*c));
  c->threads                = threads;
  c->rows_per_block         = 1;
  c->smem_bytes             = smem;
  c->hash_capacity          = smem / 12;      /* int32 column + fp64 value */
  c->hash_limit             = OceanHashLimit(c->hash_capacity, load);
  c->dense_columns          = smem * 8 / 65;  /* 8-byte value + 1 bitmap bit per column */
  c->symbolic_hash_capacity = smem / 4;       /* int32 column */
  c->symbolic_hash_limit    = OceanHashLimit(c->symbolic_hash_capacity, load);
  c->symbolic_dense_columns = smem * 8;       /* bitmap only */
}

/*
  The paper's configuration, read off the device: accumulation gets at most acc_smem_per_sm (128 KB) of an SM's
  shared memory; the largest normal kernel N4 takes half of it (two blocks per SM, full occupancy) with the most
  threads two blocks can have; N3..N0 each halve memory and threads.  SHORT packs several short rows into N0's
  resources, ESC handles rows with few products, LONG uses N4's resources plus global memory.
*/
OceanError OceanBinTableCompute(const OceanDeviceProfile *profile, const OceanOptions *opts, OceanBinConfig bins[OCEAN_NUM_BINS])
{
  const double load    = opts->hash_load;
  const int    warp    = profile->warp_size;
  int64_t      budget  = OceanMin64(opts->acc_smem_per_sm, profile->smem_per_sm);
  int64_t      smem4   = OceanMin64(budget / 2, profile->smem_per_block);
  int          threads = profile->max_threads_per_block < profile->max_threads_per_sm / 2 ? profile->max_threads_per_block : profile->max_threads_per_sm / 2;
  int          b, rpb;

  memset(bins, 0, sizeof(OceanBinConfig) * OCEAN_NUM_BINS);
  for (b = OCEAN_BIN_N0; b <= OCEAN_BIN_N4; b++) {
    int shift = OCEAN_BIN_N4 - b;
    int t     = threads >> shift;
    OceanBinNormal(smem4 >> shift, t < warp ? warp : t, load, &bins[b]); /* a block is at least one warp */
  }
  OceanCheck(bins[OCEAN_BIN_N0].hash_limit >= 1 && bins[OCEAN_BIN_N0].dense_columns >= 1, OCEAN_ERR_ARG,
             "device profile '%s' with acc_smem_per_sm %lld leaves the smallest configuration %lld bytes of shared memory: too small for an accumulator", profile->name,
             (long long)opts->acc_smem_per_sm, (long long)bins[OCEAN_BIN_N0].smem_bytes);

  /* SHORT: 8 rows share N0's block; fewer when a row's hash would admit less than a warp of nonzeros */
  bins[OCEAN_BIN_SHORT] = bins[OCEAN_BIN_N0];
  for (rpb = 8;; rpb /= 2) {
    OceanBinConfig *c         = &bins[OCEAN_BIN_SHORT];
    c->rows_per_block         = rpb;
    c->hash_capacity          = c->smem_bytes / rpb / 12;
    c->hash_limit             = OceanHashLimit(c->hash_capacity, load);
    c->symbolic_hash_capacity = c->smem_bytes / rpb / 4;
    c->symbolic_hash_limit    = OceanHashLimit(c->symbolic_hash_capacity, load);
    c->dense_columns = c->symbolic_dense_columns = 0; /* hash only */
    if (c->hash_limit >= warp || rpb == 1) break;
  }

  /* ESC: 64 threads, 4 rows of at most 32 products or 2 rows of at most 64, (column, value) per product */
  bins[OCEAN_BIN_ESC4].threads        = 64;
  bins[OCEAN_BIN_ESC4].rows_per_block = 4;
  bins[OCEAN_BIN_ESC4].max_products   = 32;
  bins[OCEAN_BIN_ESC2].threads        = 64;
  bins[OCEAN_BIN_ESC2].rows_per_block = 2;
  bins[OCEAN_BIN_ESC2].max_products   = 64;
  for (b = OCEAN_BIN_ESC4; b <= OCEAN_BIN_ESC2; b++) bins[b].smem_bytes = bins[b].rows_per_block * bins[b].max_products * 12;

  /* LONG: N4's threads, accumulating in global memory.  Dense when the row's span fits a bitmap in the shared memory
     a block may opt in to (values in a global array per block: no probing, no table to clear, output in column order,
     so no sort), else a hash table in global memory whose capacity follows the row (N4's is only the minimum).  The
     launch gives the bitmap only the bytes of the widest dense row, so narrower products keep two blocks per SM; the
     whole opt-in memory takes R-MAT scale 20's 2^20 columns, whose rows otherwise need global hash tables of about
     nnz(C) entries and a sort of C. */
  bins[OCEAN_BIN_LONG]                        = bins[OCEAN_BIN_N4];
  bins[OCEAN_BIN_LONG].smem_bytes             = OceanMax64(profile->smem_per_block - OCEAN_LONG_STATIC_SMEM, bins[OCEAN_BIN_N4].smem_bytes);
  bins[OCEAN_BIN_LONG].dense_columns          = bins[OCEAN_BIN_LONG].smem_bytes * 8;
  bins[OCEAN_BIN_LONG].symbolic_dense_columns = bins[OCEAN_BIN_LONG].smem_bytes * 8;

  /* NARROW: a value and a seen flag per column of B for every warp of a row's team (the team's size follows A's
     rows); described here for its smallest block of eight one-warp teams */
  bins[OCEAN_BIN_NARROW].threads                = 8 * warp;
  bins[OCEAN_BIN_NARROW].rows_per_block         = 8;
  bins[OCEAN_BIN_NARROW].smem_bytes             = 8 * OCEAN_NARROW_MAX_COLUMNS * (int64_t)(sizeof(double) + 1);
  bins[OCEAN_BIN_NARROW].dense_columns          = OCEAN_NARROW_MAX_COLUMNS;
  bins[OCEAN_BIN_NARROW].symbolic_dense_columns = OCEAN_NARROW_MAX_COLUMNS;
  return OCEAN_SUCCESS;
}

/* ------------------------------------------------------------------------------------------------ context */

OceanError OceanContextCreate(OceanBackend backend, const OceanDeviceProfile *profile, OceanContext *ctx)
{
  return OceanContextCreateOnDevice(backend, 0, profile, ctx);
}

OceanError OceanContextCreateOnDevice(OceanBackend backend, int device, const OceanDeviceProfile *profile, OceanContext *ctx)
{
  OceanContext c;

  OceanCheck(ctx, OCEAN_ERR_ARG, "OceanContextCreate: NULL output pointer");
  *ctx = NULL;
  OceanCheck(backend == OCEAN_BACKEND_CPU || backend == OCEAN_BACKEND_CUDA, OCEAN_ERR_ARG, "OceanContextCreate: unknown backend %d", (int)backend);
  OceanCheck(device >= 0, OCEAN_ERR_ARG, "OceanContextCreate: device %d must be >= 0", device);
  if (backend == OCEAN_BACKEND_CUDA) {
    int ndev = 0;
    if (OceanCudaCompiled()) (void)OceanCudaDeviceCount(&ndev);
    OceanCheck(ndev > 0, OCEAN_ERR_NOT_AVAILABLE, "OceanContextCreate: no CUDA device (CUDA backend %s, %d device(s) visible); use OCEAN_BACKEND_CPU",
               OceanCudaCompiled() ? "compiled" : "not compiled", ndev);
    OceanCheck(device < ndev, OCEAN_ERR_ARG, "OceanContextCreate: CUDA device %d requested, %d visible (0 to %d)", device, ndev, ndev - 1);
  }
  if (profile) OceanCall(OceanProfileValidate(profile));

  OceanCall(OceanCalloc(1, &c, "OceanContextCreate: context"));
  c->backend     = backend;
  c->cuda_device = -1; /* set by the CUDA setup */
  if (profile) c->profile = *profile;
  else OceanDeviceProfileDefault(&c->profile);
  c->profile.name[sizeof(c->profile.name) - 1] = 0;
  OceanOptionsDefault(&c->options);
  {
    OceanError err = backend == OCEAN_BACKEND_CUDA ? OceanCudaContextSetup(c, device, profile) : OCEAN_SUCCESS; /* the device's own profile unless given */
    if (!err) err = OceanBinTableCompute(&c->profile, &c->options, c->bins);
    if (err) {
      OceanCudaContextTeardown(c);
      free(c);
      return err;
    }
  }
  *ctx = c;
  return OCEAN_SUCCESS;
}

OceanError OceanContextDestroy(OceanContext *ctx)
{
  int i;

  if (!ctx || !*ctx) return OCEAN_SUCCESS;
  for (i = 0; i < OCEAN_SKETCH_CACHE_SIZE; i++) OceanFree((*ctx)->cache[i].sketches);
  OceanCudaContextTeardown(*ctx);
  OceanWorkspacesDestroy(&(*ctx)->ws, (*ctx)->nws);
  OceanFree(*ctx);
  return OCEAN_SUCCESS;
}

OceanError OceanContextSetOptions(OceanContext ctx, const OceanOptions *opts)
{
  OceanBinConfig bins[OCEAN_NUM_BINS];

  OceanCheck(ctx && opts, OCEAN_ERR_ARG, "OceanContextSetOptions: NULL argument");
  OceanCall(OceanOptionsValidate(opts));
  OceanCall(OceanBinTableCompute(&ctx->profile, opts, bins));
  ctx->options = *opts;
  memcpy(ctx->bins, bins, sizeof(bins));
  ctx->options_state++;
  /* workspaces were sized from the old bin table */
  OceanWorkspacesDestroy(&ctx->ws, ctx->nws);
  ctx->nws = 0;
  return OCEAN_SUCCESS;
}

OceanError OceanContextGetOptions(OceanContext ctx, OceanOptions *opts)
{
  OceanCheck(ctx && opts, OCEAN_ERR_ARG, "OceanContextGetOptions: NULL argument");
  *opts = ctx->options;
  return OCEAN_SUCCESS;
}

OceanError OceanContextGetProfile(OceanContext ctx, OceanDeviceProfile *profile)
{
  OceanCheck(ctx && profile, OCEAN_ERR_ARG, "OceanContextGetProfile: NULL argument");
  *profile = ctx->profile;
  return OCEAN_SUCCESS;
}

OceanError OceanContextGetBackend(OceanContext ctx, OceanBackend *backend)
{
  OceanCheck(ctx && backend, OCEAN_ERR_ARG, "OceanContextGetBackend: NULL argument");
  *backend = ctx->backend;
  return OCEAN_SUCCESS;
}

OceanError OceanContextGetDevice(OceanContext ctx, int *device)
{
  OceanCheck(ctx && device, OCEAN_ERR_ARG, "OceanContextGetDevice: NULL argument");
  *device = ctx->cuda_device;
  return OCEAN_SUCCESS;
}

OceanError OceanContextGetBinConfig(OceanContext ctx, OceanBin bin, OceanBinConfig *cfg)
{
  OceanCheck(ctx && cfg, OCEAN_ERR_ARG, "OceanContextGetBinConfig: NULL argument");
  OceanCheck(bin >= 0 && bin < OCEAN_NUM_BINS, OCEAN_ERR_ARG, "OceanContextGetBinConfig: bin %d is not in [0, %d)", (int)bin, OCEAN_NUM_BINS);
  *cfg = ctx->bins[bin];
  return OCEAN_SUCCESS;
}

OceanError OceanContextGetSketchCounts(OceanContext ctx, int64_t *built, int64_t *reused)
{
  OceanCheck(ctx, OCEAN_ERR_ARG, "OceanContextGetSketchCounts: NULL context");
  if (built) *built = ctx->sketches_built;
  if (reused) *reused = ctx->sketches_reused;
  return OCEAN_SUCCESS;
}

OceanError OceanContextSetPhaseCallback(OceanContext ctx, OceanPhaseCallback callback, void *user)
{
  OceanCheck(ctx, OCEAN_ERR_ARG, "OceanContextSetPhaseCallback: NULL context");
  ctx->phase_callback = callback;
  ctx->phase_user     = user;
  return OCEAN_SUCCESS;
}

double OceanPhaseBegin(OceanContext ctx, OceanPhase phase)
{
  if (ctx->phase_callback) ctx->phase_callback(ctx->phase_user, phase, 1, 0.0);
  return OceanWallTime();
}

double OceanPhaseEnd(OceanContext ctx, OceanPhase phase, double flops, double t0)
{
  double seconds = OceanWallTime() - t0;
  if (ctx->phase_callback) ctx->phase_callback(ctx->phase_user, phase, 0, flops);
  return seconds;
}

OceanError OceanContextGetWorkspaces(OceanContext ctx, OceanWorkspace **ws)
{
  int n = OceanMaxThreads();

  if (ctx->nws < n) {
    OceanWorkspacesDestroy(&ctx->ws, ctx->nws);
    ctx->nws = 0;
    OceanCall(OceanWorkspacesCreate(ctx->bins, n, &ctx->ws));
    ctx->nws = n;
  }
  *ws = ctx->ws;
  return OCEAN_SUCCESS;
}

/* ------------------------------------------------------------------------------------------------ sketch cache */

static int OceanSketchCacheMatch(const OceanSketchCacheEntry *e, const OceanCSR *B, int64_t b_nnz, int registers)
{
  return e->sketches && e->structure_id == B->structure_id && e->registers == registers && e->nrows == B->nrows && e->nnz == b_nnz;
}

int OceanSketchCacheFind(OceanSketchCacheEntry *cache, uint64_t *clock, const OceanCSR *B, int64_t b_nnz, int registers, OceanSketchCacheEntry **entry)
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

OceanError OceanContextGetSketches(OceanContext ctx, const OceanCSR *B, int registers, uint8_t **scratch, const uint8_t **sketches, int *reused)
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

/* ------------------------------------------------------------------------------------------------ CSR helpers */

void OceanCSRNormalize(const OceanCSR *in, OceanCSR *out)
{
  static const int64_t zero = 0;

  *out = *in;
  if (!out->rowptr && out->nrows == 0) out->rowptr = &zero;
}

/* The host operands of a standalone A*B query (estimates, exact counts): normalized, validated, and A's columns
   matching B's rows; caller names the entry point in the messages. */
OceanError OceanCSRPrepareAB(const char *caller, const OceanCSR *A_in, const OceanCSR *B_in, OceanCSR *A, OceanCSR *B)
{
  OceanCheck(A_in && B_in, OCEAN_ERR_ARG, "%s: NULL operand", caller);
  OceanCSRNormalize(A_in, A);
  OceanCSRNormalize(B_in, B);
  OceanCall(OceanCSRValidate(A, "A"));
  OceanCall(OceanCSRValidate(B, "B"));
  OceanCheck(A->ncols == B->nrows, OCEAN_ERR_ARG, "%s: A is %lld x %lld but B is %lld x %lld (A's columns must equal B's rows)", caller, (long long)A->nrows, (long long)A->ncols,
             (long long)B->nrows, (long long)B->ncols);
  return OCEAN_SUCCESS;
}

OceanError OceanCSRValidate(const OceanCSR *M, const char *name)
{
  int64_t i, nnz, bad = INT64_MAX;

  OceanCheck(M, OCEAN_ERR_ARG, "matrix %s is NULL", name);
  OceanCheck(M->nrows >= 0 && M->ncols >= 0, OCEAN_ERR_ARG, "matrix %s has negative sizes %lld x %lld", name, (long long)M->nrows, (long long)M->ncols);
  OceanCheck(M->ncols <= (int64_t)INT32_MAX, OCEAN_ERR_ARG, "matrix %s has %lld columns: column indices are int32", name, (long long)M->ncols);
  OceanCheck(M->rowptr, OCEAN_ERR_ARG, "matrix %s (%lld x %lld) has no row offsets", name, (long long)M->nrows, (long long)M->ncols);
  OceanCheck(M->rowptr[0] == 0, OCEAN_ERR_ARG, "matrix %s: row offsets must start at 0, not %lld", name, (long long)M->rowptr[0]);
  for (i = 0; i < M->nrows; i++) OceanCheck(M->rowptr[i + 1] >= M->rowptr[i], OCEAN_ERR_ARG, "matrix %s: row offsets decrease at row %lld", name, (long long)i);
  nnz = M->rowptr[M->nrows];
  OceanCheck(nnz == 0 || (M->colidx && M->values), OCEAN_ERR_ARG, "matrix %s has %lld nonzeros but no column indices or values", name, (long long)nnz);

#pragma omp parallel for schedule(static) reduction(min : bad)
  for (i = 0; i < M->nrows; i++) {
    int64_t t;
    for (t = M->rowptr[i]; t < M->rowptr[i + 1]; t++)
      if (M->colidx[t] < 0 || (int64_t)M->colidx[t] >= M->ncols) {
        if (i < bad) bad = i;
        break;
      }
  }
  if (bad != INT64_MAX) {
    int64_t t;
    for (t = M->rowptr[bad]; t < M->rowptr[bad + 1]; t++)
      if (M->colidx[t] < 0 || (int64_t)M->colidx[t] >= M->ncols) break;
    return OceanSetError(OCEAN_ERR_ARG, "matrix %s (%lld x %lld): row %lld has column index %d outside [0, %lld)", name, (long long)M->nrows, (long long)M->ncols, (long long)bad,
                         (int)M->colidx[t], (long long)M->ncols);
  }
  return OCEAN_SUCCESS;
}

static uint64_t OceanMix64(uint64_t z)
{
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t OceanDeriveStructureId(uint64_t a, uint64_t b, uint64_t tag)
{
  uint64_t id;

  if (a == 0 || b == 0) return 0;
  id = OceanMix64(OceanMix64(a ^ tag) + b);
  return id ? id : 1;
}

/* ------------------------------------------------------------------------------------------------ CUDA fallbacks */

#ifndef OCEAN_HAVE_CUDA
int OceanCudaCompiled(void) { return 0; }

OceanError OceanCudaDeviceCount(int *count)
{
  OceanCheck(count, OCEAN_ERR_ARG, "OceanCudaDeviceCount: NULL argument");
  *count = 0;
  return OCEAN_SUCCESS;
}

OceanError OceanCudaDeviceProfile(int device, OceanDeviceProfile *profile)
{
  return OceanSetError(OCEAN_ERR_NOT_AVAILABLE, "OceanCudaDeviceProfile: device %d: the CUDA backend was not compiled in", device);
}
#endif
