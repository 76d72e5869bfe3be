/*
 * h05_matmul.c -- hidden tests of lesson 5: nd_matmul (tiled) and
 * nd_matmul_naive, NumPy's matmul on strided views.  Most are the public
 * tests of tests/test_05_matmul.c run again (K_AGAIN: other seeds,
 * k_count's cases scaled).  Their own: larger products (257x513x129 and
 * friends for both; 600x700x900, 530x520x300 and 40x300x4200 for the tiled
 * one), exactly.
 *
 * Small integers make every sum exact (the kit's reference then wants the
 * exact value); floats are held to the dot-product bound (tests/kit/ref.c).
 */
#include "kit.h"

#define TILED_HINT "pack the panels through the views' offsets and strides, zero-pad the " \
    "edges of the packed blocks, and write back only the valid part of an edge block"
#define VIEWS_HINT "pack the panels through the views' strides and offset: a transposed, " \
    "reversed, windowed or stride-0 a or b must give the same product as its compact copy"

static const k_op both[2] = { K_MATMUL, K_MATMUL_NAIVE };

static void mid_sizes(k_ctx *k)
{
    static const struct { int nda, ndb; int64_t sa[3], sb[3]; } cases[] = {
        { 2, 2, { 257, 513 }, { 513, 129 } }, { 2, 2, { 129, 257 }, { 257, 513 } },
        { 2, 2, { 513, 129 }, { 129, 257 } }, { 3, 2, { 2, 130, 131 }, { 131, 129 } },
    };
    for (int f = 0; f < 2; f++)
        for (int i = 0; i < 4; i++) {
            k_call c = k_product(k, both[f], cases[i].nda, cases[i].sa, cases[i].ndb,
                                 cases[i].sb, K_ANY, i % 2 ? K_RANDOM : K_INTEGERS);
            k_check(k, &c, NULL);
        }
}

static void large_cache_blocks(k_ctx *k)
{
    /* several KC slices, MC blocks and NC blocks, integers: exact */
    static const struct { int nda, ndb; int64_t sa[4], sb[4]; } cases[] = {
        { 2, 2, { 600, 700 }, { 700, 900 } }, { 2, 2, { 530, 520 }, { 520, 300 } },
        { 2, 2, { 40, 300 }, { 300, 4200 } }, { 4, 3, { 3, 1, 270, 300 }, { 2, 300, 140 } },
    };
    for (int i = 0; i < 4; i++) {
        k_call c = k_product(k, K_MATMUL, cases[i].nda, cases[i].sa, cases[i].ndb, cases[i].sb,
                             i ? K_ANY : 0, K_INTEGERS);
        k_check(k, &c, NULL);
    }
}

static const k_test tests[] = {
    K_AGAIN(tile_edges, public_05, matmul_tile_edges, 25, K_BOTH, 6, "m and n need not be "
            "multiples of MR or NR, nor of MC or NC: pack the rows and columns past an edge as "
            "zeros, write back only the part of an edge block that exists in c"),
    K_AGAIN(depth_edges, public_05, matmul_depth_edges, 10, K_BOTH, 4, "cut k into slices of "
            "KC and keep the last, shorter slice (kc = min(KC, k - pc)); every slice ADDS its "
            "product to c, which starts at 0; k == 0 leaves zeros"),
    K_AGAIN(naive_random_views, public_05, matmul_naive_random, 1, K_BOTH, 4, "c[..., i, j] = "
            "sum over p of a[..., i, p] * b[..., p, j], reading a and b through their own "
            "offsets and signed strides"),
    K_AGAIN(tiled_random_views, public_05, matmul_tiled_random, 1, K_BOTH, 7, VIEWS_HINT),
    K_AGAIN(batch_shapes, public_05, matmul_batch_broadcast, 40, K_BOTH, 6, "NumPy's matmul "
            "rule: batch axes align at the right, equal or 1 (0 against 1 gives 0), each input "
            "read at ITS OWN batch position; anything else is ND_ERR_SHAPE naming both shapes"),
    K_AGAIN(special_views, public_05, matmul_special_views, 25, K_BOTH, 7, "a transposed, "
            "reversed or stride-0 view, or a view of the other input's buffer: pack element "
            "(i, p) from offset + i*rs + p*cs with the real strides; never write an input"),
    K_AGAIN(out_aliases_input, public_05, matmul_out_aliases_input, 50, K_BOTH, 3, "with out "
            "== a or out == b, compute into a new array first; only then release out's old "
            "reference (maybe the last one of an input's buffer) and store the result"),
    K_AGAIN(empty_and_zero_depth, public_05, matmul_empty, 4, K_BOTH, 2, "k == 0 is the empty "
            "sum: write zeros; m, n or a batch of 0 is an empty result of the right shape, not "
            "an error"),
    K_TEST(mid_sizes, K_BOTH, 2, TILED_HINT),
    K_TEST(large_cache_blocks, K_CPU, 4, "each KC slice of k adds its product to c (never "
           "assigns); pack a's block again for every slice pc and block ic, b's panel for "
           "every pc and jc; offset c by (ic, jc) with row stride n"),
    K_AGAIN(errors, public_05, matmul_errors, 20, K_BOTH, 5, "check the inner sizes (even 0 "
            "against 4) and the batch axes, ND_ERR_SHAPE naming both shapes, and the arrays "
            "(NULL, released, fewer than 2 axes: ND_ERR_ARG) before anything is allocated or "
            "written, even when out is a"),
    K_AGAIN(matmul_k0_wild_strides, public_05, extreme_matmul_shapes, 20, K_BOTH, 1,
            TILED_HINT),
};
K_SUITE(hidden_05, 5, "05_matmul", tests);
