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
    /* TODO (lesson 2): write nd_iter_init. */
    /* Copy the shape, zero the index, count = 0, total = numel. */
    return nd_not_implemented("nd_iter_init", 2);
}

bool nd_iter_next(nd_iter *it)
{
    if (it == NULL)
        return false;
    /* TODO (lesson 2): write nd_iter_next. */
    /* The first call stays on (0,...,0); later calls add one to the
     * last digit and carry leftwards.  false once count reaches total. */
    return false;
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
    /* TODO (lesson 2): write nd_simplify_dims. */
    /* Drop size-1 axes; merge axis k into the kept axis before it
     * when strides[prev] == shape[k] * strides[k] for every operand.
     * Multiply with nd_mul_ok: the product can overflow int64. */
    (void)strides_b;
    return nd_not_implemented("nd_simplify_dims", 2);
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
    /* TODO (lesson 2): write gather_tiled. */
    /* Iterate every axis but p and the last; for each, copy the
     * (p, last) plane block by block: read TILE source runs along p into
     * a TILE x TILE buffer, then write TILE destination rows from it. */
    (void)l; (void)p; (void)src; (void)dst;
    return nd_not_implemented("nd_compact", 2);
}
//@ end snippet gather_tiled

//@ snippet gather
/* dst[0 .. numel-1] = a's elements in row-major order (CPU). */
static nd_status gather_cpu(const nd_array *a, float *dst)
{
    /* TODO (lesson 2): write gather_cpu. */
    /* Simplify a's layout.  If an outer axis is denser in memory than
     * the last, hand over to gather_tiled; otherwise iterate the outer
     * axes with nd_iter and copy each last-axis run (memcpy if stride 1). */
    (void)a; (void)dst; (void)row_offset; (void)layout_of; (void)gather_tiled;
    return nd_not_implemented("nd_compact", 2);
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
    /* TODO (lesson 2): write scatter_cpu. */
    /* Like gather_cpu, but simplify dst and src together and write
     * through dst's strides: dst is a view, not a compact array. */
    (void)dst; (void)src;
    return nd_not_implemented("nd_setitem", 2);
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
    /* TODO (lesson 2): write fill_cpu. */
    /* Like scatter_cpu with one value; only the elements of the view. */
    (void)dst; (void)value;
    return nd_not_implemented("nd_setitem_scalar", 2);
}
//@ end snippet fill

nd_status nd_setitem_scalar(const nd_array *dst, float value)
{
    nd_status s = nd_check_array(dst, "setitem_scalar", "dst");
    if (s != ND_OK)
        return s;
    return dst->buf->device == ND_CUDA ? nd_cuda_fill(dst, value) : fill_cpu(dst, value);
}
