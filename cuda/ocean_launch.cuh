/*
  ocean_launch.cuh - host-side helpers of the .cu files: the CUDA error check, grid sizes, the grid-stride loop, pool
  storage for CUB, a device flag and the per-device opt-in of dynamic shared memory.  Included by .cu files only.
*/
#ifndef OCEAN_LAUNCH_CUH
#define OCEAN_LAUNCH_CUH

#include <cuda_runtime.h>
#include <mutex>
#include "ocean_cuda.h"

/* The one mapping of a failed CUDA runtime or CUB call (e != cudaSuccess) to an OceanError: OCEAN_ERR_DEVICE with
   the message "what: CUDA's reason", the runtime's last error cleared (it is reported here).  OCEAN_SUCCESS
   otherwise.  Out-of-memory is OCEAN_ERR_MEMORY only where the pool's cudaMalloc fails (OceanCudaAlloc). */
static inline OceanError OceanCudaCheck(cudaError_t e, const char *what)
{
  if (e == cudaSuccess) return OCEAN_SUCCESS;
  (void)cudaGetLastError();
  return OceanSetError(OCEAN_ERR_DEVICE, "%s: %s", what, cudaGetErrorString(e));
}

/* Returns the OceanError of a failed call from the calling function (the message names the call). */
#define OCEAN_CUDA_TRY(call) \
  do { \
    const OceanError e_ = OceanCudaCheck((call), #call); \
    if (e_) return e_; \
  } while (0)

/* The same after kernel launches: returns a launch error, the message naming what was launched. */
#define OCEAN_CUDA_LAUNCHED(what) \
  do { \
    const OceanError e_ = OceanCudaCheck(cudaGetLastError(), what); \
    if (e_) return e_; \
  } while (0)

#define OCEAN_THREADS  256
#define OCEAN_MAX_GRID (1 << 20)

/* Blocks for n items at per_block items a block: at least 1, at most OCEAN_MAX_GRID (grid-stride loops do the rest). */
static inline unsigned OceanGrid(int64_t n, int per_block)
{
  int64_t g = (n + per_block - 1) / per_block;
  if (g < 1) g = 1;
  if (g > OCEAN_MAX_GRID) g = OCEAN_MAX_GRID;
  return (unsigned)g;
}

/* Rows averaging a warp's worth of entries or more: kernels that walk a row's entries give it a warp (a thread per
   row would walk hundreds of entries one after another while most of the GPU idles). */
static inline bool OceanWideRows(int64_t nrows, int64_t nnz)
{
  return nrows > 0 && nnz >= 32 * nrows;
}

/* The streaming multiprocessors of the current device (0 when it cannot be read). */
static inline int OceanDeviceSMs()
{
  int device, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return sms;
}

#define OCEAN_FULL_MASK 0xffffffffu

/* The inclusive sum of x over the 32 lanes of a warp, every lane calling it (lane: its lane). */
template <typename T>
__device__ __forceinline__ T OceanWarpInclusiveSum(T x, int lane)
{
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const T y = __shfl_up_sync(OCEAN_FULL_MASK, x, d);
    if (lane >= d) x += y;
  }
  return x;
}

/* A warp turns a record of ncells counts (OceanHeavyCells) into their exclusive prefixes, the total at cell[ncells]. */
__device__ __forceinline__ void OceanWarpCellsPrefix(int32_t *cell, int64_t ncells, int lane)
{
  int32_t before = 0; /* a row of C has fewer than 2^31 entries */
  for (int64_t k0 = 0; k0 < ncells; k0 += 32) {
    const int64_t k    = k0 + lane;
    const int32_t c    = k < ncells ? cell[k] : 0;
    const int32_t incl = OceanWarpInclusiveSum(c, lane);
    if (k < ncells) cell[k] = before + incl - c;
    before += __shfl_sync(OCEAN_FULL_MASK, incl, 31);
  }
  if (lane == 0) cell[ncells] = before;
}

/* CUB temporary storage from the pool, two phases: the launcher calls its CUB routine once with d_temp NULL. */
struct OceanTemp {
  OceanCudaDevice dev;
  void           *ptr;
  explicit OceanTemp(OceanCudaDevice d) : dev(d), ptr(NULL) {}
  ~OceanTemp() { OceanCudaFree(dev, ptr); }
  OceanError get(size_t bytes) { return OceanCudaAlloc(dev, bytes ? bytes : 1, &ptr); }
};

/* An int in device memory, 0 at first, that kernels raise (a product outside C's known structure): read back after
   the launches, freed with the object. */
struct OceanDeviceFlag {
  OceanCudaDevice dev;
  int            *d;
  explicit OceanDeviceFlag(OceanCudaDevice v) : dev(v), d(NULL) {}
  ~OceanDeviceFlag() { OceanCudaFree(dev, d); }
  OceanError init(const char *what)
  {
    OceanError err = OceanCudaAlloc(dev, sizeof(int), (void **)&d);
    if (!err) err = OceanCudaCheck(cudaMemsetAsync(d, 0, sizeof(int), 0), what);
    return err;
  }
  OceanError read(int *value) const { return OceanCudaReadback(dev, value, d, sizeof(int)); }
};

/* The dynamic shared memory a kernel may opt into is an attribute of the kernel on each device: a launcher keeps one
   of these (static) per group of kernels and calls ensure(key, set, &value) before its launches.  set(&value) runs
   (cudaFuncSetAttribute) the first time on the current device and whenever key changed there; value is what it
   gave, kept per device.  A mutex makes it safe for threads driving devices at once; devices past
   OCEAN_OPTIN_DEVICES are set on every call. */
#define OCEAN_OPTIN_DEVICES 64
class OceanSmemOptin {
  std::mutex mutex_;
  int64_t    key_[OCEAN_OPTIN_DEVICES]   = {};
  int64_t    value_[OCEAN_OPTIN_DEVICES] = {};
  bool       set_[OCEAN_OPTIN_DEVICES]   = {};

public:
  template <typename Set>
  OceanError ensure(int64_t key, Set set, int64_t *value)
  {
    int        device = 0;
    OceanError err;
    OCEAN_CUDA_TRY(cudaGetDevice(&device));
    const bool                  kept = device >= 0 && device < OCEAN_OPTIN_DEVICES;
    std::lock_guard<std::mutex> lock(mutex_);
    if (kept && set_[device] && key_[device] == key) {
      *value = value_[device];
      return OCEAN_SUCCESS;
    }
    if ((err = set(value))) return err;
    if (kept) {
      key_[device]   = key;
      value_[device] = *value;
      set_[device]   = true;
    }
    return OCEAN_SUCCESS;
  }
};

/* Up to this many rows the bookkeeping between phases (scans, grouping rows by bin) runs in one block of
   OCEAN_SMALL_THREADS: one launch instead of CUB's several, which cost a small product more than their work. */
#define OCEAN_SMALL_ROWS    (1 << 15)
#define OCEAN_SMALL_THREADS 1024

/* Streams beside the default one, made once per device context, for independent launches (the accumulators' bins).
   Fork: the first count (at most OCEAN_CUDA_SIDE_STREAMS) wait for the default stream's work queued so far, and are
   returned in streams.  Join: the default stream's later work waits for what was queued on the first count. */
#define OCEAN_CUDA_SIDE_STREAMS 4
OceanError OceanCudaForkStreams(OceanCudaDevice dev, int count, cudaStream_t *streams);
OceanError OceanCudaJoinStreams(OceanCudaDevice dev, int count);
/* Whether the phase timers are on (OceanCudaTimersEnable). */
int OceanCudaTimersOn(OceanCudaDevice dev);

#define OCEAN_GRID_STRIDE(i, n) \
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (int64_t)gridDim.x * blockDim.x)

#endif
