/*
  sketch.h - HyperLogLog sketches on the host (8-bit registers, one sketch per row of B, merged per row of A) and the
  least-recently-used cache routine that the host cache and a device cache share.
*/
#ifndef OCEAN_CORE_SKETCH_H
#define OCEAN_CORE_SKETCH_H

#include "core/base.h"

/* OCEAN_HLL_MIN_REGISTERS, OCEAN_HLL_MAX_REGISTERS: core/rules.h */
int    OceanSketchRegistersValid(int registers);
void   OceanSketchBuild(const OceanCSR *B, int registers, uint8_t *sketches); /* nrows(B) x registers bytes */
void   OceanSketchMergeRow(const OceanCSR *A, int64_t i, const uint8_t *sketches, int registers, uint8_t *merged);
double OceanSketchEstimate(const uint8_t *sketch, int registers);

#define OCEAN_SKETCH_CACHE_SIZE 8

typedef struct {
  uint64_t structure_id; /* 0: unused entry */
  int      registers;
  int64_t  nrows, nnz; /* checked too: a reused id with other sizes is a caller bug we do not want to crash on */
  uint8_t *sketches;   /* host or device memory, as the cache's owner keeps it */
  uint64_t last_use;
} OceanSketchCacheEntry;

/* The cache's lookup: 1 and the entry when B's sketches with this register count are there (its last use is
   bumped), else 0 and the least recently used entry to replace.  b_nnz: B's nonzeros (a device B's cannot be read
   off its rowptr). */
int OceanSketchCacheFind(OceanSketchCacheEntry *cache, uint64_t *clock, const OceanCSR *B, int64_t b_nnz, int registers,
                         OceanSketchCacheEntry **entry);

#endif
