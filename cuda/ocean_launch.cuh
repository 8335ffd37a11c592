/*
  ocean_launch.cuh - host-side launch helpers of the .cu files: grid sizes, the grid-stride loop and the check after
  a launch.  Included by .cu files only.
*/
#ifndef OCEAN_LAUNCH_CUH
#define OCEAN_LAUNCH_CUH

#include <cuda_runtime.h>
#include "ocean_cuda.h"

#define OCEAN_CUDA_LAUNCHED(what) \
  do { \
    cudaError_t e_ = cudaGetLastError(); \
    if (e_ != cudaSuccess) return OceanSetError(OCEAN_ERR_DEVICE, "%s: launch failed: %s (%s:%d)", what, cudaGetErrorString(e_), __FILE__, __LINE__); \
  } while (0)

#define OCEAN_THREADS 256
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
static inline bool OceanWideRows(int64_t nrows, int64_t nnz) { return nrows > 0 && nnz >= 32 * nrows; }

/* The streaming multiprocessors of the current device (0 when it cannot be read). */
static inline int OceanDeviceSMs()
{
  int device, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return sms;
}

#define OCEAN_FULL_MASK 0xffffffffu

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
    if (!err && cudaMemsetAsync(d, 0, sizeof(int), 0) != cudaSuccess) err = OceanSetError(OCEAN_ERR_DEVICE, "%s: %s", what, cudaGetErrorString(cudaGetLastError()));
    return err;
  }
  OceanError read(int *value) const { return OceanCudaReadback(dev, value, d, sizeof(int)); }
};

#define OCEAN_GRID_STRIDE(i, n) for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (int64_t)gridDim.x * blockDim.x)

#endif
