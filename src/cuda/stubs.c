/*
  stubs.c - the CUDA backend when it is not compiled in: the device queries of the public API say so, and the
  backend's table refuses every context.
*/
#include "core/backend.h"

#ifndef OCEAN_HAVE_CUDA
int OceanCudaCompiled(void)
{
  return 0;
}

OceanError OceanCudaDeviceCount(int *count)
{
  OceanCheck(count, OCEAN_ERR_ARG, "OceanCudaDeviceCount: NULL argument");
  *count = 0;
  return OCEAN_SUCCESS;
}

OceanError OceanCudaDeviceProfile(int device, OceanDeviceProfile *profile)
{
  (void)profile;
  return OceanSetError(OCEAN_ERR_NOT_AVAILABLE,
                       "OceanCudaDeviceProfile: device %d: the CUDA backend was not compiled in", device);
}

static OceanError OceanCudaProbe(int device)
{
  (void)device;
  return OceanSetError(
    OCEAN_ERR_NOT_AVAILABLE,
    "OceanContextCreate: no CUDA device (CUDA backend not compiled, 0 device(s) visible); use OCEAN_BACKEND_CPU");
}

const OceanBackendOps OceanCudaBackendOps = {.name = "cuda", .probe = OceanCudaProbe};
#endif
