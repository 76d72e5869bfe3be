/*
 * test_07_permute.c -- public tests of lesson 7: nd_simplify_permutation,
 * nd_permute_bytes and each of its kernel versions (forced with
 * nd_permute_bytes_version), and nd_compact of permuted views on the CUDA
 * device, which goes through lesson 7.
 *
 * The kit's reference wants the simplified permutation, the version the
 * plan must choose or refuse, and every byte of dst and of the 64 guard
 * bytes after it.  Sources are random bytes, dst starts as other bytes, so
 * that a byte never written shows.  The [cpu] cases run the plan and the
 * index helper (every version is one host loop there); the [cuda] cases run
 * the kernels.
 */
#include "kit.h"

#define SIMPLIFY_HINT "drop the size-1 axes first (renumbering perm), then merge source " \
    "axes a-1 and a where the result has a right after a-1; write the outputs last"
#define PERMUTE_HINT "result element i has its multi-index in the PERMUTED shape; the " \
    "source offset is sum(index[k] * source stride of axis perm[k]); with the last axis " \
    "kept, count it in units of p->unit bytes"
#define TRANSPOSE_HINT "transpose_kernel: tile[ty + j][tx] = in[r * cols + c], " \
    "__syncthreads(), out[c * rows + r] = tile[tx][ty + j], __syncthreads(); guard every " \
    "access with r < rows && c < cols (sizes need not be multiples of 32)"

static void simplify(k_ctx *k, int ndim, const int64_t *shape, const int64_t *perm,
                     bool in_place, const char *hint)
{
    k_call c = k_new(k, K_SIMPLIFY_PERM);
    k_list(&c, 0, ndim, shape);
    k_list(&c, 1, ndim, perm);
    c.at[0] = in_place;
    k_check(k, &c, hint);
}

static void permute(k_ctx *k, int64_t e, int ndim, const int64_t *shape, const int64_t *perm,
                    int version, int64_t src_shift, int64_t dst_shift, const char *hint)
{
    k_call c = k_permute_call(k, e, ndim, shape, perm, version, src_shift, dst_shift);
    k_check(k, &c, hint);
}

static const int64_t sizes[] = { 1, 2, 4, 8, 16 };   /* bytes of an element */

/* ---------------------------------------------------------------------- */
/* nd_simplify_permutation                                                */
/* ---------------------------------------------------------------------- */

static void simplify_known(k_ctx *k)
{
    static const struct { const char *why; int n; int64_t shape[8], perm[8]; } cases[] = {
        { "the lesson's example: a transpose of (12,30)", 4, { 3, 4, 5, 6 }, { 2, 3, 0, 1 } },
        { "the identity is one axis", 3, { 2, 3, 4 }, { 0, 1, 2 } },
        { "(0,2,1): nothing merges", 3, { 2, 3, 4 }, { 0, 2, 1 } },
        { "(2,1,0): nothing merges", 3, { 2, 3, 4 }, { 2, 1, 0 } },
        { "(0,2,3,1): axes 2 and 3 stay together", 4, { 2, 3, 4, 5 }, { 0, 2, 3, 1 } },
        { "(1,2,3,0): a transpose of (2,60)", 4, { 2, 3, 4, 5 }, { 1, 2, 3, 0 } },
        { "(0,2,1,3): the last axis stays last", 4, { 2, 3, 4, 5 }, { 0, 2, 1, 3 } },
        { "size-1 axes go, then (5,7) transposes", 4, { 1, 5, 1, 7 }, { 3, 2, 1, 0 } },
        { "moving a size-1 axis is the identity", 3, { 2, 1, 3 }, { 1, 0, 2 } },
        { "size-1 axes go, then neighbours merge", 4, { 4, 1, 3, 2 }, { 2, 3, 1, 0 } },
        { "no axes: one element", 0, { 0 }, { 0 } },
        { "all axes of size 1: no axes", 3, { 1, 1, 1 }, { 2, 0, 1 } },
        { "a size-0 axis stays", 3, { 4, 0, 3 }, { 2, 0, 1 } },
        { "eight axes reversed: nothing merges", 8, { 2, 3, 2, 3, 2, 3, 2, 3 },
          { 7, 6, 5, 4, 3, 2, 1, 0 } },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        simplify(k, cases[i].n, cases[i].shape, cases[i].perm, false, cases[i].why);
    simplify(k, 4, cases[0].shape, cases[0].perm, true, "out_shape and out_perm may be shape "
             "and perm themselves: read all of them before writing the outputs");
}

static void simplify_random(k_ctx *k)
{
    for (int i = 0; i < k_count(k, 400); i++) {
        int n = (int)k_int(k, 0, ND_MAX_DIMS);
        int64_t shape[ND_MAX_DIMS], perm[ND_MAX_DIMS];
        for (int d = 0; d < n; d++)
            shape[d] = k_one_in(k, 3) ? 1 : k_one_in(k, 30) ? 0 : k_int(k, 2, 4);
        k_perm(k, n, perm);
        if (n > 1 && i % 3 == 0) {   /* in order but for one swap of neighbours */
            int64_t s = k_int(k, 0, n - 2);
            for (int d = 0; d < n; d++)
                perm[d] = d == s ? s + 1 : d == s + 1 ? s : d;
        } else if (n > 1 && k_one_in(k, 2)) {   /* a rotation: neighbours that merge */
            int64_t cut = k_int(k, 1, n - 1);
            for (int d = 0; d < n; d++)
                perm[d] = (d + cut) % n;
        }
        simplify(k, n, shape, perm, i % 2 == 0, SIMPLIFY_HINT);
    }
}

static void simplify_errors(k_ctx *k)
{
    int64_t shape[K_LIST] = { 2, 3, 4 }, perm[K_LIST] = { 2, 0, 1 };
    simplify(k, 3, shape, perm, false, SIMPLIFY_HINT);
    static const struct { int n; int64_t shape[3], perm[3]; nd_status want; } bad[] = {
        { -1, { 2, 3, 4 }, { 2, 0, 1 }, ND_ERR_ARG }, { 9, { 2, 3, 4 }, { 2, 0, 1 }, ND_ERR_ARG },
        { 3, { 2, -1, 4 }, { 2, 0, 1 }, ND_ERR_ARG }, { 3, { 2, 3, 4 }, { 0, 1, 1 }, ND_ERR_AXIS },
        { 3, { 2, 3, 4 }, { 0, 1, 3 }, ND_ERR_AXIS }, { 3, { 2, 3, 4 }, { -1, 0, 1 }, ND_ERR_AXIS },
        { 3, { 2, 3, 4 }, { 2, 1, 2 }, ND_ERR_AXIS },
    };
    for (size_t i = 0; i < 2 * sizeof bad / sizeof bad[0]; i++) {   /* in place the 2nd time */
        k_call c = k_new(k, K_SIMPLIFY_PERM);
        k_list(&c, 0, 3, bad[i / 2].shape);
        k_list(&c, 1, 3, bad[i / 2].perm);
        c.n = bad[i / 2].n;
        c.at[0] = i % 2;   /* a refusal leaves shape and perm as they were */
        k_expect(k, &c, bad[i / 2].want, NULL);
    }
    for (int i = 0; i < 5; i++) {   /* each pointer NULL in turn */
        k_call c = k_new(k, K_SIMPLIFY_PERM);
        k_list(&c, 0, 3, shape);
        k_list(&c, 1, 3, perm);
        if (i < 3)
            c.list_null[i] = true;
        else
            c.at[1] = i - 2;
        k_expect(k, &c, ND_ERR_ARG, NULL);
    }
}

/* ---------------------------------------------------------------------- */
/* nd_permute_bytes, version by version                                   */
/* ---------------------------------------------------------------------- */

/* Random permutations of 1 to 8 axes (some of size 0), the last axis kept a
 * quarter of the time, every element size and versions 0 to 2, at shifted
 * addresses (whole elements for version 2). */
static void permute_random(k_ctx *k)
{
    for (int t = 0; t < k_count(k, 270); t++) {
        int64_t e = sizes[t % 5], shape[ND_MAX_DIMS], perm[ND_MAX_DIMS];
        int v = t / 5 % 3, n = (int)k_int(k, 1, ND_MAX_DIMS);
        k_shape(k, n, t % 23 == 0 ? 0 : 1, n > 5 ? 3 : 6, 3000, shape);
        k_perm(k, n, perm);
        for (int d = 0; d < n - 1 && t % 4 == 0; d++)   /* keep the last axis last */
            if (perm[d] == n - 1) {
                perm[d] = perm[n - 1];
                perm[n - 1] = n - 1;
            }
        int64_t unit = v == 2 ? e : 1;
        permute(k, e, n, shape, perm, v, unit * k_int(k, 0, 3), unit * k_int(k, 0, 3),
                PERMUTE_HINT);
    }
}

/* (1,0), (0,2,1) with a batch, and (2,1,r,c1,c2) by (0,1,3,4,2), which
 * simplifies to (0,2,1) of (2,r,c1*c2), at pairs of sizes around the 32 x 32
 * tile (all 64 pairs with k_count 64), every element size, every version (4
 * refuses what is not 2-byte pairs, 3 and 4 what simplifies to no transpose). */
static void permute_transpose_edges(k_ctx *k)
{
    static const int64_t sz[] = { 1, 2, 31, 32, 33, 63, 65, 66 };
    static const int64_t perms[3][5] = { { 1, 0 }, { 0, 2, 1 }, { 0, 1, 3, 4, 2 } };
    for (int i = 0; i < k_count(k, 16); i++) {
        int64_t r = sz[i % 8], cols = sz[(i / 8 + 3 * i) % 8], c1 = cols % 2 ? 1 : 2;
        int form = i % 3;
        int64_t shape[3][5] = { { r, cols }, { k_int(k, 2, 3), r, cols },
                                { 2, 1, r, c1, cols / c1 } };
        for (int e = 0; e < 5; e++)
            for (int v = 0; v <= 4; v++)
                permute(k, sizes[e], 2 + form + (form == 2), shape[form], perms[form], v, 0,
                        0, TRANSPOSE_HINT);
    }
}

static void permute_transpose_after_simplify(k_ctx *k)
{
    /* (3,4,5,6) by (2,3,0,1) is (12,30) by (1,0) */
    permute(k, 4, 4, (int64_t[]){ 3, 4, 5, 6 }, (int64_t[]){ 2, 3, 0, 1 }, 3, 0, 0,
            "version 3 takes any permutation that SIMPLIFIES to (1,0) or (0,2,1)");
    /* (2,1,20,1,24) by (0,4,3,2,1) is (2,20,24) by (0,2,1) */
    for (int v = 4; v >= 3; v--)
        permute(k, 2, 5, (int64_t[]){ 2, 1, 20, 1, 24 }, (int64_t[]){ 0, 4, 3, 2, 1 }, v, 0, 0,
                TRANSPOSE_HINT);
    /* (2,3,4) by (2,1,0) is no transpose: refused */
    for (int v = 3; v <= 4; v++) {
        k_call c = k_permute_call(k, 2, 3, (int64_t[]){ 2, 3, 4 }, (int64_t[]){ 2, 1, 0 }, v,
                                  0, 0);
        k_expect(k, &c, ND_ERR_ARG, NULL);
    }
}

/* Version 4 at pairs of sizes around its 64 x 64 tile (all 64 pairs with
 * k_count 64), 2-D or batched, at addresses shifted by whole words. */
static void permute_transpose2(k_ctx *k)
{
    static const int64_t sz[] = { 2, 30, 32, 34, 62, 64, 66, 130 };
    for (int i = 0; i < k_count(k, 8); i++) {
        int64_t r = sz[i % 8], cols = sz[(i / 8 + 3 * i) % 8];
        bool two = (i + i / 8) % 2;
        permute(k, 2, two ? 2 : 3, two ? (int64_t[]){ r, cols } : (int64_t[]){ 3, r, cols },
                two ? (int64_t[]){ 1, 0 } : (int64_t[]){ 0, 2, 1 }, 4, 4 * (i % 3),
                4 * (i / 8 % 2), "transpose2_kernel: a word holds elements 2w (low half) and "
                "2w + 1 (high half); the tile is 64 x 64 elements; both __syncthreads(); guard "
                "with r < rows && c < cols");
    }
}

/* The last axis kept: whole rows of 1 to 64 bytes, pointers off alignment. */
static void permute_movement(k_ctx *k)
{
    static const int64_t lasts[] = { 1, 2, 3, 4, 6, 8, 16 };
    static const int64_t shifts[][2] = { { 0, 0 }, { 1, 0 }, { 0, 2 }, { 4, 4 }, { 8, 0 },
                                         { 3, 5 }, { 6, 12 } };
    for (int l = 0; l < 7; l++)
        for (int i = 0; i < 5; i++)
            for (int s = 0; s < 7; s++)
                for (int v = 0; v <= 2; v++)   /* 2 refuses what only naive can move */
                    permute(k, sizes[i], 4, (int64_t[]){ 2, 5, 3, lasts[l] },
                            (int64_t[]){ 0, 2, 1, 3 }, v, shifts[s][0], shifts[s][1],
                            "with the last axis kept, the unit is the widest of 16, 8, 4, 2, "
                            "1 bytes that divides the row's bytes AND both addresses");
}

/* Misaligned pointers with the last axis permuted: only naive moves an
 * element in pieces, so auto picks it, and generic and transpose refuse. */
static void permute_misaligned(k_ctx *k)
{
    for (int i = 1; i < 5; i++)
        for (int v = 0; v <= 3; v++)
            permute(k, sizes[i], 2, (int64_t[]){ 37, 40 }, (int64_t[]){ 1, 0 }, v, 1, 0,
                    "the source address is not a multiple of the element size: only "
                    "version 1 (naive) can do it, byte by byte");
}

static void permute_choice(k_ctx *k)
{
    static const struct { const char *why; int e, n; int64_t shape[4], perm[4]; } cases[] = {
        { "the identity is one copy", 4, 3, { 2, 3, 4 }, { 0, 1, 2 } },
        { "moving a size-1 axis is the identity", 4, 3, { 2, 1, 4 }, { 1, 0, 2 } },
        { "one element: a copy", 4, 0, { 0 }, { 0 } },
        { "(1,0) of 4-byte elements, both sizes >= 16: transpose", 4, 2, { 40, 50 }, { 1, 0 } },
        { "(0,2,1), both sizes >= 16: transpose", 8, 3, { 3, 40, 50 }, { 0, 2, 1 } },
        { "2-byte elements, both sizes even: transpose2", 2, 2, { 40, 50 }, { 1, 0 } },
        { "2-byte elements, an odd size: transpose", 2, 2, { 41, 50 }, { 1, 0 } },
        { "simplifies to (1,0) of (20,42): transpose", 4, 4, { 4, 5, 6, 7 }, { 2, 3, 0, 1 } },
        { "(0,2,1,3): the last axis stays last: generic", 4, 4, { 2, 5, 6, 7 }, { 0, 2, 1, 3 } },
        { "(2,1,0) is no transpose: generic", 4, 3, { 2, 5, 6 }, { 2, 1, 0 } },
        { "a transpose with an axis < 16: generic", 4, 2, { 500, 3 }, { 1, 0 } },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        permute(k, cases[i].e, cases[i].n, cases[i].shape, cases[i].perm, 0, 0, 0,
                cases[i].why);
}

/* No elements: nothing moves, NULL pointers allowed.  One element (no
 * axes, or all of size 1): every version copies it. */
static void permute_empty_and_one(k_ctx *k)
{
    static const int64_t empty[3] = { 4, 0, 3 }, perm[3] = { 2, 0, 1 };
    for (int v = 0; v <= 2; v++) {
        permute(k, 4, 3, empty, perm, v, 0, 0, "a shape with a size-0 axis has no elements: "
                "return ND_OK at once");
        k_call c = k_permute_call(k, 4, 3, empty, perm, v, 0, 0);
        c.at[3] = 3;   /* src and dst NULL */
        k_check(k, &c, "with no elements, src and dst may be NULL");
    }
    for (int i = 0; i < 5; i++)
        for (int v = 0; v <= 2; v++) {
            permute(k, sizes[i], 0, NULL, NULL, v, 0, 0, "no axes: one element");
            permute(k, sizes[i], 3, (int64_t[]){ 1, 1, 1 }, (int64_t[]){ 2, 0, 1 }, v, 0, 0,
                    "all axes of size 1: one element");
        }
}

/* More work than one pass of the grid: the tile loop and the grid-stride
 * loops must cover the rest.  A transpose's block then moves several
 * tiles through one shared tile: what its hint names. */
#define TILE_LOOP_HINT "more tiles than the grid's MAX_BLOCKS blocks, so each block moves " \
    "tiles t = blockIdx.x, t += gridDim.x, ... through one shared tile. Bytes another " \
    "tile should have held: the __syncthreads() at the END of the tile loop's body (after " \
    "the writes out of the tile) is missing, and a fast thread fills the tile with the next " \
    "tile while others still read it; bytes never written: the loop over tiles stops early"
static void permute_large_grid(k_ctx *k)
{
    static const struct { int64_t e; int n; int64_t shape[3], perm[3]; int v; } cases[] = {
        { 4, 3, { 5000, 2, 3 }, { 0, 2, 1 }, 3 },   /* 5000 tiles */
        { 2, 3, { 4500, 2, 4 }, { 0, 2, 1 }, 4 },
        { 1, 2, { 1031, 1067 }, { 1, 0 }, 2 },      /* 1.1 million units */
        { 1, 2, { 1031, 1067 }, { 1, 0 }, 1 },
        { 4, 2, { 70001, 3 }, { 1, 0 }, 0 },        /* an axis past 65535 */
        { 2, 3, { 3, 70001, 2 }, { 1, 0, 2 }, 2 },
        { 16, 3, { 4200, 33, 2 }, { 0, 2, 1 }, 3 }, { 1, 3, { 2, 1400, 1500 }, { 0, 2, 1 }, 3 },
        { 2, 3, { 4100, 2, 66 }, { 0, 2, 1 }, 4 },  { 1, 2, { 1100, 1000 }, { 1, 0 }, 2 },
        { 8, 3, { 3, 1000, 400 }, { 2, 0, 1 }, 2 }, { 4, 3, { 2, 700, 800 }, { 1, 2, 0 }, 1 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        permute(k, cases[i].e, cases[i].n, cases[i].shape, cases[i].perm, cases[i].v, 0, 0,
                cases[i].v >= 3 ? TILE_LOOP_HINT : "the grid stops at MAX_BLOCKS: loop over "
                "units (i += gridDim.x * blockDim.x) until all are done");
}

static void permute_errors(k_ctx *k)
{
    int64_t shape[K_LIST] = { 3, 4 }, perm[K_LIST] = { 1, 0 };
    permute(k, 4, 2, shape, perm, -1, 0, 0, PERMUTE_HINT);
    for (int i = 0; i < 25; i++) {
        k_call c = k_permute_call(k, i == 22 || i == 23 ? 2 : 4, 2, shape, perm,
                                  i >= 15 && i < 17 ? 5 - (i - 15) : -1, 0, 0);
        switch (i) {
        case 0: case 1: c.at[3] = i + 1; break;          /* src, then dst NULL */
        case 2: case 3: c.list_null[i - 2] = true; break; /* shape, then perm NULL */
        case 4: c.dev = (nd_device)9; c.bufs[0].on = c.bufs[1].on = ND_CPU + 1; break;
        case 5: case 6: case 7: case 8: case 9:
            c.at[0] = (int64_t[]){ 0, 3, 5, 12, 32 }[i - 5];
            break;
        case 10: c.n = -1; break;
        case 11: c.n = ND_MAX_DIMS + 1; break;
        case 12: c.list[0][1] = -4; break;
        case 13: case 14: c.list[1][1] = i - 12; break;  /* (1,1), (1,2): ND_ERR_AXIS */
        case 17: c.at[3] = 4, c.at[2] = 3 * 4 * 4 - 1; break;   /* one byte in common */
        case 18: c = k_permute_call(k, 2, 3, (int64_t[]){ 2, 3, 4 }, (int64_t[]){ 2, 1, 0 },
                                    3, 0, 0); break;   /* forced: no transpose */
        case 19: c.code = 3, c.list[1][0] = 0, c.list[1][1] = 1; break;   /* the identity */
        case 20: c.code = 2, c.at[1] = 1; break;                   /* misaligned */
        case 21: c.code = 0, c.list[1][0] = 0, c.list[1][1] = 1; break;   /* ran 0: a copy */
        case 22: c.code = 4, c.list[0][0] = 7; break;              /* an odd axis */
        case 23: c.code = 4, c.at[1] = 2; break;                   /* not a multiple of 4 */
        case 24: c.code = 3; break;                                /* ran 3 when forced */
        default: break;                                    /* version 5; version 4 of floats */
        }
        k_check(k, &c, NULL);
    }
    for (int apart = 0; apart <= 2; apart++) {   /* dst 44 bytes before src, 48, 47 */
        k_call c = k_permute_call(k, 4, 2, shape, perm, -1, (int64_t[]){ 44, 48, 47 }[apart],
                                  0);
        c.at[3] = 4;   /* dst lies in src's buffer */
        k_check(k, &c, "src and dst overlap when [src, src + bytes) and [dst, dst + bytes) "
                "share a byte; 48 bytes apart, they do not");
    }
}

/* ---------------------------------------------------------------------- */
/* nd_compact of permuted views, on the CUDA device                       */
/* ---------------------------------------------------------------------- */

static void compact_permuted_views(k_ctx *k)
{
    static const struct { int n; int64_t shape[4], strides[4], offset; } views[] = {
        { 2, { 37, 45 }, { 1, 37 }, 0 },             /* (45,37) transposed */
        { 3, { 5, 33, 17 }, { 561, 1, 33 }, 7 },     /* (0,2,1), offset 7 */
        { 4, { 3, 5, 1, 6 }, { 30, 1, 99, 5 }, 2 },  /* a size-1 axis */
        { 4, { 6, 2, 5, 3 }, { 1, 90, 6, 30 }, 0 },  /* (1,3,2,0) */
        { 3, { 4, 20, 20 }, { 400, 20, 1 }, 3 },     /* compact, offset 3 */
    };
    /* (a view that is no permutation of compact memory, a reversed one,
     * goes to lesson 6's gather kernel: lesson 6's tests compact those) */
    for (size_t i = 0; i < sizeof views / sizeof views[0]; i++) {
        k_call c = k_on_view(k, K_COMPACT, 4000, views[i].n, views[i].shape, views[i].strides,
                             views[i].offset);
        k_check(k, &c, "a permutation of compact memory goes through nd_permute_bytes on "
                "CUDA: the permute_* tests say which version is wrong");
    }
    for (int t = 0; t < k_count(k, 6); t++) {   /* random permutations of compact blocks */
        int n = (int)k_int(k, 1, 6);
        int64_t base[ND_MAX_DIMS], perm[ND_MAX_DIMS], shape[ND_MAX_DIMS], st[ND_MAX_DIMS];
        k_shape(k, n, 1, n > 3 ? 6 : 40, 20000, base);
        if (t % 5 == 0 && n >= 2)   /* two axes past the 32 x 32 tile */
            base[n - 1] = k_int(k, 30, 70), base[n - 2] = k_int(k, 30, 70);
        k_perm(k, n, perm);
        for (int d = 0; d < n; d++) {
            shape[d] = base[perm[d]];
            st[d] = 1;
            for (int e = perm[d] + 1; e < n; e++)
                st[d] *= base[e];
        }
        int64_t pad = k_int(k, 0, 5);
        k_call c = k_on_view(k, K_COMPACT, k_numel(n, base) + pad + 3, n, shape, st, pad);
        k_check(k, &c, "a permutation of compact memory, from the view's offset, goes "
                "through nd_permute_bytes on CUDA");
    }
}

static const k_test tests[] = {
    K_TEST(simplify_known, K_HOST, 0, SIMPLIFY_HINT),
    K_TEST(simplify_random, K_HOST, 0, SIMPLIFY_HINT),
    K_TEST(simplify_errors, K_HOST, 0, SIMPLIFY_HINT),
    K_TEST(permute_random, K_BOTH, 0, PERMUTE_HINT),
    K_TEST(permute_transpose_edges, K_BOTH, 0, TRANSPOSE_HINT),
    K_TEST(permute_transpose_after_simplify, K_BOTH, 0, TRANSPOSE_HINT),
    K_TEST(permute_transpose2, K_BOTH, 0, TRANSPOSE_HINT),
    K_TEST(permute_movement, K_BOTH, 0, PERMUTE_HINT),
    K_TEST(permute_misaligned, K_BOTH, 0, PERMUTE_HINT),
    K_TEST(permute_choice, K_BOTH, 0, PERMUTE_HINT),
    K_TEST(permute_empty_and_one, K_BOTH, 0, PERMUTE_HINT),
    K_TEST(permute_large_grid, K_BOTH, 0, PERMUTE_HINT),
    K_TEST(permute_errors, K_BOTH, 0, "check every argument before moving a byte"),
    K_TEST(compact_permuted_views, K_CUDA, 0, PERMUTE_HINT),
};
K_SUITE(public_07, 7, "07_permute", tests);
