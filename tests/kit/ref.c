/*
 * ref.c -- the reference: what each call must do, from nd.h alone.
 *
 * Plain loops over host copies of the buffers, index by index; it never
 * calls the library.  For a call that must fail it gives the status and
 * the rule that was broken (the comparison quotes it), checking the
 * arguments in the order the given argument checks of each function do
 * (those are framework or skeleton code, not the student's).  Where a
 * student's own code decides among several errors, tests make calls with
 * one fault only.
 *
 * Values: + - * / and everything that only moves data are exact (a double
 * result rounded once to float is the correctly rounded float); pow, exp,
 * log and tanh are not correctly rounded by any libm, so within 4 ulp;
 * sums and products within a bound proportional to the sum of magnitudes.
 */
#include "kit_impl.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A message that lives until the case ends. */
static const char *say(k_ctx *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static const char *say(k_ctx *k, const char *fmt, ...)
{
    char *s = k_mem(k, 300);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s, 300, fmt, ap);
    va_end(ap);
    return s;
}

#define ERR(st, ...)                       \
    do {                                   \
        w.status = (st);                   \
        w.why = say(k, __VA_ARGS__);       \
        return w;                          \
    } while (0)

/* ND_ERR_ARG when `cond`: the pointer argument `name` is NULL. */
#define ERR_NULL(cond, name)                                   \
    do {                                                       \
        if (cond)                                              \
            ERR(ND_ERR_ARG, "argument '%s' is NULL", (name));  \
    } while (0)

/* ERR when a check found a fault: `reason` is why, or NULL. */
#define ERR_IF(st, reason)                 \
    do {                                   \
        const char *why_ = (reason);       \
        if (why_ != NULL)                  \
            ERR(st, "%s", why_);           \
    } while (0)

int64_t k_numel(int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    return n;
}

void k_unravel(int64_t i, int ndim, const int64_t *shape, int64_t *index)
{
    for (int d = ndim - 1; d >= 0; d--) {
        index[d] = shape[d] > 0 ? i % shape[d] : 0;
        i = shape[d] > 0 ? i / shape[d] : 0;
    }
}

/* In two's complement, wrapping: for an array with elements nothing wraps
 * (rule 2 of "Valid arrays" in nd.h); the strides of an array without
 * elements may be anything (rule 4), and its offset is never read. */
static int64_t wrap_add(int64_t x, int64_t y)
{
    return (int64_t)((uint64_t)x + (uint64_t)y);
}

static int64_t wrap_mul(int64_t x, int64_t y)
{
    return (int64_t)((uint64_t)x * (uint64_t)y);
}

int64_t k_offset(const k_arr *a, const int64_t *idx)
{
    int64_t off = a->offset;
    for (int d = 0; d < a->ndim; d++)
        off = wrap_add(off, wrap_mul(idx[d], a->strides[d]));
    return off;
}

/* ---------------------------------------------------------------------- */
/* Argument checks, as the framework's nd_check_array / nd_check_shape     */
/* ---------------------------------------------------------------------- */

static const k_arr *arg(const k_call *c, int i)
{
    return i < c->nargs && c->args[i].kind != K_NULLPTR ? &c->args[i] : NULL;
}

/* Why argument i is not a usable array, or NULL. */
static const char *bad_array(k_ctx *k, const k_call *c, int i, const char *name)
{
    const k_arr *a = arg(c, i);
    if (a == NULL)
        return say(k, "argument '%s' is NULL", name);
    if (a->kind == K_RELEASED)
        return say(k, "array '%s' has no buffer (it was released)", name);
    if (a->ndim < 0 || a->ndim > ND_MAX_DIMS)
        return say(k, "array '%s' has ndim %d, outside 0..%d", name, a->ndim, ND_MAX_DIMS);
    return NULL;
}

/* Why (ndim, shape) is not a valid shape, or NULL: ndim in 0..8, shape
 * given when ndim > 0, sizes >= 0, the sizes other than 0 multiplying to
 * at most 2^58 (rule 1 of "Valid arrays" in nd.h: in any order). */
static const char *bad_shape(k_ctx *k, int ndim, const int64_t *shape)
{
    if (ndim < 0 || ndim > ND_MAX_DIMS)
        return say(k, "ndim %d is outside 0..%d", ndim, ND_MAX_DIMS);
    if (ndim > 0 && shape == NULL)
        return say(k, "the shape is NULL but ndim is %d", ndim);
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0)
            return say(k, "axis %d has the negative size %" PRId64, d, shape[d]);
        if (shape[d] != 0 && n > ND_MAX_NUMEL / shape[d])
            return say(k, "the shape has too many elements (its sizes other than 0 multiply "
                       "to more than 2^58)");
        n *= shape[d] != 0 ? shape[d] : 1;
    }
    return NULL;
}

static const int64_t *list_of(const k_call *c, int i)
{
    return c->list_null[i] ? NULL : c->list[i];
}

/* A possibly negative axis, for ndim axes: false when out of range. */
static bool norm_axis(int64_t ax, int ndim, int *out)
{
    if (ax < -ndim || ax >= ndim)
        return false;
    *out = (int)(ax < 0 ? ax + ndim : ax);
    return true;
}

static bool same_device(const k_call *c, int i, int j)
{
    const k_buf *x = &c->bufs[c->args[i].buf], *y = &c->bufs[c->args[j].buf];
    return (x->on ? x->on - 1 : (int)c->dev) == (y->on ? y->on - 1 : (int)c->dev);
}

/* ---------------------------------------------------------------------- */
/* Results                                                                */
/* ---------------------------------------------------------------------- */

static void view_of(k_want *w, const k_arr *a, int ndim, const int64_t *shape,
                    const int64_t *strides, int64_t offset)
{
    w->view = true;
    w->buf = a->buf;
    w->ndim = ndim;
    memcpy(w->shape, shape, (size_t)ndim * sizeof *shape);
    memcpy(w->strides, strides, (size_t)ndim * sizeof *strides);
    w->offset = offset;
}

/* A new array of more than 2^54 floats, 2^56 bytes, the whole user address
 * space of the largest 64-bit machines (x86-64 with 5-level paging), cannot
 * be allocated: ND_ERR_NOMEM.  Between the reference's own limit and that
 * size the outcome depends on the machine, so no test makes such a result. */
#define K_NOMEM_NUMEL ((int64_t)1 << 54)
#define K_REF_NUMEL ((int64_t)1 << 30)
static const char *no_memory(k_ctx *k, int ndim, const int64_t *shape)
{
    int64_t n = k_numel(ndim, shape);   /* a valid shape: no overflow */
    if (n > K_NOMEM_NUMEL)
        return say(k, "the result of %" PRId64 " elements (more than 2^56 bytes) cannot be "
                   "allocated on any machine", n);
    if (n > K_REF_NUMEL)
        k_fail("test error: the reference does not judge a result of %" PRId64 " elements: "
               "whether it can be allocated depends on the machine", n);
    return NULL;
}

/* A new array of this shape; its values to be filled in. */
static float *new_array(k_ctx *k, k_want *w, int ndim, const int64_t *shape, k_tol tol)
{
    w->ndim = ndim;
    memcpy(w->shape, shape, (size_t)ndim * sizeof *shape);
    w->tol = tol;
    w->ulps = 4;
    w->vals = k_floats(k, k_numel(ndim, shape));
    return w->vals;
}

static int64_t *ivals(k_ctx *k, k_want *w, int n)
{
    w->nvals = n;
    w->ivals = k_mem(k, (size_t)(n > 0 ? n : 1) * sizeof(int64_t));
    for (int i = 0; i < n; i++)
        w->ivals[i] = K_POISON64;
    return w->ivals;
}

float k_input_at(const k_call *c, int i, int ndim, const int64_t *idx)
{
    const k_arr *a = &c->args[i];
    int64_t off = a->offset;
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != 1)
            off += idx[d + ndim - a->ndim] * a->strides[d];
    return c->bufs[a->buf].v[off];
}

/* An axis of an in-place call's result along which dst and every input
 * repeat (stride 0, or size 1 as broadcasting reads it) only writes the
 * same value to the same element again: its reference walks it once (a
 * row repeated past 2^31 elements is a few thousand).  walk gets shape
 * with such axes made 1; true if there is one. */
static bool walk_once(const k_call *c, int ndim, const int64_t *shape, int64_t *walk)
{
    bool any = false;
    for (int d = 0; d < ndim; d++) {
        bool rep = shape[d] > 1;
        for (int i = 0; i < c->nargs && rep; i++) {
            const k_arr *x = &c->args[i];
            int e = d - (ndim - x->ndim);
            rep = e < 0 || x->shape[e] == 1 || x->strides[e] == 0;
        }
        walk[d] = rep ? 1 : shape[d];
        any = any || rep;
    }
    return any;
}

static k_buf *copy_buffers(k_ctx *k, const k_call *c, k_want *w)
{
    w->inplace = true;
    for (int i = 0; i < c->nbufs; i++) {
        w->after[i].n = c->bufs[i].n;
        w->after[i].v = k_floats(k, c->bufs[i].n);
        memcpy(w->after[i].v, c->bufs[i].v, (size_t)c->bufs[i].n * sizeof(float));
    }
    return w->after;
}

/* ---------------------------------------------------------------------- */
/* Lesson 1: views                                                        */
/* ---------------------------------------------------------------------- */

bool k_compact_layout(const k_arr *a)
{
    if (k_numel(a->ndim, a->shape) == 0)
        return true;
    int64_t want = 1;
    for (int d = a->ndim - 1; d >= 0; d--) {
        if (a->shape[d] == 1)
            continue;
        if (a->strides[d] != want)
            return false;
        want *= a->shape[d];
    }
    return true;
}

/* A slice's start or stop: `none` when not given; from the end when
 * negative; clipped to lo..hi. */
static __int128 slice_bound(int64_t v, int64_t size, __int128 lo, __int128 hi, __int128 none)
{
    __int128 x = v < 0 ? (__int128)v + size : v;
    return v == ND_NONE ? none : x < lo ? lo : x > hi ? hi : x;
}

static k_want views(k_ctx *k, const k_call *c)
{
    k_want w = { 0 };
    const k_arr *a = arg(c, 0);
    const char *why;
    bool no_out = c->out == K_OUT_NULL;
    if (c->op == K_COMPACT_STRIDES) {
        int64_t *v = ivals(k, &w, K_LIST);
        ERR_IF(ND_ERR_ARG, bad_shape(k, c->n, list_of(c, 0)));
        ERR_NULL(c->n > 0 && no_out, "strides");
        for (int d = c->n - 1; d >= 0; d--)
            v[d] = d == c->n - 1 ? 1 : v[d + 1] * c->list[0][d + 1];
        return w;
    }
    if (c->op == K_IS_COMPACT || c->op == K_OFFSET_OF)   /* as exec.c poisons the result */
        ivals(k, &w, 1)[0] = c->op == K_IS_COMPACT ? 0xAB : K_POISON64;
    ERR_IF(ND_ERR_ARG, bad_array(k, c, 0, "a"));
    int64_t shape[ND_MAX_DIMS], strides[ND_MAX_DIMS];
    switch (c->op) {
    case K_IS_COMPACT:
        ERR_NULL(no_out, "result");
        w.ivals[0] = k_compact_layout(a);
        return w;
    case K_OFFSET_OF:
        ERR_NULL(no_out || (a->ndim > 0 && c->list_null[0]), no_out ? "offset" : "index");
        for (int d = 0; d < a->ndim; d++)
            if (c->list[0][d] < 0 || c->list[0][d] >= a->shape[d])
                ERR(ND_ERR_INDEX, "index %" PRId64 " is out of range for axis %d of size %"
                    PRId64 " (indices are not wrapped: 0 <= index < size)", c->list[0][d], d,
                    a->shape[d]);
        w.ivals[0] = k_offset(a, c->list[0]);
        return w;
    case K_RESHAPE: {
        if (c->n < 0 || c->n > ND_MAX_DIMS)
            ERR(ND_ERR_ARG, "ndim %d is outside 0..%d", c->n, ND_MAX_DIMS);
        ERR_NULL(no_out || (c->n > 0 && c->list_null[0]), no_out ? "out" : "shape");
        int infer = -1;
        for (int d = 0; d < c->n; d++) {
            shape[d] = c->list[0][d];
            if (shape[d] == -1) {
                if (infer >= 0)
                    ERR(ND_ERR_ARG, "the shape has -1 on axes %d and %d: only one size can "
                        "be inferred", infer, d);
                infer = d;
                shape[d] = 1;
            }
        }
        if ((why = bad_shape(k, c->n, shape)) != NULL)
            ERR(ND_ERR_ARG, "the new shape is not valid: %s", why);
        int64_t n = k_numel(a->ndim, a->shape), known = k_numel(c->n, shape);
        if (infer >= 0) {
            if (known == 0 || n % known != 0)
                ERR(ND_ERR_SHAPE, "the -1 cannot be inferred: %" PRId64 " elements are not a "
                    "multiple of the other sizes' product, %" PRId64, n, known);
            shape[infer] = n / known;
        }
        if (k_numel(c->n, shape) != n)
            ERR(ND_ERR_SHAPE, "the element counts differ: %" PRId64 " and %" PRId64, n,
                k_numel(c->n, shape));
        if (!k_compact_layout(a))
            ERR(ND_ERR_LAYOUT, "the array is not compact, so no strides can show it in a "
                "new shape (a reshape never copies)");
        for (int d = c->n - 1; d >= 0; d--)
            strides[d] = d == c->n - 1 ? 1 : strides[d + 1] * shape[d + 1];
        view_of(&w, a, c->n, shape, strides, a->offset);
        return w;
    }
    case K_PERMUTE: {
        ERR_NULL(no_out || (a->ndim > 0 && c->list_null[0]), no_out ? "out" : "axes");
        bool seen[ND_MAX_DIMS] = { false };
        for (int i = 0; i < a->ndim; i++) {
            int ax;
            if (!norm_axis((int)c->list[0][i], a->ndim, &ax))
                ERR(ND_ERR_AXIS, "axis %d is out of range for %d axes", (int)c->list[0][i],
                    a->ndim);
            if (seen[ax])
                ERR(ND_ERR_AXIS, "axis %d is named twice: axes must be a permutation", ax);
            seen[ax] = true;
            shape[i] = a->shape[ax];
            strides[i] = a->strides[ax];
        }
        view_of(&w, a, a->ndim, shape, strides, a->offset);
        return w;
    }
    case K_BROADCAST_TO: {
        ERR_IF(ND_ERR_ARG, bad_shape(k, c->n, list_of(c, 0)));
        ERR_NULL(no_out, "out");
        if (c->n < a->ndim)
            ERR(ND_ERR_SHAPE, "the target has fewer axes (%d) than the array (%d)", c->n,
                a->ndim);
        int lead = c->n - a->ndim;
        for (int d = 0; d < c->n; d++) {
            int j = d - lead;
            if (j < 0 || (a->shape[j] == 1 && c->list[0][d] != 1))
                strides[d] = 0;
            else if (a->shape[j] == c->list[0][d])
                strides[d] = a->strides[j];
            else
                ERR(ND_ERR_SHAPE, "axis %d of size %" PRId64 " cannot stretch to %" PRId64
                    " (only size 1 stretches)", j, a->shape[j], c->list[0][d]);
        }
        view_of(&w, a, c->n, c->list[0], strides, a->offset);
        return w;
    }
    case K_SLICE: {
        if (c->n < 0 || c->n > a->ndim)
            ERR(ND_ERR_ARG, "%d indices for an array of %d axes", c->n, a->ndim);
        ERR_NULL(no_out || (c->n > 0 && c->list_null[0]), no_out ? "out" : "idx");
        int m = 0;
        int64_t off = a->offset;
        for (int d = 0; d < a->ndim; d++) {
            nd_index ix = d < c->n ? c->idx[d] : ND_ALL;
            int64_t size = a->shape[d];
            if (ix.kind == ND_INDEX_INT) {
                int64_t i = ix.i < 0 ? ix.i + size : ix.i;
                if (i < 0 || i >= size)
                    ERR(ND_ERR_INDEX, "index %" PRId64 " is out of range for axis %d of size %"
                        PRId64, ix.i, d, size);
                off = wrap_add(off, wrap_mul(i, a->strides[d]));
                continue;
            }
            if (ix.kind != ND_INDEX_SLICE)
                ERR(ND_ERR_ARG, "index %d has the unknown kind %d", d, (int)ix.kind);
            if (ix.step == 0)
                ERR(ND_ERR_INDEX, "axis %d has a slice step of 0", d);
            /* Python's slice.indices(), in 128-bit arithmetic */
            __int128 step = ix.step, lo = step < 0 ? -1 : 0, hi = step < 0 ? size - 1 : size;
            __int128 start = slice_bound(ix.start, size, lo, hi, step < 0 ? hi : lo);
            __int128 stop = slice_bound(ix.stop, size, lo, hi, step < 0 ? lo : hi);
            __int128 count = step > 0 ? (start < stop ? (stop - start - 1) / step + 1 : 0)
                                      : (stop < start ? (start - stop - 1) / -step + 1 : 0);
            if (count > 0)
                off = wrap_add(off, wrap_mul((int64_t)start, a->strides[d]));
            shape[m] = (int64_t)count;
            strides[m++] = count > 1 ? (int64_t)(step * a->strides[d]) : a->strides[d];
        }
        view_of(&w, a, m, shape, strides, off);
        return w;
    }
    case K_DIAGONAL: {
        if (a->ndim < 2)
            ERR(ND_ERR_ARG, "a diagonal needs at least 2 axes; the array has %d", a->ndim);
        ERR_NULL(no_out, "out");
        int x, y;
        if (!norm_axis(c->at[1], a->ndim, &x) || !norm_axis(c->at[2], a->ndim, &y))
            ERR(ND_ERR_AXIS, "axis %" PRId64 " is out of range for %d axes",
                norm_axis(c->at[1], a->ndim, &x) ? c->at[2] : c->at[1], a->ndim);
        if (x == y)
            ERR(ND_ERR_AXIS, "axis1 and axis2 are both axis %d", x);
        int64_t off = c->at[0], n1 = a->shape[x], n2 = a->shape[y], len = 0;
        int64_t start = a->offset;
        if (off >= 0 && off < n2) {
            len = n1 < n2 - off ? n1 : n2 - off;
            start = wrap_add(start, wrap_mul(off, a->strides[y]));
        } else if (off < 0 && off > -n1) {
            len = n1 + off < n2 ? n1 + off : n2;
            start = wrap_add(start, wrap_mul(-off, a->strides[x]));
        }
        int m = 0;
        for (int d = 0; d < a->ndim; d++)
            if (d != x && d != y) {
                shape[m] = a->shape[d];
                strides[m++] = a->strides[d];
            }
        shape[m] = len;
        strides[m++] = wrap_add(a->strides[x], a->strides[y]);
        view_of(&w, a, m, shape, strides, start);
        return w;
    }
    default:
        ERR(ND_ERR_ARG, "not a view op");
    }
}

/* ---------------------------------------------------------------------- */
/* Lesson 2                                                               */
/* ---------------------------------------------------------------------- */

static k_want lesson2(k_ctx *k, const k_call *c)
{
    k_want w = { 0 };
    const k_arr *a = arg(c, 0), *b = arg(c, 1);
    switch (c->op) {
    case K_ITER: {
        ERR_IF(ND_ERR_ARG, bad_shape(k, c->n, list_of(c, 0)));
        ERR_NULL(c->out == K_OUT_NULL, "it");
        /* the walk as exec.c's iter() records it: at most at[0] positions */
        int nd = c->n;
        int64_t n = k_numel(nd, c->list[0]), seen = n < c->at[0] ? n : c->at[0];
        int64_t *v = ivals(k, &w, (int)(6 + (seen + 1) * nd));
        memcpy(v, (int64_t[6]){ seen, 1, nd, n, 0, seen }, 6 * sizeof *v);
        for (int64_t i = 0; i < seen; i++)
            k_unravel(i, nd, c->list[0], v + 6 + i * nd);
        if (seen > 0)
            memcpy(v + 6 + seen * nd, v + 6 + (seen - 1) * nd, (size_t)nd * sizeof(int64_t));
        return w;
    }
    case K_SIMPLIFY_DIMS: {
        ERR_NULL(c->out == K_OUT_NULL, "ndim");
        ERR_IF(ND_ERR_ARG, bad_shape(k, c->n, list_of(c, 0)));
        ERR_NULL(c->n > 0 && c->list_null[1], "strides_a");
        int64_t *v = ivals(k, &w, 1 + 3 * K_LIST), l[3][K_LIST];
        memcpy(l, c->list, sizeof l);
        bool two = !c->list_null[2];
        int m = 0;
        for (int d = 0; d < c->n; d++) {
            if (l[0][d] == 1)
                continue;
            int64_t run_a, run_b;   /* a run that overflows equals no stride */
            if (m > 0 && !__builtin_mul_overflow(l[0][d], l[1][d], &run_a) &&
                l[1][m - 1] == run_a &&
                (!two || (!__builtin_mul_overflow(l[0][d], l[2][d], &run_b) &&
                          l[2][m - 1] == run_b))) {
                l[0][m - 1] *= l[0][d];
                l[1][m - 1] = l[1][d];
                l[2][m - 1] = l[2][d];
                continue;
            }
            for (int i = 0; i < 3; i++)
                l[i][m] = l[i][d];
            m++;
        }
        v[0] = m;
        for (int i = 0; i < 3; i++)
            memcpy(v + 1 + i * K_LIST, l[i], (size_t)m * sizeof(int64_t));
        return w;
    }
    case K_COMPACT: {
        ERR_IF(ND_ERR_ARG, bad_array(k, c, 0, "a"));
        ERR_NULL(c->out == K_OUT_NULL, "out");
        ERR_IF(ND_ERR_NOMEM, no_memory(k, a->ndim, a->shape));
        float *v = new_array(k, &w, a->ndim, a->shape, K_EXACT);
        int64_t idx[ND_MAX_DIMS];
        for (int64_t i = 0; i < k_numel(a->ndim, a->shape); i++) {
            k_unravel(i, a->ndim, a->shape, idx);
            v[i] = c->bufs[a->buf].v[k_offset(a, idx)];
        }
        return w;
    }
    case K_SETITEM:
    case K_SETITEM_SCALAR: {
        bool scalar = c->op == K_SETITEM_SCALAR;
        ERR_IF(ND_ERR_ARG, bad_array(k, c, 0, "dst"));
        if (!scalar) {
            ERR_IF(ND_ERR_ARG, bad_array(k, c, 1, "src"));
            if (!same_device(c, 0, 1))
                ERR(ND_ERR_DEVICE, "dst and src live on different devices");
            int skip = 0;
            while (b->ndim - skip > a->ndim && b->shape[skip] == 1)
                skip++;
            int nb = b->ndim - skip;
            if (nb > a->ndim)
                ERR(ND_ERR_SHAPE, "src has more axes (%d) than dst (%d), and not all of the "
                    "extra leading ones have size 1", b->ndim, a->ndim);
            for (int d = 0; d < nb; d++) {
                int64_t sd = b->shape[skip + d], dd = a->shape[d + a->ndim - nb];
                if (sd != dd && sd != 1)
                    ERR(ND_ERR_SHAPE, "src's axis %d has size %" PRId64 ", which neither is "
                        "dst's %" PRId64 " nor 1", skip + d, sd, dd);
            }
        }
        k_buf *after = copy_buffers(k, c, &w);
        int64_t idx[ND_MAX_DIMS], walk[ND_MAX_DIMS];
        walk_once(c, a->ndim, a->shape, walk);
        for (int64_t i = 0; i < k_numel(a->ndim, walk); i++) {
            k_unravel(i, a->ndim, walk, idx);
            float v = scalar ? c->scalar : k_input_at(c, 1, a->ndim, idx);
            after[a->buf].v[k_offset(a, idx)] = v;
        }
        return w;
    }
    default:
        ERR(ND_ERR_ARG, "not a lesson 2 op");
    }
}

/* ---------------------------------------------------------------------- */
/* Lesson 3: elementwise                                                  */
/* ---------------------------------------------------------------------- */

bool k_broadcast_shape(int na, const int64_t *a, int nb, const int64_t *b, int *nout,
                       int64_t *out)
{
    int n = na > nb ? na : nb;
    for (int d = 0; d < n; d++) {
        int64_t x = d - (n - na) >= 0 ? a[d - (n - na)] : 1;
        int64_t y = d - (n - nb) >= 0 ? b[d - (n - nb)] : 1;
        if (x != y && x != 1 && y != 1)
            return false;
        out[d] = x == 1 ? y : x;
    }
    *nout = n;
    return true;
}

static float binop(int op, float x, float y)
{
    double a = x, b = y;
    switch (op) {
    case ND_ADD: return (float)(a + b);
    case ND_SUB: return (float)(a - b);
    case ND_MUL: return (float)(a * b);
    case ND_DIV: return (float)(a / b);
    case ND_POW: return (float)pow(a, b);
    case ND_MAXIMUM: return isnan(x) || isnan(y) ? NAN : x > y ? x : y;
    case ND_EQ: return x == y ? 1.0f : 0.0f;
    default: return x >= y ? 1.0f : 0.0f;
    }
}

static float unop(int op, float x)
{
    switch (op) {
    case ND_NEG: return -x;
    case ND_LOG: return (float)log((double)x);
    case ND_EXP: return (float)exp((double)x);
    case ND_TANH: return (float)tanh((double)x);
    default: return fabsf(x);
    }
}

static k_want ewise(k_ctx *k, const k_call *c)
{
    k_want w = { 0 };
    const char *why;
    bool unary = c->op == K_UNARY || c->op == K_UNARY_INTO;
    bool scalar = c->op == K_SCALAR || c->op == K_SCALAR_INTO;
    bool into = c->op == K_BINARY_INTO || c->op == K_SCALAR_INTO || c->op == K_UNARY_INTO;
    int nops = unary ? ND_ABS + 1 : ND_GE + 1;
    if (c->code < 0 || c->code >= nops)
        ERR(ND_ERR_ARG, "op %d is unknown: it must be 0..%d", c->code, nops - 1);
    ERR_IF(ND_ERR_ARG, bad_array(k, c, 0, "a"));
    const k_arr *a = arg(c, 0), *b = NULL, *dst = NULL;
    int ndim = a->ndim, dsti = unary || scalar ? 1 : 2;
    int64_t shape[ND_MAX_DIMS];
    memcpy(shape, a->shape, sizeof shape);
    if (!unary && !scalar) {
        ERR_IF(ND_ERR_ARG, bad_array(k, c, 1, "b"));
        b = arg(c, 1);
        if (!same_device(c, 0, 1))
            ERR(ND_ERR_DEVICE, "a and b live on different devices");
    }
    ERR_NULL(!into && c->out == K_OUT_NULL, "out");
    if (b != NULL && !k_broadcast_shape(a->ndim, a->shape, b->ndim, b->shape, &ndim, shape))
        ERR(ND_ERR_SHAPE, "the shapes of a and b do not broadcast (aligned at the right, "
            "each pair of sizes must be equal or contain a 1)");
    if (!into && (why = bad_shape(k, ndim, shape)) != NULL)   /* dst's shape is valid */
        ERR(ND_ERR_ARG, "the result's shape is not valid: %s", why);
    if (into) {
        ERR_IF(ND_ERR_ARG, bad_array(k, c, dsti, "dst"));
        dst = arg(c, dsti);
        if (!same_device(c, 0, dsti))
            ERR(ND_ERR_DEVICE, "a and dst live on different devices");
        if (dst->ndim != ndim || memcmp(dst->shape, shape, (size_t)ndim * sizeof *shape) != 0)
            ERR(ND_ERR_SHAPE, "dst's shape is not the result's shape");
    }
    if (!into)
        ERR_IF(ND_ERR_NOMEM, no_memory(k, ndim, shape));
    /* libm's pow, log, exp and tanh within ulps; maximum's zeros of either sign */
    k_tol tol = unary ? (c->code == ND_NEG || c->code == ND_ABS ? K_EXACT : K_ULPS)
              : c->code == ND_POW ? K_ULPS : c->code == ND_MAXIMUM ? K_EXACT_ZERO : K_EXACT;
    /* the _into ops judge dst by its buffer alone where an axis repeats */
    int64_t walk[ND_MAX_DIMS];
    bool repeats = into && walk_once(c, ndim, shape, walk);
    if (!repeats)
        memcpy(walk, shape, sizeof walk);
    float *v = NULL;
    if (repeats) {
        w.ndim = ndim;
        memcpy(w.shape, shape, (size_t)ndim * sizeof *shape);
        w.tol = tol;
        w.ulps = 4;
    } else {
        v = new_array(k, &w, ndim, shape, tol);
    }
    k_buf *after = into ? copy_buffers(k, c, &w) : NULL;   /* the values land in dst too */
    int64_t idx[ND_MAX_DIMS];
    for (int64_t i = 0; i < k_numel(ndim, walk); i++) {
        k_unravel(i, ndim, walk, idx);
        float x = k_input_at(c, 0, ndim, idx);
        float y = unary ? unop(c->code, x)
                        : binop(c->code, x, scalar ? c->scalar : k_input_at(c, 1, ndim, idx));
        if (v != NULL)
            v[i] = y;
        if (into)
            after[dst->buf].v[k_offset(dst, idx)] = y;
    }
    return w;
}

/* ---------------------------------------------------------------------- */
/* Lessons 4 and 5                                                        */
/* ---------------------------------------------------------------------- */

/* Sums and dot products in float depend on the order of their additions,
 * so the reference takes them in double and gives each result a bound.
 *
 * Exact.  When every term is a float and a multiple of 2^low (a product
 * of two floats need not be a float) and the sum of their magnitudes is
 * below 2^(24 + low), every partial sum, in any order and any grouping,
 * is a float: the result must be exact (small integers, halves, products
 * by 1 and 0).  This is what lets a test see one missed or doubled element
 * in a sum of a million.
 *
 * Sums.  A block of r <= LEAF terms may be added in any order: within
 * (r + 1) u sum|x| (u = 2^-24; Higham, "Accuracy and Stability of
 * Numerical Algorithms", 4.2).  A longer block is added pairwise above
 * leaves of LEAF terms, each leaf in any order, as lesson 4 does: within
 * (LEAF + ceil(log2(r / LEAF)) + 1) u sum|x|, 1.6e-5 relative for 10^7
 * terms.  (log2(r) + 2 roundings, the pairwise bound itself, is too tight:
 * a leaf of 256 terms added by one running float, a correct variant of
 * the lesson's sum_leaf, was measured at 40 u sum|x| on 0.1f repeated.)
 * A running float sum of 10^7 copies of 0.1f is off by 1.5 * 10^6 u
 * sum|x|, 16 running sums side by side by 10^5, the sums of 2.5 * 10^6
 * runs added in float by 4 * 10^5: far outside.
 *
 * Dot products (matmul) may be added in any order: within 2 (k + 2) u
 * sum|a b| (the standard bound, with room for products rounded to float).
 *
 * Terms whose magnitudes reach 2^127 may overflow in one order and not in
 * another: any value.  Otherwise NaN, inf and -inf are IEEE's answers,
 * exactly. */
#define K_LEAF 256

/* The exponent of x's lowest set bit; 0 for 0, NaN and +-inf. */
static int low_bit(float x)
{
    if (!isfinite(x) || x == 0)
        return 0;
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    uint32_t e = u >> 23 & 0xff, m = (u & 0x7fffff) | (e ? 0x800000 : 0);
    return (e ? (int)e - 150 : -149) + __builtin_ctz(m);
}

/* The bound of a sum of n terms with magnitudes mag, all multiples of
 * 2^low, that holds no NaN and no inf: 0 for exact. */
static double sum_bound(int64_t n, double mag, int low)
{
    if (mag < ldexp(1, 24 + low))
        return 0;
    double r = (double)(n < K_LEAF ? n : K_LEAF);
    for (int64_t m = K_LEAF; m < n; m *= 2)
        r += 1;
    return (r + 1) * 0x1p-24 * mag + 1e-38;
}

/* Running sums of the terms of one result. */
typedef struct {
    double sum, mag;     /* of the finite terms */
    int low;             /* the lowest bit of any nonzero one */
    bool nan, pinf, ninf;
} k_acc;

static void acc_add(k_acc *s, double x, int low)
{
    s->nan |= isnan(x);
    s->pinf |= x == INFINITY;
    s->ninf |= x == -INFINITY;
    if (!isfinite(x))
        return;
    s->sum += x;
    s->mag += fabs(x);
    if (x != 0 && low < s->low)
        s->low = low;
}

/* The value and bound of a float sum of n terms with running sums s. */
static void acc_result(const k_acc *s, int64_t n, float *v, double *bound)
{
    double special = s->nan || (s->pinf && s->ninf) ? NAN : s->pinf ? INFINITY : -INFINITY;
    bool any = s->nan || s->pinf || s->ninf;
    *v = (float)(any ? special : s->sum);
    *bound = s->nan ? 0 : s->mag >= 0x1p127 ? INFINITY : any ? 0 : sum_bound(n, s->mag, s->low);
}

static k_want reduce(k_ctx *k, const k_call *c)
{
    k_want w = { 0 };
    if (c->code != ND_SUM && c->code != ND_MAX)
        ERR(ND_ERR_ARG, "op %d is unknown: it must be ND_SUM or ND_MAX", c->code);
    ERR_IF(ND_ERR_ARG, bad_array(k, c, 0, "a"));
    const k_arr *a = arg(c, 0);
    ERR_NULL(c->out == K_OUT_NULL, "out");
    if (c->n < ND_ALL_AXES || c->n > a->ndim)
        ERR(ND_ERR_ARG, "naxes %d is out of range: it must be 0..%d or ND_ALL_AXES (-1)", c->n,
            a->ndim);
    if (c->n > 0 && c->list_null[0])
        ERR(ND_ERR_ARG, "argument 'axes' is NULL but naxes is %d", c->n);
    bool red[ND_MAX_DIMS];
    for (int d = 0; d < a->ndim; d++)
        red[d] = c->n == ND_ALL_AXES;
    for (int i = 0; i < c->n; i++) {
        int ax;
        if (!norm_axis((int)c->list[0][i], a->ndim, &ax))
            ERR(ND_ERR_AXIS, "axis %d is out of range for %d axes", (int)c->list[0][i],
                a->ndim);
        if (red[ax])
            ERR(ND_ERR_AXIS, "axis %d is named twice", ax);
        red[ax] = true;
    }
    for (int d = 0; d < a->ndim; d++)
        if (c->code == ND_MAX && red[d] && a->shape[d] == 0)
            ERR(ND_ERR_SHAPE, "the max over axis %d of size 0 is undefined", d);
    /* kept axes (the output's), reduced axes (each output's block); a
     * reduced axis of stride 0 repeats its block `rep` times, so it is
     * counted, not walked (a broadcast of 2^31 elements is one number) */
    int nk = 0, nr = 0, nout = 0;
    int64_t kshape[ND_MAX_DIMS], rshape[ND_MAX_DIMS], oshape[ND_MAX_DIMS], rep = 1, count = 1;
    int kax[ND_MAX_DIMS], rax[ND_MAX_DIMS];
    for (int d = 0; d < a->ndim; d++) {
        if (red[d] && a->strides[d] == 0 && a->shape[d] > 0) {
            rep *= a->shape[d];
        } else if (red[d]) {
            rax[nr] = d;
            rshape[nr++] = a->shape[d];
        } else {
            kax[nk] = d;
            kshape[nk++] = a->shape[d];
        }
        if (red[d])
            count *= a->shape[d];
        if (!red[d] || c->keepdims)
            oshape[nout++] = red[d] ? 1 : a->shape[d];
    }
    ERR_IF(ND_ERR_NOMEM, no_memory(k, nout, oshape));
    float *v = new_array(k, &w, nout, oshape, c->code == ND_SUM ? K_BOUND : K_EXACT_ZERO);
    int64_t nouts = k_numel(nk, kshape), nblock = k_numel(nr, rshape);
    w.bound = k_mem(k, (size_t)(nouts > 0 ? nouts : 1) * sizeof(double));
    const float *data = c->bufs[a->buf].v;
    int64_t idx[ND_MAX_DIMS] = { 0 };   /* a reduced axis stays at 0: the block's start */
    for (int64_t o = 0; o < nouts; o++) {
        int64_t ki[ND_MAX_DIMS], ri[ND_MAX_DIMS] = { 0 };
        k_unravel(o, nk, kshape, ki);
        for (int i = 0; i < nk; i++)
            idx[kax[i]] = ki[i];
        int64_t off = k_offset(a, idx);
        k_acc s = { .low = 1000 };
        float mx = 0;
        for (int64_t r = 0; r < nblock; r++) {   /* an odometer over the block */
            float x = data[off];
            acc_add(&s, x, low_bit(x));
            if (r == 0 || x > mx)
                mx = x;
            for (int i = nr - 1; i >= 0; i--) {
                off += a->strides[rax[i]];
                if (++ri[i] < rshape[i])
                    break;
                off -= ri[i] * a->strides[rax[i]];
                ri[i] = 0;
            }
        }
        if (c->code == ND_MAX) {
            v[o] = s.nan ? NAN : mx;
            continue;
        }
        s.sum *= (double)rep;
        s.mag *= (double)rep;
        acc_result(&s, count, &v[o], &w.bound[o]);
    }
    return w;
}

/* Matrix input i of c as doubles, row-major, read at c's batch index idx
 * (nd axes) through the input's strides, a size-1 batch axis at 0; *low
 * gets each element's lowest bit. */
static double *matrix_of(k_ctx *k, const k_call *c, int i, int nd, int64_t *idx, int **low)
{
    const k_arr *x = &c->args[i];
    int64_t rows = x->shape[x->ndim - 2], cols = x->shape[x->ndim - 1], n = rows * cols;
    double *m = k_mem(k, (size_t)(n > 0 ? n : 1) * sizeof(double));
    *low = k_mem(k, (size_t)(n > 0 ? n : 1) * sizeof(int));
    for (int64_t e = 0; e < n; e++) {
        idx[nd - 2] = e / cols;
        idx[nd - 1] = e % cols;
        float v = k_input_at(c, i, nd, idx);
        m[e] = v;
        (*low)[e] = low_bit(v);
    }
    return m;
}

static k_want matmul(k_ctx *k, const k_call *c)
{
    k_want w = { 0 };
    const char *why;
    ERR_IF(ND_ERR_ARG, bad_array(k, c, 0, "a"));
    ERR_IF(ND_ERR_ARG, bad_array(k, c, 1, "b"));
    ERR_NULL(c->out == K_OUT_NULL, "out");
    if (!same_device(c, 0, 1))
        ERR(ND_ERR_DEVICE, "a and b live on different devices");
    const k_arr *a = arg(c, 0), *b = arg(c, 1);
    if (a->ndim < 2 || b->ndim < 2)
        ERR(ND_ERR_ARG, "both inputs need 2 or more axes (a has %d, b has %d)", a->ndim, b->ndim);
    int64_t m = a->shape[a->ndim - 2], kk = a->shape[a->ndim - 1], n = b->shape[b->ndim - 1];
    if (b->shape[b->ndim - 2] != kk)
        ERR(ND_ERR_SHAPE, "a has %" PRId64 " columns but b has %" PRId64 " rows", kk,
            b->shape[b->ndim - 2]);
    int nb;
    int64_t shape[ND_MAX_DIMS], sx[ND_MAX_DIMS], sy[ND_MAX_DIMS];   /* the batch axes first */
    if (!k_broadcast_shape(a->ndim - 2, a->shape, b->ndim - 2, b->shape, &nb, shape))
        ERR(ND_ERR_SHAPE, "the batch axes (all but the last two) do not broadcast");
    int nd = nb + 2;
    /* the result, and a and b broadcast to the batch, must be valid shapes */
    memcpy(sx, shape, sizeof sx);
    memcpy(sy, shape, sizeof sy);
    shape[nb] = sx[nb] = m;
    shape[nb + 1] = sy[nb + 1] = n;
    sx[nb + 1] = sy[nb] = kk;
    const int64_t *made[3] = { shape, sx, sy };
    static const char *const what[3] = { "the result", "a broadcast to the batch axes",
                                         "b broadcast to the batch axes" };
    for (int i = 0; i < 3; i++)
        if ((why = bad_shape(k, nd, made[i])) != NULL)
            ERR(ND_ERR_ARG, "%s would not be a valid shape: %s", what[i], why);
    ERR_IF(ND_ERR_NOMEM, no_memory(k, nd, shape));
    float *v = new_array(k, &w, nd, shape, K_BOUND);
    int64_t total = k_numel(nd, shape), mats = k_numel(nb, shape);
    w.bound = k_mem(k, (size_t)(total > 0 ? total : 1) * sizeof(double));
    /* with no element (an empty batch), m * n may still be 2^58: nothing to sum */
    k_acc *s = total > 0 ? k_mem(k, (size_t)(m * n) * sizeof *s) : NULL;
    for (int64_t t = 0; t < mats && total > 0; t++) {
        int64_t idx[ND_MAX_DIMS];
        int *lx, *ly;
        k_unravel(t, nb, shape, idx);
        const double *x = matrix_of(k, c, 0, nd, idx, &lx), *y = matrix_of(k, c, 1, nd, idx, &ly);
        for (int64_t e = 0; e < m * n; e++)
            s[e] = (k_acc){ .low = 1000 };
        for (int64_t i = 0; i < m; i++)
            for (int64_t p = 0; p < kk; p++)
                for (int64_t j = 0; j < n; j++) {
                    /* a product that is not a float rounds: no exact sum then */
                    double xy = x[i * kk + p] * y[p * n + j];
                    acc_add(&s[i * n + j], xy, (double)(float)xy == xy ? lx[i * kk + p] +
                                                   ly[p * n + j] : -1000);
                }
        for (int64_t e = 0; e < m * n; e++) {
            int64_t o = t * m * n + e;
            acc_result(&s[e], 1, &v[o], &w.bound[o]);
            if (w.bound[o] > 0 && isfinite(w.bound[o]))   /* any order: 2 (k + 2) u */
                w.bound[o] = 2 * (double)(kk + 2) * 0x1p-24 * s[e].mag + 1e-38;
        }
    }
    return w;
}

/* ---------------------------------------------------------------------- */
/* Lessons 6 and 7                                                        */
/* ---------------------------------------------------------------------- */

/* The simplified permutation, as nd.h defines it. */
static void simplify_perm(int ndim, const int64_t *shape, const int64_t *perm, int *out_n,
                          int64_t *out_shape, int64_t *out_perm)
{
    int id[K_LIST], m = 0, n = 0, p[K_LIST], group[K_LIST], g = -1, q = 0;
    int64_t sizes[K_LIST], gshape[K_LIST];
    bool joins[K_LIST] = { false };
    /* the axes of sizes other than 1 keep their order and are numbered
     * 0..m-1; perm's entries that name them, renumbered, are the
     * permutation left */
    for (int a = 0; a < ndim; a++) {
        id[a] = shape[a] == 1 ? -1 : m;
        if (shape[a] != 1)
            sizes[m++] = shape[a];
    }
    for (int i = 0; i < ndim; i++) {
        int src = (int)perm[i];
        if (id[src] != -1)
            p[n++] = id[src];
    }
    for (int i = 1; i < n; i++)
        if (p[i] == p[i - 1] + 1)
            joins[p[i]] = true;
    for (int a = 0; a < m; a++) {
        if (!joins[a])
            gshape[++g] = 1;
        group[a] = g;
        gshape[g] *= sizes[a];
    }
    for (int i = 0; i < n; i++)
        if (!joins[p[i]])
            out_perm[q++] = group[p[i]];
    memcpy(out_shape, gshape, (size_t)q * sizeof *gshape);
    *out_n = q;
}

/* Why perm, of ndim entries, is not a permutation of 0..ndim-1, or NULL. */
static const char *bad_perm(k_ctx *k, int ndim, const int64_t *perm)
{
    bool seen[K_LIST] = { false };
    for (int i = 0; i < ndim; i++) {
        if (perm[i] < 0 || perm[i] >= ndim)
            return say(k, "perm names axis %" PRId64 ", out of range for %d axes", perm[i], ndim);
        if (seen[perm[i]])
            return say(k, "perm names axis %" PRId64 " twice", perm[i]);
        seen[perm[i]] = true;
    }
    return NULL;
}

static k_want lesson7(k_ctx *k, const k_call *c)
{
    k_want w = { 0 };
    if (c->op == K_INDEX_TO_OFFSET) {   /* positions at[0] + j * at[3], j < at[2] */
        int64_t n = c->at[2] > 0 ? c->at[2] : 1, step = c->at[3] > 0 ? c->at[3] : 1;
        int64_t idx[ND_MAX_DIMS], *v = ivals(k, &w, (int)n);
        for (int64_t j = 0; j < n; j++) {
            k_unravel(c->at[0] + j * step, c->n, c->list[0], idx);
            v[j] = c->at[1];
            for (int d = 0; d < c->n; d++)
                v[j] += idx[d] * c->list[1][d];
        }
        return w;
    }
    if (c->op == K_SIMPLIFY_PERM) {
        int64_t *v = ivals(k, &w, 1 + 2 * K_LIST);
        if (c->at[0]) {   /* in place: untouched outputs are the inputs */
            memcpy(v + 1, c->list[0], K_LIST * sizeof(int64_t));
            memcpy(v + 1 + K_LIST, c->list[1], K_LIST * sizeof(int64_t));
        }
        ERR_IF(ND_ERR_ARG, bad_shape(k, c->n, list_of(c, 0)));
        ERR_NULL(c->n > 0 && c->list_null[1], "perm");
        ERR_IF(ND_ERR_AXIS, bad_perm(k, c->n, c->list[1]));
        ERR_NULL(c->list_null[2] || c->at[1], c->list_null[2] ? "out_ndim"
                 : c->at[1] & 1 ? "out_shape" : "out_perm");
        int q;
        simplify_perm(c->n, c->list[0], c->list[1], &q, v + 1, v + 1 + K_LIST);
        v[0] = q;
        return w;
    }
    /* K_PERMUTE_BYTES: at[0] elem_bytes, at[1] src offset, at[2] dst
     * offset (bytes), at[3] flags (1 src NULL, 2 dst NULL, 4 dst in src's
     * buffer); the buffers start 16-byte aligned. */
    int64_t e = c->at[0];
    ivals(k, &w, 1);
    if (c->dev != ND_CPU && c->dev != ND_CUDA)
        ERR(ND_ERR_ARG, "unknown device %d", (int)c->dev);
    if (e != 1 && e != 2 && e != 4 && e != 8 && e != 16)
        ERR(ND_ERR_ARG, "elem_bytes is %" PRId64 "; it must be 1, 2, 4, 8 or 16", e);
    if (c->code > 4 || c->code < -1)
        ERR(ND_ERR_ARG, "version %d is not 0 (auto) to 4", c->code);
    ERR_IF(ND_ERR_ARG, bad_shape(k, c->n, list_of(c, 0)));
    ERR_NULL(c->n > 0 && c->list_null[1], "perm");
    ERR_IF(ND_ERR_AXIS, bad_perm(k, c->n, c->list[1]));
    int64_t numel = k_numel(c->n, c->list[0]), bytes = numel * e;
    int64_t src = c->at[1], dst = c->at[2] + (c->at[3] & 4 ? 0 : ((int64_t)1 << 40));
    ERR_NULL(numel > 0 && (c->at[3] & 3), c->at[3] & 1 ? "src_ptr" : "dst_ptr");
    if (numel > 0 && src < dst + bytes && dst < src + bytes)
        ERR(ND_ERR_ARG, "src and dst overlap");
    /* the plan: simplify, then the movement unit and the version */
    int n;
    int64_t sh[K_LIST], p[K_LIST];
    simplify_perm(c->n, c->list[0], c->list[1], &n, sh, p);
    bool identity = true;
    for (int d = 0; d < n; d++)
        identity = identity && p[d] == d;
    bool last_kept = n > 0 && p[n - 1] == n - 1;
    int64_t together = last_kept ? sh[n - 1] * e : e, bits = together | src | dst, unit = 16;
    while (bits % unit != 0)
        unit /= 2;
    if (last_kept)
        sh[n - 1] = together / unit;
    bool aligned = last_kept || unit == e;
    bool t2 = n == 2 && p[0] == 1, t3 = n == 3 && p[0] == 0 && p[1] == 2;
    bool transpose = aligned && (t2 || t3);
    int64_t rows = transpose ? sh[n - 2] : 0, cols = transpose ? sh[n - 1] : 0;
    bool pairs = transpose && e == 2 && rows % 2 == 0 && cols % 2 == 0 && (src | dst) % 4 == 0;
    int version = c->code < 0 ? 0 : c->code, ran = version;
    if (version == 0)
        ran = identity ? 0 : !aligned ? 1 : transpose && rows >= 16 && cols >= 16 ? (pairs ? 4 : 3)
                                                                              : 2;
    else if (version == 2 && !aligned)
        ERR(ND_ERR_ARG, "version 2 (generic) cannot do it: an address is not a multiple of the "
            "element size");
    else if (version == 3 && !transpose)
        ERR(ND_ERR_ARG, "version 3 (transpose) cannot do it: it does not simplify to (1,0) "
            "or (0,2,1) of aligned elements");
    else if (version == 4 && !pairs)
        ERR(ND_ERR_ARG, "version 4 (transpose2) cannot do it: it needs 2-byte elements, "
            "(1,0) or (0,2,1) with both transposed axes even, addresses multiples of 4");
    if (c->code >= 0)
        w.ivals[0] = ran;
    /* the bytes: dst element j is src element (j's index permuted back) */
    k_buf *after = copy_buffers(k, c, &w);
    const char *from = (const char *)c->bufs[0].v + c->at[1];
    char *to = (char *)after[c->at[3] & 4 ? 0 : 1].v + c->at[2];
    int64_t dshape[K_LIST], idx[K_LIST], sidx[K_LIST];
    for (int d = 0; d < c->n; d++)
        dshape[d] = c->list[0][c->list[1][d]];
    for (int64_t j = 0; j < numel; j++) {
        k_unravel(j, c->n, dshape, idx);
        for (int d = 0; d < c->n; d++)
            sidx[c->list[1][d]] = idx[d];
        int64_t i = 0;
        for (int d = 0; d < c->n; d++)
            i = i * c->list[0][d] + sidx[d];
        memcpy(to + j * e, from + i * e, (size_t)e);
    }
    return w;
}

k_want k_reference(k_ctx *k, const k_call *c)
{
    /* k_op lists the operations lesson by lesson */
    if (c->op <= K_DIAGONAL)
        return views(k, c);
    if (c->op <= K_SETITEM_SCALAR)
        return lesson2(k, c);
    if (c->op <= K_UNARY_INTO)
        return ewise(k, c);
    if (c->op == K_REDUCE)
        return reduce(k, c);
    return c->op <= K_MATMUL_NAIVE ? matmul(k, c) : lesson7(k, c);
}
