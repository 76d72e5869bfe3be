/*
 * test_03_ewise.c -- public tests of lesson 3: nd_binary, nd_binary_into,
 * nd_scalar, nd_scalar_into, nd_unary and nd_unary_into, in the order the
 * lesson text introduces what they need.
 *
 * Calls over the kit (tests/kit/kit.h), whose reference follows NumPy's
 * broadcasting and the arithmetic in double rounded once to float (+ - * /
 * exactly, pow, exp, log and tanh within 4 ulp, infinities, NaN and signed
 * zeros exactly).  After an _into call every buffer is compared: dst's
 * elements, and nothing else written.
 */
#include "kit.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>

#define EWISE_HINT "read each input through its broadcast view: align the shapes at the " \
    "right, and repeat a size-1 or missing axis (stride 0); strides may be negative and " \
    "offsets are not 0"
#define OPS_HINT "C's own float arithmetic, no special cases: maximum is NaN when either " \
    "input is; EQ and GE give 1.0f or 0.0f, and 0.0f for NaN; powf, logf, expf, tanhf"
#define INTO_HINT "write through dst's strides and offset, and only there; compute every " \
    "element from the inputs as they were before the call"

/* Op codes that do not exist, besides -1 and the count of ops. */
static const int bad_codes[] = { 100, INT_MAX, INT_MIN };

/* The i-th random call of kind op (with `how`'s aliasing): every op code
 * in turn, 0..8 axes; every fourth round of codes long rows on 1..3 axes,
 * for a blocked path. */
static k_call random_call(k_ctx *k, k_op op, int i, int how)
{
    int nops = op == K_UNARY || op == K_UNARY_INTO ? ND_ABS + 1 : ND_GE + 1, r = i / nops;
    bool rows = r % 4 == 3;
    return k_ewise(k, op, i % nops, rows ? 1 + r % 3 : r % (ND_MAX_DIMS + 1), rows ? 80 : 5,
                   rows ? 400 : 256, how);
}

/* k_count(k, count) random calls of one kind. */
static void random_calls(k_ctx *k, k_op op, int count, const char *hint)
{
    for (int i = 0; i < k_count(k, count); i++) {
        k_call c = random_call(k, op, i, 0);
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
        k_call c = k_on_array(k, K_BINARY, cases[i].na, cases[i].sa);
        c.code = cases[i].op;
        k_arg(&c, k_compact(k, &c, cases[i].nb, cases[i].sb, K_DISTINCT));
        char hint[400];
        snprintf(hint, sizeof hint, "%s; %s", cases[i].what, EWISE_HINT);
        k_check(k, &c, hint);
    }
}

static void binary_errors(k_ctx *k)
{
    k_check_ewise_refusals(k, K_BINARY, 3, bad_codes);
    k_check_ewise_refusals(k, K_BINARY_INTO, 3, bad_codes);
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

static void binary_random(k_ctx *k) { random_calls(k, K_BINARY, 800, EWISE_HINT); }
static void binary_into_random(k_ctx *k) { random_calls(k, K_BINARY_INTO, 400, INTO_HINT); }

/* x OP y as C's float arithmetic defines it (IEEE 754, C11 Annex F) for
 * every pair of these values: signed zeros, gradual underflow and ties to
 * even, overflow, pow's special cases. */
#define NGRID 41
static const float GRID[NGRID] = {
    0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -0.5f, 2.0f, -2.0f, 3.0f, -3.0f, 2.5f, -2.5f, 1.0f / 3,
    4.0f, -5.0f, 10.0f, -10.0f, 127.0f, 128.0f, 129.0f, -149.0f, -151.0f, 1e20f, -1e20f,
    FLT_MAX, -FLT_MAX, FLT_MIN, -FLT_MIN, 0x1p-133f, -0x1p-133f, 0x1p-149f, -0x1p-149f,
    0x3p-149f, 0x1p23f, INFINITY, -INFINITY, NAN, 0x1.000002p0f, 0x1.fffffep-1f, 24.5f, -0.75f,
};

static void binary_ieee(k_ctx *k)
{
    /* a: GRID as a column at offset 1 whose size-1 axis has a junk stride;
     * b: GRID as a row walked backwards; dst a transpose; then GRID OP s
     * for each s in GRID (nd_scalar), new and into a reversed dst */
    float va[NGRID + 3] = { 7 }, vb[NGRID + 2] = { 7 };
    for (int i = 0; i < NGRID; i++)
        va[1 + i] = vb[NGRID - i] = GRID[i];
    for (int i = 0; i < (ND_GE + 1) * (2 + 2 * NGRID); i++) {
        int form = i % (2 + 2 * NGRID), s = (form - 2) / 2;   /* binary, _into, scalar(s) */
        k_call c = k_new(k, form == 0 ? K_BINARY : form == 1 ? K_BINARY_INTO
                            : form % 2 ? K_SCALAR_INTO : K_SCALAR);
        c.code = i / (2 + 2 * NGRID);
        c.scalar = GRID[form > 1 ? s : 0];
        if (form < 2) {
            k_arg(&c, k_at(k_buffer_of(k, &c, NGRID + 3, va), 2, (int64_t[]){ NGRID, 1 },
                           (int64_t[]){ 1, 5 }, 1));
            k_arg(&c, k_at(k_buffer_of(k, &c, NGRID + 2, vb), 1, (int64_t[]){ NGRID },
                           (int64_t[]){ -1 }, NGRID));
        } else {
            k_arg(&c, k_given(k, &c, 1, (int64_t[]){ NGRID }, GRID));
        }
        if (form == 1)
            k_arg(&c, k_strided(k, &c, NGRID * NGRID + 5, 2, (int64_t[]){ NGRID, NGRID },
                                (int64_t[]){ 1, NGRID }, 3, K_NEGATIVE));
        else if (form % 2)
            k_arg(&c, k_strided(k, &c, NGRID + 2, 1, (int64_t[]){ NGRID }, (int64_t[]){ -1 },
                                NGRID, K_NEGATIVE));
        k_check(k, &c, OPS_HINT);
    }
}

/* ---------------------------------------------------------------------- */
/* nd_scalar, nd_unary                                                    */
/* ---------------------------------------------------------------------- */

#define SCALAR_HINT "a OP value at every position of a, read through a's offset and " \
    "strides: the value is a 0-d array, broadcast with strides 0"
#define UNARY_HINT "OP(a) at every position of a, read through a's offset and strides: " \
    "simplify dst's and a's layouts together"

static void scalar_random(k_ctx *k) { random_calls(k, K_SCALAR, 400, SCALAR_HINT); }
static void scalar_into_random(k_ctx *k) { random_calls(k, K_SCALAR_INTO, 300, INTO_HINT); }
static void unary_random(k_ctx *k) { random_calls(k, K_UNARY, 400, UNARY_HINT); }
static void unary_into_random(k_ctx *k) { random_calls(k, K_UNARY_INTO, 300, INTO_HINT); }

/* Values to try op on: the special ones (NaN, +-inf, +-0, denormals,
 * FLT_MIN, FLT_MAX), then a dense sweep of where it overflows, underflows
 * or saturates.  Returns how many. */
static int64_t sweep(k_ctx *k, int op, float *v)
{
    static const float cases[] = { 88.72283172607421875f, 88.7229f, -87.33654f, -103.972084f,
                                   -104, 89, 1000, -1000, -110, 20, -20, 100, 0x1p-130f,
                                   -0x1p-130f, 0x1.000002p0f, 0x1.fffffep-1f };
    int64_t m = K_NSPECIAL + 16;
    memcpy(v, k_specials, sizeof k_specials);
    memcpy(v + K_NSPECIAL, cases, sizeof cases);
    for (int i = 0; i < 4096; i++, m++) {
        uint32_t bits = (uint32_t)k_next(k);
        float t = (float)i / 4096;
        if (op == ND_EXP || op == ND_TANH)   /* denormal results, overflow; saturation */
            v[m] = op == ND_EXP ? -110 + 205 * t : -12 + 24 * t;
        else if (op == ND_LOG)   /* 16 values in each binade, denormals included */
            v[m] = ldexpf(1 + (float)(i % 16) / 16, i / 16 - 149);
        else   /* neg, abs: any bits */
            memcpy(&v[m], &bits, sizeof bits);
    }
    for (int e = 1; e <= 149; e++) {   /* tiny arguments: exp(x) = 1 + x, tanh(x) = x */
        v[m++] = ldexpf(1.0f, -e);
        v[m++] = -ldexpf(1.3f, -e);
    }
    return m;
}

static void unary_ieee(k_ctx *k)
{
    static float v[K_NSPECIAL + 16 + 4096 + 298];
    for (int i = 0; i < 2 * (ND_ABS + 1); i++) {   /* forwards; backwards into a gapped dst */
        int64_t m = sweep(k, i / 2, v), back = i % 2;
        k_call c = k_new(k, back ? K_UNARY_INTO : K_UNARY);
        c.code = i / 2;
        k_arg(&c, k_at(k_buffer_of(k, &c, m, v), 1, &m, (int64_t[]){ back ? -1 : 1 },
                       back ? m - 1 : 0));
        if (back)
            k_arg(&c, k_strided(k, &c, 2 * m + 1, 1, &m, (int64_t[]){ 2 }, 1, K_NEGATIVE));
        k_check(k, &c, "each unary op is one call of C's float function on one element: "
                "-x (so -0 for 0), logf, expf, tanhf, fabsf; no special cases or formulas of "
                "your own: IEEE gives log(0) = -inf, log(-1) = NaN, exp(100) = inf, "
                "tanh(-0) = -0, and the functions get overflow, underflow and saturation right");
    }
}

/* ---------------------------------------------------------------------- */
/* Refusals                                                               */
/* ---------------------------------------------------------------------- */

static void into_wrong_dst(k_ctx *k)
{
    /* a OP b, a OP value and OP(a) into a dst of the result's shape (one
     * round in five), or of a random one of 0..3 axes of sizes 0..3: refused
     * unless it is the result's shape, even a shape a and b broadcast to,
     * or one with as many elements */
    static const struct { int na, nb; int64_t sa[3], sb[3]; } pairs[] = {
        { 2, 2, { 3, 1 }, { 1, 2 } }, { 0, 0, { 0 }, { 0 } },       { 1, 1, { 1 }, { 1 } },
        { 2, 1, { 2, 3 }, { 3 } },    { 2, 2, { 1, 3 }, { 0, 1 } }, { 3, 1, { 1, 1, 1 }, { 2 } },
        { 1, 3, { 3 }, { 2, 1, 1 } },
    };
    for (int i = 0; i < 3 * k_count(k, 200); i++) {
        int p = i / 3 % 7, dn;
        k_op op = i % 3 == 0 ? K_BINARY_INTO : i % 3 == 1 ? K_SCALAR_INTO : K_UNARY_INTO;
        int64_t ds[ND_MAX_DIMS];
        k_call c = k_new(k, op);
        c.code = p % (op == K_UNARY_INTO ? ND_ABS + 1 : ND_GE + 1);
        k_arg(&c, k_view(k, &c, pairs[p].na, pairs[p].sa, K_ANY | K_REPEAT, K_INTEGERS));
        if (op == K_BINARY_INTO)
            k_arg(&c, k_view(k, &c, pairs[p].nb, pairs[p].sb, K_ANY | K_REPEAT, K_SPECIAL));
        if (i / 21 % 5 == 0)
            k_broadcast_shape(pairs[p].na, pairs[p].sa, op == K_BINARY_INTO ? pairs[p].nb : 0,
                              pairs[p].sb, &dn, ds);
        else
            dn = k_shape(k, (int)k_int(k, 0, 3), 0, 3, 27, ds);
        k_arg(&c, k_view(k, &c, dn, ds, K_ANY, K_NEGATIVE));
        k_check(k, &c, "dst must have exactly the result's shape (same ndim and sizes: a shape "
                "the inputs broadcast to is not enough); it is never broadcast");
    }
}

static void scalar_unary_errors(k_ctx *k)
{
    for (k_op op = K_SCALAR; op <= K_UNARY_INTO; op++)
        k_check_ewise_refusals(k, op, 3, bad_codes);
}

/* ---------------------------------------------------------------------- */
/* Rows, in place, and a large case                                       */
/* ---------------------------------------------------------------------- */

static void rows_of_every_stride(k_ctx *k)
{
    /* one row per call: lengths around the block sizes a vectorised loop
     * uses (8 to 64 floats), every mix of contiguous, reversed, gapped and
     * repeated (stride 0) operands; dst contiguous, reversed, gapped, or a
     * itself (step 0 here) */
    static const int64_t lengths[] = { 1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 48,
                                       49, 63, 64, 65, 100, 127, 128, 129, 255, 256, 257, 1001 };
    static const int64_t steps[] = { 1, -1, 2, 0 }, b_steps[] = { 1, -1, 3, 0 };
    for (int i = 0; i < 27 * 64 * 4; i++) {
        int f = i / 4 % 64;
        int64_t sd = steps[f / 16], sa = steps[f / 4 % 4];
        k_op op = (k_op[]){ K_BINARY_INTO, K_SCALAR_INTO, K_UNARY_INTO, K_BINARY }[i % 4];
        if (sd == 0 && sa == 0)
            continue;   /* dst is a: a must not repeat elements */
        k_call c = k_ewise_row(k, op, f % (op == K_UNARY_INTO ? ND_ABS + 1 : ND_GE + 1),
                               lengths[i / 256], sa, b_steps[f % 4], sd,
                               sd == 0 ? K_OUT_IS_A : 0);
        k_check(k, &c, "a block path only for rows contiguous in dst and a (b contiguous or "
                "stride 0); every other row, and the tail after the blocks, one element at "
                "a time");
    }
}

/* The forms of a call whose output is an input: f(a, b, dst = a), f(a, b,
 * dst = b), f(a, a, dst = a), the scalar and unary f(a, dst = a), and a
 * refused f(a, b, dst = a) (b does not broadcast, or the op does not exist),
 * which changes nothing; for the allocating functions out is that input
 * instead. */
static void aliased_calls(k_ctx *k, k_op bin, int count, const char *hint)
{
    static const int how[] = { K_OUT_IS_A, K_OUT_IS_B, K_OUT_IS_A | K_B_IS_A, K_OUT_IS_A,
                               K_OUT_IS_A, K_OUT_IS_A };
    for (int i = 0; i < 6 * k_count(k, count); i++) {
        int form = i % 6;
        k_op op = (k_op)(bin + (form == 3 ? 2 : form == 4 ? 4 : 0));   /* scalar, unary */
        k_call c = random_call(k, op, i / 6, how[form]);
        int64_t last = c.args[0].ndim > 0 ? c.args[0].shape[c.args[0].ndim - 1] : 0;
        if (form == 5 && last > 1)
            c.args[1] = k_compact(k, &c, 1, (int64_t[]){ last + 1 }, K_DISTINCT);
        else if (form == 5)
            c.code = i / 6 % 2 ? -1 : ND_GE + 1;
        k_check(k, &c, hint);
    }
}

static void into_aliases_input(k_ctx *k)
{
    aliased_calls(k, K_BINARY_INTO, 150, "dst may be a or b itself: read each element before "
                  "writing it, never stage dst's old values, and no restrict on the row "
                  "pointers; a refused call changes nothing");
}

static void new_out_aliases_input(k_ctx *k)
{
    aliased_calls(k, K_BINARY, 100, "compute into a new array, then release out's old "
                  "reference exactly once (out may be a or b) and store the result: the given "
                  "functions do it with nd_replace; on an error leave it as it was");
}

static void ewise_large(k_ctx *k)
{
    /* n = m * m = 2^20 elements (2^22 in the hidden tests): compact; a
     * transposed; a reversed row broadcast; a minus a column into a
     * reversed dst; in place; tanh on 8 reversed axes */
    int64_t m = k_count(k, 1024), n = m * m, sq[2] = { m, m }, tr[2] = { 1, m },
            rev[2] = { -m, -1 }, s8[8], st8[8];
    for (int d = 7, s = 1; d >= 0; s *= (int)s8[d--]) {
        s8[d] = d == 0 ? n / (1 << 14) : 4;
        st8[d] = -s;
    }
    for (int i = 0; i < 6; i++) {
        k_call c = k_new(k, (k_op[]){ K_BINARY, K_BINARY, K_BINARY, K_BINARY_INTO,
                                      K_BINARY_INTO, K_UNARY }[i]);
        c.code = (int[]){ ND_ADD, ND_DIV, ND_MAXIMUM, ND_SUB, ND_MUL, ND_TANH }[i];
        k_arg(&c, i == 1   ? k_strided(k, &c, n, 2, sq, tr, 0, K_INTEGERS)
                  : i == 5 ? k_strided(k, &c, n, 8, s8, st8, n - 1, K_RANDOM)
                           : k_compact(k, &c, 2, sq, K_RANDOM));
        if (i < 5)
            k_arg(&c, i == 2   ? k_strided(k, &c, m, 1, sq, (int64_t[]){ -1 }, m - 1, K_SPECIAL)
                      : i == 3 ? k_compact(k, &c, 2, (int64_t[]){ m, 1 }, K_INTEGERS)
                               : k_compact(k, &c, 2, sq, K_INTEGERS));
        if (i == 3 || i == 4)
            k_arg(&c, i == 3 ? k_strided(k, &c, n, 2, sq, rev, n - 1, K_NEGATIVE) : c.args[0]);
        k_check(k, &c, i < 3 ? EWISE_HINT : INTO_HINT);
    }
}

/* ---------------------------------------------------------------------- */
/* Extreme shapes (issue #17)                                             */
/* ---------------------------------------------------------------------- */

/* Results too large: a and b views of one float (stride 0) whose broadcast
 * has 2^e elements over 6..8 axes of up to 2^16 each, e in 55..58 (no
 * machine allocates 2^57 bytes or more: ND_ERR_NOMEM, under ASan too, whose
 * allocator the kit lets return NULL) or, for a OP b, 59..84 (no valid
 * shape: ND_ERR_ARG; a and b each valid).  The error names the operation,
 * not the framework's nd_empty. */
static void extreme_ewise_result_errors(k_ctx *k)
{
    static const int64_t zeros[ND_MAX_DIMS] = { 0 }, two = 2;
    k_call c = k_on_array(k, K_BINARY, 1, &two);
    k_arg(&c, c.args[0]);
    k_expect(k, &c, ND_OK, EWISE_HINT);
    for (int i = 0; i < k_count(k, 30); i++) {
        k_op op = i % 3 == 0 ? K_BINARY : i % 3 == 1 ? K_UNARY : K_SCALAR;
        int nd = (int)k_int(k, 6, 8), e = (int)k_int(k, 55, op == K_BINARY ? 84 : 58);
        int bits[ND_MAX_DIMS] = { 0 }, ea = 0, eb = 0;
        for (int left = e; left > 0;) {
            int d = (int)k_int(k, 0, nd - 1);
            if (bits[d] < 16) {
                bits[d]++;
                left--;
            }
        }
        int64_t sa[ND_MAX_DIMS], sb[ND_MAX_DIMS], out[ND_MAX_DIMS];
        for (int d = 0; d < nd; d++) {   /* each axis from the side that has fewer bits */
            bool from_a = op != K_BINARY || ea < eb || (ea == eb && k_one_in(k, 2));
            out[d] = K_P2(bits[d]);
            sa[d] = from_a ? out[d] : 1;
            sb[d] = from_a ? 1 : out[d];
            *(from_a ? &ea : &eb) += bits[d];
        }
        c = k_on_view(k, op, 1, nd, sa, zeros, 0);
        if (op == K_BINARY)
            k_arg(&c, k_at(0, nd, sb, zeros, 0));
        c.code = (int)k_int(k, 0, op == K_UNARY ? ND_ABS : ND_GE);
        k_expect(k, &c, e > 58 ? ND_ERR_ARG : ND_ERR_NOMEM, "check the result's shape "
                 "(nd_check_shape) and report a failed allocation in the operation's own "
                 "name, not nd_empty's");
    }
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
