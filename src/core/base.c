/*
  base.c - errors (the thread-local message), failures inside OpenMP loops, memory, time and the names of enums.
*/
#include "core/base.h"
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

const char *OceanGetLastErrorMessage(void)
{
  return ocean_last_error;
}

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

/* clang-format 14 mangles the block under "#pragma omp critical(name)" */
/* clang-format off */
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
/* clang-format on */

OceanError OceanParallelReport(const OceanParallelStatus *st, const char *where)
{
  if (!st->failed) return OCEAN_SUCCESS;
  if (st->err == OCEAN_ERR_MEMORY)
    return OceanSetError(st->err, "%s: could not grow an accumulator workspace to %lld bytes (row %lld)", where,
                         (long long)st->bytes, (long long)st->row);
  if (st->err == OCEAN_ERR_STATE)
    return OceanSetError(
      st->err,
      "%s: row %lld of C does not have the structure of the symbolic phase although the operands' structure ids match",
      where, (long long)st->row);
  return OceanSetError(st->err, "%s: failed at row %lld", where, (long long)st->row);
}

/* ------------------------------------------------------------------------------------------------ memory */

static OceanError OceanBytes(size_t count, size_t size, const char *what, size_t *bytes)
{
  if (count == 0) count = 1; /* never ask malloc for 0 bytes: its result may be NULL */
  OceanCheck(count <= SIZE_MAX / size, OCEAN_ERR_MEMORY, "%s: %zu entries of %zu bytes overflow size_t", what, count,
             size);
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
  static const char *names[OCEAN_NUM_BINS] = {"empty", "esc4", "esc2", "short", "n0",    "n1",
                                              "n2",    "n3",   "n4",   "long",  "heavy", "narrow"};
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
  case OCEAN_ACC_MULTISPLIT: return "multisplit";
  }
  return "unknown";
}

const char *OceanHeavyModeName(OceanHeavyMode m)
{
  switch (m) {
  case OCEAN_HEAVY_AUTO: return "auto";
  case OCEAN_HEAVY_OFF: return "off";
  case OCEAN_HEAVY_MULTISPLIT: return "multisplit";
  }
  return "unknown";
}

const char *OceanPhaseName(OceanPhase phase)
{
  static const char *names[OCEAN_NUM_PHASES] = {"analysis", "estimate",  "symbolic", "numeric", "fallback",
                                                "compact",  "transpose", "upload",   "download"};
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
