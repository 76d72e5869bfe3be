/*
 * helpers.c -- the test helpers declared in nd_test.h.  Nothing here calls
 * a lesson's code: views are made with nd_as_strided, values are read
 * from a raw copy of the buffer, and the reference walks index by index.
 */
#include "nd_test.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

nd_device T_DEV = ND_CPU;

/* Fail the running test at file:line with a formatted message. */
static void fail_at(const char *file, int line, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 3, 4)));
static void fail_at(const char *file, int line, const char *fmt, ...)
{
    char msg[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    _ck_assert_failed(file, line, "Failed", "%s", msg);
}

#define FAIL(...) fail_at(__FILE__, __LINE__, __VA_ARGS__)

/* ---------------------------------------------------------------------- */
/* Random numbers: splitmix64                                              */
/* ---------------------------------------------------------------------- */

t_rng t_rng_new(uint64_t seed) { return (t_rng){ seed * 0x9E3779B97F4A7C15ull + 1 }; }

uint64_t t_next(t_rng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

int64_t t_int(t_rng *r, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(t_next(r) % (uint64_t)(hi - lo + 1));
}

float t_float(t_rng *r, float lo, float hi)
{
    return lo + (hi - lo) * (float)((double)(t_next(r) >> 11) / 9007199254740992.0);
}

int t_random_shape(t_rng *r, int ndim, int64_t max_size, bool allow_zero,
                   int64_t max_numel, int64_t *shape)
{
    int64_t n = 1;
    for (int k = 0; k < ndim; k++) {
        int64_t lo = allow_zero ? 0 : 1;
        /* size 1 often: it is where broadcasting and simplification bite */
        shape[k] = t_int(r, 0, 3) == 0 ? 1 : t_int(r, lo, max_size);
        while (shape[k] > 1 && n * shape[k] > max_numel)
            shape[k] /= 2;
        n *= shape[k] > 0 ? shape[k] : 1;
    }
    return ndim;
}

/* ---------------------------------------------------------------------- */
/* Arrays and views                                                       */
/* ---------------------------------------------------------------------- */

static void must(nd_status s, const char *what)
{
    if (s != ND_OK)
        FAIL("test setup: %s failed: %s: %s", what, nd_status_name(s), nd_last_error());
}

int64_t t_numel(int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int k = 0; k < ndim; k++)
        n *= shape[k];
    return n;
}

void *t_alloc(size_t n)
{
    void *p = malloc(n > 0 ? n : 1);
    if (p == NULL)
        FAIL("test setup: out of memory for %zu bytes", n);
    return p;
}

float *t_floats(int64_t n)
{
    float *p = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    if (p == NULL)
        FAIL("test setup: out of memory for %" PRId64 " floats", n);
    return p;
}

static nd_array from_values(int ndim, const int64_t *shape, const float *v)
{
    nd_array a;
    must(nd_from_host(T_DEV, ndim, shape, v, &a), "nd_from_host");
    return a;
}

nd_array t_arange(int ndim, const int64_t *shape)
{
    int64_t n = t_numel(ndim, shape);
    float *v = t_floats(n);
    for (int64_t i = 0; i < n; i++)
        v[i] = (float)i + 0.5f;
    nd_array a = from_values(ndim, shape, v);
    free(v);
    return a;
}

nd_array t_random_array(t_rng *r, int ndim, const int64_t *shape, float lo, float hi)
{
    int64_t n = t_numel(ndim, shape);
    float *v = t_floats(n);
    for (int64_t i = 0; i < n; i++)
        v[i] = t_float(r, lo, hi);
    nd_array a = from_values(ndim, shape, v);
    free(v);
    return a;
}

nd_array t_view_of(int64_t size, const float *values, int ndim, const int64_t *shape,
                   const int64_t *strides, int64_t offset)
{
    nd_array base, v;
    must(nd_from_host(T_DEV, 1, &size, values, &base), "nd_from_host");
    must(nd_as_strided(&base, ndim, shape, strides, offset, &v), "nd_as_strided");
    nd_release(&base);
    return v;
}

void t_row_major(int ndim, const int64_t *shape, int64_t *strides)
{
    int64_t s = 1;
    for (int k = ndim - 1; k >= 0; k--) {
        strides[k] = s;
        s *= shape[k];
    }
}

nd_array t_strided(int64_t size, int ndim, const int64_t *shape, const int64_t *strides,
                   int64_t offset)
{
    nd_array base = t_arange(1, &size), v;
    must(nd_as_strided(&base, ndim, shape, strides, offset, &v), "nd_as_strided");
    nd_release(&base);
    return v;
}

nd_array t_array_of(int ndim, const int64_t *shape, const float *values)
{
    return from_values(ndim, shape, values);
}

const float *t_iota(int64_t n)
{
    static float v[64];
    if (n > 64)
        FAIL("t_iota: %" PRId64 " values asked, 64 at most", n);
    for (int64_t i = 0; i < n; i++)
        v[i] = (float)i;
    return v;
}

static bool same_layout_upto(const nd_array *a, const nd_array *b, int n)
{
    if (a->buf != b->buf || a->ndim != b->ndim || a->offset != b->offset)
        return false;
    for (int k = 0; k < n; k++)
        if (a->shape[k] != b->shape[k] || a->strides[k] != b->strides[k])
            return false;
    return true;
}

bool t_same_view(const nd_array *a, const nd_array *b)
{
    return same_layout_upto(a, b, a->ndim < 0 || a->ndim > ND_MAX_DIMS ? 0 : a->ndim);
}

bool t_same_struct(const nd_array *a, const nd_array *b)
{
    return same_layout_upto(a, b, ND_MAX_DIMS);
}

nd_array t_nan_array(int ndim, const int64_t *shape)
{
    nd_array a;
    must(nd_full(T_DEV, ndim, shape, NAN, &a), "nd_full(NAN)");
    return a;
}

/* The view a permute-and-slice chain of a larger compact array would give.
 * With `repeat`, some axes get stride 0 as well. */
static nd_array random_view(t_rng *r, int ndim, const int64_t *shape, bool repeat)
{
    int64_t b[ND_MAX_DIMS], bs[ND_MAX_DIMS], step[ND_MAX_DIMS];
    int perm[ND_MAX_DIMS];
    for (int k = 0; k < ndim; k++)
        perm[k] = k;
    for (int k = ndim - 1; k > 0; k--) {
        int j = (int)t_int(r, 0, k), t = perm[k];
        perm[k] = perm[j];
        perm[j] = t;
    }
    /* the base: each axis long enough for its steps, plus a little slack */
    for (int k = 0; k < ndim; k++) {
        step[k] = t_int(r, 1, 3) * (t_int(r, 0, 2) == 0 ? -1 : 1);
        int64_t need = shape[k] > 0 ? (shape[k] - 1) * llabs(step[k]) + 1 : 0;
        b[k] = need + t_int(r, 0, 2);
    }
    /* base strides: row-major in the order perm[0] (slowest) .. perm[ndim-1] */
    int64_t total = 1;
    for (int j = ndim - 1; j >= 0; j--) {
        bs[perm[j]] = total;
        total *= b[perm[j]] > 0 ? b[perm[j]] : 1;
    }
    int64_t pad = t_int(r, 0, 3);
    int64_t offset = pad, strides[ND_MAX_DIMS];
    for (int k = 0; k < ndim; k++) {
        strides[k] = step[k] * bs[k];
        if (shape[k] > 1 && repeat && t_int(r, 0, 3) == 0)
            strides[k] = 0;
        if (shape[k] == 0 || b[k] == 0)
            continue;
        int64_t span = (shape[k] - 1) * llabs(step[k]);
        int64_t first = t_int(r, 0, b[k] - 1 - span);
        offset += (step[k] < 0 ? b[k] - 1 - first : first) * bs[k];
    }
    int64_t size = pad + total + t_int(r, 0, 3);
    int64_t bshape[1] = { size };
    nd_array base = t_arange(1, bshape), view;
    must(nd_as_strided(&base, ndim, shape, strides, offset, &view), "nd_as_strided");
    nd_release(&base);
    return view;
}

nd_array t_random_view(t_rng *r, int ndim, const int64_t *shape)
{
    return random_view(r, ndim, shape, false);
}

nd_array t_random_read_view(t_rng *r, int ndim, const int64_t *shape)
{
    return random_view(r, ndim, shape, true);
}

/* ---------------------------------------------------------------------- */
/* The reference                                                          */
/* ---------------------------------------------------------------------- */

float *t_buffer(const nd_array *a, int64_t *n)
{
    if (a == NULL || a->buf == NULL)
        FAIL("t_buffer: the array has no buffer (was it released, or never made?)");
    size_t nbytes = a->buf->nbytes;
    float *v = t_floats((int64_t)(nbytes / sizeof(float)));
    must(nd_buffer_to_host(a, v, nbytes > 0 ? nbytes : sizeof(float)), "nd_buffer_to_host");
    if (n != NULL)
        *n = (int64_t)(nbytes / sizeof(float));
    return v;
}

void t_unravel(int64_t i, int ndim, const int64_t *shape, int64_t *index)
{
    for (int k = ndim - 1; k >= 0; k--) {
        index[k] = shape[k] > 0 ? i % shape[k] : 0;
        i = shape[k] > 0 ? i / shape[k] : 0;
    }
}

float *t_gather(const nd_array *a)
{
    if (a->ndim < 0 || a->ndim > ND_MAX_DIMS)
        FAIL("t_gather: the array has ndim %d, outside 0..%d", a->ndim, ND_MAX_DIMS);
    int64_t size, n = t_numel(a->ndim, a->shape);
    float *buf = t_buffer(a, &size);
    float *out = t_floats(n);
    for (int64_t i = 0; i < n; i++) {
        int64_t idx[ND_MAX_DIMS], off = a->offset;
        t_unravel(i, a->ndim, a->shape, idx);
        for (int k = 0; k < a->ndim; k++)
            off += idx[k] * a->strides[k];
        if (off < 0 || off >= size) {
            free(buf);
            free(out);
            FAIL("the view %s reaches element %" PRId64 " at index %s, outside its buffer "
                 "of %" PRId64 " elements", t_describe(a), off,
                 t_index_str(a->ndim, idx), size);
        }
        out[i] = buf[off];
    }
    free(buf);
    return out;
}

static const char *describe(const nd_array *a, char *dst, size_t cap)
{
    char sh[200], st[200];
    if (a == NULL || a->buf == NULL || a->ndim < 0 || a->ndim > ND_MAX_DIMS) {
        snprintf(dst, cap, "(no array)");
        return dst;
    }
    snprintf(dst, cap, "shape=%s strides=%s offset=%" PRId64,
             nd_shape_str(a->ndim, a->shape, sh, sizeof sh),
             nd_shape_str(a->ndim, a->strides, st, sizeof st), a->offset);
    return dst;
}

const char *t_describe(const nd_array *a)
{
    static char text[512];
    return describe(a, text, sizeof text);
}

const char *t_describe2(const nd_array *a)
{
    static char text[512];
    return describe(a, text, sizeof text);
}

const char *t_index_str(int ndim, const int64_t *index)
{
    static char text[200];
    return nd_shape_str(ndim, index, text, sizeof text);
}

/* ---------------------------------------------------------------------- */
/* Assertions                                                             */
/* ---------------------------------------------------------------------- */

void t_ok(nd_status s, const char *call, const char *file, int line)
{
    if (s != ND_OK)
        fail_at(file, line, "%s returned %s: %s", call, nd_status_name(s), nd_last_error());
}

void t_err(nd_status got, nd_status want, const char *call, const char *file, int line)
{
    if (got != want)
        fail_at(file, line, "%s returned %s, expected %s%s%s", call, nd_status_name(got),
                nd_status_name(want), got == ND_OK ? "" : ": ",
                got == ND_OK ? "" : nd_last_error());
    if (nd_last_error()[0] == '\0')
        fail_at(file, line, "%s returned %s but set no message for nd_last_error()",
                call, nd_status_name(got));
}

void t_err_op(nd_status got, nd_status want, const char *op, const char *call,
              const char *file, int line)
{
    t_err(got, want, call, file, line);
    if (strstr(nd_last_error(), op) == NULL)
        fail_at(file, line, "%s failed rightly, but its message \"%s\" does not name the "
                "operation '%s'", call, nd_last_error(), op);
}

void t_assert_shape(const nd_array *a, int ndim, const int64_t *shape, const char *what)
{
    bool same = a->ndim == ndim;
    for (int k = 0; same && k < ndim; k++)
        same = a->shape[k] == shape[k];
    if (!same) {
        char want[200];
        FAIL("%s: expected shape %s, got %s", what, nd_shape_str(ndim, shape, want, sizeof want),
             t_describe(a));
    }
}

static bool same_float(float got, float want, double rtol, double atol)
{
    if (isnan(want))
        return isnan(got);
    if (isinf(want))
        return got == want;
    return fabs((double)got - (double)want) <= atol + rtol * fabs((double)want);
}

static void compare(const float *got, const float *want, int ndim, const int64_t *shape,
                    double rtol, double atol, const char *what, const char *view,
                    const char *hint)
{
    int64_t n = t_numel(ndim, shape), bad = 0, first = -1;
    for (int64_t i = 0; i < n; i++) {
        if (!same_float(got[i], want[i], rtol, atol)) {
            if (first < 0)
                first = i;
            bad++;
        }
    }
    if (first < 0)
        return;
    int64_t idx[ND_MAX_DIMS];
    t_unravel(first, ndim, shape, idx);
    char sh[200];
    fail_at(__FILE__, __LINE__,
            "%s%s%s: %" PRId64 " of %" PRId64 " elements wrong; first at index %s: "
            "expected %.9g, got %.9g%s (shape %s%s%s)%s%s",
            what, view[0] ? " of " : "", view, bad, n, t_index_str(ndim, idx),
            (double)want[first], (double)got[first],
            isnan(got[first]) ? ", the NaN the output was filled with: never written" : "",
            nd_shape_str(ndim, shape, sh, sizeof sh),
            rtol > 0 || atol > 0 ? ", tolerance " : "",
            rtol > 0 || atol > 0 ? "rtol/atol as stated in the test" : "",
            hint && hint[0] ? ". Hint: " : "", hint ? hint : "");
}

void t_assert_values(const nd_array *a, const float *want, const char *what,
                     const char *hint)
{
    t_assert_close(a, want, 0, 0, what, hint);
}

void t_assert_close(const nd_array *a, const float *want, double rtol, double atol,
                    const char *what, const char *hint)
{
    float *got = t_gather(a);
    char view[512];
    describe(a, view, sizeof view);
    /* compare() fails by longjmp-free abort of the child; freeing first
     * would lose `got`, and the child exits anyway, so order is moot. */
    compare(got, want, a->ndim, a->shape, rtol, atol, what, view, hint);
    free(got);
}

void t_assert_floats(const float *got, const float *want, int ndim, const int64_t *shape,
                     const char *what, const char *hint)
{
    compare(got, want, ndim, shape, 0, 0, what, "", hint);
}

void t_assert_outside_unchanged(const nd_array *base, const float *before,
                                const nd_array *view, const char *what)
{
    int64_t size;
    float *now = t_buffer(base, &size);
    bool *inside = calloc((size_t)(size > 0 ? size : 1), sizeof *inside);
    if (inside == NULL)
        FAIL("test setup: out of memory");
    int64_t n = t_numel(view->ndim, view->shape);
    for (int64_t i = 0; i < n; i++) {
        int64_t idx[ND_MAX_DIMS], off = view->offset;
        t_unravel(i, view->ndim, view->shape, idx);
        for (int k = 0; k < view->ndim; k++)
            off += idx[k] * view->strides[k];
        if (off >= 0 && off < size)
            inside[off] = true;
    }
    for (int64_t off = 0; off < size; off++) {
        if (!inside[off] && !same_float(now[off], before[off], 0, 0)) {
            double w = before[off], g = now[off];
            free(now);
            free(inside);
            FAIL("%s wrote outside the view %s: buffer element %" PRId64
                 " (not in the view) was %.9g, is now %.9g. Hint: loop over the view's "
                 "shape, not the buffer's size, and add the view's offset",
                 what, t_describe(view), off, w, g);
        }
    }
    free(now);
    free(inside);
}

void t_poison(nd_array *out) { memset(out, 0xAB, sizeof *out); }

void t_assert_untouched(const nd_array *out, const char *what)
{
    const unsigned char *p = (const unsigned char *)out;
    for (size_t i = 0; i < sizeof *out; i++)
        if (p[i] != 0xAB)
            FAIL("%s failed but wrote to its output argument (byte %zu changed): "
                 "on an error, leave every output as it was", what, i);
}
