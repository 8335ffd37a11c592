/*
  context.c - the context: its backend, profile, default settings, phase brackets and the host sketch cache.
*/
#include "core/backend.h"

/* ------------------------------------------------------------------------------------------------ context */

OceanError OceanContextCreateWith(const OceanBackendOps *ops, OceanBackend backend, int device,
                                  const OceanDeviceProfile *profile, OceanContext *ctx)
{
  OceanContext c;
  OceanOptions opts;
  OceanError   err;

  OceanCheck(ctx, OCEAN_ERR_ARG, "OceanContextCreate: NULL output pointer");
  *ctx = NULL;
  OceanCheck(ops, OCEAN_ERR_ARG, "OceanContextCreate: unknown backend %d", (int)backend);
  OceanCheck(device >= 0, OCEAN_ERR_ARG, "OceanContextCreate: device %d must be >= 0", device);
  if (ops->probe) OceanCall(ops->probe(device));
  if (profile) OceanCall(OceanProfileValidate(profile));

  OceanCall(OceanCalloc(1, &c, "OceanContextCreate: context"));
  c->backend = backend;
  c->ops     = ops;
  c->device  = -1; /* set by a device backend's setup */
  if (profile) c->profile = *profile;
  else OceanDeviceProfileDefault(&c->profile);
  c->profile.name[sizeof(c->profile.name) - 1] = 0;
  OceanOptionsDefault(&opts);
  err = ops->context_setup(c, device, profile); /* the device's own profile unless given */
  if (!err) err = OceanSettingsCompute(&c->profile, &opts, &c->set);
  if (err) {
    ops->context_teardown(c);
    free(c);
    return err;
  }
  *ctx = c;
  return OCEAN_SUCCESS;
}

OceanError OceanContextDestroy(OceanContext *ctx)
{
  int i;

  if (!ctx || !*ctx) return OCEAN_SUCCESS;
  for (i = 0; i < OCEAN_SKETCH_CACHE_SIZE; i++) OceanFree((*ctx)->cache[i].sketches);
  (*ctx)->ops->context_teardown(*ctx);
  OceanFree(*ctx);
  return OCEAN_SUCCESS;
}

OceanError OceanContextSetOptions(OceanContext ctx, const OceanOptions *opts)
{
  OceanCheck(ctx && opts, OCEAN_ERR_ARG, "OceanContextSetOptions: NULL argument");
  OceanCall(OceanSettingsCompute(&ctx->profile, opts, &ctx->set));
  ctx->set_state++;
  return OCEAN_SUCCESS;
}

OceanError OceanContextGetOptions(OceanContext ctx, OceanOptions *opts)
{
  OceanCheck(ctx && opts, OCEAN_ERR_ARG, "OceanContextGetOptions: NULL argument");
  *opts = ctx->set.options;
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
  *device = ctx->device;
  return OCEAN_SUCCESS;
}

OceanError OceanContextGetBinConfig(OceanContext ctx, OceanBin bin, OceanBinConfig *cfg)
{
  OceanCheck(ctx && cfg, OCEAN_ERR_ARG, "OceanContextGetBinConfig: NULL argument");
  OceanCheck(bin >= 0 && bin < OCEAN_NUM_BINS, OCEAN_ERR_ARG, "OceanContextGetBinConfig: bin %d is not in [0, %d)",
             (int)bin, OCEAN_NUM_BINS);
  *cfg = ctx->set.bins[bin];
  return OCEAN_SUCCESS;
}

OceanError OceanContextGetSketchCounts(OceanContext ctx, int64_t *built, int64_t *reused)
{
  OceanCheck(ctx, OCEAN_ERR_ARG, "OceanContextGetSketchCounts: NULL context");
  if (built) *built = ctx->sketches_built;
  if (reused) *reused = ctx->sketches_reused;
  return OCEAN_SUCCESS;
}

OceanError OceanContextGetTransposeCounts(OceanContext ctx, int64_t *built, int64_t *shared)
{
  OceanCheck(ctx, OCEAN_ERR_ARG, "OceanContextGetTransposeCounts: NULL context");
  if (built) *built = ctx->transposes_built;
  if (shared) *shared = ctx->transposes_shared;
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

/* ------------------------------------------------------------------------------------------------ device memory */

/* A context without device memory (the CPU backend) has none to report or trim: zeros and success. */
OceanError OceanContextGetDeviceMemory(OceanContext ctx, int64_t *in_use, int64_t *peak, int64_t *reserved,
                                       int64_t *cuda_mallocs)
{
  OceanCheck(ctx, OCEAN_ERR_ARG, "OceanContextGetDeviceMemory: NULL context");
  if (ctx->ops->memory_get) return ctx->ops->memory_get(ctx, in_use, peak, reserved, cuda_mallocs);
  if (in_use) *in_use = 0;
  if (peak) *peak = 0;
  if (reserved) *reserved = 0;
  if (cuda_mallocs) *cuda_mallocs = 0;
  return OCEAN_SUCCESS;
}

OceanError OceanContextResetDeviceMemoryPeak(OceanContext ctx)
{
  OceanCheck(ctx, OCEAN_ERR_ARG, "OceanContextResetDeviceMemoryPeak: NULL context");
  return ctx->ops->memory_reset_peak ? ctx->ops->memory_reset_peak(ctx) : OCEAN_SUCCESS;
}

OceanError OceanContextTrimDeviceMemory(OceanContext ctx)
{
  OceanCheck(ctx, OCEAN_ERR_ARG, "OceanContextTrimDeviceMemory: NULL context");
  return ctx->ops->memory_trim ? ctx->ops->memory_trim(ctx) : OCEAN_SUCCESS;
}

OceanError OceanContextSetDeviceMirrorLimit(OceanContext ctx, int64_t bytes)
{
  OceanCheck(ctx, OCEAN_ERR_ARG, "OceanContextSetDeviceMirrorLimit: NULL context");
  OceanCheck(bytes >= 0, OCEAN_ERR_ARG, "OceanContextSetDeviceMirrorLimit: a limit of %lld bytes (0: the default)",
             (long long)bytes);
  return ctx->ops->mirror_limit_set ? ctx->ops->mirror_limit_set(ctx, bytes) : OCEAN_SUCCESS;
}

OceanError OceanContextGetDeviceMirrors(OceanContext ctx, int64_t *bytes, int64_t *limit)
{
  OceanCheck(ctx, OCEAN_ERR_ARG, "OceanContextGetDeviceMirrors: NULL context");
  if (ctx->ops->mirrors_get) return ctx->ops->mirrors_get(ctx, bytes, limit);
  if (bytes) *bytes = 0;
  if (limit) *limit = 0;
  return OCEAN_SUCCESS;
}
