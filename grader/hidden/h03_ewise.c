/*
 * h03_ewise.c -- hidden tests of lesson 3: nd_binary, nd_binary_into,
 * nd_scalar, nd_scalar_into, nd_unary and nd_unary_into, over the kit
 * (tests/kit/kit.h) with other seeds and more cases than the public tests:
 *
 *   nd_binary     2400 random calls on 0..8 axes; EVERY ordered pair of the 85
 *                 shapes of up to 3 axes with sizes 0..3, also into a dst;
 *                 size-1 axes with junk strides stretched on up to 8 axes;
 *                 every pair of 41 special values for every op: C11 Annex
 *                 F's cases (pow, signed zeros, gradual underflow)
 *   _into         random and long rows into strided dsts; dst == a, b or
 *                 both; every dst shape of up to 3 axes refused but one
 *   nd_scalar     random calls; the array as the LEFT operand
 *   nd_unary      random calls; dense sweeps of exp (overflow, denormal
 *                 underflow), log (every binade), tanh (saturation, tiny
 *                 arguments); neg and abs on random bits
 *   all of them   out == an input; rows of 27 lengths around the block size
 *                 with strides 1, -1, 2/3 and 0, in place too; empty and 0-d
 *                 arrays; 2^22 elements; a OP a; every refusal
 *
 * The kit compares as nd.h says (+ - * / neg abs eq ge bit for bit, maximum
 * exactly, pow exp log tanh within 4 ulp; NaN, infinities and the sign of a
 * zero exactly), and every buffer of every call afterwards.
 */
#include "kit.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#define BCAST_HINT "align the shapes at the RIGHT; a missing axis, or one of size 1, " \
    "stretches to the other's size and is read at index 0 (stride 0, whatever stride it " \
    "had); read each input through its own offset and signed strides"
#define INTO_HINT "write through dst's own offset and signed strides, to dst's elements and " \
    "no others; a contiguous fast path needs dst contiguous too"
#define OPS_HINT "C's own float arithmetic and powf, which follow IEEE 754 and C11 Annex F; " \
    "maximum is NaN when either input is (not fmaxf); EQ/GE are 1.0f or 0.0f, 0.0f with a " \
    "NaN, and GE is >=, not >"
#define ALIAS_HINT "out or dst may be a or b itself: compute from the inputs as they are, " \
    "each element read before it is written, never staged; release out's old reference " \
    "exactly once, and on an error leave it as it was"

static int nops(k_op op)
{
    return op == K_UNARY || op == K_UNARY_INTO ? ND_ABS + 1 : ND_GE + 1;
}

/* count random calls of op, every op code in turn, on 0..8 axes, or with
 * `rows`, on 1..3 axes of up to 80 (long rows, for a blocked path). */
static void calls(k_ctx *k, k_op op, int count, bool rows, int how, const char *hint)
{
    for (int i = 0; i < count; i++) {
        k_call c = k_ewise(k, op, i % nops(op), (int)k_int(k, rows, rows ? 3 : ND_MAX_DIMS),
                           rows ? 80 : 4, 400, how);
        k_check(k, &c, hint);
    }
}

/* The i-th of the 85 shapes of 0..3 axes with sizes 0..3; returns ndim. */
static int small_shape(int i, int64_t *shape)
{
    int n = i == 0 ? 0 : i < 5 ? 1 : i < 21 ? 2 : 3, x = i - (n == 0 ? 0 : n == 1 ? 1 : n == 2 ? 5 : 21);
    for (int d = 0; d < n; d++, x /= 4)
        shape[d] = x % 4;
    return n;
}

/* ---------------------------------------------------------------------- */
/* nd_binary                                                              */
/* ---------------------------------------------------------------------- */

static void binary_random_deep(k_ctx *k)
{
    calls(k, K_BINARY, 2400, false, 0, BCAST_HINT);
}

/* Every pair of small shapes, through nd_binary and into a dst of the
 * result's shape (of a's, when they do not broadcast). */
static void binary_broadcast_exhaustive(k_ctx *k)
{
    for (int i = 0; i < 85 * 85 * 2; i++) {
        k_call c = k_new(k, i % 2 ? K_BINARY_INTO : K_BINARY);
        c.code = i / 2 % (ND_GE + 1);
        int64_t sa[3], sb[3], rs[ND_MAX_DIMS];
        int na = small_shape(i / 2 / 85, sa), nb = small_shape(i / 2 % 85, sb), rn;
        k_arg(&c, k_view(k, &c, na, sa, K_ANY | K_REPEAT, K_INTEGERS));
        k_arg(&c, k_view(k, &c, nb, sb, K_ANY | K_REPEAT, K_SPECIAL));
        bool fits = k_broadcast_shape(na, sa, nb, sb, &rn, rs);
        if (i % 2)
            k_arg(&c, k_view(k, &c, fits ? rn : na, fits ? rs : sa, K_ANY, K_NEGATIVE));
        k_check(k, &c, "compare the shapes from the RIGHT: equal sizes, or one of them 1 (the "
                "result takes the other, 0 included); a missing axis counts as 1; otherwise "
                "ND_ERR_SHAPE naming both shapes, before anything is written");
    }
}

/* a keeps some axes of the result, b the others (or both); their size-1
 * axes, or missing ones, stretch, with junk strides. */
static void binary_stretch_size1_axes(k_ctx *k)
{
    for (int i = 0; i < 800; i++) {
        int64_t shape[ND_MAX_DIMS], s[2][ND_MAX_DIMS];
        int nd = k_shape(k, (int)k_int(k, 1, ND_MAX_DIMS), 1, 4, 500, shape);
        if (i % 10 == 0)
            shape[k_int(k, 0, nd - 1)] = 0;
        for (int d = 0; d < nd; d++) {
            bool in_a = k_one_in(k, 2);
            s[0][d] = in_a ? shape[d] : 1;
            s[1][d] = !in_a || k_one_in(k, 4) ? shape[d] : 1;
        }
        k_call c = k_new(k, i % 3 ? K_BINARY : K_BINARY_INTO);
        c.code = i % (ND_GE + 1);
        for (int w = 0, drop = 0; w < 2; w++, drop = 0) {
            while (drop < nd && s[w][drop] == 1 && k_one_in(k, 2))
                drop++;   /* leading size-1 axes may be missing instead */
            k_arg(&c, k_view(k, &c, nd - drop, s[w] + drop, K_WINDOW | K_JUNK, K_RANDOM));
        }
        if (i % 3 == 0)
            k_arg(&c, k_view(k, &c, nd, shape, K_ANY, K_NEGATIVE));
        k_check(k, &c, "a stretched axis (size 1 against a longer one, or missing) gets stride "
                "0: its old stride is junk and must never be multiplied by an index");
    }
}

/* Special values: every pair of them, for every op, gives the cases IEEE
 * 754 and C11 Annex F fix (signed zeros, gradual underflow and ties to
 * even, overflow, pow's special cases). */
#define NGRID 41
static const float GRID[NGRID] = {
    0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -0.5f, 2.0f, -2.0f, 3.0f, -3.0f, 2.5f, -2.5f, 1.0f / 3,
    4.0f, -5.0f, 10.0f, -10.0f, 127.0f, 128.0f, 129.0f, -149.0f, -151.0f, 1e20f, -1e20f,
    FLT_MAX, -FLT_MAX, FLT_MIN, -FLT_MIN, 0x1p-133f, -0x1p-133f, 0x1p-149f, -0x1p-149f,
    0x3p-149f, 0x1p23f, INFINITY, -INFINITY, NAN, 0x1.000002p0f, 0x1.fffffep-1f, 24.5f, -0.75f,
};

static void binary_ieee_grid(k_ctx *k)
{
    /* a: GRID as a column at offset 1 whose size-1 axis has a junk stride;
     * b: GRID as a row walked backwards; dst a transpose; then GRID OP s
     * for each s in GRID, new and into a reversed dst */
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
            k_arg(&c, k_at(k_buffer_of(k, &c, NGRID, GRID), 1, (int64_t[]){ NGRID },
                           (int64_t[]){ 1 }, 0));
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
/* nd_binary_into                                                         */
/* ---------------------------------------------------------------------- */

static void binary_into_strided_dst(k_ctx *k)
{
    calls(k, K_BINARY_INTO, 1000, false, 0, INTO_HINT);
    calls(k, K_BINARY_INTO, 500, true, 0, INTO_HINT);
}

/* dst is a, b or both, for the binary forms; a for the scalar and unary
 * ones; on long rows too, for the blocked path. */
static void binary_into_aliasing(k_ctx *k)
{
    for (int rows = 0; rows < 2; rows++) {
        calls(k, K_BINARY_INTO, 500, rows, K_OUT_IS_A, ALIAS_HINT);
        calls(k, K_BINARY_INTO, 500, rows, K_OUT_IS_B, ALIAS_HINT);
        calls(k, K_BINARY_INTO, 400, rows, K_OUT_IS_A | K_B_IS_A, ALIAS_HINT);
        calls(k, K_SCALAR_INTO, 300, rows, K_OUT_IS_A, ALIAS_HINT);
        calls(k, K_UNARY_INTO, 300, rows, K_OUT_IS_A, ALIAS_HINT);
    }
}

/* Every small shape as dst: refused unless it is the result's. */
static void into_wrong_dst(k_ctx *k)
{
    static const struct { int na, nb; int64_t sa[3], sb[3]; } pairs[] = {
        { 2, 2, { 3, 1 }, { 1, 2 } }, { 0, 0, { 0 }, { 0 } },       { 1, 1, { 1 }, { 1 } },
        { 2, 1, { 2, 3 }, { 3 } },    { 2, 2, { 1, 3 }, { 0, 1 } }, { 3, 1, { 1, 1, 1 }, { 2 } },
        { 1, 3, { 3 }, { 2, 1, 1 } },
    };
    for (int i = 0; i < 7 * 85 * 3; i++) {
        int p = i / (85 * 3), dn;
        k_op op = i % 3 == 0 ? K_BINARY_INTO : i % 3 == 1 ? K_SCALAR_INTO : K_UNARY_INTO;
        int64_t ds[3];
        k_call c = k_new(k, op);
        c.code = p % nops(op);
        k_arg(&c, k_view(k, &c, pairs[p].na, pairs[p].sa, K_ANY | K_REPEAT, K_INTEGERS));
        if (op == K_BINARY_INTO)
            k_arg(&c, k_view(k, &c, pairs[p].nb, pairs[p].sb, K_ANY | K_REPEAT, K_SPECIAL));
        dn = small_shape(i / 3 % 85, ds);
        k_arg(&c, k_view(k, &c, dn, ds, K_ANY, K_NEGATIVE));
        k_check(k, &c, "dst must have exactly the result's shape (same ndim and sizes: a shape "
                "the inputs broadcast to is not enough)");
    }
}

/* ---------------------------------------------------------------------- */
/* nd_scalar, nd_unary                                                    */
/* ---------------------------------------------------------------------- */

static void scalar_random_views(k_ctx *k)
{
    calls(k, K_SCALAR, 1200, false, 0, "a OP value at every position of a, through a's offset and "
          "strides, with the same op code as the binary version");
    calls(k, K_SCALAR_INTO, 800, false, 0, INTO_HINT);
}

static void scalar_operand_order(k_ctx *k)
{
    static const float values[] = { 2.5f, -3.0f, 0.5f, 0.0f, -0.0f, 0x1p-133f, NAN, INFINITY };
    static const int64_t lengths[] = { 1, 5, 16, 17, 40, 100 };
    for (int i = 0; i < (ND_GE + 1) * 8 * 6 * 4; i++) {   /* op, value, length, form */
        bool rev = i % 2, into = i / 2 % 2;
        k_call c = k_ewise_row(k, into ? K_SCALAR_INTO : K_SCALAR, i / 192, lengths[i / 4 % 6],
                               rev ? -1 : 1, 0, rev ? 1 : -1, 0);
        c.scalar = values[i / 24 % 8];
        k_check(k, &c, "the array is the LEFT operand: a - s, a / s, a ** s, a >= s, never "
                "s OP a");
    }
}

static void unary_random_views(k_ctx *k)
{
    calls(k, K_UNARY, 1200, false, 0, "OP(a) at every position through a's offset and strides");
    calls(k, K_UNARY_INTO, 800, false, 0, INTO_HINT);
}

/* Values to try op on: the special ones, then a dense sweep of where it
 * overflows, underflows or saturates.  Returns how many. */
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

static void unary_ieee_sweep(k_ctx *k)
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
        k_check(k, &c, "use <math.h>'s float functions (logf, expf, tanhf, fabsf) and -x: they "
                "get overflow, denormal underflow, saturation, log(0) = -inf, log(<0) = NaN "
                "and the sign of zero right; formulas of your own do not");
    }
}

/* ---------------------------------------------------------------------- */
/* All of them                                                            */
/* ---------------------------------------------------------------------- */

/* out is a, b or both; and refused calls with out == a change nothing. */
static void new_out_is_input(k_ctx *k)
{
    static const int how[] = { K_OUT_IS_A, K_OUT_IS_B, K_OUT_IS_A | K_B_IS_A };
    for (int i = 0; i < 600; i++) {
        int form = i % 6;   /* 0-2 nd_binary, 3 nd_scalar, 4 nd_unary, 5 refused */
        k_op op = form == 3 ? K_SCALAR : form == 4 ? K_UNARY : K_BINARY;
        k_call c = k_ewise(k, op, i / 6 % nops(op), (int)k_int(k, 0, 6), 4, 300,
                           how[form < 3 ? form : 0]);
        int64_t last = c.args[0].ndim > 0 ? c.args[0].shape[c.args[0].ndim - 1] : 0;
        if (form == 5 && last > 1)   /* a b that does not broadcast */
            c.args[1] = k_compact(k, &c, 1, (int64_t[]){ last + 1 }, K_DISTINCT);
        else if (form == 5)
            c.code = i % 2 ? -1 : ND_GE + 1;
        k_check(k, &c, ALIAS_HINT);
    }
}

static void rows_fast_path_edges(k_ctx *k)
{
    /* lengths around the block sizes a vectorised loop uses (8 to 64
     * floats), every mix of contiguous, reversed, gapped and repeated
     * operands; dst contiguous, reversed, gapped, or a itself (step 0) */
    static const int64_t lengths[] = { 1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 48,
                                       49, 63, 64, 65, 100, 127, 128, 129, 255, 256, 257, 1001 };
    static const int64_t dst_steps[] = { 1, -1, 2, 0 }, a_steps[] = { 1, -1, 2, 0 },
                         b_steps[] = { 1, -1, 3, 0 };
    for (int i = 0; i < 27 * 64 * 4; i++) {
        int f = i / 4 % 64;
        int64_t sd = dst_steps[f / 16], sa = a_steps[f / 4 % 4];
        k_op op = (k_op[]){ K_BINARY_INTO, K_SCALAR_INTO, K_UNARY_INTO, K_BINARY }[i % 4];
        if (sd == 0 && sa == 0)
            continue;   /* dst is a: a must not repeat elements */
        k_call c = k_ewise_row(k, op, f % nops(op), lengths[i / 256], sa, b_steps[f % 4], sd,
                               sd == 0 ? K_OUT_IS_A : 0);
        k_check(k, &c, "take a blocked path only where dst, a and b are all contiguous (or b "
                "repeats one value), and finish each row's tail one element at a time");
    }
}

/* Sizes 0 and 1 only (or up to 3), 0 to 8 axes: results with no element,
 * 0-d and all-size-1 operands at offsets, junk strides, every function. */
static void empty_and_0d(k_ctx *k)
{
    for (int i = 0; i < 6 * 8 * 12; i++) {
        k_op op = (k_op)(K_BINARY + i % 6);
        k_call c = k_ewise(k, op, i / 6 % nops(op), (int)k_int(k, 0, ND_MAX_DIMS),
                           i % 4 ? 1 : 3, 400, 0);
        k_check(k, &c, "a result with no elements needs no loop; a 0-d array, or one whose axes "
                "all have size 1, has exactly one element, at its offset, which must still be "
                "computed");
    }
}

static void ewise_large(k_ctx *k)
{
    /* 2^22 elements: compact; a transposed; a reversed row broadcast; a
     * column into a transposed dst; in place; 8 reversed axes */
    int64_t sq[2] = { 2048, 2048 }, tr[2] = { 1, 2048 }, n = INT64_C(1) << 22;
    int64_t s8[8] = { 8, 8, 8, 8, 8, 8, 4, 4 };
    int64_t st8[8] = { -524288, -65536, -8192, -1024, -128, -16, -4, -1 };
    for (int i = 0; i < 6; i++) {
        k_call c = k_new(k, (k_op[]){ K_BINARY, K_BINARY, K_BINARY, K_BINARY_INTO,
                                      K_SCALAR_INTO, K_UNARY }[i]);
        c.code = (int[]){ ND_ADD, ND_DIV, ND_MAXIMUM, ND_SUB, ND_MUL, ND_TANH }[i];
        c.scalar = 0.375f;
        k_arg(&c, i == 1   ? k_strided(k, &c, n, 2, sq, tr, 0, K_INTEGERS)
                  : i == 5 ? k_strided(k, &c, n, 8, s8, st8, n - 1, K_RANDOM)
                           : k_compact(k, &c, 2, sq, K_RANDOM));
        if (i < 4)
            k_arg(&c, i == 2   ? k_strided(k, &c, 2048, 1, sq, (int64_t[]){ -1 }, 2047, K_SPECIAL)
                      : i == 3 ? k_compact(k, &c, 2, (int64_t[]){ 2048, 1 }, K_INTEGERS)
                               : k_compact(k, &c, 2, sq, K_INTEGERS));
        if (i == 3 || i == 4)
            k_arg(&c, i == 3 ? k_strided(k, &c, n, 2, sq, tr, 0, K_NEGATIVE) : c.args[0]);
        k_check(k, &c, "a loop over 2^22 elements must reach every one through the operands' "
                "own strides, and a fast path must handle the tail of each row");
    }
}

/* a OP a, one view for both; a * 1, a / 1, a - 0 and a + -0, which give a
 * back bit for bit. */
static void binary_same_input(k_ctx *k)
{
    static const struct { nd_binop op; float s; } same[] = {
        { ND_MUL, 1.0f }, { ND_DIV, 1.0f }, { ND_SUB, 0.0f }, { ND_ADD, -0.0f },
    };
    for (int i = 0; i < 300 * 2; i++) {
        k_call c = k_ewise(k, i % 2 ? K_SCALAR : K_BINARY, i / 2 % (ND_GE + 1),
                           (int)k_int(k, 0, 6), 4, 300, K_B_IS_A);
        if (i % 2) {
            c.code = same[i / 2 % 4].op;
            c.scalar = same[i / 2 % 4].s;
        }
        k_check(k, &c, "each result element is C's IEEE operation on the input elements at that "
                "position and nothing else: a - a is 0, eq(a, a) is 1 except for NaN, a * 1 "
                "is a");
    }
}

static void errors_args(k_ctx *k)
{
    static const int more[] = { 100, INT_MAX, INT_MIN };
    for (k_op op = K_BINARY; op <= K_UNARY_INTO; op++)
        k_check_ewise_refusals(k, op, 3, more);
}

/* Results too large: a and b views of one float (stride 0) whose broadcast
 * has 2^e elements over 6..8 axes of up to 2^16 each, e in 55..58 (no
 * machine allocates 2^57 bytes or more: ND_ERR_NOMEM) or, for a OP b,
 * 59..84 (no valid shape: ND_ERR_ARG; a and b each valid), for every kind
 * of call that makes a new array (issue #17). */
static void ewise_results_too_large(k_ctx *k)
{
    static const int64_t zeros[ND_MAX_DIMS] = { 0 };
    for (int i = 0; i < 60; i++) {
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
        k_call c = k_on_view(k, op, 1, nd, sa, zeros, 0);
        if (op == K_BINARY)
            k_arg(&c, k_at(0, nd, sb, zeros, 0));
        c.code = (int)k_int(k, 0, op == K_UNARY ? ND_ABS : ND_GE);
        k_expect(k, &c, e > 58 ? ND_ERR_ARG : ND_ERR_NOMEM, "check the result's shape "
                 "(nd_check_shape), and report a failed allocation in the operation's name");
    }
}

static const k_test tests[] = {
    K_TEST(binary_random_deep, K_BOTH, 5, BCAST_HINT),
    K_TEST(binary_broadcast_exhaustive, K_BOTH, 4, BCAST_HINT),
    K_TEST(binary_stretch_size1_axes, K_BOTH, 2, BCAST_HINT),
    K_TEST(binary_ieee_grid, K_BOTH, 4, OPS_HINT),
    K_TEST(binary_into_strided_dst, K_BOTH, 4, INTO_HINT),
    K_TEST(binary_into_aliasing, K_BOTH, 3, ALIAS_HINT),
    K_TEST(into_wrong_dst, K_BOTH, 3, INTO_HINT),
    K_TEST(scalar_random_views, K_BOTH, 3, INTO_HINT),
    K_TEST(scalar_operand_order, K_BOTH, 2, OPS_HINT),
    K_TEST(unary_random_views, K_BOTH, 3, INTO_HINT),
    K_TEST(unary_ieee_sweep, K_BOTH, 3, OPS_HINT),
    K_TEST(new_out_is_input, K_BOTH, 3, ALIAS_HINT),
    K_TEST(rows_fast_path_edges, K_BOTH, 2, INTO_HINT),
    K_TEST(empty_and_0d, K_BOTH, 2, BCAST_HINT),
    K_TEST(ewise_large, K_CPU, 3, INTO_HINT),
    K_TEST(binary_same_input, K_BOTH, 2, OPS_HINT),
    K_TEST(errors_args, K_BOTH, 2, "check the op (0..count-1), every array (NULL, released, "
           "ndim out of range), out and the devices before writing anything; messages start "
           "with the operation's name"),
    K_TEST(ewise_results_too_large, K_BOTH, 1, BCAST_HINT),
};
K_SUITE(hidden_03, 3, "03_ewise", tests);
