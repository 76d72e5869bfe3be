/*
 * nd.h -- the public API of the workbook's strided n-dimensional array.
 *
 * An nd_array is a *view*: a small struct, passed around by pointer, that
 * says how to read a flat buffer of 32-bit floats as an n-dimensional array:
 *
 *     element (i0, i1, ..., ik) lives at  data[offset + i0*s0 + ... + ik*sk]
 *
 * where s0..sk are the strides.  Units, everywhere in this API:
 *
 *   - shape      elements per axis, >= 0
 *   - strides    ELEMENTS (not bytes) between neighbours along an axis;
 *                signed: a negative stride walks backwards, 0 repeats
 *   - offset     ELEMENTS from the start of the buffer to element (0,...,0)
 *
 * Axis order is NumPy's: the last axis varies fastest in a compact array.
 *
 * Ownership.  A view holds one reference to its buffer.  Every function that
 * fills an `nd_array *out` gives the caller a NEW reference, which the caller
 * must drop with nd_release().  Views made from a view share its buffer: no
 * view function copies data.  `out` may point to the same struct as the
 * input (`nd_permute(&x, axes, &x)`); the input's reference is then released
 * and replaced by the result's.
 *
 * Errors.  Every function that can fail returns an nd_status.  On failure
 * nd_last_error() describes it, naming the operation, shapes and values
 * ("reshape: cannot view 12 elements of shape (3,4) as shape (5,2), 10
 * elements"), and every output argument is left exactly as it was: no
 * function writes a half-made result.  Functions never abort or crash on
 * bad input, NULL pointers included.  A shape given as an argument, or the
 * shape a result would have, is checked by rule 1 of "Valid arrays" below:
 * where an error list says "negative size", it also means a shape with too
 * many elements (ND_ERR_ARG, "... has too many elements").
 *
 * Threads.  The error message is thread-local; arrays themselves are not
 * locked, so do not share one array between threads that write to it.
 *
 * Lessons.  The comment on each function names the lesson that writes it.
 * In the student tree (skeleton/) an unwritten function returns
 * ND_ERR_NOT_IMPLEMENTED with "not implemented: NAME (lesson N)".
 */
#ifndef ND_H
#define ND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Limits, status codes, errors                                             */
/* ------------------------------------------------------------------------ */

/* The most axes an array may have.  Asking for more is ND_ERR_ARG. */
#define ND_MAX_DIMS 8

/* The most elements a shape may describe: 2^58 floats, 2^60 bytes, so that
 * every element count, byte count and compact stride fits in int64 with
 * room to spare.  See "Valid arrays" below. */
#define ND_MAX_NUMEL ((int64_t)1 << 58)

typedef enum nd_status {
    ND_OK = 0,
    ND_ERR_ARG,             /* a NULL pointer, a bad count or value         */
    ND_ERR_SHAPE,           /* shapes that do not fit together              */
    ND_ERR_AXIS,            /* an axis out of range, or named twice         */
    ND_ERR_INDEX,           /* an index out of range, a slice step of 0     */
    ND_ERR_LAYOUT,          /* needs a compact array (reshape), or a view
                               that would reach outside its buffer          */
    ND_ERR_NOMEM,           /* an allocation failed                          */
    ND_ERR_DEVICE,          /* a device is missing, or failed, or two arrays
                               live on different devices                    */
    ND_ERR_NOT_IMPLEMENTED  /* the lesson that writes this is not done yet  */
} nd_status;

/* The enum's name of a status, e.g. "ND_ERR_SHAPE".  Never NULL: an unknown
 * value gives "ND_ERR_(unknown)".  The string is static; do not free it. */
const char *nd_status_name(nd_status s);

/* The message of the last failure on this thread ("" if none yet).  The
 * string is owned by the library and valid until the next call that fails
 * on this thread; copy it to keep it. */
const char *nd_last_error(void);

/* Forget the last error (nd_last_error() returns "" afterwards). */
void nd_clear_error(void);

/* ------------------------------------------------------------------------ */
/* Devices and buffers                                                      */
/* ------------------------------------------------------------------------ */

typedef enum nd_device {
    ND_CPU = 0,
    ND_CUDA = 1   /* a real GPU, or the CPU emulator of lesson 6 */
} nd_device;

/* "cpu" or "cuda"; "(unknown)" for anything else.  Static string. */
const char *nd_device_name(nd_device dev);

/* Whether arrays can be made on `dev` in this build.  For ND_CUDA, *name
 * (if name is not NULL) receives which backend runs it: the GPU's name, or
 * "emulator".  The string is static.  Asking about ND_CUDA may start the
 * CUDA runtime; test programs ask only inside forked children.
 * Errors: ND_ERR_ARG (unknown device), ND_ERR_DEVICE (not in this build, or
 * no usable GPU). */
nd_status nd_device_available(nd_device dev, const char **name);

/* A reference-counted block of memory on one device.  Views share it.
 * Read the fields; never write them (use nd_release, which frees the
 * buffer when its last view goes). */
typedef struct nd_buffer {
    void     *ptr;       /* first byte; a device pointer for ND_CUDA      */
    size_t    nbytes;    /* size of the block in bytes                    */
    int64_t   refcount;  /* views holding this buffer                      */
    nd_device device;    /* where ptr lives                               */
} nd_buffer;

/* Valid arrays.  Every array the library makes, and every view it accepts
 * (nd_as_strided, through which every view is made, checks all of this),
 * follows four rules:
 *
 *   1. Shape.  0 <= ndim <= ND_MAX_DIMS, every size >= 0, and the sizes
 *      OTHER THAN 0 multiply to at most ND_MAX_NUMEL.  Leaving the zeros out
 *      makes the rule independent of the order of the axes: a shape is
 *      valid exactly when each of its permutations is, (0, 2^40, 2^40) is as
 *      invalid as (2^40, 2^40), and every partial product, so every compact
 *      stride, fits in int64 (NumPy checks the same way).  Breaking the rule
 *      is ND_ERR_ARG, "has too many elements".
 *   2. An array with elements lies inside its buffer: every element it
 *      reaches, offset + index[0]*strides[0] + ..., is in 0 .. size-1, where
 *      size is the buffer's size in floats.  For each stride this bounds
 *      (shape[k] - 1) * |strides[k]|, so no sum of index * stride over the
 *      array's elements can overflow.
 *   3. An array with no elements reaches nothing: its offset is in 0 .. size.
 *   4. Strides that are never stepped along, those of size-1 axes and all
 *      strides of an array with no elements, may hold any int64 value,
 *      INT64_MIN included.  They are kept as given, not normalised (NumPy
 *      keeps them too, and nd_format shows them), so arithmetic on them can
 *      overflow: the library does such arithmetic only with overflow checks
 *      (nd_diagonal adds two strides, nd_simplify_dims multiplies one by a
 *      size), and no loop over elements runs on an array with no elements.
 *
 * Breaking rules 2 and 3 is ND_ERR_LAYOUT.  A struct filled in by hand,
 * not made by the library, must follow the rules too. */

/* A view of a buffer as an n-dimensional array of floats. */
typedef struct nd_array {
    nd_buffer *buf;                    /* shared, refcounted; NULL if empty
                                          struct (after nd_release)        */
    int        ndim;                   /* 0..ND_MAX_DIMS; 0 is a scalar    */
    int64_t    shape[ND_MAX_DIMS];     /* elements per axis                */
    int64_t    strides[ND_MAX_DIMS];   /* elements, signed                 */
    int64_t    offset;                 /* elements from buf->ptr           */
} nd_array;

/* ------------------------------------------------------------------------ */
/* Making, copying out and releasing arrays (framework, src/array.c)        */
/* ------------------------------------------------------------------------ */

/* A new compact array of the given shape on `dev`, holding a copy of
 * `data`, numel floats in row-major order (the caller keeps `data`).
 * `shape` may be NULL when ndim is 0 (a scalar, one element); `data` may be
 * NULL only when the shape has no elements.  *out gets a new reference.
 * Errors: ND_ERR_ARG (NULL out, ndim < 0 or > ND_MAX_DIMS, negative size,
 * too many elements (rule 1 of "Valid arrays"), NULL data, unknown
 * device), ND_ERR_NOMEM, ND_ERR_DEVICE. */
nd_status nd_from_host(nd_device dev, int ndim, const int64_t *shape,
                       const float *data, nd_array *out);

/* A new compact array filled with 0, with `value`, or left uninitialised
 * (nd_empty: read nothing before writing it).  Errors as nd_from_host. */
nd_status nd_zeros(nd_device dev, int ndim, const int64_t *shape, nd_array *out);
nd_status nd_full(nd_device dev, int ndim, const int64_t *shape, float value,
                  nd_array *out);
nd_status nd_empty(nd_device dev, int ndim, const int64_t *shape, nd_array *out);

/* A new 1-D array (n,) holding 0, 1, ..., n-1.  Errors as nd_from_host. */
nd_status nd_arange(nd_device dev, int64_t n, nd_array *out);

/* A new view of a's buffer with any shape, strides and offset (NumPy's
 * as_strided), checked against the rules of "Valid arrays": every element
 * the view can reach must lie inside the buffer.  The lesson 1 views are
 * built on it.  out may alias a.
 * Errors: ND_ERR_ARG (NULL pointer, ndim out of range, negative size, too
 * many elements), ND_ERR_LAYOUT (the view reaches outside the buffer; the
 * message gives the lowest and highest element it reaches, or says that
 * they are beyond int64, and the buffer's size). */
nd_status nd_as_strided(const nd_array *a, int ndim, const int64_t *shape,
                        const int64_t *strides, int64_t offset, nd_array *out);

/* Another reference to the same view (*out = *a, refcount + 1).
 * Errors: ND_ERR_ARG. */
nd_status nd_share(const nd_array *a, nd_array *out);

/* Drop a's reference; the buffer is freed with its last view.  Leaves *a
 * zeroed, so releasing twice is harmless.  NULL is ignored. */
void nd_release(nd_array *a);

/* Number of elements: the product of the shape (1 for a scalar).  0 for
 * NULL. */
int64_t nd_numel(const nd_array *a);

/* Copy a's elements to host memory in logical row-major order, whatever
 * a's strides (works on any view, on any device).  dst must hold at least
 * nd_numel(a) floats; `cap` is its size in floats.
 * Errors: ND_ERR_ARG (NULL pointer, cap too small), ND_ERR_DEVICE. */
nd_status nd_to_host(const nd_array *a, float *dst, size_t cap);

/* Copy the whole buffer under a, byte for byte, to host memory (cap bytes
 * at dst).  Tests use it to look at memory a view does not show.
 * Errors: ND_ERR_ARG (NULL pointer, cap < buf->nbytes), ND_ERR_DEVICE. */
nd_status nd_buffer_to_host(const nd_array *a, void *dst, size_t cap);

/* A NumPy-like text of a, e.g.
 *     array([[0., 1., 2.],
 *            [3., 4., 5.]])  shape=(2,3) strides=(3,1) offset=0 cpu
 * Arrays of more than 1000 elements are summarised with "...".  *out gets
 * a malloc'd string that the caller frees with free().
 * Errors: ND_ERR_ARG (NULL pointer, a released array), ND_ERR_NOMEM,
 * ND_ERR_DEVICE. */
nd_status nd_format(const nd_array *a, char **out);

/* nd_format, then write the text and a newline to stdout.  Errors as
 * nd_format. */
nd_status nd_print(const nd_array *a);

/* "(3,4)": a shape as text, at most 8*21+3 characters.  Writes into dst
 * (cap bytes, truncating) and returns dst.  For messages and tests. */
char *nd_shape_str(int ndim, const int64_t *shape, char *dst, size_t cap);

/* ------------------------------------------------------------------------ */
/* Lesson 1: strides and views (src/01_views.c).  No function here copies  */
/* data; every result shares a's buffer.                                   */
/* ------------------------------------------------------------------------ */

/* The strides of a compact (row-major) array of this shape:
 * strides[k] = shape[k+1] * ... * shape[ndim-1].  Writes ndim values.
 * Errors: ND_ERR_ARG (NULL pointer, ndim out of range, negative size). */
nd_status nd_compact_strides(int ndim, const int64_t *shape, int64_t *strides);

/* Whether a is compact: its elements are exactly buf[offset] ..
 * buf[offset + numel - 1] in row-major order.  Strides of size-1 axes are
 * ignored (they are never used), and so is everything about an array with
 * no elements.  Errors: ND_ERR_ARG. */
nd_status nd_is_compact(const nd_array *a, bool *result);

/* The buffer offset (elements) of the element at multi-index index[0..ndim-1].
 * Errors: ND_ERR_ARG (NULL pointer), ND_ERR_INDEX (an index out of range;
 * negative indices are NOT wrapped here). */
nd_status nd_offset_of(const nd_array *a, const int64_t *index, int64_t *offset);

/* The same elements seen with a new shape (NumPy reshape).  One entry of
 * `shape` may be -1: it is inferred.  Only compact arrays can be reshaped
 * without a copy; others are refused (call nd_compact first).
 * Errors: ND_ERR_ARG (NULL pointer, ndim out of range, size < -1, two -1s),
 * ND_ERR_SHAPE (element counts differ, or -1 cannot be inferred),
 * ND_ERR_LAYOUT (a is not compact). */
nd_status nd_reshape(const nd_array *a, int ndim, const int64_t *shape,
                     nd_array *out);

/* Reorder the axes (NumPy transpose): out axis i is a's axis axes[i].
 * axes has a->ndim entries; negative entries count from the end.
 * Errors: ND_ERR_ARG (NULL pointer), ND_ERR_AXIS (an axis out of range or
 * repeated: axes must be a permutation). */
nd_status nd_permute(const nd_array *a, const int *axes, nd_array *out);

/* Broadcast a to `shape` by NumPy's rules: align shapes at the right; an
 * axis of size 1 may stretch (stride 0); missing leading axes are added
 * (stride 0).  Errors: ND_ERR_ARG (NULL pointer, ndim out of range,
 * negative size), ND_ERR_SHAPE (fewer axes than a, or an axis of size other
 * than 1 that differs from the target). */
nd_status nd_broadcast_to(const nd_array *a, int ndim, const int64_t *shape,
                          nd_array *out);

/* One entry of an index, Python style: a slice start:stop:step, or an
 * integer, which selects one position and drops its axis. */
typedef enum nd_index_kind { ND_INDEX_SLICE = 0, ND_INDEX_INT = 1 } nd_index_kind;

/* "Not given", for a slice's start or stop (Python's None). */
#define ND_NONE INT64_MIN

typedef struct nd_index {
    nd_index_kind kind;
    int64_t start, stop, step;  /* ND_INDEX_SLICE: start/stop may be
                                   negative (from the end) or ND_NONE;
                                   step != 0, may be negative            */
    int64_t i;                  /* ND_INDEX_INT: may be negative          */
} nd_index;

/* Convenience constructors: ND_SLICE(1, ND_NONE, 2) is Python's 1::2,
 * ND_ALL is ':', ND_AT(-1) is the integer index -1. */
#define ND_SLICE(start_, stop_, step_) \
    ((nd_index){ .kind = ND_INDEX_SLICE, .start = (start_), .stop = (stop_), .step = (step_), .i = 0 })
#define ND_ALL ND_SLICE(ND_NONE, ND_NONE, 1)
#define ND_AT(i_) \
    ((nd_index){ .kind = ND_INDEX_INT, .start = 0, .stop = 0, .step = 0, .i = (i_) })

/* a[idx[0], idx[1], ..., idx[n-1]] with Python's semantics: negative
 * positions count from the end, out-of-range slice bounds are clipped as
 * Python clips them, negative steps walk backwards.  Axes past n are taken
 * whole.  Integer entries drop their axis.
 * Errors: ND_ERR_ARG (NULL pointer, n < 0 or n > a->ndim, unknown kind),
 * ND_ERR_INDEX (a step of 0, an integer index out of range). */
nd_status nd_slice(const nd_array *a, int n, const nd_index *idx, nd_array *out);

/* The diagonal of the 2-D planes spanned by axis1 and axis2 (NumPy's
 * diagonal): both axes are removed and a new LAST axis holds the diagonal,
 * whose stride is strides[axis1] + strides[axis2].  offset > 0 takes a
 * diagonal above the main one, < 0 below; a diagonal past the edge is
 * empty (length 0).  Errors: ND_ERR_ARG (NULL pointer, a->ndim < 2),
 * ND_ERR_AXIS (an axis out of range, or axis1 == axis2). */
nd_status nd_diagonal(const nd_array *a, int64_t offset, int axis1, int axis2,
                      nd_array *out);

/* ------------------------------------------------------------------------ */
/* Lesson 2: compact and setitem (src/02_compact.c)                         */
/* ------------------------------------------------------------------------ */

/* An odometer over every position of a shape, last axis fastest:
 *
 *     nd_iter it;
 *     if (nd_iter_init(&it, a->ndim, a->shape) != ND_OK) ...;
 *     while (nd_iter_next(&it)) { ... it.index[0..ndim-1] ... }
 *
 * A shape with a 0 gives no positions; a scalar (ndim 0) gives one. */
typedef struct nd_iter {
    int     ndim;
    int64_t shape[ND_MAX_DIMS];
    int64_t index[ND_MAX_DIMS];   /* the current position                */
    int64_t count;                /* positions visited so far            */
    int64_t total;                /* positions in all                    */
} nd_iter;

/* Errors: ND_ERR_ARG (NULL pointer, ndim out of range, negative size). */
nd_status nd_iter_init(nd_iter *it, int ndim, const int64_t *shape);

/* Step to the next position; false (and it->index unchanged) when every
 * position has been visited.  The first call moves to (0, ..., 0). */
bool nd_iter_next(nd_iter *it);

/* Simplify the layout of up to two views of the same shape before a loop
 * over them: drop size-1 axes, then merge neighbouring axes k, k+1 wherever
 * every operand has strides[k] == shape[k+1] * strides[k+1] (they are
 * adjacent in memory).  shape, strides_a and (if not NULL) strides_b are
 * rewritten in place; *ndim becomes the new count (0 if every axis had
 * size 1).  The set of offsets the operands reach is unchanged.
 * Errors: ND_ERR_ARG. */
nd_status nd_simplify_dims(int *ndim, int64_t *shape, int64_t *strides_a,
                           int64_t *strides_b);

/* A new compact array, on a's device, holding a's elements in row-major
 * order (a strided gather).  Always copies, even when a is compact, so out
 * never shares a's buffer.  Errors: ND_ERR_ARG, ND_ERR_NOMEM,
 * ND_ERR_DEVICE. */
nd_status nd_compact(const nd_array *a, nd_array *out);

/* For tests and the benchmark: nd_compact with its CPU copy chosen (the
 * steps of lesson 2's "going further" section).  version 0 lets nd_compact
 * choose; 1 the plain gather, run by run (gather_cpu); for a layout with a
 * transposed plane (an outer axis denser in memory than the last), 2
 * blocked (16-row strips of the plane through a small buffer), 3 as 2 with
 * the strips transposed in registers, 8x8 floats at a time, 4 as 3 with
 * streaming stores.  Other layouts always take version 1; on ND_CUDA the
 * device's kernel runs whatever the version.  *ran (if ran is not NULL)
 * receives the version that ran (0 on ND_CUDA).
 * Errors: as nd_compact; ND_ERR_ARG also for a version out of 0..4. */
nd_status nd_compact_version(const nd_array *a, int version, nd_array *out, int *ran);

/* dst[...] = src, in place: writes through the view dst into its buffer
 * (a strided scatter), and nowhere else.  src must have dst's shape or
 * broadcast to it (NumPy rules).  dst and src may share a buffer only if
 * they reach no common element, or are the very same view.
 * Errors: ND_ERR_ARG, ND_ERR_SHAPE (src does not broadcast to dst's
 * shape), ND_ERR_DEVICE (different devices). */
nd_status nd_setitem(const nd_array *dst, const nd_array *src);

/* dst[...] = value, in place, through the view dst.  Errors: ND_ERR_ARG,
 * ND_ERR_DEVICE. */
nd_status nd_setitem_scalar(const nd_array *dst, float value);

/* ------------------------------------------------------------------------ */
/* Lesson 3: elementwise (src/03_ewise.c)                                   */
/* ------------------------------------------------------------------------ */

typedef enum nd_binop {
    ND_ADD, ND_SUB, ND_MUL, ND_DIV, ND_POW, ND_MAXIMUM,
    ND_EQ,  /* 1.0f where a == b, else 0.0f */
    ND_GE   /* 1.0f where a >= b, else 0.0f */
} nd_binop;

typedef enum nd_unop { ND_NEG, ND_LOG, ND_EXP, ND_TANH, ND_ABS } nd_unop;

/* out = a OP b, a new compact array of the broadcast shape of a and b.
 * IEEE results as C gives them (x/0 is inf, log(-1) is NaN).
 * Errors: ND_ERR_ARG, ND_ERR_SHAPE (shapes do not broadcast; the message
 * gives both), ND_ERR_DEVICE, ND_ERR_NOMEM. */
nd_status nd_binary(nd_binop op, const nd_array *a, const nd_array *b,
                    nd_array *out);
/* dst[...] = a OP b, in place, through the view dst, which must have the
 * broadcast shape (ND_ERR_SHAPE otherwise, the message giving dst's shape
 * and the result's).  dst may alias a or b (the same view).  The same for
 * the other _into functions, whose result has a's shape. */
nd_status nd_binary_into(nd_binop op, const nd_array *a, const nd_array *b,
                         const nd_array *dst);
/* out = a OP s for a scalar s. */
nd_status nd_scalar(nd_binop op, const nd_array *a, float s, nd_array *out);
nd_status nd_scalar_into(nd_binop op, const nd_array *a, float s,
                         const nd_array *dst);
/* out = OP(a). */
nd_status nd_unary(nd_unop op, const nd_array *a, nd_array *out);
nd_status nd_unary_into(nd_unop op, const nd_array *a, const nd_array *dst);

/* ------------------------------------------------------------------------ */
/* Lesson 4: reductions (src/04_reduce.c)                                   */
/* ------------------------------------------------------------------------ */

typedef enum nd_reduce_op { ND_SUM, ND_MAX } nd_reduce_op;

/* Pass as naxes to reduce over every axis (axes may then be NULL). */
#define ND_ALL_AXES (-1)

/* Reduce a over the naxes axes listed (negative axes count from the end),
 * into a new compact array.  naxes is 0..a->ndim, or ND_ALL_AXES; axes
 * may be NULL when naxes is 0 (no axis reduced: a copy, as NumPy's
 * axis=()) or ND_ALL_AXES.  keepdims keeps reduced axes with size 1.
 * Sums are pairwise, accurate to O(log n) roundings on long axes.  The sum
 * of an empty axis is 0.  Max propagates NaN as np.max does, and a max
 * over an axis of size 0 is an error even when the result has no elements.
 * Errors: ND_ERR_ARG (NULL pointer, unknown op, naxes out of range, NULL
 * axes with naxes > 0), ND_ERR_AXIS (an axis out of range or repeated),
 * ND_ERR_SHAPE (max over an empty axis), ND_ERR_DEVICE, ND_ERR_NOMEM. */
nd_status nd_reduce(nd_reduce_op op, const nd_array *a, int naxes,
                    const int *axes, bool keepdims, nd_array *out);

/* ------------------------------------------------------------------------ */
/* Lesson 5: matmul (src/05_matmul.c)                                       */
/* ------------------------------------------------------------------------ */

/* out = a @ b by NumPy's matmul rules: the last two axes are matrices
 * (m,k) @ (k,n) -> (m,n); leading axes are batch axes and broadcast.
 * Both inputs need ndim >= 2.  nd_matmul is the tiled version;
 * nd_matmul_naive the plain triple loop it is measured against.
 * Errors: ND_ERR_ARG (NULL pointer, an input with fewer than 2 axes),
 * ND_ERR_SHAPE (inner sizes or batch axes do not match; the message gives
 * both shapes), ND_ERR_DEVICE, ND_ERR_NOMEM. */
nd_status nd_matmul(const nd_array *a, const nd_array *b, nd_array *out);
nd_status nd_matmul_naive(const nd_array *a, const nd_array *b, nd_array *out);

/* ------------------------------------------------------------------------ */
/* Lesson 6: the CUDA device (src/06_cuda.cu)                               */
/* ------------------------------------------------------------------------ */

/* The kernels of lessons 2-5 for the CUDA device live in src/06_cuda.cu;
 * the public functions above run them when their arrays live on ND_CUDA.
 * Which CUDA backend runs them, a GPU or the CPU emulator, is what
 * nd_device_available(ND_CUDA, &name) names. */

/* The index transform every CUDA kernel of lesson 6 uses, callable on the
 * host: the memory offset, in elements from the buffer's start, of the
 * i-th element (in row-major order) of a view with this shape, strides and
 * offset.  i must be in 0 .. numel-1; nothing is checked. */
int64_t nd_index_to_offset(int64_t i, int ndim, const int64_t *shape,
                           const int64_t *strides, int64_t offset);

/* A new compact copy of a on device `dev` (to or from ND_CUDA, or within
 * one device), whatever a's strides; out may alias a.  It goes through
 * host memory and does not depend on any lesson's kernels (framework).
 * Errors: ND_ERR_ARG, ND_ERR_DEVICE, ND_ERR_NOMEM. */
nd_status nd_to_device(const nd_array *a, nd_device dev, nd_array *out);

/* ------------------------------------------------------------------------ */
/* Lesson 7: permute as data movement (src/07_permute.cu)                   */
/* ------------------------------------------------------------------------ */

/* Simplify a permutation before moving data: drop size-1 axes and merge
 * axes that stay adjacent and in order, so shape (3,4,5,6) with perm
 * (2,3,0,1) becomes shape (12,30) with perm (1,0).  perm is NumPy's: result
 * axis i is source axis perm[i]; entries must be 0..ndim-1, each once (no
 * negative axes).  Writes *out_ndim, out_shape and out_perm (ND_MAX_DIMS
 * entries each are enough); out_shape and out_perm may be shape and perm
 * themselves (simplified in place).  A shape whose axes all have size 1,
 * a 0-d shape included, gives *out_ndim == 0: a single element, nothing to
 * permute.  A size-0 axis is kept (the result has no elements either way).
 * On an error the outputs are left as they were.
 * Errors: ND_ERR_ARG (NULL pointer, ndim out of range, negative size),
 * ND_ERR_AXIS (perm is not a permutation). */
nd_status nd_simplify_permutation(int ndim, const int64_t *shape,
                                  const int *perm, int *out_ndim,
                                  int64_t *out_shape, int *out_perm);

/* dst = src.permute(perm), made compact, for elements of elem_bytes bytes
 * (1, 2, 4, 8 or 16): src is a compact array of `shape` at src_ptr, dst
 * receives the compact permuted array (shape[perm[0]], ..., shape[perm[ndim
 * - 1]]).  dev says where both pointers live (device memory for ND_CUDA).
 * The buffers must not overlap.  Pointers need no particular alignment
 * (misaligned ones are moved by a slower kernel); either may be NULL when
 * the shape has no elements.  Nothing is written outside dst's
 * numel * elem_bytes bytes.
 * Errors: ND_ERR_ARG (NULL pointer, bad device, bad elem_bytes, ndim out
 * of range, negative size, overlapping buffers), ND_ERR_AXIS (perm is not
 * a permutation), ND_ERR_DEVICE (a CUDA error, with CUDA's message). */
nd_status nd_permute_bytes(nd_device dev, const void *src_ptr, void *dst_ptr,
                           size_t elem_bytes, int ndim, const int64_t *shape,
                           const int *perm);

/* For tests and the benchmark: nd_permute_bytes with its kernel chosen.
 * version 0 lets nd_permute_bytes choose; 1 naive (any permutation), 2
 * generic (addresses multiples of elem_bytes, unless the last axis stays
 * last), 3 tiled transpose (a permutation that simplifies to (1,0) or
 * (0,2,1)), 4 tiled transpose of 2-byte elements moved in pairs (as 3, with
 * elem_bytes 2, both transposed axes even, addresses multiples of 4).  *ran
 * (if ran is not NULL) receives the version that ran, or 0 when no kernel
 * was needed (the permutation simplifies to the identity: one copy).  On
 * ND_CPU every version runs the same host loop, but versions are checked
 * and *ran is set exactly as on ND_CUDA.
 * Errors: as nd_permute_bytes; ND_ERR_ARG also for a version out of 0..4
 * and for a version that cannot do this permutation (the message says
 * why). */
nd_status nd_permute_bytes_version(nd_device dev, const void *src_ptr, void *dst_ptr,
                                   size_t elem_bytes, int ndim, const int64_t *shape,
                                   const int *perm, int version, int *ran);

#ifdef __cplusplus
}
#endif

#endif /* ND_H */
