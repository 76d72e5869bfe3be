/*
 * h01_views.c -- hidden tests of lesson 1: the public tests of
 * tests/test_01_views.c run again under other names (so other seeds), with
 * up to 33 times their random cases (K_AGAIN); and what no public test
 * has: every slice bound and step from a set of 20 and 13 on short axes,
 * and arrays with no elements and wild strides through every view function.
 */
#include "kit.h"

#define PYTHON_HINT "follow Python's slice.indices(): a negative bound adds the size, then " \
    "clips to 0 (-1 for a negative step); a bound >= size clips to size (size-1 for a " \
    "negative step); a negative step's default start is the LAST position; count = " \
    "(stop-start-1)/step+1 without overflow for steps near INT64_MAX"

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

/* A K_AGAIN runs a public test, whose checks carry that test's hints: a
 * hint here is one for what the hidden cases add. */
static const k_test tests[] = {
    K_AGAIN(compact_strides_many, public_01, compact_strides_random, 10, K_HOST, 2, NULL),
    K_AGAIN(is_compact_property, public_01, is_compact_random, 33, K_CPU, 3, NULL),
    K_AGAIN(offset_of_every_index, public_01, offset_of_random, 10, K_CPU, 2, NULL),
    K_AGAIN(reshape_round_trip, public_01, reshape_random, 13, K_CPU, 5, NULL),
    K_AGAIN(reshape_layout_and_errors, public_01, reshape_errors, 1, K_CPU, 3, "only axes "
            "longer than 1 decide compactness; check -1s, negative sizes and counts before "
            "anything else, and leave *out (even when it is a) as it was"),
    K_AGAIN(permute_inverse_identity, public_01, permute_random, 17, K_CPU, 3, NULL),
    K_AGAIN(permute_axes_validation, public_01, permute_errors, 1, K_CPU, 2, "normalise each "
            "axis (add ndim if negative), then reject one outside 0..ndim-1 or named twice "
            "with ND_ERR_AXIS, before writing *out"),
    K_AGAIN(broadcast_of_broadcast, public_01, broadcast_random, 13, K_CPU, 3, NULL),
    K_AGAIN(broadcast_rules_exhaustive, public_01, broadcast_errors, 1, K_CPU, 2, NULL),
    K_TEST(slice_python_exhaustive, K_CPU, 5, PYTHON_HINT),
    K_AGAIN(slice_of_slice_combined, public_01, slice_random, 17, K_CPU, 5, NULL),
    K_AGAIN(slice_errors_deep, public_01, slice_errors, 1, K_CPU, 2, "check every entry (kind, "
            "step != 0, integer in -size..size-1) before writing *out; n may be smaller than "
            "ndim, never larger; on an error *out (even a itself) stays as it was"),
    K_AGAIN(diagonal_random_views, public_01, diagonal_random, 17, K_CPU, 3, NULL),
    K_AGAIN(diagonal_axis_pairs, public_01, diagonal_errors, 1, K_CPU, 2, NULL),
    K_AGAIN(views_chain_random, public_01, views_chain_random, 7, K_CPU, 6, NULL),
    K_AGAIN(views_bad_arguments, public_01, views_reject_bad_arrays, 1, K_CPU, 1, NULL),
    K_TEST(views_empty_wild_strides, K_CPU, 2, NULL),
};
K_SUITE(hidden_01, 1, "01_views", tests);
