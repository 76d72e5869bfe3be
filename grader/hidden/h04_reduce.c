/*
 * h04_reduce.c -- hidden tests of lesson 4: nd_reduce, the sum and the max
 * over any set of axes, with and without keepdims.  Most are public tests
 * of tests/test_04_reduce.c run again (K_AGAIN: other seeds, up to 12
 * times their random calls).  Their own: every subset of the axes of 4-D
 * views listed in every order, every 3-D shape with sizes 0..3, one
 * element broadcast over 1..8 axes, and long sums: 2^22 terms within the
 * pairwise bound (tests/kit/ref.c), more than 2^31 terms (int64_t counts).
 */
#include "kit.h"

#include <string.h>

#define SUM_HINT "read a through its own offset and signed strides (0 on a broadcast " \
    "axis) for up to 8 axes; fold each block completely; the sum of an empty block is 0"
#define MAX_HINT "a max starts from the block's first element: a block of negative numbers " \
    "has a negative max, an all -inf block -inf; a NaN in a block makes its max NaN"
#define ACCURACY_HINT "add a long run in halves (pairwise summation), each half the same " \
    "way, so that each element goes through O(log n) roundings; add the runs' sums in " \
    "double: a running float total rounds at its own, growing scale"

static void reduce(k_ctx *k, k_call *c, int op, int naxes, const int64_t *axes, bool keep)
{
    k_reduce_of(c, op, naxes, axes, keep);
    k_check(k, c, NULL);
}

static k_fill fill_for(int op, int i)
{
    static const k_fill max_fills[] = { K_NEGATIVE, K_SPECIAL, K_RANDOM, K_INTEGERS };
    return op == ND_SUM ? (i % 2 ? K_RANDOM : K_INTEGERS) : max_fills[i % 4];
}

/* ---------------------------------------------------------------------- */
/* Axes                                                                   */
/* ---------------------------------------------------------------------- */

/* Every subset of the axes of 4-D views, listed in every order with random
 * signs (and all of them as ND_ALL_AXES, none as axes NULL). */
static void subsets(k_ctx *k, int op)
{
    static const int64_t shapes[][4] = {
        { 2, 3, 4, 5 }, { 3, 1, 4, 2 }, { 1, 1, 1, 1 }, { 4, 2, 1, 6 }, { 2, 0, 3, 2 },
        { 5, 3, 2, 1 }, { 1, 7, 1, 3 }, { 2, 2, 2, 2 }, { 3, 4, 0, 1 }, { 6, 5, 4, 3 },
        { 17, 1, 2, 3 }, { 2, 3, 1, 33 },
    };
    for (int s = 0; s < 24; s++)
        for (int mask = 0; mask < 16; mask++) {
            int64_t set[4], n = 0, orders = 1;
            for (int b = 0; b < 4; b++)
                if (mask >> b & 1)
                    set[n++] = b;
            for (int64_t i = 2; i <= n; i++)
                orders *= i;
            for (int64_t j = 0; j < orders + (mask == 0 || mask == 15); j++) {
                int64_t axes[4], pool[4], rest = n, code = j;   /* order j of n! */
                memcpy(pool, set, sizeof pool);
                for (int i = 0; i < n; i++, code /= rest + 1) {
                    int pick = (int)(code % rest);
                    axes[i] = pool[pick] - (k_one_in(k, 2) ? 4 : 0);
                    pool[pick] = pool[--rest];
                }
                k_call c = k_new(k, K_REDUCE);
                k_arg(&c, k_view(k, &c, 4, shapes[s / 2], K_ANY | (s % 2 ? K_REPEAT : 0),
                                 fill_for(op, s + mask)));
                bool all = j == orders;   /* every axis as ND_ALL_AXES, none as NULL */
                reduce(k, &c, op, all ? (mask ? ND_ALL_AXES : 0) : (int)n, all ? NULL : axes,
                       (j + s) % 2);
            }
        }
}

static void reduce_sum_every_axis_subset(k_ctx *k) { subsets(k, ND_SUM); }
static void reduce_max_every_axis_subset(k_ctx *k) { subsets(k, ND_MAX); }

/* ---------------------------------------------------------------------- */
/* Layouts                                                                */
/* ---------------------------------------------------------------------- */

static void reduce_broadcast_views(k_ctx *k)
{
    for (int i = 0; i < 300; i++) {   /* one element, -1.25, on 1..8 axes of stride 0 */
        int64_t shape[ND_MAX_DIMS], zeros[ND_MAX_DIMS] = { 0 }, axes[ND_MAX_DIMS];
        int nd = k_shape(k, 1 + i % ND_MAX_DIMS, 1, i % 4 == 3 ? 300 : 7, 1 << 15, shape);
        int naxes = k_axes(k, nd, axes);
        for (int op = ND_SUM; op <= ND_MAX; op++) {
            k_call c = k_on_view(k, K_REDUCE, 3, nd, shape, zeros, 1);
            c.bufs[0].v[1] = -1.25f;
            reduce(k, &c, op, naxes, axes, i % 2);
        }
    }
}

static void reduce_empty_and_unit_axes(k_ctx *k)
{
    for (int i = 0; i < 64; i++)   /* every 3-D shape with sizes 0..3, every axis set */
        for (int op = ND_SUM; op <= ND_MAX; op++)
            for (int mask = 0; mask < 9; mask++)
                for (int keep = 0; keep < 2; keep++) {
                    int64_t shape[3] = { i % 4, i / 4 % 4, i / 16 }, axes[3];
                    int n = 0;
                    for (int b = 0; b < 3; b++)
                        if (mask >> b & 1)
                            axes[n++] = k_one_in(k, 2) ? b : b - 3;
                    k_call c = k_new(k, K_REDUCE);
                    k_arg(&c, k_view(k, &c, 3, shape, K_ANY | K_REPEAT, fill_for(op, i)));
                    reduce(k, &c, op, mask == 8 ? ND_ALL_AXES : n, axes, keep);
                }
}

/* ---------------------------------------------------------------------- */
/* Long sums                                                              */
/* ---------------------------------------------------------------------- */

typedef struct {
    int64_t size;   /* floats in the buffer */
    int ndim;
    int64_t shape[3], strides[3], offset;
    int naxes;
    int64_t axes[3];
} layout;

/* The sum over each layout of a buffer of values 0.1 + [0, 0.01): a
 * running float total drifts far. */
static void layouts(k_ctx *k, const layout *l, int n)
{
    for (int i = 0; i < n; i++) {
        k_call c = k_new(k, K_REDUCE);
        k_arg(&c, k_strided(k, &c, l[i].size, l[i].ndim, l[i].shape, l[i].strides, l[i].offset,
                            K_POISON));
        for (int64_t j = 0; j < l[i].size; j++)
            c.bufs[0].v[j] = 0.1f + k_float(k, 0, 0.01f);
        reduce(k, &c, ND_SUM, l[i].naxes, l[i].axes, i % 2);
    }
}

static void reduce_sum_accuracy_layouts(k_ctx *k)
{
    static const layout l[] = {
        { 1 << 22, 1, { 1 << 22 }, { 1 }, 0, 1, { 0 } },
        { 1 << 22, 1, { 1 << 22 }, { -1 }, (1 << 22) - 1, ND_ALL_AXES, { 0 } },
        { 1 << 22, 1, { 1398101 }, { 3 }, 1, 1, { -1 } },
        { 1 << 22, 2, { 2048, 2048 }, { 1, 2048 }, 0, 2, { 1, 0 } },
        { 1 << 22, 2, { 1048575, 3 }, { 4, 1 }, 1, 2, { -2, -1 } },   /* runs of 3 */
        { 1 << 22, 3, { 128, 128, 256 }, { 1, 32768, 128 }, 0, 3, { -1, -3, -2 } },
        { 1 << 22, 2, { 4, 1 << 20 }, { 1 << 20, 1 }, 0, 1, { 1 } },
        { 3, 2, { 2097152, 2 }, { 0, 1 }, 1, 1, { 0 } },             /* a broadcast row */
        { 1 << 21, 2, { 2, 1 << 21 }, { 0, -1 }, (1 << 21) - 1, ND_ALL_AXES, { 0 } },
    };
    layouts(k, l, (int)(sizeof l / sizeof l[0]));
}

static void reduce_count_past_int32(k_ctx *k)
{
    /* 2^31 + 1024 elements (one float, stride 0), one run: a 32-bit count
     * of the run or of the block wraps */
    static const layout l[] = { { 1, 1, { 2147484672 }, { 0 }, 0, 1, { 0 } } };
    layouts(k, l, 1);
}

static const k_test tests[] = {
    K_TEST(reduce_sum_every_axis_subset, K_CPU, 3, "mark the listed axes (a negative one "
           "counts from the end; their order does not matter); output element i folds every "
           "element whose index, with the reduced axes left out, is i"),
    K_TEST(reduce_max_every_axis_subset, K_CPU, 3, "reduce the axes as for the sum; " MAX_HINT),
    K_AGAIN(reduce_sum_random_8d, public_04, reduce_sum_random, 4, K_BOTH, 5, SUM_HINT),
    K_AGAIN(reduce_max_random_8d, public_04, reduce_max_random, 4, K_CPU, 3, MAX_HINT),
    K_AGAIN(reduce_no_axes_copy, public_04, reduce_all_and_no_axes, 3, K_BOTH, 2, "naxes 0 "
            "reduces no axis: a compact copy of a in a NEW buffer, NaN, inf and -0.0 included; "
            "with ND_ALL_AXES never read axes"),
    K_TEST(reduce_broadcast_views, K_CPU, 3, "a stride-0 axis shows one element again and "
           "again: a sum adds it once per position; step by the stride, even when it is 0"),
    K_TEST(reduce_empty_and_unit_axes, K_BOTH, 3, "a sum over a size-0 axis is 0 for each "
           "output; a max over one is ND_ERR_SHAPE even when the result is empty; a size-1 "
           "axis reduces to its one element"),
    K_AGAIN(reduce_max_negative_and_inf, public_04, reduce_max_special_values, 1, K_BOTH, 3,
            MAX_HINT "; fold EVERY partial max, the tail's too, into the result"),
    K_AGAIN(reduce_nan_one_block, public_04, reduce_nan_stays_in_its_block, 1, K_BOTH, 3,
            "a NaN makes the max of ITS block NaN (a plain > or fmaxf drops it), and no other "
            "output; read only the elements of the view"),
    K_TEST(reduce_sum_accuracy_layouts, K_BOTH, 4, ACCURACY_HINT),
    K_AGAIN(reduce_large_exact, public_04, reduce_large_exact, 1, K_CPU, 2, "sizes, strides "
            "and offsets are int64_t; a 2^20-element view is folded in one pass over its "
            "blocks, whatever their layout"),
    K_TEST(reduce_count_past_int32, K_CPU | K_PLAIN, 2, "a run may hold more than 2^31 "
           "elements: every count and index is int64_t, never int"),
    K_AGAIN(reduce_out_aliases_input, public_04, reduce_out_aliases_input, 12, K_BOTH, 2,
            "with out == a, build the result in a new array first, then let nd_replace drop "
            "a's old reference; on an error leave a as it was"),
    K_AGAIN(reduce_axis_errors, public_04, reduce_errors, 1, K_BOTH, 5, "normalise each axis "
            "(add ndim if negative), then reject one outside 0..ndim-1, or one reduced twice "
            "(1 and 1-ndim are the same axis), with ND_ERR_AXIS; check op, naxes and axes "
            "(ND_ERR_ARG); all before writing *out"),
    K_AGAIN(reduce_max_empty_error, public_04, reduce_empty, 1, K_BOTH, 2, "a max over a "
            "size-0 axis has no value: ND_ERR_SHAPE before allocating anything, even when the "
            "result has no elements; the SUM of no elements is 0"),
    K_AGAIN(reduce_empty_wild_strides, public_04, extreme_reduce_empty, 3, K_BOTH, 1,
            SUM_HINT),
};
K_SUITE(hidden_04, 4, "04_reduce", tests);
