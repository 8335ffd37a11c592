/*
  ocean_sketches.cu - the HLL sketches of the estimation: one sketch of m registers per row of B, then per row of A
  the merge of its rows of B's sketches and the estimate.  OceanSketchUpdate, OceanRegisterPack, OceanRegisterUnpack
  and OceanSketchEstimateRegisters come from core/rules.h: the sketches, merged registers and estimates are the CPU's
  bitwise (the solve uses OceanExpm1, not CUDA's expm1, and this file is compiled with -fmad=false).
*/
#include <cuda_runtime.h>
#include "ocean_cuda.h"
#include "ocean_launch.cuh"

#define OCEAN_SKETCH_WARPS 4
/* A warp per row of B: lanes take the row's columns and OR their update bits into the row's register sets in shared
   memory, then pack them (coalesced bytes).  A register is OceanRegisterPack of the OR of its update bits whatever
   the insertion order (packing keeps the top bit and the two below it, which is all a later insert looks at), so
   this is bitwise OceanSketchBuild's sequence of OceanSketchInsert. */
__global__ void OceanKernelSketchBuild(OceanDevCSR B, int registers, int log2m, uint8_t *sketches)
{
  __shared__ unsigned long long sets[OCEAN_SKETCH_WARPS][OCEAN_HLL_MAX_REGISTERS];
  const int                     lane = threadIdx.x & 31, w = threadIdx.x >> 5;

  for (int64_t k = (int64_t)blockIdx.x * OCEAN_SKETCH_WARPS + w; k < B.nrows;
       k += (int64_t)gridDim.x * OCEAN_SKETCH_WARPS) {
    uint8_t *s = sketches + (size_t)k * (size_t)registers;
    for (int j = lane; j < registers; j += 32) sets[w][j] = 0;
    __syncwarp();
    for (int64_t t = B.rowptr[k] + lane; t < B.rowptr[k + 1]; t += 32) {
      int      idx;
      uint64_t bit;
      OceanSketchUpdate(log2m, B.colidx[t], &idx, &bit);
      atomicOr(&sets[w][idx], (unsigned long long)bit);
    }
    __syncwarp();
    for (int j = lane; j < registers; j += 32) s[j] = OceanRegisterPack((uint64_t)sets[w][j]);
    __syncwarp();
  }
}

extern "C" OceanError OceanCudaSketchBuild(OceanDevCSR B, int registers, uint8_t *d_sketches)
{
  if (B.nrows == 0) return OCEAN_SUCCESS;
  if (registers > OCEAN_HLL_MAX_REGISTERS)
    return OceanSetError(OCEAN_ERR_ARG, "sketch build: %d registers, at most %d", registers, OCEAN_HLL_MAX_REGISTERS);
  OceanKernelSketchBuild<<<OceanGrid(B.nrows, OCEAN_SKETCH_WARPS), 32 * OCEAN_SKETCH_WARPS>>>(
    B, registers, OceanLog2Int(registers), d_sketches);
  OCEAN_CUDA_LAUNCHED("sketch build");
  return OCEAN_SUCCESS;
}

/*
  The estimate of every row of A: a warp takes a batch of consecutive rows (1 to 32), merges each row's registers
  (the OR of the unpacked registers of B's rows, which is order-free), keeps the packed result in shared memory,
  then a lane per row solves (the maximum-likelihood solve is serial and costly: many rows need many lanes on it).
  The merge is atomic-free: registers/8 lanes share an entry, each loading 8 of its registers as one 64-bit word,
  so 256/registers entries go per step; the lanes holding the same registers then OR their sets by shuffles.
  The merge and the solve are bitwise the CPU's.
*/
#define OCEAN_ESTIMATE_WARPS 4
__global__ void OceanKernelSketchEstimate(OceanDevCSR A, const uint8_t *sketches, int registers, int batch,
                                          double *estimate)
{
  extern __shared__ uint8_t ocean_merged[]; /* [warp][batch rows][registers] */
  const int                 lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const int                 group = registers / 8, part = lane % group, step = 32 / group;
  uint8_t                  *merged = ocean_merged + (size_t)w * (size_t)batch * (size_t)registers;

  for (int64_t i0 = ((int64_t)blockIdx.x * OCEAN_ESTIMATE_WARPS + w) * batch; i0 < A.nrows;
       i0 += (int64_t)gridDim.x * OCEAN_ESTIMATE_WARPS * batch) {
    const int nr = (int)(A.nrows - i0 < batch ? A.nrows - i0 : batch);
    for (int r = 0; r < nr; r++) {
      uint64_t set[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      for (int64_t t = A.rowptr[i0 + r] + lane / group; t < A.rowptr[i0 + r + 1]; t += step) {
        const uint64_t word =
          *(const uint64_t *)(sketches + (size_t)A.colidx[t] * (size_t)registers + 8 * (size_t)part);
        if (word) /* an empty register adds nothing */
          for (int b = 0; b < 8; b++) set[b] |= OceanRegisterUnpack((uint8_t)(word >> (8 * b)));
      }
      for (int o = group; o < 32; o <<= 1)
        for (int b = 0; b < 8; b++) set[b] |= __shfl_xor_sync(OCEAN_FULL_MASK, set[b], o);
      if (lane < group)
        for (int b = 0; b < 8; b++) merged[r * registers + 8 * part + b] = OceanRegisterPack(set[b]);
    }
    __syncwarp();
    if (lane < nr) estimate[i0 + lane] = OceanSketchEstimateRegisters(merged + lane * registers, registers);
    __syncwarp();
  }
}

extern "C" OceanError OceanCudaSketchEstimate(OceanDevCSR A, const uint8_t *d_sketches, int registers,
                                              double *d_estimate)
{
  const int sms    = OceanDeviceSMs();
  int       per_sm = 0;
  int64_t   warps, batch = 1;

  if (A.nrows == 0) return OCEAN_SUCCESS;
  if (registers < 8 || registers > OCEAN_HLL_MAX_REGISTERS || (registers & (registers - 1)))
    return OceanSetError(OCEAN_ERR_ARG, "sketch estimate: %d registers, a power of two from 8 to %d expected",
                         registers, OCEAN_HLL_MAX_REGISTERS);
  OCEAN_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, OceanKernelSketchEstimate,
                                                               32 * OCEAN_ESTIMATE_WARPS,
                                                               (size_t)OCEAN_ESTIMATE_WARPS * 32 * (size_t)registers));
  warps = (int64_t)(sms > 0 ? sms : 1) * (per_sm > 0 ? per_sm : 1) * OCEAN_ESTIMATE_WARPS;
  /* the fewest rows per warp (a power of two up to 32) that let every warp be resident at once: a lane's solve is a
     long serial chain, so each further round of warps costs a whole solve more (H200, teko_nsjac's 15,444 rows: a
     row per warp, three rounds of the 5,280 resident warps, took 183 us) */
  while (batch < 32 && (A.nrows + batch - 1) / batch > warps) batch *= 2;
  OceanKernelSketchEstimate<<<OceanGrid((A.nrows + batch - 1) / batch, OCEAN_ESTIMATE_WARPS), 32 * OCEAN_ESTIMATE_WARPS,
                              (size_t)OCEAN_ESTIMATE_WARPS *(size_t)batch *(size_t)registers>>>(
    A, d_sketches, registers, (int)batch, d_estimate);
  OCEAN_CUDA_LAUNCHED("sketch estimate");
  return OCEAN_SUCCESS;
}
