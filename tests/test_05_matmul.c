/*
 * test_05_matmul.c -- public tests of lesson 5: nd_matmul_naive and the
 * tiled nd_matmul, NumPy's matmul on strided views: (..., m, k) @
 * (..., k, n) -> (..., m, n), the batch axes broadcast.
 *
 * Each test makes calls over the kit (tests/kit/kit.h): inputs are views
 * made with nd_as_strided, the kit's reference multiplies in double (small
 * integers exactly; floats within the dot-product bound, see
 * tests/kit/ref.c) and its comparison writes the message.  Every test but
 * the first runs both functions; all need for_each_matrix (the batch loop,
 * at the end of the lesson), as even a 2-D product is a batch of one.
 */
#include "kit.h"

#include <string.h>

#define NAIVE_HINT "c[..., i, j] = sum over p of a[..., i, p] * b[..., p, j], reading a " \
    "and b through their own offsets and signed strides; for_each_matrix takes each " \
    "input's matrix at its own batch position (matrix_at)"
#define TILED_HINT "pack the panels through the views' offsets and strides, pad the last " \
    "sliver with zeros to MR rows or NR columns, start c at zero and let every slice of k " \
    "ADD its product; write back only the valid mr x nr part of an edge block"

static const k_op both[2] = { K_MATMUL_NAIVE, K_MATMUL };

/* `count` random products by op: sizes up to 70, any views, batches
 * broadcast; small integers (exact) or floats. */
static void random_products(k_ctx *k, k_op op, int count)
{
    for (int i = 0; i < count; i++) {   /* the first: (2,3) @ (3,2), compact */
        int nda = 2, ndb = 2;
        int64_t sa[ND_MAX_DIMS] = { 2, 3 }, sb[ND_MAX_DIMS] = { 3, 2 };
        if (i > 0)
            k_matmul_shapes(k, 70, 120000, &nda, sa, &ndb, sb);
        k_call c = k_product(k, op, nda, sa, ndb, sb, i ? K_ANY | K_REPEAT : 0,
                             i % 2 ? K_RANDOM : K_INTEGERS);
        k_check(k, &c, op == K_MATMUL ? TILED_HINT : NAIVE_HINT);
    }
}

static void matmul_naive_random(k_ctx *k) { random_products(k, K_MATMUL_NAIVE, 500); }

static void matmul_small_cases(k_ctx *k)
{
    static const struct {
        const char *what;
        int nda, ndb;
        int64_t sa[3], sb[3];
        float a[8], b[8];
    } cases[] = {
        { "(2,3) @ (3,2): c[0,0] = 1*7 + 2*9 + 3*11 = 58", 2, 2, { 2, 3 }, { 3, 2 },
          { 1, 2, 3, 4, 5, 6 }, { 7, 8, 9, 10, 11, 12 } },
        { "(1,1) @ (1,1)", 2, 2, { 1, 1 }, { 1, 1 }, { 3 }, { -2 } },
        { "a row times a column: (1,3) @ (3,1)", 2, 2, { 1, 3 }, { 3, 1 }, { 1, 2, 3 },
          { 4, 5, 6 } },
        { "a column times a row (outer product): (3,1) @ (1,2)", 2, 2, { 3, 1 }, { 1, 2 },
          { 1, 2, 3 }, { 4, 5 } },
        { "a batch of two: (2,1,2) @ (2,2,1)", 3, 3, { 2, 1, 2 }, { 2, 2, 1 }, { 1, 2, 3, 4 },
          { 5, 6, 7, 8 } },
        { "one b for a batch of two a: (2,2,2) @ (2,2)", 3, 2, { 2, 2, 2 }, { 2, 2 },
          { 1, 0, 0, 1, 2, 0, 0, 2 }, { 1, 2, 3, 4 } },
        { "cancellation to exactly 0: (1,2) @ (2,1)", 2, 2, { 1, 2 }, { 2, 1 }, { 3, -2 },
          { 2, 3 } },
    };
    for (int f = 0; f < 2; f++)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            k_call c = k_new(k, both[f]);
            k_arg(&c, k_given(k, &c, cases[i].nda, cases[i].sa, cases[i].a));
            k_arg(&c, k_given(k, &c, cases[i].ndb, cases[i].sb, cases[i].b));
            k_check(k, &c, cases[i].what);
        }
}

static void matmul_special_views(k_ctx *k)
{
    /* named views of a buffer of 12 floats, as a (times a compact b) and as
     * b (a compact a times it) */
    static const struct {
        const char *what;
        int ndim;
        int64_t shape[3], strides[3], offset;
    } views[] = {
        { "a transpose", 2, { 4, 3 }, { 1, 4 }, 0 },
        { "both axes reversed", 2, { 3, 4 }, { -4, -1 }, 11 },
        { "every row the same (row stride 0)", 2, { 3, 4 }, { 0, 1 }, 4 },
        { "every column the same (column stride 0)", 2, { 4, 3 }, { 1, 0 }, 8 },
        { "one element everywhere (strides 0, 0)", 2, { 3, 3 }, { 0, 0 }, 5 },
        { "every other column, offset 1", 2, { 3, 2 }, { 4, 2 }, 1 },
        { "a batch of transposes, the batch axis reversed", 3, { 2, 2, 3 }, { -6, 1, 2 }, 6 },
        { "a broadcast batch (batch stride 0)", 3, { 3, 2, 4 }, { 0, 4, 1 }, 0 },
    };
    for (int f = 0; f < 2; f++)
        for (size_t i = 0; i < sizeof views / sizeof views[0]; i++)
            for (int as_b = 0; as_b < 2; as_b++) {
                int nd = views[i].ndim;
                int64_t other[2] = { as_b ? 3 : views[i].shape[nd - 1], 5 };
                if (as_b)
                    other[1] = views[i].shape[nd - 2];
                k_call c = k_new(k, both[f]);
                k_arr v = k_strided(k, &c, 12, nd, views[i].shape, views[i].strides,
                                    views[i].offset, K_RANDOM);
                k_arr o = k_compact(k, &c, 2, other, K_RANDOM);
                k_arg(&c, as_b ? o : v);
                k_arg(&c, as_b ? v : o);
                k_check(k, &c, views[i].what);
            }
    for (int f = 0; f < 4; f++) {   /* a @ a.T and a.T @ a: views of one buffer */
        k_call c = k_new(k, both[f % 2]);
        k_arr a = k_compact(k, &c, 2, (int64_t[]){ 3, 4 }, K_RANDOM);
        k_arr t = k_at(a.buf, 2, (int64_t[]){ 4, 3 }, (int64_t[]){ 1, 4 }, 0);
        k_arg(&c, f < 2 ? a : t);
        k_arg(&c, f < 2 ? t : a);
        k_check(k, &c, "a and b may be views of one buffer: read both, write neither");
    }
}

static void matmul_tiled_random(k_ctx *k) { random_products(k, K_MATMUL, 500); }

/* a (m,k) @ (k,n) of random views, by both functions. */
static void edge(k_ctx *k, int64_t m, int64_t kk, int64_t n, const char *hint)
{
    for (int f = 0; f < 2; f++) {
        k_call c = k_product(k, both[f], 2, (int64_t[]){ m, kk }, 2, (int64_t[]){ kk, n },
                             K_ANY, K_RANDOM);
        k_check(k, &c, hint);
    }
}

static void matmul_tile_edges(k_ctx *k)
{
    /* one below, at and one above common tile sizes: register blocks (MR,
     * NR) for m and n, cache blocks of k (KC), of m (MC) and of n (NC) */
    static const int64_t small[] = { 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15, 16, 17, 23,
                                     24, 25, 31, 32, 33, 47, 48, 49, 63, 64, 65 };
    static const int64_t depth[] = { 127, 128, 129, 255, 256, 257, 383, 384, 385, 511, 512,
                                     513 };
    static const int64_t rows[] = { 71, 72, 73, 95, 96, 97, 143, 144, 145, 191, 192, 193,
                                    263, 264, 265, 383, 384, 385, 511, 512, 513 };
    static const int64_t cols[] = { 1023, 1024, 1025, 2047, 2048, 2049, 4095, 4096, 4097 };
    for (int i = 0; i < 12; i++)
        edge(k, small[k_int(k, 0, 25)], depth[i], small[k_int(k, 0, 25)], "cut k into slices "
             "of KC, the last one shorter (kc = min(KC, k - pc)); each slice ADDS to c");
    for (int i = 0; i < 52; i++)
        edge(k, small[i % 26], k_int(k, 1, 40), small[(i * 7 + 3) % 26], "m and n need not "
             "be multiples of MR and NR: pad the last sliver with zeros, write back mr x nr");
    for (int i = 0; i < 21; i++)
        edge(k, rows[i], 19, 21, "the last MC block of rows may be short: mc = min(MC, m - ic)");
    for (int i = 0; i < 9; i++)
        edge(k, 3, 11, cols[i], "the last NC block of columns may be short: nc = min(NC, n - "
             "jc), and c's block starts at column jc of a row n long");
}

static void matmul_large(k_ctx *k)
{
    /* (300,257) @ (257,301) of small integers: exact; compact, then a
     * transposed and reversed a times a transposed b */
    for (int f = 0; f < 2; f++)
        for (int views = 0; views < 2; views++) {
            k_call c = k_new(k, both[f]);
            k_arg(&c, k_strided(k, &c, 300 * 257, 2, (int64_t[]){ 300, 257 }, views ?
                                (int64_t[]){ -1, -300 } : (int64_t[]){ 257, 1 },
                                views ? 300 * 257 - 1 : 0, K_INTEGERS));
            k_arg(&c, k_strided(k, &c, 257 * 301, 2, (int64_t[]){ 257, 301 }, views ?
                                (int64_t[]){ 1, 257 } : (int64_t[]){ 301, 1 }, 0, K_INTEGERS));
            k_check(k, &c, "k = 257 is one past KC: the second slice of k must add to c, "
                    "not overwrite it");
        }
}

static void matmul_batch_broadcast(k_ctx *k)
{
    static const struct { int nda, ndb; int64_t sa[5], sb[5]; } cases[] = {
        { 4, 3, { 2, 1, 4, 3 }, { 3, 3, 5 } },       { 2, 3, { 4, 3 }, { 6, 3, 5 } },
        { 3, 2, { 6, 4, 3 }, { 3, 5 } },             { 5, 5, { 3, 1, 1, 4, 3 }, { 1, 2, 1, 3, 5 } },
        { 3, 3, { 1, 4, 3 }, { 1, 3, 5 } },          { 4, 4, { 2, 3, 4, 3 }, { 2, 3, 3, 5 } },
        { 5, 2, { 1, 1, 1, 4, 3 }, { 3, 5 } },       { 3, 2, { 0, 4, 3 }, { 3, 5 } },
        { 4, 3, { 0, 1, 4, 3 }, { 3, 3, 5 } },
    };
    for (int f = 0; f < 2; f++)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            for (int views = 0; views < 2; views++) {
                k_call c = k_product(k, both[f], cases[i].nda, cases[i].sa, cases[i].ndb,
                                     cases[i].sb, views ? K_ANY | K_REPEAT : 0, K_RANDOM);
                k_check(k, &c, "batch axes align at the right; a size-1 or missing axis "
                        "repeats; each input is read at ITS OWN batch position");
            }
}

static void matmul_empty(k_ctx *k)
{
    static const struct { int nda, ndb; int64_t sa[3], sb[3]; } cases[] = {
        { 2, 2, { 0, 4 }, { 4, 3 } }, { 2, 2, { 3, 4 }, { 4, 0 } }, { 2, 2, { 3, 0 }, { 0, 4 } },
        { 3, 2, { 2, 3, 0 }, { 0, 5 } }, { 2, 2, { 0, 0 }, { 0, 0 } },
        { 2, 2, { 0, 5 }, { 5, 0 } }, { 2, 2, { 1, 0 }, { 0, 1 } },
    };
    for (int f = 0; f < 2; f++)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            k_call c = k_product(k, both[f], cases[i].nda, cases[i].sa, cases[i].ndb,
                                 cases[i].sb, K_ANY, K_RANDOM);
            k_check(k, &c, "k = 0 is the empty sum: c is all zeros, and must be written; m or "
                    "n = 0 is an empty result");
        }
}

static void matmul_out_aliases_input(k_ctx *k)
{
    /* f(&x, &y, &x), f(&x, &y, &y) and f(&x, &x, &x) with x a transposed view */
    for (int f = 0; f < 6; f++) {
        int which = f / 2;
        k_call c = k_new(k, both[f % 2]);
        k_arr x = k_strided(k, &c, 16, 2, (int64_t[]){ 4, 4 }, (int64_t[]){ 1, 4 }, 0, K_RANDOM);
        k_arg(&c, x);
        k_arg(&c, which == 2 ? x : k_compact(k, &c, 2, (int64_t[]){ 4, 5 }, K_RANDOM));
        c.out = which == 1 ? 1 : 0;
        k_check(k, &c, "when out is an input, compute into a new array, then replace out");
    }
}

static void matmul_errors(k_ctx *k)
{
    static const struct { int nda, ndb; int64_t sa[3], sb[3]; nd_status want; } bad[] = {
        { 2, 2, { 3, 4 }, { 5, 6 }, ND_ERR_SHAPE },       /* inner sizes 4 and 5 */
        { 3, 3, { 2, 3, 4 }, { 3, 4, 5 }, ND_ERR_SHAPE }, /* batch sizes 2 and 3 */
        { 3, 3, { 2, 3, 4 }, { 2, 5, 6 }, ND_ERR_SHAPE },
        { 3, 2, { 5, 2, 3 }, { 4, 3 }, ND_ERR_SHAPE },
        { 3, 3, { 2, 2, 3 }, { 1, 3, 2 }, ND_OK },        /* a valid broadcast */
        { 1, 2, { 4 }, { 4, 3 }, ND_ERR_ARG },            /* fewer than 2 axes */
        { 2, 1, { 3, 4 }, { 4 }, ND_ERR_ARG },
        { 0, 2, { 0 }, { 1, 1 }, ND_ERR_ARG },
        { 2, 0, { 1, 1 }, { 0 }, ND_ERR_ARG },
    };
    for (int f = 0; f < 2; f++) {
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            k_call c = k_product(k, both[f], bad[i].nda, bad[i].sa, bad[i].ndb, bad[i].sb, 0,
                                 K_DISTINCT);
            k_expect(k, &c, bad[i].want, NULL);
        }
        k_call c = k_product(k, both[f], 2, (int64_t[]){ 3, 4 }, 2, (int64_t[]){ 4, 5 }, 0,
                             K_DISTINCT);
        k_check_bad_arrays(k, &c);
        if (k_dev(k) == ND_CUDA) {   /* b on the other device */
            c = k_product(k, both[f], 2, (int64_t[]){ 3, 4 }, 2, (int64_t[]){ 4, 5 }, 0,
                          K_DISTINCT);
            c.bufs[1].on = ND_CPU + 1;
            k_expect(k, &c, ND_ERR_DEVICE, NULL);
        }
    }
}

/* ---------------------------------------------------------------------- */
/* Extreme shapes, strides and offsets (issue #17)                         */
/* ---------------------------------------------------------------------- */

/* Huge m and n in an empty batch once passed the element check (which
 * stopped at the 0), and m * n overflowed.  The shapes a, b and c would
 * take are checked, and the error names matmul.  With k == 0, a and b
 * have no elements and any strides; the product is zeros, computed
 * without them. */
static void extreme_matmul_shapes(k_ctx *k)
{
    static const int64_t two[2] = { 2, 2 }, zeros[3] = { 0 }, sa[3] = { 0, K_P2(40), 1 },
                         sb[2] = { 1, K_P2(40) }, ta[3] = { 1, K_P2(30), K_P2(28) },
                         tb[3] = { K_P2(10), K_P2(28), 1 }, s320[3] = { 3, 2, 0 },
                         wild[3] = { INT64_MAX, INT64_MIN, 1 }, s304[3] = { 3, 0, 4 };
    static const char *const hint = "check the shapes of the result and of a and b broadcast "
        "to the batch (nd_check_shape) before anything is made";
    for (int naive = 0; naive < 2; naive++) {
        k_op op = naive ? K_MATMUL_NAIVE : K_MATMUL;
        k_call c = k_on_array(k, op, 2, two);
        k_arg(&c, c.args[0]);
        k_expect(k, &c, ND_OK, naive ? NAIVE_HINT : TILED_HINT);
        /* (0,2^40,1) @ (1,2^40): the result (0,2^40,2^40) has too many elements */
        c = k_on_view(k, op, 1, 3, sa, zeros, 0);
        k_arg(&c, k_at(0, 2, sb, zeros, 0));
        k_expect(k, &c, ND_ERR_ARG, hint);
        /* (1,2^30,2^28) @ (2^10,2^28,1): c is (2^10,2^30,1), but a broadcast
         * to the batch would be (2^10,2^30,2^28) */
        c = k_on_view(k, op, 1, 3, ta, zeros, 0);
        k_arg(&c, k_at(0, 3, tb, zeros, 0));
        k_expect(k, &c, ND_ERR_ARG, hint);
        /* k == 0: a (3,2,0) with strides (INT64_MAX,INT64_MIN,1) */
        c = k_on_view(k, op, 1, 3, s320, wild, 1);
        k_arg(&c, k_compact(k, &c, 3, s304, K_DISTINCT));
        k_expect(k, &c, ND_OK, "a sum over k = 0 terms is 0, and a's strides are never read");
    }
}

static const k_test tests[] = {
    K_TEST(matmul_naive_random, K_BOTH, 0, NAIVE_HINT),
    K_TEST(matmul_small_cases, K_BOTH, 0, TILED_HINT),
    K_TEST(matmul_special_views, K_BOTH, 0, TILED_HINT),
    K_TEST(matmul_tiled_random, K_BOTH, 0, TILED_HINT),
    K_TEST(matmul_tile_edges, K_BOTH, 0, TILED_HINT),
    K_TEST(matmul_large, K_BOTH, 0, TILED_HINT),
    K_TEST(matmul_batch_broadcast, K_BOTH, 0, NAIVE_HINT),
    K_TEST(matmul_empty, K_BOTH, 0, TILED_HINT),
    K_TEST(matmul_out_aliases_input, K_BOTH, 0, TILED_HINT),
    K_TEST(matmul_errors, K_BOTH, 0, "the given matmul_operands checks the shapes before "
           "anything is allocated: keep your code after it"),
    K_TEST(extreme_matmul_shapes, K_BOTH, 0, TILED_HINT),
};
K_SUITE(public_05, 5, "05_matmul", tests);
