static const char help[] =
  "petsc-ocean products (AB, AtB, PtAP) against PETSc's own, on 1-4 processes.\n"
  "  -product AB|AtB|PtAP  -api product|mult  -gen_a/-gen_b NAME -size_a/-size_b N -n_a/-n_b N -degree_a/-degree_b D "
  "-seed_a/-seed_b S -dense_row_a R\n"
  "  -type_a/-type_b aij|aijocean  -maij_dof D (P becomes MAIJ)  -expect_workflow W -expect_overflow -expect_stage K\n"
  "  -expect_row_chunks (on the CUDA backend C made in several chunks of rows, on the CPU in none)\n"
  "  -expect_heavy_levels L (heavy rows through the multisplit, L levels deep)\n"
  "  -reuse (MatScale and new values, numeric only)  -sparsity_change  -sketch_reuse\n"
  "  -expect_no_copies (with -reuse and device matrices: no host-device copy in the numeric product after MatScale)\n"
  "  -expect_no_uploads (device matrices: the initial product copies nothing to the device, its operands being "
  "there)\n";

#include "oceantest.h"

typedef struct {
  char      product[16], api[16], workflow[32];
  PetscBool reuse, sparsity_change, sketch_reuse, expect_overflow, expect_ocean, expect_row_chunks, expect_no_copies;
  PetscBool expect_no_uploads;
  PetscInt  expect_heavy_levels;
  PetscInt  maij_dof, stage;
} TestOptions;

static PetscErrorCode GenOperand(const char *which, MPI_Comm comm, Mat *M, OceanTestGen *g)
{
  char     opt[64], name[32] = "lap2d", type[32] = "aijocean";
  PetscInt size = 8, n = 0, degree = 4, seed = 1, dense_row = -1;

  PetscFunctionBeginUser;
  PetscCall(PetscSNPrintf(opt, sizeof(opt), "-gen_%s", which));
  PetscCall(PetscOptionsGetString(NULL, NULL, opt, name, sizeof(name), NULL));
  PetscCall(PetscSNPrintf(opt, sizeof(opt), "-type_%s", which));
  PetscCall(PetscOptionsGetString(NULL, NULL, opt, type, sizeof(type), NULL));
  PetscCall(PetscSNPrintf(opt, sizeof(opt), "-size_%s", which));
  PetscCall(PetscOptionsGetInt(NULL, NULL, opt, &size, NULL));
  PetscCall(PetscSNPrintf(opt, sizeof(opt), "-n_%s", which));
  PetscCall(PetscOptionsGetInt(NULL, NULL, opt, &n, NULL));
  PetscCall(PetscSNPrintf(opt, sizeof(opt), "-degree_%s", which));
  PetscCall(PetscOptionsGetInt(NULL, NULL, opt, &degree, NULL));
  PetscCall(PetscSNPrintf(opt, sizeof(opt), "-seed_%s", which));
  PetscCall(PetscOptionsGetInt(NULL, NULL, opt, &seed, NULL));
  PetscCall(PetscSNPrintf(opt, sizeof(opt), "-dense_row_%s", which));
  PetscCall(PetscOptionsGetInt(NULL, NULL, opt, &dense_row, NULL));
  PetscCall(OceanTestGenSetup(g, name, size, n ? n : size, degree, seed, dense_row));
  PetscCall(OceanTestGenMat(comm, g, type, M));
  PetscFunctionReturn(0);
}

static MatProductType ProductType(const char *name)
{
  PetscBool is;
  PetscStrcmp(name, "AtB", &is);
  if (is) return MATPRODUCT_AtB;
  PetscStrcmp(name, "PtAP", &is);
  if (is) return MATPRODUCT_PtAP;
  return MATPRODUCT_AB;
}

/* PETSc's counts of host-to-device and device-to-host copies so far, once the n matrices are checked to be device
   matrices (aijcusparse-based: they compose MatCUSPARSESetFormat_C). */
static PetscErrorCode CopyCounts(const char *option, PetscInt n, const Mat M[], PetscLogDouble copies[2])
{
  PetscFunctionBeginUser;
  for (PetscInt k = 0; k < n; k++) {
    PetscErrorCode (*f)(void) = NULL;
    MatType type;
    PetscCall(MatGetType(M[k], &type));
    PetscCall(PetscObjectQueryFunction((PetscObject)M[k], "MatCUSPARSESetFormat_C", &f));
    PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG,
               "%s: %s (%s) is not a device matrix: run with -mat_ocean_device_matrices on a CUDA PETSc", option,
               k == 0   ? "A"
               : k == 1 ? "B"
                        : "C",
               type);
  }
#if defined(PETSC_HAVE_DEVICE)
  copies[0] = petsc_ctog_ct;
  copies[1] = petsc_gtoc_ct;
#else
  (void)copies;
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "%s needs a PETSc with a device", option);
#endif
  PetscFunctionReturn(0);
}

/* The operands' device copies made before the product (a MatMult needs them), so that it finds them there. */
static PetscErrorCode OperandsToDevice(Mat A, Mat B)
{
  Mat M[2] = {A, B};

  PetscFunctionBeginUser;
  for (int k = 0; k < 2; k++) {
    Vec x, y;
    PetscCall(MatCreateVecs(M[k], &x, &y));
    PetscCall(VecSet(x, 1.0));
    PetscCall(MatMult(M[k], x, y));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&y));
  }
  PetscFunctionReturn(0);
}

/* No copy since CopyCounts(): the numeric product read its operands and wrote C on the device. */
static PetscErrorCode CheckNoCopies(const PetscLogDouble copies[2])
{
  PetscFunctionBeginUser;
#if defined(PETSC_HAVE_DEVICE)
  PetscCheck(petsc_ctog_ct == copies[0] && petsc_gtoc_ct == copies[1], PETSC_COMM_SELF, PETSC_ERR_PLIB,
             "the numeric product copied %g times to the device and %g times to the host (expected none)",
             (double)(petsc_ctog_ct - copies[0]), (double)(petsc_gtoc_ct - copies[1]));
#else
  (void)copies;
#endif
  PetscFunctionReturn(0);
}

/* The product through the chosen interface: MatProduct* or MatMatMult/MatTransposeMatMult/MatPtAP. */
static PetscErrorCode RunProduct(TestOptions *o, Mat A, Mat B, MatReuse reuse, Mat *C)
{
  MatProductType type = ProductType(o->product);
  PetscBool      mult;

  PetscFunctionBeginUser;
  PetscCall(PetscStrcmp(o->api, "mult", &mult));
  if (mult) {
    if (type == MATPRODUCT_AB) PetscCall(MatMatMult(A, B, reuse, PETSC_DEFAULT, C));
    else if (type == MATPRODUCT_AtB) PetscCall(MatTransposeMatMult(A, B, reuse, PETSC_DEFAULT, C));
    else PetscCall(MatPtAP(A, B, reuse, PETSC_DEFAULT, C));
  } else if (reuse == MAT_INITIAL_MATRIX) {
    PetscCall(MatProductCreate(A, B, NULL, C));
    PetscCall(MatProductSetType(*C, type));
    PetscCall(MatProductSetFromOptions(*C));
    PetscCall(MatProductSymbolic(*C));
    PetscCall(MatProductNumeric(*C));
  } else PetscCall(MatProductNumeric(*C));
  PetscFunctionReturn(0);
}

static PetscErrorCode Check(TestOptions *o, Mat A, Mat B, Mat C, const char *what)
{
  Mat R, Bound;

  PetscFunctionBeginUser;
  PetscCall(OceanTestReference(ProductType(o->product), A, B, &R, &Bound));
  PetscCall(OceanTestCompare(C, R, Bound, what));
  PetscCall(MatDestroy(&R));
  PetscCall(MatDestroy(&Bound));
  PetscFunctionReturn(0);
}

/* y = C x on C's own (device) MatMult against the reference's, x with distinct entries: C's device copy holds the
   product, not only what its host copy says. */
static PetscErrorCode CheckMult(TestOptions *o, Mat A, Mat B, Mat C)
{
  Mat                R, Bound;
  Vec                x, y, xr, yr, yb;
  const PetscScalar *ya, *yra, *yba;
  PetscInt           n, lo, hi;
  PetscReal          worst = 0.0;
  MatType            type;

  PetscFunctionBeginUser;
  PetscCall(MatGetType(C, &type));
  PetscCall(OceanTestReference(ProductType(o->product), A, B, &R, &Bound));
  PetscCall(MatCreateVecs(C, &x, &y));
  PetscCall(MatCreateVecs(R, &xr, &yr));
  PetscCall(VecDuplicate(yr, &yb));
  PetscCall(VecGetOwnershipRange(x, &lo, &hi));
  for (PetscInt i = lo; i < hi; i++) {
    PetscCall(VecSetValue(x, i, 1.0 + (PetscScalar)(i % 7) / 8.0, INSERT_VALUES));
    PetscCall(VecSetValue(xr, i, 1.0 + (PetscScalar)(i % 7) / 8.0, INSERT_VALUES));
  }
  PetscCall(VecAssemblyBegin(x));
  PetscCall(VecAssemblyEnd(x));
  PetscCall(VecAssemblyBegin(xr));
  PetscCall(VecAssemblyEnd(xr));
  PetscCall(MatMult(C, x, y));
  PetscCall(MatMult(R, xr, yr));
  PetscCall(MatMult(Bound, xr, yb)); /* |A||B| |x|: the size of each entry's sum */
  PetscCall(VecGetLocalSize(y, &n));
  PetscCall(VecGetArrayRead(y, &ya));
  PetscCall(VecGetArrayRead(yr, &yra));
  PetscCall(VecGetArrayRead(yb, &yba));
  for (PetscInt i = 0; i < n; i++) {
    const PetscReal err = PetscAbsScalar(ya[i] - yra[i]), scale = PetscMax(PetscAbsScalar(yba[i]), 1e-300);
    worst = PetscMax(worst, err / scale);
  }
  PetscCall(VecRestoreArrayRead(y, &ya));
  PetscCall(VecRestoreArrayRead(yr, &yra));
  PetscCall(VecRestoreArrayRead(yb, &yba));
  PetscCheck(worst <= 1e-12, PETSC_COMM_SELF, PETSC_ERR_PLIB,
             "MatMult of the product (%s) differs from the reference's by %g relative to |A||B||x|", type,
             (double)worst);
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&xr));
  PetscCall(VecDestroy(&yr));
  PetscCall(VecDestroy(&yb));
  PetscCall(MatDestroy(&R));
  PetscCall(MatDestroy(&Bound));
  PetscFunctionReturn(0);
}

/* Every process must have run at least `least` more local products of the kind counted by `field`. */
static PetscErrorCode CheckCounter(MPI_Comm comm, PetscInt64 before, PetscInt64 after, PetscInt64 least,
                                   const char *what)
{
  PetscInt ok = (after - before >= least), all;

  PetscFunctionBeginUser;
  PetscCall(MPIU_Allreduce(&ok, &all, 1, MPIU_INT, MPI_MIN, comm));
  PetscCheck(all, comm, PETSC_ERR_PLIB,
             "%s: petsc-ocean did not run the local products (%" PetscInt64_FMT " -> %" PetscInt64_FMT
             " on some process)",
             what, before, after);
  PetscFunctionReturn(0);
}

static PetscErrorCode CheckStats(TestOptions *o, Mat C)
{
  OceanStats stats;
  PetscInt   size;
  int64_t    rows = 0;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)C), &size));
  if (size > 1 || o->maij_dof) PetscFunctionReturn(0); /* parallel and MAIJ products are checked through the counters */
  PetscCall(MatOceanProductGetStats(C, o->stage, &stats));
  for (int b = 0; b < OCEAN_NUM_BINS; b++) rows += stats.rows_per_bin[b];
  PetscCheck(rows == stats.nrows, PETSC_COMM_SELF, PETSC_ERR_PLIB,
             "rows per bin add up to %" PetscInt64_FMT ", not %" PetscInt64_FMT, (PetscInt64)rows,
             (PetscInt64)stats.nrows);
  PetscCheck(stats.esc_rows + stats.hash_rows + stats.dense_rows + stats.global_rows +
                 stats.rows_per_bin[OCEAN_BIN_EMPTY] + stats.rows_per_bin[OCEAN_BIN_HEAVY] ==
               stats.nrows,
             PETSC_COMM_SELF, PETSC_ERR_PLIB, "accumulator counts do not add up to %" PetscInt64_FMT " rows",
             (PetscInt64)stats.nrows);
  if (o->workflow[0]) {
    PetscBool match;
    PetscCall(PetscStrcmp(o->workflow, OceanWorkflowName(stats.workflow), &match));
    PetscCheck(match, PETSC_COMM_SELF, PETSC_ERR_PLIB, "workflow %s taken, %s expected (ER %g, CR %g, products/row %g)",
               OceanWorkflowName(stats.workflow), o->workflow, stats.er, stats.cr_sampled,
               stats.nrows ? (double)stats.products / (double)stats.nrows : 0.0);
  }
  if (o->expect_overflow)
    PetscCheck(stats.overflow_rows > 0, PETSC_COMM_SELF, PETSC_ERR_PLIB,
               "expected rows overflowing their estimate, found none");
  if (o->expect_heavy_levels)
    PetscCheck(stats.heavy_rows > 0 && stats.heavy_rows == stats.rows_per_bin[OCEAN_BIN_HEAVY] &&
                 stats.heavy_levels == o->expect_heavy_levels,
               PETSC_COMM_SELF, PETSC_ERR_PLIB,
               "heavy rows: %" PetscInt64_FMT " (%" PetscInt64_FMT " in the bin), %d levels; %" PetscInt_FMT
               " levels expected",
               (PetscInt64)stats.heavy_rows, (PetscInt64)stats.rows_per_bin[OCEAN_BIN_HEAVY], stats.heavy_levels,
               o->expect_heavy_levels);
  if (o->expect_row_chunks) {
    OceanBackend backend;
    PetscCall(MatOceanProductGetBackend(C, &backend));
    PetscCheck(backend == OCEAN_BACKEND_CUDA ? stats.row_chunks > 1 : stats.row_chunks == 0, PETSC_COMM_SELF,
               PETSC_ERR_PLIB, "%s backend: C made in %" PetscInt64_FMT " chunks of rows",
               backend == OCEAN_BACKEND_CUDA ? "CUDA" : "CPU", (PetscInt64)stats.row_chunks);
  }
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  TestOptions      o;
  Mat              A, B, Bm = NULL, C;
  OceanTestGen     ga, gb;
  MatOceanCounters c0, c1;
  MPI_Comm         comm;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(MatOceanInitializePackage());
  comm = PETSC_COMM_WORLD;
  PetscCall(PetscMemzero(&o, sizeof(o)));
  PetscCall(PetscStrcpy(o.product, "AB"));
  PetscCall(PetscStrcpy(o.api, "product"));
  o.expect_ocean = PETSC_TRUE;
  PetscCall(PetscOptionsGetString(NULL, NULL, "-product", o.product, sizeof(o.product), NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-api", o.api, sizeof(o.api), NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-expect_workflow", o.workflow, sizeof(o.workflow), NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-reuse", &o.reuse, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-sparsity_change", &o.sparsity_change, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-sketch_reuse", &o.sketch_reuse, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-expect_overflow", &o.expect_overflow, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-expect_row_chunks", &o.expect_row_chunks, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-expect_ocean", &o.expect_ocean, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-expect_no_copies", &o.expect_no_copies, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-expect_no_uploads", &o.expect_no_uploads, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-maij_dof", &o.maij_dof, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-expect_heavy_levels", &o.expect_heavy_levels, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-expect_stage", &o.stage, NULL));

  PetscCall(GenOperand("a", comm, &A, &ga));
  PetscCall(GenOperand("b", comm, &B, &gb));
  if (o.maij_dof) { /* P = MAIJ(B): A must have dof * rows(B) rows */
    Mat Baij;
    PetscCall(MatConvert(B, MATAIJ, MAT_INITIAL_MATRIX, &Baij));
    PetscCall(MatCreateMAIJ(Baij, o.maij_dof, &Bm));
    PetscCall(MatDestroy(&Baij));
    PetscCall(MatDestroy(&B));
    B = Bm;
  }

  {
    PetscLogDouble copies[2] = {0, 0};
    Mat            M[2]      = {A, B};

    if (o.expect_no_uploads) {
      PetscCall(OperandsToDevice(A, B));
      PetscCall(CopyCounts("-expect_no_uploads", 2, M, copies));
    }
    PetscCall(MatOceanGetCounters(&c0));
    PetscCall(RunProduct(&o, A, B, MAT_INITIAL_MATRIX, &C));
    PetscCall(MatOceanGetCounters(&c1));
#if defined(PETSC_HAVE_DEVICE)
    /* C's structure comes to the host (a host AIJ structure, as PETSc's own device products make), nothing goes up */
    PetscCheck(!o.expect_no_uploads || petsc_ctog_ct == copies[0], PETSC_COMM_SELF, PETSC_ERR_PLIB,
               "the initial product copied %g times to the device (expected none; %g times to the host)",
               (double)(petsc_ctog_ct - copies[0]), (double)(petsc_gtoc_ct - copies[1]));
#endif
  }
  if (o.expect_no_uploads) PetscCall(CheckMult(&o, A, B, C)); /* before any host read of C's values */
  PetscCall(Check(&o, A, B, C, "initial product"));
  if (o.expect_ocean) {
    PetscCall(CheckCounter(comm, c0.symbolic, c1.symbolic, 1, "initial product"));
    PetscCall(CheckStats(&o, C));
  }

  if (o.reuse) { /* numeric only: scaled values, then entirely new values in both operands */
    PetscLogDouble copies[2] = {0, 0};

    PetscCall(MatScale(A, 2.0)); /* on the device, for device matrices */
    PetscCall(MatOceanGetCounters(&c0));
    if (o.expect_no_copies) {
      Mat M[3] = {A, B, C};
      PetscCall(CopyCounts("-expect_no_copies", 3, M, copies));
    }
    PetscCall(RunProduct(&o, A, B, MAT_REUSE_MATRIX, &C));
    if (o.expect_no_copies) PetscCall(CheckNoCopies(copies));
    PetscCall(MatOceanGetCounters(&c1));
    PetscCall(Check(&o, A, B, C, "numeric after MatScale"));
    if (o.expect_ocean) PetscCall(CheckCounter(comm, c0.numeric, c1.numeric, 1, "numeric after MatScale"));
    PetscCheck(c1.resymbolic == c0.resymbolic && c1.symbolic == c0.symbolic, PETSC_COMM_SELF, PETSC_ERR_PLIB,
               "values-only change redid the symbolic phase");
    PetscCall(OceanTestRevalue(A, ga.seed + 100));
    if (!o.maij_dof) PetscCall(OceanTestRevalue(B, gb.seed + 200));
    PetscCall(RunProduct(&o, A, B, MAT_REUSE_MATRIX, &C));
    PetscCall(Check(&o, A, B, C, "numeric after new values"));
    if (o.expect_ocean && o.expect_row_chunks)
      PetscCall(CheckStats(&o, C)); /* the numeric calls ran the chunks again */
  }

  if (o.sparsity_change) { /* one new entry in A on every process that owns rows: C's structure changes */
    PetscInt rstart, rend, M, N;
    PetscCall(MatGetSize(A, &M, &N));
    PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
    PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
    if (rend > rstart) PetscCall(MatSetValue(A, rstart, (rstart + N / 2 + 1) % N, 0.75, ADD_VALUES));
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatOceanGetCounters(&c0));
    PetscCall(RunProduct(&o, A, B, MAT_REUSE_MATRIX, &C));
    PetscCall(MatOceanGetCounters(&c1));
    PetscCall(Check(&o, A, B, C, "numeric after a sparsity change"));
    if (o.expect_ocean) PetscCall(CheckCounter(comm, c0.resymbolic, c1.resymbolic, 1, "sparsity change"));
  }

  if (o.sketch_reuse) { /* a second product with the same B structure reuses B's sketches */
    Mat C2;
    PetscCall(MatOceanGetCounters(&c0));
    PetscCall(RunProduct(&o, A, B, MAT_INITIAL_MATRIX, &C2));
    PetscCall(MatOceanGetCounters(&c1));
    PetscCall(Check(&o, A, B, C2, "second product, same B"));
    PetscCheck(c1.sketches_reused > c0.sketches_reused && c1.sketches_built == c0.sketches_built, PETSC_COMM_SELF,
               PETSC_ERR_PLIB,
               "sketches of B: built %" PetscInt64_FMT " -> %" PetscInt64_FMT ", reused %" PetscInt64_FMT
               " -> %" PetscInt64_FMT,
               c0.sketches_built, c1.sketches_built, c0.sketches_reused, c1.sketches_reused);
    PetscCall(MatDestroy(&C2));
  }

  PetscCall(MatDestroy(&C));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscCall(OceanTestGenDestroy(&ga));
  PetscCall(OceanTestGenDestroy(&gb));
  PetscCall(PetscFinalize());
  return 0;
}
