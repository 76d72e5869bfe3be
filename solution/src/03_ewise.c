/*
 * Lesson 3: elementwise operations.
 *
 * out = a OP b computes every position on its own.  a and b need not have
 * the same shape: NumPy's broadcasting aligns the shapes at the right and
 * stretches every axis of size 1, or missing, to the other's size, so
 * (3,1) OP (4,) has shape (3,4).  Stretching copies nothing: lesson 1's
 * nd_broadcast_to shows each input with the result's shape and stride 0
 * along the stretched axes.  From there every op is one loop over views of
 * a single shape: lesson 2's scatter loop with one more operand.
 *
 * Each public function does four things in order: check the arguments,
 * work out the result's shape, allocate the result, run the kernel.
 * Nothing is written before every check has passed, so a call that fails
 * changes nothing.  The kernels run on the CPU; lesson 6 adds a CUDA
 * branch beside them.
 *
 * Results are IEEE single precision as C's <math.h> gives them: x/0 is
 * inf, 0/0 and log(-1) are NaN, expf(100) is inf.
 */
#include "internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#if defined(__SSE2__)
#include <immintrin.h>   /* streaming stores, for rows larger than the cache */
#endif

/* Room for any shape printed by nd_shape_str. */
#define SHAPE_STR 200

//@ snippet broadcast_shape
/* The shape of a OP b by NumPy's rules: align the shapes at the right and
 * read a missing axis as size 1; on each axis the sizes must be equal, or
 * one of them 1, and the result takes the other.  So (5,1,3) and (4,3)
 * give (5,4,3), and (2,1) and (0,) give (2,0).  `fn` names the caller. */
static nd_status broadcast_shape(const nd_array *a, const nd_array *b, int *ndim,
                                 int64_t *shape, const char *fn)
{
    //@ solution broadcast_shape
    int nd = a->ndim > b->ndim ? a->ndim : b->ndim;
    for (int k = 0; k < nd; k++) {
        int ka = k - (nd - a->ndim), kb = k - (nd - b->ndim);   /* < 0: missing */
        int64_t na = ka >= 0 ? a->shape[ka] : 1, nb = kb >= 0 ? b->shape[kb] : 1;
        if (na != nb && na != 1 && nb != 1) {
            char sa[SHAPE_STR], sb[SHAPE_STR];
            return nd_fail(ND_ERR_SHAPE, "%s: shapes %s and %s do not broadcast: a's axis "
                           "%d has size %" PRId64 ", b's axis %d has size %" PRId64
                           "; they must be equal, or one of them 1", fn,
                           nd_shape_str(a->ndim, a->shape, sa, sizeof sa),
                           nd_shape_str(b->ndim, b->shape, sb, sizeof sb), ka, na, kb, nb);
        }
        shape[k] = na == 1 ? nb : na;
    }
    *ndim = nd;
    return ND_OK;
    //@ stub
    //> /* Align the shapes at the right; a missing axis has size 1.  Sizes
    //>  * must be equal or one of them 1 (the result takes the other). */
    //> (void)a; (void)b; (void)ndim; (void)shape; (void)fn;
    //> return nd_not_implemented("nd_binary", 3);
    //@ end solution broadcast_shape
}
//@ end snippet broadcast_shape

/* ------------------------------------------------------------------------ */
/* Rows: the inner loops                                                    */
/* ------------------------------------------------------------------------ */

/*
 * A kernel ends in rows: n elements with a stride per operand.  The loops
 * below run one row, and they are where the time goes, so they are written
 * for the compiler:
 *
 *   - the switch on the op is outside the loop: each case is a loop over
 *     one plain expression, not a loop that asks "which op?" per element;
 *   - a row whose output and first input are contiguous, and whose second
 *     input is contiguous too or one value repeated (stride 0: a scalar op,
 *     a broadcast column), goes BLOCK elements at a time: the block's
 *     results are computed into z[] and only then stored.  That inner loop
 *     has a fixed count and writes only z, so GCC turns it into SIMD
 *     instructions even at -O2 (which vectorises only loops that need no
 *     runtime checks), and it stays right when d is a or b, an in-place
 *     op: each block is read before it is written.  (`restrict` pointers
 *     would not do: GCC 12 at -O2 still does not vectorise a loop whose
 *     count is unknown, and they promise that d is never a or b, which an
 *     in-place call breaks.)  The pragma "GCC unroll 1" keeps GCC -O3
 *     (make bench's build) from first unrolling the 16 iterations into
 *     16 scalar operations, which it then packs into vectors only in part:
 *     with it, a block is one vector load, operation and store.
 *
 *   - a row that moves STREAM_BYTES or more (its inputs and its output,
 *     as a compact array merges into one row) stores its blocks with
 *     streaming stores, as lesson 2's fast path does: an ordinary store
 *     first reads the line it writes into the cache, so a + b would move
 *     four bytes for every three it needs; a streaming store writes the
 *     whole 64-byte line to memory without reading it.  Such a row does
 *     not fit the cache anyway, so keeping its output there saves nothing.
 *     Its first elements, up to a 64-byte boundary of d, go one at a time.
 *
 * The rest of the row, and every other row, goes one element at a time.
 */
#define BLOCK 16
#define STREAM_BYTES (8 << 20)

/* Whether a contiguous row of n floats and `operands` arrays (inputs and
 * output) is stored with streaming stores. */
static inline bool stream_row(int64_t n, int operands)
{
    return n >= STREAM_BYTES / (int64_t)sizeof(float) / operands;
}

/* z[0..15] to the 64-byte line at d (64-byte aligned), with a streaming
 * store; elsewhere than x86, an ordinary one. */
static inline void stream16(float *d, const float *z)
{
#if defined(__AVX512F__)
    _mm512_stream_ps(d, _mm512_loadu_ps(z));
#elif defined(__AVX__)
    _mm256_stream_ps(d, _mm256_loadu_ps(z));
    _mm256_stream_ps(d + 8, _mm256_loadu_ps(z + 8));
#elif defined(__SSE2__)
    for (int k = 0; k < 16; k += 4)
        _mm_stream_ps(d + k, _mm_loadu_ps(z + k));
#else
    memcpy(d, z, 16 * sizeof(float));
#endif
}

/* After streaming stores: order them before any later store (x86). */
static inline void stream_done(void)
{
#if defined(__SSE2__)
    _mm_sfence();
#endif
}

/* Whether d is on a 64-byte boundary, where stream16 may write. */
static inline bool line_start(const float *d)
{
    return (uintptr_t)d % 64 == 0;
}

/* d[j*sd] = expr for j < n, where expr reads x = a[j*sa], y = b[j*sb]. */
#define BINARY_LOOP(expr)                                                     \
    do {                                                                      \
        int64_t j = 0;                                                        \
        if (sd == 1 && sa == 1 && (sb == 1 || sb == 0)) {                     \
            bool stream = stream_row(n, sb == 1 ? 3 : 2);                     \
            for (; stream && j < n && !line_start(d + j); j++) {              \
                float x = a[j], y = b[j * sb];                                \
                d[j] = (expr);                                                \
            }                                                                 \
            for (; j + BLOCK <= n; j += BLOCK) {                              \
                float z[BLOCK];                                               \
                if (sb == 1)                                                  \
                    _Pragma("GCC unroll 1")                                   \
                    for (int k = 0; k < BLOCK; k++) {                         \
                        float x = a[j + k], y = b[j + k];                     \
                        z[k] = (expr);                                        \
                    }                                                         \
                else                                                          \
                    _Pragma("GCC unroll 1")                                   \
                    for (int k = 0; k < BLOCK; k++) {                         \
                        float x = a[j + k], y = b[0];                         \
                        z[k] = (expr);                                        \
                    }                                                         \
                if (stream)                                                   \
                    stream16(d + j, z);                                       \
                else                                                          \
                    memcpy(d + j, z, sizeof z);                               \
            }                                                                 \
            if (stream)                                                       \
                stream_done();                                                \
        }                                                                     \
        for (; j < n; j++) {                                                  \
            float x = a[j * sa], y = b[j * sb];                               \
            d[j * sd] = (expr);                                               \
        }                                                                     \
    } while (0)

/* d[j*sd] = expr for j < n, where expr reads x = a[j*sa]. */
#define UNARY_LOOP(expr)                                                      \
    do {                                                                      \
        int64_t j = 0;                                                        \
        if (sd == 1 && sa == 1) {                                             \
            bool stream = stream_row(n, 2);                                   \
            for (; stream && j < n && !line_start(d + j); j++) {              \
                float x = a[j];                                               \
                d[j] = (expr);                                                \
            }                                                                 \
            for (; j + BLOCK <= n; j += BLOCK) {                              \
                float z[BLOCK];                                               \
                _Pragma("GCC unroll 1")                                       \
                for (int k = 0; k < BLOCK; k++) {                             \
                    float x = a[j + k];                                       \
                    z[k] = (expr);                                            \
                }                                                             \
                if (stream)                                                   \
                    stream16(d + j, z);                                       \
                else                                                          \
                    memcpy(d + j, z, sizeof z);                               \
            }                                                                 \
            if (stream)                                                       \
                stream_done();                                                \
        }                                                                     \
        for (; j < n; j++) {                                                  \
            float x = a[j * sa];                                              \
            d[j * sd] = (expr);                                               \
        }                                                                     \
    } while (0)

//@ snippet binary_row
/* One row of d = a OP b: d[j*sd] = a[j*sa] OP b[j*sb] for j < n. */
static void binary_row(nd_binop op, float *d, const float *a, const float *b, int64_t n,
                       int64_t sd, int64_t sa, int64_t sb)
{
    //@ solution binary_row
    switch (op) {
    case ND_ADD: BINARY_LOOP(x + y); break;
    case ND_SUB: BINARY_LOOP(x - y); break;
    case ND_MUL: BINARY_LOOP(x * y); break;
    case ND_DIV: BINARY_LOOP(x / y); break;
    case ND_POW: BINARY_LOOP(powf(x, y)); break;
    /* NaN if either is NaN, as NumPy's np.maximum; C's fmaxf would
     * return the other operand instead. */
    case ND_MAXIMUM: BINARY_LOOP((isnan(x) || x >= y) ? x : y); break;
    /* Every comparison with a NaN is false: 0.0f. */
    case ND_EQ: BINARY_LOOP(x == y ? 1.0f : 0.0f); break;
    case ND_GE: BINARY_LOOP(x >= y ? 1.0f : 0.0f); break;
    }
    //@ stub
    //> /* switch (op), and in each case one BINARY_LOOP(expression of x, y).
    //>  * maximum is NaN when either input is; EQ and GE give 1.0f or 0.0f. */
    //> (void)op; (void)d; (void)a; (void)b; (void)n; (void)sd; (void)sa; (void)sb;
    //@ end solution binary_row
}
//@ end snippet binary_row

//@ snippet unary_row
/* One row of d = OP(a): d[j*sd] = OP(a[j*sa]) for j < n. */
static void unary_row(nd_unop op, float *d, const float *a, int64_t n, int64_t sd,
                      int64_t sa)
{
    //@ solution unary_row
    switch (op) {
    case ND_NEG: UNARY_LOOP(-x); break;
    case ND_LOG: UNARY_LOOP(logf(x)); break;
    case ND_EXP: UNARY_LOOP(expf(x)); break;
    case ND_TANH: UNARY_LOOP(tanhf(x)); break;
    case ND_ABS: UNARY_LOOP(fabsf(x)); break;
    }
    //@ stub
    //> /* switch (op), and in each case one UNARY_LOOP(expression of x),
    //>  * with the float functions of <math.h>: logf, expf, tanhf, fabsf. */
    //> (void)op; (void)d; (void)a; (void)n; (void)sd; (void)sa;
    //@ end solution unary_row
}
//@ end snippet unary_row

/* ------------------------------------------------------------------------ */
/* Kernels: a loop over views of one shape                                  */
/* ------------------------------------------------------------------------ */

/* Offset of the row at outer position `index` (all axes but the last). */
static int64_t row_offset(const int64_t *index, const int64_t *strides, int outer)
{
    int64_t off = 0;
    for (int k = 0; k < outer; k++)
        off += index[k] * strides[k];
    return off;
}

//@ snippet simplify3
/* nd_simplify_dims for the three operands of a binary op, dst, a and b:
 * drop size-1 axes, and merge axis k into the kept axis before it only
 * where all three are adjacent in memory there. */
static nd_status simplify3(int *ndim, int64_t *shape, int64_t *sd, int64_t *sa, int64_t *sb)
{
    //@ solution simplify3
    int m = 0;
    for (int k = 0; k < *ndim; k++) {
        int64_t n = shape[k];
        if (n == 1)
            continue;
        bool merge = m > 0 && sd[m - 1] == n * sd[k] && sa[m - 1] == n * sa[k] &&
                     sb[m - 1] == n * sb[k];
        int to = merge ? m - 1 : m++;
        shape[to] = merge ? shape[to] * n : n;
        sd[to] = sd[k];   /* merged or not, axis `to` steps like axis k */
        sa[to] = sa[k];
        sb[to] = sb[k];
    }
    *ndim = m;
    return ND_OK;
    //@ stub
    //> /* nd_simplify_dims's rule with a third operand: drop size-1 axes,
    //>  * merge a pair only where dst, a and b all allow it. */
    //> (void)ndim; (void)shape; (void)sd; (void)sa; (void)sb;
    //> return nd_not_implemented("nd_binary", 3);
    //@ end solution simplify3
}
//@ end snippet simplify3

//@ snippet binary_cpu
/* dst = a OP b, where a and b have dst's shape (broadcast views) (CPU). */
static nd_status binary_cpu(nd_binop op, const nd_array *dst, const nd_array *a,
                            const nd_array *b)
{
    //@ solution binary_cpu
    if (nd_numel(dst) == 0)
        return ND_OK;
    int nd = dst->ndim;
    int64_t shape[ND_MAX_DIMS], sd[ND_MAX_DIMS], sa[ND_MAX_DIMS], sb[ND_MAX_DIMS];
    memcpy(shape, dst->shape, sizeof shape);
    memcpy(sd, dst->strides, sizeof sd);
    memcpy(sa, a->strides, sizeof sa);
    memcpy(sb, b->strides, sizeof sb);
    nd_status s = simplify3(&nd, shape, sd, sa, sb);
    if (s != ND_OK)
        return s;
    float *d = nd_data(dst) + dst->offset;
    const float *pa = nd_data(a) + a->offset, *pb = nd_data(b) + b->offset;
    if (nd == 0) {   /* one element */
        binary_row(op, d, pa, pb, 1, 1, 1, 1);
        return ND_OK;
    }
    /* The iterator walks the outer axes; the last axis is one row. */
    int outer = nd - 1;
    nd_iter it;
    if ((s = nd_iter_init(&it, outer, shape)) != ND_OK)
        return s;
    while (nd_iter_next(&it))
        binary_row(op, d + row_offset(it.index, sd, outer),
                   pa + row_offset(it.index, sa, outer), pb + row_offset(it.index, sb, outer),
                   shape[outer], sd[outer], sa[outer], sb[outer]);
    return ND_OK;
    //@ stub
    //> /* Copy the three layouts, simplify them together (simplify3), then
    //>  * iterate the outer axes with nd_iter and run each row (binary_row). */
    //> (void)op; (void)dst; (void)a; (void)b;
    //> (void)binary_row; (void)simplify3; (void)row_offset;
    //> return nd_not_implemented("nd_binary", 3);
    //@ end solution binary_cpu
}
//@ end snippet binary_cpu

//@ snippet unary_cpu
/* dst = OP(a), where a has dst's shape (CPU). */
static nd_status unary_cpu(nd_unop op, const nd_array *dst, const nd_array *a)
{
    //@ solution unary_cpu
    if (nd_numel(dst) == 0)
        return ND_OK;
    int nd = dst->ndim;
    int64_t shape[ND_MAX_DIMS], sd[ND_MAX_DIMS], sa[ND_MAX_DIMS];
    memcpy(shape, dst->shape, sizeof shape);
    memcpy(sd, dst->strides, sizeof sd);
    memcpy(sa, a->strides, sizeof sa);
    nd_status s = nd_simplify_dims(&nd, shape, sd, sa);
    if (s != ND_OK)
        return s;
    float *d = nd_data(dst) + dst->offset;
    const float *pa = nd_data(a) + a->offset;
    if (nd == 0) {   /* one element */
        unary_row(op, d, pa, 1, 1, 1);
        return ND_OK;
    }
    int outer = nd - 1;
    nd_iter it;
    if ((s = nd_iter_init(&it, outer, shape)) != ND_OK)
        return s;
    while (nd_iter_next(&it))
        unary_row(op, d + row_offset(it.index, sd, outer),
                  pa + row_offset(it.index, sa, outer), shape[outer], sd[outer], sa[outer]);
    return ND_OK;
    //@ stub
    //> /* As binary_cpu with two operands: nd_simplify_dims does them. */
    //> (void)op; (void)dst; (void)a; (void)unary_row;
    //> return nd_not_implemented("nd_unary", 3);
    //@ end solution unary_cpu
}
//@ end snippet unary_cpu

/* ------------------------------------------------------------------------ */
/* The public functions: check, shape, allocate, run                        */
/* ------------------------------------------------------------------------ */

/* An op number must name one of the `count` ops of its enum. */
static nd_status check_op(int op, int count, const char *fn)
{
    if (op < 0 || op >= count)
        return nd_fail(ND_ERR_ARG, "%s: unknown op %d; it must be 0..%d", fn, op, count - 1);
    return ND_OK;
}

/* The checks every binary function starts with. */
static nd_status check_binary(nd_binop op, const nd_array *a, const nd_array *b,
                              const char *fn)
{
    nd_status s = check_op((int)op, ND_GE + 1, fn);
    if (s == ND_OK)
        s = nd_check_array(a, fn, "a");
    if (s == ND_OK)
        s = nd_check_array(b, fn, "b");
    if (s == ND_OK)
        s = nd_check_same_device(a, b, fn);
    return s;
}

/* dst must be an array on a's device with the result's shape. */
static nd_status check_dst(const nd_array *dst, const nd_array *a, int ndim,
                           const int64_t *shape, const char *fn)
{
    nd_status s = nd_check_array(dst, fn, "dst");
    if (s == ND_OK)
        s = nd_check_same_device(a, dst, fn);
    if (s != ND_OK)
        return s;
    bool same = dst->ndim == ndim;
    for (int k = 0; k < ndim && same; k++)
        same = dst->shape[k] == shape[k];
    if (!same) {
        char sd[SHAPE_STR], sr[SHAPE_STR];
        return nd_fail(ND_ERR_SHAPE, "%s: dst has shape %s, but the result has shape %s",
                       fn, nd_shape_str(dst->ndim, dst->shape, sd, sizeof sd),
                       nd_shape_str(ndim, shape, sr, sizeof sr));
    }
    return ND_OK;
}

//@ snippet binary
/* dst = a OP b for checked arguments, dst of the broadcast shape: a and b
 * are broadcast to dst's shape (views, no copies), then the kernel runs. */
static nd_status binary_run(nd_binop op, const nd_array *a, const nd_array *b,
                            const nd_array *dst)
{
    nd_array va, vb;
    nd_status s = nd_broadcast_to(a, dst->ndim, dst->shape, &va);
    if (s != ND_OK)
        return s;
    if ((s = nd_broadcast_to(b, dst->ndim, dst->shape, &vb)) == ND_OK) {
        s = dst->buf->device == ND_CUDA ? nd_cuda_binary(op, dst, &va, &vb)
                                        : binary_cpu(op, dst, &va, &vb);
        nd_release(&vb);
    }
    nd_release(&va);
    return s;
}

nd_status nd_binary(nd_binop op, const nd_array *a, const nd_array *b, nd_array *out)
{
    nd_status s = check_binary(op, a, b, "binary");
    if (s != ND_OK)
        return s;
    if (out == NULL)
        return nd_fail(ND_ERR_ARG, "binary: argument 'out' is NULL");
    int ndim = 0;
    int64_t shape[ND_MAX_DIMS];
    nd_array made;
    if ((s = broadcast_shape(a, b, &ndim, shape, "binary")) != ND_OK ||
        (s = nd_empty_for("binary", a->buf->device, ndim, shape, &made)) != ND_OK)
        return s;
    if ((s = binary_run(op, a, b, &made)) != ND_OK) {
        nd_release(&made);
        return s;
    }
    /* out may be a or b: nd_replace then drops that input's reference. */
    nd_replace(out == b ? b : a, out, &made);
    return ND_OK;
}

nd_status nd_binary_into(nd_binop op, const nd_array *a, const nd_array *b,
                         const nd_array *dst)
{
    nd_status s = check_binary(op, a, b, "binary_into");
    if (s != ND_OK)
        return s;
    int ndim = 0;
    int64_t shape[ND_MAX_DIMS];
    if ((s = broadcast_shape(a, b, &ndim, shape, "binary_into")) != ND_OK ||
        (s = check_dst(dst, a, ndim, shape, "binary_into")) != ND_OK)
        return s;
    /* dst may be a or b, the same view: each element is read before it is
     * written, and no other element reads it afterwards. */
    return binary_run(op, a, b, dst);
}
//@ end snippet binary

//@ snippet scalar
/* dst = a OP value, dst of a's shape: the value is a one-element array on
 * a's device, which binary_run broadcasts to every position (stride 0). */
static nd_status scalar_run(nd_binop op, const nd_array *a, float value, const nd_array *dst)
{
    nd_array v;
    nd_status s = nd_full(a->buf->device, 0, NULL, value, &v);
    if (s != ND_OK)
        return s;
    s = binary_run(op, a, &v, dst);
    nd_release(&v);
    return s;
}

nd_status nd_scalar(nd_binop op, const nd_array *a, float value, nd_array *out)
{
    nd_status s = check_op((int)op, ND_GE + 1, "scalar");
    if (s == ND_OK)
        s = nd_check_array(a, "scalar", "a");
    if (s != ND_OK)
        return s;
    if (out == NULL)
        return nd_fail(ND_ERR_ARG, "scalar: argument 'out' is NULL");
    nd_array made;
    if ((s = nd_empty_for("scalar", a->buf->device, a->ndim, a->shape, &made)) != ND_OK)
        return s;
    if ((s = scalar_run(op, a, value, &made)) != ND_OK) {
        nd_release(&made);
        return s;
    }
    nd_replace(a, out, &made);
    return ND_OK;
}

nd_status nd_scalar_into(nd_binop op, const nd_array *a, float value, const nd_array *dst)
{
    nd_status s = check_op((int)op, ND_GE + 1, "scalar_into");
    if (s == ND_OK)
        s = nd_check_array(a, "scalar_into", "a");
    if (s == ND_OK)
        s = check_dst(dst, a, a->ndim, a->shape, "scalar_into");
    if (s != ND_OK)
        return s;
    return scalar_run(op, a, value, dst);
}
//@ end snippet scalar

/* dst = OP(a) on the device both live on. */
static nd_status unary_run(nd_unop op, const nd_array *dst, const nd_array *a)
{
    return dst->buf->device == ND_CUDA ? nd_cuda_unary(op, dst, a) : unary_cpu(op, dst, a);
}

//@ snippet unary
nd_status nd_unary(nd_unop op, const nd_array *a, nd_array *out)
{
    nd_status s = check_op((int)op, ND_ABS + 1, "unary");
    if (s == ND_OK)
        s = nd_check_array(a, "unary", "a");
    if (s != ND_OK)
        return s;
    if (out == NULL)
        return nd_fail(ND_ERR_ARG, "unary: argument 'out' is NULL");
    nd_array made;
    if ((s = nd_empty_for("unary", a->buf->device, a->ndim, a->shape, &made)) != ND_OK)
        return s;
    if ((s = unary_run(op, &made, a)) != ND_OK) {
        nd_release(&made);
        return s;
    }
    nd_replace(a, out, &made);
    return ND_OK;
}

nd_status nd_unary_into(nd_unop op, const nd_array *a, const nd_array *dst)
{
    nd_status s = check_op((int)op, ND_ABS + 1, "unary_into");
    if (s == ND_OK)
        s = nd_check_array(a, "unary_into", "a");
    if (s == ND_OK)
        s = check_dst(dst, a, a->ndim, a->shape, "unary_into");
    if (s != ND_OK)
        return s;
    return unary_run(op, dst, a);
}
//@ end snippet unary
