/*
 * h05_matmul.c -- hidden tests of lesson 5: nd_matmul (tiled) and
 * nd_matmul_naive, NumPy's matmul on strided views, over the kit
 * (tests/kit/kit.h) with other seeds and more cases than the public tests:
 *
 *   tile edges    every pair (m, n) of 36 sizes around register tiles; depths
 *                 around every plausible KC (16 .. 1024, +-1); rows around
 *                 every plausible MC, columns around every plausible NC
 *   random views  hundreds of random products per function, sizes 0..130
 *                 (half of them on a tile edge), inputs permuted, stepped,
 *                 reversed, windows, stride-0 rows, columns and batches
 *   batch rules   every pair of batch shapes of 0..3 axes with sizes 0..2:
 *                 NumPy's shape, or ND_ERR_SHAPE naming both shapes
 *   properties    B.T @ A.T; A @ I and I @ A exactly (I compact, or a
 *                 Toeplitz view of 2k-1 floats); stride-0 operands
 *   aliasing      views of one buffer as both inputs; out == a, out == b
 *   larger        257x513x129 and friends for both; for the tiled one
 *                 600x700x900, 530x520x300 and 40x300x4200, exactly
 *   errors        inner and batch mismatches (also with sizes 0), inputs of
 *                 0 or 1 axes, bad arrays, out == a: out untouched
 *
 * Small integers make every sum exact (the kit's reference then wants the
 * exact value); floats are held to the dot-product bound (tests/kit/ref.c).
 */
#include "kit.h"

#include <string.h>

#define TILED_HINT "pack the panels through the views' offsets and strides, zero-pad the " \
    "edges of the packed blocks, and write back only the valid part of an edge block"
#define VIEWS_HINT "pack the panels through the views' strides and offset: a transposed, " \
    "reversed, windowed or stride-0 a or b must give the same product as its compact copy"
#define BATCH_HINT "batch axes align at the right; a size-1 or missing axis of a or b " \
    "repeats (stride 0) against the other's size; each input is read at ITS OWN batch " \
    "position; c is (batch..., m, n)"

static const k_op both[2] = { K_MATMUL, K_MATMUL_NAIVE };

/* Sizes at the edges of register tiles: 4, 6, 8, 12, 16, 24, 32, 36, 48,
 * 64, 96, 128, one below and one above. */
static const int64_t EDGES[36] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 15, 16, 17, 23, 24,
                                   25, 31, 32, 33, 35, 36, 37, 47, 48, 49, 63, 64, 65, 95, 96,
                                   97, 127, 128, 129 };

/* (m,k) @ (k,n) by op on random views (stride 0 too), integers or floats. */
static void product(k_ctx *k, k_op op, int64_t m, int64_t kk, int64_t n, bool ints)
{
    k_call c = k_product(k, op, 2, (int64_t[]){ m, kk }, 2, (int64_t[]){ kk, n },
                         K_ANY | (k_one_in(k, 4) ? K_REPEAT : 0), ints ? K_INTEGERS : K_RANDOM);
    k_check(k, &c, NULL);
}

static void register_tile_edges(k_ctx *k)
{
    for (int f = 0; f < 2; f++)
        for (int i = 0; i < 36; i++)
            for (int j = 0; j < 36; j++)
                product(k, both[f], EDGES[i], k_int(k, 1, 20), EDGES[j], (i + j) % 2);
}

static void depth_edges(k_ctx *k)
{
    static const int64_t depth[] = { 0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64,
                                     65, 127, 128, 129, 191, 192, 193, 255, 256, 257, 383, 384,
                                     385, 511, 512, 513, 767, 768, 769, 1023, 1024, 1025 };
    for (int f = 0; f < 2; f++)
        for (int d = 0; d < 39 * 3; d++)
            product(k, both[f], EDGES[k_int(k, 0, 26)], depth[d / 3], EDGES[k_int(k, 0, 29)],
                    d % 2);
}

static void cache_block_edges(k_ctx *k)
{
    static const int64_t rows[] = { 71, 72, 73, 95, 96, 97, 119, 120, 121, 143, 144, 145, 191,
                                    192, 193, 255, 256, 257, 263, 264, 265, 287, 288, 289, 383,
                                    384, 385, 511, 512, 513, 527, 528, 529 };
    static const int64_t cols[] = { 255, 256, 257, 511, 512, 513, 1023, 1024, 1025, 2047,
                                    2048, 2049, 4095, 4096, 4097 };
    for (int f = 0; f < 2; f++) {
        for (int i = 0; i < 33; i++)
            product(k, both[f], rows[i], i % 3 == 2 ? 257 : k_int(k, 1, 30), k_int(k, 1, 40),
                    i % 2);
        for (int j = 0; j < 15; j++)
            product(k, both[f], k_int(k, 1, 14), k_int(k, 1, 30), cols[j], j % 2);
    }
}

static void random_products(k_ctx *k, k_op op, int count, int64_t max_macs)
{
    for (int i = 0; i < count; i++) {
        int nda, ndb;
        int64_t sa[ND_MAX_DIMS], sb[ND_MAX_DIMS];
        k_matmul_shapes(k, 130, max_macs, &nda, sa, &ndb, sb);
        k_call c = k_product(k, op, nda, sa, ndb, sb, K_ANY | K_REPEAT,
                             i % 2 ? K_RANDOM : K_INTEGERS);
        k_check(k, &c, NULL);
    }
}

static void naive_random_views(k_ctx *k) { random_products(k, K_MATMUL_NAIVE, 400, 200000); }
static void tiled_random_views(k_ctx *k) { random_products(k, K_MATMUL, 600, 200000); }

static void batch_shapes_exhaustive(k_ctx *k)
{
    /* every batch shape of 0..3 axes with sizes 0..2: 1 + 3 + 9 + 27 */
    int nd[40];
    int64_t sh[40][5];
    for (int i = 0, d = 0; d <= 3; d++)
        for (int x = 0; x < (d == 0 ? 1 : d == 1 ? 3 : d == 2 ? 9 : 27); x++, i++) {
            nd[i] = d + 2;
            for (int e = 0, y = x; e < d; e++, y /= 3)
                sh[i][e] = y % 3;
        }
    for (int f = 0; f < 2; f++)
        for (int i = 0; i < 40; i++)
            for (int j = 0; j < 40; j++) {
                int64_t sa[5], sb[5], m = k_int(k, 1, 5), kk = k_int(k, 0, 4);
                memcpy(sa, sh[i], sizeof sa);
                memcpy(sb, sh[j], sizeof sb);
                sa[nd[i] - 2] = m;
                sa[nd[i] - 1] = sb[nd[j] - 2] = kk;
                sb[nd[j] - 1] = k_int(k, 1, 5);
                k_call c = k_product(k, both[f], nd[i], sa, nd[j], sb, K_ANY | K_REPEAT,
                                     K_INTEGERS);
                k_check(k, &c, NULL);
            }
}

static void batched_equals_per_matrix(k_ctx *k)
{
    /* batches of up to 4 axes whose matrices are read at their own batch
     * positions: broadcast, permuted, reversed */
    for (int i = 0; i < 300; i++) {
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
            k_check(k, &c, NULL);
        }
    }
}

static void transpose_identity(k_ctx *k)
{
    /* B.T @ A.T, the transposes being swapped strides of random views */
    for (int i = 0; i < 200; i++)
        for (int f = 0; f < 2; f++) {
            int64_t m = k_int(k, 1, 40), kk = k_int(k, 1, 40), n = k_int(k, 1, 40);
            k_call c = k_product(k, both[f], 2, (int64_t[]){ n, kk }, 2, (int64_t[]){ kk, m },
                                 K_ANY, K_INTEGERS);
            for (int a = 0; a < 2; a++) {
                k_arr *x = &c.args[a];
                int64_t s = x->strides[0];
                x->strides[0] = x->strides[1];
                x->strides[1] = s;
                s = x->shape[0];
                x->shape[0] = x->shape[1];
                x->shape[1] = s;
            }
            k_arr a0 = c.args[0];   /* now (kk,n) and (m,kk): swap the operands */
            c.args[0] = c.args[1];
            c.args[1] = a0;
            k_check(k, &c, "(A@B).T == B.T@A.T: a transposed view is only swapped strides, so "
                    "read both inputs through their own strides, whichever is unit");
        }
}

static void identity_exact(k_ctx *k)
{
    /* A @ I and I @ A, with I compact or the Toeplitz view (strides (-1,1))
     * of 2k-1 floats, one of them 1 */
    for (int i = 0; i < 120; i++) {
        int64_t m = k_int(k, 1, 70), kk = k_int(k, 1, 70), size = 2 * kk - 1;
        bool toeplitz = i % 2, left = i % 4 >= 2;
        k_call c = k_new(k, both[i % 3 == 0]);
        k_arr a = k_view(k, &c, 2, left ? (int64_t[]){ kk, m } : (int64_t[]){ m, kk },
                         K_ANY | K_REPEAT, K_RANDOM);
        int b = k_buffer(k, &c, toeplitz ? size : kk * kk, K_POISON);
        for (int64_t j = 0; j < c.bufs[b].n; j++)
            c.bufs[b].v[j] = toeplitz ? j == kk - 1 : j % (kk + 1) == 0;
        k_arr id = k_at(b, 2, (int64_t[]){ kk, kk }, toeplitz ? (int64_t[]){ -1, 1 } :
                        (int64_t[]){ kk, 1 }, toeplitz ? kk - 1 : 0);
        k_arg(&c, left ? id : a);
        k_arg(&c, left ? a : id);
        k_check(k, &c, "A@I == A exactly: the identity may come as any view (a Toeplitz view "
                "with strides (-1,1)), and every element is one product by 1 plus zeros");
    }
}

static void broadcast_equals_compact(k_ctx *k)
{
    /* rows, columns, both or the batch of stride 0 */
    for (int i = 0; i < 300; i++) {
        int64_t sa[3] = { k_int(k, 1, 3), k_int(k, 1, 40), k_int(k, 1, 40) };
        int64_t sb[3] = { sa[0], sa[2], k_int(k, 1, 40) };
        k_call c = k_product(k, both[i % 2], 3, sa, 3, sb, K_ANY, K_INTEGERS);
        k_arr *x = &c.args[i / 2 % 2];
        int pattern = (int)k_int(k, 0, 3);
        for (int d = 0; d < 3; d++)
            if ((pattern == 0 && d == 1) || (pattern == 1 && d == 2) ||
                (pattern == 2 && d > 0) || (pattern == 3 && d == 0))
                x->strides[d] = 0;
        k_check(k, &c, "a stride of 0 repeats one row, column or matrix: pack element (i, p) "
                "from offset + i*rs + p*cs with the real strides, never from compact ones");
    }
}

static void same_buffer_inputs(k_ctx *k)
{
    /* a @ a.T, a.T @ a, a @ a and a @ a slice of itself */
    for (int i = 0; i < 200; i++) {
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

static void out_aliases_input(k_ctx *k)
{
    for (int i = 0; i < 300; i++) {   /* out == a, out == b, a and b one view, out == a */
        int64_t m = k_int(k, 0, 20), kk = k_int(k, 0, 20), n = i % 3 == 2 ? kk : k_int(k, 0, 20);
        if (i % 3 == 2)
            m = kk;
        k_call c = k_product(k, both[i % 2], 2, (int64_t[]){ m, kk }, 2, (int64_t[]){ kk, n },
                             K_ANY, K_RANDOM);
        if (i % 3 == 2)
            c.args[1] = c.args[0];
        c.out = i % 3 == 1;
        k_check(k, &c, "with out == a or out == b, compute into a new array first; only then "
                "release out's old reference and store the result");
    }
}

static void empty_and_zero_depth(k_ctx *k)
{
    static const struct { int nda, ndb; int64_t sa[4], sb[4]; } cases[] = {
        { 2, 2, { 3, 0 }, { 0, 4 } },       { 2, 2, { 1, 0 }, { 0, 1 } },
        { 2, 2, { 300, 0 }, { 0, 700 } },   { 2, 2, { 13, 0 }, { 0, 33 } },
        { 4, 3, { 2, 1, 37, 0 }, { 3, 0, 33 } }, { 2, 4, { 5, 0 }, { 2, 2, 0, 129 } },
        { 2, 2, { 0, 5 }, { 5, 3 } },       { 2, 2, { 4, 5 }, { 5, 0 } },
        { 2, 2, { 0, 0 }, { 0, 0 } },       { 2, 2, { 0, 300 }, { 300, 0 } },
        { 3, 2, { 0, 5, 3 }, { 3, 4 } },    { 4, 3, { 2, 0, 5, 3 }, { 1, 3, 4 } },
        { 3, 4, { 1, 5, 3 }, { 0, 2, 3, 4 } }, { 3, 3, { 0, 5, 0 }, { 1, 0, 4 } },
    };
    for (int f = 0; f < 2; f++)
        for (int i = 0; i < 14 * 4; i++) {
            k_call c = k_product(k, both[f], cases[i / 4].nda, cases[i / 4].sa, cases[i / 4].ndb,
                                 cases[i / 4].sb, K_ANY | (i % 2 ? K_REPEAT : 0), K_RANDOM);
            k_check(k, &c, NULL);
        }
}

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

static void shape_errors(k_ctx *k)
{
    static const struct { int nda, ndb; int64_t sa[8], sb[8]; } bad[] = {
        { 2, 2, { 3, 4 }, { 5, 6 } },           { 3, 3, { 2, 3, 4 }, { 3, 4, 5 } },
        { 3, 3, { 2, 3, 4 }, { 2, 5, 6 } },     { 3, 2, { 5, 2, 3 }, { 4, 3 } },
        { 2, 2, { 3, 0 }, { 4, 5 } },           { 2, 2, { 3, 4 }, { 0, 5 } },
        { 2, 2, { 0, 3 }, { 4, 0 } },           { 3, 3, { 0, 3, 4 }, { 2, 4, 5 } },
        { 4, 3, { 2, 2, 3, 4 }, { 3, 4, 5 } },  { 4, 4, { 2, 1, 3, 4 }, { 3, 1, 4, 5 } },
        { 8, 8, { 1, 1, 1, 1, 1, 2, 3, 4 }, { 1, 1, 1, 1, 1, 3, 4, 5 } },
        { 8, 3, { 2, 1, 1, 1, 1, 1, 3, 4 }, { 2, 5, 5 } },
    };
    for (int f = 0; f < 2; f++) {
        for (int i = 0; i < 24; i++) {   /* each as it is, and with out == a */
            k_call c = k_product(k, both[f], bad[i / 2].nda, bad[i / 2].sa, bad[i / 2].ndb,
                                 bad[i / 2].sb, K_ANY, K_RANDOM);
            c.out = i % 2 ? 0 : K_OUT_NEW;
            k_expect(k, &c, ND_ERR_SHAPE, NULL);
        }
        for (int i = 0; i < 200; i++) {   /* random: the inner sizes differ, or a batch axis */
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
    }
}

static void argument_errors(k_ctx *k)
{
    static const struct { int nda, ndb; int64_t sa[2], sb[2]; } few[] = {
        { 1, 2, { 4 }, { 4, 3 } }, { 2, 1, { 3, 4 }, { 4 } }, { 1, 1, { 4 }, { 4 } },
        { 0, 2, { 0 }, { 1, 1 } }, { 2, 0, { 1, 1 }, { 0 } }, { 0, 0, { 0 }, { 0 } },
        { 1, 2, { 0 }, { 0, 3 } }, { 2, 1, { 2, 3 }, { 5 } },
    };
    for (int f = 0; f < 2; f++) {
        for (int i = 0; i < 16; i++) {   /* fewer than 2 axes; with out == a too */
            k_call c = k_product(k, both[f], few[i / 2].nda, few[i / 2].sa, few[i / 2].ndb,
                                 few[i / 2].sb, K_ANY, K_RANDOM);
            c.out = i % 2 ? 0 : K_OUT_NEW;
            k_expect(k, &c, ND_ERR_ARG, NULL);
        }
        k_call c = k_product(k, both[f], 2, (int64_t[]){ 3, 4 }, 2, (int64_t[]){ 4, 5 }, K_ANY,
                             K_RANDOM);
        k_check_bad_arrays(k, &c);
        if (k_dev(k) == ND_CUDA) {   /* a on the device, b on the cpu */
            c = k_product(k, both[f], 2, (int64_t[]){ 3, 4 }, 2, (int64_t[]){ 4, 5 }, 0,
                          K_RANDOM);
            c.bufs[1].on = ND_CPU + 1;
            k_expect(k, &c, ND_ERR_DEVICE, NULL);
        }
    }
}

/* a @ b with k == 0: a and b have no elements and any strides (nd.h,
 * "Valid arrays", rule 4); the product is zeros, computed without them
 * (issue #17). */
static void matmul_k0_wild_strides(k_ctx *k)
{
    for (int i = 0; i < 120; i++) {
        int64_t sa[ND_MAX_DIMS], sb[ND_MAX_DIMS], ta[ND_MAX_DIMS], tb[ND_MAX_DIMS];
        int nda, ndb;
        k_matmul_shapes(k, 9, 4096, &nda, sa, &ndb, sb);
        sa[nda - 1] = sb[ndb - 2] = 0;
        for (int d = 0; d < ND_MAX_DIMS; d++) {
            ta[d] = k_wild(k);
            tb[d] = k_wild(k);
        }
        k_call c = k_new(k, i % 2 ? K_MATMUL : K_MATMUL_NAIVE);
        k_arg(&c, k_strided(k, &c, 2, nda, sa, ta, k_int(k, 0, 2), K_DISTINCT));
        k_arg(&c, k_strided(k, &c, 2, ndb, sb, tb, k_int(k, 0, 2), K_DISTINCT));
        k_check(k, &c, "a sum over k = 0 terms is 0, and a's and b's strides are never read");
    }
}

static const k_test tests[] = {
    K_TEST(register_tile_edges, K_BOTH, 3, "m and n need not be multiples of MR or NR: pack "
           "the rows and columns past an edge as zeros, and write back only the mr x nr part "
           "of an edge block that exists in c"),
    K_TEST(depth_edges, K_BOTH, 4, "cut k into slices of KC and keep the last, shorter slice "
           "(kc = min(KC, k - pc)); every slice ADDS its product to c, which starts at 0; "
           "k == 0 leaves zeros"),
    K_TEST(cache_block_edges, K_BOTH, 3, "the last MC block of rows and the last NC block of "
           "columns may be short: mc = min(MC, m - ic), nc = min(NC, n - jc), and c's block "
           "starts at (ic, jc) with row stride n"),
    K_TEST(naive_random_views, K_BOTH, 4, "c[..., i, j] = sum over p of a[..., i, p] * "
           "b[..., p, j], reading a and b through their own offsets and signed strides"),
    K_TEST(tiled_random_views, K_BOTH, 5, VIEWS_HINT),
    K_TEST(batch_shapes_exhaustive, K_BOTH, 3, "NumPy's matmul rule: batch axes align at the "
           "right, equal or 1 (0 against 1 gives 0); anything else is ND_ERR_SHAPE naming both "
           "shapes, checked before allocating"),
    K_TEST(batched_equals_per_matrix, K_BOTH, 3, BATCH_HINT),
    K_TEST(transpose_identity, K_BOTH, 2, "(A@B).T == B.T@A.T: a transposed view is only "
           "swapped strides"),
    K_TEST(identity_exact, K_BOTH, 2, "A@I == A exactly"),
    K_TEST(broadcast_equals_compact, K_BOTH, 3, "a stride of 0 repeats one row, column or "
           "matrix"),
    K_TEST(same_buffer_inputs, K_BOTH, 2, "a and b may be views of one buffer"),
    K_TEST(out_aliases_input, K_BOTH, 3, "with out == a or out == b, compute into a new array "
           "first; only then release out's old reference (maybe the last one of an input's "
           "buffer) and store the result"),
    K_TEST(empty_and_zero_depth, K_BOTH, 2, "k == 0 is the empty sum: write zeros; m, n or a "
           "batch of 0 is an empty result of the right shape, not an error"),
    K_TEST(mid_sizes, K_BOTH, 2, TILED_HINT),
    K_TEST(large_cache_blocks, K_CPU, 4, "each KC slice of k adds its product to c (never "
           "assigns); pack a's block again for every slice pc and block ic, b's panel for "
           "every pc and jc; offset c by (ic, jc) with row stride n"),
    K_TEST(shape_errors, K_BOTH, 3, "check the inner sizes (even 0 against 4) and the batch "
           "axes before anything else: ND_ERR_SHAPE, a message naming both shapes, out "
           "untouched (even when out is a)"),
    K_TEST(argument_errors, K_BOTH, 2, "NULL, released or broken arrays, a NULL out, and "
           "inputs of fewer than 2 axes are ND_ERR_ARG, before anything is allocated or "
           "written"),
    K_TEST(matmul_k0_wild_strides, K_BOTH, 1, TILED_HINT),
};
K_SUITE(hidden_05, 5, "05_matmul", tests);
