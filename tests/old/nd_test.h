/*
 * nd_test.h -- what every test file uses: device parametrisation, a seeded
 * random generator, random shapes and views, an independent reference, and
 * assertions whose failure messages name the input, the first wrong element
 * by multi-index, the expected and the got value, and a hint.
 *
 * The reference here never calls the library's lesson code: it reads the
 * raw buffer (nd_buffer_to_host) and walks a view index by index.
 */
#ifndef ND_TEST_H
#define ND_TEST_H

#include <check.h>
#include <stdbool.h>
#include <stdint.h>

#include "nd.h"

/* ---------------------------------------------------------------------- */
/* Registration                                                           */
/* ---------------------------------------------------------------------- */

/* The device the running test uses.  Each test is registered once per
 * device built in; a checked fixture sets T_DEV inside the forked child. */
extern nd_device T_DEV;

/* A lesson's suite: `lesson` is its number, `name` its file stem
 * ("01_views").  Tests of a lesson are added with T_ADD. */
Suite *t_suite(int lesson, const char *name);

/* Add test `fn` (defined with START_TEST) to suite s, once per device, as
 * test cases named "fn[cpu]", "fn[cuda]".  Device-independent tests (pure
 * host functions) use T_ADD_HOST: one case, "fn". */
#define T_ADD(s, fn) t_add((s), #fn, (fn), true)
#define T_ADD_HOST(s, fn) t_add((s), #fn, (fn), false)
void t_add(Suite *s, const char *name, const TTest *fn, bool per_device);

/* Add test `fn` for the CUDA device alone, as "fn[cuda]" (lesson 6's
 * tests of what only that device has).  Not registered when the device
 * is unusable: the test cuda_device then fails once, with the reason. */
#define T_ADD_CUDA(s, fn) t_add_cuda((s), #fn, (fn))
void t_add_cuda(Suite *s, const char *name, const TTest *fn);

/* ---------------------------------------------------------------------- */
/* Random numbers: fixed seeds, so a failure repeats                       */
/* ---------------------------------------------------------------------- */

typedef struct { uint64_t s; } t_rng;

t_rng t_rng_new(uint64_t seed);
uint64_t t_next(t_rng *r);
/* Uniform integer in [lo, hi] (inclusive). */
int64_t t_int(t_rng *r, int64_t lo, int64_t hi);
/* Uniform float in [lo, hi). */
float t_float(t_rng *r, float lo, float hi);

/* The element count of a shape (1 for ndim 0). */
int64_t t_numel(int ndim, const int64_t *shape);

/* malloc'd room for n floats (at least one); fails the test when out of
 * memory.  The caller frees it. */
float *t_floats(int64_t n);

/* malloc'd room for n bytes (at least one); fails the test when out of
 * memory.  The caller frees it. */
void *t_alloc(size_t n);

/* A random shape of ndim axes, each size in [0, max_size] (0 only when
 * allow_zero), total elements at most max_numel.  Returns ndim. */
int t_random_shape(t_rng *r, int ndim, int64_t max_size, bool allow_zero,
                   int64_t max_numel, int64_t *shape);

/* ---------------------------------------------------------------------- */
/* Views for tests                                                        */
/* ---------------------------------------------------------------------- */

/* A new compact array on T_DEV of the given shape, filled with distinct
 * values (element i is i + 0.5 * frac, easy to trace in a message). */
nd_array t_arange(int ndim, const int64_t *shape);

/* A new compact array on T_DEV filled with random values in [lo, hi). */
nd_array t_random_array(t_rng *r, int ndim, const int64_t *shape, float lo, float hi);

/* A view, on T_DEV, of a new buffer holding `size` floats copied from
 * `values`, with the given shape, strides and offset.  Caller releases. */
nd_array t_view_of(int64_t size, const float *values, int ndim, const int64_t *shape,
                   const int64_t *strides, int64_t offset);

/* Row-major strides of a shape, for building test inputs (never the
 * lesson's own nd_compact_strides, which is under test). */
void t_row_major(int ndim, const int64_t *shape, int64_t *strides);

/* A view (nd_as_strided) of a new buffer on T_DEV of `size` floats
 * 0.5, 1.5, ... (as t_arange).  Caller releases. */
nd_array t_strided(int64_t size, int ndim, const int64_t *shape, const int64_t *strides,
                   int64_t offset);

/* A new compact array on T_DEV of `shape` holding `values`, row-major. */
nd_array t_array_of(int ndim, const int64_t *shape, const float *values);

/* 0, 1, ..., n-1 as floats, in a static table (n <= 64). */
const float *t_iota(int64_t n);

/* Whether two views are the same: buffer, ndim, offset, and the shape and
 * strides of their axes.  t_same_struct also compares the unused entries
 * past ndim: the whole struct, as a function must leave an output it
 * does not write. */
bool t_same_view(const nd_array *a, const nd_array *b);
bool t_same_struct(const nd_array *a, const nd_array *b);

/* A new compact array on T_DEV full of NaN: an output nobody wrote shows. */
nd_array t_nan_array(int ndim, const int64_t *shape);

/* A random view of a new buffer on T_DEV, with the given shape and
 * distinct values everywhere in the buffer.  The view is what a chain of
 * permute and slicing (positive and negative steps) of a larger compact
 * array gives: it never reaches one element twice, so it may be written.
 * Built with nd_as_strided only (no lesson code).  Caller releases it. */
nd_array t_random_view(t_rng *r, int ndim, const int64_t *shape);

/* Like t_random_view, but may also repeat elements (stride 0, as a
 * broadcast does): for read-only inputs. */
nd_array t_random_read_view(t_rng *r, int ndim, const int64_t *shape);

/* ---------------------------------------------------------------------- */
/* The reference                                                          */
/* ---------------------------------------------------------------------- */

/* A host copy of a's whole buffer (malloc'd; caller frees), as floats;
 * *n receives its length in floats. */
float *t_buffer(const nd_array *a, int64_t *n);

/* a's elements in row-major order, gathered index by index from a host
 * copy of its buffer: offset + sum(index[k] * strides[k]).  malloc'd. */
float *t_gather(const nd_array *a);

/* Multi-index of row-major position i in shape (ndim axes). */
void t_unravel(int64_t i, int ndim, const int64_t *shape, int64_t *index);

/* "shape=(2,3) strides=(3,1) offset=0": a view described, in a static
 * buffer that the next call (of either) overwrites; use t_describe2 for
 * the second description in one message. */
const char *t_describe(const nd_array *a);
const char *t_describe2(const nd_array *a);
/* "(1,2,0)" in a static buffer. */
const char *t_index_str(int ndim, const int64_t *index);

/* ---------------------------------------------------------------------- */
/* Assertions                                                             */
/* ---------------------------------------------------------------------- */

/* The call must return ND_OK; otherwise the test fails with the call's
 * text, its status and nd_last_error(). */
#define T_OK(call) t_ok((call), #call, __FILE__, __LINE__)
void t_ok(nd_status s, const char *call, const char *file, int line);

/* The call must fail with status `want` and a non-empty message. */
#define T_ERR(call, want) t_err((call), (want), #call, __FILE__, __LINE__)
void t_err(nd_status got, nd_status want, const char *call, const char *file, int line);

/* T_ERR, and the message must name the operation `op` ("reshape"). */
#define T_ERR_OP(call, want, op) \
    t_err_op((call), (want), (op), #call, __FILE__, __LINE__)
void t_err_op(nd_status got, nd_status want, const char *op, const char *call,
              const char *file, int line);

/* a must have exactly this shape; `what` names it in the message. */
void t_assert_shape(const nd_array *a, int ndim, const int64_t *shape, const char *what);

/* a's elements (row-major) must equal want[0..numel-1] exactly (NaN equals
 * NaN).  On failure: `what`, a's description, the first wrong element by
 * multi-index, expected and got (noting an untouched NaN), and `hint`. */
void t_assert_values(const nd_array *a, const float *want, const char *what,
                     const char *hint);

/* The same with a tolerance: |got - want| <= atol + rtol * |want|. */
void t_assert_close(const nd_array *a, const float *want, double rtol, double atol,
                    const char *what, const char *hint);

/* Two host float arrays of n elements must be equal exactly (NaN equals
 * NaN); a mismatch is reported at its position in `shape`. */
void t_assert_floats(const float *got, const float *want, int ndim, const int64_t *shape,
                     const char *what, const char *hint);

/* Nothing of a's buffer outside the elements a view reaches changed:
 * compares a host copy `before` (from t_buffer) with the buffer now, at
 * every offset that `view` does not reach. */
void t_assert_outside_unchanged(const nd_array *base, const float *before,
                                const nd_array *view, const char *what);

/* Fail unless the out-argument struct is still all 0xAB bytes: functions
 * must leave outputs untouched on failure.  Poison with t_poison. */
void t_poison(nd_array *out);
void t_assert_untouched(const nd_array *out, const char *what);

#endif /* ND_TEST_H */
