/*
 * Lesson 1: strides and views.
 *
 * A view never copies: every function here computes a new shape, new
 * strides and a new offset over the SAME buffer, then hands them to
 * nd_as_strided (src/array.c), which checks that the view stays inside the
 * buffer and takes a reference to it.
 *
 * The argument checks at the top of each function are given; the marked
 * parts are yours.  Strides and offsets are in elements, and signed.
 */
#include "internal.h"

#include <inttypes.h>
#include <stdio.h>

/* Room for any shape or strides printed by nd_shape_str. */
#define SHAPE_STR 200

//@ snippet compact_strides
nd_status nd_compact_strides(int ndim, const int64_t *shape, int64_t *strides)
{
    nd_status s = nd_check_shape(ndim, shape, "compact_strides");
    if (s != ND_OK)
        return s;
    if (ndim > 0 && strides == NULL)
        return nd_fail(ND_ERR_ARG, "compact_strides: argument 'strides' is NULL");
    //@ solution nd_compact_strides
    /* The last axis moves by one element; each axis to its left moves by
     * the size of everything to its right. */
    int64_t step = 1;
    for (int k = ndim - 1; k >= 0; k--) {
        strides[k] = step;
        step *= shape[k];
    }
    return ND_OK;
    //@ stub
    //> /* The last axis has stride 1; each axis to its left steps over
    //>  * one whole block of everything to its right. */
    //> return nd_not_implemented("nd_compact_strides", 1);
    //@ end solution nd_compact_strides
}
//@ end snippet compact_strides

//@ snippet is_compact
nd_status nd_is_compact(const nd_array *a, bool *result)
{
    nd_status s = nd_check_array(a, "is_compact", "a");
    if (s != ND_OK)
        return s;
    if (result == NULL)
        return nd_fail(ND_ERR_ARG, "is_compact: argument 'result' is NULL");
    //@ solution nd_is_compact
    /* Walk from the last axis, checking each stride against the compact
     * one.  A size-1 axis is never stepped along, so its stride cannot
     * matter; an array with no elements is trivially compact. */
    bool compact = true;
    if (nd_numel(a) > 0) {
        int64_t want = 1;
        for (int k = a->ndim - 1; k >= 0 && compact; k--) {
            if (a->shape[k] == 1)
                continue;
            compact = a->strides[k] == want;
            want *= a->shape[k];
        }
    }
    *result = compact;
    return ND_OK;
    //@ stub
    //> /* Compare each stride with the compact one, from the last axis;
    //>  * skip size-1 axes, and call an array with no elements compact. */
    //> return nd_not_implemented("nd_is_compact", 1);
    //@ end solution nd_is_compact
}
//@ end snippet is_compact

//@ snippet offset_of
nd_status nd_offset_of(const nd_array *a, const int64_t *index, int64_t *offset)
{
    nd_status s = nd_check_array(a, "offset_of", "a");
    if (s != ND_OK)
        return s;
    if ((a->ndim > 0 && index == NULL) || offset == NULL)
        return nd_fail(ND_ERR_ARG, "offset_of: argument '%s' is NULL",
                       offset == NULL ? "offset" : "index");
    //@ solution nd_offset_of
    /* Check every index before adding any: an array with no elements may
     * carry any strides ("Valid arrays" in nd.h), and index * stride could
     * overflow there before a later axis of size 0 turned out to refuse
     * every index.  Once all indices are in range, the array has elements
     * and every partial sum lies inside its buffer. */
    for (int k = 0; k < a->ndim; k++) {
        if (index[k] < 0 || index[k] >= a->shape[k])
            return nd_fail(ND_ERR_INDEX, "offset_of: index %" PRId64
                           " is out of range for axis %d of size %" PRId64,
                           index[k], k, a->shape[k]);
    }
    int64_t off = a->offset;
    for (int k = 0; k < a->ndim; k++)
        off += index[k] * a->strides[k];
    *offset = off;
    return ND_OK;
    //@ stub
    //> /* offset + sum of index[k] * strides[k].  Check every index before
    //>  * adding any: an array with no elements may carry any strides. */
    //> return nd_not_implemented("nd_offset_of", 1);
    //@ end solution nd_offset_of
}
//@ end snippet offset_of

//@ snippet reshape
nd_status nd_reshape(const nd_array *a, int ndim, const int64_t *shape, nd_array *out)
{
    nd_status s = nd_check_array(a, "reshape", "a");
    if (s != ND_OK)
        return s;
    if (ndim < 0 || ndim > ND_MAX_DIMS)
        return nd_fail(ND_ERR_ARG, "reshape: ndim %d is out of range; it must be 0..%d",
                       ndim, ND_MAX_DIMS);
    if ((ndim > 0 && shape == NULL) || out == NULL)
        return nd_fail(ND_ERR_ARG, "reshape: argument '%s' is NULL",
                       out == NULL ? "out" : "shape");
    //@ solution nd_reshape
    /* Fill in a -1 from the element count, then check the counts agree. */
    int64_t want[ND_MAX_DIMS], n = nd_numel(a);
    int infer = -1;
    for (int k = 0; k < ndim; k++) {
        want[k] = shape[k];
        if (shape[k] == -1) {
            if (infer >= 0)
                return nd_fail(ND_ERR_ARG, "reshape: shape has -1 on axes %d and %d; "
                               "only one size can be inferred", infer, k);
            infer = k;
            want[k] = 1;
        }
    }
    if ((s = nd_check_shape(ndim, want, "reshape")) != ND_OK)
        return s;
    char from[SHAPE_STR], to[SHAPE_STR];
    if (infer >= 0) {
        int64_t known = nd_shape_numel(ndim, want);
        if (known == 0 || n % known != 0)
            return nd_fail(ND_ERR_SHAPE, "reshape: cannot infer the -1 in shape %s "
                           "from %" PRId64 " elements of shape %s",
                           nd_shape_str(ndim, shape, to, sizeof to), n,
                           nd_shape_str(a->ndim, a->shape, from, sizeof from));
        want[infer] = n / known;
    }
    int64_t m = nd_shape_numel(ndim, want);
    if (m != n)
        return nd_fail(ND_ERR_SHAPE, "reshape: cannot view %" PRId64 " elements of shape %s "
                       "as shape %s, %" PRId64 " elements", n,
                       nd_shape_str(a->ndim, a->shape, from, sizeof from),
                       nd_shape_str(ndim, want, to, sizeof to), m);
    /* Only a compact array keeps its row-major order under new strides. */
    bool compact;
    if ((s = nd_is_compact(a, &compact)) != ND_OK)
        return s;
    if (!compact) {
        char st[SHAPE_STR];
        return nd_fail(ND_ERR_LAYOUT, "reshape: the array of shape %s with strides %s is not "
                       "compact, so no strides can show it as shape %s; call nd_compact "
                       "first and reshape the copy",
                       nd_shape_str(a->ndim, a->shape, from, sizeof from),
                       nd_shape_str(a->ndim, a->strides, st, sizeof st),
                       nd_shape_str(ndim, want, to, sizeof to));
    }
    int64_t strides[ND_MAX_DIMS];
    if ((s = nd_compact_strides(ndim, want, strides)) != ND_OK)
        return s;
    return nd_as_strided(a, ndim, want, strides, a->offset, out);
    //@ stub
    //> /* Infer a -1, compare element counts, refuse a non-compact a
    //>  * (nd_is_compact), then nd_as_strided with compact strides and a->offset. */
    //> return nd_not_implemented("nd_reshape", 1);
    //@ end solution nd_reshape
}
//@ end snippet reshape

//@ snippet permute
nd_status nd_permute(const nd_array *a, const int *axes, nd_array *out)
{
    nd_status s = nd_check_array(a, "permute", "a");
    if (s != ND_OK)
        return s;
    if ((a->ndim > 0 && axes == NULL) || out == NULL)
        return nd_fail(ND_ERR_ARG, "permute: argument '%s' is NULL",
                       out == NULL ? "out" : "axes");
    //@ solution nd_permute
    /* Output axis i is input axis axes[i]: take its size and its stride. */
    int64_t shape[ND_MAX_DIMS], strides[ND_MAX_DIMS];
    bool seen[ND_MAX_DIMS] = { false };
    for (int i = 0; i < a->ndim; i++) {
        int ax;
        if ((s = nd_normalize_axis(axes[i], a->ndim, "permute", &ax)) != ND_OK)
            return s;
        if (seen[ax]) {
            char list[SHAPE_STR];
            return nd_fail(ND_ERR_AXIS, "permute: axes %s name axis %d twice; "
                           "they must be a permutation of 0..%d",
                           nd_axes_str(a->ndim, axes, list, sizeof list), ax, a->ndim - 1);
        }
        seen[ax] = true;
        shape[i] = a->shape[ax];
        strides[i] = a->strides[ax];
    }
    return nd_as_strided(a, a->ndim, shape, strides, a->offset, out);
    //@ stub
    //> /* Output axis i takes a's axis axes[i]: its size and its stride.
    //>  * Normalise negative axes (nd_normalize_axis) and reject repeats. */
    //> return nd_not_implemented("nd_permute", 1);
    //@ end solution nd_permute
}
//@ end snippet permute

//@ snippet broadcast_to
nd_status nd_broadcast_to(const nd_array *a, int ndim, const int64_t *shape, nd_array *out)
{
    nd_status s = nd_check_array(a, "broadcast_to", "a");
    if (s == ND_OK)
        s = nd_check_shape(ndim, shape, "broadcast_to");
    if (s != ND_OK)
        return s;
    if (out == NULL)
        return nd_fail(ND_ERR_ARG, "broadcast_to: argument 'out' is NULL");
    //@ solution nd_broadcast_to
    /* Align the shapes at the right.  New leading axes and stretched
     * size-1 axes get stride 0: every step along them reads the same
     * element again. */
    char from[SHAPE_STR], to[SHAPE_STR];
    if (ndim < a->ndim)
        return nd_fail(ND_ERR_SHAPE, "broadcast_to: cannot broadcast shape %s to shape %s, "
                       "which has fewer axes",
                       nd_shape_str(a->ndim, a->shape, from, sizeof from),
                       nd_shape_str(ndim, shape, to, sizeof to));
    int64_t strides[ND_MAX_DIMS];
    int lead = ndim - a->ndim;
    for (int k = 0; k < ndim; k++) {
        int j = k - lead;   /* a's axis under target axis k, if any */
        if (j < 0)
            strides[k] = 0;
        else if (a->shape[j] == shape[k])
            strides[k] = a->strides[j];
        else if (a->shape[j] == 1)
            strides[k] = 0;
        else
            return nd_fail(ND_ERR_SHAPE, "broadcast_to: cannot broadcast shape %s to shape %s: "
                           "axis %d has size %" PRId64 ", not 1 or %" PRId64,
                           nd_shape_str(a->ndim, a->shape, from, sizeof from),
                           nd_shape_str(ndim, shape, to, sizeof to), j, a->shape[j],
                           shape[k]);
    }
    return nd_as_strided(a, ndim, shape, strides, a->offset, out);
    //@ stub
    //> /* Align the shapes at the right; new axes and stretched size-1
    //>  * axes get stride 0; any other mismatch is ND_ERR_SHAPE. */
    //> return nd_not_implemented("nd_broadcast_to", 1);
    //@ end solution nd_broadcast_to
}
//@ end snippet broadcast_to

//@ snippet slice_bounds
/* Python's slice.indices(): the first position and the number of
 * positions that start:stop:step selects on an axis of `size`. */
static void slice_bounds(int64_t size, int64_t start, int64_t stop, int64_t step,
                         int64_t *first, int64_t *count)
{
    //@ solution slice_bounds
    /* With a negative step the walk goes from high to low, so "before the
     * beginning" is -1 and the default start is the last position. */
    int64_t lo = step < 0 ? -1 : 0, hi = step < 0 ? size - 1 : size;
    if (start == ND_NONE)
        start = step < 0 ? hi : lo;
    else if (start < 0)
        start = start + size < lo ? lo : start + size;
    else if (start > hi)
        start = hi;
    if (stop == ND_NONE)
        stop = step < 0 ? lo : hi;
    else if (stop < 0)
        stop = stop + size < lo ? lo : stop + size;
    else if (stop > hi)
        stop = hi;
    *first = start;
    if (step > 0)
        *count = start < stop ? (stop - start - 1) / step + 1 : 0;
    else
        *count = stop < start ? (start - stop - 1) / -step + 1 : 0;
    //@ stub
    //> /* Clip start and stop as Python's slice.indices() does, with
    //>  * different defaults and limits for a negative step; then count. */
    //> (void)size; (void)start; (void)stop; (void)step;
    //> *first = 0;
    //> *count = 0;
    //@ end solution slice_bounds
}
//@ end snippet slice_bounds

//@ snippet slice
nd_status nd_slice(const nd_array *a, int n, const nd_index *idx, nd_array *out)
{
    nd_status s = nd_check_array(a, "slice", "a");
    if (s != ND_OK)
        return s;
    if (n < 0 || n > a->ndim)
        return nd_fail(ND_ERR_ARG, "slice: %d indices for an array of %d axes", n, a->ndim);
    if ((n > 0 && idx == NULL) || out == NULL)
        return nd_fail(ND_ERR_ARG, "slice: argument '%s' is NULL",
                       out == NULL ? "out" : "idx");
    //@ solution nd_slice
    /* Each index moves the offset to its first position; a slice keeps its
     * axis with stride * step, an integer drops it.  If a has no elements,
     * neither has the result, its offset stays a's, and a's strides may be
     * anything (nd.h, "Valid arrays"): the offset moves only when a has
     * elements, and then every position it moves to is inside the buffer. */
    int64_t shape[ND_MAX_DIMS], strides[ND_MAX_DIMS], offset = a->offset;
    bool moves = nd_numel(a) > 0;
    int m = 0;   /* axes of the result so far */
    for (int k = 0; k < a->ndim; k++) {
        nd_index ix = k < n ? idx[k] : ND_ALL;
        int64_t size = a->shape[k], stride = a->strides[k];
        if (ix.kind == ND_INDEX_INT) {
            int64_t i = ix.i < 0 ? ix.i + size : ix.i;
            if (i < 0 || i >= size)
                return nd_fail(ND_ERR_INDEX, "slice: index %" PRId64 " is out of range "
                               "for axis %d of size %" PRId64, ix.i, k, size);
            if (moves)
                offset += i * stride;
        } else if (ix.kind == ND_INDEX_SLICE) {
            if (ix.step == 0)
                return nd_fail(ND_ERR_INDEX, "slice: step 0 on axis %d; a slice step "
                               "must not be zero", k);
            /* as CPython does: a step of INT64_MIN would overflow when
             * negated, and walks as far as -INT64_MAX anyway */
            if (ix.step == INT64_MIN)
                ix.step = -INT64_MAX;
            int64_t first, count;
            slice_bounds(size, ix.start, ix.stop, ix.step, &first, &count);
            if (moves && count > 0)
                offset += first * stride;
            /* stride * step overflows only when the result never steps
             * along this axis (0 or 1 positions, or no elements at all),
             * so the stride is never used: keep a's. */
            if (!nd_mul_ok(stride, ix.step, &strides[m]))
                strides[m] = stride;
            shape[m++] = count;
        } else {
            return nd_fail(ND_ERR_ARG, "slice: index %d has unknown kind %d", k, (int)ix.kind);
        }
    }
    /* A result with no elements reaches nothing: keep a's offset, which
     * is surely inside the buffer. */
    if (nd_shape_numel(m, shape) == 0)
        offset = a->offset;
    return nd_as_strided(a, m, shape, strides, offset, out);
    //@ stub
    //> /* Per axis: an integer moves the offset and drops the axis; a
    //>  * slice moves the offset to its first position and keeps stride * step
    //>  * (nd_mul_ok: with a huge step it can overflow, and is then never used).
    //>  * Move the offset only when a has elements. */
    //> (void)slice_bounds; /* the helper above is yours too: write it, then use it here */
    //> return nd_not_implemented("nd_slice", 1);
    //@ end solution nd_slice
}
//@ end snippet slice

//@ snippet diagonal
nd_status nd_diagonal(const nd_array *a, int64_t offset, int axis1, int axis2, nd_array *out)
{
    nd_status s = nd_check_array(a, "diagonal", "a");
    if (s != ND_OK)
        return s;
    if (a->ndim < 2)
        return nd_fail(ND_ERR_ARG, "diagonal: needs at least 2 axes, the array has %d",
                       a->ndim);
    if (out == NULL)
        return nd_fail(ND_ERR_ARG, "diagonal: argument 'out' is NULL");
    //@ solution nd_diagonal
    int ax1, ax2;
    if ((s = nd_normalize_axis(axis1, a->ndim, "diagonal", &ax1)) != ND_OK ||
        (s = nd_normalize_axis(axis2, a->ndim, "diagonal", &ax2)) != ND_OK)
        return s;
    if (ax1 == ax2)
        return nd_fail(ND_ERR_AXIS, "diagonal: axis1 and axis2 are both axis %d; "
                       "a diagonal needs two different axes", ax1);
    /* Element j of the diagonal is (j, j + offset) in the (axis1, axis2)
     * plane for offset >= 0, and (j - offset, j) below the main diagonal.
     * Stepping j moves along both axes at once: stride s1 + s2.  The start
     * moves only when a has elements: an array without any may carry any
     * strides (nd.h, "Valid arrays"), and its diagonal has none either. */
    int64_t n1 = a->shape[ax1], n2 = a->shape[ax2], len = 0, start = a->offset;
    bool moves = nd_numel(a) > 0;
    if (offset >= 0 && offset < n2) {
        len = n1 < n2 - offset ? n1 : n2 - offset;
        if (moves)
            start += offset * a->strides[ax2];
    } else if (offset < 0 && offset > -n1) {
        len = n1 + offset < n2 ? n1 + offset : n2;
        if (moves)
            start += -offset * a->strides[ax1];
    }
    int64_t shape[ND_MAX_DIMS], strides[ND_MAX_DIMS];
    int m = 0;
    for (int k = 0; k < a->ndim; k++) {
        if (k != ax1 && k != ax2) {
            shape[m] = a->shape[k];
            strides[m++] = a->strides[k];
        }
    }
    /* s1 + s2 overflows only when the diagonal is never stepped along: a
     * result with two or more elements has both strides bounded by the
     * buffer.  Any stride then does; take 0. */
    shape[m] = len > 0 ? len : 0;
    if (!nd_add_ok(a->strides[ax1], a->strides[ax2], &strides[m]))
        strides[m] = 0;
    m++;
    /* An empty result (no diagonal, or another axis of size 0) reaches
     * nothing: keep a's offset. */
    if (nd_shape_numel(m, shape) == 0)
        start = a->offset;
    return nd_as_strided(a, m, shape, strides, start, out);
    //@ stub
    //> /* Remove axis1 and axis2, append an axis of the diagonal's length
    //>  * with stride strides[axis1] + strides[axis2] (nd_add_ok: strides of
    //>  * size-1 axes may be anything, and the sum can overflow); offset picks
    //>  * the start, which moves only when a has elements. */
    //> (void)offset; (void)axis1; (void)axis2;
    //> return nd_not_implemented("nd_diagonal", 1);
    //@ end solution nd_diagonal
}
//@ end snippet diagonal
