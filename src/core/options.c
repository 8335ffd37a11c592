/*
  options.c - defaults and checks of the options and the device profile, and the bin table (the kernel
  configurations) they give.
*/
#include "core/analysis.h"
#include "core/sketch.h"
#include <stdio.h>

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
  opts->small_bound          = (int64_t)1 << 25;
  opts->bound_factor         = 8;
  opts->one_pass_exact       = 1;
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
  opts->device_timers        = 0; /* two event records a phase: 6% of a small numeric-only call (H100) */
  opts->device_memory_limit  = 0;
  opts->reuse_map_max_bytes  = -1;
  opts->heavy                = OCEAN_HEAVY_AUTO;
  opts->heavy_min_span       = (int64_t)1 << 15;
}

OceanError OceanOptionsValidate(const OceanOptions *o)
{
  OceanCheck(o->workflow >= OCEAN_WORKFLOW_AUTO && o->workflow <= OCEAN_WORKFLOW_NARROW, OCEAN_ERR_ARG,
             "options: workflow %d is not AUTO (-1), UPPER_BOUND, ESTIMATE, EXACT or NARROW", (int)o->workflow);
  OceanCheck(o->hll_registers == 0 || OceanSketchRegistersValid(o->hll_registers), OCEAN_ERR_ARG,
             "options: hll_registers %d must be 0 or a power of two in [%d, %d]", o->hll_registers,
             OCEAN_HLL_MIN_REGISTERS, OCEAN_HLL_MAX_REGISTERS);
  OceanCheck(o->estimate_coefficient >= 0.0, OCEAN_ERR_ARG,
             "options: estimate_coefficient %g must be 0 (the paper's rule) or positive", o->estimate_coefficient);
  OceanCheck(o->sample_fraction >= 0.0 && o->sample_fraction <= 1.0, OCEAN_ERR_ARG,
             "options: sample_fraction %g must lie in [0, 1]", o->sample_fraction);
  OceanCheck(o->device_timers == 0 || o->device_timers == 1, OCEAN_ERR_ARG,
             "options: device_timers %d must be 0 or 1", o->device_timers);
  OceanCheck(o->small_bound >= 0, OCEAN_ERR_ARG, "options: small_bound %lld must be 0 (never) or positive",
             (long long)o->small_bound);
  OceanCheck(o->one_pass_exact == 0 || o->one_pass_exact == 1, OCEAN_ERR_ARG,
             "options: one_pass_exact %d must be 0 or 1", o->one_pass_exact);
  OceanCheck(o->bound_factor >= 0 && o->bound_factor <= 1024, OCEAN_ERR_ARG,
             "options: bound_factor %lld must lie in [0, 1024] (0: route by the upper bound itself)",
             (long long)o->bound_factor);
  OceanCheck(o->sample_min >= 0 && o->sample_max >= o->sample_min, OCEAN_ERR_ARG,
             "options: sample_min %lld and sample_max %lld must satisfy 0 <= min <= max", (long long)o->sample_min,
             (long long)o->sample_max);
  OceanCheck(o->hash_load > 0.0 && o->hash_load <= 1.0, OCEAN_ERR_ARG, "options: hash_load %g must lie in (0, 1]",
             o->hash_load);
  OceanCheck(o->acc_smem_per_sm > 0, OCEAN_ERR_ARG, "options: acc_smem_per_sm %lld must be positive",
             (long long)o->acc_smem_per_sm);
  OceanCheck(o->max_output_nnz >= 0, OCEAN_ERR_ARG, "options: max_output_nnz %lld must not be negative",
             (long long)o->max_output_nnz);
  OceanCheck(o->narrow_max_columns >= 0 && o->narrow_max_columns <= OCEAN_NARROW_MAX_COLUMNS, OCEAN_ERR_ARG,
             "options: narrow_max_columns %lld must lie in [0, %d]", (long long)o->narrow_max_columns,
             OCEAN_NARROW_MAX_COLUMNS);
  OceanCheck(o->narrow_min_density >= 0.0 && o->narrow_min_density <= 1.0, OCEAN_ERR_ARG,
             "options: narrow_min_density %g must lie in [0, 1]", o->narrow_min_density);
  OceanCheck(o->narrow_max_entries >= 0, OCEAN_ERR_ARG, "options: narrow_max_entries %lld must not be negative",
             (long long)o->narrow_max_entries);
  OceanCheck(o->device_memory_limit >= 0, OCEAN_ERR_ARG,
             "options: device_memory_limit %lld must be 0 (the free memory) or a byte count",
             (long long)o->device_memory_limit);
  OceanCheck(
    o->reuse_map_max_bytes >= -1, OCEAN_ERR_ARG,
    "options: reuse_map_max_bytes %lld must be -1 (a quarter of the device's memory), 0 (never) or a byte count",
    (long long)o->reuse_map_max_bytes);
  OceanCheck(o->heavy == OCEAN_HEAVY_AUTO || o->heavy == OCEAN_HEAVY_OFF || o->heavy == OCEAN_HEAVY_MULTISPLIT,
             OCEAN_ERR_ARG, "options: heavy %d is not AUTO (0), OFF (1) or MULTISPLIT (2)", (int)o->heavy);
  OceanCheck(o->heavy_min_span >= 0, OCEAN_ERR_ARG, "options: heavy_min_span %lld must be a column count >= 0",
             (long long)o->heavy_min_span);
  OceanCheck(o->heavy_threshold >= 0, OCEAN_ERR_ARG,
             "options: heavy_threshold %lld must be 0 (from the shared memory) or a product count",
             (long long)o->heavy_threshold);
  OceanCheck(o->heavy_chunk_columns >= 0 && !(o->heavy_chunk_columns & (o->heavy_chunk_columns - 1)), OCEAN_ERR_ARG,
             "options: heavy_chunk_columns %lld must be 0 (from the shared memory) or a power of two",
             (long long)o->heavy_chunk_columns);
  OceanCheck(o->heavy_chunks_per_level == 0 ||
               (o->heavy_chunks_per_level >= 2 && o->heavy_chunks_per_level <= OCEAN_HEAVY_MAX_CHUNKS_PER_LEVEL &&
                !(o->heavy_chunks_per_level & (o->heavy_chunks_per_level - 1))),
             OCEAN_ERR_ARG,
             "options: heavy_chunks_per_level %lld must be 0 (from the shared memory) or a power of two in [2, %d]",
             (long long)o->heavy_chunks_per_level, OCEAN_HEAVY_MAX_CHUNKS_PER_LEVEL);
  return OCEAN_SUCCESS;
}

OceanError OceanProfileValidate(const OceanDeviceProfile *p)
{
  OceanCheck(p->smem_per_block > 0 && p->smem_per_sm > 0, OCEAN_ERR_ARG,
             "device profile '%s': shared memory per block %lld and per SM %lld must be positive", p->name,
             (long long)p->smem_per_block, (long long)p->smem_per_sm);
  OceanCheck(p->warp_size > 0 && p->max_threads_per_block >= p->warp_size && p->max_threads_per_sm >= p->warp_size,
             OCEAN_ERR_ARG, "device profile '%s': warp size %d, threads per block %d and per SM %d are inconsistent",
             p->name, p->warp_size, p->max_threads_per_block, p->max_threads_per_sm);
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
  c->hash_capacity          = smem / 12; /* int32 column + fp64 value */
  c->hash_limit             = OceanHashLimit(c->hash_capacity, load);
  c->dense_columns          = smem * 8 / 65; /* 8-byte value + 1 bitmap bit per column */
  c->symbolic_hash_capacity = smem / 4;      /* int32 column */
  c->symbolic_hash_limit    = OceanHashLimit(c->symbolic_hash_capacity, load);
  c->symbolic_dense_columns = smem * 8; /* bitmap only */
}

/*
  The paper's configuration, read off the device: accumulation gets at most acc_smem_per_sm (128 KB) of an SM's
  shared memory; the largest normal kernel N4 takes half of it (two blocks per SM, full occupancy) with the most
  threads two blocks can have; N3..N0 each halve memory and threads.  SHORT packs several short rows into N0's
  resources, ESC handles rows with few products, LONG uses N4's resources plus global memory.
*/
OceanError OceanBinTableCompute(const OceanDeviceProfile *profile, const OceanOptions *opts,
                                OceanBinConfig bins[OCEAN_NUM_BINS])
{
  const double load   = opts->hash_load;
  const int    warp   = profile->warp_size;
  int64_t      budget = OceanMin64(opts->acc_smem_per_sm, profile->smem_per_sm);
  int64_t      smem4  = OceanMin64(budget / 2, profile->smem_per_block);
  int threads = profile->max_threads_per_block < profile->max_threads_per_sm / 2 ? profile->max_threads_per_block
                                                                                 : profile->max_threads_per_sm / 2;
  int b, rpb;

  memset(bins, 0, sizeof(OceanBinConfig) * OCEAN_NUM_BINS);
  for (b = OCEAN_BIN_N0; b <= OCEAN_BIN_N4; b++) {
    int shift = OCEAN_BIN_N4 - b;
    int t     = threads >> shift;
    OceanBinNormal(smem4 >> shift, t < warp ? warp : t, load, &bins[b]); /* a block is at least one warp */
  }
  OceanCheck(bins[OCEAN_BIN_N0].hash_limit >= 1 && bins[OCEAN_BIN_N0].dense_columns >= 1, OCEAN_ERR_ARG,
             "device profile '%s' with acc_smem_per_sm %lld leaves the smallest configuration %lld bytes of shared "
             "memory: too small for an accumulator",
             profile->name, (long long)opts->acc_smem_per_sm, (long long)bins[OCEAN_BIN_N0].smem_bytes);

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
  for (b = OCEAN_BIN_ESC4; b <= OCEAN_BIN_ESC2; b++)
    bins[b].smem_bytes = bins[b].rows_per_block * bins[b].max_products * 12;

  /* LONG: N4's threads, accumulating in global memory.  Dense when the row's span fits a bitmap in the shared memory
     a block may opt in to (values in a global array per block: no probing, no table to clear, output in column order,
     so no sort), else a hash table in global memory whose capacity follows the row (N4's is only the minimum).  The
     launch gives the bitmap only the bytes of the widest dense row, so narrower products keep two blocks per SM; the
     whole opt-in memory takes R-MAT scale 20's 2^20 columns, whose rows otherwise need global hash tables of about
     nnz(C) entries and a sort of C. */
  bins[OCEAN_BIN_LONG] = bins[OCEAN_BIN_N4];
  bins[OCEAN_BIN_LONG].smem_bytes =
    OceanMax64(profile->smem_per_block - OCEAN_LONG_STATIC_SMEM, bins[OCEAN_BIN_N4].smem_bytes);
  bins[OCEAN_BIN_LONG].dense_columns          = bins[OCEAN_BIN_LONG].smem_bytes * 8;
  bins[OCEAN_BIN_LONG].symbolic_dense_columns = bins[OCEAN_BIN_LONG].smem_bytes * 8;

  /* HEAVY (gMAGNUS, section III-D): all the shared memory a block may opt in to.  A hash of 12-byte entries at load
     1/2 gives tau (eq. 4), the products above which a row is heavy and the elements up to which a chunk is summed in
     that hash.  The last level's chunks are summed densely (an 8-byte value, a 2-byte place in the list of its
     outputs and a bitmap bit per column) by blocks of which four share an SM (a block per chunk: a whole SM's block
     would leave each SM one chunk at a time), floored to a power of two; the split kernel's histograms (a 4-byte count,
     a 4-byte local offset and an 8-byte global offset per chunk of each of the two rows a block's elements can touch)
     beside its staged elements give the chunks one level makes (eq. 6), floored to a power of two so that a column's
     chunk is a shift. */
  {
    OceanBinConfig *h         = &bins[OCEAN_BIN_HEAVY];
    const int64_t   smem      = OceanMax64(profile->smem_per_block - OCEAN_LONG_STATIC_SMEM, 64);
    const int64_t   dense_max = OceanMin64(OceanFloorPow2(smem * 8 / 81), 65536); /* a 2-byte place: 2^16 columns */
    const int64_t   dense_own =
      OceanFloorPow2(OceanMax64(profile->smem_per_sm / 4 - OCEAN_LONG_STATIC_SMEM, 64) * 8 / 81);
    const int64_t hist         = (smem - OCEAN_HEAVY_SPLIT_ELEMENTS * OCEAN_HEAVY_SPLIT_BYTES_PER_ELEMENT) / (2 * 16);
    const int     auto_by_span = opts->heavy == OCEAN_HEAVY_AUTO && opts->heavy_threshold == 0; /* no least products */
    int64_t       tau;

    h->threads                = OceanMin64(profile->max_threads_per_block, 512);
    h->rows_per_block         = 1;
    h->smem_bytes             = smem;
    h->hash_capacity          = smem / 12;
    h->symbolic_hash_capacity = smem / 12; /* the same chunks in both passes */
    tau                       = OceanHashLimit(h->hash_capacity, 0.5);
    if (opts->heavy_threshold > 0) tau = OceanMin64(tau, opts->heavy_threshold);
    h->hash_limit = h->symbolic_hash_limit = tau;
    /* auto without a threshold: every row that would take LONG spanning more than min_span (R-MAT 18/8's 11,107 such
       rows of at most tau products took 13 ms in LONG's windows of 8,192 columns and about 3 ms more in the
       multisplit, H100), and in the numeric pass every row of more than OCEAN_HEAVY_EARLY_PRODUCTS spanning as much */
    h->max_products   = opts->heavy == OCEAN_HEAVY_OFF ? INT64_MAX : auto_by_span ? 0 : tau;
    h->takes_all      = opts->heavy == OCEAN_HEAVY_MULTISPLIT;
    h->min_span       = opts->heavy == OCEAN_HEAVY_AUTO ? opts->heavy_min_span : 0;
    h->early_products = auto_by_span ? OCEAN_HEAVY_EARLY_PRODUCTS : INT64_MAX;
    OceanCheck(opts->heavy_chunk_columns <= dense_max, OCEAN_ERR_ARG,
               "options: heavy_chunk_columns %lld: a block's %lld bytes of shared memory hold dense chunks of at most "
               "%lld columns",
               (long long)opts->heavy_chunk_columns, (long long)smem, (long long)dense_max);
    h->dense_columns = h->symbolic_dense_columns =
      opts->heavy_chunk_columns ? opts->heavy_chunk_columns : OceanMin64(dense_own, dense_max);
    h->chunks_per_level = opts->heavy_chunks_per_level
                          ? opts->heavy_chunks_per_level
                          : OceanMin64(OCEAN_HEAVY_MAX_CHUNKS_PER_LEVEL, OceanMax64(2, OceanFloorPow2(hist)));
  }

  /* NARROW: a value and a seen flag per column of B for every warp of a row's team (the team's size follows A's
     rows); described here for its smallest block of eight one-warp teams */
  bins[OCEAN_BIN_NARROW].threads                = 8 * warp;
  bins[OCEAN_BIN_NARROW].rows_per_block         = 8;
  bins[OCEAN_BIN_NARROW].smem_bytes             = 8 * OCEAN_NARROW_MAX_COLUMNS * (int64_t)(sizeof(double) + 1);
  bins[OCEAN_BIN_NARROW].dense_columns          = OCEAN_NARROW_MAX_COLUMNS;
  bins[OCEAN_BIN_NARROW].symbolic_dense_columns = OCEAN_NARROW_MAX_COLUMNS;
  return OCEAN_SUCCESS;
}

OceanError OceanSettingsCompute(const OceanDeviceProfile *profile, const OceanOptions *opts, OceanSettings *set)
{
  OceanSettings s;

  OceanCall(OceanOptionsValidate(opts));
  OceanCall(OceanBinTableCompute(profile, opts, s.bins));
  s.options        = *opts;
  s.warp_size      = profile->warp_size;
  s.smem_per_block = profile->smem_per_block;
  *set             = s;
  return OCEAN_SUCCESS;
}
