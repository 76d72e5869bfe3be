/*
 * test_05_matmul.c -- public tests of lesson 5: nd_matmul_naive and the
 * tiled nd_matmul, NumPy's matmul on strided views: (..., m, k) @
 * (..., k, n) -> (..., m, n), the batch axes broadcast.
 *
 * The kit's reference multiplies in double: small integers exactly, floats
 * within the dot-product bound (tests/kit/ref.c).  Every test but the first
 * runs both functions; all need for_each_matrix (the batch loop, at the end
 * of the lesson), as even a 2-D product is a batch of one.
 */
#include "kit.h"

#define NAIVE_HINT "c[..., i, j] = sum over p of a[..., i, p] * b[..., p, j], reading a " \
    "and b through their own offsets and signed strides; for_each_matrix takes each " \
    "input's matrix at its own batch position (matrix_at)"
#define TILED_HINT "pack the panels through the views' offsets and strides, pad the last " \
    "sliver with zeros to MR rows or NR columns, start c at zero and let every slice of k " \
    "ADD its product; write back only the valid mr x nr part of an edge block"

static const k_op both[2] = { K_MATMUL_NAIVE, K_MATMUL };

/* k_count(count) random products by op: sizes up to 130, any views,
 * batches broadcast; small integers (exact) or floats. */
static void random_products(k_ctx *k, k_op op, int count)
{
    for (int i = 0; i < k_count(k, count); i++) {   /* the first: (2,3) @ (3,2), compact */
        int nda = 2, ndb = 2;
        int64_t sa[ND_MAX_DIMS] = { 2, 3 }, sb[ND_MAX_DIMS] = { 3, 2 };
        if (i > 0)
            k_matmul_shapes(k, 130, 120000, &nda, sa, &ndb, sb);
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
        { "a Toeplitz view: rows overlap (strides -1, 1)", 2, { 4, 4 }, { -1, 1 }, 3 },
        { "every other column, offset 1", 2, { 3, 2 }, { 4, 2 }, 1 },
        { "a batch of transposes, the batch axis reversed", 3, { 2, 2, 3 }, { -6, 1, 2 }, 6 },
        { "a broadcast batch (batch stride 0)", 3, { 3, 2, 4 }, { 0, 4, 1 }, 0 },
    };
    for (int f = 0; f < 2; f++)
        for (size_t i = 0; i < sizeof views / sizeof views[0]; i++)
            for (int as_b = 0; as_b < 2; as_b++) {
                int nd = views[i].ndim;
                int64_t other[2] = { as_b ? 3 : views[i].shape[nd - 1],
                                     as_b ? views[i].shape[nd - 2] : 5 };
                k_call c = k_new(k, both[f]);
                k_arr v = k_strided(k, &c, 12, nd, views[i].shape, views[i].strides,
                                    views[i].offset, K_RANDOM);
                k_arr o = k_compact(k, &c, 2, other, K_RANDOM);
                k_arg(&c, as_b ? o : v);
                k_arg(&c, as_b ? v : o);
                k_check(k, &c, views[i].what);
            }
    for (int i = 0; i < k_count(k, 8); i++) {   /* a @ a.T, a.T @ a, a @ a, a @ its column */
        int64_t r = k_int(k, 1, 50), s = i % 4 == 2 ? r : k_int(k, 1, 50);
        k_call c = k_new(k, both[i % 2]);
        k_arr a = k_view(k, &c, 2, (int64_t[]){ r, s }, K_ANY, i % 3 ? K_RANDOM : K_INTEGERS);
        k_arr t = k_at(a.buf, 2, (int64_t[]){ s, r }, (int64_t[]){ a.strides[1], a.strides[0] },
                       a.offset);
        int how = i % 4;
        k_arg(&c, how == 1 ? t : a);
        k_arg(&c, how == 0 ? t : how == 1 ? a : how == 2 ? a
                  : k_at(a.buf, 2, (int64_t[]){ s, 1 }, (int64_t[]){ a.strides[1], 0 },
                         a.offset));
        k_check(k, &c, "a and b may be views of one buffer (a @ a.T, a @ a): read them, never "
                "write them, and write only into the new result");
    }
}

static void matmul_tiled_random(k_ctx *k) { random_products(k, K_MATMUL, 500); }

/* Sizes at the edges of register tiles: 4, 6, 8, 12, 16, 24, 32, 36, 48,
 * 64, 96, 128, one below and one above. */
static const int64_t EDGES[36] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 15, 16, 17, 23, 24,
                                   25, 31, 32, 33, 35, 36, 37, 47, 48, 49, 63, 64, 65, 95, 96,
                                   97, 127, 128, 129 };

/* a (m,k) @ (k,n) of random views (stride 0 too), by both functions. */
static void edge(k_ctx *k, int64_t m, int64_t kk, int64_t n, const char *hint)
{
    for (int f = 0; f < 2; f++) {
        k_call c = k_product(k, both[f], 2, (int64_t[]){ m, kk }, 2, (int64_t[]){ kk, n },
                             K_ANY | (k_one_in(k, 4) ? K_REPEAT : 0),
                             k_one_in(k, 2) ? K_INTEGERS : K_RANDOM);
        k_check(k, &c, hint);
    }
}

static void matmul_tile_edges(k_ctx *k)
{
    /* one below, at and one above common tile sizes: register blocks (MR,
     * NR) for m and n, every pair of them with k_count 1296; the last block
     * of m (MC) and of n (NC) */
    static const int64_t rows[] = { 71, 72, 73, 95, 96, 97, 119, 120, 121, 143, 144, 145, 191,
                                    192, 193, 255, 256, 257, 263, 264, 265, 287, 288, 289, 383,
                                    384, 385, 511, 512, 513, 527, 528, 529 };
    static const int64_t cols[] = { 255, 256, 257, 511, 512, 513, 1023, 1024, 1025, 2047,
                                    2048, 2049, 4095, 4096, 4097 };
    for (int i = 0; i < k_count(k, 52); i++)
        edge(k, EDGES[i % 36], k_int(k, 1, 20), EDGES[(i / 36 + 7 * i) % 36], "m and n need "
             "not be multiples of MR and NR: pad the last sliver with zeros, write back mr x nr");
    for (int i = 0; i < 33; i++)
        edge(k, rows[i], i % 3 == 2 ? 257 : k_int(k, 1, 30), k_int(k, 1, 40), "the last MC "
             "block of rows may be short: mc = min(MC, m - ic)");
    for (int i = 0; i < 15; i++)
        edge(k, k_int(k, 1, 14), k_int(k, 1, 30), cols[i], "the last NC block of columns may "
             "be short: nc = min(NC, n - jc), and c's block starts at column jc of a row n long");
}

/* Depths around every plausible KC (16 .. 1024), each of the 39 with
 * k_count 39; m and n at register tile edges. */
static void matmul_depth_edges(k_ctx *k)
{
    static const int64_t depth[] = { 0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64,
                                     65, 127, 128, 129, 191, 192, 193, 255, 256, 257, 383, 384,
                                     385, 511, 512, 513, 767, 768, 769, 1023, 1024, 1025 };
    for (int i = 0; i < k_count(k, 12); i++)
        edge(k, EDGES[k_int(k, 0, 26)], depth[i * 7 % 39], EDGES[k_int(k, 0, 29)], "cut k into "
             "slices of KC, the last one shorter (kc = min(KC, k - pc)); each slice ADDS to c, "
             "which starts at 0; k == 0 leaves zeros");
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
    const char *hint = "batch axes align at the right; a size-1 or missing axis repeats; "
                       "each input is read at ITS OWN batch position";
    /* pairs of the 40 batch shapes of 0..3 axes with sizes 0..2 (every pair
     * with k_count 1600): NumPy's shape, or ND_ERR_SHAPE naming both */
    for (int p = 0; p < k_count(k, 40); p++) {
        int nd[2];
        int64_t sh[2][5];
        for (int s = 0; s < 2; s++) {
            int x = s ? (p / 40 + 7 * p) % 40 : p % 40;
            nd[s] = x == 0 ? 2 : x < 4 ? 3 : x < 13 ? 4 : 5;
            x -= nd[s] == 2 ? 0 : nd[s] == 3 ? 1 : nd[s] == 4 ? 4 : 13;
            for (int e = 0; e < nd[s] - 2; e++, x /= 3)
                sh[s][e] = x % 3;
        }
        sh[0][nd[0] - 2] = k_int(k, 1, 5);
        sh[0][nd[0] - 1] = sh[1][nd[1] - 2] = k_int(k, 0, 4);
        sh[1][nd[1] - 1] = k_int(k, 1, 5);
        for (int f = 0; f < 2; f++) {
            k_call c = k_product(k, both[f], nd[0], sh[0], nd[1], sh[1], K_ANY | K_REPEAT,
                                 K_INTEGERS);
            k_check(k, &c, hint);
        }
    }
    for (int i = 0; i < k_count(k, 8); i++) {   /* random batches of 1 to 4 axes */
        int64_t sa[6], sb[6];
        int nb = 1 + i % 4, nda = nb + 2, ndb = nb + 2 - (int)k_int(k, 0, nb);
        k_shape(k, nb, 1, 3, 24, sa);
        for (int d = 0; d < ndb - 2; d++)
            sb[d] = k_one_in(k, 3) ? 1 : sa[d + nda - ndb];
        for (int d = 0; d < nb; d++)
            sa[d] = k_one_in(k, 4) ? 1 : sa[d];
        sa[nb] = k_int(k, 1, 20);
        sa[nb + 1] = sb[ndb - 2] = k_int(k, 1, 20);
        sb[ndb - 1] = k_int(k, 1, 20);
        for (int f = 0; f < 2; f++) {
            k_call c = k_product(k, both[f], nda, sa, ndb, sb, K_ANY | K_REPEAT, K_INTEGERS);
            k_check(k, &c, hint);
        }
    }
}

static void matmul_empty(k_ctx *k)
{
    static const struct { int nda, ndb; int64_t sa[4], sb[4]; } cases[] = {
        { 2, 2, { 3, 0 }, { 0, 4 } },       { 2, 2, { 1, 0 }, { 0, 1 } },
        { 2, 2, { 300, 0 }, { 0, 700 } },   { 2, 2, { 13, 0 }, { 0, 33 } },
        { 4, 3, { 2, 1, 37, 0 }, { 3, 0, 33 } }, { 2, 4, { 5, 0 }, { 2, 2, 0, 129 } },
        { 3, 2, { 2, 3, 0 }, { 0, 5 } },    { 2, 2, { 0, 5 }, { 5, 3 } },
        { 2, 2, { 4, 5 }, { 5, 0 } },       { 2, 2, { 0, 0 }, { 0, 0 } },
        { 2, 2, { 0, 300 }, { 300, 0 } },   { 3, 2, { 0, 5, 3 }, { 3, 4 } },
        { 4, 3, { 2, 0, 5, 3 }, { 1, 3, 4 } }, { 3, 4, { 1, 5, 3 }, { 0, 2, 3, 4 } },
        { 3, 3, { 0, 5, 0 }, { 1, 0, 4 } },
    };
    int n = (int)(sizeof cases / sizeof cases[0]);
    for (int f = 0; f < 2; f++)
        for (int i = 0; i < k_count(k, n); i++) {   /* stride-0 axes the 2nd time */
            k_call c = k_product(k, both[f], cases[i % n].nda, cases[i % n].sa, cases[i % n].ndb,
                                 cases[i % n].sb, K_ANY | (i / n % 2 ? K_REPEAT : 0), K_RANDOM);
            k_check(k, &c, "k = 0 is the empty sum: c is all zeros, and must be written; m, n "
                    "or a batch of 0 is an empty result of the right shape");
        }
}

static void matmul_out_aliases_input(k_ctx *k)
{
    for (int i = 0; i < k_count(k, 6); i++) {   /* out == a, out == b, a and b one view */
        int64_t m = k_int(k, 0, 20), kk = k_int(k, 0, 20), n = i % 3 == 2 ? kk : k_int(k, 0, 20);
        if (i % 3 == 2)
            m = kk;
        k_call c = k_product(k, both[i % 2], 2, (int64_t[]){ m, kk }, 2, (int64_t[]){ kk, n },
                             K_ANY, K_RANDOM);
        if (i % 3 == 2)
            c.args[1] = c.args[0];
        c.out = i % 3 == 1;
        k_check(k, &c, "when out is an input, compute into a new array, then replace out");
    }
}

static void matmul_errors(k_ctx *k)
{
    static const struct { int nda, ndb; int64_t sa[8], sb[8]; nd_status want; } bad[] = {
        { 2, 2, { 3, 4 }, { 5, 6 }, ND_ERR_SHAPE },       /* inner sizes 4 and 5 */
        { 3, 3, { 2, 3, 4 }, { 3, 4, 5 }, ND_ERR_SHAPE }, /* batch sizes 2 and 3 */
        { 3, 3, { 2, 3, 4 }, { 2, 5, 6 }, ND_ERR_SHAPE },
        { 3, 2, { 5, 2, 3 }, { 4, 3 }, ND_ERR_SHAPE },
        { 2, 2, { 3, 0 }, { 4, 5 }, ND_ERR_SHAPE },       /* 0 against 4 */
        { 2, 2, { 3, 4 }, { 0, 5 }, ND_ERR_SHAPE },     { 2, 2, { 0, 3 }, { 4, 0 }, ND_ERR_SHAPE },
        { 3, 3, { 0, 3, 4 }, { 2, 4, 5 }, ND_ERR_SHAPE },
        { 4, 3, { 2, 2, 3, 4 }, { 3, 4, 5 }, ND_ERR_SHAPE },
        { 4, 4, { 2, 1, 3, 4 }, { 3, 1, 4, 5 }, ND_ERR_SHAPE },
        { 8, 8, { 1, 1, 1, 1, 1, 2, 3, 4 }, { 1, 1, 1, 1, 1, 3, 4, 5 }, ND_ERR_SHAPE },
        { 8, 3, { 2, 1, 1, 1, 1, 1, 3, 4 }, { 2, 5, 5 }, ND_ERR_SHAPE },
        { 3, 3, { 2, 2, 3 }, { 1, 3, 2 }, ND_OK },        /* a valid broadcast */
        { 1, 2, { 4 }, { 4, 3 }, ND_ERR_ARG },            /* fewer than 2 axes */
        { 2, 1, { 3, 4 }, { 4 }, ND_ERR_ARG },            { 1, 1, { 4 }, { 4 }, ND_ERR_ARG },
        { 0, 2, { 0 }, { 1, 1 }, ND_ERR_ARG },            { 2, 0, { 1, 1 }, { 0 }, ND_ERR_ARG },
        { 0, 0, { 0 }, { 0 }, ND_ERR_ARG },               { 1, 2, { 0 }, { 0, 3 }, ND_ERR_ARG },
        { 2, 1, { 2, 3 }, { 5 }, ND_ERR_ARG },
    };
    for (int f = 0; f < 2; f++) {
        for (size_t i = 0; i < 2 * sizeof bad / sizeof bad[0]; i++) {   /* then out == a */
            k_call c = k_product(k, both[f], bad[i / 2].nda, bad[i / 2].sa, bad[i / 2].ndb,
                                 bad[i / 2].sb, K_ANY, K_RANDOM);
            c.out = i % 2 ? 0 : K_OUT_NEW;
            k_expect(k, &c, bad[i / 2].want, NULL);
        }
        for (int i = 0; i < k_count(k, 10); i++) {   /* the inner sizes differ, or a batch axis */
            int nda, ndb;
            int64_t sa[ND_MAX_DIMS], sb[ND_MAX_DIMS];
            k_matmul_shapes(k, 130, 20000, &nda, sa, &ndb, sb);
            if (i % 2 == 0 || nda == 2 || ndb == 2) {
                sb[ndb - 2] = sa[nda - 1] + k_int(k, 1, 3) * (sa[nda - 1] > 3 && k_one_in(k, 2)
                                                               ? -1 : 1);
            } else {
                int j = (int)k_int(k, 1, nda < ndb ? nda - 2 : ndb - 2);
                sa[nda - 2 - j] = 2;
                sb[ndb - 2 - j] = k_one_in(k, 2) ? 0 : 3;
            }
            k_call c = k_product(k, both[f], nda, sa, ndb, sb, K_ANY, K_RANDOM);
            k_expect(k, &c, ND_ERR_SHAPE, NULL);
        }
        k_call c = k_product(k, both[f], 2, (int64_t[]){ 3, 4 }, 2, (int64_t[]){ 4, 5 }, K_ANY,
                             K_RANDOM);
        k_check_bad_arrays(k, &c);
        if (k_dev(k) == ND_CUDA) {   /* b on the other device */
            c = k_product(k, both[f], 2, (int64_t[]){ 3, 4 }, 2, (int64_t[]){ 4, 5 }, 0,
                          K_RANDOM);
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
    static const int64_t zeros[3] = { 0 };
    static const char *const hint = "check the shapes of the result and of a and b broadcast "
        "to the batch (nd_check_shape) before anything is made";
    for (int naive = 0; naive < 2; naive++) {
        k_op op = naive ? K_MATMUL_NAIVE : K_MATMUL;
        k_call c = k_on_array(k, op, 2, (int64_t[]){ 2, 2 });
        k_arg(&c, c.args[0]);
        k_expect(k, &c, ND_OK, naive ? NAIVE_HINT : TILED_HINT);
        /* (0,2^40,1) @ (1,2^40): the result (0,2^40,2^40) has too many elements */
        c = k_on_view(k, op, 1, 3, (int64_t[]){ 0, K_P2(40), 1 }, zeros, 0);
        k_arg(&c, k_at(0, 2, (int64_t[]){ 1, K_P2(40) }, zeros, 0));
        k_expect(k, &c, ND_ERR_ARG, hint);
        /* (1,2^30,2^28) @ (2^10,2^28,1): c is (2^10,2^30,1), but a broadcast
         * to the batch would be (2^10,2^30,2^28) */
        c = k_on_view(k, op, 1, 3, (int64_t[]){ 1, K_P2(30), K_P2(28) }, zeros, 0);
        k_arg(&c, k_at(0, 3, (int64_t[]){ K_P2(10), K_P2(28), 1 }, zeros, 0));
        k_expect(k, &c, ND_ERR_ARG, hint);
        /* k == 0: a (3,2,0) with strides (INT64_MAX,INT64_MIN,1) times a (3,0,4) */
        c = k_on_view(k, op, 1, 3, (int64_t[]){ 3, 2, 0 },
                      (int64_t[]){ INT64_MAX, INT64_MIN, 1 }, 1);
        k_arg(&c, k_compact(k, &c, 3, (int64_t[]){ 3, 0, 4 }, K_DISTINCT));
        k_expect(k, &c, ND_OK, "a sum over k = 0 terms is 0, and a's strides are never read");
    }
    for (int i = 0; i < k_count(k, 6); i++) {   /* random k == 0 products, any strides */
        int64_t sa[ND_MAX_DIMS], sb[ND_MAX_DIMS], ta[ND_MAX_DIMS], tb[ND_MAX_DIMS];
        int nda, ndb;
        k_matmul_shapes(k, 9, 4096, &nda, sa, &ndb, sb);
        sa[nda - 1] = sb[ndb - 2] = 0;
        for (int d = 0; d < ND_MAX_DIMS; d++) {
            ta[d] = k_wild(k);
            tb[d] = k_wild(k);
        }
        k_call c = k_new(k, both[i % 2]);
        k_arg(&c, k_strided(k, &c, 2, nda, sa, ta, k_int(k, 0, 2), K_DISTINCT));
        k_arg(&c, k_strided(k, &c, 2, ndb, sb, tb, k_int(k, 0, 2), K_DISTINCT));
        k_check(k, &c, "a sum over k = 0 terms is 0, and a's and b's strides are never read");
    }
}

static const k_test tests[] = {
    K_TEST(matmul_naive_random, K_BOTH, 0, NAIVE_HINT),
    K_TEST(matmul_small_cases, K_BOTH, 0, TILED_HINT),
    K_TEST(matmul_special_views, K_BOTH, 0, TILED_HINT),
    K_TEST(matmul_tiled_random, K_BOTH, 0, TILED_HINT),
    K_TEST(matmul_tile_edges, K_BOTH, 0, TILED_HINT),
    K_TEST(matmul_depth_edges, K_BOTH, 0, TILED_HINT),
    K_TEST(matmul_large, K_BOTH, 0, TILED_HINT),
    K_TEST(matmul_batch_broadcast, K_BOTH, 0, NAIVE_HINT),
    K_TEST(matmul_empty, K_BOTH, 0, TILED_HINT),
    K_TEST(matmul_out_aliases_input, K_BOTH, 0, TILED_HINT),
    K_TEST(matmul_errors, K_BOTH, 0, "the given matmul_operands checks the shapes before "
           "anything is allocated: keep your code after it"),
    K_TEST(extreme_matmul_shapes, K_BOTH, 0, TILED_HINT),
};
K_SUITE(public_05, 5, "05_matmul", tests);
