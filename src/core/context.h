/*
  context.h - the context every plan runs in: its backend (the table of core/backend.h and the backend's own state),
  the device profile, the default settings, the host sketch cache, the shared host transposes and the phase callback.
*/
#ifndef OCEAN_CORE_CONTEXT_H
#define OCEAN_CORE_CONTEXT_H

#include "core/analysis.h"
#include "core/sketch.h"
#include "core/transpose.h"

struct _p_OceanBackendOps;

struct _p_OceanContext {
  OceanBackend                     backend;
  const struct _p_OceanBackendOps *ops;
  void                            *backend_data; /* the backend's state: workspaces, the device context */
  int                              device;       /* -1 for a CPU context */
  OceanDeviceProfile               profile;
  OceanSettings                    set;       /* OceanContextSetOptions: for plans without options of their own */
  uint64_t                         set_state; /* bumped when set changes: those plans redo their symbolic phase */
  OceanSketchCacheEntry            cache[OCEAN_SKETCH_CACHE_SIZE];
  uint64_t                         cache_clock;
  int64_t                          sketches_built, sketches_reused;
  OceanHostTranspose              *transposes; /* shared by plans (core/transpose.h); empty when no plan holds one */
  int64_t                          transposes_built, transposes_shared;
  OceanPhaseCallback               phase_callback;
  void                            *phase_user;
};

/* Phase brackets: timing and the optional callback, from the calling thread.  End returns the seconds. */
double OceanPhaseBegin(OceanContext ctx, OceanPhase phase);
double OceanPhaseEnd(OceanContext ctx, OceanPhase phase, double flops, double t0);

/* The sketches of B for the given register count: from the cache when B.structure_id is nonzero and known,
   else built (into the cache, or into *scratch when the id is 0). */
OceanError OceanContextGetSketches(OceanContext ctx, const OceanCSR *B, int registers, uint8_t **scratch,
                                   const uint8_t **sketches, int *reused);
/* Raw estimates for every row of A*B; the sketches of B come from the context's cache. */
OceanError OceanSketchEstimateRows(OceanContext ctx, const OceanCSR *A, const OceanCSR *B, int registers,
                                   uint8_t **scratch, double *estimate, int *reused);

#endif
