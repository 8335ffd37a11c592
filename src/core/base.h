/*
  base.h - what every file of the library uses: errors (a thread-local message), memory, threads, time, CSR checks
  and structure ids.  Names no backend.
*/
#ifndef OCEAN_CORE_BASE_H
#define OCEAN_CORE_BASE_H

#include "ocean.h"
#include "core/rules.h"
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#if defined(__GNUC__) || defined(__clang__)
#define OCEAN_THREAD_LOCAL __thread
#define OCEAN_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define OCEAN_UNLIKELY(x)  __builtin_expect(!!(x), 0)
#elif defined(_MSC_VER)
#define OCEAN_THREAD_LOCAL __declspec(thread)
#define OCEAN_PRINTF(f, a)
#define OCEAN_UNLIKELY(x) (x)
#else
#define OCEAN_THREAD_LOCAL _Thread_local
#define OCEAN_PRINTF(f, a)
#define OCEAN_UNLIKELY(x) (x)
#endif

/* ---------------------------------------------------------------------------------------------------------
   Errors: every failure goes through OceanSetError, which formats the thread-local message and returns err. */
OceanError OceanSetError(OceanError err, const char *fmt, ...) OCEAN_PRINTF(2, 3);

#define OceanCall(expr) \
  do { \
    OceanError ocean_call_err_ = (expr); \
    if (OCEAN_UNLIKELY(ocean_call_err_ != OCEAN_SUCCESS)) return ocean_call_err_; \
  } while (0)

#define OceanCheck(cond, err, ...) \
  do { \
    if (OCEAN_UNLIKELY(!(cond))) return OceanSetError((err), __VA_ARGS__); \
  } while (0)

/* Failures inside OpenMP loops: the worker cannot set the caller's thread-local message, so it records the first
   failure here and the calling thread reports it after the loop. */
typedef struct {
  int        failed;
  OceanError err;
  int64_t    row;
  int64_t    bytes;
} OceanParallelStatus;

int        OceanParallelFailed(OceanParallelStatus *st);
void       OceanParallelFail(OceanParallelStatus *st, OceanError err, int64_t row, int64_t bytes);
OceanError OceanParallelReport(const OceanParallelStatus *st, const char *where);

/* ---------------------------------------------------------------------------------------------------------
   Memory: never malloc(0) (a zero count gets one byte), overflow-checked sizes, messages naming the bytes. */
OceanError OceanMallocBytes(size_t count, size_t size, int zero, const char *what, void **ptr);
OceanError OceanReallocBytes(size_t count, size_t size, const char *what, void **ptr);
void       OceanFreePtr(void *pptr); /* frees *(void **)pptr and sets it to NULL */

#define OceanMalloc(n, p, what)  OceanMallocBytes((size_t)(n), sizeof(**(p)), 0, (what), (void **)(p))
#define OceanCalloc(n, p, what)  OceanMallocBytes((size_t)(n), sizeof(**(p)), 1, (what), (void **)(p))
#define OceanRealloc(n, p, what) OceanReallocBytes((size_t)(n), sizeof(**(p)), (what), (void **)(p))
#define OceanFree(p)             OceanFreePtr((void *)&(p))

/* ---------------------------------------------------------------------------------------------------------
   Threads and time (OpenMP when built with it). */
static inline int OceanMaxThreads(void)
{
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

static inline int OceanThreadNum(void)
{
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

/* Threads of the current parallel region (1 outside one). */
static inline int OceanTeamSize(void)
{
#ifdef _OPENMP
  return omp_get_num_threads();
#else
  return 1;
#endif
}

double OceanWallTime(void);

/* Rows per OpenMP work unit of the row kernels (schedule(dynamic, OCEAN_ROW_CHUNK)). */
#define OCEAN_ROW_CHUNK 64

/* ---------------------------------------------------------------------------------------------------------
   CSR helpers. */
/* Checks sizes, offsets and column ranges (the message names the matrix and the first bad row). */
OceanError OceanCSRValidate(const OceanCSR *M, const char *name);
/* A copy whose rowptr is never NULL (an empty matrix may come without one). */
void       OceanCSRNormalize(const OceanCSR *in, OceanCSR *out);
OceanError OceanCSRPrepareAB(const char *caller, const OceanCSR *A_in, const OceanCSR *B_in, OceanCSR *A, OceanCSR *B);
static inline int64_t OceanCSRNnz(const OceanCSR *M)
{
  return M->rowptr[M->nrows];
}
/* Structure id of something derived from one or two patterns (transpose, A*P); 0 when an input id is 0. */
uint64_t OceanDeriveStructureId(uint64_t a, uint64_t b, uint64_t tag);

#endif
