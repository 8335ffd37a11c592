/*
  transpose.c - host transposes, made over the threads and shared by a context's plans (core/transpose.h).
*/
#include "core/context.h"

/*
  The transpose's rows (T->rowptr, colidx, values) over up to nt threads, each a block of M's rows in order:
  thread k's entries of column j go after those of the threads before it, so every row of the transpose comes out
  sorted whatever the thread count.  cursor: nt x ncols.
*/
static void OceanTransposeScatter(OceanHostTranspose *T, const OceanCSR *M, int nt, int64_t *cursor)
{
  const int64_t nc = M->ncols;

#pragma omp parallel num_threads(nt)
  {
    const int     team = OceanTeamSize(), k = OceanThreadNum(); /* the team OpenMP gave, at most nt */
    const int64_t lo = M->nrows * k / team, hi = M->nrows * (k + 1) / team;
    int64_t      *cur = cursor + (int64_t)k * nc, i, t, j;

    memset(cur, 0, (size_t)nc * sizeof(int64_t));
    for (t = M->rowptr[lo]; t < M->rowptr[hi]; t++) cur[M->colidx[t]]++;
#pragma omp barrier
#pragma omp          single
    { /* counts -> starts, column by column and thread by thread within a column; the row offsets of T */
      int64_t s    = 0, q;
      T->rowptr[0] = 0;
      for (j = 0; j < nc; j++) {
                 for (q = 0; q < team; q++) {
                   const int64_t n    = cursor[q * nc + j];
                   cursor[q * nc + j] = s;
                   s += n;
        }
                 T->rowptr[j + 1] = s;
      }
    }
    for (i = lo; i < hi; i++)
      for (t = M->rowptr[i]; t < M->rowptr[i + 1]; t++) {
                 const int64_t d = cur[M->colidx[t]]++;
                 T->colidx[d]    = (int32_t)i;
                 T->values[d]    = M->values[t];
      }
  }
}

static void OceanHostTransposeFree(OceanHostTranspose *T)
{
  OceanFree(T->rowptr);
  OceanFree(T->colidx);
  OceanFree(T->values);
  OceanFree(T);
}

/* The threads the transpose of M takes: while their cursors (nt x ncols) cost at most what the transpose itself does.
 */
static int OceanTransposeThreads(const OceanCSR *M)
{
  int nt = OceanMaxThreads();
  while (nt > 1 && ((double)nt * (double)M->ncols > (double)OceanCSRNnz(M) || M->nrows < 64 * nt)) nt--;
  return nt;
}

/* T's rows made again from M (its structure as before, its values M's): no permutation is kept for a later gather,
   which would take 8 bytes per entry for as long as the transpose lives. */
static OceanError OceanHostTransposeFill(OceanHostTranspose *T, const OceanCSR *M)
{
  const int nt = OceanTransposeThreads(M);
  int64_t  *next;

  OceanCall(OceanMalloc((int64_t)nt * M->ncols, &next, "transpose cursors"));
  OceanTransposeScatter(T, M, nt, next);
  OceanFree(next);
  T->values_id = M->values_id;
  return OCEAN_SUCCESS;
}

/* A new transpose of M, with M's values. */
static OceanError OceanHostTransposeCreate(const OceanCSR *M, OceanHostTranspose **out)
{
  const int64_t       nnz = OceanCSRNnz(M);
  OceanHostTranspose *T;
  OceanError          err;

  OceanCall(OceanCalloc(1, &T, "transpose"));
  err = OceanCalloc(M->ncols + 1, &T->rowptr, "transpose row offsets");
  if (!err) err = OceanMalloc(nnz, &T->colidx, "transpose column indices");
  if (!err) err = OceanMalloc(nnz, &T->values, "transpose values");
  if (!err) err = OceanHostTransposeFill(T, M);
  if (err) {
    OceanHostTransposeFree(T);
    return err;
  }
  T->id    = M->structure_id;
  T->nrows = M->nrows;
  T->ncols = M->ncols;
  T->nnz   = nnz;
  T->refs  = 1;
  *out     = T;
  return OCEAN_SUCCESS;
}

static int OceanHostTransposeOf(const OceanHostTranspose *T, const OceanCSR *M)
{
  return T && T->id && T->id == M->structure_id && T->nrows == M->nrows && T->ncols == M->ncols &&
         T->nnz == OceanCSRNnz(M);
}

void OceanHostTransposeRelease(OceanContext ctx, OceanHostTranspose **T)
{
  OceanHostTranspose **link;

  if (!*T) return;
  if (--(*T)->refs == 0) {
    for (link = &ctx->transposes; *link; link = &(*link)->next)
      if (*link == *T) {
        *link = (*T)->next;
        break;
      }
    OceanHostTransposeFree(*T);
  }
  *T = NULL;
}

OceanError OceanHostTransposeAcquire(OceanContext ctx, OceanHostTranspose **T, const OceanCSR *M, OceanCSR *MT)
{
  OceanHostTranspose *S    = *T;
  int                 made = 0;

  if (!OceanHostTransposeOf(S, M)) {
    OceanHostTransposeRelease(ctx, T);
    for (S = M->structure_id ? ctx->transposes : NULL; S && !OceanHostTransposeOf(S, M); S = S->next) {}
    if (S) {
      S->refs++;
      ctx->transposes_shared++;
    } else {
      OceanCall(OceanHostTransposeCreate(M, &S));
      ctx->transposes_built++;
      made = 1;
      if (S->id) { /* a known structure: other plans may share it */
        S->next         = ctx->transposes;
        ctx->transposes = S;
      }
    }
    *T = S;
  }
  /* the source's values, unless it says they are the ones taken last */
  if (!made && (!M->values_id || M->values_id != S->values_id)) OceanCall(OceanHostTransposeFill(S, M));
  memset(MT, 0, sizeof(*MT));
  MT->nrows        = M->ncols;
  MT->ncols        = M->nrows;
  MT->rowptr       = S->rowptr;
  MT->colidx       = S->colidx;
  MT->values       = S->values;
  MT->structure_id = OceanDeriveStructureId(M->structure_id, 1, OCEAN_TAG_TRANSPOSE);
  MT->values_id    = M->values_id ? OceanDeriveStructureId(M->values_id, 1, OCEAN_TAG_TRANSPOSE) : 0;
  return OCEAN_SUCCESS;
}
