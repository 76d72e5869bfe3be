/*
 * h02_compact.c -- hidden tests of lesson 2: the odometer, nd_simplify_dims,
 * nd_compact (a strided gather) and nd_setitem / nd_setitem_scalar (a
 * strided scatter), over the kit (tests/kit/kit.h) with other seeds and
 * more cases than the public tests:
 *
 *   nd_iter            every 4-axis shape of sizes 1..3, random shapes up to
 *                      8 axes with zeros, totals past 2^32 (int64 counts);
 *                      the shape array reused by the caller after init; an
 *                      iterator re-initialised; errors on every axis
 *   nd_simplify_dims   10000 random layouts of up to 8 axes, one or two
 *                      operands, against THE simplified layout (the rule has
 *                      one answer); layouts where only one operand allows a
 *                      merge; lists of exactly ndim entries (a read past
 *                      them is a sanitizer report)
 *   nd_compact         5000 random views of up to 8 axes; compact windows at
 *                      an offset; reversed layouts that look contiguous;
 *                      2^22-element transposes and 8-D views; out == a
 *   nd_setitem         5000 random dst views and broadcast src views; extra
 *                      leading size-1 axes of src; every pair of small shapes
 *                      against NumPy's rule; setitem(v, v) and disjoint
 *                      views of one buffer; 2^22 elements
 *   nd_setitem_scalar  random views with special values (NaN, inf, -0,
 *                      denormals)
 *
 * Every write is checked on the WHOLE buffer under dst (the kit compares
 * every buffer of a call), and every output on failure.
 */
#include "kit.h"

#define COMPACT_HINT "walk a's positions in row-major order and read data[offset + " \
    "sum(index[k]*strides[k])]: strides may be negative or 0 and the offset need not be 0"
#define SETITEM_HINT "write through dst's offset and signed strides, to dst's elements " \
    "and no others; read src through its own offset and strides, a broadcast axis at 0"

/* ---------------------------------------------------------------------- */
/* nd_iter                                                                */
/* ---------------------------------------------------------------------- */

static void walk(k_ctx *k, int ndim, const int64_t *shape, bool reuse, bool reinit)
{
    k_call c = k_new(k, K_ITER);
    k_list(&c, 0, ndim, shape);
    c.at[1] = reuse;
    if (reinit) {
        c.at[2] = 3;
        k_list(&c, 1, 3, (int64_t[]){ 4, 3, 2 });
    }
    k_check(k, &c, NULL);
}

static void iter_order_8d(k_ctx *k)
{
    int64_t shape[ND_MAX_DIMS];
    for (int i = 0; i < 81; i++) {
        for (int d = 0, j = i; d < 4; d++, j /= 3)
            shape[d] = 1 + j % 3;
        walk(k, 4, shape, i % 2, i % 4 == 1);
    }
    for (int i = 0; i < 400; i++) {
        int nd = k_shape(k, (int)k_int(k, 0, ND_MAX_DIMS), i % 6 == 0 ? 0 : 1, 4, 5000, shape);
        walk(k, nd, shape, k_one_in(k, 2), k_one_in(k, 4));
    }
}

static void iter_stops_and_empty(k_ctx *k)
{
    walk(k, 0, NULL, false, false);
    for (int d = 0; d < ND_MAX_DIMS; d++) {
        int64_t shape[ND_MAX_DIMS] = { 2, 2, 2, 2, 2, 2, 2, 2 };
        shape[d] = 0;
        walk(k, d + 1, shape, false, d % 2);
    }
    /* totals past 2^31 and 2^32: the first positions and the counts */
    walk(k, 2, (int64_t[]){ 65536, 65537 }, false, false);
    walk(k, 3, (int64_t[]){ 3, (int64_t)1 << 31, 1 }, true, false);
}

static void iter_errors(k_ctx *k)
{
    walk(k, 2, (int64_t[]){ 2, 3 }, false, false);
    for (int d = 0; d < ND_MAX_DIMS + 3; d++) {
        k_call c = k_new(k, K_ITER);
        int64_t shape[K_LIST] = { 2, 2, 2, 2, 2, 2, 2, 2, 2 };
        if (d < ND_MAX_DIMS) {
            shape[d] = -1 - d;
            k_list(&c, 0, d + 1, shape);
        } else {
            k_list(&c, 0, d == ND_MAX_DIMS ? ND_MAX_DIMS + 1 : -1, shape);
            c.list_null[0] = d == ND_MAX_DIMS + 2;
            if (c.list_null[0])
                c.n = 3;
        }
        k_expect(k, &c, ND_ERR_ARG, NULL);
    }
    k_call c = k_new(k, K_ITER);
    k_list(&c, 0, 1, (int64_t[]){ 4 });
    c.out = K_OUT_NULL;
    k_expect(k, &c, ND_ERR_ARG, NULL);
}

/* ---------------------------------------------------------------------- */
/* nd_simplify_dims                                                       */
/* ---------------------------------------------------------------------- */

static void simplify(k_ctx *k, int nd, const int64_t *shape, const int64_t *sa,
                     const int64_t *sb)
{
    k_call c = k_new(k, K_SIMPLIFY_DIMS);
    k_list(&c, 0, nd, shape);
    k_list(&c, 1, nd, sa);
    if (sb != NULL)
        k_list(&c, 2, nd, sb);
    c.list_null[2] = sb == NULL;
    k_check(k, &c, NULL);
}

static void simplify_exact(k_ctx *k)
{
    for (int i = 0; i < 10000; i++) {
        int64_t shape[ND_MAX_DIMS], sa[ND_MAX_DIMS], sb[ND_MAX_DIMS];
        int nd = k_shape(k, (int)k_int(k, 0, ND_MAX_DIMS), i % 10 == 0 ? 0 : 1, 6, 100000,
                         shape);
        k_strides(k, nd, shape, sa);
        k_strides(k, nd, shape, sb);
        simplify(k, nd, shape, sa, i % 2 ? sb : NULL);
    }
}

static void simplify_one_operand_allows(k_ctx *k)
{
    for (int i = 0; i < 500; i++) {
        int64_t shape[ND_MAX_DIMS], sa[ND_MAX_DIMS], sb[ND_MAX_DIMS];
        int nd = k_shape(k, (int)k_int(k, 2, ND_MAX_DIMS), 2, 5, 100000, shape);
        for (int d = nd - 1, s = 1; d >= 0; d--) {   /* both compact... */
            sa[d] = sb[d] = s;
            s *= (int)shape[d];
        }
        int d = (int)k_int(k, 0, nd - 2);           /* ...but one pair broken in one */
        int64_t *broken = i % 2 ? sa : sb;
        broken[d] += k_int(k, 1, 3) * broken[d + 1];
        for (int e = d - 1; e >= 0; e--)
            broken[e] = broken[e + 1] * shape[e + 1];
        simplify(k, nd, shape, sa, sb);
    }
}

static void simplify_errors(k_ctx *k)
{
    int64_t shape[K_LIST] = { 3, 4, 1, 1, 1, 1, 1, 1, 1 }, sa[K_LIST] = { 4, 1, 1, 1, 1, 1, 1, 1, 1 };
    simplify(k, 2, shape, sa, sa);
    for (int i = 0; i < 7; i++) {
        k_call c = k_new(k, K_SIMPLIFY_DIMS);
        k_list(&c, 0, 2, shape);
        k_list(&c, 1, K_LIST, sa);
        k_list(&c, 2, K_LIST, sa);
        c.n = i == 2 ? ND_MAX_DIMS + 1 : i == 3 ? -1 : 2;
        c.list_null[0] = i == 0;
        c.list_null[1] = i == 1;
        c.list_null[2] = i % 2 == 0;
        c.list[0][i == 6 ? 0 : 1] = i >= 4 ? -4 : 4;
        if (i == 5)
            c.out = K_OUT_NULL;
        k_expect(k, &c, ND_ERR_ARG, NULL);
    }
}

/* ---------------------------------------------------------------------- */
/* nd_compact                                                             */
/* ---------------------------------------------------------------------- */

/* version: 0 nd_compact, 1 nd_compact_version(a, 1, ...), the student's
 * gather_cpu alone (nd_compact gives transposed planes to the given fast
 * path) */
static void compact_of(k_ctx *k, int nd, const int64_t *shape, int how, k_fill fill, int out,
                       int version)
{
    k_call c = k_new(k, K_COMPACT);
    c.code = version;
    k_arg(&c, k_view(k, &c, nd, shape, how, fill));
    c.out = out;
    k_check(k, &c, NULL);
}

static void compact_random_8d(k_ctx *k)
{
    for (int i = 0; i < 5000; i++) {
        int64_t shape[ND_MAX_DIMS];
        int nd = k_shape(k, i % (ND_MAX_DIMS + 1), i % 7 == 0 ? 0 : 1, 5, 600, shape);
        compact_of(k, nd, shape, K_ANY | (i % 3 ? K_REPEAT : 0), i % 5 ? K_DISTINCT : K_SPECIAL,
                   K_OUT_NEW, i % 2);
    }
}

static void compact_offset_windows(k_ctx *k)
{
    for (int i = 0; i < 400; i++) {
        int64_t shape[ND_MAX_DIMS], n;
        int nd = k_shape(k, (int)k_int(k, 1, 5), 1, 9, 3000, shape);
        k_call c = k_new(k, K_COMPACT);
        n = k_numel(nd, shape);
        int64_t before = k_int(k, 1, 100), st[ND_MAX_DIMS];
        for (int d = nd - 1, s = 1; d >= 0; s *= (int)shape[d--])
            st[d] = s;
        k_arg(&c, k_strided(k, &c, before + n + k_int(k, 0, 100), nd, shape, st, before,
                            K_DISTINCT));
        k_check(k, &c, "a compact view may start anywhere in its buffer: copy from data + "
                "offset, not from the buffer's start");
    }
}

static void compact_negative_strides(k_ctx *k)
{
    for (int i = 0; i < 400; i++) {
        int64_t shape[ND_MAX_DIMS], st[ND_MAX_DIMS], off = 0;
        int nd = k_shape(k, (int)k_int(k, 1, 6), 1, 8, 3000, shape);
        /* every axis reversed, or only some: looks contiguous, walks back */
        for (int d = nd - 1, s = 1; d >= 0; s *= (int)shape[d--]) {
            bool back = i % 2 == 0 || k_one_in(k, 2);
            st[d] = back ? -s : s;
            off += back ? (shape[d] - 1) * s : 0;
        }
        k_call c = k_new(k, K_COMPACT);
        k_arg(&c, k_strided(k, &c, k_numel(nd, shape), nd, shape, st, off, K_DISTINCT));
        k_check(k, &c, "a negative stride walks backwards from the offset: never take "
                "|stride|, and a run with stride -1 is not a forward memcpy");
    }
}

static void compact_large(k_ctx *k)
{
    int64_t n = (int64_t)1 << 22;
    k_call c;
    for (int version = 0; version <= 1; version++) {   /* 1: gather_cpu alone */
        c = k_new(k, K_COMPACT);
        c.code = version;
        k_arg(&c, k_strided(k, &c, n, 2, (int64_t[]){ 2048, 2048 }, (int64_t[]){ 1, 2048 }, 0,
                            K_DISTINCT));
        k_check(k, &c, NULL);
    }
    c = k_new(k, K_COMPACT);   /* 8-D: every axis reversed and permuted */
    k_arg(&c, k_strided(k, &c, n, 8, (int64_t[]){ 8, 8, 4, 8, 4, 8, 4, 8 },
                        (int64_t[]){ -8, -131072, -2, -16384, -1, -128, -4096, -16 }, n - 1,
                        K_DISTINCT));
    k_check(k, &c, NULL);
    c = k_new(k, K_COMPACT);   /* (2^21, 2) transposed: long columns */
    k_arg(&c, k_strided(k, &c, n, 2, (int64_t[]){ 2, n / 2 }, (int64_t[]){ 1, 2 }, 0,
                        K_DISTINCT));
    k_check(k, &c, NULL);
    /* the given fast path's steps (nd_compact_version 2-4) on a plane of
     * more rows than a streaming band, rows off line boundaries */
    for (int version = 2; version <= 4; version++) {
        c = k_new(k, K_COMPACT);
        c.code = version;
        k_arg(&c, k_strided(k, &c, 1100 * 1030, 2, (int64_t[]){ 1100, 1030 },
                            (int64_t[]){ 1, 1100 }, 0, K_DISTINCT));
        k_check(k, &c, NULL);
    }
}

static void compact_alias_and_errors(k_ctx *k)
{
    for (int i = 0; i < 200; i++) {
        int64_t shape[ND_MAX_DIMS];
        int nd = k_shape(k, i % 6, 0, 5, 300, shape);
        compact_of(k, nd, shape, K_ANY | K_REPEAT, K_DISTINCT, 0, 0);
    }
    k_call c = k_new(k, K_COMPACT);
    k_arg(&c, k_view(k, &c, 3, (int64_t[]){ 3, 1, 4 }, K_ANY, K_DISTINCT));
    c.out = 0;
    k_check_bad_arrays(k, &c);
}

/* ---------------------------------------------------------------------- */
/* nd_setitem and nd_setitem_scalar                                       */
/* ---------------------------------------------------------------------- */

static void setitem_random_in_place(k_ctx *k)
{
    for (int i = 0; i < 5000; i++) {
        int64_t shape[ND_MAX_DIMS], sshape[ND_MAX_DIMS];
        int nd = k_shape(k, i % (ND_MAX_DIMS + 1), i % 7 == 0 ? 0 : 1, 5, 600, shape);
        k_call c = k_new(k, K_SETITEM);
        k_arg(&c, k_view(k, &c, nd, shape, K_ANY, K_DISTINCT));
        int sn = k_broadcastable(k, nd, shape, sshape);
        k_arg(&c, k_view(k, &c, sn, sshape, K_ANY | K_REPEAT, i % 5 ? K_NEGATIVE : K_SPECIAL));
        k_check(k, &c, SETITEM_HINT);
    }
}

static void setitem_leading_ones(k_ctx *k)
{
    static const struct { int n; int64_t shape[5]; } src[] = {
        { 3, { 1, 1, 4 } }, { 4, { 1, 1, 1, 4 } }, { 3, { 1, 3, 4 } }, { 4, { 1, 1, 3, 1 } },
        { 3, { 2, 1, 4 } }, { 3, { 1, 2, 4 } }, { 4, { 1, 2, 3, 4 } }, { 5, { 1, 1, 1, 1, 1 } },
    };
    for (int i = 0; i < 8; i++) {
        k_call c = k_new(k, K_SETITEM);
        k_arg(&c, k_view(k, &c, 2, (int64_t[]){ 3, 4 }, K_ANY, K_DISTINCT));
        k_arg(&c, k_view(k, &c, src[i].n, src[i].shape, K_ANY | K_REPEAT, K_NEGATIVE));
        k_check(k, &c, NULL);
    }
}

static void setitem_aliasing(k_ctx *k)
{
    for (int i = 0; i < 300; i++) {
        int64_t shape[ND_MAX_DIMS];
        int nd = k_shape(k, i % 6, 0, 5, 300, shape);
        k_call c = k_new(k, K_SETITEM);
        k_arr v = k_view(k, &c, nd, shape, K_ANY, K_DISTINCT);
        k_arg(&c, v);
        if (i % 3 == 0) {   /* setitem(v, v) */
            k_arg(&c, v);
        } else {            /* src in the same buffer, past dst's last element */
            int64_t lo = 0, hi = 0, n = k_numel(nd, shape);
            for (int d = 0; d < nd && n > 0; d++) {
                int64_t reach = (shape[d] - 1) * v.strides[d];
                hi += reach > 0 ? reach : 0;
                lo += reach < 0 ? reach : 0;
            }
            int64_t start = v.offset + hi + 1, size = c.bufs[v.buf].n;
            if (n == 0 || start >= size || v.offset + lo < 0) {
                k_arg(&c, v);
            } else {   /* a repeated element (stride 0) or a row of it */
                int64_t last = shape[nd - 1], st[ND_MAX_DIMS] = { 0 };
                bool row = start + last <= size && i % 2;
                st[nd - 1] = row ? 1 : 0;
                k_arg(&c, k_at(v.buf, nd, shape, st, start));
            }
        }
        k_check(k, &c, "setitem(v, v) leaves v as it is; a src elsewhere in dst's buffer is "
                "read through its own offset and strides");
    }
}

static void setitem_scalar_views(k_ctx *k)
{
    for (int i = 0; i < 1000; i++) {
        int64_t shape[ND_MAX_DIMS];
        int nd = k_shape(k, i % (ND_MAX_DIMS + 1), i % 7 == 0 ? 0 : 1, 5, 600, shape);
        k_call c = k_new(k, K_SETITEM_SCALAR);
        k_arg(&c, k_view(k, &c, nd, shape, K_ANY, K_DISTINCT));
        c.scalar = i % 3 ? k_special(k) : k_float(k, -10, 10);
        k_check(k, &c, NULL);
    }
}

static void setitem_large(k_ctx *k)
{
    int64_t n = (int64_t)1 << 22;
    k_call c = k_new(k, K_SETITEM);
    k_arg(&c, k_strided(k, &c, n, 2, (int64_t[]){ 2048, 2048 }, (int64_t[]){ 1, 2048 }, 0,
                        K_DISTINCT));
    k_arg(&c, k_strided(k, &c, 2048, 2, (int64_t[]){ 2048, 2048 }, (int64_t[]){ 0, -1 }, 2047,
                        K_NEGATIVE));
    k_check(k, &c, NULL);
    c = k_new(k, K_SETITEM_SCALAR);
    k_arg(&c, k_strided(k, &c, n, 8, (int64_t[]){ 8, 8, 4, 8, 4, 8, 4, 8 },
                        (int64_t[]){ -8, -131072, -2, -16384, -1, -128, -4096, -16 }, n - 1,
                        K_DISTINCT));
    c.scalar = -0.0f;
    k_check(k, &c, NULL);
}

static void setitem_shape_rules(k_ctx *k)
{
    /* every pair of shapes of up to 3 axes, sizes 0..2: NumPy's rule */
    int64_t shapes[40][3];
    int nds[40], m = 0;
    for (int nd = 0; nd <= 3; nd++)
        for (int j = 0; j < (nd == 0 ? 1 : nd == 1 ? 3 : nd == 2 ? 9 : 27); j++, m++) {
            nds[m] = nd;
            for (int d = 0, x = j; d < nd; d++, x /= 3)
                shapes[m][d] = x % 3;
        }
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++) {
            k_call c = k_new(k, K_SETITEM);
            k_arg(&c, k_compact(k, &c, nds[i], shapes[i], K_DISTINCT));
            k_arg(&c, k_compact(k, &c, nds[j], shapes[j], K_NEGATIVE));
            k_check(k, &c, "src fits dst when, aligned at the right, each size is dst's or 1 "
                    "(extra leading 1s of src dropped); check before writing anything");
        }
    k_call c = k_new(k, K_SETITEM);
    k_arg(&c, k_compact(k, &c, 2, (int64_t[]){ 3, 4 }, K_DISTINCT));
    k_arg(&c, k_compact(k, &c, 1, (int64_t[]){ 4 }, K_NEGATIVE));
    k_check_bad_arrays(k, &c);
}

/* simplify_dims on strides of any size: shape[k] * strides[k] may
 * overflow, and then equals no stride (issue #17). */
static void simplify_wild_strides(k_ctx *k)
{
    for (int i = 0; i < 600; i++) {
        int64_t shape[K_LIST] = { 0 }, sa[K_LIST] = { 0 }, sb[K_LIST] = { 0 };
        int nd = k_shape(k, (int)k_int(k, 1, ND_MAX_DIMS), 0, 5, 256, shape);
        for (int d = 0; d < nd; d++) {
            sa[d] = k_wild(k);
            sb[d] = k_wild(k);
            if (d > 0 && k_one_in(k, 2))   /* a run that matches, now and then */
                sa[d - 1] = shape[d] * (sa[d] = k_int(k, -K_P2(50), K_P2(50)));
        }
        simplify(k, nd, shape, sa, k_one_in(k, 2) ? sb : NULL);
    }
}

static const k_test tests[] = {
    K_TEST(iter_order_8d, K_HOST, 3, "the last axis moves fastest; past its end it goes "
           "back to 0 and the axis before it moves one; keep your own copy of the shape"),
    K_TEST(iter_stops_and_empty, K_HOST, 2, "once count == total return false and change "
           "nothing; a 0 anywhere means no position; counts are int64_t"),
    K_TEST(iter_errors, K_HOST, 1, "check ndim and every size (the last one too) before "
           "writing anything into the iterator"),
    K_TEST(simplify_exact, K_HOST, 5, "drop every size-1 axis first (its stride is junk), "
           "then merge neighbours wherever every operand has strides[k] == "
           "shape[k+1]*strides[k+1] (negative and zero strides too)"),
    K_TEST(simplify_one_operand_allows, K_HOST, 3, "a merge needs strides_a AND strides_b "
           "to allow it: one operand being contiguous is not enough"),
    K_TEST(simplify_errors, K_HOST, 1, "validate ndim, shape and strides_a before rewriting "
           "anything; read and write only the first *ndim entries"),
    K_TEST(compact_random_8d, K_BOTH, 4, "a fresh buffer of exactly numel floats, offset 0, "
           "row-major strides, filled in row-major order from data[offset + "
           "sum(index[k]*strides[k])]; a is never modified"),
    K_TEST(compact_offset_windows, K_BOTH, 3, COMPACT_HINT),
    K_TEST(compact_negative_strides, K_BOTH, 3, COMPACT_HINT),
    K_TEST(compact_large, K_CPU, 3, "2^22-element transposes, reversed and 8-D views must be "
           "gathered in one pass of int64_t offsets; check the edges of any blocked copy"),
    K_TEST(compact_alias_and_errors, K_BOTH, 2, "with out == a, gather into a new array "
           "first, then release a's old reference and store the result"),
    K_TEST(setitem_random_in_place, K_BOTH, 5, SETITEM_HINT),
    K_TEST(setitem_leading_ones, K_BOTH, 3, "as NumPy, drop src's extra LEADING size-1 axes "
           "before broadcasting: (1,1,4) fits (3,4); (2,1,4) does not"),
    K_TEST(setitem_aliasing, K_BOTH, 3, SETITEM_HINT),
    K_TEST(setitem_scalar_views, K_BOTH, 3, "write the value through dst's offset and signed "
           "strides, to numel(dst) elements and no others; NaN, inf and -0.0 are values too"),
    K_TEST(setitem_large, K_CPU, 3, "a transposed 2^22-element dst and 8-D reversed views: "
           "int64_t offsets, one pass"),
    K_TEST(setitem_shape_rules, K_BOTH, 2, "check that src fits dst (from the right: equal "
           "or 1; extra leading 1s dropped) before writing anything"),
    K_TEST(simplify_wild_strides, K_HOST, 1, "multiply shape[k] * strides[k] with "
           "nd_mul_ok: a run that overflows matches no stride"),
};
K_SUITE(hidden_02, 2, "02_compact", tests);
