/*
  ocean_team.cuh - a team of threads accumulating one row (or one chunk) together, and the shared-memory table steps
  the accumulators share (ocean_accumulators.cu, ocean_heavy.cu): a hash table's insertion, the compaction of its
  occupied entries and their bitonic sort.  Device code only; included by .cu files.
*/
#ifndef OCEAN_TEAM_CUH
#define OCEAN_TEAM_CUH

#include "ocean_cuda.h"

/* Per-team state of the row being accumulated.  32-bit counters (a row of C has fewer than 2^31 entries): shared
   atomics on them are native, on 64-bit ones compare-and-swap loops (sm_90 SASS: ATOMS.CAST.SPIN.64). */
struct OceanRowState {
  unsigned count; /* distinct columns inserted */
  unsigned out;   /* entries written */
  int      over;  /* the row passed its slot */
};

/* A team: the threads that accumulate one row together.  One-warp teams are packed OCEAN_TEAM_BLOCK / 32 to a block
   (short rows should not each pay for a block) and synchronize with __syncwarp; larger teams are a block of their own
   and use __syncthreads (named barriers would cap the blocks per SM). */
#define OCEAN_TEAM_BLOCK 256
#define OCEAN_MAX_TEAMS  (OCEAN_TEAM_BLOCK / 32)
struct OceanTeam {
  int                             tid, size, id;
  __device__ __forceinline__ void sync() const
  {
    if (size == 32) __syncwarp();
    else __syncthreads();
  }
};

/* Sorts keys[0, n) ascending (unsigned) in shared memory with vals moved along: a bitonic network over the next power
   of two in its all-ascending form (the first step of each merge compares mirrored pairs), so the virtual entries
   past n act as +infinity and are never touched.  Called by every thread of the team; ends synchronized. */
static __device__ void OceanTeamSortTable(const OceanTeam &tm, uint32_t *keys, double *vals, int64_t n64)
{
  const int n = (int)n64; /* a shared-memory table: far below 2^31 entries */
  int       P = 1;
  while (P < n) P <<= 1;
  tm.sync();
  for (int k = 2; k <= P; k <<= 1)
    for (int j = k >> 1; j > 0; j >>= 1) {
      for (int t = tm.tid; t < (P >> 1); t += tm.size) {
        const int lo = ((t & ~(j - 1)) << 1) | (t & (j - 1)); /* bit log2(j) of lo is 0 */
        const int hi = j == (k >> 1) ? (lo ^ (k - 1)) : (lo + j);
        if (hi < n) {
          const uint32_t kl = keys[lo], kh = keys[hi];
          if (kh < kl) {
            const double v = vals[lo];
            keys[lo]       = kh;
            keys[hi]       = kl;
            vals[lo]       = vals[hi];
            vals[hi]       = v;
          }
        }
      }
      tm.sync();
    }
}

/* Moves the occupied entries (key != -1) of a shared hash table to its front, in table order; returns their number.
   A chunk of the team's size at a time: every read of a chunk happens before its writes, which land below it. */
static __device__ int64_t OceanTeamCompactTable(const OceanTeam &tm, int32_t *keys, double *vals, int64_t cap,
                                                int *warp_sums)
{
  const int lane = tm.tid & 31, w = tm.tid >> 5, nw = tm.size >> 5, w0 = (int)(threadIdx.x >> 5) - w;
  int64_t   base = 0;

  for (int64_t j0 = 0; j0 < cap; j0 += tm.size) {
    const int64_t  j = j0 + tm.tid;
    const int32_t  k = j < cap ? keys[j] : -1;
    const double   v = j < cap ? vals[j] : 0.0;
    const unsigned m = __ballot_sync(0xffffffffu, k != -1);
    if (lane == 0) warp_sums[w0 + w] = __popc(m);
    tm.sync();
    int before = 0, total = 0;
    for (int x = 0; x < nw; x++) {
      const int c = warp_sums[w0 + x];
      before += x < w ? c : 0;
      total += c;
    }
    if (k != -1) {
      const int64_t d = base + before + __popc(m & ((1u << lane) - 1u));
      keys[d]         = k;
      vals[d]         = v;
    }
    base += total;
    tm.sync();
  }
  return base;
}

/* A column's place in a hash table (shared or global memory, keys -1 when free), inserting it when new; -1 when a new
   column passes the row's slot (over set) or the row has already overflowed.  Table positions are 32-bit: a row's
   table has fewer than 2^32 slots. */
__device__ __forceinline__ int64_t OceanHashFind(int32_t *keys, int64_t cap64, int64_t slot, int32_t col,
                                                 OceanRowState *st)
{
  const uint32_t cap = (uint32_t)cap64;
  uint32_t       pos = (uint32_t)OceanHashSlot(col, cap64);
  for (;;) {
    int32_t k = ((volatile int32_t *)keys)[pos];
    if (k == -1) {
      k = atomicCAS(&keys[pos], -1, col);
      if (k == -1) {
        if (atomicAdd(&st->count, 1u) >= (unsigned long long)slot) {
          atomicExch(&st->over, 1);
          return -1;
        }
        return pos;
      }
    }
    if (k == col) return pos;
    if (((volatile int *)&st->over)[0]) return -1;
    pos = pos + 1 == cap ? 0 : pos + 1;
  }
}

/* One insertion into a hash table, its value added atomically (numeric). */
__device__ __forceinline__ void OceanHashInsert(int32_t *keys, double *hv, int64_t cap64, int64_t slot, int32_t col,
                                                double v, bool numeric, OceanRowState *st)
{
  const int64_t pos = OceanHashFind(keys, cap64, slot, col, st);
  if (numeric && pos >= 0) atomicAdd(&hv[pos], v);
}

#endif
