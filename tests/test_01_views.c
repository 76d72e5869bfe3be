/*
 * test_01_views.c -- lesson 1: strides and views.
 *
 * Covers, in nd.h's order, nd_compact_strides, nd_is_compact, nd_offset_of,
 * nd_reshape, nd_permute, nd_broadcast_to, nd_slice and nd_diagonal: small
 * hand-checked cases (NumPy's documented examples among them), hundreds of
 * fixed-seed random cases on random views (negative and zero strides,
 * permuted layouts, size-0 and size-1 axes), views of views, and every
 * error path (status, a message naming the operation, output untouched).
 *
 * The reference never calls lesson code.  A view's values are read index by
 * index from a raw copy of its buffer (t_gather) into a plain row-major host
 * array, and each operation is redone there position by position: Python's
 * slice rules as CPython computes them, NumPy's broadcasting and diagonal
 * rules.  A result must then have the reference's shape and values, the
 * strides and offset the semantics fix, and the input's buffer with one
 * more reference: no view copies data.
 */
#include "nd_test.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Random cases per test: each is a fresh input and one or two views. */
#define CASES 300

/* Fail with a formatted message unless cond holds.  (ck_assert_msg would
 * send a mark to the runner on every success: too slow in loops.) */
#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (!(cond))                                                       \
            ck_abort_msg(__VA_ARGS__);                                     \
    } while (0)

/* The call must fail with status `want` and a message naming `op`. */
#define EXPECT_FAIL(want, op, ...)                                         \
    do {                                                                   \
        nd_clear_error();                                                  \
        t_err((__VA_ARGS__), (want), #__VA_ARGS__, __FILE__, __LINE__);   \
        expect_message((op), #__VA_ARGS__);                                \
    } while (0)

/* The same for a call that fills the nd_array *outp: it must stay as the
 * poison left it. */
#define EXPECT_FAIL_OUT(outp, want, op, ...)                               \
    do {                                                                   \
        t_poison(outp);                                                    \
        EXPECT_FAIL(want, op, __VA_ARGS__);                                \
        t_assert_untouched((outp), #__VA_ARGS__);                          \
    } while (0)

/* ---------------------------------------------------------------------- */
/* Helpers                                                                */
/* ---------------------------------------------------------------------- */

static void expect_message(const char *op, const char *call)
{
    CHECK(strstr(nd_last_error(), op) != NULL,
          "%s failed as it should, but its message \"%s\" does not name the "
          "operation: it should contain \"%s\"", call, nd_last_error(), op);
}

/* A random shape of lo..hi axes, sizes 0..max, size 1 often; about a third
 * of the shapes may have size-0 axes. */
static int random_shape(t_rng *r, int lo, int hi, int64_t max, int64_t *shape)
{
    int ndim = (int)t_int(r, lo, hi);
    return t_random_shape(r, ndim, max, t_int(r, 0, 2) == 0, 360, shape);
}

/* A random input: compact, a permuted and sliced view (negative strides,
 * offset), or a read-only view that repeats elements (stride 0). */
static nd_array random_input(t_rng *r, int ndim, const int64_t *shape)
{
    switch (t_int(r, 0, 3)) {
    case 0: return t_arange(ndim, shape);
    case 1: return t_random_read_view(r, ndim, shape);
    default: return t_random_view(r, ndim, shape);
    }
}

/* A random compact view: a fresh array, or a window at an offset into a
 * larger buffer whose size-1 axes (or, when empty, all axes) have arbitrary
 * strides, which nd.h says do not matter. */
static nd_array random_compact(t_rng *r, int ndim, const int64_t *shape)
{
    if (t_int(r, 0, 2) == 0)
        return t_arange(ndim, shape);
    int64_t n = t_numel(ndim, shape), strides[ND_MAX_DIMS];
    t_row_major(ndim, shape, strides);
    for (int k = 0; k < ndim; k++)
        if (shape[k] == 1 || n == 0)
            strides[k] = t_int(r, -50, 50);
    int64_t pad = t_int(r, 0, 5);
    return t_strided(pad + n + t_int(r, 0, 5), ndim, shape, strides, pad);
}

/* Whether a is compact by nd.h's definition, element by element: row-major
 * element i lives at buffer offset a->offset + i. */
static bool ref_compact(const nd_array *a)
{
    int64_t n = t_numel(a->ndim, a->shape);
    for (int64_t i = 0; i < n; i++) {
        int64_t idx[ND_MAX_DIMS], off = a->offset;
        t_unravel(i, a->ndim, a->shape, idx);
        for (int k = 0; k < a->ndim; k++)
            off += idx[k] * a->strides[k];
        if (off != a->offset + i)
            return false;
    }
    return true;
}

/* "(2,0,1)" for an axes list. */
static const char *axes_text(int n, const int *axes, char *dst, size_t cap)
{
    int64_t v[ND_MAX_DIMS];
    for (int k = 0; k < n; k++)
        v[k] = axes[k];
    return nd_shape_str(n, v, dst, cap);
}

/* "[1:-1:2, 3, ::-1]": an index in Python's spelling. */
static const char *index_text(int n, const nd_index *idx, char *dst, size_t cap)
{
    size_t len = (size_t)snprintf(dst, cap, "[");
    for (int k = 0; k < n && len < cap; k++) {
        const char *sep = k ? ", " : "";
        char a[24] = "", b[24] = "", c[24] = "";
        if (idx[k].kind == ND_INDEX_INT) {
            len += (size_t)snprintf(dst + len, cap - len, "%s%" PRId64, sep, idx[k].i);
            continue;
        }
        if (idx[k].start != ND_NONE)
            snprintf(a, sizeof a, "%" PRId64, idx[k].start);
        if (idx[k].stop != ND_NONE)
            snprintf(b, sizeof b, "%" PRId64, idx[k].stop);
        if (idx[k].step != 1)
            snprintf(c, sizeof c, ":%" PRId64, idx[k].step);
        len += (size_t)snprintf(dst + len, cap - len, "%s%s:%s%s", sep, a, b, c);
    }
    if (len < cap)
        snprintf(dst + len, cap - len, "]");
    return dst;
}

/* The result must be a view of a's buffer holding one new reference. */
static void expect_shares(const nd_array *out, const nd_array *a, int64_t refs_before,
                          const char *what)
{
    CHECK(out->buf == a->buf, "%s: the result has a buffer of its own; a view never "
          "copies data: it shares a's buffer (build it with nd_as_strided)", what);
    CHECK(out->buf->refcount == refs_before + 1, "%s: the buffer's refcount is %" PRId64
          ", expected %" PRId64 ": the result holds exactly one new reference", what,
          out->buf->refcount, refs_before + 1);
}

static void expect_stride(const nd_array *out, int k, int64_t want, const char *what,
                          const char *hint)
{
    CHECK(out->strides[k] == want, "%s: axis %d of the result %s has stride %" PRId64
          ", expected %" PRId64 ". Hint: %s", what, k, t_describe(out), out->strides[k],
          want, hint);
}

/* An empty view has no element (0,...,0), so its offset is free. */
static void expect_offset(const nd_array *out, int64_t want, const char *what,
                          const char *hint)
{
    CHECK(nd_numel(out) == 0 || out->offset == want, "%s: the result %s has offset %"
          PRId64 ", expected %" PRId64 ". Hint: %s", what, t_describe(out), out->offset,
          want, hint);
}

/* ---------------------------------------------------------------------- */
/* The reference: plain row-major host arrays, rebuilt position by position */
/* ---------------------------------------------------------------------- */

typedef struct {
    int ndim;
    int64_t shape[ND_MAX_DIMS];
    float *v;
} ref;

static ref ref_new(int ndim, const int64_t *shape)
{
    ref r = { .ndim = ndim };
    for (int k = 0; k < ndim; k++)
        r.shape[k] = shape[k];
    int64_t n = t_numel(ndim, shape);
    r.v = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    CHECK(r.v != NULL, "test setup: out of memory");
    return r;
}

static ref ref_of(const nd_array *a)
{
    ref r = { .ndim = a->ndim };
    for (int k = 0; k < a->ndim; k++)
        r.shape[k] = a->shape[k];
    r.v = t_gather(a);
    return r;
}

static void ref_free(ref *r)
{
    free(r->v);
    r->v = NULL;
}

static float ref_at(const ref *r, const int64_t *idx)
{
    int64_t i = 0;
    for (int k = 0; k < r->ndim; k++)
        i = i * r->shape[k] + idx[k];
    return r->v[i];
}

/* The result's shape and values must be want's. */
static void expect_ref(const nd_array *out, const ref *want, const char *what,
                       const char *hint)
{
    t_assert_shape(out, want->ndim, want->shape, what);
    t_assert_values(out, want->v, what, hint);
}

static ref ref_reshape(const ref *in, int ndim, const int64_t *shape)
{
    ref out = ref_new(ndim, shape);
    memcpy(out.v, in->v, (size_t)t_numel(ndim, shape) * sizeof(float));
    return out;
}

/* Out axis k is in's axis axes[k] (axes normalised). */
static ref ref_permute(const ref *in, const int *axes)
{
    int64_t shape[ND_MAX_DIMS] = { 0 };
    for (int k = 0; k < in->ndim; k++)
        shape[k] = in->shape[axes[k]];
    ref out = ref_new(in->ndim, shape);
    for (int64_t i = 0; i < t_numel(out.ndim, out.shape); i++) {
        int64_t j[ND_MAX_DIMS], src[ND_MAX_DIMS];
        t_unravel(i, out.ndim, out.shape, j);
        for (int k = 0; k < out.ndim; k++)
            src[axes[k]] = j[k];
        out.v[i] = ref_at(in, src);
    }
    return out;
}

/* NumPy: align at the right; a size-1 axis reads its one element for every
 * position of the target's axis. */
static ref ref_broadcast(const ref *in, int ndim, const int64_t *shape)
{
    ref out = ref_new(ndim, shape);
    int lead = ndim - in->ndim;
    for (int64_t i = 0; i < t_numel(ndim, shape); i++) {
        int64_t j[ND_MAX_DIMS], src[ND_MAX_DIMS];
        t_unravel(i, ndim, shape, j);
        for (int k = 0; k < in->ndim; k++)
            src[k] = in->shape[k] == 1 ? 0 : j[lead + k];
        out.v[i] = ref_at(in, src);
    }
    return out;
}

/* The positions start:stop:step selects on an axis of len positions,
 * computed as CPython does (PySlice_Unpack, then PySlice_AdjustIndices in
 * Objects/sliceobject.c): None becomes an extreme value, a negative bound
 * counts from the end, then bounds are clipped; then walk.  Returns the
 * count; pos gets the positions. */
static int64_t py_slice(int64_t len, int64_t start, int64_t stop, int64_t step,
                        int64_t *pos)
{
    if (start == ND_NONE)
        start = step < 0 ? INT64_MAX : 0;
    if (stop == ND_NONE)
        stop = step < 0 ? INT64_MIN : INT64_MAX;
    int64_t *bound[2] = { &start, &stop };
    for (int b = 0; b < 2; b++) {
        int64_t *x = bound[b];
        if (*x < 0) {
            *x += len;
            if (*x < 0)
                *x = step < 0 ? -1 : 0;
        } else if (*x >= len) {
            *x = step < 0 ? len - 1 : len;
        }
    }
    int64_t n = 0;
    for (int64_t p = start; step > 0 ? p < stop : p > stop; p += step)
        pos[n++] = p;
    return n;
}

/* What an index does to each axis of a: `kept[k]` says whether axis k stays;
 * count[k] positions pos[k][...] (or one position, pos[k][0], for an
 * integer index).  Free pos[k] with free_plan. */
typedef struct {
    bool kept[ND_MAX_DIMS];
    int64_t count[ND_MAX_DIMS];
    int64_t *pos[ND_MAX_DIMS];
} slice_plan;

static slice_plan plan_slice(int ndim, const int64_t *shape, int n, const nd_index *idx)
{
    slice_plan p;
    for (int k = 0; k < ndim; k++) {
        int64_t len = shape[k];
        p.pos[k] = malloc((size_t)(len > 0 ? len : 1) * sizeof(int64_t));
        CHECK(p.pos[k] != NULL, "test setup: out of memory");
        nd_index s = k < n ? idx[k] : ND_ALL;
        p.kept[k] = s.kind == ND_INDEX_SLICE;
        if (p.kept[k]) {
            p.count[k] = py_slice(len, s.start, s.stop, s.step, p.pos[k]);
        } else {
            p.count[k] = 1;
            p.pos[k][0] = s.i < 0 ? s.i + len : s.i;
        }
    }
    return p;
}

static void free_plan(int ndim, slice_plan *p)
{
    for (int k = 0; k < ndim; k++)
        free(p->pos[k]);
}

static ref ref_slice(const ref *in, int n, const nd_index *idx)
{
    slice_plan p = plan_slice(in->ndim, in->shape, n, idx);
    int ndim = 0, from[ND_MAX_DIMS];
    int64_t shape[ND_MAX_DIMS] = { 0 };
    for (int k = 0; k < in->ndim; k++)
        if (p.kept[k]) {
            from[ndim] = k;
            shape[ndim++] = p.count[k];
        }
    ref out = ref_new(ndim, shape);
    for (int64_t i = 0; i < t_numel(ndim, shape); i++) {
        int64_t j[ND_MAX_DIMS], src[ND_MAX_DIMS];
        t_unravel(i, ndim, shape, j);
        for (int k = 0; k < in->ndim; k++)
            src[k] = p.pos[k][0];
        for (int m = 0; m < ndim; m++)
            src[from[m]] = p.pos[from[m]][j[m]];
        out.v[i] = ref_at(in, src);
    }
    free_plan(in->ndim, &p);
    return out;
}

/* NumPy's diagonal: element i sits at i + max(-offset, 0) on axis1 and
 * i + max(offset, 0) on axis2 (axes normalised); the other axes keep their
 * order and the diagonal is the last axis. */
static ref ref_diagonal(const ref *in, int64_t offset, int axis1, int axis2)
{
    int64_t r0 = offset < 0 ? -offset : 0, c0 = offset > 0 ? offset : 0, len = 0;
    while (r0 + len < in->shape[axis1] && c0 + len < in->shape[axis2])
        len++;
    int64_t shape[ND_MAX_DIMS] = { 0 };
    int ndim = 0;
    for (int k = 0; k < in->ndim; k++)
        if (k != axis1 && k != axis2)
            shape[ndim++] = in->shape[k];
    shape[ndim++] = len;
    ref out = ref_new(ndim, shape);
    for (int64_t i = 0; i < t_numel(ndim, shape); i++) {
        int64_t j[ND_MAX_DIMS], src[ND_MAX_DIMS];
        t_unravel(i, ndim, shape, j);
        for (int k = 0, m = 0; k < in->ndim; k++)
            if (k != axis1 && k != axis2)
                src[k] = j[m++];
        src[axis1] = r0 + j[ndim - 1];
        src[axis2] = c0 + j[ndim - 1];
        out.v[i] = ref_at(in, src);
    }
    return out;
}

/* ---------------------------------------------------------------------- */
/* Checked views: call, then compare with the reference.  Each returns the */
/* reference of its result, so views of views can be checked in turn.     */
/* ---------------------------------------------------------------------- */

static void ok_or_fail(nd_status s, const char *what)
{
    CHECK(s == ND_OK, "%s returned %s: %s", what, nd_status_name(s), nd_last_error());
}

static ref check_reshape(const nd_array *a, const ref *ra, int ndim, const int64_t *given,
                         const int64_t *want, nd_array *out, const char *what)
{
    int64_t refs = a->buf->refcount;
    ok_or_fail(nd_reshape(a, ndim, given, out), what);
    expect_shares(out, a, refs, what);
    ref r = ref_reshape(ra, ndim, want);
    expect_ref(out, &r, what, "reshape keeps the row-major order of the elements");
    CHECK(ref_compact(out), "%s: the result %s is not compact: a reshaped compact array "
          "has the compact strides of its new shape", what, t_describe(out));
    expect_offset(out, a->offset, what, "a compact array's element (0,...,0) is at its "
                  "offset; reshape keeps it");
    return r;
}

static ref check_permute(const nd_array *a, const ref *ra, const int *axes, nd_array *out,
                         const char *what)
{
    static const char hint[] = "out axis i is a's axis axes[i] (negative axes count from "
                               "the end): take its size and stride; the offset stays";
    int norm[ND_MAX_DIMS];
    for (int k = 0; k < a->ndim; k++)
        norm[k] = axes[k] < 0 ? axes[k] + a->ndim : axes[k];
    int64_t refs = a->buf->refcount;
    ok_or_fail(nd_permute(a, axes, out), what);
    expect_shares(out, a, refs, what);
    ref r = ref_permute(ra, norm);
    t_assert_shape(out, r.ndim, r.shape, what);
    for (int k = 0; k < a->ndim; k++)
        expect_stride(out, k, a->strides[norm[k]], what, hint);
    CHECK(out->offset == a->offset, "%s: offset %" PRId64 ", expected %" PRId64 ". Hint: %s",
          what, out->offset, a->offset, hint);
    t_assert_values(out, r.v, what, hint);
    return r;
}

static ref check_broadcast(const nd_array *a, const ref *ra, int ndim, const int64_t *shape,
                           nd_array *out, const char *what)
{
    static const char hint[] = "align the shapes at the right; an added leading axis and a "
                               "stretched size-1 axis get stride 0, other axes keep theirs";
    int64_t refs = a->buf->refcount;
    ok_or_fail(nd_broadcast_to(a, ndim, shape, out), what);
    expect_shares(out, a, refs, what);
    ref r = ref_broadcast(ra, ndim, shape);
    t_assert_shape(out, ndim, shape, what);
    int lead = ndim - a->ndim;
    for (int k = 0; k < ndim; k++) {
        if (shape[k] <= 1)
            continue; /* a stride there is never used */
        if (k < lead || a->shape[k - lead] == 1)
            expect_stride(out, k, 0, what, hint);
        else
            expect_stride(out, k, a->strides[k - lead], what, hint);
    }
    expect_offset(out, a->offset, what, hint);
    t_assert_values(out, r.v, what, hint);
    return r;
}

static ref check_slice(const nd_array *a, const ref *ra, int n, const nd_index *idx,
                       nd_array *out, const char *what)
{
    static const char hint[] = "per axis, like Python: a negative start/stop counts from "
                               "the end, then clip; a negative step starts at the last "
                               "element (start defaults to size-1); offset += start*stride, "
                               "stride *= step; an integer adds i*stride and drops the axis";
    int64_t refs = a->buf->refcount;
    ok_or_fail(nd_slice(a, n, idx, out), what);
    expect_shares(out, a, refs, what);
    ref r = ref_slice(ra, n, idx);
    t_assert_shape(out, r.ndim, r.shape, what);
    slice_plan p = plan_slice(a->ndim, a->shape, n, idx);
    int64_t offset = a->offset;
    for (int k = 0, m = 0; k < a->ndim; k++) {
        if (p.count[k] > 0)
            offset += p.pos[k][0] * a->strides[k];
        if (!p.kept[k])
            continue;
        int64_t step = k < n ? idx[k].step : 1;
        if (p.count[k] > 1)
            expect_stride(out, m, a->strides[k] * step, what, hint);
        m++;
    }
    free_plan(a->ndim, &p);
    expect_offset(out, offset, what, hint);
    t_assert_values(out, r.v, what, hint);
    return r;
}

static ref check_diagonal(const nd_array *a, const ref *ra, int64_t offset, int axis1,
                          int axis2, nd_array *out, const char *what)
{
    static const char hint[] = "element i is at i+max(-offset,0) on axis1 and "
                               "i+max(offset,0) on axis2; the other axes keep their order, "
                               "the diagonal is the new LAST axis, stride "
                               "strides[axis1]+strides[axis2]";
    int a1 = axis1 < 0 ? axis1 + a->ndim : axis1, a2 = axis2 < 0 ? axis2 + a->ndim : axis2;
    int64_t refs = a->buf->refcount;
    ok_or_fail(nd_diagonal(a, offset, axis1, axis2, out), what);
    expect_shares(out, a, refs, what);
    ref r = ref_diagonal(ra, offset, a1, a2);
    t_assert_shape(out, r.ndim, r.shape, what);
    for (int k = 0, m = 0; k < a->ndim; k++)
        if (k != a1 && k != a2)
            expect_stride(out, m++, a->strides[k], what, hint);
    expect_stride(out, r.ndim - 1, a->strides[a1] + a->strides[a2], what, hint);
    if (nd_numel(out) > 0) /* then |offset| is small: no overflow */
        expect_offset(out, a->offset + (offset < 0 ? -offset * a->strides[a1]
                                                   : offset * a->strides[a2]), what, hint);
    t_assert_values(out, r.v, what, hint);
    return r;
}

/* ---------------------------------------------------------------------- */
/* Random arguments (valid ones)                                           */
/* ---------------------------------------------------------------------- */

/* A random permutation, each entry written negative half of the time. */
static void random_axes(t_rng *r, int ndim, int *axes)
{
    for (int k = 0; k < ndim; k++)
        axes[k] = k;
    for (int k = ndim - 1; k > 0; k--) {
        int j = (int)t_int(r, 0, k), t = axes[k];
        axes[k] = axes[j];
        axes[j] = t;
    }
    for (int k = 0; k < ndim; k++)
        if (t_int(r, 0, 1))
            axes[k] -= ndim;
}

/* A random shape of n elements (0..6 axes) in `want`; `given` is the same
 * with, sometimes, one entry -1 where it can be inferred.  Returns ndim. */
static int random_reshape(t_rng *r, int64_t n, int64_t *given, int64_t *want)
{
    int ndim = (int)t_int(r, 0, 6);
    if (ndim == 0 && n != 1)
        ndim = 1;
    if (n == 0) {
        for (int k = 0; k < ndim; k++)
            want[k] = t_int(r, 0, 4);
        want[t_int(r, 0, ndim - 1)] = 0;
    } else {
        int64_t rest = n;
        for (int k = 0; k < ndim; k++) {
            int64_t d = rest;
            if (k < ndim - 1)
                do
                    d = t_int(r, 1, rest);
                while (rest % d != 0);
            want[k] = d;
            rest /= d;
        }
        for (int k = ndim - 1; k > 0; k--) { /* so the remainder is not always last */
            int j = (int)t_int(r, 0, k);
            int64_t t = want[k];
            want[k] = want[j];
            want[j] = t;
        }
    }
    memcpy(given, want, (size_t)ndim * sizeof *want);
    if (ndim > 0 && t_int(r, 0, 2) == 0) {
        int k = (int)t_int(r, 0, ndim - 1);
        int64_t others = 1;
        for (int j = 0; j < ndim; j++)
            others *= j == k ? 1 : want[j];
        if (others > 0)
            given[k] = -1;
    }
    return ndim;
}

/* A random shape that `shape` broadcasts to: up to two new leading axes,
 * size-1 axes stretched (sometimes to 0).  Returns its ndim. */
static int random_target(t_rng *r, int ndim, const int64_t *shape, int64_t *target)
{
    int lead = (int)t_int(r, 0, ND_MAX_DIMS - ndim < 2 ? ND_MAX_DIMS - ndim : 2);
    for (int k = 0; k < lead; k++)
        target[k] = t_int(r, 0, 5) == 0 ? 0 : t_int(r, 1, 3);
    for (int k = 0; k < ndim; k++)
        target[lead + k] = shape[k] != 1 ? shape[k]
                           : t_int(r, 0, 5) == 0 ? 0 : t_int(r, 1, 3);
    return lead + ndim;
}

/* A random valid index of n <= ndim entries: integers (in range, either
 * sign) and slices with bounds inside, outside or absent and steps
 * -4..4 but 0. */
static int random_index(t_rng *r, int ndim, const int64_t *shape, nd_index *idx)
{
    int n = (int)t_int(r, 0, ndim);
    for (int k = 0; k < n; k++) {
        int64_t len = shape[k];
        if (len > 0 && t_int(r, 0, 3) == 0) {
            idx[k] = ND_AT(t_int(r, -len, len - 1));
            continue;
        }
        int64_t step = t_int(r, 0, 2) == 0 ? t_int(r, 2, 4) : 1;
        if (t_int(r, 0, 1))
            step = -step;
        int64_t start = t_int(r, 0, 3) == 0 ? ND_NONE : t_int(r, -len - 3, len + 3);
        int64_t stop = t_int(r, 0, 3) == 0 ? ND_NONE : t_int(r, -len - 3, len + 3);
        idx[k] = ND_SLICE(start, stop, step);
    }
    return n;
}

/* Random diagonal arguments for ndim >= 2: two different axes (written
 * negative a third of the time), an offset from past one edge to past the
 * other. */
static void random_diagonal(t_rng *r, int ndim, const int64_t *shape, int64_t *offset,
                            int *axis1, int *axis2)
{
    int a1 = (int)t_int(r, 0, ndim - 1), a2;
    do
        a2 = (int)t_int(r, 0, ndim - 1);
    while (a2 == a1);
    *offset = t_int(r, -shape[a1] - 2, shape[a2] + 2);
    *axis1 = a1 - (t_int(r, 0, 2) == 0 ? ndim : 0);
    *axis2 = a2 - (t_int(r, 0, 2) == 0 ? ndim : 0);
}

/* ---------------------------------------------------------------------- */
/* Random subjects, taken through random views step by step               */
/* ---------------------------------------------------------------------- */

/* A view under test, its reference, and how it was made (for messages). */
typedef struct {
    nd_array a;
    ref want;
    int steps;
    char text[2048];
} subject;

typedef void step_fn(t_rng *r, subject *s);

/* A random input of min_ndim..6 axes, sizes 0..max_size (compact ones
 * only, when `compact`), named "case c". */
static subject random_subject(t_rng *r, int c, int min_ndim, int64_t max_size,
                              bool compact)
{
    int64_t shape[ND_MAX_DIMS];
    int ndim = random_shape(r, min_ndim, 6, max_size, shape);
    subject s = { .a = compact ? random_compact(r, ndim, shape)
                               : random_input(r, ndim, shape) };
    s.want = ref_of(&s.a);
    snprintf(s.text, sizeof s.text, "case %d: a %s", c, t_describe(&s.a));
    return s;
}

static void subject_free(subject *s)
{
    ref_free(&s->want);
    nd_release(&s->a);
}

/* Add " -> step" to s's story; `what` gets the story for messages, with
 * the step's input described when it is itself a view. */
static void add_step(subject *s, const char *step, char *what, size_t cap)
{
    size_t len = strlen(s->text);
    snprintf(s->text + len, sizeof s->text - len, " -> %s", step);
    if (s->steps++ == 0)
        snprintf(what, cap, "%s", s->text);
    else
        snprintf(what, cap, "%s (the last step's input: %s)", s->text, t_describe(&s->a));
}

/* The checked result becomes the subject. */
static void take(subject *s, nd_array *out, ref *got)
{
    nd_release(&s->a);
    s->a = *out;
    ref_free(&s->want);
    s->want = *got;
}

static void step_reshape(t_rng *r, subject *s)
{
    int64_t given[ND_MAX_DIMS], shape[ND_MAX_DIMS];
    int n = random_reshape(r, nd_numel(&s->a), given, shape);
    char step[300], t[200], what[3072];
    snprintf(step, sizeof step, "reshape%s", nd_shape_str(n, given, t, sizeof t));
    add_step(s, step, what, sizeof what);
    nd_array out;
    ref got = check_reshape(&s->a, &s->want, n, given, shape, &out, what);
    take(s, &out, &got);
}

static void step_permute(t_rng *r, subject *s)
{
    int axes[ND_MAX_DIMS];
    random_axes(r, s->a.ndim, axes);
    char step[300], t[200], what[3072];
    snprintf(step, sizeof step, "permute%s", axes_text(s->a.ndim, axes, t, sizeof t));
    add_step(s, step, what, sizeof what);
    nd_array out;
    ref got = check_permute(&s->a, &s->want, axes, &out, what);
    take(s, &out, &got);
}

static void step_broadcast(t_rng *r, subject *s)
{
    int64_t target[ND_MAX_DIMS];
    int n = random_target(r, s->a.ndim, s->a.shape, target);
    char step[300], t[200], what[3072];
    snprintf(step, sizeof step, "broadcast_to%s", nd_shape_str(n, target, t, sizeof t));
    add_step(s, step, what, sizeof what);
    nd_array out;
    ref got = check_broadcast(&s->a, &s->want, n, target, &out, what);
    take(s, &out, &got);
}

static void step_slice(t_rng *r, subject *s)
{
    nd_index idx[ND_MAX_DIMS];
    int n = random_index(r, s->a.ndim, s->a.shape, idx);
    char step[300], t[280], what[3072];
    snprintf(step, sizeof step, "slice%s", index_text(n, idx, t, sizeof t));
    add_step(s, step, what, sizeof what);
    nd_array out;
    ref got = check_slice(&s->a, &s->want, n, idx, &out, what);
    take(s, &out, &got);
}

static void step_diagonal(t_rng *r, subject *s)
{
    int64_t offset;
    int axis1, axis2;
    random_diagonal(r, s->a.ndim, s->a.shape, &offset, &axis1, &axis2);
    char step[300], what[3072];
    snprintf(step, sizeof step, "diagonal(offset=%" PRId64 ", axis1=%d, axis2=%d)", offset,
             axis1, axis2);
    add_step(s, step, what, sizeof what);
    nd_array out;
    ref got = check_diagonal(&s->a, &s->want, offset, axis1, axis2, &out, what);
    take(s, &out, &got);
}

/* CASES random subjects, each through `first`, then (if not NULL) through
 * `second`: a view of a view. */
static void run_random(uint64_t seed, int min_ndim, int64_t max_size, bool compact,
                       step_fn *first, step_fn *second)
{
    t_rng r = t_rng_new(seed);
    for (int c = 0; c < CASES; c++) {
        subject s = random_subject(&r, c, min_ndim, max_size, compact);
        first(&r, &s);
        if (second != NULL)
            second(&r, &s);
        subject_free(&s);
    }
}

/* ---------------------------------------------------------------------- */
/* nd_compact_strides                                                      */
/* ---------------------------------------------------------------------- */

/* The documented formula, literally: strides[k] = shape[k+1] * ... *
 * shape[ndim-1].  Writes ndim entries. */
static void formula_strides(int ndim, const int64_t *shape, int64_t *strides)
{
    for (int k = 0; k < ndim; k++) {
        strides[k] = 1;
        for (int j = k + 1; j < ndim; j++)
            strides[k] *= shape[j];
    }
}

#define SENTINEL INT64_C(-777)

static void check_compact_strides(int ndim, const int64_t *shape, const char *label)
{
    int64_t got[ND_MAX_DIMS + 1], want[ND_MAX_DIMS];
    char sh[200], st[200], wt[200];
    for (int k = 0; k <= ND_MAX_DIMS; k++)
        got[k] = SENTINEL;
    nd_shape_str(ndim, shape, sh, sizeof sh);
    nd_status s = nd_compact_strides(ndim, shape, got);
    CHECK(s == ND_OK, "%s: nd_compact_strides(%d, %s) returned %s: %s", label, ndim, sh,
          nd_status_name(s), nd_last_error());
    formula_strides(ndim, shape, want);
    for (int k = 0; k <= ND_MAX_DIMS; k++)
        CHECK(k < ndim ? got[k] == want[k] : got[k] == SENTINEL,
              "%s: nd_compact_strides for shape %s gave %s, expected %s%s. Hint: strides[k] "
              "is the product of the sizes after axis k, exactly as nd.h says (the last "
              "axis has stride 1, a size 0 after axis k makes it 0); write ndim entries",
              label, sh, nd_shape_str(ndim, got, st, sizeof st),
              nd_shape_str(ndim, want, wt, sizeof wt),
              k >= ndim ? " (and it wrote past ndim entries)" : "");
}

START_TEST(compact_strides_known)
{
    static const struct { int ndim; int64_t shape[4]; } cases[] = {
        { 3, { 2, 3, 4 } }, { 1, { 5 } }, { 3, { 7, 1, 3 } }, { 4, { 2, 1, 1, 6 } },
        { 2, { 1, 1 } },    { 0, { 0 } }, { 3, { 4, 0, 3 } },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_compact_strides(cases[i].ndim, cases[i].shape, "known case");
    /* (2,3,4) -> (12,4,1), spelled out */
    int64_t shape[3] = { 2, 3, 4 }, st[3];
    T_OK(nd_compact_strides(3, shape, st));
    CHECK(st[0] == 12 && st[1] == 4 && st[2] == 1, "nd_compact_strides((2,3,4)) must be "
          "(12,4,1)");
}
END_TEST

START_TEST(compact_strides_random)
{
    t_rng r = t_rng_new(101);
    for (int c = 0; c < CASES; c++) {
        int64_t shape[ND_MAX_DIMS];
        int ndim = (int)t_int(&r, 0, ND_MAX_DIMS);
        t_random_shape(&r, ndim, 6, t_int(&r, 0, 3) == 0, 100000, shape);
        char label[32];
        snprintf(label, sizeof label, "case %d", c);
        check_compact_strides(ndim, shape, label);
    }
}
END_TEST

/* The call must fail with ND_ERR_ARG and write no stride. */
#define EXPECT_NO_STRIDES(st, ...)                                         \
    do {                                                                   \
        for (int k_ = 0; k_ <= ND_MAX_DIMS; k_++)                          \
            (st)[k_] = SENTINEL;                                           \
        EXPECT_FAIL(ND_ERR_ARG, "compact_strides", __VA_ARGS__);           \
        for (int k_ = 0; k_ <= ND_MAX_DIMS; k_++)                          \
            CHECK((st)[k_] == SENTINEL, "%s failed but wrote strides[%d]: on an error, " \
                  "leave every output as it was", #__VA_ARGS__, k_);       \
    } while (0)

START_TEST(compact_strides_errors)
{
    int64_t shape[ND_MAX_DIMS + 1] = { 2, 3, 1, 1, 1, 1, 1, 1, 1 }, st[ND_MAX_DIMS + 1];
    int64_t neg[2] = { 2, -3 };
    T_OK(nd_compact_strides(2, shape, st));
    EXPECT_NO_STRIDES(st, nd_compact_strides(ND_MAX_DIMS + 1, shape, st));
    EXPECT_NO_STRIDES(st, nd_compact_strides(-1, shape, st));
    EXPECT_NO_STRIDES(st, nd_compact_strides(2, NULL, st));
    EXPECT_NO_STRIDES(st, nd_compact_strides(2, neg, st));
    EXPECT_FAIL(ND_ERR_ARG, "compact_strides", nd_compact_strides(2, shape, NULL));
}
END_TEST

/* ---------------------------------------------------------------------- */
/* nd_is_compact                                                           */
/* ---------------------------------------------------------------------- */

START_TEST(is_compact_known)
{
    static const struct {
        const char *label;
        int ndim;
        int64_t shape[3], strides[3], offset;
        bool want;
    } cases[] = {
        { "a fresh (2,3) array", 2, { 2, 3 }, { 3, 1 }, 0, true },
        { "a (2,2) window at offset 3", 2, { 2, 2 }, { 2, 1 }, 3, true },
        { "(3,2) transposed, strides (1,3)", 2, { 3, 2 }, { 1, 3 }, 0, false },
        { "every 2nd element, (3,) stride 2", 1, { 3 }, { 2 }, 0, false },
        { "reversed, (4,) stride -1", 1, { 4 }, { -1 }, 3, false },
        { "rows with a gap, (2,3) strides (4,1)", 2, { 2, 3 }, { 4, 1 }, 0, false },
        { "broadcast, (3,) stride 0", 1, { 3 }, { 0 }, 0, false },
        { "broadcast rows, (2,3) strides (0,1)", 2, { 2, 3 }, { 0, 1 }, 0, false },
        { "size-1 axis with stride 99", 3, { 2, 1, 3 }, { 3, 99, 1 }, 0, true },
        { "size-1 axis with stride -7", 2, { 1, 4 }, { -7, 1 }, 2, true },
        { "empty (3,0), strides (5,-2)", 2, { 3, 0 }, { 5, -2 }, 4, true },
        { "empty (0,), stride 3", 1, { 0 }, { 3 }, 0, true },
        { "a scalar at offset 5", 0, { 0 }, { 0 }, 5, true },
        { "(1,1,1) with strides (0,-4,9)", 3, { 1, 1, 1 }, { 0, -4, 9 }, 1, true },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        nd_array a = t_strided(16, cases[i].ndim, cases[i].shape, cases[i].strides,
                             cases[i].offset);
        bool got;
        T_OK(nd_is_compact(&a, &got));
        CHECK(got == cases[i].want, "nd_is_compact(%s: %s) gave %s, expected %s. Hint: "
              "compact means element i (row-major) is at offset + i; size-1 axes' strides "
              "and arrays with no elements do not count", cases[i].label, t_describe(&a),
              got ? "true" : "false", cases[i].want ? "true" : "false");
        nd_release(&a);
    }
    /* views made by nd_slice: x[2:5] is compact (at offset 2), x[::2] is not */
    int64_t ten = 10;
    nd_array x = t_arange(1, &ten), v;
    nd_index window = ND_SLICE(2, 5, 1), every2 = ND_SLICE(ND_NONE, ND_NONE, 2);
    bool got;
    T_OK(nd_slice(&x, 1, &window, &v));
    T_OK(nd_is_compact(&v, &got));
    CHECK(got, "nd_is_compact(arange(10)[2:5] = %s) gave false, expected true: a window "
          "of consecutive elements is compact, whatever its offset", t_describe(&v));
    nd_release(&v);
    T_OK(nd_slice(&x, 1, &every2, &v));
    T_OK(nd_is_compact(&v, &got));
    CHECK(!got, "nd_is_compact(arange(10)[::2] = %s) gave true, expected false: it skips "
          "every other element", t_describe(&v));
    nd_release(&v);
    nd_release(&x);
}
END_TEST

START_TEST(is_compact_random)
{
    t_rng r = t_rng_new(201);
    int seen[2] = { 0, 0 };
    for (int c = 0; c < CASES; c++) {
        int64_t shape[ND_MAX_DIMS];
        int ndim = random_shape(&r, 0, 6, 5, shape);
        nd_array a = t_int(&r, 0, 2) == 0 ? random_compact(&r, ndim, shape)
                                          : random_input(&r, ndim, shape);
        bool got, want = ref_compact(&a);
        T_OK(nd_is_compact(&a, &got));
        CHECK(got == want, "case %d: nd_is_compact(%s) gave %s, expected %s. Hint: compact "
              "means row-major element i is at offset + i; ignore size-1 axes, and an "
              "empty array is compact", c, t_describe(&a), got ? "true" : "false",
              want ? "true" : "false");
        seen[want]++;
        nd_release(&a);
    }
    CHECK(seen[0] > 30 && seen[1] > 30, "test generator: only %d compact and %d non-compact "
          "cases", seen[1], seen[0]);
}
END_TEST

START_TEST(is_compact_errors)
{
    int64_t shape[2] = { 2, 3 };
    nd_array a = t_arange(2, shape);
    bool got, sentinel;
    T_OK(nd_is_compact(&a, &got));
    CHECK(got, "nd_is_compact of a fresh (2,3) array must be true");
    memset(&sentinel, 0xAB, sizeof sentinel);
    memcpy(&got, &sentinel, sizeof got); /* compared bytewise, never read */
    EXPECT_FAIL(ND_ERR_ARG, "is_compact", nd_is_compact(NULL, &got));
    CHECK(memcmp(&got, &sentinel, sizeof got) == 0, "nd_is_compact(NULL, &result) failed "
          "but wrote *result: on an error, leave every output as it was");
    EXPECT_FAIL(ND_ERR_ARG, "is_compact", nd_is_compact(&a, NULL));
    nd_release(&a);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* nd_offset_of                                                            */
/* ---------------------------------------------------------------------- */

START_TEST(offset_of_known)
{
    int64_t shape[2] = { 3, 4 }, off;
    nd_array a = t_arange(2, shape);
    int64_t i12[2] = { 1, 2 }, i00[2] = { 0, 0 }, i23[2] = { 2, 3 };
    T_OK(nd_offset_of(&a, i12, &off));
    CHECK(off == 6, "nd_offset_of((3,4) array, (1,2)) is %" PRId64 ", expected 1*4 + 2*1 = 6",
          off);
    T_OK(nd_offset_of(&a, i00, &off));
    CHECK(off == 0, "nd_offset_of((3,4) array, (0,0)) is %" PRId64 ", expected 0", off);
    T_OK(nd_offset_of(&a, i23, &off));
    CHECK(off == 11, "nd_offset_of((3,4) array, (2,3)) is %" PRId64 ", expected 11", off);
    nd_release(&a);

    /* reversed: (4,) stride -1 offset 3; element 3 is buffer[0] */
    int64_t n4 = 4, sm1 = -1, i3 = 3;
    nd_array rev = t_strided(4, 1, &n4, &sm1, 3);
    T_OK(nd_offset_of(&rev, &i3, &off));
    CHECK(off == 0, "nd_offset_of(%s, (3,)) is %" PRId64 ", expected 3 + 3*(-1) = 0",
          t_describe(&rev), off);
    nd_release(&rev);

    /* a scalar: the offset itself */
    int64_t none = 0;
    nd_array s = t_strided(8, 0, NULL, NULL, 5);
    T_OK(nd_offset_of(&s, &none, &off));
    CHECK(off == 5, "nd_offset_of(scalar at offset 5, ()) is %" PRId64 ", expected 5", off);
    nd_release(&s);
}
END_TEST

START_TEST(offset_of_random)
{
    t_rng r = t_rng_new(301);
    for (int c = 0; c < CASES; c++) {
        int64_t shape[ND_MAX_DIMS], idx[ND_MAX_DIMS], off, want;
        int ndim = (int)t_int(&r, 0, 6);
        t_random_shape(&r, ndim, 6, false, 360, shape);
        nd_array a = random_input(&r, ndim, shape);
        want = a.offset;
        for (int k = 0; k < ndim; k++) {
            idx[k] = t_int(&r, 0, shape[k] - 1);
            want += idx[k] * a.strides[k];
        }
        char at[200];
        snprintf(at, sizeof at, "%s", t_index_str(ndim, idx));
        T_OK(nd_offset_of(&a, idx, &off));
        CHECK(off == want, "case %d: nd_offset_of(%s, %s) is %" PRId64 ", expected %" PRId64
              ". Hint: offset + sum of index[k] * strides[k]", c, t_describe(&a), at, off,
              want);
        /* and that offset holds the element the view shows there */
        float *buf = t_buffer(&a, NULL), *vals = t_gather(&a);
        int64_t row = 0;
        for (int k = 0; k < ndim; k++)
            row = row * shape[k] + idx[k];
        CHECK(buf[off] == vals[row], "case %d: buffer[%" PRId64 "] is not element %s of %s",
              c, off, at, t_describe(&a));
        free(buf);
        free(vals);
        /* one index out of range, either side: never wrapped */
        if (ndim > 0) {
            int k = (int)t_int(&r, 0, ndim - 1);
            int64_t bad[4] = { shape[k], shape[k] + t_int(&r, 1, 5), -1, -shape[k] };
            idx[k] = bad[t_int(&r, 0, 3)];
            off = SENTINEL;
            EXPECT_FAIL(ND_ERR_INDEX, "offset_of", nd_offset_of(&a, idx, &off));
            CHECK(off == SENTINEL, "case %d: nd_offset_of(%s, %s) failed but wrote *offset",
                  c, t_describe(&a), t_index_str(ndim, idx));
        }
        nd_release(&a);
    }
}
END_TEST

START_TEST(offset_of_errors)
{
    int64_t shape[2] = { 2, 3 }, idx[2] = { 1, 1 }, off;
    nd_array a = t_arange(2, shape);
    T_OK(nd_offset_of(&a, idx, &off));
    off = SENTINEL;
    EXPECT_FAIL(ND_ERR_ARG, "offset_of", nd_offset_of(NULL, idx, &off));
    EXPECT_FAIL(ND_ERR_ARG, "offset_of", nd_offset_of(&a, NULL, &off));
    EXPECT_FAIL(ND_ERR_ARG, "offset_of", nd_offset_of(&a, idx, NULL));
    int64_t minus[2] = { 1, -1 }, over[2] = { 2, 0 };
    EXPECT_FAIL(ND_ERR_INDEX, "offset_of", nd_offset_of(&a, minus, &off));
    EXPECT_FAIL(ND_ERR_INDEX, "offset_of", nd_offset_of(&a, over, &off));
    CHECK(off == SENTINEL, "nd_offset_of failed but wrote *offset");
    nd_release(&a);
    /* an empty array has no element at all */
    int64_t empty[2] = { 2, 0 }, zero[2] = { 0, 0 };
    nd_array e = t_arange(2, empty);
    EXPECT_FAIL(ND_ERR_INDEX, "offset_of", nd_offset_of(&e, zero, &off));
    nd_release(&e);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* nd_reshape                                                              */
/* ---------------------------------------------------------------------- */

START_TEST(reshape_known)
{
    static const struct {
        int ndim; int64_t shape[3];      /* of a fresh arange */
        int to; int64_t given[3], want[3];
    } cases[] = {
        { 1, { 12 }, 2, { 3, 4 }, { 3, 4 } },
        { 2, { 3, 4 }, 3, { 2, -1, 3 }, { 2, 2, 3 } },
        { 2, { 3, 4 }, 1, { -1 }, { 12 } },
        { 2, { 2, 3 }, 2, { 3, 2 }, { 3, 2 } },
        { 2, { 1, 1 }, 0, { 0 }, { 0 } },
        { 0, { 0 }, 3, { 1, -1, 1 }, { 1, 1, 1 } },
        { 2, { 0, 3 }, 2, { -1, 3 }, { 0, 3 } },
        { 2, { 0, 3 }, 3, { 3, 0, 5 }, { 3, 0, 5 } },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        nd_array a = t_arange(cases[i].ndim, cases[i].shape), out;
        ref ra = ref_of(&a);
        char what[512], from[200], to[200];
        snprintf(what, sizeof what, "nd_reshape(arange of shape %s, %s)",
                 nd_shape_str(cases[i].ndim, cases[i].shape, from, sizeof from),
                 nd_shape_str(cases[i].to, cases[i].given, to, sizeof to));
        ref want = check_reshape(&a, &ra, cases[i].to, cases[i].given, cases[i].want, &out,
                                 what);
        ref_free(&want);
        ref_free(&ra);
        nd_release(&out);
        nd_release(&a);
    }
}
END_TEST

START_TEST(reshape_keeps_offset)
{
    /* a compact (3,4) window at offset 5 of a 20-element buffer */
    int64_t shape[2] = { 3, 4 }, strides[2] = { 4, 1 }, to[2] = { 2, 6 };
    nd_array a = t_strided(20, 2, shape, strides, 5), out;
    ref ra = ref_of(&a);
    char what[300];
    snprintf(what, sizeof what, "nd_reshape(%s, (2,6))", t_describe(&a));
    ref want = check_reshape(&a, &ra, 2, to, to, &out, what);
    CHECK(out.offset == 5 && out.strides[0] == 6 && out.strides[1] == 1, "%s gave %s, "
          "expected strides (6,1) offset 5", what, t_describe(&out));
    ref_free(&want);
    ref_free(&ra);
    nd_release(&out);
    nd_release(&a);
    /* compact although its size-1 axis has stride -9 */
    int64_t s3[3] = { 3, 1, 4 }, st3[3] = { 4, -9, 1 }, flat = 12;
    nd_array b = t_strided(16, 3, s3, st3, 2);
    ra = ref_of(&b);
    snprintf(what, sizeof what, "nd_reshape(%s, (12,))", t_describe(&b));
    want = check_reshape(&b, &ra, 1, &flat, &flat, &out, what);
    ref_free(&want);
    ref_free(&ra);
    nd_release(&out);
    nd_release(&b);
}
END_TEST

START_TEST(reshape_random)
{
    /* compact inputs (offsets, odd strides on size-1 axes), reshaped twice */
    run_random(401, 0, 5, true, step_reshape, step_reshape);
    /* any view: reshaped if compact, refused if not */
    t_rng r = t_rng_new(402);
    for (int c = 0; c < CASES; c++) {
        int64_t shape[ND_MAX_DIMS];
        int ndim = random_shape(&r, 0, 6, 5, shape);
        int64_t n = t_numel(ndim, shape);
        nd_array v = random_input(&r, ndim, shape), out;
        if (ref_compact(&v)) {
            T_OK(nd_reshape(&v, 1, &n, &out));
            nd_release(&out);
        } else {
            EXPECT_FAIL_OUT(&out, ND_ERR_LAYOUT, "reshape", nd_reshape(&v, 1, &n, &out));
        }
        nd_release(&v);
    }
}
END_TEST

START_TEST(reshape_errors)
{
    int64_t shape[2] = { 3, 4 }, ok[2] = { 6, 2 };
    nd_array a = t_arange(2, shape), out, spare;
    T_OK(nd_reshape(&a, 2, ok, &out));
    nd_release(&out);

    int64_t ten[2] = { 5, 2 };
    EXPECT_FAIL_OUT(&out, ND_ERR_SHAPE, "reshape", nd_reshape(&a, 2, ten, &out));
    CHECK(strstr(nd_last_error(), "(3,4)") && strstr(nd_last_error(), "(5,2)"),
          "reshape of (3,4) to (5,2) failed with \"%s\"; the message should give both shapes, "
          "e.g. \"reshape: cannot view 12 elements of shape (3,4) as shape (5,2), 10 "
          "elements\"", nd_last_error());
    int64_t no_fit[2] = { 5, -1 }, two_free[2] = { -1, -1 }, minus2[2] = { -2, -6 };
    EXPECT_FAIL_OUT(&out, ND_ERR_SHAPE, "reshape", nd_reshape(&a, 2, no_fit, &out));
    EXPECT_FAIL_OUT(&out, ND_ERR_ARG, "reshape", nd_reshape(&a, 2, two_free, &out));
    EXPECT_FAIL_OUT(&out, ND_ERR_ARG, "reshape", nd_reshape(&a, 2, minus2, &out));
    EXPECT_FAIL_OUT(&out, ND_ERR_ARG, "reshape", nd_reshape(NULL, 2, ok, &out));
    EXPECT_FAIL_OUT(&out, ND_ERR_ARG, "reshape", nd_reshape(&a, 2, NULL, &out));
    EXPECT_FAIL_OUT(&spare, ND_ERR_ARG, "reshape", nd_reshape(&a, 2, ok, NULL));

    /* ndim out of range, on a one-element array so only ndim is wrong */
    int64_t one = 1, ones[ND_MAX_DIMS + 1] = { 1, 1, 1, 1, 1, 1, 1, 1, 1 };
    nd_array s = t_arange(1, &one);
    EXPECT_FAIL_OUT(&out, ND_ERR_ARG, "reshape", nd_reshape(&s, ND_MAX_DIMS + 1, ones, &out));
    EXPECT_FAIL_OUT(&out, ND_ERR_ARG, "reshape", nd_reshape(&s, -1, ones, &out));
    nd_release(&s);

    /* -1 cannot be inferred next to a 0 */
    int64_t empty[2] = { 0, 3 }, zero_free[2] = { 0, -1 };
    nd_array e = t_arange(2, empty);
    EXPECT_FAIL_OUT(&out, ND_ERR_SHAPE, "reshape", nd_reshape(&e, 2, zero_free, &out));
    nd_release(&e);

    /* not compact: the transpose of a (3,4) array */
    int64_t tshape[2] = { 4, 3 }, tstrides[2] = { 1, 4 }, flat = 12;
    nd_array t = t_strided(12, 2, tshape, tstrides, 0);
    EXPECT_FAIL_OUT(&out, ND_ERR_LAYOUT, "reshape", nd_reshape(&t, 1, &flat, &out));
    CHECK(strstr(nd_last_error(), "compact") != NULL, "reshape of a non-compact view failed "
          "with \"%s\"; the message should say the array is not compact and to call "
          "nd_compact first", nd_last_error());
    nd_release(&t);
    nd_release(&a);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* nd_permute                                                              */
/* ---------------------------------------------------------------------- */

START_TEST(permute_known)
{
    /* (2,3) transposed: [[0,3],[1,4],[2,5]] + 0.5, strides (1,3) */
    int64_t s2[2] = { 2, 3 };
    int t[2] = { 1, 0 };
    nd_array a = t_arange(2, s2), out;
    T_OK(nd_permute(&a, t, &out));
    int64_t want_shape[2] = { 3, 2 };
    float want[6] = { 0.5f, 3.5f, 1.5f, 4.5f, 2.5f, 5.5f };
    t_assert_shape(&out, 2, want_shape, "nd_permute((2,3) arange, (1,0))");
    t_assert_values(&out, want, "nd_permute((2,3) arange, (1,0))", "a transpose");
    CHECK(out.strides[0] == 1 && out.strides[1] == 3 && out.offset == 0,
          "nd_permute((2,3) arange, (1,0)) gave %s, expected strides (1,3) offset 0",
          t_describe(&out));
    nd_release(&out);
    nd_release(&a);

    /* (2,3,4) by (2,0,1) and by the same axes written negative */
    int64_t s3[3] = { 2, 3, 4 };
    int p[3] = { 2, 0, 1 }, q[3] = { -1, -3, -2 };
    nd_array b = t_arange(3, s3);
    ref rb = ref_of(&b);
    ref r1 = check_permute(&b, &rb, p, &out, "nd_permute((2,3,4) arange, (2,0,1))");
    CHECK(out.shape[0] == 4 && out.strides[0] == 1 && out.strides[1] == 12 &&
          out.strides[2] == 4, "nd_permute((2,3,4) arange, (2,0,1)) gave %s, expected shape "
          "(4,2,3) strides (1,12,4)", t_describe(&out));
    nd_release(&out);
    ref r2 = check_permute(&b, &rb, q, &out, "nd_permute((2,3,4) arange, (-1,-3,-2))");
    ref_free(&r1);
    ref_free(&r2);
    ref_free(&rb);
    nd_release(&out);
    nd_release(&b);
}
END_TEST

START_TEST(permute_random)
{
    run_random(501, 0, 5, false, step_permute, step_permute);
}
END_TEST

START_TEST(permute_errors)
{
    int64_t shape[3] = { 2, 3, 4 };
    nd_array a = t_arange(3, shape), out, spare;
    int ok[3] = { 1, 2, 0 };
    T_OK(nd_permute(&a, ok, &out));
    nd_release(&out);
    int high[3] = { 0, 1, 3 }, low[3] = { -4, 1, 2 }, twice[3] = { 0, 0, 1 },
        twice_neg[3] = { 0, 2, -1 };
    EXPECT_FAIL_OUT(&out, ND_ERR_AXIS, "permute", nd_permute(&a, high, &out));
    EXPECT_FAIL_OUT(&out, ND_ERR_AXIS, "permute", nd_permute(&a, low, &out));
    EXPECT_FAIL_OUT(&out, ND_ERR_AXIS, "permute", nd_permute(&a, twice, &out));
    EXPECT_FAIL_OUT(&out, ND_ERR_AXIS, "permute", nd_permute(&a, twice_neg, &out));
    EXPECT_FAIL_OUT(&out, ND_ERR_ARG, "permute", nd_permute(NULL, ok, &out));
    EXPECT_FAIL_OUT(&out, ND_ERR_ARG, "permute", nd_permute(&a, NULL, &out));
    EXPECT_FAIL_OUT(&spare, ND_ERR_ARG, "permute", nd_permute(&a, ok, NULL));
    nd_release(&a);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* nd_broadcast_to                                                         */
/* ---------------------------------------------------------------------- */

START_TEST(broadcast_known)
{
    static const struct {
        int ndim; int64_t shape[2];
        int to; int64_t target[3];
        float want[12];
    } cases[] = {
        /* NumPy's example: broadcast_to([1,2,3], (3,3)) */
        { 1, { 3 }, 2, { 3, 3 }, { .5f, 1.5f, 2.5f, .5f, 1.5f, 2.5f, .5f, 1.5f, 2.5f } },
        { 2, { 3, 1 }, 2, { 3, 4 }, { .5f, .5f, .5f, .5f, 1.5f, 1.5f, 1.5f, 1.5f,
                                      2.5f, 2.5f, 2.5f, 2.5f } },
        { 0, { 0 }, 2, { 2, 2 }, { .5f, .5f, .5f, .5f } },
        { 2, { 1, 3 }, 3, { 2, 1, 3 }, { .5f, 1.5f, 2.5f, .5f, 1.5f, 2.5f } },
        { 2, { 2, 3 }, 2, { 2, 3 }, { .5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f } },
        { 1, { 0 }, 2, { 4, 0 }, { 0 } },
        { 1, { 1 }, 1, { 0 }, { 0 } },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        nd_array a = t_arange(cases[i].ndim, cases[i].shape), out;
        ref ra = ref_of(&a);
        char what[300], from[100], to[100];
        snprintf(what, sizeof what, "nd_broadcast_to(arange of shape %s, %s)",
                 nd_shape_str(cases[i].ndim, cases[i].shape, from, sizeof from),
                 nd_shape_str(cases[i].to, cases[i].target, to, sizeof to));
        ref r = check_broadcast(&a, &ra, cases[i].to, cases[i].target, &out, what);
        t_assert_values(&out, cases[i].want, what, "NumPy's broadcast_to");
        ref_free(&r);
        ref_free(&ra);
        nd_release(&out);
        nd_release(&a);
    }
}
END_TEST

START_TEST(broadcast_random)
{
    run_random(601, 0, 5, false, step_broadcast, step_broadcast);
}
END_TEST

START_TEST(broadcast_errors)
{
    int64_t shape[2] = { 3, 2 }, ok[3] = { 4, 3, 2 };
    nd_array a = t_arange(2, shape), out, spare;
    T_OK(nd_broadcast_to(&a, 3, ok, &out));
    nd_release(&out);

    int64_t wide[2] = { 3, 4 };
    EXPECT_FAIL_OUT(&out, ND_ERR_SHAPE, "broadcast", nd_broadcast_to(&a, 2, wide, &out));
    CHECK(strstr(nd_last_error(), "(3,2)") && strstr(nd_last_error(), "(3,4)"),
          "broadcast of (3,2) to (3,4) failed with \"%s\"; the message should give both "
          "shapes", nd_last_error());
    int64_t fewer[1] = { 2 }, neg[3] = { -1, 3, 2 }, nine[ND_MAX_DIMS + 1] =
        { 1, 1, 1, 1, 1, 1, 1, 3, 2 };
    EXPECT_FAIL_OUT(&out, ND_ERR_ARG, "broadcast", nd_broadcast_to(&a, 3, neg, &out));
    EXPECT_FAIL_OUT(&out, ND_ERR_ARG, "broadcast",
                    nd_broadcast_to(&a, ND_MAX_DIMS + 1, nine, &out));
    EXPECT_FAIL_OUT(&out, ND_ERR_ARG, "broadcast", nd_broadcast_to(&a, -1, ok, &out));
    EXPECT_FAIL_OUT(&out, ND_ERR_ARG, "broadcast", nd_broadcast_to(NULL, 3, ok, &out));
    EXPECT_FAIL_OUT(&out, ND_ERR_ARG, "broadcast", nd_broadcast_to(&a, 3, NULL, &out));
    EXPECT_FAIL_OUT(&spare, ND_ERR_ARG, "broadcast", nd_broadcast_to(&a, 3, ok, NULL));

    /* size 3 does not stretch to 0, and size 0 does not stretch to 1 */
    int64_t three = 3, zero = 0, one = 1;
    nd_array v = t_arange(1, &three), e = t_arange(1, &zero);
    EXPECT_FAIL_OUT(&out, ND_ERR_SHAPE, "broadcast", nd_broadcast_to(&v, 1, &zero, &out));
    EXPECT_FAIL_OUT(&out, ND_ERR_SHAPE, "broadcast", nd_broadcast_to(&e, 1, &one, &out));
    nd_release(&v);
    nd_release(&e);

    /* fewer axes than a: nd.h's ND_ERR_SHAPE ("fewer axes than a") */
    EXPECT_FAIL_OUT(&out, ND_ERR_SHAPE, "broadcast", nd_broadcast_to(&a, 1, fewer, &out));
    nd_release(&a);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* nd_slice                                                                */
/* ---------------------------------------------------------------------- */

START_TEST(slice_numpy_examples)
{
    /* x = arange(10), y = arange(12).reshape(3,4), z = arange(6).reshape(2,3,1),
     * w = zeros((0,3)); want lists positions in the base (t_arange holds
     * position + 0.5). */
    static const int64_t bases[4][4] = { { 1, 10 }, { 2, 3, 4 }, { 3, 2, 3, 1 }, { 2, 0, 3 } };
    const struct {
        const char *text;
        int base, n;
        nd_index idx[3];
        int ndim;
        int64_t shape[3];
        int want[12];
    } cases[] = {
        { "x[1:7:2]", 0, 1, { ND_SLICE(1, 7, 2) }, 1, { 3 }, { 1, 3, 5 } },
        { "x[-2:10]", 0, 1, { ND_SLICE(-2, 10, 1) }, 1, { 2 }, { 8, 9 } },
        { "x[-3:3:-1]", 0, 1, { ND_SLICE(-3, 3, -1) }, 1, { 4 }, { 7, 6, 5, 4 } },
        { "x[5:]", 0, 1, { ND_SLICE(5, ND_NONE, 1) }, 1, { 5 }, { 5, 6, 7, 8, 9 } },
        { "x[::-1]", 0, 1, { ND_SLICE(ND_NONE, ND_NONE, -1) }, 1, { 10 },
          { 9, 8, 7, 6, 5, 4, 3, 2, 1, 0 } },
        { "x[::-3]", 0, 1, { ND_SLICE(ND_NONE, ND_NONE, -3) }, 1, { 4 }, { 9, 6, 3, 0 } },
        { "x[8:1:-3]", 0, 1, { ND_SLICE(8, 1, -3) }, 1, { 3 }, { 8, 5, 2 } },
        { "x[::100]", 0, 1, { ND_SLICE(ND_NONE, ND_NONE, 100) }, 1, { 1 }, { 0 } },
        { "x[::-100]", 0, 1, { ND_SLICE(ND_NONE, ND_NONE, -100) }, 1, { 1 }, { 9 } },
        { "x[-100:100]", 0, 1, { ND_SLICE(-100, 100, 1) }, 1, { 10 },
          { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 } },
        { "x[:-100:-1]", 0, 1, { ND_SLICE(ND_NONE, -100, -1) }, 1, { 10 },
          { 9, 8, 7, 6, 5, 4, 3, 2, 1, 0 } },
        { "x[100::-2]", 0, 1, { ND_SLICE(100, ND_NONE, -2) }, 1, { 5 }, { 9, 7, 5, 3, 1 } },
        { "x[INT64_MAX:]", 0, 1, { ND_SLICE(INT64_MAX, ND_NONE, 1) }, 1, { 0 }, { 0 } },
        { "x[-INT64_MAX:INT64_MAX]", 0, 1, { ND_SLICE(-INT64_MAX, INT64_MAX, 1) }, 1, { 10 },
          { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 } },
        { "x[-100::-1]", 0, 1, { ND_SLICE(-100, ND_NONE, -1) }, 1, { 0 }, { 0 } },
        { "x[100:]", 0, 1, { ND_SLICE(100, ND_NONE, 1) }, 1, { 0 }, { 0 } },
        { "x[:-100]", 0, 1, { ND_SLICE(ND_NONE, -100, 1) }, 1, { 0 }, { 0 } },
        { "x[5:2]", 0, 1, { ND_SLICE(5, 2, 1) }, 1, { 0 }, { 0 } },
        { "x[2:5:-1]", 0, 1, { ND_SLICE(2, 5, -1) }, 1, { 0 }, { 0 } },
        { "x[-1]", 0, 1, { ND_AT(-1) }, 0, { 0 }, { 9 } },
        { "x[-10]", 0, 1, { ND_AT(-10) }, 0, { 0 }, { 0 } },
        { "x[3]", 0, 1, { ND_AT(3) }, 0, { 0 }, { 3 } },
        { "y[1]", 1, 1, { ND_AT(1) }, 1, { 4 }, { 4, 5, 6, 7 } },
        { "y[:, 1]", 1, 2, { ND_ALL, ND_AT(1) }, 1, { 3 }, { 1, 5, 9 } },
        { "y[1, -1]", 1, 2, { ND_AT(1), ND_AT(-1) }, 0, { 0 }, { 7 } },
        { "y[::-1, ::2]", 1, 2, { ND_SLICE(ND_NONE, ND_NONE, -1), ND_SLICE(ND_NONE, ND_NONE, 2) },
          2, { 3, 2 }, { 8, 10, 4, 6, 0, 2 } },
        { "y[-1:, 1:3]", 1, 2, { ND_SLICE(-1, ND_NONE, 1), ND_SLICE(1, 3, 1) }, 2, { 1, 2 },
          { 9, 10 } },
        { "y[:, 3:1:-1]", 1, 2, { ND_ALL, ND_SLICE(3, 1, -1) }, 2, { 3, 2 },
          { 3, 2, 7, 6, 11, 10 } },
        { "y[5:]", 1, 1, { ND_SLICE(5, ND_NONE, 1) }, 2, { 0, 4 }, { 0 } },
        { "y[()] (no index: all of y)", 1, 0, { ND_ALL }, 2, { 3, 4 },
          { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 } },
        { "z[1:2]", 2, 1, { ND_SLICE(1, 2, 1) }, 3, { 1, 3, 1 }, { 3, 4, 5 } },
        { "z[:, :, 0]", 2, 3, { ND_ALL, ND_ALL, ND_AT(0) }, 2, { 2, 3 }, { 0, 1, 2, 3, 4, 5 } },
        { "z[0, 1]", 2, 2, { ND_AT(0), ND_AT(1) }, 1, { 1 }, { 1 } },
        { "z[-1, ::-2, 0]", 2, 3, { ND_AT(-1), ND_SLICE(ND_NONE, ND_NONE, -2), ND_AT(0) }, 1,
          { 2 }, { 5, 3 } },
        { "w[:, 1] of an empty w, shape (0,3)", 3, 2, { ND_ALL, ND_AT(1) }, 1, { 0 }, { 0 } },
        { "w[:, ::-1] of an empty w, shape (0,3)", 3, 2,
          { ND_ALL, ND_SLICE(ND_NONE, ND_NONE, -1) }, 2, { 0, 3 }, { 0 } },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const int64_t *b = bases[cases[i].base];
        nd_array a = t_arange((int)b[0], b + 1), out;
        int64_t refs = a.buf->refcount;
        char what[200];
        snprintf(what, sizeof what, "nd_slice: %s", cases[i].text);
        ok_or_fail(nd_slice(&a, cases[i].n, cases[i].idx, &out), what);
        expect_shares(&out, &a, refs, what);
        t_assert_shape(&out, cases[i].ndim, cases[i].shape, what);
        float want[12];
        for (int k = 0; k < 12; k++)
            want[k] = (float)cases[i].want[k] + 0.5f;
        t_assert_values(&out, want, what, "Python's slicing, as in NumPy's indexing guide");
        nd_release(&out);
        nd_release(&a);
    }
}
END_TEST

START_TEST(slice_negative_step)
{
    /* x[::-1] starts at the last element: offset 9, stride -1 */
    int64_t ten = 10;
    nd_array x = t_arange(1, &ten), rev, back;
    nd_index all_back = ND_SLICE(ND_NONE, ND_NONE, -1);
    T_OK(nd_slice(&x, 1, &all_back, &rev));
    float want[10];
    for (int i = 0; i < 10; i++)
        want[i] = 9.5f - (float)i;
    t_assert_shape(&rev, 1, &ten, "nd_slice(arange(10), [::-1])");
    t_assert_values(&rev, want, "nd_slice(arange(10), [::-1])", "a negative step starts at "
                    "the last element: start defaults to size-1");
    CHECK(rev.shape[0] == 10 && rev.strides[0] == -1 && rev.offset == 9,
          "nd_slice(arange(10), [::-1]) gave %s, expected shape (10,) strides (-1,) offset 9. "
          "Hint: a negative step starts at the last element: start defaults to size-1",
          t_describe(&rev));
    /* reversed twice is the original layout */
    T_OK(nd_slice(&rev, 1, &all_back, &back));
    CHECK(back.strides[0] == 1 && back.offset == 0, "nd_slice(x[::-1], [::-1]) gave %s, "
          "expected strides (1,) offset 0", t_describe(&back));
    nd_release(&back);
    nd_release(&rev);
    nd_release(&x);

    /* y[::-1, ::-1] of a (3,4) array: strides (-4,-1), offset 11 */
    int64_t s2[2] = { 3, 4 };
    nd_index both[2] = { all_back, all_back };
    nd_array y = t_arange(2, s2), out;
    ref ry = ref_of(&y);
    ref r = check_slice(&y, &ry, 2, both, &out, "nd_slice((3,4) arange, [::-1, ::-1])");
    CHECK(out.strides[0] == -4 && out.strides[1] == -1 && out.offset == 11,
          "nd_slice((3,4) arange, [::-1, ::-1]) gave %s, expected strides (-4,-1) offset 11",
          t_describe(&out));
    ref_free(&r);
    ref_free(&ry);
    nd_release(&out);
    nd_release(&y);
}
END_TEST

START_TEST(slice_random)
{
    run_random(701, 0, 7, false, step_slice, NULL);
}
END_TEST

START_TEST(slice_of_slice)
{
    run_random(801, 0, 7, false, step_slice, step_slice);
}
END_TEST

START_TEST(slice_errors)
{
    int64_t shape[2] = { 3, 4 };
    nd_array a = t_arange(2, shape), out, spare;
    nd_index ok[2] = { ND_SLICE(1, ND_NONE, 1), ND_AT(-1) };
    T_OK(nd_slice(&a, 2, ok, &out));
    nd_release(&out);

    nd_index step0[2] = { ND_ALL, ND_SLICE(0, 2, 0) };
    nd_index high[1] = { ND_AT(3) }, low[2] = { ND_ALL, ND_AT(-5) };
    nd_index weird[1] = { ND_ALL };
    weird[0].kind = (nd_index_kind)7;
    EXPECT_FAIL_OUT(&out, ND_ERR_INDEX, "slice", nd_slice(&a, 2, step0, &out));
    EXPECT_FAIL_OUT(&out, ND_ERR_INDEX, "slice", nd_slice(&a, 1, high, &out));
    EXPECT_FAIL_OUT(&out, ND_ERR_INDEX, "slice", nd_slice(&a, 2, low, &out));
    EXPECT_FAIL_OUT(&out, ND_ERR_ARG, "slice", nd_slice(&a, 1, weird, &out));
    EXPECT_FAIL_OUT(&out, ND_ERR_ARG, "slice", nd_slice(&a, 3, ok, &out));
    EXPECT_FAIL_OUT(&out, ND_ERR_ARG, "slice", nd_slice(&a, -1, ok, &out));
    EXPECT_FAIL_OUT(&out, ND_ERR_ARG, "slice", nd_slice(NULL, 2, ok, &out));
    EXPECT_FAIL_OUT(&out, ND_ERR_ARG, "slice", nd_slice(&a, 2, NULL, &out));
    EXPECT_FAIL_OUT(&spare, ND_ERR_ARG, "slice", nd_slice(&a, 2, ok, NULL));
    nd_release(&a);

    /* an integer cannot index an empty axis */
    int64_t empty[2] = { 0, 2 };
    nd_index zero[1] = { ND_AT(0) };
    nd_array e = t_arange(2, empty);
    EXPECT_FAIL_OUT(&out, ND_ERR_INDEX, "slice", nd_slice(&e, 1, zero, &out));
    nd_release(&e);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* nd_diagonal                                                             */
/* ---------------------------------------------------------------------- */

START_TEST(diagonal_known)
{
    /* want: values as positions in the arange; strides/offset fixed by NumPy */
    static const struct {
        const char *text;
        int ndim; int64_t shape[4];
        int64_t offset; int axis1, axis2;
        int out_ndim; int64_t out_shape[3];
        int want[8];
        int64_t strides[3], out_offset;
    } cases[] = {
        { "arange(4).reshape(2,2).diagonal()", 2, { 2, 2 }, 0, 0, 1, 1, { 2 }, { 0, 3 },
          { 3 }, 0 },
        { "arange(4).reshape(2,2).diagonal(1)", 2, { 2, 2 }, 1, 0, 1, 1, { 1 }, { 1 },
          { 3 }, 1 },
        { "arange(4).reshape(2,2).diagonal(-1)", 2, { 2, 2 }, -1, 0, 1, 1, { 1 }, { 2 },
          { 3 }, 2 },
        { "arange(8).reshape(2,2,2).diagonal(0, 0, 1)", 3, { 2, 2, 2 }, 0, 0, 1, 2, { 2, 2 },
          { 0, 6, 1, 7 }, { 1, 6 }, 0 },
        { "arange(24).reshape(2,3,4).diagonal(0, 0, 2)", 3, { 2, 3, 4 }, 0, 0, 2, 2, { 3, 2 },
          { 0, 13, 4, 17, 8, 21 }, { 4, 13 }, 0 },
        { "arange(24).reshape(2,3,4).diagonal(1, 0, 2)", 3, { 2, 3, 4 }, 1, 0, 2, 2, { 3, 2 },
          { 1, 14, 5, 18, 9, 22 }, { 4, 13 }, 1 },
        { "arange(24).reshape(2,3,4).diagonal(0, -1, 0)", 3, { 2, 3, 4 }, 0, -1, 0, 2,
          { 3, 2 }, { 0, 13, 4, 17, 8, 21 }, { 4, 13 }, 0 },
        { "arange(12).reshape(3,4).diagonal(1, 1, 0)", 2, { 3, 4 }, 1, 1, 0, 1, { 2 },
          { 4, 9 }, { 5 }, 4 },
        { "arange(36).reshape(2,3,2,3).diagonal(-1, 1, 3)", 4, { 2, 3, 2, 3 }, -1, 1, 3, 3,
          { 2, 2, 2 }, { 6, 13, 9, 16, 24, 31, 27, 34 }, { 18, 3, 7 }, 6 },
        { "zeros((0,2,3)).diagonal(1, 1, 2), empty", 3, { 0, 2, 3 }, 1, 1, 2, 2, { 0, 2 },
          { 0 }, { 6, 4 }, 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        nd_array a = t_arange(cases[i].ndim, cases[i].shape), out;
        int64_t refs = a.buf->refcount;
        char what[200];
        snprintf(what, sizeof what, "nd_diagonal: %s", cases[i].text);
        ok_or_fail(nd_diagonal(&a, cases[i].offset, cases[i].axis1, cases[i].axis2, &out),
                   what);
        expect_shares(&out, &a, refs, what);
        t_assert_shape(&out, cases[i].out_ndim, cases[i].out_shape, what);
        float want[8];
        for (int k = 0; k < 8; k++)
            want[k] = (float)cases[i].want[k] + 0.5f;
        t_assert_values(&out, want, what, "NumPy's diagonal: the other axes first, in "
                        "order, then the diagonal");
        for (int k = 0; k < cases[i].out_ndim; k++)
            expect_stride(&out, k, cases[i].strides[k], what, "the diagonal's stride is "
                          "strides[axis1] + strides[axis2]");
        expect_offset(&out, cases[i].out_offset, what, "offset > 0 starts at column offset; "
                      "offset < 0 at row -offset");
        nd_release(&out);
        nd_release(&a);
    }
}
END_TEST

START_TEST(diagonal_offsets)
{
    /* arange(12).reshape(3,4).diagonal(k), from far below to far above */
    static const struct { int64_t offset; int len; int want[3]; } cases[] = {
        { 0, 3, { 0, 5, 10 } }, { 1, 3, { 1, 6, 11 } }, { 2, 2, { 2, 7 } }, { 3, 1, { 3 } },
        { 4, 0, { 0 } }, { 100, 0, { 0 } }, { -1, 2, { 4, 9 } }, { -2, 1, { 8 } },
        { -3, 0, { 0 } }, { -100, 0, { 0 } }, { INT64_MAX, 0, { 0 } },
        { -INT64_MAX, 0, { 0 } },
    };
    int64_t shape[2] = { 3, 4 };
    nd_array a = t_arange(2, shape);
    ref ra = ref_of(&a);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        nd_array out;
        char what[200];
        snprintf(what, sizeof what, "nd_diagonal((3,4) arange, offset %" PRId64 ", 0, 1)",
                 cases[i].offset);
        ref r = check_diagonal(&a, &ra, cases[i].offset, 0, 1, &out, what);
        int64_t len = cases[i].len;
        float want[3];
        for (int k = 0; k < 3; k++)
            want[k] = (float)cases[i].want[k] + 0.5f;
        t_assert_shape(&out, 1, &len, what);
        t_assert_values(&out, want, what, "a diagonal past the edge is empty");
        ref_free(&r);
        nd_release(&out);
    }
    ref_free(&ra);
    nd_release(&a);
}
END_TEST

START_TEST(diagonal_random)
{
    run_random(901, 2, 5, false, step_diagonal, NULL);
}
END_TEST

START_TEST(diagonal_errors)
{
    int64_t shape[3] = { 2, 3, 4 };
    nd_array a = t_arange(3, shape), out, spare;
    T_OK(nd_diagonal(&a, 0, 0, 2, &out));
    nd_release(&out);
    EXPECT_FAIL_OUT(&out, ND_ERR_AXIS, "diagonal", nd_diagonal(&a, 0, 1, 1, &out));
    EXPECT_FAIL_OUT(&out, ND_ERR_AXIS, "diagonal", nd_diagonal(&a, 0, 0, -3, &out));
    EXPECT_FAIL_OUT(&out, ND_ERR_AXIS, "diagonal", nd_diagonal(&a, 0, 0, 3, &out));
    EXPECT_FAIL_OUT(&out, ND_ERR_AXIS, "diagonal", nd_diagonal(&a, 0, -4, 1, &out));
    EXPECT_FAIL_OUT(&out, ND_ERR_ARG, "diagonal", nd_diagonal(NULL, 0, 0, 1, &out));
    EXPECT_FAIL_OUT(&spare, ND_ERR_ARG, "diagonal", nd_diagonal(&a, 0, 0, 1, NULL));
    nd_release(&a);
    int64_t four = 4;
    nd_array v = t_arange(1, &four), s = t_arange(0, NULL);
    EXPECT_FAIL_OUT(&out, ND_ERR_ARG, "diagonal", nd_diagonal(&v, 0, 0, 1, &out));
    EXPECT_FAIL_OUT(&out, ND_ERR_ARG, "diagonal", nd_diagonal(&s, 0, 0, 1, &out));
    nd_release(&v);
    nd_release(&s);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* All views together                                                      */
/* ---------------------------------------------------------------------- */

/* Views of views of views: chains of 2 to 4 random views (reshape only of
 * compact ones), each step checked against the reference chained the same
 * way; at the end only the last view holds the buffer. */
START_TEST(views_chain_random)
{
    static step_fn *const steps[] = { step_permute, step_broadcast, step_slice,
                                      step_diagonal, step_reshape };
    t_rng r = t_rng_new(1001);
    for (int c = 0; c < CASES; c++) {
        subject s = random_subject(&r, c, 0, 4, false);
        for (int n = (int)t_int(&r, 2, 4); n > 0; n--) {
            int k = (int)t_int(&r, 0, 4);
            if (k == 3 && s.a.ndim < 2)
                k = 2; /* diagonal needs two axes */
            if (k == 4 && !ref_compact(&s.a))
                k = 0; /* reshape needs a compact view */
            steps[k](&r, &s);
        }
        CHECK(s.a.buf->refcount == 1, "%s: the last view's buffer has refcount %" PRId64
              ", expected 1: each view holds one reference and gives it back on release",
              s.text, s.a.buf->refcount);
        subject_free(&s);
    }
}
END_TEST

/* out may be the input struct itself: f(&x, ..., &x) replaces x's view and
 * its reference, so the buffer's refcount does not change. */
START_TEST(views_out_is_input)
{
    int64_t shape[3] = { 2, 3, 4 }, flat[2] = { 4, 6 }, target[4] = { 2, 2, 3, 4 };
    int axes[3] = { 2, 0, 1 };
    nd_index idx[2] = { ND_AT(-1), ND_SLICE(ND_NONE, ND_NONE, -2) };
    nd_array base = t_arange(3, shape);
    ref rb = ref_of(&base);
    for (int op = 0; op < 5; op++) {
        nd_array x;
        T_OK(nd_share(&base, &x));
        const char *what;
        nd_status s;
        ref want;
        switch (op) {
        case 0:
            what = "nd_permute(&x, (2,0,1), &x) with x a (2,3,4) arange";
            s = nd_permute(&x, axes, &x);
            want = ref_permute(&rb, axes);
            break;
        case 1:
            what = "nd_reshape(&x, (4,6), &x) with x a (2,3,4) arange";
            s = nd_reshape(&x, 2, flat, &x);
            want = ref_reshape(&rb, 2, flat);
            break;
        case 2:
            what = "nd_broadcast_to(&x, (2,2,3,4), &x) with x a (2,3,4) arange";
            s = nd_broadcast_to(&x, 4, target, &x);
            want = ref_broadcast(&rb, 4, target);
            break;
        case 3:
            what = "nd_slice(&x, [-1, ::-2], &x) with x a (2,3,4) arange";
            s = nd_slice(&x, 2, idx, &x);
            want = ref_slice(&rb, 2, idx);
            break;
        default:
            what = "nd_diagonal(&x, 1, 2, 1, &x) with x a (2,3,4) arange";
            s = nd_diagonal(&x, 1, 2, 1, &x);
            want = ref_diagonal(&rb, 1, 2, 1);
            break;
        }
        ok_or_fail(s, what);
        CHECK(x.buf == base.buf && base.buf->refcount == 2, "%s: the buffer's refcount is %"
              PRId64 ", expected 2 (base and x). Hint: when out is a, make the view, then "
              "release a's old reference, then store the view", what, base.buf->refcount);
        expect_ref(&x, &want, what, "out may be the same struct as a");
        ref_free(&want);
        nd_release(&x);
    }
    ref_free(&rb);
    nd_release(&base);
}
END_TEST

/* A bad array argument must fail with ND_ERR_ARG, name the operation and
 * leave the output alone. */
static void expect_bad_array(nd_status s, const char *op, const char *kind,
                             const nd_array *out)
{
    CHECK(s == ND_ERR_ARG, "nd_%s given %s returned %s, expected ND_ERR_ARG%s%s", op, kind,
          nd_status_name(s), s == ND_OK ? "" : ": ", s == ND_OK ? "" : nd_last_error());
    CHECK(strstr(nd_last_error(), op) != NULL, "nd_%s given %s failed with the message \"%s\", "
          "which does not name the operation \"%s\"", op, kind, nd_last_error(), op);
    if (out != NULL)
        t_assert_untouched(out, op);
}

START_TEST(views_reject_bad_arrays)
{
    int64_t shape[2] = { 2, 3 };
    int axes[ND_MAX_DIMS + 1] = { 1, 0, 2, 3, 4, 5, 6, 7, 8 };
    nd_array base = t_arange(2, shape), out;
    T_OK(nd_permute(&base, axes, &out));
    nd_release(&out);

    nd_array bad[3];
    const char *kind[3] = { "a released array (buf NULL)", "an array with ndim 9",
                            "an array with ndim -1" };
    bad[0] = t_arange(2, shape);
    nd_release(&bad[0]);
    bad[1] = base;
    bad[1].ndim = ND_MAX_DIMS + 1;
    bad[2] = base;
    bad[2].ndim = -1;
    int64_t idx[ND_MAX_DIMS + 1] = { 0 }, off, six = 6;
    nd_index all[1] = { ND_ALL };
    bool flag;
    for (int b = 0; b < 3; b++) {
        const nd_array *a = &bad[b];
        nd_clear_error();
        expect_bad_array(nd_is_compact(a, &flag), "is_compact", kind[b], NULL);
        nd_clear_error();
        expect_bad_array(nd_offset_of(a, idx, &off), "offset_of", kind[b], NULL);
        nd_clear_error();
        t_poison(&out);
        expect_bad_array(nd_reshape(a, 1, &six, &out), "reshape", kind[b], &out);
        nd_clear_error();
        expect_bad_array(nd_permute(a, axes, &out), "permute", kind[b], &out);
        nd_clear_error();
        expect_bad_array(nd_broadcast_to(a, 2, shape, &out), "broadcast", kind[b], &out);
        nd_clear_error();
        expect_bad_array(nd_slice(a, 1, all, &out), "slice", kind[b], &out);
        nd_clear_error();
        expect_bad_array(nd_diagonal(a, 0, 0, 1, &out), "diagonal", kind[b], &out);
    }
    nd_release(&base);
}
END_TEST

/* ---------------------------------------------------------------------- */

/* ---------------------------------------------------------------------- */
/* Extreme shapes, strides and offsets (issue #17): regression tests.      */
/* The rules of "Valid arrays" in nd.h bound sizes and the elements an     */
/* array reaches, but not the strides it never steps along (size-1 axes,   */
/* arrays with no elements), which may hold any int64: arithmetic on them  */
/* must be checked (nd_add_ok, nd_mul_ok in internal.h) or skipped.  Run   */
/* these with SAN=1: an overflow is undefined behaviour, which UBSan turns */
/* into a failure even where the wrapped value happens to pass.            */
/* ---------------------------------------------------------------------- */

#define X_P2(e) ((int64_t)1 << (e))

/* Finding 2: shapes whose sizes other than 0 multiply past ND_MAX_NUMEL are
 * refused, whatever their order; their compact strides once overflowed. */
START_TEST(extreme_compact_strides_reshape)
{
    int64_t small[3] = { 2, 3, 4 }, st[3], want[3] = { 12, 4, 1 };
    T_OK(nd_compact_strides(3, small, st));
    CHECK(memcmp(st, want, sizeof st) == 0, "nd_compact_strides(3, (2,3,4)) gave %" PRId64
          ",%" PRId64 ",%" PRId64, st[0], st[1], st[2]);
    int64_t wide[3] = { 0, X_P2(62), 4 }, most[3] = { X_P2(40), 0, X_P2(18) };
    EXPECT_FAIL(ND_ERR_ARG, "compact_strides", nd_compact_strides(3, wide, st));
    T_OK(nd_compact_strides(3, most, st));
    int64_t zero = 0, seven[8] = { 7, 7, 7, 7, 7, 7, 0, INT64_MAX };
    nd_array a = t_arange(1, &zero), out;
    t_poison(&out);
    EXPECT_FAIL_OUT(&out, ND_ERR_ARG, "reshape", nd_reshape(&a, 3, wide, &out));
    EXPECT_FAIL_OUT(&out, ND_ERR_ARG, "reshape", nd_reshape(&a, 8, seven, &out));
    T_OK(nd_reshape(&a, 3, most, &out));
    t_assert_shape(&out, 3, most, "reshape of (0,) to (2^40,0,2^18)");
    nd_release(&out);
    nd_release(&a);
}
END_TEST

/* Finding 3: (7,7,7,7,7,7,0,INT64_MAX) was once a valid shape in that
 * order, and not after a permute; now it is refused in every order, and
 * every permutation of a valid array is valid, and so are its diagonals:
 * (7,7,7,7,7,7,0,2^41) is as valid in any order. */
START_TEST(extreme_permute_diagonal_valid)
{
    int64_t shape[8] = { 7, 7, 7, 7, 7, 7, 0, X_P2(41) };
    int64_t seven[8] = { 7, 7, 7, 7, 7, 7, 0, INT64_MAX };
    nd_array a, out;
    T_OK(nd_empty(T_DEV, 0, NULL, &a));
    EXPECT_FAIL_OUT(&out, ND_ERR_ARG, "broadcast_to", nd_broadcast_to(&a, 8, seven, &out));
    nd_release(&a);
    T_OK(nd_empty(T_DEV, 8, shape, &a));
    for (int r = 0; r < 8; r++) {
        int axes[8];
        for (int k = 0; k < 8; k++)
            axes[k] = (k + r) % 8;
        T_OK(nd_permute(&a, axes, &out));
        CHECK(out.shape[0] == shape[r], "permute by rotation %d gave %s", r, t_describe(&out));
        nd_release(&out);
    }
    T_OK(nd_diagonal(&a, 0, 0, 7, &out));
    nd_release(&out);
    T_OK(nd_diagonal(&a, 3, 6, 7, &out));
    nd_release(&out);
    nd_release(&a);
}
END_TEST

/* Finding 4: nd_diagonal adds two strides, and strides of size-1 axes may
 * be anything; the start of an array with no elements must not move. */
START_TEST(extreme_diagonal_strides)
{
    int64_t four = 4, ones[2] = { 1, 1 }, mins[2] = { INT64_MIN, INT64_MIN };
    nd_array base = t_arange(1, &four), a, out;
    int64_t s22[2] = { 2, 2 }, t22[2] = { 2, 1 };
    T_OK(nd_as_strided(&base, 2, s22, t22, 0, &a));
    T_OK(nd_diagonal(&a, 0, 0, 1, &out));
    float all[4];
    T_OK(nd_buffer_to_host(&base, all, sizeof all));
    float want[2] = { all[0], all[3] };
    t_assert_values(&out, want, "diagonal of a (2,2) view", "");
    nd_release(&out);
    nd_release(&a);

    T_OK(nd_as_strided(&base, 2, ones, mins, 3, &a));   /* (1,1), strides INT64_MIN */
    T_OK(nd_diagonal(&a, 0, 0, 1, &out));
    int64_t one = 1;
    t_assert_shape(&out, 1, &one, "diagonal of a (1,1) view with strides (INT64_MIN,INT64_MIN)");
    t_assert_values(&out, &all[3], "diagonal of a (1,1) view with strides (INT64_MIN,INT64_MIN)",
                    "strides[axis1] + strides[axis2] overflows here: add with nd_add_ok");
    nd_release(&out);
    nd_release(&a);

    /* (3,0,4) with strides (2^62,1,2^62): no elements, any strides */
    int64_t s304[3] = { 3, 0, 4 }, big[3] = { X_P2(62), 1, X_P2(62) };
    T_OK(nd_as_strided(&base, 3, s304, big, 0, &a));
    int64_t offs[4] = { 2, -2, 0, INT64_MAX };
    for (int i = 0; i < 4; i++) {
        T_OK(nd_diagonal(&a, offs[i], 0, 2, &out));
        CHECK(out.ndim == 2 && out.shape[0] == 0 && out.offset == 0,
              "diagonal(offset %" PRId64 ") of (3,0,4) strides (2^62,1,2^62) gave %s, expected "
              "shape (0,n) at a's offset 0", offs[i], t_describe(&out));
        nd_release(&out);
    }
    nd_release(&a);
    nd_release(&base);
}
END_TEST

/* Finding 4, in slicing and nd_offset_of: on an array with no elements an
 * index times its axis' stride may overflow, and must not be computed. */
START_TEST(extreme_slice_offset_of_empty)
{
    int64_t four = 4, idx[2] = { 1, 1 }, off = -1;
    nd_array base = t_arange(1, &four), a, out;
    int64_t s22[2] = { 2, 2 }, t22[2] = { 2, 1 };
    T_OK(nd_as_strided(&base, 2, s22, t22, 0, &a));
    T_OK(nd_offset_of(&a, idx, &off));
    CHECK(off == 3, "nd_offset_of((2,2) strides (2,1), (1,1)) gave %" PRId64 ", expected 3",
          off);
    nd_release(&a);

    int64_t s50[2] = { 5, 0 }, huge[2] = { INT64_MAX, 1 }, last[2] = { 4, 0 };
    T_OK(nd_as_strided(&base, 2, s50, huge, 2, &a));
    EXPECT_FAIL(ND_ERR_INDEX, "offset_of", nd_offset_of(&a, last, &off));
    nd_index at4[1] = { ND_AT(4) }, from4[1] = { ND_SLICE(4, 5, 1) };
    T_OK(nd_slice(&a, 1, at4, &out));
    CHECK(out.ndim == 1 && out.shape[0] == 0 && out.offset == 2, "nd_slice([4]) of (5,0) "
          "strides (INT64_MAX,1) offset 2 gave %s, expected shape (0,) at offset 2",
          t_describe(&out));
    nd_release(&out);
    T_OK(nd_slice(&a, 1, from4, &out));
    CHECK(out.ndim == 2 && out.shape[0] == 1 && out.shape[1] == 0 && out.offset == 2,
          "nd_slice([4:5]) of (5,0) strides (INT64_MAX,1) offset 2 gave %s, expected shape "
          "(1,0) at offset 2", t_describe(&out));
    nd_release(&out);
    nd_release(&a);
    nd_release(&base);
}
END_TEST

static void add_extreme_tests(Suite *s)
{
    T_ADD_HOST(s, extreme_compact_strides_reshape);
    T_ADD(s, extreme_permute_diagonal_valid);
    T_ADD(s, extreme_diagonal_strides);
    T_ADD(s, extreme_slice_offset_of_empty);
}

Suite *suite_01_views(void)
{
    Suite *s = t_suite(1, "01_views");
    T_ADD_HOST(s, compact_strides_known);
    T_ADD_HOST(s, compact_strides_random);
    T_ADD_HOST(s, compact_strides_errors);
    T_ADD(s, is_compact_known);
    T_ADD(s, is_compact_random);
    T_ADD(s, is_compact_errors);
    T_ADD(s, offset_of_known);
    T_ADD(s, offset_of_random);
    T_ADD(s, offset_of_errors);
    T_ADD(s, reshape_known);
    T_ADD(s, reshape_keeps_offset);
    T_ADD(s, reshape_random);
    T_ADD(s, reshape_errors);
    T_ADD(s, permute_known);
    T_ADD(s, permute_random);
    T_ADD(s, permute_errors);
    T_ADD(s, broadcast_known);
    T_ADD(s, broadcast_random);
    T_ADD(s, broadcast_errors);
    T_ADD(s, slice_numpy_examples);
    T_ADD(s, slice_negative_step);
    T_ADD(s, slice_random);
    T_ADD(s, slice_of_slice);
    T_ADD(s, slice_errors);
    T_ADD(s, diagonal_known);
    T_ADD(s, diagonal_offsets);
    T_ADD(s, diagonal_random);
    T_ADD(s, diagonal_errors);
    T_ADD(s, views_chain_random);
    T_ADD(s, views_out_is_input);
    T_ADD(s, views_reject_bad_arrays);
    add_extreme_tests(s);
    return s;
}
