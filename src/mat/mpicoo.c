/* The COO assembly of a parallel product C (PETSc's MPIAIJ "backend" product hands the local products' entries to
   MatSetPreallocationCOO() and their values to MatSetValuesCOO()), built in O(entries): a bucket by local row, short
   sorts within rows, the blocks' column indices set straight into their preallocation.  PETSc's own sorts every
   entry by row and column with a comparison sort, which took more of a 2-rank AMG setup than our local products.
   Only product matrices on the host take this route; any other matrix, and a device parent (whose COO values live on
   the device), keep the parent's. */
#include "mat/matocean.h"
#include <petscsf.h>

typedef struct {
  PetscCount  n;               /* the entries given to MatSetPreallocationCOO() */
  PetscCount *slot;            /* [n] where each entry's value goes: [0, nnz_diag) the diagonal block's values, then
                                  the off-diagonal block's; -1: ignored (a negative index) or sent to its owner */
  PetscCount        nsend;     /* entries of rows owned by other processes, in the order of the graph's leaves */
  PetscCount       *send_from; /* [nsend] their index among the n */
  PetscCount        nrecv;     /* entries other processes send us */
  PetscCount       *recv_slot; /* [nrecv] where each goes */
  PetscSF           sf;        /* leaves: our entries of remote rows; roots: the entries we receive */
  PetscScalar      *sendbuf, *recvbuf;
  PetscCount        nnz_diag, nnz_off;
  MatOceanStructure blocks[2]; /* the diagonal and off-diagonal blocks as the map was made for them */
} MatOceanCOO;

static PetscErrorCode MatOceanCOOFree(void *ptr)
{
  MatOceanCOO *coo = (MatOceanCOO *)ptr;

  PetscFunctionBegin;
  PetscCall(PetscFree(coo->slot));
  PetscCall(PetscFree(coo->send_from));
  PetscCall(PetscFree(coo->recv_slot));
  PetscCall(PetscFree2(coo->sendbuf, coo->recvbuf));
  PetscCall(PetscSFDestroy(&coo->sf));
  PetscCall(PetscFree(coo));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

static PetscErrorCode MatOceanCOOBlocks(Mat mat, MatOceanStructure blocks[2])
{
  Mat b[2];

  PetscFunctionBegin;
  PetscCall(MatMPIAIJGetSeqAIJ(mat, &b[0], &b[1], NULL));
  for (int k = 0; k < 2; k++) PetscCall(MatOceanGetStructure_Private(b[k], &blocks[k]));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* Sorts a row's entries by column, stably (equal columns keep their order: the values are summed in it).  Rows come
   as a few sorted runs (one per local product), mostly short: insertion sort, a merge sort when long and unsorted. */
static void MatOceanCOOSortRow(PetscInt *col, PetscCount *src, PetscCount len, PetscInt *tcol, PetscCount *tsrc)
{
  PetscCount k, sorted = 1;

  for (k = 1; k < len && sorted; k++) sorted = col[k - 1] <= col[k];
  if (sorted) return;
  if (len <= 32) {
    for (k = 1; k < len; k++) {
      const PetscInt   c = col[k];
      const PetscCount s = src[k];
      PetscCount       q = k;
      for (; q > 0 && col[q - 1] > c; q--) {
        col[q] = col[q - 1];
        src[q] = src[q - 1];
      }
      col[q] = c;
      src[q] = s;
    }
    return;
  }
  /* bottom-up merge sort, ping-ponging between the row and the scratch arrays */
  PetscInt   *a = col, *b = tcol;
  PetscCount *sa = src, *sb = tsrc;
  for (PetscCount width = 1; width < len; width *= 2) {
    for (PetscCount lo = 0; lo < len; lo += 2 * width) {
      const PetscCount mid = PetscMin(lo + width, len), hi = PetscMin(lo + 2 * width, len);
      PetscCount       p = lo, q = mid, o = lo;
      while (p < mid && q < hi) {
        if (a[q] < a[p]) {
          b[o]    = a[q];
          sb[o++] = sa[q++];
        } else {
          b[o]    = a[p];
          sb[o++] = sa[p++];
        }
      }
      for (; p < mid; p++, o++) b[o] = a[p], sb[o] = sa[p];
      for (; q < hi; q++, o++) b[o] = a[q], sb[o] = sa[q];
    }
    PetscInt   *t  = a;
    PetscCount *ts = sa;
    a = b, b = t, sa = sb, sb = ts;
  }
  if (a != col) {
    memcpy(col, a, (size_t)len * sizeof(*col));
    memcpy(src, sa, (size_t)len * sizeof(*src));
  }
}

/* An entry's kind: 0 ignored (a negative index), 1 in a row of ours, 2 in a row of another process. */
static inline int MatOceanCOOKind(PetscInt i, PetscInt j, PetscInt rstart, PetscInt rend)
{
  if (i < 0 || j < 0) return 0;
  return i >= rstart && i < rend ? 1 : 2;
}

/* The entries of rows other processes own go to their owner: returns the graph (NULL where no process sends any),
   which of ours are sent in its leaves' order, and the received rows and columns.  Collective. */
static PetscErrorCode MatOceanCOOExchange(Mat mat, PetscCount n, const PetscInt coo_i[], const PetscInt coo_j[],
                                          PetscInt rstart, PetscInt rend, PetscCount nremote, MatOceanCOO *coo,
                                          PetscInt **recv_i, PetscInt **recv_j)
{
  MPI_Comm     comm = PetscObjectComm((PetscObject)mat);
  PetscMPIInt  size, owner;
  PetscInt    *per_owner, *fill, *send_i, *send_j, nranks = 0, nreceived = 0, *counts, *offsets, any;
  PetscSFNode *to_owner, *leaves;
  PetscSF      sf1;

  PetscFunctionBegin;
  *recv_i = *recv_j = NULL;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  if (size == 1) PetscFunctionReturn(OCEAN_PETSC_OK);
  any = nremote > PETSC_MAX_INT ? 2 : nremote > 0; /* AB sends nothing: no graph then (its setup is collective) */
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &any, 1, MPIU_INT, MPI_MAX, comm));
  PetscCheck(
    any < 2, comm, PETSC_ERR_SUP,
    "A process has more COO entries of rows owned by other processes than PetscInt counts (here %" PetscCount_FMT ")",
    nremote);
  if (!any) PetscFunctionReturn(OCEAN_PETSC_OK);
  /* the remote entries grouped by owner, in their order within each group */
  PetscCall(PetscCalloc2(size, &per_owner, size, &fill));
  for (PetscCount k = 0; k < n; k++)
    if (MatOceanCOOKind(coo_i[k], coo_j[k], rstart, rend) == 2) {
      PetscCall(PetscLayoutFindOwner(mat->rmap, coo_i[k], &owner));
      per_owner[owner]++;
    }
  for (PetscMPIInt r = 0; r < size; r++) {
    fill[r] = r ? fill[r - 1] + per_owner[r - 1] : 0;
    if (per_owner[r]) nranks++;
  }
  coo->nsend = nremote;
  PetscCall(PetscMalloc1(nremote, &coo->send_from));
  PetscCall(PetscMalloc2(nremote, &send_i, nremote, &send_j));
  for (PetscCount k = 0; k < n; k++)
    if (MatOceanCOOKind(coo_i[k], coo_j[k], rstart, rend) == 2) {
      PetscInt q;
      PetscCall(PetscLayoutFindOwner(mat->rmap, coo_i[k], &owner));
      q                 = fill[owner]++;
      coo->send_from[q] = k;
      send_i[q]         = coo_i[k];
      send_j[q]         = coo_j[k];
    }
  /* where our entries start among each owner's received ones: a fetch-and-add on one counter per process */
  PetscCall(PetscMalloc1(nranks, &to_owner)); /* the graph's own */
  PetscCall(PetscMalloc2(nranks, &counts, nranks, &offsets));
  for (PetscMPIInt r = 0, t = 0; r < size; r++)
    if (per_owner[r]) {
      to_owner[t].rank  = r;
      to_owner[t].index = 0;
      counts[t++]       = per_owner[r];
    }
  PetscCall(PetscSFCreate(comm, &sf1));
  PetscCall(PetscSFSetGraph(sf1, 1, nranks, NULL, PETSC_OWN_POINTER, to_owner, PETSC_OWN_POINTER));
  PetscCall(PetscSFFetchAndOpBegin(sf1, MPIU_INT, &nreceived, counts, offsets, MPI_SUM));
  PetscCall(PetscSFFetchAndOpEnd(sf1, MPIU_INT, &nreceived, counts, offsets, MPI_SUM));
  PetscCall(PetscSFDestroy(&sf1));
  PetscCall(PetscMalloc1(nremote, &leaves));
  for (PetscMPIInt r = 0, t = 0, q = 0; r < size; r++)
    if (per_owner[r]) {
      for (PetscInt e = 0; e < per_owner[r]; e++, q++) {
        leaves[q].rank  = r;
        leaves[q].index = offsets[t] + e;
      }
      t++;
    }
  PetscCall(PetscFree2(counts, offsets));
  PetscCall(PetscFree2(per_owner, fill));
  coo->nrecv = nreceived;
  PetscCall(PetscSFCreate(comm, &coo->sf));
  PetscCall(PetscSFSetGraph(coo->sf, nreceived, (PetscInt)nremote, NULL, PETSC_OWN_POINTER, leaves, PETSC_OWN_POINTER));
  PetscCall(PetscMalloc2(nreceived, recv_i, nreceived, recv_j));
  PetscCall(PetscSFReduceBegin(coo->sf, MPIU_INT, send_i, *recv_i, MPI_REPLACE));
  PetscCall(PetscSFReduceEnd(coo->sf, MPIU_INT, send_i, *recv_i, MPI_REPLACE));
  PetscCall(PetscSFReduceBegin(coo->sf, MPIU_INT, send_j, *recv_j, MPI_REPLACE));
  PetscCall(PetscSFReduceEnd(coo->sf, MPIU_INT, send_j, *recv_j, MPI_REPLACE));
  PetscCall(PetscFree2(send_i, send_j));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* Composed as MatSetPreallocationCOO_C over the host parent's: for a product matrix, C's structure from the entries
   (repeated entries summed, negative indices ignored, remote rows sent to their owner) and the map of each entry to
   its place; any other matrix gets the parent's. */
static PetscErrorCode MatSetPreallocationCOO_MPIAIJOcean(Mat mat, PetscCount n, PetscInt coo_i[], PetscInt coo_j[])
{
  Mat_OceanParent *parent = &MatOceanParents[1];
  MatOceanCOO     *coo;
  PetscInt         rstart, rend, cstart, cend, m, M, N, *recv_i = NULL, *recv_j = NULL, *d_nnz, *o_nnz, *col;
  PetscInt        *tcol, *diag_cols, *off_cols, nad, nao;
  PetscCount       nlocal = 0, nremote = 0, ne, *rowptr, *src, *tsrc, longest = 0, nnz_diag = 0, nnz_off = 0;
  const PetscInt  *ai, *aj, *garray;
  PetscBool        done, nooffproc;
  Mat              Ad, Ao;
  PetscScalar     *vals;

  PetscFunctionBegin;
  PetscCheck(parent->setpreallocationcoo, PETSC_COMM_SELF, PETSC_ERR_PLIB,
             "No parent MatSetPreallocationCOO() for a matrix of type %s", ((PetscObject)mat)->type_name);
  PetscCall(PetscObjectCompose((PetscObject)mat, "MatOceanCOO", NULL));
  if (!mat->product) {
    PetscCall((*parent->setpreallocationcoo)(mat, n, coo_i, coo_j));
    PetscFunctionReturn(OCEAN_PETSC_OK);
  }
  PetscCall(MatGetOwnershipRange(mat, &rstart, &rend));
  PetscCall(MatGetOwnershipRangeColumn(mat, &cstart, &cend));
  PetscCall(MatGetSize(mat, &M, &N));
  m = rend - rstart;
  PetscCall(PetscNew(&coo));
  coo->n = n;
  PetscCall(PetscCalloc1(m + 1, &rowptr));
  for (PetscCount k = 0; k < n; k++) { /* checked, and counted by row */
    const PetscInt i = coo_i[k], j = coo_j[k];
    const int      kind = MatOceanCOOKind(i, j, rstart, rend);
    if (!kind) continue;
    PetscCheck(i < M && j < N, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
               "COO entry %" PetscCount_FMT " at row %" PetscInt_FMT ", column %" PetscInt_FMT
               " is outside the %" PetscInt_FMT " x %" PetscInt_FMT " matrix of type %s",
               k, i, j, M, N, ((PetscObject)mat)->type_name);
    if (kind == 1) {
      rowptr[i - rstart + 1]++;
      nlocal++;
    } else {
      PetscCheck(!mat->nooffprocentries, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT,
                 "MAT_NO_OFF_PROC_ENTRIES is set but COO entry %" PetscCount_FMT " is in row %" PetscInt_FMT
                 ", owned by another process",
                 k, i);
      nremote++;
    }
  }
  PetscCall(MatOceanCOOExchange(mat, n, coo_i, coo_j, rstart, rend, nremote, coo, &recv_i, &recv_j));

  /* every entry of our rows (ours, then the received ones) in a bucket per row */
  ne = nlocal + coo->nrecv;
  PetscCall(PetscMalloc2(ne, &col, ne, &src));
  for (PetscCount r = 0; r < coo->nrecv; r++) {
    PetscCheck(recv_i[r] >= rstart && recv_i[r] < rend, PETSC_COMM_SELF, PETSC_ERR_PLIB,
               "Received a COO entry of row %" PetscInt_FMT ", outside this process's rows [%" PetscInt_FMT
               ", %" PetscInt_FMT ")",
               recv_i[r], rstart, rend);
    rowptr[recv_i[r] - rstart + 1]++;
  }
  for (PetscInt i = 0; i < m; i++) {
    longest = PetscMax(longest, rowptr[i + 1]);
    rowptr[i + 1] += rowptr[i];
  }
  PetscCall(PetscMalloc1(n, &coo->slot));
  for (PetscCount k = 0; k < n; k++) {
    coo->slot[k] = -1; /* its place, below, if in a row of ours */
    if (MatOceanCOOKind(coo_i[k], coo_j[k], rstart, rend) == 1) {
      const PetscCount p = rowptr[coo_i[k] - rstart]++;
      col[p]             = coo_j[k];
      src[p]             = k;
    }
  }
  for (PetscCount r = 0; r < coo->nrecv; r++) {
    const PetscCount p = rowptr[recv_i[r] - rstart]++;
    col[p]             = recv_j[r];
    src[p]             = n + r;
  }
  for (PetscInt i = m; i > 0; i--) rowptr[i] = rowptr[i - 1];
  rowptr[0] = 0;
  PetscCall(PetscFree2(recv_i, recv_j));

  /* each row sorted by column; its distinct columns are C's nonzeros, in the diagonal or the off-diagonal block */
  PetscCall(PetscMalloc2(longest, &tcol, longest, &tsrc));
  PetscCall(PetscMalloc2(m, &d_nnz, m, &o_nnz));
  for (PetscInt i = 0; i < m; i++) {
    const PetscCount b = rowptr[i], e = rowptr[i + 1];
    PetscInt         d = 0, o = 0;
    MatOceanCOOSortRow(col + b, src + b, e - b, tcol, tsrc);
    for (PetscCount p = b; p < e; p++)
      if (p == b || col[p] != col[p - 1]) {
        if (col[p] >= cstart && col[p] < cend) d++;
        else o++;
      }
    d_nnz[i] = d;
    o_nnz[i] = o;
    nnz_diag += d;
    nnz_off += o;
  }
  PetscCall(PetscFree2(tcol, tsrc));
  PetscCheck(nnz_diag <= PETSC_MAX_INT && nnz_off <= PETSC_MAX_INT, PETSC_COMM_SELF, PETSC_ERR_SUP,
             "The product's local blocks have %" PetscCount_FMT " and %" PetscCount_FMT
             " nonzeros: more than PetscInt counts",
             nnz_diag, nnz_off);
  PetscCall(PetscMalloc1(coo->nrecv, &coo->recv_slot));
  PetscCall(PetscMalloc2(nnz_diag, &diag_cols, nnz_off, &off_cols));
  {
    PetscCount pd = 0, po = 0, place = -1;
    for (PetscInt i = 0; i < m; i++)
      for (PetscCount p = rowptr[i]; p < rowptr[i + 1]; p++) {
        if (p == rowptr[i] || col[p] != col[p - 1]) {
          if (col[p] >= cstart && col[p] < cend) {
            diag_cols[pd] = col[p] - cstart;
            place         = pd++;
          } else {
            off_cols[po] = col[p];
            place        = nnz_diag + po++;
          }
        }
        if (src[p] < n) coo->slot[src[p]] = place;
        else coo->recv_slot[src[p] - n] = place;
      }
  }
  PetscCall(PetscFree(rowptr));
  PetscCall(PetscFree2(col, src));

  /* the blocks preallocated exactly and given their columns (the off-diagonal block's global ones, which the
     assembly numbers by its sorted list of columns: the order within each row stays) */
  PetscCall(MatMPIAIJSetPreallocation(mat, 0, d_nnz, 0, o_nnz));
  PetscCall(PetscFree2(d_nnz, o_nnz));
  PetscCall(MatMPIAIJGetSeqAIJ(mat, &Ad, &Ao, NULL));
  PetscCall(MatSeqAIJSetColumnIndices(Ad, diag_cols));
  PetscCall(MatSeqAIJSetColumnIndices(Ao, off_cols));
  PetscCall(MatSeqAIJGetArrayWrite(Ad, &vals));
  PetscCall(PetscArrayzero(vals, nnz_diag));
  PetscCall(MatSeqAIJRestoreArrayWrite(Ad, &vals));
  PetscCall(MatSeqAIJGetArrayWrite(Ao, &vals));
  PetscCall(PetscArrayzero(vals, nnz_off));
  PetscCall(MatSeqAIJRestoreArrayWrite(Ao, &vals));
  nooffproc             = mat->nooffprocentries;
  mat->nooffprocentries = PETSC_TRUE; /* nothing stashed: skip the stash's exchange */
  PetscCall(MatAssemblyBegin(mat, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(mat, MAT_FINAL_ASSEMBLY));
  mat->nooffprocentries = nooffproc;

  /* the places above hold only if the assembly kept every block's entries where they were given */
  PetscCall(MatMPIAIJGetSeqAIJ(mat, &Ad, &Ao, &garray));
  PetscCall(MatGetRowIJ(Ad, 0, PETSC_FALSE, PETSC_FALSE, &nad, &ai, &aj, &done));
  PetscCheck(done && nad == m && ai[m] == nnz_diag, PETSC_COMM_SELF, PETSC_ERR_PLIB,
             "The diagonal block of %s has %" PetscInt_FMT " nonzeros after assembly, %" PetscCount_FMT " expected",
             ((PetscObject)mat)->type_name, done ? ai[nad] : -1, nnz_diag);
  for (PetscCount p = 0; p < nnz_diag; p++)
    PetscCheck(aj[p] == diag_cols[p], PETSC_COMM_SELF, PETSC_ERR_PLIB,
               "The diagonal block of %s was reordered by its assembly", ((PetscObject)mat)->type_name);
  PetscCall(MatRestoreRowIJ(Ad, 0, PETSC_FALSE, PETSC_FALSE, &nad, &ai, &aj, &done));
  PetscCall(MatGetRowIJ(Ao, 0, PETSC_FALSE, PETSC_FALSE, &nao, &ai, &aj, &done));
  PetscCheck(done && nao == m && ai[m] == nnz_off, PETSC_COMM_SELF, PETSC_ERR_PLIB,
             "The off-diagonal block of %s has %" PetscInt_FMT " nonzeros after assembly, %" PetscCount_FMT " expected",
             ((PetscObject)mat)->type_name, done ? ai[nao] : -1, nnz_off);
  for (PetscCount p = 0; p < nnz_off; p++)
    PetscCheck(garray[aj[p]] == off_cols[p], PETSC_COMM_SELF, PETSC_ERR_PLIB,
               "The off-diagonal block of %s was reordered by its assembly", ((PetscObject)mat)->type_name);
  PetscCall(MatRestoreRowIJ(Ao, 0, PETSC_FALSE, PETSC_FALSE, &nao, &ai, &aj, &done));
  PetscCall(PetscFree2(diag_cols, off_cols));

  coo->nnz_diag = nnz_diag;
  coo->nnz_off  = nnz_off;
  PetscCall(MatOceanCOOBlocks(mat, coo->blocks));
  PetscCall(PetscMalloc2(coo->nsend, &coo->sendbuf, coo->nrecv, &coo->recvbuf));
  PetscCall(MatOceanComposePointer_Private((PetscObject)mat, "MatOceanCOO", coo, MatOceanCOOFree));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* Composed as MatSetValuesCOO_C over the host parent's: the values of the entries given to our preallocation. */
static PetscErrorCode MatSetValuesCOO_MPIAIJOcean(Mat mat, const PetscScalar v[], InsertMode imode)
{
  Mat_OceanParent  *parent = &MatOceanParents[1];
  MatOceanCOO      *coo;
  MatOceanStructure now[2];
  Mat               Ad, Ao;
  PetscScalar      *ad, *ao;

  PetscFunctionBegin;
  PetscCall(MatOceanQueryPointer_Private((PetscObject)mat, "MatOceanCOO", (void **)&coo));
  if (!coo) {
    PetscCheck(parent->setvaluescoo, PETSC_COMM_SELF, PETSC_ERR_PLIB,
               "No parent MatSetValuesCOO() for a matrix of type %s", ((PetscObject)mat)->type_name);
    PetscCall((*parent->setvaluescoo)(mat, v, imode));
    PetscFunctionReturn(OCEAN_PETSC_OK);
  }
  PetscCall(MatOceanCOOBlocks(mat, now));
  PetscCheck(MatOceanStructureEqual_Private(&now[0], &coo->blocks[0]) &&
               MatOceanStructureEqual_Private(&now[1], &coo->blocks[1]),
             PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE,
             "The nonzero structure of %s changed since MatSetPreallocationCOO(): call it again",
             ((PetscObject)mat)->type_name);
  for (PetscCount q = 0; q < coo->nsend; q++) coo->sendbuf[q] = v[coo->send_from[q]];
  if (coo->sf) PetscCall(PetscSFReduceBegin(coo->sf, MPIU_SCALAR, coo->sendbuf, coo->recvbuf, MPI_REPLACE));
  PetscCall(MatMPIAIJGetSeqAIJ(mat, &Ad, &Ao, NULL));
  PetscCall(MatSeqAIJGetArray(Ad, &ad));
  PetscCall(MatSeqAIJGetArray(Ao, &ao));
  if (imode == INSERT_VALUES) { /* every nonzero has an entry: the sums start from zero */
    PetscCall(PetscArrayzero(ad, coo->nnz_diag));
    PetscCall(PetscArrayzero(ao, coo->nnz_off));
  }
  for (PetscCount k = 0; k < coo->n; k++) {
    const PetscCount p = coo->slot[k];
    if (p < 0) continue;
    if (p < coo->nnz_diag) ad[p] += v[k];
    else ao[p - coo->nnz_diag] += v[k];
  }
  if (coo->sf) PetscCall(PetscSFReduceEnd(coo->sf, MPIU_SCALAR, coo->sendbuf, coo->recvbuf, MPI_REPLACE));
  for (PetscCount r = 0; r < coo->nrecv; r++) {
    const PetscCount p = coo->recv_slot[r];
    if (p < coo->nnz_diag) ad[p] += coo->recvbuf[r];
    else ao[p - coo->nnz_diag] += coo->recvbuf[r];
  }
  PetscCall(MatSeqAIJRestoreArray(Ad, &ad));
  PetscCall(MatSeqAIJRestoreArray(Ao, &ao));
  PetscFunctionReturn(OCEAN_PETSC_OK);
}

/* Ours composed over the host parent's COO assembly (kept, and given back on detach); a device parent keeps its own,
   whose values live on the device. */
PetscErrorCode MatOceanComposeCOO_Private(Mat A, MatType parent_type, PetscBool attach)
{
  Mat_OceanParent *parent                                             = &MatOceanParents[1];
  PetscErrorCode (*prealloc)(Mat, PetscCount, PetscInt[], PetscInt[]) = NULL;
  PetscErrorCode (*setvalues)(Mat, const PetscScalar[], InsertMode)   = NULL;
  PetscBool host;

  PetscFunctionBegin;
  PetscCall(PetscStrcmp(parent_type, MATMPIAIJ, &host));
  if (!host) PetscFunctionReturn(OCEAN_PETSC_OK);
  if (attach) {
    PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatSetPreallocationCOO_C", &prealloc));
    PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatSetValuesCOO_C", &setvalues));
    if (!prealloc || !setvalues) PetscFunctionReturn(OCEAN_PETSC_OK);
    if (prealloc != MatSetPreallocationCOO_MPIAIJOcean) parent->setpreallocationcoo = prealloc;
    if (setvalues != MatSetValuesCOO_MPIAIJOcean) parent->setvaluescoo = setvalues;
    PetscCall(
      PetscObjectComposeFunction((PetscObject)A, "MatSetPreallocationCOO_C", MatSetPreallocationCOO_MPIAIJOcean));
    PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSetValuesCOO_C", MatSetValuesCOO_MPIAIJOcean));
  } else if (parent->setpreallocationcoo) {
    PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSetPreallocationCOO_C", parent->setpreallocationcoo));
    PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSetValuesCOO_C", parent->setvaluescoo));
    PetscCall(PetscObjectCompose((PetscObject)A, "MatOceanCOO", NULL));
  }
  PetscFunctionReturn(OCEAN_PETSC_OK);
}
