/*
  backends.c - the backends the library is built with and the public entry that gives a context one: the one place
  that names them all, so that the core (src/core) knows only the table of core/backend.h.
*/
#include "core/backend.h"

extern const OceanBackendOps OceanCpuBackendOps;
extern const OceanBackendOps OceanCudaBackendOps; /* src/cuda; without CUDA, its table refuses every context */

const OceanBackendOps *OceanBackendOpsGet(OceanBackend backend)
{
  switch (backend) {
  case OCEAN_BACKEND_CPU: return &OceanCpuBackendOps;
  case OCEAN_BACKEND_CUDA: return &OceanCudaBackendOps;
  }
  return NULL;
}

OceanError OceanContextCreateOnDevice(OceanBackend backend, int device, const OceanDeviceProfile *profile,
                                      OceanContext *ctx)
{
  return OceanContextCreateWith(OceanBackendOpsGet(backend), backend, device, profile, ctx);
}

OceanError OceanContextCreate(OceanBackend backend, const OceanDeviceProfile *profile, OceanContext *ctx)
{
  return OceanContextCreateOnDevice(backend, 0, profile, ctx);
}
