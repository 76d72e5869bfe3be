/*
 * test_01_views.c -- public tests of lesson 1, in the lesson's order:
 * nd_compact_strides, nd_is_compact, nd_offset_of, nd_reshape, nd_permute,
 * nd_broadcast_to, nd_slice, nd_diagonal, then views of views.
 *
 * Calls over the kit (tests/kit/kit.h): it makes the input views with
 * nd_as_strided, so a test needs only the function it tests; its reference
 * says what each call must do (the view's shape, the strides of its axes
 * longer than 1 and its offset, or the error), and its comparison writes
 * the message.  A view shares a's buffer with one more reference and
 * changes neither a nor the data; a failed call leaves its output as it was.
 */
#include "kit.h"

#define STRIDES_HINT "strides[k] is the product of the sizes after axis k (the last axis " \
    "has stride 1; a size 0 after axis k makes it 0); write exactly ndim entries"
#define COMPACT_HINT "compact means row-major element i is at offset + i: compare each " \
    "stride with the compact one from the last axis, skipping size-1 axes; an array with " \
    "no elements is compact, and the offset does not matter"
#define OFFSET_HINT "offset + sum of index[k] * strides[k], strides signed; every index " \
    "must satisfy 0 <= index[k] < shape[k] (never wrapped)"
#define RESHAPE_HINT "a compact array reshaped keeps its offset and gets the compact " \
    "strides of the new shape; -1 is the element count divided by the other sizes"
#define PERMUTE_HINT "out axis i is a's axis axes[i] (negative axes count from the end): " \
    "take its size and its stride; the offset stays"
#define BROADCAST_HINT "align the shapes at the right; a new leading axis and a stretched " \
    "size-1 axis get stride 0, other axes keep their stride; the offset stays"
#define SLICE_HINT "per axis, like Python's slice.indices(): a negative bound adds the " \
    "size, then clips; a negative step's default start is the LAST position; offset += " \
    "first*stride, stride *= step; an integer adds i*stride and drops its axis"
#define DIAGONAL_HINT "element j is at j+max(-offset,0) on axis1 and j+max(offset,0) on " \
    "axis2; the other axes keep their order; the diagonal is the new LAST axis, with " \
    "stride strides[axis1]+strides[axis2]"
#define OUT_HINT "when out is a, compute the new layout in locals, then let " \
    "nd_as_strided(a, ..., out) replace a's view and its reference"

static const int64_t S234[3] = { 2, 3, 4 }, S34[2] = { 3, 4 }, S23[2] = { 2, 3 };

/* ---------------------------------------------------------------------- */
/* nd_compact_strides, nd_is_compact, nd_offset_of                        */
/* ---------------------------------------------------------------------- */

static void compact_strides_known(k_ctx *k)
{
    static const struct { int ndim; int64_t shape[4]; } cases[] = {
        { 3, { 2, 3, 4 } }, { 1, { 5 } }, { 3, { 7, 1, 3 } }, { 4, { 2, 1, 1, 6 } },
        { 2, { 1, 1 } },    { 0, { 0 } }, { 3, { 4, 0, 3 } },
        { 2, { 3, INT64_C(1) << 40 } },   /* a stride past 32 bits */
    };
    for (int i = 0; i < 8; i++)
        k_expect_list(k, k_new(k, K_COMPACT_STRIDES), cases[i].ndim, cases[i].shape, ND_OK,
                      STRIDES_HINT);
}

static void compact_strides_random(k_ctx *k)
{
    for (int i = 0; i < 300; i++) {
        int64_t shape[ND_MAX_DIMS];
        int nd = k_shape(k, (int)k_int(k, 0, ND_MAX_DIMS), i % 4 ? 1 : 0, 6, 100000, shape);
        k_expect_list(k, k_new(k, K_COMPACT_STRIDES), nd, shape, ND_OK, STRIDES_HINT);
    }
}

static void compact_strides_errors(k_ctx *k)
{
    int64_t shape[K_LIST] = { 2, 3, 1, 1, 1, 1, 1, 1, 1 };
    k_call c = k_new(k, K_COMPACT_STRIDES);
    k_list(&c, 0, 2, shape);
    k_check_bad_arrays(k, &c);   /* shape NULL, strides NULL */
    k_expect_list(k, c, ND_MAX_DIMS + 1, shape, ND_ERR_ARG, NULL);
    k_expect_list(k, c, -1, shape, ND_ERR_ARG, NULL);
    k_expect_list(k, c, 2, (int64_t[]){ 2, -3 }, ND_ERR_ARG, NULL);
}

static void is_compact_known(k_ctx *k)
{
    static const struct {
        const char *what;
        int ndim;
        int64_t shape[3], strides[3], offset;
    } cases[] = {
        { "a fresh (2,3) array is compact", 2, { 2, 3 }, { 3, 1 }, 0 },
        { "a (2,2) window at offset 3 is compact: the offset does not matter", 2, { 2, 2 },
          { 2, 1 }, 3 },
        { "x[2:5] of arange(10) is compact, at offset 2", 1, { 3 }, { 1 }, 2 },
        { "a transpose is not compact", 2, { 3, 2 }, { 1, 3 }, 0 },
        { "every 2nd element (x[::2]) is not compact", 1, { 3 }, { 2 }, 0 },
        { "a reversed array is not compact", 1, { 4 }, { -1 }, 3 },
        { "rows with a gap after each are not compact", 2, { 2, 3 }, { 4, 1 }, 0 },
        { "a broadcast (stride 0) is not compact", 1, { 3 }, { 0 }, 0 },
        { "broadcast rows are not compact", 2, { 2, 3 }, { 0, 1 }, 0 },
        { "a size-1 axis's stride never matters: compact", 3, { 2, 1, 3 }, { 3, 99, 1 }, 0 },
        { "a size-1 axis with stride -7: compact", 2, { 1, 4 }, { -7, 1 }, 2 },
        { "an empty array is compact, whatever its strides", 2, { 3, 0 }, { 5, -2 }, 4 },
        { "an empty array is compact", 1, { 0 }, { 3 }, 0 },
        { "a scalar is compact", 0, { 0 }, { 0 }, 5 },
        { "only size-1 axes: compact", 3, { 1, 1, 1 }, { 0, -4, 9 }, 1 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        k_call c = k_on_view(k, K_IS_COMPACT, 16, cases[i].ndim, cases[i].shape,
                             cases[i].strides, cases[i].offset);
        k_check(k, &c, cases[i].what);
    }
}

static void is_compact_random(k_ctx *k)
{
    for (int i = 0; i < 300; i++) {
        int64_t shape[ND_MAX_DIMS];
        int nd = k_shape(k, (int)k_int(k, 0, 6), i % 3 ? 1 : 0, 5, 4096, shape);
        k_call c = k_new(k, K_IS_COMPACT);
        /* windows and compact arrays with junk size-1 strides, or any view */
        k_arg(&c, k_view(k, &c, nd, shape, i % 2 ? K_WINDOW | K_JUNK : K_ANY | K_REPEAT,
                         K_DISTINCT));
        k_check(k, &c, COMPACT_HINT);
    }
}

static void is_compact_errors(k_ctx *k)
{
    k_call c = k_on_array(k, K_IS_COMPACT, 2, S23);
    k_check_bad_arrays(k, &c);
}

static void offset_of_known(k_ctx *k)
{
    static const struct {
        const char *what;
        int ndim;
        int64_t shape[2], strides[2], offset, index[2];
    } cases[] = {
        { "(3,4) compact: 1*4 + 2*1 = 6", 2, { 3, 4 }, { 4, 1 }, 0, { 1, 2 } },
        { "(3,4) compact: the first element", 2, { 3, 4 }, { 4, 1 }, 0, { 0, 0 } },
        { "(3,4) compact: the last element", 2, { 3, 4 }, { 4, 1 }, 0, { 2, 3 } },
        { "a transpose: 3*1 + 1*4", 2, { 4, 3 }, { 1, 4 }, 0, { 3, 1 } },
        { "reversed: 3 + 3*(-1) = 0", 1, { 4 }, { -1 }, 3, { 3 } },
        { "a scalar: the offset itself", 0, { 0 }, { 0 }, 5, { 0 } },
    };
    for (int i = 0; i < 6; i++)
        k_expect_list(k, k_on_view(k, K_OFFSET_OF, 12, cases[i].ndim, cases[i].shape,
                                   cases[i].strides, cases[i].offset),
                      cases[i].ndim, cases[i].index, ND_OK, cases[i].what);
}

static void offset_of_random(k_ctx *k)
{
    for (int i = 0; i < 300; i++) {
        int64_t shape[ND_MAX_DIMS];
        int nd = k_shape(k, (int)k_int(k, 0, 6), 1, 6, 4096, shape);
        k_call c = k_new(k, K_OFFSET_OF);
        k_arg(&c, k_view(k, &c, nd, shape, K_ANY | K_REPEAT, K_DISTINCT));
        k_view_args(k, &c);
        k_call bad = c;
        k_check(k, &c, OFFSET_HINT);
        if (nd == 0)
            continue;
        /* the same view (over a new buffer: the check freed c's), one index out of
         * range, either side: never wrapped */
        int d = (int)k_int(k, 0, nd - 1);
        int64_t outside[4] = { shape[d], shape[d] + k_int(k, 1, 5), -1, -shape[d] };
        bad.bufs[0].v = k_floats(k, bad.bufs[0].n);
        bad.list[0][d] = outside[k_int(k, 0, 3)];
        k_expect(k, &bad, ND_ERR_INDEX, OFFSET_HINT);
    }
}

static void offset_of_errors(k_ctx *k)
{
    static const int64_t bad[][2] = { { 1, 1 }, { 1, -1 }, { 2, 0 }, { 0, 3 } };
    k_call c = k_on_array(k, K_OFFSET_OF, 2, S23);
    k_list(&c, 0, 2, bad[0]);
    k_check_bad_arrays(k, &c);   /* and index NULL, offset NULL */
    for (int i = 1; i < 4; i++)
        k_expect_list(k, k_on_array(k, K_OFFSET_OF, 2, S23), 2, bad[i], ND_ERR_INDEX, NULL);
    k_expect_list(k, k_on_array(k, K_OFFSET_OF, 2, (int64_t[]){ 2, 0 }), 2,
                  (int64_t[]){ 0, 0 }, ND_ERR_INDEX, "an empty array has no element at all");
}

/* ---------------------------------------------------------------------- */
/* nd_reshape                                                             */
/* ---------------------------------------------------------------------- */

static void reshape_known(k_ctx *k)
{
    static const struct { int ndim; int64_t shape[3]; int to; int64_t given[3]; } cases[] = {
        { 1, { 12 }, 2, { 3, 4 } },   { 2, { 3, 4 }, 3, { 2, -1, 3 } },
        { 2, { 3, 4 }, 1, { -1 } },   { 2, { 2, 3 }, 2, { 3, 2 } },
        { 2, { 1, 1 }, 0, { 0 } },    { 0, { 0 }, 3, { 1, -1, 1 } },
        { 2, { 0, 3 }, 2, { -1, 3 } }, { 2, { 0, 3 }, 3, { 3, 0, 5 } },
    };
    for (int i = 0; i < 8; i++)
        k_expect_list(k, k_on_array(k, K_RESHAPE, cases[i].ndim, cases[i].shape), cases[i].to,
                      cases[i].given, ND_OK, RESHAPE_HINT);
}

static void reshape_keeps_offset(k_ctx *k)
{
    k_expect_list(k, k_on_view(k, K_RESHAPE, 20, 2, S34, (int64_t[]){ 4, 1 }, 5), 2,
                  (int64_t[]){ 2, 6 }, ND_OK, "a compact window at offset 5 keeps offset 5 "
                  "and gets the new shape's compact strides (6,1)");
    k_expect_list(k, k_on_view(k, K_RESHAPE, 16, 3, (int64_t[]){ 3, 1, 4 },
                               (int64_t[]){ 4, -9, 1 }, 2), 1, (int64_t[]){ 12 }, ND_OK,
                  "a size-1 axis with stride -9 is still compact: its stride never matters");
}

static void reshape_random(k_ctx *k)
{
    for (int i = 0; i < 300; i++) {   /* compact views, reshaped twice */
        int64_t shape[ND_MAX_DIMS];
        int nd = k_shape(k, (int)k_int(k, 0, 6), i % 3 ? 1 : 0, 5, 4096, shape);
        k_call c = k_new(k, K_RESHAPE);
        k_arg(&c, k_view(k, &c, nd, shape, K_WINDOW | K_JUNK, K_DISTINCT));
        k_view_args(k, &c);
        k_check_then(k, &c, K_RESHAPE, RESHAPE_HINT);
        k_check(k, &c, RESHAPE_HINT);
    }
    /* any view: reshaped if compact, refused if not */
    k_check_random_views(k, K_RESHAPE, 300, 0, 6, 5, false, RESHAPE_HINT);
}

static void reshape_errors(k_ctx *k)
{
    static const struct { int ndim; int64_t shape[2]; nd_status want; } bad[] = {
        { 2, { 6, 2 }, ND_OK },          { 2, { 5, 2 }, ND_ERR_SHAPE },
        { 2, { 5, -1 }, ND_ERR_SHAPE },  { 2, { -1, -1 }, ND_ERR_ARG },
        { 2, { -2, -6 }, ND_ERR_ARG },
    };
    for (int i = 0; i < 5; i++)
        k_expect_list(k, k_on_array(k, K_RESHAPE, 2, S34), bad[i].ndim, bad[i].shape,
                      bad[i].want, RESHAPE_HINT);
    k_call c = k_on_array(k, K_RESHAPE, 2, S34);
    k_list(&c, 0, 2, bad[0].shape);
    k_check_bad_arrays(k, &c);
    /* ndim out of range, on a one-element array so that only ndim is wrong */
    int64_t ones[K_LIST] = { 1, 1, 1, 1, 1, 1, 1, 1, 1 };
    k_expect_list(k, k_on_array(k, K_RESHAPE, 1, ones), ND_MAX_DIMS + 1, ones, ND_ERR_ARG, NULL);
    k_expect_list(k, k_on_array(k, K_RESHAPE, 1, ones), -1, ones, ND_ERR_ARG, NULL);
    k_expect_list(k, k_on_array(k, K_RESHAPE, 2, (int64_t[]){ 0, 3 }), 2,
                  (int64_t[]){ 0, -1 }, ND_ERR_SHAPE, "a -1 beside a 0 cannot be inferred");
    k_expect_list(k, k_on_view(k, K_RESHAPE, 12, 2, (int64_t[]){ 4, 3 }, (int64_t[]){ 1, 4 }, 0),
                  1, (int64_t[]){ 12 }, ND_ERR_LAYOUT, "a transpose is not compact");
}

/* ---------------------------------------------------------------------- */
/* nd_permute and nd_broadcast_to                                         */
/* ---------------------------------------------------------------------- */

static void permute_known(k_ctx *k)
{
    k_expect_list(k, k_on_array(k, K_PERMUTE, 2, S23), 2, (int64_t[]){ 1, 0 }, ND_OK,
                  "a transpose: shape (3,2), strides (1,3)");
    k_expect_list(k, k_on_array(k, K_PERMUTE, 3, S234), 3, (int64_t[]){ 2, 0, 1 }, ND_OK,
                  "shape (4,2,3), strides (1,12,4)");
    k_expect_list(k, k_on_array(k, K_PERMUTE, 3, S234), 3, (int64_t[]){ -1, -3, -2 }, ND_OK,
                  "negative axes count from the end: (-1,-3,-2) is (2,0,1)");
}

static void permute_random(k_ctx *k)
{
    k_check_random_views(k, K_PERMUTE, 300, 0, 6, 5, true, PERMUTE_HINT);
}

static void permute_errors(k_ctx *k)
{
    static const int64_t bad[][3] = { { 1, 2, 0 }, { 0, 1, 3 }, { -4, 1, 2 }, { 0, 0, 1 },
                                      { 0, 2, -1 } };
    for (int i = 0; i < 5; i++)
        k_expect_list(k, k_on_array(k, K_PERMUTE, 3, S234), 3, bad[i],
                      i ? ND_ERR_AXIS : ND_OK, PERMUTE_HINT);
    k_call c = k_on_array(k, K_PERMUTE, 3, S234);
    k_list(&c, 0, 3, bad[0]);
    k_check_bad_arrays(k, &c);
}

static void broadcast_known(k_ctx *k)
{
    static const struct { int ndim; int64_t shape[2]; int to; int64_t target[3]; } cases[] = {
        { 1, { 3 }, 2, { 3, 3 } },       /* NumPy's broadcast_to([1,2,3], (3,3)) */
        { 2, { 3, 1 }, 2, { 3, 4 } },    { 0, { 0 }, 2, { 2, 2 } },
        { 2, { 1, 3 }, 3, { 2, 1, 3 } }, { 2, { 2, 3 }, 2, { 2, 3 } },
        { 1, { 0 }, 2, { 4, 0 } },       { 1, { 1 }, 1, { 0 } },
    };
    for (int i = 0; i < 7; i++)
        k_expect_list(k, k_on_array(k, K_BROADCAST_TO, cases[i].ndim, cases[i].shape),
                      cases[i].to, cases[i].target, ND_OK, BROADCAST_HINT);
    k_expect_list(k, k_on_view(k, K_BROADCAST_TO, 12, 1, (int64_t[]){ 4 }, (int64_t[]){ 1 }, 4),
                  3, S234, ND_OK, "a row at offset 4 stays at offset 4: strides (0,0,1)");
}

static void broadcast_random(k_ctx *k)
{
    k_check_random_views(k, K_BROADCAST_TO, 300, 0, 5, 5, true, BROADCAST_HINT);
}

static void broadcast_errors(k_ctx *k)
{
    static const struct {
        int ndim; int64_t shape[2]; int to; int64_t target[K_LIST]; nd_status want;
    } cases[] = {
        { 2, { 3, 2 }, 3, { 4, 3, 2 }, ND_OK },
        { 2, { 3, 2 }, 2, { 3, 4 }, ND_ERR_SHAPE },
        { 2, { 3, 2 }, 1, { 2 }, ND_ERR_SHAPE },   /* fewer axes than a */
        { 2, { 1, 3 }, 1, { 3 }, ND_ERR_SHAPE },   /* even when the extra one has size 1 */
        { 1, { 3 }, 1, { 0 }, ND_ERR_SHAPE },      /* 3 does not stretch to 0 */
        { 1, { 0 }, 1, { 1 }, ND_ERR_SHAPE },      /* nor 0 to 1 */
        { 2, { 3, 2 }, 3, { -1, 3, 2 }, ND_ERR_ARG },
        { 2, { 3, 2 }, ND_MAX_DIMS + 1, { 1, 1, 1, 1, 1, 1, 1, 3, 2 }, ND_ERR_ARG },
        { 2, { 3, 2 }, -1, { 3, 2 }, ND_ERR_ARG },
    };
    for (int i = 0; i < 9; i++)
        k_expect_list(k, k_on_array(k, K_BROADCAST_TO, cases[i].ndim, cases[i].shape),
                      cases[i].to, cases[i].target, cases[i].want, BROADCAST_HINT);
    k_call c = k_on_array(k, K_BROADCAST_TO, 2, cases[0].shape);
    k_list(&c, 0, 3, cases[0].target);
    k_check_bad_arrays(k, &c);
}

/* ---------------------------------------------------------------------- */
/* nd_slice                                                               */
/* ---------------------------------------------------------------------- */

static void slice_of(k_ctx *k, k_call c, int n, const nd_index *idx, nd_status want,
                     const char *hint)
{
    k_index(&c, n, idx);
    k_expect(k, &c, want, hint);
}

static void slice_numpy_examples(k_ctx *k)
{
    /* x = arange(10), y = arange(12).reshape(3,4), z = arange(6).reshape(2,3,1),
     * w = zeros((0,3)) */
    static const int64_t bases[4][4] = { { 1, 10 }, { 2, 3, 4 }, { 3, 2, 3, 1 }, { 2, 0, 3 } };
    const nd_index back = ND_SLICE(ND_NONE, ND_NONE, -1);
    const struct { const char *text; int base, n; nd_index idx[3]; } cases[] = {
        { "x[1:7:2]", 0, 1, { ND_SLICE(1, 7, 2) } }, { "x[-2:10]", 0, 1, { ND_SLICE(-2, 10, 1) } },
        { "x[-3:3:-1]", 0, 1, { ND_SLICE(-3, 3, -1) } },
        { "x[5:]", 0, 1, { ND_SLICE(5, ND_NONE, 1) } },
        { "x[::-1]: a negative step starts at the last element", 0, 1, { back } },
        { "x[::-3]", 0, 1, { ND_SLICE(ND_NONE, ND_NONE, -3) } },
        { "x[8:1:-3]", 0, 1, { ND_SLICE(8, 1, -3) } },
        { "x[5::-1]", 0, 1, { ND_SLICE(5, ND_NONE, -1) } },
        { "x[::100]", 0, 1, { ND_SLICE(ND_NONE, ND_NONE, 100) } },
        { "x[::-100]", 0, 1, { ND_SLICE(ND_NONE, ND_NONE, -100) } },
        { "x[-100:100]: bounds are clipped", 0, 1, { ND_SLICE(-100, 100, 1) } },
        { "x[:-100:-1]", 0, 1, { ND_SLICE(ND_NONE, -100, -1) } },
        { "x[100::-2]", 0, 1, { ND_SLICE(100, ND_NONE, -2) } },
        { "x[INT64_MAX:] is empty", 0, 1, { ND_SLICE(INT64_MAX, ND_NONE, 1) } },
        { "x[-INT64_MAX:INT64_MAX]", 0, 1, { ND_SLICE(-INT64_MAX, INT64_MAX, 1) } },
        { "x[-100::-1] is empty", 0, 1, { ND_SLICE(-100, ND_NONE, -1) } },
        { "x[100:] is empty", 0, 1, { ND_SLICE(100, ND_NONE, 1) } },
        { "x[:-100] is empty", 0, 1, { ND_SLICE(ND_NONE, -100, 1) } },
        { "x[5:2] is empty", 0, 1, { ND_SLICE(5, 2, 1) } },
        { "x[2:5:-1] is empty", 0, 1, { ND_SLICE(2, 5, -1) } },
        { "x[5:-1:-1] is empty: stop -1 means 9", 0, 1, { ND_SLICE(5, -1, -1) } },
        { "x[-1]: an integer drops its axis", 0, 1, { ND_AT(-1) } },
        { "x[-10]", 0, 1, { ND_AT(-10) } }, { "y[1]", 1, 1, { ND_AT(1) } },
        { "y[:, 1]", 1, 2, { ND_ALL, ND_AT(1) } }, { "y[1, -1]", 1, 2, { ND_AT(1), ND_AT(-1) } },
        { "y[::-1, ::2]", 1, 2, { back, ND_SLICE(ND_NONE, ND_NONE, 2) } },
        { "y[::-1, ::-1]: offset 11, strides (-4,-1)", 1, 2, { back, back } },
        { "y[1:, ::-2], the lesson's example", 1, 2,
          { ND_SLICE(1, ND_NONE, 1), ND_SLICE(ND_NONE, ND_NONE, -2) } },
        { "y[-1:, 1:3]", 1, 2, { ND_SLICE(-1, ND_NONE, 1), ND_SLICE(1, 3, 1) } },
        { "y[:, 3:1:-1]", 1, 2, { ND_ALL, ND_SLICE(3, 1, -1) } },
        { "y[5:] is empty", 1, 1, { ND_SLICE(5, ND_NONE, 1) } },
        { "y[()]: no index, all of y", 1, 0, { ND_ALL } },
        { "z[1:2]", 2, 1, { ND_SLICE(1, 2, 1) } },
        { "z[:, :, 0]", 2, 3, { ND_ALL, ND_ALL, ND_AT(0) } },
        { "z[0, 1]: axes past the index are taken whole", 2, 2, { ND_AT(0), ND_AT(1) } },
        { "z[-1, ::-2, 0]", 2, 3, { ND_AT(-1), ND_SLICE(ND_NONE, ND_NONE, -2), ND_AT(0) } },
        { "w[:, 1] of an empty w", 3, 2, { ND_ALL, ND_AT(1) } },
        { "w[:, ::-1] of an empty w", 3, 2, { ND_ALL, back } },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const int64_t *b = bases[cases[i].base];
        slice_of(k, k_on_array(k, K_SLICE, (int)b[0], b + 1), cases[i].n, cases[i].idx, ND_OK,
                 cases[i].text);
    }
}

static void slice_negative_step(k_ctx *k)
{
    nd_index back = ND_SLICE(ND_NONE, ND_NONE, -1);
    slice_of(k, k_on_array(k, K_SLICE, 1, (int64_t[]){ 10 }), 1, &back, ND_OK,
             "x[::-1] starts at the last element: offset 9, stride -1");
    slice_of(k, k_on_view(k, K_SLICE, 10, 1, (int64_t[]){ 10 }, (int64_t[]){ -1 }, 9), 1,
             &back, ND_OK, "x[::-1][::-1] is x again: offset 0, stride 1");
}

static void slice_random(k_ctx *k)
{
    k_check_random_views(k, K_SLICE, 300, 0, 6, 7, false, SLICE_HINT);
}

static void slice_of_slice(k_ctx *k)
{
    k_check_random_views(k, K_SLICE, 300, 0, 6, 7, true, SLICE_HINT);
}

static void slice_errors(k_ctx *k)
{
    nd_index kind7 = ND_ALL;
    kind7.kind = (nd_index_kind)7;
    const struct { int n; nd_index idx[2]; nd_status want; } bad[] = {
        { 2, { ND_SLICE(1, ND_NONE, 1), ND_AT(-1) }, ND_OK },
        { 2, { ND_ALL, ND_SLICE(0, 2, 0) }, ND_ERR_INDEX },
        { 1, { ND_AT(3) }, ND_ERR_INDEX },
        { 2, { ND_ALL, ND_AT(-5) }, ND_ERR_INDEX },
        { 1, { kind7 }, ND_ERR_ARG },
        { 3, { ND_ALL, ND_ALL }, ND_ERR_ARG },
        { -1, { ND_ALL }, ND_ERR_ARG },
    };
    for (int i = 0; i < 7; i++)
        slice_of(k, k_on_array(k, K_SLICE, 2, S34), bad[i].n, bad[i].idx, bad[i].want,
                 SLICE_HINT);
    k_call c = k_on_array(k, K_SLICE, 2, S34);
    k_index(&c, 2, bad[0].idx);
    k_check_bad_arrays(k, &c);
    slice_of(k, k_on_array(k, K_SLICE, 2, (int64_t[]){ 0, 2 }), 1, bad[0].idx + 1,
             ND_ERR_INDEX, "an integer cannot index an empty axis");
}

/* ---------------------------------------------------------------------- */
/* nd_diagonal                                                            */
/* ---------------------------------------------------------------------- */

static void diagonal_of(k_ctx *k, k_call c, int64_t offset, int axis1, int axis2,
                        nd_status want, const char *hint)
{
    c.at[0] = offset;
    c.at[1] = axis1;
    c.at[2] = axis2;
    k_expect(k, &c, want, hint);
}

static void diagonal_known(k_ctx *k)
{
    static const struct {
        const char *text;
        int ndim;
        int64_t shape[4], offset;
        int axis1, axis2;
    } cases[] = {
        { "arange(4).reshape(2,2).diagonal()", 2, { 2, 2 }, 0, 0, 1 },
        { "arange(4).reshape(2,2).diagonal(1)", 2, { 2, 2 }, 1, 0, 1 },
        { "arange(4).reshape(2,2).diagonal(-1)", 2, { 2, 2 }, -1, 0, 1 },
        { "arange(8).reshape(2,2,2).diagonal(0, 0, 1): the diagonal is the last axis", 3,
          { 2, 2, 2 }, 0, 0, 1 },
        { "arange(24).reshape(2,3,4).diagonal(0, 0, 2)", 3, { 2, 3, 4 }, 0, 0, 2 },
        { "arange(24).reshape(2,3,4).diagonal(1, 0, 2)", 3, { 2, 3, 4 }, 1, 0, 2 },
        { "arange(24).reshape(2,3,4).diagonal(0, -1, 0)", 3, { 2, 3, 4 }, 0, -1, 0 },
        { "arange(12).reshape(3,4).diagonal(1, 1, 0): offset moves along axis2", 2, { 3, 4 },
          1, 1, 0 },
        { "arange(36).reshape(2,3,2,3).diagonal(-1, 1, 3)", 4, { 2, 3, 2, 3 }, -1, 1, 3 },
        { "a (2,3,3) stack of matrices: strides (9,4)", 3, { 2, 3, 3 }, 0, 1, 2 },
        { "zeros((0,2,3)).diagonal(1, 1, 2) is empty", 3, { 0, 2, 3 }, 1, 1, 2 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        diagonal_of(k, k_on_array(k, K_DIAGONAL, cases[i].ndim, cases[i].shape),
                    cases[i].offset, cases[i].axis1, cases[i].axis2, ND_OK, cases[i].text);
}

static void diagonal_offsets(k_ctx *k)
{
    /* arange(12).reshape(3,4).diagonal(offset), from far below to far above */
    static const int64_t offsets[] = { 0, 1, 2, 3, 4, 100, -1, -2, -3, -100, INT64_MAX,
                                       -INT64_MAX };
    for (int i = 0; i < 12; i++)
        diagonal_of(k, k_on_array(k, K_DIAGONAL, 2, S34), offsets[i], 0, 1, ND_OK,
                    "offset > 0 starts at column offset, offset < 0 at row -offset; a "
                    "diagonal past the edge is empty");
}

static void diagonal_random(k_ctx *k)
{
    k_check_random_views(k, K_DIAGONAL, 300, 2, 5, 5, false, DIAGONAL_HINT);
}

static void diagonal_errors(k_ctx *k)
{
    static const int axes[][2] = { { 0, 2 }, { 1, 1 }, { 0, -3 }, { 0, 3 }, { -4, 1 } };
    for (int i = 0; i < 5; i++)
        diagonal_of(k, k_on_array(k, K_DIAGONAL, 3, S234), 0, axes[i][0], axes[i][1],
                    i ? ND_ERR_AXIS : ND_OK, NULL);
    k_call c = k_on_array(k, K_DIAGONAL, 3, S234);
    c.at[2] = 1;
    k_check_bad_arrays(k, &c);
    for (int nd = 0; nd < 2; nd++)   /* fewer than 2 axes */
        diagonal_of(k, k_on_array(k, K_DIAGONAL, nd, (int64_t[]){ 4 }), 0, 0, 1, ND_ERR_ARG,
                    NULL);
}

/* ---------------------------------------------------------------------- */
/* All views                                                              */
/* ---------------------------------------------------------------------- */

/* Views of views of views: chains of 2 to 4 random views, each checked. */
static void views_chain_random(k_ctx *k)
{
    k_check_view_chains(k, 300, 2, 4, 4, 4, false, "each view function starts from its "
                        "input's offset and strides, whatever view made it");
}

/* out may be the input struct itself: f(&x, ..., &x) replaces x's view. */
static void views_out_is_input(k_ctx *k)
{
    static const k_op ops[] = { K_PERMUTE, K_RESHAPE, K_BROADCAST_TO, K_SLICE, K_DIAGONAL };
    static const int64_t lists[][4] = { { 2, 0, 1 }, { 4, 6 }, { 2, 2, 3, 4 } };
    static const int n[] = { 3, 2, 4 };
    for (int i = 0; i < 5; i++) {
        k_call c = k_on_array(k, ops[i], 3, S234);
        c.out = 0;
        if (i < 3)
            k_list(&c, 0, n[i], lists[i]);
        else if (i == 3)
            k_index(&c, 2, (nd_index[]){ ND_AT(-1), ND_SLICE(ND_NONE, ND_NONE, -2) });
        c.at[0] = c.at[2] = 1;   /* diagonal(1, 2, 1) */
        c.at[1] = 2;
        k_check(k, &c, OUT_HINT);
    }
}

/* Every function that takes an array refuses a NULL, released or broken
 * one (and a NULL out) with ND_ERR_ARG, naming itself, writing nothing. */
static void views_reject_bad_arrays(k_ctx *k)
{
    static const k_op ops[] = { K_IS_COMPACT, K_OFFSET_OF, K_RESHAPE, K_PERMUTE,
                                K_BROADCAST_TO, K_SLICE, K_DIAGONAL };
    for (int i = 0; i < 7; i++) {
        k_call c = k_on_array(k, ops[i], 2, S23);
        k_view_args(k, &c);
        k_check_bad_arrays(k, &c);
    }
}

/* ---------------------------------------------------------------------- */
/* Extreme shapes, strides and offsets (issue #17)                         */
/* ---------------------------------------------------------------------- */

/* The rules of "Valid arrays" in nd.h bound sizes and the elements an
 * array reaches, but not the strides it never steps along (size-1 axes,
 * arrays with no elements), which may hold any int64: arithmetic on them
 * must be checked (nd_add_ok, nd_mul_ok in internal.h) or skipped.  Run
 * these with SAN=1 too: an overflow is undefined behaviour, which UBSan
 * turns into a failure even where the wrapped value happens to pass. */
#define EXTREME_HINT "strides that are never stepped along may be any int64 (nd.h, \"Valid " \
    "arrays\", rule 4): add and multiply them with nd_add_ok / nd_mul_ok, or not at all"

/* Shapes whose sizes other than 0 multiply past ND_MAX_NUMEL are refused,
 * whatever their order; their compact strides once overflowed. */
static void extreme_compact_strides_reshape(k_ctx *k)
{
    static const int64_t wide[3] = { 0, K_P2(62), 4 }, most[3] = { K_P2(40), 0, K_P2(18) },
                         seven[8] = { 7, 7, 7, 7, 7, 7, 0, INT64_MAX };
    k_call c = k_new(k, K_COMPACT_STRIDES);
    k_expect_list(k, c, 3, S234, ND_OK, STRIDES_HINT);
    k_expect_list(k, c, 3, wide, ND_ERR_ARG, STRIDES_HINT);
    k_expect_list(k, c, 3, most, ND_OK, STRIDES_HINT);
    k_expect_list(k, c, 8, seven, ND_ERR_ARG, STRIDES_HINT);
    static const int64_t zero = 0;
    c = k_on_array(k, K_RESHAPE, 1, &zero);
    k_expect_list(k, c, 3, wide, ND_ERR_ARG, RESHAPE_HINT);
    c = k_on_array(k, K_RESHAPE, 1, &zero);
    k_expect_list(k, c, 8, seven, ND_ERR_ARG, RESHAPE_HINT);
    c = k_on_array(k, K_RESHAPE, 1, &zero);
    k_expect_list(k, c, 3, most, ND_OK, RESHAPE_HINT);
}

/* (7,7,7,7,7,7,0,INT64_MAX) was once a valid shape in that order and not
 * after a permute; now it is refused in every order, every permutation of
 * a valid array is valid, and so are its diagonals: (7,7,7,7,7,7,0,2^41)
 * is valid in any order. */
static void extreme_permute_diagonal_valid(k_ctx *k)
{
    static const int64_t seven[8] = { 7, 7, 7, 7, 7, 7, 0, INT64_MAX },
                         shape[8] = { 7, 7, 7, 7, 7, 7, 0, K_P2(41) },
                         strides[8] = { 0, 0, 0, 0, 0, 0, K_P2(41), 1 };
    for (int r = 0; r < 8; r++) {
        int64_t axes[8];
        for (int i = 0; i < 8; i++)
            axes[i] = (i + r) % 8;
        k_expect_list(k, k_on_view(k, K_PERMUTE, 1, 8, shape, strides, 0), 8, axes, ND_OK,
                      PERMUTE_HINT);
    }
    k_expect_list(k, k_on_view(k, K_BROADCAST_TO, 1, 0, seven, seven, 0), 8, seven, ND_ERR_ARG,
                  BROADCAST_HINT);   /* a 0-d array to that shape */
    diagonal_of(k, k_on_view(k, K_DIAGONAL, 1, 8, shape, strides, 0), 0, 0, 7, ND_OK,
                DIAGONAL_HINT);
    diagonal_of(k, k_on_view(k, K_DIAGONAL, 1, 8, shape, strides, 1), 0, 3, 6, ND_OK,
                DIAGONAL_HINT);
}

/* nd_diagonal adds two strides, and strides of size-1 axes may be
 * anything; the start of an array with no elements must not move. */
static void extreme_diagonal_strides(k_ctx *k)
{
    static const int64_t s22[2] = { 2, 2 }, t22[2] = { 2, 1 }, ones[2] = { 1, 1 },
                         mins[2] = { INT64_MIN, INT64_MIN }, s304[3] = { 3, 0, 4 },
                         big[3] = { K_P2(62), 1, K_P2(62) }, offs[4] = { 2, -2, 0, INT64_MAX };
    diagonal_of(k, k_on_view(k, K_DIAGONAL, 4, 2, s22, t22, 0), 0, 0, 1, ND_OK, DIAGONAL_HINT);
    diagonal_of(k, k_on_view(k, K_DIAGONAL, 4, 2, ones, mins, 3), 0, 0, 1, ND_OK,
                "strides[axis1] + strides[axis2] overflows here: add with nd_add_ok");
    for (int i = 0; i < 4; i++)   /* (3,0,4): no elements, any strides */
        diagonal_of(k, k_on_view(k, K_DIAGONAL, 4, 3, s304, big, 0), offs[i], 0, 2, ND_OK,
                    EXTREME_HINT);
}

/* In slicing and nd_offset_of: on an array with no elements an index times
 * its axis' stride may overflow, and must not be computed. */
static void extreme_slice_offset_of_empty(k_ctx *k)
{
    static const int64_t s22[2] = { 2, 2 }, t22[2] = { 2, 1 }, one1[2] = { 1, 1 },
                         s50[2] = { 5, 0 }, huge[2] = { INT64_MAX, 1 }, last[2] = { 4, 0 };
    k_expect_list(k, k_on_view(k, K_OFFSET_OF, 4, 2, s22, t22, 0), 2, one1, ND_OK,
                  OFFSET_HINT);
    k_expect_list(k, k_on_view(k, K_OFFSET_OF, 4, 2, s50, huge, 2), 2, last, ND_ERR_INDEX,
                  OFFSET_HINT);
    static const nd_index at4[1] = { ND_AT(4) }, from4[1] = { ND_SLICE(4, 5, 1) };
    const nd_index *idx[2] = { at4, from4 };
    for (int i = 0; i < 2; i++) {
        k_call c = k_on_view(k, K_SLICE, 4, 2, s50, huge, 2);
        k_index(&c, 1, idx[i]);
        k_expect(k, &c, ND_OK, EXTREME_HINT);
    }
}

static const k_test tests[] = {
    K_TEST(compact_strides_known, K_HOST, 0, STRIDES_HINT),
    K_TEST(compact_strides_random, K_HOST, 0, STRIDES_HINT),
    K_TEST(compact_strides_errors, K_HOST, 0, STRIDES_HINT),
    K_TEST(is_compact_known, K_CPU, 0, COMPACT_HINT),
    K_TEST(is_compact_random, K_CPU, 0, COMPACT_HINT),
    K_TEST(is_compact_errors, K_CPU, 0, COMPACT_HINT),
    K_TEST(offset_of_known, K_CPU, 0, OFFSET_HINT),
    K_TEST(offset_of_random, K_CPU, 0, OFFSET_HINT),
    K_TEST(offset_of_errors, K_CPU, 0, OFFSET_HINT),
    K_TEST(reshape_known, K_CPU, 0, RESHAPE_HINT),
    K_TEST(reshape_keeps_offset, K_CPU, 0, RESHAPE_HINT),
    K_TEST(reshape_random, K_CPU, 0, RESHAPE_HINT),
    K_TEST(reshape_errors, K_CPU, 0, RESHAPE_HINT),
    K_TEST(permute_known, K_CPU, 0, PERMUTE_HINT),
    K_TEST(permute_random, K_CPU, 0, PERMUTE_HINT),
    K_TEST(permute_errors, K_CPU, 0, PERMUTE_HINT),
    K_TEST(broadcast_known, K_CPU, 0, BROADCAST_HINT),
    K_TEST(broadcast_random, K_CPU, 0, BROADCAST_HINT),
    K_TEST(broadcast_errors, K_CPU, 0, BROADCAST_HINT),
    K_TEST(slice_numpy_examples, K_CPU, 0, SLICE_HINT),
    K_TEST(slice_negative_step, K_CPU, 0, SLICE_HINT),
    K_TEST(slice_random, K_CPU, 0, SLICE_HINT),
    K_TEST(slice_of_slice, K_CPU, 0, SLICE_HINT),
    K_TEST(slice_errors, K_CPU, 0, SLICE_HINT),
    K_TEST(diagonal_known, K_CPU, 0, DIAGONAL_HINT),
    K_TEST(diagonal_offsets, K_CPU, 0, DIAGONAL_HINT),
    K_TEST(diagonal_random, K_CPU, 0, DIAGONAL_HINT),
    K_TEST(diagonal_errors, K_CPU, 0, DIAGONAL_HINT),
    K_TEST(views_chain_random, K_CPU, 0, SLICE_HINT),
    K_TEST(views_out_is_input, K_CPU, 0, OUT_HINT),
    K_TEST(views_reject_bad_arrays, K_CPU, 0, NULL),
    K_TEST(extreme_compact_strides_reshape, K_HOST, 0, EXTREME_HINT),
    K_TEST(extreme_permute_diagonal_valid, K_CPU, 0, EXTREME_HINT),
    K_TEST(extreme_diagonal_strides, K_CPU, 0, EXTREME_HINT),
    K_TEST(extreme_slice_offset_of_empty, K_CPU, 0, EXTREME_HINT),
};
K_SUITE(public_01, 1, "01_views", tests);
