/*
  row_bins - where a benchmark matrix's rows and intermediate products go: C = A*A of the benchmark's generated
  matrices (tests/common/gen.h) through the CPU backend with the H200's default profile, whose per-row decisions are the
  GPU backend's (the GPU tests check that), then per bin: rows and products; for LONG (the rows accumulated in
  global memory on the GPU): the largest rows, the share of the largest, their outputs and accumulators.  No GPU
  needed: it says which kernel a GPU profile should look at, and whether a few rows could hold the tail.

  Per bin also the accumulators its rows take and how far the predictions (the sizes the rows were routed by) are
  above the rows' real nonzeros: with upper bounds, what over-sized tables and slots cost.  For HEAVY (the multisplit)
  the sizes of its finest chunks: a GPU block sums one chunk at a time, so many small chunks mean per-chunk costs.

  Usage: row_bins [--small] [--bound-factor F] NAME|FILE.mtx ...    (NAME: a benchmark matrix, e.g. rmat_s18_d8;
  --small: 1/8 sizes; FILE.mtx: a Matrix Market file, C = A*A as bench_spgemm's)
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gen.h" /* tests/common: the benchmark's set */
#include "ocean.h"
#include "view.h"

static int CompareDescending(const void *a, const void *b)
{
  const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? 1 : x > y ? -1 : 0;
}

/* HEAVY's rows cut into chunks of width columns (the multisplit's finest level; with one level, the chunks it sums):
   how many elements (products) the non-empty chunks hold, by powers of two. */
static void ReportHeavyChunks(const GenCSR *M, const OceanRowInfo *rows, int64_t n, int64_t width)
{
  const int64_t nch           = (M->ncols + width - 1) / width;
  int64_t      *count         = (int64_t *)GenCalloc((size_t)(nch ? nch : 1) * sizeof(int64_t)), i, c;
  int64_t       chunks_in[64] = {0}, elements_in[64] = {0}, chunks = 0, elements = 0;
  int           b;

  for (i = 0; i < n; i++) {
    if (rows[i].bin != OCEAN_BIN_HEAVY) continue;
    for (int64_t t = M->rowptr[i]; t < M->rowptr[i + 1]; t++) {
      const int64_t k = M->colidx[t];
      for (int64_t u = M->rowptr[k]; u < M->rowptr[k + 1]; u++) count[M->colidx[u] / width]++;
    }
    for (c = 0; c < nch; c++) {
      if (!count[c]) continue;
      for (b = 0; ((int64_t)2 << b) <= count[c]; b++) {}
      chunks_in[b]++;
      elements_in[b] += count[c];
      chunks++;
      elements += count[c];
      count[c] = 0;
    }
  }
  free(count);
  if (!chunks) return;
  printf("  HEAVY: %lld non-empty chunks of %lld columns, %.0f elements each on average; by elements:\n",
         (long long)chunks, (long long)width, (double)elements / (double)chunks);
  for (b = 0; b < 64; b++)
    if (chunks_in[b])
      printf("    [2^%-2d, 2^%-2d) %9lld chunks (%5.1f%%) %12lld elements (%5.1f%%)\n", b, b + 1,
             (long long)chunks_in[b], 100.0 * (double)chunks_in[b] / (double)chunks, (long long)elements_in[b],
             100.0 * (double)elements_in[b] / (double)elements);
}

/* The bins of C = M*M's rows, as the pipeline takes them. */
static int ReportRows(OceanContext ctx, const GenCSR *M)
{
  OceanProduct        p = NULL;
  OceanCSR            a;
  const OceanRowInfo *rows;
  OceanBinConfig      n4, lng, heavy;
  int64_t             n, i, nlong = 0, long_products = 0, long_nnz = 0, long_max_nnz = 0, rows_in[OCEAN_NUM_BINS] = {0},
                products_in[OCEAN_NUM_BINS] = {0}, acc[OCEAN_ACC_GLOBAL_DENSE + 1] = {0}, *longest = NULL, sum = 0,
                predicted_in[OCEAN_NUM_BINS] = {0}, nnz_in[OCEAN_NUM_BINS] = {0},
                acc_in[OCEAN_NUM_BINS][OCEAN_ACC_GLOBAL_DENSE + 1] = {{0}};
  const int64_t blocks = 264; /* the H200's resident 1024-thread LONG blocks: 132 SMs x 2 */

  a = GenView(M);
  if (OceanProductCreate(ctx, OCEAN_PRODUCT_AB, &p) || OceanProductSymbolic(p, &a, &a) ||
      OceanProductGetRowInfo(p, 0, &rows, &n) || OceanContextGetBinConfig(ctx, OCEAN_BIN_N4, &n4) ||
      OceanContextGetBinConfig(ctx, OCEAN_BIN_LONG, &lng) || OceanContextGetBinConfig(ctx, OCEAN_BIN_HEAVY, &heavy)) {
    fprintf(stderr, "row_bins: %s: %s\n", M->name, OceanGetLastErrorMessage());
    OceanProductDestroy(&p);
    return 1;
  }
  longest = (int64_t *)GenMalloc((size_t)(n ? n : 1) * sizeof(int64_t));
  for (i = 0; i < n; i++) {
    rows_in[rows[i].bin]++;
    products_in[rows[i].bin] += rows[i].products;
    predicted_in[rows[i].bin] += rows[i].predicted;
    nnz_in[rows[i].bin] += rows[i].nnz;
    if (rows[i].accumulator <= OCEAN_ACC_GLOBAL_DENSE) acc_in[rows[i].bin][rows[i].accumulator]++;
    sum += rows[i].products;
    if (rows[i].bin != OCEAN_BIN_LONG) continue;
    longest[nlong++] = rows[i].products;
    long_products += rows[i].products;
    long_nnz += rows[i].nnz;
    if (rows[i].nnz > long_max_nnz) long_max_nnz = rows[i].nnz;
    if (rows[i].accumulator <= OCEAN_ACC_GLOBAL_DENSE) acc[rows[i].accumulator]++;
  }
  {
    OceanStats st;
    if (!OceanProductGetStats(p, 0, &st))
      printf("%s: %lld rows, %lld products; workflow %s%s, slots %.2fx nnz(C) (bounds %.2fx), overflow rows %lld\n",
             M->name, (long long)n, (long long)sum, OceanWorkflowName(st.workflow),
             st.bound_factor ? " routed by likely sizes" : "",
             st.nnz_c ? (double)st.allocated_entries / (double)st.nnz_c : 0.0,
             st.nnz_c ? (double)st.bound_nnz / (double)st.nnz_c : 0.0, (long long)st.overflow_rows);
  }
  for (i = 0; i < OCEAN_NUM_BINS; i++) {
    int k;
    if (!rows_in[i]) continue;
    printf("  %-6s %9lld rows %13lld products (%5.1f%%), nnz(C) per row %.1f, predicted / nnz %.2f;",
           OceanBinName((OceanBin)i), (long long)rows_in[i], (long long)products_in[i],
           sum ? 100.0 * products_in[i] / sum : 0.0, (double)nnz_in[i] / (double)rows_in[i],
           nnz_in[i] ? (double)predicted_in[i] / (double)nnz_in[i] : 0.0);
    for (k = 0; k <= OCEAN_ACC_GLOBAL_DENSE; k++)
      if (acc_in[i][k]) printf(" %s %lld", OceanAccumulatorName((OceanAccumulator)k), (long long)acc_in[i][k]);
    printf("\n");
  }
  printf("  N4 holds a hash of %lld entries or a span of %lld columns; LONG's dense bitmap %lld columns\n",
         (long long)n4.hash_limit, (long long)n4.dense_columns, (long long)lng.dense_columns);
  if (nlong) {
    int64_t acc_sum = 0;
    qsort(longest, (size_t)nlong, sizeof(int64_t), CompareDescending);
    printf("  LONG: %lld rows, nnz(C) per row mean %.0f, max %lld; accumulators: global hash %lld, global dense %lld\n",
           (long long)nlong, (double)long_nnz / (double)nlong, (long long)long_max_nnz,
           (long long)acc[OCEAN_ACC_GLOBAL_HASH], (long long)acc[OCEAN_ACC_GLOBAL_DENSE]);
    printf("  LONG products: largest rows");
    for (i = 0; i < nlong && i < 8; i++) printf(" %lld", (long long)longest[i]);
    printf("; the largest is %.2f of a block's share over %lld blocks\n",
           (double)longest[0] / ((double)long_products / (double)blocks), (long long)blocks);
    for (i = 0; i < nlong; i++) {
      acc_sum += longest[i];
      if (i == 9 || i == 99 || i == blocks - 1)
        printf("  the largest %lld rows: %.1f%% of LONG's products\n", (long long)i + 1,
               100.0 * (double)acc_sum / (double)long_products);
    }
  }
  if (rows_in[OCEAN_BIN_HEAVY] && heavy.dense_columns > 0) ReportHeavyChunks(M, rows, n, heavy.dense_columns);
  free(longest);
  OceanProductDestroy(&p);
  return 0;
}

int main(int argc, char **argv)
{
  OceanContext ctx;
  OceanOptions o;
  int          small = 0, a, k, rc = 0, found = 0;

  if (OceanContextCreate(OCEAN_BACKEND_CPU, NULL, &ctx)) {
    fprintf(stderr, "row_bins: %s\n", OceanGetLastErrorMessage());
    return 1;
  }
  OceanOptionsDefault(&o);
  o.record_rows = 1;
  if (OceanContextSetOptions(ctx, &o)) {
    fprintf(stderr, "row_bins: %s\n", OceanGetLastErrorMessage());
    return 1;
  }
  for (a = 1; a < argc; a++) {
    if (!strcmp(argv[a], "--small")) {
      small = 1;
      continue;
    }
    if (!strcmp(argv[a], "--bound-factor") && a + 1 < argc) { /* OceanOptions.bound_factor */
      o.bound_factor = atoll(argv[++a]);
      if (OceanContextSetOptions(ctx, &o)) {
        fprintf(stderr, "row_bins: %s\n", OceanGetLastErrorMessage());
        return 1;
      }
      continue;
    }
    for (k = 0; k < GenBenchNumSpecs; k++)
      if (!strcmp(argv[a], GenBenchSpecs[k].name)) {
        GenCSR M;
        GenBenchMatrix(k, small, &M);
        rc |= ReportRows(ctx, &M);
        GenFree(&M);
        found++;
      }
    if (strlen(argv[a]) > 4 && !strcmp(argv[a] + strlen(argv[a]) - 4, ".mtx")) {
      GenCSR M;
      char   err[256];
      if (GenReadMatrixMarket(argv[a], GEN_BENCH_SEED, &M, err, sizeof(err))) {
        fprintf(stderr, "row_bins: %s\n", err);
        rc = 1;
        continue;
      }
      snprintf(M.name, sizeof(M.name), "%s", argv[a]);
      rc |= ReportRows(ctx, &M);
      GenFree(&M);
      found++;
    }
  }
  if (!found) {
    fprintf(stderr, "usage: row_bins [--small] NAME|FILE.mtx [...], NAME one of:");
    for (k = 0; k < GenBenchNumSpecs; k++) fprintf(stderr, " %s", GenBenchSpecs[k].name);
    fprintf(stderr, "\n");
    rc = 1;
  }
  OceanContextDestroy(&ctx);
  return rc;
}
