/*
 * h02_compact.c -- hidden tests of lesson 2: the public tests of
 * tests/test_02_compact.c run again under other names (so other seeds),
 * with up to 10 times their random cases (K_AGAIN).
 */
#include "kit.h"

/* A K_AGAIN runs a public test, whose checks carry that test's hints: a
 * hint here is one for what the hidden cases add. */
static const k_test tests[] = {
    K_AGAIN(iter_order_8d, public_02, iter_order, 2, K_HOST, 3, NULL),
    K_AGAIN(iter_stops_and_empty, public_02, iter_scalar_and_empty, 1, K_HOST, 2, NULL),
    K_AGAIN(iter_errors, public_02, iter_errors, 1, K_HOST, 1, "check ndim and every size "
            "(the last one too) before writing anything into the iterator"),
    K_AGAIN(simplify_exact, public_02, simplify_random, 10, K_HOST, 8, NULL),
    K_AGAIN(simplify_errors, public_02, simplify_errors, 1, K_HOST, 1, "validate ndim, shape "
            "and strides_a before rewriting anything; read and write only the first *ndim "
            "entries"),
    K_AGAIN(simplify_wild_strides, public_02, extreme_simplify_dims, 10, K_HOST, 1, NULL),
    K_AGAIN(compact_random_8d, public_02, compact_random_views, 8, K_BOTH, 10, NULL),
    K_AGAIN(compact_large, public_02, compact_large, 1, K_CPU, 3, NULL),
    K_AGAIN(compact_edges, public_02, compact_transpose_edges, 1, K_CPU, 3, NULL),
    K_AGAIN(compact_alias, public_02, compact_out_aliases_input, 4, K_BOTH, 2, NULL),
    K_AGAIN(setitem_random_in_place, public_02, setitem_random, 10, K_BOTH, 8, NULL),
    K_AGAIN(setitem_aliasing, public_02, setitem_same_view, 3, K_BOTH, 3, NULL),
    K_AGAIN(setitem_scalar_views, public_02, setitem_scalar_random, 3, K_BOTH, 3, NULL),
    K_AGAIN(setitem_shape_rules, public_02, setitem_errors, 1, K_BOTH, 2, NULL),
};
K_SUITE(hidden_02, 2, "02_compact", tests);
