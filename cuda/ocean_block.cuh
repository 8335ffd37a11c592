/*
  ocean_block.cuh - one block of OCEAN_SMALL_THREADS doing a small product's bookkeeping (n <= OCEAN_SMALL_ROWS rows):
  an exclusive scan and the grouping of rows by bin, shared by the one-block kernels of ocean_scan.cu and
  ocean_accumulators.cu (one launch each instead of CUB's several).
*/
#ifndef OCEAN_BLOCK_CUH
#define OCEAN_BLOCK_CUH

#include "ocean_cuda.h"
#include "ocean_launch.cuh"

/* The exclusive sum of load(j) over j < n, store(j, sum before j) for each; returns the total.  Tiles of
   OCEAN_SCAN_ITEMS x 1,024 entries, thread t holding entries t, t + 1,024, ... of its tile, so that every load and
   store of a warp is 256 contiguous bytes (with 8 consecutive entries a thread each warp access touched 32 sectors: one
   SM's transactions made 13,366 rows take 17 us on an H200, 10 us so), all of a tile's loads issued before its scans;
   the 8 x 32 warps' totals scanned by 8 warps at once.  Every thread of the block calls it; load is called for j < n
   only. */
#define OCEAN_SCAN_ITEMS 8
template <typename Load, typename Store>
__device__ __forceinline__ int64_t OceanBlockScan(int64_t n, Load load, Store store)
{
  constexpr int      W = OCEAN_SMALL_THREADS / 32;
  __shared__ int64_t warp_before[OCEAN_SCAN_ITEMS][W], part_total[OCEAN_SCAN_ITEMS];
  const int          lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  int64_t            running = 0;

  static_assert(OCEAN_SCAN_ITEMS <= W && W == 32, "one warp scans each part's 32 warp totals");
  for (int64_t base = 0; base < n; base += OCEAN_SMALL_THREADS * OCEAN_SCAN_ITEMS) {
    int64_t v[OCEAN_SCAN_ITEMS], upto[OCEAN_SCAN_ITEMS];
#pragma unroll
    for (int k = 0; k < OCEAN_SCAN_ITEMS; k++) {
      const int64_t j = base + (int64_t)k * OCEAN_SMALL_THREADS + threadIdx.x;
      v[k]            = j >= n ? 0 : load(j);
      upto[k]         = v[k];
    }
    for (int o = 1; o < 32; o <<= 1)
#pragma unroll
      for (int k = 0; k < OCEAN_SCAN_ITEMS; k++) {
        const int64_t y = __shfl_up_sync(OCEAN_FULL_MASK, upto[k], o);
        if (lane >= o) upto[k] += y;
      }
    if (lane == 31)
#pragma unroll
      for (int k = 0; k < OCEAN_SCAN_ITEMS; k++) warp_before[k][warp] = upto[k];
    __syncthreads();
    if (warp < OCEAN_SCAN_ITEMS) { /* warp k: the exclusive sums of part k's warp totals */
      const int64_t w         = warp_before[warp][lane];
      const int64_t x         = OceanWarpInclusiveSum(w, lane);
      warp_before[warp][lane] = x - w;
      if (lane == 31) part_total[warp] = x;
    }
    __syncthreads();
    int64_t before = running;
#pragma unroll
    for (int k = 0; k < OCEAN_SCAN_ITEMS; k++) {
      const int64_t j = base + (int64_t)k * OCEAN_SMALL_THREADS + threadIdx.x;
      if (j < n) store(j, before + warp_before[k][warp] + upto[k] - v[k]);
      before += part_total[k];
    }
    running = before;
    __syncthreads(); /* warp_before and part_total serve the next tile */
  }
  return running;
}

/* The rows j < n grouped by their bins bin_of[j] (shared memory, written before a barrier): counts[b] the rows of bin
   b, grouped[] the rows (list ? list[j] : j) bin after bin, each bin's rows in the order of j (the stable order of
   the radix sort the large case uses).  A warp's rows of one bin are counted once (match_any); each row's place is its
   rank among its warp's rows of the same bin after the earlier warps' and tiles' rows.  Every thread calls it. */
__device__ __forceinline__ void OceanBlockGroupBins(const uint8_t *bin_of, int64_t n, const int64_t *list,
                                                    int64_t *grouped, unsigned long long *counts)
{
  __shared__ unsigned count[OCEAN_NUM_BINS], start[OCEAN_NUM_BINS], done[OCEAN_NUM_BINS];
  __shared__ unsigned warp_place[OCEAN_SMALL_THREADS / 32][OCEAN_NUM_BINS];
  const int           lane = threadIdx.x & 31, warp = threadIdx.x / 32;

  if (threadIdx.x < OCEAN_NUM_BINS) count[threadIdx.x] = done[threadIdx.x] = 0;
  __syncthreads();
  for (int64_t j = threadIdx.x; j - threadIdx.x < n; j += OCEAN_SMALL_THREADS) {
    const unsigned key   = j < n ? bin_of[j] : OCEAN_NUM_BINS;
    const unsigned peers = __match_any_sync(OCEAN_FULL_MASK, key);
    if (j < n && lane == __ffs(peers) - 1) atomicAdd(&count[key], (unsigned)__popc(peers));
  }
  __syncthreads();
  if (threadIdx.x == 0)
    for (unsigned b = 0, sum = 0; b < OCEAN_NUM_BINS; b++) {
      start[b] = sum;
      sum += count[b];
    }
  if (threadIdx.x < OCEAN_NUM_BINS) counts[threadIdx.x] = count[threadIdx.x];
  for (int64_t base = 0; base < n; base += OCEAN_SMALL_THREADS) {
    const int64_t  j     = base + threadIdx.x;
    const bool     valid = j < n;
    const unsigned key = valid ? bin_of[j] : OCEAN_NUM_BINS, peers = __match_any_sync(OCEAN_FULL_MASK, key);
    const unsigned rank = __popc(peers & ((1u << lane) - 1));
    for (int k = threadIdx.x; k < (OCEAN_SMALL_THREADS / 32) * OCEAN_NUM_BINS; k += OCEAN_SMALL_THREADS)
      warp_place[k / OCEAN_NUM_BINS][k % OCEAN_NUM_BINS] = 0;
    __syncthreads();
    if (valid && rank == 0) warp_place[warp][key] = __popc(peers);
    __syncthreads();
    if (threadIdx.x < OCEAN_NUM_BINS) { /* the warps' counts into their places after the earlier tiles' rows */
      unsigned place = done[threadIdx.x];
      for (int w = 0; w < OCEAN_SMALL_THREADS / 32; w++) {
        const unsigned c           = warp_place[w][threadIdx.x];
        warp_place[w][threadIdx.x] = place;
        place += c;
      }
      done[threadIdx.x] = place;
    }
    __syncthreads();
    if (valid) grouped[start[key] + warp_place[warp][key] + rank] = list ? list[j] : j;
    __syncthreads();
  }
}

#endif
