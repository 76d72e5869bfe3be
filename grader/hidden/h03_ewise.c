/*
 * h03_ewise.c -- hidden tests of lesson 3: nd_binary, nd_binary_into,
 * nd_scalar, nd_scalar_into, nd_unary and nd_unary_into, over the kit
 * (tests/kit/kit.h) with other seeds and more cases than the public tests:
 *
 *   nd_binary        2400 random calls on 0..8 axes (views permuted, stepped,
 *                    repeated, windowed, with junk size-1 strides), shapes
 *                    broadcast against each other; EVERY ordered pair of the
 *                    85 shapes of up to 3 axes with sizes 0..3, also into a
 *                    dst; size-1 axes with far-off junk strides stretched on
 *                    up to 8 axes; every pair of 35 special values (signed
 *                    zeros, denormals, FLT_MIN/MAX, +-inf, NaN) for every op,
 *                    and C11 Annex F's cases (pow, signed zeros, underflow)
 *   nd_binary_into   random strided dsts, long rows into gapped or reversed
 *                    dsts; dst == a, b or both; every dst shape of up to 3
 *                    axes and near misses refused unless it is the result's
 *   nd_scalar(_into) random calls; the array as the LEFT operand
 *   nd_unary(_into)  random calls; dense sweeps of exp (overflow, underflow
 *                    into denormals), log (every binade) and tanh
 *                    (saturation, tiny arguments); neg and abs on random bits
 *   all of them      out == an input (refused calls leave it as it was);
 *                    rows of 27 lengths around the block size with every mix
 *                    of strides 1, -1, 2/3 and 0, in place too; empty and 0-d
 *                    arrays at offsets; 2^22 elements; a OP a; every refusal
 *
 * Values are compared as the kit's reference says: + - * / neg abs eq ge
 * bit for bit, maximum exactly (either zero for maximum(-0, +0)), pow exp
 * log tanh within 4 ulp; everywhere NaN for NaN, infinities exactly and the
 * sign of a zero.  Every buffer of every call is compared afterwards.
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

/* count random calls of op, every op code in turn, as k_ewise makes them. */
static void calls(k_ctx *k, k_op op, int count, int64_t hi, int how, const char *hint)
{
    int nops = op == K_UNARY || op == K_UNARY_INTO ? ND_ABS + 1 : ND_GE + 1;
    for (int i = 0; i < count; i++) {
        k_call c = k_ewise(k, op, i % nops, (int)k_int(k, 0, ND_MAX_DIMS), hi, 400, how);
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
    calls(k, K_BINARY, 2400, 4, 0, BCAST_HINT);
}

static void binary_broadcast_exhaustive(k_ctx *k)
{
    for (int i = 0; i < 85 * 85 * 2; i++) {
        k_call c = k_new(k, i % 2 ? K_BINARY_INTO : K_BINARY);
        c.code = i / 2 % (ND_GE + 1);
        int64_t sa[3], sb[3], rs[ND_MAX_DIMS];
        int na = small_shape(i / 2 / 85, sa), nb = small_shape(i / 2 % 85, sb), rn;
        k_arg(&c, k_view(k, &c, na, sa, K_ANY | K_REPEAT, K_INTEGERS));
        k_arg(&c, k_view(k, &c, nb, sb, K_ANY | K_REPEAT, K_SPECIAL));
        if (i % 2 && !k_broadcast_shape(na, sa, nb, sb, &rn, rs))   /* refused: a dst of a's */
            k_arg(&c, k_view(k, &c, na, sa, K_ANY, K_NEGATIVE));
        else if (i % 2)
            k_arg(&c, k_view(k, &c, rn, rs, K_ANY, K_NEGATIVE));
        k_check(k, &c, "compare the shapes from the RIGHT: equal sizes, or one of them 1 (the "
                "result takes the other, 0 included); a missing axis counts as 1; otherwise "
                "ND_ERR_SHAPE naming both shapes, before anything is written");
    }
}

static void binary_stretch_size1_axes(k_ctx *k)
{
    for (int i = 0; i < 800; i++) {
        int64_t shape[ND_MAX_DIMS], s[2][ND_MAX_DIMS];
        int nd = k_shape(k, (int)k_int(k, 1, ND_MAX_DIMS), 1, 4, 500, shape);
        if (i % 10 == 0)
            shape[k_int(k, 0, nd - 1)] = 0;
        for (int d = 0; d < nd; d++) {   /* a keeps some axes, b the others, or both */
            bool in_a = k_one_in(k, 2);
            s[0][d] = in_a ? shape[d] : 1;
            s[1][d] = !in_a || k_one_in(k, 4) ? shape[d] : 1;
        }
        k_call c = k_new(k, i % 3 ? K_BINARY : K_BINARY_INTO);
        c.code = i % (ND_GE + 1);
        for (int w = 0; w < 2; w++) {
            int drop = 0;   /* leading size-1 axes may be missing instead */
            while (drop < nd && s[w][drop] == 1 && k_one_in(k, 2))
                drop++;
            k_arg(&c, k_view(k, &c, nd - drop, s[w] + drop, K_WINDOW | K_JUNK, K_RANDOM));
        }
        if (i % 3 == 0)
            k_arg(&c, k_view(k, &c, nd, shape, K_ANY, K_NEGATIVE));
        k_check(k, &c, "a stretched axis (size 1 against a longer one, or missing) gets stride "
                "0: its old stride is junk and must never be multiplied by an index");
    }
}

/* Special values, and pairs of them whose results IEEE 754 and C11 Annex F
 * fix: signed zeros, gradual underflow, pow's special cases. */
static const float GRID[35] = {
    0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -0.5f, 2.0f, -2.0f, 3.0f, -3.0f, 2.5f, -2.5f, 1.0f / 3,
    10.0f, -10.0f, 127.0f, 128.0f, -149.0f, 1e20f, -1e20f, FLT_MAX, -FLT_MAX, FLT_MIN,
    -FLT_MIN, 0x1p-133f, -0x1p-133f, 0x1p-149f, -0x1p-149f, INFINITY, -INFINITY, NAN,
    0x1.000002p0f, 0x1.fffffep-1f, 24.5f, -0.75f,
};
static const struct { nd_binop op; float x, y; } ANNEX[] = {
    { ND_ADD, -0.0f, -0.0f }, { ND_ADD, 0.0f, -0.0f }, { ND_ADD, -3.0f, 3.0f },
    { ND_SUB, -0.0f, 0.0f }, { ND_SUB, -0.0f, -0.0f }, { ND_MUL, 0.0f, -1.0f },
    { ND_MUL, -0.0f, INFINITY }, { ND_MUL, -FLT_MIN, FLT_MIN }, { ND_DIV, 0.0f, -5.0f },
    { ND_DIV, -0.0f, INFINITY }, { ND_DIV, -1.0f, -0.0f }, { ND_DIV, -0.0f, -0.0f },
    { ND_DIV, 1.0f, -INFINITY }, { ND_DIV, -INFINITY, 0.0f }, { ND_ADD, 0x1p-149f, 0x1p-149f },
    { ND_SUB, FLT_MIN, 0x1p-149f }, { ND_MUL, FLT_MIN, 0.5f }, { ND_DIV, FLT_MIN, 4.0f },
    { ND_DIV, 0x1p-149f, 2.0f }, { ND_DIV, 0x3p-149f, 2.0f }, { ND_MUL, 0x1p-149f, 0x1p23f },
    { ND_POW, -0.0f, -3.0f }, { ND_POW, 0.0f, -3.0f }, { ND_POW, -0.0f, -2.0f },
    { ND_POW, -0.0f, -0.5f }, { ND_POW, -0.0f, -INFINITY }, { ND_POW, -0.0f, 3.0f },
    { ND_POW, -0.0f, 0.5f }, { ND_POW, -1.0f, INFINITY }, { ND_POW, -1.0f, -INFINITY },
    { ND_POW, 1.0f, NAN }, { ND_POW, NAN, -0.0f }, { ND_POW, INFINITY, -0.0f },
    { ND_POW, -2.0f, 0.5f }, { ND_POW, 0.5f, -INFINITY }, { ND_POW, -0.5f, INFINITY },
    { ND_POW, -2.0f, INFINITY }, { ND_POW, -INFINITY, -3.0f }, { ND_POW, -INFINITY, -2.0f },
    { ND_POW, -INFINITY, 3.0f }, { ND_POW, -INFINITY, 0.5f }, { ND_POW, INFINITY, -1.0f },
    { ND_POW, -2.0f, -3.0f }, { ND_POW, -2.0f, 129.0f }, { ND_POW, 2.0f, -149.0f },
    { ND_POW, -2.0f, -149.0f }, { ND_POW, -2.0f, -151.0f }, { ND_POW, 0x1p-149f, 2.0f },
    { ND_MAXIMUM, -INFINITY, NAN }, { ND_MAXIMUM, 0x1p-149f, 0.0f },
    { ND_MAXIMUM, -FLT_MAX, -INFINITY }, { ND_EQ, -0.0f, 0.0f }, { ND_EQ, 0x1p-149f, 0.0f },
    { ND_EQ, 1.0f, 0x1.000002p0f }, { ND_GE, 0.0f, -0.0f }, { ND_GE, NAN, NAN },
    { ND_GE, 0.0f, 0x1p-149f }, { ND_GE, 0x1.fffffep-1f, 1.0f },
};

static void binary_ieee_grid(k_ctx *k)
{
    /* a: GRID as a (35,1) column at offset 1 whose size-1 axis has a junk
     * stride; b: GRID as a (35,) row walked backwards; dst a transpose */
    float va[38] = { 7, [36] = 7, 7 }, vb[37] = { 7, [36] = 7 };
    for (int i = 0; i < 35; i++)
        va[1 + i] = vb[35 - i] = GRID[i];
    for (int i = 0; i < (ND_GE + 1) * 37; i++) {
        int form = i % 37;   /* 0: nd_binary, 1: nd_binary_into, 2..36: nd_scalar */
        k_call c = k_new(k, form == 0 ? K_BINARY : form == 1 ? K_BINARY_INTO : K_SCALAR);
        c.code = i / 37;
        c.scalar = form >= 2 ? GRID[form - 2] : 0;
        if (form < 2) {
            k_arg(&c, k_at(k_buffer_of(k, &c, 38, va), 2, (int64_t[]){ 35, 1 },
                           (int64_t[]){ 1, 5 }, 1));
            k_arg(&c, k_at(k_buffer_of(k, &c, 37, vb), 1, (int64_t[]){ 35 },
                           (int64_t[]){ -1 }, 35));
        } else {
            k_arg(&c, k_at(k_buffer_of(k, &c, 35, GRID), 1, (int64_t[]){ 35 },
                           (int64_t[]){ 1 }, 0));
        }
        if (form == 1)
            k_arg(&c, k_strided(k, &c, 35 * 35 + 5, 2, (int64_t[]){ 35, 35 },
                                (int64_t[]){ 1, 35 }, 3, K_NEGATIVE));
        k_check(k, &c, OPS_HINT);
    }
    /* the table, through nd_binary (x 0-d at offset 3, y (1,)), nd_scalar
     * and nd_scalar_into (into a 0-d dst at offset 1) */
    for (size_t i = 0; i < 3 * sizeof ANNEX / sizeof ANNEX[0]; i++) {
        k_op op = i % 3 == 0 ? K_BINARY : i % 3 == 1 ? K_SCALAR : K_SCALAR_INTO;
        k_call c = k_new(k, op);
        c.code = ANNEX[i / 3].op;
        c.scalar = ANNEX[i / 3].y;
        float xb[4] = { 5, 5, 5, ANNEX[i / 3].x };
        k_arg(&c, k_at(k_buffer_of(k, &c, 4, xb), 0, NULL, NULL, 3));
        if (op == K_BINARY)
            k_arg(&c, k_at(k_buffer_of(k, &c, 1, &c.scalar), 1, (int64_t[]){ 1 },
                           (int64_t[]){ 1 }, 0));
        if (op == K_SCALAR_INTO)
            k_arg(&c, k_strided(k, &c, 3, 0, NULL, NULL, 1, K_NEGATIVE));
        k_check(k, &c, OPS_HINT);
    }
}

/* ---------------------------------------------------------------------- */
/* nd_binary_into                                                         */
/* ---------------------------------------------------------------------- */

static void binary_into_strided_dst(k_ctx *k)
{
    calls(k, K_BINARY_INTO, 1100, 4, 0, INTO_HINT);
    /* long rows: a compact, b compact or a column, dst gapped or reversed */
    for (int i = 0; i < 400; i++) {
        int64_t shape[3], sb[3];
        int nd = k_shape(k, (int)k_int(k, 1, 3), 1, 3, 9, shape);
        shape[nd - 1] = k_int(k, 16, 70);
        memcpy(sb, shape, sizeof sb);
        sb[nd - 1] = k_one_in(k, 2) ? 1 : sb[nd - 1];
        k_call c = k_new(k, K_BINARY_INTO);
        c.code = i % (ND_GE + 1);
        k_arg(&c, k_compact(k, &c, nd, shape, K_INTEGERS));
        k_arg(&c, k_compact(k, &c, nd, sb, K_SPECIAL));
        k_arg(&c, k_view(k, &c, nd, shape, K_STEPS, K_NEGATIVE));
        k_check(k, &c, INTO_HINT);
    }
}

static void binary_into_aliasing(k_ctx *k)
{
    static const int how[] = { K_OUT_IS_A, K_OUT_IS_B, K_OUT_IS_A | K_B_IS_A };
    for (int i = 0; i < 700 * 5; i++) {
        k_op op = i % 5 < 3 ? K_BINARY_INTO : i % 5 == 3 ? K_SCALAR_INTO : K_UNARY_INTO;
        int nops = op == K_UNARY_INTO ? ND_ABS + 1 : ND_GE + 1;
        bool rows = i % 3 == 0;   /* long rows: the blocked path, in place */
        k_call c = k_ewise(k, op, i / 5 % nops, (int)k_int(k, rows ? 1 : 0, rows ? 3 : 8),
                           rows ? 80 : 4, 300, how[i % 5 < 3 ? i % 5 : 0]);
        k_check(k, &c, "dst may be a or b itself (or both): read each element before writing "
                "it, write each position once, and never stage dst's old values anywhere");
    }
}

static void into_wrong_dst(k_ctx *k)
{
    static const struct { int na, nb; int64_t sa[3], sb[3]; } pairs[] = {
        { 2, 2, { 3, 1 }, { 1, 2 } }, { 0, 0, { 0 }, { 0 } },       { 1, 1, { 1 }, { 1 } },
        { 2, 1, { 2, 3 }, { 3 } },    { 2, 2, { 1, 3 }, { 0, 1 } }, { 3, 1, { 1, 1, 1 }, { 2 } },
        { 1, 3, { 3 }, { 2, 1, 1 } },
    };
    for (int i = 0; i < 7 * 88 * 3; i++) {
        int p = i / (88 * 3), d = i / 3 % 88, rn, dn;
        k_op op = i % 3 == 0 ? K_BINARY_INTO : i % 3 == 1 ? K_SCALAR_INTO : K_UNARY_INTO;
        int64_t rs[ND_MAX_DIMS + 1], ds[ND_MAX_DIMS + 1];
        k_call c = k_new(k, op);
        c.code = p % (op == K_UNARY_INTO ? ND_ABS + 1 : ND_GE + 1);
        k_arg(&c, k_view(k, &c, pairs[p].na, pairs[p].sa, K_ANY | K_REPEAT, K_INTEGERS));
        if (op == K_BINARY_INTO) {
            k_arg(&c, k_view(k, &c, pairs[p].nb, pairs[p].sb, K_ANY | K_REPEAT, K_SPECIAL));
            k_broadcast_shape(pairs[p].na, pairs[p].sa, pairs[p].nb, pairs[p].sb, &rn, rs);
        } else {
            rn = pairs[p].na;
            memcpy(rs, pairs[p].sa, sizeof pairs[p].sa);
        }
        /* every small shape, then near misses: the result's with a 1 before
         * or after, and flattened */
        if (d < 85) {
            dn = small_shape(d, ds);
        } else if (d < 87) {
            memcpy(ds + (d == 85), rs, sizeof rs - sizeof *rs);
            ds[d == 85 ? 0 : rn] = 1;
            dn = rn + 1;
        } else {
            ds[0] = k_numel(rn, rs);
            dn = 1;
        }
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
    calls(k, K_SCALAR, 1200, 4, 0, "a OP value at every position of a, through a's offset "
          "and strides, with the same op code as the binary version");
    calls(k, K_SCALAR_INTO, 800, 4, 0, INTO_HINT);
}

static void scalar_operand_order(k_ctx *k)
{
    static const float values[] = { 2.5f, -3.0f, 0.5f, 0.0f, -0.0f, 0x1p-133f, NAN, INFINITY };
    static const int64_t lengths[] = { 1, 5, 16, 17, 40, 100 };
    for (int i = 0; i < (ND_GE + 1) * 8 * 6 * 4; i++) {
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
    calls(k, K_UNARY, 1200, 4, 0, "OP(a) at every position through a's offset and strides");
    calls(k, K_UNARY_INTO, 800, 4, 0, INTO_HINT);
}

/* Values to try op on: its special cases, then a dense sweep. */
static int64_t sweep(k_ctx *k, int op, float *v)
{
    static const float cases[] = { 88.72283172607421875f, 88.7229f, -87.33654f, -103.972084f,
                                   -104, 89, 1000, -1000, -110, 20, -20, 100, 0x1p-130f,
                                   -0x1p-130f, 0x1.000002p0f, 0x1.fffffep-1f };
    int64_t m = 0;
    memcpy(v, k_specials, sizeof k_specials);
    memcpy(v + K_NSPECIAL, cases, sizeof cases);
    m = K_NSPECIAL + sizeof cases / sizeof cases[0];
    for (int i = 0; i < 4096; i++) {
        uint32_t bits = (uint32_t)k_next(k);
        float t = (float)i / 4096;
        switch (op) {
        case ND_EXP: v[m++] = -110 + 205 * t; break;   /* underflow into denormals, overflow */
        case ND_TANH: v[m++] = -12 + 24 * t; break;    /* saturation near +-9 */
        case ND_LOG: v[m++] = ldexpf(1 + (float)(i % 16) / 16, i / 16 - 149); break;  /* binades */
        default: memcpy(&v[m++], &bits, sizeof bits);   /* neg, abs: any bits */
        }
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
    for (int i = 0; i < 2 * (ND_ABS + 1); i++) {
        int64_t m = sweep(k, i / 2, v);
        k_call c = k_new(k, i % 2 ? K_UNARY_INTO : K_UNARY);
        c.code = i / 2;
        /* forwards into a new array; backwards into a dst with gaps */
        k_arg(&c, k_at(k_buffer_of(k, &c, m, v), 1, &m, (int64_t[]){ i % 2 ? -1 : 1 },
                       i % 2 ? m - 1 : 0));
        if (i % 2)
            k_arg(&c, k_strided(k, &c, 2 * m + 1, 1, &m, (int64_t[]){ 2 }, 1, K_NEGATIVE));
        k_check(k, &c, "use <math.h>'s float functions (logf, expf, tanhf, fabsf) and -x: they "
                "get overflow, denormal underflow, saturation, log(0) = -inf, log(<0) = NaN "
                "and the sign of zero right; formulas of your own do not");
    }
}

/* ---------------------------------------------------------------------- */
/* All of them                                                            */
/* ---------------------------------------------------------------------- */

static void new_out_is_input(k_ctx *k)
{
    static const int how[] = { K_OUT_IS_A, K_OUT_IS_B, K_OUT_IS_A | K_B_IS_A };
    for (int i = 0; i < 600; i++) {
        int form = i % 6;   /* 0-2 nd_binary, 3 nd_scalar, 4 nd_unary; 5 refused */
        k_op op = form == 3 ? K_SCALAR : form == 4 ? K_UNARY : K_BINARY;
        k_call c = k_ewise(k, op, i / 6 % (form == 4 ? ND_ABS + 1 : ND_GE + 1),
                           (int)k_int(k, 0, 6), 4, 300, how[form < 3 ? form : 0]);
        if (form == 5 && c.args[0].ndim > 0 && c.args[0].shape[c.args[0].ndim - 1] > 1)
            c.args[1] = k_compact(k, &c, 1, (int64_t[]){ c.args[0].shape[c.args[0].ndim - 1] + 1 },
                                  K_DISTINCT);   /* does not broadcast */
        else if (form == 5)
            c.code = i % 2 ? -1 : ND_GE + 1;
        k_check(k, &c, "out may be a or b: compute into a new array first, then release out's "
                "old reference exactly once and store the result; on an error leave out as it "
                "was");
    }
}

static void rows_fast_path_edges(k_ctx *k)
{
    /* lengths around the block sizes a vectorised loop uses (8 to 64
     * floats), every mix of contiguous, reversed, gapped and repeated
     * operands; dst contiguous, reversed, gapped, or a itself */
    static const int64_t lengths[] = { 1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 48,
                                       49, 63, 64, 65, 100, 127, 128, 129, 255, 256, 257, 1001 };
    static const int64_t dst_steps[] = { 1, -1, 2, 0 }, a_steps[] = { 1, -1, 2, 0 },
                         b_steps[] = { 1, -1, 3, 0 };
    for (int i = 0; i < 27 * 64 * 4; i++) {
        int f = i / 4 % 64, form = i % 4, sd = (int)dst_steps[f / 16];
        k_op op = form == 0 ? K_BINARY_INTO : form == 1 ? K_SCALAR_INTO
                : form == 2 ? K_UNARY_INTO : K_BINARY;
        if (sd == 0 && a_steps[f / 4 % 4] == 0)
            continue;   /* dst is a: a must not repeat elements */
        k_call c = k_ewise_row(k, op, f % (op == K_UNARY_INTO ? ND_ABS + 1 : ND_GE + 1),
                               lengths[i / 256], a_steps[f / 4 % 4], b_steps[f % 4], sd,
                               sd == 0 ? K_OUT_IS_A : 0);
        k_check(k, &c, "take a blocked path only where dst, a and b are all contiguous (or b "
                "repeats one value), and finish each row's tail one element at a time");
    }
}

static void empty_and_0d(k_ctx *k)
{
    /* results with no element, and 0-d or all-size-1 operands at offsets,
     * their strides junk */
    static const struct { int na, nb; int64_t sa[ND_MAX_DIMS], sb[ND_MAX_DIMS]; } cases[] = {
        { 1, 1, { 0 }, { 1 } },       { 2, 2, { 2, 0 }, { 1, 1 } }, { 2, 2, { 1, 0 }, { 5, 1 } },
        { 2, 1, { 0, 3 }, { 3 } },    { 3, 1, { 3, 0, 1 }, { 4 } }, { 1, 0, { 0 }, { 0 } },
        { 8, 3, { 2, 1, 2, 1, 2, 1, 0, 1 }, { 3, 1, 1 } },          { 0, 4, { 0 }, { 1, 0, 1, 1 } },
        { 0, 0, { 0 }, { 0 } },       { 0, 8, { 0 }, { 1, 1, 1, 1, 1, 1, 1, 1 } },
        { 8, 0, { 1, 1, 1, 1, 1, 1, 1, 1 }, { 0 } }, { 1, 0, { 3 }, { 0 } },
        { 0, 1, { 0 }, { 3 } },       { 8, 8, { 1, 1, 1, 1, 1, 1, 1, 1 }, { 1, 1, 1, 1, 1, 1, 1, 1 } },
    };
    for (int i = 0; i < 14 * 6 * (ND_GE + 1); i++) {
        int e = i / 6 / (ND_GE + 1);
        k_op op = (k_op)(K_BINARY + i % 6);
        k_call c = k_new(k, op);
        c.code = i / 6 % (op >= K_UNARY ? ND_ABS + 1 : ND_GE + 1);
        c.scalar = -0.5f;
        for (int w = 0; w < (op <= K_BINARY_INTO ? 2 : 1); w++) {
            k_arr a = k_view(k, &c, w ? cases[e].nb : cases[e].na, w ? cases[e].sb : cases[e].sa,
                             K_WINDOW | K_JUNK, K_RANDOM);
            for (int d = 0; d < a.ndim && k_numel(a.ndim, a.shape) == 0; d++)
                a.strides[d] = k_int(k, -40, 40);
            k_arg(&c, a);
        }
        if (op == K_BINARY_INTO || op == K_SCALAR_INTO || op == K_UNARY_INTO) {
            int64_t rs[ND_MAX_DIMS];
            int rn = cases[e].na;
            memcpy(rs, cases[e].sa, sizeof rs);
            if (op == K_BINARY_INTO)
                k_broadcast_shape(cases[e].na, cases[e].sa, cases[e].nb, cases[e].sb, &rn, rs);
            k_arg(&c, k_view(k, &c, rn, rs, K_WINDOW | K_JUNK, K_NEGATIVE));
        }
        k_check(k, &c, "a result with no elements needs no loop; a 0-d array, or one whose axes "
                "all have size 1, has exactly one element, at its offset, which must still be "
                "computed");
    }
}

static void ewise_large(k_ctx *k)
{
    /* 2^22 elements: compact, transposed, a reversed row broadcast, a
     * transposed dst, in place, 8 reversed axes */
    int64_t sq[2] = { 2048, 2048 }, tr[2] = { 1, 2048 }, n = INT64_C(1) << 22;
    int64_t s8[8] = { 8, 8, 8, 8, 8, 8, 4, 4 };
    int64_t st8[8] = { -524288, -65536, -8192, -1024, -128, -16, -4, -1 };
    for (int i = 0; i < 7; i++) {
        static const k_op ops[] = { K_BINARY, K_BINARY, K_BINARY, K_BINARY_INTO, K_SCALAR_INTO,
                                    K_UNARY, K_UNARY_INTO };
        static const int codes[] = { ND_ADD, ND_DIV, ND_MAXIMUM, ND_SUB, ND_MUL, ND_TANH, ND_NEG };
        k_call c = k_new(k, ops[i]);
        c.code = codes[i];
        c.scalar = 0.375f;
        if (i == 1 || i == 6)
            k_arg(&c, k_strided(k, &c, n, 2, sq, tr, 0, K_INTEGERS));
        else if (i == 5)
            k_arg(&c, k_strided(k, &c, n, 8, s8, st8, n - 1, K_RANDOM));
        else
            k_arg(&c, k_compact(k, &c, 2, sq, K_RANDOM));
        if (i < 3)
            k_arg(&c, i == 2 ? k_strided(k, &c, 2048, 1, sq, (int64_t[]){ -1 }, 2047, K_SPECIAL)
                             : k_compact(k, &c, 2, sq, K_INTEGERS));
        if (i == 3) {
            k_arg(&c, k_compact(k, &c, 2, (int64_t[]){ 2048, 1 }, K_INTEGERS));
            k_arg(&c, k_strided(k, &c, n, 2, sq, tr, 0, K_NEGATIVE));
        }
        if (i == 4 || i == 6)
            k_arg(&c, i == 4 ? c.args[0] : k_compact(k, &c, 2, sq, K_NEGATIVE));
        k_check(k, &c, "a loop over 2^22 elements must reach every one through the operands' "
                "own strides, and a fast path must handle the tail of each row");
    }
}

static void binary_same_input(k_ctx *k)
{
    /* a OP a, one view for both; then a * 1, a / 1, a - 0 and a + -0, which
     * give a back bit for bit */
    static const struct { nd_binop op; float s; } same[] = {
        { ND_MUL, 1.0f }, { ND_DIV, 1.0f }, { ND_SUB, 0.0f }, { ND_ADD, -0.0f },
    };
    for (int i = 0; i < 300 * 2; i++) {
        k_call c = k_ewise(k, i % 2 ? K_SCALAR : K_BINARY, i / 2 % (ND_GE + 1),
                           (int)k_int(k, 0, 6), 4, 300, K_B_IS_A);
        c.code = i % 2 ? (int)same[i / 2 % 4].op : c.code;
        c.scalar = same[i / 2 % 4].s;
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

static const k_test tests[] = {
    K_TEST(binary_random_deep, K_BOTH, 5, "broadcast a and b to the result's shape as views "
           "(no copies), then one loop over the result's positions reading each input through "
           "its own offset and signed strides; up to 8 axes, any of them size 0 or 1"),
    K_TEST(binary_broadcast_exhaustive, K_BOTH, 4, BCAST_HINT),
    K_TEST(binary_stretch_size1_axes, K_BOTH, 2, BCAST_HINT),
    K_TEST(binary_ieee_grid, K_BOTH, 4, OPS_HINT),
    K_TEST(binary_into_strided_dst, K_BOTH, 4, INTO_HINT),
    K_TEST(binary_into_aliasing, K_BOTH, 3, INTO_HINT),
    K_TEST(into_wrong_dst, K_BOTH, 3, "check dst's shape against the result's, with a message "
           "naming both shapes, BEFORE writing anything"),
    K_TEST(scalar_random_views, K_BOTH, 3, INTO_HINT),
    K_TEST(scalar_operand_order, K_BOTH, 2, "the array is the LEFT operand"),
    K_TEST(unary_random_views, K_BOTH, 3, INTO_HINT),
    K_TEST(unary_ieee_sweep, K_BOTH, 3, "use <math.h>'s float functions"),
    K_TEST(new_out_is_input, K_BOTH, 3, "out may be a or b"),
    K_TEST(rows_fast_path_edges, K_BOTH, 2, INTO_HINT),
    K_TEST(empty_and_0d, K_BOTH, 2, "empty results and 0-d arrays"),
    K_TEST(ewise_large, K_CPU, 3, "2^22 elements: int64_t offsets, one pass, every row's tail"),
    K_TEST(binary_same_input, K_BOTH, 2, OPS_HINT),
    K_TEST(errors_args, K_BOTH, 2, "check the op (0..count-1), every array (NULL, released, "
           "ndim out of range), out, and the devices before writing anything; messages name "
           "the operation"),
};
K_SUITE(hidden_03, 3, "03_ewise", tests);
