/* What -mat_ocean_view prints: each product's decisions and statistics, stage by stage. */
#include "mat/matocean.h"

/*@C
  MatOceanStatsView - Prints the decisions and statistics of one stage of a petsc-ocean product.

  Input Parameters:
+ stats  - from `MatOceanProductGetStats()`
- viewer - an ASCII viewer

  Level: intermediate

.seealso: `MatOceanProductGetStats()`
@*/
PetscErrorCode MatOceanStatsView(const OceanStats *s, PetscViewer viewer)
{
  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(viewer,
                                   "workflow %s%s%s%s, %" PetscInt64_FMT " x %" PetscInt64_FMT ", nnz A %" PetscInt64_FMT
                                   " B %" PetscInt64_FMT " C %" PetscInt64_FMT ", products %" PetscInt64_FMT "\n",
                                   OceanWorkflowName(s->workflow), s->workflow_forced ? " (forced)" : " (selected)",
                                   s->switched_to_exact == 3
                                     ? " (the estimate's place: this backend's exact workflow takes one pass)"
                                   : s->switched_to_exact == 2
                                     ? " (switched to exact: the over-allocation would not fit the device memory)"
                                   : s->switched_to_exact ? " (switched to exact: over-allocation beyond the nnz limit)"
                                                          : "",
                                   s->bound_factor ? " (routed by likely sizes: bound_factor x the longest B row)" : "",
                                   s->nrows, s->ncols, s->nnz_a, s->nnz_b, s->nnz_c, s->products));
  if (s->sampled_rows)
    PetscCall(PetscViewerASCIIPrintf(
      viewer,
      "  ER %.3g, CR %.3g; sampled CR %.3g over %" PetscInt64_FMT
      " rows (mean %.3g, std %.3g, conservative %.3g); upper bound %" PetscInt64_FMT " entries\n",
      s->er, s->cr, s->cr_sampled, s->sampled_rows, s->cr_mean, s->cr_std, s->cr_conservative, s->bound_nnz));
  else
    PetscCall(PetscViewerASCIIPrintf(
      viewer, "  ER %.3g, CR %.3g; not sampled: the upper bound, %" PetscInt64_FMT " entries, is tight\n", s->er, s->cr,
      s->bound_nnz));
  if (s->hll_registers)
    PetscCall(PetscViewerASCIIPrintf(
      viewer, "  HyperLogLog %d registers, coefficient %.2g, sketches %s, mean relative estimate error %.3f\n",
      s->hll_registers, s->estimate_coefficient, s->sketches_reused ? "reused" : "built", s->estimate_mean_rel_error));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  rows per bin:"));
  for (int b = 0; b < OCEAN_NUM_BINS; b++)
    PetscCall(PetscViewerASCIIPrintf(viewer, " %s %" PetscInt64_FMT, OceanBinName((OceanBin)b), s->rows_per_bin[b]));
  PetscCall(PetscViewerASCIIPrintf(viewer,
                                   "\n  accumulators: esc %" PetscInt64_FMT " hash %" PetscInt64_FMT
                                   " dense %" PetscInt64_FMT " global-hash %" PetscInt64_FMT
                                   "; bitmap query %s; packed sort keys %s\n",
                                   s->esc_rows, s->hash_rows, s->dense_rows, s->global_rows,
                                   s->bitmap_query ? "yes" : "no", s->packed_sort_keys ? "yes" : "no"));
  if (s->heavy_rows) {
    char batches[64] = ""; /* CUDA only */
    if (s->heavy_batches)
      PetscCall(PetscSNPrintf(batches, sizeof(batches), " in %" PetscInt64_FMT " device batches", s->heavy_batches));
    PetscCall(PetscViewerASCIIPrintf(
      viewer,
      "  heavy rows (multisplit): %" PetscInt64_FMT " rows, %" PetscInt64_FMT " products%s, %" PetscInt64_FMT
      " chunks of %" PetscInt64_FMT " columns (%" PetscInt64_FMT " dense), %d of %d levels, %" PetscInt64_FMT
      " elements split, %" PetscInt64_FMT " rows written in place; time (ms): outer product %.3f histogram %.3f "
      "multisplit %.3f accumulate %.3f\n",
      s->heavy_rows, s->heavy_products, batches, s->heavy_chunks, s->heavy_chunk_columns, s->heavy_dense_chunks,
      s->heavy_levels, s->heavy_levels_planned, s->heavy_split_elements, s->heavy_rows_in_place,
      1e3 * s->t_heavy_expand, 1e3 * s->t_heavy_histogram, 1e3 * s->t_heavy_split, 1e3 * s->t_heavy_accumulate));
  }
  PetscCall(PetscViewerASCIIPrintf(
    viewer,
    "  overflow rows %" PetscInt64_FMT ", symbolic retries %" PetscInt64_FMT ", allocated entries %" PetscInt64_FMT
    " (%.2fx nnz C); symbolic calls %" PetscInt64_FMT ", numeric calls %" PetscInt64_FMT
    ", host waits for the device in the last call %" PetscInt64_FMT "\n",
    s->overflow_rows, s->symbolic_retry_rows, s->allocated_entries,
    s->nnz_c ? (double)s->allocated_entries / (double)s->nnz_c : 0.0, s->symbolic_calls, s->numeric_calls,
    s->host_waits));
  PetscCall(PetscViewerASCIIPrintf(viewer,
                                   "  time (ms): analysis %.3f estimate %.3f symbolic %.3f numeric %.3f fallback %.3f "
                                   "compact %.3f transpose %.3f upload %.3f download %.3f\n",
                                   1e3 * s->t_analysis, 1e3 * s->t_estimate, 1e3 * s->t_symbolic, 1e3 * s->t_numeric,
                                   1e3 * s->t_fallback, 1e3 * s->t_compact, 1e3 * s->t_transpose, 1e3 * s->t_upload,
                                   1e3 * s->t_download));
  PetscCall(
    PetscViewerASCIIPrintf(viewer,
                           "  operands uploaded: %.3f MB (0 when the device copies were current), C downloaded: "
                           "%.3f MB\n",
                           1e-6 * (double)s->uploaded_bytes, 1e-6 * (double)s->downloaded_bytes));
  if (s->reuse_map_bytes)
    PetscCall(PetscViewerASCIIPrintf(viewer, "  numeric through the product map: %.3f MB (-mat_ocean_reuse_map_mb)%s\n",
                                     1e-6 * (double)s->reuse_map_bytes,
                                     s->reuse_map_side_by_side ? ", its walked and listed rows on two streams" : ""));
  if (s->row_chunks)
    PetscCall(PetscViewerASCIIPrintf(
      viewer,
      "  C made in %" PetscInt64_FMT
      " chunks of rows, each copied to the host: it did not fit the device memory (-mat_ocean_device_memory_mb)\n",
      s->row_chunks));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

PetscErrorCode MatOceanProductView_Private(Mat C, OceanProduct plan, const char *header, PetscViewer viewer)
{
  int nstages;

  PetscFunctionBegin;
  PetscCallOcean(OceanProductGetNumStages(plan, &nstages));
  PetscCall(PetscViewerASCIIPrintf(viewer, "%s\n", header));
  PetscCall(PetscViewerASCIIPushTab(viewer));
  for (int st = 0; st < nstages; st++) {
    OceanStats stats;

    PetscCallOcean(OceanProductGetStats(plan, st, &stats));
    if (nstages > 1) PetscCall(PetscViewerASCIIPrintf(viewer, "stage %d (%s): ", st, st == 0 ? "A*P" : "P^T*(AP)"));
    PetscCall(MatOceanStatsView(&stats, viewer));
  }
  PetscCall(PetscViewerASCIIPopTab(viewer));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}
