/*
 * h04_reduce.c -- hidden tests of lesson 4: nd_reduce, the sum and the max
 * over any set of axes, with and without keepdims.
 *
 * What this file covers (the suite at the end lists every test with its
 * points and hint):
 *
 *   axes          EVERY subset of the axes of 4-D views, each listed in
 *                 every order and with every mix of positive and negative
 *                 numbers, with and without keepdims (about 30000 calls
 *                 per op); thousands of random reductions of 0 to 8 axes;
 *                 ND_ALL_AXES (its axes pointer ignored); naxes 0, a copy
 *   layouts       permuted, sliced and reversed views, offsets, stride 0
 *                 (a sum over a broadcast is count x value), size-1 axes
 *                 with junk strides, views of views, every 3-D shape with
 *                 sizes 0..3
 *   properties    keepdims puts a 1 IN PLACE of each reduced axis and
 *                 changes no value; a sum over A then B equals the sum over
 *                 A and B; the max over everything is the max of the maxima
 *                 over axis 0
 *   max           all-negative and all -inf blocks, -FLT_MAX next to -inf,
 *                 the max at every position of runs around lane and leaf
 *                 sizes, ties; a NaN (or inf - inf in a sum) spoils its own
 *                 block and no other, and a NaN outside the view none
 *   sum accuracy  long axes (10^6 .. 10^7 terms) in many layouts: pairwise
 *                 accuracy against a double reference (bound below); 10^7
 *                 copies of 0.1f within 1e-5 relative
 *   large         2^22-element transposes and reversed 8-D views, exact
 *   errors        every out-of-range and repeated axis (k with k - ndim),
 *                 naxes out of range, NULL axes, unknown ops, a max over a
 *                 size-0 axis (also when the result is empty): the right
 *                 status, a message naming the operation, *out untouched,
 *                 the input and its refcount as they were; out == a
 *
 * The reference never calls lesson code: it reads a host copy of the
 * buffer and walks the view index by index, adding each element (in
 * double) to, or comparing it (with a plain if) with, the output whose
 * index is the element's index without the reduced axes: NumPy's rule.
 * Inputs are made with nd_as_strided / nd_from_host / nd_full only (and,
 * in reduce_composition, by nd_reduce itself: a result reduced again).
 *
 * A max must match exactly.  A float sum depends on the order of its
 * additions: any order of r additions is within (r-1) u sum|x| of the
 * exact sum (u = 2^-24, Higham, "Accuracy and Stability of Numerical
 * Algorithms", 4.2), so general cases accept (r+1) u sum|x|; with values
 * of magnitude 1 to 2 a missed or extra element moves a sum by at least 1,
 * far more than that tolerance for the block sizes used.  Long sums have
 * their own, much tighter bound (SUM_ACCURACY below).
 *
 * Every test first calls nd_reduce on a valid input with T_OK, so that on
 * the skeleton each test fails with "not implemented".
 */
#include "grader.h"

#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Fail with a formatted message unless cond holds (cheap in loops). */
#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (!(cond))                                                       \
            ck_abort_msg(__VA_ARGS__);                                     \
    } while (0)

/* The unit roundoff of float. */
#define U_FLOAT (FLT_EPSILON / 2)

/* Roundings a long sum may lose beyond ceil(log2 n): the bound is
 * (ceil(log2 n) + SUM_ACCURACY) u sum|x|.  Pairwise summation of n terms
 * is within ceil(log2 n) u sum|x| of the exact sum (Higham 4.2); leaves
 * added in a few lanes, or one by one up to 256 terms (the lesson's LEAF),
 * cost at most 40 u sum|x| in our measurements (the worst case found:
 * 0.1f repeated), and the final rounding to float half an ulp more; 48
 * covers them all.  The solution stays below 1 u sum|x| on every case of
 * reduce_sum_accuracy_layouts.  Adding term by term in float loses far
 * more: on 4*10^6 terms 0.1 + [0, 0.01) about 470000 u sum|x|, and 16
 * such running sums side by side (no pairwise step) about 650. */
#define SUM_ACCURACY 48

static const char *op_name(nd_reduce_op op) { return op == ND_SUM ? "sum" : "max"; }

/* ---------------------------------------------------------------------- */
/* Small helpers                                                          */
/* ---------------------------------------------------------------------- */

static void row_major(int ndim, const int64_t *shape, int64_t *strides)
{
    int64_t s = 1;
    for (int k = ndim - 1; k >= 0; k--) {
        strides[k] = s;
        s *= shape[k] > 0 ? shape[k] : 1;
    }
}

/* "(2,0,-1)" for an int list. */
static const char *axes_text(int n, const int *axes, char *dst, size_t cap)
{
    int64_t v[ND_MAX_DIMS + 2];
    if (n > ND_MAX_DIMS + 2)
        n = ND_MAX_DIMS + 2;
    for (int k = 0; k < n; k++)
        v[k] = axes[k];
    return nd_shape_str(n, v, dst, cap);
}

/* "sum over axes (0,-1) of shape=(2,3) strides=(3,1) offset=0, keepdims" */
static const char *describe_case(char *dst, size_t cap, nd_reduce_op op, const nd_array *a,
                                 int naxes, const int *axes, bool keepdims)
{
    char list[200] = "every axis (ND_ALL_AXES)", ax[190];
    if (naxes == 0)
        snprintf(list, sizeof list, "no axis (naxes 0, axes %s)", axes ? "given" : "NULL");
    else if (naxes < ND_ALL_AXES || naxes > ND_MAX_DIMS + 2)
        snprintf(list, sizeof list, "naxes %d", naxes);
    else if (naxes != ND_ALL_AXES && axes == NULL)
        snprintf(list, sizeof list, "naxes %d with axes NULL", naxes);
    else if (naxes != ND_ALL_AXES)
        snprintf(list, sizeof list, "axes %s (naxes %d)", axes_text(naxes, axes, ax,
                 sizeof ax), naxes);
    snprintf(dst, cap, "%s over %s of %s%s", op_name(op), list, t_describe(a),
             keepdims ? ", keepdims" : "");
    return dst;
}

/* For calls whose text alone would not say which case failed: `got` (the
 * status of the call `what` describes) must be `want`, with a message
 * naming "reduce" and `op`; *out, poisoned before, untouched. */
static void expect_fail(nd_status got, nd_status want, const char *op, const char *what,
                        const nd_array *out, const char *hint)
{
    CHECK(got == want, "%s returned %s, expected %s%s%s. Hint: %s", what, nd_status_name(got),
          nd_status_name(want), got == ND_OK ? "" : ": ", got == ND_OK ? "" : nd_last_error(),
          hint);
    CHECK(strstr(nd_last_error(), "reduce") != NULL && strstr(nd_last_error(), op) != NULL,
          "%s failed as it should, but its message \"%s\" does not name the operation "
          "(\"reduce\" and \"%s\")", what, nd_last_error(), op);
    if (out != NULL)
        t_assert_untouched(out, what);
}

/* ---------------------------------------------------------------------- */
/* Inputs                                                                 */
/* ---------------------------------------------------------------------- */

/* What fills a new buffer. */
typedef enum {
    V_SIGNED,    /* +-[1,2): a missed or extra element moves a sum by >= 1 */
    V_MIXED,     /* [-1000,1000) */
    V_NEGATIVE,  /* [-100,-1): a max that starts from 0 gives 0 */
    V_TIES,      /* -4..-1, whole: many ties, all negative */
    V_NEGINF,    /* mostly -inf, some -FLT_MAX, a few negative values */
    V_NAN,       /* negative, one element in 40 NaN */
    V_SMALL_INT  /* -3..3: every partial sum of 2^22 of them is exact */
} value_kind;

static float random_value(t_rng *r, value_kind kind)
{
    switch (kind) {
    case V_SIGNED: return t_int(r, 0, 1) ? t_float(r, 1, 2) : -t_float(r, 1, 2);
    case V_MIXED: return t_float(r, -1000, 1000);
    case V_NEGATIVE: return t_float(r, -100, -1);
    case V_TIES: return (float)t_int(r, -4, -1);
    case V_NEGINF: {
        int64_t x = t_int(r, 0, 9);
        return x < 6 ? -INFINITY : x < 8 ? -FLT_MAX : t_float(r, -10, -1);
    }
    case V_NAN: return t_int(r, 0, 39) == 0 ? NAN : t_float(r, -50, -1);
    case V_SMALL_INT: break;
    }
    return (float)t_int(r, -3, 3);
}

/* A view of a new buffer of `size` random values of `kind`. */
static nd_array make_view(t_rng *r, int64_t size, value_kind kind, int ndim,
                          const int64_t *shape, const int64_t *strides, int64_t offset)
{
    float *v = t_floats(size);
    for (int64_t i = 0; i < size; i++)
        v[i] = random_value(r, kind);
    nd_array a = t_view_of(size, v, ndim, shape, strides, offset);
    free(v);
    return a;
}

static void random_perm(t_rng *r, int n, int *p)
{
    for (int k = 0; k < n; k++)
        p[k] = k;
    for (int k = n - 1; k > 0; k--) {
        int j = (int)t_int(r, 0, k), t = p[k];
        p[k] = p[j];
        p[j] = t;
    }
}

/* Layouts of gen_view. */
enum {
    L_COMPACT,   /* a fresh row-major array */
    L_SLICED,    /* permuted, sliced with steps +-1, +-2, at an offset */
    L_BROADCAST, /* the same, some axes of stride 0 */
    L_WINDOW,    /* a compact window at an offset; size-1 axes (all axes
                    when empty) with junk strides */
    L_REVERSED,  /* like L_SLICED with every step negative */
    NLAYOUTS
};

/* A random view of `shape` over a buffer of at most about `cap` elements
 * in layout `kind`, holding values of `vk`. */
static nd_array gen_view(t_rng *r, int ndim, const int64_t *shape, int kind, int64_t cap,
                         value_kind vk)
{
    int64_t n = t_numel(ndim, shape), strides[ND_MAX_DIMS];
    if (kind == L_COMPACT) {
        row_major(ndim, shape, strides);
        return make_view(r, n, vk, ndim, shape, strides, 0);
    }
    if (kind == L_WINDOW) {
        row_major(ndim, shape, strides);
        for (int k = 0; k < ndim; k++)
            if (shape[k] == 1 || n == 0)
                strides[k] = t_int(r, -40, 40);
        int64_t pad = t_int(r, 1, 9);
        return make_view(r, pad + n + t_int(r, 0, 7), vk, ndim, shape, strides, pad);
    }
    int perm[ND_MAX_DIMS];
    int64_t b[ND_MAX_DIMS], step[ND_MAX_DIMS], bs[ND_MAX_DIMS], total = 1;
    random_perm(r, ndim, perm);
    for (int k = 0; k < ndim; k++) {
        int64_t m = t_int(r, 0, 2) == 0 ? 2 : 1, slack = t_int(r, 0, 3) == 0 ? 1 : 0;
        int64_t need = shape[k] > 0 ? (shape[k] - 1) * m + 1 : 0;
        if ((need + slack) * total > cap) {
            m = 1;
            slack = 0;
            need = shape[k];
        }
        step[k] = kind == L_REVERSED || t_int(r, 0, 2) == 0 ? -m : m;
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
        if (kind == L_BROADCAST && shape[k] > 1 && t_int(r, 0, 2) == 0)
            strides[k] = 0;
        if (shape[k] == 0 || b[k] == 0)
            continue;
        int64_t span = (shape[k] - 1) * llabs(step[k]);
        int64_t first = t_int(r, 0, b[k] - 1 - span);
        offset += (step[k] < 0 ? b[k] - 1 - first : first) * bs[k];
    }
    return make_view(r, pad + total + t_int(r, 0, 3), vk, ndim, shape, strides, offset);
}

/* A view of the view v, as slicing would make it (with nd_as_strided):
 * per axis the whole axis, the axis reversed, or part of it with a step
 * of +-1 or +-2; unless keep_axes, sometimes one position (the axis
 * goes).  Releases v. */
static nd_array sub_view(t_rng *r, nd_array v, bool keep_axes)
{
    int64_t shape[ND_MAX_DIMS], strides[ND_MAX_DIMS], offset = v.offset;
    bool empty = t_numel(v.ndim, v.shape) == 0;   /* then only offset is safe */
    int nd = 0;
    for (int k = 0; k < v.ndim; k++) {
        int64_t n = v.shape[k], st = v.strides[k];
        int64_t choice = t_int(r, 0, 5);
        if (empty || n == 0 || choice == 0) {
            shape[nd] = n;
            strides[nd++] = st;
            continue;
        }
        if (choice == 1 && !keep_axes) {   /* one position: the axis goes */
            offset += t_int(r, 0, n - 1) * st;
            continue;
        }
        if (choice <= 2) {                 /* reversed */
            offset += (n - 1) * st;
            shape[nd] = n;
            strides[nd++] = -st;
            continue;
        }
        int64_t m = t_int(r, 1, 2), step = t_int(r, 0, 1) ? m : -m;
        int64_t count = t_int(r, 1, (n - 1) / m + 1);
        int64_t span = (count - 1) * m;
        int64_t start = step > 0 ? t_int(r, 0, n - 1 - span) : t_int(r, span, n - 1);
        offset += start * st;
        shape[nd] = count;
        strides[nd++] = step * st;
    }
    nd_array w;
    nd_status s = nd_as_strided(&v, nd, shape, strides, offset, &w);
    CHECK(s == ND_OK, "test setup: nd_as_strided: %s", nd_last_error());
    nd_release(&v);
    return w;
}

/* A random list of axes for nd axes, written as a caller may write them:
 * mode 0 one axis, 1 a random subset in random order, 2 ND_ALL_AXES, 3
 * every axis in random order, 4 none (naxes 0).  Each listed axis is
 * negative half of the time; the unused entries hold junk.  Returns naxes;
 * axes must have room for ND_MAX_DIMS entries. */
static int random_axes(t_rng *r, int nd, int mode, int *axes)
{
    int n = 0;
    for (int i = 0; i < ND_MAX_DIMS; i++)   /* what ND_ALL_AXES must not read */
        axes[i] = 99 - i;
    if (mode == 2 || (mode == 0 && nd == 0))
        return ND_ALL_AXES;
    if (mode == 0)
        axes[n++] = (int)t_int(r, 0, nd - 1);
    for (int k = 0; k < nd && (mode == 1 || mode == 3); k++)
        if (mode == 3 || t_int(r, 0, 1))
            axes[n++] = k;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)t_int(r, 0, i), t = axes[i];
        axes[i] = axes[j];
        axes[j] = t;
    }
    for (int i = 0; i < n; i++)
        if (t_int(r, 0, 1))
            axes[i] -= nd;
    return n;
}

/* ---------------------------------------------------------------------- */
/* The reference                                                          */
/* ---------------------------------------------------------------------- */

/* What NumPy gives for a reduction of a. */
typedef struct {
    bool reduced[ND_MAX_DIMS];
    int ndim;                       /* the result's shape */
    int64_t shape[ND_MAX_DIMS];
    int64_t n;                      /* elements in the result */
    int64_t count;                  /* elements folded into each of them */
    double *sum;                    /* the sums, in double */
    double *abs;                    /* the sums of |x| */
    float *max;                     /* np.max: NaN once a NaN was folded */
} ref;

/* The reference for reducing a over axes[0 .. naxes-1] (valid ones), or
 * over every axis for ND_ALL_AXES. */
static ref ref_reduce(const nd_array *a, int naxes, const int *axes, bool keepdims)
{
    ref R = { .n = 1, .count = 1 };
    int nd = a->ndim;
    for (int k = 0; k < nd; k++)
        R.reduced[k] = naxes == ND_ALL_AXES;
    for (int i = 0; i < naxes; i++)
        R.reduced[axes[i] < 0 ? axes[i] + nd : axes[i]] = true;
    /* output element index = sum of index[k] * ostride[k]: row-major over
     * the kept axes, 0 on the reduced ones */
    int64_t ostride[ND_MAX_DIMS];
    for (int k = nd - 1; k >= 0; k--) {
        ostride[k] = R.reduced[k] ? 0 : R.n;
        if (R.reduced[k])
            R.count *= a->shape[k];
        else
            R.n *= a->shape[k];
    }
    for (int k = 0; k < nd; k++)
        if (!R.reduced[k] || keepdims)
            R.shape[R.ndim++] = R.reduced[k] ? 1 : a->shape[k];
    R.sum = t_alloc((size_t)R.n * sizeof(double));
    R.abs = t_alloc((size_t)R.n * sizeof(double));
    R.max = t_floats(R.n);
    bool *seen = t_alloc((size_t)R.n);
    for (int64_t o = 0; o < R.n; o++) {
        R.sum[o] = R.abs[o] = 0;
        seen[o] = false;
    }
    int64_t size, total = t_numel(nd, a->shape), idx[ND_MAX_DIMS] = { 0 };
    float *buf = t_buffer(a, &size);
    /* an odometer over a's index; off and o follow it: off = a->offset +
     * sum(idx[k] * strides[k]), o = sum(idx[k] * ostride[k]) */
    int64_t off = a->offset, o = 0;
    for (int64_t i = 0; i < total; i++) {
        CHECK(off >= 0 && off < size, "test setup: the view %s reaches outside its buffer",
              t_describe(a));
        float x = buf[off];
        R.sum[o] += x;
        R.abs[o] += fabs((double)x);
        if (!seen[o] || (!isnan(R.max[o]) && (isnan(x) || x > R.max[o])))
            R.max[o] = x;
        seen[o] = true;
        for (int k = nd - 1; k >= 0; k--) {
            if (++idx[k] < a->shape[k]) {
                off += a->strides[k];
                o += ostride[k];
                break;
            }
            idx[k] = 0;   /* back to index 0 on axis k, carry into k - 1 */
            off -= (a->shape[k] - 1) * a->strides[k];
            o -= (a->shape[k] - 1) * ostride[k];
        }
    }
    free(buf);
    free(seen);
    return R;
}

static void ref_free(ref *R)
{
    free(R->sum);
    free(R->abs);
    free(R->max);
}

/* How far a float sum of output o may be from R->sum[o]: any order of
 * additions, or the long-sum bound when `accurate`. */
static double sum_tol(const ref *R, int64_t o, bool accurate)
{
    if (!accurate)
        return (double)(R->count + 1) * U_FLOAT * R->abs[o];
    double lg = R->count > 1 ? ceil(log2((double)R->count)) : 0;
    return (lg + SUM_ACCURACY) * U_FLOAT * R->abs[o];
}

/* out's shape and values must be the reference's (a max exactly, a sum
 * within sum_tol; NaN and inf exactly). */
static void expect_values(nd_reduce_op op, const nd_array *out, const ref *R, bool accurate,
                          const char *what, const char *hint)
{
    t_assert_shape(out, R->ndim, R->shape, what);
    float *got = t_gather(out);
    for (int64_t o = 0; o < R->n; o++) {
        double g = got[o], want = op == ND_SUM ? R->sum[o] : R->max[o], tol = 0;
        bool ok;
        if (isnan(want))
            ok = isnan(g);
        else if (isinf(want) || op == ND_MAX)
            ok = g == want;
        else
            ok = fabs(g - want) <= (tol = sum_tol(R, o, accurate));
        if (ok)
            continue;
        int64_t idx[ND_MAX_DIMS];
        char extra[200] = "";
        t_unravel(o, R->ndim, R->shape, idx);
        if (op == ND_SUM && tol > 0)
            snprintf(extra, sizeof extra, " (a double sum of %" PRId64 " elements; off by "
                     "%.3g, more than the %.3g %s)", R->count, fabs(g - want), tol,
                     accurate ? "pairwise summation allows" : "any order of float "
                     "additions allows");
        free(got);
        ck_abort_msg("%s: the %s at index %s is %.9g, expected %.9g%s. Hint: %s", what,
                     op_name(op), t_index_str(R->ndim, idx), g, want, extra, hint);
    }
    free(got);
}

/* out must be a NEW compact array on T_DEV, then expect_values. */
static void expect_result(nd_reduce_op op, const nd_array *out, const nd_array *a,
                          const ref *R, const char *what, const char *hint)
{
    t_assert_shape(out, R->ndim, R->shape, what);
    CHECK(out->buf != NULL && out->buf != a->buf, "%s: the result must be a new array, not "
          "a view of a's buffer", what);
    CHECK(out->buf->device == T_DEV, "%s: the result lives on %s, a on %s", what,
          nd_device_name(out->buf->device), nd_device_name(T_DEV));
    CHECK(out->buf->refcount == 1, "%s: the new buffer has refcount %" PRId64 ", expected 1",
          what, out->buf->refcount);
    CHECK(out->offset == 0 && out->buf->nbytes == (size_t)R->n * sizeof(float), "%s: the "
          "result %s has a %zu-byte buffer, expected offset 0 and exactly %" PRId64
          " floats", what, t_describe(out), out->buf->nbytes, R->n);
    for (int64_t k = out->ndim - 1, s = 1; k >= 0 && R->n > 0; s *= out->shape[k--])
        CHECK(out->shape[k] == 1 || out->strides[k] == s, "%s: the result %s is not "
              "compact: stride %" PRId64 " on axis %d, expected %" PRId64, what,
              t_describe(out), out->strides[k], (int)k, s);
    expect_values(op, out, R, false, what, hint);
}

/* Run nd_reduce and require NumPy's answer: a new compact array with the
 * reference's shape and values or, for a max over a size-0 axis,
 * ND_ERR_SHAPE with *out untouched.  Either way a, its buffer and its
 * refcount stay as they were. */
static void check_reduce(nd_reduce_op op, const nd_array *a, int naxes, const int *axes,
                         bool keepdims, const char *what, const char *hint)
{
    ref R = ref_reduce(a, naxes, axes, keepdims);
    int64_t size, refs = a->buf->refcount;
    float *before = t_buffer(a, &size);
    nd_array copy = *a, out;
    if (op == ND_MAX && R.count == 0) {
        t_poison(&out);
        expect_fail(nd_reduce(op, a, naxes, axes, keepdims, &out), ND_ERR_SHAPE, "max", what,
                    &out, "a max over a size-0 axis is ND_ERR_SHAPE, even when the result "
                    "has no elements");
    } else {
        nd_status s = nd_reduce(op, a, naxes, axes, keepdims, &out);
        CHECK(s == ND_OK, "%s returned %s: %s", what, nd_status_name(s), nd_last_error());
        expect_result(op, &out, a, &R, what, hint);
        nd_release(&out);
    }
    float *after = t_buffer(a, NULL);
    char in_buf[1200];
    snprintf(in_buf, sizeof in_buf, "%s: the input's buffer", what);
    t_assert_floats(after, before, 1, &size, in_buf, "reduce reads its input, never writes it");
    CHECK(t_same_struct(a, &copy) && a->buf->refcount == refs, "%s: nd_reduce changed its "
          "input view, or its buffer's refcount from %" PRId64 " to %" PRId64 " (release "
          "the views you make)", what, refs, a->buf->refcount);
    free(before);
    free(after);
    ref_free(&R);
}

/* The call every test makes first: a valid reduction that must succeed. */
static void first_call(nd_reduce_op op)
{
    int64_t shape[2] = { 2, 3 };
    nd_array a = t_arange(2, shape), out;
    T_OK(nd_reduce(op, &a, 1, (int[]){ -1 }, false, &out));
    nd_release(&out);
    nd_release(&a);
}

/* ---------------------------------------------------------------------- */
/* Axes                                                                   */
/* ---------------------------------------------------------------------- */

/* The next permutation of p[0..n-1] in lexicographic order; false after
 * the last. */
static bool next_perm(int n, int *p)
{
    int i = n - 2;
    while (i >= 0 && p[i] >= p[i + 1])
        i--;
    if (i < 0)
        return false;
    int j = n - 1;
    while (p[j] <= p[i])
        j--;
    int t = p[i];
    p[i] = p[j];
    p[j] = t;
    for (int lo = i + 1, hi = n - 1; lo < hi; lo++, hi--) {
        t = p[lo];
        p[lo] = p[hi];
        p[hi] = t;
    }
    return true;
}

/* Every subset of the 4 axes of views of these shapes, in every order and
 * every mix of signs, with and without keepdims. */
static void subsets_4d(nd_reduce_op op, uint64_t seed, const char *hint)
{
    static const int64_t shapes[][4] = {
        { 2, 3, 4, 5 }, { 3, 1, 4, 2 }, { 1, 1, 1, 1 }, { 4, 2, 1, 6 }, { 2, 0, 3, 2 },
        { 5, 3, 2, 1 }, { 1, 7, 1, 3 }, { 2, 2, 2, 2 }, { 3, 4, 0, 1 }, { 6, 5, 4, 3 },
        { 17, 1, 2, 3 }, { 2, 3, 1, 33 },
    };
    static const value_kind max_values[] = { V_NEGATIVE, V_TIES, V_NAN, V_NEGINF, V_MIXED };
    t_rng r = t_rng_new(seed);
    int nshapes = (int)(sizeof shapes / sizeof shapes[0]);
    for (int c = 0; c < 2 * nshapes; c++) {
        const int64_t *shape = shapes[c / 2];
        value_kind vk = op == ND_SUM ? V_SIGNED : max_values[c % 5];
        nd_array a = gen_view(&r, 4, shape, c % NLAYOUTS, 1 << 12, vk);
        if (c % 3 == 2)
            a = sub_view(&r, a, true);
        for (int mask = 0; mask < 16; mask++) {
            int set[4] = { 0 }, k = 0;
            for (int b = 0; b < 4; b++)
                if (mask >> b & 1)
                    set[k++] = b;
            for (int keep = 0; keep <= 1; keep++) {
                ref R = ref_reduce(&a, k, set, keep);
                bool fails = op == ND_MAX && R.count == 0;
                char what[1200], desc[1000];
                /* the first listing in full; then every order and sign */
                snprintf(what, sizeof what, "case %d: %s", c, describe_case(desc, sizeof desc,
                         op, &a, k, set, keep));
                check_reduce(op, &a, k, set, keep, what, hint);
                int order[4];
                memcpy(order, set, sizeof order);
                do {
                    for (int signs = 0; signs < 1 << k; signs++) {
                        int axes[4];
                        for (int i = 0; i < k; i++)
                            axes[i] = signs >> i & 1 ? order[i] - 4 : order[i];
                        nd_array out;
                        t_poison(&out);
                        nd_status s = nd_reduce(op, &a, k, axes, keep, &out);
                        snprintf(what, sizeof what, "case %d: %s", c, describe_case(desc,
                                 sizeof desc, op, &a, k, axes, keep));
                        if (fails) {
                            expect_fail(s, ND_ERR_SHAPE, "max", what, &out, hint);
                            continue;
                        }
                        CHECK(s == ND_OK, "%s returned %s: %s", what, nd_status_name(s),
                              nd_last_error());
                        expect_values(op, &out, &R, false, what, hint);
                        nd_release(&out);
                    }
                } while (next_perm(k, order));
                if (mask == 15) {   /* every axis, also as ND_ALL_AXES */
                    snprintf(what, sizeof what, "case %d: %s", c, describe_case(desc,
                             sizeof desc, op, &a, ND_ALL_AXES, NULL, keep));
                    check_reduce(op, &a, ND_ALL_AXES, NULL, keep, what, hint);
                }
                if (mask == 0) {    /* no axis: naxes 0 and axes NULL */
                    snprintf(what, sizeof what, "case %d: %s", c, describe_case(desc,
                             sizeof desc, op, &a, 0, NULL, keep));
                    check_reduce(op, &a, 0, NULL, keep, what, hint);
                }
                ref_free(&R);
            }
        }
        nd_release(&a);
    }
}

#define SUBSETS_SUM_HINT "mark the listed axes (a negative one counts from the end; their " \
    "order does not matter); output element i folds every element whose index, with the " \
    "reduced axes left out, is i; the kept axes stay in a's order"
#define SUBSETS_MAX_HINT "reduce the axes as for the sum; a max must start from the " \
    "block's first element: a block of negative numbers has a negative max"

START_TEST(reduce_sum_every_axis_subset)
{
    first_call(ND_SUM);
    subsets_4d(ND_SUM, 40401, SUBSETS_SUM_HINT);
}
END_TEST

START_TEST(reduce_max_every_axis_subset)
{
    first_call(ND_MAX);
    subsets_4d(ND_MAX, 40501, SUBSETS_MAX_HINT);
}
END_TEST

/* `cases` random reductions: 0 to 8 axes, sizes 0 to 4 (every sixth case
 * up to 40, 2000 elements at most), every layout, views of views, random
 * axes, keepdims on and off. */
static void random_cases(nd_reduce_op op, uint64_t seed, int cases, const char *hint)
{
    static const value_kind max_values[] = { V_NEGATIVE, V_MIXED, V_TIES, V_NEGINF, V_NAN };
    t_rng r = t_rng_new(seed);
    for (int c = 0; c < cases; c++) {
        int nd = c % (ND_MAX_DIMS + 1);
        bool big = c % 6 == 5;
        int64_t shape[ND_MAX_DIMS];
        t_random_shape(&r, nd, big ? 40 : 4, c % 5 == 0, big ? 2000 : 400, shape);
        value_kind vk = op == ND_SUM ? V_SIGNED : max_values[c % 5];
        nd_array a = gen_view(&r, nd, shape, (int)t_int(&r, 0, NLAYOUTS - 1), 1 << 13, vk);
        for (int d = (int)t_int(&r, 0, 2); d > 0; d--)
            a = sub_view(&r, a, false);
        int axes[ND_MAX_DIMS];
        int naxes = random_axes(&r, a.ndim, (int)t_int(&r, 0, 4), axes);
        bool keepdims = t_int(&r, 0, 1);
        char what[1200], desc[1000];
        snprintf(what, sizeof what, "case %d: %s", c,
                 describe_case(desc, sizeof desc, op, &a, naxes, axes, keepdims));
        check_reduce(op, &a, naxes, axes, keepdims, what, hint);
        nd_release(&a);
    }
}

#define RANDOM_SUM_HINT "read a through its own offset and signed strides (0 on a " \
    "broadcast axis) for up to 8 axes; fold each block completely, whatever its layout; " \
    "the sum of an empty block is 0"
#define RANDOM_MAX_HINT "a max must start from the block's first element: an array of " \
    "negative numbers has a negative max, and an all -inf block a max of -inf; a NaN in a " \
    "block makes its max NaN"

START_TEST(reduce_sum_random_8d)
{
    first_call(ND_SUM);
    random_cases(ND_SUM, 40601, 2500, RANDOM_SUM_HINT);
}
END_TEST

START_TEST(reduce_max_random_8d)
{
    first_call(ND_MAX);
    random_cases(ND_MAX, 40701, 2500, RANDOM_MAX_HINT);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Properties                                                             */
/* ---------------------------------------------------------------------- */

#define KEEPDIMS_HINT "with keepdims the result has a's ndim, and each reduced axis stays IN " \
    "ITS PLACE with size 1 (not moved to the end); the values are those of the plain " \
    "reduction"

START_TEST(reduce_keepdims_in_place)
{
    first_call(ND_SUM);
    t_rng r = t_rng_new(40801);
    for (int c = 0; c < 1500; c++) {
        nd_reduce_op op = c % 2 ? ND_MAX : ND_SUM;
        int nd = c % (ND_MAX_DIMS + 1);
        int64_t shape[ND_MAX_DIMS];
        t_random_shape(&r, nd, 5, false, 500, shape);
        nd_array a = gen_view(&r, nd, shape, (int)t_int(&r, 0, NLAYOUTS - 1), 1 << 13,
                              op == ND_SUM ? V_SIGNED : V_NAN);
        int axes[ND_MAX_DIMS];
        int naxes = random_axes(&r, nd, (int)t_int(&r, 0, 3), axes);
        ref R = ref_reduce(&a, naxes, axes, true);
        nd_array flat, kept;
        char what[1200], desc[1000];
        describe_case(desc, sizeof desc, op, &a, naxes, axes, true);
        snprintf(what, sizeof what, "case %d: %s", c, desc);
        T_OK(nd_reduce(op, &a, naxes, axes, false, &flat));
        nd_status s = nd_reduce(op, &a, naxes, axes, true, &kept);
        CHECK(s == ND_OK, "%s returned %s: %s", what, nd_status_name(s), nd_last_error());
        /* keepdims: a's shape with a 1 in place of each reduced axis */
        int64_t want[ND_MAX_DIMS];
        for (int k = 0; k < nd; k++)
            want[k] = R.reduced[k] ? 1 : a.shape[k];
        t_assert_shape(&kept, nd, want, what);
        expect_result(op, &kept, &a, &R, what, KEEPDIMS_HINT);
        /* the same values as without keepdims, in the same order */
        int64_t n = t_numel(kept.ndim, kept.shape);
        CHECK(t_numel(flat.ndim, flat.shape) == n, "%s: %" PRId64 " elements with keepdims, "
              "%" PRId64 " without", what, n, t_numel(flat.ndim, flat.shape));
        float *x = t_gather(&kept), *y = t_gather(&flat);
        for (int64_t i = 0; i < n; i++) {
            bool same = isnan(x[i]) ? isnan(y[i])
                      : op == ND_MAX ? x[i] == y[i]
                      : fabs((double)x[i] - y[i]) <= 2 * sum_tol(&R, i, false);
            CHECK(same, "%s: element %" PRId64 " (row-major) is %.9g with keepdims and %.9g "
                  "without. Hint: %s", what, i, (double)x[i], (double)y[i], KEEPDIMS_HINT);
        }
        free(x);
        free(y);
        ref_free(&R);
        nd_release(&kept);
        nd_release(&flat);
        nd_release(&a);
    }
}
END_TEST

/* Out's axis numbers for a's axes b[0..nb-1] once the axes marked in
 * `gone` are removed. */
static void renumber(int nb, const int *b, const bool *gone, int *dst)
{
    for (int i = 0; i < nb; i++) {
        dst[i] = b[i];
        for (int k = 0; k < b[i]; k++)
            dst[i] -= gone[k];
    }
}

#define COMPOSE_HINT "each reduction is independent of how its input was made: a result " \
    "of nd_reduce is an input like any other, and reducing A then B must give what " \
    "reducing A and B together gives"

START_TEST(reduce_composition)
{
    first_call(ND_SUM);
    t_rng r = t_rng_new(40901);
    for (int c = 0; c < 600; c++) {
        /* sum over A, then over B (renumbered, or as is with keepdims),
         * against the sum over A and B at once */
        int nd = 2 + c % 5;
        bool keep = c % 2;
        int64_t shape[ND_MAX_DIMS];
        t_random_shape(&r, nd, 5, c % 7 == 0, 600, shape);
        nd_array a = gen_view(&r, nd, shape, (int)t_int(&r, 0, NLAYOUTS - 1), 1 << 13,
                              V_SIGNED);
        int perm[ND_MAX_DIMS], A[ND_MAX_DIMS], B[ND_MAX_DIMS], AB[ND_MAX_DIMS], B2[ND_MAX_DIMS];
        random_perm(&r, nd, perm);
        int na = (int)t_int(&r, 1, nd - 1), nb = (int)t_int(&r, 1, nd - na);
        bool gone[ND_MAX_DIMS] = { false };
        for (int i = 0; i < na; i++) {
            A[i] = AB[i] = perm[i];
            gone[perm[i]] = true;
        }
        for (int i = 0; i < nb; i++)
            B[i] = AB[na + i] = perm[na + i];
        if (keep)
            memcpy(B2, B, sizeof B2);
        else
            renumber(nb, B, gone, B2);
        nd_array s1, s2, s12;
        char what[1400], desc[1000], la[100], lb[100];
        snprintf(what, sizeof what, "case %d: the sum over axes %s, then over axes %s of that "
                 "%s, against %s", c, axes_text(na, A, la, sizeof la),
                 axes_text(nb, B2, lb, sizeof lb), keep ? "(keepdims both times)" : "result",
                 describe_case(desc, sizeof desc, ND_SUM, &a, na + nb, AB, keep));
        T_OK(nd_reduce(ND_SUM, &a, na, A, keep, &s1));
        nd_status s = nd_reduce(ND_SUM, &s1, nb, B2, keep, &s2);
        CHECK(s == ND_OK, "%s: the second sum returned %s: %s", what, nd_status_name(s),
              nd_last_error());
        T_OK(nd_reduce(ND_SUM, &a, na + nb, AB, keep, &s12));
        ref R = ref_reduce(&a, na + nb, AB, keep);
        expect_result(ND_SUM, &s12, &a, &R, what, COMPOSE_HINT);
        t_assert_shape(&s2, R.ndim, R.shape, what);
        /* Each of the two ways is within (r+1) u sum|x| of the exact sum;
         * doing A first, then B, adds at most (rA+1 + rB+1) u sum|x|. */
        int64_t ra = 1;
        for (int i = 0; i < na; i++)
            ra *= a.shape[A[i]];
        float *x = t_gather(&s2), *y = t_gather(&s12);
        for (int64_t o = 0; o < R.n; o++) {
            double rb = ra > 0 ? (double)R.count / (double)ra : 0;
            double tol = ((double)R.count + (double)ra + rb + 4) * U_FLOAT * R.abs[o];
            CHECK(fabs((double)x[o] - y[o]) <= tol, "%s: output %" PRId64 " (row-major) is "
                  "%.9g in two steps and %.9g in one (tolerance %.3g). Hint: %s", what, o,
                  (double)x[o], (double)y[o], tol, COMPOSE_HINT);
        }
        free(x);
        free(y);
        ref_free(&R);
        nd_release(&s12);
        nd_release(&s2);
        nd_release(&s1);
        nd_release(&a);
    }
    for (int c = 0; c < 600; c++) {
        /* the max over everything is the max of the maxima over axis 0,
         * and the max over A then B the max over A and B: exactly */
        int nd = 1 + c % ND_MAX_DIMS;
        int64_t shape[ND_MAX_DIMS];
        t_random_shape(&r, nd, 4, false, 500, shape);
        static const value_kind kinds[] = { V_NEGATIVE, V_NAN, V_NEGINF, V_TIES };
        nd_array a = gen_view(&r, nd, shape, (int)t_int(&r, 0, NLAYOUTS - 1), 1 << 13,
                              kinds[c % 4]);
        nd_array m0, m, all;
        char what[1200];
        snprintf(what, sizeof what, "case %d: the max over axis 0, then over every axis, of %s, "
                 "against the max over every axis", c, t_describe(&a));
        T_OK(nd_reduce(ND_MAX, &a, 1, (int[]){ 0 }, c % 3 == 0, &m0));
        nd_status s = nd_reduce(ND_MAX, &m0, ND_ALL_AXES, NULL, false, &m);
        CHECK(s == ND_OK, "%s: returned %s: %s", what, nd_status_name(s), nd_last_error());
        T_OK(nd_reduce(ND_MAX, &a, ND_ALL_AXES, NULL, false, &all));
        ref R = ref_reduce(&a, ND_ALL_AXES, NULL, false);
        expect_values(ND_MAX, &all, &R, false, what, COMPOSE_HINT);
        expect_values(ND_MAX, &m, &R, false, what, COMPOSE_HINT);
        ref_free(&R);
        nd_release(&all);
        nd_release(&m);
        nd_release(&m0);
        if (nd >= 2) {
            int axes[ND_MAX_DIMS];
            random_perm(&r, nd, axes);
            int na = (int)t_int(&r, 1, nd - 1);
            bool gone[ND_MAX_DIMS] = { false };
            for (int i = 0; i < na; i++)
                gone[axes[i]] = true;
            int rest[ND_MAX_DIMS];
            renumber(nd - na, axes + na, gone, rest);
            char la[100], lb[100];
            snprintf(what, sizeof what, "case %d: the max over axes %s, then over axes %s of "
                     "that result, of %s", c, axes_text(na, axes, la, sizeof la),
                     axes_text(nd - na, rest, lb, sizeof lb), t_describe(&a));
            T_OK(nd_reduce(ND_MAX, &a, na, axes, false, &m0));
            s = nd_reduce(ND_MAX, &m0, nd - na, rest, false, &m);
            CHECK(s == ND_OK, "%s: returned %s: %s", what, nd_status_name(s), nd_last_error());
            R = ref_reduce(&a, nd, axes, false);
            expect_values(ND_MAX, &m, &R, false, what, COMPOSE_HINT);
            ref_free(&R);
            nd_release(&m);
            nd_release(&m0);
        }
        nd_release(&a);
    }
}
END_TEST

#define COPY_HINT "naxes 0 reduces no axis: the result is a compact copy of a, same shape " \
    "and values, in a NEW buffer (keepdims changes nothing); with ND_ALL_AXES never read " \
    "the axes pointer"

START_TEST(reduce_no_axes_copy)
{
    first_call(ND_SUM);
    static const float specials[] = { NAN, INFINITY, -INFINITY, -0.0f, 1e-40f, -1e30f,
                                      1e30f, 3.5f };
    t_rng r = t_rng_new(41001);
    for (int c = 0; c < 900; c++) {
        int nd = c % (ND_MAX_DIMS + 1);
        int64_t shape[ND_MAX_DIMS];
        t_random_shape(&r, nd, 4, c % 6 == 0, 600, shape);
        nd_array a = gen_view(&r, nd, shape, (int)t_int(&r, 0, NLAYOUTS - 1), 1 << 13,
                              V_MIXED);
        if (c % 2)
            a = sub_view(&r, a, false);
        /* special values at some places of the buffer */
        int64_t size;
        float *buf = t_buffer(&a, &size);
        for (int i = 0; i < 4 && size > 0; i++)
            buf[t_int(&r, 0, size - 1)] = specials[t_int(&r, 0, 7)];
        nd_array b = t_view_of(size, buf, a.ndim, a.shape, a.strides, a.offset);
        free(buf);
        nd_release(&a);
        float *want = t_gather(&b);
        for (int op = ND_SUM; op <= ND_MAX; op++) {
            int dummy[1] = { 0 };
            const int *axes = c % 3 == 0 ? NULL : dummy;
            bool keep = t_int(&r, 0, 1);
            char what[1200], desc[1000];
            snprintf(what, sizeof what, "case %d: %s", c, describe_case(desc, sizeof desc,
                     (nd_reduce_op)op, &b, 0, axes, keep));
            nd_array out;
            nd_status s = nd_reduce((nd_reduce_op)op, &b, 0, axes, keep, &out);
            CHECK(s == ND_OK, "%s returned %s: %s", what, nd_status_name(s), nd_last_error());
            ref R = ref_reduce(&b, 0, NULL, keep);
            expect_result((nd_reduce_op)op, &out, &b, &R, what, COPY_HINT);
            t_assert_values(&out, want, what, COPY_HINT);
            ref_free(&R);
            nd_release(&out);
        }
        free(want);
        /* ND_ALL_AXES with an axes array full of junk: ignored */
        int junk[ND_MAX_DIMS + 1];
        for (int i = 0; i <= ND_MAX_DIMS; i++)
            junk[i] = 99 - i;
        for (int op = ND_SUM; op <= ND_MAX; op++) {
            char what[1200];
            snprintf(what, sizeof what, "case %d: the %s over ND_ALL_AXES of %s, with axes "
                     "pointing at junk (99, 98, ...)", c, op_name((nd_reduce_op)op),
                     t_describe(&b));
            check_reduce((nd_reduce_op)op, &b, ND_ALL_AXES, junk, c % 2, what, COPY_HINT);
        }
        nd_release(&b);
    }
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Layouts                                                                */
/* ---------------------------------------------------------------------- */

#define BROADCAST_HINT "a stride-0 axis shows one element again and again: a sum over it " \
    "adds that element once per position (count x value), a max sees it every time; step " \
    "by the stride, even when it is 0"

START_TEST(reduce_broadcast_views)
{
    first_call(ND_SUM);
    /* one element, -1.25, broadcast to shapes of 1..8 axes: the sum over
     * any axes is (their sizes multiplied) x -1.25, exactly */
    t_rng r = t_rng_new(41101);
    for (int c = 0; c < 300; c++) {
        int nd = 1 + c % ND_MAX_DIMS;
        int64_t shape[ND_MAX_DIMS], zeros[ND_MAX_DIMS] = { 0 };
        t_random_shape(&r, nd, c % 4 == 3 ? 300 : 7, false, 1 << 15, shape);
        float v[3] = { 9, -1.25f, 9 };
        nd_array a = t_view_of(3, v, nd, shape, zeros, 1);
        int axes[ND_MAX_DIMS];
        int naxes = random_axes(&r, nd, (int)t_int(&r, 0, 3), axes);
        bool keep = t_int(&r, 0, 1);
        ref R = ref_reduce(&a, naxes, axes, keep);
        for (int op = ND_SUM; op <= ND_MAX; op++) {
            nd_array out;
            char what[1200], desc[1000];
            snprintf(what, sizeof what, "case %d: %s (every element is -1.25: the sum is "
                     "%" PRId64 " x -1.25)", c, describe_case(desc, sizeof desc,
                     (nd_reduce_op)op, &a, naxes, axes, keep), R.count);
            nd_status s = nd_reduce((nd_reduce_op)op, &a, naxes, axes, keep, &out);
            CHECK(s == ND_OK, "%s returned %s: %s", what, nd_status_name(s), nd_last_error());
            float *want = t_floats(R.n);
            for (int64_t o = 0; o < R.n; o++)
                want[o] = op == ND_SUM ? (float)((double)R.count * -1.25) : -1.25f;
            t_assert_shape(&out, R.ndim, R.shape, what);
            t_assert_values(&out, want, what, BROADCAST_HINT);
            free(want);
            nd_release(&out);
        }
        ref_free(&R);
        nd_release(&a);
    }
    /* a row (stride 0 on the outer axis) and a column (stride 0 on the
     * inner axis) broadcast to (m, k), at an offset, forwards and backwards */
    for (int c = 0; c < 200; c++) {
        int64_t m = t_int(&r, 1, 70), k = t_int(&r, 1, 70), size = k + 5;
        int64_t st = t_int(&r, 0, 1) ? 1 : -1, off = st > 0 ? 2 : 2 + k - 1;
        int64_t shape[2] = { m, k }, row[2] = { 0, st }, col[2] = { st, 0 };
        float *v = t_floats(size);
        for (int64_t i = 0; i < size; i++)
            v[i] = random_value(&r, c % 2 ? V_SIGNED : V_NEGATIVE);
        int64_t csize = m + 5, coff = st > 0 ? 2 : 2 + m - 1;
        nd_array ar = t_view_of(size, v, 2, shape, row, off);
        free(v);
        v = t_floats(csize);
        for (int64_t i = 0; i < csize; i++)
            v[i] = random_value(&r, c % 2 ? V_SIGNED : V_NEGATIVE);
        nd_array ac = t_view_of(csize, v, 2, shape, col, coff);
        free(v);
        for (int which = 0; which < 2; which++) {
            const nd_array *a = which ? &ac : &ar;
            for (int op = ND_SUM; op <= ND_MAX; op++) {
                for (int naxes = 1; naxes <= 3; naxes++) {
                    int axes[2] = { naxes == 2 ? -1 : 0, 1 };
                    int n = naxes == 3 ? ND_ALL_AXES : 1;
                    char what[1200], desc[1000];
                    snprintf(what, sizeof what, "%s broadcast, case %d: %s",
                             which ? "a column" : "a row", c, describe_case(desc, sizeof desc,
                             (nd_reduce_op)op, a, n, axes, c % 3 == 0));
                    check_reduce((nd_reduce_op)op, a, n, axes, c % 3 == 0, what,
                                 BROADCAST_HINT);
                }
            }
        }
        nd_release(&ar);
        nd_release(&ac);
    }
    /* random views with stride-0 axes, and views of them */
    for (int c = 0; c < 600; c++) {
        int nd = 1 + c % ND_MAX_DIMS;
        int64_t shape[ND_MAX_DIMS];
        t_random_shape(&r, nd, 5, false, 600, shape);
        nd_reduce_op op = c % 2 ? ND_MAX : ND_SUM;
        nd_array a = gen_view(&r, nd, shape, L_BROADCAST, 1 << 13,
                              op == ND_SUM ? V_SIGNED : V_NEGATIVE);
        if (c % 3 == 0)
            a = sub_view(&r, a, false);
        int axes[ND_MAX_DIMS];
        int naxes = random_axes(&r, a.ndim, (int)t_int(&r, 0, 3), axes);
        char what[1200], desc[1000];
        snprintf(what, sizeof what, "case %d: %s", c, describe_case(desc, sizeof desc, op, &a,
                 naxes, axes, c % 4 == 0));
        check_reduce(op, &a, naxes, axes, c % 4 == 0, what, BROADCAST_HINT);
        nd_release(&a);
    }
}
END_TEST

#define STRIDES_HINT "a view may start anywhere in its buffer and walk backwards: begin at " \
    "data + offset (the INPUT view's offset), step by the signed strides, and ignore the " \
    "stride of a size-1 axis"

START_TEST(reduce_negative_strides_offsets)
{
    first_call(ND_MAX);
    t_rng r = t_rng_new(41201);
    for (int c = 0; c < 1600; c++) {
        nd_reduce_op op = c % 2 ? ND_MAX : ND_SUM;
        int nd = c % (ND_MAX_DIMS + 1);
        int64_t shape[ND_MAX_DIMS];
        t_random_shape(&r, nd, c % 5 == 4 ? 30 : 5, false, 900, shape);
        int kind = c % 3 == 0 ? L_WINDOW : L_REVERSED;
        nd_array a = gen_view(&r, nd, shape, kind, 1 << 13, op == ND_SUM ? V_SIGNED :
                              (c / 2) % 2 ? V_NEGATIVE : V_MIXED);
        for (int d = c % 3; d > 0; d--)
            a = sub_view(&r, a, d == 2);
        int axes[ND_MAX_DIMS];
        int naxes = random_axes(&r, a.ndim, (int)t_int(&r, 0, 4), axes);
        char what[1200], desc[1000];
        snprintf(what, sizeof what, "case %d: %s", c, describe_case(desc, sizeof desc, op, &a,
                 naxes, axes, c % 4 == 1));
        check_reduce(op, &a, naxes, axes, c % 4 == 1, what, STRIDES_HINT);
        nd_release(&a);
    }
    /* two windows of one buffer that differ only by their offset */
    float v[64];
    for (int i = 0; i < 64; i++)
        v[i] = (float)(i * i % 37) - 40.0f;
    int64_t shape[2] = { 3, 5 }, st[2] = { 5, 1 }, rev[2] = { -5, -1 };
    for (int64_t off = 0; off <= 49; off += 7) {
        nd_array w = t_view_of(64, v, 2, shape, st, off);
        nd_array b = t_view_of(64, v, 2, shape, rev, off + 14);
        for (int op = ND_SUM; op <= ND_MAX; op++) {
            for (int ax = -1; ax <= 1; ax++) {
                int n = ax == 1 ? ND_ALL_AXES : 1;
                char what[1200], desc[1000];
                snprintf(what, sizeof what, "a (3,5) window: %s", describe_case(desc,
                         sizeof desc, (nd_reduce_op)op, &w, n, &ax, false));
                check_reduce((nd_reduce_op)op, &w, n, &ax, false, what, STRIDES_HINT);
                snprintf(what, sizeof what, "a reversed (3,5) window: %s", describe_case(desc,
                         sizeof desc, (nd_reduce_op)op, &b, n, &ax, true));
                check_reduce((nd_reduce_op)op, &b, n, &ax, true, what, STRIDES_HINT);
            }
        }
        nd_release(&w);
        nd_release(&b);
    }
}
END_TEST

#define EMPTY_HINT "a sum over a size-0 axis is 0 for each output (the output may itself " \
    "have no elements); a max over a size-0 axis is ND_ERR_SHAPE even when the result is " \
    "empty; a size-1 axis reduces to its one element"

START_TEST(reduce_empty_and_unit_axes)
{
    first_call(ND_SUM);
    t_rng r = t_rng_new(41301);
    /* every 3-D shape with sizes 0..3, every subset of axes, both ops */
    for (int c = 0; c < 64; c++) {
        int64_t shape[3] = { c % 4, c / 4 % 4, c / 16 };
        static const int kinds[] = { L_WINDOW, L_REVERSED, L_SLICED, L_BROADCAST };
        for (int op = ND_SUM; op <= ND_MAX; op++) {
            nd_array a = gen_view(&r, 3, shape, kinds[(c + op) % 4], 1 << 10,
                                  op == ND_SUM ? V_SIGNED : V_NEGATIVE);
            for (int mask = 0; mask < 8; mask++) {
                int axes[3], n = 0;
                for (int b = 0; b < 3; b++)
                    if (mask >> b & 1)
                        axes[n++] = t_int(&r, 0, 1) ? b : b - 3;
                for (int keep = 0; keep <= 1; keep++) {
                    char what[1200], desc[1000];
                    snprintf(what, sizeof what, "%s", describe_case(desc, sizeof desc,
                             (nd_reduce_op)op, &a, n, axes, keep));
                    check_reduce((nd_reduce_op)op, &a, n, axes, keep, what, EMPTY_HINT);
                }
            }
            char what[1200], desc[1000];
            snprintf(what, sizeof what, "%s", describe_case(desc, sizeof desc,
                     (nd_reduce_op)op, &a, ND_ALL_AXES, NULL, c % 2));
            check_reduce((nd_reduce_op)op, &a, ND_ALL_AXES, NULL, c % 2, what, EMPTY_HINT);
            nd_release(&a);
        }
    }
    /* mostly size-1 axes, up to 8, with junk strides; one or two zeros */
    for (int c = 0; c < 800; c++) {
        int nd = 1 + c % ND_MAX_DIMS;
        int64_t shape[ND_MAX_DIMS];
        for (int k = 0; k < nd; k++)
            shape[k] = t_int(&r, 0, 3) ? 1 : t_int(&r, 2, 6);
        if (c % 4 == 0)
            shape[t_int(&r, 0, nd - 1)] = 0;
        nd_reduce_op op = c % 2 ? ND_MAX : ND_SUM;
        nd_array a = gen_view(&r, nd, shape, c % 3 ? L_WINDOW : L_REVERSED, 1 << 12,
                              op == ND_SUM ? V_SIGNED : V_NEGATIVE);
        int axes[ND_MAX_DIMS];
        int naxes = random_axes(&r, nd, (int)t_int(&r, 0, 3), axes);
        char what[1200], desc[1000];
        snprintf(what, sizeof what, "case %d: %s", c, describe_case(desc, sizeof desc, op, &a,
                 naxes, axes, c % 3 == 1));
        check_reduce(op, &a, naxes, axes, c % 3 == 1, what, EMPTY_HINT);
        nd_release(&a);
    }
}
END_TEST

/* ---------------------------------------------------------------------- */
/* The max                                                                */
/* ---------------------------------------------------------------------- */

#define NEGATIVE_HINT "a max must start from the first element: an array of negative " \
    "numbers has a negative max, an all -inf block has max -inf (not -FLT_MAX); fold " \
    "EVERY partial max, the tail's too, into the result"

START_TEST(reduce_max_negative_and_inf)
{
    first_call(ND_MAX);
    /* Runs of every length 1..70 and around 256 and 512, contiguous,
     * strided, reversed: all negative with the max at each position in
     * turn (first lengths) or at a random one; all -inf; -inf with one
     * -FLT_MAX. */
    t_rng r = t_rng_new(41401);
    static const int64_t steps[] = { 1, 2, -1, -3 };
    for (int64_t n = 1; n <= 520; n = n < 70 ? n + 1 : n < 250 ? 250 : n < 262 ? n + 1 :
                                      n < 508 ? 508 : n + 1) {
        int64_t size = 3 * n + 4;
        float *v = t_floats(size);
        for (int64_t at = 0; at < n; at = n <= 40 ? at + 1 : at + 1 + t_int(&r, 0, n / 4)) {
            int64_t step = steps[(n + at) % 4];
            int64_t off = step > 0 ? 2 : 2 + (n - 1) * -step;
            for (int64_t i = 0; i < size; i++)
                v[i] = -(float)t_int(&r, 2, 50) - 0.5f;
            v[off + at * step] = -1.5f;   /* the max, at position `at` */
            nd_array a = t_view_of(size, v, 1, &n, &step, off), out;
            char what[300];
            snprintf(what, sizeof what, "the max of %" PRId64 " negative values (stride %"
                     PRId64 "), the largest (-1.5) at position %" PRId64, n, step, at);
            nd_status s = nd_reduce(ND_MAX, &a, 1, (int[]){ 0 }, false, &out);
            CHECK(s == ND_OK, "%s returned %s: %s", what, nd_status_name(s), nd_last_error());
            t_assert_values(&out, (float[]){ -1.5f }, what, NEGATIVE_HINT);
            nd_release(&out);
            nd_release(&a);
        }
        /* all -inf, then -inf with one -FLT_MAX at a random place */
        for (int kind = 0; kind < 2; kind++) {
            int64_t step = steps[(n + kind) % 4], off = step > 0 ? 1 : 1 + (n - 1) * -step;
            for (int64_t i = 0; i < size; i++)
                v[i] = -INFINITY;
            v[0] = v[size - 1] = 5;   /* outside the view */
            if (kind)
                v[off + t_int(&r, 0, n - 1) * step] = -FLT_MAX;
            nd_array a = t_view_of(size, v, 1, &n, &step, off), out;
            char what[300];
            snprintf(what, sizeof what, "the max of %" PRId64 " values (stride %" PRId64
                     "), %s", n, step, kind ? "all -inf but one -FLT_MAX" : "all -inf");
            nd_status s = nd_reduce(ND_MAX, &a, ND_ALL_AXES, NULL, false, &out);
            CHECK(s == ND_OK, "%s returned %s: %s", what, nd_status_name(s), nd_last_error());
            t_assert_values(&out, (float[]){ kind ? -FLT_MAX : -INFINITY }, what,
                            NEGATIVE_HINT);
            nd_release(&out);
            nd_release(&a);
        }
        free(v);
    }
    /* 2-D and 3-D blocks of negative values and -inf, over each axis set */
    for (int c = 0; c < 400; c++) {
        int nd = 2 + c % 2;
        int64_t shape[3];
        t_random_shape(&r, nd, c % 5 == 0 ? 60 : 9, false, 3000, shape);
        nd_array a = gen_view(&r, nd, shape, (int)t_int(&r, 0, NLAYOUTS - 1), 1 << 14,
                              c % 3 == 0 ? V_NEGINF : c % 3 == 1 ? V_TIES : V_NEGATIVE);
        int axes[ND_MAX_DIMS];
        int naxes = random_axes(&r, nd, (int)t_int(&r, 0, 3), axes);
        char what[1200], desc[1000];
        snprintf(what, sizeof what, "case %d: %s", c, describe_case(desc, sizeof desc, ND_MAX,
                 &a, naxes, axes, c % 2));
        check_reduce(ND_MAX, &a, naxes, axes, c % 2, what, NEGATIVE_HINT);
        nd_release(&a);
    }
}
END_TEST

#define NAN_HINT "a NaN makes the max of ITS block NaN, as np.max does (a plain > or " \
    "fmaxf drops it), and no other output; inf - inf makes a sum NaN; read only the " \
    "elements of the view"

START_TEST(reduce_nan_one_block)
{
    first_call(ND_MAX);
    t_rng r = t_rng_new(41501);
    /* a (5,6,7) view of negative values in several layouts, with one or
     * two NaN (or an inf and a -inf for sums) at random positions: every
     * axis subset, both ops */
    int64_t shape[3] = { 5, 6, 7 };
    for (int c = 0; c < 60; c++) {
        nd_array a = gen_view(&r, 3, shape, c % NLAYOUTS == L_BROADCAST ? L_SLICED :
                              c % NLAYOUTS, 1 << 12, V_NEGATIVE);
        int64_t size;
        float *buf = t_buffer(&a, &size);
        int nbad = 1 + c % 2;
        char where[200] = "";
        for (int i = 0; i < nbad; i++) {
            int64_t idx[3] = { t_int(&r, 0, 4), t_int(&r, 0, 5), t_int(&r, 0, 6) };
            int64_t off = a.offset + idx[0] * a.strides[0] + idx[1] * a.strides[1] +
                          idx[2] * a.strides[2];
            float bad = c % 4 == 3 ? (i ? -INFINITY : INFINITY) : NAN;
            buf[off] = bad;
            size_t len = strlen(where);
            snprintf(where + len, sizeof where - len, "%s%s at %s", i ? ", " : "",
                     isnan(bad) ? "NaN" : bad > 0 ? "inf" : "-inf", t_index_str(3, idx));
        }
        nd_array b = t_view_of(size, buf, 3, a.shape, a.strides, a.offset);
        free(buf);
        nd_release(&a);
        for (int op = ND_SUM; op <= ND_MAX; op++) {
            for (int mask = 1; mask < 8; mask++) {
                int axes[3], n = 0;
                for (int k = 0; k < 3; k++)
                    if (mask >> k & 1)
                        axes[n++] = k;
                char what[1200], desc[1000];
                snprintf(what, sizeof what, "%s (%s): %s", c % 4 == 3 ? "inf and -inf" : "NaN",
                         where, describe_case(desc, sizeof desc, (nd_reduce_op)op, &b, n,
                                              axes, mask == 5));
                check_reduce((nd_reduce_op)op, &b, n, axes, mask == 5, what, NAN_HINT);
            }
        }
        nd_release(&b);
    }
    /* NaN outside the view: every other element of the buffer is NaN, the
     * view reads the others; and a NaN just before the view's offset */
    for (int64_t n = 1; n <= 300; n += 1 + n / 8) {
        int64_t size = 2 * n + 2, two = 2, mtwo = -2;
        float *v = t_floats(size);
        for (int64_t i = 0; i < size; i++)
            v[i] = i % 2 ? NAN : -(float)(i % 17) - 1;
        nd_array a = t_view_of(size, v, 1, &n, &two, 0);
        nd_array b = t_view_of(size, v, 1, &n, &mtwo, 2 * n);
        free(v);
        for (int op = ND_SUM; op <= ND_MAX; op++) {
            char what[1200], desc[1000];
            snprintf(what, sizeof what, "the even elements of a buffer whose odd ones are "
                     "NaN: %s", describe_case(desc, sizeof desc, (nd_reduce_op)op, &a,
                     ND_ALL_AXES, NULL, false));
            check_reduce((nd_reduce_op)op, &a, ND_ALL_AXES, NULL, false, what, NAN_HINT);
            snprintf(what, sizeof what, "the even elements, backwards, of a buffer whose odd "
                     "ones are NaN: %s", describe_case(desc, sizeof desc, (nd_reduce_op)op,
                     &b, ND_ALL_AXES, NULL, false));
            check_reduce((nd_reduce_op)op, &b, ND_ALL_AXES, NULL, false, what, NAN_HINT);
        }
        nd_release(&a);
        nd_release(&b);
    }
    /* NaN first in a block, last, or alone; rows of a (40,37) array */
    for (int c = 0; c < 3; c++) {
        int64_t s2[2] = { 40, 37 }, st[2] = { 37, 1 };
        float *v = t_floats(40 * 37);
        for (int i = 0; i < 40 * 37; i++)
            v[i] = -(float)(i % 23) - 0.25f;
        for (int row = 0; row < 40; row += 3)
            v[row * 37 + (c == 0 ? 0 : c == 1 ? 36 : row % 37)] = NAN;
        nd_array a = t_view_of(40 * 37, v, 2, s2, st, 0);
        free(v);
        for (int ax = 0; ax < 2; ax++) {
            char what[1200], desc[1000];
            snprintf(what, sizeof what, "NaN %s of every third row: %s", c == 0 ? "first" :
                     c == 1 ? "last" : "somewhere", describe_case(desc, sizeof desc, ND_MAX,
                     &a, 1, &ax, false));
            check_reduce(ND_MAX, &a, 1, &ax, false, what, NAN_HINT);
        }
        nd_release(&a);
    }
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Sum accuracy                                                           */
/* ---------------------------------------------------------------------- */

#define ACCURACY_HINT "add a long run in halves (pairwise summation), each half the " \
    "same way, so that each element goes through O(log n) roundings; then add the runs' " \
    "sums in double or pairwise too: a running float total rounds at its own, growing scale"

START_TEST(reduce_sum_accuracy_layouts)
{
    first_call(ND_SUM);
    /* 2^22 values 0.1 + [0, 0.01) (a running float total of such values
     * drifts by a large factor of its rounding each step), in layouts whose
     * sums have 10^6 terms or more. */
    const int64_t N = INT64_C(1) << 22;
    t_rng r = t_rng_new(41601);
    float *v = t_floats(N);
    for (int64_t i = 0; i < N; i++)
        v[i] = 0.1f + t_float(&r, 0, 0.01f);
    static const struct {
        const char *what;
        int ndim;
        int64_t shape[3], strides[3], offset;
        int naxes, axes[3];
    } cases[] = {
        { "(2^22,), axis 0", 1, { 4194304 }, { 1 }, 0, 1, { 0 } },
        { "(2^22,) reversed", 1, { 4194304 }, { -1 }, 4194303, ND_ALL_AXES, { 0 } },
        { "(1398101,), stride 3 at offset 1", 1, { 1398101 }, { 3 }, 1, 1, { -1 } },
        { "(2048,2048) transposed, axes (1,0)", 2, { 2048, 2048 }, { 1, 2048 }, 0, 2,
          { 1, 0 } },
        { "(1048575,3) = a[:, 1:] of a (1048575,4) array: runs of 3 that do not merge", 2,
          { 1048575, 3 }, { 4, 1 }, 1, 2, { -2, -1 } },
        { "(2,2097152) interleaved (strides (1,2)), two sums over axis 1", 2, { 2, 2097152 },
          { 1, 2 }, 0, 1, { 1 } },
        { "(128,128,256) permuted (strides (1,32768,128)), axes (-1,-3,-2)", 3,
          { 128, 128, 256 }, { 1, 32768, 128 }, 0, 3, { -1, -3, -2 } },
        { "(1048575,3) backwards, strides (-4,-1): runs of 3 that do not merge", 2,
          { 1048575, 3 }, { -4, -1 }, 4194303, ND_ALL_AXES, { 0 } },
        { "(4,2^20), four sums over axis 1", 2, { 4, 1048576 }, { 1048576, 1 }, 0, 1,
          { 1 } },
        { "(2097152,2) with stride 0 on axis 0 (a broadcast row), axis 0", 2,
          { 2097152, 2 }, { 0, 1 }, 5, 1, { 0 } },
        { "(2,2097152) of which axis 0 is stride 0 and axis 1 reversed, every axis", 2,
          { 2, 2097152 }, { 0, -1 }, 4194303, ND_ALL_AXES, { 0 } },
    };
    nd_array first = t_view_of(N, v, 1, &N, (int64_t[]){ 1 }, 0);
    nd_array out;
    T_OK(nd_reduce(ND_SUM, &first, 1, (int[]){ 0 }, false, &out));
    nd_release(&out);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        nd_array a;
        T_OK(nd_as_strided(&first, cases[c].ndim, cases[c].shape, cases[c].strides,
                           cases[c].offset, &a));
        ref R = ref_reduce(&a, cases[c].naxes, cases[c].axes, false);
        char what[1200], desc[1000];
        snprintf(what, sizeof what, "the sum of values 0.1 + [0, 0.01), %s: %s", cases[c].what,
                 describe_case(desc, sizeof desc, ND_SUM, &a, cases[c].naxes, cases[c].axes,
                               false));
        nd_status s = nd_reduce(ND_SUM, &a, cases[c].naxes, cases[c].axes, false, &out);
        CHECK(s == ND_OK, "%s returned %s: %s", what, nd_status_name(s), nd_last_error());
        expect_values(ND_SUM, &out, &R, true, what, ACCURACY_HINT);
        ref_free(&R);
        nd_release(&out);
        nd_release(&a);
    }
    nd_release(&first);
    free(v);
}
END_TEST

START_TEST(reduce_sum_naive_fails)
{
    first_call(ND_SUM);
    /* 10^7 copies of 0.1f: exactly 10^7 x (double)0.1f = 1000000.0149.
     * One running float total gives 1087937 (8.8% off); pairwise is
     * within 2e-7; we ask for 1e-5 relative. */
    const int64_t n = 10000000;
    nd_array buf;
    T_OK(nd_full(T_DEV, 1, &n, 0.1f, &buf));
    static const struct {
        const char *what;
        int ndim;
        int64_t shape[3], strides[3], offset;
        int naxes, axes[3];
        int64_t count;   /* elements in each sum */
        bool keepdims;
    } cases[] = {
        { "(100,1000,100), axes (-1,0,-2)", 3, { 100, 1000, 100 }, { 100000, 100, 1 }, 0, 3,
          { -1, 0, -2 }, 10000000, false },
        { "(5000,2000) transposed (strides (1,5000)), every axis, keepdims", 2, { 5000, 2000 },
          { 1, 5000 }, 0, ND_ALL_AXES, { 0 }, 10000000, true },
        { "(3333333,3) at offset 1, axes (1,0)", 2, { 3333333, 3 }, { 3, 1 }, 1, 2, { 1, 0 },
          9999999, false },
        { "(5,2*10^6) with stride 0 on axis 0, every axis", 2, { 5, 2000000 }, { 0, 1 }, 0,
          ND_ALL_AXES, { 0 }, 10000000, false },
        { "(2,5*10^6) reversed, axis -1", 2, { 2, 5000000 }, { -5000000, -1 }, 9999999, 1,
          { -1 }, 5000000, false },
        { "(2*10^6,5) with strides (5,-1), runs of 5 backwards, axes (0,1)", 2,
          { 2000000, 5 }, { 5, -1 }, 4, 2, { 0, 1 }, 10000000, true },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        nd_array a, out;
        T_OK(nd_as_strided(&buf, cases[c].ndim, cases[c].shape, cases[c].strides,
                           cases[c].offset, &a));
        nd_status s = nd_reduce(ND_SUM, &a, cases[c].naxes, cases[c].axes, cases[c].keepdims,
                                &out);
        CHECK(s == ND_OK, "the sum over %s returned %s: %s", cases[c].what, nd_status_name(s),
              nd_last_error());
        int64_t nout = t_numel(out.ndim, out.shape);
        float got[2];
        CHECK(nout >= 1 && nout <= 2, "the sum over %s gave %" PRId64 " elements",
              cases[c].what, nout);
        T_OK(nd_to_host(&out, got, 2));
        double exact = (double)cases[c].count * (double)0.1f;
        for (int64_t o = 0; o < nout; o++) {
            double rel = fabs(got[o] - exact) / exact;
            CHECK(rel <= 1e-5, "the sum of %" PRId64 " copies of 0.1f, %s, is %.9g; exact is "
                  "%.9g, off by %.2g relative, more than 1e-5. Hint: %s", cases[c].count,
                  cases[c].what, (double)got[o], exact, rel, ACCURACY_HINT);
        }
        nd_release(&out);
        nd_release(&a);
    }
    nd_release(&buf);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Large arrays                                                           */
/* ---------------------------------------------------------------------- */

START_TEST(reduce_large_exact)
{
    first_call(ND_MAX);
    /* 2^22 whole numbers -3..3: every partial sum is a whole number below
     * 2^24 in magnitude, so every float sum is exact in any order. */
    const int64_t N = INT64_C(1) << 22;
    t_rng r = t_rng_new(41701);
    float *v = t_floats(N);
    for (int64_t i = 0; i < N; i++)
        v[i] = (float)t_int(&r, -3, 3);
    static const struct {
        int ndim;
        int64_t shape[8], strides[8], offset;
        int naxes, axes[8];
        bool keepdims;
    } cases[] = {
        { 2, { 2048, 2048 }, { 1, 2048 }, 0, 1, { 0 }, false },
        { 2, { 2048, 2048 }, { 1, 2048 }, 0, 1, { -1 }, true },
        { 2, { 4096, 1024 }, { 1024, 1 }, 0, 1, { 0 }, false },
        /* a (8,8,8,8,8,8,4,4) array with its axes in reverse order, each reversed */
        { 8, { 4, 4, 8, 8, 8, 8, 8, 8 }, { -1, -4, -16, -128, -1024, -8192, -65536, -524288 },
          4194303, 2, { 0, 7 }, false },
        { 8, { 4, 4, 8, 8, 8, 8, 8, 8 }, { -1, -4, -16, -128, -1024, -8192, -65536, -524288 },
          4194303, 3, { -3, 1, 4 }, true },
        { 8, { 4, 4, 8, 8, 8, 8, 8, 8 }, { -1, -4, -16, -128, -1024, -8192, -65536, -524288 },
          4194303, ND_ALL_AXES, { 0 }, false },
    };
    nd_array base = t_view_of(N, v, 1, &N, (int64_t[]){ 1 }, 0);
    free(v);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        nd_array a;
        T_OK(nd_as_strided(&base, cases[c].ndim, cases[c].shape, cases[c].strides,
                           cases[c].offset, &a));
        ref R = ref_reduce(&a, cases[c].naxes, cases[c].axes, cases[c].keepdims);
        float *sums = t_floats(R.n);
        for (int64_t o = 0; o < R.n; o++)
            sums[o] = (float)R.sum[o];
        for (int op = ND_SUM; op <= ND_MAX; op++) {
            char what[1200], desc[1000];
            snprintf(what, sizeof what, "2^22 whole numbers (every sum exact): %s",
                     describe_case(desc, sizeof desc, (nd_reduce_op)op, &a, cases[c].naxes,
                                   cases[c].axes, cases[c].keepdims));
            nd_array out;
            nd_status s = nd_reduce((nd_reduce_op)op, &a, cases[c].naxes, cases[c].axes,
                                    cases[c].keepdims, &out);
            CHECK(s == ND_OK, "%s returned %s: %s", what, nd_status_name(s), nd_last_error());
            t_assert_shape(&out, R.ndim, R.shape, what);
            t_assert_values(&out, op == ND_SUM ? sums : R.max, what, "sizes, strides and "
                            "offsets are int64_t; a 2^22-element or 8-D view is folded in one "
                            "pass over its blocks, whatever their layout");
            nd_release(&out);
        }
        free(sums);
        ref_free(&R);
        nd_release(&a);
    }
    nd_release(&base);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* out == a                                                                */
/* ---------------------------------------------------------------------- */

#define ALIAS_HINT "with out == a, build the result in a new array first, then let " \
    "nd_replace drop a's old reference; on an error leave a exactly as it was"

START_TEST(reduce_out_aliases_input)
{
    first_call(ND_SUM);
    t_rng r = t_rng_new(41801);
    for (int c = 0; c < 800; c++) {
        nd_reduce_op op = c % 2 ? ND_MAX : ND_SUM;
        int nd = c % (ND_MAX_DIMS + 1);
        int64_t shape[ND_MAX_DIMS];
        t_random_shape(&r, nd, 4, c % 5 == 0, 400, shape);
        nd_array base = gen_view(&r, nd, shape, (int)t_int(&r, 0, NLAYOUTS - 1), 1 << 12,
                                 op == ND_SUM ? V_SIGNED : V_NEGATIVE);
        int axes[ND_MAX_DIMS];
        int naxes = random_axes(&r, nd, (int)t_int(&r, 0, 4), axes);
        bool keep = t_int(&r, 0, 1), shared = c % 3 != 0;
        ref R = ref_reduce(&base, naxes, axes, keep);
        char what[1200], desc[1000];
        snprintf(what, sizeof what, "case %d: x = %s; nd_reduce(..., &x, ..., &x) with x %s: %s",
                 c, t_describe(&base), shared ? "one of two references to its buffer" :
                 "the only reference", describe_case(desc, sizeof desc, op, &base, naxes,
                                                      axes, keep));
        nd_array x;
        if (shared) {
            T_OK(nd_share(&base, &x));
        } else {
            x = base;   /* x owns the buffer */
            base = (nd_array){ 0 };
        }
        nd_array before = x;
        nd_buffer *buf = x.buf;
        int64_t refs = buf->refcount;
        nd_status s = nd_reduce(op, &x, naxes, axes, keep, &x);
        if (op == ND_MAX && R.count == 0) {
            CHECK(s == ND_ERR_SHAPE, "%s returned %s, expected ND_ERR_SHAPE", what,
                  nd_status_name(s));
            CHECK(t_same_struct(&x, &before) && buf->refcount == refs, "%s failed but "
                  "changed x or its refcount. Hint: %s", what, ALIAS_HINT);
        } else {
            CHECK(s == ND_OK, "%s returned %s: %s", what, nd_status_name(s), nd_last_error());
            if (shared)   /* (a freed buffer's address may come back) */
                CHECK(x.buf != buf, "%s: x still uses its old buffer. Hint: %s", what,
                      ALIAS_HINT);
            CHECK(x.buf->refcount == 1, "%s: x's new buffer has refcount %" PRId64, what,
                  x.buf->refcount);
            if (shared)
                CHECK(buf->refcount == 1, "%s: the old buffer has refcount %" PRId64 ", "
                      "expected 1: x's old reference must go. Hint: %s", what, buf->refcount,
                      ALIAS_HINT);
            expect_values(op, &x, &R, false, what, ALIAS_HINT);
        }
        ref_free(&R);
        nd_release(&x);
        if (shared)
            nd_release(&base);
    }
    /* failed calls with out == a: a bad axis, a repeated one, naxes */
    int64_t s23[2] = { 2, 3 };
    nd_array x = t_arange(2, s23);
    nd_array copy = x;
    static const struct { int naxes, axes[3]; nd_status want; } bad[] = {
        { 1, { 2 }, ND_ERR_AXIS }, { 2, { 0, -2 }, ND_ERR_AXIS }, { 3, { 0, 1, 0 }, ND_ERR_ARG },
        { 1, { -3 }, ND_ERR_AXIS },
    };
    for (size_t c = 0; c < sizeof bad / sizeof bad[0]; c++) {
        for (int op = ND_SUM; op <= ND_MAX; op++) {
            char what[300], list[100];
            snprintf(what, sizeof what, "nd_reduce(%s, &x, axes %s, &x) of shape (2,3)",
                     op_name((nd_reduce_op)op), axes_text(bad[c].naxes, bad[c].axes, list,
                                                          sizeof list));
            nd_status s = nd_reduce((nd_reduce_op)op, &x, bad[c].naxes, bad[c].axes, false, &x);
            CHECK(s == bad[c].want, "%s returned %s, expected %s", what, nd_status_name(s),
                  nd_status_name(bad[c].want));
            CHECK(memcmp(&x, &copy, sizeof x) == 0 && x.buf->refcount == 1, "%s failed but "
                  "changed x. Hint: %s", what, ALIAS_HINT);
        }
    }
    nd_release(&x);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Errors                                                                 */
/* ---------------------------------------------------------------------- */

#define AXIS_HINT "normalise each axis (add ndim if negative), then reject one outside " \
    "0..ndim-1, or one reduced twice (1 and 1-ndim are the same axis), with ND_ERR_AXIS " \
    "before writing *out"

/* nd_reduce(op, a, naxes, axes) must fail with `want`, *out untouched
 * and a, its buffer and its refcount as they were. */
static void expect_refused(nd_reduce_op op, const nd_array *a, int naxes, const int *axes,
                           nd_status want, const char *hint)
{
    char what[1200];
    describe_case(what, sizeof what, op, a, naxes, axes, false);
    nd_array copy = *a, out;
    int64_t refs = a->buf->refcount;
    t_poison(&out);
    nd_clear_error();
    expect_fail(nd_reduce(op, a, naxes, axes, false, &out), want, op_name(op), what, &out,
                hint);
    t_poison(&out);
    expect_fail(nd_reduce(op, a, naxes, axes, true, &out), want, op_name(op), what, &out,
                hint);
    CHECK(t_same_struct(a, &copy) && a->buf->refcount == refs, "%s: a failed call changed "
          "the input or its refcount (%" PRId64 " -> %" PRId64 ")", what, refs,
          a->buf->refcount);
}

START_TEST(reduce_axis_errors)
{
    first_call(ND_MAX);
    for (int nd = 1; nd <= ND_MAX_DIMS; nd++) {
        int64_t shape[ND_MAX_DIMS];
        for (int k = 0; k < nd; k++)
            shape[k] = 1 + k % 3;
        nd_array a = t_arange(nd, shape);
        for (int op = ND_SUM; op <= ND_MAX; op++) {
            /* out of range, alone and among valid axes */
            const int bad[] = { nd, nd + 1, -nd - 1, -nd - 7, 100, -100, INT_MAX, INT_MIN };
            for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
                expect_refused((nd_reduce_op)op, &a, 1, &bad[b], ND_ERR_AXIS, AXIS_HINT);
                for (int at = 0; at < nd; at++) {   /* the other axes valid, distinct */
                    int axes[ND_MAX_DIMS], n = 0;
                    for (int k = 0; k < nd && n < nd - 1; k++)
                        if (k != at)
                            axes[n++] = k % 2 ? k - nd : k;
                    for (int i = n; i > at; i--)
                        axes[i] = axes[i - 1];
                    axes[at] = bad[b];
                    expect_refused((nd_reduce_op)op, &a, n + 1, axes, ND_ERR_AXIS, AXIS_HINT);
                }
            }
            /* each axis twice: as k and k, k and k - nd, k - nd and k, in
             * a pair and inside a longer list */
            for (int k = 0; k < nd && nd >= 2; k++) {
                const int pairs[4][2] = { { k, k }, { k, k - nd }, { k - nd, k },
                                          { k - nd, k - nd } };
                for (int p = 0; p < 4; p++) {
                    expect_refused((nd_reduce_op)op, &a, 2, pairs[p], ND_ERR_AXIS, AXIS_HINT);
                    if (nd < 3)
                        continue;
                    int axes[ND_MAX_DIMS], n = 0;
                    axes[n++] = pairs[p][0];
                    for (int j = 0; j < nd && n < nd - 1; j++)
                        if (j != k)
                            axes[n++] = j;
                    axes[n++] = pairs[p][1];
                    expect_refused((nd_reduce_op)op, &a, n, axes, ND_ERR_AXIS, AXIS_HINT);
                }
            }
        }
        nd_release(&a);
    }
}
END_TEST

#define ARG_HINT "check op, a, out, naxes (0..ndim, or ND_ALL_AXES) and axes (NULL only " \
    "with naxes 0 or ND_ALL_AXES) with ND_ERR_ARG before reading any axis; leave *out " \
    "as it was"

START_TEST(reduce_argument_errors)
{
    first_call(ND_SUM);
    for (int nd = 0; nd <= ND_MAX_DIMS; nd++) {
        int64_t shape[ND_MAX_DIMS];
        for (int k = 0; k < nd; k++)
            shape[k] = 2 + k % 2;
        nd_array a = t_arange(nd, shape);
        int axes[ND_MAX_DIMS + 2];
        for (int i = 0; i < ND_MAX_DIMS + 2; i++)
            axes[i] = i % (nd > 0 ? nd : 1);
        for (int op = ND_SUM; op <= ND_MAX; op++) {
            /* naxes out of range (the axes array has nd+1 entries or more) */
            const int bad_n[] = { nd + 1, -2, -100, INT_MIN };
            for (size_t b = 0; b < sizeof bad_n / sizeof bad_n[0]; b++)
                expect_refused((nd_reduce_op)op, &a, bad_n[b], axes, ND_ERR_ARG, ARG_HINT);
            if (nd + 2 <= ND_MAX_DIMS + 1)
                expect_refused((nd_reduce_op)op, &a, ND_MAX_DIMS + 1, axes, ND_ERR_ARG,
                               ARG_HINT);
            /* NULL axes with naxes > 0 */
            for (int n = 1; n <= nd; n++)
                expect_refused((nd_reduce_op)op, &a, n, NULL, ND_ERR_ARG, ARG_HINT);
            /* NULL or broken arrays, NULL out */
            nd_array out, gone = t_arange(nd, shape), bad = a;
            nd_release(&gone);
            const char *name = op_name((nd_reduce_op)op);
            t_poison(&out);
            expect_fail(nd_reduce((nd_reduce_op)op, NULL, ND_ALL_AXES, NULL, false, &out),
                        ND_ERR_ARG, name, "nd_reduce with a NULL", &out, ARG_HINT);
            expect_fail(nd_reduce((nd_reduce_op)op, &gone, ND_ALL_AXES, NULL, false, &out),
                        ND_ERR_ARG, name, "nd_reduce of a released array", &out, ARG_HINT);
            bad.ndim = ND_MAX_DIMS + 1;
            expect_fail(nd_reduce((nd_reduce_op)op, &bad, ND_ALL_AXES, NULL, false, &out),
                        ND_ERR_ARG, name, "nd_reduce of an array with ndim 9", &out, ARG_HINT);
            bad.ndim = -1;
            expect_fail(nd_reduce((nd_reduce_op)op, &bad, ND_ALL_AXES, NULL, false, &out),
                        ND_ERR_ARG, name, "nd_reduce of an array with ndim -1", &out, ARG_HINT);
            expect_fail(nd_reduce((nd_reduce_op)op, &a, ND_ALL_AXES, NULL, false, NULL),
                        ND_ERR_ARG, name, "nd_reduce with out NULL", NULL, ARG_HINT);
        }
        /* unknown ops, with valid arguments otherwise */
        const int ops[] = { 2, 3, -1, 100, INT_MAX, INT_MIN };
        for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
            char what[300];
            snprintf(what, sizeof what, "nd_reduce with op %d of %s", ops[o], t_describe(&a));
            nd_array out;
            t_poison(&out);
            expect_fail(nd_reduce((nd_reduce_op)ops[o], &a, ND_ALL_AXES, NULL, false, &out),
                        ND_ERR_ARG, "reduce", what, &out, ARG_HINT);
            nd_array x = a, copy = a;
            expect_fail(nd_reduce((nd_reduce_op)ops[o], &x, ND_ALL_AXES, NULL, true, &x),
                        ND_ERR_ARG, "reduce", what, NULL, ARG_HINT);
            CHECK(memcmp(&x, &copy, sizeof x) == 0, "%s, out == a: failed but changed a",
                  what);
        }
        CHECK(a.buf->refcount == 1, "failed nd_reduce calls changed the input's refcount to %"
              PRId64, a.buf->refcount);
        nd_release(&a);
    }
}
END_TEST

#define MAX_EMPTY_HINT "a max over a size-0 axis has no value: return ND_ERR_SHAPE (before " \
    "allocating anything) even when the result has no elements, and leave *out as it " \
    "was; the SUM of no elements is 0"

START_TEST(reduce_max_empty_error)
{
    first_call(ND_MAX);
    t_rng r = t_rng_new(41901);
    for (int c = 0; c < 400; c++) {
        int nd = 1 + c % ND_MAX_DIMS;
        int64_t shape[ND_MAX_DIMS];
        for (int k = 0; k < nd; k++)
            shape[k] = t_int(&r, 0, 2) ? t_int(&r, 1, 3) : 0;
        int zero = (int)t_int(&r, 0, nd - 1);
        shape[zero] = 0;
        nd_array a = gen_view(&r, nd, shape, (int)t_int(&r, 0, NLAYOUTS - 1), 1 << 10,
                              V_NEGATIVE);
        /* the zero axis among others, listed in any order and sign */
        int axes[ND_MAX_DIMS], n = 0;
        axes[n++] = t_int(&r, 0, 1) ? zero : zero - nd;
        for (int k = 0; k < nd; k++)
            if (k != zero && t_int(&r, 0, 2) == 0)
                axes[n++] = k;
        int j = (int)t_int(&r, 0, n - 1), t = axes[0];
        axes[0] = axes[j];
        axes[j] = t;
        bool keep = c % 2;
        for (int i = 0; i < 2; i++) {
            int naxes = i ? ND_ALL_AXES : n;
            char what[1200], desc[1000];
            describe_case(desc, sizeof desc, ND_MAX, &a, naxes, axes, keep);
            snprintf(what, sizeof what, "case %d: %s", c, desc);
            nd_array copy = a, out;
            int64_t refs = a.buf->refcount;
            t_poison(&out);
            expect_fail(nd_reduce(ND_MAX, &a, naxes, axes, keep, &out), ND_ERR_SHAPE, "max",
                        what, &out, MAX_EMPTY_HINT);
            CHECK(t_same_struct(&a, &copy) && a.buf->refcount == refs, "%s: a failed call "
                  "changed the input or its refcount", what);
            /* out == a: a stays */
            nd_array x;
            T_OK(nd_share(&a, &x));
            nd_array xcopy = x;
            expect_fail(nd_reduce(ND_MAX, &x, naxes, axes, keep, &x), ND_ERR_SHAPE, "max",
                        what, NULL, MAX_EMPTY_HINT);
            CHECK(memcmp(&x, &xcopy, sizeof x) == 0 && a.buf->refcount == refs + 1, "%s with "
                  "out == a: failed but changed a. Hint: %s", what, MAX_EMPTY_HINT);
            nd_release(&x);
            /* the sum of the same is zeros */
            snprintf(what, sizeof what, "case %d: %s", c, describe_case(desc, sizeof desc,
                     ND_SUM, &a, naxes, axes, keep));
            check_reduce(ND_SUM, &a, naxes, axes, keep, what, MAX_EMPTY_HINT);
        }
        /* a max over the other axes only is fine: an empty result */
        int others[ND_MAX_DIMS], m = 0;
        for (int k = 0; k < nd; k++)
            if (shape[k] > 0)
                others[m++] = k - (int)t_int(&r, 0, 1) * nd;
        char what[1200], desc[1000];
        snprintf(what, sizeof what, "case %d (no size-0 axis reduced, so no error): %s", c,
                 describe_case(desc, sizeof desc, ND_MAX, &a, m, others, keep));
        check_reduce(ND_MAX, &a, m, others, keep, what, MAX_EMPTY_HINT);
        nd_release(&a);
    }
}
END_TEST

/* ---------------------------------------------------------------------- */
/* The suite: points and hints                                            */
/* ---------------------------------------------------------------------- */

Suite *hidden_04_reduce(void);

Suite *hidden_04_reduce(void)
{
    Suite *s = g_suite(4, "04_reduce");
    G_ADD_CPU(s, reduce_sum_every_axis_subset, 3, SUBSETS_SUM_HINT);
    G_ADD_CPU(s, reduce_max_every_axis_subset, 3, SUBSETS_MAX_HINT);
    G_ADD(s, reduce_sum_random_8d, 3, RANDOM_SUM_HINT);
    G_ADD_CPU(s, reduce_max_random_8d, 3, RANDOM_MAX_HINT);
    G_ADD(s, reduce_keepdims_in_place, 2, KEEPDIMS_HINT);
    G_ADD(s, reduce_composition, 2, COMPOSE_HINT);
    G_ADD(s, reduce_no_axes_copy, 2, COPY_HINT);
    G_ADD_CPU(s, reduce_broadcast_views, 3, BROADCAST_HINT);
    G_ADD(s, reduce_negative_strides_offsets, 2, STRIDES_HINT);
    G_ADD(s, reduce_empty_and_unit_axes, 3, EMPTY_HINT);
    G_ADD(s, reduce_max_negative_and_inf, 3, NEGATIVE_HINT);
    G_ADD(s, reduce_nan_one_block, 3, NAN_HINT);
    G_ADD(s, reduce_sum_accuracy_layouts, 4, ACCURACY_HINT);
    G_ADD_CPU(s, reduce_sum_naive_fails, 3, ACCURACY_HINT);
    G_ADD_CPU(s, reduce_large_exact, 2,
          "sizes, strides and offsets are int64_t; a 2^22-element or 8-D view is folded in "
          "one pass over its blocks, whatever their layout");
    G_ADD(s, reduce_out_aliases_input, 2, ALIAS_HINT);
    G_ADD(s, reduce_axis_errors, 3, AXIS_HINT);
    G_ADD(s, reduce_argument_errors, 2, ARG_HINT);
    G_ADD(s, reduce_max_empty_error, 2, MAX_EMPTY_HINT);
    return s;
}
