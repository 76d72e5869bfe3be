/*
 * test_02_compact.c -- public tests of lesson 2: the odometer (nd_iter),
 * nd_simplify_dims, nd_compact (a strided gather) and nd_setitem /
 * nd_setitem_scalar (a strided scatter).
 *
 * Calls over the kit (tests/kit/kit.h), whose inputs are views made with
 * nd_as_strided, never with lesson 1's functions: lesson 2 is graded alone.
 */
#include "kit.h"

#define ITER_HINT "the last axis moves fastest; past its end it goes back to 0 and the " \
    "axis before it moves one; a shape with a 0 has no positions, a scalar one; keep " \
    "your own copy of the shape"
#define SIMPLIFY_HINT "drop size-1 axes; merge axes k, k+1 only where strides[k] == " \
    "shape[k+1] * strides[k+1] for every operand; the merged axis keeps strides[k+1]"
#define COMPACT_HINT "walk a's positions in row-major order and read " \
    "data[offset + sum(index[k]*strides[k])]: strides may be negative or 0, and the " \
    "offset need not be 0"
#define SETITEM_HINT "setitem writes through dst's strides and offset, not assuming dst " \
    "is compact; it reads src through its own strides, repeating a broadcast axis (size " \
    "1, or missing on the left)"

/* ---------------------------------------------------------------------- */
/* nd_iter                                                                */
/* ---------------------------------------------------------------------- */

/* A walk over `shape`; with reuse, the caller overwrites its shape array
 * after nd_iter_init; with reinit, the iterator was first initialised on
 * another shape (4,3,2). */
static void check_iter(k_ctx *k, int ndim, const int64_t *shape, bool reuse, bool reinit,
                       const char *hint)
{
    k_call c = k_new(k, K_ITER);
    k_list(&c, 0, ndim, shape);
    c.at[1] = reuse;
    if (reinit) {
        c.at[2] = 3;
        k_list(&c, 1, 3, (int64_t[]){ 4, 3, 2 });
    }
    k_check(k, &c, hint);
}

/* Every 4-axis shape of sizes 1..3, then random shapes of up to 8 axes. */
static void iter_order(k_ctx *k)
{
    int64_t shape[ND_MAX_DIMS];
    for (int i = 0; i < 81; i++) {
        for (int d = 0, j = i; d < 4; d++, j /= 3)
            shape[d] = 1 + j % 3;
        check_iter(k, 4, shape, i % 2, i % 4 == 1, ITER_HINT);
    }
    for (int i = 0; i < k_count(k, 300); i++) {
        int nd = k_shape(k, (int)k_int(k, 0, ND_MAX_DIMS), i % 6 == 0 ? 0 : 1, 4, 5000, shape);
        check_iter(k, nd, shape, k_one_in(k, 2), k_one_in(k, 4), ITER_HINT);
    }
}

/* A scalar, no positions, totals past 32 bits, and calls past the end. */
static void iter_scalar_and_empty(k_ctx *k)
{
    check_iter(k, 0, NULL, false, false, "a scalar (ndim 0) has exactly one position, the "
               "empty index");
    check_iter(k, 8, (int64_t[]){ 1, 1, 1, 1, 1, 1, 1, 1 }, false, false, ITER_HINT);
    for (int d = 0; d < ND_MAX_DIMS; d++) {   /* a 0 on each axis of 1..8 */
        int64_t shape[ND_MAX_DIMS] = { 2, 2, 2, 2, 2, 2, 2, 2 };
        shape[d] = 0;
        check_iter(k, d + 1, shape, false, d % 2, "a shape with a size-0 axis has no "
                   "positions");
    }
    /* totals past 2^31 and 2^32: the first positions and the counts */
    check_iter(k, 2, (int64_t[]){ 65536, 65537 }, false, false, "counts are int64_t");
    check_iter(k, 3, (int64_t[]){ 3, INT64_C(1) << 31, 1 }, true, false, "counts are int64_t");
    static const int64_t shapes[][3] = { { 2, 3, 4 }, { 3, 0 }, { 1 } };
    for (int i = 0; i < 3; i++)
        check_iter(k, 3 - i, shapes[i], false, false, "after the last position nd_iter_next "
                   "returns false every time, and leaves index and count as they were");
}

/* A negative size on each axis, ndim 9 and -1, a NULL shape, a NULL it. */
static void iter_errors(k_ctx *k)
{
    static const int64_t shape[K_LIST] = { 2, 2, 2, 2, 2, 2, 2, 2, 2 };
    static const int ndims[4] = { ND_MAX_DIMS + 1, -1, 3, 2 };
    check_iter(k, 2, (int64_t[]){ 2, 3 }, false, false, ITER_HINT);
    for (int i = 0; i < ND_MAX_DIMS + 4; i++) {
        k_call c = k_new(k, K_ITER);
        if (i < ND_MAX_DIMS) {   /* a negative size on the last of i + 1 axes */
            k_list(&c, 0, i + 1, shape);
            c.list[0][i] = -1 - i;
        } else {   /* ndim 9 and -1, a NULL shape, a NULL it */
            k_list(&c, 0, ndims[i - ND_MAX_DIMS], shape);
            c.list_null[0] = i == ND_MAX_DIMS + 2;
            c.out = i == ND_MAX_DIMS + 3 ? K_OUT_NULL : K_OUT_NEW;
        }
        k_expect(k, &c, ND_ERR_ARG, NULL);
    }
}

/* ---------------------------------------------------------------------- */
/* nd_simplify_dims                                                       */
/* ---------------------------------------------------------------------- */

static void check_simplify(k_ctx *k, int ndim, const int64_t *shape, const int64_t *sa,
                           const int64_t *sb, const char *hint)
{
    k_call c = k_new(k, K_SIMPLIFY_DIMS);
    k_list(&c, 0, ndim, shape);
    k_list(&c, 1, ndim, sa);
    if (sb != NULL)
        k_list(&c, 2, ndim, sb);
    c.list_null[2] = sb == NULL;
    k_check(k, &c, hint);
}

static void simplify_cases(k_ctx *k)
{
    const struct {
        const char *why;
        int ndim;
        int64_t shape[3], sa[3];
        const int64_t *sb;   /* NULL: one operand */
    } cases[] = {
        { "a compact array is one run", 3, { 2, 3, 4 }, { 12, 4, 1 }, NULL },
        { "size-1 axes vanish, whatever their stride", 3, { 1, 5, 1 }, { 7, 1, 3 }, NULL },
        { "a size-1 axis in the middle does not stop a merge", 3, { 2, 1, 3 }, { 3, 99, 1 },
          NULL },
        { "a transpose cannot merge", 2, { 4, 3 }, { 1, 4 }, NULL },
        { "every axis of size 1: a scalar", 3, { 1, 1, 1 }, { 1, 1, 1 }, NULL },
        { "ndim 0 stays 0", 0, { 0 }, { 0 }, NULL },
        { "one axis stays", 1, { 5 }, { 2 }, NULL },
        { "a reversed compact array is one backward run", 2, { 3, 4 }, { -4, -1 }, NULL },
        { "a full broadcast merges (stride 0 everywhere)", 2, { 3, 4 }, { 0, 0 }, NULL },
        { "a broadcast row does not merge with its columns", 2, { 3, 4 }, { 0, 1 }, NULL },
        { "rows of a padded base: only the inner axes merge", 3, { 2, 3, 4 }, { 20, 4, 1 }, NULL },
        { "two operands merge only where both allow it", 3, { 2, 3, 4 }, { 12, 4, 1 },
          (int64_t[]){ 40, 4, 1 } },
        { "b transposed: nothing merges", 3, { 2, 3, 4 }, { 12, 4, 1 }, (int64_t[]){ 1, 2, 6 } },
        { "size-1 axes drop from both operands", 3, { 2, 1, 3 }, { 3, 3, 1 },
          (int64_t[]){ 1, 5, 2 } },
        { "two compact operands are one run", 2, { 2, 3 }, { 3, 1 }, (int64_t[]){ 3, 1 } },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_simplify(k, cases[i].ndim, cases[i].shape, cases[i].sa, cases[i].sb, cases[i].why);
}

/* Random shapes and strides: one operand, two equal ones, two independent
 * ones, or two compact ones with one pair of axes broken in one of them. */
static void simplify_random(k_ctx *k)
{
    for (int i = 0; i < k_count(k, 1000); i++) {
        int64_t shape[ND_MAX_DIMS], sa[ND_MAX_DIMS], sb[ND_MAX_DIMS];
        int nd = k_shape(k, (int)k_int(k, i % 4 == 3 ? 2 : 0, ND_MAX_DIMS),
                         i % 4 == 3 ? 2 : i % 8 == 0 ? 0 : 1, 6, 100000, shape);
        k_strides(k, nd, shape, sa);
        k_strides(k, nd, shape, sb);
        if (i % 4 == 1)
            memcpy(sb, sa, sizeof sb);
        if (i % 4 == 3) {
            for (int d = nd - 1, s = 1; d >= 0; s *= (int)shape[d--])
                sa[d] = sb[d] = s;
            int d = (int)k_int(k, 0, nd - 2);
            int64_t *broken = k_one_in(k, 2) ? sa : sb;
            broken[d] += k_int(k, 1, 3) * broken[d + 1];
            for (int e = d - 1; e >= 0; e--)
                broken[e] = broken[e + 1] * shape[e + 1];
        }
        check_simplify(k, nd, shape, sa, i % 4 ? sb : NULL, i % 4 == 3 ? "a merge needs "
                       "strides_a AND strides_b to allow it" : SIMPLIFY_HINT);
    }
}

static void simplify_errors(k_ctx *k)
{
    int64_t shape[K_LIST] = { 3, 4, 1, 1, 1, 1, 1, 1, 1 }, sa[K_LIST] = { 4, 1, 1, 1, 1, 1, 1, 1, 1 };
    check_simplify(k, 2, shape, sa, sa, SIMPLIFY_HINT);
    for (int i = 0; i < 7; i++) {
        k_call c = k_new(k, K_SIMPLIFY_DIMS);
        k_list(&c, 0, 2, shape);
        k_list(&c, 1, K_LIST, sa);
        k_list(&c, 2, K_LIST, sa);
        c.n = i == 2 ? ND_MAX_DIMS + 1 : i == 3 ? -1 : 2;
        c.list_null[0] = i == 0;
        c.list_null[1] = i == 1;
        c.list_null[2] = i % 2 == 0;
        c.list[0][i == 6 ? 0 : 1] = i >= 4 ? -4 : 4;   /* a negative size, last or first */
        if (i == 5)
            c.out = K_OUT_NULL;
        k_expect(k, &c, ND_ERR_ARG, NULL);
    }
}

/* ---------------------------------------------------------------------- */
/* nd_compact                                                             */
/* ---------------------------------------------------------------------- */

static void compact_special_views(k_ctx *k)
{
    /* views of a buffer of 12 floats */
    static const struct {
        const char *what;
        int ndim;
        int64_t shape[2], strides[2], offset;
    } cases[] = {
        { "a compact array is copied all the same", 2, { 3, 4 }, { 4, 1 }, 0 },
        { "a transpose", 2, { 4, 3 }, { 1, 4 }, 0 },
        { "both axes reversed: start at the last element", 2, { 3, 4 }, { -4, -1 }, 11 },
        { "a broadcast row (stride 0) repeats", 2, { 3, 4 }, { 0, 1 }, 4 },
        { "a broadcast column", 2, { 2, 3 }, { 1, 0 }, 9 },
        { "one element repeated", 2, { 2, 2 }, { 0, 0 }, 7 },
        { "a scalar (ndim 0) at offset 5", 0, { 0 }, { 0 }, 5 },
        { "every other element, from offset 1", 2, { 2, 2 }, { 6, 2 }, 1 },
        { "a size-1 axis with an unused stride", 2, { 1, 3 }, { 100, -2 }, 10 },
        { "shape (0,3): no elements", 2, { 0, 3 }, { 3, 1 }, 0 },
        { "shape (3,0) with its offset at the buffer's end", 2, { 3, 0 }, { 4, 1 }, 12 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        k_call c = k_on_view(k, K_COMPACT, 12, cases[i].ndim, cases[i].shape, cases[i].strides,
                             cases[i].offset);
        k_check(k, &c, cases[i].what);
    }
}

/* Random views of up to 8 axes (special values in a fifth of them), half
 * of them through nd_compact_version 1: your gather_cpu alone. */
static void compact_random_views(k_ctx *k)
{
    for (int i = 0; i < k_count(k, 600); i++) {
        int64_t shape[ND_MAX_DIMS];
        int nd = k_shape(k, i % (ND_MAX_DIMS + 1), i % 7 == 0 ? 0 : 1, 5, 600, shape);
        k_call c = k_new(k, K_COMPACT);
        c.code = i % 2;
        k_arg(&c, k_view(k, &c, nd, shape, K_ANY | (i % 3 ? K_REPEAT : 0),
                         i % 5 ? K_DISTINCT : K_SPECIAL));
        k_check(k, &c, COMPACT_HINT);
    }
}

static void compact_out_aliases_input(k_ctx *k)
{
    /* nd_compact(&x, &x): x becomes the copy and its old reference goes */
    k_call c = k_on_view(k, K_COMPACT, 12, 2, (int64_t[]){ 4, 3 }, (int64_t[]){ 1, 4 }, 0);
    c.out = 0;
    k_check(k, &c, "when out is a, make the copy, then release a's old reference and store "
            "the copy in it");
    for (int i = 0; i < k_count(k, 50); i++) {
        int64_t shape[ND_MAX_DIMS];
        int nd = k_shape(k, i % 6, 0, 5, 300, shape);
        c = k_new(k, K_COMPACT);
        c.out = 0;
        k_arg(&c, k_view(k, &c, nd, shape, K_ANY | K_REPEAT, K_DISTINCT));
        k_check(k, &c, COMPACT_HINT);
    }
}

static void compact_large(k_ctx *k)
{
    /* 2^20 elements: a 1024x1024 transpose, and a (128,64,128) view that
     * permutes and reverses a (64,128,128) base.  nd_compact gives these
     * transposed planes to its given fast path, so each is also compacted
     * by your gather_cpu alone: nd_compact_version 1 */
    for (int version = 0; version <= 1; version++) {
        k_call c = k_on_view(k, K_COMPACT, 1 << 20, 2, (int64_t[]){ 1024, 1024 },
                             (int64_t[]){ 1, 1024 }, 0);
        c.code = version;
        k_check(k, &c, COMPACT_HINT);
        c = k_on_view(k, K_COMPACT, 1 << 20, 3, (int64_t[]){ 128, 64, 128 },
                      (int64_t[]){ 1, -16384, 128 }, 63 * 16384);
        c.code = version;
        k_check(k, &c, COMPACT_HINT);
    }
}

/* Transposed planes whose sizes are no multiple of any block size a tiled
 * gather might use, with the dense axis reversed or a batch axis: through
 * nd_compact, and through each step of nd_compact_version (1: your
 * gather_cpu alone; 2-4: the given fast path of "Going further"). */
static void compact_transpose_edges(k_ctx *k)
{
    static const struct { int64_t rows, cols; bool reverse; int64_t batch; } cases[] = {
        { 300, 17, false, 1 }, { 17, 300, false, 1 }, { 257, 513, false, 1 },
        { 1, 700, false, 1 },  { 700, 2, true, 1 },   { 33, 271, true, 3 },
        { 16, 16, false, 2 },  { 255, 257, true, 1 },
        /* more rows than a band of step 4 (STREAM_BAND), rows off line
         * boundaries: one whole block along a row, and two */
        { 20, 1100, false, 2 }, { 40, 1030, false, 1 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t r = cases[i].rows, n = cases[i].cols, b = cases[i].batch;
        for (int version = 0; version <= 4; version++) {
            k_call c = k_on_view(k, K_COMPACT, b * r * n, 3, (int64_t[]){ b, n, r },
                                 (int64_t[]){ r * n, cases[i].reverse ? -1 : 1, n },
                                 cases[i].reverse ? n - 1 : 0);
            c.code = version;
            k_check(k, &c, "the edges of a blocked copy: the last partial blocks of each axis");
        }
    }
}

static void compact_errors(k_ctx *k)
{
    k_call c = k_on_array(k, K_COMPACT, 2, (int64_t[]){ 3, 4 });
    k_check_bad_arrays(k, &c);
    c = k_new(k, K_COMPACT);   /* and with out == a */
    k_arg(&c, k_view(k, &c, 3, (int64_t[]){ 3, 1, 4 }, K_ANY, K_DISTINCT));
    c.out = 0;
    k_check_bad_arrays(k, &c);
}

/* ---------------------------------------------------------------------- */
/* nd_setitem and nd_setitem_scalar                                       */
/* ---------------------------------------------------------------------- */

static void setitem_broadcast(k_ctx *k)
{
    static const struct {
        const char *what;
        int dst_ndim;
        int64_t dst_shape[2], dst_strides[2];
        int src_ndim;
        int64_t src_shape[3];
    } cases[] = {
        { "the same shape", 2, { 2, 2 }, { 4, 1 }, 2, { 2, 2 } },
        { "a row into every row", 2, { 3, 4 }, { 4, 1 }, 1, { 4 } },
        { "a column (3,1) into every column", 2, { 3, 4 }, { 4, 1 }, 2, { 3, 1 } },
        { "a scalar (ndim 0) everywhere", 2, { 3, 4 }, { 4, 1 }, 0, { 0 } },
        { "src has extra leading size-1 axes (1,1,4): NumPy looks past them", 2, { 3, 4 },
          { 4, 1 }, 3, { 1, 1, 4 } },
        { "a row into a transposed dst", 2, { 4, 3 }, { 1, 4 }, 1, { 3 } },
        { "into a reversed, strided dst (a column of it)", 2, { 3, 2 }, { -4, -2 }, 2,
          { 3, 1 } },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        k_call c = k_on_view(k, K_SETITEM, 12, cases[i].dst_ndim, cases[i].dst_shape,
                             cases[i].dst_strides, cases[i].dst_strides[0] < 0 ? 11 : 0);
        k_arg(&c, k_compact(k, &c, cases[i].src_ndim, cases[i].src_shape, K_NEGATIVE));
        k_check(k, &c, cases[i].what);
    }
    /* a broadcast src made by stride 0 */
    k_call c = k_on_array(k, K_SETITEM, 2, (int64_t[]){ 3, 4 });
    k_arg(&c, k_strided(k, &c, 4, 2, (int64_t[]){ 3, 4 }, (int64_t[]){ 0, 1 }, 0, K_NEGATIVE));
    k_check(k, &c, SETITEM_HINT);
}

static void setitem_random(k_ctx *k)
{
    for (int i = 0; i < k_count(k, 500); i++) {
        int64_t shape[ND_MAX_DIMS], sshape[ND_MAX_DIMS];
        int nd = k_shape(k, i % (ND_MAX_DIMS + 1), i % 7 == 0 ? 0 : 1, 5, 600, shape);
        k_call c = k_new(k, K_SETITEM);
        k_arg(&c, k_view(k, &c, nd, shape, K_ANY, K_DISTINCT));
        int sn = k_broadcastable(k, nd, shape, sshape);
        k_arg(&c, k_view(k, &c, sn, sshape, K_ANY | K_REPEAT, i % 5 ? K_NEGATIVE : K_SPECIAL));
        k_check(k, &c, SETITEM_HINT);
    }
}

static void setitem_scalar_random(k_ctx *k)
{
    for (int i = 0; i < k_count(k, 300); i++) {
        int64_t shape[ND_MAX_DIMS];
        int nd = k_shape(k, i % (ND_MAX_DIMS + 1), i % 7 == 0 ? 0 : 1, 5, 600, shape);
        k_call c = k_new(k, K_SETITEM_SCALAR);
        k_arg(&c, k_view(k, &c, nd, shape, K_ANY, K_DISTINCT));
        c.scalar = i % 3 ? k_special(k) : -(float)i - 0.75f;
        k_check(k, &c, "write the value at every element of the view dst, through its "
                "strides and offset, and nowhere else; NaN, inf and -0.0 are values too");
    }
}

/* dst[...] = dst (allowed: nothing changes), or a src in dst's buffer past
 * dst's last element: one element repeated (stride 0), or a row of them. */
static void setitem_same_view(k_ctx *k)
{
    for (int i = 0; i < k_count(k, 100); i++) {
        int64_t shape[ND_MAX_DIMS];
        int nd = k_shape(k, i % 7, i % 5 == 0 ? 0 : 1, 5, 300, shape);
        k_call c = k_new(k, K_SETITEM);
        k_arr v = k_view(k, &c, nd, shape, K_ANY, K_DISTINCT);
        k_arg(&c, v);
        int64_t hi = 0, n = k_numel(nd, shape);   /* the highest element dst reaches */
        for (int d = 0; d < nd && n > 0; d++)
            hi += v.strides[d] > 0 ? (shape[d] - 1) * v.strides[d] : 0;
        int64_t start = v.offset + hi + 1, size = c.bufs[v.buf].n;
        if (i % 3 == 0 || nd == 0 || n == 0 || start >= size) {
            k_arg(&c, v);
        } else {
            int64_t st[ND_MAX_DIMS] = { 0 };
            st[nd - 1] = start + shape[nd - 1] <= size && i % 2;
            k_arg(&c, k_at(v.buf, nd, shape, st, start));
        }
        k_check(k, &c, "dst and src may be the very same view: then nothing changes; a src "
                "elsewhere in dst's buffer is read through its own offset and strides");
    }
}

static void setitem_disjoint_same_buffer(k_ctx *k)
{
    /* dst and src in one buffer of 48 floats, reaching no common element */
    static const struct {
        const char *what;
        int ndim;
        int64_t shape[2], dst_strides[2], dst_offset, src_strides[2], src_offset;
    } cases[] = {
        { "left half = right half reversed", 2, { 6, 4 }, { 8, 1 }, 0, { 8, -1 }, 7 },
        { "even elements = odd elements", 1, { 24 }, { 2 }, 0, { 2 }, 1 },
        { "rows 0..4 = row 5, broadcast", 2, { 5, 8 }, { 8, 1 }, 0, { 0, 1 }, 40 },
        { "left half transposed = right half transposed and reversed", 2, { 4, 6 },
          { 1, 8 }, 0, { -1, 8 }, 7 },
        { "top-right block = bottom-left block, rows reversed", 2, { 3, 4 }, { 8, 1 }, 4,
          { -8, 1 }, 40 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        k_call c = k_new(k, K_SETITEM);
        int b = k_buffer(k, &c, 48, K_DISTINCT);
        k_arg(&c, k_at(b, cases[i].ndim, cases[i].shape, cases[i].dst_strides,
                       cases[i].dst_offset));
        k_arg(&c, k_at(b, cases[i].ndim, cases[i].shape, cases[i].src_strides,
                       cases[i].src_offset));
        k_check(k, &c, cases[i].what);
    }
}

static void setitem_errors(k_ctx *k)
{
    k_call c = k_on_array(k, K_SETITEM, 2, (int64_t[]){ 3, 4 });
    k_arg(&c, k_compact(k, &c, 1, (int64_t[]){ 4 }, K_NEGATIVE));
    k_check_bad_arrays(k, &c);
    c = k_on_array(k, K_SETITEM_SCALAR, 2, (int64_t[]){ 3, 4 });
    k_check_bad_arrays(k, &c);
    /* every pair of shapes of up to 3 axes, sizes 0..2: NumPy's rule */
    int64_t shapes[40][3];
    int nds[40], m = 0;
    for (int nd = 0; nd <= 3; nd++)
        for (int j = 0; j < (nd == 0 ? 1 : nd == 1 ? 3 : nd == 2 ? 9 : 27); j++, m++) {
            nds[m] = nd;
            for (int d = 0, x = j; d < nd; d++, x /= 3)
                shapes[m][d] = x % 3;
        }
    for (int i = 0; i < m * m; i++) {
        c = k_on_array(k, K_SETITEM, nds[i / m], shapes[i / m]);
        k_arg(&c, k_compact(k, &c, nds[i % m], shapes[i % m], K_NEGATIVE));
        k_check(k, &c, "src fits dst when, aligned at the right, each size is dst's or 1 "
                "(extra leading 1s of src dropped); check before writing anything");
    }
    if (k_dev(k) == ND_CUDA) {   /* src on the other device */
        c = k_on_array(k, K_SETITEM, 2, (int64_t[]){ 3, 4 });
        k_arg(&c, k_compact(k, &c, 1, (int64_t[]){ 4 }, K_NEGATIVE));
        c.bufs[1].on = ND_CPU + 1;
        k_expect(k, &c, ND_ERR_DEVICE, NULL);
    }
}

/* ---------------------------------------------------------------------- */
/* Extreme shapes, strides and offsets (issue #17)                         */
/* ---------------------------------------------------------------------- */

/* nd_simplify_dims compares strides[k-1] with shape[k] * strides[k]; the
 * product can overflow, and a wrapped product once "matched" and merged
 * axes that are not adjacent at all.  4 * 2^62 is 2^64, which wraps to 0.
 * Then random strides of any size, with a run that matches now and then. */
static void extreme_simplify_dims(k_ctx *k)
{
    const struct { int64_t shape[2], sa[2]; const int64_t *sb; } cases[] = {
        { { 3, 4 }, { 4, 1 }, NULL },                                 /* merges: valid first */
        { { 0, 4 }, { 0, K_P2(62) }, NULL },
        { { 3, 4 }, { 4, 1 }, (int64_t[]){ 0, K_P2(62) } },
        { { 2, K_P2(20) }, { INT64_MIN, K_P2(43) }, NULL },           /* wraps to INT64_MIN */
    };
#define OVERFLOW_HINT "shape[k] * strides[k] can overflow int64, and then it equals no " \
    "stride: multiply with nd_mul_ok"
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_simplify(k, 2, cases[i].shape, cases[i].sa, cases[i].sb, OVERFLOW_HINT);
    for (int i = 0; i < k_count(k, 60); i++) {
        int64_t shape[K_LIST] = { 0 }, sa[K_LIST] = { 0 }, sb[K_LIST] = { 0 };
        int nd = k_shape(k, (int)k_int(k, 1, ND_MAX_DIMS), 0, 5, 256, shape);
        for (int d = 0; d < nd; d++) {
            sa[d] = k_wild(k);
            sb[d] = k_wild(k);
            if (d > 0 && k_one_in(k, 2))
                sa[d - 1] = shape[d] * (sa[d] = k_int(k, -K_P2(50), K_P2(50)));
        }
        check_simplify(k, nd, shape, sa, k_one_in(k, 2) ? sb : NULL, OVERFLOW_HINT);
    }
}

/* Out of memory for the result, compact says so in its own name ("empty:
 * cannot allocate" once): a view of 2^58 floats (2^60 bytes, stride 0)
 * over a buffer of 4.  The kit's executor sets allocator_may_return_null=1
 * for AddressSanitizer, so that malloc returns NULL in both builds. */
static void extreme_compact_out_of_memory(k_ctx *k)
{
    static const int64_t four = 4, most = ND_MAX_NUMEL, zero = 0;
    k_call c = k_on_array(k, K_COMPACT, 1, &four);
    k_expect(k, &c, ND_OK, COMPACT_HINT);
    c = k_on_view(k, K_COMPACT, 4, 1, &most, &zero, 0);
    k_expect(k, &c, ND_ERR_NOMEM, "when the result cannot be allocated, say so in the "
             "operation's name: nd_empty's error names \"empty\"");
}

static const k_test tests[] = {
    K_TEST(iter_order, K_HOST, 0, ITER_HINT),
    K_TEST(iter_scalar_and_empty, K_HOST, 0, ITER_HINT),
    K_TEST(iter_errors, K_HOST, 0, ITER_HINT),
    K_TEST(simplify_cases, K_HOST, 0, SIMPLIFY_HINT),
    K_TEST(simplify_random, K_HOST, 0, SIMPLIFY_HINT),
    K_TEST(simplify_errors, K_HOST, 0, SIMPLIFY_HINT),
    K_TEST(compact_special_views, K_BOTH, 0, COMPACT_HINT),
    K_TEST(compact_random_views, K_BOTH, 0, COMPACT_HINT),
    K_TEST(compact_out_aliases_input, K_BOTH, 0, COMPACT_HINT),
    K_TEST(compact_large, K_BOTH, 0, COMPACT_HINT),
    K_TEST(compact_transpose_edges, K_BOTH, 0, COMPACT_HINT),
    K_TEST(compact_errors, K_BOTH, 0, COMPACT_HINT),
    K_TEST(setitem_broadcast, K_BOTH, 0, SETITEM_HINT),
    K_TEST(setitem_random, K_BOTH, 0, SETITEM_HINT),
    K_TEST(setitem_scalar_random, K_BOTH, 0, SETITEM_HINT),
    K_TEST(setitem_same_view, K_BOTH, 0, SETITEM_HINT),
    K_TEST(setitem_disjoint_same_buffer, K_BOTH, 0, SETITEM_HINT),
    K_TEST(setitem_errors, K_BOTH, 0, SETITEM_HINT),
    K_TEST(extreme_simplify_dims, K_HOST, 0, SIMPLIFY_HINT),
    K_TEST(extreme_compact_out_of_memory, K_BOTH, 0, COMPACT_HINT),
};
K_SUITE(public_02, 2, "02_compact", tests);
