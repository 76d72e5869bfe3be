/*
 * internal.h -- what the framework (src/array.c) gives the lesson files.
 * Not part of the public API: tests and users include only nd.h.
 */
#ifndef ND_INTERNAL_H
#define ND_INTERNAL_H

#include <stdbool.h>

#include "nd.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define ND_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define ND_PRINTF(fmt, args)
#endif

/* Record an error for nd_last_error() and return `s`, so that a failure
 * reads as one line:  return nd_fail(ND_ERR_AXIS, "permute: axis %d ...", a);
 * Messages start with the operation's name. */
nd_status nd_fail(nd_status s, const char *fmt, ...) ND_PRINTF(2, 3);

/* The skeleton's stubs return this: "not implemented: NAME (lesson N)". */
nd_status nd_not_implemented(const char *name, int lesson);

/* Check an array argument: not NULL, not released, ndim in range.
 * `op` and `arg` name the operation and the argument in the message. */
nd_status nd_check_array(const nd_array *a, const char *op, const char *arg);

/* Check a shape argument by rule 1 of "Valid arrays" (nd.h): ndim in
 * 0..ND_MAX_DIMS, shape not NULL when ndim > 0, every size >= 0, and the
 * sizes other than 0 multiply to at most ND_MAX_NUMEL.  Errors: ND_ERR_ARG,
 * naming `op`. */
nd_status nd_check_shape(int ndim, const int64_t *shape, const char *op);

/* The element count of a shape (1 for ndim 0).  Assumes a checked shape,
 * whose products cannot overflow. */
int64_t nd_shape_numel(int ndim, const int64_t *shape);

/* ------------------------------------------------------------------------ */
/* Checked arithmetic on sizes, strides and offsets                          */
/* ------------------------------------------------------------------------ */

/* The rules of "Valid arrays" (nd.h) bound every size, and every offset an
 * array with elements reaches, so a loop over elements needs no checks.
 * They do not bound the strides that are never stepped along (size-1
 * axes, arrays with no elements): a size times such a stride, or the sum
 * of two of them, can overflow int64, which in C is undefined behaviour
 * (UBSan reports it; the compiler may assume it never happens).  Every
 * such computation goes through these two.  Each stores x + y (x * y) in
 * *r and returns true when it fits in int64, and returns false, leaving *r
 * as it was, when it does not. */
static inline bool nd_add_ok(int64_t x, int64_t y, int64_t *r)
{
    int64_t t;
    if (__builtin_add_overflow(x, y, &t))
        return false;
    *r = t;
    return true;
}

static inline bool nd_mul_ok(int64_t x, int64_t y, int64_t *r)
{
    int64_t t;
    if (__builtin_mul_overflow(x, y, &t))
        return false;
    *r = t;
    return true;
}

/* Where a view's floats are when it lives on the CPU.  data[a->offset] is
 * element (0,...,0). */
static inline float *nd_data(const nd_array *a) { return (float *)a->buf->ptr; }

/* A new compact array of `shape` on dev, for the operation `op` that
 * makes it as its result: nd_empty_for's contents are undefined,
 * nd_zeros_for's are 0.  As nd_empty and nd_zeros (which are these with op
 * "empty" and "zeros"), but every error names `op`: "binary: cannot
 * allocate 4096 bytes on cpu". */
nd_status nd_empty_for(const char *op, nd_device dev, int ndim, const int64_t *shape,
                       nd_array *out);
nd_status nd_zeros_for(const char *op, nd_device dev, int ndim, const int64_t *shape,
                       nd_array *out);

/* Whether two arrays live on the same device; if not, an ND_ERR_DEVICE
 * error naming `op`. */
nd_status nd_check_same_device(const nd_array *a, const nd_array *b, const char *op);

/* Store `made` in *out.  When out is `in` itself, in's old reference is
 * released first, so `f(&x, ..., &x)` replaces x without leaking. */
void nd_replace(const nd_array *in, nd_array *out, const nd_array *made);

/* "(2,0,1)": a list of axes as text, for messages; like nd_shape_str. */
char *nd_axes_str(int n, const int *axes, char *dst, size_t cap);

/* Normalise a possibly negative axis number for an array of ndim axes.
 * Errors: ND_ERR_AXIS ("op: axis 5 is out of range for 3 axes"). */
nd_status nd_normalize_axis(int axis, int ndim, const char *op, int *out);

/* ------------------------------------------------------------------------ */
/* The CUDA device's memory (framework, src/device.cu)                      */
/* ------------------------------------------------------------------------ */

/* Whether the CUDA device can be used; *name gets the GPU's name or
 * "CUDA emulator (CPU)".  The first call starts the CUDA runtime.
 * Errors: ND_ERR_DEVICE (no GPU, a driver problem, or a sticky error from
 * an earlier kernel fault; the message says which). */
nd_status nd_cuda_probe(const char **name);

/* Device memory: nbytes (0 is allowed) at *ptr; free; copies.  Errors:
 * ND_ERR_NOMEM, ND_ERR_DEVICE, with CUDA's message and `op`. */
nd_status nd_cuda_alloc(size_t nbytes, void **ptr, const char *op);
void nd_cuda_free(void *ptr);
typedef enum nd_copy_kind { ND_COPY_H2D, ND_COPY_D2H, ND_COPY_D2D } nd_copy_kind;
nd_status nd_cuda_copy(void *dst, const void *src, size_t nbytes, nd_copy_kind kind,
                       const char *op);

/* ------------------------------------------------------------------------ */
/* Lesson 6 (src/06_cuda.cu): the backend operations on the CUDA device.    */
/* Each takes checked arguments, exactly like its CPU kernel in lessons     */
/* 2-5, and runs on arrays whose buffers live on ND_CUDA.                   */
/* ------------------------------------------------------------------------ */

/* dst (compact, a's shape) = a's elements in row-major order. */
nd_status nd_cuda_compact(const nd_array *a, const nd_array *dst);
/* Write src (dst's shape; a broadcast view) through the view dst. */
nd_status nd_cuda_setitem(const nd_array *dst, const nd_array *src);
/* Write value at every element of the view dst. */
nd_status nd_cuda_fill(const nd_array *dst, float value);
/* dst = a OP b; a and b are views of dst's shape (broadcast). */
nd_status nd_cuda_binary(nd_binop op, const nd_array *dst, const nd_array *a,
                         const nd_array *b);
/* dst = OP(a); a has dst's shape. */
nd_status nd_cuda_unary(nd_unop op, const nd_array *dst, const nd_array *a);
/* dst (compact) = the fold of each block of v: v is (kept axes...,
 * reduced axes...), one output per position of its first nkept axes. */
nd_status nd_cuda_reduce(nd_reduce_op op, const nd_array *v, int nkept, const nd_array *dst);
/* c (compact) = a @ b over the batch; a and b are views broadcast to c's
 * batch axes; `tiled` picks the fast kernel, otherwise one thread per
 * output. */
nd_status nd_cuda_matmul(const nd_array *a, const nd_array *b, const nd_array *c, bool tiled);

#ifdef __cplusplus
}
#endif

#endif /* ND_INTERNAL_H */
