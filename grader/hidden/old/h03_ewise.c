/*
 * h03_ewise.c -- hidden tests of lesson 3: elementwise ops (nd_binary,
 * nd_binary_into, nd_scalar, nd_scalar_into, nd_unary, nd_unary_into).
 *
 * What this file covers, in nd.h's order (the suite at the end lists every
 * test with its points and hint):
 *
 *   nd_binary       2400 random calls of every op on inputs of 0..8 axes
 *                   (compact; permuted and sliced with steps +-1, +-2;
 *                   repeating, stride 0; compact windows at an offset whose
 *                   size-1 axes have junk strides; all axes reversed; views
 *                   of views), broadcast against each other (leading axes
 *                   dropped or added, axes set to 1, sizes 0); EVERY
 *                   ordered pair of the 85 shapes of up to 3 axes with
 *                   sizes 0..3 (7225 pairs, also through nd_binary_into):
 *                   the values when they broadcast, ND_ERR_SHAPE naming both
 *                   shapes when not; size-1 axes with far-off junk strides
 *                   stretched on up to 8 axes; a 35 x 35 grid of special
 *                   values (signed zeros, denormals, FLT_MIN/MAX, +-inf,
 *                   NaN) for every op, and C11 Annex F's table for pow,
 *                   signed zeros and gradual underflow
 *   nd_binary_into  1500 random calls into strided dst views (gaps,
 *                   reversed axes, offsets, junk size-1 strides, long
 *                   non-contiguous rows), the whole dst buffer checked;
 *                   dst == a, == b, == both, a second reference to a;
 *                   every dst shape of up to 3 axes (and near misses with
 *                   extra 1s) refused unless it is the result's, nothing
 *                   written
 *   nd_scalar(_into) 2000 random calls with special scalars; the array is
 *                   the LEFT operand (a - s, a / s, a ** s, a >= s) on
 *                   long and short, forward and reversed rows
 *   nd_unary(_into) 2000 random calls; Annex F's specials with the sign of
 *                   zero; dense sweeps of exp (overflow, underflow into
 *                   denormals), log (every binade, 0, negatives) and tanh
 *                   (saturation, tiny arguments); neg/abs on 4096 random
 *                   bit patterns
 *   all of them     out == an input for the allocating versions (the old
 *                   reference released once; on an error the input kept);
 *                   rows of 27 lengths around the SIMD block sizes with
 *                   every mix of strides 1, -1, 2/3 and 0, in place too;
 *                   empty and 0-d arrays at offsets; 2^22-element compact,
 *                   transposed, broadcast and reversed 8-D operands;
 *                   algebraic properties of the library against itself;
 *                   argument errors (NULL, released, broken arrays, ops out
 *                   of range) that change nothing
 *
 * The reference never calls lesson code.  Inputs and outputs are views
 * made with nd_as_strided (through t_view_of); the expected result is
 * computed here position by position: the result's shape by NumPy's rule
 * written out (align at the right, a missing or size-1 axis stretches),
 * each input read from a host copy of its buffer at offset +
 * sum(index[k] * stride[k]) with a stretched axis read at index 0, and the
 * op done in double, then rounded once to float.
 *
 * Tolerances.  + - * / are compared bit for bit, signs of zero included:
 * IEEE 754 rounds them correctly, and a double result rounded once to
 * float is that same correctly rounded float (double has more than
 * 2*24+2 bits, so the double rounding is innocuous).  neg, abs, eq and
 * ge are exact by nature, bit for bit; maximum is exact too but the sign
 * of a zero result is not checked (maximum(-0, +0) may be either zero:
 * nd.h does not fix it).  pow, exp, log and tanh are not correctly
 * rounded by any libm: glibc's are within 1-2 ulp, CUDA's (the same tests
 * run on the device in lesson 6) within 4, so they may be 4 ulp from the
 * reference, measured in representable floats (which stays meaningful for
 * denormal results, where a relative tolerance does not).  Everywhere, NaN
 * must be NaN (any NaN), an infinity exactly that infinity, and where both
 * the reference and the result are zero, the signs must agree.
 *
 * Every test first calls a lesson-3 function on a valid input with T_OK,
 * so that on the skeleton each test fails with "not implemented".
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

/* The call must fail with `want`, with a message naming `op`. */
#define EXPECT_FAIL(want, op, ...)                                         \
    do {                                                                   \
        nd_clear_error();                                                  \
        t_err((__VA_ARGS__), (want), #__VA_ARGS__, __FILE__, __LINE__);   \
        CHECK(strstr(nd_last_error(), (op)) != NULL, "%s failed as it "    \
              "should, but its message \"%s\" does not name the operation " \
              "\"%s\"", #__VA_ARGS__, nd_last_error(), (op));              \
    } while (0)

#define BCAST_HINT "align the shapes at the RIGHT; a missing axis, or one of size 1, " \
    "stretches to the other's size and is read at index 0 (stride 0, whatever stride " \
    "it had); read each input through its own offset and signed strides"
#define INTO_HINT "write through dst's own offset and signed strides, to dst's " \
    "elements and no others; a contiguous fast path needs dst contiguous too; compute " \
    "each element from the inputs as they were before the call"
#define OPS_HINT "maximum is NaN when either input is (not fmaxf); EQ and GE give " \
    "1.0f or 0.0f, and 0.0f whenever a NaN is involved; x >= y is not x > y"

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

/* "shape=(2,3) strides=(3,1) offset=0" into dst. */
static const char *describe(const nd_array *v, char *dst, size_t cap)
{
    char sh[200], st[200];
    snprintf(dst, cap, "shape=%s strides=%s offset=%" PRId64,
             nd_shape_str(v->ndim, v->shape, sh, sizeof sh),
             nd_shape_str(v->ndim, v->strides, st, sizeof st), v->offset);
    return dst;
}

/* For calls in loops: `got` (the status of the call `what` describes)
 * must be `want`, with a message naming `op`. */
static void expect_fail(nd_status got, nd_status want, const char *op, const char *what)
{
    CHECK(got == want, "%s returned %s, expected %s%s%s", what, nd_status_name(got),
          nd_status_name(want), got == ND_OK ? "" : ": ", got == ND_OK ? "" : nd_last_error());
    CHECK(nd_last_error()[0] != '\0', "%s failed without a message", what);
    CHECK(strstr(nd_last_error(), op) != NULL, "%s failed as it should, but its message "
          "\"%s\" does not name the operation \"%s\"", what, nd_last_error(), op);
}

/* The last error message must contain both shapes, as nd_shape_str
 * writes them. */
static void expect_shapes_named(int n1, const int64_t *s1, int n2, const int64_t *s2,
                                const char *what)
{
    char t1[200], t2[200];
    nd_shape_str(n1, s1, t1, sizeof t1);
    nd_shape_str(n2, s2, t2, sizeof t2);
    CHECK(strstr(nd_last_error(), t1) && strstr(nd_last_error(), t2), "%s: the message "
          "\"%s\" should name both shapes, %s and %s (as nd_shape_str writes them)", what,
          nd_last_error(), t1, t2);
}

/* Every test starts with one valid call that must succeed. */
static void first_binary(void)
{
    int64_t s23[2] = { 2, 3 }, s3 = 3;
    nd_array a = t_arange(2, s23), b = t_arange(1, &s3), out;
    T_OK(nd_binary(ND_ADD, &a, &b, &out));
    nd_release(&out);
    nd_release(&a);
    nd_release(&b);
}

static void first_binary_into(void)
{
    int64_t s23[2] = { 2, 3 }, s3 = 3;
    nd_array a = t_arange(2, s23), b = t_arange(1, &s3), d = t_arange(2, s23);
    T_OK(nd_binary_into(ND_MUL, &a, &b, &d));
    nd_release(&d);
    nd_release(&a);
    nd_release(&b);
}

static void first_scalar(void)
{
    int64_t s4 = 4;
    nd_array a = t_arange(1, &s4), out;
    T_OK(nd_scalar(ND_SUB, &a, 1.5f, &out));
    nd_release(&out);
    nd_release(&a);
}

static void first_unary(void)
{
    int64_t s4 = 4;
    nd_array a = t_arange(1, &s4), out;
    T_OK(nd_unary(ND_EXP, &a, &out));
    nd_release(&out);
    nd_release(&a);
}

/* ---------------------------------------------------------------------- */
/* The ops and their inputs                                               */
/* ---------------------------------------------------------------------- */

/* Each op's name, and the range its random inputs mostly come from. */
static const struct { const char *name; float lo, hi; } BIN[] = {
    [ND_ADD] = { "ND_ADD", -8, 8 },     [ND_SUB] = { "ND_SUB", -8, 8 },
    [ND_MUL] = { "ND_MUL", -8, 8 },     [ND_DIV] = { "ND_DIV", -8, 8 },
    [ND_POW] = { "ND_POW", -3, 3 },     [ND_MAXIMUM] = { "ND_MAXIMUM", -4, 4 },
    [ND_EQ] = { "ND_EQ", -2, 2 },       [ND_GE] = { "ND_GE", -2, 2 },
};
#define NBIN (int)(sizeof BIN / sizeof BIN[0])

static const struct { const char *name; float lo, hi; } UN[] = {
    [ND_NEG] = { "ND_NEG", -8, 8 },     [ND_LOG] = { "ND_LOG", -1, 20 },
    [ND_EXP] = { "ND_EXP", -95, 95 },   [ND_TANH] = { "ND_TANH", -12, 12 },
    [ND_ABS] = { "ND_ABS", -8, 8 },
};
#define NUN (int)(sizeof UN / sizeof UN[0])

/* Values every op meets now and then: signed zeros, infinities, NaN,
 * denormals, the extremes. */
static const float SPECIAL[] = { 0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1.0f, -1.0f, 0.5f,
                                 FLT_MIN, -FLT_MIN, 0x1p-133f, -0x3p-140f, 0x1p-149f,
                                 FLT_MAX, -FLT_MAX, 2.0f };
#define NSPECIAL (int)(sizeof SPECIAL / sizeof SPECIAL[0])

/* One input value: mostly uniform in [lo, hi); one in 4 a multiple of 1/2
 * (ties for EQ, GE and maximum; zeros; integer powers of negative bases);
 * one in 16 a special value. */
static float draw(t_rng *r, float lo, float hi)
{
    int64_t p = t_int(r, 0, 15);
    if (p == 0)
        return SPECIAL[t_int(r, 0, NSPECIAL - 1)];
    if (p < 5)
        return (float)t_int(r, (int64_t)(2 * lo), (int64_t)(2 * hi)) / 2.0f;
    return t_float(r, lo, hi);
}

/* ---------------------------------------------------------------------- */
/* Layouts: random views of a shape                                       */
/* ---------------------------------------------------------------------- */

typedef struct {
    int ndim;
    int64_t shape[ND_MAX_DIMS], strides[ND_MAX_DIMS], offset, size;
} layout;

enum { K_COMPACT, K_SLICED, K_REPEAT, K_WINDOW, K_REVERSED, K_VIEW_OF_VIEW, K_COUNT };
/* The kinds that never reach one element twice, so they may be written. */
static const int WRITABLE[] = { K_COMPACT, K_SLICED, K_WINDOW, K_REVERSED, K_VIEW_OF_VIEW };

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

/* A random layout of `shape` over a buffer of at most about `cap`
 * elements: K_COMPACT a fresh compact array; K_SLICED a permuted, sliced
 * view (steps +-1, +-2, an offset, no element twice); K_REPEAT the same
 * with some axes of stride 0; K_WINDOW a compact window at an offset whose
 * size-1 axes (all axes, when empty) have junk strides; K_REVERSED like
 * K_SLICED with every step negative; K_VIEW_OF_VIEW a slice (steps +-1,
 * +-2) of a K_SLICED view of a larger shape. */
static layout gen_layout(t_rng *r, int ndim, const int64_t *shape, int kind, int64_t cap)
{
    layout l = { .ndim = ndim };
    int64_t n = t_numel(ndim, shape);
    for (int k = 0; k < ndim; k++)
        l.shape[k] = shape[k];
    if (kind == K_COMPACT) {
        row_major(ndim, shape, l.strides);
        l.size = n;
        return l;
    }
    if (kind == K_WINDOW) {
        row_major(ndim, shape, l.strides);
        for (int k = 0; k < ndim; k++)
            if (shape[k] == 1 || n == 0)
                l.strides[k] = t_int(r, -40, 40);
        l.offset = t_int(r, 1, 9);
        l.size = l.offset + n + t_int(r, 0, 7);
        return l;
    }
    if (kind == K_VIEW_OF_VIEW) {
        int64_t big[ND_MAX_DIMS] = { 0 }, step[ND_MAX_DIMS] = { 0 };
        for (int k = 0; k < ndim; k++) {
            step[k] = t_int(r, 1, 2) * (t_int(r, 0, 1) ? 1 : -1);
            big[k] = (shape[k] > 0 ? (shape[k] - 1) * llabs(step[k]) + 1 : 0) + t_int(r, 0, 1);
        }
        if (t_numel(ndim, big) > cap / 2)
            for (int k = 0; k < ndim; k++) {
                step[k] = step[k] < 0 ? -1 : 1;
                big[k] = shape[k];
            }
        layout outer = gen_layout(r, ndim, big, K_SLICED, cap);
        l.offset = outer.offset;
        l.size = outer.size;
        for (int k = 0; k < ndim; k++) {
            int64_t span = shape[k] > 0 ? (shape[k] - 1) * llabs(step[k]) : 0;
            if (n > 0)
                l.offset += (step[k] > 0 ? t_int(r, 0, big[k] - 1 - span)
                                         : t_int(r, span, big[k] - 1)) * outer.strides[k];
            l.strides[k] = outer.strides[k] * step[k];
        }
        return l;
    }
    /* K_SLICED, K_REPEAT, K_REVERSED: cut from a permuted compact base */
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
        step[k] = kind == K_REVERSED || t_int(r, 0, 2) == 0 ? -m : m;
        b[k] = need + slack;
        total *= b[k] > 0 ? b[k] : 1;
    }
    int64_t s = 1;
    for (int j = ndim - 1; j >= 0; j--) {
        bs[perm[j]] = s;
        s *= b[perm[j]] > 0 ? b[perm[j]] : 1;
    }
    int64_t pad = t_int(r, 0, 3);
    l.offset = pad;
    for (int k = 0; k < ndim; k++) {
        l.strides[k] = step[k] * bs[k];
        if (kind == K_REPEAT && shape[k] > 1 && t_int(r, 0, 3) == 0)
            l.strides[k] = 0;
        if (shape[k] == 0 || b[k] == 0)
            continue;
        int64_t span = (shape[k] - 1) * llabs(step[k]);
        int64_t first = t_int(r, 0, b[k] - 1 - span);
        l.offset += (step[k] < 0 ? b[k] - 1 - first : first) * bs[k];
    }
    l.size = pad + total + t_int(r, 0, 3);
    return l;
}

/* An input: the layout over a buffer of values drawn from [lo, hi). */
static nd_array input_of(t_rng *r, const layout *l, float lo, float hi)
{
    float *v = t_floats(l->size);
    for (int64_t i = 0; i < l->size; i++)
        v[i] = draw(r, lo, hi);
    nd_array a = t_view_of(l->size, v, l->ndim, l->shape, l->strides, l->offset);
    free(v);
    return a;
}

/* A dst: the layout over a buffer of values no op gives here,
 * -1000.25, -1001.25, ..., so that an element never written shows. */
static nd_array dst_of(const layout *l)
{
    float *v = t_floats(l->size);
    for (int64_t i = 0; i < l->size; i++)
        v[i] = -1000.25f - (float)i;
    nd_array d = t_view_of(l->size, v, l->ndim, l->shape, l->strides, l->offset);
    free(v);
    return d;
}

static nd_array random_input(t_rng *r, int nd, const int64_t *shape, float lo, float hi)
{
    layout l = gen_layout(r, nd, shape, (int)t_int(r, 0, K_COUNT - 1), 1 << 13);
    return input_of(r, &l, lo, hi);
}

static nd_array random_dst(t_rng *r, int nd, const int64_t *shape)
{
    layout l = gen_layout(r, nd, shape, WRITABLE[t_int(r, 0, 4)], 1 << 13);
    return dst_of(&l);
}

/* A random shape of lo..hi axes, sizes up to max (1 often), numel <= cap;
 * zero sizes in about one shape of five. */
static int gen_shape(t_rng *r, int lo, int hi, int64_t max, int64_t cap, int64_t *shape)
{
    int ndim = (int)t_int(r, lo, hi);
    return t_random_shape(r, ndim, max, t_int(r, 0, 4) == 0, cap, shape);
}

/* A shape that broadcasts with others to (nd, shape), as NumPy pairs them:
 * the same, with leading axes dropped, with some axes set to 1, and now
 * and then extra leading axes of size 1.  Returns its ndim. */
static int operand_shape(t_rng *r, int nd, const int64_t *shape, int64_t *out)
{
    int mode = (int)t_int(r, 0, 3); /* bit 0: drop leading axes; bit 1: set some to 1 */
    int drop = mode & 1 ? (int)t_int(r, 0, nd) : 0, m = 0;
    int room = ND_MAX_DIMS - (nd - drop);
    int lead = room > 0 && t_int(r, 0, 5) == 0 ? (int)t_int(r, 1, room < 2 ? room : 2) : 0;
    for (int k = 0; k < lead; k++)
        out[m++] = 1;
    for (int k = drop; k < nd; k++)
        out[m++] = mode & 2 && t_int(r, 0, 1) ? 1 : shape[k];
    return m;
}

/* ---------------------------------------------------------------------- */
/* The reference                                                          */
/* ---------------------------------------------------------------------- */

typedef enum { BINARY, SCALAR, UNARY } call_kind;

/* nd_binary(op, a, b), nd_scalar(op, a, value) or nd_unary(op, a), and
 * their _into forms. */
typedef struct {
    call_kind kind;
    int op;                 /* an nd_binop; an nd_unop for UNARY */
    const nd_array *a, *b;  /* b: BINARY only */
    float value;            /* SCALAR only */
} call;

static const char *op_name(const call *c)
{
    return c->kind == UNARY ? UN[c->op].name : BIN[c->op].name;
}

/* x OP y in double, rounded once to float (see the top). */
static float ref_binop(int op, float x, float y)
{
    double a = x, b = y;
    switch (op) {
    case ND_ADD: return (float)(a + b);
    case ND_SUB: return (float)(a - b);
    case ND_MUL: return (float)(a * b);
    case ND_DIV: return (float)(a / b);
    case ND_POW: return (float)pow(a, b);
    case ND_MAXIMUM: return isnan(x) || isnan(y) ? NAN : x >= y ? x : y;
    case ND_EQ: return x == y ? 1.0f : 0.0f;
    case ND_GE: return x >= y ? 1.0f : 0.0f;
    }
    ck_abort_msg("test bug: unknown binop %d", op);
}

static float ref_unop(int op, float x)
{
    double a = x;
    switch (op) {
    case ND_NEG: return -x;
    case ND_LOG: return (float)log(a);
    case ND_EXP: return (float)exp(a);
    case ND_TANH: return (float)tanh(a);
    case ND_ABS: return fabsf(x);
    }
    ck_abort_msg("test bug: unknown unop %d", op);
}

/* NumPy's broadcast of two shapes, written plainly: from the right, a
 * missing axis has size 1; sizes must be equal or one of them 1. */
static bool ref_broadcast(int na, const int64_t *sa, int nb, const int64_t *sb, int *nd,
                          int64_t *shape)
{
    int n = na > nb ? na : nb;
    for (int k = 1; k <= n; k++) {   /* the k-th axis from the right */
        int64_t x = k <= na ? sa[na - k] : 1, y = k <= nb ? sb[nb - k] : 1;
        if (x != y && x != 1 && y != 1)
            return false;
        shape[n - k] = x == 1 ? y : x;
    }
    *nd = n;
    return true;
}

static bool ref_shape(const call *c, int *nd, int64_t *shape)
{
    if (c->kind != BINARY) {
        *nd = c->a->ndim;
        memcpy(shape, c->a->shape, sizeof c->a->shape);
        return true;
    }
    return ref_broadcast(c->a->ndim, c->a->shape, c->b->ndim, c->b->shape, nd, shape);
}

/* The buffer offsets that v is read at for the positions of a result of
 * (nd, shape), in row-major order: v's axes align with the result's last
 * ones, and a missing or size-1 axis is read at index 0.  Walked index by
 * index with an odometer, so that 2^22 positions stay cheap.  malloc'd. */
static int64_t *read_offsets(const nd_array *v, int nd, const int64_t *shape)
{
    int64_t st[ND_MAX_DIMS], idx[ND_MAX_DIMS] = { 0 }, n = t_numel(nd, shape), off = v->offset;
    for (int k = 0; k < nd; k++) {
        int j = k - (nd - v->ndim);
        st[k] = j < 0 || v->shape[j] == 1 ? 0 : v->strides[j];
    }
    int64_t *o = t_alloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
    for (int64_t i = 0; i < n; i++) {
        o[i] = off;
        for (int k = nd - 1; k >= 0; k--) {
            if (++idx[k] < shape[k]) {
                off += st[k];
                break;
            }
            off -= (idx[k] - 1) * st[k];   /* back to index 0 */
            idx[k] = 0;
        }
    }
    return o;
}

/* v's values at the positions of a result of (nd, shape).  malloc'd. */
static float *values_at(const nd_array *v, int nd, const int64_t *shape)
{
    int64_t size, n = t_numel(nd, shape);
    float *buf = t_buffer(v, &size), *out = t_floats(n);
    int64_t *o = read_offsets(v, nd, shape);
    for (int64_t i = 0; i < n; i++) {
        CHECK(o[i] >= 0 && o[i] < size, "the view %s reaches element %" PRId64 ", outside "
              "its buffer of %" PRId64, t_describe(v), o[i], size);
        out[i] = buf[o[i]];
    }
    free(o);
    free(buf);
    return out;
}

/* v's own elements in row-major order. */
static float *values_of(const nd_array *v)
{
    return values_at(v, v->ndim, v->shape);
}

/* The expected result of a call: its shape, the inputs at each position,
 * the values. */
typedef struct {
    int nd;
    int64_t shape[ND_MAX_DIMS], n;
    float *x, *y, *want;
} expect;

static expect expect_of(const call *c)
{
    expect e = { 0 };
    CHECK(ref_shape(c, &e.nd, e.shape), "test bug: a call whose shapes do not broadcast");
    e.n = t_numel(e.nd, e.shape);
    e.x = values_at(c->a, e.nd, e.shape);
    e.y = c->kind == BINARY ? values_at(c->b, e.nd, e.shape) : t_floats(e.n);
    e.want = t_floats(e.n);
    for (int64_t i = 0; i < e.n; i++) {
        if (c->kind == SCALAR)
            e.y[i] = c->value;
        e.want[i] = c->kind == UNARY ? ref_unop(c->op, e.x[i]) : ref_binop(c->op, e.x[i], e.y[i]);
    }
    return e;
}

static void expect_free(expect *e)
{
    free(e->x);
    free(e->y);
    free(e->want);
}

/* ---------------------------------------------------------------------- */
/* Comparing                                                              */
/* ---------------------------------------------------------------------- */

/* EXACT: bit for bit (any NaN for NaN); ANY_ZERO: the same, but +0 and -0
 * are one value; ULPS: within ULP_TOL representable floats (see the top). */
enum { EXACT, ANY_ZERO, ULPS };
#define ULP_TOL 4

static int mode_of(call_kind kind, int op)
{
    if (kind == UNARY)
        return op == ND_LOG || op == ND_EXP || op == ND_TANH ? ULPS : EXACT;
    return op == ND_POW ? ULPS : op == ND_MAXIMUM ? ANY_ZERO : EXACT;
}

/* Floats as integers in the order of their values: neighbours differ by 1,
 * -0 and +0 are both 0. */
static int64_t ordered(float f)
{
    int32_t i;
    memcpy(&i, &f, sizeof i);
    return i >= 0 ? (int64_t)i : (int64_t)INT32_MIN - (int64_t)i;
}

static bool agrees(int mode, float got, float want)
{
    if (isnan(want) || isnan(got))
        return isnan(want) && isnan(got);
    if (mode == ANY_ZERO)
        return got == want;
    if (mode == EXACT || isinf(want) || isinf(got) || (want == 0 && got == 0))
        return memcmp(&got, &want, sizeof got) == 0;
    return llabs(ordered(got) - ordered(want)) <= ULP_TOL;
}

static const char *mode_text(int mode)
{
    return mode == EXACT ? "compared bit for bit, the sign of a zero included"
         : mode == ANY_ZERO ? "compared exactly"
         : "allowed: 4 ulp; infinities, NaN and the sign of a zero exactly";
}

/* got[0..n-1] against the expectation; `before` (may be NULL): dst's
 * values before the call, to tell an element never written. */
static void assert_result(const call *c, const expect *e, const float *got,
                          const float *before, const char *what, const char *hint)
{
    int mode = mode_of(c->kind, c->op);
    int64_t bad = 0, first = -1;
    for (int64_t i = 0; i < e->n; i++)
        if (!agrees(mode, got[i], e->want[i])) {
            if (first < 0)
                first = i;
            bad++;
        }
    if (first < 0)
        return;
    int64_t idx[ND_MAX_DIMS];
    t_unravel(first, e->nd, e->shape, idx);
    char in[200];
    if (c->kind == UNARY)
        snprintf(in, sizeof in, "%s(%.9g)", op_name(c), (double)e->x[first]);
    else
        snprintf(in, sizeof in, "%s(%.9g, %.9g)", op_name(c), (double)e->x[first],
                 (double)e->y[first]);
    bool stale = before != NULL && memcmp(&got[first], &before[first], sizeof(float)) == 0;
    ck_abort_msg("%s: %" PRId64 " of %" PRId64 " elements wrong; the first, at index %s, "
                 "is %s = %.9g, got %.9g%s (%s). Hint: %s", what, bad, e->n,
                 t_index_str(e->nd, idx), in, (double)e->want[first], (double)got[first],
                 stale ? ", the value dst held before the call: never written" : "",
                 mode_text(mode), hint);
}

/* ---------------------------------------------------------------------- */
/* One call under test, and the checks                                    */
/* ---------------------------------------------------------------------- */

static nd_status call_new(const call *c, nd_array *out)
{
    switch (c->kind) {
    case BINARY: return nd_binary((nd_binop)c->op, c->a, c->b, out);
    case SCALAR: return nd_scalar((nd_binop)c->op, c->a, c->value, out);
    case UNARY: return nd_unary((nd_unop)c->op, c->a, out);
    }
    ck_abort_msg("test bug: unknown call kind");
}

static nd_status call_into(const call *c, const nd_array *dst)
{
    switch (c->kind) {
    case BINARY: return nd_binary_into((nd_binop)c->op, c->a, c->b, dst);
    case SCALAR: return nd_scalar_into((nd_binop)c->op, c->a, c->value, dst);
    case UNARY: return nd_unary_into((nd_unop)c->op, c->a, dst);
    }
    ck_abort_msg("test bug: unknown call kind");
}

/* "nd_binary_into(ND_ADD, a, b, dst), a shape=... , b ..., dst ..." */
static const char *call_text(const call *c, const nd_array *dst, const char *prefix,
                             char *buf, size_t cap)
{
    static const char *const fn[] = { "binary", "scalar", "unary" };
    char da[400], db[400] = "", dd[400] = "";
    describe(c->a, da, sizeof da);
    if (c->kind == BINARY)
        describe(c->b, db, sizeof db);
    if (dst != NULL)
        describe(dst, dd, sizeof dd);
    size_t len = (size_t)snprintf(buf, cap, "%snd_%s%s(%s, a%s%s%s): a %s%s%s", prefix,
                                  fn[c->kind], dst ? "_into" : "", op_name(c),
                                  c->kind == BINARY ? ", b" : "",
                                  c->kind == SCALAR ? ", value" : "", dst ? ", dst" : "", da,
                                  c->kind == BINARY ? ", b " : "", db);
    if (c->kind == SCALAR && len < cap)
        len += (size_t)snprintf(buf + len, cap - len, ", value %.9g", (double)c->value);
    if (dst != NULL && len < cap)
        snprintf(buf + len, cap - len, ", dst %s", dd);
    return buf;
}

/* An argument as it was before a call. */
typedef struct {
    const nd_array *v;
    nd_array copy;
    nd_buffer *buf;
    int64_t refs, size;
    float *data;
} snap;

static snap snap_take(const nd_array *v)
{
    snap s = { .v = v };
    if (v != NULL) {
        s.copy = *v;
        s.buf = v->buf;
        s.refs = v->buf->refcount;
        s.data = t_buffer(v, &s.size);
    }
    return s;
}

/* The view and its refcount as they were; the buffer too, unless it is
 * `written`, the buffer the call writes (the other checks judge it).
 * Frees the snapshot. */
static void snap_check(snap *s, const nd_buffer *written, const char *name, const char *what)
{
    if (s->v == NULL)
        return;
    CHECK(t_same_struct(s->v, &s->copy), "%s: the call changed %s's view from %s to %s: "
          "the arguments are const", what, name, t_describe(&s->copy), t_describe2(s->v));
    CHECK(s->buf->refcount == s->refs, "%s: %s's buffer has refcount %" PRId64 " after the "
          "call, %" PRId64 " before: release every view you make, and take no reference "
          "you keep", what, name, s->buf->refcount, s->refs);
    if (s->buf != written) {
        float *after = t_buffer(s->v, NULL);
        char w[1800];
        snprintf(w, sizeof w, "%s: %s's buffer", what, name);
        t_assert_floats(after, s->data, 1, &s->size, w, "an op reads its inputs and never "
                        "writes them");
        free(after);
    }
    free(s->data);
    s->data = NULL;
}

/* The new result: a new compact array on T_DEV with one reference,
 * exactly numel floats, offset 0, the reference's shape and values; the
 * inputs as they were. */
static void check_new(const call *c, const char *what, const char *hint)
{
    expect e = expect_of(c);
    snap sa = snap_take(c->a), sb = snap_take(c->kind == BINARY ? c->b : NULL);
    nd_array out;
    t_poison(&out);
    nd_status s = call_new(c, &out);
    CHECK(s == ND_OK, "%s returned %s: %s", what, nd_status_name(s), nd_last_error());
    t_assert_shape(&out, e.nd, e.shape, what);
    CHECK(out.buf != c->a->buf && (c->kind != BINARY || out.buf != c->b->buf), "%s: the "
          "result shares an input's buffer; it must be a new array", what);
    CHECK(out.buf->device == T_DEV && out.buf->refcount == 1, "%s: the result lives on %s "
          "with refcount %" PRId64 ", expected %s and 1", what,
          nd_device_name(out.buf->device), out.buf->refcount, nd_device_name(T_DEV));
    CHECK(out.buf->nbytes == (size_t)e.n * sizeof(float) && out.offset == 0, "%s: the "
          "result has %zu bytes and offset %" PRId64 ", expected %" PRId64 " floats and "
          "offset 0", what, out.buf->nbytes, out.offset, e.n);
    int64_t st[ND_MAX_DIMS];
    row_major(e.nd, e.shape, st);
    for (int k = 0; k < e.nd && e.n > 0; k++)
        CHECK(e.shape[k] == 1 || out.strides[k] == st[k], "%s: the result %s is not "
              "compact (row-major)", what, t_describe(&out));
    float *got = values_of(&out);
    assert_result(c, &e, got, NULL, what, hint);
    free(got);
    snap_check(&sa, NULL, "a", what);
    snap_check(&sb, NULL, "b", what);
    nd_release(&out);
    expect_free(&e);
}

/* The _into call: dst's elements hold the reference's values, nothing
 * else in dst's buffer changed; dst's view and every input kept (dst may
 * be one of them). */
static void check_into(const call *c, const nd_array *dst, const char *what, const char *hint)
{
    expect e = expect_of(c);
    t_assert_shape(dst, e.nd, e.shape, "test setup: dst");
    float *before = values_of(dst);
    snap sa = snap_take(c->a), sb = snap_take(c->kind == BINARY ? c->b : NULL);
    snap sd = snap_take(dst);
    nd_status s = call_into(c, dst);
    CHECK(s == ND_OK, "%s returned %s: %s", what, nd_status_name(s), nd_last_error());
    float *got = values_of(dst);
    assert_result(c, &e, got, before, what, hint);
    t_assert_outside_unchanged(dst, sd.data, dst, what);
    snap_check(&sa, dst->buf, "a", what);
    snap_check(&sb, dst->buf, "b", what);
    snap_check(&sd, dst->buf, "dst", what);
    free(got);
    free(before);
    expect_free(&e);
}

/* ====================================================================== */
/* nd_binary                                                              */
/* ====================================================================== */

START_TEST(binary_random_deep)
{
    first_binary();
    t_rng r = t_rng_new(43001);
    for (int c = 0; c < 2400; c++) {
        int op = c % NBIN;
        int64_t shape[ND_MAX_DIMS], sa[ND_MAX_DIMS], sb[ND_MAX_DIMS];
        int nd = gen_shape(&r, 0, ND_MAX_DIMS, 4, 400, shape);
        int na = operand_shape(&r, nd, shape, sa), nb = operand_shape(&r, nd, shape, sb);
        nd_array a = random_input(&r, na, sa, BIN[op].lo, BIN[op].hi);
        nd_array b = random_input(&r, nb, sb, BIN[op].lo, BIN[op].hi);
        call cl = { BINARY, op, &a, &b, 0 };
        char pre[40], what[1800];
        snprintf(pre, sizeof pre, "case %d: ", c);
        check_new(&cl, call_text(&cl, NULL, pre, what, sizeof what), BCAST_HINT);
        nd_release(&a);
        nd_release(&b);
    }
}
END_TEST

/* The 85 shapes of 0..3 axes with sizes 0..3. */
enum { NSMALL = 85 };
static int small_shapes(int *nd, int64_t (*sh)[3])
{
    int i = 0;
    for (int n = 0; n <= 3; n++) {
        int count = n == 0 ? 1 : n == 1 ? 4 : n == 2 ? 16 : 64;
        for (int x = 0; x < count; x++, i++) {
            nd[i] = n;
            for (int k = 0, y = x; k < n; k++, y /= 4)
                sh[i][k] = y % 4;
        }
    }
    return i;
}

START_TEST(binary_broadcast_exhaustive)
{
    first_binary();
    int nds[NSMALL];
    int64_t shs[NSMALL][3];
    CHECK(small_shapes(nds, shs) == NSMALL, "test bug: shape count");
    t_rng r = t_rng_new(43101);
    int good = 0, bad = 0;
    for (int i = 0; i < NSMALL; i++)
        for (int j = 0; j < NSMALL; j++) {
            int op = (i * NSMALL + j) % NBIN, nd;
            int64_t shape[3];
            nd_array a = random_input(&r, nds[i], shs[i], BIN[op].lo, BIN[op].hi);
            nd_array b = random_input(&r, nds[j], shs[j], BIN[op].lo, BIN[op].hi);
            char ta[64], tb[64], pre[200], what[1800];
            snprintf(pre, sizeof pre, "shapes %s and %s: ",
                     nd_shape_str(nds[i], shs[i], ta, sizeof ta),
                     nd_shape_str(nds[j], shs[j], tb, sizeof tb));
            call cl = { BINARY, op, &a, &b, 0 };
            if (ref_broadcast(nds[i], shs[i], nds[j], shs[j], &nd, shape)) {
                check_new(&cl, call_text(&cl, NULL, pre, what, sizeof what), BCAST_HINT);
                nd_array dst = random_dst(&r, nd, shape);
                check_into(&cl, &dst, call_text(&cl, &dst, pre, what, sizeof what),
                           BCAST_HINT);
                nd_release(&dst);
                good++;
            } else {
                nd_array out;
                t_poison(&out);
                call_text(&cl, NULL, pre, what, sizeof what);
                nd_clear_error();
                expect_fail(nd_binary((nd_binop)op, &a, &b, &out), ND_ERR_SHAPE, "binary",
                            what);
                expect_shapes_named(nds[i], shs[i], nds[j], shs[j], what);
                t_assert_untouched(&out, what);
                /* into a dst of a's shape: refused, nothing written */
                nd_array dst = random_dst(&r, nds[i], shs[i]);
                int64_t size;
                float *before = t_buffer(&dst, &size);
                call_text(&cl, &dst, pre, what, sizeof what);
                nd_clear_error();
                expect_fail(nd_binary_into((nd_binop)op, &a, &b, &dst), ND_ERR_SHAPE,
                            "binary_into", what);
                expect_shapes_named(nds[i], shs[i], nds[j], shs[j], what);
                float *after = t_buffer(&dst, NULL);
                t_assert_floats(after, before, 1, &size, what, "check that a and b "
                                "broadcast before writing anything");
                CHECK(a.buf->refcount == 1 && b.buf->refcount == 1, "%s: the failed calls "
                      "left the inputs' refcounts at %" PRId64 " and %" PRId64 ", not 1",
                      what, a.buf->refcount, b.buf->refcount);
                free(before);
                free(after);
                nd_release(&dst);
                bad++;
            }
            nd_release(&a);
            nd_release(&b);
        }
    CHECK(good > 2000 && bad > 2000, "test generator: %d pairs broadcast, %d do not", good,
          bad);
}
END_TEST

/* Size-1 axes with strides far off: a stretched axis must be read at
 * index 0, whatever its stride. */
START_TEST(binary_stretch_size1_axes)
{
    first_binary();
    enum { PAD = 720 };   /* 30 * 3 * 8: as far as a junk stride would reach */
    t_rng r = t_rng_new(43201);
    for (int c = 0; c < 800; c++) {
        int nd = (int)t_int(&r, 1, ND_MAX_DIMS), op = c % NBIN;
        int64_t shape[ND_MAX_DIMS], s[2][ND_MAX_DIMS];
        t_random_shape(&r, nd, 4, false, 500, shape);
        if (c % 10 == 0)
            shape[t_int(&r, 0, nd - 1)] = 0;
        /* a keeps some axes, b the others (or both, or neither) */
        for (int k = 0; k < nd; k++) {
            bool in_a = t_int(&r, 0, 1);
            s[0][k] = in_a ? shape[k] : 1;
            s[1][k] = !in_a || t_int(&r, 0, 3) == 0 ? shape[k] : 1;
        }
        nd_array in[2];
        for (int w = 0; w < 2; w++) {
            int drop = 0;
            while (drop < nd && s[w][drop] == 1 && t_int(&r, 0, 1))
                drop++;   /* leading size-1 axes may be missing instead */
            int n = nd - drop;
            layout l = { .ndim = n };
            int64_t cnt = t_numel(n, s[w] + drop);
            memcpy(l.shape, s[w] + drop, (size_t)n * sizeof(int64_t));
            row_major(n, l.shape, l.strides);
            for (int k = 0; k < n; k++)
                if (l.shape[k] == 1)
                    l.strides[k] = t_int(&r, 1, 30) * (t_int(&r, 0, 1) ? 1 : -1);
            l.offset = PAD;
            l.size = PAD + cnt + PAD;
            float *v = t_floats(l.size);
            for (int64_t i = 0; i < l.size; i++)
                v[i] = t_float(&r, BIN[op].lo, BIN[op].hi);
            in[w] = t_view_of(l.size, v, n, l.shape, l.strides, l.offset);
            free(v);
        }
        call cl = { BINARY, op, &in[0], &in[1], 0 };
        char pre[40], what[1800];
        snprintf(pre, sizeof pre, "case %d: ", c);
        check_new(&cl, call_text(&cl, NULL, pre, what, sizeof what), BCAST_HINT);
        if (c % 3 == 0) {
            int rn;
            int64_t rs[ND_MAX_DIMS];
            ref_shape(&cl, &rn, rs);
            nd_array dst = random_dst(&r, rn, rs);
            check_into(&cl, &dst, call_text(&cl, &dst, pre, what, sizeof what), BCAST_HINT);
            nd_release(&dst);
        }
        nd_release(&in[0]);
        nd_release(&in[1]);
    }
}
END_TEST

/* Special values, every pair, every op. */
static const float GRID[] = {
    0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -0.5f, 2.0f, -2.0f, 3.0f, -3.0f, 2.5f, -2.5f,
    1.0f / 3, 10.0f, -10.0f, 127.0f, 128.0f, -149.0f, 1e20f, -1e20f, FLT_MAX, -FLT_MAX,
    FLT_MIN, -FLT_MIN, 0x1p-133f, -0x1p-133f, 0x1p-149f, -0x1p-149f, INFINITY, -INFINITY,
    NAN, 0x1.000002p0f, 0x1.fffffep-1f, 24.5f, -0.75f,
};
#define NGRID (int64_t)(sizeof GRID / sizeof GRID[0])

/* Results C11 (Annex F) and IEEE 754 fix, written out. */
static const struct { nd_binop op; float x, y, want; } ANNEX[] = {
    /* signed zeros */
    { ND_ADD, -0.0f, -0.0f, -0.0f },  { ND_ADD, 0.0f, -0.0f, 0.0f },
    { ND_ADD, -0.0f, 0.0f, 0.0f },    { ND_ADD, -3.0f, 3.0f, 0.0f },
    { ND_SUB, -0.0f, 0.0f, -0.0f },   { ND_SUB, 0.0f, 0.0f, 0.0f },
    { ND_SUB, -0.0f, -0.0f, 0.0f },   { ND_SUB, 3.0f, 3.0f, 0.0f },
    { ND_SUB, INFINITY, INFINITY, NAN },
    { ND_MUL, 0.0f, -1.0f, -0.0f },   { ND_MUL, -0.0f, -0.0f, 0.0f },
    { ND_MUL, -0.0f, INFINITY, NAN }, { ND_MUL, -FLT_MIN, FLT_MIN, -0.0f },
    { ND_DIV, 0.0f, -5.0f, -0.0f },   { ND_DIV, -0.0f, INFINITY, -0.0f },
    { ND_DIV, -1.0f, -0.0f, INFINITY }, { ND_DIV, -0.0f, -0.0f, NAN },
    { ND_DIV, 1.0f, -INFINITY, -0.0f }, { ND_DIV, -INFINITY, 0.0f, -INFINITY },
    /* gradual underflow: denormals, never flushed to zero; ties to even */
    { ND_ADD, 0x1p-149f, 0x1p-149f, 0x1p-148f },
    { ND_SUB, FLT_MIN, 0x1p-149f, 0x7fffffp-149f },
    { ND_MUL, FLT_MIN, 0.5f, 0x1p-127f },
    { ND_DIV, FLT_MIN, 4.0f, 0x1p-128f },
    { ND_DIV, 0x1p-149f, 2.0f, 0.0f },
    { ND_DIV, 0x3p-149f, 2.0f, 0x1p-148f },
    { ND_MUL, 0x1p-149f, 0x1p23f, 0x1p-126f },
    { ND_MUL, FLT_MAX, 2.0f, INFINITY },
    /* pow, C11 F.10.4.4 */
    { ND_POW, -0.0f, -3.0f, -INFINITY }, { ND_POW, 0.0f, -3.0f, INFINITY },
    { ND_POW, -0.0f, -2.0f, INFINITY },  { ND_POW, -0.0f, -0.5f, INFINITY },
    { ND_POW, -0.0f, -INFINITY, INFINITY }, { ND_POW, -0.0f, 3.0f, -0.0f },
    { ND_POW, 0.0f, 3.0f, 0.0f },        { ND_POW, -0.0f, 2.0f, 0.0f },
    { ND_POW, -0.0f, 0.5f, 0.0f },       { ND_POW, -1.0f, INFINITY, 1.0f },
    { ND_POW, -1.0f, -INFINITY, 1.0f },  { ND_POW, 1.0f, NAN, 1.0f },
    { ND_POW, 1.0f, -INFINITY, 1.0f },   { ND_POW, NAN, 0.0f, 1.0f },
    { ND_POW, NAN, -0.0f, 1.0f },        { ND_POW, INFINITY, -0.0f, 1.0f },
    { ND_POW, -2.0f, 0.5f, NAN },        { ND_POW, -8.0f, 1.0f / 3, NAN },
    { ND_POW, 0.5f, -INFINITY, INFINITY }, { ND_POW, -0.5f, INFINITY, 0.0f },
    { ND_POW, 2.0f, -INFINITY, 0.0f },   { ND_POW, -2.0f, INFINITY, INFINITY },
    { ND_POW, -INFINITY, -3.0f, -0.0f }, { ND_POW, -INFINITY, -2.0f, 0.0f },
    { ND_POW, -INFINITY, -0.5f, 0.0f },  { ND_POW, -INFINITY, 3.0f, -INFINITY },
    { ND_POW, -INFINITY, 2.0f, INFINITY }, { ND_POW, -INFINITY, 0.5f, INFINITY },
    { ND_POW, INFINITY, -1.0f, 0.0f },   { ND_POW, INFINITY, 0.5f, INFINITY },
    { ND_POW, NAN, 1.0f, NAN },          { ND_POW, 2.0f, NAN, NAN },
    { ND_POW, -2.0f, 3.0f, -8.0f },      { ND_POW, -2.0f, -3.0f, -0.125f },
    { ND_POW, -3.0f, 2.0f, 9.0f },       { ND_POW, 2.0f, 128.0f, INFINITY },
    { ND_POW, -2.0f, 129.0f, -INFINITY }, { ND_POW, 2.0f, -149.0f, 0x1p-149f },
    { ND_POW, -2.0f, -149.0f, -0x1p-149f }, { ND_POW, -2.0f, -151.0f, -0.0f },
    { ND_POW, 0x1p-149f, 2.0f, 0.0f },
    /* maximum, eq, ge */
    { ND_MAXIMUM, NAN, -INFINITY, NAN }, { ND_MAXIMUM, -INFINITY, NAN, NAN },
    { ND_MAXIMUM, INFINITY, NAN, NAN },  { ND_MAXIMUM, 0x1p-149f, 0.0f, 0x1p-149f },
    { ND_MAXIMUM, -0x1p-149f, -0.0f, 0.0f }, { ND_MAXIMUM, -FLT_MAX, -INFINITY, -FLT_MAX },
    { ND_EQ, 0.0f, -0.0f, 1.0f },        { ND_EQ, -0.0f, 0.0f, 1.0f },
    { ND_EQ, NAN, NAN, 0.0f },           { ND_EQ, INFINITY, -INFINITY, 0.0f },
    { ND_EQ, 0x1p-149f, 0.0f, 0.0f },    { ND_EQ, 1.0f, 0x1.000002p0f, 0.0f },
    { ND_GE, -0.0f, 0.0f, 1.0f },        { ND_GE, 0.0f, -0.0f, 1.0f },
    { ND_GE, NAN, NAN, 0.0f },           { ND_GE, INFINITY, NAN, 0.0f },
    { ND_GE, NAN, -INFINITY, 0.0f },     { ND_GE, 0x1p-149f, 0.0f, 1.0f },
    { ND_GE, 0.0f, 0x1p-149f, 0.0f },    { ND_GE, 0x1.fffffep-1f, 1.0f, 0.0f },
    { ND_GE, 1.0f, 0x1.fffffep-1f, 1.0f }, { ND_GE, INFINITY, INFINITY, 1.0f },
};

/* The one element of a 0-d or 1-element array. */
static float only_value(const nd_array *a)
{
    float *v = values_of(a), x = v[0];
    free(v);
    return x;
}

START_TEST(binary_ieee_grid)
{
    first_binary();
    /* a: GRID as a (n,1) column at an offset, its size-1 axis with a junk
     * stride; b: GRID as a (n,) row walked backwards */
    const int64_t n = NGRID;
    float va[NGRID + 3], vb[NGRID + 2];
    for (int64_t i = 0; i < NGRID + 3; i++)
        va[i] = 7.0f;
    for (int64_t i = 0; i < NGRID + 2; i++)
        vb[i] = 7.0f;
    for (int64_t i = 0; i < n; i++) {
        va[1 + i] = GRID[i];
        vb[n - i] = GRID[i];
    }
    int64_t col[2] = { n, 1 }, col_st[2] = { 1, 5 }, m1 = -1, sq[2] = { n, n };
    int64_t tr[2] = { 1, n };
    nd_array a = t_view_of(n + 3, va, 2, col, col_st, 1);
    nd_array b = t_view_of(n + 2, vb, 1, &n, &m1, n);
    nd_array row = t_array_of(1, &n, GRID);
    for (int op = 0; op < NBIN; op++) {
        char what[1800];
        call cl = { BINARY, op, &a, &b, 0 };
        check_new(&cl, call_text(&cl, NULL, "every pair of special values: ", what,
                                 sizeof what), OPS_HINT);
        float *poison = t_floats(n * n + 5);
        for (int64_t i = 0; i < n * n + 5; i++)
            poison[i] = -1000.25f;
        nd_array dst = t_view_of(n * n + 5, poison, 2, sq, tr, 3);
        free(poison);
        check_into(&cl, &dst, call_text(&cl, &dst, "every pair of special values, dst a "
                                        "transpose: ", what, sizeof what), OPS_HINT);
        nd_release(&dst);
        for (int64_t j = 0; j < n; j++) {
            call sc = { SCALAR, op, &row, NULL, GRID[j] };
            check_new(&sc, call_text(&sc, NULL, "special values: ", what, sizeof what),
                      OPS_HINT);
        }
    }
    nd_release(&row);
    nd_release(&a);
    nd_release(&b);

    /* the table, through nd_binary, nd_scalar and nd_scalar_into */
    for (size_t i = 0; i < sizeof ANNEX / sizeof ANNEX[0]; i++) {
        int op = ANNEX[i].op, mode = mode_of(BINARY, op);
        float xb[4] = { 5.0f, 5.0f, 5.0f, ANNEX[i].x }, yb[2] = { ANNEX[i].y, 9.0f };
        int64_t one = 1;
        nd_array x = t_view_of(4, xb, 0, NULL, NULL, 3), y = t_view_of(2, yb, 1, &one, &one, 0);
        nd_array out, d = t_view_of(4, xb, 0, NULL, NULL, 1);
        char what[300];
        const char *forms[3] = { "nd_binary", "nd_scalar", "nd_scalar_into" };
        for (int f = 0; f < 3; f++) {
            snprintf(what, sizeof what, "%s(%s) of x = %.9g, y = %.9g (IEEE 754 / C11 Annex F)",
                     forms[f], BIN[op].name, (double)ANNEX[i].x, (double)ANNEX[i].y);
            nd_status s = f == 0   ? nd_binary((nd_binop)op, &x, &y, &out)
                          : f == 1 ? nd_scalar((nd_binop)op, &x, ANNEX[i].y, &out)
                                   : nd_scalar_into((nd_binop)op, &x, ANNEX[i].y, &d);
            CHECK(s == ND_OK, "%s returned %s: %s", what, nd_status_name(s), nd_last_error());
            float got = only_value(f == 2 ? &d : &out);
            if (f < 2)
                nd_release(&out);
            CHECK(agrees(mode, got, ANNEX[i].want), "%s gave %.9g, expected %.9g (%s). "
                  "Hint: use C's own float arithmetic and powf: they follow IEEE 754 and "
                  "Annex F; %s", what, (double)got, (double)ANNEX[i].want, mode_text(mode),
                  OPS_HINT);
        }
        nd_release(&d);
        nd_release(&x);
        nd_release(&y);
    }
}
END_TEST

/* ====================================================================== */
/* nd_binary_into                                                         */
/* ====================================================================== */

START_TEST(binary_into_strided_dst)
{
    first_binary_into();
    t_rng r = t_rng_new(43401);
    int long_rows = 0;
    for (int c = 0; c < 1500; c++) {
        int op = c % NBIN, nd;
        int64_t shape[ND_MAX_DIMS], sa[ND_MAX_DIMS], sb[ND_MAX_DIMS];
        nd_array a, b, dst;
        if (c % 4 == 0) {
            /* long rows: a and b contiguous (or one value repeated), dst
             * with gaps or reversed: no contiguous fast path for dst */
            nd = (int)t_int(&r, 1, 3);
            t_random_shape(&r, nd, 3, false, 9, shape);
            shape[nd - 1] = t_int(&r, 16, 70);
            layout la = gen_layout(&r, nd, shape, K_COMPACT, 1 << 13);
            a = input_of(&r, &la, BIN[op].lo, BIN[op].hi);
            memcpy(sb, shape, sizeof sb);
            if (t_int(&r, 0, 1))
                sb[nd - 1] = 1;
            layout lb = gen_layout(&r, nd, sb, K_COMPACT, 1 << 13);
            b = input_of(&r, &lb, BIN[op].lo, BIN[op].hi);
            static const int kinds[3] = { K_SLICED, K_REVERSED, K_VIEW_OF_VIEW };
            layout ld = gen_layout(&r, nd, shape, kinds[t_int(&r, 0, 2)], 1 << 13);
            dst = dst_of(&ld);
            long_rows++;
        } else {
            nd = gen_shape(&r, 0, ND_MAX_DIMS, 4, 400, shape);
            int na = operand_shape(&r, nd, shape, sa), nb = operand_shape(&r, nd, shape, sb);
            a = random_input(&r, na, sa, BIN[op].lo, BIN[op].hi);
            b = random_input(&r, nb, sb, BIN[op].lo, BIN[op].hi);
            int rn;
            int64_t rs[ND_MAX_DIMS];
            ref_broadcast(na, sa, nb, sb, &rn, rs);
            dst = random_dst(&r, rn, rs);
        }
        call cl = { BINARY, op, &a, &b, 0 };
        char pre[40], what[1800];
        snprintf(pre, sizeof pre, "case %d: ", c);
        check_into(&cl, &dst, call_text(&cl, &dst, pre, what, sizeof what), INTO_HINT);
        nd_release(&dst);
        nd_release(&a);
        nd_release(&b);
    }
    CHECK(long_rows > 300, "test generator: %d long rows", long_rows);
}
END_TEST

START_TEST(binary_into_aliasing)
{
    first_binary_into();
    t_rng r = t_rng_new(43501);
    for (int c = 0; c < 700; c++) {
        int op = c % NBIN, uop = c % NUN, nd;
        int64_t shape[ND_MAX_DIMS], sb[ND_MAX_DIMS];
        if (c % 3 == 0) {   /* long rows: the blocked path, in place */
            nd = (int)t_int(&r, 1, 3);
            t_random_shape(&r, nd, 3, false, 9, shape);
            shape[nd - 1] = t_int(&r, 17, 80);
        } else {
            nd = gen_shape(&r, 0, ND_MAX_DIMS, 4, 300, shape);
        }
        layout lv = gen_layout(&r, nd, shape, WRITABLE[t_int(&r, 0, 4)], 1 << 13);
        nd_array v = input_of(&r, &lv, BIN[op].lo, BIN[op].hi), w;
        int nb = operand_shape(&r, nd, shape, sb);
        while (nb > nd)   /* b must not add axes: the result has v's shape */
            memmove(sb, sb + 1, (size_t)--nb * sizeof *sb);
        nd_array b = random_input(&r, nb, sb, BIN[op].lo, BIN[op].hi);
        T_OK(nd_share(&v, &w));
        const struct { call c; const char *form; } forms[] = {
            { { BINARY, op, &v, &b, 0 }, "nd_binary_into(op, &v, &b, &v)" },
            { { BINARY, op, &b, &v, 0 }, "nd_binary_into(op, &b, &v, &v)" },
            { { BINARY, op, &v, &v, 0 }, "nd_binary_into(op, &v, &v, &v)" },
            { { BINARY, op, &w, &v, 0 }, "nd_binary_into(op, &w, &v, &v), w another "
              "reference to v" },
            { { SCALAR, op, &v, NULL, draw(&r, BIN[op].lo, BIN[op].hi) },
              "nd_scalar_into(op, &v, value, &v)" },
            { { UNARY, uop, &v, NULL, 0 }, "nd_unary_into(op, &v, &v)" },
        };
        for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
            char pre[200], what[1800];
            snprintf(pre, sizeof pre, "case %d, %s, in place: ", c, forms[f].form);
            check_into(&forms[f].c, &v, call_text(&forms[f].c, &v, pre, what, sizeof what),
                       "dst may be a or b itself: read each element before writing it, and "
                       "write each position once; never copy dst's old values anywhere "
                       "first");
        }
        nd_release(&w);
        nd_release(&v);
        nd_release(&b);
    }
}
END_TEST

/* dst must have exactly the result's shape: every other one is refused
 * with ND_ERR_SHAPE naming both shapes, and nothing is written. */
static void wrong_dst_case(const call *c, int rn, const int64_t *rs, int dn,
                           const int64_t *ds, t_rng *r, const char *fn)
{
    nd_array dst = random_dst(r, dn, ds);
    char pre[40], what[1800];
    bool same = rn == dn;
    for (int k = 0; same && k < rn; k++)
        same = rs[k] == ds[k];
    if (same) {   /* the one shape that fits */
        check_into(c, &dst, call_text(c, &dst, "", what, sizeof what), INTO_HINT);
        nd_release(&dst);
        return;
    }
    snprintf(pre, sizeof pre, "dst of the wrong shape: ");
    call_text(c, &dst, pre, what, sizeof what);
    int64_t size;
    float *before = t_buffer(&dst, &size);
    nd_clear_error();
    expect_fail(call_into(c, &dst), ND_ERR_SHAPE, fn, what);
    expect_shapes_named(dn, ds, rn, rs, what);
    float *after = t_buffer(&dst, NULL);
    t_assert_floats(after, before, 1, &size, what, "compare dst's shape with the result's "
                    "(exactly: same ndim, same sizes; a dst the inputs merely broadcast to "
                    "is wrong too) BEFORE writing anything");
    free(before);
    free(after);
    nd_release(&dst);
}

START_TEST(into_wrong_dst)
{
    first_binary_into();
    static const struct { int na; int64_t sa[3]; int nb; int64_t sb[3]; } pairs[] = {
        { 2, { 3, 1 }, 2, { 1, 2 } }, { 0, { 0 }, 0, { 0 } },       { 1, { 1 }, 1, { 1 } },
        { 2, { 2, 3 }, 1, { 3 } },    { 2, { 1, 3 }, 2, { 0, 1 } }, { 3, { 1, 1, 1 }, 1, { 2 } },
        { 1, { 3 }, 3, { 2, 1, 1 } },
    };
    int nds[NSMALL];
    int64_t shs[NSMALL][3];
    small_shapes(nds, shs);
    t_rng r = t_rng_new(43551);
    for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++) {
        int op = (int)p % NBIN, rn;
        int64_t rs[ND_MAX_DIMS];
        nd_array a = random_input(&r, pairs[p].na, pairs[p].sa, BIN[op].lo, BIN[op].hi);
        nd_array b = random_input(&r, pairs[p].nb, pairs[p].sb, BIN[op].lo, BIN[op].hi);
        call bin = { BINARY, op, &a, &b, 0 }, sca = { SCALAR, op, &a, NULL, 1.5f };
        call una = { UNARY, (int)p % NUN, &a, NULL, 0 };
        ref_broadcast(a.ndim, a.shape, b.ndim, b.shape, &rn, rs);
        /* near misses: the result's (and a's) shape with extra 1s, flattened */
        int64_t near[4][ND_MAX_DIMS];
        int nn[4];
        for (int v = 0; v < 2; v++) {
            const int64_t *base = v ? a.shape : rs;
            int bn = v ? a.ndim : rn;
            nn[2 * v] = bn + 1;
            near[2 * v][0] = 1;
            memcpy(near[2 * v] + 1, base, (size_t)bn * sizeof(int64_t));
            nn[2 * v + 1] = bn + 1;
            memcpy(near[2 * v + 1], base, (size_t)bn * sizeof(int64_t));
            near[2 * v + 1][bn] = 1;
        }
        for (int d = 0; d < NSMALL + 4; d++) {
            int dn = d < NSMALL ? nds[d] : nn[d - NSMALL];
            const int64_t *ds = d < NSMALL ? shs[d] : near[d - NSMALL];
            wrong_dst_case(&bin, rn, rs, dn, ds, &r, "binary_into");
            wrong_dst_case(&sca, a.ndim, a.shape, dn, ds, &r, "scalar_into");
            wrong_dst_case(&una, a.ndim, a.shape, dn, ds, &r, "unary_into");
        }
        /* a flat dst with the right number of elements */
        int64_t flat = t_numel(rn, rs);
        wrong_dst_case(&bin, rn, rs, 1, &flat, &r, "binary_into");
        nd_release(&a);
        nd_release(&b);
    }
}
END_TEST

/* ====================================================================== */
/* nd_scalar, nd_scalar_into                                              */
/* ====================================================================== */

START_TEST(scalar_random_views)
{
    first_scalar();
    t_rng r = t_rng_new(43601);
    for (int c = 0; c < 2000; c++) {
        int op = c % NBIN;
        int64_t shape[ND_MAX_DIMS];
        int nd = gen_shape(&r, 0, ND_MAX_DIMS, 4, 400, shape);
        nd_array a = random_input(&r, nd, shape, BIN[op].lo, BIN[op].hi);
        call cl = { SCALAR, op, &a, NULL, draw(&r, BIN[op].lo, BIN[op].hi) };
        char pre[40], what[1800];
        snprintf(pre, sizeof pre, "case %d: ", c);
        check_new(&cl, call_text(&cl, NULL, pre, what, sizeof what), "a OP value at every "
                  "position of a, read through a's offset and strides; " OPS_HINT);
        if (c % 2) {
            nd_array dst = random_dst(&r, nd, shape);
            check_into(&cl, &dst, call_text(&cl, &dst, pre, what, sizeof what), INTO_HINT);
            nd_release(&dst);
        }
        nd_release(&a);
    }
}
END_TEST

START_TEST(scalar_operand_order)
{
    first_scalar();
    static const float values[] = { 2.5f, -3.0f, 0.5f, 0.0f, -0.0f, 0x1p-133f, NAN, INFINITY };
    static const int64_t lengths[] = { 1, 5, 16, 17, 40, 100 };
    t_rng r = t_rng_new(43651);
    for (int op = 0; op < NBIN; op++)
        for (size_t v = 0; v < sizeof values / sizeof values[0]; v++)
            for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++)
                for (int rev = 0; rev < 2; rev++) {
                    int64_t n = lengths[l], step = rev ? -1 : 1, size = n + 3;
                    float *vals = t_floats(size);
                    for (int64_t i = 0; i < size; i++)   /* mostly positive: a**s != s**a */
                        vals[i] = t_int(&r, 0, 4) ? t_float(&r, 0.25f, 4.0f)
                                                  : t_float(&r, -4.0f, 0.0f);
                    nd_array a = t_view_of(size, vals, 1, &n, &step, rev ? n : 1);
                    free(vals);
                    call cl = { SCALAR, op, &a, NULL, values[v] };
                    char what[1800];
                    const char *hint = "the array is the LEFT operand: a - s, a / s, a ** s, "
                                       "a >= s, never s OP a";
                    check_new(&cl, call_text(&cl, NULL, "", what, sizeof what), hint);
                    layout ld = gen_layout(&r, 1, &n, rev ? K_COMPACT : K_REVERSED, 512);
                    nd_array dst = dst_of(&ld);
                    check_into(&cl, &dst, call_text(&cl, &dst, "", what, sizeof what), hint);
                    nd_release(&dst);
                    nd_release(&a);
                }
}
END_TEST

/* ====================================================================== */
/* nd_unary, nd_unary_into                                                */
/* ====================================================================== */

START_TEST(unary_random_views)
{
    first_unary();
    t_rng r = t_rng_new(43701);
    for (int c = 0; c < 2000; c++) {
        int op = c % NUN;
        int64_t shape[ND_MAX_DIMS];
        int nd = gen_shape(&r, 0, ND_MAX_DIMS, 4, 400, shape);
        nd_array a = random_input(&r, nd, shape, UN[op].lo, UN[op].hi);
        call cl = { UNARY, op, &a, NULL, 0 };
        char pre[40], what[1800];
        snprintf(pre, sizeof pre, "case %d: ", c);
        check_new(&cl, call_text(&cl, NULL, pre, what, sizeof what), "OP(a) at every "
                  "position of a, read through a's offset and signed strides, with <math.h>'s "
                  "float functions");
        if (c % 2) {
            nd_array dst = random_dst(&r, nd, shape);
            check_into(&cl, &dst, call_text(&cl, &dst, pre, what, sizeof what), INTO_HINT);
            nd_release(&dst);
        }
        nd_release(&a);
    }
}
END_TEST

static const struct { nd_unop op; float x, want; } UNARY_ANNEX[] = {
    { ND_NEG, 0.0f, -0.0f },           { ND_NEG, -0.0f, 0.0f },
    { ND_NEG, 0x1p-149f, -0x1p-149f }, { ND_NEG, -INFINITY, INFINITY },
    { ND_NEG, NAN, NAN },              { ND_NEG, FLT_MAX, -FLT_MAX },
    { ND_ABS, -0.0f, 0.0f },           { ND_ABS, 0.0f, 0.0f },
    { ND_ABS, -0x1p-149f, 0x1p-149f }, { ND_ABS, -FLT_MAX, FLT_MAX },
    { ND_ABS, -INFINITY, INFINITY },   { ND_ABS, -NAN, NAN },
    { ND_LOG, 0.0f, -INFINITY },       { ND_LOG, -0.0f, -INFINITY },
    { ND_LOG, -0x1p-149f, NAN },       { ND_LOG, -1.0f, NAN },
    { ND_LOG, -INFINITY, NAN },        { ND_LOG, INFINITY, INFINITY },
    { ND_LOG, 1.0f, 0.0f },            { ND_LOG, NAN, NAN },
    { ND_LOG, 0x1p-149f, -103.278929903f }, { ND_LOG, FLT_MAX, 88.7228391117f },
    { ND_EXP, -INFINITY, 0.0f },       { ND_EXP, INFINITY, INFINITY },
    { ND_EXP, 0.0f, 1.0f },            { ND_EXP, -0.0f, 1.0f },
    { ND_EXP, 89.0f, INFINITY },       { ND_EXP, 1000.0f, INFINITY },
    { ND_EXP, -1000.0f, 0.0f },        { ND_EXP, -110.0f, 0.0f },
    { ND_EXP, NAN, NAN },              { ND_EXP, FLT_MAX, INFINITY },
    { ND_TANH, 0.0f, 0.0f },           { ND_TANH, -0.0f, -0.0f },
    { ND_TANH, INFINITY, 1.0f },       { ND_TANH, -INFINITY, -1.0f },
    { ND_TANH, 20.0f, 1.0f },          { ND_TANH, -20.0f, -1.0f },
    { ND_TANH, 100.0f, 1.0f },         { ND_TANH, FLT_MAX, 1.0f },
    { ND_TANH, -FLT_MAX, -1.0f },      { ND_TANH, 0x1p-149f, 0x1p-149f },
    { ND_TANH, -0x1p-130f, -0x1p-130f }, { ND_TANH, NAN, NAN },
};

/* Values swept for op, into v (room for 8192); returns how many. */
static int64_t sweep_values(int op, t_rng *r, float *v)
{
    int64_t m = 0;
    switch (op) {
    case ND_EXP:   /* overflow, the normal range, underflow into denormals, then 0 */
        for (int64_t i = 0; i < 4096; i++)
            v[m++] = -110.0f + (float)i * (205.0f / 4096);
        for (int64_t i = 0; i < 200; i++)
            v[m++] = 88.0f + (float)i * 0.00362f;
        v[m++] = 88.72283172607421875f;   /* just below ln(FLT_MAX): finite */
        v[m++] = 88.7229f;
        v[m++] = -87.33654f;              /* about ln(FLT_MIN) */
        v[m++] = -103.972084f;            /* about ln(0x1p-149) */
        v[m++] = -104.0f;
        for (int64_t i = 0; i < 300; i++)   /* tiny: exp(x) is 1 + x */
            v[m++] = (i % 2 ? -1.0f : 1.0f) * ldexpf(1.0f, -(int)(i / 2) - 1);
        break;
    case ND_LOG:   /* every binade, denormals included; 1 +- an ulp; 0; negatives */
        for (int e = -149; e <= 127; e++)
            for (int k = 0; k < 8; k++)
                v[m++] = ldexpf(1.0f + (float)k / 8 + t_float(r, 0, 0.125f), e);
        v[m++] = 1.0f;
        v[m++] = 0x1.000002p0f;
        v[m++] = 0x1.fffffep-1f;
        v[m++] = FLT_MAX;
        v[m++] = 0.0f;
        v[m++] = -0.0f;
        for (int64_t i = 0; i < 100; i++)
            v[m++] = -t_float(r, 0.0f, 100.0f);
        break;
    case ND_TANH:   /* the middle, saturation near +-9, tiny arguments */
        for (int64_t i = 0; i < 4096; i++)
            v[m++] = -12.0f + (float)i * (24.0f / 4096);
        for (int64_t i = 0; i < 400; i++)
            v[m++] = (i % 2 ? -1.0f : 1.0f) * (8.0f + (float)i * 0.01f);
        for (int e = 1; e <= 149; e++) {
            v[m++] = ldexpf(1.0f, -e);
            v[m++] = -ldexpf(1.3f, -e);
        }
        break;
    default:   /* neg, abs: random bit patterns (NaNs, denormals, both signs) */
        for (int64_t i = 0; i < 4096; i++) {
            uint32_t bits = (uint32_t)t_next(r);
            memcpy(&v[m++], &bits, sizeof bits);
        }
        for (int i = 0; i < NSPECIAL; i++)
            v[m++] = SPECIAL[i];
        break;
    }
    return m;
}

START_TEST(unary_ieee_sweep)
{
    first_unary();
    /* the specials, one by one, through nd_unary and nd_unary_into */
    for (size_t i = 0; i < sizeof UNARY_ANNEX / sizeof UNARY_ANNEX[0]; i++) {
        int op = UNARY_ANNEX[i].op, mode = mode_of(UNARY, op);
        float xb[3] = { 5.0f, UNARY_ANNEX[i].x, 5.0f }, db[3] = { -7.0f, -7.0f, -7.0f };
        nd_array x = t_view_of(3, xb, 0, NULL, NULL, 1), d = t_view_of(3, db, 0, NULL, NULL, 2);
        nd_array out;
        char what[300];
        snprintf(what, sizeof what, "nd_unary(%s) of x = %.9g (C11 Annex F)", UN[op].name,
                 (double)UNARY_ANNEX[i].x);
        nd_status s = nd_unary((nd_unop)op, &x, &out);
        CHECK(s == ND_OK, "%s returned %s: %s", what, nd_status_name(s), nd_last_error());
        float got = only_value(&out);
        nd_release(&out);
        CHECK(agrees(mode, got, UNARY_ANNEX[i].want), "%s gave %.9g, expected %.9g (%s). "
              "Hint: use <math.h>'s float functions (logf, expf, tanhf, fabsf) and -x; they "
              "handle infinities, NaN, signed zeros and saturation", what, (double)got,
              (double)UNARY_ANNEX[i].want, mode_text(mode));
        snprintf(what, sizeof what, "nd_unary_into(%s) of x = %.9g into a 0-d dst at offset 2",
                 UN[op].name, (double)UNARY_ANNEX[i].x);
        s = nd_unary_into((nd_unop)op, &x, &d);
        CHECK(s == ND_OK, "%s returned %s: %s", what, nd_status_name(s), nd_last_error());
        got = only_value(&d);
        CHECK(agrees(mode, got, UNARY_ANNEX[i].want), "%s gave %.9g, expected %.9g (%s)",
              what, (double)got, (double)UNARY_ANNEX[i].want, mode_text(mode));
        nd_release(&x);
        nd_release(&d);
    }
    /* dense sweeps against the double reference, forwards into a new
     * array, and backwards into a dst with gaps */
    t_rng r = t_rng_new(43751);
    float *v = t_floats(8192 + 2);
    for (int op = 0; op < NUN; op++) {
        int64_t m = sweep_values(op, &r, v + 1), size = m + 2, back = -1, two = 2;
        v[0] = v[m + 1] = 3.0f;
        nd_array fwd = t_view_of(size, v, 1, &m, (int64_t[]){ 1 }, 1);
        nd_array bwd = t_view_of(size, v, 1, &m, &back, m);
        float *poison = t_floats(2 * m + 1);
        for (int64_t i = 0; i < 2 * m + 1; i++)
            poison[i] = -1000.25f;
        nd_array dst = t_view_of(2 * m + 1, poison, 1, &m, &two, 1);
        free(poison);
        call f = { UNARY, op, &fwd, NULL, 0 }, b = { UNARY, op, &bwd, NULL, 0 };
        char what[1800];
        check_new(&f, call_text(&f, NULL, "sweep: ", what, sizeof what), "use <math.h>'s "
                  "float functions: logf, expf, tanhf, fabsf; a formula of your own (tanh "
                  "from exp, say) loses accuracy and overflows");
        check_into(&b, &dst, call_text(&b, &dst, "sweep: ", what, sizeof what), INTO_HINT);
        nd_release(&dst);
        nd_release(&fwd);
        nd_release(&bwd);
    }
    free(v);
}
END_TEST

/* ====================================================================== */
/* All the functions                                                      */
/* ====================================================================== */

/* f(&x, ..., &x): the allocating versions with out an input. */
START_TEST(new_out_is_input)
{
    first_binary();
    t_rng r = t_rng_new(43801);
    static const char *const forms[] = {
        "nd_binary(op, &a, &b, &a)", "nd_binary(op, &a, &b, &b)", "nd_binary(op, &a, &a, &a)",
        "nd_scalar(op, &a, value, &a)", "nd_unary(op, &a, &a)", "nd_binary(op, &b, &a, &a)",
    };
    for (int c = 0; c < 600; c++) {
        int form = c % 6, op = (c / 6) % NBIN, uop = (c / 6) % NUN;
        int64_t shape[ND_MAX_DIMS], sa[ND_MAX_DIMS], sb[ND_MAX_DIMS];
        int nd = gen_shape(&r, 0, 6, 4, 300, shape);
        int na = operand_shape(&r, nd, shape, sa), nb = operand_shape(&r, nd, shape, sb);
        nd_array a = random_input(&r, na, sa, BIN[op].lo, BIN[op].hi);
        nd_array b = random_input(&r, nb, sb, BIN[op].lo, BIN[op].hi);
        call cl = { BINARY, op, &a, &b, 0 };
        if (form == 2)
            cl.b = &a;
        if (form == 3)
            cl = (call){ SCALAR, op, &a, NULL, draw(&r, BIN[op].lo, BIN[op].hi) };
        if (form == 4)
            cl = (call){ UNARY, uop, &a, NULL, 0 };
        if (form == 5)
            cl = (call){ BINARY, op, &b, &a, 0 };
        nd_array *out = form == 1 ? &b : &a, *other = form == 1 ? &a : &b;
        char what[1800], pre[100];
        snprintf(pre, sizeof pre, "case %d, %s: ", c, forms[form]);
        call_text(&cl, NULL, pre, what, sizeof what);
        expect e = expect_of(&cl);
        nd_array keep, other_before = *other;
        T_OK(nd_share(out, &keep));   /* to watch the old buffer */
        int64_t refs = keep.buf->refcount;
        snap so = snap_take(form == 2 || form == 3 || form == 4 ? NULL : other);
        nd_status s = form == 3 ? nd_scalar((nd_binop)op, &a, cl.value, &a)
                      : form == 4 ? nd_unary((nd_unop)uop, &a, &a)
                      : nd_binary((nd_binop)op, cl.a, cl.b, out);
        CHECK(s == ND_OK, "%s returned %s: %s", what, nd_status_name(s), nd_last_error());
        CHECK(out->buf != keep.buf && out->buf->refcount == 1, "%s: the result must be a new "
              "array with one reference; it %s", what, out->buf == keep.buf ? "kept the "
              "input's buffer: never compute in place into an input" : "has more references");
        CHECK(keep.buf->refcount == refs - 1, "%s: the input's old buffer has refcount %"
              PRId64 ", expected %" PRId64 ": its reference in *out must be released exactly "
              "once, after the result is computed", what, keep.buf->refcount, refs - 1);
        t_assert_shape(out, e.nd, e.shape, what);
        CHECK(out->offset == 0, "%s: the result has offset %" PRId64, what, out->offset);
        float *got = values_of(out);
        assert_result(&cl, &e, got, NULL, what, "compute into a new array from the inputs "
                      "as they are, then release *out's old reference (out may be a or b) "
                      "and store the result");
        free(got);
        if (so.v != NULL) {
            CHECK(t_same_struct(other, &other_before), "%s: the other input changed", what);
            snap_check(&so, NULL, "the other input", what);
        }
        /* refused calls with out == a leave a as it was */
        nd_array a_before = a;
        int64_t a_refs = a.buf->refcount, bad_shape = a.ndim > 0 ? a.shape[a.ndim - 1] + 2 : 2;
        nd_array x = t_arange(1, &bad_shape);
        nd_clear_error();
        nd_status s1 = a.ndim > 0 && a.shape[a.ndim - 1] > 1
                           ? nd_binary(ND_ADD, &a, &x, &a)
                           : nd_binary((nd_binop)NBIN, &a, &x, &a);
        nd_status s2 = nd_scalar((nd_binop)-1, &a, 1.0f, &a);
        nd_status s3 = nd_unary((nd_unop)NUN, &a, &a);
        CHECK(s1 != ND_OK && s2 == ND_ERR_ARG && s3 == ND_ERR_ARG, "%s: refused calls with "
              "out == a returned %s, %s, %s", what, nd_status_name(s1), nd_status_name(s2),
              nd_status_name(s3));
        CHECK(t_same_struct(&a, &a_before) && a.buf->refcount == a_refs, "%s: a call that "
              "failed with out == a changed a (now %s, refcount %" PRId64 " instead of %"
              PRId64 "): on an error leave *out as it was; release its old reference only "
              "once the result is made", what, a.buf ? t_describe(&a) : "released",
              a.buf ? a.buf->refcount : 0, a_refs);
        nd_release(&x);
        nd_release(&keep);
        nd_release(&a);
        nd_release(&b);
        expect_free(&e);
    }
}
END_TEST

/* A 1-D view of n values with stride `step` (0 repeats one element), an
 * element to spare on either side of what it reaches. */
static nd_array row_view(t_rng *r, int64_t n, int64_t step, float lo, float hi)
{
    int64_t reach = n > 0 ? (n - 1) * llabs(step) : 0, size = reach + 3;
    float *vals = t_floats(size);
    for (int64_t i = 0; i < size; i++)
        vals[i] = draw(r, lo, hi);
    nd_array v = t_view_of(size, vals, 1, &n, &step, step < 0 ? 1 + reach : 1);
    free(vals);
    return v;
}

START_TEST(rows_fast_path_edges)
{
    first_binary_into();
    /* lengths around the block sizes a vectorised loop uses (8 to 64
     * floats), and every mix of contiguous, reversed, gapped and repeated
     * operands: a fast path must take exactly the rows contiguous in
     * every operand (dst included), tails included */
    static const int64_t lengths[] = { 1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 48,
                                       49, 63, 64, 65, 100, 127, 128, 129, 255, 256, 257,
                                       1001 };
    static const int64_t dst_steps[] = { 1, -1, 2 }, a_steps[] = { 1, -1, 2, 0 },
                         b_steps[] = { 1, -1, 3, 0 };
    t_rng r = t_rng_new(43851);
    int i = 0;
    for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++)
        for (int d = 0; d < 3; d++)
            for (int x = 0; x < 4; x++)
                for (int y = 0; y < 4; y++, i++) {
                    int op = i % NBIN, uop = i % NUN;
                    int64_t n = lengths[l];
                    nd_array a = row_view(&r, n, a_steps[x], BIN[op].lo, BIN[op].hi);
                    nd_array b = row_view(&r, n, b_steps[y], BIN[op].lo, BIN[op].hi);
                    nd_array dst = row_view(&r, n, dst_steps[d], -1, 1);
                    const call calls[] = {
                        { BINARY, op, &a, &b, 0 },
                        { SCALAR, op, &a, NULL, draw(&r, BIN[op].lo, BIN[op].hi) },
                        { UNARY, uop, &b, NULL, 0 },
                    };
                    char what[1800];
                    for (int k = 0; k < 3; k++)
                        check_into(&calls[k], &dst, call_text(&calls[k], &dst, "rows: ", what,
                                                              sizeof what), INTO_HINT);
                    if (d == 0)
                        check_new(&calls[0], call_text(&calls[0], NULL, "rows: ", what,
                                                       sizeof what), BCAST_HINT);
                    if (d == 1 && a_steps[x] != 0) {   /* in place, a is dst */
                        const call in_place = { BINARY, op, &a, &b, 0 };
                        check_into(&in_place, &a, call_text(&in_place, &a, "rows, in place "
                                                            "(dst is a): ", what, sizeof what),
                                   INTO_HINT);
                    }
                    nd_release(&a);
                    nd_release(&b);
                    nd_release(&dst);
                }
}
END_TEST

START_TEST(empty_and_0d)
{
    first_binary();
    t_rng r = t_rng_new(43901);
    /* results with no element: the right shape, a new empty array; a dst
     * with no element (any offset, junk strides): nothing written */
    static const struct { int na; int64_t sa[ND_MAX_DIMS]; int nb; int64_t sb[ND_MAX_DIMS]; }
        empty[] = {
            { 1, { 0 }, 1, { 1 } },       { 2, { 2, 0 }, 2, { 1, 1 } },
            { 2, { 1, 0 }, 2, { 5, 1 } }, { 2, { 0, 3 }, 1, { 3 } },
            { 3, { 3, 0, 1 }, 1, { 4 } }, { 1, { 0 }, 0, { 0 } },
            { 8, { 2, 1, 2, 1, 2, 1, 0, 1 }, 3, { 3, 1, 1 } },
            { 0, { 0 }, 4, { 1, 0, 1, 1 } },
        };
    for (size_t c = 0; c < sizeof empty / sizeof empty[0]; c++)
        for (int op = 0; op < NBIN; op++) {
            layout la = gen_layout(&r, empty[c].na, empty[c].sa, K_WINDOW, 64);
            layout lb = gen_layout(&r, empty[c].nb, empty[c].sb, K_WINDOW, 64);
            nd_array a = input_of(&r, &la, -4, 4), b = input_of(&r, &lb, -4, 4);
            call calls[3] = { { BINARY, op, &a, &b, 0 }, { SCALAR, op, &a, NULL, 2.0f },
                              { UNARY, op % NUN, &a, NULL, 0 } };
            char what[1800];
            for (int k = 0; k < 3; k++) {
                int rn;
                int64_t rs[ND_MAX_DIMS];
                ref_shape(&calls[k], &rn, rs);
                check_new(&calls[k], call_text(&calls[k], NULL, "empty: ", what, sizeof what),
                          "a result with no elements is a new array of that shape with no "
                          "data: compute nothing, write nothing");
                layout ld = gen_layout(&r, rn, rs, K_WINDOW, 64);
                nd_array dst = dst_of(&ld);
                check_into(&calls[k], &dst, call_text(&calls[k], &dst, "empty: ", what,
                                                      sizeof what), INTO_HINT);
                nd_release(&dst);
            }
            nd_release(&a);
            nd_release(&b);
        }
    /* 0-d arrays at offsets, with 0-d, all-ones 8-D and 1-D partners */
    int64_t ones[8] = { 1, 1, 1, 1, 1, 1, 1, 1 }, three = 3;
    for (int c = 0; c < 60; c++) {
        int op = c % NBIN;
        layout l0 = gen_layout(&r, 0, NULL, K_WINDOW, 64);
        layout l8 = gen_layout(&r, 8, ones, K_WINDOW, 64);
        layout l1 = gen_layout(&r, 1, &three, K_REVERSED, 64);
        nd_array s0 = input_of(&r, &l0, -4, 4), t0 = input_of(&r, &l0, -4, 4);
        nd_array e8 = input_of(&r, &l8, -4, 4), v1 = input_of(&r, &l1, -4, 4);
        const call calls[] = {
            { BINARY, op, &s0, &t0, 0 }, { BINARY, op, &s0, &e8, 0 },
            { BINARY, op, &e8, &s0, 0 }, { BINARY, op, &v1, &s0, 0 },
            { BINARY, op, &s0, &v1, 0 }, { SCALAR, op, &s0, NULL, 1.5f },
            { SCALAR, op, &e8, NULL, -0.5f }, { UNARY, op % NUN, &s0, NULL, 0 },
            { UNARY, op % NUN, &e8, NULL, 0 },
        };
        for (size_t k = 0; k < sizeof calls / sizeof calls[0]; k++) {
            char what[1800];
            int rn;
            int64_t rs[ND_MAX_DIMS];
            ref_shape(&calls[k], &rn, rs);
            check_new(&calls[k], call_text(&calls[k], NULL, "0-d: ", what, sizeof what),
                      "a 0-d array (or one whose axes all have size 1) has exactly one "
                      "element, at its offset: after dropping size-1 axes there may be no "
                      "axis left, and that element must still be computed");
            layout ld = gen_layout(&r, rn, rs, K_WINDOW, 64);
            nd_array dst = dst_of(&ld);
            check_into(&calls[k], &dst, call_text(&calls[k], &dst, "0-d: ", what,
                                                  sizeof what), INTO_HINT);
            nd_release(&dst);
        }
        nd_release(&s0);
        nd_release(&t0);
        nd_release(&e8);
        nd_release(&v1);
    }
}
END_TEST

START_TEST(ewise_large)
{
    first_binary();
    const int64_t n = INT64_C(1) << 22, side = 2048;
    int64_t sq[2] = { side, side }, tr[2] = { 1, side }, col[2] = { side, 1 }, m1 = -1;
    float *x = t_floats(n), *y = t_floats(n), *poison = t_floats(n);
    for (int64_t i = 0; i < n; i++) {
        x[i] = (float)((i * 7919) % 8191) * 0.125f - 512.0f;
        y[i] = (float)((i * 104729) % 4099) * 0.25f - 500.0f;
        poison[i] = -1000.25f;
    }
    nd_array A = t_array_of(2, sq, x), B = t_array_of(2, sq, y);
    nd_array At = t_view_of(n, x, 2, sq, tr, 0), C = t_array_of(2, col, y);
    nd_array R = t_view_of(side, y, 1, &side, &m1, side - 1);
    int64_t s8[8] = { 8, 8, 8, 8, 8, 8, 4, 4 };
    int64_t st8[8] = { -524288, -65536, -8192, -1024, -128, -16, -4, -1 };
    nd_array X8 = t_view_of(n, x, 8, s8, st8, n - 1);
    char what[1800];
    const char *hint = "sizes and offsets are int64_t; a loop over 2^22 elements must reach "
                       "every one through the operands' own strides, and a fast path must "
                       "handle the tail of each row";

    call c1 = { BINARY, ND_ADD, &A, &B, 0 };   /* the fast path: all compact */
    check_new(&c1, call_text(&c1, NULL, "2^22 elements: ", what, sizeof what), hint);
    call c2 = { BINARY, ND_DIV, &At, &B, 0 };  /* a transposed */
    check_new(&c2, call_text(&c2, NULL, "2^22 elements: ", what, sizeof what), hint);
    call c3 = { BINARY, ND_MAXIMUM, &A, &R, 0 };   /* a reversed row, broadcast */
    check_new(&c3, call_text(&c3, NULL, "2^22 elements: ", what, sizeof what), hint);
    nd_array D = t_view_of(n, poison, 2, sq, tr, 0);   /* dst transposed */
    call c4 = { BINARY, ND_SUB, &A, &C, 0 };
    check_into(&c4, &D, call_text(&c4, &D, "2^22 elements: ", what, sizeof what), hint);
    call c5 = { SCALAR, ND_MUL, &B, NULL, 0.375f };   /* in place, compact */
    check_into(&c5, &B, call_text(&c5, &B, "2^22 elements, in place: ", what, sizeof what),
               hint);
    call c6 = { UNARY, ND_TANH, &X8, NULL, 0 };   /* 8 reversed axes */
    check_new(&c6, call_text(&c6, NULL, "2^22 elements: ", what, sizeof what), hint);
    call c7 = { UNARY, ND_NEG, &At, NULL, 0 };
    check_into(&c7, &A, call_text(&c7, &A, "2^22 elements: ", what, sizeof what), hint);
    nd_release(&D);
    nd_release(&X8);
    nd_release(&R);
    nd_release(&C);
    nd_release(&At);
    nd_release(&B);
    nd_release(&A);
    free(x);
    free(y);
    free(poison);
}
END_TEST

/* The library against itself: results of two calls must relate so. */
typedef enum { SAME_BITS, SAME_VALUE } relation;

static void expect_related(const nd_array *p, const nd_array *q, relation rel,
                           const nd_array *a, const nd_array *b, const char *law, int c,
                           const char *hint)
{
    float *x = values_of(p), *y = values_of(q), *va = values_of(a), *vb = values_of(b);
    int64_t n = nd_numel(p);
    CHECK(nd_numel(q) == n, "case %d: %s: the two sides have %" PRId64 " and %" PRId64
          " elements", c, law, n, nd_numel(q));
    for (int64_t i = 0; i < n; i++) {
        bool ok = agrees(rel == SAME_BITS ? EXACT : ANY_ZERO, x[i], y[i]);
        if (!ok) {
            char da[300], db[300];
            ck_abort_msg("case %d: %s does not hold at row-major position %" PRId64 " (a = "
                         "%.9g, b = %.9g): %.9g and %.9g; a %s, b %s. Hint: %s", c, law, i,
                         (double)va[i], (double)vb[i], (double)x[i], (double)y[i],
                         describe(a, da, sizeof da), describe(b, db, sizeof db), hint);
        }
    }
    free(x);
    free(y);
    free(va);
    free(vb);
}

/* A compact array of a's shape holding f(a[i], b[i]) computed here. */
static nd_array host_map(const nd_array *a, const nd_array *b, float (*f)(float, float))
{
    float *va = values_of(a), *vb = values_of(b);
    int64_t n = nd_numel(a);
    for (int64_t i = 0; i < n; i++)
        va[i] = f(va[i], vb[i]);
    nd_array out = t_array_of(a->ndim, a->shape, va);
    free(va);
    free(vb);
    return out;
}

static float law_self_sub(float x, float y)
{
    (void)y;
    return isfinite(x) ? 0.0f : NAN;
}
static float law_self_eq(float x, float y)
{
    (void)y;
    return isnan(x) ? 0.0f : 1.0f;
}
static float law_identity(float x, float y)
{
    (void)y;
    return x;
}
static float law_ge_either(float x, float y)
{
    return isnan(x) || isnan(y) ? 0.0f : 1.0f;
}

START_TEST(ewise_properties)
{
    first_binary();
    t_rng r = t_rng_new(43951);
    for (int c = 0; c < 300; c++) {
        int64_t shape[ND_MAX_DIMS];
        int nd = gen_shape(&r, 0, 6, 4, 300, shape);
        nd_array a = random_input(&r, nd, shape, -8, 8), b = random_input(&r, nd, shape, -8, 8);
        enum { NR = 40 };
        nd_array t[NR];
        int k = 0;
#define BIN_(op, x, y) (T_OK(nd_binary((op), (x), (y), &t[k])), &t[k++])
#define SCA_(op, x, s) (T_OK(nd_scalar((op), (x), (s), &t[k])), &t[k++])
#define UN_(op, x) (T_OK(nd_unary((op), (x), &t[k])), &t[k++])
        const char *h = "each op is C's own IEEE operation on the two elements at one "
                        "position, nothing more";
        nd_array *p, *q, *u, *w;
        p = BIN_(ND_ADD, &a, &b); q = BIN_(ND_ADD, &b, &a);
        expect_related(p, q, SAME_BITS, &a, &b, "a + b == b + a (bit for bit)", c, h);
        p = BIN_(ND_MUL, &a, &b); q = BIN_(ND_MUL, &b, &a);
        expect_related(p, q, SAME_BITS, &a, &b, "a * b == b * a (bit for bit)", c, h);
        p = BIN_(ND_SUB, &a, &b); u = UN_(ND_NEG, &b); q = BIN_(ND_ADD, &a, u);
        expect_related(p, q, SAME_BITS, &a, &b, "a - b == a + neg(b) (bit for bit)", c, h);
        p = BIN_(ND_SUB, &a, &a); q = &t[k++];
        t[k - 1] = host_map(&a, &a, law_self_sub);
        expect_related(p, q, SAME_BITS, &a, &a, "a - a == +0 for finite a, NaN otherwise", c,
                       h);
        u = UN_(ND_NEG, &a); p = UN_(ND_NEG, u);
        expect_related(p, &a, SAME_BITS, &a, &b, "neg(neg(a)) == a (bit for bit)", c,
                       "neg flips the sign bit: -x, also for 0 and NaN");
        p = BIN_(ND_MAXIMUM, &a, &a);
        expect_related(p, &a, SAME_VALUE, &a, &b, "maximum(a, a) == a", c, OPS_HINT);
        p = BIN_(ND_MAXIMUM, &a, &b); q = BIN_(ND_MAXIMUM, &b, &a);
        expect_related(p, q, SAME_VALUE, &a, &b, "maximum(a, b) == maximum(b, a)", c,
                       OPS_HINT);
        p = BIN_(ND_EQ, &a, &a); q = &t[k++];
        t[k - 1] = host_map(&a, &a, law_self_eq);
        expect_related(p, q, SAME_BITS, &a, &b, "eq(a, a) == 1, or 0 where a is NaN", c,
                       OPS_HINT);
        p = BIN_(ND_GE, &a, &a);
        expect_related(p, q, SAME_BITS, &a, &b, "ge(a, a) == 1, or 0 where a is NaN", c,
                       OPS_HINT);
        /* ge(a,b) + ge(b,a) is 1 or 2 (0 with a NaN): maximum of them is 1 */
        p = BIN_(ND_GE, &a, &b); q = BIN_(ND_GE, &b, &a); u = BIN_(ND_MAXIMUM, p, q);
        w = &t[k++];
        t[k - 1] = host_map(&a, &b, law_ge_either);
        expect_related(u, w, SAME_BITS, &a, &b, "ge(a, b) or ge(b, a), unless a NaN is "
                       "involved", c, OPS_HINT);
        /* eq(a, b) == ge(a, b) * ge(b, a) */
        u = BIN_(ND_MUL, p, q); w = BIN_(ND_EQ, &a, &b);
        expect_related(w, u, SAME_BITS, &a, &b, "eq(a, b) == ge(a, b) * ge(b, a)", c,
                       OPS_HINT);
        /* abs(a) == maximum(a, neg(a)) */
        u = UN_(ND_NEG, &a); p = BIN_(ND_MAXIMUM, &a, u); q = UN_(ND_ABS, &a);
        expect_related(q, p, SAME_VALUE, &a, &b, "abs(a) == maximum(a, neg(a))", c, OPS_HINT);
        /* a * 1, a / 1, a - 0, a + (-0) are a, bit for bit */
        p = SCA_(ND_MUL, &a, 1.0f);
        expect_related(p, &a, SAME_BITS, &a, &b, "a * 1 == a (bit for bit)", c, h);
        p = SCA_(ND_DIV, &a, 1.0f);
        expect_related(p, &a, SAME_BITS, &a, &b, "a / 1 == a (bit for bit)", c, h);
        p = SCA_(ND_SUB, &a, 0.0f);
        expect_related(p, &a, SAME_BITS, &a, &b, "a - 0 == a (bit for bit)", c, h);
        p = SCA_(ND_ADD, &a, -0.0f); q = &t[k++];
        t[k - 1] = host_map(&a, &b, law_identity);
        expect_related(p, q, SAME_BITS, &a, &b, "a + (-0) == a (bit for bit)", c, h);
#undef BIN_
#undef SCA_
#undef UN_
        CHECK(k <= NR, "test bug: %d results", k);
        for (int j = 0; j < k; j++)
            nd_release(&t[j]);
        nd_release(&a);
        nd_release(&b);
    }
}
END_TEST

START_TEST(errors_args)
{
    int64_t shape[2] = { 3, 4 }, row = 4;
    nd_array a = t_arange(2, shape), b = t_arange(1, &row), out;
    nd_array dst = t_view_of(25, t_iota(25), 2, shape, (int64_t[]){ -8, 2 }, 17);
    T_OK(nd_binary(ND_ADD, &a, &b, &out));
    nd_release(&out);
    T_OK(nd_binary_into(ND_GE, &a, &b, &dst));
    T_OK(nd_scalar(ND_POW, &a, 2, &out));
    nd_release(&out);
    T_OK(nd_scalar_into(ND_MAXIMUM, &a, 2, &dst));
    T_OK(nd_unary(ND_LOG, &a, &out));
    nd_release(&out);
    T_OK(nd_unary_into(ND_ABS, &a, &dst));
    float *before = t_buffer(&dst, NULL);

    nd_array gone = t_arange(2, shape), big = a, neg = a, huge = a;
    nd_release(&gone);
    big.ndim = ND_MAX_DIMS + 1;
    neg.ndim = -1;
    huge.ndim = INT_MAX;
    const nd_array *wrong[] = { NULL, &gone, &big, &neg, &huge };
    t_poison(&out);
    for (size_t w = 0; w < sizeof wrong / sizeof wrong[0]; w++) {
        const nd_array *x = wrong[w];
        EXPECT_FAIL(ND_ERR_ARG, "binary", nd_binary(ND_ADD, x, &b, &out));
        EXPECT_FAIL(ND_ERR_ARG, "binary", nd_binary(ND_SUB, &a, x, &out));
        EXPECT_FAIL(ND_ERR_ARG, "binary_into", nd_binary_into(ND_MUL, x, &b, &dst));
        EXPECT_FAIL(ND_ERR_ARG, "binary_into", nd_binary_into(ND_DIV, &a, x, &dst));
        EXPECT_FAIL(ND_ERR_ARG, "binary_into", nd_binary_into(ND_POW, &a, &b, x));
        EXPECT_FAIL(ND_ERR_ARG, "scalar", nd_scalar(ND_EQ, x, 1.0f, &out));
        EXPECT_FAIL(ND_ERR_ARG, "scalar_into", nd_scalar_into(ND_GE, x, 1.0f, &dst));
        EXPECT_FAIL(ND_ERR_ARG, "scalar_into", nd_scalar_into(ND_GE, &a, 1.0f, x));
        EXPECT_FAIL(ND_ERR_ARG, "unary", nd_unary(ND_TANH, x, &out));
        EXPECT_FAIL(ND_ERR_ARG, "unary_into", nd_unary_into(ND_NEG, x, &dst));
        EXPECT_FAIL(ND_ERR_ARG, "unary_into", nd_unary_into(ND_NEG, &a, x));
        t_assert_untouched(&out, "a call with a NULL, released or broken array");
    }
    EXPECT_FAIL(ND_ERR_ARG, "binary", nd_binary(ND_ADD, &a, &b, NULL));
    EXPECT_FAIL(ND_ERR_ARG, "scalar", nd_scalar(ND_ADD, &a, 1.0f, NULL));
    EXPECT_FAIL(ND_ERR_ARG, "unary", nd_unary(ND_EXP, &a, NULL));
    static const int bad_bin[] = { NBIN, -1, 100, INT_MAX, INT_MIN };
    static const int bad_un[] = { NUN, -1, 100, INT_MAX, INT_MIN };
    for (int k = 0; k < 5; k++) {
        EXPECT_FAIL(ND_ERR_ARG, "binary", nd_binary((nd_binop)bad_bin[k], &a, &b, &out));
        EXPECT_FAIL(ND_ERR_ARG, "binary_into",
                    nd_binary_into((nd_binop)bad_bin[k], &a, &b, &dst));
        EXPECT_FAIL(ND_ERR_ARG, "scalar", nd_scalar((nd_binop)bad_bin[k], &a, 1.0f, &out));
        EXPECT_FAIL(ND_ERR_ARG, "scalar_into",
                    nd_scalar_into((nd_binop)bad_bin[k], &a, 1.0f, &dst));
        EXPECT_FAIL(ND_ERR_ARG, "unary", nd_unary((nd_unop)bad_un[k], &a, &out));
        EXPECT_FAIL(ND_ERR_ARG, "unary_into", nd_unary_into((nd_unop)bad_un[k], &a, &dst));
        t_assert_untouched(&out, "a call with an op out of range");
    }
    if (T_DEV != ND_CPU) {   /* arrays on two devices */
        nd_array host;
        T_OK(nd_from_host(ND_CPU, 1, &row, t_iota(4), &host));
        EXPECT_FAIL(ND_ERR_DEVICE, "binary", nd_binary(ND_ADD, &a, &host, &out));
        EXPECT_FAIL(ND_ERR_DEVICE, "binary_into", nd_binary_into(ND_ADD, &host, &b, &dst));
        EXPECT_FAIL(ND_ERR_DEVICE, "scalar_into", nd_scalar_into(ND_ADD, &host, 1.0f, &dst));
        EXPECT_FAIL(ND_ERR_DEVICE, "unary_into", nd_unary_into(ND_NEG, &host, &dst));
        t_assert_untouched(&out, "nd_binary of arrays on two devices");
        nd_release(&host);
    }
    float *after = t_buffer(&dst, NULL);
    int64_t size = 25;
    t_assert_floats(after, before, 1, &size, "dst's buffer after the failed calls",
                    "check every argument (arrays, op, devices) before writing anything");
    CHECK(a.buf->refcount == 1 && b.buf->refcount == 1 && dst.buf->refcount == 1,
          "failed calls changed the refcounts to %" PRId64 ", %" PRId64 ", %" PRId64
          ": a failed call takes no reference and drops none", a.buf->refcount,
          b.buf->refcount, dst.buf->refcount);
    free(before);
    free(after);
    nd_release(&dst);
    nd_release(&a);
    nd_release(&b);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* The suite: points and hints                                            */
/* ---------------------------------------------------------------------- */

Suite *hidden_03_ewise(void);

Suite *hidden_03_ewise(void)
{
    Suite *s = g_suite(3, "03_ewise");
    /* nd_binary */
    G_ADD(s, binary_random_deep, 5,
          "broadcast a and b to the result's shape as views (no copies), then one loop over "
          "the result's positions reading each input through its own offset and signed "
          "strides; up to 8 axes, any of them size 0 or 1");
    G_ADD(s, binary_broadcast_exhaustive, 4,
          "compare the shapes from the RIGHT: equal sizes, or one of them 1 (the result takes "
          "the other, 0 included); a missing axis counts as 1; otherwise ND_ERR_SHAPE naming "
          "both shapes, before anything is allocated or written");
    G_ADD(s, binary_stretch_size1_axes, 2,
          "a stretched axis (size 1 against a longer one, or missing) gets stride 0: its "
          "old stride is junk and must never be multiplied by an index");
    G_ADD(s, binary_ieee_grid, 4,
          "use C's own float arithmetic and powf, which follow IEEE 754 and C11 Annex F "
          "(signed zeros, denormals, inf, NaN); maximum is NaN when either input is (not "
          "fmaxf); EQ/GE are 1.0f or 0.0f, 0.0f with a NaN, and GE is >=, not >");
    /* nd_binary_into */
    G_ADD(s, binary_into_strided_dst, 4,
          "write through dst's offset and signed strides and nowhere else; a contiguous fast "
          "path needs dst contiguous as well as the inputs");
    G_ADD(s, binary_into_aliasing, 3,
          "dst may be a or b itself (or both): read each element before writing it, write "
          "each position once, and never stage dst's old values anywhere");
    G_ADD(s, into_wrong_dst, 3,
          "dst must have exactly the result's shape (same ndim and sizes: a shape the inputs "
          "broadcast to is not enough); check it, with a message naming both shapes, BEFORE "
          "writing anything");
    /* nd_scalar, nd_scalar_into */
    G_ADD(s, scalar_random_views, 3,
          "a OP value at every position of a, through a's offset and strides, with the same "
          "op code as the binary version");
    G_ADD(s, scalar_operand_order, 2,
          "the array is the LEFT operand: a - s, a / s, a ** s, a >= s, never s OP a");
    /* nd_unary, nd_unary_into */
    G_ADD(s, unary_random_views, 3,
          "OP(a) at every position through a's offset and strides; the _into form writes "
          "through dst's own strides, never as if dst were compact");
    G_ADD(s, unary_ieee_sweep, 3,
          "use <math.h>'s float functions (logf, expf, tanhf, fabsf) and -x: they get "
          "overflow, denormal underflow, saturation, log(0) = -inf, log(<0) = NaN and the "
          "sign of zero right; formulas of your own do not");
    /* all of them */
    G_ADD(s, new_out_is_input, 3,
          "out may be a or b: compute into a new array first, then release *out's old "
          "reference exactly once and store the result; on an error leave *out as it was");
    G_ADD(s, rows_fast_path_edges, 2,
          "take a blocked/vectorised path only where dst, a and b are all contiguous (or b "
          "repeats one value), and finish each row's tail one element at a time");
    G_ADD(s, empty_and_0d, 2,
          "a result with no elements needs no loop; a 0-d array, or one whose axes all have "
          "size 1, has exactly one element at its offset, which must still be computed");
    G_ADD_CPU(s, ewise_large, 3,
          "2^22 elements, compact, transposed, broadcast and 8-D reversed: int64_t offsets, "
          "one pass, the tail of every row handled");
    G_ADD(s, ewise_properties, 2,
          "each result element is C's IEEE operation on the two input elements at that "
          "position and nothing else: a+b == b+a, a-a == 0, neg(neg(a)) == a, "
          "eq(a,a) == 1 except NaN");
    G_ADD(s, errors_args, 2,
          "check the op (0..count-1), every array (NULL, released, ndim out of range), out, "
          "and the devices before writing anything; messages name the operation");
    return s;
}
