/*
 * h03_ewise.c -- hidden tests of lesson 3: the public tests of
 * tests/test_03_ewise.c run again (K_AGAIN) under their own names, so with
 * other seeds and 1-4 times their random calls; and their own: EVERY
 * ordered pair of the 85 shapes of up to 3 axes with sizes 0..3, through
 * nd_binary and into a dst.
 */
#include "kit.h"

#define BCAST_HINT "align the shapes at the RIGHT; a missing axis, or one of size 1, " \
    "stretches to the other's size and is read at index 0 (stride 0, whatever stride it " \
    "had); read each input through its own offset and signed strides"
#define INTO_HINT "write through dst's own offset and signed strides, to dst's elements and " \
    "no others; a contiguous fast path needs dst contiguous too"
#define OPS_HINT "C's own float arithmetic and powf, which follow IEEE 754 and C11 Annex F; " \
    "maximum is NaN when either input is (not fmaxf); EQ/GE are 1.0f or 0.0f, 0.0f with a " \
    "NaN, and GE is >=, not >"
#define ERRORS_HINT "check the op (0..count-1), every array (NULL, released, ndim out of " \
    "range), out and the devices before writing anything; messages start with the " \
    "operation's name"
#define ALIAS_HINT "out or dst may be a or b itself: compute from the inputs as they are, " \
    "each element read before it is written, never staged; release out's old reference " \
    "exactly once, and on an error leave it as it was"

/* The i-th of the 85 shapes of 0..3 axes with sizes 0..3; returns ndim. */
static int small_shape(int i, int64_t *shape)
{
    int n = i == 0 ? 0 : i < 5 ? 1 : i < 21 ? 2 : 3;
    int x = i - (n == 0 ? 0 : n == 1 ? 1 : n == 2 ? 5 : 21);   /* its index among them */
    for (int d = 0; d < n; d++, x /= 4)
        shape[d] = x % 4;
    return n;
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

static const k_test tests[] = {
    K_AGAIN(binary_random_deep, public_03, binary_random, 3, K_BOTH, 5, BCAST_HINT),
    K_TEST(binary_broadcast_exhaustive, K_BOTH, 4, BCAST_HINT),
    K_AGAIN(binary_ieee_grid, public_03, binary_ieee, 1, K_BOTH, 4, OPS_HINT),
    K_AGAIN(binary_into_strided_dst, public_03, binary_into_random, 4, K_BOTH, 4, INTO_HINT),
    K_AGAIN(binary_into_aliasing, public_03, into_aliases_input, 4, K_BOTH, 3, ALIAS_HINT),
    K_AGAIN(into_wrong_dst, public_03, into_wrong_dst, 3, K_BOTH, 3, INTO_HINT),
    K_AGAIN(scalar_random_views, public_03, scalar_random, 3, K_BOTH, 2, BCAST_HINT),
    K_AGAIN(scalar_into_strided_dst, public_03, scalar_into_random, 2, K_BOTH, 1, INTO_HINT),
    K_AGAIN(unary_random_views, public_03, unary_random, 3, K_BOTH, 2, BCAST_HINT),
    K_AGAIN(unary_into_strided_dst, public_03, unary_into_random, 2, K_BOTH, 1, INTO_HINT),
    K_AGAIN(unary_ieee_sweep, public_03, unary_ieee, 1, K_BOTH, 3, OPS_HINT),
    K_AGAIN(new_out_is_input, public_03, new_out_aliases_input, 1, K_BOTH, 3, ALIAS_HINT),
    K_AGAIN(rows_fast_path_edges, public_03, rows_of_every_stride, 1, K_BOTH, 2, INTO_HINT),
    K_AGAIN(ewise_large, public_03, ewise_large, 2, K_CPU, 3, INTO_HINT),
    K_AGAIN(binary_refusals, public_03, binary_errors, 1, K_BOTH, 1, ERRORS_HINT),
    K_AGAIN(errors_args, public_03, scalar_unary_errors, 1, K_BOTH, 1, ERRORS_HINT),
    K_AGAIN(ewise_results_too_large, public_03, extreme_ewise_result_errors, 2, K_BOTH, 1,
            BCAST_HINT),
};
K_SUITE(hidden_03, 3, "03_ewise", tests);
