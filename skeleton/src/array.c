/*
 * array.c -- the framework every lesson stands on: errors, buffers and
 * their reference counts, making arrays, copying them out, printing them.
 * Students read this file but do not change it.
 */
#include "internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */
/* ------------------------------------------------------------------------ */

static _Thread_local char last_error[1024];

nd_status nd_fail(nd_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return s;
}

nd_status nd_not_implemented(const char *name, int lesson)
{
    return nd_fail(ND_ERR_NOT_IMPLEMENTED, "not implemented: %s (lesson %d)",
                   name, lesson);
}

const char *nd_last_error(void) { return last_error; }

void nd_clear_error(void) { last_error[0] = '\0'; }

const char *nd_status_name(nd_status s)
{
    switch (s) {
    case ND_OK: return "ND_OK";
    case ND_ERR_ARG: return "ND_ERR_ARG";
    case ND_ERR_SHAPE: return "ND_ERR_SHAPE";
    case ND_ERR_AXIS: return "ND_ERR_AXIS";
    case ND_ERR_INDEX: return "ND_ERR_INDEX";
    case ND_ERR_LAYOUT: return "ND_ERR_LAYOUT";
    case ND_ERR_NOMEM: return "ND_ERR_NOMEM";
    case ND_ERR_DEVICE: return "ND_ERR_DEVICE";
    case ND_ERR_NOT_IMPLEMENTED: return "ND_ERR_NOT_IMPLEMENTED";
    }
    return "ND_ERR_(unknown)";
}

char *nd_shape_str(int ndim, const int64_t *shape, char *dst, size_t cap)
{
    if (dst == NULL || cap == 0)
        return dst;
    size_t n = (size_t)snprintf(dst, cap, "(");
    for (int k = 0; k < ndim && shape != NULL && n < cap; k++)
        n += (size_t)snprintf(dst + n, cap - n, "%s%" PRId64, k ? "," : "", shape[k]);
    /* NumPy writes a 1-tuple as (5,) */
    if (n < cap)
        snprintf(dst + n, cap - n, "%s)", ndim == 1 ? "," : "");
    return dst;
}

/* Room for any shape or strides printed by nd_shape_str. */
#define SHAPE_STR 200

char *nd_axes_str(int n, const int *axes, char *dst, size_t cap)
{
    int64_t wide[ND_MAX_DIMS];
    if (n < 0 || n > ND_MAX_DIMS || axes == NULL)
        n = 0;
    for (int k = 0; k < n; k++)
        wide[k] = axes[k];
    return nd_shape_str(n, wide, dst, cap);
}

nd_status nd_check_array(const nd_array *a, const char *op, const char *arg)
{
    if (a == NULL)
        return nd_fail(ND_ERR_ARG, "%s: argument '%s' is NULL", op, arg);
    if (a->buf == NULL)
        return nd_fail(ND_ERR_ARG, "%s: array '%s' has no buffer (released, or never made)",
                       op, arg);
    if (a->ndim < 0 || a->ndim > ND_MAX_DIMS)
        return nd_fail(ND_ERR_ARG, "%s: array '%s' has ndim %d; it must be 0..%d",
                       op, arg, a->ndim, ND_MAX_DIMS);
    return ND_OK;
}

nd_status nd_check_shape(int ndim, const int64_t *shape, const char *op)
{
    if (ndim < 0 || ndim > ND_MAX_DIMS)
        return nd_fail(ND_ERR_ARG, "%s: ndim %d is out of range; it must be 0..%d",
                       op, ndim, ND_MAX_DIMS);
    if (ndim > 0 && shape == NULL)
        return nd_fail(ND_ERR_ARG, "%s: shape is NULL but ndim is %d", op, ndim);
    /* n: the product of the sizes other than 0.  Skipping the zeros makes
     * the check the same for every order of the axes. */
    int64_t n = 1;
    for (int k = 0; k < ndim; k++) {
        if (shape[k] < 0) {
            char s[SHAPE_STR];
            return nd_fail(ND_ERR_ARG, "%s: shape %s has a negative size on axis %d",
                           op, nd_shape_str(ndim, shape, s, sizeof s), k);
        }
        if (shape[k] > 0 && (!nd_mul_ok(n, shape[k], &n) || n > ND_MAX_NUMEL)) {
            char s[SHAPE_STR];
            return nd_fail(ND_ERR_ARG, "%s: shape %s has too many elements: its sizes other "
                           "than 0 multiply to more than 2^58 (ND_MAX_NUMEL)",
                           op, nd_shape_str(ndim, shape, s, sizeof s));
        }
    }
    return ND_OK;
}

int64_t nd_shape_numel(int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int k = 0; k < ndim; k++)
        n *= shape[k];
    return n;
}

nd_status nd_normalize_axis(int axis, int ndim, const char *op, int *out)
{
    if (axis < -ndim || axis >= ndim)
        return nd_fail(ND_ERR_AXIS, "%s: axis %d is out of range for an array of %d axes",
                       op, axis, ndim);
    *out = axis < 0 ? axis + ndim : axis;
    return ND_OK;
}

nd_status nd_check_same_device(const nd_array *a, const nd_array *b, const char *op)
{
    if (a->buf->device != b->buf->device)
        return nd_fail(ND_ERR_DEVICE, "%s: arrays live on different devices (%s and %s)",
                       op, nd_device_name(a->buf->device), nd_device_name(b->buf->device));
    return ND_OK;
}

/* ------------------------------------------------------------------------ */
/* Devices: raw memory on the CPU, or on the CUDA device (src/device.cu).   */
/* ------------------------------------------------------------------------ */

const char *nd_device_name(nd_device dev)
{
    switch (dev) {
    case ND_CPU: return "cpu";
    case ND_CUDA: return "cuda";
    }
    return "(unknown)";
}

nd_status nd_device_available(nd_device dev, const char **name)
{
    if (dev == ND_CPU) {
        if (name != NULL)
            *name = "cpu";
        return ND_OK;
    }
    if (dev == ND_CUDA)
        return nd_cuda_probe(name);
    return nd_fail(ND_ERR_ARG, "device_available: unknown device %d; it must be ND_CPU (0) "
                   "or ND_CUDA (1)", (int)dev);
}

/* Host allocations are 64-byte aligned (a cache line, and any SIMD load). */
#define ALIGN 64

/* Whether arrays can be made on dev, as nd_device_available, with errors
 * that name the operation `op` that wants one. */
static nd_status device_usable(nd_device dev, const char *op)
{
    if (dev != ND_CPU && dev != ND_CUDA)
        return nd_fail(ND_ERR_ARG, "%s: unknown device %d; it must be ND_CPU (0) or "
                       "ND_CUDA (1)", op, (int)dev);
    nd_status s = dev == ND_CUDA ? nd_cuda_probe(NULL) : ND_OK;
    if (s != ND_OK) {
        /* CUDA's own message says what is wrong with the device */
        char why[sizeof last_error];
        snprintf(why, sizeof why, "%s", last_error);
        return nd_fail(s, "%s: the CUDA device cannot be used (%s)", op, why);
    }
    return ND_OK;
}

static nd_status device_alloc(nd_device dev, size_t nbytes, void **ptr, const char *op)
{
    nd_status s = device_usable(dev, op);
    if (s != ND_OK)
        return s;
    if (dev == ND_CUDA)
        return nd_cuda_alloc(nbytes, ptr, op);
    size_t rounded = (nbytes + ALIGN - 1) / ALIGN * ALIGN;
    void *p = aligned_alloc(ALIGN, rounded ? rounded : ALIGN);
    if (p == NULL)
        return nd_fail(ND_ERR_NOMEM, "%s: cannot allocate %zu bytes on %s",
                       op, nbytes, nd_device_name(dev));
    *ptr = p;
    return ND_OK;
}

static void device_free(nd_device dev, void *ptr)
{
    if (dev == ND_CUDA)
        nd_cuda_free(ptr);
    else
        free(ptr);
}

/* Copy n bytes from host memory to a buffer on `dev` (to_dev), or back. */
static nd_status device_copy(nd_device dev, void *dst, const void *src, size_t n,
                             bool to_dev, const char *op)
{
    if (dev == ND_CUDA)
        return nd_cuda_copy(dst, src, n, to_dev ? ND_COPY_H2D : ND_COPY_D2H, op);
    if (n > 0)
        memcpy(dst, src, n);
    return ND_OK;
}

/* ------------------------------------------------------------------------ */
/* Buffers and views                                                        */
/* ------------------------------------------------------------------------ */

/* A new buffer of `nbytes` on dev with refcount 1, contents undefined. */
static nd_status buffer_new(nd_device dev, size_t nbytes, nd_buffer **out, const char *op)
{
    nd_buffer *b = malloc(sizeof *b);
    if (b == NULL)
        return nd_fail(ND_ERR_NOMEM, "%s: cannot allocate a buffer header", op);
    nd_status s = device_alloc(dev, nbytes, &b->ptr, op);
    if (s != ND_OK) {
        free(b);
        return s;
    }
    b->nbytes = nbytes;
    b->refcount = 1;
    b->device = dev;
    *out = b;
    return ND_OK;
}

void nd_release(nd_array *a)
{
    if (a == NULL)
        return;
    if (a->buf != NULL && --a->buf->refcount == 0) {
        device_free(a->buf->device, a->buf->ptr);
        free(a->buf);
    }
    memset(a, 0, sizeof *a);
}

void nd_replace(const nd_array *in, nd_array *out, const nd_array *made)
{
    if (out == in)
        nd_release(out);
    *out = *made;
}

nd_status nd_share(const nd_array *a, nd_array *out)
{
    nd_status s = nd_check_array(a, "share", "a");
    if (s != ND_OK)
        return s;
    if (out == NULL)
        return nd_fail(ND_ERR_ARG, "share: argument 'out' is NULL");
    nd_array made = *a;
    made.buf->refcount++;
    nd_replace(a, out, &made);
    return ND_OK;
}

int64_t nd_numel(const nd_array *a)
{
    if (a == NULL || a->ndim < 0 || a->ndim > ND_MAX_DIMS)
        return 0;
    return nd_shape_numel(a->ndim, a->shape);
}

/* Row-major strides of a shape.  Lesson 1 asks students to write the same
 * loop as nd_compact_strides; the framework keeps its own copy so that
 * making arrays works before lesson 1 is done. */
static void row_major_strides(int ndim, const int64_t *shape, int64_t *strides)
{
    int64_t s = 1;
    for (int k = ndim - 1; k >= 0; k--) {
        strides[k] = s;
        s *= shape[k];
    }
}

nd_status nd_empty_for(const char *op, nd_device dev, int ndim, const int64_t *shape,
                       nd_array *out)
{
    nd_status s = nd_check_shape(ndim, shape, op);
    if (s != ND_OK)
        return s;
    if (out == NULL)
        return nd_fail(ND_ERR_ARG, "%s: argument 'out' is NULL", op);
    nd_array made = { .ndim = ndim };
    for (int k = 0; k < ndim; k++)
        made.shape[k] = shape[k];
    row_major_strides(ndim, shape, made.strides);
    size_t nbytes = (size_t)nd_shape_numel(ndim, shape) * sizeof(float);
    s = buffer_new(dev, nbytes, &made.buf, op);
    if (s != ND_OK)
        return s;
    *out = made;
    return ND_OK;
}

nd_status nd_empty(nd_device dev, int ndim, const int64_t *shape, nd_array *out)
{
    return nd_empty_for("empty", dev, ndim, shape, out);
}

/* A new compact array holding a copy of the host floats `data` on dev.
 * `op` names the public function in messages. */
static nd_status from_host_floats(nd_device dev, int ndim, const int64_t *shape,
                                  const float *data, nd_array *out, const char *op)
{
    nd_status s = nd_check_shape(ndim, shape, op);
    if (s != ND_OK)
        return s;
    if (out == NULL)
        return nd_fail(ND_ERR_ARG, "%s: argument 'out' is NULL", op);
    int64_t n = nd_shape_numel(ndim, shape);
    if (data == NULL && n > 0)
        return nd_fail(ND_ERR_ARG, "%s: data is NULL for %" PRId64 " elements", op, n);
    nd_array made;
    if ((s = nd_empty_for(op, dev, ndim, shape, &made)) != ND_OK)
        return s;
    s = device_copy(dev, made.buf->ptr, data, (size_t)n * sizeof(float), true, op);
    if (s != ND_OK) {
        nd_release(&made);
        return s;
    }
    *out = made;
    return ND_OK;
}

nd_status nd_from_host(nd_device dev, int ndim, const int64_t *shape,
                       const float *data, nd_array *out)
{
    return from_host_floats(dev, ndim, shape, data, out, "from_host");
}

/* A new compact array with v[i] = value + i * step in row-major order, for
 * zeros, full and arange.  On the CPU it is filled in place; for another
 * device it is filled in host memory and copied over. */
static nd_status make_ramp(nd_device dev, int ndim, const int64_t *shape, float value,
                           float step, nd_array *out, const char *op)
{
    nd_array made;   /* a NULL out is passed on, so that it is checked as nd_empty does */
    nd_status s = nd_empty_for(op, dev, ndim, shape, out == NULL ? NULL : &made);
    if (s != ND_OK)
        return s;
    int64_t n = nd_numel(&made);
    float *host = dev == ND_CPU ? nd_data(&made) : malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    if (host == NULL) {
        nd_release(&made);
        return nd_fail(ND_ERR_NOMEM, "%s: cannot allocate %" PRId64 " floats", op, n);
    }
    for (int64_t i = 0; i < n; i++)
        host[i] = step == 0.0f ? value : value + (float)i * step; /* keeps -0.0, NaN */
    if (dev != ND_CPU) {
        s = device_copy(dev, made.buf->ptr, host, (size_t)n * sizeof(float), true, op);
        free(host);
        if (s != ND_OK) {
            nd_release(&made);
            return s;
        }
    }
    *out = made;
    return ND_OK;
}

nd_status nd_zeros_for(const char *op, nd_device dev, int ndim, const int64_t *shape,
                       nd_array *out)
{
    return make_ramp(dev, ndim, shape, 0.0f, 0.0f, out, op);
}

nd_status nd_full(nd_device dev, int ndim, const int64_t *shape, float value,
                  nd_array *out)
{
    return make_ramp(dev, ndim, shape, value, 0.0f, out, "full");
}

nd_status nd_zeros(nd_device dev, int ndim, const int64_t *shape, nd_array *out)
{
    return nd_zeros_for("zeros", dev, ndim, shape, out);
}

nd_status nd_arange(nd_device dev, int64_t n, nd_array *out)
{
    return make_ramp(dev, 1, &n, 0.0f, 1.0f, out, "arange");
}

/* The lowest and highest element a view with elements reaches, in *lo and
 * *hi: the offset plus, per axis, (shape[k] - 1) * strides[k] where that is
 * negative, or where it is positive.  false when they lie beyond int64,
 * as with offset INT64_MAX and a stride of 1 (such a view reaches outside
 * every buffer). */
static bool view_reach(int ndim, const int64_t *shape, const int64_t *strides,
                       int64_t offset, int64_t *lo, int64_t *hi)
{
    *lo = *hi = offset;
    for (int k = 0; k < ndim; k++) {
        int64_t reach;
        if (shape[k] == 1)
            continue;   /* never stepped along: any stride will do */
        if (!nd_mul_ok(shape[k] - 1, strides[k], &reach) ||
            !(reach < 0 ? nd_add_ok(*lo, reach, lo) : nd_add_ok(*hi, reach, hi)))
            return false;
    }
    return true;
}

nd_status nd_as_strided(const nd_array *a, int ndim, const int64_t *shape,
                        const int64_t *strides, int64_t offset, nd_array *out)
{
    nd_status s = nd_check_array(a, "as_strided", "a");
    if (s == ND_OK)
        s = nd_check_shape(ndim, shape, "as_strided");
    if (s != ND_OK)
        return s;
    if ((ndim > 0 && strides == NULL) || out == NULL)
        return nd_fail(ND_ERR_ARG, "as_strided: argument '%s' is NULL",
                       out == NULL ? "out" : "strides");
    /* Rules 2 and 3 of "Valid arrays" (nd.h): the elements reached lie in
     * the buffer; an empty view reaches nothing, but its offset must still
     * lie within the buffer (at its end at most). */
    int64_t size = (int64_t)(a->buf->nbytes / sizeof(float)), lo = offset, hi = offset;
    bool empty = nd_shape_numel(ndim, shape) == 0;
    char sh[SHAPE_STR], st[SHAPE_STR];
    if (!empty && !view_reach(ndim, shape, strides, offset, &lo, &hi))
        return nd_fail(ND_ERR_LAYOUT, "as_strided: a view of shape %s, strides %s, offset %"
                       PRId64 " reaches elements beyond the range of int64, outside its "
                       "buffer of %" PRId64 " elements",
                       nd_shape_str(ndim, shape, sh, sizeof sh),
                       nd_shape_str(ndim, strides, st, sizeof st), offset, size);
    if (empty && (offset < 0 || offset > size))
        return nd_fail(ND_ERR_LAYOUT, "as_strided: a view of shape %s, with no elements, has "
                       "offset %" PRId64 "; it must be 0..%" PRId64 " (the buffer's size)",
                       nd_shape_str(ndim, shape, sh, sizeof sh), offset, size);
    if (!empty && (lo < 0 || hi >= size))
        return nd_fail(ND_ERR_LAYOUT, "as_strided: a view of shape %s, strides %s, offset %"
                       PRId64 " reaches elements %" PRId64 "..%" PRId64
                       ", outside its buffer of %" PRId64 " elements",
                       nd_shape_str(ndim, shape, sh, sizeof sh),
                       nd_shape_str(ndim, strides, st, sizeof st), offset, lo, hi, size);
    nd_array made = { .buf = a->buf, .ndim = ndim, .offset = offset };
    for (int k = 0; k < ndim; k++) {
        made.shape[k] = shape[k];
        made.strides[k] = strides[k];
    }
    made.buf->refcount++;
    nd_replace(a, out, &made);
    return ND_OK;
}

/* ------------------------------------------------------------------------ */
/* Copying out                                                              */
/* ------------------------------------------------------------------------ */

nd_status nd_buffer_to_host(const nd_array *a, void *dst, size_t cap)
{
    nd_status s = nd_check_array(a, "buffer_to_host", "a");
    if (s != ND_OK)
        return s;
    if (dst == NULL)
        return nd_fail(ND_ERR_ARG, "buffer_to_host: argument 'dst' is NULL");
    if (cap < a->buf->nbytes)
        return nd_fail(ND_ERR_ARG, "buffer_to_host: dst holds %zu bytes, the buffer has %zu",
                       cap, a->buf->nbytes);
    return device_copy(a->buf->device, dst, a->buf->ptr, a->buf->nbytes, false,
                       "buffer_to_host");
}

nd_status nd_to_host(const nd_array *a, float *dst, size_t cap)
{
    nd_status s = nd_check_array(a, "to_host", "a");
    if (s != ND_OK)
        return s;
    int64_t n = nd_numel(a);
    if (dst == NULL || cap < (size_t)n)
        return nd_fail(ND_ERR_ARG, "to_host: dst %s, the array has %" PRId64 " elements",
                       dst == NULL ? "is NULL" : "is too small", n);
    const float *src = a->buf->ptr;
    float *whole = NULL;
    if (a->buf->device != ND_CPU) {
        if ((whole = malloc(a->buf->nbytes ? a->buf->nbytes : 1)) == NULL)
            return nd_fail(ND_ERR_NOMEM, "to_host: cannot allocate %zu bytes", a->buf->nbytes);
        if ((s = nd_buffer_to_host(a, whole, a->buf->nbytes)) != ND_OK) {
            free(whole);
            return s;
        }
        src = whole;
    }
    /* A plain gather, independent of lesson 2: walk the positions in
     * row-major order, keeping the offset up to date like an odometer. */
    int64_t idx[ND_MAX_DIMS] = { 0 }, off = a->offset;
    for (int64_t i = 0; i < n; i++) {
        dst[i] = src[off];
        for (int k = a->ndim - 1; k >= 0; k--) {
            if (++idx[k] < a->shape[k]) {
                off += a->strides[k];
                break;
            }
            /* back to index 0; never a step past the end, which could
             * overflow with the huge stride of a size-1 axis */
            off -= (idx[k] - 1) * a->strides[k];
            idx[k] = 0;
        }
    }
    free(whole);
    return ND_OK;
}


nd_status nd_to_device(const nd_array *a, nd_device dev, nd_array *out)
{
    nd_status s = nd_check_array(a, "to_device", "a");
    if (s != ND_OK)
        return s;
    if (out == NULL)
        return nd_fail(ND_ERR_ARG, "to_device: argument 'out' is NULL");
    if ((s = device_usable(dev, "to_device")) != ND_OK)
        return s;
    /* Through host memory, with the framework's own gather: moving data
     * between devices must not depend on any lesson's kernels. */
    int64_t n = nd_numel(a);
    float *host = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    if (host == NULL)
        return nd_fail(ND_ERR_NOMEM, "to_device: cannot allocate %" PRId64 " floats", n);
    nd_array made;
    if ((s = nd_to_host(a, host, (size_t)n)) == ND_OK)
        s = from_host_floats(dev, a->ndim, a->shape, host, &made, "to_device");
    free(host);
    if (s != ND_OK)
        return s;
    nd_replace(a, out, &made);
    return ND_OK;
}

/* ------------------------------------------------------------------------ */
/* Printing, NumPy style                                                    */
/* ------------------------------------------------------------------------ */

/* A growing string; on allocation failure `failed` is set and text stops. */
typedef struct {
    char *s;
    size_t len, cap;
    bool failed;
} strbuf;

static void sb_printf(strbuf *b, const char *fmt, ...) ND_PRINTF(2, 3);
static void sb_printf(strbuf *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        /* Before the first allocation s is NULL, and NULL + 0 is undefined
         * behaviour in C: ask for the length alone. */
        int n = vsnprintf(b->s == NULL ? NULL : b->s + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = true;
            return;
        }
        if (b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = (b->cap + (size_t)n) * 2;
        char *s = realloc(b->s, cap);
        if (s == NULL) {
            b->failed = true;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
}

/* Elements per axis shown before "..." when an array is summarised. */
#define EDGE 3
#define SUMMARY_THRESHOLD 1000
#define LINE_WIDTH 75

/* One element as NumPy prints a float: "1.", "0.5", "-2.25", "nan", "inf". */
static void format_float(float v, char *dst, size_t cap)
{
    if (isnan(v)) {
        snprintf(dst, cap, "nan");
    } else if (isinf(v)) {
        snprintf(dst, cap, v < 0 ? "-inf" : "inf");
    } else {
        snprintf(dst, cap, "%.6g", (double)v);
        if (strpbrk(dst, ".e") == NULL)
            strncat(dst, ".", cap - strlen(dst) - 1);
    }
}

/* A view being printed.  Only the elements shown are read, straight from
 * a host copy of the buffer, so a summarised view of 2^40 elements (a
 * broadcast) costs no more than one of 2000. */
typedef struct {
    const nd_array *a;
    const float *buf; /* a's buffer in host memory: element offsets index it */
    bool summarise;
    int width;        /* of the widest element shown */
    strbuf *out;
} printer;

/* Whether axis position i is where a summary's "..." stands: the middle of
 * an axis of n positions is then skipped, from i up to n - EDGE. */
static bool at_ellipsis(const printer *p, int64_t i, int64_t n)
{
    return p->summarise && n > 2 * EDGE && i == EDGE;
}

/* Set p->width to the width of the widest element shown of the block of
 * axes k.. at buffer offset `off`. */
static void measure(printer *p, int k, int64_t off)
{
    const nd_array *a = p->a;
    for (int64_t i = 0, n = a->shape[k]; i < n; i++) {
        if (at_ellipsis(p, i, n)) {
            i = n - EDGE - 1;
            continue;
        }
        if (k < a->ndim - 1) {
            measure(p, k + 1, off + i * a->strides[k]);
        } else {
            char e[32];
            format_float(p->buf[off + i * a->strides[k]], e, sizeof e);
            if ((int)strlen(e) > p->width)
                p->width = (int)strlen(e);
        }
    }
}

/* One element (padded to the column width) or "...", after a ", "
 * separator unless it is the first; a line that would pass LINE_WIDTH is
 * wrapped after the comma.  *col is the current column. */
static void print_cell(const printer *p, const char *text, bool first, int indent, int *col)
{
    int w = strcmp(text, "...") == 0 ? 3 : p->width;
    if (!first) {
        if (*col + 2 + w > LINE_WIDTH) {
            sb_printf(p->out, ",\n%*s", indent + 1, "");
            *col = indent + 1;
        } else {
            sb_printf(p->out, ", ");
            *col += 2;
        }
    }
    sb_printf(p->out, "%*s", w, text);
    *col += w;
}

/* Print the block of axes k.. at buffer offset `off`; `indent` is the
 * column of this block's '['. */
static void print_axis(const printer *p, int k, int64_t off, int indent)
{
    const nd_array *a = p->a;
    int64_t n = a->shape[k];
    sb_printf(p->out, "[");
    int col = indent + 1;
    for (int64_t i = 0; i < n; i++) {
        bool dots = at_ellipsis(p, i, n);
        if (k == a->ndim - 1) {
            char e[32] = "...";
            if (!dots)
                format_float(p->buf[off + i * a->strides[k]], e, sizeof e);
            print_cell(p, e, i == 0, indent, &col);
        } else {
            if (i > 0) {
                /* NumPy leaves one blank line per axis level below this one */
                for (int j = k; j < a->ndim - 1; j++)
                    sb_printf(p->out, "\n");
                sb_printf(p->out, "%*s", indent + 1, "");
            }
            if (dots)
                sb_printf(p->out, "...,");
            else
                print_axis(p, k + 1, off + i * a->strides[k], indent + 1);
            if (!dots && i < n - 1)
                sb_printf(p->out, ",");
        }
        if (dots)
            i = n - EDGE - 1;
    }
    sb_printf(p->out, "]");
}

nd_status nd_format(const nd_array *a, char **out)
{
    nd_status s = nd_check_array(a, "format", "a");
    if (s != ND_OK)
        return s;
    if (out == NULL)
        return nd_fail(ND_ERR_ARG, "format: argument 'out' is NULL");
    int64_t n = nd_numel(a);
    /* The elements come from the buffer itself on the CPU, and from a host
     * copy of the whole buffer (the memory it already takes) otherwise. */
    float *copy = NULL;
    if (n > 0 && a->buf->device != ND_CPU) {
        if ((copy = malloc(a->buf->nbytes)) == NULL)
            return nd_fail(ND_ERR_NOMEM, "format: cannot allocate %zu bytes", a->buf->nbytes);
        if ((s = device_copy(a->buf->device, copy, a->buf->ptr, a->buf->nbytes, false,
                             "format")) != ND_OK) {
            free(copy);
            return s;
        }
    }
    strbuf b = { 0 };
    printer p = { .a = a, .buf = copy != NULL ? copy : a->buf->ptr,
                  .summarise = n > SUMMARY_THRESHOLD, .out = &b };
    sb_printf(&b, "array(");
    if (n == 0) {
        sb_printf(&b, "[]");   /* as NumPy prints any array with no elements */
    } else if (a->ndim == 0) {
        char e[32];
        format_float(p.buf[a->offset], e, sizeof e);
        sb_printf(&b, "%s", e);
    } else {
        measure(&p, 0, a->offset);
        print_axis(&p, 0, a->offset, (int)strlen("array("));
    }
    char sh[SHAPE_STR], st[SHAPE_STR];
    sb_printf(&b, ", shape=%s, strides=%s, offset=%" PRId64 ", device=%s)",
              nd_shape_str(a->ndim, a->shape, sh, sizeof sh),
              nd_shape_str(a->ndim, a->strides, st, sizeof st), a->offset,
              nd_device_name(a->buf->device));
    free(copy);
    if (b.failed) {
        free(b.s);
        return nd_fail(ND_ERR_NOMEM, "format: out of memory for the text");
    }
    *out = b.s;
    return ND_OK;
}

nd_status nd_print(const nd_array *a)
{
    char *text;
    nd_status s = nd_format(a, &text);
    if (s != ND_OK)
        return s;
    puts(text);
    free(text);
    return ND_OK;
}
