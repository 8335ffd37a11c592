/* Device discovery for the CUDA backend: how many devices there are and the resources the binning is derived
   from.  Host-only CUDA runtime calls; no kernels here. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>
#include "ocean.h"

extern "C" int OceanCudaCompiled(void) { return 1; }

extern "C" OceanError OceanCudaDeviceCount(int *count)
{
  int n = 0;
  if (!count) return OCEAN_ERR_ARG;
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
  if (!profile) return OCEAN_ERR_ARG;
  OceanCudaDeviceCount(&count);
  if (device < 0 || device >= count) return OCEAN_ERR_NOT_AVAILABLE;
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return OCEAN_ERR_DEVICE;
  }
  memset(profile, 0, sizeof(*profile));
  /* the device name is at most 255 characters; ours keeps the first 63 */
  memcpy(profile->name, prop.name, sizeof(profile->name) - 1);
  profile->name[sizeof(profile->name) - 1] = 0;
  profile->smem_per_block        = (int64_t)prop.sharedMemPerBlockOptin;
  profile->smem_per_sm           = (int64_t)prop.sharedMemPerMultiprocessor;
  profile->num_sms               = prop.multiProcessorCount;
  profile->warp_size             = prop.warpSize;
  profile->max_threads_per_block = prop.maxThreadsPerBlock;
  profile->max_threads_per_sm    = prop.maxThreadsPerMultiProcessor;
  return OCEAN_SUCCESS;
}
