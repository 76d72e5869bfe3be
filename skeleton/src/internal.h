/*
 * internal.h -- what the framework (src/array.c) gives the lesson files.
 * Not part of the public API: tests and users include only nd.h.
 */
#ifndef ND_INTERNAL_H
#define ND_INTERNAL_H

#include "nd.h"

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

/* Check a shape argument: ndim in 0..ND_MAX_DIMS, shape not NULL when
 * ndim > 0, every size >= 0, and the element count fits in memory. */
nd_status nd_check_shape(int ndim, const int64_t *shape, const char *op);

/* The element count of a shape (1 for ndim 0).  Assumes a checked shape. */
int64_t nd_shape_numel(int ndim, const int64_t *shape);

/* Where a view's floats are when it lives on the CPU.  data[a->offset] is
 * element (0,...,0). */
static inline float *nd_data(const nd_array *a) { return (float *)a->buf->ptr; }

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

#endif /* ND_INTERNAL_H */
