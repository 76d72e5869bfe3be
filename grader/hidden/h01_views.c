/*
 * h01_views.c -- hidden tests of lesson 1: more cases and other seeds over
 * the kit than tests/test_01_views.c makes.  Exhaustive where the space is
 * small (every shape of sizes 0..3 for compact strides and broadcasting,
 * every axis triple for permute, every slice bound and step from a set of
 * 20 and 13 on short axes, every axis pair for diagonal, every index for
 * offset_of); thousands of random views of up to 8 axes elsewhere; views
 * of views, out == a, sizes past 32 bits and a 2^22-element buffer.
 */
#include "kit.h"


#define STRIDES_HINT "strides[k] is the product of the sizes AFTER axis k (a 0 there makes " \
    "it 0), in int64_t; write exactly ndim entries, and nothing at all on an error"
#define COMPACT_HINT "compact means row-major element i is at offset + i: compare each " \
    "stride with the compact one from the last axis, SKIPPING size-1 axes (their stride " \
    "never matters); an array with no elements is compact"
#define OFFSET_HINT "offset + sum(index[k]*strides[k]) with signed strides; check 0 <= " \
    "index[k] < shape[k] on EVERY axis (never wrap) before writing *offset"
#define RESHAPE_HINT "a reshaped compact view keeps the view's offset and gets the compact " \
    "strides of the NEW shape; -1 is numel divided by the product of the other sizes"
#define RESHAPE_ERR_HINT "only axes longer than 1 decide compactness; check -1s, negative " \
    "sizes and counts before anything else, and leave *out (even when it is a) as it was"
#define PERMUTE_HINT "permute only reorders shape and strides (out axis i is a's axis " \
    "axes[i], negative axes count from the end) and keeps the offset, so the inverse " \
    "permutation gives back a's exact layout"
#define AXES_HINT "normalise each axis (add ndim if negative), then reject one outside " \
    "0..ndim-1 or named twice with ND_ERR_AXIS, before writing *out"
#define BROADCAST_HINT "align the shapes at the right; a new leading axis and a STRETCHED " \
    "size-1 axis get stride 0; every other axis keeps its stride, even a 0 from an " \
    "earlier broadcast"
#define RULES_HINT "compare from the right: equal sizes keep the stride; a size 1 " \
    "stretches to any size, 0 included; a 0 stretches to nothing else; a target with " \
    "fewer axes than a is ND_ERR_SHAPE even when a's extra axes have size 1"
#define PYTHON_HINT "follow Python's slice.indices(): a negative bound adds the size, then " \
    "clips to 0 (-1 for a negative step); a bound >= size clips to size (size-1 for a " \
    "negative step); a negative step's default start is the LAST position; count = " \
    "(stop-start-1)/step+1 without overflow for steps near INT64_MAX"
#define SLICES_HINT "slice from the input VIEW's offset and strides: offset += " \
    "first*stride, stride *= step"
#define INTS_HINT "an integer adds i*stride to the offset (i+size if negative) and drops " \
    "its axis; axes past the n entries are taken whole"
#define SLICE_ERR_HINT "check every entry (kind, step != 0, integer in -size..size-1) " \
    "before writing *out; n may be smaller than ndim, never larger; on an error *out " \
    "(even a itself) stays as it was"
#define DIAGONAL_HINT "a positive offset moves along axis2 and a negative one along axis1, " \
    "with the input's own (maybe negative or zero) strides; the diagonal's stride is " \
    "strides[axis1] + strides[axis2]"
#define PAIRS_HINT "normalise both axes first (ND_ERR_AXIS if out of range or equal); the " \
    "other axes keep their order and the diagonal is appended LAST, also when axis1 > " \
    "axis2; huge offsets give an empty diagonal without overflowing"
#define CHAIN_HINT "each view function starts from its input's offset and strides, " \
    "whatever view made it; with out == a, compute into locals first, then let " \
    "nd_as_strided(a, ..., out) swap the reference"
#define SHARE_HINT "build every result with nd_as_strided over a's buffer: never allocate " \
    "or copy, and take exactly one reference per view"
#define BAD_HINT "check every pointer and array argument first (the given checks at the " \
    "top of each function do this: keep them)"
#define LARGE_HINT "sizes, strides and offsets are int64_t everywhere; no view function " \
    "loops over elements, so 2^22-element and 8-D views cost nothing"

static void compact_strides_all_shapes(k_ctx *k)
{
    for (int nd = 0; nd <= 5; nd++)   /* every shape of sizes 0..3: 1365 */
        for (int i = 0; i < 1 << (2 * nd); i++) {
            int64_t shape[5];
            for (int d = 0; d < nd; d++)
                shape[d] = i >> (2 * d) & 3;
            k_expect_list(k, k_new(k, K_COMPACT_STRIDES), nd, shape, ND_OK, NULL);
        }
    for (int i = 0; i < 3000; i++) {
        int64_t shape[ND_MAX_DIMS];
        int nd = (int)k_int(k, 6, ND_MAX_DIMS);
        for (int d = 0; d < nd; d++)
            shape[d] = k_one_in(k, 6) ? k_int(k, 0, 1) : k_int(k, 2, 9);
        k_expect_list(k, k_new(k, K_COMPACT_STRIDES), nd, shape, ND_OK, NULL);
    }
    static const struct { int ndim; int64_t shape[ND_MAX_DIMS]; } big[] = {
        { 3, { 1 << 20, 1 << 20, 4 } }, { 2, { 3, INT64_C(1) << 40 } },
        { 8, { 2, 64, 64, 64, 64, 64, 64, 2 } }, { 4, { INT64_C(1) << 33, 1, 1, 7 } },
    };
    for (int i = 0; i < 4; i++)
        k_expect_list(k, k_new(k, K_COMPACT_STRIDES), big[i].ndim, big[i].shape, ND_OK, NULL);
    static const int64_t bad[3][K_LIST] = { { 2, 2, 2, 2, 2, 2, 2, -1, 2 },
                                            { 2, 2, 2, 2, 2, 2, 2, INT64_MIN }, { -5 } };
    static const int nbad[5] = { 8, 8, 1, ND_MAX_DIMS + 1, INT32_MIN };
    for (int i = 0; i < 5; i++)
        k_expect_list(k, k_new(k, K_COMPACT_STRIDES), nbad[i], bad[i % 3], ND_ERR_ARG, NULL);
}

static void is_compact_property(k_ctx *k)
{
    for (int i = 0; i < 10000; i++) {
        int64_t shape[ND_MAX_DIMS], st[ND_MAX_DIMS], s = 1;
        int nd = k_shape(k, (int)k_int(k, 0, ND_MAX_DIMS), k_one_in(k, 5) ? 0 : 1, 4, 600,
                         shape);
        for (int d = nd - 1; d >= 0; s *= shape[d--])   /* row-major */
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

static void offset_of_every_index(k_ctx *k)
{
    for (int i = 0; i < 200; i++) {
        int64_t shape[ND_MAX_DIMS];
        int nd = k_shape(k, (int)k_int(k, 0, ND_MAX_DIMS), k_one_in(k, 5) ? 0 : 1, 4, 300,
                         shape);
        k_call c = k_new(k, K_OFFSET_OF);
        k_arr a = k_view(k, &c, nd, shape, K_ANY | K_REPEAT, K_DISTINCT);
        int64_t n = k_numel(nd, shape), size = c.bufs[0].n;
        for (int64_t j = 0; j < n + 4 * a.ndim; j++) {
            c = k_on_view(k, K_OFFSET_OF, size, a.ndim, a.shape, a.strides, a.offset);
            if (j < n) {   /* every index */
                k_unravel(j, a.ndim, a.shape, c.list[0]);
                k_check(k, &c, OFFSET_HINT);
                continue;
            }
            /* each axis out of range on either side, the others in range */
            static const int64_t bad[4] = { 0, -1, INT64_MAX, INT64_MIN };
            int d = (int)(j - n) / 4;
            k_unravel(k_int(k, 0, n > 0 ? n - 1 : 0), a.ndim, a.shape, c.list[0]);
            c.list[0][d] = (j - n) % 4 ? bad[(j - n) % 4] : a.shape[d];
            k_expect(k, &c, ND_ERR_INDEX, OFFSET_HINT);
        }
    }
}

static void reshape_round_trip(k_ctx *k)
{
    for (int i = 0; i < 4000; i++) {
        int64_t shape[ND_MAX_DIMS];
        int nd = k_shape(k, (int)k_int(k, 0, ND_MAX_DIMS), k_one_in(k, 5) ? 0 : 1, 5, 720,
                         shape);
        k_call c = k_new(k, K_RESHAPE);
        k_arg(&c, k_view(k, &c, nd, shape, K_WINDOW | K_JUNK, K_DISTINCT));
        k_view_args(k, &c);
        c.out = k_one_in(k, 2) ? 0 : K_OUT_NEW;
        k_check_then(k, &c, K_RESHAPE, RESHAPE_HINT);
        k_list(&c, 0, nd, shape);   /* back to a's shape */
        if (nd > 0 && k_numel(nd, shape) > 0 && k_one_in(k, 2))
            c.list[0][k_int(k, 0, nd - 1)] = -1;
        c.out = k_one_in(k, 2) ? 0 : K_OUT_NEW;
        k_check(k, &c, RESHAPE_HINT);
    }
}

static void reshape_layout_and_errors(k_ctx *k)
{
    typedef struct {
        int ndim;
        int64_t shape[3], strides[3], offset, size;
        int to;
        int64_t given[ND_MAX_DIMS];
        nd_status want;
    } reshape_case;
    static const reshape_case cases[] = {
        { 1, { 5 }, { 1 }, 10, 20, 2, { 5, 1 }, ND_OK },   /* a row of a (4,5) array */
        { 3, { 1, 3, 4 }, { -100, 4, 1 }, 3, 20, 2, { 4, -1 }, ND_OK },
        { 2, { 3, 1 }, { 1, 0 }, 2, 8, 1, { -1 }, ND_OK },
        { 0, { 0 }, { 0 }, 6, 9, 8, { 1, 1, 1, -1, 1, 1, 1, 1 }, ND_OK },
        { 2, { 0, 3 }, { -5, 7 }, 4, 9, 2, { 3, -1 }, ND_OK },
        { 3, { 2, 0, 3 }, { 0, 0, 0 }, 0, 1, 1, { 0 }, ND_OK },
        { 2, { 3, 4 }, { -4, 1 }, 8, 12, 1, { 12 }, ND_ERR_LAYOUT },   /* reversed rows */
        { 2, { 3, 4 }, { 0, 1 }, 0, 4, 1, { 12 }, ND_ERR_LAYOUT },     /* a broadcast row */
        { 2, { 4, 3 }, { 1, 4 }, 0, 12, 2, { 4, 3 }, ND_ERR_LAYOUT },  /* a transpose */
        { 2, { 2, 3 }, { 4, 1 }, 0, 8, 2, { 2, 3 }, ND_ERR_LAYOUT },   /* gaps after rows */
        { 1, { 2 }, { 2 }, 1, 4, 1, { 2 }, ND_ERR_LAYOUT },            /* every other */
        /* a (2,3) window at offset 2: argument errors */
        { 2, { 2, 3 }, { 3, 1 }, 2, 10, 1, { 7 }, ND_ERR_SHAPE },
        { 2, { 2, 3 }, { 3, 1 }, 2, 10, 2, { -1, 4 }, ND_ERR_SHAPE },
        { 2, { 2, 3 }, { 3, 1 }, 2, 10, 2, { -1, -1 }, ND_ERR_ARG },
        { 2, { 2, 3 }, { 3, 1 }, 2, 10, 3, { 2, -2, -3 }, ND_ERR_ARG },
        { 2, { 2, 3 }, { 3, 1 }, 2, 10, 2, { 6, INT64_MIN }, ND_ERR_ARG },
        { 2, { 2, 3 }, { 3, 1 }, 2, 10, 1, { 0 }, ND_ERR_SHAPE },
        { 2, { 2, 3 }, { 3, 1 }, 2, 10, 3, { 0, -1, 6 }, ND_ERR_SHAPE },
        { 2, { 2, 3 }, { 3, 1 }, 2, 10, 0, { 0 }, ND_ERR_SHAPE },
        { 2, { 2, 3 }, { 3, 1 }, 2, 10, ND_MAX_DIMS + 1, { 6, 1, 1, 1, 1, 1, 1, 1 },
          ND_ERR_ARG },
        { 2, { 2, 3 }, { 3, 1 }, 2, 10, -1, { 6 }, ND_ERR_ARG },
    };
    for (size_t i = 0; i < 2 * (sizeof cases / sizeof cases[0]); i++) {
        const reshape_case *t = &cases[i / 2];
        k_call c = k_on_view(k, K_RESHAPE, t->size, t->ndim, t->shape, t->strides, t->offset);
        k_list(&c, 0, t->to, t->given);
        c.out = i % 2 ? 0 : K_OUT_NEW;   /* and with out == a */
        k_expect(k, &c, t->want, RESHAPE_ERR_HINT);
    }
}

static void permute_inverse_identity(k_ctx *k)
{
    for (int i = 0; i < 5000; i++) {
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

static void permute_axes_validation(k_ctx *k)
{
    for (int i = 0; i < 2000; i++) {   /* every triple of axes in -5..4; out == a too */
        k_call c = k_on_array(k, K_PERMUTE, 3, (int64_t[]){ 2, 3, 4 });
        k_list(&c, 0, 3, (int64_t[]){ i / 200 - 5, i / 20 % 10 - 5, i / 2 % 10 - 5 });
        c.out = i % 2 ? 0 : K_OUT_NEW;
        k_check(k, &c, AXES_HINT);
    }
    static const int64_t axes[][8] = { { 7, 6, 5, 4, 3, 2, 1, -1 }, { 0, 1, 2, 3, 4, 5, 6, 8 },
                                       { -9, 1, 2, 3, 4, 5, 6, 7 },
                                       { -1, -2, -3, -4, -5, -6, -7, -8 } };
    for (int i = 0; i < 4; i++) {
        k_call c = k_on_array(k, K_PERMUTE, 8, (int64_t[]){ 2, 1, 2, 1, 2, 1, 2, 3 });
        k_list(&c, 0, 8, axes[i]);
        k_expect(k, &c, i < 3 ? ND_ERR_AXIS : ND_OK, AXES_HINT);
    }
    k_call c = k_on_view(k, K_PERMUTE, 4, 0, NULL, NULL, 3);   /* a scalar */
    k_check(k, &c, PERMUTE_HINT);
}

static void broadcast_of_broadcast(k_ctx *k)
{
    k_check_random_views(k, K_BROADCAST_TO, 4000, 0, 6, 4, true, BROADCAST_HINT);
}

/* Every shape of 0..3 axes with sizes 0..3 (85), as a view with a stride
 * on every axis, against every such target. */
static void broadcast_rules_exhaustive(k_ctx *k)
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
    static const int64_t eight[3][K_LIST] = {   /* 8 axes at most; no negative size */
        { 2, 1, 2, 1, 2, 1, 2, 3 }, { 2, 1, 2, 1, 2, 1, 2, 3, 3 }, { 2, 1, 2, -1, 2, 1, 2, 3 },
    };
    for (int i = 0; i < 3; i++) {
        k_call c = k_on_array(k, K_BROADCAST_TO, 1, (int64_t[]){ 3 });
        k_list(&c, 0, i == 1 ? 9 : 8, eight[i]);
        k_expect(k, &c, i ? ND_ERR_ARG : ND_OK, RULES_HINT);
    }
}

static void slice_python_exhaustive(k_ctx *k)
{
    static const int64_t bounds[] = { ND_NONE, -9, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3,
                                      4, 5, 6, 7, 9, INT64_MAX, -INT64_MAX };
    static const int64_t steps[] = { 1, 2, 3, 5, 7, -1, -2, -3, -4, -6, INT64_MAX,
                                     -INT64_MAX, INT64_MIN };
    enum { NB = sizeof bounds / sizeof bounds[0], NS = sizeof steps / sizeof steps[0] };
    for (int len = 0; len <= 6; len++)
        for (int i = 0; i < 2 * NB * NB * NS; i++) {
            /* arange(len), or a reversed view with stride -3 in a larger buffer */
            bool rev = i % 2;
            k_call c = k_on_view(k, K_SLICE, rev ? 3 * len + 4 : len, 1, (int64_t[]){ len },
                                 (int64_t[]){ rev ? -3 : 1 }, rev ? 3 * len + 1 : 0);
            k_index(&c, 1, (nd_index[]){ ND_SLICE(bounds[i / 2 % NB], bounds[i / 2 / NB % NB],
                                                  steps[i / 2 / NB / NB]) });
            k_check(k, &c, PYTHON_HINT);
        }
}

static void slice_of_slice_combined(k_ctx *k)
{
    k_check_random_views(k, K_SLICE, 5000, 1, ND_MAX_DIMS, 7, true, SLICES_HINT);
}

static void slice_ints_and_extremes(k_ctx *k)
{
    for (int i = 0; i < 3000; i++) {
        int64_t shape[ND_MAX_DIMS];
        int nd = k_shape(k, (int)k_int(k, 1, ND_MAX_DIMS), 1, 4, 1000, shape);
        k_call c = k_new(k, K_SLICE);
        k_arg(&c, k_view(k, &c, nd, shape, K_ANY | K_REPEAT, K_DISTINCT));
        int mode = i % 4;
        c.n = mode == 3 ? (int)k_int(k, 0, nd - 1) : nd;
        for (int d = 0; d < c.n; d++) {
            int64_t size = shape[d], at = k_int(k, -size, size - 1);
            bool big = k_one_in(k, 2);
            c.idx[d] = mode == 0 ? ND_AT(at)   /* integers everywhere: a scalar */
                     : mode == 1 ? (big ? ND_AT(at) : ND_ALL)
                     : mode == 3 ? (big ? ND_AT(at) : ND_SLICE(ND_NONE, ND_NONE, -2))
                     : ND_SLICE(big ? INT64_MAX : -INT64_MAX,   /* at most 1 position */
                                k_one_in(k, 2) ? ND_NONE : big ? -INT64_MAX : INT64_MAX,
                                k_one_in(k, 2) ? INT64_MAX : -INT64_MAX);
        }
        k_check(k, &c, INTS_HINT);
    }
}

static void slice_errors_deep(k_ctx *k)
{
    const nd_index ok[3] = { ND_SLICE(1, ND_NONE, 1), ND_AT(-1), ND_SLICE(ND_NONE, ND_NONE, -2) };
    nd_index bad[8] = { ND_SLICE(0, 2, 0), ND_SLICE(ND_NONE, ND_NONE, 0), ND_AT(0), ND_AT(0),
                        ND_AT(INT64_MAX), ND_AT(INT64_MIN), ND_ALL, ND_ALL };
    bad[6].kind = (nd_index_kind)2;
    bad[7].kind = (nd_index_kind)-1;
    for (int i = 0; i < 2 * 3 * 9; i++) {   /* each entry wrong on each axis */
        int64_t shape[3] = { 3, 4, 5 };
        k_call c = k_on_view(k, K_SLICE, 64, 3, shape, (int64_t[]){ -20, 5, 1 }, 42);
        k_index(&c, 3, ok);
        int d = i / 18, e = i / 2 % 9;
        bad[2] = ND_AT(shape[d]);
        bad[3] = ND_AT(-shape[d] - 1);
        if (e < 8)
            c.idx[d] = bad[e];
        c.out = i % 2 ? 0 : K_OUT_NEW;   /* and with out == a */
        k_check(k, &c, SLICE_ERR_HINT);
    }
    for (int n = -1; n <= 4; n += 5) {   /* n outside 0..ndim */
        k_call c = k_on_array(k, K_SLICE, 3, (int64_t[]){ 3, 4, 5 });
        k_index(&c, 3, ok);
        c.n = n;
        k_expect(k, &c, ND_ERR_ARG, SLICE_ERR_HINT);
    }
    /* an integer cannot index an empty axis; a step of 0 is still wrong */
    const nd_index empty[4][2] = { { ND_ALL, ND_AT(0) }, { ND_ALL, ND_AT(-1) },
                                   { ND_ALL, ND_SLICE(ND_NONE, ND_NONE, 0) },
                                   { ND_AT(2), ND_SLICE(ND_NONE, ND_NONE, -1) } };
    for (int i = 0; i < 4; i++) {
        k_call c = k_on_array(k, K_SLICE, 2, (int64_t[]){ 3, 0 });
        k_index(&c, 2, empty[i]);
        k_expect(k, &c, i < 3 ? ND_ERR_INDEX : ND_OK, SLICE_ERR_HINT);
    }
}

static void diagonal_random_views(k_ctx *k)
{
    k_check_random_views(k, K_DIAGONAL, 5000, 2, ND_MAX_DIMS, 6, false, DIAGONAL_HINT);
}

static void diagonal_axis_pairs(k_ctx *k)
{
    static const int64_t far[] = { INT64_MAX, -INT64_MAX, INT64_MAX - 1, -INT64_MAX + 1,
                                   INT64_MIN };
    for (int i = 0; i < 10 * 10 * 13 + 5; i++) {   /* a (2,3,4,5) view, mixed strides */
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
    for (int i = 0; i < 8 * 8 * 3; i++) {   /* 8 axes: every pair */
        k_call c = k_new(k, K_DIAGONAL);
        k_arg(&c, k_view(k, &c, 8, s8, K_STEPS, K_DISTINCT));
        c.at[0] = i % 3 - 1;
        c.at[1] = i / 24;
        c.at[2] = i / 3 % 8;
        k_check(k, &c, PAIRS_HINT);
    }
}

static void views_chain_random(k_ctx *k)
{
    k_check_view_chains(k, 2000, 3, 8, ND_MAX_DIMS, 5, true, CHAIN_HINT);
}

static void views_share_not_copy(k_ctx *k)
{
    static const k_op ops[] = { K_PERMUTE, K_BROADCAST_TO, K_SLICE, K_DIAGONAL, K_RESHAPE };
    for (int i = 0; i < 5000; i++) {
        k_call c = k_random_view_call(k, ops[i % 5], 2, 6, 4);
        if (i % 5 == 4 && !k_compact_layout(&c.args[0]))
            continue;
        k_check(k, &c, SHARE_HINT);
    }
}

static void views_bad_arguments(k_ctx *k)
{
    static const k_op ops[] = { K_COMPACT_STRIDES, K_IS_COMPACT, K_OFFSET_OF, K_RESHAPE,
                                K_PERMUTE, K_BROADCAST_TO, K_SLICE, K_DIAGONAL };
    for (int i = 0; i < 8; i++) {
        k_call c = i ? k_on_array(k, ops[i], 2, (int64_t[]){ 2, 3 }) : k_new(k, ops[i]);
        if (i == 0)
            k_list(&c, 0, 2, (int64_t[]){ 2, 3 });
        else
            k_view_args(k, &c);
        k_check_bad_arrays(k, &c);
    }
}

/* 2^22 elements: a (2048,2048) transpose; 8 axes reversed every way */
static void views_large_8d(k_ctx *k)
{
    int64_t n = INT64_C(1) << 22, sq[2] = { 2048, 2048 }, s8[8] = { 8, 8, 8, 8, 8, 8, 4, 4 };
    k_call c = k_on_array(k, K_RESHAPE, 1, &n);
    k_list(&c, 0, 2, sq);
    k_check_then(k, &c, K_PERMUTE, LARGE_HINT);
    k_list(&c, 0, 2, (int64_t[]){ 1, 0 });
    k_check_then(k, &c, K_IS_COMPACT, LARGE_HINT);
    k_arr tr = c.args[0];
    k_check(k, &c, LARGE_HINT);
    for (int i = 0; i < 2; i++) {
        c = k_on_view(k, i ? K_OFFSET_OF : K_RESHAPE, n, 2, tr.shape, tr.strides, 0);
        k_list(&c, 0, i ? 2 : 1, i ? (int64_t[]){ 2047, 5 } : &n);
        k_check(k, &c, LARGE_HINT);
    }
    c = k_on_array(k, K_RESHAPE, 1, &n);
    k_list(&c, 0, 8, s8);
    k_check_then(k, &c, K_PERMUTE, LARGE_HINT);
    k_list(&c, 0, 8, (int64_t[]){ 7, 6, 5, 4, 3, 2, 1, 0 });
    k_check_then(k, &c, K_SLICE, LARGE_HINT);
    c.n = 8;
    for (int d = 0; d < 8; d++)
        c.idx[d] = ND_SLICE(ND_NONE, ND_NONE, -1);
    k_check_then(k, &c, K_DIAGONAL, LARGE_HINT);
    k_arr rev = c.args[0];
    c.at[0] = 1;
    c.at[1] = 0;
    c.at[2] = 7;
    k_check(k, &c, LARGE_HINT);
    c = k_on_view(k, K_OFFSET_OF, n, 8, rev.shape, rev.strides, rev.offset);
    k_list(&c, 0, 8, (int64_t[]){ 3, 1, 4, 1, 5, 7, 2, 6 });
    k_check(k, &c, LARGE_HINT);
}

/* Arrays with no elements carry any strides and sizes up to 2^44 (nd.h,
 * "Valid arrays", rule 4): every view function on them, with random
 * arguments, as the reference says (issue #17). */
static void views_empty_wild_strides(k_ctx *k)
{
    static const k_op ops[] = { K_RESHAPE, K_PERMUTE, K_BROADCAST_TO, K_SLICE, K_DIAGONAL };
    for (int i = 0; i < 400; i++) {
        k_op op = ops[i % 5];
        k_call c = k_new(k, op);
        k_arg(&c, k_empty_view(k, &c, (int)k_int(k, op == K_DIAGONAL ? 2 : 1, 6), 4));
        k_view_args(k, &c);
        k_check(k, &c, "an array with no elements may carry any strides: never add or "
                "multiply them unchecked, and keep the offset (nd_add_ok, nd_mul_ok)");
    }
}

static const k_test tests[] = {
    K_TEST(compact_strides_all_shapes, K_HOST, 2, STRIDES_HINT),
    K_TEST(is_compact_property, K_CPU, 3, COMPACT_HINT),
    K_TEST(offset_of_every_index, K_CPU, 2, OFFSET_HINT),
    K_TEST(reshape_round_trip, K_CPU, 3, RESHAPE_HINT),
    K_TEST(reshape_layout_and_errors, K_CPU, 3, RESHAPE_ERR_HINT),
    K_TEST(permute_inverse_identity, K_CPU, 3, PERMUTE_HINT),
    K_TEST(permute_axes_validation, K_CPU, 2, AXES_HINT),
    K_TEST(broadcast_of_broadcast, K_CPU, 3, BROADCAST_HINT),
    K_TEST(broadcast_rules_exhaustive, K_CPU, 2, RULES_HINT),
    K_TEST(slice_python_exhaustive, K_CPU, 5, PYTHON_HINT),
    K_TEST(slice_of_slice_combined, K_CPU, 3, SLICES_HINT),
    K_TEST(slice_ints_and_extremes, K_CPU, 2, INTS_HINT),
    K_TEST(slice_errors_deep, K_CPU, 2, SLICE_ERR_HINT),
    K_TEST(diagonal_random_views, K_CPU, 3, DIAGONAL_HINT),
    K_TEST(diagonal_axis_pairs, K_CPU, 2, PAIRS_HINT),
    K_TEST(views_chain_random, K_CPU, 4, CHAIN_HINT),
    K_TEST(views_share_not_copy, K_CPU, 2, SHARE_HINT),
    K_TEST(views_bad_arguments, K_CPU, 1, BAD_HINT),
    K_TEST(views_large_8d, K_CPU, 3, LARGE_HINT),
    K_TEST(views_empty_wild_strides, K_CPU, 1, DIAGONAL_HINT),
};
K_SUITE(hidden_01, 1, "01_views", tests);
