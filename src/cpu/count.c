/*
  count.c - exact row counts of A*B on the CPU (public API: OceanCountRowNnz), by the symbolic accumulators.
*/
#include "cpu/cpu.h"

OceanError OceanCountRowNnz(const OceanCSR *A_in, const OceanCSR *B_in, int64_t *nnz)
{
  OceanContext        ctx;
  OceanOptions        opts;
  OceanAnalysis       an;
  OceanWorkspace     *ws;
  OceanParallelStatus ps = {0, OCEAN_SUCCESS, 0, 0};
  OceanCSR            A, B;
  OceanError          err;
  int64_t             i;

  OceanCall(OceanCSRPrepareAB("OceanCountRowNnz", A_in, B_in, &A, &B));
  OceanCheck(nnz || A.nrows == 0, OCEAN_ERR_ARG, "OceanCountRowNnz: NULL output for %lld rows", (long long)A.nrows);

  /* the default configuration's symbolic accumulators, without sampling */
  OceanCall(OceanContextCreate(OCEAN_BACKEND_CPU, NULL, &ctx));
  OceanOptionsDefault(&opts);
  opts.sample_min = opts.sample_max = 0;
  memset(&an, 0, sizeof(an));
  err = OceanContextSetOptions(ctx, &opts);
  if (!err) err = OceanAnalyzeShapes(&A, &B, NULL, &an);
  if (!err) err = OceanCpuWorkspaces(ctx, &ctx->set, &ws);
  if (!err) {
#pragma omp parallel for schedule(dynamic, OCEAN_ROW_CHUNK)
    for (i = 0; i < A.nrows; i++) {
      int64_t    bytes = 0;
      int        retried;
      OceanError e;
      if (OceanParallelFailed(&ps)) continue;
      e = OceanCpuCountRow(&ctx->set, &ws[OceanThreadNum()], &A, &B, i, &an.rows[i], an.rows[i].ub, &nnz[i], &retried,
                           &bytes);
      if (e) OceanParallelFail(&ps, e, i, bytes);
    }
    err = OceanParallelReport(&ps, "OceanCountRowNnz");
  }
  OceanAnalysisDestroy(&an);
  OceanContextDestroy(&ctx);
  return err;
}
