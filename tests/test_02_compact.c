/*
 * test_02_compact.c -- public tests of lesson 2: the odometer (nd_iter),
 * nd_simplify_dims, nd_compact (a strided gather) and nd_setitem /
 * nd_setitem_scalar (a strided scatter).
 *
 * Each test makes calls over the kit (tests/kit/kit.h): the kit builds the
 * inputs (views made with nd_as_strided, never with lesson 1's functions,
 * so that lesson 2 is graded on its own), its reference says what each
 * call must do, and its comparison writes the message.
 */
#include "kit.h"

#define ITER_HINT "the last axis moves fastest; past its end it goes back to 0 and the " \
    "axis before it moves one; a shape with a 0 has no positions, a scalar one"
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

static void check_iter(k_ctx *k, int ndim, const int64_t *shape, const char *hint)
{
    k_call c = k_new(k, K_ITER);
    k_list(&c, 0, ndim, shape);
    k_check(k, &c, hint);
}

static void iter_order(k_ctx *k)
{
    check_iter(k, 2, (int64_t[]){ 2, 3 }, ITER_HINT);
    for (int i = 0; i < 300; i++) {
        int64_t shape[ND_MAX_DIMS];
        int nd = k_shape(k, i % (ND_MAX_DIMS + 1), i % 5 == 0 ? 0 : 1, 4, 1000, shape);
        check_iter(k, nd, shape, ITER_HINT);
    }
}

static void iter_scalar_and_empty(k_ctx *k)
{
    check_iter(k, 0, NULL, "a scalar (ndim 0) has exactly one position, the empty index");
    check_iter(k, 8, (int64_t[]){ 1, 1, 1, 1, 1, 1, 1, 1 }, ITER_HINT);
    static const int64_t empty[][4] = { { 0 }, { 3, 0 }, { 0, 5, 2 }, { 2, 3, 0, 4 } };
    for (int i = 0; i < 4; i++)
        check_iter(k, i + 1, empty[i], "a shape with a size-0 axis has no positions");
}

static void iter_past_end(k_ctx *k)
{
    static const int64_t shapes[][3] = { { 2, 3, 4 }, { 3, 0 }, { 1 } };
    for (int i = 0; i < 3; i++)
        check_iter(k, 3 - i, shapes[i], "after the last position nd_iter_next returns false "
                   "every time, and leaves index and count as they were");
}

static void iter_errors(k_ctx *k)
{
    check_iter(k, 2, (int64_t[]){ 2, 3 }, ITER_HINT);
    static const struct { int ndim; int64_t shape[K_LIST]; } bad[] = {
        { ND_MAX_DIMS + 1, { 2, 3, 1, 1, 1, 1, 1, 1, 1 } }, { -1, { 2 } }, { 2, { 2, -1 } },
    };
    for (int i = 0; i < 3; i++) {
        k_call c = k_new(k, K_ITER);
        k_list(&c, 0, bad[i].ndim, bad[i].shape);
        k_expect(k, &c, ND_ERR_ARG, NULL);
    }
    k_call c = k_new(k, K_ITER);
    c.n = 2;
    c.list_null[0] = true;
    k_expect(k, &c, ND_ERR_ARG, NULL);
    c = k_new(k, K_ITER);
    k_list(&c, 0, 2, (int64_t[]){ 2, 3 });
    c.out = K_OUT_NULL;
    k_expect(k, &c, ND_ERR_ARG, NULL);
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
    static const struct {
        const char *why;
        int ndim;
        int64_t shape[3], sa[3], sb[3];
        bool has_b;
    } cases[] = {
        { "a compact array is one run", 3, { 2, 3, 4 }, { 12, 4, 1 }, { 0 }, false },
        { "size-1 axes vanish, whatever their stride", 3, { 1, 5, 1 }, { 7, 1, 3 }, { 0 },
          false },
        { "a size-1 axis in the middle does not stop a merge", 3, { 2, 1, 3 }, { 3, 99, 1 },
          { 0 }, false },
        { "a transpose cannot merge", 2, { 4, 3 }, { 1, 4 }, { 0 }, false },
        { "every axis of size 1: a scalar", 3, { 1, 1, 1 }, { 1, 1, 1 }, { 0 }, false },
        { "ndim 0 stays 0", 0, { 0 }, { 0 }, { 0 }, false },
        { "one axis stays", 1, { 5 }, { 2 }, { 0 }, false },
        { "a reversed compact array is one backward run", 2, { 3, 4 }, { -4, -1 }, { 0 },
          false },
        { "a full broadcast merges (stride 0 everywhere)", 2, { 3, 4 }, { 0, 0 }, { 0 },
          false },
        { "a broadcast row does not merge with its columns", 2, { 3, 4 }, { 0, 1 }, { 0 },
          false },
        { "rows of a padded base: only the inner axes merge", 3, { 2, 3, 4 }, { 20, 4, 1 },
          { 0 }, false },
        { "two operands merge only where both allow it", 3, { 2, 3, 4 }, { 12, 4, 1 },
          { 40, 4, 1 }, true },
        { "b transposed: nothing merges", 3, { 2, 3, 4 }, { 12, 4, 1 }, { 1, 2, 6 }, true },
        { "size-1 axes drop from both operands", 3, { 2, 1, 3 }, { 3, 3, 1 }, { 1, 5, 2 },
          true },
        { "two compact operands are one run", 2, { 2, 3 }, { 3, 1 }, { 3, 1 }, true },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_simplify(k, cases[i].ndim, cases[i].shape, cases[i].sa,
                       cases[i].has_b ? cases[i].sb : NULL, cases[i].why);
}

static void simplify_random(k_ctx *k)
{
    for (int i = 0; i < 1000; i++) {
        int64_t shape[ND_MAX_DIMS], sa[ND_MAX_DIMS], sb[ND_MAX_DIMS];
        int nd = k_shape(k, (int)k_int(k, 0, ND_MAX_DIMS), i % 8 == 0 ? 0 : 1, 5, 2000, shape);
        k_strides(k, nd, shape, sa);
        if (i % 3 == 1)
            memcpy(sb, sa, sizeof sb);
        else
            k_strides(k, nd, shape, sb);
        check_simplify(k, nd, shape, sa, i % 3 ? sb : NULL, SIMPLIFY_HINT);
    }
}

static void simplify_errors(k_ctx *k)
{
    int64_t shape[K_LIST] = { 3, 4, 1, 1, 1, 1, 1, 1, 1 }, sa[K_LIST] = { 4, 1, 1, 1, 1, 1, 1, 1, 1 };
    check_simplify(k, 2, shape, sa, sa, SIMPLIFY_HINT);
    for (int i = 0; i < 6; i++) {
        k_call c = k_new(k, K_SIMPLIFY_DIMS);
        k_list(&c, 0, 2, shape);
        k_list(&c, 1, K_LIST, sa);
        k_list(&c, 2, K_LIST, sa);
        c.n = i == 2 ? ND_MAX_DIMS + 1 : i == 3 ? -1 : 2;
        c.list_null[0] = i == 0;
        c.list_null[1] = i == 1;
        c.list_null[2] = i % 2 == 0;
        c.list[0][1] = i == 4 ? -4 : 4;
        if (i == 5)
            c.out = K_OUT_NULL;
        k_expect(k, &c, ND_ERR_ARG, NULL);
    }
}

/* ---------------------------------------------------------------------- */
/* nd_compact                                                             */
/* ---------------------------------------------------------------------- */

static void check_compact(k_ctx *k, k_call *c, k_arr a, const char *hint)
{
    k_arg(c, a);
    k_check(k, c, hint);
}

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
        k_call c = k_new(k, K_COMPACT);
        check_compact(k, &c, k_strided(k, &c, 12, cases[i].ndim, cases[i].shape,
                                       cases[i].strides, cases[i].offset, K_DISTINCT),
                      cases[i].what);
    }
}

static void compact_random_views(k_ctx *k)
{
    for (int i = 0; i < 600; i++) {
        int64_t shape[ND_MAX_DIMS];
        int nd = k_shape(k, i % 7, i % 4 == 0 ? 0 : 1, 5, 256, shape);
        k_call c = k_new(k, K_COMPACT);
        check_compact(k, &c, k_view(k, &c, nd, shape, K_ANY | (i % 2 ? K_REPEAT : 0),
                                    K_DISTINCT), COMPACT_HINT);
    }
}

static void compact_out_aliases_input(k_ctx *k)
{
    /* nd_compact(&x, &x): x becomes the copy and its old reference goes */
    k_call c = k_new(k, K_COMPACT);
    c.out = 0;
    check_compact(k, &c, k_strided(k, &c, 12, 2, (int64_t[]){ 4, 3 }, (int64_t[]){ 1, 4 }, 0,
                                   K_DISTINCT),
                  "when out is a, make the copy, then release a's old reference and store "
                  "the copy in it");
    for (int i = 0; i < 50; i++) {
        int64_t shape[ND_MAX_DIMS];
        int nd = k_shape(k, i % 5, 1, 5, 200, shape);
        c = k_new(k, K_COMPACT);
        c.out = 0;
        check_compact(k, &c, k_view(k, &c, nd, shape, K_ANY, K_DISTINCT), COMPACT_HINT);
    }
}

static void compact_large(k_ctx *k)
{
    /* 2^20 elements: a 1024x1024 transpose, and a (128,64,128) view that
     * permutes and reverses a (64,128,128) base.  nd_compact gives these
     * transposed planes to its given fast path, so each is also compacted
     * by your gather_cpu alone: nd_compact_version 1 */
    for (int version = 0; version <= 1; version++) {
        k_call c = k_new(k, K_COMPACT);
        c.code = version;
        check_compact(k, &c, k_strided(k, &c, 1 << 20, 2, (int64_t[]){ 1024, 1024 },
                                       (int64_t[]){ 1, 1024 }, 0, K_DISTINCT), COMPACT_HINT);
        c = k_new(k, K_COMPACT);
        c.code = version;
        check_compact(k, &c, k_strided(k, &c, 1 << 20, 3, (int64_t[]){ 128, 64, 128 },
                                       (int64_t[]){ 1, -16384, 128 }, 63 * 16384, K_DISTINCT),
                      COMPACT_HINT);
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
            k_call c = k_new(k, K_COMPACT);
            c.code = version;
            check_compact(k, &c, k_strided(k, &c, b * r * n, 3, (int64_t[]){ b, n, r },
                                           (int64_t[]){ r * n, cases[i].reverse ? -1 : 1, n },
                                           cases[i].reverse ? n - 1 : 0, K_DISTINCT),
                          "the edges of a blocked copy: the last partial blocks of each axis");
        }
    }
}

static void compact_errors(k_ctx *k)
{
    k_call c = k_new(k, K_COMPACT);
    k_arg(&c, k_compact(k, &c, 2, (int64_t[]){ 3, 4 }, K_DISTINCT));
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
        k_call c = k_new(k, K_SETITEM);
        k_arg(&c, k_strided(k, &c, 12, cases[i].dst_ndim, cases[i].dst_shape,
                            cases[i].dst_strides, cases[i].dst_strides[0] < 0 ? 11 : 0,
                            K_DISTINCT));
        k_arg(&c, k_compact(k, &c, cases[i].src_ndim, cases[i].src_shape, K_NEGATIVE));
        k_check(k, &c, cases[i].what);
    }
    /* a broadcast src made by stride 0 */
    k_call c = k_new(k, K_SETITEM);
    k_arg(&c, k_compact(k, &c, 2, (int64_t[]){ 3, 4 }, K_DISTINCT));
    k_arg(&c, k_strided(k, &c, 4, 2, (int64_t[]){ 3, 4 }, (int64_t[]){ 0, 1 }, 0, K_NEGATIVE));
    k_check(k, &c, SETITEM_HINT);
}

static void setitem_random(k_ctx *k)
{
    for (int i = 0; i < 500; i++) {
        int64_t shape[ND_MAX_DIMS], sshape[ND_MAX_DIMS];
        int nd = k_shape(k, i % 7, i % 5 == 0 ? 0 : 1, 5, 256, shape);
        k_call c = k_new(k, K_SETITEM);
        k_arg(&c, k_view(k, &c, nd, shape, K_ANY, K_DISTINCT));
        int sn = k_broadcastable(k, nd, shape, sshape);
        k_arg(&c, k_view(k, &c, sn, sshape, K_ANY | K_REPEAT, K_NEGATIVE));
        k_check(k, &c, SETITEM_HINT);
    }
}

static void setitem_scalar_random(k_ctx *k)
{
    for (int i = 0; i < 300; i++) {
        int64_t shape[ND_MAX_DIMS];
        int nd = k_shape(k, i % 7, i % 5 == 0 ? 0 : 1, 5, 256, shape);
        k_call c = k_new(k, K_SETITEM_SCALAR);
        k_arg(&c, k_view(k, &c, nd, shape, K_ANY, K_DISTINCT));
        c.scalar = -(float)i - 0.75f;
        k_check(k, &c, "write the value at every element of the view dst, through its "
                "strides and offset, and nowhere else");
    }
}

static void setitem_same_view(k_ctx *k)
{
    /* dst[...] = dst: allowed, and changes nothing */
    for (int i = 0; i < 100; i++) {
        int64_t shape[ND_MAX_DIMS];
        int nd = k_shape(k, i % 7, i % 5 == 0 ? 0 : 1, 5, 256, shape);
        k_call c = k_new(k, K_SETITEM);
        k_arr v = k_view(k, &c, nd, shape, K_ANY, K_DISTINCT);
        k_arg(&c, v);
        k_arg(&c, v);
        k_check(k, &c, "dst and src may be the very same view: then nothing changes");
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

static void setitem_zero_size(k_ctx *k)
{
    static const int64_t shapes[][3] = { { 0 }, { 3, 0 }, { 0, 4, 2 } };
    for (int i = 0; i < 3; i++) {
        k_call c = k_new(k, K_SETITEM);
        k_arg(&c, k_compact(k, &c, i + 1, shapes[i], K_DISTINCT));
        k_arg(&c, k_compact(k, &c, 1, (int64_t[]){ 1 }, K_NEGATIVE));
        k_check(k, &c, "an empty dst: nothing is written, and that is no error");
        c = k_new(k, K_SETITEM_SCALAR);
        k_arg(&c, k_compact(k, &c, i + 1, shapes[i], K_DISTINCT));
        c.scalar = 7;
        k_check(k, &c, "an empty dst: nothing is written, and that is no error");
    }
}

static void setitem_errors(k_ctx *k)
{
    k_call c = k_new(k, K_SETITEM);
    k_arg(&c, k_compact(k, &c, 2, (int64_t[]){ 3, 4 }, K_DISTINCT));
    k_arg(&c, k_compact(k, &c, 1, (int64_t[]){ 4 }, K_NEGATIVE));
    k_check_bad_arrays(k, &c);
    c = k_new(k, K_SETITEM_SCALAR);
    k_arg(&c, k_compact(k, &c, 2, (int64_t[]){ 3, 4 }, K_DISTINCT));
    k_check_bad_arrays(k, &c);
    /* shapes that do not broadcast to dst's */
    static const struct { int n; int64_t shape[3]; } bad[] = {
        { 1, { 3 } }, { 2, { 4, 4 } }, { 3, { 2, 3, 4 } }, { 2, { 1, 5 } },
    };
    for (int i = 0; i < 4; i++) {
        c = k_new(k, K_SETITEM);
        k_arg(&c, k_compact(k, &c, 2, (int64_t[]){ 3, 4 }, K_DISTINCT));
        k_arg(&c, k_compact(k, &c, bad[i].n, bad[i].shape, K_NEGATIVE));
        k_expect(k, &c, ND_ERR_SHAPE, NULL);
    }
    if (k_dev(k) == ND_CUDA) {   /* src on the other device */
        c = k_new(k, K_SETITEM);
        k_arg(&c, k_compact(k, &c, 2, (int64_t[]){ 3, 4 }, K_DISTINCT));
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
 * axes that are not adjacent at all.  4 * 2^62 is 2^64, which wraps to 0. */
static void extreme_simplify_dims(k_ctx *k)
{
    static const struct {
        int64_t shape[2], sa[2], sb[2];
        bool with_b;
    } cases[] = {
        { { 3, 4 }, { 4, 1 }, { 0 }, false },                    /* merges: valid first */
        { { 0, 4 }, { 0, K_P2(62) }, { 0 }, false },
        { { 3, 4 }, { 4, 1 }, { 0, K_P2(62) }, true },
        { { 2, K_P2(20) }, { INT64_MIN, K_P2(43) }, { 0 }, false },   /* wraps to INT64_MIN */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_simplify(k, 2, cases[i].shape, cases[i].sa, cases[i].with_b ? cases[i].sb : NULL,
                       "shape[k] * strides[k] can overflow int64, and then it equals no "
                       "stride: multiply with nd_mul_ok");
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
    K_TEST(iter_past_end, K_HOST, 0, ITER_HINT),
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
    K_TEST(setitem_zero_size, K_BOTH, 0, SETITEM_HINT),
    K_TEST(setitem_errors, K_BOTH, 0, SETITEM_HINT),
    K_TEST(extreme_simplify_dims, K_HOST, 0, SIMPLIFY_HINT),
    K_TEST(extreme_compact_out_of_memory, K_BOTH, 0, COMPACT_HINT),
};
K_SUITE(public_02, 2, "02_compact", tests);
