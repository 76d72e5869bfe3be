/*
 * h01_views.c -- hidden tests of lesson 1: strides and views.
 *
 * What this file covers, in nd.h's order (the suite at the end lists every
 * test with its points and hint):
 *
 *   nd_compact_strides  every shape of up to 5 axes with sizes 0..3, random
 *                       shapes of 6..8 axes, huge sizes; nothing written
 *                       past ndim or on an error
 *   nd_is_compact       thousands of random layouts (any small strides,
 *                       compact ones perturbed by one stride) against the
 *                       definition; agreement with nd_compact_strides
 *   nd_offset_of        EVERY index of hundreds of random views of up to 8
 *                       axes; every axis out of range on either side
 *   nd_reshape          round trips of compact views with offsets and odd
 *                       size-1 strides (shape, strides and offset restored);
 *                       -1 with empty arrays; layout and argument errors
 *   nd_permute          permute then the inverse is the identity (shape,
 *                       strides, offset); two permutes equal the composed
 *                       one; every axis triple in -5..4 for 3 axes
 *   nd_broadcast_to     broadcast of an already-broadcast view equals the
 *                       direct one; every pair of shapes of sizes 0..3 and
 *                       up to 3 axes against NumPy's rule
 *   nd_slice            1-D slices for every start/stop in -9..9, None and
 *                       +-INT64_MAX, steps -7..7 and huge ones, on a
 *                       plain and a reversed strided base (Python's
 *                       slice.indices as the reference); slices of slices
 *                       against ONE combined slice computed here; integer
 *                       indices on 8 axes; every error on every axis
 *   nd_diagonal         random views (negative strides, transposes, stride
 *                       0) of up to 8 axes; every axis pair of a 4-D and an
 *                       8-D view with offsets on both sides; the symmetry
 *                       diagonal(a, k, i, j) == diagonal(a, -k, j, i)
 *   all views           the result shares the buffer (refcount + 1) and the
 *                       input is untouched; out == a, on success and on
 *                       failure; 2^22-element and 8-D views; long random
 *                       chains of views of views
 *
 * The reference never calls lesson code: a view is described by the list
 * of buffer offsets of its elements in row-major order (struct lay), and
 * each operation is redone on that list, position by position.  A result
 * must then have the reference's shape, the offset and strides the list
 * implies (strides of axes longer than 1, offset when it has elements),
 * and, through t_assert_values, the values at those offsets.  Inputs come
 * from nd_as_strided (gen_view below); buffers hold distinct values.
 *
 * Every test first calls a lesson-1 function on a valid input with T_OK,
 * so that on the skeleton each test fails with "not implemented".
 */
#include "grader.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The largest slice step tested: slicing must not overflow even here. */
#define HUGE_STEP INT64_MAX

/* Fail with a formatted message unless cond holds (cheap in loops). */
#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (!(cond))                                                       \
            ck_abort_msg(__VA_ARGS__);                                     \
    } while (0)

/* The call must fail with `want`, with a message naming `op`. */
#define EXPECT_FAIL(want, op, ...)                                         \
    do {                                                                   \
        nd_clear_error();                                                  \
        t_err((__VA_ARGS__), (want), #__VA_ARGS__, __FILE__, __LINE__);   \
        CHECK(strstr(nd_last_error(), (op)) != NULL, "%s failed as it "    \
              "should, but its message \"%s\" does not name the operation " \
              "\"%s\"", #__VA_ARGS__, nd_last_error(), (op));              \
    } while (0)

/* The same for a call filling the nd_array *outp: it must stay poisoned. */
#define EXPECT_FAIL_OUT(outp, want, op, ...)                               \
    do {                                                                   \
        t_poison(outp);                                                    \
        EXPECT_FAIL(want, op, __VA_ARGS__);                                \
        t_assert_untouched((outp), #__VA_ARGS__);                          \
    } while (0)

/* ---------------------------------------------------------------------- */
/* Small helpers                                                          */
/* ---------------------------------------------------------------------- */

/* For calls in loops, whose text alone would not say which case failed:
 * `got` (the status of the call `what` describes) must be `want`, with a
 * message naming `op`; *out, poisoned before the call, untouched. */
static void expect_fail(nd_status got, nd_status want, const char *op, const char *what,
                        const nd_array *out)
{
    CHECK(got == want, "%s returned %s, expected %s%s%s", what, nd_status_name(got),
          nd_status_name(want), got == ND_OK ? "" : ": ", got == ND_OK ? "" : nd_last_error());
    CHECK(strstr(nd_last_error(), op) != NULL, "%s failed as it should, but its message "
          "\"%s\" does not name the operation \"%s\"", what, nd_last_error(), op);
    if (out != NULL)
        t_assert_untouched(out, what);
}

/* A random permutation of 0..n-1; each entry written negative (k - n)
 * half of the time when `negative`. */
static void random_perm(t_rng *r, int n, int *p, bool negative)
{
    for (int k = 0; k < n; k++)
        p[k] = k;
    for (int k = n - 1; k > 0; k--) {
        int j = (int)t_int(r, 0, k), t = p[k];
        p[k] = p[j];
        p[j] = t;
    }
    for (int k = 0; negative && k < n; k++)
        if (t_int(r, 0, 1))
            p[k] -= n;
}

/* A random input view of `shape` with a buffer of at most about `cap`
 * elements: kind 0 a fresh compact array; 1 a permuted, sliced view
 * (steps +-1, +-2, an offset, no element twice); 2 the same, some axes
 * with stride 0; 3 a compact window at an offset whose size-1 axes (or
 * all, when empty) have arbitrary strides.  Built with nd_as_strided. */
static nd_array gen_view(t_rng *r, int ndim, const int64_t *shape, int kind, int64_t cap)
{
    int64_t n = t_numel(ndim, shape), strides[ND_MAX_DIMS];
    if (kind == 0)
        return t_arange(ndim, shape);
    if (kind == 3) {
        t_row_major(ndim, shape, strides);
        for (int k = 0; k < ndim; k++)
            if (shape[k] == 1 || n == 0)
                strides[k] = t_int(r, -40, 40);
        int64_t pad = t_int(r, 0, 7);
        return t_strided(pad + n + t_int(r, 0, 7), ndim, shape, strides, pad);
    }
    int perm[ND_MAX_DIMS];
    int64_t b[ND_MAX_DIMS], step[ND_MAX_DIMS], bs[ND_MAX_DIMS], total = 1;
    random_perm(r, ndim, perm, false);
    for (int k = 0; k < ndim; k++) {
        int64_t m = t_int(r, 0, 2) == 0 ? 2 : 1, slack = t_int(r, 0, 3) == 0 ? 1 : 0;
        int64_t need = shape[k] > 0 ? (shape[k] - 1) * m + 1 : 0;
        if ((need + slack) * total > cap) {
            m = 1;
            slack = 0;
            need = shape[k];
        }
        step[k] = t_int(r, 0, 2) == 0 ? -m : m;
        b[k] = need + slack;
        total *= b[k] > 0 ? b[k] : 1;
    }
    int64_t s = 1;
    for (int j = ndim - 1; j >= 0; j--) {
        bs[perm[j]] = s;
        s *= b[perm[j]] > 0 ? b[perm[j]] : 1;
    }
    int64_t pad = t_int(r, 0, 3), offset = pad;
    for (int k = 0; k < ndim; k++) {
        strides[k] = step[k] * bs[k];
        if (kind == 2 && shape[k] > 1 && t_int(r, 0, 3) == 0)
            strides[k] = 0;
        if (shape[k] == 0 || b[k] == 0)
            continue;
        int64_t span = (shape[k] - 1) * llabs(step[k]);
        int64_t first = t_int(r, 0, b[k] - 1 - span);
        offset += (step[k] < 0 ? b[k] - 1 - first : first) * bs[k];
    }
    return t_strided(pad + total + t_int(r, 0, 3), ndim, shape, strides, offset);
}

/* A random shape of lo..hi axes, sizes up to max (1 often), numel <= cap;
 * zero sizes in about one shape of five. */
static int gen_shape(t_rng *r, int lo, int hi, int64_t max, int64_t cap, int64_t *shape)
{
    int ndim = (int)t_int(r, lo, hi);
    return t_random_shape(r, ndim, max, t_int(r, 0, 4) == 0, cap, shape);
}

/* "(2,0,1)" for an int list. */
static const char *axes_text(int n, const int *axes, char *dst, size_t cap)
{
    int64_t v[ND_MAX_DIMS + 1];
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
        if (idx[k].kind != ND_INDEX_SLICE) {
            len += (size_t)snprintf(dst + len, cap - len, "%s<kind %d>", sep, (int)idx[k].kind);
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

/* An input as it was before a call, to show the call left it alone. */
typedef struct {
    const nd_array *a;
    nd_array copy;
    nd_buffer *buf;
    int64_t refs;
} snap;

static snap snap_of(const nd_array *a)
{
    return (snap){ .a = a, .copy = *a, .buf = a->buf, .refs = a->buf->refcount };
}

/* The same elements in the same order: shape, and when there are any,
 * the offset and the strides of the axes longer than 1. */
static bool same_layout(const nd_array *x, const nd_array *y)
{
    if (x->ndim != y->ndim)
        return false;
    for (int k = 0; k < x->ndim; k++)
        if (x->shape[k] != y->shape[k])
            return false;
    if (nd_numel(x) == 0)
        return true;
    if (x->offset != y->offset)
        return false;
    for (int k = 0; k < x->ndim; k++)
        if (x->shape[k] > 1 && x->strides[k] != y->strides[k])
            return false;
    return true;
}

/* The input struct is as it was; `extra` references were added. */
static void expect_input_kept(const snap *s, int64_t extra, const char *what)
{
    CHECK(t_same_struct(s->a, &s->copy), "%s changed its input view: it was %s, it is now %s. "
          "Hint: a is const; write only to *out", what, t_describe(&s->copy),
          t_describe2(s->a));
    CHECK(s->buf->refcount == s->refs + extra, "%s: the input's buffer has refcount %" PRId64
          ", expected %" PRId64 "%s", what, s->buf->refcount, s->refs + extra,
          extra ? ": the result holds exactly one new reference (nd_as_strided takes it)"
                : ": a failed call takes no reference and drops none");
}

/* ---------------------------------------------------------------------- */
/* The reference: a view as the buffer offsets of its elements            */
/* ---------------------------------------------------------------------- */

typedef struct {
    int ndim;
    int64_t shape[ND_MAX_DIMS];
    int64_t n;
    int64_t *off;   /* n offsets, row-major */
} lay;

static lay lay_new(int ndim, const int64_t *shape)
{
    lay l = { .ndim = ndim, .n = t_numel(ndim, shape) };
    for (int k = 0; k < ndim; k++)
        l.shape[k] = shape[k];
    l.off = t_alloc((size_t)l.n * sizeof(int64_t));
    return l;
}

/* The offsets a view reaches, walked index by index (an odometer here,
 * so that 2^22 elements stay cheap). */
static lay lay_of(const nd_array *a)
{
    lay l = lay_new(a->ndim, a->shape);
    int64_t idx[ND_MAX_DIMS] = { 0 }, off = a->offset;
    for (int64_t i = 0; i < l.n; i++) {
        l.off[i] = off;
        for (int k = a->ndim - 1; k >= 0; k--) {
            if (++idx[k] < a->shape[k]) {
                off += a->strides[k];
                break;
            }
            off -= (idx[k] - 1) * a->strides[k];   /* back to index 0 */
            idx[k] = 0;
        }
    }
    return l;
}

static void lay_free(lay *l)
{
    free(l->off);
    l->off = NULL;
}

static int64_t lay_at(const lay *l, const int64_t *idx)
{
    int64_t i = 0;
    for (int k = 0; k < l->ndim; k++)
        i = i * l->shape[k] + idx[k];
    return l->off[i];
}

static lay lay_reshape(const lay *in, int ndim, const int64_t *shape)
{
    lay out = lay_new(ndim, shape);
    memcpy(out.off, in->off, (size_t)out.n * sizeof(int64_t));
    return out;
}

/* Out axis k is in's axis axes[k] (normalised). */
static lay lay_permute(const lay *in, const int *axes)
{
    int64_t shape[ND_MAX_DIMS] = { 0 };
    for (int k = 0; k < in->ndim; k++)
        shape[k] = in->shape[axes[k]];
    lay out = lay_new(in->ndim, shape);
    for (int64_t i = 0; i < out.n; i++) {
        int64_t j[ND_MAX_DIMS], src[ND_MAX_DIMS];
        t_unravel(i, out.ndim, out.shape, j);
        for (int k = 0; k < out.ndim; k++)
            src[axes[k]] = j[k];
        out.off[i] = lay_at(in, src);
    }
    return out;
}

/* NumPy: align at the right; a size-1 axis reads its one element for every
 * position of the target's axis; new leading axes repeat everything. */
static lay lay_broadcast(const lay *in, int ndim, const int64_t *shape)
{
    lay out = lay_new(ndim, shape);
    int lead = ndim - in->ndim;
    for (int64_t i = 0; i < out.n; i++) {
        int64_t j[ND_MAX_DIMS], src[ND_MAX_DIMS];
        t_unravel(i, ndim, shape, j);
        for (int k = 0; k < in->ndim; k++)
            src[k] = in->shape[k] == 1 ? 0 : j[lead + k];
        out.off[i] = lay_at(in, src);
    }
    return out;
}

/* Python's slice.indices(len), as CPython computes it (PySlice_Unpack
 * then PySlice_AdjustIndices): the count, and the first position. */
static int64_t py_slice(int64_t len, int64_t start, int64_t stop, int64_t step, int64_t *first)
{
    if (step < -INT64_MAX)
        step = -INT64_MAX;   /* CPython clamps, so that -step exists */
    if (start == ND_NONE)
        start = step < 0 ? INT64_MAX : 0;
    if (stop == ND_NONE)
        stop = step < 0 ? INT64_MIN : INT64_MAX;
    int64_t *bound[2] = { &start, &stop };
    for (int b = 0; b < 2; b++) {
        int64_t *x = bound[b];
        if (*x < 0) {
            *x = *x < -len ? (step < 0 ? -1 : 0) : *x + len;
        } else if (*x >= len) {
            *x = step < 0 ? len - 1 : len;
        }
    }
    *first = start;
    if (step < 0)
        return stop < start ? (start - stop - 1) / (-step) + 1 : 0;
    return start < stop ? (stop - start - 1) / step + 1 : 0;
}

/* What an index does to axis k: kept or not, the first position, the
 * step and the count. */
typedef struct {
    bool kept;
    int64_t first, step, count;
} axis_plan;

static void plan_index(int ndim, const int64_t *shape, int n, const nd_index *idx,
                       axis_plan *p)
{
    for (int k = 0; k < ndim; k++) {
        nd_index s = k < n ? idx[k] : ND_ALL;
        p[k].kept = s.kind == ND_INDEX_SLICE;
        if (p[k].kept) {
            p[k].step = s.step;
            p[k].count = py_slice(shape[k], s.start, s.stop, s.step, &p[k].first);
        } else {
            p[k].first = s.i < 0 ? s.i + shape[k] : s.i;
            p[k].step = 0;
            p[k].count = 1;
        }
    }
}

static lay lay_slice(const lay *in, int n, const nd_index *idx)
{
    axis_plan p[ND_MAX_DIMS];
    plan_index(in->ndim, in->shape, n, idx, p);
    int ndim = 0, from[ND_MAX_DIMS];
    int64_t shape[ND_MAX_DIMS] = { 0 };
    for (int k = 0; k < in->ndim; k++)
        if (p[k].kept) {
            from[ndim] = k;
            shape[ndim++] = p[k].count;
        }
    lay out = lay_new(ndim, shape);
    for (int64_t i = 0; i < out.n; i++) {
        int64_t j[ND_MAX_DIMS], src[ND_MAX_DIMS];
        t_unravel(i, ndim, shape, j);
        for (int k = 0; k < in->ndim; k++)
            src[k] = p[k].first;
        for (int m = 0; m < ndim; m++)
            src[from[m]] = p[from[m]].first + j[m] * p[from[m]].step;
        out.off[i] = lay_at(in, src);
    }
    return out;
}

/* NumPy's diagonal: element j sits at j + max(-offset, 0) on axis1 and
 * j + max(offset, 0) on axis2 (axes normalised); the other axes keep their
 * order and the diagonal is the last axis. */
static lay lay_diagonal(const lay *in, int64_t offset, int axis1, int axis2)
{
    int64_t n1 = in->shape[axis1], n2 = in->shape[axis2], len = 0, r0 = 0, c0 = 0;
    if (offset >= 0 && offset < n2) {
        c0 = offset;
        len = n1 < n2 - offset ? n1 : n2 - offset;
    } else if (offset < 0 && offset > -n1) {
        r0 = -offset;
        len = n1 - r0 < n2 ? n1 - r0 : n2;
    }
    int64_t shape[ND_MAX_DIMS] = { 0 };
    int ndim = 0;
    for (int k = 0; k < in->ndim; k++)
        if (k != axis1 && k != axis2)
            shape[ndim++] = in->shape[k];
    shape[ndim++] = len;
    lay out = lay_new(ndim, shape);
    for (int64_t i = 0; i < out.n; i++) {
        int64_t j[ND_MAX_DIMS], src[ND_MAX_DIMS];
        t_unravel(i, ndim, shape, j);
        for (int k = 0, m = 0; k < in->ndim; k++)
            if (k != axis1 && k != axis2)
                src[k] = j[m++];
        src[axis1] = r0 + j[ndim - 1];
        src[axis2] = c0 + j[ndim - 1];
        out.off[i] = lay_at(in, src);
    }
    return out;
}

/* out must show exactly the elements `want` lists: its shape; then its
 * values (t_assert_values: the first wrong element, expected and got);
 * then the offset and the stride of every axis longer than 1, which the
 * list fixes whenever the view has elements. */
static void expect_lay(const nd_array *out, const lay *want, const char *what,
                       const char *hint)
{
    t_assert_shape(out, want->ndim, want->shape, what);
    if (want->n == 0)
        return;
    lay got = lay_of(out);
    bool same = memcmp(got.off, want->off, (size_t)want->n * sizeof(int64_t)) == 0;
    lay_free(&got);
    if (!same) {
        int64_t size;
        float *buf = t_buffer(out, &size), *vals = t_alloc((size_t)want->n * sizeof(float));
        for (int64_t i = 0; i < want->n; i++)
            vals[i] = buf[want->off[i]];
        t_assert_values(out, vals, what, hint);
        free(buf);
        free(vals);
    }
    CHECK(out->offset == want->off[0], "%s: the result %s has offset %" PRId64 ", expected %"
          PRId64 ". Hint: %s", what, t_describe(out), out->offset, want->off[0], hint);
    for (int k = 0; k < want->ndim; k++) {
        if (want->shape[k] < 2)
            continue;
        int64_t pos = 1;  /* row-major position of the unit index on axis k */
        for (int j = k + 1; j < want->ndim; j++)
            pos *= want->shape[j];
        int64_t st = want->off[pos] - want->off[0];
        CHECK(out->strides[k] == st, "%s: axis %d of the result %s has stride %" PRId64
              ", expected %" PRId64 ". Hint: %s", what, k, t_describe(out), out->strides[k],
              st, hint);
    }
}

/* A successful view: out shares a's buffer with one new reference, a is
 * untouched, and out lays out `want`. */
static void expect_view(const nd_array *out, const snap *in, const lay *want,
                        const char *what, const char *hint)
{
    CHECK(out->buf == in->buf, "%s: the result has a buffer of its own; a view never copies "
          "data: it shares a's buffer (build it with nd_as_strided)", what);
    expect_input_kept(in, 1, what);
    expect_lay(out, want, what, hint);
}

/* ---------------------------------------------------------------------- */
/* nd_compact_strides                                                      */
/* ---------------------------------------------------------------------- */

#define SENTINEL INT64_C(-777)

static void check_compact_strides(int ndim, const int64_t *shape, const char *label)
{
    int64_t got[ND_MAX_DIMS + 2], want[ND_MAX_DIMS];
    for (int k = 0; k < ND_MAX_DIMS + 2; k++)
        got[k] = SENTINEL;
    char sh[200], st[200], wt[200];
    nd_shape_str(ndim, shape, sh, sizeof sh);
    nd_status s = nd_compact_strides(ndim, shape, got);
    CHECK(s == ND_OK, "%s: nd_compact_strides(%d, %s) returned %s: %s", label, ndim, sh,
          nd_status_name(s), nd_last_error());
    for (int k = 0; k < ndim; k++) {
        want[k] = 1;
        for (int j = k + 1; j < ndim; j++)
            want[k] *= shape[j];
    }
    for (int k = 0; k < ND_MAX_DIMS + 2; k++)
        CHECK(k < ndim ? got[k] == want[k] : got[k] == SENTINEL,
              "%s: nd_compact_strides for shape %s gave %s, expected %s%s", label, sh,
              nd_shape_str(ndim, got, st, sizeof st), nd_shape_str(ndim, want, wt, sizeof wt),
              k >= ndim ? " (and it wrote past the ndim entries)" : "");
}

START_TEST(compact_strides_all_shapes)
{
    int64_t first[3] = { 2, 3, 4 }, st[3];
    T_OK(nd_compact_strides(3, first, st));

    /* every shape of 0..5 axes with sizes 0..3: 1365 shapes */
    for (int ndim = 0; ndim <= 5; ndim++) {
        int64_t count = 1;
        for (int k = 0; k < ndim; k++)
            count *= 4;
        for (int64_t c = 0; c < count; c++) {
            int64_t shape[ND_MAX_DIMS], x = c;
            for (int k = 0; k < ndim; k++, x /= 4)
                shape[k] = x % 4;
            check_compact_strides(ndim, shape, "every small shape");
        }
    }
    /* 3000 random shapes of 6..8 axes, sizes 0..9 */
    t_rng r = t_rng_new(11001);
    for (int c = 0; c < 3000; c++) {
        int64_t shape[ND_MAX_DIMS];
        int ndim = (int)t_int(&r, 6, ND_MAX_DIMS);
        for (int k = 0; k < ndim; k++)
            shape[k] = t_int(&r, 0, 5) == 0 ? t_int(&r, 0, 1) : t_int(&r, 2, 9);
        char label[40];
        snprintf(label, sizeof label, "random case %d", c);
        check_compact_strides(ndim, shape, label);
    }
    /* large sizes: strides beyond 32 bits */
    static const struct { int ndim; int64_t shape[ND_MAX_DIMS]; } big[] = {
        { 3, { 1 << 20, 1 << 20, 4 } },
        { 2, { 3, INT64_C(1) << 40 } },
        { 8, { 2, 64, 64, 64, 64, 64, 64, 2 } },
        { 4, { INT64_C(1) << 33, 1, 1, 7 } },
    };
    for (size_t c = 0; c < sizeof big / sizeof big[0]; c++)
        check_compact_strides(big[c].ndim, big[c].shape, "a shape with large sizes (int64_t "
                              "products)");

    /* errors: nothing written */
    int64_t bad[ND_MAX_DIMS + 1] = { 2, 2, 2, 2, 2, 2, 2, -1, 2 };
    int64_t out[ND_MAX_DIMS + 2];
    for (int k = 0; k < ND_MAX_DIMS + 2; k++)
        out[k] = SENTINEL;
    EXPECT_FAIL(ND_ERR_ARG, "compact_strides", nd_compact_strides(8, bad, out));
    bad[7] = INT64_MIN;
    EXPECT_FAIL(ND_ERR_ARG, "compact_strides", nd_compact_strides(8, bad, out));
    bad[7] = 2;
    bad[0] = -5;
    EXPECT_FAIL(ND_ERR_ARG, "compact_strides", nd_compact_strides(1, bad, out));
    EXPECT_FAIL(ND_ERR_ARG, "compact_strides", nd_compact_strides(ND_MAX_DIMS + 1, first, out));
    EXPECT_FAIL(ND_ERR_ARG, "compact_strides", nd_compact_strides(INT32_MIN, first, out));
    for (int k = 0; k < ND_MAX_DIMS + 2; k++)
        CHECK(out[k] == SENTINEL, "nd_compact_strides failed but wrote strides[%d]: on an "
              "error (a negative size anywhere, even on the last axis), write nothing", k);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* nd_is_compact                                                           */
/* ---------------------------------------------------------------------- */

/* The definition: row-major element i lives at offset + i. */
static bool ref_compact(const nd_array *a)
{
    lay l = lay_of(a);
    bool ok = true;
    for (int64_t i = 0; ok && i < l.n; i++)
        ok = l.off[i] == a->offset + i;
    lay_free(&l);
    return ok;
}

/* A view of `shape` with these strides over a buffer just big enough,
 * at a random extra offset. */
static nd_array view_with_strides(t_rng *r, int ndim, const int64_t *shape,
                                  const int64_t *strides)
{
    int64_t lo = 0, hi = 0;
    bool empty = t_numel(ndim, shape) == 0;
    for (int k = 0; k < ndim && !empty; k++) {
        int64_t reach = (shape[k] - 1) * strides[k];
        if (reach < 0)
            lo += reach;
        else
            hi += reach;
    }
    int64_t pad = t_int(r, 0, 4);
    return t_strided(pad - lo + hi + 1 + t_int(r, 0, 4), ndim, shape, strides, pad - lo);
}

START_TEST(is_compact_property)
{
    int64_t s23[2] = { 2, 3 };
    nd_array first = t_arange(2, s23);
    bool got;
    T_OK(nd_is_compact(&first, &got));
    nd_release(&first);

    t_rng r = t_rng_new(12001);
    int seen[2] = { 0, 0 };
    for (int c = 0; c < 10000; c++) {
        int64_t shape[ND_MAX_DIMS], strides[ND_MAX_DIMS];
        int ndim = gen_shape(&r, 0, ND_MAX_DIMS, 4, 600, shape);
        int kind = c % 4;
        if (kind == 0) { /* nd_compact_strides itself: must be compact */
            T_OK(nd_compact_strides(ndim, shape, strides));
        } else if (kind == 3) { /* anything small */
            for (int k = 0; k < ndim; k++)
                strides[k] = t_int(&r, -4, 4);
        } else { /* compact, size-1 strides scrambled, then maybe one change */
            t_row_major(ndim, shape, strides);
            for (int k = 0; k < ndim; k++)
                if (shape[k] == 1)
                    strides[k] = t_int(&r, -9, 9);
            if (kind == 2 && ndim > 0) {
                int k = (int)t_int(&r, 0, ndim - 1), j = (int)t_int(&r, 0, ndim - 1);
                switch (t_int(&r, 0, 3)) {
                case 0: strides[k] = -strides[k]; break;
                case 1: strides[k] = 0; break;
                case 2: strides[k] += 1; break;
                default: { int64_t t = strides[k]; strides[k] = strides[j]; strides[j] = t; }
                }
            }
        }
        nd_array a = view_with_strides(&r, ndim, shape, strides);
        bool want = ref_compact(&a);
        snap in = snap_of(&a);
        got = !want;
        nd_status s = nd_is_compact(&a, &got);
        CHECK(s == ND_OK, "case %d: nd_is_compact(%s) returned %s: %s", c, t_describe(&a),
              nd_status_name(s), nd_last_error());
        CHECK(got == want, "case %d: nd_is_compact(%s) gave %s, expected %s%s", c,
              t_describe(&a), got ? "true" : "false", want ? "true" : "false",
              kind == 0 ? " (these are the strides nd_compact_strides gives for this shape)" : "");
        expect_input_kept(&in, 0, "nd_is_compact");
        seen[want]++;
        nd_release(&a);
    }
    CHECK(seen[0] > 1500 && seen[1] > 1500, "test generator: %d compact, %d not", seen[1],
          seen[0]);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* nd_offset_of                                                            */
/* ---------------------------------------------------------------------- */

START_TEST(offset_of_every_index)
{
    int64_t s23[2] = { 2, 3 }, i12[2] = { 1, 2 }, off;
    nd_array first = t_arange(2, s23);
    T_OK(nd_offset_of(&first, i12, &off));
    nd_release(&first);

    t_rng r = t_rng_new(13001);
    int64_t checked = 0;
    for (int c = 0; c < 2000; c++) {
        int64_t shape[ND_MAX_DIMS], idx[ND_MAX_DIMS];
        int ndim = gen_shape(&r, 0, ND_MAX_DIMS, 4, 400, shape);
        nd_array a = gen_view(&r, ndim, shape, (int)t_int(&r, 0, 3), 4096);
        lay l = lay_of(&a);
        snap in = snap_of(&a);
        for (int64_t i = 0; i < l.n; i++) {
            t_unravel(i, ndim, shape, idx);
            off = SENTINEL;
            nd_status s = nd_offset_of(&a, idx, &off);
            CHECK(s == ND_OK && off == l.off[i], "case %d: nd_offset_of(%s, %s) gave %s, "
                  "offset %" PRId64 ", expected ND_OK, offset %" PRId64 ". Hint: offset + "
                  "sum(index[k]*strides[k]), strides signed", c, t_describe(&a),
                  t_index_str(ndim, idx), nd_status_name(s), off, l.off[i]);
            checked++;
        }
        /* each axis out of range on either side, the others valid */
        for (int k = 0; k < ndim; k++) {
            int64_t bad[4] = { shape[k], -1, INT64_MAX, INT64_MIN };
            for (int b = 0; b < 4; b++) {
                for (int j = 0; j < ndim; j++)
                    idx[j] = shape[j] > 0 ? t_int(&r, 0, shape[j] - 1) : 0;
                idx[k] = bad[b];
                off = SENTINEL;
                nd_clear_error();
                nd_status s = nd_offset_of(&a, idx, &off);
                CHECK(s == ND_ERR_INDEX && off == SENTINEL, "case %d: nd_offset_of(%s, %s) "
                      "returned %s and %s *offset; expected ND_ERR_INDEX and *offset "
                      "untouched: every index must satisfy 0 <= index[k] < shape[k] (never "
                      "wrapped)", c, t_describe(&a), t_index_str(ndim, idx),
                      nd_status_name(s), off == SENTINEL ? "left" : "wrote");
                CHECK(strstr(nd_last_error(), "offset_of") != NULL, "nd_offset_of's error "
                      "message \"%s\" does not name the operation", nd_last_error());
            }
        }
        expect_input_kept(&in, 0, "nd_offset_of");
        lay_free(&l);
        nd_release(&a);
    }
    CHECK(checked > 50000, "test generator: only %" PRId64 " indices", checked);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* nd_reshape                                                              */
/* ---------------------------------------------------------------------- */

/* A random shape of n elements and 0..8 axes in want; given is the same
 * with, sometimes, one -1 where it can be inferred.  Returns ndim. */
static int random_reshape(t_rng *r, int64_t n, int64_t *given, int64_t *want)
{
    int ndim = (int)t_int(r, 0, ND_MAX_DIMS);
    if (ndim == 0 && n != 1)
        ndim = 1;
    if (n == 0) {
        for (int k = 0; k < ndim; k++)
            want[k] = t_int(r, 0, 3);
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
        for (int k = ndim - 1; k > 0; k--) {
            int j = (int)t_int(r, 0, k);
            int64_t t = want[k];
            want[k] = want[j];
            want[j] = t;
        }
    }
    memcpy(given, want, (size_t)ndim * sizeof *want);
    if (ndim > 0 && t_int(r, 0, 1) == 0) {
        int k = (int)t_int(r, 0, ndim - 1);
        if (t_numel(ndim, want) == 0 && want[k] != 0)
            return ndim; /* -1 next to a 0 cannot be inferred */
        int64_t others = 1;
        for (int j = 0; j < ndim; j++)
            others *= j == k ? 1 : want[j];
        if (others > 0)
            given[k] = -1;
    }
    return ndim;
}

/* nd_reshape(a, given) (into a itself when `in_place`), checked against
 * the reference; a then holds the result. */
static void reshape_step(nd_array *a, int ndim, const int64_t *given, const int64_t *want,
                         bool in_place, const char *what)
{
    static const char hint[] = "a compact view reshaped keeps its offset and gets the "
                               "compact strides of the NEW shape; -1 is numel divided by the "
                               "product of the other sizes";
    lay before = lay_of(a), l = lay_reshape(&before, ndim, want);
    nd_array out;
    if (in_place) {
        nd_buffer *buf = a->buf;
        int64_t refs = buf->refcount;
        nd_status s = nd_reshape(a, ndim, given, a);
        CHECK(s == ND_OK, "%s (out == a) returned %s: %s", what, nd_status_name(s),
              nd_last_error());
        CHECK(a->buf == buf && buf->refcount == refs, "%s with out == a: the buffer's "
              "refcount went from %" PRId64 " to %" PRId64 ": the old view's reference must be "
              "released as the new one is taken", what, refs, buf->refcount);
        expect_lay(a, &l, what, hint);
    } else {
        snap in = snap_of(a);
        nd_status s = nd_reshape(a, ndim, given, &out);
        CHECK(s == ND_OK, "%s returned %s: %s", what, nd_status_name(s), nd_last_error());
        expect_view(&out, &in, &l, what, hint);
        nd_release(a);
        *a = out;
    }
    int64_t strides[ND_MAX_DIMS];
    t_row_major(ndim, want, strides);
    for (int k = 0; k < ndim && l.n > 0; k++)
        CHECK(want[k] == 1 || a->strides[k] == strides[k], "%s: the result %s is not compact",
              what, t_describe(a));
    lay_free(&before);
    lay_free(&l);
}

START_TEST(reshape_round_trip)
{
    int64_t s6 = 6, s23[2] = { 2, 3 };
    nd_array first = t_arange(1, &s6), out;
    T_OK(nd_reshape(&first, 2, s23, &out));
    nd_release(&out);
    nd_release(&first);

    t_rng r = t_rng_new(14001);
    for (int c = 0; c < 4000; c++) {
        int64_t shape[ND_MAX_DIMS], given[ND_MAX_DIMS], want[ND_MAX_DIMS];
        int ndim = gen_shape(&r, 0, ND_MAX_DIMS, 5, 720, shape);
        nd_array a = gen_view(&r, ndim, shape, t_int(&r, 0, 2) ? 3 : 0, 1 << 14);
        nd_array orig = a;
        int64_t orig_offset = a.offset, refs;
        T_OK(nd_share(&orig, &a)); /* a: our own reference, orig keeps the input */
        refs = orig.buf->refcount;
        char what[700], t1[200], t2[200];
        int n1 = random_reshape(&r, t_numel(ndim, shape), given, want);
        snprintf(what, sizeof what, "case %d: nd_reshape(%s, %s)", c, t_describe(&orig),
                 nd_shape_str(n1, given, t1, sizeof t1));
        reshape_step(&a, n1, given, want, t_int(&r, 0, 1), what);
        /* and back to the input's shape: its layout exactly, offset included */
        memcpy(given, shape, sizeof given);
        if (ndim > 0 && t_numel(ndim, shape) > 0 && t_int(&r, 0, 1))
            given[t_int(&r, 0, ndim - 1)] = -1;
        snprintf(what, sizeof what, "case %d: nd_reshape(nd_reshape(%s, %s), %s), the round "
                 "trip", c, t_describe(&orig), nd_shape_str(n1, want, t1, sizeof t1),
                 nd_shape_str(ndim, given, t2, sizeof t2));
        reshape_step(&a, ndim, given, shape, t_int(&r, 0, 1), what);
        CHECK(t_numel(ndim, shape) == 0 || a.offset == orig_offset, "%s: offset %" PRId64
              ", expected the input's offset %" PRId64, what, a.offset, orig_offset);
        CHECK(orig.buf->refcount == refs, "%s: refcount %" PRId64 ", expected %" PRId64
              " (one per live view)", what, orig.buf->refcount, refs);
        nd_release(&a);
        nd_release(&orig);
    }
}
END_TEST

START_TEST(reshape_layout_and_errors)
{
    int64_t s12 = 12, s34[2] = { 3, 4 };
    nd_array first = t_arange(1, &s12), out, spare;
    T_OK(nd_reshape(&first, 2, s34, &out));
    nd_release(&out);
    nd_release(&first);

    /* compact views that look odd, and views that are not compact */
    static const struct {
        const char *text;
        int ndim; int64_t shape[3], strides[3], offset, size;
        int to; int64_t given[ND_MAX_DIMS], want[ND_MAX_DIMS];
        bool ok;
    } cases[] = {
        { "a row a[2] of a (4,5) array: offset 10", 1, { 5 }, { 1 }, 10, 20,
          2, { 5, 1 }, { 5, 1 }, true },
        { "a (1,3,4) view whose size-1 axis has stride -100", 3, { 1, 3, 4 }, { -100, 4, 1 }, 3,
          20, 2, { 4, -1 }, { 4, 3 }, true },
        { "a (3,1) column of a (3,1) array, strides (1,0)", 2, { 3, 1 }, { 1, 0 }, 2, 8,
          1, { -1 }, { 3 }, true },
        { "a scalar at offset 6, to 8 axes of size 1", 0, { 0 }, { 0 }, 6, 9,
          8, { 1, 1, 1, -1, 1, 1, 1, 1 }, { 1, 1, 1, 1, 1, 1, 1, 1 }, true },
        { "(0,3) with strides (-5,7): empty, so compact, to (3,-1)", 2, { 0, 3 }, { -5, 7 }, 4, 9,
          2, { 3, -1 }, { 3, 0 }, true },
        { "(2,0,3) to (0,) ", 3, { 2, 0, 3 }, { 0, 0, 0 }, 0, 1, 1, { 0 }, { 0 }, true },
        { "(3,4) reversed rows, strides (-4,1)", 2, { 3, 4 }, { -4, 1 }, 8, 12,
          1, { 12 }, { 12 }, false },
        { "(3,4) with a broadcast row, strides (0,1)", 2, { 3, 4 }, { 0, 1 }, 0, 4,
          1, { 12 }, { 12 }, false },
        { "(4,3) transpose, strides (1,4)", 2, { 4, 3 }, { 1, 4 }, 0, 12,
          2, { 4, 3 }, { 4, 3 }, false },
        { "(2,3) with a gap after each row, strides (4,1)", 2, { 2, 3 }, { 4, 1 }, 0, 8,
          2, { 2, 3 }, { 2, 3 }, false },
        { "(2,) every other element", 1, { 2 }, { 2 }, 1, 4, 1, { 2 }, { 2 }, false },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        nd_array a = t_strided(cases[c].size, cases[c].ndim, cases[c].shape, cases[c].strides,
                             cases[c].offset);
        char what[600], t[200];
        snprintf(what, sizeof what, "nd_reshape(%s: %s, %s)", cases[c].text, t_describe(&a),
                 nd_shape_str(cases[c].to, cases[c].given, t, sizeof t));
        if (cases[c].ok) {
            reshape_step(&a, cases[c].to, cases[c].given, cases[c].want, false, what);
            CHECK(t_numel(cases[c].to, cases[c].want) == 0 || a.offset == cases[c].offset,
                  "%s: offset %" PRId64 ", expected %" PRId64 ": reshape keeps the view's "
                  "offset", what, a.offset, cases[c].offset);
        } else {
            snap in = snap_of(&a);
            t_poison(&out);
            expect_fail(nd_reshape(&a, cases[c].to, cases[c].given, &out), ND_ERR_LAYOUT,
                        "reshape", what, &out);
            expect_input_kept(&in, 0, what);
        }
        nd_release(&a);
    }

    /* argument errors on a (2,3) window at offset 2; out untouched, and
     * with out == a, a untouched */
    int64_t shape[2] = { 2, 3 }, strides[2] = { 3, 1 };
    nd_array a = t_strided(10, 2, shape, strides, 2);
    static const struct { int ndim; int64_t shape[ND_MAX_DIMS + 1]; nd_status want; } bad[] = {
        { 1, { 7 }, ND_ERR_SHAPE },           { 2, { -1, 4 }, ND_ERR_SHAPE },
        { 2, { -1, -1 }, ND_ERR_ARG },        { 3, { 2, -2, -3 }, ND_ERR_ARG },
        { 2, { 6, INT64_MIN }, ND_ERR_ARG },  { 1, { 0 }, ND_ERR_SHAPE },
        { 3, { 0, -1, 6 }, ND_ERR_SHAPE },    { 0, { 0 }, ND_ERR_SHAPE },
        { ND_MAX_DIMS + 1, { 6, 1, 1, 1, 1, 1, 1, 1, 1 }, ND_ERR_ARG },
        { -1, { 6 }, ND_ERR_ARG },
    };
    for (size_t c = 0; c < sizeof bad / sizeof bad[0]; c++) {
        snap in = snap_of(&a);
        char what[300], t[200];
        snprintf(what, sizeof what, "nd_reshape(%s, ndim %d, %s)", t_describe(&a), bad[c].ndim,
                 bad[c].ndim >= 0 && bad[c].ndim <= ND_MAX_DIMS
                     ? nd_shape_str(bad[c].ndim, bad[c].shape, t, sizeof t) : "...");
        t_poison(&out);
        expect_fail(nd_reshape(&a, bad[c].ndim, bad[c].shape, &out), bad[c].want, "reshape",
                    what, &out);
        expect_input_kept(&in, 0, what);
        nd_array x;
        T_OK(nd_share(&a, &x));
        nd_array x_before = x;
        nd_status s = nd_reshape(&x, bad[c].ndim, bad[c].shape, &x);
        CHECK(s == bad[c].want && t_same_struct(&x, &x_before), "%s with out == a returned %s "
              "and left a as %s (was %s): on an error, out (here a itself) must stay exactly "
              "as it was", what, nd_status_name(s), t_describe(&x), t_describe2(&x_before));
        nd_release(&x);
    }
    EXPECT_FAIL_OUT(&out, ND_ERR_ARG, "reshape", nd_reshape(&a, 2, NULL, &out));
    EXPECT_FAIL_OUT(&spare, ND_ERR_ARG, "reshape", nd_reshape(&a, 2, shape, NULL));
    EXPECT_FAIL_OUT(&out, ND_ERR_ARG, "reshape", nd_reshape(NULL, 2, shape, &out));
    CHECK(a.buf->refcount == 1, "failed reshapes changed the refcount to %" PRId64,
          a.buf->refcount);
    nd_release(&a);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* nd_permute                                                              */
/* ---------------------------------------------------------------------- */

static const char PERMUTE_HINT[] = "out axis i is a's axis axes[i] (negative axes count from "
                                   "the end): its size and its stride; the offset stays";

/* The layout of a, permuted: every axis (size 1 included) takes a's stride. */
static void expect_permuted(const nd_array *out, const nd_array *a, const int *norm,
                            const char *what)
{
    CHECK(out->ndim == a->ndim && out->offset == a->offset, "%s: gave %s, expected ndim %d "
          "and offset %" PRId64 ". Hint: %s", what, t_describe(out), a->ndim, a->offset,
          PERMUTE_HINT);
    for (int k = 0; k < a->ndim; k++)
        CHECK(out->shape[k] == a->shape[norm[k]] && out->strides[k] == a->strides[norm[k]],
              "%s: axis %d of the result %s has size %" PRId64 " and stride %" PRId64
              ", expected a's axis %d: size %" PRId64 ", stride %" PRId64 ". Hint: %s",
              what, k, t_describe(out), out->shape[k], out->strides[k], norm[k],
              a->shape[norm[k]], a->strides[norm[k]], PERMUTE_HINT);
}

START_TEST(permute_inverse_identity)
{
    int64_t s23[2] = { 2, 3 };
    int t[2] = { 1, 0 };
    nd_array first = t_arange(2, s23), out;
    T_OK(nd_permute(&first, t, &out));
    nd_release(&out);
    nd_release(&first);

    t_rng r = t_rng_new(15001);
    for (int c = 0; c < 5000; c++) {
        int64_t shape[ND_MAX_DIMS];
        int ndim = gen_shape(&r, 0, ND_MAX_DIMS, 5, 720, shape);
        nd_array a = gen_view(&r, ndim, shape, (int)t_int(&r, 0, 3), 1 << 14), p1, p2, p3;
        int p[ND_MAX_DIMS], np[ND_MAX_DIMS], inv[ND_MAX_DIMS], q[ND_MAX_DIMS], pq[ND_MAX_DIMS];
        random_perm(&r, ndim, p, true);
        random_perm(&r, ndim, q, true);
        for (int k = 0; k < ndim; k++)
            np[k] = p[k] < 0 ? p[k] + ndim : p[k];
        for (int k = 0; k < ndim; k++)
            inv[np[k]] = k - (t_int(&r, 0, 1) ? ndim : 0);
        char what[900], tp[100], tq[100];
        axes_text(ndim, p, tp, sizeof tp);

        /* p: checked against the reference */
        snprintf(what, sizeof what, "case %d: nd_permute(%s, %s)", c, t_describe(&a), tp);
        snap in = snap_of(&a);
        lay la = lay_of(&a), lp = lay_permute(&la, np);
        nd_status s = nd_permute(&a, p, &p1);
        CHECK(s == ND_OK, "%s returned %s: %s", what, nd_status_name(s), nd_last_error());
        expect_view(&p1, &in, &lp, what, PERMUTE_HINT);
        expect_permuted(&p1, &a, np, what);

        /* then the inverse: a's layout exactly, every stride and the offset */
        snprintf(what, sizeof what, "case %d: nd_permute(nd_permute(%s, %s), %s), the inverse",
                 c, t_describe(&a), tp, axes_text(ndim, inv, tq, sizeof tq));
        nd_array x;
        T_OK(nd_share(&p1, &x));
        s = nd_permute(&x, inv, &x); /* out == input */
        CHECK(s == ND_OK, "%s returned %s: %s", what, nd_status_name(s), nd_last_error());
        CHECK(t_same_view(&x, &a), "%s gave %s, expected a's own layout %s. Hint: %s", what,
              t_describe(&x), t_describe2(&a), PERMUTE_HINT);
        CHECK(a.buf->refcount == in.refs + 2, "%s with out == a: refcount %" PRId64
              ", expected %" PRId64, what, a.buf->refcount, in.refs + 2);
        nd_release(&x);

        /* p then q is the one permutation p[q[i]] */
        for (int k = 0; k < ndim; k++)
            pq[k] = np[q[k] < 0 ? q[k] + ndim : q[k]];
        T_OK(nd_permute(&p1, q, &p2));
        T_OK(nd_permute(&a, pq, &p3));
        snprintf(what, sizeof what, "case %d: nd_permute(nd_permute(%s, %s), %s)", c,
                 t_describe(&a), tp, axes_text(ndim, q, tq, sizeof tq));
        CHECK(t_same_view(&p2, &p3), "%s gave %s, but permuting a once by the composed axes "
              "gives %s. Hint: %s", what, t_describe(&p2), t_describe2(&p3), PERMUTE_HINT);
        lay_free(&la);
        lay_free(&lp);
        nd_release(&p1);
        nd_release(&p2);
        nd_release(&p3);
        nd_release(&a);
    }
}
END_TEST

START_TEST(permute_axes_validation)
{
    int64_t shape[3] = { 2, 3, 4 };
    int ok[3] = { 2, 0, 1 };
    nd_array a = t_arange(3, shape), out, spare;
    T_OK(nd_permute(&a, ok, &out));
    nd_release(&out);

    /* every triple of axes in -5..4: 1000 cases */
    for (int c = 0; c < 1000; c++) {
        int axes[3] = { c / 100 - 5, c / 10 % 10 - 5, c % 10 - 5 }, norm[3];
        bool valid = true, seen[3] = { false, false, false };
        for (int k = 0; k < 3; k++) {
            norm[k] = axes[k] < 0 ? axes[k] + 3 : axes[k];
            if (norm[k] < 0 || norm[k] > 2 || seen[norm[k]])
                valid = false;
            else
                seen[norm[k]] = true;
        }
        char what[200], t[100];
        snprintf(what, sizeof what, "nd_permute((2,3,4) array, %s)", axes_text(3, axes, t,
                                                                               sizeof t));
        snap in = snap_of(&a);
        if (valid) {
            nd_status s = nd_permute(&a, axes, &out);
            CHECK(s == ND_OK, "%s returned %s: %s", what, nd_status_name(s), nd_last_error());
            expect_input_kept(&in, 1, what);
            expect_permuted(&out, &a, norm, what);
            nd_release(&out);
        } else {
            t_poison(&out);
            expect_fail(nd_permute(&a, axes, &out), ND_ERR_AXIS, "permute", what, &out);
            expect_input_kept(&in, 0, what);
            /* and with out == a: a stays as it was */
            nd_array x;
            T_OK(nd_share(&a, &x));
            nd_array before = x;
            nd_status s = nd_permute(&x, axes, &x);
            CHECK(s == ND_ERR_AXIS && t_same_struct(&x, &before), "%s with out == a returned %s "
                  "and left a as %s: on an error, out (a itself) must stay as it was", what,
                  nd_status_name(s), t_describe(&x));
            nd_release(&x);
        }
    }
    nd_release(&a);

    /* 8 axes: a repeat hidden at the end, an axis 8, an axis -9 */
    int64_t s8[8] = { 2, 1, 2, 1, 2, 1, 2, 3 };
    nd_array b = t_arange(8, s8);
    int rep[8] = { 7, 6, 5, 4, 3, 2, 1, -1 }, high[8] = { 0, 1, 2, 3, 4, 5, 6, 8 },
        low[8] = { -9, 1, 2, 3, 4, 5, 6, 7 }, rev[8] = { -1, -2, -3, -4, -5, -6, -7, -8 };
    EXPECT_FAIL_OUT(&out, ND_ERR_AXIS, "permute", nd_permute(&b, rep, &out));
    EXPECT_FAIL_OUT(&out, ND_ERR_AXIS, "permute", nd_permute(&b, high, &out));
    EXPECT_FAIL_OUT(&out, ND_ERR_AXIS, "permute", nd_permute(&b, low, &out));
    T_OK(nd_permute(&b, rev, &out));
    int norm[8] = { 7, 6, 5, 4, 3, 2, 1, 0 };
    expect_permuted(&out, &b, norm, "nd_permute(8-D array, (-1,-2,...,-8))");
    nd_release(&out);
    EXPECT_FAIL_OUT(&out, ND_ERR_ARG, "permute", nd_permute(&b, NULL, &out));
    EXPECT_FAIL_OUT(&spare, ND_ERR_ARG, "permute", nd_permute(&b, rev, NULL));
    nd_release(&b);

    /* a scalar permutes to itself */
    nd_array s = t_strided(4, 0, NULL, NULL, 3);
    int none[1] = { 0 };
    T_OK(nd_permute(&s, none, &out));
    CHECK(out.ndim == 0 && out.offset == 3 && out.buf == s.buf, "nd_permute of a scalar at "
          "offset 3 gave %s, expected the same scalar view", t_describe(&out));
    nd_release(&out);
    nd_release(&s);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* nd_broadcast_to                                                         */
/* ---------------------------------------------------------------------- */

static const char BROADCAST_HINT[] = "align the shapes at the right; a new leading axis and a "
                                     "STRETCHED size-1 axis get stride 0; other axes keep their "
                                     "stride, 0 included; the offset stays";

/* A random shape `shape` broadcasts to: up to `lead` new leading axes,
 * size-1 axes stretched (to 0 sometimes), total at most cap elements. */
static int random_target(t_rng *r, int ndim, const int64_t *shape, int max_lead, int64_t cap,
                         int64_t *target)
{
    for (;;) {
        int room = ND_MAX_DIMS - ndim, lead = (int)t_int(r, 0, room < max_lead ? room : max_lead);
        for (int k = 0; k < lead; k++)
            target[k] = t_int(r, 0, 6) == 0 ? 0 : t_int(r, 1, 3);
        for (int k = 0; k < ndim; k++)
            target[lead + k] = shape[k] != 1 ? shape[k]
                               : t_int(r, 0, 6) == 0 ? 0 : t_int(r, 1, 4);
        if (t_numel(lead + ndim, target) <= cap)
            return lead + ndim;
    }
}

START_TEST(broadcast_of_broadcast)
{
    int64_t s3 = 3, s23[2] = { 2, 3 };
    nd_array first = t_arange(1, &s3), out;
    T_OK(nd_broadcast_to(&first, 2, s23, &out));
    nd_release(&out);
    nd_release(&first);

    t_rng r = t_rng_new(16001);
    for (int c = 0; c < 4000; c++) {
        int64_t shape[ND_MAX_DIMS], t1[ND_MAX_DIMS], t2[ND_MAX_DIMS];
        int ndim = gen_shape(&r, 0, 6, 4, 300, shape);
        nd_array a = gen_view(&r, ndim, shape, (int)t_int(&r, 0, 3), 4096), b1, b2, direct;
        int n1 = random_target(&r, ndim, shape, 2, 3000, t1);
        int n2 = random_target(&r, n1, t1, 2, 3000, t2);
        char what[900], x1[200], x2[200];
        lay la = lay_of(&a), l1 = lay_broadcast(&la, n1, t1), l2 = lay_broadcast(&l1, n2, t2);

        snprintf(what, sizeof what, "case %d: nd_broadcast_to(%s, %s)", c, t_describe(&a),
                 nd_shape_str(n1, t1, x1, sizeof x1));
        snap in = snap_of(&a);
        nd_status s = nd_broadcast_to(&a, n1, t1, &b1);
        CHECK(s == ND_OK, "%s returned %s: %s", what, nd_status_name(s), nd_last_error());
        expect_view(&b1, &in, &l1, what, BROADCAST_HINT);

        snprintf(what, sizeof what, "case %d: nd_broadcast_to(b, %s) where b = "
                 "nd_broadcast_to(%s, %s) = %s", c, nd_shape_str(n2, t2, x2, sizeof x2),
                 t_describe(&a), x1, t_describe2(&b1));
        snap in1 = snap_of(&b1);
        s = nd_broadcast_to(&b1, n2, t2, &b2);
        CHECK(s == ND_OK, "%s returned %s: %s", what, nd_status_name(s), nd_last_error());
        expect_view(&b2, &in1, &l2, what, BROADCAST_HINT);

        /* and the same as broadcasting a to t2 at once */
        T_OK(nd_broadcast_to(&a, n2, t2, &direct));
        snprintf(what, sizeof what, "case %d: nd_broadcast_to(%s, %s) at once", c,
                 t_describe(&a), x2);
        expect_lay(&direct, &l2, what, BROADCAST_HINT);
        lay_free(&la);
        lay_free(&l1);
        lay_free(&l2);
        nd_release(&b1);
        nd_release(&b2);
        nd_release(&direct);
        nd_release(&a);
    }
}
END_TEST

START_TEST(broadcast_rules_exhaustive)
{
    int64_t s1 = 1, s4 = 4;
    nd_array first = t_arange(1, &s1), out;
    T_OK(nd_broadcast_to(&first, 1, &s4, &out));
    nd_release(&out);
    nd_release(&first);

    /* every shape of 0..3 axes with sizes 0..3 (85 of them), as a view with
     * non-zero strides on every axis, against every such target */
    enum { NSHAPES = 85 };
    int nd[NSHAPES];
    int64_t sh[NSHAPES][3];
    nd_array arr[NSHAPES];
    lay lays[NSHAPES];
    for (int i = 0, c = 0; c < 4; c++) {
        int count = c == 0 ? 1 : c == 1 ? 4 : c == 2 ? 16 : 64;
        for (int x = 0; x < count; x++, i++) {
            nd[i] = c;
            for (int k = 0, y = x; k < c; k++, y /= 4)
                sh[i][k] = y % 4;
            int64_t strides[3] = { 0 }, s = 1;
            for (int k = c - 1; k >= 0; k--) { /* padded: 1 more per axis */
                strides[k] = s;
                s *= sh[i][k] + 1;
            }
            arr[i] = t_strided(s + 2, c, sh[i], strides, 1);
            lays[i] = lay_of(&arr[i]);
        }
    }
    for (int i = 0; i < NSHAPES; i++) {
        for (int j = 0; j < NSHAPES; j++) {
            bool ok = nd[j] >= nd[i];
            for (int k = 0; ok && k < nd[i]; k++) {
                int64_t from = sh[i][k], to = sh[j][nd[j] - nd[i] + k];
                ok = from == to || from == 1;
            }
            char what[300], t[100];
            snprintf(what, sizeof what, "nd_broadcast_to(%s, %s)", t_describe(&arr[i]),
                     nd_shape_str(nd[j], sh[j], t, sizeof t));
            snap in = snap_of(&arr[i]);
            if (ok) {
                nd_status s = nd_broadcast_to(&arr[i], nd[j], sh[j], &out);
                CHECK(s == ND_OK, "%s returned %s: %s. Hint: a size 1 stretches to any size, "
                      "0 included; missing leading axes are added", what, nd_status_name(s),
                      nd_last_error());
                lay l = lay_broadcast(&lays[i], nd[j], sh[j]);
                expect_view(&out, &in, &l, what, BROADCAST_HINT);
                lay_free(&l);
                nd_release(&out);
            } else {
                t_poison(&out);
                expect_fail(nd_broadcast_to(&arr[i], nd[j], sh[j], &out), ND_ERR_SHAPE,
                            "broadcast", what, &out);
                expect_input_kept(&in, 0, what);
            }
        }
    }
    for (int i = 0; i < NSHAPES; i++) {
        lay_free(&lays[i]);
        nd_release(&arr[i]);
    }

    /* 8 axes is the most; 9 is an argument error, not a shape error */
    int64_t eight[ND_MAX_DIMS + 1] = { 2, 1, 2, 1, 2, 1, 2, 3, 3 }, three = 3;
    nd_array v = t_arange(1, &three);
    T_OK(nd_broadcast_to(&v, 8, eight, &out));
    nd_release(&out);
    EXPECT_FAIL_OUT(&out, ND_ERR_ARG, "broadcast", nd_broadcast_to(&v, 9, eight, &out));
    eight[3] = -1;
    EXPECT_FAIL_OUT(&out, ND_ERR_ARG, "broadcast", nd_broadcast_to(&v, 8, eight, &out));
    /* with out == a, a failure leaves a as it was */
    nd_array before = v;
    int64_t four = 4;
    nd_status s = nd_broadcast_to(&v, 1, &four, &v);
    CHECK(s == ND_ERR_SHAPE && t_same_struct(&v, &before), "nd_broadcast_to(&v, (4,), &v) with "
          "v of shape (3,) returned %s and left v as %s: on an error, out (v itself) must stay "
          "as it was", nd_status_name(s), t_describe(&v));
    nd_release(&v);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* nd_slice                                                                */
/* ---------------------------------------------------------------------- */

static const char SLICE_HINT[] = "per axis, Python's slice.indices(): a negative bound adds the "
                                 "size, then clips to 0 (-1 for a negative step); a bound >= "
                                 "size clips to size (size-1 for a negative step); a negative "
                                 "step's default start is the LAST position; then offset += "
                                 "first*stride and stride *= step";

/* nd_slice(a, idx) checked against the reference lay la of a. */
static void check_slice(const nd_array *a, const lay *la, int n, const nd_index *idx,
                        nd_array *out, const char *what)
{
    snap in = snap_of(a);
    nd_status s = nd_slice(a, n, idx, out);
    CHECK(s == ND_OK, "%s returned %s: %s", what, nd_status_name(s), nd_last_error());
    lay l = lay_slice(la, n, idx);
    expect_view(out, &in, &l, what, SLICE_HINT);
    lay_free(&l);
}

START_TEST(slice_python_exhaustive)
{
    int64_t ten = 10;
    nd_array first = t_arange(1, &ten), out;
    nd_index f = ND_SLICE(1, 8, 2);
    T_OK(nd_slice(&first, 1, &f, &out));
    nd_release(&out);
    nd_release(&first);

    /* bounds: None, -9..9, +-INT64_MAX; steps -7..7 but 0, +-HUGE_STEP */
    int64_t bounds[22], steps[16];
    int nb = 0, ns = 0;
    bounds[nb++] = ND_NONE;
    for (int64_t b = -9; b <= 9; b++)
        bounds[nb++] = b;
    bounds[nb++] = INT64_MAX;
    bounds[nb++] = -INT64_MAX;
    for (int64_t st = -7; st <= 7; st++)
        if (st != 0)
            steps[ns++] = st;
    steps[ns++] = HUGE_STEP;
    steps[ns++] = -HUGE_STEP;

    int64_t cases = 0;
    for (int64_t len = 0; len <= 6; len++) {
        /* two bases: arange(len), and a reversed view with stride -3 at
         * offset 3*len + 1 of a larger buffer */
        for (int base = 0; base < 2; base++) {
            int64_t stride = base ? -3 : 1, off = base ? 3 * len + 1 : 0;
            nd_array a = t_strided(base ? 3 * len + 4 : len, 1, &len, &stride, off);
            for (int i = 0; i < nb; i++)
                for (int j = 0; j < nb; j++)
                    for (int k = 0; k < ns; k++) {
                        nd_index idx = ND_SLICE(bounds[i], bounds[j], steps[k]);
                        int64_t firstpos, count = py_slice(len, idx.start, idx.stop, idx.step,
                                                           &firstpos);
                        nd_status s = nd_slice(&a, 1, &idx, &out);
                        bool good = s == ND_OK && out.buf == a.buf && out.ndim == 1 &&
                                    out.shape[0] == count &&
                                    (count == 0 || out.offset == off + firstpos * stride) &&
                                    (count < 2 || out.strides[0] == stride * idx.step);
                        if (!good) { /* say why, with the values */
                            char what[300], t[120];
                            snprintf(what, sizeof what, "nd_slice(%s, %s) (%s of length %"
                                     PRId64 ")", t_describe(&a),
                                     index_text(1, &idx, t, sizeof t),
                                     base ? "a reversed strided view" : "arange", len);
                            CHECK(s == ND_OK, "%s returned %s: %s", what, nd_status_name(s),
                                  nd_last_error());
                            nd_release(&out);
                            lay la = lay_of(&a);
                            check_slice(&a, &la, 1, &idx, &out, what);
                            lay_free(&la);
                        }
                        nd_release(&out);
                        cases++;
                    }
            CHECK(a.buf->refcount == 1, "nd_slice leaked references: refcount %" PRId64
                  " after releasing every result", a.buf->refcount);
            nd_release(&a);
        }
    }
    CHECK(cases > 50000, "test generator: %" PRId64 " cases", cases);

    /* a step of INT64_MIN is a valid step (Python clamps it) */
    nd_array x = t_arange(1, &ten);
    lay lx = lay_of(&x);
    nd_index m[3] = { ND_SLICE(ND_NONE, ND_NONE, INT64_MIN), ND_SLICE(5, ND_NONE, INT64_MIN),
                      ND_SLICE(-INT64_MAX, INT64_MAX, INT64_MIN) };
    for (int c = 0; c < 3; c++) {
        check_slice(&x, &lx, 1, &m[c], &out, "nd_slice(arange(10), a step of INT64_MIN)");
        nd_release(&out);
    }
    lay_free(&lx);
    nd_release(&x);
}
END_TEST

/* A random valid index of n <= ndim entries: integers (either sign) and
 * slices with bounds inside, outside or absent and steps -4..4 but 0. */
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

/* idx2 applied after idx1, as ONE index of a: positions compose
 * (first + j*step of the first slice, j itself picked by the second). */
static void combine_index(int ndim, const int64_t *shape, int n1, const nd_index *idx1, int n2,
                          const nd_index *idx2, nd_index *out)
{
    axis_plan p[ND_MAX_DIMS];
    plan_index(ndim, shape, n1, idx1, p);
    for (int k = 0, m = 0; k < ndim; k++) {
        if (!p[k].kept) {
            out[k] = ND_AT(p[k].first);
            continue;
        }
        nd_index s = m < n2 ? idx2[m] : ND_ALL;
        m++;
        if (s.kind == ND_INDEX_INT) {
            int64_t j = s.i < 0 ? s.i + p[k].count : s.i;
            out[k] = ND_AT(p[k].first + j * p[k].step);
            continue;
        }
        int64_t g, d = py_slice(p[k].count, s.start, s.stop, s.step, &g);
        if (d == 0) {
            out[k] = ND_SLICE(0, 0, 1);
            continue;
        }
        int64_t start = p[k].first + g * p[k].step, step = p[k].step * s.step;
        int64_t stop = start + d * step;
        out[k] = ND_SLICE(start, stop < 0 ? ND_NONE : stop, step);
    }
}

START_TEST(slice_of_slice_combined)
{
    int64_t s34[2] = { 3, 4 };
    nd_array first = t_arange(2, s34), out;
    nd_index f[2] = { ND_AT(1), ND_SLICE(ND_NONE, ND_NONE, -1) };
    T_OK(nd_slice(&first, 2, f, &out));
    nd_release(&out);
    nd_release(&first);

    t_rng r = t_rng_new(17001);
    for (int c = 0; c < 5000; c++) {
        int64_t shape[ND_MAX_DIMS];
        int ndim = gen_shape(&r, 1, ND_MAX_DIMS, 7, 800, shape);
        nd_array a = gen_view(&r, ndim, shape, (int)t_int(&r, 0, 3), 1 << 14), s1, s2, once;
        nd_index i1[ND_MAX_DIMS], i2[ND_MAX_DIMS], both[ND_MAX_DIMS];
        int n1 = random_index(&r, ndim, shape, i1);
        lay la = lay_of(&a), l1 = lay_slice(&la, n1, i1);
        char what[1200], t1[300], t2[300], t3[300];
        index_text(n1, i1, t1, sizeof t1);
        snprintf(what, sizeof what, "case %d: nd_slice(%s, %s)", c, t_describe(&a), t1);
        check_slice(&a, &la, n1, i1, &s1, what);

        int n2 = random_index(&r, s1.ndim, s1.shape, i2);
        index_text(n2, i2, t2, sizeof t2);
        snprintf(what, sizeof what, "case %d: nd_slice(nd_slice(%s, %s) = %s, %s)", c,
                 t_describe(&a), t1, t_describe2(&s1), t2);
        check_slice(&s1, &l1, n2, i2, &s2, what);

        combine_index(ndim, shape, n1, i1, n2, i2, both);
        index_text(ndim, both, t3, sizeof t3);
        snprintf(what, sizeof what, "case %d: nd_slice(%s, %s), the one index that %s then %s "
                 "make", c, t_describe(&a), t3, t1, t2);
        check_slice(&a, &la, ndim, both, &once, what);
        CHECK(same_layout(&once, &s2), "case %d: a%s%s gave %s but a%s gave %s: a slice of a "
              "slice must be the one combined slice. Hint: %s", c, t1, t2, t_describe(&s2), t3,
              t_describe2(&once), SLICE_HINT);
        lay_free(&la);
        lay_free(&l1);
        nd_release(&s1);
        nd_release(&s2);
        nd_release(&once);
        nd_release(&a);
    }
}
END_TEST

START_TEST(slice_ints_and_extremes)
{
    int64_t s5 = 5;
    nd_array first = t_arange(1, &s5), out;
    nd_index f = ND_AT(-5);
    T_OK(nd_slice(&first, 1, &f, &out));
    nd_release(&out);
    nd_release(&first);

    t_rng r = t_rng_new(18001);
    for (int c = 0; c < 3000; c++) {
        int64_t shape[ND_MAX_DIMS];
        int ndim = (int)t_int(&r, 1, ND_MAX_DIMS);
        t_random_shape(&r, ndim, 4, false, 1000, shape);
        nd_array a = gen_view(&r, ndim, shape, (int)t_int(&r, 0, 3), 1 << 14);
        lay la = lay_of(&a);
        nd_index idx[ND_MAX_DIMS];
        char what[900], t[300];
        int mode = c % 4, n = mode == 3 ? (int)t_int(&r, 0, ndim - 1) : ndim;
        for (int k = 0; k < ndim; k++) {
            int64_t len = shape[k];
            switch (mode) {
            case 0: /* integers everywhere, either end: a scalar view */
                idx[k] = ND_AT(t_int(&r, 0, 1) ? t_int(&r, -len, -1) : t_int(&r, 0, len - 1));
                break;
            case 1: /* integers on some axes */
                idx[k] = t_int(&r, 0, 1) ? ND_AT(t_int(&r, -len, len - 1)) : ND_ALL;
                break;
            case 2: /* huge bounds and steps: at most one position per axis */
                idx[k] = ND_SLICE(t_int(&r, 0, 1) ? INT64_MAX : -INT64_MAX,
                                  t_int(&r, 0, 1) ? ND_NONE : t_int(&r, 0, 1) ? INT64_MAX
                                                                              : -INT64_MAX,
                                  t_int(&r, 0, 1) ? HUGE_STEP : -HUGE_STEP);
                break;
            default: /* fewer entries than axes: the rest whole */
                idx[k] = t_int(&r, 0, 1) ? ND_AT(t_int(&r, -len, len - 1))
                                         : ND_SLICE(ND_NONE, ND_NONE, t_int(&r, 0, 1) ? -1 : 2);
                break;
            }
        }
        snprintf(what, sizeof what, "case %d: nd_slice(%s, %s)", c, t_describe(&a),
                 index_text(n, idx, t, sizeof t));
        check_slice(&a, &la, n, idx, &out, what);
        int kept = n < ndim ? ndim - n : 0;
        for (int k = 0; k < n; k++)
            kept += idx[k].kind == ND_INDEX_SLICE;
        CHECK(out.ndim == kept, "%s: the result has %d axes, expected %d: an integer index "
              "drops its axis, a slice keeps it", what, out.ndim, kept);
        nd_release(&out);
        lay_free(&la);
        nd_release(&a);
    }

    /* no index at all: the same view */
    int64_t s3[3] = { 2, 3, 4 }, st3[3] = { -12, 1, 3 };
    nd_array b = t_strided(30, 3, s3, st3, 14);
    T_OK(nd_slice(&b, 0, &f, &out));
    CHECK(t_same_view(&out, &b), "nd_slice(%s, 0 entries) gave %s, expected the same view",
          t_describe(&b), t_describe2(&out));
    nd_release(&out);
    nd_release(&b);
}
END_TEST

START_TEST(slice_errors_deep)
{
    int64_t shape[3] = { 3, 4, 5 }, strides[3] = { -20, 5, 1 };
    nd_array a = t_strided(64, 3, shape, strides, 42), out, spare;
    nd_index ok[3] = { ND_SLICE(1, ND_NONE, 1), ND_AT(-1), ND_SLICE(ND_NONE, ND_NONE, -2) };
    T_OK(nd_slice(&a, 3, ok, &out));
    nd_release(&out);

    for (int k = 0; k < 3; k++) {
        nd_index bad[3];
        struct { nd_index e; nd_status want; const char *why; } e[] = {
            { ND_SLICE(0, 2, 0), ND_ERR_INDEX, "a step of 0" },
            { ND_SLICE(ND_NONE, ND_NONE, 0), ND_ERR_INDEX, "a step of 0" },
            { ND_AT(shape[k]), ND_ERR_INDEX, "an integer == size" },
            { ND_AT(-shape[k] - 1), ND_ERR_INDEX, "an integer < -size" },
            { ND_AT(INT64_MAX), ND_ERR_INDEX, "an integer INT64_MAX" },
            { ND_AT(INT64_MIN), ND_ERR_INDEX, "an integer INT64_MIN" },
            { ND_ALL, ND_ERR_ARG, "an unknown kind 2" },
            { ND_ALL, ND_ERR_ARG, "an unknown kind -1" },
        };
        e[6].e.kind = (nd_index_kind)2;
        e[7].e.kind = (nd_index_kind)-1;
        for (size_t j = 0; j < sizeof e / sizeof e[0]; j++) {
            memcpy(bad, ok, sizeof bad);
            bad[k] = e[j].e;
            char what[300], t[200];
            snprintf(what, sizeof what, "nd_slice(%s, %s): %s on axis %d", t_describe(&a),
                     index_text(3, bad, t, sizeof t), e[j].why, k);
            snap in = snap_of(&a);
            t_poison(&out);
            nd_clear_error();
            nd_status s = nd_slice(&a, 3, bad, &out);
            CHECK(s == e[j].want, "%s returned %s, expected %s%s%s", what, nd_status_name(s),
                  nd_status_name(e[j].want), s == ND_OK ? "" : ": ",
                  s == ND_OK ? "" : nd_last_error());
            CHECK(strstr(nd_last_error(), "slice") != NULL, "%s: the message \"%s\" does not "
                  "name the operation", what, nd_last_error());
            t_assert_untouched(&out, what);
            expect_input_kept(&in, 0, what);
            /* and with out == a */
            nd_array x;
            T_OK(nd_share(&a, &x));
            nd_array before = x;
            s = nd_slice(&x, 3, bad, &x);
            CHECK(s == e[j].want && t_same_struct(&x, &before), "%s with out == a returned %s "
                  "and left a as %s: on an error, out (a itself) must stay as it was", what,
                  nd_status_name(s), t_describe(&x));
            nd_release(&x);
        }
    }
    EXPECT_FAIL_OUT(&out, ND_ERR_ARG, "slice", nd_slice(&a, 4, ok, &out));
    EXPECT_FAIL_OUT(&out, ND_ERR_ARG, "slice", nd_slice(&a, -1, ok, &out));
    EXPECT_FAIL_OUT(&out, ND_ERR_ARG, "slice", nd_slice(&a, 1, NULL, &out));
    EXPECT_FAIL_OUT(&spare, ND_ERR_ARG, "slice", nd_slice(&a, 1, ok, NULL));
    nd_release(&a);

    /* empty axes: an integer cannot index one; a step of 0 is still wrong */
    int64_t es[2] = { 3, 0 };
    nd_array e = t_arange(2, es);
    nd_index at0[2] = { ND_ALL, ND_AT(0) }, atm[2] = { ND_ALL, ND_AT(-1) },
             z[2] = { ND_ALL, ND_SLICE(ND_NONE, ND_NONE, 0) },
             fine[2] = { ND_AT(2), ND_SLICE(ND_NONE, ND_NONE, -1) };
    EXPECT_FAIL_OUT(&out, ND_ERR_INDEX, "slice", nd_slice(&e, 2, at0, &out));
    EXPECT_FAIL_OUT(&out, ND_ERR_INDEX, "slice", nd_slice(&e, 2, atm, &out));
    EXPECT_FAIL_OUT(&out, ND_ERR_INDEX, "slice", nd_slice(&e, 2, z, &out));
    T_OK(nd_slice(&e, 2, fine, &out));
    CHECK(out.ndim == 1 && out.shape[0] == 0, "nd_slice((3,0) array, [2, ::-1]) gave %s, "
          "expected shape (0,)", t_describe(&out));
    nd_release(&out);
    nd_release(&e);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* nd_diagonal                                                             */
/* ---------------------------------------------------------------------- */

static const char DIAGONAL_HINT[] = "element j is at j+max(-offset,0) on axis1 and "
                                    "j+max(offset,0) on axis2 of the INPUT view (its own, maybe "
                                    "negative, strides and offset); the other axes keep their "
                                    "order; the diagonal is the LAST axis, stride "
                                    "strides[axis1]+strides[axis2]";

static void check_diagonal(const nd_array *a, const lay *la, int64_t offset, int axis1,
                           int axis2, nd_array *out, const char *what)
{
    int a1 = axis1 < 0 ? axis1 + a->ndim : axis1, a2 = axis2 < 0 ? axis2 + a->ndim : axis2;
    snap in = snap_of(a);
    nd_status s = nd_diagonal(a, offset, axis1, axis2, out);
    CHECK(s == ND_OK, "%s returned %s: %s", what, nd_status_name(s), nd_last_error());
    lay l = lay_diagonal(la, offset, a1, a2);
    expect_view(out, &in, &l, what, DIAGONAL_HINT);
    lay_free(&l);
}

START_TEST(diagonal_random_views)
{
    int64_t s34[2] = { 3, 4 };
    nd_array first = t_arange(2, s34), out, sym;
    T_OK(nd_diagonal(&first, -1, 0, 1, &out));
    nd_release(&out);
    nd_release(&first);

    t_rng r = t_rng_new(19001);
    for (int c = 0; c < 5000; c++) {
        int64_t shape[ND_MAX_DIMS];
        int ndim = gen_shape(&r, 2, ND_MAX_DIMS, 6, 900, shape);
        nd_array a = gen_view(&r, ndim, shape, (int)t_int(&r, 1, 3), 1 << 14);
        int a1 = (int)t_int(&r, 0, ndim - 1), a2;
        do
            a2 = (int)t_int(&r, 0, ndim - 1);
        while (a2 == a1);
        int64_t offset = t_int(&r, -shape[a1] - 2, shape[a2] + 2);
        int x1 = a1 - (t_int(&r, 0, 2) == 0 ? ndim : 0), x2 = a2 - (t_int(&r, 0, 2) == 0 ? ndim : 0);
        lay la = lay_of(&a);
        char what[600];
        snprintf(what, sizeof what, "case %d: nd_diagonal(%s, offset %" PRId64 ", axis1 %d, "
                 "axis2 %d)", c, t_describe(&a), offset, x1, x2);
        check_diagonal(&a, &la, offset, x1, x2, &out, what);
        /* the same diagonal read the other way: (a, -offset, axis2, axis1) */
        T_OK(nd_diagonal(&a, -offset, x2, x1, &sym));
        CHECK(same_layout(&out, &sym),
              "%s gave %s, but nd_diagonal(a, %" PRId64 ", %d, %d) gave %s: swapping the axes "
              "and negating the offset is the same diagonal. Hint: %s", what, t_describe(&out),
              -offset, x2, x1, t_describe2(&sym), DIAGONAL_HINT);
        nd_release(&sym);
        nd_release(&out);
        lay_free(&la);
        nd_release(&a);
    }
}
END_TEST

START_TEST(diagonal_axis_pairs)
{
    int64_t s4[4] = { 2, 3, 4, 5 };
    nd_array first = t_arange(4, s4), out, spare;
    T_OK(nd_diagonal(&first, 0, 3, 1, &out));
    nd_release(&out);
    nd_release(&first);

    /* a (2,3,4,5) view with negative strides: every (axis1, axis2) in
     * -5..4, offsets -6..6 */
    t_rng r = t_rng_new(19501);
    int64_t strides[4] = { -60, 1, 15, -3 }; /* mixed signs; no element twice */
    nd_array a = t_strided(130, 4, s4, strides, 60 + 12 + 2);
    lay la = lay_of(&a);
    for (int x1 = -5; x1 <= 4; x1++)
        for (int x2 = -5; x2 <= 4; x2++) {
            int n1 = x1 < 0 ? x1 + 4 : x1, n2 = x2 < 0 ? x2 + 4 : x2;
            bool valid = n1 >= 0 && n1 < 4 && n2 >= 0 && n2 < 4 && n1 != n2;
            for (int64_t off = -6; off <= 6; off++) {
                char what[300];
                snprintf(what, sizeof what, "nd_diagonal(%s, offset %" PRId64 ", axis1 %d, "
                         "axis2 %d)", t_describe(&a), off, x1, x2);
                if (valid) {
                    check_diagonal(&a, &la, off, x1, x2, &out, what);
                    nd_release(&out);
                } else {
                    snap in = snap_of(&a);
                    t_poison(&out);
                    expect_fail(nd_diagonal(&a, off, x1, x2, &out), ND_ERR_AXIS, "diagonal",
                                what, &out);
                    expect_input_kept(&in, 0, what);
                }
            }
        }
    /* huge offsets: empty, never an overflow */
    int64_t far[4] = { INT64_MAX, -INT64_MAX, INT64_MAX - 1, -INT64_MAX + 1 };
    for (int k = 0; k < 4; k++) {
        check_diagonal(&a, &la, far[k], 1, 2, &out, "nd_diagonal with an offset near "
                       "+-INT64_MAX: a diagonal past the edge is empty");
        nd_release(&out);
    }
    check_diagonal(&a, &la, INT64_MIN, 1, 2, &out, "nd_diagonal with offset INT64_MIN");
    nd_release(&out);
    lay_free(&la);
    /* with out == a, a failure leaves a as it was */
    nd_array x;
    T_OK(nd_share(&a, &x));
    nd_array before = x;
    nd_status s = nd_diagonal(&x, 0, 2, -2, &x);
    CHECK(s == ND_ERR_AXIS && t_same_struct(&x, &before), "nd_diagonal(&x, 0, 2, -2, &x) of a "
          "4-D x returned %s and left x as %s: on an error, out (x itself) must stay as it was",
          nd_status_name(s), t_describe(&x));
    nd_release(&x);
    EXPECT_FAIL_OUT(&spare, ND_ERR_ARG, "diagonal", nd_diagonal(&a, 0, 0, 1, NULL));
    nd_release(&a);

    /* 8 axes: every pair, offsets -2, 0, 1 */
    int64_t s8[8] = { 2, 3, 1, 2, 3, 2, 1, 3 };
    nd_array b = gen_view(&r, 8, s8, 1, 1 << 14);
    lay lb = lay_of(&b);
    for (int x1 = 0; x1 < 8; x1++)
        for (int x2 = 0; x2 < 8; x2++) {
            if (x1 == x2)
                continue;
            for (int64_t off = -2; off <= 1; off += off == -2 ? 2 : 1) {
                char what[300];
                snprintf(what, sizeof what, "nd_diagonal(%s, offset %" PRId64 ", axis1 %d, "
                         "axis2 %d)", t_describe(&b), off, x1, x2);
                check_diagonal(&b, &lb, off, x1, x2, &out, what);
                nd_release(&out);
            }
        }
    lay_free(&lb);
    nd_release(&b);

    /* fewer than 2 axes */
    int64_t three = 3;
    nd_array v = t_arange(1, &three), sc = t_arange(0, NULL);
    EXPECT_FAIL_OUT(&out, ND_ERR_ARG, "diagonal", nd_diagonal(&v, 0, 0, -1, &out));
    EXPECT_FAIL_OUT(&out, ND_ERR_ARG, "diagonal", nd_diagonal(&sc, 0, 0, 1, &out));
    nd_release(&v);
    nd_release(&sc);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* All views                                                               */
/* ---------------------------------------------------------------------- */

/* One random view operation applied to the subject (a, its reference l):
 * checked, then the result replaces it.  `in_place` makes out == a.  The
 * step is appended to `story`, which failure messages quote. */
static void random_step(t_rng *r, nd_array *a, lay *l, bool in_place, int64_t cap,
                        char *story, size_t cap_story)
{
    int op = (int)t_int(r, 0, 4);
    bool compact = ref_compact(a);
    if (op == 4 && !compact)
        op = 2;
    if (op == 3 && a->ndim < 2)
        op = 0;
    char step[300], t[250], what[5000];
    nd_array out, *dst = in_place ? a : &out;
    lay want;
    nd_status s;
    nd_buffer *buf = a->buf;
    int64_t refs = buf->refcount;
    nd_array before = *a;
    switch (op) {
    case 0: {
        int axes[ND_MAX_DIMS], norm[ND_MAX_DIMS];
        random_perm(r, a->ndim, axes, true);
        for (int k = 0; k < a->ndim; k++)
            norm[k] = axes[k] < 0 ? axes[k] + a->ndim : axes[k];
        snprintf(step, sizeof step, "permute%s", axes_text(a->ndim, axes, t, sizeof t));
        want = lay_permute(l, norm);
        s = nd_permute(a, axes, dst);
        break;
    }
    case 1: {
        int64_t target[ND_MAX_DIMS];
        int n = random_target(r, a->ndim, a->shape, 2, cap, target);
        snprintf(step, sizeof step, "broadcast_to%s", nd_shape_str(n, target, t, sizeof t));
        want = lay_broadcast(l, n, target);
        s = nd_broadcast_to(a, n, target, dst);
        break;
    }
    case 2: {
        nd_index idx[ND_MAX_DIMS];
        int n = random_index(r, a->ndim, a->shape, idx);
        snprintf(step, sizeof step, "slice%s", index_text(n, idx, t, sizeof t));
        want = lay_slice(l, n, idx);
        s = nd_slice(a, n, idx, dst);
        break;
    }
    case 3: {
        int a1 = (int)t_int(r, 0, a->ndim - 1), a2;
        do
            a2 = (int)t_int(r, 0, a->ndim - 1);
        while (a2 == a1);
        int64_t off = t_int(r, -a->shape[a1] - 1, a->shape[a2] + 1);
        snprintf(step, sizeof step, "diagonal(%" PRId64 ", %d, %d)", off, a1, a2);
        want = lay_diagonal(l, off, a1, a2);
        s = nd_diagonal(a, off, a1, a2, dst);
        break;
    }
    default: {
        int64_t given[ND_MAX_DIMS], shape[ND_MAX_DIMS];
        int n = random_reshape(r, nd_numel(a), given, shape);
        snprintf(step, sizeof step, "reshape%s", nd_shape_str(n, given, t, sizeof t));
        want = lay_reshape(l, n, shape);
        s = nd_reshape(a, n, given, dst);
        break;
    }
    }
    size_t len = strlen(story);
    snprintf(story + len, cap_story - len, " -> %s", step);
    snprintf(what, sizeof what, "%s%s (the last step's input: %s)", story,
             in_place ? " [out == input]" : "", t_describe(&before));
    CHECK(s == ND_OK, "%s returned %s: %s", what, nd_status_name(s), nd_last_error());
    CHECK(dst->buf == buf && buf->refcount == refs + (in_place ? 0 : 1), "%s: the result's "
          "buffer %s, refcount %" PRId64 ", expected the input's buffer with refcount %" PRId64,
          what, dst->buf == buf ? "is the input's" : "is ANOTHER one", buf->refcount,
          refs + (in_place ? 0 : 1));
    if (!in_place)
        CHECK(t_same_struct(a, &before), "%s changed its input view to %s", what, t_describe(a));
    expect_lay(dst, &want, what, "each view function starts from its input's offset and "
               "strides, whatever view made it");
    if (!in_place) {
        nd_release(a);
        *a = out;
    }
    lay_free(l);
    *l = want;
}

START_TEST(views_chain_random)
{
    int64_t s6 = 6;
    nd_array first = t_arange(1, &s6), out;
    nd_index f = ND_SLICE(ND_NONE, ND_NONE, -2);
    T_OK(nd_slice(&first, 1, &f, &out));
    nd_release(&out);
    nd_release(&first);

    t_rng r = t_rng_new(20001);
    for (int c = 0; c < 2000; c++) {
        int64_t shape[ND_MAX_DIMS];
        int ndim = gen_shape(&r, 0, ND_MAX_DIMS, 5, 600, shape);
        nd_array a = gen_view(&r, ndim, shape, (int)t_int(&r, 0, 3), 1 << 14);
        lay l = lay_of(&a);
        char story[4096];
        snprintf(story, sizeof story, "chain %d: a %s", c, t_describe(&a));
        for (int n = (int)t_int(&r, 3, 8); n > 0; n--)
            random_step(&r, &a, &l, t_int(&r, 0, 2) == 0, 3000, story, sizeof story);
        CHECK(a.buf->refcount == 1, "%s: the last view's buffer has refcount %" PRId64
              ", expected 1: every view holds one reference, released with it", story,
              a.buf->refcount);
        lay_free(&l);
        nd_release(&a);
    }
}
END_TEST

/* The data never moves: a view function writes no element of the buffer. */
START_TEST(views_share_not_copy)
{
    int64_t s34[2] = { 3, 4 };
    int t[2] = { 1, 0 };
    nd_array first = t_arange(2, s34), out;
    T_OK(nd_permute(&first, t, &out));
    nd_release(&out);
    nd_release(&first);

    t_rng r = t_rng_new(21001);
    for (int c = 0; c < 1000; c++) {
        int64_t shape[ND_MAX_DIMS];
        int ndim = gen_shape(&r, 2, 6, 4, 300, shape);
        nd_array a = gen_view(&r, ndim, shape, (int)t_int(&r, 0, 3), 4096);
        int64_t size;
        float *before = t_buffer(&a, &size);
        nd_array views[6];
        int nv = 0;
        int axes[ND_MAX_DIMS];
        random_perm(&r, ndim, axes, false);
        T_OK(nd_permute(&a, axes, &views[nv++]));
        int64_t target[ND_MAX_DIMS];
        int nt = random_target(&r, ndim, shape, 2, 3000, target);
        T_OK(nd_broadcast_to(&a, nt, target, &views[nv++]));
        nd_index idx[ND_MAX_DIMS];
        int n = random_index(&r, ndim, shape, idx);
        T_OK(nd_slice(&a, n, idx, &views[nv++]));
        T_OK(nd_diagonal(&a, t_int(&r, -2, 2), 0, ndim - 1, &views[nv++]));
        bool compact;
        T_OK(nd_is_compact(&a, &compact));
        if (compact) {
            int64_t flat = nd_numel(&a);
            T_OK(nd_reshape(&a, 1, &flat, &views[nv++]));
        }
        CHECK(a.buf->refcount == 1 + nv, "case %d: %d views of %s, refcount %" PRId64
              ", expected %d", c, nv, t_describe(&a), a.buf->refcount, 1 + nv);
        for (int k = 0; k < nv; k++)
            CHECK(views[k].buf == a.buf, "case %d: a view of %s has a buffer of its own: "
                  "views never copy", c, t_describe(&a));
        float *after = t_buffer(&a, NULL);
        char what[400];
        snprintf(what, sizeof what, "case %d: the buffer of %s after making views of it", c,
                 t_describe(&a));
        t_assert_floats(after, before, 1, &size, what, "view functions never write data");
        for (int k = nv - 1; k >= 0; k--)
            nd_release(&views[k]);
        CHECK(a.buf->refcount == 1, "case %d: after releasing every view the refcount is %"
              PRId64 ", expected 1", c, a.buf->refcount);
        free(before);
        free(after);
        nd_release(&a);
    }
}
END_TEST

START_TEST(views_large_8d)
{
    const int64_t n = INT64_C(1) << 22;
    nd_array base = t_arange(1, &n), m, tr, v8, p8, s8, d8;
    int64_t sq[2] = { 2048, 2048 };
    T_OK(nd_reshape(&base, 2, sq, &m));

    /* a 2048 x 2048 transpose: strides (1, 2048), checked element by element */
    int t2[2] = { 1, 0 };
    T_OK(nd_permute(&m, t2, &tr));
    CHECK(tr.strides[0] == 1 && tr.strides[1] == 2048 && tr.offset == 0, "nd_permute of a "
          "(2048,2048) array by (1,0) gave %s, expected strides (1,2048) offset 0",
          t_describe(&tr));
    float *vals = t_gather(&tr);
    for (int64_t i = 0; i < 2048; i++)
        for (int64_t j = 0; j < 2048; j++)
            CHECK(vals[i * 2048 + j] == (float)(j * 2048 + i) + 0.5f, "the transpose of a "
                  "(2048,2048) arange: element (%" PRId64 ",%" PRId64 ") is %g, expected %g",
                  i, j, (double)vals[i * 2048 + j], (double)(j * 2048 + i) + 0.5);
    free(vals);
    bool compact = true;
    T_OK(nd_is_compact(&tr, &compact));
    CHECK(!compact, "nd_is_compact of a (2048,2048) transpose gave true");
    int64_t flat = n, off;
    nd_array spare;
    EXPECT_FAIL_OUT(&spare, ND_ERR_LAYOUT, "reshape", nd_reshape(&tr, 1, &flat, &spare));
    int64_t at[2] = { 2047, 5 };
    T_OK(nd_offset_of(&tr, at, &off));
    CHECK(off == 5 * 2048 + 2047, "nd_offset_of(transpose, (2047,5)) is %" PRId64, off);

    /* 8 axes: reshape, reverse the axis order, reverse every axis,
     * then a diagonal of the first and last axes */
    int64_t s8shape[8] = { 8, 8, 8, 8, 8, 8, 4, 4 };
    T_OK(nd_reshape(&base, 8, s8shape, &v8));
    int rev[8] = { 7, 6, 5, 4, 3, 2, 1, 0 };
    T_OK(nd_permute(&v8, rev, &p8));
    nd_index all_back[8];
    for (int k = 0; k < 8; k++)
        all_back[k] = ND_SLICE(ND_NONE, ND_NONE, -1);
    T_OK(nd_slice(&p8, 8, all_back, &s8));
    int64_t want_strides[8] = { 1, 4, 16, 128, 1024, 8192, 65536, 524288 };
    for (int k = 0; k < 8; k++)
        CHECK(s8.strides[k] == -want_strides[k], "(8,8,8,8,8,8,4,4) permuted by (7,...,0) then "
              "[::-1] on every axis gave %s: axis %d should have stride %" PRId64,
              t_describe(&s8), k, -want_strides[k]);
    CHECK(s8.offset == n - 1, "the same view has offset %" PRId64 ", expected %" PRId64,
          s8.offset, n - 1);
    lay l8 = lay_of(&s8);
    T_OK(nd_diagonal(&s8, 1, 0, 7, &d8));
    lay ld = lay_diagonal(&l8, 1, 0, 7);
    expect_lay(&d8, &ld, "nd_diagonal(offset 1, axes 0 and 7) of a reversed 8-D view of 2^22 "
               "elements", DIAGONAL_HINT);
    lay_free(&ld);
    lay_free(&l8);
    /* every element of the reversed view: element i is n-1-i of the buffer... */
    int64_t idx[8] = { 3, 1, 4, 1, 5, 7, 2, 6 };
    T_OK(nd_offset_of(&s8, idx, &off));
    int64_t want = n - 1;
    for (int k = 0; k < 8; k++)
        want -= idx[k] * want_strides[k];
    CHECK(off == want, "nd_offset_of(%s, (3,1,4,1,5,7,2,6)) is %" PRId64 ", expected %" PRId64,
          t_describe(&s8), off, want);
    CHECK(base.buf->refcount == 7, "7 views of one buffer, refcount %" PRId64,
          base.buf->refcount);
    nd_release(&d8);
    nd_release(&s8);
    nd_release(&p8);
    nd_release(&v8);
    nd_release(&tr);
    nd_release(&m);
    nd_release(&base);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* The suite: points and hints                                            */
/* ---------------------------------------------------------------------- */

/* Every lesson-1 function refuses a NULL, released or broken array and a
 * NULL output with ND_ERR_ARG, a message naming it, and no output. */
START_TEST(views_bad_arguments)
{
    int64_t shape[2] = { 2, 3 }, st[2];
    nd_array a = t_arange(2, shape), out, dead, broken = a;
    T_OK(nd_compact_strides(2, shape, st));   /* one valid call first */
    T_OK(nd_share(&a, &dead));
    nd_release(&dead);                        /* dead: released, no buffer */
    broken.ndim = ND_MAX_DIMS + 1;
    const nd_array *bad[] = { NULL, &dead, &broken };
    int axes[2] = { 1, 0 };
    int64_t idx[2] = { 0, 0 }, off;
    nd_index ix[1] = { ND_ALL };
    bool flag;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const nd_array *b = bad[i];
        t_poison(&out);
        T_ERR_OP(nd_is_compact(b, &flag), ND_ERR_ARG, "is_compact");
        T_ERR_OP(nd_offset_of(b, idx, &off), ND_ERR_ARG, "offset_of");
        T_ERR_OP(nd_reshape(b, 2, shape, &out), ND_ERR_ARG, "reshape");
        T_ERR_OP(nd_permute(b, axes, &out), ND_ERR_ARG, "permute");
        T_ERR_OP(nd_broadcast_to(b, 2, shape, &out), ND_ERR_ARG, "broadcast_to");
        T_ERR_OP(nd_slice(b, 1, ix, &out), ND_ERR_ARG, "slice");
        T_ERR_OP(nd_diagonal(b, 0, 0, 1, &out), ND_ERR_ARG, "diagonal");
        t_assert_untouched(&out, "a lesson-1 function given a bad array");
    }
    T_ERR_OP(nd_compact_strides(2, shape, NULL), ND_ERR_ARG, "compact_strides");
    T_ERR_OP(nd_is_compact(&a, NULL), ND_ERR_ARG, "is_compact");
    T_ERR_OP(nd_offset_of(&a, NULL, &off), ND_ERR_ARG, "offset_of");
    T_ERR_OP(nd_offset_of(&a, idx, NULL), ND_ERR_ARG, "offset_of");
    T_ERR_OP(nd_reshape(&a, 2, shape, NULL), ND_ERR_ARG, "reshape");
    T_ERR_OP(nd_permute(&a, axes, NULL), ND_ERR_ARG, "permute");
    T_ERR_OP(nd_broadcast_to(&a, 2, shape, NULL), ND_ERR_ARG, "broadcast_to");
    T_ERR_OP(nd_slice(&a, 1, ix, NULL), ND_ERR_ARG, "slice");
    T_ERR_OP(nd_diagonal(&a, 0, 0, 1, NULL), ND_ERR_ARG, "diagonal");
    nd_release(&a);
}
END_TEST

Suite *hidden_01_views(void);

Suite *hidden_01_views(void)
{
    Suite *s = g_suite(1, "01_views");
    G_ADD_HOST(s, compact_strides_all_shapes, 2,
               "strides[k] is the product of the sizes AFTER axis k (a 0 there makes it 0), in "
               "int64_t; write exactly ndim entries, and nothing at all on an error");
    G_ADD(s, is_compact_property, 3,
          "compact means row-major element i is at offset + i: compare each stride with the "
          "compact one from the last axis, SKIPPING size-1 axes (their stride never matters); "
          "an array with no elements is compact");
    G_ADD(s, offset_of_every_index, 2,
          "offset + sum(index[k]*strides[k]) with signed strides; check 0 <= index[k] < "
          "shape[k] on EVERY axis (never wrap) before writing *offset");
    G_ADD(s, reshape_round_trip, 3,
          "a reshaped compact view keeps the view's offset and gets the compact strides of the "
          "NEW shape; -1 is numel divided by the product of the other sizes");
    G_ADD(s, reshape_layout_and_errors, 3,
          "only axes longer than 1 decide compactness; check -1s, negative sizes and counts "
          "before anything else, and leave *out (even when it is a) as it was on an error");
    G_ADD(s, permute_inverse_identity, 3,
          "permute only reorders shape and strides (out axis i is a's axis axes[i], negative "
          "axes count from the end) and keeps the offset, so the inverse permutation gives "
          "back a's exact layout");
    G_ADD(s, permute_axes_validation, 2,
          "normalise each axis (add ndim if negative), then reject one outside 0..ndim-1 or "
          "named twice with ND_ERR_AXIS, before writing *out");
    G_ADD(s, broadcast_of_broadcast, 3,
          "align the shapes at the right; a new leading axis and a STRETCHED size-1 axis get "
          "stride 0; every other axis keeps its stride, even a 0 from an earlier broadcast");
    G_ADD(s, broadcast_rules_exhaustive, 2,
          "compare from the right: equal sizes keep the stride; a size 1 stretches to any "
          "size, 0 included; a 0 stretches to nothing else; a target with fewer axes than a "
          "is ND_ERR_SHAPE even when a's extra axes have size 1");
    G_ADD(s, slice_python_exhaustive, 5,
          "follow Python's slice.indices(): a negative bound adds the size, then clips to 0 "
          "(-1 for a negative step); a bound >= size clips to size (size-1 for a negative "
          "step); a negative step's default start is the LAST position; count = "
          "(stop-start-1)/step+1 without overflow for steps near INT64_MAX");
    G_ADD(s, slice_of_slice_combined, 3,
          "slice from the input VIEW's offset and strides: offset += first*stride, stride *= "
          "step; a slice of a slice must equal the one combined slice of the original");
    G_ADD(s, slice_ints_and_extremes, 2,
          "an integer adds i*stride to the offset (i+size if negative) and drops its axis; "
          "axes past the n entries are taken whole");
    G_ADD(s, slice_errors_deep, 2,
          "check every entry (kind, step != 0, integer in -size..size-1) before writing "
          "*out; n may be smaller than ndim, never larger; on an error *out (even a itself) "
          "stays as it was");
    G_ADD(s, diagonal_random_views, 3,
          "a positive offset moves along axis2 and a negative one along axis1, with the "
          "input's own (maybe negative or zero) strides; the diagonal's stride is "
          "strides[axis1] + strides[axis2]");
    G_ADD(s, diagonal_axis_pairs, 2,
          "normalise both axes first (ND_ERR_AXIS if out of range or equal); the other axes "
          "keep their order and the diagonal is appended LAST, also when axis1 > axis2; huge "
          "offsets give an empty diagonal without overflowing");
    G_ADD(s, views_chain_random, 4,
          "each view function starts from its input's offset and strides, whatever view made "
          "it; with out == a, compute into locals first, then let nd_as_strided(a, ..., out) "
          "swap the reference");
    G_ADD(s, views_share_not_copy, 2,
          "build every result with nd_as_strided over a's buffer: never allocate or copy, and "
          "take exactly one reference per view");
    G_ADD(s, views_bad_arguments, 1,
          "check every pointer and array argument first (the given checks at the top "
          "of each function do this: keep them)");
    G_ADD(s, views_large_8d, 3,
          "sizes, strides and offsets are int64_t everywhere; no view function loops over "
          "elements, so 2^22-element and 8-D views cost nothing");
    return s;
}
