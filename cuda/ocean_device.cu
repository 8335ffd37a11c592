/*
  ocean_device.cu - the CUDA device and its context: discovery (device count, the profile the binning is derived
  from), the memory pool (cached cudaMalloc blocks), the host-device copies (plain, staged through pinned chunks,
  small readbacks) and the phase timers.  Host-only CUDA runtime calls; no kernels here.
*/
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "ocean_cuda.h"
#include "ocean_launch.cuh"

/* ------------------------------------------------------------------------------------------------ discovery */

extern "C" int OceanCudaCompiled(void)
{
  return 1;
}

extern "C" OceanError OceanCudaDeviceCount(int *count)
{
  int n = 0;
  if (!count) return OceanSetError(OCEAN_ERR_ARG, "OceanCudaDeviceCount: NULL argument");
  /* No driver or no GPU is not an error for the caller: it means "zero devices". */
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    n = 0;
  }
  *count = n;
  return OCEAN_SUCCESS;
}

extern "C" OceanError OceanCudaDeviceProfile(int device, OceanDeviceProfile *profile)
{
  cudaDeviceProp prop;
  int            count = 0;
  if (!profile) return OceanSetError(OCEAN_ERR_ARG, "OceanCudaDeviceProfile: NULL argument");
  OceanCudaDeviceCount(&count);
  if (device < 0 || device >= count)
    return OceanSetError(OCEAN_ERR_NOT_AVAILABLE, "OceanCudaDeviceProfile: device %d: %d device(s) visible", device,
                         count);
  OCEAN_CUDA_TRY(cudaGetDeviceProperties(&prop, device));
  memset(profile, 0, sizeof(*profile));
  /* the device name is at most 255 characters; ours keeps the first 63 */
  memcpy(profile->name, prop.name, sizeof(profile->name) - 1);
  profile->name[sizeof(profile->name) - 1] = 0;
  profile->smem_per_block                  = (int64_t)prop.sharedMemPerBlockOptin;
  profile->smem_per_sm                     = (int64_t)prop.sharedMemPerMultiprocessor;
  profile->num_sms                         = prop.multiProcessorCount;
  profile->warp_size                       = prop.warpSize;
  profile->max_threads_per_block           = prop.maxThreadsPerBlock;
  profile->max_threads_per_sm              = prop.maxThreadsPerMultiProcessor;
  return OCEAN_SUCCESS;
}

/* ------------------------------------------------------------------------------------------------ wait trace */

static int     ocean_trace = -1; /* OCEAN_CUDA_TRACE, read at the first wait */
static double  ocean_trace_last, ocean_trace_section, ocean_trace_waited;
static int     ocean_trace_waits;
static int64_t ocean_waits; /* every wait, traced or not (OceanCudaWaits) */

extern "C" int64_t OceanCudaWaits(void)
{
  return ocean_waits;
}

static double OceanCudaTraceNow(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int OceanCudaTracing(void)
{
  if (ocean_trace < 0) {
    const char *e    = getenv("OCEAN_CUDA_TRACE");
    ocean_trace      = e && *e && strcmp(e, "0") ? 1 : 0;
    ocean_trace_last = ocean_trace_section = OceanCudaTraceNow();
  }
  return ocean_trace;
}

extern "C" void OceanCudaTraceWait(const char *where, double wait_began)
{
  double now;
  ocean_waits++;
  if (!OceanCudaTracing()) return;
  now = OceanCudaTraceNow();
  fprintf(stderr, "ocean-trace   %-34s host %8.1f us  wait %8.1f us\n", where, 1e6 * (wait_began - ocean_trace_last),
          1e6 * (now - wait_began));
  ocean_trace_waited += now - wait_began;
  ocean_trace_waits++;
  ocean_trace_last = now;
}

extern "C" void OceanCudaTraceMark(const char *what)
{
  double now;
  if (!OceanCudaTracing()) return;
  now = OceanCudaTraceNow();
  fprintf(stderr, "ocean-trace %s (section before: %.1f us, %d waits of %.1f us; host since the last wait %.1f us)\n",
          what, 1e6 * (now - ocean_trace_section), ocean_trace_waits, 1e6 * ocean_trace_waited,
          1e6 * (now - ocean_trace_last));
  ocean_trace_section = ocean_trace_last = now;
  ocean_trace_waited                     = 0;
  ocean_trace_waits                      = 0;
}

/* the time a wait begins, when traced */
static double OceanCudaWaitBegins(void)
{
  return OceanCudaTracing() ? OceanCudaTraceNow() : 0.0;
}

/* The host waits for the default stream's queued work; the wait is traced as where's. */
static OceanError OceanCudaWaitDefaultStream(const char *where)
{
  const double t0 = OceanCudaWaitBegins();
  OCEAN_CUDA_TRY(cudaStreamSynchronize(0));
  OceanCudaTraceWait(where, t0);
  return OCEAN_SUCCESS;
}

/* ------------------------------------------------------------------------------------------------ device context */

/* A pool block: cached after its first cudaMalloc, handed out again for a request of at most its size and not much
   less (OceanPoolBlockServes).  Sizes are rounded (OceanPoolBlockSize) so that repeated products with the same
   sizes hit the cache. */
typedef struct OceanPoolBlock {
  void                  *ptr;
  size_t                 size;
  int                    in_use;
  struct OceanPoolBlock *next;
} OceanPoolBlock;

struct _p_OceanCudaDevice {
  int              device;
  OceanPoolBlock  *blocks;
  int64_t          in_use, peak, reserved, mallocs;
  cudaEvent_t      ev0[OCEAN_CUDA_TIMERS], ev1[OCEAN_CUDA_TIMERS]; /* the timers' start and stop events */
  double          *timed[OCEAN_CUDA_TIMERS];                       /* where each stopped timer's seconds go */
  int              timers;                                         /* stopped timers not yet read */
  int              timing; /* OceanCudaTimersEnable: 0 makes Start and Stop free (the seconds 0) */
  void            *pinned;        /* staging buffer of OceanCudaReadback (cudaHostAlloc, mapped) */
  void            *pinned_device; /* ... its address on the device */
  size_t           pinned_size;
  unsigned char   *deferred; /* OceanCudaReadbackDeferred's copies (cudaMallocHost, OCEAN_CUDA_DEFERRED_BYTES) */
  size_t           deferred_used;
  int              deferred_queued; /* copies queued since the last OceanCudaTimersRead, each to deliver: */
  struct {
    size_t at, bytes; /* its place in deferred */
    void  *dst;       /* where OceanCudaTimersRead copies it */
  } deferred_copy[OCEAN_CUDA_DEFERRED_COPIES];
  void            *staging[2];      /* the chunks of the staged copies (cudaMallocHost, OCEAN_STAGING_CHUNK each) */
  cudaEvent_t      staged[2];       /* the last copy out of / into each chunk */
  OceanCudaReclaim reclaim;         /* frees the owner's cached device memory when cudaMalloc fails (optional) */
  void            *reclaim_user;
  cudaStream_t     side[OCEAN_CUDA_SIDE_STREAMS]; /* OceanCudaForkStreams' streams (made at its first call) */
  cudaEvent_t      fork, joins[OCEAN_CUDA_SIDE_STREAMS];
  int              sides;
};

#define OCEAN_STAGING_CHUNK ((size_t)16 << 20)
#define OCEAN_STAGING_MIN   ((size_t)4 << 20)

/* ------------------------------------------------------------------------------------------------ side streams */

static OceanError OceanCudaSideStreamsMake(OceanCudaDevice dev)
{
  if (dev->sides) return OCEAN_SUCCESS;
  OCEAN_CUDA_TRY(cudaEventCreateWithFlags(&dev->fork, cudaEventDisableTiming));
  for (int k = 0; k < OCEAN_CUDA_SIDE_STREAMS; k++) {
    /* non-blocking: they wait for the default stream only where fork says so */
    OCEAN_CUDA_TRY(cudaStreamCreateWithFlags(&dev->side[k], cudaStreamNonBlocking));
    OCEAN_CUDA_TRY(cudaEventCreateWithFlags(&dev->joins[k], cudaEventDisableTiming));
  }
  dev->sides = 1;
  return OCEAN_SUCCESS;
}

OceanError OceanCudaForkStreams(OceanCudaDevice dev, int count, cudaStream_t *streams)
{
  OceanError err;

  if (count < 1 || count > OCEAN_CUDA_SIDE_STREAMS)
    return OceanSetError(OCEAN_ERR_ARG, "side streams: %d asked for, 1 to %d allowed", count, OCEAN_CUDA_SIDE_STREAMS);
  if ((err = OceanCudaSideStreamsMake(dev))) return err;
  OCEAN_CUDA_TRY(cudaEventRecord(dev->fork, 0));
  for (int k = 0; k < count; k++) {
    OCEAN_CUDA_TRY(cudaStreamWaitEvent(dev->side[k], dev->fork, 0));
    streams[k] = dev->side[k];
  }
  return OCEAN_SUCCESS;
}

OceanError OceanCudaJoinStreams(OceanCudaDevice dev, int count)
{
  if (count < 1 || count > OCEAN_CUDA_SIDE_STREAMS || !dev->sides)
    return OceanSetError(OCEAN_ERR_ARG, "side streams: join of %d streams, %d made", count,
                         dev->sides ? OCEAN_CUDA_SIDE_STREAMS : 0);
  for (int k = 0; k < count; k++) {
    OCEAN_CUDA_TRY(cudaEventRecord(dev->joins[k], dev->side[k]));
    OCEAN_CUDA_TRY(cudaStreamWaitEvent(0, dev->joins[k], 0));
  }
  return OCEAN_SUCCESS;
}

extern "C" OceanError OceanCudaDeviceCreate(int device, OceanCudaDevice *dev)
{
  OceanCudaDevice d;
  int             count = 0;

  *dev = NULL;
  OceanCudaDeviceCount(&count);
  if (device < 0 || device >= count)
    return OceanSetError(OCEAN_ERR_NOT_AVAILABLE, "CUDA device %d: %d device(s) visible", device, count);
  OCEAN_CUDA_TRY(cudaSetDevice(device));
  d = (OceanCudaDevice)calloc(1, sizeof(*d));
  if (!d) return OceanSetError(OCEAN_ERR_MEMORY, "CUDA device context: out of host memory");
  d->device = device;
  d->timing = 1;
  for (int k = 0; k < OCEAN_CUDA_TIMERS; k++) {
    cudaError_t e = cudaEventCreate(&d->ev0[k]);
    if (e == cudaSuccess) e = cudaEventCreate(&d->ev1[k]);
    if (e != cudaSuccess) {
      for (int j = 0; j <= k; j++) {
        if (d->ev0[j]) cudaEventDestroy(d->ev0[j]);
        if (d->ev1[j]) cudaEventDestroy(d->ev1[j]);
      }
      free(d);
      return OceanCudaCheck(e, "CUDA device context: creating the timers' events");
    }
  }
  *dev = d;
  return OCEAN_SUCCESS;
}

extern "C" void OceanCudaDeviceDestroy(OceanCudaDevice *dev)
{
  OceanPoolBlock *b, *n;

  if (!dev || !*dev) return;
  for (b = (*dev)->blocks; b; b = n) {
    n = b->next;
    cudaFree(b->ptr);
    free(b);
  }
  if ((*dev)->pinned) cudaFreeHost((*dev)->pinned);
  if ((*dev)->deferred) cudaFreeHost((*dev)->deferred);
  for (int k = 0; k < 2; k++)
    if ((*dev)->staging[k]) {
      cudaEventSynchronize((*dev)->staged[k]);
      cudaEventDestroy((*dev)->staged[k]);
      cudaFreeHost((*dev)->staging[k]);
    }
  for (int k = 0; k < OCEAN_CUDA_TIMERS; k++) {
    cudaEventDestroy((*dev)->ev0[k]);
    cudaEventDestroy((*dev)->ev1[k]);
  }
  if ((*dev)->sides) {
    cudaEventDestroy((*dev)->fork);
    for (int k = 0; k < OCEAN_CUDA_SIDE_STREAMS; k++) {
      cudaEventDestroy((*dev)->joins[k]);
      cudaStreamDestroy((*dev)->side[k]);
    }
  }
  free(*dev);
  *dev = NULL;
}

/* Blocks up to OCEAN_POOL_SMALL bytes are powers of two (at least 512 bytes); larger ones multiples of a sixteenth of
   the enclosing power of two: at most 1/16 above the request.  The large blocks make the peak, and power-of-two
   rounding could double it (R-MAT 20/8: C and the slots of 3.6 G nonzeros did not fit 141 GB). */
#define OCEAN_POOL_SMALL ((size_t)1 << 20)
static size_t OceanPoolBlockSize(size_t bytes)
{
  size_t p = 512, grain;
  while (p < bytes) p *= 2;
  if (p <= OCEAN_POOL_SMALL) return p;
  grain = p / 16;
  return (bytes + grain - 1) / grain * grain;
}

/* Whether a cached block of `block` bytes serves a request rounded to `size`: a small one up to twice the size, a
   large one at most a quarter above it (no large block held for a much smaller request). */
static bool OceanPoolBlockServes(size_t block, size_t size)
{
  return block >= size && (size <= OCEAN_POOL_SMALL ? block <= 2 * size : block - size <= size / 4);
}

extern "C" OceanError OceanCudaAlloc(OceanCudaDevice dev, size_t bytes, void **d_ptr)
{
  OceanPoolBlock *b, *best = NULL;
  size_t          size;

  *d_ptr = NULL;
  if (bytes == 0) return OCEAN_SUCCESS;
  size = OceanPoolBlockSize(bytes);
  for (b = dev->blocks; b; b = b->next)
    if (!b->in_use && OceanPoolBlockServes(b->size, size) && (!best || b->size < best->size)) best = b;
  if (!best) {
    void        *p  = NULL;
    const double t0 = OceanCudaWaitBegins();
    cudaError_t  e  = cudaMalloc(&p, size);
    OceanCudaTraceWait("cudaMalloc (pool miss)", t0);
    if (e != cudaSuccess) { /* give the cached blocks back and try once more */
      OceanCudaPoolTrim(dev);
      e = cudaMalloc(&p, size);
    }
    if (e != cudaSuccess && dev->reclaim && dev->reclaim(dev->reclaim_user)) { /* then what the owner's caches held */
      OceanCudaPoolTrim(dev);
      e = cudaMalloc(&p, size);
    }
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      return OceanSetError(OCEAN_ERR_MEMORY, "CUDA pool: cudaMalloc of %zu bytes failed (%s); %lld bytes in use", size,
                           cudaGetErrorString(e), (long long)dev->in_use);
    }
    best = (OceanPoolBlock *)calloc(1, sizeof(*best));
    if (!best) {
      cudaFree(p);
      return OceanSetError(OCEAN_ERR_MEMORY, "CUDA pool: out of host memory");
    }
    best->ptr   = p;
    best->size  = size;
    best->next  = dev->blocks;
    dev->blocks = best;
    dev->reserved += (int64_t)size;
    dev->mallocs++;
  }
  best->in_use = 1;
  dev->in_use += (int64_t)best->size;
  if (dev->in_use > dev->peak) dev->peak = dev->in_use;
  *d_ptr = best->ptr;
  return OCEAN_SUCCESS;
}

extern "C" void OceanCudaFree(OceanCudaDevice dev, void *d_ptr)
{
  OceanPoolBlock *b;

  if (!d_ptr || !dev) return;
  for (b = dev->blocks; b; b = b->next)
    if (b->ptr == d_ptr) {
      b->in_use = 0;
      dev->in_use -= (int64_t)b->size;
      return;
    }
}

extern "C" void OceanCudaPoolSetReclaim(OceanCudaDevice dev, OceanCudaReclaim reclaim, void *user)
{
  dev->reclaim      = reclaim;
  dev->reclaim_user = user;
}

extern "C" OceanError OceanCudaDeviceMemory(OceanCudaDevice dev, int64_t *free_bytes, int64_t *total)
{
  size_t       f = 0, t = 0;
  const double t0 = OceanCudaWaitBegins();

  OCEAN_CUDA_TRY(cudaSetDevice(dev->device));
  OCEAN_CUDA_TRY(cudaMemGetInfo(&f, &t));
  OceanCudaTraceWait("cudaMemGetInfo", t0);
  if (free_bytes) *free_bytes = (int64_t)f;
  if (total) *total = (int64_t)t;
  return OCEAN_SUCCESS;
}

extern "C" void OceanCudaPoolStats(OceanCudaDevice dev, int64_t *in_use, int64_t *peak, int64_t *reserved,
                                   int64_t *cuda_mallocs)
{
  if (in_use) *in_use = dev->in_use;
  if (peak) *peak = dev->peak;
  if (reserved) *reserved = dev->reserved;
  if (cuda_mallocs) *cuda_mallocs = dev->mallocs;
}

extern "C" void OceanCudaPoolResetPeak(OceanCudaDevice dev)
{
  if (dev) dev->peak = dev->in_use;
}

extern "C" void OceanCudaPoolTrim(OceanCudaDevice dev)
{
  OceanPoolBlock **pb;

  if (!dev) return;
  pb = &dev->blocks;
  while (*pb) {
    if (!(*pb)->in_use) {
      OceanPoolBlock *f = *pb;
      *pb               = f->next;
      (void)cudaFree(f->ptr);
      dev->reserved -= (int64_t)f->size;
      free(f);
    } else pb = &(*pb)->next;
  }
  (void)cudaGetLastError();
}

extern "C" OceanError OceanCudaIsDevicePointer(const void *d_ptr, int *ok)
{
  cudaPointerAttributes a;

  *ok = 1;
  if (!d_ptr) return OCEAN_SUCCESS;
  if (cudaPointerGetAttributes(&a, d_ptr) != cudaSuccess) {
    (void)cudaGetLastError();
    *ok = 0;
    return OCEAN_SUCCESS;
  }
  *ok = a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
  return OCEAN_SUCCESS;
}

extern "C" OceanError OceanCudaUploadAt(void *d_dst, const void *src, size_t bytes, const char *where)
{
  const double t0 = OceanCudaWaitBegins();
  if (!bytes) return OCEAN_SUCCESS;
  OCEAN_CUDA_TRY(cudaMemcpy(d_dst, src, bytes, cudaMemcpyHostToDevice));
  OceanCudaTraceWait(where, t0);
  return OCEAN_SUCCESS;
}

extern "C" OceanError OceanCudaDownloadAt(void *dst, const void *d_src, size_t bytes, const char *where)
{
  const double t0 = OceanCudaWaitBegins();
  if (!bytes) return OCEAN_SUCCESS;
  OCEAN_CUDA_TRY(cudaMemcpy(dst, d_src, bytes, cudaMemcpyDeviceToHost));
  OceanCudaTraceWait(where, t0);
  return OCEAN_SUCCESS;
}

extern "C" OceanError OceanCudaCopyOnDeviceAt(void *d_dst, const void *d_src, size_t bytes, const char *where)
{
  if (!bytes) return OCEAN_SUCCESS;
  OCEAN_CUDA_TRY(cudaMemcpyAsync(d_dst, d_src, bytes, cudaMemcpyDeviceToDevice, 0));
  return OceanCudaWaitDefaultStream(where); /* the caller may hand d_dst to code on another stream at once */
}

/* Row offsets between cuSPARSE's int32 and the int64 of OceanDevCSR (narrowing: the caller checked that they fit). */
template <typename In, typename Out>
static __global__ void OceanOffsetsKernel(int64_t count, const In *__restrict__ in, Out *__restrict__ out)
{
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < count; i += (int64_t)gridDim.x * blockDim.x)
    out[i] = (Out)in[i];
}

extern "C" OceanError OceanCudaWidenOffsets(int64_t count, const int32_t *d_in, int64_t *d_out)
{
  if (count <= 0) return OCEAN_SUCCESS;
  OceanOffsetsKernel<<<OceanGrid(count, OCEAN_THREADS), OCEAN_THREADS>>>(count, d_in, d_out);
  OCEAN_CUDA_LAUNCHED("widening row offsets");
  return OCEAN_SUCCESS;
}

extern "C" OceanError OceanCudaNarrowOffsets(int64_t count, const int64_t *d_in, int32_t *d_out)
{
  if (count <= 0) return OCEAN_SUCCESS;
  OceanOffsetsKernel<<<OceanGrid(count, OCEAN_THREADS), OCEAN_THREADS>>>(count, d_in, d_out);
  OCEAN_CUDA_LAUNCHED("narrowing row offsets");
  return OceanCudaWaitDefaultStream(__func__); /* the caller may hand d_out to code on another stream at once */
}

static OceanError OceanStagingEnsure(OceanCudaDevice dev)
{
  for (int k = 0; k < 2; k++) {
    if (dev->staging[k]) continue;
    OCEAN_CUDA_TRY(cudaMallocHost(&dev->staging[k], OCEAN_STAGING_CHUNK));
    const cudaError_t e = cudaEventCreateWithFlags(&dev->staged[k], cudaEventDisableTiming);
    if (e != cudaSuccess) {
      cudaFreeHost(dev->staging[k]);
      dev->staging[k] = NULL;
      return OceanCudaCheck(e, "staging buffers: creating an event");
    }
  }
  return OCEAN_SUCCESS;
}

/* memcpy by the OpenMP threads, 1 MB pieces */
static void OceanParallelCopy(void *dst, const void *src, size_t n)
{
  const size_t  piece = (size_t)1 << 20;
  const int64_t np    = (int64_t)((n + piece - 1) / piece);
#pragma omp parallel for schedule(static) if (np > 1)
  for (int64_t j = 0; j < np; j++) {
    const size_t off = (size_t)j * piece;
    memcpy((char *)dst + off, (const char *)src + off, n - off < piece ? n - off : piece);
  }
}

extern "C" OceanError OceanCudaUploadStaged(OceanCudaDevice dev, void *d_dst, const void *src, size_t bytes)
{
  OceanError err;
  size_t     off, n;
  int        k;

  if (bytes < OCEAN_STAGING_MIN) return OceanCudaUpload(d_dst, src, bytes);
  if ((err = OceanStagingEnsure(dev))) return err;
  for (off = 0, k = 0; off < bytes; off += n, k ^= 1) {
    n = bytes - off < OCEAN_STAGING_CHUNK ? bytes - off : OCEAN_STAGING_CHUNK;
    OCEAN_CUDA_TRY(cudaEventSynchronize(dev->staged[k])); /* the chunk's previous copy is done */
    OceanParallelCopy(dev->staging[k], (const char *)src + off, n);
    OCEAN_CUDA_TRY(cudaMemcpyAsync((char *)d_dst + off, dev->staging[k], n, cudaMemcpyHostToDevice, 0));
    OCEAN_CUDA_TRY(cudaEventRecord(dev->staged[k], 0));
  }
  return OCEAN_SUCCESS;
}

extern "C" OceanError OceanCudaDownloadStaged(OceanCudaDevice dev, void *dst, const void *d_src, size_t bytes)
{
  const size_t chunk   = OCEAN_STAGING_CHUNK;
  const size_t nchunks = (bytes + chunk - 1) / chunk;
  OceanError   err;

  if (bytes < OCEAN_STAGING_MIN) return OceanCudaDownload(dst, d_src, bytes);
  if ((err = OceanStagingEnsure(dev))) return err;
  /* chunk i + 1 comes down while the host copies chunk i out */
  for (size_t i = 0; i <= nchunks; i++) {
    if (i < nchunks) {
      const int    k   = (int)(i & 1);
      const size_t off = i * chunk, n = bytes - off < chunk ? bytes - off : chunk;
      OCEAN_CUDA_TRY(cudaEventSynchronize(dev->staged[k]));
      OCEAN_CUDA_TRY(cudaMemcpyAsync(dev->staging[k], (const char *)d_src + off, n, cudaMemcpyDeviceToHost, 0));
      OCEAN_CUDA_TRY(cudaEventRecord(dev->staged[k], 0));
    }
    if (i > 0) {
      const int    k   = (int)((i - 1) & 1);
      const size_t off = (i - 1) * chunk, n = bytes - off < chunk ? bytes - off : chunk;
      OCEAN_CUDA_TRY(cudaEventSynchronize(dev->staged[k]));
      OceanParallelCopy((char *)dst + off, dev->staging[k], n);
    }
  }
  return OCEAN_SUCCESS;
}

/* The pinned staging buffer of the readbacks, grown to at least bytes. */
static OceanError OceanPinnedReserve(OceanCudaDevice dev, size_t bytes)
{
  size_t size = 4096;
  void  *p    = NULL;

  if (bytes <= dev->pinned_size) return OCEAN_SUCCESS;
  while (size < bytes) size *= 2;
  if (dev->pinned) cudaFreeHost(dev->pinned);
  dev->pinned      = NULL;
  dev->pinned_size = 0;
  OCEAN_CUDA_TRY(cudaHostAlloc(&p, size, cudaHostAllocMapped));
  dev->pinned      = p;
  dev->pinned_size = size;
  if (cudaHostGetDevicePointer(&dev->pinned_device, p, 0) != cudaSuccess) { /* then the readbacks copy */
    (void)cudaGetLastError();
    dev->pinned_device = NULL;
  }
  return OCEAN_SUCCESS;
}

extern "C" OceanError OceanCudaReadbackAt(OceanCudaDevice dev, void *dst, const void *d_src, size_t bytes,
                                          const char *where)
{
  OceanError err;

  if (!bytes) return OCEAN_SUCCESS;
  if ((err = OceanPinnedReserve(dev, bytes))) return err;
  OCEAN_CUDA_TRY(cudaMemcpyAsync(dev->pinned, d_src, bytes, cudaMemcpyDeviceToHost, 0));
  if ((err = OceanCudaWaitDefaultStream(where))) return err;
  memcpy(dst, dev->pinned, bytes);
  return OCEAN_SUCCESS;
}

struct OceanWords {
  const uint64_t *src[16];
};

/* words[k] = *w.src[k], written straight into the pinned buffer (mapped into the device's address space) */
__global__ void OceanKernelGatherWords(OceanWords w, int n, uint64_t *words)
{
  if ((int)threadIdx.x < n) words[threadIdx.x] = *w.src[threadIdx.x];
}

extern "C" OceanError OceanCudaReadbackWordsAt(OceanCudaDevice dev, int n, const void *const *d_src, void *const *dst,
                                               const char *where)
{
  OceanWords w;
  OceanError err;

  if (n < 0 || n > 16) return OceanSetError(OCEAN_ERR_ARG, "readback of %d words: 0 to 16 allowed", n);
  if (n == 0) return OCEAN_SUCCESS;
  if ((err = OceanPinnedReserve(dev, (size_t)n * sizeof(uint64_t)))) return err;
  if (dev->pinned_device) { /* one launch instead of a copy per word (H100: 9.7 against 13.9 us for four words, waits
                               included) */
    for (int k = 0; k < n; k++) w.src[k] = (const uint64_t *)d_src[k];
    OceanKernelGatherWords<<<1, 32>>>(w, n, (uint64_t *)dev->pinned_device);
    OCEAN_CUDA_TRY(cudaGetLastError());
  } else
    for (int k = 0; k < n; k++)
      OCEAN_CUDA_TRY(cudaMemcpyAsync((uint64_t *)dev->pinned + k, d_src[k], sizeof(uint64_t), cudaMemcpyDeviceToHost, 0));
  if ((err = OceanCudaWaitDefaultStream(where))) return err;
  for (int k = 0; k < n; k++) memcpy(dst[k], (uint64_t *)dev->pinned + k, sizeof(uint64_t));
  return OCEAN_SUCCESS;
}

/* Timers: events on the default stream, read at once (sync) or together by OceanCudaTimersRead, so that timing a
   phase does not stall the host between phases. */
extern "C" void OceanCudaTimersEnable(OceanCudaDevice dev, int on)
{
  dev->timing = on;
}

int OceanCudaTimersOn(OceanCudaDevice dev)
{
  return dev->timing;
}

extern "C" OceanError OceanCudaTimerStart(OceanCudaDevice dev)
{
  if (!dev->timing) return OCEAN_SUCCESS;
  if (dev->timers == OCEAN_CUDA_TIMERS) { /* all in use: read them first */
    OceanError err = OceanCudaTimersRead(dev);
    if (err) return err;
  }
  OCEAN_CUDA_TRY(cudaEventRecord(dev->ev0[dev->timers], 0));
  return OCEAN_SUCCESS;
}

extern "C" OceanError OceanCudaTimerStop(OceanCudaDevice dev, double *seconds, int sync)
{
  if (!dev->timing) {
    *seconds = 0;
    return OCEAN_SUCCESS;
  }
  OCEAN_CUDA_TRY(cudaEventRecord(dev->ev1[dev->timers], 0));
  dev->timed[dev->timers++] = seconds;
  return sync ? OceanCudaTimersRead(dev) : OCEAN_SUCCESS;
}

extern "C" OceanError OceanCudaTimersRead(OceanCudaDevice dev)
{
  const int n = dev->timers;
  double    t0;
  const int copies = dev->deferred_queued;

  dev->timers          = 0;
  dev->deferred_queued = 0;
  if (n == 0 && !copies) return OCEAN_SUCCESS;
  t0 = OceanCudaWaitBegins();
  /* deferred copies may follow the last timer on the stream */
  if (copies) OCEAN_CUDA_TRY(cudaStreamSynchronize(0));
  else OCEAN_CUDA_TRY(cudaEventSynchronize(dev->ev1[n - 1]));
  OceanCudaTraceWait("OceanCudaTimersRead", t0);
  for (int k = 0; k < copies; k++)
    memcpy(dev->deferred_copy[k].dst, dev->deferred + dev->deferred_copy[k].at, dev->deferred_copy[k].bytes);
  for (int k = 0; k < n; k++) {
    float ms = 0;
    OCEAN_CUDA_TRY(cudaEventElapsedTime(&ms, dev->ev0[k], dev->ev1[k]));
    *dev->timed[k] = 1e-3 * (double)ms;
  }
  return OCEAN_SUCCESS;
}

extern "C" OceanError OceanCudaReadbackDeferred(OceanCudaDevice dev, const void *d_src, size_t bytes, void *dst)
{
  int    k;
  size_t at;

  if (bytes > OCEAN_CUDA_DEFERRED_BYTES)
    return OceanSetError(OCEAN_ERR_ARG, "deferred readback of %zu bytes: at most %d", bytes, OCEAN_CUDA_DEFERRED_BYTES);
  if (!dev->deferred) OCEAN_CUDA_TRY(cudaMallocHost((void **)&dev->deferred, OCEAN_CUDA_DEFERRED_BYTES));
  k  = dev->deferred_queued;
  at = ((k ? dev->deferred_used : 0) + 15) / 16 * 16;
  if (k == OCEAN_CUDA_DEFERRED_COPIES || at + bytes > OCEAN_CUDA_DEFERRED_BYTES) { /* full: delivered first */
    OceanError err = OceanCudaTimersRead(dev);
    if (err) return err;
    k  = 0;
    at = 0;
  }
  OCEAN_CUDA_TRY(cudaMemcpyAsync(dev->deferred + at, d_src, bytes, cudaMemcpyDeviceToHost, 0));
  dev->deferred_copy[k].at    = at;
  dev->deferred_copy[k].bytes = bytes;
  dev->deferred_copy[k].dst   = dst;
  dev->deferred_used          = at + bytes;
  dev->deferred_queued        = k + 1;
  return OCEAN_SUCCESS;
}
