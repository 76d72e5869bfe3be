/*
 * Lesson 5: matrix multiplication.
 *
 * c = a @ b, c[i][j] = sum over p of a[i][p] * b[p][j], with a (m,k),
 * b (k,n) and c (m,n).  It costs 2*m*n*k flops on m*k + k*n + m*n numbers:
 * for large matrices each number is used many times, so a good matmul is
 * limited by arithmetic, not by memory.  The textbook triple loop does not
 * get there.  Per multiply-add it loads one element of a and one of b, and
 * reuses nothing from registers; walking a column of b touches one cache
 * line per element, and once the matrices outgrow the caches every load
 * goes to main memory.  The running sum is also one chain of dependent
 * adds, so even the adds cannot overlap.
 *
 * nd_matmul_naive is that triple loop: the definition, and the baseline.
 * nd_matmul is the same product tiled as BLAS libraries tile it (Goto's
 * algorithm, as in BLIS and OpenBLAS), in plain C, and runs a hundred
 * times faster or more on large matrices:
 *
 *   - Register blocking.  A micro-kernel keeps an MR x NR block of c in
 *     registers for the whole k loop.  Per step of k it loads MR values of
 *     a and NR of b and does MR * NR multiply-adds with them.
 *   - Cache blocking.  k is cut into slices of KC, m into blocks of MC, n
 *     into blocks of NC, so that what the micro-kernel reads again and
 *     again stays in a cache: one KC x NR sliver of b in L1, one MC x KC
 *     block of a in L2, one KC x NC panel of b in L3.
 *   - Packing.  Before use, each block is copied from its strided view
 *     into a contiguous buffer, in exactly the order the micro-kernel
 *     reads it.  The copy costs O(m*k + k*n) against O(m*n*k) arithmetic,
 *     and it makes the layout of the inputs irrelevant: a transposed view,
 *     negative strides, a stride-0 broadcast all run at full speed, and
 *     the micro-kernel only ever sees unit-stride data.
 *
 * Leading axes are batch axes and broadcast as in NumPy's matmul:
 * (2,1,m,k) @ (3,k,n) -> (2,3,m,n).  The public functions broadcast a and
 * b to the batch shape of c (lesson 1's nd_broadcast_to: stretched axes get
 * stride 0, nothing is copied), and the kernels walk the batch positions
 * with lesson 2's nd_iter.
 *
 * Accuracy.  Both versions accumulate in float.  Each c[i][j] is a sum of
 * k products, so its error is at most about k * FLT_EPSILON * sum over p
 * of |a[i][p] * b[p][j]| (the standard bound for a dot product).  The
 * tiled version sums each slice of KC products on its own and then adds
 * the slices, which tightens the bound to about (KC + k/KC) * FLT_EPSILON
 * * the same sum.  The two versions need not agree bit for bit.
 */
#include "internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for any shape printed by nd_shape_str. */
#define SHAPE_STR 200

/* ------------------------------------------------------------------------ */
/* Matrices of a batch                                                      */
/* ------------------------------------------------------------------------ */

/* A (rows, cols) matrix read through strides, like a 2-D nd_array:
 * element (i, j) is data[offset + i * rs + j * cs].  Strides are in
 * elements and may be negative or 0. */
typedef struct {
    const float *data;
    int64_t offset, rows, cols, rs, cs;
} matrix;

/* The matrix at batch position it->index of v, a view whose last two axes
 * are the matrix and whose other axes are the iterator's. */
static matrix matrix_at(const nd_array *v, const nd_iter *it)
{
    int d = v->ndim;
    matrix x = { nd_data(v), v->offset, v->shape[d - 2], v->shape[d - 1],
                 v->strides[d - 2], v->strides[d - 1] };
    for (int k = 0; k < it->ndim; k++)
        x.offset += it->index[k] * v->strides[k];
    return x;
}

/* Buffers for the packed blocks of the tiled product (see panels_new). */
typedef struct {
    float *a, *b;
} panels;

/* c = a @ b for one matrix of the batch, c compact: naive_2d or tiled_2d.
 * w is packing space for tiled_2d; naive_2d packs nothing. */
typedef nd_status product_fn(const matrix *a, const matrix *b, float *c, const panels *w);

static int64_t min64(int64_t x, int64_t y) { return x < y ? x : y; }

/* ------------------------------------------------------------------------ */
/* The naive product                                                        */
/* ------------------------------------------------------------------------ */

//@ snippet naive_2d
/* c = a @ b for one matrix of the batch: a (m,k), b (k,n), any strides;
 * c (m,n) compact, row stride n. */
static nd_status naive_2d(const matrix *a, const matrix *b, float *c, const panels *w)
{
    (void)w;
    /* TODO (lesson 5): write naive_2d. */
    /* c[i*n + j] = sum over p of a(i,p) * b(p,j), where element (i,j)
     * of a matrix x is x->data[x->offset + i*x->rs + j*x->cs]. */
    (void)a; (void)b; (void)c;
    return nd_not_implemented("nd_matmul_naive", 5);
}
//@ end snippet naive_2d

/* ------------------------------------------------------------------------ */
/* The tiled product                                                        */
/* ------------------------------------------------------------------------ */

/* The micro-kernel's block of c: MR rows of NR floats.  With AVX-512 (as
 * on the workbook's reference machine, a Zen 5 core, built with
 * -O3 -march=native), NR = 32 floats is two 512-bit vectors and the 12 x 32
 * block is 24 vector accumulators: with 2 vectors of b and one broadcast
 * value of a, 27 of the 32 vector registers.  Each step of k then loads 2
 * vectors and 12 floats for 24 vector multiply-adds, few enough loads to
 * keep both multiply-add units busy.  Measured: 12 x 32 at the top, 8 x 32
 * and 14 x 32 within 3%, 6 x 48 and 4 x 64 a little behind.  With NR = 16
 * GCC 12 vectorised the k loop instead and ran 15 times slower: after
 * changing MR or NR, time it or read the assembly (gcc -S).  Any values
 * give correct results, with any compiler flags. */
#define MR 12
#define NR 32
/* Cache blocks, in elements.  One KC x NR sliver of packed b (32 KiB)
 * stays in the 48 KiB L1 while the micro-kernel sweeps all the slivers of
 * packed a; the MC x KC block of a (264 KiB) stays in the 1 MiB L2; the
 * KC x NC panel of b (up to 4 MiB) in L3.  MC is a multiple of MR, NC of
 * NR.  At 1024^3, KC from 256 to 512 and MC from 96 to 384 all measured
 * within a few percent of each other. */
#define KC 256
#define MC 264
#define NC 4096

/* Packed blocks start on a cache line: the micro-kernel's vector loads of
 * b then never straddle two lines. */
#define PANEL_ALIGN 64

//@ snippet pack
/* Copy the mc x kc block of a at (i0, p0) into dst, as slivers of MR rows:
 * sliver s holds rows s*MR .. s*MR+MR-1, column by column (MR floats per
 * column, kc columns).  Rows past mc are zeros: the micro-kernel always
 * computes a whole MR x NR block, from defined values, and the rows it
 * computes from padding are never written back. */
static void pack_a(const matrix *a, int64_t i0, int64_t p0, int64_t mc, int64_t kc,
                   float *restrict dst)
{
    /* TODO (lesson 5): write pack_a. */
    /* For each sliver of MR rows, for each column p: MR floats, the
     * rows past mc zero. */
    (void)a; (void)i0; (void)p0; (void)mc; (void)kc; (void)dst;
}

/* Copy the kc x nc block of b at (p0, j0) into dst, as slivers of NR
 * columns: sliver t holds columns t*NR .. t*NR+NR-1, row by row (NR floats
 * per row, kc rows), the columns past nc zero. */
static void pack_b(const matrix *b, int64_t p0, int64_t j0, int64_t kc, int64_t nc,
                   float *restrict dst)
{
    /* TODO (lesson 5): write pack_b. */
    /* For each sliver of NR columns, for each row p: NR floats, the
     * columns past nc zero. */
    (void)b; (void)p0; (void)j0; (void)kc; (void)nc; (void)dst;
}
//@ end snippet pack

//@ snippet micro_kernel
/* c[0..mr-1][0..nr-1] (row stride ldc) += the product of a packed sliver
 * of a (kc columns of MR) and one of b (kc rows of NR).
 *
 * Plain C that the compiler turns into the kernel a BLAS writes in
 * assembly.  MR and NR are constants, so the i and j loops have fixed trip
 * counts: GCC (-O3) unrolls i, vectorises j (NR floats are whole vectors)
 * and, because acc is a local array whose address never escapes, keeps all
 * of it in registers across the k loop.  `restrict` promises that a, b and
 * c do not overlap, so loads of a and b need not wait for stores to c.
 * Under -std=c11 GCC keeps a[i] * b[j] + acc as a multiply and an add (it
 * fuses them into one FMA only with -ffp-contract=fast); Zen 5 issues the
 * two on separate pipes, and both forms measured equally fast. */
static void micro_kernel(int64_t kc, const float *restrict a, const float *restrict b,
                         float *restrict c, int64_t ldc, int64_t mr, int64_t nr)
{
    /* TODO (lesson 5): write micro_kernel. */
    /* A local float acc[MR][NR] = 0; for each p: acc[i][j] += a[i] * b[j],
     * then a += MR, b += NR.  Then add the valid mr x nr part to c. */
    (void)kc; (void)a; (void)b; (void)c; (void)ldc; (void)mr; (void)nr;
}
//@ end snippet micro_kernel

//@ snippet tiled_2d
/* c = a @ b for one matrix of the batch, as naive_2d, through packed
 * blocks: for each KC x NC panel of b, for each MC x KC block of a, every
 * MR x NR block of c gets one micro-kernel call.  w holds room for one
 * packed block of a and one of b. */
static nd_status tiled_2d(const matrix *a, const matrix *b, float *c, const panels *w)
{
    /* TODO (lesson 5): write tiled_2d. */
    /* Zero c.  Loop over column blocks jc (NC), slices pc of k (KC):
     * pack_b; row blocks ic (MC): pack_a; then a micro_kernel call per
     * MR x NR block of c, with its valid size at the edges. */
    (void)a; (void)b; (void)c; (void)w; (void)pack_a; (void)pack_b; (void)micro_kernel;
    return nd_not_implemented("nd_matmul", 5);
}
//@ end snippet tiled_2d

/* Round n up to a multiple of `to`. */
static size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

/* Packing buffers for products of a (m,k) and b (k,n), as large as the
 * largest blocks they will hold and no larger: small products do not pay
 * for megabytes.  One allocation holds both (fewer calls to malloc, which
 * then recycles the memory better from one product to the next); a's part
 * is rounded to whole cache lines so that b's starts on one. */
static nd_status panels_new(int64_t m, int64_t n, int64_t k, panels *w)
{
    size_t kc = (size_t)min64(KC, k);
    size_t na = round_up(round_up((size_t)min64(MC, m), MR) * kc, PANEL_ALIGN / sizeof(float));
    size_t nb = round_up((size_t)min64(NC, n), NR) * kc;
    size_t bytes = round_up((na + nb) * sizeof(float), PANEL_ALIGN);
    /* aligned_alloc wants a nonzero multiple of the alignment */
    if ((w->a = aligned_alloc(PANEL_ALIGN, bytes ? bytes : PANEL_ALIGN)) == NULL)
        return nd_fail(ND_ERR_NOMEM, "matmul: cannot allocate %zu bytes of packing buffers",
                       bytes);
    w->b = w->a + na;
    return ND_OK;
}

static void panels_free(panels *w) { free(w->a); }

/* ------------------------------------------------------------------------ */
/* Batches                                                                  */
/* ------------------------------------------------------------------------ */

//@ snippet for_each_matrix
/* Run `product` on every matrix of the batch.  a (batch..., m, k) and
 * b (batch..., k, n) are broadcast to the batch axes of c (batch..., m, n),
 * which is compact: its matrices follow one another, m*n floats each, in
 * the order nd_iter visits the batch positions. */
static nd_status for_each_matrix(const nd_array *a, const nd_array *b, const nd_array *c,
                                 product_fn *product, const panels *w)
{
    /* TODO (lesson 5): write for_each_matrix. */
    /* nd_iter over c's batch axes (all but the last two); at each
     * position take a's and b's matrices there (matrix_at) and run
     * product into the next m*n floats of c. */
    (void)a; (void)b; (void)c; (void)product; (void)w; (void)matrix_at;
    return nd_not_implemented("for_each_matrix", 5);
}
//@ end snippet for_each_matrix

/* ------------------------------------------------------------------------ */
/* The public functions                                                     */
/* ------------------------------------------------------------------------ */

/* Check a @ b by NumPy's matmul rules, then broadcast the batch axes:
 * *x and *y become new views of a as (batch..., m, k) and of b as
 * (batch..., k, n), and *ndim, shape receive c's shape (batch..., m, n). */
static nd_status matmul_operands(const nd_array *a, const nd_array *b, const nd_array *out,
                                 const char *op, nd_array *x, nd_array *y, int *ndim,
                                 int64_t *shape)
{
    nd_status s = nd_check_array(a, op, "a");
    if (s == ND_OK)
        s = nd_check_array(b, op, "b");
    if (s == ND_OK && out == NULL)
        s = nd_fail(ND_ERR_ARG, "%s: argument 'out' is NULL", op);
    if (s == ND_OK)
        s = nd_check_same_device(a, b, op);
    if (s != ND_OK)
        return s;
    char sa[SHAPE_STR], sb[SHAPE_STR];
    nd_shape_str(a->ndim, a->shape, sa, sizeof sa);
    nd_shape_str(b->ndim, b->shape, sb, sizeof sb);
    if (a->ndim < 2 || b->ndim < 2)
        return nd_fail(ND_ERR_ARG, "%s: both inputs need 2 or more axes; a has shape %s, "
                       "b has shape %s", op, sa, sb);
    int64_t m = a->shape[a->ndim - 2], k = a->shape[a->ndim - 1], n = b->shape[b->ndim - 1];
    if (b->shape[b->ndim - 2] != k)
        return nd_fail(ND_ERR_SHAPE, "%s: cannot multiply shapes %s and %s: a has %" PRId64
                       " columns, b has %" PRId64 " rows", op, sa, sb, k,
                       b->shape[b->ndim - 2]);
    /* Batch axes: aligned at the right; a size-1 or missing axis stretches. */
    int nd = a->ndim > b->ndim ? a->ndim : b->ndim;
    for (int j = 0; j < nd - 2; j++) {
        int ja = j - (nd - a->ndim), jb = j - (nd - b->ndim);
        int64_t da = ja >= 0 ? a->shape[ja] : 1, db = jb >= 0 ? b->shape[jb] : 1;
        if (da != db && da != 1 && db != 1)
            return nd_fail(ND_ERR_SHAPE, "%s: the batch axes of shapes %s and %s do not "
                           "broadcast: %" PRId64 " against %" PRId64, op, sa, sb, da, db);
        shape[j] = da == 1 ? db : da;
    }
    /* a and b seen with c's batch axes: (batch..., m, k) and (batch..., k, n) */
    int64_t shape_a[ND_MAX_DIMS], shape_b[ND_MAX_DIMS];
    memcpy(shape_a, shape, (size_t)(nd - 2) * sizeof *shape);
    memcpy(shape_b, shape, (size_t)(nd - 2) * sizeof *shape);
    shape_a[nd - 2] = m;
    shape_a[nd - 1] = k;
    shape_b[nd - 2] = k;
    shape_b[nd - 1] = n;
    shape[nd - 2] = m;
    shape[nd - 1] = n;
    /* Valid inputs can still make shapes with too many elements (rule 1 of
     * "Valid arrays" in nd.h): (0,2^40,1) @ (1,2^40) gives (0,2^40,2^40). */
    const int64_t *made[3] = { shape, shape_a, shape_b };
    static const char *const what[3] = { "the result", "a broadcast to the batch axes",
                                         "b broadcast to the batch axes" };
    for (int i = 0; i < 3; i++) {
        if (nd_check_shape(nd, made[i], op) != ND_OK) {
            char sm[SHAPE_STR];
            return nd_fail(ND_ERR_ARG, "%s: shapes %s and %s: %s would have shape %s, too many "
                           "elements: its sizes other than 0 multiply to more than 2^58 "
                           "(ND_MAX_NUMEL)", op, sa, sb, what[i],
                           nd_shape_str(nd, made[i], sm, sizeof sm));
        }
    }
    if ((s = nd_broadcast_to(a, nd, shape_a, x)) != ND_OK)
        return s;
    if ((s = nd_broadcast_to(b, nd, shape_b, y)) != ND_OK) {
        nd_release(x);
        return s;
    }
    *ndim = nd;
    return ND_OK;
}

/* The CPU kernel: c = a @ b for the whole batch, a and b broadcast to the
 * batch axes of c, naive or tiled. */
static nd_status matmul_cpu(const nd_array *a, const nd_array *b, const nd_array *c,
                            bool tiled)
{
    if (!tiled)
        return for_each_matrix(a, b, c, naive_2d, NULL);
    int d = c->ndim;
    panels w = { NULL, NULL };
    nd_status s = panels_new(c->shape[d - 2], c->shape[d - 1], a->shape[d - 1], &w);
    if (s == ND_OK)
        s = for_each_matrix(a, b, c, tiled_2d, &w);
    panels_free(&w);
    return s;
}

/* Both public functions: validate -> broadcast the batch -> allocate c ->
 * run the kernel, then hand c to *out.  op names the function in
 * messages. */
static nd_status matmul(const nd_array *a, const nd_array *b, nd_array *out, bool tiled,
                        const char *op)
{
    nd_array x, y, made;
    int ndim = 0;   /* set by matmul_operands; 0 quiets GCC's maybe-uninitialized */
    int64_t shape[ND_MAX_DIMS];
    nd_status s = matmul_operands(a, b, out, op, &x, &y, &ndim, shape);
    if (s != ND_OK)
        return s;
    /* With k == 0 every output is the empty sum, 0, and a and b have no
     * elements, so their strides may be anything (nd.h, "Valid arrays"):
     * no kernel runs on them.  A result with no elements needs none. */
    if (a->shape[a->ndim - 1] == 0 || nd_shape_numel(ndim, shape) == 0)
        s = nd_zeros_for(op, a->buf->device, ndim, shape, &made);
    else if ((s = nd_empty_for(op, a->buf->device, ndim, shape, &made)) == ND_OK &&
             (s = a->buf->device == ND_CUDA ? nd_cuda_matmul(&x, &y, &made, tiled)
                                            : matmul_cpu(&x, &y, &made, tiled)) != ND_OK)
        nd_release(&made);
    nd_release(&x);
    nd_release(&y);
    if (s != ND_OK)
        return s;
    /* out may be a or b (or both): the one it is loses its old reference. */
    nd_replace(out == b ? b : a, out, &made);
    return ND_OK;
}

nd_status nd_matmul(const nd_array *a, const nd_array *b, nd_array *out)
{
    return matmul(a, b, out, true, "matmul");
}

nd_status nd_matmul_naive(const nd_array *a, const nd_array *b, nd_array *out)
{
    return matmul(a, b, out, false, "matmul_naive");
}
