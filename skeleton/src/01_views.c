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
    /* TODO (lesson 1): write nd_compact_strides. */
    /* The last axis has stride 1; each axis to its left steps over
     * one whole block of everything to its right. */
    return nd_not_implemented("nd_compact_strides", 1);
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
    /* TODO (lesson 1): write nd_is_compact. */
    /* Compare each stride with the compact one, from the last axis;
     * skip size-1 axes, and call an array with no elements compact. */
    return nd_not_implemented("nd_is_compact", 1);
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
    /* TODO (lesson 1): write nd_offset_of. */
    /* offset + sum of index[k] * strides[k].  Check every index before
     * adding any: an array with no elements may carry any strides. */
    return nd_not_implemented("nd_offset_of", 1);
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
    /* TODO (lesson 1): write nd_reshape. */
    /* Infer a -1, compare element counts, refuse a non-compact a
     * (nd_is_compact), then nd_as_strided with compact strides and a->offset. */
    return nd_not_implemented("nd_reshape", 1);
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
    /* TODO (lesson 1): write nd_permute. */
    /* Output axis i takes a's axis axes[i]: its size and its stride.
     * Normalise negative axes (nd_normalize_axis) and reject repeats. */
    return nd_not_implemented("nd_permute", 1);
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
    /* TODO (lesson 1): write nd_broadcast_to. */
    /* Align the shapes at the right; new axes and stretched size-1
     * axes get stride 0; any other mismatch is ND_ERR_SHAPE. */
    return nd_not_implemented("nd_broadcast_to", 1);
}
//@ end snippet broadcast_to

//@ snippet slice_bounds
/* Python's slice.indices(): the first position and the number of
 * positions that start:stop:step selects on an axis of `size`. */
static void slice_bounds(int64_t size, int64_t start, int64_t stop, int64_t step,
                         int64_t *first, int64_t *count)
{
    /* TODO (lesson 1): write slice_bounds. */
    /* Clip start and stop as Python's slice.indices() does, with
     * different defaults and limits for a negative step; then count. */
    (void)size; (void)start; (void)stop; (void)step;
    *first = 0;
    *count = 0;
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
    /* TODO (lesson 1): write nd_slice. */
    /* Per axis: an integer moves the offset and drops the axis; a
     * slice moves the offset to its first position and keeps stride * step
     * (nd_mul_ok: with a huge step it can overflow, and is then never used).
     * Move the offset only when a has elements. */
    (void)slice_bounds; /* the helper above is yours too: write it, then use it here */
    return nd_not_implemented("nd_slice", 1);
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
    /* TODO (lesson 1): write nd_diagonal. */
    /* Remove axis1 and axis2, append an axis of the diagonal's length
     * with stride strides[axis1] + strides[axis2] (nd_add_ok: strides of
     * size-1 axes may be anything, and the sum can overflow); offset picks
     * the start, which moves only when a has elements. */
    (void)offset; (void)axis1; (void)axis2;
    return nd_not_implemented("nd_diagonal", 1);
}
//@ end snippet diagonal
