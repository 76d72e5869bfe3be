/*
 * Lesson 2: compact and setitem.
 *
 * Views (lesson 1) only reinterpret a buffer.  Sooner or later the data
 * must move: nd_compact gathers a view's elements into a fresh row-major
 * buffer, and nd_setitem scatters values through a view into the buffer
 * under it.  Both are the same loop: visit every position of a shape, in
 * row-major order, and turn it into an offset with the view's strides.
 *
 * The odometer iterator visits the positions.  nd_simplify_dims makes the
 * loops cheap: it drops size-1 axes and merges axes that are adjacent in
 * memory, so a compact array becomes one long run moved with memcpy and a
 * transpose becomes a plain 2-D loop, however many axes they started with.
 */
#include "internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//@ snippet iter
nd_status nd_iter_init(nd_iter *it, int ndim, const int64_t *shape)
{
    nd_status s = nd_check_shape(ndim, shape, "iter_init");
    if (s != ND_OK)
        return s;
    if (it == NULL)
        return nd_fail(ND_ERR_ARG, "iter_init: argument 'it' is NULL");
    //@ solution nd_iter_init
    it->ndim = ndim;
    for (int k = 0; k < ndim; k++) {
        it->shape[k] = shape[k];
        it->index[k] = 0;
    }
    it->count = 0;
    it->total = nd_shape_numel(ndim, shape);
    return ND_OK;
    //@ stub
    //> /* Copy the shape, zero the index, count = 0, total = numel. */
    //> return nd_not_implemented("nd_iter_init", 2);
    //@ end solution nd_iter_init
}

bool nd_iter_next(nd_iter *it)
{
    if (it == NULL)
        return false;
    //@ solution nd_iter_next
    if (it->count >= it->total)
        return false;
    /* The first call stays on (0,...,0).  Later ones turn the last digit
     * and carry into the digit on its left, like a car's odometer. */
    if (it->count > 0) {
        for (int k = it->ndim - 1; k >= 0; k--) {
            if (++it->index[k] < it->shape[k])
                break;
            it->index[k] = 0;
        }
    }
    it->count++;
    return true;
    //@ stub
    //> /* The first call stays on (0,...,0); later calls add one to the
    //>  * last digit and carry leftwards.  false once count reaches total. */
    //> return false;
    //@ end solution nd_iter_next
}
//@ end snippet iter

//@ snippet simplify_dims
nd_status nd_simplify_dims(int *ndim, int64_t *shape, int64_t *strides_a, int64_t *strides_b)
{
    if (ndim == NULL)
        return nd_fail(ND_ERR_ARG, "simplify_dims: argument 'ndim' is NULL");
    nd_status s = nd_check_shape(*ndim, shape, "simplify_dims");
    if (s != ND_OK)
        return s;
    if (*ndim > 0 && strides_a == NULL)
        return nd_fail(ND_ERR_ARG, "simplify_dims: argument 'strides_a' is NULL");
    //@ solution nd_simplify_dims
    /* Axis k can join the kept axis before it (m-1) when one step along
     * m-1 is exactly one full run of k, in every operand: then the pair
     * walks memory like a single axis of shape[m-1] * shape[k].  A run
     * whose length overflows int64 (nd_mul_ok fails) equals no stride;
     * the strides of an array with no elements may be anything. */
    int m = 0;
    for (int k = 0; k < *ndim; k++) {
        int64_t run_a, run_b;
        if (shape[k] == 1)
            continue;   /* never stepped along: its stride is irrelevant */
        if (m > 0 && nd_mul_ok(shape[k], strides_a[k], &run_a) && strides_a[m - 1] == run_a &&
            (strides_b == NULL ||
             (nd_mul_ok(shape[k], strides_b[k], &run_b) && strides_b[m - 1] == run_b))) {
            shape[m - 1] *= shape[k];
            strides_a[m - 1] = strides_a[k];
            if (strides_b != NULL)
                strides_b[m - 1] = strides_b[k];
            continue;
        }
        shape[m] = shape[k];
        strides_a[m] = strides_a[k];
        if (strides_b != NULL)
            strides_b[m] = strides_b[k];
        m++;
    }
    *ndim = m;
    return ND_OK;
    //@ stub
    //> /* Drop size-1 axes; merge axis k into the kept axis before it
    //>  * when strides[prev] == shape[k] * strides[k] for every operand.
    //>  * Multiply with nd_mul_ok: the product can overflow int64. */
    //> (void)strides_b;
    //> return nd_not_implemented("nd_simplify_dims", 2);
    //@ end solution nd_simplify_dims
}
//@ end snippet simplify_dims

/* A view's layout, copied so that nd_simplify_dims may rewrite it. */
typedef struct {
    int ndim;
    int64_t shape[ND_MAX_DIMS];
    int64_t strides[ND_MAX_DIMS];
} layout;

static layout layout_of(const nd_array *a)
{
    layout l = { .ndim = a->ndim };
    memcpy(l.shape, a->shape, sizeof l.shape);
    memcpy(l.strides, a->strides, sizeof l.strides);
    return l;
}

/* Offset of the row at outer position `index` (all axes but the last). */
static int64_t row_offset(const int64_t *index, const int64_t *strides, int outer)
{
    int64_t off = 0;
    for (int k = 0; k < outer; k++)
        off += index[k] * strides[k];
    return off;
}

//@ snippet gather_tiled
/* Side of the square blocks of gather_tiled, in floats: two 64-byte
 * cache lines, so that a row whose start is not aligned to a line still
 * fills whole lines.  A block is 32 x 32 floats, 4 KB.  (Measured on the
 * course's benchmark machine: 16 was up to 3x slower for row lengths that
 * are not a multiple of 16 floats, such as 4100.) */
#define TILE 32
/* Side of the squares of blocks that gather_tiled finishes one at a time:
 * 256 x 256 floats of source and destination, 512 KB, touching 512 pages
 * at most, which the L2 cache and the second-level TLB both hold. */
#define SPAN 256

/* The gather for layouts where the last axis jumps through memory but an
 * outer axis p walks it densely, as in a transpose.  A row-by-row copy
 * would use one float of each cache line it loads, and when the stride is
 * a power of two, all those lines land in the same few cache sets and
 * evict each other before their other floats are needed.  So the copy
 * goes by TILE x TILE blocks of the (p, last) plane through a small
 * buffer: every source line is read whole, then every destination line is
 * written whole, and no line has to wait in the cache for reuse. */
/* One block: ni x nj floats from `from` (strides sp along p, sl along the
 * last axis) to `to` (row stride dp, contiguous rows), via `block`. */
static inline void move_block(const float *from, int64_t sp, int64_t sl, float *to, int64_t dp,
                              int64_t ni, int64_t nj, float block[TILE][TILE])
{
    for (int64_t j = 0; j < nj; j++)        /* read TILE runs along p */
        for (int64_t i = 0; i < ni; i++)
            block[j][i] = from[j * sl + i * sp];
    for (int64_t i = 0; i < ni; i++)        /* write TILE rows along last */
        for (int64_t j = 0; j < nj; j++)
            to[i * dp + j] = block[j][i];
}

static nd_status gather_tiled(const layout *l, int p, const float *src, float *dst)
{
    //@ solution gather_tiled
    int last = l->ndim - 1;
    int64_t dst_strides[ND_MAX_DIMS], rest[ND_MAX_DIMS], step = 1;
    for (int k = last; k >= 0; k--) {   /* dst is compact */
        dst_strides[k] = step;
        step *= l->shape[k];
        rest[k] = k == p || k == last ? 1 : l->shape[k];
    }
    int64_t np = l->shape[p], nl = l->shape[last];
    int64_t sp = l->strides[p], sl = l->strides[last], dp = dst_strides[p];
    nd_iter it;   /* over every axis but p and last */
    nd_status s = nd_iter_init(&it, l->ndim, rest);
    if (s != ND_OK)
        return s;
    float block[TILE][TILE];
    while (nd_iter_next(&it)) {
        const float *from = src + row_offset(it.index, l->strides, l->ndim);
        float *to = dst + row_offset(it.index, dst_strides, l->ndim);
        /* Blocks go by SPAN x SPAN squares, so that the pages and lines
         * of one square are reused before they leave the TLB and L2. */
        for (int64_t I = 0; I < np; I += SPAN)
            for (int64_t J = 0; J < nl; J += SPAN)
                for (int64_t i0 = I; i0 < np && i0 < I + SPAN; i0 += TILE) {
                    int64_t ni = np - i0 < TILE ? np - i0 : TILE;
                    for (int64_t j0 = J; j0 < nl && j0 < J + SPAN; j0 += TILE) {
                        int64_t nj = nl - j0 < TILE ? nl - j0 : TILE;
                        if (sp == 1)   /* the usual case: a constant the compiler vectorises */
                            move_block(from + j0 * sl + i0, 1, sl, to + i0 * dp + j0, dp, ni, nj,
                                       block);
                        else
                            move_block(from + j0 * sl + i0 * sp, sp, sl, to + i0 * dp + j0, dp,
                                       ni, nj, block);
                    }
                }
    }
    return ND_OK;
    //@ stub
    //> /* Iterate every axis but p and the last; for each, copy the
    //>  * (p, last) plane block by block: read TILE source runs along p into
    //>  * a TILE x TILE buffer, then write TILE destination rows from it. */
    //> (void)l; (void)p; (void)src; (void)dst;
    //> return nd_not_implemented("nd_compact", 2);
    //@ end solution gather_tiled
}
//@ end snippet gather_tiled

//@ snippet gather
/* dst[0 .. numel-1] = a's elements in row-major order (CPU). */
static nd_status gather_cpu(const nd_array *a, float *dst)
{
    //@ solution gather_cpu
    if (nd_numel(a) == 0)
        return ND_OK;
    layout l = layout_of(a);
    nd_status s = nd_simplify_dims(&l.ndim, l.shape, l.strides, NULL);
    if (s != ND_OK)
        return s;
    const float *src = nd_data(a) + a->offset;
    if (l.ndim == 0) {   /* one element */
        dst[0] = src[0];
        return ND_OK;
    }
    int outer = l.ndim - 1;
    int64_t run = l.shape[outer], step = l.strides[outer];
    /* An outer axis denser in memory than the last one: copy in tiles. */
    int p = -1;
    for (int k = 0; k < outer; k++)
        if (llabs(l.strides[k]) < llabs(step) && (p < 0 || llabs(l.strides[k]) < llabs(l.strides[p])))
            p = k;
    if (p >= 0 && run > 1)
        return gather_tiled(&l, p, src, dst);
    /* Otherwise the iterator walks the outer axes, and the last axis is a
     * tight loop, or one memcpy when its elements are contiguous. */
    nd_iter it;
    if ((s = nd_iter_init(&it, outer, l.shape)) != ND_OK)
        return s;
    while (nd_iter_next(&it)) {
        const float *row = src + row_offset(it.index, l.strides, outer);
        if (step == 1) {
            memcpy(dst, row, (size_t)run * sizeof(float));
        } else {
            for (int64_t j = 0; j < run; j++)
                dst[j] = row[j * step];
        }
        dst += run;
    }
    return ND_OK;
    //@ stub
    //> /* Simplify a's layout.  If an outer axis is denser in memory than
    //>  * the last, hand over to gather_tiled; otherwise iterate the outer
    //>  * axes with nd_iter and copy each last-axis run (memcpy if stride 1). */
    //> (void)a; (void)dst; (void)row_offset; (void)layout_of; (void)gather_tiled;
    //> return nd_not_implemented("nd_compact", 2);
    //@ end solution gather_cpu
}
//@ end snippet gather

nd_status nd_compact(const nd_array *a, nd_array *out)
{
    nd_status s = nd_check_array(a, "compact", "a");
    if (s != ND_OK)
        return s;
    if (out == NULL)
        return nd_fail(ND_ERR_ARG, "compact: argument 'out' is NULL");
    nd_array made;
    if ((s = nd_empty_for("compact", a->buf->device, a->ndim, a->shape, &made)) != ND_OK)
        return s;
    s = a->buf->device == ND_CUDA ? nd_cuda_compact(a, &made) : gather_cpu(a, nd_data(&made));
    if (s != ND_OK) {
        nd_release(&made);
        return s;
    }
    nd_replace(a, out, &made);
    return ND_OK;
}

//@ snippet scatter
/* Write src's elements through the view dst; src has dst's shape (CPU). */
static nd_status scatter_cpu(const nd_array *dst, const nd_array *src)
{
    //@ solution scatter_cpu
    if (nd_numel(dst) == 0)
        return ND_OK;
    /* Simplify both layouts together: an axis pair merges only where it
     * is adjacent in memory in dst AND in src. */
    layout l = layout_of(dst);
    int64_t src_strides[ND_MAX_DIMS];
    memcpy(src_strides, src->strides, sizeof src_strides);
    nd_status s = nd_simplify_dims(&l.ndim, l.shape, l.strides, src_strides);
    if (s != ND_OK)
        return s;
    float *to = nd_data(dst) + dst->offset;
    const float *from = nd_data(src) + src->offset;
    if (l.ndim == 0) {
        to[0] = from[0];
        return ND_OK;
    }
    int outer = l.ndim - 1;
    int64_t run = l.shape[outer], to_step = l.strides[outer], from_step = src_strides[outer];
    nd_iter it;
    if ((s = nd_iter_init(&it, outer, l.shape)) != ND_OK)
        return s;
    while (nd_iter_next(&it)) {
        float *t = to + row_offset(it.index, l.strides, outer);
        const float *f = from + row_offset(it.index, src_strides, outer);
        if (to_step == 1 && from_step == 1) {
            memmove(t, f, (size_t)run * sizeof(float));   /* t == f if dst is src */
        } else {
            for (int64_t j = 0; j < run; j++)
                t[j * to_step] = f[j * from_step];
        }
    }
    return ND_OK;
    //@ stub
    //> /* Like gather_cpu, but simplify dst and src together and write
    //>  * through dst's strides: dst is a view, not a compact array. */
    //> (void)dst; (void)src;
    //> return nd_not_implemented("nd_setitem", 2);
    //@ end solution scatter_cpu
}
//@ end snippet scatter

nd_status nd_setitem(const nd_array *dst, const nd_array *src)
{
    nd_status s = nd_check_array(dst, "setitem", "dst");
    if (s == ND_OK)
        s = nd_check_array(src, "setitem", "src");
    if (s == ND_OK)
        s = nd_check_same_device(dst, src, "setitem");
    if (s != ND_OK)
        return s;
    /* As in NumPy, src may have extra leading axes of size 1: look past
     * them.  Then broadcasting is lesson 1's nd_broadcast_to, a view. */
    int skip = 0;
    while (src->ndim - skip > dst->ndim && src->shape[skip] == 1)
        skip++;
    nd_array b;
    s = nd_as_strided(src, src->ndim - skip, src->shape + skip, src->strides + skip,
                      src->offset, &b);
    if (s == ND_OK && (s = nd_broadcast_to(&b, dst->ndim, dst->shape, &b)) != ND_OK)
        nd_release(&b);   /* b still holds the stripped view */
    if (s != ND_OK) {
        char why[512], sh_src[200], sh_dst[200];
        snprintf(why, sizeof why, "%s", nd_last_error());
        return nd_fail(s, "setitem: cannot assign src of shape %s to dst of shape %s (%s)",
                       nd_shape_str(src->ndim, src->shape, sh_src, sizeof sh_src),
                       nd_shape_str(dst->ndim, dst->shape, sh_dst, sizeof sh_dst), why);
    }
    s = dst->buf->device == ND_CUDA ? nd_cuda_setitem(dst, &b) : scatter_cpu(dst, &b);
    nd_release(&b);
    return s;
}

//@ snippet fill
/* Write `value` at every element of the view dst (CPU). */
static nd_status fill_cpu(const nd_array *dst, float value)
{
    //@ solution fill_cpu
    if (nd_numel(dst) == 0)
        return ND_OK;
    layout l = layout_of(dst);
    nd_status s = nd_simplify_dims(&l.ndim, l.shape, l.strides, NULL);
    if (s != ND_OK)
        return s;
    float *to = nd_data(dst) + dst->offset;
    if (l.ndim == 0) {
        to[0] = value;
        return ND_OK;
    }
    int outer = l.ndim - 1;
    int64_t run = l.shape[outer], step = l.strides[outer];
    nd_iter it;
    if ((s = nd_iter_init(&it, outer, l.shape)) != ND_OK)
        return s;
    while (nd_iter_next(&it)) {
        float *t = to + row_offset(it.index, l.strides, outer);
        for (int64_t j = 0; j < run; j++)
            t[j * step] = value;
    }
    return ND_OK;
    //@ stub
    //> /* Like scatter_cpu with one value; only the elements of the view. */
    //> (void)dst; (void)value;
    //> return nd_not_implemented("nd_setitem_scalar", 2);
    //@ end solution fill_cpu
}
//@ end snippet fill

nd_status nd_setitem_scalar(const nd_array *dst, float value)
{
    nd_status s = nd_check_array(dst, "setitem_scalar", "dst");
    if (s != ND_OK)
        return s;
    return dst->buf->device == ND_CUDA ? nd_cuda_fill(dst, value) : fill_cpu(dst, value);
}
