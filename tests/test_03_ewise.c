/*
 * test_03_ewise.c -- public tests of lesson 3: nd_binary, nd_binary_into,
 * nd_scalar, nd_scalar_into, nd_unary and nd_unary_into, in the order the
 * lesson text introduces what they need.
 *
 * Each test makes calls over the kit (tests/kit/kit.h): the kit builds the
 * inputs (views made with nd_as_strided, never with lesson 1's functions),
 * its reference says what each call must do (NumPy's broadcasting, the
 * arithmetic in double rounded once to float: + - * / exactly, pow, exp,
 * log and tanh within 4 ulp, infinities, NaN and signed zeros exactly), and
 * its comparison writes the message, with the inputs at the first wrong
 * element.  For the _into calls every buffer is compared afterwards: dst's
 * elements, and nothing else written.
 */
#include "kit.h"

#include <float.h>
#include <math.h>
#include <stdio.h>

#define EWISE_HINT "read each input through its broadcast view: align the shapes at the " \
    "right, and repeat a size-1 or missing axis (stride 0); strides may be negative and " \
    "offsets are not 0"
#define OPS_HINT "C's own float arithmetic, no special cases: maximum is NaN when either " \
    "input is; EQ and GE give 1.0f or 0.0f, and 0.0f for NaN; powf, logf, expf, tanhf"
#define INTO_HINT "write through dst's strides and offset, and only there; compute every " \
    "element from the inputs as they were before the call"

/* Random calls of one kind: every op in turn, 0..6 axes. */
static void random_calls(k_ctx *k, k_op op, int nops, int count, const char *hint)
{
    for (int i = 0; i < count; i++) {
        k_call c = k_ewise(k, op, i % nops, (i / nops) % 7, 5, 256, 0);
        k_check(k, &c, hint);
    }
}

/* ---------------------------------------------------------------------- */
/* nd_binary: broadcasting                                                */
/* ---------------------------------------------------------------------- */

static void binary_broadcast_cases(k_ctx *k)
{
    /* a holds 0.5, 1.5, 2.5, ...; b the same */
    static const struct {
        const char *what;
        nd_binop op;
        int na, nb;
        int64_t sa[4], sb[4];
    } cases[] = {
        { "a column (3,1) + a row (1,4)", ND_ADD, 2, 2, { 3, 1 }, { 1, 4 } },
        { "(2,3) - a row (3,) with fewer axes", ND_SUB, 2, 1, { 2, 3 }, { 3 } },
        { "a scalar (ndim 0) * (2,2)", ND_MUL, 0, 2, { 0 }, { 2, 2 } },
        { "(5,1,3) / (4,3): (5,4,3)", ND_DIV, 3, 2, { 5, 1, 3 }, { 4, 3 } },
        { "(2,1,3) maximum (4,1): (2,4,3)", ND_MAXIMUM, 3, 2, { 2, 1, 3 }, { 4, 1 } },
        { "(3,) + (1,) stretches b", ND_ADD, 1, 1, { 3 }, { 1 } },
        { "(1,) >= (1,1): one element, two axes", ND_GE, 1, 2, { 1 }, { 1, 1 } },
        { "(2,1) == (1,2)", ND_EQ, 2, 2, { 2, 1 }, { 1, 2 } },
        { "(8,1,6,1) - (7,1,5): (8,7,6,5)", ND_SUB, 4, 3, { 8, 1, 6, 1 }, { 7, 1, 5 } },
        { "(0,3) + (1,3): empty", ND_ADD, 2, 2, { 0, 3 }, { 1, 3 } },
        { "(2,1) + (0,): a size-1 axis stretches to 0", ND_ADD, 2, 1, { 2, 1 }, { 0 } },
        { "(0,) pow a scalar: empty", ND_POW, 1, 0, { 0 }, { 0 } },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        k_call c = k_new(k, K_BINARY);
        c.code = cases[i].op;
        k_arg(&c, k_compact(k, &c, cases[i].na, cases[i].sa, K_DISTINCT));
        k_arg(&c, k_compact(k, &c, cases[i].nb, cases[i].sb, K_DISTINCT));
        char hint[400];
        snprintf(hint, sizeof hint, "%s; %s", cases[i].what, EWISE_HINT);
        k_check(k, &c, hint);
    }
}

static void binary_errors(k_ctx *k)
{
    k_check_ewise_refusals(k, K_BINARY, 0, NULL);
    k_check_ewise_refusals(k, K_BINARY_INTO, 0, NULL);
    /* shapes that do not broadcast with (3,4): ND_ERR_SHAPE, the message
     * giving both shapes, nothing written */
    static const struct { int n; int64_t shape[3]; } bad[] = {
        { 1, { 3 } },    { 2, { 4, 3 } },    { 3, { 2, 1, 3 } }, { 1, { 0 } },
        { 2, { 2, 4 } }, { 3, { 1, 3, 5 } }, { 2, { 3, 0 } },
    };
    for (size_t i = 0; i < 3 * sizeof bad / sizeof bad[0]; i++) {
        k_call c = k_new(k, i % 3 == 2 ? K_BINARY_INTO : K_BINARY);
        c.code = (int)i % (ND_GE + 1);
        k_arr a = k_compact(k, &c, 2, (int64_t[]){ 3, 4 }, K_DISTINCT);
        k_arr x = k_compact(k, &c, bad[i / 3].n, bad[i / 3].shape, K_NEGATIVE);
        k_arg(&c, i % 3 == 1 ? x : a);
        k_arg(&c, i % 3 == 1 ? a : x);
        if (i % 3 == 2)
            k_arg(&c, k_view(k, &c, 2, (int64_t[]){ 3, 4 }, K_ANY, K_NEGATIVE));
        k_expect(k, &c, ND_ERR_SHAPE, "a's and b's shapes, aligned at the right, must have "
                 "equal sizes or a 1 on every axis");
    }
}

static void binary_random(k_ctx *k)
{
    random_calls(k, K_BINARY, ND_GE + 1, 800, EWISE_HINT);
}

static void binary_into_random(k_ctx *k)
{
    random_calls(k, K_BINARY_INTO, ND_GE + 1, 400, INTO_HINT);
}

/* x OP y as C's float arithmetic defines it (IEEE 754, C11 Annex F),
 * through nd_binary (a of shape (1,), b 0-d) and nd_scalar. */
static void binary_ieee(k_ctx *k)
{
    static const struct { nd_binop op; float x, y; } rows[] = {
        { ND_ADD, INFINITY, -INFINITY }, { ND_ADD, NAN, 1 },        { ND_ADD, FLT_MAX, FLT_MAX },
        { ND_ADD, -0.0f, -0.0f },        { ND_SUB, INFINITY, INFINITY }, { ND_SUB, 3, 3 },
        { ND_MUL, 0, INFINITY },         { ND_MUL, -2, INFINITY },  { ND_MUL, 0, -1 },
        { ND_DIV, 1, 0 },                { ND_DIV, -1, 0 },         { ND_DIV, 1, -0.0f },
        { ND_DIV, 0, 0 },                { ND_DIV, INFINITY, INFINITY }, { ND_DIV, 1, INFINITY },
        { ND_POW, 2, 10 },               { ND_POW, 0, -1 },         { ND_POW, -8, 1.0f / 3 },
        { ND_POW, -2, 3 },               { ND_POW, NAN, 0 },        { ND_POW, 1, NAN },
        { ND_POW, 10, 40 },              { ND_POW, 2, -0.5f },      { ND_POW, -0.0f, 3 },
        { ND_MAXIMUM, NAN, 1 },          { ND_MAXIMUM, 1, NAN },    { ND_MAXIMUM, NAN, NAN },
        { ND_MAXIMUM, -INFINITY, -1e30f }, { ND_MAXIMUM, INFINITY, 1 }, { ND_MAXIMUM, 2, 3 },
        { ND_EQ, NAN, NAN },             { ND_EQ, 1, 1 },           { ND_EQ, 0, -0.0f },
        { ND_EQ, INFINITY, INFINITY },   { ND_EQ, 1, 2 },           { ND_GE, NAN, 1 },
        { ND_GE, 1, NAN },               { ND_GE, 2, 2 },           { ND_GE, -INFINITY, -INFINITY },
        { ND_GE, 1, 2 },                 { ND_GE, 3, 2 },           { ND_GE, -0.0f, 0 },
    };
    for (size_t i = 0; i < 2 * sizeof rows / sizeof rows[0]; i++) {
        k_call c = k_new(k, i % 2 ? K_SCALAR : K_BINARY);
        c.code = rows[i / 2].op;
        c.scalar = rows[i / 2].y;
        k_arg(&c, k_at(k_buffer_of(k, &c, 1, &rows[i / 2].x), 1, (int64_t[]){ 1 },
                       (int64_t[]){ 1 }, 0));
        if (i % 2 == 0)
            k_arg(&c, k_at(k_buffer_of(k, &c, 1, &rows[i / 2].y), 0, NULL, NULL, 0));
        k_check(k, &c, OPS_HINT);
    }
}

/* ---------------------------------------------------------------------- */
/* nd_scalar, nd_unary                                                    */
/* ---------------------------------------------------------------------- */

static void scalar_random(k_ctx *k)
{
    random_calls(k, K_SCALAR, ND_GE + 1, 400, "a OP value at every position of a, read "
                 "through a's offset and strides: the value is a 0-d array, broadcast with "
                 "strides 0");
}

static void scalar_into_random(k_ctx *k)
{
    random_calls(k, K_SCALAR_INTO, ND_GE + 1, 300, INTO_HINT);
}

static void unary_random(k_ctx *k)
{
    random_calls(k, K_UNARY, ND_ABS + 1, 400, "OP(a) at every position of a, read through "
                 "a's offset and strides: simplify dst's and a's layouts together");
}

static void unary_into_random(k_ctx *k)
{
    random_calls(k, K_UNARY_INTO, ND_ABS + 1, 300, INTO_HINT);
}

/* Each op on the special values: NaN, +-inf, +-0, denormals, FLT_MIN,
 * FLT_MAX, and a few plain numbers, a reversed view of them. */
static void unary_ieee(k_ctx *k)
{
    static const float more[] = { 100, -200, 89, 20, -1, 1, 0x1p-130f, -3 };
    float x[K_NSPECIAL + 8];
    memcpy(x, k_specials, sizeof k_specials);
    memcpy(x + K_NSPECIAL, more, sizeof more);
    for (int op = 0; op <= ND_ABS; op++) {
        k_call c = k_new(k, K_UNARY);
        c.code = op;
        k_arg(&c, k_at(k_buffer_of(k, &c, K_NSPECIAL + 8, x), 1,
                       (int64_t[]){ K_NSPECIAL + 8 }, (int64_t[]){ -1 }, K_NSPECIAL + 7));
        k_check(k, &c, "each unary op is one call of C's float function on one element: "
                "-x (so -0 for 0), logf, expf, tanhf, fabsf; no special cases: IEEE gives "
                "log(0) = -inf, log(-1) = NaN, exp(100) = inf, tanh(-0) = -0");
    }
}

/* ---------------------------------------------------------------------- */
/* Refusals                                                               */
/* ---------------------------------------------------------------------- */

static void into_wrong_dst(k_ctx *k)
{
    /* (3,1) OP (1,4) is (3,4); a dst of any other shape is refused, even
     * one that a and b broadcast to, or one of theirs */
    static const struct { int n; int64_t shape[3]; } dst[] = {
        { 2, { 3, 4 } },    { 2, { 3, 1 } }, { 2, { 1, 4 } }, { 2, { 4, 3 } }, { 3, { 2, 3, 4 } },
        { 3, { 3, 4, 1 } }, { 1, { 12 } },   { 0, { 0 } },    { 2, { 3, 0 } },
    };
    for (size_t i = 0; i < 3 * sizeof dst / sizeof dst[0]; i++) {
        k_op op = i % 3 == 0 ? K_BINARY_INTO : i % 3 == 1 ? K_SCALAR_INTO : K_UNARY_INTO;
        k_call c = k_new(k, op);
        k_arg(&c, k_compact(k, &c, 2, op == K_BINARY_INTO ? (int64_t[]){ 3, 1 }
                                                          : (int64_t[]){ 3, 4 }, K_DISTINCT));
        if (op == K_BINARY_INTO)
            k_arg(&c, k_compact(k, &c, 2, (int64_t[]){ 1, 4 }, K_DISTINCT));
        k_arg(&c, k_view(k, &c, dst[i / 3].n, dst[i / 3].shape, K_ANY, K_NEGATIVE));
        k_check(k, &c, "dst must have exactly the result's shape: it is never broadcast");
    }
}

static void scalar_unary_errors(k_ctx *k)
{
    for (k_op op = K_SCALAR; op <= K_UNARY_INTO; op++)
        k_check_ewise_refusals(k, op, 0, NULL);
}

/* ---------------------------------------------------------------------- */
/* Rows, in place, and a large case                                       */
/* ---------------------------------------------------------------------- */

static void rows_of_every_stride(k_ctx *k)
{
    /* one row per call: lengths around the block size (16), and every mix
     * of contiguous, reversed, gapped and repeated (stride 0) operands */
    static const int64_t lengths[] = { 1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 65, 100,
                                       257 };
    static const int64_t dst_steps[] = { 1, -1, 2 }, in_steps[] = { 1, -1, 3, 0 };
    for (int i = 0; i < 15 * 3 * 4 * 4 * 3; i++) {
        int f = i / 3 % 48;
        k_op op = i % 3 == 0 ? K_BINARY_INTO : i % 3 == 1 ? K_SCALAR_INTO : K_UNARY_INTO;
        k_call c = k_ewise_row(k, op, f % (op == K_UNARY_INTO ? ND_ABS + 1 : ND_GE + 1),
                               lengths[i / 144], in_steps[f / 4 % 4], in_steps[f % 4],
                               dst_steps[f / 16], 0);
        k_check(k, &c, "a block path only for rows contiguous in dst and a (b contiguous or "
                "stride 0); every other row, and the tail after the blocks, one element at "
                "a time");
    }
}

/* The forms of a call whose output is an input: f(a, b, dst = a), f(a, b,
 * dst = b), f(a, a, dst = a), then the scalar and unary f(a, dst = a); for
 * the allocating functions out is that input instead. */
static void aliased_calls(k_ctx *k, k_op bin, int count, const char *hint)
{
    static const int how[] = { K_OUT_IS_A, K_OUT_IS_B, K_OUT_IS_A | K_B_IS_A };
    for (int i = 0; i < 5 * count; i++) {
        int form = i % 5;
        k_op op = (k_op)(bin + (form < 3 ? 0 : form == 3 ? 2 : 4));   /* scalar, unary */
        k_call c = k_ewise(k, op, i / 5 % (form == 4 ? ND_ABS + 1 : ND_GE + 1), i / 5 % 7,
                           i % 3 ? 5 : 40, 256, how[form < 3 ? form : 0]);
        k_check(k, &c, hint);
    }
}

static void into_aliases_input(k_ctx *k)
{
    aliased_calls(k, K_BINARY_INTO, 150, "dst may be a or b itself: read each element before "
                  "writing it, and no restrict on the row pointers");
}

static void new_out_aliases_input(k_ctx *k)
{
    aliased_calls(k, K_BINARY, 100, "compute into a new array, then release out's old "
                  "reference (out may be a or b) and store the result: the given functions do "
                  "it with nd_replace");
}

static void ewise_large(k_ctx *k)
{
    /* 2^20 elements: two compact operands (one long row), in place, and a
     * transposed a minus a broadcast column into a reversed dst */
    int64_t sq[2] = { 1024, 1024 }, tr[2] = { 1, 1024 }, rev[2] = { -1024, -1 };
    k_call c = k_new(k, K_BINARY);
    k_arg(&c, k_compact(k, &c, 2, sq, K_INTEGERS));
    k_arg(&c, k_compact(k, &c, 2, sq, K_RANDOM));
    k_check(k, &c, EWISE_HINT);
    c = k_new(k, K_BINARY_INTO);
    c.code = ND_MUL;
    k_arg(&c, k_compact(k, &c, 2, sq, K_INTEGERS));
    k_arg(&c, k_compact(k, &c, 2, sq, K_RANDOM));
    k_arg(&c, c.args[0]);
    k_check(k, &c, INTO_HINT);
    c = k_new(k, K_BINARY_INTO);
    c.code = ND_SUB;
    k_arg(&c, k_strided(k, &c, 1 << 20, 2, sq, tr, 0, K_INTEGERS));
    k_arg(&c, k_compact(k, &c, 2, (int64_t[]){ 1024, 1 }, K_RANDOM));
    k_arg(&c, k_strided(k, &c, 1 << 20, 2, sq, rev, (1 << 20) - 1, K_NEGATIVE));
    k_check(k, &c, INTO_HINT);
}

/* ---------------------------------------------------------------------- */
/* Extreme shapes (issue #17)                                             */
/* ---------------------------------------------------------------------- */

/* A call of op (K_BINARY, or one of a alone) on views of one float with
 * stride 0: a of shape (na, sa), b of (nb, sb). */
static k_call ewise_huge(k_ctx *k, k_op op, int code, int na, const int64_t *sa, int nb,
                         const int64_t *sb)
{
    static const int64_t zeros[ND_MAX_DIMS] = { 0 };
    k_call c = k_on_view(k, op, 1, na, sa, zeros, 0);
    c.code = code;
    c.scalar = 2.0f;
    if (op == K_BINARY)
        k_arg(&c, k_at(0, nb, sb, zeros, 0));
    return c;
}

/* The errors of making a result name the operation, not the framework's
 * nd_empty ("empty: cannot allocate ..." once): a result shape with too
 * many elements, and a result no machine can allocate (2^58 floats, 2^60
 * bytes; the kit's executor sets allocator_may_return_null=1 for
 * AddressSanitizer, so malloc returns NULL in both builds). */
static void extreme_ewise_result_errors(k_ctx *k)
{
    static const int64_t two = 2, col[2] = { K_P2(40), 1 }, row[2] = { 1, K_P2(40) },
                         c29[2] = { K_P2(29), 1 }, r29[2] = { 1, K_P2(29) }, most = ND_MAX_NUMEL;
    static const char *const hint = "check the result's shape (nd_check_shape) and report a "
        "failed allocation in the operation's own name, not nd_empty's";
    k_call c = k_on_array(k, K_BINARY, 1, &two);
    k_arg(&c, c.args[0]);
    k_expect(k, &c, ND_OK, EWISE_HINT);
    /* (2^40,1) + (1,2^40): a result of 2^80 elements is no valid shape */
    c = ewise_huge(k, K_BINARY, ND_ADD, 2, col, 2, row);
    k_expect(k, &c, ND_ERR_ARG, hint);
    c = ewise_huge(k, K_BINARY, ND_ADD, 2, c29, 2, r29);
    k_expect(k, &c, ND_ERR_NOMEM, hint);
    c = ewise_huge(k, K_UNARY, ND_NEG, 1, &most, 0, NULL);
    k_expect(k, &c, ND_ERR_NOMEM, hint);
    c = ewise_huge(k, K_SCALAR, ND_MUL, 1, &most, 0, NULL);
    k_expect(k, &c, ND_ERR_NOMEM, hint);
}

static const k_test tests[] = {
    K_TEST(binary_broadcast_cases, K_BOTH, 0, EWISE_HINT),
    K_TEST(binary_errors, K_BOTH, 0, EWISE_HINT),
    K_TEST(binary_random, K_BOTH, 0, EWISE_HINT),
    K_TEST(binary_into_random, K_BOTH, 0, INTO_HINT),
    K_TEST(binary_ieee, K_BOTH, 0, OPS_HINT),
    K_TEST(scalar_random, K_BOTH, 0, EWISE_HINT),
    K_TEST(scalar_into_random, K_BOTH, 0, INTO_HINT),
    K_TEST(unary_random, K_BOTH, 0, EWISE_HINT),
    K_TEST(unary_into_random, K_BOTH, 0, INTO_HINT),
    K_TEST(unary_ieee, K_BOTH, 0, OPS_HINT),
    K_TEST(into_wrong_dst, K_BOTH, 0, INTO_HINT),
    K_TEST(scalar_unary_errors, K_BOTH, 0, EWISE_HINT),
    K_TEST(rows_of_every_stride, K_BOTH, 0, INTO_HINT),
    K_TEST(into_aliases_input, K_BOTH, 0, INTO_HINT),
    K_TEST(new_out_aliases_input, K_BOTH, 0, EWISE_HINT),
    K_TEST(ewise_large, K_BOTH, 0, EWISE_HINT),
    K_TEST(extreme_ewise_result_errors, K_BOTH, 0, EWISE_HINT),
};
K_SUITE(public_03, 3, "03_ewise", tests);
