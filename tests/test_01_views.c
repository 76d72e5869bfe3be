/*
 * test_01_views.c -- public tests of lesson 1, in the lesson's order:
 * nd_compact_strides, nd_is_compact, nd_offset_of, nd_reshape, nd_permute,
 * nd_broadcast_to, nd_slice, nd_diagonal, then views of views.
 *
 * Calls over the kit (tests/kit/README.md, "Views"): its inputs are made
 * with nd_as_strided, so a test needs only the function it tests.  A view
 * shares a's buffer with one more reference and changes neither a nor the
 * data; a failed call leaves its output as it was.
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
#define RULES_HINT "compare from the right: equal sizes keep the stride; a size 1 " \
    "stretches to any size, 0 included; a 0 stretches to nothing else; a target with " \
    "fewer axes than a is ND_ERR_SHAPE even when a's extra axes have size 1"
#define SLICE_HINT "per axis, like Python's slice.indices(): a negative bound adds the " \
    "size, then clips; a negative step's default start is the LAST position; offset += " \
    "first*stride, stride *= step; an integer adds i*stride and drops its axis"
#define DIAGONAL_HINT "element j is at j+max(-offset,0) on axis1 and j+max(offset,0) on " \
    "axis2; the other axes keep their order; the diagonal is the new LAST axis, with " \
    "stride strides[axis1]+strides[axis2]"
#define PAIRS_HINT "normalise both axes first (ND_ERR_AXIS if out of range or equal); the " \
    "other axes keep their order and the diagonal is appended LAST, also when axis1 > " \
    "axis2; offset > 0 starts at position offset of axis2, offset < 0 at -offset of " \
    "axis1; a diagonal past the edge (huge offsets too) is empty, without overflowing"
#define OUT_HINT "each view function starts from its input's offset and strides, whatever " \
    "view made it; when out is a, compute the new layout in locals, then let " \
    "nd_as_strided(a, ..., out) replace a's view and its reference"

static const int64_t S234[3] = { 2, 3, 4 }, S23[2] = { 2, 3 };

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

/* Random shapes of 0..8 axes; a quarter with sizes up to 2^20 (strides past 2^32). */
static void compact_strides_random(k_ctx *k)
{
    for (int i = 0; i < k_count(k, 300); i++) {
        int64_t shape[ND_MAX_DIMS];
        bool big = i % 4 == 3;
        int nd = k_shape(k, (int)k_int(k, 0, ND_MAX_DIMS), i % 4 ? 1 : 0, big ? K_P2(20) : 6,
                         big ? K_P2(40) : 100000, shape);
        k_expect_list(k, k_new(k, K_COMPACT_STRIDES), nd, shape, ND_OK, STRIDES_HINT);
    }
}

static void compact_strides_errors(k_ctx *k)
{
    int64_t shape[K_LIST] = { 2, 3, 1, 1, 1, 1, 1, 1, 1 };
    k_call c = k_new(k, K_COMPACT_STRIDES);   /* (NULL lists: views_reject_bad_arrays) */
    k_expect_list(k, c, 2, shape, ND_OK, NULL);
    k_expect_list(k, c, ND_MAX_DIMS + 1, shape, ND_ERR_ARG, NULL);
    k_expect_list(k, c, -1, shape, ND_ERR_ARG, NULL);
    k_expect_list(k, c, INT32_MIN, shape, ND_ERR_ARG, NULL);
    k_expect_list(k, c, 2, (int64_t[]){ 2, -3 }, ND_ERR_ARG, NULL);
    k_expect_list(k, c, 8, (int64_t[]){ 2, 2, 2, 2, 2, 2, 2, INT64_MIN }, ND_ERR_ARG, NULL);
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

/* Row-major strides (junk ones on size-1 axes in a quarter of the cases),
 * the same with one stride changed, or small random strides; each view at
 * a random offset in a buffer just large enough. */
static void is_compact_random(k_ctx *k)
{
    for (int i = 0; i < k_count(k, 300); i++) {
        int64_t shape[ND_MAX_DIMS], st[ND_MAX_DIMS], s = 1;
        int nd = k_shape(k, (int)k_int(k, 0, ND_MAX_DIMS), k_one_in(k, 5) ? 0 : 1, 4, 600,
                         shape);
        for (int d = nd - 1; d >= 0; s *= shape[d--])
            st[d] = i % 4 == 3 ? k_int(k, -4, 4) : i % 4 && shape[d] == 1 ? k_int(k, -9, 9) : s;
        if (i % 4 == 2 && nd > 0) {   /* then one change */
            int d = (int)k_int(k, 0, nd - 1), e = (int)k_int(k, 0, nd - 1);
            int64_t t = st[d];
            switch (k_int(k, 0, 3)) {
            case 0: st[d] = -t; break;
            case 1: st[d] = 0; break;
            case 2: st[d] = t + 1; break;
            default: st[d] = st[e], st[e] = t;
            }
        }
        k_call c = k_new(k, K_IS_COMPACT);
        k_arg(&c, k_fit(k, &c, nd, shape, st, K_DISTINCT));
        k_check(k, &c, COMPACT_HINT);
    }
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

/* Random views: every index, then each axis out of range on either side
 * (the others in range): never wrapped. */
static void offset_of_random(k_ctx *k)
{
    static const int64_t bad[4] = { 0, -1, INT64_MAX, INT64_MIN };
    for (int i = 0; i < k_count(k, 20); i++) {
        int64_t shape[ND_MAX_DIMS];
        int nd = k_shape(k, (int)k_int(k, 0, ND_MAX_DIMS), k_one_in(k, 5) ? 0 : 1, 4, 300,
                         shape);
        k_call c = k_new(k, K_OFFSET_OF);
        k_arr a = k_view(k, &c, nd, shape, K_ANY | K_REPEAT, K_DISTINCT);
        int64_t n = k_numel(nd, shape), size = c.bufs[0].n;
        for (int64_t j = 0; j < n + 4 * a.ndim; j++) {
            c = k_on_view(k, K_OFFSET_OF, size, a.ndim, a.shape, a.strides, a.offset);
            if (j < n) {
                k_unravel(j, a.ndim, a.shape, c.list[0]);
                k_check(k, &c, OFFSET_HINT);
                continue;
            }
            int d = (int)(j - n) / 4;
            k_unravel(k_int(k, 0, n > 0 ? n - 1 : 0), a.ndim, a.shape, c.list[0]);
            c.list[0][d] = (j - n) % 4 ? bad[(j - n) % 4] : a.shape[d];
            k_expect(k, &c, ND_ERR_INDEX, OFFSET_HINT);
        }
    }
}

static void offset_of_errors(k_ctx *k)
{
    static const int64_t bad[][2] = { { 1, 1 }, { 1, -1 }, { 2, 0 }, { 0, 3 } };
    for (int i = 0; i < 4; i++)
        k_expect_list(k, k_on_array(k, K_OFFSET_OF, 2, S23), 2, bad[i],
                      i ? ND_ERR_INDEX : ND_OK, NULL);
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

/* Compact views (windows, junk strides on size-1 axes) reshaped, then back
 * to their own shape (maybe with a -1), with out == a now and then; then
 * any view: reshaped if compact, refused if not. */
static void reshape_random(k_ctx *k)
{
    for (int i = 0; i < k_count(k, 300); i++) {
        int64_t shape[ND_MAX_DIMS];
        int nd = k_shape(k, (int)k_int(k, 0, ND_MAX_DIMS), k_one_in(k, 5) ? 0 : 1, 5, 720,
                         shape);
        k_call c = k_new(k, K_RESHAPE);
        k_arg(&c, k_view(k, &c, nd, shape, K_WINDOW | K_JUNK, K_DISTINCT));
        k_view_args(k, &c);
        c.out = k_one_in(k, 2) ? 0 : K_OUT_NEW;
        k_check_then(k, &c, K_RESHAPE, RESHAPE_HINT);
        k_list(&c, 0, nd, shape);
        if (nd > 0 && k_numel(nd, shape) > 0 && k_one_in(k, 2))
            c.list[0][k_int(k, 0, nd - 1)] = -1;
        c.out = k_one_in(k, 2) ? 0 : K_OUT_NEW;
        k_check(k, &c, RESHAPE_HINT);
    }
    k_check_random_views(k, K_RESHAPE, k_count(k, 300), 0, 6, 5, false, RESHAPE_HINT);
}

/* Views of a buffer of `size` floats, reshaped; each case twice, the
 * second time with out == a (which an error leaves as it was). */
static void reshape_errors(k_ctx *k)
{
    static const struct reshape_case {
        int ndim;
        int64_t shape[3], strides[3], offset, size;
        int to;
        int64_t given[K_LIST];
        nd_status want;
        const char *why;
    } cases[] = {
        { 2, { 3, 4 }, { 4, 1 }, 5, 20, 2, { 2, 6 }, ND_OK, "a compact window at offset 5 "
          "keeps offset 5 and gets the new shape's compact strides (6,1)" },
        { 3, { 3, 1, 4 }, { 4, -9, 1 }, 2, 16, 1, { 12 }, ND_OK, "a size-1 axis with stride "
          "-9 is still compact: its stride never matters" },
        { 1, { 5 }, { 1 }, 10, 20, 2, { 5, 1 }, ND_OK, NULL },   /* a row of a (4,5) array */
        { 3, { 1, 3, 4 }, { -100, 4, 1 }, 3, 20, 2, { 4, -1 }, ND_OK, NULL },
        { 2, { 3, 1 }, { 1, 0 }, 2, 8, 1, { -1 }, ND_OK, NULL },
        { 0, { 0 }, { 0 }, 6, 9, 8, { 1, 1, 1, -1, 1, 1, 1, 1 }, ND_OK, NULL },
        { 2, { 0, 3 }, { -5, 7 }, 4, 9, 2, { 3, -1 }, ND_OK, NULL },
        { 3, { 2, 0, 3 }, { 0, 0, 0 }, 0, 1, 1, { 0 }, ND_OK, NULL },
        { 2, { 4, 3 }, { 1, 4 }, 0, 12, 1, { 12 }, ND_ERR_LAYOUT, "a transpose is not compact" },
        { 2, { 3, 4 }, { -4, 1 }, 8, 12, 1, { 12 }, ND_ERR_LAYOUT, NULL },   /* reversed rows */
        { 2, { 3, 4 }, { 0, 1 }, 0, 4, 1, { 12 }, ND_ERR_LAYOUT, NULL },     /* a broadcast row */
        { 2, { 2, 3 }, { 4, 1 }, 0, 8, 2, { 2, 3 }, ND_ERR_LAYOUT, NULL },   /* gaps after rows */
        { 1, { 2 }, { 2 }, 1, 4, 1, { 2 }, ND_ERR_LAYOUT, NULL },            /* every other */
        { 2, { 0, 3 }, { 3, 1 }, 0, 1, 2, { 0, -1 }, ND_ERR_SHAPE,
          "a -1 beside a 0 cannot be inferred" },
        /* a (2,3) window at offset 2: argument errors */
        { 2, { 2, 3 }, { 3, 1 }, 2, 10, 2, { 3, 2 }, ND_OK, NULL },
        { 2, { 2, 3 }, { 3, 1 }, 2, 10, 1, { 7 }, ND_ERR_SHAPE, NULL },
        { 2, { 2, 3 }, { 3, 1 }, 2, 10, 2, { -1, 4 }, ND_ERR_SHAPE, NULL },
        { 2, { 2, 3 }, { 3, 1 }, 2, 10, 2, { -1, -1 }, ND_ERR_ARG, NULL },
        { 2, { 2, 3 }, { 3, 1 }, 2, 10, 3, { 2, -2, -3 }, ND_ERR_ARG, NULL },
        { 2, { 2, 3 }, { 3, 1 }, 2, 10, 2, { 6, INT64_MIN }, ND_ERR_ARG, NULL },
        { 2, { 2, 3 }, { 3, 1 }, 2, 10, 1, { 0 }, ND_ERR_SHAPE, NULL },
        { 2, { 2, 3 }, { 3, 1 }, 2, 10, 3, { 0, -1, 6 }, ND_ERR_SHAPE, NULL },
        { 2, { 2, 3 }, { 3, 1 }, 2, 10, 0, { 0 }, ND_ERR_SHAPE, NULL },
        /* ndim out of range, on a one-element array so that only ndim is wrong */
        { 0, { 0 }, { 0 }, 0, 1, ND_MAX_DIMS + 1, { 1, 1, 1, 1, 1, 1, 1, 1, 1 }, ND_ERR_ARG, NULL },
        { 0, { 0 }, { 0 }, 0, 1, -1, { 1 }, ND_ERR_ARG, NULL },
    };
    for (size_t i = 0; i < 2 * (sizeof cases / sizeof cases[0]); i++) {
        const struct reshape_case *t = &cases[i / 2];
        k_call c = k_on_view(k, K_RESHAPE, t->size, t->ndim, t->shape, t->strides, t->offset);
        k_list(&c, 0, t->to, t->given);
        c.out = i % 2 ? 0 : K_OUT_NEW;
        k_expect(k, &c, t->want, t->why ? t->why : RESHAPE_HINT);
    }
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

/* Random views permuted, then permuted back by the inverse (written with
 * negative axes now and then, out == a now and then): a's exact layout. */
static void permute_random(k_ctx *k)
{
    for (int i = 0; i < k_count(k, 300); i++) {
        k_call c = k_random_view_call(k, K_PERMUTE, 0, ND_MAX_DIMS, 5);
        int nd = c.args[0].ndim;
        int64_t inv[ND_MAX_DIMS];
        for (int d = 0; d < nd; d++)
            inv[(c.list[0][d] + nd) % nd] = d - (k_one_in(k, 2) ? nd : 0);
        k_check_then(k, &c, K_PERMUTE, PERMUTE_HINT);
        k_list(&c, 0, nd, inv);
        c.out = k_one_in(k, 2) ? 0 : K_OUT_NEW;
        k_check(k, &c, PERMUTE_HINT);
    }
}

static void permute_errors(k_ctx *k)
{
    for (int i = 0; i < 2000; i++) {   /* every triple of axes in -5..4; out == a too */
        k_call c = k_on_array(k, K_PERMUTE, 3, S234);
        k_list(&c, 0, 3, (int64_t[]){ i / 200 - 5, i / 20 % 10 - 5, i / 2 % 10 - 5 });
        c.out = i % 2 ? 0 : K_OUT_NEW;
        k_check(k, &c, PERMUTE_HINT);
    }
    static const int64_t axes[][8] = { { 7, 6, 5, 4, 3, 2, 1, -1 }, { 0, 1, 2, 3, 4, 5, 6, 8 },
                                       { -9, 1, 2, 3, 4, 5, 6, 7 },
                                       { -1, -2, -3, -4, -5, -6, -7, -8 } };
    for (int i = 0; i < 4; i++)
        k_expect_list(k, k_on_array(k, K_PERMUTE, 8, (int64_t[]){ 2, 1, 2, 1, 2, 1, 2, 3 }), 8,
                      axes[i], i < 3 ? ND_ERR_AXIS : ND_OK, PERMUTE_HINT);
    k_call c = k_on_view(k, K_PERMUTE, 4, 0, NULL, NULL, 3);   /* a scalar */
    k_check(k, &c, PERMUTE_HINT);
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
    k_check_random_views(k, K_BROADCAST_TO, k_count(k, 300), 0, 6, 4, true, BROADCAST_HINT);
}

/* Every shape of 0..3 axes with sizes 0..3 (85), as a view with a stride
 * on every axis, broadcast to every such target (out == a now and then);
 * then 8 and 9 axes, and a negative size. */
static void broadcast_errors(k_ctx *k)
{
    int64_t shapes[85][3], st[3];
    int nds[85], n = 0;
    for (int nd = 0; nd <= 3; nd++)
        for (int i = 0; i < 1 << (2 * nd); i++, n++) {
            nds[n] = nd;
            for (int d = 0; d < nd; d++)
                shapes[n][d] = i >> (2 * d) & 3;
        }
    for (int i = 0; i < 85; i++) {
        int64_t s = 1;
        for (int d = nds[i] - 1; d >= 0; s *= shapes[i][d--] + 1)   /* padded */
            st[d] = s;
        for (int j = 0; j < 85; j++) {
            k_call c = k_on_view(k, K_BROADCAST_TO, s + 2, nds[i], shapes[i], st, 1);
            k_list(&c, 0, nds[j], shapes[j]);
            c.out = j % 5 == 0 ? 0 : K_OUT_NEW;
            k_check(k, &c, RULES_HINT);
        }
    }
    static const int64_t eight[3][K_LIST] = {
        { 2, 1, 2, 1, 2, 1, 2, 3 }, { 2, 1, 2, 1, 2, 1, 2, 3, 3 }, { 2, 1, 2, -1, 2, 1, 2, 3 },
    };
    for (int i = 0; i < 3; i++)
        k_expect_list(k, k_on_array(k, K_BROADCAST_TO, 1, (int64_t[]){ 3 }), i == 1 ? 9 : 8,
                      eight[i], i ? ND_ERR_ARG : ND_OK, RULES_HINT);
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

/* Random views sliced, then their results sliced again (views of views). */
static void slice_random(k_ctx *k)
{
    k_check_random_views(k, K_SLICE, k_count(k, 300), 0, ND_MAX_DIMS, 7, true, SLICE_HINT);
}

/* A (3,4,5) view (strides -20,5,1, offset 42) sliced with valid entries,
 * then with each bad entry on each axis; each case twice, the second time
 * with out == a (which an error leaves as it was). */
static void slice_errors(k_ctx *k)
{
    const nd_index ok[3] = { ND_SLICE(1, ND_NONE, 1), ND_AT(-1), ND_SLICE(ND_NONE, ND_NONE, -2) };
    nd_index bad[8] = { ND_SLICE(0, 2, 0), ND_SLICE(ND_NONE, ND_NONE, 0), ND_AT(0), ND_AT(0),
                        ND_AT(INT64_MAX), ND_AT(INT64_MIN), ND_ALL, ND_ALL };
    bad[6].kind = (nd_index_kind)7;
    bad[7].kind = (nd_index_kind)-1;
    int64_t shape[3] = { 3, 4, 5 };
    for (int i = 0; i < 2 * 3 * 9; i++) {
        k_call c = k_on_view(k, K_SLICE, 64, 3, shape, (int64_t[]){ -20, 5, 1 }, 42);
        k_index(&c, 3, ok);
        int d = i / 18, e = i / 2 % 9;
        bad[2] = ND_AT(shape[d]);
        bad[3] = ND_AT(-shape[d] - 1);
        if (e < 8)
            c.idx[d] = bad[e];
        c.out = i % 2 ? 0 : K_OUT_NEW;
        k_check(k, &c, SLICE_HINT);
    }
    for (int n = -1; n <= 4; n += 5) {   /* n outside 0..ndim */
        k_call c = k_on_array(k, K_SLICE, 3, shape);
        k_index(&c, 3, ok);
        c.n = n;
        k_expect(k, &c, ND_ERR_ARG, SLICE_HINT);
    }
    /* an integer cannot index an empty axis; a step of 0 is still wrong */
    const nd_index empty[4][2] = { { ND_ALL, ND_AT(0) }, { ND_ALL, ND_AT(-1) },
                                   { ND_ALL, ND_SLICE(ND_NONE, ND_NONE, 0) },
                                   { ND_AT(2), ND_SLICE(ND_NONE, ND_NONE, -1) } };
    for (int i = 0; i < 4; i++)
        slice_of(k, k_on_array(k, K_SLICE, 2, (int64_t[]){ 3, 0 }), 2, empty[i],
                 i < 3 ? ND_ERR_INDEX : ND_OK, i < 2 ? "an integer cannot index an empty "
                 "axis" : SLICE_HINT);
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

static void diagonal_random(k_ctx *k)
{
    k_check_random_views(k, K_DIAGONAL, k_count(k, 300), 2, ND_MAX_DIMS, 6, false,
                         DIAGONAL_HINT);
}

/* Every axis pair in -5..4 and offset in -6..6 of a (2,3,4,5) view with
 * mixed strides, and offsets near INT64_MAX (out == a now and then); every
 * pair of 8 axes; then arrays of fewer than 2 axes. */
static void diagonal_errors(k_ctx *k)
{
    static const int64_t far[] = { INT64_MAX, -INT64_MAX, INT64_MAX - 1, -INT64_MAX + 1,
                                   INT64_MIN };
    for (int i = 0; i < 10 * 10 * 13 + 5; i++) {
        k_call c = k_on_view(k, K_DIAGONAL, 130, 4, (int64_t[]){ 2, 3, 4, 5 },
                             (int64_t[]){ -60, 1, 15, -3 }, 74);
        bool huge = i >= 1300;
        c.at[0] = huge ? far[i - 1300] : i % 13 - 6;
        c.at[1] = huge ? 1 : i / 130 - 5;
        c.at[2] = huge ? 2 : i / 13 % 10 - 5;
        c.out = i % 3 == 0 ? 0 : K_OUT_NEW;
        k_check(k, &c, PAIRS_HINT);
    }
    int64_t s8[8] = { 2, 3, 1, 2, 3, 2, 1, 3 };
    for (int i = 0; i < 8 * 8 * 3; i++) {
        k_call c = k_new(k, K_DIAGONAL);
        k_arg(&c, k_view(k, &c, 8, s8, K_STEPS, K_DISTINCT));
        c.at[0] = i % 3 - 1;
        c.at[1] = i / 24;
        c.at[2] = i / 3 % 8;
        k_check(k, &c, PAIRS_HINT);
    }
    for (int nd = 0; nd < 2; nd++)   /* fewer than 2 axes */
        diagonal_of(k, k_on_array(k, K_DIAGONAL, nd, (int64_t[]){ 4 }), 0, 0, 1, ND_ERR_ARG,
                    NULL);
}

/* ---------------------------------------------------------------------- */
/* All views                                                              */
/* ---------------------------------------------------------------------- */

/* Views of views of views: chains of 2 to 6 random views, each checked, a
 * third of them with out == a. */
static void views_chain_random(k_ctx *k)
{
    k_check_view_chains(k, k_count(k, 300), 2, 6, ND_MAX_DIMS, 5, true, OUT_HINT);
}

/* Every function that takes an array refuses a NULL, released or broken
 * one (and a NULL out or list) with ND_ERR_ARG, naming itself, writing
 * nothing; so does nd_compact_strides a NULL shape or strides. */
static void views_reject_bad_arrays(k_ctx *k)
{
    for (k_op op = K_COMPACT_STRIDES; op <= K_DIAGONAL; op++) {
        k_call c = op == K_COMPACT_STRIDES ? k_new(k, op) : k_on_array(k, op, 2, S23);
        if (op == K_COMPACT_STRIDES)
            k_list(&c, 0, 2, S23);
        else
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
                         seven[8] = { 7, 7, 7, 7, 7, 7, 0, INT64_MAX }, zero = 0;
    static const struct { int n; const int64_t *shape; nd_status want; } cases[] = {
        { 3, S234, ND_OK }, { 3, wide, ND_ERR_ARG }, { 3, most, ND_OK }, { 8, seven, ND_ERR_ARG },
    };
    for (int i = 0; i < 4; i++)
        k_expect_list(k, k_new(k, K_COMPACT_STRIDES), cases[i].n, cases[i].shape, cases[i].want,
                      STRIDES_HINT);
    for (int i = 1; i < 4; i++)   /* the same shapes given to reshape an empty array */
        k_expect_list(k, k_on_array(k, K_RESHAPE, 1, &zero), cases[i].n, cases[i].shape,
                      cases[i].want, RESHAPE_HINT);
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
    static const nd_index idx[2] = { ND_AT(4), ND_SLICE(4, 5, 1) };
    for (int i = 0; i < 2; i++)
        slice_of(k, k_on_view(k, K_SLICE, 4, 2, s50, huge, 2), 1, &idx[i], ND_OK, EXTREME_HINT);
}

static const k_test tests[] = {
    K_TEST(compact_strides_known, K_HOST, 0, STRIDES_HINT),
    K_TEST(compact_strides_random, K_HOST, 0, STRIDES_HINT),
    K_TEST(compact_strides_errors, K_HOST, 0, STRIDES_HINT),
    K_TEST(is_compact_known, K_CPU, 0, COMPACT_HINT),
    K_TEST(is_compact_random, K_CPU, 0, COMPACT_HINT),
    K_TEST(offset_of_known, K_CPU, 0, OFFSET_HINT),
    K_TEST(offset_of_random, K_CPU, 0, OFFSET_HINT),
    K_TEST(offset_of_errors, K_CPU, 0, OFFSET_HINT),
    K_TEST(reshape_known, K_CPU, 0, RESHAPE_HINT),
    K_TEST(reshape_random, K_CPU, 0, RESHAPE_HINT),
    K_TEST(reshape_errors, K_CPU, 0, RESHAPE_HINT),
    K_TEST(permute_known, K_CPU, 0, PERMUTE_HINT),
    K_TEST(permute_random, K_CPU, 0, PERMUTE_HINT),
    K_TEST(permute_errors, K_CPU, 0, PERMUTE_HINT),
    K_TEST(broadcast_known, K_CPU, 0, BROADCAST_HINT),
    K_TEST(broadcast_random, K_CPU, 0, BROADCAST_HINT),
    K_TEST(broadcast_errors, K_CPU, 0, BROADCAST_HINT),
    K_TEST(slice_numpy_examples, K_CPU, 0, SLICE_HINT),
    K_TEST(slice_random, K_CPU, 0, SLICE_HINT),
    K_TEST(slice_errors, K_CPU, 0, SLICE_HINT),
    K_TEST(diagonal_known, K_CPU, 0, DIAGONAL_HINT),
    K_TEST(diagonal_random, K_CPU, 0, DIAGONAL_HINT),
    K_TEST(diagonal_errors, K_CPU, 0, DIAGONAL_HINT),
    K_TEST(views_chain_random, K_CPU, 0, OUT_HINT),
    K_TEST(views_reject_bad_arrays, K_CPU, 0, NULL),
    K_TEST(extreme_compact_strides_reshape, K_HOST, 0, EXTREME_HINT),
    K_TEST(extreme_permute_diagonal_valid, K_CPU, 0, EXTREME_HINT),
    K_TEST(extreme_diagonal_strides, K_CPU, 0, EXTREME_HINT),
    K_TEST(extreme_slice_offset_of_empty, K_CPU, 0, EXTREME_HINT),
};
K_SUITE(public_01, 1, "01_views", tests);
